// SPDX-License-Identifier: GPL-2.0
/*
 * CheckFeatureSupport answers the features a D3D12 program queries at
 * start-up (D3D12_OPTIONS, ARCHITECTURE, ARCHITECTURE1, FEATURE_LEVELS,
 * GPU_VIRTUAL_ADDRESS_SUPPORT, COMMAND_QUEUE_PRIORITY) for what d3dq is,
 * agrees with D3D12CreateDevice and CreateCommandQueue, and refuses a
 * wrong size, an unknown feature or a bad input with E_INVALIDARG; never
 * E_NOTIMPL. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

FIXTURE(f) {
	ID3D12Device1 *dev;
};

FIXTURE_SETUP(f)
{
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
}

FIXTURE_TEARDOWN(f)
{
	U_RELEASE(self->dev);
}

#define CHECK(dev, feature, data, size) \
	HR(ID3D12Device1_CheckFeatureSupport(dev, feature, data, size))

TEST_F(f, options)
{
	D3D12_FEATURE_DATA_D3D12_OPTIONS o;

	memset(&o, 0xcc, sizeof(o));
	ASSERT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_D3D12_OPTIONS, &o,
			      sizeof(o)));
	/* No shaders, textures, tiles or descriptors: the least there is. */
	EXPECT_FALSE(o.DoublePrecisionFloatShaderOps);
	EXPECT_FALSE(o.OutputMergerLogicOp);
	EXPECT_EQ(D3D12_SHADER_MIN_PRECISION_SUPPORT_NONE,
		  o.MinPrecisionSupport);
	EXPECT_EQ(D3D12_TILED_RESOURCES_TIER_NOT_SUPPORTED,
		  o.TiledResourcesTier);
	EXPECT_EQ(D3D12_RESOURCE_BINDING_TIER_1, o.ResourceBindingTier);
	EXPECT_FALSE(o.PSSpecifiedStencilRefSupported);
	EXPECT_FALSE(o.TypedUAVLoadAdditionalFormats);
	EXPECT_FALSE(o.ROVsSupported);
	EXPECT_EQ(D3D12_CONSERVATIVE_RASTERIZATION_TIER_NOT_SUPPORTED,
		  o.ConservativeRasterizationTier);
	/* The driver's largest buffer: 64 MiB (26) by default, 1 GiB at most. */
	EXPECT_LE(o.MaxGPUVirtualAddressBitsPerResource, 30);
	EXPECT_LE(12, o.MaxGPUVirtualAddressBitsPerResource);
	EXPECT_FALSE(o.StandardSwizzle64KBSupported);
	EXPECT_EQ(D3D12_CROSS_NODE_SHARING_TIER_NOT_SUPPORTED,
		  o.CrossNodeSharingTier);
	EXPECT_FALSE(o.CrossAdapterRowMajorTextureSupported);
	EXPECT_FALSE(o.VPAndRTArrayIndexFromAnyShaderFeedingRasterizerSupportedWithoutGSEmulation);
	EXPECT_EQ(D3D12_RESOURCE_HEAP_TIER_1, o.ResourceHeapTier);
	/* The size must be the structure's. */
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, D3D12_FEATURE_D3D12_OPTIONS,
					  &o, sizeof(o) - 4));
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, D3D12_FEATURE_D3D12_OPTIONS,
					  &o, sizeof(o) + 4));
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, D3D12_FEATURE_D3D12_OPTIONS,
					  NULL, sizeof(o)));
}

TEST_F(f, architecture)
{
	D3D12_FEATURE_DATA_ARCHITECTURE a;
	D3D12_FEATURE_DATA_ARCHITECTURE1 a1;

	memset(&a, 0xcc, sizeof(a));
	a.NodeIndex = 0;
	ASSERT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_ARCHITECTURE, &a,
			      sizeof(a)));
	EXPECT_EQ(0, a.NodeIndex);
	EXPECT_FALSE(a.TileBasedRenderer);
	EXPECT_TRUE(a.UMA);
	EXPECT_TRUE(a.CacheCoherentUMA);

	memset(&a1, 0xcc, sizeof(a1));
	a1.NodeIndex = 0;
	ASSERT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_ARCHITECTURE1, &a1,
			      sizeof(a1)));
	EXPECT_FALSE(a1.TileBasedRenderer);
	EXPECT_TRUE(a1.UMA);
	EXPECT_TRUE(a1.CacheCoherentUMA);
	EXPECT_FALSE(a1.IsolatedMMU);

	/* One node: NodeIndex 1 does not exist. */
	a.NodeIndex = 1;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, D3D12_FEATURE_ARCHITECTURE,
					  &a, sizeof(a)));
	a1.NodeIndex = 1;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_ARCHITECTURE1, &a1,
					  sizeof(a1)));
	/* Each with its own size only. */
	a1.NodeIndex = 0;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, D3D12_FEATURE_ARCHITECTURE,
					  &a1, sizeof(a1)));
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_ARCHITECTURE1, &a,
					  sizeof(a)));
}

