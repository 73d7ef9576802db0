// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 9: the frame loop D3D12 programs run. Per frame, a
 * copy queue runs its list and signals a fence; the direct queue waits for
 * it, runs its list and signals the frame fence; with N frames in flight,
 * the CPU first waits until frame i - N is done (SetEventOnCompletion on
 * an eventfd, then read()). Against the same loop on raw ioctls: two
 * SUBMITs per frame, the direct one waiting on the copy queue's timeline
 * point, and a TIMELINE_WAIT for frame i - N. Frames per second, in rounds
 * that alternate the two loops.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"

#define FRAMES_PER_ROUND 50

struct frames_lib {
	struct d3dq_device *dev;
	struct d3dq_queue *copy, *direct;
	struct d3dq_fence *copied, *frame;
	struct d3dq_buffer *buf;
	struct d3dq_cmdlist *lcopy, *ldirect;
	int efd;
	uint64_t next;		/* next frame number */
};

struct frames_raw {
	uint32_t copy, direct, copied, frame;
	struct raw_bo bo;
	uint64_t next;
};

/* @n frames with @inflight frames in flight; returns frames per second. */
static double frames_lib_run(struct frames_lib *f, int n, int inflight)
{
	uint64_t first = f->next, v;
	int64_t t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		uint64_t k = f->next++;

		if (k > (uint64_t)inflight &&
		    d3dq_fence_get_completed_value(f->frame) < k - inflight) {
			CHECK(d3dq_fence_set_event_on_completion(f->frame,
							k - inflight, f->efd));
			if (read(f->efd, &v, sizeof(v)) != sizeof(v))
				die("read eventfd", errno, __LINE__);
		}
		CHECK(d3dq_queue_execute(f->copy, &f->lcopy, 1));
		CHECK(d3dq_queue_signal(f->copy, f->copied, k));
		CHECK(d3dq_queue_wait(f->direct, f->copied, k));
		CHECK(d3dq_queue_execute(f->direct, &f->ldirect, 1));
		CHECK(d3dq_queue_signal(f->direct, f->frame, k));
	}
	/* The round ends when its last frame is done. */
	CHECK(d3dq_fence_wait(f->frame, f->next - 1, D3DQ_TIMEOUT_INFINITE));
	return (double)(f->next - first) * 1e9 / (double)(now_ns() - t0);
}

static double frames_raw_run(struct frames_raw *f, int n, int inflight)
{
	struct drm_d3dq_cmd_write64 wc = raw_write64(&f->bo, 0, 1);
	struct drm_d3dq_cmd_write64 wd = raw_write64(&f->bo, 8, 1);
	uint64_t first = f->next;
	int64_t t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		uint64_t k = f->next++;

		if (k > (uint64_t)inflight)
			CHECK(raw_wait(f->frame, k - inflight));
		CHECK(raw_submit(f->copy, 0, 0, f->copied, k, &wc, sizeof(wc)));
		CHECK(raw_submit(f->direct, f->copied, k, f->frame, k, &wd,
				 sizeof(wd)));
	}
	CHECK(raw_wait(f->frame, f->next - 1));
	return (double)(f->next - first) * 1e9 / (double)(now_ns() - t0);
}

static void frames_lib_open(struct frames_lib *f)
{
	struct d3dq_queue_desc copy = D3DQ_QUEUE_DESC_INIT;

	copy.type = D3DQ_QUEUE_COPY;
	f->dev = lib_open();
	CHECK(d3dq_queue_create(f->dev, &copy, &f->copy));
	f->direct = lib_queue(f->dev);
	f->copied = lib_fence(f->dev, 0);
	f->frame = lib_fence(f->dev, 0);
	CHECK(d3dq_buffer_create(f->dev, 4096, &f->buf));
	f->lcopy = lib_list_write64(f->dev, f->buf, 0, 1);
	f->ldirect = lib_list_write64(f->dev, f->buf, 8, 1);
	f->efd = eventfd(0, EFD_CLOEXEC);
	if (f->efd < 0)
		die("eventfd", errno, __LINE__);
	f->next = 1;
}

static void frames_lib_close(struct frames_lib *f)
{
	d3dq_queue_destroy(f->copy);
	d3dq_queue_destroy(f->direct);
	d3dq_fence_destroy(f->copied);
	d3dq_fence_destroy(f->frame);
	d3dq_cmdlist_destroy(f->lcopy);
	d3dq_cmdlist_destroy(f->ldirect);
	d3dq_buffer_destroy(f->buf);
	d3dq_device_close(f->dev);
	close(f->efd);
}

