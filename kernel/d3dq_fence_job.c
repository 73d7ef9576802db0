// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences and jobs: a job's fence signals and fence waits (SUBMIT,
 * uapi 1.4 and 1.5), and fence values exported as sync_files (uapi 1.7),
 * decided like a job's wait.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/file.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_fence_internal.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

/* --- jobs' fence signals and waits (SUBMIT, uapi 1.4) ------------------ */

/**
 * d3dq_fence_qsignal_init - Resolve a fence signal of a job being submitted.
 * @dfile: the submitting file
 * @handle: the fence's handle in it
 * @value: the value to set
 * @qs: the signal, in the job
 *
 * Return: 0, or -ENOENT for an unknown handle.
 */
int d3dq_fence_qsignal_init(struct d3dq_file *dfile, u32 handle, u64 value,
			    struct d3dq_fence_qsignal *qs)
{
	RB_CLEAR_NODE(&qs->rb);
	INIT_LIST_HEAD(&qs->bound);
	qs->done = NULL;
	qs->fence = d3dq_fence_lookup(dfile, handle);
	if (!qs->fence)
		return -ENOENT;
	qs->dfile = dfile;
	qs->value = value;
	return 0;
}

/*
 * A file's jobs' fence signals and held waits are trees by fence, then
 * value (see &struct d3dq_file): a submit or an arming of the file finds
 * what it binds in O(log n) for each, never walking what other
 * files listed on a shared fence.
 */
static int d3dq_fence_key_cmp(const struct d3dq_fence *fa, u64 va,
			      const struct d3dq_fence *fb, u64 vb)
{
	if (fa != fb)
		return (unsigned long)fa < (unsigned long)fb ? -1 : 1;
	return va < vb ? -1 : va > vb;
}

static bool d3dq_fence_qsignal_less(struct rb_node *a,
				    const struct rb_node *b)
{
	const struct d3dq_fence_qsignal *x =
		rb_entry(a, struct d3dq_fence_qsignal, rb);
	const struct d3dq_fence_qsignal *y =
		rb_entry(b, struct d3dq_fence_qsignal, rb);

	return d3dq_fence_key_cmp(x->fence, x->value, y->fence, y->value) < 0;
}

static bool d3dq_fence_held_less(struct rb_node *a, const struct rb_node *b)
{
	const struct d3dq_fence_node *x =
		rb_entry(a, struct d3dq_fence_node, hrb);
	const struct d3dq_fence_node *y =
		rb_entry(b, struct d3dq_fence_node, hrb);

	return d3dq_fence_key_cmp(x->fence, x->value, y->fence, y->value) < 0;
}

/*
 * The pending signal of @dfile on @fence with the largest value (of
 * equal ones, the last armed), or NULL; the fence's lock and the file's
 * fence_jobs_lock held.
 */
static struct d3dq_fence_qsignal *
d3dq_fence_qsignal_highest(struct d3dq_file *dfile, struct d3dq_fence *fence)
{
	struct rb_node *rb = dfile->fence_signals.rb_node;
	struct d3dq_fence_qsignal *qs, *found = NULL;

	while (rb) {
		qs = rb_entry(rb, struct d3dq_fence_qsignal, rb);
		if ((unsigned long)qs->fence > (unsigned long)fence) {
			rb = rb->rb_left;
			continue;
		}
		if (qs->fence == fence)
			found = qs;
		rb = rb->rb_right;
	}
	return found;
}

/*
 * Take off @root, a file's @fence_held or @fence_armed (both locks
 * held), its node on @fence with the lowest value (of equal ones, the
 * first listed) if that value is at most @value, or return NULL.
 */
static struct d3dq_fence_node *
d3dq_fence_tree_take(struct rb_root *root, struct d3dq_fence *fence,
		     u64 value)
{
	struct rb_node *rb = root->rb_node;
	struct d3dq_fence_node *node, *found = NULL;

	while (rb) {
		node = rb_entry(rb, struct d3dq_fence_node, hrb);
		if ((unsigned long)node->fence < (unsigned long)fence) {
			rb = rb->rb_right;
			continue;
		}
		if (node->fence == fence)
			found = node;
		rb = rb->rb_left;
	}
	if (!found || found->value > value)
		return NULL;
	rb_erase(&found->hrb, root);
	RB_CLEAR_NODE(&found->hrb);
	return found;
}

/*
 * A held wait, or a registration waiting for an armed signal, leaves its
 * file's tree: it was bound, satisfied or released (the fence's lock
 * held).
 */
