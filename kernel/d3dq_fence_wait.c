// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fence waits: nodes and conditions, the value write that satisfies
 * them, CPU waits (FENCE_WAIT) and event registrations (FENCE_EVENT,
 * eventfds and syncobj points).
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_fence_internal.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

/* --- conditions: the value write path ---------------------------------- */

static void d3dq_fence_events_reap(struct work_struct *work);

/*
 * Eventfd registrations whose eventfd was signalled and whose ioctl is
 * done, for d3dq_fence_events_work to free. One work item a jiffy later
 * frees a batch: a work item of their own, queued at once, woke a
 * worker right after each firing, which ran before (and on TCG, in place
 * of) the thread the eventfd woke (figure 5 in performance.rst).
 */
static LLIST_HEAD(d3dq_fence_events_done);
static DECLARE_DELAYED_WORK(d3dq_fence_events_work, d3dq_fence_events_reap);

static void d3dq_fence_cond_put(struct d3dq_fence_cond *cond)
{
	if (!refcount_dec_and_test(&cond->refs))
		return;
	/* A syncobj point is added in firing order (see d3dq_wq.events). */
	if (cond->syncobj)
		queue_work(d3dq_wq.events, &cond->work);
	else if (llist_add(&cond->done, &d3dq_fence_events_done))
		queue_delayed_work(d3dq_wq.cleanup, &d3dq_fence_events_work, 1);
}

/*
 * A wait of @queue's held job was satisfied (referenced by the caller;
 * the reference is consumed): have the CPU signal that writes the fence
 * arm the queue in its call (@kicks), else the queue's arming work.
 */
static void d3dq_fence_kick(struct d3dq_fence_kicks *kicks,
			    struct d3dq_queue *queue)
{
	u32 i;

	if (kicks) {
		for (i = 0; i < kicks->count; i++) {
			if (kicks->queues[i] == queue) {
				d3dq_queue_put(queue);
				return;
			}
		}
		if (kicks->count < ARRAY_SIZE(kicks->queues)) {
			kicks->queues[kicks->count++] = queue;
			return;
		}
	}
	d3dq_queue_kick_held(queue);
	d3dq_queue_put(queue);
}

/*
 * After a write with @kicks (process context, no lock held): arm the
 * queues it released on this thread, as @dfile's (d3dq_queue_arm_now()),
 * and drop their references.
 */
void d3dq_fence_kicks_arm(struct d3dq_fence_kicks *kicks,
			  struct d3dq_file *dfile)
{
	u32 i;

	for (i = 0; i < kicks->count; i++) {
		d3dq_queue_arm_now(kicks->queues[i], dfile);
		d3dq_queue_put(kicks->queues[i]);
	}
	kicks->count = 0;
}

/*
 * Wake a CPU waiter whose condition fired. The unlock of its wait
 * queue's lock is the last touch of the condition: the waiter, which
 * may have timed out or been interrupted meanwhile, frees it only after
 * it has seen @woken under that lock (d3dq_fence_cond_wait_end()).
 */
static void d3dq_fence_cond_wake(struct d3dq_fence_cond *cond)
{
	unsigned long flags;

	spin_lock_irqsave(&cond->wq.lock, flags);
	WRITE_ONCE(cond->woken, true);
	wake_up_all_locked(&cond->wq);
	spin_unlock_irqrestore(&cond->wq.lock, flags);
}

/*
 * Fire what a batch of a value write satisfied, the fence's lock
 * dropped: eventfd wake-ups and release fence callbacks run the lists of
 * whoever waits there, which the writer does not choose the length of,
 * and a woken CPU waiter, which leaves at once, finds the lock free.
 * A released wait's fence signals before its queue is armed, which
 * looks at it.
 */
static void d3dq_fence_fire(struct d3dq_fence_fired *fired,
			    struct d3dq_fence_kicks *kicks)
{
	u32 i;

	for (i = 0; i < fired->count; i++) {
		if (fired->fires[i].cond && !fired->fires[i].cond->ctx) {
			d3dq_fence_cond_wake(fired->fires[i].cond);
			continue;
		}
		if (fired->fires[i].cond) {
			d3dq_eventfd_signal(fired->fires[i].cond->ctx);
			d3dq_fence_cond_put(fired->fires[i].cond);
			continue;
		}
		if (fired->fires[i].rf) {
			d3dq_release_fence_signal(fired->fires[i].rf, true);
			dma_fence_put(&fired->fires[i].rf->base);
		}
		if (fired->fires[i].queue)
			d3dq_fence_kick(kicks, fired->fires[i].queue);
	}
	fired->count = 0;
}

