// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fence values set by other drivers' work (uapi 1.11): "set this
 * fence to this value when that dma-fence signals", the dma-fence from a
 * sync_file or a syncobj point.
 *
 * Lifetime: a pending signal (&struct d3dq_fence_import) has two
 * references, its file's list's and its dma-fence callback's. The
 * callback's passes to the work it queues, which frees the signal once
 * the value is written (or was not to be). A cancel (the file's close or
 * removal) takes the list's; if it removes the callback before it ran,
 * it drops the callback's too, else it marks the signal cancelled under
 * the fence's lock, which the write checks under the same lock.
 *
 * Order: the callback, which may run in another driver's interrupt
 * handler with that driver's fence lock held, adds the signal to its
 * fence's lock-free list (the order of those additions is the order of
 * completion) and queues its work. Every write of the fence first
 * writes the values of the signals on that list, in order
 * (d3dq_fence_drain_locked()), so a later signal of a d3dq job or a CPU
 * signal writes after them. The callback writes the first of them
 * itself if it gets the fence's lock at once and no write is in
 * progress, and wakes the CPU waiters and eventfds that value reaches,
 * a batch at most (d3dq_fence_drain_atomic()); the work writes the rest
 * and releases jobs' waits, in process context. A CPU waiter of the
 * value thus needs no worker to wake it.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_fence_internal.h"
#include "d3dq_submit.h"

struct d3dq_fence_import {
	struct dma_fence_cb cb;
	struct dma_fence *waited;	/* reference */
	struct d3dq_fence *fence;	/* reference */
	struct d3dq_file *dfile;	/* reference; its user counts a node */
	refcount_t refs;		/* the list's, the callback's */
	struct list_head flink;		/* dfile->fence_imports */
	struct llist_node lnode;	/* fence->imports_done */
	struct llist_node rnode;	/* d3dq_fence_imports_reaped */
	struct list_head link;		/* fence->imports */
	struct work_struct work;
	u64 value;
	bool cancelled;			/* under the fence's lock */
};

/*
 * Process context. The file goes before the fence: its user is listed in
 * the device, which the fence may hold last (an unplugged device).
 */
static void d3dq_fence_import_put(struct d3dq_fence_import *imp)
{
	if (!refcount_dec_and_test(&imp->refs))
		return;
	d3dq_user_uncount_fence_nodes(imp->dfile->user, 1);
	atomic_dec(&imp->dfile->ddev->count.fence_imports);
	dma_fence_put(imp->waited);
	d3dq_file_put(imp->dfile);
	d3dq_fence_put(imp->fence);
	kfree(imp);
}

/**
 * d3dq_fence_import_write_locked - Write the next value another driver's
 * work brought.
 * @fence: the fence, its lock held, no write in progress on it
 *
 * Takes the signals whose dma-fence signalled since the last look, in
 * that order, and writes the first one not cancelled (a removed fence
 * takes no write). The caller drains that write, then calls this again.
 *
 * Return: whether a signal was taken.
 */
bool d3dq_fence_import_write_locked(struct d3dq_fence *fence)
{
	struct d3dq_fence_import *imp, *tmp;
	struct llist_node *done;

	lockdep_assert_held(&fence->lock);

	done = llist_del_all(&fence->imports_done);
	if (done) {
		done = llist_reverse_order(done);
		llist_for_each_entry_safe(imp, tmp, done, lnode)
			list_add_tail(&imp->link, &fence->imports);
	}
	imp = list_first_entry_or_null(&fence->imports,
				       struct d3dq_fence_import, link);
	if (!imp)
		return false;
	list_del_init(&imp->link);
	/* The work frees it, once this hold of the lock is over. */
	if (!imp->cancelled)
		d3dq_fence_write_locked(fence, imp->value);
	return true;
}

/*
 * Process context: the value is written by now, by whoever wrote first.
 * Arms what the write released, then drops the callback's reference and
 * the list's.
 */
