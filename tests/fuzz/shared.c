// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fuzzer of fences shared by several processes and threads (issue
 * 38, item 6). NPROC processes of NTHREAD threads each run operations on
 * d3dq fences that they share: the parent's shared fences, inherited as
 * exported descriptors, and fences the processes make, export and pass
 * to each other over unix sockets at run time. The operations: create
 * (shared or not), destroy, export and import (into the same file, over
 * the socket ring, again from an inherited descriptor), signal (rewinds,
 * 0 and UINT64_MAX included), CPU waits (ALL and ANY, several fences,
 * the same fence twice, polls and short sleeps), event registrations on
 * an eventfd or as a syncobj point, sync_file exports, SUBMIT with fence
 * waits and signals (plain, HOLD, CARRY, TAIL, with WRITE64 or DELAY
 * commands), value-page mmaps and reads, queue replacement, REMOVE,
 * removal on loss (REMOVE_ON_LOSS and a job past the timeout) and close
 * and reopen of the file; the second case also unbinds and binds the
 * device now and then.
 *
 * Operation i of thread t of process p is a function of (seed, p, t, i):
 * its kind and arguments (slots, values, flags) do not depend on what
 * earlier operations returned, so a seed replays the same sequences
 * (timing, hence which handle a slot holds, still varies). A failure
 * prints the seed, process, thread and operation index and the
 * environment that replays it.
 *
 * The module is reloaded with a 100 ms job timeout and
 * max_user_fence_nodes=48, so that the per-user node bound (-EDQUOT) is
 * met now and then by all processes together; without D3DQ_MODULE the
 * cases are skipped.
 *
 * Oracle: every call answers 0 or an errno that Documentation/uapi.rst
 * documents for it in the state the fuzzer knows (ENOENT only if the
 * slot changed during the call, ENODEV only once a removal of the file
 * began or the device is being unplugged, ...), and what the uapi
 * promises holds: through a removed file FENCE_CREATE, FENCE_IMPORT,
 * FENCE_EXPORT, QUEUE_CREATE, FENCE_SIGNAL and FENCE_EXPORT_SYNC_FILE
 * fail with
 * ENODEV, waits return at once, registrations fire in their call and
 * every value read through a mapping is UINT64_MAX; sentinel fences
 * nobody signals keep their value for every other holder (the other
 * processes' files, the parent) whoever is removed (uapi 1.9), and the
 * parent's registrations on them stay pending; an armed file is removed
 * after its job timed out; a fresh fence's page holds its initial
 * value (unless another thread reached it through a stale copy of a
 * reused handle number, which is tracked), and no value page can be
 * made writable. At the end every fence, registration and job is freed. The VM harness fails the run on any
 * kernel warning (KASAN, lockdep, kmemleak on the debug kernel).
 *
 * Environment:
 *   D3DQ_FUZZ_SEED   seed (default 0xd3d9f026), printed either way
 *   D3DQ_FUZZ_CALLS  scale: each case runs D3DQ_FUZZ_CALLS / 10
 *                    operations in all, split evenly between the
 *                    threads (unset: 30,000 per case; make fuzz-long's
 *                    5,000,000: 500,000 per case, 10^6 in all)
 *   D3DQ_FUZZ_TRACE  "p.t" prints every operation of thread t of
 *                    process p with its answer, "all" of every thread
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define NPROC		3
#define NTHREAD		3
#define SLOTS		24
#define NQ		2
#define NINIT		4		/* the parent's shared fences */
#define NSENT		2		/* sentinels: nobody signals them */
#define SENT_V		0x5e47ull
#define NERR		134
#define MAX_REPORTS	8
#define TIMEOUT_MS	100
#define STALL_S		120
#define UNPLUG_OPS	2000
#define DEFAULT_OPS	30000		/* per case */
#define STALE_HASH	1024
#define NOTE_OPS	100000		/* progress lines */
#define ARGS		"job_timeout_ms=100 max_user_fence_nodes=48"

typedef unsigned __int128 errset;
#define E(x)		((errset)1 << (x))

enum op {
	OP_CREATE, OP_DESTROY, OP_DUP, OP_SEND, OP_RECV, OP_REIMPORT,
	OP_SIGNAL, OP_WAIT, OP_EVENT, OP_SYNC_FILE, OP_SUBMIT, OP_MAP,
	OP_QUEUE, OP_REMOVE, OP_LOSS, OP_REOPEN, NOPS
};

/* Names and weights (per 1000 operations). */
static const struct {
	const char *name;
	unsigned int weight;
} ops[NOPS] = {
	[OP_CREATE] = { "create", 70 },
	[OP_DESTROY] = { "destroy", 40 },
	[OP_DUP] = { "export+import", 30 },
	[OP_SEND] = { "send", 25 },
	[OP_RECV] = { "receive", 30 },
	[OP_REIMPORT] = { "reimport", 15 },
	[OP_SIGNAL] = { "signal", 160 },
	[OP_WAIT] = { "wait", 120 },
	[OP_EVENT] = { "event", 80 },
	[OP_SYNC_FILE] = { "sync_file", 50 },
	[OP_SUBMIT] = { "submit", 300 },
	[OP_MAP] = { "map", 62 },
	[OP_QUEUE] = { "queue", 8 },
	[OP_REMOVE] = { "remove", 1 },
	[OP_LOSS] = { "loss", 1 },
	[OP_REOPEN] = { "reopen", 8 },
};

/* Shared by the parent and the processes (MAP_SHARED). */
struct shm {
	_Atomic unsigned long ops, failures;
	_Atomic unsigned long ok[NOPS], err[NOPS], errs[NERR];
	_Atomic unsigned long us[NOPS];		/* time spent, per kind */
	_Atomic unsigned long jobs, held, done, carried, tail_done;
	_Atomic unsigned long removes, losses, reopens, unplugs, fired;
	_Atomic unsigned long passed, skipped;
	/* Set before an unbind, cleared after the bind. */
	_Atomic int unplugging;
	/* Unbinds so far. */
	_Atomic int epoch;
	/* Where each thread is, for a stall. */
	_Atomic unsigned long cur[NPROC][NTHREAD];
	_Atomic int cur_op[NPROC][NTHREAD];
	/* The first failure. */
	_Atomic int first;
	int fproc, fthread;
	unsigned long fidx;
	char fwhat[480];
};

static struct shm *shm;
static uint64_t g_seed;
static unsigned long g_per_thread;
static bool g_unbind;
static int trace_p = -2, trace_t = -2;

struct slot {
	uint32_t handle;
	bool shared;
	uint64_t gen;
	uint64_t off;
	uint32_t voff;
};

struct proc {
	int idx;
	pthread_rwlock_t lock;		/* write: the file is replaced */
	pthread_mutex_t mu;		/* slots and queues */
	int fd;
	int dev_epoch;			/* shm->epoch when the file was opened */
	_Atomic int removing;		/* a removal of the file may have begun */
	_Atomic int removed;		/* a removal of the file completed */
	uint64_t gens;
	struct slot slot[SLOTS];
	uint32_t q[NQ];
	uint64_t qgen[NQ];
	uint32_t bo;
	struct t_fence sent[NSENT];
	const uint64_t *sentv[NSENT];
	int init_fds[NINIT], sent_fds[NSENT];
	int sock_out, sock_in;
	_Atomic unsigned int reports, failures;
	/* Calls made through a stale handle: the last, per handle. */
	_Atomic uint64_t stale_seq, stale_last[STALE_HASH];
	/*
	 * Per thread: odd while an operation may still make calls with
	 * handles it read from slots.
	 */
	_Atomic unsigned long busy[NTHREAD];
};

struct thr {
	struct proc *p;
	int idx;
	int efd;
};

/* One operation. */
struct ctx {
	struct proc *p;
	int thread;
	int efd;
	unsigned long idx;
	enum op op;
	uint64_t rng;
	int err;		/* the last answer, for the trace */
};

/* A slot as read: valid while the slot keeps its generation. */
struct ref {
	int s;
	uint32_t handle;
	bool shared;
	uint64_t gen, off;
	uint32_t voff;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct ctx *c)
{
	return mix64(c->rng += 0x9e3779b97f4a7c15ull);
}

static uint32_t below(struct ctx *c, uint32_t n)
{
	return n ? (uint32_t)(rnd(c) % n) : 0;
}

static bool one_in(struct ctx *c, uint32_t n)
{
	return below(c, n) == 0;
}

/* A value to wait for: mostly small, rarely UINT64_MAX. */
static uint64_t wait_value(struct ctx *c)
{
	if (one_in(c, 40))
		return UINT64_MAX;
	return one_in(c, 8) ? 0 : below(c, 16);
}

/* A value to signal: rewinds happen about half the time. */
static uint64_t signal_value(struct ctx *c)
{
	if (one_in(c, 60))
		return UINT64_MAX;
	return one_in(c, 20) ? 0 : below(c, 16);
}

static void fail(struct ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	int zero = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&shm->failures, 1);
	atomic_fetch_add(&c->p->failures, 1);
	if (atomic_compare_exchange_strong(&shm->first, &zero, 1)) {
		shm->fproc = c->p->idx;
		shm->fthread = c->thread;
		shm->fidx = c->idx;
		snprintf(shm->fwhat, sizeof(shm->fwhat), "%s: %s",
			 ops[c->op].name, msg);
		atomic_store(&shm->first, 2);
	}
	if (atomic_fetch_add(&c->p->reports, 1) < MAX_REPORTS)
		fprintf(stderr,
			"# FAIL seed 0x%llx process %d thread %d op %lu (%s): %s (global op %lu; file: removing %d removed %d, device epoch %d of %d, unplugging %d)\n",
			(unsigned long long)g_seed, c->p->idx, c->thread,
			c->idx, ops[c->op].name, msg, atomic_load(&shm->ops),
			atomic_load(&c->p->removing),
			atomic_load(&c->p->removed), c->p->dev_epoch,
			atomic_load(&shm->epoch),
			atomic_load(&shm->unplugging));
}

