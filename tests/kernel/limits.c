// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: per-file bounds on what a file keeps alive in the kernel.
 *
 * A destroyed queue counts against max_queues until it is freed, which
 * for a queue with jobs held by dependencies is when they finish; the
 * memory of a file's unfreed jobs is bounded by max_file_job_bytes;
 * allocations are charged to the caller's memory cgroup.
 *
 * The module is reloaded with a long job timeout, so that one long DELAY
 * holds other jobs as long as a test needs (every test ends it by
 * destroying its queue), and with max_queues=64 to keep it quick.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define ARGS	"max_queues=64 job_timeout_ms=600000 max_delay_ns=600000000000"
#define MAXQ	64

FIXTURE(lim) {
	int fd;
	uint32_t blocker, tl;	/* a queue running a 600 s job: tl point 1 */
};

FIXTURE_SETUP(lim)
{
	struct drm_d3dq_sync sig;
	struct t_cs cs;

	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->tl = t_syncobj(self->fd);
	self->blocker = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->blocker);
	t_cs_init(&cs);
	t_cs_delay(&cs, 600 * T_SEC);
	sig = t_tl(self->tl, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->blocker, NULL, 0, &sig, 1, &cs));
}

FIXTURE_TEARDOWN(lim)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

static int queue_create(int fd, uint32_t *id)
{
	struct drm_d3dq_queue_create c = { 0 };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
		return -errno;
	*id = c.id;
	return 0;
}

/* A job held by the blocker's long job. */
static int held_job(int fd, uint32_t q, uint32_t tl, const struct t_cs *cs)
{
	struct drm_d3dq_sync w = t_tl(tl, 1);

	return t_submit(fd, q, &w, 1, NULL, 0, cs);
}

/* This process's "client" line of debugfs "queues": field @key. */
static long long client_field(const char *key)
{
	const char *text = t_queues_text(), *line, *p;
	char pat[64], want[32];
	long long v;

	if (!text)
		return -1;
	/* "client id=I pid=P ...": only client lines carry a pid. */
	snprintf(want, sizeof(want), " pid=%d ", getpid());
	line = strstr(text, want);
	if (!line)
		return -1;
	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	if (!p || p > strchr(line, '\n'))
		return -1;
	if (sscanf(p + strlen(pat), "%lld", &v) != 1)
		return -1;
	return v;
}

/* Wait (up to 20 s) until the file holds @queues queues and @jobs jobs. */
static bool wait_counts(int queues, int jobs)
{
	struct t_objects o;
	int i;

	for (i = 0; i < 2000; i++) {
		if (t_objects(&o))
			return false;
		if (o.queues == queues && o.jobs == jobs)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Issue 12, item 1: create a queue, submit 8 jobs that wait for a long
 * job of another queue, destroy the queue; repeat. Each destroyed queue
 * lives on, with its scheduler and jobs, until the jobs are done, so it
 * keeps its slot: after max_queues - 1 rounds (the blocker holds one)
 * QUEUE_CREATE fails with -EMFILE, and no more than the documented
 * bound is alive. Before, every round succeeded and nothing bounded
 * the queues, schedulers and jobs held.
 */
TEST_F_TIMEOUT(lim, destroy_loop_bounded, 300)
{
	struct t_objects o;
	int round, j, rounds = 0, err = 0;
	uint32_t q = 0;

	for (round = 0; round < 3 * MAXQ; round++) {
		err = queue_create(self->fd, &q);
		if (err)
			break;
		rounds++;
		for (j = 0; j < 8; j++)
			ASSERT_EQ(0, held_job(self->fd, q, self->tl, NULL));
		ASSERT_EQ(0, t_queue_destroy(self->fd, q));
	}
	EXPECT_EQ(-EMFILE, err);
	EXPECT_EQ(MAXQ - 1, rounds);
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ(MAXQ, o.queues);
	EXPECT_EQ(8 * (MAXQ - 1) + 1, o.jobs);
	EXPECT_EQ(MAXQ, o.schedulers);
	EXPECT_EQ(MAXQ, client_field("alive"));
	EXPECT_EQ(0, client_field("finishing"));
	EXPECT_EQ(1, client_field("queues"));

	/* The held jobs end cancelled with the blocker; slots come back. */
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->blocker));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	EXPECT_EQ(0, queue_create(self->fd, &q));
	EXPECT_TRUE(wait_counts(1, 0));
}

