// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq job lifecycle: create (SUBMIT), arm and push, run (the scheduler's
 * run_job, or SUBMIT itself for a job nothing stands before), finish (the
 * hardware fence signals), time out, free (the scheduler's free_job, or
 * SUBMIT for a job it ran).
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_fence.h"
#include "d3dq_gem.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/**
 * d3dq_job_create - Allocate a job for a queue.
 * @queue: the queue; the job takes over the caller's reference, also
 *	   when this fails
 * @file: the submitting file
 * @carrier: the job only carries waits (DRM_D3DQ_SUBMIT_CARRY)
 *
 * Initialises the scheduler job and preallocates the hardware fence, so
 * that nothing in the signalling path allocates. A carrier gets neither:
 * it is never armed nor run, and no dependency is added to it (the job
 * that takes its waits depends on d3dq_job.carry_dep); d3dq_job_free()
 * frees a job without them, as it does one whose creation failed.
 *
 * Return: the job, or an ERR_PTR().
 */
struct d3dq_job *d3dq_job_create(struct d3dq_queue *queue,
				 struct drm_file *file, bool carrier)
{
	struct d3dq_device *ddev = queue->ddev;
	struct d3dq_job *job;
	int ret;

	job = kzalloc(sizeof(*job), D3DQ_GFP);
	if (!job) {
		d3dq_queue_put(queue);
		return ERR_PTR(-ENOMEM);
	}
	job->queue = queue;
	INIT_LIST_HEAD(&job->link);
	INIT_LIST_HEAD(&job->tails);
	job->state = D3DQ_JOB_QUEUED;
	atomic_inc(&ddev->count.jobs);
	if (carrier)
		return job;

	ret = d3dq_sched_job_init(&job->base, &queue->entity, file, file);
	if (ret) {
		job->base.s_fence = NULL;
		goto err;
	}

	job->hw = d3dq_hw_fence_alloc(queue->sched);
	if (!job->hw) {
		ret = -ENOMEM;
		goto err;
	}
	return job;

err:
	d3dq_job_free(job);
	return ERR_PTR(ret);
}

/*
 * What one entry of the scheduler's dependency array costs (an xarray
 * slot and its share of a node).
 */
#define D3DQ_DEPENDENCY_BYTES	16

/* One fence a join fence waits for. */
struct d3dq_join_dep {
	struct dma_fence_cb cb;
	struct dma_fence *fence;	/* reference */
	struct d3dq_join_fence *join;
};

/*
 * struct d3dq_join_fence - A job's dependency on many fences at once.
 *
 * Signals once every fence in @deps has, with the first error among
 * them. Only the scheduler sees it (it is never published), it waits for
 * fences that signal in bounded time, and it is no container a reader
 * unwraps: the dma-fence rules hold as for the fences it stands for.
 */
struct d3dq_join_fence {
	struct dma_fence base;		/* freed after an RCU grace period */
	spinlock_t lock;
	/* Fences not signalled yet, plus one while callbacks are added. */
	atomic_t pending;
	atomic_t error;
	/* Puts the fences once the join itself is released. */
	struct work_struct free_work;
	u32 count;
	struct d3dq_join_dep deps[];
};

/**
 * d3dq_job_set_bytes - Count the memory a parsed job holds until freed.
 * @job: the job, its commands and waits parsed
 * @cmd_bytes: the size of its command stream
 *
 * This is what MAX_FILE_JOB_BYTES bounds (uapi.rst): the job, its two
 * fences (a carrier has none), the parsed commands (one &struct d3dq_cmd
 * per 16 bytes of stream, the size of the smallest command) and the
 * waits with their scheduler dependencies and, for releasable ones,
 * their release fences, or the join fence that stands for many waits.
 */
