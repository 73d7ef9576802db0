// SPDX-License-Identifier: MIT
/*
 * libd3dq: completions. The records of what submitted work does when it
 * completes, the one place that applies them, device removal, and the
 * device's worker thread.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Every job the library submits signals the next point of its queue's
 * timeline. Each queue keeps, in submission order, records of
 *
 *   - signals: "fence F takes value v when point p completes", and
 *   - edges: "from point p on, this queue waited in the kernel for point
 *     p' of queue Q'" (a queue wait handed to the kernel, or an ordering
 *     dependency added for R18).
 *
 * apply_locked() applies a queue's records up to a completed point.
 * Before it passes an edge it applies the other queue up to the point the
 * edge names: that point completed before the waiting job could run, and
 * whatever it produced was a cause of what comes after the edge (R17).
 * Edges only point to work submitted earlier, so this terminates. It runs
 * under the device's apply_lock, on the worker, on a thread that looks
 * at a fence nothing observed (fence_refresh()), when a queue is
 * destroyed and when a record is added for a point already known to be
 * complete: every completion is applied here, in an order where causes
 * come first. The kernel fence writes (which fire the kernel's eventfds)
 * and early releases it causes happen under the same lock, in the same
 * order.
 *
 * An edge that was released early (the wait it stands for was satisfied
 * by something else, R6) is no dependency any more and is passed over.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static void free_garbage(struct list *garbage)
{
	struct list *pos, *tmp;

	list_for_each_safe(pos, tmp, garbage) {
		struct rec *r = container_of(pos, struct rec, qlink);

		list_del(pos);
		if (r->kind == REC_SIGNAL) {
			struct sig_rec *s = container_of(r, struct sig_rec, r);

			fence_unref(s->fence);
			free(s);
		} else {
			struct edge *e = container_of(r, struct edge, r);

			if (e->fence)
				fence_unref(e->fence);
			queue_unref(e->dep);
			free(e);
		}
	}
}

struct frame {
	struct d3dq_queue *q;
	uint64_t upto;
};

/*
 * Apply the records of @q up to point @upto, which has completed (and
 * the queue is not lost), causes first. apply_lock held; what was applied
 * goes to @fire, freed records to @garbage (freed without the lock).
 */
static void apply_locked(struct d3dq_queue *q, uint64_t upto,
			 struct fire *fire, struct list *garbage)
{
	struct frame first = { q, upto }, *stack = &first, *grown;
	size_t n = 1, cap = 1;

	while (n) {
		struct frame *top = &stack[n - 1];
		struct d3dq_queue *cur = top->q;
		struct rec *r;

		if (list_empty(&cur->recs) ||
		    (r = container_of(cur->recs.next, struct rec,
				      qlink))->point > top->upto) {
			if (cur->completed < top->upto)
				cur->completed = top->upto;
			n--;
			continue;
		}
		if (r->kind == REC_EDGE) {
			struct edge *e = container_of(r, struct edge, r);

			if (!atomic_load_explicit(&e->released,
						  memory_order_acquire) &&
			    e->dep->completed < e->dep_point) {
				if (n == cap) {
					grown = malloc(2 * cap * sizeof(*grown));
					if (!grown) {
						/* Cannot go deeper: order lost. */
						atomic_store(&e->released, true);
						continue;
					}
					for (size_t i = 0; i < n; i++)
						grown[i] = stack[i];
					if (stack != &first)
						free(stack);
					stack = grown;
					cap *= 2;
				}
				stack[n].q = e->dep;
				stack[n].upto = e->dep_point;
				n++;
				continue;
			}
			list_del(&r->qlink);
			cur->nrecs--;
			if (e->fence)
				fence_kwait_unlink(e);
		} else {
			struct sig_rec *s = container_of(r, struct sig_rec, r);

			list_del(&r->qlink);
			cur->nrecs--;
			pthread_mutex_lock(&s->fence->lock);
			fence_apply_locked(s, fire);
			pthread_mutex_unlock(&s->fence->lock);
		}
		list_add_tail(&r->qlink, garbage);
	}
	if (stack != &first)
		free(stack);
}

