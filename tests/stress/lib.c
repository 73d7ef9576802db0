// SPDX-License-Identifier: GPL-2.0
/*
 * libd3dq concurrency stress: threads of two processes build random
 * D3D12-style graphs through the library. Each queue signals its own
 * fence with increasing values; queues wait on values other queues have
 * already been asked to signal (which may still be held back by the
 * library, not yet submitted), and on values of a CPU fence that a CPU
 * thread signals later. Every execution records the engine clock at its
 * start and end. Checked: each execution started after the previous one
 * of its queue ended, after every queue fence value it waited on was
 * reached (the execution that signalled it ended) and after the CPU
 * signalled the gate value; every fence ends at the predicted value; the
 * run finishes within bounds.
 *
 * D3DQ_STRESS_SCALE multiplies the work; D3DQ_STRESS_SEED changes it.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <d3dq/d3dq.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"
#include "util/graph.h"

#define NQ	6
#define NT	4
#define MAXW	3

struct ljob {
	int q;
	uint64_t value;		/* fence[q] value signalled after it */
	uint32_t slot;
	int nw;
	struct {
		int q;		/* -1: the CPU gate */
		uint64_t value;
	} w[MAXW];
};

struct lctx {
	struct d3dq_device *dev;
	struct d3dq_queue *q[NQ];
	struct d3dq_fence *f[NQ], *gate;
	struct d3dq_buffer *buf;
	uint64_t *map;
	pthread_mutex_t lock[NQ];
	uint64_t enqueued[NQ];	/* last value queue q was asked to signal */
	uint32_t *slot_of;	/* [q][value] */
	struct ljob *jobs;
	uint32_t njobs, maxjobs;
	pthread_mutex_t slot_lock;
	uint64_t gate_max;	/* the CPU signals 1..gate_max */
	uint64_t *gate_time;	/* [value]: clock just before the signal */
	int jobs_per_thread;
	uint64_t seed;
	int err;
	char msg[256];
};

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void lfail(struct lctx *c, int err, const char *what)
{
	if (!__atomic_exchange_n(&c->err, err ? err : -1, __ATOMIC_SEQ_CST))
		snprintf(c->msg, sizeof(c->msg), "%s: %s", what,
			 strerror(err < 0 ? -err : EIO));
}

/*
 * -ENOSPC: the queue holds its limit of jobs (max_pending_jobs) behind
 * gate values, and the library does not wait for held work
 * (d3dq_queue_execute(3)). lgate releases them within milliseconds:
 * back off and call again, for at most 60 s.
 */
static bool lbackoff(int ret, int *tries)
{
	struct timespec ts = { 0, 1000000 };

	if (ret != -ENOSPC || ++*tries > 60000)
		return false;
	nanosleep(&ts, NULL);
	return true;
}

struct lthread {
	struct lctx *c;
	uint64_t rng;
};

static void *lworker(void *arg)
{
	struct lthread *t = arg;
	struct lctx *c = t->c;
	int i;

	for (i = 0; i < c->jobs_per_thread && !c->err; i++) {
		int q = rnd(&t->rng) % NQ, n = rnd(&t->rng) % (MAXW + 1);
		struct ljob job = { .q = q };
		struct d3dq_cmdlist *l = NULL;
		int ret, w, tries = 0;

		pthread_mutex_lock(&c->lock[q]);
		for (w = 0; w < n; w++) {
			int o = rnd(&t->rng) % (NQ + 1);
			uint64_t top;

			if (o == NQ) {
				/* A gate value the CPU signals later. */
				job.w[job.nw].q = -1;
				job.w[job.nw].value = 1 + rnd(&t->rng) % c->gate_max;
				do
					ret = d3dq_queue_wait(c->q[q], c->gate,
							      job.w[job.nw].value);
				while (lbackoff(ret, &tries));
			} else {
				/* Read without o's lock: a stale value is fine. */
				top = __atomic_load_n(&c->enqueued[o],
						      __ATOMIC_ACQUIRE);
				if (!top || o == q)
					continue;
				job.w[job.nw].q = o;
				job.w[job.nw].value = 1 + rnd(&t->rng) % top;
				do
					ret = d3dq_queue_wait(c->q[q], c->f[o],
							      job.w[job.nw].value);
				while (lbackoff(ret, &tries));
			}
			if (ret) {
				lfail(c, ret, "d3dq_queue_wait");
				break;
			}
			job.nw++;
		}
		pthread_mutex_lock(&c->slot_lock);
		job.slot = c->njobs++;
		pthread_mutex_unlock(&c->slot_lock);
		job.value = c->enqueued[q] + 1;
		ret = d3dq_cmdlist_create(c->dev, &l);
		if (!ret)
			ret = d3dq_cmdlist_timestamp(l, c->buf, job.slot * 16);
		if (!ret && rnd(&t->rng) % 3 == 0)
			ret = d3dq_cmdlist_delay(l, rnd(&t->rng) % 300000);
		if (!ret)
			ret = d3dq_cmdlist_timestamp(l, c->buf,
						     job.slot * 16 + 8);
		if (!ret)
			ret = d3dq_cmdlist_close(l);
		if (!ret)
			do
				ret = d3dq_queue_execute(c->q[q], &l, 1);
			while (lbackoff(ret, &tries));
		d3dq_cmdlist_destroy(l);
		if (!ret)
			do
				ret = d3dq_queue_signal(c->q[q], c->f[q],
							job.value);
			while (lbackoff(ret, &tries));
		if (ret) {
			pthread_mutex_unlock(&c->lock[q]);
			lfail(c, ret, "execute/signal");
			break;
		}
		c->jobs[job.slot] = job;
		c->slot_of[q * (c->maxjobs + 1) + job.value] = job.slot;
		__atomic_store_n(&c->enqueued[q], job.value, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&c->lock[q]);
	}
	return NULL;
}

