// SPDX-License-Identifier: MIT
/*
 * libd3dq: holding work back behind waits whose signal is not submitted.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The kernel only accepts a wait on a syncobj point that already has a
 * fence. When a queue waits for a fence value that no submitted signal
 * produces yet, the wait and everything queued after it on that queue stay
 * in a FIFO in library memory; the queue is "held". The FIFO is drained in
 * order, on whichever thread made its head wait submittable: a CPU signal,
 * a queue signal submitted on another queue, the device worker applying a
 * completed signal, a fence being destroyed, or device removal. Those
 * threads only put the queue on the device's flush list; the flush itself
 * runs once they have dropped their own locks, so flushing one queue can
 * release others (a cascade) without nesting queue locks and without
 * extra threads.
 */
#include <stdlib.h>

#include "internal.h"

void dev_queue_flush_later(struct d3dq_device *dev, struct d3dq_queue *q)
{
	pthread_mutex_lock(&dev->flush_lock);
	if (!q->flush_queued) {
		q->flush_queued = true;
		queue_ref(q);
		q->flush_next = NULL;
		if (dev->flush_tail)
			dev->flush_tail->flush_next = q;
		else
			dev->flush_head = q;
		dev->flush_tail = q;
	}
	pthread_mutex_unlock(&dev->flush_lock);
}

/* Call with no library lock held. */
void dev_run_flushes(struct d3dq_device *dev)
{
	struct d3dq_queue *q;

	for (;;) {
		pthread_mutex_lock(&dev->flush_lock);
		q = dev->flush_head;
		if (q) {
			dev->flush_head = q->flush_next;
			if (!dev->flush_head)
				dev->flush_tail = NULL;
			q->flush_queued = false;
		}
		pthread_mutex_unlock(&dev->flush_lock);
		if (!q)
			return;
		pthread_mutex_lock(&q->lock);
		queue_flush_locked(q);
		pthread_mutex_unlock(&q->lock);
		queue_unref(q);
	}
}

void ticket_cancel(struct d3dq_fence *f, struct ticket *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&f->lock);
	if (t->in_list) {
		list_del(&t->link);
		t->in_list = false;
	}
	pthread_mutex_unlock(&f->lock);
	if (t->wait_queue)
		queue_unref(t->wait_queue);
	free(t);
}

static void held_op_free(struct held_op *op)
{
	if (op->fence) {
		if (op->ticket)
			ticket_cancel(op->fence, op->ticket);
		fence_unref(op->fence);
	}
	free(op->cmds);
	free(op);
}

void queue_drop_held_locked(struct d3dq_queue *q)
{
	struct held_op *op;

	while ((op = q->held_head)) {
		q->held_head = op->next;
		held_op_free(op);
	}
	q->held_tail = NULL;
}

/*
 * Submit a queue signal. For a fence that is not shared, nothing needs to
 * run: the update waits for the queue's last submitted point, which
 * completes once everything queued before the signal has. Only a queue
 * that never submitted anything, or a shared fence (whose own syncobj
 * point must be signalled), needs a pure synchronisation job. Then record
 * the pending update and resolve queued waits of other queues that this
 * signal satisfies.
 */
