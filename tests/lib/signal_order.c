// SPDX-License-Identifier: GPL-2.0
/*
 * R4 and R18: a queue signal takes effect when its queue executes it,
 * after the work before it on that queue (and so after the signal that
 * satisfied a wait before it), and queue signals of one fence from
 * several queues take effect in the order they complete. Nothing is
 * discarded for having been called earlier than another signal, so
 * programs that queue consumers before producers on one fence finish,
 * as they do on Windows.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

/* A hang detector: a wait that is not over by then never will be. */
#define LONG (20000 * MS)

FIXTURE(o) {
	struct util_env e;
	struct d3dq_queue *c;
};

FIXTURE_VARIANT(o) {
	uint32_t flags;		/* of e.f */
};

FIXTURE_VARIANT_ADD(o, local) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(o, shared) {
	.flags = D3DQ_FENCE_FLAG_SHARED,
};

FIXTURE_SETUP(o)
{
	UTIL_ENV_OPEN(&self->e, 4096, 0, variant->flags);
	self->c = util_queue(self->e.dev);
	ASSERT_NE(NULL, self->c);
}

FIXTURE_TEARDOWN(o)
{
	d3dq_queue_destroy(self->c);
	util_env_close(&self->e);
}

/*
 * Queue a's DELAY of @ms, then its Signal(F, 10). The tests below need a
 * lower signal made after it to execute before it: each checks, right
 * before making that signal, that F is not 10 yet. A host slow enough to
 * run the calls between in longer than the DELAY (the debug kernel under
 * a loaded TCG) voids the case, and the test runs it again with a longer
 * DELAY (100, 300, 900 ms; the job timeout is 2 s).
 */
static int queue_ten(struct util_env *e, unsigned int ms)
{
	int ret = util_exec_delay(e->dev, e->a, ms * MS);

	return ret ? ret : d3dq_queue_signal(e->a, e->f, 10);
}

/* A case voided by a fast DELAY: wait for its end and start again. */
#define AGAIN(e, ms) do {						\
	ASSERT_GT(900, ms) TH_LOG("a's DELAY always ended too soon");	\
	TH_LOG("a's DELAY of %u ms ended before the calls after it", ms); \
	ASSERT_EQ(0, util_queue_idle((e)->dev, (e)->a));		\
	ASSERT_EQ(0, util_queue_idle((e)->dev, (e)->b));		\
	ASSERT_EQ(0, d3dq_fence_signal((e)->f, 0));			\
	ASSERT_EQ(0, d3dq_fence_signal((e)->done, 0));			\
} while (0)

/*
 * A pipeline queued consumers first, all on one fence: graphics waits
 * for compute, compute for copy, and copy is queued last. Each stage's
 * Signal runs after its Wait was satisfied, so F reaches 3.
 */
TEST_F(o, pipeline_queued_consumers_first)
{
	struct d3dq_queue *gx = self->e.a, *cs = self->e.b, *cp = self->c;
	struct d3dq_fence *f = self->e.f;
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_queue_wait(gx, f, 2));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, gx, self->e.buf, 16, 3));
	ASSERT_EQ(0, d3dq_queue_signal(gx, f, 3));
	ASSERT_EQ(0, d3dq_queue_wait(cs, f, 1));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, cs, self->e.buf, 8, 2));
	ASSERT_EQ(0, d3dq_queue_signal(cs, f, 2));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, cp, 20 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, cp, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(cp, f, 1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 3, efd));

	EXPECT_NE(0, util_event_wait(efd, 20000));
	EXPECT_EQ(3, d3dq_fence_get_completed_value(f));
	/* Work after each wait ran, and saw the stage before it done. */
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(2, util_read64(self->e.buf, 8));
	EXPECT_EQ(3, util_read64(self->e.buf, 16));
	close(efd);
}

/*
 * Q1.Wait(F,1); Q1.Signal(F,2); Q2.Signal(F,1): Q1's signal is held
 * behind a wait that Q2's satisfies, so it executes after it: F ends at
 * 2, never 1. On a shared fence Q2's signal is not refused for being
 * below Q1's earlier-called one either.
 */
TEST_F(o, held_signal_after_the_signal_releasing_it)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
}

/* The same with work on both queues: the signals have kernel points. */
TEST_F(o, held_signal_after_busy_release)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 2));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 50 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 2, LONG));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(2, util_read64(self->e.buf, 0));
}

/*
 * Q1 signals 5 after work that starts only once g is signalled; idle Q2
 * then signals 3, which executes almost at once (R3): F reads 3, then
 * Q1's 5 takes effect when its work completes, the last one executed.
 * The gate keeps Q1's signal from completing first however slow Q2's is.
 */
