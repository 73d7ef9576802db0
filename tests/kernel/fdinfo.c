// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fdinfo (drm-usage-stats): the keys and client ids, engine busy time
 * that grows by at least the DELAY a client ran on that engine and only
 * there, memory that matches the buffers the file holds, and the d3dq
 * keys (queues, jobs in flight, timeouts).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

static const char *const engines[] = { "direct", "compute", "copy" };

static long long busy(int fd, unsigned int type)
{
	char key[32];

	snprintf(key, sizeof(key), "drm-engine-%s", engines[type]);
	return t_fdinfo(fd, key, NULL, 0);
}

FIXTURE(fdinfo) {
	int fd;
};

FIXTURE_SETUP(fdinfo)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(fdinfo)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

TEST_F(fdinfo, driver_and_client_ids)
{
	char driver[32] = "";
	long long id, id2, id_dup;
	int fd2, fd_dup;

	t_fdinfo(self->fd, "drm-driver", driver, sizeof(driver));
	ASSERT_STREQ("d3dq", driver);
	id = t_fdinfo(self->fd, "drm-client-id", NULL, 0);
	ASSERT_LE(0, id);

	/* Another open is another client; a dup is the same one. */
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	fd_dup = dup(self->fd);
	ASSERT_LE(0, fd_dup);
	id2 = t_fdinfo(fd2, "drm-client-id", NULL, 0);
	id_dup = t_fdinfo(fd_dup, "drm-client-id", NULL, 0);
	EXPECT_LE(0, id2);
	EXPECT_NE(id, id2);
	EXPECT_EQ(id, id_dup);
	close(fd_dup);
	close(fd2);
}

/* A client's engine time grows by at least the DELAY it ran, per type. */
TEST_F(fdinfo, busy_time_grows_by_the_work)
{
	const uint64_t work = 50 * T_MS;
	long long before[3], after[3];
	unsigned int type, t;
	uint32_t q, s;
	struct drm_d3dq_sync sig;
	struct t_cs cs;

	for (t = 0; t < 3; t++) {
		before[t] = busy(self->fd, t);
		ASSERT_EQ(0, before[t]) TH_LOG("a new client has run nothing");
	}

	for (type = 0; type < 3; type++) {
		q = t_queue(self->fd, type, 0);
		s = t_syncobj(self->fd);
		ASSERT_NE(0, q);
		ASSERT_NE(0, s);
		for (t = 0; t < 3; t++)
			before[t] = busy(self->fd, t);

		t_cs_init(&cs);
		t_cs_delay(&cs, work);
		sig = t_bin(s);
		ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
		ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));

		for (t = 0; t < 3; t++)
			after[t] = busy(self->fd, t);
		EXPECT_LE(before[type] + (long long)work, after[type])
			TH_LOG("%s: %lld ns before, %lld after a %llu ns job",
			       engines[type], before[type], after[type],
			       (unsigned long long)work);
		for (t = 0; t < 3; t++) {
			if (t != type)
				EXPECT_EQ(before[t], after[t])
					TH_LOG("%s grew for %s work",
					       engines[t], engines[type]);
		}
		ASSERT_EQ(0, t_queue_destroy(self->fd, q));
	}
}

/* Busy time of other clients is not this client's. */
TEST_F(fdinfo, busy_time_is_per_client)
{
	uint32_t q, s;
	struct drm_d3dq_sync sig;
	struct t_cs cs;
	int fd2 = t_open(0);

	ASSERT_LE(0, fd2);
	q = t_queue(fd2, 0, 0);
	s = t_syncobj(fd2);
	t_cs_init(&cs);
	t_cs_delay(&cs, 20 * T_MS);
	sig = t_bin(s);
	ASSERT_EQ(0, t_submit(fd2, q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(fd2, s, 0, 10 * T_SEC));
	EXPECT_LE(20 * (long long)T_MS, busy(fd2, 0));
	EXPECT_EQ(0, busy(self->fd, 0));
	close(fd2);
}

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	return ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args) ? -errno : 0;
}

