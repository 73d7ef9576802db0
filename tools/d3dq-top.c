// SPDX-License-Identifier: MIT
/*
 * d3dq-top: a live view of the d3dq clients, their queues and engines.
 *
 * Clients come from /proc/<pid>/fdinfo of every file open on a d3dq DRM
 * node (the drm-usage-stats keys, see Documentation/driver.rst); files
 * that share one drm-client-id (dup, fork) are one client. Queues, held
 * jobs and object counts come from debugfs when it is readable (root).
 * Engine busy % is the growth of drm-engine-<type> over the interval: the
 * sum over the client's queues of that type, so it can pass 100.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/json.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NENGINES 3

static const char *const engine_names[NENGINES] = { "direct", "compute", "copy" };

struct client {
	uint64_t id;
	int pid;
	char comm[32];
	unsigned int files;
	uint64_t busy[NENGINES];
	double percent[NENGINES];	/* < 0: no earlier sample */
	uint64_t mem_total;
	uint64_t mem_resident;
	uint64_t queues;
	uint64_t in_flight;
	uint64_t timeouts;
};

struct queue {
	int pid;
	uint64_t client;
	unsigned int id;
	char type[16];
	char prio[16];
	char state[16];
	int reason;
	int pending;
	unsigned int running;
	unsigned int held;		/* queued jobs with an unsignalled wait */
};

struct sample {
	uint64_t time_ns;
	struct client *clients;
	size_t nclients;
	struct queue *queues;
	size_t nqueues;
	bool debugfs;
	char objects[256];		/* "name value" lines, as read */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("d3dq-top");
		exit(1);
	}
	return p;
}

/* "123", "123 KiB" or "123 MiB" (drm-usage-stats sizes) in bytes. */
static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	while (*end == ' ')
		end++;
	if (strncmp(end, "KiB", 3) == 0)
		v <<= 10;
	else if (strncmp(end, "MiB", 3) == 0)
		v <<= 20;
	else if (strncmp(end, "GiB", 3) == 0)
		v <<= 30;
	return v;
}

static struct client *find_client(struct sample *s, uint64_t id)
{
	size_t i;

	for (i = 0; i < s->nclients; i++)
		if (s->clients[i].id == id)
			return &s->clients[i];
	return NULL;
}

static void read_comm(int pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, (int)size, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

/* Reads one fdinfo file; adds or merges its client when it is d3dq's. */
static void read_fdinfo(struct sample *s, int pid, const char *path)
{
	struct client c = { .pid = pid }, *old;
	bool d3dq = false, have_id = false;
	char line[256], *v;
	unsigned int e;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		v = strchr(line, ':');
		if (!v)
			continue;
		*v++ = 0;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		if (strcmp(line, "drm-driver") == 0) {
			d3dq = strcmp(v, "d3dq") == 0;
		} else if (strcmp(line, "drm-client-id") == 0) {
			c.id = strtoull(v, NULL, 10);
			have_id = true;
		} else if (strcmp(line, "drm-total-memory") == 0) {
			c.mem_total = parse_size(v);
		} else if (strcmp(line, "drm-resident-memory") == 0) {
			c.mem_resident = parse_size(v);
		} else if (strcmp(line, "d3dq-queues") == 0) {
			c.queues = strtoull(v, NULL, 10);
		} else if (strcmp(line, "d3dq-jobs-in-flight") == 0) {
			c.in_flight = strtoull(v, NULL, 10);
		} else if (strcmp(line, "d3dq-timeouts") == 0) {
			c.timeouts = strtoull(v, NULL, 10);
		} else if (strncmp(line, "drm-engine-", 11) == 0) {
			for (e = 0; e < NENGINES; e++)
				if (strcmp(line + 11, engine_names[e]) == 0)
					c.busy[e] = strtoull(v, NULL, 10);
		}
	}
	fclose(f);
	if (!d3dq || !have_id)
		return;

	old = find_client(s, c.id);
	if (old) {
		old->files++;
		return;
	}
	read_comm(pid, c.comm, sizeof(c.comm));
	c.files = 1;
	for (e = 0; e < NENGINES; e++)
		c.percent[e] = -1;
	s->clients = xrealloc(s->clients, (s->nclients + 1) * sizeof(c));
	s->clients[s->nclients++] = c;
}

/* Every open file of every process that is a DRM node. */
static void scan_clients(struct sample *s)
{
	char path[PATH_MAX], target[64];
	struct dirent *p, *fd;
	DIR *proc, *fds;
	ssize_t n;
	int pid;

	proc = opendir("/proc");
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		pid = atoi(p->d_name);
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fd = readdir(fds))) {
			if (fd->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid,
				 fd->d_name);
			n = readlink(path, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			if (strncmp(target, "/dev/dri/", 9) != 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid,
				 fd->d_name);
			read_fdinfo(s, pid, path);
		}
		closedir(fds);
	}
	closedir(proc);
}