void d3dq_job_set_bytes(struct d3dq_job *job, u32 cmd_bytes)
{
	u32 i;

	job->bytes = sizeof(*job) +
		     (job->hw ? sizeof(struct d3dq_hw_fence) +
				sizeof(struct drm_sched_fence) : 0) +
		     (u64)(cmd_bytes / 16) * sizeof(struct d3dq_cmd) +
		     (u64)job->nwaits * (sizeof(struct d3dq_wait) +
					 D3DQ_DEPENDENCY_BYTES);
	if (job->nwaits > D3DQ_JOIN_MIN)
		job->bytes += struct_size_t(struct d3dq_join_fence, deps,
					    job->nwaits);
	for (i = 0; i < job->nwaits; i++) {
		if (job->waits[i].release)
			job->bytes += sizeof(struct d3dq_release_fence);
		if (job->waits[i].cond)
			job->bytes += d3dq_fence_qwait_bytes();
	}
	job->bytes += (u64)job->nfsignals * sizeof(struct d3dq_fence_qsignal);
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
 * d3dq_job_nothing_before - Has everything a job waits for completed?
 * @job: the job, not armed, its queue's submit_lock held
 *
 * Every dependency signalled without error, and the queue's last job
 * finished without error: what a job needs to run at once, on this
 * thread (d3dq_job_claim_direct()) or, without commands, not at all
 * (d3dq_job_start()).
 */
bool d3dq_job_nothing_before(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_wait *w;
	u32 i;

	lockdep_assert_held(&queue->submit_lock);

	/* 1: signalled without error. Only submitters change @last. */
	if (queue->last && dma_fence_get_status(queue->last) != 1)
		return false;
	for (i = 0; i < job->nwaits; i++) {
		w = &job->waits[i];
		/* A fence wait satisfied at submit has no dependency. */
		if (!w->release && !w->fence)
			continue;
		if (!dma_fence_is_signaled(w->release ? &w->release->base :
					   w->fence))
			return false;
	}
	return !d3dq_job_dependency_failed(job);
}

/**
 * d3dq_job_claim_direct - Take the engine for a job nothing stands before.
 * @job: the job, not armed, its queue's submit_lock held, nothing before
 *	 it (d3dq_job_nothing_before(), checked by the caller with the
 *	 direct_submit parameter, d3dq_job_start())
 * @nsignals: its signal points
 * @nbos: the buffers it uses
 *
 * See "Direct submission" in the uapi header. Every dependency has
 * signalled without error and the queue's last job finished without
 * error: then the scheduler would only wake its work item (the 6.1
 * scheduler's thread) to call run_job, and a short job that finds the
 * engine idle would run there at once (d3dq_engine_run()). Here it runs
 * on the submitting thread instead, with one wake-up less on its way to
 * whoever waits for it. It is never armed, and its hardware fence is what
 * its signal points and buffers get: the caller publishes that fence,
 * drops the reservation locks, then runs the job with
 * d3dq_job_run_claimed(), all with preemption disabled: so the work,
 * the signal points and the buffers are few (d3dq_engine_claim_direct()).
 *
 * Return: whether the job has the engine (preemption disabled until
 * d3dq_job_run_claimed()). Otherwise nothing happened.
 */
bool d3dq_job_claim_direct(struct d3dq_job *job, u32 nsignals, u32 nbos)
{
	lockdep_assert_held(&job->queue->submit_lock);

	if (nsignals > D3DQ_DIRECT_MAX_SIGNALS || nbos > D3DQ_DIRECT_MAX_BOS)
		return false;
	return d3dq_engine_claim_direct(job->queue, job);
}

/**
 * d3dq_job_run_claimed - Run a job that d3dq_job_claim_direct() accepted.
 * @job: the job, its hardware fence published, its queue's submit_lock
 *	 held and no reservation lock
 *
 * On return the job's hardware fence has signalled (with an error if it
 * was cancelled meanwhile), and the caller frees the job.
 */
void d3dq_job_run_claimed(struct d3dq_job *job)
{
	d3dq_engine_run_claimed(job->queue, job);
}

/**
 * d3dq_job_claim_early - Start a small job at SUBMIT on a busy engine.
 * @job: the job, not armed, its queue's submit_lock held, nothing before
 *	 it (as for d3dq_job_claim_direct())
 *
 * For a job d3dq_job_claim_direct() refused only because another queue
 * has the engine (or for its signal points, buffers or work beyond a
 * sixteenth of a step): when it fits in one step, it becomes its
 * queue's running job here and goes on the engine's ready lists once
 * pushed (d3dq_engine_claim_early()), without the scheduler's run_job
 * work item before it. It waits for its turn as any
 * other job. Its hardware fence is what its signal points and buffers get.
 *
 * Return: whether the job was taken: the caller arms, publishes the
 * hardware fence, pushes it and calls d3dq_engine_start_early().
 */
bool d3dq_job_claim_early(struct d3dq_job *job)
{
	lockdep_assert_held(&job->queue->submit_lock);

	return d3dq_engine_claim_early(job->queue, job);
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
	set_bit(D3DQ_JOB_F_PENDING, &job->flags);
	atomic_inc(&queue->pending);
	d3dq_job_busy(job);

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
		fence = job->waits[i].fence;
		/*
		 * A fence wait depends on the signal its release fence is
		 * bound to now: bound when its signal was armed (held), or
		 * bound again when the first one's job failed.
		 */
		if (rf && job->waits[i].cond && READ_ONCE(rf->waited))
			fence = READ_ONCE(rf->waited);
		if (!fence)
			continue;
		fence = dma_fence_chain_contained(fence);
		if (dma_fence_get_status(fence) < 0)
			return true;
	}
	return false;
}

