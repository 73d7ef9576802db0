// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq ioctl fuzzer. Drives every d3dq ioctl (d3dq fences and their
 * value pages included, fence waits and signals in SUBMIT, and held
 * jobs: SUBMIT with DRM_D3DQ_SUBMIT_HOLD, carried waits: with
 * DRM_D3DQ_SUBMIT_CARRY, signals on the last job: DRM_D3DQ_SUBMIT_TAIL),
 * the
 * syncobj ioctls, GEM close and PRIME with structure-aware random and
 * boundary values: bad,
 * stale and foreign handles, zero and huge counts, strides whose product
 * with the count overflows, unaligned, unmapped, kernel and non-canonical
 * pointers, arrays ending on an unmapped page, reserved bits and padding,
 * commands pointing past buffer ends, destroyed and lost queues.
 *
 * Every call must succeed or fail with an errno the uapi documents for
 * that ioctl (an undocumented errno is a failure), calls that the
 * generator knows to be valid must succeed, and when the files are closed
 * every d3dq object must be gone. The VM harness fails the run on any
 * kernel warning.
 *
 * The sequence of calls is a function of the seed (timing still varies).
 * Environment:
 *   D3DQ_FUZZ_SEED   seed (default 0xd3d9f022), printed either way
 *   D3DQ_FUZZ_CALLS  calls per test case (default 50000; two cases)
 *   D3DQ_FUZZ_VERBOSE=1  print every call
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define MAX_BOS		24
#define MAX_SYNCOBJS	32
#define MAX_QUEUES_TRACKED 64
#define MAX_STALE	64
#define MAX_REPORTS	20
#define MAX_FENCES	32
/* Longest syncobj handle array (sync_count()); the first 64 are picked. */
#define MAX_HANDLES	(1 << 16)
#define PICKED_HANDLES	64
/* A handle or id never handed out (they are allocated lowest first). */
#define NO_HANDLE	0xfffffff0u

/* Errno bits. */
typedef unsigned __int128 errset;
#define E(x)		((errset)1 << (x))
#define GENERIC		(E(EFAULT) | E(ENOMEM) | E(EINTR))

struct bo {
	uint32_t handle;
	uint64_t size;
};

struct sobj {
	uint32_t handle;
	bool timeline;
	bool has_fence;		/* binary: a fence is (probably) attached */
	uint64_t max_point;	/* timeline: highest point ever attached */
};

struct fz {
	int fd, fd2;
	uint64_t rng;
	unsigned long calls, limit, failures;
	bool verbose;
	bool clean;		/* generate no faults for this call */
	bool shared;		/* other threads use the same files */
	struct __test_metadata *md;
	/* Limits of the loaded module. */
	uint64_t max_queues, max_syncs, max_cmd_bytes, max_pending, max_delay;
	uint64_t max_bo;
	struct bo bos[MAX_BOS];
	int nbos;
	uint32_t big_bo;
	struct sobj so[MAX_SYNCOBJS];
	int nso;
	uint32_t queues[MAX_QUEUES_TRACKED];
	/* A SUBMIT to the queue was held: the arming work may push it. */
	bool qheld[MAX_QUEUES_TRACKED];
	int nq;
	/*
	 * Destroyed queues that may still have unfinished jobs: they keep
	 * their slot in max_queues until the jobs are done (an upper bound,
	 * tightened when a create succeeds).
	 */
	int held;
	uint32_t stale_bo[MAX_STALE], stale_so[MAX_STALE], stale_q[MAX_STALE];
	int nstale_bo, nstale_so, nstale_q;
	uint32_t foreign_bo, foreign_so, foreign_q;
	/* d3dq fences of @fd (whether shared), destroyed handles. */
	uint32_t fences[MAX_FENCES];
	bool fshared[MAX_FENCES];
	int nf;
	uint32_t stale_f[MAX_STALE];
	int nstale_f;
	int efd;		/* an eventfd for FENCE_EVENT */
	/* Jobs submitted with a releasable first wait: queue and seqno. */
	struct { uint32_t queue; uint64_t seqno; } rel[MAX_STALE];
	int nrel;
	uint64_t last_seqno;
	/* A SUBMIT returned DRM_D3DQ_SUBMIT_HELD: -ENOSPC may follow. */
	bool held_seen;
	/* Memory for boundary pointers. */
	uint8_t *page;		/* 3 x (page, PROT_NONE page) */
	uint8_t *ro;		/* read-only page */
	uint8_t *gone;		/* address of an unmapped page */
	long pagesz;
	/*
	 * A sync array of max_syncs elements of the largest stride
	 * gen_syncs() makes, every 8 bytes { NO_HANDLE, 0 }: whatever the
	 * kernel reads of it names no syncobj.
	 */
	uint8_t *huge;
	size_t huge_len;
	/* Statistics. */
	unsigned long ok, fail, per_errno[256];
	unsigned long jobs;
	unsigned long jobs_held;	/* of them, held at submit */
};

