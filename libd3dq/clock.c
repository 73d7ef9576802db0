// SPDX-License-Identifier: MIT
/*
 * libd3dq: the engine clock, for ID3D12CommandQueue::GetTimestampFrequency
 * and GetClockCalibration.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The engine's timestamps are CLOCK_MONOTONIC read in the kernel, counted
 * in the ticks DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY gives: one reading of
 * CLOCK_MONOTONIC is both sides of a calibration.
 */
#define _GNU_SOURCE
#include <time.h>

#include "internal.h"

#define NSEC_PER_SEC 1000000000ull

static int timestamp_frequency(struct d3dq_device *dev, uint64_t *frequency)
{
	struct drm_d3dq_get_param args = {
		.param = DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY,
	};
	int ret;

	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	ret = d3dqp_dev_removal_error(dev);
	if (!ret)
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_GET_PARAM, &args);
	d3dqp_dev_put(dev);
	if (ret)
		return ret;
	if (!args.value)
		return -EIO;
	*frequency = args.value;
	return 0;
}

D3DQ_EXPORT int d3dq_device_get_timestamp_frequency(struct d3dq_device *dev,
						    uint64_t *frequency)
{
	if (!dev || !frequency)
		return -EINVAL;
	return timestamp_frequency(dev, frequency);
}

D3DQ_EXPORT int d3dq_device_get_clock_calibration(struct d3dq_device *dev,
						  uint64_t *gpu_timestamp,
						  uint64_t *cpu_timestamp)
{
	struct timespec ts;
	uint64_t frequency, ns;
	int ret;

	if (!dev || !gpu_timestamp || !cpu_timestamp)
		return -EINVAL;
	ret = timestamp_frequency(dev, &frequency);
	if (ret)
		return ret;
	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return -errno;
	ns = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
	*cpu_timestamp = ns;
	if (frequency == NSEC_PER_SEC)
		*gpu_timestamp = ns;
	else
		*gpu_timestamp = (uint64_t)((unsigned __int128)ns * frequency /
					    NSEC_PER_SEC);
	return 0;
}
