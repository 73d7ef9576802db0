// SPDX-License-Identifier: MIT
/*
 * libd3dq: fences, CPU signals, events and blocking waits, on the
 * kernel's fence object (uapi 1.3).
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Every fence, local or shared, is a kernel fence. Its value is in a page
 * the kernel writes and this process maps read-only (device.c), so
 * reading it is one acquire load, for a shared fence as for a local one,
 * whoever changed it. That value is the only one: a CPU signal writes it
 * with FENCE_SIGNAL, any value (R2, R20), and so does the completion
 * applier (worker.c) at the moment a queue signal takes effect (R4, R17).
 * The kernel holds the eventfds of events (FENCE_EVENT: it writes each
 * once, at the value write that satisfies it, R10, R13, R19) and the
 * threads that block (FENCE_WAIT); the library keeps nothing for them.
 *
 * What the library keeps is what its own queue machinery and token
 * events need: the tickets of held queue waits, the queue waits in the
 * kernel it may release early, and the token events of a device with a
 * callback. The changes it makes itself satisfy them in
 * fence_signalled_locked(), under the fence's lock, right after the
 * kernel write; what needs a system call (early releases) or no fence
 * lock is collected in a struct fire and done by fire_run(). Another
 * process may change a shared fence: each ticket and token event on one
 * also has a watch, a kernel registration that adds a point to a syncobj
 * the worker waits on once the fence reaches the target
 * (DRM_D3DQ_FENCE_EVENT_SYNCOBJ). The worker learns that this target was
 * reached, at the write, even if the value went back before it looked
 * (R6): nothing re-reads the value to decide that a wait is satisfied.
 *
 * Destruction releases what waits (R14). A fence's handle lives until
 * its last reference goes, so no call ever names a handle the kernel has
 * given to another fence since. A local fence is then set to UINT64_MAX,
 * which nobody else sees; a shared fence's events and watches were made
 * through a second handle of it, destroyed then (the kernel releases
 * them), and its blocking waits also wait for its wake fence, a local
 * kernel fence set to 1 then. Other processes see nothing of it (R20).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * Fire token event @e: hand the call of the device's callback to the
 * dispatcher (a token fires once: its registration's only).
 */
static void fire_event(struct evref *e)
{
	if (e->item) {
		dispatch_push(e->item);
		e->item = NULL;
	}
}