/* The debugfs directory of the first d3dq device, or NULL. */
static const char *debugfs_dir(void)
{
	static char dir[PATH_MAX];
	char path[PATH_MAX + 8], name[64];
	struct dirent *d;
	bool found = false;
	DIR *dri;
	FILE *f;

	dri = opendir("/sys/kernel/debug/dri");
	if (!dri)
		return NULL;
	while (!found && (d = readdir(dri))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%s/name",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && strncmp(name, "d3dq ", 5) == 0) {
			snprintf(dir, sizeof(dir), "/sys/kernel/debug/dri/%s",
				 d->d_name);
			found = true;
		}
		fclose(f);
	}
	closedir(dri);
	return found ? dir : NULL;
}

/*
 * debugfs "queues": "client id=I pid=P queues=N", then per queue
 * "  queue Q type=T prio=P state=S reason=R pending=N running=N" and per
 * unsignalled wait of a queued job "    job J waits syncobj=H point=V".
 */
static void scan_debugfs(struct sample *s)
{
	const char *dir = debugfs_dir();
	char path[PATH_MAX + 16], line[256];
	unsigned long long id = 0, job, last_job = 0;
	struct queue q, *cur = NULL;
	size_t len = 0;
	int pid = 0;
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/queues", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	s->debugfs = true;
	while (fgets(line, sizeof(line), f)) {
		memset(&q, 0, sizeof(q));
		if (sscanf(line, "client id=%llu pid=%d", &id, &pid) == 2) {
			cur = NULL;
		} else if (sscanf(line, "  queue %u type=%15s prio=%15s state=%15s reason=%d pending=%d running=%u",
				  &q.id, q.type, q.prio, q.state, &q.reason,
				  &q.pending, &q.running) == 7) {
			q.pid = pid;
			q.client = id;
			s->queues = xrealloc(s->queues,
					     (s->nqueues + 1) * sizeof(q));
			s->queues[s->nqueues] = q;
			cur = &s->queues[s->nqueues++];
			last_job = 0;
		} else if (cur && sscanf(line, "    job %llu waits", &job) == 1) {
			if (job != last_job || !cur->held)
				cur->held++;
			last_job = job;
		}
	}
	fclose(f);

	snprintf(path, sizeof(path), "%s/objects", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (len < sizeof(s->objects) - 1 && fgets(line, sizeof(line), f)) {
		snprintf(s->objects + len, sizeof(s->objects) - len, "%s", line);
		len = strlen(s->objects);
	}
	fclose(f);
}

static void take_sample(struct sample *s, const struct sample *prev)
{
	const struct client *old;
	struct client *c;
	uint64_t dt;
	size_t i;
	unsigned int e;

	memset(s, 0, sizeof(*s));
	s->time_ns = now_ns();
	scan_clients(s);
	scan_debugfs(s);
	if (!prev)
		return;
	dt = s->time_ns - prev->time_ns;
	for (i = 0; i < s->nclients; i++) {
		c = &s->clients[i];
		old = find_client((struct sample *)prev, c->id);
		if (!old || !dt)
			continue;
		for (e = 0; e < NENGINES; e++)
			c->percent[e] = c->busy[e] >= old->busy[e] ?
				100.0 * (double)(c->busy[e] - old->busy[e]) / (double)dt : 0;
	}
}

static void free_sample(struct sample *s)
{
	free(s->clients);
	free(s->queues);
	memset(s, 0, sizeof(*s));
}

static void print_json(const struct sample *s, uint64_t interval_ns)
{
	const struct client *c;
	const struct queue *q;
	char name[64];
	long long value;
	const char *p, *sep = "";
	size_t i;
	unsigned int e;
	int n;

	printf("{\"time_ns\": %" PRIu64 ", \"interval_ns\": %" PRIu64
	       ", \"debugfs\": %s, \"clients\": [", s->time_ns, interval_ns,
	       s->debugfs ? "true" : "false");
	for (i = 0; i < s->nclients; i++) {
		c = &s->clients[i];
		printf("%s{\"client_id\": %" PRIu64 ", \"pid\": %d, \"comm\": ",
		       i ? ", " : "", c->id, c->pid);
		json_str(c->comm);
		printf(", \"files\": %u, \"queues\": %" PRIu64
		       ", \"jobs_in_flight\": %" PRIu64 ", \"timeouts\": %" PRIu64
		       ", \"memory_total\": %" PRIu64 ", \"memory_resident\": %" PRIu64
		       ", \"engines\": {", c->files, c->queues, c->in_flight,
		       c->timeouts, c->mem_total, c->mem_resident);
		for (e = 0; e < NENGINES; e++) {
			printf("%s\"%s\": {\"busy_ns\": %" PRIu64 ", \"busy_percent\": ",
			       e ? ", " : "", engine_names[e], c->busy[e]);
			if (c->percent[e] < 0)
				printf("null}");
			else
				printf("%.1f}", c->percent[e]);
		}
		printf("}}");
	}
	printf("], \"queues\": [");
	for (i = 0; i < s->nqueues; i++) {
		q = &s->queues[i];
		printf("%s{\"client_id\": %" PRIu64 ", \"pid\": %d, \"queue\": %u, "
		       "\"type\": \"%s\", \"priority\": \"%s\", \"state\": \"%s\", "
		       "\"reason\": %d, \"pending\": %d, \"running\": %u, "
		       "\"held_jobs\": %u}", i ? ", " : "", q->client, q->pid,
		       q->id, q->type, q->prio, q->state, q->reason, q->pending,
		       q->running, q->held);
	}
	printf("], \"objects\": {");
	for (p = s->objects; sscanf(p, "%63s %lld%n", name, &value, &n) == 2; p += n) {
		printf("%s\"%s\": %lld", sep, name, value);
		sep = ", ";
	}
	printf("}}\n");
	fflush(stdout);
}

static void print_mem(uint64_t bytes)
{
	if (bytes >= 10ull << 20)
		printf(" %6" PRIu64 "M", bytes >> 20);
	else
		printf(" %6" PRIu64 "K", bytes >> 10);
}

static void print_text(const struct sample *s, bool clear)
{
	unsigned int held = 0, lost = 0;
	uint64_t in_flight = 0, timeouts = 0;
	const struct client *c;
	const struct queue *q;
	unsigned int e;
	size_t i;

	for (i = 0; i < s->nclients; i++) {
		in_flight += s->clients[i].in_flight;
		timeouts += s->clients[i].timeouts;
	}
	for (i = 0; i < s->nqueues; i++) {
		held += s->queues[i].held;
		lost += strcmp(s->queues[i].state, "ok") != 0;
	}
	if (clear)
		printf("\033[H\033[2J");
	printf("d3dq-top: %zu clients, %" PRIu64 " jobs in flight, %" PRIu64
	       " timeouts", s->nclients, in_flight, timeouts);
	if (s->debugfs)
		printf(", %zu queues (%u lost), %u held jobs", s->nqueues, lost, held);
	printf("\n\n%7s %-15s %6s %6s %8s %8s %7s %8s %8s %8s\n", "PID", "COMMAND",
	       "CLIENT", "QUEUES", "INFLIGHT", "TIMEOUTS", "MEM", "DIRECT%",
	       "COMPUTE%", "COPY%");
	for (i = 0; i < s->nclients; i++) {
		c = &s->clients[i];
		printf("%7d %-15.15s %6" PRIu64 " %6" PRIu64 " %8" PRIu64 " %8" PRIu64,
		       c->pid, c->comm, c->id, c->queues, c->in_flight,
		       c->timeouts);
		print_mem(c->mem_total);
		for (e = 0; e < NENGINES; e++) {
			if (c->percent[e] < 0)
				printf(" %8s", "-");
			else
				printf(" %8.1f", c->percent[e]);
		}
		printf("\n");
	}
	if (!s->debugfs) {
		printf("\n(queues: no readable d3dq directory in /sys/kernel/debug/dri; run as root)\n");
	} else if (s->nqueues) {
		printf("\n%7s %6s %5s %-8s %-6s %-5s %7s %7s %4s\n", "PID", "CLIENT",
		       "QUEUE", "TYPE", "PRIO", "STATE", "PENDING", "RUNNING",
		       "HELD");
		for (i = 0; i < s->nqueues; i++) {
			q = &s->queues[i];
			printf("%7d %6" PRIu64 " %5u %-8s %-6s %-5s %7d %7u %4u\n",
			       q->pid, q->client, q->id, q->type, q->prio,
			       q->state, q->pending, q->running, q->held);
		}
	}
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: d3dq-top [-d SECONDS] [-n COUNT] [--json]\n"
		"  -d SECONDS  time between samples (default 1; busy %% is over it)\n"
		"  -n COUNT    print COUNT samples, then exit (default: until killed;\n"
		"              1 with --json)\n"
		"  --json      one JSON object per sample, one per line, no screen\n"
		"              control (batch mode for scripts)\n"
		"Exit status: 0, 2 on bad usage.\n");
}

