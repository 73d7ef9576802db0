// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 9: the frame loop D3D12 programs run. Per frame, a
 * copy queue runs its list and signals a fence; the direct queue waits for
 * it, runs its list and signals the frame fence; with N frames in flight,
 * the CPU first waits until frame i - N is done (SetEventOnCompletion on
 * an eventfd, then read()). Against the same loop on raw ioctls: two
 * SUBMITs per frame, the direct one waiting on the copy queue's timeline
 * point, and a TIMELINE_WAIT for frame i - N. Frames per second, in rounds
 * that rotate the loops. A third loop makes on raw ioctls the SUBMITs
 * the library makes (one per Execute and per Signal: four per frame, the
 * queue wait being satisfied at the call), with the raw loop's
 * TIMELINE_WAIT, which the library replaces by a load. Targets (issue
 * 40): without GPU work the library against that third loop, with GPU
 * work against the two-SUBMIT loop, ≥ 0.95 each; the other two ratios
 * are for information.
 *
 * Each list is one WRITE64, which the driver runs inside SUBMIT on an idle
 * engine (uapi.rst, "Direct submission"): then no frame is ever in flight,
 * and the loops measure the CPU's side of a frame. So the same loops run
 * again with GPU work in each frame (a DELAY before the direct queue's
 * WRITE64): frames are then in flight, and the CPU waits for them.
 *
 * The parts: after each variant's timed rounds, a few more of the library
 * and the raw loop with every call timed alone, one row per call.
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
/* The direct queue's work per frame in the second set of variants. */
#define GPU_WORK_NS (1000 * 1000ull)

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
	uint32_t copy_tl, direct_tl;	/* the per-call loop's job points */
	struct raw_bo bo;
	uint64_t next;
	uint64_t work_ns;	/* DELAY of the direct queue's job, or 0 */
};

/*
 * The parts of a frame (item 3 of issue 40): each call of the loops timed
 * alone, in rounds of their own after the timed ones, so that reading the
 * clock costs the frame rates nothing. A part's samples are per frame.
 */
enum { PART_WAIT, PART_EXEC_COPY, PART_SIGNAL_COPY, PART_QWAIT,
       PART_EXEC_DIRECT, PART_SIGNAL_DIRECT, LIB_PARTS };
enum { RAW_PART_WAIT, RAW_PART_SUBMIT_COPY, RAW_PART_SUBMIT_DIRECT,
       RAW_PARTS };

struct frame_parts {
	double *v[LIB_PARTS];
	long n;
};

/* Time since *@t in @p's part @i of this frame; *@t moves on. */
static void part_take(struct frame_parts *p, int i, int64_t *t)
{
	int64_t now;

	if (!p)
		return;
	now = now_ns();
	p->v[i][p->n] = (double)(now - *t);
	*t = now;
}

/*
 * @n frames with @inflight frames in flight; returns frames per second.
 * With @parts, each call is timed too.
 */
static double frames_lib_run(struct frames_lib *f, int n, int inflight,
			     struct frame_parts *parts)
{
	uint64_t first = f->next, v;
	int64_t t0 = now_ns(), t;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t k = f->next++;

		t = parts ? now_ns() : 0;
		if (k > (uint64_t)inflight &&
		    d3dq_fence_get_completed_value(f->frame) < k - inflight) {
			CHECK(d3dq_fence_set_event_on_completion(f->frame,
							k - inflight, f->efd));
			if (read(f->efd, &v, sizeof(v)) != sizeof(v))
				die("read eventfd", errno, __LINE__);
		}
		part_take(parts, PART_WAIT, &t);
		CHECK(d3dq_queue_execute(f->copy, &f->lcopy, 1));
		part_take(parts, PART_EXEC_COPY, &t);
		CHECK(d3dq_queue_signal(f->copy, f->copied, k));
		part_take(parts, PART_SIGNAL_COPY, &t);
		CHECK(d3dq_queue_wait(f->direct, f->copied, k));
		part_take(parts, PART_QWAIT, &t);
		CHECK(d3dq_queue_execute(f->direct, &f->ldirect, 1));
		part_take(parts, PART_EXEC_DIRECT, &t);
		CHECK(d3dq_queue_signal(f->direct, f->frame, k));
		part_take(parts, PART_SIGNAL_DIRECT, &t);
		if (parts)
			parts->n++;
	}
	/* The round ends when its last frame is done. */
	CHECK(d3dq_fence_wait(f->frame, f->next - 1, D3DQ_TIMEOUT_INFINITE));
	return (double)(f->next - first) * 1e9 / (double)(now_ns() - t0);
}

