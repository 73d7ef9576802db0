/* SPDX-License-Identifier: MIT */
/*
 * libd3dq private declarations.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Layers. Internal functions of a file belong to that file's layer and
 * call only functions of lower layers (and the inline helpers below):
 *
 *   5 holdback.c  work held back behind waits; flushes; queue-wait choice
 *   4 queue.c     submission: kernel jobs, recording what they signal
 *   3 worker.c    completion: the records of submitted work, the one
 *                 causal applier, device removal, the worker thread
 *   2 fence.c     fences on kernel fences: signals, events, waits,
 *                 tickets, token events, watches of shared fences
 *   1 device.c    kernel calls, value pages, token events, the ready
 *                 list
 *     abi.c       the queue description's D3D12 numbers to the uapi's
 *   0 dispatch.c  the thread that calls the program's signal_event
 *                 callbacks; calls nothing of the library
 *
 * Entry points sit on top: the d3dq_*() functions of every file and the
 * worker thread's body may call any layer. Dropping a reference
 * (queue_unref(), fence_unref()) is allowed anywhere: the last one only
 * frees memory and kernel handles.
 *
 * Lock order (outer first; a thread holding one lock takes only locks to
 * its right):
 *
 *   queue->lock -> device->remove_lock -> device->lock
 *     -> device->apply_lock -> fence->lock -> multi->lock
 *     -> device->ready_lock | device->watch_lock | device->doorbell_lock
 *        | device->page_lock
 *     -> the dispatcher's lock (dispatch.c)
 *
 * A command list's lock is taken alone, or inside queue->lock (an
 * execution of one list submits from the list's own buffer); inside it
 * a thread takes only what a submission takes (apply_lock and the locks
 * after it: a job the kernel ran at once is applied there and then).
 *
 * device->worker_lock is only taken alone (starting, stopping the
 * worker). No thread holds two queue locks or two fence locks.
 *
 * System calls under a lock. device->lock, ready_lock and watch_lock are
 * never held across one, so creating objects never waits for the
 * kernel. The others are held across a call only where the order of the
 * calls matters, and only for calls that do not block: queue->lock
 * across DRM_IOCTL_D3DQ_SUBMIT of that queue (the order of the calls is
 * the order of the work, R16); fence->lock across the FENCE_SIGNAL that
 * changes that fence's value (the library's tickets and token events are
 * satisfied in the same order as the kernel's value), the destruction of
 * its registration handle and the FENCE_EVENT of a watch (so neither
 * races a destruction); device->apply_lock across what the values it
 * applies cause (causal order); doorbell_lock across the worker's
 * doorbell; page_lock across mapping and unmapping a value page.
 * remove_lock is held across a whole removal and only delays concurrent
 * removals. Blocking waits (FENCE_WAIT) hold no lock. Nobody
 * waits for a queue lock while holding another lock: flushes are
 * requested through the ready list and queue->flush_req and run by
 * whoever holds or next takes the queue lock.
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

/*
 * A token event of a device with a signal_event callback (eventfds are
 * the kernel's): @item is the call of the callback that firing hands to
 * the dispatcher (allocated with the registration, which owns the evref
 * alone, so that firing allocates nothing); NULL once handed over.
 */
struct dispatch_item;

struct evref {
	void *token;
	struct dispatch_item *item;	/* under the registration's lock */
};

/* A mapped page of fence values (device.c), by its mmap offset. */
struct vpage {
	struct vpage *next;		/* dev->pages, under dev->page_lock */
	uint64_t offset;
	void *addr;
	unsigned int refs;		/* fences on it, under dev->page_lock */
};

/*
 * A watch: a kernel registration (DRM_D3DQ_FENCE_EVENT_SYNCOBJ) that adds
 * point 1 to @sobj once shared fence @fence reached the value of a ticket
 * or a token event of this process, whoever changed it. The worker waits
 * for the point and satisfies @ticket or fires @reg, if they are still
 * there (they clear the pointers, under the fence's lock, when they go
 * earlier); only the worker frees a watch (and the device's close, once
 * the worker stopped).
 */
struct ticket;
struct ev_reg;

struct watch {
	struct list link;		/* dev->watches, under dev->watch_lock */
	struct d3dq_fence *fence;	/* reference */
	uint32_t sobj;			/* timeline syncobj */
	struct ticket *ticket;		/* under fence->lock */
	struct ev_reg *reg;		/* under fence->lock */
};

