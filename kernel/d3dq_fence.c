// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences: D3D12 fence values kept by the kernel, in pages that
 * userspace maps read-only; CPU signals, CPU waits and kernel-held
 * eventfds. See "Fences" in Documentation/driver.rst.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/anon_inodes.h>
#include <linux/bitmap.h>
#include <linux/dma-fence-chain.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_vma_manager.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

/* Values in a page; a fence's value is one aligned u64 of it. */
#define D3DQ_FENCE_SLOTS	(PAGE_SIZE / sizeof(u64))

/*
 * The mmap offsets of fence pages, in pages: from 2 TiB, above the GEM
 * offsets (4 GiB to about 1 TiB + 4 GiB), 1 TiB long, below the 16 TiB
 * that a 32-bit mmap2() can name.
 */
#define D3DQ_FENCE_PGOFF_START	((1ULL << 41) >> PAGE_SHIFT)
#define D3DQ_FENCE_PGOFF_SIZE	((1ULL << 40) >> PAGE_SHIFT)

/* Largest element stride of a fence array, as for sync arrays. */
#define D3DQ_MAX_FENCE_STRIDE	4096

/*
 * struct d3dq_fence_page - A page of fence values and its mmap offset.
 *
 * A shared fence has a page of its own (slot 0); the other fences of a
 * file share the file's pages. Referenced by its fences, and a file's
 * pages by the file until it is closed. The page itself is also
 * referenced by every mapping of it (vm_insert_page()), so it stays
 * valid where it is mapped after this structure is gone.
 */
struct d3dq_fence_page {
	struct kref ref;
	struct d3dq_device *ddev;	/* holds a drm_dev reference */
	struct page *page;
	u64 *values;
	struct drm_vma_offset_node node;
	/* A file's page: slots in use (lock), and the file's list. */
	spinlock_t lock;
	unsigned long used[BITS_TO_LONGS(D3DQ_FENCE_SLOTS)];
	struct list_head link;
};

struct d3dq_fence_cond;

/*
 * struct d3dq_fence_evt - An eventfd of single-fence registrations.
 *
 * Registrations of one fence with the same eventfd share it (R10: the
 * eventfd is signalled once per change of the value, however many of
 * them the change satisfies). Listed on the fence while a registration
 * uses it; everything under the fence's lock.
 */
struct d3dq_fence_evt {
	struct list_head link;		/* fence->evts */
	struct eventfd_ctx *ctx;	/* a key: each user holds the ctx */
	unsigned int users;
	u64 signalled;			/* the fence change that last did */
};

/*
 * struct d3dq_fence_node - One fence and value of a wait or registration.
 *
 * Listed in its fence's tree, by value (equal values in the order they
 * were listed), until the value is reached (or the handle it came
 * through is destroyed), then unlinked: a node is satisfied once, and
 * stays so (R6, R7).
 */
struct d3dq_fence_node {
	struct rb_node rb;		/* fence->nodes; cleared when unlisted */
	struct d3dq_fence *fence;	/* holds a reference */
	struct d3dq_fence_cond *cond;
	/*
	 * The handle the node came through (a reference), NULL for an
	 * export: the handle's destruction or its file's removal releases
	 * it. Listed on the handle's @nodes while in the tree.
	 */
	struct d3dq_fence_handle *fh;
	struct list_head hlink;
	u64 value;
};

/*
 * struct d3dq_fence_handle - A handle of a file to a fence.
 *
 * The file's xarray holds the first reference until the handle is
 * destroyed (FENCE_DESTROY or close), each node made through it
 * another. The handle holds a reference to its fence. @released and
 * @nodes, the handle's listed nodes, are under the fence's lock, so that
 * a destruction or a removal walks only what its own file made.
 */
struct d3dq_fence_handle {
	struct kref ref;
	struct d3dq_fence *fence;	/* holds a reference */
	/* Not referenced: every node of a handle goes before its file. */
	struct d3dq_file *dfile;
	struct list_head nodes;
	bool released;
};

/*
 * struct d3dq_fence_cond - A CPU wait, an event registration or a job's
 * fence wait.
 *
 * @remaining counts down as nodes are satisfied, from the number of
 * nodes (all) or from 1 (any); the node that takes it to 0 fires the
 * condition: it wakes the waiter, signals the eventfd, or releases the
 * job's wait (@release). A waiter owns its condition, and a job its
 * fence waits'. A registration is freed by a work item once it has
 * fired and its registering ioctl is done (@refs), away from the value
 * write, which may run in any context. A syncobj registration
 * (%DRM_D3DQ_FENCE_EVENT_SYNCOBJ) adds its point in that work item, in
 * process context: the syncobj's lock is not one to take where a value
 * write may run, and the chain node was allocated at registration. Those
 * work items run one at a time in the order they were queued, so the
 * points appear in the order the registrations fired.
 */
struct d3dq_fence_cond {
	atomic_t remaining;
	refcount_t refs;		/* registrations only */
	struct eventfd_ctx *ctx;	/* NULL for a CPU wait */
	/* A job's fence wait: its dependency (the job holds it). */
	struct d3dq_release_fence *release;
	struct d3dq_fence_evt *evt;	/* single-fence eventfd registrations */
	struct drm_syncobj *syncobj;	/* or this, referenced, and: */
	struct dma_fence_chain *chain;
	u64 point;
	/*
	 * A held job's fence wait (uapi 1.5): its queue, whose arming work
	 * the wait's satisfaction (or binding) queues. The job holds it.
	 */
	struct d3dq_queue *queue;
	wait_queue_head_t wq;		/* CPU waits */
	struct work_struct work;	/* registrations: unlink and free */
	struct d3dq_file *dfile;	/* registrations: holds a reference */
	/*
	 * The user @count nodes are counted against (max_user_fence_nodes)
	 * once armed, or NULL. Not referenced: the condition goes before
	 * the file it came through, which holds the user.
	 */
	struct d3dq_user *user;
	u32 count;
	struct d3dq_fence_node nodes[];
};

static const struct file_operations d3dq_fence_fops;

/* --- pages ------------------------------------------------------------- */

static struct d3dq_fence_page *d3dq_fence_page_create(struct d3dq_device *ddev)
{
	struct d3dq_fence_page *fpage;
	int ret;