static uint64_t rnd(struct fz *f)
{
	/* splitmix64 */
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(struct fz *f, uint32_t n)
{
	return n ? (uint32_t)(rnd(f) % n) : 0;
}

/* True with probability 1/n. */
static bool one_in(struct fz *f, uint32_t n)
{
	return below(f, n) == 0;
}

/* A fault with probability 1/n, unless this call is meant to be clean. */
static bool fault(struct fz *f, uint32_t n)
{
	return !f->clean && one_in(f, n);
}

static uint64_t boundary64(struct fz *f)
{
	static const uint64_t v[] = {
		0, 1, 2, 7, 8, 15, 16, 4095, 4096, 4097, 65535, 65536,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		0x7fffffffffffffffull, 0x8000000000000000ull,
		0xfffffffffffffff8ull, 0xffffffffffffffffull,
	};
	if (one_in(f, 3))
		return rnd(f);
	return v[below(f, sizeof(v) / sizeof(v[0]))];
}

static uint32_t boundary32(struct fz *f)
{
	return (uint32_t)boundary64(f);
}

/* A mostly-zero reserved field: zero, or occasionally a bit pattern. */
static uint32_t reserved(struct fz *f, bool *bad)
{
	uint32_t v;

	if (!fault(f, 24))
		return 0;
	v = one_in(f, 2) ? 1u << below(f, 32) : boundary32(f);
	if (v)
		*bad = true;
	return v;
}

/* Pointers the kernel must refuse (EFAULT) or that lie on a boundary. */
static uint64_t bad_pointer(struct fz *f)
{
	switch (below(f, 8)) {
	case 0: return 0;
	case 1: return (uint64_t)(uintptr_t)f->gone;
	case 2: return 0xffff888000000000ull;	/* kernel direct map */
	case 3: return 0x8000000000000000ull;	/* non-canonical */
	case 4: return ~0ull;
	case 5: return (uint64_t)(uintptr_t)(f->page + f->pagesz); /* guard */
	case 6: return (uint64_t)(uintptr_t)(f->page + f->pagesz - 1);
	default: return 0xfffffffffffff000ull;
	}
}

static uint32_t pick_stale(struct fz *f, uint32_t *arr, int n,
			   uint32_t foreign);

/* Handles: mostly valid, else stale, foreign (other file), or random. */
static uint32_t pick_bo(struct fz *f, bool *bad, struct bo **out)
{
	*out = NULL;
	if (f->nbos && !fault(f, 12)) {
		*out = &f->bos[below(f, f->nbos)];
		return (*out)->handle;
	}
	*bad = true;
	return pick_stale(f, f->stale_bo, f->nstale_bo, f->foreign_bo);
}

/*
 * Handles and ids are reused, so a stale or foreign value may name a live
 * object of this file: such a value is replaced by one never handed out.
 */
static bool is_live(struct fz *f, uint32_t v)
{
	int i;

	for (i = 0; i < f->nbos; i++)
		if (f->bos[i].handle == v)
			return true;
	for (i = 0; i < f->nso; i++)
		if (f->so[i].handle == v)
			return true;
	for (i = 0; i < f->nq; i++)
		if (f->queues[i] == v)
			return true;
	for (i = 0; i < f->nf; i++)
		if (f->fences[i] == v)
			return true;
	return false;
}

static uint32_t not_live(struct fz *f, uint32_t v)
{
	return is_live(f, v) ? NO_HANDLE : v;
}

/*
 * 0 is no handle, except that since syncobj handles live in an xarray
 * (7.2 and 7.3 have it), SYNCOBJ_DESTROY of handle 0 fails but makes 0
 * the next handle SYNCOBJ_CREATE hands out (xa_erase() of index 0 in an
 * XA_FLAGS_ALLOC1 array): then 0 is live like any other handle.
 */
static uint32_t pick_stale(struct fz *f, uint32_t *arr, int n, uint32_t foreign)
{
	switch (below(f, 4)) {
	case 0: if (n) return not_live(f, arr[below(f, n)]);
		/* fall through */
	case 1: return not_live(f, foreign);
	case 2: return not_live(f, 0);
	default: return not_live(f, boundary32(f));
	}
}

static struct sobj *pick_so(struct fz *f)
{
	return f->nso ? &f->so[below(f, f->nso)] : NULL;
}

static void remember(uint32_t *arr, int *n, uint32_t v)
{
	if (*n < MAX_STALE)
		arr[(*n)++] = v;
	else
		arr[v % MAX_STALE] = v;
}

static const char *ioctl_name(unsigned long req)
{
	switch (req) {
	case DRM_IOCTL_D3DQ_GET_PARAM: return "GET_PARAM";
	case DRM_IOCTL_D3DQ_BO_CREATE: return "BO_CREATE";
	case DRM_IOCTL_D3DQ_BO_MMAP_OFFSET: return "BO_MMAP_OFFSET";
	case DRM_IOCTL_D3DQ_QUEUE_CREATE: return "QUEUE_CREATE";
	case DRM_IOCTL_D3DQ_QUEUE_DESTROY: return "QUEUE_DESTROY";
	case DRM_IOCTL_D3DQ_QUEUE_GET_STATE: return "QUEUE_GET_STATE";
	case DRM_IOCTL_D3DQ_SUBMIT: return "SUBMIT";
	case DRM_IOCTL_D3DQ_REMOVE: return "REMOVE";
	case DRM_IOCTL_D3DQ_WAIT_RELEASE: return "WAIT_RELEASE";
	case DRM_IOCTL_D3DQ_FENCE_CREATE: return "FENCE_CREATE";
	case DRM_IOCTL_D3DQ_FENCE_DESTROY: return "FENCE_DESTROY";
	case DRM_IOCTL_D3DQ_FENCE_EXPORT: return "FENCE_EXPORT";
	case DRM_IOCTL_D3DQ_FENCE_IMPORT: return "FENCE_IMPORT";
	case DRM_IOCTL_D3DQ_FENCE_SIGNAL: return "FENCE_SIGNAL";
	case DRM_IOCTL_D3DQ_FENCE_WAIT: return "FENCE_WAIT";
	case DRM_IOCTL_D3DQ_FENCE_EVENT: return "FENCE_EVENT";
	case DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE:
		return "FENCE_EXPORT_SYNC_FILE";
	case DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON: return "FENCE_SIGNAL_ON";
	case DRM_IOCTL_GEM_CLOSE: return "GEM_CLOSE";
	case DRM_IOCTL_PRIME_HANDLE_TO_FD: return "PRIME_HANDLE_TO_FD";
	case DRM_IOCTL_PRIME_FD_TO_HANDLE: return "PRIME_FD_TO_HANDLE";
	case DRM_IOCTL_SYNCOBJ_CREATE: return "SYNCOBJ_CREATE";
	case DRM_IOCTL_SYNCOBJ_DESTROY: return "SYNCOBJ_DESTROY";
	case DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD: return "SYNCOBJ_HANDLE_TO_FD";
	case DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE: return "SYNCOBJ_FD_TO_HANDLE";
	case DRM_IOCTL_SYNCOBJ_WAIT: return "SYNCOBJ_WAIT";
	case DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT: return "SYNCOBJ_TIMELINE_WAIT";
	case DRM_IOCTL_SYNCOBJ_RESET: return "SYNCOBJ_RESET";
	case DRM_IOCTL_SYNCOBJ_SIGNAL: return "SYNCOBJ_SIGNAL";
	case DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL: return "SYNCOBJ_TIMELINE_SIGNAL";
	case DRM_IOCTL_SYNCOBJ_QUERY: return "SYNCOBJ_QUERY";
	case DRM_IOCTL_SYNCOBJ_TRANSFER: return "SYNCOBJ_TRANSFER";
	default: return "unknown";
	}
}

/*
 * Issue one ioctl. @allowed: errnos this ioctl may return (beyond the
 * generic EFAULT/ENOMEM/EINTR); @valid: the generator put no fault in the
 * arguments, so only @valid_errs may come back. Returns 0 or the errno.
 */
static int call(struct __test_metadata *_metadata, struct fz *f, int fd,
		unsigned long req, void *arg, errset allowed, bool valid,
		errset valid_errs, const void *dump, size_t dump_len)
{
	int ret, err;

	/* Other threads change what this one tracks: no validity oracle. */
	if (f->shared)
		valid = false;
	f->calls++;
	ret = ioctl(fd, req, arg);
	err = ret ? errno : 0;
	if (f->verbose)
		fprintf(stderr, "# %lu %s valid=%d -> %s\n", f->calls,
			ioctl_name(req), valid, err ? strerror(err) : "ok");
	if (!err) {
		f->ok++;
		return 0;
	}
	f->fail++;
	f->per_errno[err & 255]++;
	if (err == ERESTART)
		err = EINTR;
	if (err < 128 && (E(err) & (allowed | GENERIC)) &&
	    (!valid || (E(err) & (valid_errs | E(ENOMEM) | E(EINTR)))))
		return err;

	f->failures++;
	if (f->failures <= MAX_REPORTS) {
		const uint8_t *p = dump;
		char hex[3 * 96 + 1] = "";
		size_t i, n = dump_len < 96 ? dump_len : 96;

		for (i = 0; p && i < n; i++)
			snprintf(hex + 3 * i, 4, "%02x ", p[i]);
		TH_LOG("call %lu: %s %s errno %d (%s); args: %s", f->calls,
		       ioctl_name(req),
		       valid ? "with valid arguments failed with" :
			       "returned undocumented",
		       err, strerror(err), hex);
	}
	return err;
}

#define CALL(fd, req, arg, allowed, valid, verrs) \
	call(_metadata, f, fd, req, arg, allowed, valid, verrs, arg, sizeof(*(arg)))

static void fz_param(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_get_param a = { 0 };
	bool bad = false;

	a.param = one_in(f, 4) ? boundary32(f) : below(f, 12);
	a.pad = reserved(f, &bad);
	a.value = rnd(f);
	if (a.param > DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES)
		bad = true;
	if (one_in(f, 50)) {
		/* The argument itself unreadable. */
		call(_metadata, f, f->fd, DRM_IOCTL_D3DQ_GET_PARAM,
		     (void *)(uintptr_t)bad_pointer(f), E(EINVAL), false, 0,
		     NULL, 0);
		return;
	}
	CALL(f->fd, DRM_IOCTL_D3DQ_GET_PARAM, &a, E(EINVAL), !bad, 0);
}

static void fz_bo_create(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_bo_create a = { 0 };
	bool bad = false;

	if (f->nbos >= MAX_BOS)
		return;
	switch (below(f, 6)) {
	case 0: a.size = boundary64(f); break;
	case 1: a.size = f->max_bo + !one_in(f, 8); break;
	default: a.size = 1 + below(f, 3 * 4096); break;
	}
	if (!a.size || a.size > f->max_bo)
		bad = true;
	else if (a.size > (4 << 20) && f->big_bo)
		return;	/* one big buffer at a time: the VM has 2 GiB */
	a.flags = reserved(f, &bad);
	a.handle = rnd(f);
	if (CALL(f->fd, DRM_IOCTL_D3DQ_BO_CREATE, &a, E(EINVAL), !bad, 0))
		return;
	if (a.size % f->pagesz || !a.handle) {
		f->failures++;
		TH_LOG("BO_CREATE returned size %llu handle %u",
		       (unsigned long long)a.size, a.handle);
	}
	f->bos[f->nbos].handle = a.handle;
	f->bos[f->nbos].size = a.size;
	f->nbos++;
	if (a.size > (4 << 20))
		f->big_bo = a.handle;
}

static void fz_bo_mmap(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_bo_mmap_offset a = { 0 };
	bool bad = false;
	struct bo *bo;

	a.handle = pick_bo(f, &bad, &bo);
	a.pad = reserved(f, &bad);
	if (CALL(f->fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &a,
		 E(EINVAL) | E(ENOENT), !bad, 0) || !bo || !one_in(f, 4))
		return;
	/* Map, touch and unmap; occasionally map past the end (fails). */
	{
		size_t len = bo->size + (one_in(f, 8) ? f->pagesz : 0);
		uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED, f->fd, a.offset);

		f->calls++;
		if (p == MAP_FAILED) {
			if (len == bo->size && !f->shared) {
				f->failures++;
				TH_LOG("mmap of BO %u failed: %s", bo->handle,
				       strerror(errno));
			}
			return;
		}
		p[below(f, bo->size)] ^= 1;
		munmap(p, len);
	}
}

static void fz_gem_close(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_gem_close a = { 0 };
	bool bad = false;
	struct bo *bo;
	int i;

	a.handle = pick_bo(f, &bad, &bo);
	a.pad = reserved(f, &bad);
	if (CALL(f->fd, DRM_IOCTL_GEM_CLOSE, &a, E(EINVAL), !bad, 0) || !bo)
		return;
	remember(f->stale_bo, &f->nstale_bo, bo->handle);
	if (bo->handle == f->big_bo)
		f->big_bo = 0;
	i = (int)(bo - f->bos);
	f->bos[i] = f->bos[--f->nbos];
}

static void fz_prime(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_prime_handle a = { 0 };
	bool bad = false;
	struct bo *bo;
	int fd2;

	a.handle = pick_bo(f, &bad, &bo);
	a.flags = one_in(f, 8) ? boundary32(f) : DRM_CLOEXEC | DRM_RDWR;
	if (a.flags & ~(DRM_CLOEXEC | DRM_RDWR))
		bad = true;
	a.fd = -1;
	if (CALL(f->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &a,
		 E(EINVAL) | E(ENOENT) | E(EMFILE), !bad, 0))
		return;
	fd2 = a.fd;
	/* Import into the other file and back into this one. */
	a.handle = 0;
	a.flags = 0;
	if (!CALL(f->fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &a, E(EINVAL), true,
		  0)) {
		struct drm_gem_close c = { .handle = a.handle };

		CALL(f->fd2, DRM_IOCTL_GEM_CLOSE, &c, E(EINVAL), true, 0);
	}
	a.fd = one_in(f, 4) ? (int)boundary32(f) : fd2;
	a.handle = 0;
	CALL(f->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &a,
	     E(EINVAL) | E(EBADF), a.fd == fd2, 0);
	/* Importing our own export gives back the same handle. */
	if (bo && a.fd == fd2 && a.handle != bo->handle && !f->shared) {
		f->failures++;
		TH_LOG("PRIME re-import gave handle %u for %u", a.handle,
		       bo->handle);
	}
	close(fd2);
}

static void fz_queue_create(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_queue_create a = { 0 };
	bool bad = false;
	int err;

	if (f->nq >= MAX_QUEUES_TRACKED)
		return;
	a.type = one_in(f, 10) ? boundary32(f) : below(f, 3);
	a.priority = one_in(f, 10) ? boundary32(f) : below(f, 3);
	a.flags = reserved(f, &bad);
	/* Bit 0 alone is DRM_D3DQ_QUEUE_IDLE_WORD (uapi 1.15). */
	if (a.flags == DRM_D3DQ_QUEUE_IDLE_WORD)
		bad = false;
	a.id = rnd(f);
	if (a.type > 2 || a.priority > 2)
		bad = true;
	err = CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &a,
		   E(EINVAL) | E(EMFILE) | E(ENODEV), !bad,
		   (uint64_t)(f->nq + f->held) >= f->max_queues ? E(EMFILE) : 0);
	if (err)
		return;
	/* Room for one more: at most this many destroyed queues are held. */
	if ((uint64_t)(f->nq + f->held) >= f->max_queues)
		f->held = (int)f->max_queues - 1 - f->nq;
	if ((uint64_t)f->nq >= f->max_queues || !a.id) {
		f->failures++;
		TH_LOG("QUEUE_CREATE: id %u with %d of %llu queues (type %u prio %u flags 0x%x err %d)", a.id,
		       f->nq, (unsigned long long)f->max_queues, a.type, a.priority, a.flags, err);
	}
	f->qheld[f->nq] = false;
	f->queues[f->nq++] = a.id;
}

