// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 39, item 2, through d3d12.h: fork(). The parent has the
 * process's device (D3D12CreateDevice) with a queue, a fence, a buffer
 * and command lists, and a device with a signal-event callback whose
 * dispatcher runs with an event pending. Its child:
 *
 * - gets a device of its own from D3D12CreateDevice (it once got the
 *   parent's, on the parent's file: the child's misuse, or hang, then
 *   removed the parent's device), which works and whose removal stays
 *   in the child;
 * - is answered DXGI_ERROR_DEVICE_REMOVED by the parent's objects, and
 *   nothing it does with them reaches the parent (executing a list that
 *   is still recording on the parent's queue once removed the parent's
 *   device);
 * - gets callbacks on a callback device of its own, whose last Release
 *   returns (it once waited for ever), and releases the parent's objects.
 *
 * The parent's objects are as they were afterwards, and its event fires.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3d12_util.h"
#include <d3dq/d3d12_d3dq.h>

#define T(n) ((HANDLE)(uintptr_t)(n))
#define NT 16

static _Atomic unsigned int calls[NT];

static HRESULT callback(HANDLE event, void *context)
{
	uintptr_t t = (uintptr_t)event;

	(void)context;
	if (t < NT)
		atomic_fetch_add(&calls[t], 1);
	return S_OK;
}

static ID3D12Device1 *cb_device(void)
{
	struct d3d12_d3dq_device_create_info info = {
		.size = sizeof(info),
		.minimum_feature_level = D3D_FEATURE_LEVEL_11_0,
		.pfn_signal_event = callback,
	};
	ID3D12Device1 *dev = NULL;

	if (FAILED(d3d12_d3dq_create_device(&info, &IID_ID3D12Device1,
					    (void **)&dev)))
		return NULL;
	return dev;
}

/* Wait (a hang detector, 10 s) until token @t was called @n times. */
static bool wait_calls(unsigned int t, unsigned int n)
{
	int i;

	for (i = 0; i < 10000 && atomic_load(&calls[t]) < n; i++)
		task_sleep_ms(1);
	return atomic_load(&calls[t]) >= n;
}

FIXTURE(df) {
	ID3D12Device1 *dev, *cb;
	ID3D12CommandQueue *q;
	ID3D12Fence *f, *cf;
	ID3D12Resource *buf;
	ID3D12CommandAllocator *a, *a2;
	ID3D12GraphicsCommandList2 *closed;	/* buf[0] = 0x77 */
	ID3D12GraphicsCommandList2 *open;	/* still recording */
	uint32_t *map;
};

FIXTURE_SETUP(df)
{
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->q = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	ASSERT_NE(NULL, self->q);
	self->f = u_fence(self->dev, 0);
	ASSERT_NE(NULL, self->f);
	self->buf = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK, 4096);
	ASSERT_NE(NULL, self->buf);
	self->map = u_map(self->buf);
	ASSERT_NE(NULL, self->map);
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
			   &self->a, &self->closed));
	u_write32(self->closed, self->buf, 0, 0x77);
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->closed));
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
			   &self->a2, &self->open));
	self->cb = cb_device();
	ASSERT_NE(NULL, self->cb);
	self->cf = u_fence(self->cb, 0);
	ASSERT_NE(NULL, self->cf);
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->cf, 1, T(5)));
}

FIXTURE_TEARDOWN(df)
{
	U_RELEASE(self->open);
	U_RELEASE(self->closed);
	U_RELEASE(self->a2);
	U_RELEASE(self->a);
	U_RELEASE(self->buf);
	U_RELEASE(self->f);
	U_RELEASE(self->q);
	U_RELEASE(self->dev);
	U_RELEASE(self->cf);
	U_RELEASE(self->cb);
}

#define CHECK(n, cond)				\
	do {					\
		if (!(cond) && !first)		\
			first = (n);		\
	} while (0)

/*
 * In the child: every step, also after a failed one (so that a library
 * that lets the child reach the parent's file shows it to the parent),
 * the blocking ones last; the number of the first that failed.
 */
