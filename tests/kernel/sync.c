// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: waits and signals between the CPU, queues and processes; order
 * inside a queue, concurrency across queues, and jobs never starting
 * before what they wait for.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3dq_test.h"

FIXTURE(sync) {
	int fd;
	uint32_t bo;
	uint64_t *map;
};

FIXTURE_SETUP(sync)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
}

FIXTURE_TEARDOWN(sync)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Waits on points the CPU signalled, binary and timeline. */
TEST_F(sync, cpu_signalled)
{
	uint32_t q = t_queue(self->fd, 0, 0);
	uint32_t tl = t_syncobj(self->fd), bin = t_syncobj(self->fd);
	uint32_t out = t_syncobj(self->fd);
	struct drm_d3dq_sync w[2] = { t_tl(tl, 3), t_bin(bin) };
	struct drm_d3dq_sync sig = t_tl(out, 1);
	struct t_cs cs;

	ASSERT_NE(0, q);
	ASSERT_EQ(0, t_signal(self->fd, tl, 3));
	ASSERT_EQ(0, t_signal(self->fd, bin, 0));
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 11);
	ASSERT_EQ(0, t_submit(self->fd, q, w, 2, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, out, 1, 5 * T_SEC));
	EXPECT_EQ(11, self->map[0]);
}

/*
 * Queue B waits for a point queue A signals after a delay: B's job starts
 * after A's job ended (engine timestamps), and B's submit did not block.
 */
TEST_F(sync, queue_to_queue)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 1, 1);
	uint32_t tl = t_syncobj(self->fd), bin = t_syncobj(self->fd);
	uint32_t out = t_syncobj(self->fd);
	struct drm_d3dq_sync sa[2] = { t_tl(tl, 1), t_bin(bin) };
	struct drm_d3dq_sync wb[2] = { t_tl(tl, 1), t_bin(bin) };
	struct drm_d3dq_sync sb = t_tl(out, 7);
	uint64_t t0, t1;
	struct t_cs cs;

	ASSERT_NE(0, qa);
	ASSERT_NE(0, qb);
	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_MS);
	t_cs_timestamp(&cs, self->bo, 0);
	t_cs_write64(&cs, self->bo, 16, 99);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, sa, 2, &cs));

	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 8);
	t_cs_copy(&cs, self->bo, 24, self->bo, 16, 8);
	t0 = t_now();
	ASSERT_EQ(0, t_submit(self->fd, qb, wb, 2, &sb, 1, &cs));
	t1 = t_now();
	/* Submitting never waits for dependencies. */
	EXPECT_GT(t0 + 250 * T_MS, t1);
	EXPECT_EQ(-ETIME, t_wait(self->fd, out, 7, 0));

	ASSERT_EQ(0, t_wait(self->fd, out, 7, 10 * T_SEC));
	EXPECT_LE(self->map[0], self->map[1]);
	EXPECT_NE(0, self->map[0]);
	EXPECT_EQ(99, self->map[3]);	/* B saw A's write */
}

/* A job never starts before the CPU-visible moment its wait signalled. */
TEST_F(sync, never_early)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t tl = t_syncobj(self->fd), out = t_syncobj(self->fd);
	struct drm_d3dq_sync sa = t_tl(tl, 5), wb = t_tl(tl, 5);
	struct drm_d3dq_sync sb = t_tl(out, 1);
	uint64_t submitted, done_seen;
	struct t_cs cs;
	int i;

	for (i = 0; i < 5; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, 50 * T_MS);
		sa.point = wb.point = 5 + i;
		sb.point = 1 + i;
		/* A's delay cannot start before this. */
		submitted = t_now();
		ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &sa, 1, &cs));
		t_cs_init(&cs);
		t_cs_timestamp(&cs, self->bo, 8 * i);
		ASSERT_EQ(0, t_submit(self->fd, qb, &wb, 1, &sb, 1, &cs));
		ASSERT_EQ(0, t_wait(self->fd, out, sb.point, 10 * T_SEC));
		done_seen = t_now();
		EXPECT_LE(submitted + 50 * T_MS, self->map[i]);
		EXPECT_GE(done_seen, self->map[i]);
	}
}