struct d3dq_device {
	int fd;

	/* Kernel limits and features. */
	uint32_t max_syncs;
	uint32_t max_cmd_bytes;
	uint64_t max_delay_ns;
	bool can_release;		/* uapi 1.1: releasable waits */
	bool has_realtime;		/* uapi 1.1: REALTIME queue priority */
	long page_size;

	/* Events that are the program's tokens, see dispatch.c. */
	d3dq_signal_event_fn signal_event;
	void *event_context;

	/*
	 * Removal: "stopped" once the driver stopped every job (queue work is
	 * refused from then on); the reason is published once every fence
	 * reads UINT64_MAX, before any waiter is released.
	 */
	_Atomic bool refusing;		/* removal started: refuse queue work */
	_Atomic bool stopped;
	_Atomic int removed_reason;
	pthread_mutex_t remove_lock;	/* serialises dev_remove() */

	pthread_mutex_t lock;		/* lists, worker state */
	struct list queues;
	struct list fences;
	struct list buffers;
	struct list cmdlists;

	/* Completion records of every queue, see worker.c. */
	pthread_mutex_t apply_lock;
	struct list active;		/* queues with records */
	bool worker_awake;		/* between its rounds: collects next */

	/* Queues to flush, see holdback.c. */
	pthread_mutex_t ready_lock;
	struct d3dq_queue *ready_head;
	struct d3dq_queue *ready_tail;
	_Atomic uint32_t nready;	/* on the list; read without the lock */

	/* Mapped value pages, see device.c. */
	pthread_mutex_t page_lock;
	struct vpage *pages;

	/* Watches of shared fences, see fence.c. */
	pthread_mutex_t watch_lock;
	struct list watches;

	/* The worker thread, see worker.c. */
	pthread_mutex_t worker_lock;	/* starting and stopping it, alone */
	_Atomic bool worker_started;
	bool worker_quit;		/* under lock */
	pthread_t worker;
	uint32_t doorbell;		/* timeline syncobj */
	pthread_mutex_t doorbell_lock;
	uint64_t doorbell_point;	/* under doorbell_lock */
	_Atomic uint64_t doorbell_seen;	/* last point rung */
};

/*
 * Completion records: what a queue's submitted work does when a point of
 * its timeline completes, in the order it was submitted. Linked in
 * queue->recs under dev->apply_lock.
 */
enum rec_kind { REC_SIGNAL, REC_EDGE };

struct rec {
	struct list qlink;
	enum rec_kind kind;
	uint64_t point;			/* point of the queue's timeline */
};

/* A queue signal submitted and not yet applied. */
struct sig_rec {
	struct rec r;
	struct list flink;		/* fence->pending, under fence->lock */
	struct d3dq_fence *fence;	/* reference */
	struct d3dq_queue *queue;	/* valid while linked (see queue.c) */
	uint64_t value;
};

/*
 * The jobs of a queue from @r.point on depend, in the kernel, on point
 * @dep_point of queue @dep. With @fence set it is a queue wait for
 * @value that may be released early (R6, R14): linked in fence->kwaits
 * until released or completed.
 */
struct edge {
	struct rec r;
	struct d3dq_queue *dep;		/* reference */
	uint64_t dep_point;
	_Atomic bool released;
	struct d3dq_fence *fence;	/* reference, or NULL */
	struct list flink;		/* fence->kwaits, under fence->lock */
	bool linked;			/* under fence->lock */
	uint64_t value;
	uint32_t queue_id;		/* the waiting queue */
	uint32_t index;			/* index of the wait in its job */
	uint64_t seqno;			/* the job, 0: not releasable */
};

/*
 * A queue wait held in the library (no kernel point can serve it yet).
 * Linked in fence->tickets until satisfied; satisfaction is sticky.
 */
struct ticket {
	struct list link;		/* under fence->lock */
	struct d3dq_queue *queue;	/* owner; valid while linked */
	uint64_t value;
	bool linked;
	bool satisfied;
	struct watch *watch;		/* shared fences, under fence->lock */
};

struct multi_reg;

