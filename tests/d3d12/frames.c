// SPDX-License-Identifier: GPL-2.0
/*
 * A frame loop as D3D12 programs write it: N frames in flight, one
 * allocator per frame, a fence value per frame and SetEventOnCompletion
 * before an allocator is reused. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#define IN_FLIGHT 3
#define FRAMES 40
#define WORDS 16	/* values written per frame */

TEST(frame_loop)
{
	ID3D12CommandAllocator *alloc[IN_FLIGHT] = { 0 };
	UINT64 frame_value[IN_FLIGHT] = { 0 }, value = 0;
	ID3D12GraphicsCommandList2 *list;
	ID3D12CommandList *lists[1];
	ID3D12CommandQueue *q;
	ID3D12Resource *upload, *rb;
	volatile UINT32 *out;
	ID3D12Device1 *dev;
	ID3D12Fence *fence;
	UINT32 *in;
	int ev, f, i, slot;

	dev = u_device();
	if (!dev)
		SKIP(return, "no d3dq device");
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	fence = u_fence(dev, 0);
	upload = u_buffer(dev, D3D12_HEAP_TYPE_UPLOAD, FRAMES * WORDS * 4);
	rb = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, FRAMES * WORDS * 4 * 2);
	ASSERT_TRUE(q && fence && upload && rb);
	in = u_map(upload);
	out = u_map(rb);
	ASSERT_TRUE(in && out);
	for (i = 0; i < IN_FLIGHT; i++)
		ASSERT_EQ(S_OK, ID3D12Device1_CreateCommandAllocator(
				dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
				&IID_ID3D12CommandAllocator,
				(void **)&alloc[i]));
	ASSERT_EQ(S_OK, ID3D12Device1_CreateCommandList(
			dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, alloc[0], NULL,
			&IID_ID3D12GraphicsCommandList2, (void **)&list));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(list));
	ev = u_event();
	ASSERT_LE(0, ev);
	lists[0] = (ID3D12CommandList *)list;

	for (f = 0; f < FRAMES; f++) {
		slot = f % IN_FLIGHT;
		/* Wait until the GPU is done with this slot's last frame. */
		if (ID3D12Fence_GetCompletedValue(fence) < frame_value[slot]) {
			ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(
					fence, frame_value[slot],
					u_handle(ev)));
			ASSERT_EQ(1, u_event_wait(ev, 60000));
		}
		ASSERT_LE(frame_value[slot],
			  ID3D12Fence_GetCompletedValue(fence));
		/* At most IN_FLIGHT frames are outstanding. */
		ASSERT_GE(ID3D12Fence_GetCompletedValue(fence) + IN_FLIGHT,
			  value + 1);
		ASSERT_EQ(S_OK, ID3D12CommandAllocator_Reset(alloc[slot]));
		ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(list,
							   alloc[slot], NULL));
		/* The CPU writes its half, the GPU the other half. */
		for (i = 0; i < WORDS; i++) {
			in[f * WORDS + i] = 0x10000 * f + i;
			u_write32(list, rb, (FRAMES + f) * WORDS * 4 + i * 4,
				  0x20000 * f + i);
		}
		ID3D12GraphicsCommandList2_CopyBufferRegion(list, rb,
				f * WORDS * 4, upload, f * WORDS * 4, WORDS * 4);
		ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(list));
		ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
		frame_value[slot] = ++value;
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, fence, value));
	}
	ASSERT_EQ(S_OK, u_wait(fence, value));
	for (f = 0; f < FRAMES; f++) {
		for (i = 0; i < WORDS; i++) {
			ASSERT_EQ(0x10000 * f + i, out[f * WORDS + i]);
			ASSERT_EQ(0x20000 * f + i,
				  out[(FRAMES + f) * WORDS + i]);
		}
	}
	close(ev);
	U_RELEASE(list);
	for (i = 0; i < IN_FLIGHT; i++)
		U_RELEASE(alloc[i]);
	U_RELEASE(rb);
	U_RELEASE(upload);
	U_RELEASE(fence);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

/* The allocator of a list that records cannot be reset or shared. */
TEST(allocator_rules)
{
	ID3D12CommandAllocator *a, *b;
	ID3D12GraphicsCommandList2 *l, *l2 = NULL;
	ID3D12Device1 *dev = u_device();

	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &a, &l));
	ASSERT_EQ(S_OK, ID3D12Device1_CreateCommandAllocator(
			dev, D3D12_COMMAND_LIST_TYPE_COPY,
			&IID_ID3D12CommandAllocator, (void **)&b));
	EXPECT_EQ(E_FAIL, ID3D12CommandAllocator_Reset(a));
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommandList(
			dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, a, NULL,
			&IID_ID3D12GraphicsCommandList2, (void **)&l2));
	EXPECT_EQ(NULL, l2);
	/* Reset needs a closed list and an allocator of the list's type. */
	EXPECT_EQ(E_FAIL, ID3D12GraphicsCommandList2_Reset(l, a, NULL));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(l));
	EXPECT_EQ(E_FAIL, ID3D12GraphicsCommandList2_Close(l));
	EXPECT_EQ(S_OK, ID3D12CommandAllocator_Reset(a));
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Reset(l, b, NULL));
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Reset(l, NULL,
								NULL));
	EXPECT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, a, NULL));
	EXPECT_EQ(D3D12_COMMAND_LIST_TYPE_DIRECT,
		  ID3D12GraphicsCommandList2_GetType(l));
	U_RELEASE(l);
	/* Releasing the recording list frees the allocator. */
	EXPECT_EQ(S_OK, ID3D12CommandAllocator_Reset(a));
	U_RELEASE(a);
	U_RELEASE(b);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