/*
 * Count a job held or armed in its queue's idle word, if it has one,
 * once (submit lock held); d3dq_job_finished() takes it out. A queue
 * without a word pays no atomic operation per job.
 */
void d3dq_job_busy(struct d3dq_job *job)
{
	if (job->queue->idle.value &&
	    !test_and_set_bit(D3DQ_JOB_F_BUSY, &job->flags))
		d3dq_queue_busy(job->queue, 1);
}

/*
 * Account for a job that will not run (any more): once its fence values
 * are set (d3dq_job_signal(), a marker), or it is freed unrun.
 */
void d3dq_job_finished(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;

	/* The word outlives every job of its queue (its teardown frees it). */
	if (queue->idle.value &&
	    test_and_clear_bit(D3DQ_JOB_F_BUSY, &job->flags))
		d3dq_queue_busy(queue, -1);
	if (!test_and_clear_bit(D3DQ_JOB_F_PENDING, &job->flags))
		return;
	if (atomic_dec_and_test(&queue->pending))
		d3dq_queue_idle(queue);
	wake_up_all(&queue->pending_wq);
}

/*
 * End a job: set its fence signals if it completed (@err 0), account for
 * it, then signal its hardware fence with @err. The fence values come
 * first, after the job's memory writes and before its fences: whoever
 * sees the job's fence signalled (a job that waited for it, a syncobj
 * waiter) sees the values too (R17). The scheduler may free the job as
 * soon as the fence signals, so the job is not touched afterwards.
 */
void d3dq_job_signal(struct d3dq_job *job, int err)
{
	struct dma_fence *hw = dma_fence_get(&job->hw->base);
	struct d3dq_queue *queue = job->queue;
	struct d3dq_tail *tail;
	u32 i;

	trace_d3dq_done(queue->usage->client_id, queue->id,
			d3dq_job_seqno(job), err);
	/* A job that did not complete sets nothing (uapi.rst). */
	for (i = 0; i < job->nfsignals; i++)
		d3dq_fence_qsignal_end(&job->fsignals[i], !err);
	/* No tail is added from here on: the list is read unlocked. */
	spin_lock(&queue->lock);
	job->ended = true;
	job->end_err = err;
	spin_unlock(&queue->lock);
	list_for_each_entry(tail, &job->tails, link)
		for (i = 0; i < tail->nfsignals; i++)
			d3dq_fence_qsignal_end(&tail->fsignals[i], !err);
	if (err) {
		/* Its values are not set: nor is any later signal's. */
		d3dq_queue_gone(queue);
		/* Older schedulers do not pass the error on: set both. */
		if (!job->direct)
			dma_fence_set_error(&job->base.s_fence->finished, err);
		dma_fence_set_error(hw, err);
	}
	d3dq_job_finished(job);
	dma_fence_signal(hw);
	dma_fence_put(hw);
}

/* Drop the signals of a tail submit, ended or never armed, not @tail. */
void d3dq_tail_drop(struct d3dq_tail *tail)
{
	u32 i;

	for (i = 0; i < tail->nfsignals; i++)
		d3dq_fence_qsignal_fini(&tail->fsignals[i]);
	tail->nfsignals = 0;
	if (tail->fsignals != tail->inline_fs)
		kvfree(tail->fsignals);
	tail->fsignals = tail->inline_fs;
}

/* Free a tail submit a job took on, or one never armed. */
void d3dq_tail_free(struct d3dq_tail *tail)
{
	d3dq_tail_drop(tail);
	kfree(tail);
}

