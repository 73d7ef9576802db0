// SPDX-License-Identifier: GPL-2.0
/*
 * Devices created with a signal-event callback (d3d12_d3dq_create_device,
 * <d3dq/d3d12_d3dq.h>): an event HANDLE is the program's token, never
 * checked as an eventfd (R19's exception), and firing it calls the
 * callback once (R10), on the library's dispatcher thread: from CPU and
 * queue signals, for one fence and for several (ALL, ANY), when fences
 * are released (R14: before the device's last Release returns), with a
 * callback that calls the library itself or blocks, and for the same
 * registration made again after a crossing and a rewind that the
 * dispatcher has not called yet. The thread exists
 * only while a callback device does. A plain device still refuses what
 * is not an eventfd. d3d12.h and d3d12_d3dq.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/d3d12_util.h"
#include <d3dq/d3d12_d3dq.h>

#define T(n) ((HANDLE)(uintptr_t)(n))
#define MAXT 256

/* Tokens the callbacks re-enter the library with, see callback(). */
#define T_SIGNAL_SELF	100	/* signals fence "self" to 2, reads it */
#define T_REGISTER	101	/* registers T_CHAINED on "self", reached */
#define T_CHAINED	102
#define T_BLOCK		103	/* blocks until fence "gate" reaches 1 */
#define T_BLOCKING	104	/* counted when T_BLOCK's call starts */
#define T_FLUSH		255

struct rec {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int count[MAXT];	/* small tokens */
	unsigned int other;		/* pointer tokens */
	void *last_other;
	pthread_t thread;		/* the one the callbacks run on */
	bool threads_differ;
	ID3D12Fence *self, *gate;	/* for the re-entering tokens */
	UINT64 read;			/* what T_SIGNAL_SELF read */
	HRESULT hr;			/* what the re-entering calls returned */
};

static HRESULT callback(HANDLE event, void *context)
{
	struct rec *r = context;
	uintptr_t t = (uintptr_t)event;
	HRESULT hr = S_OK;

	/* Calls into the library, as a program's callback may. */
	if (t == T_SIGNAL_SELF) {
		hr = ID3D12Fence_Signal(r->self, 2);
		r->read = ID3D12Fence_GetCompletedValue(r->self);
	} else if (t == T_REGISTER) {
		hr = ID3D12Fence_SetEventOnCompletion(r->self, 1, T(T_CHAINED));
	} else if (t == T_BLOCK) {
		pthread_mutex_lock(&r->lock);
		r->count[T_BLOCKING]++;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		hr = ID3D12Fence_SetEventOnCompletion(r->gate, 1, NULL);
	}
	pthread_mutex_lock(&r->lock);
	if (FAILED(hr))
		r->hr = hr;
	if (t < MAXT) {
		r->count[t]++;
	} else {
		r->other++;
		r->last_other = event;
	}
	if (!r->thread)
		r->thread = pthread_self();
	else if (!pthread_equal(r->thread, pthread_self()))
		r->threads_differ = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return S_OK;
}

static void rec_init(struct rec *r)
{
	pthread_condattr_t a;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &a);
	pthread_condattr_destroy(&a);
}

static unsigned int count(struct rec *r, unsigned int t)
{
	unsigned int n;

	pthread_mutex_lock(&r->lock);
	n = r->count[t];
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* Wait (up to 20 s: counts, not times, are asserted) for token t's nth call. */
static bool wait_count(struct rec *r, unsigned int t, unsigned int n)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 20;
	pthread_mutex_lock(&r->lock);
	while (r->count[t] < n &&
	       !pthread_cond_timedwait(&r->cond, &r->lock, &ts))
		;
	ok = r->count[t] >= n;
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static HRESULT create(struct rec *r, ID3D12Device1 **dev)
{
	struct d3d12_d3dq_device_create_info info = {
		.size = sizeof(info),
		.minimum_feature_level = D3D_FEATURE_LEVEL_11_0,
		.pfn_signal_event = callback,
		.context = r,
	};

	*dev = NULL;
	return d3d12_d3dq_create_device(&info, &IID_ID3D12Device1,
					(void **)dev);
}

/*
 * The number of threads once it is @want, or after 10 s: a thread the
 * library joined may still be listed for a moment (the kernel wakes the
 * joiner before it removes the thread).
 */
static int threads_then(int want)
{
	int i, n = u_threads();

	for (i = 0; i < 1000 && n != want; i++) {
		usleep(10000);
		n = u_threads();
	}
	return n;
}

FIXTURE(cb) {
	struct rec r;
	ID3D12Device1 *dev;
	ID3D12Fence *done;	/* at 1: T_FLUSH registered on it fires */
	unsigned int flushes;
};

FIXTURE_SETUP(cb)
{
	ID3D12Device1 *plain = u_device();

	if (!plain)
		SKIP(return, "no d3dq device");
	U_RELEASE(plain);
	rec_init(&self->r);
	ASSERT_EQ(S_OK, create(&self->r, &self->dev));
	self->done = u_fence(self->dev, 1);
	ASSERT_NE(NULL, self->done);
}

FIXTURE_TEARDOWN(cb)
{
	U_RELEASE(self->done);
	U_RELEASE(self->dev);
}

/*
 * Every callback of events fired before this call has been called: the
 * dispatcher calls them in the order they fired, and T_FLUSH fires now.
 */
static bool flush(struct __test_metadata *_metadata, FIXTURE_DATA(cb) *self)
{
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->done, 1,
							 T(T_FLUSH)));
	return wait_count(&self->r, T_FLUSH, ++self->flushes);
}

