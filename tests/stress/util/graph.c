// SPDX-License-Identifier: GPL-2.0
/*
 * Random wait/signal graphs through raw d3dq ioctls.
 *
 * Every (process, queue) pair owns one timeline syncobj, created by the
 * parent and shared with the children through syncobj fds; the k-th job
 * submitted to that queue signals point k. A job waits on up to three
 * points that were already submitted, by its own or another process.
 * Each job records the engine clock when it starts and when it ends
 * (TIMESTAMP commands). Afterwards the parent checks, for every job that
 * started: the job before it on its queue had ended before it started,
 * and so had every job it waited on; without lossy mode, every job ran.
 * Each queue's timeline must end at the number of jobs submitted to it.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/d3dq_test.h"
#include "util/graph.h"

#define MAXW 3

struct g_job {
	uint16_t q, gen;
	uint8_t nw;
	uint32_t k;
	struct {
		uint16_t p, q;
		uint32_t k;
	} w[MAXW];
};

struct g_shared {
	int failed;
	char msg[512];
	unsigned long progress;
	unsigned long replaced, xproc;
};

struct g_run {
	const struct g_params *p;
	struct g_shared *sh;
	uint32_t *published;	/* [proc][queue] */
	uint32_t *njobs;	/* [proc] */
	struct g_job *jobs;	/* [proc][maxjobs] */
	uint64_t *ts;		/* [proc][maxjobs][2] */
	uint32_t *slot_of;	/* [proc][queue][maxjobs + 1] */
	size_t maxjobs, size;
	int *sync_fds;		/* [proc][queue] exported timelines */
	bool broken;
};

/* Per child. */
struct g_child {
	struct g_run *run;
	int proc, fd;
	uint32_t *tl;		/* [proc][queue] handles in this file */
	uint32_t bo;
	uint64_t *map;
	struct {
		pthread_mutex_t lock;
		uint32_t id;
		uint16_t gen;
	} q[64];
	uint32_t nslots;
	pthread_mutex_t slot_lock;
};

struct g_thread {
	struct g_child *c;
	int index;
	uint64_t rng;
	pthread_t th;
};

int g_scale(void)
{
	const char *v = getenv("D3DQ_STRESS_SCALE");
	int s = v ? atoi(v) : 1;

	return s > 0 ? s : 1;
}