/*
 * At the limit, a destroyed queue whose jobs have all finished frees its
 * slot without outside help: QUEUE_CREATE waits for that instead of
 * failing. A destroyed queue with a held job keeps its slot (-EMFILE)
 * until the job is done.
 */
TEST_F_TIMEOUT(lim, finished_and_held, 300)
{
	uint32_t ids[MAXQ], q, s = t_syncobj(self->fd);
	struct drm_d3dq_sync sig = t_bin(s), w;
	int i;

	/* The blocker and MAXQ - 1 more. */
	for (i = 0; i < MAXQ - 1; i++)
		ASSERT_EQ(0, queue_create(self->fd, &ids[i]));
	EXPECT_EQ(-EMFILE, queue_create(self->fd, &q));

	/* A finished job: the slot comes back at once. */
	ASSERT_EQ(0, t_submit(self->fd, ids[0], NULL, 0, &sig, 1, NULL));
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 5 * T_SEC));
	ASSERT_EQ(0, t_queue_destroy(self->fd, ids[0]));
	ASSERT_EQ(0, queue_create(self->fd, &ids[0]));
	EXPECT_EQ(-EMFILE, queue_create(self->fd, &q));

	/* A held job: the slot stays taken until it is done. */
	w = t_tl(self->tl, 1);
	ASSERT_EQ(0, t_submit(self->fd, ids[1], &w, 1, &sig, 1, NULL));
	ASSERT_EQ(0, t_queue_destroy(self->fd, ids[1]));
	EXPECT_EQ(-EMFILE, queue_create(self->fd, &q));
	EXPECT_EQ(MAXQ, client_field("alive"));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->blocker));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	/* The held job completes (cancelled: its dependency failed). */
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, s, 0));
	/* Two slots: the held queue's and the blocker's. */
	EXPECT_EQ(0, queue_create(self->fd, &ids[1]));
	EXPECT_EQ(0, queue_create(self->fd, &q));
	EXPECT_EQ(-EMFILE, queue_create(self->fd, &q));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A 64 KiB command stream: 4096 zero-length DELAYs. */
static void big_stream(struct t_cs *cs)
{
	int i;

	t_cs_init(cs);
	for (i = 0; i < 4096; i++)
		t_cs_delay(cs, 0);
}

/*
 * The jobs a file holds are bounded by max_file_job_bytes: held jobs
 * with 64 KiB command streams (about 256 KiB of kernel memory each)
 * are accepted up to the bound, then SUBMIT sleeps (here interrupted);
 * another file is not affected; once the jobs are gone, submits work.
 */
TEST_F_TIMEOUT(lim, job_memory_bounded, 300)
{
	uint64_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES);
	struct sigaction sa = { .sa_handler = on_alarm };
	struct drm_d3dq_submit sub = { 0 };
	struct drm_d3dq_sync w = t_tl(self->tl, 1);
	static struct t_cs cs;
	uint32_t q = 0, q2;
	int n, ret = 0, fd2;
	long long bytes;

	EXPECT_EQ(64ull << 20, max);
	ASSERT_EQ(0, queue_create(self->fd, &q));
	big_stream(&cs);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	sub.queue_id = q;
	sub.waits = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(1, &w);
	sub.cmds = (uintptr_t)cs.buf;
	sub.cmd_bytes = cs.len;
	for (n = 0; n < 400; n++) {
		sub.seqno = 0;	/* out: must be 0 on input */
		ualarm(500 * 1000, 0);
		ret = ioctl(self->fd, DRM_IOCTL_D3DQ_SUBMIT, &sub) ? -errno : 0;
		ualarm(0, 0);
		if (ret)
			break;
	}
	/* 64 MiB hold about 250 such jobs; the next one sleeps. */
	EXPECT_EQ(-EINTR, ret);
	EXPECT_LE(200, n);
	EXPECT_GE(256, n);
	bytes = client_field("job_bytes");
	TH_LOG("%d held jobs of 64 KiB streams, %lld bytes counted", n, bytes);
	EXPECT_GE((long long)max, bytes);
	EXPECT_LT((long long)max - (1 << 20), bytes);
	EXPECT_EQ(n + 1, client_field("jobs"));

	/* Another file has its own budget. */
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	q2 = t_queue(fd2, 0, 0);
	ASSERT_NE(0, q2);
	EXPECT_EQ(0, t_submit(fd2, q2, NULL, 0, NULL, 0, &cs));
	close(fd2);

	/* q is lost with its held jobs; a new queue takes big jobs again. */
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->blocker));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_queue_destroy(self->fd, q));
	ASSERT_EQ(0, queue_create(self->fd, &q));
	EXPECT_EQ(0, t_submit(self->fd, q, NULL, 0, NULL, 0, &cs));
	EXPECT_TRUE(wait_counts(1, 0));
}

