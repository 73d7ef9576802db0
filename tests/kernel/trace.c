// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq tracepoints: enabled in a tracefs instance of their own, a known
 * sequence of queue creations, submits (with waits and signals), a
 * cancel, a timeout and a removal must produce the d3dq events in their
 * order, and the gpu_scheduler events of two queues must name two
 * different schedulers.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define MAX_EVENTS	256

struct event {
	char name[32];
	unsigned long long client, job, point;
	unsigned int queue, handle, waits, signals, queues;
	int error;
	char sched[32];
};

static int write_file(const char *dir, const char *name, const char *value)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* tracefs, mounted if needed; NULL if this kernel or user has none. */
static const char *tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	char path[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/instances", dirs[i]);
		if (access(path, W_OK) == 0)
			return dirs[i];
	}
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL) == 0)
		return dirs[0];
	return NULL;
}

static void field_ull(const char *line, const char *key, unsigned long long *v)
{
	const char *p = strstr(line, key);

	if (p)
		*v = strtoull(p + strlen(key), NULL, 10);
}

static void field_u(const char *line, const char *key, unsigned int *v)
{
	unsigned long long x = 0;

	field_ull(line, key, &x);
	*v = (unsigned int)x;
}

/* The d3dq events of @client in the instance's trace, in order. */
static int read_events(const char *inst, unsigned long long client,
		       struct event *ev, int max, char (*rings)[32], int *nrings)
{
	char path[512], line[512], *p, *q;
	unsigned long long c;
	int n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	if (!f)
		return -1;
	*nrings = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, ": drm_sched_job: ");
		if (!p)
			p = strstr(line, ": drm_sched_job_queue: ");
		if (p && (q = strstr(p, "ring=")) && *nrings < 8) {
			q += 5;
			q[strcspn(q, ", \n")] = 0;
			for (i = 0; i < *nrings; i++)
				if (strcmp(rings[i], q) == 0)
					break;
			if (i == *nrings)
				snprintf(rings[(*nrings)++], 32, "%s", q);
			continue;
		}
		p = strstr(line, ": d3dq_");
		if (!p || n >= max)
			continue;
		p += 2;
		c = ~0ull;
		field_ull(p, "client=", &c);
		if (c != client)
			continue;
		memset(&ev[n], 0, sizeof(ev[n]));
		snprintf(ev[n].name, sizeof(ev[n].name), "%.*s",
			 (int)strcspn(p, ":"), p);
		ev[n].client = c;
		field_u(p, "queue=", &ev[n].queue);
		field_ull(p, "job=", &ev[n].job);
		field_ull(p, "point=", &ev[n].point);
		field_u(p, "syncobj=", &ev[n].handle);
		field_u(p, "waits=", &ev[n].waits);
		field_u(p, "signals=", &ev[n].signals);
		field_u(p, "queues=", &ev[n].queues);
		q = strstr(p, "error=");
		if (!q)
			q = strstr(p, "reason=");
		if (q)
			ev[n].error = atoi(strchr(q, '=') + 1);
		q = strstr(p, "sched=");
		if (q) {
			snprintf(ev[n].sched, sizeof(ev[n].sched), "%s", q + 6);
			ev[n].sched[strcspn(ev[n].sched, " \n")] = 0;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* Index of the first event @name of @queue (and @job if not 0) from @from. */
static int find(const struct event *ev, int n, int from, const char *name,
		unsigned int queue, unsigned long long job)
{
	int i;

	for (i = from; i < n; i++)
		if (strcmp(ev[i].name, name) == 0 && ev[i].queue == queue &&
		    (!job || ev[i].job == job))
			return i;
	return -1;
}

FIXTURE(trace) {
	int fd;
	char inst[256];
	bool have_inst;
};

FIXTURE_SETUP(trace)
{
	const char *root;
	char path[300];

	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	root = tracefs();
	if (!root)
		SKIP(return, "no writable tracefs");
	snprintf(self->inst, sizeof(self->inst), "%s/instances/d3dq-test-%d",
		 root, getpid());
	ASSERT_EQ(0, mkdir(self->inst, 0755)) TH_LOG("mkdir %s: %s",
						     self->inst, strerror(errno));
	self->have_inst = true;
	snprintf(path, sizeof(path), "%s/events/d3dq", self->inst);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("no d3dq events in tracefs");
	ASSERT_EQ(0, write_file(self->inst, "buffer_size_kb", "1024"));
	ASSERT_EQ(0, write_file(self->inst, "events/d3dq/enable", "1"));
	/*
	 * Not fatal: the scheduler's events are checked when present. The
	 * job's event is drm_sched_job, drm_sched_job_queue since 6.16
	 * (8a98df70062b); both print ring=<scheduler name>.
	 */
	if (write_file(self->inst, "events/gpu_scheduler/drm_sched_job/enable", "1"))
		write_file(self->inst,
			   "events/gpu_scheduler/drm_sched_job_queue/enable", "1");
	ASSERT_EQ(0, write_file(self->inst, "trace", ""));
}

FIXTURE_TEARDOWN(trace)
{
	if (self->have_inst) {
		write_file(self->inst, "events/enable", "0");
		rmdir(self->inst);
	}
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * The harness's default 30 s ran out on the debug kernel (make
 * check-debug) on a loaded host: the test also waits for a job timeout.
 */
TEST_F_TIMEOUT(trace, events_in_order, 300)
{
	uint32_t qa, qb, qc, qd, qe, tl, done, sd;
	struct drm_d3dq_submit sub = { 0 };
	uint64_t longest = t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS);
	uint64_t timeout = t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	struct drm_d3dq_remove rm = { 0 };
	struct drm_d3dq_sync w, s;
	struct event *ev;
	char rings[8][32];
	int n, nrings, i, a_sub, b_sub, c_sub, d_sub, e_sub, x;
	long long client = t_fdinfo(self->fd, "drm-client-id", NULL, 0);
	unsigned long long ja, jb, jc, jd;
	struct t_cs cs;

	ASSERT_LE(0, client);
	if (timeout > 5 * T_SEC || longest < 2 * timeout)
		SKIP(return, "needs a job timeout under 5 s and DELAY over twice it");
	qa = t_queue(self->fd, 0, 0);
	qb = t_queue(self->fd, 1, 0);
	qc = t_queue(self->fd, 2, 0);
	qd = t_queue(self->fd, 0, 1);
	qe = t_queue(self->fd, 0, 0);
	tl = t_syncobj(self->fd);
	done = t_syncobj(self->fd);
	sd = t_syncobj(self->fd);
	ASSERT_TRUE(qa && qb && qc && qd && qe && tl && done && sd);

	/*
	 * A signals tl@5 after a little work; B waits for it. Long enough
	 * that B is submitted before A ends: else B, with nothing before
	 * it, would run inside SUBMIT and the scheduler would never see it.
	 */
	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_MS);
	s = t_tl(tl, 5);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));
	w = t_tl(tl, 5);
	s = t_bin(done);
	ASSERT_EQ(0, t_submit(self->fd, qb, &w, 1, &s, 1, NULL));
	ASSERT_EQ(0, t_wait(self->fd, done, 0, 10 * T_SEC));

	/* E's job, on an idle engine, runs inside SUBMIT. */
	s = t_bin(done);
	sub.queue_id = qe;
	sub.signals = (struct drm_d3dq_obj_array)DRM_D3DQ_OBJ_ARRAY(1, &s);
	ASSERT_EQ(0, t_submit_raw(self->fd, &sub));
	EXPECT_EQ(DRM_D3DQ_SUBMIT_DONE, sub.out_flags);

	/* C runs the longest DELAY and is cancelled by destroying qc. */
	t_cs_init(&cs);
	t_cs_delay(&cs, longest);
	ASSERT_EQ(0, t_submit(self->fd, qc, NULL, 0, NULL, 0, &cs));
	/* Destroy qc once C runs (it runs for far longer than this). */
	ev = calloc(MAX_EVENTS, sizeof(*ev));
	ASSERT_NE(NULL, ev);
	for (i = 0; i < 10000; i++) {
		n = read_events(self->inst, client, ev, MAX_EVENTS, rings, &nrings);
		if (find(ev, n, 0, "d3dq_run", qc, 0) >= 0)
			break;
		usleep(1000);
	}
	ASSERT_EQ(0, t_queue_destroy(self->fd, qc));

	/* D outlives the job timeout. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 2 * timeout);
	s = t_bin(sd);
	ASSERT_EQ(0, t_submit(self->fd, qd, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, sd, 0, 30 * T_SEC));

	ASSERT_EQ(0, drmIoctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));

	n = read_events(self->inst, client, ev, MAX_EVENTS, rings, &nrings);
	ASSERT_LT(0, n) TH_LOG("no d3dq event of client %lld", client);

	/* Four queues, four schedulers. */
	i = find(ev, n, 0, "d3dq_queue_create", qa, 0);
	ASSERT_LE(0, i);
	x = find(ev, n, 0, "d3dq_queue_create", qb, 0);
	ASSERT_LT(i, x);
	EXPECT_STRNE(ev[i].sched, ev[x].sched);
	EXPECT_EQ(0, strncmp(ev[i].sched, "d3dq", 4));

	/* A: submit, signal tl@5, run, done. */
	a_sub = find(ev, n, 0, "d3dq_submit", qa, 0);
	ASSERT_LE(0, a_sub);
	ja = ev[a_sub].job;
	EXPECT_EQ(0, ev[a_sub].waits);
	EXPECT_EQ(1, ev[a_sub].signals);
	x = find(ev, n, a_sub, "d3dq_signal", qa, ja);
	ASSERT_LT(a_sub, x);
	EXPECT_EQ(tl, ev[x].handle);
	EXPECT_EQ(5, ev[x].point);
	x = find(ev, n, x, "d3dq_run", qa, ja);
	ASSERT_LT(a_sub, x);
	i = find(ev, n, x, "d3dq_done", qa, ja);
	ASSERT_LT(x, i);
	EXPECT_EQ(0, ev[i].error);

	/* B: submit, wait tl@5, and runs only after A is done. */
	b_sub = find(ev, n, 0, "d3dq_submit", qb, 0);
	ASSERT_LT(a_sub, b_sub);
	jb = ev[b_sub].job;
	EXPECT_EQ(1, ev[b_sub].waits);
	x = find(ev, n, b_sub, "d3dq_wait", qb, jb);
	ASSERT_LT(b_sub, x);
	EXPECT_EQ(tl, ev[x].handle);
	EXPECT_EQ(5, ev[x].point);
	x = find(ev, n, 0, "d3dq_run", qb, jb);
	EXPECT_LT(i, x) TH_LOG("B ran before A was done");
	x = find(ev, n, x, "d3dq_done", qb, jb);
	ASSERT_LE(0, x);
	EXPECT_EQ(0, ev[x].error);

	/* E: submit, run, done, as for any job; the scheduler never saw it. */
	e_sub = find(ev, n, 0, "d3dq_submit", qe, 0);
	ASSERT_LT(b_sub, e_sub);
	x = find(ev, n, e_sub, "d3dq_run", qe, ev[e_sub].job);
	ASSERT_LT(e_sub, x);
	x = find(ev, n, x, "d3dq_done", qe, ev[e_sub].job);
	ASSERT_LE(0, x);
	EXPECT_EQ(0, ev[x].error);

	/* C: run, queue stopped, cancelled, done with -ECANCELED. */
	c_sub = find(ev, n, 0, "d3dq_submit", qc, 0);
	ASSERT_LE(0, c_sub);
	jc = ev[c_sub].job;
	x = find(ev, n, c_sub, "d3dq_run", qc, jc);
	ASSERT_LT(c_sub, x);
	x = find(ev, n, x, "d3dq_queue_stop", qc, 0);
	ASSERT_LE(0, x);
	EXPECT_EQ(-ECANCELED, ev[x].error);
	x = find(ev, n, x, "d3dq_cancel", qc, jc);
	ASSERT_LE(0, x);
	EXPECT_EQ(-ECANCELED, ev[x].error);
	x = find(ev, n, x, "d3dq_done", qc, jc);
	ASSERT_LE(0, x);
	EXPECT_EQ(-ECANCELED, ev[x].error);

	/* D: run, timeout, done with -ETIMEDOUT. */
	d_sub = find(ev, n, 0, "d3dq_submit", qd, 0);
	ASSERT_LE(0, d_sub);
	jd = ev[d_sub].job;
	x = find(ev, n, d_sub, "d3dq_run", qd, jd);
	ASSERT_LT(d_sub, x);
	x = find(ev, n, x, "d3dq_timeout", qd, jd);
	ASSERT_LE(0, x);
	EXPECT_EQ(-ETIMEDOUT, ev[x].error);
	x = find(ev, n, x, "d3dq_done", qd, jd);
	ASSERT_LE(0, x);
	EXPECT_EQ(-ETIMEDOUT, ev[x].error);

	/* The removal, last; it stops the four queues left. */
	x = find(ev, n, 0, "d3dq_removal", 0, 0);
	ASSERT_LT(d_sub, x);
	EXPECT_EQ(4, ev[x].queues);

	/* The scheduler's own events name at least A's and B's schedulers. */
	EXPECT_LT(0, nrings) TH_LOG("no gpu_scheduler:drm_sched_job events");
	if (nrings) {
		i = find(ev, n, 0, "d3dq_queue_create", qa, 0);
		x = find(ev, n, 0, "d3dq_queue_create", qb, 0);
		e_sub = find(ev, n, 0, "d3dq_queue_create", qe, 0);
		for (a_sub = b_sub = c_sub = 0; nrings-- > 0;) {
			a_sub |= strcmp(rings[nrings], ev[i].sched) == 0;
			b_sub |= strcmp(rings[nrings], ev[x].sched) == 0;
			c_sub |= strcmp(rings[nrings], ev[e_sub].sched) == 0;
		}
		EXPECT_TRUE(a_sub && b_sub);
		EXPECT_FALSE(c_sub) TH_LOG("E's job went to the scheduler");
	}
	free(ev);
}

TEST_HARNESS_MAIN
