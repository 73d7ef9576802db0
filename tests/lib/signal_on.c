// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq_fence_signal_on_sync_file() and d3dq_fence_signal_on_syncobj():
 * another driver's work sets a fence value (issue 41). The dma-fences
 * here are d3dq's own, handed over as another driver's would be: a
 * sync_file of a queue signal on its way, and a syncobj of a second open
 * of the render node, exported as an fd. tests/kernel/fence_signal_on
 * does the same with vgem.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/util.h"

#define INF	D3DQ_TIMEOUT_INFINITE

FIXTURE(so) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(so, 4096, 0, 0)

/* Another open of a d3dq render node, as another driver's would be. */
static int other_open(void)
{
	drmVersionPtr v;
	char path[64];
	int i, fd;

	for (i = 128; i < 192; i++) {
		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "d3dq")) {
			drmFreeVersion(v);
			return fd;
		}
		drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

/* Work that completed sets the value in the call. */
TEST_F(so, completed_work_sets_at_once)
{
	struct util_env *e = &self->e;
	int sf;

	ASSERT_EQ(0, d3dq_fence_signal(e->g, 1));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(e->g, 1, &sf));
	ASSERT_EQ(0, d3dq_fence_signal_on_sync_file(e->f, 5, sf));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(e->f));
	close(sf);
}

/*
 * Work on its way: the value follows it, whatever came in between, and
 * a queue Wait on it is released. Read f before g: while g is not
 * reached, f read before it cannot be either.
 */
TEST_F(so, pending_work_sets_when_it_completes)
{
	struct util_env *e = &self->e;
	uint64_t f, g;
	int sf;

	ASSERT_EQ(0, util_exec_delay(e->dev, e->a, 300000000ull));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->g, 1));
	ASSERT_EQ(0, d3dq_fence_export_sync_file(e->g, 1, &sf));
	ASSERT_EQ(0, d3dq_fence_signal_on_sync_file(e->f, 7, sf));
	close(sf);
	ASSERT_EQ(0, d3dq_queue_wait(e->b, e->f, 7));
	ASSERT_EQ(0, util_exec_write64(e->dev, e->b, e->buf, 0, 11));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->done, 1));
	f = d3dq_fence_get_completed_value(e->f);
	g = d3dq_fence_get_completed_value(e->g);
	if (g < 1)
		EXPECT_EQ(0, f);
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, INF));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(e->f));
	EXPECT_EQ(11, util_read64(e->buf, 0));
}

/* A syncobj of another file, at a timeline point or binary. */
TEST_F(so, syncobj_fd)
{
	struct util_env *e = &self->e;
	uint32_t tl, bin;
	int fd, tfd, bfd;

	fd = other_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &tl));
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &bin));
	ASSERT_EQ(0, drmSyncobjHandleToFD(fd, tl, &tfd));
	ASSERT_EQ(0, drmSyncobjHandleToFD(fd, bin, &bfd));
	/* Nothing submitted for them yet. */
	EXPECT_EQ(-ENODATA, d3dq_fence_signal_on_syncobj(e->f, 3, tfd, 4));
	EXPECT_EQ(-ENODATA, d3dq_fence_signal_on_syncobj(e->f, 3, bfd, 0));
	ASSERT_EQ(0, drmSyncobjTimelineSignal(fd, &tl, (uint64_t[]){ 4 }, 1));
	ASSERT_EQ(0, d3dq_fence_signal_on_syncobj(e->f, 3, tfd, 4));
	EXPECT_EQ(3, d3dq_fence_get_completed_value(e->f));
	ASSERT_EQ(0, drmSyncobjSignal(fd, &bin, 1));
	ASSERT_EQ(0, d3dq_fence_signal_on_syncobj(e->f, 8, bfd, 0));
	EXPECT_EQ(8, d3dq_fence_get_completed_value(e->f));
	close(tfd);
	close(bfd);
	close(fd);
}

/*
 * The event for "export is possible now": not while the only signal
 * that brings the value is held behind a Wait; fired by the kernel when
 * that Wait is satisfied, and the export then succeeds.
 */
TEST_F(so, event_on_export_ready)
{
	struct util_env *e = &self->e;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct pollfd p = { .events = POLLIN };
	uint64_t n = 0;
	int sf;

	ASSERT_LE(0, efd);
	p.fd = efd;
	ASSERT_EQ(0, d3dq_queue_wait(e->a, e->f, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->g, 2));
	EXPECT_EQ(-ENODATA, d3dq_fence_export_sync_file(e->g, 2, &sf));
	ASSERT_EQ(0, d3dq_fence_set_event_on_export_ready(e->g, 2, efd));
	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, d3dq_fence_signal(e->f, 1));
	ASSERT_EQ(1, poll(&p, 1, 20000));
	ASSERT_EQ(sizeof(n), read(efd, &n, sizeof(n)));
	EXPECT_EQ(1, n);
	ASSERT_EQ(0, d3dq_fence_export_sync_file(e->g, 2, &sf));
	close(sf);
	ASSERT_EQ(0, d3dq_fence_wait(e->g, 2, INF));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_export_ready(e->g, 3, -1));
	close(efd);
}

TEST_F(so, bad_arguments)
{
	struct util_env *e = &self->e;
	int efd = eventfd(0, EFD_CLOEXEC);

	ASSERT_LE(0, efd);
	EXPECT_EQ(-EINVAL, d3dq_fence_signal_on_sync_file(NULL, 1, efd));
	EXPECT_EQ(-EINVAL, d3dq_fence_signal_on_sync_file(e->f, 1, -1));
	EXPECT_EQ(-EINVAL, d3dq_fence_signal_on_sync_file(e->f, 1, efd));
	EXPECT_EQ(-EINVAL, d3dq_fence_signal_on_syncobj(e->f, 1, -1, 0));
	EXPECT_NE(0, d3dq_fence_signal_on_syncobj(e->f, 1, efd, 0));
	close(efd);
	EXPECT_EQ(-EBADF, d3dq_fence_signal_on_sync_file(e->f, 1, efd));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(e->f));
}

TEST_HARNESS_MAIN
