// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fence waits and signals in SUBMIT (uapi 1.4,
 * DRM_D3DQ_SYNC_FENCE): a signal sets the value when its job completes,
 * not when it is submitted, in completion order across queues, rewinds
 * included, inside SUBMIT for a job run there; a wait on a reached value
 * has no dependency, a wait on a pending signal of the same file orders
 * the jobs and is released early (and for good) by any write that
 * reaches the value; a wait that nothing brings is refused with -ENODATA
 * and publishes nothing; another file's signals are never used; jobs
 * that fail set nothing; queue destroy, REMOVE, close and unplug with
 * pending signals leak nothing; bad input.
 *
 * Jobs are held back by a "gate": a releasable wait on a slow job of a
 * queue of its own, released (DRM_D3DQ_WAIT_RELEASE) when the test says,
 * so what happens before and after is a matter of order, not of time.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define FOREVER		INT64_MAX
/* A gate's job: well below the job timeout (2 s by default). */
#define GATE_MS		1500

static struct drm_d3dq_sync releasable(uint32_t handle, uint64_t point)
{
	struct drm_d3dq_sync s = t_tl(handle, point);

	s.flags |= DRM_D3DQ_SYNC_RELEASABLE;
	return s;
}

/*
 * A job on @q: @nw waits, then the commands of @cs (may be NULL), then
 * @ns signals. 0 or -errno; *seqno and *out_flags if not NULL.
 */
static int job(int fd, uint32_t q, const struct drm_d3dq_sync *w,
	       uint32_t nw, const struct drm_d3dq_sync *s, uint32_t ns,
	       const struct t_cs *cs, uint64_t *seqno, uint32_t *out_flags)
{
	return t_submit_out(fd, q, w, nw, s, ns, cs, out_flags, seqno);
}

/* A gate: a slow job and a releasable wait on it (see the top). */
struct gate {
	int fd;
	uint32_t queue;		/* the gate's own queue */
	uint32_t syncobj;	/* timeline, point 1 */
	uint32_t held_queue;	/* the queue of the job it holds */
	uint64_t held_seqno;	/* that job */
};

static int gate_open(struct gate *g, int fd)
{
	struct drm_d3dq_sync sig;
	struct t_cs cs;

	memset(g, 0, sizeof(*g));
	g->fd = fd;
	g->queue = t_queue(fd, 0, 0);
	g->syncobj = t_syncobj(fd);
	if (!g->queue || !g->syncobj)
		return -1;
	sig = t_tl(g->syncobj, 1);
	t_cs_init(&cs);
	t_cs_delay(&cs, GATE_MS * T_MS);
	return t_submit(fd, g->queue, NULL, 0, &sig, 1, &cs);
}

/* The wait to put first in the held job (index 0). */
static struct drm_d3dq_sync gate_wait(const struct gate *g)
{
	return releasable(g->syncobj, 1);
}

/* Remember the job the gate holds. */
static void gate_holds(struct gate *g, uint32_t queue, uint64_t seqno)
{
	g->held_queue = queue;
	g->held_seqno = seqno;
}

/* Let the held job go. */
static int gate_release(struct gate *g)
{
	struct drm_d3dq_wait_release a = {
		.queue_id = g->held_queue,
		.index = 0,
		.seqno = g->held_seqno,
	};

	return t_ioctl(g->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &a);
}

/* Stop the gate's job (after gate_release(): nobody waits for it). */
static void gate_close(struct gate *g)
{
	if (g->queue)
		t_queue_destroy(g->fd, g->queue);
	g->queue = 0;
}

FIXTURE(fs) {
	int fd;
	uint32_t q1, q2, q3, bo, out1, out2, out3;
	uint64_t *map;
	struct gate g1, g2;
};

FIXTURE_SETUP(fs)
{
	uint64_t version;

	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has them: their absence is a failure. */
	version = t_param(self->fd, DRM_D3DQ_PARAM_UAPI_VERSION);
	ASSERT_LE((1u << 16) | 4, version);
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_SUBMIT);
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
	ASSERT_NE(0, self->out1);
	ASSERT_NE(0, self->out2);
	ASSERT_NE(0, self->out3);
}