static void frames_raw_open(struct frames_raw *f)
{
	struct drm_d3dq_queue_create c = { .type = DRM_D3DQ_QUEUE_TYPE_COPY };

	CHECK(xioctl(DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	f->copy = c.id;
	f->direct = raw_queue();
	f->copied = raw_syncobj();
	f->frame = raw_syncobj();
	f->bo = raw_bo_create();
	f->next = 1;
}

static void frames_raw_close(struct frames_raw *f)
{
	raw_queue_destroy(f->copy);
	raw_queue_destroy(f->direct);
	raw_syncobj_destroy(f->copied);
	raw_syncobj_destroy(f->frame);
	raw_bo_destroy(f->bo);
}

/* System calls and sleeps of the loops, per frame. */
struct frame_cost {
	struct counts c;
	long frames;
};

static void cost_add(struct frame_cost *fc, struct counts a, struct counts b,
		     long frames)
{
	fc->c.ioctls += b.ioctls - a.ioctls;
	fc->c.sleeps += b.sleeps - a.sleeps;
	fc->c.process_sleeps += b.process_sleeps - a.process_sleeps;
	fc->frames += frames;
}

static void cost_report(const char *key, const char *what,
			struct frame_cost *fc)
{
	struct counts zero = { 0 };

	if (fc->frames)
		add_counts(9, key, what, zero, fc->c, fc->frames);
}

static void fig9(void)
{
	static const int inflight[] = { 2, 3 };
	int per = sz.frames < FRAMES_PER_ROUND ? sz.frames : FRAMES_PER_ROUND;
	int rounds = sz.frames / per, r, k, a, b;
	double fps[2][2][32];	/* [N][lib, raw][round] */
	struct frame_cost cost[2][2];
	char key[48], label[72], path[512];
	FILE *dat = NULL;

	if (rounds > 32)
		rounds = 32;
	memset(cost, 0, sizeof(cost));
	if (data_dir) {
		dat = fopen(data_path(path, sizeof(path), "frames.dat"), "w");
		if (!dat)
			die(path, errno, __LINE__);
		fprintf(dat, "# frames_in_flight library_fps raw_fps\n");
	}
	for (k = 0; k < 2; k++) {
		struct frames_lib l;
		struct frames_raw w;
		double *vl = samples(rounds), *vr = samples(rounds);

		frames_lib_open(&l);
		frames_raw_open(&w);
		/* A short round of each first, untimed. */
		frames_lib_run(&l, inflight[k] + 2, inflight[k]);
		frames_raw_run(&w, inflight[k] + 2, inflight[k]);
		for (r = 0; r < rounds; r++) {
			int v;

			for (v = 0; v < 2; v++) {
				bool lib = (r + v) % 2 == 0;
				struct counts c0 = counts_now(), c1;

				if (lib)
					fps[k][0][r] = frames_lib_run(&l, per,
								      inflight[k]);
				else
					fps[k][1][r] = frames_raw_run(&w, per,
								      inflight[k]);
				c1 = counts_now();
				cost_add(&cost[k][lib ? 0 : 1], c0, c1, per);
			}
			vl[r] = fps[k][0][r];
			vr[r] = fps[k][1][r];
		}
		frames_lib_close(&l);
		frames_raw_close(&w);
		snprintf(key, sizeof(key), "frames_raw_n%d", inflight[k]);
		snprintf(label, sizeof(label),
			 "raw ioctls, %d frames in flight", inflight[k]);
		b = add_row(9, key, label, "fps", vr, rounds);
		snprintf(key, sizeof(key), "frames_lib_n%d", inflight[k]);
		snprintf(label, sizeof(label),
			 "library, %d frames in flight", inflight[k]);
		a = add_row(9, key, label, "fps", vl, rounds);
		snprintf(label, sizeof(label),
			 "frames/s, %d in flight: library / raw (at least)",
			 inflight[k]);
		add_cmp_min(9, a, b, label, 0.9);
		if (dat)
			fprintf(dat, "%d %.1f %.1f\n", inflight[k],
				row_median(a), row_median(b));
		snprintf(key, sizeof(key), "frames_raw_n%d", inflight[k]);
		snprintf(label, sizeof(label), "raw, N=%d", inflight[k]);
		cost_report(key, label, &cost[k][1]);
		snprintf(key, sizeof(key), "frames_lib_n%d", inflight[k]);
		snprintf(label, sizeof(label), "library, N=%d", inflight[k]);
		cost_report(key, label, &cost[k][0]);
	}
	add_note(9, "%d rounds of %d frames per variant; copy and direct job: one WRITE64 each",
		 rounds, per);
	if (dat)
		fclose(dat);
}

static int fig9_plot(FILE *gp)
{
	char path[512];

	fprintf(gp, "set title \"9. frame loop: copy -> direct queue, CPU waits for frame i - N\"\n"
		"set xlabel \"frames in flight (N)\"\nset ylabel \"frames per second\"\n"
		"set xrange [1.5:3.5]\nset xtics (2, 3)\nset yrange [0:*]\nset key bottom right\n"
		"plot '%s' using 1:3 with linespoints lw 2 title 'raw ioctls', \\\n"
		"     '' using 1:2 with linespoints lw 2 title 'library'\n"
		"set xrange [*:*]\n",
		data_path(path, sizeof(path), "frames.dat"));
	return 1;
}

BENCH_FIGURE(9, "frame loop: frames per second against raw ioctls", fig9,
	     fig9_plot)
