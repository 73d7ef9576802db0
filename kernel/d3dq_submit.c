// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq submission: the SUBMIT and WAIT_RELEASE ioctls. SUBMIT copies and
 * checks everything a job needs and turns syncobj waits into scheduler
 * dependencies (d3dq_submit_parse.c), then arms the job, attaches its
 * signal points (d3dq_publish.c) and pushes it, or holds it (d3dq_arm.c).
 * Nothing is published before every check passed. Carrying and tail
 * submits make no job of their own (d3dq_carry.c, d3dq_tail.c).
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include <drm/drm_file.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_submit.h"
#include "d3dq_trace.h"

/* The submit, wait and signal events of an armed job, before it can run. */
void d3dq_trace_submit(struct d3dq_queue *queue, struct d3dq_job *job,
		       const struct d3dq_signal *signals, u32 nsignals)
{
	u64 client = queue->usage->client_id, seqno = d3dq_job_seqno(job);
	u32 i;

	trace_d3dq_submit(client, queue->id, seqno, job->nwaits, nsignals,
			  job->ncmds);
	if (trace_d3dq_wait_enabled()) {
		for (i = 0; i < job->nwaits; i++)
			trace_d3dq_wait(client, queue->id, seqno,
					job->waits[i].handle,
					job->waits[i].point);
	}
	if (trace_d3dq_signal_enabled()) {
		for (i = 0; i < nsignals; i++)
			trace_d3dq_signal(client, queue->id, seqno,
					  signals[i].handle, signals[i].point);
	}
}

/*
 * Held jobs and carried waits one file may have: max_file_held_jobs, and
 * at most a quarter of max_user_jobs, so that one program's held backlog
 * leaves room to the others of its user.
 */
static bool d3dq_file_held_full(struct d3dq_file *dfile)
{
	u32 bound = min(d3dq_max_file_held_jobs,
			max(1u, d3dq_max_user_jobs / 4));

	return atomic_read(&dfile->jobs_held) >= (int)bound;
}

/* Armed jobs of the file or user not freed yet: they make room alone. */
static int d3dq_file_armed(struct d3dq_file *dfile)
{
	return READ_ONCE(dfile->jobs) - atomic_read(&dfile->jobs_held);
}

static int d3dq_user_armed(struct d3dq_user *user)
{
	return atomic_read(&user->jobs) - atomic_read(&user->jobs_held);
}

/*
 * Take the queue's submit lock once the queue holds room for @njobs more
 * jobs (one, or a split submit's) of @bytes in all below
 * max_pending_jobs unfinished jobs (held ones and carried waits included),
 * the file's jobs
 * leave room for them (max_file_job_bytes) and its user's number of
 * jobs too (max_user_jobs), and count the jobs against the file and the
 * user. The sleeps end in bounded time: armed jobs finish and are freed
 * whatever userspace does, so a submit sleeps while the limit that is
 * full holds armed jobs, whoever's (another process of the same user
 * included). Held jobs and carried waits do not (R5: a submit must not
 * wait for userspace; both count in the file's and the user's
 * jobs_held): when held jobs alone fill the limit (the queue's, the
 * file's or the user's), the submit fails at once with -ENOSPC; held
 * jobs are bounded per file too (d3dq_file_held_full()), so one
 * program's held backlog leaves room to the others of its user. Carried
 * waits count in the queue's limit for a carrying submit (@pruned not
 * NULL) only: a job takes them all, so it always has the room they
 * hold. A carrying submit first takes the carried waits
 * satisfied since off the queue, onto @pruned, for the caller to free
 * once the submit lock is dropped (also when this fails): a queue that
 * only ever waits has no job to take them. Fails with -ECANCELED if the
 * queue is lost.
 */
