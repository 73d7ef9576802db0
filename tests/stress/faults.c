// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq faults under load: processes SIGKILLed at random points of the
 * graph stress (then rmmod must succeed and every object count be zero),
 * jobs timing out in the middle of the stress, queues, syncobjs, buffers
 * and files destroyed with work pending, per-file limits exhausted by
 * several threads, and (on a kernel with failslab, i.e. the debug kernel)
 * allocation failures injected into every ioctl.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"
#include "util/graph.h"

#define LEAK_MSG "leak: files %d queues %d jobs %d bos %d hw_fences %d"
#define LEAK_ARGS(o) (o).files, (o).queues, (o).jobs, (o).bos, (o).hw_fences

FIXTURE(faults) {
	bool reloaded;
};

FIXTURE_SETUP(faults)
{
	int fd = t_open(0);

	self->reloaded = false;
	if (fd < 0)
		SKIP(return, "no d3dq device");
	close(fd);
}

FIXTURE_TEARDOWN(faults)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

/*
 * Kill every process of the graph stress at a random moment, many times.
 * After each round nothing may be left; at the end the module unloads.
 */
TEST_F_TIMEOUT(faults, sigkill_during_stress, 86400)
{
	int rounds = 30 * g_scale(), i;
	uint64_t rng = g_seed();
	unsigned long jobs = 0;
	struct t_objects o;
	struct g_result r;

	for (i = 0; i < rounds; i++) {
		/*
		 * Lossy: a process that is still running may see a queue
		 * lost when a killed process's jobs it waited on are
		 * cancelled (-ECANCELED on its next submit, by design).
		 */
		struct g_params p = {
			.procs = 3, .threads = 2, .queues = 4, .jobs = 2000,
			.seed = rng + i, .delay_us = 500, .stall_s = 60,
			.lossy = true,
		};

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		p.kill_after_ms = 20 + (rng >> 33) % 600;
		ASSERT_EQ(0, g_run(&p, &r)) TH_LOG("round %d: %s", i, r.msg);
		jobs += r.jobs;
		ASSERT_TRUE(t_wait_idle(0, 20000, &o))
			TH_LOG("round %d (killed after %u ms): " LEAK_MSG, i,
			       p.kill_after_ms, LEAK_ARGS(o));
	}
	TH_LOG("%d rounds killed", rounds);
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set: rmmod not tried");
	self->reloaded = true;
	ASSERT_EQ(0, t_reload(NULL)) TH_LOG("rmmod or insmod failed");
	ASSERT_TRUE(t_wait_idle(0, 1000, &o)) TH_LOG(LEAK_MSG, LEAK_ARGS(o));
}

/*
 * A 30 ms job timeout and jobs of 60 ms mixed into the graph: queues get
 * lost mid-stress, their dependents are cancelled, and lost queues are
 * replaced. No job may run after a failed dependency or a timed-out
 * predecessor, and every timeline still reaches its last point.
 */
TEST_F_TIMEOUT(faults, timeouts_during_stress, 86400)
{
	struct g_params p = {
		.procs = 2, .threads = 3, .queues = 4,
		.jobs = 150 * g_scale(), .seed = g_seed() ^ 7, .delay_us = 200,
		.slow_every = 150, .slow_us = 60000, .lossy = true,
		.sync_every = 8,
		.stall_s = 60,
	};
	struct t_objects o;
	struct g_result r;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	self->reloaded = true;
	ASSERT_EQ(0, t_reload("job_timeout_ms=30"));
	EXPECT_EQ(0, g_run(&p, &r)) TH_LOG("%s", r.msg);
	TH_LOG("%lu jobs, %lu ran, %lu cancelled or timed out, %lu queues replaced, %lu checks, %lu waits on an old failed point ran",
	       r.jobs, r.ran, r.cancelled, r.replaced, r.checks,
	       r.failed_deps_ran);
	EXPECT_LT(0, r.replaced);
	EXPECT_LT(0, r.ran);
	EXPECT_TRUE(t_wait_idle(0, 20000, &o)) TH_LOG(LEAK_MSG, LEAK_ARGS(o));
}

/*
 * Work pending on several queues, chained across them; then, in a random
 * order, queues destroyed, syncobjs destroyed, buffer handles closed and
 * the file closed, at random moments. Every wait that was started on a
 * second file still returns, and nothing leaks.
 */
