// SPDX-License-Identifier: GPL-2.0
/*
 * Programs of the reference model: layout, phase 2, text form.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

static const char *const names[K_NKINDS] = {
	[K_CSIG] = "csig", [K_READ] = "read", [K_WAIT] = "wait",
	[K_EVENT] = "event", [K_BLOCK] = "block", [K_MULTI] = "multi",
	[K_MULTI_BLOCK] = "multiblock", [K_EVREAD] = "evread",
	[K_EVWAIT] = "evwait", [K_EVCLOSE] = "evclose", [K_QSIG] = "qsig",
	[K_QWAIT] = "qwait", [K_EXEC] = "exec", [K_CPUWRITE] = "cpuwrite",
	[K_DESTROY] = "destroy", [K_REMOVE] = "remove", [K_SLEEP] = "sleep",
};

const char *kind_name(int kind)
{
	return kind >= 0 && kind < K_NKINDS ? names[kind] : "?";
}

void prog_layout(struct m_prog *p)
{
	uint16_t slot = 0;
	int i;

	for (i = 0; i < p->nops; i++) {
		struct m_op *o = &p->ops[i];

		if (o->kind == K_EXEC) {
			o->slot = slot;
			o->tag = M_TAG_EXEC + i;
			slot += 4;
		}
	}
	for (i = 0; i < p->nops; i++) {
		struct m_op *o = &p->ops[i];

		if (o->kind == K_CPUWRITE) {
			o->slot = slot++;
			o->tag = M_TAG_CPU + i;
		}
	}
	p->nslots = slot;
}

static struct m_op *append(struct m_prog *p, int kind, int proc, int stage)
{
	struct m_op *o;

	if (p->nops >= M_MAXOPS)
		return NULL;
	o = &p->ops[p->nops++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->thread = p->nthreads + proc;
	o->phase2 = true;
	o->stage = stage;
	return o;
}

static void drain(struct m_prog *p, bool before_release)
{
	struct m_op *o;
	int i, stage = before_release ? 1 : 3;

	for (i = 0; i < p->nqueues; i++) {
		if (!(p->qsure >> i & 1) != !before_release)
			continue;
		if (!(o = append(p, K_QSIG, p->qproc[i], stage)))
			continue;
		o->q = i;
		o->f = p->nuser_fences + i;
		o->v = 1;
	}
	for (i = 0; i < p->nqueues; i++) {
		if (!(p->qsure >> i & 1) != !before_release)
			continue;
		if (!(o = append(p, K_WAIT, p->qproc[i], stage)))
			continue;
		o->f = p->nuser_fences + i;
		o->v = 1;
		o->sure = true;
	}
}

/* Which process each queue, fence and eventfd belongs to. */
static void owners(struct m_prog *p, bool used[2][M_MAXF])
{
	int i, j;

	memset(p->qproc, 0, sizeof(p->qproc));
	memset(p->fproc, 0, sizeof(p->fproc));
	memset(p->eproc, 0, sizeof(p->eproc));
	memset(used, 0, 2 * M_MAXF * sizeof(bool));
	if (p->nprocs < 1)
		p->nprocs = 1;
	p->tproc[p->nthreads] = 0;
	p->tproc[p->nthreads + 1] = 1;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		int pr = op_proc(p, o);

		switch (o->kind) {
		case K_QSIG: case K_QWAIT: case K_EXEC:
			p->qproc[o->q] = pr;
		}
		switch (o->kind) {
		case K_EVENT: case K_MULTI: case K_EVREAD: case K_EVWAIT:
			p->eproc[o->e] = pr;
			break;
		case K_EVCLOSE:
			p->eproc[o->e] = p->eproc[o->e2] = pr;
			break;
		}
		switch (o->kind) {
		case K_CSIG: case K_READ: case K_WAIT: case K_EVENT:
		case K_BLOCK: case K_QSIG: case K_QWAIT: case K_DESTROY:
			used[pr][o->f] = true;
			if (!p->fshared[o->f])
				p->fproc[o->f] = pr;
			break;
		case K_MULTI: case K_MULTI_BLOCK:
			for (j = 0; j < o->n; j++) {
				used[pr][o->mf[j]] = true;
				if (!p->fshared[o->mf[j]])
					p->fproc[o->mf[j]] = pr;
			}
			break;
		}
	}
	for (i = 0; i < p->nqueues; i++)
		p->fproc[p->nuser_fences + i] = p->qproc[i];
}