/* Apply @q's completions up to @upto (completed, queue not lost). */
void apply_upto(struct d3dq_queue *q, uint64_t upto)
{
	struct d3dq_device *dev = q->dev;
	struct fire fire = FIRE_INIT;
	struct list garbage;

	list_init(&garbage);
	pthread_mutex_lock(&dev->apply_lock);
	apply_locked(q, upto, &fire, &garbage);
	fire_run(dev, &fire);
	pthread_mutex_unlock(&dev->apply_lock);
	free_garbage(&garbage);
}

/*
 * What the worker waits for on @q: the point of its first record whose
 * value something observes (or of its first record at all once it has
 * DRAIN_RECS of them); 0: nothing. apply_lock held.
 */
#define DRAIN_RECS 64

static bool rec_watched(struct rec *r)
{
	struct sig_rec *s;

	if (r->kind != REC_SIGNAL)
		return false;
	s = container_of(r, struct sig_rec, r);
	return atomic_load_explicit(&s->fence->observed,
				    memory_order_relaxed) &&
	       !atomic_load(&s->fence->destroyed);
}

static uint64_t watch_point_locked(struct d3dq_queue *q)
{
	struct list *pos, *tmp;

	if (list_empty(&q->recs))
		return 0;
	if (q->nrecs >= DRAIN_RECS)
		return container_of(q->recs.next, struct rec, qlink)->point;
	list_for_each_safe(pos, tmp, &q->recs) {
		struct rec *r = container_of(pos, struct rec, qlink);

		if (rec_watched(r))
			return r->point;
	}
	return 0;
}

/*
 * What watch_point_locked() would return after @rec was added to @q,
 * where it differs from what the worker already waits for (the worker
 * asleep, apply_lock held): only @rec itself, or the first record once
 * @q has DRAIN_RECS of them, can be new. An earlier record was looked at
 * when it was added or when the worker collected, and one whose fence
 * became observed since woke the worker then (fence_observe() rings
 * while the fence has signals pending). This keeps a queue signal O(1)
 * however many records its queue has.
 */
static uint64_t watch_point_added_locked(struct d3dq_queue *q,
					 struct rec *rec)
{
	if (q->nrecs >= DRAIN_RECS)
		return container_of(q->recs.next, struct rec, qlink)->point;
	return rec_watched(rec) ? rec->point : 0;
}

/*
 * Add @rec to @q's records. A record for a point the applier has already
 * passed, or one the kernel reported complete at its submit (q->done), is
 * applied at once (nobody will wait for that point again), with the
 * records before it. One the worker must wait for (its value is observed,
 * or the queue has DRAIN_RECS records) before what the worker waits for
 * on @q now wakes the worker, to wait for it. q->lock held (only its
 * holder adds records to @q), and apply_lock.
 */
static bool record_add_locked(struct d3dq_queue *q, struct rec *rec,
			      struct list *garbage)
{
	uint64_t upto = q->done > q->completed ? q->done : q->completed;
	struct d3dq_device *dev = q->dev;
	struct fire fire = FIRE_INIT;
	bool ring = false;
	uint64_t want;

	list_add_tail(&rec->qlink, &q->recs);
	q->nrecs++;
	if (!q->active_linked) {
		queue_ref(q);
		list_add_tail(&q->active_link, &dev->active);
		q->active_linked = true;
	}
	if (rec->point <= upto) {
		apply_locked(q, upto, &fire, garbage);
		fire_run(dev, &fire);
	} else if (!dev->worker_awake) {
		want = watch_point_added_locked(q, rec);
		ring = want && (!q->watched || want < q->watch_point);
		/* It collects before it sleeps again: ring once. */
		if (ring)
			dev->worker_awake = true;
	}
	return ring;
}

static void record_add(struct d3dq_queue *q, struct rec *rec)
{
	struct d3dq_device *dev = q->dev;
	struct list garbage;
	bool ring;

	list_init(&garbage);
	pthread_mutex_lock(&dev->apply_lock);
	ring = record_add_locked(q, rec, &garbage);
	pthread_mutex_unlock(&dev->apply_lock);
	free_garbage(&garbage);
	if (ring)
		dev_ring(dev);
}

