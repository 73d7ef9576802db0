// SPDX-License-Identifier: MIT
/*
 * libd3dq: the dispatcher, one thread for every device with a callback:
 * it waits for the token registrations' syncobjs, imported into its own
 * file (@home, an open of its own of a callback device's node), and
 * calls the callbacks with no lock held. One lock, the innermost; calls
 * nothing of the library. See Documentation/library.rst, "Events that
 * are the program's tokens".
 *
 * A registration is claimed (listed, not yet armed) before the caller
 * makes its kernel registration, so that the same token, fence and value
 * registered by two threads is one registration, and a failure before
 * the kernel registration leaves none behind (issue 39); it keeps the
 * syncobj's handle in its owner's file (@own), from which the thread
 * imports it again into a new home when the old one is unplugged.
 *
 * @home's private fence @watch has a registration that adds point
 * SENTINEL to the doorbell: nobody signals @watch, so that point comes
 * only when the device goes (an unplug sets its fences to UINT64_MAX),
 * and the thread then leaves the file (issue 39: it waited on a dead
 * file, which answered -ENODEV at once, for ever: 100 % CPU, and every
 * new registration failed). It opens a file on another callback device
 * that is still there, imports the registrations of the devices still
 * there into it, and calls those of the devices gone (R15: their values
 * are UINT64_MAX); with no device left it sleeps on a condition variable.
 *
 * Other errors of its wait: it tries again after 1, 2, 4 ... 512 ms
 * (about 1 s in all), and then removes the devices whose registrations
 * it cannot wait for (R15: their registrations fire, the program reads
 * the removal) and sleeps until a registration, an open or a close
 * comes (issue 39: it tried every 1 ms, for ever).
 *
 * fork(): the child has neither the thread nor a file of its own (@home
 * is its parent's), so the child's handler forgets both, with the
 * parent's registrations and devices, and counts the fork in
 * d3dqp_fork_gen: the child's first callback device starts a thread of
 * its own, and the parent's devices are its parent's.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "internal.h"
#include "compat/drm_syncobj_eventfd.h"

/* The doorbell's point that only the sentinel registration adds. */
#define SENTINEL (1ull << 62)
/* Failed waits in a row before the dispatcher gives up (about 1 s). */
#define MAX_FAILS 10

enum reg_state { REG_ARMING, REG_ARMED };

