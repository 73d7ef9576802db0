// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq_fence_export_sync_file(): a fence value as a dma-fence for other
 * drivers, only once it is reached or a queue signal that brings it is
 * on its way (-ENODATA before: never a fence that waits for userspace).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define LONG_MS	20000

FIXTURE(sf) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(sf, 4096, 0, 0)

/*
 * Wait (up to LONG_MS) for sync_file @fd: its status then (1 signalled,
 * negative: the error it signalled with), 0 if it did not signal, or
 * -1000 if it could not be read. Closes @fd.
 */
static int sf_wait(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct sync_file_info info;
	int ret = 0;

	if (poll(&p, 1, LONG_MS) == 1) {
		memset(&info, 0, sizeof(info));
		ret = ioctl(fd, SYNC_IOC_FILE_INFO, &info) ? -1000 :
		      info.status;
	}
	close(fd);
	return ret;
}

/* Whether sync_file @fd has signalled, without waiting. */
static bool sf_signalled(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Reached already, or not on its way: decided at the call. */
TEST_F(sf, reached_or_nodata)
{
	int fd = -1;

	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(self->e.f, 5, &fd));
	ASSERT_LE(0, fd);
	EXPECT_TRUE(sf_signalled(fd));
	EXPECT_EQ(1, sf_wait(fd));
	/* Lower values than the current one too. */
	ASSERT_EQ(0, d3dq_fence_export_sync_file(self->e.f, 0, &fd));
	EXPECT_EQ(1, sf_wait(fd));

	/* Nothing brings 6: no fd, and *fd is left alone. */
	fd = -7;
	EXPECT_EQ(-ENODATA, d3dq_fence_export_sync_file(self->e.f, 6, &fd));
	EXPECT_EQ(-7, fd);
	/* A rewind: 5 is no longer reached. */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1));
	EXPECT_EQ(-ENODATA, d3dq_fence_export_sync_file(self->e.f, 5, &fd));

	EXPECT_EQ(-EINVAL, d3dq_fence_export_sync_file(NULL, 1, &fd));
	EXPECT_EQ(-EINVAL, d3dq_fence_export_sync_file(self->e.f, 1, NULL));
}

/*
 * On its way: the sync_file signals when the value is reached, after the
 * work before the signal, so whoever sees it signalled sees that work.
 */
TEST_F(sf, queue_signal_on_its_way)
{
	int fd = -1;

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 50 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf,
				       0, 42));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 3));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(self->e.f, 2, &fd));
	EXPECT_EQ(1, sf_wait(fd));
	EXPECT_LE(2, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(42, util_read64(self->e.buf, 0));
}

/*
 * A signal held behind a queue wait for a value nobody signalled yet is
 * not on its way: -ENODATA, until the wait is satisfied; then the
 * export works, and the sync_file signals.
 */
TEST_F(sf, held_signal_is_not_on_its_way)
{
	int fd = -1, ret, i;

	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 4));
	EXPECT_EQ(-ENODATA, d3dq_fence_export_sync_file(self->e.f, 4, &fd));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	/* The driver arms the held signal soon after: one of these works. */
	for (i = 0; i < LONG_MS; i++) {
		ret = d3dq_fence_export_sync_file(self->e.f, 4, &fd);
		if (ret != -ENODATA)
			break;
		util_sleep_ms(1);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(1, sf_wait(fd));
	EXPECT_EQ(4, d3dq_fence_get_completed_value(self->e.f));
}

/* Reached by other means before the queue signal: signals then. */
TEST_F(sf, reached_first_by_a_cpu_signal)
{
	int fd = -1;

	/* b's signal of 9 waits for a's long delay. */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 1000 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 9));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(self->e.f, 5, &fd));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	/* Reached: at once, whatever the queues do. */
	EXPECT_TRUE(sf_signalled(fd));
	EXPECT_EQ(1, sf_wait(fd));
	/* (b's 9 may have come before the 5 on a slow host: no value.) */
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
}

/* The sync_file does not depend on the fence object or the device. */
TEST_F(sf, outlives_fence_and_device)
{
	struct d3dq_fence *f;
	int fd = -1;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 50 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, f, 1));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(f, 1, &fd));
	/* Destroying the fence releases waits, not the sync_file. */
	d3dq_fence_destroy(f);
	EXPECT_EQ(1, sf_wait(fd));
}

/*
 * The queue signal's work fails (a job past the job timeout): the
 * sync_file signals with an error, not as if the value were reached.
 */
TEST_F_TIMEOUT(sf, failed_work_is_an_error, 60)
{
	int fd = -1;

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 3000 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(self->e.f, 1, &fd));
	EXPECT_GT(0, sf_wait(fd));
	/* The device is removed then: every fence goes to UINT64_MAX. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, UINT64_MAX, LONG_MS * MS));
	/* A removed device exports nothing (uapi 1.9). */
	EXPECT_EQ(-ENODEV, d3dq_fence_export_sync_file(self->e.f, 7, &fd));
}

TEST_HARNESS_MAIN
