// SPDX-License-Identifier: GPL-2.0
/*
 * Queue waits that rely on another queue's pending signal (issue 15, and
 * since issue 25 the kernel's decision): each is released early on its
 * own by a CPU signal of its value (R6), and work after it on the queue
 * runs before the other queue's work; one whose value was reached, or
 * whose fence was destroyed (R14), holds nothing. Order is checked with
 * engine timestamps, as in release.c.
 *
 * (Until issue 25 the library carried such waits in the queue's next job
 * and this file also counted jobs: the kernel now decides each wait at
 * its submit, which a wait carried later would miss.)
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(fold) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(fold, 4096, 0, 0)

/* Queue @q: long work (@ms), a timestamp at @ts, then signals @f = 10. */
static int long_signal(struct util_env *e, struct d3dq_queue *q,
		       struct d3dq_fence *f, unsigned int ms, uint64_t ts)
{
	int ret = util_exec_delay(e->dev, q, ms * MS);

	if (!ret)
		ret = util_exec_timestamp(e->dev, q, e->buf, ts);
	if (!ret)
		ret = d3dq_queue_signal(q, f, 10);
	return ret;
}

/* Queue b, after its waits: a timestamp at 8, then done = 1. */
static int after_wait(struct util_env *e)
{
	int ret = util_exec_timestamp(e->dev, e->b, e->buf, 8);

	if (!ret)
		ret = d3dq_queue_signal(e->b, e->done, 1);
	return ret;
}

/* A wait released early: the work after it runs early. */
TEST_F(fold, wait_released_early)
{
	struct util_env *e = &self->e;

	ASSERT_EQ(0, long_signal(e, e->a, e->f, 1000, 0));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 10));
	ASSERT_EQ(0, after_wait(e));
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_NE(0, util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 0));
}

/*
 * Two waits are released one by one: releasing the first leaves the
 * queue waiting for the second (the other queue's signal), which ends
 * before the first queue's work does.
 */
TEST_F(fold, waits_released_alone)
{
	struct util_env *e = &self->e;
	struct d3dq_queue *c = util_queue(e->dev);

	ASSERT_NE(NULL, c);
	/*
	 * a: 1.5 s then ts 0, f = 10; c: 0.8 s then ts 16, g = 10. c's
	 * work must still run when the jobs are counted below: 0.3 s was
	 * not enough on the debug kernel under load (one job fewer). Each
	 * stays below the 2 s job timeout.
	 */
	ASSERT_EQ(0, long_signal(e, e->a, e->f, 1500, 0));
	ASSERT_EQ(0, long_signal(e, c, e->g, 800, 16));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 10));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->g, 10));
	ASSERT_EQ(0, after_wait(e));

	/* f's wait released: b still waits for c's point (g's wait). */
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(e->dev, c));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_NE(0, util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 16), util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 0));
	d3dq_queue_destroy(c);
}

/* The same, released in the other order: each index names its wait. */
TEST_F(fold, second_wait_released_alone)
{
	struct util_env *e = &self->e;
	struct d3dq_queue *c = util_queue(e->dev);

	ASSERT_NE(NULL, c);
	/* a: 0.3 s then ts 0, f = 10; c: 1.5 s then ts 16, g = 10. */
	ASSERT_EQ(0, long_signal(e, e->a, e->f, 300, 0));
	ASSERT_EQ(0, long_signal(e, c, e->g, 1500, 16));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 10));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->g, 10));
	ASSERT_EQ(0, after_wait(e));

	ASSERT_EQ(0, d3dq_fence_signal(e->g, 10));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(e->dev, c));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_NE(0, util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 0), util_read64(e->buf, 8));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 16));
	d3dq_queue_destroy(c);
}

/*
 * A wait followed by a signal and nothing else: whoever sees the
 * signal's value sees the waited value (R17).
 */
TEST_F(fold, wait_then_signal_only)
{
	struct util_env *e = &self->e;

	ASSERT_EQ(0, long_signal(e, e->a, e->f, 1500, 0));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 10));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(e->f));
	EXPECT_NE(0, util_read64(e->buf, 0));
}

/*
 * A wait whose value was reached before the next job: the job does not
 * carry it (nothing to wait for), and runs before the other queue's work.
 */
TEST_F(fold, reached_wait_holds_nothing)
{
	struct util_env *e = &self->e;

	ASSERT_EQ(0, long_signal(e, e->a, e->f, 1000, 0));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 10));
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 10));
	ASSERT_EQ(0, after_wait(e));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 0));
}

/* Waits on a destroyed fence are over: the next job runs. */
TEST_F(fold, fence_destroyed_before_next_job)
{
	struct util_env *e = &self->e;
	struct d3dq_fence *h;

	ASSERT_EQ(0, d3dq_fence_create(e->dev, 0, 0, &h));
	ASSERT_EQ(0, long_signal(e, e->a, h, 1000, 0));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, h, 10));
	d3dq_fence_destroy(h);
	ASSERT_EQ(0, after_wait(e));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->a));
	EXPECT_LT(util_read64(e->buf, 8), util_read64(e->buf, 0));
}

TEST_HARNESS_MAIN