/* The device is being, or was, unplugged since the file was opened. */
static bool unplug_seen(const struct proc *p)
{
	return atomic_load(&shm->unplugging) ||
	       atomic_load(&shm->epoch) != p->dev_epoch;
}

/*
 * Count the answer @err (0, an errno or -errno) of @call: a failure
 * unless it is 0, ENOMEM, one of @ok, or ENODEV during an unplug. @ok
 * depends on the state after the call: the call is made first.
 * Returns the errno.
 */
static int expect(struct ctx *c, const char *call, int err, errset ok)
{
	if (err < 0)
		err = -err;
	c->err = err;
	if (!err) {
		atomic_fetch_add(&shm->ok[c->op], 1);
		return 0;
	}
	atomic_fetch_add(&shm->err[c->op], 1);
	atomic_fetch_add(&shm->errs[err < NERR ? err : 0], 1);
	ok |= E(ENOMEM);
	if (err < 128 && (E(err) & ok))
		return err;
	if (err == ENODEV && unplug_seen(c->p))
		return err;
	fail(c, "%s answered errno %d (%s), not documented here", call, err,
	     strerror(err));
	return err;
}

/* What a removal of the file allows: ENODEV once one may have begun. */
static errset if_removing(struct ctx *c)
{
	return atomic_load(&c->p->removing) ? E(ENODEV) : 0;
}

static bool ref_get(struct ctx *c, struct ref *r)
{
	struct proc *p = c->p;
	struct slot *sl;

	r->s = below(c, SLOTS);
	pthread_mutex_lock(&p->mu);
	sl = &p->slot[r->s];
	r->handle = sl->handle;
	r->shared = sl->shared;
	r->gen = sl->gen;
	r->off = sl->off;
	r->voff = sl->voff;
	pthread_mutex_unlock(&p->mu);
	return r->handle;
}

/*
 * After a call: the slot still holds the handle read, so nobody
 * destroyed it since. If not, the call may have reached another fence
 * that got the handle's number since (handles are reused): noted for
 * op_create().
 */
static bool ref_same(struct ctx *c, const struct ref *r)
{
	struct proc *p = c->p;
	bool same;

	pthread_mutex_lock(&p->mu);
	same = p->slot[r->s].gen == r->gen;
	pthread_mutex_unlock(&p->mu);
	if (!same)
		atomic_store(&p->stale_last[r->handle % STALE_HASH],
			     atomic_fetch_add(&p->stale_seq, 1) + 1);
	return same;
}

/* Put a fence into slot @s; the handle it replaces is destroyed. */
static void put_fence(struct ctx *c, int s, const struct t_fence *f,
		      bool shared)
{
	struct proc *p = c->p;
	struct slot old;

	pthread_mutex_lock(&p->mu);
	old = p->slot[s];
	p->slot[s] = (struct slot){ .handle = f->handle, .shared = shared,
				    .gen = ++p->gens, .off = f->offset,
				    .voff = f->voff };
	pthread_mutex_unlock(&p->mu);
	/* Only this thread has the old handle now: it must go. */
	if (old.handle)
		expect(c, "FENCE_DESTROY", t_fence_destroy(p->fd, old.handle),
		       0);
}

static const uint64_t *map_value(int fd, uint64_t off, uint32_t voff)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, off);

	if (m == MAP_FAILED)
		return NULL;
	return (const uint64_t *)((const char *)m + voff);
}

static void unmap_value(const uint64_t *v)
{
	if (v)
		munmap((void *)((uintptr_t)v & ~(uintptr_t)4095), 4096);
}

/* --- the file ------------------------------------------------------ */

static uint32_t queue_create(struct ctx *c)
{
	struct drm_d3dq_queue_create qc = { 0 };
	bool removed = atomic_load(&c->p->removed);
	int err;

	err = t_ioctl(c->p->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc);
	err = expect(c, "QUEUE_CREATE", err,
		     E(EMFILE) | E(EDQUOT) | E(ENOSPC) | if_removing(c));
	if (!err && removed && !unplug_seen(c->p))
		fail(c, "QUEUE_CREATE succeeded through a removed file");
	return err ? 0 : qc.id;
}

static void proc_close(struct proc *p)
{
	int i;

	for (i = 0; i < NSENT; i++) {
		unmap_value(p->sentv[i]);
		p->sentv[i] = NULL;
	}
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	for (i = 0; i < SLOTS; i++)
		p->slot[i] = (struct slot){ .gen = ++p->gens };
	for (i = 0; i < NQ; i++) {
		p->q[i] = 0;
		p->qgen[i] = ++p->gens;
	}
}

/*
 * A new file (under the write lock): queues, a buffer, the parent's
 * shared fences in the first slots, the sentinels mapped.
 */
