// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq queues: one drm_gpu_scheduler with one entity per queue, so jobs of
 * a queue run in order and queues run concurrently; creation, destruction,
 * state and the lifetime of schedulers.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/capability.h>
#include <linux/platform_device.h>
#include <linux/sched.h>
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

atomic_t d3dq_live_scheds = ATOMIC_INIT(0);

/*
 * DOC: Scheduler lifetime
 *
 * A scheduler fence answers get_timeline_name() with fence->sched->name,
 * even once signalled (sync_file's FILE_INFO asks for it), and syncobjs,
 * sync_files and dma-bufs keep finished fences long after their queue is
 * gone. So a &struct d3dq_sched is reference counted: the queue holds a
 * reference, and so does every hardware fence of a job armed on it. The
 * hardware fence is the parent of the job's scheduler fences, which hold
 * it until they are released themselves, and it drops its reference an
 * RCU grace period after that (see d3dq_hw_fence_release()). The queue's
 * teardown finishes the scheduler (its 6.1 kernel thread, its run queues,
 * its work items), and only the structure, which fences may read, waits
 * for the last fence.
 *
 * No scheduler is reused, so none reduces a wait on an older queue's
 * fence to its "scheduled" half: a structure is only freed, and its
 * address only reused, once no fence names it.
 */
static struct d3dq_sched *d3dq_sched_create(struct d3dq_device *ddev)
{
	struct d3dq_sched *sched;
	int ret;

	sched = kzalloc(sizeof(*sched), D3DQ_GFP);
	if (!sched)
		return ERR_PTR(-ENOMEM);
	kref_init(&sched->ref);
	/*
	 * The name lives in the scheduler, which its fences keep: they read
	 * it for as long as they live. It names one track in trace viewers;
	 * d3dq_queue_create in the trace says which queue it serves.
	 */
	snprintf(sched->name, sizeof(sched->name), "d3dq%d-s%u",
		 ddev->pdev->id,
		 (unsigned int)atomic_inc_return(&ddev->sched_serial) - 1);
	/*
	 * One job on the engine at a time: the timeout then measures the
	 * job itself, not the jobs queued behind it.
	 */
	ret = d3dq_sched_init(&sched->base, &d3dq_sched_ops, d3dq_wq.sched,
			      d3dq_wq.timeout, 1,
			      msecs_to_jiffies(d3dq_job_timeout_ms),
			      sched->name, ddev->drm.dev);
	if (ret) {
		kfree(sched);
		/*
		 * Without a submit workqueue the scheduler starts a kernel
		 * thread, whose creation fails with -EAGAIN or -EINTR when
		 * the system has no room for one. libdrm's drmIoctl()
		 * retries those for ever: say what it is.
		 */
		if (ret == -EAGAIN || ret == -EINTR)
			ret = -ENOMEM;
		return ERR_PTR(ret);
	}
	atomic_inc(&d3dq_live_scheds);
	return sched;
}

void d3dq_sched_get(struct d3dq_sched *sched)
{
	kref_get(&sched->ref);
}

static void d3dq_sched_release(struct kref *ref)
{
	struct d3dq_sched *sched = container_of(ref, struct d3dq_sched, ref);

	/* Finished by the queue's teardown; only the memory is left. */
	kfree(sched);
	atomic_dec(&d3dq_live_scheds);
}

/* May be called from an RCU callback. */
void d3dq_sched_put(struct d3dq_sched *sched)
{
	kref_put(&sched->ref, d3dq_sched_release);
}

/**
 * d3dq_queue_gone - The queue's idle word is never 0 again.
 * @queue: the queue, lost, destroyed, or with a job that failed
 *
 * Any context. Called before the queue's jobs are cancelled, so that a
 * cancelled job, whose fence values are never set, cannot make it 0.
 */
void d3dq_queue_gone(struct d3dq_queue *queue)
{
	if (!test_and_set_bit(0, &queue->gone))
		d3dq_queue_busy(queue, D3DQ_QUEUE_GONE);
}

/* Make the queue lost, if it is not yet: whether it was not. */
static bool d3dq_queue_lose_locked(struct d3dq_queue *queue, int reason)
{
	lockdep_assert_held(&queue->lock);

	if (queue->state != DRM_D3DQ_QUEUE_STATE_OK)
		return false;
	d3dq_queue_gone(queue);
	queue->state = DRM_D3DQ_QUEUE_STATE_LOST;
	queue->reason = reason;
	/* Held jobs and carried waits are freed, never armed. */
	if (!list_empty(&queue->held) || !list_empty(&queue->carried))
		d3dq_queue_kick_held(queue);
	return true;
}

