// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 1: wait release. A queue held by a wait on a value
 * nobody signalled yet; the CPU signals it; timed until the CPU sees the
 * queue's next job complete. Baselines: (a) a bare syncobj wake, (b) the
 * same chain on raw ioctls. Figure 8 measures the library's variant again
 * next to idle objects (wait_release_*() below).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Baseline (a): a thread blocked in TIMELINE_WAIT, the main thread signals. */
struct waker {
	uint32_t handle;
	int n;
	double *lat;
	pthread_t thread;
	_Atomic int ready;	/* iteration the thread is about to wait for */
	_Atomic int64_t t0;
	sem_t done;
};

static void *waker_main(void *arg)
{
	struct waker *w = arg;
	int i;

	for (i = 1; i <= w->n; i++) {
		atomic_store(&w->ready, i);
		CHECK(raw_wait(w->handle, i));
		w->lat[i - 1] = (double)(now_ns() - atomic_load(&w->t0));
		sem_post(&w->done);
	}
	return NULL;
}

static void wake_one(struct waker *w, int i)
{
	while (atomic_load(&w->ready) != i)
		sched_yield();
	/* Let it reach the kernel and sleep. */
	sleep_ns(SETTLE_NS);
	atomic_store(&w->t0, now_ns());
	CHECK(raw_signal(w->handle, i));
	sem_wait(&w->done);
}

/*
 * Baseline (b): signal W, submit a job (one WRITE64) waiting on W and
 * signalling D, wait for D.
 */
struct chain {
	uint32_t wsync, dsync, q;
	struct raw_bo bo;
};

static double chain_one(struct chain *c, int i)
{
	struct drm_d3dq_cmd_write64 w = raw_write64(&c->bo, 0, i);
	int64_t t0;

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(raw_signal(c->wsync, i));
	CHECK(raw_submit(c->q, c->wsync, i, c->dsync, i, &w, sizeof(w)));
	CHECK(raw_wait(c->dsync, i));
	return (double)(now_ns() - t0);
}

/*
 * Library: queue held by Wait(F, i), then its next job (Execute of one
 * WRITE64) and Signal(D, i); the CPU signals F.
 */
void wait_release_open(struct wait_release *h, struct d3dq_device *dev)
{
	h->dev = dev;
	h->q = lib_queue(dev);
	h->f = lib_fence(dev, 0);
	h->d = lib_fence(dev, 0);
	CHECK(d3dq_buffer_create(dev, 4096, &h->buf));
	h->l = lib_list_write64(dev, h->buf, 0, 1);
}

void wait_release_close(struct wait_release *h)
{
	d3dq_queue_destroy(h->q);
	d3dq_fence_destroy(h->f);
	d3dq_fence_destroy(h->d);
	d3dq_cmdlist_destroy(h->l);
	d3dq_buffer_destroy(h->buf);
}

double wait_release_one(struct wait_release *h, int i)
{
	int64_t t0;

	CHECK(d3dq_queue_wait(h->q, h->f, i));
	CHECK(d3dq_queue_execute(h->q, &h->l, 1));
	CHECK(d3dq_queue_signal(h->q, h->d, i));
	sleep_ns(SETTLE_NS);
	if (d3dq_fence_get_completed_value(h->d) >= (uint64_t)i)
		die("queue not held", EINVAL, __LINE__);
	t0 = now_ns();
	CHECK(d3dq_fence_signal(h->f, i));
	CHECK(d3dq_fence_wait(h->d, i, D3DQ_TIMEOUT_INFINITE));
	return (double)(now_ns() - t0);
}

static void chain_close(struct chain *c)
{
	raw_queue_destroy(c->q);
	raw_syncobj_destroy(c->wsync);
	raw_syncobj_destroy(c->dsync);
	raw_bo_destroy(c->bo);
}

/*
 * (b) and the library once more with the module parameter direct_submit
 * off, so that every job goes through the scheduler: the hop direct
 * submission saves, measured in the same run (variants 3 and 4), with
 * the parameter as it was (@on) for the other samples. Only where the
 * parameter can be set (root).
 */
