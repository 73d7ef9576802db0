// SPDX-License-Identifier: MIT
/*
 * libd3dq: kernel calls, fence value pages, removal, token registrations.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int64_t d3dqp_abs_timeout(uint64_t timeout_ns)
{
	struct timespec ts;
	int64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (timeout_ns >= (uint64_t)(INT64_MAX - now))
		return INT64_MAX;
	return now + (int64_t)timeout_ns;
}

int d3dqp_kfence_event(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		 uint32_t flags, int eventfd, uint32_t sobj, uint64_t point)
{
	struct drm_d3dq_fence_event args = {
		.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
		.flags = flags,
		.eventfd = eventfd,
		.syncobj = sobj,
		.point = point,
	};

	return d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &args);
}

/*
 * Value pages, shared by local fences: each mapped once, read-only, and
 * unmapped with its last fence, before the handle goes (a new fence may
 * get the freed page's offset).
 */
int d3dqp_vpage_map(struct d3dq_device *dev, uint64_t offset, uint32_t value_offset,
		    struct vpage **page, const uint64_t **vp)
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
	*vp = (const uint64_t *)((const char *)p->addr +
					 value_offset);
out:
	pthread_mutex_unlock(&dev->page_lock);
	return ret;
}

void d3dqp_vpage_unmap(struct d3dq_device *dev, struct vpage *page)
{
	struct vpage **pp;

	if (!page)
		return;
	pthread_mutex_lock(&dev->page_lock);
	if (--page->refs == 0) {
		for (pp = &dev->pages; !page->retired && *pp != page;
		     pp = &(*pp)->next)
			;
		if (!page->retired)
			*pp = page->next;
		munmap(page->addr, dev->page_size);
		free(page);
	}
	pthread_mutex_unlock(&dev->page_lock);
}

void d3dqp_vpage_retire(struct d3dq_device *dev, struct vpage *page)
{
	struct vpage **pp;

	if (!page)
		return;
	pthread_mutex_lock(&dev->page_lock);
	if (!page->retired) {
		for (pp = &dev->pages; *pp != page; pp = &(*pp)->next)
			;
		*pp = page->next;
		page->next = NULL;
		page->retired = true;
	}
	pthread_mutex_unlock(&dev->page_lock);
}

void d3dqp_dev_get(struct d3dq_device *dev)
{
	atomic_fetch_add(&dev->refs, 1);
}

/*
 * The last reference: the program closed the device and every object
 * is gone, with the calls that used them, so no call can name the
 * descriptor any more and it is closed (issue 39: a thread woken from a
 * wait by d3dq_device_close() used to destroy its fences on a closed,
 * or reused, descriptor). An inherited device's descriptor is the
 * child's copy, which its close closed already (device.c); its locks
 * may be held by threads the child does not have, and are left alone.
 */
void d3dqp_dev_put(struct d3dq_device *dev)
{
	if (atomic_fetch_sub(&dev->refs, 1) != 1 || d3dqp_inherited(dev))
		return;
	close(dev->fd);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->remove_lock);
	pthread_rwlock_destroy(&dev->reg_lock);
	pthread_mutex_destroy(&dev->page_lock);
	pthread_mutex_destroy(&dev->import_lock);
	free(dev);
}

/*
 * Make an object visible to d3dq_device_close() (and removal); none is
 * linked once the close began (it set @closed under the same lock).
 */
int d3dqp_dev_link_object(struct d3dq_device *dev, struct list *link,
			  struct list *head)
{
	int ret;

	pthread_mutex_lock(&dev->lock);
	ret = atomic_load(&dev->closed) ? -ENODEV : atomic_load(&dev->reason);
	if (!ret)
		list_add_tail(link, head);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/*
 * Wait for @q's oldest unfinished job if it is armed: 1 once it finished
 * (or 1 s passed; the caller looks again), 0 if no job is armed (held
 * ones wait for values, which may never come), or -errno if a call
 * failed (the caller gives up rather than try again at once, for ever).
 * Every job signals a point of q->tl, numbered in submit order (a Signal
 * that makes no job skips its point, uapi 1.13, as from 1.14 one whose
 * job completes without being armed, which a wait for it treats as the
 * next one: the next point added is an armed job's); jobs are armed in
 * order, held ones
 * come after every armed one, and pending_jobs counts armed ones. The
 * timeline is read before the state, so that the point waited for is
 * that of a job that had finished or was armed when the state was read:
 * never a held one's, which would make the caller sleep its full second
 * for nothing while it holds the queue's lock. An armed job ends within
 * the driver's job timeout, as the kernel's own sleep at a limit does.
 */
int d3dqp_queue_wait_armed(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_get_state st = { .id = q->id };
	uint64_t done = 0, next;
	int ret;

	if (drmSyncobjQuery(q->dev->fd, &q->tl, &done, 1))
		return -errno;
	ret = d3dqp_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st);
	if (ret || st.state == DRM_D3DQ_QUEUE_STATE_LOST || !st.pending_jobs)
		return ret;
	next = done + 1;
	if (drmSyncobjTimelineWait(q->dev->fd, &q->tl, &next, 1,
				   d3dqp_abs_timeout(1000000000ull),
				   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL) &&
	    errno != ETIME)
		return -errno;
	return 1;
}

/*
 * The removal reason, 0 if not removed: the kernel's (it removes the file
 * on loss, armed at open; REMOVE_QUERY waits for a removal in progress),
 * or that of a removal the library made (readers pass remove_lock).
 */
