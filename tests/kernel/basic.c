// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: device parameters, buffers and queues (creation, errors, state).
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

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

static int get_param(int fd, uint32_t param, uint32_t pad, uint64_t *value)
{
	struct drm_d3dq_get_param p = { .param = param, .pad = pad };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &p))
		return -errno;
	*value = p.value;
	return 0;
}

TEST_F(dev, params)
{
	uint64_t v = 0;

	ASSERT_EQ(0, get_param(self->fd, DRM_D3DQ_PARAM_UAPI_VERSION, 0, &v));
	EXPECT_EQ((uint64_t)(DRM_D3DQ_UAPI_MAJOR << 16 | DRM_D3DQ_UAPI_MINOR), v);
	ASSERT_EQ(0, get_param(self->fd, DRM_D3DQ_PARAM_FEATURES, 0, &v));
	EXPECT_EQ(DRM_D3DQ_FEATURE_TIMELINE | DRM_D3DQ_FEATURE_PRIME |
		  DRM_D3DQ_FEATURE_TIMEOUT |
		  DRM_D3DQ_FEATURE_WAIT_RELEASE | DRM_D3DQ_FEATURE_PRIORITY |
		  DRM_D3DQ_FEATURE_SUBMIT_DONE | DRM_D3DQ_FEATURE_FENCE |
		  DRM_D3DQ_FEATURE_FENCE_SUBMIT |
		  DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ |
		  DRM_D3DQ_FEATURE_FENCE_HOLD |
		  DRM_D3DQ_FEATURE_REMOVE_ON_LOSS |
		  DRM_D3DQ_FEATURE_FENCE_SYNC_FILE |
		  DRM_D3DQ_FEATURE_SUBMIT_CARRY |
		  DRM_D3DQ_FEATURE_SUBMIT_TAIL |
		  DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES |
		  DRM_D3DQ_FEATURE_SUBMIT_SPLIT |
		  DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC |
		  DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON |
		  DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED |
		  DRM_D3DQ_FEATURE_IMPLICIT_SYNC |
		  DRM_D3DQ_FEATURE_SYNC_JOB_ONLY |
		  DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY |
		  DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD, v);
	/* The VM loads the module with its defaults. */
	EXPECT_EQ(1024, t_param(self->fd, DRM_D3DQ_PARAM_MAX_QUEUES));
	EXPECT_EQ(1024, t_param(self->fd, DRM_D3DQ_PARAM_MAX_SYNCS));
	EXPECT_EQ(65536, t_param(self->fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES));
	EXPECT_EQ(1024, t_param(self->fd, DRM_D3DQ_PARAM_MAX_PENDING_JOBS));
	EXPECT_EQ(2 * T_SEC, t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS));
	EXPECT_EQ(T_SEC, t_param(self->fd, DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY));
	EXPECT_EQ(10 * T_SEC, t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS));
	EXPECT_EQ(64ull << 20, t_param(self->fd, DRM_D3DQ_PARAM_MAX_BO_SIZE));
	/* Since 1.1. */
	EXPECT_LE(1, DRM_D3DQ_UAPI_MINOR);
	EXPECT_EQ(64ull << 20,
		  t_param(self->fd, DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES));
	/* Since 1.9. */
	EXPECT_EQ(262144,
		  t_param(self->fd, DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES));

	EXPECT_EQ(-EINVAL, get_param(self->fd,
				     DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES + 1,
				     0, &v));
	EXPECT_EQ(-EINVAL, get_param(self->fd, 0xffffffff, 0, &v));
	EXPECT_EQ(-EINVAL, get_param(self->fd, DRM_D3DQ_PARAM_UAPI_VERSION, 1,
				     &v));
}

/*
 * DRM_IOCTL_VERSION and DRM_D3DQ_PARAM_UAPI_VERSION give the same version,
 * the one the uapi header was built with.
 */
