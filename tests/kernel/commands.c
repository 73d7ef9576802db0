// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: what every engine command does.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define BO_SIZE	(64 * 1024)

FIXTURE(cmd) {
	int fd;
	uint32_t q, a, b, tl;
	uint64_t point;
	uint8_t *ma, *mb;
};

FIXTURE_SETUP(cmd)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->q = t_queue(self->fd, DRM_D3DQ_QUEUE_TYPE_COPY, 0);
	ASSERT_NE(0, self->q);
	self->a = t_bo(self->fd, BO_SIZE, (void **)&self->ma);
	self->b = t_bo(self->fd, BO_SIZE, (void **)&self->mb);
	ASSERT_NE(0, self->a);
	ASSERT_NE(0, self->b);
	self->tl = t_syncobj(self->fd);
	ASSERT_NE(0, self->tl);
	self->point = 0;
}

FIXTURE_TEARDOWN(cmd)
{
	if (self->ma)
		munmap(self->ma, BO_SIZE);
	if (self->mb)
		munmap(self->mb, BO_SIZE);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Run a stream to completion; 0 or -errno. */
static int run(FIXTURE_DATA(cmd) *self, const struct t_cs *cs)
{
	struct drm_d3dq_sync sig = t_tl(self->tl, ++self->point);
	int ret = t_submit(self->fd, self->q, NULL, 0, &sig, 1, cs);

	if (ret)
		return ret;
	return t_wait(self->fd, self->tl, self->point, 10 * T_SEC);
}

static uint64_t u64_at(const uint8_t *m, size_t off)
{
	uint64_t v;

	memcpy(&v, m + off, sizeof(v));
	return v;
}

TEST_F(cmd, write64)
{
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, self->a, 0, 0x0123456789abcdefull);
	t_cs_write64(&cs, self->a, BO_SIZE - 8, UINT64_MAX);
	t_cs_write64(&cs, self->b, 8, 1);
	t_cs_write64(&cs, self->b, 8, 2);	/* in order: last wins */
	ASSERT_EQ(0, run(self, &cs));
	EXPECT_EQ(0x0123456789abcdefull, u64_at(self->ma, 0));
	EXPECT_EQ(UINT64_MAX, u64_at(self->ma, BO_SIZE - 8));
	EXPECT_EQ(0, u64_at(self->ma, 8));
	EXPECT_EQ(2, u64_at(self->mb, 8));
	EXPECT_EQ(1, t_fence_status(self->fd, self->tl, self->point));
}

TEST_F(cmd, copy_and_fill)
{
	struct t_cs cs;
	int i;

	for (i = 0; i < BO_SIZE; i++)
		self->ma[i] = i * 7 + 3;
	memset(self->mb, 0x55, BO_SIZE);

	t_cs_init(&cs);
	t_cs_copy(&cs, self->b, 100, self->a, 1000, 5000);
	t_cs_fill(&cs, self->b, 7000, 0xee, 3);
	t_cs_fill(&cs, self->b, 7003, 0, 0);
	t_cs_copy(&cs, self->b, 9000, self->a, 0, 0);
	t_cs_copy(&cs, self->b, 10000, self->a, 0, BO_SIZE - 10000);
	ASSERT_EQ(0, run(self, &cs));

	EXPECT_EQ(0x55, self->mb[99]);
	EXPECT_EQ(0, memcmp(self->mb + 100, self->ma + 1000, 5000));
	EXPECT_EQ(0x55, self->mb[5100]);
	EXPECT_EQ(0x55, self->mb[6999]);
	EXPECT_EQ(0xee, self->mb[7000]);
	EXPECT_EQ(0xee, self->mb[7002]);
	EXPECT_EQ(0x55, self->mb[7003]);
	EXPECT_EQ(0x55, self->mb[9000]);
	EXPECT_EQ(0, memcmp(self->mb + 10000, self->ma, BO_SIZE - 10000));
}

/* Overlapping copies inside one buffer behave like memmove(). */
TEST_F(cmd, copy_overlap)
{
	uint8_t *ref = malloc(BO_SIZE);
	struct t_cs cs;
	int i;

	ASSERT_NE(NULL, ref);
	for (i = 0; i < BO_SIZE; i++)
		self->ma[i] = ref[i] = (uint8_t)(i * 13 + i / 256);

	t_cs_init(&cs);
	t_cs_copy(&cs, self->a, 10, self->a, 0, 30000);	/* forward overlap */
	t_cs_copy(&cs, self->a, 40000, self->a, 40100, 20000); /* backward */
	t_cs_copy(&cs, self->a, 500, self->a, 500, 100);	/* same range */
	ASSERT_EQ(0, run(self, &cs));

	memmove(ref + 10, ref, 30000);
	memmove(ref + 40000, ref + 40100, 20000);
	EXPECT_EQ(0, memcmp(ref, self->ma, BO_SIZE));
	free(ref);
}