static void proc_open(struct ctx *c)
{
	struct proc *p = c->p;
	struct t_fence f;
	int i, err;

	p->dev_epoch = atomic_load(&shm->epoch);
	p->fd = t_open(0);
	if (p->fd < 0)
		return;
	atomic_store(&p->removing, 0);
	atomic_store(&p->removed, 0);
	for (i = 0; i < NQ; i++) {
		p->q[i] = queue_create(c);
		p->qgen[i] = ++p->gens;
	}
	p->bo = t_bo(p->fd, 4096, NULL);
	/* Fences of an older device are EINVAL in a new one. */
	for (i = 0; i < NINIT; i++) {
		err = expect(c, "FENCE_IMPORT",
			     t_fence_import(p->fd, p->init_fds[i], &f),
			     g_unbind ? E(EINVAL) : 0);
		if (!err)
			put_fence(c, i, &f, true);
	}
	for (i = 0; i < NSENT; i++) {
		err = expect(c, "FENCE_IMPORT",
			     t_fence_import(p->fd, p->sent_fds[i], &p->sent[i]),
			     g_unbind ? E(EINVAL) : 0);
		if (err)
			continue;
		p->sentv[i] = map_value(p->fd, p->sent[i].offset,
					p->sent[i].voff);
		if (!p->sentv[i]) {
			if (!unplug_seen(p))
				fail(c, "mmap of a sentinel's page: %s",
				     strerror(errno));
			continue;
		}
		if (t_value_load(p->sentv[i]) != SENT_V && !unplug_seen(p))
			fail(c, "a new file reads sentinel %d as 0x%llx, not 0x%llx",
			     i, (unsigned long long)t_value_load(p->sentv[i]),
			     (unsigned long long)SENT_V);
	}
	atomic_fetch_add(&shm->reopens, 1);
}

/*
 * A live file sees the sentinels at SENT_V: no other file's removal (or
 * anything else) changes them. Checked only while no removal of this
 * file and no unplug can have begun, before and after the loads.
 */
static void check_sentinels(struct ctx *c)
{
	struct proc *p = c->p;
	uint64_t v[NSENT];
	int i;

	if (atomic_load(&p->removing) || unplug_seen(p))
		return;
	for (i = 0; i < NSENT; i++)
		v[i] = p->sentv[i] ? t_value_load(p->sentv[i]) : SENT_V;
	if (atomic_load(&p->removing) || unplug_seen(p))
		return;
	for (i = 0; i < NSENT; i++)
		if (v[i] != SENT_V)
			fail(c, "sentinel %d reads 0x%llx through a live file, not 0x%llx",
			     i, (unsigned long long)v[i],
			     (unsigned long long)SENT_V);
}

/*
 * The file was removed (REMOVE returned, or the query reported a
 * reason): what the uapi promises for it, checked on the sentinels.
 */
static void check_removed(struct ctx *c)
{
	struct drm_d3dq_remove rm = { .flags = DRM_D3DQ_REMOVE_QUERY };
	struct proc *p = c->p;
	char what[200] = "";
	struct t_fence f;
	int i, err;

	if (expect(c, "REMOVE(QUERY)",
		   t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm), 0))
		return;
	if (rm.reason != -ENODEV && rm.reason != -ETIMEDOUT &&
	    rm.reason != -ECANCELED)
		snprintf(what, sizeof(what), "removal reason %d", rm.reason);
	for (i = 0; i < NSENT && !*what; i++) {
		const uint64_t *v;
		uint64_t x;

		if (!p->sentv[i])
			continue;
		x = t_value_load(p->sentv[i]);
		if (x != UINT64_MAX) {
			snprintf(what, sizeof(what),
				 "sentinel %d reads 0x%llx through the removed file's mapping",
				 i, (unsigned long long)x);
			break;
		}
		v = map_value(p->fd, p->sent[i].offset, p->sent[i].voff);
		x = v ? t_value_load(v) : 0;
		unmap_value(v);
		if (x != UINT64_MAX) {
			snprintf(what, sizeof(what),
				 "sentinel %d reads 0x%llx through a new mapping of the removed file (%s)",
				 i, (unsigned long long)x,
				 v ? "mapped" : strerror(errno));
			break;
		}
		err = t_fence_signal(p->fd, p->sent[i].handle, SENT_V);
		if (err != -ENODEV) {
			snprintf(what, sizeof(what),
				 "FENCE_SIGNAL through the removed file answered %d",
				 err);
			break;
		}
		/* The node bound counts a wait that needs no sleep too. */
		err = t_fence_wait1(p->fd, p->sent[i].handle, SENT_V + 1, 0);
		if (err && err != -EDQUOT) {
			snprintf(what, sizeof(what),
				 "FENCE_WAIT through the removed file answered %d",
				 err);
			break;
		}
	}
	if (!*what) {
		err = t_fence_create(p->fd, 0, 0, &f);
		if (err != -ENODEV)
			snprintf(what, sizeof(what),
				 "FENCE_CREATE through the removed file answered %d",
				 err);
		if (!err)
			t_fence_destroy(p->fd, f.handle);
	}
	if (*what && !unplug_seen(p))
		fail(c, "%s", what);
}

/* --- operations ---------------------------------------------------- */

/* The operation makes no more calls with handles it read from slots. */
static void op_quiet(struct ctx *c)
{
	if (c->thread >= 0 && atomic_load(&c->p->busy[c->thread]) % 2)
		atomic_fetch_add(&c->p->busy[c->thread], 1);
}

/*
 * Whether another thread may have reached the fence that now has handle
 * @h through a stale copy of the number since stale_seq was @s0: once
 * every operation running now has made its calls (and noted the stale
 * ones).
 */
static bool stale_use(struct ctx *c, uint32_t h, uint64_t s0)
{
	struct proc *p = c->p;
	unsigned long b[NTHREAD];
	int t;

	op_quiet(c);
	for (t = 0; t < NTHREAD; t++)
		b[t] = atomic_load(&p->busy[t]);
	for (t = 0; t < NTHREAD; t++)
		while (t != c->thread && b[t] % 2 &&
		       atomic_load(&p->busy[t]) == b[t])
			usleep(100);
	return atomic_load(&p->stale_last[h % STALE_HASH]) > s0;
}

static void op_create(struct ctx *c)
{
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed);
	bool shared = one_in(c, 2);
	uint64_t value = one_in(c, 8) ? rnd(c) : below(c, 16);
	int s = below(c, SLOTS), err;
	bool look = one_in(c, 4);
	uint64_t s0 = atomic_load(&p->stale_seq);
	struct t_fence f;

	err = t_fence_create(p->fd, value, shared ? DRM_D3DQ_FENCE_SHARED : 0,
			     &f);
	err = expect(c, "FENCE_CREATE", err, E(EDQUOT) | if_removing(c));
	if (err)
		return;
	if (removed && !unplug_seen(p))
		fail(c, "FENCE_CREATE succeeded through a removed file");
	if (look) {
		/* Nobody else has the handle: the page holds @value. */
		const uint64_t *v = map_value(p->fd, f.offset, f.voff);
		uint64_t x = v ? t_value_load(v) : 0;

		if ((!v || x != value || (shared && f.voff)) &&
		    !atomic_load(&p->removing) && !unplug_seen(p) &&
		    !stale_use(c, f.handle, s0))
			fail(c, "new fence %u: page reads 0x%llx for 0x%llx (voff %u, %s)",
			     f.handle, (unsigned long long)x,
			     (unsigned long long)value, f.voff,
			     v ? "mapped" : strerror(errno));
		if (v && !mprotect((void *)((uintptr_t)v & ~(uintptr_t)4095),
				   4096, PROT_READ | PROT_WRITE))
			fail(c, "the value page of fence %u became writable",
			     f.handle);
		unmap_value(v);
	}
	put_fence(c, s, &f, shared);
}

static void op_destroy(struct ctx *c)
{
	struct proc *p = c->p;
	int s = below(c, SLOTS);
	uint32_t h;

	pthread_mutex_lock(&p->mu);
	h = p->slot[s].handle;
	p->slot[s].handle = 0;
	p->slot[s].gen = ++p->gens;
	pthread_mutex_unlock(&p->mu);
	/* The slot was the handle's only holder: it must go. */
	if (h)
		expect(c, "FENCE_DESTROY", t_fence_destroy(p->fd, h), 0);
}

