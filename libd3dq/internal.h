/* SPDX-License-Identifier: MIT */
/*
 * libd3dq private declarations. The kernel does the work; the library
 * translates calls (Documentation/library.rst). No file calls one that
 * calls it (scripts/lib-layers): dispatch.c and abi.c at the bottom,
 * kernel.c, then fence.c, queue.c, buffer.c, cmdlist.c, clock.c, then
 * device.c. Lock order: queue->lock -> cmdlist->lock -> remove_lock ->
 * dev->lock | page_lock | reg_lock -> the dispatcher's lock; queue->lock
 * is held across that queue's SUBMITs (R16), remove_lock across a
 * removal, reg_lock (a reader-writer lock) written across the destruction
 * of a shared fence's @reg and read across each kernel call that names a
 * @reg (fence.c, queue.c).
 *
 * Lifetimes (issue 39): every object counts references, the program's
 * (until its *_destroy(), or d3dq_device_close()) and one for each call
 * in progress on it; each object holds one of its device, whose
 * descriptor and memory go with the last. A destroyed object and the
 * objects of a closed device answer -ENODEV to the calls still in
 * progress on them. In a child of fork() the objects the parent opened
 * are inherited (d3dqp_inherited()): every call refuses them before it
 * takes a lock or makes a kernel call (their locks may be held by
 * threads the child does not have, their file is the parent's).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef LIBD3DQ_INTERNAL_H
#define LIBD3DQ_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xf86drm.h>
#include "d3dq_drm.h"
#include "d3dq/d3dq.h"

#define D3DQ_EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* A minimal intrusive doubly-linked list. */
struct list {
	struct list *prev, *next;
};

static inline void list_init(struct list *l)
{
	l->prev = l;
	l->next = l;
}

static inline void list_add_tail(struct list *item, struct list *head)
{
	item->prev = head->prev;
	item->next = head;
	head->prev->next = item;
	head->prev = item;
}

static inline void list_del(struct list *item)
{
	item->prev->next = item->next;
	item->next->prev = item->prev;
	list_init(item);
}

#define list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

/* A mapped page of fence values (device.c), by its mmap offset. */
struct vpage {
	struct vpage *next;		/* dev->pages, under dev->page_lock */
	uint64_t offset;
	void *addr;
	unsigned int refs;		/* fences on it, under dev->page_lock */
	bool retired;			/* off dev->pages, see fence.c */
};

struct d3dq_device {
	int fd;
	_Atomic int refs;		/* the program's, each object's */
	_Atomic bool closed;		/* d3dq_device_close(), set under lock */
	unsigned int fork_gen;		/* d3dqp_fork_gen at open */
	bool tokens_closed;		/* under the dispatcher's lock */
	struct d3dq_device *disp_next;	/* callback devices, same lock */

	/* Kernel limits and features. */
	uint32_t max_syncs;
	uint32_t max_cmd_bytes;
	uint64_t max_delay_ns;
	uint64_t max_bo_size;		/* larger: -ENOMEM, as on Windows */
	bool has_realtime;		/* uapi 1.1: REALTIME queue priority */
	bool has_sync_file;		/* uapi 1.7: FENCE_EXPORT_SYNC_FILE */
	bool has_signal_on;		/* uapi 1.11: FENCE_SIGNAL_ON */
	bool has_event_armed;		/* uapi 1.11: FENCE_EVENT_ARMED */
	bool has_carry;			/* uapi 1.8: SUBMIT_CARRY */
	bool has_tail;			/* uapi 1.8: SUBMIT_TAIL */
	bool has_split;			/* uapi 1.10: SUBMIT_SPLIT */
	bool has_cyclic;		/* uapi 1.10: one handle per shared fence */
	bool has_implicit;		/* uapi 1.12: imports, SUBMIT_IMPLICIT */
	bool has_job_only;		/* uapi 1.13: SYNC_JOB_ONLY */
	bool has_armed_only;		/* uapi 1.14: SYNC_ARMED_ONLY */
	bool has_idle_word;		/* uapi 1.15: QUEUE_IDLE_WORD */
	long page_size;

	/* Events that are the program's tokens, see dispatch.c. */
	d3dq_signal_event_fn signal_event;
	void *event_context;

	_Atomic int reason;		/* removal reason once known */
	pthread_mutex_t remove_lock;	/* serialises d3dqp_dev_remove() */
	pthread_rwlock_t reg_lock;	/* shared fences' @reg, see fence.c */

