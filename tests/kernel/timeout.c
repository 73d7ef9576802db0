// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: job timeout and its consequences, with the default 2 s timeout:
 * the job's fence fails with -ETIMEDOUT, the queue is lost, its other
 * jobs fail with -ECANCELED without running, queues depending on it are
 * lost too, and unrelated queues carry on.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(to) {
	int fd;
	uint32_t bo;
	uint64_t *map;
	uint64_t timeout;
};

FIXTURE_SETUP(to)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->timeout = t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	if (self->timeout != 2 * T_SEC)
		SKIP(return, "expects the default 2 s job timeout");
}

FIXTURE_TEARDOWN(to)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * A timed-out job is logged at warning level with its queue, the process
 * that created the queue and the job: a user can tell who hung what
 * without enabling DRM debug output.
 */
TEST_F(to, logged)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd);
	struct drm_d3dq_sync sig = t_bin(s);
	char want[128], comm[32] = "", line[1024];
	bool found = false;
	struct t_cs cs;
	ssize_t n;
	FILE *f;
	int kmsg;

	ASSERT_NE(0, q);
	f = fopen("/proc/self/comm", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg < 0)
		SKIP(return, "no /dev/kmsg");
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));

	t_cs_init(&cs);
	t_cs_delay(&cs, 4 * T_SEC);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, s, 0));

	/* "<level>,<seq>,<time>,<flags>;<text>": level 4 is KERN_WARNING. */
	snprintf(want, sizeof(want), "of queue %u (%s[%d]) timed out", q,
		 comm, getpid());
	while ((n = read(kmsg, line, sizeof(line) - 1)) > 0) {
		line[n] = 0;
		if (strstr(line, want) && strstr(line, "job ") &&
		    !strncmp(line, "4,", 2))
			found = true;
	}
	close(kmsg);
	EXPECT_TRUE(found) TH_LOG("no warning containing '%s'", want);
}

TEST_F(to, lost_queue)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t qc = t_queue(self->fd, 1, 0);
	uint32_t ta = t_syncobj(self->fd), tb = t_syncobj(self->fd);
	uint32_t tc = t_syncobj(self->fd), t1 = t_syncobj(self->fd);
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s, w;
	uint64_t start, end;
	struct t_cs cs;

	/*
	 * qa: a job that runs past the timeout, then one more. Errors are
	 * read from the newest point of a timeline (older signalled points
	 * are garbage-collected), so each job gets its own timeline.
	 */
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);
	t_cs_delay(&cs, 6 * T_SEC);
	t_cs_write64(&cs, self->bo, 8, 1);
	s = t_tl(t1, 1);
	start = t_now();
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 16, 1);
	s = t_tl(ta, 2);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));

	/* qc depends on the job that will time out. */
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 24, 1);
	w = t_tl(t1, 1);
	s = t_tl(tc, 1);
	ASSERT_EQ(0, t_submit(self->fd, qc, &w, 1, &s, 1, &cs));

	/* qb is unrelated. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 100 * T_MS);
	t_cs_write64(&cs, self->bo, 32, 1);
	s = t_tl(tb, 1);
	ASSERT_EQ(0, t_submit(self->fd, qb, NULL, 0, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, t1, 1, 10 * T_SEC));
	end = t_now();
	ASSERT_EQ(0, t_wait(self->fd, ta, 2, 5 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tc, 1, 5 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tb, 1, 5 * T_SEC));

	/* Stopped at the timeout, long before the delay's end. */
	EXPECT_LE(start + self->timeout - 100 * T_MS, end);
	EXPECT_GT(start + 5 * T_SEC, end);

	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, t1, 1));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, ta, 2));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, tc, 1));
	EXPECT_EQ(1, t_fence_status(self->fd, tb, 1));
	EXPECT_EQ(1, self->map[0]);	/* ran up to the delay */
	EXPECT_EQ(0, self->map[1]);	/* stopped in the delay */
	EXPECT_EQ(0, self->map[2]);	/* cancelled, never ran */
	EXPECT_EQ(0, self->map[3]);	/* dependency failed */
	EXPECT_EQ(1, self->map[4]);	/* unrelated queue */

	ASSERT_EQ(0, t_queue_state(self->fd, qa, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ETIMEDOUT, st.reason);
	EXPECT_EQ(0, st.pending_jobs);
	ASSERT_EQ(0, t_queue_state(self->fd, qc, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
	ASSERT_EQ(0, t_queue_state(self->fd, qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	EXPECT_EQ(0, st.reason);

	/* Lost queues refuse work; the others take it. */
	s = t_tl(ta, 3);
	EXPECT_EQ(-ECANCELED, t_submit(self->fd, qa, NULL, 0, &s, 1, NULL));
	s = t_tl(tc, 2);
	EXPECT_EQ(-ECANCELED, t_submit(self->fd, qc, NULL, 0, &s, 1, NULL));
	s = t_tl(tb, 2);
	EXPECT_EQ(0, t_submit(self->fd, qb, NULL, 0, &s, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, tb, 2, 5 * T_SEC));
	EXPECT_EQ(0, t_queue_destroy(self->fd, qa));
	EXPECT_EQ(0, t_queue_destroy(self->fd, qc));
}

/*
 * The timeout covers one job's run time: neither time spent waiting for
 * a dependency nor the time of earlier jobs of the queue counts.
 */
TEST_F(to, per_job)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t ta = t_syncobj(self->fd), tb = t_syncobj(self->fd);
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s, w;
	uint64_t each = self->timeout * 6 / 10;
	struct t_cs cs;
	int i;

	for (i = 1; i <= 3; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, each);
		s = t_tl(ta, i);
		ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));
	}
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 5);
	w = t_tl(ta, 3);
	s = t_tl(tb, 1);
	ASSERT_EQ(0, t_submit(self->fd, qb, &w, 1, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, tb, 1, 20 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, ta, 3));
	EXPECT_EQ(1, t_fence_status(self->fd, tb, 1));
	EXPECT_EQ(5, self->map[0]);
	ASSERT_EQ(0, t_queue_state(self->fd, qa, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	ASSERT_EQ(0, t_queue_state(self->fd, qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

/* Two queues time out at the same time, independently. */
TEST_F(to, two_at_once)
{
	uint32_t q[2] = { t_queue(self->fd, 0, 0), t_queue(self->fd, 2, 1) };
	uint32_t ok = t_queue(self->fd, 0, 0);
	uint32_t tl[3] = { t_syncobj(self->fd), t_syncobj(self->fd),
			   t_syncobj(self->fd) };
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s;
	struct t_cs cs;
	int i;

	for (i = 0; i < 2; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, 5 * T_SEC);
		s = t_bin(tl[i]);
		ASSERT_EQ(0, t_submit(self->fd, q[i], NULL, 0, &s, 1, &cs));
	}
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 3);
	s = t_tl(tl[2], 1);
	/* Not a dependency of the others: runs at once. */
	ASSERT_EQ(0, t_submit(self->fd, ok, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, tl[2], 1, 10 * T_SEC));
	EXPECT_EQ(0, t_fence_status(self->fd, tl[0], 0));
	ASSERT_EQ(0, t_wait(self->fd, tl[1], 0, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tl[0], 0, 10 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, tl[0], 0));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, tl[1], 0));
	EXPECT_EQ(1, t_fence_status(self->fd, tl[2], 1));
	EXPECT_EQ(3, self->map[0]);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, t_queue_state(self->fd, q[i], &st));
		EXPECT_EQ(-ETIMEDOUT, st.reason);
	}
}

TEST_HARNESS_MAIN
