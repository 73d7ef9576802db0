// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq software engine: runs the command stream of a queue's current job
 * from a work item and signals the job's hardware fence when it ends.
 *
 * A DELAY command does not hold a worker: the engine arms an hrtimer and
 * returns; the timer queues the work again. Cancelling a job (timeout,
 * queue destroy, REMOVE) sets an error in the job, kicks the work and
 * waits for it, so a cancelled job ends in bounded time.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_gem.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/* Work done between two checks for cancellation. */
#define D3DQ_ENGINE_CHUNK	SZ_1M

atomic_t d3dq_live_hw_fences = ATOMIC_INIT(0);

static const char *d3dq_hw_fence_get_driver_name(struct dma_fence *fence)
{
	return D3DQ_DRIVER_NAME;
}

static const char *d3dq_hw_fence_get_timeline_name(struct dma_fence *fence)
{
	/* Fences outlive their queue: no per-queue name. */
	return "d3dq-engine";
}

static void d3dq_hw_fence_release(struct dma_fence *fence)
{
	atomic_dec(&d3dq_live_hw_fences);
	dma_fence_free(fence);
}

static const struct dma_fence_ops d3dq_hw_fence_ops = {
	.get_driver_name = d3dq_hw_fence_get_driver_name,
	.get_timeline_name = d3dq_hw_fence_get_timeline_name,
	.release = d3dq_hw_fence_release,
};

struct d3dq_hw_fence *d3dq_hw_fence_alloc(void)
{
	struct d3dq_hw_fence *hw;

	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return NULL;
	spin_lock_init(&hw->lock);
	atomic_inc(&d3dq_live_hw_fences);
	return hw;
}

void d3dq_hw_fence_put(struct d3dq_hw_fence *hw)
{
	if (!hw)
		return;
	if (hw->initialized) {
		dma_fence_put(&hw->base);
	} else {
		atomic_dec(&d3dq_live_hw_fences);
		kfree(hw);
	}
}

static inline void *d3dq_ptr(struct d3dq_bo *bo, u64 offset)
{
	return (u8 *)bo->vaddr + offset;
}

static bool d3dq_job_cancelled(struct d3dq_job *job)
{
	return READ_ONCE(job->cancel) != 0;
}

/* memmove() in chunks, in the order that keeps overlapping copies right. */
static void d3dq_engine_copy(struct d3dq_job *job, void *dst, const void *src,
			     u64 size)
{
	u64 done = 0, n;

	if (dst <= src || dst >= src + size) {
		while (done < size && !d3dq_job_cancelled(job)) {
			n = min_t(u64, size - done, D3DQ_ENGINE_CHUNK);
			memmove(dst + done, src + done, n);
			done += n;
			cond_resched();
		}
	} else {
		while (done < size && !d3dq_job_cancelled(job)) {
			n = min_t(u64, size - done, D3DQ_ENGINE_CHUNK);
			done += n;
			memmove(dst + size - done, src + size - done, n);
			cond_resched();
		}
	}
}

static void d3dq_engine_fill(struct d3dq_job *job, void *dst, u8 value,
			     u64 size)
{
	u64 done = 0, n;

	while (done < size && !d3dq_job_cancelled(job)) {
		n = min_t(u64, size - done, D3DQ_ENGINE_CHUNK);
		memset(dst + done, value, n);
		done += n;
		cond_resched();
	}
}

/* Execute one command other than DELAY. Ranges were checked at submit. */
static void d3dq_engine_exec(struct d3dq_job *job, const struct d3dq_cmd *cmd)
{
	u64 *p;

	switch (cmd->op) {
	case DRM_D3DQ_CMD_WRITE64:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		WRITE_ONCE(*p, cmd->a);
		break;
	case DRM_D3DQ_CMD_COPY:
		d3dq_engine_copy(job, d3dq_ptr(cmd->dst, cmd->dst_offset),
				 d3dq_ptr(cmd->src, cmd->src_offset), cmd->size);
		break;
	case DRM_D3DQ_CMD_FILL:
		d3dq_engine_fill(job, d3dq_ptr(cmd->dst, cmd->dst_offset),
				 (u8)cmd->a, cmd->size);
		break;
	case DRM_D3DQ_CMD_CMP_STORE64:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		cmpxchg64(p, cmd->a, cmd->b);
		break;
	case DRM_D3DQ_CMD_TIMESTAMP:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		WRITE_ONCE(*p, ktime_get_ns());
		break;
	}
}

