// SPDX-License-Identifier: GPL-2.0
/*
 * Argument checking of the public API: bad arguments fail with -EINVAL
 * (E_INVALIDARG) and change nothing; NULL objects are accepted where the
 * API says so.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(api) {
	struct d3dq_device *dev, *other;
	struct d3dq_queue *q;
	struct d3dq_fence *f, *foreign;
};

FIXTURE_SETUP(api)
{
	self->dev = util_open();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->other = util_open();
	ASSERT_NE(NULL, self->other);
	self->q = util_queue(self->dev);
	ASSERT_NE(NULL, self->q);
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->f));
	ASSERT_EQ(0, d3dq_fence_create(self->other, 0, 0, &self->foreign));
}

FIXTURE_TEARDOWN(api)
{
	d3dq_fence_destroy(self->f);
	d3dq_fence_destroy(self->foreign);
	d3dq_queue_destroy(self->q);
	d3dq_device_close(self->dev);
	d3dq_device_close(self->other);
}

TEST_F(api, device)
{
	struct d3dq_device *d = (void *)1;

	EXPECT_EQ(-ENODEV, d3dq_device_open("/dev/null", &d));
	EXPECT_EQ(NULL, d);
	EXPECT_EQ(-ENOENT, d3dq_device_open("/nonexistent", &d));
	EXPECT_EQ(-EINVAL, d3dq_device_open(NULL, NULL));
	/* "Not a device", unlike every removal reason. */
	EXPECT_EQ(-EFAULT, d3dq_device_removed_reason(NULL));
	EXPECT_EQ(-EINVAL, d3dq_device_remove(NULL));
	EXPECT_EQ(0, d3dq_device_removed_reason(self->dev));
	d3dq_device_close(NULL);
}

TEST(version)
{
	uint32_t v = d3dq_version();

	EXPECT_EQ(D3DQ_VERSION, v);
	EXPECT_EQ(D3DQ_VERSION_MAJOR, v >> 16);
	EXPECT_EQ(D3DQ_VERSION_MINOR, (v >> 8) & 0xff);
	EXPECT_EQ(D3DQ_VERSION_PATCH, v & 0xff);
	EXPECT_LT(D3DQ_MAKE_VERSION(0, 1, 255), D3DQ_MAKE_VERSION(0, 2, 0));
	EXPECT_LT(D3DQ_MAKE_VERSION(0, 255, 255), D3DQ_MAKE_VERSION(1, 0, 0));
}

TEST_F(api, clock)
{
	uint64_t hz = 0, gpu = 0, cpu = 0, gpu2 = 0, cpu2 = 0;

	EXPECT_EQ(-EINVAL, d3dq_device_get_timestamp_frequency(NULL, &hz));
	EXPECT_EQ(-EINVAL, d3dq_device_get_timestamp_frequency(self->dev,
								NULL));
	EXPECT_EQ(-EINVAL, d3dq_device_get_clock_calibration(NULL, &gpu, &cpu));
	EXPECT_EQ(-EINVAL, d3dq_device_get_clock_calibration(self->dev, NULL,
							     &cpu));
	EXPECT_EQ(-EINVAL, d3dq_device_get_clock_calibration(self->dev, &gpu,
							     NULL));
	/* The engine clock is CLOCK_MONOTONIC in nanoseconds (uapi). */
	ASSERT_EQ(0, d3dq_device_get_timestamp_frequency(self->dev, &hz));
	EXPECT_EQ(1000000000ull, hz);
	ASSERT_EQ(0, d3dq_device_get_clock_calibration(self->dev, &gpu, &cpu));
	ASSERT_EQ(0, d3dq_device_get_clock_calibration(self->dev, &gpu2,
							&cpu2));
	EXPECT_EQ(gpu, cpu);
	EXPECT_LE(cpu, cpu2);
	EXPECT_LE(gpu, gpu2);
}

/* A description as a later library might define it: one more member. */
struct desc_v1 {
	struct d3dq_queue_desc v0;
	uint32_t later;
};

static bool has_cap_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = { 0 };

	return !syscall(SYS_capget, &h, d) &&
	       (d[0].effective & (1u << CAP_SYS_NICE));
}

