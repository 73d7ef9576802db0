/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq: a virtual DRM render node with in-order software queues.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_DRV_H_
#define _D3DQ_DRV_H_

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/gpu_scheduler.h>

#include "d3dq_compat.h"

#define D3DQ_DRIVER_NAME	"d3dq"
#define D3DQ_DRIVER_DESC	"Virtual in-order queues with syncobj timelines"
#define D3DQ_DRIVER_MAJOR	1
#define D3DQ_DRIVER_MINOR	0

/* Module parameters, read-only once the module is loaded. */
extern unsigned int d3dq_max_queues;
extern unsigned int d3dq_max_syncs;
extern unsigned int d3dq_max_cmd_bytes;
extern unsigned int d3dq_max_pending_jobs;
extern unsigned int d3dq_job_timeout_ms;
extern unsigned long long d3dq_max_delay_ns;
extern unsigned long long d3dq_max_bo_size;

/**
 * struct d3dq_counters - Live objects of one device, shown in debugfs.
 */
struct d3dq_counters {
	atomic_t files;
	atomic_t queues;
	atomic_t jobs;
	atomic_t bos;
	atomic_t scheds;	/* in use or pooled */
};

/**
 * struct d3dq_device - One virtual device.
 */
struct d3dq_device {
	struct drm_device drm;
	struct platform_device *pdev;

	/* Scheduler work (6.12: submit_wq) and the engine, shared by queues. */
	struct workqueue_struct *sched_wq;
	struct workqueue_struct *engine_wq;
	/* Final queue teardown (scheduler and entity fini). */
	struct workqueue_struct *teardown_wq;

	/* Open files, for debugfs. */
	struct mutex files_lock;
	struct list_head files;

	/* Idle schedulers of destroyed queues (d3dq_queue.c). */
	struct mutex sched_pool_lock;
	struct list_head sched_pool;

	struct d3dq_counters count;
	/* Woken when the last queue of the device is freed. */
	wait_queue_head_t idle_wq;
};

static inline struct d3dq_device *to_d3dq_dev(struct drm_device *drm)
{
	return container_of(drm, struct d3dq_device, drm);
}

/**
 * struct d3dq_file - Per open file state.
 */
struct d3dq_file {
	struct d3dq_device *ddev;
	struct drm_file *drm_file;
	struct list_head link;		/* in d3dq_device.files */

	/* Protects @queues (insertion and removal), @nqueues and @removed. */
	struct mutex lock;
	struct xarray queues;
	u32 nqueues;
	bool removed;
};

/**
 * struct d3dq_bo - A buffer: a pinned, kernel-mapped shmem GEM object.
 */
struct d3dq_bo {
	struct drm_gem_shmem_object base;
	struct iosys_map map;
	void *vaddr;
};

static inline struct d3dq_bo *to_d3dq_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct d3dq_bo, base);
}

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

/* A wait of a job, kept for debugfs and for the dependency error check. */
struct d3dq_wait {
	u32 handle;
	u32 flags;
	u64 point;
	struct dma_fence *fence;
};

enum d3dq_job_state {
	D3DQ_JOB_QUEUED,	/* waiting for dependencies or its turn */
	D3DQ_JOB_RUNNING,	/* owned by the engine */
	D3DQ_JOB_DONE,		/* hardware fence signalled */
};

/**
 * struct d3dq_hw_fence - The fence the engine signals when a job ends.
 */
struct d3dq_hw_fence {
	struct dma_fence base;		/* first: freed with dma_fence_free() */
	spinlock_t lock;
	bool initialized;		/* dma_fence_init() was called */
};

/**
 * struct d3dq_job - A job: waits, a command stream, signals.
 */
struct d3dq_job {
	struct drm_sched_job base;
	struct d3dq_queue *queue;	/* holds a reference */
	struct list_head link;		/* in d3dq_queue.jobs */
	enum d3dq_job_state state;	/* under queue->lock */
	bool pending_counted;		/* still counted in queue->pending */

	struct d3dq_hw_fence *hw;	/* preallocated at submit */

	struct d3dq_wait *waits;
	u32 nwaits;

	struct d3dq_cmd *cmds;
	u32 ncmds;

	/* Engine state: next command and end of the current delay. */
	u32 pc;
	bool delaying;
	ktime_t delay_end;
	int cancel;			/* error to stop with, under queue->lock */
};

