// SPDX-License-Identifier: MIT
/*
 * libd3dq: the dispatcher, the one thread that calls the signal_event
 * callbacks of devices opened with one (d3dq_device_open_desc()).
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Firing an event of such a device (fence.c, under the fence's lock)
 * hands the item its registration allocated to the dispatcher. So the
 * program's callback never runs under a library lock, nor inside the
 * call that fired it (a CPU signal, a release, a removal): it may call
 * the library itself (signal a fence, read a value, register an event)
 * and may block, which delays only the callbacks after it. Items are
 * called in the order they were handed over, each once.
 *
 * The thread exists while at least one such device is open: the first
 * one starts it, the last one's close stops it once it has called every
 * item, and joins it. Closing any of them first waits until the items
 * handed over before are called, so that no callback of a device comes
 * after its close returned, unless the close runs inside a callback: the
 * items then wait for the callback to return (the thread cannot wait for
 * itself), and the thread, if it was the last device's, is detached and
 * ends once they are called. A device opened before it ended keeps it.
 *
 * One lock, the innermost of the library: taken alone or inside any
 * other, never across a callback or a system call other than starting
 * the thread. This file calls nothing else of the library.
 */
#include <signal.h>
#include <stdlib.h>

#include "internal.h"

struct dispatch_item {
	struct dispatch_item *next;
	d3dq_signal_event_fn fn;
	void *token;
	void *context;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;	/* items, or quit */
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER; /* calls, end */
static struct dispatch_item *head, *tail;
static uint64_t pushed, called;
static unsigned int users;		/* devices with a callback */
static bool running;			/* the thread has not ended */
static bool quit;			/* end once the list is empty */
static bool detached;			/* stopped from inside a callback */
static bool joining;			/* someone joins it */
static pthread_t thread;

struct dispatch_item *dispatch_item_new(d3dq_signal_event_fn fn,
					void *token, void *context)
{
	struct dispatch_item *it = malloc(sizeof(*it));

	if (!it)
		return NULL;
	it->next = NULL;
	it->fn = fn;
	it->token = token;
	it->context = context;
	return it;
}

void dispatch_item_free(struct dispatch_item *it)
{
	free(it);
}

void dispatch_push(struct dispatch_item *it)
{
	pthread_mutex_lock(&lock);
	it->next = NULL;
	if (tail)
		tail->next = it;
	else
		head = it;
	tail = it;
	pushed++;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
}

static void *dispatch_main(void *arg)
{
	struct dispatch_item *it;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		it = head;
		if (!it) {
			if (quit)
				break;
			pthread_cond_wait(&work, &lock);
			continue;
		}
		head = it->next;
		if (!head)
			tail = NULL;
		pthread_mutex_unlock(&lock);
		it->fn(it->token, it->context);
		free(it);
		pthread_mutex_lock(&lock);
		called++;
		pthread_cond_broadcast(&progress);
	}
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

int dispatch_get(void)
{
	sigset_t all, old;
	int ret = 0;

	pthread_mutex_lock(&lock);
	/* A last close waits for the thread to end: let it. */
	while (joining && !on_thread_locked())
		pthread_cond_wait(&progress, &lock);
	if (!running) {
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
		/* A thread told to end (the list not empty yet) goes on. */
		quit = false;
		users++;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void dispatch_put(void)
{
	bool join;
	uint64_t upto;
	pthread_t t;

	pthread_mutex_lock(&lock);
	upto = pushed;
	if (!on_thread_locked())
		while (called < upto)
			pthread_cond_wait(&progress, &lock);
	if (--users) {
		pthread_mutex_unlock(&lock);
		return;
	}
	quit = true;
	pthread_cond_signal(&work);
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