int main(int argc, char **argv)
{
	struct sample prev = { 0 }, cur;
	double delay = 1;
	long count = -1, done = 0;
	bool json = false, have_prev = false, tty;
	struct timespec ts;
	uint64_t interval;
	char *end;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
			delay = strtod(argv[++i], &end);
			if (*end || delay <= 0 || delay > 3600)
				return usage(stderr), 2;
		} else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			count = strtol(argv[++i], &end, 10);
			if (*end || count < 1)
				return usage(stderr), 2;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (json && count < 0)
		count = 1;
	tty = !json && isatty(STDOUT_FILENO);
	interval = (uint64_t)(delay * 1e9);
	ts.tv_sec = (time_t)(interval / 1000000000u);
	ts.tv_nsec = (long)(interval % 1000000000u);

	/* The first sample only sets the baseline of the busy counters. */
	take_sample(&prev, NULL);
	have_prev = true;
	while (count < 0 || done < count) {
		nanosleep(&ts, NULL);
		take_sample(&cur, have_prev ? &prev : NULL);
		if (json)
			print_json(&cur, cur.time_ns - prev.time_ns);
		else
			print_text(&cur, tty);
		if (!json && !tty)
			printf("\n");
		free_sample(&prev);
		prev = cur;
		done++;
	}
	free_sample(&prev);
	return 0;
}
