// SPDX-License-Identifier: GPL-2.0
/*
 * The reference model of the fence rules R1-R18 and the checker.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The model is a state machine written from the rules alone
 * (/work/shared/d3d12-fence-rules.md and the semantics decisions of
 * Documentation/library.rst, "Reference model"). Its steps are
 *
 *   - one step per API call, at some instant between the CPU clock read
 *     before the call and the one after it (two for a blocking
 *     multi-fence registration: registration, then return);
 *   - one step per execution that the engine ran, at some instant between
 *     the engine timestamps written at its start and its end;
 *   - internal steps that no clock pins: the engine passing a queue
 *     signal or a satisfied queue wait, the library applying a completed
 *     queue signal (R4: in the order they complete, none discarded), an
 *     event's write.
 *
 * model_check() searches for an order of all steps that respects the
 * clocks (a step whose window ends before another's begins comes first),
 * the order of each thread and each queue, and that makes every step's
 * observation (return value, value read, counter read, engine copy) the
 * one the model produces, and that applies every queue signal whose
 * completion the clocks pin before any history step that starts more than
 * M_LATE_NS after that (R17: no observation has to come first; see
 * build_due()). Such an order is an execution the rules allow
 * that explains the log; if there is none, the library broke a rule. The
 * search is a depth-first search with memoisation of visited states, as
 * linearizability checkers do (Wing & Gong; Lowe; Porcupine).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#define MAXU 12
#define MAXSTEPS (2 * M_MAXOPS)

/*
 * Queue signal: called, passed by the engine (its work completed), taken
 * effect (R4: the fence takes its value, shared or not, R20; on a
 * destroyed fence it changes nothing).
 */
enum { S_NONE, S_CALLED, S_GPU, S_APPLIED };
/* Queue wait */
enum { W_NONE, W_UNSAT, W_SAT, W_PROMISED };
/* Event registration (EVENT, MULTI, MULTI_BLOCK) */
enum { R_NONE, R_ARMED, R_FIRED };
/* Execution */
enum { X_NONE, X_QUEUED, X_RAN };

struct mst {
	uint64_t val[M_MAXF];
	uint64_t done[(MAXSTEPS + 63) / 64];
	uint8_t fdead[M_MAXF];		/* destroyed */
	uint8_t qlen[M_MAXQ], gpos[M_MAXQ];
	uint8_t qops[M_MAXQ][M_QCAP];
	uint8_t st[M_MAXOPS], aux[M_MAXOPS];
	uint8_t cnt[M_MAXE], eclosed[M_MAXE];
	uint8_t nunits;
	/*
	 * Per process: its removal (RM_*). A removal is that process's
	 * affair (R15, R20): @val stays the real value of a shared fence,
	 * which the other process keeps reading, signalling and waiting
	 * for; only the removed process reads UINT64_MAX (fvalp()).
	 */
	uint8_t removed[2];
	/*
	 * pending eventfd writes: efd, writes still owed, writes allowed,
	 * and 1 + the shared fence whose later changes by another process
	 * may still join the unit (0: none may)
	 */
	uint8_t ue[MAXU], umin[MAXU], umax[MAXU], umg[MAXU];
	uint8_t pad[5];
};

/* States are hashed whole: no padding the compiler might not copy. */
_Static_assert(sizeof(struct mst) ==
	       offsetof(struct mst, pad) + sizeof(((struct mst *)0)->pad),
	       "struct mst has trailing padding");

struct step {
	uint8_t op;
	uint8_t part;		/* 0 call, 1 second point (MULTI_BLOCK's return,
				 * REMOVE's release), 2 engine */
	int16_t pred;		/* step that must come first, or -1 */
	uint64_t lo, hi;
};

struct memo {
	uint64_t *keys;		/* pairs; 0,0 = empty */
	size_t cap, n;
};

struct ctx {
	const struct m_prog *p;
	const struct m_log *l;
	struct step steps[MAXSTEPS];
	int nsteps;
	struct memo memo;
	uint64_t states, max_states;
	bool budget;
	int best_done;
	struct mst best;
	char *why;
	size_t whylen;
	bool overflow;
	unsigned relax;		/* M_RELAX_*: rules left out, to diagnose */
	/* queue signals whose completion the clocks pin (build_due()) */
	int ndue;
	uint8_t due_op[M_MAXOPS];
	uint64_t due[M_MAXOPS];	/* completed by then (CLOCK_MONOTONIC ns) */
};

static void say(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct ctx *c, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!c->why)
		return;
	used = strlen(c->why);
	if (used + 1 >= c->whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->why + used, c->whylen - used, fmt, ap);
	va_end(ap);
}

/* --- hashing and the visited set ------------------------------------- */

static void hash2(const void *data, size_t len, uint64_t *h1, uint64_t *h2)
{
	const uint8_t *b = data;
	uint64_t a = 0x9e3779b97f4a7c15ull, z = 0xc2b2ae3d27d4eb4full;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		a = (a ^ w) * 0xff51afd7ed558ccdull;
		a ^= a >> 32;
		z = (z + w) * 0x94d049bb133111ebull;
		z ^= z >> 29;
	}
	for (; i < len; i++) {
		a = (a ^ b[i]) * 0x100000001b3ull;
		z = (z + b[i]) * 0xbf58476d1ce4e5b9ull;
	}
	a ^= a >> 31;
	z ^= z >> 30;
	*h1 = a | 1;
	*h2 = z;
}