TEST_F_TIMEOUT(faults, destroy_with_pending_work, 86400)
{
	uint64_t rng = g_seed() ^ 0xde57;
	int round, rounds = 30 * g_scale();
	struct t_objects o;

	for (round = 0; round < rounds; round++) {
		uint32_t q[4], so[4], bo, h;
		struct drm_syncobj_handle ex = { 0 };
		struct drm_d3dq_sync w, s;
		int fd = t_open(0), fd2 = t_open(0), i, ret;
		struct t_cs cs;
		uint64_t k[4] = { 0 };

		ASSERT_LE(0, fd);
		ASSERT_LE(0, fd2);
		bo = t_bo(fd, 1 << 16, NULL);
		ASSERT_NE(0, bo);
		for (i = 0; i < 4; i++) {
			q[i] = t_queue(fd, i % 3, i % 2);
			so[i] = t_syncobj(fd);
			ASSERT_NE(0, q[i]);
			ASSERT_NE(0, so[i]);
		}
		for (i = 0; i < 40; i++) {
			int a = i % 4, b;

			rng = rng * 6364136223846793005ull + 1;
			b = (rng >> 40) % 4;
			t_cs_init(&cs);
			t_cs_fill(&cs, bo, 0, i & 0xff, 1 << 16);
			t_cs_delay(&cs, ((rng >> 20) % 3000) * 1000);
			s = t_tl(so[a], k[a] + 1);
			w = t_tl(so[b], k[b]);
			ret = t_submit(fd, q[a], &w, k[b] ? 1 : 0, &s, 1, &cs);
			ASSERT_EQ(0, ret) TH_LOG("round %d job %d", round, i);
			k[a]++;
		}
		/* A second file waits on the last point of queue 0. */
		ex.handle = so[0];
		ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &ex));
		ASSERT_EQ(0, drmSyncobjFDToHandle(fd2, ex.fd, &h));
		close(ex.fd);

		rng = rng * 6364136223846793005ull + 1;
		usleep((rng >> 40) % 20000);
		for (i = 0; i < 4; i++) {
			switch ((rng >> (8 * i)) % 4) {
			case 0: EXPECT_EQ(0, t_queue_destroy(fd, q[i])); break;
			case 1: EXPECT_EQ(0, drmSyncobjDestroy(fd, so[i])); break;
			case 2: {
				struct drm_gem_close c = { .handle = bo };

				if (i == 2)
					EXPECT_EQ(0, drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &c));
				break;
			}
			default: break;
			}
		}
		if ((rng >> 50) % 2)
			close(fd);
		/* Cancelled or finished, the point signals. */
		EXPECT_EQ(0, t_wait(fd2, h, k[0], 20 * T_SEC))
			TH_LOG("round %d: point %llu never signalled", round,
			       (unsigned long long)k[0]);
		if (!((rng >> 50) % 2))
			close(fd);
		close(fd2);
		ASSERT_TRUE(t_wait_idle(0, 20000, &o))
			TH_LOG("round %d: " LEAK_MSG, round, LEAK_ARGS(o));
	}
}

struct limits_ctx {
	int fd;
	uint32_t queue, tl;
	pthread_mutex_t lock;
	uint64_t next;
	int err;
	int jobs;
};

static void *limits_thread(void *arg)
{
	struct limits_ctx *c = arg;
	struct drm_d3dq_sync s;
	struct t_cs cs;
	int i, ret;

	for (i = 0; i < c->jobs; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, 200 * 1000);
		pthread_mutex_lock(&c->lock);
		s = t_tl(c->tl, ++c->next);
		/* Sleeps while the queue holds max_pending_jobs jobs. */
		ret = t_submit(c->fd, c->queue, NULL, 0, &s, 1, &cs);
		if (ret)
			c->next--;
		pthread_mutex_unlock(&c->lock);
		if (ret) {
			c->err = ret;
			break;
		}
	}
	return NULL;
}

/*
 * Tiny limits: two pending jobs per queue, four queues, four syncs. Four
 * threads submit to one queue through the pending cap (they sleep, none
 * fails); the queue limit gives EMFILE and recovers after a destroy;
 * one sync past the limit is EINVAL; and all of it cleans up.
 */