/*
 * @node fired its condition: its fence's lock is held. In a batch of a
 * value write, what runs other users' lists is left to d3dq_fence_fire().
 */
static void d3dq_fence_cond_fire(struct d3dq_fence_node *node)
{
	struct d3dq_fence_cond *cond = node->cond;
	struct d3dq_fence_evt *evt = cond->evt;
	struct d3dq_fence *fence = node->fence;
	struct d3dq_fence_fired *fired = fence->fired;
	struct d3dq_release_fence *rf = cond->release;

	/*
	 * The value was reached: the job no longer waits for a job. A held
	 * job may be armed now: only mark it and queue the work that does.
	 * An exported value's release fence stands for the job it is bound
	 * to: a removal's ~0 leaves it to that job's end, which follows
	 * soon (a stopped queue's jobs end as they reach the engine) and
	 * carries the job's error.
	 */
	if (rf) {
		if (fence->removed && rf->propagate)
			rf = NULL;
		if (fired) {
			if (rf)
				dma_fence_get(&rf->base);
			if (cond->queue)
				d3dq_queue_get(cond->queue);
			fired->fires[fired->count].cond = NULL;
			fired->fires[fired->count].rf = rf;
			fired->fires[fired->count++].queue = cond->queue;
			return;
		}
		if (rf)
			d3dq_release_fence_signal(rf, true);
		if (cond->queue) {
			d3dq_queue_get(cond->queue);
			d3dq_fence_kick(NULL, cond->queue);
		}
		return;
	}
	/*
	 * The waiter's own wait queue: nobody else waits there. A write's
	 * batch wakes it once the fence's lock is dropped.
	 */
	if (!cond->ctx && !cond->syncobj) {
		if (fired) {
			fired->fires[fired->count].cond = cond;
			fired->fires[fired->count++].rf = NULL;
			return;
		}
		d3dq_fence_cond_wake(cond);
		return;
	}
	/*
	 * A syncobj registration adds its point when it is freed; an
	 * eventfd another registration of this fence signalled in the same
	 * change is not signalled again.
	 */
	if (cond->ctx) {
		u64 *last = NULL;

		if (evt)
			last = fence->fire_drain ? &evt->drained :
						   &evt->signalled;
		if (!last || *last != fence->fire_change) {
			if (last)
				*last = fence->fire_change;
			if (fired) {
				/* With the firing's reference. */
				fired->fires[fired->count].cond = cond;
				fired->fires[fired->count++].rf = NULL;
				return;
			}
			d3dq_eventfd_signal(cond->ctx);
		}
	}
	d3dq_fence_cond_put(cond);
}

struct d3dq_fence_node *d3dq_fence_node_of(struct rb_node *rb)
{
	return rb_entry_safe(rb, struct d3dq_fence_node, rb);
}

static bool d3dq_fence_node_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct d3dq_fence_node, rb)->value <
	       rb_entry(b, struct d3dq_fence_node, rb)->value;
}

/*
 * List @node in its fence's tree (the fence's lock held), after the
 * nodes of the same value: O(log n) whatever the order of the values.
 */
void d3dq_fence_node_list(struct d3dq_fence_node *node)
{
	rb_add_cached(&node->rb, &node->fence->nodes, d3dq_fence_node_less);
	if (node->fh)
		list_add_tail(&node->hlink, &node->fh->nodes);
}

/*
 * Whether @node is released at once rather than listed (its fence's
 * lock held): the fence was removed (unplug), or the handle it came
 * through was destroyed or its file removed meanwhile. A destruction
 * or a removal releases the nodes it finds listed; these come after.
 */
bool d3dq_fence_node_gone(struct d3dq_fence_node *node)
{
	struct d3dq_fence_handle *fh = node->fh;

	return node->fence->removed ||
	       (fh && (fh->released || d3dq_fence_file_removed(fh->dfile)));
}

/* Unlist @node if it is listed (its fence's lock held). */
static void d3dq_fence_node_unlist(struct d3dq_fence_node *node)
{
	if (RB_EMPTY_NODE(&node->rb))
		return;
	rb_erase_cached(&node->rb, &node->fence->nodes);
	RB_CLEAR_NODE(&node->rb);
	list_del_init(&node->hlink);
	if (!RB_EMPTY_NODE(&node->hrb))
		d3dq_fence_held_unlist(node);
	if (node->bound_to) {
		list_del_init(&node->blink);
		node->bound_to = NULL;
	}
}

