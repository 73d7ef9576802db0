// SPDX-License-Identifier: MIT
/*
 * libd3dq: queue waits, and holding work back behind waits that no kernel
 * point can serve yet.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The kernel only accepts a wait on a syncobj point that already has a
 * fence. When a queue waits for a fence value that no submitted signal is
 * certain to produce, the wait and everything queued after it on that
 * queue stay in a FIFO in library memory; the queue is "held". The wait
 * has a ticket on its fence, satisfied (for good, R6) when the value is
 * reached. The FIFO is drained in order by a flush, on whichever thread
 * made its head wait possible: a CPU signal, a queue signal recorded on
 * another queue, the completion applier, a fence being destroyed, or
 * device removal. Those threads only put the queue on the device's ready
 * list; the flush runs once they dropped their own locks, and only if it
 * can take the queue's lock without waiting (otherwise the holder of that
 * lock runs it before releasing it), so flushing one queue can release
 * others without nesting queue locks and without extra threads.
 */
#include <stdlib.h>

#include "internal.h"

void queue_lock(struct d3dq_queue *q)
{
	pthread_mutex_lock(&q->lock);
}

/*
 * Release q->lock, running the flushes requested meanwhile: whoever asked
 * and could not take the lock left it to the holder.
 */
void queue_unlock(struct d3dq_queue *q)
{
	for (;;) {
		if (atomic_load(&q->flush_req) &&
		    atomic_exchange(&q->flush_req, false))
			queue_flush_locked(q);
		pthread_mutex_unlock(&q->lock);
		if (!atomic_load(&q->flush_req) ||
		    pthread_mutex_trylock(&q->lock))
			return;
	}
}

/* Flush the queues on the ready list. Called with no library lock held. */
void run_flushes(struct d3dq_device *dev)
{
	struct d3dq_queue *q;

	/* Nothing to flush, the common case: no lock. */
	while (atomic_load(&dev->nready)) {
		pthread_mutex_lock(&dev->ready_lock);
		q = dev->ready_head;
		if (q) {
			dev->ready_head = q->ready_next;
			if (!dev->ready_head)
				dev->ready_tail = NULL;
			q->ready_queued = false;
			atomic_fetch_sub(&dev->nready, 1);
		}
		pthread_mutex_unlock(&dev->ready_lock);
		if (!q)
			return;
		atomic_store(&q->flush_req, true);
		if (!pthread_mutex_trylock(&q->lock))
			queue_unlock(q);
		queue_unref(q);
	}
}

static void ticket_unlink(struct d3dq_fence *f, struct ticket *t)
{
	pthread_mutex_lock(&f->lock);
	fence_ticket_unlink_locked(t);
	pthread_mutex_unlock(&f->lock);
}

static void held_op_free(struct held_op *op)
{
	if (op->fence) {
		if (op->type == OP_WAIT)
			ticket_unlink(op->fence, &op->ticket);
		fence_unref(op->fence);
	}
	free(op->cmds);
	free(op);
}

