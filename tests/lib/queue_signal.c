// SPDX-License-Identifier: GPL-2.0
/*
 * R3, R4, R9: queue signals complete after the work before them, take
 * effect in submission order (a late-finishing earlier signal never
 * overwrites a later one), may rewind, and a signal then a wait on one
 * queue is satisfied by queue order.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(q) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(q, 4096, 0, 0)

/* R3: the value appears only once the work before the signal is done. */
TEST_F(q, signal_after_work)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 77));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 5, 20000 * MS));
	/* The value is exactly v and the work before it is visible. */
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(77, util_read64(self->e.buf, 0));
}

/* R3: on an idle queue the signal completes, with any value. */
TEST_F(q, signal_idle_and_rewind)
{
	struct d3dq_fence *g;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1ull << 50));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 1ull << 50, 20000 * MS));
	EXPECT_EQ(1ull << 50, d3dq_fence_get_completed_value(self->e.f));

	/* Rewind through the queue; g marks that the queue got there. */
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(g, 1, 20000 * MS));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));

	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, UINT64_MAX));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, UINT64_MAX, 20000 * MS));
	d3dq_fence_destroy(g);
}

/*
 * R4: queue a signals 5 after long work, then queue b signals 3. b's
 * signal completes first; a's completes later and must not overwrite it.
 */
TEST_F(q, submission_order_wins)
{
	struct d3dq_fence *done;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &done));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 500 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, done, 1));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 3));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, done, 2));

	ASSERT_EQ(0, d3dq_fence_wait(done, 1, 20000 * MS));
	util_sleep_ms(50);
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	/* The test is only meaningful if b really finished before a. */
	if (util_read64(self->e.buf, 8) >= util_read64(self->e.buf, 0))
		SKIP(goto out, "b finished after a (machine too slow?)");
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
out:
	d3dq_fence_destroy(done);
}

/* R4 on one queue: signals land in order, the last one stays. */
TEST_F(q, in_order_on_one_queue)
{
	uint64_t v;

	for (v = 1; v <= 50; v++)
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f,
					       v % 2 ? 1000 + v : v));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(50, d3dq_fence_get_completed_value(self->e.f));
}

/* R9: signal then wait for the same value on one queue never stalls. */
TEST_F(q, signal_then_wait_same_queue)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 200 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 9));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 9));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(9, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * R1, R3 for a fence nobody waits on: its queue signal is applied without
 * an event, a waiter or a later record; reading the value is enough. The
 * library applies such signals lazily (library.rst, "The worker"): the
 * first read while one is pending brings the worker. Polls until the
 * value arrives, at most 20 s.
 */
TEST_F(q, unobserved_signal_seen_by_polling)
{
	uint64_t i;

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 50 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 7));
	for (i = 0; i < 20000 && d3dq_fence_get_completed_value(self->e.f) != 7;
	     i++)
		util_sleep_ms(1);
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
}

/*
 * The same after the work completed unobserved: a later signal on an idle
 * queue, then reads of the first fence.
 */
TEST_F(q, unobserved_signal_read_after_completion)
{
	uint64_t i;

	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 3));
	/* Another queue's work, waited for in the kernel: f stays unread. */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 100 * MS));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	for (i = 0; i < 20000 && d3dq_fence_get_completed_value(self->e.f) != 3;
	     i++)
		util_sleep_ms(1);
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
