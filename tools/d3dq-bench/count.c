// SPDX-License-Identifier: MIT
/*
 * d3dq-bench: counting what a code path costs: the ioctl system calls a
 * thread makes (libd3dq and libdrm call ioctl(2) through libc, and this
 * program's definition of ioctl() takes precedence over libc's for every
 * shared library in the process), and how often threads slept
 * (voluntary context switches: each one is a wake-up later).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

static _Thread_local uint64_t thread_ioctls;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	thread_ioctls++;
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

struct counts counts_now(void)
{
	struct rusage self, thread;
	struct counts c = { 0 };

	c.ioctls = thread_ioctls;
	if (!getrusage(RUSAGE_THREAD, &thread))
		c.sleeps = thread.ru_nvcsw;
	if (!getrusage(RUSAGE_SELF, &self))
		c.process_sleeps = self.ru_nvcsw;
	return c;
}

/* @b - @a, per @n operations, as rows "<key>_ioctls" etc. of @fig. */
void add_counts(int fig, const char *key, const char *what,
		struct counts a, struct counts b, long n)
{
	char k[48], label[72];
	double others;

	snprintf(k, sizeof(k), "%s_ioctls", key);
	snprintf(label, sizeof(label), "%s: ioctls/op, this thread", what);
	add_value(fig, k, label, "calls", (double)(b.ioctls - a.ioctls) / n,
		  true);
	snprintf(k, sizeof(k), "%s_sleeps", key);
	snprintf(label, sizeof(label), "%s: sleeps/op, this thread", what);
	add_value(fig, k, label, "sleeps", (double)(b.sleeps - a.sleeps) / n,
		  true);
	others = (double)(b.process_sleeps - a.process_sleeps) -
		 (double)(b.sleeps - a.sleeps);
	snprintf(k, sizeof(k), "%s_other_sleeps", key);
	snprintf(label, sizeof(label), "%s: sleeps/op, other threads",
		 what);
	add_value(fig, k, label, "sleeps", others / n, true);
}
