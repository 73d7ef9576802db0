// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq carried waits (uapi 1.8): the waits of a DRM_D3DQ_SUBMIT_CARRY
 * submit, kept on its queue without a job until the queue's next job
 * takes them, and freed once all satisfied if no job comes. See "Carried
 * waits" in Documentation/driver.rst.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "d3dq_device.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_submit.h"

/* Take the queue's carried waits off it, onto @list (submit lock held). */
void d3dq_carry_take_locked(struct d3dq_queue *queue,
			    struct list_head *list)
{
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	atomic_sub(queue->ncarried, &dfile->jobs_held);
	atomic_sub(queue->ncarried, &dfile->user->jobs_held);
	d3dq_queue_busy(queue, -(s64)queue->ncarried);
	queue->ncarried = 0;
	spin_lock(&queue->lock);
	list_splice_tail_init(&queue->carried, list);
	spin_unlock(&queue->lock);
}

/*
 * Whether the waits of a carrying submit @c are all satisfied: their
 * fence signalled and none of them failed (an error must still reach
 * the job that takes them, as d3dq_job_dependency_failed() finds it).
 */
bool d3dq_carry_satisfied(struct d3dq_job *c)
{
	return (!c->carry_dep || dma_fence_is_signaled(c->carry_dep)) &&
	       !d3dq_job_dependency_failed(c);
}

/*
 * Move the queue's carried waits that are all satisfied onto @list, to
 * be freed once the submit lock is dropped: a queue that only ever
 * waits has no job to take them.
 */
void d3dq_carry_prune_locked(struct d3dq_queue *queue,
			     struct list_head *list)
{
	struct d3dq_file *dfile = queue->dfile;
	struct d3dq_job *c, *tmp;
	u32 n = 0;

	lockdep_assert_held(&queue->submit_lock);

	/* Changed under the submit lock only: walked without queue->lock. */
	list_for_each_entry_safe(c, tmp, &queue->carried, link) {
		if (!d3dq_carry_satisfied(c))
			continue;
		spin_lock(&queue->lock);
		list_move_tail(&c->link, list);
		spin_unlock(&queue->lock);
		n++;
	}
	queue->ncarried -= n;
	d3dq_queue_busy(queue, -(s64)n);
	atomic_sub(n, &dfile->jobs_held);
	atomic_sub(n, &dfile->user->jobs_held);
}

/*
 * Ready the queue's carried waits for @job (submit lock held): make @job
 * depend on them and fill @carry for d3dq_carry_commit(). Nothing is
 * taken yet: if this or the rest of the submit fails, they stay carried
 * for the next job.
 */
int d3dq_carry_prepare(struct d3dq_job *job, struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_wait *waits;
	struct d3dq_job *c;
	u32 n = job->nwaits;
	int ret;

	lockdep_assert_held(&queue->submit_lock);

	carry->waits = NULL;
	INIT_LIST_HEAD(&carry->taken);
	if (list_empty(&queue->carried))
		return 0;
	/* At most max_pending_jobs of max_syncs waits each. */
	list_for_each_entry(c, &queue->carried, link)
		n += c->nwaits;
	waits = kvcalloc(n, sizeof(*waits), D3DQ_GFP);
	if (!waits)
		return -ENOMEM;
	/* Its own first: WAIT_RELEASE names them by their index. */
	if (job->nwaits)
		memcpy(waits, job->waits, job->nwaits * sizeof(*waits));
	n = job->nwaits;
	list_for_each_entry(c, &queue->carried, link) {
		if (c->carry_dep) {
			/* Consumes the reference, failing or not. */
			ret = drm_sched_job_add_dependency(&job->base,
							   dma_fence_get(c->carry_dep));
			if (ret) {
				kvfree(waits);
				return ret;
			}
		}
		if (c->nwaits)
			memcpy(&waits[n], c->waits, c->nwaits * sizeof(*waits));
		n += c->nwaits;
	}
	carry->waits = waits;
	carry->count = n;
	return 0;
}

/*
 * Whether @job, with the waits d3dq_carry_prepare() readied, may be armed
 * now (d3dq_job_hold_ready()).
 */
bool d3dq_carry_ready(struct d3dq_job *job, struct d3dq_carry *carry)
{
	return carry->waits ? d3dq_waits_ready(carry->waits, carry->count) :
	       d3dq_job_hold_ready(job);
}

/*
 * @job takes the waits @carry readied (submit lock held; nothing fails):
 * they are its own from now, with their charge; the jobs that carried
 * them go onto @carry->taken, to be freed once the lock is dropped.
 */
void d3dq_carry_commit(struct d3dq_job *job, struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_job *c;

	if (!carry->waits)
		return;
	d3dq_carry_take_locked(queue, &carry->taken);
	list_for_each_entry(c, &carry->taken, link) {
		c->nwaits = 0;
		if (c->charged) {
			c->charged = false;
			job->bytes += c->bytes;
			d3dq_file_merge_job(queue->dfile);
		}
	}
	kvfree(job->waits);
	job->waits = carry->waits;
	job->nwaits = carry->count;
	carry->waits = NULL;
}

/* Any context: the waits' dependency signalled; the job holds the queue. */
static void d3dq_carry_signalled(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	struct d3dq_job *job = container_of(cb, struct d3dq_job, carry_cb);

	d3dq_queue_kick_held(job->queue);
}

/*
 * Carry @job's waits on its queue (submit lock held), counted as a held
 * job until the queue's next job takes them, or until they are all
 * satisfied: then the queue's arming work frees them (see "Carried
 * waits").
 */
void d3dq_submit_carry(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	list_add_tail(&job->link, &queue->carried);
	spin_unlock(&queue->lock);
	if (job->carry_dep) {
		job->carry_cb_set = !dma_fence_add_callback(job->carry_dep,
							    &job->carry_cb,
							    d3dq_carry_signalled);
		if (!job->carry_cb_set)
			d3dq_queue_kick_held(queue);
	}
	queue->ncarried++;
	d3dq_queue_busy(queue, 1);
	atomic_inc(&dfile->jobs_held);
	atomic_inc(&dfile->user->jobs_held);
	/* Submits sleeping at a limit now fail instead (-ENOSPC). */
	d3dq_queue_wake_submitters(queue);
}