/* Tokens that are no eventfd, on one fence, signalled by the CPU. */
TEST_F(cb, one_fence_cpu_signals)
{
	ID3D12Fence *f = u_fence(self->dev, 0);
	int marker;

	ASSERT_NE(NULL, f);
	/* (HANDLE)1 is stdout, refused on a plain device (R19). */
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 5, T(1)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 3, T(2)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 10,
							 (HANDLE)&marker));
	/* The same token and value twice: once per crossing (R10). */
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 8, T(7)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 8, T(7)));
	/* Reached already: fires at once. */
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 0, T(3)));
	ASSERT_TRUE(wait_count(&self->r, 3, 1));
	EXPECT_EQ(0, count(&self->r, 1) + count(&self->r, 2));

	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 4));
	ASSERT_TRUE(wait_count(&self->r, 2, 1));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(0, count(&self->r, 1));

	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 9));
	ASSERT_TRUE(wait_count(&self->r, 1, 1));
	ASSERT_TRUE(wait_count(&self->r, 7, 1));
	/* A rewind fires nothing; crossing again fires nothing either. */
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 0));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 9));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(1, count(&self->r, 1));
	EXPECT_EQ(1, count(&self->r, 2));
	EXPECT_EQ(1, count(&self->r, 3));
	EXPECT_EQ(1, count(&self->r, 7));
	EXPECT_EQ(0, self->r.other);

	/* Releasing the fence fires what is left (R14). */
	U_RELEASE(f);
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(1, self->r.other);
	EXPECT_EQ((void *)&marker, self->r.last_other);
	EXPECT_FALSE(self->r.threads_differ);
	EXPECT_FALSE(pthread_equal(self->r.thread, pthread_self()));
}

/* The same, brought by queue signals, also one held behind a Wait. */
TEST_F(cb, one_fence_queue_signals)
{
	ID3D12CommandQueue *q = u_queue(self->dev,
					D3D12_COMMAND_LIST_TYPE_DIRECT);
	ID3D12Fence *f = u_fence(self->dev, 0), *g = u_fence(self->dev, 0);

	ASSERT_TRUE(q && f && g);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 1, T(1)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 2, T(2)));
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 1));
	ASSERT_TRUE(wait_count(&self->r, 1, 1));

	EXPECT_EQ(S_OK, ID3D12CommandQueue_Wait(q, g, 1));
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 2));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(0, count(&self->r, 2));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(g, 1));
	ASSERT_TRUE(wait_count(&self->r, 2, 1));
	EXPECT_EQ(2, ID3D12Fence_GetCompletedValue(f));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(1, count(&self->r, 1));
	EXPECT_EQ(1, count(&self->r, 2));
	U_RELEASE(g);
	U_RELEASE(f);
	U_RELEASE(q);
}