TEST_F(dev, version)
{
	drmVersionPtr v = drmGetVersion(self->fd);
	uint64_t uapi = t_param(self->fd, DRM_D3DQ_PARAM_UAPI_VERSION);

	ASSERT_NE(NULL, v);
	EXPECT_STREQ("d3dq", v->name);
	EXPECT_EQ(DRM_D3DQ_UAPI_MAJOR, v->version_major);
	EXPECT_EQ(DRM_D3DQ_UAPI_MINOR, v->version_minor);
	EXPECT_EQ(uapi >> 16, (uint64_t)v->version_major);
	EXPECT_EQ(uapi & 0xffff, (uint64_t)v->version_minor);
	drmFreeVersion(v);
}

static int bo_create(int fd, uint64_t size, uint32_t flags,
		     struct drm_d3dq_bo_create *c)
{
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->flags = flags;
	return drmIoctl(fd, DRM_IOCTL_D3DQ_BO_CREATE, c) ? -errno : 0;
}

TEST_F(dev, bo_create)
{
	uint64_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_BO_SIZE);
	long page = sysconf(_SC_PAGESIZE);
	struct drm_d3dq_bo_create c;
	struct t_objects o;

	ASSERT_EQ(0, bo_create(self->fd, 1, 0, &c));
	EXPECT_EQ((uint64_t)page, c.size);
	EXPECT_NE(0, c.handle);
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ(1, o.bos);

	ASSERT_EQ(0, bo_create(self->fd, page + 1, 0, &c));
	EXPECT_EQ((uint64_t)(2 * page), c.size);
	ASSERT_EQ(0, bo_create(self->fd, max, 0, &c));
	EXPECT_EQ(max, c.size);
	ASSERT_EQ(0, drmCloseBufferHandle(self->fd, c.handle));
	EXPECT_EQ(-EINVAL, drmCloseBufferHandle(self->fd, c.handle) ? -errno : 0);

	EXPECT_EQ(-EINVAL, bo_create(self->fd, 0, 0, &c));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, max + 1, 0, &c));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, UINT64_MAX, 0, &c));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, 4096, 1, &c));
	EXPECT_EQ(-EINVAL, bo_create(self->fd, 4096, 0x80000000u, &c));
}

TEST_F(dev, bo_mmap)
{
	struct drm_d3dq_bo_mmap_offset mo = { 0 };
	uint64_t *p, *q;
	uint32_t bo;

	bo = t_bo(self->fd, 8192, (void **)&p);
	ASSERT_NE(0, bo);
	ASSERT_NE(NULL, p);
	/* New buffers read as zero. */
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(0, p[1023]);
	p[0] = 0x1122334455667788ull;
	p[1023] = 42;

	/* A second mapping sees the same pages. */
	q = t_bo_map(self->fd, bo, 8192);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(0x1122334455667788ull, q[0]);
	EXPECT_EQ(42, q[1023]);
	munmap(q, 8192);
	munmap(p, 8192);

	mo.handle = bo;
	mo.pad = 1;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &mo));
	EXPECT_EQ(EINVAL, errno);
	mo.handle = bo + 100;
	mo.pad = 0;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &mo));
	EXPECT_EQ(ENOENT, errno);
}

static int queue_create(int fd, uint32_t type, uint32_t prio, uint32_t flags,
			uint32_t *id)
{
	struct drm_d3dq_queue_create c = {
		.type = type, .priority = prio, .flags = flags,
	};

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
		return -errno;
	*id = c.id;
	return 0;
}

