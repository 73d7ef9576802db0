/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq jobs: waits, a command stream, signals; created by SUBMIT, then
 * armed, run, finished and freed through the scheduler, or, when nothing
 * stands before them, run and freed inside SUBMIT.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_JOB_H_
#define _D3DQ_JOB_H_

#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include <drm/gpu_scheduler.h>

#include "d3dq_fence.h"

struct d3dq_bo;
struct d3dq_fence_cond;
struct d3dq_fence_qsignal;
struct d3dq_hw_fence;
struct d3dq_publish;
struct d3dq_queue;
struct drm_device;
struct drm_file;

/* A validated command, with references to the buffers it uses. */
struct d3dq_cmd {
	u32 op;
	struct d3dq_bo *dst;
	struct d3dq_bo *src;
	u64 dst_offset;
	u64 src_offset;
	u64 size;
	u64 a;
	u64 b;
};

/**
 * struct d3dq_release_fence - A dependency that userspace may end early.
 *
 * What a job waits for instead of @waited when the wait carries
 * %DRM_D3DQ_SYNC_RELEASABLE: it signals at the earlier of @waited
 * signalling and %DRM_D3DQ_WAIT_RELEASE naming the wait, so never later
 * than @waited and never because of anything else userspace must do.
 */
struct d3dq_release_fence {
	struct dma_fence base;		/* freed after an RCU grace period */
	spinlock_t lock;
	struct dma_fence_cb cb;		/* on @waited, holds a reference */
	struct dma_fence *waited;	/* reference */
	/*
	 * Signalled by a release (WAIT_RELEASE, or the fence value a fence
	 * wait waited for), not by @waited; under @lock.
	 */
	bool released;
	/*
	 * Signal with @waited's error when @waited signals first: an
	 * exported fence value (uapi 1.7), which stands for @waited's job
	 * alone. A job's wait checks its dependencies' errors itself.
	 */
	bool propagate;
};

/*
 * Fence signals a %DRM_D3DQ_SUBMIT_TAIL submit holds without allocating
 * an array: the library's Signal has one.
 */
#define D3DQ_TAIL_INLINE	2

/* The fence signals of one %DRM_D3DQ_SUBMIT_TAIL submit a job took on. */
struct d3dq_tail {
	struct list_head link;		/* in d3dq_job.tails */
	struct d3dq_fence_qsignal *fsignals;	/* @inline_fs, or allocated */
	u32 nfsignals;
	u64 bytes;			/* counted in the job's bytes */
	struct d3dq_fence_qsignal inline_fs[D3DQ_TAIL_INLINE];
};

/* Tail submits one job takes at most; then they make jobs. */
#define D3DQ_TAIL_MAX	8

/* A wait of a job, kept for debugfs and for the dependency error check. */
struct d3dq_wait {
	u32 handle;
	u32 flags;
	u64 point;
	/* NULL for a fence wait satisfied at submit (no dependency). */
	struct dma_fence *fence;
	/* Releasable wait, or fence wait on a pending signal; or NULL. */
	struct d3dq_release_fence *release;
	/* A fence wait on a pending signal: its node on the fence. */
	struct d3dq_fence_cond *cond;
};

/* Bits of d3dq_job.flags. */
enum {
	D3DQ_JOB_F_PENDING,	/* counted in d3dq_queue.pending */
	D3DQ_JOB_F_BUSY,	/* counted in its queue's idle word */
};

enum d3dq_job_state {
	D3DQ_JOB_QUEUED,	/* waiting for dependencies or its turn */
	D3DQ_JOB_RUNNING,	/* owned by the engine */
	D3DQ_JOB_DONE,		/* hardware fence signalled */
};

/**
 * struct d3dq_job - A job: waits, a command stream, signals.
 */
struct d3dq_job {
	struct drm_sched_job base;
	struct d3dq_queue *queue;	/* holds a reference */
	/* In d3dq_queue.jobs, or d3dq_queue.held while held. */
	struct list_head link;
	enum d3dq_job_state state;	/* under queue->lock */
	unsigned long flags;		/* D3DQ_JOB_F_* bits, atomic */