static inline struct d3dq_job *to_d3dq_job(struct drm_sched_job *job)
{
	return container_of(job, struct d3dq_job, base);
}

/**
 * struct d3dq_engine - The software engine of one queue.
 *
 * @job is protected by &d3dq_queue.lock.
 */
struct d3dq_engine {
	struct d3dq_job *job;		/* running job, or NULL */
	struct work_struct work;	/* runs @job's commands */
	struct hrtimer timer;		/* end of a DELAY command */
	u64 fence_context;
	u64 seqno;
};

/**
 * struct d3dq_sched - A scheduler, lent to one queue at a time.
 *
 * Scheduler fences name their timeline through their scheduler, and they
 * outlive queues, so schedulers are not freed with their queue: an idle
 * one waits in the device's pool (@link) for the next queue and is freed
 * with the device.
 */
struct d3dq_sched {
	struct drm_gpu_scheduler base;
	struct list_head link;
};

/**
 * struct d3dq_queue - A queue: one scheduler, one entity, one engine.
 *
 * References are held by the file (until the queue is destroyed), by
 * every job of the queue and, briefly, by ioctls. The last one queues
 * @teardown_work, which finishes the entity and returns the scheduler to
 * the device's pool.
 */
struct d3dq_queue {
	struct kref ref;
	struct d3dq_device *ddev;
	u32 id;
	u32 type;
	u32 priority;

	/*
	 * Serialises arm+push (the order of jobs in the entity) and the
	 * pending-jobs check against the queue becoming lost or dead.
	 */
	struct mutex submit_lock;

	/*
	 * Protects @state, @reason, @dead, @jobs, the states of the jobs
	 * and the engine's running job.
	 */
	spinlock_t lock;
	u32 state;
	int reason;
	bool dead;			/* destroyed: refuse new jobs */
	struct list_head jobs;		/* not freed yet, in order */

	/* Jobs submitted and not finished; submits wait on @pending_wq. */
	atomic_t pending;
	wait_queue_head_t pending_wq;

	struct work_struct teardown_work;

	struct d3dq_sched *sched;
	struct drm_sched_entity entity;
	struct d3dq_engine engine;
};

/* d3dq_drv.c */
int d3dq_ioctl_get_param(struct drm_device *drm, void *data,
			 struct drm_file *file);
int d3dq_ioctl_remove(struct drm_device *drm, void *data,
		      struct drm_file *file);

/* d3dq_gem.c */
struct drm_gem_object *d3dq_gem_create_object(struct drm_device *drm,
					      size_t size);
bool d3dq_is_bo(struct drm_gem_object *obj);
int d3dq_ioctl_bo_create(struct drm_device *drm, void *data,
			 struct drm_file *file);
int d3dq_ioctl_bo_mmap_offset(struct drm_device *drm, void *data,
			      struct drm_file *file);

/* d3dq_queue.c */
int d3dq_ioctl_queue_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_queue_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file);
int d3dq_ioctl_queue_get_state(struct drm_device *drm, void *data,
			       struct drm_file *file);
struct d3dq_queue *d3dq_queue_lookup(struct d3dq_file *dfile, u32 id);
void d3dq_queue_put(struct d3dq_queue *queue);
void d3dq_queue_set_lost_locked(struct d3dq_queue *queue, int reason);
bool d3dq_queue_is_usable(struct d3dq_queue *queue);
void d3dq_sched_pool_fini(struct d3dq_device *ddev);
void d3dq_file_destroy_queues(struct d3dq_file *dfile);
void d3dq_file_remove_queues(struct d3dq_file *dfile);
void d3dq_job_finished(struct d3dq_job *job);

/* d3dq_submit.c */
int d3dq_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file);
void d3dq_job_free(struct d3dq_job *job);

/* d3dq_engine.c */
void d3dq_engine_init(struct d3dq_queue *queue);
void d3dq_engine_fini(struct d3dq_queue *queue);
struct dma_fence *d3dq_engine_run(struct d3dq_queue *queue,
				  struct d3dq_job *job);
bool d3dq_engine_cancel(struct d3dq_queue *queue, struct d3dq_job *job,
			int err);
struct d3dq_hw_fence *d3dq_hw_fence_alloc(void);
void d3dq_hw_fence_put(struct d3dq_hw_fence *hw);
extern atomic_t d3dq_live_hw_fences;

/* d3dq_debugfs.c */
void d3dq_debugfs_init(struct drm_minor *minor);

#endif /* _D3DQ_DRV_H_ */