/* A token registration (single, or one fence of a multi-fence one). */
struct ev_reg {
	uint64_t target;
	size_t heap_idx;		/* in the fence's heap, or NO_HEAP */
	struct evref *ev;		/* single: the event (its own) */
	struct multi_reg *multi;	/* part of a multi registration */
	struct d3dq_fence *fence;	/* multi: its fence (held by multi) */
	struct watch *watch;		/* shared fences, under fence->lock */
	struct ev_reg *next;		/* firing list */
};

#define NO_HEAP SIZE_MAX

struct multi_reg {
	_Atomic int refs;
	pthread_mutex_t lock;		/* @remaining, @fired */
	uint32_t count;
	uint32_t remaining;
	bool any;
	bool fired;
	struct evref *ev;		/* the token event */
	struct multi_reg *fire_next;	/* firing list */
	struct ev_reg regs[];		/* one per fence */
};

/* A point of a queue's timeline, with a reference to the queue. */
struct dep {
	struct d3dq_queue *q;
	uint64_t point;
};

/* Early releases to issue, see fire_run(). */
struct release {
	uint32_t queue_id;
	uint32_t index;
	uint64_t seqno;
};

/*
 * What a change of fence values leaves for after the fence lock: free
 * the fired registrations, remove what is left of fired multi-fence
 * registrations, release kernel waits early.
 */
struct fire {
	struct ev_reg *events;
	struct multi_reg *multis;
	struct release *rel;
	size_t nrel, caprel;
	/*
	 * Set by the applier (apply_lock held): the point it is applying,
	 * complete. A kernel wait on a completed point needs no release.
	 */
	struct d3dq_queue *done_q;
	uint64_t done_point;
};

#define FIRE_INIT { NULL, NULL, NULL, 0, 0, NULL, 0 }

struct d3dq_fence {
	struct d3dq_device *dev;
	_Atomic int refs;
	bool shared;
	struct list dev_link;		/* dev->fences, under dev->lock */

	/*
	 * The kernel fence. @handle lives until the last reference goes, so
	 * that no call names a handle the kernel reused. A shared fence also
	 * has @reg, a second handle of it through which this process makes
	 * its registrations, destroyed when the fence is (the kernel then
	 * releases them, R14), and @wake, a local kernel fence set to 1 then,
	 * which blocking waits on the fence also wait for.
	 */
	uint32_t handle;
	uint32_t reg;			/* under @lock */
	uint32_t wake;
	/* The value, in the kernel's page; read with one acquire load. */
	const _Atomic uint64_t *vp;
	struct vpage *page;

	_Atomic bool destroyed;
	/*
	 * Something needs the worker to apply this fence's queue signals as
	 * they complete (an event, a held queue wait, a blocking wait, a
	 * read, a CPU signal or a second queue signalling it while signals
	 * were pending, another process): set once, never cleared. See
	 * worker.c.
	 */
	_Atomic bool observed;
	_Atomic uint32_t npending;	/* queue signals pending */

	pthread_mutex_t lock;
	struct list pending;		/* struct sig_rec */
	struct list tickets;		/* struct ticket */
	struct list kwaits;		/* struct edge */
	struct ev_reg **heap;		/* token events: min-heap on target */
	size_t heap_len, heap_cap;
};

enum op_type { OP_WAIT, OP_SIGNAL, OP_EXECUTE };

/* An operation held back behind an unsatisfied wait. */
struct held_op {
	struct held_op *next;
	enum op_type type;
	struct d3dq_fence *fence;	/* reference (WAIT, SIGNAL) */
	uint64_t value;
	struct ticket ticket;		/* WAIT */
	void *cmds;			/* EXECUTE: copy of the stream */
	uint32_t cmd_bytes;
};

struct d3dq_queue {
	struct d3dq_device *dev;
	_Atomic int refs;
	uint32_t id;			/* kernel queue id */
	uint32_t tl;			/* timeline syncobj of the queue */
	struct list dev_link;		/* dev->queues, under dev->lock */

	pthread_mutex_t lock;		/* operations, FIFO, submission */
	bool dead;
	uint64_t tl_point;		/* last point submitted */
	struct held_op *held_head, *held_tail;
	/*
	 * Queue waits resolved to kernel points and not submitted yet: the
	 * queue's next job carries them in its wait list (queue.c).
	 */
	struct edge **fold;
	uint32_t nfold, capfold;
	_Atomic uint64_t submitted;	/* copy of tl_point */
	/*
	 * Points up to here are complete: the kernel ran the job inside
	 * SUBMIT (DRM_D3DQ_SUBMIT_DONE). Records added for them are applied
	 * as they are added (worker.c).
	 */
	uint64_t done;
	_Atomic bool flush_req;		/* see queue_unlock() */

