// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq software engine: one per device, shared by its queues. It runs the
 * command streams of the queues' current jobs in bounded steps and
 * signals a job's hardware fence when the job ends.
 *
 * A DELAY command does not hold the engine: the engine arms an hrtimer
 * and moves on; the timer makes the queue ready again. Cancelling a job
 * (timeout, queue destroy, REMOVE) sets an error in the job, makes its
 * queue ready and waits for the job's hardware fence, so a cancelled job
 * ends within one round of the engine.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_drv.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_gem.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/*
 * DOC: Engine steps
 *
 * The engine runs one step of one queue at a time, from one work item
 * per device that queues itself again while work is ready (so other work
 * on the CPU runs between steps). A step runs commands until it has
 * spent %D3DQ_ENGINE_STEP_BYTES: a COPY or FILL costs its size and runs
 * in parts across steps, every command costs %D3DQ_ENGINE_CMD_COST more.
 * A step also ends at a DELAY that has not elapsed, and at the end of the
 * job. Which queue is next: the highest priority with a queue ready,
 * except that a priority which had a queue ready and no step for
 * %D3DQ_PRIORITY_SHARE steps in a row gets the next step (the highest
 * such priority, if several waited that long). So every ready priority
 * gets at least one step in every %D3DQ_PRIORITY_SHARE plus the number of
 * priorities minus one (10), and alone against a higher one, one in
 * %D3DQ_PRIORITY_SHARE + 1 (9). Within a priority, round the clients
 * (open files) with a queue ready, one step each, and round each
 * client's ready queues.
 *
 * A step that ends the last ready job of its client, other clients
 * having work ready, starts the next step only engine_pause_us later
 * (a module parameter, 20 by default, 0: no pause), from a timer: the
 * engine's worker lets its CPU go, so that the thread the job's end woke
 * gets a CPU before the engine runs on. That thread typically submits
 * the client's next job, which then waits one step per other ready
 * client, as the bound says; without the pause, a worker that runs
 * steps back to back could hold the CPU it needs (on two vCPUs of one
 * host thread, for milliseconds: figure 10 in performance.rst). A
 * client that still has jobs ready, and an engine nobody else waits
 * for, go on at once. Which queue is next is not changed by the pause.
 */
#define D3DQ_ENGINE_STEP_BYTES	SZ_256K
#define D3DQ_ENGINE_CMD_COST	64

/*
 * The work of a job run inside SUBMIT: a sixteenth of a step. The
 * submitting thread holds the engine while it publishes and runs such a
 * job, with preemption disabled (see d3dq_engine_claim_direct()).
 */
#define D3DQ_DIRECT_BYTES	(D3DQ_ENGINE_STEP_BYTES / 16)
#define D3DQ_PRIORITY_SHARE	8

atomic_t d3dq_live_hw_fences = ATOMIC_INIT(0);

static const char *d3dq_hw_fence_get_driver_name(struct dma_fence *fence)
{
	return D3DQ_DRIVER_NAME;
}

static const char *d3dq_hw_fence_get_timeline_name(struct dma_fence *fence)
{
	/*
	 * The queue's scheduler's name, as its finished fences give: the
	 * fence holds the scheduler until an RCU grace period after its
	 * release. Only a job run or started inside SUBMIT publishes its
	 * hardware fence (just before it runs or is made ready).
	 */
	return container_of(fence, struct d3dq_hw_fence, base)->sched->name;
}

/*
 * Frees a hardware fence; the module reference it held goes last. The
 * module's exit waits for these callbacks (rcu_barrier()), so the few
 * instructions after module_put() never run on freed text.
 */
static void d3dq_hw_fence_free(struct d3dq_hw_fence *hw)
{
	d3dq_sched_put(hw->sched);
	kfree(hw);
	atomic_dec(&d3dq_live_hw_fences);
	module_put(THIS_MODULE);
}

static void d3dq_hw_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);

	d3dq_hw_fence_free(container_of(fence, struct d3dq_hw_fence, base));
}

/*
 * The last scheduler fence of the job dropped its parent. RCU readers of
 * the scheduler fences (which may still ask for the timeline name) are
 * done after a grace period, as for dma_fence_free().
 */
static void d3dq_hw_fence_release(struct dma_fence *fence)
{
	call_rcu(&fence->rcu, d3dq_hw_fence_free_rcu);
}

