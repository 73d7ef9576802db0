// SPDX-License-Identifier: GPL-2.0
/*
 * Removal on loss (uapi 1.6, DRM_D3DQ_REMOVE_ON_LOSS): a file armed with
 * it is removed by the kernel at the first loss of one of its queues, as
 * DRM_D3DQ_REMOVE removes it (R15): a job timeout, or an error that
 * reaches one of its jobs, stops every job of the file, then sets every
 * fence of the file to ~0 (eventfd registrations fire, FENCE_WAIT
 * returns, held jobs are freed) and later creations fail with -ENODEV;
 * DRM_D3DQ_REMOVE_QUERY reads the reason. Without the flag a loss
 * changes nothing else; a loss before the arming makes the arming
 * remove; an explicit REMOVE reads -ENODEV; another file of the process
 * is untouched; bad flags fail with -EINVAL.
 *
 * Timeouts come from DELAY commands past the module's default job
 * timeout (2 s). What is asserted is what happened, in order, not when.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define FOREVER	INT64_MAX
/* Past the default 2 s job timeout, below the 10 s largest DELAY. */
#define HANG_NS	(3 * T_SEC)

/* REMOVE with @flags: 0 or -errno; the reason out in *reason. */
static int rm(int fd, uint32_t flags, int32_t *reason)
{
	struct drm_d3dq_remove r = { .flags = flags };
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_REMOVE, &r);

	if (reason)
		*reason = ret ? 1 : r.reason;
	return ret;
}

/* The file's removal reason (REMOVE_QUERY), or 1 if the query failed. */
static int32_t query(int fd)
{
	int32_t reason;

	rm(fd, DRM_D3DQ_REMOVE_QUERY, &reason);
	return reason;
}

/* A job that hangs past the job timeout, signalling @so point 1. */
static int hang(int fd, uint32_t q, uint32_t so)
{
	struct drm_d3dq_sync s = t_tl(so, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, HANG_NS);
	return t_submit(fd, q, NULL, 0, &s, 1, &cs);
}

/* Wait up to 20 s for @efd to count: its count, 0 if it did not. */
static uint64_t efd_wait(int efd)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n = 0;

	if (poll(&p, 1, 20000) != 1 || read(efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

static int queue_create(int fd)
{
	struct drm_d3dq_queue_create c = { 0 };

	return t_ioctl(fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c);
}

static int fence_create_ret(int fd)
{
	struct drm_d3dq_fence_create c = { 0 };
	struct drm_d3dq_fence_destroy d;
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c);

	if (!ret) {
		d = (struct drm_d3dq_fence_destroy){ .handle = c.handle };
		t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &d);
	}
	return ret;
}

/* A FENCE_WAIT on another thread, with no deadline. */
struct waiter {
	pthread_t thread;
	int fd;
	uint32_t handle;
	uint64_t value;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->ret = t_fence_wait1(w->fd, w->handle, w->value, FOREVER);
	return NULL;
}

FIXTURE(rol) {
	int fd, efd;
	uint32_t q1, q2, bo, out1, out2;
	uint64_t *map;
	struct t_fence f, g, s;
};

FIXTURE_SETUP(rol)
{
	self->efd = -1;
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 6, t_param(self->fd,
					   DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_REMOVE_ON_LOSS);
	self->q1 = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q1);
	ASSERT_NE(0, self->q2);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->out1 = t_syncobj(self->fd);
	self->out2 = t_syncobj(self->fd);
	ASSERT_NE(0, self->out1);
	ASSERT_NE(0, self->out2);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->f));
	ASSERT_EQ(0, t_fence_new(self->fd, 5, 0, &self->g));
	ASSERT_EQ(0, t_fence_new(self->fd, 1, DRM_D3DQ_FENCE_SHARED, &self->s));
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
}

FIXTURE_TEARDOWN(rol)
{
	t_fence_unmap(&self->f);
	t_fence_unmap(&self->g);
	t_fence_unmap(&self->s);
	if (self->map)
		munmap(self->map, 4096);
	if (self->efd >= 0)
		close(self->efd);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(20000);
}

/*
 * Armed, a job timeout removes the file: every fence reads ~0 on its
 * page, the registered eventfd fires, a FENCE_WAIT returns, the held job
 * is freed unarmed, QUERY reads -ETIMEDOUT, creations fail with -ENODEV.
 */
