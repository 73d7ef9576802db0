// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences (uapi 1.3): creation and destruction, the read-only value
 * page, CPU signals seen by other processes, CPU waits, kernel-held
 * eventfds, handle destruction and file close with pending waiters and
 * registrations, device removal, and bad input; registrations that add
 * a signalled point to a timeline syncobj (uapi 1.4).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define FOREVER	INT64_MAX

static int fence_wait(int fd, const struct drm_d3dq_fence_value *fv,
		      uint32_t n, uint32_t flags, int64_t deadline)
{
	struct drm_d3dq_fence_wait w = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.deadline_ns = deadline,
		.flags = flags,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w);
}

static int fence_event(int fd, const struct drm_d3dq_fence_value *fv,
		       uint32_t n, uint32_t flags, int efd)
{
	struct drm_d3dq_fence_event e = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.flags = flags,
		.eventfd = efd,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
}

/* A registration that adds @point to syncobj @sobj (uapi 1.4). */
static int event_syncobj(int fd, const struct drm_d3dq_fence_value *fv,
			 uint32_t n, uint32_t flags, uint32_t sobj,
			 uint64_t point)
{
	struct drm_d3dq_fence_event e = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.flags = flags | DRM_D3DQ_FENCE_EVENT_SYNCOBJ,
		.syncobj = sobj,
		.point = point,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
}

static int event1_syncobj(int fd, uint32_t handle, uint64_t value,
			  uint32_t sobj, uint64_t point)
{
	struct drm_d3dq_fence_value fv = { .handle = handle, .value = value };

	return event_syncobj(fd, &fv, 1, 0, sobj, point);
}

/* The last point of timeline syncobj @sobj (0: none), or -1. */
static int64_t sobj_last(int fd, uint32_t sobj)
{
	uint64_t p = 0;

	if (drmSyncobjQuery(fd, &sobj, &p, 1))
		return -1;
	return (int64_t)p;
}

/* Wait (up to 5 s) until @sobj's last point is @point. */
static bool sobj_becomes(int fd, uint32_t sobj, int64_t point)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (sobj_last(fd, sobj) == point)
			return true;
		usleep(10000);
	}
	return false;
}

static int objects_fences(int *fences, int *events)
{
	struct t_objects o;

	if (t_objects(&o))
		return -1;
	*fences = o.fences;
	*events = o.fence_events;
	return 0;
}

/* Wait until the task of /proc @path sleeps (state S), up to 10 s. */
static bool sleeping_at(const char *path)
{
	char buf[256], *p;
	int fd, i;
	ssize_t n;

	for (i = 0; i < 10000; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return false;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return false;
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return true;
		usleep(1000);
	}
	return false;
}

/* Wait until thread @tid of this process sleeps. */
static bool sleeping(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	return sleeping_at(path);
}

FIXTURE(fence) {
	int fd;
};

FIXTURE_SETUP(fence)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has them: their absence is a failure. */
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE);
}

FIXTURE_TEARDOWN(fence)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

TEST_F(fence, create_destroy)
{
	struct t_fence a, b, s;
	const uint64_t *va, *vb, *vs;
	int n, e;

	ASSERT_EQ(0, t_fence_create(self->fd, 99, 0, &a));
	ASSERT_EQ(0, t_fence_create(self->fd, 1ull << 60, 0, &b));
	ASSERT_EQ(0, t_fence_create(self->fd, 7, DRM_D3DQ_FENCE_SHARED, &s));
	EXPECT_NE(0, a.handle);
	EXPECT_NE(a.handle, b.handle);
	/* Fences that are not shared share the file's page. */
	EXPECT_EQ(a.offset, b.offset);
	EXPECT_NE(a.voff, b.voff);
	EXPECT_EQ(0, a.voff % 8);
	/* A shared fence has a page of its own. */
	EXPECT_NE(a.offset, s.offset);
	EXPECT_EQ(0, s.voff);
	ASSERT_EQ(0, objects_fences(&n, &e));
	EXPECT_EQ(3, n);

	va = t_value_map(self->fd, &a);
	vb = t_value_map(self->fd, &b);
	vs = t_value_map(self->fd, &s);
	ASSERT_NE(NULL, va);
	ASSERT_NE(NULL, vb);
	ASSERT_NE(NULL, vs);
	EXPECT_EQ(99, t_value_load(va));
	EXPECT_EQ(1ull << 60, t_value_load(vb));
	EXPECT_EQ(7, t_value_load(vs));

	EXPECT_EQ(0, t_fence_destroy(self->fd, a.handle));
	EXPECT_EQ(-ENOENT, t_fence_destroy(self->fd, a.handle));
	EXPECT_EQ(-ENOENT, t_fence_destroy(self->fd, 0));
	EXPECT_EQ(-ENOENT, t_fence_signal(self->fd, a.handle, 1));
	EXPECT_EQ(0, t_fence_destroy(self->fd, b.handle));
	EXPECT_EQ(0, t_fence_destroy(self->fd, s.handle));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	/* A mapping outlives the fences: the page stays, frozen. */
	EXPECT_EQ(7, t_value_load(vs));
	t_value_unmap(va);
	t_value_unmap(vb);
	t_value_unmap(vs);

	/* Another file's handles are not this file's. */
	ASSERT_EQ(0, t_fence_create(self->fd, 1, 0, &a));
	n = t_open(0);
	ASSERT_LE(0, n);
	EXPECT_EQ(-ENOENT, t_fence_signal(n, a.handle, 2));
	EXPECT_EQ(-ENOENT, t_fence_destroy(n, a.handle));
	close(n);
}

TEST_F(fence, signal_values)
{
	static const uint64_t values[] = {
		5, 3, 0, UINT64_MAX, 0, 1ull << 40, (1ull << 40) + (1ull << 35),
		1, UINT64_MAX - 1, 42,
	};
	const uint64_t *v;
	struct t_fence f;
	size_t i;

	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	v = t_value_map(self->fd, &f);
	ASSERT_NE(NULL, v);
	/* Any value at once, rewinds included (R2). */
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, values[i]));
		EXPECT_EQ(values[i], t_value_load(v));
	}
	t_value_unmap(v);
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	siglongjmp(segv_jmp, 1);
}

