/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Editing model programs (shrink.c).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_MODEL_SHRINK_H
#define D3DQ_TESTS_MODEL_SHRINK_H

#include "prog.h"

void prog_fixup(struct m_prog *p);
int prog_phase1_ops(const struct m_prog *p);
int prog_edit(const struct m_prog *p, int k, struct m_prog *out);

#endif
