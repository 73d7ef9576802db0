// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: SUBMIT argument checking. Every rejected submit must leave no job
 * queued and no signal point attached.
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

FIXTURE(sub) {
	int fd;
	uint32_t q, bo, tl, bin;
	uint64_t *map;
};

FIXTURE_SETUP(sub)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, self->q);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->tl = t_syncobj(self->fd);
	self->bin = t_syncobj(self->fd);
	ASSERT_NE(0, self->tl);
	ASSERT_NE(0, self->bin);
}

FIXTURE_TEARDOWN(sub)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/* Nothing queued, nothing signalled, the buffer untouched. */
static void expect_nothing(struct __test_metadata *_metadata,
			   FIXTURE_DATA(sub) *self)
{
	struct drm_d3dq_queue_get_state st;
	uint64_t point = 0;

	ASSERT_EQ(0, t_queue_state(self->fd, self->q, &st));
	EXPECT_EQ(0, st.pending_jobs);
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	ASSERT_EQ(0, drmSyncobjQuery(self->fd, &self->tl, &point, 1));
	EXPECT_EQ(0, point);
	/* The binary syncobj still has no fence. */
	EXPECT_EQ(-ETIME, t_wait(self->fd, self->bin, 0, 0));
	EXPECT_EQ(0, self->map[0]);
}

TEST_F(sub, pure_sync_point)
{
	struct drm_d3dq_sync sig[2] = { t_tl(self->tl, 1), t_bin(self->bin) };

	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, sig, 2, NULL));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
	EXPECT_EQ(0, t_wait(self->fd, self->bin, 0, 5 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, self->tl, 1));
	EXPECT_EQ(1, t_fence_status(self->fd, self->bin, 0));
}

TEST_F(sub, header_errors)
{
	struct drm_d3dq_sync sig = t_tl(self->tl, 1);
	struct drm_d3dq_submit s;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);

#define BASE() do { \
	memset(&s, 0, sizeof(s)); \
	s.queue_id = self->q; \
	s.signals = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(1, &sig); \
	s.cmds = (uintptr_t)cs.buf; \
	s.cmd_bytes = cs.len; \
} while (0)

	BASE();
	/*
	 * An unknown flag (HOLD is one since 1.5, CARRY and TAIL since 1.8,
	 * SPLIT since 1.10, IMPLICIT since 1.12).
	 */
	s.flags = DRM_D3DQ_SUBMIT_IMPLICIT << 1;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.pad = 1;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.queue_id = self->q + 1;
	EXPECT_EQ(-ENOENT, t_submit_raw(self->fd, &s));
	BASE();
	s.queue_id = 0;
	EXPECT_EQ(-ENOENT, t_submit_raw(self->fd, &s));
	BASE();
	s.cmd_bytes = 4;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.cmd_bytes = cs.len - 8;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.cmd_bytes = t_param(self->fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES) + 8;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.cmds = 8;
	EXPECT_EQ(-EFAULT, t_submit_raw(self->fd, &s));
	BASE();
	s.signals.stride = 0;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.signals.stride = 8;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	BASE();
	s.signals.array = 8;
	EXPECT_EQ(-EFAULT, t_submit_raw(self->fd, &s));
	BASE();
	s.waits.count = 1;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));	/* stride 0 */
	expect_nothing(_metadata, self);
#undef BASE
}

TEST_F(sub, sync_errors)
{
	struct drm_d3dq_sync ok_sig = t_tl(self->tl, 1), s;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);

	/* Signal entries. */
	s = t_tl(self->tl, 0);
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));
	s = t_bin(self->bin);
	s.point = 1;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));
	s = t_tl(self->tl, 1);
	s.flags |= 2;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));
	s = t_tl(self->tl + 100, 1);
	EXPECT_EQ(-ENOENT, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));
	s = t_bin(0);
	EXPECT_EQ(-ENOENT, t_submit(self->fd, self->q, NULL, 0, &s, 1, &cs));

	/* Wait entries, each with a valid signal that must not happen. */
	s = t_bin(self->bin);
	s.point = 3;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, &s, 1, &ok_sig, 1, &cs));
	s = t_tl(self->tl, 1);
	s.flags = 0x80;
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, &s, 1, &ok_sig, 1, &cs));
	s = t_tl(self->tl + 100, 1);
	EXPECT_EQ(-ENOENT, t_submit(self->fd, self->q, &s, 1, &ok_sig, 1, &cs));
	/* No fence yet: -ENODATA, distinct from bad input. */
	s = t_bin(self->bin);
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q, &s, 1, &ok_sig, 1, &cs));
	s = t_tl(self->tl, 5);
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q, &s, 1, &ok_sig, 1, &cs));
	expect_nothing(_metadata, self);
}