TEST_F(fence, mmap_read_only)
{
	struct drm_prime_handle ph = { .flags = DRM_CLOEXEC };
	volatile uint64_t *w;
	struct sigaction sa = { .sa_handler = on_segv }, old;
	volatile int faulted;
	const uint64_t *v;
	struct t_fence f, s;
	void *p;
	int mem, other;

	ASSERT_EQ(0, t_fence_create(self->fd, 11, 0, &f));
	ASSERT_EQ(0, t_fence_create(self->fd, 12, DRM_D3DQ_FENCE_SHARED, &s));

	/* Writable, executable, private or longer mappings are refused. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 f.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, self->fd, s.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, self->fd,
		 f.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, self->fd, f.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd, f.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* An offset nobody was given. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		 s.offset + (1ull << 30));
	EXPECT_EQ(MAP_FAILED, p);

	v = t_value_map(self->fd, &f);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(11, t_value_load(v));
	p = (void *)((uintptr_t)v & ~(uintptr_t)4095);
	/* mprotect() cannot make it writable (VM_MAYWRITE is cleared). */
	EXPECT_EQ(-1, mprotect(p, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(p, 4096, PROT_READ | PROT_EXEC));
	/* Nor can a forced write through /proc/self/mem. */
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mem);
	EXPECT_EQ(-1, pwrite(mem, &(uint64_t){ 5 }, 8, (off_t)(uintptr_t)v));
	close(mem);
	EXPECT_EQ(11, t_value_load(v));

	/* A store faults. */
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, &old));
	w = (volatile uint64_t *)v;
	faulted = 0;
	if (!sigsetjmp(segv_jmp, 1))
		*w = 5;
	else
		faulted = 1;
	sigaction(SIGSEGV, &old, NULL);
	EXPECT_EQ(1, faulted);
	EXPECT_EQ(11, t_value_load(v));
	t_value_unmap(v);

	/* The fence handle is no GEM handle: PRIME cannot export it. */
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_create(other, 1, DRM_D3DQ_FENCE_SHARED, &f));
	ph.handle = f.handle;
	EXPECT_NE(0, ioctl(other, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph));
	EXPECT_EQ(ENOENT, errno);
	/* Another file cannot map this file's pages. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, s.offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	close(other);
}

TEST_F(fence, shared_across_processes)
{
	int to_child[2], to_parent[2], efd, status;
	const uint64_t *v;
	struct t_fence s, l;
	uint64_t x, last = 0;
	pid_t pid;

	ASSERT_EQ(0, t_fence_create(self->fd, 3, DRM_D3DQ_FENCE_SHARED, &s));
	ASSERT_EQ(0, t_fence_create(self->fd, 3, 0, &l));
	/* Only shared fences are exported. */
	EXPECT_EQ(-EINVAL, t_fence_export(self->fd, l.handle));
	EXPECT_EQ(-ENOENT, t_fence_export(self->fd, 0));
	efd = t_fence_export(self->fd, s.handle);
	ASSERT_LE(0, efd);
	v = t_value_map(self->fd, &s);
	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		const uint64_t *cv;
		struct t_fence c;
		int fd = t_open(0);

		close(self->fd);
		close(to_child[1]);
		close(to_parent[0]);
		if (fd < 0 || t_fence_import(fd, efd, &c))
			_exit(1);
		close(efd);
		cv = t_value_map(fd, &c);
		if (!cv || t_value_load(cv) != 3)
			_exit(2);
		if (write(to_parent[1], &x, 1) != 1)
			_exit(6);
		/* Each value the parent set, at once, with one load. */
		while (read(to_child[0], &x, 8) == 8) {
			if (t_value_load(cv) != x)
				_exit(3);
			/* Rewind from here; the parent reads it. */
			if (t_fence_signal(fd, c.handle, x / 2))
				_exit(4);
			if (write(to_parent[1], &x, 8) != 8)
				_exit(5);
		}
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	/* The child read the first value before anything changed it. */
	ASSERT_EQ(1, read(to_parent[0], &x, 1));
	for (x = 10; x < (1ull << 62); x *= 7) {
		ASSERT_EQ(0, t_fence_signal(self->fd, s.handle, x));
		ASSERT_EQ(8, write(to_child[1], &x, 8));
		ASSERT_EQ(8, read(to_parent[0], &x, 8));
		EXPECT_EQ(x / 2, t_value_load(v));
		last = x / 2;
	}
	close(to_child[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* The export keeps the fence when every handle is gone. */
	t_value_unmap(v);
	EXPECT_EQ(0, t_fence_destroy(self->fd, s.handle));
	EXPECT_EQ(0, t_fence_import(self->fd, efd, &s));
	v = t_value_map(self->fd, &s);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(last, t_value_load(v));
	t_value_unmap(v);
	close(efd);
	close(to_parent[0]);
}

TEST_F(fence, import_bad)
{
	struct drm_d3dq_fence_import i = { .fd = -1 };
	struct t_fence f;
	int efd;

	EXPECT_EQ(-EBADF, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &i));
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	EXPECT_EQ(-EINVAL, t_fence_import(self->fd, efd, &f));
	close(efd);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	efd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, efd);
	i.fd = efd;
	i.flags = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &i));
	i.flags = 0;
	i.handle = 5;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &i));
	/* Each import is a handle of its own. */
	i.handle = 0;
	EXPECT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &i));
	EXPECT_NE(f.handle, i.handle);
	EXPECT_EQ(0, t_fence_destroy(self->fd, i.handle));
	close(efd);
}

TEST_F(fence, bad_input)
{
	struct drm_d3dq_fence_value fv[2] = {
		{ .handle = 0, .value = 1 }, { .handle = 0, .value = 1 },
	};
	struct drm_d3dq_fence_create c = { 0 };
	struct drm_d3dq_fence_signal s = { 0 };
	struct drm_d3dq_fence_destroy d = { 0 };
	struct drm_d3dq_fence_export x = { 0 };
	struct drm_d3dq_fence_wait w = { 0 };
	struct drm_d3dq_fence_value *big;
	uint32_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS);
	struct t_fence f;
	int efd;

	c.flags = 2;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c));
	c.flags = 0;
	c.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c));
	c.pad = 0;
	c.handle = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c));
	c.handle = 0;
	c.mmap_offset = 4096;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c));

	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	fv[0].handle = f.handle;
	fv[1].handle = f.handle;
	d.handle = f.handle;
	d.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &d));
	s.handle = f.handle;
	s.flags = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL, &s));
	EXPECT_EQ(-ENOENT, t_fence_signal(self->fd, f.handle + 100, 1));
	x.handle = f.handle;
	x.flags = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT, &x));

	/* Waits: count, flags, stride, padding, handles, pointers. */
	EXPECT_EQ(-EINVAL, fence_wait(self->fd, fv, 0, 0, 0));
	EXPECT_EQ(-EINVAL, fence_wait(self->fd, fv, 1, 2, 0));
	EXPECT_EQ(-EINVAL, fence_wait(self->fd, fv, max + 1, 0, 0));
	EXPECT_EQ(-EINVAL, fence_wait(self->fd, fv, 0xffffffffu, 0, 0));
	w.fences = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(1, fv);
	w.fences.stride = 8;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w));
	w.fences.stride = 4097;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w));
	w.fences.stride = sizeof(fv[0]);
	w.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w));
	w.pad = 0;
	w.fences.array = 8;
	EXPECT_EQ(-EFAULT, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w));
	fv[1].pad = 1;
	EXPECT_EQ(-EINVAL, fence_wait(self->fd, fv, 2, 0, 0));
	fv[1].pad = 0;
	fv[1].handle = f.handle + 100;
	EXPECT_EQ(-ENOENT, fence_wait(self->fd, fv, 2, 0, 0));
	fv[1].handle = f.handle;
	/* The largest count is fine (duplicates are). */
	big = calloc(max, sizeof(*big));
	ASSERT_NE(NULL, big);
	for (uint32_t i = 0; i < max; i++)
		big[i] = fv[0];
	EXPECT_EQ(-ETIME, fence_wait(self->fd, big, max, 0, 0));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	EXPECT_EQ(0, fence_wait(self->fd, big, max, 0, 0));
	free(big);

	/* Registrations: the same checks, and the eventfd is untouched. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	fv[0].value = 1;
	EXPECT_EQ(-EINVAL, fence_event(self->fd, fv, 0, 0, efd));
	EXPECT_EQ(-EINVAL, fence_event(self->fd, fv, 1, 2, efd));
	EXPECT_EQ(-EINVAL, fence_event(self->fd, fv, max + 1, 0, efd));
	fv[1].handle = 0;
	EXPECT_EQ(-ENOENT, fence_event(self->fd, fv, 2, 0, efd));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	close(efd);
}

struct waiter {
	int fd;
	struct drm_d3dq_fence_value fv[2];
	uint32_t n, flags;
	int64_t deadline;
	pid_t tid;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->tid = syscall(SYS_gettid);
	w->ret = fence_wait(w->fd, w->fv, w->n, w->flags, w->deadline);
	return NULL;
}

/* Start a waiter thread and return once it sleeps in the kernel. */
static bool start_waiter(struct waiter *w, pthread_t *t)
{
	w->tid = 0;
	w->ret = 1;
	if (pthread_create(t, NULL, waiter_main, w))
		return false;
	while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return sleeping(w->tid);
}

