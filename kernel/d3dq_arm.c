// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq held jobs (uapi 1.5) and their arming: hold a job whose fence
 * waits are not met yet, arm and push (or run) a queue's held jobs that
 * may run, from the arming work or in a CPU signal's call, and free those
 * of a queue that is lost or destroyed. See "Held jobs" in
 * Documentation/driver.rst.
 *
 * Lock order (Documentation/driver.rst, "Locking"): files_lock ->
 * file.lock -> submit_lock -> dma_resv / queue.lock -> dispatch.lock. For
 * held jobs ("Held jobs"): submit_lock -> reservation locks (as in
 * SUBMIT) -> a d3dq fence's lock -> a release fence's or a job fence's
 * lock (binding); queue->lock (a spinlock) is taken before a d3dq fence's
 * lock or alone, never under it: for the held list, which is changed
 * under both submit_lock and queue->lock and read under either
 * (WAIT_RELEASE finds held jobs under queue->lock), and to arm a tail's
 * signals. The write path takes a fence's lock and queues work: it never
 * takes submit_lock or a reservation lock.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_submit.h"
#include "d3dq_trace.h"

/*
 * Whether every fence wait of @waits is satisfied (its release fence
 * signalled: marked for good by the value write) or depends on an armed
 * signal's job (its release fence bound). Syncobj waits always are.
 */
bool d3dq_waits_ready(const struct d3dq_wait *waits, u32 count)
{
	struct d3dq_release_fence *rf;
	u32 i;

	for (i = 0; i < count; i++) {
		rf = waits[i].release;
		if (!waits[i].cond || !rf || READ_ONCE(rf->waited))
			continue;
		if (!dma_fence_is_signaled(&rf->base))
			return false;
	}
	return true;
}

/**
 * d3dq_job_hold_ready - May a held job be armed?
 * @job: the job
 *
 * Whether each of its fence waits is satisfied or depends on an armed
 * signal's job (d3dq_waits_ready()).
 */
bool d3dq_job_hold_ready(struct d3dq_job *job)
{
	return d3dq_waits_ready(job->waits, job->nwaits);
}

/* Put @job at the end of its queue's held jobs. */
static void d3dq_job_hold(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	job->held = true;
	spin_lock(&queue->lock);
	list_add_tail(&job->link, &queue->held);
	spin_unlock(&queue->lock);
	queue->nheld++;
	d3dq_job_busy(job);
	atomic_inc(&dfile->jobs_held);
	atomic_inc(&dfile->user->jobs_held);
	trace_d3dq_hold(queue->usage->client_id, queue->id,
			d3dq_job_seqno(job), 0);
}

/* Take @job, held, off its queue's held jobs. */
static void d3dq_job_unhold(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	list_del_init(&job->link);
	spin_unlock(&queue->lock);
	job->held = false;
	queue->nheld--;
	atomic_dec(&dfile->jobs_held);
	atomic_dec(&dfile->user->jobs_held);
}

/*
 * Complete @job, which nothing stands before (d3dq_job_nothing_before(),
 * checked by the caller), where it would run, without the engine, if it
 * has no commands and no buffers: then running it would only
 * set its signals, as a %DRM_D3DQ_SUBMIT_TAIL submit sets them on an
 * idle queue. Its fence signals are set, in their order, and its syncobj
 * points get the queue's last fence, signalled (a stub if none), after
 * the values (R17), but for %DRM_D3DQ_SYNC_ARMED_ONLY ones, which are
 * not added (uapi 1.14: the drm_syncobj_add_point() was the largest
 * part of such a release); no hardware fence is initialised, nothing
 * is armed, and the queue's last fence stays what it was. Its signals, never
 * listed as pending, bound no wait: the writes satisfy those they bring.
 * Return: whether it did (@job is @direct then, for the caller to free).
 */
