// SPDX-License-Identifier: GPL-2.0
/*
 * D3D12 objects are free-threaded (R16, issue 39): many threads use one
 * queue, one another's fences and one buffer at once, through d3d12.h:
 * ExecuteCommandLists, queue Wait and Signal, CPU Signal,
 * GetCompletedValue, SetEventOnCompletion (blocking and with events),
 * SetEventOnMultipleFenceCompletion, AddRef and Release. Every result is
 * checked: each thread's work ran and its writes are visible after its
 * fence (R8), no signal is lost (every fence ends at its last value and
 * every event registered fires exactly once), no observer sees a fence go
 * back (no fence here is ever rewound), and every reference count ends
 * where it began; the last of many concurrent Releases frees the object,
 * exactly once.
 *
 * D3DQ_STRESS_SCALE=n (make stress-long sets 20) runs n times the rounds.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#define THREADS 8
#define ROUNDS 40

static int scale(void)
{
	const char *s = getenv("D3DQ_STRESS_SCALE");
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : 1;
}

struct shared {
	ID3D12Device1 *dev;
	ID3D12CommandQueue *q;
	ID3D12Fence *done[THREADS];	/* queue signals: round r brings r + 1 */
	ID3D12Fence *go[THREADS];	/* CPU signals: round r brings r + 1 */
	ID3D12Resource *rb;
	volatile UINT32 *map;		/* THREADS x rounds words */
	int rounds;
	pthread_barrier_t start;
};

struct worker {
	struct shared *s;
	int index;
	int ev;			/* events of the next thread's fence */
	int failed;		/* the first failed step, 0 if none */
	int registered;		/* events registered on ev */
	UINT64 seen[THREADS];	/* last value read of each done fence */
};

/* A failed step also lets the other threads' work go on. */
#define STEP(n, cond)						\
	do {							\
		if (!(cond)) {					\
			w->failed = (n);			\
			ID3D12Fence_Signal(s->go[t], UINT64_MAX);	\
			return NULL;				\
		}						\
	} while (0)

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	int t = w->index, next = (t + 1) % THREADS, r, u;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *list;
	ID3D12Fence *both[2];
	UINT64 values[2];
	int own = u_event();

	STEP(1, own >= 0);
	STEP(2, u_list(s->dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc, &list));
	STEP(3, SUCCEEDED(ID3D12GraphicsCommandList2_Close(list)));
	pthread_barrier_wait(&s->start);
	for (r = 0; r < s->rounds; r++) {
		ID3D12CommandQueue *q = s->q;
		ID3D12Fence *mine = s->done[t];
		UINT64 v;

		/* This round's references of the shared objects. */
		ID3D12CommandQueue_AddRef(q);
		ID3D12Fence_AddRef(s->done[next]);

		/*
		 * The last round's work is done (a blocking wait, an event
		 * or both fences at once), so the allocator may be reset,
		 * and its write is visible.
		 */
		if (r % 3 == 0) {
			STEP(10, u_wait(mine, r) == S_OK);
		} else if (r % 3 == 1) {
			STEP(11, ID3D12Fence_SetEventOnCompletion(
					 mine, r, u_handle(own)) == S_OK);
			STEP(12, u_event_wait(own, 20000) == 1);
		} else {
			both[0] = mine;
			both[1] = s->go[t];
			values[0] = values[1] = r;
			STEP(13, ID3D12Device1_SetEventOnMultipleFenceCompletion(
					 s->dev, both, values, 2,
					 D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL,
					 NULL) == S_OK);
		}
		STEP(14, ID3D12Fence_GetCompletedValue(mine) == (UINT64)r);
		STEP(15, !r || s->map[t * s->rounds + r - 1] == (UINT32)r);
		STEP(16, ID3D12CommandAllocator_Reset(alloc) == S_OK);
		STEP(17, ID3D12GraphicsCommandList2_Reset(list, alloc, NULL) ==
			 S_OK);
		u_write32(list, s->rb, (UINT64)(t * s->rounds + r) * 4, r + 1);

		/*
		 * Held behind this thread's CPU fence until this thread
		 * signals it below: every thread's work waits meanwhile.
		 */
		STEP(20, ID3D12CommandQueue_Wait(q, s->go[t], r + 1) == S_OK);
		STEP(21, u_execute(q, list) == S_OK);
		STEP(22, ID3D12CommandQueue_Signal(q, mine, r + 1) == S_OK);
		sched_yield();
		STEP(23, ID3D12Fence_Signal(s->go[t], r + 1) == S_OK);

		/* An event on the next thread's fence: fires exactly once. */
		STEP(24, ID3D12Fence_SetEventOnCompletion(
				 s->done[next], r + 1, u_handle(w->ev)) == S_OK);
		w->registered++;

		/* Nobody rewinds: no fence is ever seen going back. */
		for (u = 0; u < THREADS; u++) {
			v = ID3D12Fence_GetCompletedValue(s->done[u]);
			STEP(25, v >= w->seen[u] && v <= (UINT64)s->rounds);
			w->seen[u] = v;
		}
		ID3D12Fence_Release(s->done[next]);
		ID3D12CommandQueue_Release(q);
	}
	STEP(30, u_wait(s->done[t], s->rounds) == S_OK);
	U_RELEASE(list);
	U_RELEASE(alloc);
	close(own);
	return NULL;
}