TEST_F(fence, waits)
{
	struct drm_d3dq_fence_value fv[2];
	struct waiter w = { .fd = self->fd, .n = 2, .deadline = FOREVER };
	struct t_fence a, b;
	pthread_t t;

	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &a));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &b));
	fv[0] = (struct drm_d3dq_fence_value){ .handle = a.handle, .value = 2 };
	fv[1] = (struct drm_d3dq_fence_value){ .handle = b.handle, .value = 3 };

	/* Deadline now or before: a poll. */
	EXPECT_EQ(-ETIME, fence_wait(self->fd, fv, 2, 0, 0));
	EXPECT_EQ(-ETIME, fence_wait(self->fd, fv, 2, DRM_D3DQ_FENCE_WAIT_ANY,
				     -1));
	/* A deadline passes. */
	EXPECT_EQ(-ETIME, fence_wait(self->fd, fv, 2, 0,
				     t_deadline(20 * T_MS)));

	/* ALL, each reached at some moment (sticky, R6). */
	w.fv[0] = fv[0];
	w.fv[1] = fv[1];
	ASSERT_TRUE(start_waiter(&w, &t));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 2));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	/* The waiter sleeps on: it has not returned. */
	EXPECT_TRUE(sleeping(w.tid));
	EXPECT_EQ(1, __atomic_load_n(&w.ret, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 100));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);

	/* ANY: the first one. */
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 0));
	w.flags = DRM_D3DQ_FENCE_WAIT_ANY;
	ASSERT_TRUE(start_waiter(&w, &t));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 3));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);
	/* Already there: at once, with any deadline. */
	EXPECT_EQ(0, fence_wait(self->fd, fv, 2, DRM_D3DQ_FENCE_WAIT_ANY, 0));
	EXPECT_EQ(-ETIME, fence_wait(self->fd, fv, 2, 0, 0));

	/* A wait queued after a rewind needs a new value (R7). */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 9));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 1));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, a.handle, 2, 0));

	/*
	 * A deadline in a sleeping wait. Not start_waiter(): on a slow
	 * kernel the deadline may pass before the thread is seen asleep.
	 */
	w.n = 1;
	w.flags = 0;
	w.deadline = t_deadline(50 * T_MS);
	w.ret = 1;
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_main, &w));
	pthread_join(t, NULL);
	EXPECT_EQ(-ETIME, w.ret);
}

static _Atomic int alarms;

static void on_alarm(int sig)
{
	(void)sig;
	atomic_fetch_add(&alarms, 1);
}

TEST_F(fence, wait_interrupted)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct waiter w = { .fd = self->fd, .n = 1, .deadline = FOREVER };
	struct t_fence f;
	pthread_t t;

	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	w.fv[0] = (struct drm_d3dq_fence_value){ .handle = f.handle,
						 .value = 1 };
	/* Without SA_RESTART the wait returns EINTR. */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
	ASSERT_TRUE(start_waiter(&w, &t));
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	EXPECT_EQ(-EINTR, w.ret);

	/* With it the wait goes on, and ends with the signal. */
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_TRUE(start_waiter(&w, &t));
	atomic_store(&alarms, 0);
	pthread_kill(t, SIGUSR1);
	/* The handler ran, and the thread sleeps in the wait again. */
	while (!atomic_load(&alarms))
		usleep(1000);
	ASSERT_TRUE(sleeping(w.tid));
	EXPECT_EQ(1, __atomic_load_n(&w.ret, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);
	sigaction(SIGUSR1, &old, NULL);
}

TEST_F(fence, events)
{
	struct drm_d3dq_fence_value fv[2];
	struct t_fence a, b;
	int efd, efd2, p[2];

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_EQ(0, t_fence_create(self->fd, 1, 0, &a));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &b));

	/* Already reached: fires during the call. */
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 1, efd));
	EXPECT_EQ(1, t_efd_take(efd));

	/* Once, the first time the value gets there (R10). */
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 5, efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 4));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 5));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 7));
	EXPECT_EQ(0, t_efd_take(efd));

	/* Crossing and back: one firing, and the rewind fires nothing. */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 3, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 3, efd2));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, UINT64_MAX));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 3));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(1, t_efd_take(efd2));

	/*
	 * Registrations of one eventfd that one change satisfies signal it
	 * once (R10), whatever their values; another change signals it
	 * again, and so does a registration firing at its call.
	 */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 2, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 2, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 1, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 3, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 2, efd2));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 2));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(1, t_efd_take(efd2));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 1, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 2, efd));
	EXPECT_EQ(2, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 3));
	EXPECT_EQ(1, t_efd_take(efd));
	/* A multi-fence registration is one of its own. */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 2, efd));
	fv[0] = (struct drm_d3dq_fence_value){ .handle = a.handle, .value = 2 };
	fv[1] = (struct drm_d3dq_fence_value){ .handle = a.handle, .value = 2 };
	EXPECT_EQ(0, fence_event(self->fd, fv, 2, DRM_D3DQ_FENCE_WAIT_ANY,
				 efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 2));
	EXPECT_EQ(2, t_efd_take(efd));

	/* ALL: each value reached at some moment (sticky). */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	fv[0] = (struct drm_d3dq_fence_value){ .handle = a.handle, .value = 1 };
	fv[1] = (struct drm_d3dq_fence_value){ .handle = b.handle, .value = 1 };
	EXPECT_EQ(0, fence_event(self->fd, fv, 2, 0, efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 1));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 1));
	EXPECT_EQ(1, t_efd_take(efd));

	/* ANY: the first, and never again for that registration (R13). */
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 0));
	EXPECT_EQ(0, fence_event(self->fd, fv, 2, DRM_D3DQ_FENCE_WAIT_ANY,
				 efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 1));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 1));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 0));
	EXPECT_EQ(0, t_fence_signal(self->fd, b.handle, 1));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(2, 0));

	/* Not an eventfd (R19): refused, and nothing is written to it. */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	EXPECT_EQ(-EINVAL, t_fence_event1(self->fd, a.handle, 0, p[0]));
	EXPECT_EQ(-EINVAL, t_fence_event1(self->fd, a.handle, 0, p[1]));
	EXPECT_EQ(-EINVAL, t_fence_event1(self->fd, a.handle, 0, self->fd));
	EXPECT_EQ(-1, read(p[0], &fv, 1));
	EXPECT_EQ(EAGAIN, errno);
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(-EBADF, t_fence_event1(self->fd, a.handle, 0, p[0]));
	EXPECT_EQ(-EBADF, t_fence_event1(self->fd, a.handle, 0, -1));

	/* The kernel holds the eventfd: closing it changes nothing. */
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 0));
	EXPECT_EQ(0, t_fence_event1(self->fd, a.handle, 10, efd2));
	close(efd2);
	EXPECT_TRUE(t_fence_counts_become(2, 1));
	EXPECT_EQ(0, t_fence_signal(self->fd, a.handle, 10));
	EXPECT_TRUE(t_fence_counts_become(2, 0));
	close(efd);
}

