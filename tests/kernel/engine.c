// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: the shared engine. Queues of a higher priority overtake lower
 * ones when the engine is contended, REALTIME needs CAP_SYS_NICE, and a
 * flood of work from one client does not hold back another client's job.
 * Everything is asserted on the order in which jobs finished (their
 * TIMESTAMP commands), never on durations.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "kselftest_harness.h"
#include "common/module.h"
#include "util/d3dq_test.h"

/* Work of one contending job: FILLs of this size, in engine steps. */
#define FILL_SIZE	(4u << 20)

FIXTURE(engine) {
	int fd;
	uint32_t gate_q, gate, ts;
	uint64_t *tsmap;
};

/*
 * The engine's pause after a client's last ready job (driver.rst,
 * *Engine*) changes when a step starts, never which: every case runs
 * with the default, with no pause and with the longest.
 */
FIXTURE_VARIANT(engine) {
	const char *pause_us;	/* NULL: the module's default */
};

FIXTURE_VARIANT_ADD(engine, pause_default) {
	.pause_us = NULL,
};

FIXTURE_VARIANT_ADD(engine, pause_off) {
	.pause_us = "0",
};

FIXTURE_VARIANT_ADD(engine, pause_longest) {
	.pause_us = "1000",
};

#define PAUSE_PARAM "/sys/module/d3dq/parameters/engine_pause_us"

FIXTURE_SETUP(engine)
{
	/*
	 * Jobs of up to 96 fills of 4 MiB: no job timeout ends them on a
	 * slow kernel (KASAN's, in make check-debug).
	 */
	self->fd = -1;
	if (t_can_reload())
		ASSERT_EQ(0, t_reload("job_timeout_ms=600000"));
	if (variant->pause_us)
		ASSERT_EQ(0, module_sysfs_write(PAUSE_PARAM, variant->pause_us));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->gate_q = t_queue(self->fd, 0, 0);
	self->gate = t_syncobj(self->fd);
	self->ts = t_bo(self->fd, 4096, (void **)&self->tsmap);
	ASSERT_NE(0, self->gate_q);
	ASSERT_NE(0, self->gate);
	ASSERT_NE(0, self->ts);
}

FIXTURE_TEARDOWN(engine)
{
	if (self->tsmap)
		munmap(self->tsmap, 4096);
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
	if (variant->pause_us)
		EXPECT_EQ(0, module_sysfs_write(PAUSE_PARAM, "20"));
	if (t_can_reload())
		EXPECT_EQ(0, t_reload(NULL));
}

/*
 * Point 1 of the gate signals after a short delay: the jobs waiting on it
 * become ready together, after every one of them was submitted (which
 * gate_was_closed() checks: a host too slow to submit them meanwhile
 * voids the case).
 */
static int open_gate_soon(FIXTURE_DATA(engine) *self)
{
	struct drm_d3dq_sync s = t_tl(self->gate, 1);
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_delay(&cs, 1000 * T_MS);
	return t_submit(self->fd, self->gate_q, NULL, 0, &s, 1, &cs);
}

/* After the submits: whether the gate was still closed (else skip). */
static bool gate_was_closed(FIXTURE_DATA(engine) *self)
{
	return t_fence_status(self->fd, self->gate, 1) == 0;
}

/*
 * On @q of @fd (whose gate syncobj is @gate): wait for the gate, fill
 * @bo @fills times, write the time at @ts[@slot] and signal (@done, 1).
 */
static int contender(int fd, uint32_t q, uint32_t gate, uint32_t bo,
		     int fills, uint32_t ts, int slot, uint32_t done)
{
	struct drm_d3dq_sync w = t_tl(gate, 1), s = t_tl(done, 1);
	struct t_cs cs;
	int i;

	t_cs_init(&cs);
	for (i = 0; i < fills; i++)
		t_cs_fill(&cs, bo, 0, i + 1, FILL_SIZE);
	t_cs_timestamp(&cs, ts, 8 * slot);
	return t_submit(fd, q, &w, 1, &s, 1, &cs);
}

/*
 * Four queues, submitted lowest priority first, each with the same work,
 * all ready at once: they finish REALTIME, HIGH, then the NORMAL ones.
 */
