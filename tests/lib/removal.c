// SPDX-License-Identifier: GPL-2.0
/*
 * R15: device removal by a job timeout, by d3dq_device_remove() and by
 * executing a list still recording. Afterwards every fence reads
 * UINT64_MAX, events have fired, queued waits are released, object
 * creation fails with the reason and the reason stays readable.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(r) {
	struct util_env e;
	int efd;
};

FIXTURE_SETUP(r)
{
	self->efd = -1;
	UTIL_ENV_OPEN(&self->e, 4096, 3, 0);
	self->efd = util_eventfd();
	ASSERT_GE(self->efd, 0);

	/* Work held back behind a wait nobody will satisfy. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 100,
							self->efd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 100));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf,
				       8, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 1));
}

FIXTURE_TEARDOWN(r)
{
	if (self->efd >= 0)
		close(self->efd);
	util_env_close(&self->e);
}

static void check_removed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(r) *self, int reason)
{
	struct d3dq_fence *f = (void *)1;
	struct d3dq_queue *q = (void *)1;
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_cmdlist *l = (void *)1;

	EXPECT_EQ(reason, d3dq_device_removed_reason(self->e.dev));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.g));
	EXPECT_EQ(1, util_event_take(self->efd));
	EXPECT_EQ(0, d3dq_fence_wait(self->e.f, UINT64_MAX, 0));
	/* The held work was dropped, not run. */
	EXPECT_EQ(0, util_read64(self->e.buf, 8));

	EXPECT_EQ(reason, d3dq_fence_create(self->e.dev, 0, 0, &f));
	EXPECT_EQ(NULL, f);
	EXPECT_EQ(reason, d3dq_queue_create(self->e.dev, &desc, &q));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(reason, d3dq_cmdlist_create(self->e.dev, &l));
	EXPECT_EQ(-ENODEV, d3dq_queue_signal(self->e.a, self->e.g, 5));
	EXPECT_EQ(-ENODEV, d3dq_queue_wait(self->e.a, self->e.g, 5));
	EXPECT_EQ(-ENODEV, d3dq_fence_signal(self->e.g, 5));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.g));
	/* Events registered now fire at once. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.g, 7, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	EXPECT_EQ(reason, d3dq_device_removed_reason(self->e.dev));
}

TEST_F_TIMEOUT(r, job_timeout, 60)
{
	/* Longer than the module's default job timeout (2 s). */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 3000 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	/* Blocks until the removal releases it. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 1000, D3DQ_TIMEOUT_INFINITE));
	check_removed(_metadata, self, -ETIMEDOUT);
	/* The job after the one that timed out never ran. */
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
}

TEST_F(r, explicit)
{
	ASSERT_EQ(0, d3dq_device_removed_reason(self->e.dev));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 500 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_device_remove(self->e.dev));
	check_removed(_metadata, self, -ENODEV);
	/* When remove returned, no job ran any more; none runs later. */
	util_sleep_ms(700);
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
}

TEST_F(r, execute_recording_list)
{
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, self->e.buf, 0, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(self->e.a, &l, 1));
	check_removed(_metadata, self, -EINVAL);
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	d3dq_cmdlist_destroy(l);
}

TEST_HARNESS_MAIN