/*
 * Apply what has completed of the queue signals of @f pending on queues
 * other than @except, causes first; true if any is pending there. Each
 * such queue is asked how far it got (one SYNCOBJ_QUERY) and whether it
 * is lost (then the device is removed instead: its jobs' signals do not
 * count). With @except set the caller holds that queue's lock: no other
 * queue lock is taken. No other library lock held.
 */
#define REFRESH_QUEUES 8

static bool catch_up(struct d3dq_fence *f, struct d3dq_queue *except)
{
	struct d3dq_queue *qs[REFRESH_QUEUES];
	struct list *pos, *tmp;
	size_t n = 0, i;
	bool any = false;

	pthread_mutex_lock(&f->lock);
	list_for_each_safe(pos, tmp, &f->pending) {
		struct sig_rec *s = container_of(pos, struct sig_rec, flink);

		if (s->queue == except)
			continue;
		any = true;
		for (i = 0; i < n && qs[i] != s->queue; i++)
			;
		/* More queues than that: the worker, observing, gets them. */
		if (i < n || n == REFRESH_QUEUES)
			continue;
		queue_ref(s->queue);
		qs[n++] = s->queue;
	}
	pthread_mutex_unlock(&f->lock);

	for (i = 0; i < n; i++) {
		struct d3dq_queue *q = qs[i];
		uint64_t done = 0;
		int lost;

		if (!syncobj_query(f->dev->fd, &q->tl, &done, 1, 0) && done) {
			lost = except ? queue_check_lost(q) :
					queue_check_lost_live(q);
			if (lost)
				dev_remove(f->dev, lost);
			else
				apply_upto(q, done);
		}
		queue_unref(q);
	}
	return any;
}

/*
 * @f is looked at (read, signalled by the CPU, registered on) while queue
 * signals of it are pending and nothing observed it, so nothing applied
 * them as they completed: from now on the worker does (fence_observe()),
 * and what completed before is applied now, so that this look sees every
 * value that took effect before it (R17: no observation has to come
 * first) and a CPU signal takes effect after them (R4). Costs two system
 * calls per queue, once per fence; nothing when the fence is observed or
 * has no signal pending. No library lock held.
 */
void fence_refresh(struct d3dq_fence *f)
{
	if (!atomic_load_explicit(&f->npending, memory_order_relaxed) ||
	    atomic_load_explicit(&f->observed, memory_order_relaxed))
		return;
	fence_observe(f);
	catch_up(f, NULL);
}

/*
 * A signal recorded at a complete point of @q with no record of @q before
 * it: applied on the spot, as record_add_locked() would apply its record
 * right after adding it, without the record. q->lock and apply_lock held.
 */
static void signal_complete_locked(struct d3dq_queue *q, struct d3dq_fence *f,
				   uint64_t value, uint64_t point)
{
	struct fire fire = FIRE_INIT;

	pthread_mutex_lock(&f->lock);
	fence_take_locked(f, value, q, point, &fire);
	pthread_mutex_unlock(&f->lock);
	fire_run(q->dev, &fire);
}

/*
 * Record queue signal (@f, @value) at point @point of @q. Held queue
 * waits on @f that it may satisfy are flushed again, so that they can
 * rely on it.
 *
 * Linked to the fence before the queue (the applier frees it only from
 * the queue's records), both under apply_lock: a wait that finds it on
 * the fence and relies on it without a kernel point (point 0, see
 * fence_choose_locked()) cannot have what follows it applied before it.
 * A signal whose point is complete, with nothing before it on @q, needs
 * no record (signal_complete_locked()). q->lock held.
 */
