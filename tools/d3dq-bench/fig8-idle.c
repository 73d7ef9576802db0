// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 8: completion cost next to idle objects. Figure 1's
 * library variant (wait release) on a device that has nothing else, on
 * one with 1,023 idle queues (with the measured one, the driver's 1,024
 * per open file) and 10,000 idle fences (fewer if the two devices that
 * have them would pass the user's fence limit, the module's
 * max_user_fences: 8,160 each at its default), and on one with the
 * same and an event registered on every idle fence (for a value nobody
 * signals). The three devices are measured interleaved; then the same
 * with the CPU seeing D through an event, which the library's worker
 * applies and writes. What happens on a completion must not depend on
 * objects that have nothing to do with it.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"

enum { I_NONE, I_IDLE, I_EVENTS, NI };

struct idle_dev {
	struct wait_release h;
	struct d3dq_queue **queues;
	struct d3dq_fence **fences;
	int nq, nf;
};

/*
 * Idle queues have run one job and signalled one fence each, as a queue
 * an application made and does not use at the moment.
 */
static void idle_open(struct idle_dev *d, int nq, int nf, int efd)
{
	struct d3dq_device *dev = lib_open();
	struct d3dq_fence *done = lib_fence(dev, 0);
	struct d3dq_buffer *buf;
	struct d3dq_cmdlist *l;
	int i;

	d->nq = nq;
	d->nf = nf;
	d->queues = calloc(nq ? nq : 1, sizeof(*d->queues));
	d->fences = calloc(nf ? nf : 1, sizeof(*d->fences));
	CHECK_PTR(d->queues);
	CHECK_PTR(d->fences);
	CHECK(d3dq_buffer_create(dev, 4096, &buf));
	l = lib_list_write64(dev, buf, 0, 1);
	for (i = 0; i < nq; i++) {
		d->queues[i] = lib_queue(dev);
		CHECK(d3dq_queue_execute(d->queues[i], &l, 1));
		CHECK(d3dq_queue_signal(d->queues[i], done, i + 1));
	}
	for (i = 0; i < nf; i++) {
		d->fences[i] = lib_fence(dev, 0);
		if (efd >= 0)
			CHECK(d3dq_fence_set_event_on_completion(d->fences[i],
								 1, efd));
	}
	/* The last signal in API order takes effect whatever the order. */
	CHECK(d3dq_fence_wait(done, nq, D3DQ_TIMEOUT_INFINITE));
	d3dq_fence_destroy(done);
	d3dq_cmdlist_destroy(l);
	d3dq_buffer_destroy(buf);
	wait_release_open(&d->h, dev);
}

static void idle_close(struct idle_dev *d)
{
	int i;

	wait_release_close(&d->h);
	for (i = 0; i < d->nq; i++)
		d3dq_queue_destroy(d->queues[i]);
	for (i = 0; i < d->nf; i++)
		d3dq_fence_destroy(d->fences[i]);
	free(d->queues);
	free(d->fences);
	d3dq_device_close(d->h.dev);
}

/*
 * The same chain, seen through an event on D instead of a wait: then the
 * library's worker applies D's signal and writes the eventfd, with the
 * idle objects in its device.
 */
static double event_one(struct wait_release *h, int i, int efd)
{
	uint64_t v;
	int64_t t0;

	CHECK(d3dq_queue_wait(h->q, h->f, i));
	CHECK(d3dq_queue_execute(h->q, &h->l, 1));
	CHECK(d3dq_queue_signal(h->q, h->d, i));
	CHECK(d3dq_fence_set_event_on_completion(h->d, i, efd));
	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(d3dq_fence_signal(h->f, i));
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		die("read eventfd", errno, __LINE__);
	return (double)(now_ns() - t0);
}

/*
 * The fences one user may hold on the device (the module's
 * max_user_fences), or 0 if it cannot be read.
 */
