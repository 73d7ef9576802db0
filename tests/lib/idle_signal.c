// SPDX-License-Identifier: GPL-2.0
/*
 * A queue signal on an idle queue (uapi 1.15, the queue's idle word):
 * one FENCE_SIGNAL, set in the call; behind a running job or a carried
 * wait, one SUBMIT, set when the work before it is done (R3, R5). And
 * the interleaving that matters: a signal taken by a job that is ending
 * and a later signal of the same fence that finds the queue idle land in
 * queue order (R4), in rounds so that the job's end races the call.
 *
 * This program defines ioctl(), which libd3dq and libdrm call through
 * libc, to see which kernel call a Signal makes.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "d3dq_drm.h"
#include "kselftest_harness.h"
#include "util/util.h"

static _Thread_local unsigned long calls, last_req;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	calls++;
	last_req = req;
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* Signal @f to @v on @q: 0, with the one kernel call it made in @req. */
static int signal_once(struct d3dq_queue *q, struct d3dq_fence *f,
		       uint64_t v, unsigned long *req)
{
	unsigned long before = calls;
	int ret = d3dq_queue_signal(q, f, v);

	*req = calls - before == 1 ? last_req : 0;
	return ret;
}

FIXTURE(q) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(q, 4096, 0, 0)

/* Idle: one FENCE_SIGNAL, the value there on return, a rewind too. */
TEST_F(q, idle_queue_is_one_fence_signal)
{
	unsigned long req;

	ASSERT_EQ(0, signal_once(self->e.a, self->e.f, 9, &req));
	EXPECT_EQ(DRM_IOCTL_D3DQ_FENCE_SIGNAL, req);
	EXPECT_EQ(9, d3dq_fence_get_completed_value(self->e.f));

	/* After work that ran inside its Execute, idle again. */
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0,
				       5));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, signal_once(self->e.a, self->e.f, 3, &req));
	EXPECT_EQ(DRM_IOCTL_D3DQ_FENCE_SIGNAL, req);
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(5, util_read64(self->e.buf, 0));
}

/* Behind a running job: one SUBMIT, the value only after the job. */
TEST_F(q, running_job_is_one_submit)
{
	unsigned long req;

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0,
				       7));
	ASSERT_EQ(0, signal_once(self->e.a, self->e.f, 4, &req));
	EXPECT_EQ(DRM_IOCTL_D3DQ_SUBMIT, req);
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 4, 20000 * MS));
	EXPECT_EQ(7, util_read64(self->e.buf, 0));
}

/* Behind a carried wait: a SUBMIT, held until the wait is satisfied. */
TEST_F(q, carried_wait_is_one_submit)
{
	unsigned long req;

	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, signal_once(self->e.a, self->e.f, 2, &req));
	EXPECT_EQ(DRM_IOCTL_D3DQ_SUBMIT, req);
	usleep(50000);
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 2, 20000 * MS));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * R4: Signal(F, 2i+1) taken by a short job, then, after a pause of 0 to
 * 3 ms that lets the job end or not, Signal(F, 2i+2) and Signal(G, i).
 * Once G reads i the queue executed all three: F must be 2i+2, never
 * the earlier value landing after the later one.
 */
TEST_F(q, ending_job_and_idle_signal_keep_order)
{
	struct timespec pause = { 0 };
	unsigned long fast = 0, req;
	uint64_t i;

	for (i = 1; i <= 60; i++) {
		ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a,
					     (i % 3) * MS / 2));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 2 * i + 1));
		pause.tv_nsec = (long)((i * 7) % 4) * 1000000;
		nanosleep(&pause, NULL);
		ASSERT_EQ(0, signal_once(self->e.a, self->e.f, 2 * i + 2, &req));
		fast += req == DRM_IOCTL_D3DQ_FENCE_SIGNAL;
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.g, i));
		ASSERT_EQ(0, d3dq_fence_wait(self->e.g, i, 20000 * MS));
		ASSERT_EQ(2 * i + 2, d3dq_fence_get_completed_value(self->e.f));
	}
	TH_LOG("%lu of 60 later signals found the queue idle", fast);
}

TEST_HARNESS_MAIN
