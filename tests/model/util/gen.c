// SPDX-License-Identifier: GPL-2.0
/*
 * Random programs for the reference model.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Small programs: 1-3 threads, 1-3 queues, 1-3 fences, a handful of
 * operations each, engine delays to shuffle completion order. Every fence
 * is signalled by one thread (so the R4 order is that thread's program
 * order, and certainty of waits can be decided statically, see sure.c);
 * every queue is fed by one thread. Some programs start from a scenario
 * (a causality chain with a rewind, signals of one fence completing out
 * of call order, a pipeline queued consumers first, a signal-order chain,
 * a ping-pong, a first read long after a signal completed, ...) and
 * continue at random.
 */
#include <string.h>

#include "prog.h"

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct gen {
	struct m_prog *p;
	const struct m_genopts *opt;
	uint64_t rng;
	int writer[M_MAXF];
	uint64_t cur[M_MAXF];
	uint64_t used[M_MAXF][24];
	int nused[M_MAXF];
	bool fdead[M_MAXF];
	int qowner[M_MAXQ];
	int efd_thread[M_MAXE];	/* -1 free, -2 several threads */
	int efd_proc[M_MAXE];
	bool edead[M_MAXE];
	int budget;
	bool removed;
};

static uint64_t rnd(struct gen *g, uint64_t n)
{
	return n ? rng_next(&g->rng) % n : 0;
}

static bool chance(struct gen *g, int percent)
{
	return (int)rnd(g, 100) < percent;
}

static struct m_op *add(struct gen *g, int t, int kind)
{
	struct m_prog *p = g->p;
	struct m_op *o;

	if (g->budget <= 0 || p->nops >= M_MAXOPS - 24)
		return NULL;
	g->budget--;
	o = &p->ops[p->nops++];
	memset(o, 0, sizeof(*o));
	o->thread = t;
	o->kind = kind;
	return o;
}

static void note_value(struct gen *g, int f, uint64_t v)
{
	int i;

	for (i = 0; i < g->nused[f]; i++)
		if (g->used[f][i] == v)
			return;
	if (g->nused[f] < 24)
		g->used[f][g->nused[f]++] = v;
}

/* A value for the writer's next signal of f. */
static uint64_t next_value(struct gen *g, int f)
{
	uint64_t c = g->cur[f], v;
	int r = rnd(g, 100);

	if (r < 60)
		v = c + 1 + rnd(g, 3);
	else if (r < 66)
		v = c;
	else if (r < 84)
		v = chance(g, 50) ? 0 : (c > 3 ? c - 1 - rnd(g, 3) : 0);
	else if (r < 94)
		v = c + (1ull << 33) + rnd(g, 5);
	else if (r < 97)
		v = M_MAX;
	else
		v = rnd(g, 8);
	if (v == M_MAX && c == M_MAX)
		v = rnd(g, 5);
	g->cur[f] = v;
	note_value(g, f, v);
	return v;
}

/* A value to wait for on f: one it takes, or might take, or near one. */
static uint64_t wait_value(struct gen *g, int f)
{
	uint64_t v;

	if (!g->nused[f] || chance(g, 10))
		return g->cur[f] + rnd(g, 3);
	v = g->used[f][rnd(g, g->nused[f])];
	if (chance(g, 15) && v < M_MAX)
		v++;
	else if (chance(g, 10) && v > 0)
		v--;
	return v;
}

/* Can thread t use fence f? Non-shared fences stay in one process. */
static bool reachable(struct gen *g, int t, int f)
{
	struct m_prog *p = g->p;

	return !g->fdead[f] && (p->fshared[f] ||
				p->tproc[g->writer[f]] == p->tproc[t]);
}

static int live_fence_for(struct gen *g, int t)
{
	int n = g->p->nuser_fences, f = rnd(g, n), i;

	for (i = 0; i < n; i++, f = (f + 1) % n)
		if (reachable(g, t, f))
			return f;
	return -1;
}

/* A fence thread t may signal (it is the writer), or -1. */
static int own_fence(struct gen *g, int t)
{
	int n = g->p->nuser_fences, f = rnd(g, n), i;

	for (i = 0; i < n; i++, f = (f + 1) % n)
		if (!g->fdead[f] && g->writer[f] == t)
			return f;
	return -1;
}