/*
 * A node is satisfied (its fence's lock held), by a change of its own
 * (@fire_change, a new change: a firing at the call, a handle's
 * destruction) or by a write's batches (@fire_drain).
 */
void d3dq_fence_node_done(struct d3dq_fence_node *node)
{
	d3dq_fence_node_unlist(node);
	if (atomic_dec_return(&node->cond->remaining) == 0)
		d3dq_fence_cond_fire(node);
}

/* A change of its own: what d3dq_fence_node_done() fires for. */
void d3dq_fence_change_locked(struct d3dq_fence *fence)
{
	lockdep_assert_held(&fence->lock);

	fence->fire_change = ++fence->changes;
	fence->fire_drain = false;
}

/*
 * Whether satisfying @node takes no lock but its fence's and what a
 * woken thread's or an eventfd's wait queue takes: no job's wait (its
 * file's @fence_jobs_lock, a release fence, a queue's arming), no
 * registration with %DRM_D3DQ_FENCE_EVENT_ARMED (@fence_jobs_lock).
 */
static bool d3dq_fence_node_light(const struct d3dq_fence_node *node)
{
	return !node->cond->release && RB_EMPTY_NODE(&node->hrb);
}

/*
 * Satisfy a batch of the nodes the pending write reaches, lowest first
 * (the fence's lock held), or with @light only those before the first
 * that is not light: whether some are left.
 */
static bool d3dq_fence_drain_batch_locked(struct d3dq_fence *fence,
					  bool light)
{
	struct d3dq_fence_node *node;
	unsigned int n;

	for (n = 0; fence->draining; n++) {
		node = d3dq_fence_node_of(rb_first_cached(&fence->nodes));
		if (!node || node->value > fence->drain_to) {
			fence->draining = false;
			break;
		}
		if (n == D3DQ_FENCE_BATCH ||
		    (light && !d3dq_fence_node_light(node)))
			return true;
		fence->fire_change = fence->drain_change;
		fence->fire_drain = true;
		d3dq_fence_node_done(node);
	}
	return false;
}

/*
 * Whether d3dq_fence_drain_locked() with @change has anything to do, and
 * so may drop the fence's lock: a write in progress that reaches a node
 * (d3dq_fence_write_locked() ends one that reaches none), or, before a
 * write (@change 0), another driver's value to write first.
 */
static bool d3dq_fence_drain_needed(const struct d3dq_fence *fence, u64 change)
{
	lockdep_assert_held(&fence->lock);

	return fence->draining ||
	       (!change && (!llist_empty(&fence->imports_done) ||
			    !list_empty(&fence->imports)));
}

/* d3dq_fence_drain_locked() with something to drain: its batches. */
static noinline void d3dq_fence_drain_batches(struct d3dq_fence *fence,
					      unsigned long *flags, u64 change,
					      struct d3dq_fence_kicks *kicks)
	__must_hold(&fence->lock)
{
	struct d3dq_fence_fired fired = { .count = 0 };
	bool more;

	for (;;) {
		/* Before another write: other drivers' signals that came. */
		if (!fence->draining &&
		    (change || !d3dq_fence_import_write_locked(fence)))
			return;
		if (change && fence->drain_change != change)
			return;
		fence->fired = &fired;
		more = d3dq_fence_drain_batch_locked(fence, false);
		fence->fired = NULL;
		if (!more && !fired.count)
			return;
		spin_unlock_irqrestore(&fence->lock, *flags);
		d3dq_fence_fire(&fired, kicks);
		/* A CPU signal's ioctl lets others run; a signalling path spins. */
		if (more && preemptible())
			cond_resched();
		else if (more)
			cpu_relax();
		spin_lock_irqsave(&fence->lock, *flags);
	}
}

