// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: direct submission. A job that nothing stands before (its waits
 * signalled, its queue's earlier jobs finished, no DELAY, at most 16 KiB
 * of work, 16 signal points and 16 buffers, an idle engine) has run when
 * SUBMIT returns and says so with
 * DRM_D3DQ_SUBMIT_DONE; such a job that finds the engine busy is made
 * ready there by SUBMIT, without the scheduler's run_job; every other job
 * goes through the scheduler, in order, as before; errors, removal and the module parameter that turns
 * it off.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sync_file.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/* A 64 MiB buffer: one FILL of it takes the engine 256 steps. */
#define FLOOD_BYTES	(64ull << 20)

FIXTURE(direct) {
	int fd;
	uint32_t bo;
	uint64_t *map;
	int was;		/* direct_submit before the test, or -errno */
};

FIXTURE_SETUP(direct)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	/* The VM loads the module with its defaults: on. */
	self->was = t_direct_submit(1);
}

FIXTURE_TEARDOWN(direct)
{
	if (self->was >= 0)
		EXPECT_LE(0, t_direct_submit(self->was));
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

static void write64(struct t_cs *cs, uint32_t bo, uint64_t off, uint64_t v)
{
	t_cs_init(cs);
	t_cs_write64(cs, bo, off, v);
}

/*
 * On an idle queue and engine, the job has run, its signal points hold
 * a signalled fence, its writes are visible, all before SUBMIT returns;
 * a pure synchronisation job too. The fence names the queue's scheduler.
 */
TEST_F(direct, done_when_nothing_stands_before)
{
	uint32_t q = t_queue(self->fd, 0, 0), tl = t_syncobj(self->fd);
	uint32_t bin = t_syncobj(self->fd), done;
	struct drm_d3dq_sync sig[2] = { t_tl(tl, 1), t_bin(bin) };
	struct sync_fence_info fi;
	struct sync_file_info info;
	uint64_t a, b;
	struct t_cs cs;
	int sync_fd;

	ASSERT_NE(0, q);
	ASSERT_TRUE(tl && bin);
	write64(&cs, self->bo, 0, 7);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 2, &cs, &done,
				  &a));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(7, self->map[0]);
	EXPECT_EQ(1, t_fence_status(self->fd, tl, 1));
	EXPECT_EQ(1, t_fence_status(self->fd, bin, 0));

	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, bin, &sync_fd));
	ASSERT_EQ(0, t_sync_file_info(sync_fd, &info, &fi, 1));
	close(sync_fd);
	EXPECT_EQ(1, fi.status);
	/* 7.x names a signalled fence itself ("signaled-timeline"). */
	if (strcmp(fi.obj_name, "signaled-timeline")) {
		EXPECT_STREQ("d3dq", fi.driver_name);
		EXPECT_EQ(0, strncmp(fi.obj_name, "d3dq0-s", 7))
			TH_LOG("%s", fi.obj_name);
	}

	/* No commands: a synchronisation point, done as well. */
	sig[0] = t_tl(tl, 2);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 1, NULL, &done,
				  &b));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(1, t_fence_status(self->fd, tl, 2));
	EXPECT_GT(b, a);
}

/*
 * Waits that have signalled do not stand in the way: on the CPU, on a
 * job that ran inside SUBMIT, releasable ones too (releasing such a
 * wait afterwards does nothing, the job is gone).
 */
TEST_F(direct, signalled_waits)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 2, 0);
	uint32_t cpu = t_syncobj(self->fd), tl = t_syncobj(self->fd), done;
	struct drm_d3dq_wait_release rel = { 0 };
	struct drm_d3dq_sync w[3], sig;
	struct t_cs cs;
	uint64_t seqno;

	ASSERT_TRUE(qa && qb && cpu && tl);
	ASSERT_EQ(0, t_signal(self->fd, cpu, 5));
	sig = t_tl(tl, 1);
	write64(&cs, self->bo, 0, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, qa, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);

	w[0] = t_tl(cpu, 3);	/* satisfied by the first point >= 3 */
	w[1] = t_tl(tl, 1);
	w[2] = t_tl(tl, 1);
	w[2].flags |= DRM_D3DQ_SYNC_RELEASABLE;
	sig = t_tl(tl, 2);
	write64(&cs, self->bo, 8, 2);
	ASSERT_EQ(0, t_submit_out(self->fd, qb, w, 3, &sig, 1, &cs, &done,
				  &seqno));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(2, self->map[1]);
	rel.queue_id = qb;
	rel.index = 2;
	rel.seqno = seqno;
	EXPECT_EQ(0, drmIoctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &rel));
}

