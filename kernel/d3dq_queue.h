/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq queues: one scheduler and one entity each, and a place on the
 * device's shared engine; the reference-counted schedulers.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_QUEUE_H_
#define _D3DQ_QUEUE_H_

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/gpu_scheduler.h>

#include "d3dq_engine.h"
#include "d3dq_fence.h"

struct d3dq_device;
struct d3dq_file;
struct drm_device;
struct drm_file;

/* Room for a scheduler name, "d3dq15-s4294967295" at most. */
#define D3DQ_SCHED_NAME_LEN	24

/**
 * struct d3dq_sched - The scheduler of one queue.
 *
 * Scheduler fences name their timeline through their scheduler, and they
 * outlive queues: the queue and every hardware fence of its jobs hold a
 * reference (see "Scheduler lifetime" in d3dq_queue.c).
 */
struct d3dq_sched {
	struct drm_gpu_scheduler base;
	struct kref ref;
	/* "d3dq<device>-s<n>": base.name, as long as the scheduler lives. */
	char name[D3DQ_SCHED_NAME_LEN];
};

/**
 * struct d3dq_queue - A queue: one scheduler, one entity, its engine state.
 *
 * References are held by the file (until the queue is destroyed), by
 * every job of the queue and, briefly, by ioctls. The last one queues
 * @teardown_work, which finishes the entity and the scheduler and drops
 * the queue's scheduler reference.
 */
struct d3dq_queue {
	struct kref ref;
	struct d3dq_device *ddev;
	struct d3dq_file *dfile;	/* holds a reference */
	/* Counted in dfile's queues_alive (published with an id). */
	bool counted;
	u32 id;
	u32 type;
	u32 priority;
	/* The process that created the queue, for messages. */
	pid_t client_pid;
	char client_comm[TASK_COMM_LEN];

	/*
	 * Serialises arm+push (the order of jobs in the entity) and the
	 * pending-jobs check against the queue becoming lost or dead.
	 */
	struct mutex submit_lock;
	/* Under submit_lock: jobs submitted, and the last one's fence. */
	u64 njobs;
	struct dma_fence *last;
	/*
	 * Held jobs (uapi 1.5), not armed, in order: changed under
	 * submit_lock and @lock, read under either; @nheld of them (under
	 * submit_lock). @arm_work arms them (d3dq_queue_arm_held()).
	 */
	struct list_head held;
	u32 nheld;
	struct delayed_work arm_work;
	/*
	 * Carried waits (uapi 1.8): jobs never armed, each holding the
	 * waits of one %DRM_D3DQ_SUBMIT_CARRY, for the queue's next job to
	 * take (d3dq_carry_prepare()); under submit_lock and @lock like
	 * @held, @ncarried of them (under submit_lock).
	 */
	struct list_head carried;
	u32 ncarried;
	/*
	 * The job whose fence is @last until it is freed, or NULL (set by
	 * submitters, cleared by the job's free, under @lock): what a
	 * %DRM_D3DQ_SUBMIT_TAIL submit's signals go to (uapi 1.8).
	 */
	struct d3dq_job *tail_job;

	/*
	 * Protects @state, @reason, @dead, @finishing, @jobs, the states of
	 * the jobs and the engine's running job.
	 */
	spinlock_t lock;
	u32 state;
	int reason;
	bool dead;			/* destroyed: refuse new jobs */
	/* Dead with every job finished: counted in queues_finishing. */
	bool finishing;
	struct list_head jobs;		/* not freed yet, in order */

	/* Jobs submitted and not finished; submits wait on @pending_wq. */
	atomic_t pending;
	wait_queue_head_t pending_wq;

	/*
	 * The idle word (uapi 1.15), if asked for: the jobs held or armed
	 * and not finished (%D3DQ_JOB_F_BUSY), plus the carried waits,
	 * plus %D3DQ_QUEUE_GONE once lost, destroyed or a job failed
	 * (@gone). Written with atomic operations only
	 * (d3dq_queue_busy()); freed with the queue.
	 */
	struct d3dq_fence_word idle;
	unsigned long gone;

	struct work_struct teardown_work;

	struct d3dq_sched *sched;
	struct drm_sched_entity entity;
	struct d3dq_engine engine;

	/* The creating file's usage counters (a reference). */
	struct d3dq_usage *usage;
};

/* Keeps the idle word from 0 for good (see struct d3dq_queue). */
#define D3DQ_QUEUE_GONE		((s64)BIT_ULL(32))

/**
 * d3dq_queue_busy - Add @n to the queue's idle word, if it has one.
 * @queue: the queue
 * @n: what is added (a job or carried wait) or taken away, negative
 *
 * Ordered after everything before it (release): whoever reads 0 sees
 * the fence values the work set before it ended. (Increases need no
 * order: they are made by the submitter, whose own later read of the
 * word they precede, or once the word can no longer be 0.)
 */
static inline void d3dq_queue_busy(struct d3dq_queue *queue, s64 n)
{
	atomic64_t *word = (atomic64_t *)queue->idle.value;

	if (!word)
		return;
	/* Release: pairs with the reader's acquire load of 0 (uapi 1.15). */
	atomic64_add_return_release(n, word);
}

int d3dq_ioctl_queue_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_queue_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file);
int d3dq_ioctl_queue_get_state(struct drm_device *drm, void *data,
			       struct drm_file *file);
struct d3dq_queue *d3dq_queue_lookup(struct d3dq_file *dfile, u32 id);
void d3dq_queue_get(struct d3dq_queue *queue);
void d3dq_queue_put(struct d3dq_queue *queue);
void d3dq_queue_idle(struct d3dq_queue *queue);
void d3dq_queue_wake_submitters(struct d3dq_queue *queue);
void d3dq_queue_kick_held(struct d3dq_queue *queue);
void d3dq_queue_set_lost_locked(struct d3dq_queue *queue, int reason);
bool d3dq_queue_is_usable(struct d3dq_queue *queue);
void d3dq_sched_get(struct d3dq_sched *sched);
void d3dq_sched_put(struct d3dq_sched *sched);
void d3dq_queue_gone(struct d3dq_queue *queue);
void d3dq_file_destroy_queues(struct d3dq_file *dfile, struct drm_file *file);
void d3dq_file_remove_queues(struct d3dq_file *dfile);

#endif /* _D3DQ_QUEUE_H_ */