TEST_F(rol, timeout_removes_file)
{
	struct drm_d3dq_queue_get_state st;
	struct waiter w = { .fd = self->fd, .handle = self->g.handle,
			    .value = 100 };
	struct drm_d3dq_sync hw[1], hs[1];
	uint32_t flags = 0;
	int32_t reason = 1;
	int i;

	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	EXPECT_EQ(0, reason);
	/* Arming again is arming once; nothing is removed yet. */
	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS |
			DRM_D3DQ_REMOVE_QUERY, &reason));
	EXPECT_EQ(0, reason);
	EXPECT_EQ(0, query(self->fd));

	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 10, self->efd));
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, waiter_main, &w));
	/* A held job on q2: its wait is on a value nothing brings. */
	hw[0] = t_fs(self->f.handle, 7);
	hs[0] = t_tl(self->out2, 1);
	{
		struct drm_d3dq_submit a = {
			.queue_id = self->q2,
			.flags = DRM_D3DQ_SUBMIT_HOLD,
			.waits = DRM_D3DQ_OBJ_ARRAY(1, hw),
			.signals = DRM_D3DQ_OBJ_ARRAY(1, hs),
		};

		ASSERT_EQ(0, t_submit_raw(self->fd, &a));
		flags = a.out_flags;
	}
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(1, t_held(self->fd));
	EXPECT_EQ(0, t_value_load(self->f.v));

	ASSERT_EQ(0, hang(self->fd, self->q1, self->out1));
	/* The removal's ~0 fires the registration. */
	ASSERT_EQ(1, efd_wait(self->efd));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->g.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->s.v));
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.ret);
	/* The hung job had stopped with the timeout's error. */
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(-ETIMEDOUT, query(self->fd));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q1, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ETIMEDOUT, st.reason);
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ENODEV, st.reason);
	for (i = 0; i < 1000 && t_held(self->fd); i++)
		usleep(10000);
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));
	EXPECT_EQ(-ENODEV, queue_create(self->fd));
	EXPECT_EQ(-ENODEV, fence_create_ret(self->fd));
	EXPECT_EQ(-ENODEV, t_fence_signal(self->fd, self->f.handle, 3));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	/* Removed once: arming, an explicit REMOVE keep the first reason. */
	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	EXPECT_EQ(-ETIMEDOUT, reason);
	ASSERT_EQ(0, rm(self->fd, 0, &reason));
	EXPECT_EQ(0, reason);	/* flags 0 leave the structure as it was */
	EXPECT_EQ(-ETIMEDOUT, query(self->fd));
}

/*
 * R15: a removal looks whole to whoever it wakes. The registration is on
 * f, the file's first fence, which the removal reaches first; when its
 * eventfd fires, each of 10,000 later fences of the file reads ~0
 * already: every value goes to ~0 before any wait or event is released.
 * (Before, each fence was set and its waits released in turn, and a
 * waiter woken by the first could read the others' old values.) The
 * 10,000 fences take longer than the default 30 s to make on the debug
 * kernel (KASAN, lockdep) of a loaded host.
 */
TEST_F_TIMEOUT(rol, removal_seen_whole, 120)
{
	enum { N = 10000, PAGE_VALUES = 512 };
	static struct t_fence many[N];
	const uint64_t *pages[N / PAGE_VALUES + 2] = { NULL };
	uint64_t first = 0;
	int32_t reason = 1;
	int i, p, np = 0, old = 0;

	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &many[i]));
		/* Local fences fill the file's pages in turn: map each once. */
		if (!np || many[i].offset != many[i - 1].offset) {
			ASSERT_GT(N / PAGE_VALUES + 2, np);
			pages[np] = t_value_map(self->fd, &(struct t_fence){
				.offset = many[i].offset });
			ASSERT_NE(NULL, pages[np]);
			np++;
		}
		many[i].v = pages[np - 1] + many[i].voff / sizeof(uint64_t);
	}
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 1, self->efd));
	ASSERT_EQ(0, hang(self->fd, self->q1, self->out1));
	ASSERT_EQ(1, efd_wait(self->efd));
	for (i = N - 1; i >= 0; i--) {
		if (t_value_load(many[i].v) != UINT64_MAX) {
			old++;
			first = i;
		}
	}
	EXPECT_EQ(0, old) TH_LOG("%d fences not at ~0 yet, from fence %llu",
				 old, (unsigned long long)first);
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	for (p = 0; p < np; p++)
		t_value_unmap(pages[p]);
}

