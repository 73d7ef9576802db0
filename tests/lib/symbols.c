// SPDX-License-Identifier: GPL-2.0
/*
 * The libraries export exactly the symbols listed in libd3dq.symbols and
 * libd3d12-d3dq.symbols, each in the version node of the release that
 * added it (one node per release).
 * Runs nm and readelf from binutils (the host's /usr is visible in the VM too).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <d3dq/d3dq.h>

#include "kselftest_harness.h"

/*
 * The first nm or readelf of a run loads binutils from the host's /usr
 * through the VM's 9p mount: over 30 s (the harness's default limit) on
 * the debug kernel (make check-debug).
 */
FIXTURE(sym) {
	int unused;
};

FIXTURE_SETUP(sym)
{
}

FIXTURE_TEARDOWN(sym)
{
}

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

TEST_F_TIMEOUT(sym, exported_symbols, 300)
{
	check(_metadata, "libd3dq.so.0", "libd3dq/libd3dq.symbols", 20);
}

/* The D3D12 layer exports D3D12CreateDevice and D3D12GetDebugInterface. */
TEST_F_TIMEOUT(sym, d3d12_exported_symbols, 300)
{
	check(_metadata, "libd3d12-d3dq.so.0",
	      "libd3dq/d3d12/libd3d12-d3dq.symbols", 2);
}

/*
 * ABI hygiene: one version node per release. A symbol first shipped in
 * release X.Y sits in node PREFIX_X.Y, which inherits the node of the
 * release before; PREFIX_0 is release 0.1's (named before the rule, kept
 * so that programs linked against 0.1.0 still load). Then a program that
 * uses a newer symbol names the newer node, and the loader refuses it on
 * an older library at start-up instead of failing at its first call.
 *
 * Checked against the library itself (readelf's version definitions, nm's
 * symbol@@node) and debian/<package>.symbols, which says in which release
 * each symbol appeared.
 */
struct node {
	char name[64];
	char parent[64];
};

/* The node release ver's new symbols go to. */
static void release_node(const char *prefix, const char *ver, char *out,
			 size_t len)
{
	unsigned int major = 0, minor = 0;

	sscanf(ver, "%u.%u", &major, &minor);
	if (major == 0 && minor <= 1)
		snprintf(out, len, "%s_0", prefix);
	else
		snprintf(out, len, "%s_%u.%u", prefix, major, minor);
}

/* The output of cmd, one line per entry; the number of lines. */
static int run(struct __test_metadata *_metadata, const char *cmd,
	       char ***out)
{
	FILE *f = popen(cmd, "r");
	int n;

	if (!f)
		return -1;
	n = read_lines(f, out);
	EXPECT_EQ(0, pclose(f)) TH_LOG("%s", cmd);
	return n;
}

