// SPDX-License-Identifier: GPL-2.0
/*
 * ExecuteCommandLists with a list whose type is not the queue's (issue
 * 39): on Windows the call is invalid (its debug layer reports it). Here
 * it is refused whole: nothing of it runs, not even the lists of the
 * right type, and the device is not removed. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include "kselftest_harness.h"
#include "util/d3d12_util.h"

FIXTURE(lt) {
	ID3D12Device1 *dev;
	ID3D12CommandQueue *direct, *copy;
	ID3D12Fence *f;
	ID3D12Resource *rb;
	volatile UINT32 *map;
	ID3D12CommandAllocator *da, *ca;
	ID3D12GraphicsCommandList2 *dl, *cl;
};

FIXTURE_SETUP(lt)
{
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->direct = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	self->copy = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_COPY);
	self->f = u_fence(self->dev, 0);
	self->rb = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK, 4096);
	ASSERT_TRUE(self->direct && self->copy && self->f && self->rb);
	self->map = u_map(self->rb);
	ASSERT_NE(NULL, self->map);
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
			   &self->da, &self->dl));
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_COPY,
			   &self->ca, &self->cl));
	u_write32(self->dl, self->rb, 0, 0xd1);
	u_write32(self->cl, self->rb, 4, 0xc0);
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->dl));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->cl));
}

FIXTURE_TEARDOWN(lt)
{
	U_RELEASE(self->cl);
	U_RELEASE(self->ca);
	U_RELEASE(self->dl);
	U_RELEASE(self->da);
	U_RELEASE(self->rb);
	U_RELEASE(self->f);
	U_RELEASE(self->copy);
	U_RELEASE(self->direct);
	U_RELEASE(self->dev);
}

TEST_F(lt, a_list_of_another_type_is_refused)
{
	ID3D12CommandList *one[] = { (ID3D12CommandList *)self->dl };
	ID3D12CommandList *mixed[] = { (ID3D12CommandList *)self->cl,
				       (ID3D12CommandList *)self->dl };

	ID3D12CommandQueue_ExecuteCommandLists(self->copy, 1, one);
	ID3D12CommandQueue_ExecuteCommandLists(self->copy, 2, mixed);
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->copy, self->f, 1));
	ASSERT_EQ(S_OK, u_wait(self->f, 1));
	EXPECT_EQ(0, self->map[0]);
	EXPECT_EQ(0, self->map[1]);
	EXPECT_EQ(HR(S_OK),
		  HR(ID3D12Device1_GetDeviceRemovedReason(self->dev)));

	/* Each on a queue of its type runs. */
	ID3D12CommandQueue_ExecuteCommandLists(self->copy, 1, mixed);
	ID3D12CommandQueue_ExecuteCommandLists(self->direct, 1, one);
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->copy, self->f, 2));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->direct, self->f, 3));
	ASSERT_EQ(S_OK, u_wait(self->f, 3));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(self->copy, self->f, 4));
	ASSERT_EQ(S_OK, u_wait(self->f, 4));
	EXPECT_EQ(0xd1, self->map[0]);
	EXPECT_EQ(0xc0, self->map[1]);
	EXPECT_EQ(HR(S_OK),
		  HR(ID3D12Device1_GetDeviceRemovedReason(self->dev)));
}

TEST_HARNESS_MAIN
