// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: destroying queues, closing files, killed processes and REMOVE
 * while jobs run, queue, or wait for dependencies. Every fence signals,
 * cancelled jobs do not run, and nothing leaks.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <linux/sync_file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(td) {
	int fd;
	uint32_t bo;
	uint64_t *map;
};

FIXTURE_SETUP(td)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
}

FIXTURE_TEARDOWN(td)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * Whether debugfs "queues" shows a job of queue @q of a file of this
 * process running; 10 s at most. -1 without debugfs.
 */
static int queue_running(uint32_t q)
{
	char client[32], queue[32];
	int i;

	snprintf(client, sizeof(client), " pid=%d ", (int)getpid());
	snprintf(queue, sizeof(queue), "  queue %u ", q);
	for (i = 0; i < 1000; i++) {
		const char *t = t_queues_text(), *c, *end, *l, *eol;

		if (!t)
			return -1;
		for (c = strstr(t, client); c; c = strstr(c + 1, client)) {
			end = strstr(c + 1, "client id=");
			l = strstr(c, queue);
			if (!l || (end && l > end))
				continue;
			eol = strchr(l, '\n');
			if (strstr(l, "running=1") &&
			    (!eol || strstr(l, "running=1") < eol))
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

/*
 * Queue q gets: a running job (long delay), a job queued behind it, and
 * a job held by a dependency on s[3]. Each signals its own binary syncobj
 * s[0..2]. If @other is not 0, the syncobjs are created and queue @other
 * signals s[3] after 1 s; otherwise the caller did that.
 */
static void fill(struct __test_metadata *_metadata, int fd, uint32_t bo,
		 uint32_t q, uint32_t other, uint32_t s[4])
{
	struct drm_d3dq_sync sig, w;
	struct t_cs cs;
	int i;

	if (other) {
		for (i = 0; i < 4; i++) {
			s[i] = t_syncobj(fd);
			ASSERT_NE(0, s[i]);
		}
		t_cs_init(&cs);
		t_cs_delay(&cs, 1000 * T_MS);
		sig = t_bin(s[3]);
		ASSERT_EQ(0, t_submit(fd, other, NULL, 0, &sig, 1, &cs));
	}

	t_cs_init(&cs);
	t_cs_delay(&cs, 5 * T_SEC);
	t_cs_write64(&cs, bo, 0, 1);
	sig = t_bin(s[0]);
	ASSERT_EQ(0, t_submit(fd, q, NULL, 0, &sig, 1, &cs));
	t_cs_init(&cs);
	t_cs_write64(&cs, bo, 8, 1);
	sig = t_bin(s[1]);
	ASSERT_EQ(0, t_submit(fd, q, NULL, 0, &sig, 1, &cs));
	t_cs_init(&cs);
	t_cs_write64(&cs, bo, 16, 1);
	w = t_bin(s[3]);
	sig = t_bin(s[2]);
	ASSERT_EQ(0, t_submit(fd, q, &w, 1, &sig, 1, &cs));
	/* The first job runs (seen in debugfs; without it, a bet). */
	if (queue_running(q) < 0)
		usleep(100 * 1000);
	else
		ASSERT_EQ(1, queue_running(q));
}

/* All of q's fences signal with -ECANCELED; none of its writes happen. */
static void expect_cancelled(struct __test_metadata *_metadata, int fd,
			     const uint64_t *map, const uint32_t s[4],
			     uint64_t start)
{
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, t_wait(fd, s[i], 0, 10 * T_SEC)) TH_LOG("job %d", i);
		EXPECT_EQ(-ECANCELED, t_fence_status(fd, s[i], 0))
			TH_LOG("job %d", i);
	}
	/* Well before the 5 s delay would have ended. */
	EXPECT_GT(start + 4 * T_SEC, t_now());
	EXPECT_EQ(0, map[0]);
	EXPECT_EQ(0, map[1]);
	EXPECT_EQ(0, map[2]);
}

TEST_F(td, destroy_queue)
{
	uint32_t q = t_queue(self->fd, 0, 0), other = t_queue(self->fd, 0, 0);
	struct drm_d3dq_queue_get_state st;
	uint64_t start;
	uint32_t s[4];

	ASSERT_NE(0, q);
	fill(_metadata, self->fd, self->bo, q, other, s);
	start = t_now();
	ASSERT_EQ(0, t_queue_destroy(self->fd, q));
	/* Destroy waits neither for the delay nor the held dependency. */
	EXPECT_GT(start + 900 * T_MS, t_now());
	EXPECT_EQ(-ENOENT, t_queue_state(self->fd, q, &st));
	expect_cancelled(_metadata, self->fd, self->map, s, start);
	/* The other queue is unaffected. */
	EXPECT_EQ(1, t_fence_status(self->fd, s[3], 0));
	ASSERT_EQ(0, t_queue_state(self->fd, other, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

/* Closing a file cancels its work; syncobjs shared elsewhere signal. */
TEST_F(td, close_file)
{
	uint32_t s[4], mine[4], q, other, bo2, bo2_here;
	uint64_t start, *m2;
	int fd2, i, obj;

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	q = t_queue(fd2, 0, 0);
	other = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q);
	ASSERT_NE(0, other);
	/*
	 * fd2's buffer is watched through this file (a mapping of fd2
	 * would keep fd2 open).
	 */
	bo2 = t_bo(fd2, 4096, NULL);
	ASSERT_NE(0, bo2);
	ASSERT_EQ(0, drmPrimeHandleToFD(fd2, bo2, DRM_CLOEXEC, &obj));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, obj, &bo2_here));
	close(obj);
	m2 = t_bo_map(self->fd, bo2_here, 4096);
	ASSERT_NE(NULL, m2);

	/* fd2's syncobjs are shared with this file. */
	for (i = 0; i < 4; i++) {
		mine[i] = t_syncobj(self->fd);
		ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, mine[i], &obj));
		ASSERT_EQ(0, drmSyncobjFDToHandle(fd2, obj, &s[i]));
		close(obj);
	}
	/* The held job's dependency comes from this file's queue. */
	{
		struct drm_d3dq_sync sig = t_bin(mine[3]);
		struct t_cs cs;

		t_cs_init(&cs);
		t_cs_delay(&cs, 1000 * T_MS);
		ASSERT_EQ(0, t_submit(self->fd, other, NULL, 0, &sig, 1, &cs));
	}
	fill(_metadata, fd2, bo2, q, 0, s);
	start = t_now();
	close(fd2);
	expect_cancelled(_metadata, self->fd, m2, mine, start);
	EXPECT_EQ(1, t_fence_status(self->fd, mine[3], 0));
	munmap(m2, 4096);
}

