// SPDX-License-Identifier: MIT
/*
 * libd3dq: buffers (shmem GEM objects mapped into the process). The
 * destruction unmaps the buffer; its handle is closed with its last
 * reference, which the calls in progress and the command lists that name
 * it hold (issue 39): a handle that a list names is never given to
 * another buffer, so a list can never write into another object's
 * memory, and executing it is refused (-ENOENT) once the buffer was
 * destroyed. Since 0.5 a buffer may be another driver's dma-buf imported
 * (d3dq_buffer_import()).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

void d3dqp_buffer_put(struct d3dq_buffer *buf)
{
	struct d3dq_device *dev = buf->dev;

	struct drm_gem_close gclose = { .handle = buf->handle };

	if (atomic_fetch_sub(&buf->refs, 1) != 1)
		return;
	/* An inherited buffer's handle is the parent's (fork). */
	if (gclose.handle && !d3dqp_inherited(dev)) {
		/* In order with imports, which may get the same handle. */
		if (buf->imported) {
			pthread_mutex_lock(&dev->import_lock);
			list_del(&buf->import_link);
		}
		d3dqp_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &gclose);
		if (buf->imported)
			pthread_mutex_unlock(&dev->import_lock);
	}
	free(buf);
	d3dqp_dev_put(dev);
}

/* A buffer of @dev, whose reference the caller holds. */
static int buffer_new(struct d3dq_device *dev, uint64_t size,
		      struct d3dq_buffer **out)
{
	struct drm_d3dq_bo_create create = { .size = size };
	struct drm_d3dq_bo_mmap_offset off = { 0 };
	struct drm_gem_close gclose = { 0 };
	struct d3dq_buffer *buf;
	int ret;

	ret = d3dqp_dev_removal_error(dev);
	if (ret)
		return ret;

	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_BO_CREATE, &create);
	if (ret)
		goto err_free;
	off.handle = create.handle;
	ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &off);
	if (ret)
		goto err_close;
	buf->map = mmap(NULL, create.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			dev->fd, (off_t)off.offset);
	if (buf->map == MAP_FAILED) {
		ret = -errno;
		goto err_close;
	}
	buf->dev = dev;
	d3dqp_dev_get(dev);
	atomic_init(&buf->refs, 1);
	buf->handle = create.handle;
	buf->size = size;
	buf->map_size = create.size;
	list_init(&buf->dev_link);
	ret = d3dqp_dev_link_object(dev, &buf->dev_link, &dev->buffers);
	if (ret) {
		munmap(buf->map, buf->map_size);
		d3dqp_buffer_put(buf);	/* closes the handle */
		return ret;
	}
	*out = buf;
	return 0;

err_close:
	gclose.handle = create.handle;
	d3dqp_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &gclose);
err_free:
	free(buf);
	return ret;
}

D3DQ_EXPORT int d3dq_buffer_create(struct d3dq_device *dev, uint64_t size,
				   struct d3dq_buffer **out)
{
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || !size)
		return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	/*
	 * Larger than the driver's largest buffer (MAX_BO_SIZE): memory the
	 * device does not have, E_OUTOFMEMORY on Windows (issue 39).
	 */
	ret = size > dev->max_bo_size ? -ENOMEM : buffer_new(dev, size, out);
	d3dqp_dev_put(dev);
	return ret;
}

/*
 * PRIME import of dma-buf @fd into @dev (uapi 1.12 for another driver's).
 * The kernel gives a handle already open when the dma-buf is a buffer of
 * this device file already (imported before, and not closed yet): that
 * buffer is the caller's to use, and this fails with -EEXIST rather than
 * share a handle that the first one's destruction would close.
 */
static int buffer_import(struct d3dq_device *dev, int fd,
			 struct d3dq_buffer **out)
{
	struct drm_d3dq_bo_mmap_offset off = { 0 };
	struct d3dq_buffer *buf, *b;
	struct list *pos;
	uint32_t handle;
	off_t size;
	int ret;

	ret = d3dqp_dev_removal_error(dev);
	if (ret)
		return ret;
	/* A dma-buf's size, as its file reports it. */
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0)
		return size < 0 && errno != ESPIPE ? -errno : -EINVAL;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;

	pthread_mutex_lock(&dev->import_lock);
	ret = drmPrimeFDToHandle(dev->fd, fd, &handle) ? -errno : 0;
	/* Before uapi 1.12 the driver takes its own buffers only. */
	if (ret == -EINVAL && !dev->has_implicit)
		ret = -EOPNOTSUPP;
	for (pos = dev->imports.next; !ret && pos != &dev->imports;
	     pos = pos->next) {
		b = container_of(pos, struct d3dq_buffer, import_link);
		if (b->handle == handle)
			ret = -EEXIST;
	}
	if (ret) {
		pthread_mutex_unlock(&dev->import_lock);
		free(buf);
		return ret;
	}
	buf->imported = true;
	buf->handle = handle;
	list_add_tail(&buf->import_link, &dev->imports);
	pthread_mutex_unlock(&dev->import_lock);

	buf->dev = dev;
	d3dqp_dev_get(dev);
	atomic_init(&buf->refs, 1);
	buf->size = (uint64_t)size;
	buf->map_size = (uint64_t)size;
	/* Through the exporter; an exporter may allow no CPU mapping. */
	off.handle = handle;
	buf->map = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET,
			       &off) ? MAP_FAILED :
		   mmap(NULL, buf->map_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, dev->fd, (off_t)off.offset);
	if (buf->map == MAP_FAILED)
		buf->map = NULL;
	list_init(&buf->dev_link);
	ret = d3dqp_dev_link_object(dev, &buf->dev_link, &dev->buffers);
	if (ret) {
		if (buf->map)
			munmap(buf->map, buf->map_size);
		d3dqp_buffer_put(buf);	/* closes the handle */
		return ret;
	}
	*out = buf;
	return 0;
}

D3DQ_EXPORT int d3dq_buffer_import(struct d3dq_device *dev, int fd,
				   struct d3dq_buffer **out)
{
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || fd < 0)
		return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	ret = buffer_import(dev, fd, out);
	d3dqp_dev_put(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_device_get_max_buffer_size(struct d3dq_device *dev,
						uint64_t *size)
{
	if (!dev || !size)
		return -EINVAL;
	if (d3dqp_dev_usable(dev))
		return -ENODEV;
	*size = dev->max_bo_size;
	return 0;
}

/* NULL for an inherited buffer (fork): it is the parent's memory. */
D3DQ_EXPORT void *d3dq_buffer_map(struct d3dq_buffer *buf)
{
	return buf && !d3dqp_inherited(buf->dev) ? buf->map : NULL;
}

/*
 * Once (the device's close may destroy it too). An inherited buffer
 * (fork) is only unmapped: its mapping is the child's, its handle the
 * parent's.
 */
D3DQ_EXPORT void d3dq_buffer_destroy(struct d3dq_buffer *buf)
{
	struct d3dq_device *dev;

	if (!buf || atomic_exchange(&buf->destroyed, true))
		return;
	dev = buf->dev;
	if (d3dqp_inherited(dev)) {
		if (buf->map)
			munmap(buf->map, buf->map_size);
		return;
	}
	pthread_mutex_lock(&dev->lock);
	list_del(&buf->dev_link);
	pthread_mutex_unlock(&dev->lock);
	if (buf->map)
		munmap(buf->map, buf->map_size);
	d3dqp_buffer_put(buf);
}