static const struct dma_fence_ops d3dq_hw_fence_ops = {
	.get_driver_name = d3dq_hw_fence_get_driver_name,
	.get_timeline_name = d3dq_hw_fence_get_timeline_name,
	.release = d3dq_hw_fence_release,
};

/* Is @fence a job's hardware fence (of any d3dq device)? */
bool d3dq_is_hw_fence(const struct dma_fence *fence)
{
	return fence->ops == &d3dq_hw_fence_ops;
}

/*
 * Called from an ioctl, so the module is held by the open file and can
 * be taken with __module_get().
 */
struct d3dq_hw_fence *d3dq_hw_fence_alloc(struct d3dq_sched *sched)
{
	struct d3dq_hw_fence *hw;

	hw = kzalloc(sizeof(*hw), D3DQ_GFP);
	if (!hw)
		return NULL;
	spin_lock_init(&hw->lock);
	hw->sched = sched;
	d3dq_sched_get(sched);
	__module_get(THIS_MODULE);
	atomic_inc(&d3dq_live_hw_fences);
	return hw;
}

void d3dq_hw_fence_put(struct d3dq_hw_fence *hw)
{
	if (!hw)
		return;
	if (hw->initialized)
		dma_fence_put(&hw->base);
	else
		d3dq_hw_fence_free(hw);
}

/*
 * Initialise the hardware fence of the queue's next job to run. Under
 * the queue's lock, so that seqnos grow along the queue whichever path
 * runs its jobs: run_job calls of one scheduler never overlap, and a job
 * runs inside SUBMIT only once every earlier job of its queue finished.
 */
static void d3dq_hw_fence_init_locked(struct d3dq_queue *queue,
				      struct d3dq_hw_fence *hw)
{
	lockdep_assert_held(&queue->lock);

	dma_fence_init(&hw->base, &d3dq_hw_fence_ops, &hw->lock,
		       queue->engine.fence_context, ++queue->engine.seqno);
	hw->initialized = true;
}

static inline void *d3dq_ptr(struct d3dq_bo *bo, u64 offset)
{
	return (u8 *)bo->vaddr + offset;
}

/* The part [@done, @done + @n) of a COPY, in the order overlap needs. */
static void d3dq_engine_copy(const struct d3dq_cmd *cmd, u64 done, u64 n)
{
	u8 *dst = d3dq_ptr(cmd->dst, cmd->dst_offset);
	const u8 *src = d3dq_ptr(cmd->src, cmd->src_offset);

	if (dst <= src || dst >= src + cmd->size)
		memmove(dst + done, src + done, n);
	else
		memmove(dst + cmd->size - done - n, src + cmd->size - done - n,
			n);
}

/*
 * Execute @cmd (not a DELAY), or its next part for a COPY or FILL, out of
 * @budget. Ranges were checked at submit.
 *
 * Return: whether the command is complete.
 */
static bool d3dq_engine_exec(struct d3dq_job *job, const struct d3dq_cmd *cmd,
			     s64 *budget)
{
	u64 *p, n;

	*budget -= D3DQ_ENGINE_CMD_COST;
	switch (cmd->op) {
	case DRM_D3DQ_CMD_WRITE64:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		WRITE_ONCE(*p, cmd->a);
		break;
	case DRM_D3DQ_CMD_COPY:
	case DRM_D3DQ_CMD_FILL:
		n = min_t(u64, cmd->size - job->cmd_done,
			  max_t(s64, *budget, D3DQ_ENGINE_CMD_COST));
		if (cmd->op == DRM_D3DQ_CMD_COPY)
			d3dq_engine_copy(cmd, job->cmd_done, n);
		else
			memset(d3dq_ptr(cmd->dst, cmd->dst_offset) +
			       job->cmd_done, (u8)cmd->a, n);
		job->cmd_done += n;
		*budget -= n;
		return job->cmd_done == cmd->size;
	case DRM_D3DQ_CMD_CMP_STORE64:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		cmpxchg64(p, cmd->a, cmd->b);
		break;
	case DRM_D3DQ_CMD_TIMESTAMP:
		p = d3dq_ptr(cmd->dst, cmd->dst_offset);
		WRITE_ONCE(*p, ktime_get_ns());
		break;
	}
	return true;
}

static void d3dq_dispatch_add_locked(struct d3dq_dispatch *dispatch,
				     struct d3dq_engine *engine)
{
	struct d3dq_engine_client *client = engine->client;
	u32 prio = engine->priority;

