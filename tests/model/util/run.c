// SPDX-License-Identifier: GPL-2.0
/*
 * Run a model program against libd3dq and record what happened.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The only file of the model that uses the library, and only through its
 * public header. Phase-1 threads are a pool started together at a
 * barrier; each call is bracketed by two CLOCK_MONOTONIC reads, the
 * clock the engine's timestamps use too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <d3dq/d3dq.h>

#include "prog.h"
#include "run.h"

#define NWORKERS (M_MAXT - 1)
#define BUF_SLOTS 4096

struct runner {
	struct d3dq_device *dev;
	struct d3dq_buffer *buf;
	volatile uint64_t *map;
	pthread_t th[NWORKERS];
	pthread_barrier_t start, end;
	uint64_t guard_ns;
	bool quit;
	/* the program being run */
	const struct m_prog *p;
	struct m_log *l;
	struct d3dq_queue *q[M_MAXQ];
	struct d3dq_fence *f[M_MAXF];
	int efd[M_MAXE];
	struct d3dq_cmdlist *list[M_MAXOPS];
	_Atomic bool hang;
};

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t ev_take(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static void run_op(struct runner *r, int i)
{
	const struct m_op *o = &r->p->ops[i];
	struct m_obs *ob = &r->l->o[i];
	struct d3dq_fence *fs[M_MAXMULTI];
	struct pollfd pfd;
	int j, ret = 0;

	ob->t0 = now();
	switch (o->kind) {
	case K_CSIG:
		ret = d3dq_fence_signal(r->f[o->f], o->v);
		break;
	case K_READ:
		ob->val = d3dq_fence_get_completed_value(r->f[o->f]);
		break;
	case K_WAIT:
		ret = d3dq_fence_wait(r->f[o->f], o->v,
				      o->sure ? r->guard_ns : o->timeout_ns);
		if (o->sure && ret == -ETIMEDOUT)
			r->hang = true;
		break;
	case K_EVENT:
		ret = d3dq_fence_set_event_on_completion(r->f[o->f], o->v,
							 r->efd[o->e]);
		break;
	case K_BLOCK:
		ret = d3dq_fence_set_event_on_completion(r->f[o->f], o->v, -1);
		break;
	case K_MULTI:
	case K_MULTI_BLOCK:
		for (j = 0; j < o->n; j++)
			fs[j] = r->f[o->mf[j]];
		ret = d3dq_device_set_event_on_multiple_fence_completion(
			r->dev, fs, o->mv, o->n,
			o->any ? D3DQ_MULTIPLE_FENCE_WAIT_ANY :
				 D3DQ_MULTIPLE_FENCE_WAIT_ALL,
			o->kind == K_MULTI ? r->efd[o->e] : -1);
		break;
	case K_EVWAIT:
		pfd.fd = r->efd[o->e];
		pfd.events = POLLIN;
		poll(&pfd, 1, (int)(o->timeout_ns / 1000000));
		/* fall through */
	case K_EVREAD:
		ob->val = ev_take(r->efd[o->e]);
		break;
	case K_EVCLOSE:
		close(r->efd[o->e]);
		r->efd[o->e] = -1;
		r->efd[o->e2] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		break;
	case K_QSIG:
		ret = d3dq_queue_signal(r->q[o->q], r->f[o->f], o->v);
		break;
	case K_QWAIT:
		ret = d3dq_queue_wait(r->q[o->q], r->f[o->f], o->v);
		break;
	case K_EXEC:
		ret = d3dq_queue_execute(r->q[o->q], &r->list[i], 1);
		break;
	case K_CPUWRITE:
		atomic_store((_Atomic uint64_t *)&r->map[o->slot], o->tag);
		atomic_thread_fence(memory_order_seq_cst);
		break;
	case K_DESTROY:
		d3dq_fence_destroy(r->f[o->f]);
		r->f[o->f] = NULL;
		break;
	case K_REMOVE:
		ret = d3dq_device_remove(r->dev);
		break;
	}
	ob->t1 = now();
	ob->ret = ret;
}

static void run_thread_ops(struct runner *r, int t)
{
	int i;

	for (i = 0; i < r->p->nops; i++)
		if (r->p->ops[i].thread == t)
			run_op(r, i);
}

static void *worker(void *arg)
{
	struct runner *r = ((void **)arg)[0];
	int id = (int)(intptr_t)((void **)arg)[1];

	free(arg);
	for (;;) {
		pthread_barrier_wait(&r->start);
		if (r->quit)
			return NULL;
		if (id < r->p->nthreads)
			run_thread_ops(r, id);
		pthread_barrier_wait(&r->end);
	}
}

static int open_device(struct runner *r)
{
	int ret = d3dq_device_open(NULL, &r->dev);

	if (ret)
		return ret;
	ret = d3dq_buffer_create(r->dev, BUF_SLOTS * 8, &r->buf);
	if (ret)
		return ret;
	r->map = d3dq_buffer_map(r->buf);
	return r->map ? 0 : -ENOMEM;
}

static void close_device(struct runner *r)
{
	d3dq_buffer_destroy(r->buf);
	d3dq_device_close(r->dev);
	r->buf = NULL;
	r->dev = NULL;
	r->map = NULL;
}

int run_open(struct runner **out, uint64_t guard_ns)
{
	struct runner *r = calloc(1, sizeof(*r));
	int i, ret;

	if (!r)
		return -ENOMEM;
	r->guard_ns = guard_ns;
	ret = open_device(r);
	if (ret) {
		close_device(r);
		free(r);
		return ret;
	}
	pthread_barrier_init(&r->start, NULL, NWORKERS + 1);
	pthread_barrier_init(&r->end, NULL, NWORKERS + 1);
	for (i = 0; i < NWORKERS; i++) {
		void **arg = malloc(2 * sizeof(void *));

		arg[0] = r;
		arg[1] = (void *)(intptr_t)i;
		pthread_create(&r->th[i], NULL, worker, arg);
	}
	*out = r;
	return 0;
}

void run_close(struct runner *r)
{
	int i;

	if (!r)
		return;
	r->quit = true;
	pthread_barrier_wait(&r->start);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(r->th[i], NULL);
	pthread_barrier_destroy(&r->start);
	pthread_barrier_destroy(&r->end);
	close_device(r);
	free(r);
}

static int record(struct d3dq_cmdlist *l, const struct m_op *o,
		  const struct m_prog *p, struct d3dq_buffer *b)
{
	uint64_t s = o->slot * 8ull;
	int ret;

	ret = d3dq_cmdlist_timestamp(l, b, s);
	if (!ret && o->delay_ns)
		ret = d3dq_cmdlist_delay(l, o->delay_ns);
	if (!ret && o->src_kind) {
		const struct m_op *src = &p->ops[o->src];

		ret = d3dq_cmdlist_copy(l, b, s + 8, b,
					src->kind == K_EXEC ? src->slot * 8ull + 16 :
					src->slot * 8ull, 8);
		if (!ret && o->cas)
			ret = d3dq_cmdlist_compare_store64(l, b, s + 8, src->tag,
							   src->tag | M_CASMARK);
	}
	if (!ret)
		ret = o->tag_cas ?
		      d3dq_cmdlist_compare_store64(l, b, s + 16, 0, o->tag) :
		      d3dq_cmdlist_write64(l, b, s + 16, o->tag);
	if (!ret)
		ret = d3dq_cmdlist_timestamp(l, b, s + 24);
	if (!ret)
		ret = d3dq_cmdlist_close(l);
	return ret;
}

int run_program(struct runner *r, const struct m_prog *p, struct m_log *l)
{
	static const struct d3dq_queue_desc desc = { D3DQ_QUEUE_DIRECT, 0, 0 };
	bool removed = false;
	int i, ret = 0;

	memset(l, 0, sizeof(*l));
	if (!r->dev) {
		ret = open_device(r);
		if (ret)
			goto out;
	}
	r->p = p;
	r->l = l;
	r->hang = false;
	memset(r->q, 0, sizeof(r->q));
	memset(r->f, 0, sizeof(r->f));
	memset(r->list, 0, sizeof(r->list));
	for (i = 0; i < M_MAXE; i++)
		r->efd[i] = -1;
	if (p->nslots > BUF_SLOTS) {
		ret = -E2BIG;
		goto out;
	}
	for (i = 0; i < p->nslots; i++)
		r->map[i] = 0;

	for (i = 0; i < p->nqueues && !ret; i++)
		ret = d3dq_queue_create(r->dev, &desc, &r->q[i]);
	for (i = 0; i < p->nfences && !ret; i++)
		ret = d3dq_fence_create(r->dev, p->finit[i], 0, &r->f[i]);
	for (i = 0; i < p->nefds && !ret; i++) {
		if (!p->eopen[i])
			continue;
		r->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (r->efd[i] < 0)
			ret = -errno;
	}
	for (i = 0; i < p->nops && !ret; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->kind == K_REMOVE)
			removed = true;
		if (o->kind != K_EXEC)
			continue;
		ret = d3dq_cmdlist_create(r->dev, &r->list[i]);
		if (!ret)
			ret = record(r->list[i], o, p, r->buf);
	}
	if (ret)
		goto out;

	/* Phase 1 on the pool, phase 2 here. */
	pthread_barrier_wait(&r->start);
	pthread_barrier_wait(&r->end);
	run_thread_ops(r, p->nthreads);

	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		struct m_obs *ob = &l->o[i];

		if (o->kind != K_EXEC)
			continue;
		ob->ts0 = r->map[o->slot];
		ob->obs = r->map[o->slot + 1];
		ob->tag = r->map[o->slot + 2];
		ob->ts1 = r->map[o->slot + 3];
	}
	l->hang = r->hang;

out:
	for (i = 0; i < M_MAXOPS; i++)
		d3dq_cmdlist_destroy(r->list[i]);
	for (i = 0; i < M_MAXF; i++)
		d3dq_fence_destroy(r->f[i]);
	for (i = 0; i < M_MAXQ; i++)
		d3dq_queue_destroy(r->q[i]);
	for (i = 0; i < M_MAXE; i++)
		if (r->efd[i] >= 0)
			close(r->efd[i]);
	if (removed && r->dev)
		close_device(r);
	return ret;
}
