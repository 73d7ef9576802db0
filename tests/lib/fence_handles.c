// SPDX-License-Identifier: GPL-2.0
/*
 * A shared fence costs one kernel fence handle per reference (issue 39).
 * It cost three (its handle, a second import its waits and events were
 * made through, and a wake fence for ANY waits), to emulate what the
 * kernel does from uapi 1.10: destroying a handle releases exactly what
 * was made through it (R14, R20), and its number is no other fence's
 * afterwards. Counted in fdinfo (d3dq-fence-handles); R14 and R20
 * themselves are tests/lib/shared's and tests/lib/destroy's.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/util.h"

/* The fence handles of every d3dq file of this process; -1 if none. */
static long handles(void)
{
	struct dirent *d;
	long sum = -1;
	DIR *dir = opendir("/proc/self/fdinfo");
	char path[300], line[256];

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "d3dq-fence-handles:", 19))
				sum = (sum < 0 ? 0 : sum) + atol(line + 19);
		fclose(f);
	}
	closedir(dir);
	return sum;
}

FIXTURE(fh) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(fh, 4096, 0, 0)

TEST_F(fh, one_handle_per_reference)
{
	struct util_env *e = &self->e;
	struct d3dq_fence *f, *g;
	long base = handles();
	int xfd;

	if (base < 0)
		SKIP(return, "no d3dq-fence-handles in fdinfo (uapi 1.10)");
	ASSERT_EQ(0, d3dq_fence_create(e->dev, 0, D3DQ_FENCE_FLAG_SHARED, &f));
	EXPECT_EQ(base + 1, handles());
	ASSERT_EQ(0, d3dq_fence_export(f, &xfd));
	ASSERT_EQ(0, d3dq_fence_import(e->dev, xfd, &g));
	close(xfd);
	EXPECT_EQ(base + 2, handles());

	/* Both references work; one destroyed releases its own waits only. */
	ASSERT_EQ(0, d3dq_queue_wait(e->a, g, 1));
	ASSERT_EQ(0, d3dq_queue_signal(e->a, e->done, 1));
	ASSERT_EQ(0, d3dq_fence_signal(f, 1));
	ASSERT_EQ(0, d3dq_fence_wait(e->done, 1, D3DQ_TIMEOUT_INFINITE));
	EXPECT_EQ(1, d3dq_fence_get_completed_value(g));
	d3dq_fence_destroy(g);
	EXPECT_EQ(base + 1, handles());
	EXPECT_EQ(1, d3dq_fence_get_completed_value(f));
	ASSERT_EQ(0, d3dq_fence_signal(f, 2));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(f));
	d3dq_fence_destroy(f);
	EXPECT_EQ(base, handles());
}

TEST_HARNESS_MAIN
