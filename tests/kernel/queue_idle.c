// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq queue idle words (uapi 1.15, DRM_D3DQ_QUEUE_IDLE_WORD): a word
 * userspace maps read-only that reads 0 exactly while the queue is idle.
 * What is asserted: 0 at creation and once every job ended; not 0 while
 * a job is armed or runs, while a job is held behind a wait or a wait is
 * carried, and never again once the queue is lost (REMOVE), destroyed,
 * or a job of it failed; the fence values the queue's jobs and the tails
 * they took set are there when 0 is read (R17), a held signal-only job
 * that a CPU signal completes leaves it; a queue without the flag has
 * none; bad input.
 *
 * Nothing here measures time: "runs" is a DELAY job whose point is
 * checked unsignalled where it matters; "becomes 0" is polled with a
 * deadline.
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

FIXTURE(idle) {
	int fd;
	uint32_t q, so;
	struct t_fence f, g;
	const uint64_t *w;
};

/* QUEUE_CREATE with an idle word, mapped at @w: the queue id, or 0. */
static uint32_t idle_queue(int fd, const uint64_t **w)
{
	struct drm_d3dq_queue_create c = { .flags = DRM_D3DQ_QUEUE_IDLE_WORD };
	struct t_fence word = { 0 };

	if (t_ioctl(fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c) ||
	    !c.idle_mmap_offset)
		return 0;
	word.offset = c.idle_mmap_offset;
	word.voff = c.idle_offset;
	*w = t_value_map(fd, &word);
	return *w ? c.id : 0;
}

/* Whether @w reads 0 within 10 s. */
static bool becomes_idle(const uint64_t *w)
{
	int64_t end = t_deadline(10 * T_SEC);

	while (t_value_load(w)) {
		if ((int64_t)t_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

FIXTURE_SETUP(idle)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD);
	self->q = idle_queue(self->fd, &self->w);
	ASSERT_NE(0, self->q);
	self->so = t_syncobj(self->fd);
	ASSERT_NE(0, self->so);
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->f));
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &self->g));
}

FIXTURE_TEARDOWN(idle)
{
	t_fence_unmap(&self->f);
	t_fence_unmap(&self->g);
	t_value_unmap_all();
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* 0 at creation; not 0 while a job runs; 0 once it ended. */
TEST_F(idle, jobs_make_it_busy)
{
	EXPECT_EQ(0, t_value_load(self->w));
	ASSERT_EQ(0, t_submit_delay(self->fd, self->q, 300, self->so, 1, NULL));
	EXPECT_NE(0, t_value_load(self->w));
	/* The point signals after the job ended: 0 by then. */
	ASSERT_EQ(0, t_wait(self->fd, self->so, 1, 10 * T_SEC));
	EXPECT_EQ(0, t_value_load(self->w));

	/* A job that ran inside SUBMIT (nothing before it) left it 0. */
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, NULL, 0, NULL));
	EXPECT_TRUE(becomes_idle(self->w));
}

/*
 * 0 is read only after the values the queue's work set: its jobs' own
 * and those of the tails they took (R17), in several rounds so that the
 * end of the job races the reader.
 */
TEST_F(idle, values_are_set_when_it_reads_0)
{
	uint64_t i;

	for (i = 1; i <= 20; i++) {
		struct drm_d3dq_sync own = t_fs(self->f.handle, 2 * i);
		struct drm_d3dq_sync tail = t_fs(self->g.handle, 2 * i + 1);

		ASSERT_EQ(0, t_submit_delay(self->fd, self->q, i % 4,
					    self->so, i, &own));
		ASSERT_EQ(0, t_tail(self->fd, self->q, &tail, 1, NULL, NULL));
		while (t_value_load(self->w))
			;
		EXPECT_EQ(2 * i, t_value_load(self->f.v));
		EXPECT_EQ(2 * i + 1, t_value_load(self->g.v));
	}
}

/*
 * A job held behind a wait, and a carried wait, keep it from 0 until
 * they ran; a held signal-only job that a CPU signal completes without
 * the engine (a marker) leaves it, its value set.
 */