static void d3dq_fence_import_done(struct d3dq_fence_import *imp)
{
	struct d3dq_fence *fence = imp->fence;
	struct d3dq_file *dfile = imp->dfile;
	struct d3dq_fence_kicks kicks = { .count = 0 };
	unsigned long flags;
	bool listed;

	spin_lock_irqsave(&fence->lock, flags);
	d3dq_fence_drain_locked(fence, &flags, 0, &kicks);
	spin_unlock_irqrestore(&fence->lock, flags);
	/*
	 * Held jobs the write released: armed (and run, if small) here, as
	 * a CPU signal's call does, rather than by one more work item.
	 */
	d3dq_fence_kicks_arm(&kicks, dfile);

	spin_lock(&dfile->fence_imports_lock);
	listed = !list_empty(&imp->flink);
	list_del_init(&imp->flink);
	spin_unlock(&dfile->fence_imports_lock);
	if (listed)
		d3dq_fence_import_put(imp);
	d3dq_fence_import_put(imp);
}

static void d3dq_fence_import_work(struct work_struct *work)
{
	d3dq_fence_import_done(container_of(work, struct d3dq_fence_import,
					    work));
}

/*
 * Signals whose callback did all of the write (d3dq_fence_drain_atomic()):
 * only their freeing is left, which one work item does for all of them a
 * little later, rather than waking a worker at once, on the CPUs that the
 * woken waiters are about to run on. FENCE_SIGNAL_ON arms it, in process
 * context: a callback that comes within the delay finds it pending and
 * touches no workqueue or timer in the signaller's call (d3dq_fence_reap()).
 */
#define D3DQ_FENCE_IMPORT_REAP_DELAY	msecs_to_jiffies(10)
static LLIST_HEAD(d3dq_fence_imports_reaped);

static void d3dq_fence_imports_reap(struct work_struct *work)
{
	struct d3dq_fence_import *imp, *tmp;
	struct llist_node *reaped;

	reaped = llist_del_all(&d3dq_fence_imports_reaped);
	llist_for_each_entry_safe(imp, tmp, reaped, rnode) {
		d3dq_fence_import_done(imp);
		cond_resched();
	}
}

static DECLARE_DELAYED_WORK(d3dq_fence_imports_reaper,
			    d3dq_fence_imports_reap);

/**
 * d3dq_fence_imports_flush - Free the signals left to free (module exit).
 *
 * Before the work queues go: the delayed work that frees them may be
 * waiting for its timer.
 */
void d3dq_fence_imports_flush(void)
{
	flush_delayed_work(&d3dq_fence_imports_reaper);
}

/* Arm the reaper if it is not armed: a timer, unless pending already. */
static void d3dq_fence_imports_reap_later(void)
{
	queue_delayed_work(d3dq_wq.cleanup, &d3dq_fence_imports_reaper,
			   D3DQ_FENCE_IMPORT_REAP_DELAY);
}

/*
 * Leave @imp, whose callback did all of the write, to the reaper. If the
 * reaper is pending, its run takes @imp: it clears that bit, with a full
 * barrier, before it empties the list (the workqueue's ordering), as
 * llist_add()'s cmpxchg orders the addition before the test here. Else
 * (the work took longer than the delay since FENCE_SIGNAL_ON) it is
 * armed now.
 */
static void d3dq_fence_reap(struct d3dq_fence_import *imp)
{
	llist_add(&imp->rnode, &d3dq_fence_imports_reaped);
	if (!delayed_work_pending(&d3dq_fence_imports_reaper))
		d3dq_fence_imports_reap_later();
}

/*
 * The dma-fence signalled: any context, the other driver's fence lock
 * held. An error writes nothing. A d3dq fence's lock is held while
 * binding to dma-fences, so this one must not wait for it: the value is
 * written here, and CPU waiters woken, only if the lock is free
 * (d3dq_fence_drain_atomic()). The work finishes the rest and frees the
 * signal.
 */
static void d3dq_fence_import_cb(struct dma_fence *waited,
				 struct dma_fence_cb *cb)
{
	struct d3dq_fence_import *imp =
		container_of(cb, struct d3dq_fence_import, cb);

	if (!waited->error && !dma_fence_chain_contained(waited)->error) {
		llist_add(&imp->lnode, &imp->fence->imports_done);
		if (d3dq_fence_drain_atomic(imp->fence)) {
			d3dq_fence_reap(imp);
			return;
		}
	}
	queue_work(d3dq_wq.cleanup, &imp->work);
}

/* The dma-fence of @args: a sync_file's, or a syncobj's at a point. */
static int d3dq_fence_import_find(struct drm_file *file,
				  const struct drm_d3dq_fence_signal_on *args,
				  struct dma_fence **out)
{
	struct drm_d3dq_sync sync = {
		.handle = args->syncobj,
		.point = args->point,
	};
	struct file *f;

