// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 10: sharing the engine. Another client (a file of its
 * own) keeps the engine busy: 8 queues, each with two 4 MiB FILL jobs in
 * flight. This client's small job (one WRITE64) waits for its turn: the
 * driver goes round the clients, so it waits for at most the step running
 * when it arrives (256 KiB of work) per other ready client. Its job
 * starts with a TIMESTAMP, which splits its latency into parts: the
 * SUBMIT call, from the call to the engine running the job, and from
 * there until the wait returns.
 *
 * Second panel: a submitter the CPU scheduler holds back. Another thread,
 * with a file of its own, submits a stream of the largest jobs the driver
 * still runs inside SUBMIT (found by probing: DRM_D3DQ_SUBMIT_DONE), while
 * a CPU hog of normal priority runs on every CPU. Such a job holds the
 * engine while it runs on the submitting thread; a submitter running
 * SCHED_IDLE (and, where the guest has the cgroup v2 cpu controller, in a
 * cgroup with a small cpu.max) is descheduled often, and if that could
 * happen while it held the engine, every other client would wait for it.
 * This client's small job is timed with no submitter, with the submitter
 * at normal priority and with it throttled, in blocks that rotate.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* An ioctl on another client's file (the raw baselines use raw_fd). */
static int client_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
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
			CHECK(client_ioctl(f->fd, DRM_IOCTL_D3DQ_SUBMIT, &a));
		else
			CHECK(client_ioctl(f->fd,
				DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w));
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
	CHECK(client_ioctl(f->fd, DRM_IOCTL_D3DQ_BO_CREATE, &b));
	f->bo = b.handle;
	for (i = 0; i < FLOOD_QUEUES; i++) {
		CHECK(client_ioctl(f->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc));
		f->q[i] = qc.id;
		CHECK(client_ioctl(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
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

/*
 * The parts of a small job's latency (issue 40, item 3): its SUBMIT call;
 * from the call to the engine running it (the TIMESTAMP its job starts
 * with: the engine clock is CLOCK_MONOTONIC); from there until the wait
 * returned.
 */
enum { PART_SUBMIT, PART_TO_ENGINE, PART_WAKE, SMALL_PARTS };

struct small {
	uint32_t sync, q;
	struct raw_bo bo;
	double *parts[SMALL_PARTS];	/* or NULL: not kept */
	long nparts;
};

/*
 * Submit one job (a TIMESTAMP, then a WRITE64) signalling (sync, i) and
 * wait for it.
 */
static double small_job_one(struct small *c, int i)
{
	struct {
		struct drm_d3dq_cmd_timestamp ts;
		struct drm_d3dq_cmd_write64 w;
	} cmds = {
		.ts = { { DRM_D3DQ_CMD_TIMESTAMP, sizeof(cmds.ts) },
			c->bo.handle, 0, 8 },
		.w = raw_write64(&c->bo, 0, i),
	};
	int64_t t0, t1, t2;

	sleep_ns(SETTLE_NS);
	t0 = now_ns();
	CHECK(raw_submit(c->q, 0, 0, c->sync, i, &cmds, sizeof(cmds)));
	t1 = now_ns();
	CHECK(raw_wait(c->sync, i));
	t2 = now_ns();
	if (c->parts[0]) {
		int64_t te = (int64_t)c->bo.map[1];

		c->parts[PART_SUBMIT][c->nparts] = (double)(t1 - t0);
		c->parts[PART_TO_ENGINE][c->nparts] = (double)(te - t0);
		c->parts[PART_WAKE][c->nparts++] = (double)(t2 - te);
	}
	return (double)(t2 - t0);
}

static void small_parts_start(struct small *c, int n)
{
	int i;

	for (i = 0; i < SMALL_PARTS; i++)
		c->parts[i] = samples(n);
	c->nparts = 0;
}

/* Rows of the parts kept since small_parts_start(); stops keeping them. */
static void small_parts_report(struct small *c, const char *key,
			       const char *what, int *rows)
{
	static const char *const part_key[SMALL_PARTS] = {
		"submit", "to_engine", "wake",
	};
	static const char *const part_label[SMALL_PARTS] = {
		"SUBMIT call", "call -> engine runs it",
		"engine runs it -> wait returns",
	};
	char k[64], label[96];
	int i;

	for (i = 0; i < SMALL_PARTS; i++) {
		snprintf(k, sizeof(k), "%s_part_%s", key, part_key[i]);
		snprintf(label, sizeof(label), "part, %s: %s", what,
			 part_label[i]);
		rows[i] = add_row(10, k, label, "ns", c->parts[i], c->nparts);
		c->parts[i] = NULL;
	}
}

/* --- a throttled submitter of direct jobs ---------------------------- */

/*
 * The submitter's job: the most a job run inside SUBMIT may use (uapi.rst,
 * "Direct submission"): 16 buffers (a COPY between two, one WRITE64 to
 * each of the others), 16 signal points, and the COPY as long as the
 * driver still runs the job directly (probed).
 */
#define SUB_BOS		16
#define SUB_SIGNALS	16
#define SUB_WRITES	(SUB_BOS - 2)
#define SUB_CMD_COST	64	/* engine cost of a command besides its bytes */
#define SUB_BO_BYTES	(2 * ENGINE_STEP)
#define SUB_TIMES	4096	/* SUBMIT times kept per variant */
#define SUB_START_NS	(2000 * MS)
#define CPU_MAX		"1000 100000"	/* 1 % of a CPU */
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_SUB	CGROUP_ROOT "/d3dq-bench-fig10"

enum sub_mode { SUB_OFF, SUB_NORMAL, SUB_THROTTLED, SUB_MODES };

struct sub_cmds {
	struct drm_d3dq_cmd_copy copy;
	struct drm_d3dq_cmd_write64 w[SUB_WRITES];
};

struct submitter {
	int fd;
	uint32_t q, bo[SUB_BOS], sync[SUB_SIGNALS];
	struct sub_cmds cmds;
	uint64_t point, copy_bytes;
	pthread_t thread;
	_Atomic pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool parked, stop;		/* under lock */
	_Atomic bool on;
	_Atomic int mode;
	_Atomic uint64_t jobs, direct;
	_Atomic long nivcsw;		/* the thread's involuntary switches */
	/* SUBMIT times of the jobs run directly, per mode (the thread's) */
	double *times[SUB_MODES];
	long ntimes[SUB_MODES];
	/* per mode, while on: jobs, direct ones, switches, time */
	uint64_t m_jobs[SUB_MODES], m_direct[SUB_MODES];
	long m_nivcsw[SUB_MODES];
	int64_t m_ns[SUB_MODES];
	bool cgroup, mounted;
};

/* One job with a COPY of @bytes; waits for it unless it ran directly. */
static bool sub_submit(struct submitter *s, uint64_t bytes)
{
	struct drm_d3dq_sync sig[SUB_SIGNALS];
	struct drm_d3dq_submit a = { 0 };
	uint64_t point = ++s->point;
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&s->sync[0],
		.points = (uintptr_t)&point,
		.timeout_nsec = INT64_MAX,
		.count_handles = 1,
	};
	int i;

	s->cmds.copy.size = bytes;
	for (i = 0; i < SUB_SIGNALS; i++) {
		sig[i].handle = s->sync[i];
		sig[i].flags = DRM_D3DQ_SYNC_TIMELINE;
		sig[i].point = point;
	}
	a.queue_id = s->q;
	a.signals = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(SUB_SIGNALS,
								   sig);
	a.cmds = (uintptr_t)&s->cmds;
	a.cmd_bytes = sizeof(s->cmds);
	CHECK(client_ioctl(s->fd, DRM_IOCTL_D3DQ_SUBMIT, &a));
	if (a.out_flags & DRM_D3DQ_SUBMIT_DONE)
		return true;
	CHECK(client_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w));
	return false;
}

/*
 * The longest COPY that still runs inside SUBMIT, in steps of a command's
 * cost, on the idle engine; -1 if no job does (direct_submit=0).
 */
static int64_t sub_probe(struct submitter *s)
{
	int64_t lo = 0, hi = ENGINE_STEP / SUB_CMD_COST + 1, mid;

	if (!sub_submit(s, 0))
		return -1;
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (sub_submit(s, (uint64_t)mid * SUB_CMD_COST))
			lo = mid;
		else
			hi = mid;
	}
	return lo * SUB_CMD_COST;
}

