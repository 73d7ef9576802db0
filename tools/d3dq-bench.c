// SPDX-License-Identifier: MIT
/*
 * d3dq-bench: latency, throughput and scaling of libd3dq, each figure
 * measured beside a baseline on the raw driver interface in the same run.
 *
 * Under an emulator the absolute times mean little; the ratios to the
 * baselines are the result. Documentation/performance.rst explains each
 * figure; "make bench" runs this program in the VM on every kernel.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "d3dq_drm.h"
#include <d3dq/d3dq.h>
#include "compat/drm_syncobj_eventfd.h"

#define EXIT_NO_DEVICE 4
#define MS 1000000ull

/* Iteration counts; --smoke divides them. */
struct sizes {
	int lat;		/* figures 1, 5 */
	int cross;		/* figure 2 */
	int submit;		/* figure 3, per thread */
	int gcv_batches;	/* figure 4, batches of gcv_batch calls */
	int gcv_batch;
	int query_batch;
	int pending;		/* figure 4, signals in flight */
	int scale_reps;		/* figure 6 */
	int scale_max;		/* largest N of figure 6 */
	long long long_signals;	/* figure 7 */
};

static const struct sizes full_sizes = {
	.lat = 1000, .cross = 400, .submit = 4000, .gcv_batches = 400,
	.gcv_batch = 2000, .query_batch = 50, .pending = 1000,
	.scale_reps = 3, .scale_max = 1024, .long_signals = 1000000,
};

static const struct sizes smoke_sizes = {
	.lat = 20, .cross = 10, .submit = 100, .gcv_batches = 20,
	.gcv_batch = 1000, .query_batch = 20, .pending = 100,
	.scale_reps = 1, .scale_max = 64, .long_signals = 2000,
};

static struct sizes sz;
static bool smoke;
static int raw_fd = -1;
static uint64_t job_timeout_ns;
static bool has_syncobj_eventfd;
static const char *data_dir;

/* --- results ------------------------------------------------------------ */

struct row {
	int fig;
	char key[48];
	char label[72];
	char unit[12];
	double median, p99;
	long n;
	bool delta;		/* a difference: may be zero or negative */
	double *samples;	/* sorted, for the distribution plots */
};

struct cmp {
	int fig;
	int a, b;		/* rows: ratio = a.median / b.median */
	char label[72];
	double max;		/* target ratio, 0 = none */
};

struct note {
	int fig;
	char text[200];
};

static struct row rows[128];
static int nrows;
static struct cmp cmps[64];
static int ncmps;
static struct note notes[32];
static int nnotes;

static void die(const char *what, int err, int line)
{
	fprintf(stderr, "d3dq-bench: line %d: %s: %s\n", line, what,
		strerror(err < 0 ? -err : err));
	exit(1);
}

#define CHECK(x) do { int r_ = (x); if (r_) die(#x, r_, __LINE__); } while (0)
#define CHECK_PTR(p) do { if (!(p)) die(#p, ENOMEM, __LINE__); } while (0)

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Adds a row from samples (taken over); returns its index. */
static int add_row(int fig, const char *key, const char *label,
		   const char *unit, double *v, long n)
{
	struct row *r;
	long i99;

	if (nrows == (int)(sizeof(rows) / sizeof(rows[0])))
		die("too many rows", ENOSPC, __LINE__);
	r = &rows[nrows];
	memset(r, 0, sizeof(*r));
	r->fig = fig;
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->label, sizeof(r->label), "%s", label);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	qsort(v, n, sizeof(*v), cmp_double);
	r->n = n;
	r->samples = v;
	if (n) {
		r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		i99 = (99 * n + 99) / 100 - 1;	/* ceil(0.99 n) - 1 */
		r->p99 = v[i99 < 0 ? 0 : i99];
	} else {
		r->median = r->p99 = NAN;
	}
	return nrows++;
}

static int add_value(int fig, const char *key, const char *label,
		     const char *unit, double value, bool delta)
{
	double *v = malloc(sizeof(*v));
	int i;

	CHECK_PTR(v);
	*v = value;
	i = add_row(fig, key, label, unit, v, 1);
	rows[i].delta = delta;
	return i;
}

static void add_cmp(int fig, int a, int b, const char *label, double max)
{
	struct cmp *c = &cmps[ncmps++];

	c->fig = fig;
	c->a = a;
	c->b = b;
	c->max = max;
	snprintf(c->label, sizeof(c->label), "%s", label);
}

static void __attribute__((format(printf, 2, 3)))
add_note(int fig, const char *fmt, ...)
{
	va_list ap;

	if (nnotes == (int)(sizeof(notes) / sizeof(notes[0])))
		return;
	notes[nnotes].fig = fig;
	va_start(ap, fmt);
	vsnprintf(notes[nnotes].text, sizeof(notes[nnotes].text), fmt, ap);
	va_end(ap);
	nnotes++;
}

static double *samples(long n)
{
	double *v = calloc(n ? n : 1, sizeof(*v));

	CHECK_PTR(v);
	return v;
}

/* --- raw driver interface (baselines) ------------------------------------ */

static int xioctl(unsigned long req, void *arg)
{
	return drmIoctl(raw_fd, req, arg) ? -errno : 0;
}