TEST_F_TIMEOUT(fence, event_many, 120)
{
	enum { N = 3000 };
	struct t_fence f;
	int efd, i;

	/*
	 * Thousands of registrations are cheap (R12); each fires once, and
	 * one change signals the eventfd once however many it reaches
	 * (R10).
	 */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, N - i, efd));
	EXPECT_TRUE(t_fence_counts_become(1, N));
	for (i = 1; i <= 10; i++)
		EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, i));
	EXPECT_EQ(10, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, N - 10));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, N / 2));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, N - N / 2));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, N));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	close(efd);
}

/*
 * Registrations of event_order: each one's value and eventfd, and
 * whether it fired, as the spec says it must (R6, R7, R10).
 */
struct reg_model {
	uint64_t value;
	unsigned int efd;
	bool done;
};

enum { ORDER_EFDS = 6 };

/*
 * Set the fence to @value and check, from the model, every eventfd's
 * count (one per change that reaches any of its pending registrations)
 * and how many registrations are left.
 */
static bool order_signal(int fd, uint32_t handle, struct reg_model *m,
			 int n, const int *efds, uint64_t value)
{
	uint64_t want[ORDER_EFDS] = { 0 }, got;
	int i, pending = 0, tries;
	bool ok = true;

	if (t_fence_signal(fd, handle, value))
		return false;
	for (i = 0; i < n; i++) {
		if (m[i].done)
			continue;
		if (m[i].value <= value) {
			m[i].done = true;
			want[m[i].efd] = 1;
		} else {
			pending++;
		}
	}
	for (i = 0; i < ORDER_EFDS; i++) {
		got = t_efd_take(efds[i]);
		if (got != want[i]) {
			fprintf(stderr, "# signal %llu: eventfd %d got %llu, want %llu\n",
				(unsigned long long)value, i,
				(unsigned long long)got,
				(unsigned long long)want[i]);
			ok = false;
		}
	}
	/* Fired registrations are freed by a worker: give it time. */
	for (tries = 0; tries < 6; tries++)
		if (t_fence_counts_become(1, pending))
			return ok;
	fprintf(stderr, "# signal %llu: %d registrations should be left\n",
		(unsigned long long)value, pending);
	return false;
}

static int order_register(int fd, uint32_t handle, struct reg_model *m,
			  int *n, const int *efds, uint64_t value,
			  unsigned int efd)
{
	m[*n] = (struct reg_model){ .value = value, .efd = efd };
	(*n)++;
	return t_fence_event1(fd, handle, value, efds[efd]);
}

/*
 * Tens of thousands of registrations on one fence, with falling targets
 * (SetEventOnCompletion for frames in any order) and rising ones, many
 * of them equal: each value write satisfies exactly the registrations it
 * reaches, whatever the order they came in, and a rewind takes nothing
 * back (R6) while a registration armed after it needs a new write (R7).
 * The registration loop's time is logged: listing a node must not walk
 * the others (with the fence's lock held and interrupts off).
 */
TEST_F_TIMEOUT(fence, event_order, 600)
{
	enum { FALL = 40000, RISE = 20000, LATE = 150 };
	struct reg_model *m;
	struct timespec t0, t1;
	int efds[ORDER_EFDS];
	uint64_t v;
	struct t_fence f;
	int i, n = 0;

	m = calloc(FALL + RISE + LATE, sizeof(*m));
	ASSERT_NE(NULL, m);
	for (i = 0; i < ORDER_EFDS; i++) {
		efds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, efds[i]);
	}
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));

	/*
	 * Falling targets FALL..1 over four eventfds; between them rising
	 * even targets 2..FALL, equal to falling ones, on a fifth.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < FALL; i++) {
		ASSERT_EQ(0, order_register(self->fd, f.handle, m, &n, efds,
					    FALL - i, i % 4));
		if (i % 2 == 0)
			ASSERT_EQ(0, order_register(self->fd, f.handle, m, &n,
						    efds, i + 2, 4));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%d registrations: %.3f s", n,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	ASSERT_EQ(FALL + RISE, n);
	ASSERT_TRUE(t_fence_counts_become(1, n));

	/* One target at a time, then jumps, to the middle. */
	for (v = 1; v <= 9; v++)
		ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, v));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 1001));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 1002));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 20000));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 20000));

	/*
	 * A rewind satisfies nothing and takes nothing back; what is
	 * registered after it below the value fires at its call (a change
	 * of its own each), the rest waits for a new write.
	 */
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 100));
	for (v = LATE; v >= 1; v--) {
		ASSERT_EQ(0, order_register(self->fd, f.handle, m, &n, efds,
					    v, 5));
		if (v <= 100) {
			m[n - 1].done = true;
			ASSERT_EQ(1, t_efd_take(efds[5]));
		}
	}
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 120));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, 20001));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, FALL - 1));
	ASSERT_TRUE(order_signal(self->fd, f.handle, m, n, efds, FALL));
	ASSERT_TRUE(t_fence_counts_become(1, 0));

	for (i = 0; i < ORDER_EFDS; i++)
		close(efds[i]);
	free(m);
}

/*
 * Destroying a handle releases what came through it as if the value were
 * ~0 (R14), and nothing that came through another handle (R20); closing
 * a file destroys its handles.
 */
TEST_F(fence, destroy_and_close_release)
{
	struct waiter w = { .fd = self->fd, .n = 1, .deadline = FOREVER };
	struct t_fence f, g, i1;
	int efd, efd2, xfd, other;
	pthread_t t;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	xfd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, xfd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_import(other, xfd, &g));
	ASSERT_EQ(0, t_fence_import(self->fd, xfd, &i1));

	/* A waiter and a registration on f, one on the import i1, one in
	 * the other file.
	 */
	w.fv[0] = (struct drm_d3dq_fence_value){ .handle = f.handle,
						 .value = 5 };
	ASSERT_TRUE(start_waiter(&w, &t));
	EXPECT_EQ(0, t_fence_event1(self->fd, f.handle, 5, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, i1.handle, 5, efd2));
	EXPECT_EQ(0, t_fence_event1(other, g.handle, 5, efd2));
	EXPECT_TRUE(t_fence_counts_become(1, 3));

	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(1, t_efd_take(efd));
	/* Neither the other handle's nor the other file's. */
	EXPECT_EQ(0, t_efd_take(efd2));
	EXPECT_TRUE(t_fence_counts_become(1, 2));

	/* Close with a registration pending: it fires and is freed. */
	close(other);
	EXPECT_EQ(1, t_efd_take(efd2));
	EXPECT_TRUE(t_fence_counts_become(1, 1));
	/* The value was never touched. */
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, i1.handle, 5, 0));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(1, t_efd_take(efd2));
	/* The exported fd keeps the fence. */
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	close(xfd);
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	close(efd);
	close(efd2);
}

/*
 * A process killed while it waits, with a registration pending, on a
 * fence another process shares: its registration is released (its file
 * closed), nothing leaks, and the other process's fence and registration
 * are untouched (R20).
 */