static int child(FIXTURE_DATA(df) *self)
{
	ID3D12CommandList *open = (ID3D12CommandList *)self->open;
	ID3D12GraphicsCommandList2 *l2;
	ID3D12CommandAllocator *a2;
	ID3D12CommandQueue *q2, *q3;
	ID3D12Fence *f2, *f3, *cf2;
	ID3D12Device1 *dev2, *cb2;
	int first = 0;

	/* The parent's objects refuse. */
	CHECK(10, ID3D12Fence_Signal(self->f, 7) == DXGI_ERROR_DEVICE_REMOVED);
	CHECK(11, ID3D12CommandQueue_Signal(self->q, self->f, 1) ==
		  DXGI_ERROR_DEVICE_REMOVED);
	CHECK(12, ID3D12CommandQueue_Wait(self->q, self->f, 1) ==
		  DXGI_ERROR_DEVICE_REMOVED);
	CHECK(13, ID3D12Device1_CreateFence(self->dev, 0, D3D12_FENCE_FLAG_NONE,
					    &IID_ID3D12Fence,
					    (void **)&f3) ==
		  DXGI_ERROR_DEVICE_REMOVED);
	CHECK(14, !u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_COPY));
	CHECK(15, ID3D12Device1_GetDeviceRemovedReason(self->dev) ==
		  DXGI_ERROR_DEVICE_REMOVED);
	CHECK(16, ID3D12GraphicsCommandList2_Close(self->open) ==
		  DXGI_ERROR_DEVICE_REMOVED);
	/* A misuse that removes a device: not the parent's. */
	ID3D12CommandQueue_ExecuteCommandLists(self->q, 1, &open);
	ID3D12CommandQueue_ExecuteCommandLists(
		self->q, 1, (ID3D12CommandList **)&self->closed);

	/* Its own device, which works, and whose removal is its own. */
	dev2 = u_device();
	CHECK(20, dev2 && dev2 != self->dev);
	if (!dev2)
		return first;
	q2 = u_queue(dev2, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f2 = u_fence(dev2, 0);
	CHECK(21, q2 && f2);
	if (!q2 || !f2)
		return first;
	CHECK(22, ID3D12CommandQueue_Signal(q2, f2, 3) == S_OK);
	CHECK(23, u_wait(f2, 3) == S_OK);
	CHECK(24, u_list(dev2, D3D12_COMMAND_LIST_TYPE_DIRECT, &a2, &l2));
	ID3D12CommandQueue_ExecuteCommandLists(q2, 1,
					       (ID3D12CommandList **)&l2);
	CHECK(25, ID3D12Device1_GetDeviceRemovedReason(dev2) ==
		  DXGI_ERROR_INVALID_CALL);

	/* A callback device of its own: its callbacks come. */
	cb2 = cb_device();
	CHECK(30, cb2 != NULL);
	if (!cb2)
		return first;
	q3 = u_queue(cb2, D3D12_COMMAND_LIST_TYPE_COPY);
	cf2 = u_fence(cb2, 0);
	CHECK(31, q3 && cf2);
	if (!q3 || !cf2)
		return first;
	CHECK(32, ID3D12Fence_SetEventOnCompletion(cf2, 2, T(1)) == S_OK);
	CHECK(33, ID3D12CommandQueue_Signal(q3, cf2, 2) == S_OK);
	CHECK(34, wait_calls(1, 1));
	CHECK(35, ID3D12Fence_SetEventOnCompletion(cf2, 3, T(2)) == S_OK);

	/* Everything goes; the last Release returns, its callbacks called. */
	U_RELEASE(l2);
	U_RELEASE(a2);
	U_RELEASE(f2);
	U_RELEASE(q2);
	CHECK(40, ID3D12Device1_Release(dev2) == 0);
	U_RELEASE(cf2);
	U_RELEASE(q3);
	CHECK(41, ID3D12Device1_Release(cb2) == 0);
	CHECK(42, atomic_load(&calls[2]) == 1);
	U_RELEASE(self->open);
	U_RELEASE(self->closed);
	U_RELEASE(self->a2);
	U_RELEASE(self->a);
	U_RELEASE(self->buf);
	U_RELEASE(self->f);
	U_RELEASE(self->q);
	CHECK(43, ID3D12Device1_Release(self->dev) == 0);
	U_RELEASE(self->cf);
	CHECK(44, ID3D12Device1_Release(self->cb) == 0);
	/* Nothing of the parent's was called here. */
	CHECK(45, !atomic_load(&calls[5]));
	return first;
}

TEST_F_TIMEOUT(df, child_has_a_device_of_its_own, 120)
{
	char why[64];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child(self));
	status = task_wait_child(pid, 20000);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child: %s", task_status_str(status, why, sizeof(why)));

	/* The parent's device is as it was, and works. */
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(self->dev));
	EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(self->f));
	EXPECT_EQ(0, self->map[0]);
	ID3D12CommandQueue_ExecuteCommandLists(
		self->q, 1, (ID3D12CommandList **)&self->closed);
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(self->q, self->f, 2));
	EXPECT_EQ(S_OK, u_wait(self->f, 2));
	EXPECT_EQ(0x77, self->map[0]);
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(self->dev));
	EXPECT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->open));

	/* Its event, registered before the fork, fires once. */
	EXPECT_EQ(0, atomic_load(&calls[5]));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(self->cf, 1));
	EXPECT_TRUE(wait_calls(5, 1));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->cf, 1, T(6)));
	EXPECT_TRUE(wait_calls(6, 1));
	EXPECT_EQ(1, atomic_load(&calls[5]));
}

/* A blocking call on the parent's fence refuses at once in the child. */
TEST_F_TIMEOUT(df, child_blocking_call_refuses, 60)
{
	char why[64];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ID3D12Fence_SetEventOnCompletion(self->f, 1, NULL) ==
		      DXGI_ERROR_DEVICE_REMOVED &&
		      ID3D12Device1_SetEventOnMultipleFenceCompletion(
			      self->dev, &self->f, (UINT64[]){ 1 }, 1,
			      D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, NULL) ==
		      DXGI_ERROR_DEVICE_REMOVED ? 0 : 1);
	status = task_wait_child(pid, 10000);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child: %s", task_status_str(status, why, sizeof(why)));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(self->dev));
}

TEST_HARNESS_MAIN
