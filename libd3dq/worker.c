// SPDX-License-Identifier: MIT
/*
 * libd3dq: the device's fence worker.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * One thread per device, started with the first queue, watches GPU
 * completions: for every queue with work in flight it waits on the
 * queue's lowest point that carries a fence update (or on its last point,
 * to notice lost queues), on shared fences that local waiters watch, and
 * on a doorbell timeline that other threads bump when the set changes.
 * When something completes it applies fence updates in submission order,
 * fires events, releases held queues and checks for lost queues.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static void apply_update(struct pending_update *pu)
{
	struct d3dq_fence *f = pu->fence;

	pthread_mutex_lock(&f->lock);
	list_del(&pu->fence_link);
	/* A later-submitted signal that completed first wins (R4). */
	if (!f->destroyed && !dev_removed(f->dev) &&
	    pu->order > f->applied_order) {
		f->applied_order = pu->order;
		atomic_store_explicit(&f->value, pu->value,
				      memory_order_release);
		fence_reach_locked(f, pu->value, false, pu->value);
	}
	pthread_mutex_unlock(&f->lock);
	fence_unref(f);
	queue_unref(pu->queue);
	free(pu);
}

/* Apply every update of @q up to point @completed; dev->lock held. */
void queue_apply_completed(struct d3dq_queue *q, uint64_t completed)
{
	struct list done, *pos, *tmp;

	list_init(&done);
	pthread_mutex_lock(&q->pend_lock);
	list_for_each_safe(pos, tmp, &q->pending) {
		struct pending_update *pu =
			container_of(pos, struct pending_update, queue_link);

		if (pu->point > completed)
			break;
		list_del(&pu->queue_link);
		list_add_tail(&pu->queue_link, &done);
	}
	if (completed > q->completed)
		q->completed = completed;
	pthread_mutex_unlock(&q->pend_lock);

	list_for_each_safe(pos, tmp, &done)
		apply_update(container_of(pos, struct pending_update,
					  queue_link));
}

struct watch_set {
	uint32_t *handles;
	uint64_t *points;
	void **objs;
	uint32_t n, cap;
};

