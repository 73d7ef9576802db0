// SPDX-License-Identifier: GPL-2.0
/*
 * The libraries export exactly the symbols listed in libd3dq.symbols and
 * libd3d12-d3dq.symbols.
 * Runs nm from binutils (the host's /usr is visible in the VM too).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

static int read_lines(FILE *f, char ***out)
{
	char line[512], **v = NULL;
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		v[n++] = strdup(line);
	}
	*out = v;
	return n;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The shared library build/lib/<so> exports exactly the lines of
 * <symbols> (relative to the top of the repository).
 */
static void check(struct __test_metadata *_metadata, const char *so,
		  const char *symbols, int at_least)
{
	char exe[PATH_MAX], cmd[PATH_MAX * 2 + 128], list[PATH_MAX + 64];
	char **want, **have, *dir;
	ssize_t len;
	FILE *f;
	int nw, nh, i;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(len, 0);
	exe[len] = 0;
	dir = dirname(exe);	/* build/tests/lib */
	if (access("/usr/bin/nm", X_OK))
		SKIP(return, "nm (binutils) is not installed");

	snprintf(list, sizeof(list), "%s/../../../%s", dir, symbols);
	f = fopen(list, "r");
	ASSERT_NE(NULL, f) TH_LOG("cannot open %s", list);
	nw = read_lines(f, &want);
	fclose(f);

	/* Defined dynamic symbols, without version nodes or suffixes. */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/nm -D --defined-only %s/../../lib/%s | "
		 "awk '$2 != \"A\" { sub(/@.*/, \"\", $3); print $3 }'", dir,
		 so);
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	nh = read_lines(f, &have);
	ASSERT_EQ(0, pclose(f));

	qsort(want, nw, sizeof(*want), cmp);
	qsort(have, nh, sizeof(*have), cmp);
	ASSERT_GE(nw, at_least);
	ASSERT_EQ(nw, nh);
	for (i = 0; i < nw; i++)
		EXPECT_STREQ(want[i], have[i]);
}

TEST(exported_symbols)
{
	check(_metadata, "libd3dq.so.0", "libd3dq/libd3dq.symbols", 20);
}

/* The D3D12 layer exports D3D12CreateDevice and D3D12GetDebugInterface. */
TEST(d3d12_exported_symbols)
{
	check(_metadata, "libd3d12-d3dq.so.0",
	      "libd3dq/d3d12/libd3d12-d3dq.symbols", 2);
}

TEST_HARNESS_MAIN