	lockdep_assert_held(&dispatch->lock);

	if (!list_empty(&engine->ready))
		return;
	list_add_tail(&engine->ready, &client->queues[prio]);
	if (list_empty(&client->link[prio]))
		list_add_tail(&client->link[prio], &dispatch->clients[prio]);
	/* A pause queues the work when it ends. */
	if (!dispatch->paused)
		queue_work(dispatch->wq, &dispatch->work);
}

/*
 * Make a queue ready: its job has commands to run, or must notice its
 * cancel error. Called with the queue's lock held and a running job, or
 * from the DELAY timer (whose job cannot end while it is armed).
 */
static void d3dq_dispatch_add(struct d3dq_engine *engine)
{
	struct d3dq_dispatch *dispatch = engine->dispatch;
	unsigned long flags;

	spin_lock_irqsave(&dispatch->lock, flags);
	d3dq_dispatch_add_locked(dispatch, engine);
	spin_unlock_irqrestore(&dispatch->lock, flags);
}

/*
 * The queue's job ended (under the queue's lock): off the ready lists.
 * Whether its client has no other queue ready is noted for the step's
 * end (d3dq_dispatch_release()).
 */
static void d3dq_dispatch_remove(struct d3dq_engine *engine)
{
	struct d3dq_dispatch *dispatch = engine->dispatch;
	struct d3dq_engine_client *client = engine->client;
	u32 prio = engine->priority;
	unsigned long flags;

	spin_lock_irqsave(&dispatch->lock, flags);
	if (!list_empty(&engine->ready)) {
		list_del_init(&engine->ready);
		if (list_empty(&client->queues[prio]))
			list_del_init(&client->link[prio]);
	}
	dispatch->client_done = list_empty(&client->link[prio]);
	spin_unlock_irqrestore(&dispatch->lock, flags);
}

static bool d3dq_dispatch_has_ready_locked(struct d3dq_dispatch *d)
{
	int prio;

	for (prio = 0; prio < D3DQ_NUM_PRIORITIES; prio++)
		if (!list_empty(&d->clients[prio]))
			return true;
	return false;
}

/*
 * The engine is free again: run the next step if a queue is ready; from
 * the engine's work (@worker), after a pause if the step ended its
 * client's last ready job (see "Engine steps").
 */
static void d3dq_dispatch_release(struct d3dq_dispatch *d, bool worker)
{
	unsigned int pause_us = min(READ_ONCE(d3dq_engine_pause_us),
				    D3DQ_ENGINE_PAUSE_MAX_US);
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	d->busy = false;
	if (d3dq_dispatch_has_ready_locked(d) && !d->paused) {
		if (worker && d->client_done && pause_us) {
			d->paused = true;
			hrtimer_start(&d->pause,
				      ns_to_ktime(pause_us * NSEC_PER_USEC),
				      HRTIMER_MODE_REL);
		} else {
			queue_work(d->wq, &d->work);
		}
	}
	d->client_done = false;
	spin_unlock_irqrestore(&d->lock, flags);
}

/* The pause is over: the engine goes on. */
static enum hrtimer_restart d3dq_dispatch_resume(struct hrtimer *timer)
{
	struct d3dq_dispatch *d = container_of(timer, struct d3dq_dispatch,
					       pause);
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	d->paused = false;
	if (d3dq_dispatch_has_ready_locked(d))
		queue_work(d->wq, &d->work);
	spin_unlock_irqrestore(&d->lock, flags);
	return HRTIMER_NORESTART;
}

/*
 * Take the engine for a job run directly in run_job: only when it is idle
 * (no step running, no queue ready), so that nothing is overtaken.
 */
static bool d3dq_dispatch_claim_idle(struct d3dq_dispatch *d)
{
	unsigned long flags;
	bool claimed;

	spin_lock_irqsave(&d->lock, flags);
	claimed = !d->busy && !d3dq_dispatch_has_ready_locked(d);
	if (claimed)
		d->busy = true;
	spin_unlock_irqrestore(&d->lock, flags);
	return claimed;
}

/* Take the next queue to step off the ready lists (see "Engine steps"). */
static struct d3dq_engine *d3dq_dispatch_pick_locked(struct d3dq_dispatch *d)
{
	struct d3dq_engine_client *client;
	struct d3dq_engine *engine;
	int p, prio, top = -1, starved = -1;

