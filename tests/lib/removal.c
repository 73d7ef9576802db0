// SPDX-License-Identifier: GPL-2.0
/*
 * R15: device removal by a job timeout, by d3dq_device_remove() and by
 * executing a list still recording. Afterwards every fence reads
 * UINT64_MAX, events have fired, queued waits are released, object
 * creation fails with the reason and the reason stays readable.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include "d3dq_drm.h"

#include "kselftest_harness.h"
#include "common/task.h"
#include "common/seccomp.h"
#include "util/util.h"

FIXTURE(r) {
	struct util_env e;
	int efd;
};

FIXTURE_SETUP(r)
{
	self->efd = -1;
	UTIL_ENV_OPEN(&self->e, 4096, 3, 0);
	self->efd = util_eventfd();
	ASSERT_GE(self->efd, 0);

	/* Work held back behind a wait nobody will satisfy. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 100,
							self->efd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 100));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf,
				       8, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 1));
}

FIXTURE_TEARDOWN(r)
{
	if (self->efd >= 0)
		close(self->efd);
	util_env_close(&self->e);
}

static void check_removed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(r) *self, int reason)
{
	struct d3dq_fence *f = (void *)1;
	struct d3dq_queue *q = (void *)1;
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_cmdlist *l = (void *)1;

	EXPECT_EQ(reason, d3dq_device_removed_reason(self->e.dev));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.g));
	EXPECT_EQ(1, util_event_take(self->efd));
	EXPECT_EQ(0, d3dq_fence_wait(self->e.f, UINT64_MAX, 0));
	/* The held work was dropped, not run. */
	EXPECT_EQ(0, util_read64(self->e.buf, 8));

	EXPECT_EQ(reason, d3dq_fence_create(self->e.dev, 0, 0, &f));
	EXPECT_EQ(NULL, f);
	EXPECT_EQ(reason, d3dq_queue_create(self->e.dev, &desc, &q));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(reason, d3dq_cmdlist_create(self->e.dev, &l));
	EXPECT_EQ(-ENODEV, d3dq_queue_signal(self->e.a, self->e.g, 5));
	EXPECT_EQ(-ENODEV, d3dq_queue_wait(self->e.a, self->e.g, 5));
	EXPECT_EQ(-ENODEV, d3dq_fence_signal(self->e.g, 5));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.g));
	/* Events registered now fire at once. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.g, 7, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	EXPECT_EQ(reason, d3dq_device_removed_reason(self->e.dev));
}

TEST_F_TIMEOUT(r, job_timeout, 60)
{
	/* Longer than the module's default job timeout (2 s). */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 3000 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	/* Blocks until the removal releases it. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 1000, D3DQ_TIMEOUT_INFINITE));
	check_removed(_metadata, self, -ETIMEDOUT);
	/* The job after the one that timed out never ran. */
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
}

TEST_F(r, explicit)
{
	ASSERT_EQ(0, d3dq_device_removed_reason(self->e.dev));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 500 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_device_remove(self->e.dev));
	check_removed(_metadata, self, -ENODEV);
	/*
	 * When remove returned, no job ran any more; none runs later: the
	 * kernel has none in flight or held.
	 */
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_TRUE(task_gpu_idle());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
}

TEST_F(r, execute_recording_list)
{
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, self->e.buf, 0, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(self->e.a, &l, 1));
	check_removed(_metadata, self, -EINVAL);
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	d3dq_cmdlist_destroy(l);
}

/*
 * The first removal's reason stays (the kernel keeps it): the driver
 * removed the device for a job timeout, and nobody asked for the reason
 * yet when a list still recording is executed, which removes the device
 * again with -EINVAL. The library once kept its own reason then.
 */
TEST_F_TIMEOUT(r, first_reason_stays, 60)
{
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, self->e.buf, 0, 1));
	/* Longer than the module's default job timeout (2 s). */
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 3000 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.g, 5));
	/* Released by the removal, which reads no reason. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 1000, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(self->e.b, &l, 1));
	check_removed(_metadata, self, -ETIMEDOUT);
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	d3dq_cmdlist_destroy(l);
}

struct racer {
	struct d3dq_fence *f;
	int efd;
	_Atomic int rounds;
};

/* Keeps the fence lock busy: many registrations popped by one signal. */
static void *popper(void *arg)
{
	struct racer *r = arg;
	int i;

	for (;;) {
		for (i = 0; i < 2000; i++)
			d3dq_fence_set_event_on_completion(r->f, 1, r->efd);
		if (d3dq_fence_signal(r->f, 1) || d3dq_fence_signal(r->f, 0))
			break;
		atomic_fetch_add(&r->rounds, 1);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	struct racer *r = arg;

	while (!d3dq_fence_signal(r->f, 2))
		;
	return NULL;
}

/* Tests that make their own device. */
FIXTURE(own) {
	int unused;
};

FIXTURE_SETUP(own)
{
}

FIXTURE_TEARDOWN(own)
{
}

/*
 * The racing tests below run their rounds, but on a slow kernel (the
 * debug kernel of make check-debug, where 300 s were not enough) stop
 * once @done rounds (at least 4) took over 120 s.
 */
static bool out_of_time(const struct timespec *t0, int done)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return done >= 4 && now.tv_sec - t0->tv_sec > 120;
}

