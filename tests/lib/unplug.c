// SPDX-License-Identifier: GPL-2.0
/*
 * The library over an unplugged device: unbinding d3dq.0 while a device
 * is open through libd3dq removes it as d3dq_device_remove() would
 * (R15): waits are released, fences read UINT64_MAX, events fire, and
 * calls fail with -ENODEV; nothing hangs, also when the device was idle.
 * Binding again gives a new,
 * working device. Skipped without root or without the d3dq driver's
 * sysfs directory.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

#define DRV "/sys/bus/platform/drivers/d3dq"

static int sysfs_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(up) {
	struct util_env e;
	int efd;
	bool unbound;
};

FIXTURE_SETUP(up)
{
	self->efd = -1;
	self->unbound = false;
	if (access(DRV "/unbind", W_OK))
		SKIP(return, "cannot unbind d3dq devices here");
	UTIL_ENV_OPEN(&self->e, 4096, 0, 0);
	self->efd = util_eventfd();
	ASSERT_GE(self->efd, 0);
}

FIXTURE_TEARDOWN(up)
{
	if (self->efd >= 0)
		close(self->efd);
	util_env_close(&self->e);
	if (self->unbound)
		EXPECT_EQ(0, sysfs_write(DRV "/bind", "d3dq.0"));
}

TEST_F_TIMEOUT(up, unbind, 60)
{
	struct d3dq_device *dev;

	/* Running work, work held behind a wait, an event. */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 3000 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf,
				       0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf,
				       8, 1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 5,
							self->efd));

	ASSERT_EQ(0, sysfs_write(DRV "/unbind", "d3dq.0"));
	self->unbound = true;

	/* Released by the removal, not by the 3 s delay. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 1000, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(-ENODEV, d3dq_device_removed_reason(self->e.dev));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.g));
	EXPECT_EQ(1, util_event_wait(self->efd, 20000));
	EXPECT_EQ(-ENODEV, d3dq_fence_signal(self->e.g, 20));
	EXPECT_EQ(-ENODEV, d3dq_queue_signal(self->e.a, self->e.g, 30));
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	EXPECT_EQ(0, util_read64(self->e.buf, 8));

	/* A new device after the bind. */
	ASSERT_EQ(0, sysfs_write(DRV "/bind", "d3dq.0"));
	self->unbound = false;
	dev = util_open();
	ASSERT_NE(NULL, dev);
	EXPECT_EQ(0, d3dq_device_removed_reason(dev));
	d3dq_device_close(dev);
}

/*
 * Nothing runs when the device goes: the library's threads sleep in the
 * kernel on points nobody will submit, which an unplug does not signal.
 * The removal must still come (the threads' waits are time-sliced).
 */
TEST_F_TIMEOUT(up, unbind_idle, 60)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf,
				       8, 1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.g, 10,
							self->efd));
	/* Nothing runs: the kernel holds b's work, nothing is in flight. */
	ASSERT_TRUE(task_gpu_only_held());

	ASSERT_EQ(0, sysfs_write(DRV "/unbind", "d3dq.0"));
	self->unbound = true;
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 10, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(-ENODEV, d3dq_device_removed_reason(self->e.dev));
	EXPECT_EQ(1, util_event_wait(self->efd, 20000));
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
}

TEST_HARNESS_MAIN
