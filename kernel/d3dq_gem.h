/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq buffers: pinned, kernel-mapped shmem GEM objects.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_GEM_H_
#define _D3DQ_GEM_H_

#include <linux/iosys-map.h>
#include <linux/types.h>

#include <drm/drm_gem_shmem_helper.h>

struct d3dq_file;
struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;

/**
 * struct d3dq_bo - A buffer: a pinned, kernel-mapped shmem GEM object.
 */
struct d3dq_bo {
	struct drm_gem_shmem_object base;
	struct iosys_map map;
	void *vaddr;
	/*
	 * The file that created it, counted there until freed; NULL for
	 * another driver's dma-buf imported (uapi 1.12, mapped through it).
	 */
	struct d3dq_file *owner;
};

static inline struct d3dq_bo *to_d3dq_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct d3dq_bo, base);
}

struct drm_gem_object *d3dq_gem_create_object(struct drm_device *drm,
					      size_t size);
bool d3dq_is_bo(struct drm_gem_object *obj);
struct drm_gem_object *d3dq_gem_prime_import(struct drm_device *drm,
					     struct dma_buf *dma_buf);
int d3dq_ioctl_bo_create(struct drm_device *drm, void *data,
			 struct drm_file *file);
int d3dq_ioctl_bo_mmap_offset(struct drm_device *drm, void *data,
			      struct drm_file *file);

#endif /* _D3DQ_GEM_H_ */
