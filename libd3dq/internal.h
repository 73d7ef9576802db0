/* SPDX-License-Identifier: MIT */
/*
 * libd3dq private declarations.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Lock order (outer first):
 *   queue->lock -> device->remove_lock -> device->lock
 *     -> queue->pend_lock, fence->lock
 *     -> device->flush_lock, device->doorbell_lock, multi->lock
 * Nobody takes a queue lock while holding a fence or device lock, and no
 * queue lock is taken while another queue lock is held: queues that became
 * flushable are put on the device's flush list and flushed once the caller
 * has dropped its own locks (dev_run_flushes()).
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
#include "compat/drm_syncobj_eventfd.h"

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

static inline bool list_empty(const struct list *l)
{
	return l->next == l;
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

struct d3dq_device {
	int fd;
	/*
	 * Removal: "stopped" once the driver stopped every job (queue work is
	 * refused and shared fences read UINT64_MAX from then on); the reason
	 * is published once every local fence reads UINT64_MAX, before any
	 * waiter is released.
	 */
	_Atomic bool stopped;
	_Atomic int removed_reason;
	pthread_mutex_t remove_lock;	/* serialises dev_remove() */

	/* Kernel limits. */
	uint32_t max_syncs;
	uint32_t max_cmd_bytes;
	uint64_t max_delay_ns;
	bool has_syncobj_eventfd;

	pthread_mutex_t lock;		/* queues, fences, worker state */
	struct list queues;
	struct list fences;

	/* Queues waiting to be flushed, see holdback.c. */
	pthread_mutex_t flush_lock;
	struct d3dq_queue *flush_head;
	struct d3dq_queue *flush_tail;

	/* Fence worker, see worker.c. */
	bool worker_started;
	bool worker_quit;
	pthread_t worker;
	uint32_t doorbell;		/* timeline syncobj */
	pthread_mutex_t doorbell_lock;
	_Atomic uint64_t doorbell_point;

	/*
	 * Second thread, started with the first queue wait on a shared fence
	 * value nobody has submitted yet: waits for such values to become
	 * available (submitted, possibly by another process).
	 */
	bool avail_started;
	pthread_t avail;
	uint32_t avail_doorbell;	/* timeline syncobj */
	_Atomic uint64_t avail_doorbell_point;
};

/* A queue signal that was submitted and not yet applied to its fence. */
struct pending_update {
	struct list fence_link;		/* fence->pending, under fence->lock */
	struct list queue_link;		/* queue->pending, under pend_lock */
	struct d3dq_fence *fence;	/* reference */
	struct d3dq_queue *queue;	/* reference */
	uint64_t value;			/* D3D12 value */
	uint64_t point;			/* point on queue->tl */
	uint64_t order;			/* per fence submission order */
};

/*
 * A queue wait whose value was not reached when it was queued. It is
 * satisfied (sticky) or resolved to a submitted syncobj point.
 */
struct ticket {
	struct list link;		/* fence->tickets while unresolved */
	struct d3dq_queue *queue;	/* owner, no reference */
	uint64_t value;
	bool in_list;
	bool satisfied;
	bool resolved;
	bool same_queue;		/* resolved by the owner's own order */
	uint32_t wait_handle;
	uint64_t wait_point;
	struct d3dq_queue *wait_queue;	/* reference keeping wait_handle alive */
};

/* An event registration (single or part of a multi-fence one). */
struct multi_reg;

struct ev_reg {
	uint64_t target;
	int eventfd;			/* -1 when multi != NULL */
	bool kernel;			/* registered with SYNCOBJ_EVENTFD too */
	struct multi_reg *multi;	/* reference */
	struct ev_reg *next;		/* firing list */
};

struct multi_reg {
	_Atomic int refs;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t remaining;
	bool any;
	bool fired;
	int eventfd;			/* < 0: a thread blocks on cond */
};