static int own_queue(struct gen *g, int t)
{
	int n = g->p->nqueues, q = rnd(g, n), i;

	for (i = 0; i < n; i++, q = (q + 1) % n)
		if (g->qowner[q] == t)
			return q;
	return -1;
}

static int efd_new(struct gen *g, int t)
{
	struct m_prog *p = g->p;

	if (p->nefds >= M_MAXE)
		return -1;
	p->eopen[p->nefds] = true;
	g->efd_thread[p->nefds] = t;
	g->efd_proc[p->nefds] = p->tproc[t];
	return p->nefds++;
}

/* Slots made by an evclose belong to its thread. */
static bool efd_usable(struct gen *g, int e, int t)
{
	struct m_prog *p = g->p;

	return !g->edead[e] && (p->eopen[e] || g->efd_thread[e] == t) &&
	       g->efd_proc[e] == p->tproc[t];
}

static void efd_use(struct gen *g, int e, int t)
{
	if (g->efd_thread[e] != t)
		g->efd_thread[e] = -2;
}

/* An eventfd for a registration by t: mostly a new one. */
static int efd_for(struct gen *g, int t)
{
	struct m_prog *p = g->p;
	int e;

	if (p->nefds && chance(g, 30)) {
		e = rnd(g, p->nefds);
		if (efd_usable(g, e, t)) {
			efd_use(g, e, t);
			return e;
		}
	}
	e = efd_new(g, t);
	if (e < 0) {
		for (e = 0; e < p->nefds; e++)
			if (efd_usable(g, e, t)) {
				efd_use(g, e, t);
				return e;
			}
	}
	return e;
}

static int any_efd(struct gen *g, int t)
{
	int n = g->p->nefds, e, i;

	if (!n)
		return -1;
	e = rnd(g, n);
	for (i = 0; i < n; i++, e = (e + 1) % n)
		if (efd_usable(g, e, t)) {
			efd_use(g, e, t);
			return e;
		}
	return -1;
}

static uint64_t wait_timeout(struct gen *g)
{
	int r = rnd(g, 100);

	if (r < 20)
		return 0;
	if (r < 40)
		return 1000000;
	if (r < 55)
		return 5000000;
	return M_MAX;	/* sure if certain (sure.c), else 20 ms */
}

static void gen_exec(struct gen *g, int t, int q)
{
	struct m_prog *p = g->p;
	struct m_op *o = add(g, t, K_EXEC);
	int r, i, cand[M_MAXOPS], n = 0;

	if (!o)
		return;
	o->q = q;
	r = rnd(g, 100);
	if (r < 40)
		o->delay_ns = 0;
	else if (r < 70)
		o->delay_ns = 100000 + rnd(g, 400000);
	else
		o->delay_ns = 1000000 + rnd(g, 3000000);
	for (i = 0; i + 1 < p->nops; i++)
		if ((p->ops[i].kind == K_EXEC || p->ops[i].kind == K_CPUWRITE) &&
		    p->tproc[p->ops[i].thread] == p->tproc[t])
			cand[n++] = i;
	if (n && chance(g, 55)) {
		i = cand[rnd(g, n)];
		o->src = i;
		o->src_kind = p->ops[i].kind == K_EXEC ? SRC_EXEC : SRC_CPU;
		o->cas = chance(g, 30);
	}
	o->tag_cas = chance(g, 25);
}

static bool uses_fence(const struct m_op *o, int f)
{
	int k;

	switch (o->kind) {
	case K_MULTI:
	case K_MULTI_BLOCK:
		for (k = 0; k < o->n; k++)
			if (o->mf[k] == f)
				return true;
		return false;
	case K_CSIG: case K_READ: case K_WAIT: case K_EVENT: case K_BLOCK:
	case K_QSIG: case K_QWAIT: case K_DESTROY:
		return o->f == f;
	}
	return false;
}