/* Several fences: ALL fires once all are reached, ANY at the first. */
TEST_F(cb, several_fences)
{
	ID3D12CommandQueue *q = u_queue(self->dev,
					D3D12_COMMAND_LIST_TYPE_COPY);
	ID3D12Fence *a = u_fence(self->dev, 0), *b = u_fence(self->dev, 0);
	ID3D12Fence *fs[2];
	UINT64 one[2] = { 1, 1 }, two[2] = { 2, 2 }, zero[2] = { 0, 0 };

	ASSERT_TRUE(q && a && b);
	fs[0] = a;
	fs[1] = b;
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, one, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, T(11)));
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, two, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY, T(12)));
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, two, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, T(13)));
	/* Already reached, and one fence (the single-fence call). */
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, zero, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, T(14)));
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, one, 1,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY, T(15)));
	ASSERT_TRUE(wait_count(&self->r, 14, 1));

	EXPECT_EQ(S_OK, ID3D12Fence_Signal(a, 1));
	ASSERT_TRUE(wait_count(&self->r, 15, 1));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(0, count(&self->r, 11));
	/* b by a queue. */
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(q, b, 1));
	ASSERT_TRUE(wait_count(&self->r, 11, 1));
	EXPECT_EQ(0, count(&self->r, 12));
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(q, b, 2));
	ASSERT_TRUE(wait_count(&self->r, 12, 1));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(0, count(&self->r, 13));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(a, 2));
	ASSERT_TRUE(wait_count(&self->r, 13, 1));
	/* Nothing fires twice. */
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(a, 3));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(b, 3));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(1, count(&self->r, 11));
	EXPECT_EQ(1, count(&self->r, 12));
	EXPECT_EQ(1, count(&self->r, 13));
	EXPECT_EQ(1, count(&self->r, 14));
	EXPECT_EQ(1, count(&self->r, 15));
	U_RELEASE(b);
	U_RELEASE(a);
	U_RELEASE(q);
}

/*
 * A callback that calls the library: signals the fence whose signal
 * fired it and reads it, registers an event of its own. Called under
 * the fence's lock, it would deadlock.
 */
TEST_F(cb, callback_reenters)
{
	self->r.self = u_fence(self->dev, 0);
	ASSERT_NE(NULL, self->r.self);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->r.self, 1,
							 T(T_SIGNAL_SELF)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->r.self, 1,
							 T(T_REGISTER)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(self->r.self, 2,
							 T(5)));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(self->r.self, 1));
	ASSERT_TRUE(wait_count(&self->r, T_SIGNAL_SELF, 1));
	ASSERT_TRUE(wait_count(&self->r, T_CHAINED, 1));
	/* The callback's own signal fired T(5). */
	ASSERT_TRUE(wait_count(&self->r, 5, 1));
	EXPECT_EQ(2, self->r.read);
	EXPECT_EQ(HR(S_OK), HR(self->r.hr));
	EXPECT_EQ(2, ID3D12Fence_GetCompletedValue(self->r.self));
	U_RELEASE(self->r.self);
}

/*
 * A callback that blocks until the program signals another fence after
 * its own Signal returned: the Signal that fired it did not run it.
 */
TEST_F(cb, callback_blocks)
{
	ID3D12Fence *f = u_fence(self->dev, 0);

	self->r.gate = u_fence(self->dev, 0);
	ASSERT_TRUE(f && self->r.gate);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 1, T(T_BLOCK)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 2, T(6)));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 1));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 2));
	EXPECT_EQ(0, count(&self->r, T_BLOCK));
	EXPECT_EQ(0, count(&self->r, 6));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(self->r.gate, 1));
	ASSERT_TRUE(wait_count(&self->r, T_BLOCK, 1));
	/* Called in order, after the one that blocked. */
	ASSERT_TRUE(wait_count(&self->r, 6, 1));
	EXPECT_EQ(HR(S_OK), HR(self->r.hr));
	U_RELEASE(self->r.gate);
	U_RELEASE(f);
}

/*
 * A crossing, a rewind, the same SetEventOnCompletion again and a second
 * crossing, while the dispatcher is held in a callback (T_BLOCK, seen
 * started before f's registrations are made, so it has called neither):
 * two calls (R10, issue 39). The old library took the second
 * registration for the first, still listed, and called the token once.
 */
TEST_F(cb, reregistered_after_rewind)
{
	ID3D12Fence *f = u_fence(self->dev, 0), *blk = u_fence(self->dev, 1);

	self->r.gate = u_fence(self->dev, 0);
	ASSERT_TRUE(f && blk && self->r.gate);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(blk, 1, T(T_BLOCK)));
	ASSERT_TRUE(wait_count(&self->r, T_BLOCKING, 1));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 8, T(8)));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 8));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 0));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 8, T(8)));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 8));
	EXPECT_EQ(0, count(&self->r, 8));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(self->r.gate, 1));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(1, count(&self->r, T_BLOCK));
	EXPECT_EQ(2, count(&self->r, 8));
	U_RELEASE(self->r.gate);
	U_RELEASE(blk);
	U_RELEASE(f);
}

/*
 * NULL still blocks until the value is reached (R11): the signal comes
 * once the waiting thread sleeps in the driver.
 */