TEST_F(engine, higher_priority_overtakes)
{
	static const uint32_t prio[4] = {
		DRM_D3DQ_QUEUE_PRIORITY_NORMAL, DRM_D3DQ_QUEUE_PRIORITY_NORMAL,
		DRM_D3DQ_QUEUE_PRIORITY_HIGH, DRM_D3DQ_QUEUE_PRIORITY_REALTIME,
	};
	uint32_t q[4], bo[4], done[4];
	int i;

	for (i = 0; i < 4; i++) {
		q[i] = t_queue(self->fd, 0, prio[i]);
		bo[i] = t_bo(self->fd, FILL_SIZE, NULL);
		done[i] = t_syncobj(self->fd);
		ASSERT_NE(0, q[i]);
		ASSERT_NE(0, bo[i]);
		ASSERT_NE(0, done[i]);
	}
	ASSERT_EQ(0, open_gate_soon(self));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, contender(self->fd, q[i], self->gate, bo[i], 4,
				       self->ts, i, done[i]));
	if (!gate_was_closed(self))
		SKIP(return, "the gate opened before every job was submitted");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, t_wait(self->fd, done[i], 1, 60 * T_SEC));
		ASSERT_EQ(1, t_fence_status(self->fd, done[i], 1));
	}
	EXPECT_LT(self->tsmap[3], self->tsmap[2]);
	EXPECT_LT(self->tsmap[2], self->tsmap[0]);
	EXPECT_LT(self->tsmap[2], self->tsmap[1]);
}

/* A lower priority is not starved: it moves while a higher one floods. */
TEST_F(engine, lower_priority_progresses)
{
	uint32_t hq, nq, hbo, nbo, hdone, ndone;

	hq = t_queue(self->fd, 0, DRM_D3DQ_QUEUE_PRIORITY_HIGH);
	nq = t_queue(self->fd, 0, DRM_D3DQ_QUEUE_PRIORITY_NORMAL);
	hbo = t_bo(self->fd, FILL_SIZE, NULL);
	nbo = t_bo(self->fd, FILL_SIZE, NULL);
	hdone = t_syncobj(self->fd);
	ndone = t_syncobj(self->fd);
	ASSERT_NE(0, hq);
	ASSERT_NE(0, nq);
	ASSERT_NE(0, hdone);
	ASSERT_NE(0, ndone);

	/*
	 * The normal job is one fill, the high one 96: with one step in
	 * nine for the normal queue, the normal job ends first, even if its
	 * scheduler makes it ready 1,000 steps late (with twelve, where the
	 * margin was 60 steps, 6.1 lost once with a debug VM beside it).
	 */
	ASSERT_EQ(0, open_gate_soon(self));
	ASSERT_EQ(0, contender(self->fd, hq, self->gate, hbo, 96, self->ts, 0,
			       hdone));
	ASSERT_EQ(0, contender(self->fd, nq, self->gate, nbo, 1, self->ts, 1,
			       ndone));
	if (!gate_was_closed(self))
		SKIP(return, "the gate opened before every job was submitted");
	ASSERT_EQ(0, t_wait(self->fd, hdone, 1, 60 * T_SEC));
	ASSERT_EQ(0, t_wait(self->fd, ndone, 1, 60 * T_SEC));
	/*
	 * Both ran to the end (the high job's 384 MiB takes longer than
	 * the default job timeout on the debug kernel: see the fixture).
	 */
	ASSERT_EQ(1, t_fence_status(self->fd, hdone, 1));
	ASSERT_EQ(1, t_fence_status(self->fd, ndone, 1));
	EXPECT_LT(self->tsmap[1], self->tsmap[0]);
	TH_LOG("the high job ended %.1f ms after the normal one",
	       ((double)self->tsmap[0] - (double)self->tsmap[1]) / 1e6);
}

/*
 * One client floods the engine from eight queues; another client's job,
 * as big as each of them and submitted last, still finishes first: the
 * engine goes round the clients before it goes round a client's queues
 * (it gets half the engine, each flooding queue a sixteenth). The jobs
 * are long (64 steps) so that the other client's job may become ready
 * well after the flood's (its scheduler woken late) and still win.
 */