static uint32_t pick_queue(struct fz *f, bool *bad, int *idx)
{
	*idx = -1;
	if (f->nq && !fault(f, 10)) {
		*idx = below(f, f->nq);
		return f->queues[*idx];
	}
	*bad = true;
	return pick_stale(f, f->stale_q, f->nstale_q, f->foreign_q);
}

static void fz_queue_destroy(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_queue_destroy a = { 0 };
	struct drm_d3dq_queue_get_state st = { 0 };
	bool bad = false, held = true;
	int idx;

	a.id = pick_queue(f, &bad, &idx);
	a.pad = reserved(f, &bad);
	/*
	 * A queue destroyed with no unfinished job is freed without help,
	 * and QUEUE_CREATE waits for that: it does not count as held. A
	 * held job is not in pending_jobs, and the arming work may push it
	 * between the two calls: a queue that had one may count.
	 */
	st.id = a.id;
	if (idx >= 0 && !f->shared && !f->qheld[idx] &&
	    !ioctl(f->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st) &&
	    !st.pending_jobs)
		held = false;
	if (CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &a,
		 E(EINVAL) | E(ENOENT), !bad, 0) || idx < 0)
		return;
	if (held)
		f->held++;
	remember(f->stale_q, &f->nstale_q, a.id);
	f->queues[idx] = f->queues[--f->nq];
	f->qheld[idx] = f->qheld[f->nq];
}

static void fz_queue_state(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_queue_get_state a = { 0 };
	bool bad = false;
	int idx;

	a.id = pick_queue(f, &bad, &idx);
	a.pad = reserved(f, &bad);
	a.state = rnd(f);
	a.reason = rnd(f);
	if (CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &a,
		 E(EINVAL) | E(ENOENT), !bad, 0))
		return;
	if (a.state > DRM_D3DQ_QUEUE_STATE_LOST ||
	    (a.state == DRM_D3DQ_QUEUE_STATE_OK && a.reason) ||
	    (a.state == DRM_D3DQ_QUEUE_STATE_LOST && a.reason != -ETIMEDOUT &&
	     a.reason != -ECANCELED && a.reason != -ENODEV) ||
	    a.pending_jobs > f->max_pending) {
		f->failures++;
		TH_LOG("QUEUE_GET_STATE: state %u reason %d pending %llu",
		       a.state, a.reason, (unsigned long long)a.pending_jobs);
	}
}

/* Write one random command at @p (room for 48 bytes); returns its size. */
static uint32_t gen_cmd(struct fz *f, uint8_t *p, bool *bad, bool *delay)
{
	union {
		struct drm_d3dq_cmd_header hdr;
		struct drm_d3dq_cmd_write64 w;
		struct drm_d3dq_cmd_copy c;
		struct drm_d3dq_cmd_fill fl;
		struct drm_d3dq_cmd_cmp_store64 cs;
		struct drm_d3dq_cmd_timestamp ts;
		struct drm_d3dq_cmd_delay d;
		uint8_t raw[48];
	} u;
	struct bo *bo, *bo2;
	uint32_t op = 1 + below(f, 6), size;
	uint64_t bsize, off;

	memset(&u, 0, sizeof(u));
	if (fault(f, 40)) {
		op = fault(f, 2) ? 0 : boundary32(f);
		if (op < 1 || op > 6)
			*bad = true;
	}
	u.hdr.op = op;
	switch (op) {
	case DRM_D3DQ_CMD_WRITE64:
	case DRM_D3DQ_CMD_CMP_STORE64:
	case DRM_D3DQ_CMD_TIMESTAMP:
		u.w.handle = pick_bo(f, bad, &bo);
		bsize = bo ? bo->size : 4096;
		off = 8 * below(f, bsize / 8);
		if (fault(f, 16)) {
			/* Past the end, unaligned, or overflowing. */
			off = fault(f, 2) ? bsize - 8 + 1 + below(f, 16) :
					     boundary64(f);
			if (off % 8 || off > bsize - 8)
				*bad = true;
		}
		u.w.offset = off;
		u.w.pad = reserved(f, bad);
		u.w.value = rnd(f);
		if (op == DRM_D3DQ_CMD_CMP_STORE64)
			u.cs.desired = rnd(f);
		size = op == DRM_D3DQ_CMD_WRITE64 ? sizeof(u.w) :
		       op == DRM_D3DQ_CMD_CMP_STORE64 ? sizeof(u.cs) :
		       sizeof(u.ts);
		break;
	case DRM_D3DQ_CMD_COPY:
		u.c.dst_handle = pick_bo(f, bad, &bo);
		u.c.src_handle = pick_bo(f, bad, &bo2);
		bsize = bo && bo2 ? (bo->size < bo2->size ? bo->size :
				     bo2->size) : 4096;
		u.c.size = below(f, bsize + 1);
		u.c.dst_offset = below(f, bsize - u.c.size + 1);
		u.c.src_offset = below(f, bsize - u.c.size + 1);
		if (fault(f, 12)) {
			switch (below(f, 3)) {
			case 0: u.c.size = boundary64(f); break;
			case 1: u.c.dst_offset = boundary64(f); break;
			default: u.c.src_offset = bsize - u.c.size + 1; break;
			}
			*bad = true;	/* possibly still in range: see below */
		}
		size = sizeof(u.c);
		break;
	case DRM_D3DQ_CMD_FILL:
		u.fl.handle = pick_bo(f, bad, &bo);
		bsize = bo ? bo->size : 4096;
		u.fl.size = below(f, bsize + 1);
		u.fl.offset = below(f, bsize - u.fl.size + 1);
		u.fl.value = fault(f, 20) ? boundary32(f) : below(f, 256);
		if (u.fl.value > 255)
			*bad = true;
		if (fault(f, 12)) {
			u.fl.offset = fault(f, 2) ? boundary64(f) : bsize;
			u.fl.size = fault(f, 2) ? boundary64(f) : 1;
			*bad = true;
		}
		size = sizeof(u.fl);
		break;
	case DRM_D3DQ_CMD_DELAY:
		/* Bounded: long delays make the run slow, not better. */
		u.d.ns = below(f, 100000);
		if (fault(f, 200)) {
			u.d.ns = f->max_delay + 1 + below(f, 1000);
			*bad = true;
		} else if (fault(f, 400) && f->max_delay <= 100 * T_MS) {
			u.d.ns = f->max_delay;
		}
		*delay = true;
		size = sizeof(u.d);
		break;
	default:
		size = 8 * (2 + below(f, 4));
		memcpy(u.raw + 8, &f->rng, 8);
		break;
	}
	u.hdr.size = size;
	if (fault(f, 60)) {
		/* A header size that does not match its op. */
		u.hdr.size = fault(f, 2) ? size + 8 : boundary32(f);
		if (u.hdr.size != size)
			*bad = true;
	}
	memcpy(p, &u, size);
	return size;
}

static uint32_t pick_fence(struct fz *f, bool *bad, int *idx);

/*
 * A d3dq fence element (DRM_D3DQ_SYNC_FENCE, uapi 1.4): one of our
 * fences and any value, now and then with another flag or a stale
 * handle. A wait may find its value neither reached nor pending.
 */
static struct drm_d3dq_sync gen_fence_sync(struct fz *f, bool wait, bool *bad,
					   bool *maybe_nodata)
{
	struct drm_d3dq_sync s = { .flags = DRM_D3DQ_SYNC_FENCE };
	int idx;

	s.handle = pick_fence(f, bad, &idx);
	s.point = one_in(f, 2) ? below(f, 8) : boundary64(f);
	if (wait)
		*maybe_nodata = true;
	if (fault(f, 16)) {
		/* FENCE stands alone. */
		s.flags |= one_in(f, 2) ? DRM_D3DQ_SYNC_TIMELINE :
					  DRM_D3DQ_SYNC_RELEASABLE;
		*bad = true;
	}
	return s;
}