struct signal_later {
	ID3D12Fence *f;
	pid_t waiter;
	bool asleep;
};

static void *signal_later(void *arg)
{
	struct signal_later *s = arg;

	s->asleep = task_asleep_in_driver(s->waiter);
	ID3D12Fence_Signal(s->f, 7);
	return NULL;
}

TEST_F(cb, null_event_blocks)
{
	ID3D12Fence *f = u_fence(self->dev, 0);
	ID3D12Fence *fs[1];
	UINT64 v = 7;
	struct signal_later s = { f, task_self(), false };
	pthread_t t;

	ASSERT_NE(NULL, f);
	fs[0] = f;
	ASSERT_EQ(0, pthread_create(&t, NULL, signal_later, &s));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 7, NULL));
	EXPECT_EQ(7, ID3D12Fence_GetCompletedValue(f));
	pthread_join(t, NULL);
	EXPECT_TRUE(s.asleep);
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			self->dev, fs, &v, 1,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, NULL));
	ASSERT_TRUE(flush(_metadata, self));
	EXPECT_EQ(0, self->r.other);
	U_RELEASE(f);
}

/*
 * Releasing the device with registrations outstanding: releasing the
 * fences fires them (R14), and every callback has been called when the
 * device's last Release returns.
 */
TEST(release_with_pending)
{
	ID3D12Device1 *plain = u_device(), *dev;
	ID3D12CommandQueue *q;
	ID3D12Fence *f, *g, *fs[2];
	UINT64 vs[2] = { 50, 60 };
	struct rec r;
	int i;

	if (!plain)
		SKIP(return, "no d3dq device");
	U_RELEASE(plain);
	rec_init(&r);
	ASSERT_EQ(S_OK, create(&r, &dev));
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(dev, 0);
	g = u_fence(dev, 0);
	ASSERT_TRUE(q && f && g);
	fs[0] = f;
	fs[1] = g;
	for (i = 1; i <= 40; i++)
		EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 100 + i,
								 T(i)));
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL,
			T(41)));
	EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
			dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY,
			T(42)));
	/* A queue wait that never ends, and a signal held behind it. */
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Wait(q, g, 1000));
	EXPECT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 200));
	U_RELEASE(q);
	U_RELEASE(f);
	U_RELEASE(g);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
	/* No waiting: the last Release delivered them. */
	for (i = 1; i <= 42; i++)
		EXPECT_EQ(1, r.count[i]) TH_LOG("token %d", i);
}

/*
 * The dispatcher thread exists while a callback device does, one for
 * all of them, and is gone after the last one's last Release (joined:
 * its task only lingers until the kernel removes it).
 */
TEST(one_thread_while_needed)
{
	ID3D12Device1 *plain = u_device(), *a, *b;
	ID3D12Fence *f;
	struct rec r;
	int n0;

	if (!plain)
		SKIP(return, "no d3dq device");
	rec_init(&r);
	n0 = u_threads();
	ASSERT_LT(0, n0);
	ASSERT_EQ(S_OK, create(&r, &a));
	EXPECT_EQ(n0 + 1, u_threads());
	ASSERT_EQ(S_OK, create(&r, &b));
	EXPECT_EQ(n0 + 1, u_threads());
	EXPECT_NE((void *)a, (void *)b);
	EXPECT_NE((void *)a, (void *)plain);

	f = u_fence(a, 0);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 1, T(1)));
	EXPECT_EQ(0, ID3D12Device1_Release(b));
	EXPECT_EQ(n0 + 1, u_threads());
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 1));
	EXPECT_TRUE(wait_count(&r, 1, 1));
	U_RELEASE(f);
	EXPECT_EQ(0, ID3D12Device1_Release(a));
	EXPECT_EQ(n0, threads_then(n0));

	/* And again, from nothing. */
	ASSERT_EQ(S_OK, create(&r, &a));
	EXPECT_EQ(n0 + 1, u_threads());
	EXPECT_EQ(0, ID3D12Device1_Release(a));
	EXPECT_EQ(n0, threads_then(n0));
	U_RELEASE(plain);
}