static double sched_one(struct chain *c, struct wait_release *h, int i,
			bool on)
{
	double t;

	CHECK(set_direct_submit(false));
	t = c ? chain_one(c, i) : wait_release_one(h, i);
	CHECK(set_direct_submit(on));
	return t;
}

static void fig1(void)
{
	int n = sz.lat, i, k, a, b, l, c2, l2, nv;
	struct waker w = { .handle = raw_syncobj(), .n = n, .lat = samples(n) };
	struct chain c = { raw_syncobj(), raw_syncobj(), raw_queue(),
			   raw_bo_create() };
	struct chain cs = { raw_syncobj(), raw_syncobj(), raw_queue(),
			    raw_bo_create() };
	struct wait_release h, hs;
	double *lb = samples(n), *ll = samples(n);
	double *lcs = samples(n), *lls = samples(n);
	int on = get_direct_submit();
	bool sw = on >= 0 && set_direct_submit(on) == 0;

	wait_release_open(&h, lib_open());
	wait_release_open(&hs, h.dev);
	sem_init(&w.done, 0, 0);
	CHECK(pthread_create(&w.thread, NULL, waker_main, &w));
	nv = sw ? 5 : 3;
	for (i = 1; i <= n; i++)
		for (k = 0; k < nv; k++)
			switch ((i + k) % nv) {
			case 0:
				wake_one(&w, i);
				break;
			case 1:
				lb[i - 1] = chain_one(&c, i);
				break;
			case 2:
				ll[i - 1] = wait_release_one(&h, i);
				break;
			case 3:
				lcs[i - 1] = sched_one(&cs, NULL, i, on);
				break;
			case 4:
				lls[i - 1] = sched_one(NULL, &hs, i, on);
				break;
			}
	pthread_join(w.thread, NULL);
	sem_destroy(&w.done);
	raw_syncobj_destroy(w.handle);
	chain_close(&c);
	chain_close(&cs);
	wait_release_close(&h);
	wait_release_close(&hs);
	d3dq_device_close(h.dev);

	a = add_row(1, "wait_raw_wake", "(a) raw syncobj wake", "ns", w.lat, n);
	b = add_row(1, "wait_raw_chain", "(b) raw ioctl chain", "ns", lb, n);
	l = add_row(1, "wait_lib", "library: Wait, Signal; CPU Signal", "ns",
		    ll, n);
	add_cmp(1, l, b, "wait release: library / (b) raw chain", 1.2);
	/* Issue 15 item 2: the driver's chain, one wake-up less per job. */
	add_cmp(1, l, a, "wait release: library / (a) raw wake", 2.2);
	add_cmp(1, b, a, "driver's chain: (b) raw chain / (a) raw wake", 2.0);
	if (!sw) {
		add_note(1, "direct_submit not writable: no scheduler-only rows");
		free(lcs);
		free(lls);
		return;
	}
	c2 = add_row(1, "wait_raw_chain_sched",
		     "(b) with direct_submit=0 (scheduler)", "ns", lcs, n);
	l2 = add_row(1, "wait_lib_sched",
		     "library with direct_submit=0 (scheduler)", "ns", lls, n);
	add_cmp(1, c2, a, "through the scheduler: (b) / (a) raw wake", 0);
	add_cmp(1, l2, c2, "through the scheduler: library / (b)", 0);
	add_cmp(1, b, c2, "direct submission: (b) / (b) through the scheduler",
		0);
	add_note(1, "rows with direct_submit=0: the module parameter off for that sample only, variants interleaved; the others with it %s",
		 on ? "on" : "off, as it was");
}

static int fig1_plot(FILE *gp)
{
	static const char *const keys[] = {
		"wait_raw_wake", "wait_raw_chain", "wait_lib",
		"wait_raw_chain_sched", "wait_lib_sched",
	};
	static const char *const titles[] = {
		"(a) raw syncobj wake", "(b) raw ioctl chain", "library",
		"(b), scheduler only", "library, scheduler only",
	};

	plot_latency(gp, "1. wait release (CPU signal -> next job done)", keys,
		     titles, 5);
	return 1;
}

BENCH_FIGURE(1, "wait release: CPU signal -> held queue's next job done",
	     fig1, fig1_plot)

