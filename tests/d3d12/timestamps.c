// SPDX-License-Identifier: GPL-2.0
/*
 * Timestamps: EndQuery into a query heap, ResolveQueryData into a
 * readback buffer, on direct and copy queues; checked for order against
 * each other and against GetClockCalibration readings taken before and
 * after (order, never durations). d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#define N 6

static ID3D12QueryHeap *heap(ID3D12Device1 *dev, D3D12_QUERY_HEAP_TYPE type,
			     UINT count)
{
	D3D12_QUERY_HEAP_DESC desc = { .Type = type, .Count = count };
	ID3D12QueryHeap *h = NULL;

	if (FAILED(ID3D12Device1_CreateQueryHeap(dev, &desc,
						 &IID_ID3D12QueryHeap,
						 (void **)&h)))
		return NULL;
	return h;
}

static void run(struct __test_metadata *_metadata, D3D12_COMMAND_LIST_TYPE type,
		D3D12_QUERY_HEAP_TYPE heap_type)
{
	ID3D12Resource *rb, *src, *dst;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
	UINT64 hz, gpu0, cpu0, gpu1, cpu1;
	volatile UINT64 *ts;
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12QueryHeap *h;
	ID3D12Fence *f;
	struct timespec now;
	int i;

	dev = u_device();
	if (!dev)
		SKIP(return, "no d3dq device");
	q = u_queue(dev, type);
	f = u_fence(dev, 0);
	h = heap(dev, heap_type, N);
	rb = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 8 * (N + 2));
	src = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, 1 << 20);
	dst = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, 1 << 20);
	ASSERT_TRUE(q && f && h && rb && src && dst);
	ts = u_map(rb);
	ASSERT_NE(NULL, ts);
	ASSERT_TRUE(u_list(dev, type, &alloc, &l));

	ASSERT_EQ(S_OK, ID3D12CommandQueue_GetTimestampFrequency(q, &hz));
	EXPECT_EQ(1000000000ull, hz);
	ASSERT_EQ(S_OK, ID3D12CommandQueue_GetClockCalibration(q, &gpu0,
							       &cpu0));
	/* The CPU side is CLOCK_MONOTONIC in nanoseconds. */
	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC, &now));
	EXPECT_LE(cpu0, (UINT64)now.tv_sec * 1000000000ull + now.tv_nsec);

	for (i = 0; i < N; i++) {
		ID3D12GraphicsCommandList2_EndQuery(l, h,
						    D3D12_QUERY_TYPE_TIMESTAMP,
						    i);
		ID3D12GraphicsCommandList2_CopyResource(l, dst, src);
	}
	/* Resolve the middle four first, then the first two after them. */
	ID3D12GraphicsCommandList2_ResolveQueryData(l, h,
						    D3D12_QUERY_TYPE_TIMESTAMP,
						    2, N - 2, rb, 16);
	ID3D12GraphicsCommandList2_ResolveQueryData(l, h,
						    D3D12_QUERY_TYPE_TIMESTAMP,
						    0, 2, rb, 0);
	ASSERT_EQ(S_OK, u_execute(q, l));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 1));
	ASSERT_EQ(S_OK, u_wait(f, 1));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_GetClockCalibration(q, &gpu1,
							       &cpu1));

	EXPECT_LE(gpu0, ts[0]);
	for (i = 1; i < N; i++)
		EXPECT_LE(ts[i - 1], ts[i]) TH_LOG("timestamp %d", i);
	EXPECT_GE(gpu1, ts[N - 1]);
	EXPECT_LE(cpu0, cpu1);
	/* Past the resolved range nothing was written. */
	EXPECT_EQ(0, ts[N]);

	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(dst);
	U_RELEASE(src);
	U_RELEASE(rb);
	U_RELEASE(h);
	U_RELEASE(f);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST(direct_queue)
{
	run(_metadata, D3D12_COMMAND_LIST_TYPE_DIRECT,
	    D3D12_QUERY_HEAP_TYPE_TIMESTAMP);
}

TEST(compute_queue)
{
	run(_metadata, D3D12_COMMAND_LIST_TYPE_COMPUTE,
	    D3D12_QUERY_HEAP_TYPE_TIMESTAMP);
}

TEST(copy_queue)
{
	run(_metadata, D3D12_COMMAND_LIST_TYPE_COPY,
	    D3D12_QUERY_HEAP_TYPE_COPY_QUEUE_TIMESTAMP);
}

TEST(query_errors)
{
	D3D12_QUERY_HEAP_DESC desc = { .Type = D3D12_QUERY_HEAP_TYPE_OCCLUSION,
				       .Count = 1 };
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
	ID3D12QueryHeap *h, *copy_heap, *x = (void *)1;
	ID3D12Resource *rb;
	ID3D12Device1 *dev = u_device();

	if (!dev)
		SKIP(return, "no d3dq device");
	EXPECT_EQ(E_NOTIMPL, ID3D12Device1_CreateQueryHeap(
			dev, &desc, &IID_ID3D12QueryHeap, (void **)&x));
	EXPECT_EQ(NULL, x);
	desc.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
	desc.Count = 0;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateQueryHeap(
			dev, &desc, &IID_ID3D12QueryHeap, (void **)&x));
	desc.Count = 2;
	/* A NULL ppvHeap only checks the description. */
	EXPECT_EQ(S_FALSE, ID3D12Device1_CreateQueryHeap(
			dev, &desc, &IID_ID3D12QueryHeap, NULL));
	h = heap(dev, D3D12_QUERY_HEAP_TYPE_TIMESTAMP, 2);
	copy_heap = heap(dev, D3D12_QUERY_HEAP_TYPE_COPY_QUEUE_TIMESTAMP, 2);
	rb = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 64);
	ASSERT_TRUE(h && copy_heap && rb);
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc, &l));

	/* Index past the heap. */
	ID3D12GraphicsCommandList2_EndQuery(l, h, D3D12_QUERY_TYPE_TIMESTAMP,
					    2);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	/* Timestamps have no Begin. */
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_BeginQuery(l, h, D3D12_QUERY_TYPE_TIMESTAMP,
					      0);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	/* A direct list takes TIMESTAMP heaps, not the copy queue's. */
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_EndQuery(l, copy_heap,
					    D3D12_QUERY_TYPE_TIMESTAMP, 0);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	/* Resolve offsets are multiples of 8, ranges inside the heap. */
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_ResolveQueryData(l, h,
			D3D12_QUERY_TYPE_TIMESTAMP, 0, 2, rb, 4);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_ResolveQueryData(l, h,
			D3D12_QUERY_TYPE_TIMESTAMP, 1, 2, rb, 0);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	/* Other query types do not exist here. */
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_EndQuery(l, h, D3D12_QUERY_TYPE_OCCLUSION,
					    0);
	EXPECT_EQ(E_NOTIMPL, ID3D12GraphicsCommandList2_Close(l));

	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(rb);
	U_RELEASE(copy_heap);
	U_RELEASE(h);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
