// SPDX-License-Identifier: GPL-2.0
/*
 * R14: destroying a fence releases queued waits, events and blocked
 * threads as if it had reached UINT64_MAX; queues keep internal
 * references, so a fence can go while they still use it.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(d) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(d, 4096, 0, 0)

TEST_F(d, releases_queued_waits_and_events)
{
	struct d3dq_fence *f;
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 1000, efd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, f, 1000));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 1000));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.b, self->e.buf, 8, 2));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 2));
	/* Whatever could run ran: the rest waits for f. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, util_event_take(efd));

	d3dq_fence_destroy(f);
	EXPECT_EQ(1, util_event_take(efd));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(2, util_read64(self->e.buf, 8));
	close(efd);
}

struct blocked {
	struct d3dq_fence *f;
	_Atomic pid_t tid;
	int ret;
};

static void *block_thread(void *arg)
{
	struct blocked *b = arg;

	atomic_store(&b->tid, task_self());
	b->ret = d3dq_fence_wait(b->f, 50, D3DQ_TIMEOUT_INFINITE);
	return NULL;
}

TEST_F(d, releases_blocked_threads)
{
	struct blocked b = { NULL, 0, -1 };
	pthread_t t;

	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &b.f));
	ASSERT_EQ(0, pthread_create(&t, NULL, block_thread, &b));
	/* The thread sleeps in the wait: the destroy releases it there. */
	while (!atomic_load(&b.tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&b.tid)));
	d3dq_fence_destroy(b.f);
	pthread_join(t, NULL);
	EXPECT_EQ(0, b.ret);
}

/* Destroy a fence while queues still have signals and waits on it. */
TEST_F(d, destroy_while_queues_use_it)
{
	struct d3dq_fence *f;
	int i;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
		ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 10 * MS));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.a, f, 1));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 1));
		ASSERT_EQ(0, d3dq_queue_wait(self->e.b, f, 2));
		ASSERT_EQ(0, d3dq_queue_signal(self->e.b, f, 3));
		d3dq_fence_destroy(f);
	}
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
}

/*
 * Destroying a queue drops the work still held back behind its waits
 * (nothing of it runs) and releases the references it held.
 */
TEST_F(d, destroy_held_queue)
{
	struct d3dq_queue *c = util_queue(self->e.dev);
	struct d3dq_fence *f, *g;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, 0, &g));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, c, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_wait(c, f, 1));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, c, self->e.buf, 8, 2));
	ASSERT_EQ(0, d3dq_queue_signal(c, g, 1));
	d3dq_queue_destroy(c);
	/* Work before the wait ran; the rest is gone. */
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_signal(f, 1));
	/* Another queue still works with both fences. */
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, f, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	/* Nothing is in flight or held any more: nothing can run later. */
	ASSERT_TRUE(task_gpu_idle());
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(g));
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(g);
}

TEST_HARNESS_MAIN
