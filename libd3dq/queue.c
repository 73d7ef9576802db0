// SPDX-License-Identifier: MIT
/*
 * libd3dq: queues. Each call is one kernel call under the queue's lock
 * (R16): Signal a fence signal that the queue's last job takes, or that
 * is set at once on an idle queue (DRM_D3DQ_SUBMIT_TAIL; from uapi 1.15 a
 * FENCE_SIGNAL, without the lock, while the queue's idle word reads 0:
 * queue_idle()), Wait a fence wait that
 * the kernel decides at once and carries to the queue's next job
 * (DRM_D3DQ_SUBMIT_CARRY; before uapi 1.8 each is a job of its own, a
 * wait held with DRM_D3DQ_SUBMIT_HOLD), Execute the command streams.
 * Every submit but a carried wait also signals the next point of @tl;
 * from uapi 1.13 a Signal's point is JOB_ONLY: it is added only if the
 * kernel makes a job of it, and a wait for a skipped point is satisfied
 * by the next one (d3dqp_queue_wait_armed()); from 1.14 ARMED_ONLY: not
 * either for a held Signal that the value's write completes in its call.
 *
 * A call holds a reference of the queue (and of the fence or lists it
 * names) until it returns; d3dq_queue_destroy() destroys the kernel
 * queue under the lock, and the calls that take it afterwards find the
 * queue dead (-ENODEV) rather than its id, which the kernel may have
 * given to a new queue.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void d3dqp_queue_put(struct d3dq_queue *q)
{
	struct d3dq_device *dev = q->dev;

	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	if (q->idle_page)
		d3dqp_vpage_unmap(dev, q->idle_page);
	if (q->tl)
		drmSyncobjDestroy(dev->fd, q->tl);
	pthread_mutex_destroy(&q->lock);
	free(q);
	d3dqp_dev_put(dev);
}

/*
 * A call on @q: a reference for its duration, or -ENODEV (inherited, or
 * its device closed). The lock holder still checks q->dead.
 */
static int queue_enter(struct d3dq_queue *q)
{
	int ret = d3dqp_dev_usable(q->dev);

	if (!ret)
		obj_get(q);
	return ret;
}

/*
 * One SUBMIT. A wait for a shared fence (@shared) names its @reg (its
 * own handle from uapi 1.10), read under reg_lock, which is held until
 * the kernel took it: 1 without a SUBMIT if the fence was destroyed (its
 * waits are released, R14).
 */
static int submit_ioctl(struct d3dq_queue *q, struct drm_d3dq_submit *args,
			struct drm_d3dq_sync *wait, struct d3dq_fence *shared)
{
	struct d3dq_device *dev = q->dev;
	int ret = 1;

	if (!shared)
		return d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_SUBMIT, args);
	pthread_rwlock_rdlock(&dev->reg_lock);
	wait->handle = d3dqp_fence_reg(shared);
	if (wait->handle)
		ret = d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_SUBMIT, args);
	pthread_rwlock_unlock(&dev->reg_lock);
	return ret;
}

/*
 * One job, or a carried wait; q->lock held; a lost queue is a removed
 * device (-ENODEV).
 */
