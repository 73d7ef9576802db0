// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fence pages: the pages that hold fence values, their slots and
 * mmap offsets, and the read-only mappings userspace reads the values
 * through (what a removed file's mappings show included).
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_vma_manager.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_fence_internal.h"

/* --- pages ------------------------------------------------------------- */

struct d3dq_fence_page *d3dq_fence_page_create(struct d3dq_device *ddev)
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

void d3dq_fence_page_put(struct d3dq_fence_page *fpage)
{
	kref_put(&fpage->ref, d3dq_fence_page_release);
}

/*
 * A slot for a fence that is not shared, in one of the file's pages
 * (dfile->fence_lock held); the page gets a reference for the fence.
 */
struct d3dq_fence_page *d3dq_fence_slot_get(struct d3dq_file *dfile,
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

void d3dq_fence_slot_put(struct d3dq_fence_page *fpage, u32 slot)
{
	spin_lock(&fpage->lock);
	__clear_bit(slot, fpage->used);
	spin_unlock(&fpage->lock);
	d3dq_fence_page_put(fpage);
}

/* --- words ------------------------------------------------------------- */

/*
 * A word of @file's pages for its owner to write (see struct
 * d3dq_fence_word), set to 0, which @file may map until
 * d3dq_fence_word_revoke(). Refused once the file was removed (-ENODEV);
 * -ENOMEM. The slot is taken as a fence's is, so the page lives while
 * the word does, whatever happens to the file.
 */
int d3dq_fence_word_get(struct drm_file *file, struct d3dq_fence_word *word)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_fence_page *fpage;
	int ret = -ENODEV;

	mutex_lock(&dfile->fence_lock);
	if (dfile->fences_removed)
		goto out;
	fpage = d3dq_fence_slot_get(dfile, &word->slot);
	ret = PTR_ERR_OR_ZERO(fpage);
	if (ret)
		goto out;
	ret = drm_vma_node_allow(&fpage->node, file);
	if (ret) {
		d3dq_fence_slot_put(fpage, word->slot);
		goto out;
	}
	word->fpage = fpage;
	word->value = &fpage->values[word->slot];
	/* The slot may have been a fence's: nobody reads it yet. */
	WRITE_ONCE(*word->value, 0);
	word->allowed = true;
out:
	mutex_unlock(&dfile->fence_lock);
	return ret;
}

void d3dq_fence_word_offsets(const struct d3dq_fence_word *word,
			     u64 *mmap_offset, u32 *value_offset)
{
	*mmap_offset = drm_vma_node_offset_addr(&word->fpage->node);
	*value_offset = word->slot * sizeof(u64);
}

/* @file may no longer map the word's page for it (mappings stay). */
void d3dq_fence_word_revoke(struct drm_file *file,
			    struct d3dq_fence_word *word)
{
	if (!word->allowed)
		return;
	word->allowed = false;
	drm_vma_node_revoke(&word->fpage->node, file);
}

/* Free the word's slot, revoked first. */
void d3dq_fence_word_put(struct d3dq_fence_word *word)
{
	if (!word->value)
		return;
	WARN_ON_ONCE(word->allowed);
	d3dq_fence_slot_put(word->fpage, word->slot);
	word->value = NULL;
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

/*
 * Zap every mapping of @fpage (the device's address space, so every
 * file's): each refaults through d3dq_fence_vm_fault(), which shows a
 * removed file the device's page of ~0 and any other file the page.
 */
void d3dq_fence_page_zap(struct d3dq_device *ddev,
			 struct d3dq_fence_page *fpage)
{
	unmap_mapping_range(ddev->drm.anon_inode->i_mapping,
			    drm_vma_node_offset_addr(&fpage->node), PAGE_SIZE,
			    1);
}