/* An array of syncs for a submit: waits (@wait) or signals. */
static void gen_syncs(struct fz *f, struct drm_d3dq_obj_array *arr,
		      uint8_t *buf, size_t buflen, bool wait, bool *bad,
		      bool *maybe_nodata, struct drm_d3dq_sync *sig_out,
		      uint32_t *nsig_out)
{
	uint32_t count = below(f, 4), stride = sizeof(struct drm_d3dq_sync);
	uint32_t i;

	*nsig_out = 0;
	if (fault(f, 8))
		count = 0;
	if (fault(f, 30)) {
		/* At, or one past, the limit. */
		count = (uint32_t)f->max_syncs + below(f, 2);
		if (count > f->max_syncs)
			*bad = true;
	}
	if (fault(f, 16)) {
		/* Larger elements (zero tail), too small, or huge. */
		switch (below(f, 4)) {
		case 0: stride = 24; break;
		case 1: stride = 8 * below(f, 2); *bad = true; break;
		case 2: stride = 0x80000000u; *bad = true; break;
		default: stride = (uint32_t)f->pagesz + 8; *bad = true; break;
		}
	}
	if (count && (uint64_t)count * stride > buflen) {
		/*
		 * Too big for @buf. The kernel refuses a count above
		 * max_syncs or a bad stride before it reads; any other
		 * array is read in full, so give it one built in full
		 * (ENOENT for the handle, or EINVAL for a 24-byte element's
		 * nonzero tail), never the memory after @buf.
		 */
		arr->stride = stride;
		arr->count = count;
		arr->array = (uint64_t)(uintptr_t)buf;
		if ((uint64_t)count * stride <= f->huge_len)
			arr->array = (uint64_t)(uintptr_t)f->huge;
		*bad = true;
		return;
	}
	memset(buf, 0, (size_t)count * stride);
	for (i = 0; i < count; i++) {
		struct drm_d3dq_sync s = { 0 };
		struct sobj *so;

		if (one_in(f, 5)) {
			s = gen_fence_sync(f, wait, bad, maybe_nodata);
			goto place;
		}
		so = pick_so(f);
		if (!so || fault(f, 16)) {
			s.handle = pick_stale(f, f->stale_so, f->nstale_so,
					      f->foreign_so);
			*bad = true;
		} else {
			s.handle = so->handle;
			if (so->timeline) {
				s.flags = DRM_D3DQ_SYNC_TIMELINE;
				if (wait) {
					s.point = so->max_point ?
						1 + rnd(f) % so->max_point : 0;
					if (!so->max_point)
						*maybe_nodata = true;
				} else {
					s.point = so->max_point + 1 +
						  below(f, 3);
				}
			} else if (wait && !so->has_fence) {
				*maybe_nodata = true;
			}
			if (fault(f, 24)) {
				/* Wrong kind, or point 0 on a timeline. */
				s.flags ^= DRM_D3DQ_SYNC_TIMELINE;
				if (s.flags)
					s.point = 1 + below(f, 4);
				*bad = true;
			}
		}
		/* Waits may be releasable; signals may not. */
		if (wait && one_in(f, 3))
			s.flags |= DRM_D3DQ_SYNC_RELEASABLE;
		if (fault(f, 40)) {
			uint32_t bit = 1u << (1 + below(f, 31));

			s.flags |= bit;
			/*
			 * A signal may take JOB_ONLY (1.13) or ARMED_ONLY
			 * (1.14), nothing else.
			 */
			if (wait ? s.flags & ~(DRM_D3DQ_SYNC_TIMELINE |
					       DRM_D3DQ_SYNC_RELEASABLE) :
			    bit != DRM_D3DQ_SYNC_JOB_ONLY &&
			    bit != DRM_D3DQ_SYNC_ARMED_ONLY)
				*bad = true;
		}
place:
		memcpy(buf + (size_t)i * stride, &s, sizeof(s));
		if (stride > sizeof(s) && fault(f, 8)) {
			buf[(size_t)i * stride + stride - 1] = 1;
			*bad = true;
		}
		if (!wait && *nsig_out < (1 << 13))
			sig_out[(*nsig_out)++] = s;
	}
	arr->stride = stride;
	arr->count = count;
	arr->array = (uint64_t)(uintptr_t)buf;
	if (count && fault(f, 20)) {
		arr->array = bad_pointer(f);
		*bad = true;
	} else if (count && fault(f, 20) &&
		   (size_t)count * stride <= (size_t)f->pagesz) {
		/* Ends exactly at the guard page, or one element beyond. */
		/* Waits and signals each have their own guarded page. */
		uint8_t *end = f->page + (wait ? 1 : 3) * f->pagesz;

		memcpy(end - (size_t)count * stride, buf,
		       (size_t)count * stride);
		arr->array = (uint64_t)(uintptr_t)(end - (size_t)count * stride);
		if (fault(f, 2)) {
			arr->array += stride;
			*bad = true;
		}
	} else if (count && fault(f, 30)) {
		/* Unaligned copy of the same array. */
		memmove(buf + 3, buf, (size_t)count * stride);
		arr->array += 3;
	}
}

/*
 * @job: the submit made a job (else JOB_ONLY points were not added).
 * An ARMED_ONLY point is not added either if the job completed without
 * the engine, which the model does not follow: it counts none.
 */
static void note_signals(struct fz *f, const struct drm_d3dq_sync *s, uint32_t n,
			 bool job)
{
	uint32_t i;
	int k;

	for (i = 0; i < n; i++)
		for (k = 0; k < f->nso; k++) {
			/* A fence handle may have a syncobj's number. */
			if (f->so[k].handle != s[i].handle ||
			    s[i].flags & DRM_D3DQ_SYNC_FENCE ||
			    (!job && s[i].flags & DRM_D3DQ_SYNC_JOB_ONLY) ||
			    s[i].flags & DRM_D3DQ_SYNC_ARMED_ONLY)
				continue;
			if (s[i].flags & DRM_D3DQ_SYNC_TIMELINE) {
				if (s[i].point > f->so[k].max_point)
					f->so[k].max_point = s[i].point;
			} else {
				f->so[k].has_fence = true;
			}
		}
}

/* What the fuzzer believed and what the kernel has, for each wait. */
static void explain_waits(struct __test_metadata *_metadata, struct fz *f,
			  const struct drm_d3dq_submit *a)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)a->waits.array;
	uint32_t i;
	int k;

	for (i = 0; i < a->waits.count; i++) {
		struct drm_d3dq_sync s;
		uint64_t last = 0, pt;
		uint32_t h;
		int q, w;

		memcpy(&s, p + (size_t)i * a->waits.stride, sizeof(s));
		h = s.handle;
		q = drmSyncobjQuery(f->fd, &h, &last, 1);
		pt = s.point;
		w = drmSyncobjTimelineWait(f->fd, &h, &pt, 1, 0,
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
					   NULL) ? errno : 0;
		for (k = 0; k < f->nso && f->so[k].handle != s.handle; k++)
			;
		TH_LOG("  wait %u: handle %u flags %u point %llu; tracked %s timeline %d has_fence %d max %llu; query %d last %llu; available %s",
		       i, s.handle, s.flags, (unsigned long long)s.point,
		       k < f->nso ? "yes" : "no",
		       k < f->nso ? f->so[k].timeline : -1,
		       k < f->nso ? f->so[k].has_fence : -1,
		       k < f->nso ? (unsigned long long)f->so[k].max_point : 0,
		       q, (unsigned long long)last, w ? strerror(w) : "yes");
	}
}

static void fz_submit(struct __test_metadata *_metadata, struct fz *f)
{
	static uint8_t wbuf[1 << 17], sbuf[1 << 17], cbuf[1 << 16];
	static struct drm_d3dq_sync sigs[1 << 13];
	struct drm_d3dq_submit a = { 0 };
	bool bad = false, nodata = false, delay = false, rbad = false, carry;
	bool tail;
	uint32_t nsig, pos = 0, target;
	uint32_t dummy;
	int idx, err;

	f->clean = one_in(f, 2);
	a.queue_id = pick_queue(f, &bad, &idx);
	/*
	 * HOLD (1.5) is valid: a fence wait nothing serves holds the job.
	 * SPLIT (1.10) is left to tests/kernel/split: a stream longer than
	 * one job is not this model's.
	 */
	a.flags = reserved(f, &rbad) & ~DRM_D3DQ_SUBMIT_SPLIT;
	if (a.flags & ~(DRM_D3DQ_SUBMIT_HOLD | DRM_D3DQ_SUBMIT_CARRY |
			DRM_D3DQ_SUBMIT_TAIL | DRM_D3DQ_SUBMIT_IMPLICIT))
		bad = true;
	if (one_in(f, 4))
		a.flags |= DRM_D3DQ_SUBMIT_HOLD;
	/*
	 * IMPLICIT (1.12) goes with any flag; this file's buffers hold only
	 * d3dq's fences, which it never waits for: nothing else changes.
	 */
	if (one_in(f, 6))
		a.flags |= DRM_D3DQ_SUBMIT_IMPLICIT;
	/* CARRY (1.8): waits only, carried to the queue's next job. */
	if (one_in(f, 6))
		a.flags |= DRM_D3DQ_SUBMIT_CARRY;
	/* TAIL (1.8): a few signals only, maybe taken by the last job. */
	if (one_in(f, 6))
		a.flags |= DRM_D3DQ_SUBMIT_TAIL;
	carry = a.flags & DRM_D3DQ_SUBMIT_CARRY;
	tail = a.flags & DRM_D3DQ_SUBMIT_TAIL;
	a.pad = reserved(f, &bad);
	/* An out field: must be zero on input. */
	a.seqno = reserved(f, &bad);
	gen_syncs(f, &a.waits, wbuf, sizeof(wbuf), true, &bad, &nodata,
		  sigs, &dummy);
	gen_syncs(f, &a.signals, sbuf, sizeof(sbuf), false, &bad, &nodata,
		  sigs, &nsig);

	target = below(f, 5) * 48;
	if (one_in(f, 30))
		target = (uint32_t)f->max_cmd_bytes - 48;
	if (target + 48 > sizeof(cbuf))
		target = sizeof(cbuf) - 48;
	while (pos < target)
		pos += gen_cmd(f, cbuf + pos, &bad, &delay);
	a.cmds = (uint64_t)(uintptr_t)cbuf;
	a.cmd_bytes = pos;
	switch (f->clean ? 40 : below(f, 40)) {
	case 0: a.cmd_bytes = pos + 1 + below(f, 7); bad = true; break;
	case 1: a.cmd_bytes = (uint32_t)f->max_cmd_bytes + 8; bad = true; break;
	case 2: a.cmd_bytes = boundary32(f); bad = true; break;
	case 3:
		if (pos) {
			a.cmds = bad_pointer(f);
			bad = true;
		}
		break;
	case 4:
		/* The stream runs into the guard page. */
		if (pos && pos <= f->pagesz) {
			memcpy(f->page + 5 * f->pagesz - pos + 8, cbuf, pos - 8);
			a.cmds = (uint64_t)(uintptr_t)(f->page + 5 * f->pagesz -
						      pos + 8);
			bad = true;
		}
		break;
	case 5:
		if (pos >= 16) {
			/* Truncated: the last command is cut short. */
			a.cmd_bytes = pos - 8;
			bad = true;
		}
		break;
	}
	f->clean = false;
	if (carry && one_in(f, 2)) {
		a.signals.count = 0;
		a.cmd_bytes = 0;
	}
	if (carry && (a.signals.count || a.cmd_bytes))
		bad = true;
	if (tail && one_in(f, 2)) {
		a.waits.count = 0;
		a.cmd_bytes = 0;
		if (a.signals.count > 16)
			a.signals.count = 16;
		/* Those it generated past 16 no longer count. */
		if (nsig > a.signals.count)
			nsig = a.signals.count;
	}
	if (tail && (carry || a.waits.count || a.cmd_bytes ||
		     a.signals.count > 16))
		bad = true;
	/* A full queue would make submit sleep: never let that happen here. */
	if (idx >= 0) {
		struct drm_d3dq_queue_get_state st = { .id = a.queue_id };

		if (!CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st,
			  E(ENOENT), true, 0) &&
		    st.pending_jobs + 2 >= f->max_pending)
			return;
	}
	/* Held jobs fill limits: then -ENOSPC at once instead of a sleep. */
	err = CALL(f->fd, DRM_IOCTL_D3DQ_SUBMIT, &a,
		   E(EINVAL) | E(ENOENT) | E(ENODATA) | E(ECANCELED) |
		   E(ENOSPC), !bad,
		   E(ECANCELED) | (nodata ? E(ENODATA) : 0) |
		   (f->held_seen ? E(ENOSPC) : 0) |
		   /* A releasable wait the model does not look for. */
		   (carry ? E(EINVAL) : 0));
	if (err == ENODATA && !bad && !nodata && !f->shared)
		explain_waits(_metadata, f, &a);
	if (!err && (a.waits.array == (uintptr_t)f->huge ||
		     a.signals.array == (uintptr_t)f->huge)) {
		/* Not one element of it names a syncobj. */
		f->failures++;
		TH_LOG("SUBMIT with %u waits, %u signals of no syncobj succeeded",
		       a.waits.count, a.signals.count);
	}
	if (!err && carry) {
		/* No job: nothing to number, nothing attached. */
		if (a.seqno || a.out_flags) {
			f->failures++;
			TH_LOG("SUBMIT_CARRY returned seqno %llu out_flags %u",
			       (unsigned long long)a.seqno, a.out_flags);
		}
		/* Carried waits count as held jobs in the limits. */
		f->held_seen = true;
		return;
	}
	if (!err && tail && !a.seqno) {
		/* No job: its points are attached, to a job or done. */
		if (a.out_flags & ~DRM_D3DQ_SUBMIT_DONE) {
			f->failures++;
			TH_LOG("SUBMIT_TAIL without a job: out_flags %u",
			       a.out_flags);
		}
		note_signals(f, sigs, nsig, false);
		return;
	}
	if (!err) {
		struct drm_d3dq_sync w0;

		f->jobs++;
		/* Only a HOLD submit can start holding a queue's jobs. */
		if (a.out_flags & DRM_D3DQ_SUBMIT_HELD &&
		    !(a.flags & DRM_D3DQ_SUBMIT_HOLD) && !f->shared &&
		    !f->held_seen) {
			f->failures++;
			TH_LOG("SUBMIT without HOLD held a job first");
		}
		if (a.out_flags & DRM_D3DQ_SUBMIT_HELD) {
			if (idx >= 0)
				f->qheld[idx] = true;
			f->held_seen = true;
			f->jobs_held++;
		}
		/*
		 * A held job attaches its points when it is armed, if ever:
		 * the model counts only what is attached now (it may then
		 * know less than the kernel, which only makes it lenient).
		 */
		if (!(a.out_flags & DRM_D3DQ_SUBMIT_HELD))
			note_signals(f, sigs, nsig, true);
		if (!a.seqno || a.seqno <= f->last_seqno) {
			f->failures++;
			TH_LOG("SUBMIT returned seqno %llu after %llu",
			       (unsigned long long)a.seqno,
			       (unsigned long long)f->last_seqno);
		}
		f->last_seqno = a.seqno;
		memcpy(&w0, (const void *)(uintptr_t)a.waits.array,
		       a.waits.count ? sizeof(w0) : 0);
		if (a.waits.count && w0.flags & DRM_D3DQ_SYNC_RELEASABLE) {
			f->rel[f->nrel % MAX_STALE].queue = a.queue_id;
			f->rel[f->nrel % MAX_STALE].seqno = a.seqno;
			f->nrel++;
		}
	}
}