/**
 * d3dq_fence_drain_locked - Finish a write in progress on a fence.
 * @fence: the fence, its lock held (with @flags), dropped between batches
 * @flags: the caller's saved interrupt state of that lock
 * @change: the write's change (d3dq_fence_write_locked()), or 0 for
 *	    whatever write is in progress, which must end before another
 *	    begins
 * @kicks: where the queues its batches release go (a CPU signal's own
 *	   write), or NULL
 *
 * A write satisfies the nodes it reaches %D3DQ_FENCE_BATCH per hold of
 * the lock, interrupts enabled in between, however many other files
 * parked there: whoever wrote finishes it, and whoever writes next
 * helps first, and before that writes, in the order they came, the
 * values of other drivers' work that completed (uapi 1.11,
 * d3dq_fence_import_write_locked()). Under the lock a node costs its
 * unlisting and an entry in the batch's &struct d3dq_fence_fired; CPU
 * waiters are woken, eventfds and release fences (whose wait queues and
 * callbacks other users fill) signalled after each batch, the lock
 * dropped, before this returns (R2: what a CPU signal satisfies is woken
 * in its call), so that a woken waiter does not find it held. No other
 * write begins meanwhile, so the nodes at or below the write's value are
 * exactly those it reached: one armed since (the value was stored
 * already) is satisfied at its call and never listed.
 */
void d3dq_fence_drain_locked(struct d3dq_fence *fence, unsigned long *flags,
			     u64 change, struct d3dq_fence_kicks *kicks)
	__must_hold(&fence->lock)
{
	lockdep_assert_held(&fence->lock);

	/*
	 * Nothing to drain, the common case: the batch's record of what it
	 * fires is not even made. The kernel zeroes a stack array on every
	 * entry (INIT_STACK_ALL_ZERO): that cost a CPU signal releasing
	 * nothing 0.3 x GET_PARAM under TCG.
	 */
	if (d3dq_fence_drain_needed(fence, change))
		d3dq_fence_drain_batches(fence, flags, change, kicks);
}

/**
 * d3dq_fence_drain_atomic - Write the next value of other drivers' work
 * where a dma-fence callback runs.
 * @fence: the fence, its lock not held by the caller
 *
 * Any context, another driver's fence lock possibly held: the fence's
 * lock is only tried (it is held while binding to dma-fences, so the
 * callback must not wait for it, and on this CPU it may be held around
 * the dma-fence signal that called back). If no write is in progress,
 * writes the first value d3dq_fence_import_write_locked() takes and
 * satisfies at most a batch of the light nodes it reaches (CPU waits,
 * eventfd and syncobj registrations: their wake-ups take wait queue
 * locks only), then wakes the batch's CPU waiters and signals its
 * eventfds with the lock dropped.
 * The rest (later values, more nodes, jobs' waits) is left to
 * d3dq_fence_drain_locked() in process context.
 *
 * Return: whether it wrote and nothing is left: no value of another
 * driver's work to write, no node of that write to satisfy.
 */
