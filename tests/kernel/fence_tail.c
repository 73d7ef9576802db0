// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq signals on the last job (uapi 1.8, DRM_D3DQ_SUBMIT_TAIL): a submit
 * of signals only that makes no job when it can. What is asserted: on a
 * queue whose jobs have all completed the signals are set in the call
 * (DONE, seqno 0); on a queue whose last job runs they are set when it
 * completes, after its own signals and before its fence is seen
 * signalled (R17), never before, and in order with the queue's later
 * jobs (R4); they are pending from the call, so a held wait of the file
 * on them is armed at once; a failed last job sets none of them; held
 * jobs, carried waits and the per-job bound make a job instead (seqno
 * non-zero); a job that ends during the call never lets work behind a
 * released wait run ahead of the value; bad input; JOB_ONLY points
 * (uapi 1.13), added only when a job is made, and ARMED_ONLY ones (uapi
 * 1.14), only when it is armed; destroy with signals on a running job.
 *
 * Nothing here measures time: "running" is a DELAY job whose point is
 * checked unsignalled where it matters.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(tail) {
	int fd;
	uint32_t q1, q2, run, out1, out2;
	struct t_fence f, g;
};

FIXTURE_SETUP(tail)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_SUBMIT_TAIL);
	self->q1 = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q1);
	ASSERT_NE(0, self->q2);
	self->run = t_syncobj(self->fd);
	self->out1 = t_syncobj(self->fd);
	self->out2 = t_syncobj(self->fd);
	ASSERT_NE(0, self->run);
	ASSERT_NE(0, self->out1);
	ASSERT_NE(0, self->out2);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->f));
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->g));
}

FIXTURE_TEARDOWN(tail)
{
	t_fence_unmap(&self->f);
	t_fence_unmap(&self->g);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Every job of the queue completed: set in the call, no job. */
TEST_F(tail, idle_queue_sets_in_the_call)
{
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 5),
				      t_tl(self->out1, 1) };
	uint32_t flags = 0;
	uint64_t seqno = 1;

	/* A queue that never ran a job. */
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, &flags, &seqno));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, flags);
	EXPECT_EQ(0, seqno);
	EXPECT_EQ(5, t_value_load(self->f.v));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out1, 1));

	/* After a job, completed; a rewind, as any signal. */
	ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, NULL, 0, NULL));
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 5,
				   t_deadline(10 * T_SEC)));
	s[0] = t_fs(self->f.handle, 2);
	s[1] = t_tl(self->out1, 2);
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, &flags, &seqno));
	/* DONE if that job was done; else it took them. */
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 2, 10 * T_SEC));
	EXPECT_EQ(0, seqno);
	EXPECT_EQ(2, t_value_load(self->f.v));
}

/*
 * The last job runs: its point is attached at once, the value is not
 * there while the job runs, and is there when its point is seen
 * signalled (R17), after the job's own signal of the same fence.
 */
TEST_F(tail, running_job_takes_them)
{
	struct drm_d3dq_sync own = t_fs(self->f.handle, 1);
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 3),
				      t_tl(self->out1, 1) };
	uint32_t flags = 1;
	uint64_t seqno = 1;

	const char *text;

	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 300,
				    self->run, 1, &own));
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, &flags, &seqno));
	EXPECT_EQ(0, seqno);
	EXPECT_EQ(0, flags);
	/* debugfs lists them on the job while it runs. */
	text = t_queues_text();
	ASSERT_NE(NULL, text);
	if (t_fence_status(self->fd, self->run, 1) == 0)
		EXPECT_NE(NULL, strstr(text, "tails=1")) TH_LOG("%s", text);
	EXPECT_EQ(1, t_submitted(self->fd, self->out1));
	if (t_fence_status(self->fd, self->run, 1) == 0)
		EXPECT_EQ(0, t_value_load(self->f.v));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(3, t_value_load(self->f.v));

	/* A job after them sets its value last (R4). */
	own = t_fs(self->f.handle, 7);
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 100,
				    self->run, 2, NULL));
	s[0] = t_fs(self->f.handle, 6);
	s[1] = t_tl(self->out1, 2);
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, NULL));
	ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, &own, 1, NULL));
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 7,
				   t_deadline(10 * T_SEC)));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out1, 2));
	/* No job is left to set another value. */
	ASSERT_TRUE(t_no_job_in_flight(self->fd));
	EXPECT_EQ(7, t_value_load(self->f.v));
}

