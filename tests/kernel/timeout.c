// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: job timeout and its consequences, with the default 2 s timeout:
 * the job's fence fails with -ETIMEDOUT, the queue is lost, its other
 * jobs fail with -ECANCELED without running, queues depending on it are
 * lost too, and unrelated queues carry on.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

FIXTURE(to) {
	int fd;
	uint32_t bo;
	uint64_t *map;
	uint64_t timeout;
};

FIXTURE_SETUP(to)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->bo);
	self->timeout = t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	if (self->timeout != 2 * T_SEC)
		SKIP(return, "expects the default 2 s job timeout");
}

FIXTURE_TEARDOWN(to)
{
	if (self->map)
		munmap(self->map, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

/*
 * A timed-out job is logged at warning level with its queue, the process
 * that created the queue and the job: a user can tell who hung what
 * without enabling DRM debug output.
 */
TEST_F(to, logged)
{
	uint32_t q = t_queue(self->fd, 0, 0), s = t_syncobj(self->fd);
	struct drm_d3dq_sync sig = t_bin(s);
	char want[128], comm[32] = "", line[1024];
	bool found = false;
	struct t_cs cs;
	ssize_t n;
	FILE *f;
	int kmsg;

	ASSERT_NE(0, q);
	f = fopen("/proc/self/comm", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg < 0)
		SKIP(return, "no /dev/kmsg");
	ASSERT_LE(0, lseek(kmsg, 0, SEEK_END));

	t_cs_init(&cs);
	t_cs_delay(&cs, 4 * T_SEC);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, s, 0, 10 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, s, 0));

	/* "<level>,<seq>,<time>,<flags>;<text>": level 4 is KERN_WARNING. */
	snprintf(want, sizeof(want), "of queue %u (%s[%d]) timed out", q,
		 comm, getpid());
	while ((n = read(kmsg, line, sizeof(line) - 1)) > 0) {
		line[n] = 0;
		if (strstr(line, want) && strstr(line, "job ") &&
		    !strncmp(line, "4,", 2))
			found = true;
	}
	close(kmsg);
	EXPECT_TRUE(found) TH_LOG("no warning containing '%s'", want);
}