TEST_F(fence, killed_waiter)
{
	struct t_fence s;
	int efd, mine, xfd, status;
	char path[64];
	pid_t pid;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	mine = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, mine);
	ASSERT_EQ(0, t_fence_create(self->fd, 4, DRM_D3DQ_FENCE_SHARED, &s));
	xfd = t_fence_export(self->fd, s.handle);
	ASSERT_LE(0, xfd);
	EXPECT_EQ(0, t_fence_event1(self->fd, s.handle, 50, mine));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct t_fence c;
		int fd = t_open(0);

		if (fd < 0 || t_fence_import(fd, xfd, &c) ||
		    t_fence_event1(fd, c.handle, 50, efd))
			_exit(1);
		t_fence_wait1(fd, c.handle, 50, FOREVER);
		_exit(2);
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	/* Sleeping in FENCE_WAIT, its registration made. */
	ASSERT_TRUE(t_fence_counts_become(1, 2));
	ASSERT_TRUE(sleeping_at(path));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/* Released by the close, once. */
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, 1));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, s.handle, 5, 0));
	EXPECT_EQ(0, t_efd_take(mine));
	EXPECT_EQ(0, t_fence_signal(self->fd, s.handle, 50));
	EXPECT_EQ(1, t_efd_take(mine));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	close(xfd);
	close(efd);
	close(mine);
}

/*
 * REMOVE (R15): every fence of the file reads ~0, in every process that
 * holds it, and stays there; waits and registrations complete.
 */
/* A thread in DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT (WAIT_FOR_SUBMIT). */
struct sobj_waiter {
	int fd;
	uint32_t sobj;
	uint64_t point;
	pid_t tid;
	int ret;
};

static void *sobj_waiter_main(void *arg)
{
	struct sobj_waiter *w = arg;

	w->tid = syscall(SYS_gettid);
	w->ret = drmSyncobjTimelineWait(w->fd, &w->sobj, &w->point, 1,
					INT64_MAX,
					DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					NULL) ? -errno : 0;
	return NULL;
}

static bool start_sobj_waiter(struct sobj_waiter *w, pthread_t *t)
{
	w->tid = 0;
	w->ret = 1;
	if (pthread_create(t, NULL, sobj_waiter_main, w))
		return false;
	while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	return sleeping(w->tid);
}

/*
 * A syncobj registration adds its point once, at the crossing: not
 * before, also when the value is rewound at once after it (satisfaction
 * is marked at the write), never again; a thread waiting for the point
 * wakes then.
 */
TEST_F(fence, event_syncobj)
{
	struct sobj_waiter w = { .fd = self->fd, .point = 3 };
	struct drm_d3dq_fence_value fv[2];
	struct t_fence f, g;
	uint32_t s, witness = 0;
	pthread_t t;

	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &g));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s));
	w.sobj = s;

	ASSERT_EQ(0, event1_syncobj(self->fd, f.handle, 10, s, 3));
	EXPECT_TRUE(t_fence_counts_become(2, 1));
	ASSERT_TRUE(start_sobj_waiter(&w, &t));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 9));
	/* The waiter sleeps on after the signal: no point came. */
	EXPECT_TRUE(sleeping(w.tid));
	EXPECT_EQ(0, sobj_last(self->fd, s));
	EXPECT_EQ(1, __atomic_load_n(&w.ret, __ATOMIC_ACQUIRE));
	/* Reached and rewound before anyone looked. */
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 10));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(3, sobj_last(self->fd, s));
	EXPECT_TRUE(t_fence_counts_become(2, 0));
	/*
	 * Once: a second crossing adds nothing, while a witness registered
	 * for it (another syncobj) gets its point.
	 */
	EXPECT_EQ(0, drmSyncobjCreate(self->fd, 0, &witness));
	EXPECT_EQ(0, event1_syncobj(self->fd, f.handle, 10, witness, 1));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 10));
	EXPECT_TRUE(sobj_becomes(self->fd, witness, 1));
	EXPECT_EQ(3, sobj_last(self->fd, s));

	/* Reached already: the point comes at once. */
	EXPECT_EQ(0, event1_syncobj(self->fd, f.handle, 10, s, 4));
	EXPECT_TRUE(sobj_becomes(self->fd, s, 4));

	/* All of two fences, each at some moment. */
	fv[0] = (struct drm_d3dq_fence_value){ .handle = f.handle,
					       .value = 20 };
	fv[1] = (struct drm_d3dq_fence_value){ .handle = g.handle,
					       .value = 5 };
	EXPECT_EQ(0, event_syncobj(self->fd, fv, 2, 0, s, 6));
	EXPECT_EQ(0, event1_syncobj(self->fd, f.handle, 20, witness, 2));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 20));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	/* The crossing's registrations ran: the witness's point came. */
	EXPECT_TRUE(sobj_becomes(self->fd, witness, 2));
	EXPECT_EQ(4, sobj_last(self->fd, s));
	EXPECT_EQ(0, t_fence_signal(self->fd, g.handle, 5));
	EXPECT_TRUE(sobj_becomes(self->fd, s, 6));

	/* Any of two. */
	EXPECT_EQ(0, event_syncobj(self->fd, fv, 2, DRM_D3DQ_FENCE_WAIT_ANY,
				   s, 8));
	EXPECT_TRUE(sobj_becomes(self->fd, s, 8));
	EXPECT_TRUE(t_fence_counts_become(2, 0));

	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_EQ(0, t_fence_destroy(self->fd, g.handle));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, s));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, witness));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
}

/*
 * A pending syncobj registration is released like an eventfd one: by
 * destroying its fence handle (the point comes), by closing its file,
 * and it keeps its syncobj when the syncobj's handle is destroyed.
 */
TEST_F(fence, event_syncobj_release)
{
	struct t_fence f, g;
	uint32_t s, s2;
	int other, xfd;

	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s));
	ASSERT_EQ(0, event1_syncobj(self->fd, f.handle, 10, s, 1));
	EXPECT_TRUE(t_fence_counts_become(1, 1));
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_TRUE(sobj_becomes(self->fd, s, 1));
	EXPECT_TRUE(t_fence_counts_become(0, 0));

	/* The syncobj's handle goes first; the registration still fires. */
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s2));
	ASSERT_EQ(0, event1_syncobj(self->fd, f.handle, 10, s2, 1));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, s2));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 10));
	EXPECT_TRUE(t_fence_counts_become(1, 0));

	/* A file closed with registrations pending on a shared fence. */
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, DRM_D3DQ_FENCE_SHARED, &f));
	xfd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, xfd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_import(other, xfd, &g));
	close(xfd);
	ASSERT_EQ(0, drmSyncobjCreate(other, 0, &s2));
	ASSERT_EQ(0, event1_syncobj(other, g.handle, 10, s2, 1));
	ASSERT_EQ(0, event1_syncobj(other, g.handle, 20, s2, 2));
	EXPECT_TRUE(t_fence_counts_become(1, 2));
	close(other);
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	/* Nothing of it is left to fire on this file's fence. */
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 20));
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, s));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
}

#define ORDER_REGS	64
#define ORDER_ROUNDS	120

/*
 * Points come in the order their registrations fired: once the point of
 * a registration made after a signal is there, so are the points of
 * every registration that signal fired (what a dispatcher that flushes
 * with a registration of a value already reached relies on).
 */
TEST_F_TIMEOUT(fence, event_syncobj_order, 120)
{
	uint32_t s[ORDER_REGS], flush, last;
	struct t_fence f, done;
	int i, r, missing = 0;

	ASSERT_EQ(0, t_fence_create(self->fd, 1, 0, &done));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &flush));
	for (i = 0; i < ORDER_REGS; i++)
		ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s[i]));
	for (r = 1; r <= ORDER_ROUNDS; r++) {
		for (i = 0; i < ORDER_REGS; i++)
			ASSERT_EQ(0, event1_syncobj(self->fd, f.handle, r,
						    s[i], r));
		ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, r));
		ASSERT_EQ(0, event1_syncobj(self->fd, done.handle, 1, flush,
					    r));
		ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &flush,
					(uint64_t[]){ r }, 1,
					t_deadline(20000000000ull),
					DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					&last));
		for (i = 0; i < ORDER_REGS; i++)
			missing += sobj_last(self->fd, s[i]) != r;
	}
	EXPECT_EQ(0, missing) TH_LOG("%d of %d points came after a later one",
				     missing, ORDER_REGS * ORDER_ROUNDS);
	for (i = 0; i < ORDER_REGS; i++)
		EXPECT_EQ(0, drmSyncobjDestroy(self->fd, s[i]));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, flush));
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_EQ(0, t_fence_destroy(self->fd, done.handle));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
}