static int open_raw(void)
{
	char name[64];
	int i, fd;

	for (i = 128; i < 192; i++) {
		drmVersionPtr v;
		bool ok;

		snprintf(name, sizeof(name), "%s/renderD%d", DRM_DIR_NAME, i);
		fd = open(name, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		ok = v && v->name && !strcmp(v->name, "d3dq");
		drmFreeVersion(v);
		if (ok)
			return fd;
		close(fd);
	}
	return -1;
}

static uint64_t get_param(uint32_t param)
{
	struct drm_d3dq_get_param p = { .param = param };

	CHECK(xioctl(DRM_IOCTL_D3DQ_GET_PARAM, &p));
	return p.value;
}

static uint32_t raw_syncobj(void)
{
	struct drm_syncobj_create c = { 0 };

	CHECK(xioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c));
	return c.handle;
}

static void raw_syncobj_destroy(uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	xioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static int raw_signal(uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

static int raw_wait(uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.timeout_nsec = INT64_MAX,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

static int raw_query(uint32_t h, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

static uint32_t raw_queue(void)
{
	struct drm_d3dq_queue_create c = { 0 };

	CHECK(xioctl(DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	return c.id;
}

static void raw_queue_destroy(uint32_t id)
{
	struct drm_d3dq_queue_destroy d = { .id = id };

	xioctl(DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d);
}

/* One job: optional timeline wait, commands, timeline signal. */
static int raw_submit(uint32_t queue, uint32_t wh, uint64_t wp, uint32_t sh,
		      uint64_t sp, const void *cmds, uint32_t bytes)
{
	struct drm_d3dq_sync w = { wh, DRM_D3DQ_SYNC_TIMELINE, wp };
	struct drm_d3dq_sync s = { sh, DRM_D3DQ_SYNC_TIMELINE, sp };
	struct drm_d3dq_submit a = {
		.queue_id = queue,
		.waits = DRM_D3DQ_OBJ_ARRAY(wh ? 1 : 0, &w),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, &s),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = bytes,
	};

	if (!wh)
		a.waits.stride = 0;
	return xioctl(DRM_IOCTL_D3DQ_SUBMIT, &a);
}

static bool probe_syncobj_eventfd(void)
{
	struct drm_syncobj_eventfd a = { 0 };
	uint32_t h = raw_syncobj();
	int efd = eventfd(0, EFD_CLOEXEC);
	bool ok;

	a.handle = h;
	a.fd = efd;
	ok = efd >= 0 && !xioctl(DRM_IOCTL_SYNCOBJ_EVENTFD, &a);
	raw_syncobj_destroy(h);
	if (efd >= 0)
		close(efd);
	return ok;
}

/* --- process and kernel memory -------------------------------------------- */

static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A "Name: value kB" field of a /proc file, in KiB; -1 if absent. */
static long proc_kb(const char *path, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct mem {
	long rss, slab, sunreclaim, kstack, vmalloc;
};

static struct mem mem_now(void)
{
	struct mem m = {
		.rss = proc_kb("/proc/self/status", "VmRSS"),
		.slab = proc_kb("/proc/meminfo", "Slab"),
		.sunreclaim = proc_kb("/proc/meminfo", "SUnreclaim"),
		.kstack = proc_kb("/proc/meminfo", "KernelStack"),
		.vmalloc = proc_kb("/proc/meminfo", "VmallocUsed"),
	};

	return m;
}

/* --- library helpers -------------------------------------------------------- */

static struct d3dq_queue *lib_queue(struct d3dq_device *dev)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_queue *q;

	CHECK(d3dq_queue_create(dev, &desc, &q));
	return q;
}

static struct d3dq_fence *lib_fence(struct d3dq_device *dev, uint32_t flags)
{
	struct d3dq_fence *f;

	CHECK(d3dq_fence_create(dev, 0, flags, &f));
	return f;
}

static struct d3dq_device *lib_open(void)
{
	struct d3dq_device *dev;

	CHECK(d3dq_device_open(NULL, &dev));
	return dev;
}

/*
 * Figures 1, 2 and 5 interleave their variants: iteration i runs one
 * sample of each, in an order that rotates with i, so that a change of
 * load on the host (QEMU's vCPUs are host threads) hits every variant
 * alike and the ratios stay meaningful.
 */
#define SETTLE_NS 300000ull	/* before a signal: let the waiter sleep */

struct raw_bo {
	uint32_t handle;
	volatile uint64_t *map;
};

static struct raw_bo raw_bo_create(void)
{
	struct drm_d3dq_bo_create c = { .size = 4096 };
	struct drm_d3dq_bo_mmap_offset o = { 0 };
	struct raw_bo bo;
	void *p;

	CHECK(xioctl(DRM_IOCTL_D3DQ_BO_CREATE, &c));
	o.handle = c.handle;
	CHECK(xioctl(DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &o));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, raw_fd,
		 (off_t)o.offset);
	if (p == MAP_FAILED)
		die("mmap", errno, __LINE__);
	bo.handle = c.handle;
	bo.map = p;
	return bo;
}

static void raw_bo_destroy(struct raw_bo bo)
{
	struct drm_gem_close c = { .handle = bo.handle };

	munmap((void *)bo.map, 4096);
	xioctl(DRM_IOCTL_GEM_CLOSE, &c);
}

/* --- figure 1: wait release ------------------------------------------------ */

/* Baseline (a): a thread blocked in TIMELINE_WAIT, the main thread signals. */
struct waker {
	uint32_t handle;
	int n;
	double *lat;
	pthread_t thread;
	_Atomic int ready;	/* iteration the thread is about to wait for */
	_Atomic int64_t t0;
	sem_t done;
};

static void *waker_main(void *arg)
{
	struct waker *w = arg;
	int i;

	for (i = 1; i <= w->n; i++) {
		atomic_store(&w->ready, i);
		CHECK(raw_wait(w->handle, i));
		w->lat[i - 1] = (double)(now_ns() - atomic_load(&w->t0));
		sem_post(&w->done);
	}
	return NULL;
}

static void wake_one(struct waker *w, int i)
{
	while (atomic_load(&w->ready) != i)
		sched_yield();
	/* Let it reach the kernel and sleep. */
	sleep_ns(SETTLE_NS);
	atomic_store(&w->t0, now_ns());
	CHECK(raw_signal(w->handle, i));
	sem_wait(&w->done);
}

/*
 * Baseline (b): signal W, submit a job (one WRITE64) waiting on W and
 * signalling D, wait for D.
 */
struct chain {
	uint32_t wsync, dsync, q;
	struct raw_bo bo;
};

static double chain_one(struct chain *c, int i)
{
	struct drm_d3dq_cmd_write64 w = {
		{ DRM_D3DQ_CMD_WRITE64, sizeof(w) }, c->bo.handle, 0, 0, i,
	};
	int64_t t0;

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(raw_signal(c->wsync, i));
	CHECK(raw_submit(c->q, c->wsync, i, c->dsync, i, &w, sizeof(w)));
	CHECK(raw_wait(c->dsync, i));
	return (double)(now_ns() - t0);
}

/*
 * Library: queue held by Wait(F, i), then its next job (Execute of one
 * WRITE64) and Signal(D, i); the CPU signals F.
 */
struct held {
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *d;
	struct d3dq_buffer *buf;
	struct d3dq_cmdlist *l;
};

static double held_one(struct held *h, int i)
{
	int64_t t0;

	CHECK(d3dq_queue_wait(h->q, h->f, i));
	CHECK(d3dq_queue_execute(h->q, &h->l, 1));
	CHECK(d3dq_queue_signal(h->q, h->d, i));
	sleep_ns(SETTLE_NS);
	if (d3dq_fence_get_completed_value(h->d) >= (uint64_t)i)
		die("queue not held", EINVAL, __LINE__);
	t0 = now_ns();
	CHECK(d3dq_fence_signal(h->f, i));
	CHECK(d3dq_fence_wait(h->d, i, D3DQ_TIMEOUT_INFINITE));
	return (double)(now_ns() - t0);
}

static void fig1(void)
{
	int n = sz.lat, i, k, a, b, l;
	struct waker w = { .handle = raw_syncobj(), .n = n, .lat = samples(n) };
	struct chain c = { raw_syncobj(), raw_syncobj(), raw_queue(),
			   raw_bo_create() };
	struct held h;
	double *lb = samples(n), *ll = samples(n);

	h.dev = lib_open();
	h.q = lib_queue(h.dev);
	h.f = lib_fence(h.dev, 0);
	h.d = lib_fence(h.dev, 0);
	CHECK(d3dq_buffer_create(h.dev, 4096, &h.buf));
	CHECK(d3dq_cmdlist_create(h.dev, &h.l));
	CHECK(d3dq_cmdlist_write64(h.l, h.buf, 0, 1));
	CHECK(d3dq_cmdlist_close(h.l));
	sem_init(&w.done, 0, 0);
	CHECK(pthread_create(&w.thread, NULL, waker_main, &w));
	for (i = 1; i <= n; i++)
		for (k = 0; k < 3; k++)
			switch ((i + k) % 3) {
			case 0:
				wake_one(&w, i);
				break;
			case 1:
				lb[i - 1] = chain_one(&c, i);
				break;
			case 2:
				ll[i - 1] = held_one(&h, i);
				break;
			}
	pthread_join(w.thread, NULL);
	sem_destroy(&w.done);
	raw_syncobj_destroy(w.handle);
	raw_queue_destroy(c.q);
	raw_syncobj_destroy(c.wsync);
	raw_syncobj_destroy(c.dsync);
	raw_bo_destroy(c.bo);
	d3dq_queue_destroy(h.q);
	d3dq_fence_destroy(h.f);
	d3dq_fence_destroy(h.d);
	d3dq_cmdlist_destroy(h.l);
	d3dq_buffer_destroy(h.buf);
	d3dq_device_close(h.dev);

	a = add_row(1, "wait_raw_wake", "(a) raw syncobj wake", "ns", w.lat, n);
	b = add_row(1, "wait_raw_chain", "(b) raw ioctl chain", "ns", lb, n);
	l = add_row(1, "wait_lib", "library: Wait, Signal; CPU Signal", "ns",
		    ll, n);
	add_cmp(1, l, b, "wait release: library / (b) raw chain", 1.2);
	add_cmp(1, l, a, "wait release: library / (a) raw wake", 3.0);
	add_cmp(1, b, a, "wait release: (b) raw chain / (a) raw wake", 0);
}

/* --- figure 8: sharing the engine ----------------------------------------- */

/*
 * Another client (a file of its own) keeps the engine busy: 8 queues, each
 * with two 4 MiB FILL jobs in flight. This client's small job (one
 * WRITE64) waits for its turn: the driver goes round the clients, so it
 * waits for at most the step running when it arrives (256 KiB of work).
 */
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
		f->rounds++;
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

/* Submit one WRITE64 signalling (D, i) and wait for it. */
static double small_job_one(struct chain *c, int i)
{
	struct drm_d3dq_cmd_write64 w = {
		{ DRM_D3DQ_CMD_WRITE64, sizeof(w) }, c->bo.handle, 0, 0, i,
	};
	int64_t t0;

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(raw_submit(c->q, 0, 0, c->dsync, i, &w, sizeof(w)));
	CHECK(raw_wait(c->dsync, i));
	return (double)(now_ns() - t0);
}

static void fig8(void)
{
	int n = sz.lat / 2, i, idle, busy, step;
	struct chain c = { 0, raw_syncobj(), raw_queue(), raw_bo_create() };
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
	raw_syncobj_destroy(c.dsync);
	raw_bo_destroy(c.bo);

	idle = add_row(8, "engine_small_idle", "small job, engine idle", "ns",
		       li, n);
	busy = add_row(8, "engine_small_flooded",
		       "small job, other client floods (8 queues)", "ns", lf,
		       n);
	step = add_value(8, "engine_step", "engine step (256 KiB) under flood",
			 "ns", t_step, false);
	add_cmp(8, busy, idle, "small job: flooded / idle", 0);
	add_cmp(8, busy, step, "small job flooded, in engine steps", 0);
	add_note(8, "bound: a client's job waits at most one step of each other "
		 "ready client of its priority per turn (uapi.rst, Queues)");
}

/* --- figure 2: cross-queue ----------------------------------------------- */

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

	b = add_row(2, "cross_raw", "(b) raw chain, two queues", "ns", lr, n);
	x = add_row(2, "cross_lib", "library: A Signal, B Wait", "ns", ll, n);
	add_cmp(2, x, b, "cross-queue: library / raw chain", 0);
}

/* --- figure 3: submit cost -------------------------------------------------- */

enum sub_mode { SUB_LIB, SUB_LIB_CMD, SUB_GET_PARAM, SUB_RAW };

struct sub_thread {
	pthread_t thread;
	enum sub_mode mode;
	struct d3dq_queue *q;
	struct d3dq_fence *f;
	struct d3dq_cmdlist *empty;
	uint32_t rq, rtl;
	int n;
	double *lat;
	int64_t start, end;
	pthread_barrier_t *bar;
};

static void *sub_main(void *arg)
{
	struct sub_thread *t = arg;
	struct drm_d3dq_get_param p = { .param = DRM_D3DQ_PARAM_UAPI_VERSION };
	int64_t t0;
	int i;

	pthread_barrier_wait(t->bar);
	t->start = now_ns();
	for (i = 0; i < t->n; i++) {
		t0 = now_ns();
		switch (t->mode) {
		case SUB_LIB:
		case SUB_LIB_CMD:
			CHECK(d3dq_queue_execute(t->q, &t->empty, 1));
			CHECK(d3dq_queue_signal(t->q, t->f, i + 1));
			break;
		case SUB_GET_PARAM:
			CHECK(xioctl(DRM_IOCTL_D3DQ_GET_PARAM, &p));
			break;
		case SUB_RAW:
			CHECK(raw_submit(t->rq, 0, 0, t->rtl, i + 1, NULL, 0));
			break;
		}
		t->lat[i] = (double)(now_ns() - t0);
	}
	t->end = now_ns();
	return NULL;
}

/* Runs nthreads; returns the row of per-call times and sets *rate. */
static int sub_run(enum sub_mode mode, int nthreads, bool one_queue,
		   const char *key, const char *label, double *rate)
{
	bool lib = mode == SUB_LIB || mode == SUB_LIB_CMD;
	struct d3dq_device *dev = lib ? lib_open() : NULL;
	struct sub_thread t[4];
	struct d3dq_queue *shared_q = NULL;
	struct d3dq_cmdlist *empty = NULL;
	struct d3dq_buffer *buf = NULL;
	pthread_barrier_t bar;
	int64_t start = INT64_MAX, end = 0;
	double *all = samples((long)nthreads * sz.submit);
	int i, j;

	if (dev) {
		/* SUB_LIB_CMD: a list of one WRITE64, so every call submits. */
		CHECK(d3dq_cmdlist_create(dev, &empty));
		if (mode == SUB_LIB_CMD) {
			CHECK(d3dq_buffer_create(dev, 4096, &buf));
			CHECK(d3dq_cmdlist_write64(empty, buf, 0, 1));
		}
		CHECK(d3dq_cmdlist_close(empty));
		if (one_queue)
			shared_q = lib_queue(dev);
	}
	pthread_barrier_init(&bar, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].mode = mode;
		t[i].n = sz.submit;
		t[i].lat = samples(sz.submit);
		t[i].bar = &bar;
		t[i].empty = empty;
		if (dev) {
			t[i].q = shared_q ? shared_q : lib_queue(dev);
			t[i].f = lib_fence(dev, 0);
		} else if (mode == SUB_RAW) {
			t[i].rq = raw_queue();
			t[i].rtl = raw_syncobj();
		}
		CHECK(pthread_create(&t[i].thread, NULL, sub_main, &t[i]));
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i].thread, NULL);
		if (t[i].start < start)
			start = t[i].start;
		if (t[i].end > end)
			end = t[i].end;
		for (j = 0; j < sz.submit; j++)
			all[(long)i * sz.submit + j] = t[i].lat[j];
		free(t[i].lat);
	}
	*rate = (double)nthreads * sz.submit * 1e9 / (double)(end - start);
	for (i = 0; i < nthreads; i++) {
		if (dev) {
			CHECK(d3dq_fence_wait(t[i].f, sz.submit,
					      D3DQ_TIMEOUT_INFINITE));
			d3dq_fence_destroy(t[i].f);
			if (!shared_q)
				d3dq_queue_destroy(t[i].q);
		} else if (mode == SUB_RAW) {
			CHECK(raw_wait(t[i].rtl, sz.submit));
			raw_queue_destroy(t[i].rq);
			raw_syncobj_destroy(t[i].rtl);
		}
	}
	pthread_barrier_destroy(&bar);
	if (dev) {
		d3dq_queue_destroy(shared_q);
		d3dq_cmdlist_destroy(empty);
		d3dq_buffer_destroy(buf);
		d3dq_device_close(dev);
	}
	return add_row(3, key, label, "ns", all, (long)nthreads * sz.submit);
}