/*
 * A wait that has not signalled goes through the scheduler: the job is
 * not done when SUBMIT returns and starts only after what it waits for.
 */
TEST_F(direct, pending_wait)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t tl = t_syncobj(self->fd), done;
	struct drm_d3dq_sync w, sig;
	struct t_cs cs;

	ASSERT_TRUE(qa && qb && tl);
	t_cs_init(&cs);
	t_cs_delay(&cs, 20 * T_MS);
	t_cs_timestamp(&cs, self->bo, 0);
	sig = t_tl(tl, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, qa, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);

	w = t_tl(tl, 1);
	sig = t_tl(tl, 2);
	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 8);
	ASSERT_EQ(0, t_submit_out(self->fd, qb, &w, 1, &sig, 1, &cs, &done,
				  NULL));
	/* Only a host far slower than 20 ms per submit sees A done here. */
	if (t_fence_status(self->fd, tl, 1) == 0)
		EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, tl, 2, 10 * T_SEC));
	EXPECT_NE(0, self->map[0]);
	EXPECT_LE(self->map[0], self->map[1]);
}

/*
 * Behind an unfinished job of its queue a job is queued, whatever it
 * is, and runs after it; once the queue is idle again, jobs are done in
 * SUBMIT again.
 */
TEST_F(direct, behind_an_unfinished_job)
{
	uint32_t q = t_queue(self->fd, 0, 0), tl = t_syncobj(self->fd), done;
	struct drm_d3dq_sync sig;
	struct t_cs cs;

	ASSERT_TRUE(q && tl);
	t_cs_init(&cs);
	t_cs_delay(&cs, 20 * T_MS);
	t_cs_timestamp(&cs, self->bo, 0);
	sig = t_tl(tl, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);

	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 8);
	sig = t_tl(tl, 2);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	if (t_fence_status(self->fd, tl, 1) == 0)
		EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, tl, 2, 10 * T_SEC));
	EXPECT_NE(0, self->map[0]);
	EXPECT_LT(self->map[0], self->map[1]);

	write64(&cs, self->bo, 16, 3);
	sig = t_tl(tl, 3);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(3, self->map[2]);
}

/*
 * A DELAY, or more work than one engine step, goes to the scheduler;
 * little work of any kind is done in SUBMIT.
 */
TEST_F(direct, long_jobs_are_queued)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd), done;
	uint32_t big = t_bo(self->fd, 1 << 20, NULL);
	struct drm_d3dq_sync sig = t_bin(s);
	struct t_cs cs;

	ASSERT_TRUE(q && s && big);
	t_cs_init(&cs);
	t_cs_delay(&cs, 0);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));

	t_cs_init(&cs);
	t_cs_fill(&cs, big, 0, 0x5a, 1 << 20);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));

	t_cs_init(&cs);
	t_cs_fill(&cs, big, 0, 0x33, 4096);
	t_cs_copy(&cs, self->bo, 0, big, 0, 8);
	t_cs_cmp_store(&cs, self->bo, 8, 0, 9);
	t_cs_timestamp(&cs, self->bo, 16);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(0x3333333333333333ull, self->map[0]);
	EXPECT_EQ(9, self->map[1]);
	EXPECT_NE(0, self->map[2]);
}

/*
 * SUBMIT holds the engine, with preemption disabled, while it publishes
 * and runs a job: so only a small job runs there. 16 KiB of FILL less
 * the commands' cost does, 64 KiB (a quarter of a step) does not; nor
 * does a job with 17 signal points or 17 buffers.
 */
