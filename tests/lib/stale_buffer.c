// SPDX-License-Identifier: GPL-2.0
/*
 * A list that names a destroyed buffer (issue 39). The list recorded the
 * buffer's handle; the driver gives a freed handle to the next buffer, so
 * executing the list wrote into whatever buffer came next. The list now
 * holds the buffers it names, their handles stay theirs, and the execute
 * is refused with -ENOENT: no other object's memory is written.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(sb) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(sb, 4096, 0, 0)

TEST_F(sb, a_destroyed_buffer_is_never_another)
{
	struct util_env *e = &self->e;
	struct d3dq_buffer *old, *fresh;
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_buffer_create(e->dev, 4096, &old));
	l = util_list_write64(e->dev, old, 0, 0xbad);
	ASSERT_NE(NULL, l);
	d3dq_buffer_destroy(old);
	ASSERT_EQ(0, d3dq_buffer_create(e->dev, 4096, &fresh));

	EXPECT_EQ(-ENOENT, d3dq_queue_execute(e->a, &l, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(0, util_read64(fresh, 0));
	EXPECT_EQ(0, d3dq_device_removed_reason(e->dev));

	/* Reset, the list names nothing any more and records again. */
	ASSERT_EQ(0, d3dq_cmdlist_reset(l));
	ASSERT_EQ(0, d3dq_cmdlist_write64(l, fresh, 0, 7));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	ASSERT_EQ(0, d3dq_queue_execute(e->a, &l, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 2));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 2, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(7, util_read64(fresh, 0));
	d3dq_cmdlist_destroy(l);
	d3dq_buffer_destroy(fresh);
}

/* A list destroyed after its buffer: the handle goes with the list. */
TEST_F(sb, the_handle_goes_with_the_last_list)
{
	struct util_env *e = &self->e;
	struct d3dq_buffer *b, *c;
	struct d3dq_cmdlist *l;

	ASSERT_EQ(0, d3dq_buffer_create(e->dev, 4096, &b));
	l = util_list_write64(e->dev, b, 0, 1);
	ASSERT_NE(NULL, l);
	d3dq_buffer_destroy(b);
	d3dq_cmdlist_destroy(l);
	ASSERT_EQ(0, util_exec_write64(e->dev, e->a, e->buf, 0, 3));
	ASSERT_EQ(0, d3dq_buffer_create(e->dev, 4096, &c));
	ASSERT_EQ(0, util_exec_write64(e->dev, e->a, c, 0, 4));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(3, util_read64(e->buf, 0));
	EXPECT_EQ(4, util_read64(c, 0));
	d3dq_buffer_destroy(c);
}

TEST_HARNESS_MAIN