/*
 * A CPU signal racing device removal never stores its value after the
 * removal set UINT64_MAX: it either happened before, or fails.
 */
TEST_F_TIMEOUT(own, cpu_signal_racing_removal, 300)
{
	struct timespec t0;
	int i, bad = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 20 && !out_of_time(&t0, i); i++) {
		struct d3dq_device *dev = util_open();
		struct racer r = { 0 };
		pthread_t t[2];

		if (!dev)
			SKIP(return, "no d3dq device");
		ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &r.f));
		r.efd = util_eventfd();
		ASSERT_GE(r.efd, 0);
		ASSERT_EQ(0, pthread_create(&t[0], NULL, popper, &r));
		ASSERT_EQ(0, pthread_create(&t[1], NULL, signaller, &r));
		while (atomic_load(&r.rounds) < 2 + i % 3)
			sched_yield();	/* the racers need the vCPUs */
		ASSERT_EQ(0, d3dq_device_remove(dev));
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		if (d3dq_fence_get_completed_value(r.f) != UINT64_MAX) {
			TH_LOG("round %d: %llu after removal", i,
			       (unsigned long long)
			       d3dq_fence_get_completed_value(r.f));
			bad++;
		}
		d3dq_fence_destroy(r.f);
		close(r.efd);
		d3dq_device_close(dev);
	}
	TH_LOG("%d rounds", i);
	EXPECT_EQ(0, bad);
}

struct observer {
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	int efd, how;
	_Atomic int *started;
	int reason;			/* read right after the observation */
};

/* Observe the removal one way, then read why at once. */
static void *observe(void *arg)
{
	struct observer *o = arg;
	struct pollfd pfd = { .fd = o->efd, .events = POLLIN };

	atomic_fetch_add(o->started, 1);
	switch (o->how) {
	case 0:
		d3dq_fence_wait(o->f, 1, D3DQ_TIMEOUT_INFINITE);
		break;
	case 1:
		while (d3dq_fence_get_completed_value(o->f) != UINT64_MAX)
			;
		break;
	default:
		poll(&pfd, 1, -1);
		break;
	}
	o->reason = d3dq_device_removed_reason(o->dev);
	return NULL;
}

/*
 * One instant (R15): whoever sees a fence released by a removal (a wait
 * returning, UINT64_MAX read back, an event firing) also reads the
 * removal's reason, never 0.
 */
TEST_F_TIMEOUT(own, reason_with_release, 300)
{
	struct timespec t0;
	int i, j, bad = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 30 && !out_of_time(&t0, i); i++) {
		struct d3dq_device *dev = util_open();
		struct observer o[3];
		_Atomic int started = 0;
		struct d3dq_fence *f, *more[500];
		pthread_t t[3];
		int efd;

		if (!dev)
			SKIP(return, "no d3dq device");
		ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &f));
		/*
		 * A removal with more to do (their timelines to raise):
		 * a wider window.
		 */
		for (j = 0; j < ARRAY_SIZE(more); j++)
			ASSERT_EQ(0, d3dq_fence_create(dev, 0,
						       D3DQ_FENCE_FLAG_SHARED,
						       &more[j]));
		efd = util_eventfd();
		ASSERT_GE(efd, 0);
		ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 1, efd));
		for (j = 0; j < 3; j++) {
			o[j] = (struct observer){ .dev = dev, .f = f,
				.efd = efd, .how = j, .started = &started };
			ASSERT_EQ(0, pthread_create(&t[j], NULL, observe,
						    &o[j]));
		}
		while (atomic_load(&started) < 3)
			sched_yield();
		if (i % 2)
			usleep(1000);
		ASSERT_EQ(0, d3dq_device_remove(dev));
		for (j = 0; j < 3; j++) {
			pthread_join(t[j], NULL);
			if (o[j].reason != -ENODEV) {
				TH_LOG("round %d, observer %d: reason %d",
				       i, j, o[j].reason);
				bad++;
			}
		}
		d3dq_fence_destroy(f);
		for (j = 0; j < ARRAY_SIZE(more); j++)
			d3dq_fence_destroy(more[j]);
		close(efd);
		d3dq_device_close(dev);
	}
	TH_LOG("%d rounds", i);
	EXPECT_EQ(0, bad);
}

