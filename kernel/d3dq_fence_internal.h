/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq fences, inside the driver: the structures the fence files share
 * (pages, handles, nodes, conditions) and the functions they call in
 * each other. Not for the rest of the driver, which uses d3dq_fence.h.
 * Lifetime and locking: "Fences" in Documentation/driver.rst.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_FENCE_INTERNAL_H_
#define _D3DQ_FENCE_INTERNAL_H_

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_vma_manager.h>

struct d3dq_fence;
struct d3dq_file;
struct d3dq_device;
struct d3dq_queue;
struct d3dq_release_fence;
struct d3dq_user;
struct dma_fence_chain;
struct drm_file;
struct drm_syncobj;
struct eventfd_ctx;

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
 * them the change satisfies). In the fence's tree of them, by eventfd,
 * while a registration uses it; everything under the fence's lock.
 */
struct d3dq_fence_evt {
	struct rb_node rb;		/* fence->evts */
	struct eventfd_ctx *ctx;	/* a key: each user holds the ctx */
	unsigned int users;
	u64 signalled;			/* the fence change that last did */
	u64 drained;			/* the same, for a write's batches */
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
	/*
	 * A held job's wait not bound yet: in its file's @fence_held (see
	 * &struct d3dq_file); a registration with
	 * %DRM_D3DQ_FENCE_EVENT_ARMED (its condition's @armed) that no
	 * armed signal brings yet: in its file's @fence_armed; else cleared.
	 */
	struct rb_node hrb;
	/*
	 * A job's wait bound to a pending signal of its file: that signal,
	 * and the link on its @bound (under the fence's lock), else NULL.
	 */
	struct d3dq_fence_qsignal *bound_to;
	struct list_head blink;
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
	/*
	 * CPU waits: the waiter's wait queue, and @woken, set under its
	 * lock (d3dq_fence_cond_wake()) by whoever fired the condition: in
	 * a value write's batch only once the fence's lock is dropped
	 * (d3dq_fence_fire()). That unlock is the firing's last touch of
	 * the condition, so the waiter frees it only after it has seen
	 * @woken under the same lock. @any: FENCE_WAIT_ANY with several
	 * nodes, some of which may still be listed once it fired.
	 */
	wait_queue_head_t wq;
	bool woken;
	bool any;
	struct work_struct work;	/* registrations: unlink and free */
	struct llist_node done;		/* eventfd ones: in the next batch */
	struct d3dq_file *dfile;	/* registrations: holds a reference */
	/*
	 * The user @count nodes are counted against (max_user_fence_nodes)
	 * once armed, or NULL. Not referenced: the condition goes before
	 * the file it came through, which holds the user.
	 */
	struct d3dq_user *user;
	u32 count;
	bool armed;			/* %DRM_D3DQ_FENCE_EVENT_ARMED */
	struct d3dq_fence_node nodes[];
};

/* d3dq_fence.c */
bool d3dq_fence_file_removed(struct d3dq_file *dfile);
void d3dq_fence_get(struct d3dq_fence *fence);
struct d3dq_fence_handle *
d3dq_fence_handle_lookup(struct d3dq_file *dfile, u32 handle);
void d3dq_fence_handle_put(struct d3dq_fence_handle *fh);
struct d3dq_fence *d3dq_fence_lookup(struct d3dq_file *dfile,
				     u32 handle);
void d3dq_fence_put(struct d3dq_fence *fence);

/* d3dq_fence_wait.c */
void d3dq_fence_kicks_arm(struct d3dq_fence_kicks *kicks,
			  struct d3dq_file *dfile);

/* d3dq_fence_import.c */
bool d3dq_fence_import_write_locked(struct d3dq_fence *fence);

/* d3dq_fence_job.c */
void d3dq_fence_held_unlist(struct d3dq_fence_node *node);
bool d3dq_fence_armed_list(struct d3dq_fence_node *node);

/* d3dq_fence_page.c */
struct d3dq_fence_page *d3dq_fence_page_create(struct d3dq_device *ddev);
void d3dq_fence_page_put(struct d3dq_fence_page *fpage);
struct d3dq_fence_page *d3dq_fence_slot_get(struct d3dq_file *dfile,
					    u32 *slot);
void d3dq_fence_slot_put(struct d3dq_fence_page *fpage, u32 slot);
void d3dq_fence_page_zap(struct d3dq_device *ddev,
			 struct d3dq_fence_page *fpage);

/* d3dq_fence_wait.c */
void d3dq_fence_cond_free(struct d3dq_fence_cond *cond);
void d3dq_fence_cond_unlink(struct d3dq_fence_cond *cond);
void d3dq_fence_node_done(struct d3dq_fence_node *node);
void d3dq_fence_change_locked(struct d3dq_fence *fence);
bool d3dq_fence_drain_atomic(struct d3dq_fence *fence);
bool d3dq_fence_node_gone(struct d3dq_fence_node *node);
void d3dq_fence_node_list(struct d3dq_fence_node *node);
struct d3dq_fence_node *d3dq_fence_node_of(struct rb_node *rb);
void d3dq_fence_remove_nodes(struct d3dq_fence *fence);
void d3dq_fence_remove_value(struct d3dq_fence *fence);

#endif /* _D3DQ_FENCE_INTERNAL_H_ */
