// SPDX-License-Identifier: MIT
/*
 * libd3dq: fences on the kernel's fence object, whose value page this
 * process maps read-only; the kernel holds events and blocked threads.
 * Destruction releases what waits (R14): a local fence goes to
 * UINT64_MAX. A shared one, from uapi 1.10 (FENCE_HANDLE_CYCLIC), is one
 * kernel handle, destroyed at once (under dev->reg_lock, which every
 * registration and queue wait naming it holds, see wait_all()): the
 * kernel releases exactly what was made through it (R14, R20), and a
 * blocked wait that names its number after that finds no handle
 * (-ENOENT: released), never another fence, as the kernel gives the
 * number again only after INT_MAX others. Before 1.10 a shared fence is
 * three: its handle, which lives until the last reference, @reg, the
 * handle its waits and events were made through, destroyed at once, and
 * @wake, which threads blocked in ANY waits wait for too, set to 1.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static int kfence_export(int fd, uint32_t handle, int *xfd)
{
	struct drm_d3dq_fence_export args = { .handle = handle };
	int ret = d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EXPORT, &args);

	if (!ret)
		*xfd = args.fd;
	return ret;
}

static void kfence_destroy(int fd, uint32_t handle)
{
	struct drm_d3dq_fence_destroy args = { .handle = handle };

	if (handle)
		d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &args);
}

static int kfence_signal(int fd, uint32_t handle, uint64_t value)
{
	struct drm_d3dq_fence_signal args = { .handle = handle, .value = value };

	return d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL, &args);
}

/*
 * The last reference: the program destroyed the fence and no call uses
 * it any more. It holds one of its device, so the descriptor is still
 * this device's.
 */
void d3dqp_fence_put(struct d3dq_fence *f)
{
	struct d3dq_device *dev = f->dev;

	if (atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	/* Unmapped first: a new fence may get the page's offset. */
	d3dqp_vpage_unmap(dev, f->page);
	kfence_destroy(dev->fd, f->reg);
	kfence_destroy(dev->fd, f->wake);
	kfence_destroy(dev->fd, d3dqp_fence_handle(f));
	free(f);
	d3dqp_dev_put(dev);
}

/*
 * A call on @f: a reference for its duration, or -ENODEV if the fence
 * was destroyed or its device closed (a call in progress then), or is
 * its parent's (fork).
 */
static int fence_enter(struct d3dq_fence *f)
{
	int ret = d3dqp_dev_usable(f->dev);

	if (ret)
		return ret;
	obj_get(f);
	if (atomic_load(&f->destroyed)) {
		d3dqp_fence_put(f);
		return -ENODEV;
	}
	return 0;
}

/*
 * The value: one 64-bit acquire load of the kernel's page, no system
 * call (uapi.rst, "The value page": a single 8-byte load in a 32-bit
 * process too; the page is read-only, so never a locked exchange).
 */
static uint64_t fence_value(struct d3dq_fence *f)
{
	return __atomic_load_n(f->vp, __ATOMIC_ACQUIRE);
}

/* Created, or imported from @xfd >= 0; shared: with @reg and @wake. */
static int fence_new(struct d3dq_device *dev, uint64_t value, uint32_t flags,
		     int xfd, struct d3dq_fence **out)
{
	struct drm_d3dq_fence_import imp = { .fd = xfd };
	struct drm_d3dq_fence_create create = {
		.value = value,
		.flags = flags,
	};
	struct d3dq_fence *f;
	int ret, own = -1;

	*out = NULL;
	ret = d3dqp_dev_removal_error(dev);
	if (ret)
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->dev = dev;
	d3dqp_dev_get(dev);
	atomic_init(&f->refs, 1);
	list_init(&f->dev_link);
	f->shared = xfd >= 0 || (flags & DRM_D3DQ_FENCE_SHARED);
	if (xfd < 0) {
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &create);
		f->handle = create.handle;
		imp.mmap_offset = create.mmap_offset;
		imp.value_offset = create.value_offset;
		if (!ret && f->shared && !dev->has_cyclic)
			ret = kfence_export(dev->fd, f->handle, &own);
	} else {
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &imp);
		f->handle = imp.handle;
	}
	if (!ret)
		ret = d3dqp_vpage_map(dev, imp.mmap_offset, imp.value_offset,
				      &f->page, &f->vp);
	if (!ret && f->shared && !dev->has_cyclic) {
		struct drm_d3dq_fence_import reg = {
			.fd = xfd >= 0 ? xfd : own,
		};
		struct drm_d3dq_fence_create wake = { 0 };

		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &reg);
		f->reg = reg.handle;
		if (!ret)
			ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_CREATE,
					  &wake);
		f->wake = wake.handle;
	}
	if (own >= 0)
		close(own);
	if (!ret)
		ret = d3dqp_dev_link_object(dev, &f->dev_link, &dev->fences);
	if (ret) {
		d3dqp_fence_put(f);
		/* The driver refuses new fences once the device is removed. */
		return ret == -ENODEV && d3dqp_dev_removal_error(dev) ?
		       d3dqp_dev_removal_error(dev) : ret;
	}
	*out = f;
	return 0;
}

