// SPDX-License-Identifier: MIT
/*
 * libd3dq: queues (Wait, Signal, ExecuteCommandLists) and submission.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Each operation is one SUBMIT of the queue's kernel queue, under the
 * queue's lock (the order of the calls is the order of the work, R16):
 *
 * - Signal(F, v): a job with no commands whose signals[] set F to v
 *   (DRM_D3DQ_SYNC_FENCE). The kernel writes the value when the job
 *   completes, after the work before it and its memory writes (R3, R8,
 *   R17), in the order jobs complete (R4).
 * - Wait(F, v): a job with no commands whose waits[] wait for F >= v,
 *   with DRM_D3DQ_SUBMIT_HOLD. The kernel decides: reached, nothing to
 *   wait for; an armed signal of this file brings it, a dependency on
 *   that job, released early by any other write (R6, R18); otherwise the
 *   job and every later job of the queue are held, unarmed, until the
 *   value is written (R5, R7). The call never blocks.
 * - ExecuteCommandLists: the command streams, in jobs of at most
 *   max_cmd_bytes.
 *
 * Every job also signals the next point of the queue's timeline @tl, so
 * that destroying the queue can let armed work finish (kernel.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void queue_free(struct d3dq_queue *q)
{
	d3dqp_syncobj_destroy(q->dev->fd, q->tl);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/*
 * Submit one job, q->lock held. A lost queue means a removed device
 * (-ENODEV); so does a device the library removed. Over a kernel limit
 * while only held jobs stand in the way: -ENOSPC (they end only when
 * their values come).
 */
static int submit_locked(struct d3dq_queue *q, const struct drm_d3dq_sync *wait,
			 const struct drm_d3dq_sync *signal, const void *cmds,
			 uint32_t cmd_bytes)
{
	struct drm_d3dq_sync signals[2] = { {
		.handle = q->tl,
		.flags = DRM_D3DQ_SYNC_TIMELINE,
		.point = q->tl_point + 1,
	} };
	struct drm_d3dq_submit args = {
		.queue_id = q->id,
		.flags = wait ? DRM_D3DQ_SUBMIT_HOLD : 0,
		.waits = DRM_D3DQ_OBJ_ARRAY(wait ? 1 : 0, wait),
		.signals = DRM_D3DQ_OBJ_ARRAY(signal ? 2 : 1, signals),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = cmd_bytes,
	};
	int ret;

	if (atomic_load(&q->dev->stopped))
		return -ENODEV;
	if (!wait)
		args.waits.stride = 0;
	if (signal)
		signals[1] = *signal;
	/*
	 * Over a limit with jobs held, the kernel does not sleep: wait here
	 * for the armed jobs of the queue (bounded), never for held ones.
	 */
	while ((ret = d3dqp_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_SUBMIT, &args)) ==
	       -ENOSPC && d3dqp_queue_wait_armed(q))
		;
	/* The queue is lost: the kernel removed the device (on loss). */
	if (ret == -ECANCELED)
		return -ENODEV;
	if (!ret)
		q->tl_point++;
	return ret;
}

/*
 * Submit a command stream, split at command boundaries into jobs of at
 * most max_cmd_bytes. The queue runs them in order, so this is the same as
 * one job. q->lock held.
 */
static int submit_cmds_locked(struct d3dq_queue *q, const uint8_t *cmds,
			      size_t len)
{
	size_t start = 0, pos = 0;
	int ret;

	while (pos < len) {
		const struct drm_d3dq_cmd_header *h =
			(const void *)(cmds + pos);

		if (pos + h->size - start > q->dev->max_cmd_bytes) {
			ret = submit_locked(q, NULL, NULL, cmds + start,
					    (uint32_t)(pos - start));
			if (ret)
				return ret;
			start = pos;
		}
		pos += h->size;
	}
	if (pos > start)
		return submit_locked(q, NULL, NULL, cmds + start,
				     (uint32_t)(pos - start));
	return 0;
}

D3DQ_EXPORT int d3dq_queue_create(struct d3dq_device *dev,
				  const struct d3dq_queue_desc *desc,
				  struct d3dq_queue **out)
{
	struct drm_d3dq_queue_create create = { 0 };
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_queue *q;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev)
		return -EINVAL;
	ret = d3dqp_queue_desc_to_uapi(desc, &create);
	if (ret)
		return ret;
	/* A driver before uapi 1.1 has no realtime priority. */
	if (create.priority == DRM_D3DQ_QUEUE_PRIORITY_REALTIME &&
	    !dev->has_realtime)
		return -EOPNOTSUPP;
	ret = d3dqp_dev_removal_error(dev);
	if (ret)
		return ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	pthread_mutex_init(&q->lock, NULL);
	list_init(&q->dev_link);

	ret = d3dqp_syncobj_create(dev->fd, &q->tl);
	if (ret)
		goto err;
	ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &create);
	if (ret) {
		ret = ret == -ENODEV && d3dqp_dev_removal_error(dev) ?
		      d3dqp_dev_removal_error(dev) : ret;
		goto err;
	}
	q->id = create.id;

	ret = d3dqp_dev_link_object(dev, &q->dev_link, &dev->queues);
	if (ret) {
		destroy.id = q->id;
		d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
		goto err;
	}
	*out = q;
	return 0;

