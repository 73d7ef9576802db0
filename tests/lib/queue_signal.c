// SPDX-License-Identifier: GPL-2.0
/*
 * R3, R4, R9, R17: queue signals complete after the work before them,
 * take effect in order on one queue (signal_order.c has several queues),
 * may rewind, are seen by the first read after their work completed, and
 * a signal then a wait on one queue is satisfied by queue order.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "common/task.h"
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
 * R17: no observation has to come first. A queue signal of a fence nobody
 * waits on, reads or registers an event on is applied when its work
 * completes: the first read once the kernel shows no job in flight (its
 * fdinfo, not the fence) says so.
 */
TEST_F(q, unobserved_signal_first_read)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 1 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	EXPECT_EQ(1, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
}

/*
 * The same once the kernel has shown the work complete: another queue's
 * later work, waited for in the kernel, finished after it; the first
 * read of the fence has the value.
 */
TEST_F(q, unobserved_signal_read_after_completion)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 3));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 300 * MS));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
}

/* Several fences signalled by one job, none read before: all of them. */
TEST_F(q, unobserved_signals_of_one_job)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 4));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.g, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 6));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	EXPECT_EQ(6, d3dq_fence_get_completed_value(self->e.done));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.g));
	EXPECT_EQ(4, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