TEST_F(fdinfo, memory_matches_buffers)
{
	const uint64_t sizes[] = { 4096, 65536, (1 << 20) + 1 };
	const uint64_t aligned[] = { 4096, 65536, (1 << 20) + 4096 };
	uint64_t total = 0;
	uint32_t bo[3];
	unsigned int i;

	EXPECT_EQ(0, t_fdinfo(self->fd, "drm-total-memory", NULL, 0));
	for (i = 0; i < 3; i++) {
		bo[i] = t_bo(self->fd, sizes[i], NULL);
		ASSERT_NE(0, bo[i]);
		total += aligned[i];
		EXPECT_EQ((long long)total,
			  t_fdinfo(self->fd, "drm-total-memory", NULL, 0));
		/* Buffers keep their pages: all of it is resident. */
		EXPECT_EQ((long long)total,
			  t_fdinfo(self->fd, "drm-resident-memory", NULL, 0));
	}

	ASSERT_EQ(0, gem_close(self->fd, bo[1]));
	total -= aligned[1];
	EXPECT_EQ((long long)total,
		  t_fdinfo(self->fd, "drm-total-memory", NULL, 0));
	EXPECT_EQ((long long)total,
		  t_fdinfo(self->fd, "drm-resident-memory", NULL, 0));
}

/*
 * A long job on q2 and a job on q1 that waits for it are both in flight
 * until q2 is destroyed: that cancels the first, and the second then
 * fails without running.
 */
TEST_F(fdinfo, queues_and_jobs_in_flight)
{
	uint32_t q1, q2, s = t_syncobj(self->fd), done = t_syncobj(self->fd);
	uint64_t longest = t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS);
	struct drm_d3dq_sync w, sig;
	struct t_cs cs;
	int i;

	EXPECT_EQ(0, t_fdinfo(self->fd, "d3dq-queues", NULL, 0));
	EXPECT_EQ(0, t_fdinfo(self->fd, "d3dq-jobs-in-flight", NULL, 0));
	EXPECT_EQ(0, t_fdinfo(self->fd, "d3dq-timeouts", NULL, 0));
	q1 = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 2, 1);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	EXPECT_EQ(2, t_fdinfo(self->fd, "d3dq-queues", NULL, 0));

	t_cs_init(&cs);
	t_cs_delay(&cs, longest);
	sig = t_tl(s, 1);
	ASSERT_EQ(0, t_submit(self->fd, q2, NULL, 0, &sig, 1, &cs));
	w = t_tl(s, 1);
	sig = t_bin(done);
	ASSERT_EQ(0, t_submit(self->fd, q1, &w, 1, &sig, 1, NULL));
	EXPECT_EQ(2, t_fdinfo(self->fd, "d3dq-jobs-in-flight", NULL, 0));

	ASSERT_EQ(0, t_queue_destroy(self->fd, q2));
	EXPECT_EQ(1, t_fdinfo(self->fd, "d3dq-queues", NULL, 0));
	ASSERT_EQ(0, t_wait(self->fd, done, 0, 10 * T_SEC));
	/* The fence signals just before the count drops: look again. */
	for (i = 0; i < 1000; i++) {
		if (t_fdinfo(self->fd, "d3dq-jobs-in-flight", NULL, 0) == 0)
			break;
		usleep(1000);
	}
	EXPECT_EQ(0, t_fdinfo(self->fd, "d3dq-jobs-in-flight", NULL, 0));
	EXPECT_EQ(0, t_fdinfo(self->fd, "d3dq-timeouts", NULL, 0));
}

TEST_F(fdinfo, timeouts)
{
	uint32_t q = t_queue(self->fd, 1, 0), s = t_syncobj(self->fd);
	struct drm_d3dq_sync sig = t_bin(s);
	uint64_t timeout = t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	struct t_cs cs;

	if (timeout > 5 * T_SEC)
		SKIP(return, "job timeout %llu ns is too long to wait for",
		     (unsigned long long)timeout);
	ASSERT_NE(0, q);
	t_cs_init(&cs);
	t_cs_delay(&cs, timeout * 2);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 30 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, s, 0));
	EXPECT_EQ(1, t_fdinfo(self->fd, "d3dq-timeouts", NULL, 0));
	/* The job was on the engine until it was stopped. */
	EXPECT_LT(0, busy(self->fd, 1));
}

TEST_HARNESS_MAIN