	/* The highest that waited too long, else the highest ready. */
	for (p = D3DQ_NUM_PRIORITIES - 1; p >= 0; p--) {
		if (list_empty(&d->clients[p])) {
			d->passed[p] = 0;
			continue;
		}
		if (top < 0)
			top = p;
		if (starved < 0 && d->passed[p] >= D3DQ_PRIORITY_SHARE)
			starved = p;
	}
	if (top < 0)
		return NULL;
	prio = starved >= 0 ? starved : top;

	for (p = 0; p < D3DQ_NUM_PRIORITIES; p++)
		if (p != prio && !list_empty(&d->clients[p]))
			d->passed[p]++;
	d->passed[prio] = 0;

	client = list_first_entry(&d->clients[prio], struct d3dq_engine_client,
				  link[prio]);
	engine = list_first_entry(&client->queues[prio], struct d3dq_engine,
				  ready);
	list_del_init(&engine->ready);
	/* The client goes to the back, its other ready queues with it. */
	list_del_init(&client->link[prio]);
	if (!list_empty(&client->queues[prio]))
		list_add_tail(&client->link[prio], &d->clients[prio]);
	return engine;
}

/*
 * End the running job of @queue (its lock held, dropped here) and signal
 * its hardware fence with @err.
 */
static void d3dq_engine_end(struct d3dq_queue *queue, struct d3dq_job *job,
			    int err)
	__releases(&queue->lock)
{
	queue->engine.job = NULL;
	d3dq_dispatch_remove(&queue->engine);
	job->state = D3DQ_JOB_DONE;
	atomic64_add(d3dq_job_ran_ns(job, ktime_get()),
		     &queue->usage->busy_ns[queue->type]);
	spin_unlock(&queue->lock);

	d3dq_job_signal(job, err);
}

/*
 * A step of @job begins (its queue's lock held): its own time counts from
 * now, and a DELAY it was in counts until now (or until the DELAY's end,
 * if that was earlier: the rest was a wait for its turn).
 */
static void d3dq_job_step_begin(struct d3dq_job *job)
{
	ktime_t now = ktime_get();

	job->ran_ns = d3dq_job_ran_ns(job, now);
	job->since = now;
	job->stepping = true;
}

/*
 * The step of @job stops with the job unfinished (its queue's lock held):
 * a DELAY the job is in goes on counting; a wait for the next turn does
 * not count.
 */
static void d3dq_job_step_end(struct d3dq_job *job)
{
	ktime_t now = ktime_get();

	job->ran_ns = d3dq_job_ran_ns(job, now);
	job->since = now;
	job->stepping = false;
}

/*
 * The engine times its job itself, at the beginning of each step and at
 * each DELAY, so that a job never runs past its timeout by more than a
 * step, however late the timers (d3dq_timedout_job(), the watchdog) run
 * on a loaded machine. A job that has used its time is expired here (its
 * queue's lock held).
 *
 * Return: the engine time @job has left at @now, zero or less if expired.
 */
static s64 d3dq_engine_time_job(struct d3dq_job *job, ktime_t now)
{
	s64 left = d3dq_job_left_ns(job, now);

	if (left <= 0 && !job->cancel) {
		d3dq_job_expire_locked(job);
		d3dq_job_warn_timeout(job);
	}
	return left;
}

/*
 * Run the queue's job until @budget is spent, a DELAY that has not
 * elapsed, or its end. A job that has more to run goes back to the ready
 * lists.
 */
