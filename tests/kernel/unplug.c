// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: fences that outlive the module or the device, and device unplug.
 *
 * A fence another process keeps (a sync_file) pins the module, so that
 * asking it its names later never reaches unloaded code. Unbinding the
 * platform device d3dq.N (sysfs) unplugs the DRM device: running work is
 * cancelled, open files keep working with -ENODEV, fences made before
 * stay valid, and binding again gives a new, working device.
 *
 * Every test leaves d3dq loaded with default parameters and d3dq.0 bound.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

T_UNPLUG_FIXTURE(up)

/* sync_file FILE_INFO of a finished d3dq fence. */
static void expect_info(struct __test_metadata *_metadata, int sync_fd,
			int status)
{
	struct sync_fence_info fi;
	struct sync_file_info info;

	ASSERT_EQ(0, t_sync_file_info(sync_fd, &info, &fi, 1));
	EXPECT_EQ(status, fi.status);
	if (status && strcmp(fi.driver_name, "drm_sched") &&
	    strcmp(fi.driver_name, "d3dq")) {
		/*
		 * Since dma_fence_driver_name() and dma_fence_timeline_name()
		 * (7.x) the kernel names a signalled fence (also one with an
		 * error) itself, without calling into the driver.
		 */
		EXPECT_STREQ("detached-driver", fi.driver_name);
		EXPECT_STREQ("signaled-timeline", fi.obj_name);
		return;
	}
	/*
	 * A finished fence ("drm_sched"), or the hardware fence of a job
	 * run inside SUBMIT ("d3dq"). Both name the queue's scheduler,
	 * whose name is valid as long as the fence.
	 */
	EXPECT_TRUE(!strcmp(fi.driver_name, "drm_sched") ||
		    !strcmp(fi.driver_name, "d3dq")) TH_LOG("%s", fi.driver_name);
	EXPECT_EQ(0, strncmp(fi.obj_name, "d3dq0-s", 7)) TH_LOG("%s", fi.obj_name);
}

static bool wait_fd(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* A job that writes @value and signals binary syncobj @s; returns it. */
static uint32_t run_job(struct __test_metadata *_metadata, int fd,
			uint32_t q, uint32_t bo, uint64_t value,
			uint64_t delay)
{
	uint32_t s = t_syncobj(fd);
	struct drm_d3dq_sync sig = t_bin(s);
	struct t_cs cs;

	EXPECT_NE(0, s);
	t_cs_init(&cs);
	if (delay)
		t_cs_delay(&cs, delay);
	t_cs_write64(&cs, bo, 0, value);
	EXPECT_EQ(0, t_submit(fd, q, NULL, 0, &sig, 1, &cs));
	return s;
}

/*
 * Item 2 of issue 12: a process keeps a sync_file of a finished job and
 * closes the device. The module must stay loaded until the sync_file is
 * closed; asking the fence its names must work all along. (Before, the
 * unload succeeded and FILE_INFO then read the unloaded module's name.)
 * An exported dma-buf pins the module too.
 */
/*
 * Each of the two kinds of fences a job publishes: a job run inside
 * SUBMIT (its hardware fence) and, with a DELAY, one the scheduler ran
 * (its finished fence).
 */
static const uint64_t kinds[2] = { 0, 1000 };

TEST_F(up, fence_pins_module)
{
	uint32_t q = t_queue(self->fd, 0, 0), bo = t_bo(self->fd, 4096, NULL);
	int sync_fd[2], dmabuf_fd, k;
	uint32_t s;

	ASSERT_NE(0, q);
	ASSERT_NE(0, bo);
	for (k = 0; k < 2; k++) {
		s = run_job(_metadata, self->fd, q, bo, 1, kinds[k]);
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 5 * T_SEC));
		ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, s,
						      &sync_fd[k]));
	}
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo, DRM_CLOEXEC,
					&dmabuf_fd));
	close(self->fd);
	self->fd = -1;

	EXPECT_EQ(-EWOULDBLOCK, t_unload_once());
	close(dmabuf_fd);
	/* Now only the fences hold the module, each on its own. */
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(-EWOULDBLOCK, t_unload_once());
		expect_info(_metadata, sync_fd[k], 1);
		EXPECT_EQ(-EWOULDBLOCK, t_unload_once());
		close(sync_fd[k]);
	}
	/* The last reference goes an RCU grace period later. */
	EXPECT_EQ(0, t_unload());
	EXPECT_EQ(0, t_load(NULL));
}

