// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: module parameters. Each test reloads the module ($D3DQ_MODULE)
 * with non-default parameters and restores the defaults afterwards; the
 * tests are skipped when the module cannot be reloaded.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3dq_test.h"

FIXTURE(mod) {
	int fd;
	uint32_t bo;
	uint64_t *map;
};

FIXTURE_VARIANT(mod) {
	const char *args;
};

FIXTURE_VARIANT_ADD(mod, pending) {
	.args = "max_pending_jobs=2",
};

FIXTURE_VARIANT_ADD(mod, limits) {
	.args = "max_queues=3 max_syncs=2 max_cmd_bytes=64 max_delay_ns=1000 max_bo_size=8192",
};

FIXTURE_VARIANT_ADD(mod, short_timeout) {
	.args = "job_timeout_ms=500",
};

FIXTURE_VARIANT_ADD(mod, two_devices) {
	.args = "num_devices=2",
};

FIXTURE_SETUP(mod)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(variant->args));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
}

FIXTURE_TEARDOWN(mod)
{
	if (self->fd < 0)
		return;
	munmap(self->map, 4096);
	close(self->fd);
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

static atomic_int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add(&alarms, 1);
}

struct destroy_later {
	int fd;
	uint32_t q;
	pid_t submitter;
	bool asleep;
};

/* Destroy the queue once the signal handler has run. */
static void *destroy_after_alarm(void *arg)
{
	struct destroy_later *d = arg;

	while (!atomic_load(&alarms))
		usleep(10 * 1000);
	/* The restarted submit sleeps again (in the driver). */
	d->asleep = task_asleep_in_driver(d->submitter);
	t_queue_destroy(d->fd, d->q);
	return NULL;
}