/*
 * WAIT_RELEASE: a wait this file submitted releasable (valid: 0, or
 * ENOENT if its queue is gone), or anything else.
 */
static void fz_wait_release(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_wait_release a = { 0 };
	bool bad = false, known = f->nrel && !fault(f, 3);
	int idx;

	if (known) {
		idx = below(f, f->nrel < MAX_STALE ? f->nrel : MAX_STALE);
		a.queue_id = f->rel[idx].queue;
		a.seqno = f->rel[idx].seqno;
	} else {
		a.queue_id = pick_queue(f, &bad, &idx);
		switch (below(f, 4)) {
		case 0: a.seqno = 0; bad = true; break;
		case 1: a.seqno = f->last_seqno + 1 + below(f, 3); bad = true;
			break;
		case 2: a.seqno = boundary64(f); bad = true; break;
		default: a.seqno = f->last_seqno ? 1 + rnd(f) % f->last_seqno :
						   0;
			 bad = true;
			 break;
		}
	}
	if (fault(f, 4)) {
		a.index = one_in(f, 2) ? boundary32(f) :
			  (uint32_t)f->max_syncs + below(f, 2);
		bad = bad || a.index;
	}
	CALL(f->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &a, E(EINVAL) | E(ENOENT),
	     !bad, E(ENOENT));
}

static void fz_remove(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_remove a = { 0 };
	bool bad = false;
	int i;

	/* Threads share the file: REMOVE would end the run for all. */
	if (f->shared)
		return;
	a.flags = reserved(f, &bad);
	/* uapi 1.6: arm removal on loss, query the reason, or both. */
	if (!a.flags && one_in(f, 2))
		a.flags = 1 + below(f, 3);
	if (a.flags & ~(DRM_D3DQ_REMOVE_ON_LOSS | DRM_D3DQ_REMOVE_QUERY))
		bad = true;
	else if (a.flags)
		bad = false;
	/* In: must be zero (it was pad before 1.6). */
	a.reason = (int32_t)reserved(f, &bad);
	if (!bad && a.flags == DRM_D3DQ_REMOVE_QUERY) {
		if (!CALL(f->fd, DRM_IOCTL_D3DQ_REMOVE, &a, E(EINVAL), true,
			  0) && a.reason && a.reason != -ENODEV &&
		    a.reason != -ETIMEDOUT && a.reason != -ECANCELED) {
			f->failures++;
			TH_LOG("REMOVE_QUERY reason %d", a.reason);
		}
		return;
	}
	if (!bad && !one_in(f, 20))
		return;		/* REMOVE ends the file's queues: rarely */
	if (CALL(f->fd, DRM_IOCTL_D3DQ_REMOVE, &a, E(EINVAL), !bad, 0))
		return;
	if (a.flags) {
		/* Armed: a loss may remove the file at any time. */
		if (a.reason && a.reason != -ENODEV &&
		    a.reason != -ETIMEDOUT && a.reason != -ECANCELED) {
			f->failures++;
			TH_LOG("REMOVE_ON_LOSS reason %d", a.reason);
		}
		goto reopen;
	}
	/* Queues are lost; new ones fail with ENODEV. Start a new file. */
	for (i = 0; i < f->nq; i++) {
		struct drm_d3dq_queue_get_state st = { .id = f->queues[i] };

		/* Lost; the reason may be an earlier one. */
		if (!CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st, 0, true,
			  0) &&
		    (st.state != DRM_D3DQ_QUEUE_STATE_LOST || !st.reason)) {
			f->failures++;
			TH_LOG("after REMOVE queue %u state %u reason %d",
			       st.id, st.state, st.reason);
		}
	}
	{
		struct drm_d3dq_queue_create qc = { 0 };

		if (!CALL(f->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc, E(ENODEV),
			  true, E(ENODEV))) {
			f->failures++;
			TH_LOG("QUEUE_CREATE after REMOVE succeeded");
		}
	}
reopen:
	close(f->fd);
	f->fd = t_open(0);
	f->nbos = f->nso = f->nq = f->held = f->nf = 0;
	f->nrel = 0;
	f->last_seqno = 0;
	f->big_bo = 0;
}

static void fz_syncobj_create(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_syncobj_create a = { 0 };
	bool bad = false, tl;

	if (f->nso >= MAX_SYNCOBJS)
		return;
	a.flags = one_in(f, 3) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0;
	if (one_in(f, 30)) {
		a.flags |= 1u << below(f, 32);
		if (a.flags & ~DRM_SYNCOBJ_CREATE_SIGNALED)
			bad = true;
	}
	if (CALL(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &a, E(EINVAL), !bad, 0))
		return;
	tl = one_in(f, 2);
	f->so[f->nso].handle = a.handle;
	f->so[f->nso].timeline = tl;
	f->so[f->nso].has_fence = a.flags & DRM_SYNCOBJ_CREATE_SIGNALED;
	f->so[f->nso].max_point = 0;
	f->nso++;
}

static void fz_syncobj_destroy(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_syncobj_destroy a = { 0 };
	bool bad = false;
	int i = -1;

	if (f->nso && !one_in(f, 6)) {
		i = below(f, f->nso);
		a.handle = f->so[i].handle;
	} else {
		a.handle = pick_stale(f, f->stale_so, f->nstale_so,
				      f->foreign_so);
		bad = true;
	}
	a.pad = reserved(f, &bad);
	/* drm_syncobj_destroy reports an unknown handle as EINVAL. */
	if (CALL(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &a, E(EINVAL) | E(ENOENT),
		 !bad, 0) || i < 0)
		return;
	remember(f->stale_so, &f->nstale_so, a.handle);
	f->so[i] = f->so[--f->nso];
}

/*
 * An array of @count handles (u32) for the syncobj ioctls, built in full:
 * the kernel reads all @count of them, and a handle it reads that the
 * fuzzer did not put there may name a live syncobj (zeroed memory names
 * handle 0, which 7.2 and 7.3 can hand out, see pick_stale()), so that a
 * RESET the fuzzer believed to touch 64 syncobjs reset others too. The
 * first PICKED_HANDLES are picked; beyond them, counts are faults, and
 * every element is a handle never handed out (the ioctl fails, ENOENT).
 */
static uint64_t handle_array(struct fz *f, uint32_t *buf, uint32_t count,
			     bool *bad, uint64_t *points, bool *pending)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		struct sobj *so;

		if (i >= PICKED_HANDLES) {
			buf[i] = NO_HANDLE;
			if (points)
				points[i] = 0;
			*bad = true;
			continue;
		}
		so = pick_so(f);
		if (!so || one_in(f, 16)) {
			buf[i] = pick_stale(f, f->stale_so, f->nstale_so,
					    f->foreign_so);
			*bad = true;
			if (points)
				points[i] = 0;
			continue;
		}
		buf[i] = so->handle;
		if (points) {
			points[i] = so->timeline ?
				    (one_in(f, 8) ? so->max_point + 1 :
				     so->max_point) : 0;
			if (points[i] > so->max_point)
				*pending = true;
		}
		if (!so->has_fence && !so->max_point)
			*pending = true;
	}
	if (count && one_in(f, 20)) {
		*bad = true;
		return bad_pointer(f);
	}
	return (uint64_t)(uintptr_t)buf;
}

