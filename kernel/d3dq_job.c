// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq job lifecycle: create (SUBMIT), arm and push, run (the scheduler's
 * run_job), finish (the hardware fence signals), time out, free (the
 * scheduler's free_job).
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/delay.h>
#include <linux/dma-fence-chain.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_gem.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/**
 * d3dq_job_create - Allocate a job for a queue.
 * @queue: the queue; the job takes over the caller's reference, also
 *	   when this fails
 * @file: the submitting file
 *
 * Initialises the scheduler job and preallocates the hardware fence, so
 * that nothing in the signalling path allocates.
 *
 * Return: the job, or an ERR_PTR().
 */
struct d3dq_job *d3dq_job_create(struct d3dq_queue *queue,
				 struct drm_file *file)
{
	struct d3dq_device *ddev = queue->ddev;
	struct d3dq_job *job;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job) {
		d3dq_queue_put(queue);
		return ERR_PTR(-ENOMEM);
	}
	job->queue = queue;
	INIT_LIST_HEAD(&job->link);
	job->state = D3DQ_JOB_QUEUED;
	atomic_inc(&ddev->count.jobs);

	ret = d3dq_sched_job_init(&job->base, &queue->entity, file, file);
	if (ret) {
		job->base.s_fence = NULL;
		goto err;
	}

	job->hw = d3dq_hw_fence_alloc();
	if (!job->hw) {
		ret = -ENOMEM;
		goto err;
	}
	return job;

err:
	d3dq_job_free(job);
	return ERR_PTR(ret);
}

/**
 * d3dq_job_arm - Arm a job; nothing may fail from here on.
 * @job: the job, its queue's submit_lock held
 *
 * Return: the job's finished fence, for its signal points.
 */
struct dma_fence *d3dq_job_arm(struct d3dq_job *job)
{
	lockdep_assert_held(&job->queue->submit_lock);

	drm_sched_job_arm(&job->base);
	return &job->base.s_fence->finished;
}

/**
 * d3dq_job_push - Count an armed job and hand it to the scheduler.
 * @job: the job, its queue's submit_lock held
 */
void d3dq_job_push(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;

	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	list_add_tail(&job->link, &queue->jobs);
	spin_unlock(&queue->lock);
	job->pending_counted = true;
	atomic_inc(&queue->pending);

	drm_sched_entity_push_job(&job->base);
}

/*
 * Did a dependency of @job complete with an error? A wait that
 * %DRM_D3DQ_WAIT_RELEASE ended no longer stands for its fence.
 */
bool d3dq_job_dependency_failed(struct d3dq_job *job)
{
	struct d3dq_release_fence *rf;
	struct dma_fence *fence;
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		rf = job->waits[i].release;
		if (rf && READ_ONCE(rf->released))
			continue;
		fence = dma_fence_chain_contained(job->waits[i].fence);
		if (dma_fence_get_status(fence) < 0)
			return true;
	}
	return false;
}

/* Account for a job that will not run (any more). */
void d3dq_job_finished(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;

	if (!xchg(&job->pending_counted, false))
		return;
	atomic_dec(&queue->pending);
	wake_up_all(&queue->pending_wq);
}

/*
 * End a job: account for it, then signal its hardware fence with @err.
 * The scheduler may free the job as soon as the fence signals, so the job
 * is not touched afterwards.
 */
void d3dq_job_signal(struct d3dq_job *job, int err)
{
	struct dma_fence *hw = dma_fence_get(&job->hw->base);

	trace_d3dq_done(job->queue->usage->client_id, job->queue->id,
			d3dq_job_seqno(job), err);
	if (err) {
		/* Older schedulers do not pass the error on: set both. */
		dma_fence_set_error(&job->base.s_fence->finished, err);
		dma_fence_set_error(hw, err);
	}
	d3dq_job_finished(job);
	dma_fence_signal(hw);
	dma_fence_put(hw);
}

void d3dq_job_free(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_device *ddev = queue->ddev;
	u32 i;

	spin_lock(&queue->lock);
	list_del_init(&job->link);
	spin_unlock(&queue->lock);

	d3dq_job_finished(job);
	if (job->base.s_fence)
		drm_sched_job_cleanup(&job->base);

	for (i = 0; i < job->nwaits; i++) {
		if (job->waits[i].release)
			d3dq_release_fence_put(job->waits[i].release);
		dma_fence_put(job->waits[i].fence);
	}
	kvfree(job->waits);

	for (i = 0; i < job->ncmds; i++) {
		if (job->cmds[i].dst)
			drm_gem_object_put(&job->cmds[i].dst->base.base);
		if (job->cmds[i].src)
			drm_gem_object_put(&job->cmds[i].src->base.base);
	}
	kvfree(job->cmds);

	d3dq_hw_fence_put(job->hw);
	kfree(job);
	atomic_dec(&ddev->count.jobs);
	d3dq_queue_put(queue);
}

static const char *d3dq_release_get_driver_name(struct dma_fence *fence)
{
	return D3DQ_DRIVER_NAME;
}

static const char *d3dq_release_get_timeline_name(struct dma_fence *fence)
{
	return "d3dq-release";
}

static void d3dq_release_fence_free(struct dma_fence *fence)
{
	struct d3dq_release_fence *rf =
		container_of(fence, struct d3dq_release_fence, base);

	dma_fence_put(rf->waited);
	dma_fence_free(fence);
}