static void gen_op(struct gen *g, int t)
{
	struct m_prog *p = g->p;
	struct m_op *o;
	int f = live_fence_for(g, t), q = own_queue(g, t), wf = own_fence(g, t);
	int r, e, j;

	if (f < 0)
		return;
	r = rnd(g, 100);
	if (r < 14 && wf >= 0) {
		if (q >= 0 && chance(g, 70)) {
			o = add(g, t, K_QSIG);
			if (o) {
				o->q = q;
				o->f = wf;
				o->v = next_value(g, wf);
			}
		} else if ((o = add(g, t, K_CSIG))) {
			o->f = wf;
			o->v = next_value(g, wf);
		}
	} else if (r < 28 && q >= 0) {
		if ((o = add(g, t, K_QWAIT))) {
			o->q = q;
			o->f = f;
			o->v = wait_value(g, f);
		}
	} else if (r < 42 && q >= 0) {
		gen_exec(g, t, q);
	} else if (r < 52) {
		if ((o = add(g, t, K_READ)))
			o->f = f;
	} else if (r < 62) {
		if ((o = add(g, t, K_WAIT))) {
			o->f = f;
			o->v = wait_value(g, f);
			o->timeout_ns = wait_timeout(g);
		}
	} else if (r < 69) {
		e = efd_for(g, t);
		if (e >= 0 && (o = add(g, t, K_EVENT))) {
			o->f = f;
			o->v = wait_value(g, f);
			o->e = e;
			/* sometimes the same (event, value) twice (R10) */
			if (chance(g, 25) && (o = add(g, t, K_EVENT))) {
				o[0] = o[-1];
			}
		}
	} else if (r < 77) {
		e = any_efd(g, t);
		if (e >= 0 && (o = add(g, t, chance(g, 60) ? K_EVREAD : K_EVWAIT))) {
			o->e = e;
			o->timeout_ns = chance(g, 50) ? 1000000 : 5000000;
		}
	} else if (r < 82) {
		int kind = chance(g, 75) ? K_MULTI : K_MULTI_BLOCK;

		e = kind == K_MULTI ? efd_for(g, t) : 0;
		if (e >= 0 && (o = add(g, t, kind))) {
			o->any = chance(g, 50);
			o->n = 1 + rnd(g, M_MAXMULTI);
			for (j = 0; j < o->n; j++) {
				o->mf[j] = live_fence_for(g, t);
				o->mv[j] = wait_value(g, o->mf[j]);
			}
			o->e = e;
		}
	} else if (r < 85) {
		if ((o = add(g, t, K_BLOCK))) {
			o->f = f;
			o->v = wait_value(g, f);
		}
	} else if (r < 89) {
		if ((o = add(g, t, K_CPUWRITE)))
			o->v = 0;
	} else if (r < 92 && g->opt->evclose) {
		/* close an eventfd only t uses, then open one (same number) */
		for (e = 0; e < p->nefds; e++)
			if (!g->edead[e] && g->efd_thread[e] == t)
				break;
		if (e < p->nefds && p->nefds < M_MAXE &&
		    (o = add(g, t, K_EVCLOSE))) {
			o->e = e;
			g->edead[e] = true;
			o->e2 = efd_new(g, t);
			p->eopen[o->e2] = false;
		}
	} else if (r < 94 && g->opt->destroy && wf >= 0) {
		/* only a fence no other thread uses */
		for (j = 0; j < p->nops; j++)
			if (uses_fence(&p->ops[j], wf) && p->ops[j].thread != t)
				break;
		if (j == p->nops && (o = add(g, t, K_DESTROY))) {
			o->f = wf;
			g->fdead[wf] = true;
		}
	} else if (r < 96 && g->opt->removal && !g->removed) {
		if (add(g, t, K_REMOVE))
			g->removed = true;
	} else if (q >= 0) {
		gen_exec(g, t, q);
	}
}

/*
 * Scenario: the causality chain of issue 10 (R17). Queue A signals F=a,
 * later F=a+1 after long work; the CPU waits for F>=a and rewinds F;
 * queue B waits for F>=a (only A's pending a+1 can satisfy it) and
 * signals G; the CPU waits for G and reads F, which must be a+1.
 */