TEST_F(dev, queue_create_destroy)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_queue_destroy d = { 0 };
	uint32_t ids[6], id;
	int type, prio, n = 0;

	for (type = 0; type <= DRM_D3DQ_QUEUE_TYPE_COPY; type++) {
		for (prio = 0; prio <= DRM_D3DQ_QUEUE_PRIORITY_HIGH; prio++) {
			ASSERT_EQ(0, queue_create(self->fd, type, prio, 0,
						  &ids[n]));
			EXPECT_NE(0, ids[n]);
			if (n)
				EXPECT_NE(ids[n - 1], ids[n]);
			ASSERT_EQ(0, t_queue_state(self->fd, ids[n], &st));
			EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
			EXPECT_EQ(0, st.reason);
			EXPECT_EQ(0, st.pending_jobs);
			n++;
		}
	}

	EXPECT_EQ(-EINVAL, queue_create(self->fd, DRM_D3DQ_QUEUE_TYPE_COPY + 1,
					0, 0, &id));
	EXPECT_EQ(-EINVAL, queue_create(self->fd, 0,
					DRM_D3DQ_QUEUE_PRIORITY_REALTIME + 1, 0,
					&id));
	/* Bit 0 is DRM_D3DQ_QUEUE_IDLE_WORD (uapi 1.15). */
	EXPECT_EQ(-EINVAL, queue_create(self->fd, 0, 0, 2, &id));

	d.id = ids[0];
	d.pad = 1;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d));
	EXPECT_EQ(EINVAL, errno);

	for (n = 0; n < 6; n++)
		EXPECT_EQ(0, t_queue_destroy(self->fd, ids[n]));
	EXPECT_EQ(-ENOENT, t_queue_destroy(self->fd, ids[0]));
	EXPECT_EQ(-ENOENT, t_queue_destroy(self->fd, 0));
	EXPECT_EQ(-ENOENT, t_queue_destroy(self->fd, 0x7fffffff));
	EXPECT_EQ(-ENOENT, t_queue_state(self->fd, ids[0], &st));
}

TEST_F(dev, queue_get_state_errors)
{
	struct drm_d3dq_queue_get_state st = { 0 };
	uint32_t q = t_queue(self->fd, 0, 0);

	ASSERT_NE(0, q);
	st.id = q;
	st.pad = 1;
	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-ENOENT, t_queue_state(self->fd, q + 1, &st));
}

/*
 * max_queues queues per file, then -EMFILE; another file has its own.
 * 1,024 queues, each with its scheduler: seconds on a normal kernel, more
 * than the harness's default 30 s on the debug kernel under load.
 */
TEST_F_TIMEOUT(dev, queue_limit, 180)
{
	uint32_t max = t_param(self->fd, DRM_D3DQ_PARAM_MAX_QUEUES);
	uint32_t *ids = calloc(max, sizeof(*ids));
	uint32_t id, i;
	struct t_objects o;
	int fd2;

	ASSERT_NE(NULL, ids);
	for (i = 0; i < max; i++) {
		ASSERT_EQ(0, queue_create(self->fd, i % 3, i % 2, 0, &ids[i]))
			TH_LOG("queue %u", i);
	}
	EXPECT_EQ(-EMFILE, queue_create(self->fd, 0, 0, 0, &id));
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ((int)max, o.queues);

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, queue_create(fd2, 0, 0, 0, &id));
	close(fd2);

	/* Destroying one makes room for one. */
	EXPECT_EQ(0, t_queue_destroy(self->fd, ids[max / 2]));
	EXPECT_EQ(0, queue_create(self->fd, 0, 0, 0, &id));
	EXPECT_EQ(-EMFILE, queue_create(self->fd, 0, 0, 0, &id));
	free(ids);
}

/* Ids and handles belong to the file that made them. */
TEST_F(dev, per_file_namespaces)
{
	struct drm_d3dq_queue_get_state st;
	struct t_cs cs;
	uint32_t q, bo, q2;
	int fd2;

	q = t_queue(self->fd, 0, 0);
	bo = t_bo(self->fd, 4096, NULL);
	ASSERT_NE(0, q);
	ASSERT_NE(0, bo);

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENOENT, t_queue_state(fd2, q, &st));
	EXPECT_EQ(-ENOENT, t_queue_destroy(fd2, q));
	EXPECT_EQ(-ENOENT, t_submit(fd2, q, NULL, 0, NULL, 0, NULL));

	/* fd2's own queue cannot name fd's buffer. */
	q2 = t_queue(fd2, 0, 0);
	ASSERT_NE(0, q2);
	EXPECT_EQ(q, q2);	/* same number, different queue */
	t_cs_init(&cs);
	t_cs_write64(&cs, bo, 0, 1);
	EXPECT_EQ(-ENOENT, t_submit(fd2, q2, NULL, 0, NULL, 0, &cs));
	EXPECT_EQ(0, t_submit(self->fd, q, NULL, 0, NULL, 0, &cs));
	close(fd2);

	/* fd's queue is untouched. */
	ASSERT_EQ(0, t_queue_state(self->fd, q, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

TEST_HARNESS_MAIN