int queue_submit_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			       uint64_t value)
{
	struct drm_d3dq_sync extra = {
		.handle = f->syncobj,
		.flags = DRM_D3DQ_SYNC_TIMELINE,
		.point = value,
	};
	struct pending_update *pu = NULL;
	struct list *pos, *tmp;
	uint64_t point;
	bool ring;
	int ret;

	if (!f->shared) {
		pu = calloc(1, sizeof(*pu));
		if (!pu)
			return -ENOMEM;
	}
	if (f->shared || !q->tl_point) {
		ret = queue_submit(q, NULL, 0, f->shared ? &extra : NULL,
				   NULL, 0);
		if (ret) {
			free(pu);
			return ret;
		}
	}
	point = q->tl_point;

	pthread_mutex_lock(&f->lock);
	if (pu) {
		fence_ref(f);
		queue_ref(q);
		pu->fence = f;
		pu->queue = q;
		pu->value = value;
		pu->point = point;
		pu->order = ++f->next_order;
		list_add_tail(&pu->fence_link, &f->pending);
	}
	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (t->value > value)
			continue;
		t->resolved = true;
		t->in_list = false;
		list_del(&t->link);
		if (t->queue == q) {
			t->same_queue = true;
		} else if (f->shared) {
			t->wait_handle = f->syncobj;
			t->wait_point = t->value;
		} else {
			queue_ref(q);
			t->wait_queue = q;
			t->wait_handle = q->tl;
			t->wait_point = point;
		}
		dev_queue_flush_later(q->dev, t->queue);
	}
	pthread_mutex_unlock(&f->lock);

	if (pu) {
		pthread_mutex_lock(&q->pend_lock);
		list_add_tail(&pu->queue_link, &q->pending);
		/* The point may be one the worker has seen complete already. */
		ring = !q->in_wait_set || q->watch_point > point;
		pthread_mutex_unlock(&q->pend_lock);
		if (ring)
			worker_ring(q->dev);
	}
	return 0;
}

/*
 * Submit a command stream, split at command boundaries into jobs of at
 * most max_cmd_bytes. The queue runs them in order, so this is the same as
 * one job.
 */
int queue_submit_cmds_locked(struct d3dq_queue *q, const uint8_t *cmds,
			     size_t len)
{
	size_t start = 0, pos = 0;
	int ret;

	while (pos < len) {
		const struct drm_d3dq_cmd_header *h =
			(const void *)(cmds + pos);

		if (pos + h->size - start > q->dev->max_cmd_bytes) {
			ret = queue_submit(q, NULL, 0, NULL, cmds + start,
					   (uint32_t)(pos - start));
			if (ret)
				return ret;
			start = pos;
		}
		pos += h->size;
	}
	if (pos > start)
		return queue_submit(q, NULL, 0, NULL, cmds + start,
				    (uint32_t)(pos - start));
	return 0;
}

/* Returns 1 if the head wait still blocks, else 0 or -errno. */
static int flush_wait(struct d3dq_queue *q, struct held_op *op)
{
	struct ticket *t = op->ticket;
	struct d3dq_fence *f = op->fence;
	struct drm_d3dq_sync sync = { .flags = DRM_D3DQ_SYNC_TIMELINE };
	bool submit = false;

	pthread_mutex_lock(&f->lock);
	if (!t->satisfied && !f->destroyed) {
		if (!t->resolved) {
			pthread_mutex_unlock(&f->lock);
			return 1;
		}
		if (!t->same_queue) {
			submit = true;
			sync.handle = t->wait_handle;
			sync.point = t->wait_point;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (!submit)
		return 0;
	return queue_submit(q, &sync, 1, NULL, NULL, 0);
}

void queue_flush_locked(struct d3dq_queue *q)
{
	struct held_op *op;
	int ret = 0;

	if (q->dead)
		return;
	while ((op = q->held_head)) {
		if (dev_removed(q->dev)) {
			queue_drop_held_locked(q);
			return;
		}
		switch (op->type) {
		case OP_WAIT:
			ret = flush_wait(q, op);
			if (ret == 1)
				return;
			break;
		case OP_SIGNAL:
			ret = queue_submit_signal_locked(q, op->fence,
							 op->value);
			break;
		case OP_EXECUTE:
			ret = queue_submit_cmds_locked(q, op->cmds,
						       op->cmd_bytes);
			break;
		}
		q->held_head = op->next;
		if (!q->held_head)
			q->held_tail = NULL;
		held_op_free(op);
		if (ret) {
			/* Work cannot run as queued: the device is lost. */
			dev_remove(q->dev, ret == -ENODEV ? -ENODEV : ret);
			queue_drop_held_locked(q);
			return;
		}
	}
}
