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
	struct d3dq_device *dev;
	struct d3dq_queue *a, *b;
	struct d3dq_buffer *buf;
	struct d3dq_fence *f;
};

FIXTURE_SETUP(q)
{
	self->dev = util_open();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->a = util_queue(self->dev);
	self->b = util_queue(self->dev);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, d3dq_buffer_create(self->dev, 4096, &self->buf));
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->f));
}

FIXTURE_TEARDOWN(q)
{
	d3dq_fence_destroy(self->f);
	d3dq_buffer_destroy(self->buf);
	d3dq_queue_destroy(self->a);
	d3dq_queue_destroy(self->b);
	d3dq_device_close(self->dev);
}

/* R3: the value appears only once the work before the signal is done. */
TEST_F(q, signal_after_work)
{
	ASSERT_EQ(0, util_exec_delay(self->dev, self->a, 300 * MS));
	ASSERT_EQ(0, util_exec_write64(self->dev, self->a, self->buf, 0, 77));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, 5));
	ASSERT_EQ(0, d3dq_fence_wait(self->f, 5, 20000 * MS));
	/* The value is exactly v and the work before it is visible. */
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->f));
	EXPECT_EQ(77, util_read64(self->buf, 0));
}

/* R3: on an idle queue the signal completes, with any value. */
TEST_F(q, signal_idle_and_rewind)
{
	struct d3dq_fence *g;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &g));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, 1ull << 50));
	ASSERT_EQ(0, d3dq_fence_wait(self->f, 1ull << 50, 20000 * MS));
	EXPECT_EQ(1ull << 50, d3dq_fence_get_completed_value(self->f));

	/* Rewind through the queue; g marks that the queue got there. */
	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(g, 1, 20000 * MS));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->f));

	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, UINT64_MAX));
	ASSERT_EQ(0, d3dq_fence_wait(self->f, UINT64_MAX, 20000 * MS));
	d3dq_fence_destroy(g);
}

/*
 * R4: queue a signals 5 after long work, then queue b signals 3. b's
 * signal completes first; a's completes later and must not overwrite it.
 */
TEST_F(q, submission_order_wins)
{
	struct d3dq_fence *done;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &done));
	ASSERT_EQ(0, util_exec_delay(self->dev, self->a, 500 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->dev, self->a, self->buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, done, 1));
	ASSERT_EQ(0, util_exec_timestamp(self->dev, self->b, self->buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->b, self->f, 3));
	ASSERT_EQ(0, d3dq_queue_signal(self->b, done, 2));

	ASSERT_EQ(0, d3dq_fence_wait(done, 1, 20000 * MS));
	util_sleep_ms(50);
	ASSERT_EQ(0, util_queue_idle(self->dev, self->a));
	ASSERT_EQ(0, util_queue_idle(self->dev, self->b));
	/* The test is only meaningful if b really finished before a. */
	if (util_read64(self->buf, 8) >= util_read64(self->buf, 0))
		SKIP(goto out, "b finished after a (machine too slow?)");
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->f));
out:
	d3dq_fence_destroy(done);
}

/* R4 on one queue: signals land in order, the last one stays. */
TEST_F(q, in_order_on_one_queue)
{
	uint64_t v;

	for (v = 1; v <= 50; v++)
		ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f,
					       v % 2 ? 1000 + v : v));
	ASSERT_EQ(0, util_queue_idle(self->dev, self->a));
	EXPECT_EQ(50, d3dq_fence_get_completed_value(self->f));
}

/* R9: signal then wait for the same value on one queue never stalls. */
TEST_F(q, signal_then_wait_same_queue)
{
	ASSERT_EQ(0, util_exec_delay(self->dev, self->a, 200 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->a, self->f, 9));
	ASSERT_EQ(0, d3dq_queue_wait(self->a, self->f, 9));
	ASSERT_EQ(0, util_exec_write64(self->dev, self->a, self->buf, 0, 1));
	ASSERT_EQ(0, util_queue_idle(self->dev, self->a));
	EXPECT_EQ(1, util_read64(self->buf, 0));
	EXPECT_EQ(9, d3dq_fence_get_completed_value(self->f));
}

TEST_HARNESS_MAIN