FIXTURE_TEARDOWN(fs)
{
	t_value_unmap_all();
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Status of timeline point 1 of @so: 1 signalled, 0 not, < 0 error. */
static int done1(int fd, uint32_t so)
{
	return t_fence_status(fd, so, 1);
}

/*
 * A signal takes effect when its job completes: after its memory writes
 * (seen by whoever sees the value), never at the submit; events fire.
 */
TEST_F(fs, signal_on_completion)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	struct t_cs cs;
	uint64_t seqno;
	int efd;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, 5, efd));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 5);
	s[1] = t_tl(self->out1, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 111);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, &cs, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);

	/* Submitted, not run: nothing changed. */
	EXPECT_EQ(0, t_value_load(f.v));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, f.handle, 5, 0));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(0, done1(self->fd, self->out1));

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_fence_wait1(self->fd, f.handle, 5, FOREVER));
	EXPECT_EQ(5, t_value_load(f.v));
	/* The job's write is seen by whoever sees the value. */
	EXPECT_EQ(111, __atomic_load_n(&self->map[0], __ATOMIC_ACQUIRE));
	EXPECT_EQ(1, t_efd_take(efd));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	gate_close(&self->g1);
	close(efd);
}

/* A queue signal sets exactly its value, lower ones too (R3). */
TEST_F(fs, rewind_by_queue_signal)
{
	struct drm_d3dq_sync s[2];
	struct t_fence f;
	int efd;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_new(self->fd, 10, 0, &f));
	ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, 7, efd));
	EXPECT_EQ(1, t_efd_take(efd));
	ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, 11, efd));

	s[0] = t_fs(f.handle, 3);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 2, NULL, NULL,
			 NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(3, t_value_load(f.v));
	/* A rewind fires nothing. */
	EXPECT_EQ(0, t_efd_take(efd));

	/* 0 and ~0 are values like others. */
	s[0] = t_fs(f.handle, 0);
	s[1] = t_tl(self->out1, 2);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 2, NULL, NULL,
			 NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 2, 10 * T_SEC));
	EXPECT_EQ(0, t_value_load(f.v));
	s[0] = t_fs(f.handle, UINT64_MAX);
	s[1] = t_tl(self->out1, 3);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 2, NULL, NULL,
			 NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 3, 10 * T_SEC));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	EXPECT_EQ(1, t_efd_take(efd));
	/* CPU signals still work after queue signals. */
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 4));
	EXPECT_EQ(4, t_value_load(f.v));
	close(efd);
}

/*
 * R4: signals of two queues take effect in the order their jobs
 * complete. q1's signal of 1 is submitted first and completes last, so
 * the fence ends at 1, not at the 2 that q2 submitted later.
 */
TEST_F(fs, completion_order)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 1);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);

	s[0] = t_fs(f.handle, 2);
	s[1] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, NULL, 0, s, 2, NULL, NULL,
			 NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(2, t_value_load(f.v));
	EXPECT_EQ(0, done1(self->fd, self->out1));

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	/* The job that completed last set the value. */
	EXPECT_EQ(1, t_value_load(f.v));
	gate_close(&self->g1);
}

/*
 * A job run inside SUBMIT (DRM_D3DQ_SUBMIT_DONE) has set its fences when
 * the ioctl returns.
 */
TEST_F(fs, direct_job_signals_inside_submit)
{
	struct drm_d3dq_sync s[2];
	struct t_fence f, g;
	struct t_cs cs;
	uint32_t out_flags = 0;
	int was = t_direct_submit(1);

	ASSERT_LE(0, was);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, t_fence_new(self->fd, 9, DRM_D3DQ_FENCE_SHARED, &g));
	s[0] = t_fs(f.handle, 7);
	s[1] = t_fs(g.handle, 8);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 8, 222);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 2, &cs, NULL,
			 &out_flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, out_flags);
	if (out_flags & DRM_D3DQ_SUBMIT_DONE) {
		EXPECT_EQ(7, t_value_load(f.v));
		EXPECT_EQ(8, t_value_load(g.v));
		EXPECT_EQ(222, self->map[1]);
	}
	EXPECT_LE(0, t_direct_submit(was));
}

