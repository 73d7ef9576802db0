// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq-top --json and d3dq-info --json against a client whose state is
 * known: its buffers, queues, a job running on the compute engine for the
 * whole sample, a job held back by it and the engine time it already ran.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/* Output of build/tools/@tool @args (this is build/tests/kernel/tools). */
static char *run_tool(const char *tool, const char *args, int *status)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 256], *out = NULL;
	size_t len = 0, cap = 0, n;
	ssize_t r;
	FILE *f;

	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r <= 0)
		return NULL;
	exe[r] = 0;
	snprintf(cmd, sizeof(cmd), "%s/../../tools/%s %s", dirname(exe), tool,
		 args);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			out = realloc(out, cap);
			if (!out)
				break;
		}
		n = fread(out + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	*status = pclose(f);
	if (out)
		out[len] = 0;
	return out;
}

/* The number after "key": in @s, -1 if absent. */
static long long json_num(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

FIXTURE(tools) {
	int fd;
};

FIXTURE_SETUP(tools)
{
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(tools)
{
	if (self->fd >= 0)
		close(self->fd);
	T_EXPECT_IDLE(10000);
}

TEST_F(tools, top_json)
{
	uint64_t longest;
	uint32_t qd, qc, s1, s2;
	struct drm_d3dq_sync sig, w;
	char *out, *me, *next, pid[32], *engine;
	struct t_cs cs;
	int status;

	/*
	 * The compute job must still run when d3dq-top samples: with the
	 * default 2 s job timeout a slow VM (the debug kernel) samples too
	 * late. With a job timeout above MAX_DELAY the job runs its whole
	 * DELAY.
	 */
	if (t_can_reload()) {
		close(self->fd);
		ASSERT_EQ(0, t_reload("job_timeout_ms=60000"));
		self->fd = t_open(0);
		ASSERT_LE(0, self->fd);
	}
	longest = t_param(self->fd, DRM_D3DQ_PARAM_MAX_DELAY_NS);
	qd = t_queue(self->fd, 0, 0);
	qc = t_queue(self->fd, 1, 0);
	s1 = t_syncobj(self->fd);
	s2 = t_syncobj(self->fd);

	ASSERT_TRUE(qd && qc && s1 && s2);
	ASSERT_NE(0, t_bo(self->fd, 1 << 20, NULL));
	ASSERT_NE(0, t_bo(self->fd, 65536, NULL));

	/* 30 ms of direct work, finished. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 30 * T_MS);
	sig = t_bin(s1);
	ASSERT_EQ(0, t_submit(self->fd, qd, NULL, 0, &sig, 1, &cs));
	ASSERT_EQ(0, t_wait(self->fd, s1, 0, 10 * T_SEC));

	/* Compute busy for far longer than the sample; direct held by it. */
	t_cs_init(&cs);
	t_cs_delay(&cs, longest);
	sig = t_tl(s2, 1);
	ASSERT_EQ(0, t_submit(self->fd, qc, NULL, 0, &sig, 1, &cs));
	w = t_tl(s2, 1);
	ASSERT_EQ(0, t_submit(self->fd, qd, &w, 1, NULL, 0, NULL));

	out = run_tool("d3dq-top", "--json -n 1 -d 0.3", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	/* One line, one object. */
	EXPECT_EQ(0, strncmp(out, "{\"time_ns\": ", 12)) TH_LOG("%s", out);
	EXPECT_EQ(strlen(out) - 1, (size_t)(strchr(out, '\n') - out));

	snprintf(pid, sizeof(pid), "\"pid\": %d,", getpid());
	me = strstr(out, pid);
	ASSERT_NE(NULL, me) TH_LOG("this client is not listed: %s", out);
	next = strstr(me, "}}}");
	ASSERT_NE(NULL, next);
	next[1] = 0;	/* this client's object only */
	EXPECT_EQ(1, json_num(me, "files"));
	EXPECT_EQ(2, json_num(me, "queues"));
	EXPECT_EQ(2, json_num(me, "jobs_in_flight"));
	EXPECT_EQ(0, json_num(me, "timeouts"));
	EXPECT_EQ((1 << 20) + 65536, json_num(me, "memory_total"));
	EXPECT_EQ((1 << 20) + 65536, json_num(me, "memory_resident"));
	engine = strstr(me, "\"direct\": ");
	ASSERT_NE(NULL, engine);
	EXPECT_LE(30 * (long long)T_MS, json_num(engine, "busy_ns"));
	engine = strstr(me, "\"compute\": ");
	ASSERT_NE(NULL, engine);
	/* Busy through the whole interval: about 100 %, never 0. */
	EXPECT_LT(0, json_num(engine, "busy_percent")) TH_LOG("%s", engine);
	next[1] = '}';

	/* debugfs (the VM runs as root): the queues and the held job. */
	EXPECT_NE(NULL, strstr(out, "\"debugfs\": true"));
	me = strstr(out, "\"queues\": [");
	ASSERT_NE(NULL, me);
	snprintf(pid, sizeof(pid), "\"pid\": %d, \"queue\": %u,", getpid(), qd);
	me = strstr(me, pid);
	ASSERT_NE(NULL, me) TH_LOG("queue %u not listed: %s", qd, out);
	EXPECT_EQ(0, strncmp(strstr(me, "\"type\""), "\"type\": \"direct\"", 16));
	EXPECT_EQ(1, json_num(me, "held_jobs"));
	EXPECT_EQ(1, json_num(me, "pending"));
	free(out);

	/* Text mode, one sample: this process is listed. */
	out = run_tool("d3dq-top", "-n 1 -d 0.1", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "DIRECT%")) TH_LOG("%s", out);
	snprintf(pid, sizeof(pid), "%7d ", getpid());
	EXPECT_NE(NULL, strstr(out, pid)) TH_LOG("%s", out);
	free(out);

	ASSERT_EQ(0, t_queue_destroy(self->fd, qc));
	if (t_can_reload()) {
		close(self->fd);
		self->fd = -1;
		T_EXPECT_IDLE(10000);
		ASSERT_EQ(0, t_reload(NULL));
	}
}

TEST_F(tools, top_bad_usage)
{
	int status;
	char *out = run_tool("d3dq-top", "-n 0 2>/dev/null", &status);

	ASSERT_NE(NULL, out);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	free(out);
}

TEST_F(tools, info_json)
{
	char *out;
	int status;

	out = run_tool("d3dq-info", "--json", &status);
	ASSERT_NE(NULL, out);
	EXPECT_EQ(0, status);
	EXPECT_NE(NULL, strstr(out, "\"driver\": \"d3dq\"")) TH_LOG("%s", out);
	EXPECT_EQ((long long)t_param(self->fd, DRM_D3DQ_PARAM_MAX_QUEUES),
		  json_num(out, "max_queues"));
	EXPECT_EQ((long long)t_param(self->fd, DRM_D3DQ_PARAM_JOB_TIMEOUT_NS),
		  json_num(out, "job_timeout_ns"));
	EXPECT_NE(NULL, strstr(out, "\"features\": [\"timeline\""));
	EXPECT_NE(NULL, strstr(out, "\"errors\": {}"));
	free(out);
}

TEST_HARNESS_MAIN