static void *sub_main(void *arg)
{
	struct submitter *s = arg;
	struct rusage ru;
	int64_t t0, t;
	bool direct;
	int m;

	atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
	for (;;) {
		if (!atomic_load(&s->on)) {
			bool stop;

			pthread_mutex_lock(&s->lock);
			s->parked = true;
			pthread_cond_broadcast(&s->cond);
			while (!atomic_load(&s->on) && !s->stop)
				pthread_cond_wait(&s->cond, &s->lock);
			s->parked = false;
			stop = s->stop;
			pthread_mutex_unlock(&s->lock);
			if (stop)
				break;
		}
		m = atomic_load(&s->mode);
		t0 = now_ns();
		direct = sub_submit(s, s->copy_bytes);
		t = now_ns() - t0;
		if (direct && s->ntimes[m] < SUB_TIMES)
			s->times[m][s->ntimes[m]++] = (double)t;
		atomic_fetch_add(&s->direct, direct);
		if (!getrusage(RUSAGE_THREAD, &ru))
			atomic_store(&s->nivcsw, ru.ru_nivcsw);
		atomic_fetch_add(&s->jobs, 1);
	}
	return NULL;
}

static int write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	size_t len = strlen(str);

	if (fd < 0)
		return -errno;
	if (write(fd, str, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A threaded cgroup with cpu.max for the submitter's thread: only where
 * this process is in the root of a cgroup v2 hierarchy that has (or can
 * be given) the cpu controller, as in the test VM (mounted here if it is
 * not). Otherwise the reason goes to @why.
 */
static bool sub_cgroup_open(struct submitter *s, char *why, size_t len)
{
	char buf[256] = "";
	const char *step;
	ssize_t n;
	int fd, err = 0;

	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	/* Empty until a cgroup v2 hierarchy was first mounted. */
	if (buf[0] && strcmp(buf, "0::/\n")) {
		snprintf(why, len, "not in the root of a cgroup v2 hierarchy");
		return false;
	}
	if (access(CGROUP_ROOT "/cgroup.controllers", R_OK)) {
		step = "mount cgroup2";
		if (mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL)) {
			err = errno;
			goto fail;
		}
		s->mounted = true;
	}
	step = "enable the cpu controller";
	err = -write_str(CGROUP_ROOT "/cgroup.subtree_control", "+cpu");
	if (err)
		goto fail;
	step = "mkdir";
	if (mkdir(CGROUP_SUB, 0755) && errno != EEXIST) {
		err = errno;
		goto fail;
	}
	step = "make it threaded";
	err = -write_str(CGROUP_SUB "/cgroup.type", "threaded");
	if (!err) {
		step = "set cpu.max";
		err = -write_str(CGROUP_SUB "/cpu.max", CPU_MAX);
	}
	if (!err)
		return true;
	rmdir(CGROUP_SUB);
fail:
	if (s->mounted)
		umount(CGROUP_ROOT);
	s->mounted = false;
	snprintf(why, len, "%s: %s", step, strerror(err));
	return false;
}

/* Moves the submitter's thread into the cgroup (@in) or back to the root. */
static void sub_cgroup_move(struct submitter *s, bool in)
{
	char tid[24];

	if (!s->cgroup)
		return;
	snprintf(tid, sizeof(tid), "%d", (int)atomic_load(&s->tid));
	CHECK(write_str(in ? CGROUP_SUB "/cgroup.threads" :
			CGROUP_ROOT "/cgroup.threads", tid));
}

static void sub_cgroup_close(struct submitter *s)
{
	if (!s->cgroup)
		return;
	rmdir(CGROUP_SUB);
	if (s->mounted)
		umount(CGROUP_ROOT);
}

static void sub_start(struct submitter *s, char *why, size_t len)
{
	struct drm_d3dq_bo_create b = { 0 };
	struct drm_syncobj_create sc = { .flags = 0 };
	struct drm_d3dq_queue_create qc = { 0 };
	int i;

	memset(s, 0, sizeof(*s));
	s->fd = open_raw();
	if (s->fd < 0)
		die("open", ENODEV, __LINE__);
	for (i = 0; i < SUB_BOS; i++) {
		b.size = i < 2 ? SUB_BO_BYTES : 4096;
		CHECK(client_ioctl(s->fd, DRM_IOCTL_D3DQ_BO_CREATE, &b));
		s->bo[i] = b.handle;
	}
	for (i = 0; i < SUB_SIGNALS; i++) {
		CHECK(client_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
		s->sync[i] = sc.handle;
	}
	CHECK(client_ioctl(s->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc));
	s->q = qc.id;
	s->cmds.copy = (struct drm_d3dq_cmd_copy){
		{ DRM_D3DQ_CMD_COPY, sizeof(s->cmds.copy) }, s->bo[1], s->bo[0],
		0, 0, 0,
	};
	for (i = 0; i < SUB_WRITES; i++)
		s->cmds.w[i] = (struct drm_d3dq_cmd_write64){
			{ DRM_D3DQ_CMD_WRITE64, sizeof(s->cmds.w[i]) },
			s->bo[2 + i], 0, 0, (uint64_t)i,
		};
	for (i = 0; i < SUB_MODES; i++)
		s->times[i] = samples(SUB_TIMES);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->cgroup = sub_cgroup_open(s, why, len);
	CHECK(pthread_create(&s->thread, NULL, sub_main, s));
	pthread_mutex_lock(&s->lock);
	while (!s->parked)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

static int sub_policy(struct submitter *s, int policy)
{
	struct sched_param sp = { 0 };

	return -pthread_setschedparam(s->thread, policy, &sp);
}

/* Parks the submitter and counts what it did in its mode. */
static void sub_park(struct submitter *s, uint64_t jobs0, uint64_t direct0,
		     long nivcsw0, int64_t t0)
{
	int m = atomic_load(&s->mode);

	/* Normal again first, so that it parks soon. */
	sub_cgroup_move(s, false);
	CHECK(sub_policy(s, SCHED_OTHER));
	atomic_store(&s->on, false);
	pthread_mutex_lock(&s->lock);
	while (!s->parked)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	s->m_ns[m] += now_ns() - t0;
	s->m_jobs[m] += atomic_load(&s->jobs) - jobs0;
	s->m_direct[m] += atomic_load(&s->direct) - direct0;
	s->m_nivcsw[m] += atomic_load(&s->nivcsw) - nivcsw0;
}

/* Takes @per samples of the small job @c with the submitter in mode @m. */
static void sub_block(struct submitter *s, struct small *c, int m,
		      double *v, int per, uint64_t *point)
{
	uint64_t jobs0 = atomic_load(&s->jobs);
	uint64_t direct0 = atomic_load(&s->direct);
	long nivcsw0 = atomic_load(&s->nivcsw);
	int64_t t0, deadline;
	int i;

	if (m != SUB_OFF) {
		CHECK(sub_policy(s, m == SUB_THROTTLED ? SCHED_IDLE :
				 SCHED_OTHER));
		sub_cgroup_move(s, m == SUB_THROTTLED);
		atomic_store(&s->mode, m);
		pthread_mutex_lock(&s->lock);
		atomic_store(&s->on, true);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	t0 = now_ns();
	/* Measure once the stream runs (a throttled thread starts late). */
	deadline = t0 + (int64_t)SUB_START_NS;
	while (m != SUB_OFF && atomic_load(&s->jobs) < jobs0 + 2 &&
	       now_ns() < deadline)
		sleep_ns(MS);
	for (i = 0; i < per; i++)
		v[i] = small_job_one(c, (int)++*point);
	if (m != SUB_OFF)
		sub_park(s, jobs0, direct0, nivcsw0, t0);
}

static void sub_stop(struct submitter *s)
{
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	sub_cgroup_close(s);
	close(s->fd);
}

/* A thread spinning at normal priority on each CPU. */
struct hogs {
	int n;
	pthread_t t[CPU_SETSIZE];
	_Atomic bool stop;
};

static void *hog_main(void *arg)
{
	struct hogs *h = arg;

	while (!atomic_load_explicit(&h->stop, memory_order_relaxed))
		;
	return NULL;
}

static void hogs_start(struct hogs *h)
{
	pthread_attr_t attr;
	cpu_set_t all, one;
	int cpu;

	h->n = 0;
	atomic_store(&h->stop, false);
	CHECK(sched_getaffinity(0, sizeof(all), &all) ? errno : 0);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		CHECK(pthread_attr_init(&attr));
		CHECK(pthread_attr_setaffinity_np(&attr, sizeof(one), &one));
		CHECK(pthread_create(&h->t[h->n++], &attr, hog_main, h));
		pthread_attr_destroy(&attr);
	}
}

static void hogs_stop(struct hogs *h)
{
	int i;

	atomic_store(&h->stop, true);
	for (i = 0; i < h->n; i++)
		pthread_join(h->t[i], NULL);
}

static const char *const sub_keys[SUB_MODES] = {
	"engine_small_hogs", "engine_small_direct_normal",
	"engine_small_direct_throttled",
};

static void fig10_throttled(struct small *c, uint64_t *point)
{
	static const char *const mode_name[SUB_MODES] = {
		"no submitter", "normal", "throttled",
	};
	int n = sz.lat / 2, per = smoke ? 5 : 20, rows[SUB_MODES], r, k, m;
	double *v[SUB_MODES];
	char why[128] = "", label[80], key[48], thr[48], model[32];
	struct submitter s;
	struct hogs h;
	int64_t bytes;
	long got[SUB_MODES] = { 0 };

	sub_start(&s, why, sizeof(why));
	/* Both policies must be allowed (they are to root, as in the VM). */
	if (sub_policy(&s, SCHED_IDLE) || sub_policy(&s, SCHED_OTHER)) {
		sub_stop(&s);
		add_note(10, "throttled submitter skipped: this process may "
			 "not set a thread's scheduling policy back from "
			 "SCHED_IDLE");
		return;
	}
	bytes = sub_probe(&s);
	s.copy_bytes = bytes < 0 ? 0 : (uint64_t)bytes;
	snprintf(thr, sizeof(thr), "SCHED_IDLE%s",
		 s.cgroup ? " + cpu.max" : "");
	for (m = 0; m < SUB_MODES; m++)
		v[m] = samples(n);
	hogs_start(&h);
	/* Blocks of each variant, in an order that rotates. */
	for (r = 0; got[0] < n || got[1] < n || got[2] < n; r++) {
		for (k = 0; k < SUB_MODES; k++) {
			int b;

			m = (r + k) % SUB_MODES;
			b = per < n - got[m] ? per : (int)(n - got[m]);
			if (b <= 0)
				continue;
			sub_block(&s, c, m, v[m] + got[m], b, point);
			got[m] += b;
		}
	}
	hogs_stop(&h);
	sub_stop(&s);

	rows[SUB_OFF] = add_row(10, sub_keys[SUB_OFF],
				"small job, CPU hogs, no other submitter",
				"ns", v[SUB_OFF], n);
	rows[SUB_NORMAL] = add_row(10, sub_keys[SUB_NORMAL],
				   "small job, hogs, direct submitter normal",
				   "ns", v[SUB_NORMAL], n);
	snprintf(label, sizeof(label), "small job, hogs, direct submitter %s",
		 s.cgroup ? "thr." : "idle");
	rows[SUB_THROTTLED] = add_row(10, sub_keys[SUB_THROTTLED], label, "ns",
				      v[SUB_THROTTLED], n);
	add_value(10, "engine_direct_copy_bytes",
		  "submitter's job: COPY bytes (16 bufs, 16 signals)", "B",
		  (double)s.copy_bytes, bytes <= 0);
	for (m = SUB_NORMAL; m < SUB_MODES; m++) {
		double sec = (double)s.m_ns[m] / 1e9;
		double jobs = (double)s.m_jobs[m];

		snprintf(key, sizeof(key), "engine_direct_submit_%s",
			 mode_name[m]);
		snprintf(label, sizeof(label),
			 "submitter %s: its direct SUBMIT",
			 m == SUB_NORMAL ? "normal" : thr);
		if (s.ntimes[m])
			add_row(10, key, label, "ns", s.times[m], s.ntimes[m]);
		snprintf(key, sizeof(key), "engine_direct_rate_%s",
			 mode_name[m]);
		snprintf(label, sizeof(label), "submitter %s: jobs per second",
			 m == SUB_NORMAL ? "normal" : thr);
		add_value(10, key, label, "jobs/s", sec > 0 ? jobs / sec : 0,
			  true);
		snprintf(key, sizeof(key), "engine_direct_share_%s",
			 mode_name[m]);
		snprintf(label, sizeof(label),
			 "submitter %s: run inside SUBMIT",
			 m == SUB_NORMAL ? "normal" : thr);
		add_value(10, key, label, "%",
			  jobs > 0 ? 100.0 * (double)s.m_direct[m] / jobs : 0,
			  true);
		snprintf(key, sizeof(key), "engine_direct_preempted_%s",
			 mode_name[m]);
		snprintf(label, sizeof(label),
			 "submitter %s: preempted per job", m == SUB_NORMAL ?
			 "normal" : thr);
		add_value(10, key, label, "switches",
			  jobs > 0 ? (double)s.m_nivcsw[m] / jobs : 0, true);
	}
	for (m = 0; m < SUB_MODES; m++)
		if (s.ntimes[m] == 0)
			free(s.times[m]);
	add_cmp(10, rows[SUB_THROTTLED], rows[SUB_OFF],
		"small job: throttled direct submitter / none", 0);
	add_cmp(10, rows[SUB_THROTTLED], rows[SUB_NORMAL],
		"small job: throttled / normal direct submitter", 0);
	add_cmp(10, rows[SUB_NORMAL], rows[SUB_OFF],
		"small job: normal direct submitter / none", 0);
	add_value(10, "engine_small_throttled_p99",
		  "p99: throttled direct submitter / none", "x",
		  row_p99(rows[SUB_THROTTLED]) / row_p99(rows[SUB_OFF]), false);
	if (bytes < 0)
		add_note(10, "no job ran inside SUBMIT (direct_submit=0?): the "
			 "submitter's jobs all went through the scheduler");
	preempt_model(model, sizeof(model));
	add_note(10, "throttled submitter: %s%s; a CPU hog of normal "
		 "priority on each of the %d CPUs in all three variants; "
		 "preemption: %s", thr, s.cgroup ? " \"" CPU_MAX "\"" : "",
		 h.n, model[0] ? model : "unknown");
	if (!s.cgroup)
		add_note(10, "cpu.max not used: %s", why);
	add_note(10, "bound: a job run inside SUBMIT is small (16 KiB of "
		 "work) and runs with preemption disabled (driver.rst)");
}

static void fig10(void)
{
	struct small c = {
		.sync = raw_syncobj(), .q = raw_queue(), .bo = raw_bo_create(),
	};
	int pi[SMALL_PARTS], pf[SMALL_PARTS];
	int n = sz.lat / 2, i, idle, busy, step;
	double *li = samples(n), *lf = samples(n), t_step;
	uint64_t point;
	struct flood f;

	small_parts_start(&c, n);
	for (i = 1; i <= n; i++)
		li[i - 1] = small_job_one(&c, i);
	small_parts_report(&c, "engine_small_idle", "engine idle", pi);
	small_parts_start(&c, n);
	flood_start(&f);
	for (i = 1; i <= n; i++)
		lf[i - 1] = small_job_one(&c, n + i);
	small_parts_report(&c, "engine_small_flooded", "flooded", pf);
	/* At least one whole round for the step time (--smoke is short). */
	while (!atomic_load(&f.rounds))
		sleep_ns(MS);
	t_step = flood_stop(&f);

	idle = add_row(10, "engine_small_idle", "small job, engine idle", "ns",
		       li, n);
	busy = add_row(10, "engine_small_flooded",
		       "small job, other client floods (8 queues)", "ns", lf,
		       n);
	step = add_value(10, "engine_step", "engine step (256 KiB) under flood",
			 "ns", t_step, false);
	add_cmp(10, busy, idle, "small job: flooded / idle", 0);
	add_cmp(10, busy, step, "small job flooded, in engine steps", 4);
	add_cmp(10, pf[PART_TO_ENGINE], step,
		"part, flooded: call -> engine runs it, in steps", 0);
	add_cmp(10, pf[PART_WAKE], step,
		"part, flooded: engine -> wait returns, in steps", 0);
	add_cmp(10, pf[PART_WAKE], pi[PART_WAKE],
		"part: engine -> wait returns, flooded / idle", 0);
	add_note(10, "bound: a client's job waits at most one step of each "
		 "other ready client of its priority per turn (uapi.rst, Queues)");

	point = 2 * (uint64_t)n;
	fig10_throttled(&c, &point);
	raw_queue_destroy(c.q);
	raw_syncobj_destroy(c.sync);
	raw_bo_destroy(c.bo);
}

static int fig10_plot(FILE *gp)
{
	static const char *const keys[] = {
		"engine_small_idle", "engine_small_flooded",
		"engine_small_hogs", "engine_small_direct_normal",
		"engine_small_direct_throttled",
	};
	static const char *const titles[] = {
		"engine idle", "another client floods",
		"CPU hogs, no other submitter",
		"CPU hogs, direct submitter, normal",
		"CPU hogs, direct submitter, throttled",
	};

	plot_latency(gp, "10. a small job while another client uses the engine",
		     keys, titles, 5);
	return 1;
}

BENCH_FIGURE(10, "sharing the engine: a small job next to other clients",
	     fig10, fig10_plot)