FIXTURE(c) {
	int unused;
};

FIXTURE_SETUP(c)
{
}

FIXTURE_TEARDOWN(c)
{
}

TEST_F_TIMEOUT(c, shared_queue_and_fences, 600)
{
	struct shared s = { 0 };
	struct worker w[THREADS];
	pthread_t th[THREADS];
	ULONG dev_refs;
	int i, r;

	s.dev = u_device();
	if (!s.dev)
		SKIP(return, "no d3dq device");
	s.rounds = ROUNDS * scale();
	s.q = u_queue(s.dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	s.rb = u_buffer(s.dev, D3D12_HEAP_TYPE_READBACK,
			(UINT64)THREADS * s.rounds * 4);
	ASSERT_TRUE(s.q && s.rb);
	s.map = u_map(s.rb);
	ASSERT_NE(NULL, s.map);
	for (i = 0; i < THREADS; i++) {
		s.done[i] = u_fence(s.dev, 0);
		s.go[i] = u_fence(s.dev, 0);
		ASSERT_TRUE(s.done[i] && s.go[i]);
	}
	dev_refs = u_refs(s.dev);
	ASSERT_EQ(0, pthread_barrier_init(&s.start, NULL, THREADS));
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = &s, .index = i, .ev = u_event() };
		ASSERT_LE(0, w[i].ev);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker_main, &w[i]));
	}
	for (i = 0; i < THREADS; i++) {
		uint64_t fired = 0;

		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].failed) TH_LOG("thread %d", i);
		/* All signals are done: every registration fired, once. */
		while (w[i].failed == 0 && fired < (uint64_t)w[i].registered) {
			uint64_t n = u_event_wait(w[i].ev, 20000);

			if (!n)
				break;
			fired += n;
		}
		EXPECT_EQ((uint64_t)w[i].registered, fired) TH_LOG("thread %d", i);
		EXPECT_EQ(0, u_event_take(w[i].ev));
		close(w[i].ev);
	}
	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ((UINT64)s.rounds,
			  ID3D12Fence_GetCompletedValue(s.done[i]));
		EXPECT_EQ((UINT64)s.rounds,
			  ID3D12Fence_GetCompletedValue(s.go[i]));
		for (r = 0; r < s.rounds; r++)
			if (s.map[i * s.rounds + r] != (UINT32)r + 1) {
				EXPECT_EQ((UINT32)r + 1, s.map[i * s.rounds + r])
					TH_LOG("thread %d, round %d", i, r);
				break;
			}
		EXPECT_EQ(1, u_refs(s.done[i]));
		EXPECT_EQ(1, u_refs(s.go[i]));
	}
	EXPECT_EQ(1, u_refs(s.q));
	EXPECT_EQ(dev_refs, u_refs(s.dev));
	pthread_barrier_destroy(&s.start);
	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ(0, ID3D12Fence_Release(s.done[i]));
		EXPECT_EQ(0, ID3D12Fence_Release(s.go[i]));
	}
	EXPECT_EQ(0, ID3D12CommandQueue_Release(s.q));
	EXPECT_EQ(0, ID3D12Resource_Release(s.rb));
	EXPECT_EQ(0, ID3D12Device1_Release(s.dev));
}

