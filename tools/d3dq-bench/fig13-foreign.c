// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 13: another driver's fence signals, a CPU waiter on a
 * d3dq fence wakes (issue 41, item 5). The other driver is vgem: a fence
 * attached to a dumb buffer (VGEM_FENCE_ATTACH) whose dma-buf gives it as
 * a sync_file (DMA_BUF_IOCTL_EXPORT_SYNC_FILE); VGEM_FENCE_SIGNAL ends
 * "the other GPU's work". One sample: from just before VGEM_FENCE_SIGNAL
 * until the waiting thread runs again. Variants alternate:
 *
 *   (a) raw: the thread is blocked in poll() on the sync_file itself;
 *   (b) a userspace fence thread, what a layer does without the driver's
 *       help: a second thread blocked in poll() on the sync_file calls
 *       d3dq_fence_signal(F, i); the thread is blocked in
 *       d3dq_fence_wait(F, i);
 *   library: d3dq_fence_signal_on_sync_file(F, i, sync_file) before; the
 *       thread is blocked in d3dq_fence_wait(F, i);
 *   queue: a queue held by Wait(F, i) (set the same way), then a job
 *       (one WRITE64) and Signal(D, i); the thread is blocked in
 *       d3dq_fence_wait(D, i). For information: no target.
 *   queue, (b): the same queue released by (b)'s fence thread.
 *
 * vgem is a module of the Debian kernels; the VM carries it unloaded as
 * /modules/extra/vgem.ko, which this figure loads (and unloads after) if
 * no vgem device is there. Without it the figure is skipped with a note.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>


#include "bench.h"
#include "../util/vgem.h"

enum { RAW, THREAD, LIB, QUEUE, QTHREAD, NVAR };

/* One piece of "other GPU work": a buffer with a pending write fence. */
struct vwork {
	uint32_t bo, fence;
	int sf;			/* its sync_file */
};

static void vwork_new(int vfd, struct vwork *w)
{
	int dmabuf, ret;

	ret = vgem_bo(vfd, &w->bo);
	if (ret)
		die("vgem CREATE_DUMB", -ret, __LINE__);
	ret = vgem_attach_write(vfd, w->bo, &w->fence);
	if (ret)
		die("VGEM_FENCE_ATTACH", -ret, __LINE__);
	if (drmPrimeHandleToFD(vfd, w->bo, O_CLOEXEC | O_RDWR, &dmabuf))
		die("vgem PRIME export", errno, __LINE__);
	w->sf = dmabuf_read_sync_file(dmabuf);
	if (w->sf < 0)
		die("DMA_BUF_IOCTL_EXPORT_SYNC_FILE", -w->sf, __LINE__);
	close(dmabuf);
}

static void vwork_free(int vfd, struct vwork *w)
{
	struct drm_gem_close c = { .handle = w->bo };

	if (w->sf >= 0)
		close(w->sf);
	drmIoctl(vfd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* What the main thread and the two others share for one sample. */
struct fig13 {
	int vfd;
	struct d3dq_fence *f, *d;	/* library and queue variants */
	struct d3dq_queue *q;
	struct d3dq_cmdlist *l;
	struct d3dq_buffer *buf;
	pthread_t waiter, relay;
	sem_t go, done, relay_go;
	_Atomic int ready, relay_ready;
	_Atomic int64_t t0;
	/* this sample */
	int var;
	uint64_t value;
	int sf;
	double lat;
	bool stop;
};

static void poll_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, -1) != 1)
		;
}

/* The waiting thread: blocks as the sample's variant says. */
static void *fig13_waiter(void *arg)
{
	struct fig13 *s = arg;
	int i = 0;

	for (;;) {
		sem_wait(&s->go);
		if (s->stop)
			return NULL;
		atomic_store(&s->ready, ++i);
		switch (s->var) {
		case RAW:
			poll_in(s->sf);
			break;
		case THREAD:
		case LIB:
			CHECK(d3dq_fence_wait(s->f, s->value,
					      D3DQ_TIMEOUT_INFINITE));
			break;
		case QUEUE:
		case QTHREAD:
			CHECK(d3dq_fence_wait(s->d, s->value,
					      D3DQ_TIMEOUT_INFINITE));
			break;
		}
		s->lat = (double)(now_ns() - atomic_load(&s->t0));
		sem_post(&s->done);
	}
}

/* Variant (b)'s fence thread: sync_file readable -> d3dq_fence_signal(). */
static void *fig13_relay(void *arg)
{
	struct fig13 *s = arg;
	int i = 0;

	for (;;) {
		sem_wait(&s->relay_go);
		if (s->stop)
			return NULL;
		atomic_store(&s->relay_ready, ++i);
		poll_in(s->sf);
		CHECK(d3dq_fence_signal(s->f, s->value));
	}
}

static double fig13_one(struct fig13 *s, int var, uint64_t value)
{
	struct vwork w = { .sf = -1 };
	int r = atomic_load(&s->ready), rr = atomic_load(&s->relay_ready), err;

	vwork_new(s->vfd, &w);
	s->var = var;
	s->value = value;
	s->sf = w.sf;
	switch (var) {
	case LIB:
		CHECK(d3dq_fence_signal_on_sync_file(s->f, value, w.sf));
		break;
	case QUEUE:
	case QTHREAD:
		CHECK(d3dq_queue_wait(s->q, s->f, value));
		CHECK(d3dq_queue_execute(s->q, &s->l, 1));
		CHECK(d3dq_queue_signal(s->q, s->d, value));
		if (var == QUEUE)
			CHECK(d3dq_fence_signal_on_sync_file(s->f, value,
							     w.sf));
		break;
	}
	if (var == THREAD || var == QTHREAD) {
		sem_post(&s->relay_go);
		while (atomic_load(&s->relay_ready) == rr)
			sched_yield();
	}
	sem_post(&s->go);
	while (atomic_load(&s->ready) == r)
		sched_yield();
	/* The waiter (and (b)'s fence thread) asleep in the kernel. */
	sleep_ns(SETTLE_NS);
	atomic_store(&s->t0, now_ns());
	err = vgem_signal(s->vfd, w.fence);
	if (err)
		die("VGEM_FENCE_SIGNAL", -err, __LINE__);
	sem_wait(&s->done);
	vwork_free(s->vfd, &w);
	return s->lat;
}