	fpage = kzalloc(sizeof(*fpage), D3DQ_GFP);
	if (!fpage)
		return ERR_PTR(-ENOMEM);
	/* A whole page from the page allocator, charged to the caller. */
	fpage->page = alloc_page(D3DQ_GFP | __GFP_ZERO);
	if (!fpage->page) {
		kfree(fpage);
		return ERR_PTR(-ENOMEM);
	}
	fpage->values = page_address(fpage->page);
	kref_init(&fpage->ref);
	spin_lock_init(&fpage->lock);
	INIT_LIST_HEAD(&fpage->link);
	drm_vma_node_reset(&fpage->node);
	ret = drm_vma_offset_add(&ddev->fence_vma, &fpage->node, 1);
	if (ret) {
		__free_page(fpage->page);
		kfree(fpage);
		return ERR_PTR(ret);
	}
	fpage->ddev = ddev;
	drm_dev_get(&ddev->drm);
	return fpage;
}

static void d3dq_fence_page_release(struct kref *ref)
{
	struct d3dq_fence_page *fpage =
		container_of(ref, struct d3dq_fence_page, ref);
	struct d3dq_device *ddev = fpage->ddev;

	drm_vma_offset_remove(&ddev->fence_vma, &fpage->node);
	/* Mappings keep their own references to the page. */
	__free_page(fpage->page);
	kfree(fpage);
	drm_dev_put(&ddev->drm);
}

static void d3dq_fence_page_put(struct d3dq_fence_page *fpage)
{
	kref_put(&fpage->ref, d3dq_fence_page_release);
}

/*
 * A slot for a fence that is not shared, in one of the file's pages
 * (dfile->fence_lock held); the page gets a reference for the fence.
 */
static struct d3dq_fence_page *d3dq_fence_slot_get(struct d3dq_file *dfile,
						   u32 *slot)
{
	struct d3dq_fence_page *fpage;
	unsigned long bit;

	lockdep_assert_held(&dfile->fence_lock);

	list_for_each_entry(fpage, &dfile->fence_pages, link) {
		spin_lock(&fpage->lock);
		bit = find_first_zero_bit(fpage->used, D3DQ_FENCE_SLOTS);
		if (bit < D3DQ_FENCE_SLOTS) {
			__set_bit(bit, fpage->used);
			spin_unlock(&fpage->lock);
			kref_get(&fpage->ref);
			*slot = bit;
			return fpage;
		}
		spin_unlock(&fpage->lock);
	}

	fpage = d3dq_fence_page_create(dfile->ddev);
	if (IS_ERR(fpage))
		return fpage;
	__set_bit(0, fpage->used);
	/* The file's list holds the first reference, the fence a second. */
	list_add_tail(&fpage->link, &dfile->fence_pages);
	kref_get(&fpage->ref);
	*slot = 0;
	return fpage;
}

static void d3dq_fence_slot_put(struct d3dq_fence_page *fpage, u32 slot)
{
	spin_lock(&fpage->lock);
	__clear_bit(slot, fpage->used);
	spin_unlock(&fpage->lock);
	d3dq_fence_page_put(fpage);
}

/* --- fences ------------------------------------------------------------ */

static void d3dq_fence_get(struct d3dq_fence *fence)
{
	kref_get(&fence->ref);
}

/* Process context: puts the device and the user. */
static void d3dq_fence_release(struct kref *ref)
{
	struct d3dq_fence *fence = container_of(ref, struct d3dq_fence, ref);
	struct d3dq_device *ddev = fence->ddev;

	/* Every node and job signal holds a reference: none is left. */
	WARN_ON(!RB_EMPTY_ROOT(&fence->nodes.rb_root));
	WARN_ON(!list_empty(&fence->pending));
	WARN_ON(!list_empty(&fence->evts));
	spin_lock(&ddev->fences_lock);
	list_del_init(&fence->link);
	spin_unlock(&ddev->fences_lock);

	d3dq_fence_slot_put(fence->fpage, fence->slot);
	d3dq_user_uncount_fence(fence->user);
	d3dq_user_put(fence->user);
	atomic_dec(&ddev->count.fences);
	kfree(fence);
	drm_dev_put(&ddev->drm);
}

static void d3dq_fence_put(struct d3dq_fence *fence)
{
	kref_put(&fence->ref, d3dq_fence_release);
}

static struct d3dq_fence *d3dq_fence_create(struct d3dq_file *dfile,
					    u64 value, bool shared)
{
	struct d3dq_device *ddev = dfile->ddev;
	struct d3dq_fence *fence;
	int ret;

	lockdep_assert_held(&dfile->fence_lock);

	ret = d3dq_user_count_fence(dfile->user);
	if (ret)
		return ERR_PTR(ret);
	fence = kzalloc(sizeof(*fence), D3DQ_GFP);
	if (!fence) {
		ret = -ENOMEM;
		goto err_uncount;
	}
	if (shared)
		fence->fpage = d3dq_fence_page_create(ddev);
	else
		fence->fpage = d3dq_fence_slot_get(dfile, &fence->slot);
	if (IS_ERR(fence->fpage)) {
		ret = PTR_ERR(fence->fpage);
		kfree(fence);
		goto err_uncount;
	}

	kref_init(&fence->ref);
	spin_lock_init(&fence->lock);
	INIT_LIST_HEAD(&fence->link);
	fence->nodes = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&fence->pending);
	INIT_LIST_HEAD(&fence->evts);
	fence->shared = shared;
	fence->value = &fence->fpage->values[fence->slot];
	/* Nobody else sees the fence yet. */
	WRITE_ONCE(*fence->value, value);
	fence->ddev = ddev;
	drm_dev_get(&ddev->drm);
	fence->user = dfile->user;
	d3dq_user_get(fence->user);

	atomic_inc(&ddev->count.fences);
	spin_lock(&ddev->fences_lock);
	/* An unplug's walk missed it: refused, and freed as any other. */
	if (ddev->fences_dead) {
		spin_unlock(&ddev->fences_lock);
		d3dq_fence_put(fence);
		return ERR_PTR(-ENODEV);
	}
	list_add_tail(&fence->link, &ddev->fences);
	spin_unlock(&ddev->fences_lock);
	return fence;

err_uncount:
	d3dq_user_uncount_fence(dfile->user);
	return ERR_PTR(ret);
}

static void d3dq_fence_handle_free(struct kref *ref)
{
	struct d3dq_fence_handle *fh =
		container_of(ref, struct d3dq_fence_handle, ref);

	WARN_ON(!list_empty(&fh->nodes));
	d3dq_fence_put(fh->fence);
	kfree(fh);
}

static void d3dq_fence_handle_put(struct d3dq_fence_handle *fh)
{
	kref_put(&fh->ref, d3dq_fence_handle_free);
}

/* @handle of @dfile, referenced, or NULL. */
static struct d3dq_fence_handle *
d3dq_fence_handle_lookup(struct d3dq_file *dfile, u32 handle)
{
	struct d3dq_fence_handle *fh;

	xa_lock(&dfile->fences);
	fh = xa_load(&dfile->fences, handle);
	if (fh)
		kref_get(&fh->ref);
	xa_unlock(&dfile->fences);
	return fh;
}

