// SPDX-License-Identifier: GPL-2.0
/*
 * R5 at scale: 1,024 queues held back by waits on one fence are released
 * by one CPU signal, in order, with the same number of library threads as
 * with one queue.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

#define NQ 1024

FIXTURE(h) {
	int unused;
};

FIXTURE_SETUP(h)
{
}

FIXTURE_TEARDOWN(h)
{
}

TEST_F_TIMEOUT(h, held_queues_1024, 600)
{
	struct d3dq_queue **q = calloc(NQ, sizeof(*q));
	struct d3dq_device *dev = util_open();
	struct d3dq_fence *f, *done;
	struct d3dq_buffer *buf;
	int threads_one, i;

	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, d3dq_buffer_create(dev, NQ * 16, &buf));
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &done));

	q[0] = util_queue(dev);
	ASSERT_NE(NULL, q[0]);
	threads_one = util_thread_count();
	for (i = 1; i < NQ; i++) {
		q[i] = util_queue(dev);
		ASSERT_NE(NULL, q[i]) TH_LOG("queue %d", i);
	}
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(0, d3dq_queue_wait(q[i], f, 1));
		ASSERT_EQ(0, util_exec_write64(dev, q[i], buf, i * 16, i + 1));
		/* Chain: queue i also waits for queue i-1's signal. */
		if (i)
			ASSERT_EQ(0, d3dq_queue_wait(q[i], done, i));
		ASSERT_EQ(0, util_exec_timestamp(dev, q[i], buf, i * 16 + 8));
		ASSERT_EQ(0, d3dq_queue_signal(q[i], done, i + 1));
	}
	EXPECT_EQ(threads_one, util_thread_count());
	/* All of it is held, nothing in flight: none of it ran. */
	ASSERT_TRUE(task_gpu_only_held());
	for (i = 0; i < NQ; i++)
		ASSERT_EQ(0, util_read64(buf, i * 16));

	ASSERT_EQ(0, d3dq_fence_signal(f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(done, NQ, 300000 * MS));
	EXPECT_EQ(threads_one, util_thread_count());
	for (i = 0; i < NQ; i++) {
		ASSERT_EQ(i + 1, util_read64(buf, i * 16));
		if (i)
			ASSERT_GE(util_read64(buf, i * 16 + 8),
				  util_read64(buf, (i - 1) * 16 + 8));
	}
	for (i = 0; i < NQ; i++)
		d3dq_queue_destroy(q[i]);
	d3dq_fence_destroy(f);
	d3dq_fence_destroy(done);
	d3dq_buffer_destroy(buf);
	d3dq_device_close(dev);
	free(q);
}

TEST_HARNESS_MAIN
