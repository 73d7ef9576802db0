// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq carried waits (uapi 1.8, DRM_D3DQ_SUBMIT_CARRY): a submit that makes
 * no job; its waits are decided in the call and become waits of the
 * queue's next job. What is asserted: the next job waits for them (held,
 * publishing nothing, until they are satisfied); a fence value written
 * after the carrying call and rewound before the next job still satisfied
 * the wait (R7, decided at the call), while a value written and rewound
 * before the call did not; a carried wait on an armed signal of the file
 * makes the job depend on that signal's job; several carrying submits and
 * syncobj points all go to the next job; a failed submit leaves them
 * carried; bad input; the limits count them and fail at once (-ENOSPC);
 * a carrying submit whose waits are satisfied carries nothing, and
 * satisfied carried waits make room for the next one (a queue that only
 * waits), failed ones do not; destroy, loss, close, REMOVE and unplug
 * free them.
 *
 * Nothing here measures time.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(carry) {
	int fd;
	uint32_t q1, q2, bo, out1, out2;
	uint64_t *map;
	struct t_fence f, g;
};

FIXTURE_SETUP(carry)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 8, t_param(self->fd,
					   DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_SUBMIT_CARRY);
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
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->g));
}

FIXTURE_TEARDOWN(carry)
{
	t_fence_unmap(&self->f);
	t_fence_unmap(&self->g);
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Submit a job writing @value at @off of the buffer, signalling @so 1. */
static int job_write(int fd, uint32_t q, uint32_t bo, uint64_t off,
		     uint64_t value, uint32_t so, uint32_t *flags)
{
	struct drm_d3dq_sync s[1] = { t_tl(so, 1) };
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, bo, off, value);
	return t_submit_out(fd, q, NULL, 0, s, 1, &cs, flags, NULL);
}

/* Whether debugfs' line of queue @q in @text ends with @tail. */
static bool queue_line_ends(const char *text, uint32_t q, const char *tail)
{
	const char *line, *end;
	char want[32];

	snprintf(want, sizeof(want), "queue %u ", q);
	line = strstr(text, want);
	end = line ? strchr(line, '\n') : NULL;
	return end && end - line >= (long)strlen(tail) &&
	       !strncmp(end - strlen(tail), tail, strlen(tail));
}

/*
 * The wait goes to the next job, which has no wait of its own: held,
 * publishing nothing (no point, no write) until the value comes; then it
 * runs. No job stood for the wait: the carrying call counts as held until
 * the job takes it, then the job does.
 */
TEST_F(carry, next_job_waits)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->f.handle, 5) };
	uint32_t flags = 0;
	const char *text;
	char want[64];

	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	EXPECT_EQ(1, t_held(self->fd));
	/* debugfs shows the carried wait, with no job number. */
	text = t_queues_text();
	ASSERT_NE(NULL, text);
	EXPECT_TRUE(queue_line_ends(text, self->q1, "carried=1 held=0"))
		TH_LOG("%s", text);
	snprintf(want, sizeof(want), "carried waits fence=%u value=5",
		 self->f.handle);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 7, self->out1,
			       &flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(1, t_held(self->fd));
	/* The job took it: held, no longer carried. */
	text = t_queues_text();
	ASSERT_NE(NULL, text);
	EXPECT_TRUE(queue_line_ends(text, self->q1, "carried=0 held=1"))
		TH_LOG("%s", text);
	EXPECT_EQ(0, t_submitted(self->fd, self->out1));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 4));
	EXPECT_EQ(0, t_submitted(self->fd, self->out1));
	EXPECT_EQ(0, self->map[0]);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 5));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(7, self->map[0]);
	EXPECT_EQ(0, t_held(self->fd));

	/* Taken once: the job after it does not wait again. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 8, 8, self->out2,
			       &flags));
	EXPECT_EQ(0, flags & DRM_D3DQ_SUBMIT_HELD);
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(8, self->map[1]);
}

/*
 * R7: decided at the call. A value reached after the carrying call and
 * rewound before the next job satisfied the wait; a value reached and
 * rewound before the call did not. A value reached at the call makes no
 * wait at all.
 */