	if (args->flags & DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ)
		return d3dq_find_fence(file, &sync, out);
	f = fget(args->fd);
	if (!f)
		return -EBADF;
	fput(f);
	*out = sync_file_get_fence(args->fd);
	return *out ? 0 : -EINVAL;
}

int d3dq_ioctl_fence_signal_on(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_d3dq_fence_signal_on *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_fence_import *imp;
	struct dma_fence *waited;
	struct d3dq_fence *fence;
	unsigned long flags;
	int ret;

	if (args->flags & ~DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ || args->pad)
		return -EINVAL;
	if (args->flags & DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ ? args->fd :
	    args->syncobj || args->point)
		return -EINVAL;

	fence = d3dq_fence_lookup(dfile, args->handle);
	if (!fence)
		return -ENOENT;
	ret = d3dq_fence_import_find(file, args, &waited);
	if (ret)
		goto err_fence;
	imp = kzalloc(sizeof(*imp), D3DQ_GFP);
	if (!imp) {
		ret = -ENOMEM;
		goto err_waited;
	}
	ret = d3dq_user_count_fence_nodes(dfile->user, 1, "FENCE_SIGNAL_ON");
	if (ret)
		goto err_free;
	INIT_LIST_HEAD(&imp->cb.node);
	INIT_LIST_HEAD(&imp->link);
	INIT_WORK(&imp->work, d3dq_fence_import_work);
	refcount_set(&imp->refs, 2);
	imp->waited = waited;
	imp->fence = fence;
	imp->value = args->value;
	imp->dfile = dfile;
	d3dq_file_get(dfile);
	atomic_inc(&dfile->ddev->count.fence_imports);

	/* Ordered against the file's removal, which cancels what it finds. */
	mutex_lock(&dfile->fence_lock);
	if (dfile->fences_removed || READ_ONCE(fence->removed)) {
		mutex_unlock(&dfile->fence_lock);
		refcount_set(&imp->refs, 1);
		d3dq_fence_import_put(imp);
		return -ENODEV;
	}
	spin_lock(&dfile->fence_imports_lock);
	list_add_tail(&imp->flink, &dfile->fence_imports);
	spin_unlock(&dfile->fence_imports_lock);
	mutex_unlock(&dfile->fence_lock);

	/* Ahead of the callback, which then finds it pending. */
	d3dq_fence_imports_reap_later();
	if (dma_fence_add_callback(waited, &imp->cb, d3dq_fence_import_cb)) {
		/*
		 * Signalled already: written in this call. The signal's
		 * reference to the fence may go with it meanwhile (its work,
		 * and a FENCE_DESTROY of the handle on another thread).
		 */
		d3dq_fence_get(fence);
		d3dq_fence_import_cb(waited, &imp->cb);
		spin_lock_irqsave(&fence->lock, flags);
		d3dq_fence_drain_locked(fence, &flags, 0, NULL);
		spin_unlock_irqrestore(&fence->lock, flags);
		d3dq_fence_put(fence);
	}
	return 0;

err_free:
	kfree(imp);
err_waited:
	dma_fence_put(waited);
err_fence:
	d3dq_fence_put(fence);
	return ret;
}

/**
 * d3dq_fence_imports_cancel - Cancel a file's pending signals of other
 * drivers' work.
 * @dfile: the file, closing or removed (no signal is added any more)
 *
 * A signal whose dma-fence had signalled and whose value was written
 * stays written; the others are never written.
 */
void d3dq_fence_imports_cancel(struct d3dq_file *dfile)
{
	struct d3dq_fence_import *imp;
	unsigned long flags;

	spin_lock(&dfile->fence_imports_lock);
	while ((imp = list_first_entry_or_null(&dfile->fence_imports,
					       struct d3dq_fence_import,
					       flink))) {
		list_del_init(&imp->flink);
		spin_unlock(&dfile->fence_imports_lock);
		if (dma_fence_remove_callback(imp->waited, &imp->cb)) {
			/* The callback never runs: its reference is ours. */
			d3dq_fence_import_put(imp);
		} else {
			spin_lock_irqsave(&imp->fence->lock, flags);
			imp->cancelled = true;
			spin_unlock_irqrestore(&imp->fence->lock, flags);
		}
		d3dq_fence_import_put(imp);
		spin_lock(&dfile->fence_imports_lock);
	}
	spin_unlock(&dfile->fence_imports_lock);
}