static bool d3dq_job_complete_marker(struct d3dq_job *job,
				     struct d3dq_signal *signals,
				     u32 nsignals, struct d3dq_bo_set *bos)
{
	struct d3dq_queue *queue = job->queue;
	struct dma_fence *fence = NULL;
	u32 i;

	/* At most a direct run's signals: another file's signaller pays. */
	if (job->ncmds || bos->count || nsignals > D3DQ_DIRECT_MAX_SIGNALS ||
	    !d3dq_queue_is_usable(queue))
		return false;
	job->direct = true;
	job->marker = true;
	job->state = D3DQ_JOB_DONE;
	trace_d3dq_run(queue->usage->client_id, queue->id, d3dq_job_seqno(job),
		       0);
	for (i = 0; i < job->nfsignals; i++)
		d3dq_fence_qsignal_end(&job->fsignals[i], true);
	/*
	 * Points of armed jobs only: these stay unused, freed with the job
	 * (the library's only point: then no fence is taken either).
	 */
	for (i = 0; i < nsignals; i++) {
		if (signals[i].armed_only)
			continue;
		if (!fence)
			fence = queue->last ? dma_fence_get(queue->last) :
			       dma_fence_get_stub();
		d3dq_signals_publish(&signals[i], 1, fence);
	}
	dma_fence_put(fence);
	/* A held one leaves the idle word now, its values set. */
	d3dq_job_finished(job);
	trace_d3dq_done(queue->usage->client_id, queue->id,
			d3dq_job_seqno(job), 0);
	return true;
}

/**
 * d3dq_job_start - Arm a job and start it: the one arming path.
 * @job: the job, its queue's submit_lock held, its waits ready
 * @signals: its signal points
 * @nsignals: how many
 * @bos: its buffers, locked with a fence slot reserved in each
 * @may_direct: the caller allows running it on this thread
 *
 * SUBMIT, the arming work and a CPU signal's call all start a job here:
 * a job that nothing stands before takes the engine and runs on this
 * thread once its hardware fence, which its signal points and buffers
 * get, is published and the reservation locks are dropped (nothing in
 * between sleeps: preemption is off); any other is armed, published and
 * pushed to the scheduler; if nothing stands before it and it fits in one
 * step, its queue joins the engine's ready lists here rather than in
 * run_job (d3dq_job_claim_early()). A job without commands or buffers that
 * nothing stands before completes here without the engine
 * (d3dq_job_complete_marker()).
 *
 * Return: whether the job ran here (its hardware fence has signalled;
 * the caller frees it once the submit lock is dropped). Otherwise the
 * job may be freed from here on.
 */
bool d3dq_job_start(struct d3dq_job *job, struct d3dq_signal *signals,
		    u32 nsignals, struct d3dq_bo_set *bos, bool may_direct)
{
	struct d3dq_queue *queue = job->queue;
	struct dma_fence *fence;
	bool ready, direct, early;

	lockdep_assert_held(&job->queue->submit_lock);

	/*
	 * Once: whether nothing stands before it, direct runs allowed; not
	 * while another driver's fence it waits for may be pending.
	 */
	ready = may_direct && !bos->nimplicit &&
		READ_ONCE(d3dq_direct_submit) && d3dq_job_nothing_before(job);
	if (ready && d3dq_job_complete_marker(job, signals, nsignals, bos))
		return true;
	direct = ready && d3dq_job_claim_direct(job, nsignals, bos->count);
	if (direct) {
		d3dq_job_publish(job, &job->hw->base, signals, nsignals, bos);
		d3dq_job_run_claimed(job);
		return true;
	}
	/* The engine busy: the job waits for its turn there, not run_job. */
	early = ready && d3dq_job_claim_early(job);
	fence = d3dq_job_arm(job);
	d3dq_job_publish(job, early ? &job->hw->base : fence, signals,
			 nsignals, bos);
	d3dq_job_push(job);
	/* @job may be freed from here on: only compared. */
	if (early)
		d3dq_engine_start_early(queue, job);
	return false;
}

/*
 * Held jobs one pass runs on the arming thread, for the queue's own
 * file (the arming work, a CPU signal of the same file): bounds the time
 * spent running jobs there (the rest go through the scheduler, in order
 * behind them).
 */
#define D3DQ_ARM_DIRECT_MAX	16

/*
 * Arm and push @queue's held jobs that may run, in their order, each once
 * its waits allow it (d3dq_job_hold_ready()); the first one that must
 * wait keeps the later ones held. A job that nothing stands before runs
 * at once on this thread instead (up to %D3DQ_ARM_DIRECT_MAX of them),
 * exactly as in SUBMIT, and goes on @ran for the caller to free once the
 * submit lock is dropped.
 *
 * With @foreign the caller is a CPU signal of another file, whose call
 * must not pay for this queue's work nor wait for its submitters: it
 * arms the first ready job only, running it if it is small, and only if
 * the job's reservations can be taken without sleeping; everything else
 * is left to the queue's arming work, queued at once.
 *
 * Return: whether the queue is usable (if not, nothing was armed).
 */
