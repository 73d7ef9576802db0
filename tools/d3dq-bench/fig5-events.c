// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 5: event latency. A thread sleeps in poll() on an
 * eventfd registered with SetEventOnCompletion; timed from the signal to
 * the poller running. Shared fences: signalled by this process or by
 * another open file of the device, as another process would; the kernel
 * writes the eventfd in the signalling call either way. The parts: the
 * signalling call alone (the library's FENCE_SIGNAL, the raw write()),
 * the registration, and GET_PARAM, the floor of a kernel call.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "compat/drm_syncobj_eventfd.h"

enum ev_mode { EV_RAW_EVENTFD, EV_RAW_SYNCOBJ, EV_LIB };

/* One variant: a thread sleeping in poll() on an eventfd. */
struct ev {
	enum ev_mode mode;
	struct d3dq_fence *f;	/* EV_LIB: registered */
	struct d3dq_fence *sig;	/* EV_LIB: signalled (f or a peer's import) */
	uint32_t h;		/* EV_RAW_SYNCOBJ */
	int efd;
	int n;
	double *lat;
	double *call;		/* the signalling call alone */
	double *reg;		/* EV_LIB: the registration call */
	pthread_t thread;
	_Atomic int ready;
	_Atomic int64_t t0;
	sem_t done;
};

static void *ev_main(void *arg)
{
	struct ev *e = arg;
	struct pollfd p = { .fd = e->efd, .events = POLLIN };
	uint64_t v;
	int i;

	for (i = 1; i <= e->n; i++) {
		atomic_store(&e->ready, i);
		while (poll(&p, 1, -1) != 1)
			;
		e->lat[i - 1] = (double)(now_ns() - atomic_load(&e->t0));
		if (read(e->efd, &v, sizeof(v)) != sizeof(v))
			die("read eventfd", errno, __LINE__);
		sem_post(&e->done);
	}
	return NULL;
}

static void ev_start(struct ev *e, enum ev_mode mode, struct d3dq_fence *f,
		     struct d3dq_fence *sig)
{
	memset(e, 0, sizeof(*e));
	e->mode = mode;
	e->f = f;
	e->sig = sig ? sig : f;
	e->n = sz.lat;
	e->lat = samples(sz.lat);
	e->call = samples(sz.lat);
	e->reg = samples(sz.lat);
	e->h = mode == EV_RAW_SYNCOBJ ? raw_syncobj() : 0;
	e->efd = eventfd(0, EFD_CLOEXEC);
	if (e->efd < 0)
		die("eventfd", errno, __LINE__);
	sem_init(&e->done, 0, 0);
	CHECK(pthread_create(&e->thread, NULL, ev_main, e));
}

static void ev_one(struct ev *e, int i)
{
	struct drm_syncobj_eventfd k = { .handle = e->h, .point = i,
					 .fd = e->efd };
	uint64_t one = 1;
	int64_t t0 = now_ns();

	if (e->mode == EV_LIB)
		CHECK(d3dq_fence_set_event_on_completion(e->f, i, e->efd));
	e->reg[i - 1] = (double)(now_ns() - t0);
	if (e->mode == EV_RAW_SYNCOBJ)
		CHECK(xioctl(DRM_IOCTL_SYNCOBJ_EVENTFD, &k));
	while (atomic_load(&e->ready) != i)
		sched_yield();
	/* Let the thread sleep in poll() and the library's worker settle. */
	sleep_ns(SETTLE_NS);
	atomic_store(&e->t0, now_ns());
	switch (e->mode) {
	case EV_RAW_EVENTFD:
		if (write(e->efd, &one, sizeof(one)) != sizeof(one))
			die("write eventfd", errno, __LINE__);
		break;
	case EV_RAW_SYNCOBJ:
		CHECK(raw_signal(e->h, i));
		break;
	case EV_LIB:
		CHECK(d3dq_fence_signal(e->sig, i));
		break;
	}
	/* The poller may have run meanwhile: then this is later. */
	e->call[i - 1] = (double)(now_ns() - atomic_load(&e->t0));
	sem_wait(&e->done);
}

/* Rows of the parts of @e: its signalling call, its registration. */
static int ev_parts(struct ev *e, const char *key, const char *what,
		    int *reg)
{
	char k[64], label[96];
	int call;

	snprintf(k, sizeof(k), "%s_call", key);
	snprintf(label, sizeof(label), "part: %s, the signalling call", what);
	call = add_row(5, k, label, "ns", e->call, e->n);
	e->call = NULL;
	if (e->mode == EV_LIB) {
		snprintf(k, sizeof(k), "%s_register", key);
		snprintf(label, sizeof(label), "part: %s, SetEventOnCompletion",
			 what);
		*reg = add_row(5, k, label, "ns", e->reg, e->n);
	} else {
		free(e->reg);
	}
	e->reg = NULL;
	return call;
}

static int ev_finish(struct ev *e, const char *key, const char *label)
{
	pthread_join(e->thread, NULL);
	sem_destroy(&e->done);
	close(e->efd);
	if (e->h)
		raw_syncobj_destroy(e->h);
	if (e->sig && e->sig != e->f)
		d3dq_fence_destroy(e->sig);
	if (e->f)
		d3dq_fence_destroy(e->f);
	return add_row(5, key, label, "ns", e->lat, e->n);
}

/* The floor of a kernel call, in the same boot: GET_PARAM. */
static int get_param_row(void)
{
	double *v = samples(sz.lat);
	int64_t t0;
	int i;

	for (i = 0; i < sz.lat; i++) {
		t0 = now_ns();
		get_param(DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY);
		v[i] = (double)(now_ns() - t0);
	}
	return add_row(5, "event_get_param", "part: GET_PARAM (a kernel call)",
		       "ns", v, sz.lat);
}

static void fig5(void)
{
	struct d3dq_device *dev = lib_open(), *peer = lib_open();
	struct d3dq_fence *shared = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	struct d3dq_fence *exported = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	struct d3dq_fence *imported;
	struct ev ev[5];
	int nev = 0, i, k, base, l, sh, pr, rs = -1, fd;
	int base_call, l_call, l_reg, reg = -1, gp;

	CHECK(d3dq_fence_export(exported, &fd));
	CHECK(d3dq_fence_import(peer, fd, &imported));
	close(fd);
	ev_start(&ev[nev++], EV_RAW_EVENTFD, NULL, NULL);
	ev_start(&ev[nev++], EV_LIB, lib_fence(dev, 0), NULL);
	ev_start(&ev[nev++], EV_LIB, shared, NULL);
	ev_start(&ev[nev++], EV_LIB, exported, imported);
	if (has_syncobj_eventfd)
		ev_start(&ev[nev++], EV_RAW_SYNCOBJ, NULL, NULL);
	for (i = 1; i <= sz.lat; i++)
		for (k = 0; k < nev; k++)
			ev_one(&ev[(i + k) % nev], i);

	base_call = ev_parts(&ev[0], "event_raw_eventfd", "raw eventfd write()",
			     &reg);
	l_call = ev_parts(&ev[1], "event_lib_local", "library, local",
			  &l_reg);
	gp = get_param_row();
	base = ev_finish(&ev[0], "event_raw_eventfd",
			 "raw eventfd write -> readable");
	l = ev_finish(&ev[1], "event_lib_local", "library, fence not shared");
	sh = ev_finish(&ev[2], "event_lib_shared",
		       "library, shared fence, signalled here");
	pr = ev_finish(&ev[3], "event_lib_shared_peer",
		       "library, shared fence, signalled by a peer");
	if (has_syncobj_eventfd)
		rs = ev_finish(&ev[4], "event_raw_syncobj",
			       "raw SYNCOBJ_EVENTFD + signal");
	d3dq_device_close(peer);
	d3dq_device_close(dev);

	add_cmp(5, l, base, "event: library local / raw eventfd", 1.3);
	add_cmp(5, l_call, base_call,
		"part: FENCE_SIGNAL call / raw eventfd write() call", 0);
	add_cmp(5, l_call, gp, "part: FENCE_SIGNAL call / GET_PARAM", 0);
	add_cmp(5, l_reg, gp, "part: SetEventOnCompletion / GET_PARAM", 0);
	add_cmp(5, sh, base, "event: shared, signalled here / raw eventfd", 0);
	add_cmp(5, pr, base, "event: shared, peer's signal / raw eventfd", 0);
	if (rs >= 0) {
		add_cmp(5, pr, rs,
			"event: shared, peer's signal / raw SYNCOBJ_EVENTFD", 0);
		add_cmp(5, rs, base, "event: raw SYNCOBJ_EVENTFD / raw eventfd",
			0);
	} else {
		add_note(5, "no SYNCOBJ_EVENTFD on this kernel (6.6+): no raw syncobj baseline");
	}
}

static int fig5_plot(FILE *gp)
{
	static const char *const keys[] = {
		"event_raw_eventfd", "event_raw_syncobj", "event_lib_local",
		"event_lib_shared", "event_lib_shared_peer",
	};
	static const char *const titles[] = {
		"raw eventfd", "raw SYNCOBJ_EVENTFD", "library, local",
		"library, shared", "library, shared, peer's signal",
	};

	plot_latency(gp, "5. event latency (signal -> eventfd readable)", keys,
		     titles, 5);
	return 1;
}

BENCH_FIGURE(5, "event latency: signal -> eventfd readable", fig5, fig5_plot)
