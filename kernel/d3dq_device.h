/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq devices and open files: a virtual DRM render node with in-order
 * software queues; module parameters and live object counts.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_DEVICE_H_
#define _D3DQ_DEVICE_H_

#include <linux/atomic.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_vma_manager.h>
#include <drm/d3dq_drm.h>

#include "d3dq_compat.h"
#include "d3dq_engine.h"

struct d3dq_usage;
struct drm_file;
struct drm_minor;
struct platform_device;

#define D3DQ_DRIVER_NAME	"d3dq"
#define D3DQ_DRIVER_DESC	"Virtual in-order queues with syncobj timelines"
/*
 * DRM_IOCTL_VERSION reports the uapi version, which the uapi header
 * defines: one number, not two to keep in step.
 */
#define D3DQ_DRIVER_MAJOR	DRM_D3DQ_UAPI_MAJOR
#define D3DQ_DRIVER_MINOR	DRM_D3DQ_UAPI_MINOR

/*
 * Memory allocated for userspace that outlives the ioctl (files, queues,
 * jobs, buffers): charged to the caller's memory cgroup, and when that
 * is at its limit the ioctl fails with -ENOMEM, without warning and
 * without waking the cgroup's OOM killer. Sizes are often chosen by
 * userspace.
 */
#define D3DQ_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/* Module parameters, read-only once the module is loaded. */
extern unsigned int d3dq_max_queues;
extern unsigned int d3dq_max_syncs;
extern unsigned int d3dq_max_cmd_bytes;
extern unsigned int d3dq_max_pending_jobs;
extern unsigned int d3dq_job_timeout_ms;
extern unsigned long long d3dq_max_delay_ns;
extern unsigned long long d3dq_max_bo_size;
extern unsigned long long d3dq_max_file_job_bytes;
extern bool d3dq_direct_submit;
extern unsigned int d3dq_engine_pause_us;
#define D3DQ_ENGINE_PAUSE_MAX_US	1000u
extern unsigned int d3dq_max_user_queues;
extern unsigned int d3dq_max_user_jobs;
extern unsigned int d3dq_max_device_queues;
extern unsigned int d3dq_max_user_fences;
extern unsigned int d3dq_max_user_fence_events;
extern unsigned int d3dq_max_user_fence_nodes;
extern unsigned int d3dq_max_file_held_jobs;

/**
 * struct d3dq_workqueues - The module's workqueues, shared by devices.
 *
 * They live from module load to unload, so that nothing queued on them
 * depends on a device that an unbind may release.
 */
struct d3dq_workqueues {
	/* Scheduler work, on kernels whose scheduler takes one (6.12). */
	struct workqueue_struct *sched;
	/* The engines. */
	struct workqueue_struct *engine;
	/* Scheduler timeouts and d3dq's own job watchdogs. */
	struct workqueue_struct *timeout;
	/* Freeing jobs, away from the fence signalling path. */
	struct workqueue_struct *cleanup;
	/* Final queue teardown (scheduler and entity fini). */
	struct workqueue_struct *teardown;
	/* Arming held jobs (uapi 1.5), outside any signalling path. */
	struct workqueue_struct *arm;
	/*
	 * Ordered: syncobj points of event registrations, added in the
	 * order the registrations fired.
	 */
	struct workqueue_struct *events;
};

extern struct d3dq_workqueues d3dq_wq;

/* Objects of the whole module that fences keep alive (debugfs). */
extern atomic_t d3dq_live_hw_fences;
extern atomic_t d3dq_live_scheds;

/**
 * struct d3dq_counters - Live objects of one device, shown in debugfs.
 */
struct d3dq_counters {
	atomic_t files;
	atomic_t queues;
	atomic_t jobs;
	atomic_t bos;
	atomic_t fences;
	atomic_t fence_events;
	atomic_t fence_imports;		/* uapi 1.11, until freed */
};

/**
 * struct d3dq_device - One virtual device, bound to platform device d3dq.N.
 *
 * The structure lives as long as its drm_device: open files and queues
 * hold references, so it outlives an unbind of its platform device.
 */
struct d3dq_device {
	struct drm_device drm;
	struct platform_device *pdev;

	/* The engine the queues share (d3dq_engine.c). */
	struct d3dq_dispatch dispatch;

	/* Open files, for debugfs and unplug. */
	struct mutex files_lock;
	struct list_head files;
	/* The platform device was unbound: no new files (files_lock). */
	bool unplugged;
	/* Schedulers ever created, for their names. */
	atomic_t sched_serial;