static long user_fence_limit(void)
{
	FILE *f = fopen("/sys/module/d3dq/parameters/max_user_fences", "r");
	long v = 0;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static void fig8(void)
{
	static const char *const keys[NI] = {
		"idle_none", "idle_objects", "idle_objects_events",
	};
	static const char *const ekeys[NI] = {
		"idle_none_event", "idle_objects_event",
		"idle_objects_events_event",
	};
	char labels[NI][72];
	struct idle_dev d[NI];
	int n = sz.lat, warm = smoke ? 2 : 50, i, k, row[NI], erow[NI];
	int efd = eventfd(0, EFD_CLOEXEC), wefd = eventfd(0, EFD_CLOEXEC);
	double *lat[NI], *elat[NI];
	long fences = user_fence_limit();

	if (efd < 0 || wefd < 0)
		die("eventfd", errno, __LINE__);
	/* The measured queue counts against the driver's limit per file. */
	if ((uint64_t)sz.idle_queues >= get_param(DRM_D3DQ_PARAM_MAX_QUEUES))
		sz.idle_queues = (int)get_param(DRM_D3DQ_PARAM_MAX_QUEUES) - 1;
	/*
	 * Two devices hold idle fences at once, against the user's limit;
	 * a few more fences are measured (-EDQUOT beyond).
	 */
	if (fences > 64 && sz.idle_fences > (fences - 64) / 2) {
		sz.idle_fences = (int)((fences - 64) / 2);
		add_note(8, "idle fences per device cut to %d: the user may hold %ld",
			 sz.idle_fences, fences);
	}
	snprintf(labels[I_NONE], sizeof(labels[0]),
		 "wait release, nothing else on the device");
	snprintf(labels[I_IDLE], sizeof(labels[0]),
		 "... next to %d idle queues, %d idle fences", sz.idle_queues,
		 sz.idle_fences);
	snprintf(labels[I_EVENTS], sizeof(labels[0]),
		 "... and an event on each idle fence");
	idle_open(&d[I_NONE], 0, 0, -1);
	idle_open(&d[I_IDLE], sz.idle_queues, sz.idle_fences, -1);
	idle_open(&d[I_EVENTS], sz.idle_queues, sz.idle_fences, efd);
	for (k = 0; k < NI; k++) {
		lat[k] = samples(n);
		elat[k] = samples(n);
	}
	/* Whatever the first completions after the setup cost is not timed. */
	for (i = 1; i <= warm; i++)
		for (k = 0; k < NI; k++)
			wait_release_one(&d[k].h, i);
	for (i = 1; i <= n; i++)
		for (k = 0; k < NI; k++) {
			int v = (i + k) % NI;

			lat[v][i - 1] = wait_release_one(&d[v].h, warm + i);
		}
	/* Through an event: the worker applies D. */
	for (i = 1; i <= n; i++)
		for (k = 0; k < NI; k++) {
			int v = (i + k) % NI;

			elat[v][i - 1] = event_one(&d[v].h, warm + n + i, wefd);
		}
	for (k = 0; k < NI; k++) {
		row[k] = add_row(8, keys[k], labels[k], "ns", lat[k], n);
		snprintf(labels[k], sizeof(labels[0]), "%s",
			 k == I_NONE ? "event on D: nothing else on the device" :
			 k == I_IDLE ? "event on D: ... next to the idle objects" :
				       "event on D: ... and their events");
		erow[k] = add_row(8, ekeys[k], labels[k], "ns", elat[k], n);
		idle_close(&d[k]);
	}
	close(efd);
	close(wefd);
	add_cmp(8, row[I_IDLE], row[I_NONE],
		"idle objects: wait release with / without", 1.3);
	add_cmp(8, row[I_EVENTS], row[I_NONE],
		"idle objects with events: wait release with / without", 1.3);
	add_cmp(8, erow[I_IDLE], erow[I_NONE],
		"idle objects: event on D with / without", 1.3);
	add_cmp(8, erow[I_EVENTS], erow[I_NONE],
		"idle objects with events: event on D with / without", 1.3);
}

static int fig8_plot(FILE *gp)
{
	static const char *const keys[] = {
		"idle_none", "idle_objects", "idle_objects_events",
	};
	static const char *const titles[] = {
		"nothing else", "idle queues and fences",
		"idle queues, fences with events",
	};

	static const char *const ekeys[] = {
		"idle_none_event", "idle_objects_event",
		"idle_objects_events_event",
	};

	plot_latency(gp, "8. wait release next to idle objects", keys, titles,
		     3);
	plot_latency(gp, "8. the same seen through an event (the worker)",
		     ekeys, titles, 3);
	return 2;
}

BENCH_FIGURE(8, "completion cost next to 1,023 idle queues, 10,000 idle fences",
	     fig8, fig8_plot)