void d3dq_job_free(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_device *ddev = queue->ddev;
	u32 i;

	spin_lock(&queue->lock);
	list_del_init(&job->link);
	if (queue->tail_job == job)
		queue->tail_job = NULL;
	spin_unlock(&queue->lock);

	d3dq_job_finished(job);
	if (job->base.s_fence)
		drm_sched_job_cleanup(&job->base);

	/* Carried waits: no pruning kick once the job goes. */
	if (job->carry_cb_set)
		dma_fence_remove_callback(job->carry_dep, &job->carry_cb);
	for (i = 0; i < job->nwaits; i++) {
		struct d3dq_release_fence *rf = job->waits[i].release;

		/* Unlisted before its release fence goes. */
		d3dq_fence_qwait_free(job->waits[i].cond);
		/*
		 * Nothing but this job waits for the release fence: signal
		 * it (a no-op for a job that ran), so that a join fence over
		 * the job's waits, or over carried ones, drops what it holds
		 * when the job is freed unarmed: its put below takes its
		 * callback off the fence it was bound to, which would never
		 * signal it then.
		 */
		if (rf) {
			d3dq_release_fence_signal(rf, false);
			d3dq_release_fence_put(rf);
		}
		dma_fence_put(job->waits[i].fence);
		/* Up to max_syncs fences; every caller may sleep. */
		cond_resched();
	}
	kvfree(job->waits);
	dma_fence_put(job->carry_dep);

	for (i = 0; i < job->nfsignals; i++)
		d3dq_fence_qsignal_fini(&job->fsignals[i]);
	kvfree(job->fsignals);
	while (!list_empty(&job->tails)) {
		struct d3dq_tail *tail = list_first_entry(&job->tails,
							  struct d3dq_tail,
							  link);

		list_del(&tail->link);
		d3dq_tail_free(tail);
	}

	for (i = 0; i < job->ncmds; i++) {
		if (job->cmds[i].dst)
			drm_gem_object_put(&job->cmds[i].dst->base.base);
		if (job->cmds[i].src)
			drm_gem_object_put(&job->cmds[i].src->base.base);
	}
	kvfree(job->cmds);

	d3dq_publish_free(job->publish);
	d3dq_hw_fence_put(job->hw);
	if (job->charged)
		d3dq_file_uncharge_job(queue->dfile, job->bytes);
	kfree(job);
	atomic_dec(&ddev->count.jobs);
	d3dq_queue_put(queue);
}

static const char *d3dq_release_get_driver_name(struct dma_fence *fence)
{
	return D3DQ_DRIVER_NAME;
}

static const char *d3dq_join_get_timeline_name(struct dma_fence *fence)
{
	return "d3dq-join";
}

/* As for release fences: the module reference goes last. */
static void d3dq_join_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);

	kvfree(container_of(fence, struct d3dq_join_fence, base));
	module_put(THIS_MODULE);
}

static void d3dq_join_fence_free_work(struct work_struct *work)
{
	struct d3dq_join_fence *join =
		container_of(work, struct d3dq_join_fence, free_work);
	u32 i;

	for (i = 0; i < join->count; i++) {
		dma_fence_put(join->deps[i].fence);
		/* Up to max_syncs fences, each maybe freed here. */
		cond_resched();
	}
	call_rcu(&join->base.rcu, d3dq_join_fence_free_rcu);
}

/*
 * The last reference may go in any context (a fence callback, with
 * interrupts off): the puts of up to max_syncs fences go to a worker.
 */
static void d3dq_join_fence_free(struct dma_fence *fence)
{
	struct d3dq_join_fence *join =
		container_of(fence, struct d3dq_join_fence, base);

	queue_work(d3dq_wq.cleanup, &join->free_work);
}

static const struct dma_fence_ops d3dq_join_fence_ops = {
	.get_driver_name = d3dq_release_get_driver_name,
	.get_timeline_name = d3dq_join_get_timeline_name,
	.release = d3dq_join_fence_free,
};

/* One fence of @join has signalled (or is not waited for any more). */
static void d3dq_join_fence_done(struct d3dq_join_fence *join, int error)
{
	if (error)
		atomic_cmpxchg(&join->error, 0, error);
	if (!atomic_dec_and_test(&join->pending))
		return;
	error = atomic_read(&join->error);
	if (error)
		dma_fence_set_error(&join->base, error);
	dma_fence_signal(&join->base);
	/* The callbacks' reference. */
	dma_fence_put(&join->base);
}

static void d3dq_join_fence_cb(struct dma_fence *fence,
			       struct dma_fence_cb *cb)
{
	struct d3dq_join_dep *dep = container_of(cb, struct d3dq_join_dep, cb);

	d3dq_join_fence_done(dep->join, fence->error);
}

/**
 * d3dq_join_fence_create - One dependency for many fences.
 * @deps: the fences, which the caller holds
 * @count: how many
 *
 * Costs time and memory linear in @count, unlike as many scheduler
 * dependencies. The fence holds references to @deps, and keeps itself
 * alive until the last of them has signalled.
 *
 * Return: the fence (one reference, the caller's), or NULL.
 */