err:
	queue_free(q);
	return ret;
}

/*
 * Work already armed is allowed to finish (it is bounded by the job
 * timeout); work the kernel holds behind a wait is dropped with the
 * kernel queue.
 */
D3DQ_EXPORT void d3dq_queue_destroy(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_device *dev;

	if (!q)
		return;
	dev = q->dev;
	pthread_mutex_lock(&q->lock);
	while (d3dqp_queue_wait_armed(q))
		;
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_lock(&dev->lock);
	list_del(&q->dev_link);
	pthread_mutex_unlock(&dev->lock);
	destroy.id = q->id;
	d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
	queue_free(q);
}

/* Wait (@signal false) or Signal (@signal true): one job, see above. */
static int queue_op(struct d3dq_queue *q, struct d3dq_fence *f,
		    uint64_t value, bool signal)
{
	struct drm_d3dq_sync s = {
		.flags = DRM_D3DQ_SYNC_FENCE,
		.point = value,
	};
	int ret;

	if (!q || !f || f->dev != q->dev)
		return -EINVAL;
	/*
	 * A wait whose value is there at the call is satisfied (R6): no job.
	 * (UINT64_MAX may be a removal's: the kernel tells.)
	 */
	if (!signal && value <= d3dq_fence_get_completed_value(f) &&
	    d3dq_fence_get_completed_value(f) != UINT64_MAX)
		return 0;
	/* A shared fence's waits go through its registration handle. */
	s.handle = f->shared && !signal ? f->reg : f->handle;
	pthread_mutex_lock(&q->lock);
	ret = submit_locked(q, signal ? NULL : &s, signal ? &s : NULL,
			    NULL, 0);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_wait(struct d3dq_queue *q, struct d3dq_fence *f,
				uint64_t value)
{
	return queue_op(q, f, value, false);
}

D3DQ_EXPORT int d3dq_queue_signal(struct d3dq_queue *q, struct d3dq_fence *f,
				  uint64_t value)
{
	return queue_op(q, f, value, true);
}

/*
 * Copy the streams of @lists into one buffer, each list under its own
 * lock, so that a list reset and recorded again by another thread is
 * either copied whole or refused, never overrun. 1 if a list is not
 * closed (or had a recording error).
 */
static int snapshot_lists(struct d3dq_cmdlist *const *lists, uint32_t count,
			  uint8_t **out, size_t *out_len)
{
	uint8_t *buf = NULL, *grown;
	size_t len = 0, cap = 0;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		struct d3dq_cmdlist *l = lists[i];

		pthread_mutex_lock(&l->lock);
		if (l->state != CMDLIST_CLOSED || l->error) {
			ret = 1;
		} else if (l->len > SIZE_MAX - len) {
			ret = -E2BIG;
		} else if (len + l->len > cap) {
			cap = len + l->len;
			if (cap < 2 * len)
				cap = 2 * len;
			grown = realloc(buf, cap ? cap : 1);
			if (!grown)
				ret = -ENOMEM;
			else
				buf = grown;
		}
		if (!ret && l->len) {
			memcpy(buf + len, l->data, l->len);
			len += l->len;
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

D3DQ_EXPORT int d3dq_queue_execute(struct d3dq_queue *q,
				   struct d3dq_cmdlist *const *lists,
				   uint32_t count)
{
	uint8_t *buf = NULL;
	size_t total = 0;
	uint32_t i;
	int ret = 1;

	if (!q || (count && !lists))
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!lists[i] || lists[i]->dev != q->dev)
			return -EINVAL;
	if (!count)
		return 0;
	pthread_mutex_lock(&q->lock);
	if (count == 1) {
		/* The common case: from the list's own buffer, no copy. */
		struct d3dq_cmdlist *l = lists[0];

		pthread_mutex_lock(&l->lock);
		if (l->state == CMDLIST_CLOSED && !l->error)
			ret = submit_cmds_locked(q, l->data, l->len);
		pthread_mutex_unlock(&l->lock);
	} else {
		ret = snapshot_lists(lists, count, &buf, &total);
		if (!ret)
			ret = submit_cmds_locked(q, buf, total);
		free(buf);
	}
	pthread_mutex_unlock(&q->lock);
	if (ret == 1) {
		/* D3D12 removes the device for this misuse. */
		d3dqp_dev_remove(q->dev, -EINVAL);
		return -EINVAL;
	}
	return ret;
}