static int d3dq_queue_reserve(struct d3dq_queue *queue, u32 njobs,
			      u64 bytes, struct list_head *pruned)
{
	struct d3dq_file *dfile = queue->dfile;
	struct d3dq_user *user = dfile->user;
	enum d3dq_charge charge = D3DQ_FILE_FULL;
	bool carry = pruned;
	bool full;
	int ret;

	for (;;) {
		/* Restarted like the waits below, never a bare -EINTR. */
		if (mutex_lock_interruptible(&queue->submit_lock))
			return -ERESTARTSYS;
		if (!d3dq_queue_is_usable(queue)) {
			mutex_unlock(&queue->submit_lock);
			return -ECANCELED;
		}
		if (carry)
			d3dq_carry_prune_locked(queue, pruned);
		/* Only submitters, under the lock, increase @pending. */
		full = atomic_read(&queue->pending) + queue->nheld +
		       (carry ? queue->ncarried : 0) + njobs >
		       d3dq_max_pending_jobs;
		if (!full) {
			charge = d3dq_file_charge_jobs(dfile, njobs, bytes);
			if (charge == D3DQ_CHARGED)
				return 0;
		}
		ret = 0;
		if (full ? !atomic_read(&queue->pending) :
		    (charge == D3DQ_USER_FULL ? d3dq_user_armed(user) :
		     d3dq_file_armed(dfile)) <= 0)
			ret = -ENOSPC;
		mutex_unlock(&queue->submit_lock);
		if (ret)
			return ret;
		if (carry)
			d3dq_jobs_free(pruned);

		/*
		 * Until there is room, or only held jobs are left in it
		 * (then -ENOSPC above): jobs held or freed meanwhile wake
		 * these up (d3dq_job_hold(), the job's free).
		 */
		if (full)
			ret = wait_event_interruptible(queue->pending_wq,
						       atomic_read(&queue->pending) +
						       READ_ONCE(queue->nheld) +
						       (carry ? READ_ONCE(queue->ncarried) : 0) +
						       njobs <= d3dq_max_pending_jobs ||
						       !atomic_read(&queue->pending) ||
						       !d3dq_queue_is_usable(queue));
		else if (charge == D3DQ_USER_FULL)
			ret = wait_event_interruptible(user->wq,
						       d3dq_user_jobs_fit(user, njobs) ||
						       d3dq_user_armed(user) <= 0 ||
						       !d3dq_queue_is_usable(queue));
		else
			ret = wait_event_interruptible(dfile->wq,
						       d3dq_file_job_fits(dfile, bytes) ||
						       d3dq_file_armed(dfile) <= 0 ||
						       !d3dq_queue_is_usable(queue));
		if (ret)
			return ret;
	}
}

/*
 * The jobs of a split submit (uapi 1.10), in queue order; the first
 * takes the carried waits, the last the signals.
 */
struct d3dq_split {
	struct d3dq_job **jobs;
	u32 n;
	u64 bytes;
};

static void d3dq_split_free(struct d3dq_split *split)
{
	u32 i;

	for (i = 0; i < split->n; i++)
		d3dq_job_free(split->jobs[i]);
	kvfree(split->jobs);
}

/*
 * Cut the stream into jobs, each checked and with its buffers collected
 * into a publish of its own (the first's into @bos), before anything is
 * reserved: -E2BIG for a stream that can never fit.
 */
static int d3dq_split_parse(struct drm_file *file, struct d3dq_queue *queue,
			    struct drm_d3dq_submit *args,
			    struct d3dq_split *split, struct d3dq_bo_set *bos)
{
	u32 pos = 0, used, max = d3dq_max_pending_jobs;
	struct d3dq_job *job;
	int ret;

	/* Each job but an empty stream's holds a command, 16 bytes. */
	split->jobs = kvcalloc(min(max, args->cmd_bytes / 16 + 1),
			       sizeof(*split->jobs), D3DQ_GFP);
	if (!split->jobs)
		return -ENOMEM;
	do {
		if (split->n == min(max, args->cmd_bytes / 16 + 1))
			return -E2BIG;
		d3dq_queue_get(queue);
		job = d3dq_job_create(queue, file, false);
		if (IS_ERR(job))
			return PTR_ERR(job);
		split->jobs[split->n++] = job;
		job->implicit = args->flags & DRM_D3DQ_SUBMIT_IMPLICIT;
		used = 0;
		ret = d3dq_parse_cmds_split(file, job, args->cmds + pos,
					    args->cmd_bytes - pos, &used);
		if (ret)
			return ret;
		pos += used;
		if (split->n > 1) {
			job->publish = kzalloc(sizeof(*job->publish),
					       D3DQ_GFP);
			if (!job->publish)
				return -ENOMEM;
		}
		ret = d3dq_bo_set_init(split->n > 1 ? &job->publish->bos : bos,
				       job);
		if (ret)
			return ret;
		d3dq_job_set_bytes(job, used);
		split->bytes += job->bytes;
		if (split->bytes > d3dq_max_file_job_bytes)
			return -E2BIG;
		/* Up to max_pending_jobs of max_cmd_bytes each. */
		cond_resched();
	} while (pos < args->cmd_bytes);
	return 0;
}

