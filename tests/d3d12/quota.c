// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's per-user bounds seen through d3d12.h: with the module
 * reloaded with max_user_fence_nodes=4 (fence values one user may wait
 * for at once), queue Waits, blocking waits and events over the bound
 * are E_OUTOFMEMORY (the driver's -EDQUOT, which was E_FAIL), the device
 * is not removed, and the program goes on once the waits are released.
 * Skipped without D3DQ_MODULE (the module cannot be reloaded).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"
#include "util/d3dq_test.h"

#define NODES 4

FIXTURE(quota) {
	bool reloaded;
};

FIXTURE_SETUP(quota)
{
	self->reloaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_fence_nodes=4"));
	self->reloaded = true;
}

FIXTURE_TEARDOWN(quota)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

TEST_F(quota, fence_nodes)
{
	ID3D12Fence *fs[2], *f, *g;
	UINT64 values[2] = { 100, 100 };
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	HRESULT hr = S_OK;
	int ev, i;

	dev = u_device();
	ASSERT_NE(NULL, dev);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(dev, 0);
	g = u_fence(dev, 0);
	ev = u_event();
	ASSERT_TRUE(q && f && g && ev >= 0);

	/* Each held Wait holds one value until its work is freed. */
	for (i = 1; i <= 4 * NODES && hr == S_OK; i++)
		hr = ID3D12CommandQueue_Wait(q, f, i);
	TH_LOG("Wait %d: %#x", i - 1, HR(hr));
	EXPECT_EQ(NODES + 1, i - 1);
	EXPECT_EQ(HR(E_OUTOFMEMORY), HR(hr));
	/* A blocking wait, one fence and two, and an event need one more. */
	EXPECT_EQ(HR(E_OUTOFMEMORY), HR(u_wait(f, 100)));
	fs[0] = f;
	fs[1] = g;
	EXPECT_EQ(HR(E_OUTOFMEMORY),
		  HR(ID3D12Device1_SetEventOnMultipleFenceCompletion(
			  dev, fs, values, 2,
			  D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, NULL)));
	EXPECT_EQ(HR(E_OUTOFMEMORY),
		  HR(ID3D12Fence_SetEventOnCompletion(f, 100, u_handle(ev))));
	EXPECT_EQ(0, u_event_take(ev));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));

	/*
	 * Released: the queue runs on, and its work is not lost. (Read, not
	 * waited for: the released work gives its values back once freed.)
	 */
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, g, 1));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(f, NODES));
	for (i = 0; i < 10000 && ID3D12Fence_GetCompletedValue(g) != 1; i++)
		usleep(1000);
	EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(g));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));

	close(ev);
	U_RELEASE(g);
	U_RELEASE(f);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