/*
 * A wait on a value already reached makes no dependency: the job runs
 * inside SUBMIT. A value reached before a rewind does not count (R7).
 */
TEST_F(fs, wait_reached_no_dependency)
{
	struct drm_d3dq_sync w[2];
	struct t_fence f;
	struct t_cs cs;
	uint32_t out_flags = 0;
	int was = t_direct_submit(1);

	ASSERT_LE(0, was);
	ASSERT_EQ(0, t_fence_new(self->fd, 5, 0, &f));
	w[0] = t_fs(f.handle, 5);
	w[1] = t_fs(f.handle, 0);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 2, NULL, 0, &cs, NULL,
			 &out_flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, out_flags);
	EXPECT_EQ(1, self->map[0]);

	/* Many of them (a join fence beyond 32 dependencies): none. */
	{
		struct drm_d3dq_sync many[40];
		int i;

		for (i = 0; i < 40; i++)
			many[i] = t_fs(f.handle, i % 6);
		out_flags = 0;
		ASSERT_EQ(0, job(self->fd, self->q1, many, 40, NULL, 0, NULL,
				 NULL, &out_flags));
		EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, out_flags);
	}

	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 100));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 2));
	EXPECT_EQ(-ENODATA, job(self->fd, self->q1, w, 1, NULL, 0, NULL, NULL,
				NULL));
	EXPECT_LE(0, t_direct_submit(was));
}

/*
 * A wait on a pending signal of this file orders the jobs: the waiting
 * job runs after the signalling one, and sees its value (R17).
 */
TEST_F(fs, wait_on_armed_signal_orders)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	struct t_cs cs;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 4);
	s[1] = t_tl(self->out1, 1);
	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 0);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, &cs, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);

	/* Waits for 3: the pending 4 brings it. */
	w[0] = t_fs(f.handle, 3);
	s[0] = t_tl(self->out2, 1);
	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 8);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, &cs, NULL, NULL));
	/* And a job after it on the same queue waits in turn. */
	s[0] = t_tl(self->out2, 2);
	ASSERT_EQ(0, job(self->fd, self->q2, NULL, 0, s, 1, NULL, NULL,
			 NULL));
	EXPECT_EQ(0, done1(self->fd, self->out2));
	EXPECT_EQ(0, self->map[1]);

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	/* The value was there before the waiting job could run. */
	EXPECT_EQ(4, t_value_load(f.v));
	EXPECT_EQ(1, done1(self->fd, self->out1));
	EXPECT_NE(0, self->map[0]);
	EXPECT_LE(self->map[0], self->map[1]);
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 2, 10 * T_SEC));
	gate_close(&self->g1);
}

/*
 * Released early: a CPU signal, or another queue's signal, that reaches
 * the value lets the waiting job run while the signal it depended on is
 * still held back.
 */
TEST_F(fs, early_release)
{
	struct drm_d3dq_sync w[1], s[2];
	struct drm_d3dq_queue_get_state st;
	struct t_fence f;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 10);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);

	/* By the CPU. */
	w[0] = t_fs(f.handle, 4);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));
	EXPECT_EQ(0, done1(self->fd, self->out2));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 4));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(0, done1(self->fd, self->out1));

	/* By another queue's signal. */
	w[0] = t_fs(f.handle, 8);
	s[0] = t_tl(self->out2, 2);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));
	EXPECT_EQ(0, t_fence_status(self->fd, self->out2, 2));
	s[0] = t_fs(f.handle, 9);
	s[1] = t_tl(self->out3, 1);
	ASSERT_EQ(0, job(self->fd, self->q3, NULL, 0, s, 2, NULL, NULL,
			 NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 2, 10 * T_SEC));
	EXPECT_EQ(0, done1(self->fd, self->out1));

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(10, t_value_load(f.v));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	gate_close(&self->g1);
}