TEST_F(carry, decided_at_the_call)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->f.handle, 5) };
	uint32_t flags = 0;

	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 5));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 1, self->out1,
			       &flags));
	EXPECT_EQ(0, flags & DRM_D3DQ_SUBMIT_HELD);
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(1, self->map[0]);

	/* History before the call does not count. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 9));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 0));
	w[0] = t_fs(self->g.handle, 9);
	ASSERT_EQ(0, t_carry(self->fd, self->q2, w, 1));
	ASSERT_EQ(0, job_write(self->fd, self->q2, self->bo, 8, 2, self->out2,
			       &flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(0, t_submitted(self->fd, self->out2));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 10));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(2, self->map[1]);

	/* Reached at the call: nothing to wait for, nothing carried. */
	w[0] = t_fs(self->g.handle, 10);
	ASSERT_EQ(0, t_carry(self->fd, self->q2, w, 1));
	EXPECT_EQ(0, t_held(self->fd));
	ASSERT_EQ(0, t_submit_out(self->fd, self->q2, NULL, 0, NULL, 0, NULL,
				  &flags, NULL));
	EXPECT_EQ(0, flags & DRM_D3DQ_SUBMIT_HELD);
	EXPECT_EQ(0, t_held(self->fd));
}

/*
 * A carried wait on a value an armed signal of this file brings: the next
 * job is not held but depends on that signal's job, and runs after it,
 * with the value there. The signal's job is a 300 ms DELAY on q2.
 */
TEST_F(carry, on_an_armed_signal)
{
	struct drm_d3dq_sync w[1], s[2];
	uint32_t flags = 0;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_MS);
	s[0] = t_fs(self->f.handle, 3);
	s[1] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, s, 2, &cs));
	w[0] = t_fs(self->f.handle, 3);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 4, self->out1,
			       &flags));
	EXPECT_EQ(0, flags);
	/* Armed: its point is attached before the value is there. */
	EXPECT_EQ(1, t_submitted(self->fd, self->out1));
	EXPECT_EQ(0, t_held(self->fd));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out2, 1));
	EXPECT_EQ(3, t_value_load(self->f.v));
	EXPECT_EQ(4, self->map[0]);
}

/*
 * Several carrying submits, on two fences and a syncobj point, all go to
 * the next job, which waits for every one of them; a failed submit in
 * between takes none of them.
 */
TEST_F(carry, several_and_a_failed_submit)
{
	struct drm_d3dq_sync w[2], s[1];
	uint32_t gate = t_syncobj(self->fd), flags = 0;
	struct t_cs cs;

	ASSERT_NE(0, gate);
	w[0] = t_fs(self->f.handle, 1);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	w[0] = t_fs(self->g.handle, 2);
	w[1] = t_fs(self->f.handle, 2);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 2));
	/* A syncobj point of a 300 ms job on q2. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_MS);
	s[0] = t_tl(gate, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, s, 1, &cs));
	w[0] = t_tl(gate, 1);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	EXPECT_EQ(3, t_held(self->fd));

	/* Fails (unknown buffer): the waits stay carried. */
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo + 100, 0, 1);
	EXPECT_EQ(-ENOENT, t_submit(self->fd, self->q1, NULL, 0, NULL, 0, &cs));
	EXPECT_EQ(3, t_held(self->fd));

	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 5, self->out1,
			       &flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(1, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 2));
	EXPECT_EQ(1, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out1));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 2));
	/* Armed now, behind the syncobj point. */
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, gate, 1));
	EXPECT_EQ(5, self->map[0]);
	EXPECT_EQ(0, t_held(self->fd));
}

/*
 * The job's own waits keep their indices (WAIT_RELEASE names them so)
 * when it takes carried ones: its releasable wait on a 1.5 s gate job is
 * released by index 0 once the carried wait is satisfied.
 */
