// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: buffer sharing through PRIME and mmap coherence between the CPU
 * and the engine.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(prime) {
	int fd;
};

FIXTURE_SETUP(prime)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(prime)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

TEST_F(prime, self_import)
{
	uint32_t bo = t_bo(self->fd, 4096, NULL), again;
	int dmabuf;

	ASSERT_NE(0, bo);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo, DRM_CLOEXEC | DRM_RDWR,
					&dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, dmabuf, &again));
	EXPECT_EQ(bo, again);
	close(dmabuf);
	EXPECT_NE(0, drmPrimeHandleToFD(self->fd, bo + 10, 0, &dmabuf));
}

/*
 * A buffer shared with another file: the other file's engine writes,
 * this file's mapping and the dma-buf mapping see it, and the buffer
 * lives while any handle or fd does.
 */
TEST_F(prime, share_between_files)
{
	uint32_t bo, bo2, q2, tl2;
	uint64_t *m, *m2, *md;
	struct drm_d3dq_sync s;
	struct t_objects o;
	struct t_cs cs;
	int fd2, dmabuf;

	bo = t_bo(self->fd, 8192, (void **)&m);
	ASSERT_NE(0, bo);
	m[0] = 0x1234;

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, bo, DRM_CLOEXEC | DRM_RDWR,
					&dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, dmabuf, &bo2));
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ(1, o.bos);	/* one object, two handles */

	md = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, md);
	EXPECT_EQ(0x1234, md[0]);

	q2 = t_queue(fd2, 0, 0);
	tl2 = t_syncobj(fd2);
	ASSERT_NE(0, q2);
	t_cs_init(&cs);
	t_cs_copy(&cs, bo2, 4096, bo2, 0, 8);
	t_cs_write64(&cs, bo2, 8, 0x5678);
	s = t_tl(tl2, 1);
	ASSERT_EQ(0, t_submit(fd2, q2, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(fd2, tl2, 1, 5 * T_SEC));
	EXPECT_EQ(0x1234, m[512]);
	EXPECT_EQ(0x5678, m[1]);
	EXPECT_EQ(0x5678, md[1]);

	/* The imported handle keeps the buffer once the exporter let go. */
	m2 = t_bo_map(fd2, bo2, 8192);
	ASSERT_NE(NULL, m2);
	munmap(m, 8192);
	ASSERT_EQ(0, drmCloseBufferHandle(self->fd, bo));
	close(dmabuf);
	m2[2] = 9;
	EXPECT_EQ(9, md[2]);
	munmap(md, 8192);
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ(1, o.bos);
	munmap(m2, 8192);
	close(fd2);
}

/* Importing something that is not a d3dq buffer fails cleanly. */
TEST_F(prime, import_foreign)
{
	uint32_t h;
	int p[2];

	ASSERT_EQ(0, pipe(p));
	EXPECT_NE(0, drmPrimeFDToHandle(self->fd, p[0], &h));
	close(p[0]);
	close(p[1]);
	EXPECT_NE(0, drmPrimeFDToHandle(self->fd, -1, &h));
}

/* CPU writes before a signal are seen by the job waiting on it. */
TEST_F(prime, cpu_writes_then_signal)
{
	uint32_t bo, q = t_queue(self->fd, 0, 0), tl = t_syncobj(self->fd);
	struct drm_d3dq_sync w, s;
	uint64_t *m;
	struct t_cs cs;
	int i;

	bo = t_bo(self->fd, 4096, (void **)&m);
	ASSERT_NE(0, bo);
	for (i = 1; i <= 100; i++) {
		m[0] = i;
		ASSERT_EQ(0, t_signal(self->fd, tl, 2 * i - 1));
		t_cs_init(&cs);
		t_cs_copy(&cs, bo, 8 * (1 + i % 500), bo, 0, 8);
		w = t_tl(tl, 2 * i - 1);
		s = t_tl(tl, 2 * i);
		ASSERT_EQ(0, t_submit(self->fd, q, &w, 1, &s, 1, &cs));
		ASSERT_EQ(0, t_wait(self->fd, tl, 2 * i, 5 * T_SEC));
		ASSERT_EQ((uint64_t)i, m[1 + i % 500]);
	}
	munmap(m, 4096);
}

TEST_HARNESS_MAIN