TEST_F(to, lost_queue)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t qc = t_queue(self->fd, 1, 0);
	uint32_t ta = t_syncobj(self->fd), tb = t_syncobj(self->fd);
	uint32_t tc = t_syncobj(self->fd), t1 = t_syncobj(self->fd);
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s, w;
	uint64_t start, end;
	struct t_cs cs;

	/*
	 * qa: a job that runs past the timeout, then one more. Errors are
	 * read from the newest point of a timeline (older signalled points
	 * are garbage-collected), so each job gets its own timeline.
	 */
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 1);
	t_cs_delay(&cs, 6 * T_SEC);
	t_cs_write64(&cs, self->bo, 8, 1);
	s = t_tl(t1, 1);
	start = t_now();
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 16, 1);
	s = t_tl(ta, 2);
	ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));

	/* qc depends on the job that will time out. */
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 24, 1);
	w = t_tl(t1, 1);
	s = t_tl(tc, 1);
	ASSERT_EQ(0, t_submit(self->fd, qc, &w, 1, &s, 1, &cs));

	/* qb is unrelated. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 100 * T_MS);
	t_cs_write64(&cs, self->bo, 32, 1);
	s = t_tl(tb, 1);
	ASSERT_EQ(0, t_submit(self->fd, qb, NULL, 0, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, t1, 1, 10 * T_SEC));
	end = t_now();
	ASSERT_EQ(0, t_wait(self->fd, ta, 2, 5 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tc, 1, 5 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tb, 1, 5 * T_SEC));

	/* Stopped at the timeout, long before the delay's end. */
	EXPECT_LE(start + self->timeout - 100 * T_MS, end);
	EXPECT_GT(start + 5 * T_SEC, end);

	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, t1, 1));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, ta, 2));
	EXPECT_EQ(-ECANCELED, t_fence_status(self->fd, tc, 1));
	EXPECT_EQ(1, t_fence_status(self->fd, tb, 1));
	EXPECT_EQ(1, self->map[0]);	/* ran up to the delay */
	EXPECT_EQ(0, self->map[1]);	/* stopped in the delay */
	EXPECT_EQ(0, self->map[2]);	/* cancelled, never ran */
	EXPECT_EQ(0, self->map[3]);	/* dependency failed */
	EXPECT_EQ(1, self->map[4]);	/* unrelated queue */

	ASSERT_EQ(0, t_queue_state(self->fd, qa, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ETIMEDOUT, st.reason);
	EXPECT_EQ(0, st.pending_jobs);
	ASSERT_EQ(0, t_queue_state(self->fd, qc, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	EXPECT_EQ(-ECANCELED, st.reason);
	ASSERT_EQ(0, t_queue_state(self->fd, qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	EXPECT_EQ(0, st.reason);

	/* Lost queues refuse work; the others take it. */
	s = t_tl(ta, 3);
	EXPECT_EQ(-ECANCELED, t_submit(self->fd, qa, NULL, 0, &s, 1, NULL));
	s = t_tl(tc, 2);
	EXPECT_EQ(-ECANCELED, t_submit(self->fd, qc, NULL, 0, &s, 1, NULL));
	s = t_tl(tb, 2);
	EXPECT_EQ(0, t_submit(self->fd, qb, NULL, 0, &s, 1, NULL));
	EXPECT_EQ(0, t_wait(self->fd, tb, 2, 5 * T_SEC));
	EXPECT_EQ(0, t_queue_destroy(self->fd, qa));
	EXPECT_EQ(0, t_queue_destroy(self->fd, qc));
}

/*
 * The timeout covers one job's run time: neither time spent waiting for
 * a dependency nor the time of earlier jobs of the queue counts.
 */
TEST_F(to, per_job)
{
	uint32_t qa = t_queue(self->fd, 0, 0), qb = t_queue(self->fd, 0, 0);
	uint32_t ta = t_syncobj(self->fd), tb = t_syncobj(self->fd);
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s, w;
	uint64_t each = self->timeout * 6 / 10;
	struct t_cs cs;
	int i;

	for (i = 1; i <= 3; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, each);
		s = t_tl(ta, i);
		ASSERT_EQ(0, t_submit(self->fd, qa, NULL, 0, &s, 1, &cs));
	}
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 5);
	w = t_tl(ta, 3);
	s = t_tl(tb, 1);
	ASSERT_EQ(0, t_submit(self->fd, qb, &w, 1, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, tb, 1, 20 * T_SEC));
	EXPECT_EQ(1, t_fence_status(self->fd, ta, 3));
	EXPECT_EQ(1, t_fence_status(self->fd, tb, 1));
	EXPECT_EQ(5, self->map[0]);
	ASSERT_EQ(0, t_queue_state(self->fd, qa, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	ASSERT_EQ(0, t_queue_state(self->fd, qb, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

/* Two queues time out at the same time, independently. */
TEST_F(to, two_at_once)
{
	uint32_t q[2] = { t_queue(self->fd, 0, 0), t_queue(self->fd, 2, 1) };
	uint32_t ok = t_queue(self->fd, 0, 0);
	uint32_t tl[3] = { t_syncobj(self->fd), t_syncobj(self->fd),
			   t_syncobj(self->fd) };
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s;
	struct t_cs cs;
	int i;

	for (i = 0; i < 2; i++) {
		t_cs_init(&cs);
		t_cs_delay(&cs, 5 * T_SEC);
		s = t_bin(tl[i]);
		ASSERT_EQ(0, t_submit(self->fd, q[i], NULL, 0, &s, 1, &cs));
	}
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 3);
	s = t_tl(tl[2], 1);
	/* Not a dependency of the others: runs at once. */
	ASSERT_EQ(0, t_submit(self->fd, ok, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, tl[2], 1, 10 * T_SEC));
	EXPECT_EQ(0, t_fence_status(self->fd, tl[0], 0));
	ASSERT_EQ(0, t_wait(self->fd, tl[1], 0, 10 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, tl[0], 0, 10 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, tl[0], 0));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, tl[1], 0));
	EXPECT_EQ(1, t_fence_status(self->fd, tl[2], 1));
	EXPECT_EQ(3, self->map[0]);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, t_queue_state(self->fd, q[i], &st));
		EXPECT_EQ(-ETIMEDOUT, st.reason);
	}
}

/*
 * The timeout counts a job's own engine time, its steps and DELAYs,
 * never its waits for a turn on the shared engine. A victim job of
 * VICTIM_STEPS steps, each framed by two TIMESTAMPs, runs while
 * FLOODERS other clients keep the engine busy with twice as much work
 * each: it gets one step in FLOODERS + 1, so its wall time (first
 * TIMESTAMP to last) is about FLOODERS + 1 times its own time (the sum
 * of its steps, from its TIMESTAMPs, in engine steps as the engine runs
 * them). A first flood, with a timeout nothing reaches, measures that
 * own time; the module is then loaded with OWN_MARGIN times it as the
 * job timeout, and the same flood again: the victim's wall time is
 * at least (FLOODERS + 1) / OWN_MARGIN, about 5, timeouts (checked) and
 * it still completes. fdinfo counts the same own time. Own work or a DELAY past
 * the timeout is still stopped.
 */
#define FILL_MB		4
#define VICTIM_STEPS	768	/* its commands: 60 KiB */
/* TIMESTAMP, FILL, TIMESTAMP: exactly one step. */
#define VICTIM_FILL	((256u << 10) - 3 * 64)
#define OWN_MARGIN	6
#define FLOODERS	31
#define TS_BYTES	(16u << 10)

FIXTURE(own) {
	int fd;
	uint32_t bo, ts;
	uint64_t *tsmap;
	int flood[FLOODERS];
};

FIXTURE_SETUP(own)
{
	int i;

	self->fd = -1;
	for (i = 0; i < FLOODERS; i++)
		self->flood[i] = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
}

static void own_close(FIXTURE_DATA(own) *self)
{
	int i;

	if (self->tsmap)
		munmap(self->tsmap, TS_BYTES);
	self->tsmap = NULL;
	if (self->fd >= 0)
		close(self->fd);
	self->fd = -1;
	for (i = 0; i < FLOODERS; i++) {
		if (self->flood[i] >= 0)
			close(self->flood[i]);
		self->flood[i] = -1;
	}
}

FIXTURE_TEARDOWN(own)
{
	if (!t_can_reload())
		return;
	own_close(self);
	T_EXPECT_IDLE(30000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* Open the device with a queue, a FILL buffer and a syncobj. */
static int client(uint32_t *q, uint32_t *bo, uint32_t *done)
{
	int fd = t_open(0);

	if (fd < 0)
		return -1;
	*q = t_queue(fd, 0, 0);
	*bo = t_bo(fd, (uint64_t)FILL_MB << 20, NULL);
	*done = t_syncobj(fd);
	if (!*q || !*bo || !*done) {
		close(fd);
		return -1;
	}
	return fd;
}

struct flood_result {
	int status;		/* of the victim's fence */
	uint64_t own, wall;	/* from its TIMESTAMPs */
	long long engine_ns;	/* its client's fdinfo */
};

/*
 * Load the module with @args, flood the engine and run the victim in
 * the flood; every file is closed again on return.
 */
static void flood(struct __test_metadata *_metadata,
		  FIXTURE_DATA(own) *self, const char *args,
		  struct flood_result *r)
{
	uint32_t q, bo, done, fq[FLOODERS], fbo[FLOODERS], fdone[FLOODERS];
	struct drm_d3dq_sync s;
	struct t_cs cs;
	uint64_t *m;
	int i, j;

	memset(r, 0, sizeof(*r));
	ASSERT_EQ(0, t_reload(args));
	for (i = 0; i < FLOODERS; i++) {
		self->flood[i] = client(&fq[i], &fbo[i], &fdone[i]);
		ASSERT_LE(0, self->flood[i]);
	}
	self->fd = client(&q, &bo, &done);
	ASSERT_LE(0, self->fd);
	self->ts = t_bo(self->fd, TS_BYTES, (void **)&self->tsmap);
	ASSERT_NE(0, self->ts);
	m = self->tsmap;

	/* Each flooder: twice the victim's steps. */
	for (i = 0; i < FLOODERS; i++) {
		t_cs_init(&cs);
		for (j = 0; j < 2 * VICTIM_STEPS / (FILL_MB * 4); j++)
			t_cs_fill(&cs, fbo[i], 0, j % 255 + 1,
				  (uint64_t)FILL_MB << 20);
		s = t_bin(fdone[i]);
		ASSERT_EQ(0, t_submit(self->flood[i], fq[i], NULL, 0, &s, 1,
				      &cs));
	}
	t_cs_init(&cs);
	for (i = 0; i < VICTIM_STEPS; i++) {
		t_cs_timestamp(&cs, self->ts, 16 * i);
		t_cs_fill(&cs, bo, 0, i % 255 + 1, VICTIM_FILL);
		t_cs_timestamp(&cs, self->ts, 16 * i + 8);
	}
	s = t_bin(done);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(self->fd, done, 0, 200 * T_SEC));
	r->status = t_fence_status(self->fd, done, 0);
	r->engine_ns = t_fdinfo(self->fd, "drm-engine-direct", NULL, 0);
	for (i = 0; i < VICTIM_STEPS && m[2 * i + 1]; i++)
		r->own += m[2 * i + 1] - m[2 * i];
	if (m[2 * VICTIM_STEPS - 1])
		r->wall = m[2 * VICTIM_STEPS - 1] - m[0];
	for (i = 0; i < FLOODERS; i++)
		ASSERT_EQ(0, t_wait(self->flood[i], fdone[i], 0, 200 * T_SEC));
	own_close(self);
}

TEST_F_TIMEOUT(own, only_own_work_counts, 400)
{
	uint64_t timeout_ms, delay;
	struct flood_result r;
	struct drm_d3dq_sync s;
	uint32_t q, bo, done;
	struct t_cs cs;
	char args[96];
	int i;

	/* The victim's own time in the flood, with a timeout out of reach. */
	flood(_metadata, self, "job_timeout_ms=600000", &r);
	ASSERT_EQ(1, r.status);
	TH_LOG("first flood: the victim's own time %.1f ms, wall time %.1f ms",
	       (double)r.own / 1e6, (double)r.wall / 1e6);

	timeout_ms = (OWN_MARGIN * r.own + T_MS - 1) / T_MS;
	snprintf(args, sizeof(args),
		 "job_timeout_ms=%llu max_delay_ns=600000000000",
		 (unsigned long long)timeout_ms);
	flood(_metadata, self, args, &r);
	TH_LOG("job timeout %llu ms; second flood: own time %.1f ms, wall time %.1f ms, fdinfo engine time %.1f ms",
	       (unsigned long long)timeout_ms, (double)r.own / 1e6,
	       (double)r.wall / 1e6, (double)r.engine_ns / 1e6);
	/* The victim completed... */
	ASSERT_EQ(1, r.status);
	/* ...although the flood made its wall time exceed the timeout. */
	ASSERT_LT(timeout_ms * T_MS, r.wall) TH_LOG("flood too weak");
	/* fdinfo counts the same own time: far below the wall time. */
	EXPECT_LT(0, r.engine_ns);
	EXPECT_LT(r.engine_ns, (long long)(r.wall / 2));

	/* Own work past the timeout is stopped: FILLs, then a DELAY. */
	self->fd = client(&q, &bo, &done);
	ASSERT_LE(0, self->fd);
	self->ts = t_bo(self->fd, TS_BYTES, (void **)&self->tsmap);
	ASSERT_NE(0, self->ts);
	t_cs_init(&cs);
	/*
	 * 256 FILLs of 64 MiB, 85 times the victim's steps: an engine alone
	 * runs them faster than a flooded one, but not 20 times faster.
	 */
	bo = t_bo(self->fd, 64ull << 20, NULL);
	ASSERT_NE(0, bo);
	for (i = 0; i < 256; i++)
		t_cs_fill(&cs, bo, 0, i % 255 + 1, 64ull << 20);
	t_cs_timestamp(&cs, self->ts, 0);
	s = t_bin(done);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, done, 0, 120 * T_SEC));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, done, 0));
	EXPECT_EQ(0, self->tsmap[0]);	/* stopped before its TIMESTAMP */
	delay = 3 * timeout_ms * T_MS;
	q = t_queue(self->fd, 0, 0);
	ASSERT_NE(0, q);
	t_cs_init(&cs);
	t_cs_delay(&cs, delay);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, done, 0, 60 * T_SEC + 2 * delay));
	EXPECT_EQ(-ETIMEDOUT, t_fence_status(self->fd, done, 0));
}

TEST_HARNESS_MAIN