static int submit_locked(struct d3dq_queue *q, struct drm_d3dq_sync *wait,
			 const struct drm_d3dq_sync *signal, const void *cmds,
			 uint32_t cmd_bytes, struct d3dq_fence *shared)
{
	bool carry = wait && !signal && !cmd_bytes && q->dev->has_carry;
	bool tail = signal && !wait && !cmd_bytes && q->dev->has_tail;
	/* A stream longer than one job's: the kernel cuts it (uapi 1.10). */
	bool split = !wait && cmd_bytes > q->dev->max_cmd_bytes;
	struct drm_d3dq_sync signals[2] = { {
		.handle = q->tl,
		.flags = DRM_D3DQ_SYNC_TIMELINE |
			 (!tail ? 0 :
			  q->dev->has_armed_only ? DRM_D3DQ_SYNC_ARMED_ONLY :
			  q->dev->has_job_only ? DRM_D3DQ_SYNC_JOB_ONLY : 0),
		.point = q->tl_point + 1,
	} };
	struct drm_d3dq_submit args = {
		.queue_id = q->id,
		.flags = (carry ? DRM_D3DQ_SUBMIT_CARRY :
			  tail ? DRM_D3DQ_SUBMIT_TAIL :
			  wait ? DRM_D3DQ_SUBMIT_HOLD :
			  split ? DRM_D3DQ_SUBMIT_SPLIT : 0) |
			 /* An execute's commands (0.5, uapi 1.12). */
			 (cmd_bytes && q->implicit ?
			  DRM_D3DQ_SUBMIT_IMPLICIT : 0),
		.waits = DRM_D3DQ_OBJ_ARRAY(wait ? 1 : 0, wait),
		.signals = DRM_D3DQ_OBJ_ARRAY(carry ? 0 : signal ? 2 : 1,
					      signals),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = cmd_bytes,
	};
	int ret;

	if (!wait)
		args.waits.stride = 0;
	if (carry)
		args.signals.stride = 0;
	if (signal)
		signals[1] = *signal;
	/*
	 * Over a limit, the kernel sleeps while armed jobs (of any queue,
	 * file or process of the user) hold part of it, and returns
	 * -ENOSPC only once held jobs alone fill it (uapi 1.9): nothing
	 * to retry here, and no wait for held work (R5).
	 */
	ret = submit_ioctl(q, &args, wait, shared);
	/* The shared fence was destroyed: its wait is released (R14). */
	if (ret == 1)
		return 0;
	/*
	 * The queue is lost: the device is removed (the kernel removes it
	 * on loss), or being removed. The kernel stops the queues before
	 * it sets the fences: return once that is done (R15's instant).
	 */
	if (ret == -ECANCELED || ret == -ENODEV) {
		d3dqp_dev_removal_error(q->dev);
		return -ENODEV;
	}
	if (!ret && !carry)
		q->tl_point++;
	/* A split stream that can never fit (uapi 1.10). */
	return ret == -E2BIG ? -ENOMEM : ret;
}

/*
 * A command stream, in jobs of at most max_cmd_bytes. q->lock held. From
 * uapi 1.10 one SUBMIT, which the kernel cuts into jobs, all or none;
 * before, a stream longer than one job's is several SUBMITs, and one
 * that fails leaves the earlier ones submitted.
 */
static int submit_cmds_locked(struct d3dq_queue *q, const uint8_t *cmds,
			      size_t len)
{
	size_t start = 0, pos = 0;
	int ret;

	if (q->dev->has_split)
		return len > UINT32_MAX ? -ENOMEM :
		       submit_locked(q, NULL, NULL, cmds, (uint32_t)len, NULL);

	while (pos < len) {
		const struct drm_d3dq_cmd_header *h =
			(const void *)(cmds + pos);

		if (pos + h->size - start > q->dev->max_cmd_bytes) {
			ret = submit_locked(q, NULL, NULL, cmds + start,
					    (uint32_t)(pos - start), NULL);
			if (ret)
				return ret;
			start = pos;
		}
		pos += h->size;
	}
	if (pos > start)
		return submit_locked(q, NULL, NULL, cmds + start,
				     (uint32_t)(pos - start), NULL);
	return 0;
}

/* A queue of @dev, whose reference the caller holds. */
static int queue_new(struct d3dq_device *dev,
		     struct drm_d3dq_queue_create *create,
		     struct d3dq_queue **out)
{
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_queue *q;
	int ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	d3dqp_dev_get(dev);
	atomic_init(&q->refs, 1);
	pthread_mutex_init(&q->lock, NULL);
	list_init(&q->dev_link);

	if (dev->has_idle_word)
		create->flags |= DRM_D3DQ_QUEUE_IDLE_WORD;
	ret = drmSyncobjCreate(dev->fd, 0, &q->tl) ? -errno :
	      d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, create);
	if (ret) {
		ret = ret == -ENODEV && d3dqp_dev_removal_error(dev) ?
		      d3dqp_dev_removal_error(dev) : ret;
		goto err;
	}
	q->id = create->id;
	/* Without its mapping, every Signal is a submit. */
	if (create->idle_mmap_offset &&
	    d3dqp_vpage_map(dev, create->idle_mmap_offset, create->idle_offset,
			    &q->idle_page, &q->idle)) {
		q->idle_page = NULL;
		q->idle = NULL;
	}

	ret = d3dqp_dev_link_object(dev, &q->dev_link, &dev->queues);
	if (ret) {
		destroy.id = q->id;
		d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
		goto err;
	}
	*out = q;
	return 0;

