// SPDX-License-Identifier: MIT
/*
 * libd3dq: devices, the kernel calls everything else uses, the mapped
 * pages of fence values, token events, and the ready list.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* What creating an object returns: 0, or the removal reason. */
int dev_removal_error(struct d3dq_device *dev)
{
	if (!dev_removed(dev))
		return 0;
	/* Stored before the device stopped (dev_remove()). */
	return atomic_load_explicit(&dev->removed_reason,
				    memory_order_relaxed);
}

/*
 * Make an object visible to device removal and d3dq_device_close().
 * Checked under the device lock, which removal holds while it takes its
 * snapshot of the lists: an object is either in the snapshot or refused.
 */
int dev_link_object(struct d3dq_device *dev, struct list *link,
		    struct list *head)
{
	int ret;

	pthread_mutex_lock(&dev->lock);
	ret = dev_removal_error(dev);
	if (!ret)
		list_add_tail(link, head);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/*
 * Ask for @q to be flushed (holdback.c) once the caller dropped its
 * locks. Takes a reference to the queue until then.
 */
void dev_ready_push(struct d3dq_device *dev, struct d3dq_queue *q)
{
	pthread_mutex_lock(&dev->ready_lock);
	if (!q->ready_queued) {
		q->ready_queued = true;
		queue_ref(q);
		q->ready_next = NULL;
		if (dev->ready_tail)
			dev->ready_tail->ready_next = q;
		else
			dev->ready_head = q;
		dev->ready_tail = q;
		atomic_fetch_add(&dev->nready, 1);
	}
	pthread_mutex_unlock(&dev->ready_lock);
}

/*
 * Wake the worker: it waits for the doorbell's next point. The lock keeps
 * the points in order; it is only taken here.
 */
void dev_ring(struct d3dq_device *dev)
{
	pthread_mutex_lock(&dev->doorbell_lock);
	dev->doorbell_point++;
	syncobj_timeline_signal(dev->fd, dev->doorbell, dev->doorbell_point);
	atomic_store(&dev->doorbell_seen, dev->doorbell_point);
	pthread_mutex_unlock(&dev->doorbell_lock);
}

/* Kernel fences. */

int kfence_create(int fd, uint64_t value, uint32_t flags, uint32_t *handle,
		  uint64_t *mmap_offset, uint32_t *value_offset)
{
	struct drm_d3dq_fence_create args = { .value = value, .flags = flags };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &args);

	if (ret)
		return ret;
	*handle = args.handle;
	if (mmap_offset)
		*mmap_offset = args.mmap_offset;
	if (value_offset)
		*value_offset = args.value_offset;
	return 0;
}

int kfence_import(int fd, int xfd, uint32_t *handle, uint64_t *mmap_offset,
		  uint32_t *value_offset)
{
	struct drm_d3dq_fence_import args = { .fd = xfd };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &args);

	if (ret)
		return ret;
	*handle = args.handle;
	if (mmap_offset)
		*mmap_offset = args.mmap_offset;
	if (value_offset)
		*value_offset = args.value_offset;
	return 0;
}

int kfence_export(int fd, uint32_t handle, int *xfd)
{
	struct drm_d3dq_fence_export args = { .handle = handle };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EXPORT, &args);

	if (!ret)
		*xfd = args.fd;
	return ret;
}

void kfence_destroy(int fd, uint32_t handle)
{
	struct drm_d3dq_fence_destroy args = { .handle = handle };

	if (handle)
		d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &args);
}

int kfence_signal(int fd, uint32_t handle, uint64_t value)
{
	struct drm_d3dq_fence_signal args = { .handle = handle, .value = value };

	return d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL, &args);
}

int kfence_wait(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		uint32_t flags, int64_t deadline)
{
	struct drm_d3dq_fence_wait args = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.deadline_ns = deadline,
		.flags = flags,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &args);
}

int kfence_event(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		 uint32_t flags, int eventfd, uint32_t sobj, uint64_t point)
{
	struct drm_d3dq_fence_event args = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.flags = flags,
		.eventfd = eventfd,
		.syncobj = sobj,
		.point = point,
	};

	return d3dq_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &args);
}

/*
 * Value pages. Fences that are not shared share the kernel's pages of
 * 512 values: each page is mapped once, read-only, and unmapped when its
 * last fence goes, before the kernel handle is destroyed (the kernel may
 * give a freed page's mmap offset to a new fence, which must then get a
 * mapping of its own page).
 */
int vpage_map(struct d3dq_device *dev, uint64_t offset, uint32_t value_offset,
	      struct vpage **page, const _Atomic uint64_t **vp)
{
	struct vpage *p;
	int ret = 0;

	if (value_offset % sizeof(uint64_t) ||
	    value_offset >= (uint64_t)dev->page_size)
		return -EINVAL;
	pthread_mutex_lock(&dev->page_lock);
	for (p = dev->pages; p && p->offset != offset; p = p->next)
		;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		p->addr = mmap(NULL, dev->page_size, PROT_READ, MAP_SHARED,
			       dev->fd, (off_t)offset);
		if (p->addr == MAP_FAILED) {
			ret = -errno;
			free(p);
			goto out;
		}
		p->offset = offset;
		p->next = dev->pages;
		dev->pages = p;
	}
	p->refs++;
	*page = p;
	*vp = (const _Atomic uint64_t *)((const char *)p->addr +
					 value_offset);