	/* dev->ready list, under dev->ready_lock */
	struct d3dq_queue *ready_next;
	bool ready_queued;

	/* Under dev->apply_lock. */
	struct list recs;		/* struct rec, by point */
	uint64_t completed;		/* points up to here are applied */
	uint64_t watch_point;		/* what the worker waits for */
	bool watched;
	struct list active_link;	/* dev->active: it has records */
	bool active_linked;
	uint32_t nrecs;			/* records not applied yet */
};

struct d3dq_buffer {
	struct d3dq_device *dev;
	struct list dev_link;		/* dev->buffers, under dev->lock */
	uint32_t handle;
	uint64_t size;
	uint64_t map_size;
	void *map;
};

enum cmdlist_state { CMDLIST_RECORDING, CMDLIST_CLOSED };

struct d3dq_cmdlist {
	struct d3dq_device *dev;
	struct list dev_link;		/* dev->cmdlists, under dev->lock */
	pthread_mutex_t lock;
	enum cmdlist_state state;
	int error;			/* first recording error */
	uint8_t *data;
	size_t len, cap;
};

static inline bool dev_removed(struct d3dq_device *dev)
{
	return atomic_load_explicit(&dev->stopped, memory_order_acquire);
}

/* Queue work is refused from the start of a removal on. */
static inline bool dev_refusing(struct d3dq_device *dev)
{
	return atomic_load_explicit(&dev->refusing, memory_order_acquire);
}

/*
 * -ENODEV for queue work refused by a removal, returned once the removal
 * is complete (dev_remove() holds remove_lock throughout): whoever is
 * told the device is gone then also reads UINT64_MAX and has every CPU
 * signal refused, as if the removal had happened at one instant (R15).
 */
static inline int dev_refused(struct d3dq_device *dev)
{
	pthread_mutex_lock(&dev->remove_lock);
	pthread_mutex_unlock(&dev->remove_lock);
	return -ENODEV;
}

static inline void queue_ref(struct d3dq_queue *q)
{
	atomic_fetch_add(&q->refs, 1);
}

static inline void fence_ref(struct d3dq_fence *f)
{
	atomic_fetch_add(&f->refs, 1);
}

/*
 * Functions shared between the library's files. They are hidden in the
 * shared library; the prefix keeps them out of the application's name
 * space when it links libd3dq.a.
 */