/*
 * SUBMIT with DRM_D3DQ_SUBMIT_SPLIT: several jobs, all or none. The
 * first is submitted as any job; the others are held behind it under the
 * same submit lock (nothing fails there: their publishes are allocated
 * already) and, unless the first is held, armed at once as the arming
 * work would: a held job that cannot take its buffers' locks yet is
 * armed by the work later, the rest of the submit already done.
 */
static int d3dq_submit_split(struct drm_file *file, struct d3dq_queue *queue,
			     struct drm_d3dq_submit *args)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_signal *signals = NULL;
	struct d3dq_split split = { 0 };
	struct d3dq_job *first, *last;
	struct d3dq_carry taken;
	struct d3dq_bo_set bos;
	LIST_HEAD(ran);
	bool held, direct;
	u32 i;
	int ret;

	memset(&bos, 0, sizeof(bos));
	ret = d3dq_split_parse(file, queue, args, &split, &bos);
	/* The jobs hold their own references. */
	d3dq_queue_put(queue);
	if (ret)
		goto err;
	first = split.jobs[0];
	last = split.jobs[split.n - 1];

	ret = d3dq_get_signals(file, &args->signals, &signals, &last->fsignals,
			       &last->nfsignals);
	if (ret)
		goto err;
	if (split.n > 1) {
		last->publish->signals = signals;
		last->publish->nsignals = args->signals.count;
		signals = NULL;
	}

	ret = d3dq_queue_reserve(queue, split.n, split.bytes, NULL);
	if (ret)
		goto err;
	for (i = 0; i < split.n; i++)
		split.jobs[i]->charged = true;

	ret = d3dq_carry_prepare(first, &taken);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		goto err;
	}

	held = queue->nheld || !d3dq_carry_ready(first, &taken);
	if (held) {
		/* The file's held backlog is bounded (R5: -ENOSPC at once). */
		ret = atomic_read(&dfile->jobs_held) + split.n >
		      min(d3dq_max_file_held_jobs,
			  max(1u, d3dq_max_user_jobs / 4)) ? -ENOSPC :
		      d3dq_submit_hold(first, &signals,
				       split.n > 1 ? 0 : args->signals.count,
				       &bos, &taken);
	} else {
		ret = d3dq_bo_set_lock(&bos);
	}
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		kvfree(taken.waits);
		goto err;
	}

	/* Nothing fails from here on. */
	direct = false;
	if (!held) {
		d3dq_carry_commit(first, &taken);
		first->seqno = ++queue->njobs;
		first->file_seqno = atomic64_inc_return(&dfile->job_seqno);
		/* Started, @first may be freed at once: read before. */
		args->seqno = first->file_seqno;
		d3dq_trace_submit(queue, first, signals,
				  split.n > 1 ? 0 : args->signals.count);
		direct = d3dq_job_start(first, signals,
					split.n > 1 ? 0 : args->signals.count,
					&bos, true);
	}
	for (i = 1; i < split.n; i++)
		d3dq_submit_hold(split.jobs[i], NULL, 0, NULL, NULL);
	/* Held under the submit lock: not armed, not freed yet. */
	if (held || split.n > 1)
		args->seqno = last->file_seqno;
	/*
	 * A queue lost meanwhile (its first job failed in the call) arms
	 * nothing: its arming work drops what is held, as for any lost
	 * queue's held jobs.
	 */
	if (held)
		args->out_flags |= DRM_D3DQ_SUBMIT_HELD;
	else if (!d3dq_queue_arm_ready(queue, &ran))
		d3dq_queue_kick_held(queue);
	mutex_unlock(&queue->submit_lock);

	d3dq_jobs_free(&ran);
	d3dq_jobs_free(&taken.taken);
	d3dq_bo_set_free(&bos);
	if (signals)
		d3dq_put_signals(signals, args->signals.count);
	if (direct)
		d3dq_job_free(first);
	kvfree(split.jobs);
	return 0;

err:
	d3dq_bo_set_free(&bos);
	if (signals)
		d3dq_put_signals(signals, args->signals.count);
	d3dq_split_free(&split);
	return ret;
}