err:
	d3dqp_queue_put(q);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_create(struct d3dq_device *dev,
				  const struct d3dq_queue_desc *desc,
				  struct d3dq_queue **out)
{
	struct drm_d3dq_queue_create create = { 0 };
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev)
		return -EINVAL;
	ret = d3dqp_queue_desc_to_uapi(desc, &create);
	if (ret)
		return ret;
	ret = d3dqp_dev_enter(dev);
	if (ret)
		return ret;
	/* A driver before uapi 1.1 has no realtime priority. */
	if (create.priority == DRM_D3DQ_QUEUE_PRIORITY_REALTIME &&
	    !dev->has_realtime)
		ret = -EOPNOTSUPP;
	else
		ret = d3dqp_dev_removal_error(dev);
	if (!ret)
		ret = queue_new(dev, &create, out);
	d3dqp_dev_put(dev);
	return ret;
}

/*
 * Armed work finishes (bounded; unless waiting for it fails, then it is
 * cancelled); held work is dropped with the queue. Once (the device's
 * close may destroy it too); the memory stays for the calls still in
 * progress on it. An inherited queue (fork) is the parent's: nothing is
 * done, not even its lock taken.
 */
D3DQ_EXPORT void d3dq_queue_destroy(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_destroy destroy = { 0 };
	struct d3dq_device *dev;

	if (!q || d3dqp_inherited(q->dev) || atomic_exchange(&q->destroyed,
							     true))
		return;
	dev = q->dev;
	pthread_mutex_lock(&q->lock);
	while (d3dqp_queue_wait_armed(q) > 0)
		;
	destroy.id = q->id;
	d3dqp_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &destroy);
	q->dead = true;
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_lock(&dev->lock);
	list_del(&q->dev_link);
	pthread_mutex_unlock(&dev->lock);
	d3dqp_queue_put(q);
}

/*
 * Whether everything submitted to @q before has completed and set its
 * fence values, and nothing waits in it: the kernel's idle word reads 0
 * (uapi 1.15, acquire). Then a Signal takes effect at once, as a
 * SUBMIT_TAIL would set it in the call, and is a FENCE_SIGNAL instead,
 * without the submit's cost (issue 40). No lock is needed: a submit
 * that the program ordered before the Signal (in one thread, or through
 * any synchronisation between threads) made the word non-zero before it
 * returned, and one made concurrently may come either side (R16).
 */
