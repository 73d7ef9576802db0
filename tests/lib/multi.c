// SPDX-License-Identifier: GPL-2.0
/*
 * R13: SetEventOnMultipleFenceCompletion, ALL and ANY, with and without an
 * eventfd; invalid calls leave the event alone.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"
#include "common/task.h"

#define ALL D3DQ_MULTIPLE_FENCE_WAIT_ALL
#define ANY D3DQ_MULTIPLE_FENCE_WAIT_ANY

FIXTURE(mf) {
	struct d3dq_device *dev;
	struct d3dq_fence *f[3];
	uint64_t v[3];
	int efd;
};

FIXTURE_SETUP(mf)
{
	int i;

	self->dev = util_open();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->f[i]));
		self->v[i] = 10 * (i + 1);
	}
	self->efd = util_eventfd();
	ASSERT_GE(self->efd, 0);
}

FIXTURE_TEARDOWN(mf)
{
	int i;

	close(self->efd);
	for (i = 0; i < 3; i++)
		d3dq_fence_destroy(self->f[i]);
	d3dq_device_close(self->dev);
}

TEST_F(mf, invalid_calls)
{
	uint64_t one = 1;

	ASSERT_EQ(8, write(self->efd, &one, 8));
	EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 0, ALL, self->efd));
	EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, 2, self->efd));
	EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 0, ALL, -1));
	/* Neither touched the event. */
	EXPECT_EQ(1, util_event_take(self->efd));
}

TEST_F(mf, all)
{
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ALL, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[2], 30));
	EXPECT_EQ(0, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 20));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 20));
	EXPECT_EQ(0, util_event_take(self->efd));
}

TEST_F(mf, any_fires_once)
{
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ANY, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 5));
	EXPECT_EQ(0, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 25));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[2], 30));
	EXPECT_EQ(0, util_event_take(self->efd));
}

/* One fence named twice: ALL needs both values, ANY fires once. */
TEST_F(mf, one_fence_twice)
{
	struct d3dq_fence *twice[2] = { self->f[0], self->f[0] };
	uint64_t all[2] = { 10, 20 }, any[2] = { 30, 10 };

	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, twice, all, 2, ALL, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	EXPECT_EQ(0, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 20));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 0));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, twice, any, 2, ANY, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 30));
	EXPECT_EQ(0, util_event_take(self->efd));
	/* Blocking: satisfied once the larger value is there. */
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, twice, all, 2, ALL, -1));
}

TEST_F(mf, already_satisfied)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 20));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[2], 30));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ALL, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ANY, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ALL, -1));
}

TEST_F(mf, count_one_is_single)
{
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 1, ANY, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	EXPECT_EQ(1, util_event_take(self->efd));
}

/*
 * Signals f[i] = v[i] one after another, each once thread @waiter
 * sleeps in the driver: the blocking path runs, whatever the timing.
 */
struct later {
	pid_t waiter;
	struct d3dq_fence *f[2];
	uint64_t v[2];
	int n;
	bool asleep;		/* the waiter was seen asleep each time */
};

static void *later_thread(void *arg)
{
	struct later *l = arg;
	int i;

	l->asleep = true;
	for (i = 0; i < l->n; i++) {
		l->asleep &= task_asleep_in_driver(l->waiter);
		d3dq_fence_signal(l->f[i], l->v[i]);
	}
	return NULL;
}

/* No eventfd, ALL, fences still pending: returns when the last completes. */
TEST_F(mf, all_blocking)
{
	struct later l = { task_self(), { self->f[0], self->f[2] }, { 10, 30 },
			   2, false };
	struct d3dq_queue *q = util_queue(self->dev);
	pthread_t t;

	ASSERT_NE(NULL, q);
	/* f[1] comes from a queue after engine work. */
	ASSERT_EQ(0, util_exec_delay(self->dev, q, 200 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(q, self->f[1], 20));
	ASSERT_EQ(0, pthread_create(&t, NULL, later_thread, &l));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ALL, -1));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->f[0]));
	EXPECT_EQ(20, d3dq_fence_get_completed_value(self->f[1]));
	EXPECT_EQ(30, d3dq_fence_get_completed_value(self->f[2]));
	pthread_join(t, NULL);
	/* Both CPU signals came while the call slept. */
	EXPECT_TRUE(l.asleep);
	d3dq_queue_destroy(q);
}