	pthread_mutex_t lock;		/* the lists */
	struct list queues;
	struct list fences;
	struct list buffers;
	/*
	 * Imported buffers whose handle is open (buffer.c): a second
	 * import of one dma-buf gets the same handle, so imports and the
	 * closing of their handles take @import_lock (a leaf lock).
	 */
	pthread_mutex_t import_lock;
	struct list imports;
	struct list cmdlists;

	pthread_mutex_t page_lock;
	struct vpage *pages;
};

struct d3dq_fence {
	struct d3dq_device *dev;
	_Atomic int refs;
	_Atomic bool destroyed;		/* d3dq_fence_destroy() came */
	bool shared;
	struct list dev_link;		/* dev->fences, under dev->lock */
	uint32_t handle, reg, wake;	/* see fence.c; handle: atomic */
	const uint64_t *vp;		/* the value in the kernel's page */
	struct vpage *page;
};

struct d3dq_queue {
	struct d3dq_device *dev;
	_Atomic int refs;
	_Atomic bool destroyed;		/* d3dq_queue_destroy() came */
	uint32_t id;			/* kernel queue id */
	uint32_t tl;			/* timeline: point n = job n done */
	struct list dev_link;		/* dev->queues, under dev->lock */
	pthread_mutex_t lock;		/* submission order (R16) */
	bool dead;			/* @id destroyed, under lock */
	uint64_t tl_point;		/* last point submitted */
	/* The execute under lock asked for implicit sync (uapi 1.12). */
	bool implicit;
	/* The kernel's idle word (uapi 1.15), mapped; or NULL. */
	const uint64_t *idle;
	struct vpage *idle_page;
};

struct d3dq_buffer {
	struct d3dq_device *dev;
	_Atomic int refs;
	_Atomic bool destroyed;		/* d3dq_buffer_destroy() came */
	struct list dev_link;		/* dev->buffers, under dev->lock */
	uint32_t handle;
	uint64_t size;
	uint64_t map_size;
	void *map;			/* NULL: an import without a map */
	/* Imported (0.5): in dev->imports until its handle is closed. */
	bool imported;
	struct list import_link;
};

enum cmdlist_state { CMDLIST_RECORDING, CMDLIST_CLOSED };

struct d3dq_cmdlist {
	struct d3dq_device *dev;
	_Atomic int refs;
	_Atomic bool destroyed;		/* d3dq_cmdlist_destroy() came */
	struct list dev_link;		/* dev->cmdlists, under dev->lock */
	pthread_mutex_t lock;
	bool dead;			/* destroyed, under lock */
	enum cmdlist_state state;
	int error;			/* first recording error */
	uint8_t *data;
	size_t len, cap;
	struct d3dq_buffer **bufs;	/* named, a reference each (issue 39) */
	size_t nbufs, bufs_cap;
};