static void submit_write_dat(const double rates[3][3])
{
	static const int threads[] = { 1, 2, 4 };
	char path[512];
	FILE *f;
	int i;

	if (!data_dir)
		return;
	snprintf(path, sizeof(path), "%s/submit.dat", data_dir);
	f = fopen(path, "w");
	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "# threads get_param_per_s lib_one_queue_per_s lib_queue_each_per_s\n");
	for (i = 0; i < 3; i++)
		fprintf(f, "%d %.0f %.0f %.0f\n", threads[i], rates[i][0],
			rates[i][1], rates[i][2]);
	fclose(f);
}

static void fig3(void)
{
	static const int threads[] = { 1, 2, 4 };
	char key[48], label[72];
	double rate, rates[3][3];
	int lib1 = -1, gp1 = -1, r, k;
	size_t i;

	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		int n = threads[i];

		snprintf(key, sizeof(key), "submit_get_param_t%d", n);
		snprintf(label, sizeof(label), "GET_PARAM ioctl, %d thread%s",
			 n, n > 1 ? "s" : "");
		r = sub_run(SUB_GET_PARAM, n, false, key, label, &rate);
		rates[i][0] = rate;
		if (n == 1)
			gp1 = r;
		snprintf(key, sizeof(key), "rate_get_param_t%d", n);
		snprintf(label, sizeof(label), "GET_PARAM calls/s, %d thread%s",
			 n, n > 1 ? "s" : "");
		k = add_value(3, key, label, "calls/s", rate, false);

		snprintf(key, sizeof(key), "submit_lib_oneq_t%d", n);
		snprintf(label, sizeof(label),
			 "library Execute(empty)+Signal, %d thr, 1 queue", n);
		r = sub_run(SUB_LIB, n, true, key, label, &rate);
		rates[i][1] = rates[i][2] = rate;
		if (n == 1)
			lib1 = r;
		snprintf(key, sizeof(key), "rate_lib_oneq_t%d", n);
		snprintf(label, sizeof(label), "library calls/s, %d thr, 1 queue",
			 n);
		r = add_value(3, key, label, "calls/s", rate, false);
		snprintf(label, sizeof(label),
			 "calls/s, %d thr: library 1 queue / GET_PARAM", n);
		add_cmp(3, r, k, label, 0);
		if (n == 1)
			continue;
		snprintf(key, sizeof(key), "submit_lib_qpt_t%d", n);
		snprintf(label, sizeof(label),
			 "library Execute(empty)+Signal, %d thr, queue each",
			 n);
		sub_run(SUB_LIB, n, false, key, label, &rate);
		rates[i][2] = rate;
		snprintf(key, sizeof(key), "rate_lib_qpt_t%d", n);
		snprintf(label, sizeof(label),
			 "library calls/s, %d thr, queue each", n);
		r = add_value(3, key, label, "calls/s", rate, false);
		snprintf(label, sizeof(label),
			 "calls/s, %d thr: library queue each / GET_PARAM", n);
		add_cmp(3, r, k, label, 0);
	}
	submit_write_dat(rates);
	r = sub_run(SUB_RAW, 1, false, "submit_raw_t1",
		    "raw SUBMIT (empty job, 1 signal), 1 thread", &rate);
	k = sub_run(SUB_LIB_CMD, 1, true, "submit_lib_cmd_t1",
		    "library Execute(1 WRITE64)+Signal, 1 thread", &rate);
	add_cmp(3, lib1, gp1, "submit: library / GET_PARAM", 5.0);
	add_cmp(3, lib1, r, "submit: library / raw SUBMIT", 0);
	add_cmp(3, r, gp1, "submit: raw SUBMIT / GET_PARAM", 0);
	add_cmp(3, k, r, "submit: library, 1 command / raw SUBMIT", 0);
}

