// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 39, items 2 and 4, under load, without holding any thread still:
 *
 * - close_races_woken_waiters: threads blocked in ALL, ANY and single
 *   waits (seen asleep in the driver) are released by the destruction of
 *   their fences, and the device is closed at once while they wake; a
 *   new device is opened right after. Every wait returns 0 and the new
 *   device's fences are whole. (An ALL wait crashed the process in the
 *   first round before the fix; ANY passed 200.)
 * - fork_under_load: threads signal, wait, submit and register tokens
 *   on a callback device while the main thread forks; each child is
 *   refused the parent's objects and opens devices of its own that work
 *   (its callbacks come, its closes return), whatever lock a parent's
 *   thread held at the fork. Every token of the parent is called once.
 *
 * Default scale: a few seconds of VM time. D3DQ_STRESS_ROUNDS sets the
 * rounds of the first (default 60), D3DQ_STRESS_FORKS the children of
 * the second (default 24).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

#define ALL D3DQ_MULTIPLE_FENCE_WAIT_ALL
#define ANY D3DQ_MULTIPLE_FENCE_WAIT_ANY

static int scale(const char *name, int def)
{
	const char *s = getenv(name);
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : def;
}

struct waiter {
	struct d3dq_device *dev;
	struct d3dq_fence *fs[3];
	uint64_t v[3];
	int kind;		/* 0 ALL, 1 ANY, 2 single */
	_Atomic pid_t tid;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->tid, task_self());
	if (w->kind == 2)
		w->ret = d3dq_fence_wait(w->fs[0], w->v[0],
					 D3DQ_TIMEOUT_INFINITE);
	else
		w->ret = d3dq_device_set_event_on_multiple_fence_completion(
			w->dev, w->fs, w->v, 3, w->kind ? ANY : ALL, -1);
	return NULL;
}

/* No state: a fixture for the time limit of TEST_F_TIMEOUT. */
FIXTURE(st) {
	int unused;
};

FIXTURE_SETUP(st)
{
}

FIXTURE_TEARDOWN(st)
{
}

TEST_F_TIMEOUT(st, close_races_woken_waiters, 600)
{
	int rounds = scale("D3DQ_STRESS_ROUNDS", 60), r, i, k, bad = 0;

	for (r = 0; r < rounds; r++) {
		struct d3dq_device *dev = util_open(), *other;
		struct d3dq_fence *fs[3], *of[3];
		struct waiter w[3];
		pthread_t t[3];

		if (!dev)
			SKIP(return, "no d3dq device");
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, d3dq_fence_create(dev, 0, (r + i) % 2 ?
						       D3DQ_FENCE_FLAG_SHARED :
						       0, &fs[i]));
		for (k = 0; k < 3; k++) {
			w[k] = (struct waiter){ .dev = dev, .kind = k,
						.ret = 1 };
			for (i = 0; i < 3; i++) {
				w[k].fs[i] = fs[i];
				w[k].v[i] = 10;
			}
			ASSERT_EQ(0, pthread_create(&t[k], NULL, waiter_main,
						    &w[k]));
		}
		for (k = 0; k < 3; k++) {
			while (!atomic_load(&w[k].tid))
				task_sleep_ms(1);
			ASSERT_TRUE(task_asleep_in_driver(
					    atomic_load(&w[k].tid)));
		}
		/* Half the rounds destroy first; close does it otherwise. */
		if (r % 2)
			for (i = 0; i < 3; i++)
				d3dq_fence_destroy(fs[i]);
		d3dq_device_close(dev);
		other = util_open();
		ASSERT_NE(NULL, other);
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, d3dq_fence_create(other, 0, 0, &of[i]));
		for (k = 0; k < 3; k++) {
			pthread_join(t[k], NULL);
			if (w[k].ret) {
				TH_LOG("round %d: wait %d returned %d", r, k,
				       w[k].ret);
				bad++;
			}
		}
		for (i = 0; i < 3; i++)
			if (d3dq_fence_signal(of[i], 5) ||
			    d3dq_fence_get_completed_value(of[i]) != 5) {
				TH_LOG("round %d: the new device's fence %d",
				       r, i);
				bad++;
			}
		d3dq_device_close(other);
		if (bad)
			break;
	}
	TH_LOG("%d rounds", r);
	EXPECT_EQ(0, bad);
}

/* --- fork under load ------------------------------------------------------- */

#define NTOK 4096

static _Atomic unsigned int calls[NTOK + 2];

static int callback(void *token, void *context)
{
	uintptr_t t = (uintptr_t)token;

	(void)context;
	if (t < NTOK + 2)
		atomic_fetch_add(&calls[t], 1);
	return 0;
}

struct load {
	struct util_env e;
	struct d3dq_device *cb;
	struct d3dq_fence *cf;
	atomic_bool stop;
	_Atomic unsigned int tokens;	/* registered */
	_Atomic int err;
};

static void *signaller(void *arg)
{
	struct load *l = arg;
	uint64_t i;

	for (i = 1; !atomic_load(&l->stop); i++)
		if (d3dq_fence_signal(l->e.f, i))
			atomic_store(&l->err, 1);
	return NULL;
}

