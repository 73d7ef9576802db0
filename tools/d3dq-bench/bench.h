/* SPDX-License-Identifier: MIT */
/*
 * d3dq-bench: what the harness gives every figure.
 *
 * A figure is one file: it defines a function that measures the library
 * and its baselines and reports rows, ratios and notes, an optional one
 * that writes its plot panels, and registers both with BENCH_FIGURE().
 * Nothing else needs to know about it.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_BENCH_H
#define D3DQ_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <xf86drm.h>

#include "d3dq_drm.h"
#include <d3dq/d3dq.h>

#define EXIT_NO_DEVICE 4
#define MS 1000000ull

/*
 * Variants that are compared sleep this long before the timed signal, so
 * that the thread to be woken (a waiter, a poller, the library's worker)
 * is asleep in the kernel, as it would be in an application.
 */
#define SETTLE_NS 300000ull

/* Iteration counts; --smoke makes them small. */
struct sizes {
	int lat;		/* latency figures: samples per variant */
	int cross;		/* figure 2 */
	int submit;		/* figure 3, per thread */
	int gcv_batches;	/* figure 4, batches of gcv_batch calls */
	int gcv_batch;
	int query_batch;
	int pending;		/* figure 4, signals in flight */
	int scale_reps;		/* figure 6 */
	int scale_max;		/* largest N of figure 6 */
	long long long_signals;	/* figure 7 */
	int idle_queues;	/* figure 8 */
	int idle_fences;
	int frames;		/* figure 9, per variant */
	long nodes_max;		/* figure 12: most nodes parked (0: the bound) */
	int node_reps;		/* figure 12: signals per N at or below */
};

extern struct sizes sz;
extern bool smoke;
extern int raw_fd;		/* the render node, opened for the baselines */
extern uint64_t job_timeout_ns;
extern bool has_syncobj_eventfd;
extern const char *data_dir;	/* --data, or NULL */

/* --- figures ---------------------------------------------------------- */

struct figure {
	int num;
	const char *name;		/* short, for --help */
	void (*run)(void);
	/*
	 * Plot panels: gnuplot commands, each panel one "plot" from the data
	 * the figure wrote to data_dir; returns the number of panels.
	 */
	int (*plot)(FILE *gp);
	bool want, ran;			/* harness */
	bool skipped;			/* bench_skip() */
	struct figure *next;
};

void bench_register(struct figure *f);