TEST_F(o, last_completed_wins)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 50 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 3));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 3, LONG));
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 5, LONG));
	/* Nothing in flight or held is left to change it. */
	ASSERT_TRUE(task_gpu_idle());
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * A wait for a value only a signal called before a lower one brings is
 * satisfied when that signal executes (R18), even if the lower one
 * executed first: a's 10 is called first, c's 3 executes first.
 */
TEST_F(o, earlier_called_signal_satisfies_waits)
{
	unsigned int ms;

	for (ms = 100;; ms *= 3) {
		ASSERT_EQ(0, queue_ten(&self->e, ms));
		if (d3dq_fence_get_completed_value(self->e.f) != 10)
			break;
		AGAIN(&self->e, ms);
	}
	ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.f, 3));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf, 16, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	EXPECT_EQ(1, util_read64(self->e.buf, 16));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * A wait queued before the lower signal: it relies on a's pending 10,
 * and c's 3, called later and executed first, discards nothing.
 */
TEST_F(o, relied_on_signal_takes_effect)
{
	int efd = util_eventfd();
	unsigned int ms;

	ASSERT_GE(efd, 0);
	for (ms = 100;; ms *= 3) {
		util_event_take(efd);
		ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10,
								efd));
		ASSERT_EQ(0, queue_ten(&self->e, ms));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
		ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b,
					       self->e.buf, 16, 1));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
		if (d3dq_fence_get_completed_value(self->e.f) != 10)
			break;
		AGAIN(&self->e, ms);
	}
	ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.f, 3));

	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	EXPECT_EQ(1, util_read64(self->e.buf, 16));
	EXPECT_NE(0, util_event_wait(efd, 20000));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
	close(efd);
}

/*
 * A signal held behind a wait and called before another queue's signal
 * executes after it once released: b's 7, released after a's 5 took
 * effect, is the value F ends with.
 */
TEST_F(o, released_signal_executes_last)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 7));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 5, LONG));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
}

/* A CPU signal in between discards no pending queue signal either. */
TEST_F(o, cpu_signal_discards_nothing)
{
	unsigned int ms;

	for (ms = 100;; ms *= 3) {
		ASSERT_EQ(0, queue_ten(&self->e, ms));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
		if (d3dq_fence_get_completed_value(self->e.f) != 10)
			break;
		AGAIN(&self->e, ms);
	}
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 2));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * Queue signals of a fence nobody read, completed a while ago: whatever
 * looks at the fence next sees them as having taken effect then, before
 * it. A CPU signal made now overwrites them (R2, R4), so does an idle
 * queue's signal made now, and an event registered now fires during the
 * call (R10, R17). Nothing waits for the first queue's work: the test
 * reads the kernel's fdinfo until no job is in flight (a wait for its
 * point would apply it).
 */
TEST_F(o, unobserved_completion_then_cpu_signal)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 7));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	/* A call that looks at the kernel's value applies nothing older. */
	EXPECT_EQ(0, d3dq_fence_wait(self->e.f, 7, 0));
	EXPECT_EQ(-ETIMEDOUT, d3dq_fence_wait(self->e.f, 8, 0));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
}

TEST_F(o, unobserved_completion_then_queue_signal)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 3));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	ASSERT_TRUE(task_gpu_idle());
	/* b's 3 completed last: shared or not (R20), the value is 3. */
	EXPECT_EQ(3, d3dq_fence_get_completed_value(self->e.f));
}

TEST_F(o, unobserved_completion_then_events)
{
	struct d3dq_fence *fs[2] = { self->e.f, self->e.g };
	uint64_t vs[2] = { 5, 6 };
	int efd = util_eventfd(), efd2 = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_GE(efd2, 0);
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 6));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->e.dev, fs, vs, 2, D3DQ_MULTIPLE_FENCE_WAIT_ALL,
			efd2));
	EXPECT_EQ(1, util_event_take(efd2));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 5, efd));
	EXPECT_EQ(1, util_event_take(efd));
	close(efd);
	close(efd2);
}

/* A wait with no time to wait is a read: it sees what completed. */
TEST_F(o, unobserved_completion_then_zero_timeout_wait)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_TRUE(task_fdinfo_is("d3dq-jobs-in-flight", 0));
	EXPECT_EQ(0, d3dq_fence_wait(self->e.f, 5, 0));
}

/*
 * The signal-order chain, three queues: a waits for the odd values and
 * signals the even ones, b signals the odd ones and waits for the even
 * ones, c waits for the last; a's program is queued first, so each of
 * its signals is called before the signal of b that releases it. A wait
 * for 10 returns every time.
 */