bool d3dq_fence_drain_atomic(struct d3dq_fence *fence)
{
	struct d3dq_fence_fired fired = { .count = 0 };
	unsigned long flags;
	bool left = true;

	if (!spin_trylock_irqsave(&fence->lock, flags))
		return false;
	if (!fence->draining && d3dq_fence_import_write_locked(fence)) {
		fence->fired = &fired;
		left = d3dq_fence_drain_batch_locked(fence, true) ||
		       !llist_empty(&fence->imports_done) ||
		       !list_empty(&fence->imports);
		fence->fired = NULL;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
	d3dq_fence_fire(&fired, NULL);
	return !left;
}

/**
 * d3dq_fence_write_locked - Set a fence's value.
 * @fence: the fence, its lock held, no write in progress on it (the
 *	   caller ran d3dq_fence_drain_locked() with @change 0 under the
 *	   same hold)
 * @value: the new value
 *
 * One release store, which every mapping sees at once; the nodes the
 * value reaches are then satisfied for good by the caller's
 * d3dq_fence_drain_locked() with the change returned, lowest value
 * first, O(log n) each: their waiters are woken, eventfds signalled.
 * Allocates nothing and sleeps nowhere, so that it can run in any
 * context that can take the fence's lock.
 *
 * Return: the write's change, or 0 if the fence was removed (nothing
 * written).
 */
u64 d3dq_fence_write_locked(struct d3dq_fence *fence, u64 value)
{
	struct d3dq_fence_node *node;

	lockdep_assert_held(&fence->lock);

	if (fence->removed)
		return 0;
	WARN_ON_ONCE(fence->draining);
	/*
	 * Pairs with the acquire load of userspace readers: what was
	 * written before the signal is seen by whoever sees the value.
	 */
	smp_store_release(fence->value, value);
	fence->changes++;
	fence->drain_to = value;
	fence->drain_change = fence->changes;
	/* A write that reaches no node is over already. */
	node = d3dq_fence_node_of(rb_first_cached(&fence->nodes));
	fence->draining = node && node->value <= value;
	return fence->changes;
}

/*
 * A removal, in two passes over the fences it removes, so that it looks
 * whole to whoever it wakes (R15): first every value goes to ~0 for good
 * (no signal changes it after), then every node is satisfied. A waiter
 * or an event that a removal released finds every fence it removed at
 * ~0 already, not only the one it waited on.
 */
void d3dq_fence_remove_value(struct d3dq_fence *fence)
{
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	d3dq_fence_drain_locked(fence, &flags, 0, NULL);
	if (!fence->removed) {
		/* As in d3dq_fence_write_locked(): userspace's acquire loads. */
		smp_store_release(fence->value, U64_MAX);
		fence->changes++;
		fence->removed = true;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
}

/* Every node is satisfied, in batches, by the removal's change. */
void d3dq_fence_remove_nodes(struct d3dq_fence *fence)
{
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	d3dq_fence_drain_locked(fence, &flags, 0, NULL);
	fence->drain_to = U64_MAX;
	fence->drain_change = fence->changes;
	fence->draining = true;
	d3dq_fence_drain_locked(fence, &flags, fence->drain_change, NULL);
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * List @node on its fence, unless the value is reached already, the
 * fence was removed, or the handle it came through is gone (destroyed
 * meanwhile: that releases it, as a destruction releases the nodes it
 * finds).
 */
static void d3dq_fence_node_arm(struct d3dq_fence_node *node)
{
	struct d3dq_fence *fence = node->fence;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	if (d3dq_fence_node_gone(node) || *fence->value >= node->value ||
	    (node->cond->armed && d3dq_fence_armed_list(node))) {
		/* Firing at its call is a change of its own. */
		d3dq_fence_change_locked(fence);
		d3dq_fence_node_done(node);
		goto out;
	}
	d3dq_fence_node_list(node);
out:
	spin_unlock_irqrestore(&fence->lock, flags);
}

/*
 * Unlink every node that is still listed. Taking each fence's lock also
 * waits for a value write that is satisfying one of them.
 */
void d3dq_fence_cond_unlink(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_node *node;
	unsigned long flags;
	u32 i;

	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		spin_lock_irqsave(&node->fence->lock, flags);
		d3dq_fence_node_unlist(node);
		spin_unlock_irqrestore(&node->fence->lock, flags);
	}
}

void d3dq_fence_cond_free(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_node *node;
	u32 i;

	if (cond->user)
		d3dq_user_uncount_fence_nodes(cond->user, cond->count);
	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		if (node->fh)
			d3dq_fence_handle_put(node->fh);
		if (node->fence)
			d3dq_fence_put(node->fence);
	}
	kvfree(cond);
}

/* The fence's eventfds are a tree by eventfd context. */
static int d3dq_fence_evt_cmp(const void *key, const struct rb_node *rb)
{
	unsigned long a = (unsigned long)key;
	unsigned long b = (unsigned long)rb_entry(rb, struct d3dq_fence_evt,
						  rb)->ctx;

	return a < b ? -1 : a > b;
}

static bool d3dq_fence_evt_less(struct rb_node *a, const struct rb_node *b)
{
	return d3dq_fence_evt_cmp(rb_entry(a, struct d3dq_fence_evt, rb)->ctx,
				  b) < 0;
}

/*
 * Share the eventfd of a single-fence registration with the fence's
 * other registrations of it: @evt, allocated by the caller, is listed if
 * none is, else freed. O(log n) in the fence's distinct eventfds.
 */
static void d3dq_fence_evt_get(struct d3dq_fence_cond *cond,
			       struct d3dq_fence_evt *evt)
{
	struct d3dq_fence *fence = cond->nodes[0].fence;
	struct rb_node *rb;
	unsigned long flags;

	spin_lock_irqsave(&fence->lock, flags);
	rb = rb_find(cond->ctx, &fence->evts, d3dq_fence_evt_cmp);
	if (rb) {
		cond->evt = rb_entry(rb, struct d3dq_fence_evt, rb);
		cond->evt->users++;
	} else {
		evt->ctx = cond->ctx;
		evt->users = 1;
		evt->signalled = fence->changes - 1;
		evt->drained = fence->changes - 1;
		rb_add(&evt->rb, &fence->evts, d3dq_fence_evt_less);
		cond->evt = evt;
		evt = NULL;
	}
	spin_unlock_irqrestore(&fence->lock, flags);
	kfree(evt);
}

static void d3dq_fence_evt_put(struct d3dq_fence_cond *cond)
{
	struct d3dq_fence_evt *evt = cond->evt;
	struct d3dq_fence *fence;
	unsigned long flags;

	if (!evt)
		return;
	fence = cond->nodes[0].fence;
	spin_lock_irqsave(&fence->lock, flags);
	if (--evt->users == 0)
		rb_erase(&evt->rb, &fence->evts);
	else
		evt = NULL;
	spin_unlock_irqrestore(&fence->lock, flags);
	kfree(evt);
}

/*
 * A registration fired and its ioctl is done. A syncobj registration
 * adds its point now: a stub fence, signalled already, in the chain node
 * allocated at registration.
 */
static void d3dq_fence_event_release(struct d3dq_fence_cond *cond)
{
	struct d3dq_file *dfile = cond->dfile;
	struct d3dq_device *ddev = dfile->ddev;
	struct dma_fence *stub;

	/*
	 * An unplugged device may go with the fences' last references:
	 * only after the file, whose user it lists, and its counts.
	 */
	drm_dev_get(&ddev->drm);

	d3dq_fence_cond_unlink(cond);
	d3dq_fence_evt_put(cond);
	if (cond->syncobj) {
		stub = dma_fence_get_stub();
		drm_syncobj_add_point(cond->syncobj, cond->chain, stub,
				      cond->point);
		dma_fence_put(stub);
		drm_syncobj_put(cond->syncobj);
	} else {
		eventfd_ctx_put(cond->ctx);
	}
	d3dq_fence_cond_free(cond);
	atomic_dec(&ddev->count.fence_events);
	d3dq_user_uncount_fence_event(dfile->user);
	d3dq_file_put(dfile);
	drm_dev_put(&ddev->drm);
}

static void d3dq_fence_event_free(struct work_struct *work)
{
	d3dq_fence_event_release(container_of(work, struct d3dq_fence_cond,
					      work));
}

static void d3dq_fence_events_reap(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&d3dq_fence_events_done);
	struct d3dq_fence_cond *cond, *next;

	llist_for_each_entry_safe(cond, next, list, done) {
		d3dq_fence_event_release(cond);
		cond_resched();
	}
}