/* FENCE_EXPORT of a slot's fence: the fd, or -1. */
static int export(struct ctx *c, const struct ref *r)
{
	int xfd = t_fence_export(c->p->fd, r->handle);
	bool same = ref_same(c, r);

	if (xfd >= 0) {
		c->err = 0;
		atomic_fetch_add(&shm->ok[c->op], 1);
		if (!r->shared && same)
			fail(c, "FENCE_EXPORT of a fence without SHARED succeeded");
		return xfd;
	}
	if (!r->shared && same && xfd == -EINVAL) {
		c->err = EINVAL;
		return -1;
	}
	expect(c, "FENCE_EXPORT", xfd,
	       E(EMFILE) | if_removing(c) |
	       (same ? 0 : E(ENOENT) | E(EINVAL)));
	return -1;
}

/* FENCE_IMPORT of @xfd into slot @s. */
static void import(struct ctx *c, int xfd, int s)
{
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed);
	struct t_fence f;
	int err;

	/* Fences of an older device are EINVAL after a rebind. */
	err = t_fence_import(p->fd, xfd, &f);
	err = expect(c, "FENCE_IMPORT", err,
		     if_removing(c) | (g_unbind ? E(EINVAL) : 0));
	if (err)
		return;
	if (removed && !unplug_seen(p))
		fail(c, "FENCE_IMPORT succeeded through a removed file");
	put_fence(c, s, &f, true);
}

static void op_dup(struct ctx *c)
{
	struct ref r;
	int s, xfd;

	if (!ref_get(c, &r))
		return;
	s = below(c, SLOTS);
	xfd = export(c, &r);
	if (xfd < 0)
		return;
	import(c, xfd, s);
	close(xfd);
}

static int send_fd(int sock, int fd)
{
	char b = 0, buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char b, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Export a fence to the next process (if its socket has room). */
static void op_send(struct ctx *c)
{
	struct ref r;
	int xfd;

	if (!ref_get(c, &r))
		return;
	xfd = export(c, &r);
	if (xfd < 0)
		return;
	if (!send_fd(c->p->sock_out, xfd))
		atomic_fetch_add(&shm->passed, 1);
	close(xfd);
}

/* Import a fence the previous process sent, if there is one. */
static void op_recv(struct ctx *c)
{
	int s = below(c, SLOTS), xfd = recv_fd(c->p->sock_in);

	if (xfd < 0)
		return;
	import(c, xfd, s);
	close(xfd);
}

static void op_reimport(struct ctx *c)
{
	int k = below(c, NINIT), s = below(c, SLOTS);

	import(c, c->p->init_fds[k], s);
}

static void op_signal(struct ctx *c)
{
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed);
	uint64_t v;
	struct ref r;
	int err;

	if (!ref_get(c, &r))
		return;
	v = signal_value(c);
	err = t_fence_signal(p->fd, r.handle, v);
	err = expect(c, "FENCE_SIGNAL", err,
		     (ref_same(c, &r) ? 0 : E(ENOENT)) | if_removing(c));
	if (!err && removed && !unplug_seen(p))
		fail(c, "FENCE_SIGNAL succeeded through a removed file");
}

/*
 * 1-@max fence values for a wait or a registration, a fence named twice
 * now and then; @n 0 if every slot drawn was empty. Whether all values,
 * and whether any, are 0 (a condition that holds at once).
 */
static void gen_values(struct ctx *c, struct drm_d3dq_fence_value *fv,
		       struct ref *r, uint32_t max, uint32_t *n,
		       bool *all_zero, bool *any_zero)
{
	uint32_t i, want = 1 + below(c, max), k = 0;

	*all_zero = true;
	*any_zero = false;
	for (i = 0; i < want; i++) {
		if (k && one_in(c, 4)) {
			/* The same fence again, maybe with another value. */
			uint32_t j = below(c, k);

			r[k] = r[j];
			fv[k] = fv[j];
			if (one_in(c, 2))
				fv[k].value = wait_value(c);
		} else {
			if (!ref_get(c, &r[k])) {
				wait_value(c);
				continue;
			}
			fv[k] = (struct drm_d3dq_fence_value){
				.handle = r[k].handle, .value = wait_value(c) };
		}
		if (fv[k].value)
			*all_zero = false;
		else
			*any_zero = true;
		k++;
	}
	*n = k;
}

static bool refs_same(struct ctx *c, const struct ref *r, uint32_t n)
{
	bool same = true;
	uint32_t i;

	for (i = 0; i < n; i++)
		same &= ref_same(c, &r[i]);
	return same;
}

static void op_wait(struct ctx *c)
{
	struct drm_d3dq_fence_value fv[4];
	struct drm_d3dq_fence_wait a = { 0 };
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed), all0, any0, any, same;
	bool poll_only = one_in(c, 2);
	uint64_t sleep_us = 100 + below(c, 1900);
	struct ref r[4];
	uint32_t n;
	int err;

	gen_values(c, fv, r, 4, &n, &all0, &any0);
	any = one_in(c, 2);
	if (!n)
		return;
	a.flags = any ? DRM_D3DQ_FENCE_WAIT_ANY : 0;
	a.fences = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(n, fv);
	a.deadline_ns = poll_only ? 0 : t_deadline(sleep_us * T_US);
	err = t_ioctl(p->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &a);
	same = refs_same(c, r, n);
	err = expect(c, "FENCE_WAIT", err,
		     E(ETIME) | E(EDQUOT) | (same ? 0 : E(ENOENT)));
	/* Value 0 is reached; a removed file's waits return at once. */
	if (err == ETIME && ((any ? any0 : all0) || removed) &&
	    !unplug_seen(p))
		fail(c, "FENCE_WAIT timed out (%u fences, %s, %s)", n,
		     any ? "ANY" : "ALL",
		     removed ? "the file was removed" : "values 0");
}

static void op_event(struct ctx *c)
{
	struct drm_d3dq_fence_value fv[3];
	struct drm_d3dq_fence_event a = { 0 };
	struct drm_syncobj_create sc = { 0 };
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed), all0, any0, same, now;
	bool syncobj = one_in(c, 4), drain = one_in(c, 8), any = one_in(c, 2);
	uint64_t point = 1 + below(c, 1000);
	struct ref r[3];
	uint32_t n;
	int err;

	gen_values(c, fv, r, 3, &n, &all0, &any0);
	if (!n)
		return;
	now = removed || (any ? any0 : all0);
	a.fences = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(n, fv);
	a.flags = any ? DRM_D3DQ_FENCE_WAIT_ANY : 0;
	if (syncobj) {
		/* A point of a syncobj whose handle goes at once. */
		if (ioctl(p->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc))
			return;
		a.flags |= DRM_D3DQ_FENCE_EVENT_SYNCOBJ;
		a.syncobj = sc.handle;
		a.point = point;
	} else {
		a.eventfd = c->efd;
		if (now)
			t_efd_take(c->efd);
	}
	err = t_ioctl(p->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &a);
	same = refs_same(c, r, n);
	err = expect(c, "FENCE_EVENT", err,
		     E(EDQUOT) | (same ? 0 : E(ENOENT)));
	/*
	 * A condition that holds already (values 0, or through a removed
	 * file) fires the eventfd in the call.
	 */
	if (!err && now && !syncobj && !t_efd_take(c->efd) &&
	    !unplug_seen(p))
		fail(c, "a registration (%s) did not fire in its call",
		     removed ? "through the removed file" : "values 0");
	if (sc.handle) {
		struct drm_syncobj_destroy sd = { .handle = sc.handle };

		ioctl(p->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
	}
	if (drain && t_efd_take(c->efd))
		atomic_fetch_add(&shm->fired, 1);
}