TEST_F(idle, held_and_carried_work)
{
	struct drm_d3dq_sync wf = t_fs(self->f.handle, 1);
	struct drm_d3dq_sync sg = t_fs(self->g.handle, 5);
	struct drm_d3dq_sync wg = t_fs(self->g.handle, 6);
	uint32_t flags = 0;

	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &wf, 1, &sg, 1, NULL,
				   &flags, NULL));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_HELD, flags);
	EXPECT_NE(0, t_value_load(self->w));
	/*
	 * The file's own CPU signal completes it in its call, without the
	 * engine (a marker, whose memory is freed later): 0 on return.
	 */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	EXPECT_EQ(0, t_value_load(self->w));
	ASSERT_TRUE(becomes_idle(self->w));
	EXPECT_EQ(5, t_value_load(self->g.v));

	/* A carried wait: not 0 until it is satisfied and taken. */
	ASSERT_EQ(0, t_carry(self->fd, self->q, &wg, 1));
	EXPECT_NE(0, t_value_load(self->w));
	usleep(20000);
	EXPECT_NE(0, t_value_load(self->w));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->g.handle, 6));
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, NULL, 0, NULL));
	EXPECT_TRUE(becomes_idle(self->w));
}

/* A job whose dependency failed loses the queue: never 0 again. */
TEST_F(idle, failed_job_keeps_it_busy)
{
	struct drm_d3dq_sync w = t_tl(self->so, 1);
	uint32_t other = t_queue(self->fd, 0, 0);
	struct t_cs cs;

	ASSERT_NE(0, other);
	/* The dependency: a job of another queue that is destroyed. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 200 * T_MS);
	{
		struct drm_d3dq_sync s = t_tl(self->so, 1);

		ASSERT_EQ(0, t_submit(self->fd, other, NULL, 0, &s, 1, &cs));
	}
	ASSERT_EQ(0, t_submit(self->fd, self->q, &w, 1, NULL, 0, NULL));
	EXPECT_NE(0, t_value_load(self->w));
	ASSERT_EQ(0, t_queue_destroy(self->fd, other));
	/* Cancelled: the point signals with an error. */
	ASSERT_EQ(0, t_wait(self->fd, self->so, 1, 10 * T_SEC));
	ASSERT_GT(0, t_fence_status(self->fd, self->so, 1));
	usleep(200000);
	EXPECT_NE(0, t_value_load(self->w));
}

/* REMOVE loses every queue: never 0 again; nor after destroy. */
TEST_F(idle, lost_or_destroyed_never_idle)
{
	struct drm_d3dq_remove rm = { 0 };
	const uint64_t *w2;
	uint32_t q2;

	q2 = idle_queue(self->fd, &w2);
	ASSERT_NE(0, q2);
	EXPECT_EQ(0, t_value_load(w2));
	ASSERT_EQ(0, t_queue_destroy(self->fd, q2));
	/* Its slot is no fence's until one is made. */
	EXPECT_NE(0, t_value_load(w2));

	EXPECT_EQ(0, t_value_load(self->w));
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_NE(0, t_value_load(self->w));
	usleep(20000);
	EXPECT_NE(0, t_value_load(self->w));
	/* And no queue, with a word or not, is made any more. */
	EXPECT_EQ(0, idle_queue(self->fd, &w2));
}

/* Without the flag no word; bad input; the mapping is read-only. */
TEST_F(idle, bad_input)
{
	struct drm_d3dq_queue_create c = { 0 };
	const uint64_t *w = self->w;
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	EXPECT_NE(0, c.id);
	EXPECT_EQ(0, c.idle_mmap_offset);
	EXPECT_EQ(0, c.idle_offset);

	c = (struct drm_d3dq_queue_create){ .flags = 2 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	c = (struct drm_d3dq_queue_create){ .flags = DRM_D3DQ_QUEUE_IDLE_WORD,
					    .idle_mmap_offset = 4096 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	c = (struct drm_d3dq_queue_create){ .flags = DRM_D3DQ_QUEUE_IDLE_WORD,
					    .idle_offset = 8 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	c = (struct drm_d3dq_queue_create){ .flags = DRM_D3DQ_QUEUE_IDLE_WORD,
					    .pad = 1 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));

	/* The page is mapped read-only for good. */
	c = (struct drm_d3dq_queue_create){ .flags = DRM_D3DQ_QUEUE_IDLE_WORD };
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 c.idle_mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, t_value_load(w));
}

TEST_HARNESS_MAIN
