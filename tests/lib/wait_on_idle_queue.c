// SPDX-License-Identifier: GPL-2.0
/*
 * A queue wait may rely on a queue signal of another queue that has not
 * submitted any job yet: that signal takes effect at once (nothing comes
 * before it on its queue), so the wait must return 0 like any other.
 *
 * Found by the reference model's checker (tests/model, 6.1, model-long):
 * d3dq_queue_wait() returned -ENODATA. record_signal() links the signal
 * of an idle queue to the fence's pending list with point 0 (the queue's
 * last submitted point) before the applier applies it; a wait on another
 * thread that picks it in between hands the kernel a wait on point 0 of
 * a timeline that has no fence there, which SUBMIT refuses (-ENODATA).
 *
 * The window is a few instructions: queue a only ever signals (its last
 * point stays 0) while the main thread waits on queue b for each value
 * as it is signalled, for ROUNDS values or SECONDS.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define ROUNDS 200000
#define SECONDS 20

FIXTURE(w) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(w, 4096, 0, 0)

struct signaller {
	struct d3dq_queue *q;
	struct d3dq_fence *f;
	_Atomic uint64_t next;		/* the value to signal next */
	_Atomic bool stop;
	_Atomic int err;		/* read by the waiting thread as it runs */
};

static void *signal_loop(void *arg)
{
	struct signaller *s = arg;
	uint64_t v;
	int err;

	while (!atomic_load(&s->stop) && (v = atomic_load(&s->next)) <= ROUNDS) {
		err = d3dq_queue_signal(s->q, s->f, v);
		if (err) {
			atomic_store(&s->err, err);
			break;
		}
		atomic_store(&s->next, v + 1);
	}
	return NULL;
}

TEST_F(w, wait_on_a_signal_of_an_idle_queue)
{
	struct signaller s = { .q = self->e.a, .f = self->e.f };
	struct timespec t0, t;
	uint64_t v = 1, last = 0, errors = 0;
	int ret, first = 0;
	pthread_t th;

	atomic_init(&s.next, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, pthread_create(&th, NULL, signal_loop, &s));
	while (v <= ROUNDS) {
		/*
		 * The value being signalled now, or the next one; one wait
		 * each: more would only pile up held jobs on b while the
		 * signaller is descheduled, up to the limit (-ENOSPC).
		 */
		v = atomic_load(&s.next);
		ret = v == last ? 0 : d3dq_queue_wait(self->e.b, self->e.f, v);
		last = v;
		if (ret) {
			errors++;
			if (!first)
				first = ret;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= SECONDS || atomic_load(&s.err))
			break;
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	ASSERT_EQ(0, atomic_load(&s.err));
	TH_LOG("%llu waits failed (first: %d), up to value %llu",
	       (unsigned long long)errors, first, (unsigned long long)v);
	EXPECT_EQ(0, errors);
	/* The queue still works: its last wait is satisfied. */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, UINT64_MAX));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 1, 10000 * MS));
}

TEST_HARNESS_MAIN
