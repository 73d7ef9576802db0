// SPDX-License-Identifier: GPL-2.0
/*
 * R6, R14 for waits the library already handed to the kernel: a queue
 * wait that became a kernel wait on another queue's pending signal is
 * released at once when a CPU signal reaches its value or its fence is
 * destroyed, not when that other queue's work completes. Threads blocked
 * on a shared fence are released at once by destruction and removal,
 * and do not poll meanwhile.
 *
 * Order is checked with engine timestamps: the released queue's work
 * runs before the long work of the other queue ends.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(rel) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(rel, 4096, 0, 0)

/*
 * Queue a: long work, a timestamp at 0, then signals f = 10. The work is
 * LONG_JOBS jobs of 1 s (each below the driver's job timeout) so that the
 * release has seconds of margin on a loaded TCG host.
 */
#define LONG_JOBS 3

static int long_signal(struct util_env *e, struct d3dq_fence *f)
{
	int ret = 0;

	for (int i = 0; i < LONG_JOBS && !ret; i++)
		ret = util_exec_delay(e->dev, e->a, 1000 * MS);

	if (!ret)
		ret = util_exec_timestamp(e->dev, e->a, e->buf, 0);
	if (!ret)
		ret = d3dq_queue_signal(e->a, f, 10);
	return ret;
}

/* Queue b, after its wait: a timestamp at 8, then done = 1. */
static int after_wait(struct util_env *e)
{
	int ret = util_exec_timestamp(e->dev, e->b, e->buf, 8);

	if (!ret)
		ret = d3dq_queue_signal(e->b, e->done, 1);
	return ret;
}

/* b's work ran before a's long work ended. */
static int check_order(struct __test_metadata *_metadata, struct util_env *e)
{
	EXPECT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	EXPECT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_NE(0, util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 0));
	return 0;
}

TEST_F(rel, cpu_signal_releases_kernel_wait)
{
	ASSERT_EQ(0, long_signal(&self->e, self->e.f));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, after_wait(&self->e));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	check_order(_metadata, &self->e);
}

/* Sticky (R6): the value was reached, then rewound at once. */
TEST_F(rel, rewound_value_still_releases)
{
	ASSERT_EQ(0, long_signal(&self->e, self->e.f));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, after_wait(&self->e));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 12));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	check_order(_metadata, &self->e);
}

TEST_F(rel, destroy_releases_kernel_wait)
{
	struct d3dq_fence *f;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
	ASSERT_EQ(0, long_signal(&self->e, f));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 10));
	ASSERT_EQ(0, after_wait(&self->e));
	d3dq_fence_destroy(f);
	check_order(_metadata, &self->e);
}

/* A held wait becomes a kernel wait when its queue is flushed. */
TEST_F(rel, flushed_wait_released)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, after_wait(&self->e));
	ASSERT_EQ(0, long_signal(&self->e, self->e.f));
	/* b is held (by g) ... */
	ASSERT_LT(0, task_fdinfo_sum("d3dq-jobs-held"));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	/* ... then no longer: its wait for f is bound to a's signal. */
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-held", 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	check_order(_metadata, &self->e);
}

TEST_F(rel, shared_fence_wait_released)
{
	struct d3dq_fence *f;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &f));
	ASSERT_EQ(0, long_signal(&self->e, f));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 10));
	ASSERT_EQ(0, after_wait(&self->e));
	ASSERT_EQ(0, d3dq_fence_signal(f, 10));
	check_order(_metadata, &self->e);
	d3dq_fence_destroy(f);
}

struct blocked {
	struct d3dq_fence *f;
	_Atomic pid_t tid;
	int ret;
};

static void *block(void *arg)
{
	struct blocked *b = arg;

	atomic_store(&b->tid, (pid_t)syscall(SYS_gettid));
	b->ret = d3dq_fence_wait(b->f, 100, D3DQ_TIMEOUT_INFINITE);
	return NULL;
}

/* Voluntary context switches of thread @tid of this process. */
static long switches(pid_t tid)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * A thread blocked on a shared fence sleeps in one kernel wait (it does
 * not wake up to poll) and is released by @release at once.
 */
static void blocked_shared(struct __test_metadata *_metadata,
			   struct util_env *e, bool remove)
{
	struct blocked b = { 0 };
	long before, after;
	pthread_t t;

	ASSERT_EQ(0, d3dq_fence_create(e->dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &b.f));
	ASSERT_EQ(0, pthread_create(&t, NULL, block, &b));
	while (!atomic_load(&b.tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&b.tid)));
	before = switches(b.tid);
	util_sleep_ms(600);
	after = switches(b.tid);
	ASSERT_GE(before, 0);
	/* Polling in 50 ms slices would make about 12. */
	EXPECT_LE(after - before, 2);
	if (remove) {
		ASSERT_EQ(0, d3dq_device_remove(e->dev));
	} else {
		d3dq_fence_destroy(b.f);
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, b.ret);
	if (remove)
		d3dq_fence_destroy(b.f);
}

TEST_F(rel, blocked_on_shared_fence_destroyed)
{
	blocked_shared(_metadata, &self->e, false);
}

TEST_F(rel, blocked_on_shared_fence_removed)
{
	blocked_shared(_metadata, &self->e, true);
}

TEST_HARNESS_MAIN