static bool d3dq_queue_arm_ready_locked(struct d3dq_queue *queue,
					struct list_head *ran, bool foreign)
{
	unsigned int ndirect = 0, narmed = 0;
	struct d3dq_publish *publish;
	struct d3dq_job *job;
	bool direct;
	int ret;

	lockdep_assert_held(&queue->submit_lock);

	if (!d3dq_queue_is_usable(queue))
		return false;
	for (;;) {
		job = list_first_entry_or_null(&queue->held, struct d3dq_job,
					       link);
		if (!job || !d3dq_job_hold_ready(job))
			break;
		if (foreign && narmed) {
			/* Another file's budget is spent: the work goes on. */
			mod_delayed_work(d3dq_wq.arm, &queue->arm_work, 0);
			break;
		}
		publish = job->publish;
		ret = foreign ? d3dq_bo_set_trylock(&publish->bos) :
				d3dq_bo_set_lock(&publish->bos);
		if (ret) {
			/*
			 * Out of memory for a fence slot: try again later.
			 * Busy (a CPU signal does not wait for another file)
			 * or interrupted: the arming work does it at once.
			 */
			mod_delayed_work(d3dq_wq.arm, &queue->arm_work,
					 ret == -ENOMEM ? HZ / 10 : 0);
			break;
		}
		narmed++;
		d3dq_job_unhold(job);
		job->publish = NULL;
		trace_d3dq_arm(queue->usage->client_id, queue->id,
			       d3dq_job_seqno(job), 0);
		direct = d3dq_job_start(job, publish->signals,
					publish->nsignals, &publish->bos,
					ndirect < (foreign ? 1 :
						   D3DQ_ARM_DIRECT_MAX));
		ndirect += direct;
		/*
		 * A job not run here may be freed already (its scheduler ran
		 * it): only one that ran here is looked at, and a marker,
		 * which always runs here, keeps its publish, freed with it
		 * on d3dq-cleanup.
		 */
		if (direct) {
			list_add_tail(&job->link, ran);
			if (job->marker) {
				job->publish = publish;
				publish = NULL;
			}
		}
		d3dq_publish_free(publish);
		/* Up to max_pending_jobs of them. */
		cond_resched();
	}
	return true;
}

/*
 * Arm @queue's held jobs that may run (submit lock held), as the arming
 * work does; those that ran here go on @ran, for the caller to free once
 * the lock is dropped. A split submit arms the jobs it held behind its
 * first (d3dq_submit.c). Return: whether the queue is usable (if not,
 * nothing was armed: the arming work drops them, see its kick).
 */
bool d3dq_queue_arm_ready(struct d3dq_queue *queue, struct list_head *ran)
{
	return d3dq_queue_arm_ready_locked(queue, ran, false);
}

/*
 * Free jobs taken off their queue's lists (submit lock dropped); @list
 * is left empty, ready to be used again. Markers, which completed
 * without the engine, are freed on d3dq-cleanup, their charge at once.
 */
void d3dq_jobs_free(struct list_head *list)
{
	struct d3dq_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, list, link) {
		if (job->marker) {
			list_del_init(&job->link);
			d3dq_job_free_deferred(job);
		} else {
			d3dq_job_free(job);
		}
	}
	INIT_LIST_HEAD(list);
}

/**
 * d3dq_queue_arm_held - Arm and push a queue's held jobs that may run.
 * @work: the queue's arm_work
 *
 * See "Held jobs" in Documentation/driver.rst. The value write path only
 * marks waits satisfied and queues this; here, in process context on
 * d3dq-arm and outside any fence signalling path, the submit lock and the
 * reservation locks are taken as in SUBMIT, and a small job that nothing
 * stands before is run here (d3dq_job_claim_direct()), sparing the
 * scheduler's wake-up. A lost or destroyed queue's held jobs are freed
 * instead, never armed.
 */