/*
 * A syncobj array call of @n handles, all past the first PICKED_HANDLES
 * never handed out, cannot succeed: if it did, the kernel found a syncobj
 * the fuzzer did not name. True (and a failure) then.
 */
static bool oversize_done(struct __test_metadata *_metadata, struct fz *f,
			  const char *name, uint32_t n, int err)
{
	if (err || n <= PICKED_HANDLES)
		return false;
	f->failures++;
	TH_LOG("call %lu: %s of %u handles succeeded, %u of them never handed out",
	       f->calls, name, n, n - PICKED_HANDLES);
	return true;
}

static uint32_t sync_count(struct fz *f, bool *bad)
{
	uint32_t n = 1 + below(f, 4);

	if (one_in(f, 20)) {
		/*
		 * Not above 2^16: the DRM core kmallocs count_handles
		 * elements without a limit, and a count like 2^31 makes the
		 * page allocator WARN (a DRM core finding, see
		 * Documentation/robustness.rst), which is not d3dq's to fix.
		 */
		n = one_in(f, 2) ? 0 : boundary32(f) & 0xffff;
		*bad = true;
	}
	return n;
}

static void fz_syncobj_wait(struct __test_metadata *_metadata, struct fz *f)
{
	static uint32_t h[MAX_HANDLES];
	static uint64_t pts[MAX_HANDLES];
	bool bad = false, pending = false, tl = one_in(f, 2);
	uint32_t n = sync_count(f, &bad), flags;
	uint64_t deadline = one_in(f, 2) ? 0 : (uint64_t)t_deadline(T_MS);
	errset errs = E(EINVAL) | E(ENOENT) | E(ETIME);
	int err;

	if (n > PICKED_HANDLES && !bad)
		n = PICKED_HANDLES;
	flags = below(f, 8) & (DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			       (tl ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE : 0));
	if (one_in(f, 30)) {
		flags |= 1u << below(f, 32);
		bad = true;
	}
	if (tl) {
		struct drm_syncobj_timeline_wait a = { 0 };

		a.handles = handle_array(f, h, n, &bad, pts, &pending);
		a.points = (uint64_t)(uintptr_t)pts;
		if (one_in(f, 40)) {
			a.points = bad_pointer(f);
			bad = true;
		}
		a.count_handles = n;
		a.timeout_nsec = (int64_t)deadline;
		a.flags = flags;
		a.first_signaled = rnd(f);
		err = CALL(f->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &a, errs,
			   !bad, E(ETIME) | (pending && !(flags &
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT) ?
				   E(EINVAL) : 0));
		oversize_done(_metadata, f, "SYNCOBJ_TIMELINE_WAIT", n, err);
	} else {
		struct drm_syncobj_wait a = { 0 };

		a.handles = handle_array(f, h, n, &bad, NULL, &pending);
		a.count_handles = n;
		a.timeout_nsec = (int64_t)deadline;
		a.flags = flags;
		a.first_signaled = rnd(f);
		a.pad = reserved(f, &bad);
		err = CALL(f->fd, DRM_IOCTL_SYNCOBJ_WAIT, &a, errs, !bad,
			   E(ETIME) | (pending && !(flags &
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT) ?
				   E(EINVAL) : 0));
		oversize_done(_metadata, f, "SYNCOBJ_WAIT", n, err);
	}
}

static void fz_syncobj_array_op(struct __test_metadata *_metadata,
				struct fz *f)
{
	static uint32_t h[MAX_HANDLES];
	static uint64_t pts[MAX_HANDLES];
	bool bad = false, pending = false;
	uint32_t n = sync_count(f, &bad), i;
	/* Past m, handles are never live: a call that succeeds had n == m. */
	uint32_t m = n <= PICKED_HANDLES ? n : PICKED_HANDLES;
	int op = below(f, 4), err;

	if (op < 2) {
		struct drm_syncobj_array a = { 0 };

		a.handles = handle_array(f, h, n, &bad, NULL, &pending);
		a.count_handles = n;
		a.pad = reserved(f, &bad);
		err = CALL(f->fd, op ? DRM_IOCTL_SYNCOBJ_SIGNAL :
			   DRM_IOCTL_SYNCOBJ_RESET, &a, E(EINVAL) | E(ENOENT),
			   !bad, 0);
		if (err || oversize_done(_metadata, f, op ? "SYNCOBJ_SIGNAL" :
					 "SYNCOBJ_RESET", n, err))
			return;
		/* Signal replaces the fence; reset drops it. */
		for (i = 0; i < m; i++) {
			int k;

			for (k = 0; k < f->nso; k++) {
				if (f->so[k].handle != h[i])
					continue;
				f->so[k].has_fence = op;
				/* The timeline is gone (a plain fence). */
				f->so[k].max_point = 0;
			}
		}
		return;
	}
	{
		struct drm_syncobj_timeline_array a = { 0 };

		a.handles = handle_array(f, h, n, &bad, pts, &pending);
		a.points = (uint64_t)(uintptr_t)pts;
		a.count_handles = n;
		if (op == 2) {
			/* Timeline signal: new points above the last. */
			for (i = 0; i < m; i++)
				pts[i] += 1 + below(f, 2);
			a.flags = reserved(f, &bad);
			err = CALL(f->fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
				   &a, E(EINVAL) | E(ENOENT), !bad, 0);
			if (err || oversize_done(_metadata, f,
						 "SYNCOBJ_TIMELINE_SIGNAL", n,
						 err))
				return;
			for (i = 0; i < m; i++) {
				int k;

				for (k = 0; k < f->nso; k++)
					if (f->so[k].handle == h[i] &&
					    f->so[k].timeline &&
					    pts[i] > f->so[k].max_point)
						f->so[k].max_point = pts[i];
			}
		} else {
			a.flags = one_in(f, 2) ?
				  DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED : 0;
			if (one_in(f, 30)) {
				a.flags |= 1u << below(f, 32);
				if (a.flags & ~DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
					bad = true;
			}
			err = CALL(f->fd, DRM_IOCTL_SYNCOBJ_QUERY, &a,
				   E(EINVAL) | E(ENOENT), !bad, 0);
			oversize_done(_metadata, f, "SYNCOBJ_QUERY", n, err);
		}
	}
}

static void fz_syncobj_transfer(struct __test_metadata *_metadata,
				struct fz *f)
{
	struct drm_syncobj_transfer a = { 0 };
	struct sobj *src = pick_so(f), *dst = pick_so(f);
	bool bad = false;

	if (!src || !dst)
		return;
	a.src_handle = one_in(f, 16) ? pick_stale(f, f->stale_so,
						  f->nstale_so, f->foreign_so) :
				       src->handle;
	a.dst_handle = dst->handle;
	a.src_point = src->timeline ? src->max_point : 0;
	a.dst_point = dst->timeline ? dst->max_point + 1 : 0;
	/* WAIT_FOR_SUBMIT would block for seconds: never set it here. */
	a.flags = one_in(f, 30) ? (1u << below(f, 32)) &
		  ~(uint32_t)DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0;
	a.pad = reserved(f, &bad);
	if (CALL(f->fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &a, E(EINVAL) | E(ENOENT),
		 false, 0))
		return;
	if (dst->timeline)
		dst->max_point = a.dst_point;
	else
		dst->has_fence = true;
}

static void fz_syncobj_fd(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_syncobj_handle a = { 0 };
	struct sobj *so = pick_so(f);
	bool bad = false;
	int fd;

	a.handle = so && !one_in(f, 10) ? so->handle :
		   pick_stale(f, f->stale_so, f->nstale_so, f->foreign_so);
	if (!so || a.handle != so->handle)
		bad = true;
	a.flags = one_in(f, 3) ? DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE :
				 0;
	if (a.flags)
		bad = true;	/* EINVAL when there is no fence */
	a.pad = reserved(f, &bad);
	a.fd = -1;
	if (CALL(f->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a,
		 E(EINVAL) | E(ENOENT) | E(EMFILE), !bad, 0))
		return;
	fd = a.fd;
	/* Import into the other file, then import into a syncobj here. */
	a.handle = 0;
	a.fd = one_in(f, 8) ? (int)boundary32(f) : fd;
	bad = a.fd != fd;
	if (a.flags) {
		struct sobj *to = pick_so(f);

		if (!to)
			goto out;
		a.handle = to->handle;
		a.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
		if (!CALL(f->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a,
			  E(EINVAL) | E(ENOENT), !bad, 0)) {
			/* A plain fence replaces a timeline too. */
			to->has_fence = true;
			to->max_point = 0;
		}
		goto out;
	}
	if (!CALL(f->fd2, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a, E(EINVAL),
		  !bad, 0)) {
		struct drm_syncobj_destroy d = { .handle = a.handle };

		CALL(f->fd2, DRM_IOCTL_SYNCOBJ_DESTROY, &d, E(EINVAL), true,
		     0);
	}
out:
	close(fd);
}

/* An ioctl number d3dq does not have, or a known one with a wrong size. */
static void fz_bad_nr(struct __test_metadata *_metadata, struct fz *f)
{
	static uint8_t buf[256];
	unsigned long req;

	memset(buf, 0, sizeof(buf));
	if (one_in(f, 2)) {
		req = DRM_IOWR(DRM_COMMAND_BASE +
			       DRM_D3DQ_FENCE_SIGNAL_ON + 1 +
			       below(f, 0x60 -
				     DRM_D3DQ_FENCE_SIGNAL_ON - 1),
			       struct drm_d3dq_submit);
		call(_metadata, f, f->fd, req, buf, E(EINVAL), false, 0,
		     NULL, 0);
		return;
	}
	/*
	 * GET_PARAM encoded with a shorter or longer size: the DRM core
	 * zero-fills or ignores the difference; unknown param 0 is fine.
	 */
	req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
		   DRM_COMMAND_BASE + DRM_D3DQ_GET_PARAM, 4 * below(f, 8));
	call(_metadata, f, f->fd, req, buf, E(EINVAL), false, 0, NULL, 0);
}

