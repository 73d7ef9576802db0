// SPDX-License-Identifier: GPL-2.0
/*
 * The fences of d3d12.h next to another driver's work (issue 41,
 * <d3dq/d3d12_d3dq.h> since 0.4): d3d12_d3dq_fence_signal_on_sync_file()
 * sets a fence when a sync_file's work completes, as a queue Signal
 * would; d3d12_d3dq_fence_export_sync_file() hands out a sync_file for a
 * value, or DXGI_ERROR_WAS_STILL_DRAWING while nothing brings it. The
 * sync_files here come from this library's own fences, as another
 * driver's would (tests/kernel/fence_signal_on uses vgem).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#include <d3dq/d3d12_d3dq.h>

TEST(signal_on_and_export)
{
	ID3D12Fence *gate, *a, *b;
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	struct pollfd p;
	int sf = -1, efd;

	dev = u_device();
	if (!dev)
		SKIP(return, "no d3dq device");
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	gate = u_fence(dev, 0);
	a = u_fence(dev, 0);
	b = u_fence(dev, 0);
	ASSERT_TRUE(q && gate && a && b);

	/* Nothing brings 1 yet; a queue Signal held by a Wait does not. */
	EXPECT_EQ(HR(DXGI_ERROR_WAS_STILL_DRAWING),
		  HR(d3d12_d3dq_fence_export_sync_file(a, 1, &sf)));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(q, gate, 1));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, a, 1));
	EXPECT_EQ(HR(DXGI_ERROR_WAS_STILL_DRAWING),
		  HR(d3d12_d3dq_fence_export_sync_file(a, 1, &sf)));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(gate, 1));
	ASSERT_EQ(S_OK, HR(u_wait(a, 1)));

	/* Reached: a sync_file that has signalled; it sets b in the call. */
	ASSERT_EQ(S_OK, d3d12_d3dq_fence_export_sync_file(a, 1, &sf));
	p.fd = sf;
	p.events = POLLIN;
	EXPECT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(S_OK, d3d12_d3dq_fence_signal_on_sync_file(b, 5, sf));
	EXPECT_EQ(5, ID3D12Fence_GetCompletedValue(b));
	close(sf);

	/* Not a sync_file, or not a fence of this library. */
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(HR(E_INVALIDARG),
		  HR(d3d12_d3dq_fence_signal_on_sync_file(b, 6, efd)));
	EXPECT_EQ(HR(E_INVALIDARG),
		  HR(d3d12_d3dq_fence_signal_on_sync_file(NULL, 6, efd)));
	EXPECT_EQ(HR(E_INVALIDARG),
		  HR(d3d12_d3dq_fence_export_sync_file(b, 1, NULL)));
	close(efd);
	EXPECT_EQ(5, ID3D12Fence_GetCompletedValue(b));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));

	U_RELEASE(b);
	U_RELEASE(a);
	U_RELEASE(gate);
	U_RELEASE(q);
	ID3D12Device1_Release(dev);
}

TEST_HARNESS_MAIN