TEST_F(carry, own_waits_keep_their_index)
{
	struct drm_d3dq_wait_release rel = { .index = 0 };
	struct drm_d3dq_sync w[1], s[1];
	uint32_t flags = 0;
	uint64_t seqno = 0;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, 1500 * T_MS);
	s[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, s, 1, &cs));
	w[0] = t_fs(self->f.handle, 1);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	w[0] = t_tl(self->out2, 1);
	w[0].flags |= DRM_D3DQ_SYNC_RELEASABLE;
	s[0] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, self->q1, w, 1, s, 1, NULL, &flags,
				  &seqno));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	rel.queue_id = self->q1;
	rel.seqno = seqno;
	/* Index 1 is the carried fence wait: not releasable. */
	rel.index = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE,
				   &rel));
	rel.index = 0;
	EXPECT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &rel));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	/* Released, not waited for (else this machine is too slow). */
	if (t_fence_status(self->fd, self->out2, 1) == 0)
		EXPECT_EQ(1, t_fence_status(self->fd, self->out1, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
}

/* Behind held jobs: the job that takes them is held behind those too. */
TEST_F(carry, behind_a_held_job)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->f.handle, 1) };
	uint32_t flags = 0;

	ASSERT_EQ(0, t_submit_hold(self->fd, self->q1, w, 1, NULL, 0, NULL,
				   &flags, NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	w[0] = t_fs(self->g.handle, 1);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 6, self->out1,
			       &flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 1));
	EXPECT_EQ(2, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(6, self->map[0]);
}

/*
 * A job that took two carried waits, one bound to a running job's
 * signal and one held, is freed unarmed (its queue destroyed) while that
 * job runs: nothing it held is kept (the teardown counts the hardware
 * fences: the join fence of the carried waits held the running job's).
 */
TEST_F(carry, dropped_while_bound)
{
	struct drm_d3dq_sync w[2], s[2];
	uint32_t flags = 0;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, 500 * T_MS);
	s[0] = t_fs(self->f.handle, 3);
	s[1] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, s, 2, &cs));
	w[0] = t_fs(self->f.handle, 3);
	w[1] = t_fs(self->g.handle, 5);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 2));
	ASSERT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 1, self->out1,
			       &flags));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	ASSERT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_EQ(3, t_value_load(self->f.v));
	EXPECT_EQ(0, self->map[0]);
}

/* Bad input: every error from the carrying call; nothing carried. */
TEST_F(carry, bad_input)
{
	struct drm_d3dq_sync w[1] = { t_fs(self->f.handle, 1) };
	struct drm_d3dq_sync s[1] = { t_tl(self->out1, 1) };
	struct drm_d3dq_submit a = {
		.queue_id = self->q1,
		.flags = DRM_D3DQ_SUBMIT_CARRY,
		.waits = DRM_D3DQ_OBJ_ARRAY(1, w),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, s),
	};
	struct t_cs cs;

	/* Signals, commands: it makes no job. */
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	a.signals.count = 0;
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);
	a.cmds = (uintptr_t)cs.buf;
	a.cmd_bytes = cs.len;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &a));
	/* Nothing would name a releasable wait. */
	w[0] = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_signal(self->fd, self->out2, 1));
	w[0].flags |= DRM_D3DQ_SYNC_RELEASABLE;
	EXPECT_EQ(-EINVAL, t_carry(self->fd, self->q1, w, 1));
	/* Unknown queue, fence, syncobj; a point without a fence. */
	w[0] = t_fs(self->f.handle, 1);
	EXPECT_EQ(-ENOENT, t_carry(self->fd, 999, w, 1));
	w[0] = t_fs(self->f.handle + 100, 1);
	EXPECT_EQ(-ENOENT, t_carry(self->fd, self->q1, w, 1));
	w[0] = t_tl(self->out2 + 100, 1);
	EXPECT_EQ(-ENOENT, t_carry(self->fd, self->q1, w, 1));
	w[0] = t_tl(self->out2, 2);
	EXPECT_EQ(-ENODATA, t_carry(self->fd, self->q1, w, 1));
	/* Nothing to carry: nothing happens. */
	EXPECT_EQ(0, t_carry(self->fd, self->q1, NULL, 0));
	EXPECT_EQ(0, t_held(self->fd));
	/* Nothing was carried: the next job runs. */
	EXPECT_EQ(0, job_write(self->fd, self->q1, self->bo, 0, 3, self->out1,
			       NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 10 * T_SEC));
	EXPECT_EQ(3, self->map[0]);
}

/*
 * Destroy, loss (a job timeout), REMOVE and close free carried waits: no
 * job ever takes them, nothing leaks (the teardown checks).
 */