D3DQ_EXPORT int d3dq_fence_create(struct d3dq_device *dev,
				  uint64_t initial_value, uint32_t flags,
				  struct d3dq_fence **out)
{
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || (flags & ~(uint32_t)D3DQ_FENCE_FLAG_SHARED))
		return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	ret = fence_new(dev, initial_value, flags & D3DQ_FENCE_FLAG_SHARED ?
			DRM_D3DQ_FENCE_SHARED : 0, -1, out);
	d3dqp_dev_put(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_fence_export(struct d3dq_fence *f, int *fd)
{
	int ret;

	if (!f || !fd || !f->shared)
		return -EINVAL;
	ret = fence_enter(f);
	if (ret)
		return ret;
	ret = kfence_export(f->dev->fd, d3dqp_fence_handle(f), fd);
	d3dqp_fence_put(f);
	/* Destroyed meanwhile (uapi 1.10: its handle is gone). */
	return ret == -ENOENT ? -ENODEV : ret;
}

D3DQ_EXPORT int d3dq_fence_export_sync_file(struct d3dq_fence *f,
					    uint64_t value, int *fd)
{
	struct drm_d3dq_fence_sync_file args = { .value = value };
	int ret;

	if (!f || !fd)
		return -EINVAL;
	if (!f->dev->has_sync_file)
		return -EOPNOTSUPP;
	ret = fence_enter(f);
	if (ret)
		return ret;
	args.handle = d3dqp_fence_handle(f);
	ret = d3dqp_ioctl(f->dev->fd, DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE,
			  &args);
	if (!ret)
		*fd = args.fd;
	d3dqp_fence_put(f);
	return ret == -ENOENT ? -ENODEV : ret;
}

/*
 * FENCE_SIGNAL_ON: @sf a sync_file, or with @syncobj_fd >= 0 a syncobj
 * (imported into the device's file for the call) at @point.
 */
static int fence_signal_on(struct d3dq_fence *f, uint64_t value, int sf,
			   int syncobj_fd, uint64_t point)
{
	struct drm_d3dq_fence_signal_on args = { .value = value };
	uint32_t so = 0;
	int ret;

	if (!f || (syncobj_fd < 0 && sf < 0))
		return -EINVAL;
	if (!f->dev->has_signal_on)
		return -EOPNOTSUPP;
	ret = fence_enter(f);
	if (ret)
		return ret;
	args.handle = f->handle;
	if (syncobj_fd >= 0) {
		ret = drmSyncobjFDToHandle(f->dev->fd, syncobj_fd, &so);
		if (ret) {
			ret = -errno;
			goto out;
		}
		args.flags = DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ;
		args.syncobj = so;
		args.point = point;
	} else {
		args.fd = sf;
	}
	ret = d3dqp_ioctl(f->dev->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON, &args);
	/* The library's documented limit is that of the driver. */
	if (ret == -EDQUOT)
		ret = -ENOMEM;
	if (so)
		drmSyncobjDestroy(f->dev->fd, so);
out:
	d3dqp_fence_put(f);
	return ret;
}

D3DQ_EXPORT int d3dq_fence_signal_on_sync_file(struct d3dq_fence *f,
					       uint64_t value, int fd)
{
	return fence_signal_on(f, value, fd, -1, 0);
}

D3DQ_EXPORT int d3dq_fence_signal_on_syncobj(struct d3dq_fence *f,
					     uint64_t value, int syncobj_fd,
					     uint64_t point)
{
	if (syncobj_fd < 0)
		return -EINVAL;
	return fence_signal_on(f, value, -1, syncobj_fd, point);
}

D3DQ_EXPORT int d3dq_fence_set_event_on_export_ready(struct d3dq_fence *f,
						     uint64_t value,
						     int eventfd)
{
	struct drm_d3dq_fence_value fv = { .value = value };
	struct drm_d3dq_fence_event args = {
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.flags = DRM_D3DQ_FENCE_EVENT_ARMED,
		.eventfd = eventfd,
	};
	int ret;

	if (!f || eventfd < 0)
		return -EINVAL;
	if (!f->dev->has_event_armed)
		return -EOPNOTSUPP;
	ret = fence_enter(f);
	if (ret)
		return ret;
	fv.handle = f->handle;
	ret = d3dqp_ioctl(f->dev->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &args);
	d3dqp_fence_put(f);
	/* As d3dq_fence_set_event_on_completion() answers. */
	if (ret == -EBADF)
		ret = -EINVAL;
	if (ret == -EDQUOT)
		ret = -ENOMEM;
	return ret;
}

D3DQ_EXPORT int d3dq_fence_import(struct d3dq_device *dev, int fd,
				  struct d3dq_fence **out)
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
	ret = fcntl(fd, F_GETFD) < 0 ? -EBADF : fence_new(dev, 0, 0, fd, out);
	d3dqp_dev_put(dev);
	return ret;
}

