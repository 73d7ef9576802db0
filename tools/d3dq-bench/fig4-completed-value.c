// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 4: GetCompletedValue, idle and with signals pending,
 * against SYNCOBJ_QUERY of a timeline syncobj.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int gcv_measure(struct d3dq_fence *f, const char *key,
		       const char *label)
{
	double *v = samples(sz.gcv_batches);
	uint64_t sink = 0;
	int64_t t0;
	int i, j;

	for (i = 0; i < sz.gcv_batches; i++) {
		t0 = now_ns();
		for (j = 0; j < sz.gcv_batch; j++)
			sink += d3dq_fence_get_completed_value(f);
		v[i] = (double)(now_ns() - t0) / sz.gcv_batch;
	}
	if (sink == UINT64_MAX)
		fprintf(stderr, "# unlikely\n");
	return add_row(4, key, label, "ns", v, sz.gcv_batches);
}

/* Batches of QUERY ioctls; stops early at @deadline (CLOCK_MONOTONIC ns). */
static int query_measure(uint32_t h, const char *key, const char *label,
			 int64_t deadline)
{
	double *v = samples(sz.gcv_batches);
	uint64_t point;
	int64_t t0;
	int i, j;

	for (i = 0; i < sz.gcv_batches; i++) {
		t0 = now_ns();
		if (deadline && t0 >= deadline)
			break;
		for (j = 0; j < sz.query_batch; j++)
			CHECK(raw_query(h, &point));
		v[i] = (double)(now_ns() - t0) / sz.query_batch;
	}
	return add_row(4, key, label, "ns", v, i);
}

static uint64_t pending_delay_ns(void)
{
	uint64_t d = job_timeout_ns / 2;

	return d > 1000 * MS ? 1000 * MS : d;
}

/*
 * Points @first to @first + @n - 1 of timeline @h, pending behind the
 * DELAY @cmd on raw queue @q: the delayed job signals as many as one
 * submit takes (MAX_SYNCS), empty jobs behind it the rest. Few submits,
 * so that the points are in place long before the delay ends, also on a
 * slow kernel (a submit per point took the debug kernel most of it).
 */
static void raw_points_behind_delay(uint32_t q, uint32_t h, uint64_t first,
				    int n, const struct drm_d3dq_cmd_delay *cmd)
{
	int max = (int)get_param(DRM_D3DQ_PARAM_MAX_SYNCS), i, k;
	struct drm_d3dq_sync *s = calloc(n, sizeof(*s));
	struct drm_d3dq_submit a;

	CHECK_PTR(s);
	for (i = 0; i < n; i++)
		s[i] = (struct drm_d3dq_sync){ h, DRM_D3DQ_SYNC_TIMELINE,
					       first + i };
	for (i = 0; i < n; i += k) {
		k = n - i < max ? n - i : max;
		a = (struct drm_d3dq_submit){
			.queue_id = q,
			.signals = DRM_D3DQ_OBJ_ARRAY(k, s + i),
			.cmds = i ? 0 : (uintptr_t)cmd,
			.cmd_bytes = i ? 0 : sizeof(*cmd),
		};
		CHECK(xioctl(DRM_IOCTL_D3DQ_SUBMIT, &a));
	}
	free(s);
}

static void fig4(void)
{
	struct d3dq_device *dev = lib_open();
	struct d3dq_queue *q = lib_queue(dev);
	struct d3dq_fence *f = lib_fence(dev, 0);
	struct d3dq_fence *sf = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	struct d3dq_cmdlist *delay;
	uint32_t h = raw_syncobj(), rq = raw_queue();
	struct drm_d3dq_cmd_delay cmd = {
		{ DRM_D3DQ_CMD_DELAY, sizeof(cmd) }, pending_delay_ns(),
	};
	int l0, q0, lp, qp, i, s;
	uint64_t point;
	int64_t t0;

	CHECK(d3dq_fence_signal(f, 5));
	CHECK(d3dq_fence_signal(sf, 5));
	CHECK(raw_signal(h, 5));
	l0 = gcv_measure(f, "gcv_lib_idle", "GetCompletedValue, nothing pending");
	q0 = query_measure(h, "gcv_query_idle", "SYNCOBJ_QUERY, nothing pending",
			   0);
	s = gcv_measure(sf, "gcv_lib_shared",
			"GetCompletedValue, shared fence (a load)");

	/* Signals in flight behind a long job of the same queue. */
	CHECK(d3dq_cmdlist_create(dev, &delay));
	CHECK(d3dq_cmdlist_delay(delay, pending_delay_ns()));
	CHECK(d3dq_cmdlist_close(delay));
	t0 = now_ns();
	CHECK(d3dq_queue_execute(q, &delay, 1));
	for (i = 1; i <= sz.pending; i++)
		CHECK(d3dq_queue_signal(q, f, 5 + i));
	lp = gcv_measure(f, "gcv_lib_pending",
			 "GetCompletedValue, signals pending");
	if (d3dq_fence_get_completed_value(f) != 5 ||
	    now_ns() - t0 >= (int64_t)pending_delay_ns())
		add_note(4, "the library's pending signals completed during the measurement; increase the delay");

	/*
	 * A QUERY walks the chain of unsignalled points, so it is slow while
	 * they are pending: measure only until 80 % of the delay is over.
	 */
	t0 = now_ns();
	raw_points_behind_delay(rq, h, 6, sz.pending, &cmd);
	qp = query_measure(h, "gcv_query_pending",
			   "SYNCOBJ_QUERY, points pending",
			   t0 + (int64_t)pending_delay_ns() * 8 / 10);
	CHECK(raw_query(h, &point));
	if (point != 5 || !row_n(qp))
		add_note(4, "the raw pending points completed during the measurement");
	add_note(4, "%d signals pending: library queue signals (pending updates), raw timeline points", sz.pending);

	CHECK(d3dq_fence_wait(f, 5 + sz.pending, D3DQ_TIMEOUT_INFINITE));
	CHECK(raw_wait(h, 5 + sz.pending));
	add_cmp(4, l0, q0, "GetCompletedValue / QUERY, idle", 0.05);
	add_cmp(4, lp, qp, "GetCompletedValue / QUERY, pending", 0.05);
	add_cmp(4, s, q0, "shared-fence GetCompletedValue / QUERY", 0);
	/* Issue 25: a shared fence reads as fast as a local one, near enough. */
	add_cmp(4, s, l0, "GetCompletedValue, shared / local", 2);
	d3dq_cmdlist_destroy(delay);
	d3dq_queue_destroy(q);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(sf);
	d3dq_device_close(dev);
	raw_queue_destroy(rq);
	raw_syncobj_destroy(h);
}

static void fig4_run(void)
{
	bench_no_quantiles(4);
	fig4();
}

BENCH_FIGURE(4, "GetCompletedValue against SYNCOBJ_QUERY", fig4_run, NULL)
