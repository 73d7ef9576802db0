// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: releasable waits (DRM_D3DQ_SYNC_RELEASABLE) and
 * DRM_D3DQ_WAIT_RELEASE. A released wait lets its job run before the
 * waited fence signals; an unreleased one ends exactly when the fence
 * signals, never later and never earlier; waits of one job are released
 * one by one; the errors of the ioctl and of the flag.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(rel) {
	int fd;
	uint32_t qa, qc, qb, bo, sa, sc, out;
	uint64_t *map;
};

FIXTURE_SETUP(rel)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->qa = t_queue(self->fd, 0, 0);
	self->qc = t_queue(self->fd, 0, 0);
	self->qb = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->qa);
	ASSERT_NE(0, self->qc);
	ASSERT_NE(0, self->qb);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->sa = t_syncobj(self->fd);
	self->sc = t_syncobj(self->fd);
	self->out = t_syncobj(self->fd);
	ASSERT_NE(0, self->sa);
	ASSERT_NE(0, self->sc);
	ASSERT_NE(0, self->out);
}

FIXTURE_TEARDOWN(rel)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

static int wait_release(int fd, uint32_t queue, uint32_t index,
			uint64_t seqno)
{
	struct drm_d3dq_wait_release a = {
		.queue_id = queue,
		.index = index,
		.seqno = seqno,
	};

	return drmIoctl(fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &a) ? -errno : 0;
}

/* On @q: a delay of @ms, a timestamp at @off, then signal (@so, 1). */
static int slow_job(FIXTURE_DATA(rel) *self, uint32_t q, uint64_t ms,
		    uint64_t off, uint32_t so)
{
	struct drm_d3dq_sync sig = t_tl(so, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, ms * T_MS);
	t_cs_timestamp(&cs, self->bo, off);
	return t_submit(self->fd, q, NULL, 0, &sig, 1, &cs);
}

/*
 * On queue b: wait for @waits, write a timestamp at 16, signal
 * (out, 1). Returns the submit's result; *seqno the job's number.
 */
static int waiting_job(FIXTURE_DATA(rel) *self,
		       const struct drm_d3dq_sync *waits, uint32_t n,
		       uint64_t *seqno)
{
	struct drm_d3dq_sync sig = t_tl(self->out, 1);
	struct t_cs cs;
	struct drm_d3dq_submit s = {
		.queue_id = self->qb,
		.waits = DRM_D3DQ_OBJ_ARRAY(n, waits),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, &sig),
	};
	int ret;

	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 16);
	s.cmds = (uint64_t)(uintptr_t)cs.buf;
	s.cmd_bytes = cs.len;
	ret = t_submit_raw(self->fd, &s);
	*seqno = s.seqno;
	return ret;
}

static struct drm_d3dq_sync releasable(uint32_t handle)
{
	struct drm_d3dq_sync s = t_tl(handle, 1);

	s.flags |= DRM_D3DQ_SYNC_RELEASABLE;
	return s;
}

