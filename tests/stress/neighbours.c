// SPDX-License-Identifier: GPL-2.0
/*
 * Two libd3dq programs of one user at the driver's job bounds (issue 39,
 * item 1; tests/d3d12/neighbours.c is the same through d3d12.h).
 * Program A queues Signals behind a queue Wait that nothing signals yet,
 * as many as the driver lets one file hold: a quarter of max_user_jobs,
 * then -ENOSPC (d3dq_queue_signal(3)), its device not removed. Program
 * B, next to it, executes and signals frames without waiting, many more
 * than the user's bound: its calls wait in the driver while its own
 * armed work holds the room and never fail, and every frame's write
 * lands. Then A's gate opens and all its Signals take effect, in order.
 * The module is reloaded with max_user_jobs=64; skipped without
 * D3DQ_MODULE.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <d3dq/d3dq.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define FRAMES	160
#define INF	D3DQ_TIMEOUT_INFINITE

FIXTURE(nb) {
	bool reloaded;
};

FIXTURE_SETUP(nb)
{
	self->reloaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_jobs=64"));
	self->reloaded = true;
}

FIXTURE_TEARDOWN(nb)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

/* What program A tells B: how many Signals it queued, and the answer. */
struct a_report {
	int held;
	int ret;
};

static int make_queue(struct d3dq_device *dev, struct d3dq_queue **q)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;

	return d3dq_queue_create(dev, &desc, q);
}

/* Program A: held work up to its bound, then its gate when told. */
static int program_a(int to_b, int from_b)
{
	struct a_report r = { 0, 0 };
	struct d3dq_fence *gate, *done;
	struct d3dq_device *dev;
	struct d3dq_queue *q;
	char c;

	if (d3dq_device_open(NULL, &dev))
		return 10;
	if (make_queue(dev, &q) || d3dq_fence_create(dev, 0, 0, &gate) ||
	    d3dq_fence_create(dev, 0, 0, &done) ||
	    d3dq_queue_wait(q, gate, 1))
		return 11;
	while (r.held < 1000) {
		r.ret = d3dq_queue_signal(q, done, (uint64_t)r.held + 1);
		if (r.ret)
			break;
		r.held++;
	}
	if (write(to_b, &r, sizeof(r)) != sizeof(r) ||
	    read(from_b, &c, 1) != 1)
		return 12;
	if (d3dq_device_removed_reason(dev))
		return 13;
	if (d3dq_fence_signal(gate, 1) ||
	    d3dq_fence_wait(done, (uint64_t)r.held, INF))
		return 14;
	if (d3dq_fence_get_completed_value(done) != (uint64_t)r.held)
		return 15;
	d3dq_fence_destroy(done);
	d3dq_fence_destroy(gate);
	d3dq_queue_destroy(q);
	d3dq_device_close(dev);
	return 0;
}

TEST_F_TIMEOUT(nb, held_neighbour_does_not_fail_frames, 120)
{
	int to_b[2], from_b[2], status, f, ret = 0;
	struct d3dq_cmdlist *list = NULL;
	struct d3dq_device *dev;
	struct d3dq_buffer *buf;
	struct d3dq_fence *fence;
	struct d3dq_queue *q;
	struct a_report r;
	uint64_t *map;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_b));
	ASSERT_EQ(0, pipe(from_b));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_b[0]);
		close(from_b[1]);
		_exit(program_a(to_b[1], from_b[0]));
	}
	close(to_b[1]);
	close(from_b[0]);
	ASSERT_EQ(sizeof(r), read(to_b[0], &r, sizeof(r)));
	TH_LOG("program A: %d Signals held, then %d", r.held, r.ret);
	/* A quarter of max_user_jobs, the Wait included. */
	EXPECT_GE(16, r.held);
	EXPECT_LT(8, r.held);
	EXPECT_EQ(-ENOSPC, r.ret);

	/* Program B: frames without waiting, past the user's bound. */
	ASSERT_EQ(0, d3dq_device_open(NULL, &dev));
	ASSERT_EQ(0, make_queue(dev, &q));
	ASSERT_EQ(0, d3dq_fence_create(dev, 0, 0, &fence));
	ASSERT_EQ(0, d3dq_buffer_create(dev, 8 * FRAMES, &buf));
	map = d3dq_buffer_map(buf);
	ASSERT_NE(NULL, map);
	ASSERT_EQ(0, d3dq_cmdlist_create(dev, &list));
	for (f = 1; f <= FRAMES && !ret; f++) {
		ret = d3dq_cmdlist_write64(list, buf, 8 * (f - 1), f);
		if (!ret)
			ret = d3dq_cmdlist_close(list);
		if (!ret)
			ret = d3dq_queue_execute(q, &list, 1);
		if (!ret)
			ret = d3dq_queue_signal(q, fence, f);
		if (!ret)
			ret = d3dq_cmdlist_reset(list);
	}
	ASSERT_EQ(0, ret) TH_LOG("frame %d", f - 1);
	EXPECT_EQ(0, d3dq_fence_wait(fence, FRAMES, INF));
	EXPECT_EQ(0, d3dq_device_removed_reason(dev));
	for (f = 1; f <= FRAMES; f++)
		ASSERT_EQ((uint64_t)f, map[f - 1]) TH_LOG("frame %d", f);

	/* A's gate opens: all its work runs, its device fine. */
	ASSERT_EQ(1, write(from_b[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	d3dq_cmdlist_destroy(list);
	d3dq_buffer_destroy(buf);
	d3dq_fence_destroy(fence);
	d3dq_queue_destroy(q);
	d3dq_device_close(dev);
	close(to_b[0]);
	close(from_b[1]);
}

TEST_HARNESS_MAIN