/*
 * Phase 2, on the main threads once the others have returned, in three
 * stages with both processes in step: (1) drain the queues that certainly
 * progress (p->qsure: their pending signals take effect before anything
 * else happens, so a promise a wait made on them is checked before the
 * release could satisfy that wait); (2) release every fence (a CPU
 * signal of UINT64_MAX satisfies every queue wait); (3) drain the other
 * queues (a signal of its drain fence, waited for with the guard
 * timeout), read every fence and every open eventfd.
 */
void prog_finish(struct m_prog *p)
{
	bool dead[M_MAXF] = { false }, open[M_MAXE], used[2][M_MAXF];
	struct m_op *o;
	int i, n = 0, pr;

	for (i = 0; i < p->nops; i++)
		if (!p->ops[i].phase2)
			p->ops[n++] = p->ops[i];
	p->nops = n;
	p->nfences = p->nuser_fences + p->nqueues;
	for (i = p->nuser_fences; i < p->nfences; i++) {
		p->finit[i] = 0;
		p->fshared[i] = false;
	}
	owners(p, used);
	for (i = 0; i < p->nefds; i++)
		open[i] = p->eopen[i];
	for (i = 0; i < p->nops; i++) {
		const struct m_op *x = &p->ops[i];

		if (x->kind == K_DESTROY)
			dead[x->f] = true;
		if (x->kind == K_EVCLOSE) {
			open[x->e] = false;
			open[x->e2] = true;
		}
	}
	drain(p, true);
	for (i = 0; i < p->nuser_fences; i++) {
		if (dead[i] || !(o = append(p, K_CSIG, p->fproc[i], 2)))
			continue;
		o->f = i;
		o->v = M_MAX;
		/*
		 * The child releases every shared fence too (it imported
		 * them all): its events and held waits on a value another
		 * process brought fire on its worker's next wake-up
		 * (library.rst, Shared fences), which may come after its
		 * last observation; its own signal of the value fires them
		 * during the call.
		 */
		if (p->fshared[i] && p->nprocs > 1 &&
		    (o = append(p, K_CSIG, 1, 2))) {
			o->f = i;
			o->v = M_MAX;
		}
	}
	drain(p, false);
	for (pr = 0; pr < p->nprocs; pr++) {
		for (i = 0; i < p->nfences; i++) {
			bool mine = p->fshared[i] ? pr == 0 || used[1][i] :
				    p->fproc[i] == pr;

			if (dead[i] || !mine || !(o = append(p, K_READ, pr, 3)))
				continue;
			o->f = i;
		}
		for (i = 0; i < p->nefds; i++) {
			if (!open[i] || p->eproc[i] != pr ||
			    !(o = append(p, K_EVREAD, pr, 3)))
				continue;
			o->e = i;
		}
	}
	prog_layout(p);
}

static void pval(FILE *out, uint64_t v)
{
	if (v == M_MAX)
		fputs("max", out);
	else if (v > 1000000)
		fprintf(out, "%#" PRIx64, v);
	else
		fprintf(out, "%" PRIu64, v);
}

