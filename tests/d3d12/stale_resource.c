// SPDX-License-Identifier: GPL-2.0
/*
 * A list that names a released resource (issue 39): d3d12.rst promises
 * that executing it removes the device with DXGI_ERROR_INVALID_CALL. The
 * list used to hold the released buffer's handle only, which the driver
 * gave to the next buffer: the execute then wrote into that one, and
 * nothing was removed. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include "kselftest_harness.h"
#include "util/d3d12_util.h"

TEST(a_released_resource_is_never_another)
{
	ID3D12Device1 *dev = u_device();
	ID3D12CommandQueue *q;
	ID3D12Resource *old, *fresh;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *list;
	ID3D12CommandList *lists[1];
	volatile UINT32 *map;
	ID3D12Fence *f;

	if (!dev)
		SKIP(return, "no d3dq device");
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(dev, 0);
	old = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 4096);
	ASSERT_TRUE(q && f && old);
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc,
			   &list));
	u_write32(list, old, 0, 0xbad);
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(list));
	U_RELEASE(old);
	fresh = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 4096);
	ASSERT_NE(NULL, fresh);
	map = u_map(fresh);
	ASSERT_NE(NULL, map);

	lists[0] = (ID3D12CommandList *)list;
	ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
	EXPECT_EQ(HR(DXGI_ERROR_INVALID_CALL),
		  HR(ID3D12Device1_GetDeviceRemovedReason(dev)));
	/* Removed: every fence reads UINT64_MAX, every job has stopped. */
	EXPECT_EQ(UINT64_MAX, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(0, map[0]);

	U_RELEASE(fresh);
	U_RELEASE(list);
	U_RELEASE(alloc);
	U_RELEASE(f);
	U_RELEASE(q);
	U_RELEASE(dev);
}

TEST_HARNESS_MAIN