/*
 * Unbind with a job running, one queued behind it, a mapped buffer and
 * an exported fence: the jobs end cancelled, the open file gets -ENODEV,
 * the mapping and the fence stay usable, and a bind gives a new device.
 */
TEST_F(up, unbind_with_open_file)
{
	uint32_t q = t_queue(self->fd, 0, 0), q2, bo, s_run, s_queued;
	struct drm_d3dq_queue_create qc = { 0 };
	struct drm_d3dq_get_param gp = { .param = DRM_D3DQ_PARAM_MAX_QUEUES };
	struct t_objects o;
	uint64_t *map;
	int sync_fd, fd2;

	ASSERT_NE(0, q);
	bo = t_bo(self->fd, 4096, (void **)&map);
	ASSERT_NE(0, bo);
	map[1] = 42;
	s_run = run_job(_metadata, self->fd, q, bo, 1, 5 * T_SEC);
	s_queued = run_job(_metadata, self->fd, q, bo, 2, 0);
	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, s_run, &sync_fd));
	usleep(100 * 1000);

	ASSERT_EQ(0, t_unbind(0));
	EXPECT_FALSE(t_is_bound(0));
	EXPECT_GT(0, t_open(0));

	/* Cancelled, not run, and well before the delay would end. */
	ASSERT_TRUE(wait_fd(sync_fd, 4000));
	expect_info(_metadata, sync_fd, -ECANCELED);
	EXPECT_EQ(0, map[0]);
	EXPECT_EQ(42, map[1]);

	/* The open file: every ioctl fails with -ENODEV, nothing oopses. */
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_D3DQ_GET_PARAM, &gp));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-ENODEV, t_submit(self->fd, q, NULL, 0, NULL, 0, NULL));
	EXPECT_EQ(-ENODEV, t_queue_destroy(self->fd, q));
	EXPECT_EQ(-ENODEV, t_wait(self->fd, s_queued, 0, 0));
	EXPECT_EQ(NULL, t_bo_map(self->fd, bo, 4096));

	ASSERT_EQ(0, t_bind(0));
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	q2 = t_queue(fd2, 0, 0);
	ASSERT_NE(0, q2);
	bo = t_bo(fd2, 4096, NULL);
	ASSERT_NE(0, bo);
	s_run = run_job(_metadata, fd2, q2, bo, 3, 0);
	EXPECT_EQ(0, t_wait(fd2, s_run, 0, 5 * T_SEC));
	EXPECT_EQ(1, t_fence_status(fd2, s_run, 0));

	/* The old file, its buffer and the fence go last. */
	close(fd2);
	EXPECT_EQ(0, t_objects(&o));
	EXPECT_EQ(0, o.files);
	munmap(map, 4096);
	close(self->fd);
	self->fd = -1;
	expect_info(_metadata, sync_fd, -ECANCELED);
	close(sync_fd);
}

/*
 * A fence from before an unbind outlives the old device: its scheduler
 * stays readable after the file is closed and the device released, and
 * the module stays loaded until the fence is gone.
 */
TEST_F(up, fence_outlives_device)
{
	uint32_t q = t_queue(self->fd, 0, 0), bo = t_bo(self->fd, 4096, NULL);
	int sync_fd[2], k;
	uint32_t s;

	ASSERT_NE(0, q);
	ASSERT_NE(0, bo);
	for (k = 0; k < 2; k++) {
		s = run_job(_metadata, self->fd, q, bo, 1, kinds[k]);
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 5 * T_SEC));
		ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, s,
						      &sync_fd[k]));
	}
	ASSERT_EQ(0, t_unbind(0));
	close(self->fd);
	self->fd = -1;
	/* The old device is gone; its scheduler is not. */
	for (k = 0; k < 2; k++)
		expect_info(_metadata, sync_fd[k], 1);
	ASSERT_EQ(0, t_bind(0));
	for (k = 0; k < 2; k++) {
		EXPECT_EQ(-EWOULDBLOCK, t_unload_once());
		expect_info(_metadata, sync_fd[k], 1);
		close(sync_fd[k]);
	}
}

