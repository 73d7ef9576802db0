// SPDX-License-Identifier: GPL-2.0
/*
 * Work held behind a queue wait counts against the driver's job limits
 * (issue 25: the kernel holds it). Over a limit, queue calls fail at once
 * with -ENOSPC, documented in d3dq_queue_wait(3), instead of blocking
 * (R5) or growing without bound; nothing queued before is lost, and once
 * the wait is satisfied the queue takes work again.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "util/util.h"

/* Far more than the driver's max_pending_jobs (1,024 by default). */
#define TRIES (1 << 16)

FIXTURE(hl) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(hl, 4096, 0, 0)

TEST_F_TIMEOUT(hl, held_work_meets_the_limit, 300)
{
	struct util_env *e = &self->e;
	int i, ret = 0;

	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 1));
	for (i = 0; i < TRIES; i++) {
		ret = d3dq_queue_signal(e->b, e->g, (uint64_t)i + 1);
		if (ret)
			break;
	}
	TH_LOG("%d signals held before %d", i, ret);
	ASSERT_EQ(-ENOSPC, ret);
	ASSERT_GT(i, 0);
	/* The device is not removed for it, and other queues work. */
	EXPECT_EQ(0, d3dq_device_removed_reason(e->dev));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(e->g));

	/* Released: every held signal runs, in order; then room again. */
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->g, (uint64_t)i, D3DQ_TIMEOUT_INFINITE));
	ASSERT_EQ(0, util_exec_write64(e->dev, e->b, e->buf, 0, 5));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->done, 2));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 2, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(5, util_read64(e->buf, 0));
	EXPECT_EQ((uint64_t)i, d3dq_fence_get_completed_value(e->g));
}

TEST_HARNESS_MAIN