/* Released: the job runs before the waited fence signals. */
TEST_F(rel, early_release)
{
	struct drm_d3dq_sync w = releasable(self->sa);
	struct drm_d3dq_queue_get_state st;
	uint64_t seqno;

	ASSERT_EQ(0, slow_job(self, self->qa, 800, 0, self->sa));
	ASSERT_EQ(0, waiting_job(self, &w, 1, &seqno));
	EXPECT_NE(0, seqno);
	EXPECT_EQ(-ETIME, t_wait(self->fd, self->out, 1, 0));
	ASSERT_EQ(0, wait_release(self->fd, self->qb, 0, seqno));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->sa, 1, 10 * T_SEC));
	EXPECT_NE(0, self->map[2]);
	EXPECT_LT(self->map[2], self->map[0]);
	/* Again, and after the job ran: nothing to do, no error. */
	EXPECT_EQ(0, wait_release(self->fd, self->qb, 0, seqno));
	ASSERT_EQ(0, t_queue_state(self->fd, self->qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

/* Not released: the job starts only once the fence signalled. */
TEST_F(rel, never_later_never_earlier)
{
	struct drm_d3dq_sync w = releasable(self->sa);
	uint64_t seqno, seen;

	ASSERT_EQ(0, slow_job(self, self->qa, 300, 0, self->sa));
	ASSERT_EQ(0, waiting_job(self, &w, 1, &seqno));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	seen = t_now();
	EXPECT_NE(0, self->map[0]);
	EXPECT_LE(self->map[0], self->map[2]);
	EXPECT_GE(seen, self->map[2]);
}

/*
 * Two releasable waits in one job, released separately: releasing the
 * first (long) one leaves the job waiting for the second (shorter).
 */
TEST_F(rel, waits_released_one_by_one)
{
	struct drm_d3dq_sync w[2] = { releasable(self->sa),
				      releasable(self->sc) };
	uint64_t seqno;

	ASSERT_EQ(0, slow_job(self, self->qa, 1000, 0, self->sa));
	ASSERT_EQ(0, slow_job(self, self->qc, 300, 8, self->sc));
	ASSERT_EQ(0, waiting_job(self, w, 2, &seqno));
	ASSERT_EQ(0, wait_release(self->fd, self->qb, 0, seqno));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->sa, 1, 10 * T_SEC));
	/* After c's job, before a's. */
	EXPECT_LE(self->map[1], self->map[2]);
	EXPECT_LT(self->map[2], self->map[0]);
}

/* Every submit gets a new number, across queues. */
TEST_F(rel, seqnos_are_unique)
{
	uint64_t a, b;
	struct drm_d3dq_submit s = { .queue_id = self->qa };

	ASSERT_EQ(0, t_submit_raw(self->fd, &s));
	a = s.seqno;
	s.seqno = 0;
	s.out_flags = 0;
	s.queue_id = self->qc;
	ASSERT_EQ(0, t_submit_raw(self->fd, &s));
	b = s.seqno;
	EXPECT_NE(0, a);
	EXPECT_GT(b, a);
	/* Out fields: not zero on input is refused. */
	s.seqno = 1;
	s.out_flags = 0;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	s.seqno = 0;
	s.out_flags = DRM_D3DQ_SUBMIT_DONE;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	s.out_flags = 0;
	s.pad2 = 1;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
}

TEST_F(rel, errors)
{
	struct drm_d3dq_sync w[2] = { t_tl(self->sa, 1), releasable(self->sa) };
	struct drm_d3dq_sync sig = t_tl(self->sc, 1);
	uint64_t seqno, max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS);

	ASSERT_EQ(0, slow_job(self, self->qa, 300, 0, self->sa));
	/* Wait 0 is not releasable, wait 1 is. */
	ASSERT_EQ(0, waiting_job(self, w, 2, &seqno));
	EXPECT_EQ(-EINVAL, wait_release(self->fd, self->qb, 0, seqno));
	EXPECT_EQ(-EINVAL, wait_release(self->fd, self->qb, 2, seqno));
	EXPECT_EQ(-EINVAL, wait_release(self->fd, self->qb, max, seqno));
	EXPECT_EQ(-EINVAL, wait_release(self->fd, self->qb, 1, 0));
	EXPECT_EQ(-EINVAL, wait_release(self->fd, self->qb, 1, seqno + 1));
	EXPECT_EQ(-ENOENT, wait_release(self->fd, 0xffff, 1, seqno));
	/* The job is on queue b, not a: nothing there to release. */
	EXPECT_EQ(0, wait_release(self->fd, self->qa, 1, seqno));
	/* Releasable only for waits; unknown flags. */
	sig.flags |= DRM_D3DQ_SYNC_RELEASABLE;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->qc, NULL, 0, &sig, 1,
				    NULL));
	w[1].flags |= 1u << 2;
	EXPECT_EQ(-EINVAL, waiting_job(self, &w[1], 1, &seqno));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
}