int d3dqp_dev_removal_error(struct d3dq_device *dev)
{
	struct drm_d3dq_remove args = { .flags = DRM_D3DQ_REMOVE_QUERY };
	int reason = atomic_load(&dev->reason), ret;

	/* The parent's file: this process knows nothing of it any more. */
	if (d3dqp_inherited(dev))
		return -ENODEV;
	if (reason)
		return reason;
	pthread_mutex_lock(&dev->remove_lock);
	reason = atomic_load(&dev->reason);
	pthread_mutex_unlock(&dev->remove_lock);
	if (reason)
		return reason;
	ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_REMOVE, &args);
	/* -ENODEV: unplugged, every fence reads UINT64_MAX. */
	reason = ret == -ENODEV ? -ENODEV : ret ? 0 : args.reason;
	if (reason)
		atomic_store(&dev->reason, reason);
	return reason;
}

/*
 * Remove the device (R15): REMOVE stops every job, then sets every fence
 * to UINT64_MAX; the first reason stays. Unplugged (-ENODEV), it is
 * removed already; refused otherwise (a seccomp filter), it stays as it
 * was and the error is returned. The kernel may have removed the file
 * first (a loss nobody asked about yet): its REMOVE then changes nothing,
 * and REMOVE_QUERY tells; only its -ENODEV, this REMOVE's, is @reason.
 */
int d3dqp_dev_remove(struct d3dq_device *dev, int reason)
{
	struct drm_d3dq_remove args = { 0 };
	struct drm_d3dq_remove query = { .flags = DRM_D3DQ_REMOVE_QUERY };
	int ret = 0;

	if (d3dqp_inherited(dev))
		return -ENODEV;
	pthread_mutex_lock(&dev->remove_lock);
	if (!atomic_load(&dev->reason)) {
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_REMOVE, &args);
		if (!ret && !d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_REMOVE,
					 &query) &&
		    query.reason && query.reason != -ENODEV)
			reason = query.reason;
		if (!ret)
			atomic_store(&dev->reason, reason);
	}
	pthread_mutex_unlock(&dev->remove_lock);
	return ret == -ENODEV ? 0 : ret;
}

/*
 * Make sure the points of the registrations that fired before now are
 * there: one more registration, of a value that is reached (0), fires in
 * its call, and the kernel adds the points in the order registrations
 * fired, so once its point is there so are theirs.
 */
static int token_probe(struct d3dq_device *dev, uint32_t handle)
{
	struct drm_d3dq_fence_value fv = { .handle = handle, .value = 0 };
	uint64_t point = 1;
	uint32_t sobj;
	int ret;

	if (drmSyncobjCreate(dev->fd, 0, &sobj))
		return -errno;
	ret = d3dqp_kfence_event(dev->fd, &fv, 1, DRM_D3DQ_FENCE_EVENT_SYNCOBJ,
				 0, sobj, 1);
	if (!ret && drmSyncobjTimelineWait(dev->fd, &sobj, &point, 1, INT64_MAX,
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					   NULL))
		ret = -errno;
	drmSyncobjDestroy(dev->fd, sobj);
	return ret;
}

/*
 * A token event: a kernel registration that adds point 1 to a new
 * syncobj once the condition holds, handed to the dispatcher, which
 * keeps the syncobj. The same token, fence and value registered again
 * (by any thread) before the first fired fires once (R10); once the
 * first fired, even if the dispatcher did not call it yet, it is a new
 * registration (issue 39: it was dropped, and a crossing after a rewind
 * went uncalled). The registration is listed first, its kernel
 * registration made last, so that a failure leaves none behind (issue 39:
 * it stayed, counted against the user's event bound). On a device that
 * is gone (unplugged) it fires at once, as on a removed one (R15).
 */
int d3dqp_token_add(struct d3dq_device *dev, const struct drm_d3dq_fence_value *fv,
		    uint32_t n, uint32_t flags, void *token)
{
	uint32_t key = n == 1 ? fv[0].handle : 0, sobj = 0;
	struct token_reg *r;
	bool gone = false;
	int ret, sfd;

	if (drmSyncobjCreate(dev->fd, 0, &sobj)) {
		ret = -errno;
		if (ret != -ENODEV || !d3dqp_dev_removal_error(dev))
			return ret;
		gone = true;
		sobj = 0;
	}
	ret = d3dqp_dispatch_claim(dev, sobj, key, fv[0].value, token, false,
				   &r);
	if (ret == 2 && !gone) {
		ret = token_probe(dev, key);
		if (!ret)
			ret = d3dqp_dispatch_claim(dev, sobj, key, fv[0].value,
						   token, true, &r);
	}
	if (ret) {
		if (sobj)
			drmSyncobjDestroy(dev->fd, sobj);
		/* 1, 2: the same, pending (unplugged: it fires anyway). */
		return ret > 0 ? 0 : ret;
	}
	if (gone) {
		d3dqp_dispatch_arm(r, true);
		return 0;
	}
	ret = drmSyncobjHandleToFD(dev->fd, sobj, &sfd) ? -errno : 0;
	if (!ret) {
		ret = d3dqp_dispatch_import(r, sfd);
		close(sfd);
	}
	if (!ret) {
		flags |= DRM_D3DQ_FENCE_EVENT_SYNCOBJ;
		ret = d3dqp_kfence_event(dev->fd, fv, n, flags, 0, sobj, 1);
	}
	if (ret == -ENODEV && d3dqp_dev_removal_error(dev)) {
		/* Unplugged meanwhile: released, as its values are. */
		d3dqp_dispatch_arm(r, true);
		return 0;
	}
	if (ret) {
		d3dqp_dispatch_cancel(r);
		drmSyncobjDestroy(dev->fd, sobj);
		return ret;
	}
	/* The dispatcher destroys @sobj once it called the token. */
	d3dqp_dispatch_arm(r, false);
	return 0;
}