/* --- figure 4: GetCompletedValue ---------------------------------------- */

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
			"GetCompletedValue, shared fence (a QUERY)");

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
	CHECK(raw_submit(rq, 0, 0, h, 6, &cmd, sizeof(cmd)));
	for (i = 2; i <= sz.pending; i++)
		CHECK(raw_submit(rq, 0, 0, h, 5 + i, NULL, 0));
	qp = query_measure(h, "gcv_query_pending",
			   "SYNCOBJ_QUERY, points pending",
			   t0 + (int64_t)pending_delay_ns() * 8 / 10);
	CHECK(raw_query(h, &point));
	if (point != 5 || !rows[qp].n)
		add_note(4, "the raw pending points completed during the measurement");
	add_note(4, "%d signals pending: library queue signals (pending updates), raw timeline points", sz.pending);

	CHECK(d3dq_fence_wait(f, 5 + sz.pending, D3DQ_TIMEOUT_INFINITE));
	CHECK(raw_wait(h, 5 + sz.pending));
	add_cmp(4, l0, q0, "GetCompletedValue / QUERY, idle", 0.05);
	add_cmp(4, lp, qp, "GetCompletedValue / QUERY, pending", 0.05);
	add_cmp(4, s, q0, "shared-fence GetCompletedValue / QUERY", 0);
	d3dq_cmdlist_destroy(delay);
	d3dq_queue_destroy(q);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(sf);
	d3dq_device_close(dev);
	raw_queue_destroy(rq);
	raw_syncobj_destroy(h);
}

