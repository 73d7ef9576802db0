// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq queues: one drm_gpu_scheduler with one entity per queue, so jobs of
 * a queue run in order and queues run concurrently; creation, destruction,
 * state and the scheduler pool.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/capability.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/*
 * DOC: Scheduler pool
 *
 * A scheduler fence answers get_timeline_name() with fence->sched->name,
 * even once signalled (sync_file's FILE_INFO asks for it), and syncobjs,
 * sync_files and dma-bufs keep finished fences long after their queue is
 * gone. So the drm_gpu_scheduler must live as long as any fence of its
 * queue might, which no callback tells. A destroyed queue's scheduler,
 * idle once the queue's last job is freed, goes to the device's pool,
 * the next queue takes it from there, and the pool is freed with the
 * device (at module unload, where outstanding fences are already a
 * known limit). Memory stays bounded by the most queues that ever
 * existed at once.
 *
 * Reuse is sound for dependencies too: the scheduler reduces a wait on
 * a fence of its own to the fence's "scheduled" half, and every job of
 * the previous owner has finished before the scheduler is handed on.
 */
static struct d3dq_sched *d3dq_sched_get(struct d3dq_device *ddev)
{
	struct d3dq_sched *sched;
	int ret;

	mutex_lock(&ddev->sched_pool_lock);
	sched = list_first_entry_or_null(&ddev->sched_pool, struct d3dq_sched,
					 link);
	if (sched)
		list_del(&sched->link);
	mutex_unlock(&ddev->sched_pool_lock);
	if (sched)
		return sched;

	sched = kzalloc(sizeof(*sched), GFP_KERNEL);
	if (!sched)
		return ERR_PTR(-ENOMEM);
	/*
	 * The name is the scheduler's, not a queue's: its fences read it
	 * for as long as they live, and it names one track in trace
	 * viewers, which one queue at a time owns (d3dq_queue_create in the
	 * trace says which).
	 */
	mutex_lock(&ddev->sched_pool_lock);
	snprintf(sched->name, sizeof(sched->name), "d3dq%d-s%u",
		 ddev->pdev->id, ddev->sched_serial++);
	mutex_unlock(&ddev->sched_pool_lock);
	/*
	 * One job on the engine at a time: the timeout then measures the
	 * job itself, not the jobs queued behind it.
	 */
	ret = d3dq_sched_init(&sched->base, &d3dq_sched_ops, ddev->sched_wq,
			      1, msecs_to_jiffies(d3dq_job_timeout_ms),
			      sched->name, ddev->drm.dev);
	if (ret) {
		kfree(sched);
		return ERR_PTR(ret);
	}
	atomic_inc(&ddev->count.scheds);
	return sched;
}

static void d3dq_sched_put(struct d3dq_device *ddev, struct d3dq_sched *sched)
{
	mutex_lock(&ddev->sched_pool_lock);
	list_add(&sched->link, &ddev->sched_pool);
	mutex_unlock(&ddev->sched_pool_lock);
}

/* Device teardown: every queue is gone, so every scheduler is pooled. */
void d3dq_sched_pool_fini(struct d3dq_device *ddev)
{
	struct d3dq_sched *sched, *tmp;

	list_for_each_entry_safe(sched, tmp, &ddev->sched_pool, link) {
		list_del(&sched->link);
		drm_sched_fini(&sched->base);
		kfree(sched);
		atomic_dec(&ddev->count.scheds);
	}
}

void d3dq_queue_set_lost_locked(struct d3dq_queue *queue, int reason)
{
	lockdep_assert_held(&queue->lock);

	if (queue->state == DRM_D3DQ_QUEUE_STATE_OK) {
		queue->state = DRM_D3DQ_QUEUE_STATE_LOST;
		queue->reason = reason;
	}
}

bool d3dq_queue_is_usable(struct d3dq_queue *queue)
{
	bool usable;

	spin_lock(&queue->lock);
	usable = queue->state == DRM_D3DQ_QUEUE_STATE_OK && !queue->dead;
	spin_unlock(&queue->lock);
	return usable;
}

