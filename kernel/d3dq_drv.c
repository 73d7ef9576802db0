// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: devices, module parameters, files and the ioctl table.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fdinfo.h"
#include "d3dq_fence.h"
#include "d3dq_gem.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

#define CREATE_TRACE_POINTS
#include "d3dq_trace.h"

#define D3DQ_MAX_DEVICES	16

static unsigned int d3dq_num_devices = 1;
module_param_named(num_devices, d3dq_num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of virtual devices (1-16, default 1)");

unsigned int d3dq_max_queues = 1024;
module_param_named(max_queues, d3dq_max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "Queues per open file (default 1024)");

unsigned int d3dq_max_syncs = 1024;
module_param_named(max_syncs, d3dq_max_syncs, uint, 0444);
MODULE_PARM_DESC(max_syncs, "Waits, and signals, per submit (default 1024)");

unsigned int d3dq_max_cmd_bytes = 65536;
module_param_named(max_cmd_bytes, d3dq_max_cmd_bytes, uint, 0444);
MODULE_PARM_DESC(max_cmd_bytes,
		 "Command stream bytes per submit, multiple of 8 (default 65536)");

unsigned int d3dq_max_pending_jobs = 1024;
module_param_named(max_pending_jobs, d3dq_max_pending_jobs, uint, 0444);
MODULE_PARM_DESC(max_pending_jobs,
		 "Unfinished jobs per queue before submit sleeps (default 1024)");

unsigned int d3dq_job_timeout_ms = 2000;
module_param_named(job_timeout_ms, d3dq_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Job timeout in milliseconds (default 2000)");

unsigned long long d3dq_max_delay_ns = 10ULL * NSEC_PER_SEC;
module_param_named(max_delay_ns, d3dq_max_delay_ns, ullong, 0444);
MODULE_PARM_DESC(max_delay_ns, "Longest DELAY command in ns (default 10 s)");

unsigned long long d3dq_max_bo_size = 64ULL << 20;
module_param_named(max_bo_size, d3dq_max_bo_size, ullong, 0444);
MODULE_PARM_DESC(max_bo_size, "Largest buffer in bytes (default 64 MiB)");

unsigned long long d3dq_max_file_job_bytes = 64ULL << 20;
module_param_named(max_file_job_bytes, d3dq_max_file_job_bytes, ullong, 0444);
MODULE_PARM_DESC(max_file_job_bytes,
		 "Memory the unfreed jobs of one file may hold before SUBMIT sleeps (default 64 MiB)");

/*
 * What one user (the effective uid that opened the files) may hold on
 * one device, whatever the number of its files and processes, and what
 * all users together may: each queue has a scheduler, which on kernels
 * without a submit workqueue is a kernel thread, charged to nobody.
 */
unsigned int d3dq_max_user_queues = 2048;
module_param_named(max_user_queues, d3dq_max_user_queues, uint, 0444);
MODULE_PARM_DESC(max_user_queues,
		 "Queues one user may hold on a device, until freed (default 2048)");

unsigned int d3dq_max_user_jobs = 65536;
module_param_named(max_user_jobs, d3dq_max_user_jobs, uint, 0444);
MODULE_PARM_DESC(max_user_jobs,
		 "Jobs one user may hold on a device, until freed, before SUBMIT sleeps (default 65536)");

unsigned int d3dq_max_device_queues = 8192;
module_param_named(max_device_queues, d3dq_max_device_queues, uint, 0444);
MODULE_PARM_DESC(max_device_queues,
		 "Queues all users together may hold on a device, until freed (default 8192)");

unsigned int d3dq_max_user_fences = 16384;
module_param_named(max_user_fences, d3dq_max_user_fences, uint, 0444);
MODULE_PARM_DESC(max_user_fences,
		 "Fences one user may hold on a device, until freed (default 16384)");

unsigned int d3dq_max_user_fence_events = 65536;
module_param_named(max_user_fence_events, d3dq_max_user_fence_events, uint,
		   0444);
MODULE_PARM_DESC(max_user_fence_events,
		 "Pending fence event registrations and sync_file exports of one user on a device (default 65536)");

unsigned int d3dq_max_file_held_jobs = 16384;
module_param_named(max_file_held_jobs, d3dq_max_file_held_jobs, uint, 0444);
MODULE_PARM_DESC(max_file_held_jobs,
		 "Held jobs and carried waits one open file may have, a part of max_user_jobs (default 16384)");

unsigned int d3dq_max_user_fence_nodes = 262144;
module_param_named(max_user_fence_nodes, d3dq_max_user_fence_nodes, uint,
		   0444);
MODULE_PARM_DESC(max_user_fence_nodes,
		 "Fence values one user may have waited for on a device at once: CPU waits, registrations, exports and jobs' fence waits (default 262144)");

/* Read at every submit: root may change it while the module is loaded. */
bool d3dq_direct_submit = true;
module_param_named(direct_submit, d3dq_direct_submit, bool, 0644);
MODULE_PARM_DESC(direct_submit,
		 "Run a job that nothing stands before inside SUBMIT (default 1)");

/*
 * Read at every step's end: root may change it while the module is
 * loaded. Values above D3DQ_ENGINE_PAUSE_MAX_US act as that.
 */
unsigned int d3dq_engine_pause_us = 20;
module_param_named(engine_pause_us, d3dq_engine_pause_us, uint, 0644);
MODULE_PARM_DESC(engine_pause_us,
		 "Microseconds the engine waits after a step that ended a client's last ready job while others wait (default 20, 0: never, at most 1000)");

/* The module's platform devices, d3dq.0 to d3dq.N-1. */
static struct platform_device *d3dq_pdevs[D3DQ_MAX_DEVICES];

struct d3dq_workqueues d3dq_wq;

static int d3dq_params_check(void)
{
	if (d3dq_num_devices < 1 || d3dq_num_devices > D3DQ_MAX_DEVICES)
		return -EINVAL;
	if (d3dq_max_queues < 1 || d3dq_max_queues > 65536)
		return -EINVAL;
	if (d3dq_max_syncs < 1 || d3dq_max_syncs > 65536)
		return -EINVAL;
	if (d3dq_max_cmd_bytes < 8 || d3dq_max_cmd_bytes > SZ_16M ||
	    d3dq_max_cmd_bytes % 8)
		return -EINVAL;
	if (d3dq_max_pending_jobs < 1 || d3dq_max_pending_jobs > 1 << 20)
		return -EINVAL;
	if (d3dq_job_timeout_ms < 1 || d3dq_job_timeout_ms > 3600 * MSEC_PER_SEC)
		return -EINVAL;
	if (d3dq_max_delay_ns > 3600ULL * NSEC_PER_SEC)
		return -EINVAL;
	if (d3dq_max_bo_size < PAGE_SIZE || d3dq_max_bo_size > SZ_1G)
		return -EINVAL;
	if (d3dq_max_file_job_bytes < SZ_64K ||
	    d3dq_max_file_job_bytes > (64ULL << 30))
		return -EINVAL;
	if (d3dq_max_user_queues < 1 || d3dq_max_user_queues > 1 << 20)
		return -EINVAL;
	if (d3dq_max_user_jobs < 1 || d3dq_max_user_jobs > 1 << 24)
		return -EINVAL;
	if (d3dq_max_device_queues < 1 || d3dq_max_device_queues > 1 << 20)
		return -EINVAL;
	if (d3dq_max_user_fences < 1 || d3dq_max_user_fences > 1 << 24)
		return -EINVAL;
	if (d3dq_max_user_fence_events < 1 ||
	    d3dq_max_user_fence_events > 1 << 24)
		return -EINVAL;
	if (d3dq_max_user_fence_nodes < 1 ||
	    d3dq_max_user_fence_nodes > 1 << 24)
		return -EINVAL;
	if (d3dq_max_file_held_jobs < 1 || d3dq_max_file_held_jobs > 1 << 24)
		return -EINVAL;
	return 0;
}

int d3dq_ioctl_get_param(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_d3dq_get_param *args = data;

	if (args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_D3DQ_PARAM_UAPI_VERSION:
		args->value = (DRM_D3DQ_UAPI_MAJOR << 16) | DRM_D3DQ_UAPI_MINOR;
		break;
	case DRM_D3DQ_PARAM_FEATURES:
		args->value = DRM_D3DQ_FEATURE_TIMELINE |
			      DRM_D3DQ_FEATURE_PRIME |
			      DRM_D3DQ_FEATURE_TIMEOUT |
			      DRM_D3DQ_FEATURE_WAIT_RELEASE |
			      DRM_D3DQ_FEATURE_PRIORITY |
			      DRM_D3DQ_FEATURE_SUBMIT_DONE |
			      DRM_D3DQ_FEATURE_FENCE |
			      DRM_D3DQ_FEATURE_FENCE_SUBMIT |
			      DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ |
			      DRM_D3DQ_FEATURE_FENCE_HOLD |
			      DRM_D3DQ_FEATURE_REMOVE_ON_LOSS |
			      DRM_D3DQ_FEATURE_FENCE_SYNC_FILE |
			      DRM_D3DQ_FEATURE_SUBMIT_CARRY |
			      DRM_D3DQ_FEATURE_SUBMIT_TAIL |
			      DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES |
			      DRM_D3DQ_FEATURE_SUBMIT_SPLIT |
			      DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC |
			      DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON |
			      DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED |
			      DRM_D3DQ_FEATURE_IMPLICIT_SYNC |
			      DRM_D3DQ_FEATURE_SYNC_JOB_ONLY |
			      DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY |
			      DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD;
		break;
	case DRM_D3DQ_PARAM_MAX_QUEUES:
		args->value = d3dq_max_queues;
		break;
	case DRM_D3DQ_PARAM_MAX_SYNCS:
		args->value = d3dq_max_syncs;
		break;
	case DRM_D3DQ_PARAM_MAX_CMD_BYTES:
		args->value = d3dq_max_cmd_bytes;
		break;
	case DRM_D3DQ_PARAM_MAX_PENDING_JOBS:
		args->value = d3dq_max_pending_jobs;
		break;
	case DRM_D3DQ_PARAM_JOB_TIMEOUT_NS:
		args->value = (u64)d3dq_job_timeout_ms * NSEC_PER_MSEC;
		break;
	case DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY:
		args->value = NSEC_PER_SEC;
		break;
	case DRM_D3DQ_PARAM_MAX_DELAY_NS:
		args->value = d3dq_max_delay_ns;
		break;
	case DRM_D3DQ_PARAM_MAX_BO_SIZE:
		args->value = d3dq_max_bo_size;
		break;
	case DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES:
		args->value = d3dq_max_file_job_bytes;
		break;
	case DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES:
		args->value = d3dq_max_user_fence_nodes;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/*
 * DOC: Removal
 *
 * A file is removed (R15) by REMOVE, by an unplug, and from uapi 1.6 by
 * the first loss of one of its queues once userspace armed it with
 * %DRM_D3DQ_REMOVE_ON_LOSS. Each removal first stops every queue of the
 * file (d3dq_file_remove_queues(): the running jobs stopped, waited for,
 * the others cancelled), and only then does every fence read ~0 through
 * the file (d3dq_fence_file_remove(), the file's view only: other
 * holders of a shared fence are not affected), so that nothing reads ~0
 * while a job of the file may still write a buffer. The file's
 * remove_lock serialises removals; the first one's reason is recorded
 * when it has finished, so a query that reports a reason reports a
 * finished removal.
 *
 * A loss happens where nothing may wait for other jobs: in the
 * scheduler's timeout handler, the engine's watchdog or run_job, under
 * the queue's spinlock, inside dma-fence signalling sections. There
 * d3dq_file_lost() only records the loss and, if the file is armed,
 * queues the file's loss_work, once, under its loss_lock; the work
 * removes the file. Arming takes the same lock, so a loss that races
 * it is either seen by the arming (which then removes the file itself)
 * or sees the arming (and queues the work): never neither. Close
 * flushes the work after forbidding new ones, so a removal that was due
 * still takes place.
 */

/* Remove the file (R15), unless @again is false and it was removed. */
static void d3dq_file_remove_locked(struct d3dq_file *dfile, int reason,
				    bool again)
{
	lockdep_assert_held(&dfile->remove_lock);

	if (dfile->removal && !again)
		return;
	/* No job runs any more, then every fence reads ~0 here. */
	d3dq_file_remove_queues(dfile);
	d3dq_fence_file_remove(dfile);
	if (!dfile->removal)
		dfile->removal = reason;
}

static void d3dq_file_loss_work(struct work_struct *work)
{
	struct d3dq_file *dfile = container_of(work, struct d3dq_file,
					       loss_work);
	int reason;

	spin_lock_irq(&dfile->loss_lock);
	reason = dfile->loss_reason;
	spin_unlock_irq(&dfile->loss_lock);

	mutex_lock(&dfile->remove_lock);
	d3dq_file_remove_locked(dfile, reason, false);
	mutex_unlock(&dfile->remove_lock);
}

/**
 * d3dq_file_lost - A queue of the file was lost (not by a removal).
 * @dfile: the queue's file
 * @reason: the loss's reason, -ETIMEDOUT or -ECANCELED
 *
 * Any context, under the queue's lock, in signalling paths: records the
 * first loss and, if the file is armed for removal on loss, queues the
 * removal, once. Allocates nothing and waits for nothing.
 */
void d3dq_file_lost(struct d3dq_file *dfile, int reason)
{
	unsigned long flags;

	spin_lock_irqsave(&dfile->loss_lock, flags);
	if (!dfile->loss_reason)
		dfile->loss_reason = reason;
	if (dfile->loss_armed && !dfile->loss_claimed && !dfile->loss_closed) {
		dfile->loss_claimed = true;
		queue_work(d3dq_wq.teardown, &dfile->loss_work);
	}
	spin_unlock_irqrestore(&dfile->loss_lock, flags);
}

#define D3DQ_REMOVE_FLAGS	(DRM_D3DQ_REMOVE_ON_LOSS | DRM_D3DQ_REMOVE_QUERY)

int d3dq_ioctl_remove(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_remove *args = data;
	bool now;
	int loss;

	if (args->flags & ~D3DQ_REMOVE_FLAGS || args->reason)
		return -EINVAL;

	mutex_lock(&dfile->remove_lock);
	if (!args->flags) {
		d3dq_file_remove_locked(dfile, -ENODEV, true);
	} else if (args->flags & DRM_D3DQ_REMOVE_ON_LOSS) {
		/* A loss before the arming: remove here and now. */
		spin_lock_irq(&dfile->loss_lock);
		dfile->loss_armed = true;
		loss = dfile->loss_reason;
		now = loss && !dfile->loss_claimed;
		if (now)
			dfile->loss_claimed = true;
		spin_unlock_irq(&dfile->loss_lock);
		if (now)
			d3dq_file_remove_locked(dfile, loss, false);
	}
	mutex_unlock(&dfile->remove_lock);

	/* Before 1.6 the structure was left as it was: still so. */
	if (!args->flags)
		return 0;
	/* A removal due to a loss is seen finished (or not due yet). */
	flush_work(&dfile->loss_work);
	mutex_lock(&dfile->remove_lock);
	args->reason = dfile->removal;
	mutex_unlock(&dfile->remove_lock);
	return 0;
}

/* Unplug: the file's removal, whose fences the device's went with. */
static void d3dq_file_unplugged(struct d3dq_file *dfile)
{
	mutex_lock(&dfile->remove_lock);
	if (!dfile->removal)
		dfile->removal = -ENODEV;
	mutex_unlock(&dfile->remove_lock);
}

/*
 * DOC: Per-user bounds
 *
 * A &struct d3dq_user per effective uid and device counts the queues and
 * the jobs of all the files that uid opened, until they are freed, so
 * that opening more files or forking does not raise the bounds. Queues
 * are bounded (max_user_queues, and max_device_queues for all users) and
 * a refusal is final: -EDQUOT or -ENOSPC, which nothing retries. As at
 * the per-file bound, QUEUE_CREATE does not refuse while destroyed
 * queues whose jobs all finished are being freed: it waits for them, so
 * that a program that destroys its queues (or closes its file) and
 * creates as many again is not refused for the teardown's lag. Jobs
 * are bounded (max_user_jobs) as a file's job memory is: SUBMIT sleeps
 * until jobs are freed, which they are in bounded time.
 */

/* Refusals any user can cause: at most 10 messages every 5 s. */
static DEFINE_RATELIMIT_STATE(d3dq_limit_rs, 5 * HZ, 10);

/* Increment @v unless that would take it above @max. */
static bool d3dq_atomic_inc_below(atomic_t *v, unsigned int max)
{
	int old = atomic_read(v);

	do {
		if (old >= (int)max)
			return false;
	} while (!atomic_try_cmpxchg(v, &old, old + 1));
	return true;
}

static void d3dq_warn_limit(struct d3dq_user *user, const char *what,
			    const char *param, unsigned int value)
{
	if (!__ratelimit(&d3dq_limit_rs))
		return;
	drm_warn(&user->ddev->drm, "%s[%d] (uid %u): %s refused, %s (%u) reached\n",
		 current->comm, task_tgid_nr(current),
		 from_kuid(&init_user_ns, user->uid), what, param, value);
}

/* The user of the calling process on @ddev, with a reference; or NULL. */
static struct d3dq_user *d3dq_user_get_current(struct d3dq_device *ddev)
{
	kuid_t uid = current_euid();
	struct d3dq_user *user;

	mutex_lock(&ddev->users_lock);
	user = xa_load(&ddev->users, __kuid_val(uid));
	if (user) {
		kref_get(&user->ref);
		goto out;
	}
	user = kzalloc(sizeof(*user), D3DQ_GFP);
	if (!user)
		goto out;
	kref_init(&user->ref);
	user->ddev = ddev;
	user->uid = uid;
	init_waitqueue_head(&user->wq);
	if (xa_is_err(xa_store(&ddev->users, __kuid_val(uid), user,
			       D3DQ_GFP))) {
		kfree(user);
		user = NULL;
	}
out:
	mutex_unlock(&ddev->users_lock);
	return user;
}

void d3dq_user_get(struct d3dq_user *user)
{
	kref_get(&user->ref);
}

/* The last file, queue and fence of the user are gone (users_lock held). */
static void d3dq_user_release(struct kref *ref)
{
	struct d3dq_user *user = container_of(ref, struct d3dq_user, ref);

	lockdep_assert_held(&user->ddev->users_lock);
	xa_erase(&user->ddev->users, __kuid_val(user->uid));
	WARN_ON(atomic_read(&user->queues) || atomic_read(&user->jobs) ||
		atomic_read(&user->fences) || atomic_read(&user->fence_events) ||
		atomic_read(&user->fence_nodes));
	kfree(user);
}

/* Under users_lock, so that a lookup never finds a user being freed. */
void d3dq_user_put(struct d3dq_user *user)
{
	struct d3dq_device *ddev = user->ddev;

	mutex_lock(&ddev->users_lock);
	kref_put(&user->ref, d3dq_user_release);
	mutex_unlock(&ddev->users_lock);
}

/**
 * d3dq_user_count_queue - Count a queue about to be created.
 * @user: the creating file's user
 *
 * Return: 0; -EDQUOT when the user holds max_user_queues queues, or
 * -ENOSPC when the device holds max_device_queues, and none of them is
 * being freed: final answers, not to be retried until queues are freed;
 * or -EAGAIN (never returned to userspace) when queues at the full
 * bound are being freed: wait until d3dq_user_queue_known(), then try
 * again.
 */
int d3dq_user_count_queue(struct d3dq_user *user)
{
	struct d3dq_device *ddev = user->ddev;
	int user_finishing = atomic_read(&user->queues_finishing);
	int dev_finishing = atomic_read(&ddev->queues_finishing);

	/* Pairs with smp_mb__after_atomic() in d3dq_user_queue_freed(). */
	smp_rmb();
	if (!d3dq_atomic_inc_below(&user->queues, d3dq_max_user_queues)) {
		if (user_finishing)
			return -EAGAIN;
		d3dq_warn_limit(user, "QUEUE_CREATE", "max_user_queues",
				d3dq_max_user_queues);
		return -EDQUOT;
	}
	if (!d3dq_atomic_inc_below(&ddev->queues_alive,
				   d3dq_max_device_queues)) {
		atomic_dec(&user->queues);
		if (dev_finishing)
			return -EAGAIN;
		d3dq_warn_limit(user, "QUEUE_CREATE", "max_device_queues",
				d3dq_max_device_queues);
		return -ENOSPC;
	}
	return 0;
}

/*
 * Whether d3dq_user_count_queue() knows its answer: below each bound, or
 * at it with no queue being freed. Reads the finishing counts first, as
 * d3dq_file_slot_known() does.
 */
bool d3dq_user_queue_known(struct d3dq_user *user)
{
	struct d3dq_device *ddev = user->ddev;
	int user_finishing = atomic_read(&user->queues_finishing);
	int dev_finishing = atomic_read(&ddev->queues_finishing);

	/* Pairs with smp_mb__after_atomic() in d3dq_user_queue_freed(). */
	smp_rmb();
	return (atomic_read(&user->queues) < (int)d3dq_max_user_queues ||
		!user_finishing) &&
	       (atomic_read(&ddev->queues_alive) < (int)d3dq_max_device_queues ||
		!dev_finishing);
}

/* A queue d3dq_user_count_queue() counted is freed (or was not made). */
void d3dq_user_uncount_queue(struct d3dq_user *user)
{
	atomic_dec(&user->ddev->queues_alive);
	atomic_dec(&user->queues);
}

/* A counted queue was destroyed and its jobs all finished. */
void d3dq_user_queue_finishing(struct d3dq_user *user)
{
	atomic_inc(&user->queues_finishing);
	atomic_inc(&user->ddev->queues_finishing);
}

/*
 * A queue d3dq_user_queue_finishing() counted is freed: after
 * d3dq_user_uncount_queue(), so that "none finishing" is never read
 * with a stale count of queues.
 */
void d3dq_user_queue_freed(struct d3dq_user *user)
{
	struct d3dq_device *ddev = user->ddev;

	/* Pairs with smp_rmb() in d3dq_user_count_queue() and _known(). */
	smp_mb__after_atomic();
	atomic_dec(&user->queues_finishing);
	atomic_dec(&ddev->queues_finishing);
	wake_up_all(&ddev->queue_freed_wq);
}

/**
 * d3dq_user_count_fence - Count a fence about to be created.
 * @user: the creating file's user
 *
 * Return: 0, or -EDQUOT when the user holds max_user_fences fences.
 */
int d3dq_user_count_fence(struct d3dq_user *user)
{
	if (!d3dq_atomic_inc_below(&user->fences, d3dq_max_user_fences)) {
		d3dq_warn_limit(user, "FENCE_CREATE", "max_user_fences",
				d3dq_max_user_fences);
		return -EDQUOT;
	}
	return 0;
}

void d3dq_user_uncount_fence(struct d3dq_user *user)
{
	atomic_dec(&user->fences);
}

/**
 * d3dq_user_count_fence_event - Count an event registration or export.
 * @user: the registering (or exporting, uapi 1.7) file's user
 *
 * Return: 0, or -EDQUOT when the user has max_user_fence_events
 * registrations and sync_file exports that were not freed yet.
 */
int d3dq_user_count_fence_event(struct d3dq_user *user)
{
	if (!d3dq_atomic_inc_below(&user->fence_events,
				   d3dq_max_user_fence_events)) {
		d3dq_warn_limit(user, "FENCE_EVENT or FENCE_EXPORT_SYNC_FILE",
				"max_user_fence_events",
				d3dq_max_user_fence_events);
		return -EDQUOT;
	}
	return 0;
}

void d3dq_user_uncount_fence_event(struct d3dq_user *user)
{
	atomic_dec(&user->fence_events);
}

/**
 * d3dq_user_count_fence_nodes - Count the nodes of a wait about to be armed.
 * @user: the waiting file's user
 * @n: how many (fence, value) pairs it lists
 * @what: the ioctl, for the rate-limited message
 *
 * Every node a user can make the kernel hold on a fence counts, whatever
 * the fence and whoever created it: a CPU wait's, a registration's, a
 * sync_file export's and a job's fence wait's (held or not). No bound
 * is per fence, so that no holder can fill one for the others.
 *
 * Return: 0, or -EDQUOT when that would take the user above
 * max_user_fence_nodes.
 */
int d3dq_user_count_fence_nodes(struct d3dq_user *user, u32 n,
				const char *what)
{
	int old = atomic_read(&user->fence_nodes);

	do {
		if (n > d3dq_max_user_fence_nodes ||
		    old > (int)(d3dq_max_user_fence_nodes - n)) {
			d3dq_warn_limit(user, what, "max_user_fence_nodes",
					d3dq_max_user_fence_nodes);
			return -EDQUOT;
		}
	} while (!atomic_try_cmpxchg(&user->fence_nodes, &old, old + n));
	return 0;
}

void d3dq_user_uncount_fence_nodes(struct d3dq_user *user, u32 n)
{
	atomic_sub(n, &user->fence_nodes);
}

bool d3dq_user_job_fits(struct d3dq_user *user)
{
	return d3dq_user_jobs_fit(user, 1);
}

/* Whether @n more jobs fit in the user's max_user_jobs. */
bool d3dq_user_jobs_fit(struct d3dq_user *user, u32 n)
{
	return n <= d3dq_max_user_jobs &&
	       atomic_read(&user->jobs) <= (int)(d3dq_max_user_jobs - n);
}

static void d3dq_file_release(struct kref *ref)
{
	struct d3dq_file *dfile = container_of(ref, struct d3dq_file, ref);

	xa_destroy(&dfile->queues);
	mutex_destroy(&dfile->remove_lock);
	mutex_destroy(&dfile->lock);
	d3dq_usage_put(dfile->usage);
	d3dq_user_put(dfile->user);
	kfree(dfile);
}

void d3dq_file_get(struct d3dq_file *dfile)
{
	kref_get(&dfile->ref);
}

void d3dq_file_put(struct d3dq_file *dfile)
{
	kref_put(&dfile->ref, d3dq_file_release);
}

/*
 * Whether a job of @bytes fits in the file's budget. A job alone is
 * always admitted, so that any job the other limits allow can run.
 */
static bool d3dq_file_job_fits_locked(struct d3dq_file *dfile, u64 bytes)
{
	lockdep_assert_held(&dfile->job_bytes_lock);

	return !dfile->job_bytes ||
	       dfile->job_bytes + bytes <= d3dq_max_file_job_bytes;
}

bool d3dq_file_job_fits(struct d3dq_file *dfile, u64 bytes)
{
	bool fits;

	spin_lock(&dfile->job_bytes_lock);
	fits = d3dq_file_job_fits_locked(dfile, bytes);
	spin_unlock(&dfile->job_bytes_lock);
	return fits;
}

/* Add @n to @v if the sum stays at most @max. */
static bool d3dq_atomic_add_upto(atomic_t *v, u32 n, unsigned int max)
{
	int old = atomic_read(v);

	if (n > max)
		return false;
	do {
		if (old > (int)(max - n))
			return false;
	} while (!atomic_try_cmpxchg(v, &old, old + n));
	return true;
}

/*
 * Count @n jobs of @bytes in all (a split submit's, uapi 1.10) against
 * their file and the file's user, all or none, or say which of them has
 * no room for them (yet).
 */
enum d3dq_charge d3dq_file_charge_jobs(struct d3dq_file *dfile, u32 n,
				       u64 bytes)
{
	enum d3dq_charge ret = D3DQ_CHARGED;

	spin_lock(&dfile->job_bytes_lock);
	if (!d3dq_file_job_fits_locked(dfile, bytes)) {
		ret = D3DQ_FILE_FULL;
	} else if (!d3dq_atomic_add_upto(&dfile->user->jobs, n,
					 d3dq_max_user_jobs)) {
		ret = D3DQ_USER_FULL;
	} else {
		dfile->job_bytes += bytes;
		dfile->jobs += n;
	}
	spin_unlock(&dfile->job_bytes_lock);
	return ret;
}

/*
 * Count a job against its file and the file's user, or say which of them
 * has no room for it (yet).
 */
enum d3dq_charge d3dq_file_charge_job(struct d3dq_file *dfile, u64 bytes)
{
	return d3dq_file_charge_jobs(dfile, 1, bytes);
}

/*
 * Count @bytes more of a job already charged (signals it took on, uapi
 * 1.8), if they fit: whether they did. The job uncharges them.
 */
bool d3dq_file_charge_bytes(struct d3dq_file *dfile, u64 bytes)
{
	bool fits;

	spin_lock(&dfile->job_bytes_lock);
	fits = dfile->job_bytes + bytes <= d3dq_max_file_job_bytes;
	if (fits)
		dfile->job_bytes += bytes;
	spin_unlock(&dfile->job_bytes_lock);
	return fits;
}

void d3dq_file_uncharge_bytes(struct d3dq_file *dfile, u64 bytes)
{
	spin_lock(&dfile->job_bytes_lock);
	dfile->job_bytes -= bytes;
	spin_unlock(&dfile->job_bytes_lock);
	wake_up_all(&dfile->wq);
}

/*
 * A job's waits went to another job of the file, charged already: the
 * bytes stay counted (the other job uncharges them), the job does not.
 */
void d3dq_file_merge_job(struct d3dq_file *dfile)
{
	spin_lock(&dfile->job_bytes_lock);
	dfile->jobs--;
	spin_unlock(&dfile->job_bytes_lock);
	atomic_dec(&dfile->user->jobs);
	wake_up_all(&dfile->wq);
	wake_up_all(&dfile->user->wq);
}

void d3dq_file_uncharge_job(struct d3dq_file *dfile, u64 bytes)
{
	spin_lock(&dfile->job_bytes_lock);
	dfile->job_bytes -= bytes;
	dfile->jobs--;
	spin_unlock(&dfile->job_bytes_lock);
	atomic_dec(&dfile->user->jobs);
	/*
	 * The submitters sleeping at a limit are woken only if there are
	 * any: wq_has_sleeper()'s barrier orders the counts above before
	 * the look, against wait_event()'s queueing before its test.
	 */
	if (wq_has_sleeper(&dfile->wq))
		wake_up_all(&dfile->wq);
	if (wq_has_sleeper(&dfile->user->wq))
		wake_up_all(&dfile->user->wq);
}

static int d3dq_open(struct drm_device *drm, struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile;
	int ret = 0;

	dfile = kzalloc(sizeof(*dfile), D3DQ_GFP);
	if (!dfile)
		return -ENOMEM;
	dfile->usage = d3dq_usage_create(file);
	if (!dfile->usage) {
		kfree(dfile);
		return -ENOMEM;
	}
	dfile->user = d3dq_user_get_current(ddev);
	if (!dfile->user) {
		d3dq_usage_put(dfile->usage);
		kfree(dfile);
		return -ENOMEM;
	}

	kref_init(&dfile->ref);
	dfile->ddev = ddev;
	dfile->drm_file = file;
	mutex_init(&dfile->lock);
	xa_init_flags(&dfile->queues, XA_FLAGS_ALLOC1);
	mutex_init(&dfile->remove_lock);
	spin_lock_init(&dfile->loss_lock);
	INIT_WORK(&dfile->loss_work, d3dq_file_loss_work);
	spin_lock_init(&dfile->job_bytes_lock);
	init_waitqueue_head(&dfile->wq);
	d3dq_fence_file_init(dfile);
	file->driver_priv = dfile;

	mutex_lock(&ddev->files_lock);
	/* An unplug in progress stops the queues of the files it sees. */
	if (ddev->unplugged)
		ret = -ENODEV;
	else
		list_add_tail(&dfile->link, &ddev->files);
	mutex_unlock(&ddev->files_lock);
	if (ret) {
		d3dq_file_put(dfile);
		return ret;
	}
	atomic_inc(&ddev->count.files);
	return 0;
}

static void d3dq_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);
	struct d3dq_file *dfile = file->driver_priv;

	mutex_lock(&ddev->files_lock);
	list_del(&dfile->link);
	mutex_unlock(&ddev->files_lock);
	dfile->drm_file = NULL;

	/* A removal due to a loss still happens; none is queued after. */
	spin_lock_irq(&dfile->loss_lock);
	dfile->loss_closed = true;
	spin_unlock_irq(&dfile->loss_lock);
	flush_work(&dfile->loss_work);

	d3dq_file_destroy_queues(dfile, file);
	d3dq_fence_file_fini(dfile, file);
	/* Queues and buffers still alive keep the rest. */
	d3dq_file_put(dfile);
	atomic_dec(&ddev->count.files);
}

/*
 * Every ioctl runs inside drm_dev_enter()/drm_dev_exit(): drm_ioctl()
 * refuses ioctls once the device is unplugged, and this covers the ones
 * already running, which drm_dev_unplug() then waits for. Those that
 * sleep (SUBMIT on a full queue) are woken by the unplug, which loses
 * every queue first.
 */
#define D3DQ_IOCTL_GUARD(func)						\
static int d3dq_guard_##func(struct drm_device *drm, void *data,	\
			     struct drm_file *file)			\
{									\
	int idx, ret;							\
									\
	if (!drm_dev_enter(drm, &idx))					\
		return -ENODEV;						\
	ret = d3dq_ioctl_##func(drm, data, file);			\
	drm_dev_exit(idx);						\
	return ret;							\
}

D3DQ_IOCTL_GUARD(get_param)
D3DQ_IOCTL_GUARD(bo_create)
D3DQ_IOCTL_GUARD(bo_mmap_offset)
D3DQ_IOCTL_GUARD(queue_create)
D3DQ_IOCTL_GUARD(queue_destroy)
D3DQ_IOCTL_GUARD(queue_get_state)
D3DQ_IOCTL_GUARD(submit)
D3DQ_IOCTL_GUARD(remove)
D3DQ_IOCTL_GUARD(wait_release)
D3DQ_IOCTL_GUARD(fence_create)
D3DQ_IOCTL_GUARD(fence_destroy)
D3DQ_IOCTL_GUARD(fence_export)
D3DQ_IOCTL_GUARD(fence_import)
D3DQ_IOCTL_GUARD(fence_signal)
D3DQ_IOCTL_GUARD(fence_wait)
D3DQ_IOCTL_GUARD(fence_event)
D3DQ_IOCTL_GUARD(fence_export_sync_file)
D3DQ_IOCTL_GUARD(fence_signal_on)

static const struct drm_ioctl_desc d3dq_ioctls[] = {
#define D3DQ_IOCTL(n, func) \
	DRM_IOCTL_DEF_DRV(D3DQ_##n, d3dq_guard_##func, DRM_RENDER_ALLOW)
	D3DQ_IOCTL(GET_PARAM, get_param),
	D3DQ_IOCTL(BO_CREATE, bo_create),
	D3DQ_IOCTL(BO_MMAP_OFFSET, bo_mmap_offset),
	D3DQ_IOCTL(QUEUE_CREATE, queue_create),
	D3DQ_IOCTL(QUEUE_DESTROY, queue_destroy),
	D3DQ_IOCTL(QUEUE_GET_STATE, queue_get_state),
	D3DQ_IOCTL(SUBMIT, submit),
	D3DQ_IOCTL(REMOVE, remove),
	D3DQ_IOCTL(WAIT_RELEASE, wait_release),
	D3DQ_IOCTL(FENCE_CREATE, fence_create),
	D3DQ_IOCTL(FENCE_DESTROY, fence_destroy),
	D3DQ_IOCTL(FENCE_EXPORT, fence_export),
	D3DQ_IOCTL(FENCE_IMPORT, fence_import),
	D3DQ_IOCTL(FENCE_SIGNAL, fence_signal),
	D3DQ_IOCTL(FENCE_WAIT, fence_wait),
	D3DQ_IOCTL(FENCE_EVENT, fence_event),
	D3DQ_IOCTL(FENCE_EXPORT_SYNC_FILE, fence_export_sync_file),
	D3DQ_IOCTL(FENCE_SIGNAL_ON, fence_signal_on),
#undef D3DQ_IOCTL
};

/* Fence pages have offsets of their own; the rest are buffers. */
static int d3dq_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;

	if (d3dq_fence_mmap_offset(vma->vm_pgoff))
		return d3dq_fence_mmap(file, vma);
	return drm_gem_mmap(filp, vma);
}

static const struct file_operations d3dq_fops = {
	.owner = THIS_MODULE,
	D3DQ_GEM_FOPS_BUT_MMAP
	.mmap = d3dq_mmap,
	D3DQ_FOPS_SHOW_FDINFO
};

static const struct drm_driver d3dq_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE,
	.open = d3dq_open,
	.postclose = d3dq_postclose,
	.ioctls = d3dq_ioctls,
	.num_ioctls = ARRAY_SIZE(d3dq_ioctls),
	.fops = &d3dq_fops,
	/*
	 * PRIME import (uapi 1.12): this device's own buffers come back as
	 * the same object; another driver's dma-buf becomes a shmem object
	 * of its pages, mapped into the kernel through the dma-buf
	 * (d3dq_gem_prime_import()). No dumb_create: every buffer comes
	 * from BO_CREATE or an import, and is mapped.
	 */
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import = d3dq_gem_prime_import,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	D3DQ_DRM_DRIVER_PRIME_MMAP
	.gem_create_object = d3dq_gem_create_object,
	.debugfs_init = d3dq_debugfs_init,
	D3DQ_DRM_DRIVER_SHOW_FDINFO
	.name = D3DQ_DRIVER_NAME,
	.desc = D3DQ_DRIVER_DESC,
	D3DQ_DRM_DRIVER_DATE
	.major = D3DQ_DRIVER_MAJOR,
	.minor = D3DQ_DRIVER_MINOR,
};