/*
 * A process killed with work running, queued and held by a dependency:
 * its fences (shared with this process) signal, it leaves nothing behind,
 * and the module can then be unloaded.
 */
TEST_F(td, kill_process)
{
	uint32_t shared[4], other = t_queue(self->fd, 0, 0);
	int obj[4], pipefd[2], status, i;
	struct drm_d3dq_sync sig;
	struct t_objects o;
	struct t_cs cs;
	uint64_t start;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	for (i = 0; i < 4; i++) {
		shared[i] = t_syncobj(self->fd);
		ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, shared[i], &obj[i]));
	}
	/* The child's held job depends on this queue (1 s). */
	t_cs_init(&cs);
	t_cs_delay(&cs, 1000 * T_MS);
	sig = t_bin(shared[3]);
	ASSERT_EQ(0, t_submit(self->fd, other, NULL, 0, &sig, 1, &cs));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t h[4], q, bo;
		uint64_t *m;
		int cfd;

		close(self->fd);
		cfd = t_open(0);
		if (cfd < 0)
			_exit(1);
		for (i = 0; i < 4; i++)
			if (drmSyncobjFDToHandle(cfd, obj[i], &h[i]))
				_exit(2);
		q = t_queue(cfd, 0, 0);
		bo = t_bo(cfd, 4096, (void **)&m);
		if (!q || !bo)
			_exit(3);
		/* Jobs of many queues, to make the teardown work. */
		for (i = 0; i < 16; i++) {
			uint32_t qq = t_queue(cfd, i % 3, i % 2);

			t_cs_init(&cs);
			t_cs_delay(&cs, 5 * T_SEC);
			if (!qq || t_submit(cfd, qq, NULL, 0, NULL, 0, &cs))
				_exit(4);
		}
		fill(_metadata, cfd, bo, q, 0, h);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(5);
		pause();
		_exit(6);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	start = t_now();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	for (i = 0; i < 4; i++)
		close(obj[i]);

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, t_wait(self->fd, shared[i], 0, 10 * T_SEC));
		EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, shared[i], 0));
	}
	EXPECT_GT(start + 4 * T_SEC, t_now());
	EXPECT_EQ(1, t_fence_status(self->fd, shared[3], 0));

	/* Only this process's file, queue and buffer remain. */
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, t_objects(&o));
		if (o.files == 1 && o.queues == 1 && o.bos == 1 && !o.jobs)
			break;
		usleep(10000);
	}
	EXPECT_EQ(1, o.files);
	EXPECT_EQ(1, o.queues);
	EXPECT_EQ(1, o.bos);
	EXPECT_EQ(0, o.jobs);
}