TEST_F(mod, run)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s;
	uint32_t q, tl, ids[4];
	struct t_cs cs;
	int i;

	tl = t_syncobj(self->fd);
	q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q);

	if (!strcmp(variant->args, "max_pending_jobs=2")) {
		struct sigaction sa = { .sa_handler = on_alarm };
		struct drm_d3dq_submit sub;
		uint64_t returned;

		EXPECT_EQ(2, t_param(self->fd, DRM_D3DQ_PARAM_MAX_PENDING_JOBS));
		/* Two pending jobs; the third submit sleeps until one ends. */
		for (i = 1; i <= 2; i++) {
			t_cs_init(&cs);
			t_cs_delay(&cs, 300 * T_MS);
			t_cs_timestamp(&cs, self->bo, 8 * i);
			s = t_tl(tl, i);
			ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
		}
		ASSERT_EQ(0, t_queue_state(self->fd, q, &st));
		EXPECT_EQ(2, st.pending_jobs);
		s = t_tl(tl, 3);
		ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, NULL));
		returned = t_now();
		EXPECT_NE(0, self->map[1]);	/* job 1 had finished */
		EXPECT_LE(self->map[1], returned);

		/* Interrupted while sleeping: -EINTR, nothing queued. */
		for (i = 4; i <= 5; i++) {
			t_cs_init(&cs);
			t_cs_delay(&cs, 5 * T_SEC);
			s = t_tl(tl, i);
			ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
		}
		ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
		s = t_tl(tl, 6);
		memset(&sub, 0, sizeof(sub));
		sub.queue_id = q;
		sub.signals = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(1, &s);
		ualarm(300 * 1000, 0);
		/* drmIoctl() would restart: call ioctl() directly. */
		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_D3DQ_SUBMIT, &sub));
		EXPECT_EQ(EINTR, errno);
		ASSERT_EQ(0, t_queue_state(self->fd, q, &st));
		EXPECT_EQ(2, st.pending_jobs);

		/*
		 * With SA_RESTART the kernel restarts the submit (it
		 * returns -ERESTARTSYS): it sleeps on until the queue is
		 * destroyed, then fails with -ECANCELED, not -EINTR.
		 */
		{
			struct destroy_later d = { .fd = self->fd, .q = q,
						   .submitter = task_self() };
			pthread_t thr;

			sa.sa_flags = SA_RESTART;
			ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
			atomic_store(&alarms, 0);
			ASSERT_EQ(0, pthread_create(&thr, NULL,
						    destroy_after_alarm, &d));
			ualarm(300 * 1000, 0);
			EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_D3DQ_SUBMIT,
					    &sub));
			EXPECT_EQ(ECANCELED, errno);
			EXPECT_EQ(1, atomic_load(&alarms));
			pthread_join(thr, NULL);
			EXPECT_TRUE(d.asleep);
		}
		/* Destroying the queue wakes nobody up wrongly, cancels all. */
		ASSERT_EQ(-ENOENT, t_queue_destroy(self->fd, q));
		ASSERT_EQ(0, t_wait(self->fd, tl, 5, 5 * T_SEC));
		EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, tl, 5));
		EXPECT_EQ(-ETIME, t_wait(self->fd, tl, 6, 0));
		return;
	}

	if (!strncmp(variant->args, "max_queues=3", 12)) {
		EXPECT_EQ(8192, t_param(self->fd, DRM_D3DQ_PARAM_MAX_BO_SIZE));
		EXPECT_EQ(0, t_bo(self->fd, 8193, NULL));
		EXPECT_EQ(EINVAL, errno);
		for (i = 0; i < 2; i++)
			ids[i] = t_queue(self->fd, 0, 0);
		EXPECT_EQ(0, t_queue(self->fd, 0, 0));
		EXPECT_EQ(EMFILE, errno);

		/* max_syncs = 2 */
		{
			struct drm_d3dq_sync three[3] = {
				t_tl(tl, 1), t_tl(tl, 2), t_tl(tl, 3)
			};

			EXPECT_EQ(-EINVAL, t_submit(self->fd, q, NULL, 0,
						    three, 3, NULL));
			EXPECT_EQ(0, t_submit(self->fd, q, NULL, 0, three, 2,
					      NULL));
			EXPECT_EQ(0, t_wait(self->fd, tl, 2, 5 * T_SEC));
		}
		/* max_cmd_bytes = 64, max_delay_ns = 1000 */
		t_cs_init(&cs);
		t_cs_delay(&cs, 1001);
		s = t_tl(tl, 10);
		EXPECT_EQ(-EINVAL, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
		t_cs_init(&cs);
		for (i = 0; i < 4; i++)
			t_cs_delay(&cs, 1000);
		EXPECT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
		t_cs_delay(&cs, 1000);
		s = t_tl(tl, 11);
		EXPECT_EQ(-EINVAL, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));

		return;
	}

	if (!strcmp(variant->args, "job_timeout_ms=500")) {
		uint64_t start, end;

		EXPECT_EQ(500 * T_MS,
			  t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS));
		t_cs_init(&cs);
		t_cs_delay(&cs, 3 * T_SEC);
		t_cs_write64(&cs, self->bo, 0, 1);
		s = t_bin(t_syncobj(self->fd));
		start = t_now();
		ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
		ASSERT_EQ(0, t_wait(self->fd, s.handle, 0, 10 * T_SEC));
		end = t_now();
		EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, s.handle, 0));
		EXPECT_LE(start + 450 * T_MS, end);
		EXPECT_GT(start + 2500 * T_MS, end);
		EXPECT_EQ(0, self->map[0]);
		ASSERT_EQ(0, t_queue_state(self->fd, q, &st));
		EXPECT_EQ(-ETIMEDOUT, st.reason);

		/* Jobs shorter than the timeout, back to back, are fine. */
		ids[0] = t_queue(self->fd, 0, 0);
		ASSERT_NE(0, ids[0]);
		for (i = 1; i <= 4; i++) {
			t_cs_init(&cs);
			t_cs_delay(&cs, 150 * T_MS);
			s = t_tl(tl, i);
			ASSERT_EQ(0, t_submit(self->fd, ids[0], NULL, 0, &s, 1,
					      &cs));
		}
		ASSERT_EQ(0, t_wait(self->fd, tl, 4, 10 * T_SEC));
		EXPECT_EQ(1, t_fence_status(self->fd, tl, 4));
		ASSERT_EQ(0, t_queue_state(self->fd, ids[0], &st));
		EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
		return;
	}

	if (!strcmp(variant->args, "num_devices=2")) {
		uint32_t q1, bo1, imported;
		int fd1, dmabuf;
		uint64_t *m1;

		fd1 = t_open(1);
		ASSERT_LE(0, fd1);
		EXPECT_GT(0, t_open(2));
		q1 = t_queue(fd1, 0, 0);
		ASSERT_NE(0, q1);
		bo1 = t_bo(fd1, 4096, (void **)&m1);
		ASSERT_NE(0, bo1);
		/* The devices are independent. */
		t_cs_init(&cs);
		t_cs_write64(&cs, bo1, 0, 77);
		s = t_tl(t_syncobj(fd1), 1);
		ASSERT_EQ(0, t_submit(fd1, q1, NULL, 0, &s, 1, &cs));
		ASSERT_EQ(0, t_wait(fd1, s.handle, 1, 5 * T_SEC));
		EXPECT_EQ(77, m1[0]);
		/*
		 * A buffer of one device imports into another as any other
		 * driver's dma-buf (uapi 1.12): the importer's jobs write the
		 * same memory.
		 */
		ASSERT_EQ(0, drmPrimeHandleToFD(fd1, bo1, DRM_CLOEXEC, &dmabuf));
		ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &imported));
		{
			uint32_t q0 = t_queue(self->fd, 0, 0);
			struct drm_d3dq_sync s0 = t_tl(t_syncobj(self->fd), 1);

			ASSERT_NE(0, q0);
			t_cs_init(&cs);
			t_cs_write64(&cs, imported, 8, 78);
			ASSERT_EQ(0, t_submit(self->fd, q0, NULL, 0, &s0, 1,
					      &cs));
			ASSERT_EQ(0, t_wait(self->fd, s0.handle, 1,
					    5 * T_SEC));
			EXPECT_EQ(78, m1[1]);
		}
		EXPECT_EQ(0, drmPrimeFDToHandle(fd1, dmabuf, &imported));
		EXPECT_EQ(bo1, imported);
		close(dmabuf);
		munmap(m1, 4096);
		close(fd1);
	}
}

TEST_HARNESS_MAIN