void d3dq_fence_held_unlist(struct d3dq_fence_node *node)
{
	struct d3dq_file *dfile = node->fh->dfile;

	spin_lock(&dfile->fence_jobs_lock);
	rb_erase(&node->hrb, node->cond->armed ? &dfile->fence_armed :
						 &dfile->fence_held);
	RB_CLEAR_NODE(&node->hrb);
	spin_unlock(&dfile->fence_jobs_lock);
}

/*
 * The registration with %DRM_D3DQ_FENCE_EVENT_ARMED of @node, whose value
 * is not reached, is being armed (the fence's lock held): whether an
 * armed signal of its file brings the value already (then the caller
 * fires it), else it waits in the file's tree for one.
 */
bool d3dq_fence_armed_list(struct d3dq_fence_node *node)
{
	struct d3dq_file *dfile = node->fh->dfile;
	struct d3dq_fence_qsignal *qs;
	bool brought;

	spin_lock(&dfile->fence_jobs_lock);
	qs = d3dq_fence_qsignal_highest(dfile, node->fence);
	brought = qs && qs->value >= node->value;
	if (!brought)
		rb_add(&node->hrb, &dfile->fence_armed, d3dq_fence_held_less);
	spin_unlock(&dfile->fence_jobs_lock);
	return brought;
}

/*
 * The registrations with %DRM_D3DQ_FENCE_EVENT_ARMED of @dfile on
 * @fence that an armed signal of @value brings fire, lowest first, as a
 * change of their own (both locks held).
 */
static void d3dq_fence_armed_fire(struct d3dq_file *dfile,
				  struct d3dq_fence *fence, u64 value)
{
	struct d3dq_fence_node *node;
	bool changed = false;

	while ((node = d3dq_fence_tree_take(&dfile->fence_armed, fence,
					    value))) {
		if (!changed)
			d3dq_fence_change_locked(fence);
		changed = true;
		d3dq_fence_node_done(node);
	}
}

/**
 * d3dq_fence_qsignal_arm - The signal's job is armed: list the signal.
 * @qs: the signal
 * @done: the job's fence (finished fence, or hardware fence of a job run
 *	  inside SUBMIT), which fence waits of the same file may depend on
 *
 * Called before the job can run, so the job's completion finds it listed.
 * Fence waits of held jobs of the same file (d3dq_fence_qwait_create()
 * with a queue) that the signal brings are bound to @done here, and
 * their queues' arming work queued.
 */
void d3dq_fence_qsignal_arm(struct d3dq_fence_qsignal *qs,
			    struct dma_fence *done)
{
	struct d3dq_fence *fence = qs->fence;
	struct d3dq_file *dfile = qs->dfile;
	struct d3dq_fence_node *node;
	struct d3dq_fence_cond *cond;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	spin_lock(&dfile->fence_jobs_lock);
	qs->done = done;
	rb_add(&qs->rb, &dfile->fence_signals, d3dq_fence_qsignal_less);
	/*
	 * Held fence waits of this file that the signal brings depend on
	 * its job from now: their jobs may be armed. They leave the file's
	 * tree, bound; the lowest first.
	 */
	while ((node = d3dq_fence_tree_take(&dfile->fence_held, fence,
					    qs->value))) {
		cond = node->cond;
		if (cond->release->waited)
			continue;
		d3dq_release_fence_bind(cond->release, done);
		node->bound_to = qs;
		list_add_tail(&node->blink, &qs->bound);
		d3dq_queue_kick_held(cond->queue);
	}
	/* And registrations that wait for such a signal (uapi 1.11). */
	d3dq_fence_armed_fire(dfile, fence, qs->value);
	spin_unlock(&dfile->fence_jobs_lock);
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * @qs's job ends without writing (the fence's lock and the file's
 * fence_jobs_lock held, @qs out of the file's tree, its job's fence not
 * signalled yet), or wrote to a removed fence: a wait of the file bound
 * to it is satisfied by any signal that reaches its value, so each is
 * bound to the file's pending signal with the largest value if that
 * brings it, and fails with the job only if none does. An export keeps
 * its job (it is never on @qs->bound): its sync_file stands for that
 * job's signal (uapi 1.7).
 */