/* true if already there */
static bool memo_insert(struct memo *m, const struct mst *s)
{
	uint64_t h1, h2;
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 1u << 14, j;
		uint64_t *nk = calloc(2 * ncap, sizeof(*nk));

		if (!nk)
			abort();
		for (j = 0; j < m->cap; j++) {
			uint64_t k1 = m->keys[2 * j];

			if (!k1)
				continue;
			i = k1 & (ncap - 1);
			while (nk[2 * i])
				i = (i + 1) & (ncap - 1);
			nk[2 * i] = k1;
			nk[2 * i + 1] = m->keys[2 * j + 1];
		}
		free(m->keys);
		m->keys = nk;
		m->cap = ncap;
	}
	hash2(s, sizeof(*s), &h1, &h2);
	i = h1 & (m->cap - 1);
	while (m->keys[2 * i]) {
		if (m->keys[2 * i] == h1 && m->keys[2 * i + 1] == h2)
			return true;
		i = (i + 1) & (m->cap - 1);
	}
	m->keys[2 * i] = h1;
	m->keys[2 * i + 1] = h2;
	m->n++;
	return false;
}

/* --- the model's transitions ----------------------------------------- */

static bool is_done(const struct mst *s, int i)
{
	return s->done[i / 64] >> (i % 64) & 1;
}

static void unit_add(struct ctx *c, struct mst *s, int e, int min, int max,
		     int mg)
{
	int i, j;

	if (s->eclosed[e])
		return;
	if (c->relax & M_RELAX_EVENTS)
		min = 0, max = 4;
	if (s->nunits == MAXU) {
		c->overflow = true;
		return;
	}
	/* Kept sorted, so that equal sets hash alike. */
	for (i = 0; i < s->nunits; i++)
		if (s->ue[i] > e || (s->ue[i] == e &&
		    (s->umin[i] > min || (s->umin[i] == min &&
		     (s->umax[i] > max || (s->umax[i] == max &&
		      s->umg[i] >= mg))))))
			break;
	for (j = s->nunits; j > i; j--) {
		s->ue[j] = s->ue[j - 1];
		s->umin[j] = s->umin[j - 1];
		s->umax[j] = s->umax[j - 1];
		s->umg[j] = s->umg[j - 1];
	}
	s->ue[i] = e;
	s->umin[i] = min;
	s->umax[i] = max;
	s->umg[i] = mg;
	s->nunits++;
}

static void unit_del(struct mst *s, int i)
{
	for (; i + 1 < s->nunits; i++) {
		s->ue[i] = s->ue[i + 1];
		s->umin[i] = s->umin[i + 1];
		s->umax[i] = s->umax[i + 1];
		s->umg[i] = s->umg[i + 1];
	}
	s->nunits--;
	s->ue[s->nunits] = s->umin[s->nunits] = s->umax[s->nunits] = 0;
	s->umg[s->nunits] = 0;
}

static bool multi_met(const struct m_op *o, uint8_t bits)
{
	return o->any ? bits != 0 : bits == (1u << o->n) - 1;
}

/*
 * Fence f reached @v (a signal took effect, or @v is UINT64_MAX for a
 * destruction or a removal): waits are satisfied for good (R6), events
 * fire (R10), multi-fence registrations count the fence (R13). The
 * writes of single-fence events of one eventfd that fire in this step are
 * one "unit": at least one write, at most one per distinct target (the
 * rules only say "at most once per crossing" for the same (event, v)).
 *
 * A process learns of a change that process @src made to a shared fence
 * from the timeline, and may see several such changes as one (it waits
 * for its lowest target and reads a higher value): a unit of another
 * process that no write has served yet takes in the next change of the
 * same fence instead of owing a write of its own. That next change may
 * also be the process's own (@peer false): it applies its own signal
 * before its worker has seen the peer's, and fires everything reached in
 * one step. A process sees its own changes one by one, so the unit that
 * results takes in nothing more.
 */
static void unit_join(struct ctx *c, struct mst *s, int e, int n, int f,
		      bool peer)
{
	int i, min, max, mg = peer ? f + 1 : 0;

	for (i = 0; i < s->nunits; i++) {
		if (s->ue[i] != e || s->umg[i] != f + 1)
			continue;
		min = s->umin[i];
		max = s->umax[i] + n;
		unit_del(s, i);
		unit_add(c, s, e, min, max, mg);
		return;
	}
	unit_add(c, s, e, 1, n, mg);
}

