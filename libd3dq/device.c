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
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

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

/* Open @path, or else the first d3dq render node: an fd or -errno. */
static int open_node(const char *path)
{
	char name[64];
	int i, fd;

	for (i = 128; i < 192; i++) {
		snprintf(name, sizeof(name), "%s/renderD%d", DRM_DIR_NAME, i);
		fd = open(path ? path : name, O_RDWR | O_CLOEXEC);
		if (fd < 0 && path)
			return -errno;
		if (fd >= 0 && is_d3dq(fd))
			return fd;
		if (fd >= 0)
			close(fd);
		if (path)
			break;
	}
	return -ENODEV;
}

/* What the library leaves to the kernel (uapi 1.3 to 1.6). */
#define NEEDED (DRM_D3DQ_FEATURE_FENCE | DRM_D3DQ_FEATURE_FENCE_SUBMIT | \
		DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ | \
		DRM_D3DQ_FEATURE_FENCE_HOLD | DRM_D3DQ_FEATURE_REMOVE_ON_LOSS)

static int device_open(const char *path, d3dq_signal_event_fn signal_event,
		       void *context, struct d3dq_device **out)
{
	static const uint32_t params[] = {
		DRM_D3DQ_PARAM_UAPI_VERSION, DRM_D3DQ_PARAM_FEATURES,
		DRM_D3DQ_PARAM_MAX_SYNCS, DRM_D3DQ_PARAM_MAX_CMD_BYTES,
		DRM_D3DQ_PARAM_MAX_DELAY_NS, DRM_D3DQ_PARAM_MAX_BO_SIZE,
	};
	struct drm_d3dq_remove arm = { .flags = DRM_D3DQ_REMOVE_ON_LOSS };
	struct d3dq_device *dev;
	uint64_t v[6];
	int fd, ret = 0;
	unsigned int i;

	/* Before the first device: a child of fork() must tell its own. */
	d3dqp_fork_watch();
	fd = open_node(path);
	if (fd < 0)
		return fd;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		close(fd);
		return -ENOMEM;
	}
	for (i = 0; i < 6 && !ret; i++) {
		struct drm_d3dq_get_param args = { .param = params[i] };

		ret = d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &args);
		v[i] = args.value;
	}
	if (!ret && ((v[0] >> 16) != DRM_D3DQ_UAPI_MAJOR ||
		     (v[1] & NEEDED) != NEEDED || v[2] < 2 || v[3] < 64))
		ret = -ENOTSUP;
	/* The kernel removes the file when one of its queues is lost. */
	if (!ret)
		ret = d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_REMOVE, &arm);
	if (ret) {
		close(fd);
		free(dev);
		return ret;
	}
	dev->fd = fd;
	atomic_init(&dev->refs, 1);
	atomic_init(&dev->closed, false);
	dev->fork_gen = atomic_load(&d3dqp_fork_gen);
	dev->signal_event = signal_event;
	dev->event_context = context;
	dev->has_realtime = v[1] & DRM_D3DQ_FEATURE_PRIORITY;
	dev->has_sync_file = v[1] & DRM_D3DQ_FEATURE_FENCE_SYNC_FILE;
	dev->has_signal_on = v[1] & DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON;
	dev->has_event_armed = v[1] & DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED;
	dev->has_carry = v[1] & DRM_D3DQ_FEATURE_SUBMIT_CARRY;
	dev->has_tail = v[1] & DRM_D3DQ_FEATURE_SUBMIT_TAIL;
	dev->has_split = v[1] & DRM_D3DQ_FEATURE_SUBMIT_SPLIT;
	dev->has_cyclic = v[1] & DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC;
	dev->has_implicit = v[1] & DRM_D3DQ_FEATURE_IMPLICIT_SYNC;
	dev->has_job_only = v[1] & DRM_D3DQ_FEATURE_SYNC_JOB_ONLY;
	dev->has_armed_only = v[1] & DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY;
	dev->has_idle_word = v[1] & DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD;
	dev->max_syncs = v[2] > UINT32_MAX ? UINT32_MAX : (uint32_t)v[2];
	dev->max_cmd_bytes = v[3] > UINT32_MAX ? UINT32_MAX : (uint32_t)v[3];
	dev->max_delay_ns = v[4];
	dev->max_bo_size = v[5];
	dev->page_size = sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->remove_lock, NULL);
	pthread_rwlock_init(&dev->reg_lock, NULL);
	pthread_mutex_init(&dev->page_lock, NULL);
	pthread_mutex_init(&dev->import_lock, NULL);
	list_init(&dev->imports);
	list_init(&dev->queues);
	list_init(&dev->fences);
	list_init(&dev->buffers);
	list_init(&dev->cmdlists);
	ret = signal_event ? d3dqp_dispatch_get(dev) : 0;
	if (ret) {
		pthread_mutex_destroy(&dev->lock);
		pthread_mutex_destroy(&dev->remove_lock);
		pthread_rwlock_destroy(&dev->reg_lock);
		pthread_mutex_destroy(&dev->page_lock);
		pthread_mutex_destroy(&dev->import_lock);
		close(fd);
		free(dev);
		return ret;
	}
	*out = dev;
	return 0;
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
	ret = d3dqp_device_desc_copy(desc, &d);
	if (ret)
		return ret;
	return device_open(d.path, d.signal_event, d.context, out);
}