struct dma_fence *d3dq_join_fence_create(struct dma_fence **deps, u32 count)
{
	struct d3dq_join_fence *join;
	u32 i;

	join = kvzalloc(struct_size(join, deps, count), D3DQ_GFP);
	if (!join)
		return NULL;
	/* Called from SUBMIT: the open file holds the module. */
	__module_get(THIS_MODULE);
	spin_lock_init(&join->lock);
	INIT_WORK(&join->free_work, d3dq_join_fence_free_work);
	dma_fence_init(&join->base, &d3dq_join_fence_ops, &join->lock,
		       dma_fence_context_alloc(1), 1);
	join->count = count;
	atomic_set(&join->pending, count + 1);
	/* A reference for the callbacks, dropped when the last has run. */
	dma_fence_get(&join->base);
	for (i = 0; i < count; i++) {
		join->deps[i].join = join;
		join->deps[i].fence = dma_fence_get(deps[i]);
		if (dma_fence_add_callback(deps[i], &join->deps[i].cb,
					   d3dq_join_fence_cb))
			d3dq_join_fence_done(join, deps[i]->error);
	}
	d3dq_join_fence_done(join, 0);
	return &join->base;
}

static const char *d3dq_release_get_timeline_name(struct dma_fence *fence)
{
	return "d3dq-release";
}

/*
 * As for hardware fences, the module reference goes last and the
 * module's exit waits for these RCU callbacks.
 */
static void d3dq_release_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);

	kfree(container_of(fence, struct d3dq_release_fence, base));
	module_put(THIS_MODULE);
}

static void d3dq_release_fence_free(struct dma_fence *fence)
{
	struct d3dq_release_fence *rf =
		container_of(fence, struct d3dq_release_fence, base);

	dma_fence_put(rf->waited);
	call_rcu(&fence->rcu, d3dq_release_fence_free_rcu);
}

static const struct dma_fence_ops d3dq_release_fence_ops = {
	.get_driver_name = d3dq_release_get_driver_name,
	.get_timeline_name = d3dq_release_get_timeline_name,
	.release = d3dq_release_fence_free,
};

/**
 * d3dq_release_fence_signal - Signal a release fence unless it is signalled.
 * @rf: the fence
 * @released: a release did it (WAIT_RELEASE, or a fence wait's value was
 *	      reached), not the waited fence
 *
 * Any context: the fence value write calls it under a d3dq fence's lock.
 */
void d3dq_release_fence_signal(struct d3dq_release_fence *rf, bool released)
{
	unsigned long flags;

	spin_lock_irqsave(&rf->lock, flags);
	if (!test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &rf->base.flags)) {
		WRITE_ONCE(rf->released, released);
		dma_fence_signal_locked(&rf->base);
	}
	spin_unlock_irqrestore(&rf->lock, flags);
}

/* @waited signalled: so does @rf, with its error if @rf propagates it. */
static void d3dq_release_fence_waited(struct d3dq_release_fence *rf,
				      struct dma_fence *waited)
{
	unsigned long flags;

	spin_lock_irqsave(&rf->lock, flags);
	if (!test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &rf->base.flags)) {
		if (rf->propagate && waited->error)
			dma_fence_set_error(&rf->base, waited->error);
		dma_fence_signal_locked(&rf->base);
	}
	spin_unlock_irqrestore(&rf->lock, flags);
}

static void d3dq_release_fence_cb(struct dma_fence *waited,
				  struct dma_fence_cb *cb)
{
	struct d3dq_release_fence *rf =
		container_of(cb, struct d3dq_release_fence, cb);

	d3dq_release_fence_waited(rf, waited);
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

	rf = d3dq_release_fence_alloc();
	if (rf)
		d3dq_release_fence_bind(rf, waited);
	return rf;
}

/**
 * d3dq_release_fence_alloc - A release fence waiting for nothing yet.
 *
 * For a fence wait, which finds its waited fence under a spinlock: bind
 * it with d3dq_release_fence_bind(), or drop it with
 * d3dq_release_fence_discard().
 *
 * Return: the fence (one reference, the caller's), or NULL.
 */
struct d3dq_release_fence *d3dq_release_fence_alloc(void)
{
	struct d3dq_release_fence *rf;