/*
 * Once (d3dq_device_close() may destroy it too); the memory stays for
 * the calls still in progress on it. An inherited fence (fork) is the
 * parent's: nothing is done.
 */
D3DQ_EXPORT void d3dq_fence_destroy(struct d3dq_fence *f)
{
	struct d3dq_device *dev;

	if (!f || d3dqp_inherited(f->dev) || atomic_exchange(&f->destroyed,
							     true))
		return;
	dev = f->dev;
	pthread_mutex_lock(&dev->lock);
	list_del(&f->dev_link);
	pthread_mutex_unlock(&dev->lock);
	/* Release what waits in the kernel (R14), see above. */
	if (!f->shared) {
		kfence_signal(dev->fd, f->handle, UINT64_MAX);
	} else if (dev->has_cyclic) {
		uint32_t handle;

		/* No new fence may find the page by its offset (kernel.c). */
		d3dqp_vpage_retire(dev, f->page);
		pthread_rwlock_wrlock(&dev->reg_lock);
		handle = d3dqp_fence_handle(f);
		__atomic_store_n(&f->handle, 0, __ATOMIC_RELEASE);
		kfence_destroy(dev->fd, handle);
		pthread_rwlock_unlock(&dev->reg_lock);
	} else {
		pthread_rwlock_wrlock(&dev->reg_lock);
		kfence_destroy(dev->fd, f->reg);
		f->reg = 0;
		pthread_rwlock_unlock(&dev->reg_lock);
		kfence_signal(dev->fd, f->wake, 1);
	}
	d3dqp_fence_put(f);
}

D3DQ_EXPORT uint64_t d3dq_fence_get_completed_value(struct d3dq_fence *f)
{
	return f ? fence_value(f) : 0;
}