/* Bad syncobj registrations: documented errnos, nothing left behind. */
TEST_F(fence, event_syncobj_bad)
{
	struct drm_d3dq_fence_value fv = { .value = 5 };
	struct drm_d3dq_fence_event e;
	unsigned long old_req;
	char buf[64];
	struct t_fence f;
	uint32_t s;
	int efd;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &s));
	fv.handle = f.handle;

	EXPECT_EQ(-EINVAL, event1_syncobj(self->fd, f.handle, 5, s, 0));
	EXPECT_EQ(-ENOENT, event1_syncobj(self->fd, f.handle, 5, s + 100, 1));
	EXPECT_EQ(-ENOENT, event1_syncobj(self->fd, f.handle + 100, 5, s, 1));
	EXPECT_EQ(-EINVAL, event_syncobj(self->fd, &fv, 1, 1u << 3, s, 1));
	EXPECT_EQ(-EINVAL, event_syncobj(self->fd, &fv, 0, 0, s, 1));

	e = (struct drm_d3dq_fence_event){
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.flags = DRM_D3DQ_FENCE_EVENT_SYNCOBJ,
		.eventfd = efd, .syncobj = s, .point = 1,
	};
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e));
	e.eventfd = 0;
	e.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e));
	/* Without the flag, the syncobj fields must be 0. */
	e = (struct drm_d3dq_fence_event){
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.eventfd = efd, .syncobj = s,
	};
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e));
	e.syncobj = 0;
	e.point = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e));
	e.point = 0;
	e.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(0, sobj_last(self->fd, s));
	EXPECT_TRUE(t_fence_counts_become(1, 0));

	/*
	 * A uapi 1.3 caller's structure ends at @eventfd; what follows it
	 * in memory is not read.
	 */
	old_req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
		       DRM_COMMAND_BASE + DRM_D3DQ_FENCE_EVENT,
		       offsetof(struct drm_d3dq_fence_event, syncobj));
	memset(buf, 0xff, sizeof(buf));
	e = (struct drm_d3dq_fence_event){
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.eventfd = efd,
	};
	memcpy(buf, &e, offsetof(struct drm_d3dq_fence_event, syncobj));
	EXPECT_EQ(0, t_ioctl(self->fd, old_req, buf));
	EXPECT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	EXPECT_EQ(1, t_efd_take(efd));

	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
	EXPECT_EQ(0, drmSyncobjDestroy(self->fd, s));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	close(efd);
}

/*
 * REMOVE (uapi 1.9) is the removed file's affair (R15, R20): every fence
 * reads ~0 through it (a mapping made before and one made after), its
 * waits and registrations are released and it signals nothing; another
 * file that holds the shared fence keeps the real value, its waits and
 * registrations, and its right to signal and rewind.
 */
TEST_F(fence, remove)
{
	struct drm_d3dq_fence_sync_file sf = { .value = 1 };
	struct drm_d3dq_remove rm = { 0 };
	const uint64_t *vl, *vs, *vo, *vs2;
	struct t_fence l, s, o, other_own;
	int efd, oefd, xfd, other;

	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	oefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, oefd);
	ASSERT_EQ(0, t_fence_create(self->fd, 1, 0, &l));
	ASSERT_EQ(0, t_fence_create(self->fd, 2, DRM_D3DQ_FENCE_SHARED, &s));
	xfd = t_fence_export(self->fd, s.handle);
	ASSERT_LE(0, xfd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_import(other, xfd, &o));
	ASSERT_EQ(0, t_fence_create(other, 3, 0, &other_own));
	vl = t_value_map(self->fd, &l);
	vs = t_value_map(self->fd, &s);
	vo = t_value_map(other, &o);
	ASSERT_NE(NULL, vl);
	ASSERT_NE(NULL, vs);
	ASSERT_NE(NULL, vo);
	EXPECT_EQ(0, t_fence_event1(self->fd, l.handle, 100, efd));
	EXPECT_EQ(0, t_fence_event1(self->fd, s.handle, 100, efd));
	EXPECT_EQ(0, t_fence_event1(other, o.handle, 100, oefd));

	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	/* The removed file: ~0, its two registrations fired. */
	EXPECT_EQ(UINT64_MAX, t_value_load(vl));
	EXPECT_EQ(UINT64_MAX, t_value_load(vs));
	vs2 = t_value_map(self->fd, &s);
	ASSERT_NE(NULL, vs2);
	EXPECT_EQ(UINT64_MAX, t_value_load(vs2));
	EXPECT_EQ(2, t_efd_take(efd));
	EXPECT_EQ(0, t_fence_wait1(self->fd, l.handle, UINT64_MAX, 0));
	EXPECT_EQ(0, t_fence_wait1(self->fd, s.handle, UINT64_MAX, 0));
	EXPECT_EQ(0, t_fence_event1(self->fd, s.handle, 5, efd));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(-ENODEV, t_fence_signal(self->fd, l.handle, 0));
	EXPECT_EQ(-ENODEV, t_fence_signal(self->fd, s.handle, 0));
	EXPECT_EQ(-ENODEV, t_fence_export(self->fd, s.handle));
	sf.handle = s.handle;
	EXPECT_EQ(-ENODEV, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE,
				   &sf));

	/* The other file: the real value, its registration pending. */
	EXPECT_EQ(2, t_value_load(vo));
	EXPECT_EQ(0, t_efd_take(oefd));
	EXPECT_EQ(-ETIME, t_fence_wait1(other, o.handle, 100, 0));
	EXPECT_EQ(0, t_fence_signal(other, o.handle, 0));
	EXPECT_EQ(0, t_value_load(vo));
	EXPECT_EQ(0, t_efd_take(oefd));
	EXPECT_EQ(0, t_fence_signal(other, o.handle, 100));
	EXPECT_EQ(1, t_efd_take(oefd));
	EXPECT_EQ(100, t_value_load(vo));
	/* Still ~0 for the removed file. */
	EXPECT_EQ(UINT64_MAX, t_value_load(vs));

	/* No new fences on the removed file; the other file is fine. */
	EXPECT_EQ(-ENODEV, t_fence_create(self->fd, 0, 0, &l));
	EXPECT_EQ(-ENODEV, t_fence_import(self->fd, xfd, &l));
	EXPECT_EQ(0, t_fence_signal(other, other_own.handle, 4));
	EXPECT_EQ(0, t_fence_wait1(other, other_own.handle, 4, 0));

	t_value_unmap(vl);
	t_value_unmap(vs);
	t_value_unmap(vs2);
	t_value_unmap(vo);
	close(xfd);
	close(other);
	close(oefd);
	close(efd);
}

/*
 * A deadline in the past returns -ETIME at once, however far in the past
 * (INT64_MIN + 1 once wrapped into a sleep of centuries): the alarm
 * would turn a sleep into -EINTR.
 */
TEST_F(fence, wait_deadline_far_past)
{
	static const int64_t past[] = { INT64_MIN, INT64_MIN + 1, -1, 0, 1 };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct t_fence f;
	unsigned int i;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		alarm(5);
		EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, f.handle, 1, past[i]))
			TH_LOG("deadline %lld", (long long)past[i]);
		alarm(0);
	}
	EXPECT_EQ(0, t_fence_destroy(self->fd, f.handle));
}