/* A kernel call: 0 or -errno (drmIoctl restarts on EINTR). */
static inline int d3dqp_ioctl(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

/* Shared between files: hidden, and prefixed for libd3dq.a's users. */
/*
 * dispatch.c: get/put when a callback device opens (after its fields are
 * set) and closes (the thread lives while one is open; put waits for
 * the device's registrations and refuses its later ones). A token
 * registration: claim() lists it, with @own, a syncobj of the owner's
 * file that the dispatcher keeps from then on, and for a single fence
 * the key it is de-duplicated by: 0 and @out (not armed yet), 1 when a
 * registration of the same key is pending (nothing listed), 2 when one
 * is that may have fired: the caller makes sure the points of those that
 * fired are there and claims again, @probed; -ENODEV once the owner was
 * put. Then import() its syncobj (@sfd, the caller closes it) into the
 * dispatcher's file, and arm() it once its kernel registration is made
 * (@fired: none could be, it fired), or cancel() it (the caller then
 * destroys @own).
 */
struct token_reg;
int d3dqp_dispatch_get(struct d3dq_device *dev);
void d3dqp_dispatch_put(struct d3dq_device *owner);
int d3dqp_dispatch_claim(struct d3dq_device *owner, uint32_t own,
			 uint32_t key_handle, uint64_t key_value,
			 void *token, bool probed, struct token_reg **out);
int d3dqp_dispatch_import(struct token_reg *r, int sfd);
void d3dqp_dispatch_arm(struct token_reg *r, bool fired);
void d3dqp_dispatch_cancel(struct token_reg *r);

/*
 * dispatch.c: fork(). The number of forks this process comes from since
 * the library was first used: the child's handler adds one (and forgets
 * the parent's dispatcher, whose thread and file it does not have), so a
 * device whose fork_gen differs is its parent's. d3dqp_fork_watch()
 * installs the handlers (once; before the first device opens).
 */
extern _Atomic unsigned int d3dqp_fork_gen;
void d3dqp_fork_watch(void);

static inline bool d3dqp_inherited(const struct d3dq_device *dev)
{
	return dev->fork_gen != atomic_load_explicit(&d3dqp_fork_gen,
						     memory_order_relaxed);
}

/* 0 while calls may use @dev; -ENODEV once closed, or inherited. */
static inline int d3dqp_dev_usable(const struct d3dq_device *dev)
{
	return d3dqp_inherited(dev) || atomic_load(&dev->closed) ? -ENODEV : 0;
}

/* abi.c. -EINVAL, or -EOPNOTSUPP for a priority the driver lacks. */
int d3dqp_queue_desc_to_uapi(const struct d3dq_queue_desc *desc,
			     struct drm_d3dq_queue_create *create);
int d3dqp_device_desc_copy(const struct d3dq_device_desc *desc,
			   struct d3dq_device_desc *out);

/* kernel.c. Kernel calls: 0 or -errno. */
int64_t d3dqp_abs_timeout(uint64_t timeout_ns);
int d3dqp_kfence_event(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		 uint32_t flags, int eventfd, uint32_t sobj, uint64_t point);
int d3dqp_vpage_map(struct d3dq_device *dev, uint64_t offset, uint32_t value_offset,
		    struct vpage **page, const uint64_t **vp);
void d3dqp_vpage_unmap(struct d3dq_device *dev, struct vpage *page);
/*
 * No new fence finds @page by its offset any more (the kernel may give
 * the offset to another page); it stays mapped for its fences.
 */
void d3dqp_vpage_retire(struct d3dq_device *dev, struct vpage *page);
/*
 * A reference to @dev, for an object or a call; the last put closes its
 * descriptor and frees it.
 */
void d3dqp_dev_get(struct d3dq_device *dev);
void d3dqp_dev_put(struct d3dq_device *dev);
/*
 * A call on @dev itself: a reference for its duration (put it with
 * d3dqp_dev_put()), or -ENODEV and none (closed, or inherited).
 */
static inline int d3dqp_dev_enter(struct d3dq_device *dev)
{
	int ret = d3dqp_dev_usable(dev);

	if (!ret)
		d3dqp_dev_get(dev);
	return ret;
}
/*
 * The removal reason (0: not removed), asking the kernel if needed;
 * -ENODEV for an inherited device (no kernel call).
 */
int d3dqp_dev_removal_error(struct d3dq_device *dev);
/* Link an object to @dev: -ENODEV once closed, or the removal reason. */
int d3dqp_dev_link_object(struct d3dq_device *dev, struct list *link,
			  struct list *head);
/* Wait for @q's oldest job if it is armed: 1, 0 (none is) or -errno. */
int d3dqp_queue_wait_armed(struct d3dq_queue *q);
/* 0, or REMOVE's error (the device then stays as it was). */
int d3dqp_dev_remove(struct d3dq_device *dev, int reason);
/*
 * The last reference of each kind of object (fence.c, queue.c, buffer.c,
 * cmdlist.c) frees it; obj_get() takes one.
 */
#define obj_get(obj) atomic_fetch_add(&(obj)->refs, 1)
void d3dqp_fence_put(struct d3dq_fence *f);
/* FENCE_SIGNAL of @f through @handle, with d3dq_fence_signal()'s errors. */
int d3dqp_fence_set(struct d3dq_fence *f, uint32_t handle, uint64_t value);
void d3dqp_queue_put(struct d3dq_queue *q);
void d3dqp_buffer_put(struct d3dq_buffer *buf);
void d3dqp_cmdlist_put(struct d3dq_cmdlist *l);

/*
 * A fence's handle: 0 once a shared fence with a handle of its own
 * (uapi 1.10, has_cyclic) was destroyed; its registrations' handle,
 * @reg before 1.10 (fence.c). Read under dev->reg_lock where a number
 * that the kernel gave to another handle must never be named.
 */
static inline uint32_t d3dqp_fence_handle(const struct d3dq_fence *f)
{
	return __atomic_load_n(&f->handle, __ATOMIC_ACQUIRE);
}

static inline uint32_t d3dqp_fence_reg(const struct d3dq_fence *f)
{
	return f->shared && !f->dev->has_cyclic ? f->reg :
	       d3dqp_fence_handle(f);
}

/* Call the device's callback with @token once (@fv, @n, @flags) hold. */
int d3dqp_token_add(struct d3dq_device *dev, const struct drm_d3dq_fence_value *fv,
		    uint32_t n, uint32_t flags, void *token);

#endif /* LIBD3DQ_INTERNAL_H */