/*
 * Children submit work (with dependencies across queues) in a loop while
 * the device is unbound. Each must see only -ENODEV or -ECANCELED, never
 * hang, and keep its file open afterwards; then a bind works again.
 */
static int load_child(int wfd, int rfd)
{
	uint32_t q[2], bo, tl;
	uint64_t point = 0, *map;
	struct drm_d3dq_sync w, sig;
	int fd = t_open(0), ret, i;
	struct t_cs cs;
	bool told = false;
	char c;

	if (fd < 0)
		return 10;
	q[0] = t_queue(fd, 0, 0);
	q[1] = t_queue(fd, 1, 0);
	bo = t_bo(fd, 1 << 20, (void **)&map);
	tl = t_syncobj(fd);
	if (!q[0] || !q[1] || !bo || !tl)
		return 11;
	for (i = 0;; i++) {
		t_cs_init(&cs);
		t_cs_fill(&cs, bo, 4096, i & 0xff, (1 << 20) - 4096);
		t_cs_delay(&cs, 2 * T_MS);
		t_cs_write64(&cs, bo, 0, i);
		w = t_tl(tl, point);
		sig = t_tl(tl, point + 1);
		ret = t_submit(fd, q[i & 1], &w, point ? 1 : 0, &sig, 1, &cs);
		if (ret)
			break;
		point++;
		/* Read the mapping: it must stay valid whatever happens. */
		if (map[1] > (1ull << 63))
			return 12;
		if (i >= 4 && !told) {
			told = true;
			if (write(wfd, "r", 1) != 1)
				return 13;
		}
		if (i % 8 == 7 && t_wait(fd, tl, point, 10 * T_SEC))
			break;
	}
	if (ret != -ENODEV && ret != -ECANCELED && ret != 0 &&
	    ret != -ETIME)
		return 14;
	/* Once the unbind is done, the file still answers: -ENODEV. */
	if (read(rfd, &c, 1) != 1)
		return 15;
	if (t_submit(fd, q[0], NULL, 0, NULL, 0, NULL) != -ENODEV ||
	    t_wait(fd, tl, point, T_SEC) != -ENODEV)
		return 16;
	munmap(map, 1 << 20);
	close(fd);
	return 0;
}

TEST_F(up, unbind_under_load)
{
	int pipefd[2], done[2], status, i, n = 3;
	pid_t pid[3];
	uint32_t q, bo, s;
	char c;

	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, pipe(done));
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			close(pipefd[0]);
			close(done[1]);
			_exit(load_child(pipefd[1], done[0]));
		}
	}
	close(pipefd[1]);
	close(done[0]);
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(0, t_unbind(0));
	for (i = 0; i < n; i++)
		ASSERT_EQ(1, write(done[1], "d", 1));
	close(done[1]);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child %d", i);
	}
	close(pipefd[0]);

	ASSERT_EQ(0, t_bind(0));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	q = t_queue(self->fd, 0, 0);
	bo = t_bo(self->fd, 4096, NULL);
	ASSERT_NE(0, q);
	ASSERT_NE(0, bo);
	s = run_job(_metadata, self->fd, q, bo, 5, 0);
	EXPECT_EQ(0, t_wait(self->fd, s, 0, 5 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, s, 0));
}

/* Unbind and bind again and again, a file of each device kept open. */
TEST_F(up, rebind_cycles)
{
	int old[5], i;

	for (i = 0; i < 5; i++) {
		uint32_t q = t_queue(self->fd, 0, 0);
		uint32_t bo = t_bo(self->fd, 4096, NULL);

		ASSERT_NE(0, q);
		ASSERT_NE(0, bo);
		run_job(_metadata, self->fd, q, bo, i, 50 * T_MS);
		ASSERT_EQ(0, t_unbind(0));
		EXPECT_EQ(-ENODEV, t_queue_destroy(self->fd, q));
		old[i] = self->fd;
		ASSERT_EQ(0, t_bind(0));
		self->fd = t_open(0);
		ASSERT_LE(0, self->fd);
	}
	for (i = 0; i < 5; i++)
		close(old[i]);
	/* Only the last file is left on the bound device. */
	{
		struct t_objects o;

		EXPECT_TRUE(t_wait_idle(1, 10000, &o));
	}
}

TEST_HARNESS_MAIN