static void d3dq_engine_step(struct d3dq_queue *queue, s64 budget)
{
	struct d3dq_engine *engine = &queue->engine;
	const struct d3dq_cmd *cmd;
	struct d3dq_job *job;
	bool complete, entered;
	int err, idx;
	ktime_t now;
	s64 left;

	/*
	 * An unplug cancels every running job before it waits for the
	 * device's users; this only makes sure no command runs after it.
	 */
	entered = drm_dev_enter(&queue->ddev->drm, &idx);

	spin_lock(&queue->lock);
	job = engine->job;
	if (!job) {
		spin_unlock(&queue->lock);
		goto out;
	}
	if (!entered && !job->cancel)
		WRITE_ONCE(job->cancel, -ENODEV);
	d3dq_job_step_begin(job);
	d3dq_engine_time_job(job, job->since);

	for (;;) {
		err = job->cancel;
		if (err)
			break;

		if (job->delaying) {
			now = ktime_get();
			if (ktime_before(now, job->delay_end)) {
				left = d3dq_engine_time_job(job, now);
				if (left <= 0)
					continue;
				/*
				 * Not while cancelled: see d3dq_engine_kick().
				 * At the end of the DELAY or of the job's
				 * time, whichever comes first.
				 */
				hrtimer_start(&engine->timer,
					      ktime_before(ktime_add_ns(now, left),
							   job->delay_end) ?
					      ktime_add_ns(now, left) :
					      job->delay_end,
					      HRTIMER_MODE_ABS);
				d3dq_job_step_end(job);
				spin_unlock(&queue->lock);
				goto out;
			}
			job->delaying = false;
			job->pc++;
			continue;
		}

		if (job->pc >= job->ncmds)
			break;

		if (budget <= 0) {
			d3dq_dispatch_add(engine);
			d3dq_job_step_end(job);
			spin_unlock(&queue->lock);
			goto out;
		}

		cmd = &job->cmds[job->pc];
		if (cmd->op == DRM_D3DQ_CMD_DELAY) {
			job->delay_end = ktime_add_ns(ktime_get(), cmd->a);
			job->delaying = true;
			continue;
		}

		spin_unlock(&queue->lock);
		complete = d3dq_engine_exec(job, cmd, &budget);
		spin_lock(&queue->lock);
		if (complete) {
			job->pc++;
			job->cmd_done = 0;
		}
	}

	d3dq_engine_end(queue, job, err);
out:
	if (entered)
		drm_dev_exit(idx);
}

static void d3dq_dispatch_work(struct work_struct *work)
{
	struct d3dq_dispatch *d = container_of(work, struct d3dq_dispatch,
					       work);
	bool cookie = dma_fence_begin_signalling();
	struct d3dq_engine *engine;
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	/* A job running in run_job has the engine; it queues us after. */
	engine = d->busy ? NULL : d3dq_dispatch_pick_locked(d);
	d->busy = d->busy || engine;
	spin_unlock_irqrestore(&d->lock, flags);
	if (engine) {
		d3dq_engine_step(container_of(engine, struct d3dq_queue,
					      engine),
				 D3DQ_ENGINE_STEP_BYTES);
		d3dq_dispatch_release(d, true);
	}
	dma_fence_end_signalling(cookie);
}

static enum hrtimer_restart d3dq_engine_timer(struct hrtimer *timer)
{
	struct d3dq_engine *engine = container_of(timer, struct d3dq_engine,
						  timer);

	d3dq_dispatch_add(engine);
	return HRTIMER_NORESTART;
}

/*
 * Can @job run whole in one go, directly in run_job or SUBMIT? No DELAY
 * (which would make it wait) and no more than @budget of work: one
 * step's in run_job, %D3DQ_DIRECT_BYTES in SUBMIT.
 */
static bool d3dq_job_is_short(const struct d3dq_job *job, s64 budget)
{
	s64 cost = 0;
	u32 i;

	for (i = 0; i < job->ncmds; i++) {
		if (job->cmds[i].op == DRM_D3DQ_CMD_DELAY)
			return false;
		cost += D3DQ_ENGINE_CMD_COST;
		if (job->cmds[i].op == DRM_D3DQ_CMD_COPY ||
		    job->cmds[i].op == DRM_D3DQ_CMD_FILL)
			cost += job->cmds[i].size;
		if (cost > budget)
			return false;
	}
	return true;
}

/**
 * d3dq_engine_run - Start a job whose dependencies have signalled.
 * @queue: the job's queue
 * @job: the job
 *
 * Called from the scheduler's run_job. A job of a lost or destroyed queue,
 * or one whose dependency failed, is not run: its fence signals at once
 * with -ECANCELED. A short job (one step, no DELAY) finds the engine
 * idle runs here and now, and the fence returned has signalled: that
 * saves the engine work item's wake-up. Otherwise the queue joins the
 * engine's ready lists. A job that SUBMIT started already
 * (d3dq_engine_claim_early()) is left as it is.
 *
 * Return: a reference to the job's hardware fence.
 */
struct dma_fence *d3dq_engine_run(struct d3dq_queue *queue,
				  struct d3dq_job *job)
{
	struct d3dq_engine *engine = &queue->engine;
	struct d3dq_hw_fence *hw = job->hw;
	bool dep_failed = !job->early && d3dq_job_dependency_failed(job);
	bool now = false;
	int err = 0;

