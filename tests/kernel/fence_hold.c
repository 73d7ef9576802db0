// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq held jobs (uapi 1.5, DRM_D3DQ_SUBMIT_HOLD): a fence wait that
 * nothing serves yet holds its job unarmed instead of failing with
 * -ENODATA. A held job publishes nothing (no syncobj point, no sync_file,
 * no fence in its buffers, no fence value) until a value write releases
 * it; later jobs of its queue stay behind it; holding propagates to waits
 * on its signals; satisfaction is sticky (R6) and not taken from history
 * (R7); one signal releases many queues; a signal armed later by another
 * queue of the file releases it; held jobs count against the limits and a
 * submit at a limit they fill fails at once (-ENOSPC); destroy, close,
 * REMOVE and unplug free them.
 *
 * Nothing here measures time: a held job is seen held (out flag, fdinfo,
 * empty points), then released, then waited for.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/* Wait until point @point of @so is attached (not signalled): 0/-errno. */
static int available(int fd, uint32_t so, uint64_t point)
{
	if (drmSyncobjTimelineWait(fd, &so, &point, 1, t_deadline(10 * T_SEC),
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE |
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				   NULL))
		return -errno;
	return 0;
}

/* Whether every user of @dmabuf is done (implicit sync): 1, 0, -errno. */
static int dmabuf_idle(int dmabuf)
{
	struct dma_buf_export_sync_file a = {
		.flags = DMA_BUF_SYNC_WRITE, .fd = -1,
	};
	int ret;

	if (ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &a))
		return -errno;
	ret = t_sync_file_signalled(a.fd, 0);
	close(a.fd);
	return ret;
}

FIXTURE(hold) {
	int fd;
	uint32_t q1, q2, q3, bo, out1, out2, out3, bin;
	uint64_t *map;
	struct t_fence f, g;
};

FIXTURE_SETUP(hold)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 5, t_param(self->fd,
					   DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_HOLD);
	self->q1 = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	self->q3 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q1);
	ASSERT_NE(0, self->q2);
	ASSERT_NE(0, self->q3);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->out1 = t_syncobj(self->fd);
	self->out2 = t_syncobj(self->fd);
	self->out3 = t_syncobj(self->fd);
	self->bin = t_syncobj(self->fd);
	ASSERT_NE(0, self->out1);
	ASSERT_NE(0, self->out2);
	ASSERT_NE(0, self->out3);
	ASSERT_NE(0, self->bin);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->f));
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->g));
}

FIXTURE_TEARDOWN(hold)
{
	t_fence_unmap(&self->f);
	t_fence_unmap(&self->g);
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * A held job publishes nothing: no syncobj point (timeline or binary, so
 * no sync_file of it), no fence in its buffer, no fence value, no write;
 * a later job of its queue without waits is held behind it. A CPU signal
 * releases both, in order, and then everything is there.
 */
TEST_F(hold, held_job_publishes_nothing)
{
	struct drm_d3dq_sync w[1], s[3];
	struct drm_d3dq_queue_get_state st;
	uint32_t flags = 0;
	uint64_t seqno = 0, seqno2 = 0;
	const char *text, *line;
	struct t_cs cs;
	int dmabuf, sf = -1;

	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->bo, DRM_CLOEXEC,
					&dmabuf));
	w[0] = t_fs(self->f.handle, 1);
	s[0] = t_tl(self->out1, 1);
	s[1] = t_bin(self->bin);
	s[2] = t_fs(self->g.handle, 7);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 111);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, s, 3, &cs, &flags,
			     &seqno));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_NE(0, seqno);

	/* Behind it: no waits of its own, held all the same. */
	s[0] = t_tl(self->out2, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 8, 222);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, NULL, 0, s, 1, &cs, &flags,
			     &seqno2));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(seqno + 1, seqno2);
	/* Without the flag too: a queue's jobs stay in order. */
	s[0] = t_tl(self->out3, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, self->q1, NULL, 0, s, 1, NULL,
				  &flags, NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);

	EXPECT_EQ(3, t_held(self->fd));
	/* debugfs lists them, and the fence wait that holds the first. */
	text = t_queues_text();
	if (text) {
		char want[64];

		snprintf(want, sizeof(want), "queue %u ", self->q1);
		line = strstr(text, want);
		EXPECT_NE(NULL, line) TH_LOG("%s", text);
		if (line)
			EXPECT_EQ(0, strncmp(strchr(line, '\n') - 6, "held=3", 6));
		snprintf(want, sizeof(want), "job 1 waits fence=%u value=1",
			 self->f.handle);
		EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	}
	EXPECT_EQ(0, t_submitted(self->fd, self->out1));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));
	EXPECT_EQ(0, t_submitted(self->fd, self->out3));
	/* A binary syncobj without a fence exports no sync_file. */
	EXPECT_NE(0, drmSyncobjExportSyncFile(self->fd, self->bin, &sf));
	EXPECT_EQ(-1, sf);
	EXPECT_EQ(1, dmabuf_idle(dmabuf));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q1, &st));
	EXPECT_EQ(0, st.pending_jobs);
	EXPECT_EQ(0, t_value_load(self->g.v));
	EXPECT_EQ(0, self->map[0]);
	EXPECT_EQ(0, self->map[1]);

	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out3, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, self->bin, 0, 10 * T_SEC));
	EXPECT_EQ(0, drmSyncobjExportSyncFile(self->fd, self->bin, &sf));
	EXPECT_LE(0, sf);
	if (sf >= 0)
		close(sf);
	EXPECT_EQ(7, t_value_load(self->g.v));
	EXPECT_EQ(111, self->map[0]);
	EXPECT_EQ(222, self->map[1]);
	EXPECT_EQ(0, t_held(self->fd));
	close(dmabuf);
}