static void scen_causal(struct gen *g, int t, int qa, int qb, int f, int gf)
{
	struct m_op *o;
	uint64_t a = g->cur[f] + 1 + rnd(g, 5);

	gen_exec(g, t, qa);
	if ((o = add(g, t, K_QSIG))) {
		o->q = qa, o->f = f, o->v = a;
	}
	if ((o = add(g, t, K_EXEC))) {
		o->q = qa;
		o->delay_ns = 1000000 + rnd(g, 3000000);
	}
	if ((o = add(g, t, K_QSIG))) {
		o->q = qa, o->f = f, o->v = a + 1;
	}
	if ((o = add(g, t, K_WAIT))) {
		o->f = f, o->v = a, o->timeout_ns = M_MAX;
	}
	if ((o = add(g, t, K_CSIG))) {
		o->f = f, o->v = chance(g, 70) ? 0 : a - 1;
	}
	if ((o = add(g, t, K_QWAIT))) {
		o->q = qb, o->f = f, o->v = a;
	}
	if (chance(g, 50))
		gen_exec(g, t, qb);
	if ((o = add(g, t, K_QSIG))) {
		o->q = qb, o->f = gf, o->v = g->cur[gf] + 1;
	}
	if ((o = add(g, t, K_WAIT))) {
		o->f = gf, o->v = g->cur[gf] + 1, o->timeout_ns = 200000000;
	}
	g->cur[gf]++;
	note_value(g, gf, g->cur[gf]);
	if ((o = add(g, t, K_READ)))
		o->f = f;
	g->cur[f] = a + 1;
	note_value(g, f, a);
	note_value(g, f, a + 1);
}

/*
 * Scenario: R4 and R18. A slow signal of a high value on A, a quick
 * later-submitted signal of a lower value on B (each takes effect when
 * its work completes: A's last, if it is slower), then a wait for the
 * high value on C, work and a signal of G behind it, and the CPU waiting
 * a while for G: C may pass its wait only once the fence really took a
 * value that high. A signal of G on A after the high value, waited for,
 * makes A's high value take effect before that (R17), so an early pass
 * cannot hide behind phase 2.
 */
static void scen_discard(struct gen *g, int t, int qa, int qb, int qc, int f,
			 int gf)
{
	struct m_op *o;
	uint64_t hi = g->cur[f] + 3 + rnd(g, 3), lo = hi - 1 - rnd(g, 2);

	if ((o = add(g, t, K_EXEC))) {
		o->q = qa;
		o->delay_ns = 500000 + rnd(g, 3000000);
	}
	if ((o = add(g, t, K_QSIG))) {
		o->q = qa, o->f = f, o->v = hi;
	}
	if (chance(g, 50) && (o = add(g, t, K_QSIG))) {
		o->q = qa, o->f = gf, o->v = ++g->cur[gf];
		note_value(g, gf, g->cur[gf]);
	}
	if ((o = add(g, t, K_QSIG))) {
		o->q = qb, o->f = f, o->v = lo;
	}
	if (chance(g, 50) && (o = add(g, t, K_READ)))
		o->f = f;
	if ((o = add(g, t, K_QWAIT))) {
		o->q = qc, o->f = f, o->v = hi;
	}
	gen_exec(g, t, qc);
	if ((o = add(g, t, K_QSIG))) {
		o->q = qc, o->f = gf, o->v = ++g->cur[gf];
		note_value(g, gf, g->cur[gf]);
	}
	if ((o = add(g, t, K_WAIT))) {
		o->f = gf, o->v = g->cur[gf], o->timeout_ns = 50000000;
	}
	g->cur[f] = lo;
	note_value(g, f, hi);
	note_value(g, f, lo);
}

/*
 * Scenario: CPU signals racing a device removal on another thread (R15):
 * a signal that returned 0 must not survive the removal.
 */
static void scen_removal(struct gen *g, int ts, int tr, int f)
{
	struct m_op *o;
	int i, n = 8 + rnd(g, 24);

	/* a burst that spans the removal call */
	g->budget += n;
	for (i = 0; i < n; i++)
		if ((o = add(g, ts, K_CSIG))) {
			o->f = f;
			o->v = next_value(g, f);
		}
	if (add(g, tr, K_REMOVE))
		g->removed = true;
	if ((o = add(g, ts, K_READ)))
		o->f = f;
}

