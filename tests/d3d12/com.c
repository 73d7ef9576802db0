// SPDX-License-Identifier: GPL-2.0
/*
 * COM semantics of every object: QueryInterface with the right IIDs and
 * only those, balanced reference counts (children hold the device, the
 * process has one device), names and private data, and the simple
 * getters (descriptions, heap properties, addresses, LUID). d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <string.h>
#include <wchar.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

/* iface answers every IID of yes (and IUnknown) and none of no. */
static int check_qi(struct __test_metadata *_metadata, void *iface,
		    const IID *const *yes, const IID *const *no)
{
	IUnknown *u = iface, *got, *unk1, *unk2;
	ULONG refs = u_refs(u);
	int n = 0;

	for (; *yes; yes++, n++) {
		got = (void *)1;
		EXPECT_EQ(S_OK, IUnknown_QueryInterface(u, *yes, (void **)&got));
		/* One object, one vtable: the same pointer, one more ref. */
		EXPECT_EQ(u, got);
		EXPECT_EQ(refs + 1, u_refs(u));
		IUnknown_Release(got);
	}
	for (; *no; no++) {
		got = (void *)1;
		EXPECT_EQ(HR(E_NOINTERFACE),
			  HR(IUnknown_QueryInterface(u, *no, (void **)&got)));
		EXPECT_EQ(NULL, got);
	}
	EXPECT_EQ(HR(E_POINTER), HR(IUnknown_QueryInterface(u, &IID_IUnknown,
							    NULL)));
	/* COM identity: IUnknown of anything it answers is the same. */
	ASSERT_EQ(S_OK, IUnknown_QueryInterface(u, &IID_IUnknown,
						(void **)&unk1));
	ASSERT_EQ(S_OK, IUnknown_QueryInterface(unk1, &IID_IUnknown,
						(void **)&unk2));
	EXPECT_EQ(unk1, unk2);
	IUnknown_Release(unk2);
	IUnknown_Release(unk1);
	EXPECT_EQ(refs, u_refs(u));
	return n;
}

FIXTURE(c) {
	ID3D12Device1 *dev;
};

FIXTURE_SETUP(c)
{
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
}

FIXTURE_TEARDOWN(c)
{
	/* Everything the test made is gone: this is the last reference. */
	if (self->dev)
		EXPECT_EQ(0, ID3D12Device1_Release(self->dev));
}

TEST_F(c, query_interface)
{
	const IID *dev_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				 &IID_ID3D12Device, &IID_ID3D12Device1, NULL };
	const IID *dev_no[] = { &IID_ID3D12Device2, &IID_ID3D12Device5,
				&IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				&IID_ID3D12Fence, NULL };
	const IID *fence_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				   &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				   &IID_ID3D12Fence, &IID_ID3D12Fence1, NULL };
	const IID *queue_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				   &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				   &IID_ID3D12CommandQueue, NULL };
	const IID *alloc_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				   &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				   &IID_ID3D12CommandAllocator, NULL };
	const IID *list_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				  &IID_ID3D12DeviceChild,
				  &IID_ID3D12CommandList,
				  &IID_ID3D12GraphicsCommandList,
				  &IID_ID3D12GraphicsCommandList1,
				  &IID_ID3D12GraphicsCommandList2, NULL };
	const IID *list_no[] = { &IID_ID3D12Pageable,
				 &IID_ID3D12GraphicsCommandList3,
				 &IID_ID3D12Device, NULL };
	const IID *res_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				 &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				 &IID_ID3D12Resource, NULL };
	const IID *heap_yes[] = { &IID_IUnknown, &IID_ID3D12Object,
				  &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
				  &IID_ID3D12QueryHeap, NULL };
	const IID *child_no[] = { &IID_ID3D12Device, &IID_ID3D12Heap,
				  &IID_ID3D12Resource1, &IID_ID3D12Fence1,
				  NULL };
	const IID *fence_no[] = { &IID_ID3D12Device, &IID_ID3D12Resource,
				  NULL };
	D3D12_QUERY_HEAP_DESC hd = { .Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP,
				     .Count = 1 };
	ID3D12GraphicsCommandList2 *list;
	ID3D12CommandAllocator *alloc;
	ID3D12CommandQueue *q;
	ID3D12QueryHeap *heap;
	ID3D12Resource *res;
	ID3D12Fence *f;

	q = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(self->dev, 0);
	res = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT, 64);
	ASSERT_EQ(S_OK, ID3D12Device1_CreateQueryHeap(self->dev, &hd,
						      &IID_ID3D12QueryHeap,
						      (void **)&heap));
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc,
			   &list));
	ASSERT_TRUE(q && f && res);

	EXPECT_EQ(4, check_qi(_metadata, self->dev, dev_yes, dev_no));
	EXPECT_EQ(6, check_qi(_metadata, f, fence_yes, fence_no));
	EXPECT_EQ(5, check_qi(_metadata, q, queue_yes, child_no));
	EXPECT_EQ(5, check_qi(_metadata, alloc, alloc_yes, child_no));
	EXPECT_EQ(7, check_qi(_metadata, list, list_yes, list_no));
	EXPECT_EQ(5, check_qi(_metadata, res, res_yes, child_no));
	EXPECT_EQ(5, check_qi(_metadata, heap, heap_yes, child_no));

	U_RELEASE(list);
	U_RELEASE(alloc);
	U_RELEASE(heap);
	U_RELEASE(res);
	U_RELEASE(f);
	U_RELEASE(q);
}