static void fig13(void)
{
	static const char *const keys[NVAR] = {
		"foreign_raw_poll", "foreign_fence_thread", "foreign_lib",
		"foreign_queue", "foreign_queue_thread",
	};
	static const char *const labels[NVAR] = {
		"(a) raw: poll() on the sync_file",
		"(b) fence thread: poll(), then d3dq_fence_signal",
		"library: signal_on_sync_file; fence_wait",
		"queue Wait released, its job's Signal seen",
		"queue Wait released by (b)'s fence thread",
	};
	struct d3dq_device *dev;
	struct fig13 s;
	bool loaded = false;
	char why[128];
	double *lat[NVAR];
	int n = sz.lat, i, k, var, row[NVAR];

	memset(&s, 0, sizeof(s));
	s.vfd = vgem_open(&loaded);
	if (s.vfd < 0) {
		snprintf(why, sizeof(why), access(VGEM_KO, R_OK) ?
			 "no vgem device and no " VGEM_KO :
			 loaded ? "vgem loaded but no /dev/dri/card* of it" :
			 "insmod " VGEM_KO " failed");
		bench_skip(13, "figure 13 not measured: %s (the other driver is vgem)",
			   why);
		return;
	}
	dev = lib_open();
	if (d3dq_version() < D3DQ_MAKE_VERSION(0, 4, 0) ||
	    get_param(DRM_D3DQ_PARAM_UAPI_VERSION) < ((1u << 16) | 11)) {
		bench_skip(13, "figure 13 not measured: FENCE_SIGNAL_ON needs uapi 1.11 and libd3dq 0.4");
		d3dq_device_close(dev);
		close(s.vfd);
		return;
	}
	s.f = lib_fence(dev, 0);
	s.d = lib_fence(dev, 0);
	s.q = lib_queue(dev);
	CHECK(d3dq_buffer_create(dev, 4096, &s.buf));
	s.l = lib_list_write64(dev, s.buf, 0, 1);
	sem_init(&s.go, 0, 0);
	sem_init(&s.done, 0, 0);
	sem_init(&s.relay_go, 0, 0);
	CHECK(pthread_create(&s.waiter, NULL, fig13_waiter, &s));
	CHECK(pthread_create(&s.relay, NULL, fig13_relay, &s));
	for (k = 0; k < NVAR; k++)
		lat[k] = samples(n);

	/* F and D only go up: one value per sample of any variant. */
	for (i = 0; i < n; i++)
		for (k = 0; k < NVAR; k++) {
			var = (i + k) % NVAR;
			lat[var][i] = fig13_one(&s, var,
						(uint64_t)i * NVAR + k + 1);
		}

	s.stop = true;
	sem_post(&s.go);
	sem_post(&s.relay_go);
	pthread_join(s.waiter, NULL);
	pthread_join(s.relay, NULL);
	sem_destroy(&s.go);
	sem_destroy(&s.done);
	sem_destroy(&s.relay_go);
	d3dq_queue_destroy(s.q);
	d3dq_cmdlist_destroy(s.l);
	d3dq_buffer_destroy(s.buf);
	d3dq_fence_destroy(s.f);
	d3dq_fence_destroy(s.d);
	d3dq_device_close(dev);
	close(s.vfd);
	if (loaded && vgem_unload())
		add_note(13, "rmmod vgem failed: it stays loaded");

	for (k = 0; k < NVAR; k++)
		row[k] = add_row(13, keys[k], labels[k], "ns", lat[k], n);
	add_cmp(13, row[LIB], row[RAW],
		"foreign signal -> waiter: library / (a) raw poll", 1.3);
	add_cmp(13, row[LIB], row[THREAD],
		"foreign signal: library / (b) fence thread", 0);
	add_cmp(13, row[QUEUE], row[RAW],
		"foreign signal -> queue's job seen / (a) raw poll", 0);
	add_cmp(13, row[QUEUE], row[QTHREAD],
		"queue's job seen: library / (b) fence thread", 0);
	add_note(13, "other driver: vgem%s; timed from just before VGEM_FENCE_SIGNAL until the waiting thread runs",
		 loaded ? " (loaded for the figure)" : "");
}

static int fig13_plot(FILE *gp)
{
	static const char *const keys[] = {
		"foreign_raw_poll", "foreign_fence_thread", "foreign_lib",
		"foreign_queue", "foreign_queue_thread",
	};
	static const char *const titles[] = {
		"(a) raw poll() on the sync_file", "(b) userspace fence thread",
		"library: signal_on_sync_file", "queue Wait -> job seen",
		"queue Wait, (b)'s fence thread",
	};

	plot_latency(gp, "13. another driver's fence signals -> waiter wakes",
		     keys, titles, 5);
	return 1;
}

BENCH_FIGURE(13, "another driver's fence signals -> a waiter on a fence wakes",
	     fig13, fig13_plot)