struct all_waiter {
	struct d3dq_device *dev;
	struct d3dq_fence *fs[3];
	uint64_t v[3];
	uint32_t n;
	_Atomic pid_t tid;
	_Atomic int ret;
	int done;		/* an eventfd, set when the call returned */
};

static void *all_waiter_main(void *arg)
{
	struct all_waiter *w = arg;
	uint64_t one = 1;

	atomic_store(&w->tid, (pid_t)syscall(SYS_gettid));
	atomic_store(&w->ret, d3dq_device_set_event_on_multiple_fence_completion(
			     w->dev, w->fs, w->v, w->n, ALL, -1));
	if (write(w->done, &one, 8) != 8)
		atomic_store(&w->ret, -EIO);
	return NULL;
}

static int all_waiter_start(struct all_waiter *w, pthread_t *t)
{
	w->done = util_eventfd();
	if (w->done < 0)
		return -1;
	atomic_store(&w->ret, 1);
	if (pthread_create(t, NULL, all_waiter_main, w))
		return -1;
	while (!atomic_load(&w->tid))
		usleep(1000);
	return task_asleep_in_driver(atomic_load(&w->tid)) ? 0 : -1;
}

/*
 * R6, R13: a blocking ALL holds once every fence reached its value, each
 * at some moment since the call. F1 reaches its value and is rewound
 * while the thread waits, F0 only later: the call returns. (The library
 * once waited for one fence after the other: it waited for F0, missed
 * F1's 1 and then waited for F1 for ever.)
 */
TEST_F(mf, all_blocking_sees_a_rewound_fence)
{
	struct all_waiter w = {
		.dev = self->dev, .fs = { self->f[0], self->f[1] },
		.v = { 10, 1 }, .n = 2,
	};
	pthread_t t;

	ASSERT_EQ(0, all_waiter_start(&w, &t));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 1));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 0));
	EXPECT_EQ(0, util_event_take(w.done));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	EXPECT_EQ(1, util_event_wait(w.done, 10000));
	if (atomic_load(&w.ret) == 1)
		/* Still blocked: release it for the join. */
		ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, atomic_load(&w.ret));
	close(w.done);
}

/*
 * The same with shared fences, which the kernel names through their
 * second handle (as events do): S1 is reached and rewound, S2 destroyed
 * (R14: as if it reached UINT64_MAX) while the thread waits, and neither
 * ends the wait on its own; L0 (local) reaches its value last.
 */
TEST_F(mf, all_blocking_shared_rewound_and_destroyed)
{
	struct d3dq_fence *s1, *s2;
	struct all_waiter w = { .dev = self->dev, .v = { 5, 10, 1 }, .n = 3 };
	pthread_t t;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &s1));
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &s2));
	w.fs[0] = s2;
	w.fs[1] = self->f[0];
	w.fs[2] = s1;
	ASSERT_EQ(0, all_waiter_start(&w, &t));
	d3dq_fence_destroy(s2);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&w.tid)));
	EXPECT_EQ(0, util_event_take(w.done));
	ASSERT_EQ(0, d3dq_fence_signal(s1, 1));
	ASSERT_EQ(0, d3dq_fence_signal(s1, 0));
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&w.tid)));
	EXPECT_EQ(0, util_event_take(w.done));
	ASSERT_EQ(0, d3dq_fence_signal(self->f[0], 10));
	EXPECT_EQ(1, util_event_wait(w.done, 10000));
	if (atomic_load(&w.ret) == 1)
		ASSERT_EQ(0, d3dq_fence_signal(s1, 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, atomic_load(&w.ret));
	d3dq_fence_destroy(s1);
	close(w.done);
}

TEST_F(mf, any_blocking)
{
	struct later l = { task_self(), { self->f[1] }, { 20 }, 1, false };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, later_thread, &l));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, self->f, self->v, 3, ANY, -1));
	EXPECT_EQ(20, d3dq_fence_get_completed_value(self->f[1]));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->f[0]));
	pthread_join(t, NULL);
	EXPECT_TRUE(l.asleep);
}

