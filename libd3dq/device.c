// SPDX-License-Identifier: MIT
/*
 * libd3dq: devices, ioctl helpers and device removal.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int d3dq_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

int syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create args = { 0 };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &args);

	if (!ret)
		*handle = args.handle;
	return ret;
}

void syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy args = { .handle = handle };

	if (handle)
		d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &args);
}

int syncobj_query(int fd, uint32_t *handles, uint64_t *points, uint32_t n,
		  uint32_t flags)
{
	struct drm_syncobj_timeline_array args = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.count_handles = n,
		.flags = flags,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_QUERY, &args);
}

int syncobj_timeline_signal(int fd, uint32_t handle, uint64_t point)
{
	struct drm_syncobj_timeline_array args = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &args);
}

int syncobj_timeline_wait(int fd, uint32_t *handles, uint64_t *points,
			  uint32_t n, int64_t abs_timeout_ns, uint32_t flags,
			  uint32_t *first)
{
	struct drm_syncobj_timeline_wait args = {
		.handles = (uintptr_t)handles,
		.points = (uintptr_t)points,
		.timeout_nsec = abs_timeout_ns,
		.count_handles = n,
		.flags = flags,
	};
	int ret = d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &args);

	if (!ret && first)
		*first = args.first_signaled;
	return ret;
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t abs_timeout(uint64_t timeout_ns)
{
	int64_t now = now_ns();

	if (timeout_ns >= (uint64_t)(INT64_MAX - now))
		return INT64_MAX;
	return now + (int64_t)timeout_ns;
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_d3dq_get_param args = { .param = param };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &args);

	if (!ret)
		*value = args.value;
	return ret;
}

static bool is_d3dq(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ok;

	if (!v)
		return false;
	ok = v->name && !strcmp(v->name, "d3dq");
	drmFreeVersion(v);
	return ok;
}

static int open_node(const char *path)
{
	char name[64];
	int i, fd;

	if (path) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (!is_d3dq(fd)) {
			close(fd);
			return -ENODEV;
		}
		return fd;
	}
	for (i = 128; i < 192; i++) {
		snprintf(name, sizeof(name), "%s/renderD%d", DRM_DIR_NAME, i);
		fd = open(name, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_d3dq(fd))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

/*
 * DRM_IOCTL_SYNCOBJ_EVENTFD exists from Linux 6.6. Older kernels reject the
 * unknown ioctl number with -EINVAL.
 */
static bool probe_syncobj_eventfd(int fd)
{
	struct drm_syncobj_eventfd args = { 0 };
	const char *env = getenv("D3DQ_NO_SYNCOBJ_EVENTFD");
	uint32_t handle;
	bool ok;
	int efd;

	if (env && *env && strcmp(env, "0"))
		return false;
	if (syncobj_create(fd, &handle))
		return false;
	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0) {
		syncobj_destroy(fd, handle);
		return false;
	}
	args.handle = handle;
	args.fd = efd;
	ok = !d3dq_ioctl(fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &args);
	syncobj_destroy(fd, handle);
	close(efd);
	return ok;
}

D3DQ_EXPORT int d3dq_device_open(const char *path, struct d3dq_device **out)
{
	struct d3dq_device *dev;
	uint64_t v;
	int fd, ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	fd = open_node(path);
	if (fd < 0)
		return fd;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		close(fd);
		return -ENOMEM;
	}
	dev->fd = fd;
	ret = get_param(fd, DRM_D3DQ_PARAM_UAPI_VERSION, &v);
	if (ret)
		goto err;
	if ((v >> 16) != DRM_D3DQ_UAPI_MAJOR) {
		ret = -ENOTSUP;
		goto err;
	}
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_SYNCS, &v);
	if (ret)
		goto err;
	dev->max_syncs = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_CMD_BYTES, &v);
	if (ret)
		goto err;
	dev->max_cmd_bytes = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	ret = get_param(fd, DRM_D3DQ_PARAM_MAX_DELAY_NS, &v);
	if (ret)
		goto err;
	dev->max_delay_ns = v;
	if (dev->max_syncs < 2 || dev->max_cmd_bytes < 64) {
		ret = -ENOTSUP;
		goto err;
	}
	ret = syncobj_create(fd, &dev->doorbell);
	if (ret)
		goto err;
	dev->has_syncobj_eventfd = probe_syncobj_eventfd(fd);

	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->remove_lock, NULL);
	pthread_mutex_init(&dev->flush_lock, NULL);
	pthread_mutex_init(&dev->doorbell_lock, NULL);
	list_init(&dev->queues);
	list_init(&dev->fences);
	*out = dev;
	return 0;