/*
 * Free the fired registrations now: before a registration is refused
 * for the user's bound, and before the module's work queues go.
 */
void d3dq_fence_events_flush(void)
{
	flush_delayed_work(&d3dq_fence_events_work);
}

static int d3dq_fence_node_cmp(const void *a, const void *b)
{
	const struct d3dq_fence_node *x = a, *y = b;

	if (x->fh != y->fh)
		return x->fh < y->fh ? -1 : 1;
	return 0;
}

/*
 * One node per handle: a fence named twice through one handle waits for
 * the larger value (all: reaching it reaches the smaller one at that
 * moment) or the smaller one (any). Sorted by handle first, so that this
 * costs O(n log n); the order of the nodes means nothing.
 */
static u32 d3dq_fence_nodes_merge(struct d3dq_fence_node *nodes, u32 n,
				  bool any)
{
	u32 i, out = 0;

	sort(nodes, n, sizeof(*nodes), d3dq_fence_node_cmp, NULL);
	for (i = 0; i < n; i++) {
		if (out && nodes[out - 1].fh == nodes[i].fh) {
			if (any ? nodes[i].value < nodes[out - 1].value :
				  nodes[i].value > nodes[out - 1].value)
				nodes[out - 1].value = nodes[i].value;
			/* The duplicate's references go. */
			d3dq_fence_handle_put(nodes[i].fh);
			d3dq_fence_put(nodes[i].fence);
			continue;
		}
		nodes[out++] = nodes[i];
	}
	return out;
}

/*
 * Read and check the array of a wait or registration, and make the
 * condition with its nodes, each holding a reference to its fence and
 * to the handle it came through, one per handle; count them against
 * the user's max_user_fence_nodes.
 */