TEST_F(direct, only_small_jobs_run_in_submit)
{
	uint32_t q = t_queue(self->fd, 0, 0), s[17], bo[17], done;
	uint32_t big = t_bo(self->fd, 64 << 10, NULL);
	struct drm_d3dq_sync sig[17];
	struct t_cs cs;
	int i;

	ASSERT_TRUE(q && big);
	for (i = 0; i < 17; i++) {
		s[i] = t_syncobj(self->fd);
		bo[i] = t_bo(self->fd, 4096, NULL);
		ASSERT_TRUE(s[i] && bo[i]);
		sig[i] = t_bin(s[i]);
	}

	t_cs_init(&cs);
	t_cs_fill(&cs, big, 0, 1, (16 << 10) - 64);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);

	t_cs_init(&cs);
	t_cs_fill(&cs, big, 0, 2, 64 << 10);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s[0], 0, 10 * T_SEC));

	write64(&cs, self->bo, 0, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 16, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 17, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s[16], 0, 10 * T_SEC));

	t_cs_init(&cs);
	for (i = 0; i < 16; i++)
		t_cs_write64(&cs, bo[i], 0, i);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	t_cs_write64(&cs, bo[16], 0, 16);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s[0], 0, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, s[0], 0));
}

/*
 * Another client whose long job holds the engine: it writes a mark in
 * its first step and another in its last.
 */
struct flood {
	int fd;
	uint32_t q, big, marks, s;
	volatile uint64_t *mark;
};

static int flood_open(struct flood *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = t_open(0);
	if (f->fd < 0)
		return -1;
	f->q = t_queue(f->fd, 0, 0);
	f->big = t_bo(f->fd, FLOOD_BYTES, NULL);
	f->marks = t_bo(f->fd, 4096, (void **)&f->mark);
	f->s = t_syncobj(f->fd);
	return f->q && f->big && f->marks && f->s ? 0 : -1;
}

/* Submit long job @n; return once its first step ran (0), or -1. */
static int flood_start(struct flood *f, uint64_t n)
{
	struct drm_d3dq_sync sig = t_bin(f->s);
	struct t_cs cs;
	int i;

	t_cs_init(&cs);
	t_cs_write64(&cs, f->marks, 0, n);
	t_cs_fill(&cs, f->big, 0, n, FLOOD_BYTES);
	t_cs_write64(&cs, f->marks, 8, n);
	if (t_submit(f->fd, f->q, NULL, 0, &sig, 1, &cs))
		return -1;
	for (i = 0; i < 100000 && f->mark[0] != n; i++)
		usleep(100);
	return f->mark[0] == n ? 0 : -1;
}

static void flood_close(struct flood *f)
{
	if (f->mark)
		munmap((void *)f->mark, 4096);
	if (f->fd >= 0)
		close(f->fd);
}

/*
 * While another client's long job has the engine (a step of it runs, or
 * it is ready for its next step, from its first step to its last), a
 * short job waits for its turn like any other: it is not done in SUBMIT.
 * A submit made between the long job's two marks saw the engine taken
 * throughout.
 */
TEST_F(direct, busy_engine_is_not_overtaken)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd), done;
	struct drm_d3dq_sync sig = t_bin(s);
	struct flood f;
	int tries, seen = 0;
	struct t_cs cs;

	ASSERT_TRUE(q && s);
	ASSERT_EQ(0, flood_open(&f));
	for (tries = 1; tries <= 5 && !seen; tries++) {
		ASSERT_EQ(0, flood_start(&f, tries));
		write64(&cs, self->bo, 0, tries);
		ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs,
					  &done, NULL));
		if (f.mark[1] != (uint64_t)tries) {
			seen = 1;
			EXPECT_EQ(0, done);
		}
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
		EXPECT_EQ(tries, self->map[0]);
		ASSERT_EQ(0, t_wait(f.fd, f.s, 0, 30 * T_SEC));
	}
	flood_close(&f);
	if (!seen)
		SKIP(return, "the long job ended before every submit");
}

/*
 * A short job that nothing stands before but finds another client's long
 * job on the engine is not run in SUBMIT, yet does not wait for the
 * scheduler's run_job either: SUBMIT makes it ready on the engine, and
 * its signal point gets its hardware fence ("d3dq", named by the queue's
 * scheduler), not the scheduler's finished fence ("drm_sched"). It
 * still waits for its turn (busy_engine_is_not_overtaken).
 */