/*
 * Sticky (R6): a wait released by a value stays released when the value
 * is rewound before the waiting job's turn came.
 */
TEST_F(fs, release_is_sticky)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	ASSERT_EQ(0, gate_open(&self->g2, self->fd));
	/* The signal it depends on, held. */
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 4);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);
	/* q2: a held job, then the waiting one behind it. */
	w[0] = gate_wait(&self->g2);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, NULL, 0, NULL, &seqno,
			 NULL));
	gate_holds(&self->g2, self->q2, seqno);
	w[0] = t_fs(f.handle, 4);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));

	/* Reached, then rewound, before the waiting job's turn. */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 4));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	ASSERT_EQ(0, gate_release(&self->g2));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(0, done1(self->fd, self->out1));
	EXPECT_EQ(0, t_value_load(f.v));

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(4, t_value_load(f.v));
	gate_close(&self->g1);
	gate_close(&self->g2);
}

/*
 * Nothing brings the value: -ENODATA, and nothing of the job is
 * published (its syncobj point, its fence signal, its place in the
 * queue). A pending signal below the value does not bring it.
 */
TEST_F(fs, nothing_pending_is_enodata)
{
	struct drm_d3dq_sync w[1], s[3];
	struct drm_d3dq_queue_get_state st;
	struct t_fence f, g;
	struct t_cs cs;
	uint64_t seqno, point = 0;
	int was = t_direct_submit(1);

	ASSERT_LE(0, was);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, t_fence_new(self->fd, 1, 0, &g));
	w[0] = t_fs(f.handle, 1);
	s[0] = t_fs(g.handle, 50);
	s[1] = t_tl(self->out2, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 5);
	EXPECT_EQ(-ENODATA, job(self->fd, self->q2, w, 1, s, 2, &cs, NULL,
				NULL));

	/* A pending 2 does not bring 3. */
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 2);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);
	w[0] = t_fs(f.handle, 3);
	s[0] = t_fs(g.handle, 50);
	s[1] = t_tl(self->out2, 1);
	EXPECT_EQ(-ENODATA, job(self->fd, self->q2, w, 1, s, 2, &cs, NULL,
				NULL));

	/* Nothing was queued or attached, nothing ran or was set. */
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(0, st.pending_jobs);
	EXPECT_EQ(0, drmSyncobjQuery(self->fd, &self->out2, &point, 1));
	EXPECT_EQ(0, point);
	EXPECT_EQ(1, t_value_load(g.v));
	EXPECT_EQ(0, self->map[0]);

	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(2, t_value_load(f.v));
	EXPECT_EQ(1, t_value_load(g.v));
	EXPECT_EQ(0, self->map[0]);
	/* Reached now: accepted, without a dependency. */
	w[0] = t_fs(f.handle, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 2, &cs, NULL, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(50, t_value_load(g.v));
	EXPECT_EQ(5, self->map[0]);
	gate_close(&self->g1);
	EXPECT_LE(0, t_direct_submit(was));
}

/*
 * Another file's pending signal is never used, even of the same shared
 * fence: -ENODATA; once it took effect, the value is simply reached.
 */
TEST_F(fs, other_files_signals_unused)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f, fo;
	struct gate go;
	uint32_t qo, outo;
	uint64_t seqno;
	int other, xfd;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	xfd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, xfd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_import(other, xfd, &fo));
	ASSERT_EQ(0, t_fence_map(other, &fo));
	qo = t_queue(other, 0, 0);
	outo = t_syncobj(other);
	ASSERT_NE(0, qo);
	ASSERT_NE(0, outo);
	ASSERT_EQ(0, gate_open(&go, other));
	w[0] = gate_wait(&go);
	s[0] = t_fs(fo.handle, 6);
	s[1] = t_tl(outo, 1);
	ASSERT_EQ(0, job(other, qo, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&go, qo, seqno);

	w[0] = t_fs(f.handle, 6);
	s[0] = t_tl(self->out1, 1);
	EXPECT_EQ(-ENODATA, job(self->fd, self->q1, w, 1, s, 1, NULL, NULL,
				NULL));

	ASSERT_EQ(0, gate_release(&go));
	ASSERT_EQ(0, t_wait(other, outo, 1, 10 * T_SEC));
	EXPECT_EQ(6, t_value_load(f.v));
	EXPECT_EQ(6, t_value_load(fo.v));
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 1, NULL, NULL, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	gate_close(&go);
	t_value_unmap(fo.v);
	close(other);
	close(xfd);
}