/*
 * A timeline wait on a syncobj whose fence is binary is bad input
 * (-EINVAL), not a point that has no fence yet (-ENODATA): a binary
 * fence has no points. Without a fence, the point may still come.
 */
TEST_F(sub, timeline_wait_on_binary)
{
	uint32_t other = t_syncobj(self->fd);
	struct drm_d3dq_sync w = t_tl(other, 1), sig = t_tl(self->tl, 1);

	ASSERT_NE(0, other);
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	ASSERT_EQ(0, t_signal(self->fd, other, 0));
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	/* Point 0 is the syncobj's fence, whatever it is. */
	w = t_tl(other, 0);
	EXPECT_EQ(0, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
}

/* A wait on a point fails until the point is submitted, then works. */
TEST_F(sub, enodata_then_ok)
{
	uint32_t other = t_syncobj(self->fd);
	struct drm_d3dq_sync w = t_tl(other, 4), sig = t_tl(self->tl, 1);

	ASSERT_NE(0, other);
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	ASSERT_EQ(0, t_signal(self->fd, other, 2));
	EXPECT_EQ(-ENODATA, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	ASSERT_EQ(0, t_signal(self->fd, other, 6));
	/* Point 4 resolves to the first point >= 4, here 6. */
	EXPECT_EQ(0, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
	/* A timeline wait on point 0 waits for the latest fence. */
	w = t_tl(other, 0);
	sig = t_tl(self->tl, 2);
	EXPECT_EQ(0, t_submit(self->fd, self->q, &w, 1, &sig, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 2, 5 * T_SEC));
}

struct big_sync {
	struct drm_d3dq_sync s;
	uint64_t extra;
};

/* Larger elements (newer userspace) are fine while the tail is zero. */
TEST_F(sub, stride)
{
	struct big_sync sig[2] = {
		{ .s = t_tl(self->tl, 1) },
		{ .s = t_bin(self->bin) },
	};
	struct drm_d3dq_submit s = {
		.queue_id = self->q,
		.signals = DRM_D3DQ_OBJ_ARRAY(2, sig),
	};

	ASSERT_EQ(sizeof(struct big_sync), s.signals.stride);
	sig[1].extra = 1;
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	expect_nothing(_metadata, self);
	sig[1].extra = 0;
	EXPECT_EQ(0, t_submit_raw(self->fd, &s));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
	EXPECT_EQ(0, t_wait(self->fd, self->bin, 0, 5 * T_SEC));
}

/* The stride is at most 4096 bytes, on every architecture. */
TEST_F(sub, stride_limit)
{
	static uint8_t buf[2 * 8192];
	struct drm_d3dq_sync sig = t_tl(self->tl, 1);
	struct drm_d3dq_submit s = {
		.queue_id = self->q,
		.signals = { .count = 2, .array = (uintptr_t)buf },
	};

	memcpy(buf, &sig, sizeof(sig));
	s.signals.stride = 4097;
	memcpy(buf + 4097, &sig, sizeof(sig));
	EXPECT_EQ(-EINVAL, t_submit_raw(self->fd, &s));
	expect_nothing(_metadata, self);
	memset(buf + 4097, 0, sizeof(sig));
	s.signals.stride = 4096;
	sig.point = 2;
	memcpy(buf + 4096, &sig, sizeof(sig));
	EXPECT_EQ(0, t_submit_raw(self->fd, &s));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 2, 5 * T_SEC));
}

TEST_F(sub, max_syncs)
{
	uint32_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS);
	struct drm_d3dq_sync *w = calloc(max + 1, sizeof(*w));
	struct drm_d3dq_sync sig = t_tl(self->tl, 1);
	uint32_t src = t_syncobj(self->fd), i;

	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, t_signal(self->fd, src, max + 1));
	for (i = 0; i <= max; i++)
		w[i] = t_tl(src, i + 1);
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, w, max + 1, &sig, 1,
				    NULL));
	EXPECT_EQ(-EINVAL, t_submit(self->fd, self->q, NULL, 0, w, max + 1,
				    NULL));
	expect_nothing(_metadata, self);
	EXPECT_EQ(0, t_submit(self->fd, self->q, w, max, &sig, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
	free(w);
}

static void cmd_fails(struct __test_metadata *_metadata,
		      FIXTURE_DATA(sub) *self, const struct t_cs *cs, int err)
{
	struct drm_d3dq_sync sig = t_tl(self->tl, 1);

	EXPECT_EQ(err, t_submit(self->fd, self->q, NULL, 0, &sig, 1, cs));
	expect_nothing(_metadata, self);
}

TEST_F(sub, command_errors)
{
	struct drm_d3dq_cmd_write64 w = {
		.hdr = { DRM_D3DQ_CMD_WRITE64, sizeof(w) },
		.handle = self->bo,
	};
	struct drm_d3dq_cmd_header h;
	struct t_cs cs;

	/* A good command first: the stream must not run partially. */
#define START() do { t_cs_init(&cs); t_cs_write64(&cs, self->bo, 0, 7); } while (0)

	START();
	h = (struct drm_d3dq_cmd_header){ 0, 16 };
	t_cs_raw(&cs, &h, sizeof(h));
	t_cs_raw(&cs, &h, sizeof(h));
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* op 0 */
	START();
	h = (struct drm_d3dq_cmd_header){ DRM_D3DQ_CMD_DELAY + 1, 16 };
	t_cs_raw(&cs, &h, sizeof(h));
	t_cs_raw(&cs, &h, sizeof(h));
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* unknown op */
	START();
	w.hdr.size = sizeof(w) + 8;
	t_cs_raw(&cs, &w, sizeof(w));
	t_cs_raw(&cs, &h, 8);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* wrong size */
	w.hdr.size = sizeof(w);
	START();
	t_cs_raw(&cs, &w, sizeof(w) - 8);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* truncated */
	START();
	w.pad = 1;
	t_cs_raw(&cs, &w, sizeof(w));
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* padding */
	w.pad = 0;

	START();
	t_cs_write64(&cs, self->bo + 50, 0, 1);
	cmd_fails(_metadata, self, &cs, -ENOENT);
	START();
	t_cs_write64(&cs, self->bo, 4, 1);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* misaligned */
	START();
	t_cs_write64(&cs, self->bo, 4096, 1);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* out of range */
	START();
	t_cs_cmp_store(&cs, self->bo, 4092, 0, 1);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_timestamp(&cs, self->bo, 1ull << 40);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_fill(&cs, self->bo, 0, 256, 8);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* not a byte */
	START();
	t_cs_fill(&cs, self->bo, 8, 1, 4089);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_fill(&cs, self->bo, 4097, 1, 0);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_fill(&cs, self->bo, UINT64_MAX, 1, 2);
	cmd_fails(_metadata, self, &cs, -EINVAL);	/* overflow */
	START();
	t_cs_copy(&cs, self->bo, 0, self->bo, 1, 4096);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_copy(&cs, self->bo, 8, self->bo, 0, UINT64_MAX - 4);
	cmd_fails(_metadata, self, &cs, -EINVAL);
	START();
	t_cs_copy(&cs, self->bo, 0, self->bo + 50, 0, 8);
	cmd_fails(_metadata, self, &cs, -ENOENT);
	START();
	t_cs_delay(&cs, t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS) + 1);
	cmd_fails(_metadata, self, &cs, -EINVAL);
#undef START
}