TEST_F(c, reference_counts)
{
	ID3D12Device1 *again = NULL;
	ID3D12Device *base = NULL, *got = NULL;
	ID3D12Fence *f, *f2;
	UINT size;

	/* One device per process while it lives. */
	EXPECT_EQ(1, u_refs(self->dev));
	again = u_device();
	EXPECT_EQ(self->dev, again);
	EXPECT_EQ(2, u_refs(self->dev));
	EXPECT_EQ(1, ID3D12Device1_Release(again));
	ASSERT_EQ(S_OK, D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_1_0_CORE,
					  &IID_ID3D12Device, (void **)&base));
	EXPECT_EQ((void *)self->dev, (void *)base);
	EXPECT_EQ(1, ID3D12Device_Release(base));

	/* Children hold their device; GetDevice adds a reference. */
	f = u_fence(self->dev, 0);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(2, u_refs(self->dev));
	EXPECT_EQ(1, u_refs(f));
	ASSERT_EQ(S_OK, ID3D12Fence_GetDevice(f, &IID_ID3D12Device,
					      (void **)&got));
	EXPECT_EQ((void *)self->dev, (void *)got);
	EXPECT_EQ(2, ID3D12Device_Release(got));
	EXPECT_EQ(HR(E_NOINTERFACE), HR(ID3D12Fence_GetDevice(
			f, &IID_ID3D12Fence, (void **)&got)));
	EXPECT_EQ(NULL, got);

	/* Private data interfaces are held until replaced or released. */
	f2 = u_fence(self->dev, 0);
	ASSERT_NE(NULL, f2);
	ASSERT_EQ(S_OK, ID3D12Fence_SetPrivateDataInterface(
			f, &IID_ID3D12Fence, (IUnknown *)f2));
	EXPECT_EQ(2, u_refs(f2));
	size = sizeof(got);
	ASSERT_EQ(S_OK, ID3D12Fence_GetPrivateData(f, &IID_ID3D12Fence, &size,
						   &got));
	EXPECT_EQ((void *)f2, (void *)got);
	EXPECT_EQ(3, u_refs(f2));
	IUnknown_Release((IUnknown *)got);
	ASSERT_EQ(S_OK, ID3D12Fence_SetPrivateData(f, &IID_ID3D12Fence, 0,
						   NULL));
	EXPECT_EQ(1, u_refs(f2));
	ASSERT_EQ(S_OK, ID3D12Fence_SetPrivateDataInterface(
			f, &IID_ID3D12Fence, (IUnknown *)f2));
	EXPECT_EQ(1, ID3D12Fence_Release(f2));
	/* Releasing f releases f2 (and then the device's last children). */
	EXPECT_EQ(0, ID3D12Fence_Release(f));
	EXPECT_EQ(1, u_refs(self->dev));
}

