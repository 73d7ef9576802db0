// SPDX-License-Identifier: GPL-2.0
/*
 * Two ordinary D3D12 programs of one user (issue 39, item 1). Program A
 * queues work behind a queue Wait that nothing signals yet, as much as
 * the driver lets one device hold (its per-file bound of held work, a
 * quarter of max_user_jobs here): past it E_OUTOFMEMORY, and its device
 * is not removed. Program B, next to it, submits frames without waiting
 * until it meets the user's bound: its calls wait in the driver for its
 * own armed work and never fail (before uapi 1.9 the first one at the
 * bound failed, as soon as any held job counted in it, and removed B's
 * device). Then A's gate opens and all its work runs. The module is
 * reloaded with max_user_jobs=64; skipped without D3DQ_MODULE.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"
#include "util/d3dq_test.h"

#define FRAMES	160

FIXTURE(nb) {
	bool reloaded;
};

FIXTURE_SETUP(nb)
{
	self->reloaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_jobs=64"));
	self->reloaded = true;
}

FIXTURE_TEARDOWN(nb)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

/* What program A tells B: how many Signals it queued, and the answer. */
struct a_report {
	int held;
	HRESULT hr;
};

/* Program A: held work up to its bound, then its gate when told. */
static int program_a(int to_b, int from_b)
{
	ID3D12Fence *gate, *done;
	struct a_report r = { 0, S_OK };
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	char c;

	dev = u_device();
	if (!dev)
		return 10;
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	gate = u_fence(dev, 0);
	done = u_fence(dev, 0);
	if (!q || !gate || !done ||
	    ID3D12CommandQueue_Wait(q, gate, 1) != S_OK)
		return 11;
	while (r.held < 1000) {
		r.hr = ID3D12CommandQueue_Signal(q, done, r.held + 1);
		if (r.hr != S_OK)
			break;
		r.held++;
	}
	if (write(to_b, &r, sizeof(r)) != sizeof(r) ||
	    read(from_b, &c, 1) != 1)
		return 12;
	if (ID3D12Device1_GetDeviceRemovedReason(dev) != S_OK)
		return 13;
	if (ID3D12Fence_Signal(gate, 1) != S_OK ||
	    u_wait(done, (UINT64)r.held) != S_OK)
		return 14;
	U_RELEASE(done);
	U_RELEASE(gate);
	U_RELEASE(q);
	ID3D12Device1_Release(dev);
	return 0;
}

TEST_F_TIMEOUT(nb, held_neighbour_does_not_fail_frames, 120)
{
	ID3D12GraphicsCommandList2 *list;
	ID3D12CommandAllocator *alloc;
	int to_b[2], from_b[2], status;
	struct a_report r;
	ID3D12CommandQueue *q;
	ID3D12Resource *buf;
	ID3D12Device1 *dev;
	ID3D12Fence *fence;
	HRESULT hr = S_OK;
	uint32_t *map;
	pid_t pid;
	int f;

	ASSERT_EQ(0, pipe(to_b));
	ASSERT_EQ(0, pipe(from_b));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_b[0]);
		close(from_b[1]);
		_exit(program_a(to_b[1], from_b[0]));
	}
	close(to_b[1]);
	close(from_b[0]);
	ASSERT_EQ(sizeof(r), read(to_b[0], &r, sizeof(r)));
	TH_LOG("program A: %d Signals held, then %#x", r.held, HR(r.hr));
	/* A quarter of max_user_jobs, the Wait included. */
	EXPECT_GE(16, r.held);
	EXPECT_LT(8, r.held);
	EXPECT_EQ(HR(E_OUTOFMEMORY), HR(r.hr));

	/* Program B: frames without waiting, past the user's bound. */
	dev = u_device();
	ASSERT_NE(NULL, dev);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	fence = u_fence(dev, 0);
	buf = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 4 * FRAMES);
	ASSERT_TRUE(q && fence && buf);
	map = u_map(buf);
	ASSERT_NE(NULL, map);
	ASSERT_TRUE(u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc,
			   &list));
	for (f = 1; f <= FRAMES && hr == S_OK; f++) {
		u_write32(list, buf, 4 * (f - 1), f);
		hr = u_execute(q, list);
		if (hr == S_OK)
			hr = ID3D12CommandQueue_Signal(q, fence, f);
		if (hr == S_OK)
			hr = ID3D12GraphicsCommandList2_Reset(list, alloc, NULL);
	}
	EXPECT_EQ(S_OK, HR(hr)) TH_LOG("frame %d", f - 1);
	EXPECT_EQ(S_OK, HR(u_wait(fence, FRAMES)));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));
	EXPECT_EQ(FRAMES, map[FRAMES - 1]);

	/* A's gate opens: all its work runs, its device fine. */
	ASSERT_EQ(1, write(from_b[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	U_RELEASE(list);
	U_RELEASE(alloc);
	U_RELEASE(buf);
	U_RELEASE(fence);
	U_RELEASE(q);
	ID3D12Device1_Release(dev);
	close(to_b[0]);
	close(from_b[1]);
}

TEST_HARNESS_MAIN