	struct d3dq_hw_fence *hw;	/* preallocated at submit */
	u64 seqno;			/* its number in the queue, from 1 */
	u64 file_seqno;			/* &drm_d3dq_submit.seqno */
	/*
	 * Run inside SUBMIT or, held, inside the CPU signal that released
	 * it (d3dq_queue_arm_now()); never armed (d3dq_job_claim_direct()).
	 */
	bool direct;
	/*
	 * Short, nothing before it, the engine busy: made the queue's running
	 * job and ready at SUBMIT, its hardware fence published in place of
	 * the finished fence; armed and pushed as any other, run_job only
	 * hands that fence to the scheduler (d3dq_job_claim_early()).
	 */
	bool early;
	/*
	 * Without commands or buffers, completed where it would have run
	 * (d3dq_job_start()): its signals set, no engine, no hardware
	 * fence (never initialised), never armed. Also @direct.
	 */
	bool marker;
	/*
	 * Held (uapi 1.5): on the queue's @held list, not armed; what its
	 * arming will publish (signal points, buffers). See "Held jobs"
	 * in Documentation/driver.rst.
	 */
	bool held;
	struct d3dq_publish *publish;
	/*
	 * %DRM_D3DQ_SUBMIT_IMPLICIT (uapi 1.12): when armed, the job waits
	 * for other drivers' fences in its buffers (d3dq_publish.c).
	 */
	bool implicit;

	/* Memory counted against the file (d3dq_job_set_bytes()). */
	u64 bytes;
	bool charged;			/* counted in the file's job_bytes */

	struct d3dq_wait *waits;
	u32 nwaits;
	/*
	 * A job of carried waits (uapi 1.8, &d3dq_queue.carried): one
	 * fence for all its waits' dependencies (a join fence for several),
	 * or NULL; the job that takes the waits depends on it.
	 */
	struct dma_fence *carry_dep;
	/*
	 * On @carry_dep while the waits are carried (@carry_cb_set): its
	 * signal has the queue's arming work free them if they are all
	 * satisfied, so that they hold no room until the queue's next job.
	 */
	struct dma_fence_cb carry_cb;
	bool carry_cb_set;

	/* Fence signals, set when the job completes (uapi 1.4). */
	struct d3dq_fence_qsignal *fsignals;
	u32 nfsignals;
	/*
	 * Signals of %DRM_D3DQ_SUBMIT_TAIL submits it took on (uapi 1.8,
	 * &struct d3dq_tail), @ntails of them, added under queue->lock
	 * until @ended; then set by d3dq_job_signal() with its own, or
	 * not if @end_err.
	 */
	struct list_head tails;
	u32 ntails;
	bool ended;
	int end_err;

	struct d3dq_cmd *cmds;
	u32 ncmds;

	/* Engine state: next command and end of the current delay. */
	u32 pc;
	u64 cmd_done;			/* bytes of a COPY or FILL done */
	bool delaying;
	ktime_t delay_end;
	/*
	 * The job's own engine time (under queue->lock), what the job
	 * timeout and fdinfo count: its steps, and its DELAYs while no step
	 * of it runs, never its waits for a turn on the shared engine.
	 * @ran_ns is what ended; @since is when the part being counted now
	 * began: the running step (@stepping) or the DELAY (@delaying).
	 */
	u64 ran_ns;
	ktime_t since;
	bool stepping;
	/*
	 * A timeout fired before the job had run its time: the scheduler
	 * dropped it from its list, and the engine's watchdog times it
	 * (under queue->lock).
	 */
	bool orphan;
	/*
	 * Error to stop with: written under queue->lock, read by the
	 * engine between chunks without it.
	 */
	int cancel;

	/* Freeing, in the cleanup worker. */
	struct dma_fence_cb finished_cb;
	struct llist_node free_node;
};