/*
 * The device goes with its last reference, after its last queue: the
 * engine's work item may still be finishing the step that ended the
 * last job.
 */
static void d3dq_device_engine_fini(struct drm_device *drm, void *dispatch)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);

	d3dq_dispatch_fini(dispatch);
	WARN_ON(!xa_empty(&ddev->users));
	xa_destroy(&ddev->users);
}

static int d3dq_probe(struct platform_device *pdev)
{
	struct d3dq_device *ddev;
	int ret;

	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ddev = devm_drm_dev_alloc(&pdev->dev, &d3dq_driver,
				  struct d3dq_device, drm);
	if (IS_ERR(ddev))
		return PTR_ERR(ddev);
	ddev->pdev = pdev;
	ret = drmm_mutex_init(&ddev->drm, &ddev->files_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ddev->drm, &ddev->users_lock);
	if (ret)
		return ret;
	xa_init(&ddev->users);
	init_waitqueue_head(&ddev->queue_freed_wq);
	INIT_LIST_HEAD(&ddev->files);
	ret = d3dq_fence_device_init(ddev);
	if (ret)
		return ret;
	d3dq_dispatch_init(&ddev->dispatch, d3dq_wq.engine);
	ret = drmm_add_action_or_reset(&ddev->drm, d3dq_device_engine_fini,
				       &ddev->dispatch);
	if (ret)
		return ret;

	ret = drm_dev_register(&ddev->drm, 0);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, ddev);
	return 0;
}