/*
 * Pending from the call: a held wait of this file on the value is armed
 * at once (bound to the running job), before the value is there, and
 * its job runs after it.
 */
TEST_F(tail, pending_from_the_call)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->g.handle, 4) };
	struct drm_d3dq_sync s[1] = { t_tl(self->out2, 1) };
	uint32_t flags = 0;

	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 1, NULL,
				   &flags, NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 300,
				    self->run, 1, NULL));
	s[0] = t_fs(self->g.handle, 4);
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 1, &flags, NULL));
	/* Armed on the pending signal, not on the value. */
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, self->run, 1));
	EXPECT_EQ(4, t_value_load(self->g.v));
	EXPECT_EQ(0, t_held(self->fd));
}

/* A last job that fails (a timeout) sets none of them. */
TEST_F(tail, failed_job_sets_nothing)
{
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 9),
				      t_tl(self->out1, 1) };
	uint64_t seqno = 1;

	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 3000,
				    self->run, 1, NULL));
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_EQ(0, seqno);
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 20 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(0, t_value_load(self->f.v));
	/* The queue is lost: refused as a job would be. */
	EXPECT_EQ(-ECANCELED, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
}

/*
 * Behind a held job or carried waits, and past the bound on one job,
 * the signals make a job (a seqno), in order with the others.
 */
TEST_F(tail, makes_a_job_when_it_must)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->g.handle, 1) };
	struct drm_d3dq_sync s[2];
	uint32_t flags = 0;
	uint64_t seqno = 0;
	int i;

	/* Held. */
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, NULL, 0, NULL,
				   &flags, NULL));
	s[0] = t_fs(self->f.handle, 1);
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 1, &flags, &seqno));
	EXPECT_NE(0, seqno);
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	/* Carried. */
	w[0] = t_fs(self->g.handle, 2);
	ASSERT_EQ(0, t_carry(self->fd, self->q2, w, 1));
	s[0] = t_fs(self->f.handle, 2);
	ASSERT_EQ(0, t_tail(self->fd, self->q2, s, 1, &flags, &seqno));
	EXPECT_NE(0, seqno);
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(0, t_value_load(self->f.v));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 1));
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 1,
				   t_deadline(10 * T_SEC)));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 2));
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 2,
				   t_deadline(10 * T_SEC)));

	/* Eight on one running job, the ninth a job; set in order. */
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 300,
				    self->run, 1, NULL));
	for (i = 0; i < 9; i++) {
		s[0] = t_fs(self->f.handle, 10 + i);
		s[1] = t_tl(self->out1, 1 + i);
		ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
		EXPECT_EQ(i < 8, seqno == 0);
	}
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 9, 10 * T_SEC));
	EXPECT_EQ(18, t_value_load(self->f.v));
}

/*
 * The last job ends while the call gives it the signals: a held wait of
 * the file on the value, released through the signal, must not run
 * before the value is written (R17), whether the job took the signals
 * or the call set them itself, and the call's points are not seen
 * signalled before the value either. The job's length varies around
 * the time the call takes, so that both sides of the race are reached;
 * each round checks that the waiting job's value, written after, is
 * the one that stays. 3000 rounds find 1 to 7 such values without the
 * fix (the value written outside the queue's lock).
 */