struct token_reg {
	struct token_reg *next;
	struct token_reg *hnext;	/* keyed: the bucket of its key */
	uint32_t handle;		/* in @home; 0: not imported */
	uint32_t own;			/* in the owner's file; 0: none */
	struct d3dq_device *owner;	/* NULL once closed */
	uint32_t key_handle;		/* single: fence handle, value */
	uint64_t key_value;
	enum reg_state state;
	bool ready;			/* fired: to be called */
	d3dq_signal_event_fn fn;
	void *token, *context;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER; /* calls, end */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;	/* the thread */
static struct token_reg *regs, **tail = &regs;	/* oldest first */
static struct d3dq_device *devs;	/* callback devices, by disp_next */
static struct token_reg **keyed;	/* hash of keyed registrations */
static size_t keyed_size, keyed_count;
static int home = -1;			/* the dispatcher's file */
static uint32_t door;			/* timeline syncobj in @home */
static uint64_t door_point;
static int bell = -1;			/* eventfd of every syncobj, or -1 */
static unsigned int users;		/* devices with a callback */
static unsigned int fails;		/* failed waits in a row */
static bool stalled;			/* gave up: wait for a ring */
static bool running;			/* the thread has not ended */
static bool quit;			/* end once no registration is left */
static bool detached;			/* stopped from inside a callback */
static bool joining;			/* someone joins it */
static pthread_t thread;

_Atomic unsigned int d3dqp_fork_gen;

static void ring_locked(void)
{
	uint64_t one = 1;

	door_point++;
	if (bell >= 0 && write(bell, &one, sizeof(one)) < 0)
		;	/* the counter is full: it is rung */
	else if (bell < 0 && home >= 0)
		drmSyncobjTimelineSignal(home, &door, &door_point, 1);
	/* A thread without a file, or that gave up, sleeps here. */
	stalled = false;
	pthread_cond_signal(&wake);
}

/*
 * Have @handle's point @point write the bell (SYNCOBJ_EVENTFD, Linux
 * 6.6): 0, or -errno.
 */
static int bell_attach_locked(uint32_t handle, uint64_t point)
{
	struct drm_syncobj_eventfd args = {
		.handle = handle, .point = point, .fd = bell,
	};

	return d3dqp_ioctl(home, DRM_IOCTL_SYNCOBJ_EVENTFD, &args);
}

/*
 * A file of its own on @dev's node, its doorbell and sentinel, and the
 * bell where the kernel has SYNCOBJ_EVENTFD: then the thread sleeps in
 * poll() on the bell, which each registration's point writes, and a new
 * registration costs no new wait (issue 39: each one woke the thread,
 * which waited again on all n of them, O(n^2) for n); else it waits for
 * every registration's syncobj at once, and each new one rings.
 */
static int home_open_locked(struct d3dq_device *dev)
{
	struct drm_d3dq_fence_create watch = { 0 };
	struct drm_d3dq_fence_value fv = { .value = 1 };
	struct drm_d3dq_fence_event ev = {
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.flags = DRM_D3DQ_FENCE_EVENT_SYNCOBJ,
		.point = SENTINEL,
	};
	char path[64];
	uint32_t d = 0;
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dev->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* No /proc: the node's name, from sysfs. */
		char *name = drmGetDeviceNameFromFd2(dev->fd);

		if (name)
			fd = open(name, O_RDWR | O_CLOEXEC);
		free(name);
	}
	if (fd < 0)
		/* Unbound: its node is gone, or refuses opens. */
		return errno == ENOENT || errno == ENXIO ? -ENODEV : -errno;
	ret = drmSyncobjCreate(fd, DRM_SYNCOBJ_CREATE_SIGNALED, &d) ?
	      -errno : 0;
	if (!ret)
		ret = d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &watch);
	fv.handle = watch.handle;
	ev.syncobj = d;
	if (!ret)
		ret = d3dqp_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &ev);
	if (ret) {
		/* Its handles go with it. */
		close(fd);
		return ret;
	}
	home = fd;
	door = d;
	door_point = 0;
	if (bell < 0)
		bell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (bell >= 0 && bell_attach_locked(door, SENTINEL)) {
		close(bell);
		bell = -1;
	}
	return 0;
}

/* Leave a dead file: every registration is to be imported again. */
static void home_close_locked(void)
{
	struct token_reg *r;

	if (home >= 0)
		close(home);
	home = -1;
	for (r = regs; r; r = r->next)
		r->handle = 0;
}

/*
 * A home on a callback device still there: 0, -ENODEV if none is
 * (unplugged, all of them), or another error of the last tried.
 */
static int rehome_locked(void)
{
	struct d3dq_device *dev;
	int ret = -ENODEV, err;

	for (dev = devs; dev && ret; dev = dev->disp_next) {
		err = home_open_locked(dev);
		if (!err || err != -ENODEV || ret == -ENODEV)
			ret = err;
	}
	return ret;
}

/*
 * Import @r's syncobj, from its owner's file, into @home: 0, or -ENODEV
 * if @home is dead, or another error. A registration whose owner's file
 * is gone (unplugged) or closed fired (R15, R14): it is marked ready.
 */
static int import_locked(struct token_reg *r)
{
	int sfd, ret;

	if (!r->owner || !r->own) {
		r->ready = true;
		return 0;
	}
	if (drmSyncobjHandleToFD(r->owner->fd, r->own, &sfd)) {
		ret = -errno;
		if (ret != -ENODEV)
			return ret == -ENOENT ? -EIO : ret;
		r->ready = true;
		return 0;
	}
	ret = drmSyncobjFDToHandle(home, sfd, &r->handle) ? -errno : 0;
	close(sfd);
	if (!ret && bell >= 0)
		ret = bell_attach_locked(r->handle, 1);
	return ret;
}

/*
 * The keyed (single-fence) registrations are in a hash table too, so
 * that finding one of the same key costs O(1), not a walk of the list.
 */