/**
 * d3dq_queue_set_lost_locked - A job of the queue timed out or failed.
 * @queue: the queue, its lock held
 * @reason: -ETIMEDOUT, or -ECANCELED for a failed dependency
 *
 * Any context that holds the queue's lock, signalling paths included:
 * the file, if armed (%DRM_D3DQ_REMOVE_ON_LOSS), only queues its removal.
 * The loss of a destroyed queue is nobody's concern: it removes nothing.
 */
void d3dq_queue_set_lost_locked(struct d3dq_queue *queue, int reason)
{
	if (d3dq_queue_lose_locked(queue, reason) && !queue->dead)
		d3dq_file_lost(queue->dfile, reason);
}

/**
 * d3dq_queue_wake_submitters - Wake the submitters sleeping at a limit.
 * @queue: the queue whose counts, or its file's or user's, the caller
 *	   changed
 *
 * The submitters d3dq_queue_reserve() put to sleep on @queue, its file
 * or its user test those counts again; the wait queues are only locked
 * if anyone sleeps on them: wq_has_sleeper()'s barrier orders the
 * caller's change of the counts before the look, against
 * wait_event()'s queueing before its test.
 */
void d3dq_queue_wake_submitters(struct d3dq_queue *queue)
{
	struct d3dq_file *dfile = queue->dfile;

	if (wq_has_sleeper(&queue->pending_wq))
		wake_up_all(&queue->pending_wq);
	if (wq_has_sleeper(&dfile->wq))
		wake_up_all(&dfile->wq);
	if (wq_has_sleeper(&dfile->user->wq))
		wake_up_all(&dfile->user->wq);
}

/**
 * d3dq_queue_kick_held - Have the queue's held jobs looked at.
 * @queue: the queue, kept alive by the caller (a held job's wait, the
 *	   submitter, or whoever loses it)
 *
 * Any context: the value write path calls it under a fence's lock. The
 * work arms the held jobs whose waits are all satisfied, or frees them
 * if the queue is lost or destroyed.
 */
void d3dq_queue_kick_held(struct d3dq_queue *queue)
{
	mod_delayed_work(d3dq_wq.arm, &queue->arm_work, 0);
}

bool d3dq_queue_is_usable(struct d3dq_queue *queue)
{
	bool usable;

	spin_lock(&queue->lock);
	usable = queue->state == DRM_D3DQ_QUEUE_STATE_OK && !queue->dead;
	spin_unlock(&queue->lock);
	return usable;
}

/*
 * A destroyed queue whose jobs have all finished will be freed without
 * outside help: QUEUE_CREATE at the limit may wait for it. Called with
 * the queue's lock held when it becomes dead or its last job finishes.
 */
static void d3dq_queue_mark_finishing_locked(struct d3dq_queue *queue)
{
	lockdep_assert_held(&queue->lock);

	if (!queue->dead || queue->finishing || atomic_read(&queue->pending))
		return;
	queue->finishing = true;
	atomic_inc(&queue->dfile->queues_finishing);
	d3dq_user_queue_finishing(queue->dfile->user);
}

/* The queue's last unfinished job finished. */
void d3dq_queue_idle(struct d3dq_queue *queue)
{
	spin_lock(&queue->lock);
	d3dq_queue_mark_finishing_locked(queue);
	spin_unlock(&queue->lock);
}

static void d3dq_queue_teardown(struct work_struct *work)
{
	struct d3dq_queue *queue = container_of(work, struct d3dq_queue,
						teardown_work);
	struct d3dq_device *ddev = queue->ddev;
	struct d3dq_file *dfile = queue->dfile;
	bool counted = queue->counted;

	/* No held job is left (each held a reference); a kick may be. */
	cancel_delayed_work_sync(&queue->arm_work);
	dma_fence_put(queue->last);
	/* No job is left: this does not wait. */
	drm_sched_entity_destroy(&queue->entity);
	drm_sched_fini(&queue->sched->base);
	d3dq_sched_put(queue->sched);
	d3dq_engine_fini(queue);
	d3dq_usage_put(queue->usage);
	/* No job is left to write it; the file's mapping right went. */
	d3dq_fence_word_put(&queue->idle);
	mutex_destroy(&queue->submit_lock);
	WARN_ON(counted && !queue->finishing);
	kfree(queue);

	/*
	 * Only now is the queue's slot in max_queues free. It leaves
	 * queues_alive first: see d3dq_file_slot_known().
	 */
	if (counted) {
		d3dq_user_uncount_queue(dfile->user);
		atomic_dec(&dfile->queues_alive);
		/* Pairs with smp_rmb() in d3dq_file_slot_known(). */
		smp_mb__after_atomic();
		atomic_dec(&dfile->queues_finishing);
		d3dq_user_queue_freed(dfile->user);
		wake_up_all(&dfile->wq);
	}
	d3dq_file_put(dfile);
	atomic_dec(&ddev->count.queues);
	drm_dev_put(&ddev->drm);
}