/* The fence of @handle of @dfile, referenced, or NULL. */
static struct d3dq_fence *d3dq_fence_lookup(struct d3dq_file *dfile,
					    u32 handle)
{
	struct d3dq_fence_handle *fh;
	struct d3dq_fence *fence = NULL;

	xa_lock(&dfile->fences);
	fh = xa_load(&dfile->fences, handle);
	if (fh) {
		fence = fh->fence;
		d3dq_fence_get(fence);
	}
	xa_unlock(&dfile->fences);
	return fence;
}

/*
 * Whether @dfile was removed (R15): its handles no longer hold nodes
 * and it signals nothing. Set once, under the file's fence_lock; read
 * anywhere, the fence's lock ordering it against the release of the
 * file's nodes (d3dq_fence_file_remove()).
 */
static bool d3dq_fence_file_removed(struct d3dq_file *dfile)
{
	return READ_ONCE(dfile->fences_removed);
}

/* --- conditions: the value write path ---------------------------------- */

static void d3dq_fence_cond_put(struct d3dq_fence_cond *cond)
{
	/* A syncobj point is added in firing order (see d3dq_wq.events). */
	if (refcount_dec_and_test(&cond->refs))
		queue_work(cond->syncobj ? d3dq_wq.events : d3dq_wq.cleanup,
			   &cond->work);
}

/*
 * A wait of @queue's held job was satisfied (@fence's lock held): have
 * the CPU signal that writes @fence arm the queue in its call, else the
 * queue's arming work.
 */
static void d3dq_fence_kick(struct d3dq_fence *fence,
			    struct d3dq_queue *queue)
{
	struct d3dq_fence_kicks *kicks = fence->kicks;
	u32 i;

	if (kicks) {
		for (i = 0; i < kicks->count; i++)
			if (kicks->queues[i] == queue)
				return;
		if (kicks->count < ARRAY_SIZE(kicks->queues)) {
			d3dq_queue_get(queue);
			kicks->queues[kicks->count++] = queue;
			return;
		}
	}
	d3dq_queue_kick_held(queue);
}

/* @node fired its condition: its fence's lock is held. */
static void d3dq_fence_cond_fire(struct d3dq_fence_node *node)
{
	struct d3dq_fence_cond *cond = node->cond;
	struct d3dq_fence_evt *evt = cond->evt;

	/*
	 * The value was reached: the job no longer waits for a job. A held
	 * job may be armed now: only mark it and queue the work that does.
	 */
	if (cond->release) {
		/*
		 * An exported value's release fence stands for the job it is
		 * bound to: a removal's ~0 leaves it to that job's end,
		 * which follows soon (a stopped queue's jobs end as they
		 * reach the engine) and carries the job's error.
		 */
		if (!node->fence->removed || !cond->release->propagate)
			d3dq_release_fence_signal(cond->release, true);
		if (cond->queue)
			d3dq_fence_kick(node->fence, cond->queue);
		return;
	}
	if (!cond->ctx && !cond->syncobj) {
		wake_up_all(&cond->wq);
		return;
	}
	/*
	 * A syncobj registration adds its point when it is freed; an
	 * eventfd another registration of this fence signalled in the same
	 * change is not signalled again.
	 */
	if (cond->ctx && (!evt || evt->signalled != node->fence->changes)) {
		if (evt)
			evt->signalled = node->fence->changes;
		d3dq_eventfd_signal(cond->ctx);
	}
	d3dq_fence_cond_put(cond);
}

static struct d3dq_fence_node *d3dq_fence_node_of(struct rb_node *rb)
{
	return rb_entry_safe(rb, struct d3dq_fence_node, rb);
}

static bool d3dq_fence_node_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct d3dq_fence_node, rb)->value <
	       rb_entry(b, struct d3dq_fence_node, rb)->value;
}

/*
 * List @node in its fence's tree (the fence's lock held), after the
 * nodes of the same value: O(log n) whatever the order of the values.
 */
static void d3dq_fence_node_list(struct d3dq_fence_node *node)
{
	rb_add_cached(&node->rb, &node->fence->nodes, d3dq_fence_node_less);
	if (node->fh)
		list_add_tail(&node->hlink, &node->fh->nodes);
}

/*
 * Whether @node is released at once rather than listed (its fence's
 * lock held): the fence was removed (unplug), or the handle it came
 * through was destroyed or its file removed meanwhile. A destruction
 * or a removal releases the nodes it finds listed; these come after.
 */
static bool d3dq_fence_node_gone(struct d3dq_fence_node *node)
{
	struct d3dq_fence_handle *fh = node->fh;

	return node->fence->removed ||
	       (fh && (fh->released || d3dq_fence_file_removed(fh->dfile)));
}

/* Unlist @node if it is listed (its fence's lock held). */
static void d3dq_fence_node_unlist(struct d3dq_fence_node *node)
{
	if (RB_EMPTY_NODE(&node->rb))
		return;
	rb_erase_cached(&node->rb, &node->fence->nodes);
	RB_CLEAR_NODE(&node->rb);
	list_del_init(&node->hlink);
}

/*
 * A node is satisfied, by the current change of its fence (its fence's
 * lock held).
 */
static void d3dq_fence_node_done(struct d3dq_fence_node *node)
{
	d3dq_fence_node_unlist(node);
	if (atomic_dec_return(&node->cond->remaining) == 0)
		d3dq_fence_cond_fire(node);
}

/* Satisfy the nodes @value reaches, lowest first (the fence's lock held). */
static void d3dq_fence_satisfy_locked(struct d3dq_fence *fence, u64 value)
{
	struct d3dq_fence_node *node;

	/* Each satisfied node leaves the tree: the next is the lowest. */
	while ((node = d3dq_fence_node_of(rb_first_cached(&fence->nodes)))) {
		if (node->value > value)
			break;
		d3dq_fence_node_done(node);
	}
}

/**
 * d3dq_fence_write_locked - Set a fence's value.
 * @fence: the fence, its lock held
 * @value: the new value
 *
 * One release store, which every mapping sees at once, then every node
 * the value reaches is satisfied for good: its waiter is woken or its
 * eventfd signalled: they are taken from the lowest value up, O(log n)
 * each, and the walk stops at the first node the value does not reach.
 * Allocates nothing and sleeps nowhere, so that it can run in any context
 * that can take the fence's lock.
 */