/*
 * The value set now: a CPU signal, or a queue's signal on an idle queue
 * (queue.c). The caller holds a reference of @f.
 */
int d3dqp_fence_set(struct d3dq_fence *f, uint32_t handle, uint64_t value)
{
	/*
	 * -ENODEV: a removal set it to UINT64_MAX for good. The driver sets
	 * a file's fences one after the other: if it is this device's
	 * removal, return once it is done (R15's instant). A peer's removal
	 * of a shared fence leaves this device as it is.
	 */
	int ret = kfence_signal(f->dev->fd, handle, value);

	if (ret == -ENODEV)
		d3dqp_dev_removal_error(f->dev);
	/* Destroyed meanwhile (uapi 1.10: its handle is gone). */
	return ret == -ENOENT ? -ENODEV : ret;
}

D3DQ_EXPORT int d3dq_fence_signal(struct d3dq_fence *f, uint64_t value)
{
	int ret;

	if (!f)
		return -EINVAL;
	ret = fence_enter(f);
	if (ret)
		return ret;
	ret = d3dqp_fence_set(f, d3dqp_fence_handle(f), value);
	d3dqp_fence_put(f);
	return ret;
}

/* A blocking wait's answer. */
static int wait_ret(struct d3dq_device *dev, int ret)
{
	if (ret == -ETIME)
		return -ETIMEDOUT;
	/* The driver's bound, reported as the event calls report theirs. */
	if (ret == -EDQUOT)
		return -ENOMEM;
	/* Unplugged before the wait: every value is UINT64_MAX. */
	if (ret == -ENODEV && d3dqp_dev_removal_error(dev))
		return 0;
	return ret;
}

/*
 * Block until one of @fs reached its value since the call (FENCE_WAIT,
 * ANY), or was destroyed (its wake fence), until @deadline. The caller
 * holds a reference of each fence, and so of the device.
 */
static int wait_any(struct d3dq_device *dev, struct d3dq_fence *const *fs,
		    const uint64_t *values, uint32_t n, int64_t deadline)
{
	struct drm_d3dq_fence_value stack[8] = { { 0 } }, *fv = stack;
	struct drm_d3dq_fence_wait wait = {
		.deadline_ns = deadline,
		.flags = DRM_D3DQ_FENCE_WAIT_ANY,
	};
	uint32_t i, m = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		if (fence_value(fs[i]) >= values[i])
			return 0;
		m += fs[i]->shared && !dev->has_cyclic ? 2 : 1;
	}
	if (m > dev->max_syncs)
		return -EINVAL;
	if (m > sizeof(stack) / sizeof(stack[0])) {
		fv = calloc(m, sizeof(*fv));
		if (!fv)
			return -ENOMEM;
	}
	for (i = 0, m = 0; i < n; i++) {
		fv[m].handle = d3dqp_fence_handle(fs[i]);
		fv[m++].value = values[i];
		/* Destroyed since the call (uapi 1.10): released (R14). */
		if (!fv[m - 1].handle)
			goto out;
		if (fs[i]->shared && !dev->has_cyclic) {
			fv[m].handle = fs[i]->wake;
			fv[m++].value = 1;
		}
	}
	/* Restarted on EINTR: the deadline is absolute. */
	wait.fences = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(m, fv);
	ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &wait);
	/*
	 * A handle destroyed before the kernel took it (uapi 1.10: its
	 * number is no other fence's): that fence was destroyed, released.
	 */
	if (ret == -ENOENT && dev->has_cyclic)
		ret = 0;
out:
	if (fv != stack)
		free(fv);
	return wait_ret(dev, ret);
}

