/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the lib and d3d12 suites (header only, no library call) that
 * observe threads and processes instead of sleeping for them: whether a
 * thread sleeps in a system call (/proc/self/task), holding a thread still
 * in a signal handler while others act, the DRM render nodes a process
 * has open, waiting for a child with a bound.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_COMMON_TASK_H
#define D3DQ_TESTS_COMMON_TASK_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline void task_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static inline pid_t task_self(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Read /proc/self/task/@tid/@what into @buf: its length, or -1. */
static inline int task_read(pid_t tid, const char *what, char *buf,
			    size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

/*
 * Wait (10 s at most) until thread @tid sleeps in the kernel in system
 * call @nr: its state is S (stat) and /proc's syscall file names @nr
 * (not a lock of the C library, or a sleep of its own, unless @nr is
 * one). (wchan names the kernel function only for some waits: "0" for
 * a DRM syncobj wait on 6.12.)
 */
static inline bool task_asleep_in(pid_t tid, long nr)
{
	char stat[512], call[256], *p;
	int i;

	for (i = 0; i < 10000; i++) {
		if (task_read(tid, "stat", stat, sizeof(stat)) <= 0 ||
		    task_read(tid, "syscall", call, sizeof(call)) <= 0)
			return false;
		p = strrchr(stat, ')');
		if (p && p[1] == ' ' && p[2] == 'S' && atol(call) == nr &&
		    call[0] != 'r')
			return true;
		task_sleep_ms(1);
	}
	return false;
}

/* The thread sleeps in a call into the driver (ioctl(2)). */
static inline bool task_asleep_in_driver(pid_t tid)
{
	return task_asleep_in(tid, SYS_ioctl);
}

/*
 * Whether thread @tid sleeps now (no waiting) in the kernel in system
 * call @nr (see task_asleep_in()).
 */
static inline bool task_sleeps_in(pid_t tid, long nr)
{
	char stat[512], call[256], *p;

	if (task_read(tid, "stat", stat, sizeof(stat)) <= 0 ||
	    task_read(tid, "syscall", call, sizeof(call)) <= 0)
		return false;
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && p[2] == 'S' && atol(call) == nr &&
	       call[0] != 'r';
}

/*
 * The library's dispatcher waits for its registrations, 10 s at most:
 * in poll(2) on its eventfd (kernels with SYNCOBJ_EVENTFD, 6.6), or in
 * the driver (a syncobj wait, 6.1).
 */
static inline bool task_dispatcher_waits(pid_t tid)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (task_sleeps_in(tid, SYS_ioctl) ||
		    task_sleeps_in(tid, SYS_poll) ||
		    task_sleeps_in(tid, SYS_ppoll))
			return true;
		task_sleep_ms(1);
	}
	return false;
}

/* CPU time of thread @tid so far, in clock ticks (utime + stime); -1. */
static inline long task_cpu_ticks(pid_t tid)
{
	char stat[512], *p;
	unsigned long ut, st;
	int i;

	if (task_read(tid, "stat", stat, sizeof(stat)) <= 0)
		return -1;
	p = strrchr(stat, ')');
	/* Fields 3 (state) to 13 come before utime (14) and stime (15). */
	for (i = 0; p && i < 12; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/*
 * Hold a thread still: task_pause() sends it SIGUSR1, whose handler
 * waits until task_resume(), and returns once the handler runs. A thread
 * asleep in a kernel wait leaves the wait for the handler and goes back
 * into it (EINTR, which libdrm restarts) after it: the test acts while
 * the thread is, for the library, still in the call.
 */
static _Atomic int task_paused, task_resumed;

static void task_pause_handler(int sig)
{
	struct timespec ts = { 0, 1000000 };

	(void)sig;
	atomic_store(&task_paused, 1);
	while (!atomic_load(&task_resumed))
		nanosleep(&ts, NULL);
	atomic_store(&task_paused, 0);
}

static inline bool task_pause(pthread_t t)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = task_pause_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return false;
	atomic_store(&task_resumed, 0);
	if (pthread_kill(t, SIGUSR1))
		return false;
	for (i = 0; i < 10000 && !atomic_load(&task_paused); i++)
		task_sleep_ms(1);
	return atomic_load(&task_paused);
}

static inline void task_resume(void)
{
	atomic_store(&task_resumed, 1);
}

/*
 * The next DRM render node this process has open, from the open
 * directory @d of /proc/self/fd: its fd number as a string in @name
 * (@len bytes), or false when there is none left.
 */
static inline bool task_next_render_fd(DIR *d, char *name, size_t len)
{
	char path[300], target[256];
	struct dirent *e;
	ssize_t n;

	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strncmp(target, "/dev/dri/renderD", 16)) {
			snprintf(name, len, "%s", e->d_name);
			return true;
		}
	}
	return false;
}