static void check_nodes(struct __test_metadata *_metadata, const char *so,
			const char *prefix, const char *deb_symbols)
{
	char exe[PATH_MAX], cmd[PATH_MAX * 2 + 256], path[PATH_MAX + 64];
	char **defs, **syms, **deb, want[128];
	struct node nodes[32];
	int ndefs, nsyms, ndeb, nnodes = 0, i, j, listed = 0;
	char *dir;
	ssize_t len;
	FILE *f;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(len, 0);
	exe[len] = 0;
	dir = dirname(exe);	/* build/tests/lib */
	if (access("/usr/bin/nm", X_OK) || access("/usr/bin/readelf", X_OK))
		SKIP(return, "nm and readelf (binutils) are not installed");

	/* The version definitions: "N name" and, after it, "P parent". */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/readelf -V --wide %s/../../lib/%s | awk '"
		 "/^Version definition/ { d = 1; next } "
		 "/^Version (needs|symbols)/ { d = 0 } "
		 "d && / Name: / && !/Flags: BASE/ { print \"N\", $NF } "
		 "d && / Parent 1: / { print \"P\", $NF }'", dir, so);
	ndefs = run(_metadata, cmd, &defs);
	ASSERT_GT(ndefs, 0) TH_LOG("%s defines no version node", so);
	for (i = 0; i < ndefs; i++) {
		if (defs[i][0] == 'N') {
			ASSERT_LT(nnodes, 32);
			snprintf(nodes[nnodes].name, sizeof(nodes[0].name),
				 "%s", defs[i] + 2);
			nodes[nnodes].parent[0] = 0;
			nnodes++;
		} else if (nnodes) {
			snprintf(nodes[nnodes - 1].parent,
				 sizeof(nodes[0].parent), "%s", defs[i] + 2);
		}
	}
	/* Each node after the first inherits the one before. */
	for (i = 0; i < nnodes; i++) {
		EXPECT_EQ(0, strncmp(nodes[i].name, prefix, strlen(prefix)))
			TH_LOG("%s: node %s", so, nodes[i].name);
		if (i)
			EXPECT_STREQ(nodes[i - 1].name, nodes[i].parent)
				TH_LOG("%s: %s inherits %s", so, nodes[i].name,
				       nodes[i].parent[0] ? nodes[i].parent :
				       "nothing");
	}

	/* Every defined symbol has a default version: "name node". */
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/nm -D --defined-only %s/../../lib/%s | "
		 "awk '$2 != \"A\" { n = split($3, p, \"@@\"); "
		 "print p[1], (n == 2 ? p[2] : \"-\") }'", dir, so);
	nsyms = run(_metadata, cmd, &syms);
	ASSERT_GT(nsyms, 0);

	/* " name@node release" lines of the Debian symbols file. */
	snprintf(path, sizeof(path), "%s/../../../%s", dir, deb_symbols);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f) TH_LOG("cannot open %s", path);
	ndeb = read_lines(f, &deb);
	fclose(f);

	for (i = 0; i < nsyms; i++) {
		char name[256], node[128], line[512];
		bool found = false;

		ASSERT_EQ(2, sscanf(syms[i], "%255s %127s", name, node));
		EXPECT_STRNE("-", node)
			TH_LOG("%s: %s has no version node", so, name);
		/* Its node is one of the library's. */
		for (j = 0; j < nnodes && strcmp(nodes[j].name, node); j++)
			;
		EXPECT_LT(j, nnodes) TH_LOG("%s: %s@@%s", so, name, node);
		/* The release that added it names that node. */
		for (j = 0; j < ndeb && !found; j++) {
			char dname[256], dnode[128], ver[64];

			snprintf(line, sizeof(line), "%s", deb[j]);
			if (line[0] != ' ' ||
			    sscanf(line, " %255[^@]@%127s %63s", dname, dnode,
				   ver) != 3 || strcmp(dname, name))
				continue;
			found = true;
			EXPECT_STREQ(dnode, node)
				TH_LOG("%s: %s is %s in %s", so, name, dnode,
				       deb_symbols);
			release_node(prefix, ver, want, sizeof(want));
			EXPECT_STREQ(want, node)
				TH_LOG("%s: %s, new in %s, belongs in %s", so,
				       name, ver, want);
		}
		EXPECT_TRUE(found)
			TH_LOG("%s: %s is not in %s", so, name, deb_symbols);
		listed += found;
	}
	/* No node without a symbol (one per release that adds some). */
	for (j = 0; j < nnodes; j++) {
		for (i = 0; i < nsyms; i++) {
			char name[256], node[128];

			if (sscanf(syms[i], "%255s %127s", name, node) == 2 &&
			    !strcmp(node, nodes[j].name))
				break;
		}
		EXPECT_LT(i, nsyms)
			TH_LOG("%s: node %s has no symbol", so, nodes[j].name);
	}
	EXPECT_EQ(nsyms, listed);
}

TEST_F_TIMEOUT(sym, version_nodes, 300)
{
	check_nodes(_metadata, "libd3dq.so.0", "LIBD3DQ",
		    "debian/libd3dq0.symbols");
}

TEST_F_TIMEOUT(sym, d3d12_version_nodes, 300)
{
	check_nodes(_metadata, "libd3d12-d3dq.so.0", "LIBD3D12_D3DQ",
		    "debian/libd3d12-d3dq0.symbols");
}

/*
 * The nodes of a library, oldest first, as readelf lists its version
 * definitions; returns how many.
 */
static int defined_nodes(struct __test_metadata *_metadata, const char *so,
			 char ***out)
{
	char exe[PATH_MAX], cmd[PATH_MAX * 2 + 256];
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = 0;
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/readelf -V --wide %s/../../lib/%s | awk '"
		 "/^Version definition/ { d = 1; next } "
		 "/^Version (needs|symbols)/ { d = 0 } "
		 "d && / Name: / && !/Flags: BASE/ { print $NF }'",
		 dirname(exe), so);
	return run(_metadata, cmd, out);
}