static void on_value_in(struct ctx *c, struct mst *s, int f, uint64_t v,
			int proc, int src)
{
	const struct m_prog *p = c->p;
	uint64_t targets[M_MAXE][8];
	int ntargets[M_MAXE] = { 0 };
	int joins[M_MAXE] = { 0 };	/* 1: own change, 2: a peer's */
	int i, j;

	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (proc >= 0 && op_proc(p, o) != proc)
			continue;
		switch (o->kind) {
		case K_QWAIT:
			if (o->f == f && (s->st[i] == W_UNSAT ||
					  s->st[i] == W_PROMISED) && o->v <= v) {
				s->st[i] = W_SAT;
				s->aux[i] = 0;
			}
			break;
		case K_EVENT:
		case K_MULTI:
			/* R13: count 1 behaves like the single-fence call. */
			if (o->kind == K_MULTI && o->n > 1)
				goto multi;
			if (o->kind == K_EVENT ? o->f != f : o->mf[0] != f)
				break;
			if (s->st[i] == R_ARMED &&
			    (o->kind == K_EVENT ? o->v : o->mv[0]) <= v) {
				uint64_t t = o->kind == K_EVENT ? o->v : o->mv[0];
				int e = o->e, n = ntargets[e];

				s->st[i] = R_FIRED;
				if (p->fshared[f] && src >= 0)
					joins[e] = op_proc(p, o) != src ? 2 : 1;
				for (j = 0; j < n; j++)
					if (targets[e][j] == t)
						break;
				if (j == n && n < 8)
					targets[e][ntargets[e]++] = t;
			}
			break;
		multi:
		case K_MULTI_BLOCK:
			if (s->st[i] != R_ARMED)
				break;
			for (j = 0; j < o->n; j++)
				if (o->mf[j] == f && o->mv[j] <= v)
					s->aux[i] |= 1u << j;
			if (multi_met(o, s->aux[i])) {
				s->st[i] = R_FIRED;
				if (o->kind == K_MULTI)
					unit_add(c, s, o->e, 1, 1, 0);
			}
			break;
		}
	}
	for (i = 0; i < p->nefds; i++) {
		if (!ntargets[i])
			continue;
		if (joins[i])
			unit_join(c, s, i, ntargets[i], f, joins[i] == 2);
		else
			unit_add(c, s, i, 1, ntargets[i], 0);
	}
}

/* Fence @f reached @v by a change of process @src (-1: not a peer's). */
static void on_value(struct ctx *c, struct mst *s, int f, uint64_t v,
		     int src)
{
	on_value_in(c, s, f, v, -1, src);
}

/*
 * Removal (R15): stopped (work refused, the engine idle, the pending
 * signals of the process dropped), then released (its view of every
 * fence at UINT64_MAX, its waiters released).
 */
enum { RM_NONE, RM_STOPPED, RM_RELEASED };

/*
 * f's value as process @proc reads it: a removed device reads UINT64_MAX
 * for every fence it holds from its release on (its local fences are at
 * UINT64_MAX for good then), its view of a shared fence too, while the
 * other process still reads the real value (R20).
 */
static uint64_t fvalp(const struct ctx *c, const struct mst *s, int f,
		      int proc)
{
	if (c->p->fshared[f] && s->removed[proc] == RM_RELEASED)
		return M_MAX;
	return s->val[f];
}

#define fval(s, f) fvalp(c, s, f, proc)

static void queue_append(struct ctx *c, struct mst *s, int q, int op)
{
	if (s->qlen[q] == M_QCAP) {
		c->overflow = true;
		return;
	}
	s->qops[q][s->qlen[q]++] = op;
}

/* An execution's copy: what it must have read when it ran. */
static bool exec_memory_ok(struct ctx *c, const struct mst *s, int i,
			   bool explain)
{
	const struct m_op *o = &c->p->ops[i];
	const struct m_obs *ob = &c->l->o[i];
	uint64_t want = 0;

	if (o->src_kind == SRC_NONE || (c->relax & M_RELAX_MEMORY))
		return true;
	if (o->src_kind == SRC_EXEC && s->st[o->src] == X_RAN)
		want = c->p->ops[o->src].tag;
	if (o->src_kind == SRC_CPU && s->st[o->src])
		want = c->p->ops[o->src].tag;
	if (o->cas && want)
		want |= M_CASMARK;
	if (ob->obs == want)
		return true;
	if (explain)
		say(c, "op %d (exec) read %#llx from op %d's slot, the model has %#llx there; ",
		    i, (unsigned long long)ob->obs, o->src,
		    (unsigned long long)want);
	return false;
}

/*
 * The step of a history entry. Returns false if the observation is not
 * what the model produces in state @s (with @explain, says why).
 */