/* --- figure 5: event latency -------------------------------------------- */

enum ev_mode { EV_RAW_EVENTFD, EV_RAW_SYNCOBJ, EV_LIB };

/* One variant: a thread sleeping in poll() on an eventfd. */
struct ev {
	enum ev_mode mode;
	struct d3dq_fence *f;	/* EV_LIB */
	uint32_t h;		/* EV_RAW_SYNCOBJ */
	int efd;
	int n;
	double *lat;
	pthread_t thread;
	_Atomic int ready;
	_Atomic int64_t t0;
	sem_t done;
};

static void *ev_main(void *arg)
{
	struct ev *e = arg;
	struct pollfd p = { .fd = e->efd, .events = POLLIN };
	uint64_t v;
	int i;

	for (i = 1; i <= e->n; i++) {
		atomic_store(&e->ready, i);
		while (poll(&p, 1, -1) != 1)
			;
		e->lat[i - 1] = (double)(now_ns() - atomic_load(&e->t0));
		if (read(e->efd, &v, sizeof(v)) != sizeof(v))
			die("read eventfd", errno, __LINE__);
		sem_post(&e->done);
	}
	return NULL;
}

static void ev_start(struct ev *e, enum ev_mode mode, struct d3dq_fence *f)
{
	memset(e, 0, sizeof(*e));
	e->mode = mode;
	e->f = f;
	e->n = sz.lat;
	e->lat = samples(sz.lat);
	e->h = mode == EV_RAW_SYNCOBJ ? raw_syncobj() : 0;
	e->efd = eventfd(0, EFD_CLOEXEC);
	if (e->efd < 0)
		die("eventfd", errno, __LINE__);
	sem_init(&e->done, 0, 0);
	CHECK(pthread_create(&e->thread, NULL, ev_main, e));
}

