// SPDX-License-Identifier: GPL-2.0
/*
 * libd3dq starts no thread of its own unless a device has an event
 * callback (issue 25): the kernel holds queue waits, writes queue
 * signals, fires eventfds and notices lost queues, so a program using
 * devices, fences (local and shared), queue waits before their signals,
 * queue signals, executions, eventfd events and blocking waits has only
 * its own threads. Counted in /proc/self/task after each step.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define MS 1000000ull

TEST(none_without_a_callback)
{
	struct d3dq_fence *shared, *imported, *fs[2];
	struct d3dq_device *dev2;
	struct util_env e;
	uint64_t values[2];
	int n0, ret, efd, xfd;

	/* Before the library runs anything (the harness forked us). */
	n0 = util_thread_count();
	ASSERT_GE(n0, 1);
	ret = util_env_open(&e, 4096, 0, 0);
	if (ret == -ENODEV)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(n0, util_thread_count());

	/* A queue wait before its signal holds b; a is busy for a while. */
	ASSERT_EQ(0, d3dq_queue_wait(e.b, e.f, 1));
	ASSERT_EQ(0, util_exec_write64(e.dev, e.b, e.buf, 0, 7));
	ASSERT_EQ(0, d3dq_queue_signal(e.b, e.g, 2));
	ASSERT_EQ(0, util_exec_delay(e.dev, e.a, 50 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(e.a, e.f, 1));
	EXPECT_EQ(n0, util_thread_count());

	/* Events and blocking waits on queue-signalled values. */
	efd = util_eventfd();
	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(e.g, 2, efd));
	fs[0] = e.f;
	fs[1] = e.g;
	values[0] = 1;
	values[1] = 2;
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			     e.dev, fs, values, 2, 0, efd));
	EXPECT_EQ(n0, util_thread_count());
	ASSERT_EQ(0, d3dq_fence_wait(e.g, 2, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(7, util_read64(e.buf, 0));
	EXPECT_NE(0, util_event_wait(efd, 10000));
	EXPECT_EQ(n0, util_thread_count());

	/* Shared fences, exported and imported in a second device. */
	ASSERT_EQ(0, d3dq_fence_create(e.dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &shared));
	ASSERT_EQ(0, d3dq_fence_export(shared, &xfd));
	dev2 = util_open();
	ASSERT_NE(NULL, dev2);
	ASSERT_EQ(0, d3dq_fence_import(dev2, xfd, &imported));
	close(xfd);
	ASSERT_EQ(0, d3dq_queue_wait(e.a, shared, 5));
	ASSERT_EQ(0, d3dq_queue_signal(e.a, e.f, 10));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(shared, 5, efd));
	EXPECT_EQ(n0, util_thread_count());
	ASSERT_EQ(0, d3dq_fence_signal(imported, 5));
	ASSERT_EQ(0, d3dq_fence_wait(e.f, 10, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(n0, util_thread_count());

	d3dq_fence_destroy(imported);
	d3dq_device_close(dev2);
	d3dq_fence_destroy(shared);
	close(efd);
	util_env_close(&e);
	EXPECT_EQ(n0, util_thread_count());
}

TEST_HARNESS_MAIN