TEST_F(c, names_and_private_data)
{
	static const GUID mine = { 0x12345678, 0x1234, 0x5678,
				   { 1, 2, 3, 4, 5, 6, 7, 8 } };
	WCHAR name[32];
	UINT size, data = 0xfeed, back = 0;
	ID3D12Fence *f = u_fence(self->dev, 0);

	ASSERT_NE(NULL, f);
	ASSERT_EQ(S_OK, ID3D12Fence_SetName(f, L"frame fence"));
	size = 0;
	/* The size alone, then too small, then the name with its NUL. */
	ASSERT_EQ(S_OK, ID3D12Fence_GetPrivateData(
			f, &WKPDID_D3DDebugObjectNameW, &size, NULL));
	EXPECT_EQ(sizeof(L"frame fence"), size);
	size = 4;
	EXPECT_EQ(HR(DXGI_ERROR_MORE_DATA), HR(ID3D12Fence_GetPrivateData(
			f, &WKPDID_D3DDebugObjectNameW, &size, name)));
	EXPECT_EQ(sizeof(L"frame fence"), size);
	size = sizeof(name);
	ASSERT_EQ(S_OK, ID3D12Fence_GetPrivateData(
			f, &WKPDID_D3DDebugObjectNameW, &size, name));
	EXPECT_EQ(0, wcscmp(name, L"frame fence"));

	size = sizeof(back);
	EXPECT_EQ(HR(DXGI_ERROR_NOT_FOUND), HR(ID3D12Fence_GetPrivateData(
			f, &mine, &size, &back)));
	EXPECT_EQ(0, size);
	ASSERT_EQ(S_OK, ID3D12Fence_SetPrivateData(f, &mine, sizeof(data),
						   &data));
	size = sizeof(back);
	ASSERT_EQ(S_OK, ID3D12Fence_GetPrivateData(f, &mine, &size, &back));
	EXPECT_EQ(data, back);
	/* NULL data deletes the entry, whatever the size (answers.c). */
	EXPECT_EQ(S_OK, ID3D12Fence_SetPrivateData(f, &mine, 4, NULL));
	size = sizeof(back);
	EXPECT_EQ(HR(DXGI_ERROR_NOT_FOUND), HR(ID3D12Fence_GetPrivateData(
			f, &mine, &size, &back)));
	/* The device is an ID3D12Object too. */
	ASSERT_EQ(S_OK, ID3D12Device1_SetName(self->dev, L"d3dq"));
	size = sizeof(name);
	ASSERT_EQ(S_OK, ID3D12Device1_GetPrivateData(
			self->dev, &WKPDID_D3DDebugObjectNameW, &size, name));
	EXPECT_EQ(0, wcscmp(name, L"d3dq"));
	U_RELEASE(f);
}

TEST_F(c, create_device_arguments)
{
	ID3D12Device *d = (void *)1;
	void *dbg = (void *)1;

	EXPECT_EQ(HR(S_FALSE), HR(D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0,
						    &IID_ID3D12Device, NULL)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
			NULL, D3D_FEATURE_LEVEL_10_0, &IID_ID3D12Device,
			(void **)&d)));
	EXPECT_EQ(NULL, d);
	/* No DXGI: an adapter cannot be one of ours. */
	EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
			(IUnknown *)self->dev, D3D_FEATURE_LEVEL_11_0,
			&IID_ID3D12Device, (void **)&d)));
	EXPECT_EQ(HR(E_NOINTERFACE), HR(D3D12CreateDevice(
			NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device5,
			(void **)&d)));
	EXPECT_EQ(NULL, d);
	EXPECT_EQ(HR(E_NOINTERFACE), HR(D3D12GetDebugInterface(
			&IID_ID3D12Debug, &dbg)));
	EXPECT_EQ(NULL, dbg);
	EXPECT_EQ(1, u_refs(self->dev));
}

