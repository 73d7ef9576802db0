// SPDX-License-Identifier: GPL-2.0
/*
 * Shared fences: export/import, a queue wait satisfied by another process
 * (wait before signal across processes), events on shared fences, and the
 * documented limitation that a shared fence cannot rewind.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(sh) {
	struct util_env e;
};

/*
 * Events on shared fences come from DRM_IOCTL_SYNCOBJ_EVENTFD where the
 * kernel has it (6.6+), else from the library's worker; the second variant
 * forces the worker everywhere.
 */
FIXTURE_VARIANT(sh) {
	bool force_worker;
};

FIXTURE_VARIANT_ADD(sh, auto) {
	.force_worker = false,
};

FIXTURE_VARIANT_ADD(sh, worker) {
	.force_worker = true,
};

FIXTURE_SETUP(sh)
{
	/* Each test runs in its own process: this stays local. */
	if (variant->force_worker)
		setenv("D3DQ_NO_SYNCOBJ_EVENTFD", "1", 1);
	UTIL_ENV_OPEN(&self->e, 4096, 2, D3DQ_FENCE_FLAG_SHARED);
}

FIXTURE_TEARDOWN(sh)
{
	util_env_close(&self->e);
}

TEST_F(sh, values_and_no_rewind)
{
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1ull << 40));
	EXPECT_EQ(1ull << 40, d3dq_fence_get_completed_value(self->e.f));
	/* Same value again: allowed, nothing changes. */
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 1ull << 40));
	/* A shared timeline cannot go back. */
	EXPECT_EQ(-EINVAL, d3dq_fence_signal(self->e.f, 5));
	EXPECT_EQ(-EINVAL, d3dq_queue_signal(self->e.a, self->e.f, 5));
	EXPECT_EQ(1ull << 40, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, (1ull << 40) + 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, (1ull << 40) + 1, 20000 * MS));
}

/* A queue of this process waits; a queue of the same process signals. */
TEST_F(sh, wait_before_signal_same_process)
{
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	util_sleep_ms(100);
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, util_event_take(efd));

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 200 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 10, 20000 * MS));
	util_sleep_ms(50);
	EXPECT_EQ(1, util_event_take(efd));
	close(efd);
}

/*
 * The parent's queue waits for value 7 before the child has even
 * imported the fence; the child signals it from its own device.
 */
TEST_F(sh, wait_before_signal_other_process)
{
	int fd, status;
	pid_t pid;

	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 7));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_queue *q;
		struct d3dq_fence *f;
		int ok;

		util_sleep_ms(800);
		if (!dev || d3dq_fence_import(dev, fd, &f))
			_exit(2);
		q = util_queue(dev);
		if (!q)
			_exit(3);
		ok = d3dq_fence_get_completed_value(f) == 2 &&
		     !util_exec_delay(dev, q, 100 * MS) &&
		     !d3dq_queue_signal(q, f, 7) &&
		     !d3dq_fence_wait(f, 7, 20000 * MS);
		d3dq_queue_destroy(q);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(ok ? 0 : 4);
	}
	close(fd);
	util_sleep_ms(100);
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The child signals from the CPU; the parent's event fires. */
TEST_F(sh, cpu_signal_other_process)
{
	int fd, status, efd = util_eventfd();
	pid_t pid;

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 30, efd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_fence *f;
		int ret;

		if (!dev || d3dq_fence_import(dev, fd, &f))
			_exit(2);
		util_sleep_ms(200);
		ret = d3dq_fence_signal(f, 30);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(ret ? 3 : 0);
	}
	close(fd);
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 30, 20000 * MS));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The event is fired by the kernel or by the worker: allow it time. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 30, -1));
	util_sleep_ms(100);
	EXPECT_EQ(1, util_event_take(efd));
	close(efd);
}

TEST_F(sh, import_errors)
{
	struct d3dq_fence *f = (void *)1;

	EXPECT_EQ(-EINVAL, d3dq_fence_import(self->e.dev, -1, &f));
	EXPECT_NE(0, d3dq_fence_import(self->e.dev, 0, &f));
	EXPECT_EQ(NULL, f);
}

TEST_HARNESS_MAIN
