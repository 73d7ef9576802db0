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
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/util.h"
#include "common/seccomp.h"

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

#define ARMED 4	/* armed jobs of 1.5 s each, below the 2 s job timeout */

/*
 * Over a limit while armed jobs hold part of it, the driver sleeps until
 * they end (uapi 1.9) and fails with -ENOSPC only once held work alone
 * fills it; the library submits once and needs no wait of its own (a
 * seccomp filter refuses its syncobj waits here: it must not matter).
 * Before uapi 1.9 the driver failed at once and the library waited for
 * the queue's armed jobs itself.
 */
TEST_F_TIMEOUT(hl, armed_work_is_waited_for_by_the_driver, 120)
{
	struct util_env *e = &self->e;
	int i, k, ret = 0;

	for (k = 0; k < ARMED; k++) {
		ASSERT_EQ(0, util_exec_delay(e->dev, e->b, 1500 * MS));
		ASSERT_EQ(0, util_exec_write64(e->dev, e->b, e->buf, 8 * k,
					       k + 1));
	}
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 1));
	ASSERT_EQ(0, seccomp_refuse_ioctls((const unsigned long[]){
				DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT }, 1, EPERM));
	for (i = 0; i < TRIES; i++) {
		ret = d3dq_queue_signal(e->b, e->g, (uint64_t)i + 1);
		if (ret)
			break;
	}
	TH_LOG("%d signals held before %d", i, ret);
	EXPECT_EQ(-ENOSPC, ret);
	/* The armed work ended first: only held work stood in the way. */
	EXPECT_EQ(ARMED, util_read64(e->buf, 8 * (ARMED - 1)));
	EXPECT_EQ(0, d3dq_device_removed_reason(e->dev));

	/* Nothing was lost: released, everything runs in order. */
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->g, (uint64_t)i, D3DQ_TIMEOUT_INFINITE));
	for (k = 0; k < ARMED; k++)
		EXPECT_EQ(k + 1, util_read64(e->buf, 8 * k));
}

/*
 * One call's lists are one job (or as few as max_cmd_bytes allows), not
 * one job per list: 4,096 lists behind a held wait fit within the
 * driver's 1,024 jobs, and run in order once released.
 */
#define LISTS 4096
#define SLOTS 512	/* list k writes k + 1 at slot k % SLOTS */

TEST_F_TIMEOUT(hl, many_lists_are_one_job, 300)
{
	struct util_env *e = &self->e;
	struct d3dq_cmdlist **l = calloc(LISTS, sizeof(*l));
	uint64_t k;

	ASSERT_NE(NULL, l);
	for (k = 0; k < LISTS; k++) {
		l[k] = util_list_write64(e->dev, e->buf, 8 * (k % SLOTS), k + 1);
		ASSERT_NE(NULL, l[k]);
	}
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 1));
	ASSERT_EQ(0, d3dq_queue_execute(e->b, l, LISTS));
	ASSERT_EQ(0, d3dq_queue_execute(e->b, l, LISTS));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->done, 1));
	EXPECT_EQ(0, util_read64(e->buf, 0));

	ASSERT_EQ(0, d3dq_fence_signal(e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, D3DQ_TIMEOUT_INFINITE));
	/* The last list of each slot wrote last. */
	for (k = 0; k < SLOTS; k++)
		ASSERT_EQ(LISTS - SLOTS + k + 1, util_read64(e->buf, 8 * k));
	for (k = 0; k < LISTS; k++)
		d3dq_cmdlist_destroy(l[k]);
	free(l);
}

TEST_HARNESS_MAIN
