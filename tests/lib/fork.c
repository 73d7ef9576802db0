// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 39, item 2: fork(). The parent has a device with queues, local
 * and shared fences, a buffer, a command list, and a callback device
 * whose dispatcher thread runs with a registration pending. Its child:
 *
 * - is refused every call on the parent's objects with -ENODEV, before
 *   anything reaches the parent's file (the child once signalled,
 *   submitted to and removed the parent's device through it);
 * - destroys its copies of them and closes the parent's devices without
 *   touching the parent's objects (a local fence's destruction once set
 *   the parent's fence to UINT64_MAX, a queue's destroyed the parent's
 *   queue) and without keeping the parent's file open;
 * - opens devices of its own, plain and with a callback, that work: its
 *   callbacks come and its close returns (the child once took the
 *   parent's dispatcher thread for its own: its callbacks never came and
 *   its close waited for ever, while it rang the doorbell in the
 *   parent's file and the parent's dispatcher woke again and again).
 *
 * After each child the parent's objects are as they were and work, its
 * pending registration fires once and its dispatcher sleeps.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

#define T(n) ((void *)(uintptr_t)(n))
#define NT 16

/* Callbacks, per token; each process counts its own. */
static _Atomic unsigned int calls[NT];

static int callback(void *token, void *context)
{
	uintptr_t t = (uintptr_t)token;

	(void)context;
	if (t < NT)
		atomic_fetch_add(&calls[t], 1);
	return 0;
}

static struct d3dq_device *open_cb(void)
{
	struct d3dq_device_desc desc = D3DQ_DEVICE_DESC_INIT;
	struct d3dq_device *dev = NULL;

	desc.signal_event = callback;
	if (d3dq_device_open_desc(&desc, &dev))
		return NULL;
	return dev;
}

/* Wait (a hang detector, 10 s) until token @t was called @n times. */
static bool wait_calls(unsigned int t, unsigned int n)
{
	int i;

	for (i = 0; i < 10000 && atomic_load(&calls[t]) < n; i++)
		task_sleep_ms(1);
	return atomic_load(&calls[t]) >= n;
}

/* This process's threads, up to @max, in @tids: how many. */
static int threads(pid_t *tids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

/*
 * The dispatcher: a thread not in @old (@n of them) that sleeps in the
 * driver or in poll(2) (its eventfd), once there is one (10 s at most; ThreadSanitizer's runtime
 * starts a thread of its own with the first one); 0 if none.
 */
static pid_t find_dispatcher(const pid_t *old, int n)
{
	char stat[512], call[256], *p;
	pid_t now[64];
	int i, j, k, m;

	for (i = 0; i < 10000; i++) {
		m = threads(now, 64);
		for (j = 0; j < m; j++) {
			for (k = 0; k < n && old[k] != now[j]; k++)
				;
			if (k < n ||
			    task_read(now[j], "stat", stat, sizeof(stat)) <= 0 ||
			    task_read(now[j], "syscall", call,
				      sizeof(call)) <= 0)
				continue;
			p = strrchr(stat, ')');
			/* In the driver, or poll(2) on its eventfd. */
			if (p && p[2] == 'S' && (atol(call) == SYS_ioctl ||
						 atol(call) == SYS_poll ||
						 atol(call) == SYS_ppoll))
				return now[j];
		}
		task_sleep_ms(1);
	}
	return 0;
}

FIXTURE(fk) {
	struct util_env e;
	struct d3dq_fence *s;		/* shared */
	struct d3dq_cmdlist *l;		/* closed: buf[0] = 0x77 */
	struct d3dq_device *cb;		/* with a callback */
	struct d3dq_fence *cf;		/* of cb: T(5) pending at 1 */
	pid_t disp;			/* the dispatcher thread */
};

FIXTURE_SETUP(fk)
{
	pid_t old[64];
	int n;

	UTIL_ENV_OPEN(&self->e, 4096, 0, 0);
	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &self->s));
	self->l = util_list_write64(self->e.dev, self->e.buf, 0, 0x77);
	ASSERT_NE(NULL, self->l);
	/* The dispatcher is the thread the callback device starts. */
	n = threads(old, 64);
	self->cb = open_cb();
	ASSERT_NE(NULL, self->cb);
	self->disp = find_dispatcher(old, n);
	ASSERT_NE(0, self->disp);
	ASSERT_EQ(0, d3dq_fence_create(self->cb, 0, 0, &self->cf));
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->cf, 1, T(5)));
	/* The parent is idle. */
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
}

FIXTURE_TEARDOWN(fk)
{
	d3dq_cmdlist_destroy(self->l);
	d3dq_fence_destroy(self->s);
	util_env_close(&self->e);
	d3dq_device_close(self->cb);
}