	rf = kzalloc(sizeof(*rf), D3DQ_GFP);
	if (!rf)
		return NULL;
	/* Called from SUBMIT: the open file holds the module. */
	__module_get(THIS_MODULE);
	spin_lock_init(&rf->lock);
	dma_fence_init(&rf->base, &d3dq_release_fence_ops, &rf->lock,
		       dma_fence_context_alloc(1), 1);
	return rf;
}

/**
 * d3dq_release_fence_bind - Make a release fence wait for @waited.
 * @rf: from d3dq_release_fence_alloc(), not bound yet
 * @waited: the fence it stands for
 *
 * Allocates nothing and sleeps nowhere (it takes @waited's lock).
 */
void d3dq_release_fence_bind(struct d3dq_release_fence *rf,
			     struct dma_fence *waited)
{
	/* Read without a lock by d3dq_job_hold_ready(). */
	WRITE_ONCE(rf->waited, dma_fence_get(waited));
	/* A reference for the callback. */
	dma_fence_get(&rf->base);
	if (dma_fence_add_callback(waited, &rf->cb, d3dq_release_fence_cb)) {
		/* @waited has signalled already. */
		d3dq_release_fence_waited(rf, waited);
		dma_fence_put(&rf->base);
	}
}

/**
 * d3dq_release_fence_rebind - Move a release fence to another waited fence.
 * @rf: the fence, bound to a fence that has not signalled
 * @waited: what it stands for from now
 *
 * For a fence wait whose signal's job ends without writing the value
 * (d3dq_fence_qsignal_end()), called before that job's fence signals,
 * under the d3dq fence's lock: the wait then depends on another pending
 * signal that brings its value. Allocates nothing and sleeps nowhere.
 *
 * Return: false if @rf's callback had run already (nothing changed).
 */
bool d3dq_release_fence_rebind(struct d3dq_release_fence *rf,
			       struct dma_fence *waited)
{
	struct dma_fence *old = rf->waited;

	if (!old || !dma_fence_remove_callback(old, &rf->cb))
		return false;
	/* The callback's reference; the job's holds @rf. */
	dma_fence_put(&rf->base);
	d3dq_release_fence_bind(rf, waited);
	/* The ending job holds its own fence: not the last reference. */
	dma_fence_put(old);
	return true;
}

/* Drop a release fence that was never bound (nothing depends on it). */
void d3dq_release_fence_discard(struct d3dq_release_fence *rf)
{
	d3dq_release_fence_signal(rf, false);
	dma_fence_put(&rf->base);
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

/*
 * Drop the job's reference (and a callback that can no longer matter).
 * A held job's fence wait may have been bound to nothing.
 */
void d3dq_release_fence_put(struct d3dq_release_fence *rf)
{
	if (rf->waited && dma_fence_remove_callback(rf->waited, &rf->cb))
		dma_fence_put(&rf->base);
	dma_fence_put(&rf->base);
}

/*
 * DOC: Freeing jobs
 *
 * The scheduler's free_job and timeout callbacks run in the fence
 * signalling path: other fences (and memory reclaim) wait for them. But
 * freeing a job puts buffers, whose last put frees shmem pages and takes
 * the reservation lock, and both are held around GFP_KERNEL allocations
 * elsewhere. So jobs are freed by a worker on d3dq-cleanup, outside the
 * signalling path; the callbacks only hand the job over.
 */
static LLIST_HEAD(d3dq_free_list);

static void d3dq_job_cleanup(struct work_struct *work)
{
	struct llist_node *list = llist_reverse_order(llist_del_all(&d3dq_free_list));
	struct d3dq_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, list, free_node) {
		d3dq_job_free(job);
		cond_resched();
	}
}

static DECLARE_WORK(d3dq_cleanup_work, d3dq_job_cleanup);

/* Any context: no allocation, no sleeping. */
static void d3dq_job_free_later(struct d3dq_job *job)
{
	if (llist_add(&job->free_node, &d3dq_free_list))
		queue_work(d3dq_wq.cleanup, &d3dq_cleanup_work);
}

/*
 * Markers are freed in batches: the worker runs a jiffy after the first
 * of a batch, or at once when it holds %D3DQ_MARKER_BATCH of them, so a
 * call that completes one pays for no wake-up of the worker, and what
 * completed markers hold (memory charged to their memory cgroup, their
 * charge against the limits already returned) is bounded by what calls
 * complete in a jiffy and by the batch.
 */
#define D3DQ_MARKER_BATCH	64

static LLIST_HEAD(d3dq_marker_list);
static atomic_t d3dq_markers = ATOMIC_INIT(0);