static struct d3dq_fence_cond *
d3dq_fence_cond_create(struct d3dq_file *dfile,
		       const struct drm_d3dq_obj_array *arr, u32 flags)
{
	bool any = flags & DRM_D3DQ_FENCE_WAIT_ANY;
	struct drm_d3dq_fence_value fv;
	struct d3dq_fence_cond *cond;
	struct d3dq_fence_node *node;
	u64 offset;
	u32 i;
	int ret;

	if (flags & ~DRM_D3DQ_FENCE_WAIT_ANY)
		return ERR_PTR(-EINVAL);
	if (!arr->count || arr->count > d3dq_max_syncs)
		return ERR_PTR(-EINVAL);
	if (arr->stride < sizeof(fv) || arr->stride > D3DQ_MAX_FENCE_STRIDE)
		return ERR_PTR(-EINVAL);

	cond = kvzalloc(struct_size(cond, nodes, arr->count), D3DQ_GFP);
	if (!cond)
		return ERR_PTR(-ENOMEM);
	init_waitqueue_head(&cond->wq);
	refcount_set(&cond->refs, 2);	/* the ioctl and the firing */

	for (i = 0; i < arr->count; i++) {
		/* count * stride is below 2^29: no overflow. */
		offset = (u64)i * arr->stride;
		ret = copy_struct_from_user(&fv, sizeof(fv),
					    u64_to_user_ptr(arr->array + offset),
					    arr->stride);
		if (ret) {
			ret = ret == -E2BIG ? -EINVAL : ret;
			goto err;
		}
		if (fv.pad) {
			ret = -EINVAL;
			goto err;
		}
		node = &cond->nodes[i];
		node->fh = d3dq_fence_handle_lookup(dfile, fv.handle);
		if (!node->fh) {
			ret = -ENOENT;
			goto err;
		}
		cond->count = i + 1;
		node->fence = node->fh->fence;
		d3dq_fence_get(node->fence);
		node->value = fv.value;
	}
	cond->count = d3dq_fence_nodes_merge(cond->nodes, cond->count, any);
	for (i = 0; i < cond->count; i++) {
		node = &cond->nodes[i];
		RB_CLEAR_NODE(&node->rb);
		RB_CLEAR_NODE(&node->hrb);
		INIT_LIST_HEAD(&node->hlink);
		INIT_LIST_HEAD(&node->blink);
		node->cond = cond;
	}
	atomic_set(&cond->remaining, any ? 1 : cond->count);
	cond->any = any && cond->count > 1;
	ret = d3dq_user_count_fence_nodes(dfile->user, cond->count,
					  "FENCE_WAIT or FENCE_EVENT");
	if (ret)
		goto err;
	cond->user = dfile->user;
	return cond;

err:
	d3dq_fence_cond_free(cond);
	return ERR_PTR(ret);
}

static void d3dq_fence_cond_arm(struct d3dq_fence_cond *cond)
{
	u32 i;

	for (i = 0; i < cond->count; i++)
		d3dq_fence_node_arm(&cond->nodes[i]);
}

static bool d3dq_fence_cond_done(struct d3dq_fence_cond *cond)
{
	return atomic_read(&cond->remaining) <= 0;
}

/*
 * A CPU wait ends, however it ended: whether its condition fired. Once
 * this returns nobody touches @cond, which the caller frees.
 *
 * A condition that fired has every node unlisted by whoever satisfied
 * it (each node is unlisted before it counts down), unless it waits for
 * any of several: then its waiter leaves without taking a fence's lock.
 * Else its nodes are unlisted here (which waits for a write satisfying
 * one of them); if that write fired the condition meanwhile, its wake-up
 * follows once its fence's lock is dropped, and is waited for.
 */
static bool d3dq_fence_cond_wait_end(struct d3dq_fence_cond *cond)
{
	bool woken;

	/* Pairs with d3dq_fence_cond_wake(): its last touch is the unlock. */
	spin_lock_irq(&cond->wq.lock);
	woken = cond->woken;
	spin_unlock_irq(&cond->wq.lock);
	if (woken && !cond->any)
		return true;
	d3dq_fence_cond_unlink(cond);
	if (!d3dq_fence_cond_done(cond))
		return false;
	/* Fired, by now or in a moment: nobody listed can fire it again. */
	wait_event(cond->wq, READ_ONCE(cond->woken));
	spin_lock_irq(&cond->wq.lock);
	spin_unlock_irq(&cond->wq.lock);
	return true;
}

static bool d3dq_fence_cond_woken(struct d3dq_fence_cond *cond)
{
	return READ_ONCE(cond->woken);
}

