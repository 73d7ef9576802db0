// SPDX-License-Identifier: GPL-2.0
/*
 * R6, R7: satisfied waits stay satisfied through a rewind, even when not
 * yet at the head of their queue; a wait queued after a rewind needs a new
 * value, from a signal already pending or from a later one.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(s) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(s, 4096, 0, 0)

/* The wait on f is behind a wait on g when f reaches 5 and rewinds. */
TEST_F(s, sticky_behind_head)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	/* The queue is held (by g) and nothing of it ran. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
}

/* Same, with the value coming from (and rewound by) another queue. */
TEST_F(s, sticky_gpu_pulse)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 0));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
}

/* R7: history before a rewind does not satisfy a later wait. */
TEST_F(s, rewind_then_wait_needs_new_value)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	/* The kernel holds the wait: the history before the rewind is gone. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.done));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
}

/*
 * R7 with a signal already pending: b will set f to 8 after long work; the
 * CPU rewinds f to 0 meanwhile; a's wait for 6 is satisfied by b's pending
 * signal, and a's work sees the value that signal produced.
 */
TEST_F(s, rewind_with_pending_signal)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 7));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 1000 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 8));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	/* Precondition: b's signal is still pending. */
	if (util_read64(self->e.buf, 0))
		SKIP(return, "b's signal completed too early (machine too slow?)");

	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 6));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_NE(0, util_read64(self->e.buf, 0));
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 8, 20000 * MS));
	EXPECT_EQ(8, d3dq_fence_get_completed_value(self->e.f));
}

/* A CPU rewind does not drop a queue signal submitted before it. */
TEST_F(s, rewind_keeps_pending_signal)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 1000 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 40));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 50));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 2));
	/* Precondition: b's signal had not completed yet. */
	if (util_read64(self->e.buf, 0))
		SKIP(return, "b's signal completed too early (machine too slow?)");
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 40, 20000 * MS));
	EXPECT_EQ(40, d3dq_fence_get_completed_value(self->e.f));
}

/* Same with a signal held back behind a wait when the CPU rewinds. */
TEST_F(s, rewind_keeps_held_signal)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 40));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 50));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 2));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 40, 20000 * MS));
	EXPECT_EQ(40, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