TEST_F(direct, busy_engine_takes_small_job_at_submit)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd), done;
	struct drm_d3dq_sync sig = t_bin(s);
	struct sync_fence_info fi;
	struct sync_file_info info;
	int tries, seen = 0, sync_fd;
	struct flood f;
	struct t_cs cs;

	ASSERT_TRUE(q && s);
	ASSERT_EQ(0, flood_open(&f));
	for (tries = 1; tries <= 5 && !seen; tries++) {
		ASSERT_EQ(0, flood_start(&f, tries));
		write64(&cs, self->bo, 0, tries);
		ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs,
					  &done, NULL));
		ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, s, &sync_fd));
		ASSERT_EQ(0, t_sync_file_info(sync_fd, &info, &fi, 1));
		close(sync_fd);
		/* 7.x names a signalled fence itself: try again. */
		if (!done && strcmp(fi.obj_name, "signaled-timeline")) {
			seen = 1;
			EXPECT_STREQ("d3dq", fi.driver_name);
			EXPECT_EQ(0, strncmp(fi.obj_name, "d3dq0-s", 7))
				TH_LOG("%s", fi.obj_name);
		}
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
		EXPECT_EQ(tries, self->map[0]);
		ASSERT_EQ(0, t_wait(f.fd, f.s, 0, 30 * T_SEC));
	}
	flood_close(&f);
	if (!seen)
		SKIP(return, "the long job ended before every submit");
}

/*
 * A wait whose fence completed with an error is left to the scheduler,
 * which loses the queue (-ECANCELED): the job does not run, its signal
 * completes with the error, and later submits fail.
 */
TEST_F(direct, failed_wait_loses_the_queue)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t bad = t_syncobj(self->fd), out = t_syncobj(self->fd), done;
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w, sig;
	struct t_cs cs;

	ASSERT_TRUE(qa && qb && bad && out);
	/* A's job is cancelled by destroying A: its fence has an error. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 5 * T_SEC);
	sig = t_bin(bad);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_queue_destroy(self->fd, qa));
	ASSERT_EQ(0, t_wait(self->fd, bad, 0, 10 * T_SEC));
	ASSERT_GT(0, t_fence_status(self->fd, bad, 0));

	w = t_bin(bad);
	sig = t_bin(out);
	write64(&cs, self->bo, 0, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, qb, &w, 1, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, out, 0, 10 * T_SEC));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, out, 0));
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, t_queue_state(self->fd, qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
	EXPECT_EQ(-ECANCELED, t_submit_out(self->fd, qb, NULL, 0, &sig, 1, &cs,
				     &done, NULL));
	EXPECT_EQ(0, done);
}

/* direct_submit=0: every job through the scheduler, never DONE. */
TEST_F(direct, switched_off)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd), done;
	struct drm_d3dq_sync sig = t_bin(s);
	struct t_cs cs;

	ASSERT_TRUE(q && s);
	if (self->was < 0)
		SKIP(return, "direct_submit not writable (%d)", self->was);
	ASSERT_EQ(1, t_direct_submit(0));
	write64(&cs, self->bo, 0, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(0, done);
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
	EXPECT_EQ(1, self->map[0]);

	ASSERT_EQ(0, t_direct_submit(1));
	write64(&cs, self->bo, 0, 2);
	ASSERT_EQ(0, t_submit_out(self->fd, q, NULL, 0, &sig, 1, &cs, &done,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, done);
	EXPECT_EQ(2, self->map[0]);
}

/*
 * A CPU signal that releases held jobs arms them in its own call, and
 * runs there those that nothing stands before: when FENCE_SIGNAL returns
 * nothing is held, the points are attached, and (engine idle) the jobs
 * have written and signalled. A signal from another file (through a
 * shared fence) spends a budget of one job on this file's queue (issue
 * 38, item 4): the first job has run when its call returns, the second
 * is the arming work's, and runs soon after; with direct_submit=0 the
 * jobs are only armed there.
 */
TEST_F(direct, held_jobs_run_in_cpu_signal)
{
	uint32_t q = t_queue(self->fd, 0, 0), tl = t_syncobj(self->fd), fl;
	struct drm_d3dq_sync w[1], s[2];
	struct t_fence f, g, pf;
	struct t_cs cs;
	int peer, xfd, r, sfd;
	uint32_t sh;

	ASSERT_TRUE(q && tl);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &g));
	peer = t_open(0);
	ASSERT_LE(0, peer);
	xfd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, xfd);
	ASSERT_EQ(0, t_fence_import(peer, xfd, &pf));
	close(xfd);
	/* 1: this file signals, 2: the peer does, 3: direct_submit=0. */
	for (r = 1; r <= 3; r++) {
		if (r == 3) {
			if (self->was < 0)
				break;
			ASSERT_EQ(1, t_direct_submit(0));
		}
		w[0] = t_fs(f.handle, r);
		s[0] = t_tl(tl, 2 * r - 1);
		s[1] = t_fs(g.handle, 2 * r - 1);
		write64(&cs, self->bo, 0, 100 + r);
		ASSERT_EQ(0, t_submit_hold(self->fd, q, w, 1, s, 2, &cs, &fl,
					   NULL));
		ASSERT_EQ(DRM_D3DQ_SUBMIT_HELD, fl);
		/* Behind it, with no wait of its own. */
		s[0] = t_tl(tl, 2 * r);
		s[1] = t_fs(g.handle, 2 * r);
		write64(&cs, self->bo, 8, 200 + r);
		ASSERT_EQ(0, t_submit_hold(self->fd, q, NULL, 0, s, 2, &cs,
					   &fl, NULL));
		ASSERT_EQ(DRM_D3DQ_SUBMIT_HELD, fl);
		ASSERT_EQ(2, t_held(self->fd));

		sfd = r == 2 ? peer : self->fd;
		sh = r == 2 ? pf.handle : f.handle;
		ASSERT_EQ(0, t_fence_signal(sfd, sh, r));
		if (r == 2) {
			/* The peer's call ran the first job only for sure. */
			EXPECT_LE(2 * r - 1, t_submitted(self->fd, tl));
			EXPECT_LE(2 * r - 1, t_value_load(g.v));
			EXPECT_EQ(100 + r, self->map[0]);
		} else {
			EXPECT_EQ(0, t_held(self->fd)) TH_LOG("round %d", r);
			EXPECT_EQ(2 * r, t_submitted(self->fd, tl))
				TH_LOG("round %d", r);
		}
		if (r == 1) {
			EXPECT_EQ(2 * r, t_value_load(g.v)) TH_LOG("round %d", r);
			EXPECT_EQ(100 + r, self->map[0]);
			EXPECT_EQ(200 + r, self->map[1]);
		}
		ASSERT_EQ(0, t_wait(self->fd, tl, 2 * r, 10 * T_SEC));
		EXPECT_EQ(2 * r, t_value_load(g.v));
		EXPECT_EQ(100 + r, self->map[0]);
		EXPECT_EQ(200 + r, self->map[1]);
	}
	close(peer);
	t_fence_unmap(&g);
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_EQ(0, t_fence_destroy(self->fd, g.handle));
}

