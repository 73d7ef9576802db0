// SPDX-License-Identifier: GPL-2.0
/*
 * Devices opened with a signal_event callback (d3dq_device_open_desc):
 * tokens instead of eventfds. Each registration calls the callback once
 * (R10), on the dispatcher thread, in the order the events fired, also
 * when many threads signal at once; closing the device calls what the
 * destruction of its fences fired before it returns (R14); a callback may
 * call the library, even close its own device; the thread exists only
 * while such a device does. Argument checks of the new calls.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define T(n) ((void *)(uintptr_t)(n))
#define NT 1024

struct rec {
	_Atomic bool go;		/* token 2 waits for it */
	_Atomic unsigned int count[NT];
	_Atomic unsigned int total;
	_Atomic uint64_t order;		/* tokens 1..: each after the one before */
	_Atomic bool out_of_order;
	struct d3dq_device *close_me;	/* token 2 closes it */
	struct d3dq_fence *chain;	/* token 3 signals it to 1 */
};

static int callback(void *token, void *context)
{
	struct rec *r = context;
	uintptr_t t = (uintptr_t)token;

	if (t == 2 && r->close_me) {
		/* Not while the program's Signal that fired it still runs. */
		while (!atomic_load(&r->go))
			util_sleep_ms(1);
		d3dq_device_close(r->close_me);
	}
	if (t == 3 && r->chain)
		d3dq_fence_signal(r->chain, d3dq_fence_get_completed_value(
						  r->chain) + 1);
	if (t < NT)
		atomic_fetch_add(&r->count[t], 1);
	atomic_fetch_add(&r->total, 1);
	return 0;
}

static struct d3dq_device *open_cb(struct rec *r)
{
	struct d3dq_device_desc desc = D3DQ_DEVICE_DESC_INIT;
	struct d3dq_device *dev = NULL;

	desc.signal_event = callback;
	desc.context = r;
	if (d3dq_device_open_desc(&desc, &dev))
		return NULL;
	return dev;
}

/* Wait (a hang detector, 20 s) until @n callbacks were called. */
static bool wait_total(struct rec *r, unsigned int n)
{
	int i;

	for (i = 0; i < 20000 && atomic_load(&r->total) < n; i++)
		util_sleep_ms(1);
	return atomic_load(&r->total) >= n;
}

