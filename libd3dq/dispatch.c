// SPDX-License-Identifier: MIT
/*
 * libd3dq: the dispatcher, one thread for every device with a callback:
 * it waits for the token registrations' syncobjs, imported into its own
 * file (a dup of the first such device's fd), and calls the callbacks
 * with no lock held. One lock, the innermost; calls nothing of the
 * library. See Documentation/library.rst.
 *
 * fork(): the child has neither the thread nor a file of its own (@home
 * is its parent's), so the child's handler forgets both, with the
 * parent's registrations, and counts the fork in d3dqp_fork_gen: the
 * child's first callback device starts a thread of its own, and the
 * parent's devices are its parent's (issue 39: the child took the
 * thread for running, so its callbacks never came and its close waited
 * for ever, and it rang the doorbell in the parent's file, where the
 * parent's thread then woke at once, again and again).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct token_reg {
	struct token_reg *next;
	uint32_t handle;		/* in @home */
	const struct d3dq_device *owner; /* NULL once closed */
	uint32_t key_handle;		/* single: fence handle, value */
	uint64_t key_value;
	d3dq_signal_event_fn fn;
	void *token, *context;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER; /* calls, end */
static struct token_reg *regs, **tail = &regs;	/* oldest first */
static int home = -1;			/* the dispatcher's file */
static uint32_t door;			/* timeline syncobj in @home */
static uint64_t door_point;
static unsigned int users;		/* devices with a callback */
static bool running;			/* the thread has not ended */
static bool quit;			/* end once no registration is left */
static bool detached;			/* stopped from inside a callback */
static bool joining;			/* someone joins it */
static pthread_t thread;

_Atomic unsigned int d3dqp_fork_gen;

static void ring_locked(void)
{
	door_point++;
	drmSyncobjTimelineSignal(home, &door, &door_point, 1);
}

/* Wait for the doorbell or a registration; call the one that fired. */
static void *dispatch_main(void *arg)
{
	uint32_t *handles = NULL, *h, n, i;
	uint64_t *points = NULL, *p;
	unsigned int gen = atomic_load(&d3dqp_fork_gen);
	struct token_reg *r, **rp;
	int ret;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		for (n = 1, r = regs; r; r = r->next)
			n++;
		if (quit && n == 1)
			break;
		h = realloc(handles, n * sizeof(*h));
		handles = h ? h : handles;
		p = realloc(points, n * sizeof(*p));
		points = p ? p : points;
		if (!h || !p)
			goto again;
		handles[0] = door;
		points[0] = door_point + 1;
		for (n = 1, r = regs; r; r = r->next, n++) {
			handles[n] = r->handle;
			points[n] = 1;
		}
		pthread_mutex_unlock(&lock);
		ret = drmSyncobjTimelineWait(home, handles, points, n, INT64_MAX,
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					     NULL) ? -errno : 0;
		/* Which fired: point 1 there (unplugged, -ENODEV: all). */
		memset(points, 0, n * sizeof(*points));
		if (!ret && drmSyncobjQuery(home, handles, points, n))
			ret = -errno;
		pthread_mutex_lock(&lock);
		if (ret && ret != -ENODEV)
			goto again;
		/* The first n - 1 are those waited for, oldest first. */
		for (rp = &regs, i = 1; *rp && i < n; i++) {
			r = *rp;
			if (ret != -ENODEV && !points[i]) {
				rp = &r->next;
				continue;
			}
			*rp = r->next;
			tail = *rp ? tail : rp;
			drmSyncobjDestroy(home, r->handle);
			pthread_mutex_unlock(&lock);
			r->fn(r->token, r->context);
			/*
			 * The callback forked, and this is the child's copy
			 * of the thread: nothing here is the child's.
			 */
			if (atomic_load(&d3dqp_fork_gen) != gen)
				return NULL;
			free(r);
			pthread_mutex_lock(&lock);
			pthread_cond_broadcast(&progress);
		}
		continue;
again:
		pthread_mutex_unlock(&lock);
		usleep(1000);
		pthread_mutex_lock(&lock);
	}
	free(handles);
	free(points);
	drmSyncobjDestroy(home, door);
	close(home);
	home = -1;
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

int d3dqp_dispatch_get(int fd)
{
	sigset_t all, old;
	int ret = 0;

	pthread_mutex_lock(&lock);
	/* A last close waits for the thread to end: let it. */
	while (joining && !on_thread_locked())
		pthread_cond_wait(&progress, &lock);
	if (!running) {
		home = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		ret = home < 0 ? -errno : 0;
		if (!ret && drmSyncobjCreate(home, DRM_SYNCOBJ_CREATE_SIGNALED,
					     &door))
			ret = -errno;
		if (ret) {
			if (home >= 0)
				close(home);
			home = -1;
			goto out;
		}
		door_point = 0;
		/* Signals are for the program's threads, not this one. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = -pthread_create(&thread, NULL, dispatch_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!ret) {
			running = true;
			detached = false;
		}
	}
	if (!ret) {
		/* A thread told to end (registrations left) goes on. */
		quit = false;
		users++;
	}
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

int d3dqp_dispatch_add(struct d3dq_device *owner, int sobj_fd,
		       uint32_t key_handle, uint64_t key_value,
		       d3dq_signal_event_fn fn, void *token, void *context)
{
	struct token_reg *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&lock);
	/*
	 * Its close waited for its registrations already: a registration
	 * made after it (by a call in progress then) would come after the
	 * close, whose context the program may have freed.
	 */
	if (owner->tokens_closed || home < 0) {
		pthread_mutex_unlock(&lock);
		free(r);
		return -ENODEV;
	}
	if (drmSyncobjFDToHandle(home, sobj_fd, &r->handle)) {
		ret = -errno;
		pthread_mutex_unlock(&lock);
		free(r);
		return ret;
	}
	r->owner = owner;
	r->key_handle = key_handle;
	r->key_value = key_value;
	r->fn = fn;
	r->token = token;
	r->context = context;
	*tail = r;
	tail = &r->next;
	ring_locked();
	pthread_mutex_unlock(&lock);
	return 0;
}

bool d3dqp_dispatch_pending(const struct d3dq_device *owner,
			    uint32_t key_handle, uint64_t key_value,
			    void *token)
{
	struct token_reg *r;
	bool found = false;

	pthread_mutex_lock(&lock);
	for (r = regs; r && !found; r = r->next)
		found = r->owner == owner && r->key_handle == key_handle &&
			r->key_value == key_value && r->token == token;
	pthread_mutex_unlock(&lock);
	return found;
}

void d3dqp_dispatch_put(struct d3dq_device *owner)
{
	struct token_reg *r;
	bool join;
	pthread_t t;

	pthread_mutex_lock(&lock);
	owner->tokens_closed = true;
	for (r = regs; r;) {
		/* Called first, unless this is the thread (a callback). */
		if (r->owner != owner || on_thread_locked()) {
			if (r->owner == owner)
				r->owner = NULL;
			r = r->next;
			continue;
		}
		pthread_cond_wait(&progress, &lock);
		r = regs;
	}
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
 * state whole; the child then forgets the parent's thread, file and
 * registrations (their memory stays the child's copy of the parent's,
 * unused), and counts the fork.
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
	/* The child's descriptor of the parent's file: only that goes. */
	if (home >= 0)
		close(home);
	home = -1;
	door = 0;
	door_point = 0;
	users = 0;
	running = false;
	quit = false;
	detached = false;
	joining = false;
	/* Its waiters, if any, were threads the child does not have. */
	progress = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
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
