// SPDX-License-Identifier: MIT
/*
 * libd3dq: queues (Wait, Signal, ExecuteCommandLists).
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Each queue owns a kernel queue and a timeline syncobj; every job the
 * library submits signals the next point of that timeline. D3D12 fence
 * values never reach the kernel for fences that are not shared: a queue
 * signal is recorded as "fence F takes value v when point p of queue Q
 * completes", and a queue wait becomes a kernel wait on such a point.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void queue_ref(struct d3dq_queue *q)
{
	atomic_fetch_add(&q->refs, 1);
}

void queue_unref(struct d3dq_queue *q)
{
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	syncobj_destroy(q->dev->fd, q->tl);
	pthread_mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->pend_lock);
	free(q);
}

/*
 * Submit one job. It always signals the queue's next timeline point, so
 * the worker can tell when the queue's work has completed. Called with
 * q->lock held.
 */
int queue_submit(struct d3dq_queue *q, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const struct drm_d3dq_sync *extra_signal,
		 const void *cmds, uint32_t cmd_bytes)
{
	struct drm_d3dq_sync signals[2] = {
		{
			.handle = q->tl,
			.flags = DRM_D3DQ_SYNC_TIMELINE,
			.point = q->tl_point + 1,
		},
	};
	struct drm_d3dq_submit args = {
		.queue_id = q->id,
		.waits = DRM_D3DQ_OBJ_ARRAY(nwaits, waits),
		.signals = DRM_D3DQ_OBJ_ARRAY(extra_signal ? 2 : 1, signals),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = cmd_bytes,
	};
	struct drm_d3dq_queue_get_state state = { .id = q->id };
	bool ring;
	int ret;

	if (!nwaits)
		args.waits.stride = 0;
	if (extra_signal)
		signals[1] = *extra_signal;
	ret = d3dq_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_SUBMIT, &args);
	if (ret == -ECANCELED) {
		/* The queue is lost: so is the device. */
		if (d3dq_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE,
			       &state) || !state.reason)
			state.reason = -ECANCELED;
		dev_remove(q->dev, state.reason);
		return -ENODEV;
	}
	if (ret)
		return ret;
	q->tl_point++;

	pthread_mutex_lock(&q->pend_lock);
	q->submitted = q->tl_point;
	ring = !q->in_wait_set;
	pthread_mutex_unlock(&q->pend_lock);
	if (ring)
		worker_ring(q->dev);
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
	ret = queue_desc_to_uapi(desc, &create);
	if (ret)
		return ret;
	ret = dev_removal_error(dev);
	if (ret)
		return ret;
	ret = worker_ensure(dev);
	if (ret)
		return ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	atomic_init(&q->refs, 1);
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->pend_lock, NULL);
	list_init(&q->pending);
	list_init(&q->dev_link);

	ret = syncobj_create(dev->fd, &q->tl);
	if (ret)
		goto err;
	ret = d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &create);
	if (ret)
		goto err;
	q->id = create.id;

	pthread_mutex_lock(&dev->lock);
	ret = dev_removal_error(dev);
	if (!ret)
		list_add_tail(&q->dev_link, &dev->queues);
	pthread_mutex_unlock(&dev->lock);
	if (ret) {
		destroy.id = q->id;
		d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
		goto err;
	}
	*out = q;
	return 0;

err:
	queue_unref(q);
	return ret;
}

/*
 * Work already submitted is allowed to finish (it is bounded by the job
 * timeout); work still held back in the library is dropped.
 */
D3DQ_EXPORT void d3dq_queue_destroy(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_device *dev;
	uint64_t point;

	if (!q)
		return;
	dev = q->dev;
	pthread_mutex_lock(&q->lock);
	q->dead = true;
	queue_drop_held_locked(q);
	point = q->tl_point;
	pthread_mutex_unlock(&q->lock);

	if (point)
		syncobj_timeline_wait(dev->fd, &q->tl, &point, 1, INT64_MAX,
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				      NULL);

	pthread_mutex_lock(&dev->lock);
	list_del(&q->dev_link);
	queue_apply_completed(q, point);
	pthread_mutex_unlock(&dev->lock);

	destroy.id = q->id;
	d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
	dev_run_flushes(dev);
	queue_unref(q);
}