TEST_F(o, signal_order_chain)
{
	struct d3dq_fence *f = self->e.f;
	uint64_t v;
	int round;

	for (round = 1; round <= 64; round++) {
		for (v = 1; v <= 9; v += 2) {
			ASSERT_EQ(0, d3dq_queue_wait(self->e.a, f, v));
			ASSERT_EQ(0, d3dq_queue_signal(self->e.a, f, v + 1));
		}
		for (v = 1; v <= 9; v += 2) {
			ASSERT_EQ(0, d3dq_queue_signal(self->e.b, f, v));
			ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, v + 1));
		}
		ASSERT_EQ(0, d3dq_queue_wait(self->c, f, 10));
		ASSERT_EQ(0, d3dq_queue_signal(self->c, self->e.done, round));
		ASSERT_EQ(0, d3dq_fence_wait(f, 10, LONG))
			TH_LOG("round %d: F stuck at %llu", round,
			       (unsigned long long)
			       d3dq_fence_get_completed_value(f));
		ASSERT_EQ(0, d3dq_fence_wait(self->e.done, round, LONG));
		ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
		ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
		ASSERT_EQ(10, d3dq_fence_get_completed_value(f));
		/* Next round from 0: a shared fence cannot go back. */
		if (variant->flags & D3DQ_FENCE_FLAG_SHARED)
			break;
		ASSERT_EQ(0, d3dq_fence_signal(f, 0));
	}
}

struct rewinder {
	struct d3dq_fence *f;
	_Atomic bool stop;
	_Atomic unsigned long rewinds;
};

/*
 * Until told to stop: not until g reads 512, which it may do only for a
 * moment (a's last signal of g, 511, may complete after b's 512).
 */
static void *rewind_main(void *arg)
{
	struct rewinder *r = arg;

	while (!atomic_load(&r->stop)) {
		d3dq_fence_signal(r->f, 0);
		atomic_fetch_add(&r->rewinds, 1);
		usleep(100);
	}
	return NULL;
}

/*
 * Ping-pong, 256 rounds: a and b alternate Wait and Signal on one local
 * fence (a shared one is not rewound by CPU signals yet), b's program
 * queued before a's, a's behind a gate, so that every wait is queued
 * before any value; a CPU thread meanwhile keeps rewinding the fence to
 * 0. Satisfied waits stay satisfied (R6), each signal executes after the
 * wait before it (R4): both queues finish and the second fence,
 * signalled after every step, reaches 512 (and may end at 511: a's last
 * signal of it can complete after b's). A few seconds in the VM; the
 * harness's timeout leaves the 60 s wait room to say where it stuck.
 */
FIXTURE(local) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(local, 4096, 0, 0)

TEST_F_TIMEOUT(local, ping_pong_with_rewinds, 120)
{
	struct d3dq_fence *f = self->e.f, *g = self->e.g;
	struct rewinder r = { .f = f };
	pthread_t th;
	uint64_t i;
	/* b: wait 2i+1, signal 2i+2. */
	for (i = 0; i < 256; i++) {
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 2 * i + 1));
		ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b,
					       self->e.buf, 8, 2 * i + 2));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, f, 2 * i + 2));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, g, 2 * i + 2));
	}
	/* a, behind the gate: signal 1, then wait 2i, signal 2i+1. */
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.done, 1));
	for (i = 0; i < 256; i++) {
		if (i)
			ASSERT_EQ(0, d3dq_queue_wait(self->e.a, f, 2 * i));
		ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a,
					       self->e.buf, 0, 2 * i + 1));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, f, 2 * i + 1));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, g, 2 * i + 1));
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, rewind_main, &r));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.done, 1));

	EXPECT_EQ(0, d3dq_fence_wait(g, 512, 60000 * MS))
		TH_LOG("stuck at %llu after %lu rewinds",
		       (unsigned long long)d3dq_fence_get_completed_value(g),
		       atomic_load(&r.rewinds));
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(511, util_read64(self->e.buf, 0));
	EXPECT_EQ(512, util_read64(self->e.buf, 8));
}

/*
 * R20: a queue signal lowers a shared fence as it lowers any fence, when
 * its work completes (issue 25 withdrew the "timeline only grows" rule).
 */
FIXTURE(shared) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(shared, 4096, 0, D3DQ_FENCE_FLAG_SHARED)

TEST_F(shared, lower_queue_signal_takes_effect)
{
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 100 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 7));
	/* Almost at once (R3), and before a's 10, which g holds back. */
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 7, LONG));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 10, LONG));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 4));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, LONG));
	EXPECT_EQ(4, d3dq_fence_get_completed_value(self->e.f));
}

TEST_HARNESS_MAIN
