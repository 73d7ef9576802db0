// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized checking of libd3dq against the reference model of the
 * fence rules R1-R18 (Documentation/library.rst, "Reference model").
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Without arguments (as in "make check"): as many random programs as fit
 * in D3DQ_MODEL_SECONDS (default 120; at least D3DQ_MODEL_MIN_PROGRAMS,
 * default 1,000, are expected), or
 * D3DQ_MODEL_PROGRAMS programs, from the seed D3DQ_MODEL_SEED (default:
 * random, printed).
 * Each program runs against the library on the real module, and its log
 * is checked against the model. A failing program is run again to measure
 * how often it fails (the interleaving is the machine's), then shrunk and
 * printed. TAP: 1 every program is consistent with the model, 2 no
 * certain wait hung, 3 the checker decided (almost) every program.
 *
 *   rules --replay SEED [--runs N]   one program again, N times
 *   rules --load FILE [--runs N]     a program in the printed text form
 *   rules --print SEED               print a program, run nothing
 *   rules --check FILE               check a printed program and its
 *                                    observations again (no device)
 * Other options: --programs N, --seconds S, --seed S, --states N (search
 * budget per program), --guard-ms MS, --shrink-seconds S, --no-shrink,
 * --verbose, --without LIST (D3DQ_MODEL_WITHOUT: generator features left
 * out, comma-separated: removal, destroy, evclose, scenarios, shared,
 * child, lazy), --scenario
 * causal|discard|shared|removal|pipeline|chain|pingpong|lazy|none (every
 * program starts with that).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/prog.h"
#include "util/run.h"
#include "util/shrink.h"

/* "make check": as many programs as fit in this, and at least... */
#define DEFAULT_SECONDS 120
#define MIN_PROGRAMS 1000
/* ...and failures are investigated while the whole run is below this. */
#define INVESTIGATE_SECONDS 210
#define MAX_INVESTIGATE 3

struct cfg {
	uint64_t programs, seconds, seed, states, guard_ms, shrink_seconds;
	uint64_t min_programs;
	uint64_t replay, runs, investigate_until;
	const char *load, *print, *without, *check;
	bool have_seed, no_shrink, verbose, replay_mode;
	int scenario;
};

static struct cfg cfg = {
	.programs = UINT64_MAX,
	.seconds = DEFAULT_SECONDS,
	.min_programs = MIN_PROGRAMS,
	.states = 300000,
	.guard_ms = 20000,
	.shrink_seconds = 90,
	.runs = 20,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	return rng_next(&x);
}

static bool without(const char *feature)
{
	const char *w = cfg.without;
	size_t n = strlen(feature);

	while (w && *w) {
		if (!strncmp(w, feature, n) && (w[n] == ',' || !w[n]))
			return true;
		w = strchr(w, ',');
		w = w ? w + 1 : NULL;
	}
	return false;
}

static void genopts(uint64_t seed, struct m_genopts *o)
{
	memset(o, 0, sizeof(*o));
	o->removal = seed % 8 == 0 && !without("removal");
	o->destroy = !without("destroy");
	o->evclose = !without("evclose");
	o->scenarios = !without("scenarios");
	o->shared = !without("shared");
	o->child = !without("child") && o->shared;
	o->lazy = !without("lazy");
	o->scenario = cfg.scenario;
	if (cfg.scenario == SCEN_REMOVAL)
		o->removal = true;
	o->max_threads = 3;
	o->max_queues = 3;
	o->max_fences = 3;
	o->max_ops = 12;
}

struct outcome {
	struct m_log log;
	struct m_result res;
	int setup;		/* run_program()'s error */
};

/*
 * A device was lost and the driver had timed out a job of that process:
 * R15 allows that removal (a job ran past the job timeout), which only a
 * guest starved for seconds by a loaded host causes here. The program
 * says nothing about the library; it is counted as void.
 */
static bool timed_out(const struct m_log *l)
{
	return (l->lost[0] && l->timeouts[0]) || (l->lost[1] && l->timeouts[1]);
}

static bool lost(const struct m_log *l)
{
	return (l->lost[0] || l->lost[1]) && !timed_out(l);
}

static bool failed(const struct outcome *oc)
{
	if (timed_out(&oc->log))
		return false;
	return oc->setup || oc->log.hang || lost(&oc->log) ||
	       oc->res.verdict == M_FAIL;
}

/*
 * The kernel's two ways to run a job: inside SUBMIT when nothing stands
 * before it, or through the queue's scheduler (uapi.rst, "Direct
 * submission"). One program in four, chosen by its seed (so that a
 * replay takes the same way), runs with the module parameter
 * direct_submit off, every job through the scheduler; the others with
 * it on. Where the parameter cannot be written (not root, or an older
 * module), every program takes whatever the module does.
 */
#define DIRECT_PARAM "/sys/module/d3dq/parameters/direct_submit"

static bool scheduler_only(const struct m_prog *p)
{
	return (p->seed >> 5) % 4 == 0;
}

static bool set_kernel_path(const struct m_prog *p)
{
	static bool unwritable;
	const char *v = p && scheduler_only(p) ? "0" : "1";
	int fd;

	if (unwritable)
		return false;
	fd = open(DIRECT_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, v, 1) != 1)
		unwritable = true;
	if (fd >= 0)
		close(fd);
	return !unwritable;
}