/*
 * Holding propagates: a wait on a held job's signal is held too (with
 * HOLD; without it -ENODATA as in 1.4: the signal is not armed).
 */
TEST_F(hold, propagation)
{
	struct drm_d3dq_sync w[1], s[2];
	uint32_t flags = 0;

	w[0] = t_fs(self->f.handle, 1);
	s[0] = t_fs(self->g.handle, 1);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, s, 2, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);

	w[0] = t_fs(self->g.handle, 1);
	s[0] = t_tl(self->out2, 1);
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q2, w, 1, s, 1, NULL));
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(2, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));

	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_value_load(self->g.v));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(0, t_held(self->fd));
}

/*
 * R6: a value reached and rewound at once still releases the held job.
 * R7: a wait submitted after the rewind needs a new value.
 */
TEST_F(hold, sticky_and_no_history)
{
	struct drm_d3dq_sync w[1], s[1];
	uint32_t flags = 0;

	w[0] = t_fs(self->f.handle, 5);
	s[0] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 5));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(0, t_value_load(self->f.v));

	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(1, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));
	/* Values below it change nothing. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 4));
	EXPECT_EQ(1, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 9));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(0, t_held(self->fd));
}

/*
 * A signal of another queue of the file, armed after the held wait,
 * releases it: the held job is armed with a dependency on that signal's
 * job (its point is attached before the value is reached), and runs
 * once that job completes. The signal's job is held back by a releasable
 * wait on a slow job of q3 (a "gate"), released by WAIT_RELEASE.
 */
TEST_F(hold, released_by_later_queue_signal)
{
	struct drm_d3dq_wait_release rel = { .index = 0 };
	struct drm_d3dq_sync w[1], s[2];
	uint32_t flags = 0;
	uint64_t seqno = 0;
	struct t_cs cs;

	w[0] = t_fs(self->f.handle, 3);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);

	/* The gate: 1.5 s on q3, below the 2 s job timeout. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 1500 * T_MS);
	s[0] = t_tl(self->out3, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q3, NULL, 0, s, 1, &cs));
	w[0] = t_tl(self->out3, 1);
	w[0].flags |= DRM_D3DQ_SYNC_RELEASABLE;
	s[0] = t_fs(self->f.handle, 3);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, self->q1, w, 1, s, 2, NULL,
				  &flags, &seqno));
	EXPECT_EQ(0, flags);

	/* Armed on the signal, before the value is there. */
	ASSERT_EQ(0, available(self->fd, self->out2, 1));
	EXPECT_EQ(0, t_held(self->fd));
	if (t_fence_status(self->fd, self->out3, 1) == 0) {
		/* The gate still runs (else this machine is too slow). */
		EXPECT_EQ(0, t_value_load(self->f.v));
		EXPECT_EQ(0, t_fence_status(self->fd, self->out2, 1));
	}
	rel.queue_id = self->q1;
	rel.seqno = seqno;
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &rel));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(3, t_value_load(self->f.v));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q3));
	self->q3 = 0;
}

