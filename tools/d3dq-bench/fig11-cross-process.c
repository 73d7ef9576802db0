// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 11: cross-process release (issue 25). Process B's
 * queue is held by Wait(F, i) on a fence shared with process A, followed
 * by Signal(G, i); a thread of B waits for G. A signals F = i from the
 * CPU. One sample: from A's signal call until B's thread returns from
 * its wait, timed in B against the time A wrote to shared memory just
 * before the call (CLOCK_MONOTONIC is one clock for both processes).
 * Baseline: the raw syncobj wake across processes, the same hop with
 * nothing in between: B's thread blocked in a timeline wait on a syncobj
 * A shared with it, A signals the point. Variants alternate.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* What the processes share: the time of A's signal and B's samples. */
struct xshared {
	_Atomic int64_t t0;
	double lat[];		/* raw, then library: 2 * n */
};

enum { RAW, LIB };

static int variant(int i)
{
	return i % 2 ? RAW : LIB;
}

/* B: its own device and file, the fences and the syncobj from A. */
static void fig11_b(struct xshared *sh, int n, int ffd, int gfd, int sfd,
		    int to_a)
{
	struct d3dq_fence *f, *g;
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	uint32_t h;
	int i;
	char c = 0;

	raw_fd = open_raw();
	dev = lib_open();
	if (raw_fd < 0 || !dev || d3dq_fence_import(dev, ffd, &f) ||
	    d3dq_fence_import(dev, gfd, &g) ||
	    drmSyncobjFDToHandle(raw_fd, sfd, &h))
		_exit(2);
	q = lib_queue(dev);
	/* Its "ready" for i + 1 also says that sample i is written. */
	for (i = 1; i <= 2 * n; i++) {
		if (variant(i) == LIB &&
		    (d3dq_queue_wait(q, f, i) || d3dq_queue_signal(q, g, i)))
			_exit(3);
		if (write(to_a, &c, 1) != 1)
			_exit(4);
		if (variant(i) == RAW) {
			if (raw_wait(h, i))
				_exit(5);
		} else if (d3dq_fence_wait(g, i, D3DQ_TIMEOUT_INFINITE)) {
			_exit(6);
		}
		sh->lat[variant(i) * n + (i - 1) / 2] =
			(double)(now_ns() - atomic_load(&sh->t0));
	}
	d3dq_queue_destroy(q);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(g);
	d3dq_device_close(dev);
	_exit(0);
}

static void fig11(void)
{
	int n = sz.lat, to_a[2], ffd, gfd, sfd, status, i, a, l;
	struct d3dq_device *dev = lib_open();
	struct d3dq_fence *f, *g;
	struct xshared *sh;
	uint32_t h = raw_syncobj();
	size_t size;
	pid_t pid;
	char c = 0;

	/* Each variant gets every other iteration: n samples each. */
	size = sizeof(*sh) + 2 * (size_t)n * sizeof(double);
	sh = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap", errno, __LINE__);
	f = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	g = lib_fence(dev, D3DQ_FENCE_FLAG_SHARED);
	CHECK(d3dq_fence_export(f, &ffd));
	CHECK(d3dq_fence_export(g, &gfd));
	CHECK(drmSyncobjHandleToFD(raw_fd, h, &sfd) ? -errno : 0);
	CHECK(pipe(to_a) ? -errno : 0);
	pid = fork();
	if (pid < 0)
		die("fork", errno, __LINE__);
	if (!pid)
		fig11_b(sh, n, ffd, gfd, sfd, to_a[1]);
	close(to_a[1]);
	close(ffd);
	close(gfd);
	close(sfd);
	for (i = 1; i <= 2 * n; i++) {
		if (read(to_a[0], &c, 1) != 1)
			die("process B", EPIPE, __LINE__);
		/* B's thread (or queue) is asleep in the kernel. */
		sleep_ns(SETTLE_NS);
		atomic_store(&sh->t0, now_ns());
		if (variant(i) == RAW)
			CHECK(raw_signal(h, i));
		else
			CHECK(d3dq_fence_signal(f, i));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("process B", ECHILD, __LINE__);
	close(to_a[0]);
	raw_syncobj_destroy(h);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(g);
	d3dq_device_close(dev);

	a = add_row(11, "xproc_raw_wake",
		    "(a) raw syncobj wake, process A -> B", "ns",
		    memcpy(samples(n), sh->lat, n * sizeof(double)), n);
	l = add_row(11, "xproc_lib",
		    "library: B's queue Wait, Signal; A's CPU Signal", "ns",
		    memcpy(samples(n), sh->lat + n, n * sizeof(double)), n);
	add_cmp(11, l, a, "cross-process release: library / (a) raw wake",
		1.5);
	add_note(11, "timed in process B from the moment A called Signal: B's queue armed by the kernel, its next job run, B's waiting thread woken");
	munmap(sh, size);
}

static int fig11_plot(FILE *gp)
{
	static const char *const keys[] = { "xproc_raw_wake", "xproc_lib" };
	static const char *const titles[] = { "(a) raw syncobj wake",
					      "library" };

	plot_latency(gp, "11. cross-process release (A's CPU signal -> B's queue done)",
		     keys, titles, 2);
	return 1;
}

BENCH_FIGURE(11, "cross-process: a CPU signal in A releases B's queue",
	     fig11, fig11_plot)
