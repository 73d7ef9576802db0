// SPDX-License-Identifier: MIT
/*
 * libd3dq: queues (Wait, Signal, ExecuteCommandLists) and submission.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Each queue owns a kernel queue and a timeline syncobj; every job the
 * library submits signals the next point of that timeline. Fence values
 * never reach the kernel as job signals: a queue signal is recorded as
 * "fence F takes value v when point p of queue Q completes" (worker.c
 * applies it), and a queue wait becomes a kernel wait on such a point,
 * recorded as an edge and carried by the queue's next job. Work that
 * cannot be submitted yet is held back (holdback.c).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * The last reference frees memory and kernel handles only: by then the
 * queue was destroyed, which applied (and so dropped) all its records.
 */
void queue_unref(struct d3dq_queue *q)
{
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	queue_drop_folded_locked(q);
	free(q->fold);
	syncobj_destroy(q->dev->fd, q->tl);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/*
 * Submit one job signalling the queue's next timeline point. q->lock
 * held. A lost queue removes the device (-ENODEV). When the kernel ran
 * the job to completion inside the call (DRM_D3DQ_SUBMIT_DONE: it and
 * every earlier job of the queue completed without error), its point is
 * known complete: the records added for it (its edges, the signals after
 * it) are applied as they are added, on this thread, causes first, and
 * nobody waits for the point in the kernel.
 */
int queue_submit(struct d3dq_queue *q, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const void *cmds, uint32_t cmd_bytes,
		 uint64_t *seqno)
{
	struct drm_d3dq_sync signal = {
		.handle = q->tl,
		.flags = DRM_D3DQ_SYNC_TIMELINE,
		.point = q->tl_point + 1,
	};
	struct drm_d3dq_submit args = {
		.queue_id = q->id,
		.waits = DRM_D3DQ_OBJ_ARRAY(nwaits, waits),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, &signal),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = cmd_bytes,
	};
	int ret;

	if (!nwaits)
		args.waits.stride = 0;
	ret = d3dq_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_SUBMIT, &args);
	if (ret == -ECANCELED) {
		/* The queue is lost: so is the device. */
		ret = queue_check_lost(q);
		dev_remove(q->dev, ret ? ret : -ECANCELED);
		return -ENODEV;
	}
	if (ret == -ENODEV && dev_refusing(q->dev))
		return dev_refused(q->dev);	/* removed by another thread */
	if (ret)
		return ret;
	q->tl_point++;
	atomic_store(&q->submitted, q->tl_point);
	if (seqno)
		*seqno = args.seqno;
	if (args.out_flags & DRM_D3DQ_SUBMIT_DONE)
		q->done = q->tl_point;
	return 0;
}

/*
 * Folded waits. A queue wait that can rely on a submitted signal's point
 * is not submitted as a job of its own: it is kept in q->fold and the
 * queue's next job carries it in its wait list (the queue could not run
 * anything before it anyway), each wait at its own index, releasable on
 * its own. Only a signal with nothing after it needs a job to carry the
 * waits (a synchronisation job). Waits that nothing follows are dropped
 * when the queue is destroyed: no work depends on them.
 */

/* Is the wait of @e over already (CPU signal, destruction, removal)? */
static bool folded_reached(struct edge *e)
{
	struct d3dq_fence *f = e->fence;

	return f && fence_reached(f, e->value);
}

static int fold_add(struct d3dq_queue *q, struct edge *e)
{
	if (q->nfold == q->capfold) {
		uint32_t cap = q->capfold ? 2 * q->capfold : 4;
		struct edge **grown = realloc(q->fold, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		q->fold = grown;
		q->capfold = cap;
	}
	q->fold[q->nfold++] = e;
	return 0;
}

void queue_drop_folded_locked(struct d3dq_queue *q)
{
	uint32_t i;

	for (i = 0; i < q->nfold; i++)
		edge_free(q->fold[i]);
	q->nfold = 0;
}

/*
 * Submit one job waiting for the points of @edges (at most max_syncs),
 * with @cmds, and record the edges at its point; a wait with a fence is
 * releasable where the driver can (R6, R14), named by the job's seqno and
 * its index. On error the edges stay the caller's. q->lock held.
 */
static int submit_edges(struct d3dq_queue *q, struct edge **edges,
			uint32_t n, const void *cmds, uint32_t cmd_bytes)
{
	struct drm_d3dq_sync stack[4], *syncs = stack;
	bool can_release = q->dev->can_release;
	struct fire fire = FIRE_INIT;
	uint64_t seqno = 0;
	uint32_t i;
	int ret;

	if (n > sizeof(stack) / sizeof(stack[0])) {
		syncs = calloc(n, sizeof(*syncs));
		if (!syncs)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		syncs[i].handle = edges[i]->dep->tl;
		syncs[i].flags = DRM_D3DQ_SYNC_TIMELINE;
		if (edges[i]->fence && can_release)
			syncs[i].flags |= DRM_D3DQ_SYNC_RELEASABLE;
		syncs[i].point = edges[i]->dep_point;
	}
	ret = queue_submit(q, n ? syncs : NULL, n, cmds, cmd_bytes, &seqno);
	if (syncs != stack)
		free(syncs);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		struct edge *e = edges[i];

		if (e->fence && can_release && seqno) {
			e->queue_id = q->id;
			e->index = i;
			e->seqno = seqno;
			/* Linked first: a released edge is no dependency. */
			fence_kwait_link(e, &fire);
		} else if (e->fence) {
			fence_unref(e->fence);
			e->fence = NULL;
		}
		record_edge(q, q->tl_point, e);
	}
	fire_run(q->dev, &fire);
	return 0;
}