static void *waiter(void *arg)
{
	struct load *l = arg;
	int ret;

	while (!atomic_load(&l->stop)) {
		ret = d3dq_fence_wait(l->e.f, d3dq_fence_get_completed_value(
					      l->e.f) + 1, 1 * MS);
		if (ret && ret != -ETIMEDOUT)
			atomic_store(&l->err, 2);
	}
	return NULL;
}

static void *submitter(void *arg)
{
	struct load *l = arg;
	uint64_t i;

	for (i = 1; !atomic_load(&l->stop); i++)
		if (d3dq_queue_signal(l->e.a, l->e.g, i) ||
		    d3dq_fence_wait(l->e.g, i, 20000 * MS))
			atomic_store(&l->err, 3);
	return NULL;
}

static void *registrar(void *arg)
{
	struct load *l = arg;
	unsigned int t;

	for (t = 1; t <= NTOK && !atomic_load(&l->stop); t++) {
		if (d3dq_fence_set_token_on_completion(l->cf, t,
						       (void *)(uintptr_t)t) ||
		    d3dq_fence_signal(l->cf, t))
			atomic_store(&l->err, 4);
		atomic_store(&l->tokens, t);
	}
	return NULL;
}

#define CHECK(n, cond)		\
	do {			\
		if (!(cond))	\
			return n; \
	} while (0)

static int child(struct load *l)
{
	struct d3dq_device *dev, *cb;
	struct d3dq_fence *f, *cf;
	struct d3dq_queue *q;
	int i;

	CHECK(10, d3dq_fence_signal(l->e.f, 1) == -ENODEV);
	CHECK(11, d3dq_queue_signal(l->e.a, l->e.g, 1) == -ENODEV);
	CHECK(12, d3dq_fence_set_token_on_completion(l->cf, 1, (void *)1) ==
		  -ENODEV);
	dev = util_open();
	cb = util_open_callback(NULL, callback, NULL);
	CHECK(20, dev && cb);
	q = util_queue(dev);
	CHECK(21, q && !d3dq_fence_create(dev, 0, 0, &f));
	CHECK(22, !d3dq_queue_signal(q, f, 2) && !d3dq_fence_wait(f, 2,
								  20000 * MS));
	CHECK(23, !d3dq_fence_create(cb, 0, 0, &cf));
	CHECK(24, !d3dq_fence_set_token_on_completion(
		      cf, 1, (void *)(uintptr_t)(NTOK + 1)));
	CHECK(25, !d3dq_fence_signal(cf, 1));
	for (i = 0; i < 10000 && !atomic_load(&calls[NTOK + 1]); i++)
		task_sleep_ms(1);
	CHECK(26, atomic_load(&calls[NTOK + 1]) == 1);
	d3dq_device_close(cb);
	d3dq_device_close(dev);
	d3dq_device_close(l->cb);
	d3dq_device_close(l->e.dev);
	CHECK(27, task_render_fds() == 0);
	return 0;
}

TEST_F_TIMEOUT(st, fork_under_load, 600)
{
	int forks = scale("D3DQ_STRESS_FORKS", 24), n, i, bad = 0;
	void *(*mains[])(void *) = { signaller, waiter, submitter, registrar };
	pthread_t t[4];
	struct load l;
	char why[64];
	unsigned int tokens;

#ifdef __SANITIZE_THREAD__
	/* Its children start threads, which it cannot follow. */
	SKIP(return, "ThreadSanitizer: threads after a multi-threaded fork");
#endif
	memset(&l, 0, sizeof(l));
	n = util_env_open(&l.e, 4096, 0, 0);
	if (n == -ENODEV)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, n);
	l.cb = util_open_callback(NULL, callback, NULL);
	ASSERT_NE(NULL, l.cb);
	ASSERT_EQ(0, d3dq_fence_create(l.cb, 0, 0, &l.cf));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, mains[i], &l));

	for (n = 0; n < forks; n++) {
		pid_t pid = fork();
		int status;

		ASSERT_LE(0, pid);
		if (!pid)
			_exit(child(&l));
		status = task_wait_child(pid, 30000);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("child %d: %s", n,
			       task_status_str(status, why, sizeof(why)));
			bad++;
		}
	}
	atomic_store(&l.stop, true);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, atomic_load(&l.err));
	EXPECT_EQ(0, bad);

	/* Every token registered was called once (flushed by T(NTOK)). */
	tokens = atomic_load(&l.tokens);
	ASSERT_EQ(0, d3dq_fence_set_token_on_completion(
			  l.cf, 0, (void *)(uintptr_t)NTOK));
	for (i = 0; i < 20000 && atomic_load(&calls[NTOK]) < 1; i++)
		task_sleep_ms(1);
	for (n = 1; n <= (int)tokens && n < NTOK; n++)
		if (atomic_load(&calls[n]) != 1) {
			TH_LOG("token %d called %u times", n,
			       atomic_load(&calls[n]));
			bad++;
			break;
		}
	EXPECT_EQ(0, bad);
	TH_LOG("%d children; %u tokens", forks, tokens);
	d3dq_device_close(l.cb);
	util_env_close(&l.e);
}

TEST_HARNESS_MAIN