void d3dq_fence_write_locked(struct d3dq_fence *fence, u64 value)
{
	lockdep_assert_held(&fence->lock);

	if (fence->removed)
		return;
	/*
	 * Pairs with the acquire load of userspace readers: what was
	 * written before the signal is seen by whoever sees the value.
	 */
	smp_store_release(fence->value, value);
	fence->changes++;
	d3dq_fence_satisfy_locked(fence, value);
}

/*
 * A removal, in two passes over the fences it removes, so that it looks
 * whole to whoever it wakes (R15): first every value goes to ~0 for good
 * (no signal changes it after), then every node is satisfied. A waiter
 * or an event that a removal released finds every fence it removed at
 * ~0 already, not only the one it waited on.
 */
static void d3dq_fence_remove_value(struct d3dq_fence *fence)
{
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	if (!fence->removed) {
		/* As in d3dq_fence_write_locked(): userspace's acquire loads. */
		smp_store_release(fence->value, U64_MAX);
		fence->changes++;
		fence->removed = true;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
}

static void d3dq_fence_remove_nodes(struct d3dq_fence *fence)
{
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	d3dq_fence_satisfy_locked(fence, U64_MAX);
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * List @node on its fence, unless the value is reached already, the
 * fence was removed, or the handle it came through is gone (destroyed
 * meanwhile: that releases it, as a destruction releases the nodes it
 * finds).
 */
static void d3dq_fence_node_arm(struct d3dq_fence_node *node)
{
	struct d3dq_fence *fence = node->fence;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	if (d3dq_fence_node_gone(node) || *fence->value >= node->value) {
		/* Firing at its call is a change of its own. */
		fence->changes++;
		d3dq_fence_node_done(node);
		goto out;
	}
	d3dq_fence_node_list(node);
out:
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * Unlink every node that is still listed. Taking each fence's lock also
 * waits for a value write that is satisfying one of them.
 */
static void d3dq_fence_cond_unlink(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_node *node;
	unsigned long flags;
	u32 i;

	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		spin_lock_irqsave(&node->fence->lock, flags);
		d3dq_fence_node_unlist(node);
		spin_unlock_irqrestore(&node->fence->lock, flags);
	}
}

static void d3dq_fence_cond_free(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_node *node;
	u32 i;

	if (cond->user)
		d3dq_user_uncount_fence_nodes(cond->user, cond->count);
	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		if (node->fh)
			d3dq_fence_handle_put(node->fh);
		if (node->fence)
			d3dq_fence_put(node->fence);
	}
	kvfree(cond);
}

/*
 * Share the eventfd of a single-fence registration with the fence's
 * other registrations of it: @evt, allocated by the caller, is listed if
 * none is, else freed.
 */
static void d3dq_fence_evt_get(struct d3dq_fence_cond *cond,
			       struct d3dq_fence_evt *evt)
{
	struct d3dq_fence *fence = cond->nodes[0].fence;
	struct d3dq_fence_evt *pos;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	list_for_each_entry(pos, &fence->evts, link) {
		if (pos->ctx == cond->ctx) {
			pos->users++;
			cond->evt = pos;
			break;
		}
	}
	if (!cond->evt) {
		evt->ctx = cond->ctx;
		evt->users = 1;
		evt->signalled = fence->changes - 1;
		list_add(&evt->link, &fence->evts);
		cond->evt = evt;
		evt = NULL;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
	kfree(evt);
}

static void d3dq_fence_evt_put(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_evt *evt = cond->evt;
	struct d3dq_fence *fence;
	unsigned long flags;

	if (!evt)
		return;
	fence = cond->nodes[0].fence;
	spin_lock_irqsave(&fence->lock, flags);
	if (--evt->users == 0)
		list_del(&evt->link);
	else
		evt = NULL;
	spin_unlock_irqrestore(&fence->lock, flags);
	kfree(evt);
}

/*
 * A registration fired and its ioctl is done. A syncobj registration
 * adds its point now: a stub fence, signalled already, in the chain node
 * allocated at registration.
 */
static void d3dq_fence_event_free(struct work_struct *work)
{
	struct d3dq_fence_cond *cond =
		container_of(work, struct d3dq_fence_cond, work);
	struct d3dq_file *dfile = cond->dfile;
	struct dma_fence *stub;

	d3dq_fence_cond_unlink(cond);
	d3dq_fence_evt_put(cond);
	if (cond->syncobj) {
		stub = dma_fence_get_stub();
		drm_syncobj_add_point(cond->syncobj, cond->chain, stub,
				      cond->point);
		dma_fence_put(stub);
		drm_syncobj_put(cond->syncobj);
	} else {
		eventfd_ctx_put(cond->ctx);
	}
	d3dq_fence_cond_free(cond);
	atomic_dec(&dfile->ddev->count.fence_events);
	d3dq_user_uncount_fence_event(dfile->user);
	d3dq_file_put(dfile);
}

static int d3dq_fence_node_cmp(const void *a, const void *b)
{
	const struct d3dq_fence_node *x = a, *y = b;

	if (x->fh != y->fh)
		return x->fh < y->fh ? -1 : 1;
	return 0;
}

/*
 * One node per handle: a fence named twice through one handle waits for
 * the larger value (all: reaching it reaches the smaller one at that
 * moment) or the smaller one (any). Sorted by handle first, so that this
 * costs O(n log n); the order of the nodes means nothing.
 */
static u32 d3dq_fence_nodes_merge(struct d3dq_fence_node *nodes, u32 n,
				  bool any)
{
	u32 i, out = 0;

	sort(nodes, n, sizeof(*nodes), d3dq_fence_node_cmp, NULL);
	for (i = 0; i < n; i++) {
		if (out && nodes[out - 1].fh == nodes[i].fh) {
			if (any ? nodes[i].value < nodes[out - 1].value :
				  nodes[i].value > nodes[out - 1].value)
				nodes[out - 1].value = nodes[i].value;
			/* The duplicate's references go. */
			d3dq_fence_handle_put(nodes[i].fh);
			d3dq_fence_put(nodes[i].fence);
			continue;
		}
		nodes[out++] = nodes[i];
	}
	return out;
}

/*
 * Read and check the array of a wait or registration, and make the
 * condition with its nodes, each holding a reference to its fence and
 * to the handle it came through, one per handle; count them against
 * the user's max_user_fence_nodes.
 */
static struct d3dq_fence_cond *
d3dq_fence_cond_create(struct d3dq_file *dfile,
		       const struct drm_d3dq_obj_array *arr, u32 flags)
{
	bool any = flags & DRM_D3DQ_FENCE_WAIT_ANY;
	struct drm_d3dq_fence_value fv;
	struct d3dq_fence_cond *cond;
	struct d3dq_fence_node *node;
	u64 offset;
	u32 i;
	int ret;

	if (flags & ~DRM_D3DQ_FENCE_WAIT_ANY)
		return ERR_PTR(-EINVAL);
	if (!arr->count || arr->count > d3dq_max_syncs)
		return ERR_PTR(-EINVAL);
	if (arr->stride < sizeof(fv) || arr->stride > D3DQ_MAX_FENCE_STRIDE)
		return ERR_PTR(-EINVAL);

	cond = kvzalloc(struct_size(cond, nodes, arr->count), D3DQ_GFP);
	if (!cond)
		return ERR_PTR(-ENOMEM);
	init_waitqueue_head(&cond->wq);
	refcount_set(&cond->refs, 2);	/* the ioctl and the firing */

	for (i = 0; i < arr->count; i++) {
		/* count * stride is below 2^29: no overflow. */
		offset = (u64)i * arr->stride;
		ret = copy_struct_from_user(&fv, sizeof(fv),
					    u64_to_user_ptr(arr->array + offset),
					    arr->stride);
		if (ret) {
			ret = ret == -E2BIG ? -EINVAL : ret;
			goto err;
		}
		if (fv.pad) {
			ret = -EINVAL;
			goto err;
		}
		node = &cond->nodes[i];
		node->fh = d3dq_fence_handle_lookup(dfile, fv.handle);
		if (!node->fh) {
			ret = -ENOENT;
			goto err;
		}
		cond->count = i + 1;
		node->fence = node->fh->fence;
		d3dq_fence_get(node->fence);
		node->value = fv.value;
	}
	cond->count = d3dq_fence_nodes_merge(cond->nodes, cond->count, any);
	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		RB_CLEAR_NODE(&node->rb);
		INIT_LIST_HEAD(&node->hlink);
		node->cond = cond;
	}
	atomic_set(&cond->remaining, any ? 1 : cond->count);
	ret = d3dq_user_count_fence_nodes(dfile->user, cond->count,
					  "FENCE_WAIT or FENCE_EVENT");
	if (ret)
		goto err;
	cond->user = dfile->user;
	return cond;

err:
	d3dq_fence_cond_free(cond);
	return ERR_PTR(ret);
}

static void d3dq_fence_cond_arm(struct d3dq_fence_cond *cond)
{
	u32 i;

	for (i = 0; i < cond->count; i++)
		d3dq_fence_node_arm(&cond->nodes[i]);
}

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
	INIT_LIST_HEAD(&qs->link);
	qs->fence = d3dq_fence_lookup(dfile, handle);
	if (!qs->fence)
		return -ENOENT;
	qs->dfile = dfile;
	qs->value = value;
	return 0;
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
	struct d3dq_fence_node *node;
	struct d3dq_fence_cond *cond;
	struct rb_node *rb;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	qs->done = done;
	list_add_tail(&qs->link, &fence->pending);
	/*
	 * Held fence waits of this file that the signal brings depend on
	 * its job from now: their jobs may be armed (sorted by value).
	 */
	for (rb = rb_first_cached(&fence->nodes); rb; rb = rb_next(rb)) {
		node = d3dq_fence_node_of(rb);
		if (node->value > qs->value)
			break;
		cond = node->cond;
		if (!cond->queue || !node->fh || node->fh->dfile != qs->dfile ||
		    cond->release->waited)
			continue;
		d3dq_release_fence_bind(cond->release, done);
		d3dq_queue_kick_held(cond->queue);
	}
	spin_unlock_irqrestore(&fence->lock, flags);
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
	list_del_init(&qs->link);
	if (write)
		d3dq_fence_write_locked(fence, qs->value);
	spin_unlock_irqrestore(&fence->lock, flags);
}