/*
 * Submit a job (@cmds, or none) carrying the folded waits that are not
 * over yet; when there are more than the driver takes per job, the first
 * ones go in synchronisation jobs before it. q->lock held.
 */
static int submit_folded(struct d3dq_queue *q, const void *cmds,
			 uint32_t cmd_bytes)
{
	uint32_t max = q->dev->max_syncs, i, n = 0, done = 0, chunk;
	int ret = 0;

	/* No wait to carry, the common case: just the job. */
	if (!q->nfold)
		return cmd_bytes ? queue_submit(q, NULL, 0, cmds, cmd_bytes,
						NULL) : 0;
	for (i = 0; i < q->nfold; i++) {
		if (folded_reached(q->fold[i]))
			edge_free(q->fold[i]);
		else
			q->fold[n++] = q->fold[i];
	}
	q->nfold = n;
	while (n - done > max) {
		ret = submit_edges(q, q->fold + done, max, NULL, 0);
		if (ret)
			goto out;
		done += max;
	}
	chunk = n - done;
	if (chunk || cmd_bytes)
		ret = submit_edges(q, q->fold + done, chunk, cmds, cmd_bytes);
	if (!ret)
		done = n;
out:
	/* What was submitted belongs to the records now. */
	for (i = done; i < n; i++)
		q->fold[i - done] = q->fold[i];
	q->nfold = n - done;
	return ret;
}

/*
 * Submit queue signal (@f, @value). Nothing needs to run: the signal takes
 * effect when the queue's last submitted point completes (point 0: at
 * once). Folded waits before it need a job to carry them. q->lock held.
 */
int queue_submit_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			       uint64_t value)
{
	int ret;

	if (q->nfold) {
		ret = submit_folded(q, NULL, 0);
		if (ret)
			return ret;
	}
	return record_signal(q, f, value, q->tl_point);
}

/*
 * A queue wait for (@f, @value) that relies on @d (chosen by
 * fence_choose_locked(), whose reference this drops): folded into the
 * queue's next job, see above. q->lock held.
 */
int queue_submit_wait_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			     uint64_t value, struct dep *d)
{
	struct edge *e = edge_new(d->q, d->point);
	int ret;

	queue_unref(d->q);
	if (!e)
		return -ENOMEM;
	fence_ref(f);
	e->fence = f;
	e->value = value;
	ret = fold_add(q, e);
	if (ret) {
		edge_free(e);
		return ret;
	}
	/* A job carries at most max_syncs waits: one is full, submit it. */
	if (q->nfold >= q->dev->max_syncs)
		return submit_folded(q, NULL, 0);
	return 0;
}

/*
 * Submit a command stream, split at command boundaries into jobs of at
 * most max_cmd_bytes. The queue runs them in order, so this is the same as
 * one job. q->lock held.
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
			ret = submit_folded(q, cmds + start,
					    (uint32_t)(pos - start));
			if (ret)
				return ret;
			start = pos;
		}
		pos += h->size;
	}
	if (pos > start)
		return submit_folded(q, cmds + start, (uint32_t)(pos - start));
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
	/* A driver before uapi 1.1 has no realtime priority. */
	if (create.priority == DRM_D3DQ_QUEUE_PRIORITY_REALTIME &&
	    !dev->has_realtime)
		return -EOPNOTSUPP;
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
	list_init(&q->recs);
	list_init(&q->dev_link);
	list_init(&q->active_link);

	ret = syncobj_create(dev->fd, &q->tl);
	if (ret)
		goto err;
	ret = d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &create);
	if (ret)
		goto err;
	q->id = create.id;

	ret = dev_link_object(dev, &q->dev_link, &dev->queues);
	if (ret) {
		destroy.id = q->id;
		d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
		goto err;
	}
	/* Idle: the worker waits on it from its first submit on. */
	*out = q;
	return 0;

