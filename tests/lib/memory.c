// SPDX-License-Identifier: GPL-2.0
/*
 * R8, R16: writes before a satisfying signal are visible to the work after
 * the wait; ExecuteCommandLists is a barrier between lists and calls;
 * executing zero lists does nothing; a closed list runs many times.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(m) {
	struct util_env e;
	struct d3dq_buffer *dst;
};

FIXTURE_SETUP(m)
{
	UTIL_ENV_OPEN(&self->e, 65536, 0, 0);
	ASSERT_EQ(0, d3dq_buffer_create(self->e.dev, 65536, &self->dst));
}

FIXTURE_TEARDOWN(m)
{
	d3dq_buffer_destroy(self->dst);
	util_env_close(&self->e);
}

/* CPU writes, then CPU signal; the copy after the wait sees them. */
TEST_F(m, cpu_writes_before_cpu_signal)
{
	struct d3dq_cmdlist *l;
	uint8_t *s = d3dq_buffer_map(self->e.buf);
	uint8_t *d = d3dq_buffer_map(self->dst);
	unsigned int i;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	ASSERT_EQ(0, d3dq_cmdlist_copy(l, self->dst, 0, self->e.buf, 0, 65536));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_execute(self->e.a, &l, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	/* The copy is held by the kernel when the CPU writes. */
	ASSERT_TRUE(task_gpu_only_held());
	for (i = 0; i < 65536; i++)
		s[i] = (uint8_t)(i * 7 + 3);
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(0, memcmp(s, d, 65536));
	d3dq_cmdlist_destroy(l);
}

/* GPU writes of queue a before its signal are seen by b after its wait. */
TEST_F(m, gpu_writes_before_queue_signal)
{
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	ASSERT_EQ(0, d3dq_cmdlist_copy(l, self->dst, 0, self->e.buf, 0, 8));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 1));
	ASSERT_EQ(0, d3dq_queue_execute(self->e.b, &l, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 200 * MS));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0,
				       0x1234567890abcdefull));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(0x1234567890abcdefull, util_read64(self->dst, 0));
	d3dq_cmdlist_destroy(l);
}

/* Lists of one call run in order: the second copies what the first wrote. */
TEST_F(m, lists_are_barriers)
{
	struct d3dq_cmdlist *l[3];

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l[0]));
	ASSERT_EQ(0, d3dq_cmdlist_delay(l[0], 100 * MS));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l[0], self->e.buf, 0, 11));
	ASSERT_EQ(0, d3dq_cmdlist_close(l[0]));
	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l[1]));
	ASSERT_EQ(0, d3dq_cmdlist_copy(l[1], self->dst, 0, self->e.buf, 0, 8));
	ASSERT_EQ(0, d3dq_cmdlist_close(l[1]));
	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l[2]));
	ASSERT_EQ(0, d3dq_cmdlist_compare_store64(l[2], self->dst, 0, 11, 12));
	ASSERT_EQ(0, d3dq_cmdlist_close(l[2]));
	ASSERT_EQ(0, d3dq_queue_execute(self->e.a, l, 2));
	ASSERT_EQ(0, d3dq_queue_execute(self->e.a, &l[2], 1));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(12, util_read64(self->dst, 0));
	d3dq_cmdlist_destroy(l[0]);
	d3dq_cmdlist_destroy(l[1]);
	d3dq_cmdlist_destroy(l[2]);
}

/* R16: zero lists is a no-op; a closed list can be executed many times. */
TEST_F(m, zero_lists_and_reuse)
{
	struct d3dq_cmdlist *l;
	int i;

	EXPECT_EQ(0, d3dq_queue_execute(self->e.a, NULL, 0));
	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	/* Counts 0 -> 1 -> 2 ... as long as the runs are in order. */
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, d3dq_cmdlist_compare_store64(l, self->dst, 0, i,
							  i + 1));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, d3dq_queue_execute(self->e.a, &l, 1));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(16, util_read64(self->dst, 0));

	/* Reset: empty and recording again; a new recording replaces it. */
	ASSERT_EQ(0, d3dq_cmdlist_reset(l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, self->dst, 8, 99));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	ASSERT_EQ(0, d3dq_queue_execute(self->e.a, &l, 1));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(16, util_read64(self->dst, 0));
	EXPECT_EQ(99, util_read64(self->dst, 8));
	d3dq_cmdlist_destroy(l);
}

TEST_F(m, recording_errors)
{
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_cmdlist_create(self->e.dev, &l));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_write64(l, self->dst, 65536, 1));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_write64(l, self->dst, 4, 1));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_copy(l, self->dst, 1, self->e.buf, 0,
					     65536));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_timestamp(l, NULL, 0));
	/* Close reports the recording error, as D3D12's Close does. */
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_close(l));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_write64(l, self->dst, 0, 1));
	EXPECT_EQ(-EINVAL, d3dq_cmdlist_close(l));
	ASSERT_EQ(0, d3dq_cmdlist_reset(l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, self->dst, 0, 1));
	EXPECT_EQ(0, d3dq_cmdlist_close(l));
	d3dq_cmdlist_destroy(l);
	d3dq_cmdlist_destroy(NULL);
	d3dq_buffer_destroy(NULL);
	{
		struct d3dq_buffer *b = (void *)1;

		EXPECT_EQ(-EINVAL, d3dq_buffer_create(self->e.dev, 0, &b));
		EXPECT_EQ(NULL, b);
	}
}

TEST_HARNESS_MAIN