static bool do_step(struct ctx *c, struct mst *s, const struct step *st,
		    int alt, bool explain)
{
	const struct m_prog *p = c->p;
	int i = st->op, j;
	const struct m_op *o = &p->ops[i];
	const struct m_obs *ob = &c->l->o[i];
	int proc = op_proc(p, o);
	int64_t want_ret = 0;
	bool ok;

	/*
	 * R15 happens at one instant: a call after which the device still
	 * had no removal reason observed nothing of a removal.
	 */
	if (st->part != 2 && s->removed[proc] && !ob->reason &&
	    !(c->relax & M_RELAX_REMOVAL)) {
		if (explain)
			say(c, "op %d (%s) came after the removal, yet the reason read 0 after it; ",
			    i, kind_name(o->kind));
		return false;
	}

	switch (o->kind) {
	case K_CSIG:
		/*
		 * Refused once this process's device is removed; another
		 * process's removal changes nothing here (R20).
		 */
		want_ret = s->removed[proc] ? -ENODEV : 0;
		if ((c->relax & M_RELAX_REMOVAL) && ob->ret == 0) {
			s->val[o->f] = o->v;
			on_value(c, s, o->f, o->v, -1);
			return true;
		}
		/* diagnosis: refused by another process's removal */
		if ((c->relax & M_RELAX_REMOVAL) && ob->ret == -ENODEV)
			return true;
		if (ob->ret != want_ret)
			goto bad_ret;
		if (want_ret)
			return true;
		/*
		 * Any value, shared or not (R2, R20); another process sees a
		 * shared fence's change at once.
		 */
		if (p->fshared[o->f]) {
			s->st[i] = S_APPLIED;
			if (alt)	/* diagnosis: it changes nothing */
				return true;
		}
		s->val[o->f] = o->v;
		on_value(c, s, o->f, o->v, p->fshared[o->f] ? proc : -1);
		return true;
	case K_READ:
		if (ob->val == fval(s, o->f))
			return true;
		if (explain)
			say(c, "op %d read F%d = %llu, the model has %llu; ", i,
			    o->f, (unsigned long long)ob->val,
			    (unsigned long long)fval(s, o->f));
		return false;
	case K_WAIT:
	case K_BLOCK:
		ok = fval(s, o->f) >= o->v;
		if ((ob->ret == 0 && ok) || (ob->ret == -ETIMEDOUT && !ok))
			return true;
		if (explain)
			say(c, "op %d %s F%d >= %llu returned %lld while the model has F%d = %llu; ",
			    i, kind_name(o->kind), o->f,
			    (unsigned long long)o->v, (long long)ob->ret, o->f,
			    (unsigned long long)fval(s, o->f));
		return false;
	case K_EVENT:
		if (ob->ret != 0)
			goto bad_ret;
		s->st[i] = R_ARMED;
		if (fval(s, o->f) >= o->v) {
			s->st[i] = R_FIRED;
			unit_add(c, s, o->e, 1, 1, 0);
		}
		return true;
	case K_MULTI:
	case K_MULTI_BLOCK:
		if (st->part == 1) {
			if (ob->ret != 0)
				goto bad_ret;
			if (s->st[i] == R_FIRED)
				return true;
			if (explain)
				say(c, "op %d (blocking multi) returned before its condition held; ",
				    i);
			return false;
		}
		if (o->kind == K_MULTI && ob->ret != 0)
			goto bad_ret;
		s->st[i] = R_ARMED;
		s->aux[i] = 0;
		for (j = 0; j < o->n; j++)
			if (fval(s, o->mf[j]) >= o->mv[j])
				s->aux[i] |= 1u << j;
		if (multi_met(o, s->aux[i])) {
			s->st[i] = R_FIRED;
			if (o->kind == K_MULTI)
				unit_add(c, s, o->e, 1, 1, 0);
		}
		return true;
	case K_EVREAD:
	case K_EVWAIT:
		if (ob->val == s->cnt[o->e] || (c->relax & M_RELAX_EVENTS)) {
			s->cnt[o->e] = 0;
			return true;
		}
		if (explain)
			say(c, "op %d read %llu from eventfd E%d, the model has %u; ",
			    i, (unsigned long long)ob->val, o->e, s->cnt[o->e]);
		return false;
	case K_EVCLOSE:
		s->eclosed[o->e] = 1;
		s->cnt[o->e] = 0;
		for (j = s->nunits - 1; j >= 0; j--)
			if (s->ue[j] == o->e)
				unit_del(s, j);
		s->eclosed[o->e2] = 0;
		s->cnt[o->e2] = 0;
		return true;
	case K_QSIG:
		/*
		 * Never refused while the device lives, also below a value
		 * signalled before (R4: it takes effect when its work
		 * completes).
		 */
		want_ret = s->removed[proc] ? -ENODEV : 0;
		if (ob->ret != want_ret)
			goto bad_ret;
		if (s->removed[proc])
			return true;
		queue_append(c, s, o->q, i);
		s->st[i] = S_CALLED;
		return true;
	case K_QWAIT:
		want_ret = s->removed[proc] ? -ENODEV : 0;
		if (ob->ret != want_ret)
			goto bad_ret;
		if (s->removed[proc])
			return true;
		s->st[i] = fval(s, o->f) >= o->v ? W_SAT : W_UNSAT;
		/*
		 * R9: a signal of the same fence earlier on this queue with
		 * a value at least v satisfies the wait by queue order.
		 */
		for (j = 0; j < s->qlen[o->q] && s->st[i] == W_UNSAT; j++) {
			const struct m_op *x = &p->ops[s->qops[o->q][j]];

			if (x->kind == K_QSIG && x->f == o->f && x->v >= o->v)
				s->st[i] = W_SAT;
		}
		queue_append(c, s, o->q, i);
		return true;
	case K_EXEC:
		if (st->part == 0) {
			want_ret = s->removed[proc] ? -ENODEV : 0;
			if (ob->ret != want_ret)
				goto bad_ret;
			if (!s->removed[proc]) {
				queue_append(c, s, o->q, i);
				s->st[i] = X_QUEUED;
			}
			return true;
		}
		/* The engine ran it. */
		if (s->removed[proc]) {
			if (explain)
				say(c, "op %d (exec) ran after the device was removed; ", i);
			return false;
		}
		if (s->st[i] != X_QUEUED || s->gpos[o->q] >= s->qlen[o->q] ||
		    s->qops[o->q][s->gpos[o->q]] != i) {
			if (explain)
				say(c, "op %d (exec) ran before the work ahead of it on Q%d was done; ",
				    i, o->q);
			return false;
		}
		if (!exec_memory_ok(c, s, i, explain))
			return false;
		s->st[i] = X_RAN;
		s->gpos[o->q]++;
		return true;
	case K_CPUWRITE:
		s->st[i] = 1;
		return true;
	case K_SLEEP:
		return true;
	case K_DESTROY:
		s->fdead[o->f] = 1;
		on_value(c, s, o->f, M_MAX, -1);
		return true;
	case K_REMOVE:
		/*
		 * R15 "in that order": first every job stops and new work is
		 * refused, then the fences read UINT64_MAX and waiters are
		 * released; both within the call.
		 */
		if (ob->ret != 0)
			goto bad_ret;
		if (st->part == 0) {
			/*
			 * The stop: queue and CPU signals refused, the
			 * engine runs nothing more, and the process's
			 * pending queue signals never take effect (its jobs
			 * are cancelled), as if it had died: search() and
			 * quiescent() skip its queues and signals.
			 */
			if (s->removed[proc] == RM_NONE)
				s->removed[proc] = RM_STOPPED;
			return true;
		}
		if (s->removed[proc] != RM_STOPPED)
			return true;
		/*
		 * The release: every fence reads UINT64_MAX in this process
		 * (fvalp()), and its own waits and registrations are
		 * released. R20: only its own. The other process keeps the
		 * real value of a shared fence (val[] does not change), its
		 * waits and events stay pending, and its signals still take
		 * effect; only the end of the whole device (unplug) would
		 * force the shared value, which no program does.
		 */
		s->removed[proc] = RM_RELEASED;
		for (j = 0; j < p->nfences; j++) {
			if (s->fdead[j])
				continue;
			if (!p->fshared[j]) {
				if (p->fproc[j] != proc)
					continue;
				s->val[j] = M_MAX;
				on_value(c, s, j, M_MAX, -1);
			} else if (alt) {
				/* diagnosis: for everyone, as before uapi 1.9 */
				s->val[j] = M_MAX;
				on_value(c, s, j, M_MAX, -1);
			} else {
				/* this process's view only */
				on_value_in(c, s, j, M_MAX, proc,
					    (c->relax & M_RELAX_REMOVAL) ?
					    -1 : proc);
			}
		}
		return true;
	}
	return false;

bad_ret:
	if (explain)
		say(c, "op %d %s returned %lld, the model wants %lld; ", i,
		    kind_name(o->kind), (long long)ob->ret, (long long)want_ret);
	return false;
}