static void *nothing(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

/*
 * The number of threads before a test starts one, once a thread was
 * started, joined and removed by the kernel: ThreadSanitizer starts a
 * thread of its own with the first one.
 */
static int threads_before(void)
{
	char path[64];
	pid_t tid = 0;
	pthread_t t;
	int i;

	if (!pthread_create(&t, NULL, nothing, &tid))
		pthread_join(t, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	for (i = 0; tid && i < 1000 && !access(path, F_OK); i++)
		util_sleep_ms(10);
	return util_thread_count();
}

/*
 * The number of threads once it is @want, or after 10 s: a joined thread
 * may be listed until the kernel removes its task, a detached one ends
 * on its own.
 */
static int threads_then(int want)
{
	int i;

	for (i = 0; i < 1000 && util_thread_count() != want; i++)
		util_sleep_ms(10);
	return util_thread_count();
}

TEST(arguments)
{
	struct d3dq_device_desc desc = D3DQ_DEVICE_DESC_INIT;
	struct {
		struct d3dq_device_desc d;
		uint32_t later;
	} big;
	struct d3dq_device *plain = util_open(), *dev = (void *)1;
	struct d3dq_fence *f;
	uint64_t v = 1;
	struct rec r;

	if (!plain)
		SKIP(return, "no d3dq device");
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, d3dq_device_open_desc(NULL, &dev));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(-EINVAL, d3dq_device_open_desc(&desc, NULL));
	desc.size = sizeof(desc) - 1;
	EXPECT_EQ(-EINVAL, d3dq_device_open_desc(&desc, &dev));
	desc.size = sizeof(desc);
	desc.flags = 1;
	EXPECT_EQ(-EINVAL, d3dq_device_open_desc(&desc, &dev));
	desc.flags = 0;
	desc.path = "/dev/null";
	EXPECT_EQ(-ENODEV, d3dq_device_open_desc(&desc, &dev));
	desc.path = NULL;
	memset(&big, 0, sizeof(big));
	big.d = desc;
	big.d.size = sizeof(big);
	big.later = 1;
	EXPECT_EQ(-EINVAL, d3dq_device_open_desc(&big.d, &dev));
	big.later = 0;
	ASSERT_EQ(0, d3dq_device_open_desc(&big.d, &dev));
	/* Without a callback, tokens are refused; eventfds still work. */
	ASSERT_EQ(0, d3dq_fence_create(dev, 5, 0, &f));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_token_on_completion(f, 1, T(1)));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_token_on_completion(f, 1, NULL));
	EXPECT_EQ(-EINVAL, d3dq_device_set_token_on_multiple_fence_completion(
			dev, &f, &v, 1, 0, T(1)));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_token_on_completion(NULL, 1, T(1)));
	EXPECT_EQ(-EINVAL, d3dq_device_set_token_on_multiple_fence_completion(
			NULL, &f, &v, 1, 0, T(1)));
	d3dq_fence_destroy(f);
	d3dq_device_close(dev);

	dev = open_cb(&r);
	ASSERT_NE(NULL, dev);
	ASSERT_EQ(0, d3dq_fence_create(dev, 5, 0, &f));
	EXPECT_EQ(-EINVAL, d3dq_device_set_token_on_multiple_fence_completion(
			dev, &f, &v, 0, 0, T(1)));
	EXPECT_EQ(-EINVAL, d3dq_device_set_token_on_multiple_fence_completion(
			dev, &f, &v, 1, 2, T(1)));
	/* NULL blocks (reached: returns at once). */
	EXPECT_EQ(0, d3dq_fence_set_token_on_completion(f, 5, NULL));
	EXPECT_EQ(0, d3dq_device_set_token_on_multiple_fence_completion(
			dev, &f, &v, 1, 0, NULL));
	/* A fence of another device. */
	EXPECT_EQ(-EINVAL, d3dq_device_set_token_on_multiple_fence_completion(
			plain, &f, &v, 1, 0, T(1)));
	d3dq_fence_destroy(f);
	d3dq_device_close(dev);
	EXPECT_EQ(0, atomic_load(&r.total));
	d3dq_device_close(plain);
}

struct racer {
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	struct rec *r;
	unsigned int base;
};

/* Register a token per value and signal it, 200 times. */
static void *race(void *arg)
{
	struct racer *x = arg;
	unsigned int i;

	for (i = 1; i <= 200; i++) {
		if (d3dq_fence_set_token_on_completion(x->f, i,
						       T(x->base + i)))
			return (void *)1;
		if (d3dq_fence_signal(x->f, i))
			return (void *)1;
	}
	return NULL;
}

/*
 * Four threads, each with its fence, and the same tokens on a shared
 * fence ALL-ed with theirs: every registration fires exactly once.
 */
TEST(many_threads)
{
	struct racer x[4];
	pthread_t t[4];
	struct d3dq_device *dev;
	struct d3dq_fence *fs[4];
	uint64_t vs[4] = { 200, 200, 200, 200 };
	struct rec *r = calloc(1, sizeof(*r));
	void *ret;
	int i;

	ASSERT_NE(NULL, r);
	dev = open_cb(r);
	if (!dev)
		SKIP(return, "no d3dq device");
	for (i = 0; i < 4; i++) {
		x[i].dev = dev;
		x[i].r = r;
		x[i].base = 200 * i;
		ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &x[i].f));
		fs[i] = x[i].f;
	}
	ASSERT_EQ(0, d3dq_device_set_token_on_multiple_fence_completion(
			dev, fs, vs, 4, D3DQ_MULTIPLE_FENCE_WAIT_ALL, T(1000)));
	ASSERT_EQ(0, d3dq_device_set_token_on_multiple_fence_completion(
			dev, fs, vs, 4, D3DQ_MULTIPLE_FENCE_WAIT_ANY, T(1001)));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race, &x[i]));
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		EXPECT_EQ(NULL, ret);
	}
	ASSERT_TRUE(wait_total(r, 802));
	for (i = 1; i <= 800; i++)
		EXPECT_EQ(1, atomic_load(&r->count[i])) TH_LOG("token %d", i);
	EXPECT_EQ(1, atomic_load(&r->count[1000]));
	EXPECT_EQ(1, atomic_load(&r->count[1001]));
	for (i = 0; i < 4; i++)
		d3dq_fence_destroy(x[i].f);
	d3dq_device_close(dev);
	EXPECT_EQ(802, atomic_load(&r->total));
	free(r);
}