static size_t key_hash(const struct token_reg *r, size_t size)
{
	uint64_t h = (uint64_t)(uintptr_t)r->owner * 0x9e3779b97f4a7c15ull;

	h ^= (h >> 29) + r->key_handle * 0xbf58476d1ce4e5b9ull;
	h ^= (h >> 31) + r->key_value * 0x94d049bb133111ebull;
	h ^= (h >> 27) + (uint64_t)(uintptr_t)r->token;
	h *= 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (size - 1);
}

/* List keyed @r: false if the table could not grow (nothing done). */
static bool key_add_locked(struct token_reg *r)
{
	struct token_reg **t, *q, *next;
	size_t size, i, b;

	if (keyed_count >= keyed_size) {
		size = keyed_size ? keyed_size * 2 : 64;
		t = calloc(size, sizeof(*t));
		if (!t)
			return false;
		for (i = 0; i < keyed_size; i++)
			for (q = keyed[i]; q; q = next) {
				next = q->hnext;
				b = key_hash(q, size);
				q->hnext = t[b];
				t[b] = q;
			}
		free(keyed);
		keyed = t;
		keyed_size = size;
	}
	b = key_hash(r, keyed_size);
	r->hnext = keyed[b];
	keyed[b] = r;
	keyed_count++;
	return true;
}

static void key_del_locked(struct token_reg *r)
{
	struct token_reg **qp;

	if (!r->key_handle)
		return;
	for (qp = &keyed[key_hash(r, keyed_size)]; *qp != r;
	     qp = &(*qp)->hnext)
		;
	*qp = r->hnext;
	keyed_count--;
}

/* The first registration to call, unlinked, or NULL. */
static struct token_reg *take_ready_locked(void)
{
	struct token_reg *r, **rp;

	for (rp = &regs; (r = *rp); rp = &r->next) {
		if (!r->ready)
			continue;
		*rp = r->next;
		if (!*rp)
			tail = rp;
		key_del_locked(r);
		if (r->handle && home >= 0)
			drmSyncobjDestroy(home, r->handle);
		/* Its owner's close waits for it: the file is still its. */
		if (r->own && r->owner)
			drmSyncobjDestroy(r->owner->fd, r->own);
		return r;
	}
	return NULL;
}

/*
 * Call the registrations marked ready, in the order they were made: 1
 * if it called one, 0 if none was ready, -1 if the thread is a child's
 * copy (fork in a callback) and must end at once.
 */
static int call_ready_locked(unsigned int gen)
{
	struct token_reg *r;
	int called = 0;

	while ((r = take_ready_locked())) {
		pthread_mutex_unlock(&lock);
		r->fn(r->token, r->context);
		/*
		 * The callback forked, and this is the child's copy of the
		 * thread: nothing here is the child's.
		 */
		if (atomic_load(&d3dqp_fork_gen) != gen)
			return -1;
		free(r);
		pthread_mutex_lock(&lock);
		pthread_cond_broadcast(&progress);
		called = 1;
	}
	return called;
}

/*
 * The wait cannot be made (MAX_FAILS in a row): remove the devices that
 * have registrations, which releases them (R15), and call them all.
 */
static void give_up_locked(void)
{
	struct drm_d3dq_remove args = { 0 };
	struct token_reg *r, *q;

	for (r = regs; r; r = r->next) {
		if (r->state != REG_ARMED)
			continue;
		for (q = regs; q != r && q->owner != r->owner; q = q->next)
			;
		if (q == r && r->owner)
			d3dqp_ioctl(r->owner->fd, DRM_IOCTL_D3DQ_REMOVE, &args);
		r->ready = true;
	}
	stalled = true;
	fails = 0;
}

struct wait_set {
	uint32_t *handles;
	uint64_t *points;
	struct token_reg **regs;
	uint32_t n, cap;
};

static bool wait_set_fit(struct wait_set *ws, uint32_t n)
{
	uint32_t cap = ws->cap ? ws->cap : 64;
	void *h, *p, *r;

	if (n <= ws->cap)
		return true;
	while (cap < n)
		cap *= 2;
	h = realloc(ws->handles, cap * sizeof(*ws->handles));
	if (h)
		ws->handles = h;
	p = realloc(ws->points, cap * sizeof(*ws->points));
	if (p)
		ws->points = p;
	r = realloc(ws->regs, cap * sizeof(*ws->regs));
	if (r)
		ws->regs = r;
	if (!h || !p || !r)
		return false;
	ws->cap = cap;
	return true;
}