/*
 * @percall: one SUBMIT per library call (the work, then the signal).
 * With @parts (not per call), each call is timed too.
 */
static double frames_raw_run(struct frames_raw *f, int n, int inflight,
			     bool percall, struct frame_parts *parts)
{
	struct drm_d3dq_cmd_write64 wc = raw_write64(&f->bo, 0, 1);
	struct {
		struct drm_d3dq_cmd_delay delay;
		struct drm_d3dq_cmd_write64 write;
	} wd = {
		.delay = { { DRM_D3DQ_CMD_DELAY, sizeof(wd.delay) }, f->work_ns },
		.write = raw_write64(&f->bo, 8, 1),
	};
	const void *direct = f->work_ns ? (const void *)&wd : &wd.write;
	uint32_t dbytes = f->work_ns ? sizeof(wd) : sizeof(wd.write);
	uint64_t first = f->next;
	int64_t t0 = now_ns(), t;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t k = f->next++;

		t = parts ? now_ns() : 0;
		if (k > (uint64_t)inflight)
			CHECK(raw_wait(f->frame, k - inflight));
		part_take(parts, RAW_PART_WAIT, &t);
		if (percall) {
			CHECK(raw_submit(f->copy, 0, 0, f->copy_tl, k, &wc,
					 sizeof(wc)));
			CHECK(raw_submit(f->copy, 0, 0, f->copied, k, NULL, 0));
			CHECK(raw_submit(f->direct, f->copied, k, f->direct_tl,
					 k, direct, dbytes));
			CHECK(raw_submit(f->direct, 0, 0, f->frame, k, NULL,
					 0));
			continue;
		}
		CHECK(raw_submit(f->copy, 0, 0, f->copied, k, &wc, sizeof(wc)));
		part_take(parts, RAW_PART_SUBMIT_COPY, &t);
		CHECK(raw_submit(f->direct, f->copied, k, f->frame, k, direct,
				 dbytes));
		part_take(parts, RAW_PART_SUBMIT_DIRECT, &t);
		if (parts)
			parts->n++;
	}
	CHECK(raw_wait(f->frame, f->next - 1));
	return (double)(f->next - first) * 1e9 / (double)(now_ns() - t0);
}

static void frames_lib_open(struct frames_lib *f, uint64_t work_ns)
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
	CHECK(d3dq_cmdlist_create(f->dev, &f->ldirect));
	if (work_ns)
		CHECK(d3dq_cmdlist_delay(f->ldirect, work_ns));
	CHECK(d3dq_cmdlist_write64(f->ldirect, f->buf, 8, 1));
	CHECK(d3dq_cmdlist_close(f->ldirect));
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