/* Edge values that are valid. */
TEST_F(sub, command_limits)
{
	uint32_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES);
	struct drm_d3dq_sync sig = t_tl(self->tl, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_fill(&cs, self->bo, 4096, 9, 0);
	t_cs_copy(&cs, self->bo, 4096, self->bo, 0, 0);
	t_cs_write64(&cs, self->bo, 4088, 5);
	t_cs_timestamp(&cs, self->bo, 8);
	while (cs.len + sizeof(struct drm_d3dq_cmd_delay) <= max)
		t_cs_delay(&cs, 0);
	ASSERT_EQ(max, cs.len);
	ASSERT_EQ(0, t_submit(self->fd, self->q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 10 * T_SEC));
	EXPECT_EQ(5, self->map[511]);
}

/* A job keeps its buffers alive after their handles are closed. */
TEST_F(sub, handle_closed_while_queued)
{
	uint32_t gate = t_syncobj(self->fd), bo2;
	struct drm_d3dq_sync sig = t_tl(gate, 1), w = t_tl(gate, 1);
	struct drm_d3dq_sync sig2 = t_tl(self->tl, 1);
	uint32_t q2 = t_queue(self->fd, 0, 0);
	struct t_cs cs;

	bo2 = t_bo(self->fd, 4096, NULL);
	ASSERT_NE(0, bo2);
	t_cs_init(&cs);
	t_cs_delay(&cs, 200 * T_MS);
	ASSERT_EQ(0, t_submit(self->fd, q2, NULL, 0, &sig, 1, &cs));
	t_cs_init(&cs);
	t_cs_write64(&cs, bo2, 0, 0xabc);
	t_cs_copy(&cs, self->bo, 0, bo2, 0, 8);
	ASSERT_EQ(0, t_submit(self->fd, self->q, &w, 1, &sig2, 1, &cs));
	ASSERT_EQ(0, drmCloseBufferHandle(self->fd, bo2));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, 5 * T_SEC));
	EXPECT_EQ(0xabc, self->map[0]);
}

TEST_HARNESS_MAIN
