// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 10: sharing the engine. Another client (a file of its
 * own) keeps the engine busy: 8 queues, each with two 4 MiB FILL jobs in
 * flight. This client's small job (one WRITE64) waits for its turn: the
 * driver goes round the clients, so it waits for at most the step running
 * when it arrives (256 KiB of work) per other ready client.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define FLOOD_QUEUES	8
#define FLOOD_BYTES	(4u << 20)
#define ENGINE_STEP	(256u << 10)

struct flood {
	int fd;
	uint32_t bo, q[FLOOD_QUEUES], tl[FLOOD_QUEUES];
	_Atomic bool stop;
	_Atomic uint64_t rounds;
	int64_t t0, t1;
	pthread_t thread;
};

static int flood_ioctl(struct flood *f, unsigned long req, void *arg)
{
	return drmIoctl(f->fd, req, arg) ? -errno : 0;
}

static void flood_round(struct flood *f, uint64_t k, bool submit)
{
	struct drm_d3dq_cmd_fill fill = {
		{ DRM_D3DQ_CMD_FILL, sizeof(fill) }, f->bo, 0, 0, FLOOD_BYTES,
	};
	int i;

	for (i = 0; i < FLOOD_QUEUES; i++) {
		struct drm_d3dq_sync s = { f->tl[i], DRM_D3DQ_SYNC_TIMELINE, k };
		struct drm_d3dq_submit a = {
			.queue_id = f->q[i],
			.signals = DRM_D3DQ_OBJ_ARRAY(1, &s),
			.cmds = (uintptr_t)&fill,
			.cmd_bytes = sizeof(fill),
		};
		struct drm_syncobj_timeline_wait w = {
			.handles = (uintptr_t)&f->tl[i],
			.points = (uintptr_t)&k,
			.timeout_nsec = INT64_MAX,
			.count_handles = 1,
			.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
		};

		a.waits.stride = 0;
		if (submit)
			CHECK(flood_ioctl(f, DRM_IOCTL_D3DQ_SUBMIT, &a));
		else
			CHECK(flood_ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w));
	}
}

static void *flood_main(void *arg)
{
	struct flood *f = arg;
	uint64_t k;

	flood_round(f, 1, true);
	f->t0 = now_ns();
	for (k = 2; !atomic_load(&f->stop); k++) {
		flood_round(f, k, true);
		flood_round(f, k - 1, false);
		atomic_fetch_add(&f->rounds, 1);
	}
	flood_round(f, k - 1, false);
	f->t1 = now_ns();
	return NULL;
}

static void flood_start(struct flood *f)
{
	struct drm_d3dq_bo_create b = { .size = FLOOD_BYTES };
	struct drm_syncobj_create sc = { 0 };
	struct drm_d3dq_queue_create qc = { 0 };
	int i;

	memset(f, 0, sizeof(*f));
	f->fd = open_raw();
	if (f->fd < 0)
		die("open", ENODEV, __LINE__);
	CHECK(flood_ioctl(f, DRM_IOCTL_D3DQ_BO_CREATE, &b));
	f->bo = b.handle;
	for (i = 0; i < FLOOD_QUEUES; i++) {
		CHECK(flood_ioctl(f, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc));
		f->q[i] = qc.id;
		CHECK(flood_ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
		f->tl[i] = sc.handle;
	}
	CHECK(pthread_create(&f->thread, NULL, flood_main, f));
}

/* Stops the flood; returns the engine's time per 256 KiB step under it. */
static double flood_stop(struct flood *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	close(f->fd);
	return (double)(f->t1 - f->t0) /
	       ((double)atomic_load(&f->rounds) * FLOOD_QUEUES * FLOOD_BYTES /
		ENGINE_STEP);
}

struct small {
	uint32_t sync, q;
	struct raw_bo bo;
};

/* Submit one WRITE64 signalling (sync, i) and wait for it. */
static double small_job_one(struct small *c, int i)
{
	struct drm_d3dq_cmd_write64 w = raw_write64(&c->bo, 0, i);
	int64_t t0;

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(raw_submit(c->q, 0, 0, c->sync, i, &w, sizeof(w)));
	CHECK(raw_wait(c->sync, i));
	return (double)(now_ns() - t0);
}

static void fig10(void)
{
	struct small c = { raw_syncobj(), raw_queue(), raw_bo_create() };
	int n = sz.lat / 2, i, idle, busy, step;
	double *li = samples(n), *lf = samples(n), t_step;
	struct flood f;

	for (i = 1; i <= n; i++)
		li[i - 1] = small_job_one(&c, i);
	flood_start(&f);
	for (i = 1; i <= n; i++)
		lf[i - 1] = small_job_one(&c, n + i);
	/* At least one whole round for the step time (--smoke is short). */
	while (!atomic_load(&f.rounds))
		sleep_ns(MS);
	t_step = flood_stop(&f);
	raw_queue_destroy(c.q);
	raw_syncobj_destroy(c.sync);
	raw_bo_destroy(c.bo);

	idle = add_row(10, "engine_small_idle", "small job, engine idle", "ns",
		       li, n);
	busy = add_row(10, "engine_small_flooded",
		       "small job, other client floods (8 queues)", "ns", lf,
		       n);
	step = add_value(10, "engine_step", "engine step (256 KiB) under flood",
			 "ns", t_step, false);
	add_cmp(10, busy, idle, "small job: flooded / idle", 0);
	add_cmp(10, busy, step, "small job flooded, in engine steps", 0);
	add_note(10, "bound: a client's job waits at most one step of each "
		 "other ready client of its priority per turn (uapi.rst, Queues)");
}

BENCH_FIGURE(10, "sharing the engine: a small job while another client floods",
	     fig10, NULL)