/*
 * Block until ALL holds (R6, R13): every fence reached its value, each at
 * some moment since the call, so that one reached and rewound while the
 * thread waits for another still counts, or was destroyed (R14). The
 * kernel keeps that condition, in one call, with flags 0. Without shared
 * fences it is one FENCE_WAIT naming their handles (destruction sets a
 * local fence to UINT64_MAX). A shared fence is named, as its events
 * name it, through @reg, whose destruction releases what was made through
 * it, and which no call may name once destroyed (the kernel gives its
 * number to the next new handle): the names are read, and the kernel takes
 * them, under reg_lock (read), which destruction writes, in one
 * FENCE_EVENT (ALL) adding point 1 to a syncobj of the call, which the
 * thread then waits for. (A FENCE_WAIT takes its names only once the
 * thread sleeps, with no lock of the library held; and @wake, which ends
 * an ANY wait, cannot end one fence's part of an ALL.) The caller holds a
 * reference of each fence.
 */
static int wait_all(struct d3dq_device *dev, struct d3dq_fence *const *fs,
		    const uint64_t *values, uint32_t n)
{
	struct drm_d3dq_fence_value stack[8] = { { 0 } }, *fv = stack;
	struct drm_d3dq_fence_wait wait = { .deadline_ns = INT64_MAX };
	bool reached = true, shared = false;
	uint32_t i, m = 0, sobj = 0;
	uint64_t point = 1;
	int ret = 0;

	for (i = 0; i < n; i++) {
		reached = reached && fence_value(fs[i]) >= values[i];
		shared = shared || fs[i]->shared;
	}
	if (reached)
		return 0;
	if (n > dev->max_syncs)
		return -EINVAL;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		fv = calloc(n, sizeof(*fv));
		if (!fv)
			return -ENOMEM;
	}
	if (!shared) {
		for (i = 0; i < n; i++) {
			fv[i].handle = fs[i]->handle;
			fv[i].value = values[i];
		}
		wait.fences = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(n, fv);
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &wait);
	} else if (drmSyncobjCreate(dev->fd, 0, &sobj)) {
		ret = -errno;
	} else {
		pthread_rwlock_rdlock(&dev->reg_lock);
		for (i = 0; i < n; i++) {
			/* 0: destroyed since the call, as if reached. */
			fv[m].handle = d3dqp_fence_reg(fs[i]);
			fv[m].value = values[i];
			m += fv[m].handle != 0;
		}
		if (m)
			ret = d3dqp_kfence_event(dev->fd, fv, m,
						 DRM_D3DQ_FENCE_EVENT_SYNCOBJ,
						 0, sobj, 1);
		pthread_rwlock_unlock(&dev->reg_lock);
		/* The point comes once the registration fired. */
		if (!ret && m &&
		    drmSyncobjTimelineWait(dev->fd, &sobj, &point, 1, INT64_MAX,
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					   NULL))
			ret = -errno;
		drmSyncobjDestroy(dev->fd, sobj);
	}
	if (fv != stack)
		free(fv);
	return wait_ret(dev, ret);
}

D3DQ_EXPORT int d3dq_fence_wait(struct d3dq_fence *f, uint64_t value,
				uint64_t timeout_ns)
{
	int ret;

	if (!f)
		return -EINVAL;
	ret = d3dqp_dev_usable(f->dev);
	if (ret)
		return ret;
	if (fence_value(f) >= value)
		return 0;
	if (!timeout_ns)
		return -ETIMEDOUT;
	/*
	 * The reference keeps the fence, and its device, until the wait
	 * returned, whoever destroys them meanwhile (R14).
	 */
	obj_get(f);
	ret = wait_any(f->dev, &f, &value, 1, d3dqp_abs_timeout(timeout_ns));
	d3dqp_fence_put(f);
	return ret;
}

/*
 * An event or token registration: one FENCE_EVENT (the kernel holds the
 * eventfd, R19), or a token registration (kernel.c), naming each fence
 * (a shared one through @reg, under reg_lock: -ENODEV if it was
 * destroyed meanwhile, rather than a number the kernel may have given
 * to another handle).
 */