int d3dq_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct drm_d3dq_submit *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	bool carry = args->flags & DRM_D3DQ_SUBMIT_CARRY;
	bool tail = args->flags & DRM_D3DQ_SUBMIT_TAIL;
	bool split = args->flags & DRM_D3DQ_SUBMIT_SPLIT;
	struct d3dq_signal *signals = NULL;
	struct d3dq_carry taken;
	struct d3dq_bo_set bos;
	LIST_HEAD(pruned);
	struct d3dq_queue *queue;
	struct d3dq_job *job;
	bool direct;
	int ret;

	if ((args->flags & ~(DRM_D3DQ_SUBMIT_HOLD | DRM_D3DQ_SUBMIT_CARRY |
			     DRM_D3DQ_SUBMIT_TAIL | DRM_D3DQ_SUBMIT_SPLIT |
			     DRM_D3DQ_SUBMIT_IMPLICIT)) ||
	    args->pad || args->seqno || args->out_flags || args->pad2)
		return -EINVAL;
	/* A split submit: no other flag but IMPLICIT, no waits (the uapi). */
	if (split && ((args->flags & ~DRM_D3DQ_SUBMIT_IMPLICIT) !=
		      DRM_D3DQ_SUBMIT_SPLIT || args->waits.count))
		return -EINVAL;
	if (args->cmd_bytes % 8 ||
	    (!split && args->cmd_bytes > d3dq_max_cmd_bytes))
		return -EINVAL;
	if ((args->waits.count && !args->waits.stride) ||
	    (args->signals.count && !args->signals.stride))
		return -EINVAL;
	/* A carrying submit makes no job: waits only (see the uapi). */
	if (carry && (tail || args->cmd_bytes || args->signals.count))
		return -EINVAL;
	/* A tail submit may make none: a few signals only. */
	if (tail && (args->cmd_bytes || args->waits.count ||
		     args->signals.count > D3DQ_DIRECT_MAX_SIGNALS))
		return -EINVAL;

	queue = d3dq_queue_lookup(dfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	if (carry && !args->waits.count) {
		d3dq_queue_put(queue);
		return 0;
	}
	if (split)
		return d3dq_submit_split(file, queue, args);
	if (tail) {
		ret = d3dq_submit_tail(file, queue, args);
		if (ret <= 0) {
			d3dq_queue_put(queue);
			return ret;
		}
	}

	/* The job takes over the lookup reference. */
	job = d3dq_job_create(queue, file, carry);
	if (IS_ERR(job))
		return PTR_ERR(job);
	job->implicit = args->flags & DRM_D3DQ_SUBMIT_IMPLICIT;

	ret = d3dq_parse_cmds(file, job, args->cmds, args->cmd_bytes);
	if (ret)
		goto err_job;

	ret = d3dq_add_waits(file, job,
			     args->flags & (DRM_D3DQ_SUBMIT_HOLD |
					    DRM_D3DQ_SUBMIT_CARRY) ?
			     queue : NULL, &args->waits, carry);
	if (ret)
		goto err_job;

	ret = d3dq_get_signals(file, &args->signals, &signals, &job->fsignals,
			       &job->nfsignals);
	if (ret)
		goto err_job;

	ret = d3dq_bo_set_init(&bos, job);
	if (ret)
		goto err_signals;

	d3dq_job_set_bytes(job, args->cmd_bytes);
	ret = d3dq_queue_reserve(queue, 1, job->bytes, carry ? &pruned : NULL);
	if (ret) {
		d3dq_jobs_free(&pruned);
		goto err_bos;
	}
	job->charged = true;

	/*
	 * Every wait satisfied already: nothing to carry (R7 holds); after
	 * the reservation, so that a lost queue still fails the call.
	 */
	if (carry) {
		bool satisfied = d3dq_carry_satisfied(job);

		if (!satisfied && d3dq_file_held_full(dfile)) {
			mutex_unlock(&queue->submit_lock);
			d3dq_jobs_free(&pruned);
			ret = -ENOSPC;
			goto err_bos;
		}
		if (!satisfied)
			d3dq_submit_carry(job);
		mutex_unlock(&queue->submit_lock);
		d3dq_jobs_free(&pruned);
		d3dq_bo_set_free(&bos);
		if (satisfied)
			d3dq_job_free(job);
		return 0;
	}

	/* The waits carried so far become this job's too. */
	ret = d3dq_carry_prepare(job, &taken);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		goto err_bos;
	}

	/*
	 * Held behind the queue's held jobs (whatever its flags), or for
	 * a fence wait of its own. A wait satisfied from here on queues
	 * the arming work, which runs once the submit lock is dropped.
	 */
	if (queue->nheld || !d3dq_carry_ready(job, &taken)) {
		/* The file's held backlog is bounded (R5: -ENOSPC at once). */
		ret = d3dq_file_held_full(dfile) ? -ENOSPC :
		      d3dq_submit_hold(job, &signals, args->signals.count,
				       &bos, &taken);
		/* Once the lock is dropped the arming work may free the job. */
		if (!ret)
			args->seqno = job->file_seqno;
		mutex_unlock(&queue->submit_lock);
		if (ret) {
			kvfree(taken.waits);
			goto err_bos;
		}
		d3dq_jobs_free(&taken.taken);
		args->out_flags |= DRM_D3DQ_SUBMIT_HELD;
		return 0;
	}

	ret = d3dq_bo_set_lock(&bos);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		kvfree(taken.waits);
		goto err_bos;
	}
	d3dq_carry_commit(job, &taken);

	/* Nothing fails from here on. */
	job->seqno = ++queue->njobs;
	job->file_seqno = atomic64_inc_return(&dfile->job_seqno);
	args->seqno = job->file_seqno;
	d3dq_trace_submit(queue, job, signals, args->signals.count);

	/* Armed, or run here if nothing stands before it. */
	direct = d3dq_job_start(job, signals, args->signals.count, &bos, true);
	if (direct && (job->marker ||
		       dma_fence_get_status(&job->hw->base) == 1))
		args->out_flags |= DRM_D3DQ_SUBMIT_DONE;
	mutex_unlock(&queue->submit_lock);

	d3dq_jobs_free(&taken.taken);
	d3dq_bo_set_free(&bos);
	d3dq_put_signals(signals, args->signals.count);
	if (direct)
		d3dq_job_free(job);
	return 0;