err:
	queue_unref(q);
	return ret;
}

/*
 * Work already submitted is allowed to finish (it is bounded by the job
 * timeout) and applied; work still held back in the library is dropped.
 */
D3DQ_EXPORT void d3dq_queue_destroy(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_device *dev;
	uint64_t point;
	int lost;

	if (!q)
		return;
	dev = q->dev;
	queue_lock(q);
	q->dead = true;
	queue_drop_held_locked(q);
	point = q->tl_point;
	queue_unlock(q);

	if (point) {
		syncobj_timeline_wait(dev->fd, &q->tl, &point, 1, INT64_MAX,
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				      NULL);
		lost = queue_check_lost(q);
		if (lost)
			dev_remove(dev, lost);
	}
	/* Also after a removal: applying then only drops the records. */
	apply_upto(q, point);
	queue_deactivate(q);

	pthread_mutex_lock(&dev->lock);
	list_del(&q->dev_link);
	pthread_mutex_unlock(&dev->lock);
	destroy.id = q->id;
	d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
	run_flushes(dev);
	/* The worker may watch it: let it drop its reference. */
	if (atomic_load(&dev->worker_started))
		dev_ring(dev);
	queue_unref(q);
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
	int ret = check_args(q, f);

	if (ret)
		return ret;
	queue_lock(q);
	if (dev_refusing(q->dev))
		ret = dev_refused(q->dev);
	else if (q->dead)
		ret = -ENODEV;
	else
		ret = queue_wait_locked(q, f, value);
	queue_unlock(q);
	run_flushes(q->dev);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_signal(struct d3dq_queue *q, struct d3dq_fence *f,
				  uint64_t value)
{
	int ret = check_args(q, f);

	if (ret)
		return ret;
	queue_lock(q);
	if (dev_refusing(q->dev))
		ret = dev_refused(q->dev);
	else if (q->dead)
		ret = -ENODEV;
	else
		ret = queue_signal_locked(q, f, value);
	queue_unlock(q);
	run_flushes(q->dev);
	return ret;
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

/*
 * The common case, one list on a queue that holds nothing back: submit
 * from the list's own buffer under its lock (the kernel copies it), no
 * copy of ours. 1: not this case, take the general path.
 */
static int execute_one(struct d3dq_queue *q, struct d3dq_cmdlist *l)
{
	int ret = 1;

	queue_lock(q);
	if (!q->held_head && !q->dead && !dev_refusing(q->dev)) {
		pthread_mutex_lock(&l->lock);
		if (l->state == CMDLIST_CLOSED && !l->error &&
		    l->len <= UINT32_MAX)
			ret = queue_submit_cmds_locked(q, l->data, l->len);
		pthread_mutex_unlock(&l->lock);
	}
	queue_unlock(q);
	if (ret != 1)
		run_flushes(q->dev);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_execute(struct d3dq_queue *q,
				   struct d3dq_cmdlist *const *lists,
				   uint32_t count)
{
	uint8_t *buf = NULL;
	size_t total = 0;
	uint32_t i;
	int ret;

	if (!q || (count && !lists))
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!lists[i] || lists[i]->dev != q->dev)
			return -EINVAL;
	if (!count)
		return 0;
	if (count == 1) {
		ret = execute_one(q, lists[0]);
		if (ret != 1)
			return ret;
	}

	ret = snapshot_lists(lists, count, &buf, &total);
	if (ret == 1) {
		/* D3D12 removes the device for this misuse. */
		dev_remove(q->dev, -EINVAL);
		run_flushes(q->dev);
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (dev_refusing(q->dev)) {
		free(buf);
		return dev_refused(q->dev);
	}
	if (!total) {
		free(buf);
		return 0;
	}
	if (total > UINT32_MAX) {
		free(buf);
		return -E2BIG;
	}

	queue_lock(q);
	if (dev_refusing(q->dev))
		ret = dev_refused(q->dev);
	else if (q->dead)
		ret = -ENODEV;
	else
		ret = queue_execute_locked(q, buf, total);
	queue_unlock(q);
	if (ret)
		free(buf);
	run_flushes(q->dev);
	return ret;
}
