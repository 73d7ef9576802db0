// SPDX-License-Identifier: GPL-2.0
/*
 * R16: several threads using one queue. Each thread's operations run in
 * the order it made them and every operation runs once, with waits and
 * signals of other threads mixed in.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define THREADS 6
#define ROUNDS 40

struct ctx {
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_buffer *buf;
	struct d3dq_fence *fence[THREADS];
	struct d3dq_fence *gate;
	int index;
	int err;
};

static void *worker(void *arg)
{
	struct ctx *c = arg;
	uint64_t slot = (uint64_t)c->index * ROUNDS * 8;
	int i, ret = 0;

	for (i = 0; i < ROUNDS && !ret; i++) {
		ret = util_exec_timestamp(c->dev, c->q, c->buf, slot + i * 8);
		if (!ret)
			ret = d3dq_queue_signal(c->q, c->fence[c->index], i + 1);
		/* Some waits hold the queue back for everyone. */
		if (!ret && i % 10 == 5)
			ret = d3dq_queue_wait(c->q, c->gate, i);
	}
	c->err = ret;
	return NULL;
}

FIXTURE(t) {
	int unused;
};

FIXTURE_SETUP(t)
{
}

FIXTURE_TEARDOWN(t)
{
}

TEST_F_TIMEOUT(t, many_threads_one_queue, 120)
{
	struct ctx base = { 0 }, c[THREADS];
	pthread_t t[THREADS];
	uint64_t prev;
	int i, j;

	base.dev = util_open();
	if (!base.dev)
		SKIP(return, "no d3dq device");
	base.q = util_queue(base.dev);
	ASSERT_NE(NULL, base.q);
	ASSERT_EQ(0, d3dq_buffer_create(base.dev, THREADS * ROUNDS * 8,
					&base.buf));
	ASSERT_EQ(0, d3dq_fence_create(base.dev, 0, 0, &base.gate));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, d3dq_fence_create(base.dev, 0, 0, &base.fence[i]));
	for (i = 0; i < THREADS; i++) {
		c[i] = base;
		c[i].index = i;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker, &c[i]));
	}
	/* Open the gate step by step while the threads queue work. */
	for (i = 0; i <= ROUNDS; i += 5) {
		util_sleep_ms(20);
		ASSERT_EQ(0, d3dq_fence_signal(base.gate, i));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, c[i].err);
	}
	ASSERT_EQ(0, util_queue_idle(base.dev, base.q));
	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ(ROUNDS, d3dq_fence_get_completed_value(base.fence[i]));
		prev = 0;
		for (j = 0; j < ROUNDS; j++) {
			uint64_t ts = util_read64(base.buf,
						  (i * ROUNDS + j) * 8);

			EXPECT_NE(0, ts);
			EXPECT_GE(ts, prev);
			prev = ts;
		}
	}
	for (i = 0; i < THREADS; i++)
		d3dq_fence_destroy(base.fence[i]);
	d3dq_fence_destroy(base.gate);
	d3dq_buffer_destroy(base.buf);
	d3dq_queue_destroy(base.q);
	d3dq_device_close(base.dev);
}

TEST_HARNESS_MAIN