void prog_print(FILE *out, const struct m_prog *p, const struct m_log *l,
		const char *prefix)
{
	uint64_t base = UINT64_MAX;
	int i, j;

	if (l)
		for (i = 0; i < p->nops; i++)
			if (l->o[i].t0 && l->o[i].t0 < base)
				base = l->o[i].t0;
	fprintf(out, "%sprogram seed=%#" PRIx64 " threads=%d queues=%d fences=%d efds=%d\n",
		prefix, p->seed, p->nthreads, p->nqueues, p->nuser_fences,
		p->nefds);
	for (i = 0; i < p->nuser_fences; i++) {
		fprintf(out, "%sfence F%d init ", prefix, i);
		pval(out, p->finit[i]);
		fputs(p->fshared[i] ? " shared\n" : "\n", out);
	}
	for (i = 0; i < p->nefds; i++)
		if (!p->eopen[i])
			fprintf(out, "%sefd E%d closed\n", prefix, i);
	for (i = 0; i < p->nthreads; i++)
		if (p->tproc[i])
			fprintf(out, "%sthread t%d child\n", prefix, i);
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		const struct m_obs *ob = l ? &l->o[i] : NULL;

		if (o->phase2 && !ob)
			continue;
		fprintf(out, "%s%s%-3d ", prefix, o->phase2 ? "#m " : "", i);
		if (o->phase2)
			fprintf(out, "m%d ", op_proc(p, o));
		else
			fprintf(out, "t%d ", o->thread);
		fputs(kind_name(o->kind), out);
		switch (o->kind) {
		case K_CSIG: case K_WAIT: case K_BLOCK: case K_QSIG:
		case K_QWAIT: case K_EVENT:
			if (o->kind == K_QSIG || o->kind == K_QWAIT)
				fprintf(out, " Q%d", o->q);
			fprintf(out, " F%d ", o->f);
			pval(out, o->v);
			if (o->kind == K_EVENT)
				fprintf(out, " E%d", o->e);
			if (o->kind == K_WAIT) {
				if (o->sure)
					fputs(" sure", out);
				else
					fprintf(out, " timeout=%" PRIu64, o->timeout_ns);
			}
			break;
		case K_READ: case K_DESTROY:
			fprintf(out, " F%d", o->f);
			break;
		case K_MULTI: case K_MULTI_BLOCK:
			fputs(o->any ? " any" : " all", out);
			for (j = 0; j < o->n; j++) {
				fprintf(out, " F%d>=", o->mf[j]);
				pval(out, o->mv[j]);
			}
			if (o->kind == K_MULTI)
				fprintf(out, " E%d", o->e);
			break;
		case K_EVREAD:
			fprintf(out, " E%d", o->e);
			break;
		case K_EVWAIT:
			fprintf(out, " E%d timeout=%" PRIu64, o->e, o->timeout_ns);
			break;
		case K_SLEEP:
			fprintf(out, " timeout=%" PRIu64, o->timeout_ns);
			break;
		case K_EVCLOSE:
			fprintf(out, " E%d E%d", o->e, o->e2);
			break;
		case K_EXEC:
			fprintf(out, " Q%d", o->q);
			if (o->delay_ns)
				fprintf(out, " delay=%u", o->delay_ns);
			if (o->src_kind)
				fprintf(out, " copy=%d", o->src);
			if (o->cas)
				fputs(" cas", out);
			if (o->tag_cas)
				fputs(" tagcas", out);
			break;
		}
		if (ob) {
			fprintf(out, "   # %" PRIu64 "..%" PRIu64 " us ret=%" PRId64,
				(ob->t0 - base) / 1000, (ob->t1 - base) / 1000,
				ob->ret);
			if (ob->reason)
				fprintf(out, " reason=%d", ob->reason);
			if (o->kind == K_READ || o->kind == K_EVREAD ||
			    o->kind == K_EVWAIT) {
				fputs(" val=", out);
				pval(out, ob->val);
			}
			if (o->kind == K_EXEC) {
				if (ob->tag == o->tag)
					fprintf(out, " ran %" PRIu64 "..%" PRIu64 " us",
						ob->ts0 > base ? (ob->ts0 - base) / 1000 : 0,
						ob->ts1 > base ? (ob->ts1 - base) / 1000 : 0);
				else
					fprintf(out, " not run (tag %#" PRIx64 " ts0 %s)",
						ob->tag, ob->ts0 ? "set" : "0");
				if (o->src_kind)
					fprintf(out, " obs=%#" PRIx64, ob->obs);
			}
		}
		fputc('\n', out);
	}
}

/*
 * Issue 23's shape: on one fence, at least two queues signal, and a queue
 * wait is queued before a signal of another queue that can release it.
 */
bool prog_consumers_first(const struct m_prog *p)
{
	int f, i, j, q;

	for (f = 0; f < p->nuser_fences; f++) {
		unsigned qs = 0;
		bool first = false;

		for (i = 0; i < p->nops; i++) {
			const struct m_op *w = &p->ops[i];

			if (w->phase2 || w->f != f)
				continue;
			if (w->kind == K_QSIG)
				qs |= 1u << w->q;
			if (w->kind != K_QWAIT)
				continue;
			for (j = i + 1; j < p->nops && !first; j++) {
				const struct m_op *s = &p->ops[j];

				first = !s->phase2 && s->kind == K_QSIG &&
					s->f == f && s->q != w->q && s->v >= w->v;
			}
		}
		for (q = 0; first && q < M_MAXQ; q++)
			if (qs >> q & 1 && qs & ~(1u << q))
				return true;
	}
	return false;
}

/* --- parsing the text form back (for --load) -------------------------- */

static int num(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "max")) {
		*v = M_MAX;
		return 0;
	}
	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