static void fz_reset_foreign(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_queue_create qc = { 0 };

	/* Handles and ids that exist, but in the other file. */
	f->foreign_bo = t_bo(f->fd2, 4096, NULL);
	f->foreign_so = t_syncobj(f->fd2);
	if (!drmIoctl(f->fd2, DRM_IOCTL_D3DQ_QUEUE_CREATE, &qc))
		f->foreign_q = qc.id;
	ASSERT_NE(0, f->foreign_bo);
	ASSERT_NE(0, f->foreign_so);
}

static void fz_limits(struct __test_metadata *_metadata, struct fz *f)
{
	f->max_queues = t_param(f->fd, DRM_D3DQ_PARAM_MAX_QUEUES);
	f->max_syncs = t_param(f->fd, DRM_D3DQ_PARAM_MAX_SYNCS);
	f->max_cmd_bytes = t_param(f->fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES);
	f->max_pending = t_param(f->fd, DRM_D3DQ_PARAM_MAX_PENDING_JOBS);
	f->max_delay = t_param(f->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS);
	f->max_bo = t_param(f->fd, DRM_D3DQ_PARAM_MAX_BO_SIZE);
	ASSERT_NE(0, f->max_queues);
	ASSERT_NE(0, f->max_pending);
	TH_LOG("limits: queues %llu syncs %llu cmd bytes %llu pending %llu delay %llu ns bo %llu",
	       (unsigned long long)f->max_queues,
	       (unsigned long long)f->max_syncs,
	       (unsigned long long)f->max_cmd_bytes,
	       (unsigned long long)f->max_pending,
	       (unsigned long long)f->max_delay,
	       (unsigned long long)f->max_bo);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* A fence handle: mostly one of ours, else stale or random. */
static uint32_t pick_fence(struct fz *f, bool *bad, int *idx)
{
	*idx = -1;
	if (f->nf && !fault(f, 10)) {
		*idx = below(f, f->nf);
		return f->fences[*idx];
	}
	*bad = true;
	return pick_stale(f, f->stale_f, f->nstale_f, NO_HANDLE);
}

/* 1-3 fence values, or a bad array (count, stride, pointer, padding). */
static void gen_fence_values(struct fz *f, struct drm_d3dq_obj_array *arr,
			     struct drm_d3dq_fence_value *fv, bool *bad)
{
	uint32_t i, n = 1 + below(f, 3);
	int idx;

	for (i = 0; i < n; i++) {
		fv[i].handle = pick_fence(f, bad, &idx);
		fv[i].pad = reserved(f, bad);
		fv[i].value = one_in(f, 2) ? below(f, 8) : boundary64(f);
	}
	arr->stride = sizeof(*fv);
	arr->count = n;
	arr->array = (uint64_t)(uintptr_t)fv;
	if (!fault(f, 12))
		return;
	switch (below(f, 4)) {
	case 0: arr->count = one_in(f, 2) ? 0 : boundary32(f); break;
	case 1: arr->stride = boundary32(f); break;
	case 2: arr->array = bad_pointer(f); break;
	default:
		/* The element runs into an inaccessible page. */
		arr->count = 1;
		arr->array = (uint64_t)(uintptr_t)(f->page + f->pagesz - 8);
		break;
	}
	/* Unless the value drawn happens to be the right one. */
	if (arr->count != n || arr->stride != sizeof(*fv) ||
	    arr->array != (uint64_t)(uintptr_t)fv)
		*bad = true;
}

static void fz_fence(struct __test_metadata *_metadata, struct fz *f)
{
	struct drm_d3dq_fence_value fv[3];
	bool bad = false;
	int idx;

	switch (below(f, 9)) {
	case 0: {
		struct drm_d3dq_fence_create a = { 0 };

		if (f->nf >= MAX_FENCES)
			return;
		a.value = boundary64(f);
		a.flags = one_in(f, 3) ? DRM_D3DQ_FENCE_SHARED : 0;
		a.flags |= reserved(f, &bad) & ~DRM_D3DQ_FENCE_SHARED;
		a.pad = reserved(f, &bad);
		a.handle = reserved(f, &bad);
		if (CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &a,
			 E(EINVAL) | E(EDQUOT) | E(ENODEV), !bad, 0))
			return;
		/* The value page reads the initial value; it is read-only. */
		if (!f->shared && one_in(f, 4)) {
			uint8_t *p = mmap(NULL, f->pagesz, PROT_READ,
					  MAP_SHARED, f->fd, a.mmap_offset);

			if (p == MAP_FAILED ||
			    *(volatile uint64_t *)(p + a.value_offset) !=
			    a.value ||
			    !mprotect(p, f->pagesz, PROT_READ | PROT_WRITE)) {
				f->failures++;
				TH_LOG("fence %u: value page wrong (%s)",
				       a.handle, strerror(errno));
			}
			if (p != MAP_FAILED)
				munmap(p, f->pagesz);
		}
		f->fshared[f->nf] = a.flags & DRM_D3DQ_FENCE_SHARED;
		f->fences[f->nf++] = a.handle;
		break;
	}
	case 1: {
		struct drm_d3dq_fence_destroy a = { 0 };

		a.handle = pick_fence(f, &bad, &idx);
		a.pad = reserved(f, &bad);
		if (CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &a,
			 E(EINVAL) | E(ENOENT), !bad, 0) || idx < 0)
			return;
		remember(f->stale_f, &f->nstale_f, a.handle);
		f->fshared[idx] = f->fshared[f->nf - 1];
		f->fences[idx] = f->fences[--f->nf];
		break;
	}
	case 2: {
		struct drm_d3dq_fence_signal a = { 0 };

		a.handle = pick_fence(f, &bad, &idx);
		a.flags = reserved(f, &bad);
		a.value = boundary64(f);
		CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL, &a,
		     E(EINVAL) | E(ENOENT) | E(ENODEV), !bad, 0);
		break;
	}
	case 3: {
		struct drm_d3dq_fence_export a = { 0 };
		struct drm_d3dq_fence_import b = { 0 };
		struct drm_d3dq_fence_destroy d = { 0 };

		a.handle = pick_fence(f, &bad, &idx);
		a.flags = reserved(f, &bad);
		a.pad = reserved(f, &bad);
		if (idx >= 0 && !f->fshared[idx])
			bad = true;
		if (CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT, &a,
			 E(EINVAL) | E(ENOENT) | E(EMFILE), !bad, 0))
			a.fd = -1;
		/* Import into the other file (or something else). */
		bad = a.fd < 0;
		b.fd = a.fd;
		if (fault(f, 6)) {
			bad = true;
			b.fd = one_in(f, 2) ? f->efd : (int)boundary32(f);
		}
		b.flags = reserved(f, &bad);
		if (!CALL(f->fd2, DRM_IOCTL_D3DQ_FENCE_IMPORT, &b,
			  E(EBADF) | E(EINVAL) | E(ENODEV), !bad, 0)) {
			d.handle = b.handle;
			CALL(f->fd2, DRM_IOCTL_D3DQ_FENCE_DESTROY, &d,
			     E(ENOENT), true, 0);
		}
		if (a.fd >= 0)
			close(a.fd);
		break;
	}
	case 4: case 5: {
		struct drm_d3dq_fence_wait a = { 0 };

		gen_fence_values(f, &a.fences, fv, &bad);
		a.flags = one_in(f, 2) ? DRM_D3DQ_FENCE_WAIT_ANY : 0;
		a.flags |= reserved(f, &bad) & ~DRM_D3DQ_FENCE_WAIT_ANY;
		a.pad = reserved(f, &bad);
		/* Polls, past deadlines, and now and then 100 us. */
		a.deadline_ns = one_in(f, 8) ? (int64_t)(t_now() + 100000) :
				one_in(f, 2) ? 0 : (int64_t)boundary64(f) - 1;
		if (a.deadline_ns > (int64_t)t_now() + 1000000 &&
		    a.deadline_ns != INT64_MAX)
			a.deadline_ns = 0;	/* no long sleeps */
		if (a.deadline_ns == INT64_MAX)
			a.deadline_ns = -1;
		CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &a,
		     E(ETIME) | E(EINVAL) | E(ENOENT), !bad, E(ETIME));
		break;
	}
	case 6: {
		/* uapi 1.7: whether a signal brings the value is unknown. */
		struct drm_d3dq_fence_sync_file a = { 0 };

		a.handle = pick_fence(f, &bad, &idx);
		a.value = boundary64(f);
		a.flags = reserved(f, &bad);
		a.pad = reserved(f, &bad);
		a.fd = (int32_t)reserved(f, &bad);
		if (!CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a,
			  E(EINVAL) | E(ENOENT) | E(ENODATA) | E(EDQUOT) |
			  E(EMFILE), !bad, E(ENODATA)))
			close(a.fd);
		break;
	}
	case 7: {
		/*
		 * uapi 1.11: a syncobj point of its own or a sync_file of
		 * one; whether it has a fence is unknown.
		 */
		struct drm_d3dq_fence_signal_on a = { 0 };
		struct sobj *so = pick_so(f);
		int sf = -1;

		a.handle = pick_fence(f, &bad, &idx);
		a.value = boundary64(f);
		a.pad = reserved(f, &bad);
		if (one_in(f, 2)) {
			a.flags = DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ;
			a.syncobj = so ? so->handle :
				    pick_stale(f, f->stale_so, f->nstale_so,
					       f->foreign_so);
			a.point = one_in(f, 2) ? 0 : boundary64(f);
			a.fd = (int32_t)reserved(f, &bad);
		} else {
			if (so && !drmSyncobjExportSyncFile(f->fd, so->handle,
							    &sf))
				a.fd = sf;
			else
				a.fd = one_in(f, 2) ? f->efd :
				       (int)boundary32(f);
			a.syncobj = reserved(f, &bad);
			a.point = reserved(f, &bad);
		}
		a.flags |= reserved(f, &bad) &
			   ~DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ;
		CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON, &a,
		     E(EINVAL) | E(ENOENT) | E(EBADF) | E(ENODATA) |
		     E(EDQUOT) | E(ENODEV), false, 0);
		if (sf >= 0)
			close(sf);
		break;
	}
	default: {
		struct drm_d3dq_fence_event a = { 0 };
		struct drm_syncobj_create sc = { 0 };
		struct drm_syncobj_destroy sd = { 0 };

		gen_fence_values(f, &a.fences, fv, &bad);
		a.flags = one_in(f, 2) ? DRM_D3DQ_FENCE_WAIT_ANY : 0;
		a.flags |= reserved(f, &bad) &
			   ~(DRM_D3DQ_FENCE_WAIT_ANY | DRM_D3DQ_FENCE_EVENT_SYNCOBJ);
		if (one_in(f, 3)) {
			/*
			 * uapi 1.4: a point of a syncobj of its own, whose
			 * handle goes at once (the registration keeps it):
			 * the fuzzer's own syncobjs never get points this way.
			 */
			a.flags |= DRM_D3DQ_FENCE_EVENT_SYNCOBJ;
			if (ioctl(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc))
				return;
			a.syncobj = sc.handle;
			a.point = one_in(f, 8) ? 0 : 1 + below(f, 1000);
			if (!a.point)
				bad = true;
			if (fault(f, 8)) {
				bad = true;
				a.eventfd = f->efd;
			}
		} else {
			a.eventfd = f->efd;
			if (fault(f, 8)) {
				bad = true;
				a.eventfd = one_in(f, 2) ? f->fd :
					    (int)boundary32(f);
			}
			a.point = reserved(f, &bad);
		}
		a.pad = reserved(f, &bad);
		CALL(f->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &a,
		     E(EINVAL) | E(ENOENT) | E(EBADF) | E(EDQUOT), !bad, 0);
		if (sc.handle) {
			sd.handle = sc.handle;
			ioctl(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
		}
		if (one_in(f, 16)) {
			uint64_t n;

			if (read(f->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
				f->failures++;
		}
		break;
	}
	}
}

static void fz_loop(struct __test_metadata *_metadata, struct fz *f)
{
	while (f->calls < f->limit && f->failures < 1000) {
		if (f->fd < 0) {
			f->failures++;
			TH_LOG("could not reopen the device");
			break;
		}
		switch (below(f, 40)) {
		case 0: case 1: fz_param(_metadata, f); break;
		case 2: case 3: case 4: fz_bo_create(_metadata, f); break;
		case 5: case 6: fz_bo_mmap(_metadata, f); break;
		case 7: fz_gem_close(_metadata, f); break;
		case 8: fz_prime(_metadata, f); break;
		case 9: case 10: case 11: fz_queue_create(_metadata, f); break;
		case 12: case 13: fz_queue_destroy(_metadata, f); break;
		case 14: fz_queue_state(_metadata, f); break;
		case 15: fz_remove(_metadata, f); break;
		case 16: case 17: case 18: fz_syncobj_create(_metadata, f); break;
		case 19: fz_syncobj_destroy(_metadata, f); break;
		case 20: case 21: fz_syncobj_wait(_metadata, f); break;
		case 22: case 23: case 24: fz_syncobj_array_op(_metadata, f); break;
		case 25: fz_syncobj_transfer(_metadata, f); break;
		case 26: fz_syncobj_fd(_metadata, f); break;
		case 27: fz_bad_nr(_metadata, f); break;
		case 28: fz_wait_release(_metadata, f); break;
		case 29: case 30: fz_fence(_metadata, f); break;
		default: fz_submit(_metadata, f); break;
		}
		/* Now and then start over with a fresh file. */
		if (!f->shared && one_in(f, 20000)) {
			close(f->fd);
			f->fd = t_open(0);
			f->nbos = f->nso = f->nq = f->held = f->nf = 0;
			f->nrel = 0;
			f->last_seqno = 0;
			f->big_bo = 0;
		}
	}
}

static void *fz_thread(void *arg)
{
	struct fz *f = arg;

	fz_loop(f->md, f);
	return NULL;
}

/*
 * @nthreads fuzzers; with more than one, they share the two files and
 * only the errno lists are checked (each thread's view of the file is
 * out of date as soon as another thread acts).
 */
static void run_fuzz(struct __test_metadata *_metadata, uint64_t salt,
		     int nthreads)
{
	struct fz *fs = calloc(nthreads, sizeof(*fs)), *f;
	uint64_t seed = env_u64("D3DQ_FUZZ_SEED", 0xd3d9f022) ^ salt;
	uint64_t start = t_now(), secs;
	unsigned long calls = env_u64("D3DQ_FUZZ_CALLS", 50000);
	unsigned long total = 0, ok = 0, errs = 0, jobs = 0, jobs_held = 0;
	unsigned long failures = 0;
	unsigned long per_errno[256] = { 0 };
	pthread_t th[8];
	int fd, fd2, i, t;

	ASSERT_NE(NULL, fs);
	ASSERT_GE(8, nthreads);
	if (nthreads > 1)
		calls /= 2 * nthreads;	/* a quarter of one case in all */
	TH_LOG("seed 0x%llx (D3DQ_FUZZ_SEED=0x%llx), %d thread(s) x %lu calls",
	       (unsigned long long)seed, (unsigned long long)(seed ^ salt),
	       nthreads, calls);
	fd = t_open(0);
	fd2 = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);

	for (t = 0; t < nthreads; t++) {
		f = &fs[t];
		f->md = _metadata;
		f->limit = calls;
		f->verbose = env_u64("D3DQ_FUZZ_VERBOSE", 0);
		f->rng = seed + t;
		f->shared = nthreads > 1;
		f->pagesz = sysconf(_SC_PAGESIZE);
		/* Three pages, each followed by an inaccessible one. */
		f->page = mmap(NULL, 6 * f->pagesz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, f->page);
		for (i = 1; i < 6; i += 2)
			ASSERT_EQ(0, mprotect(f->page + i * f->pagesz,
					      f->pagesz, PROT_NONE));
		f->gone = mmap(NULL, f->pagesz, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, f->gone);
		munmap(f->gone, f->pagesz);
		f->fd = fd;
		f->fd2 = fd2;
		f->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, f->efd);
		fz_limits(_metadata, f);
		f->huge_len = f->max_syncs * 24;
		f->huge = malloc(f->huge_len);
		ASSERT_NE(NULL, f->huge);
		for (i = 0; (size_t)i < f->huge_len / 8; i++)
			memcpy(f->huge + 8 * (size_t)i,
			       &(struct drm_d3dq_sync){ .handle = NO_HANDLE }, 8);
		fz_reset_foreign(_metadata, f);
	}
	if (nthreads == 1) {
		fz_loop(_metadata, &fs[0]);
	} else {
		for (t = 0; t < nthreads; t++)
			ASSERT_EQ(0, pthread_create(&th[t], NULL, fz_thread,
						    &fs[t]));
		for (t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
	}

	for (t = 0; t < nthreads; t++) {
		f = &fs[t];
		total += f->calls;
		ok += f->ok;
		errs += f->fail;
		jobs += f->jobs;
		jobs_held += f->jobs_held;
		failures += f->failures;
		for (i = 0; i < 256; i++)
			per_errno[i] += f->per_errno[i];
		/* The single fuzzer may have reopened its file. */
		if (nthreads == 1)
			fd = f->fd;
		munmap(f->page, 6 * f->pagesz);
		free(f->huge);
	}
	secs = (t_now() - start) / T_SEC;
	TH_LOG("%lu calls in %llu s: %lu ok, %lu errors, %lu jobs; EINVAL %lu ENOENT %lu ENODATA %lu ECANCELED %lu EFAULT %lu ETIME %lu EMFILE %lu",
	       total, (unsigned long long)secs, ok, errs, jobs,
	       per_errno[EINVAL], per_errno[ENOENT], per_errno[ENODATA],
	       per_errno[ECANCELED], per_errno[EFAULT], per_errno[ETIME],
	       per_errno[EMFILE]);
	TH_LOG("%lu jobs held at submit (DRM_D3DQ_SUBMIT_HELD)", jobs_held);
	for (i = 0; i < 256; i++)
		if (per_errno[i] && i != EINVAL && i != ENOENT &&
		    i != ENODATA && i != ECANCELED && i != EFAULT &&
		    i != ETIME && i != EMFILE)
			TH_LOG("errno %d (%s): %lu", i, strerror(i),
			       per_errno[i]);
	EXPECT_EQ(0, failures) TH_LOG("seed 0x%llx", (unsigned long long)seed);
	EXPECT_LT(0, jobs);
	if (fd >= 0)
		close(fd);
	close(fd2);
	for (t = 0; t < nthreads; t++)
		close(fs[t].efd);
	T_EXPECT_IDLE(30000);
	free(fs);
}