TEST_F(api, queue_create)
{
	struct d3dq_queue_desc bad[] = {
		/* No size, or smaller than the first layout. */
		{ 0, D3DQ_QUEUE_DIRECT, 0, 0, 0 },
		{ sizeof(struct d3dq_queue_desc) - 4, D3DQ_QUEUE_DIRECT, 0, 0, 0 },
		/* 1 is D3D12_COMMAND_LIST_TYPE_BUNDLE: no queue has it. */
		{ sizeof(struct d3dq_queue_desc), 1, 0, 0, 0 },
		{ sizeof(struct d3dq_queue_desc), 4, 0, 0, 0 },
		/* Priorities are D3D12's numbers, not 0, 1, 2. */
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_DIRECT, 1, 0, 0 },
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_DIRECT, -1, 0, 0 },
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_DIRECT, 0, 1, 0 },
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_DIRECT, 0, 0, 2 },
	};
	struct d3dq_queue_desc good[] = {
		D3DQ_QUEUE_DESC_INIT,
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_COMPUTE,
		  D3DQ_QUEUE_PRIORITY_HIGH, 0, 1 },
		{ sizeof(struct d3dq_queue_desc), D3DQ_QUEUE_COPY,
		  D3DQ_QUEUE_PRIORITY_NORMAL, 0, 0 },
	};
	struct d3dq_queue_desc realtime = D3DQ_QUEUE_DESC_INIT;
	struct desc_v1 v1 = { D3DQ_QUEUE_DESC_INIT, 0 };
	struct d3dq_queue *q = (void *)1;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, d3dq_queue_create(self->dev, &bad[i], &q))
			TH_LOG("bad[%u]", i);
		EXPECT_EQ(NULL, q);
	}
	EXPECT_EQ(-EINVAL, d3dq_queue_create(self->dev, NULL, &q));
	EXPECT_EQ(-EINVAL, d3dq_queue_create(NULL, &good[0], &q));
	EXPECT_EQ(-EINVAL, d3dq_queue_create(self->dev, &good[0], NULL));
	/* The driver wants CAP_SYS_NICE for a realtime queue. */
	realtime.priority = D3DQ_QUEUE_PRIORITY_GLOBAL_REALTIME;
	if (has_cap_sys_nice()) {
		ASSERT_EQ(0, d3dq_queue_create(self->dev, &realtime, &q));
		ASSERT_EQ(0, util_queue_idle(self->dev, q));
		d3dq_queue_destroy(q);
	} else {
		EXPECT_EQ(-EACCES, d3dq_queue_create(self->dev, &realtime,
						     &q));
		EXPECT_EQ(NULL, q);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ASSERT_EQ(0, d3dq_queue_create(self->dev, &good[i], &q));
		ASSERT_EQ(0, util_queue_idle(self->dev, q));
		d3dq_queue_destroy(q);
	}
	/* A longer description: its unknown tail must be zero. */
	v1.v0.size = sizeof(v1);
	v1.later = 1;
	EXPECT_EQ(-EINVAL, d3dq_queue_create(self->dev, &v1.v0, &q));
	v1.later = 0;
	ASSERT_EQ(0, d3dq_queue_create(self->dev, &v1.v0, &q));
	d3dq_queue_destroy(q);
	d3dq_queue_destroy(NULL);
}

TEST_F(api, queue_ops)
{
	struct d3dq_cmdlist *l;

	EXPECT_EQ(-EINVAL, d3dq_queue_wait(NULL, self->f, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_wait(self->q, NULL, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_signal(self->q, NULL, 1));
	/* A fence of another device cannot be used on this queue. */
	EXPECT_EQ(-EINVAL, d3dq_queue_wait(self->q, self->foreign, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_signal(self->q, self->foreign, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(self->q, NULL, 1));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(NULL, NULL, 0));
	ASSERT_EQ(0, d3dq_cmdlist_create(self->other, &l));
	ASSERT_EQ(0, d3dq_cmdlist_close(l));
	EXPECT_EQ(-EINVAL, d3dq_queue_execute(self->q, &l, 1));
	d3dq_cmdlist_destroy(l);
	/* None of this removed the device or touched the fence. */
	EXPECT_EQ(0, d3dq_device_removed_reason(self->dev));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->f));
	ASSERT_EQ(0, util_queue_idle(self->dev, self->q));
}

TEST_F(api, multi_foreign_fence)
{
	struct d3dq_fence *fs[2] = { self->f, self->foreign };
	uint64_t vs[2] = { 0, 0 };

	EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, fs, vs, 2, D3DQ_MULTIPLE_FENCE_WAIT_ALL, -1));
	EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, NULL, vs, 2, D3DQ_MULTIPLE_FENCE_WAIT_ALL, -1));
}

TEST_HARNESS_MAIN