static void op_sync_file(struct ctx *c)
{
	struct drm_d3dq_fence_sync_file a = { 0 };
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed), same;
	struct ref r;
	int err;

	if (!ref_get(c, &r))
		return;
	a.handle = r.handle;
	a.value = one_in(c, 4) ? 0 : wait_value(c);
	err = t_ioctl(p->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a);
	same = ref_same(c, &r);
	err = expect(c, "FENCE_EXPORT_SYNC_FILE", err,
		     E(EDQUOT) | E(EMFILE) | if_removing(c) |
		     (a.value ? E(ENODATA) : 0) | (same ? 0 : E(ENOENT)));
	if (removed && err != ENODEV && err != EDQUOT &&
	    (err != ENOENT || same) && !unplug_seen(p))
		fail(c, "FENCE_EXPORT_SYNC_FILE through a removed file answered %d",
		     err);
	if (!err) {
		struct pollfd pfd = { .fd = a.fd, .events = POLLIN };

		poll(&pfd, 1, 0);
		close(a.fd);
	}
}

/*
 * Replace queue @k (if it still has generation @gen, or always when
 * @gen is 0): destroy it, create another.
 */
static void replace_queue(struct ctx *c, int k, uint64_t gen)
{
	struct proc *p = c->p;
	uint32_t id, nid;

	pthread_mutex_lock(&p->mu);
	if (gen && p->qgen[k] != gen) {
		pthread_mutex_unlock(&p->mu);
		return;
	}
	id = p->q[k];
	p->q[k] = 0;
	p->qgen[k] = ++p->gens;
	pthread_mutex_unlock(&p->mu);
	/* Only this thread has the id now. */
	if (id)
		expect(c, "QUEUE_DESTROY", t_queue_destroy(p->fd, id), 0);
	nid = queue_create(c);
	if (!nid)
		return;
	pthread_mutex_lock(&p->mu);
	if (!p->q[k]) {
		p->q[k] = nid;
		p->qgen[k] = ++p->gens;
		nid = 0;
	}
	pthread_mutex_unlock(&p->mu);
	if (nid)
		expect(c, "QUEUE_DESTROY", t_queue_destroy(p->fd, nid), 0);
}

static void op_queue(struct ctx *c)
{
	replace_queue(c, below(c, NQ), 0);
}

static void op_submit(struct ctx *c)
{
	struct drm_d3dq_sync w[3], s[3];
	struct drm_d3dq_submit a = { 0 };
	struct proc *p = c->p;
	union {
		struct drm_d3dq_cmd_write64 w;
		struct drm_d3dq_cmd_delay d;
	} cmd;
	struct ref rw[3], rs[3];
	uint32_t nw = 0, ns = 0, want_w, want_s, i, kind = below(c, 20);
	uint32_t cmdk = below(c, 4);
	int k = below(c, NQ), err;
	bool nodata = false, same;
	uint64_t qg;
	errset ok;

	memset(&cmd, 0, sizeof(cmd));
	if (kind < 8) {
		want_w = below(c, 3);
		want_s = below(c, 3);
	} else if (kind < 14) {
		a.flags = DRM_D3DQ_SUBMIT_HOLD;
		want_w = 1 + below(c, 2);
		want_s = below(c, 3);
	} else if (kind < 17) {
		/* Waits carried to the queue's next job. */
		a.flags = DRM_D3DQ_SUBMIT_CARRY;
		want_w = 1 + below(c, 2);
		want_s = 0;
		cmdk = 0;
	} else {
		/* Signals on the queue's last job. */
		a.flags = DRM_D3DQ_SUBMIT_TAIL;
		want_w = 0;
		want_s = 1 + below(c, 3);
		cmdk = 0;
	}
	for (i = 0; i < want_w; i++) {
		if (!ref_get(c, &rw[nw])) {
			wait_value(c);
			continue;
		}
		w[nw] = t_fs(rw[nw].handle, wait_value(c));
		if (w[nw].point)
			nodata = true;
		nw++;
	}
	for (i = 0; i < want_s; i++) {
		if (!ref_get(c, &rs[ns])) {
			signal_value(c);
			continue;
		}
		s[ns] = t_fs(rs[ns].handle, signal_value(c));
		ns++;
	}
	if (cmdk == 2) {
		cmd.w.hdr.op = DRM_D3DQ_CMD_WRITE64;
		cmd.w.hdr.size = sizeof(cmd.w);
		cmd.w.handle = p->bo;
		cmd.w.offset = 8 * below(c, 512);
		cmd.w.value = rnd(c);
		a.cmds = (uint64_t)(uintptr_t)&cmd;
		a.cmd_bytes = sizeof(cmd.w);
	} else if (cmdk == 3) {
		cmd.d.hdr.op = DRM_D3DQ_CMD_DELAY;
		cmd.d.hdr.size = sizeof(cmd.d);
		cmd.d.ns = below(c, 50000);
		a.cmds = (uint64_t)(uintptr_t)&cmd;
		a.cmd_bytes = sizeof(cmd.d);
	}
	if ((a.flags & DRM_D3DQ_SUBMIT_CARRY && !nw) ||
	    (a.flags & DRM_D3DQ_SUBMIT_TAIL && !ns))
		return;
	pthread_mutex_lock(&p->mu);
	a.queue_id = p->q[k];
	qg = p->qgen[k];
	pthread_mutex_unlock(&p->mu);
	if (!a.queue_id)
		return;
	a.waits = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(nw, w);
	a.signals = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(ns, s);
	err = t_ioctl(p->fd, DRM_IOCTL_D3DQ_SUBMIT, &a);
	pthread_mutex_lock(&p->mu);
	same = p->qgen[k] == qg;
	pthread_mutex_unlock(&p->mu);
	same &= refs_same(c, rw, nw);
	same &= refs_same(c, rs, ns);
	ok = E(ENOSPC) | E(ECANCELED) | E(EDQUOT) | (same ? 0 : E(ENOENT));
	/* A fence wait of a value above 0 may have nothing to bring it. */
	if (nodata && !(a.flags & (DRM_D3DQ_SUBMIT_HOLD |
				   DRM_D3DQ_SUBMIT_CARRY)))
		ok |= E(ENODATA);
	err = expect(c, "SUBMIT", err, ok);
	if (err == ECANCELED || err == ENOSPC) {
		/* Lost, or full of held jobs: a new queue. */
		replace_queue(c, k, qg);
		return;
	}
	if (err)
		return;
	if (a.flags & DRM_D3DQ_SUBMIT_CARRY) {
		if (a.seqno || a.out_flags)
			fail(c, "SUBMIT_CARRY returned seqno %llu out_flags %u",
			     (unsigned long long)a.seqno, a.out_flags);
		atomic_fetch_add(&shm->carried, 1);
		return;
	}
	if (!a.seqno) {
		/* Only a TAIL submit may make no job; then it is done. */
		if (!(a.flags & DRM_D3DQ_SUBMIT_TAIL) ||
		    a.out_flags & ~DRM_D3DQ_SUBMIT_DONE)
			fail(c, "SUBMIT (flags %u) returned no job, out_flags %u",
			     a.flags, a.out_flags);
		atomic_fetch_add(&shm->tail_done, 1);
		return;
	}
	atomic_fetch_add(&shm->jobs, 1);
	if (a.out_flags & DRM_D3DQ_SUBMIT_HELD)
		atomic_fetch_add(&shm->held, 1);
	if (a.out_flags & DRM_D3DQ_SUBMIT_DONE)
		atomic_fetch_add(&shm->done, 1);
}