FIXTURE(fuzz) {
	bool reloaded;
};

FIXTURE_SETUP(fuzz)
{
	self->reloaded = false;
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

/* Default limits. */
TEST_F_TIMEOUT(fuzz, default_limits, 86400)
{
	int fd = t_open(0);

	if (fd < 0)
		SKIP(return, "no d3dq device");
	close(fd);
	run_fuzz(_metadata, 0, 1);
}

/*
 * Small limits, so that they are reached: few queues per file, a low
 * pending-jobs cap, short arrays and streams, and a 20 ms job timeout
 * with 50 ms the longest delay, so queues get lost under the fuzzer.
 */
TEST_F_TIMEOUT(fuzz, small_limits, 86400)
{
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	self->reloaded = true;
	ASSERT_EQ(0, t_reload("max_queues=6 max_syncs=8 max_cmd_bytes=1024 "
			      "max_pending_jobs=8 max_bo_size=1048576 "
			      "job_timeout_ms=20 max_delay_ns=50000000"));
	run_fuzz(_metadata, 0x5a5a5a5a, 1);
}

/*
 * Four threads on the same two files (default limits): races between
 * destroy, close, submit, waits and REMOVE-free teardown. Only the errno
 * lists, the kernel log and the final object counts are checked.
 */
TEST_F_TIMEOUT(fuzz, four_threads, 86400)
{
	int fd = t_open(0);

	if (fd < 0)
		SKIP(return, "no d3dq device");
	close(fd);
	run_fuzz(_metadata, 0x7777, 4);
}

TEST_HARNESS_MAIN