TEST_F_TIMEOUT(tail, ending_job_races_the_call, 120)
{
	struct drm_d3dq_sync w[1], s[2];
	unsigned int i, rounds, late = 0;
	uint64_t v, end = t_now() + 20 * T_SEC;
	struct t_cs cs;

	/* 3000 rounds, fewer on a slow (debug) kernel: at most 20 s. */
	for (i = 1; i <= 3000 && t_now() < end; i++) {
		w[0] = t_fs(self->g.handle, 2 * i);
		s[0] = t_fs(self->g.handle, 2 * i + 1);
		s[1] = t_tl(self->out2, i);
		ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, w, 1, s, 2,
					   NULL, NULL, NULL));
		t_cs_init(&cs);
		t_cs_delay(&cs, (i * 7919u) % 60 * T_US);
		s[0] = t_tl(self->run, i);
		ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, s, 1, &cs));
		s[0] = t_fs(self->g.handle, 2 * i);
		s[1] = t_tl(self->out1, i);
		ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, NULL));
		/* The call's own point: seen signalled after the value. */
		ASSERT_EQ(0, t_wait(self->fd, self->out1, i, 10 * T_SEC));
		v = t_value_load(self->g.v);
		late += v < 2 * i;
		ASSERT_EQ(0, t_wait(self->fd, self->out2, i, 10 * T_SEC));
		v = t_value_load(self->g.v);
		late += v != 2 * i + 1;
		ASSERT_LE(2 * i, v);
	}
	rounds = i - 1;
	TH_LOG("%u rounds, %u values written after a point or a wait they"
	       " released", rounds, late);
	EXPECT_EQ(0, late);
}

/* Bad input: every error from the call. */
TEST_F(tail, bad_input)
{
	struct drm_d3dq_sync s[17], w[1] = { t_fs(self->f.handle, 0) };
	struct drm_d3dq_submit a = {
		.queue_id = self->q1,
		.flags = DRM_D3DQ_SUBMIT_TAIL,
		.waits = DRM_D3DQ_OBJ_ARRAY(1, w),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, s),
	};
	struct t_cs cs;
	int i;

	for (i = 0; i < 17; i++)
		s[i] = t_fs(self->f.handle, i);
	/* Waits, commands, CARRY too, more than 16 signals. */
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	a.waits.count = 0;
	t_cs_init(&cs);
	t_cs_delay(&cs, 1);
	a.cmds = (uintptr_t)cs.buf;
	a.cmd_bytes = cs.len;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	a.cmds = 0;
	a.cmd_bytes = 0;
	a.flags |= DRM_D3DQ_SUBMIT_CARRY;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	EXPECT_EQ(-EINVAL, t_tail(self->fd, self->q1, s, 17, NULL, NULL));
	/* Unknown queue, fence, syncobj; a timeline point 0. */
	EXPECT_EQ(-ENOENT, t_tail(self->fd, 999, s, 1, NULL, NULL));
	s[0] = t_fs(self->f.handle + 100, 1);
	EXPECT_EQ(-ENOENT, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
	s[0] = t_tl(self->out1 + 100, 1);
	EXPECT_EQ(-ENOENT, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
	s[0] = t_tl(self->out1, 0);
	EXPECT_EQ(-EINVAL, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
	EXPECT_EQ(0, t_value_load(self->f.v));
	/* No signals at all: nothing to do, done. */
	EXPECT_EQ(0, t_tail(self->fd, self->q1, NULL, 0, NULL, NULL));
}

/*
 * A JOB_ONLY point (uapi 1.13) is added only if the tail makes a job:
 * not when its signals are set in the call, nor when the running last
 * job takes them (its syncobj is not even looked up: a stale handle
 * passes); behind a carried wait it is the job's. On a wait, or with
 * FENCE, it is refused.
 */
TEST_F(tail, job_only_points)
{
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 1),
				      t_tl(self->out1, 1) };
	struct drm_d3dq_sync w[1] = { t_fs(self->g.handle, 1) };
	uint64_t seqno = 1, pt = 7;

	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_SYNC_JOB_ONLY);
	/* Set in the call. */
	s[1].flags |= DRM_D3DQ_SYNC_JOB_ONLY;
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_EQ(0, seqno);
	EXPECT_EQ(1, t_value_load(self->f.v));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &self->out1, &pt, 1));
	EXPECT_EQ(0, pt);

	/* Taken by the running job. */
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 300,
				    self->run, 1, NULL));
	s[0] = t_fs(self->f.handle, 2);
	s[1] = t_tl(self->out1 + 100, 1);
	s[1].flags |= DRM_D3DQ_SYNC_JOB_ONLY;
	seqno = 1;
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_EQ(0, seqno);
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 2,
				   t_deadline(10 * T_SEC)));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &self->out1, &pt, 1));
	EXPECT_EQ(0, pt);

	/* A job, held behind a carried wait, adds it when it completes. */
	ASSERT_EQ(0, t_carry(self->fd, self->q2, w, 1));
	s[0] = t_fs(self->f.handle, 3);
	s[1] = t_tl(self->out1, 2);
	s[1].flags |= DRM_D3DQ_SYNC_JOB_ONLY;
	ASSERT_EQ(0, t_tail(self->fd, self->q2, s, 2, NULL, &seqno));
	EXPECT_NE(0, seqno);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 2, 10 * T_SEC));
	EXPECT_EQ(3, t_value_load(self->f.v));

	/* Not on a wait, not with FENCE. */
	w[0] = t_tl(self->run, 1);
	w[0].flags |= DRM_D3DQ_SYNC_JOB_ONLY;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q1, w, 1, NULL, 0, NULL));
	s[0].flags |= DRM_D3DQ_SYNC_JOB_ONLY;
	EXPECT_EQ(-EINVAL, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
	EXPECT_EQ(3, t_value_load(self->f.v));
}