static void d3dq_queue_teardown(struct work_struct *work)
{
	struct d3dq_queue *queue = container_of(work, struct d3dq_queue,
						teardown_work);
	struct d3dq_device *ddev = queue->ddev;

	/* No job is left: this does not wait. */
	drm_sched_entity_destroy(&queue->entity);
	d3dq_sched_put(ddev, queue->sched);
	d3dq_engine_fini(queue);
	d3dq_usage_put(queue->usage);
	mutex_destroy(&queue->submit_lock);
	kfree(queue);

	if (atomic_dec_and_test(&ddev->count.queues))
		wake_up_all(&ddev->idle_wq);
	drm_dev_put(&ddev->drm);
}

static void d3dq_queue_release(struct kref *ref)
{
	struct d3dq_queue *queue = container_of(ref, struct d3dq_queue, ref);

	/*
	 * The last reference may go from the scheduler's own context (the
	 * last job being freed), where the scheduler cannot be finished.
	 */
	queue_work(queue->ddev->teardown_wq, &queue->teardown_work);
}

void d3dq_queue_put(struct d3dq_queue *queue)
{
	kref_put(&queue->ref, d3dq_queue_release);
}

struct d3dq_queue *d3dq_queue_lookup(struct d3dq_file *dfile, u32 id)
{
	struct d3dq_queue *queue;

	xa_lock(&dfile->queues);
	queue = xa_load(&dfile->queues, id);
	if (queue)
		kref_get(&queue->ref);
	xa_unlock(&dfile->queues);
	return queue;
}

/*
 * Make a queue refuse new jobs and stop its running job. Jobs that have
 * not run complete with -ECANCELED when they reach the engine.
 */
static void d3dq_queue_stop(struct d3dq_queue *queue, int reason, bool dead)
{
	mutex_lock(&queue->submit_lock);
	spin_lock(&queue->lock);
	d3dq_queue_set_lost_locked(queue, reason);
	if (dead)
		queue->dead = true;
	spin_unlock(&queue->lock);
	mutex_unlock(&queue->submit_lock);
	trace_d3dq_queue_stop(queue->usage->client_id, queue->id, reason);

	d3dq_engine_cancel(queue, NULL, -ECANCELED);
	wake_up_all(&queue->pending_wq);
}

static struct d3dq_queue *d3dq_queue_create(struct d3dq_device *ddev,
					    struct d3dq_usage *usage,
					    u32 type, u32 priority)
{
	struct drm_gpu_scheduler *sched_list[1];
	struct d3dq_queue *queue;
	enum drm_sched_priority prio;
	int ret;

	queue = kzalloc(sizeof(*queue), GFP_KERNEL);
	if (!queue)
		return ERR_PTR(-ENOMEM);

	kref_init(&queue->ref);
	queue->ddev = ddev;
	queue->type = type;
	queue->priority = priority;
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->lock);
	INIT_LIST_HEAD(&queue->jobs);
	init_waitqueue_head(&queue->pending_wq);
	INIT_WORK(&queue->teardown_work, d3dq_queue_teardown);
	d3dq_engine_init(queue, priority, &usage->engine);

	queue->sched = d3dq_sched_get(ddev);
	if (IS_ERR(queue->sched)) {
		ret = PTR_ERR(queue->sched);
		goto err_free;
	}

	/*
	 * Each queue has a scheduler of its own, so the entity's priority
	 * orders nothing: the engine applies the queue's (d3dq_engine.c).
	 */
	prio = priority == DRM_D3DQ_QUEUE_PRIORITY_NORMAL ?
	       DRM_SCHED_PRIORITY_NORMAL : DRM_SCHED_PRIORITY_HIGH;
	sched_list[0] = &queue->sched->base;
	ret = drm_sched_entity_init(&queue->entity, prio, sched_list, 1, NULL);
	if (ret)
		goto err_sched;

	queue->usage = d3dq_usage_get(usage);
	drm_dev_get(&ddev->drm);
	atomic_inc(&ddev->count.queues);
	return queue;

err_sched:
	d3dq_sched_put(ddev, queue->sched);
