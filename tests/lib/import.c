// SPDX-License-Identifier: GPL-2.0
/*
 * libd3dq 0.5: another driver's buffer as a d3dq buffer
 * (d3dq_buffer_import()) and executes that wait for the other driver's
 * work in their buffers (d3dq_queue_execute_flags() with
 * D3DQ_EXECUTE_IMPLICIT_SYNC). The other driver is vgem
 * (tools/util/vgem.h), skipped without it; every vgem fence is
 * signalled well before vgem's own 10 s. Held-back work is observed by
 * state: the fence value its queue signals after it stays, while
 * another queue's work completed.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/util.h"
#include "../../tools/util/vgem.h"

#define WAIT_NS		(5000 * MS)

FIXTURE(imp) {
	struct util_env e;
	int vfd;
	bool vgem_loaded;
};

FIXTURE_SETUP(imp)
{
	self->vfd = -1;
	self->vgem_loaded = false;
	UTIL_ENV_OPEN(&self->e, 4096, 0, 0);
	self->vfd = vgem_open(&self->vgem_loaded);
}

FIXTURE_TEARDOWN(imp)
{
	util_env_close(&self->e);
	if (self->vfd >= 0)
		close(self->vfd);
	/* The imports are gone with the device: vgem's buffers too. */
	if (self->vgem_loaded)
		EXPECT_EQ(0, vgem_unload());
}

#define NEED_VGEM()							\
	do {								\
		if (self->vfd < 0)					\
			SKIP(return, "no vgem module here (the debug kernel and the packages lane have none)"); \
		if (d3dq_queue_execute_flags(self->e.a, NULL, 0,	\
					     D3DQ_EXECUTE_IMPLICIT_SYNC) == \
		    -EOPNOTSUPP)					\
			SKIP(return, "driver older than uapi 1.12");	\
	} while (0)

/* A vgem buffer as a dma-buf fd, its vgem handle in *@bo; or -errno. */
static int vgem_dmabuf(int vfd, uint32_t *bo)
{
	int fd, ret = vgem_bo(vfd, bo);

	if (ret)
		return ret;
	return drmPrimeHandleToFD(vfd, *bo, O_CLOEXEC | O_RDWR, &fd) ?
	       -errno : fd;
}

static int exec_flags(struct d3dq_device *dev, struct d3dq_queue *q,
		      struct d3dq_buffer *b, uint64_t value, uint32_t flags)
{
	struct d3dq_cmdlist *l = util_list_write64(dev, b, 0, value);
	int ret;

	if (!l)
		return -ENOMEM;
	ret = d3dq_queue_execute_flags(q, &l, 1, flags);
	d3dq_cmdlist_destroy(l);
	return ret;
}

/* A job writes the vgem buffer: both mappings see it. */
TEST_F(imp, import_and_write)
{
	struct util_env *e = &self->e;
	struct d3dq_buffer *b = NULL;
	uint32_t vbo;
	int fd;

	NEED_VGEM();
	fd = vgem_dmabuf(self->vfd, &vbo);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, d3dq_buffer_import(e->dev, fd, &b));
	ASSERT_NE(NULL, d3dq_buffer_map(b));
	ASSERT_EQ(0, util_exec_write64(e->dev, e->a, b, 8, 0x5151));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->f, 1, WAIT_NS));
	EXPECT_EQ(0x5151, util_read64(b, 8));

	/* One dma-buf is one buffer of a device: the second is refused. */
	{
		struct d3dq_buffer *b2 = NULL;

		EXPECT_EQ(-EEXIST, d3dq_buffer_import(e->dev, fd, &b2));
		EXPECT_EQ(NULL, b2);
		d3dq_buffer_destroy(b);
		ASSERT_EQ(0, d3dq_buffer_import(e->dev, fd, &b2));
		EXPECT_EQ(0x5151, util_read64(b2, 8));
		d3dq_buffer_destroy(b2);
	}
	close(fd);
}

/*
 * With D3DQ_EXECUTE_IMPLICIT_SYNC the work waits for vgem's write fence
 * on the buffer; without it, it does not.
 */
TEST_F(imp, implicit_execute_waits_for_vgem)
{
	struct util_env *e = &self->e;
	struct d3dq_buffer *b = NULL;
	uint32_t vbo, vf = 0;
	int fd;

	NEED_VGEM();
	fd = vgem_dmabuf(self->vfd, &vbo);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, d3dq_buffer_import(e->dev, fd, &b));
	ASSERT_EQ(0, vgem_attach_write(self->vfd, vbo, &vf));

	/* Without the flag: done while vgem's fence is pending. */
	ASSERT_EQ(0, exec_flags(e->dev, e->a, b, 1, 0));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->f, 1, WAIT_NS));
	EXPECT_EQ(1, util_read64(b, 0));

	ASSERT_EQ(0, exec_flags(e->dev, e->a, b, 2,
				D3DQ_EXECUTE_IMPLICIT_SYNC));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->f, 2));
	/* Another queue's work completes meanwhile; this one waits. */
	ASSERT_EQ(0, util_exec_write64(e->dev, e->b, e->buf, 0, 3));
	ASSERT_EQ(0, d3dq_queue_signal(e->b, e->g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->g, 1, WAIT_NS));
	EXPECT_EQ(1, d3dq_fence_get_completed_value(e->f));
	EXPECT_EQ(1, util_read64(b, 0));

	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	ASSERT_EQ(0, d3dq_fence_wait(e->f, 2, WAIT_NS));
	EXPECT_EQ(2, util_read64(b, 0));
	d3dq_buffer_destroy(b);
	close(fd);
}

TEST_F(imp, bad_arguments)
{
	struct util_env *e = &self->e;
	struct d3dq_buffer *b = (struct d3dq_buffer *)1;
	int p[2];

	EXPECT_EQ(-EINVAL, d3dq_buffer_import(NULL, 0, &b));
	EXPECT_EQ(NULL, b);
	EXPECT_EQ(-EINVAL, d3dq_buffer_import(e->dev, -1, &b));
	EXPECT_EQ(-EINVAL, d3dq_buffer_import(e->dev, 0, NULL));
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-EINVAL, d3dq_buffer_import(e->dev, p[0], &b));
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(-EINVAL, d3dq_queue_execute_flags(e->a, NULL, 0, 2));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute_flags(NULL, NULL, 0, 0));
}

TEST_HARNESS_MAIN
