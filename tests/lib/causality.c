// SPDX-License-Identifier: GPL-2.0
/*
 * R17: whoever observes a value produced by a queue signal also observes
 * every signal that signal depended on, through queue order and satisfied
 * waits, transitively. The scenario of issue 10: queue X signals F=9,
 * then after long work F=10; the CPU waits for 9 and rewinds F to 0;
 * queue Y waits for F>=9 (only X's pending 10 can satisfy it) and signals
 * G=1. Whoever sees G=1 must see F=10.
 *
 * The race is made likely, not certain: Y's queue is created before X's
 * (the old worker applied queues in creation order), an observer thread
 * reads G then F in a loop while the main thread blocks on G, and the
 * scenario runs 20 times. X's long work is a 400 ms DELAY; a round in
 * which it ended before the CPU rewound F (a very slow machine) observes
 * nothing and says so.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <poll.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define ROUNDS 20

FIXTURE(c) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(c, 4096, 0, 0)

struct observer {
	struct d3dq_fence *f, *g;
	_Atomic bool stop;
	uint64_t seen_f;		/* F when G was first seen at 1 */
	bool saw_g;
};

static void *observe(void *arg)
{
	struct observer *o = arg;

	while (!atomic_load(&o->stop)) {
		if (d3dq_fence_get_completed_value(o->g) >= 1) {
			o->seen_f = d3dq_fence_get_completed_value(o->f);
			o->saw_g = true;
			break;
		}
	}
	return NULL;
}

/*
 * One round: X = queue b (created second), Y = queue a. Fills in the
 * value of F seen by each observer once G reached 1. Returns 1 (nothing
 * observed) if X's work had already ended when F was about to be
 * rewound.
 */
static int round_once(struct util_env *e, struct d3dq_fence *f,
		      struct d3dq_fence *g, int efd, uint64_t seen[3])
{
	struct observer o = { .f = f, .g = g };
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	pthread_t t;
	int ret;

	ret = d3dq_queue_signal(e->b, f, 9);
	if (!ret)
		ret = util_exec_delay(e->dev, e->b, 400 * MS);
	if (!ret)
		ret = d3dq_queue_signal(e->b, f, 10);
	if (!ret)
		ret = d3dq_fence_wait(f, 9, 20000 * MS);
	/* X's long work must still run when F is rewound. */
	if (!ret && d3dq_fence_get_completed_value(f) != 9)
		return 1;
	if (!ret)
		ret = d3dq_fence_signal(f, 0);
	if (!ret)
		ret = d3dq_fence_set_event_on_completion(g, 1, efd);
	if (ret)
		return ret;
	if (pthread_create(&t, NULL, observe, &o))
		return -EAGAIN;
	ret = d3dq_queue_wait(e->a, f, 9);
	if (!ret)
		ret = d3dq_queue_signal(e->a, g, 1);
	if (!ret)
		ret = d3dq_fence_wait(g, 1, 20000 * MS);
	seen[0] = d3dq_fence_get_completed_value(f);
	if (!ret && poll(&pfd, 1, 20000) == 1)
		seen[1] = d3dq_fence_get_completed_value(f);
	atomic_store(&o.stop, true);
	pthread_join(t, NULL);
	seen[2] = o.saw_g ? o.seen_f : 10;
	util_event_take(efd);
	return ret;
}

TEST_F_TIMEOUT(c, dependent_value_seen_after_its_cause, 300)
{
	int i, ret, efd = util_eventfd(), bad = 0;

	ASSERT_GE(efd, 0);
	for (i = 0; i < ROUNDS; i++) {
		struct d3dq_fence *f, *g;
		uint64_t seen[3] = { 0, 0, 0 };

		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
		ret = round_once(&self->e, f, g, efd, seen);
		if (ret == 1)
			TH_LOG("round %d: the machine was too slow", i);
		else
			ASSERT_EQ(0, ret);
		if (!ret && (seen[0] != 10 || seen[1] != 10 || seen[2] != 10)) {
			TH_LOG("round %d: F=%llu after the wait, %llu after the event, %llu by the observer",
			       i, (unsigned long long)seen[0],
			       (unsigned long long)seen[1],
			       (unsigned long long)seen[2]);
			bad++;
		}
		ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
		ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
		d3dq_fence_destroy(f);
		d3dq_fence_destroy(g);
	}
	EXPECT_EQ(0, bad);
	close(efd);
}

/*
 * Transitively: X signals F after long work; Y waits for F and signals
 * G; Z waits for G and signals H. Whoever sees H sees G and F.
 */
TEST_F_TIMEOUT(c, transitive, 300)
{
	struct d3dq_queue *z = util_queue(self->e.dev);
	int i, bad = 0;

	ASSERT_NE(NULL, z);
	for (i = 0; i < ROUNDS; i++) {
		struct d3dq_fence *f, *g, *h;
		uint64_t vf, vg;

		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &h));
		/* Creation order a, b, z: the waiters come first. */
		ASSERT_EQ(0, util_exec_delay(self->e.dev, z, 30 * MS));
		ASSERT_EQ(0, d3dq_queue_signal(z, f, 5));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 5));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, g, 6));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.a, g, 6));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, h, 7));
		ASSERT_EQ(0, d3dq_fence_wait(h, 7, 20000 * MS));
		vg = d3dq_fence_get_completed_value(g);
		vf = d3dq_fence_get_completed_value(f);
		if (vg != 6 || vf != 5) {
			TH_LOG("round %d: H=7 seen with G=%llu, F=%llu", i,
			       (unsigned long long)vg, (unsigned long long)vf);
			bad++;
		}
		d3dq_fence_destroy(f);
		d3dq_fence_destroy(g);
		d3dq_fence_destroy(h);
	}
	EXPECT_EQ(0, bad);
	d3dq_queue_destroy(z);
}

TEST_HARNESS_MAIN