/*
 * Destroying the handle a wait came through releases it (R14); the
 * signal it depended on still takes effect without a handle.
 */
TEST_F(fs, destroy_handle_releases_wait)
{
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 3);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);
	w[0] = t_fs(f.handle, 3);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));
	EXPECT_EQ(0, done1(self->fd, self->out2));

	ASSERT_EQ(0, t_fence_destroy(self->fd, f.handle));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(0, done1(self->fd, self->out1));
	ASSERT_EQ(0, gate_release(&self->g1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	/* The mapping outlives the handle, and the signal took effect. */
	EXPECT_EQ(3, t_value_load(f.v));
	gate_close(&self->g1);
	t_value_unmap(f.v);
}

/*
 * A job that does not complete sets nothing. Destroying its queue
 * cancels it: the value stays, and a job that depended on its signal
 * (not released otherwise) loses its queue, as for any failed wait.
 */
TEST_F(fs, cancelled_job_sets_nothing)
{
	struct drm_d3dq_sync w[1], s[2];
	struct drm_d3dq_queue_get_state st;
	struct t_fence f;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 1, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 5);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	w[0] = t_fs(f.handle, 5);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));

	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	/* The gate's error cancels the held job at once. */
	gate_close(&self->g1);
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_GT(0, done1(self->fd, self->out1));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_GT(0, done1(self->fd, self->out2));
	EXPECT_EQ(1, t_value_load(f.v));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
	/* The fence itself is fine. */
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	EXPECT_EQ(5, t_value_load(f.v));
}

/*
 * A wait is satisfied by any signal that reaches its value (issue 38,
 * item 5): bound at submit to the last armed of two pending signals of
 * 5, it does not fail with that one's job when an earlier one will
 * still write 5; it is bound to that one and runs after it. The failed
 * job sets nothing.
 */
TEST_F(fs, failed_signal_rebinds_wait)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f;
	struct t_cs cs;
	uint64_t seqno;

	ASSERT_EQ(0, t_fence_new(self->fd, 1, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	ASSERT_EQ(0, gate_open(&self->g2, self->fd));
	/* A, behind gate 1, and B, behind gate 2, both bring 5. */
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 5);
	s[1] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);
	w[0] = gate_wait(&self->g2);
	s[1] = t_tl(self->out3, 1);
	ASSERT_EQ(0, job(self->fd, self->q3, w, 1, s, 2, NULL, NULL, NULL));
	/* C waits for 5: bound to B's signal, the last armed. */
	w[0] = t_fs(f.handle, 5);
	s[0] = t_tl(self->out2, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 7);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, &cs, NULL, NULL));

	/* B is cancelled: its queue destroyed, its gate failed. */
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q3));
	self->q3 = 0;
	gate_close(&self->g2);
	ASSERT_EQ(0, t_wait(self->fd, self->out3, 1, 10 * T_SEC));
	EXPECT_GT(0, done1(self->fd, self->out3));
	/* C did not fail with B (it may have run already if A did). */
	EXPECT_LE(0, done1(self->fd, self->out2));

	/* A runs (its gate may have opened by itself): 5, then C. */
	gate_release(&self->g1);
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(1, done1(self->fd, self->out1));
	EXPECT_EQ(1, done1(self->fd, self->out2));
	EXPECT_EQ(5, t_value_load(f.v));
	EXPECT_EQ(7, self->map[0]);
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	gate_close(&self->g1);
}

