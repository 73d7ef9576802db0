/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference model's programs, their observations and the checker.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * A program is a list of operations on fences, queues and eventfds, each
 * run by one CPU thread (threads 0..nthreads-1 in phase 1, all at once;
 * then thread nthreads, the "main" thread, runs phase 2: release, drain,
 * final reads). The runner (run.c) executes it against libd3dq and fills
 * in the observations; the checker (model.c) decides whether those
 * observations are consistent with some execution that the fence rules
 * R1-R18 allow. Nothing here uses the library: only run.c includes
 * d3dq/d3dq.h. See Documentation/library.rst, "Reference model".
 */
#ifndef D3DQ_TESTS_MODEL_PROG_H
#define D3DQ_TESTS_MODEL_PROG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define M_MAXT 5	/* phase-1 threads (both processes) + main */
#define M_MAXQ 4
#define M_MAXF 8	/* program fences + one drain fence per queue */
#define M_MAXE 12	/* eventfd slots */
#define M_MAXOPS 80
#define M_MAXMULTI 3
#define M_QCAP 32	/* operations per queue */

#define M_MAX UINT64_MAX

/*
 * R17: a completed queue signal takes effect within one wake-up of the
 * library's applier, read or not. The model allows it this long after
 * the clocks show its work done (a generous bound for a loaded host
 * running the VM under TCG), and the generator sometimes sleeps longer
 * than that before a first read.
 */
#define M_LATE_NS 500000000ull
#define M_LAZY_SLEEP_NS 650000000ull

enum m_kind {
	K_CSIG,		/* d3dq_fence_signal(f, v) */
	K_READ,		/* d3dq_fence_get_completed_value(f) */
	K_WAIT,		/* d3dq_fence_wait(f, v, timeout) */
	K_EVENT,	/* d3dq_fence_set_event_on_completion(f, v, efd e) */
	K_BLOCK,	/* d3dq_fence_set_event_on_completion(f, v, -1) */
	K_MULTI,	/* ..._multiple_fence_completion(..., efd e) */
	K_MULTI_BLOCK,	/* ..._multiple_fence_completion(..., -1) */
	K_EVREAD,	/* read(efd e), non-blocking: the counter or 0 */
	K_EVWAIT,	/* poll(efd e, timeout), then as K_EVREAD */
	K_EVCLOSE,	/* close(efd e); efd e2 = eventfd() (same number) */
	K_QSIG,		/* d3dq_queue_signal(q, f, v) */
	K_QWAIT,	/* d3dq_queue_wait(q, f, v) */
	K_EXEC,		/* d3dq_queue_execute(q, one list) */
	K_CPUWRITE,	/* CPU stores a tag into the buffer */
	K_DESTROY,	/* d3dq_fence_destroy(f) */
	K_REMOVE,	/* d3dq_device_remove() */
	K_SLEEP,	/* the thread sleeps timeout_ns */
	K_NKINDS
};

/* Where an execution's copy reads from. */
enum m_src { SRC_NONE, SRC_EXEC, SRC_CPU };

struct m_op {
	uint8_t kind;
	uint8_t thread;
	uint8_t f, q, e, e2;
	uint8_t any;		/* MULTI: ANY instead of ALL */
	uint8_t n;		/* MULTI: count */
	uint8_t mf[M_MAXMULTI];
	uint64_t mv[M_MAXMULTI];
	uint64_t v;
	uint64_t timeout_ns;	/* WAIT, EVWAIT */
	bool sure;		/* WAIT: the value is certain to come (liveness) */
	bool phase2;
	uint8_t stage;		/* phase 2: 1 early drains, 2 release, 3 the rest */
	/* EXEC */
	uint32_t delay_ns;
	uint8_t src_kind;	/* enum m_src */
	uint8_t src;		/* op index of the source EXEC or CPUWRITE */
	bool cas;		/* compare_store64 on the copied value */
	bool tag_cas;		/* tag written with compare_store64(0 -> tag) */
	/* filled by prog_layout() */
	uint16_t slot;		/* EXEC: 4 slots ts0 obs tag ts1; CPUWRITE: 1 */
	uint64_t tag;
};

/*
 * Process 0 makes every object; with nprocs 2, a second process (the
 * "child") imports the shared fences and runs the threads marked so, with
 * its own device, queues and eventfds. Main threads: nthreads (process
 * 0) and nthreads + 1 (process 1).
 */