	/*
	 * The users (&struct d3dq_user) with a file or a queue of this
	 * device, by kuid (users_lock), and the queues of all of them,
	 * counted against max_device_queues until freed; of those, the
	 * ones destroyed with every job finished, which go without outside
	 * help. QUEUE_CREATE at max_user_queues or max_device_queues waits
	 * on @queue_freed_wq while such queues are being freed.
	 */
	struct mutex users_lock;
	struct xarray users;
	atomic_t queues_alive;
	atomic_t queues_finishing;
	wait_queue_head_t queue_freed_wq;

	/*
	 * Fences (d3dq_fence.c): all of them (fences_lock), for an unplug,
	 * and the mmap offsets of their pages.
	 */
	spinlock_t fences_lock;
	struct list_head fences;
	bool fences_dead;		/* unplugged: no new fence */
	struct drm_vma_offset_manager fence_vma;
	/* A page of ~0, which removed files' mappings show. */
	struct page *fence_ones;

	struct d3dq_counters count;
};

static inline struct d3dq_device *to_d3dq_dev(struct drm_device *drm)
{
	return container_of(drm, struct d3dq_device, drm);
}

/**
 * struct d3dq_user - What one user holds on one device.
 *
 * A user is the effective uid of the process that opened a file. Every
 * file of the user and every queue created through them holds a
 * reference, so what the user made counts until it is freed, whatever
 * the number of files and processes: max_user_queues bounds @queues
 * (and so, on kernels without a submit workqueue, the scheduler threads
 * behind them), max_user_jobs bounds @jobs.
 */
struct d3dq_user {
	struct kref ref;
	struct d3dq_device *ddev;
	kuid_t uid;
	/*
	 * Queues created and not freed yet (destroyed ones included), and
	 * those of them destroyed with every job finished.
	 */
	atomic_t queues;
	atomic_t queues_finishing;
	/* Jobs not freed yet, of all the user's files. */
	atomic_t jobs;
	/* Of those, jobs held (not armed) now. */
	atomic_t jobs_held;
	/* Fences created and not freed yet (max_user_fences). */
	atomic_t fences;
	/* Event registrations not freed yet (max_user_fence_events). */
	atomic_t fence_events;
	/* Nodes of waits on fences not freed yet (max_user_fence_nodes). */
	atomic_t fence_nodes;
	/* Woken when a job of the user is freed. */
	wait_queue_head_t wq;
};

/**
 * struct d3dq_file - Per open file state.
 *
 * Reference counted: the DRM file holds a reference until it is closed,
 * and every queue and buffer created through it holds one until freed,
 * so that what a file made is counted against it as long as it exists
 * (the per-file bounds of uapi.rst).
 */
struct d3dq_file {
	struct kref ref;
	struct d3dq_device *ddev;
	struct d3dq_user *user;		/* holds a reference */
	struct drm_file *drm_file;	/* while on @ddev's list */
	struct list_head link;		/* in d3dq_device.files */

	/* Protects @queues (insertion and removal), @nqueues and @removed. */
	struct mutex lock;
	struct xarray queues;
	u32 nqueues;			/* ids in @queues */
	bool removed;

	/*
	 * Removal (R15, d3dq_file_remove()): @remove_lock serialises
	 * removals and the reads of @removal, the reason of the first one,
	 * 0 until one has finished (fences included).
	 */
	struct mutex remove_lock;
	int removal;
	/*
	 * Removal on loss (uapi 1.6). @loss_lock, a spinlock that the
	 * losing paths (a job's timeout, run_job) take under the queue's
	 * lock, protects @loss_reason (the first loss of a queue of the
	 * file that was not destroyed, armed or not), @loss_armed,
	 * @loss_claimed (a removal for that loss was queued or started:
	 * once) and @loss_closed (the file is being closed: queue nothing).
	 * @loss_work removes the file, away from the signalling paths.
	 */
	spinlock_t loss_lock;
	int loss_reason;
	bool loss_armed;
	bool loss_claimed;
	bool loss_closed;
	struct work_struct loss_work;

	/*
	 * Queues created and not freed yet (destroyed ones included), and
	 * those of them destroyed with every job finished, which go
	 * without outside help. QUEUE_CREATE counts the former against
	 * max_queues and waits for the latter.
	 */
	atomic_t queues_alive;
	atomic_t queues_finishing;

	/* Jobs not freed yet and the memory they hold (job_bytes_lock). */
	spinlock_t job_bytes_lock;
	u32 jobs;
	u64 job_bytes;
	/* Of those, jobs held (not armed) now: fdinfo d3dq-jobs-held. */
	atomic_t jobs_held;

	/* Buffers created through the file and not freed yet. */
	atomic_t bos;
	atomic64_t bo_bytes;

	/* Woken when a queue or a job of the file is freed, or stopped. */
	wait_queue_head_t wq;