/*
 * FEATURE_LEVELS answers as Windows does (vkd3d's test_check_feature_support
 * asserts it on Windows drivers): the highest requested level that is not
 * above the device's, here 11_0, whatever the values. D3D12CreateDevice
 * agrees on every D3D12 level: it creates the device exactly for the ones
 * FEATURE_LEVELS reports; the levels below 11_0 are not D3D12 levels
 * (E_INVALIDARG, as on Windows), though FEATURE_LEVELS counts them in.
 */
TEST_F(f, feature_levels_agree_with_create_device)
{
	static const D3D_FEATURE_LEVEL all[] = {
		D3D_FEATURE_LEVEL_12_2, D3D_FEATURE_LEVEL_12_1,
		D3D_FEATURE_LEVEL_12_0, D3D_FEATURE_LEVEL_11_1,
		D3D_FEATURE_LEVEL_11_0, D3D_FEATURE_LEVEL_10_1,
		D3D_FEATURE_LEVEL_10_0, D3D_FEATURE_LEVEL_9_3,
		D3D_FEATURE_LEVEL_9_2, D3D_FEATURE_LEVEL_9_1,
		D3D_FEATURE_LEVEL_1_0_CORE,
	};
	static const D3D_FEATURE_LEVEL d3d12[] = {
		D3D_FEATURE_LEVEL_12_2, D3D_FEATURE_LEVEL_12_1,
		D3D_FEATURE_LEVEL_12_0, D3D_FEATURE_LEVEL_11_1,
		D3D_FEATURE_LEVEL_11_0, D3D_FEATURE_LEVEL_1_0_CORE,
	};
	static const D3D_FEATURE_LEVEL old[] = {
		D3D_FEATURE_LEVEL_9_3, D3D_FEATURE_LEVEL_9_2,
		D3D_FEATURE_LEVEL_9_1,
	};
	static const D3D_FEATURE_LEVEL odd[] = { 0, 0x3000 };
	static const D3D_FEATURE_LEVEL high[] = {
		D3D_FEATURE_LEVEL_12_2, D3D_FEATURE_LEVEL_12_0,
		D3D_FEATURE_LEVEL_11_1,
	};
	D3D12_FEATURE_DATA_FEATURE_LEVELS l = {
		.NumFeatureLevels = sizeof(all) / sizeof(all[0]),
		.pFeatureLevelsRequested = all,
	};
	ID3D12Device *d;
	unsigned int i;

	ASSERT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_FEATURE_LEVELS, &l,
			      sizeof(l)));
	EXPECT_EQ(D3D_FEATURE_LEVEL_11_0, l.MaxSupportedFeatureLevel);

	for (i = 0; i < sizeof(d3d12) / sizeof(d3d12[0]); i++) {
		D3D_FEATURE_LEVEL one = d3d12[i];
		HRESULT check, create;

		l.NumFeatureLevels = 1;
		l.pFeatureLevelsRequested = &one;
		l.MaxSupportedFeatureLevel = 0;
		check = ID3D12Device1_CheckFeatureSupport(
			self->dev, D3D12_FEATURE_FEATURE_LEVELS, &l, sizeof(l));
		d = NULL;
		create = D3D12CreateDevice(NULL, one, &IID_ID3D12Device,
					   (void **)&d);
		/* Supported by one means created by the other. */
		EXPECT_EQ(SUCCEEDED(check), SUCCEEDED(create))
			TH_LOG("level %#x: check %#x, create %#x", one,
			       HR(check), HR(create));
		if (SUCCEEDED(check)) {
			EXPECT_EQ(one, l.MaxSupportedFeatureLevel);
		} else {
			EXPECT_EQ(HR(DXGI_ERROR_UNSUPPORTED), HR(check));
			EXPECT_EQ(HR(DXGI_ERROR_UNSUPPORTED), HR(create));
		}
		if (SUCCEEDED(create)) {
			EXPECT_EQ((void *)self->dev, (void *)d);
			ID3D12Device_Release(d);
		} else {
			EXPECT_EQ(NULL, d);
		}
	}
	/* Only the higher levels: none. */
	l.NumFeatureLevels = sizeof(high) / sizeof(high[0]);
	l.pFeatureLevelsRequested = high;
	EXPECT_EQ(HR(DXGI_ERROR_UNSUPPORTED),
		  CHECK(self->dev, D3D12_FEATURE_FEATURE_LEVELS, &l, sizeof(l)));
	/* Windows: 9_3 of the 9_x levels, 0x3000 of {0, 0x3000}. */
	l.NumFeatureLevels = sizeof(old) / sizeof(old[0]);
	l.pFeatureLevelsRequested = old;
	l.MaxSupportedFeatureLevel = 0;
	EXPECT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_FEATURE_LEVELS, &l,
			      sizeof(l)));
	EXPECT_EQ(D3D_FEATURE_LEVEL_9_3, l.MaxSupportedFeatureLevel);
	l.NumFeatureLevels = 2;
	l.pFeatureLevelsRequested = odd;
	l.MaxSupportedFeatureLevel = 0;
	EXPECT_EQ(S_OK, CHECK(self->dev, D3D12_FEATURE_FEATURE_LEVELS, &l,
			      sizeof(l)));
	EXPECT_EQ(0x3000, l.MaxSupportedFeatureLevel);
	/* ... but D3D12CreateDevice wants a D3D12 level. */
	for (i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
				NULL, old[i], &IID_ID3D12Device, NULL)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
			NULL, D3D_FEATURE_LEVEL_10_0, &IID_ID3D12Device, NULL)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
			NULL, 0x3000, &IID_ID3D12Device, NULL)));

	/* Bad input: no levels, or no array, or the wrong size. */
	l.NumFeatureLevels = 0;
	l.pFeatureLevelsRequested = all;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_FEATURE_LEVELS, &l,
					  sizeof(l)));
	l.NumFeatureLevels = 1;
	l.pFeatureLevelsRequested = NULL;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_FEATURE_LEVELS, &l,
					  sizeof(l)));
	l.pFeatureLevelsRequested = all;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_FEATURE_LEVELS, &l,
					  sizeof(l) - 1));
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_FEATURE_LEVELS, &l,
					  sizeof(l) + 1));
	EXPECT_EQ(1, u_refs(self->dev));
}