/*
 * Each thread holds one reference of a queue and of a fence, uses them
 * (taking and dropping more references meanwhile) and, once all are done,
 * Releases them at once, with work still queued: exactly one of the Releases
 * of each object is the last (0), the others' counts are all different,
 * and the work they queued completes after the last Release (each
 * thread's own witness fence, which the main thread holds, reaches 1).
 */
struct releaser {
	ID3D12CommandQueue *q;
	ID3D12Fence *f, *witness;
	pthread_barrier_t *start;
	int index;
	ULONG q_left, f_left;
	HRESULT hr;
};

static void *releaser_main(void *arg)
{
	struct releaser *x = arg;
	int i;

	pthread_barrier_wait(x->start);
	for (i = 0; i < 20 && SUCCEEDED(x->hr); i++) {
		ID3D12Fence_AddRef(x->f);
		x->hr = ID3D12CommandQueue_Signal(x->q, x->f, 1);
		if (SUCCEEDED(x->hr))
			x->hr = ID3D12CommandQueue_Wait(x->q, x->f, 1);
		ID3D12Fence_GetCompletedValue(x->f);
		ID3D12Fence_Release(x->f);
	}
	if (SUCCEEDED(x->hr))
		x->hr = ID3D12CommandQueue_Signal(x->q, x->witness, 1);
	/* Every thread's extra references are gone: now the last ones. */
	pthread_barrier_wait(x->start);
	x->f_left = ID3D12Fence_Release(x->f);
	x->q_left = ID3D12CommandQueue_Release(x->q);
	return NULL;
}

TEST_F_TIMEOUT(c, last_release_of_many_threads, 600)
{
	struct releaser x[THREADS];
	pthread_t th[THREADS];
	pthread_barrier_t start;
	ID3D12Device1 *dev = u_device();
	ID3D12CommandQueue *q;
	ID3D12Fence *f, *witness[THREADS];
	unsigned int q_seen = 0, f_seen = 0;
	int i, round, rounds = 20 * scale();

	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, THREADS));
	for (round = 0; round < rounds; round++) {
		q_seen = f_seen = 0;
		q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
		f = u_fence(dev, 0);
		ASSERT_TRUE(q && f);
		for (i = 0; i < THREADS; i++) {
			witness[i] = u_fence(dev, 0);
			ASSERT_NE(NULL, witness[i]);
		}
		/* One reference per thread: the creator's and THREADS - 1. */
		for (i = 1; i < THREADS; i++) {
			ID3D12CommandQueue_AddRef(q);
			ID3D12Fence_AddRef(f);
		}
		for (i = 0; i < THREADS; i++) {
			x[i] = (struct releaser){ .q = q, .f = f,
						  .witness = witness[i],
						  .start = &start, .index = i };
			ASSERT_EQ(0, pthread_create(&th[i], NULL,
						    releaser_main, &x[i]));
		}
		for (i = 0; i < THREADS; i++) {
			pthread_join(th[i], NULL);
			EXPECT_EQ(HR(S_OK), HR(x[i].hr));
			ASSERT_LT(x[i].q_left, THREADS);
			ASSERT_LT(x[i].f_left, THREADS);
			q_seen |= 1u << x[i].q_left;
			f_seen |= 1u << x[i].f_left;
		}
		/* 0 .. THREADS - 1, each once. */
		ASSERT_EQ((1u << THREADS) - 1, q_seen) TH_LOG("round %d", round);
		ASSERT_EQ((1u << THREADS) - 1, f_seen) TH_LOG("round %d", round);
		/* The released queue's signals all take effect. */
		for (i = 0; i < THREADS; i++) {
			ASSERT_EQ(HR(S_OK), HR(u_wait(witness[i], 1)));
			EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(witness[i]));
			EXPECT_EQ(0, ID3D12Fence_Release(witness[i]));
		}
	}
	pthread_barrier_destroy(&start);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
