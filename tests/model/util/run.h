/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running model programs against libd3dq (run.c).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_MODEL_RUN_H
#define D3DQ_TESTS_MODEL_RUN_H

#include "prog.h"

struct runner;

/*
 * Open the device and start the thread pool. A wait the program marks
 * sure gives up after @guard_ns and flags the log as hung.
 */
int run_open(struct runner **r, uint64_t guard_ns);
void run_close(struct runner *r);

/* 0, or -errno if the program could not be set up. */
int run_program(struct runner *r, const struct m_prog *p, struct m_log *l);

/*
 * Called (from another thread) when a program has not finished @limit_ns
 * after it started: a call blocked for good. It must not return.
 */
void run_watchdog(struct runner *r, uint64_t limit_ns,
		  void (*stuck)(const struct m_prog *p, const struct m_log *l));

#endif