/*
 * Not armed: a loss loses the queue, nothing else (the old behaviour);
 * arming afterwards removes the file at once, with the loss's reason.
 */
TEST_F(rol, unarmed_loss_then_arming)
{
	struct drm_d3dq_queue_get_state st;
	int32_t reason = 1;

	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 10, self->efd));
	ASSERT_EQ(0, hang(self->fd, self->q1, self->out1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 20 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, self->out1, 1));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q1, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	/* Not armed: no removal is due (QUERY would wait for one). */
	EXPECT_EQ(0, query(self->fd));
	EXPECT_EQ(0, t_value_load(self->f.v));
	EXPECT_EQ(5, t_value_load(self->g.v));
	EXPECT_EQ(0, t_efd_take(self->efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, self->g.handle, 6));
	EXPECT_EQ(6, t_value_load(self->g.v));
	EXPECT_EQ(0, queue_create(self->fd));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);

	/* The loss came first: arming removes the file before returning. */
	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	EXPECT_EQ(-ETIMEDOUT, reason);
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->g.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->s.v));
	EXPECT_EQ(-ETIMEDOUT, query(self->fd));
	EXPECT_EQ(-ENODEV, queue_create(self->fd));
	EXPECT_EQ(-ENODEV, fence_create_ret(self->fd));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ENODEV, st.reason);
}

/*
 * An error that reaches a job (its dependency, a job of another file of
 * the same process, was cancelled) removes the armed file with
 * -ECANCELED; the other file, not armed, keeps its fences and queues.
 */
TEST_F(rol, dependency_error_removes_file)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w, s;
	uint32_t qb, sob, soa;
	struct t_fence fb;
	struct t_cs cs;
	int other, sfd;
	int32_t reason = 1;

	other = t_open(0);
	ASSERT_LE(0, other);
	qb = t_queue(other, 0, 0);
	ASSERT_NE(0, qb);
	sob = t_syncobj(other);
	ASSERT_NE(0, sob);
	ASSERT_EQ(0, t_fence_new(other, 4, 0, &fb));
	/* The other file's job: long, and cancelled below. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 1500 * T_MS);
	s = t_tl(sob, 1);
	ASSERT_EQ(0, t_submit(other, qb, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, drmSyncobjHandleToFD(other, sob, &sfd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(self->fd, sfd, &soa));
	close(sfd);

	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	EXPECT_EQ(0, reason);
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 1, self->efd));
	w = t_tl(soa, 1);
	s = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q1, &w, 1, &s, 1, NULL));
	ASSERT_EQ(0, t_queue_destroy(other, qb));

	ASSERT_EQ(1, efd_wait(self->efd));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->g.v));
	EXPECT_EQ(-ECANCELED, query(self->fd));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q1, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
	EXPECT_EQ(-ENODEV, queue_create(self->fd));

	/* The other file: not armed, not removed, its fence untouched. */
	EXPECT_EQ(0, query(other));
	EXPECT_EQ(4, t_value_load(fb.v));
	EXPECT_EQ(0, t_fence_signal(other, fb.handle, 8));
	EXPECT_EQ(8, t_value_load(fb.v));
	EXPECT_EQ(0, queue_create(other));
	EXPECT_EQ(0, fence_create_ret(other));
	t_fence_unmap(&fb);
	close(other);
}

/*
 * Destroying a queue is no loss: an armed file whose running job is
 * cancelled by QUEUE_DESTROY stays as it was. An explicit REMOVE then
 * reads -ENODEV, in its reply and in QUERY.
 */