	/* Started at SUBMIT: running, or ended already. */
	if (job->early)
		return dma_fence_get(&hw->base);

	spin_lock(&queue->lock);
	d3dq_hw_fence_init_locked(queue, hw);
	/* This reference goes to the scheduler. */
	dma_fence_get(&hw->base);
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
		if (job->orphan)
			mod_delayed_work(d3dq_wq.timeout, &engine->watchdog,
					 msecs_to_jiffies(d3dq_job_timeout_ms));
		trace_d3dq_run(queue->usage->client_id, queue->id,
			       d3dq_job_seqno(job), 0);
		now = d3dq_job_is_short(job, D3DQ_ENGINE_STEP_BYTES) &&
		      d3dq_dispatch_claim_idle(engine->dispatch);
		if (!now)
			d3dq_dispatch_add(engine);
	}
	spin_unlock(&queue->lock);

	if (err) {
		d3dq_job_signal(job, err);
	} else if (now) {
		/* Ends the job; would queue it if it had more to run. */
		d3dq_engine_step(queue, D3DQ_ENGINE_STEP_BYTES);
		d3dq_dispatch_release(engine->dispatch, false);
	}
	return &hw->base;
}

/*
 * @job becomes the running job of @queue (its lock held) before the
 * scheduler's run_job: its hardware fence is initialised, for the caller
 * to publish (d3dq_engine_claim_direct(), d3dq_engine_claim_early()).
 */
static void d3dq_engine_take_locked(struct d3dq_queue *queue,
				    struct d3dq_job *job)
{
	lockdep_assert_held(&queue->lock);

	d3dq_hw_fence_init_locked(queue, job->hw);
	queue->engine.job = job;
	job->state = D3DQ_JOB_RUNNING;
	trace_d3dq_run(queue->usage->client_id, queue->id, d3dq_job_seqno(job),
		       0);
}

/**
 * d3dq_engine_claim_direct - Take the idle engine for a job run inside SUBMIT.
 * @queue: the job's queue, its submit_lock held and every earlier job of it
 *	   finished
 * @job: a job every dependency of which has signalled without error
 *
 * What d3dq_engine_run() does for a short job that finds the engine idle,
 * for a job the scheduler never sees (d3dq_job_claim_direct()): the job
 * takes the engine, becomes the queue's running job (so that REMOVE,
 * QUEUE_DESTROY and an unplug, which wait for the submit_lock, then stop
 * it as any other), and its hardware fence is initialised. It does not
 * run yet: the caller first publishes that fence in the job's signal
 * points and buffers and drops their reservation locks, then calls
 * d3dq_engine_run_claimed(), so that nobody sees a buffer idle while the
 * job writes it. Publishing allocates nothing and sleeps on nothing.
 *
 * The job's work is at most %D3DQ_DIRECT_BYTES, and the caller publishes
 * to few signal points and buffers (d3dq_job_claim_direct()): from the
 * claim to the end of the run, preemption is disabled, so that a
 * submitting thread the CPU scheduler or a cgroup holds back (SCHED_IDLE,
 * cpu.max) never holds the engine, and every other client, meanwhile.
 *
 * Return: whether the engine was claimed, preemption then disabled
 * until d3dq_engine_run_claimed(). If not (a long job, a busy engine, or
 * the queue lost or destroyed meanwhile), nothing was done.
 */
bool d3dq_engine_claim_direct(struct d3dq_queue *queue, struct d3dq_job *job)
{
	struct d3dq_engine *engine = &queue->engine;

	if (!d3dq_job_is_short(job, D3DQ_DIRECT_BYTES))
		return false;
	spin_lock(&queue->lock);
	if (queue->state != DRM_D3DQ_QUEUE_STATE_OK || queue->dead ||
	    !d3dq_dispatch_claim_idle(engine->dispatch)) {
		spin_unlock(&queue->lock);
		return false;
	}
	job->direct = true;
	d3dq_engine_take_locked(queue, job);
	/* Until the engine is released: d3dq_engine_run_claimed(). */
	preempt_disable();
	spin_unlock(&queue->lock);
	return true;
}

/**
 * d3dq_engine_run_claimed - Run a job that d3dq_engine_claim_direct() took.
 * @queue: the job's queue, its submit_lock held
 * @job: the job, its hardware fence published
 *
 * Runs the job whole in one step, as the engine would, releases the
 * engine and enables preemption again. The work is bounded by
 * %D3DQ_DIRECT_BYTES. On return the job's hardware fence has signalled
 * (with an error if the job was cancelled).
 */