static inline struct d3dq_job *to_d3dq_job(struct drm_sched_job *job)
{
	return container_of(job, struct d3dq_job, base);
}

/*
 * The job's number in traces, debugfs and messages: it counts the jobs
 * submitted to its queue from 1, those the scheduler runs and those run
 * inside SUBMIT alike.
 */
static inline u64 d3dq_job_seqno(struct d3dq_job *job)
{
	return job->seqno;
}

extern const struct drm_sched_backend_ops d3dq_sched_ops;

struct d3dq_job *d3dq_job_create(struct d3dq_queue *queue,
				 struct drm_file *file, bool carrier);
void d3dq_job_set_bytes(struct d3dq_job *job, u32 cmd_bytes);
struct dma_fence *d3dq_job_arm(struct d3dq_job *job);
/*
 * What SUBMIT (or a CPU signal arming a held job) publishes, with
 * preemption disabled, for a job it runs (d3dq_job_claim_direct()): at
 * most so many signal points and buffers.
 */
#define D3DQ_DIRECT_MAX_SIGNALS	16
#define D3DQ_DIRECT_MAX_BOS	16

bool d3dq_job_nothing_before(struct d3dq_job *job);
bool d3dq_job_claim_direct(struct d3dq_job *job, u32 nsignals, u32 nbos);
void d3dq_job_run_claimed(struct d3dq_job *job);
bool d3dq_job_claim_early(struct d3dq_job *job);
void d3dq_job_push(struct d3dq_job *job);
bool d3dq_job_dependency_failed(struct d3dq_job *job);
u64 d3dq_job_ran_ns(const struct d3dq_job *job, ktime_t now);
s64 d3dq_job_left_ns(const struct d3dq_job *job, ktime_t now);
void d3dq_job_expire_locked(struct d3dq_job *job);
bool d3dq_job_check_timeout_locked(struct d3dq_job *job,
				   unsigned long *left);
void d3dq_job_warn_timeout(struct d3dq_job *job);
void d3dq_job_signal(struct d3dq_job *job, int err);
void d3dq_job_busy(struct d3dq_job *job);
void d3dq_job_finished(struct d3dq_job *job);
void d3dq_job_free(struct d3dq_job *job);
void d3dq_job_free_deferred(struct d3dq_job *job);
void d3dq_job_markers_flush(void);
void d3dq_tail_drop(struct d3dq_tail *tail);
void d3dq_tail_free(struct d3dq_tail *tail);

/* Waits beyond which a job depends on one join fence of them all. */
#define D3DQ_JOIN_MIN	32

struct dma_fence *d3dq_join_fence_create(struct dma_fence **deps, u32 count);

struct d3dq_release_fence *d3dq_release_fence_create(struct dma_fence *waited);
struct d3dq_release_fence *d3dq_release_fence_alloc(void);
void d3dq_release_fence_bind(struct d3dq_release_fence *rf,
			     struct dma_fence *waited);
bool d3dq_release_fence_rebind(struct d3dq_release_fence *rf,
			       struct dma_fence *waited);
void d3dq_release_fence_discard(struct d3dq_release_fence *rf);
void d3dq_release_fence_signal(struct d3dq_release_fence *rf, bool released);
void d3dq_release_fence_release(struct d3dq_release_fence *rf);
void d3dq_release_fence_put(struct d3dq_release_fence *rf);

/* d3dq_submit.c */
int d3dq_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file);
int d3dq_ioctl_wait_release(struct drm_device *drm, void *data,
			    struct drm_file *file);

/* d3dq_publish.c */
void d3dq_publish_free(struct d3dq_publish *publish);

/* d3dq_arm.c */
bool d3dq_job_hold_ready(struct d3dq_job *job);
void d3dq_queue_arm_held(struct work_struct *work);
void d3dq_queue_arm_now(struct d3dq_queue *queue, struct d3dq_file *dfile);
void d3dq_queue_drop_held(struct d3dq_queue *queue);

#endif /* _D3DQ_JOB_H_ */