static bool queue_idle(const struct d3dq_queue *q)
{
	return q->idle && !__atomic_load_n(q->idle, __ATOMIC_ACQUIRE);
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
	ret = queue_enter(q);
	if (ret)
		return ret;
	/*
	 * A wait whose value is there at the call is satisfied (R6): no job.
	 * (UINT64_MAX may be a removal's: the kernel tells.)
	 */
	if (!signal && value <= d3dq_fence_get_completed_value(f) &&
	    d3dq_fence_get_completed_value(f) != UINT64_MAX)
		goto out;
	/*
	 * A shared fence's waits name its @reg instead (submit_ioctl()); a
	 * signal racing its destruction (uapi 1.10) has no handle left.
	 */
	s.handle = d3dqp_fence_handle(f);
	if (!s.handle && signal) {
		ret = -ENODEV;
		goto out;
	}
	obj_get(f);
	if (signal && queue_idle(q)) {
		ret = atomic_load(&q->destroyed) ? -ENODEV :
		      d3dqp_fence_set(f, s.handle, value);
	} else {
		pthread_mutex_lock(&q->lock);
		ret = q->dead ? -ENODEV :
		      submit_locked(q, signal ? NULL : &s, signal ? &s : NULL,
				    NULL, 0, f->shared && !signal ? f : NULL);
		pthread_mutex_unlock(&q->lock);
	}
	d3dqp_fence_put(f);
out:
	d3dqp_queue_put(q);
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
 * The lists are checked closed, each under its lock (1 if one is not:
 * a misuse), and their total length summed; then copied, each under its
 * lock, into @chunk (@cap bytes) and submitted in as few jobs as @cap
 * allows; a list longer than @cap goes from its own buffer. A list
 * re-recorded by another thread meanwhile is submitted whole or, caught
 * recording, refused (1), never overrun. q->lock held.
 */
static bool list_unusable(const struct d3dq_cmdlist *l)
{
	return l->state != CMDLIST_CLOSED || l->error;
}

/*
 * Whether a buffer @l names was destroyed: its handle is still the
 * buffer's (the list holds it, cmdlist.c), but the work is refused
 * (-ENOENT), as d3dq_queue_execute(3) says. l->lock held.
 */
static bool list_names_destroyed(const struct d3dq_cmdlist *l)
{
	size_t i;

	for (i = 0; i < l->nbufs; i++)
		if (atomic_load(&l->bufs[i]->destroyed))
			return true;
	return false;
}

static int lists_check(struct d3dq_cmdlist *const *lists, uint32_t count,
		       size_t *total)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		pthread_mutex_lock(&lists[i]->lock);
		/* Destroyed by another thread meanwhile: not a misuse. */
		ret = lists[i]->dead ? -ENODEV : list_unusable(lists[i]);
		if (!ret && list_names_destroyed(lists[i]))
			ret = -ENOENT;
		*total += lists[i]->len;
		pthread_mutex_unlock(&lists[i]->lock);
	}
	return ret;
}

static int lists_submit_locked(struct d3dq_queue *q,
			       struct d3dq_cmdlist *const *lists,
			       uint32_t count, uint8_t *chunk, size_t cap)
{
	size_t len = 0;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		struct d3dq_cmdlist *l = lists[i];

		pthread_mutex_lock(&l->lock);
		if (l->dead) {
			ret = -ENODEV;
		} else if (list_unusable(l)) {
			ret = 1;
		} else if (len + l->len > cap) {
			ret = len ? submit_cmds_locked(q, chunk, len) : 0;
			len = 0;
			if (!ret && l->len > cap)
				ret = submit_cmds_locked(q, l->data, l->len);
		}
		if (!ret && l->len && l->len <= cap - len) {
			memcpy(chunk + len, l->data, l->len);
			len += l->len;
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (!ret && len)
		ret = submit_cmds_locked(q, chunk, len);
	return ret;
}

/*
 * Without the memory for a copy of several lists: every list checked
 * first, then each submitted whole from its own buffer (all or nothing
 * per list), so that executing lists recorded already needs no memory
 * of their size (Windows' answer, tests/d3d12/answers). q->lock held.
 */
static int lists_submit_each_locked(struct d3dq_queue *q,
				    struct d3dq_cmdlist *const *lists,
				    uint32_t count)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		pthread_mutex_lock(&lists[i]->lock);
		ret = lists[i]->dead ? -ENODEV :
		      list_unusable(lists[i]) ? 1 : 0;
		pthread_mutex_unlock(&lists[i]->lock);
	}
	for (i = 0; i < count && !ret; i++) {
		pthread_mutex_lock(&lists[i]->lock);
		if (lists[i]->len)
			ret = submit_cmds_locked(q, lists[i]->data,
						 lists[i]->len);
		pthread_mutex_unlock(&lists[i]->lock);
	}
	return ret;
}

/*
 * From uapi 1.10: the lists whole, in one SUBMIT, all or nothing (the
 * kernel cuts it into jobs); every list is checked, under its lock,
 * before anything is submitted. A list that grew meanwhile grows the
 * copy. One list goes from its own buffer; several without the memory
 * for their copy go one by one (lists_submit_each_locked()). q->lock
 * held.
 */
