// SPDX-License-Identifier: GPL-2.0
/*
 * copy -> compute -> direct across three queues, each stage's fence
 * waited for by the next, submitted last stage first: the copy queue
 * uploads, the compute queue transforms (copies and patches), the direct
 * queue reads back; the CPU checks every word at the end. d3d12.h only.
 *
 * copy_compute_direct uses one fence per stage; one_fence_consumers_first
 * uses one fence for all three, queued consumers first: each stage's
 * Signal, held behind its Wait, is called before the Signal of the stage
 * it waits for and executes after it (R4), as on Windows.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#define WORDS 4096
#define SIZE (WORDS * 4)
#define ROUNDS 6

struct stage {
	ID3D12CommandQueue *q;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *list;
};

static const D3D12_COMMAND_LIST_TYPE types[3] = {
	D3D12_COMMAND_LIST_TYPE_COPY,
	D3D12_COMMAND_LIST_TYPE_COMPUTE,
	D3D12_COMMAND_LIST_TYPE_DIRECT,
};

static UINT32 expected(int round, int i)
{
	/* The compute stage reverses the halves and patches every 64th. */
	int src = i < WORDS / 2 ? i + WORDS / 2 : i - WORDS / 2;

	if (i % 64 == 0)
		return 0xc0000000u | (round << 16) | i;
	return (UINT32)(round * 0x01000193u) ^ src;
}

/* Three stages, their buffers, and the round's lists. */
FIXTURE(pipe) {
	ID3D12Device1 *dev;
	struct stage s[3];
	ID3D12Resource *upload, *a, *b, *rb;
	volatile UINT32 *out;
	UINT32 *in;
};

FIXTURE_SETUP(pipe)
{
	int i;

	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	for (i = 0; i < 3; i++) {
		self->s[i].q = u_queue(self->dev, types[i]);
		ASSERT_NE(NULL, self->s[i].q);
		ASSERT_TRUE(u_list(self->dev, types[i], &self->s[i].alloc,
				   &self->s[i].list));
		ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->s[i].list));
	}
	self->upload = u_buffer(self->dev, D3D12_HEAP_TYPE_UPLOAD, SIZE);
	self->a = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT, SIZE);
	self->b = u_buffer(self->dev, D3D12_HEAP_TYPE_DEFAULT, SIZE);
	self->rb = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK, SIZE);
	ASSERT_TRUE(self->upload && self->a && self->b && self->rb);
	self->in = u_map(self->upload);
	self->out = u_map(self->rb);
	ASSERT_TRUE(self->in && self->out);
}

FIXTURE_TEARDOWN(pipe)
{
	int i;

	if (!self->dev)
		return;
	for (i = 0; i < 3; i++) {
		U_RELEASE(self->s[i].list);
		U_RELEASE(self->s[i].alloc);
		U_RELEASE(self->s[i].q);
	}
	U_RELEASE(self->rb);
	U_RELEASE(self->b);
	U_RELEASE(self->a);
	U_RELEASE(self->upload);
	EXPECT_EQ(0, ID3D12Device1_Release(self->dev));
}

/*
 * Record round @r: direct copies b to readback (s[2]), compute swaps the
 * halves of a into b and patches every 64th word (s[1]), copy uploads the
 * round's data into a (s[0]). Each list is reset first; none is executed.
 */
static void record_round(struct __test_metadata *_metadata,
			 FIXTURE_DATA(pipe) *self, int r)
{
	struct stage *s = self->s;
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(S_OK, ID3D12CommandAllocator_Reset(s[i].alloc));
		ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(
				s[i].list, s[i].alloc, NULL));
	}
	ID3D12GraphicsCommandList2_CopyResource(s[2].list, self->rb, self->b);
	ID3D12GraphicsCommandList2_CopyBufferRegion(s[1].list, self->b, 0,
						   self->a, SIZE / 2, SIZE / 2);
	ID3D12GraphicsCommandList2_CopyBufferRegion(s[1].list, self->b,
						   SIZE / 2, self->a, 0,
						   SIZE / 2);
	for (i = 0; i < WORDS; i += 64)
		u_write32(s[1].list, self->b, i * 4,
			  0xc0000000u | (r << 16) | i);
	for (i = 0; i < WORDS; i++)
		self->in[i] = (UINT32)(r * 0x01000193u) ^ i;
	ID3D12GraphicsCommandList2_CopyBufferRegion(s[0].list, self->a, 0,
						   self->upload, 0, SIZE);
}

/* The readback of round @r went through every stage. */
static void check_round(struct __test_metadata *_metadata,
			FIXTURE_DATA(pipe) *self, int r)
{
	int i;

	for (i = 0; i < WORDS; i++)
		ASSERT_EQ(expected(r, i), self->out[i])
			TH_LOG("round %d word %d", r, i);
}