static bool path_set;	/* set_kernel_path() worked */

static int run_on_path(struct runner *r, const struct m_prog *p,
		       struct m_log *log)
{
	path_set = set_kernel_path(p);
	return run_program(r, p, log);
}

static void run_one(struct runner *r, const struct m_prog *p,
		    struct outcome *oc)
{
	memset(&oc->res, 0, sizeof(oc->res));
	oc->setup = run_on_path(r, p, &oc->log);
	if (oc->setup)
		return;
	model_check(p, &oc->log, cfg.states, &oc->res);
}

/* The observation the model could not explain, without the state. */
static const char *why_short(const char *why)
{
	const char *bar = strchr(why, '|');

	return bar ? bar + 2 : why;
}

static void report(const struct m_prog *p, const struct outcome *oc,
		   const char *what)
{
	printf("# %s (program seed %#" PRIx64 "):\n", what, p->seed);
	if (path_set)
		printf("#   kernel: %s\n", scheduler_only(p) ?
		       "every job through the scheduler (direct_submit=0)" :
		       "direct submission on (direct_submit=1)");
	if (oc->setup)
		printf("#   setup failed: %s\n", strerror(-oc->setup));
	if (oc->log.hang)
		printf("#   HANG: a wait that the rules say must return timed out after %" PRIu64 " ms\n",
		       cfg.guard_ms);
	for (int k = 0; k < 2; k++)
		if (oc->log.lost[k])
			printf("#   LOST: process %d's device was removed (%s) although the program removes nothing there\n",
			       k, strerror(-oc->log.lost[k]));
	if (oc->res.verdict == M_FAIL) {
		printf("#   MODEL: %s\n", oc->res.why);
		printf("#   BROKEN: %s\n", oc->res.rules);
	}
	prog_print(stdout, p, &oc->log, "#   ");
	fflush(stdout);
}

/* Run @p up to @tries times; true (and *oc) at the first failure. */
static bool fails_within(struct runner *r, const struct m_prog *p, int tries,
			 struct outcome *oc)
{
	while (tries-- > 0) {
		run_one(r, p, oc);
		if (failed(oc))
			return true;
	}
	return false;
}

static double t_start;