uint64_t g_seed(void)
{
	const char *v = getenv("D3DQ_STRESS_SEED");

	return v && *v ? strtoull(v, NULL, 0) : 0x5eed0d3dull;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fail(struct g_shared *sh, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&sh->failed, 1, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(sh->msg, sizeof(sh->msg), fmt, ap);
	va_end(ap);
}

static uint32_t *pub(struct g_run *r, int p, int q)
{
	return &r->published[p * r->p->queues + q];
}

static uint32_t *slot_of(struct g_run *r, int p, int q, uint32_t k)
{
	return &r->slot_of[((size_t)p * r->p->queues + q) * (r->maxjobs + 1) + k];
}

static void progress(struct g_run *r)
{
	__atomic_add_fetch(&r->sh->progress, 1, __ATOMIC_RELAXED);
}

static int replace_queue(struct g_child *c, int q)
{
	uint32_t id = t_queue(c->fd, q % 3, q % 2);

	if (!id)
		return -errno;
	t_queue_destroy(c->fd, c->q[q].id);
	c->q[q].id = id;
	c->q[q].gen++;
	__atomic_add_fetch(&c->run->sh->replaced, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *g_thread_main(void *arg)
{
	struct g_thread *t = arg;
	struct g_child *c = t->c;
	struct g_run *r = c->run;
	const struct g_params *p = r->p;
	struct drm_d3dq_sync waits[MAXW], sig;
	struct t_cs *cs = malloc(sizeof(*cs));
	int i, n;

	if (!cs) {
		fail(r->sh, "out of memory");
		return NULL;
	}
	for (i = 0; i < p->jobs && !r->sh->failed; i++) {
		int q = rnd(&t->rng) % p->queues, ret, tries;
		struct g_job job = { .q = q };
		uint32_t slot, k;

		n = rnd(&t->rng) % (MAXW + 1);
		for (job.nw = 0; job.nw < n;) {
			/* Two in three waits stay in this process. */
			int wp = rnd(&t->rng) % 3 ? c->proc :
				 (int)(rnd(&t->rng) % p->procs);
			int wq = rnd(&t->rng) % p->queues;
			uint32_t top = __atomic_load_n(pub(r, wp, wq),
						       __ATOMIC_ACQUIRE);

			if (!top) {
				n--;
				continue;
			}
			job.w[job.nw].p = wp;
			job.w[job.nw].q = wq;
			job.w[job.nw].k = 1 + rnd(&t->rng) % top;
			waits[job.nw] = t_tl(c->tl[wp * p->queues + wq],
					     job.w[job.nw].k);
			if (wp != c->proc)
				__atomic_add_fetch(&r->sh->xproc, 1,
						   __ATOMIC_RELAXED);
			job.nw++;
		}

		pthread_mutex_lock(&c->q[q].lock);
		k = *pub(r, c->proc, q) + 1;
		pthread_mutex_lock(&c->slot_lock);
		slot = c->nslots++;
		pthread_mutex_unlock(&c->slot_lock);
		if (slot >= r->maxjobs) {
			pthread_mutex_unlock(&c->q[q].lock);
			fail(r->sh, "slot overflow");
			break;
		}
		t_cs_init(cs);
		t_cs_timestamp(cs, c->bo, slot * 16);
		if (p->slow_every && rnd(&t->rng) % p->slow_every == 0)
			t_cs_delay(cs, (uint64_t)p->slow_us * 1000);
		else if (p->delay_us && rnd(&t->rng) % 3 == 0)
			t_cs_delay(cs, rnd(&t->rng) % (p->delay_us * 1000ull));
		if (rnd(&t->rng) % 4 == 0)
			t_cs_cmp_store(cs, c->bo, r->maxjobs * 16, k - 1, k);
		t_cs_timestamp(cs, c->bo, slot * 16 + 8);
		sig = t_tl(c->tl[c->proc * p->queues + q], k);
		for (tries = 0;; tries++) {
			/* D3DQ_STRESS_BREAK drops the waits: checks must fail. */
			ret = t_submit(c->fd, c->q[q].id, waits,
				       r->broken ? 0 : job.nw, &sig, 1, cs);
			if (ret != -ECANCELED || !p->lossy || tries)
				break;
			/* Lost (timeout or failed dependency): replace. */
			ret = replace_queue(c, q);
			if (ret)
				break;
		}
		if (ret) {
			pthread_mutex_unlock(&c->q[q].lock);
			fail(r->sh, "proc %d: submit to queue %d point %u: %s",
			     c->proc, q, k, strerror(-ret));
			break;
		}
		job.k = k;
		job.gen = c->q[q].gen;
		r->jobs[c->proc * r->maxjobs + slot] = job;
		*slot_of(r, c->proc, q, k) = slot;
		__atomic_store_n(pub(r, c->proc, q), k, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&c->q[q].lock);
		progress(r);
		/* Pace the thread: let the engine catch up now and then. */
		if (p->sync_every && rnd(&t->rng) % p->sync_every == 0) {
			uint32_t h = c->tl[c->proc * p->queues + q];
			uint64_t pt = k;

			if (drmSyncobjTimelineWait(c->fd, &h, &pt, 1,
						   t_deadline(p->stall_s * T_SEC),
						   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
						   NULL)) {
				fail(r->sh, "proc %d queue %d: point %u not signalled within %u s",
				     c->proc, q, k, p->stall_s);
				break;
			}
			progress(r);
		}
	}
	free(cs);
	return NULL;
}

static void g_child_main(struct g_run *r, int proc)
{
	const struct g_params *p = r->p;
	struct g_child *c = calloc(1, sizeof(*c));
	struct g_thread *t = calloc(p->threads, sizeof(*t));
	int i, n = p->procs * p->queues;

	if (!c || !t)
		_exit(2);
	c->run = r;
	c->proc = proc;
	c->fd = t_open(0);
	c->tl = calloc(n, sizeof(*c->tl));
	if (c->fd < 0 || !c->tl) {
		fail(r->sh, "proc %d: cannot open the device", proc);
		_exit(1);
	}
	for (i = 0; i < n; i++)
		if (drmSyncobjFDToHandle(c->fd, r->sync_fds[i], &c->tl[i])) {
			fail(r->sh, "proc %d: syncobj import failed", proc);
			_exit(1);
		}
	c->bo = t_bo(c->fd, (r->maxjobs + 1) * 16, (void **)&c->map);
	if (!c->bo || !c->map) {
		fail(r->sh, "proc %d: buffer failed", proc);
		_exit(1);
	}
	pthread_mutex_init(&c->slot_lock, NULL);
	for (i = 0; i < p->queues; i++) {
		pthread_mutex_init(&c->q[i].lock, NULL);
		c->q[i].id = t_queue(c->fd, i % 3, i % 2);
		if (!c->q[i].id) {
			fail(r->sh, "proc %d: queue create: %s", proc,
			     strerror(errno));
			_exit(1);
		}
	}
	for (i = 0; i < p->threads; i++) {
		t[i].c = c;
		t[i].index = i;
		t[i].rng = p->seed ^ ((uint64_t)proc << 40) ^
			   ((uint64_t)i << 20);
		pthread_create(&t[i].th, NULL, g_thread_main, &t[i]);
	}
	for (i = 0; i < p->threads; i++)
		pthread_join(t[i].th, NULL);

	/* Every queue's last point signals, in bounded time. */
	for (i = 0; i < p->queues; i++) {
		uint32_t h = c->tl[proc * p->queues + i];
		uint64_t k = *pub(r, proc, i), v = 0;
		int ret;

		if (!k)
			continue;
		ret = drmSyncobjTimelineWait(c->fd, &h, &k, 1,
					     t_deadline(p->stall_s * T_SEC),
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
					     NULL);
		if (ret) {
			fail(r->sh, "proc %d queue %d: point %llu not signalled within %u s (%s)",
			     proc, i, (unsigned long long)k, p->stall_s,
			     strerror(errno));
			break;
		}
		progress(r);
		if (drmSyncobjQuery(c->fd, &h, &v, 1) || v != k) {
			fail(r->sh, "proc %d queue %d: timeline at %llu, %llu jobs submitted",
			     proc, i, (unsigned long long)v,
			     (unsigned long long)k);
			break;
		}
	}
	memcpy(&r->ts[(size_t)proc * r->maxjobs * 2], c->map,
	       (size_t)c->nslots * 16);
	r->njobs[proc] = c->nslots;
	_exit(r->sh->failed ? 1 : 0);
}

static void verify(struct g_run *r, struct g_result *res)
{
	const struct g_params *p = r->p;
	int pr;
	uint32_t s;

	for (pr = 0; pr < p->procs; pr++) {
		for (s = 0; s < r->njobs[pr]; s++) {
			struct g_job *j = &r->jobs[pr * r->maxjobs + s];
			uint64_t *ts = &r->ts[((size_t)pr * r->maxjobs + s) * 2];
			int w;

			res->jobs++;
			res->waits += j->nw;
			if (ts[0] && ts[1])
				res->ran++;
			else
				res->cancelled++;
			if (!p->lossy && !(ts[0] && ts[1])) {
				fail(r->sh, "proc %d queue %u job %u did not run (start %llu end %llu)",
				     pr, j->q, j->k, (unsigned long long)ts[0],
				     (unsigned long long)ts[1]);
				return;
			}
			if (!ts[0])
				continue;
			if (ts[1] && ts[1] < ts[0]) {
				fail(r->sh, "proc %d queue %u job %u ends before it starts",
				     pr, j->q, j->k);
				return;
			}
			if (j->k > 1) {
				uint32_t ps = *slot_of(r, pr, j->q, j->k - 1);
				struct g_job *pj = &r->jobs[pr * r->maxjobs + ps];
				uint64_t *pt = &r->ts[((size_t)pr * r->maxjobs + ps) * 2];

				res->checks++;
				if (pj->gen == j->gen &&
				    (!pt[1] || pt[1] > ts[0])) {
					fail(r->sh, "proc %d queue %u: job %u started at %llu, before job %u ended (%llu)",
					     pr, j->q, j->k,
					     (unsigned long long)ts[0], j->k - 1,
					     (unsigned long long)pt[1]);
					return;
				}
			}
			for (w = 0; w < j->nw; w++) {
				int dp = j->w[w].p;
				uint32_t ds = *slot_of(r, dp, j->w[w].q, j->w[w].k);
				uint64_t *dt = &r->ts[((size_t)dp * r->maxjobs + ds) * 2];

				res->checks++;
				/*
				 * A failed dependency: its point may have
				 * been garbage-collected before this job was
				 * submitted, and then its error is not seen
				 * (Documentation/driver.rst, limitations).
				 */
				if (!dt[1] && p->lossy) {
					res->failed_deps_ran++;
					continue;
				}
				if (!dt[1] || dt[1] > ts[0]) {
					fail(r->sh, "proc %d queue %u job %u started at %llu before its wait on proc %d queue %u point %u was done (end %llu)",
					     pr, j->q, j->k,
					     (unsigned long long)ts[0], dp,
					     j->w[w].q, j->w[w].k,
					     (unsigned long long)dt[1]);
					return;
				}
			}
		}
	}
}

int g_run(const struct g_params *p, struct g_result *res)
{
	struct g_run r = { .p = p };
	int n = p->procs * p->queues, i, fd, alive, status;
	uint32_t *handles;
	pid_t *pids;
	uint8_t *mem;
	size_t off;
	uint64_t start = t_now(), last_change = t_now();
	unsigned long last = 0;

	memset(res, 0, sizeof(*res));
	r.broken = getenv("D3DQ_STRESS_BREAK") != NULL;
	if (p->queues > 64 || p->queues < 1 || p->procs < 1) {
		snprintf(res->msg, sizeof(res->msg), "bad parameters");
		return -1;
	}
	r.maxjobs = (size_t)p->threads * p->jobs;
	r.size = sizeof(struct g_shared) + 64 +
		 n * sizeof(uint32_t) + p->procs * sizeof(uint32_t) +
		 (size_t)p->procs * r.maxjobs * sizeof(struct g_job) +
		 (size_t)p->procs * r.maxjobs * 16 +
		 (size_t)n * (r.maxjobs + 1) * sizeof(uint32_t) + 256;
	mem = mmap(NULL, r.size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		snprintf(res->msg, sizeof(res->msg), "mmap: %s", strerror(errno));
		return -1;
	}
	r.sh = (void *)mem;
	off = (sizeof(struct g_shared) + 63) & ~63ul;
	r.ts = (void *)(mem + off);
	off += (size_t)p->procs * r.maxjobs * 16;
	r.jobs = (void *)(mem + off);
	off += ((size_t)p->procs * r.maxjobs * sizeof(struct g_job) + 7) & ~7ul;
	r.published = (void *)(mem + off);
	off += n * sizeof(uint32_t);
	r.njobs = (void *)(mem + off);
	off += p->procs * sizeof(uint32_t);
	r.slot_of = (void *)(mem + off);

	/* The timelines, shared with the children as fds. */
	fd = t_open(0);
	handles = calloc(n, sizeof(*handles));
	r.sync_fds = calloc(n, sizeof(*r.sync_fds));
	pids = calloc(p->procs, sizeof(*pids));
	if (fd < 0 || !handles || !r.sync_fds || !pids) {
		snprintf(res->msg, sizeof(res->msg), "setup failed");
		return -1;
	}
	for (i = 0; i < n; i++) {
		handles[i] = t_syncobj(fd);
		if (!handles[i] ||
		    drmSyncobjHandleToFD(fd, handles[i], &r.sync_fds[i])) {
			snprintf(res->msg, sizeof(res->msg), "syncobj export failed");
			return -1;
		}
	}

	for (i = 0; i < p->procs; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			g_child_main(&r, i);
		if (pids[i] < 0) {
			fail(r.sh, "fork: %s", strerror(errno));
			break;
		}
	}

	/* Watch: kill on request, fail if nothing moves for stall_s. */
	for (alive = i; alive > 0;) {
		pid_t pid = waitpid(-1, &status, WNOHANG);
		unsigned long now_progress;

		if (pid > 0) {
			alive--;
			if (!p->kill_after_ms &&
			    (!WIFEXITED(status) || WEXITSTATUS(status)))
				fail(r.sh, "child exited with status 0x%x",
				     status);
			continue;
		}
		if (p->kill_after_ms &&
		    t_now() - start >= p->kill_after_ms * 1000000ull) {
			for (i = 0; i < p->procs; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
		}
		now_progress = __atomic_load_n(&r.sh->progress, __ATOMIC_RELAXED);
		if (now_progress != last) {
			last = now_progress;
			last_change = t_now();
		} else if (t_now() - last_change > (p->stall_s + 10) * T_SEC) {
			fail(r.sh, "no progress for %u s (%lu steps done)",
			     p->stall_s + 10, last);
			for (i = 0; i < p->procs; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
		}
		usleep(2000);
	}

	if (!p->kill_after_ms && !r.sh->failed)
		verify(&r, res);
	res->replaced = r.sh->replaced;
	res->xproc_waits = r.sh->xproc;
	res->seconds = (t_now() - start) / 1e9;
	if (r.sh->failed)
		snprintf(res->msg, sizeof(res->msg), "%s", r.sh->msg);
	for (i = 0; i < n; i++)
		close(r.sync_fds[i]);
	close(fd);
	free(handles);
	free(r.sync_fds);
	free(pids);
	i = r.sh->failed ? -1 : 0;
	munmap(mem, r.size);
	return i;
}
