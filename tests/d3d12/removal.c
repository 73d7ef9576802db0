// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal seen through d3d12.h: a queue that hangs (its job runs
 * past the driver's job timeout, set short by reloading the module) and
 * executing a list whose Close failed. Afterwards fences read UINT64_MAX,
 * blocked waiters return, creation fails with DXGI_ERROR_DEVICE_REMOVED,
 * GetDeviceRemovedReason tells why, and D3D12CreateDevice gives a new
 * device.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"
#include "util/d3dq_test.h"

#define BUF (64u << 20)		/* the driver's largest buffer */
#define COPIES 32		/* 2 GiB of copying: far past 20 ms */

static void check_removed(struct __test_metadata *_metadata,
			  ID3D12Device1 *dev, ID3D12CommandQueue *q,
			  ID3D12Fence *f, HRESULT reason)
{
	D3D12_COMMAND_QUEUE_DESC qdesc = { .Type = D3D12_COMMAND_LIST_TYPE_COPY };
	ID3D12Device1 *again = NULL;
	ID3D12Fence *f2 = (void *)1;
	ID3D12CommandQueue *q2 = (void *)1;
	UINT64 gpu, cpu;

	EXPECT_EQ(HR(reason), HR(ID3D12Device1_GetDeviceRemovedReason(dev)));
	EXPECT_EQ(UINT64_MAX, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12Device1_CreateFence(dev, 0, 0, &IID_ID3D12Fence,
					       (void **)&f2)));
	EXPECT_EQ(NULL, f2);
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12Device1_CreateCommandQueue(dev, &qdesc,
						      &IID_ID3D12CommandQueue,
						      (void **)&q2)));
	EXPECT_EQ(NULL, q2);
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12CommandQueue_Signal(q, f, 5)));
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12CommandQueue_Wait(q, f, 5)));
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED), HR(ID3D12Fence_Signal(f, 5)));
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12CommandQueue_GetClockCalibration(q, &gpu, &cpu)));
	/* Waits return at once. */
	EXPECT_EQ(S_OK, u_wait(f, UINT64_MAX));

	/* A removed device is not handed out again: a new one is. */
	again = u_device();
	ASSERT_NE(NULL, again);
	EXPECT_NE(dev, again);
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(again));
	EXPECT_EQ(0, ID3D12Device1_Release(again));
}

FIXTURE(hang) {
	bool reloaded;
};

FIXTURE_SETUP(hang)
{
	self->reloaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("job_timeout_ms=20"));
	self->reloaded = true;
}

FIXTURE_TEARDOWN(hang)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

TEST_F_TIMEOUT(hang, hung_queue, 120)
{
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
	ID3D12Resource *src, *dst;
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f;
	int ev, i;

	dev = u_device();
	ASSERT_NE(NULL, dev);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(dev, 0);
	src = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, BUF);
	dst = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, BUF);
	ASSERT_TRUE(q && f && src && dst);
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc, &l));
	ev = u_event();
	ASSERT_LE(0, ev);

	for (i = 0; i < COPIES; i++)
		ID3D12GraphicsCommandList2_CopyResource(l, dst, src);
	ASSERT_EQ(S_OK, u_execute(q, l));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 1));
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 1, u_handle(ev)));
	/* Blocks until the removal releases it: the signal never runs. */
	ASSERT_EQ(S_OK, u_wait(f, 1));
	EXPECT_EQ(1, u_event_wait(ev, 10000));
	check_removed(_metadata, dev, q, f, DXGI_ERROR_DEVICE_HUNG);

	close(ev);
	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(dst);
	U_RELEASE(src);
	U_RELEASE(f);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

/* Executing a list whose Close failed is D3D12's DXGI_ERROR_INVALID_CALL. */
TEST(execute_failed_list)
{
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
	ID3D12CommandList *lists[1];
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f;

	dev = u_device();
	if (!dev)
		SKIP(return, "no d3dq device");
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_COMPUTE);
	f = u_fence(dev, 0);
	ASSERT_TRUE(q && f);
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_COMPUTE, &alloc, &l));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(q, f, 1));
	ID3D12GraphicsCommandList2_Dispatch(l, 1, 1, 1);
	ASSERT_EQ(E_NOTIMPL, ID3D12GraphicsCommandList2_Close(l));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));
	lists[0] = (ID3D12CommandList *)l;
	ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
	check_removed(_metadata, dev, q, f, DXGI_ERROR_INVALID_CALL);

	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(f);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
