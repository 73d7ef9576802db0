// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 6: scaling. N queues held by one fence, released by
 * one CPU signal: threads, memory per queue, release time.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct scale_point {
	int n;
	double release_ms, release_p99_ms;
	double threads;		/* library threads */
	double rss_kb, slab_kb, kstack_kb, vmalloc_kb;	/* per queue */
};

static void scale_once(int n, double *release_ns, struct mem *delta,
		       int *lib_threads)
{
	struct d3dq_queue **q = calloc(n, sizeof(*q));
	struct d3dq_fence **done = calloc(n, sizeof(*done));
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	struct mem m0, m1;
	int threads0, i;
	int64_t t0;

	CHECK_PTR(q);
	CHECK_PTR(done);
	/* A joined thread may linger in /proc/self/task for a moment. */
	sleep_ns(50 * MS);
	threads0 = thread_count();
	m0 = mem_now();
	dev = lib_open();
	f = lib_fence(dev, 0);
	for (i = 0; i < n; i++) {
		q[i] = lib_queue(dev);
		done[i] = lib_fence(dev, 0);
		CHECK(d3dq_queue_wait(q[i], f, 1));
		CHECK(d3dq_queue_signal(q[i], done[i], 1));
	}
	sleep_ns(100 * MS);
	m1 = mem_now();
	*lib_threads = thread_count() - threads0;
	delta->rss = m1.rss - m0.rss;
	delta->slab = m1.slab - m0.slab;
	delta->sunreclaim = m1.sunreclaim - m0.sunreclaim;
	delta->kstack = m1.kstack - m0.kstack;
	delta->vmalloc = m1.vmalloc - m0.vmalloc;
	for (i = 0; i < n; i++)
		if (d3dq_fence_get_completed_value(done[i]))
			die("a queue was not held", EINVAL, __LINE__);

	t0 = now_ns();
	CHECK(d3dq_fence_signal(f, 1));
	for (i = 0; i < n; i++)
		CHECK(d3dq_fence_wait(done[i], 1, D3DQ_TIMEOUT_INFINITE));
	*release_ns = (double)(now_ns() - t0);
	if (thread_count() - threads0 != *lib_threads)
		add_note(6, "N=%d: thread count changed during the release", n);

	for (i = 0; i < n; i++) {
		d3dq_queue_destroy(q[i]);
		d3dq_fence_destroy(done[i]);
	}
	d3dq_fence_destroy(f);
	d3dq_device_close(dev);
	free(q);
	free(done);
}

static void scale_write_dat(const struct scale_point *p, int np)
{
	char path[512];
	FILE *f;
	int i;

	if (!data_dir)
		return;
	snprintf(path, sizeof(path), "%s/scaling.dat", data_dir);
	f = fopen(path, "w");
	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "# N release_ms release_us_per_queue threads rss_kb_per_q slab_kb_per_q kstack_kb_per_q vmalloc_kb_per_q\n");
	for (i = 0; i < np; i++)
		fprintf(f, "%d %.3f %.3f %.0f %.2f %.2f %.2f %.2f\n", p[i].n,
			p[i].release_ms, p[i].release_ms * 1000 / p[i].n,
			p[i].threads, p[i].rss_kb, p[i].slab_kb, p[i].kstack_kb,
			p[i].vmalloc_kb);
	fclose(f);
}

static void fig6(void)
{
	static const int ns[] = { 1, 64, 256, 1024 };
	struct scale_point pts[4];
	int np = 0, first = -1, last = -1, r1 = -1, rl = -1;
	char key[48], label[72];
	size_t k;

	for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		int n = ns[k], rep, threads = 0, r;
		double *rel = samples(sz.scale_reps);
		struct mem d, sum = { 0 };

		if (n > sz.scale_max)
			break;
		for (rep = 0; rep < sz.scale_reps; rep++) {
			scale_once(n, &rel[rep], &d, &threads);
			rel[rep] /= 1e6;
			sum.rss += d.rss;
			sum.slab += d.slab;
			sum.kstack += d.kstack;
			sum.vmalloc += d.vmalloc;
		}
		snprintf(key, sizeof(key), "scale_release_n%d", n);
		snprintf(label, sizeof(label),
			 "N=%d: one CPU signal -> all released", n);
		r = add_row(6, key, label, "ms", rel, sz.scale_reps);
		if (r1 < 0)
			r1 = r;
		rl = r;
		pts[np].n = n;
		pts[np].release_ms = row_median(r);
		pts[np].release_p99_ms = row_p99(r);
		pts[np].threads = threads;
		pts[np].rss_kb = (double)sum.rss / sz.scale_reps / n;
		pts[np].slab_kb = (double)sum.slab / sz.scale_reps / n;
		pts[np].kstack_kb = (double)sum.kstack / sz.scale_reps / n;
		pts[np].vmalloc_kb = (double)sum.vmalloc / sz.scale_reps / n;

		snprintf(key, sizeof(key), "scale_us_per_queue_n%d", n);
		snprintf(label, sizeof(label), "N=%d: release time per queue", n);
		add_value(6, key, label, "us", pts[np].release_ms * 1000 / n,
			  false);
		snprintf(key, sizeof(key), "scale_threads_n%d", n);
		snprintf(label, sizeof(label), "N=%d: library threads", n);
		/* A count that is 0 since issue 25: not a positive figure. */
		add_value(6, key, label, "threads", threads, true);
		if (first < 0)
			first = threads;
		last = threads;
		snprintf(key, sizeof(key), "scale_rss_n%d", n);
		snprintf(label, sizeof(label), "N=%d: process RSS per held queue", n);
		add_value(6, key, label, "KiB", pts[np].rss_kb, true);
		snprintf(key, sizeof(key), "scale_kmem_n%d", n);
		snprintf(label, sizeof(label),
			 "N=%d: kernel Slab+KernelStack+Vmalloc per queue", n);
		add_value(6, key, label, "KiB", pts[np].slab_kb +
			  pts[np].kstack_kb + pts[np].vmalloc_kb, true);
		snprintf(key, sizeof(key), "scale_kstack_n%d", n);
		snprintf(label, sizeof(label), "N=%d: of which KernelStack", n);
		add_value(6, key, label, "KiB", pts[np].kstack_kb, true);
		np++;
	}
	if (np)
		add_note(6, "library threads: %d at N=%d, %d at N=%d (target 0)",
			 first, pts[0].n, last, pts[np - 1].n);
	add_cmp(6, rl, r1, "release time: largest N / N=1", 0);
	if (np >= 2)
		add_note(6, "linear release would give %.0fx from N=%d to N=%d; measured %.1fx",
			 (double)pts[np - 1].n / pts[np - 2].n, pts[np - 2].n,
			 pts[np - 1].n,
			 pts[np - 1].release_ms / pts[np - 2].release_ms);
	scale_write_dat(pts, np);
}

static int fig6_plot(FILE *gp)
{
	char path[512];

	fprintf(gp, "set title \"6. scaling: N held queues released by one CPU signal\"\n"
		"set logscale xy\nset xlabel \"N queues\"\n"
		"set ylabel \"ms, us per queue, threads\"\nset key top left\n"
		"plot '%s' using 1:2 with linespoints lw 2 title 'release time (ms)', \\\n"
		"     '' using 1:3 with linespoints lw 2 title 'release time per queue (us)', \\\n"
		"     '' using 1:4 with linespoints lw 2 title 'library threads'\n",
		data_path(path, sizeof(path), "scaling.dat"));
	return 1;
}

BENCH_FIGURE(6, "scaling: N held queues released by one CPU signal", fig6,
	     fig6_plot)