/*
 * Prepare the wait, @home open: import what is to be imported, the
 * doorbell and the armed registrations in @ws. 0, 1 if a registration
 * turned out to have fired (its owner is gone: to be called first), or
 * an error (-ENODEV: @home died).
 */
static int wait_set_fill_locked(struct wait_set *ws)
{
	struct token_reg *r;
	bool fired = false;
	uint32_t n = 1;
	int ret;

	for (r = regs; r; r = r->next) {
		if (r->state != REG_ARMED || r->ready)
			continue;
		if (!r->handle) {
			ret = import_locked(r);
			if (ret)
				return ret;
			fired = fired || r->ready;
			if (r->ready)
				continue;
		}
		n++;
	}
	if (fired)
		return 1;
	if (!wait_set_fit(ws, n))
		return -ENOMEM;
	ws->handles[0] = door;
	ws->points[0] = door_point + 1;
	ws->regs[0] = NULL;
	/*
	 * The newest first: the query reads the points in the array's
	 * order, and the kernel adds them in the order they fired, so a
	 * registration found fired finds every one that fired before it
	 * was made (whose points came first): those are called first.
	 */
	ws->n = n;
	for (r = regs; r; r = r->next) {
		if (r->state != REG_ARMED || r->ready)
			continue;
		n--;
		ws->handles[n] = r->handle;
		ws->points[n] = 1;
		ws->regs[n] = r;
	}
	return 0;
}

/* A failed wait, or import: try again later, give up after MAX_FAILS. */
static void failed_locked(void)
{
	if (++fails >= MAX_FAILS) {
		give_up_locked();
		return;
	}
	pthread_mutex_unlock(&lock);
	usleep(1000u << (fails - 1));
	pthread_mutex_lock(&lock);
}

/*
 * Sleep until the bell rings, and take its count; after a failure (the
 * query of the points failed) look again at once.
 */