struct submitter {
	int fd;
	uint32_t q, bo;
	_Atomic int jobs;
	int err;
};

/* Short jobs writing 1, 2, 3, ... until the queue is refused. */
static void *submit_loop(void *arg)
{
	struct submitter *sb = arg;
	uint32_t done;
	struct t_cs cs;
	int i, ret;

	for (i = 1; i < 1000000; i++) {
		write64(&cs, sb->bo, 0, i);
		ret = t_submit_out(sb->fd, sb->q, NULL, 0, NULL, 0, &cs, &done,
				   NULL);
		if (ret) {
			sb->err = ret;
			break;
		}
		atomic_store(&sb->jobs, i);
	}
	return NULL;
}

/*
 * REMOVE while another thread submits jobs that run inside SUBMIT: once
 * REMOVE returned nothing runs any more (the buffer stops changing), and
 * the submitter is refused with -ECANCELED.
 */
TEST_F(direct, remove_stops_direct_jobs)
{
	struct submitter sb = { .fd = self->fd, .bo = self->bo };
	struct drm_d3dq_remove rm = { 0 };
	pthread_t t;
	uint64_t v;
	int i;

	sb.q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, sb.q);
	ASSERT_EQ(0, pthread_create(&t, NULL, submit_loop, &sb));
	for (i = 0; i < 10000 && atomic_load(&sb.jobs) < 200; i++)
		usleep(1000);
	ASSERT_EQ(0, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	v = self->map[0];
	pthread_join(t, NULL);
	/* Every job ran or was cancelled: none wrote after REMOVE. */
	ASSERT_TRUE(t_no_job_in_flight(self->fd));
	EXPECT_EQ(v, self->map[0]);
	EXPECT_EQ(-ECANCELED, sb.err);
	/* The last job submitted may have been cancelled before it ran. */
	EXPECT_LE(200, atomic_load(&sb.jobs));
	EXPECT_LE(v, (uint64_t)atomic_load(&sb.jobs));
	EXPECT_GE(v + 1, (uint64_t)atomic_load(&sb.jobs));
}

TEST_HARNESS_MAIN