/*
 * An inherited device's close, in a child of fork(): the child's
 * descriptor of the parent's file and its mappings of it go, so that the
 * child does not keep the parent's file open; nothing else (no kernel
 * call, which would act on the parent's file, and no lock, which a
 * thread the child does not have may hold). The memory is the child's
 * copy of the parent's and stays.
 */
static void close_inherited(struct d3dq_device *dev)
{
	struct vpage *p;
	struct list *pos;

	if (atomic_exchange(&dev->closed, true))
		return;
	for (p = dev->pages; p; p = p->next)
		munmap(p->addr, dev->page_size);
	/* The lists are whole unless a parent's thread was changing them. */
	if (!pthread_mutex_trylock(&dev->lock)) {
		for (pos = dev->buffers.next; pos != &dev->buffers;
		     pos = pos->next)
			d3dq_buffer_destroy(container_of(pos,
							 struct d3dq_buffer,
							 dev_link));
		pthread_mutex_unlock(&dev->lock);
	}
	close(dev->fd);
}

/*
 * @obj: the first object of @head, unlinked, with a reference for the
 * caller; NULL once there is none. dev->lock held.
 */
#define POP(obj, head)							\
	do {								\
		(obj) = NULL;						\
		if ((head)->next != (head)) {				\
			(obj) = container_of((head)->next,		\
					     __typeof__(*(obj)), dev_link); \
			list_del(&(obj)->dev_link);			\
			obj_get(obj);					\
		}							\
	} while (0)

/*
 * Destroy what the program did not, queues first, then fences (R14:
 * callbacks are called before return). Each object leaves the list under
 * the lock with a reference of this close, so that a destruction of it
 * by another thread meanwhile is one destruction, and its memory stays
 * for the calls still in progress on it, which return -ENODEV (or 0 for
 * a wait its destruction released). The device goes with the last of
 * them: its descriptor is never closed under a call that may use it.
 */
D3DQ_EXPORT void d3dq_device_close(struct d3dq_device *dev)
{
	struct d3dq_cmdlist *l;
	struct d3dq_buffer *b;
	struct d3dq_queue *q;
	struct d3dq_fence *f;

	if (!dev)
		return;
	if (d3dqp_inherited(dev)) {
		close_inherited(dev);
		return;
	}
	pthread_mutex_lock(&dev->lock);
	if (atomic_exchange(&dev->closed, true)) {
		/* Closed twice: the second is the program's error. */
		pthread_mutex_unlock(&dev->lock);
		return;
	}
	for (;;) {
		POP(q, &dev->queues);
		if (!q)
			break;
		pthread_mutex_unlock(&dev->lock);
		d3dq_queue_destroy(q);
		d3dqp_queue_put(q);
		pthread_mutex_lock(&dev->lock);
	}
	for (;;) {
		POP(f, &dev->fences);
		if (!f)
			break;
		pthread_mutex_unlock(&dev->lock);
		d3dq_fence_destroy(f);
		d3dqp_fence_put(f);
		pthread_mutex_lock(&dev->lock);
	}
	for (;;) {
		POP(b, &dev->buffers);
		if (!b)
			break;
		pthread_mutex_unlock(&dev->lock);
		d3dq_buffer_destroy(b);
		d3dqp_buffer_put(b);
		pthread_mutex_lock(&dev->lock);
	}
	for (;;) {
		POP(l, &dev->cmdlists);
		if (!l)
			break;
		pthread_mutex_unlock(&dev->lock);
		d3dq_cmdlist_destroy(l);
		d3dqp_cmdlist_put(l);
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	if (dev->signal_event)
		d3dqp_dispatch_put(dev);
	d3dqp_dev_put(dev);
}

D3DQ_EXPORT int d3dq_device_removed_reason(struct d3dq_device *dev)
{
	int ret;

	/* -EFAULT means "not a device": no removal has that reason. */
	if (!dev)
		return -EFAULT;
	/* Inherited (no kernel call), or closed under a call in progress. */
	if (d3dqp_dev_enter(dev))
		return -ENODEV;
	ret = d3dqp_dev_removal_error(dev);
	d3dqp_dev_put(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_device_remove(struct d3dq_device *dev)
{
	int ret;

	if (!dev)
		return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	ret = d3dqp_dev_remove(dev, -ENODEV);
	d3dqp_dev_put(dev);
	return ret;
}