static void held_append(struct d3dq_queue *q, struct held_op *op)
{
	op->next = NULL;
	if (q->held_tail)
		q->held_tail->next = op;
	else
		q->held_head = op;
	q->held_tail = op;
}

/* Queue wait on a shared fence; q->lock held. */
static int wait_shared_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			      uint64_t value, struct held_op *op)
{
	struct drm_d3dq_sync sync = {
		.handle = f->syncobj,
		.flags = DRM_D3DQ_SYNC_TIMELINE,
		.point = value,
	};
	uint64_t point = value;
	bool held = q->held_head != NULL;
	bool available;

	if (fence_value(f) >= value)
		return 0;
	available = !syncobj_timeline_wait(q->dev->fd, &f->syncobj, &point, 1,
					   0,
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
					   DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
					   NULL);
	if (available && !held)
		return queue_submit(q, &sync, 1, NULL, NULL, 0);

	pthread_mutex_lock(&f->lock);
	if (available) {
		op->ticket->resolved = true;
		op->ticket->wait_handle = f->syncobj;
		op->ticket->wait_point = value;
	} else {
		op->ticket->in_list = true;
		list_add_tail(&op->ticket->link, &f->tickets);
	}
	pthread_mutex_unlock(&f->lock);
	fence_ref(f);
	held_append(q, op);
	/*
	 * The worker (started with the first queue) satisfies the wait once
	 * the value is reached; the availability thread resolves it as soon
	 * as the value is submitted. If that thread cannot start, the worker
	 * alone still releases the queue, only later.
	 */
	if (!available) {
		worker_ring(q->dev);
		avail_watch(q->dev);
	}
	return 1;
}