static void d3dq_fence_qsignal_rebind(struct d3dq_fence_qsignal *qs)
{
	struct d3dq_fence_qsignal *next;
	struct d3dq_fence_node *node;

	next = d3dq_fence_qsignal_highest(qs->dfile, qs->fence);
	while ((node = list_first_entry_or_null(&qs->bound,
						struct d3dq_fence_node,
						blink))) {
		list_del_init(&node->blink);
		node->bound_to = NULL;
		if (!next || next->value < node->value ||
		    !d3dq_release_fence_rebind(node->cond->release,
					       next->done))
			continue;
		node->bound_to = next;
		list_add_tail(&node->blink, &next->bound);
	}
}

/**
 * d3dq_fence_qsignal_end - The signal's job has ended.
 * @qs: the signal, listed
 * @write: the job completed: set the fence to the signal's value
 *
 * Called from the job's completion, after its memory writes and before
 * its fence signals, in the signalling path: allocates nothing and
 * sleeps nowhere (d3dq_fence_write_locked()). Jobs of several queues
 * complete in some order, and the fence's lock orders their writes: the
 * last one to complete sets the value.
 */
void d3dq_fence_qsignal_end(struct d3dq_fence_qsignal *qs, bool write)
{
	struct d3dq_fence *fence = qs->fence;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	/*
	 * A write in progress ends first; the signal stays pending until
	 * its own value is stored, so that a wait decided meanwhile binds
	 * to it (d3dq_fence_bind()).
	 */
	d3dq_fence_drain_locked(fence, &flags, 0, NULL);
	if (!RB_EMPTY_NODE(&qs->rb)) {
		spin_lock(&qs->dfile->fence_jobs_lock);
		rb_erase(&qs->rb, &qs->dfile->fence_signals);
		RB_CLEAR_NODE(&qs->rb);
		spin_unlock(&qs->dfile->fence_jobs_lock);
	}
	if (write)
		d3dq_fence_drain_locked(fence, &flags,
					d3dq_fence_write_locked(fence,
								qs->value),
					NULL);
	/*
	 * The write satisfied every wait bound to it, unless the fence was
	 * removed; the waits of a job that failed are bound again.
	 */
	if (!list_empty(&qs->bound)) {
		spin_lock(&qs->dfile->fence_jobs_lock);
		d3dq_fence_qsignal_rebind(qs);
		spin_unlock(&qs->dfile->fence_jobs_lock);
	}
	spin_unlock_irqrestore(&fence->lock, flags);
}

/* The job is freed (process context). */
void d3dq_fence_qsignal_fini(struct d3dq_fence_qsignal *qs)
{
	unsigned long flags;

	if (!qs->fence)
		return;
	/*
	 * An armed job ended, which unlisted it; an unarmed one never was
	 * (@done is set only by arming): nothing to check under the lock.
	 */
	if (!qs->done)
		goto put;
	spin_lock_irqsave(&qs->fence->lock, flags);
	WARN_ON_ONCE(!RB_EMPTY_NODE(&qs->rb));
	WARN_ON_ONCE(!list_empty(&qs->bound));
	spin_unlock_irqrestore(&qs->fence->lock, flags);
put:
	d3dq_fence_put(qs->fence);
}

/* What a fence wait that depends on a job holds, besides its fence. */
size_t d3dq_fence_qwait_bytes(void)
{
	return struct_size_t(struct d3dq_fence_cond, nodes, 1);
}

/*
 * The decision of d3dq_fence_qwait_create(), also for an export (uapi 1.7):
 * then the node answers to no handle (destroying one does not release
 * it), the release fence takes the signal job's error, and a handle
 * destroyed meanwhile is -ENOENT, not a release.
 */
static int d3dq_fence_bind(struct d3dq_file *dfile, u32 handle, u64 value,
			   struct d3dq_queue *hold, bool export,
			   struct d3dq_fence_cond **condp,
			   struct d3dq_release_fence **rfp,
			   struct dma_fence **waitedp)
{
	struct d3dq_fence_qsignal *qs, *found = NULL;
	struct d3dq_release_fence *rf = NULL;
	struct d3dq_fence_cond *cond = NULL;
	struct d3dq_fence_handle *fh;
	struct d3dq_fence_node *node;
	struct d3dq_fence *fence;
	unsigned long flags;
	int ret = 0;