#define BENCH_FIGURE(n, nm, runfn, plotfn)				\
	static struct figure figure_##n = {				\
		.num = (n), .name = (nm), .run = (runfn),		\
		.plot = (plotfn),					\
	};								\
	__attribute__((constructor)) static void register_##n(void)	\
	{								\
		bench_register(&figure_##n);				\
	}

/* --- results (harness.c) ------------------------------------------------ */

/*
 * A row from @n samples (the harness takes them over and sorts them);
 * returns its index. Rows with unit "ns" and at least 10 samples get a
 * latency distribution in data_dir (lat-KEY.dat) unless @fig is a
 * throughput figure (see bench_no_quantiles()).
 */
int add_row(int fig, const char *key, const char *label, const char *unit,
	    double *v, long n);
/* A row of one value; @delta: a difference, may be zero or negative. */
int add_value(int fig, const char *key, const char *label, const char *unit,
	      double value, bool delta);
/* ratio = median(@a) / median(@b); @max the target (0: none). */
void add_cmp(int fig, int a, int b, const char *label, double max);
/* The same with a target the ratio must at least reach. */
void add_cmp_min(int fig, int a, int b, const char *label, double min);
void add_note(int fig, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The figure cannot be measured here (a driver or feature this system
 * lacks): a note says why, and it reports no rows. The JSON lists it under
 * "skipped" instead of "figures".
 */
void bench_skip(int fig, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double row_median(int row);
double row_p99(int row);
long row_n(int row);
/* No latency distributions for this figure's rows (batches, per call). */
void bench_no_quantiles(int fig);

/* Zeroed room for @n samples (exits when out of memory). */
double *samples(long n);

/* Plot helpers: a data file's path; a latency curve if its data exists. */
const char *data_path(char *buf, size_t len, const char *name);
void plot_latency(FILE *gp, const char *title, const char *const *keys,
		  const char *const *titles, int n);

/* --- system calls and sleeps on a path (count.c) --------------------------- */

/*
 * ioctls made by the calling thread; its voluntary context switches
 * (sleeps: each ends with a wake-up) and those of the whole process.
 */
struct counts {
	uint64_t ioctls;
	long sleeps, process_sleeps;
};

struct counts counts_now(void);
void add_counts(int fig, const char *key, const char *what,
		struct counts a, struct counts b, long n);

/* --- errors, time ------------------------------------------------------- */

void die_at(const char *what, int err, const char *file, int line)
	__attribute__((noreturn));
#define die(what, err, line) die_at(what, err, __FILE__, line)

#define CHECK(x) do { int r_ = (x); if (r_) die(#x, r_, __LINE__); } while (0)
#define CHECK_PTR(p) do { if (!(p)) die(#p, ENOMEM, __LINE__); } while (0)

int64_t now_ns(void);
void sleep_ns(uint64_t ns);

/* --- raw driver interface (raw.c): the baselines ------------------------- */

int xioctl(unsigned long req, void *arg);
int open_raw(void);
uint64_t get_param(uint32_t param);
uint32_t raw_syncobj(void);
void raw_syncobj_destroy(uint32_t h);
int raw_signal(uint32_t h, uint64_t point);
int raw_wait(uint32_t h, uint64_t point);
int raw_query(uint32_t h, uint64_t *point);
uint32_t raw_queue(void);
void raw_queue_destroy(uint32_t id);
/* One job: optional timeline wait (@wh 0: none), commands, one signal. */
int raw_submit(uint32_t queue, uint32_t wh, uint64_t wp, uint32_t sh,
	       uint64_t sp, const void *cmds, uint32_t bytes);
bool probe_syncobj_eventfd(void);
/*
 * The module parameter direct_submit (uapi.rst, "Direct submission"):
 * get: 1 or 0, set: 0; or -errno (not root, a module without it).
 */
int get_direct_submit(void);
int set_direct_submit(bool on);

struct raw_bo {
	uint32_t handle;
	volatile uint64_t *map;
};

struct raw_bo raw_bo_create(void);
void raw_bo_destroy(struct raw_bo bo);

/* One WRITE64 of @value at @offset of @bo, as a command. */
struct drm_d3dq_cmd_write64 raw_write64(struct raw_bo *bo, uint64_t offset,
					uint64_t value);

/* --- process and kernel memory (raw.c) ----------------------------------- */

int thread_count(void);

struct mem {
	long rss, slab, sunreclaim, kstack, vmalloc;
};

struct mem mem_now(void);

/*
 * The kernel's preemption model, the word in parentheses of debugfs's
 * sched/preempt ("none voluntary (full)"), or "" if it cannot be read.
 */
void preempt_model(char *buf, size_t len);

/* --- library helpers (raw.c) --------------------------------------------- */

struct d3dq_device *lib_open(void);
struct d3dq_queue *lib_queue(struct d3dq_device *dev);
struct d3dq_fence *lib_fence(struct d3dq_device *dev, uint32_t flags);
/* A closed list of one WRITE64 of @value at @offset of @buf. */
struct d3dq_cmdlist *lib_list_write64(struct d3dq_device *dev,
				      struct d3dq_buffer *buf,
				      uint64_t offset, uint64_t value);

/* --- shared between figures ---------------------------------------------- */

/*
 * Figure 1's library variant (fig1-wait-release.c): a queue held by
 * Wait(f, i), then Execute (one WRITE64) and Signal(d, i); one sample is
 * the time from the CPU's Signal(f, i) until Wait(d, i) returns.
 */
struct wait_release {
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *d;
	struct d3dq_buffer *buf;
	struct d3dq_cmdlist *l;
};

void wait_release_open(struct wait_release *h, struct d3dq_device *dev);
double wait_release_one(struct wait_release *h, int i);
void wait_release_close(struct wait_release *h);

#endif /* D3DQ_BENCH_H */