int record_signal(struct d3dq_queue *q, struct d3dq_fence *f, uint64_t value,
		  uint64_t point)
{
	struct d3dq_device *dev = q->dev;
	struct list *pos, *tmp;
	struct list garbage;
	struct sig_rec *s;
	bool ring;

	/*
	 * A second queue signals a fence nothing observes: what the first
	 * one completed takes effect before this one (R4), and from now on
	 * the worker applies both as they complete.
	 */
	if (!atomic_load_explicit(&f->observed, memory_order_relaxed) &&
	    atomic_load_explicit(&f->npending, memory_order_relaxed) &&
	    catch_up(f, q))
		fence_observe(f);

	pthread_mutex_lock(&dev->apply_lock);
	if (list_empty(&q->recs) &&
	    (point <= q->completed || point <= q->done)) {
		signal_complete_locked(q, f, value, point);
		pthread_mutex_unlock(&dev->apply_lock);
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		pthread_mutex_unlock(&dev->apply_lock);
		return -ENOMEM;
	}
	s->r.kind = REC_SIGNAL;
	s->r.point = point;
	s->queue = q;
	s->value = value;

	list_init(&garbage);
	pthread_mutex_lock(&f->lock);
	fence_ref(f);
	s->fence = f;
	list_add_tail(&s->flink, &f->pending);
	atomic_fetch_add(&f->npending, 1);
	list_for_each_safe(pos, tmp, &f->tickets) {
		struct ticket *t = container_of(pos, struct ticket, link);

		if (t->value <= value)
			dev_ready_push(dev, t->queue);
	}
	pthread_mutex_unlock(&f->lock);
	ring = record_add_locked(q, &s->r, &garbage);
	pthread_mutex_unlock(&dev->apply_lock);
	free_garbage(&garbage);
	if (ring)
		dev_ring(dev);
	return 0;
}

/*
 * A new edge on (@dep, @dep_point), to be recorded with record_edge()
 * once its point is known. The caller fills in the releasable part and
 * links it to its fence first.
 */
struct edge *edge_new(struct d3dq_queue *dep, uint64_t dep_point)
{
	struct edge *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->r.kind = REC_EDGE;
	queue_ref(dep);
	e->dep = dep;
	e->dep_point = dep_point;
	list_init(&e->flink);
	return e;
}

/* Free an edge that was never recorded. */
void edge_free(struct edge *e)
{
	struct list garbage;

	list_init(&garbage);
	list_add_tail(&e->r.qlink, &garbage);
	free_garbage(&garbage);
}

void record_edge(struct d3dq_queue *q, uint64_t point, struct edge *e)
{
	e->r.point = point;
	record_add(q, &e->r);
}

/* 0, or the reason @q is lost (its completed jobs then signal nothing). */
int queue_check_lost(struct d3dq_queue *q)
{
	struct drm_d3dq_queue_get_state st = { .id = q->id };

	if (d3dq_ioctl(q->dev->fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, &st) ||
	    st.state != DRM_D3DQ_QUEUE_STATE_LOST)
		return 0;
	return st.reason ? st.reason : -ECANCELED;
}

/*
 * queue_check_lost() for anyone but the queue's destroyer, who checks a
 * queue it destroys itself before the kernel destroys it: a queue being
 * destroyed is no news here. (A module older than the destroyer's check
 * reported the destroy itself as a loss to a QUEUE_GET_STATE racing it.)
 */
int queue_check_lost_live(struct d3dq_queue *q)
{
	int lost = queue_check_lost(q);
	bool dead;

	if (!lost)
		return 0;
	queue_lock(q);
	dead = q->dead;
	queue_unlock(q);
	return dead ? 0 : lost;
}

/* Device removal. */

struct snapshot {
	struct d3dq_queue **queues;
	struct d3dq_fence **fences;
	size_t nq, nf;
};

/* References to every queue and fence of @dev; dev->lock held. */
static void snapshot_take_locked(struct d3dq_device *dev, struct snapshot *s)
{
	struct list *pos, *tmp;
	size_t nq = 0, nf = 0;

	list_for_each_safe(pos, tmp, &dev->queues)
		nq++;
	list_for_each_safe(pos, tmp, &dev->fences)
		nf++;
	s->queues = calloc(nq ? nq : 1, sizeof(*s->queues));
	s->fences = calloc(nf ? nf : 1, sizeof(*s->fences));
	s->nq = 0;
	s->nf = 0;
	if (!s->queues || !s->fences)
		return;
	list_for_each_safe(pos, tmp, &dev->queues) {
		struct d3dq_queue *q = container_of(pos, struct d3dq_queue,
						    dev_link);

		queue_ref(q);
		s->queues[s->nq++] = q;
	}
	list_for_each_safe(pos, tmp, &dev->fences) {
		struct d3dq_fence *f = container_of(pos, struct d3dq_fence,
						    dev_link);

		fence_ref(f);
		s->fences[s->nf++] = f;
	}
}

