// SPDX-License-Identifier: MIT
/*
 * libd3dq: fences, CPU signals, events and blocking waits.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * A fence that is not shared lives in library memory: its value is one
 * atomic variable, so reading it needs no lock and no system call. Queue
 * signals reach it through the device's worker (worker.c), which applies
 * them in submission order. A shared fence is a timeline syncobj whose
 * points are the D3D12 values, so that other processes see it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static void multi_unref(struct multi_reg *m)
{
	if (atomic_fetch_sub(&m->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m);
}

static void write_event(int fd)
{
	uint64_t one = 1;

	/* Only fails if the counter would overflow: it is set anyway. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

/* One fence of a multi-fence registration reached its value. */
static void multi_hit(struct multi_reg *m)
{
	pthread_mutex_lock(&m->lock);
	if (!m->fired && (m->any || --m->remaining == 0)) {
		m->fired = true;
		if (m->eventfd >= 0)
			write_event(m->eventfd);
		else
			pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
}

void fence_ref(struct d3dq_fence *f)
{
	atomic_fetch_add(&f->refs, 1);
}

void fence_unref(struct d3dq_fence *f)
{
	size_t i;

	if (atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	for (i = 0; i < f->heap_len; i++) {
		if (f->heap[i]->multi)
			multi_unref(f->heap[i]->multi);
		free(f->heap[i]);
	}
	free(f->heap);
	if (f->shared)
		syncobj_destroy(f->dev->fd, f->syncobj);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f);
}

/* Min-heap of registrations keyed by target. */
static int heap_push(struct d3dq_fence *f, struct ev_reg *r)
{
	size_t i;

	if (f->heap_len == f->heap_cap) {
		size_t cap = f->heap_cap ? f->heap_cap * 2 : 16;
		struct ev_reg **h = realloc(f->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		f->heap = h;
		f->heap_cap = cap;
	}
	i = f->heap_len++;
	while (i && f->heap[(i - 1) / 2]->target > r->target) {
		f->heap[i] = f->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	f->heap[i] = r;
	return 0;
}

static struct ev_reg *heap_pop(struct d3dq_fence *f)
{
	struct ev_reg *top = f->heap[0], *last = f->heap[--f->heap_len];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < f->heap_len) {
		if (c + 1 < f->heap_len &&
		    f->heap[c + 1]->target < f->heap[c]->target)
			c++;
		if (f->heap[c]->target >= last->target)
			break;
		f->heap[i] = f->heap[c];
		i = c;
	}
	if (f->heap_len)
		f->heap[i] = last;
	return top;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * The fence's value is now @value (or, with @all, the fence is released):
 * satisfy queued waits and fire events whose target is reached. Events
 * that the kernel fires itself (SYNCOBJ_EVENTFD) are only dropped, unless
 * @all and their target is above @kernel_upto (the kernel never reached it).
 * One eventfd is written once per call even if several of its
 * registrations fire. Called with f->lock held.
 */
void fence_reach_locked(struct d3dq_fence *f, uint64_t value, bool all,
			uint64_t kernel_upto)
{
	struct ev_reg *fired = NULL, *r;
	struct list *pos, *tmp;
	size_t n = 0, i;
	int *fds;

	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (!all && t->value > value)
			continue;
		t->satisfied = true;
		t->in_list = false;
		list_del(&t->link);
		dev_queue_flush_later(f->dev, t->queue);
	}

	while (f->heap_len && (all || f->heap[0]->target <= value)) {
		r = heap_pop(f);
		if (r->multi) {
			multi_hit(r->multi);
			multi_unref(r->multi);
			free(r);
		} else if (r->kernel && (!all || r->target <= kernel_upto)) {
			free(r);
		} else {
			r->next = fired;
			fired = r;
			n++;
		}
	}
	pthread_cond_broadcast(&f->cond);
	/* Threads asleep in the kernel (wait_pending_locked()) look again. */
	if (f->kernel_waiters)
		worker_ring(f->dev);
	if (!n)
		return;

	fds = malloc(n * sizeof(*fds));
	for (i = 0, r = fired; r; i++) {
		struct ev_reg *next = r->next;

		if (fds)
			fds[i] = r->eventfd;
		else
			write_event(r->eventfd);
		free(r);
		r = next;
	}
	if (!fds)
		return;
	qsort(fds, n, sizeof(*fds), cmp_int);
	for (i = 0; i < n; i++)
		if (!i || fds[i] != fds[i - 1])
			write_event(fds[i]);
	free(fds);
}

int fence_shared_query(struct d3dq_fence *f, uint64_t *value)
{
	return syncobj_query(f->dev->fd, &f->syncobj, value, 1, 0);
}

/* Device removal or fence destruction: release every waiter. */
void fence_release_all(struct d3dq_fence *f)
{
	uint64_t cur = 0;

	pthread_mutex_lock(&f->lock);
	if (f->shared)
		fence_shared_query(f, &cur);
	else
		atomic_store(&f->value, UINT64_MAX);
	fence_reach_locked(f, UINT64_MAX, true, cur);
	pthread_mutex_unlock(&f->lock);
}

uint64_t fence_value(struct d3dq_fence *f)
{
	uint64_t v = 0;

	if (!f->shared)
		return atomic_load_explicit(&f->value, memory_order_acquire);
	if (dev_removed(f->dev) || f->destroyed)
		return UINT64_MAX;
	if (fence_shared_query(f, &v))
		return 0;
	return v;
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
	list_init(&f->dev_link);
	*out = f;
	return 0;
}

/*
 * Make the fence visible to device removal. Checked under the device lock,
 * which removal holds while it releases the fences: a fence either gets
 * released with the others or is refused here.
 */
static int fence_publish(struct d3dq_fence *f)
{
	int ret;

	pthread_mutex_lock(&f->dev->lock);
	ret = dev_removal_error(f->dev);
	if (!ret)
		list_add_tail(&f->dev_link, &f->dev->fences);
	pthread_mutex_unlock(&f->dev->lock);
	return ret;
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
		ret = syncobj_create(dev->fd, &f->syncobj);
		if (!ret && initial_value)
			ret = syncobj_timeline_signal(dev->fd, f->syncobj,
						      initial_value);
		if (ret) {
			fence_unref(f);
			return ret;
		}
		f->shared_reserved = initial_value;
	}
	ret = fence_publish(f);
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
	f->syncobj = args.handle;
	ret = fence_publish(f);
	if (ret) {
		fence_unref(f);
		return ret;
	}
	*out = f;
	return 0;
}

D3DQ_EXPORT void d3dq_fence_destroy(struct d3dq_fence *f)
{
	struct d3dq_device *dev;

	if (!f)
		return;
	dev = f->dev;
	pthread_mutex_lock(&dev->lock);
	list_del(&f->dev_link);
	pthread_mutex_unlock(&dev->lock);

	pthread_mutex_lock(&f->lock);
	f->destroyed = true;
	pthread_mutex_unlock(&f->lock);
	fence_release_all(f);
	dev_run_flushes(dev);
	fence_unref(f);
}

D3DQ_EXPORT uint64_t d3dq_fence_get_completed_value(struct d3dq_fence *f)
{
	if (!f)
		return 0;
	return fence_value(f);
}

/*
 * Highest value already given to the shared timeline, by anyone. The
 * timeline only moves forward: a lower value cannot be signalled.
 */
static int shared_last(struct d3dq_fence *f, uint64_t *last)
{
	uint64_t v = 0;
	int ret = syncobj_query(f->dev->fd, &f->syncobj, &v, 1,
				DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED);

	if (ret)
		return ret;
	*last = v > f->shared_reserved ? v : f->shared_reserved;
	return 0;
}

/* Called with f->lock held. */
int fence_shared_reserve(struct d3dq_fence *f, uint64_t value, bool *noop)
{
	uint64_t last;
	int ret = shared_last(f, &last);

	*noop = false;
	if (ret)
		return ret;
	if (value < last)
		return -EINVAL;
	if (value == last) {
		*noop = true;
		return 0;
	}
	f->shared_reserved = value;
	return 0;
}

D3DQ_EXPORT int d3dq_fence_signal(struct d3dq_fence *f, uint64_t value)
{
	struct d3dq_device *dev;
	bool noop;
	int ret = 0;

	if (!f)
		return -EINVAL;
	dev = f->dev;
	if (dev_removed(dev))
		return -ENODEV;

	pthread_mutex_lock(&f->lock);
	if (f->shared) {
		ret = fence_shared_reserve(f, value, &noop);
		if (!ret && !noop)
			ret = syncobj_timeline_signal(dev->fd, f->syncobj,
						      value);
		if (!ret)
			fence_reach_locked(f, value, false, value);
	} else {
		atomic_store_explicit(&f->value, value, memory_order_release);
		fence_reach_locked(f, value, false, value);
	}
	pthread_mutex_unlock(&f->lock);
	dev_run_flushes(dev);
	return ret;
}

static int wait_shared(struct d3dq_fence *f, uint64_t value,
		       uint64_t timeout_ns)
{
	int64_t deadline = abs_timeout(timeout_ns);
	int ret;

	for (;;) {
		int64_t slice = now_ns() + 50000000;
		uint64_t point = value;

		if (dev_removed(f->dev) || f->destroyed)
			return 0;
		if (slice > deadline)
			slice = deadline;
		ret = syncobj_timeline_wait(f->dev->fd, &f->syncobj, &point, 1,
					    slice,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					    NULL);
		if (ret != -ETIME && ret != -EINTR)
			return ret;
		if (ret == -ETIME && slice >= deadline)
			return -ETIMEDOUT;
	}
}

/*
 * When a submitted queue signal brings @f to @value, wait in the kernel for
 * that signal's point and apply it on this thread, as the worker would:
 * the caller then wakes once, instead of after the worker woke and then
 * woke it. The doorbell is waited for too, and fence_reach_locked() rings
 * it while kernel_waiters is not zero, so a CPU signal, destruction or
 * removal still releases the caller at once. Called with f->lock held,
 * which is dropped meanwhile. Returns 0 to look at the value again, 1 when
 * no submitted signal reaches @value (or the kernel wait failed): sleep on
 * the condition variable then; -ETIME at the deadline.
 */
static int wait_pending_locked(struct d3dq_fence *f, uint64_t value,
			       int64_t deadline)
{
	struct d3dq_device *dev = f->dev;
	struct drm_d3dq_queue_get_state st = { 0 };
	struct pending_update *best = NULL;
	struct list *pos, *tmp;
	struct d3dq_queue *q;
	uint32_t handles[2], first = 1;
	uint64_t points[2];
	int ret;

	list_for_each_safe(pos, tmp, &f->pending) {
		struct pending_update *pu =
			container_of(pos, struct pending_update, fence_link);

		if (pu->value >= value && (!best || pu->order < best->order))
			best = pu;
	}
	if (!best)
		return 1;
	q = best->queue;
	queue_ref(q);
	handles[0] = q->tl;
	points[0] = best->point;
	handles[1] = dev->doorbell;
	points[1] = atomic_load(&dev->doorbell_point) + 1;
	f->kernel_waiters++;
	pthread_mutex_unlock(&f->lock);

	ret = syncobj_timeline_wait(dev->fd, handles, points, 2, deadline,
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				    &first);
	if (!ret && first == 0) {
		/* As the worker: a lost queue removes the device first (R15). */
		st.id = q->id;
		if (!d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st) &&
		    st.state == DRM_D3DQ_QUEUE_STATE_LOST) {
			dev_remove(dev, st.reason ? st.reason : -ECANCELED);
		} else {
			pthread_mutex_lock(&dev->lock);
			queue_apply_completed(q, points[0]);
			pthread_mutex_unlock(&dev->lock);
		}
		dev_run_flushes(dev);
	}
	queue_unref(q);
	pthread_mutex_lock(&f->lock);
	f->kernel_waiters--;
	if (ret == -ETIME)
		return -ETIME;
	return ret ? 1 : 0;
}