static void *lgate(void *arg)
{
	struct lctx *c = arg;
	uint64_t v;

	for (v = 1; v <= c->gate_max; v++) {
		struct timespec ts = { 0, 2000000 };

		nanosleep(&ts, NULL);
		c->gate_time[v] = t_now();
		if (d3dq_fence_signal(c->gate, v)) {
			lfail(c, -EIO, "d3dq_fence_signal");
			break;
		}
	}
	return NULL;
}

static int lcheck(struct lctx *c)
{
	uint32_t s;
	int w;

	for (s = 0; s < c->njobs; s++) {
		struct ljob *j = &c->jobs[s];
		uint64_t start = c->map[2 * s], end = c->map[2 * s + 1];

		if (!start || !end || end < start) {
			snprintf(c->msg, sizeof(c->msg),
				 "queue %d value %llu: start %llu end %llu",
				 j->q, (unsigned long long)j->value,
				 (unsigned long long)start,
				 (unsigned long long)end);
			return -1;
		}
		if (j->value > 1) {
			uint32_t p = c->slot_of[j->q * (c->maxjobs + 1) +
						j->value - 1];

			if (c->map[2 * p + 1] > start) {
				snprintf(c->msg, sizeof(c->msg),
					 "queue %d: value %llu started before the previous execution ended",
					 j->q, (unsigned long long)j->value);
				return -1;
			}
		}
		for (w = 0; w < j->nw; w++) {
			uint64_t before;

			if (j->w[w].q < 0) {
				before = c->gate_time[j->w[w].value];
			} else {
				uint32_t d = c->slot_of[j->w[w].q *
							(c->maxjobs + 1) +
							j->w[w].value];

				before = c->map[2 * d + 1];
			}
			if (before > start) {
				snprintf(c->msg, sizeof(c->msg),
					 "queue %d value %llu started at %llu, before its wait on %d value %llu was satisfied (%llu)",
					 j->q, (unsigned long long)j->value,
					 (unsigned long long)start, j->w[w].q,
					 (unsigned long long)j->w[w].value,
					 (unsigned long long)before);
				return -1;
			}
		}
	}
	return 0;
}