/* The job is freed (process context). */
void d3dq_fence_qsignal_fini(struct d3dq_fence_qsignal *qs)
{
	unsigned long flags;

	if (!qs->fence)
		return;
	/* An armed job ended, which unlisted it; an unarmed one never was. */
	spin_lock_irqsave(&qs->fence->lock, flags);
	WARN_ON_ONCE(!list_empty(&qs->link));
	list_del_init(&qs->link);
	spin_unlock_irqrestore(&qs->fence->lock, flags);
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
	INIT_LIST_HEAD(&node->hlink);
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
	list_for_each_entry_reverse(qs, &fence->pending, link) {
		if (qs->dfile == dfile && qs->value >= value) {
			found = qs;
			break;
		}
	}
	if (!found && !hold) {
		spin_unlock_irqrestore(&fence->lock, flags);
		ret = -ENODATA;
		goto out;
	}
	if (found) {
		*waitedp = dma_fence_get(found->done);
		d3dq_release_fence_bind(rf, found->done);
	} else {
		/* Held: nothing published depends on it (see the uapi). */
		cond->queue = hold;
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

/* --- handles ----------------------------------------------------------- */

/*
 * A new handle for @fence (the reference passes to it), allowed to map
 * the fence's page; under dfile->fence_lock, refused after REMOVE.
 */
static int d3dq_fence_handle_add(struct d3dq_file *dfile,
				 struct drm_file *file,
				 struct d3dq_fence *fence, u32 *handle)
{
	struct d3dq_fence_handle *fh;
	int ret;

	lockdep_assert_held(&dfile->fence_lock);

	if (dfile->fences_removed)
		return -ENODEV;
	fh = kzalloc(sizeof(*fh), D3DQ_GFP);
	if (!fh)
		return -ENOMEM;
	kref_init(&fh->ref);
	fh->fence = fence;
	fh->dfile = dfile;
	INIT_LIST_HEAD(&fh->nodes);
	ret = drm_vma_node_allow(&fence->fpage->node, file);
	if (ret)
		goto err_free;
	ret = xa_alloc(&dfile->fences, handle, fh, XA_LIMIT(1, INT_MAX),
		       D3DQ_GFP);
	if (ret) {
		drm_vma_node_revoke(&fence->fpage->node, file);
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_free;
	}
	return 0;

err_free:
	/* The caller keeps the fence's reference. */
	kfree(fh);
	return ret;
}

/*
 * Release the nodes made through @fh, as if the fence had reached ~0
 * (R14); other handles' nodes stay (R20). With @destroy the handle is
 * gone for good: a node armed after this is released at once. Touches
 * only what the handle's own file listed.
 */
static void d3dq_fence_handle_quiesce(struct d3dq_fence_handle *fh,
				      bool destroy)
{
	struct d3dq_fence *fence = fh->fence;
	struct d3dq_fence_node *node;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	if (destroy)
		fh->released = true;
	fence->changes++;
	while ((node = list_first_entry_or_null(&fh->nodes,
						struct d3dq_fence_node,
						hlink)))
		d3dq_fence_node_done(node);
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * The one teardown of a handle, for FENCE_DESTROY and close: erased from
 * the file (dfile->fence_lock held, which every walker of the file's
 * handles holds too), its nodes released, its mapping right revoked, and
 * the xarray's reference dropped.
 */
static void d3dq_fence_handle_destroy(struct d3dq_file *dfile,
				      struct drm_file *file, u32 handle)
{
	struct d3dq_fence_handle *fh;

	lockdep_assert_held(&dfile->fence_lock);

	fh = xa_erase(&dfile->fences, handle);
	if (!fh)
		return;
	d3dq_fence_handle_quiesce(fh, true);
	drm_vma_node_revoke(&fh->fence->fpage->node, file);
	d3dq_fence_handle_put(fh);
}

static void d3dq_fence_fill_out(struct d3dq_fence *fence, u64 *mmap_offset,
				u32 *value_offset)
{
	*mmap_offset = drm_vma_node_offset_addr(&fence->fpage->node);
	*value_offset = fence->slot * sizeof(u64);
}

/* --- ioctls ------------------------------------------------------------ */

int d3dq_ioctl_fence_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_create *args = data;
	struct d3dq_fence *fence;
	int ret;

	if (args->flags & ~DRM_D3DQ_FENCE_SHARED || args->handle ||
	    args->mmap_offset || args->value_offset || args->pad)
		return -EINVAL;

	mutex_lock(&dfile->fence_lock);
	if (dfile->fences_removed) {
		ret = -ENODEV;
		goto out;
	}
	fence = d3dq_fence_create(dfile, args->value,
				  args->flags & DRM_D3DQ_FENCE_SHARED);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		goto out;
	}
	ret = d3dq_fence_handle_add(dfile, file, fence, &args->handle);
	if (ret) {
		d3dq_fence_put(fence);
		goto out;
	}
	d3dq_fence_fill_out(fence, &args->mmap_offset, &args->value_offset);
out:
	mutex_unlock(&dfile->fence_lock);
	return ret;
}

int d3dq_ioctl_fence_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_destroy *args = data;
	int ret = -ENOENT;

	if (args->pad)
		return -EINVAL;
	/* Erasing index 0 would free it in the XA_FLAGS_ALLOC1 array. */
	if (!args->handle)
		return -ENOENT;

	mutex_lock(&dfile->fence_lock);
	if (xa_load(&dfile->fences, args->handle)) {
		d3dq_fence_handle_destroy(dfile, file, args->handle);
		ret = 0;
	}
	mutex_unlock(&dfile->fence_lock);
	return ret;
}