static void ev_one(struct ev *e, int i)
{
	struct drm_syncobj_eventfd k = { .handle = e->h, .point = i,
					 .fd = e->efd };
	uint64_t one = 1;

	if (e->mode == EV_LIB)
		CHECK(d3dq_fence_set_event_on_completion(e->f, i, e->efd));
	if (e->mode == EV_RAW_SYNCOBJ)
		CHECK(xioctl(DRM_IOCTL_SYNCOBJ_EVENTFD, &k));
	while (atomic_load(&e->ready) != i)
		sched_yield();
	/* Let the thread sleep in poll() and the library's worker settle. */
	sleep_ns(SETTLE_NS);
	atomic_store(&e->t0, now_ns());
	switch (e->mode) {
	case EV_RAW_EVENTFD:
		if (write(e->efd, &one, sizeof(one)) != sizeof(one))
			die("write eventfd", errno, __LINE__);
		break;
	case EV_RAW_SYNCOBJ:
		CHECK(raw_signal(e->h, i));
		break;
	case EV_LIB:
		CHECK(d3dq_fence_signal(e->f, i));
		break;
	}
	sem_wait(&e->done);
}

static int ev_finish(struct ev *e, const char *key, const char *label)
{
	pthread_join(e->thread, NULL);
	sem_destroy(&e->done);
	close(e->efd);
	if (e->h)
		raw_syncobj_destroy(e->h);
	if (e->f)
		d3dq_fence_destroy(e->f);
	return add_row(5, key, label, "ns", e->lat, e->n);
}