static int bell_wait(int fd, unsigned int failed)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t count;

	while (!failed && poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/* Wait for the doorbell or a registration; call those that fired. */
static void *dispatch_main(void *arg)
{
	unsigned int gen = atomic_load(&d3dqp_fork_gen);
	struct wait_set ws = { 0 };
	struct token_reg *r;
	uint32_t i;
	int ret;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		ret = call_ready_locked(gen);
		if (ret < 0)
			return NULL;
		if (ret)
			continue;
		if (quit && !regs)
			break;
		if (stalled) {
			pthread_cond_wait(&wake, &lock);
			continue;
		}
		ret = home < 0 ? rehome_locked() : 0;
		if (ret == -ENODEV) {
			/* No callback device is left: all fired (R15). */
			for (r = regs; r; r = r->next)
				r->ready = r->ready || r->state == REG_ARMED;
			if (!call_ready_locked(gen))
				pthread_cond_wait(&wake, &lock);
			continue;
		}
		if (!ret)
			ret = wait_set_fill_locked(&ws);
		if (ret == 1)
			continue;
		if (ret == -ENODEV) {
			home_close_locked();
			continue;
		}
		if (ret) {
			failed_locked();
			continue;
		}
		pthread_mutex_unlock(&lock);
		if (bell >= 0) {
			/* What rang it may have been armed since. */
			ret = bell_wait(bell, fails);
			pthread_mutex_lock(&lock);
			if (!ret)
				ret = wait_set_fill_locked(&ws);
			pthread_mutex_unlock(&lock);
		} else {
			ret = drmSyncobjTimelineWait(home, ws.handles, ws.points,
						     ws.n, INT64_MAX,
						     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
						     NULL) ? -errno : 0;
		}
		/* Which fired: point 1 there; the sentinel: the file goes. */
		memset(ws.points, 0, ws.n * sizeof(*ws.points));
		if (!ret && drmSyncobjQuery(home, ws.handles, ws.points, ws.n))
			ret = -errno;
		pthread_mutex_lock(&lock);
		if (ret == 1)
			continue;
		if (ret == -ENODEV || ws.points[0] >= SENTINEL) {
			home_close_locked();
			continue;
		}
		if (ret) {
			failed_locked();
			continue;
		}
		fails = 0;
		/* Only this thread unlinks armed registrations. */
		for (i = 1; i < ws.n; i++)
			if (ws.points[i])
				ws.regs[i]->ready = true;
	}
	free(ws.handles);
	free(ws.points);
	free(ws.regs);
	free(keyed);
	keyed = NULL;
	keyed_size = keyed_count = 0;
	home_close_locked();
	if (bell >= 0)
		close(bell);
	bell = -1;
	running = false;
	pthread_cond_broadcast(&progress);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The thread is this one: a callback calls the library. lock held. */
static bool on_thread_locked(void)
{
	return running && pthread_equal(thread, pthread_self());
}

int d3dqp_dispatch_get(struct d3dq_device *dev)
{
	sigset_t all, old;
	int ret = 0;

	pthread_mutex_lock(&lock);
	/* A last close waits for the thread to end: let it. */
	while (joining && !on_thread_locked())
		pthread_cond_wait(&progress, &lock);
	if (!running) {
		/* A file first: the open fails if none can be made. */
		ret = home_open_locked(dev);
		if (ret)
			goto out;
		fails = 0;
		stalled = false;
		/* Signals are for the program's threads, not this one. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = -pthread_create(&thread, NULL, dispatch_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (ret) {
			home_close_locked();
			goto out;
		}
		pthread_setname_np(thread, "d3dq-dispatch");
		running = true;
		detached = false;
	}
	/* A thread told to end (registrations left) goes on. */
	quit = false;
	users++;
	dev->disp_next = devs;
	devs = dev;
	/* A thread without a file takes this device's. */
	if (home < 0 || stalled)
		ring_locked();
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

/*
 * A registration of @n's key (O(1), the hash) that is pending, and not
 * known fired.
 */
static struct token_reg *same_key_locked(const struct token_reg *n)
{
	struct token_reg *r;

	if (!keyed_size)
		return NULL;
	for (r = keyed[key_hash(n, keyed_size)]; r; r = r->hnext)
		if (r->owner == n->owner && r->key_handle == n->key_handle &&
		    r->key_value == n->key_value && r->token == n->token &&
		    !r->ready)
			return r;
	return NULL;
}

int d3dqp_dispatch_claim(struct d3dq_device *owner, uint32_t own,
			 uint32_t key_handle, uint64_t key_value,
			 void *token, bool probed, struct token_reg **out)
{
	struct token_reg *r, *n = calloc(1, sizeof(*n));
	uint64_t point;

	*out = NULL;
	if (!n)
		return -ENOMEM;
	n->owner = owner;
	n->key_handle = key_handle;
	n->key_value = key_value;
	n->token = token;
	pthread_mutex_lock(&lock);
	/*
	 * Its close waited for its registrations already: a registration
	 * made after it (by a call in progress then) would come after the
	 * close, whose context the program may have freed.
	 */
	while (!owner->tokens_closed && key_handle && (r = same_key_locked(n))) {
		/* Being armed by another thread: its answer first. */
		if (r->state == REG_ARMING) {
			pthread_cond_wait(&progress, &lock);
			continue;
		}
		/*
		 * Armed: fired if its point is there (the caller made sure
		 * that the points of registrations that fired before its
		 * call are, @probed), else it is this one too (R10).
		 */
		point = 0;
		if (r->own && !drmSyncobjQuery(owner->fd, &r->own, &point, 1) &&
		    !point) {
			pthread_mutex_unlock(&lock);
			free(n);
			return probed ? 1 : 2;
		}
		r->ready = true;
	}
	if (owner->tokens_closed || (key_handle && !key_add_locked(n))) {
		pthread_mutex_unlock(&lock);
		free(n);
		return owner->tokens_closed ? -ENODEV : -ENOMEM;
	}
	n->own = own;
	n->state = REG_ARMING;
	n->fn = owner->signal_event;
	n->context = owner->event_context;
	*tail = n;
	tail = &n->next;
	pthread_mutex_unlock(&lock);
	*out = n;
	return 0;
}

int d3dqp_dispatch_import(struct token_reg *r, int sfd)
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	/* A dead home: the thread imports it into the next one. */
	if (home >= 0 && drmSyncobjFDToHandle(home, sfd, &r->handle)) {
		ret = -errno;
		r->handle = 0;
		if (ret == -ENODEV)
			ret = 0;
	} else if (home >= 0 && bell >= 0 &&
		   bell_attach_locked(r->handle, 1)) {
		ret = -errno;
		drmSyncobjDestroy(home, r->handle);
		r->handle = 0;
		if (ret == -ENODEV)
			ret = 0;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void d3dqp_dispatch_arm(struct token_reg *r, bool fired)
{
	uint64_t point = 0;

	pthread_mutex_lock(&lock);
	r->state = REG_ARMED;
	r->ready = fired;
	/*
	 * With the bell, the thread looks at it once its point comes; but
	 * if it came already, the thread may have looked before it was
	 * armed: ring then (also if it is to be imported, or fired).
	 */
	if (bell < 0 || fired || !r->handle ||
	    drmSyncobjQuery(home, &r->handle, &point, 1) || point)
		ring_locked();
	pthread_cond_broadcast(&progress);
	pthread_mutex_unlock(&lock);
}

void d3dqp_dispatch_cancel(struct token_reg *r)
{
	struct token_reg **rp;

	pthread_mutex_lock(&lock);
	for (rp = &regs; *rp != r; rp = &(*rp)->next)
		;
	*rp = r->next;
	if (!*rp)
		tail = rp;
	key_del_locked(r);
	if (r->handle && home >= 0)
		drmSyncobjDestroy(home, r->handle);
	pthread_cond_broadcast(&progress);
	pthread_mutex_unlock(&lock);
	free(r);
}

void d3dqp_dispatch_put(struct d3dq_device *owner)
{
	struct d3dq_device **dp;
	struct token_reg *r;
	bool join;
	pthread_t t;

	pthread_mutex_lock(&lock);
	owner->tokens_closed = true;
	for (r = regs; r;) {
		/* Called first, unless this is the thread (a callback). */
		if (r->owner != owner || on_thread_locked()) {
			if (r->owner == owner) {
				/* Its file may close: @own goes with it. */
				key_del_locked(r);
				r->key_handle = 0;
				r->owner = NULL;
				r->own = 0;
			}
			r = r->next;
			continue;
		}
		pthread_cond_wait(&progress, &lock);
		r = regs;
	}
	for (dp = &devs; *dp && *dp != owner; dp = &(*dp)->disp_next)
		;
	if (*dp)
		*dp = owner->disp_next;
	if (--users) {
		pthread_mutex_unlock(&lock);
		return;
	}
	quit = true;
	ring_locked();
	if (on_thread_locked()) {
		/* Inside a callback: the thread ends after it, unjoined. */
		if (!detached)
			pthread_detach(thread);
		detached = true;
		pthread_mutex_unlock(&lock);
		return;
	}
	/*
	 * Wait until the thread ends, unless a callback opens a device
	 * meanwhile (which keeps it); join it unless it was detached.
	 */
	joining = true;
	t = thread;
	while (running && quit)
		pthread_cond_wait(&progress, &lock);
	join = !running && !detached;
	joining = false;
	pthread_cond_broadcast(&progress);
	pthread_mutex_unlock(&lock);
	if (join)
		pthread_join(t, NULL);
}

/*
 * fork(): the lock is taken across it, so that the child finds the
 * state whole; the child then forgets the parent's thread, file,
 * registrations and devices (their memory stays the child's copy of the
 * parent's, unused), and counts the fork.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
	atomic_fetch_add(&d3dqp_fork_gen, 1);
	regs = NULL;
	tail = &regs;
	devs = NULL;
	keyed = NULL;
	keyed_size = keyed_count = 0;
	/* The child's descriptor of the parent's file: only that goes. */
	if (home >= 0)
		close(home);
	home = -1;
	if (bell >= 0)
		close(bell);
	bell = -1;
	door = 0;
	door_point = 0;
	users = 0;
	fails = 0;
	stalled = false;
	running = false;
	quit = false;
	detached = false;
	joining = false;
	/* Its waiters, if any, were threads the child does not have. */
	progress = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	wake = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	pthread_mutex_unlock(&lock);
}

static void fork_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void d3dqp_fork_watch(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_install);
}