TEST_F(rol, destroy_is_no_loss_remove_is_enodev)
{
	struct t_cs cs;
	struct drm_d3dq_sync s;
	int32_t reason = 1;

	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	t_cs_init(&cs);
	t_cs_delay(&cs, HANG_NS);
	s = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q1, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 20 * T_SEC));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, self->out1, 1));
	EXPECT_EQ(0, query(self->fd));
	EXPECT_EQ(0, t_value_load(self->f.v));
	EXPECT_EQ(0, queue_create(self->fd));

	ASSERT_EQ(0, rm(self->fd, 0, &reason));
	EXPECT_EQ(0, reason);
	EXPECT_EQ(-ENODEV, query(self->fd));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	/* Armed, and removed already: nothing changes the reason. */
	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS |
			DRM_D3DQ_REMOVE_QUERY, &reason));
	EXPECT_EQ(-ENODEV, reason);
}

/*
 * R15's order: when the fences read ~0, no job of the file runs any
 * more. q2 runs a chain of jobs, each a DELAY below the timeout and then
 * a write; q1's job times out meanwhile. When the registration fires,
 * the q2 job that ran at the loss has ended (its fence signalled with an
 * error, its write not done), and no write of q2 comes later.
 */
#define CHAIN	8

TEST_F(rol, jobs_stop_before_fences)
{
	uint64_t snap[CHAIN];
	uint32_t outs[CHAIN];
	struct drm_d3dq_sync s;
	struct t_cs cs;
	int32_t reason = 1;
	int i, first, st;

	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_ON_LOSS, &reason));
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 1, self->efd));
	for (i = 0; i < CHAIN; i++) {
		/* Binary: a timeline point's status may not be the job's. */
		outs[i] = t_syncobj(self->fd);
		ASSERT_NE(0, outs[i]);
		t_cs_init(&cs);
		t_cs_delay(&cs, 1 * T_SEC);
		t_cs_write64(&cs, self->bo, 8 * i, i + 1);
		s = t_bin(outs[i]);
		ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, &s, 1,
				      &cs));
	}
	ASSERT_EQ(0, hang(self->fd, self->q1, self->out1));

	ASSERT_EQ(1, efd_wait(self->efd));
	memcpy(snap, self->map, sizeof(snap));
	ASSERT_EQ(UINT64_MAX, t_value_load(self->f.v));
	for (first = 0; first < CHAIN && snap[first]; first++)
		;
	TH_LOG("%d of %d q2 jobs had written at the removal", first, CHAIN);
	/* The chain outlasts the timeout: some job was stopped. */
	ASSERT_GT(CHAIN, first);
	/*
	 * That job was stopped (it ended with an error) before the fences
	 * were set, unless it had not started (0: it is cancelled when the
	 * scheduler hands it over); it never completed.
	 */
	st = t_fence_status(self->fd, outs[first], 0);
	TH_LOG("job %d status %d at the removal", first, st);
	EXPECT_NE(1, st);
	EXPECT_LT(-1000, st);

	/* Every q2 job ends; none writes after the removal. */
	ASSERT_EQ(0, t_wait(self->fd, outs[CHAIN - 1], 0, 20 * T_SEC));
	ASSERT_TRUE(t_no_job_in_flight(self->fd));
	EXPECT_EQ(0, memcmp(snap, self->map, sizeof(snap)));
	for (i = first; i < CHAIN; i++) {
		EXPECT_EQ(0, self->map[i]);
		EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, outs[i], 0));
	}
	EXPECT_EQ(-ETIMEDOUT, query(self->fd));
}

/* Bad input: unknown flags, a non-zero reason in; nothing is removed. */
TEST_F(rol, bad_flags)
{
	struct drm_d3dq_remove r = { 0 };
	int32_t reason = 1;

	r.flags = DRM_D3DQ_REMOVE_QUERY << 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &r));
	r.flags = ~0u;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &r));
	r.flags = DRM_D3DQ_REMOVE_QUERY;
	r.reason = -ENODEV;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &r));
	r.flags = 0;
	r.reason = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &r));
	/* Nothing happened: not removed, fences and queues as they were. */
	ASSERT_EQ(0, rm(self->fd, DRM_D3DQ_REMOVE_QUERY, &reason));
	EXPECT_EQ(0, reason);
	EXPECT_EQ(0, t_value_load(self->f.v));
	EXPECT_EQ(0, queue_create(self->fd));
	EXPECT_EQ(0, fence_create_ret(self->fd));
}

TEST_HARNESS_MAIN