static void fig5(void)
{
	const char *old = getenv("D3DQ_NO_SYNCOBJ_EVENTFD");
	bool native = has_syncobj_eventfd && !(old && *old && strcmp(old, "0"));
	char *saved = old ? strdup(old) : NULL;
	struct d3dq_device *dev = lib_open(), *fdev;
	struct ev ev[5];
	int nev = 0, i, k, base, rs = -1, l, r = -1, fb;

	/* The library reads the switch when a device is opened. */
	setenv("D3DQ_NO_SYNCOBJ_EVENTFD", "1", 1);
	fdev = lib_open();
	if (saved)
		setenv("D3DQ_NO_SYNCOBJ_EVENTFD", saved, 1);
	else
		unsetenv("D3DQ_NO_SYNCOBJ_EVENTFD");
	free(saved);

	ev_start(&ev[nev++], EV_RAW_EVENTFD, NULL);
	ev_start(&ev[nev++], EV_LIB, lib_fence(dev, 0));
	ev_start(&ev[nev++], EV_LIB, lib_fence(fdev, D3DQ_FENCE_FLAG_SHARED));
	if (has_syncobj_eventfd)
		ev_start(&ev[nev++], EV_RAW_SYNCOBJ, NULL);
	if (native)
		ev_start(&ev[nev++], EV_LIB,
			 lib_fence(dev, D3DQ_FENCE_FLAG_SHARED));
	for (i = 1; i <= sz.lat; i++)
		for (k = 0; k < nev; k++)
			ev_one(&ev[(i + k) % nev], i);

	base = ev_finish(&ev[0], "event_raw_eventfd",
			 "raw eventfd write -> readable");
	l = ev_finish(&ev[1], "event_lib_local", "library, fence not shared");
	fb = ev_finish(&ev[2], "event_lib_shared_fallback",
		       "library, shared fence, fallback (worker)");
	if (has_syncobj_eventfd)
		rs = ev_finish(&ev[3], "event_raw_syncobj",
			       "raw SYNCOBJ_EVENTFD + signal");
	if (native)
		r = ev_finish(&ev[4], "event_lib_shared_native",
			      "library, shared fence, native SYNCOBJ_EVENTFD");
	d3dq_device_close(dev);
	d3dq_device_close(fdev);

	add_cmp(5, l, base, "event: library local / raw eventfd", 0);
	add_cmp(5, fb, base, "event: shared fallback / raw eventfd", 0);
	if (rs >= 0) {
		add_cmp(5, fb, rs, "event: shared fallback / raw SYNCOBJ_EVENTFD", 0);
		add_cmp(5, rs, base, "event: raw SYNCOBJ_EVENTFD / raw eventfd", 0);
	}
	if (r >= 0)
		add_cmp(5, r, rs, "event: shared native / raw SYNCOBJ_EVENTFD", 0);
	else
		add_note(5, "no native syncobj eventfd on this kernel (or disabled): shared fences use the fallback only");
}

/* --- figure 6: scaling ------------------------------------------------------- */

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
		pts[np].release_ms = rows[r].median;
		pts[np].release_p99_ms = rows[r].p99;
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
		r = add_value(6, key, label, "threads", threads, false);
		if (first < 0)
			first = r;
		last = r;
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
	add_cmp(6, last, first, "threads: largest N / N=1 (target 1)", 1.0);
	add_cmp(6, rl, r1, "release time: largest N / N=1", 0);
	if (np >= 2)
		add_note(6, "linear release would give %.0fx from N=%d to N=%d; measured %.1fx",
			 (double)pts[np - 1].n / pts[np - 2].n, pts[np - 2].n,
			 pts[np - 1].n,
			 pts[np - 1].release_ms / pts[np - 2].release_ms);
	scale_write_dat(pts, np);
}

/* --- figure 7: long timelines ------------------------------------------------ */

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

/* --- output ----------------------------------------------------------------- */

static void fmt_value(char *buf, size_t len, double v, const char *unit)
{
	double mag = v < 0 ? -v : v;

	if (!strcmp(unit, "ns") && mag >= 10000)
		snprintf(buf, len, "%.1f us", v / 1000);
	else if (!strcmp(unit, "ns") && mag >= 100)
		snprintf(buf, len, "%.0f ns", v);
	else if (!strcmp(unit, "calls/s") || mag >= 1000)
		snprintf(buf, len, "%.0f %s", v, unit);
	else
		snprintf(buf, len, "%.3g %s", v, unit);
}

static void print_table(FILE *out, const char *kernel)
{
	char med[32], p99[32];
	int i, fig = 0;

	fprintf(out, "d3dq-bench on %s%s (medians; p99 over n samples)\n",
		kernel, smoke ? ", smoke run: few iterations" : "");
	fprintf(out, "%-3s %-52s %14s %14s %8s\n", "fig", "measurement",
		"median", "p99", "n");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		if (r->fig != fig)
			fprintf(out, "\n");
		fig = r->fig;
		fmt_value(med, sizeof(med), r->median, r->unit);
		if (r->n > 1)
			fmt_value(p99, sizeof(p99), r->p99, r->unit);
		else
			snprintf(p99, sizeof(p99), "-");
		fprintf(out, "%-3d %-52s %14s %14s %8ld\n", r->fig, r->label,
			med, p99, r->n);
	}
	fprintf(out, "\n%-3s %-52s %9s %9s  %s\n", "fig", "ratio of medians",
		"ratio", "target", "");
	for (i = 0; i < ncmps; i++) {
		struct cmp *c = &cmps[i];
		double ratio = rows[c->a].median / rows[c->b].median;
		char target[16] = "-";
		const char *verdict = "";

		if (c->max > 0) {
			snprintf(target, sizeof(target), "<= %.3g", c->max);
			verdict = ratio <= c->max ? "met" : "MISSED";
		}
		fprintf(out, "%-3d %-52s %8.3gx %9s  %s\n", c->fig, c->label,
			ratio, target, verdict);
	}
	for (i = 0; i < nnotes; i++)
		fprintf(out, "note (fig %d): %s\n", notes[i].fig, notes[i].text);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* One row per line, so that simple tools (and the smoke test) can read it. */