TEST_F(c, getters)
{
	D3D12_COMMAND_QUEUE_DESC qd = {
		.Type = D3D12_COMMAND_LIST_TYPE_COPY,
		.Priority = D3D12_COMMAND_QUEUE_PRIORITY_HIGH,
		.NodeMask = 1,
	}, got;
	D3D12_RESOURCE_DESC rd;
	D3D12_HEAP_PROPERTIES hp;
	D3D12_HEAP_FLAGS hf;
	D3D12_RESOURCE_ALLOCATION_INFO info;
	ID3D12CommandQueue *q;
	ID3D12Resource *a, *b;
	ID3D12Fence1 *f;
	LUID luid;
	void *p1, *p2;

	ASSERT_EQ(S_OK, ID3D12Device1_CreateCommandQueue(
			self->dev, &qd, &IID_ID3D12CommandQueue, (void **)&q));
	got = ID3D12CommandQueue_GetDesc(q);
	EXPECT_EQ(0, memcmp(&qd, &got, sizeof(qd)));
	U_RELEASE(q);
	/* Priorities are D3D12's numbers; 1 is not one. */
	qd.Priority = 1;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommandQueue(
			self->dev, &qd, &IID_ID3D12CommandQueue, (void **)&q));
	EXPECT_EQ(NULL, q);

	EXPECT_EQ(1, ID3D12Device1_GetNodeCount(self->dev));
	luid = ID3D12Device1_GetAdapterLuid(self->dev);
	EXPECT_NE(0, luid.LowPart | (UINT)luid.HighPart);

	a = u_buffer(self->dev, D3D12_HEAP_TYPE_UPLOAD, 1000);
	b = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT, 1000);
	ASSERT_TRUE(a && b);
	rd = ID3D12Resource_GetDesc(a);
	EXPECT_EQ(D3D12_RESOURCE_DIMENSION_BUFFER, rd.Dimension);
	EXPECT_EQ(1000, rd.Width);
	EXPECT_EQ(65536, rd.Alignment);
	ASSERT_EQ(S_OK, ID3D12Resource_GetHeapProperties(a, &hp, &hf));
	EXPECT_EQ(D3D12_HEAP_TYPE_UPLOAD, hp.Type);
	EXPECT_EQ(D3D12_HEAP_FLAG_NONE, hf);
	/* Distinct, aligned, non-zero GPU addresses. */
	EXPECT_NE(0, ID3D12Resource_GetGPUVirtualAddress(a));
	EXPECT_EQ(0, ID3D12Resource_GetGPUVirtualAddress(a) % 65536);
	EXPECT_LE(ID3D12Resource_GetGPUVirtualAddress(a) + 1000,
		  ID3D12Resource_GetGPUVirtualAddress(b));
	/* Map nests and always returns the start of the buffer. */
	ASSERT_EQ(S_OK, ID3D12Resource_Map(a, 0, NULL, &p1));
	ASSERT_EQ(S_OK, ID3D12Resource_Map(a, 0, NULL, &p2));
	EXPECT_EQ(p1, p2);
	ID3D12Resource_Unmap(a, 0, NULL);
	ID3D12Resource_Unmap(a, 0, NULL);
	EXPECT_EQ(S_OK, ID3D12Resource_Map(a, 0, NULL, NULL));
	EXPECT_EQ(E_INVALIDARG, ID3D12Resource_Map(a, 1, NULL, &p1));
	/* DEFAULT heaps cannot be mapped. */
	EXPECT_EQ(E_INVALIDARG, ID3D12Resource_Map(b, 0, NULL, &p1));
	EXPECT_EQ(NULL, p1);

	info = ID3D12Device1_GetResourceAllocationInfo(self->dev, 0, 1, &rd);
	EXPECT_EQ(65536, info.SizeInBytes);
	EXPECT_EQ(65536, info.Alignment);
	rd.Dimension = D3D12_RESOURCE_DIMENSION_TEXTURE2D;
	info = ID3D12Device1_GetResourceAllocationInfo(self->dev, 0, 1, &rd);
	EXPECT_EQ(UINT64_MAX, info.SizeInBytes);
	hp = ID3D12Device1_GetCustomHeapProperties(self->dev, 0,
						   D3D12_HEAP_TYPE_READBACK);
	EXPECT_EQ(D3D12_HEAP_TYPE_CUSTOM, hp.Type);
	EXPECT_EQ(D3D12_CPU_PAGE_PROPERTY_WRITE_BACK, hp.CPUPageProperty);
	EXPECT_EQ(D3D12_MEMORY_POOL_L0, hp.MemoryPoolPreference);

	ASSERT_EQ(S_OK, ID3D12Device1_CreateFence(self->dev, 7,
						  D3D12_FENCE_FLAG_SHARED,
						  &IID_ID3D12Fence1,
						  (void **)&f));
	EXPECT_EQ(D3D12_FENCE_FLAG_SHARED, ID3D12Fence1_GetCreationFlags(f));
	EXPECT_EQ(7, ID3D12Fence1_GetCompletedValue(f));
	U_RELEASE(f);
	U_RELEASE(b);
	U_RELEASE(a);
}