	/* fdinfo counters and client id; queues hold references too. */
	struct d3dq_usage *usage;

	/* Last job number handed out (&drm_d3dq_submit.seqno). */
	atomic64_t job_seqno;

	/*
	 * Fences (d3dq_fence.c): handles (&struct d3dq_fence_handle), the
	 * pages the file's fences that are not shared live in, and whether
	 * the file's removal reached the fences. @fence_lock protects
	 * @fence_pages, handle creation and destruction, and the setting of
	 * @fences_removed (also under @fence_view_lock, which orders it
	 * against what the file's mappings of fence pages show).
	 */
	struct mutex fence_lock;
	struct mutex fence_view_lock;	/* see above */
	struct xarray fences;
	u32 fence_next;			/* xa_alloc_cyclic(), fence_lock */
	struct list_head fence_pages;
	bool fences_removed;
	/*
	 * The file's armed jobs' fence signals that have not taken effect
	 * (&struct d3dq_fence_qsignal) and its held jobs' fence waits not
	 * bound to one (&struct d3dq_fence_node), each an rbtree by fence,
	 * then value: what a submit of this file binds its waits to, and
	 * what an armed signal of this file binds. @fence_jobs_lock, taken
	 * under the fence's lock (interrupts off) of the entries it
	 * touches, protects both.
	 */
	spinlock_t fence_jobs_lock;
	struct rb_root fence_signals;
	struct rb_root fence_held;
	/*
	 * Event registrations of the file with %DRM_D3DQ_FENCE_EVENT_ARMED
	 * (uapi 1.11) whose value no armed signal of the file brings yet: a
	 * tree by fence, then value, like @fence_held, under
	 * @fence_jobs_lock; an armed signal fires those it brings.
	 */
	struct rb_root fence_armed;
	/*
	 * Pending signals of other drivers' work made through the file
	 * (&struct d3dq_fence_import, uapi 1.11), under
	 * @fence_imports_lock: cancelled by the file's close or removal.
	 */
	spinlock_t fence_imports_lock;
	struct list_head fence_imports;
};

/* d3dq_drv.c */
void d3dq_file_get(struct d3dq_file *dfile);
void d3dq_file_put(struct d3dq_file *dfile);
void d3dq_file_lost(struct d3dq_file *dfile, int reason);
/* What d3dq_file_charge_job() found. */
enum d3dq_charge {
	D3DQ_CHARGED,		/* the job is counted */
	D3DQ_FILE_FULL,		/* wait on &d3dq_file.wq */
	D3DQ_USER_FULL,		/* wait on &d3dq_user.wq */
};

enum d3dq_charge d3dq_file_charge_job(struct d3dq_file *dfile, u64 bytes);
enum d3dq_charge d3dq_file_charge_jobs(struct d3dq_file *dfile, u32 n,
				       u64 bytes);
void d3dq_file_uncharge_job(struct d3dq_file *dfile, u64 bytes);
void d3dq_file_merge_job(struct d3dq_file *dfile);
bool d3dq_file_charge_bytes(struct d3dq_file *dfile, u64 bytes);
void d3dq_file_uncharge_bytes(struct d3dq_file *dfile, u64 bytes);
bool d3dq_file_job_fits(struct d3dq_file *dfile, u64 bytes);
bool d3dq_user_job_fits(struct d3dq_user *user);
bool d3dq_user_jobs_fit(struct d3dq_user *user, u32 n);
void d3dq_user_get(struct d3dq_user *user);
void d3dq_user_put(struct d3dq_user *user);
int d3dq_user_count_queue(struct d3dq_user *user);
bool d3dq_user_queue_known(struct d3dq_user *user);
void d3dq_user_uncount_queue(struct d3dq_user *user);
void d3dq_user_queue_finishing(struct d3dq_user *user);
void d3dq_user_queue_freed(struct d3dq_user *user);
int d3dq_user_count_fence(struct d3dq_user *user);
void d3dq_user_uncount_fence(struct d3dq_user *user);
int d3dq_user_count_fence_event(struct d3dq_user *user);
void d3dq_user_uncount_fence_event(struct d3dq_user *user);
int d3dq_user_count_fence_nodes(struct d3dq_user *user, u32 n,
				const char *what);
void d3dq_user_uncount_fence_nodes(struct d3dq_user *user, u32 n);
int d3dq_ioctl_get_param(struct drm_device *drm, void *data,
			 struct drm_file *file);
int d3dq_ioctl_remove(struct drm_device *drm, void *data,
		      struct drm_file *file);

/* d3dq_debugfs.c */
void d3dq_debugfs_init(struct drm_minor *minor);

#endif /* _D3DQ_DEVICE_H_ */