static void write_json(const char *path, const char *kernel)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "{\n\"kernel\": ");
	json_str(f, kernel);
	fprintf(f, ",\n\"smoke\": %s,\n\"rows\": [\n", smoke ? "true" : "false");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		fprintf(f, "{\"fig\": %d, \"key\": ", r->fig);
		json_str(f, r->key);
		fprintf(f, ", \"label\": ");
		json_str(f, r->label);
		fprintf(f, ", \"unit\": ");
		json_str(f, r->unit);
		fprintf(f, ", \"median\": %.6g, \"p99\": %.6g, \"n\": %ld, \"delta\": %s}%s\n",
			r->median, r->p99, r->n, r->delta ? "true" : "false",
			i + 1 < nrows ? "," : "");
	}
	fprintf(f, "],\n\"ratios\": [\n");
	for (i = 0; i < ncmps; i++) {
		struct cmp *c = &cmps[i];

		fprintf(f, "{\"fig\": %d, \"label\": ", c->fig);
		json_str(f, c->label);
		fprintf(f, ", \"row\": ");
		json_str(f, rows[c->a].key);
		fprintf(f, ", \"baseline\": ");
		json_str(f, rows[c->b].key);
		fprintf(f, ", \"ratio\": %.6g, \"target_max\": %.6g}%s\n",
			rows[c->a].median / rows[c->b].median, c->max,
			i + 1 < ncmps ? "," : "");
	}
	fprintf(f, "],\n\"notes\": [\n");
	for (i = 0; i < nnotes; i++) {
		fprintf(f, "{\"fig\": %d, \"text\": ", notes[i].fig);
		json_str(f, notes[i].text);
		fprintf(f, "}%s\n", i + 1 < nnotes ? "," : "");
	}
	fprintf(f, "]\n}\n");
	if (fclose(f))
		die(path, errno, __LINE__);
}

/* Latency distributions: 101 quantiles per row, in microseconds. */
static void write_quantiles(void)
{
	char path[512];
	FILE *f;
	int i, q;

	if (!data_dir)
		return;
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		if (r->n < 10 || strcmp(r->unit, "ns") || r->fig == 3 ||
		    r->fig == 4)
			continue;
		snprintf(path, sizeof(path), "%s/lat-%s.dat", data_dir, r->key);
		f = fopen(path, "w");
		if (!f)
			die(path, errno, __LINE__);
		fprintf(f, "# fraction latency_us (%s)\n", r->label);
		for (q = 0; q <= 100; q++) {
			long idx = (long)((double)q / 100 * (r->n - 1));

			fprintf(f, "%.2f %.3f\n", q / 100.0,
				r->samples[idx] / 1000);
		}
		fclose(f);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: d3dq-bench [--smoke] [--json FILE] [--data DIR] [--figures LIST]\n"
		"                  [--long-signals N]\n"
		"  --smoke          few iterations of every figure (seconds, for make check)\n"
		"  --json FILE      write the results as JSON\n"
		"  --data DIR       write plot data (distributions, scaling, timelines)\n"
		"  --figures LIST   only these figures, e.g. 1,4 (default 1-8)\n"
		"  --long-signals N signals of figure 7 (default 1000000)\n"
		"Exit status: 0, 1 on an error, %d when there is no d3dq device.\n",
		EXIT_NO_DEVICE);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' },
		{ "data", required_argument, NULL, 'd' },
		{ "figures", required_argument, NULL, 'f' },
		{ "long-signals", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *json = NULL, *figs = "1,2,3,4,5,6,7,8";
	long long long_signals = 0;
	bool want[9] = { false };
	struct utsname u;
	char kernel[160];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			smoke = true;
			break;
		case 'j':
			json = optarg;
			break;
		case 'd':
			data_dir = optarg;
			break;
		case 'f':
			figs = optarg;
			break;
		case 'l':
			long_signals = atoll(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	for (; *figs; figs++)
		if (*figs >= '1' && *figs <= '8')
			want[*figs - '0'] = true;
		else if (*figs != ',')
			return usage(stderr), 2;
	sz = smoke ? smoke_sizes : full_sizes;
	if (long_signals >= LONG_SAMPLES)
		sz.long_signals = long_signals;

	raw_fd = open_raw();
	if (raw_fd < 0) {
		fprintf(stderr, "d3dq-bench: no d3dq render node\n");
		return EXIT_NO_DEVICE;
	}
	job_timeout_ns = get_param(DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	has_syncobj_eventfd = probe_syncobj_eventfd();
	uname(&u);
	snprintf(kernel, sizeof(kernel), "Linux %s", u.release);

	if (want[1])
		fig1();
	if (want[2])
		fig2();
	if (want[3])
		fig3();
	if (want[4])
		fig4();
	if (want[5])
		fig5();
	if (want[6])
		fig6();
	if (want[7])
		fig7();
	if (want[8])
		fig8();

	print_table(stdout, kernel);
	if (json)
		write_json(json, kernel);
	write_quantiles();
	close(raw_fd);
	return 0;
}