/* Position of op i in its queue. */
static int qindex(const struct mst *s, int q, int i)
{
	int j;

	for (j = 0; j < s->qlen[q]; j++)
		if (s->qops[q][j] == i)
			return j;
	return -1;
}

/*
 * The library applies a completed queue signal (R4: whenever its work
 * completed, whatever the order of the calls; nothing is discarded). R17:
 * only after everything it depended on took effect: the signals before
 * it on its queue are applied, the waits before it are satisfied by a
 * value the fence really took (R18). A promise made on this signal (the
 * engine passed a wait relying on it) must be kept. @drop (diagnosis
 * without R4 only): the signal changes nothing.
 */
static bool resolve(struct ctx *c, struct mst *s, int i, bool backwards,
		    bool drop)
{
	const struct m_op *o = &c->p->ops[i];
	int q = o->q, k = qindex(s, q, i), j;

	for (j = 0; j < k && !(c->relax & M_RELAX_R17); j++) {
		int x = s->qops[q][j];
		const struct m_op *xo = &c->p->ops[x];

		if (xo->kind == K_QSIG && s->st[x] != S_APPLIED)
			return false;
		if (xo->kind == K_QWAIT && s->st[x] != W_SAT)
			return false;
	}
	s->st[i] = S_APPLIED;
	if (s->fdead[o->f] || drop) {
		/* nothing to change */
	} else if (c->p->fshared[o->f]) {
		/* R20: as any fence, a lower value too */
		(void)backwards;
		s->val[o->f] = o->v;
		on_value(c, s, o->f, o->v, c->p->qproc[q]);
	} else {
		s->val[o->f] = o->v;
		on_value(c, s, o->f, o->v, -1);
	}
	for (j = 0; j < c->p->nops && !(c->relax & M_RELAX_R18); j++)
		if (c->p->ops[j].kind == K_QWAIT && s->st[j] == W_PROMISED &&
		    s->aux[j] == i)
			return false;
	return true;
}

static bool quiescent(struct ctx *c, const struct mst *s, bool explain)
{
	int i;

	for (i = 0; i < s->nunits; i++) {
		if (s->umin[i]) {
			if (explain)
				say(c, "eventfd E%d owes a write (an event that must fire never did); ",
				    s->ue[i]);
			return false;
		}
	}
	for (i = 0; i < c->p->nqueues; i++) {
		if (s->removed[c->p->qproc[i]])
			continue;
		if (s->gpos[i] < s->qlen[i]) {
			if (explain)
				say(c, "Q%d never got past op %d; ", i,
				    s->qops[i][s->gpos[i]]);
			return false;
		}
	}
	for (i = 0; i < c->p->nops; i++) {
		if (c->p->ops[i].kind == K_QSIG && s->st[i] == S_GPU &&
		    !s->removed[c->p->qproc[c->p->ops[i].q]]) {
			if (explain)
				say(c, "queue signal op %d never took effect; ", i);
			return false;
		}
	}
	return true;
}

