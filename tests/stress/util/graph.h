/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A random wait/signal graph run through raw d3dq ioctls by several
 * processes with several threads each, and the checks of what the engine
 * recorded. Used by the stress and fault tests.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_STRESS_GRAPH_H
#define D3DQ_STRESS_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

struct g_params {
	int procs;		/* processes, each with its own open file */
	int threads;		/* submitting threads per process */
	int queues;		/* queues per process */
	int jobs;		/* jobs per thread */
	uint64_t seed;
	unsigned int delay_us;	/* longest ordinary DELAY */
	/* One job in @slow_every gets a DELAY of @slow_us (0: none). */
	unsigned int slow_every, slow_us;
	/* A thread waits for its job once in @sync_every (0: never). */
	unsigned int sync_every;
	/* Queues may be lost (timeouts): check only what ran. */
	bool lossy;
	/* Kill every child after this many ms (0: let them finish). */
	unsigned int kill_after_ms;
	/* Seconds without a submitted or completed job before failing. */
	unsigned int stall_s;
};

struct g_result {
	unsigned long jobs, waits, ran, cancelled, replaced, xproc_waits;
	unsigned long checks;
	/* Lossy runs: jobs that ran although a dependency had failed. */
	unsigned long failed_deps_ran;
	double seconds;
	char msg[512];		/* first failure, empty if none */
};

/* Scale factor from D3DQ_STRESS_SCALE (default 1). */
int g_scale(void);
uint64_t g_seed(void);

/* Run the graph; 0 on success, -1 with r->msg set otherwise. */
int g_run(const struct g_params *p, struct g_result *r);

#endif