void d3dq_engine_run_claimed(struct d3dq_queue *queue, struct d3dq_job *job)
{
	struct d3dq_engine *engine = &queue->engine;
	bool cookie;

	lockdep_assert_held(&queue->submit_lock);

	/* The same step as the engine's, under the same rules. */
	cookie = dma_fence_begin_signalling();
	d3dq_engine_step(queue, D3DQ_ENGINE_STEP_BYTES);
	d3dq_dispatch_release(engine->dispatch, false);
	dma_fence_end_signalling(cookie);
	preempt_enable();
	/*
	 * A short job ends in one step, cancelled or not. The caller frees
	 * it next: never while the engine could still hold it.
	 */
	if (WARN_ON_ONCE(!dma_fence_is_signaled(&job->hw->base)))
		dma_fence_wait(&job->hw->base, false);
}

/**
 * d3dq_engine_claim_early - Make a small job the queue's running job at SUBMIT.
 * @queue: the job's queue, its submit_lock held and every earlier job of it
 *	   finished
 * @job: a job every dependency of which has signalled without error, not
 *	 yet armed
 *
 * For a short job (one step, no DELAY) that d3dq_engine_claim_direct()
 * could not run because another queue has the engine: instead of waiting
 * for the scheduler's run_job (a work item, or 6.1's thread), the job
 * becomes the queue's running job now and its hardware fence is
 * initialised, for the caller to publish in place of the finished fence.
 * The caller arms and pushes the job as any other (the scheduler still
 * owns it, calls run_job, which then returns the hardware fence, and
 * frees it), then calls d3dq_engine_start_early(), which puts the queue on
 * the engine's ready lists: the job waits for its turn there as it would
 * after run_job, only without the work item before it, and whoever waits
 * on its signal points is woken by the engine's signal directly.
 *
 * Return: whether the job was taken. If not (a long job, the queue lost
 * or destroyed), nothing was done.
 */
bool d3dq_engine_claim_early(struct d3dq_queue *queue, struct d3dq_job *job)
{
	struct d3dq_engine *engine = &queue->engine;

	lockdep_assert_held(&queue->submit_lock);

	if (!d3dq_job_is_short(job, D3DQ_ENGINE_STEP_BYTES))
		return false;
	spin_lock(&queue->lock);
	if (queue->state != DRM_D3DQ_QUEUE_STATE_OK || queue->dead ||
	    engine->job) {
		spin_unlock(&queue->lock);
		return false;
	}
	job->early = true;
	d3dq_engine_take_locked(queue, job);
	spin_unlock(&queue->lock);
	return true;
}

/**
 * d3dq_engine_start_early - Let the engine run a job taken at SUBMIT.
 * @queue: the job's queue, its submit_lock held
 * @job: the job d3dq_engine_claim_early() took, published and pushed
 *
 * The queue joins the engine's ready lists, unless the job ended already
 * (a cancel, an unplug's, makes the queue ready itself): then @job may
 * have been freed, and is only compared with the running job (no other
 * job of the queue can be one while its submit_lock is held).
 */
void d3dq_engine_start_early(struct d3dq_queue *queue,
			     const struct d3dq_job *job)
{
	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	if (queue->engine.job == job)
		d3dq_dispatch_add(&queue->engine);
	spin_unlock(&queue->lock);
}

/**
 * d3dq_engine_kick - Make the engine look at its job's cancel error soon.
 * @queue: the queue, whose running job's cancel error was set
 *
 * The engine arms the DELAY timer only while the job is not cancelled
 * (both under the queue's lock), so after this the timer stays off and the
 * queue is ready: the engine sees the error within one round. Does not
 * wait.
 */
void d3dq_engine_kick(struct d3dq_queue *queue)
{
	struct d3dq_engine *engine = &queue->engine;

	hrtimer_cancel(&engine->timer);
	spin_lock(&queue->lock);
	if (engine->job)
		d3dq_dispatch_add(engine);
	spin_unlock(&queue->lock);
}

/**
 * d3dq_engine_cancel - Stop the running job of a queue.
 * @queue: the queue
 * @job: only stop this job, or NULL for any
 * @err: error the job's fence completes with
 *
 * Waits until the job has ended (its hardware fence signalled).
 *
 * Return: whether a job was stopped.
 */