TEST_F(carry, freed_with_the_queue)
{
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w[1], s[1];
	struct t_cs cs;
	int other, i;

	w[0] = t_fs(self->f.handle, 1);
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	ASSERT_EQ(0, t_carry(self->fd, self->q1, w, 1));
	EXPECT_EQ(2, t_held(self->fd));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->q1));
	self->q1 = 0;
	EXPECT_EQ(0, t_held(self->fd));

	/* A job timeout loses q2: its carried wait goes. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 3 * T_SEC);
	s[0] = t_tl(self->out1, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, NULL, 0, s, 1, &cs));
	ASSERT_EQ(0, t_carry(self->fd, self->q2, w, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->out1, 1, 20 * T_SEC));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	for (i = 0; i < 1000 && t_held(self->fd); i++)
		usleep(10000);
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_EQ(-ECANCELED, t_carry(self->fd, self->q2, w, 1));

	/* REMOVE, then close, with carried waits. */
	other = t_open(0);
	ASSERT_LE(0, other);
	{
		struct t_fence f2;
		uint32_t qa = t_queue(other, 0, 0), qb = t_queue(other, 0, 0);

		ASSERT_NE(0, qa);
		ASSERT_NE(0, qb);
		ASSERT_EQ(0, t_fence_new(other, 0, 0, &f2));
		w[0] = t_fs(f2.handle, 1);
		ASSERT_EQ(0, t_carry(other, qa, w, 1));
		ASSERT_EQ(0, t_carry(other, qb, w, 1));
		EXPECT_EQ(2, t_held(other));
		ASSERT_EQ(0, t_ioctl(other, DRM_IOCTL_D3DQ_REMOVE, &rm));
		EXPECT_EQ(0, t_held(other));
		t_fence_unmap(&f2);
	}
	close(other);
	other = t_open(0);
	ASSERT_LE(0, other);
	{
		struct t_fence f2;
		uint32_t qa = t_queue(other, 0, 0);

		ASSERT_NE(0, qa);
		ASSERT_EQ(0, t_fence_new(other, 0, 0, &f2));
		w[0] = t_fs(f2.handle, 1);
		ASSERT_EQ(0, t_carry(other, qa, w, 1));
		t_fence_unmap(&f2);
	}
	close(other);
	EXPECT_TRUE(t_jobs_gone(1));
}

/*
 * Limits: carried waits count as held jobs against max_pending_jobs of
 * their queue (for carrying submits: a job takes them all, so it always
 * has their room) and against the file's bytes; at a limit they fill, a
 * submit fails at once (-ENOSPC) instead of sleeping (R5).
 */
FIXTURE(clim) {
	int fd;
};

FIXTURE_SETUP(clim)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_pending_jobs=8 max_file_job_bytes=262144"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(clim)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

