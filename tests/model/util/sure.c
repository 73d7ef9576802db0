// SPDX-License-Identifier: GPL-2.0
/*
 * Which waits of a program are certain to be satisfied, by the rules
 * alone, whatever the timing: a conservative (least fixpoint) analysis.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Blocking calls without a timeout (K_BLOCK, K_MULTI_BLOCK) are only
 * kept when their condition is certain, so that a program cannot hang on
 * a correct library; a K_WAIT the generator wants "sure" (timeout
 * M_MAX) gets the runner's guard timeout when certain, and its timing
 * out is then reported as a hang (a liveness failure), or a short
 * timeout otherwise. Nothing relies on the lenient corners of the model
 * (R9 with a rewind in between): a wait is certain when the fence's
 * signals from then on can only leave it >= v, or (a queue wait, R6) when
 * a signal of v or more surely takes effect after the wait was queued.
 * R4: queue signals of one fence on different queues take effect in the
 * order their work completes, whatever the order of their calls.
 */
#include <string.h>

#include "prog.h"

struct facts {
	bool called[M_MAXOPS];	/* the call surely happens */
	bool passed[M_MAXOPS];	/* queue op: the engine surely passes it */
	bool sat[M_MAXOPS];	/* wait: surely satisfied */
	int writer[M_MAXF];	/* the only thread signalling f, or -1/-2 */
	int qthread[M_MAXQ];	/* the only thread using q, or -2 */
};

static bool is_signal(const struct m_op *o)
{
	return o->kind == K_CSIG || o->kind == K_QSIG;
}

/*
 * Does process @proc remove its device? Its signals may then be refused
 * or dropped, which releases its own waiters but not another process's:
 * a removal leaves the other holders of a shared fence as they are (R15,
 * R20), so their waits must not count on the removed one's signals.
 */
static bool removes(const struct m_prog *p, int proc)
{
	int i;

	for (i = 0; i < p->nops; i++)
		if (p->ops[i].kind == K_REMOVE && !p->ops[i].phase2 &&
		    op_proc(p, &p->ops[i]) == proc)
			return true;
	return false;
}

/* May waiter @w count on signal @i of its fence? */
static bool counts(const struct m_prog *p, int w, int i)
{
	int ps = op_proc(p, &p->ops[i]);

	return ps == op_proc(p, &p->ops[w]) || !removes(p, ps);
}

/* Calls that hold their thread until their condition holds. */
static bool blocks(const struct m_op *o)
{
	return o->kind == K_BLOCK || o->kind == K_MULTI_BLOCK;
}

/*
 * A wait the generator wants certain counts as holding its thread too
 * (it would, until the guard timeout): what its thread does after it
 * cannot be what satisfies it, nor another certain wait it depends on.
 */
static bool holds(const struct m_op *o)
{
	return blocks(o) || (o->kind == K_WAIT &&
			     (o->sure || o->timeout_ns == M_MAX));
}

/* Does signal @l surely take effect? */
static bool takes_effect(const struct m_prog *p, const struct facts *fa, int l)
{
	return p->ops[l].kind == K_QSIG ? fa->passed[l] : fa->called[l];
}

/*
 * May signal @y (of the same fence, made by the same thread before @l)
 * take effect after signal @l? A CPU signal takes effect at its call; a
 * queue signal on @l's queue before it, before it (queue order); any
 * other queue signal whenever its work completes (R4).
 */
static bool may_follow(const struct m_prog *p, int y, int l)
{
	const struct m_op *Y = &p->ops[y], *L = &p->ops[l];

	if (Y->kind == K_CSIG)
		return false;
	return !(L->kind == K_QSIG && L->q == Y->q);
}

/*
 * Once signal @l of @f and the signals of @f before it have taken effect,
 * is f >= v, whichever of them completes last?
 */
static bool stays(const struct m_prog *p, int f, int l, uint64_t v)
{
	int i;

	if (p->ops[l].v < v)
		return false;
	for (i = 0; i < l; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->phase2 || !is_signal(o) || o->f != f)
			continue;
		if (may_follow(p, i, l) && o->v < v)
			return false;
	}
	return true;
}

/*
 * Is f >= v certain at some moment after op w is called, and for good
 * (so that even a waiter that looks late sees it)? @blocking: w's
 * thread does nothing until the wait returns.
 */
static bool value_sure(const struct m_prog *p, const struct facts *fa,
		       int w, int f, uint64_t v, bool blocking)
{
	int t = p->ops[w].thread, i, last = -1, final = -1;
	bool later = false;

	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->phase2)
			continue;
		if (o->kind == K_DESTROY && o->f == f && fa->called[i])
			return true;
		/*
		 * A removal releases its own process, and only that one
		 * (R20: another process keeps the real value of a shared
		 * fence and its waits stay pending).
		 */
		if (o->kind == K_REMOVE && fa->called[i] &&
		    op_proc(p, o) == p->tproc[t])
			return true;
	}
	if (fa->writer[f] == -1)	/* never signalled: its initial value */
		return p->finit[f] >= v;
	/* A shared fence goes down like any other (R20): no special case. */
	if (fa->writer[f] < 0)
		return false;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->phase2 || !is_signal(o) || o->f != f)
			continue;
		if (!counts(p, w, i))
			return false;
		final = i;
		if (i < w)
			last = i;
		else if (o->thread == t)
			later = true;
	}
	/*
	 * C1: the last signal of all, once every signal has taken effect:
	 * what may take effect after it (R4: a queue signal of another
	 * queue, whenever its work completes) must leave f >= v too.
	 */
	if (final >= 0 && takes_effect(p, fa, final) &&
	    stays(p, f, final, v))
		return true;
	/*
	 * C3 (a queue wait, satisfied for good once f >= v at any moment
	 * after it was queued, R6): a signal of v or more that the writer
	 * makes after queueing the wait, and that surely takes effect.
	 */
	if (!blocking && fa->writer[f] == t) {
		for (i = w + 1; i < p->nops; i++) {
			const struct m_op *o = &p->ops[i];

			if (!o->phase2 && is_signal(o) && o->f == f &&
			    o->v >= v && takes_effect(p, fa, i))
				return true;
		}
	}
	/*
	 * C2: the waiter is the writer and signals nothing else meanwhile:
	 * the last signal before the wait decides, with what may take
	 * effect after it.
	 */
	if (fa->writer[f] != t || (!blocking && later))
		return false;
	if (last < 0)
		return p->finit[f] >= v && !later;
	return takes_effect(p, fa, last) && stays(p, f, last, v);
}