bool d3dq_engine_cancel(struct d3dq_queue *queue, struct d3dq_job *job,
			int err)
{
	struct d3dq_engine *engine = &queue->engine;
	struct dma_fence *hw = NULL;
	struct d3dq_job *running;

	spin_lock(&queue->lock);
	running = engine->job;
	if (running && (!job || running == job)) {
		if (!running->cancel) {
			WRITE_ONCE(running->cancel, err);
			trace_d3dq_cancel(queue->usage->client_id, queue->id,
					  d3dq_job_seqno(running), err);
		}
		hw = dma_fence_get(&running->hw->base);
	}
	spin_unlock(&queue->lock);

	if (!hw)
		return false;

	d3dq_engine_kick(queue);
	dma_fence_wait(hw, false);
	dma_fence_put(hw);
	return true;
}

/*
 * Times the running job when the scheduler's timeout no longer does (see
 * d3dq_timedout_job()).
 */
static void d3dq_engine_watchdog(struct work_struct *work)
{
	struct d3dq_engine *engine = container_of(to_delayed_work(work),
						  struct d3dq_engine,
						  watchdog);
	struct d3dq_queue *queue = container_of(engine, struct d3dq_queue,
						engine);
	bool cookie = dma_fence_begin_signalling();
	bool timed_out = false;
	struct d3dq_job *job;
	unsigned long left;

	spin_lock(&queue->lock);
	job = engine->job;
	if (job && job->orphan) {
		timed_out = d3dq_job_check_timeout_locked(job, &left);
		if (timed_out)
			d3dq_job_warn_timeout(job);
		else
			mod_delayed_work(d3dq_wq.timeout, &engine->watchdog,
					 left);
	}
	spin_unlock(&queue->lock);

	if (timed_out)
		d3dq_engine_kick(queue);
	dma_fence_end_signalling(cookie);
}

void d3dq_engine_client_init(struct d3dq_engine_client *client)
{
	int i;

	for (i = 0; i < D3DQ_NUM_PRIORITIES; i++) {
		INIT_LIST_HEAD(&client->link[i]);
		INIT_LIST_HEAD(&client->queues[i]);
	}
}

void d3dq_dispatch_init(struct d3dq_dispatch *dispatch,
			struct workqueue_struct *wq)
{
	int i;

	spin_lock_init(&dispatch->lock);
	for (i = 0; i < D3DQ_NUM_PRIORITIES; i++)
		INIT_LIST_HEAD(&dispatch->clients[i]);
	memset(dispatch->passed, 0, sizeof(dispatch->passed));
	dispatch->busy = false;
	dispatch->client_done = false;
	dispatch->paused = false;
	INIT_WORK(&dispatch->work, d3dq_dispatch_work);
	d3dq_hrtimer_setup(&dispatch->pause, d3dq_dispatch_resume,
			   CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	dispatch->wq = wq;
}

/* Every queue of the device is gone. */
void d3dq_dispatch_fini(struct d3dq_dispatch *dispatch)
{
	int i;

	/* Nothing is ready: neither re-arms the other. */
	hrtimer_cancel(&dispatch->pause);
	cancel_work_sync(&dispatch->work);
	for (i = 0; i < D3DQ_NUM_PRIORITIES; i++)
		WARN_ON(!list_empty(&dispatch->clients[i]));
}

void d3dq_engine_init(struct d3dq_queue *queue, u32 priority,
		      struct d3dq_engine_client *client)
{
	struct d3dq_engine *engine = &queue->engine;

	INIT_DELAYED_WORK(&engine->watchdog, d3dq_engine_watchdog);
	INIT_LIST_HEAD(&engine->ready);
	engine->priority = priority;
	engine->client = client;
	engine->dispatch = &queue->ddev->dispatch;
	d3dq_hrtimer_setup(&engine->timer, d3dq_engine_timer, CLOCK_MONOTONIC,
			   HRTIMER_MODE_ABS);
	engine->fence_context = dma_fence_context_alloc(1);
	engine->seqno = 0;
}

void d3dq_engine_fini(struct d3dq_queue *queue)
{
	struct d3dq_engine *engine = &queue->engine;

	cancel_delayed_work_sync(&engine->watchdog);
	hrtimer_cancel(&engine->timer);
	WARN_ON(engine->job);
	WARN_ON(!list_empty(&engine->ready));
}