struct d3dq_fence {
	struct d3dq_device *dev;
	_Atomic int refs;
	_Atomic uint64_t value;		/* non-shared fences */
	bool shared;
	uint32_t syncobj;		/* shared fences: timeline, points = values */
	struct list dev_link;		/* dev->fences, under dev->lock */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic bool destroyed;		/* read without the lock too */
	uint64_t next_order;
	uint64_t applied_order;
	uint64_t shared_reserved;	/* highest value signalled from here */
	struct list pending;		/* struct pending_update */
	struct list tickets;		/* struct ticket */
	uint32_t kernel_waiters;	/* threads in wait_pending_locked() */
	struct ev_reg **heap;		/* min-heap on target */
	size_t heap_len, heap_cap;
};

enum op_type { OP_WAIT, OP_SIGNAL, OP_EXECUTE };

/* An operation held back behind an unsatisfied wait. */
struct held_op {
	struct held_op *next;
	enum op_type type;
	struct d3dq_fence *fence;	/* reference (WAIT, SIGNAL) */
	uint64_t value;
	struct ticket *ticket;		/* WAIT */
	void *cmds;			/* EXECUTE: copy of the stream */
	uint32_t cmd_bytes;
};

struct d3dq_queue {
	struct d3dq_device *dev;
	_Atomic int refs;
	uint32_t id;			/* kernel queue id */
	uint32_t tl;			/* timeline syncobj of the queue */
	struct list dev_link;		/* dev->queues, under dev->lock */

	pthread_mutex_t lock;		/* serialises operations */
	bool dead;
	uint64_t tl_point;		/* last point submitted */
	uint64_t submitted;		/* copy of tl_point, under pend_lock */
	struct held_op *held_head, *held_tail;

	pthread_mutex_t pend_lock;
	struct list pending;		/* struct pending_update, by point */
	bool in_wait_set;
	uint64_t watch_point;		/* worker: the point it waits for */
	uint64_t completed;		/* worker: last completed point seen */

	/* dev->flush list, under dev->flush_lock */
	struct d3dq_queue *flush_next;
	bool flush_queued;
};

struct d3dq_buffer {
	struct d3dq_device *dev;
	uint32_t handle;
	uint64_t size;
	uint64_t map_size;
	void *map;
};

enum cmdlist_state { CMDLIST_RECORDING, CMDLIST_CLOSED };

struct d3dq_cmdlist {
	struct d3dq_device *dev;
	pthread_mutex_t lock;
	enum cmdlist_state state;
	int error;			/* first recording error */
	uint8_t *data;
	size_t len, cap;
};

/*
 * Functions shared between the library's files. They are hidden in the
 * shared library; the prefix keeps them out of the application's name
 * space when it links libd3dq.a.
 */
#define abs_timeout d3dqp_abs_timeout
#define d3dq_ioctl d3dqp_ioctl
#define dev_queue_flush_later d3dqp_dev_queue_flush_later
#define dev_remove d3dqp_dev_remove
#define dev_removed d3dqp_dev_removed
#define dev_removal_error d3dqp_dev_removal_error
#define dev_run_flushes d3dqp_dev_run_flushes
#define fence_reach_locked d3dqp_fence_reach_locked
#define fence_ref d3dqp_fence_ref
#define fence_release_all d3dqp_fence_release_all
#define fence_shared_query d3dqp_fence_shared_query
#define fence_shared_reserve d3dqp_fence_shared_reserve
#define fence_unref d3dqp_fence_unref
#define fence_value d3dqp_fence_value
#define fence_watch_collect d3dqp_fence_watch_collect
#define fence_tickets_min d3dqp_fence_tickets_min
#define fence_watch_fired d3dqp_fence_watch_fired
#define now_ns d3dqp_now_ns
#define queue_apply_completed d3dqp_queue_apply_completed
#define queue_desc_to_uapi d3dqp_queue_desc_to_uapi
#define queue_drop_held_locked d3dqp_queue_drop_held_locked
#define queue_flush_locked d3dqp_queue_flush_locked
#define queue_ref d3dqp_queue_ref
#define queue_submit d3dqp_queue_submit
#define queue_submit_cmds_locked d3dqp_queue_submit_cmds_locked
#define queue_submit_signal_locked d3dqp_queue_submit_signal_locked
#define queue_unref d3dqp_queue_unref
#define syncobj_create d3dqp_syncobj_create
#define syncobj_destroy d3dqp_syncobj_destroy
#define syncobj_query d3dqp_syncobj_query
#define syncobj_timeline_signal d3dqp_syncobj_timeline_signal
#define syncobj_timeline_wait d3dqp_syncobj_timeline_wait
#define ticket_cancel d3dqp_ticket_cancel
#define worker_ensure d3dqp_worker_ensure
#define worker_ring d3dqp_worker_ring
#define worker_stop d3dqp_worker_stop
#define avail_watch d3dqp_avail_watch
#define fence_resolve_available d3dqp_fence_resolve_available