static void snapshot_put(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nq; i++)
		queue_unref(s->queues[i]);
	for (i = 0; i < s->nf; i++)
		fence_unref(s->fences[i]);
	free(s->queues);
	free(s->fences);
}

/*
 * The driver refused DRM_IOCTL_D3DQ_REMOVE (it cannot, short of the
 * device disappearing): then wait until every job submitted so far has
 * finished, so that nothing is released while the engine still runs.
 * Queue work is refused already.
 */
static void wait_all_jobs(struct d3dq_device *dev)
{
	struct snapshot s = { 0 };
	uint64_t *done;
	bool again;
	size_t i;

	pthread_mutex_lock(&dev->lock);
	snapshot_take_locked(dev, &s);
	pthread_mutex_unlock(&dev->lock);
	done = calloc(s.nq ? s.nq : 1, sizeof(*done));
	if (done) {
		do {
			again = false;
			for (i = 0; i < s.nq; i++) {
				uint64_t p = atomic_load(&s.queues[i]->submitted);

				if (p <= done[i])
					continue;
				syncobj_timeline_wait(dev->fd,
					&s.queues[i]->tl, &p, 1, INT64_MAX,
					DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					NULL);
				done[i] = p;
				again = true;
			}
		} while (again);
		free(done);
	}
	snapshot_put(&s);
}

/*
 * Remove the device (R15), in this order: make sure no job of ours runs
 * any more (the kernel's REMOVE also sets every fence of the file to
 * UINT64_MAX for good, which other processes holding a shared one see);
 * every fence reads UINT64_MAX; publish the reason; release every
 * waiter; drop every held FIFO (through the ready list). Concurrent
 * callers wait for the first one; the first reason stays. Called with no
 * lock held, or only the caller's queue lock.
 */
void dev_remove(struct d3dq_device *dev, int reason)
{
	struct drm_d3dq_remove args = { 0 };
	struct fire fire = FIRE_INIT;
	struct snapshot s = { 0 };
	size_t i;

	/*
	 * d3dq_device_removed_reason(NULL) is -EFAULT; a device's reason
	 * must not look like it (a kernel call failing on a bad address),
	 * nor like 0, which is "not removed" once the device has stopped.
	 */
	if (reason == -EFAULT || !reason)
		reason = -EIO;
	pthread_mutex_lock(&dev->remove_lock);
	if (dev_removed(dev)) {
		pthread_mutex_unlock(&dev->remove_lock);
		return;
	}
	atomic_store(&dev->refusing, true);
	if (d3dq_ioctl(dev->fd, DRM_IOCTL_D3DQ_REMOVE, &args))
		wait_all_jobs(dev);
	/*
	 * From here on, values read UINT64_MAX, creation fails and the
	 * reason reads back: one instant (R15), so the reason is stored
	 * before it and read only once the device reads as stopped. A
	 * thread whose wait a removal released sees why. Objects created
	 * before are in the snapshot.
	 */
	atomic_store_explicit(&dev->removed_reason, reason,
			      memory_order_relaxed);
	pthread_mutex_lock(&dev->lock);
	atomic_store_explicit(&dev->stopped, true, memory_order_release);
	snapshot_take_locked(dev, &s);
	pthread_mutex_unlock(&dev->lock);

	fences_remove(s.fences, s.nf);
	for (i = 0; i < s.nf; i++)
		fence_release_all(s.fences[i], &fire);
	fire_run(dev, &fire);
	for (i = 0; i < s.nq; i++)
		dev_ready_push(dev, s.queues[i]);
	snapshot_put(&s);
	pthread_mutex_unlock(&dev->remove_lock);
	if (atomic_load(&dev->worker_started))
		dev_ring(dev);
}

