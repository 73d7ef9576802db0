// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 7: long timelines. Memory over 10^6 queue signals of
 * one fence and 10^6 CPU signals of one shared fence.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define LONG_SAMPLES 10

static void long_report(const char *what, const char *key, struct mem *m,
			int nm, double per_signal_ns)
{
	char k[48], label[72];
	int start, end;

	snprintf(k, sizeof(k), "%s_rss_start", key);
	snprintf(label, sizeof(label), "%s: RSS after 1/%d", what, nm);
	start = add_value(7, k, label, "KiB", m[0].rss, false);
	snprintf(k, sizeof(k), "%s_rss_end", key);
	snprintf(label, sizeof(label), "%s: RSS at the end", what);
	end = add_value(7, k, label, "KiB", m[nm - 1].rss, false);
	snprintf(label, sizeof(label), "%s: RSS end / start", what);
	add_cmp(7, end, start, label, 1.05);
	snprintf(k, sizeof(k), "%s_slab_start", key);
	snprintf(label, sizeof(label), "%s: kernel Slab after 1/%d", what, nm);
	start = add_value(7, k, label, "KiB", m[0].slab, false);
	snprintf(k, sizeof(k), "%s_slab_end", key);
	snprintf(label, sizeof(label), "%s: kernel Slab at the end", what);
	end = add_value(7, k, label, "KiB", m[nm - 1].slab, false);
	snprintf(label, sizeof(label), "%s: Slab end / start", what);
	add_cmp(7, end, start, label, 1.05);
	snprintf(k, sizeof(k), "%s_per_signal", key);
	snprintf(label, sizeof(label), "%s: time per signal", what);
	add_value(7, k, label, "ns", per_signal_ns, false);
}

static void long_write_dat(const char *name, struct mem *m, int nm,
			   long long total)
{
	char path[512];
	FILE *f;
	int i;

	if (!data_dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.dat", data_dir, name);
	f = fopen(path, "w");
	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "# signals rss_kb slab_kb sunreclaim_kb vmalloc_kb\n");
	for (i = 0; i < nm; i++)
		fprintf(f, "%lld %ld %ld %ld %ld\n", total * (i + 1) / nm,
			m[i].rss, m[i].slab, m[i].sunreclaim, m[i].vmalloc);
	fclose(f);
}

static void fig7(void)
{
	struct d3dq_device *dev = lib_open();
	struct d3dq_queue *q = lib_queue(dev);
	struct d3dq_fence *f = lib_fence(dev, 0);
	struct d3dq_fence *sf = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	long long n = sz.long_signals, i, chunk = n / LONG_SAMPLES;
	struct mem m[LONG_SAMPLES];
	struct d3dq_cmdlist *l;
	struct d3dq_buffer *buf;
	int64_t t0, t;
	int s;

	/*
	 * Queue signals of a fence that is not shared, each after a job (one
	 * WRITE64), so that the queue's kernel timeline grows as well.
	 */
	CHECK(d3dq_buffer_create(dev, 4096, &buf));
	CHECK(d3dq_cmdlist_create(dev, &l));
	CHECK(d3dq_cmdlist_write64(l, buf, 0, 1));
	CHECK(d3dq_cmdlist_close(l));
	t0 = now_ns();
	for (s = 0, i = 1; s < LONG_SAMPLES; s++) {
		for (; i <= chunk * (s + 1); i++) {
			CHECK(d3dq_queue_execute(q, &l, 1));
			CHECK(d3dq_queue_signal(q, f, (uint64_t)i));
		}
		CHECK(d3dq_fence_wait(f, (uint64_t)i - 1,
				      D3DQ_TIMEOUT_INFINITE));
		m[s] = mem_now();
	}
	t = now_ns() - t0;
	long_report("Execute+queue Signal, local", "long_queue", m,
		    LONG_SAMPLES, (double)t / (double)(chunk * LONG_SAMPLES));
	long_write_dat("long-queue", m, LONG_SAMPLES, chunk * LONG_SAMPLES);

	/* CPU signals of a shared fence: a timeline syncobj point each. */
	t0 = now_ns();
	for (s = 0, i = 1; s < LONG_SAMPLES; s++) {
		for (; i <= chunk * (s + 1); i++)
			CHECK(d3dq_fence_signal(sf, (uint64_t)i));
		m[s] = mem_now();
	}
	t = now_ns() - t0;
	if (d3dq_fence_get_completed_value(sf) != (uint64_t)(i - 1))
		die("shared fence value", EINVAL, __LINE__);
	long_report("CPU Signal, shared fence", "long_cpu_shared", m,
		    LONG_SAMPLES, (double)t / (double)(chunk * LONG_SAMPLES));
	long_write_dat("long-cpu-shared", m, LONG_SAMPLES, chunk * LONG_SAMPLES);
	add_note(7, "%lld signals per run, memory sampled %d times", chunk * LONG_SAMPLES,
		 LONG_SAMPLES);

	d3dq_queue_destroy(q);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(sf);
	d3dq_cmdlist_destroy(l);
	d3dq_buffer_destroy(buf);
	d3dq_device_close(dev);
}

static int fig7_plot(FILE *gp)
{
	char a[512], b[512];

	fprintf(gp, "set title \"7. long timelines: memory while signalling one fence\"\n"
		"set xlabel \"signals\"\nset format x \"%%.0s%%c\"\n"
		"set ylabel \"KiB\"\nset key bottom right\n"
		"plot '%s' using 1:2 with linespoints title 'RSS, queue signals', \\\n"
		"     '' using 1:3 with linespoints title 'Slab, queue signals', \\\n"
		"     '%s' using 1:2 with linespoints title 'RSS, CPU signals shared', \\\n"
		"     '' using 1:3 with linespoints title 'Slab, CPU signals shared'\n",
		data_path(a, sizeof(a), "long-queue.dat"),
		data_path(b, sizeof(b), "long-cpu-shared.dat"));
	return 1;
}

BENCH_FIGURE(7, "long timelines: memory over 10^6 signals", fig7, fig7_plot)