static bool search(struct ctx *c, const struct mst *s, int ndone);

/*
 * R17, no observation has to come first: a queue signal whose work is
 * known to have completed by c->due[] takes effect within one wake-up of
 * whatever applies it. Internal steps have no clock, so the model bounds
 * that wake-up by M_LATE_NS: no history step that starts later than that
 * after the completion comes before the signal took effect. The queue
 * signal op it holds up, or -1.
 */
static int late_op(const struct ctx *c, const struct mst *s, uint64_t lo)
{
	int k, i;

	for (k = 0; k < c->ndue; k++) {
		i = c->due_op[k];
		if (s->st[i] != S_APPLIED && c->due[k] < lo &&
		    lo - c->due[k] > M_LATE_NS)
			return i;
	}
	return -1;
}

static bool late(const struct ctx *c, const struct mst *s, uint64_t lo)
{
	return late_op(c, s, lo) >= 0;
}

/*
 * Diagnosis without the shared timeline rules: an accepted CPU signal of
 * a shared fence may also change nothing (issue 10, defect 3). Without
 * R15: a removal's release may also take the shared fences to UINT64_MAX
 * for the other process (the rule before uapi 1.9, which R20 withdrew).
 */
static int alternatives(const struct ctx *c, const struct step *st)
{
	const struct m_op *o = &c->p->ops[st->op];

	if ((c->relax & M_RELAX_SHARED) && o->kind == K_CSIG &&
	    c->p->fshared[o->f] && c->l->o[st->op].ret == 0)
		return 2;
	if ((c->relax & M_RELAX_REMOVAL) && o->kind == K_REMOVE &&
	    st->part == 1 && c->p->nprocs > 1)
		return 2;
	return 1;
}

static bool try(struct ctx *c, const struct mst *s, int ndone)
{
	if (c->overflow)
		return false;
	return search(c, s, ndone);
}

static bool search(struct ctx *c, const struct mst *s, int ndone)
{
	const struct m_prog *p = c->p;
	uint64_t minhi = UINT64_MAX;
	struct mst n;
	int i, j, q;

	if (c->budget)
		return false;
	if (memo_insert(&c->memo, s))
		return false;
	if (++c->states > c->max_states) {
		c->budget = true;
		return false;
	}
	if (ndone > c->best_done) {
		c->best_done = ndone;
		c->best = *s;
	}
	if (ndone == c->nsteps)
		return quiescent(c, s, false);

	/* Internal steps: eventfd writes. */
	for (i = 0; i < s->nunits; i++) {
		n = *s;
		if (n.cnt[n.ue[i]] < 255)
			n.cnt[n.ue[i]]++;
		if (n.umin[i])
			n.umin[i]--;
		if (--n.umax[i] == 0) {
			unit_del(&n, i);
		} else {
			/* keep the unit list sorted */
			int e = n.ue[i], mi = n.umin[i], ma = n.umax[i];

			/* a written unit takes in no later change */
			unit_del(&n, i);
			unit_add(c, &n, e, mi, ma, 0);
		}
		if (try(c, &n, ndone))
			return true;
		if (s->umin[i] == 0) {
			n = *s;
			unit_del(&n, i);
			if (try(c, &n, ndone))
				return true;
		}
	}
	{
		/* Internal steps: the library applies a completed signal. */
		for (i = 0; i < p->nops; i++) {
			if (p->ops[i].kind != K_QSIG || s->st[i] != S_GPU ||
			    s->removed[p->qproc[p->ops[i].q]])
				continue;
			n = *s;
			if (resolve(c, &n, i, false, false) && try(c, &n, ndone))
				return true;
			/* diagnosis: may a shared timeline go back? */
			if ((c->relax & M_RELAX_SHARED) && p->fshared[p->ops[i].f]) {
				n = *s;
				if (resolve(c, &n, i, true, false) &&
				    try(c, &n, ndone))
					return true;
			}
			/*
			 * diagnosis: may a queue signal be discarded (also
			 * one of a shared fence after a removal, as before
			 * uapi 1.9)?
			 */
			if ((c->relax & M_RELAX_R4) ||
			    ((c->relax & M_RELAX_REMOVAL) &&
			     p->fshared[p->ops[i].f] &&
			     (s->removed[0] == RM_RELEASED ||
			      s->removed[1] == RM_RELEASED))) {
				n = *s;
				if (resolve(c, &n, i, false, true) &&
				    try(c, &n, ndone))
					return true;
			}
		}
		/* Internal steps: the engine passes a signal or a wait. */
		for (q = 0; q < p->nqueues; q++) {
			int x;
			const struct m_op *xo;

			if (s->gpos[q] >= s->qlen[q] || s->removed[p->qproc[q]])
				continue;
			x = s->qops[q][s->gpos[q]];
			xo = &p->ops[x];
			if (xo->kind == K_QSIG) {
				n = *s;
				n.st[x] = S_GPU;
				n.gpos[q]++;
				if (try(c, &n, ndone))
					return true;
			} else if (xo->kind == K_QWAIT) {
				if (s->st[x] == W_SAT || s->st[x] == W_PROMISED) {
					n = *s;
					n.gpos[q]++;
					if (try(c, &n, ndone))
						return true;
					continue;
				}
				/*
				 * R18 with the library's early resolution: the
				 * engine may pass the wait once a signal of a
				 * value >= v has completed on the engine, if the
				 * fence really takes a value >= v by the time
				 * that signal takes effect or is discarded. Only
				 * a signal of the waiting process: the kernel
				 * counts on pending signals of the same file
				 * alone, and another process's removal may drop
				 * its signal (R20), which no promise survives.
				 */
				if (c->relax & M_RELAX_R18) {
					n = *s;
					n.gpos[q]++;
					if (try(c, &n, ndone))
						return true;
				}
				for (j = 0; j < p->nops; j++) {
					const struct m_op *so = &p->ops[j];

					if (so->kind != K_QSIG || so->f != xo->f ||
					    s->st[j] != S_GPU || so->v < xo->v ||
					    p->qproc[so->q] != p->qproc[q])
						continue;
					n = *s;
					n.st[x] = W_PROMISED;
					n.aux[x] = j;
					n.gpos[q]++;
					if (try(c, &n, ndone))
						return true;
				}
			}
		}
	}

	/* History steps, in clock order. */
	for (i = 0; i < c->nsteps; i++)
		if (!is_done(s, i) && c->steps[i].hi < minhi)
			minhi = c->steps[i].hi;
	for (i = 0; i < c->nsteps; i++) {
		const struct step *st = &c->steps[i];

		if (is_done(s, i))
			continue;
		if (st->lo > minhi)
			break;	/* sorted by lo */
		if (st->pred >= 0 && !is_done(s, st->pred))
			continue;
		if (late(c, s, st->lo))
			break;	/* so are the steps after it */
		for (j = 0; j < alternatives(c, st); j++) {
			n = *s;
			if (!do_step(c, &n, st, j, false))
				continue;
			n.done[i / 64] |= 1ull << (i % 64);
			if (try(c, &n, ndone + 1))
				return true;
		}
	}
	return false;
}