TEST_F_TIMEOUT(faults, limits_exhausted, 86400)
{
	struct limits_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct drm_d3dq_sync many[5];
	pthread_t th[4];
	uint32_t q[5];
	struct t_objects o;
	uint64_t v = 0;
	int i;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	self->reloaded = true;
	ASSERT_EQ(0, t_reload("max_queues=4 max_pending_jobs=2 max_syncs=4"));
	c.fd = t_open(0);
	ASSERT_LE(0, c.fd);
	c.tl = t_syncobj(c.fd);
	c.jobs = 25 * g_scale();
	for (i = 0; i < 4; i++) {
		q[i] = t_queue(c.fd, 0, 0);
		ASSERT_NE(0, q[i]);
	}
	EXPECT_EQ(0, t_queue(c.fd, 0, 0));
	EXPECT_EQ(EMFILE, errno);
	c.queue = q[0];
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, limits_thread, &c));
	/* While they fight over the cap: the queue limit again. */
	ASSERT_EQ(0, t_queue_destroy(c.fd, q[3]));
	q[3] = t_queue(c.fd, 1, 1);
	EXPECT_NE(0, q[3]);
	for (i = 0; i < 5; i++)
		many[i] = t_bin(c.tl);
	EXPECT_EQ(-EINVAL, t_submit(c.fd, q[1], NULL, 0, many, 5, NULL));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	EXPECT_EQ(0, c.err) TH_LOG("a submit failed: %s", strerror(-c.err));
	EXPECT_EQ(0, t_wait(c.fd, c.tl, c.next, 60 * T_SEC));
	EXPECT_EQ(0, drmSyncobjQuery(c.fd, &c.tl, &v, 1));
	EXPECT_EQ(4ull * c.jobs, v);
	close(c.fd);
	EXPECT_TRUE(t_wait_idle(0, 20000, &o)) TH_LOG(LEAK_MSG, LEAK_ARGS(o));
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -1;
	close(fd);
	return ret;
}

static void failslab_set(const char *dir, bool on)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/probability", dir);
	write_str(path, on ? "5" : "0");
	snprintf(path, sizeof(path), "%s/interval", dir);
	write_str(path, "1");
	snprintf(path, sizeof(path), "%s/times", dir);
	write_str(path, on ? "-1" : "0");
	snprintf(path, sizeof(path), "%s/verbose", dir);
	write_str(path, "0");
	snprintf(path, sizeof(path), "%s/task-filter", dir);
	write_str(path, "Y");
	snprintf(path, sizeof(path), "%s/ignore-gfp-wait", dir);
	write_str(path, "N");
}

/* Child: a mixed workload where any allocation may fail. */
static int failslab_child(int iterations)
{
	int i, ok = 0, bad = 0;
	int fd;

	if (write_str("/proc/self/make-it-fail", "1"))
		return 3;
	for (i = 0; i < iterations; i++) {
		uint32_t q = 0, bo = 0, so = 0;
		struct drm_d3dq_sync s;
		struct t_cs cs;
		int ret;

		/* t_open() itself may fail (DRM_IOCTL_VERSION allocates). */
		fd = t_open(0);
		if (fd < 0)
			continue;
		q = t_queue(fd, i % 3, i % 2);
		if (!q && errno != ENOMEM)
			bad++;
		bo = t_bo(fd, 8192, NULL);
		so = t_syncobj(fd);
		if (q && bo && so) {
			t_cs_init(&cs);
			t_cs_write64(&cs, bo, 0, i);
			t_cs_timestamp(&cs, bo, 8);
			s = t_tl(so, 1);
			ret = t_submit(fd, q, NULL, 0, &s, 1, &cs);
			if (ret && ret != -ENOMEM)
				bad++;
			else if (!ret)
				ok++;
			/* The point signals, whatever failed before. */
			if (!ret) {
				ret = t_wait(fd, so, 1, 20 * T_SEC);
				if (ret && ret != -ENOMEM)
					bad++;
			}
		}
		close(fd);
	}
	fprintf(stderr, "# failslab child: %d submits succeeded, %d bad errnos\n",
		ok, bad);
	return bad ? 1 : 0;
}

/*
 * Allocation failures (failslab and fail_page_alloc, debug kernel only):
 * every call returns success or ENOMEM (never anything else), whatever
 * succeeded completes, and nothing leaks.
 */
TEST_F_TIMEOUT(faults, allocation_failures, 86400)
{
	static const char *const dirs[] = {
		"/sys/kernel/debug/failslab",
		"/sys/kernel/debug/fail_page_alloc",
	};
	struct t_objects o;
	unsigned int d;

	if (access(dirs[0], F_OK))
		SKIP(return, "no failslab in this kernel (see make check-debug)");
	for (d = 0; d < 2; d++) {
		int status;
		pid_t pid;

		if (access(dirs[d], F_OK))
			continue;
		failslab_set(dirs[d], true);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0)
			_exit(failslab_child(200 * g_scale()));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		failslab_set(dirs[d], false);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("%s: child status 0x%x", dirs[d], status);
		EXPECT_TRUE(t_wait_idle(0, 20000, &o))
			TH_LOG("%s: " LEAK_MSG, dirs[d], LEAK_ARGS(o));
	}
}

TEST_HARNESS_MAIN