void d3dq_queue_arm_held(struct work_struct *work)
{
	struct d3dq_queue *queue = container_of(to_delayed_work(work),
						struct d3dq_queue, arm_work);
	LIST_HEAD(ran);
	bool usable;

	mutex_lock(&queue->submit_lock);
	usable = d3dq_queue_arm_ready_locked(queue, &ran, false);
	/* Carried waits all satisfied hold no room (d3dq_submit_carry()). */
	if (usable)
		d3dq_carry_prune_locked(queue, &ran);
	mutex_unlock(&queue->submit_lock);
	d3dq_jobs_free(&ran);
	if (!usable)
		d3dq_queue_drop_held(queue);
}

/**
 * d3dq_queue_arm_now - Arm a queue's held jobs in a CPU signal's call.
 * @queue: the queue, a reference held by the caller
 * @dfile: the signalling file
 *
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL's value write, or the work item that
 * writes a value another driver's work set (%DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON,
 * with the file the signal was made through), released a wait of @queue:
 * arm its held jobs that may run on the signalling thread, in process
 * context and outside any fence signalling path like the arming work,
 * running there a small one that nothing stands before, so that a waiter
 * is woken by the job's own completion, two wake-ups earlier. The
 * signaller never sleeps for another submitter: if the submit lock is
 * taken, or the queue is lost, the arming work does it. For a queue of
 * another file the call's budget is one job, armed only if its
 * reservations are free, run if small (d3dq_queue_arm_ready_locked()).
 */
void d3dq_queue_arm_now(struct d3dq_queue *queue, struct d3dq_file *dfile)
{
	LIST_HEAD(ran);
	bool usable;

	if (!mutex_trylock(&queue->submit_lock)) {
		d3dq_queue_kick_held(queue);
		return;
	}
	usable = d3dq_queue_arm_ready_locked(queue, &ran,
					     queue->dfile != dfile);
	mutex_unlock(&queue->submit_lock);
	d3dq_jobs_free(&ran);
	if (!usable)
		d3dq_queue_kick_held(queue);
}

/**
 * d3dq_queue_drop_held - Free a queue's held jobs and carried waits.
 * @queue: the queue, lost or destroyed (or its device removed); the
 *	   caller holds a reference or runs its arm_work
 *
 * Their signal points were never attached and their fence signals never
 * listed: nothing of them was published, so nothing is left to signal.
 */
void d3dq_queue_drop_held(struct d3dq_queue *queue)
{
	struct d3dq_job *job, *tmp;
	LIST_HEAD(list);

	mutex_lock(&queue->submit_lock);
	list_for_each_entry_safe(job, tmp, &queue->held, link) {
		trace_d3dq_cancel(queue->usage->client_id, queue->id,
				  d3dq_job_seqno(job), -ECANCELED);
		d3dq_job_unhold(job);
		list_add_tail(&job->link, &list);
	}
	d3dq_carry_take_locked(queue, &list);
	mutex_unlock(&queue->submit_lock);

	list_for_each_entry_safe(job, tmp, &list, link)
		d3dq_job_free(job);
}

/*
 * Hold a job (see "Held jobs" in the uapi header): keep what its arming
 * will publish, number it and list it behind the queue's other held
 * jobs, with the carried waits it takes. Under the submit lock; fails
 * only for want of memory, before anything was taken. A job of a split
 * submit may come with its publish allocated and filled already (its
 * buffers, its signals): then @signals, @bos and @carry are NULL and
 * nothing fails.
 */
int d3dq_submit_hold(struct d3dq_job *job, struct d3dq_signal **signals,
		     u32 nsignals, struct d3dq_bo_set *bos,
		     struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	if (!job->publish)
		job->publish = kzalloc(sizeof(*job->publish), D3DQ_GFP);
	if (!job->publish)
		return -ENOMEM;
	if (carry)
		d3dq_carry_commit(job, carry);
	if (signals) {
		job->publish->signals = *signals;
		job->publish->nsignals = nsignals;
		*signals = NULL;
	}
	if (bos)
		d3dq_bo_set_move(&job->publish->bos, bos);

	job->seqno = ++queue->njobs;
	job->file_seqno = atomic64_inc_return(&dfile->job_seqno);
	d3dq_trace_submit(queue, job, job->publish->signals, nsignals);
	d3dq_job_hold(job);
	/* Submits sleeping at a limit now fail instead (-ENOSPC). */
	d3dq_queue_wake_submitters(queue);
	return 0;
}
