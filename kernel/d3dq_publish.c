// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq publishing: the buffers a job uses, each once and whether it
 * writes them, their reservation objects locked with a fence slot
 * reserved, and the publication of an armed (or directly run) job's
 * fence in its fence signals, syncobj points and buffers, and as its
 * queue's last fence.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/bitmap.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_gem.h"
#include "d3dq_fence.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_submit.h"

/*
 * DOC: Implicit sync
 *
 * d3dq publishes its jobs in the buffers' reservation objects, so that a
 * PRIME importer, a compositor or ``DMA_BUF_IOCTL_EXPORT_SYNC_FILE`` sees
 * a buffer the engine still uses as busy: each job's finished fence goes
 * to every buffer its commands name, with %DMA_RESV_USAGE_WRITE for the
 * buffers it writes (the destination of every command) and
 * %DMA_RESV_USAGE_READ for those it only reads (a COPY's source). A job
 * run inside SUBMIT publishes its hardware fence instead, before it runs:
 * the engine never touches a buffer whose reservation object does not
 * name the job yet. Jobs do not wait for the fences they find there:
 * D3D12 synchronises explicitly, and two queues may use one buffer at
 * once. A job submitted with %DRM_D3DQ_SUBMIT_IMPLICIT (uapi 1.12) waits
 * for the other drivers' fences only: while its buffers are locked to be
 * armed (d3dq_bo_set_lock(), at the submit or, held, when it is armed),
 * every unsignalled fence that is not a d3dq job's, of the writers of a
 * buffer it reads and of every user of one it writes
 * (dma_resv_usage_rw(), as drm_sched_job_add_implicit_dependencies()),
 * becomes a scheduler dependency of the job, which then never runs
 * inside the submit. d3dq_job_dependency_failed() does not see these: an
 * error of another driver's work does not lose the queue.
 */

/* A buffer a command names, for sorting and merging duplicates. */
struct d3dq_bo_use {
	struct drm_gem_object *obj;
	bool write;
};

static int d3dq_bo_use_cmp(const void *a, const void *b)
{
	const struct d3dq_bo_use *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return 0;
}

void d3dq_bo_set_free(struct d3dq_bo_set *set)
{
	/* An empty set (no commands) allocated nothing. */
	if (set->objs && set->objs != set->inline_objs) {
		kvfree(set->objs);
		bitmap_free(set->write);
	}
	set->objs = NULL;
	set->write = NULL;
	set->count = 0;
}

/*
 * Collect the buffers of @job's commands into @set. The job holds a
 * reference to each of them, so @set holds none.
 */
int d3dq_bo_set_init(struct d3dq_bo_set *set, struct d3dq_job *job)
{
	struct d3dq_bo_use small[D3DQ_BO_SET_INLINE], *uses = small;
	u32 i, n = 0;
	int ret = 0;

	memset(set, 0, sizeof(*set));
	if (job->implicit)
		set->implicit = job;
	if (!job->ncmds)
		return 0;

	if (job->ncmds > D3DQ_BO_SET_INLINE / 2) {
		uses = kvmalloc_array(job->ncmds, 2 * sizeof(*uses),
				      D3DQ_GFP);
		if (!uses)
			return -ENOMEM;
	}
	for (i = 0; i < job->ncmds; i++) {
		if (job->cmds[i].dst)
			uses[n++] = (struct d3dq_bo_use){
				&job->cmds[i].dst->base.base, true };
		if (job->cmds[i].src)
			uses[n++] = (struct d3dq_bo_use){
				&job->cmds[i].src->base.base, false };
	}
	if (!n)
		goto out;
	sort(uses, n, sizeof(*uses), d3dq_bo_use_cmp, NULL);

	if (n <= D3DQ_BO_SET_INLINE) {
		set->objs = set->inline_objs;
		set->write = &set->inline_write;
	} else {
		set->objs = kvmalloc_array(n, sizeof(*set->objs), D3DQ_GFP);
		set->write = bitmap_zalloc(n, D3DQ_GFP);
	}
	if (!set->objs || !set->write) {
		d3dq_bo_set_free(set);
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!set->count || set->objs[set->count - 1] != uses[i].obj)
			set->objs[set->count++] = uses[i].obj;
		if (uses[i].write)
			__set_bit(set->count - 1, set->write);
	}
out:
	if (uses != small)
		kvfree(uses);
	return ret;
}

/*
 * Is @fence a d3dq job's, of any d3dq device: its scheduler fence or,
 * for a job run inside a submit, its hardware fence?
 */
static bool d3dq_fence_is_d3dq(struct dma_fence *fence)
{
	struct drm_sched_fence *s_fence = to_drm_sched_fence(fence);

	if (s_fence)
		return s_fence->sched && s_fence->sched->ops == &d3dq_sched_ops;
	return d3dq_is_hw_fence(fence);
}

/*
 * %DRM_D3DQ_SUBMIT_IMPLICIT: make @set->implicit, not armed yet, depend
 * on the unsignalled fences of other drivers in the locked reservation
 * objects of @set: those of writers for a buffer the job reads, of every
 * user for one it writes. Fails with -ENOMEM only; the dependencies added
 * before stay (the scheduler merges them with those of a retry).
 */