static int event_register(struct d3dq_device *dev,
			  struct d3dq_fence *const *fs, const uint64_t *values,
			  uint32_t n, uint32_t flags, bool tokens, int eventfd,
			  void *token)
{
	struct drm_d3dq_fence_value stack[8] = { { 0 } }, *fv = stack;
	uint32_t i;
	int ret = 0;

	if (n > sizeof(stack) / sizeof(stack[0])) {
		fv = calloc(n, sizeof(*fv));
		if (!fv)
			return -ENOMEM;
	}
	pthread_rwlock_rdlock(&dev->reg_lock);
	for (i = 0; i < n && !ret; i++) {
		fv[i].handle = d3dqp_fence_reg(fs[i]);
		fv[i].value = values[i];
		if (!fv[i].handle)
			ret = -ENODEV;
	}
	if (ret)
		;
	else if (tokens)
		ret = d3dqp_token_add(dev, fv, n, flags, token);
	else
		ret = d3dqp_kfence_event(dev->fd, fv, n, flags, eventfd, 0, 0);
	pthread_rwlock_unlock(&dev->reg_lock);
	if (fv != stack)
		free(fv);
	return ret;
}

/*
 * The event calls: with no event, block until ALL or ANY holds (R11,
 * R13; one kernel wait, see above); otherwise register it. The call
 * holds a reference of the device, and of each fence, taken from the
 * caller's array once:
 * a thread blocked here keeps the fences, and their device, whoever
 * destroys them, or closes the device, meanwhile (R14; issue 39: the
 * woken thread used to destroy them on a closed descriptor).
 */
static int event_call(struct d3dq_device *dev, struct d3dq_fence *const *fs,
		      const uint64_t *values, uint32_t n, uint32_t flags,
		      bool tokens, int eventfd, void *token)
{
	struct d3dq_fence *stack[8], **held = stack;
	bool any = flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY;
	uint32_t i;
	int ret = 0;

	if (!dev || !n || !fs || !values || flags > D3DQ_MULTIPLE_FENCE_WAIT_ANY
	    || (tokens && !dev->signal_event))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!fs[i] || fs[i]->dev != dev)
			return -EINVAL;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		held = calloc(n, sizeof(*held));
		if (!held) {
			d3dqp_dev_put(dev);
			return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++) {
		held[i] = fs[i];
		obj_get(held[i]);
	}
	if (tokens ? !token : eventfd < 0) {
		/* One fence: reached since the call is ALL and ANY. */
		if (any || n == 1)
			ret = wait_any(dev, held, values, n, INT64_MAX);
		else
			ret = wait_all(dev, held, values, n);
	} else {
		flags = any && n > 1 ? DRM_D3DQ_FENCE_WAIT_ANY : 0;
		ret = event_register(dev, held, values, n, flags, tokens,
				     eventfd, token);
		/* R19: a closed descriptor is no eventfd either. */
		if (ret == -EBADF)
			ret = -EINVAL;
		/* The library's documented limit is that of the driver. */
		if (ret == -EDQUOT)
			ret = -ENOMEM;
	}
	for (i = 0; i < n; i++)
		d3dqp_fence_put(held[i]);
	if (held != stack)
		free(held);
	/* Nothing of the device after this: it may be the last reference. */
	d3dqp_dev_put(dev);
	return ret;
}

D3DQ_EXPORT int d3dq_fence_set_event_on_completion(struct d3dq_fence *f,
						   uint64_t value, int eventfd)
{
	return event_call(f ? f->dev : NULL, &f, &value, 1, 0, false, eventfd,
			  NULL);
}

D3DQ_EXPORT int d3dq_fence_set_token_on_completion(struct d3dq_fence *f,
						   uint64_t value, void *token)
{
	return event_call(f ? f->dev : NULL, &f, &value, 1, 0, true, -1,
			  token);
}

D3DQ_EXPORT int d3dq_device_set_event_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		int eventfd)
{
	return event_call(dev, fences, values, count, flags, false, eventfd,
			  NULL);
}

D3DQ_EXPORT int d3dq_device_set_token_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		void *token)
{
	return event_call(dev, fences, values, count, flags, true, -1, token);
}