/* Jobs of one queue run one after the other, in submission order. */
TEST_F(sync, in_order)
{
	uint32_t q = t_queue(self->fd, 0, 0), out = t_syncobj(self->fd);
	struct drm_d3dq_sync sig = t_tl(out, 0);
	struct t_cs cs;
	int i, n = 200;

	for (i = 0; i < n; i++) {
		t_cs_init(&cs);
		/* Only moves on if every earlier job ran before. */
		t_cs_cmp_store(&cs, self->bo, 0, i, i + 1);
		t_cs_timestamp(&cs, self->bo, 8 + 8 * i);
		if (i % 50 == 0)
			t_cs_delay(&cs, 20 * T_MS);
		sig.point = i + 1;
		ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
	}
	ASSERT_EQ(0, t_wait(self->fd, out, n, 20 * T_SEC));
	EXPECT_EQ((uint64_t)n, self->map[0]);
	for (i = 1; i < n; i++)
		ASSERT_LE(self->map[i], self->map[i + 1]);
}

/*
 * Two queues released by the same fence each run a 500 ms delay: their
 * run intervals (engine timestamps) overlap, so they ran concurrently.
 */
TEST_F(sync, concurrent_queues)
{
	uint32_t gate = t_queue(self->fd, 0, 0);
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t tl = t_syncobj(self->fd), out = t_syncobj(self->fd);
	struct drm_d3dq_sync g = t_tl(tl, 1), w = t_tl(tl, 1);
	struct drm_d3dq_sync sa = t_tl(out, 1), sb = t_tl(out, 2);
	uint64_t *m = self->map;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, 100 * T_MS);
	ASSERT_EQ(0, t_submit(self->fd, gate, NULL, 0, &g, 1, &cs));

	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 0);
	t_cs_delay(&cs, 500 * T_MS);
	t_cs_timestamp(&cs, self->bo, 8);
	ASSERT_EQ(0, t_submit(self->fd, qa, &w, 1, &sa, 1, &cs));
	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 16);
	t_cs_delay(&cs, 500 * T_MS);
	t_cs_timestamp(&cs, self->bo, 24);
	ASSERT_EQ(0, t_submit(self->fd, qb, &w, 1, &sb, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, out, 2, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, out, 1, 10 * T_SEC));
	TH_LOG("A %.3f-%.3f B %.3f-%.3f ms", 0.0, (m[1] - m[0]) / 1e6,
	       ((double)m[2] - m[0]) / 1e6, ((double)m[3] - m[0]) / 1e6);
	EXPECT_LT(m[0], m[3]);
	EXPECT_LT(m[2], m[1]);
}

/* Pure synchronisation jobs chain queues without commands. */
TEST_F(sync, sync_point_chain)
{
	uint32_t q[4], tl = t_syncobj(self->fd);
	struct drm_d3dq_sync w, s;
	struct t_cs cs;
	int i;

	for (i = 0; i < 4; i++) {
		q[i] = t_queue(self->fd, i % 3, 0);
		ASSERT_NE(0, q[i]);
	}
	t_cs_init(&cs);
	t_cs_delay(&cs, 100 * T_MS);
	t_cs_write64(&cs, self->bo, 0, 1);
	s = t_tl(tl, 1);
	ASSERT_EQ(0, t_submit(self->fd, q[0], NULL, 0, &s, 1, &cs));
	for (i = 1; i < 4; i++) {
		w = t_tl(tl, i);
		s = t_tl(tl, i + 1);
		ASSERT_EQ(0, t_submit(self->fd, q[i], &w, 1, &s, 1, NULL));
	}
	t_cs_init(&cs);
	t_cs_copy(&cs, self->bo, 8, self->bo, 0, 8);
	w = t_tl(tl, 4);
	s = t_tl(tl, 5);
	ASSERT_EQ(0, t_submit(self->fd, q[0], &w, 1, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, tl, 5, 10 * T_SEC));
	EXPECT_EQ(1, self->map[1]);
	EXPECT_EQ(1, t_fence_status(self->fd, tl, 5));
}

/* A thread waiting (WAIT_AVAILABLE) for a point of @tl to be submitted. */
struct avail_waiter {
	int fd;
	uint32_t tl;
	uint64_t point;
	_Atomic pid_t tid;
	int ret;
};

static void *avail_waiter_main(void *arg)
{
	struct avail_waiter *a = arg;

	atomic_store(&a->tid, task_self());
	a->ret = drmSyncobjTimelineWait(a->fd, &a->tl, &a->point, 1,
					t_deadline(20 * T_SEC),
					DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
					NULL) ? -errno : 0;
	return NULL;
}