/* After every file is closed, the module unloads and loads again. */
TEST(rmmod_after_kill)
{
	int pipefd[2], status, fd;
	struct t_objects o;
	pid_t pid;
	char c;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_d3dq_sync sig;
		uint32_t q, tl;
		struct t_cs cs;
		int cfd = t_open(0), i;

		if (cfd < 0)
			_exit(1);
		tl = t_syncobj(cfd);
		for (i = 0; i < 8; i++) {
			q = t_queue(cfd, 0, 0);
			t_cs_init(&cs);
			t_cs_delay(&cs, 5 * T_SEC);
			sig = t_tl(tl, i + 1);
			if (!q || t_submit(cfd, q, NULL, 0, &sig, 1, &cs))
				_exit(2);
			/* A job held by the previous queue's job. */
			if (i) {
				struct drm_d3dq_sync w = t_tl(tl, i);

				sig = t_tl(tl, 100 + i);
				if (t_submit(cfd, q, &w, 1, &sig, 1, NULL))
					_exit(3);
			}
		}
		if (write(pipefd[1], "r", 1) != 1)
			_exit(4);
		pause();
		_exit(5);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	ASSERT_EQ(0, t_reload(NULL));
	fd = t_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1024, t_param(fd, DRM_D3DQ_PARAM_MAX_QUEUES));
	close(fd);
	EXPECT_TRUE(t_wait_idle(0, 5000, &o));
}

/* REMOVE: every queue of the file lost with -ENODEV, nothing runs. */
TEST_F(td, remove)
{
	uint32_t q = t_queue(self->fd, 0, 0), other = t_queue(self->fd, 1, 0);
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_sync sig;
	uint32_t s[4], id, tl;
	uint64_t start;

	/* Bits 0 and 1 are ON_LOSS and QUERY (1.6): the next is unknown. */
	rm.flags = DRM_D3DQ_REMOVE_QUERY << 1;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_EQ(EINVAL, errno);
	rm.flags = 0;
	rm.reason = 1;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_EQ(EINVAL, errno);
	rm.reason = 0;

	/* other's job is the dependency; it is stopped too. */
	fill(_metadata, self->fd, self->bo, q, other, s);
	start = t_now();
	ASSERT_EQ(0, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	/* Returns once nothing runs, without waiting for the delay. */
	EXPECT_GT(start + 900 * T_MS, t_now());
	expect_cancelled(_metadata, self->fd, self->map, s, start);
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, s[3], 0));

	ASSERT_EQ(0, t_queue_state(self->fd, q, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ENODEV, st.reason);
	EXPECT_EQ(0, st.pending_jobs);
	ASSERT_EQ(0, t_queue_state(self->fd, other, &st));
	EXPECT_EQ(-ENODEV, st.reason);

	tl = t_syncobj(self->fd);
	sig = t_tl(tl, 1);
	EXPECT_EQ(-ECANCELED, t_submit(self->fd, q, NULL, 0, &sig, 1, NULL));
	{
		struct drm_d3dq_queue_create c = { 0 };

		EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE,
				       &c));
		EXPECT_EQ(ENODEV, errno);
	}
	/* Buffers and syncobjs keep working; queues can be destroyed. */
	id = t_bo(self->fd, 4096, NULL);
	EXPECT_NE(0, id);
	EXPECT_EQ(0, t_signal(self->fd, tl, 1));
	/* As before 1.6, a removal leaves the structure as it was. */
	EXPECT_EQ(0, rm.reason);
	EXPECT_EQ(0, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_EQ(0, t_queue_destroy(self->fd, q));
	EXPECT_EQ(0, t_queue_destroy(self->fd, other));
}

/* REMOVE on one file leaves other files alone. */
TEST_F(td, remove_other_file)
{
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_sync sig;
	uint32_t q2, tl, q;
	struct t_cs cs;
	int fd2;

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	q2 = t_queue(fd2, 0, 0);
	ASSERT_NE(0, q2);
	ASSERT_EQ(0, drmIoctl(fd2, DRM_IOCTL_D3DQ_REMOVE, &rm));
	q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q);
	tl = t_syncobj(self->fd);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 4);
	sig = t_tl(tl, 1);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, tl, 1, 5 * T_SEC));
	EXPECT_EQ(4, self->map[0]);
	close(fd2);
}

/* Poll debugfs until at most @max schedulers are alive (up to 5 s). */
static int schedulers_down_to(int max)
{
	struct t_objects o;
	int n;

	for (n = 0; n < 500; n++) {
		if (t_objects(&o))
			return -1;
		if (o.schedulers <= max)
			break;
		usleep(10000);
	}
	return o.schedulers;
}

