// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 2: cross-queue. Queue A runs [DELAY, TIMESTAMP] and
 * signals; queue B waits for that signal and runs [TIMESTAMP]; reported is
 * the difference of the two engine timestamps. Baseline: two raw submits,
 * B's waiting on A's timeline point.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CROSS_DELAY_NS (2 * MS)

struct cross_raw {
	struct raw_bo bo;
	uint32_t qa, qb, ta, tb;
};

/* A: [delay, timestamp] signals TA; B: waits TA, [timestamp], signals TB. */
static double cross_raw_one(struct cross_raw *c, int i)
{
	struct {
		struct drm_d3dq_cmd_delay delay;
		struct drm_d3dq_cmd_timestamp ts;
	} a = {
		.delay = { { DRM_D3DQ_CMD_DELAY, sizeof(a.delay) },
			   CROSS_DELAY_NS },
		.ts = { { DRM_D3DQ_CMD_TIMESTAMP, sizeof(a.ts) },
			c->bo.handle, 0, 0 },
	};
	struct drm_d3dq_cmd_timestamp b = {
		{ DRM_D3DQ_CMD_TIMESTAMP, sizeof(b) }, c->bo.handle, 0, 8,
	};

	CHECK(raw_submit(c->qa, 0, 0, c->ta, i, &a, sizeof(a)));
	CHECK(raw_submit(c->qb, c->ta, i, c->tb, i, &b, sizeof(b)));
	CHECK(raw_wait(c->tb, i));
	return (double)(int64_t)(c->bo.map[1] - c->bo.map[0]);
}

struct cross_lib {
	struct d3dq_device *dev;
	struct d3dq_queue *qa, *qb;
	struct d3dq_fence *f, *d;
	struct d3dq_cmdlist *la, *lb;
	struct d3dq_buffer *buf;
	volatile uint64_t *map;
};

static double cross_lib_one(struct cross_lib *c, int i)
{
	CHECK(d3dq_queue_execute(c->qa, &c->la, 1));
	CHECK(d3dq_queue_signal(c->qa, c->f, i));
	CHECK(d3dq_queue_wait(c->qb, c->f, i));
	CHECK(d3dq_queue_execute(c->qb, &c->lb, 1));
	CHECK(d3dq_queue_signal(c->qb, c->d, i));
	CHECK(d3dq_fence_wait(c->d, i, D3DQ_TIMEOUT_INFINITE));
	return (double)(int64_t)(c->map[1] - c->map[0]);
}

static void fig2(void)
{
	struct cross_raw r = { raw_bo_create(), raw_queue(), raw_queue(),
			       raw_syncobj(), raw_syncobj() };
	struct cross_lib l;
	int n = sz.cross, i, b, x;
	double *lr = samples(n), *ll = samples(n);

	l.dev = lib_open();
	l.qa = lib_queue(l.dev);
	l.qb = lib_queue(l.dev);
	l.f = lib_fence(l.dev, 0);
	l.d = lib_fence(l.dev, 0);
	CHECK(d3dq_buffer_create(l.dev, 4096, &l.buf));
	l.map = d3dq_buffer_map(l.buf);
	CHECK(d3dq_cmdlist_create(l.dev, &l.la));
	CHECK(d3dq_cmdlist_delay(l.la, CROSS_DELAY_NS));
	CHECK(d3dq_cmdlist_timestamp(l.la, l.buf, 0));
	CHECK(d3dq_cmdlist_close(l.la));
	CHECK(d3dq_cmdlist_create(l.dev, &l.lb));
	CHECK(d3dq_cmdlist_timestamp(l.lb, l.buf, 8));
	CHECK(d3dq_cmdlist_close(l.lb));
	for (i = 1; i <= n; i++) {
		if (i % 2) {
			lr[i - 1] = cross_raw_one(&r, i);
			ll[i - 1] = cross_lib_one(&l, i);
		} else {
			ll[i - 1] = cross_lib_one(&l, i);
			lr[i - 1] = cross_raw_one(&r, i);
		}
	}
	raw_queue_destroy(r.qa);
	raw_queue_destroy(r.qb);
	raw_syncobj_destroy(r.ta);
	raw_syncobj_destroy(r.tb);
	raw_bo_destroy(r.bo);
	d3dq_cmdlist_destroy(l.la);
	d3dq_cmdlist_destroy(l.lb);
	d3dq_queue_destroy(l.qa);
	d3dq_queue_destroy(l.qb);
	d3dq_fence_destroy(l.f);
	d3dq_fence_destroy(l.d);
	d3dq_buffer_destroy(l.buf);
	d3dq_device_close(l.dev);

	b = add_row(2, "cross_raw", "raw chain, two queues", "ns", lr, n);
	x = add_row(2, "cross_lib", "library: A Signal, B Wait", "ns", ll, n);
	add_cmp(2, x, b, "cross-queue: library / raw chain", 1.2);
}

static int fig2_plot(FILE *gp)
{
	static const char *const keys[] = { "cross_raw", "cross_lib" };
	static const char *const titles[] = { "raw chain", "library" };

	plot_latency(gp, "2. cross-queue (A's job end -> B's job, engine clock)",
		     keys, titles, 2);
	return 1;
}

BENCH_FIGURE(2, "cross-queue: A's job end -> B's waiting job, engine clock",
	     fig2, fig2_plot)