struct caller {
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *g;
	_Atomic int *started;
	bool cpu;			/* CPU signals of @g, not queue ones */
	int ret;			/* the call that failed */
	uint64_t seen;			/* @f read right after it */
	int reason;			/* and the reason */
};

/* Signal @g until a call fails; then read @f and the reason. */
static void *call_until_refused(void *arg)
{
	struct caller *c = arg;
	uint64_t v = 1;

	atomic_fetch_add(c->started, 1);
	do {
		c->ret = c->cpu ? d3dq_fence_signal(c->g, v) :
			 d3dq_queue_signal(c->q, c->g, v);
		v++;
	} while (!c->ret);
	c->seen = d3dq_fence_get_completed_value(c->f);
	c->reason = d3dq_device_removed_reason(c->dev);
	return NULL;
}

/*
 * One instant (R15), seen from a call: once a queue call or a CPU signal
 * fails with -ENODEV, the removal has happened: every fence reads
 * UINT64_MAX and the reason is set. The driver stops the queues, then
 * sets the fences one after the other (in handle order): queues created
 * after the caller's, with running jobs to stop, and fences between the
 * signalled one (first) and the one read (last) widen the windows.
 */
TEST_F_TIMEOUT(own, call_refused_after_removal, 300)
{
	struct timespec t0;
	int i, j, bad = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 30 && !out_of_time(&t0, i); i++) {
		struct d3dq_device *dev = util_open();
		_Atomic int started = 0;
		struct caller c = { .dev = dev, .started = &started,
				    .cpu = i % 4 >= 2 };
		struct d3dq_queue *busy[4];
		struct d3dq_fence *more[2000];
		pthread_t t;

		if (!dev)
			SKIP(return, "no d3dq device");
		c.q = util_queue(dev);
		ASSERT_NE(NULL, c.q);
		ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &c.g));
		for (j = 0; j < ARRAY_SIZE(more); j++)
			ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &more[j]));
		ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &c.f));
		for (j = 0; j < ARRAY_SIZE(busy); j++) {
			busy[j] = util_queue(dev);
			ASSERT_NE(NULL, busy[j]);
			ASSERT_EQ(0, util_exec_delay(dev, busy[j], 200 * MS));
		}
		ASSERT_EQ(0, pthread_create(&t, NULL, call_until_refused, &c));
		while (atomic_load(&started) < 1)
			sched_yield();
		if (i % 2)
			usleep(1000);
		ASSERT_EQ(0, d3dq_device_remove(dev));
		pthread_join(t, NULL);
		if (c.ret != -ENODEV || c.seen != UINT64_MAX ||
		    c.reason != -ENODEV) {
			TH_LOG("round %d (%s signal): call %d, then %llu, reason %d",
			       i, c.cpu ? "CPU" : "queue", c.ret,
			       (unsigned long long)c.seen, c.reason);
			bad++;
		}
		d3dq_device_close(dev);
	}
	TH_LOG("%d rounds", i);
	EXPECT_EQ(0, bad);
}

/*
 * The driver refuses REMOVE (a seccomp filter): d3dq_device_remove()
 * returns the error, and the device stays as it was: not removed, its
 * work runs to completion, its fences reach their values.
 */
TEST_F(own, remove_refused_by_driver)
{
	struct util_env e;
	int ret = util_env_open(&e, 4096, 0, 0);

	if (ret == -ENODEV)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, util_exec_delay(e.dev, e.a, 300 * MS));
	ASSERT_EQ(0, util_exec_write64(e.dev, e.a, e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e.a, e.f, 5));
	ASSERT_EQ(0, seccomp_refuse_ioctls((const unsigned long[]){
				DRM_IOCTL_D3DQ_REMOVE }, 1, EIO));
	EXPECT_EQ(-EIO, d3dq_device_remove(e.dev));
	EXPECT_EQ(0, d3dq_device_removed_reason(e.dev));
	ASSERT_EQ(0, d3dq_fence_wait(e.f, 5, 10000 * MS));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(e.f));
	EXPECT_EQ(1, util_read64(e.buf, 0));
	EXPECT_EQ(0, d3dq_queue_signal(e.a, e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e.g, 1, 10000 * MS));
	util_env_close(&e);
}

TEST_HARNESS_MAIN