static int watch_add(struct watch_set *w, uint32_t handle, uint64_t point,
		     void *obj)
{
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 64;
		uint32_t *h = realloc(w->handles, cap * sizeof(*h));
		uint64_t *p;
		void **o;

		if (!h)
			return -ENOMEM;
		w->handles = h;
		p = realloc(w->points, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->points = p;
		o = realloc(w->objs, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		w->objs = o;
		w->cap = cap;
	}
	w->handles[w->n] = handle;
	w->points[w->n] = point;
	w->objs[w->n] = obj;
	w->n++;
	return 0;
}

/*
 * Sleep in the kernel until a point of @w is reached (with @flags), a
 * signal, or an error. An object may vanish while we wait (its handle is
 * then refused) and the caller rebuilds the set: back off briefly on
 * errors rather than spin.
 *
 * -ENODEV means the device was unplugged (its platform device unbound):
 * every ioctl fails that way from then on, so nothing will ever signal.
 * That removes the device as d3dq_device_remove() does; afterwards the
 * thread only waits to be stopped. A wait already sleeping in the kernel
 * when the device is unplugged is not woken if it only waits for points
 * nobody will submit (an idle queue's next job, the doorbell), so waits
 * last at most WATCH_SLICE_NS: an idle device's threads wake that often,
 * and notice an unplug within that time.
 */
#define WATCH_SLICE_NS	(2 * 1000000000ll)

static void watch_wait(struct d3dq_device *dev, struct watch_set *w,
		       uint32_t flags)
{
	int ret = syncobj_timeline_wait(dev->fd, w->handles, w->points, w->n,
					now_ns() + WATCH_SLICE_NS, flags,
					NULL);

	if (ret == -ENODEV) {
		dev_remove(dev, -ENODEV);
		dev_run_flushes(dev);
		usleep(20 * 1000);
	} else if (ret && ret != -ETIME && ret != -EINTR) {
		usleep(1000);
	}
}

static void watch_free(struct watch_set *w)
{
	free(w->handles);
	free(w->points);
	free(w->objs);
}

/* Build the wait set; dev->lock held. Entries: doorbell, queues, fences. */
static uint32_t collect(struct d3dq_device *dev, struct watch_set *w)
{
	struct list *pos, *tmp;
	uint32_t nqueues = 0;

	w->n = 0;
	watch_add(w, dev->doorbell, atomic_load(&dev->doorbell_point) + 1,
		  NULL);
	list_for_each_safe(pos, tmp, &dev->queues) {
		struct d3dq_queue *q =
			container_of(pos, struct d3dq_queue, dev_link);
		uint64_t point = 0;

		pthread_mutex_lock(&q->pend_lock);
		if (!list_empty(&q->pending))
			point = container_of(q->pending.next,
					     struct pending_update,
					     queue_link)->point;
		else if (q->submitted > q->completed)
			point = q->submitted;
		else
			/*
			 * An idle queue: wait for its next job, submitted or
			 * not (WAIT_FOR_SUBMIT), so that submitting needs no
			 * doorbell.
			 */
			point = q->completed + 1;
		q->in_wait_set = !watch_add(w, q->tl, point, q);
		q->watch_point = point;
		pthread_mutex_unlock(&q->pend_lock);
		nqueues += q->in_wait_set;
	}
	list_for_each_safe(pos, tmp, &dev->fences) {
		struct d3dq_fence *f =
			container_of(pos, struct d3dq_fence, dev_link);
		uint64_t target;

		if (f->shared && fence_watch_collect(f, &target))
			watch_add(w, f->syncobj, target, f);
	}
	return nqueues;
}

/* Something in the set completed; dev->lock held. Returns a lost reason. */
static int process(struct d3dq_device *dev, struct watch_set *w,
		   uint32_t nqueues)
{
	uint64_t *values = calloc(w->n ? w->n : 1, sizeof(*values));
	int lost = 0;
	uint32_t i;

	if (!values)
		return 0;
	/*
	 * One query for everything; if a syncobj went away meanwhile (its
	 * owner dropped the last reference), query one by one.
	 */
	if (w->n > 1 && syncobj_query(dev->fd, &w->handles[1], &values[1],
				      w->n - 1, 0)) {
		for (i = 1; i < w->n; i++)
			if (syncobj_query(dev->fd, &w->handles[i], &values[i],
					  1, 0))
				values[i] = 0;
	}
	/*
	 * A lost queue's jobs completed with an error: nothing they signal
	 * counts. Remove the device (the caller does it) before applying.
	 */
	for (i = 1; i <= nqueues && !lost && !dev_removed(dev); i++) {
		struct d3dq_queue *q = w->objs[i];
		struct drm_d3dq_queue_get_state st = { .id = q->id };
		bool advanced;

		pthread_mutex_lock(&q->pend_lock);
		advanced = values[i] > q->completed;
		pthread_mutex_unlock(&q->pend_lock);
		if (advanced &&
		    !d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st) &&
		    st.state == DRM_D3DQ_QUEUE_STATE_LOST)
			lost = st.reason ? st.reason : -ECANCELED;
	}
	if (lost) {
		free(values);
		return lost;
	}
	for (i = 1; i <= nqueues; i++)
		queue_apply_completed(w->objs[i], values[i]);
	for (; i < w->n; i++)
		fence_watch_fired(w->objs[i], values[i]);
	free(values);
	return lost;
}