/*
 * Scenario: a shared fence with a queue signal held back behind a wait
 * that only phase 2 satisfies, and CPU signals of the same value and of a
 * higher one (issue 10 defect 3): a CPU signal that returns 0 takes
 * effect at once, and the timeline never goes back.
 */
static void scen_shared(struct gen *g, int t, int q, int f, int gf)
{
	struct m_op *o;
	uint64_t v = g->cur[f] + 1 + rnd(g, 3);

	g->p->fshared[f] = true;
	if ((o = add(g, t, K_QWAIT))) {
		o->q = q, o->f = gf, o->v = g->cur[gf] + 1000;
	}
	if ((o = add(g, t, K_QSIG))) {
		o->q = q, o->f = f, o->v = v;
	}
	if ((o = add(g, t, K_CSIG))) {
		o->f = f, o->v = chance(g, 50) ? v : v + 2;
	}
	if ((o = add(g, t, K_READ)))
		o->f = f;
	if ((o = add(g, t, K_WAIT))) {
		o->f = f, o->v = v, o->timeout_ns = 1000000;
	}
	g->cur[f] = v + 2;
	note_value(g, f, v);
	note_value(g, f, v + 2);
}

/* Work on q between a wait and a signal: it pins the signal (R17). */
static void maybe_exec(struct gen *g, int t, int q, int percent)
{
	struct m_op *o;

	if (chance(g, percent) && (o = add(g, t, K_EXEC))) {
		o->q = q;
		o->delay_ns = chance(g, 50) ? 0 : 100000 + rnd(g, 900000);
	}
}

static void qop(struct gen *g, int t, int kind, int q, int f, uint64_t v)
{
	struct m_op *o = add(g, t, kind);

	if (!o)
		return;
	o->q = q, o->f = f, o->v = v;
	if (kind == K_QSIG)
		note_value(g, f, v);
}

/* After a consumers-first shape: the CPU looks at the end value. */
static void shape_end(struct gen *g, int t, int f, uint64_t top)
{
	struct m_op *o;
	int r = rnd(g, 100);

	g->cur[f] = top;
	note_value(g, f, top);
	if (r < 50 && (o = add(g, t, K_WAIT))) {
		o->f = f, o->v = top;
		o->timeout_ns = chance(g, 50) ? M_MAX : 200000000;
	} else if (r < 75 && (o = add(g, t, K_READ))) {
		o->f = f;
	}
}

/*
 * Scenario: a pipeline queued consumers first (issue 23): the last stage
 * waits for the one before it and signals, ..., the first stage works and
 * signals; each stage's signal takes effect only after its wait was
 * satisfied, so the fence climbs to the last stage's value.
 */
static void scen_pipeline(struct gen *g, int t, int nq, int f)
{
	uint64_t b = g->cur[f];
	int s;

	g->budget += 3 * nq + 3;
	for (s = nq - 1; s >= 1; s--) {
		qop(g, t, K_QWAIT, s, f, b + s);
		maybe_exec(g, t, s, 70);
		qop(g, t, K_QSIG, s, f, b + s + 1);
	}
	maybe_exec(g, t, 0, 80);
	qop(g, t, K_QSIG, 0, f, b + 1);
	shape_end(g, t, f, b + nq);
}

/*
 * Scenario: a signal-order chain (issue 23): queue A waits for the odd
 * values and signals the even ones, every call of A's made before B's;
 * queue B signals the odd values and waits for the even ones. With
 * @interleaved, a ping-pong: one round of A, then one of B.
 */
static void scen_chain(struct gen *g, int t, int qa, int qb, int f,
		       bool interleaved)
{
	uint64_t b = g->cur[f];
	int n = 2 + rnd(g, 3), k;

	g->budget += 6 * n + 2;
	for (k = 0; k < n; k++) {
		qop(g, t, K_QWAIT, qa, f, b + 2 * k + 1);
		maybe_exec(g, t, qa, 40);
		qop(g, t, K_QSIG, qa, f, b + 2 * k + 2);
		if (!interleaved)
			continue;
		maybe_exec(g, t, qb, 40);
		qop(g, t, K_QSIG, qb, f, b + 2 * k + 1);
		qop(g, t, K_QWAIT, qb, f, b + 2 * k + 2);
	}
	for (k = 0; k < n && !interleaved; k++) {
		maybe_exec(g, t, qb, 40);
		qop(g, t, K_QSIG, qb, f, b + 2 * k + 1);
		qop(g, t, K_QWAIT, qb, f, b + 2 * k + 2);
	}
	shape_end(g, t, f, b + 2 * n);
}