static int cmp_step(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->op != y->op)
		return x->op - y->op;
	return x->part - y->part;
}

static void build_steps(struct ctx *c)
{
	const struct m_prog *p = c->p;
	int i, j, last[M_MAXT];
	int map[M_MAXOPS][3];

	c->nsteps = 0;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		const struct m_obs *ob = &c->l->o[i];
		struct step *st = &c->steps[c->nsteps++];

		st->op = i;
		st->part = 0;
		st->lo = ob->t0;
		st->hi = ob->t1;
		if (o->kind == K_MULTI_BLOCK || o->kind == K_REMOVE) {
			st = &c->steps[c->nsteps++];
			*st = st[-1];
			st->part = 1;
		}
		if (o->kind == K_EXEC && ob->tag == o->tag) {
			st = &c->steps[c->nsteps++];
			st->op = i;
			st->part = 2;
			st->lo = ob->ts0;
			st->hi = ob->ts1 && ob->ts1 >= ob->ts0 ? ob->ts1 : UINT64_MAX;
		}
	}
	qsort(c->steps, c->nsteps, sizeof(c->steps[0]), cmp_step);
	for (i = 0; i < M_MAXOPS; i++)
		map[i][0] = map[i][1] = map[i][2] = -1;
	for (i = 0; i < c->nsteps; i++)
		map[c->steps[i].op][c->steps[i].part] = i;
	for (i = 0; i < M_MAXT; i++)
		last[i] = -1;
	/* Program order of each thread: op order, parts in order. */
	for (i = 0; i < p->nops; i++) {
		int t = p->ops[i].thread;

		for (j = 0; j < 2; j++) {
			int k = map[i][j];

			if (k < 0)
				continue;
			c->steps[k].pred = last[t];
			last[t] = k;
		}
		if (map[i][2] >= 0)
			c->steps[map[i][2]].pred = map[i][0];
	}
}

/*
 * Which queue signals' completion the clocks pin (R17, see late_op()): a
 * queue signal i of queue q (fed by one thread in phase 1) whose work is
 * done by an instant the log shows, unless something held it back: the
 * last execution before it on q ran (engine timestamps) with no queue
 * wait between that execution and i, or nothing but queue signals is
 * before it on q. It completed by the end of that execution, and not
 * before its call returned. None in a program that removes a device (a
 * removal stops the applier: R15 decides then).
 */
static void build_due(struct ctx *c)
{
	const struct m_prog *p = c->p;
	const struct m_log *l = c->l;
	int i, j, feeder[M_MAXQ];

	c->ndue = 0;
	if (c->relax & M_RELAX_R17)
		return;
	for (i = 0; i < M_MAXQ; i++)
		feeder[i] = -1;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->kind == K_REMOVE)
			return;
		if ((o->kind != K_QSIG && o->kind != K_QWAIT &&
		     o->kind != K_EXEC) || o->phase2)
			continue;
		if (feeder[o->q] == -1 || feeder[o->q] == o->thread)
			feeder[o->q] = o->thread;
		else
			feeder[o->q] = -2;
	}
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		const struct m_obs *ob = &l->o[i];
		uint64_t by = ob->t1;
		bool pinned = true;

		if (o->kind != K_QSIG || ob->ret || !ob->t1 ||
		    feeder[o->q] == -2)
			continue;
		for (j = i - 1; j >= 0; j--) {
			const struct m_op *x = &p->ops[j];
			const struct m_obs *xb = &l->o[j];

			if (x->q != o->q ||
			    (x->kind != K_QWAIT && x->kind != K_EXEC))
				continue;
			if (x->kind == K_QWAIT || xb->ret || xb->tag != x->tag ||
			    !xb->ts1 || xb->ts1 < xb->ts0) {
				pinned = false;
				break;
			}
			if (xb->ts1 > by)
				by = xb->ts1;
			break;
		}
		if (!pinned)
			continue;
		c->due_op[c->ndue] = i;
		c->due[c->ndue++] = by;
	}
}