static void *worker_main(void *arg)
{
	struct d3dq_device *dev = arg;
	struct watch_set w = { 0 };
	uint32_t nqueues;
	int lost;

	pthread_mutex_lock(&dev->lock);
	while (!dev->worker_quit) {
		nqueues = collect(dev, &w);
		pthread_mutex_unlock(&dev->lock);

		watch_wait(dev, &w, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);

		pthread_mutex_lock(&dev->lock);
		if (dev->worker_quit)
			break;
		/* The set may have changed: rebuild it before processing. */
		nqueues = collect(dev, &w);
		lost = process(dev, &w, nqueues);
		pthread_mutex_unlock(&dev->lock);
		if (lost)
			dev_remove(dev, lost);
		dev_run_flushes(dev);
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	watch_free(&w);
	return NULL;
}

/*
 * The availability thread. The fence worker waits for points to be
 * signalled; a queue wait on a shared fence only needs its value to be
 * submitted (by any process) before it can go to the kernel, and one
 * DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT cannot wait for both kinds at once. So a
 * second, single thread per device waits with WAIT_AVAILABLE for the
 * lowest value each shared fence's queued waits need, plus its own
 * doorbell, and hands the waits it can resolve to the flush list.
 */
static void *avail_main(void *arg)
{
	struct d3dq_device *dev = arg;
	struct watch_set w = { 0 };
	struct list *pos, *tmp;

	pthread_mutex_lock(&dev->lock);
	while (!dev->worker_quit) {
		w.n = 0;
		watch_add(&w, dev->avail_doorbell,
			  atomic_load(&dev->avail_doorbell_point) + 1, NULL);
		list_for_each_safe(pos, tmp, &dev->fences) {
			struct d3dq_fence *f =
				container_of(pos, struct d3dq_fence, dev_link);
			uint64_t target;

			if (f->shared && fence_tickets_min(f, &target))
				watch_add(&w, f->syncobj, target, f);
		}
		pthread_mutex_unlock(&dev->lock);

		watch_wait(dev, &w, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE);

		pthread_mutex_lock(&dev->lock);
		if (dev->worker_quit)
			break;
		list_for_each_safe(pos, tmp, &dev->fences) {
			struct d3dq_fence *f =
				container_of(pos, struct d3dq_fence, dev_link);

			if (f->shared)
				fence_resolve_available(f);
		}
		pthread_mutex_unlock(&dev->lock);
		dev_run_flushes(dev);
		pthread_mutex_lock(&dev->lock);
	}
	pthread_mutex_unlock(&dev->lock);
	watch_free(&w);
	return NULL;
}

static void avail_ring(struct d3dq_device *dev)
{
	pthread_mutex_lock(&dev->doorbell_lock);
	syncobj_timeline_signal(dev->fd, dev->avail_doorbell,
			atomic_fetch_add(&dev->avail_doorbell_point, 1) + 1);
	pthread_mutex_unlock(&dev->doorbell_lock);
}

/*
 * A queue wait on a shared fence is held: make sure the availability
 * thread runs and looks at it. Called with no lock or a queue lock held.
 */
int avail_watch(struct d3dq_device *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!dev->avail_started && !dev->worker_quit) {
		ret = syncobj_create(dev->fd, &dev->avail_doorbell);
		if (!ret) {
			ret = -pthread_create(&dev->avail, NULL, avail_main,
					      dev);
			if (ret) {
				syncobj_destroy(dev->fd, dev->avail_doorbell);
				dev->avail_doorbell = 0;
			}
		}
		dev->avail_started = !ret;
	}
	pthread_mutex_unlock(&dev->lock);
	if (!ret)
		avail_ring(dev);
	return ret;
}

int worker_ensure(struct d3dq_device *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!dev->worker_started) {
		ret = -pthread_create(&dev->worker, NULL, worker_main, dev);
		dev->worker_started = !ret;
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void worker_ring(struct d3dq_device *dev)
{
	pthread_mutex_lock(&dev->doorbell_lock);
	syncobj_timeline_signal(dev->fd, dev->doorbell,
				atomic_fetch_add(&dev->doorbell_point, 1) + 1);
	pthread_mutex_unlock(&dev->doorbell_lock);
}

void worker_stop(struct d3dq_device *dev)
{
	bool started;

	pthread_mutex_lock(&dev->lock);
	dev->worker_quit = true;
	started = dev->worker_started;
	pthread_mutex_unlock(&dev->lock);
	if (dev->avail_started) {
		avail_ring(dev);
		pthread_join(dev->avail, NULL);
		syncobj_destroy(dev->fd, dev->avail_doorbell);
		dev->avail_started = false;
	}
	if (!started)
		return;
	worker_ring(dev);
	pthread_join(dev->worker, NULL);
}