/* Large copies in one command (several engine chunks). */
TEST_F(cmd, copy_large)
{
	uint64_t size = 4ull << 20;
	uint32_t big1, big2;
	uint8_t *m1, *m2;
	struct t_cs cs;
	uint64_t i;

	big1 = t_bo(self->fd, size, (void **)&m1);
	big2 = t_bo(self->fd, size, (void **)&m2);
	ASSERT_NE(0, big1);
	ASSERT_NE(0, big2);
	for (i = 0; i < size; i += 4096)
		m1[i] = (uint8_t)(i >> 12);
	t_cs_init(&cs);
	t_cs_copy(&cs, big2, 0, big1, 0, size);
	t_cs_copy(&cs, big1, 1, big1, 0, size - 1);	/* overlapping */
	ASSERT_EQ(0, run(self, &cs));
	for (i = 0; i < size; i += 4096) {
		ASSERT_EQ((uint8_t)(i >> 12), m2[i]);
		ASSERT_EQ((uint8_t)(i >> 12), m1[i + 1]);
	}
	munmap(m1, size);
	munmap(m2, size);
}

TEST_F(cmd, cmp_store)
{
	struct t_cs cs;

	memcpy(self->ma + 16, &(uint64_t){ 5 }, 8);
	t_cs_init(&cs);
	t_cs_cmp_store(&cs, self->a, 16, 5, 6);	/* hit */
	t_cs_cmp_store(&cs, self->a, 16, 5, 9);	/* miss */
	t_cs_cmp_store(&cs, self->a, 16, 6, 7);	/* hit */
	t_cs_cmp_store(&cs, self->a, 24, 1, 2);	/* miss on 0 */
	ASSERT_EQ(0, run(self, &cs));
	EXPECT_EQ(7, u64_at(self->ma, 16));
	EXPECT_EQ(0, u64_at(self->ma, 24));
}

/* Compare-and-store is atomic against the CPU and other queues. */
TEST_F(cmd, cmp_store_atomic)
{
	uint32_t q2 = t_queue(self->fd, 0, 0);
	uint32_t tl2 = t_syncobj(self->fd);
	struct drm_d3dq_sync s1, s2;
	uint64_t *ctr = (uint64_t *)self->ma;
	struct t_cs cs;
	int i, n = 1000;

	ASSERT_NE(0, q2);
	/*
	 * Two queues each try to move the counter from every value v to
	 * v + 1 once; the CPU does the same. Each value is taken by exactly
	 * one of them, so the counter ends at the number of values tried.
	 */
	t_cs_init(&cs);
	for (i = 0; i < n; i++)
		t_cs_cmp_store(&cs, self->a, 0, i, i + 1);
	s1 = t_tl(self->tl, 1);
	s2 = t_tl(tl2, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, &s1, 1, &cs));
	ASSERT_EQ(0, t_submit(self->fd, q2, NULL, 0, &s2, 1, &cs));
	for (i = 0; i < n; i++)
		__atomic_compare_exchange_n(ctr, &(uint64_t){ i }, i + 1, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tl2, 1, 10 * T_SEC));
	EXPECT_EQ((uint64_t)n, *ctr);
}

TEST_F(cmd, timestamp_and_delay)
{
	uint64_t before, after, t0, t1, t2;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_timestamp(&cs, self->a, 0);
	t_cs_delay(&cs, 100 * T_MS);
	t_cs_timestamp(&cs, self->a, 8);
	t_cs_delay(&cs, 0);
	t_cs_timestamp(&cs, self->a, 16);
	before = t_now();
	ASSERT_EQ(0, run(self, &cs));
	after = t_now();
	t0 = u64_at(self->ma, 0);
	t1 = u64_at(self->ma, 8);
	t2 = u64_at(self->ma, 16);
	/* Same clock as CLOCK_MONOTONIC in userspace. */
	EXPECT_LE(before, t0);
	EXPECT_LE(t2, after);
	EXPECT_LE(t0 + 100 * T_MS, t1);
	EXPECT_LE(t1, t2);
}

TEST_HARNESS_MAIN
