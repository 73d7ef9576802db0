// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq buffers: shmem GEM objects, pinned and mapped into the kernel when
 * they are created so that the engine never faults.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-buf.h>
#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_prime.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_gem.h"

static void d3dq_gem_free(struct drm_gem_object *obj)
{
	struct d3dq_bo *bo = to_d3dq_bo(obj);
	struct d3dq_device *ddev = to_d3dq_dev(obj->dev);

	struct d3dq_file *owner = bo->owner;
	size_t size = obj->size;

	/* Another driver's buffer: mapped through its dma-buf (uapi 1.12). */
	if (bo->vaddr && obj->import_attach)
		d3dq_dma_buf_vunmap(obj->import_attach->dmabuf, &bo->map);
	else if (bo->vaddr)
		d3dq_gem_vunmap(&bo->base, &bo->map);
	/* An import's: unmaps and detaches the dma-buf, and puts it. */
	drm_gem_shmem_free(&bo->base);
	atomic_dec(&ddev->count.bos);
	if (!owner)
		return;
	atomic_dec(&owner->bos);
	atomic64_sub(size, &owner->bo_bytes);
	d3dq_file_put(owner);
}

static const struct drm_gem_object_funcs d3dq_gem_funcs = {
	.free = d3dq_gem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
	D3DQ_GEM_FUNCS_STATUS
};

bool d3dq_is_bo(struct drm_gem_object *obj)
{
	return obj->funcs == &d3dq_gem_funcs;
}

struct drm_gem_object *d3dq_gem_create_object(struct drm_device *drm,
					      size_t size)
{
	struct d3dq_bo *bo;

	bo = kzalloc(sizeof(*bo), D3DQ_GFP);
	if (!bo)
		return ERR_PTR(-ENOMEM);

	/* Cached on both sides: CPU mmap and engine see the same pages. */
	bo->base.map_wc = false;
	bo->base.base.funcs = &d3dq_gem_funcs;
	return &bo->base.base;
}

/*
 * DOC: PRIME import
 *
 * From uapi 1.12 a dma-buf of another driver (or of another d3dq device)
 * imports as a d3dq buffer that commands may name like any other. The DRM
 * core attaches it to the device and maps the attachment
 * (drm_gem_shmem_prime_import_sg_table() makes the object, with the
 * dma-buf's reservation object as its own); here the whole buffer is
 * then mapped into the kernel with dma_buf_vmap(), once, for the
 * object's life, so that the engine reads and writes it as it does a
 * d3dq buffer, never faulting. The exporter keeps the pages pinned while
 * they are mapped. The mapping must be memory (not I/O memory, which the
 * engine's memcpy() and cmpxchg64() cannot use) that the CPU sees
 * coherently without dma_buf_begin_cpu_access(): shmem-backed exporters
 * such as vgem, and GPU buffers in system memory. A buffer this device
 * exported comes back as the same object, as before.
 *
 * Lifetime: the object holds the attachment, the mapping and a reference
 * on the dma-buf (so the exporter's buffer) until its last handle and
 * the last job that names it are gone; then d3dq_gem_free() unmaps,
 * detaches and puts it. Closing the exporter's handle or file meanwhile
 * changes nothing for d3dq. Imports are counted with the device's buffers
 * (debugfs "bos") but not against a file's buffers or bytes: the memory
 * is the exporter's.
 *
 * Errors (of DRM_IOCTL_PRIME_FD_TO_HANDLE): -EINVAL when the exporter
 * offers no kernel mapping (dma_buf_vmap() refuses), -EOPNOTSUPP when it
 * maps I/O memory, or the exporter's own error (-ENOMEM...); -EBADF or
 * -EINVAL for an fd that is not a dma-buf, as before.
 */
struct drm_gem_object *d3dq_gem_prime_import(struct drm_device *drm,
					     struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj;
	struct d3dq_bo *bo;
	int ret;

	obj = drm_gem_prime_import(drm, dma_buf);
	if (IS_ERR(obj) || !obj->import_attach)
		return obj;	/* an error, or this device's own buffer */

	bo = to_d3dq_bo(obj);
	atomic_inc(&to_d3dq_dev(drm)->count.bos);
	ret = d3dq_dma_buf_vmap(dma_buf, &bo->map);
	if (!ret && bo->map.is_iomem) {
		d3dq_dma_buf_vunmap(dma_buf, &bo->map);
		ret = -EOPNOTSUPP;
	}
	if (ret) {
		iosys_map_clear(&bo->map);
		drm_gem_object_put(obj);
		return ERR_PTR(ret);
	}
	bo->vaddr = bo->map.vaddr;
	return obj;
}

int d3dq_ioctl_bo_create(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_d3dq_bo_create *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_gem_shmem_object *shmem;
	struct d3dq_bo *bo;
	u64 size;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (!args->size || args->size > d3dq_max_bo_size)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);

	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	bo = container_of(shmem, struct d3dq_bo, base);
	/*
	 * Counted only now: when drm_gem_shmem_create() fails after calling
	 * gem_create_object, it kfree()s the object without .free. The
	 * pages are charged to the caller's memory cgroup by shmem itself,
	 * as they are allocated below.
	 */
	atomic_inc(&to_d3dq_dev(drm)->count.bos);
	bo->owner = dfile;
	d3dq_file_get(dfile);
	atomic_inc(&dfile->bos);
	atomic64_add(shmem->base.size, &dfile->bo_bytes);

	/* Mapping the object also takes (and keeps) its pages. */
	ret = d3dq_gem_vmap(shmem, &bo->map);
	if (ret)
		goto out_put;
	bo->vaddr = bo->map.vaddr;

	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	if (ret)
		goto out_put;

	args->size = size;
out_put:
	/* The handle, if any, holds the object now. */
	drm_gem_object_put(&shmem->base);
	return ret;
}

int d3dq_ioctl_bo_mmap_offset(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct drm_d3dq_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);

	drm_gem_object_put(obj);
	return ret;
}