/*
 * In the parent, once the child is gone: everything is as it was and
 * works; the registration made before the fork fires once; the
 * dispatcher sleeps (its CPU time over half a second of idleness).
 */
static void parent_checks(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fk) *self, pid_t pid)
{
	struct util_env *e = &self->e;
	char why[64];
	pid_t disp = self->disp;
	long before, after;
	int status;

	status = task_wait_child(pid, 20000);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child: %s", task_status_str(status, why, sizeof(why)));

	before = task_cpu_ticks(disp);
	task_sleep_ms(500);
	after = task_cpu_ticks(disp);
	TH_LOG("the dispatcher ran %ld ticks in 500 ms of idleness",
	       after - before);
	EXPECT_LE(after - before, 5);

	EXPECT_EQ(0, d3dq_device_removed_reason(e->dev));
	EXPECT_EQ(0, d3dq_device_removed_reason(self->cb));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(e->f));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->s));
	EXPECT_EQ(0, util_read64(e->buf, 0));
	ASSERT_EQ(0, d3dq_queue_execute(e->a, &self->l, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, 20000 * MS));
	EXPECT_EQ(0x77, util_read64(e->buf, 0));
	EXPECT_EQ(0, d3dq_queue_signal(e->b, self->s, 3));
	EXPECT_EQ(0, d3dq_fence_wait(self->s, 3, 20000 * MS));
	EXPECT_EQ(0, d3dq_fence_signal(e->f, 4));
	EXPECT_EQ(4, d3dq_fence_get_completed_value(e->f));

	EXPECT_EQ(0, atomic_load(&calls[5]));
	ASSERT_EQ(0, d3dq_fence_signal(self->cf, 1));
	EXPECT_TRUE(wait_calls(5, 1));
	/* A registration made after, flushed: T(5) came once. */
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(self->cf, 1, T(6)));
	EXPECT_TRUE(wait_calls(6, 1));
	EXPECT_EQ(1, atomic_load(&calls[5]));
}

#define CHECK(n, cond)		\
	do {			\
		if (!(cond))	\
			return n; \
	} while (0)

/* Every call on the parent's objects, refused. */
static int refused(FIXTURE_DATA(fk) *self)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct util_env *e = &self->e;
	struct d3dq_fence *fs[2] = { e->f, e->g }, *f;
	struct d3dq_cmdlist *l;
	struct d3dq_buffer *b;
	struct d3dq_queue *q;
	uint64_t vs[2] = { 1, 1 }, v;
	int efd = util_eventfd(), fd;

	CHECK(10, efd >= 0);
	CHECK(11, d3dq_fence_signal(e->f, 7) == -ENODEV);
	CHECK(12, d3dq_fence_wait(e->f, 7, 0) == -ENODEV);
	CHECK(13, d3dq_fence_wait(e->f, 7, D3DQ_TIMEOUT_INFINITE) == -ENODEV);
	CHECK(14, d3dq_fence_set_event_on_completion(e->f, 1, efd) == -ENODEV);
	CHECK(15, d3dq_fence_set_event_on_completion(e->f, 1, -1) == -ENODEV);
	CHECK(16, d3dq_device_set_event_on_multiple_fence_completion(
		      e->dev, fs, vs, 2, D3DQ_MULTIPLE_FENCE_WAIT_ALL, -1) ==
		  -ENODEV);
	CHECK(17, d3dq_fence_export(self->s, &fd) == -ENODEV);
	CHECK(18, d3dq_fence_set_token_on_completion(self->cf, 1, T(7)) ==
		  -ENODEV);
	CHECK(19, d3dq_queue_signal(e->a, e->f, 1) == -ENODEV);
	CHECK(20, d3dq_queue_wait(e->a, self->s, 1) == -ENODEV);
	CHECK(21, d3dq_queue_execute(e->a, &self->l, 1) == -ENODEV);
	CHECK(22, d3dq_cmdlist_reset(self->l) == -ENODEV);
	CHECK(23, d3dq_cmdlist_write64(self->l, e->buf, 0, 1) == -ENODEV);
	CHECK(24, d3dq_fence_create(e->dev, 0, 0, &f) == -ENODEV && !f);
	CHECK(25, d3dq_fence_import(e->dev, efd, &f) == -ENODEV && !f);
	CHECK(26, d3dq_queue_create(e->dev, &desc, &q) == -ENODEV && !q);
	CHECK(27, d3dq_buffer_create(e->dev, 4096, &b) == -ENODEV && !b);
	CHECK(28, d3dq_cmdlist_create(e->dev, &l) == -ENODEV && !l);
	CHECK(29, d3dq_device_get_timestamp_frequency(e->dev, &v) == -ENODEV);
	CHECK(30, d3dq_device_removed_reason(e->dev) == -ENODEV);
	CHECK(31, d3dq_device_remove(e->dev) == -ENODEV);
	CHECK(32, d3dq_device_removed_reason(self->cb) == -ENODEV);
	CHECK(33, !d3dq_buffer_map(e->buf));
	/* Values still read what the parent's fences hold. */
	CHECK(34, d3dq_fence_get_completed_value(e->f) == 0);
	close(efd);
	return 0;
}

