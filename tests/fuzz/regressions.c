// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: regression tests for kernel bugs the fuzzer and the stress tests
 * found (see Documentation/robustness.rst). Each case replays the
 * smallest sequence that showed the bug.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/*
 * QUEUE_DESTROY of id 0 used to erase index 0 of the file's queue
 * xarray, which marks it free: the next QUEUE_CREATE returned id 0,
 * which the uapi promises never to hand out (and which then could not be
 * told apart from "no queue").
 */
TEST(destroy_id0_then_create)
{
	struct drm_d3dq_queue_destroy d = { .id = 0 };
	uint32_t q[3];
	int fd, i;

	fd = t_open(0);
	ASSERT_LE(0, fd);
	q[0] = t_queue(fd, 0, 0);
	ASSERT_NE(0, q[0]);
	ASSERT_EQ(-1, drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d));
	ASSERT_EQ(ENOENT, errno);
	for (i = 1; i < 3; i++) {
		q[i] = t_queue(fd, 0, 0);
		EXPECT_NE(0, q[i]);
		EXPECT_NE(q[0], q[i]);
	}
	EXPECT_NE(q[1], q[2]);
	/* Destroying every queue empties the array; id 0 stays unused. */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, t_queue_destroy(fd, q[i]));
	ASSERT_EQ(-1, drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d));
	EXPECT_EQ(ENOENT, errno);
	q[0] = t_queue(fd, 0, 0);
	EXPECT_NE(0, q[0]);
	close(fd);
}

TEST_HARNESS_MAIN
