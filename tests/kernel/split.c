// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq split submits (uapi 1.10, DRM_D3DQ_SUBMIT_SPLIT): one submit of a
 * command stream longer than MAX_CMD_BYTES, which the kernel cuts into
 * jobs, all or none. What is asserted: the jobs run whole and in order,
 * the signals come with the last; a bad command anywhere fails the
 * submit and nothing of it runs; at the queue's bound, where only some of
 * its jobs fit, nothing of it is queued (-ENOSPC), and it runs whole once
 * there is room; bad flags and waits are refused.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define SLOTS 512
#define SEC 1000000000ull

FIXTURE(split) {
	int fd;
	uint32_t q, bo, sync;
	volatile uint64_t *map;
	struct drm_d3dq_cmd_write64 *cmds;
	uint32_t n;
};

FIXTURE_SETUP(split)
{
	uint32_t max;

	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_SUBMIT_SPLIT);
	self->q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q);
	self->bo = t_bo(self->fd, 8 * SLOTS, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->sync = t_syncobj(self->fd);
	ASSERT_NE(0, self->sync);
	/* Three jobs and a bit: command j writes j + 1 at slot j % SLOTS. */
	max = (uint32_t)t_param(self->fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES);
	self->n = 3 * (max / sizeof(*self->cmds)) + 5;
	self->cmds = calloc(self->n, sizeof(*self->cmds));
	ASSERT_NE(NULL, self->cmds);
	for (uint32_t j = 0; j < self->n; j++) {
		self->cmds[j].hdr.op = DRM_D3DQ_CMD_WRITE64;
		self->cmds[j].hdr.size = sizeof(*self->cmds);
		self->cmds[j].handle = self->bo;
		self->cmds[j].offset = 8 * (j % SLOTS);
		self->cmds[j].value = j + 1;
	}
}

FIXTURE_TEARDOWN(split)
{
	free(self->cmds);
	close(self->fd);
}

static int split_submit(FIXTURE_DATA(split) *self, uint32_t flags,
			const struct drm_d3dq_sync *wait,
			const struct drm_d3dq_sync *signal, uint64_t *seqno)
{
	struct drm_d3dq_submit s = {
		.queue_id = self->q,
		.flags = flags,
		.waits = DRM_D3DQ_OBJ_ARRAY(wait ? 1 : 0, wait),
		.signals = DRM_D3DQ_OBJ_ARRAY(signal ? 1 : 0, signal),
		.cmds = (uintptr_t)self->cmds,
		.cmd_bytes = self->n * sizeof(*self->cmds),
	};
	int ret;

	if (!wait)
		s.waits.stride = 0;
	if (!signal)
		s.signals.stride = 0;
	ret = t_submit_raw(self->fd, &s);
	if (seqno)
		*seqno = s.seqno;
	return ret;
}

/* Every slot holds what the last command that writes it wrote. */
static bool all_written(FIXTURE_DATA(split) *self)
{
	for (uint32_t k = 0; k < SLOTS; k++) {
		uint32_t last = self->n - 1 - (self->n - 1 - k) % SLOTS;

		if (self->map[k] != last + 1)
			return false;
	}
	return true;
}

static uint32_t written(FIXTURE_DATA(split) *self)
{
	uint32_t k, w = 0;

	for (k = 0; k < SLOTS; k++)
		w += self->map[k] != 0;
	return w;
}

TEST_F(split, jobs_run_whole_and_in_order)
{
	struct drm_d3dq_sync sig = t_tl(self->sync, 1);
	uint64_t seqno = 0;

	/* Without the flag, too long a stream is refused. */
	EXPECT_EQ(-EINVAL, split_submit(self, 0, NULL, &sig, NULL));
	ASSERT_EQ(0, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL, &sig,
				  &seqno));
	/* Four jobs: the seqno is the last one's. */
	EXPECT_EQ(4, seqno);
	ASSERT_EQ(0, t_wait(self->fd, self->sync, 1, 30 * SEC));
	EXPECT_TRUE(all_written(self));

	/* A short stream with the flag is one job. */
	self->n = 1;
	sig.point = 2;
	ASSERT_EQ(0, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL, &sig,
				  &seqno));
	EXPECT_EQ(5, seqno);
	ASSERT_EQ(0, t_wait(self->fd, self->sync, 2, 30 * SEC));
}

TEST_F(split, a_bad_command_anywhere_runs_nothing)
{
	struct drm_d3dq_sync sig = t_tl(self->sync, 1);
	struct t_fence f;
	struct drm_d3dq_sync w;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	w = t_fs(f.handle, 1);
	self->cmds[self->n - 2].pad = 1;
	EXPECT_EQ(-EINVAL, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL,
					&sig, NULL));
	self->cmds[self->n - 2].pad = 0;
	self->cmds[self->n - 1].handle = self->bo + 100;
	EXPECT_EQ(-ENOENT, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL,
					&sig, NULL));
	self->cmds[self->n - 1].handle = self->bo;
	EXPECT_EQ(-EINVAL, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT |
					DRM_D3DQ_SUBMIT_HOLD, NULL, &sig,
					NULL));
	EXPECT_EQ(-EINVAL, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, &w, &sig,
					NULL));
	/* The queue still works, and nothing of the above ran. */
	self->n = 1;
	self->cmds[0].offset = 8 * (SLOTS - 1);
	ASSERT_EQ(0, split_submit(self, 0, NULL, &sig, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->sync, 1, 30 * SEC));
	EXPECT_EQ(1, written(self));
	t_fence_unmap(&f);
}

TEST_F(split, at_the_bound_nothing_or_all)
{
	struct drm_d3dq_sync sig = t_tl(self->sync, 1), w;
	uint32_t max = (uint32_t)t_param(self->fd,
					 DRM_D3DQ_PARAM_MAX_PENDING_JOBS);
	struct t_fence f;
	uint32_t i;

	/* Held jobs behind f leave room for two jobs of the four. */
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	w = t_fs(f.handle, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, NULL, 0, NULL,
				   NULL, NULL));
	for (i = 1; i < max - 2; i++)
		ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, NULL, 0,
				      NULL));
	EXPECT_EQ(-ENOSPC, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL,
					&sig, NULL));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	/* An empty job after the held ones: all of them ran. */
	sig.point = 2;
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, &sig, 1, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->sync, 2, 30 * SEC));
	EXPECT_EQ(0, written(self));

	sig.point = 3;
	ASSERT_EQ(0, split_submit(self, DRM_D3DQ_SUBMIT_SPLIT, NULL, &sig,
				  NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->sync, 3, 30 * SEC));
	EXPECT_TRUE(all_written(self));
	t_fence_unmap(&f);
}

TEST_HARNESS_MAIN