/*
 * An ARMED_ONLY point (uapi 1.14) is added only if the job is armed: not
 * for a held signal-only job that the write releasing its carried wait
 * completes without the engine (the queue idle), yet for one released
 * behind a running job; a later point satisfies a wait for the skipped
 * one. Without JOB_ONLY it is still skipped by a tail set in the call.
 */
TEST_F(tail, armed_only_points)
{
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 1),
				      t_tl(self->out1, 1) };
	struct drm_d3dq_sync w[1] = { t_fs(self->g.handle, 1) };
	struct drm_d3dq_sync e[1] = { t_tl(self->out1, 2) };
	uint64_t seqno = 0, pt = 7;

	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY);
	/* Held behind a carried wait, completed by the write: no point. */
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	s[1].flags |= DRM_D3DQ_SYNC_ARMED_ONLY;
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_NE(0, seqno);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 1));
	ASSERT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 1,
				   t_deadline(10 * T_SEC)));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &self->out1, &pt, 1));
	EXPECT_EQ(0, pt);

	/* The next point added satisfies a wait for it. */
	ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, e, 1, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));

	/* Released behind a running job: armed, so added. */
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 300,
				    self->run, 1, NULL));
	w[0] = t_fs(self->g.handle, 2);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	s[0] = t_fs(self->f.handle, 2);
	s[1] = t_tl(self->out1, 3);
	s[1].flags |= DRM_D3DQ_SYNC_ARMED_ONLY;
	seqno = 0;
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_NE(0, seqno);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 2));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 3, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, self->run, 1));
	EXPECT_EQ(2, t_value_load(self->f.v));
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &self->out1, &pt, 1));
	EXPECT_EQ(3, pt);

	/* Alone, it is JOB_ONLY too: not added by a tail set in the call. */
	s[0] = t_fs(self->f.handle, 3);
	s[1] = t_tl(self->out1 + 100, 1);
	s[1].flags |= DRM_D3DQ_SYNC_ARMED_ONLY;
	seqno = 1;
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, &seqno));
	EXPECT_EQ(0, seqno);
	EXPECT_EQ(3, t_value_load(self->f.v));

	/* Not on a wait, not with FENCE. */
	w[0] = t_tl(self->run, 1);
	w[0].flags |= DRM_D3DQ_SYNC_ARMED_ONLY;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q1, w, 1, NULL, 0, NULL));
	s[0].flags |= DRM_D3DQ_SYNC_ARMED_ONLY;
	EXPECT_EQ(-EINVAL, t_tail(self->fd, self->q1, s, 1, NULL, NULL));
	EXPECT_EQ(3, t_value_load(self->f.v));
}

/*
 * Destroying the queue while its last job holds tail signals cancels
 * the job: they are never set, nothing leaks (the teardown checks).
 */
TEST_F(tail, destroy_with_signals_on_a_job)
{
	struct drm_d3dq_sync s[2] = { t_fs(self->f.handle, 4),
				      t_tl(self->out1, 1) };

	ASSERT_EQ(0, t_submit_delay(self->fd, self->q1, 1000,
				    self->run, 1, NULL));
	ASSERT_EQ(0, t_tail(self->fd, self->q1, s, 2, NULL, NULL));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_GT(0, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(0, t_value_load(self->f.v));
	EXPECT_TRUE(t_jobs_gone(1));
}

TEST_HARNESS_MAIN
