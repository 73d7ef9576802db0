// SPDX-License-Identifier: GPL-2.0
/*
 * The dispatcher of token callbacks under pressure (issue 39, item 3):
 * the same token, fence and value registered by two threads at once is
 * called once per crossing; registered again after a crossing and a
 * rewind that the dispatcher has not called yet, it is called for each
 * crossing (R10, no lost wake-up); a registration that fails leaves no
 * kernel registration behind; a dispatcher whose wait keeps failing
 * gives up (the device is removed, its callbacks come, R15) and sleeps
 * instead of polling for ever. Unplug: tests/lib/unplug.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/util.h"
#include "../common/task.h"
#include "../common/seccomp.h"

#define T(n) ((void *)(uintptr_t)(n))
#define NT 1024
#define BLOCKER 1		/* its callback waits for @go */

struct rec {
	_Atomic bool in_blocker, go;
	_Atomic unsigned int count[NT];
	_Atomic unsigned int total;
};

static int callback(void *token, void *context)
{
	struct rec *r = context;
	uintptr_t t = (uintptr_t)token;

	if (t == BLOCKER) {
		atomic_store(&r->in_blocker, true);
		while (!atomic_load(&r->go))
			util_sleep_ms(1);
	}
	if (t < NT)
		atomic_fetch_add(&r->count[t], 1);
	atomic_fetch_add(&r->total, 1);
	return 0;
}

/* Wait (a hang detector, 20 s) until token @t was called @n times. */
static bool wait_count(struct rec *r, unsigned int t, unsigned int n)
{
	int i;

	for (i = 0; i < 20000 && atomic_load(&r->count[t]) < n; i++)
		util_sleep_ms(1);
	return atomic_load(&r->count[t]) >= n;
}

/*
 * Call token @t for a value of @f that is reached, and wait for it: the
 * callbacks of every registration that fired before were called then
 * (library.rst: an event that fired before another was registered is
 * called first).
 */
static bool flush(struct rec *r, struct d3dq_fence *f, unsigned int t)
{
	unsigned int n = atomic_load(&r->count[t]);

	if (d3dq_fence_set_token_on_completion(f, 0, T(t)))
		return false;
	return wait_count(r, t, n + 1);
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

FIXTURE(d) {
	struct rec *r;
	struct d3dq_device *dev;
	struct d3dq_fence *f, *g;
};

FIXTURE_SETUP(d)
{
	self->r = calloc(1, sizeof(*self->r));
	ASSERT_NE(NULL, self->r);
	self->dev = util_open_callback(NULL, callback, self->r);
	if (!self->dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->f));
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->g));
}

FIXTURE_TEARDOWN(d)
{
	if (self->dev) {
		atomic_store(&self->r->go, true);
		d3dq_device_close(self->dev);
	}
	free(self->r);
}

/*
 * A crossing, a rewind and the same registration again, while the
 * dispatcher is busy in another callback (so it has not called the
 * first yet): then a second crossing. Two calls (R10: the second
 * registration was made after the first fired). The old library found
 * the first still listed and dropped the second: one call.
 */
TEST_F(d, reregistered_after_crossing_and_rewind)
{
	struct rec *r = self->r;

	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->g, 0,
							T(BLOCKER)));
	while (!atomic_load(&r->in_blocker))
		util_sleep_ms(1);
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 1, T(2)));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 1));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 0));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 1, T(2)));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 1));
	atomic_store(&r->go, true);
	ASSERT_TRUE(flush(r, self->g, 3));
	EXPECT_EQ(2, atomic_load(&r->count[2]));

	/* Unfired, the same registration is one (R10), busy or not. */
	atomic_store(&r->go, false);
	atomic_store(&r->in_blocker, false);
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->g, 0,
							T(BLOCKER)));
	while (!atomic_load(&r->in_blocker))
		util_sleep_ms(1);
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 5, T(4)));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 5, T(4)));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	atomic_store(&r->go, true);
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 6, T(5)));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 6, T(5)));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 6));
	ASSERT_TRUE(flush(r, self->g, 3));
	EXPECT_EQ(1, atomic_load(&r->count[4]));
	EXPECT_EQ(1, atomic_load(&r->count[5]));
}

/*
 * The same, unforced: 100 rounds of crossing, rewind, registration
 * again and crossing, each one called twice.
 */
TEST_F(d, reregistered_unforced)
{
	struct rec *r = self->r;
	int i, bad = 0;

	for (i = 0; i < 100; i++) {
		unsigned int t = 100 + i;

		ASSERT_EQ(0, d3dq_fence_signal(self->f, 0));
		ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 1,
								T(t)));
		ASSERT_EQ(0, d3dq_fence_signal(self->f, 1));
		ASSERT_EQ(0, d3dq_fence_signal(self->f, 0));
		ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->f, 1,
								T(t)));
		ASSERT_EQ(0, d3dq_fence_signal(self->f, 1));
	}
	ASSERT_TRUE(flush(r, self->g, 3));
	for (i = 0; i < 100; i++)
		bad += atomic_load(&r->count[100 + i]) != 2;
	EXPECT_EQ(0, bad);
}

struct twin {
	struct d3dq_fence *f;
	pthread_barrier_t *b;
	unsigned int rounds;
	int err;
};

static void *register_rounds(void *arg)
{
	struct twin *x = arg;
	unsigned int i;

	for (i = 0; i < x->rounds; i++) {
		pthread_barrier_wait(x->b);
		if (d3dq_fence_set_token_on_completion(x->f, i + 1,
						       T(300 + i)))
			x->err++;
		pthread_barrier_wait(x->b);
	}
	return NULL;
}