/*
 * Unbind (sysfs, or module unload): every queue of every open file is
 * lost with -ENODEV as by REMOVE, so no job runs any more and nobody
 * sleeps in an ioctl, then the device is unplugged. Open files stay
 * valid and get -ENODEV; the device structure goes with the last
 * reference (files, queues), the fences its jobs made live on.
 */
static void d3dq_remove(struct platform_device *pdev)
{
	struct d3dq_device *ddev = platform_get_drvdata(pdev);
	struct d3dq_file *dfile;

	mutex_lock(&ddev->files_lock);
	ddev->unplugged = true;
	list_for_each_entry(dfile, &ddev->files, link)
		d3dq_file_remove_queues(dfile);
	mutex_unlock(&ddev->files_lock);
	/* No job runs any more: every fence of the device reads ~0 (R15). */
	d3dq_fence_device_remove(ddev);
	mutex_lock(&ddev->files_lock);
	list_for_each_entry(dfile, &ddev->files, link)
		d3dq_file_unplugged(dfile);
	mutex_unlock(&ddev->files_lock);

	drm_dev_unplug(&ddev->drm);
	platform_set_drvdata(pdev, NULL);
}

static struct platform_driver d3dq_platform_driver = {
	.probe = d3dq_probe,
	D3DQ_PLATFORM_REMOVE(d3dq_remove),
	.driver = {
		.name = D3DQ_DRIVER_NAME,
	},
};