static const struct dma_fence_ops d3dq_release_fence_ops = {
	.get_driver_name = d3dq_release_get_driver_name,
	.get_timeline_name = d3dq_release_get_timeline_name,
	.release = d3dq_release_fence_free,
};

/* Signal @rf unless it is signalled; @by_ioctl: WAIT_RELEASE did it. */
static void d3dq_release_fence_signal(struct d3dq_release_fence *rf,
				      bool by_ioctl)
{
	unsigned long flags;

	spin_lock_irqsave(&rf->lock, flags);
	if (!test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &rf->base.flags)) {
		WRITE_ONCE(rf->released, by_ioctl);
		dma_fence_signal_locked(&rf->base);
	}
	spin_unlock_irqrestore(&rf->lock, flags);
}

static void d3dq_release_fence_cb(struct dma_fence *waited,
				  struct dma_fence_cb *cb)
{
	struct d3dq_release_fence *rf =
		container_of(cb, struct d3dq_release_fence, cb);

	d3dq_release_fence_signal(rf, false);
	dma_fence_put(&rf->base);
}

/**
 * d3dq_release_fence_create - The dependency of a releasable wait.
 * @waited: the fence the wait names
 *
 * Each release fence has a context of its own: they signal in no
 * particular order, and the scheduler keeps only the latest fence of a
 * context among a job's dependencies.
 *
 * Return: the fence (one reference, the caller's), or NULL.
 */
struct d3dq_release_fence *d3dq_release_fence_create(struct dma_fence *waited)
{
	struct d3dq_release_fence *rf;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL);
	if (!rf)
		return NULL;
	spin_lock_init(&rf->lock);
	dma_fence_init(&rf->base, &d3dq_release_fence_ops, &rf->lock,
		       dma_fence_context_alloc(1), 1);
	rf->waited = dma_fence_get(waited);
	/* A reference for the callback. */
	dma_fence_get(&rf->base);
	if (dma_fence_add_callback(waited, &rf->cb, d3dq_release_fence_cb)) {
		/* @waited has signalled already. */
		d3dq_release_fence_signal(rf, false);
		dma_fence_put(&rf->base);
	}
	return rf;
}

/**
 * d3dq_release_fence_release - End a releasable wait now (WAIT_RELEASE).
 * @rf: the wait's fence; nothing happens if it signalled already
 */
void d3dq_release_fence_release(struct d3dq_release_fence *rf)
{
	d3dq_release_fence_signal(rf, true);
	/* The callback on @waited has nothing left to do. */
	if (dma_fence_remove_callback(rf->waited, &rf->cb))
		dma_fence_put(&rf->base);
}

/* Drop the job's reference (and a callback that can no longer matter). */
void d3dq_release_fence_put(struct d3dq_release_fence *rf)
{
	if (dma_fence_remove_callback(rf->waited, &rf->cb))
		dma_fence_put(&rf->base);
	dma_fence_put(&rf->base);
}

static struct dma_fence *d3dq_run_job(struct drm_sched_job *sched_job)
{
	struct d3dq_job *job = to_d3dq_job(sched_job);

	return d3dq_engine_run(job->queue, job);
}

/*
 * The scheduler took @sched_job off its pending list before calling this,
 * and frees it afterwards only if drm_sched_stop() was called. d3dq never
 * stops the scheduler: a job that really timed out is cancelled on the
 * engine, which signals its fences (-ETIMEDOUT) and marks the queue lost
 * so that later jobs complete with -ECANCELED; then the job is freed here.
 * A job that completed just before its timeout fired is only freed.
 */
static enum drm_gpu_sched_stat d3dq_timedout_job(struct drm_sched_job *sched_job)
{
	struct d3dq_job *job = to_d3dq_job(sched_job);
	struct d3dq_queue *queue = job->queue;
	enum d3dq_job_state state;
	bool timed_out = false;

	/*
	 * The scheduler lists a job just before calling run_job; in that
	 * window the job cannot have run for a whole timeout yet.
	 */
	for (;;) {
		spin_lock(&queue->lock);
		state = job->state;
		if (state == D3DQ_JOB_RUNNING && queue->engine.job == job) {
			d3dq_queue_set_lost_locked(queue, -ETIMEDOUT);
			if (!job->cancel)
				job->cancel = -ETIMEDOUT;
			timed_out = true;
		}
		spin_unlock(&queue->lock);
		if (state != D3DQ_JOB_QUEUED)
			break;
		usleep_range(100, 200);
	}

	if (timed_out) {
		drm_dbg_driver(&queue->ddev->drm, "queue %u: job timed out\n",
			       queue->id);
		atomic_inc(&queue->usage->timeouts);
		trace_d3dq_timeout(queue->usage->client_id, queue->id,
				   d3dq_job_seqno(job), -ETIMEDOUT);
		d3dq_engine_cancel(queue, job, -ETIMEDOUT);
	}

	/* The fence callbacks of the scheduler are done with the job. */
	dma_fence_wait(&job->base.s_fence->finished, false);
	d3dq_job_free(job);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void d3dq_free_job(struct drm_sched_job *sched_job)
{
	d3dq_job_free(to_d3dq_job(sched_job));
}

const struct drm_sched_backend_ops d3dq_sched_ops = {
	.run_job = d3dq_run_job,
	.timedout_job = d3dq_timedout_job,
	.free_job = d3dq_free_job,
};
