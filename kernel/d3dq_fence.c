// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences: the fence object, its handles, and the ioctls that make,
 * share, signal and destroy them; what a file's close, its removal and
 * an unplug do to the fences. Lifetime and locking: "Fences" in
 * Documentation/driver.rst.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_vma_manager.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_fence_internal.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

static const struct file_operations d3dq_fence_fops;

/* --- fences ------------------------------------------------------------ */

void d3dq_fence_get(struct d3dq_fence *fence)
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
	WARN_ON(!RB_EMPTY_ROOT(&fence->evts));
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

void d3dq_fence_put(struct d3dq_fence *fence)
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
	fence->evts = RB_ROOT;
	init_llist_head(&fence->imports_done);
	INIT_LIST_HEAD(&fence->imports);
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

void d3dq_fence_handle_put(struct d3dq_fence_handle *fh)
{
	kref_put(&fh->ref, d3dq_fence_handle_free);
}

/* @handle of @dfile, referenced, or NULL. */
struct d3dq_fence_handle *
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
struct d3dq_fence *d3dq_fence_lookup(struct d3dq_file *dfile,
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
bool d3dq_fence_file_removed(struct d3dq_file *dfile)
{
	return READ_ONCE(dfile->fences_removed);
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
	/*
	 * Cyclic (uapi 1.10): a destroyed handle's number comes back only
	 * after INT_MAX others, so that a call racing a destruction finds
	 * no handle (-ENOENT), never another fence.
	 */
	ret = xa_alloc_cyclic(&dfile->fences, handle, fh,
			      XA_LIMIT(1, INT_MAX), &dfile->fence_next,
			      D3DQ_GFP);
	if (ret > 0)	/* wrapped */
		ret = 0;
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
	d3dq_fence_change_locked(fence);
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
	/* A removed file shares nothing any more, as it creates nothing. */
	if (d3dq_fence_file_removed(dfile)) {
		ret = -ENODEV;
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
	u64 change;
	int ret = 0;

	if (args->flags)
		return -EINVAL;

	fence = d3dq_fence_lookup(dfile, args->handle);
	if (!fence)
		return -ENOENT;
	spin_lock_irqsave(&fence->lock, flags);
	/* A write in progress ends first (a batch per hold of the lock). */
	d3dq_fence_drain_locked(fence, &flags, 0, NULL);
	if (fence->removed || d3dq_fence_file_removed(dfile)) {
		ret = -ENODEV;
	} else {
		change = d3dq_fence_write_locked(fence, args->value);
		d3dq_fence_drain_locked(fence, &flags, change, &kicks);
	}
	spin_unlock_irqrestore(&fence->lock, flags);
	d3dq_fence_put(fence);
	/* Held jobs it released: armed (and run, if small) here. */
	d3dq_fence_kicks_arm(&kicks, dfile);
	return ret;
}

/* --- files and devices ------------------------------------------------- */

void d3dq_fence_file_init(struct d3dq_file *dfile)
{
	mutex_init(&dfile->fence_lock);
	mutex_init(&dfile->fence_view_lock);
	spin_lock_init(&dfile->fence_jobs_lock);
	dfile->fence_signals = RB_ROOT;
	dfile->fence_held = RB_ROOT;
	dfile->fence_armed = RB_ROOT;
	spin_lock_init(&dfile->fence_imports_lock);
	INIT_LIST_HEAD(&dfile->fence_imports);
	xa_init_flags(&dfile->fences, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&dfile->fence_pages);
}

/**
 * d3dq_fence_file_remove - A file's removal reaches its fences (R15, R20).
 * @dfile: the file, whose queues are stopped already
 *
 * Removal is the removed file's affair. Its handles read ~0 from now on,
 * at one instant for its mappings (R15): every page the file maps, its
 * own fence pages and its views of shared fences, is zapped under
 * fence_view_lock, which each refault takes and which so keeps them all
 * from showing ~0 (the device's page of ~0, d3dq_fence_vm_fault()) until
 * the last is zapped: a reader never sees one fence at ~0 and a later
 * one still at its value. The value of a fence only the file holds is
 * then set to ~0 for good, while the other holders of a shared fence
 * keep the real value. Then every node made through the file's handles
 * is released (its CPU waits, events and held jobs' waits), in a second
 * pass, so that whoever a removal wakes finds every fence of the file at
 * ~0 already. Other holders' nodes, their signals
 * and their rewinds are untouched; the file's own pending signals never
 * take effect, as its jobs were cancelled (and so do its pending signals
 * of other drivers' work, uapi 1.11). FENCE_SIGNAL and
 * FENCE_EXPORT_SYNC_FILE through the file return -ENODEV, and no handle
 * is made any more.
 *
 * dfile->fence_lock is held throughout: no handle of the file is
 * destroyed under the walk, which so holds what it walks.
 */
void d3dq_fence_file_remove(struct d3dq_file *dfile)
{
	struct d3dq_fence_page *fpage;
	struct d3dq_fence_handle *fh;
	unsigned long handle;

	mutex_lock(&dfile->fence_lock);
	mutex_lock(&dfile->fence_view_lock);
	WRITE_ONCE(dfile->fences_removed, true);
	list_for_each_entry(fpage, &dfile->fence_pages, link)
		d3dq_fence_page_zap(dfile->ddev, fpage);
	xa_for_each(&dfile->fences, handle, fh)
		if (fh->fence->shared)
			d3dq_fence_page_zap(dfile->ddev, fh->fence->fpage);
	mutex_unlock(&dfile->fence_view_lock);
	/* Like its jobs, its pending signals of other drivers' work. */
	d3dq_fence_imports_cancel(dfile);
	xa_for_each(&dfile->fences, handle, fh)
		if (!fh->fence->shared)
			d3dq_fence_remove_value(fh->fence);
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

	d3dq_fence_imports_cancel(dfile);
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