/*
 * Closing the device with registrations outstanding calls them all (the
 * fences' destruction fires them, R14) before the close returns, and the
 * thread is gone after.
 */
TEST(close_with_pending)
{
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *g, *fs[2];
	uint64_t vs[2] = { 50, 60 };
	struct rec r;
	int n0, i;

	memset(&r, 0, sizeof(r));
	n0 = threads_before();
	dev = open_cb(&r);
	if (!dev)
		SKIP(return, "no d3dq device");
	EXPECT_EQ(n0 + 1, util_thread_count());
	q = util_queue(dev);
	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &g));
	fs[0] = f;
	fs[1] = g;
	for (i = 1; i <= 100; i++)
		ASSERT_EQ(0, d3dq_fence_set_token_on_completion(f, 100 + i,
								T(i)));
	ASSERT_EQ(0, d3dq_device_set_token_on_multiple_fence_completion(
			dev, fs, vs, 2, D3DQ_MULTIPLE_FENCE_WAIT_ALL, T(101)));
	ASSERT_EQ(0, d3dq_queue_wait(q, g, 1000));
	ASSERT_EQ(0, d3dq_queue_signal(q, f, 150));
	/* Everything, the fences and queue included, goes with the device. */
	d3dq_device_close(dev);
	EXPECT_EQ(101, atomic_load(&r.total));
	for (i = 1; i <= 101; i++)
		EXPECT_EQ(1, atomic_load(&r.count[i])) TH_LOG("token %d", i);
	EXPECT_EQ(n0, threads_then(n0));
}

/*
 * A callback signals a fence (whose registration calls it again: a
 * chain of 50) and the last one closes its own device: the thread ends
 * once its callbacks return.
 */
TEST(callback_calls_the_library)
{
	struct d3dq_device *dev;
	struct rec r;
	int n0, i;

	memset(&r, 0, sizeof(r));
	n0 = threads_before();
	dev = open_cb(&r);
	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &r.chain));
	for (i = 0; i < 50; i++)
		ASSERT_EQ(0, d3dq_fence_set_token_on_completion(r.chain, i,
								T(3)));
	/* Value 0 is reached: the chain starts at once. */
	ASSERT_TRUE(wait_total(&r, 50));
	EXPECT_EQ(50, d3dq_fence_get_completed_value(r.chain));
	EXPECT_EQ(50, atomic_load(&r.count[3]));
	d3dq_fence_destroy(r.chain);
	r.chain = NULL;

	r.close_me = dev;
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &r.chain));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(r.chain, 1, T(2)));
	/* The close destroys r.chain, whose registration fires: 4. */
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(r.chain, 9, T(4)));
	ASSERT_EQ(0, d3dq_fence_signal(r.chain, 1));
	atomic_store(&r.go, true);
	ASSERT_TRUE(wait_total(&r, 52));
	EXPECT_EQ(1, atomic_load(&r.count[2]));
	EXPECT_EQ(1, atomic_load(&r.count[4]));
	/* Detached, it ends on its own. */
	EXPECT_EQ(n0, threads_then(n0));
}

TEST_HARNESS_MAIN