static void d3dq_marker_cleanup(struct work_struct *work)
{
	struct llist_node *list = llist_reverse_order(llist_del_all(&d3dq_marker_list));
	struct d3dq_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, list, free_node) {
		atomic_dec(&d3dq_markers);
		d3dq_job_free(job);
		cond_resched();
	}
}

static DECLARE_DELAYED_WORK(d3dq_marker_work, d3dq_marker_cleanup);

/**
 * d3dq_job_free_deferred - Free a job that completed without the engine.
 * @job: a marker (d3dq_job_complete_marker()), on no list
 *
 * Its charge goes now, as when a job is freed in the call, so that a
 * submit at a limit finds the room at once; the rest, the bulk of the
 * cost (the scheduler job's cleanup, its waits' nodes and release
 * fences, its signals, its memory), is done on d3dq-cleanup, as for any
 * job the scheduler ran, and not in the call that completed it: in a
 * batch, a jiffy later at most (%D3DQ_MARKER_BATCH).
 */
void d3dq_job_free_deferred(struct d3dq_job *job)
{
	if (job->charged) {
		job->charged = false;
		d3dq_file_uncharge_job(job->queue->dfile, job->bytes);
	}
	llist_add(&job->free_node, &d3dq_marker_list);
	if (atomic_inc_return(&d3dq_markers) >= D3DQ_MARKER_BATCH)
		mod_delayed_work(d3dq_wq.cleanup, &d3dq_marker_work, 0);
	else
		queue_delayed_work(d3dq_wq.cleanup, &d3dq_marker_work, 1);
}

/* Module exit: the batch of markers, whose timer may still run. */
void d3dq_job_markers_flush(void)
{
	flush_delayed_work(&d3dq_marker_work);
}

static void d3dq_job_finished_cb(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	d3dq_job_free_later(container_of(cb, struct d3dq_job, finished_cb));
}

/*
 * For a job the scheduler will not free (it took it off its list to time
 * it out): free it once its finished fence has signalled. The scheduler
 * does not touch the job after signalling that fence.
 */
static void d3dq_job_free_when_finished(struct d3dq_job *job)
{
	if (dma_fence_add_callback(&job->base.s_fence->finished,
				   &job->finished_cb, d3dq_job_finished_cb))
		d3dq_job_free_later(job);
}

static struct dma_fence *d3dq_run_job(struct drm_sched_job *sched_job)
{
	struct d3dq_job *job = to_d3dq_job(sched_job);
	bool cookie = dma_fence_begin_signalling();
	struct dma_fence *fence;

	fence = d3dq_engine_run(job->queue, job);
	dma_fence_end_signalling(cookie);
	return fence;
}

/**
 * d3dq_job_ran_ns - The engine time a job has used.
 * @job: the job, its queue's lock held
 * @now: the time to count up to
 *
 * What the job timeout and fdinfo count: the job's steps (the running
 * one until @now) and its DELAYs while no step of it runs, until @now or
 * the DELAY's end. The job's waits for its turns on the shared engine do
 * not count, so a job behind many busy clients is not timed out for
 * their work, and the times of one device's clients add up to no more
 * than the time that passed (plus DELAYs, which overlap).
 *
 * Return: the time in ns.
 */
u64 d3dq_job_ran_ns(const struct d3dq_job *job, ktime_t now)
{
	ktime_t end = now;

	lockdep_assert_held(&job->queue->lock);

	if (!job->stepping && !job->delaying)
		return job->ran_ns;
	if (!job->stepping && ktime_before(job->delay_end, end))
		end = job->delay_end;
	if (!ktime_after(end, job->since))
		return job->ran_ns;
	return job->ran_ns + ktime_to_ns(ktime_sub(end, job->since));
}

/**
 * d3dq_job_left_ns - The engine time a job has left before its timeout.
 * @job: the job, its queue's lock held
 * @now: the time to count up to
 *
 * Return: the time in ns, zero or less once the job has used its time.
 */
s64 d3dq_job_left_ns(const struct d3dq_job *job, ktime_t now)
{
	return (s64)d3dq_job_timeout_ms * NSEC_PER_MSEC -
	       (s64)d3dq_job_ran_ns(job, now);
}

/**
 * d3dq_job_expire_locked - Time out the engine's job.
 * @job: the engine's current job, its queue's lock held
 *
 * The job loses its queue (-ETIMEDOUT) and is cancelled with -ETIMEDOUT:
 * the engine stops it at the next command boundary and signals its
 * fences. The caller warns (d3dq_job_warn_timeout()) and, outside the
 * engine, kicks the engine.
 */