#define abs_timeout d3dqp_abs_timeout
#define apply_upto d3dqp_apply_upto
#define d3dq_ioctl d3dqp_ioctl
#define dev_link_object d3dqp_dev_link_object
#define device_desc_copy d3dqp_device_desc_copy
#define edge_free d3dqp_edge_free
#define edge_new d3dqp_edge_new
#define dev_ready_push d3dqp_dev_ready_push
#define dev_remove d3dqp_dev_remove
#define dev_removal_error d3dqp_dev_removal_error
#define dev_ring d3dqp_dev_ring
#define dispatch_get d3dqp_dispatch_get
#define dispatch_item_free d3dqp_dispatch_item_free
#define dispatch_item_new d3dqp_dispatch_item_new
#define dispatch_push d3dqp_dispatch_push
#define dispatch_put d3dqp_dispatch_put
#define evref_put d3dqp_evref_put
#define evref_token d3dqp_evref_token
#define fence_apply_locked d3dqp_fence_apply_locked
#define fence_take_locked d3dqp_fence_take_locked
#define fence_choose_locked d3dqp_fence_choose_locked
#define fence_kwait_link d3dqp_fence_kwait_link
#define fence_kwait_unlink d3dqp_fence_kwait_unlink
#define fence_observe d3dqp_fence_observe
#define fence_reached d3dqp_fence_reached
#define fence_ticket_unlink_locked d3dqp_fence_ticket_unlink_locked
#define fence_watch_locked d3dqp_fence_watch_locked
#define fence_refresh d3dqp_fence_refresh
#define fence_release_all d3dqp_fence_release_all
#define fences_remove d3dqp_fences_remove
#define fence_signalled_locked d3dqp_fence_signalled_locked
#define fence_unref d3dqp_fence_unref
#define fence_value d3dqp_fence_value
#define fire_add_release d3dqp_fire_add_release
#define fire_run d3dqp_fire_run
#define kfence_create d3dqp_kfence_create
#define kfence_destroy d3dqp_kfence_destroy
#define kfence_event d3dqp_kfence_event
#define kfence_export d3dqp_kfence_export
#define kfence_import d3dqp_kfence_import
#define kfence_signal d3dqp_kfence_signal
#define kfence_wait d3dqp_kfence_wait
#define now_ns d3dqp_now_ns
#define queue_check_lost d3dqp_queue_check_lost
#define queue_check_lost_live d3dqp_queue_check_lost_live
#define queue_deactivate d3dqp_queue_deactivate
#define queue_desc_to_uapi d3dqp_queue_desc_to_uapi
#define queue_drop_folded_locked d3dqp_queue_drop_folded_locked
#define queue_drop_held_locked d3dqp_queue_drop_held_locked
#define queue_flush_locked d3dqp_queue_flush_locked
#define queue_lock d3dqp_queue_lock
#define queue_unlock d3dqp_queue_unlock
#define queue_unref d3dqp_queue_unref
#define queue_submit d3dqp_queue_submit
#define queue_submit_cmds_locked d3dqp_queue_submit_cmds_locked
#define queue_submit_signal_locked d3dqp_queue_submit_signal_locked
#define queue_submit_wait_locked d3dqp_queue_submit_wait_locked
#define queue_wait_locked d3dqp_queue_wait_locked
#define queue_signal_locked d3dqp_queue_signal_locked
#define queue_execute_locked d3dqp_queue_execute_locked
#define record_edge d3dqp_record_edge
#define record_signal d3dqp_record_signal
#define run_flushes d3dqp_run_flushes
#define dev_unplugged d3dqp_dev_unplugged
#define syncobj_create d3dqp_syncobj_create
#define syncobj_destroy d3dqp_syncobj_destroy
#define syncobj_query d3dqp_syncobj_query
#define syncobj_timeline_signal d3dqp_syncobj_timeline_signal
#define syncobj_timeline_wait d3dqp_syncobj_timeline_wait
#define vpage_map d3dqp_vpage_map
#define vpage_unmap d3dqp_vpage_unmap
#define watch_fired d3dqp_watch_fired
#define worker_ensure d3dqp_worker_ensure
#define worker_stop d3dqp_worker_stop

/*
 * 0: dispatch.c. dispatch_get(): a device with a callback exists (starts
 * the thread; -errno if it cannot); dispatch_put(): it is closed (waits
 * until the items handed over before are called, ends the thread with
 * the last one). dispatch_push() hands an item over (any lock held); the
 * dispatcher calls it and frees it.
 */
int dispatch_get(void);
void dispatch_put(void);
struct dispatch_item *dispatch_item_new(d3dq_signal_event_fn fn,
					void *token, void *context);
void dispatch_item_free(struct dispatch_item *it);
void dispatch_push(struct dispatch_item *it);

/* 1: device.c. Kernel calls: 0 or -errno. */
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
int dev_removal_error(struct d3dq_device *dev);
int dev_link_object(struct d3dq_device *dev, struct list *link,
		    struct list *head);
void dev_ready_push(struct d3dq_device *dev, struct d3dq_queue *q);
void dev_ring(struct d3dq_device *dev);
/* A token event of a device with a callback: -EINVAL without one. */
int evref_token(struct d3dq_device *dev, void *token, struct evref **out);
void evref_put(struct evref *e);
/* Kernel fences (uapi 1.3): 0 or -errno. */
int kfence_create(int fd, uint64_t value, uint32_t flags, uint32_t *handle,
		  uint64_t *mmap_offset, uint32_t *value_offset);
int kfence_import(int fd, int xfd, uint32_t *handle, uint64_t *mmap_offset,
		  uint32_t *value_offset);
int kfence_export(int fd, uint32_t handle, int *xfd);
void kfence_destroy(int fd, uint32_t handle);
int kfence_signal(int fd, uint32_t handle, uint64_t value);
int kfence_wait(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		uint32_t flags, int64_t deadline);
int kfence_event(int fd, const struct drm_d3dq_fence_value *fv, uint32_t n,
		 uint32_t flags, int eventfd, uint32_t sobj, uint64_t point);