static void op_map(struct ctx *c)
{
	struct proc *p = c->p;
	bool removed = atomic_load(&p->removed), same;
	bool prot = one_in(c, 4), wr = one_in(c, 8);
	const uint64_t *v;
	struct ref r;
	uint64_t x;
	void *m;
	int e;

	if (!ref_get(c, &r))
		return;
	v = map_value(p->fd, r.off, r.voff);
	e = errno;
	x = v ? t_value_load(v) : 0;
	same = ref_same(c, &r);
	if (!v) {
		/* A page of a fence the file no longer has a handle to. */
		if ((same || (e != EACCES && e != EINVAL)) && !unplug_seen(p))
			fail(c, "mmap of fence %u's page: %s", r.handle,
			     strerror(e));
		return;
	}
	atomic_fetch_add(&shm->ok[c->op], 1);
	if (removed && same && x != UINT64_MAX && !unplug_seen(p))
		fail(c, "fence %u reads 0x%llx through the removed file",
		     r.handle, (unsigned long long)x);
	if (prot && !mprotect((void *)((uintptr_t)v & ~(uintptr_t)4095), 4096,
			      PROT_READ | PROT_WRITE))
		fail(c, "the value page of fence %u became writable", r.handle);
	unmap_value(v);
	if (wr) {
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd,
			 r.off);
		e = errno;
		if (m != MAP_FAILED) {
			fail(c, "a writable mapping of fence %u's page", r.handle);
			munmap(m, 4096);
		} else if (e != EACCES && (same || e != EINVAL) &&
			   !unplug_seen(p)) {
			fail(c, "a writable mapping of fence %u's page: %s",
			     r.handle, strerror(e));
		}
	}
}

static void op_remove(struct ctx *c)
{
	struct drm_d3dq_remove rm = { 0 };
	struct proc *p = c->p;

	atomic_fetch_add(&p->removing, 1);
	if (expect(c, "REMOVE", t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm),
		   0))
		return;
	atomic_store(&p->removed, 1);
	atomic_fetch_add(&shm->removes, 1);
	check_removed(c);
}

/*
 * For a failure the kernel's state may explain: the file's client in
 * debugfs "queues", and a mark in the kernel log.
 */
static void dump_client(struct ctx *c)
{
	const char *text = t_queues_text(), *at, *end;
	long long id = t_fdinfo(c->p->fd, "drm-client-id", NULL, 0);
	char key[64];
	int kfd;

	kfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (kfd >= 0) {
		dprintf(kfd, "<4>d3dq fuzz: failure in process %d thread %d op %lu (client %lld)\n",
			c->p->idx, c->thread, c->idx, id);
		close(kfd);
	}
	snprintf(key, sizeof(key), "client id=%lld ", id);
	at = text ? strstr(text, key) : NULL;
	if (!at)
		return;
	end = strstr(at + 1, "\nclient ");
	fprintf(stderr, "# debugfs queues of the client:\n%.*s\n",
		(int)(end ? end - at : (long)strlen(at)), at);
}

/*
 * Arm removal on loss and make a job of a new queue run past the
 * timeout: the kernel removes the file (within seconds).
 */
static void op_loss(struct ctx *c)
{
	struct drm_d3dq_remove rm = { .flags = DRM_D3DQ_REMOVE_ON_LOSS };
	struct drm_d3dq_cmd_delay d = {
		.hdr = { .op = DRM_D3DQ_CMD_DELAY, .size = sizeof(d) },
		.ns = 3 * TIMEOUT_MS * T_MS,
	};
	struct drm_d3dq_submit a = { 0 };
	struct drm_d3dq_sync sig;
	struct proc *p = c->p;
	uint64_t t0 = 0;
	uint32_t q, so = 0;
	bool ran = false;
	int i, err;

	atomic_fetch_add(&p->removing, 1);
	if (expect(c, "REMOVE(ON_LOSS)",
		   t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm), 0))
		return;
	if (rm.reason && rm.reason != -ENODEV && rm.reason != -ETIMEDOUT &&
	    rm.reason != -ECANCELED)
		fail(c, "REMOVE(ON_LOSS) reason %d", rm.reason);
	q = rm.reason ? 0 : queue_create(c);
	if (q) {
		/* A syncobj tells how the job ended, and when. */
		so = t_syncobj(p->fd);
		sig = t_bin(so);
		a.queue_id = q;
		a.cmds = (uint64_t)(uintptr_t)&d;
		a.cmd_bytes = sizeof(d);
		a.signals = (struct drm_d3dq_obj_array)
			DRM_D3DQ_OBJ_ARRAY(so ? 1 : 0, &sig);
		t0 = t_now();
		err = expect(c, "SUBMIT", t_ioctl(p->fd, DRM_IOCTL_D3DQ_SUBMIT,
						  &a),
			     E(ECANCELED) | E(ENOSPC) | E(EDQUOT));
		ran = !err && !(a.out_flags & DRM_D3DQ_SUBMIT_HELD);
	}
	/* The query waits for a removal under way; a loss comes first. */
	op_quiet(c);
	for (i = 0; i < 1000; i++) {
		rm.flags = DRM_D3DQ_REMOVE_QUERY;
		rm.reason = 0;
		if (expect(c, "REMOVE(QUERY)",
			   t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm), 0) ||
		    rm.reason)
			break;
		usleep(10000);
	}
	if (rm.reason) {
		atomic_store(&p->removed, 1);
		atomic_fetch_add(&shm->losses, 1);
		check_removed(c);
	} else if (ran && !unplug_seen(p)) {
		struct drm_d3dq_queue_get_state st = { .id = q };
		struct sync_fence_info fi;
		struct sync_file_info info;
		long long ms = -1;
		int sfd = -1;

		t_queue_state(p->fd, q, &st);
		memset(&fi, 0, sizeof(fi));
		if (so && !drmSyncobjExportSyncFile(p->fd, so, &sfd))
			t_sync_file_info(sfd, &info, &fi, 1);
		if (sfd >= 0)
			close(sfd);
		if (fi.timestamp_ns)
			ms = ((long long)fi.timestamp_ns - (long long)t0) /
			     (long long)T_MS;
		/*
		 * The engine times its job itself (robustness.rst, "A job
		 * past the timeout completed"): a job of three times the
		 * timeout never completes without error.
		 */
		fail(c, "the armed file was not removed %llu ms after a job of %llu ms was submitted (timeout %u ms); queue %u: state %u reason %d pending %llu; the job's fence: status %d, signalled %lld ms after the submit",
		     (unsigned long long)((t_now() - t0) / T_MS),
		     (unsigned long long)(d.ns / T_MS), TIMEOUT_MS,
		     q, st.state, st.reason,
		     (unsigned long long)st.pending_jobs, fi.status, ms);
		dump_client(c);
	}
	if (so)
		drmSyncobjDestroy(p->fd, so);
	if (q)
		expect(c, "QUEUE_DESTROY", t_queue_destroy(p->fd, q), 0);
}

static enum op pick_op(struct ctx *c)
{
	uint32_t x = below(c, 1000);
	int i;

	for (i = 0; i < NOPS - 1; i++) {
		if (x < ops[i].weight)
			break;
		x -= ops[i].weight;
	}
	return i;
}