static void shrink(struct runner *r, const struct m_prog *p, double rate)
{
	static struct m_prog best, cand;
	static struct outcome oc, boc;
	double end = now_s() + cfg.shrink_seconds;

	if (cfg.investigate_until != UINT64_MAX &&
	    end > t_start + cfg.investigate_until)
		end = t_start + cfg.investigate_until;
	int tries = rate > 0 ? (int)(4 / rate) + 1 : 40, k;
	bool improved = true, have = false;

	if (tries < 3)
		tries = 3;
	if (tries > 60)
		tries = 60;
	best = *p;
	while (improved && now_s() < end) {
		improved = false;
		for (k = 0; now_s() < end; k++) {
			if (!prog_edit(&best, k, &cand))
				break;
			if (fails_within(r, &cand, tries, &oc)) {
				best = cand;
				boc = oc;
				have = improved = true;
				k--;
			}
		}
	}
	if (have)
		report(&best, &boc, "shrunk to");
	else
		printf("# no smaller program failed (%d tries per candidate)\n",
		       tries);
}

/* A failure: how often does it fail again, and a smaller program. */
static void investigate(struct runner *r, const struct m_prog *p)
{
	static struct outcome oc;
	uint64_t i, n = 0;

	printf("# investigating program seed %#" PRIx64 "\n", p->seed);
	for (i = 0; i < cfg.runs; i++) {
		run_one(r, p, &oc);
		n += failed(&oc);
	}
	printf("# rerun %" PRIu64 " times: failed %" PRIu64 " times (%s)\n",
	       cfg.runs, n, n == cfg.runs ? "reproducible" :
	       n ? "flaky" : "did not fail again");
	fflush(stdout);
	if (!cfg.no_shrink)
		shrink(r, p, n ? (double)n / cfg.runs : 1.0 / (2 * cfg.runs));
}

static int replay(struct runner *r, struct m_prog *p)
{
	static struct outcome oc;
	uint64_t i, n = 0, und = 0;
	bool shown = false;

	prog_print(stdout, p, NULL, "# ");
	for (i = 0; i < cfg.runs; i++) {
		run_one(r, p, &oc);
		und += oc.res.verdict == M_UNDECIDED;
		if (failed(&oc)) {
			n++;
			if (!shown)
				report(p, &oc, "FAILED");
			shown = true;
		} else if (cfg.verbose) {
			prog_print(stdout, p, &oc.log, "#   ");
		}
	}
	printf("# %" PRIu64 " runs: %" PRIu64 " failed, %" PRIu64 " undecided\n",
	       cfg.runs, n, und);
	if (n && !cfg.no_shrink)
		shrink(r, p, (double)n / cfg.runs);
	return n ? 1 : 0;
}

static bool tap;

/* Failures by the rules their diagnosis names. */
static struct {
	char rules[160];
	uint64_t n;
} tallies[16];

static void tally(const struct outcome *oc)
{
	const char *key = oc->setup ? "could not be set up" :
			  lost(&oc->log) && oc->res.verdict != M_FAIL ?
			  "a device was removed although the program removes nothing there" :
			  oc->log.hang && oc->res.verdict != M_FAIL ?
			  "hang (a certain wait timed out)" : oc->res.rules;
	int i;

	for (i = 0; i < 16 && tallies[i].n; i++)
		if (!strcmp(tallies[i].rules, key))
			break;
	if (i == 16)
		return;
	if (!tallies[i].n) {
		snprintf(tallies[i].rules, sizeof(tallies[i].rules), "%s", key);
	}
	tallies[i].n++;
}

/* A call never returned: report the program, fail, and stop here. */
static void stuck(const struct m_prog *p, const struct m_log *l)
{
	printf("# WATCHDOG: program seed %#" PRIx64 " did not finish within %" PRIu64 " s: a call blocked for good (calls not yet returned have no times)\n",
	       p->seed, cfg.guard_ms / 1000 + 60);
	prog_print(stdout, p, l, "#   ");
	if (tap) {
		printf("not ok 1 a program hung (program seed %#" PRIx64 ")\n", p->seed);
		printf("not ok 2 every certain wait returned\n");
		printf("not ok 3 the checker ran to the end\n");
	}
	fflush(stdout);
	_exit(1);
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 0);
}

