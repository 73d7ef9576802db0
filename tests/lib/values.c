// SPDX-License-Identifier: GPL-2.0
/*
 * R1, R2: fence values set at creation and by CPU signals, rewinds,
 * UINT64_MAX and jumps beyond 2^32; events firing during the signal call.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

FIXTURE(dev) {
	struct d3dq_device *dev;
};

FIXTURE_SETUP(dev)
{
	self->dev = util_open();
	if (!self->dev)
		SKIP(return, "no d3dq device");
}

FIXTURE_TEARDOWN(dev)
{
	d3dq_device_close(self->dev);
}

TEST_F(dev, initial_values)
{
	static const uint64_t init[] = { 0, 99, 1ull << 60, UINT64_MAX };
	struct d3dq_fence *f;
	unsigned int i;

	for (i = 0; i < sizeof(init) / sizeof(init[0]); i++) {
		ASSERT_EQ(0, d3dq_fence_create(self->dev, init[i], 0, &f));
		EXPECT_EQ(init[i], d3dq_fence_get_completed_value(f));
		d3dq_fence_destroy(f);
	}
}

TEST_F(dev, cpu_signal_rewind_and_jumps)
{
	static const uint64_t seq[] = {
		5, 3, 0, UINT64_MAX, 7, (1ull << 33) + 1, 1ull << 62, 1,
		(1ull << 40) + 12345, 0,
	};
	struct d3dq_fence *f;
	unsigned int i;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 10, 0, &f));
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		ASSERT_EQ(0, d3dq_fence_signal(f, seq[i]));
		EXPECT_EQ(seq[i], d3dq_fence_get_completed_value(f));
	}
	d3dq_fence_destroy(f);
}

TEST_F(dev, events_fire_during_signal)
{
	struct d3dq_fence *f;
	int e1 = util_eventfd(), e2 = util_eventfd(), e3 = util_eventfd();

	ASSERT_GE(e1, 0);
	ASSERT_GE(e2, 0);
	ASSERT_GE(e3, 0);
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &f));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 5, e1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 1ull << 40, e2));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, UINT64_MAX, e3));
	EXPECT_EQ(0, util_event_take(e1));

	ASSERT_EQ(0, d3dq_fence_signal(f, 6));
	/* Returned from the signal: the event must already be set. */
	EXPECT_EQ(1, util_event_take(e1));
	EXPECT_EQ(0, util_event_take(e2));

	ASSERT_EQ(0, d3dq_fence_signal(f, (1ull << 40) + 1));
	EXPECT_EQ(1, util_event_take(e2));
	EXPECT_EQ(0, util_event_take(e3));
	ASSERT_EQ(0, d3dq_fence_signal(f, UINT64_MAX));
	EXPECT_EQ(1, util_event_take(e3));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(f));
	EXPECT_EQ(0, util_event_take(e1));

	d3dq_fence_destroy(f);
	close(e1);
	close(e2);
	close(e3);
}

TEST_F(dev, bad_arguments)
{
	struct d3dq_fence *f = (void *)1;

	EXPECT_EQ(-EINVAL, d3dq_fence_create(self->dev, 0, 2, &f));
	EXPECT_EQ(NULL, f);
	EXPECT_EQ(-EINVAL, d3dq_fence_create(NULL, 0, 0, &f));
	EXPECT_EQ(-EINVAL, d3dq_fence_create(self->dev, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, d3dq_fence_signal(NULL, 1));
	d3dq_fence_destroy(NULL);
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &f));
	EXPECT_EQ(-ETIMEDOUT, d3dq_fence_wait(f, 1, 0));
	EXPECT_EQ(-ETIMEDOUT, d3dq_fence_wait(f, 1, 10 * MS));
	EXPECT_EQ(0, d3dq_fence_wait(f, 0, 0));
	EXPECT_EQ(-EINVAL, d3dq_fence_export(f, &(int){ 0 }));
	d3dq_fence_destroy(f);
}

TEST_HARNESS_MAIN