struct m_prog {
	uint64_t seed;
	uint8_t nthreads;	/* phase-1 threads; main is thread nthreads */
	uint8_t nprocs;
	uint8_t tproc[M_MAXT];	/* process of each thread */
	uint8_t qproc[M_MAXQ], fproc[M_MAXF], eproc[M_MAXE];	/* prog_finish */
	uint8_t nqueues, nfences, nefds;
	uint8_t nuser_fences;	/* fences 0..nuser_fences-1; then drains */
	uint16_t nops;
	uint64_t finit[M_MAXF];
	bool fshared[M_MAXF];	/* D3DQ_FENCE_FLAG_SHARED */
	bool eopen[M_MAXE];	/* open at the start (else made by EVCLOSE) */
	uint16_t nslots;
	uint8_t qsure;		/* queues drained before the release (sure.c) */
	struct m_op ops[M_MAXOPS];
};

/* What the runner saw. Times are CLOCK_MONOTONIC ns, engine ones too. */
struct m_obs {
	uint64_t t0, t1;	/* before the call, after it returned */
	int64_t ret;		/* return value (negative errno or 0) */
	uint64_t val;		/* READ: value; EVREAD/EVWAIT: counter */
	/* EXEC: the buffer after the program */
	uint64_t ts0, obs, tag, ts1;
	int reason;		/* the device's removal reason after the call */
};

struct m_log {
	struct m_obs o[M_MAXOPS];
	bool hang;		/* a sure wait timed out */
	int lost[2];		/* a process's device was removed (its reason)
				 * although the program removed nothing there */
	unsigned int timeouts[2];	/* then: jobs the driver timed out */
	char note[160];
};

static inline int op_proc(const struct m_prog *p, const struct m_op *o)
{
	return p->tproc[o->thread];
}

#define M_TAG_EXEC 0x5e00000000001000ull
#define M_TAG_CPU 0x5e00000000002000ull
#define M_CASMARK (1ull << 40)

/* prog.c */
void prog_layout(struct m_prog *p);
void prog_finish(struct m_prog *p);	/* (re)build phase 2 */
void prog_print(FILE *out, const struct m_prog *p, const struct m_log *l,
		const char *prefix);
const char *kind_name(int kind);
int prog_parse(FILE *in, struct m_prog *p);
int prog_parse_log(FILE *in, const struct m_prog *p, struct m_log *l);

/* gen.c */
struct m_genopts {
	bool removal;		/* may remove the device */
	bool destroy;		/* may destroy fences */
	bool evclose;		/* may close eventfds */
	bool scenarios;		/* may start from a scenario */
	bool shared;		/* may make shared fences */
	bool child;		/* may run a thread in a second process */
	int scenario;		/* 0 at random, else this one (SCEN_*) */
	bool lazy;		/* may sleep past M_LATE_NS before a first read */
	int max_threads, max_queues, max_fences, max_ops;
};
enum { SCEN_RANDOM, SCEN_NONE, SCEN_CAUSAL, SCEN_DISCARD, SCEN_SHARED,
       SCEN_REMOVAL, SCEN_PIPELINE, SCEN_CHAIN, SCEN_PINGPONG, SCEN_LAZY };
/*
 * Several queues wait for and signal one fence, with a wait queued before
 * a signal of another queue that releases it (issue 23's shape).
 */
bool prog_consumers_first(const struct m_prog *p);
void gen_program(struct m_prog *p, uint64_t seed, const struct m_genopts *o);
uint64_t rng_next(uint64_t *s);

/* sure.c: mark waits whose value surely comes; 0 or -1 if a blocking op
 * (BLOCK, MULTI_BLOCK) is not sure. */
int prog_sure(struct m_prog *p);

/* model.c */
enum m_verdict { M_OK, M_FAIL, M_UNDECIDED };
/* Rules the diagnosis leaves out one at a time. */
enum {
	M_RELAX_R4 = 1, M_RELAX_R17 = 2, M_RELAX_R18 = 4, M_RELAX_EVENTS = 8,
	M_RELAX_MEMORY = 16, M_RELAX_REMOVAL = 32, M_RELAX_SHARED = 64,
};
struct m_result {
	enum m_verdict verdict;
	uint64_t states;
	char why[512];		/* the deepest explanation tried, and why not */
	unsigned broken;	/* M_RELAX_*: leaving one of these out explains it */
	char rules[160];
};
void model_check(const struct m_prog *p, const struct m_log *l,
		 uint64_t max_states, struct m_result *r);
/* Without the rules in @relax (M_RELAX_*), no diagnosis. */
void model_check_relaxed(const struct m_prog *p, const struct m_log *l,
			 uint64_t max_states, unsigned relax,
			 struct m_result *r);

#endif