TEST_F(f, gpu_virtual_address_support)
{
	D3D12_FEATURE_DATA_GPU_VIRTUAL_ADDRESS_SUPPORT va = { 0 };
	ID3D12Resource *b = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT, 4096);
	ID3D12Resource *big;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(S_OK, CHECK(self->dev,
			      D3D12_FEATURE_GPU_VIRTUAL_ADDRESS_SUPPORT, &va,
			      sizeof(va)));
	EXPECT_EQ(64, va.MaxGPUVirtualAddressBitsPerProcess);
	/*
	 * No more address bits per resource than the device allows (issue
	 * 39: it said 30 whatever max_bo_size was): a buffer of 2^bits bytes
	 * can be made, one of twice that is more than the device holds.
	 */
	ASSERT_LE(va.MaxGPUVirtualAddressBitsPerResource, 30);
	big = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT,
		       1ull << va.MaxGPUVirtualAddressBitsPerResource);
	EXPECT_NE(NULL, big);
	U_RELEASE(big);
	big = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT,
		       2ull << va.MaxGPUVirtualAddressBitsPerResource);
	EXPECT_EQ(NULL, big);
	U_RELEASE(big);
	/* The addresses handed out fit in what it says. */
	EXPECT_GT(ID3D12Resource_GetGPUVirtualAddress(b), 0);
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_GPU_VIRTUAL_ADDRESS_SUPPORT,
					  &va, sizeof(va) / 2));
	U_RELEASE(b);
}

/*
 * NORMAL and HIGH on DIRECT, COMPUTE and COPY; GLOBAL_REALTIME exactly
 * when CreateCommandQueue grants it (CAP_SYS_NICE, a driver that has it);
 * nothing on bundles or video queues, which d3dq cannot create. The
 * answer for GLOBAL_REALTIME, which is returned.
 */
