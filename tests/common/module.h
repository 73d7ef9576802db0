/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of every suite (header only, no library call) that change the
 * d3dq module under test: write a sysfs attribute (unbind, bind, a
 * parameter), and reload the module the harness loaded (scripts/vm-run
 * sets D3DQ_MODULE to it) with other parameters. A reload needs every
 * d3dq file of the guest closed; queue teardown and fence frees finish
 * asynchronously, so the unload is retried for 5 s.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TESTS_COMMON_MODULE_H
#define D3DQ_TESTS_COMMON_MODULE_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write @text to the sysfs file @path: 0 or -errno. */
static inline int module_sysfs_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Whether module_reload() can work: D3DQ_MODULE names a loaded d3dq. */
static inline bool module_can_reload(void)
{
	const char *m = getenv("D3DQ_MODULE");

	return m && *m && !access(m, R_OK) && !access("/sys/module/d3dq", F_OK);
}

/* insmod D3DQ_MODULE with @args (NULL: the defaults): 0 or -1. */
static inline int module_load(const char *args)
{
	const char *m = getenv("D3DQ_MODULE");
	char cmd[1024];

	if (!m || !*m)
		return -1;
	snprintf(cmd, sizeof(cmd), "insmod '%s' %s", m, args ? args : "");
	return system(cmd) == 0 ? 0 : -1;
}

/* Unload d3dq (retried, see above) and load it with @args: 0 or -1. */
static inline int module_reload(const char *args)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (access("/sys/module/d3dq", F_OK))
			break;
		if (system("rmmod d3dq 2>/dev/null") == 0)
			break;
		usleep(50000);
	}
	if (!access("/sys/module/d3dq", F_OK))
		return -1;
	return module_load(args);
}

#endif /* D3DQ_TESTS_COMMON_MODULE_H */