err_bos:
	d3dq_bo_set_free(&bos);
err_signals:
	if (signals)
		d3dq_put_signals(signals, args->signals.count);
err_job:
	d3dq_job_free(job);
	return ret;
}

/* A job of @queue not freed yet, held or not, by its file seqno. */
static struct d3dq_job *d3dq_queue_find_job(struct d3dq_queue *queue,
					    u64 seqno)
{
	struct d3dq_job *job;

	lockdep_assert_held(&queue->lock);

	list_for_each_entry(job, &queue->jobs, link)
		if (job->file_seqno == seqno)
			return job;
	list_for_each_entry(job, &queue->held, link)
		if (job->file_seqno == seqno)
			return job;
	return NULL;
}

/*
 * WAIT_RELEASE: end a releasable wait of a job now. The job is looked up
 * among those of its queue not freed yet; one that is gone has run, and
 * releasing its wait is nothing to do.
 */
int d3dq_ioctl_wait_release(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_d3dq_wait_release *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_release_fence *rf = NULL;
	struct d3dq_queue *queue;
	struct d3dq_job *job;
	int ret = 0;

	if (!args->seqno ||
	    args->seqno > (u64)atomic64_read(&dfile->job_seqno) ||
	    args->index >= d3dq_max_syncs)
		return -EINVAL;
	queue = d3dq_queue_lookup(dfile, args->queue_id);
	if (!queue)
		return -ENOENT;

	spin_lock(&queue->lock);
	job = d3dq_queue_find_job(queue, args->seqno);
	if (job) {
		/* A fence wait is released by its value, not by this. */
		if (args->index >= job->nwaits ||
		    !(job->waits[args->index].flags &
		      DRM_D3DQ_SYNC_RELEASABLE)) {
			ret = -EINVAL;
		} else {
			rf = job->waits[args->index].release;
			dma_fence_get(&rf->base);
		}
	}
	spin_unlock(&queue->lock);

	/* Signalled outside the queue lock: it runs scheduler callbacks. */
	if (rf) {
		d3dq_release_fence_release(rf);
		dma_fence_put(&rf->base);
	}
	d3dq_queue_put(queue);
	return ret;
}