/* Many queues held on one fence, all released by one CPU signal. */
TEST_F(hold, many_queues_one_signal)
{
	enum { NQ = 64, PER = 3 };
	struct drm_d3dq_sync w[1], s[1];
	uint32_t q[NQ], so[NQ], flags;
	int i, j;

	w[0] = t_fs(self->f.handle, 1);
	for (i = 0; i < NQ; i++) {
		q[i] = t_queue(self->fd, 0, 0);
		so[i] = t_syncobj(self->fd);
		ASSERT_NE(0, q[i]);
		ASSERT_NE(0, so[i]);
		for (j = 0; j < PER; j++) {
			s[0] = t_tl(so[i], j + 1);
			flags = 0;
			ASSERT_EQ(0, t_submit_hold(self->fd, q[i], j ? NULL : w,
					     j ? 0 : 1, s, 1, NULL, &flags,
					     NULL));
			ASSERT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
		}
	}
	EXPECT_EQ(NQ * PER, t_held(self->fd));
	for (i = 0; i < NQ; i++)
		EXPECT_EQ(0, t_submitted(self->fd, so[i]));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	for (i = 0; i < NQ; i++)
		ASSERT_EQ(0, t_wait(self->fd, so[i], PER, 10 * T_SEC));
	EXPECT_EQ(0, t_held(self->fd));
}

/*
 * Destroying a queue, REMOVE and closing the file free held jobs: their
 * points are never attached and their fence signals never take effect.
 */
TEST_F(hold, destroy_remove_close)
{
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_sync w[1], s[2];
	uint32_t flags = 0;
	int other;

	w[0] = t_fs(self->f.handle, 1);
	s[0] = t_tl(self->out1, 1);
	s[1] = t_fs(self->g.handle, 9);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, s, 2, NULL, &flags,
			     NULL));
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, NULL, 0, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(2, t_held(self->fd));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(0, t_submitted(self->fd, self->out1));
	/* The value that would release them changes nothing now. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	EXPECT_EQ(0, t_value_load(self->g.v));

	/* REMOVE: ~0 satisfies the wait, but the queue is lost: freed. */
	w[0] = t_fs(self->f.handle, 2);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 2, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));

	/* Close with held jobs on several queues. */
	other = t_open(0);
	ASSERT_LE(0, other);
	{
		struct t_fence f2;
		uint32_t qa = t_queue(other, 0, 0), qb = t_queue(other, 0, 0);

		ASSERT_NE(0, qa);
		ASSERT_NE(0, qb);
		ASSERT_EQ(0, t_fence_new(other, 0, 0, &f2));
		w[0] = t_fs(f2.handle, 1);
		ASSERT_EQ(0, t_submit_hold(other, qa, w, 1, NULL, 0, NULL, &flags,
				     NULL));
		ASSERT_EQ(0, t_submit_hold(other, qb, w, 1, NULL, 0, NULL, &flags,
				     NULL));
		ASSERT_EQ(0, t_submit_hold(other, qb, NULL, 0, NULL, 0, NULL,
				     &flags, NULL));
		EXPECT_EQ(3, t_held(other));
		t_fence_unmap(&f2);
	}
	close(other);
	EXPECT_TRUE(t_jobs_gone(1));
}

/*
 * A queue lost by a job timeout frees its held jobs (the arming work
 * finds it lost): they never run, their points are never attached.
 */
TEST_F(hold, lost_queue_frees_held)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w[1], s[1];
	uint32_t flags = 0;
	struct t_cs cs;
	int i;

	/* 3 s of DELAY: past the 2 s job timeout of the defaults. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 3 * T_SEC);
	s[0] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, s, 1, &cs));
	w[0] = t_fs(self->f.handle, 1);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, s, 1, NULL, &flags,
			     NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	/* Signalled, with the timeout's error. */
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 20 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, self->out1, 1));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q1, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	for (i = 0; i < 1000 && t_held(self->fd); i++)
		usleep(10000);
	EXPECT_EQ(0, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));
}