static int lists_submit_whole_locked(struct d3dq_queue *q,
				     struct d3dq_cmdlist *const *lists,
				     uint32_t count, size_t total)
{
	uint8_t *buf = NULL, *grown;
	size_t len = 0;
	uint32_t i;
	int ret = 0;

	if (count > 1) {
		buf = malloc(total);
		if (!buf)
			return lists_submit_each_locked(q, lists, count);
	}
	for (i = 0; i < count && !ret; i++) {
		struct d3dq_cmdlist *l = lists[i];

		pthread_mutex_lock(&l->lock);
		if (l->dead) {
			ret = -ENODEV;
		} else if (list_unusable(l)) {
			ret = 1;
		} else if (count == 1) {
			ret = l->len ? submit_cmds_locked(q, l->data, l->len) :
			      0;
		} else if (len + l->len > total) {
			grown = realloc(buf, len + l->len);
			ret = grown ? 0 : -ENOMEM;
			if (grown) {
				buf = grown;
				total = len + l->len;
			}
		}
		if (!ret && count > 1 && l->len) {
			memcpy(buf + len, l->data, l->len);
			len += l->len;
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (!ret && len)
		ret = submit_cmds_locked(q, buf, len);
	free(buf);
	return ret;
}

/*
 * Execute; @flags D3DQ_EXECUTE_IMPLICIT_SYNC (0.5) makes every job of the
 * call wait for the other drivers' work in its buffers
 * (DRM_D3DQ_SUBMIT_IMPLICIT), a property of the call's submits that
 * q->implicit carries under q->lock.
 */
static int queue_execute(struct d3dq_queue *q,
			 struct d3dq_cmdlist *const *lists, uint32_t count,
			 uint32_t flags)
{
	uint8_t *chunk = NULL;
	size_t total = 0, cap;
	uint32_t i;
	int ret = 0;

	if (!q || (count && !lists) || (flags & ~D3DQ_EXECUTE_IMPLICIT_SYNC))
		return -EINVAL;
	if ((flags & D3DQ_EXECUTE_IMPLICIT_SYNC) && !q->dev->has_implicit)
		return -EOPNOTSUPP;
	for (i = 0; i < count; i++)
		if (!lists[i] || lists[i]->dev != q->dev)
			return -EINVAL;
	/*
	 * No lists: a no-op (R16), without the queue's reference or lock
	 * (issue 40: the signal-only call is an empty Execute and a Signal).
	 */
	if (!count)
		return d3dqp_dev_usable(q->dev) || atomic_load(&q->destroyed) ?
		       -ENODEV : 0;
	ret = queue_enter(q);
	if (ret)
		return ret;
	/* The lists stay, whoever destroys them meanwhile. */
	for (i = 0; i < count; i++)
		obj_get(lists[i]);
	pthread_mutex_lock(&q->lock);
	q->implicit = flags & D3DQ_EXECUTE_IMPLICIT_SYNC;
	ret = q->dead ? -ENODEV : lists_check(lists, count, &total);
	if (!ret && total && q->dev->has_split) {
		ret = lists_submit_whole_locked(q, lists, count, total);
	} else if (!ret && total) {
		/* One list goes from its own buffer (@cap 0). */
		cap = count == 1 ? 0 : total < q->dev->max_cmd_bytes ? total :
		      q->dev->max_cmd_bytes;
		chunk = cap ? malloc(cap) : NULL;
		ret = cap && !chunk ? -ENOMEM :
		      lists_submit_locked(q, lists, count, chunk, cap);
		free(chunk);
	}
	q->implicit = false;
	pthread_mutex_unlock(&q->lock);
	if (ret == 1) {
		/* D3D12 removes the device for this misuse. */
		d3dqp_dev_remove(q->dev, -EINVAL);
		ret = -EINVAL;
	}
	for (i = 0; i < count; i++)
		d3dqp_cmdlist_put(lists[i]);
	d3dqp_queue_put(q);
	return ret;
}

D3DQ_EXPORT int d3dq_queue_execute(struct d3dq_queue *q,
				   struct d3dq_cmdlist *const *lists,
				   uint32_t count)
{
	return queue_execute(q, lists, count, 0);
}

D3DQ_EXPORT int d3dq_queue_execute_flags(struct d3dq_queue *q,
					 struct d3dq_cmdlist *const *lists,
					 uint32_t count, uint32_t flags)
{
	return queue_execute(q, lists, count, flags);
}
