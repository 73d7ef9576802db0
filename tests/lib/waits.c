// SPDX-License-Identifier: GPL-2.0
/*
 * R5: queue waits return at once and hold back every later operation of
 * the queue until satisfied, by the CPU or by another queue, with the
 * signal submitted after the wait (wait before signal) or before it; a
 * queue that only ever waits does not fill up with satisfied waits.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(w) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(w, 4096, 0, 0)

/* Everything behind the wait stays back until the CPU signals. */
TEST_F(w, cpu_signal_after_wait)
{
	struct d3dq_fence *g;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, g, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 20));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 8, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	/* Held by the kernel, nothing in flight: none of it ran. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(g));

	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 9));	/* not enough */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));

	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 15));
	ASSERT_EQ(0, d3dq_fence_wait(g, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	/* What 15 released ran; the rest is held again, for 20. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.done));

	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 20));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(2, util_read64(self->e.buf, 8));
	d3dq_fence_destroy(g);
}

/* Queue b waits first; queue a signals later, after long work. */
TEST_F(w, other_queue_signals_later)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 1));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));

	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_NE(0, util_read64(self->e.buf, 0));
	/* b's work ran after a's work, on the engine's clock. */
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
}

/* The signal is already submitted when b waits: the direct path. */
TEST_F(w, other_queue_signal_submitted_first)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 4));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 3));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_NE(0, util_read64(self->e.buf, 0));
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
}

/* A wait already satisfied costs nothing and blocks nothing. */
TEST_F(w, already_satisfied)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 100));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 100));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 5));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(5, util_read64(self->e.buf, 0));
}

/*
 * A queue that only waits, each wait satisfied by the CPU after it was
 * made, more times than a queue may hold jobs (max_pending_jobs, 1,024
 * by default; 1,200 times, within 120 s on the debug kernel): the
 * satisfied waits take no room, no call fails, and the queue still runs
 * work after them.
 */
TEST_F_TIMEOUT(w, queue_that_only_waits, 120)
{
	uint64_t v;

	for (v = 1; v <= 1200; v++) {
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, v));
		ASSERT_EQ(0, d3dq_fence_signal(self->e.f, v));
	}
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, v));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf, 0, 7));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, v));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(7, util_read64(self->e.buf, 0));
}

/* Two queues waiting on each other's later signals: no deadlock. */
TEST_F(w, crossed_waits)
{
	struct d3dq_fence *g;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, g, 2));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, g, 1));	/* held by b */
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	/* b waits for g >= 1 which a signals after f; f comes from b... */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	d3dq_fence_destroy(g);
}

TEST_HARNESS_MAIN