/*
 * An ANY registration that fired leaves nothing behind on its other
 * fences: a frame loop registering ANY{frame, quit} every frame does not
 * grow the quit fence (nor the heap) without bound: after 1,000 frames
 * the heap stays as it is (to the byte on 6.12), so 5,000 more frames
 * growing it by 64 KiB mean a leak of every frame. Each frame is a few
 * system calls: 0.35 ms in the VM, but 15 ms on the debug kernel (make
 * check-debug), where 20,000 frames outlasted 300 s.
 */
TEST_F_TIMEOUT(mf, any_leaves_nothing_behind, 600)
{
	struct d3dq_fence *fq[2] = { self->f[0], self->f[1] };
	uint64_t v[2] = { 0, 1 };
	size_t before = 0, after;
	uint64_t i;

	for (i = 1; i <= 6000; i++) {
		v[0] = i;
		ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
				self->dev, fq, v, 2, ANY, self->efd));
		ASSERT_EQ(0, d3dq_fence_signal(self->f[0], i));
		ASSERT_EQ(1, util_event_take(self->efd));
		if (i == 1000)
			before = mallinfo2().uordblks;
	}
	after = mallinfo2().uordblks;
	TH_LOG("heap in use: %zu bytes after 1000 frames, %zu after 6000",
	       before, after);
	EXPECT_LT(after, before + 64 * 1024);
	/* The quit fence still works, and fires nothing stale. */
	ASSERT_EQ(0, d3dq_fence_signal(self->f[1], 1));
	EXPECT_EQ(0, util_event_take(self->efd));
}

struct racer {
	struct d3dq_fence *f;
	pthread_barrier_t *go;
	uint64_t rounds;
	atomic_bool stop;
};

static void *signal_each_round(void *arg)
{
	struct racer *r = arg;
	uint64_t i;

	for (i = 1; i <= r->rounds; i++) {
		pthread_barrier_wait(r->go);
		if (atomic_load(&r->stop))
			break;
		d3dq_fence_signal(r->f, i);
	}
	return NULL;
}

/*
 * A registration racing a change of one of its fences: the library read
 * the value before taking the fence's lock, so a signal landing in between
 * popped the heap before the registration was pushed, and nothing popped
 * it later (for a shared fence the worker's watch only applies values
 * above the library's own). The ALL event then never fired. Each round, a
 * thread signals shared fence F to i while this one registers ALL
 * {F >= i, G >= i}; then G reaches i and the event must be set. Each
 * round hands over between two threads twice, which takes the debug
 * kernel (make check-debug) over 15 ms: more than the harness's default
 * 30 s for 2,000 rounds.
 */
TEST_F_TIMEOUT(mf, registration_races_signal, 300)
{
	struct d3dq_fence *fs[2];
	struct racer r = { .rounds = 2000 };
	pthread_barrier_t go;
	uint64_t v[2], i, lost = 0;
	pthread_t t;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &fs[0]));
	fs[1] = self->f[0];
	ASSERT_EQ(0, pthread_barrier_init(&go, NULL, 2));
	r.f = fs[0];
	r.go = &go;
	ASSERT_EQ(0, pthread_create(&t, NULL, signal_each_round, &r));
	for (i = 1; i <= r.rounds; i++) {
		v[0] = v[1] = i;
		pthread_barrier_wait(&go);
		ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
				self->dev, fs, v, 2, ALL, self->efd));
		ASSERT_EQ(0, d3dq_fence_signal(fs[1], i));
		if (util_event_wait(self->efd, 10000) != 1) {
			lost++;
			break;
		}
	}
	if (i <= r.rounds) {
		/* Broke off: the signaller waits for the next round. */
		atomic_store(&r.stop, true);
		pthread_barrier_wait(&go);
	}
	pthread_join(t, NULL);
	TH_LOG("%llu rounds", (unsigned long long)(i - 1));
	EXPECT_EQ(0, lost);
	pthread_barrier_destroy(&go);
	d3dq_fence_destroy(fs[0]);
}

TEST_HARNESS_MAIN
