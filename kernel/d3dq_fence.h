/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq fences: a 64-bit value in a page userspace maps read-only, CPU
 * signals, CPU waits and kernel-held eventfds (see "Fences" in
 * Documentation/driver.rst).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_FENCE_H_
#define _D3DQ_FENCE_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct d3dq_device;
struct d3dq_fence_page;
struct d3dq_file;
struct d3dq_user;
struct drm_device;
struct drm_file;
struct file;
struct vm_area_struct;

/**
 * struct d3dq_fence - One fence, shared by every file that has a handle.
 *
 * Reference counted: every handle, exported file, waiter and event
 * registration holds a reference. The fence refers to its device, never
 * to a file, so it outlives the file that created it.
 */
struct d3dq_fence {
	struct kref ref;
	struct d3dq_device *ddev;	/* holds a drm_dev reference */
	struct d3dq_user *user;		/* counted against, referenced */
	struct d3dq_fence_page *fpage;	/* holds a reference */
	u32 slot;
	bool shared;

	/*
	 * Protects the value's writes, @removed and @nodes. Taken with
	 * interrupts off: the value may be written from any context that
	 * can take a spinlock (a fence callback, later).
	 */
	spinlock_t lock;
	u64 *value;			/* in the page; read locklessly */
	bool removed;			/* at ~0 for good (device removal) */
	/* Pending waits and registrations (&struct d3dq_fence_node), by value. */
	struct list_head nodes;
	/*
	 * The eventfds of pending single-fence registrations, each once
	 * (&struct d3dq_fence_evt), and a count of the value's changes:
	 * one change signals each of them at most once (R10).
	 */
	struct list_head evts;
	u64 changes;

	struct list_head link;		/* in d3dq_device.fences */
};

void d3dq_fence_write_locked(struct d3dq_fence *fence, u64 value);

int d3dq_fence_device_init(struct d3dq_device *ddev);
void d3dq_fence_device_remove(struct d3dq_device *ddev);
void d3dq_fence_file_init(struct d3dq_file *dfile);
void d3dq_fence_file_remove(struct d3dq_file *dfile);
void d3dq_fence_file_fini(struct d3dq_file *dfile, struct drm_file *file);
int d3dq_fence_mmap(struct drm_file *file, struct vm_area_struct *vma);
bool d3dq_fence_mmap_offset(unsigned long pgoff);

int d3dq_ioctl_fence_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_fence_destroy(struct drm_device *drm, void *data,
			     struct drm_file *file);
int d3dq_ioctl_fence_export(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_fence_import(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_fence_signal(struct drm_device *drm, void *data,
			    struct drm_file *file);
int d3dq_ioctl_fence_wait(struct drm_device *drm, void *data,
			  struct drm_file *file);
int d3dq_ioctl_fence_event(struct drm_device *drm, void *data,
			   struct drm_file *file);

#endif /* _D3DQ_FENCE_H_ */
