// SPDX-License-Identifier: MIT
/*
 * libd3dq: opening, closing and removing devices.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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

static int device_open(const char *path, d3dq_signal_event_fn signal_event,
		       void *context, struct d3dq_device **out)
{
	struct d3dq_device *dev;
	uint64_t v;
	int fd, ret;

	fd = open_node(path);
	if (fd < 0)
		return fd;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		close(fd);
		return -ENOMEM;
	}
	dev->fd = fd;
	dev->signal_event = signal_event;
	dev->event_context = context;
	ret = get_param(fd, DRM_D3DQ_PARAM_UAPI_VERSION, &v);
	if (ret)
		goto err;
	if ((v >> 16) != DRM_D3DQ_UAPI_MAJOR) {
		ret = -ENOTSUP;
		goto err;
	}
	ret = get_param(fd, DRM_D3DQ_PARAM_FEATURES, &v);
	if (ret)
		goto err;
	dev->has_realtime = v & DRM_D3DQ_FEATURE_PRIORITY;
	/*
	 * Fences, their queue signals and waits and the token registrations
	 * are the kernel's (uapi 1.3 to 1.5): a driver without them is too
	 * old for this library.
	 */
	if (!(v & DRM_D3DQ_FEATURE_FENCE) ||
	    !(v & DRM_D3DQ_FEATURE_FENCE_SUBMIT) ||
	    !(v & DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ) ||
	    !(v & DRM_D3DQ_FEATURE_FENCE_HOLD)) {
		ret = -ENOTSUP;
		goto err;
	}
	/* uapi 1.6: the kernel removes the file when a queue is lost. */
	if (v & DRM_D3DQ_FEATURE_REMOVE_ON_LOSS) {
		struct drm_d3dq_remove arm = {
			.flags = DRM_D3DQ_REMOVE_ON_LOSS,
		};

		ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_REMOVE, &arm);
		if (ret)
			goto err;
		dev->on_loss = true;
	}
	dev->page_size = sysconf(_SC_PAGESIZE);
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
	if (signal_event) {
		ret = dispatch_get(fd);
		if (ret)
			goto err;
	}

	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->remove_lock, NULL);
	pthread_mutex_init(&dev->page_lock, NULL);
	list_init(&dev->queues);
	list_init(&dev->fences);
	list_init(&dev->buffers);
	list_init(&dev->cmdlists);
	*out = dev;
	return 0;

err:
	close(fd);
	free(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_device_open(const char *path, struct d3dq_device **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	return device_open(path, NULL, NULL, out);
}

D3DQ_EXPORT int d3dq_device_open_desc(const struct d3dq_device_desc *desc,
				      struct d3dq_device **out)
{
	struct d3dq_device_desc d;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = device_desc_copy(desc, &d);
	if (ret)
		return ret;
	return device_open(d.path, d.signal_event, d.context, out);
}

/*
 * Everything the application did not destroy is destroyed here, queues
 * first (their armed work finishes, held work is dropped), then fences
 * (which fires what is registered on them, R14: the token callbacks are
 * called before the close returns).
 */
D3DQ_EXPORT void d3dq_device_close(struct d3dq_device *dev)
{
	struct list *pos, *tmp;

	if (!dev)
		return;
	list_for_each_safe(pos, tmp, &dev->queues)
		d3dq_queue_destroy(container_of(pos, struct d3dq_queue,
						dev_link));
	list_for_each_safe(pos, tmp, &dev->fences)
		d3dq_fence_destroy(container_of(pos, struct d3dq_fence,
						dev_link));
	list_for_each_safe(pos, tmp, &dev->buffers)
		d3dq_buffer_destroy(container_of(pos, struct d3dq_buffer,
						 dev_link));
	list_for_each_safe(pos, tmp, &dev->cmdlists)
		d3dq_cmdlist_destroy(container_of(pos, struct d3dq_cmdlist,
						  dev_link));
	if (dev->signal_event)
		dispatch_put(dev);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->remove_lock);
	pthread_mutex_destroy(&dev->page_lock);
	free(dev);
}

D3DQ_EXPORT int d3dq_device_removed_reason(struct d3dq_device *dev)
{
	/* -EFAULT means "not a device": dev_remove() never records it. */
	if (!dev)
		return -EFAULT;
	return dev_removal_error(dev);
}

D3DQ_EXPORT int d3dq_device_remove(struct d3dq_device *dev)
{
	if (!dev)
		return -EINVAL;
	dev_remove(dev, -ENODEV);
	return 0;
}