static void d3dq_engine_work(struct work_struct *work)
{
	struct d3dq_engine *engine = container_of(work, struct d3dq_engine,
						  work);
	struct d3dq_queue *queue = container_of(engine, struct d3dq_queue,
						engine);
	struct d3dq_job *job;
	const struct d3dq_cmd *cmd;
	ktime_t now;
	int err;

	spin_lock(&queue->lock);
	job = engine->job;
	if (!job) {
		spin_unlock(&queue->lock);
		return;
	}

	for (;;) {
		err = job->cancel;
		if (err)
			break;

		if (job->delaying) {
			now = ktime_get();
			if (ktime_before(now, job->delay_end)) {
				hrtimer_start(&engine->timer, job->delay_end,
					      HRTIMER_MODE_ABS);
				spin_unlock(&queue->lock);
				return;
			}
			job->delaying = false;
			job->pc++;
			continue;
		}

		if (job->pc >= job->ncmds)
			break;

		cmd = &job->cmds[job->pc];
		if (cmd->op == DRM_D3DQ_CMD_DELAY) {
			job->delay_end = ktime_add_ns(ktime_get(), cmd->a);
			job->delaying = true;
			continue;
		}

		spin_unlock(&queue->lock);
		d3dq_engine_exec(job, cmd);
		spin_lock(&queue->lock);
		job->pc++;
	}

	engine->job = NULL;
	job->state = D3DQ_JOB_DONE;
	atomic64_add(ktime_get_ns() - job->run_start_ns,
		     &queue->usage->busy_ns[queue->type]);
	spin_unlock(&queue->lock);

	d3dq_job_signal(job, err);
}

static enum hrtimer_restart d3dq_engine_timer(struct hrtimer *timer)
{
	struct d3dq_engine *engine = container_of(timer, struct d3dq_engine,
						  timer);
	struct d3dq_queue *queue = container_of(engine, struct d3dq_queue,
						engine);

	queue_work(queue->ddev->engine_wq, &engine->work);
	return HRTIMER_NORESTART;
}

/**
 * d3dq_engine_run - Start a job whose dependencies have signalled.
 * @queue: the job's queue
 * @job: the job
 *
 * Called from the scheduler's run_job. A job of a lost or destroyed queue,
 * or one whose dependency failed, is not run: its fence signals at once
 * with -ECANCELED.
 *
 * Return: a reference to the job's hardware fence.
 */
struct dma_fence *d3dq_engine_run(struct d3dq_queue *queue,
				  struct d3dq_job *job)
{
	struct d3dq_engine *engine = &queue->engine;
	struct d3dq_hw_fence *hw = job->hw;
	bool dep_failed = d3dq_job_dependency_failed(job);
	int err = 0;

	/* run_job calls of one scheduler never overlap. */
	dma_fence_init(&hw->base, &d3dq_hw_fence_ops, &hw->lock,
		       engine->fence_context, ++engine->seqno);
	hw->initialized = true;

	spin_lock(&queue->lock);
	if (dep_failed)
		d3dq_queue_set_lost_locked(queue, -ECANCELED);
	if (queue->state != DRM_D3DQ_QUEUE_STATE_OK || queue->dead) {
		err = -ECANCELED;
		job->state = D3DQ_JOB_DONE;
		trace_d3dq_cancel(queue->usage->client_id, queue->id,
				  d3dq_job_seqno(job), err);
	} else {
		engine->job = job;
		job->state = D3DQ_JOB_RUNNING;
		job->run_start_ns = ktime_get_ns();
		trace_d3dq_run(queue->usage->client_id, queue->id,
			       d3dq_job_seqno(job), 0);
	}
	spin_unlock(&queue->lock);

	/* This reference goes to the scheduler. */
	dma_fence_get(&hw->base);
	if (err)
		d3dq_job_signal(job, err);
	else
		queue_work(queue->ddev->engine_wq, &engine->work);
	return &hw->base;
}

/**
 * d3dq_engine_cancel - Stop the running job of a queue.
 * @queue: the queue
 * @job: only stop this job, or NULL for any
 * @err: error the job's fence completes with
 *
 * Waits until the job has ended (its fence signalled).
 *
 * Return: whether a job was stopped.
 */
bool d3dq_engine_cancel(struct d3dq_queue *queue, struct d3dq_job *job,
			int err)
{
	struct d3dq_engine *engine = &queue->engine;
	struct d3dq_job *running;
	bool hit = false;

	spin_lock(&queue->lock);
	running = engine->job;
	if (running && (!job || running == job)) {
		if (!running->cancel) {
			running->cancel = err;
			trace_d3dq_cancel(queue->usage->client_id, queue->id,
					  d3dq_job_seqno(running), err);
		}
		hit = true;
	}
	spin_unlock(&queue->lock);

	if (!hit)
		return false;

	/*
	 * The work arms the timer only while the job is not cancelled, so
	 * after this the timer stays off and the work sees the error.
	 */
	hrtimer_cancel(&engine->timer);
	queue_work(queue->ddev->engine_wq, &engine->work);
	flush_work(&engine->work);
	return true;
}

void d3dq_engine_init(struct d3dq_queue *queue)
{
	struct d3dq_engine *engine = &queue->engine;

	INIT_WORK(&engine->work, d3dq_engine_work);
	hrtimer_init(&engine->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	engine->timer.function = d3dq_engine_timer;
	engine->fence_context = dma_fence_context_alloc(1);
	engine->seqno = 0;
}

void d3dq_engine_fini(struct d3dq_queue *queue)
{
	struct d3dq_engine *engine = &queue->engine;

	hrtimer_cancel(&engine->timer);
	cancel_work_sync(&engine->work);
	WARN_ON(engine->job);
}