static void d3dq_queue_release(struct kref *ref)
{
	struct d3dq_queue *queue = container_of(ref, struct d3dq_queue, ref);

	/*
	 * The last reference may go from the scheduler's own context (the
	 * last job being freed), where the scheduler cannot be finished.
	 */
	queue_work(d3dq_wq.teardown, &queue->teardown_work);
}

void d3dq_queue_get(struct d3dq_queue *queue)
{
	kref_get(&queue->ref);
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
 *
 * REMOVE loses the queue (@reason). Destruction (@dead) only marks it
 * dead and leaves its state alone: being destroyed is no loss. The id is
 * gone by then, but a QUEUE_GET_STATE that looked the queue up just
 * before may still read the state, and must not report a loss that
 * never happened (userspace would take it for a failed dependency).
 */
static void d3dq_queue_stop(struct d3dq_queue *queue, int reason, bool dead)
{
	mutex_lock(&queue->submit_lock);
	spin_lock(&queue->lock);
	if (dead) {
		d3dq_queue_gone(queue);
		queue->dead = true;
		d3dq_queue_mark_finishing_locked(queue);
	} else {
		/* A removal: no loss to remove the file for. */
		d3dq_queue_lose_locked(queue, reason);
	}
	spin_unlock(&queue->lock);
	mutex_unlock(&queue->submit_lock);
	trace_d3dq_queue_stop(queue->usage->client_id, queue->id, reason);

	/* Held jobs never run: freed, their signals never published. */
	d3dq_queue_drop_held(queue);
	d3dq_engine_cancel(queue, NULL, -ECANCELED);
	/* Submits sleeping on this queue, the file's or the user's jobs. */
	d3dq_queue_wake_submitters(queue);
}

static struct d3dq_queue *d3dq_queue_create(struct d3dq_device *ddev,
					    struct d3dq_file *dfile,
					    u32 type, u32 priority)
{
	struct drm_gpu_scheduler *sched_list[1];
	struct d3dq_queue *queue;
	enum drm_sched_priority prio;
	int ret;

	queue = kzalloc(sizeof(*queue), D3DQ_GFP);
	if (!queue)
		return ERR_PTR(-ENOMEM);

	kref_init(&queue->ref);
	queue->ddev = ddev;
	queue->dfile = dfile;
	/* Who to name when a job of the queue times out. */
	queue->client_pid = task_tgid_nr(current);
	get_task_comm(queue->client_comm, current->group_leader);
	queue->type = type;
	queue->priority = priority;
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->lock);
	INIT_LIST_HEAD(&queue->jobs);
	INIT_LIST_HEAD(&queue->held);
	INIT_LIST_HEAD(&queue->carried);
	INIT_DELAYED_WORK(&queue->arm_work, d3dq_queue_arm_held);
	init_waitqueue_head(&queue->pending_wq);
	INIT_WORK(&queue->teardown_work, d3dq_queue_teardown);
	d3dq_engine_init(queue, priority, &dfile->usage->engine);

	queue->sched = d3dq_sched_create(ddev);
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

	d3dq_file_get(dfile);
	queue->usage = d3dq_usage_get(dfile->usage);
	drm_dev_get(&ddev->drm);
	atomic_inc(&ddev->count.queues);
	return queue;

err_sched:
	drm_sched_fini(&queue->sched->base);
	d3dq_sched_put(queue->sched);
err_free:
	mutex_destroy(&queue->submit_lock);
	kfree(queue);
	return ERR_PTR(ret);
}

/*
 * Whether QUEUE_CREATE knows its answer: a slot is free (@free), or none
 * will free up without outside help (no destroyed queue is finishing).
 * A freed queue leaves queues_alive before queues_finishing, and this
 * reads them in the other order, so "none finishing" is never seen with
 * a stale count of queues alive.
 */
static bool d3dq_file_slot_known(struct d3dq_file *dfile, bool *free)
{
	int finishing = atomic_read(&dfile->queues_finishing);

	/* Pairs with smp_mb__after_atomic() in d3dq_queue_teardown(). */
	smp_rmb();
	*free = atomic_read(&dfile->queues_alive) < d3dq_max_queues;
	return *free || !finishing;
}