static int idx(const char *s, char c, uint8_t *v)
{
	uint64_t x;

	if (s[0] != c || num(s + 1, &x))
		return -1;
	*v = x;
	return 0;
}

int prog_parse(FILE *in, struct m_prog *p)
{
	char line[512];
	int maxq = -1, maxf = -1, maxe = -1, maxt = -1;

	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), in)) {
		char *tok[24], *s = line, *hash;
		int n = 0, k;
		struct m_op *o;

		while (*s == '#' || isspace((unsigned char)*s))
			s++;
		hash = strchr(s, '#');
		if (hash)
			*hash = 0;
		for (char *t = strtok(s, " \t\n"); t && n < 24;
		     t = strtok(NULL, " \t\n"))
			tok[n++] = t;
		if (!n)
			continue;
		if (!strcmp(tok[0], "program")) {
			/* the counts, also of objects no operation uses */
			for (k = 1; k < n; k++) {
				int x = strchr(tok[k], '=') ?
					atoi(strchr(tok[k], '=') + 1) : 0;

				if (!strncmp(tok[k], "seed=", 5))
					p->seed = strtoull(tok[k] + 5, NULL, 0);
				else if (!strncmp(tok[k], "threads=", 8))
					maxt = x - 1;
				else if (!strncmp(tok[k], "queues=", 7))
					maxq = x - 1;
				else if (!strncmp(tok[k], "fences=", 7))
					maxf = x - 1;
				else if (!strncmp(tok[k], "efds=", 5))
					maxe = x - 1;
			}
			continue;
		}
		if (!strcmp(tok[0], "fence") && n >= 4) {
			uint8_t f;

			if (idx(tok[1], 'F', &f) || f >= M_MAXF ||
			    num(tok[3], &p->finit[f]))
				return -1;
			p->fshared[f] = n >= 5 && !strcmp(tok[4], "shared");
			if (f > maxf)
				maxf = f;
			continue;
		}
		if (!strcmp(tok[0], "thread") && n >= 3) {
			uint8_t t;

			if (idx(tok[1], 't', &t) || t >= M_MAXT)
				return -1;
			p->tproc[t] = 1;
			p->nprocs = 2;
			continue;
		}
		if (!strcmp(tok[0], "efd") && n >= 3) {
			uint8_t e;

			if (idx(tok[1], 'E', &e) || e >= M_MAXE)
				return -1;
			/* closed at the start: made by an evclose, below */
			if (e > maxe)
				maxe = e;
			continue;
		}
		/* "<index> t<thread> <kind> args" (phase 2 is rebuilt) */
		if (n < 3 || !isdigit((unsigned char)tok[0][0]))
			continue;
		if (tok[1][0] != 't')
			continue;
		if (p->nops >= M_MAXOPS)
			return -1;
		o = &p->ops[p->nops];
		memset(o, 0, sizeof(*o));
		if (idx(tok[1], 't', &o->thread) || o->thread >= M_MAXT - 1)
			return -1;
		for (k = 0; k < K_NKINDS; k++)
			if (!strcmp(tok[2], names[k]))
				break;
		if (k == K_NKINDS)
			return -1;
		o->kind = k;
		for (k = 3; k < n; k++) {
			char *t = tok[k];
			uint64_t x;

			if (t[0] == 'Q') {
				if (idx(t, 'Q', &o->q))
					return -1;
				if (o->q > maxq)
					maxq = o->q;
			} else if (t[0] == 'F' && strstr(t, ">=")) {
				if (o->n >= M_MAXMULTI)
					return -1;
				o->mf[o->n] = strtoul(t + 1, NULL, 10);
				if (num(strstr(t, ">=") + 2, &o->mv[o->n]))
					return -1;
				if (o->mf[o->n] > maxf)
					maxf = o->mf[o->n];
				o->n++;
			} else if (t[0] == 'F') {
				if (idx(t, 'F', &o->f))
					return -1;
				if (o->f > maxf)
					maxf = o->f;
			} else if (t[0] == 'E') {
				uint8_t e;

				if (idx(t, 'E', &e))
					return -1;
				if (o->kind == K_EVCLOSE && k == 4)
					o->e2 = e;
				else
					o->e = e;
				if (e > maxe)
					maxe = e;
			} else if (!strcmp(t, "any")) {
				o->any = 1;
			} else if (!strcmp(t, "all")) {
				o->any = 0;
			} else if (!strcmp(t, "sure")) {
				o->sure = true;
			} else if (!strcmp(t, "cas")) {
				o->cas = true;
			} else if (!strcmp(t, "tagcas")) {
				o->tag_cas = true;
			} else if (!strncmp(t, "timeout=", 8)) {
				o->timeout_ns = strtoull(t + 8, NULL, 0);
			} else if (!strncmp(t, "delay=", 6)) {
				o->delay_ns = strtoul(t + 6, NULL, 0);
			} else if (!strncmp(t, "copy=", 5)) {
				o->src = strtoul(t + 5, NULL, 0);
				o->src_kind = SRC_EXEC;
			} else if (!num(t, &x)) {
				o->v = x;
			} else {
				return -1;
			}
		}
		if (o->thread > maxt)
			maxt = o->thread;
		p->nops++;
	}
	if (maxt < 0)
		return -1;
	p->nthreads = maxt + 1;
	if (p->nthreads + p->nprocs > M_MAXT)
		return -1;
	p->nqueues = maxq + 1;
	p->nuser_fences = maxf + 1;
	p->nefds = maxe + 1;
	for (int i = 0; i < p->nops; i++) {
		struct m_op *o = &p->ops[i];

		/* copy= names an op index: an exec or a CPU write */
		if (o->src_kind && o->src < p->nops &&
		    p->ops[o->src].kind == K_CPUWRITE)
			o->src_kind = SRC_CPU;
	}
	for (int e = 0; e < p->nefds; e++) {
		bool made = false;

		for (int i = 0; i < p->nops; i++)
			if (p->ops[i].kind == K_EVCLOSE && p->ops[i].e2 == e)
				made = true;
		p->eopen[e] = !made;
	}
	if (p->nthreads + 1 > M_MAXT || p->nqueues > M_MAXQ ||
	    p->nuser_fences + p->nqueues > M_MAXF || p->nefds > M_MAXE)
		return -1;
	prog_finish(p);
	return 0;
}