	*condp = NULL;
	*rfp = NULL;
	*waitedp = NULL;
	fh = d3dq_fence_handle_lookup(dfile, handle);
	if (!fh)
		return -ENOENT;
	fence = fh->fence;
	d3dq_fence_get(fence);
	/* Allocated first: nothing allocates under the fence's lock. */
	cond = kzalloc(d3dq_fence_qwait_bytes(), D3DQ_GFP);
	rf = d3dq_release_fence_alloc();
	if (!cond || !rf) {
		ret = -ENOMEM;
		goto out;
	}
	ret = d3dq_user_count_fence_nodes(dfile->user, 1, export ?
					  "FENCE_EXPORT_SYNC_FILE" : "SUBMIT");
	if (ret)
		goto out;
	cond->user = dfile->user;
	atomic_set(&cond->remaining, 1);
	cond->count = 1;
	node = &cond->nodes[0];
	RB_CLEAR_NODE(&node->rb);
	RB_CLEAR_NODE(&node->hrb);
	INIT_LIST_HEAD(&node->hlink);
	INIT_LIST_HEAD(&node->blink);
	node->cond = cond;
	/* An export answers to no handle; the lookup's reference goes. */
	node->fh = export ? NULL : fh;
	node->fence = fence;
	node->value = value;
	rf->propagate = export;

	spin_lock_irqsave(&fence->lock, flags);
	if (export && (fh->released || d3dq_fence_file_removed(dfile))) {
		spin_unlock_irqrestore(&fence->lock, flags);
		ret = fh->released ? -ENOENT : -ENODEV;
		goto out;
	}
	if (d3dq_fence_node_gone(node) || *fence->value >= value) {
		spin_unlock_irqrestore(&fence->lock, flags);
		goto out;
	}
	spin_lock(&dfile->fence_jobs_lock);
	qs = d3dq_fence_qsignal_highest(dfile, fence);
	if (qs && qs->value >= value)
		found = qs;
	/* Held: nothing published depends on it (see the uapi). */
	if (!found && hold) {
		cond->queue = hold;
		rb_add(&node->hrb, &dfile->fence_held, d3dq_fence_held_less);
	}
	spin_unlock(&dfile->fence_jobs_lock);
	if (!found && !hold) {
		spin_unlock_irqrestore(&fence->lock, flags);
		ret = -ENODATA;
		goto out;
	}
	if (found) {
		*waitedp = dma_fence_get(found->done);
		d3dq_release_fence_bind(rf, found->done);
		if (!export) {
			node->bound_to = found;
			list_add_tail(&node->blink, &found->bound);
		}
	}
	cond->release = rf;
	/* The node has both references; an export only the fence's. */
	d3dq_fence_node_list(node);
	spin_unlock_irqrestore(&fence->lock, flags);
	if (export)
		d3dq_fence_handle_put(fh);
	*condp = cond;
	*rfp = rf;
	return 0;

out:
	if (rf)
		d3dq_release_fence_discard(rf);
	if (cond && cond->user)
		d3dq_user_uncount_fence_nodes(cond->user, 1);
	kfree(cond);
	d3dq_fence_put(fence);
	d3dq_fence_handle_put(fh);
	return ret;
}

/**
 * d3dq_fence_qwait_create - Decide a fence wait of a job being submitted.
 * @dfile: the submitting file
 * @handle: the fence's handle in it
 * @value: the value waited for
 * @hold: the job's queue if the wait may hold the job (uapi 1.5), or NULL
 * @condp: set to the wait's condition, or NULL
 * @rfp: set to the job's dependency for the wait (a reference), or NULL
 * @waitedp: set to the signal job's fence (a reference), or NULL
 *
 * Under the fence's lock, at one moment: if the value is reached (or the
 * fence was removed, or the handle destroyed meanwhile) the wait is
 * satisfied and the job gets no dependency (all three NULL). Otherwise
 * the wait depends on a pending signal of this file that brings at least
 * @value: the most recently armed one (values mostly grow, so it is
 * usually the first one looked at). Any such signal will set its value
 * when its job completes (signals take effect in completion order), and
 * a later lower value does not take that back, since the condition's
 * node, listed in the same critical section, is satisfied by whichever
 * write reaches @value first: the dependency is a release fence that
 * signals at the earlier of that write and the signal job's fence.
 *
 * Otherwise, with @hold (uapi 1.5), the wait holds its job: the node is
 * listed with a release fence bound to nothing, which the first write
 * of a value >= @value signals, or d3dq_fence_qsignal_arm() binds to a
 * signal of this file armed later; either queues @hold's arming work.
 *
 * Return: 0; -ENOENT unknown handle; -ENODATA the value is not reached,
 * no pending signal of this file brings it and @hold is NULL; -ENOMEM.
 */