static BOOL priorities_agree(struct __test_metadata *_metadata,
			     ID3D12Device1 *dev)
{
	static const D3D12_COMMAND_LIST_TYPE types[] = {
		D3D12_COMMAND_LIST_TYPE_DIRECT,
		D3D12_COMMAND_LIST_TYPE_COMPUTE,
		D3D12_COMMAND_LIST_TYPE_COPY,
	};
	static const D3D12_COMMAND_LIST_TYPE none[] = {
		D3D12_COMMAND_LIST_TYPE_BUNDLE,
		D3D12_COMMAND_LIST_TYPE_VIDEO_DECODE,
		D3D12_COMMAND_LIST_TYPE_VIDEO_PROCESS,
		D3D12_COMMAND_LIST_TYPE_VIDEO_ENCODE,
	};
	static const UINT prios[] = {
		D3D12_COMMAND_QUEUE_PRIORITY_NORMAL,
		D3D12_COMMAND_QUEUE_PRIORITY_HIGH,
		D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME,
	};
	D3D12_FEATURE_DATA_COMMAND_QUEUE_PRIORITY p;
	BOOL realtime = FALSE;
	unsigned int t, i;

	for (t = 0; t < 3; t++) {
		for (i = 0; i < 3; i++) {
			D3D12_COMMAND_QUEUE_DESC qd = {
				.Type = types[t], .Priority = (INT)prios[i],
			};
			ID3D12CommandQueue *q = NULL;
			HRESULT create;

			p.CommandListType = types[t];
			p.Priority = prios[i];
			p.PriorityForTypeIsSupported = 7;
			EXPECT_EQ(S_OK, CHECK(dev,
					      D3D12_FEATURE_COMMAND_QUEUE_PRIORITY,
					      &p, sizeof(p)));
			create = ID3D12Device1_CreateCommandQueue(
				dev, &qd, &IID_ID3D12CommandQueue, (void **)&q);
			EXPECT_EQ(SUCCEEDED(create),
				  p.PriorityForTypeIsSupported == TRUE)
				TH_LOG("type %d priority %u: create %#x, says %d",
				       types[t], prios[i], HR(create),
				       p.PriorityForTypeIsSupported);
			if (i < 2) {
				EXPECT_EQ(TRUE, p.PriorityForTypeIsSupported);
			} else {
				realtime = p.PriorityForTypeIsSupported;
			}
			U_RELEASE(q);
		}
	}
	for (t = 0; t < 4; t++) {
		p.CommandListType = none[t];
		p.Priority = D3D12_COMMAND_QUEUE_PRIORITY_NORMAL;
		p.PriorityForTypeIsSupported = 7;
		EXPECT_EQ(S_OK, CHECK(dev, D3D12_FEATURE_COMMAND_QUEUE_PRIORITY,
				      &p, sizeof(p)));
		EXPECT_EQ(FALSE, p.PriorityForTypeIsSupported);
	}
	return realtime;
}

TEST_F(f, command_queue_priority)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	D3D12_FEATURE_DATA_COMMAND_QUEUE_PRIORITY p;
	BOOL realtime = priorities_agree(_metadata, self->dev);

	/* Bad input: a type or a priority D3D12 does not have. */
	p.CommandListType = (D3D12_COMMAND_LIST_TYPE)99;
	p.Priority = D3D12_COMMAND_QUEUE_PRIORITY_NORMAL;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_COMMAND_QUEUE_PRIORITY,
					  &p, sizeof(p)));
	p.CommandListType = D3D12_COMMAND_LIST_TYPE_DIRECT;
	p.Priority = 1;
	EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev,
					  D3D12_FEATURE_COMMAND_QUEUE_PRIORITY,
					  &p, sizeof(p)));

	/* Without CAP_SYS_NICE (this test's process only): no realtime. */
	memset(d, 0, sizeof(d));
	ASSERT_EQ(0, syscall(SYS_capget, &h, d));
	if (!(d[0].effective & (1u << CAP_SYS_NICE)))
		SKIP(return, "no CAP_SYS_NICE to drop (realtime: %d)", realtime);
	d[0].effective &= ~(1u << CAP_SYS_NICE);
	ASSERT_EQ(0, syscall(SYS_capset, &h, d));
	EXPECT_FALSE(priorities_agree(_metadata, self->dev));
	EXPECT_EQ(1, u_refs(self->dev));
}

/* Unknown features and sizes: E_INVALIDARG, never E_NOTIMPL. */
TEST_F(f, unknown_features)
{
	static const D3D12_FEATURE others[] = {
		D3D12_FEATURE_FORMAT_SUPPORT, D3D12_FEATURE_SHADER_MODEL,
		D3D12_FEATURE_D3D12_OPTIONS5, D3D12_FEATURE_ROOT_SIGNATURE,
		(D3D12_FEATURE)9, (D3D12_FEATURE)1000,
	};
	unsigned char buf[256];
	unsigned int i;

	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(HR(E_INVALIDARG), CHECK(self->dev, others[i], buf,
						  sizeof(buf)))
			TH_LOG("feature %d", others[i]);
	}
}

TEST_HARNESS_MAIN