/* One process's run; 0 on success. */
static int lrun(uint64_t seed, int jobs_per_thread, char *msg, size_t len,
		unsigned long *njobs)
{
	struct lctx *c = calloc(1, sizeof(*c));
	struct lthread t[NT];
	pthread_t th[NT], gth;
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	int i, ret;

	if (!c)
		return -1;
	c->seed = seed;
	c->jobs_per_thread = jobs_per_thread;
	c->maxjobs = NT * jobs_per_thread;
	c->gate_max = 40;
	c->jobs = calloc(c->maxjobs, sizeof(*c->jobs));
	c->slot_of = calloc((size_t)NQ * (c->maxjobs + 1), sizeof(uint32_t));
	c->gate_time = calloc(c->gate_max + 1, sizeof(uint64_t));
	pthread_mutex_init(&c->slot_lock, NULL);
	ret = d3dq_device_open(NULL, &c->dev);
	if (ret || !c->jobs || !c->slot_of || !c->gate_time) {
		snprintf(msg, len, "setup: %s", strerror(-ret));
		return -1;
	}
	ret = d3dq_buffer_create(c->dev, (uint64_t)c->maxjobs * 16 + 4096,
				 &c->buf);
	if (!ret)
		c->map = d3dq_buffer_map(c->buf);
	if (!ret)
		ret = d3dq_fence_create(c->dev, 0, 0, &c->gate);
	for (i = 0; i < NQ && !ret; i++) {
		static const uint32_t types[] = {
			D3DQ_QUEUE_DIRECT, D3DQ_QUEUE_COMPUTE, D3DQ_QUEUE_COPY,
		};

		desc.type = types[i % 3];
		desc.priority = i % 2 ? D3DQ_QUEUE_PRIORITY_HIGH :
					D3DQ_QUEUE_PRIORITY_NORMAL;
		pthread_mutex_init(&c->lock[i], NULL);
		ret = d3dq_queue_create(c->dev, &desc, &c->q[i]);
		if (!ret)
			ret = d3dq_fence_create(c->dev, 0, 0, &c->f[i]);
	}
	if (ret || !c->map) {
		snprintf(msg, len, "setup: %s", strerror(-ret));
		return -1;
	}
	pthread_create(&gth, NULL, lgate, c);
	for (i = 0; i < NT; i++) {
		t[i].c = c;
		t[i].rng = seed ^ ((uint64_t)i << 32);
		pthread_create(&th[i], NULL, lworker, &t[i]);
	}
	for (i = 0; i < NT; i++)
		pthread_join(th[i], NULL);
	pthread_join(gth, NULL);

	/* Bounded: every fence reaches its predicted value. */
	for (i = 0; i < NQ && !c->err; i++) {
		ret = d3dq_fence_wait(c->f[i], c->enqueued[i], 60 * T_SEC);
		if (ret) {
			lfail(c, ret, "fence never reached its last value (60 s)");
			break;
		}
		if (d3dq_fence_get_completed_value(c->f[i]) != c->enqueued[i]) {
			snprintf(c->msg, sizeof(c->msg),
				 "fence %d at %llu, predicted %llu", i,
				 (unsigned long long)
				 d3dq_fence_get_completed_value(c->f[i]),
				 (unsigned long long)c->enqueued[i]);
			c->err = -1;
		}
	}
	if (!c->err && lcheck(c))
		c->err = -1;
	*njobs = c->njobs;
	snprintf(msg, len, "%s", c->msg);
	ret = c->err;
	for (i = 0; i < NQ; i++) {
		d3dq_queue_destroy(c->q[i]);
		d3dq_fence_destroy(c->f[i]);
	}
	d3dq_fence_destroy(c->gate);
	d3dq_buffer_destroy(c->buf);
	d3dq_device_close(c->dev);
	free(c->jobs);
	free(c->slot_of);
	free(c->gate_time);
	free(c);
	return ret ? -1 : 0;
}

FIXTURE(lib) {
	int unused;
};

FIXTURE_SETUP(lib)
{
	int fd = t_open(0);

	if (fd < 0)
		SKIP(return, "no d3dq device");
	close(fd);
}

FIXTURE_TEARDOWN(lib)
{
}

/* Two processes, each four threads on six queues. */
TEST_F_TIMEOUT(lib, threads_and_processes, 86400)
{
	int jobs = 1000 * g_scale(), i, status;
	uint64_t seed = g_seed() ^ 0x11b;
	pid_t pid[2];
	char msg[256];
	unsigned long n;

	TH_LOG("seed 0x%llx, 2 processes x %d threads x %d executions",
	       (unsigned long long)seed, NT, jobs);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int ret = lrun(seed + i, jobs, msg, sizeof(msg), &n);

			if (ret)
				fprintf(stderr, "# process %d: %s\n", i, msg);
			else
				fprintf(stderr, "# process %d: %lu executions checked\n",
					i, n);
			_exit(ret ? 1 : 0);
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("process %d: status 0x%x", i, status);
	}
	T_EXPECT_IDLE(20000);
}

/* Library processes SIGKILLed at random moments; nothing is left. */
TEST_F_TIMEOUT(lib, sigkill_mid_run, 86400)
{
	uint64_t rng = g_seed() ^ 0x4b1;
	int i, rounds = 10 * g_scale(), status;
	struct t_objects o;
	char msg[256];
	unsigned long n;

	for (i = 0; i < rounds; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (!lrun(rng + i, 100000, msg, sizeof(msg), &n))
				_exit(0);
			fprintf(stderr, "# round %d: %s\n", i, msg);
			_exit(1);
		}
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		usleep(20000 + (rng >> 33) % 500000);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("status 0x%x", status);
		ASSERT_TRUE(t_wait_idle(0, 20000, &o))
			TH_LOG("round %d: leak: files %d queues %d jobs %d bos %d hw_fences %d",
			       i, o.files, o.queues, o.jobs, o.bos,
			       o.hw_fences);
	}
}

TEST_HARNESS_MAIN