/* What d3d12_d3dq_create_device accepts. */
TEST(create_arguments)
{
	ID3D12Device1 *plain = u_device(), *dev = (void *)1;
	struct {
		struct d3d12_d3dq_device_create_info info;
		uint64_t later;
	} big = { { 0 }, 0 };
	struct d3d12_d3dq_device_create_info info = {
		.size = sizeof(info),
		.minimum_feature_level = D3D_FEATURE_LEVEL_11_0,
		.pfn_signal_event = callback,
	};
	struct rec r;

	if (!plain)
		SKIP(return, "no d3dq device");
	rec_init(&r);
	info.context = &r;
	EXPECT_EQ(HR(E_INVALIDARG), HR(d3d12_d3dq_create_device(
			NULL, &IID_ID3D12Device1, (void **)&dev)));
	EXPECT_EQ(NULL, dev);
	info.size = sizeof(info) - 1;
	EXPECT_EQ(HR(E_INVALIDARG), HR(d3d12_d3dq_create_device(
			&info, &IID_ID3D12Device1, (void **)&dev)));
	info.size = sizeof(info);
	info.pfn_signal_event = NULL;
	EXPECT_EQ(HR(E_INVALIDARG), HR(d3d12_d3dq_create_device(
			&info, &IID_ID3D12Device1, (void **)&dev)));
	info.pfn_signal_event = callback;
	info.minimum_feature_level = D3D_FEATURE_LEVEL_12_2;
	EXPECT_EQ(HR(DXGI_ERROR_UNSUPPORTED), HR(d3d12_d3dq_create_device(
			&info, &IID_ID3D12Device1, (void **)&dev)));
	info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
	EXPECT_EQ(HR(E_INVALIDARG), HR(d3d12_d3dq_create_device(
			&info, NULL, (void **)&dev)));
	EXPECT_EQ(HR(E_NOINTERFACE), HR(d3d12_d3dq_create_device(
			&info, &IID_ID3D12Fence, (void **)&dev)));
	EXPECT_EQ(NULL, dev);
	EXPECT_EQ(HR(S_FALSE), HR(d3d12_d3dq_create_device(
			&info, NULL, NULL)));
	/* A later layout: its unknown members must be zero. */
	big.info = info;
	big.info.size = sizeof(big);
	big.later = 1;
	EXPECT_EQ(HR(E_INVALIDARG), HR(d3d12_d3dq_create_device(
			&big.info, &IID_ID3D12Device1, (void **)&dev)));
	big.later = 0;
	EXPECT_EQ(HR(S_OK), HR(d3d12_d3dq_create_device(
			&big.info, &IID_ID3D12Device1, (void **)&dev)));
	/* Not the process's device, which D3D12CreateDevice returns. */
	EXPECT_NE((void *)plain, (void *)dev);
	EXPECT_EQ(1, u_refs(dev));
	U_RELEASE(dev);
	EXPECT_EQ(1, u_refs(plain));
	U_RELEASE(plain);
}

/*
 * A plain device still refuses what is not an eventfd (R19), and the
 * callback device takes the same values as tokens.
 */
TEST_F(cb, plain_device_refuses_tokens)
{
	ID3D12Device1 *plain = u_device();
	ID3D12Fence *pf, *cf, *fs[1];
	UINT64 v = 1;
	int p[2], i;
	HANDLE hs[3];

	ASSERT_NE(NULL, plain);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	hs[0] = T(1);
	hs[1] = (HANDLE)&v;
	hs[2] = u_handle(p[1]);
	pf = u_fence(plain, 0);
	cf = u_fence(self->dev, 0);
	ASSERT_TRUE(pf && cf);
	for (i = 0; i < 3; i++) {
		fs[0] = pf;
		EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Fence_SetEventOnCompletion(
				pf, 1, hs[i]))) TH_LOG("handle %d", i);
		EXPECT_EQ(HR(E_INVALIDARG),
			  HR(ID3D12Device1_SetEventOnMultipleFenceCompletion(
				plain, fs, &v, 1,
				D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, hs[i])));
		fs[0] = cf;
		EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(cf, 1, hs[i]));
		EXPECT_EQ(S_OK, ID3D12Device1_SetEventOnMultipleFenceCompletion(
				self->dev, fs, &v, 1,
				D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, hs[i]));
	}
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(cf, 1));
	ASSERT_TRUE(flush(_metadata, self));
	/* Once per token and crossing: 1, &v and the pipe's number. */
	EXPECT_EQ(1, count(&self->r, 1));
	ASSERT_LT(p[1], MAXT);
	EXPECT_EQ(1, count(&self->r, (unsigned int)p[1]));
	EXPECT_EQ(1, self->r.other);
	EXPECT_EQ(0, ID3D12Fence_Signal(pf, 1));
	U_RELEASE(cf);
	U_RELEASE(pf);
	U_RELEASE(plain);
	close(p[0]);
	close(p[1]);
}

TEST_HARNESS_MAIN
