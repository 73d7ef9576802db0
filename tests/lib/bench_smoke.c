// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq-bench --smoke: every figure of the benchmark runs with a few
 * iterations, exits 0 and reports finite numbers, positive except for
 * differences (memory, counts), so "make bench" cannot rot unnoticed. The
 * figures are those the program lists in its JSON ("figures"), at least
 * the nine of issue 15, figure 10 has its panel with a throttled
 * submitter of direct jobs, figure 11 its two processes, figure 12 its
 * signals next to nodes another process parked, figures 5, 9 and 10
 * the rows that split an operation into its parts, and figure 13 its
 * waits for vgem's fences where vgem can be loaded (a figure that cannot
 * run is listed as "skipped" and need not report rows).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define EXIT_NO_DEVICE 4	/* d3dq-bench: no d3dq render node */

/* build/tests/lib/bench_smoke -> build/tools/d3dq-bench */
static int bench_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	int i;
	char *slash;

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (i = 0; i < 3; i++) {
		slash = strrchr(buf, '/');
		if (!slash)
			return -ENOENT;
		*slash = '\0';
	}
	if (strlen(buf) + sizeof("/tools/d3dq-bench") > len)
		return -ENAMETOOLONG;
	strcat(buf, "/tools/d3dq-bench");
	return 0;
}

static void dump(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "#   %s", line);
	fclose(f);
}

/* The number after "name": on a JSON line; NAN if absent or unreadable. */
static double field(const char *line, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\": ", name);
	p = strstr(line, key);
	if (!p)
		return NAN;
	return strtod(p + strlen(key), NULL);
}

/*
 * Rows that must be there: figure 10's panel of a submitter of direct
 * jobs, throttled or not (issue 24, item 5), figure 11's release of a
 * queue in another process next to the raw wake (issue 25), and figure
 * 12's signal next to no node and to the most nodes another process
 * parked (a few thousand with --smoke) above its value, and at or below
 * it with the longest gap a 1 ms sleeper saw (issue 38, item 2). The
 * parts (issue 40, items 1 and 3): figure 3's signal-only call idle and
 * behind a running job, a carried Wait, CPU signals releasing nothing
 * and one held job, and the raw parts of the signal-only call; figure
 * 5's signalling and registering calls and their floor, figure 9's
 * calls of a frame, library and raw, and figure 10's small job from its
 * SUBMIT to the engine and on to its waiter.
 */
static const char *const required_keys[] = {
	"engine_small_hogs", "engine_small_direct_normal",
	"engine_small_direct_throttled", "xproc_raw_wake", "xproc_lib",
	"nodes_above_none", "nodes_above_max", "nodes_below_signal_none",
	"nodes_below_signal_max", "nodes_below_gap_none",
	"nodes_below_gap_max", "nodes_below_spin_max", "nodes_gap_target",
	"event_raw_eventfd_call", "event_lib_local_call",
	"event_lib_local_register", "event_get_param",
	"frames_lib_n2_part_wait", "frames_lib_n2_part_exec_copy",
	"frames_lib_n2_part_signal_copy", "frames_lib_n2_part_qwait",
	"frames_lib_n2_part_exec_direct", "frames_lib_n2_part_signal_direct",
	"frames_lib_n2_gpu1ms_part_wait", "frames_raw_n2_part_wait",
	"frames_raw_n2_part_submit_copy", "frames_raw_n2_part_submit_direct",
	"engine_small_idle_part_submit", "engine_small_flooded_part_submit",
	"engine_small_flooded_part_to_engine",
	"engine_small_flooded_part_wake",
	"signal_get_param", "signal_raw_none", "signal_raw_fence",
	"signal_raw_tl", "signal_raw_both", "signal_raw_running",
	"signal_lib_idle", "signal_lib_running", "signal_raw_cpu",
	"signal_cpu_none", "signal_cpu_release", "signal_lib_wait",
	"signal_raw_running_tl", "signal_lib_exec_empty",
	"signal_lib_running_alone", "signal_clock",
};

#define NREQUIRED (sizeof(required_keys) / sizeof(required_keys[0]))

/*
 * Figure 13's rows (issue 41, item 5), required where vgem is loaded or
 * the VM carries its module: not on the debug kernel, which has none.
 */
static const char *const vgem_keys[] = {
	"foreign_raw_poll", "foreign_fence_thread", "foreign_lib",
	"foreign_queue", "foreign_queue_thread",
};

#define NVGEM (sizeof(vgem_keys) / sizeof(vgem_keys[0]))

