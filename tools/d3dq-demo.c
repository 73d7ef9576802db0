// SPDX-License-Identifier: MIT
/*
 * d3dq-demo: two queues and the CPU, showing work held back by waits.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Queue A runs 300 ms of engine work and signals fence F. Queue B waits
 * for F (submitted before A's signal exists: wait before signal), works,
 * then waits for fence C that only the CPU signals, 400 ms later. The
 * engine writes timestamps (CLOCK_MONOTONIC), so the timeline printed at
 * the end shows where B was held back and what released it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <d3dq/d3dq.h>

#define MS 1000000ull

enum { A_START, A_END, B_START, B_AFTER_F, B_AFTER_C, NSLOTS };

static const char *const what[NSLOTS] = {
	[A_START] = "queue A: engine work starts (300 ms)",
	[A_END] = "queue A: work done, signals F = 1",
	[B_START] = "queue B: first job runs, then waits for F >= 1",
	[B_AFTER_F] = "queue B: released by A's signal, waits for C >= 1",
	[B_AFTER_C] = "queue B: released by the CPU's signal",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static int fail(const char *step, int err)
{
	fprintf(stderr, "d3dq-demo: %s: %s\n", step, strerror(-err));
	return 1;
}

static int record(struct d3dq_device *dev, struct d3dq_buffer *buf,
		  int slot, uint64_t delay_ns, struct d3dq_cmdlist **out)
{
	struct d3dq_cmdlist *l;
	int ret = d3dq_cmdlist_create(dev, &l);

	if (ret)
		return ret;
	if (delay_ns)
		ret = d3dq_cmdlist_delay(l, delay_ns);
	if (!ret)
		ret = d3dq_cmdlist_timestamp(l, buf, (uint64_t)slot * 8);
	if (!ret)
		ret = d3dq_cmdlist_close(l);
	if (ret) {
		d3dq_cmdlist_destroy(l);
		return ret;
	}
	*out = l;
	return 0;
}

int main(void)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_cmdlist *l[NSLOTS] = { 0 };
	struct d3dq_fence *f, *c, *done;
	struct d3dq_device *dev;
	struct d3dq_queue *a, *b;
	struct d3dq_buffer *buf;
	uint64_t t0, cpu_signal, ts[NSLOTS + 1];
	const char *labels[NSLOTS + 1];
	int order[NSLOTS + 1];
	int ret, i, j, n;
	volatile uint64_t *map;

	ret = d3dq_device_open(NULL, &dev);
	if (ret)
		return fail("open a d3dq render node", ret);
	if ((ret = d3dq_queue_create(dev, &desc, &a)) ||
	    (ret = d3dq_queue_create(dev, &desc, &b)) ||
	    (ret = d3dq_buffer_create(dev, 4096, &buf)) ||
	    (ret = d3dq_fence_create(dev, 0, 0, &f)) ||
	    (ret = d3dq_fence_create(dev, 0, 0, &c)) ||
	    (ret = d3dq_fence_create(dev, 0, 0, &done)))
		return fail("create objects", ret);
	map = d3dq_buffer_map(buf);
	if ((ret = record(dev, buf, A_START, 0, &l[A_START])) ||
	    (ret = record(dev, buf, A_END, 300 * MS, &l[A_END])) ||
	    (ret = record(dev, buf, B_START, 0, &l[B_START])) ||
	    (ret = record(dev, buf, B_AFTER_F, 0, &l[B_AFTER_F])) ||
	    (ret = record(dev, buf, B_AFTER_C, 0, &l[B_AFTER_C])))
		return fail("record command lists", ret);

	t0 = now_ns();
	/* Queue B first: its waits are queued before any signal exists. */
	if ((ret = d3dq_queue_execute(b, &l[B_START], 1)) ||
	    (ret = d3dq_queue_wait(b, f, 1)) ||
	    (ret = d3dq_queue_execute(b, &l[B_AFTER_F], 1)) ||
	    (ret = d3dq_queue_wait(b, c, 1)) ||
	    (ret = d3dq_queue_execute(b, &l[B_AFTER_C], 1)) ||
	    (ret = d3dq_queue_signal(b, done, 1)))
		return fail("queue B", ret);
	if ((ret = d3dq_queue_execute(a, &l[A_START], 1)) ||
	    (ret = d3dq_queue_execute(a, &l[A_END], 1)) ||
	    (ret = d3dq_queue_signal(a, f, 1)))
		return fail("queue A", ret);
	printf("all work queued in %.3f ms; no call blocked\n",
	       (double)(now_ns() - t0) / 1e6);

	/* The CPU lets queue B finish a moment after A is done. */
	ret = d3dq_fence_wait(f, 1, 10000 * MS);
	if (ret)
		return fail("wait for F", ret);
	nanosleep(&(struct timespec){ 0, 400 * MS }, NULL);
	cpu_signal = now_ns();
	ret = d3dq_fence_signal(c, 1);
	if (ret)
		return fail("signal C", ret);
	ret = d3dq_fence_wait(done, 1, 10000 * MS);
	if (ret)
		return fail("wait for queue B", ret);

	for (i = 0; i < NSLOTS; i++) {
		ts[i] = map[i];
		labels[i] = what[i];
	}
	ts[NSLOTS] = cpu_signal;
	labels[NSLOTS] = "CPU: signals C = 1";
	n = NSLOTS + 1;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && ts[order[j]] < ts[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}

	printf("\n  time (ms)  event (engine timestamps, CPU clock for the CPU)\n");
	for (i = 0; i < n; i++)
		printf("  %9.3f  %s\n", (double)(ts[order[i]] - t0) / 1e6,
		       labels[order[i]]);
	printf("\nqueue B was held back %.1f ms waiting for A and %.1f ms "
	       "waiting for the CPU\n",
	       (double)(ts[B_AFTER_F] - ts[B_START]) / 1e6,
	       (double)(ts[B_AFTER_C] - ts[B_AFTER_F]) / 1e6);

	ret = ts[B_AFTER_F] >= ts[A_END] && ts[B_AFTER_C] >= cpu_signal &&
	      ts[A_END] >= ts[A_START] + 300 * MS ? 0 : 1;
	if (ret)
		fprintf(stderr, "d3dq-demo: the order is wrong\n");

	for (i = 0; i < NSLOTS; i++)
		d3dq_cmdlist_destroy(l[i]);
	d3dq_fence_destroy(done);
	d3dq_fence_destroy(c);
	d3dq_fence_destroy(f);
	d3dq_buffer_destroy(buf);
	d3dq_queue_destroy(b);
	d3dq_queue_destroy(a);
	d3dq_device_close(dev);
	return ret;
}