static void run_op(struct thr *t, unsigned long idx)
{
	struct proc *p = t->p;
	uint64_t t0;
	struct ctx c = {
		.p = p, .thread = t->idx, .efd = t->efd, .idx = idx,
		.rng = mix64(g_seed ^ mix64(((uint64_t)p->idx << 48) ^
					    ((uint64_t)t->idx << 40) ^ 0x38) ^
			     idx * 0xd1342543de82ef95ull),
	};

	c.op = pick_op(&c);
	t0 = t_now();
	atomic_fetch_add(&shm->ops, 1);
	atomic_store(&shm->cur[p->idx][t->idx], idx);
	atomic_store(&shm->cur_op[p->idx][t->idx], c.op);
	c.err = -1;
	if (c.op == OP_REOPEN) {
		pthread_rwlock_wrlock(&p->lock);
		proc_close(p);
		proc_open(&c);
		c.err = p->fd < 0 ? ENODEV : 0;
		pthread_rwlock_unlock(&p->lock);
		goto out;
	}
	pthread_rwlock_rdlock(&p->lock);
	if (p->fd < 0) {
		bool none;

		/* Unplugged, and no device to open then: try again. */
		pthread_rwlock_unlock(&p->lock);
		pthread_rwlock_wrlock(&p->lock);
		if (p->fd < 0)
			proc_open(&c);
		none = p->fd < 0;
		pthread_rwlock_unlock(&p->lock);
		if (none)
			usleep(2000);
		atomic_fetch_add(&shm->skipped, 1);
		goto out;
	}
	atomic_fetch_add(&p->busy[t->idx], 1);
	check_sentinels(&c);
	switch (c.op) {
	case OP_CREATE: op_create(&c); break;
	case OP_DESTROY: op_destroy(&c); break;
	case OP_DUP: op_dup(&c); break;
	case OP_SEND: op_send(&c); break;
	case OP_RECV: op_recv(&c); break;
	case OP_REIMPORT: op_reimport(&c); break;
	case OP_SIGNAL: op_signal(&c); break;
	case OP_WAIT: op_wait(&c); break;
	case OP_EVENT: op_event(&c); break;
	case OP_SYNC_FILE: op_sync_file(&c); break;
	case OP_SUBMIT: op_submit(&c); break;
	case OP_MAP: op_map(&c); break;
	case OP_QUEUE: op_queue(&c); break;
	case OP_REMOVE: op_remove(&c); break;
	case OP_LOSS: op_loss(&c); break;
	default: break;
	}
	op_quiet(&c);
	pthread_rwlock_unlock(&p->lock);
out:
	atomic_fetch_add(&shm->us[c.op], (t_now() - t0) / T_US);
	if ((trace_p == -1 || trace_p == p->idx) &&
	    (trace_t == -1 || trace_t == t->idx))
		fprintf(stderr, "# trace %d.%d op %lu %s: %s\n", p->idx,
			t->idx, idx, ops[c.op].name,
			c.err < 0 ? "nothing to do" : c.err ? strerror(c.err) :
			"ok");
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	unsigned long i;

	for (i = 0; i < g_per_thread; i++)
		run_op(t, i);
	return NULL;
}

/* One process: NTHREAD threads on one file; exit status 0 if clean. */
static int child_main(int idx, int sock_out, int sock_in,
		      const int *init_fds, const int *sent_fds)
{
	struct thr th[NTHREAD];
	pthread_t tid[NTHREAD];
	pthread_rwlockattr_t ra;
	struct proc *p;
	struct ctx c;
	int i;

	p = calloc(1, sizeof(*p));
	if (!p)
		return 2;
	p->idx = idx;
	p->fd = -1;
	p->sock_out = sock_out;
	p->sock_in = sock_in;
	memcpy(p->init_fds, init_fds, sizeof(p->init_fds));
	memcpy(p->sent_fds, sent_fds, sizeof(p->sent_fds));
	/* A writer (reopen) must not starve behind the operations. */
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&p->lock, &ra);
	pthread_mutex_init(&p->mu, NULL);
	c = (struct ctx){ .p = p, .thread = -1, .op = OP_REOPEN };
	proc_open(&c);
	for (i = 0; i < NTHREAD; i++) {
		th[i] = (struct thr){ .p = p, .idx = i };
		th[i].efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (th[i].efd < 0 ||
		    pthread_create(&tid[i], NULL, thread_main, &th[i]))
			return 3;
	}
	for (i = 0; i < NTHREAD; i++) {
		pthread_join(tid[i], NULL);
		close(th[i].efd);
	}
	proc_close(p);
	return atomic_load(&p->failures) ? 1 : 0;
}

/* --- the test ------------------------------------------------------ */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void parse_trace(void)
{
	const char *v = getenv("D3DQ_FUZZ_TRACE");

	if (!v || !*v)
		return;
	if (!strcmp(v, "all")) {
		trace_p = trace_t = -1;
		return;
	}
	if (sscanf(v, "%d.%d", &trace_p, &trace_t) != 2)
		trace_p = trace_t = -2;
}

static void report(struct __test_metadata *_metadata, uint64_t secs)
{
	char line[1024];
	size_t n = 0;
	int i;

	TH_LOG("%lu operations in %llu s (%lu with no device to open); %lu jobs (%lu held at submit, %lu done in the call), %lu carrying and %lu jobless tail submits",
	       shm->ops, (unsigned long long)secs, shm->skipped, shm->jobs,
	       shm->held, shm->done, shm->carried, shm->tail_done);
	TH_LOG("%lu REMOVE, %lu removals on loss, %lu files opened, %lu unplugs, %lu fences passed between processes, %lu eventfd reads found events",
	       shm->removes, shm->losses, shm->reopens, shm->unplugs,
	       shm->passed, shm->fired);
	for (i = 0; i < NOPS; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s %lu/%lu",
			      ops[i].name, shm->ok[i], shm->err[i]);
	TH_LOG("calls ok/failed per operation:%s", line);
	n = 0;
	for (i = 0; i < NOPS; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s %lu",
			      ops[i].name, shm->us[i] / 1000);
	TH_LOG("thread time per operation (ms):%s", line);
	n = 0;
	line[0] = 0;
	for (i = 0; i < NERR; i++)
		if (shm->errs[i])
			n += snprintf(line + n, sizeof(line) - n, " %s %lu",
				      i ? strerrorname_np(i) : "other",
				      shm->errs[i]);
	TH_LOG("errnos:%s", line);
}

