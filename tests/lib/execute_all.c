// SPDX-License-Identifier: GPL-2.0
/*
 * An execute is all or nothing (issue 39). Lists longer together than one
 * job's commands (max_cmd_bytes, 64 KiB by default) used to be several
 * SUBMITs: at a bound where only the first of them fit, those were
 * queued and ran later, and the call still failed. From uapi 1.10 the
 * library makes one SUBMIT per execute (DRM_D3DQ_SUBMIT_SPLIT), which the
 * kernel reserves and queues whole or not at all.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "d3dq_drm.h"
#include "kselftest_harness.h"
#include "util/util.h"

/*
 * Whether the driver behind this process's d3dq file has split submits
 * (uapi 1.10): before, an execute longer than one job is several.
 */
static bool driver_splits(void)
{
	struct drm_d3dq_get_param p = { .param = DRM_D3DQ_PARAM_FEATURES };
	char path[300], line[256];
	bool found = false;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fdinfo");

	while (dir && !found && (d = readdir(dir))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = d->d_name[0] == '.' ? NULL : fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "d3dq-queues:", 12) &&
			    !drmIoctl(atoi(d->d_name), DRM_IOCTL_D3DQ_GET_PARAM,
				      &p))
				found = p.value & DRM_D3DQ_FEATURE_SUBMIT_SPLIT;
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

/* Far more than the driver's max_pending_jobs (1,024 by default). */
#define TRIES (1 << 16)
#define LISTS 4
#define CMDS 4096	/* WRITE64s of 32 bytes per list: two jobs' worth */
#define SLOTS 512	/* command j writes slot j % SLOTS */

FIXTURE(ea) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(ea, 8 * SLOTS, 0, 0)

/* List k, command j writes k * CMDS + j + 1 at slot j % SLOTS. */
static struct d3dq_cmdlist *big_list(struct util_env *e, uint64_t k)
{
	struct d3dq_cmdlist *l;
	uint64_t j;

	if (d3dq_cmdlist_create(e->dev, &l))
		return NULL;
	for (j = 0; j < CMDS; j++)
		if (d3dq_cmdlist_write64(l, e->buf, 8 * (j % SLOTS),
					 k * CMDS + j + 1))
			return NULL;
	return d3dq_cmdlist_close(l) ? NULL : l;
}

TEST_F_TIMEOUT(ea, execute_at_a_bound_is_all_or_nothing, 300)
{
	struct util_env *e = &self->e;
	struct d3dq_cmdlist *l[LISTS];
	uint64_t k, n;
	int ret = 0, written;

	if (!driver_splits())
		SKIP(return, "the driver has no split submits (uapi 1.10)");
	for (k = 0; k < LISTS; k++) {
		l[k] = big_list(e, k);
		ASSERT_NE(NULL, l[k]);
	}
	/*
	 * Behind f = 1: two jobs; behind f = 2: jobs until the queue is
	 * full. Releasing f = 1 then leaves room for two or three jobs of
	 * the eight the execute needs.
	 */
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->g, 2));
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 2));
	for (n = 0; n < TRIES; n++) {
		ret = d3dq_queue_signal(e->b, e->done, n + 1);
		if (ret)
			break;
	}
	TH_LOG("%llu signals held before %d", (unsigned long long)n, ret);
	ASSERT_EQ(-ENOSPC, ret);
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->g, 2, D3DQ_TIMEOUT_INFINITE));

	/* Part of it fits, not all: nothing of it is queued. */
	EXPECT_EQ(-ENOSPC, d3dq_queue_execute(e->b, l, LISTS));
	EXPECT_EQ(0, d3dq_device_removed_reason(e->dev));
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 2));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, n, D3DQ_TIMEOUT_INFINITE));
	ASSERT_EQ(0, util_queue_idle(e->dev, e->b));
	for (k = 0, written = 0; k < SLOTS; k++)
		written += util_read64(e->buf, 8 * k) != 0;
	EXPECT_EQ(0, written) {
		TH_LOG("%d slots written by a failed execute", written);
	}
	EXPECT_EQ(2, d3dq_fence_get_completed_value(e->g));
	EXPECT_EQ(n, d3dq_fence_get_completed_value(e->done));

	/* With room, the same execute runs whole, in order. */
	ASSERT_EQ(0, d3dq_queue_execute(e->b, l, LISTS));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->done, n + 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, n + 1, D3DQ_TIMEOUT_INFINITE));
	for (k = 0; k < SLOTS; k++)
		EXPECT_EQ((LISTS - 1) * CMDS + CMDS - SLOTS + k + 1,
			  util_read64(e->buf, 8 * k));
	for (k = 0; k < LISTS; k++)
		d3dq_cmdlist_destroy(l[k]);
}

TEST_HARNESS_MAIN