/* One fence per stage, each waited for by the next. */
TEST_F(pipe, copy_compute_direct)
{
	struct stage *s = self->s;
	ID3D12Fence *f[3];	/* f[i]: stage i is done */
	UINT64 n;
	int i, r;

	for (i = 0; i < 3; i++) {
		f[i] = u_fence(self->dev, 0);
		ASSERT_NE(NULL, f[i]);
	}
	for (r = 0; r < ROUNDS; r++) {
		n = (UINT64)r + 1;
		record_round(_metadata, self, r);
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(s[2].q, f[1], n));
		ASSERT_EQ(S_OK, u_execute(s[2].q, s[2].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[2].q, f[2], n));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(s[1].q, f[0], n));
		ASSERT_EQ(S_OK, u_execute(s[1].q, s[1].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[1].q, f[1], n));

		/* Nothing can have run: the data does not exist yet. */
		EXPECT_EQ(n - 1, ID3D12Fence_GetCompletedValue(f[1]));
		EXPECT_EQ(n - 1, ID3D12Fence_GetCompletedValue(f[2]));

		ASSERT_EQ(S_OK, u_execute(s[0].q, s[0].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[0].q, f[0], n));

		ASSERT_EQ(S_OK, u_wait(f[2], n));
		/* The stages the last one waited for are seen done (R17). */
		EXPECT_EQ(n, ID3D12Fence_GetCompletedValue(f[0]));
		EXPECT_EQ(n, ID3D12Fence_GetCompletedValue(f[1]));
		check_round(_metadata, self, r);
	}
	for (i = 0; i < 3; i++)
		U_RELEASE(f[i]);
}

/*
 * The pipeline on one fence, queued consumers first: direct waits for 2
 * and signals 3, compute waits for 1 and signals 2, copy signals 1. The
 * event for 3 fires and the data went through every stage.
 */
TEST_F(pipe, one_fence_consumers_first)
{
	struct stage *s = self->s;
	ID3D12Fence *f;
	int r, efd;

	f = u_fence(self->dev, 0);
	ASSERT_NE(NULL, f);
	efd = u_event();
	ASSERT_GE(efd, 0);
	for (r = 0; r < ROUNDS; r++) {
		UINT64 base = 3 * (UINT64)r;

		record_round(_metadata, self, r);
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(s[2].q, f, base + 2));
		ASSERT_EQ(S_OK, u_execute(s[2].q, s[2].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[2].q, f, base + 3));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(s[1].q, f, base + 1));
		ASSERT_EQ(S_OK, u_execute(s[1].q, s[1].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[1].q, f, base + 2));
		EXPECT_EQ(base, ID3D12Fence_GetCompletedValue(f));

		ASSERT_EQ(S_OK, u_execute(s[0].q, s[0].list));
		ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(s[0].q, f, base + 1));
		ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, base + 3,
								u_handle(efd)));
		ASSERT_NE(0, u_event_wait(efd, 20000))
			TH_LOG("round %d: fence stuck at %llu", r,
			       (unsigned long long)
			       ID3D12Fence_GetCompletedValue(f));
		EXPECT_EQ(base + 3, ID3D12Fence_GetCompletedValue(f));
		check_round(_metadata, self, r);
	}
	close(efd);
	U_RELEASE(f);
}

/* Copies with bad ranges or foreign resources fail the list. */
TEST(copy_errors)
{
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
	ID3D12Resource *x, *y;
	ID3D12Device1 *dev = u_device();

	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_COPY, &alloc, &l));
	x = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, 4096);
	y = u_buffer(dev, D3D12_HEAP_TYPE_DEFAULT, 8192);
	ASSERT_TRUE(x && y);

	ID3D12GraphicsCommandList2_CopyBufferRegion(l, x, 4000, y, 0, 100);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	/* CopyResource needs two buffers of one size. */
	ID3D12GraphicsCommandList2_CopyResource(l, x, y);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	ID3D12GraphicsCommandList2_CopyBufferRegion(l, x, 0, NULL, 0, 4);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	/* Immediate writes: 4-byte aligned, inside a buffer. */
	u_write32(l, x, 2, 1);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	u_write32(l, x, 4096, 1);
	EXPECT_EQ(E_INVALIDARG, ID3D12GraphicsCommandList2_Close(l));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(l, alloc, NULL));
	u_write32(l, x, 4092, 1);
	ID3D12GraphicsCommandList2_CopyBufferRegion(l, y, 4096, x, 0, 4096);
	EXPECT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(l));
	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(x);
	U_RELEASE(y);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
