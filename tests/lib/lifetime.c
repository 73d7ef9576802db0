// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 39, item 4: objects outlive the calls in progress on them. A
 * thread blocked in a wait holds its fences, and they hold their device:
 * destroying the fences (R14 releases the thread) and closing the device
 * while the thread is still in the call leaves the descriptor open and
 * the memory there until the thread is done with them.
 *
 * Each case holds the woken thread still in a signal handler while the
 * test closes the device and opens another one, which would get the
 * closed descriptor's number (and, often, the freed memory): the
 * library once went back into the kernel wait on that descriptor, now
 * the other device's, then destroyed its fences' handles there, or
 * crashed (ALL waits in the first round: the woken thread's last
 * reference came after the close freed the device).
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
#include "util/util.h"

#define ALL D3DQ_MULTIPLE_FENCE_WAIT_ALL
#define ANY D3DQ_MULTIPLE_FENCE_WAIT_ANY

struct waiter {
	struct d3dq_device *dev;
	struct d3dq_fence *fs[3];
	uint64_t v[3];
	uint32_t flags;
	bool single;		/* d3dq_fence_wait() of fs[0] */
	_Atomic pid_t tid;
	_Atomic int ret;
	int done;		/* an eventfd, set when the call returned */
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t one = 1;
	int ret;

	atomic_store(&w->tid, task_self());
	if (w->single)
		ret = d3dq_fence_wait(w->fs[0], w->v[0], D3DQ_TIMEOUT_INFINITE);
	else
		ret = d3dq_device_set_event_on_multiple_fence_completion(
			w->dev, w->fs, w->v, 3, w->flags, -1);
	atomic_store(&w->ret, ret);
	if (write(w->done, &one, 8) != 8)
		atomic_store(&w->ret, -EIO);
	return NULL;
}

FIXTURE(life) {
	struct waiter w;
	pthread_t t;
	bool started;
};

FIXTURE_VARIANT(life) {
	uint32_t flags;
	bool single;
	bool shared;
	bool destroy_first;	/* the program destroys the fences first */
};

FIXTURE_VARIANT_ADD(life, all_local) {
	.flags = ALL,
};

FIXTURE_VARIANT_ADD(life, all_local_destroyed) {
	.flags = ALL, .destroy_first = true,
};

FIXTURE_VARIANT_ADD(life, all_shared) {
	.flags = ALL, .shared = true,
};

FIXTURE_VARIANT_ADD(life, all_shared_destroyed) {
	.flags = ALL, .shared = true, .destroy_first = true,
};

FIXTURE_VARIANT_ADD(life, any_local_destroyed) {
	.flags = ANY, .destroy_first = true,
};

FIXTURE_VARIANT_ADD(life, any_shared) {
	.flags = ANY, .shared = true,
};

FIXTURE_VARIANT_ADD(life, single_local) {
	.single = true,
};

FIXTURE_VARIANT_ADD(life, single_shared_destroyed) {
	.single = true, .shared = true, .destroy_first = true,
};

FIXTURE_SETUP(life)
{
	struct waiter *w = &self->w;
	int i;

	w->dev = util_open();
	if (!w->dev)
		SKIP(return, "no d3dq device");
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, d3dq_fence_create(w->dev, 0, variant->shared ?
					       D3DQ_FENCE_FLAG_SHARED : 0,
					       &w->fs[i]));
		w->v[i] = 10;
	}
	w->flags = variant->flags;
	w->single = variant->single;
	w->done = util_eventfd();
	ASSERT_LE(0, w->done);
	atomic_store(&w->ret, 1);
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

/*
 * The thread blocks in its wait; it is held still in the handler; the
 * device is closed (after its fences are destroyed, or with them); a
 * new device gets three fences of its own; the thread goes on.
 */
TEST_F_TIMEOUT(life, close_under_a_blocked_wait, 60)
{
	struct waiter *w = &self->w;
	struct d3dq_device *other;
	struct d3dq_fence *of[3];
	int i, fds;

	ASSERT_EQ(1, task_render_fds());
	ASSERT_EQ(0, pthread_create(&self->t, NULL, waiter_main, w));
	self->started = true;
	while (!atomic_load(&w->tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&w->tid)));
	ASSERT_TRUE(task_pause(self->t));

	if (variant->destroy_first)
		for (i = 0; i < 3; i++)
			d3dq_fence_destroy(w->fs[i]);
	d3dq_device_close(w->dev);
	/* The thread is still in the call: it keeps the descriptor. */
	fds = task_render_fds();
	other = util_open();
	ASSERT_NE(NULL, other);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, d3dq_fence_create(other, 0, 0, &of[i]));
	EXPECT_EQ(1, fds);

	task_resume();
	/* Released by the destruction (R14), on the closed device's file. */
	EXPECT_EQ(1, util_event_wait(w->done, 10000));
	if (atomic_load(&w->ret) == 1) {
		TH_LOG("the thread still waits: on the new device's fences?");
		for (i = 0; i < 3; i++)
			d3dq_fence_signal(of[i], 10);
		util_event_wait(w->done, 10000);
	}
	pthread_join(self->t, NULL);
	self->started = false;
	EXPECT_EQ(0, atomic_load(&w->ret));
	/* The last reference closed it. */
	EXPECT_EQ(1, task_render_fds());

	/* The new device's fences are whole. */
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, d3dq_fence_get_completed_value(of[i]));
		EXPECT_EQ(0, d3dq_fence_signal(of[i], 5));
		EXPECT_EQ(5, d3dq_fence_get_completed_value(of[i]));
		EXPECT_EQ(0, d3dq_fence_wait(of[i], 5, 0));
	}
	EXPECT_EQ(0, d3dq_device_removed_reason(other));
	d3dq_device_close(other);
}

TEST_HARNESS_MAIN