/* Map the page at @offset (once per page): the value at @value_offset. */
int vpage_map(struct d3dq_device *dev, uint64_t offset, uint32_t value_offset,
	      struct vpage **page, const _Atomic uint64_t **vp);
void vpage_unmap(struct d3dq_device *dev, struct vpage *page);
/* Is the device unplugged (every call fails with -ENODEV)? */
bool dev_unplugged(struct d3dq_device *dev);

/* 1: abi.c. -EINVAL, or -EOPNOTSUPP for a priority the driver lacks. */
int queue_desc_to_uapi(const struct d3dq_queue_desc *desc,
		       struct drm_d3dq_queue_create *create);
/* A device description the caller passed, as this library knows it. */
int device_desc_copy(const struct d3dq_device_desc *desc,
		     struct d3dq_device_desc *out);

/* 2: fence.c */
void fence_unref(struct d3dq_fence *f);
uint64_t fence_value(struct d3dq_fence *f);
void fence_signalled_locked(struct d3dq_fence *f, uint64_t value, bool all,
			    struct fire *fire);
void fence_apply_locked(struct sig_rec *s, struct fire *fire);
void fence_take_locked(struct d3dq_fence *f, uint64_t value,
		       struct d3dq_queue *q, uint64_t point, struct fire *fire);
bool fence_reached(struct d3dq_fence *f, uint64_t value);
void fence_ticket_unlink_locked(struct ticket *t);
int fence_watch_locked(struct d3dq_fence *f, uint64_t value,
		       struct watch **out);
void watch_fired(struct d3dq_device *dev, struct watch *w);
enum choice { CHOICE_NONE, CHOICE_READY, CHOICE_POINT };
enum choice fence_choose_locked(struct d3dq_fence *f, struct d3dq_queue *q,
				uint64_t value, struct dep *out);
void fence_kwait_link(struct edge *e, struct fire *fire);
void fence_kwait_unlink(struct edge *e);
void fence_observe(struct d3dq_fence *f);
void fence_release_all(struct d3dq_fence *f, struct fire *fire);
void fences_remove(struct d3dq_fence **fs, size_t n);
int fire_add_release(struct fire *fire, uint32_t queue_id, uint32_t index,
		     uint64_t seqno);
void fire_run(struct d3dq_device *dev, struct fire *fire);

/* 3: worker.c */
int record_signal(struct d3dq_queue *q, struct d3dq_fence *f, uint64_t value,
		  uint64_t point);
struct edge *edge_new(struct d3dq_queue *dep, uint64_t dep_point);
void edge_free(struct edge *e);
void record_edge(struct d3dq_queue *q, uint64_t point, struct edge *e);
void apply_upto(struct d3dq_queue *q, uint64_t upto);
void fence_refresh(struct d3dq_fence *f);
int queue_check_lost(struct d3dq_queue *q);
int queue_check_lost_live(struct d3dq_queue *q);
void queue_deactivate(struct d3dq_queue *q);
void dev_remove(struct d3dq_device *dev, int reason);
int worker_ensure(struct d3dq_device *dev);
void worker_stop(struct d3dq_device *dev);

/* 4: queue.c */
void queue_unref(struct d3dq_queue *q);
int queue_submit(struct d3dq_queue *q, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const void *cmds, uint32_t cmd_bytes,
		 uint64_t *seqno);
int queue_submit_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			       uint64_t value);
int queue_submit_wait_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			     uint64_t value, struct dep *d);
int queue_submit_cmds_locked(struct d3dq_queue *q, const uint8_t *cmds,
			     size_t len);
void queue_drop_folded_locked(struct d3dq_queue *q);

/* 5: holdback.c */
void queue_lock(struct d3dq_queue *q);
void queue_unlock(struct d3dq_queue *q);
int queue_wait_locked(struct d3dq_queue *q, struct d3dq_fence *f,
		      uint64_t value);
int queue_signal_locked(struct d3dq_queue *q, struct d3dq_fence *f,
			uint64_t value);
int queue_execute_locked(struct d3dq_queue *q, void *cmds, size_t len);
void queue_flush_locked(struct d3dq_queue *q);
void queue_drop_held_locked(struct d3dq_queue *q);
void run_flushes(struct d3dq_device *dev);

#endif /* LIBD3DQ_INTERNAL_H */