static void run_case(struct __test_metadata *_metadata, bool unbind,
		     const char *name)
{
	uint64_t calls = env_u64("D3DQ_FUZZ_CALLS", 10 * DEFAULT_OPS);
	uint64_t start = t_now(), last_change = start, rng;
	unsigned long total, last_ops = 0, next_unplug, interval;
	unsigned long next_note = NOTE_OPS;
	int init_fds[NINIT], sent_fds[NSENT], sv[NPROC][2], efd, fd;
	struct t_fence sent[NSENT];
	const uint64_t *sentv[NSENT];
	pid_t pid[NPROC];
	int i, j, status, alive;
	bool stalled = false, unplug_failed = false, peer_bad = false;

	g_seed = env_u64("D3DQ_FUZZ_SEED", 0xd3d9f026) ^ (unbind ? 0x6b : 0);
	g_unbind = unbind;
	parse_trace();
	total = calls / 10;
	g_per_thread = total / (NPROC * NTHREAD);
	if (!g_per_thread)
		g_per_thread = 1;
	total = g_per_thread * NPROC * NTHREAD;
	/* An unplug every UNPLUG_OPS operations, at least two. */
	interval = total / 3 < UNPLUG_OPS ? total / 3 + 1 : UNPLUG_OPS;
	next_unplug = interval;
	rng = g_seed;
	TH_LOG("seed 0x%llx (D3DQ_FUZZ_SEED=0x%llx): %d processes x %d threads x %lu operations",
	       (unsigned long long)g_seed,
	       (unsigned long long)(g_seed ^ (unbind ? 0x6b : 0)), NPROC,
	       NTHREAD, g_per_thread);

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shm);
	fd = t_open(0);
	ASSERT_LE(0, fd);
	if (!(t_param(fd, DRM_D3DQ_PARAM_FEATURES) &
	      DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES)) {
		close(fd);
		SKIP(return, "no DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES (uapi 1.9)");
	}
	/* The parent's shared fences and the sentinels, as descriptors. */
	for (i = 0; i < NINIT; i++) {
		struct t_fence f;

		ASSERT_EQ(0, t_fence_create(fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
		init_fds[i] = t_fence_export(fd, f.handle);
		ASSERT_LE(0, init_fds[i]);
		ASSERT_EQ(0, t_fence_destroy(fd, f.handle));
	}
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	for (i = 0; i < NSENT; i++) {
		ASSERT_EQ(0, t_fence_create(fd, SENT_V, DRM_D3DQ_FENCE_SHARED,
					    &sent[i]));
		sent_fds[i] = t_fence_export(fd, sent[i].handle);
		ASSERT_LE(0, sent_fds[i]);
		sentv[i] = map_value(fd, sent[i].offset, sent[i].voff);
		ASSERT_NE(NULL, sentv[i]);
		/* A peer's registration no removal elsewhere may fire. */
		ASSERT_EQ(0, t_fence_event1(fd, sent[i].handle, SENT_V + 1,
					    efd));
	}
	for (i = 0; i < NPROC; i++)
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC,
					0, sv[i]));
	for (i = 0; i < NPROC; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i])
			continue;
		/* Process i sends on sv[i][0], receives on sv[i - 1][1]. */
		close(fd);
		close(efd);
		for (j = 0; j < NSENT; j++)
			unmap_value(sentv[j]);
		for (j = 0; j < NPROC; j++) {
			if (j != i)
				close(sv[j][0]);
			if (j != (i + NPROC - 1) % NPROC)
				close(sv[j][1]);
		}
		_exit(child_main(i, sv[i][0], sv[(i + NPROC - 1) % NPROC][1],
				 init_fds, sent_fds));
	}
	for (i = 0; i < NPROC; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}

	/*
	 * Watch: the sentinels keep their value for the parent, its
	 * registrations stay pending; unplug now and then; a stall ends
	 * the run.
	 */
	for (alive = NPROC; alive;) {
		unsigned long ops_now = atomic_load(&shm->ops);

		usleep(5000);
		for (i = 0; i < NPROC; i++) {
			if (pid[i] <= 0 ||
			    waitpid(pid[i], &status, WNOHANG) != pid[i])
				continue;
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("process %d: status 0x%x", i, status);
			pid[i] = 0;
			alive--;
		}
		for (i = 0; i < NSENT && !atomic_load(&shm->epoch) &&
		     !peer_bad; i++) {
			uint64_t x = t_value_load(sentv[i]);

			if (x != SENT_V) {
				TH_LOG("the parent's view of sentinel %d changed to 0x%llx (global op %lu)",
				       i, (unsigned long long)x, ops_now);
				peer_bad = true;
			} else if (t_efd_take(efd)) {
				TH_LOG("the parent's registration on a sentinel fired (global op %lu)",
				       ops_now);
				peer_bad = true;
			}
		}
		if (ops_now >= next_note) {
			/* Progress of long runs: what ran clean so far. */
			TH_LOG("%lu operations in %llu s, %lu failures",
			       ops_now,
			       (unsigned long long)((t_now() - start) / T_SEC),
			       atomic_load(&shm->failures));
			next_note += NOTE_OPS;
		}
		if (ops_now != last_ops) {
			last_ops = ops_now;
			last_change = t_now();
		} else if (t_now() - last_change > STALL_S * T_SEC) {
			stalled = true;
			break;
		}
		if (!unbind || ops_now < next_unplug || !alive ||
		    ops_now > total - interval / 4)
			continue;
		next_unplug += interval;
		atomic_store(&shm->unplugging, 1);
		if (t_unbind(0)) {
			unplug_failed = true;
			break;
		}
		atomic_fetch_add(&shm->epoch, 1);
		atomic_fetch_add(&shm->unplugs, 1);
		/* An unplug sets every fence to UINT64_MAX for everyone. */
		if (sentv[0]) {
			for (i = 0; i < NSENT; i++) {
				EXPECT_EQ(UINT64_MAX, t_value_load(sentv[i]));
				unmap_value(sentv[i]);
				sentv[i] = NULL;
			}
			EXPECT_LT(0, t_efd_take(efd))
				TH_LOG("the unplug did not fire the registrations");
			close(fd);
			fd = -1;
		}
		rng = mix64(rng + 1);
		usleep(5000 + rng % 25000);
		if (t_bind(0)) {
			unplug_failed = true;
			break;
		}
		atomic_store(&shm->unplugging, 0);
	}
	EXPECT_FALSE(peer_bad);
	EXPECT_FALSE(unplug_failed) TH_LOG("unbind or bind failed");
	if (stalled || unplug_failed) {
		for (i = 0; i < NPROC; i++)
			for (j = 0; j < NTHREAD && stalled; j++)
				TH_LOG("stalled: process %d thread %d at op %lu (%s)",
				       i, j, shm->cur[i][j],
				       ops[shm->cur_op[i][j]].name);
		for (i = 0; i < NPROC; i++)
			if (pid[i] > 0)
				kill(pid[i], SIGKILL);
		for (i = 0; i < NPROC; i++)
			if (pid[i] > 0)
				waitpid(pid[i], &status, 0);
		EXPECT_FALSE(stalled)
			TH_LOG("no operation finished for %d s", STALL_S);
	}
	report(_metadata, (t_now() - start) / T_SEC);

	if (fd >= 0) {
		/* Every peer removal left the parent's view alone. */
		for (i = 0; i < NSENT && !unbind; i++) {
			EXPECT_EQ(SENT_V, t_value_load(sentv[i]));
			EXPECT_EQ(0, t_fence_wait1(fd, sent[i].handle, SENT_V,
						   0));
			EXPECT_EQ(0, t_fence_signal(fd, sent[i].handle,
						    SENT_V + 1));
		}
		if (!unbind)
			EXPECT_LT(0, t_efd_take(efd))
				TH_LOG("a signal did not fire the parent's registrations");
		for (i = 0; i < NSENT; i++)
			unmap_value(sentv[i]);
		close(fd);
	}
	close(efd);
	for (i = 0; i < NINIT; i++)
		close(init_fds[i]);
	for (i = 0; i < NSENT; i++)
		close(sent_fds[i]);
	if (shm->failures)
		TH_LOG("%lu failures; first: process %d thread %d op %lu: %s",
		       shm->failures, shm->fproc, shm->fthread, shm->fidx,
		       shm->fwhat);
	EXPECT_EQ(0, shm->failures)
		TH_LOG("replay: D3DQ_FUZZ_SEED=0x%llx D3DQ_FUZZ_CALLS=%llu D3DQ_FUZZ_TRACE=%d.%d build/tests/fuzz/shared -t %s",
		       (unsigned long long)(g_seed ^ (unbind ? 0x6b : 0)),
		       (unsigned long long)calls, shm->fproc, shm->fthread,
		       name);
	/* Every fence, registration and job of every process is freed. */
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	T_EXPECT_IDLE(30000);
	munmap(shm, sizeof(*shm));
}

FIXTURE(shared) {
	int unused;
};

FIXTURE_SETUP(shared)
{
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
}

FIXTURE_TEARDOWN(shared)
{
	if (!t_can_reload())
		return;
	if (!t_is_bound(0))
		EXPECT_EQ(0, t_bind(0));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

/*
 * Processes x threads sharing fences, with REMOVE, removal on loss and
 * close among the operations.
 */
TEST_F_TIMEOUT(shared, processes, 86400)
{
	run_case(_metadata, false, "processes");
}

/* The same with the device unbound and bound again now and then. */
TEST_F_TIMEOUT(shared, unbind, 86400)
{
	run_case(_metadata, true, "unbind");
}

TEST_HARNESS_MAIN
