// SPDX-License-Identifier: MIT
/*
 * libd3dq: fences, CPU signals, events and blocking waits.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * A fence's value is one atomic variable, so reading it needs no lock and
 * (for a fence that is not shared) no system call. Everything that
 * changes it goes through fence_signalled_locked(), under the fence's
 * lock: CPU signals here, queue signals through the completion applier
 * (worker.c), destruction and device removal. That function satisfies the
 * tickets of held queue waits, releases queue waits already in the
 * kernel and pops event registrations; what needs a system call (eventfd
 * writes, early releases) is collected in a struct fire and done by
 * fire_run() once the fence lock is dropped.
 *
 * A shared fence is also a timeline syncobj whose points are values, so
 * that other processes see it. Points are only added once a value has
 * really taken effect (by a CPU signal, or by the applier in causal
 * order), never below the timeline's last point: see library.rst.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static void write_event(int fd)
{
	uint64_t one = 1;

	/* Only fails if the counter would overflow: it is set anyway. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

/*
 * Fire @e: write the eventfd, or hand the call of the device's callback
 * to the dispatcher (a token fires once: its registration's only).
 */
static void fire_event(struct evref *e)
{
	if (e->fd >= 0) {
		write_event(e->fd);
	} else if (e->item) {
		dispatch_push(e->item);
		e->item = NULL;
	}
}