/* A job that times out sets nothing either. */
TEST_F(fs, timed_out_job_sets_nothing)
{
	uint64_t timeout = t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	uint64_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS);
	struct drm_d3dq_sync s[2];
	struct t_fence f;
	struct t_cs cs;

	if (timeout + T_SEC > max)
		SKIP(return, "the job timeout is too long for a DELAY");
	ASSERT_EQ(0, t_fence_new(self->fd, 1, 0, &f));
	s[0] = t_fs(f.handle, 5);
	s[1] = t_tl(self->out1, 1);
	t_cs_init(&cs);
	t_cs_delay(&cs, timeout + T_SEC);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 2, &cs, NULL, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 30 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, done1(self->fd, self->out1));
	EXPECT_EQ(1, t_value_load(f.v));
}

/*
 * REMOVE with pending signals: every fence reads ~0 and stays there, the
 * cancelled jobs' signals do nothing; closing a file with pending
 * signals of a shared fence leaves the value as it was. No leak.
 */
TEST_F(fs, remove_and_close_with_pending_signals)
{
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f, sh, sho;
	struct gate go;
	uint32_t qo;
	uint64_t seqno;
	int other, xfd;

	/* Close: another file's pending signal of a shared fence. */
	ASSERT_EQ(0, t_fence_new(self->fd, 2, DRM_D3DQ_FENCE_SHARED, &sh));
	xfd = t_fence_export(self->fd, sh.handle);
	ASSERT_LE(0, xfd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_import(other, xfd, &sho));
	ASSERT_EQ(0, t_fence_map(other, &sho));
	qo = t_queue(other, 0, 0);
	ASSERT_NE(0, qo);
	ASSERT_EQ(0, gate_open(&go, other));
	w[0] = gate_wait(&go);
	s[0] = t_fs(sho.handle, 20);
	ASSERT_EQ(0, job(other, qo, w, 1, s, 1, NULL, &seqno, NULL));
	t_value_unmap(sho.v);
	close(other);
	/* Closing cancels the gate's job, and so the held one. */
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(2, t_value_load(sh.v));

	/* REMOVE: a held signal, and a wait bound to it. */
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 5);
	s[1] = t_fs(sh.handle, 6);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 2, NULL, &seqno, NULL));
	w[0] = t_fs(f.handle, 5);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, s, 1, NULL, NULL, NULL));
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(sh.v));
	/* The wait was released by ~0. */
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(sh.v));
	t_value_unmap(f.v);
	t_value_unmap(sh.v);
	close(xfd);
}