/*
 * The releases so far: 0.1 (LIBD3DQ_0), 0.2, which added devices
 * whose events are the program's tokens (d3dq_device_open_desc(3),
 * d3d12_d3dq_create_device(3)), 0.3, which added
 * d3dq_fence_export_sync_file(3) (libd3dq only), and 0.4, which adds
 * d3dq_device_get_max_buffer_size(3) and d3dq_fence_signal_on_sync_file(3)
 * and, in libd3d12-d3dq, the two fence functions of d3d12_d3dq.h, and
 * 0.5, which adds d3dq_buffer_import(3) and d3dq_queue_execute_flags(3)
 * (libd3dq only). A release that adds symbols adds its node here too.
 */
TEST_F_TIMEOUT(sym, the_releases_nodes, 300)
{
	static const char *const d3dq[] = { "LIBD3DQ_0", "LIBD3DQ_0.2",
					    "LIBD3DQ_0.3", "LIBD3DQ_0.4",
					    "LIBD3DQ_0.5" };
	static const char *const d3d12[] = { "LIBD3D12_D3DQ_0",
					     "LIBD3D12_D3DQ_0.2",
					     "LIBD3D12_D3DQ_0.4" };
	char **have;
	int n, i;

	if (access("/usr/bin/readelf", X_OK))
		SKIP(return, "readelf (binutils) is not installed");
	n = defined_nodes(_metadata, "libd3dq.so.0", &have);
	ASSERT_EQ(5, n);
	for (i = 0; i < n; i++)
		EXPECT_STREQ(d3dq[i], have[i]);
	n = defined_nodes(_metadata, "libd3d12-d3dq.so.0", &have);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++)
		EXPECT_STREQ(d3d12[i], have[i]);
}

/*
 * The version nodes program @prog (relative to build/tests/lib) needs
 * from library @file, one per line of *out; the number of lines, or -1
 * if there is no such program.
 */
static int needed_nodes(struct __test_metadata *_metadata, const char *prog,
			const char *file, char ***out)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], cmd[PATH_MAX * 2 + 256];
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return -1;
	exe[len] = 0;
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), prog);
	if (access(path, X_OK))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/readelf -V --wide %s | awk '"
		 "/^Version needs/ { n = 1; next } "
		 "n && / File: / { for (i = 1; i < NF; i++) "
		 "if ($i == \"File:\") f = $(i + 1) } "
		 "n && / Name: / && f == \"%s\" { print $3 }' | sort",
		 path, file);
	return run(_metadata, cmd, out);
}

/*
 * This program uses libd3dq: it records the node of what it uses, so
 * the loader checks the version when it starts.
 */
TEST_F_TIMEOUT(sym, programs_need_the_node, 300)
{
	char **lines;
	int n;

	if (access("/usr/bin/readelf", X_OK))
		SKIP(return, "readelf (binutils) is not installed");
	/* A call of libd3dq's, so that this program does need it. */
	EXPECT_NE(0, d3dq_version());
	n = needed_nodes(_metadata, "symbols", "libd3dq.so.0", &lines);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("LIBD3DQ_0", lines[0]);
}

/*
 * A program that uses 0.2's calls needs 0.2's node: on a 0.1 library
 * the loader refuses to start it. tests/lib/tokens and
 * tests/d3d12/callbacks are such programs (built with this one by make),
 * and tests/lib/sync_file one that needs 0.3's.
 */
TEST_F_TIMEOUT(sym, newer_programs_need_the_newer_node, 300)
{
	char **lines;
	int n;

	if (access("/usr/bin/readelf", X_OK))
		SKIP(return, "readelf (binutils) is not installed");
	n = needed_nodes(_metadata, "tokens", "libd3dq.so.0", &lines);
	ASSERT_EQ(2, n) TH_LOG("build/tests/lib/tokens");
	EXPECT_STREQ("LIBD3DQ_0", lines[0]);
	EXPECT_STREQ("LIBD3DQ_0.2", lines[1]);
	n = needed_nodes(_metadata, "sync_file", "libd3dq.so.0", &lines);
	ASSERT_EQ(2, n) TH_LOG("build/tests/lib/sync_file");
	EXPECT_STREQ("LIBD3DQ_0", lines[0]);
	EXPECT_STREQ("LIBD3DQ_0.3", lines[1]);
	n = needed_nodes(_metadata, "../d3d12/callbacks",
			 "libd3d12-d3dq.so.0", &lines);
	ASSERT_GE(n, 1) TH_LOG("build/tests/d3d12/callbacks");
	EXPECT_STREQ("LIBD3D12_D3DQ_0.2", lines[n - 1]);
}

TEST_HARNESS_MAIN
