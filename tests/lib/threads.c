// SPDX-License-Identifier: GPL-2.0
/*
 * R16: several threads using one queue. Calls on one queue are
 * serialised in call order, whichever threads make them: every job runs
 * once, each thread's jobs run in the order it made them, and a job whose
 * call returned before another call began runs before that call's job,
 * also across threads. R5, R8: work after a queue wait runs after the
 * satisfying CPU signal and sees what the CPU wrote before it.
 *
 * The queue's work records its own order: each job copies the number of
 * the job that ran before it on the queue (the buffer's "last" word) into
 * its log entry, then writes its own number there, so the log is the
 * chain of the queue's execution order as the engine ran it. Each job
 * also copies the gate's epoch, a word the main thread writes before each
 * CPU signal of the gate. Every call is bracketed by two tickets of one
 * global counter, taken before it starts and after it returns.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define THREADS 6
#define ROUNDS 40
#define JOBS (THREADS * ROUNDS)
/* Buffer: last (0), epoch (8), then 16 bytes per job: previous, epoch. */
#define LAST 0
#define EPOCH 8
#define LOG(id) (16 + (uint64_t)(id) * 16)
#define BUF_SIZE LOG(JOBS + 1)

struct job {
	uint64_t start, end;	/* tickets around the call */
	uint64_t gate;		/* the gate value this thread waited for */
};

struct shared {
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	struct d3dq_buffer *buf;
	struct d3dq_fence *fence[THREADS];
	struct d3dq_fence *gate;
	_Atomic uint64_t ticket;
	_Atomic int waited[THREADS];	/* last gate value each thread queued */
	pthread_barrier_t go;
	struct job job[JOBS + 1];	/* by job number, 1 .. JOBS */
};

struct ctx {
	struct shared *s;
	int index;
	int err;
};

/* Job @id: log the job before it and the epoch, then name itself last. */
static int exec_logged(struct shared *s, uint64_t id)
{
	struct d3dq_cmdlist *l;
	int ret = d3dq_cmdlist_create(s->dev, &l);

	if (ret)
		return ret;
	ret = d3dq_cmdlist_copy(l, s->buf, LOG(id), s->buf, LAST, 8);
	if (!ret)
		ret = d3dq_cmdlist_copy(l, s->buf, LOG(id) + 8, s->buf, EPOCH, 8);
	if (!ret)
		ret = d3dq_cmdlist_write64(l, s->buf, LAST, id);
	if (!ret)
		ret = d3dq_cmdlist_close(l);
	if (!ret) {
		s->job[id].start = atomic_fetch_add(&s->ticket, 1);
		ret = d3dq_queue_execute(s->q, &l, 1);
		s->job[id].end = atomic_fetch_add(&s->ticket, 1);
	}
	d3dq_cmdlist_destroy(l);
	return ret;
}