/* ioctl helpers (device.c): 0 or -errno. */
int d3dq_ioctl(int fd, unsigned long req, void *arg);
int syncobj_create(int fd, uint32_t *handle);
void syncobj_destroy(int fd, uint32_t handle);
int syncobj_query(int fd, uint32_t *handles, uint64_t *points, uint32_t n,
		  uint32_t flags);
int syncobj_timeline_signal(int fd, uint32_t handle, uint64_t point);
int syncobj_timeline_wait(int fd, uint32_t *handles, uint64_t *points,
			  uint32_t n, int64_t abs_timeout_ns, uint32_t flags,
			  uint32_t *first);
int64_t now_ns(void);
int64_t abs_timeout(uint64_t timeout_ns);

/* abi.c: -EINVAL or -EOPNOTSUPP for a description the driver cannot have. */
int queue_desc_to_uapi(const struct d3dq_queue_desc *desc,
		       struct drm_d3dq_queue_create *create);

/* device.c */
bool dev_removed(struct d3dq_device *dev);
int dev_removal_error(struct d3dq_device *dev);
void dev_remove(struct d3dq_device *dev, int reason);

/* fence.c */
void fence_ref(struct d3dq_fence *f);
void fence_unref(struct d3dq_fence *f);
uint64_t fence_value(struct d3dq_fence *f);
void fence_reach_locked(struct d3dq_fence *f, uint64_t value, bool all,
			uint64_t kernel_upto);
void fence_release_all(struct d3dq_fence *f);
int fence_shared_query(struct d3dq_fence *f, uint64_t *value);
int fence_shared_reserve(struct d3dq_fence *f, uint64_t value, bool *noop);
bool fence_watch_collect(struct d3dq_fence *f, uint64_t *target);
bool fence_tickets_min(struct d3dq_fence *f, uint64_t *target);
void fence_resolve_available(struct d3dq_fence *f);
void fence_watch_fired(struct d3dq_fence *f, uint64_t value);

/* queue.c */
void queue_ref(struct d3dq_queue *q);
void queue_unref(struct d3dq_queue *q);
int queue_submit(struct d3dq_queue *q, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const struct drm_d3dq_sync *extra_signal,
		 const void *cmds, uint32_t cmd_bytes);

/* holdback.c */
void dev_queue_flush_later(struct d3dq_device *dev, struct d3dq_queue *q);
void dev_run_flushes(struct d3dq_device *dev);
void queue_flush_locked(struct d3dq_queue *q);
void queue_drop_held_locked(struct d3dq_queue *q);
int queue_submit_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			       uint64_t value);
int queue_submit_cmds_locked(struct d3dq_queue *q, const uint8_t *cmds,
			     size_t len);
void ticket_cancel(struct d3dq_fence *f, struct ticket *t);

/* worker.c */
int worker_ensure(struct d3dq_device *dev);
void worker_ring(struct d3dq_device *dev);
void worker_stop(struct d3dq_device *dev);
int avail_watch(struct d3dq_device *dev);
void queue_apply_completed(struct d3dq_queue *q, uint64_t completed);

#endif /* LIBD3DQ_INTERNAL_H */