TEST_F(engine, flood_does_not_hold_back_another_client)
{
	uint32_t q[8], bo[8], done[8], q2, bo2, done2, gate2, ts2;
	uint64_t first_flood = UINT64_MAX;
	int fd2, dmabuf, sfd, i;

	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	for (i = 0; i < 8; i++) {
		q[i] = t_queue(self->fd, 0, 0);
		bo[i] = t_bo(self->fd, FILL_SIZE, NULL);
		done[i] = t_syncobj(self->fd);
		ASSERT_NE(0, q[i]);
		ASSERT_NE(0, bo[i]);
		ASSERT_NE(0, done[i]);
	}
	q2 = t_queue(fd2, 0, 0);
	bo2 = t_bo(fd2, FILL_SIZE, NULL);
	done2 = t_syncobj(fd2);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, bo2);
	ASSERT_NE(0, done2);
	/* The other client shares the gate and writes the same page. */
	ASSERT_EQ(0, drmSyncobjHandleToFD(self->fd, self->gate, &sfd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(fd2, sfd, &gate2));
	close(sfd);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->ts, DRM_CLOEXEC,
					&dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, dmabuf, &ts2));
	close(dmabuf);

	ASSERT_EQ(0, open_gate_soon(self));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, contender(self->fd, q[i], self->gate, bo[i], 4,
				       self->ts, i, done[i]));
	ASSERT_EQ(0, contender(fd2, q2, gate2, bo2, 4, ts2, 8, done2));
	if (!gate_was_closed(self)) {
		close(fd2);
		SKIP(return, "the gate opened before every job was submitted");
	}
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, t_wait(self->fd, done[i], 1, 60 * T_SEC));
		if (self->tsmap[i] < first_flood)
			first_flood = self->tsmap[i];
	}
	ASSERT_EQ(0, t_wait(fd2, done2, 1, 60 * T_SEC));
	EXPECT_LT(self->tsmap[8], first_flood);
	close(fd2);
}

/*
 * Three clients flood the engine, one per priority, each job one long
 * run of steps, with a job timeout long enough for all of them (the
 * module is reloaded). The NORMAL client's job still gets its share:
 * every ready priority gets at least one step in every
 * SHARE + priorities - 1 = 10. It is counted in engine steps: each step
 * of the REALTIME job ends with a TIMESTAMP, so the REALTIME timestamps
 * between two of the NORMAL job's tell how many steps REALTIME had
 * meanwhile.
 */
#define PRIO_ARGS	"job_timeout_ms=600000"
/* One REALTIME step: a FILL and a TIMESTAMP cost 256 KiB exactly. */
#define RT_FILL		((256u << 10) - 128)
#define RT_STEPS	1000
/* The NORMAL job: a TIMESTAMP, 1 MiB of FILL (5 steps), a TIMESTAMP. */
#define N_FILL		(1u << 20)
#define N_STEPS		5
/* Steps of other priorities a ready priority waits for at most, + 1. */
#define PRIO_BOUND	10

FIXTURE(prio) {
	int fd[3];
};

FIXTURE_SETUP(prio)
{
	int i;

	for (i = 0; i < 3; i++)
		self->fd[i] = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(PRIO_ARGS));
	for (i = 0; i < 3; i++) {
		self->fd[i] = t_open(0);
		ASSERT_LE(0, self->fd[i]);
	}
}

