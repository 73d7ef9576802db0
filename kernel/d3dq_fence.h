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
#include <linux/llist.h>
#include <linux/rbtree_types.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct d3dq_device;
struct d3dq_fence_cond;
struct d3dq_fence_page;
struct d3dq_file;
struct d3dq_queue;
struct d3dq_release_fence;
struct d3dq_user;
struct dma_fence;
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
struct d3dq_fence_cond;
struct d3dq_queue;
struct d3dq_release_fence;

/* Queues a CPU signal arms in its own call, each referenced, once. */
#define D3DQ_FENCE_KICKS	8
struct d3dq_fence_kicks {
	struct d3dq_queue *queues[D3DQ_FENCE_KICKS];
	u32 count;
};

/* Nodes one hold of a fence's lock satisfies, at most. */
#define D3DQ_FENCE_BATCH	32

/*
 * What a batch of a value write satisfied and fires once the fence's
 * lock is dropped (d3dq_fence_drain_locked()): CPU waiters to wake
 * (@cond, unreferenced: the waiter frees it only once woken), eventfds
 * to signal, each with its registration's firing reference (@cond), and
 * released job waits, each a referenced release fence to signal and a
 * referenced queue to arm, either may be NULL.
 */
struct d3dq_fence_fired {
	u32 count;
	struct {
		struct d3dq_fence_cond *cond;
		struct d3dq_release_fence *rf;
		struct d3dq_queue *queue;
	} fires[D3DQ_FENCE_BATCH];
};

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
	/*
	 * Pending waits and registrations (&struct d3dq_fence_node): an
	 * rbtree by value, equal values in the order they were listed, the
	 * lowest cached.
	 */
	struct rb_root_cached nodes;
	/*
	 * The eventfds of pending single-fence registrations, each once
	 * (&struct d3dq_fence_evt), by eventfd; and a count of the value's
	 * changes: one change signals each of them at most once (R10).
	 */
	struct rb_root evts;
	u64 changes;
	/*
	 * A value write satisfies the nodes it reaches a batch per hold of
	 * @lock (d3dq_fence_drain_locked()): while @draining, the nodes at
	 * or below @drain_to are those of the write of change @drain_change
	 * still to satisfy, and no other write begins. @fire_change and
	 * @fire_drain: the change the nodes being satisfied fire for.
	 */
	bool draining;
	bool fire_drain;
	u64 drain_to;
	u64 drain_change;
	u64 fire_change;
	/* While a batch of a write runs (under @lock): what it fires after. */
	struct d3dq_fence_fired *fired;
	/*
	 * Signals of other drivers' work (uapi 1.11, &struct
	 * d3dq_fence_import) whose dma-fence signalled: added without a
	 * lock by its callback to @imports_done, moved in that order to
	 * @imports (under @lock), and written there before any other write
	 * begins (d3dq_fence_drain_locked()).
	 */
	struct llist_head imports_done;
	struct list_head imports;

	struct list_head link;		/* in d3dq_device.fences */
};

/**
 * struct d3dq_fence_qsignal - A fence signal of a job (uapi 1.4).
 *
 * Part of its job. Listed in its file's @fence_signals, under the
 * fence's lock and the file's @fence_jobs_lock, from the job's arming
 * until the job completes (the value is written then) or fails (nothing
 * is written): while listed, a fence wait submitted through the same
 * file may depend on @done. Only that file's submits look it up, so no
 * other file's signals cost them anything.
 */
struct d3dq_fence_qsignal {
	struct rb_node rb;		/* dfile->fence_signals; or cleared */
	struct d3dq_fence *fence;	/* holds a reference */
	/* The submitting file: its job's queue holds it. */
	struct d3dq_file *dfile;
	/* The job's fence, while listed: the job holds it. */
	struct dma_fence *done;
	/*
	 * The fence waits of the same file whose release fences are bound
	 * to @done (&struct d3dq_fence_node, under the fence's lock): if
	 * the job ends without writing, each is bound to another pending
	 * signal of the file that brings its value, if there is one.
	 */
	struct list_head bound;
	u64 value;
};

u64 d3dq_fence_write_locked(struct d3dq_fence *fence, u64 value);
void d3dq_fence_drain_locked(struct d3dq_fence *fence, unsigned long *flags,
			     u64 change, struct d3dq_fence_kicks *kicks);

int d3dq_fence_qsignal_init(struct d3dq_file *dfile, u32 handle, u64 value,
			    struct d3dq_fence_qsignal *qs);
void d3dq_fence_qsignal_arm(struct d3dq_fence_qsignal *qs,
			    struct dma_fence *done);
void d3dq_fence_qsignal_end(struct d3dq_fence_qsignal *qs, bool write);
void d3dq_fence_qsignal_fini(struct d3dq_fence_qsignal *qs);
int d3dq_fence_qwait_create(struct d3dq_file *dfile, u32 handle, u64 value,
			    struct d3dq_queue *hold,
			    struct d3dq_fence_cond **condp,
			    struct d3dq_release_fence **rfp,
			    struct dma_fence **waitedp);
void d3dq_fence_qwait_free(struct d3dq_fence_cond *cond);
size_t d3dq_fence_qwait_bytes(void);

int d3dq_fence_device_init(struct d3dq_device *ddev);
void d3dq_fence_device_remove(struct d3dq_device *ddev);
void d3dq_fence_events_flush(void);
void d3dq_fence_file_init(struct d3dq_file *dfile);
void d3dq_fence_file_remove(struct d3dq_file *dfile);
void d3dq_fence_file_fini(struct d3dq_file *dfile, struct drm_file *file);
int d3dq_fence_mmap(struct drm_file *file, struct vm_area_struct *vma);
bool d3dq_fence_mmap_offset(unsigned long pgoff);

/*
 * A word of a file's fence value pages that is not a fence's (a queue's
 * idle word, uapi 1.15): mapped read-only like a fence's value, written
 * by its owner only. @value is NULL while there is none.
 */
struct d3dq_fence_word {
	struct d3dq_fence_page *fpage;
	u64 *value;
	u32 slot;
	bool allowed;	/* @file may map the page: revoked once */
};

int d3dq_fence_word_get(struct drm_file *file, struct d3dq_fence_word *word);
void d3dq_fence_word_offsets(const struct d3dq_fence_word *word,
			     u64 *mmap_offset, u32 *value_offset);
void d3dq_fence_word_revoke(struct drm_file *file,
			    struct d3dq_fence_word *word);
void d3dq_fence_word_put(struct d3dq_fence_word *word);

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
int d3dq_ioctl_fence_signal_on(struct drm_device *drm, void *data,
			       struct drm_file *file);
void d3dq_fence_imports_cancel(struct d3dq_file *dfile);
void d3dq_fence_imports_flush(void);
int d3dq_ioctl_fence_export_sync_file(struct drm_device *drm, void *data,
				      struct drm_file *file);

#endif /* _D3DQ_FENCE_H_ */