static bool wait_sure(const struct m_prog *p, const struct facts *fa, int i)
{
	const struct m_op *o = &p->ops[i];
	bool blocking = o->kind != K_QWAIT;
	int j, n = 0;

	switch (o->kind) {
	case K_QWAIT:
	case K_WAIT:
	case K_BLOCK:
		return value_sure(p, fa, i, o->f, o->v, blocking);
	case K_MULTI_BLOCK:
		for (j = 0; j < o->n; j++)
			n += value_sure(p, fa, i, o->mf[j], o->mv[j], true);
		return o->any ? n > 0 : n == o->n;
	}
	return false;
}

static void analyse(const struct m_prog *p, struct facts *fa)
{
	int i, t;
	bool changed = true;

	memset(fa, 0, sizeof(*fa));
	for (i = 0; i < M_MAXF; i++)
		fa->writer[i] = -1;
	for (i = 0; i < M_MAXQ; i++)
		fa->qthread[i] = -1;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->phase2)
			continue;
		if (is_signal(o))
			fa->writer[o->f] = fa->writer[o->f] == -1 ||
					   fa->writer[o->f] == o->thread ?
					   o->thread : -2;
		if (o->kind == K_QSIG || o->kind == K_QWAIT || o->kind == K_EXEC)
			fa->qthread[o->q] = fa->qthread[o->q] == -1 ||
					    fa->qthread[o->q] == o->thread ?
					    o->thread : -2;
	}

	while (changed) {
		changed = false;
		for (t = 0; t < p->nthreads; t++) {
			bool go = true;

			for (i = 0; i < p->nops && go; i++) {
				const struct m_op *o = &p->ops[i];

				if (o->phase2 || o->thread != t)
					continue;
				if (!fa->called[i])
					changed = fa->called[i] = true;
				if (holds(o) && !fa->sat[i])
					go = false;
			}
		}
		for (i = 0; i < p->nops; i++) {
			const struct m_op *o = &p->ops[i];
			bool s;

			if (o->phase2)
				continue;
			if (o->kind == K_QWAIT || holds(o)) {
				s = wait_sure(p, fa, i);
				if (s && !fa->sat[i])
					changed = fa->sat[i] = true;
			}
		}
		for (i = 0; i < p->nops; i++) {
			const struct m_op *o = &p->ops[i];
			int j, prev = -1;
			bool s;

			if (o->phase2 || (o->kind != K_QSIG && o->kind != K_QWAIT &&
					  o->kind != K_EXEC))
				continue;
			if (fa->qthread[o->q] < 0 || !fa->called[i])
				continue;
			for (j = 0; j < i; j++)
				if (!p->ops[j].phase2 &&
				    (p->ops[j].kind == K_QSIG ||
				     p->ops[j].kind == K_QWAIT ||
				     p->ops[j].kind == K_EXEC) &&
				    p->ops[j].q == o->q)
					prev = j;
			s = (prev < 0 || fa->passed[prev]) &&
			    (o->kind != K_QWAIT || fa->sat[i]);
			if (s && !fa->passed[i])
				changed = fa->passed[i] = true;
		}
	}
}

int prog_sure(struct m_prog *p)
{
	struct facts fa;
	int i, converted;

	do {
		converted = 0;
		analyse(p, &fa);
		for (i = 0; i < p->nops; i++) {
			struct m_op *o = &p->ops[i];

			if (o->phase2)
				continue;
			if (blocks(o) && !fa.sat[i]) {
				/* Not certain: wait for a while instead. */
				if (o->kind == K_MULTI_BLOCK) {
					o->f = o->mf[0];
					o->v = o->mv[0];
				}
				o->kind = K_WAIT;
				o->timeout_ns = 20000000;
				o->sure = false;
				converted++;
			}
			if (o->kind == K_WAIT && (o->sure || o->timeout_ns == M_MAX)) {
				o->sure = fa.sat[i];
				if (!o->sure) {
					o->timeout_ns = 20000000;
					converted++;
				}
			}
		}
	} while (converted);

	/* Queues whose every operation surely passes: drain them first. */
	p->qsure = 0;
	for (i = 0; i < p->nqueues; i++) {
		bool all = fa.qthread[i] != -2;

		for (int j = 0; j < p->nops && all; j++)
			if (!p->ops[j].phase2 && p->ops[j].q == i &&
			    (p->ops[j].kind == K_QSIG || p->ops[j].kind == K_QWAIT ||
			     p->ops[j].kind == K_EXEC))
				all = fa.passed[j];
		/* a removal stops the engine: nothing is certain then */
		for (int j = 0; j < p->nops && all; j++)
			if (p->ops[j].kind == K_REMOVE)
				all = false;
		if (all)
			p->qsure |= 1u << i;
	}
	prog_finish(p);
	return 0;
}