err:
	close(fd);
	free(dev);
	return ret;
}

D3DQ_EXPORT void d3dq_device_close(struct d3dq_device *dev)
{
	struct list *pos, *tmp;

	if (!dev)
		return;
	worker_stop(dev);
	/* Objects the application forgot: release what we still can. */
	list_for_each_safe(pos, tmp, &dev->queues)
		d3dq_queue_destroy(container_of(pos, struct d3dq_queue,
						dev_link));
	list_for_each_safe(pos, tmp, &dev->fences)
		d3dq_fence_destroy(container_of(pos, struct d3dq_fence,
						dev_link));
	syncobj_destroy(dev->fd, dev->doorbell);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->remove_lock);
	pthread_mutex_destroy(&dev->flush_lock);
	pthread_mutex_destroy(&dev->doorbell_lock);
	free(dev);
}

D3DQ_EXPORT int d3dq_device_removed_reason(struct d3dq_device *dev)
{
	int reason;

	/* -EFAULT means "not a device": no removal reason may look like it. */
	if (!dev)
		return -EFAULT;
	reason = atomic_load(&dev->removed_reason);
	return reason == -EFAULT ? -EIO : reason;
}

bool dev_removed(struct d3dq_device *dev)
{
	return atomic_load_explicit(&dev->stopped, memory_order_acquire);
}

/* What creating an object returns: 0, or the removal reason. */
int dev_removal_error(struct d3dq_device *dev)
{
	int reason;

	if (!dev_removed(dev))
		return 0;
	reason = atomic_load(&dev->removed_reason);
	/* Removal still in progress: the reason is not published yet. */
	return reason ? reason : -ENODEV;
}

/*
 * Remove the device: first make sure no job of ours runs any more, then
 * release every waiter. May be called with a queue lock held (never with
 * the device lock or a fence lock held); the queues are flushed (their held
 * work dropped) by dev_run_flushes() once the callers drop their locks.
 */
void dev_remove(struct d3dq_device *dev, int reason)
{
	struct drm_d3dq_remove args = { 0 };
	struct list *pos, *tmp;

	/*
	 * Concurrent callers wait here until the first one is done, so that
	 * every caller returns with the device fully removed.
	 */
	pthread_mutex_lock(&dev->remove_lock);
	if (dev_removed(dev)) {
		pthread_mutex_unlock(&dev->remove_lock);
		return;
	}

	/*
	 * Returns once no job of this file runs or will run. Only then does
	 * the device count as removed: shared fences read UINT64_MAX and
	 * queue operations are refused from that moment on.
	 */
	d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_REMOVE, &args);
	atomic_store_explicit(&dev->stopped, true, memory_order_release);

	pthread_mutex_lock(&dev->lock);
	/*
	 * Every value first: a thread that the release of one fence wakes
	 * must find the others at UINT64_MAX too (shared fences read it
	 * through dev_removed()).
	 */
	list_for_each_safe(pos, tmp, &dev->fences) {
		struct d3dq_fence *f = container_of(pos, struct d3dq_fence,
						    dev_link);

		if (!f->shared)
			atomic_store(&f->value, UINT64_MAX);
	}
	/*
	 * Then the reason: whoever reads it finds every value at UINT64_MAX,
	 * and whoever is released below finds the reason.
	 */
	atomic_store_explicit(&dev->removed_reason, reason,
			      memory_order_release);
	list_for_each_safe(pos, tmp, &dev->fences)
		fence_release_all(container_of(pos, struct d3dq_fence,
					       dev_link));
	list_for_each_safe(pos, tmp, &dev->queues)
		dev_queue_flush_later(dev, container_of(pos, struct d3dq_queue,
							dev_link));
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_unlock(&dev->remove_lock);
	worker_ring(dev);
}

D3DQ_EXPORT int d3dq_device_remove(struct d3dq_device *dev)
{
	if (!dev)
		return -EINVAL;
	dev_remove(dev, -ENODEV);
	dev_run_flushes(dev);
	return 0;
}