/*
 * The waited fence fails before any release: the error reaches the job
 * as for any wait (its queue is lost). Released first, the later failure
 * no longer concerns the job.
 */
TEST_F_TIMEOUT(rel, error_before_and_after_release, 60)
{
	struct drm_d3dq_sync w = releasable(self->sa);
	struct drm_d3dq_queue_get_state st;
	uint64_t seqno;

	/* Longer than the default job timeout (2 s): a fails. */
	ASSERT_EQ(0, slow_job(self, self->qa, 3000, 0, self->sa));
	ASSERT_EQ(0, waiting_job(self, &w, 1, &seqno));
	ASSERT_EQ(0, wait_release(self->fd, self->qb, 0, seqno));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->sa, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_queue_state(self->fd, self->qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	ASSERT_EQ(0, t_queue_state(self->fd, self->qa, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);

	/* Now c fails and nobody releases b's wait. */
	w = releasable(self->sc);
	ASSERT_EQ(0, slow_job(self, self->qc, 3000, 8, self->sc));
	{
		struct drm_d3dq_sync sig = t_tl(self->out, 2);
		struct drm_d3dq_submit s = {
			.queue_id = self->qb,
			.waits = DRM_D3DQ_OBJ_ARRAY(1, &w),
			.signals = DRM_D3DQ_OBJ_ARRAY(1, &sig),
		};

		ASSERT_EQ(0, t_submit_raw(self->fd, &s));
	}
	ASSERT_EQ(0, t_wait(self->fd, self->out, 2, 20 * T_SEC));
	ASSERT_EQ(0, t_queue_state(self->fd, self->qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
}

/*
 * A submit with max_syncs = 65,536 releasable waits, each a dependency
 * of its own fence context, on a fence that has not signalled: the job
 * waits for all of them and completes, and the submit costs time linear
 * in the waits (before, the scheduler compared every new context with
 * all earlier ones, 2x10^9 times inside the ioctl, and the VM reported a
 * soft lockup). A lockup would fail the run (scripts/vm-run).
 */
#define MANY_WAITS	65536

FIXTURE(many) {
	int fd;
};

FIXTURE_SETUP(many)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_syncs=65536 job_timeout_ms=60000"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(many)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

TEST_F_TIMEOUT(many, waits_on_65536_contexts, 240)
{
	uint32_t gq = t_queue(self->fd, 0, 0), q = t_queue(self->fd, 0, 0);
	uint32_t gate = t_syncobj(self->fd), done = t_syncobj(self->fd);
	struct drm_d3dq_sync s, *w;
	struct t_cs cs;
	uint64_t start;
	int i;

	ASSERT_NE(0, gq);
	ASSERT_NE(0, q);
	ASSERT_NE(0, gate);
	ASSERT_NE(0, done);
	ASSERT_EQ(MANY_WAITS, t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS));
	w = calloc(MANY_WAITS, sizeof(*w));
	ASSERT_NE(NULL, w);

	/* The gate: a job that delays, so the waits find it unsignalled. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 5 * T_SEC);
	s = t_bin(gate);
	ASSERT_EQ(0, t_submit(self->fd, gq, NULL, 0, &s, 1, &cs));
	for (i = 0; i < MANY_WAITS; i++)
		w[i] = (struct drm_d3dq_sync){ .handle = gate,
					       .flags = DRM_D3DQ_SYNC_RELEASABLE };
	s = t_bin(done);
	start = t_now();
	ASSERT_EQ(0, t_submit(self->fd, q, w, MANY_WAITS, &s, 1, NULL));
	TH_LOG("the submit took %.1f ms",
	       (double)(t_now() - start) / 1e6);
	ASSERT_EQ(0, t_wait(self->fd, done, 0, 120 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, gate, 0));
	EXPECT_EQ(1, t_fence_status(self->fd, done, 0));
	free(w);
}

TEST_HARNESS_MAIN