static void multi_unref(struct multi_reg *m)
{
	uint32_t i;

	if (atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	for (i = 0; i < m->count; i++)
		if (m->regs[i].fence)
			fence_unref(m->regs[i].fence);
	if (m->ev)
		evref_put(m->ev);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void fence_unref(struct d3dq_fence *f)
{
	struct d3dq_device *dev = f->dev;
	size_t i;

	if (atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	/*
	 * Destruction released every registration; a multi-fence one holds
	 * a reference to the fence, so none of those can be left.
	 */
	for (i = 0; i < f->heap_len; i++) {
		if (f->heap[i]->ev)
			evref_put(f->heap[i]->ev);
		free(f->heap[i]);
	}
	free(f->heap);
	/*
	 * Unmapped first: once the kernel frees the fence (its last handle
	 * here and elsewhere gone), its page's mmap offset may be given to
	 * a new fence, which must not find this mapping in the cache.
	 */
	vpage_unmap(dev, f->page);
	kfence_destroy(dev->fd, f->reg);
	kfence_destroy(dev->fd, f->wake);
	kfence_destroy(dev->fd, f->handle);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* Min-heap of registrations keyed by target; each knows its index. */
static void heap_set(struct d3dq_fence *f, size_t i, struct ev_reg *r)
{
	f->heap[i] = r;
	r->heap_idx = i;
}

static void heap_up(struct d3dq_fence *f, size_t i, struct ev_reg *r)
{
	while (i && f->heap[(i - 1) / 2]->target > r->target) {
		heap_set(f, i, f->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(f, i, r);
}

static void heap_down(struct d3dq_fence *f, size_t i, struct ev_reg *r)
{
	size_t c;

	while ((c = 2 * i + 1) < f->heap_len) {
		if (c + 1 < f->heap_len &&
		    f->heap[c + 1]->target < f->heap[c]->target)
			c++;
		if (f->heap[c]->target >= r->target)
			break;
		heap_set(f, i, f->heap[c]);
		i = c;
	}
	heap_set(f, i, r);
}

static int heap_push(struct d3dq_fence *f, struct ev_reg *r)
{
	if (f->heap_len == f->heap_cap) {
		size_t cap = f->heap_cap ? f->heap_cap * 2 : 16;
		struct ev_reg **h = realloc(f->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		f->heap = h;
		f->heap_cap = cap;
	}
	heap_up(f, f->heap_len++, r);
	return 0;
}

/* Out of the heap: its watch, if any, has nothing left to fire. */
static void heap_remove(struct d3dq_fence *f, size_t i)
{
	struct ev_reg *r = f->heap[i], *last = f->heap[--f->heap_len];

	r->heap_idx = NO_HEAP;
	if (r->watch) {
		r->watch->reg = NULL;
		r->watch = NULL;
	}
	if (i == f->heap_len)
		return;
	if (i && f->heap[(i - 1) / 2]->target > last->target)
		heap_up(f, i, last);
	else
		heap_down(f, i, last);
}

static struct ev_reg *heap_pop(struct d3dq_fence *f)
{
	struct ev_reg *top = f->heap[0];

	heap_remove(f, 0);
	return top;
}

/*
 * @arr with room for element @n: @arr itself, a larger copy (*@cap
 * updated), or NULL when out of memory (@arr unchanged).
 */
static void *grow(void *arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return arr;
	ncap = *cap ? *cap * 2 : 8;
	p = realloc(arr, ncap * size);
	if (p)
		*cap = ncap;
	return p;
}

int fire_add_release(struct fire *fire, uint32_t queue_id, uint32_t index,
		     uint64_t seqno)
{
	struct release *rel = grow(fire->rel, &fire->caprel, fire->nrel,
				   sizeof(*rel));

	if (!rel)
		return -ENOMEM;
	fire->rel = rel;
	fire->rel[fire->nrel].queue_id = queue_id;
	fire->rel[fire->nrel].index = index;
	fire->rel[fire->nrel].seqno = seqno;
	fire->nrel++;
	return 0;
}

/*
 * One fence of a multi-fence registration reached its value. If this hit
 * fires it, the token is handed over now, and the heap's reference to @m
 * moves to the fire list, which removes what is left of @m on other
 * fences; otherwise the reference is dropped.
 */
static void multi_hit(struct multi_reg *m, struct fire *fire)
{
	pthread_mutex_lock(&m->lock);
	if (!m->fired && (m->any || --m->remaining == 0)) {
		m->fired = true;
		fire_event(m->ev);
		m->fire_next = fire->multis;
		fire->multis = m;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	pthread_mutex_unlock(&m->lock);
	/*
	 * Never the last reference: until @m fires, the hit that fires it
	 * still has its own; after, whoever fired it holds one until it
	 * has removed the rest.
	 */
	atomic_fetch_sub(&m->refs, 1);
}

static int cmp_token(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)(*(struct evref *const *)a)->token;
	uintptr_t y = (uintptr_t)(*(struct evref *const *)b)->token;

	return (x > y) - (x < y);
}

/*
 * Fire the token events of the registrations popped in one change of the
 * value, each token once however many of its registrations were reached
 * (R10).
 */
static void fire_popped(struct ev_reg *popped)
{
	struct evref **evs;
	struct ev_reg *r;
	size_t n = 0, i;

	for (r = popped; r; r = r->next)
		n++;
	if (!n)
		return;
	evs = malloc(n * sizeof(*evs));
	if (!evs) {
		for (r = popped; r; r = r->next)
			fire_event(r->ev);
		return;
	}
	for (i = 0, r = popped; r; r = r->next)
		evs[i++] = r->ev;
	qsort(evs, n, sizeof(*evs), cmp_token);
	for (i = 0; i < n; i++)
		if (!i || evs[i]->token != evs[i - 1]->token)
			fire_event(evs[i]);
	free(evs);
}

/*
 * Registration @r left the heap because its value was reached: a
 * multi-fence one is hit, a single one goes to the firing list @popped
 * (ending at *@last).
 */
static void reg_reached(struct ev_reg *r, struct ev_reg **popped,
			struct ev_reg **last, struct fire *fire)
{
	if (r->multi) {
		multi_hit(r->multi, fire);
		return;
	}
	r->next = *popped;
	*popped = r;
	if (!*last)
		*last = r;
}

/* Fire @popped and leave the registrations to @fire to free. */
static void fire_single(struct ev_reg *popped, struct ev_reg *last,
			struct fire *fire)
{
	fire_popped(popped);
	if (last) {
		last->next = fire->events;
		fire->events = popped;
	}
}

/* A ticket is satisfied or dropped: its watch has nothing left to do. */
void fence_ticket_unlink_locked(struct ticket *t)
{
	if (t->linked) {
		list_del(&t->link);
		t->linked = false;
	}
	if (t->watch) {
		t->watch->ticket = NULL;
		t->watch = NULL;
	}
}

static void ticket_satisfy_locked(struct d3dq_fence *f, struct ticket *t)
{
	t->satisfied = true;
	fence_ticket_unlink_locked(t);
	dev_ready_push(f->dev, t->queue);
}

/*
 * The value of @f is now @value (this process wrote it), or, with @all,
 * @f is released (destroyed or the device removed): satisfy tickets,
 * release kernel waits, fire the token events reached. What needs no
 * fence lock (freeing the registrations, early releases, removing what is
 * left of fired multi-fence registrations) goes to @fire. f->lock held.
 */
void fence_signalled_locked(struct d3dq_fence *f, uint64_t value, bool all,
			    struct fire *fire)
{
	struct ev_reg *popped = NULL, *last = NULL;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (all || t->value <= value)
			ticket_satisfy_locked(f, t);
	}
	list_for_each_safe(pos, tmp, &f->kwaits) {
		struct edge *e = container_of(pos, struct edge, flink);

		if (!all && e->value > value)
			continue;
		e->linked = false;
		list_del(&e->flink);
		/*
		 * The applier knows the point the wait is on completed (the
		 * signal being applied, or earlier): the kernel wait is over,
		 * no release needed.
		 */
		if (fire->done_q &&
		    ((e->dep == fire->done_q &&
		      e->dep_point <= fire->done_point) ||
		     e->dep->completed >= e->dep_point))
			continue;
		/*
		 * Whoever applies the waiting queue ignores this edge once it
		 * is released. Out of memory, it is not: the wait then ends
		 * with its point and stays a dependency.
		 */
		if (!fire_add_release(fire, e->queue_id, e->index, e->seqno))
			atomic_store_explicit(&e->released, true,
					      memory_order_release);
	}
	while (f->heap_len && (all || f->heap[0]->target <= value))
		reg_reached(heap_pop(f), &popped, &last, fire);
	fire_single(popped, last, fire);
}

/* Remove the registrations of a fired multi-fence registration. */
static void multi_cancel(struct multi_reg *m)
{
	uint32_t i;

	for (i = 0; i < m->count; i++) {
		struct ev_reg *r = &m->regs[i];
		bool dropped = false;

		if (!r->fence)
			continue;
		pthread_mutex_lock(&r->fence->lock);
		if (r->heap_idx != NO_HEAP) {
			heap_remove(r->fence, r->heap_idx);
			dropped = true;
		}
		pthread_mutex_unlock(&r->fence->lock);
		/* The caller holds a reference: never the last one. */
		if (dropped)
			atomic_fetch_sub(&m->refs, 1);
	}
}

/*
 * Do what @fire collected, with no fence lock held: free the fired
 * registrations, remove what is left of fired multi-fence registrations,
 * release kernel waits early.
 */
void fire_run(struct d3dq_device *dev, struct fire *fire)
{
	struct ev_reg *r, *next;
	struct multi_reg *m, *mnext;
	size_t i;

	for (r = fire->events; r; r = next) {
		next = r->next;
		evref_put(r->ev);
		free(r);
	}
	fire->events = NULL;

	for (m = fire->multis; m; m = mnext) {
		mnext = m->fire_next;
		multi_cancel(m);
		multi_unref(m);
	}
	fire->multis = NULL;

	for (i = 0; i < fire->nrel; i++) {
		struct drm_d3dq_wait_release args = {
			.queue_id = fire->rel[i].queue_id,
			.index = fire->rel[i].index,
			.seqno = fire->rel[i].seqno,
		};

		/* Idempotent; a job that already ran is no error. */
		d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &args);
	}
	free(fire->rel);
	fire->rel = NULL;
	fire->nrel = 0;
	fire->caprel = 0;
	fire->done_q = NULL;
}

/* The value: one acquire load of the kernel's page, no system call. */
uint64_t fence_value(struct d3dq_fence *f)
{
	uint64_t v = atomic_load_explicit(f->vp, memory_order_acquire);

	/*
	 * A removal reads UINT64_MAX from when it stops the device, not
	 * from when it reaches this fence (R15, one instant).
	 */
	return v != UINT64_MAX && dev_removed(f->dev) ? UINT64_MAX : v;
}

/* Is a wait for @value over (now)? f->lock held or not. */
bool fence_reached(struct d3dq_fence *f, uint64_t value)
{
	return fence_value(f) >= value || atomic_load(&f->destroyed) ||
	       dev_removed(f->dev);
}

/*
 * The completion applier (worker.c) applies queue signal @s, apply_lock
 * and f->lock held: see fence_take_locked().
 */
void fence_apply_locked(struct sig_rec *s, struct fire *fire)
{
	struct d3dq_fence *f = s->fence;

	list_del(&s->flink);
	atomic_fetch_sub(&f->npending, 1);
	fence_take_locked(f, s->value, s->queue, s->r.point, fire);
}

/*
 * The value of a queue signal (@value) completed at point @point of @q:
 * what fence_apply_locked() does once the signal is off the fence's
 * pending list, also for a signal applied as it is recorded. The kernel's
 * value becomes exactly @value now (R4: signals take effect in the order
 * their work completes, whatever the order of the calls; a lower value
 * too, shared or not, R20), and what it satisfies here is satisfied. A
 * shared fence destroyed here still takes it (other processes see it).
 * apply_lock and f->lock held.
 */
void fence_take_locked(struct d3dq_fence *f, uint64_t value,
		       struct d3dq_queue *q, uint64_t point, struct fire *fire)
{
	bool destroyed = atomic_load(&f->destroyed);

	if (dev_removed(f->dev))
		return;
	fire->done_q = q;
	fire->done_point = point;
	if (destroyed && !f->shared)
		return;
	/* -ENODEV: an unplug set it to UINT64_MAX; the removal follows. */
	if (kfence_signal(f->dev->fd, f->handle, value) || destroyed)
		return;
	fence_signalled_locked(f, value, false, fire);
}

/*
 * Which submitted signal can a wait for @value rely on? Every queue
 * signal takes effect when its work completes (R4, R18), so any pending
 * one at least @value will do. CHOICE_READY if one comes earlier on @q
 * itself (R9: queue order), or if the first one needs nothing to
 * complete: it was recorded at point 0 of a queue that had submitted no
 * job, and record_signal() applies it before anyone can apply what comes
 * after this wait (there is no kernel point to wait for). CHOICE_POINT
 * with @out set (and a reference to its queue) for the first one
 * submitted otherwise; else CHOICE_NONE. @q is NULL for a CPU wait.
 * f->lock held.
 */
enum choice fence_choose_locked(struct d3dq_fence *f, struct d3dq_queue *q,
				uint64_t value, struct dep *out)
{
	struct sig_rec *best = NULL;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->pending) {
		struct sig_rec *u = container_of(pos, struct sig_rec, flink);

		if (u->value < value)
			continue;
		if (q && u->queue == q)
			return CHOICE_READY;
		if (!best)
			best = u;
	}
	if (!best)
		return CHOICE_NONE;
	if (!best->r.point)
		return CHOICE_READY;
	queue_ref(best->queue);
	out->q = best->queue;
	out->point = best->r.point;
	return CHOICE_POINT;
}

/*
 * A queue wait for e->value is in the kernel as job e->seqno: link it so
 * that a CPU signal reaching the value, destruction or removal release
 * it (R6, R14); release it at once if that already happened.
 */
void fence_kwait_link(struct edge *e, struct fire *fire)
{
	struct d3dq_fence *f = e->fence;

	pthread_mutex_lock(&f->lock);
	if (fence_reached(f, e->value)) {
		if (!fire_add_release(fire, e->queue_id, e->index, e->seqno))
			atomic_store_explicit(&e->released, true,
					      memory_order_release);
	} else {
		list_add_tail(&e->flink, &f->kwaits);
		e->linked = true;
	}
	pthread_mutex_unlock(&f->lock);
}

void fence_kwait_unlink(struct edge *e)
{
	struct d3dq_fence *f = e->fence;

	pthread_mutex_lock(&f->lock);
	if (e->linked) {
		list_del(&e->flink);
		e->linked = false;
	}
	pthread_mutex_unlock(&f->lock);
}

/* Destruction or removal: release every waiter. */
void fence_release_all(struct d3dq_fence *f, struct fire *fire)
{
	pthread_mutex_lock(&f->lock);
	fence_signalled_locked(f, UINT64_MAX, true, fire);
	pthread_mutex_unlock(&f->lock);
}

/*
 * Device removal (the device already refuses CPU signals). The kernel's
 * REMOVE set every fence of this file to UINT64_MAX for good, which every
 * process holding a shared one sees (R15); if the driver refused it, the
 * library writes UINT64_MAX itself, as near to one instant as it can.
 */
void fences_remove(struct d3dq_fence **fs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct d3dq_fence *f = fs[i];

		pthread_mutex_lock(&f->lock);
		if (atomic_load_explicit(f->vp, memory_order_acquire) !=
		    UINT64_MAX)
			kfence_signal(f->dev->fd, f->handle, UINT64_MAX);
		pthread_mutex_unlock(&f->lock);
	}
}

/*
 * A watch on shared fence @f for @value: a kernel registration through
 * the fence's registration handle that adds point 1 to a new syncobj once
 * the value is reached (at once if it is), which the worker waits for.
 * The caller links what it watches and rings the worker. f->lock held,
 * so that the registration handle is not destroyed meanwhile.
 */
int fence_watch_locked(struct d3dq_fence *f, uint64_t value,
		       struct watch **out)
{
	struct drm_d3dq_fence_value fv = { .handle = f->reg, .value = value };
	struct d3dq_device *dev = f->dev;
	struct watch *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	ret = syncobj_create(dev->fd, &w->sobj);
	if (ret) {
		free(w);
		return ret;
	}
	ret = kfence_event(dev->fd, &fv, 1, DRM_D3DQ_FENCE_EVENT_SYNCOBJ, 0,
			   w->sobj, 1);
	if (ret) {
		syncobj_destroy(dev->fd, w->sobj);
		free(w);
		return ret;
	}
	fence_ref(f);
	w->fence = f;
	pthread_mutex_lock(&dev->watch_lock);
	list_add_tail(&w->link, &dev->watches);
	pthread_mutex_unlock(&dev->watch_lock);
	*out = w;
	return 0;
}

/*
 * Worker: the point of watch @w was added: its fence reached the value
 * at some moment (or was released). Satisfy its ticket, fire its token,
 * if they are still there; then the watch is done.
 */
void watch_fired(struct d3dq_device *dev, struct watch *w)
{
	struct ev_reg *popped = NULL, *last = NULL, *r;
	struct d3dq_fence *f = w->fence;
	struct fire fire = FIRE_INIT;

	pthread_mutex_lock(&f->lock);
	if (w->ticket)
		ticket_satisfy_locked(f, w->ticket);
	r = w->reg;
	if (r) {
		heap_remove(f, r->heap_idx);
		reg_reached(r, &popped, &last, &fire);
		fire_single(popped, last, &fire);
	}
	pthread_mutex_unlock(&f->lock);
	fire_run(dev, &fire);

	pthread_mutex_lock(&dev->watch_lock);
	list_del(&w->link);
	pthread_mutex_unlock(&dev->watch_lock);
	syncobj_destroy(dev->fd, w->sobj);
	fence_unref(f);
	free(w);
}

/*
 * Something needs the worker to apply @f's queue signals from now on (an
 * event registration, a held queue wait, a blocking wait, a read of the
 * value or a CPU signal while signals are pending, a second queue
 * signalling it). Until then the worker does not wake for them: they are
 * applied when something they caused is (R17), when a thread waits for
 * their point itself, when their queue has many records, or when the
 * fence is first looked at (fence_refresh()), so that no observation
 * ever sees a value older than what completed. Wakes the worker if
 * signals are pending already, so that it waits for them.
 */
void fence_observe(struct d3dq_fence *f)
{
	if (atomic_load_explicit(&f->observed, memory_order_relaxed) ||
	    atomic_exchange(&f->observed, true))
		return;
	if (atomic_load(&f->npending) && atomic_load(&f->dev->worker_started))
		dev_ring(f->dev);
}

static int fence_alloc(struct d3dq_device *dev, struct d3dq_fence **out)
{
	struct d3dq_fence *f;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->dev = dev;
	atomic_init(&f->refs, 1);
	pthread_mutex_init(&f->lock, NULL);
	list_init(&f->pending);
	list_init(&f->tickets);
	list_init(&f->kwaits);
	list_init(&f->dev_link);
	*out = f;
	return 0;
}

/*
 * The rest of a shared fence, from an fd of it: its registration handle
 * and its wake fence. Other processes observe it: the worker applies its
 * queue signals as they complete.
 */
static int shared_setup(struct d3dq_fence *f, int xfd)
{
	uint32_t dummy;
	int ret;

	f->shared = true;
	atomic_store(&f->observed, true);
	ret = kfence_import(f->dev->fd, xfd, &f->reg, NULL, &dummy);
	if (ret)
		return ret;
	return kfence_create(f->dev->fd, 0, 0, &f->wake, NULL, NULL);
}

/* Map @f's value and make it visible to removal and the device's close. */
static int fence_publish(struct d3dq_fence *f, uint64_t offset,
			 uint32_t value_offset)
{
	int ret = vpage_map(f->dev, offset, value_offset, &f->page, &f->vp);

	if (ret)
		return ret;
	return dev_link_object(f->dev, &f->dev_link, &f->dev->fences);
}

/* The driver refuses new fences once a removal stopped the device. */
static int creation_error(struct d3dq_device *dev, int ret)
{
	if (ret != -ENODEV || !dev_refusing(dev))
		return ret;
	dev_refused(dev);
	return dev_removal_error(dev);
}

D3DQ_EXPORT int d3dq_fence_create(struct d3dq_device *dev,
				  uint64_t initial_value, uint32_t flags,
				  struct d3dq_fence **out)
{
	bool shared = flags & D3DQ_FENCE_FLAG_SHARED;
	struct d3dq_fence *f;
	uint32_t voff;
	uint64_t off;
	int ret, xfd;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || (flags & ~(uint32_t)D3DQ_FENCE_FLAG_SHARED))
		return -EINVAL;
	ret = dev_removal_error(dev);
	if (ret)
		return ret;
	ret = fence_alloc(dev, &f);
	if (ret)
		return ret;
	ret = kfence_create(dev->fd, initial_value,
			    shared ? DRM_D3DQ_FENCE_SHARED : 0, &f->handle,
			    &off, &voff);
	if (!ret && shared) {
		ret = kfence_export(dev->fd, f->handle, &xfd);
		if (!ret) {
			ret = shared_setup(f, xfd);
			close(xfd);
		}
	}
	if (!ret)
		ret = fence_publish(f, off, voff);
	if (ret) {
		fence_unref(f);
		return creation_error(dev, ret);
	}
	*out = f;
	return 0;
}

D3DQ_EXPORT int d3dq_fence_export(struct d3dq_fence *f, int *fd)
{
	if (!f || !fd)
		return -EINVAL;
	if (!f->shared)
		return -EINVAL;
	return kfence_export(f->dev->fd, f->handle, fd);
}

D3DQ_EXPORT int d3dq_fence_import(struct d3dq_device *dev, int fd,
				  struct d3dq_fence **out)
{
	struct d3dq_fence *f;
	uint32_t voff;
	uint64_t off;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || fd < 0)
		return -EINVAL;
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	ret = dev_removal_error(dev);
	if (ret)
		return ret;
	ret = fence_alloc(dev, &f);
	if (ret)
		return ret;
	ret = kfence_import(dev->fd, fd, &f->handle, &off, &voff);
	if (!ret)
		ret = shared_setup(f, fd);
	if (!ret)
		ret = fence_publish(f, off, voff);
	if (ret) {
		fence_unref(f);
		return creation_error(dev, ret);
	}
	*out = f;
	return 0;
}

D3DQ_EXPORT void d3dq_fence_destroy(struct d3dq_fence *f)
{
	struct fire fire = FIRE_INIT;
	struct d3dq_device *dev;

	if (!f)
		return;
	dev = f->dev;
	pthread_mutex_lock(&dev->lock);
	list_del(&f->dev_link);
	pthread_mutex_unlock(&dev->lock);

	pthread_mutex_lock(&f->lock);
	atomic_store(&f->destroyed, true);
	/*
	 * Release what waits in the kernel (R14): a local fence goes to
	 * UINT64_MAX, which nobody else sees; a shared one loses the handle
	 * of this process's registrations and wakes its blocked threads,
	 * and other processes see nothing.
	 */
	if (!f->shared) {
		kfence_signal(dev->fd, f->handle, UINT64_MAX);
	} else {
		kfence_destroy(dev->fd, f->reg);
		f->reg = 0;
		kfence_signal(dev->fd, f->wake, 1);
	}
	fence_signalled_locked(f, UINT64_MAX, true, &fire);
	pthread_mutex_unlock(&f->lock);
	fire_run(dev, &fire);
	run_flushes(dev);
	fence_unref(f);
}

D3DQ_EXPORT uint64_t d3dq_fence_get_completed_value(struct d3dq_fence *f)
{
	if (!f)
		return 0;
	fence_refresh(f);
	return fence_value(f);
}

D3DQ_EXPORT int d3dq_fence_signal(struct d3dq_fence *f, uint64_t value)
{
	struct fire fire = FIRE_INIT;
	struct d3dq_device *dev;
	int ret;

	if (!f)
		return -EINVAL;
	dev = f->dev;
	/* What completed before this signal takes effect first (R4). */
	fence_refresh(f);
	pthread_mutex_lock(&f->lock);
	/* Under the lock: a removal writes UINT64_MAX under it too. */
	if (dev_removed(dev))
		ret = -ENODEV;
	else
		ret = kfence_signal(dev->fd, f->handle, value);
	if (!ret)
		fence_signalled_locked(f, value, false, &fire);
	pthread_mutex_unlock(&f->lock);
	fire_run(dev, &fire);
	run_flushes(dev);
	/* The kernel's removal (or an unplug) came first. */
	if (ret == -ENODEV && !dev_removed(dev) &&
	    (dev_refusing(dev) || dev_unplugged(dev))) {
		if (!dev_refusing(dev))
			dev_remove(dev, -ENODEV);
		dev_refused(dev);
	}
	return ret;
}

/*
 * A wait on @f is over. A removal of the device wrote UINT64_MAX to every
 * fence (and released the kernel's waiters) before the library published
 * its reason, and an unplug did so before the library knew: finish the
 * removal first, so that whoever a removal released sees why (R15).
 */
static void settle_removal(struct d3dq_device *dev, struct d3dq_fence *f)
{
	if (dev_removed(dev))
		return;
	if (dev_refusing(dev)) {
		dev_refused(dev);
		return;
	}
	if (atomic_load_explicit(f->vp, memory_order_acquire) == UINT64_MAX &&
	    dev_unplugged(dev)) {
		dev_remove(dev, -ENODEV);
		run_flushes(dev);
	}
}

/*
 * Block until one of @fs reached its value since the call (in the
 * kernel: FENCE_WAIT, ANY), or was destroyed (its wake fence), until
 * @deadline. The caller holds references to @fs. No lock held.
 */
static int wait_any(struct d3dq_device *dev, struct d3dq_fence *const *fs,
		    const uint64_t *values, uint32_t n, int64_t deadline)
{
	struct drm_d3dq_fence_value stack[8] = { { 0 } }, *fv = stack;
	uint32_t i, m = 0;
	int ret;

	for (i = 0; i < n; i++) {
		if (fence_reached(fs[i], values[i])) {
			settle_removal(dev, fs[i]);
			return 0;
		}
		m += fs[i]->shared ? 2 : 1;
	}
	if (m > dev->max_syncs)
		return -EINVAL;
	if (m > sizeof(stack) / sizeof(stack[0])) {
		fv = calloc(m, sizeof(*fv));
		if (!fv)
			return -ENOMEM;
	}
	for (i = 0, m = 0; i < n; i++) {
		/* Its queue signals are applied as they complete. */
		fence_observe(fs[i]);
		fv[m].handle = fs[i]->handle;
		fv[m].pad = 0;
		fv[m++].value = values[i];
		if (fs[i]->shared) {
			fv[m].handle = fs[i]->wake;
			fv[m].pad = 0;
			fv[m++].value = 1;
		}
	}
	/* Restarted on EINTR: the deadline is absolute. */
	ret = kfence_wait(dev->fd, fv, m, DRM_D3DQ_FENCE_WAIT_ANY, deadline);
	if (fv != stack)
		free(fv);
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (!ret) {
		for (i = 0; i < n; i++)
			settle_removal(dev, fs[i]);
	} else if (ret == -ENODEV) {
		/* Unplugged before the wait: every value is UINT64_MAX. */
		settle_removal(dev, fs[0]);
		if (dev_removed(dev))
			ret = 0;
	}
	return ret;
}

D3DQ_EXPORT int d3dq_fence_wait(struct d3dq_fence *f, uint64_t value,
				uint64_t timeout_ns)
{
	int ret;

	if (!f)
		return -EINVAL;
	/* A zero timeout is a read: it sees what completed too. */
	fence_refresh(f);
	if (fence_reached(f, value)) {
		settle_removal(f->dev, f);
		return 0;
	}
	if (!timeout_ns)
		return -ETIMEDOUT;
	/* Another thread may destroy the fence while we sleep. */
	fence_ref(f);
	ret = wait_any(f->dev, &f, &value, 1, abs_timeout(timeout_ns));
	fence_unref(f);
	return ret;
}

/*
 * Register eventfd @eventfd for (@fs[i], @values[i]), ALL or ANY: one
 * FENCE_EVENT. The kernel holds the eventfd, writes it at the value write
 * that satisfies the condition (during the call if it holds), and checks
 * that it is an eventfd (R19).
 */
static int kernel_event(struct d3dq_device *dev, struct d3dq_fence *const *fs,
			const uint64_t *values, uint32_t n, uint32_t flags,
			int eventfd)
{
	struct drm_d3dq_fence_value stack[8] = { { 0 } }, *fv = stack;
	uint32_t i;
	int ret;

	if (eventfd < 0)
		return -EINVAL;
	if (n > sizeof(stack) / sizeof(stack[0])) {
		fv = calloc(n, sizeof(*fv));
		if (!fv)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/* What completed is applied, and what completes will be. */
		fence_refresh(fs[i]);
		fence_observe(fs[i]);
		fv[i].handle = fs[i]->shared ? fs[i]->reg : fs[i]->handle;
		fv[i].pad = 0;
		fv[i].value = values[i];
	}
	ret = kfence_event(dev->fd, fv, n,
			   flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY ?
			   DRM_D3DQ_FENCE_WAIT_ANY : 0, eventfd, 0, 0);
	if (fv != stack)
		free(fv);
	/* R19: a closed descriptor is no eventfd either. */
	if (ret == -EBADF)
		ret = -EINVAL;
	/* The library's documented limit is that of the driver. */
	if (ret == -EDQUOT)
		ret = -ENOMEM;
	return ret;
}

/*
 * Register token @token for @value of @f: in the fence's heap, which the
 * changes this process makes pop, and for a shared fence with a watch
 * too (another process may bring the value).
 */
static int set_token(struct d3dq_fence *f, uint64_t value, void *token)
{
	struct d3dq_device *dev = f->dev;
	struct watch *w = NULL;
	struct evref *ev;
	struct ev_reg *r;
	bool now;
	int ret;

	fence_refresh(f);
	if (f->shared) {
		ret = worker_ensure(dev);
		if (ret)
			return ret;
	}
	ret = evref_token(dev, token, &ev);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r) {
		evref_put(ev);
		return -ENOMEM;
	}
	r->target = value;
	r->ev = ev;
	r->heap_idx = NO_HEAP;

	pthread_mutex_lock(&f->lock);
	now = fence_reached(f, value);
	if (!now)
		ret = heap_push(f, r);
	if (!now && !ret && f->shared) {
		ret = fence_watch_locked(f, value, &w);
		if (ret) {
			heap_remove(f, r->heap_idx);
		} else {
			w->reg = r;
			r->watch = w;
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (!now && !ret)
		fence_observe(f);
	if (w)
		dev_ring(dev);
	if (now)
		fire_event(ev);
	if (now || ret) {
		evref_put(ev);
		free(r);
	}
	return ret;
}

D3DQ_EXPORT int d3dq_fence_set_event_on_completion(struct d3dq_fence *f,
						   uint64_t value, int eventfd)
{
	if (!f)
		return -EINVAL;
	if (eventfd < 0)
		return d3dq_fence_wait(f, value, D3DQ_TIMEOUT_INFINITE);
	return kernel_event(f->dev, &f, &value, 1, 0, eventfd);
}

D3DQ_EXPORT int d3dq_fence_set_token_on_completion(struct d3dq_fence *f,
						   uint64_t value, void *token)
{
	if (!f || !f->dev->signal_event)
		return -EINVAL;
	if (!token)
		return d3dq_fence_wait(f, value, D3DQ_TIMEOUT_INFINITE);
	return set_token(f, value, token);
}

/*
 * Block until ALL or ANY of the values are reached (R13). ALL waits for
 * one fence after the other: each reaches its value at some moment since
 * the call, which is the condition (satisfaction is sticky, R6).
 */
static int wait_multi(struct d3dq_device *dev, struct d3dq_fence *const *fences,
		      const uint64_t *values, uint32_t count, bool any)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count; i++)
		fence_ref(fences[i]);
	if (any)
		ret = wait_any(dev, fences, values, count, INT64_MAX);
	for (i = 0; i < count && !any && !ret; i++)
		ret = wait_any(dev, &fences[i], &values[i], 1, INT64_MAX);
	for (i = 0; i < count; i++)
		fence_unref(fences[i]);
	return ret;
}