out:
	pthread_mutex_unlock(&dev->page_lock);
	return ret;
}

void vpage_unmap(struct d3dq_device *dev, struct vpage *page)
{
	struct vpage **pp;

	if (!page)
		return;
	pthread_mutex_lock(&dev->page_lock);
	if (--page->refs == 0) {
		for (pp = &dev->pages; *pp != page; pp = &(*pp)->next)
			;
		*pp = page->next;
		munmap(page->addr, dev->page_size);
		free(page);
	}
	pthread_mutex_unlock(&dev->page_lock);
}

/* Token events. */

void evref_put(struct evref *e)
{
	if (e->item)
		dispatch_item_free(e->item);
	free(e);
}

/*
 * A token event: the registration's own evref, with the call of the
 * device's callback that firing hands to the dispatcher.
 */
int evref_token(struct d3dq_device *dev, void *token, struct evref **out)
{
	struct evref *e;

	if (!dev->signal_event)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->item = dispatch_item_new(dev->signal_event, token,
				    dev->event_context);
	if (!e->item) {
		free(e);
		return -ENOMEM;
	}
	e->token = token;
	*out = e;
	return 0;
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_d3dq_get_param args = { .param = param };
	int ret = d3dq_ioctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &args);

	if (!ret)
		*value = args.value;
	return ret;
}

/*
 * Is the device unplugged? After an unplug every call fails with
 * -ENODEV (the kernel set every fence to UINT64_MAX then).
 */
bool dev_unplugged(struct d3dq_device *dev)
{
	uint64_t v;

	return get_param(dev->fd, DRM_D3DQ_PARAM_UAPI_VERSION, &v) == -ENODEV;
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
	dev->can_release = v & DRM_D3DQ_FEATURE_WAIT_RELEASE;
	dev->has_realtime = v & DRM_D3DQ_FEATURE_PRIORITY;
	/*
	 * Fences are the kernel's (uapi 1.3), and shared ones are watched
	 * with syncobj registrations (1.4): a driver without them is too
	 * old for this library.
	 */
	if (!(v & DRM_D3DQ_FEATURE_FENCE) ||
	    !(v & DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ)) {
		ret = -ENOTSUP;
		goto err;
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
		ret = dispatch_get();
		if (ret)
			goto err;
	}
	ret = syncobj_create(fd, &dev->doorbell);
	if (ret) {
		if (signal_event)
			dispatch_put();
		goto err;
	}

	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->remove_lock, NULL);
	pthread_mutex_init(&dev->apply_lock, NULL);
	pthread_mutex_init(&dev->ready_lock, NULL);
	pthread_mutex_init(&dev->page_lock, NULL);
	pthread_mutex_init(&dev->watch_lock, NULL);
	pthread_mutex_init(&dev->doorbell_lock, NULL);
	pthread_mutex_init(&dev->worker_lock, NULL);
	list_init(&dev->queues);
	list_init(&dev->fences);
	list_init(&dev->watches);
	list_init(&dev->active);
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
 * first (their submitted work finishes, held work is dropped), so that
 * the waits they still had on fences are gone before the fences.
 */
D3DQ_EXPORT void d3dq_device_close(struct d3dq_device *dev)
{
	struct list *pos, *tmp;

	if (!dev)
		return;
	worker_stop(dev);
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
	/* The worker is gone: the watches it did not see fire go now. */
	list_for_each_safe(pos, tmp, &dev->watches) {
		struct watch *w = container_of(pos, struct watch, link);

		list_del(&w->link);
		syncobj_destroy(dev->fd, w->sobj);
		fence_unref(w->fence);
		free(w);
	}
	/*
	 * Destroying the fences fired what was registered (R14): the
	 * callbacks are called before the close returns.
	 */
	if (dev->signal_event)
		dispatch_put();
	syncobj_destroy(dev->fd, dev->doorbell);
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->remove_lock);
	pthread_mutex_destroy(&dev->apply_lock);
	pthread_mutex_destroy(&dev->ready_lock);
	pthread_mutex_destroy(&dev->page_lock);
	pthread_mutex_destroy(&dev->watch_lock);
	pthread_mutex_destroy(&dev->doorbell_lock);
	pthread_mutex_destroy(&dev->worker_lock);
	free(dev);
}

D3DQ_EXPORT int d3dq_device_removed_reason(struct d3dq_device *dev)
{
	/* -EFAULT means "not a device": dev_remove() never records it. */
	if (!dev)
		return -EFAULT;
	/*
	 * The kernel set the fences to UINT64_MAX and fired their events
	 * when the removal stopped the device: a removal under way is
	 * complete before its reason is read (R15, one instant).
	 */
	if (dev_refusing(dev) && !dev_removed(dev))
		dev_refused(dev);
	return dev_removal_error(dev);
}

D3DQ_EXPORT int d3dq_device_remove(struct d3dq_device *dev)
{
	if (!dev)
		return -EINVAL;
	dev_remove(dev, -ENODEV);
	run_flushes(dev);
	return 0;
}