TEST_F(clim, carried_waits_fill_limits)
{
	struct drm_d3dq_sync w[1];
	uint32_t q1, q2, q3, flags = 0;
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

	/* The queue: 8 carried, the 9th fails at once; a job takes them. */
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	EXPECT_EQ(-ENOSPC, t_carry(self->fd, q1, w, 1));
	EXPECT_EQ(8, t_held(self->fd));
	ASSERT_EQ(0, t_submit_out(self->fd, q1, NULL, 0, NULL, 0, NULL, &flags,
				  NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_EQ(1, t_held(self->fd));

	/* The file: carried waits on more queues fill its bytes. */
	for (n = 0; n < 1000; n++) {
		ret = t_carry(self->fd, q2, w, 1);
		if (ret)
			break;
		if (n % 7 == 6) {
			q2 = t_queue(self->fd, 0, 0);
			ASSERT_NE(0, q2);
		}
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_LT(7, n);
	EXPECT_LT(n, 1000);
	/* A queue without any, a job of the same size: at once. */
	EXPECT_EQ(-ENOSPC, t_submit_hold(self->fd, q3, w, 1, NULL, 0, NULL,
					 NULL, NULL));
	EXPECT_EQ(1 + n, t_held(self->fd));

	/*
	 * Released: q1's job runs, and the others' carried waits, all
	 * satisfied, leave without a job to take them.
	 */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	for (i = 0; i < 1000 && t_held(self->fd); i++)
		usleep(10000);
	EXPECT_EQ(0, t_held(self->fd));
	EXPECT_EQ(0, t_carry(self->fd, q2, w, 1));
	EXPECT_EQ(0, t_held(self->fd));
	t_fence_unmap(&f);
}

/*
 * A queue that only waits (D3D12 programs Wait on a queue and may never
 * execute on it again): its carried waits that are satisfied make room
 * for the next carrying submit, which does not fail at the limit. A wait
 * whose syncobj point failed stays carried: its error is for the job
 * that takes it.
 */
TEST_F(clim, satisfied_carried_waits_make_room)
{
	struct drm_d3dq_sync w[1];
	uint32_t q1, q2, so;
	struct t_fence f;
	int i;

	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	so = t_syncobj(self->fd);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, so);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));

	for (i = 0; i < 8; i++) {
		w[0] = t_fs(f.handle, 1 + i);
		ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	}
	w[0] = t_fs(f.handle, 100);
	EXPECT_EQ(-ENOSPC, t_carry(self->fd, q1, w, 1));
	EXPECT_EQ(8, t_held(self->fd));
	/*
	 * Five of the eight satisfied: the next carrying submit frees
	 * them, at the limit or not; room for five more.
	 */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	for (i = 0; i < 5; i++) {
		w[0] = t_fs(f.handle, 100 + i);
		ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
		if (!i)
			EXPECT_EQ(4, t_held(self->fd));
	}
	EXPECT_EQ(8, t_held(self->fd));
	EXPECT_EQ(-ENOSPC, t_carry(self->fd, q1, w, 1));
	/* Rewound: satisfied all the same (R6), still room. */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 200));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	EXPECT_EQ(1, t_held(self->fd));

	/* A failed point (its job cancelled by a destroy) stays carried. */
	ASSERT_EQ(0, t_queue_destroy(self->fd, q1));
	EXPECT_EQ(0, t_held(self->fd));
	q1 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q1);
	ASSERT_EQ(0, t_submit_delay(self->fd, q2, 2000, so, 1, NULL));
	w[0] = t_tl(so, 1);
	ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	ASSERT_EQ(0, t_queue_destroy(self->fd, q2));
	ASSERT_EQ(0, t_wait(self->fd, so, 1, 10 * T_SEC));
	EXPECT_GT(0, t_fence_status(self->fd, so, 1));
	for (i = 0; i < 7; i++) {
		w[0] = t_fs(f.handle, 300 + i);
		ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	}
	EXPECT_EQ(-ENOSPC, t_carry(self->fd, q1, w, 1));
	EXPECT_EQ(8, t_held(self->fd));
	t_fence_unmap(&f);
}

/* Whether @fd's held jobs (carried waits included) become @n within 10 s. */
static bool held_becomes(int fd, long long n)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (t_held(fd) == n)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Carried waits that are all satisfied are freed without a submit of
 * their queue (issue 38, item 5): they held room of the file and of the
 * user until the queue's next carrying submit, which a queue that only
 * waits may never make. A rewind after the value was reached changes
 * nothing (R6).
 */
TEST_F(clim, satisfied_carried_waits_leave_by_themselves)
{
	struct drm_d3dq_sync w[1];
	struct t_fence f;
	uint32_t q1, q2;
	struct t_cs cs;
	int i;

	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	for (i = 0; i < 8; i++) {
		w[0] = t_fs(f.handle, 1 + i);
		ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	}
	EXPECT_EQ(8, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	EXPECT_TRUE(held_becomes(self->fd, 3)) TH_LOG("%lld held",
						      t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 8));
	EXPECT_TRUE(held_becomes(self->fd, 0)) TH_LOG("%lld held",
						      t_held(self->fd));
	/* Nothing of them is left to take: the next job runs at once. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 0);
	EXPECT_EQ(0, t_submit(self->fd, q1, NULL, 0, NULL, 0, &cs));
	EXPECT_EQ(0, t_submit(self->fd, q2, NULL, 0, NULL, 0, &cs));
	EXPECT_TRUE(t_jobs_gone(1));
	t_fence_unmap(&f);
}

/* Unplug with carried waits: freed, nothing leaks, no WARN. */
T_UNPLUG_FIXTURE(cunplug)

TEST_F(cunplug, carried_waits)
{
	struct drm_d3dq_sync w[1];
	struct t_fence f;
	uint32_t q1;

	q1 = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q1);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));
	w[0] = t_fs(f.handle, 1);
	ASSERT_EQ(0, t_carry(self->fd, q1, w, 1));
	ASSERT_EQ(0, t_unbind(0));
	EXPECT_EQ(UINT64_MAX, t_value_load(f.v));
	t_fence_unmap(&f);
}

TEST_HARNESS_MAIN