/* SYNC_IOC_FILE_INFO of the fence in binary syncobj @s. */
static int fence_info(int fd, uint32_t s, struct sync_file_info *info,
		      struct sync_fence_info *fi)
{
	int sync_fd, ret;

	if (drmSyncobjExportSyncFile(fd, s, &sync_fd))
		return -errno;
	ret = t_sync_file_info(sync_fd, info, fi, 1);
	close(sync_fd);
	return ret;
}

/*
 * A queue's finished fences outlive it (here in a syncobj): sync_file
 * FILE_INFO still names their timeline once the queue is freed, which
 * reads the fence's scheduler. A scheduler therefore lives until the
 * last fence of its jobs is gone, and no longer: creating and destroying
 * queues one after the other leaves only the scheduler whose fence the
 * syncobj holds. (On the debug kernel KASAN reports the read if a
 * scheduler was freed too early.) The names must be those FILE_INFO gave
 * while the queue lived: the scheduler's ("drm_sched", "d3dq0-s<n>", a
 * new scheduler each time; "d3dq" and the same scheduler's name for the
 * hardware fence of a job run inside SUBMIT, every other job here) where
 * the kernel asks the driver for a
 * signalled fence's names, placeholders where it does not (since
 * dma_fence_driver_name() and dma_fence_timeline_name(), 7.x).
 */
TEST_F(td, fence_outlives_queue)
{
	struct sync_fence_info fi, ref;
	struct sync_file_info info;
	struct drm_d3dq_sync sig;
	struct t_objects o;
	char last[sizeof(fi.obj_name)] = "";
	struct t_cs cs;
	uint32_t s, q;
	int i, n;

	s = t_syncobj(self->fd);
	ASSERT_NE(0, s);
	for (i = 0; i < 20; i++) {
		q = t_queue(self->fd, 0, 0);
		ASSERT_NE(0, q);
		t_cs_init(&cs);
		/* Odd jobs through the scheduler, even ones inside SUBMIT. */
		if (i % 2)
			t_cs_delay(&cs, 1000);
		t_cs_write64(&cs, self->bo, 0, i);
		sig = t_bin(s);
		ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 5 * T_SEC));
		ASSERT_EQ(0, fence_info(self->fd, s, &info, &ref));
		EXPECT_EQ(1, ref.status);
		EXPECT_NE(0, ref.driver_name[0]);
		EXPECT_NE(0, ref.obj_name[0]);
		ASSERT_EQ(0, t_queue_destroy(self->fd, q));
		/* Wait until the queue and its job are freed. */
		for (n = 0; n < 500; n++) {
			ASSERT_EQ(0, t_objects(&o));
			if (!o.queues && !o.jobs)
				break;
			usleep(10000);
		}
		ASSERT_EQ(0, o.queues);
		/* Replacing the syncobj's fence released the previous one. */
		EXPECT_EQ(1, schedulers_down_to(1));

		ASSERT_EQ(0, fence_info(self->fd, s, &info, &fi));
		EXPECT_EQ(1, info.status);
		EXPECT_EQ(1, fi.status);
		EXPECT_STREQ(ref.driver_name, fi.driver_name);
		EXPECT_STREQ(ref.obj_name, fi.obj_name);
		/*
		 * Where the kernel asks: the scheduler's own, new each time,
		 * for a finished fence ("drm_sched") and for the hardware
		 * fence of a job run inside SUBMIT ("d3dq") alike.
		 */
		if (!strcmp(ref.driver_name, "drm_sched") ||
		    !strcmp(ref.driver_name, "d3dq")) {
			EXPECT_EQ(0, strncmp(fi.obj_name, "d3dq0-s", 7))
				TH_LOG("%s", fi.obj_name);
			EXPECT_STRNE(last, fi.obj_name);
		}
		snprintf(last, sizeof(last), "%s", fi.obj_name);
		EXPECT_EQ(i, self->map[0]);
	}
	/*
	 * The last fence goes with the syncobj and with the buffer's
	 * reservation object (implicit sync), and its scheduler too.
	 */
	ASSERT_EQ(0, drmSyncobjDestroy(self->fd, s));
	EXPECT_EQ(1, schedulers_down_to(1));
	munmap(self->map, 4096);
	self->map = NULL;
	ASSERT_EQ(0, drmCloseBufferHandle(self->fd, self->bo));
	EXPECT_EQ(0, schedulers_down_to(0));
}

TEST_HARNESS_MAIN