static void multi_unref(struct d3dq_device *dev, struct multi_reg *m)
{
	uint32_t i;

	if (atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	for (i = 0; i < m->count; i++)
		if (m->regs[i].fence)
			fence_unref(m->regs[i].fence);
	if (m->ev)
		evref_put(dev, m->ev);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
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
			evref_put(dev, f->heap[i]->ev);
		free(f->heap[i]);
	}
	free(f->heap);
	if (f->shared)
		syncobj_destroy(dev->fd, f->syncobj);
	syncobj_destroy(dev->fd, f->wake);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
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

static void heap_remove(struct d3dq_fence *f, size_t i)
{
	struct ev_reg *r = f->heap[i], *last = f->heap[--f->heap_len];

	r->heap_idx = NO_HEAP;
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

/* Wake the threads in a kernel wait on @f; f->lock held. */
static void wake_kernel_waiters_locked(struct d3dq_fence *f)
{
	if (!f->kernel_waiters || !f->wake)
		return;
	f->wake_point++;
	syncobj_timeline_signal(f->dev->fd, f->wake, f->wake_point);
}

/*
 * One fence of a multi-fence registration reached its value. If this hit
 * fires it, the event is written (or the blocked caller woken) now, and
 * the heap's reference to @m moves to the fire list, which removes what
 * is left of @m on other fences; otherwise the reference is dropped.
 */
static void multi_hit(struct multi_reg *m, struct fire *fire)
{
	pthread_mutex_lock(&m->lock);
	if (!m->fired && (m->any || --m->remaining == 0)) {
		m->fired = true;
		if (m->ev)
			fire_event(m->ev);
		else
			pthread_cond_broadcast(&m->cond);
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

/* What makes two events the same: the eventfd's reference, or the token. */
static uintptr_t ev_key(const struct evref *e, bool *token)
{
	*token = e->fd < 0;
	return *token ? (uintptr_t)e->token : (uintptr_t)e;
}

static int cmp_ev(const void *a, const void *b)
{
	bool tx, ty;
	uintptr_t x = ev_key(*(struct evref *const *)a, &tx);
	uintptr_t y = ev_key(*(struct evref *const *)b, &ty);

	if (tx != ty)
		return tx - ty;
	return (x > y) - (x < y);
}

/*
 * Fire the events of the registrations popped in one change of the
 * value, each eventfd and each token once however many of its
 * registrations were reached (R10).
 */
static void write_events(struct ev_reg *popped)
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
	qsort(evs, n, sizeof(*evs), cmp_ev);
	for (i = 0; i < n; i++)
		if (!i || cmp_ev(&evs[i], &evs[i - 1]))
			fire_event(evs[i]);
	free(evs);
}

/*
 * The value of @f is now @value, or, with @all, @f is released (destroyed
 * or the device removed): satisfy tickets, release kernel waits, fire the
 * events reached, then wake blocked threads, so that a thread this
 * releases finds the events fired. What needs no fence lock (freeing the
 * registrations, early releases, removing what is left of fired
 * multi-fence registrations) goes to @fire. f->lock held.
 */
void fence_signalled_locked(struct d3dq_fence *f, uint64_t value, bool all,
			    struct fire *fire)
{
	struct ev_reg *r, *popped = NULL, *last = NULL;
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (!all && t->value > value)
			continue;
		t->satisfied = true;
		t->linked = false;
		list_del(&t->link);
		dev_ready_push(f->dev, t->queue);
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
	while (f->heap_len && (all || f->heap[0]->target <= value)) {
		r = heap_pop(f);
		if (r->multi) {
			multi_hit(r->multi, fire);
			continue;
		}
		r->next = popped;
		popped = r;
		if (!last)
			last = r;
	}
	write_events(popped);
	if (last) {
		last->next = fire->events;
		fire->events = popped;
	}
	pthread_cond_broadcast(&f->cond);
	wake_kernel_waiters_locked(f);
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
 * registrations (and the library's eventfd references), remove what is
 * left of fired multi-fence registrations, release kernel waits early.
 */
void fire_run(struct d3dq_device *dev, struct fire *fire)
{
	struct ev_reg *r, *next;
	struct multi_reg *m, *mnext;
	size_t i;

	for (r = fire->events; r; r = next) {
		next = r->next;
		evref_put(dev, r->ev);
		free(r);
	}
	fire->events = NULL;

	for (m = fire->multis; m; m = mnext) {
		mnext = m->fire_next;
		multi_cancel(m);
		multi_unref(dev, m);
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

/*
 * The highest point on a shared fence's timeline, submitted by anyone,
 * or what this process set if that is higher (a failed signal).
 */
static uint64_t shared_last(struct d3dq_fence *f)
{
	uint64_t v = 0, mine = atomic_load(&f->value);

	if (syncobj_query(f->dev->fd, &f->syncobj, &v, 1,
			  DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED))
		v = 0;
	return v > mine ? v : mine;
}

uint64_t fence_value(struct d3dq_fence *f)
{
	uint64_t v = 0, mine;

	if (!f->shared) {
		v = atomic_load_explicit(&f->value, memory_order_acquire);
		/*
		 * A removal reads UINT64_MAX from when it stops the device,
		 * not from when it reaches this fence (R15, one instant).
		 */
		return v != UINT64_MAX && dev_removed(f->dev) ? UINT64_MAX : v;
	}
	if (dev_removed(f->dev) || atomic_load(&f->destroyed))
		return UINT64_MAX;
	mine = atomic_load_explicit(&f->value, memory_order_acquire);
	if (syncobj_query(f->dev->fd, &f->syncobj, &v, 1, 0))
		v = 0;
	return v > mine ? v : mine;
}

/* Is the wait for @value over? f->lock held or not. */
static bool reached(struct d3dq_fence *f, uint64_t value, uint64_t cur)
{
	return cur >= value || atomic_load(&f->destroyed) ||
	       dev_removed(f->dev);
}

/*
 * Check a CPU signal of a shared fence against its timeline: it needs at
 * least the last point (see library.rst). f->lock held.
 */
int fence_shared_check_locked(struct d3dq_fence *f, uint64_t value)
{
	/* A removal that took the timeline to UINT64_MAX is no rewind. */
	if (dev_removed(f->dev))
		return -ENODEV;
	if (value < shared_last(f))
		return -EINVAL;
	return 0;
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
 * pending list, also for a signal applied as it is recorded. The value
 * becomes exactly @value (R4: signals take effect in the order their work
 * completes, whatever the order of the calls). A shared fence takes it on
 * its timeline first, unless that already holds a higher point (a
 * timeline only grows: a queue signal that would lower it changes
 * nothing), also when the fence was destroyed here (peers still see it).
 * apply_lock and f->lock held.
 */
void fence_take_locked(struct d3dq_fence *f, uint64_t value,
		       struct d3dq_queue *q, uint64_t point, struct fire *fire)
{
	bool destroyed = atomic_load(&f->destroyed);
	uint64_t last;

	if (dev_removed(f->dev))
		return;
	fire->done_q = q;
	fire->done_point = point;
	if (!f->shared) {
		if (destroyed)
			return;
		atomic_store_explicit(&f->value, value, memory_order_release);
		fence_signalled_locked(f, value, false, fire);
		return;
	}
	last = shared_last(f);
	if (value > last &&
	    syncobj_timeline_signal(f->dev->fd, f->syncobj, value))
		return;
	if (destroyed || value <= atomic_load(&f->value))
		return;
	atomic_store_explicit(&f->value, value, memory_order_release);
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
	if (reached(f, e->value, atomic_load(&f->value))) {
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
 * Device removal (the device already refuses CPU signals): the fences
 * read UINT64_MAX from now on. Shared fences also take it on their
 * timelines, so that other processes waiting for a value this process
 * would have signalled see the removal too, all in one
 * SYNCOBJ_TIMELINE_SIGNAL: another process sees them reach it together,
 * as nearly as the kernel's loop over the handles allows (R15).
 */
void fences_remove(struct d3dq_fence **fs, size_t n)
{
	uint32_t *handles = calloc(n ? n : 1, sizeof(*handles));
	uint64_t *points = calloc(n ? n : 1, sizeof(*points));
	bool batch = handles && points;
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < n && batch; i++) {
		struct d3dq_fence *f = fs[i];

		if (!f->shared)
			continue;
		/* A CPU signal that began before the removal is over. */
		pthread_mutex_lock(&f->lock);
		if (shared_last(f) < UINT64_MAX) {
			handles[m] = f->syncobj;
			points[m++] = UINT64_MAX;
		}
		pthread_mutex_unlock(&f->lock);
	}
	if (m)
		syncobj_timeline_signal_many(fs[0]->dev->fd, handles, points, m);
	for (i = 0; i < n; i++) {
		struct d3dq_fence *f = fs[i];

		pthread_mutex_lock(&f->lock);
		if (!batch && f->shared && shared_last(f) < UINT64_MAX)
			syncobj_timeline_signal(f->dev->fd, f->syncobj,
						UINT64_MAX);
		atomic_store_explicit(&f->value, UINT64_MAX,
				      memory_order_release);
		pthread_mutex_unlock(&f->lock);
	}
	free(handles);
	free(points);
}

/*
 * Worker: the lowest value something of this process waits for on a
 * shared fence that another process (or the kernel) may bring.
 */
bool fence_watch(struct d3dq_fence *f, uint64_t *target)
{
	struct list *pos, *tmp;
	bool any = false;

	if (atomic_load(&f->destroyed))
		return false;
	pthread_mutex_lock(&f->lock);
	if (f->heap_len) {
		*target = f->heap[0]->target;
		any = true;
	}
	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (!any || t->value < *target)
			*target = t->value;
		any = true;
	}
	pthread_mutex_unlock(&f->lock);
	return any;
}

/*
 * Something of this process now waits on shared fence @f for a value
 * another process may bring: put it on the worker's list (the worker
 * takes it off once nothing waits any more) and wake the worker. Only
 * fences on that list cost the worker anything.
 */
void fence_watch_start(struct d3dq_fence *f)
{
	struct d3dq_device *dev = f->dev;

	pthread_mutex_lock(&dev->lock);
	if (!f->watch_linked && !atomic_load(&f->destroyed)) {
		list_add_tail(&f->watch_link, &dev->watched);
		f->watch_linked = true;
	}
	pthread_mutex_unlock(&dev->lock);
	dev_ring(dev);
}

/*
 * Something needs the worker to apply @f's queue signals from now on (an
 * event registration, a held queue wait, a thread on the condition
 * variable, a read of the value or a CPU signal while signals are
 * pending, a second queue signalling it). Until then the worker does not
 * wake for them: they are applied when something they caused is (R17),
 * when a thread waits for their point itself, when their queue has many
 * records, or when the fence is first looked at (fence_refresh()), so
 * that no observation ever sees a value older than what completed. Wakes
 * the worker if signals are pending already, so that it waits for them.
 */
void fence_observe(struct d3dq_fence *f)
{
	if (atomic_load_explicit(&f->observed, memory_order_relaxed) ||
	    atomic_exchange(&f->observed, true))
		return;
	if (atomic_load(&f->npending) && atomic_load(&f->dev->worker_started))
		dev_ring(f->dev);
}

/* Worker: a shared fence's timeline reached @value. */
void fence_watch_fired(struct d3dq_fence *f, uint64_t value,
		       struct fire *fire)
{
	pthread_mutex_lock(&f->lock);
	if (!atomic_load(&f->destroyed) && !dev_removed(f->dev) &&
	    value > atomic_load(&f->value)) {
		atomic_store_explicit(&f->value, value, memory_order_release);
		fence_signalled_locked(f, value, false, fire);
	}
	pthread_mutex_unlock(&f->lock);
}

static int fence_alloc(struct d3dq_device *dev, struct d3dq_fence **out)
{
	struct d3dq_fence *f;
	pthread_condattr_t attr;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->dev = dev;
	atomic_init(&f->refs, 1);
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &attr);
	pthread_condattr_destroy(&attr);
	list_init(&f->pending);
	list_init(&f->tickets);
	list_init(&f->kwaits);
	list_init(&f->dev_link);
	list_init(&f->watch_link);
	*out = f;
	return 0;
}

D3DQ_EXPORT int d3dq_fence_create(struct d3dq_device *dev,
				  uint64_t initial_value, uint32_t flags,
				  struct d3dq_fence **out)
{
	struct d3dq_fence *f;
	int ret;

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
	atomic_init(&f->value, initial_value);
	if (flags & D3DQ_FENCE_FLAG_SHARED) {
		f->shared = true;
		/* Other processes observe it. */
		atomic_store(&f->observed, true);
		ret = syncobj_create(dev->fd, &f->syncobj);
		if (!ret && initial_value)
			ret = syncobj_timeline_signal(dev->fd, f->syncobj,
						      initial_value);
		if (ret) {
			fence_unref(f);
			return ret;
		}
	}
	ret = dev_link_object(dev, &f->dev_link, &dev->fences);
	if (ret) {
		fence_unref(f);
		return ret;
	}
	*out = f;
	return 0;
}

D3DQ_EXPORT int d3dq_fence_export(struct d3dq_fence *f, int *fd)
{
	struct drm_syncobj_handle args = { 0 };
	int ret;

	if (!f || !fd)
		return -EINVAL;
	if (!f->shared)
		return -EINVAL;
	args.handle = f->syncobj;
	args.flags = 0;
	ret = d3dq_ioctl(f->dev->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args);
	if (!ret)
		*fd = args.fd;
	return ret;
}

D3DQ_EXPORT int d3dq_fence_import(struct d3dq_device *dev, int fd,
				  struct d3dq_fence **out)
{
	struct drm_syncobj_handle args = { 0 };
	struct d3dq_fence *f;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || fd < 0)
		return -EINVAL;
	/* The driver says -EINVAL for both; tell a closed fd apart. */
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	ret = dev_removal_error(dev);
	if (ret)
		return ret;
	ret = fence_alloc(dev, &f);
	if (ret)
		return ret;
	args.fd = fd;
	ret = d3dq_ioctl(dev->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &args);
	if (ret) {
		fence_unref(f);
		return ret;
	}
	f->shared = true;
	atomic_store(&f->observed, true);
	f->syncobj = args.handle;
	ret = dev_link_object(dev, &f->dev_link, &dev->fences);
	if (ret) {
		fence_unref(f);
		return ret;
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
	if (f->watch_linked) {
		list_del(&f->watch_link);
		f->watch_linked = false;
	}
	pthread_mutex_unlock(&dev->lock);

	pthread_mutex_lock(&f->lock);
	atomic_store(&f->destroyed, true);
	fence_signalled_locked(f, UINT64_MAX, true, &fire);
	pthread_mutex_unlock(&f->lock);
	fire_run(dev, &fire);
	run_flushes(dev);
	/* The worker may watch it: let it drop its reference. */
	if (f->shared && atomic_load(&dev->worker_started))
		dev_ring(dev);
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
	int ret = 0;

	if (!f)
		return -EINVAL;
	dev = f->dev;
	/* What completed before this signal takes effect first (R4). */
	fence_refresh(f);
	pthread_mutex_lock(&f->lock);
	/* Under the lock: removal sets UINT64_MAX under it too. */
	if (dev_removed(dev)) {
		ret = -ENODEV;
	} else if (f->shared) {
		ret = fence_shared_check_locked(f, value);
		if (!ret && value > shared_last(f))
			ret = syncobj_timeline_signal(dev->fd, f->syncobj,
						      value);
		if (!ret && value > atomic_load(&f->value))
			atomic_store_explicit(&f->value, value,
					      memory_order_release);
		if (!ret)
			fence_signalled_locked(f, value, false, &fire);
	} else {
		atomic_store_explicit(&f->value, value, memory_order_release);
		fence_signalled_locked(f, value, false, &fire);
	}
	pthread_mutex_unlock(&f->lock);
	fire_run(dev, &fire);
	run_flushes(dev);
	return ret;
}

/*
 * Sleep in the kernel until point @point of @handle is signalled, or the
 * fence's doorbell rings (any change of its value, destruction, removal).
 * f->lock held, dropped meanwhile. Returns the wait's result; *first is
 * 0 when the point was signalled.
 */
static int wait_kernel_locked(struct d3dq_fence *f, uint32_t handle,
			      uint64_t point, int64_t deadline,
			      uint32_t *first)
{
	uint32_t handles[2] = { handle, 0 };
	uint64_t points[2] = { point, 0 };
	int ret;

	if (!f->wake) {
		ret = syncobj_create(f->dev->fd, &f->wake);
		if (ret)
			return ret;
	}
	handles[1] = f->wake;
	points[1] = f->wake_point + 1;
	f->kernel_waiters++;
	pthread_mutex_unlock(&f->lock);
	*first = 1;
	ret = syncobj_timeline_wait(f->dev->fd, handles, points, 2, deadline,
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				    first);
	pthread_mutex_lock(&f->lock);
	f->kernel_waiters--;
	return ret;
}

static int cond_wait_locked(struct d3dq_fence *f, int64_t deadline)
{
	struct timespec ts;

	if (deadline == INT64_MAX)
		return pthread_cond_wait(&f->cond, &f->lock) ? -EINTR : 0;
	ts.tv_sec = deadline / 1000000000;
	ts.tv_nsec = deadline % 1000000000;
	return pthread_cond_timedwait(&f->cond, &f->lock, &ts) ? -ETIME : 0;
}

/*
 * Block until @f reaches @value. When a submitted queue signal will bring
 * it there, wait in the kernel for that signal's point and apply the
 * completions up to it on this thread (the same applier the worker uses,
 * so in causal order): the caller wakes once instead of after the worker.
 * A shared fence is waited for on its timeline (another process may
 * signal it). Otherwise sleep on the condition variable. The fence's
 * doorbell or condition variable wakes the caller at once on any change,
 * destruction or removal.
 */
static int wait_value(struct d3dq_fence *f, uint64_t value, int64_t deadline)
{
	uint32_t first;
	struct dep d;
	int ret = 0, w;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		uint64_t cur = f->shared ? fence_value(f) :
					   atomic_load(&f->value);

		if (reached(f, value, cur))
			break;
		if (now_ns() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (fence_choose_locked(f, NULL, value, &d) ==
		    CHOICE_POINT) {
			w = wait_kernel_locked(f, d.q->tl, d.point, deadline,
					       &first);
			if (!w && first == 0) {
				pthread_mutex_unlock(&f->lock);
				w = queue_check_lost_live(d.q);
				if (w)
					dev_remove(f->dev, w);
				else
					apply_upto(d.q, d.point);
				run_flushes(f->dev);
				pthread_mutex_lock(&f->lock);
				w = 0;
			}
			queue_unref(d.q);
		} else if (f->shared) {
			w = wait_kernel_locked(f, f->syncobj, value, deadline,
					       &first);
		} else {
			/* Nobody wakes us but whoever applies the value. */
			fence_observe(f);
			w = cond_wait_locked(f, deadline);
		}
		if (w == -ETIME || w == -ETIMEDOUT)
			continue;
		if (w && w != -EINTR) {
			/* No kernel wait possible now: sleep briefly. */
			int64_t soon = now_ns() + 10000000;

			cond_wait_locked(f, soon < deadline ? soon : deadline);
		}
	}
	pthread_mutex_unlock(&f->lock);
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
	if (fence_value(f) >= value)
		return 0;
	if (!timeout_ns)
		return -ETIMEDOUT;
	/* Another thread may destroy the fence while we sleep. */
	fence_ref(f);
	ret = wait_value(f, value, abs_timeout(timeout_ns));
	fence_unref(f);
	return ret;
}

/*
 * Register eventfd @eventfd (>= 0), or @token if it is not NULL, for
 * @value of @f.
 */
static int set_event(struct d3dq_fence *f, uint64_t value, int eventfd,
		     void *token)
{
	struct d3dq_device *dev = f->dev;
	struct evref *ev;
	struct ev_reg *r;
	bool now;
	int ret;

	fence_refresh(f);
	/* Reached already: fire during the call, no reference needed. */
	if (!token && reached(f, value, fence_value(f))) {
		ret = evref_check(eventfd);
		if (!ret)
			write_event(eventfd);
		return ret;
	}
	if (f->shared) {
		ret = worker_ensure(dev);
		if (ret)
			return ret;
	}
	ret = token ? evref_token(dev, token, &ev) :
		      evref_get(dev, eventfd, &ev);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r) {
		evref_put(dev, ev);
		return -ENOMEM;
	}
	r->target = value;
	r->ev = ev;
	r->heap_idx = NO_HEAP;

	pthread_mutex_lock(&f->lock);
	now = reached(f, value, atomic_load(&f->value));
	if (!now)
		ret = heap_push(f, r);
	pthread_mutex_unlock(&f->lock);
	if (!now && !ret)
		fence_observe(f);
	if (now)
		fire_event(ev);
	if (now || ret) {
		evref_put(dev, ev);
		free(r);
	} else if (f->shared) {
		/* Another process may bring the value: the worker watches. */
		fence_watch_start(f);
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
	return set_event(f, value, eventfd, NULL);
}

D3DQ_EXPORT int d3dq_fence_set_token_on_completion(struct d3dq_fence *f,
						   uint64_t value, void *token)
{
	if (!f || !f->dev->signal_event)
		return -EINVAL;
	if (!token)
		return d3dq_fence_wait(f, value, D3DQ_TIMEOUT_INFINITE);
	return set_event(f, value, -1, token);
}

/* As set_event(), once ALL or ANY of the values are reached. */
static int set_multi_event(struct d3dq_device *dev,
			   struct d3dq_fence *const *fences,
			   const uint64_t *values, uint32_t count,
			   uint32_t flags, int eventfd, void *token)
{
	struct multi_reg *m;
	bool shared = false;
	uint32_t i;
	int ret = 0;

	if (!dev || !count || !fences || !values ||
	    flags > D3DQ_MULTIPLE_FENCE_WAIT_ANY)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if (!fences[i] || fences[i]->dev != dev)
			return -EINVAL;
		shared |= fences[i]->shared;
	}
	if (count == 1 && token)
		return set_event(fences[0], values[0], -1, token);
	if (count == 1)
		return d3dq_fence_set_event_on_completion(fences[0], values[0],
							  eventfd);
	if (shared) {
		ret = worker_ensure(dev);
		if (ret)
			return ret;
	}

	m = calloc(1, sizeof(*m) + count * sizeof(m->regs[0]));
	if (!m)
		return -ENOMEM;
	if (token || eventfd >= 0) {
		ret = token ? evref_token(dev, token, &m->ev) :
			      evref_get(dev, eventfd, &m->ev);
		if (ret) {
			free(m);
			return ret;
		}
	}
	atomic_init(&m->refs, 1);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->count = count;
	m->remaining = count;
	m->any = flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY;
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
		uint64_t cur, now;
		bool fired;

		fence_refresh(f);
		cur = fence_value(f);
		pthread_mutex_lock(&f->lock);
		/*
		 * A change applied since @cur was read has popped what it
		 * reached already and would never pop this registration; the
		 * worker's watch of a shared timeline only applies values
		 * above f->value. So look at f->value again under the lock.
		 */
		now = atomic_load(&f->value);
		if (now > cur)
			cur = now;
		pthread_mutex_lock(&m->lock);
		fired = m->fired;
		pthread_mutex_unlock(&m->lock);
		if (fired) {
			/* ANY already fired (maybe on another thread). */
			pthread_mutex_unlock(&f->lock);
			break;
		}
		atomic_fetch_add(&m->refs, 1);
		if (reached(f, values[i], cur)) {
			multi_hit(m, &fire);
		} else {
			ret = heap_push(f, &m->regs[i]);
			if (ret)
				atomic_fetch_sub(&m->refs, 1);
		}
		pthread_mutex_unlock(&f->lock);
		fire_run(dev, &fire);
		if (!ret)
			fence_observe(f);
	}
	if (ret) {
		/* Out of memory: nothing of it may fire later. */
		multi_cancel(m);
	} else if (shared) {
		for (i = 0; i < count; i++)
			if (fences[i]->shared)
				fence_watch_start(fences[i]);
	}

	if (!ret && !m->ev) {
		pthread_mutex_lock(&m->lock);
		while (!m->fired)
			pthread_cond_wait(&m->cond, &m->lock);
		pthread_mutex_unlock(&m->lock);
	}
	multi_unref(dev, m);
	return ret;
}

D3DQ_EXPORT int d3dq_device_set_event_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		int eventfd)
{
	return set_multi_event(dev, fences, values, count, flags, eventfd,
			       NULL);
}

D3DQ_EXPORT int d3dq_device_set_token_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		void *token)
{
	if (!dev || !dev->signal_event)
		return -EINVAL;
	return set_multi_event(dev, fences, values, count, flags, -1, token);
}