D3DQ_EXPORT int d3dq_fence_wait(struct d3dq_fence *f, uint64_t value,
				uint64_t timeout_ns)
{
	struct timespec ts;
	int64_t deadline;
	int ret = 0;

	if (!f)
		return -EINVAL;
	if (fence_value(f) >= value)
		return 0;
	if (!timeout_ns)
		return -ETIMEDOUT;
	/* Another thread may destroy the fence while we sleep. */
	fence_ref(f);
	if (f->shared) {
		ret = wait_shared(f, value, timeout_ns);
		fence_unref(f);
		return ret;
	}

	deadline = abs_timeout(timeout_ns);
	ts.tv_sec = deadline / 1000000000;
	ts.tv_nsec = deadline % 1000000000;
	pthread_mutex_lock(&f->lock);
	while (fence_value(f) < value && !f->destroyed) {
		int w = wait_pending_locked(f, value, deadline);

		if (!w)
			continue;
		if (w == -ETIME) {
			if (fence_value(f) < value && !f->destroyed)
				ret = -ETIMEDOUT;
			break;
		}
		if (deadline == INT64_MAX) {
			pthread_cond_wait(&f->cond, &f->lock);
		} else if (pthread_cond_timedwait(&f->cond, &f->lock, &ts)) {
			if (fence_value(f) < value && !f->destroyed)
				ret = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	fence_unref(f);
	return ret;
}

/* Register @r on @f unless the value is reached; f->lock held. */
static int register_locked(struct d3dq_fence *f, struct ev_reg *r, bool *now)
{
	int ret;

	*now = fence_value(f) >= r->target || f->destroyed;
	if (*now)
		return 0;
	ret = heap_push(f, r);
	if (ret)
		return ret;
	if (f->shared)
		worker_ring(f->dev);
	return 0;
}

D3DQ_EXPORT int d3dq_fence_set_event_on_completion(struct d3dq_fence *f,
						   uint64_t value, int eventfd)
{
	struct drm_syncobj_eventfd kargs = { 0 };
	struct ev_reg *r;
	bool now, kernel;
	int ret;

	if (!f)
		return -EINVAL;
	if (eventfd < 0)
		return d3dq_fence_wait(f, value, D3DQ_TIMEOUT_INFINITE);

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->target = value;
	r->eventfd = eventfd;
	if (f->shared) {
		ret = worker_ensure(f->dev);
		if (ret) {
			free(r);
			return ret;
		}
	}

	pthread_mutex_lock(&f->lock);
	if (f->shared && f->dev->has_syncobj_eventfd &&
	    fence_value(f) < value) {
		kargs.handle = f->syncobj;
		kargs.point = value;
		kargs.fd = eventfd;
		r->kernel = !d3dq_ioctl(f->dev->fd, DRM_IOCTL_SYNCOBJ_EVENTFD,
					&kargs);
	}
	ret = register_locked(f, r, &now);
	pthread_mutex_unlock(&f->lock);
	kernel = r->kernel;
	if (ret || now)
		free(r);
	if (now && !kernel)
		write_event(eventfd);
	return ret;
}

D3DQ_EXPORT int d3dq_device_set_event_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		int eventfd)
{
	struct multi_reg *m;
	uint32_t i;
	int ret = 0;

	if (!dev || !count || !fences || !values ||
	    flags > D3DQ_MULTIPLE_FENCE_WAIT_ANY)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (!fences[i] || fences[i]->dev != dev)
			return -EINVAL;
	if (count == 1)
		return d3dq_fence_set_event_on_completion(fences[0], values[0],
							  eventfd);

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	atomic_init(&m->refs, 1);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->remaining = count;
	m->any = flags == D3DQ_MULTIPLE_FENCE_WAIT_ANY;
	m->eventfd = eventfd < 0 ? -1 : eventfd;

	for (i = 0; i < count && !ret; i++) {
		struct d3dq_fence *f = fences[i];
		struct ev_reg *r;
		bool now;

		if (f->shared) {
			ret = worker_ensure(dev);
			if (ret)
				break;
		}
		r = calloc(1, sizeof(*r));
		if (!r) {
			ret = -ENOMEM;
			break;
		}
		r->target = values[i];
		r->eventfd = -1;
		r->multi = m;
		atomic_fetch_add(&m->refs, 1);
		pthread_mutex_lock(&f->lock);
		ret = register_locked(f, r, &now);
		pthread_mutex_unlock(&f->lock);
		if (ret || now) {
			multi_unref(m);
			free(r);
		}
		if (now)
			multi_hit(m);
	}

	if (!ret && eventfd < 0) {
		pthread_mutex_lock(&m->lock);
		while (!m->fired)
			pthread_cond_wait(&m->cond, &m->lock);
		pthread_mutex_unlock(&m->lock);
	}
	multi_unref(m);
	return ret;
}

/* Lower *@target to the lowest value of a queued wait; true if any. */
static bool tickets_min_locked(struct d3dq_fence *f, uint64_t *target,
			       bool any)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (!any || t->value < *target)
			*target = t->value;
		any = true;
	}
	return any;
}