void d3dq_job_expire_locked(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;

	lockdep_assert_held(&queue->lock);

	d3dq_queue_set_lost_locked(queue, -ETIMEDOUT);
	if (!job->cancel)
		WRITE_ONCE(job->cancel, -ETIMEDOUT);
	atomic_inc(&queue->usage->timeouts);
	trace_d3dq_timeout(queue->usage->client_id, queue->id,
			   d3dq_job_seqno(job), -ETIMEDOUT);
}

/**
 * d3dq_job_check_timeout_locked - Stop the engine's job if it ran too long.
 * @job: the engine's current job, its queue's lock held
 * @left: set to the jiffies left if it did not
 *
 * For the timers (the scheduler's timeout, the engine's watchdog): a job
 * that ran for the timeout, within two jiffies, is expired
 * (d3dq_job_expire_locked()); the caller kicks the engine.
 *
 * Return: whether the job timed out.
 */
bool d3dq_job_check_timeout_locked(struct d3dq_job *job, unsigned long *left)
{
	s64 rest = d3dq_job_left_ns(job, ktime_get());

	lockdep_assert_held(&job->queue->lock);

	/* The timers count whole jiffies. */
	if (rest > (s64)jiffies_to_nsecs(2)) {
		*left = nsecs_to_jiffies(rest) + 1;
		return false;
	}
	d3dq_job_expire_locked(job);
	return true;
}

/*
 * Any process can make its jobs time out, so the warnings are rate
 * limited (for the whole module): at most 10 every 5 s.
 */
static DEFINE_RATELIMIT_STATE(d3dq_timeout_rs, 5 * HZ, 10);

void d3dq_job_warn_timeout(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;

	if (!__ratelimit(&d3dq_timeout_rs))
		return;
	drm_warn(&queue->ddev->drm,
		 "job %llu of queue %u (%s[%d]) timed out after %u ms: queue lost\n",
		 d3dq_job_seqno(job), queue->id,
		 queue->client_comm, queue->client_pid, d3dq_job_timeout_ms);
}

/*
 * The scheduler took @sched_job off its pending list before calling this
 * and will not free it (it would only with drm_sched_stop(), which d3dq
 * never calls: that is built for hardware resets and would strip the
 * completion callback of a job running meanwhile). A job that really
 * timed out is cancelled on the engine, which signals its fences
 * (-ETIMEDOUT); its queue is lost, so later jobs complete with
 * -ECANCELED. In every case d3dq frees the job once it has finished.
 *
 * Nothing here sleeps or waits: the engine is kicked, not flushed. A job
 * the timer caught before it had used its time (it waited for turns on
 * a contended engine, or the timer raced with the previous job's end, or
 * with run_job) is timed by the engine's watchdog instead, now that the
 * scheduler no longer lists it.
 */
static enum drm_gpu_sched_stat d3dq_timedout_job(struct drm_sched_job *sched_job)
{
	struct d3dq_job *job = to_d3dq_job(sched_job);
	struct d3dq_queue *queue = job->queue;
	bool cookie = dma_fence_begin_signalling();
	bool timed_out = false;
	unsigned long left;

	spin_lock(&queue->lock);
	switch (job->state) {
	case D3DQ_JOB_RUNNING:
		timed_out = d3dq_job_check_timeout_locked(job, &left);
		if (timed_out) {
			d3dq_job_warn_timeout(job);
		} else {
			job->orphan = true;
			mod_delayed_work(d3dq_wq.timeout,
					 &queue->engine.watchdog, left);
		}
		break;
	case D3DQ_JOB_QUEUED:
		/* Listed just before run_job, which arms the watchdog. */
		job->orphan = true;
		break;
	case D3DQ_JOB_DONE:
		/* Finished just before the timer fired. */
		break;
	}
	spin_unlock(&queue->lock);

	if (timed_out)
		d3dq_engine_kick(queue);
	/* The job may be freed from here on. */
	d3dq_job_free_when_finished(job);
	dma_fence_end_signalling(cookie);
	return D3DQ_SCHED_STAT_RESET;
}

static void d3dq_free_job(struct drm_sched_job *sched_job)
{
	bool cookie = dma_fence_begin_signalling();

	d3dq_job_free_later(to_d3dq_job(sched_job));
	dma_fence_end_signalling(cookie);
}

const struct drm_sched_backend_ops d3dq_sched_ops = {
	.run_job = d3dq_run_job,
	.timedout_job = d3dq_timedout_job,
	.free_job = d3dq_free_job,
};