/*
 * A removal is one instant for the removed file's mappings (R15): a
 * thread that reads every fence of the file in turn, while another
 * removes it, never reads ~0 and then a fence that is not ~0 yet. The
 * file's fences, local and shared, are many, so that the removal's walk
 * over them takes long enough for the reader to overtake it; each round
 * a new file.
 */
#define INSTANT_ROUNDS	6
#define INSTANT_FENCES	128

struct instant {
	const uint64_t *v[INSTANT_FENCES];
	atomic_bool start;
	int torn, sweeps;
};

static void *instant_read(void *arg)
{
	struct instant *in = arg;
	bool seen_max, all_max = false;
	int i;

	while (!atomic_load(&in->start))
		;
	while (!all_max) {
		seen_max = false;
		all_max = true;
		for (i = 0; i < INSTANT_FENCES; i++) {
			bool max = t_value_load(in->v[i]) == UINT64_MAX;

			if (seen_max && !max)
				in->torn++;
			seen_max |= max;
			all_max &= max;
		}
		in->sweeps++;
	}
	return NULL;
}

TEST_F_TIMEOUT(fence, remove_is_one_instant, 300)
{
	struct drm_d3dq_remove rm = { 0 };
	struct t_fence f[INSTANT_FENCES];
	struct instant in;
	int round, i, fd, torn = 0;
	pthread_t t;

	for (round = 0; round < INSTANT_ROUNDS; round++) {
		memset(&in, 0, sizeof(in));
		fd = t_open(0);
		ASSERT_LE(0, fd);
		for (i = 0; i < INSTANT_FENCES; i++) {
			ASSERT_EQ(0, t_fence_create(fd, 0,
						    i & 1 ? DRM_D3DQ_FENCE_SHARED : 0,
						    &f[i]));
			in.v[i] = t_value_map(fd, &f[i]);
			ASSERT_NE(NULL, in.v[i]);
		}
		ASSERT_EQ(0, pthread_create(&t, NULL, instant_read, &in));
		atomic_store(&in.start, true);
		ASSERT_EQ(0, t_ioctl(fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
		pthread_join(t, NULL);
		torn += in.torn;
		for (i = 0; i < INSTANT_FENCES; i++)
			t_value_unmap(in.v[i]);
		close(fd);
	}
	TH_LOG("%d torn reads in %d rounds", torn, INSTANT_ROUNDS);
	EXPECT_EQ(0, torn);
}

/*
 * Handles destroyed while REMOVE walks the file's fences (issue 38, 1):
 * the walk holds what it walks. Threads destroy fences that have CPU
 * waits and registrations pending while another removes the file; each
 * round a new file. Under KASAN (make check-debug) a walk that touched a
 * freed fence is a report.
 */
#define RACE_ROUNDS	60
#define RACE_FENCES	48

struct race {
	int fd, efd;
	struct t_fence f[RACE_FENCES];
	int ret;
};

static void *race_destroy(void *arg)
{
	struct race *r = arg;
	int i;

	for (i = 0; i < RACE_FENCES; i++) {
		int ret = t_fence_destroy(r->fd, r->f[i].handle);

		if (ret && ret != -ENOENT)
			r->ret = ret;
	}
	return NULL;
}

static void *race_remove(void *arg)
{
	struct drm_d3dq_remove rm = { 0 };
	struct race *r = arg;

	if (t_ioctl(r->fd, DRM_IOCTL_D3DQ_REMOVE, &rm))
		r->ret = -errno;
	return NULL;
}

TEST_F(fence, destroy_races_remove)
{
	struct race r = { 0 };
	pthread_t d, m;
	int round, i;

	r.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, r.efd);
	for (round = 0; round < RACE_ROUNDS; round++) {
		r.fd = t_open(0);
		ASSERT_LE(0, r.fd);
		for (i = 0; i < RACE_FENCES; i++) {
			ASSERT_EQ(0, t_fence_create(r.fd, 0,
						    i & 1 ? DRM_D3DQ_FENCE_SHARED : 0,
						    &r.f[i]));
			ASSERT_EQ(0, t_fence_event1(r.fd, r.f[i].handle, 9,
						    r.efd));
		}
		ASSERT_EQ(0, pthread_create(&d, NULL, race_destroy, &r));
		ASSERT_EQ(0, pthread_create(&m, NULL, race_remove, &r));
		pthread_join(d, NULL);
		pthread_join(m, NULL);
		ASSERT_EQ(0, r.ret);
		/* Every registration fired, by the destruction or the removal. */
		EXPECT_EQ(RACE_FENCES, t_efd_take(r.efd));
		close(r.fd);
	}
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	close(r.efd);
}

/*
 * Per-user bound: processes of one user, several files each, together
 * create max_user_fences fences and then get -EDQUOT; registrations are
 * bounded by max_user_fence_events the same way.
 */
#define USER_FENCES	20
#define USER_EVENTS	12

FIXTURE(limits) {
	int fd;
};

FIXTURE_SETUP(limits)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_fences=20 max_user_fence_events=12"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(limits)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* Create fences on 2 files in turn until refused; report count, errno. */
static void creator(int out, int go)
{
	int fd[2], n = 0, err = 0, i;
	struct t_fence f;
	char b;

	fd[0] = t_open(0);
	fd[1] = t_open(0);
	if (fd[0] < 0 || fd[1] < 0)
		_exit(1);
	for (i = 0; !err; i ^= 1) {
		err = -t_fence_create(fd[i], 0, i ? DRM_D3DQ_FENCE_SHARED : 0,
				    &f);
		if (!err)
			n++;
	}
	if (write(out, &n, sizeof(n)) != sizeof(n) ||
	    write(out, &err, sizeof(err)) != sizeof(err))
		_exit(2);
	if (read(go, &b, 1) < 0)
		_exit(3);
	_exit(0);
}

TEST_F(limits, user_fences)
{
	int res[2], go[2], total = 0, n, err, i, status;
	pid_t pids[3];
	struct t_fence f;

	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(res[0]);
			close(go[1]);
			creator(res[1], go[0]);
		}
		/* One after the other, so each sees the others' fences. */
		ASSERT_EQ(sizeof(n), read(res[0], &n, sizeof(n)));
		ASSERT_EQ(sizeof(err), read(res[0], &err, sizeof(err)));
		EXPECT_EQ(EDQUOT, err);
		total += n;
	}
	EXPECT_EQ(USER_FENCES, total);
	EXPECT_EQ(-EDQUOT, t_fence_create(self->fd, 0, 0, &f));
	/* Freed fences count no more. */
	close(go[1]);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	EXPECT_EQ(0, t_fence_create(self->fd, 0, 0, &f));
	close(go[0]);
	close(res[0]);
	close(res[1]);
}

TEST_F(limits, user_events)
{
	struct t_fence f, mine;
	int efd, i, other;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	other = t_open(0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &mine));
	for (i = 0; i < USER_EVENTS; i++)
		ASSERT_EQ(0, t_fence_event1(self->fd, mine.handle, 1, efd));
	EXPECT_EQ(-EDQUOT, t_fence_event1(self->fd, mine.handle, 1, efd));
	ASSERT_EQ(0, t_fence_create(other, 0, 0, &f));
	EXPECT_EQ(-EDQUOT, t_fence_event1(other, f.handle, 1, efd));
	EXPECT_EQ(0, t_efd_take(efd));
	/* Fired registrations are freed, and count no more. */
	EXPECT_EQ(0, t_fence_signal(self->fd, mine.handle, 1));
	/* One change signals an eventfd once (R10). */
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_TRUE(t_fence_counts_become(2, 0));
	EXPECT_EQ(0, t_fence_event1(other, f.handle, 1, efd));
	close(other);
	EXPECT_EQ(1, t_efd_take(efd));
	close(efd);
}