/* Bad input: flags, handles, counts; WAIT_RELEASE of a fence wait. */
TEST_F(fs, bad_input)
{
	struct drm_d3dq_sync w[1], s[1], *many;
	struct drm_d3dq_wait_release rel = { .queue_id = 0 };
	uint64_t max_syncs = t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS);
	struct t_fence f;
	uint64_t seqno;
	uint32_t i;

	ASSERT_EQ(0, t_fence_new(self->fd, 5, 0, &f));
	/* FENCE stands alone. */
	w[0] = t_fs(f.handle, 1);
	w[0].flags |= DRM_D3DQ_SYNC_TIMELINE;
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, w, 1, NULL, 0, NULL, NULL,
			       NULL));
	w[0].flags = DRM_D3DQ_SYNC_FENCE | DRM_D3DQ_SYNC_RELEASABLE;
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, w, 1, NULL, 0, NULL, NULL,
			       NULL));
	s[0] = t_fs(f.handle, 1);
	s[0].flags |= DRM_D3DQ_SYNC_TIMELINE;
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, NULL, 0, s, 1, NULL, NULL,
			       NULL));
	s[0].flags = DRM_D3DQ_SYNC_FENCE | DRM_D3DQ_SYNC_RELEASABLE;
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, NULL, 0, s, 1, NULL, NULL,
			       NULL));
	/* Unknown handles: a syncobj is no fence. */
	w[0] = t_fs(f.handle + 100, 1);
	EXPECT_EQ(-ENOENT, job(self->fd, self->q1, w, 1, NULL, 0, NULL, NULL,
			       NULL));
	w[0] = t_fs(0, 0);
	EXPECT_EQ(-ENOENT, job(self->fd, self->q1, w, 1, NULL, 0, NULL, NULL,
			       NULL));
	s[0] = t_fs(self->out1 + 1000, 1);
	EXPECT_EQ(-ENOENT, job(self->fd, self->q1, NULL, 0, s, 1, NULL, NULL,
			       NULL));
	/* Another file's handle names nothing here. */
	{
		int other = t_open(0);
		struct t_fence fo[2];

		ASSERT_LE(0, other);
		ASSERT_EQ(0, t_fence_new(other, 0, 0, &fo[0]));
		ASSERT_EQ(0, t_fence_new(other, 0, 0, &fo[1]));
		ASSERT_NE(f.handle, fo[1].handle);
		s[0] = t_fs(fo[1].handle, 1);
		EXPECT_EQ(-ENOENT, job(self->fd, self->q1, NULL, 0, s, 1, NULL,
				       NULL, NULL));
		w[0] = t_fs(fo[1].handle, 0);
		EXPECT_EQ(-ENOENT, job(self->fd, self->q1, w, 1, NULL, 0, NULL,
				       NULL, NULL));
		t_value_unmap(fo[0].v);
		t_value_unmap(fo[1].v);
		close(other);
	}
	/* Counted against max_syncs like the others. */
	many = calloc(max_syncs + 1, sizeof(*many));
	ASSERT_NE(NULL, many);
	for (i = 0; i <= max_syncs; i++)
		many[i] = t_fs(f.handle, 1);
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, many, max_syncs + 1, NULL,
			       0, NULL, NULL, NULL));
	EXPECT_EQ(-EINVAL, job(self->fd, self->q1, NULL, 0, many,
			       max_syncs + 1, NULL, NULL, NULL));
	/* max_syncs of each is fine. */
	EXPECT_EQ(0, job(self->fd, self->q1, many, max_syncs, many, max_syncs,
			 NULL, NULL, NULL));
	free(many);
	s[0] = t_tl(self->out1, 1);
	ASSERT_EQ(0, job(self->fd, self->q1, NULL, 0, s, 1, NULL, NULL, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_value_load(f.v));

	/* WAIT_RELEASE of a fence wait: it is not releasable. */
	ASSERT_EQ(0, gate_open(&self->g1, self->fd));
	w[0] = gate_wait(&self->g1);
	s[0] = t_fs(f.handle, 9);
	ASSERT_EQ(0, job(self->fd, self->q1, w, 1, s, 1, NULL, &seqno, NULL));
	gate_holds(&self->g1, self->q1, seqno);
	w[0] = t_fs(f.handle, 9);
	ASSERT_EQ(0, job(self->fd, self->q2, w, 1, NULL, 0, NULL, &seqno,
			 NULL));
	rel.queue_id = self->q2;
	rel.seqno = seqno;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &rel));
	ASSERT_EQ(0, gate_release(&self->g1));
	gate_close(&self->g1);
}

/* Unplug with pending signals and waits: ~0, nothing leaks. */
T_UNPLUG_FIXTURE(unplug)

TEST_F(unplug, pending_signals)
{
	struct drm_d3dq_sync w[1], s[1];
	uint32_t q1, q2, out;
	struct gate g;
	struct t_fence f;
	uint64_t seqno;

	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	out = t_syncobj(self->fd);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, out);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	ASSERT_EQ(0, gate_open(&g, self->fd));
	w[0] = gate_wait(&g);
	s[0] = t_fs(f.handle, 5);
	ASSERT_EQ(0, job(self->fd, q1, w, 1, s, 1, NULL, &seqno, NULL));
	w[0] = t_fs(f.handle, 5);
	s[0] = t_tl(out, 1);
	ASSERT_EQ(0, job(self->fd, q2, w, 1, s, 1, NULL, NULL, NULL));

	ASSERT_EQ(0, t_unbind(0));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	EXPECT_EQ(-ENODEV, t_fence_signal(self->fd, f.handle, 0));
	/* The waiting job was released by ~0; the held one is cancelled. */
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	t_value_unmap(f.v);
}

TEST_HARNESS_MAIN
