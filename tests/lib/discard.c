// SPDX-License-Identifier: GPL-2.0
/*
 * R18: a queue wait is satisfied only by a value the fence really takes.
 * A queue signal that R4 discards (submitted earlier, completing after a
 * later-submitted one took effect) satisfies no wait; and a queue wait
 * that relies on a pending signal keeps that signal from being discarded
 * by a later, lower signal on another queue.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(d) {
	struct util_env e;
	struct d3dq_queue *c;
};

FIXTURE_SETUP(d)
{
	UTIL_ENV_OPEN(&self->e, 4096, 0, 0);
	self->c = util_queue(self->e.dev);
	ASSERT_NE(NULL, self->c);
}

FIXTURE_TEARDOWN(d)
{
	d3dq_queue_destroy(self->c);
	util_env_close(&self->e);
}

/*
 * a signals F=10 after long work; c (idle) then signals F=3, which takes
 * effect first, so a's 10 is discarded and F never reaches 10. A wait
 * of b for F>=10 must stay held until something else brings 10.
 */
TEST_F(d, discarded_signal_satisfies_no_wait)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->c, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.f, 3));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf, 16, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));

	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->c));
	/* Only meaningful if c's signal really completed first. */
	if (util_read64(self->e.buf, 8) >= util_read64(self->e.buf, 0))
		SKIP(return, "c finished after a (machine too slow?)");
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
	util_sleep_ms(100);
	EXPECT_EQ(0, util_read64(self->e.buf, 16));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.done));

	/* Now the value is really reached. */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 16));
}

/*
 * b's wait relies on a's pending F=10. c signals F=3 afterwards (later
 * in API order, lower, another queue): it must not discard a's 10, so
 * F does take 10 (its event fires) and only then 3.
 */
TEST_F(d, relied_on_signal_is_not_discarded)
{
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf, 16, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.f, 3));
	ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.g, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 16));
	/* b ran, so F took 10 (R18), and c's 3, ordered after, came last. */
	EXPECT_EQ(1, util_event_take(efd));
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
	close(efd);
}

/* A CPU signal does not discard a pending queue signal (R4 decision). */
TEST_F(d, cpu_signal_discards_nothing)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 200 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 2));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * Held signals count in API order: b's signal of 7, held behind a wait,
 * was called before a's signal of 5; a's completes first, so b's,
 * released afterwards, is discarded.
 */
TEST_F(d, held_signal_keeps_its_order)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 7));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 5, 20000 * MS));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