/*
 * The observations printed after the operations ("# T0..T1 us ret=R
 * reason=D val=V ran A..B us obs=X", reason only when not 0): times come
 * back in microseconds from the program's first call, which is all the
 * checker needs (it only compares them). Returns the number of operations
 * with an observation.
 */
int prog_parse_log(FILE *in, const struct m_prog *p, struct m_log *l)
{
	char line[512];
	int n = 0;

	memset(l, 0, sizeof(*l));
	while (fgets(line, sizeof(line), in)) {
		char *s = line, *c, *x;
		unsigned long long a, b;
		long long ret;
		uint64_t v;
		int i;

		while (*s == '#' || *s == 'm' || isspace((unsigned char)*s))
			s++;
		if (!isdigit((unsigned char)*s))
			continue;
		i = strtol(s, NULL, 10);
		c = strstr(s, "   # ");
		if (!c || i < 0 || i >= p->nops)
			continue;
		c += 5;
		if (sscanf(c, "%llu..%llu us ret=%lld", &a, &b, &ret) != 3)
			continue;
		/* +1: a time of 0 means "never called" to the printer */
		l->o[i].t0 = a * 1000 + 1000;
		l->o[i].t1 = b * 1000 + 1999;
		l->o[i].ret = ret;
		if ((x = strstr(c, " reason=")))
			l->o[i].reason = (int)strtol(x + 8, NULL, 10);
		if ((x = strstr(c, " val="))) {
			char tok[32];

			if (sscanf(x + 5, "%31s", tok) == 1 && !num(tok, &v))
				l->o[i].val = v;
		}
		if ((x = strstr(c, " ran ")) &&
		    sscanf(x + 5, "%llu..%llu", &a, &b) == 2) {
			l->o[i].tag = p->ops[i].tag;
			l->o[i].ts0 = a * 1000 + 1000;
			l->o[i].ts1 = b * 1000 + 1999;
		}
		if ((x = strstr(c, " not run (tag "))) {
			char tok[32];

			if (sscanf(x + 14, "%31s", tok) == 1 && !num(tok, &v))
				l->o[i].tag = v;
			l->o[i].ts0 = strstr(x, "ts0 set") ? 1 : 0;
		}
		if ((x = strstr(c, " obs="))) {
			char tok[32];

			if (sscanf(x + 5, "%31s", tok) == 1 && !num(tok, &v))
				l->o[i].obs = v;
		}
		n++;
	}
	return n;
}