static bool have_vgem(void)
{
	return !access("/sys/module/vgem", F_OK) ||
	       !access("/modules/extra/vgem.ko", R_OK);
}

FIXTURE(bench) {
	char json[64];
	char log[64];
};

FIXTURE_SETUP(bench)
{
	snprintf(self->json, sizeof(self->json), "/tmp/d3dq-bench-smoke-%d.json",
		 getpid());
	snprintf(self->log, sizeof(self->log), "/tmp/d3dq-bench-smoke-%d.log",
		 getpid());
}

FIXTURE_TEARDOWN(bench)
{
	unlink(self->json);
	unlink(self->log);
}

/*
 * Every figure once, in a few seconds on the Debian kernels; on the debug
 * kernel (make check-debug) with other guests on the host it took more
 * than 240 s.
 */
TEST_F_TIMEOUT(bench, smoke_every_figure, 900)
{
	int rows[64] = { 0 }, figs[64], nfigs = 0, ratios = 0, status, fd;
	int fig, i, found[NREQUIRED] = { 0 }, vfound[NVGEM] = { 0 };
	char path[PATH_MAX], line[1024], key[96];
	FILE *f;
	pid_t pid;

	ASSERT_EQ(0, bench_path(path, sizeof(path)));
	ASSERT_EQ(0, access(path, X_OK)) TH_LOG("%s is not built", path);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fd = open(self->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(path, path, "--smoke", "--json", self->json, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) {
		dump(self->log);
	}
	if (WEXITSTATUS(status) == EXIT_NO_DEVICE)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, WEXITSTATUS(status)) {
		dump(self->log);
	}

	f = fopen(self->json, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		double median, p99;
		char *p, *end;

		if (!strncmp(line, "\"figures\": [", 12)) {
			for (p = line + 12; nfigs < 64; p = end + 1) {
				long n = strtol(p, &end, 10);

				if (end == p)
					break;
				ASSERT_TRUE(n >= 1 && n < 64) TH_LOG("%s", line);
				figs[nfigs++] = (int)n;
				if (*end != ',')
					break;
			}
			continue;
		}
		if (strncmp(line, "{\"fig\": ", 8))
			continue;
		fig = atoi(line + 8);
		ASSERT_TRUE(fig >= 1 && fig < 64) TH_LOG("%s", line);
		if (strstr(line, "\"ratio\": ")) {
			double r = field(line, "ratio");

			EXPECT_TRUE(isfinite(r) && r > 0) TH_LOG("%s", line);
			ratios++;
			continue;
		}
		if (!strstr(line, "\"median\": "))
			continue;	/* a note */
		median = field(line, "median");
		p99 = field(line, "p99");
		EXPECT_TRUE(isfinite(median) && isfinite(p99)) TH_LOG("%s", line);
		if (!strstr(line, "\"delta\": true")) {
			EXPECT_TRUE(median > 0 && p99 > 0) TH_LOG("%s", line);
			EXPECT_TRUE(p99 >= median) TH_LOG("%s", line);
		}
		EXPECT_LT(0, field(line, "n")) TH_LOG("%s", line);
		rows[fig]++;
		for (i = 0; i < (int)NREQUIRED; i++) {
			snprintf(key, sizeof(key), "\"key\": \"%s\"",
				 required_keys[i]);
			found[i] += !!strstr(line, key);
		}
		for (i = 0; i < (int)NVGEM; i++) {
			snprintf(key, sizeof(key), "\"key\": \"%s\"",
				 vgem_keys[i]);
			vfound[i] += !!strstr(line, key);
		}
	}
	fclose(f);
	EXPECT_LE(10, nfigs) TH_LOG("the JSON lists %d figures", nfigs);
	for (i = 0; i < nfigs; i++)
		EXPECT_LT(0, rows[figs[i]])
			TH_LOG("figure %d reported nothing", figs[i]);
	EXPECT_LT(0, ratios);
	for (i = 0; i < (int)NREQUIRED; i++) {
		const char *k = required_keys[i];

		EXPECT_EQ(1, found[i]) TH_LOG("no row %s in the JSON", k);
	}
	for (i = 0; have_vgem() && i < (int)NVGEM; i++)
		EXPECT_EQ(1, vfound[i])
			TH_LOG("vgem is here, but no row %s in the JSON",
			       vgem_keys[i]);
	if (_metadata->exit_code)
		dump(self->log);
}

TEST_HARNESS_MAIN