static void frames_raw_open(struct frames_raw *f, uint64_t work_ns)
{
	struct drm_d3dq_queue_create c = { .type = DRM_D3DQ_QUEUE_TYPE_COPY };

	CHECK(xioctl(DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	f->copy = c.id;
	f->direct = raw_queue();
	f->copied = raw_syncobj();
	f->frame = raw_syncobj();
	f->copy_tl = raw_syncobj();
	f->direct_tl = raw_syncobj();
	f->bo = raw_bo_create();
	f->next = 1;
	f->work_ns = work_ns;
}

static void frames_raw_close(struct frames_raw *f)
{
	raw_queue_destroy(f->copy);
	raw_queue_destroy(f->direct);
	raw_syncobj_destroy(f->copied);
	raw_syncobj_destroy(f->frame);
	raw_syncobj_destroy(f->copy_tl);
	raw_syncobj_destroy(f->direct_tl);
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

/* One row per part of @who's loop (library or raw), per frame. */
static void parts_rows(const char *who, const char *name, int n,
		       uint64_t work_ns, const char *const *keys,
		       const char *const *labels, int count,
		       struct frame_parts *p)
{
	char key[64], label[96];
	int i;

	for (i = 0; i < count; i++) {
		snprintf(key, sizeof(key), "frames_%s_n%d%s_part_%s", who, n,
			 work_ns ? "_gpu1ms" : "", keys[i]);
		snprintf(label, sizeof(label), "%s part, N=%d%s: %s", name, n,
			 work_ns ? ", GPU" : "", labels[i]);
		add_row(9, key, label, "ns", p->v[i], p->n);
	}
}

/*
 * Rounds of @per frames with each call timed, alternating the library and
 * the raw loop; rows of one call each, per frame.
 */
static void fig9_parts(struct frames_lib *l, struct frames_raw *w, int n,
		       uint64_t work_ns, int per)
{
	static const char *const lib_key[LIB_PARTS] = {
		"wait", "exec_copy", "signal_copy", "qwait", "exec_direct",
		"signal_direct",
	};
	static const char *const lib_label[LIB_PARTS] = {
		"GetCompletedValue (+ event, read)", "Execute(copy)",
		"Signal(copy)", "Wait(direct)", "Execute(direct)",
		"Signal(direct)",
	};
	static const char *const raw_key[RAW_PARTS] = {
		"wait", "submit_copy", "submit_direct",
	};
	static const char *const raw_label[RAW_PARTS] = {
		"TIMELINE_WAIT", "SUBMIT(copy)", "SUBMIT(direct, waits)",
	};
	struct frame_parts pl = { .n = 0 }, pr = { .n = 0 };
	int rounds = smoke ? 1 : 4, r, i;

	for (i = 0; i < LIB_PARTS; i++)
		pl.v[i] = samples((long)rounds * per);
	for (i = 0; i < RAW_PARTS; i++)
		pr.v[i] = samples((long)rounds * per);
	for (r = 0; r < rounds; r++) {
		frames_lib_run(l, per, n, &pl);
		frames_raw_run(w, per, n, false, &pr);
	}
	parts_rows("lib", "library", n, work_ns, lib_key, lib_label, LIB_PARTS,
		   &pl);
	parts_rows("raw", "raw", n, work_ns, raw_key, raw_label, RAW_PARTS,
		   &pr);
}

static void fig9(void)
{
	static const struct {
		int inflight;
		uint64_t work_ns;
	} var[] = {
		{ 2, 0 }, { 3, 0 }, { 2, GPU_WORK_NS }, { 3, GPU_WORK_NS },
	};
	int per = sz.frames < FRAMES_PER_ROUND ? sz.frames : FRAMES_PER_ROUND;
	int rounds = sz.frames / per, r, k, a, b, pc, nv = 4;
	double fps[4][3][32];	/* [variant][lib, raw, raw per call][round] */
	double med[4][2];
	struct frame_cost cost[4][3];
	char key[48], label[96], what[32], path[512];
	FILE *dat = NULL;

	if (rounds > 32)
		rounds = 32;
	memset(cost, 0, sizeof(cost));
	for (k = 0; k < nv; k++) {
		struct frames_lib l;
		struct frames_raw w, wc;
		double *vl = samples(rounds), *vr = samples(rounds);
		double *vc = samples(rounds);
		int n = var[k].inflight, c;

		frames_lib_open(&l, var[k].work_ns);
		frames_raw_open(&w, var[k].work_ns);
		frames_raw_open(&wc, var[k].work_ns);
		/* A short round of each first, untimed. */
		frames_lib_run(&l, n + 2, n, NULL);
		frames_raw_run(&w, n + 2, n, false, NULL);
		frames_raw_run(&wc, n + 2, n, true, NULL);
		for (r = 0; r < rounds; r++) {
			int v;

			for (v = 0; v < 3; v++) {
				struct counts c0 = counts_now(), c1;

				/* 0 library, 1 raw, 2 raw per call. */
				c = (r + v) % 3;
				if (c == 0)
					fps[k][0][r] = frames_lib_run(&l, per, n,
								      NULL);
				else
					fps[k][c][r] = frames_raw_run(c == 1 ? &w : &wc,
								      per, n, c == 2,
								      NULL);
				c1 = counts_now();
				cost_add(&cost[k][c], c0, c1, per);
			}
			vl[r] = fps[k][0][r];
			vr[r] = fps[k][1][r];
			vc[r] = fps[k][2][r];
		}
		fig9_parts(&l, &w, n, var[k].work_ns, per);
		frames_lib_close(&l);
		frames_raw_close(&w);
		frames_raw_close(&wc);
		if (var[k].work_ns)
			snprintf(what, sizeof(what), "_gpu%llums",
				 (unsigned long long)(var[k].work_ns / MS));
		else
			what[0] = 0;
		snprintf(key, sizeof(key), "frames_raw_n%d%s", n, what);
		snprintf(label, sizeof(label), "raw ioctls, %d frames in flight%s",
			 n, var[k].work_ns ? ", 1 ms GPU work" : "");
		b = add_row(9, key, label, "fps", vr, rounds);
		snprintf(key, sizeof(key), "frames_lib_n%d%s", n, what);
		snprintf(label, sizeof(label), "library, %d frames in flight%s",
			 n, var[k].work_ns ? ", 1 ms GPU work" : "");
		a = add_row(9, key, label, "fps", vl, rounds);
		/*
		 * Issue 40's targets: with GPU work the library against the
		 * raw loop of two SUBMITs per frame, without it against the
		 * raw loop making the same calls (one kernel call per D3D12
		 * call); issue 15's band without GPU work (0.9 of the two
		 * SUBMITs) is out of reach by design, for information.
		 */
		if (var[k].work_ns) {
			snprintf(label, sizeof(label),
				 "fps, %d in flight, GPU 1 ms: library / raw (at least)",
				 n);
			add_cmp_min(9, a, b, label, 0.95);
		} else {
			snprintf(label, sizeof(label),
				 "frames/s, %d in flight: library / raw (info)",
				 n);
			add_cmp(9, a, b, label, 0);
		}
		med[k][0] = row_median(a);
		med[k][1] = row_median(b);
		snprintf(key, sizeof(key), "frames_raw_calls_n%d%s", n, what);
		snprintf(label, sizeof(label),
			 "raw per call, %d in flight%s", n,
			 var[k].work_ns ? ", 1 ms GPU work" : "");
		pc = add_row(9, key, label, "fps", vc, rounds);
		if (var[k].work_ns) {
			snprintf(label, sizeof(label),
				 "fps, %d in flight, GPU 1 ms: library / raw per call (info)",
				 n);
			add_cmp(9, a, pc, label, 0);
		} else {
			snprintf(label, sizeof(label),
				 "fps, %d in flight: library / raw per call (at least)",
				 n);
			add_cmp_min(9, a, pc, label, 0.95);
		}
		snprintf(key, sizeof(key), "frames_raw_n%d%s", n, what);
		snprintf(label, sizeof(label), "raw, N=%d%s", n,
			 var[k].work_ns ? ", GPU work" : "");
		cost_report(key, label, &cost[k][1]);
		snprintf(key, sizeof(key), "frames_raw_calls_n%d%s", n, what);
		snprintf(label, sizeof(label), "raw per call, N=%d%s", n,
			 var[k].work_ns ? ", GPU work" : "");
		cost_report(key, label, &cost[k][2]);
		snprintf(key, sizeof(key), "frames_lib_n%d%s", n, what);
		snprintf(label, sizeof(label), "library, N=%d%s", n,
			 var[k].work_ns ? ", GPU work" : "");
		cost_report(key, label, &cost[k][0]);
	}
	add_note(9, "%d rounds of %d frames per variant; copy and direct job: one WRITE64 each (run inside SUBMIT), then the same with a %llu us DELAY before the direct job's WRITE64",
		 rounds, per, (unsigned long long)(GPU_WORK_NS / 1000));
	if (data_dir) {
		dat = fopen(data_path(path, sizeof(path), "frames.dat"), "w");
		if (!dat)
			die(path, errno, __LINE__);
		fprintf(dat, "# frames_in_flight library_fps raw_fps library_fps_gpu raw_fps_gpu\n");
		for (k = 0; k < 2; k++)
			fprintf(dat, "%d %.1f %.1f %.1f %.1f\n", var[k].inflight,
				med[k][0], med[k][1], med[k + 2][0],
				med[k + 2][1]);
		fclose(dat);
	}
}

static int fig9_plot(FILE *gp)
{
	char path[512];

	fprintf(gp, "set title \"9. frame loop: copy -> direct queue, CPU waits for frame i - N\"\n"
		"set xlabel \"frames in flight (N)\"\nset ylabel \"frames per second\"\n"
		"set xrange [1.5:3.5]\nset xtics (2, 3)\nset yrange [0:*]\nset key bottom right\n"
		"plot '%s' using 1:3 with linespoints lw 2 title 'raw ioctls', \\\n"
		"     '' using 1:2 with linespoints lw 2 title 'library', \\\n"
		"     '' using 1:5 with linespoints lw 2 title 'raw, 1 ms GPU work', \\\n"
		"     '' using 1:4 with linespoints lw 2 title 'library, 1 ms GPU work'\n"
		"set xrange [*:*]\n",
		data_path(path, sizeof(path), "frames.dat"));
	return 1;
}

BENCH_FIGURE(9, "frame loop: frames per second against raw ioctls", fig9,
	     fig9_plot)
