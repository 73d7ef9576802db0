// SPDX-License-Identifier: GPL-2.0
/*
 * ID3D12CommandQueue::Wait issued before any Signal of its value exists,
 * released by another queue, by the CPU, and by a higher value; events
 * and SetEventOnMultipleFenceCompletion. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3d12_util.h"

FIXTURE(w) {
	ID3D12Device1 *dev;
	ID3D12CommandQueue *a, *b;
	ID3D12Fence *f, *g;
	ID3D12Resource *rb;
	volatile UINT32 *map;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *list;
	int ev;
};

FIXTURE_SETUP(w)
{
	self->ev = -1;
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->a = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	self->b = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_COMPUTE);
	self->f = u_fence(self->dev, 0);
	self->g = u_fence(self->dev, 0);
	self->rb = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK, 4096);
	ASSERT_TRUE(self->a && self->b && self->f && self->g && self->rb);
	self->map = u_map(self->rb);
	ASSERT_NE(NULL, self->map);
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
			   &self->alloc, &self->list));
	self->ev = u_event();
	ASSERT_LE(0, self->ev);
}

FIXTURE_TEARDOWN(w)
{
	if (self->ev >= 0)
		close(self->ev);
	U_RELEASE(self->list);
	U_RELEASE(self->alloc);
	U_RELEASE(self->rb);
	U_RELEASE(self->g);
	U_RELEASE(self->f);
	U_RELEASE(self->b);
	U_RELEASE(self->a);
	U_RELEASE(self->dev);
}

/*
 * Queue a: Wait(f, value), then write 0xa11 at offset 0, Signal(g, 1).
 * Nothing has signalled f: that work must not have run.
 */
static void queue_waiting_work(struct __test_metadata *_metadata,
			       FIXTURE_DATA(w) *self, UINT64 value)
{
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(self->a, self->f, value));
	u_write32(self->list, self->rb, 0, 0xa11);
	ASSERT_EQ(S_OK, u_execute(self->a, self->list));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->a, self->g, 1));
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->g, 1,
							 u_handle(self->ev)));
	/* Whatever could run ran; a's work is held by the kernel. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(self->g));
	EXPECT_EQ(0, self->map[0]);
	EXPECT_EQ(0, u_event_take(self->ev));
}

static void check_released(struct __test_metadata *_metadata,
			   FIXTURE_DATA(w) *self)
{
	ASSERT_EQ(S_OK, u_wait(self->g, 1));
	EXPECT_EQ(0xa11, self->map[0]);
	EXPECT_EQ(1, u_event_wait(self->ev, 10000));
	EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(self->g));
}

TEST_F(w, released_by_another_queue)
{
	queue_waiting_work(_metadata, self, 1);
	/* b's signal comes after a's wait was issued. */
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->b, self->f, 1));
	check_released(_metadata, self);
	/* Whoever sees g = 1 also sees the f = 1 a's work waited for (R17). */
	EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(self->f));
}

TEST_F(w, released_by_the_cpu)
{
	queue_waiting_work(_metadata, self, 1);
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 1));
	check_released(_metadata, self);
}

TEST_F(w, released_by_a_queue_that_waits_for_the_cpu)
{
	ID3D12Fence *h = u_fence(self->dev, 0);

	ASSERT_NE(NULL, h);
	queue_waiting_work(_metadata, self, 5);
	/* b's signal of f itself waits for the CPU to signal h. */
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(self->b, h, 1));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->b, self->f, 5));
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(self->f));
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(h, 1));
	check_released(_metadata, self);
	/* As above (R17). */
	EXPECT_EQ(5, ID3D12Fence_GetCompletedValue(self->f));
	U_RELEASE(h);
}

TEST_F(w, lower_value_does_not_release)
{
	queue_waiting_work(_metadata, self, 10);
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 9));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->b, self->f, 7));
	/* b's signal is the later one: the value goes down to 7. */
	ASSERT_EQ(S_OK, u_wait(self->f, 7));
	/* Nothing runs any more until f reaches 10: a's work is held. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, self->map[0]);
	EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(self->g));
	/* A jump past the value releases it. */
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 1000));
	check_released(_metadata, self);
}

TEST_F(w, multiple_fences)
{
	ID3D12Fence *fs[2] = { self->f, self->g };
	UINT64 vs[2] = { 2, 3 };
	int any = u_event();

	ASSERT_LE(0, any);
	ASSERT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL,
			u_handle(self->ev)));
	ASSERT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY,
			u_handle(any)));
	EXPECT_EQ(0, u_event_take(any));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->a, self->g, 3));
	EXPECT_EQ(1, u_event_wait(any, 10000));
	EXPECT_EQ(0, u_event_take(self->ev));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->b, self->f, 2));
	EXPECT_EQ(1, u_event_wait(self->ev, 10000));
	/* A NULL event blocks until every value is reached. */
	ASSERT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL,
			NULL));
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, vs, 2, 2, NULL));
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, NULL, vs, 2, 0, NULL));
	close(any);
}

TEST_F(w, event_handles)
{
	/* Already reached: fires during the call. */
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->f, 0,
							 u_handle(self->ev)));
	EXPECT_EQ(1, u_event_take(self->ev));
	/* INVALID_HANDLE_VALUE and negative numbers are not descriptors. */
	EXPECT_EQ(E_INVALIDARG, ID3D12Fence_SetEventOnCompletion(
			self->f, 1, (HANDLE)(intptr_t)-1));
	EXPECT_EQ(E_INVALIDARG, ID3D12Fence_SetEventOnCompletion(
			self->f, 1, (HANDLE)(intptr_t)INT64_MIN));
	/* Once per registration, when the value is reached. */
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->f, 4,
							 u_handle(self->ev)));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 3));
	EXPECT_EQ(0, u_event_take(self->ev));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 4));
	EXPECT_EQ(1, u_event_take(self->ev));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(self->f, 8));
	EXPECT_EQ(0, u_event_take(self->ev));
}

TEST_HARNESS_MAIN