int d3dq_ioctl_queue_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_queue_create *args = data;
	struct d3dq_fence_word idle = { 0 };
	struct d3dq_queue *queue;
	bool free;
	u32 id;
	int ret;

	if ((args->flags & ~DRM_D3DQ_QUEUE_IDLE_WORD) ||
	    args->type > DRM_D3DQ_QUEUE_TYPE_COPY ||
	    args->priority > DRM_D3DQ_QUEUE_PRIORITY_REALTIME ||
	    args->idle_mmap_offset || args->idle_offset || args->pad)
		return -EINVAL;
	/* As for a realtime thread, and as other DRM drivers do. */
	if (args->priority == DRM_D3DQ_QUEUE_PRIORITY_REALTIME &&
	    !capable(CAP_SYS_NICE))
		return -EACCES;
	/* Before dfile->lock, which is never held with the fence_lock. */
	if (args->flags & DRM_D3DQ_QUEUE_IDLE_WORD) {
		ret = d3dq_fence_word_get(file, &idle);
		if (ret)
			return ret;
	}

	mutex_lock(&dfile->lock);
	for (;;) {
		if (dfile->removed) {
			ret = -ENODEV;
			goto out_unlock;
		}
		/*
		 * Every slot is taken until its queue is freed. Destroyed
		 * queues whose jobs all finished are being freed: wait for
		 * them. The others wait for dependencies: -EMFILE.
		 */
		if (!d3dq_file_slot_known(dfile, &free)) {
			mutex_unlock(&dfile->lock);
			/* REMOVE and unplug stop the queues, which wakes us. */
			if (wait_event_interruptible(dfile->wq,
						     d3dq_file_slot_known(dfile, &free) ||
						     READ_ONCE(dfile->removed)))
				return -ERESTARTSYS;
			mutex_lock(&dfile->lock);
			continue;
		}
		if (!free) {
			ret = -EMFILE;
			goto out_unlock;
		}
		/*
		 * The user's and the device's bounds, before a scheduler
		 * exists; the same wait for queues being freed.
		 */
		ret = d3dq_user_count_queue(dfile->user);
		if (ret != -EAGAIN)
			break;
		mutex_unlock(&dfile->lock);
		/* Finishing queues are freed whatever happens to the file. */
		if (wait_event_interruptible(ddev->queue_freed_wq,
					     d3dq_user_queue_known(dfile->user)))
			return -ERESTARTSYS;
		mutex_lock(&dfile->lock);
	}
	if (ret)
		goto out_unlock;
	queue = d3dq_queue_create(ddev, dfile, args->type, args->priority);
	if (IS_ERR(queue)) {
		d3dq_user_uncount_queue(dfile->user);
		ret = PTR_ERR(queue);
		goto out_unlock;
	}
	/* The queue's from now on: its teardown frees it. */
	queue->idle = idle;
	idle = (struct d3dq_fence_word){ 0 };

	/* Not visible to other threads until xa_alloc() publishes it. */
	ret = xa_alloc(&dfile->queues, &id, queue, XA_LIMIT(1, INT_MAX),
		       D3DQ_GFP);
	if (ret) {
		/* Not counted: its teardown leaves the counts alone. */
		d3dq_user_uncount_queue(dfile->user);
		d3dq_fence_word_revoke(file, &queue->idle);
		d3dq_queue_put(queue);
		goto out_unlock;
	}
	queue->id = id;
	queue->counted = true;
	atomic_inc(&dfile->queues_alive);
	dfile->nqueues++;
	args->id = id;
	if (queue->idle.value)
		d3dq_fence_word_offsets(&queue->idle, &args->idle_mmap_offset,
					&args->idle_offset);
	trace_d3dq_queue_create(dfile->usage->client_id, id, queue->type,
				queue->priority, queue->sched->name);

out_unlock:
	mutex_unlock(&dfile->lock);
	d3dq_fence_word_revoke(file, &idle);
	d3dq_fence_word_put(&idle);
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

	d3dq_fence_word_revoke(file, &queue->idle);
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
	WRITE_ONCE(dfile->removed, true);
	xa_for_each(&dfile->queues, id, queue)
		d3dq_queue_stop(queue, -ENODEV, false);
	mutex_unlock(&dfile->lock);
	/* A QUEUE_CREATE waiting at the limit. */
	wake_up_all(&dfile->wq);
}

/* File close: destroy every queue. Teardown finishes asynchronously. */
void d3dq_file_destroy_queues(struct d3dq_file *dfile, struct drm_file *file)
{
	struct d3dq_queue *queue;
	unsigned long id;

	mutex_lock(&dfile->lock);
	xa_for_each(&dfile->queues, id, queue) {
		xa_erase(&dfile->queues, id);
		d3dq_fence_word_revoke(file, &queue->idle);
		d3dq_queue_stop(queue, -ECANCELED, true);
		d3dq_queue_put(queue);
	}
	dfile->nqueues = 0;
	mutex_unlock(&dfile->lock);
}