/* Drop the held FIFO and the folded waits: nothing after them will run. */
void queue_drop_held_locked(struct d3dq_queue *q)
{
	struct held_op *op;

	queue_drop_folded_locked(q);
	while ((op = q->held_head)) {
		q->held_head = op->next;
		held_op_free(op);
	}
	q->held_tail = NULL;
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

/* R9: is a signal of @f reaching @value held on @q (so earlier)? */
static bool held_signal(struct d3dq_queue *q, struct d3dq_fence *f,
			uint64_t value)
{
	struct held_op *op;

	for (op = q->held_head; op; op = op->next)
		if (op->type == OP_SIGNAL && op->fence == f &&
		    op->value >= value)
			return true;
	return false;
}

/*
 * d3dq_queue_wait(): satisfied now (R6), by an earlier signal on this
 * queue (R9), by a kernel wait on a submitted signal that will certainly
 * take effect (R18), or held with a ticket. q->lock held.
 */
int queue_wait_locked(struct d3dq_queue *q, struct d3dq_fence *f,
		      uint64_t value)
{
	bool held = q->held_head != NULL;
	enum choice c = CHOICE_NONE;
	struct watch *w = NULL;
	struct held_op *op;
	struct dep d;
	int ret;

	if (held && held_signal(q, f, value))
		return 0;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;

	pthread_mutex_lock(&f->lock);
	if (fence_reached(f, value)) {
		pthread_mutex_unlock(&f->lock);
		free(op);
		return 0;
	}
	c = fence_choose_locked(f, q, value, &d);
	if (c == CHOICE_POINT && held) {
		queue_unref(d.q);
		c = CHOICE_NONE;
	}
	/* Another process may bring the value: watch for it. */
	if (c == CHOICE_NONE && f->shared) {
		ret = fence_watch_locked(f, value, &w);
		if (ret) {
			pthread_mutex_unlock(&f->lock);
			free(op);
			return ret;
		}
		w->ticket = &op->ticket;
		op->ticket.watch = w;
	}
	if (c == CHOICE_NONE) {
		op->type = OP_WAIT;
		fence_ref(f);
		op->fence = f;
		op->value = value;
		op->ticket.queue = q;
		op->ticket.value = value;
		op->ticket.linked = true;
		list_add_tail(&op->ticket.link, &f->tickets);
	}
	pthread_mutex_unlock(&f->lock);

	if (c == CHOICE_READY) {
		free(op);
		return 0;
	}
	if (c == CHOICE_POINT) {
		free(op);
		return queue_submit_wait_locked(q, f, value, &d);
	}
	held_append(q, op);
	/* The ticket is satisfied when the value is applied. */
	fence_observe(f);
	if (w)
		dev_ring(q->dev);
	return 0;
}

/*
 * d3dq_queue_signal(): submitted now, or held behind the queue's held
 * wait. It takes effect when the queue executes it (R4): when the work
 * before it completes, however the calls of other queues' signals were
 * ordered. q->lock held.
 */
int queue_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			uint64_t value)
{
	struct held_op *op;

	if (!q->held_head)
		return queue_submit_signal_locked(q, f, value);
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->type = OP_SIGNAL;
	fence_ref(f);
	op->fence = f;
	op->value = value;
	held_append(q, op);
	return 0;
}

/*
 * d3dq_queue_execute(): on success @cmds belongs to the queue (held, or
 * freed once submitted). q->lock held.
 */
int queue_execute_locked(struct d3dq_queue *q, void *cmds, size_t len)
{
	struct held_op *op;
	int ret;

	if (!q->held_head) {
		ret = queue_submit_cmds_locked(q, cmds, len);
		if (!ret)
			free(cmds);
		return ret;
	}
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->type = OP_EXECUTE;
	op->cmds = cmds;
	op->cmd_bytes = (uint32_t)len;
	held_append(q, op);
	return 0;
}

/* The held wait at the head: 1 if it still blocks, else 0 or -errno. */
static int flush_wait(struct d3dq_queue *q, struct held_op *op)
{
	struct d3dq_fence *f = op->fence;
	struct ticket *t = &op->ticket;
	enum choice c;
	struct dep d;

	pthread_mutex_lock(&f->lock);
	if (t->satisfied || fence_reached(f, t->value)) {
		c = CHOICE_READY;
	} else {
		c = fence_choose_locked(f, q, t->value, &d);
		if (c == CHOICE_NONE) {
			pthread_mutex_unlock(&f->lock);
			return 1;
		}
	}
	fence_ticket_unlink_locked(t);
	pthread_mutex_unlock(&f->lock);
	if (c == CHOICE_POINT)
		return queue_submit_wait_locked(q, f, t->value, &d);
	return 0;
}

void queue_flush_locked(struct d3dq_queue *q)
{
	struct held_op *op;
	int ret = 0;

	if (q->dead)
		return;
	while ((op = q->held_head)) {
		if (dev_refusing(q->dev)) {
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
			dev_remove(q->dev, ret);
			queue_drop_held_locked(q);
			return;
		}
	}
}