int d3dq_fence_qwait_create(struct d3dq_file *dfile, u32 handle, u64 value,
			    struct d3dq_queue *hold,
			    struct d3dq_fence_cond **condp,
			    struct d3dq_release_fence **rfp,
			    struct dma_fence **waitedp)
{
	return d3dq_fence_bind(dfile, handle, value, hold, false, condp, rfp,
			       waitedp);
}

/* Free a job's fence wait: unlisted first, so nothing fires it after. */
void d3dq_fence_qwait_free(struct d3dq_fence_cond *cond)
{
	if (!cond)
		return;
	d3dq_fence_cond_unlink(cond);
	d3dq_fence_cond_free(cond);
}

/* --- fence values as sync_files (uapi 1.7) ----------------------------- */

/*
 * struct d3dq_fence_sf - A fence value exported as a sync_file.
 *
 * The sync_file holds the release fence; this holds the condition whose
 * node the value write fires, until the release fence has signalled (by
 * that write or by the signal job's fence, whichever came first): then a
 * work item, not the signalling path, unlinks and frees it.
 */
struct d3dq_fence_sf {
	struct dma_fence_cb cb;		/* on @rf */
	struct work_struct work;
	struct d3dq_fence_cond *cond;
	struct d3dq_release_fence *rf;	/* a reference */
	struct d3dq_file *dfile;	/* counted against its user; a reference */
};

static void d3dq_fence_sf_free(struct work_struct *work)
{
	struct d3dq_fence_sf *sf = container_of(work, struct d3dq_fence_sf,
						work);
	struct d3dq_file *dfile = sf->dfile;

	d3dq_fence_qwait_free(sf->cond);
	d3dq_release_fence_put(sf->rf);
	atomic_dec(&dfile->ddev->count.fence_events);
	d3dq_user_uncount_fence_event(dfile->user);
	d3dq_file_put(dfile);
	kfree(sf);
}

/* Any context, possibly under the d3dq fence's lock. */
static void d3dq_fence_sf_signalled(struct dma_fence *fence,
				    struct dma_fence_cb *cb)
{
	struct d3dq_fence_sf *sf = container_of(cb, struct d3dq_fence_sf, cb);

	queue_work(d3dq_wq.cleanup, &sf->work);
}

/* A sync_file fd for @fence: the fd, or -errno. */
static int d3dq_fence_sync_file_fd(struct dma_fence *fence)
{
	struct sync_file *sync;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	sync = sync_file_create(fence);
	if (!sync) {
		put_unused_fd(fd);
		return -ENOMEM;
	}
	fd_install(fd, sync->file);
	return fd;
}

int d3dq_ioctl_fence_export_sync_file(struct drm_device *drm, void *data,
				      struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_sync_file *args = data;
	struct d3dq_release_fence *rf;
	struct d3dq_fence_cond *cond;
	struct dma_fence *waited;
	struct d3dq_fence_sf *sf;
	int ret;

	if (args->flags || args->fd || args->pad)
		return -EINVAL;
	ret = d3dq_fence_bind(dfile, args->handle, args->value, NULL, true,
			      &cond, &rf, &waited);
	if (ret)
		return ret;
	if (!cond) {
		/* Reached (or removed): a fence that has signalled. */
		waited = dma_fence_get_stub();
		ret = d3dq_fence_sync_file_fd(waited);
		dma_fence_put(waited);
		if (ret < 0)
			return ret;
		args->fd = ret;
		return 0;
	}
	/* The release fence holds the signal job's fence while it needs it. */
	dma_fence_put(waited);
	sf = kzalloc(sizeof(*sf), D3DQ_GFP);
	if (!sf) {
		ret = -ENOMEM;
		goto err_unbind;
	}
	ret = d3dq_user_count_fence_event(dfile->user);
	if (ret)
		goto err_free;
	ret = d3dq_fence_sync_file_fd(&rf->base);
	if (ret < 0)
		goto err_uncount;
	args->fd = ret;
	sf->cond = cond;
	sf->rf = rf;
	sf->dfile = dfile;
	d3dq_file_get(dfile);
	INIT_WORK(&sf->work, d3dq_fence_sf_free);
	atomic_inc(&dfile->ddev->count.fence_events);
	if (dma_fence_add_callback(&rf->base, &sf->cb, d3dq_fence_sf_signalled))
		queue_work(d3dq_wq.cleanup, &sf->work);
	return 0;

err_uncount:
	d3dq_user_uncount_fence_event(dfile->user);
err_free:
	kfree(sf);
err_unbind:
	d3dq_fence_qwait_free(cond);
	d3dq_release_fence_put(rf);
	return ret;
}