static void parse(int argc, char **argv)
{
	const char *e;
	int i;

	if ((e = getenv("D3DQ_MODEL_PROGRAMS")))
		cfg.programs = num(e), cfg.seconds = UINT64_MAX;
	if ((e = getenv("D3DQ_MODEL_SECONDS")))
		cfg.seconds = num(e);
	if ((e = getenv("D3DQ_MODEL_MIN_PROGRAMS")))
		cfg.min_programs = num(e);
	if ((e = getenv("D3DQ_MODEL_SEED"))) {
		cfg.seed = num(e);
		cfg.have_seed = true;
	}
	if ((e = getenv("D3DQ_MODEL_STATES")))
		cfg.states = num(e);
	cfg.without = getenv("D3DQ_MODEL_WITHOUT");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(a, "--programs"))
			cfg.programs = num(v), cfg.seconds = UINT64_MAX, i++;
		else if (!strcmp(a, "--seconds"))
			cfg.seconds = num(v), i++;
		else if (!strcmp(a, "--seed"))
			cfg.seed = num(v), cfg.have_seed = true, i++;
		else if (!strcmp(a, "--states"))
			cfg.states = num(v), i++;
		else if (!strcmp(a, "--guard-ms"))
			cfg.guard_ms = num(v), i++;
		else if (!strcmp(a, "--shrink-seconds"))
			cfg.shrink_seconds = num(v), i++;
		else if (!strcmp(a, "--runs"))
			cfg.runs = num(v), i++;
		else if (!strcmp(a, "--replay"))
			cfg.replay = num(v), cfg.replay_mode = true, i++;
		else if (!strcmp(a, "--load"))
			cfg.load = v, i++;
		else if (!strcmp(a, "--check"))
			cfg.check = v, i++;
		else if (!strcmp(a, "--print"))
			cfg.print = v, i++;
		else if (!strcmp(a, "--scenario")) {
			static const char *const names[] = {
				"random", "none", "causal", "discard", "shared",
				"removal", "pipeline", "chain", "pingpong",
				"lazy",
			};
			int k;

			for (k = 0; k < 10; k++)
				if (!strcmp(v, names[k]))
					cfg.scenario = k;
			i++;
		} else if (!strcmp(a, "--without"))
			cfg.without = v, i++;
		else if (!strcmp(a, "--no-shrink"))
			cfg.no_shrink = true;
		else if (!strcmp(a, "--verbose"))
			cfg.verbose = true;
		else {
			fprintf(stderr, "rules: unknown option %s (see the comment at the top of tests/model/rules.c)\n",
				a);
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	static struct m_prog p;
	static struct outcome oc;
	uint64_t k, fails = 0, mfails = 0, hangs = 0, und = 0, nops = 0, setup = 0;
	uint64_t voided = 0, shaped = 0, lazies = 0;
	uint64_t states = 0, max_states = 0, reported = 0;
	double t0, trun = 0, tcheck = 0, t;
	static struct m_prog failing[MAX_INVESTIGATE];
	/* Repeated at the end: CI logs may keep only the last lines. */
	static char failing_why[MAX_INVESTIGATE][160];
	struct m_genopts go;
	struct runner *r;
	uint64_t i;
	bool bad3;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv);
	if (!cfg.have_seed && getrandom(&cfg.seed, sizeof(cfg.seed), 0) != sizeof(cfg.seed))
		cfg.seed = (uint64_t)time(NULL);

	if (cfg.check) {
		static struct m_log log;
		static struct m_result res;
		FILE *in = fopen(cfg.check, "r");

		if (!in || prog_parse(in, &p)) {
			fprintf(stderr, "rules: cannot read a program from %s\n", cfg.check);
			return 2;
		}
		prog_sure(&p);
		rewind(in);
		printf("# %d observations\n", prog_parse_log(in, &p, &log));
		fclose(in);
		if (getenv("D3DQ_MODEL_RELAX"))
			model_check_relaxed(&p, &log, cfg.states,
					    num(getenv("D3DQ_MODEL_RELAX")), &res);
		else
			model_check(&p, &log, cfg.states, &res);
		printf("# %s after %" PRIu64 " states\n", res.verdict == M_OK ? "consistent" :
		       res.verdict == M_FAIL ? "INCONSISTENT" : "undecided", res.states);
		if (res.verdict != M_OK)
			printf("# %s\n# BROKEN: %s\n", res.why, res.rules);
		return res.verdict != M_OK;
	}
	if (cfg.print) {
		genopts(num(cfg.print), &go);
		gen_program(&p, num(cfg.print), &go);
		prog_print(stdout, &p, NULL, "");
		return 0;
	}

	if (!cfg.replay_mode && !cfg.load) {
		printf("TAP version 13\n1..3\n");
		printf("# base seed %#" PRIx64 " (D3DQ_MODEL_SEED); replay one program with: build/tests/model/rules%s%s --replay <program seed>\n",
		       cfg.seed, cfg.without ? " --without " : "",
		       cfg.without ? cfg.without : "");
	}
	tap = !cfg.replay_mode && !cfg.load;
	ret = run_open(&r, cfg.guard_ms * 1000000ull);
	if (!ret)
		run_watchdog(r, (cfg.guard_ms + 60000) * 1000000ull, stuck);
	if (ret) {
		printf("# no d3dq device: %s\n", strerror(-ret));
		if (cfg.replay_mode || cfg.load)
			return 4;
		for (k = 1; k <= 3; k++)
			printf("ok %" PRIu64 " # SKIP no d3dq device\n", k);
		return 0;
	}

	if (cfg.replay_mode || cfg.load) {
		if (cfg.load) {
			FILE *in = fopen(cfg.load, "r");

			if (!in || prog_parse(in, &p)) {
				fprintf(stderr, "rules: cannot read a program from %s\n", cfg.load);
				return 2;
			}
			fclose(in);
			prog_sure(&p);
		} else {
			genopts(cfg.replay, &go);
			gen_program(&p, cfg.replay, &go);
		}
		ret = replay(r, &p);
		set_kernel_path(NULL);
		run_close(r);
		return ret;
	}

	t0 = t_start = now_s();
	cfg.investigate_until = cfg.seconds == UINT64_MAX ? UINT64_MAX :
				cfg.seconds + INVESTIGATE_SECONDS - DEFAULT_SECONDS;
	if (cfg.investigate_until < cfg.seconds + 30)
		cfg.investigate_until = cfg.seconds + 30;
	for (k = 0; k < cfg.programs && now_s() - t0 < (double)cfg.seconds; k++) {
		uint64_t seed = mix(cfg.seed + k);

		genopts(seed, &go);
		gen_program(&p, seed, &go);
		nops += p.nops;
		shaped += prog_consumers_first(&p);
		for (i = 0; i < p.nops; i++)
			if (p.ops[i].kind == K_SLEEP) {
				lazies++;
				break;
			}
		t = now_s();
		memset(&oc.res, 0, sizeof(oc.res));
		oc.setup = run_on_path(r, &p, &oc.log);
		trun += now_s() - t;
		if (!oc.setup) {
			t = now_s();
			/* the diagnosis costs: only for the first failures */
			if (fails < 40) {
				model_check(&p, &oc.log, cfg.states, &oc.res);
			} else {
				model_check_relaxed(&p, &oc.log, cfg.states, 0, &oc.res);
				if (oc.res.verdict == M_FAIL)
					snprintf(oc.res.rules, sizeof(oc.res.rules),
						 "(not diagnosed)");
			}
			tcheck += now_s() - t;
		}
		if (timed_out(&oc.log)) {
			if (++voided <= 3)
				printf("# void: program seed %#" PRIx64 ": the driver timed out a job (%u, %u) and the device was removed (%s; R15): the machine was too slow, not counted\n",
				       seed, oc.log.timeouts[0], oc.log.timeouts[1],
				       strerror(-(oc.log.lost[0] ? oc.log.lost[0] :
						  oc.log.lost[1])));
			continue;
		}
		states += oc.res.states;
		if (oc.res.states > max_states)
			max_states = oc.res.states;
		setup += oc.setup != 0;
		hangs += oc.log.hang;
		mfails += oc.res.verdict == M_FAIL ||
			  (!oc.setup && lost(&oc.log));
		und += oc.res.verdict == M_UNDECIDED;
		if (oc.res.verdict == M_UNDECIDED && und <= 3) {
			printf("# undecided: %s\n", oc.res.why);
			prog_print(stdout, &p, &oc.log, "#   ");
		}
		if (cfg.verbose)
			prog_print(stdout, &p, &oc.log, "# ");
		if (failed(&oc)) {
			fails++;
			if (reported < MAX_INVESTIGATE) {
				/* reported now, investigated after the budget */
				report(&p, &oc, "FAILED");
				snprintf(failing_why[reported],
					 sizeof(failing_why[reported]), "%.150s",
					 oc.res.verdict == M_FAIL ?
					 why_short(oc.res.why) :
					 oc.log.hang ? "HANG" : "LOST or setup");
				failing[reported++] = p;
			} else if (fails <= 40) {
				printf("# another failure: program seed %#" PRIx64 ": %s%s%s\n",
				       seed, oc.log.hang ? "HANG " : "",
				       lost(&oc.log) ? "LOST " : "",
				       oc.setup ? strerror(-oc.setup) : oc.res.rules);
				if (oc.res.verdict == M_FAIL)
					printf("#   %s\n", why_short(oc.res.why));
			}
			tally(&oc);
		}
	}
	t = now_s() - t0;
	for (i = 0; i < reported && now_s() - t0 < (double)cfg.investigate_until; i++)
		investigate(r, &failing[i]);
	set_kernel_path(NULL);
	run_close(r);

	printf("# %" PRIu64 " programs (%" PRIu64 " operations) in %.1f s: %.1f programs/s; running %.1f s, checking %.1f s; states %.0f per program, at most %" PRIu64 "; %" PRIu64 " consumers-first (several queues wait for and signal one fence, waits first), %" PRIu64 " first reads after a sleep\n",
	       k, nops, t, k / t, trun, tcheck, k ? (double)states / k : 0.0,
	       max_states, shaped, lazies);
	for (i = 0; i < 16 && tallies[i].n; i++)
		printf("# failures: %" PRIu64 " x %s\n", tallies[i].n, tallies[i].rules);
	for (i = 0; i < reported; i++)
		printf("# failed: program seed %#" PRIx64 ": %s\n",
		       failing[i].seed, failing_why[i]);
	printf("%sok 1 %" PRIu64 " programs are consistent with the model (%" PRIu64 " failed, %" PRIu64 " could not be set up, %" PRIu64 " void)\n",
	       mfails || setup ? "not " : "", k - voided, mfails, setup, voided);
	printf("%sok 2 every certain wait returned (%" PRIu64 " hung)\n",
	       hangs ? "not " : "", hangs);
	/* failures cost time (hangs, diagnosis): the minimum is for clean runs */
	bad3 = (und + voided) * 100 > k ||
	       (cfg.seconds != UINT64_MAX && k < cfg.min_programs && !fails);
	printf("%sok 3 the checker decided %" PRIu64 " of %" PRIu64 " programs (at least %" PRIu64 " wanted)\n",
	       bad3 ? "not " : "", k - und - voided, k,
	       cfg.seconds != UINT64_MAX ? cfg.min_programs : 0);
	return fails || bad3 ? 1 : 0;
}