/* The worker thread. */

struct watch_set {
	uint32_t *handles;
	uint64_t *points;
	void **objs;
	uint64_t *base;			/* queues: completed when collected */
	uint32_t n, nqueues, cap;
};

static int watch_add(struct watch_set *w, uint32_t handle, uint64_t point,
		     void *obj, uint64_t base)
{
	if (w->n == w->cap) {
		uint32_t cap = w->cap ? w->cap * 2 : 64;
		uint32_t *h = realloc(w->handles, cap * sizeof(*h));
		uint64_t *p, *b;
		void **o;

		if (!h)
			return -ENOMEM;
		w->handles = h;
		p = realloc(w->points, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->points = p;
		b = realloc(w->base, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		w->base = b;
		o = realloc(w->objs, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		w->objs = o;
		w->cap = cap;
	}
	w->handles[w->n] = handle;
	w->points[w->n] = point;
	w->objs[w->n] = obj;
	w->base[w->n] = base;
	w->n++;
	return 0;
}

static void watch_free(struct watch_set *w)
{
	free(w->handles);
	free(w->points);
	free(w->objs);
	free(w->base);
}

/* @q is being destroyed, its records applied: out of dev->active. */
void queue_deactivate(struct d3dq_queue *q)
{
	pthread_mutex_lock(&q->dev->apply_lock);
	if (q->active_linked) {
		list_del(&q->active_link);
		q->active_linked = false;
		/* The caller holds a reference too: never the last one. */
		atomic_fetch_sub(&q->refs, 1);
	}
	pthread_mutex_unlock(&q->dev->apply_lock);
}

/*
 * Build the wait set: the doorbell; per queue with records, the point of
 * its first signal record (see watch_point_locked()), none if it has
 * none, with a reference; per watch of a shared fence (fence.c), its
 * point (only the worker frees watches). Queues without records leave
 * the list. dev->lock held.
 */
static void collect_locked(struct d3dq_device *dev, struct watch_set *w)
{
	struct list *pos, *tmp;

	w->n = 0;
	watch_add(w, dev->doorbell, atomic_load(&dev->doorbell_seen) + 1,
		  NULL, 0);
	pthread_mutex_lock(&dev->apply_lock);
	dev->worker_awake = false;
	list_for_each_safe(pos, tmp, &dev->active) {
		struct d3dq_queue *q =
			container_of(pos, struct d3dq_queue, active_link);
		uint64_t point;

		if (list_empty(&q->recs)) {
			list_del(&q->active_link);
			q->active_linked = false;
			/* Never the last reference: see queue_deactivate(). */
			atomic_fetch_sub(&q->refs, 1);
			continue;
		}
		point = watch_point_locked(q);
		if (!point || watch_add(w, q->tl, point, q, q->completed))
			continue;
		queue_ref(q);
		q->watched = true;
		q->watch_point = point;
	}
	pthread_mutex_unlock(&dev->apply_lock);
	w->nqueues = w->n;
	pthread_mutex_lock(&dev->watch_lock);
	list_for_each_safe(pos, tmp, &dev->watches) {
		struct watch *fw = container_of(pos, struct watch, link);

		if (watch_add(w, fw->sobj, 1, fw, 0))
			break;
	}
	pthread_mutex_unlock(&dev->watch_lock);
}

static void watch_put(struct d3dq_device *dev, struct watch_set *w)
{
	uint32_t i;

	pthread_mutex_lock(&dev->apply_lock);
	for (i = 1; i < w->nqueues; i++)
		((struct d3dq_queue *)w->objs[i])->watched = false;
	/* Records added from now on are in the next set without a ring. */
	dev->worker_awake = true;
	pthread_mutex_unlock(&dev->apply_lock);
	for (i = 1; i < w->nqueues; i++)
		queue_unref(w->objs[i]);
}

/*
 * Entry @i of the set (not the doorbell) has signalled: apply it. A queue
 * reached the point the worker waited for: it is applied up to there
 * (records after it that completed too make the next wait return at
 * once, which costs no more than a QUERY now would). Other entries that
 * signalled too are found by the next wait.
 * A lost queue's jobs completed with an error: nothing they signal
 * counts, so the device is removed before anything is applied. No lock
 * held.
 */
static void process(struct d3dq_device *dev, struct watch_set *w, uint32_t i)
{
	struct fire fire = FIRE_INIT;
	uint64_t value = w->points[i];
	struct list garbage;
	int lost;

	if (i >= w->nqueues) {
		watch_fired(dev, w->objs[i]);
		return;
	}
	lost = queue_check_lost_live(w->objs[i]);
	if (lost) {
		dev_remove(dev, lost);
		return;
	}
	list_init(&garbage);
	pthread_mutex_lock(&dev->apply_lock);
	apply_locked(w->objs[i], value, &fire, &garbage);
	fire_run(dev, &fire);
	pthread_mutex_unlock(&dev->apply_lock);
	free_garbage(&garbage);
}

/*
 * How long the worker sleeps in the kernel at most. -ENODEV from the wait
 * means the device was unplugged (its platform device unbound): every
 * ioctl fails that way from then on and nothing will ever signal, so
 * that removes the device as d3dq_device_remove() does, and the worker
 * only waits to be stopped.
 *
 * But a wait already sleeping when the device is unplugged is only woken
 * by the points it waits for, and an idle device's are points nobody
 * will submit: the doorbell's next one, each queue's next job. The
 * driver cannot complete them: a point without a fence has nothing to
 * signal, and the syncobjs are the library's (shareable with other
 * processes and devices), not the driver's to fill with error fences. A
 * wait that also watches the device file for a hang-up needs
 * DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6) and poll(), which 6.1 lacks. So
 * the worker wakes at least every WATCH_SLICE_NS, and an unplug is
 * noticed within that time; a removal through the library or a lost
 * queue is noticed at once, as before.
 */
#define WATCH_SLICE_NS	(2 * 1000000000ll)

static void *worker_main(void *arg)
{
	struct d3dq_device *dev = arg;
	struct watch_set w = { 0 };
	uint32_t first;
	int ret;

	for (;;) {
		pthread_mutex_lock(&dev->lock);
		if (dev->worker_quit) {
			pthread_mutex_unlock(&dev->lock);
			break;
		}
		collect_locked(dev, &w);
		pthread_mutex_unlock(&dev->lock);

		first = 0;
		ret = syncobj_timeline_wait(dev->fd, w.handles, w.points, w.n,
					    now_ns() + WATCH_SLICE_NS,
					    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					    &first);
		if (!ret && first && first < w.n)
			process(dev, &w, first);
		else if (ret == -ENODEV)
			dev_remove(dev, -ENODEV);
		watch_put(dev, &w);
		run_flushes(dev);
		if (ret == -ENODEV)
			usleep(20 * 1000);	/* until stopped */
		else if (ret && ret != -ETIME && ret != -EINTR)
			usleep(1000);	/* a handle went away: rebuild */
	}
	watch_free(&w);
	return NULL;
}

int worker_ensure(struct d3dq_device *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->worker_lock);
	if (!atomic_load(&dev->worker_started) && !dev->worker_quit) {
		ret = -pthread_create(&dev->worker, NULL, worker_main, dev);
		if (!ret)
			atomic_store(&dev->worker_started, true);
	}
	pthread_mutex_unlock(&dev->worker_lock);
	return ret;
}

void worker_stop(struct d3dq_device *dev)
{
	bool started;

	pthread_mutex_lock(&dev->worker_lock);
	pthread_mutex_lock(&dev->lock);
	dev->worker_quit = true;
	pthread_mutex_unlock(&dev->lock);
	started = atomic_load(&dev->worker_started);
	pthread_mutex_unlock(&dev->worker_lock);
	if (!started)
		return;
	dev_ring(dev);
	pthread_join(dev->worker, NULL);
	atomic_store(&dev->worker_started, false);
}