static int d3dq_fence_file_release(struct inode *inode, struct file *f)
{
	d3dq_fence_put(f->private_data);
	return 0;
}

/* An exported fence: the file only holds a reference. */
static const struct file_operations d3dq_fence_fops = {
	.owner = THIS_MODULE,
	.release = d3dq_fence_file_release,
};

int d3dq_ioctl_fence_export(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_export *args = data;
	struct d3dq_fence *fence;
	struct file *f;
	int fd, ret;

	if (args->flags || args->pad || args->fd)
		return -EINVAL;

	fence = d3dq_fence_lookup(dfile, args->handle);
	if (!fence)
		return -ENOENT;
	/* Other fences share their page with the file's other fences. */
	if (!fence->shared) {
		ret = -EINVAL;
		goto err_put;
	}
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_put;
	}
	f = anon_inode_getfile("d3dq_fence", &d3dq_fence_fops, fence,
			       O_RDONLY);
	if (IS_ERR(f)) {
		put_unused_fd(fd);
		ret = PTR_ERR(f);
		goto err_put;
	}
	/* The file has the lookup's reference. */
	fd_install(fd, f);
	args->fd = fd;
	return 0;

err_put:
	d3dq_fence_put(fence);
	return ret;
}

int d3dq_ioctl_fence_import(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_import *args = data;
	struct d3dq_fence *fence;
	struct file *f;
	int ret;

	if (args->flags || args->mmap_offset || args->value_offset ||
	    args->handle)
		return -EINVAL;

	f = fget(args->fd);
	if (!f)
		return -EBADF;
	if (f->f_op != &d3dq_fence_fops) {
		fput(f);
		return -EINVAL;
	}
	fence = f->private_data;
	d3dq_fence_get(fence);
	fput(f);
	if (fence->ddev != dfile->ddev) {
		d3dq_fence_put(fence);
		return -EINVAL;
	}

	mutex_lock(&dfile->fence_lock);
	ret = d3dq_fence_handle_add(dfile, file, fence, &args->handle);
	mutex_unlock(&dfile->fence_lock);
	if (ret) {
		d3dq_fence_put(fence);
		return ret;
	}
	d3dq_fence_fill_out(fence, &args->mmap_offset, &args->value_offset);
	return 0;
}