/*
 * Two threads register the same token, fence and value at once, then
 * the value is reached: one call each round (R10). The old library
 * checked, then added: both threads found nothing and both added.
 */
TEST_F(d, same_registration_from_two_threads)
{
	struct rec *r = self->r;
	pthread_barrier_t b;
	struct twin x[2];
	pthread_t t[2];
	unsigned int i, rounds = 300, bad = 0;

	ASSERT_EQ(0, pthread_barrier_init(&b, NULL, 3));
	for (i = 0; i < 2; i++) {
		x[i] = (struct twin){ .f = self->f, .b = &b, .rounds = rounds };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, register_rounds,
					    &x[i]));
	}
	for (i = 0; i < rounds; i++) {
		pthread_barrier_wait(&b);
		pthread_barrier_wait(&b);
		ASSERT_EQ(0, d3dq_fence_signal(self->f, i + 1));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, x[i].err);
	}
	ASSERT_TRUE(flush(r, self->g, 3));
	for (i = 0; i < rounds; i++)
		bad += atomic_load(&r->count[300 + i]) != 1;
	EXPECT_EQ(0, bad);
	pthread_barrier_destroy(&b);
}

/*
 * The dispatcher's wait fails for good (a seccomp filter): it tries a
 * few times, then removes the device (R15: its registration fires, the
 * program reads the removal) and sleeps. The old library tried again
 * every 1 ms, for ever, and the callback never came.
 */
TEST(wait_fails_for_good)
{
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	struct rec *r = calloc(1, sizeof(*r));
	pid_t tid;

	ASSERT_NE(NULL, r);
	dev = util_open_callback(NULL, callback, r);
	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &f));
	ASSERT_EQ(0, seccomp_refuse_ioctls((const unsigned long[]){
				DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
				DRM_IOCTL_SYNCOBJ_QUERY }, 2, EIO));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(f, 10, T(2)));
	ASSERT_TRUE(wait_count(r, 2, 1));
	EXPECT_EQ(-ENODEV, d3dq_device_removed_reason(dev));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(f));
	tid = dispatcher_tid();
	ASSERT_NE(0, tid);
	EXPECT_TRUE(task_asleep_in(tid, SYS_futex));
	/* A registration now: removed, it fires (at once, or so). */
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(f, 20, T(3)));
	ASSERT_TRUE(wait_count(r, 3, 1));
	EXPECT_TRUE(task_asleep_in(tid, SYS_futex));
	d3dq_fence_destroy(f);
	d3dq_device_close(dev);
	EXPECT_EQ(1, atomic_load(&r->count[2]));
	EXPECT_EQ(1, atomic_load(&r->count[3]));
	free(r);
}

/*
 * The module again with @args (NULL: its defaults): 0, or -1 without
 * $D3DQ_MODULE or root.
 */
static int reload(const char *args)
{
	const char *m = getenv("D3DQ_MODULE");
	char cmd[1024];
	int i;

	if (!m || !*m || access("/sys/module/d3dq", F_OK))
		return -1;
	for (i = 0; i < 100; i++) {
		if (!system("rmmod d3dq 2>/dev/null"))
			break;
		util_sleep_ms(50);
	}
	if (!access("/sys/module/d3dq", F_OK))
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod '%s' %s", m, args ? args : "");
	return system(cmd) ? -1 : 0;
}

#define EVENTS 64

/*
 * Token registrations that fail (no descriptor is left for the syncobj's
 * export) leave no kernel registration behind: with the user's bound at
 * 64 pending events, 128 failures later 32 eventfd registrations still
 * fit. The old library made the kernel registration first and left it
 * there: the bound was full.
 */
FIXTURE(bound) {
	bool reloaded;
};

FIXTURE_SETUP(bound)
{
	self->reloaded = !reload("max_user_fence_events=64");
	if (!self->reloaded)
		SKIP(return, "cannot reload d3dq (D3DQ_MODULE, root)");
}

/* Also when the test failed: the next programs get the defaults. */
FIXTURE_TEARDOWN(bound)
{
	if (self->reloaded)
		EXPECT_EQ(0, reload(NULL));
}

TEST_F(bound, failed_registration_leaves_nothing)
{
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	struct rlimit old, low;
	struct rec *r;
	int i, fd, efd, failed = 0, fit = 0;

	r = calloc(1, sizeof(*r));
	ASSERT_NE(NULL, r);
	dev = util_open_callback(NULL, callback, r);
	ASSERT_NE(NULL, dev);
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &f));
	efd = util_eventfd();
	ASSERT_LE(0, efd);
	/* No descriptor above the lowest free one. */
	fd = dup(0);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	low = old;
	low.rlim_cur = (rlim_t)fd;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
	for (i = 0; i < 2 * EVENTS; i++)
		failed += d3dq_fence_set_token_on_completion(f, 1000 + i,
							     T(2)) != 0;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	EXPECT_EQ(2 * EVENTS, failed);
	for (i = 0; i < EVENTS / 2; i++)
		fit += !d3dq_fence_set_event_on_completion(f, 2000 + i, efd);
	EXPECT_EQ(EVENTS / 2, fit);
	/* And a token registration works again. */
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(f, 1, T(4)));
	ASSERT_EQ(0, d3dq_fence_signal(f, 1));
	EXPECT_TRUE(wait_count(r, 4, 1));
	d3dq_fence_destroy(f);
	d3dq_device_close(dev);
	close(efd);
	EXPECT_EQ(0, atomic_load(&r->count[2]));
	free(r);
}

TEST_HARNESS_MAIN