static void *worker(void *arg)
{
	struct ctx *c = arg;
	struct shared *s = c->s;
	uint64_t gate = 0;
	int i, ret = 0;

	pthread_barrier_wait(&s->go);
	for (i = 0; i < ROUNDS && !ret; i++) {
		uint64_t id = (uint64_t)c->index * ROUNDS + i + 1;

		s->job[id].gate = gate;
		ret = exec_logged(s, id);
		if (!ret)
			ret = d3dq_queue_signal(s->q, s->fence[c->index], i + 1);
		/* Some waits hold the queue back for everyone. */
		if (!ret && i % 10 == 5) {
			ret = d3dq_queue_wait(s->q, s->gate, i);
			gate = i;
			atomic_store(&s->waited[c->index], i);
		}
		/* Let the other threads in between calls. */
		sched_yield();
	}
	if (ret)
		atomic_store(&s->waited[c->index], ROUNDS);
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
	struct shared *s = calloc(1, sizeof(*s));
	struct ctx c[THREADS];
	pthread_t t[THREADS];
	uint64_t *order = calloc(JOBS + 1, sizeof(*order));
	uint64_t *pos = calloc(JOBS + 1, sizeof(*pos));
	uint64_t id, prev, n, bad = 0;
	int i, j, k;

	ASSERT_TRUE(s && order && pos);
	s->dev = util_open();
	if (!s->dev)
		SKIP(return, "no d3dq device");
	s->q = util_queue(s->dev);
	ASSERT_NE(NULL, s->q);
	ASSERT_EQ(0, d3dq_buffer_create(s->dev, BUF_SIZE, &s->buf));
	ASSERT_EQ(0, d3dq_fence_create(s->dev, 0, 0, &s->gate));
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, d3dq_fence_create(s->dev, 0, 0, &s->fence[i]));
	ASSERT_EQ(0, pthread_barrier_init(&s->go, NULL, THREADS));
	for (i = 0; i < THREADS; i++) {
		c[i] = (struct ctx){ .s = s, .index = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker, &c[i]));
	}
	/*
	 * Open the gate step by step while the threads queue work; a value
	 * some thread waits for is signalled only once every thread queued
	 * its wait for it, so those waits are made before their signal.
	 */
	for (i = 0; i <= ROUNDS; i += 5) {
		for (j = 0; j < THREADS; j++)
			while (i % 10 == 5 && atomic_load(&s->waited[j]) < i)
				util_sleep_ms(1);
		*(volatile uint64_t *)((char *)d3dq_buffer_map(s->buf) +
				       EPOCH) = i;
		ASSERT_EQ(0, d3dq_fence_signal(s->gate, i));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, c[i].err);
	}
	ASSERT_EQ(0, util_queue_idle(s->dev, s->q));
	for (i = 0; i < THREADS; i++)
		EXPECT_EQ(ROUNDS, d3dq_fence_get_completed_value(s->fence[i]));

	/* Walk the chain back from the last job: the execution order. */
	id = util_read64(s->buf, LAST);
	for (n = JOBS; n > 0 && id >= 1 && id <= JOBS && !pos[id]; n--) {
		pos[id] = n;
		order[n] = id;
		id = util_read64(s->buf, LOG(id));
	}
	/* Every job ran, once, and the first one ran first (after 0). */
	EXPECT_EQ(0, n);
	EXPECT_EQ(0, id);
	ASSERT_EQ(0, n);

	for (n = 1; n <= JOBS; n++) {
		const struct job *x = &s->job[order[n]];
		uint64_t epoch = util_read64(s->buf, LOG(order[n]) + 8);

		/* R5, R8: the job after a wait saw the gate's epoch. */
		if (epoch < x->gate) {
			TH_LOG("job %llu ran with epoch %llu after a wait for %llu",
			       (unsigned long long)order[n],
			       (unsigned long long)epoch,
			       (unsigned long long)x->gate);
			bad++;
		}
	}
	/*
	 * R16: a job whose call returned before another's began ran first,
	 * whichever threads made them (a thread's own jobs included).
	 */
	for (i = 1; i <= JOBS; i++)
		for (k = 1; k <= JOBS; k++) {
			if (s->job[i].end >= s->job[k].start ||
			    pos[i] < pos[k])
				continue;
			if (bad++ < 10)
				TH_LOG("job %d (thread %d, call returned at %llu) ran after job %d (thread %d, called at %llu)",
				       i, (i - 1) / ROUNDS,
				       (unsigned long long)s->job[i].end, k,
				       (k - 1) / ROUNDS,
				       (unsigned long long)s->job[k].start);
		}
	EXPECT_EQ(0, bad);
	/* The threads' calls did overlap: the order was not trivially one's. */
	prev = 0;
	for (n = 2; n <= JOBS; n++)
		prev += (order[n] - 1) / ROUNDS != (order[n - 1] - 1) / ROUNDS;
	TH_LOG("%llu switches between threads in %d jobs",
	       (unsigned long long)prev, JOBS);

	for (i = 0; i < THREADS; i++)
		d3dq_fence_destroy(s->fence[i]);
	d3dq_fence_destroy(s->gate);
	d3dq_buffer_destroy(s->buf);
	d3dq_queue_destroy(s->q);
	d3dq_device_close(s->dev);
	pthread_barrier_destroy(&s->go);
	free(pos);
	free(order);
	free(s);
}

TEST_HARNESS_MAIN