TEST_F(c, resource_arguments)
{
	D3D12_HEAP_PROPERTIES hp = { .Type = D3D12_HEAP_TYPE_UPLOAD };
	D3D12_RESOURCE_DESC rd = {
		.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER,
		.Width = 256, .Height = 1, .DepthOrArraySize = 1,
		.MipLevels = 1, .SampleDesc = { 1, 0 },
		.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR,
	};
	ID3D12Resource *r = (void *)1;

	/* UPLOAD starts in GENERIC_READ, READBACK in COPY_DEST. */
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, D3D12_RESOURCE_STATE_COPY_DEST,
			NULL, &IID_ID3D12Resource, (void **)&r));
	EXPECT_EQ(NULL, r);
	hp.Type = D3D12_HEAP_TYPE_READBACK;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd,
			D3D12_RESOURCE_STATE_GENERIC_READ, NULL,
			&IID_ID3D12Resource, (void **)&r));
	/* A NULL ppvResource only checks the arguments. */
	EXPECT_EQ(S_FALSE, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, D3D12_RESOURCE_STATE_COPY_DEST,
			NULL, &IID_ID3D12Resource, NULL));
	hp.Type = D3D12_HEAP_TYPE_DEFAULT;
	rd.Height = 2;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, 0, NULL, &IID_ID3D12Resource,
			(void **)&r));
	rd.Height = 1;
	rd.Width = 0;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, 0, NULL, &IID_ID3D12Resource,
			(void **)&r));
	rd.Width = 256;
	rd.Dimension = D3D12_RESOURCE_DIMENSION_TEXTURE2D;
	EXPECT_EQ(E_NOTIMPL, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, 0, NULL, &IID_ID3D12Resource,
			(void **)&r));
	rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
	hp.Type = D3D12_HEAP_TYPE_CUSTOM;
	EXPECT_EQ(E_NOTIMPL, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, 0, NULL, &IID_ID3D12Resource,
			(void **)&r));
	hp.Type = D3D12_HEAP_TYPE_DEFAULT;
	EXPECT_EQ(E_NOINTERFACE, ID3D12Device1_CreateCommittedResource(
			self->dev, &hp, 0, &rd, 0, NULL, &IID_ID3D12Fence,
			(void **)&r));
	EXPECT_EQ(NULL, r);
	EXPECT_EQ(1, u_refs(self->dev));
}

TEST_HARNESS_MAIN