/*
 * Fired registrations are freed later, in batches, yet count no more from
 * the moment they fired: registering again at once is not refused for
 * them (R12), only for registrations that are pending.
 */
TEST_F(limits, fired_events_count_no_more_at_once)
{
	struct t_fence mine;
	int efd, i;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &mine));
	for (i = 0; i < USER_EVENTS; i++)
		ASSERT_EQ(0, t_fence_event1(self->fd, mine.handle, 1, efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, mine.handle, 1));
	EXPECT_EQ(1, t_efd_take(efd));
	for (i = 0; i < USER_EVENTS; i++)
		ASSERT_EQ(0, t_fence_event1(self->fd, mine.handle, 2, efd))
			TH_LOG("registration %d after %d fired", i,
			       USER_EVENTS);
	EXPECT_EQ(-EDQUOT, t_fence_event1(self->fd, mine.handle, 2, efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, mine.handle, 2));
	EXPECT_EQ(1, t_efd_take(efd));
	close(efd);
}

/*
 * Per-user bound on nodes (issue 38, 2): every (fence, value) a user
 * makes the kernel hold counts (CPU waits, registrations, sync_file
 * exports, jobs' fence waits, held or not), in every file of the user,
 * on any fence; beyond max_user_fence_nodes: -EDQUOT, and nothing was
 * made. A fence named twice through one handle counts once.
 */
#define USER_NODES	8

FIXTURE(nodes) {
	int fd, other, efd;
	uint32_t q;
	struct t_fence f, g;
};

FIXTURE_SETUP(nodes)
{
	self->fd = -1;
	self->other = -1;
	self->efd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_fence_nodes=8"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->other = t_open(0);
	ASSERT_LE(0, self->other);
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
	self->q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &self->f));
	ASSERT_EQ(0, t_fence_create(self->other, 0, 0, &self->g));
	ASSERT_EQ(USER_NODES,
		  t_param(self->fd, DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES));
}

FIXTURE_TEARDOWN(nodes)
{
	if (self->efd >= 0)
		close(self->efd);
	if (self->other >= 0)
		close(self->other);
	if (self->fd >= 0)
		close(self->fd);
	if (!t_can_reload())
		return;
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* A registration of @n pairs of @fd, the same handle at values 1..n. */
static int event_n(int fd, uint32_t handle, uint32_t n, int efd)
{
	struct drm_d3dq_fence_value fv[USER_NODES + 1];
	struct drm_d3dq_fence_event e = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.eventfd = efd,
	};
	uint32_t i;

	for (i = 0; i < n; i++)
		fv[i] = (struct drm_d3dq_fence_value){ .handle = handle,
						       .value = i + 1 };
	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
}

TEST_F(nodes, bound_and_errno)
{
	struct drm_d3dq_fence_sync_file sf = { .handle = self->f.handle,
					       .value = 50 };
	struct drm_d3dq_sync w = t_fs(self->f.handle, 50);
	uint32_t fl = 0;
	int i;

	/* Nine values of one handle: one node, the largest (all). */
	ASSERT_EQ(0, event_n(self->fd, self->f.handle, USER_NODES + 1,
			     self->efd));
	/* Six more, through both files of the user. */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 40,
					    self->efd));
		ASSERT_EQ(0, t_fence_event1(self->other, self->g.handle, 40,
					    self->efd));
	}
	/* A held job's wait is the eighth. */
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, NULL, 0, NULL,
				   &fl, NULL));
	EXPECT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);

	/* Full: every kind of wait is refused, in either file. */
	EXPECT_EQ(-EDQUOT, t_fence_event1(self->fd, self->f.handle, 40,
					  self->efd));
	EXPECT_EQ(-EDQUOT, t_fence_event1(self->other, self->g.handle, 40,
					  self->efd));
	EXPECT_EQ(-EDQUOT, t_fence_wait1(self->fd, self->f.handle, 40, 0));
	EXPECT_EQ(-EDQUOT, t_submit_hold(self->fd, self->q, &w, 1, NULL, 0,
					 NULL, &fl, NULL));
	EXPECT_EQ(-EDQUOT, t_ioctl(self->fd,
				   DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &sf));
	EXPECT_EQ(0, t_efd_take(self->efd));

	/* What fires is freed, and counts no more. */
	ASSERT_EQ(0, t_fence_signal(self->other, self->g.handle, 40));
	EXPECT_EQ(1, t_efd_take(self->efd));
	EXPECT_TRUE(t_fence_counts_become(2, 4));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, self->f.handle, 40, 0));
	/* The multi-value registration signals on its own (R10). */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 50));
	EXPECT_EQ(2, t_efd_take(self->efd));
	EXPECT_TRUE(t_jobs_gone(2));
	EXPECT_TRUE(t_fence_counts_become(2, 0));
	EXPECT_EQ(0, event_n(self->fd, self->f.handle, USER_NODES, self->efd));
	EXPECT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
}

/* Unplug (R15): every fence of the device reads ~0, events fire. */
T_UNPLUG_FIXTURE(unplug)

TEST_F(unplug, fences_read_max)
{
	struct sobj_waiter sw = { .fd = self->fd, .point = 1 };
	const uint64_t *vl, *vs;
	pthread_t t;
	struct t_fence l, s;
	int efd, xfd;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, t_fence_create(self->fd, 1, 0, &l));
	ASSERT_EQ(0, t_fence_create(self->fd, 2, DRM_D3DQ_FENCE_SHARED, &s));
	xfd = t_fence_export(self->fd, s.handle);
	ASSERT_LE(0, xfd);
	/* Only the export holds it now. */
	ASSERT_EQ(0, t_fence_destroy(self->fd, s.handle));
	ASSERT_EQ(0, t_fence_import(self->fd, xfd, &s));
	vl = t_value_map(self->fd, &l);
	vs = t_value_map(self->fd, &s);
	ASSERT_NE(NULL, vl);
	ASSERT_NE(NULL, vs);
	ASSERT_EQ(0, t_fence_destroy(self->fd, s.handle));
	EXPECT_EQ(0, t_fence_event1(self->fd, l.handle, 10, efd));

	ASSERT_EQ(0, drmSyncobjCreate(self->fd, 0, &sw.sobj));
	ASSERT_EQ(0, event1_syncobj(self->fd, l.handle, 10, sw.sobj, 1));
	ASSERT_TRUE(start_sobj_waiter(&sw, &t));

	ASSERT_EQ(0, t_unbind(0));
	/* The syncobj registration fired too: its waiter wakes. */
	pthread_join(t, NULL);
	EXPECT_EQ(0, sw.ret);
	EXPECT_EQ(UINT64_MAX, t_value_load(vl));
	EXPECT_EQ(UINT64_MAX, t_value_load(vs));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(-ENODEV, t_fence_signal(self->fd, l.handle, 0));
	/* No fence is made after the unplug (it would not be at ~0). */
	EXPECT_EQ(-ENODEV, t_fence_create(self->fd, 0, 0, &l));
	t_value_unmap(vl);
	t_value_unmap(vs);
	close(xfd);
	close(efd);
}

TEST_HARNESS_MAIN
