// SPDX-License-Identifier: GPL-2.0
/*
 * The library over an unplugged device: unbinding d3dq.0 while a device
 * is open through libd3dq removes it as d3dq_device_remove() would
 * (R15): waits are released, fences read UINT64_MAX, events fire, and
 * calls fail with -ENODEV; nothing hangs, also when the device was idle.
 * Binding again gives a new,
 * working device. With callback devices the dispatcher calls what the
 * device registered, sleeps, and takes new registrations (which fire at
 * once on the device gone); those of a device still there keep working. Skipped without root or without the d3dq driver's
 * sysfs directory.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"
#include "../common/task.h"

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

#define T(n) ((void *)(uintptr_t)(n))

static _Atomic unsigned int calls[16];

static int callback(void *token, void *context)
{
	(void)context;
	atomic_fetch_add(&calls[(uintptr_t)token % 16], 1);
	return 0;
}

/* Wait (a hang detector, 20 s) until token @t was called @n times. */
static bool wait_calls(unsigned int t, unsigned int n)
{
	int i;

	for (i = 0; i < 20000 && atomic_load(&calls[t]) < n; i++)
		util_sleep_ms(1);
	return atomic_load(&calls[t]) >= n;
}

/* The dispatcher: the thread that is not this process's first. */
static pid_t dispatcher_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t tid = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != getpid())
			tid = atoi(e->d_name);
	if (d)
		closedir(d);
	return tid;
}

/*
 * A callback device unplugged: its pending registration is called (R15),
 * the dispatcher sleeps, and a registration made afterwards returns 0
 * and is called at once (its value is UINT64_MAX). The old dispatcher
 * spun at 100 % CPU on its dead file and refused the registration.
 */
TEST_F_TIMEOUT(up, callbacks, 60)
{
	struct d3dq_device *cb = util_open_callback(NULL, callback, NULL);
	struct d3dq_fence *f;
	pid_t tid;

	ASSERT_NE(NULL, cb);
	ASSERT_EQ(0, d3dq_fence_create(cb, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(f, 5, T(2)));
	tid = dispatcher_tid();
	ASSERT_NE(0, tid);
	ASSERT_EQ(0, sysfs_write(DRV "/unbind", "d3dq.0"));
	self->unbound = true;
	EXPECT_TRUE(wait_calls(2, 1));
	EXPECT_TRUE(task_asleep_in(tid, SYS_futex));
	EXPECT_EQ(0, d3dq_fence_set_token_on_completion(f, 7, T(3)));
	EXPECT_TRUE(wait_calls(3, 1));
	EXPECT_TRUE(task_asleep_in(tid, SYS_futex));
	d3dq_fence_destroy(f);
	d3dq_device_close(cb);
	EXPECT_EQ(1, atomic_load(&calls[2]));
	EXPECT_EQ(1, atomic_load(&calls[3]));
}

/* The render node of platform device d3dq.@i in @path: 0, or -1. */
static int node_of(int i, char *path, size_t size)
{
	char dir[96];
	struct dirent *e;
	DIR *d;
	int ret = -1;

	snprintf(dir, sizeof(dir), "/sys/bus/platform/devices/d3dq.%d/drm", i);
	d = opendir(dir);
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "renderD", 7)) {
			snprintf(path, size, "/dev/dri/%.32s", e->d_name);
			ret = 0;
		}
	if (d)
		closedir(d);
	return ret;
}

/*
 * Two callback devices, on d3dq.0 (the first: the dispatcher's file is
 * on its node) and d3dq.1; d3dq.0 is unplugged: its registration is
 * called, d3dq.1's fire when their values come, as do new ones, and a
 * registration on the device gone fires at once. Needs the module's
 * num_devices=2 (skipped otherwise): scripts/vm-run --module-args.
 */
TEST_F_TIMEOUT(up, callbacks_other_device_stays, 60)
{
	struct d3dq_device *a, *b;
	struct d3dq_fence *fa, *fb;
	char p0[64], p1[64];
	pid_t tid;

	if (node_of(0, p0, sizeof(p0)) || node_of(1, p1, sizeof(p1)))
		SKIP(return, "one d3dq device (module num_devices=2 needed)");
	a = util_open_callback(p0, callback, NULL);
	ASSERT_NE(NULL, a);
	b = util_open_callback(p1, callback, NULL);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, d3dq_fence_create(a, 0, 0, &fa));
	ASSERT_EQ(0, d3dq_fence_create(b, 0, 0, &fb));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(fa, 5, T(2)));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(fb, 5, T(3)));
	tid = dispatcher_tid();
	ASSERT_NE(0, tid);
	ASSERT_EQ(0, sysfs_write(DRV "/unbind", "d3dq.0"));
	self->unbound = true;
	EXPECT_TRUE(wait_calls(2, 1));
	EXPECT_TRUE(task_dispatcher_waits(tid));
	EXPECT_EQ(0, atomic_load(&calls[3]));
	EXPECT_EQ(0, d3dq_fence_signal(fb, 5));
	EXPECT_TRUE(wait_calls(3, 1));
	EXPECT_EQ(0, d3dq_fence_set_token_on_completion(fb, 9, T(4)));
	EXPECT_EQ(0, d3dq_fence_signal(fb, 9));
	EXPECT_TRUE(wait_calls(4, 1));
	EXPECT_EQ(0, d3dq_fence_set_token_on_completion(fa, 1, T(5)));
	EXPECT_TRUE(wait_calls(5, 1));
	EXPECT_TRUE(task_dispatcher_waits(tid));
	d3dq_fence_destroy(fa);
	d3dq_fence_destroy(fb);
	d3dq_device_close(a);
	d3dq_device_close(b);
	EXPECT_EQ(1, atomic_load(&calls[2]));
	EXPECT_EQ(1, atomic_load(&calls[3]));
	EXPECT_EQ(1, atomic_load(&calls[4]));
	EXPECT_EQ(1, atomic_load(&calls[5]));
}

TEST_HARNESS_MAIN