/* The token form of the multi-fence call: as set_token(), ALL or ANY. */
static int set_multi_token(struct d3dq_device *dev,
			   struct d3dq_fence *const *fences,
			   const uint64_t *values, uint32_t count, bool any,
			   void *token)
{
	struct multi_reg *m;
	bool shared = false;
	uint32_t i;
	int ret = 0;

	for (i = 0; i < count; i++)
		shared |= fences[i]->shared;
	if (shared) {
		ret = worker_ensure(dev);
		if (ret)
			return ret;
	}

	m = calloc(1, sizeof(*m) + count * sizeof(m->regs[0]));
	if (!m)
		return -ENOMEM;
	ret = evref_token(dev, token, &m->ev);
	if (ret) {
		free(m);
		return ret;
	}
	atomic_init(&m->refs, 1);
	pthread_mutex_init(&m->lock, NULL);
	m->count = count;
	m->remaining = count;
	m->any = any;
	for (i = 0; i < count; i++) {
		m->regs[i].target = values[i];
		m->regs[i].heap_idx = NO_HEAP;
		m->regs[i].multi = m;
		m->regs[i].fence = fences[i];
		fence_ref(fences[i]);
	}

	for (i = 0; i < count && !ret; i++) {
		struct d3dq_fence *f = fences[i];
		struct fire fire = FIRE_INIT;
		struct watch *w = NULL;
		bool fired;

		fence_refresh(f);
		pthread_mutex_lock(&f->lock);
		pthread_mutex_lock(&m->lock);
		fired = m->fired;
		pthread_mutex_unlock(&m->lock);
		if (fired) {
			/* ANY already fired (maybe on another thread). */
			pthread_mutex_unlock(&f->lock);
			break;
		}
		atomic_fetch_add(&m->refs, 1);
		if (fence_reached(f, values[i])) {
			multi_hit(m, &fire);
		} else {
			ret = heap_push(f, &m->regs[i]);
			if (!ret && f->shared) {
				ret = fence_watch_locked(f, values[i], &w);
				if (ret)
					heap_remove(f, m->regs[i].heap_idx);
				else
					m->regs[i].watch = w;
				if (w)
					w->reg = &m->regs[i];
			}
			if (ret)
				atomic_fetch_sub(&m->refs, 1);
		}
		pthread_mutex_unlock(&f->lock);
		fire_run(dev, &fire);
		if (!ret)
			fence_observe(f);
		if (w)
			dev_ring(dev);
	}
	/* Out of memory: nothing of it may fire later. */
	if (ret)
		multi_cancel(m);
	multi_unref(m);
	return ret;
}

