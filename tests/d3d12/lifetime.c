// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 39, item 4, through d3d12.h: objects are free-threaded, and a
 * call in progress outlives the last Release of its objects. A thread
 * blocked in SetEventOnCompletion(NULL) or SetEventOnMultipleFenceCompletion
 * (ALL or ANY, NULL) is released when its fences are (R14), also when
 * the program releases the device too meanwhile; the thread, held still
 * in a signal handler meanwhile, then finds its objects where they were,
 * while the program already made a new device and fences.
 *
 * The layer once read the released fence and device after the wait, and
 * libd3dq went back into the kernel wait on the closed descriptor, by
 * then the new device's: the thread waited for the new device's fences,
 * then destroyed them, or the process crashed.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3d12_util.h"

struct waiter {
	ID3D12Device1 *dev;
	ID3D12Fence *f[3];
	UINT64 v[3];
	int mode;		/* 0: one fence; else 1 + the flags */
	_Atomic pid_t tid;
	_Atomic HRESULT hr;
	int done;		/* an eventfd, set when the call returned */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t one = 1;
	HRESULT hr;

	atomic_store(&w->tid, task_self());
	if (!w->mode)
		hr = ID3D12Fence_SetEventOnCompletion(w->f[0], w->v[0], NULL);
	else
		hr = ID3D12Device1_SetEventOnMultipleFenceCompletion(
			w->dev, w->f, w->v, 3, w->mode - 1, NULL);
	atomic_store(&w->hr, hr);
	if (write(w->done, &one, 8) != 8)
		atomic_store(&w->hr, E_FAIL);
	return NULL;
}

FIXTURE(life) {
	struct waiter w;
	pthread_t t;
	bool started;
};

FIXTURE_VARIANT(life) {
	int mode;
};

FIXTURE_VARIANT_ADD(life, one_fence) {
	.mode = 0,
};

FIXTURE_VARIANT_ADD(life, all) {
	.mode = 1 + D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL,
};

FIXTURE_VARIANT_ADD(life, any) {
	.mode = 1 + D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY,
};

FIXTURE_SETUP(life)
{
	struct waiter *w = &self->w;
	int i;

	w->done = -1;
	w->dev = u_device();
	if (!w->dev)
		SKIP(return, "no d3dq device");
	for (i = 0; i < 3; i++) {
		w->f[i] = u_fence(w->dev, 0);
		ASSERT_NE(NULL, w->f[i]);
		w->v[i] = 10;
	}
	w->mode = variant->mode;
	w->done = u_event();
	ASSERT_LE(0, w->done);
	atomic_store(&w->hr, S_FALSE);
}

FIXTURE_TEARDOWN(life)
{
	if (self->started) {
		task_resume();
		pthread_join(self->t, NULL);
	}
	if (self->w.done >= 0)
		close(self->w.done);
}

TEST_F_TIMEOUT(life, release_under_a_blocked_wait, 60)
{
	struct waiter *w = &self->w;
	ID3D12Device1 *dev;
	ID3D12Fence *of[3];
	int i;

	ASSERT_EQ(0, pthread_create(&self->t, NULL, waiter_main, w));
	self->started = true;
	while (!atomic_load(&w->tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&w->tid)));
	ASSERT_TRUE(task_pause(self->t));

	/* Every reference the program has: the fences, then the device. */
	for (i = 0; i < 3; i++)
		U_RELEASE(w->f[i]);
	ID3D12Device1_Release(w->dev);
	/* The program goes on with a device and fences. */
	dev = u_device();
	ASSERT_NE(NULL, dev);
	for (i = 0; i < 3; i++) {
		of[i] = u_fence(dev, 0);
		ASSERT_NE(NULL, of[i]);
	}

	task_resume();
	/* Released by the fences' release (R14). */
	EXPECT_EQ(1, u_event_wait(w->done, 10000));
	if (atomic_load(&w->hr) == S_FALSE) {
		TH_LOG("the thread still waits: on the new fences?");
		for (i = 0; i < 3; i++)
			ID3D12Fence_Signal(of[i], 10);
		u_event_wait(w->done, 10000);
	}
	pthread_join(self->t, NULL);
	self->started = false;
	EXPECT_EQ(S_OK, atomic_load(&w->hr));

	/* The new fences are whole, the device is not removed. */
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(of[i]));
		EXPECT_EQ(S_OK, ID3D12Fence_Signal(of[i], 5));
		EXPECT_EQ(5, ID3D12Fence_GetCompletedValue(of[i]));
		EXPECT_EQ(S_OK, u_wait(of[i], 5));
		U_RELEASE(of[i]);
	}
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