err_free:
	mutex_destroy(&queue->submit_lock);
	kfree(queue);
	return ERR_PTR(ret);
}

int d3dq_ioctl_queue_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_queue_create *args = data;
	struct d3dq_queue *queue;
	u32 id;
	int ret;

	if (args->flags || args->type > DRM_D3DQ_QUEUE_TYPE_COPY ||
	    args->priority > DRM_D3DQ_QUEUE_PRIORITY_REALTIME)
		return -EINVAL;
	/* As for a realtime thread, and as other DRM drivers do. */
	if (args->priority == DRM_D3DQ_QUEUE_PRIORITY_REALTIME &&
	    !capable(CAP_SYS_NICE))
		return -EACCES;

	mutex_lock(&dfile->lock);
	if (dfile->removed) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (dfile->nqueues >= d3dq_max_queues) {
		ret = -EMFILE;
		goto out_unlock;
	}

	queue = d3dq_queue_create(ddev, dfile->usage, args->type,
				  args->priority);
	if (IS_ERR(queue)) {
		ret = PTR_ERR(queue);
		goto out_unlock;
	}

	/* Not visible to other threads until xa_alloc() publishes it. */
	ret = xa_alloc(&dfile->queues, &id, queue, XA_LIMIT(1, INT_MAX),
		       GFP_KERNEL);
	if (ret) {
		d3dq_queue_put(queue);
		goto out_unlock;
	}
	queue->id = id;
	dfile->nqueues++;
	args->id = id;
	trace_d3dq_queue_create(dfile->usage->client_id, id, queue->type,
				queue->priority, queue->sched->name);

out_unlock:
	mutex_unlock(&dfile->lock);
	return ret;
}

int d3dq_ioctl_queue_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_queue_destroy *args = data;
	struct d3dq_queue *queue;

	if (args->pad)
		return -EINVAL;
	/*
	 * Ids start at 1. Erasing index 0 would mark it free in the
	 * XA_FLAGS_ALLOC1 array, and the next queue would get id 0.
	 */
	if (!args->id)
		return -ENOENT;

	mutex_lock(&dfile->lock);
	queue = xa_erase(&dfile->queues, args->id);
	if (queue)
		dfile->nqueues--;
	mutex_unlock(&dfile->lock);
	if (!queue)
		return -ENOENT;

	d3dq_queue_stop(queue, -ECANCELED, true);
	d3dq_queue_put(queue);
	return 0;
}

int d3dq_ioctl_queue_get_state(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_d3dq_queue_get_state *args = data;
	struct d3dq_queue *queue;

	if (args->pad)
		return -EINVAL;

	queue = d3dq_queue_lookup(file->driver_priv, args->id);
	if (!queue)
		return -ENOENT;

	spin_lock(&queue->lock);
	args->state = queue->state;
	args->reason = queue->reason;
	spin_unlock(&queue->lock);
	args->pending_jobs = atomic_read(&queue->pending);

	d3dq_queue_put(queue);
	return 0;
}

/* REMOVE: lose every queue of the file; returns once none is running. */
void d3dq_file_remove_queues(struct d3dq_file *dfile)
{
	struct d3dq_queue *queue;
	unsigned long id;

	mutex_lock(&dfile->lock);
	trace_d3dq_removal(dfile->usage->client_id, dfile->nqueues);
	dfile->removed = true;
	xa_for_each(&dfile->queues, id, queue)
		d3dq_queue_stop(queue, -ENODEV, false);
	mutex_unlock(&dfile->lock);
}

/* File close: destroy every queue. Teardown finishes asynchronously. */
void d3dq_file_destroy_queues(struct d3dq_file *dfile)
{
	struct d3dq_queue *queue;
	unsigned long id;

	mutex_lock(&dfile->lock);
	xa_for_each(&dfile->queues, id, queue) {
		xa_erase(&dfile->queues, id);
		d3dq_queue_stop(queue, -ECANCELED, true);
		d3dq_queue_put(queue);
	}
	dfile->nqueues = 0;
	mutex_unlock(&dfile->lock);
}
