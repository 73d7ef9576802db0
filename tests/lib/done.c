// SPDX-License-Identifier: GPL-2.0
/*
 * R3 and R17 with jobs the kernel runs inside SUBMIT (uapi.rst, "Direct
 * submission"): on an idle queue and engine an Execute's job has run when
 * the call returns, and the Signal after it takes effect before it
 * returns (R3: "on an idle queue it completes almost at once"), without
 * the worker; what such a job depended on through a queue wait on
 * another queue's completed point takes effect first (R17), although
 * nothing had applied that point yet.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <fcntl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(done) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(done, 4096, 0, 0)

/* Does the module run jobs inside SUBMIT (its default)? */
static bool direct_on(void)
{
	int fd = open("/sys/module/d3dq/parameters/direct_submit", O_RDONLY);
	char c = 'N';

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 'N';
	close(fd);
	return c == 'Y';
}

/* R3: Execute + Signal on an idle queue: the value is there at once. */
TEST_F(done, signal_on_idle_queue_at_once)
{
	int threads = util_thread_count();
	uint64_t i;

	if (!direct_on())
		SKIP(return, "direct_submit is off");
	for (i = 1; i <= 5; i++) {
		ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a,
					       self->e.buf, 0, i));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, i));
		/* Nothing else uses the engine: the job ran in SUBMIT. */
		EXPECT_EQ(i, d3dq_fence_get_completed_value(self->e.f));
		EXPECT_EQ(i, util_read64(self->e.buf, 0));
		ASSERT_EQ(0, d3dq_fence_wait(self->e.f, i, 20000 * MS));
	}
	/* A signal with nothing before it on the queue, and a rewind. */
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 2));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(threads, util_thread_count());
}

/*
 * R17: queue a signals f after a delay; queue b waits for f, which the
 * library hands to the kernel as a wait on a's point, then executes and
 * signals g. b's job, which the kernel can run inside SUBMIT once a's is
 * done, is applied on the submitting thread, a's signal first (whether
 * or not the worker got to it already): whoever sees g = 1 then sees
 * f = 1 too.
 */
TEST_F(done, causes_applied_first)
{
	uint64_t g, f;

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 30 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 1));
	/* a's job is done in the kernel before b's is submitted. */
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	/*
	 * The engine's worker frees the engine just after the job's count
	 * (d3dq_dispatch_release() after d3dq_job_signal()): until then b's
	 * job would wait for its turn instead of running in SUBMIT.
	 */
	util_sleep_ms(20);
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf,
				       0, 9));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 1));
	g = d3dq_fence_get_completed_value(self->e.g);
	f = d3dq_fence_get_completed_value(self->e.f);
	if (direct_on())
		EXPECT_EQ(1, g);
	if (g == 1) {
		EXPECT_EQ(1, f);
		EXPECT_EQ(9, util_read64(self->e.buf, 0));
	}
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 1, 20000 * MS));
	EXPECT_EQ(1, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
