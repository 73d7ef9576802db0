// SPDX-License-Identifier: GPL-2.0
/*
 * A buffer larger than the device can hold (issue 39): Windows answers
 * E_OUTOFMEMORY; the layer answered E_INVALIDARG, the driver's -EINVAL
 * for a size above its max_bo_size (64 MiB by default, 1 GiB at most).
 * d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include "kselftest_harness.h"
#include "util/d3d12_util.h"

TEST(a_buffer_above_the_largest_is_out_of_memory)
{
	ID3D12Device1 *dev = u_device();
	D3D12_HEAP_PROPERTIES props = { .Type = D3D12_HEAP_TYPE_DEFAULT };
	D3D12_RESOURCE_DESC desc = {
		.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER,
		.Width = 2ull << 30,	/* above any max_bo_size */
		.Height = 1,
		.DepthOrArraySize = 1,
		.MipLevels = 1,
		.Format = DXGI_FORMAT_UNKNOWN,
		.SampleDesc = { .Count = 1 },
		.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR,
	};
	ID3D12Resource *res = NULL;

	if (!dev)
		SKIP(return, "no d3dq device");
	EXPECT_EQ(HR(E_OUTOFMEMORY),
		  HR(ID3D12Device1_CreateCommittedResource(
			dev, &props, D3D12_HEAP_FLAG_NONE, &desc,
			D3D12_RESOURCE_STATE_COMMON, NULL, &IID_ID3D12Resource,
			(void **)&res)));
	EXPECT_EQ(NULL, res);
	EXPECT_EQ(HR(S_OK), HR(ID3D12Device1_GetDeviceRemovedReason(dev)));
	/* A small one still works. */
	res = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, 4096);
	EXPECT_NE(NULL, res);
	U_RELEASE(res);
	U_RELEASE(dev);
}

TEST_HARNESS_MAIN