/*
 * Scenario: a first read long after a signal completed (R17: no
 * observation has to come first). A fence nothing else in the program
 * uses: work, a signal, a sleep longer than M_LATE_NS, then the first
 * read; the model wants the signalled value.
 */
static void scen_lazy(struct gen *g, int t, int q, int f)
{
	struct m_op *o;

	g->budget += 4;
	if ((o = add(g, t, K_EXEC))) {
		o->q = q;
		o->delay_ns = rnd(g, 500000);
	}
	qop(g, t, K_QSIG, q, f, g->cur[f] + 1 + rnd(g, 3));
	if ((o = add(g, t, K_SLEEP)))
		o->timeout_ns = M_LAZY_SLEEP_NS;
	if ((o = add(g, t, K_READ)))
		o->f = f;
	/* nothing else may observe it: the generator leaves it alone */
	g->fdead[f] = true;
}

void gen_program(struct m_prog *p, uint64_t seed, const struct m_genopts *opt)
{
	struct gen g;
	int i, t, nops, r, shape, lazy = -1;

	memset(p, 0, sizeof(*p));
	memset(&g, 0, sizeof(g));
	g.p = p;
	g.opt = opt;
	g.rng = seed;
	p->seed = seed;

	r = rnd(&g, 100);
	p->nthreads = r < 25 ? 1 : r < 75 ? 2 : 3;
	if (p->nthreads > opt->max_threads)
		p->nthreads = opt->max_threads;
	r = rnd(&g, 100);
	p->nqueues = r < 15 ? 1 : r < 55 ? 2 : 3;
	if (p->nqueues > opt->max_queues)
		p->nqueues = opt->max_queues;
	r = rnd(&g, 100);
	p->nuser_fences = r < 20 ? 1 : r < 65 ? 2 : 3;
	if (p->nuser_fences > opt->max_fences)
		p->nuser_fences = opt->max_fences;
	/*
	 * Issue 23's shape in 30 programs of 100 that remove nothing (the
	 * removal scenario keeps its share): several queues of one thread
	 * wait for and signal one fence, waits queued first.
	 */
	shape = opt->scenarios ? (int)rnd(&g, 100) : 100;
	if (opt->removal && opt->scenario == SCEN_RANDOM)
		shape = 100;
	switch (opt->scenario) {
	case SCEN_RANDOM: break;
	case SCEN_PIPELINE: shape = 0; break;
	case SCEN_CHAIN: shape = 10; break;
	case SCEN_PINGPONG: shape = 20; break;
	default: shape = 100; break;
	}
	if (shape < 30 && p->nqueues < 2)
		p->nqueues = 2;
	if (shape < 10 && chance(&g, 50))
		p->nqueues = 3;
	/* A first read long after the signal, in about one program in 200. */
	if ((opt->lazy && !opt->removal && rnd(&g, 1000) < 6) ||
	    opt->scenario == SCEN_LAZY)
		lazy = p->nuser_fences++;

	for (i = 0; i < p->nuser_fences; i++) {
		r = rnd(&g, 100);
		p->finit[i] = r < 50 ? 0 : r < 75 ? 1 + rnd(&g, 5) :
			      r < 90 ? (1ull << 40) + rnd(&g, 3) : 99;
		g.cur[i] = p->finit[i];
		note_value(&g, i, p->finit[i]);
		p->fshared[i] = opt->shared && chance(&g, 30);
		g.writer[i] = rnd(&g, p->nthreads);
	}
	for (i = 0; i < M_MAXE; i++)
		g.efd_thread[i] = -1;
	/*
	 * A second process: the last thread, with its own queues; it reaches
	 * the shared fences only (non-shared fences it signals are its own).
	 */
	p->nprocs = 1;
	if (opt->child && p->nthreads >= 2 && chance(&g, 35)) {
		p->nprocs = 2;
		p->tproc[p->nthreads - 1] = 1;
		for (i = 0; i < p->nuser_fences; i++)
			if (chance(&g, 60))
				p->fshared[i] = true;
		if (!p->fshared[0])
			p->fshared[0] = true;
	}
	/* Every thread feeds a queue if it can; writers favour more. */
	for (i = 0; i < p->nqueues; i++)
		g.qowner[i] = i < p->nthreads ? i : rnd(&g, p->nthreads);
	if (p->nqueues > 1 && chance(&g, 50))
		g.qowner[rnd(&g, p->nqueues)] = g.writer[0];
	if (p->nprocs == 2 && p->nqueues < M_MAXQ)	/* the child's own */
		g.qowner[p->nqueues++] = p->nthreads - 1;

	nops = 4 + rnd(&g, opt->max_ops > 4 ? opt->max_ops - 3 : 1);
	g.budget = nops + 12;

	r = opt->scenarios ? rnd(&g, 100) : 100;
	switch (opt->scenario) {
	case SCEN_NONE: r = 100; break;
	case SCEN_CAUSAL: r = 0; break;
	case SCEN_DISCARD: r = 20; break;
	case SCEN_SHARED: r = 40; break;
	case SCEN_REMOVAL: r = 50; break;
	case SCEN_RANDOM: break;
	default: r = 100; break;
	}
	if (shape < 30 || lazy >= 0)
		r = 100;	/* their queues may be another thread's */
	if (lazy >= 0) {
		/* thread 0, on queue 0, before anything else there */
		p->fshared[lazy] = false;
		g.writer[lazy] = 0;
		g.qowner[0] = 0;
		scen_lazy(&g, 0, 0, lazy);
	}
	if (shape < 30) {
		int nq = p->nprocs == 2 ? p->nqueues - 1 : p->nqueues;

		/* thread 0 (never the child) feeds them and signals F0 */
		g.writer[0] = 0;
		for (i = 0; i < nq; i++)
			g.qowner[i] = 0;
		if (shape < 10)
			scen_pipeline(&g, 0, nq, 0);
		else
			scen_chain(&g, 0, 0, 1, 0, shape >= 20);
	}
	if (opt->scenario > SCEN_NONE && opt->scenario < SCEN_PIPELINE) {
		/* what the scenario needs */
		p->nthreads = p->nthreads < 2 ? 2 : p->nthreads;
		p->nqueues = 3;
		p->nuser_fences = p->nuser_fences < 2 ? 2 : p->nuser_fences;
		for (i = 0; i < p->nqueues; i++)
			g.qowner[i] = i < p->nthreads ? i : rnd(&g, p->nthreads);
		for (i = 0; i < p->nuser_fences; i++)
			g.writer[i] = rnd(&g, p->nthreads);
	}
	if (r < 20 && p->nqueues >= 2 && p->nuser_fences >= 2) {
		t = g.writer[0];
		g.writer[1] = t;
		g.qowner[0] = g.qowner[1] = t;
		scen_causal(&g, t, 0, 1, 0, 1);
	} else if (r < 40 && p->nqueues >= 3 && p->nuser_fences >= 2) {
		t = g.writer[0];
		g.writer[1] = t;
		g.qowner[0] = g.qowner[1] = g.qowner[2] = t;
		scen_discard(&g, t, 0, 1, 2, 0, 1);
	} else if (r < 50 && opt->shared) {
		t = g.writer[0];
		g.qowner[0] = t;
		if (p->nuser_fences >= 2)
			g.writer[1] = t;
		scen_shared(&g, t, 0, 0, p->nuser_fences >= 2 ? 1 : 0);
	} else if (r < 70 && opt->removal && p->nthreads >= 2) {
		t = g.writer[0];
		scen_removal(&g, t, (t + 1) % p->nthreads, 0);
	}
	g.budget = nops;
	while (g.budget > 0 && p->nops < M_MAXOPS - 24) {
		int before = g.budget;

		gen_op(&g, rnd(&g, p->nthreads));
		if (g.budget == before)
			g.budget--;	/* nothing fitted */
	}
	prog_finish(p);
	prog_sure(p);
}
