// SPDX-License-Identifier: GPL-2.0
/*
 * The library over an unplugged device: unbinding its d3dq.N while a device
 * is open through libd3dq removes it as d3dq_device_remove() would
 * (R15): waits are released, fences read UINT64_MAX, events fire, and
 * calls fail with -ENODEV; nothing hangs, also when the device was idle.
 * Binding again gives a new,
 * working device. With callback devices the dispatcher calls what the
 * device registered, sleeps, and takes new registrations (which fire at
 * once on the device gone); those of a device still there keep working
 * (the module is reloaded with two devices for that). Skipped without
 * root or without the d3dq driver's sysfs directory.
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
#include "common/module.h"
#include "common/task.h"
#include "util/util.h"

#define DRV "/sys/bus/platform/drivers/d3dq"

/*
 * The platform device (d3dq.N) whose render node is the lowest-numbered:
 * the one d3dq_device_open(NULL) opens. After an unbind and a bind its
 * node is a new one, so with two devices this is not always d3dq.0.
 * Its node in @node too when @node is not NULL. 0, or -1 when none.
 */
static int first_device(char *name, size_t size, char *node, size_t nsize)
{
	DIR *p = opendir("/sys/bus/platform/devices"), *d;
	struct dirent *e, *r;
	char dir[300];
	int best = -1, n;

	while (p && (e = readdir(p))) {
		if (strncmp(e->d_name, "d3dq.", 5))
			continue;
		snprintf(dir, sizeof(dir), "/sys/bus/platform/devices/%s/drm",
			 e->d_name);
		d = opendir(dir);
		while (d && (r = readdir(d))) {
			if (strncmp(r->d_name, "renderD", 7))
				continue;
			n = atoi(r->d_name + 7);
			if (best >= 0 && n > best)
				continue;
			best = n;
			snprintf(name, size, "%.32s", e->d_name);
			if (node)
				snprintf(node, nsize, "/dev/dri/%.32s",
					 r->d_name);
		}
		if (d)
			closedir(d);
	}
	if (p)
		closedir(p);
	return best >= 0 ? 0 : -1;
}

FIXTURE(up) {
	struct util_env e;
	int efd;
	bool unbound;
	char name[40];		/* the platform device of e.dev */
};

FIXTURE_SETUP(up)
{
	self->efd = -1;
	self->unbound = false;
	if (access(DRV "/unbind", W_OK))
		SKIP(return, "cannot unbind d3dq devices here");
	ASSERT_EQ(0, first_device(self->name, sizeof(self->name), NULL, 0));
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
		EXPECT_EQ(0, module_sysfs_write(DRV "/bind", self->name));
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

	ASSERT_EQ(0, module_sysfs_write(DRV "/unbind", self->name));
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
	ASSERT_EQ(0, module_sysfs_write(DRV "/bind", self->name));
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

	ASSERT_EQ(0, module_sysfs_write(DRV "/unbind", self->name));
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
	ASSERT_EQ(0, module_sysfs_write(DRV "/unbind", self->name));
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

/* The render node of platform device @name in @path: 0, or -1. */
static int node_of(const char *name, char *path, size_t size)
{
	char dir[96];
	struct dirent *e;
	DIR *d;
	int ret = -1;

	snprintf(dir, sizeof(dir), "/sys/bus/platform/devices/%.40s/drm",
		 name);
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
 * Two devices and no file open: the module is reloaded with
 * num_devices=2 when it has one, and reloaded with its defaults after.
 */
FIXTURE(two) {
	bool reloaded;
	bool unbound;
	char name[40];		/* the first device */
};

FIXTURE_SETUP(two)
{
	self->reloaded = false;
	self->unbound = false;
	if (access(DRV "/unbind", W_OK))
		SKIP(return, "cannot unbind d3dq devices here");
	if (access("/sys/bus/platform/devices/d3dq.1", F_OK)) {
		if (!module_can_reload())
			SKIP(return, "one d3dq device and no D3DQ_MODULE");
		ASSERT_EQ(0, module_reload("num_devices=2"));
		self->reloaded = true;
	}
	ASSERT_EQ(0, first_device(self->name, sizeof(self->name), NULL, 0));
}

FIXTURE_TEARDOWN(two)
{
	if (self->unbound)
		EXPECT_EQ(0, module_sysfs_write(DRV "/bind", self->name));
	if (self->reloaded)
		EXPECT_EQ(0, module_reload(NULL));
}

/*
 * Two callback devices, on the first device (the dispatcher's file is
 * on its node) and on the other; the first is unplugged: its
 * registration is called, the other's fire when their values come, as
 * do new ones, and a
 * registration on the device gone fires at once. The module is
 * reloaded with num_devices=2 when it has one device (skipped without
 * D3DQ_MODULE).
 */
TEST_F_TIMEOUT(two, callbacks_other_device_stays, 60)
{
	struct d3dq_device *a, *b;
	struct d3dq_fence *fa, *fb;
	char p0[64], p1[64];
	const char *other;
	pid_t tid;

	other = strcmp(self->name, "d3dq.0") ? "d3dq.0" : "d3dq.1";
	ASSERT_EQ(0, node_of(self->name, p0, sizeof(p0)));
	ASSERT_EQ(0, node_of(other, p1, sizeof(p1)));
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
	ASSERT_EQ(0, module_sysfs_write(DRV "/unbind", self->name));
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