/*
 * Another process signals through an exported syncobj; this process
 * waits for the point to be submitted (the child submits once this
 * process is refused and a thread of it sleeps in the wait), then queues
 * work behind it.
 */
TEST_F(sync, cross_process)
{
	uint32_t tl = t_syncobj(self->fd), out = t_syncobj(self->fd);
	uint32_t q = t_queue(self->fd, 0, 0);
	struct drm_d3dq_sync w = t_tl(tl, 2), s = t_tl(out, 1);
	struct avail_waiter a = { .fd = self->fd, .tl = tl, .point = 2,
				  .ret = 1 };
	struct t_cs cs;
	int obj_fd, status, go[2];
	pthread_t t;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, tl, &obj_fd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t h, cq, cbo;
		struct drm_d3dq_sync cs1;
		uint64_t *cm;
		int cfd;
		char c;

		close(self->fd);
		close(go[1]);
		cfd = t_open(0);
		if (cfd < 0 || drmSyncobjFDToHandle(cfd, obj_fd, &h))
			_exit(1);
		cq = t_queue(cfd, 0, 0);
		cbo = t_bo(cfd, 4096, (void **)&cm);
		if (!cq || !cbo)
			_exit(2);
		/* The parent waits for the submission. */
		if (read(go[0], &c, 1) != 1)
			_exit(6);
		t_cs_init(&cs);
		t_cs_delay(&cs, 200 * T_MS);
		t_cs_timestamp(&cs, cbo, 0);
		cs1 = t_tl(h, 2);
		if (t_submit(cfd, cq, NULL, 0, &cs1, 1, &cs))
			_exit(3);
		if (t_wait(cfd, h, 2, 10 * T_SEC))
			_exit(4);
		/* The job ran: its timestamp is there. */
		_exit(cm[0] ? 0 : 5);
	}
	close(obj_fd);
	close(go[0]);

	/* Not submitted yet: the kernel refuses, userspace waits. */
	EXPECT_EQ(-ENODATA, t_submit(self->fd, q, &w, 1, &s, 1, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, avail_waiter_main, &a));
	while (!atomic_load(&a.tid))
		usleep(1000);
	EXPECT_TRUE(task_asleep_in_driver(atomic_load(&a.tid)));
	ASSERT_EQ(1, write(go[1], "x", 1));
	close(go[1]);
	pthread_join(t, NULL);
	ASSERT_EQ(0, a.ret);
	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->bo, 0);
	ASSERT_EQ(0, t_submit(self->fd, q, &w, 1, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, out, 1, 10 * T_SEC));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status 0x%x", status);
	EXPECT_EQ(1, t_fence_status(self->fd, tl, 2));
	EXPECT_NE(0, self->map[0]);
}

/* debugfs shows, for a job held by a dependency, what it waits for. */
TEST_F(sync, debugfs_held_job)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 2, 1);
	uint32_t tl = t_syncobj(self->fd);
	struct drm_d3dq_sync sa = t_tl(tl, 41), wb = t_tl(tl, 41);
	struct drm_d3dq_sync sb = t_tl(tl, 42);
	const char *text;
	char want[96];
	struct t_cs cs;
	int i;

	t_cs_init(&cs);
	t_cs_delay(&cs, 1500 * T_MS);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &sa, 1, &cs));
	ASSERT_EQ(0, t_submit(self->fd, qb, &wb, 1, &sb, 1, NULL));
	if (!t_queues_text())
		SKIP(return, "no debugfs");
	snprintf(want, sizeof(want), "waits syncobj=%u point=41", tl);
	/* qa's job starts running shortly after the submit. */
	for (i = 0; i < 100; i++) {
		text = t_queues_text();
		ASSERT_NE(NULL, text);
		if (strstr(text, "running=1"))
			break;
		usleep(10000);
	}
	EXPECT_NE(NULL, strstr(text, "running=1")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	snprintf(want, sizeof(want), "queue %u type=copy prio=high", qb);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("%s", text);
	ASSERT_EQ(0, t_wait(self->fd, tl, 42, 10 * T_SEC));
	text = t_queues_text();
	ASSERT_NE(NULL, text);
	EXPECT_EQ(NULL, strstr(text, "waits syncobj")) TH_LOG("%s", text);
}

TEST_HARNESS_MAIN