/* Bad input: unknown submit flags; HELD is an out flag only. */
TEST_F(hold, bad_flags)
{
	struct drm_d3dq_submit a = {
		.queue_id = self->q1,
		.flags = DRM_D3DQ_SUBMIT_IMPLICIT << 1,
	};

	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	a.flags = DRM_D3DQ_SUBMIT_HOLD;
	a.out_flags = DRM_D3DQ_SUBMIT_HELD;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	a.out_flags = 0;
	/* HOLD with nothing to hold for runs as any job. */
	EXPECT_EQ(0, t_submit_raw(self->fd, &a));
	EXPECT_EQ(0, a.out_flags & DRM_D3DQ_SUBMIT_HELD);
}

/*
 * Limits: held jobs count against max_pending_jobs of their queue and
 * the file's max_file_job_bytes; a submit that meets a limit filled by
 * held jobs fails at once with -ENOSPC instead of sleeping (R5).
 */
FIXTURE(hlim) {
	int fd;
};

FIXTURE_SETUP(hlim)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_pending_jobs=8 max_file_job_bytes=65536"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(hlim)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

TEST_F(hlim, held_jobs_fill_limits)
{
	struct drm_d3dq_sync w[1];
	uint32_t q1, q2, q3, flags;
	struct t_fence f;
	int i, ret = 0, n;

	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	q3 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, q3);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	w[0] = t_fs(f.handle, 1);

	/* The queue: 8 held jobs, the 9th fails at once. */
	for (i = 0; i < 8; i++) {
		flags = 0;
		ASSERT_EQ(0, t_submit_hold(self->fd, q1, w, 1, NULL, 0, NULL, &flags,
				     NULL));
		ASSERT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	}
	EXPECT_EQ(-ENOSPC, t_submit_hold(self->fd, q1, w, 1, NULL, 0, NULL, NULL,
				   NULL));
	EXPECT_EQ(-ENOSPC, t_submit(self->fd, q1, NULL, 0, NULL, 0, NULL));

	/* The file: held jobs on q2 fill its bytes; q3 fails at once. */
	for (n = 0; n < 1000; n++) {
		ret = t_submit_hold(self->fd, q2, w, 1, NULL, 0, NULL, NULL,
			      NULL);
		if (ret)
			break;
		if (n % 7 == 6) {
			/* A queue holds at most 8: another one. */
			q2 = t_queue(self->fd, 0, 0);
			ASSERT_NE(0, q2);
		}
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_LT(n, 1000);
	/* The file's bytes, not a queue's count (a queue takes 7 here). */
	EXPECT_LT(7, n);
	/* A queue without held jobs, a job of the same size: at once. */
	EXPECT_EQ(-ENOSPC, t_submit_hold(self->fd, q3, w, 1, NULL, 0, NULL, NULL,
				   NULL));
	EXPECT_EQ(8 + n, t_held(self->fd));

	/* Released: everything runs, and there is room again. */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_EQ(0, t_submit(self->fd, q3, NULL, 0, NULL, 0, NULL));
	t_fence_unmap(&f);
}

/*
 * Files of one user (issue 39, item 1): held jobs are bounded per file
 * (max_file_held_jobs, at most a quarter of max_user_jobs), and a submit
 * that meets the user's bound while armed jobs hold part of it sleeps
 * until they are freed, whoever armed them; only when held jobs alone
 * fill it does it fail at once with -ENOSPC (R5).
 */
#define ULIM_FILES	4

FIXTURE(ulim) {
	int fd[ULIM_FILES];
	uint32_t q[ULIM_FILES];
	struct t_fence f[ULIM_FILES];
};

FIXTURE_SETUP(ulim)
{
	int i;

	for (i = 0; i < ULIM_FILES; i++)
		self->fd[i] = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	/* 3 held jobs per file: min(3, 12 / 4). */
	ASSERT_EQ(0, t_reload("max_user_jobs=12 max_file_held_jobs=3"));
	for (i = 0; i < ULIM_FILES; i++) {
		self->fd[i] = t_open(0);
		ASSERT_LE(0, self->fd[i]);
		self->q[i] = t_queue(self->fd[i], 0, 0);
		ASSERT_NE(0, self->q[i]);
		ASSERT_EQ(0, t_fence_new(self->fd[i], 0, 0, &self->f[i]));
	}
}