/* How many DRM render nodes this process has open. */
static inline int task_render_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	char name[256];
	int count = 0;

	if (!d)
		return -1;
	while (task_next_render_fd(d, name, sizeof(name)))
		count++;
	closedir(d);
	return count;
}

/*
 * The sum of fdinfo's "@key:\tN" (d3dq-jobs-held, d3dq-jobs-in-flight:
 * Documentation/driver.rst) over every d3dq file this process has open;
 * -1 if it has none or a file lacks the key.
 */
static inline long task_fdinfo_sum(const char *key)
{
	char path[300], name[256], info[4096], *p;
	DIR *d = opendir("/proc/self/fd");
	size_t klen = strlen(key);
	long sum = -1;
	ssize_t n;
	int fd;

	if (!d)
		return -1;
	while (task_next_render_fd(d, name, sizeof(name))) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, info, sizeof(info) - 1);
		close(fd);
		if (n <= 0)
			continue;
		info[n] = 0;
		if (!strstr(info, "drm-driver:\td3dq"))
			continue;
		for (p = info; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (!strncmp(p, key, klen) && p[klen] == ':')
				break;
		if (!p) {
			sum = -1;
			break;
		}
		sum = (sum < 0 ? 0 : sum) + atol(p + klen + 1);
	}
	closedir(d);
	return sum;
}

/*
 * Wait (10 s at most) until task_fdinfo_sum(@key) is @want. What the
 * kernel holds (d3dq-jobs-held: jobs whose waits nothing brings yet) has
 * not run and cannot run until something signals; a process whose files
 * have no job in flight (d3dq-jobs-in-flight 0) and none held has
 * nothing left that could change a fence or a buffer.
 */
static inline bool task_fdinfo_is(const char *key, long want)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (task_fdinfo_sum(key) == want)
			return true;
		task_sleep_ms(1);
	}
	return false;
}

/* All of this process's d3dq work has finished; none is held. */
static inline bool task_gpu_idle(void)
{
	return task_fdinfo_is("d3dq-jobs-in-flight", 0) &&
	       task_fdinfo_sum("d3dq-jobs-held") == 0;
}

/*
 * Wait (10 s at most) until everything of this process's d3dq work that
 * could run has run and the rest is held (in flight 0, held > 0): from
 * then on nothing changes until something signals, so "it did not run"
 * is a check, not a bet on a sleep's length.
 */
static inline bool task_gpu_only_held(void)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (task_fdinfo_sum("d3dq-jobs-in-flight") == 0 &&
		    task_fdinfo_sum("d3dq-jobs-held") > 0)
			return true;
		task_sleep_ms(1);
	}
	return false;
}

/*
 * Wait for child @pid for @ms at most; then kill it (SIGKILL) and reap
 * it. Its status, as waitpid(2) gives it, or -1.
 */
static inline int task_wait_child(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		task_sleep_ms(1);
	}
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* A printable account of a child's status. */
static inline const char *task_status_str(int status, char *buf, size_t size)
{
	if (status == -1)
		snprintf(buf, size, "lost");
	else if (WIFEXITED(status))
		snprintf(buf, size, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "signal %d%s", WTERMSIG(status),
			 WTERMSIG(status) == SIGKILL ? " (hung, killed)" : "");
	else
		snprintf(buf, size, "status %#x", status);
	return buf;
}

#endif