static int multi_check(struct d3dq_device *dev,
		       struct d3dq_fence *const *fences,
		       const uint64_t *values, uint32_t count, uint32_t flags)
{
	uint32_t i;

	if (!dev || !count || !fences || !values ||
	    flags > D3DQ_MULTIPLE_FENCE_WAIT_ANY)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!fences[i] || fences[i]->dev != dev)
			return -EINVAL;
	return 0;
}

D3DQ_EXPORT int d3dq_device_set_event_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		int eventfd)
{
	int ret = multi_check(dev, fences, values, count, flags);

	if (ret)
		return ret;
	if (count == 1)
		return d3dq_fence_set_event_on_completion(fences[0], values[0],
							  eventfd);
	if (eventfd < 0)
		return wait_multi(dev, fences, values, count,
				  flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY);
	return kernel_event(dev, fences, values, count, flags, eventfd);
}

D3DQ_EXPORT int d3dq_device_set_token_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		void *token)
{
	int ret;

	if (!dev || !dev->signal_event)
		return -EINVAL;
	ret = multi_check(dev, fences, values, count, flags);
	if (ret)
		return ret;
	if (count == 1)
		return d3dq_fence_set_token_on_completion(fences[0], values[0],
							  token);
	if (!token)
		return wait_multi(dev, fences, values, count,
				  flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY);
	return set_multi_token(dev, fences, values, count,
			       flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY, token);
}