/* Queue wait on a library fence; q->lock held. 1 = op consumed. */
static int wait_local_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			     uint64_t value, struct held_op *op)
{
	struct drm_d3dq_sync sync = { .flags = DRM_D3DQ_SYNC_TIMELINE };
	struct pending_update *best = NULL;
	struct d3dq_queue *wq;
	struct list *pos, *tmp;
	bool held = q->held_head != NULL;
	int ret;

	pthread_mutex_lock(&f->lock);
	if (fence_value(f) >= value || f->destroyed) {
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	list_for_each_safe(pos, tmp, &f->pending) {
		struct pending_update *pu =
			container_of(pos, struct pending_update, fence_link);

		if (pu->value >= value && (!best || pu->order < best->order))
			best = pu;
	}
	if (best && best->queue == q) {
		/* Signalled earlier on this queue: queue order is enough. */
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	if (best) {
		wq = best->queue;
		queue_ref(wq);
		sync.handle = wq->tl;
		sync.point = best->point;
		if (!held) {
			pthread_mutex_unlock(&f->lock);
			ret = queue_submit(q, &sync, 1, NULL, NULL, 0);
			queue_unref(wq);
			return ret;
		}
		op->ticket->resolved = true;
		op->ticket->wait_queue = wq;
		op->ticket->wait_handle = sync.handle;
		op->ticket->wait_point = sync.point;
	} else {
		op->ticket->in_list = true;
		list_add_tail(&op->ticket->link, &f->tickets);
	}
	pthread_mutex_unlock(&f->lock);
	fence_ref(f);
	held_append(q, op);
	return 1;
}

static int check_args(struct d3dq_queue *q, struct d3dq_fence *f)
{
	if (!q || !f || f->dev != q->dev)
		return -EINVAL;
	return 0;
}

D3DQ_EXPORT int d3dq_queue_wait(struct d3dq_queue *q, struct d3dq_fence *f,
				uint64_t value)
{
	struct held_op *op;
	int ret = check_args(q, f);

	if (ret)
		return ret;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->ticket = calloc(1, sizeof(*op->ticket));
	if (!op->ticket) {
		free(op);
		return -ENOMEM;
	}
	op->type = OP_WAIT;
	op->fence = f;
	op->value = value;
	op->ticket->queue = q;
	op->ticket->value = value;

	pthread_mutex_lock(&q->lock);
	if (dev_removed(q->dev) || q->dead)
		ret = -ENODEV;
	else if (f->shared)
		ret = wait_shared_locked(q, f, value, op);
	else
		ret = wait_local_locked(q, f, value, op);
	pthread_mutex_unlock(&q->lock);
	if (ret == 1) {
		ret = 0;
	} else {
		free(op->ticket);
		free(op);
	}
	dev_run_flushes(q->dev);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_signal(struct d3dq_queue *q, struct d3dq_fence *f,
				  uint64_t value)
{
	struct held_op *op = NULL;
	bool noop = false;
	int ret = check_args(q, f);

	if (ret)
		return ret;
	pthread_mutex_lock(&q->lock);
	if (dev_removed(q->dev) || q->dead) {
		ret = -ENODEV;
		goto out;
	}
	if (f->shared) {
		pthread_mutex_lock(&f->lock);
		ret = fence_shared_reserve(f, value, &noop);
		pthread_mutex_unlock(&f->lock);
		if (ret || noop)
			goto out;
	}
	if (q->held_head) {
		op = calloc(1, sizeof(*op));
		if (!op) {
			ret = -ENOMEM;
			goto out;
		}
		op->type = OP_SIGNAL;
		op->fence = f;
		op->value = value;
		fence_ref(f);
		held_append(q, op);
	} else {
		ret = queue_submit_signal_locked(q, f, value);
	}
out:
	pthread_mutex_unlock(&q->lock);
	dev_run_flushes(q->dev);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_execute(struct d3dq_queue *q,
				   struct d3dq_cmdlist *const *lists,
				   uint32_t count)
{
	struct held_op *op;
	bool recording = false;
	uint8_t *buf = NULL;
	size_t total = 0;
	uint32_t i;
	int ret = 0;

	if (!q || (count && !lists))
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!lists[i] || lists[i]->dev != q->dev)
			return -EINVAL;
	if (!count)
		return 0;

	for (i = 0; i < count; i++) {
		pthread_mutex_lock(&lists[i]->lock);
		if (lists[i]->state != CMDLIST_CLOSED || lists[i]->error)
			recording = true;
		total += lists[i]->len;
		pthread_mutex_unlock(&lists[i]->lock);
	}
	if (recording) {
		/* D3D12 removes the device for this misuse. */
		dev_remove(q->dev, -EINVAL);
		dev_run_flushes(q->dev);
		return -EINVAL;
	}
	if (dev_removed(q->dev))
		return -ENODEV;
	if (!total)
		return 0;
	if (total > UINT32_MAX)
		return -E2BIG;

	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	total = 0;
	for (i = 0; i < count; i++) {
		pthread_mutex_lock(&lists[i]->lock);
		memcpy(buf + total, lists[i]->data, lists[i]->len);
		total += lists[i]->len;
		pthread_mutex_unlock(&lists[i]->lock);
	}

	pthread_mutex_lock(&q->lock);
	if (dev_removed(q->dev) || q->dead) {
		ret = -ENODEV;
	} else if (q->held_head) {
		op = calloc(1, sizeof(*op));
		if (!op) {
			ret = -ENOMEM;
		} else {
			op->type = OP_EXECUTE;
			op->cmds = buf;
			op->cmd_bytes = (uint32_t)total;
			buf = NULL;
			held_append(q, op);
		}
	} else {
		ret = queue_submit_cmds_locked(q, buf, total);
	}
	pthread_mutex_unlock(&q->lock);
	free(buf);
	dev_run_flushes(q->dev);
	return ret;
}