static void d3dq_wq_destroy(struct workqueue_struct **wq)
{
	if (*wq)
		destroy_workqueue(*wq);
	*wq = NULL;
}

/*
 * In the order work flows: a freed job drops its queue, whose teardown
 * stops the queue's scheduler, timeout and engine work.
 */
static void d3dq_wqs_destroy(void)
{
	/* Its batch of fired registrations, whose timer may still run. */
	if (d3dq_wq.cleanup) {
		d3dq_fence_events_flush();
		d3dq_job_markers_flush();
	}
	d3dq_wq_destroy(&d3dq_wq.events);
	d3dq_wq_destroy(&d3dq_wq.cleanup);
	d3dq_wq_destroy(&d3dq_wq.teardown);
	d3dq_wq_destroy(&d3dq_wq.arm);
	d3dq_wq_destroy(&d3dq_wq.sched);
	d3dq_wq_destroy(&d3dq_wq.engine);
	d3dq_wq_destroy(&d3dq_wq.timeout);
}

static int d3dq_wqs_create(void)
{
	/*
	 * The scheduler, engine and timeout workqueues sit in the fence
	 * signalling path, so they must make progress under memory
	 * pressure.
	 */
	if (d3dq_sched_has_submit_wq()) {
		d3dq_wq.sched = alloc_workqueue("d3dq-sched",
						WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
		if (!d3dq_wq.sched)
			goto err;
	}
	/*
	 * Not WQ_HIGHPRI: the engines run work any user can submit, in
	 * bounded steps, one at a time per device, at a normal priority.
	 */
	d3dq_wq.engine = alloc_workqueue("d3dq-engine", WQ_MEM_RECLAIM |
					 WQ_UNBOUND, 0);
	d3dq_wq.timeout = alloc_workqueue("d3dq-timeout",
					  WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	d3dq_wq.cleanup = alloc_workqueue("d3dq-cleanup", WQ_UNBOUND, 0);
	d3dq_wq.teardown = alloc_workqueue("d3dq-teardown", WQ_UNBOUND, 0);
	/*
	 * Held jobs have no fence anyone waits for, reclaim included: the
	 * arming work needs no rescuer, and it allocates nothing either.
	 */
	d3dq_wq.arm = alloc_workqueue("d3dq-arm", WQ_UNBOUND, 0);
	/*
	 * One at a time, in queueing order: a thread that sees one
	 * registration's point must find the points of every registration
	 * that fired before it.
	 */
	d3dq_wq.events = alloc_ordered_workqueue("d3dq-events", 0);
	if (!d3dq_wq.engine || !d3dq_wq.timeout || !d3dq_wq.cleanup ||
	    !d3dq_wq.teardown || !d3dq_wq.arm || !d3dq_wq.events)
		goto err;
	return 0;
err:
	d3dq_wqs_destroy();
	return -ENOMEM;
}

static void d3dq_devices_destroy(void)
{
	unsigned int i;

	for (i = 0; i < D3DQ_MAX_DEVICES; i++) {
		if (d3dq_pdevs[i])
			platform_device_unregister(d3dq_pdevs[i]);
		d3dq_pdevs[i] = NULL;
	}
}

static int __init d3dq_init(void)
{
	struct platform_device *pdev;
	unsigned int i;
	int ret;

	ret = d3dq_params_check();
	if (ret) {
		pr_err("invalid module parameters\n");
		return ret;
	}

	ret = d3dq_wqs_create();
	if (ret)
		return ret;
	ret = platform_driver_register(&d3dq_platform_driver);
	if (ret)
		goto err_wqs;

	/* Registering a device binds it: the driver probes it right away. */
	for (i = 0; i < d3dq_num_devices; i++) {
		pdev = platform_device_register_simple(D3DQ_DRIVER_NAME, i,
						       NULL, 0);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			goto err_devices;
		}
		d3dq_pdevs[i] = pdev;
		if (!platform_get_drvdata(pdev)) {
			ret = -ENODEV;
			goto err_devices;
		}
	}
	return 0;

err_devices:
	d3dq_devices_destroy();
	platform_driver_unregister(&d3dq_platform_driver);
err_wqs:
	d3dq_wqs_destroy();
	return ret;
}

/*
 * Unloading needs every file closed (they pin the module) and every fence
 * released (each hardware fence pins the module until an RCU callback
 * frees it). What remains is work the last frees queued: queue teardown,
 * which may release a device, and the RCU callbacks themselves; and
 * signals of other drivers' work whose freeing waits for a timer.
 */
static void __exit d3dq_exit(void)
{
	d3dq_fence_imports_flush();
	d3dq_devices_destroy();
	platform_driver_unregister(&d3dq_platform_driver);
	d3dq_wqs_destroy();
	/* The RCU callbacks of the last fences (they drop module refs). */
	rcu_barrier();
}

module_init(d3dq_init);
module_exit(d3dq_exit);

MODULE_DESCRIPTION("d3dq: " D3DQ_DRIVER_DESC);
MODULE_AUTHOR("The d3dq authors");
MODULE_LICENSE("GPL");
D3DQ_MODULE_IMPORT_NS_DMA_BUF;
