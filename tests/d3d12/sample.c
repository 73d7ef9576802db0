// SPDX-License-Identifier: GPL-2.0
/*
 * tools/d3d12-hello, D3D12 sample code unchanged, runs and checks its
 * frames.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

TEST(d3d12_hello)
{
	char exe[PATH_MAX], cmd[PATH_MAX + 64], line[256];
	int frames = 0, ok = 0, status;
	ssize_t len;
	FILE *p;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(len, 0);
	exe[len] = 0;
	if (access("/dev/dri", F_OK))
		SKIP(return, "no d3dq device");
	/* build/tests/d3d12/sample -> build/tools/d3d12-hello */
	snprintf(cmd, sizeof(cmd), "%s/../../tools/d3d12-hello 2>&1",
		 dirname(exe));
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		fputs("# ", stdout);
		fputs(line, stdout);
		frames += !!strstr(line, ": data ok,");
		ok += !strcmp(line, "d3d12-hello: all frames ok\n");
	}
	status = pclose(p);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(6, frames);
	EXPECT_EQ(1, ok);
}

TEST_HARNESS_MAIN