FIXTURE_TEARDOWN(prio)
{
	int i;

	if (self->fd[0] < 0)
		return;
	for (i = 0; i < 3; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* Poll a mapped timestamp until the engine wrote it (up to 30 s). */
static bool wait_written(volatile uint64_t *p)
{
	int i;

	for (i = 0; i < 30000 && !*p; i++)
		usleep(1000);
	return *p != 0;
}

TEST_F_TIMEOUT(prio, normal_progresses_under_realtime_and_high, 120)
{
	int rt = self->fd[0], hi = self->fd[1], no = self->fd[2];
	uint32_t rq, hq, nq, rbo, hbo, nbo, rts, hts, nts, rdone, ndone;
	uint64_t *rmap, *hmap, *nmap, submitted;
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s;
	unsigned int between = 0, since_submit = 0, i;
	static struct t_cs cs;

	rq = t_queue(rt, 0, DRM_D3DQ_QUEUE_PRIORITY_REALTIME);
	hq = t_queue(hi, 0, DRM_D3DQ_QUEUE_PRIORITY_HIGH);
	nq = t_queue(no, 0, DRM_D3DQ_QUEUE_PRIORITY_NORMAL);
	ASSERT_NE(0, rq);
	ASSERT_NE(0, hq);
	ASSERT_NE(0, nq);
	rbo = t_bo(rt, RT_FILL, NULL);
	hbo = t_bo(hi, FILL_SIZE, NULL);
	nbo = t_bo(no, N_FILL, NULL);
	rts = t_bo(rt, 8 * RT_STEPS, (void **)&rmap);
	hts = t_bo(hi, 4096, (void **)&hmap);
	nts = t_bo(no, 4096, (void **)&nmap);
	rdone = t_syncobj(rt);
	ndone = t_syncobj(no);
	ASSERT_NE(0, rbo);
	ASSERT_NE(0, hbo);
	ASSERT_NE(0, nbo);
	ASSERT_NE(0, rts);
	ASSERT_NE(0, hts);
	ASSERT_NE(0, nts);

	/* REALTIME: RT_STEPS steps, each ending with its timestamp. */
	t_cs_init(&cs);
	for (i = 0; i < RT_STEPS; i++) {
		t_cs_fill(&cs, rbo, 0, i & 0xff, RT_FILL);
		t_cs_timestamp(&cs, rts, 8 * i);
	}
	s = t_bin(rdone);
	ASSERT_EQ(0, t_submit(rt, rq, NULL, 0, &s, 1, &cs));

	/* HIGH: far more work than the test lasts (cancelled by close). */
	t_cs_init(&cs);
	t_cs_timestamp(&cs, hts, 0);
	for (i = 0; i < 256; i++)
		t_cs_fill(&cs, hbo, 0, i & 0xff, FILL_SIZE);
	ASSERT_EQ(0, t_submit(hi, hq, NULL, 0, NULL, 0, &cs));

	/* Both are on the engine before NORMAL comes. */
	ASSERT_TRUE(wait_written(&rmap[0]));
	ASSERT_TRUE(wait_written(&hmap[0]));

	t_cs_init(&cs);
	t_cs_timestamp(&cs, nts, 0);
	t_cs_fill(&cs, nbo, 0, 1, N_FILL);
	t_cs_timestamp(&cs, nts, 8);
	s = t_bin(ndone);
	submitted = t_now();
	ASSERT_EQ(0, t_submit(no, nq, NULL, 0, &s, 1, &cs));

	ASSERT_EQ(0, t_wait(no, ndone, 0, 120 * T_SEC));
	ASSERT_EQ(1, t_fence_status(no, ndone, 0));
	ASSERT_EQ(0, t_wait(rt, rdone, 0, 120 * T_SEC));
	ASSERT_EQ(1, t_fence_status(rt, rdone, 0));
	/* HIGH was busy all along: its job has not finished. */
	ASSERT_EQ(0, t_queue_state(hi, hq, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	EXPECT_EQ(1, st.pending_jobs);

	for (i = 0; i < RT_STEPS; i++) {
		if (rmap[i] > nmap[0] && rmap[i] < nmap[1])
			between++;
		if (rmap[i] > submitted && rmap[i] < nmap[1])
			since_submit++;
	}
	TH_LOG("REALTIME steps while NORMAL ran: %u; since NORMAL's submit: %u",
	       between, since_submit);
	/* NORMAL finished while REALTIME (and HIGH) still flooded. */
	EXPECT_LT(nmap[1], rmap[RT_STEPS - 1]);
	/* Its last N_STEPS - 1 steps each within PRIO_BOUND steps. */
	EXPECT_LE(between, (N_STEPS - 1) * PRIO_BOUND);

	munmap(rmap, 8 * RT_STEPS);
	munmap(hmap, 4096);
	munmap(nmap, 4096);
}

/* REALTIME needs CAP_SYS_NICE: without it, -EACCES; unknown: -EINVAL. */
TEST_F(engine, realtime_needs_cap_sys_nice)
{
	struct drm_d3dq_queue_create c = {
		.priority = DRM_D3DQ_QUEUE_PRIORITY_REALTIME + 1,
	};
	pid_t pid;
	int status;

	EXPECT_EQ(-1, drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];

		memset(d, 0, sizeof(d));
		if (syscall(SYS_capget, &h, d))
			_exit(10);
		d[0].effective &= ~(1u << CAP_SYS_NICE);
		if (syscall(SYS_capset, &h, d))
			_exit(11);
		c.priority = DRM_D3DQ_QUEUE_PRIORITY_REALTIME;
		if (!drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
			_exit(12);
		if (errno != EACCES)
			_exit(13);
		c.priority = DRM_D3DQ_QUEUE_PRIORITY_HIGH;
		if (drmIoctl(self->fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