/* The child's copies go; the parent's file is not the child's to keep. */
static int destroyed(FIXTURE_DATA(fk) *self)
{
	struct util_env *e = &self->e;

	d3dq_cmdlist_destroy(self->l);
	d3dq_fence_destroy(e->f);
	d3dq_fence_destroy(self->s);
	d3dq_queue_destroy(e->a);
	d3dq_buffer_destroy(e->buf);
	d3dq_device_close(e->dev);
	d3dq_fence_destroy(self->cf);
	d3dq_device_close(self->cb);
	CHECK(40, task_render_fds() == 0);
	return 0;
}

/* Devices of the child's own, plain and with a callback, work. */
static int own_devices(void)
{
	struct d3dq_device *dev = util_open(), *cb = open_cb();
	struct d3dq_fence *f, *cf;
	struct d3dq_queue *q;
	int i;

	CHECK(50, dev && cb);
	q = util_queue(dev);
	CHECK(51, q && !d3dq_fence_create(dev, 0, 0, &f));
	CHECK(52, !d3dq_queue_signal(q, f, 3));
	CHECK(53, !d3dq_fence_wait(f, 3, 20000 * MS));
	CHECK(54, !d3dq_fence_create(cb, 0, 0, &cf));
	CHECK(55, !d3dq_fence_set_token_on_completion(cf, 2, T(1)));
	CHECK(56, !d3dq_fence_signal(cf, 2));
	CHECK(57, wait_calls(1, 1));
	/* Returns, with the callbacks of its registrations called. */
	CHECK(58, !d3dq_fence_set_token_on_completion(cf, 3, T(2)));
	d3dq_device_close(cb);
	CHECK(59, atomic_load(&calls[2]) == 1);
	/* Its dispatcher ended (joined: the kernel may list it a while). */
	for (i = 0; i < 10000 && util_thread_count() != 1; i++)
		task_sleep_ms(1);
	CHECK(60, util_thread_count() == 1);
	d3dq_device_close(dev);
	/* Nothing of the parent's was called here. */
	CHECK(61, !atomic_load(&calls[5]) && !atomic_load(&calls[6]));
	return 0;
}

TEST_F_TIMEOUT(fk, child_refuses_the_parents_objects, 120)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(refused(self));
	parent_checks(_metadata, self, pid);
}

TEST_F_TIMEOUT(fk, child_destroys_its_copies, 120)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(destroyed(self));
	parent_checks(_metadata, self, pid);
}

/* ThreadSanitizer cannot follow a child that starts threads. */
#ifdef __SANITIZE_THREAD__
#define SKIP_UNDER_TSAN() \
	SKIP(return, "ThreadSanitizer: threads after a multi-threaded fork")
#else
#define SKIP_UNDER_TSAN() do { } while (0)
#endif

TEST_F_TIMEOUT(fk, child_opens_its_own_devices, 120)
{
	pid_t pid;

	SKIP_UNDER_TSAN();
	pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(own_devices());
	parent_checks(_metadata, self, pid);
}

/*
 * All three in one child, after a thread of the parent blocked in a
 * wait and another in a token registration's dispatcher: the child
 * forks while the parent's threads are in the library.
 */
struct blocked {
	struct d3dq_fence *f;
	_Atomic pid_t tid;
	int ret;
};

static void *block_main(void *arg)
{
	struct blocked *b = arg;

	atomic_store(&b->tid, task_self());
	b->ret = d3dq_fence_wait(b->f, 1, D3DQ_TIMEOUT_INFINITE);
	return NULL;
}

TEST_F_TIMEOUT(fk, fork_while_a_thread_waits, 120)
{
	struct blocked b = { .f = self->e.g, .ret = 1 };
	pthread_t t;
	pid_t pid;
	int ret;

	SKIP_UNDER_TSAN();
	ASSERT_EQ(0, pthread_create(&t, NULL, block_main, &b));
	while (!atomic_load(&b.tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&b.tid)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		ret = refused(self);
		if (!ret)
			ret = destroyed(self);
		if (!ret)
			ret = own_devices();
		_exit(ret);
	}
	/* The parent's wait is the parent's: released as ever. */
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&b.tid)));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	pthread_join(t, NULL);
	EXPECT_EQ(0, b.ret);
	parent_checks(_metadata, self, pid);
}

TEST_HARNESS_MAIN