FIXTURE_TEARDOWN(ulim)
{
	int i;

	t_value_unmap_all();
	for (i = 0; i < ULIM_FILES; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	if (!t_can_reload())
		return;
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* Hold @n jobs of @fd's queue @q on F >= 1. */
static int hold_n(int fd, uint32_t q, uint32_t handle, int n)
{
	struct drm_d3dq_sync w = t_fs(handle, 1);
	uint32_t flags;
	int i, ret;

	for (i = 0; i < n; i++) {
		flags = 0;
		ret = t_submit_hold(fd, q, &w, 1, NULL, 0, NULL, &flags, NULL);
		if (ret)
			return ret;
		if (!(flags & DRM_D3DQ_SUBMIT_HELD))
			return -EPROTO;
	}
	return 0;
}

TEST_F(ulim, armed_jobs_are_waited_for)
{
	struct t_cs cs;
	int i;

	/* A's held backlog stops at 3: the user has room left for B. */
	ASSERT_EQ(0, hold_n(self->fd[0], self->q[0], self->f[0].handle, 3));
	EXPECT_EQ(-ENOSPC, hold_n(self->fd[0], self->q[0], self->f[0].handle,
				  1));
	EXPECT_EQ(3, t_held(self->fd[0]));
	/* B fills the rest with armed jobs, then one more: it sleeps. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 100 * T_MS);
	for (i = 0; i < 9; i++)
		ASSERT_EQ(0, t_submit(self->fd[1], self->q[1], NULL, 0, NULL,
				      0, &cs));
	EXPECT_EQ(0, t_submit(self->fd[1], self->q[1], NULL, 0, NULL, 0, &cs));
	EXPECT_EQ(0, t_held(self->fd[1]));
	ASSERT_EQ(0, t_fence_signal(self->fd[0], self->f[0].handle, 1));
	EXPECT_TRUE(t_jobs_gone(ULIM_FILES));
}

TEST_F(ulim, held_jobs_alone_are_enospc)
{
	uint32_t q2;
	int i;

	q2 = t_queue(self->fd[0], 0, 0);
	ASSERT_NE(0, q2);
	/* 3 held jobs of each of four files: the user's 12, all held. */
	for (i = 0; i < ULIM_FILES; i++)
		ASSERT_EQ(0, hold_n(self->fd[i], self->q[i], self->f[i].handle,
				    3));
	/* Nothing armed frees room: at once, from any file. */
	EXPECT_EQ(-ENOSPC, t_submit(self->fd[0], q2, NULL, 0, NULL, 0, NULL));
	EXPECT_EQ(-ENOSPC, t_submit(self->fd[3], self->q[3], NULL, 0, NULL, 0,
				    NULL));
	/* Released: everything runs, and there is room again. */
	for (i = 0; i < ULIM_FILES; i++)
		ASSERT_EQ(0, t_fence_signal(self->fd[i], self->f[i].handle, 1));
	EXPECT_TRUE(t_jobs_gone(ULIM_FILES));
	EXPECT_EQ(0, t_submit(self->fd[0], q2, NULL, 0, NULL, 0, NULL));
	EXPECT_TRUE(t_jobs_gone(ULIM_FILES));
}

/* Unplug with held jobs: freed, nothing leaks, no WARN. */
T_UNPLUG_FIXTURE(hunplug)

TEST_F(hunplug, held_jobs)
{
	struct drm_d3dq_sync w[1], s[1];
	uint32_t q1, q2, out, flags = 0;
	struct t_fence f;

	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	out = t_syncobj(self->fd);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, out);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	w[0] = t_fs(f.handle, 1);
	s[0] = t_tl(out, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, q1, w, 1, s, 1, NULL, &flags, NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_submit_hold(self->fd, q2, w, 1, NULL, 0, NULL, &flags, NULL));
	ASSERT_EQ(0, t_submit_hold(self->fd, q2, NULL, 0, NULL, 0, NULL, &flags,
			     NULL));

	ASSERT_EQ(0, t_unbind(0));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	/* The teardown checks that nothing is left. */
	t_fence_unmap(&f);
}

TEST_HARNESS_MAIN
