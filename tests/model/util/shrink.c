// SPDX-License-Identifier: GPL-2.0
/*
 * Editing programs: removing operations, threads and unused objects, for
 * shrinking a failing program.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <string.h>

#include "prog.h"
#include "shrink.h"

/* Remove phase-1 op i, fixing references to it and after it. */
static void drop_op(struct m_prog *p, int i)
{
	int j;

	if (p->ops[i].kind == K_EVCLOSE)
		p->eopen[p->ops[i].e2] = true;
	for (j = 0; j < p->nops; j++) {
		struct m_op *o = &p->ops[j];

		if (o->kind != K_EXEC || !o->src_kind)
			continue;
		if (o->src == i)
			o->src_kind = SRC_NONE, o->cas = false;
		else if (o->src > i)
			o->src--;
	}
	memmove(&p->ops[i], &p->ops[i + 1],
		(p->nops - i - 1) * sizeof(p->ops[0]));
	p->nops--;
}

/* Renumber threads, queues, fences and eventfds that are still used. */
static void compact(struct m_prog *p)
{
	int tmap[M_MAXT], qmap[M_MAXQ], fmap[M_MAXF], emap[M_MAXE];
	uint64_t finit[M_MAXF];
	bool fshared[M_MAXF], eopen[M_MAXE];
	int i, j, n;

	for (i = 0; i < M_MAXT; i++)
		tmap[i] = -1;
	for (i = 0; i < M_MAXQ; i++)
		qmap[i] = -1;
	for (i = 0; i < M_MAXF; i++)
		fmap[i] = -1;
	for (i = 0; i < M_MAXE; i++)
		emap[i] = -1;
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->phase2)
			continue;
		tmap[o->thread] = 0;
		switch (o->kind) {
		case K_QSIG: case K_QWAIT: case K_EXEC:
			qmap[o->q] = 0;
			break;
		}
		switch (o->kind) {
		case K_CSIG: case K_READ: case K_WAIT: case K_EVENT:
		case K_BLOCK: case K_QSIG: case K_QWAIT: case K_DESTROY:
			fmap[o->f] = 0;
			break;
		case K_MULTI: case K_MULTI_BLOCK:
			for (j = 0; j < o->n; j++)
				fmap[o->mf[j]] = 0;
			break;
		}
		switch (o->kind) {
		case K_EVENT: case K_MULTI: case K_EVREAD: case K_EVWAIT:
			emap[o->e] = 0;
			break;
		case K_EVCLOSE:
			emap[o->e] = emap[o->e2] = 0;
			break;
		}
	}
	{
		uint8_t tproc[M_MAXT] = { 0 };

		p->nprocs = 1;
		for (i = n = 0; i < p->nthreads; i++)
			if (!tmap[i]) {
				tproc[n] = p->tproc[i];
				if (tproc[n])
					p->nprocs = 2;
				tmap[i] = n++;
			}
		p->nthreads = n ? n : 1;
		memcpy(p->tproc, tproc, sizeof(tproc));
	}
	for (i = n = 0; i < p->nqueues; i++)
		if (!qmap[i])
			qmap[i] = n++;
	p->nqueues = n;
	for (i = n = 0; i < p->nuser_fences; i++)
		if (!fmap[i]) {
			finit[n] = p->finit[i];
			fshared[n] = p->fshared[i];
			fmap[i] = n++;
		}
	p->nuser_fences = n;
	memcpy(p->finit, finit, n * sizeof(finit[0]));
	memcpy(p->fshared, fshared, n * sizeof(fshared[0]));
	for (i = n = 0; i < p->nefds; i++)
		if (!emap[i]) {
			eopen[n] = p->eopen[i];
			emap[i] = n++;
		}
	p->nefds = n;
	memcpy(p->eopen, eopen, n * sizeof(eopen[0]));
	for (i = 0; i < p->nops; i++) {
		struct m_op *o = &p->ops[i];

		if (o->phase2)
			continue;
		o->thread = tmap[o->thread];
		switch (o->kind) {
		case K_QSIG: case K_QWAIT: case K_EXEC:
			o->q = qmap[o->q];
			break;
		}
		switch (o->kind) {
		case K_CSIG: case K_READ: case K_WAIT: case K_EVENT:
		case K_BLOCK: case K_QSIG: case K_QWAIT: case K_DESTROY:
			o->f = fmap[o->f];
			break;
		case K_MULTI: case K_MULTI_BLOCK:
			for (j = 0; j < o->n; j++)
				o->mf[j] = fmap[o->mf[j]];
			break;
		}
		switch (o->kind) {
		case K_EVENT: case K_MULTI: case K_EVREAD: case K_EVWAIT:
			o->e = emap[o->e];
			break;
		case K_EVCLOSE:
			o->e = emap[o->e];
			o->e2 = emap[o->e2];
			break;
		}
	}
}

/* Make @p runnable again after an edit: phase 2, certainty of waits. */
void prog_fixup(struct m_prog *p)
{
	int i, n = 0;

	for (i = 0; i < p->nops; i++)
		if (!p->ops[i].phase2)
			p->ops[n++] = p->ops[i];
	p->nops = n;
	compact(p);
	prog_finish(p);
	for (i = 0; i < p->nops; i++) {
		struct m_op *o = &p->ops[i];

		/* sure waits get decided again */
		if (!o->phase2 && o->kind == K_WAIT && o->sure)
			o->timeout_ns = M_MAX;
	}
	prog_sure(p);
}

int prog_phase1_ops(const struct m_prog *p)
{
	int i, n = 0;

	for (i = 0; i < p->nops; i++)
		n += !p->ops[i].phase2;
	return n;
}

/*
 * Candidate edit number @k of @p, written to @out: 0 when there is no
 * such edit. Threads first, then single operations from the last one,
 * then simplifications of executions.
 */
int prog_edit(const struct m_prog *p, int k, struct m_prog *out)
{
	int n1 = prog_phase1_ops(p), i, t;

	*out = *p;
	if (k < p->nthreads && p->nthreads > 1) {
		t = k;
		for (i = out->nops - 1; i >= 0; i--)
			if (!out->ops[i].phase2 && out->ops[i].thread == t)
				drop_op(out, i);
		prog_fixup(out);
		return 1;
	}
	k -= p->nthreads;
	if (k < n1) {
		drop_op(out, n1 - 1 - k);
		prog_fixup(out);
		return 1;
	}
	k -= n1;
	for (i = 0; i < n1; i++) {
		struct m_op *o = &out->ops[i];

		if (o->kind != K_EXEC)
			continue;
		if (o->delay_ns && k-- == 0) {
			o->delay_ns = 0;
			prog_fixup(out);
			return 1;
		}
		if ((o->tag_cas || o->cas) && k-- == 0) {
			o->tag_cas = o->cas = false;
			prog_fixup(out);
			return 1;
		}
	}
	return 0;
}