static void explain_best(struct ctx *c)
{
	const struct mst *s = &c->best;
	uint64_t minhi = UINT64_MAX;
	int i, shown = 0;

	say(c, "no execution allowed by the rules explains the log; deepest: %d of %d steps. ",
	    c->best_done, c->nsteps);
	say(c, "There: ");
	for (i = 0; i < c->p->nfences; i++)
		say(c, "F%d=%llu ", i, (unsigned long long)s->val[i]);
	say(c, "| ");
	for (i = 0; i < c->nsteps; i++)
		if (!is_done(s, i) && c->steps[i].hi < minhi)
			minhi = c->steps[i].hi;
	for (i = 0; i < c->nsteps && shown < 4; i++) {
		const struct step *st = &c->steps[i];
		struct mst n = *s;

		if (is_done(s, i) || st->lo > minhi)
			continue;
		if (st->pred >= 0 && !is_done(s, st->pred))
			continue;
		if (late(c, s, st->lo)) {
			int k = late_op(c, s, st->lo);

			say(c, "op %d (%s) starts more than %llu ms after queue signal op %d completed, which has not taken effect (R17: no observation has to come first); ",
			    st->op, kind_name(c->p->ops[st->op].kind),
			    (unsigned long long)(M_LATE_NS / 1000000), k);
			shown++;
			continue;
		}
		if (!do_step(c, &n, st, 0, true))
			shown++;
	}
	if (c->best_done == c->nsteps)
		quiescent(c, s, true);
}

void model_check_relaxed(const struct m_prog *p, const struct m_log *l,
			 uint64_t max_states, unsigned relax, struct m_result *r)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct mst s0;
	int i;

	memset(r, 0, sizeof(*r));
	if (!c)
		abort();
	c->p = p;
	c->l = l;
	c->max_states = max_states;
	c->relax = relax;
	c->best_done = -1;
	build_steps(c);
	build_due(c);

	memset(&s0, 0, sizeof(s0));
	for (i = 0; i < p->nfences; i++)
		s0.val[i] = p->finit[i];
	for (i = 0; i < p->nefds; i++)
		s0.eclosed[i] = !p->eopen[i];

	if (search(c, &s0, 0)) {
		r->verdict = M_OK;
	} else if (c->budget || c->overflow) {
		r->verdict = M_UNDECIDED;
		snprintf(r->why, sizeof(r->why), "%s after %llu states",
			 c->overflow ? "model capacity exceeded" :
			 "search budget exhausted",
			 (unsigned long long)c->states);
	} else {
		r->verdict = M_FAIL;
		c->why = r->why;
		c->whylen = sizeof(r->why);
		explain_best(c);
	}
	r->states = c->states;
	free(c->memo.keys);
	free(c);
}

static const char *const relax_names[] = {
	"R4 (queue signals take effect as they complete)", "R17 (causal order)", "R18 (waits need a value the fence takes)",
	"R10/R13 (event counts)", "R8 (engine memory)", "R15 (removal)",
	"shared fences (CPU signals at once)",
};

void model_check(const struct m_prog *p, const struct m_log *l,
		 uint64_t max_states, struct m_result *r)
{
	const unsigned n = sizeof(relax_names) / sizeof(relax_names[0]);
	struct m_result x;
	unsigned k, j;
	bool any = false;

	model_check_relaxed(p, l, max_states, 0, r);
	if (r->verdict != M_FAIL)
		return;
	/* Which one rule, left out, would explain the log? */
	for (k = 0; k < n; k++) {
		model_check_relaxed(p, l, max_states, 1u << k, &x);
		if (x.verdict == M_FAIL)
			continue;
		if (x.verdict == M_OK)
			r->broken |= 1u << k;
		snprintf(r->rules + strlen(r->rules),
			 sizeof(r->rules) - strlen(r->rules), "%s%s%s",
			 any ? ", " : "", relax_names[k],
			 x.verdict == M_OK ? "" : " (undecided)");
		any = true;
	}
	if (any)
		return;
	/* Two defects in one program: which pair? */
	for (k = 0; k < n; k++)
		for (j = k + 1; j < n; j++) {
			model_check_relaxed(p, l, max_states < 100000 ?
					    max_states : 100000,
					    1u << k | 1u << j, &x);
			if (x.verdict != M_OK)
				continue;
			r->broken |= 1u << k | 1u << j;
			snprintf(r->rules + strlen(r->rules),
				 sizeof(r->rules) - strlen(r->rules),
				 "%s%s + %s", any ? "; " : "", relax_names[k],
				 relax_names[j]);
			any = true;
		}
	if (!any)
		snprintf(r->rules, sizeof(r->rules),
			 "no rule or pair of rules left out explains it");
}