static int d3dq_bo_set_add_implicit(struct d3dq_bo_set *set)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	u32 i;
	int ret;

	set->nimplicit = 0;
	if (!set->implicit)
		return 0;
	for (i = 0; i < set->count; i++) {
		dma_resv_for_each_fence(&cursor, set->objs[i]->resv,
					dma_resv_usage_rw(test_bit(i, set->write)),
					fence) {
			if (d3dq_fence_is_d3dq(fence) ||
			    dma_fence_is_signaled(fence))
				continue;
			/* It takes the reference, even when it fails. */
			ret = drm_sched_job_add_dependency(&set->implicit->base,
							   dma_fence_get(fence));
			if (ret)
				return ret;
			set->nimplicit++;
		}
	}
	return 0;
}

/*
 * Lock the reservation objects of @set and reserve a fence slot in each,
 * so that publishing the job's fence cannot fail, then add the other
 * drivers' fences the job waits for (%DRM_D3DQ_SUBMIT_IMPLICIT).
 * Unlocked on failure.
 */
int d3dq_bo_set_lock(struct d3dq_bo_set *set)
{
	u32 i;
	int ret;

	if (!set->count)
		return 0;
	ret = drm_gem_lock_reservations(set->objs, set->count, &set->ctx);
	if (ret)	/* -EINTR: restarted, like the other waits of SUBMIT */
		return ret == -EINTR ? -ERESTARTSYS : ret;
	for (i = 0; i < set->count; i++) {
		ret = dma_resv_reserve_fences(set->objs[i]->resv, 1);
		if (ret)
			break;
	}
	if (!ret)
		ret = d3dq_bo_set_add_implicit(set);
	if (ret)
		drm_gem_unlock_reservations(set->objs, set->count, &set->ctx);
	return ret;
}

/**
 * d3dq_bo_set_trylock - d3dq_bo_set_lock() without sleeping on anyone.
 * @set: the buffers
 *
 * For a CPU signal that arms another file's held job in its own call: it
 * must never wait for that file's submitters. Each reservation is
 * trylocked in the same acquire context, so that the unlock of
 * d3dq_bo_set_lock() applies.
 *
 * Return: 0 (locked, a fence slot reserved in each, the other drivers'
 * fences added as in d3dq_bo_set_lock()), -EBUSY if one was taken, or
 * -ENOMEM; nothing is locked on failure.
 */
int d3dq_bo_set_trylock(struct d3dq_bo_set *set)
{
	u32 i, locked;
	int ret;

	if (!set->count)
		return 0;
	ww_acquire_init(&set->ctx, &reservation_ww_class);
	for (locked = 0; locked < set->count; locked++) {
		if (!ww_mutex_trylock(&set->objs[locked]->resv->lock,
				      &set->ctx)) {
			ret = -EBUSY;
			goto err_unlock;
		}
	}
	ww_acquire_done(&set->ctx);
	for (i = 0; i < set->count; i++) {
		ret = dma_resv_reserve_fences(set->objs[i]->resv, 1);
		if (ret)
			goto err_unlock;
	}
	ret = d3dq_bo_set_add_implicit(set);
	if (ret)
		goto err_unlock;
	return 0;

err_unlock:
	for (i = 0; i < locked; i++)
		dma_resv_unlock(set->objs[i]->resv);
	ww_acquire_fini(&set->ctx);
	return ret;
}

/* Add @fence to every buffer of the locked @set, then unlock it. */
static void d3dq_bo_set_publish(struct d3dq_bo_set *set,
				struct dma_fence *fence)
{
	u32 i;

	if (!set->count)
		return;
	for (i = 0; i < set->count; i++)
		dma_resv_add_fence(set->objs[i]->resv, fence,
				   test_bit(i, set->write) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(set->objs, set->count, &set->ctx);
}

void d3dq_publish_free(struct d3dq_publish *publish)
{
	if (!publish)
		return;
	d3dq_bo_set_free(&publish->bos);
	d3dq_put_signals(publish->signals, publish->nsignals);
	kfree(publish);
}

/* Move @src into @dst: @src's inline arrays point into @src. */
void d3dq_bo_set_move(struct d3dq_bo_set *dst, struct d3dq_bo_set *src)
{
	*dst = *src;
	if (src->objs == src->inline_objs) {
		dst->objs = dst->inline_objs;
		dst->write = &dst->inline_write;
	}
	src->objs = NULL;
	src->write = NULL;
	src->count = 0;
}

/*
 * Publish an armed (or directly run) job's @fence: fence signals (later
 * fence waits of this file may depend on them from now), syncobj points,
 * the buffers of the locked @bos, which this unlocks; and the queue's
 * last fence.
 */
/* Attach @fence to the syncobj points of @signals. */
void d3dq_signals_publish(struct d3dq_signal *signals, u32 nsignals,
			  struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < nsignals; i++) {
		struct d3dq_signal *s = &signals[i];

		if (!s->syncobj)
			continue;
		if (s->chain) {
			drm_syncobj_add_point(s->syncobj, s->chain, fence,
					      s->point);
			s->chain = NULL;
		} else {
			drm_syncobj_replace_fence(s->syncobj, fence);
		}
	}
}

void d3dq_job_publish(struct d3dq_job *job, struct dma_fence *fence,
		      struct d3dq_signal *signals, u32 nsignals,
		      struct d3dq_bo_set *bos)
{
	struct d3dq_queue *queue = job->queue;
	u32 i;

	lockdep_assert_held(&queue->submit_lock);

	for (i = 0; i < job->nfsignals; i++)
		d3dq_fence_qsignal_arm(&job->fsignals[i], fence);
	d3dq_signals_publish(signals, nsignals, fence);
	d3dq_bo_set_publish(bos, fence);

	dma_fence_put(queue->last);
	queue->last = dma_fence_get(fence);
	spin_lock(&queue->lock);
	queue->tail_job = job;
	spin_unlock(&queue->lock);
}