int d3dq_ioctl_fence_wait(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_d3dq_fence_wait *args = data;
	struct d3dq_fence_cond *cond;
	ktime_t timeout, now;
	int ret;

	if (args->pad)
		return -EINVAL;
	cond = d3dq_fence_cond_create(file->driver_priv, &args->fences,
				      args->flags);
	if (IS_ERR(cond))
		return PTR_ERR(cond);

	d3dq_fence_cond_arm(cond);
	/* CLOCK_MONOTONIC is >= 0: a negative deadline is in the past. */
	now = ktime_get();
	if (args->deadline_ns == S64_MAX)
		timeout = KTIME_MAX;
	else if (args->deadline_ns <= now)
		timeout = 0;
	else
		timeout = ktime_sub(ns_to_ktime(args->deadline_ns), now);
	if (d3dq_fence_cond_woken(cond))
		ret = 0;
	else if (timeout <= 0)
		ret = -ETIME;
	else
		ret = wait_event_interruptible_hrtimeout(cond->wq,
							 d3dq_fence_cond_woken(cond),
							 timeout);
	/* Met at the last moment: the condition wins. */
	if (d3dq_fence_cond_wait_end(cond))
		ret = 0;
	d3dq_fence_cond_free(cond);
	return ret;
}

/*
 * The target of a registration: an eventfd, or with
 * %DRM_D3DQ_FENCE_EVENT_SYNCOBJ a point of a syncobj of @file, with the
 * chain node that adding the point needs.
 */
static int d3dq_fence_event_target(struct drm_file *file,
				   const struct drm_d3dq_fence_event *args,
				   struct d3dq_fence_cond *cond)
{
	struct eventfd_ctx *ctx;

	if (!(args->flags & DRM_D3DQ_FENCE_EVENT_SYNCOBJ)) {
		if (args->syncobj || args->pad || args->point)
			return -EINVAL;
		/* -EBADF for a closed fd, -EINVAL for anything else. */
		ctx = eventfd_ctx_fdget(args->eventfd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
		cond->ctx = ctx;
		return 0;
	}
	if (args->eventfd || args->pad || !args->point)
		return -EINVAL;
	cond->chain = dma_fence_chain_alloc();
	if (!cond->chain)
		return -ENOMEM;
	cond->syncobj = drm_syncobj_find(file, args->syncobj);
	if (!cond->syncobj) {
		dma_fence_chain_free(cond->chain);
		cond->chain = NULL;
		return -ENOENT;
	}
	cond->point = args->point;
	return 0;
}

static void d3dq_fence_event_target_put(struct d3dq_fence_cond *cond)
{
	if (cond->syncobj) {
		dma_fence_chain_free(cond->chain);
		drm_syncobj_put(cond->syncobj);
	} else {
		eventfd_ctx_put(cond->ctx);
	}
}

int d3dq_ioctl_fence_event(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_d3dq_fence_event *args = data;
	struct d3dq_fence_evt *evt = NULL;
	struct d3dq_fence_cond *cond;
	int ret;

	if (args->flags & DRM_D3DQ_FENCE_EVENT_ARMED && args->fences.count != 1)
		return -EINVAL;
	cond = d3dq_fence_cond_create(dfile, &args->fences,
				      args->flags &
				      ~(DRM_D3DQ_FENCE_EVENT_SYNCOBJ |
					DRM_D3DQ_FENCE_EVENT_ARMED));
	if (IS_ERR(cond))
		return PTR_ERR(cond);
	cond->armed = args->flags & DRM_D3DQ_FENCE_EVENT_ARMED;
	ret = d3dq_fence_event_target(file, args, cond);
	if (ret)
		goto err_free;
	/* As called: a multi-fence registration is one of its own (R10). */
	if (cond->ctx && args->fences.count == 1) {
		evt = kzalloc(sizeof(*evt), D3DQ_GFP);
		if (!evt) {
			ret = -ENOMEM;
			goto err_target;
		}
	}
	ret = d3dq_user_count_fence_event(dfile->user);
	/*
	 * Not only when the list holds some: a batch the work took off it
	 * may still be being freed (on a debug kernel, for a while).
	 */
	if (ret == -EDQUOT) {
		d3dq_fence_events_flush();
		ret = d3dq_user_count_fence_event(dfile->user);
	}
	if (ret)
		goto err_target;
	if (evt)
		d3dq_fence_evt_get(cond, evt);

	cond->dfile = dfile;
	d3dq_file_get(dfile);
	INIT_WORK(&cond->work, d3dq_fence_event_free);
	atomic_inc(&dfile->ddev->count.fence_events);
	/* It may fire here already; it is freed once both refs are gone. */
	d3dq_fence_cond_arm(cond);
	d3dq_fence_cond_put(cond);
	return 0;

err_target:
	kfree(evt);
	d3dq_fence_event_target_put(cond);
err_free:
	d3dq_fence_cond_free(cond);
	return ret;
}