int d3dq_ioctl_fence_signal(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_d3dq_fence_signal *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_fence_kicks kicks = { .count = 0 };
	struct d3dq_fence *fence;
	unsigned long flags;
	int ret = 0;
	u32 i;

	if (args->flags)
		return -EINVAL;

	fence = d3dq_fence_lookup(dfile, args->handle);
	if (!fence)
		return -ENOENT;
	spin_lock_irqsave(&fence->lock, flags);
	if (fence->removed || d3dq_fence_file_removed(dfile)) {
		ret = -ENODEV;
	} else {
		fence->kicks = &kicks;
		d3dq_fence_write_locked(fence, args->value);
		fence->kicks = NULL;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
	d3dq_fence_put(fence);
	/* Held jobs it released: armed (and run, if small) here. */
	for (i = 0; i < kicks.count; i++) {
		d3dq_queue_arm_now(kicks.queues[i]);
		d3dq_queue_put(kicks.queues[i]);
	}
	return ret;
}

static bool d3dq_fence_cond_done(struct d3dq_fence_cond *cond)
{
	return atomic_read(&cond->remaining) <= 0;
}

int d3dq_ioctl_fence_wait(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_d3dq_fence_wait *args = data;
	struct d3dq_fence_cond *cond;
	ktime_t timeout, now;
	int ret;

	if (args->pad)
		return -EINVAL;
	cond = d3dq_fence_cond_create(file->driver_priv, &args->fences,
				      args->flags);
	if (IS_ERR(cond))
		return PTR_ERR(cond);

	d3dq_fence_cond_arm(cond);
	/* CLOCK_MONOTONIC is >= 0: a negative deadline is in the past. */
	now = ktime_get();
	if (args->deadline_ns == S64_MAX)
		timeout = KTIME_MAX;
	else if (args->deadline_ns <= now)
		timeout = 0;
	else
		timeout = ktime_sub(ns_to_ktime(args->deadline_ns), now);
	if (d3dq_fence_cond_done(cond))
		ret = 0;
	else if (timeout <= 0)
		ret = -ETIME;
	else
		ret = wait_event_interruptible_hrtimeout(cond->wq,
							 d3dq_fence_cond_done(cond),
							 timeout);
	d3dq_fence_cond_unlink(cond);
	/* Met at the last moment: the condition wins. */
	if (d3dq_fence_cond_done(cond))
		ret = 0;
	d3dq_fence_cond_free(cond);
	return ret;
}

/*
 * The target of a registration: an eventfd, or with
 * %DRM_D3DQ_FENCE_EVENT_SYNCOBJ a point of a syncobj of @file, with the
 * chain node that adding the point needs.
 */
static int d3dq_fence_event_target(struct drm_file *file,
				   const struct drm_d3dq_fence_event *args,
				   struct d3dq_fence_cond *cond)
{
	struct eventfd_ctx *ctx;

	if (!(args->flags & DRM_D3DQ_FENCE_EVENT_SYNCOBJ)) {
		if (args->syncobj || args->pad || args->point)
			return -EINVAL;
		/* -EBADF for a closed fd, -EINVAL for anything else. */
		ctx = eventfd_ctx_fdget(args->eventfd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
		cond->ctx = ctx;
		return 0;
	}
	if (args->eventfd || args->pad || !args->point)
		return -EINVAL;
	cond->chain = dma_fence_chain_alloc();
	if (!cond->chain)
		return -ENOMEM;
	cond->syncobj = drm_syncobj_find(file, args->syncobj);
	if (!cond->syncobj) {
		dma_fence_chain_free(cond->chain);
		cond->chain = NULL;
		return -ENOENT;
	}
	cond->point = args->point;
	return 0;
}

static void d3dq_fence_event_target_put(struct d3dq_fence_cond *cond)
{
	if (cond->syncobj) {
		dma_fence_chain_free(cond->chain);
		drm_syncobj_put(cond->syncobj);
	} else {
		eventfd_ctx_put(cond->ctx);
	}
}

int d3dq_ioctl_fence_event(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_event *args = data;
	struct d3dq_fence_evt *evt = NULL;
	struct d3dq_fence_cond *cond;
	int ret;

	cond = d3dq_fence_cond_create(dfile, &args->fences,
				      args->flags & ~DRM_D3DQ_FENCE_EVENT_SYNCOBJ);
	if (IS_ERR(cond))
		return PTR_ERR(cond);
	ret = d3dq_fence_event_target(file, args, cond);
	if (ret)
		goto err_free;
	/* As called: a multi-fence registration is one of its own (R10). */
	if (cond->ctx && args->fences.count == 1) {
		evt = kzalloc(sizeof(*evt), D3DQ_GFP);
		if (!evt) {
			ret = -ENOMEM;
			goto err_target;
		}
	}
	ret = d3dq_user_count_fence_event(dfile->user);
	if (ret)
		goto err_target;
	if (evt)
		d3dq_fence_evt_get(cond, evt);

	cond->dfile = dfile;
	d3dq_file_get(dfile);
	INIT_WORK(&cond->work, d3dq_fence_event_free);
	atomic_inc(&dfile->ddev->count.fence_events);
	/* It may fire here already; it is freed once both refs are gone. */
	d3dq_fence_cond_arm(cond);
	d3dq_fence_cond_put(cond);
	return 0;

err_target:
	kfree(evt);
	d3dq_fence_event_target_put(cond);
err_free:
	d3dq_fence_cond_free(cond);
	return ret;
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

/* --- mmap -------------------------------------------------------------- */

bool d3dq_fence_mmap_offset(unsigned long pgoff)
{
	return pgoff >= D3DQ_FENCE_PGOFF_START &&
	       pgoff - D3DQ_FENCE_PGOFF_START < D3DQ_FENCE_PGOFF_SIZE;
}

/*
 * A mapping holds a reference to its page (vm_private_data), one per
 * VMA, so that it can insert the page again after a zap: an unplug
 * (drm_dev_unplug()) unmaps every mapping of the device's files, and a
 * value page must stay readable, at ~0, until it is unmapped.
 */
static void d3dq_fence_vm_open(struct vm_area_struct *vma)
{
	get_page(vma->vm_private_data);
}

static void d3dq_fence_vm_close(struct vm_area_struct *vma)
{
	put_page(vma->vm_private_data);
}

/*
 * The page a mapping of @file shows for @page: the device's page of ~0
 * once the file was removed (d3dq_fence_file_remove()). Called under
 * the file's fence_view_lock, which orders the choice against the
 * removal's zap: a page inserted before the removal is zapped by it,
 * one inserted after it is the page of ~0.
 */
static struct page *d3dq_fence_view_page(struct drm_file *file,
					 struct page *page)
{
	struct d3dq_file *dfile = file->driver_priv;

	lockdep_assert_held(&dfile->fence_view_lock);
	if (dfile->fences_removed)
		return dfile->ddev->fence_ones;
	return page;
}

static vm_fault_t d3dq_fence_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	/* The mapping holds the DRM file, and so its d3dq_file. */
	struct drm_file *file = vma->vm_file->private_data;
	struct d3dq_file *dfile = file->driver_priv;
	int ret;

	/* VM_MIXEDMAP is set: vm_insert_page() may run from a fault. */
	mutex_lock(&dfile->fence_view_lock);
	ret = vm_insert_page(vma, vma->vm_start,
			     d3dq_fence_view_page(file, vma->vm_private_data));
	mutex_unlock(&dfile->fence_view_lock);
	if (ret == -ENOMEM)
		return VM_FAULT_OOM;
	if (ret && ret != -EBUSY)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
}

static const struct vm_operations_struct d3dq_fence_vm_ops = {
	.open = d3dq_fence_vm_open,
	.close = d3dq_fence_vm_close,
	.fault = d3dq_fence_vm_fault,
};

/*
 * Map a fence page: one page, shared, read-only for good. VM_MAYWRITE is
 * cleared so that mprotect() cannot add PROT_WRITE and no forced write
 * (ptrace, /proc/pid/mem) gets through; a private mapping is refused
 * before anything, as it would allow copy-on-write. The page is inserted
 * now, so that nothing faults unless an unplug zapped the mapping.
 */
int d3dq_fence_mmap(struct drm_file *file, struct vm_area_struct *vma)
{
	struct d3dq_device *ddev = to_d3dq_dev(file->minor->dev);
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_fence_page *fpage = NULL;
	struct drm_vma_offset_node *node;
	int ret;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EACCES;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;

	drm_vma_offset_lock_lookup(&ddev->fence_vma);
	node = drm_vma_offset_exact_lookup_locked(&ddev->fence_vma,
						  vma->vm_pgoff, 1);
	if (node) {
		fpage = container_of(node, struct d3dq_fence_page, node);
		if (!kref_get_unless_zero(&fpage->ref))
			fpage = NULL;
	}
	drm_vma_offset_unlock_lookup(&ddev->fence_vma);
	if (!fpage)
		return -EINVAL;

	if (!drm_vma_node_is_allowed(&fpage->node, file)) {
		ret = -EACCES;
		goto out;
	}
	d3dq_vm_flags_mod(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP,
			  VM_MAYWRITE | VM_MAYEXEC);
	mutex_lock(&dfile->fence_view_lock);
	ret = vm_insert_page(vma, vma->vm_start,
			     d3dq_fence_view_page(file, fpage->page));
	mutex_unlock(&dfile->fence_view_lock);
	if (ret)
		goto out;
	/* The VMA keeps its own reference; munmap() drops it. */
	vma->vm_private_data = fpage->page;
	vma->vm_ops = &d3dq_fence_vm_ops;
	get_page(fpage->page);
out:
	d3dq_fence_page_put(fpage);
	return ret;
}

/* --- files and devices ------------------------------------------------- */

void d3dq_fence_file_init(struct d3dq_file *dfile)
{
	mutex_init(&dfile->fence_lock);
	mutex_init(&dfile->fence_view_lock);
	xa_init_flags(&dfile->fences, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&dfile->fence_pages);
}

/*
 * The removed file's view of a shared fence: its mappings of the page
 * are zapped, and refault the device's page of ~0 (d3dq_fence_vm_fault()).
 */
static void d3dq_fence_view_zap(struct d3dq_file *dfile,
				struct d3dq_fence *fence)
{
	struct drm_device *drm = &dfile->ddev->drm;

	unmap_mapping_range(drm->anon_inode->i_mapping,
			    drm_vma_node_offset_addr(&fence->fpage->node),
			    PAGE_SIZE, 1);
}

/**
 * d3dq_fence_file_remove - A file's removal reaches its fences (R15, R20).
 * @dfile: the file, whose queues are stopped already
 *
 * Removal is the removed file's affair. Its handles read ~0 from now on:
 * the value of a fence only it holds is set to ~0 for good; its mappings
 * of a shared fence's page are zapped and refault a page of ~0, while
 * the other holders keep the real value. Then every node made through
 * the file's handles is released (its CPU waits, events and held jobs'
 * waits), in a second pass, so that whoever a removal wakes finds every
 * fence of the file at ~0 already. Other holders' nodes, their signals
 * and their rewinds are untouched; the file's own pending signals never
 * take effect, as its jobs were cancelled. FENCE_SIGNAL and
 * FENCE_EXPORT_SYNC_FILE through the file return -ENODEV, and no handle
 * is made any more.
 *
 * dfile->fence_lock is held throughout: no handle of the file is
 * destroyed under the walk, which so holds what it walks.
 */
void d3dq_fence_file_remove(struct d3dq_file *dfile)
{
	struct d3dq_fence_handle *fh;
	unsigned long handle;

	mutex_lock(&dfile->fence_lock);
	mutex_lock(&dfile->fence_view_lock);
	WRITE_ONCE(dfile->fences_removed, true);
	mutex_unlock(&dfile->fence_view_lock);
	xa_for_each(&dfile->fences, handle, fh) {
		if (fh->fence->shared)
			d3dq_fence_view_zap(dfile, fh->fence);
		else
			d3dq_fence_remove_value(fh->fence);
	}
	xa_for_each(&dfile->fences, handle, fh) {
		if (fh->fence->shared)
			d3dq_fence_handle_quiesce(fh, false);
		else
			d3dq_fence_remove_nodes(fh->fence);
	}
	mutex_unlock(&dfile->fence_lock);
}

/* File close: destroy every handle, then let go of the file's pages. */
void d3dq_fence_file_fini(struct d3dq_file *dfile, struct drm_file *file)
{
	struct d3dq_fence_page *fpage, *tmp;
	struct d3dq_fence_handle *fh;
	unsigned long handle;

	mutex_lock(&dfile->fence_lock);
	xa_for_each(&dfile->fences, handle, fh)
		d3dq_fence_handle_destroy(dfile, file, handle);
	list_for_each_entry_safe(fpage, tmp, &dfile->fence_pages, link) {
		list_del_init(&fpage->link);
		d3dq_fence_page_put(fpage);
	}
	mutex_unlock(&dfile->fence_lock);
	xa_destroy(&dfile->fences);
	mutex_destroy(&dfile->fence_view_lock);
	mutex_destroy(&dfile->fence_lock);
}

static void d3dq_fence_device_fini(struct drm_device *drm, void *unused)
{
	struct d3dq_device *ddev = to_d3dq_dev(drm);

	WARN_ON(!list_empty(&ddev->fences));
	drm_vma_offset_manager_destroy(&ddev->fence_vma);
	/* Mappings of removed files keep their own references. */
	put_page(ddev->fence_ones);
}

int d3dq_fence_device_init(struct d3dq_device *ddev)
{
	ddev->fence_ones = alloc_page(GFP_KERNEL);
	if (!ddev->fence_ones)
		return -ENOMEM;
	memset(page_address(ddev->fence_ones), 0xff, PAGE_SIZE);
	spin_lock_init(&ddev->fences_lock);
	INIT_LIST_HEAD(&ddev->fences);
	drm_vma_offset_manager_init(&ddev->fence_vma, D3DQ_FENCE_PGOFF_START,
				    D3DQ_FENCE_PGOFF_SIZE);
	return drmm_add_action_or_reset(&ddev->drm, d3dq_fence_device_fini,
					NULL);
}

/* Unplug: every fence of the device, wherever it is held, goes to ~0. */
void d3dq_fence_device_remove(struct d3dq_device *ddev)
{
	struct d3dq_fence *fence;

	spin_lock(&ddev->fences_lock);
	/* No fence is made after this walk (d3dq_fence_create()). */
	ddev->fences_dead = true;
	list_for_each_entry(fence, &ddev->fences, link)
		d3dq_fence_remove_value(fence);
	list_for_each_entry(fence, &ddev->fences, link)
		d3dq_fence_remove_nodes(fence);
	spin_unlock(&ddev->fences_lock);
}