/* Worker: lowest value someone waits for on a shared fence. */
bool fence_watch_collect(struct d3dq_fence *f, uint64_t *target)
{
	bool any = false;

	pthread_mutex_lock(&f->lock);
	if (f->heap_len) {
		*target = f->heap[0]->target;
		any = true;
	}
	any = tickets_min_locked(f, target, any);
	pthread_mutex_unlock(&f->lock);
	return any;
}

/* Worker: a shared fence's timeline reached @value. */
void fence_watch_fired(struct d3dq_fence *f, uint64_t value)
{
	pthread_mutex_lock(&f->lock);
	fence_reach_locked(f, value, false, value);
	pthread_mutex_unlock(&f->lock);
}

/* Availability thread: lowest value a queued wait of this process needs. */
bool fence_tickets_min(struct d3dq_fence *f, uint64_t *target)
{
	bool any;

	pthread_mutex_lock(&f->lock);
	any = tickets_min_locked(f, target, false);
	pthread_mutex_unlock(&f->lock);
	return any;
}

/*
 * Availability thread: some point of a shared fence was submitted. Queued
 * waits whose value now has a fence become kernel waits on that point.
 */
void fence_resolve_available(struct d3dq_fence *f)
{
	struct list *pos, *tmp;
	uint64_t last = 0;

	pthread_mutex_lock(&f->lock);
	if (list_empty(&f->tickets) ||
	    syncobj_query(f->dev->fd, &f->syncobj, &last, 1,
			  DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)) {
		pthread_mutex_unlock(&f->lock);
		return;
	}
	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (t->value > last)
			continue;
		t->resolved = true;
		t->in_list = false;
		list_del(&t->link);
		t->wait_handle = f->syncobj;
		t->wait_point = t->value;
		dev_queue_flush_later(f->dev, t->queue);
	}
	pthread_mutex_unlock(&f->lock);
}
