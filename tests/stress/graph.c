// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq concurrency stress through raw ioctls: several processes, each
 * with several threads, submit random wait/signal graphs across their
 * queues and the other processes' queues (timelines shared as syncobj
 * fds). Checked: no job starts before the jobs it waits on ended (engine
 * timestamps), jobs of a queue run in order, every job runs, every
 * timeline ends at the predicted value, and the run makes progress.
 *
 * D3DQ_STRESS_SCALE multiplies the number of jobs (long mode: 20 or
 * more); D3DQ_STRESS_SEED changes the graph (printed).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"
#include "util/graph.h"

static void run(struct __test_metadata *_metadata, struct g_params *p)
{
	struct g_result r;
	int fd = t_open(0);

	if (fd < 0)
		SKIP(return, "no d3dq device");
	close(fd);
	p->seed ^= g_seed();
	TH_LOG("seed 0x%llx: %d processes x %d threads, %d queues each, %d jobs per thread",
	       (unsigned long long)p->seed, p->procs, p->threads, p->queues,
	       p->jobs);
	EXPECT_EQ(0, g_run(p, &r)) TH_LOG("%s", r.msg);
	TH_LOG("%lu jobs (%lu ran), %lu waits (%lu across processes), %lu order checks, %.1f s",
	       r.jobs, r.ran, r.waits, r.xproc_waits, r.checks, r.seconds);
	T_EXPECT_IDLE(20000);
}

/*
 * What is checked here is order, not the job timeout (kernel/timeout and
 * stress/faults test that). A job's timeout counts from run_job, its turns
 * on the shared engine included; 64 busy queues on a debug kernel under
 * TCG have kept a job waiting for more than the default 2 s. So the module
 * is loaded with a timeout no job of these graphs may reach, when the
 * harness can reload it; otherwise the test runs with what is loaded.
 */
#define STRESS_ARGS	"job_timeout_ms=120000"

FIXTURE(stress) {
	bool reloaded;
};

FIXTURE_SETUP(stress)
{
	self->reloaded = false;
	if (t_can_reload()) {
		ASSERT_EQ(0, t_reload(STRESS_ARGS));
		self->reloaded = true;
		TH_LOG("module reloaded with %s", STRESS_ARGS);
	}
}

FIXTURE_TEARDOWN(stress)
{
	if (self->reloaded)
		EXPECT_EQ(0, t_reload(NULL));
}

/* The main mix: three processes of three threads, six queues each. */
TEST_F_TIMEOUT(stress, processes_and_threads, 86400)
{
	struct g_params p = {
		.procs = 3, .threads = 3, .queues = 6,
		.jobs = 1500 * g_scale(), .seed = 1, .delay_us = 300,
		.stall_s = 60,
	};

	run(_metadata, &p);
}

/* Six threads on one queue of one process, waiting on each other. */
TEST_F_TIMEOUT(stress, one_queue_six_threads, 86400)
{
	struct g_params p = {
		.procs = 1, .threads = 6, .queues = 1,
		.jobs = 800 * g_scale(), .seed = 2, .delay_us = 100,
		.stall_s = 60,
	};

	run(_metadata, &p);
}

/* Many queues, few jobs each: wide graphs, lots of cross waits. */
TEST_F_TIMEOUT(stress, many_queues, 86400)
{
	struct g_params p = {
		.procs = 2, .threads = 4, .queues = 32,
		.jobs = 500 * g_scale(), .seed = 3, .delay_us = 50,
		.stall_s = 60,
	};

	run(_metadata, &p);
}

TEST_HARNESS_MAIN