/* Mount cgroup2 if needed and make a child cgroup with a memory limit. */
static const char *memcg_create(const char *limit)
{
	static const char *root = "/sys/fs/cgroup";
	static char dir[128];
	char path[192];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (access(path, F_OK) &&
	    mount("cgroup2", root, "cgroup2", 0, NULL))
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	{
		char buf[256] = "";
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		close(fd);
		if (n <= 0 || !strstr(buf, "memory"))
			return NULL;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "+memory", 7) != 7) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	snprintf(dir, sizeof(dir), "%s/d3dq-limits-%d", root, getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		return NULL;
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, limit, strlen(limit)) != (ssize_t)strlen(limit)) {
		if (fd >= 0)
			close(fd);
		rmdir(dir);
		return NULL;
	}
	close(fd);
	return dir;
}

static int memcg_enter(const char *dir)
{
	char path[192], pid[16];
	int fd, n, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = snprintf(pid, sizeof(pid), "%d", getpid());
	ok = write(fd, pid, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * What a file's jobs hold is charged to the memory cgroup of the process
 * that submitted them: a process limited to 16 MiB cannot make the
 * kernel hold 100 jobs of about 256 KiB each (25 MiB) for it. SUBMIT
 * fails with -ENOMEM (the cgroup's OOM killer is not invoked for it).
 * Before, the job memory was not charged and all 100 were accepted.
 */
TEST_F_TIMEOUT(lim, memcg_charged, 300)
{
	const char *cg = memcg_create("16M");
	int pipefd[2], status, accepted = 0, i;
	pid_t pid;
	char c;

	if (!cg)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static struct t_cs cs;
		uint32_t q, tl;
		int fd, obj;

		close(pipefd[0]);
		/* The blocker's timeline, shared before joining the cgroup. */
		if (drmSyncobjHandleToFD(self->fd, self->tl, &obj))
			_exit(1);
		close(self->fd);
		if (memcg_enter(cg))
			_exit(2);
		fd = t_open(0);
		if (fd < 0 || drmSyncobjFDToHandle(fd, obj, &tl))
			_exit(3);
		q = t_queue(fd, 0, 0);
		if (!q)
			_exit(4);
		big_stream(&cs);
		for (i = 0; i < 100; i++) {
			int ret = held_job(fd, q, tl, &cs);

			if (ret)
				_exit(ret == -ENOMEM ? 0 : 7);
			if (write(pipefd[1], "j", 1) != 1)
				_exit(5);
		}
		_exit(6);
	}
	close(pipefd[1]);
	while (read(pipefd[0], &c, 1) == 1)
		accepted++;
	close(pipefd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d jobs accepted in a 16 MiB memory cgroup", accepted);
	/* -ENOMEM (exit 0), never all 100 accepted (exit 6). */
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child status 0x%x after %d jobs", status, accepted);
	EXPECT_GT(100, accepted);
	EXPECT_LT(10, accepted);

	ASSERT_EQ(0, t_queue_destroy(self->fd, self->blocker));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	EXPECT_TRUE(wait_counts(0, 0));
	for (i = 0; i < 100 && rmdir(cg); i++)
		usleep(50000);
}

TEST_HARNESS_MAIN
