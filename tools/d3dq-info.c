// SPDX-License-Identifier: MIT
/*
 * d3dq-info: find the d3dq render node and print what the driver reports.
 *
 * Uses libdrm and the uapi header only, so it works without libd3dq.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "d3dq_drm.h"

#include "util/json.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const param_names[] = {
	[DRM_D3DQ_PARAM_UAPI_VERSION] = "uapi_version",
	[DRM_D3DQ_PARAM_FEATURES] = "features",
	[DRM_D3DQ_PARAM_MAX_QUEUES] = "max_queues",
	[DRM_D3DQ_PARAM_MAX_SYNCS] = "max_syncs",
	[DRM_D3DQ_PARAM_MAX_CMD_BYTES] = "max_cmd_bytes",
	[DRM_D3DQ_PARAM_MAX_PENDING_JOBS] = "max_pending_jobs",
	[DRM_D3DQ_PARAM_JOB_TIMEOUT_NS] = "job_timeout_ns",
	[DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY] = "timestamp_frequency",
	[DRM_D3DQ_PARAM_MAX_DELAY_NS] = "max_delay_ns",
	[DRM_D3DQ_PARAM_MAX_BO_SIZE] = "max_bo_size",
	[DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES] = "max_file_job_bytes",
	[DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES] = "max_user_fence_nodes",
};

static const char *const feature_names[] = {
	"timeline",
	"prime",
	"timeout",
	"wait_release",
	"priority",
	"submit_done",
	"fence",
	"fence_submit",
	"fence_event_syncobj",
	"fence_hold",
	"remove_on_loss",
	"fence_sync_file",
	"submit_carry",
	"submit_tail",
	"remove_own_fences",
};

static int is_d3dq(int fd, drmVersionPtr *out)
{
	drmVersionPtr v = drmGetVersion(fd);

	if (!v)
		return 0;
	if (v->name && strcmp(v->name, "d3dq") == 0) {
		*out = v;
		return 1;
	}
	drmFreeVersion(v);
	return 0;
}

/* Opens the first render node whose driver is d3dq. */
static int open_d3dq(char *path, size_t size, drmVersionPtr *version)
{
	struct dirent **names;
	int n, i, fd = -1;

	n = scandir("/dev/dri", &names, NULL, versionsort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (fd < 0 && strncmp(names[i]->d_name, "renderD", 7) == 0) {
			snprintf(path, size, "/dev/dri/%s", names[i]->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd >= 0 && !is_d3dq(fd, version)) {
				close(fd);
				fd = -1;
			}
		}
		free(names[i]);
	}
	free(names);
	return fd;
}

static int get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_d3dq_get_param gp = { .param = param };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &gp))
		return -errno;
	*value = gp.value;
	return 0;
}

static void print_features(uint64_t value, bool json)
{
	const char *sep = "";
	unsigned int b;

	for (b = 0; b < 64; b++) {
		if (!(value & (1ull << b)))
			continue;
		if (json) {
			printf("%s", sep);
			if (b < ARRAY_SIZE(feature_names)) {
				json_str(feature_names[b]);
			} else {
				printf("\"bit%u\"", b);
			}
			sep = ", ";
		} else if (b < ARRAY_SIZE(feature_names)) {
			printf(" %s", feature_names[b]);
		} else {
			printf(" bit%u", b);
		}
	}
}

static void print_text(int fd, const char *path, drmVersionPtr v)
{
	uint64_t value = 0;
	unsigned int i;
	int ret;

	printf("device:              %s\n", path);
	printf("driver:              %s\n", v->name);
	printf("version:             %d.%d.%d\n", v->version_major,
	       v->version_minor, v->version_patchlevel);
	printf("date:                %s\n", v->date ? v->date : "");
	printf("description:         %s\n", v->desc ? v->desc : "");

	for (i = 0; i < ARRAY_SIZE(param_names); i++) {
		ret = get_param(fd, i, &value);
		printf("%-20s ", param_names[i]);
		if (ret) {
			printf("(error: %s)\n", strerror(-ret));
			continue;
		}
		switch (i) {
		case DRM_D3DQ_PARAM_UAPI_VERSION:
			printf("%" PRIu64 ".%" PRIu64 "\n", value >> 16,
			       value & 0xffff);
			break;
		case DRM_D3DQ_PARAM_FEATURES:
			printf("0x%" PRIx64, value);
			print_features(value, false);
			printf("\n");
			break;
		default:
			printf("%" PRIu64 "\n", value);
			break;
		}
	}
}

/*
 * One JSON object: the same facts, numbers as numbers, a parameter the
 * driver refused as null (and its errno in "errors").
 */
static void print_json(int fd, const char *path, drmVersionPtr v)
{
	uint64_t value = 0, values[ARRAY_SIZE(param_names)];
	int errs[ARRAY_SIZE(param_names)];
	const char *sep = "";
	unsigned int i;

	printf("{\n  \"device\": ");
	json_str(path);
	printf(",\n  \"driver\": ");
	json_str(v->name);
	printf(",\n  \"version\": \"%d.%d.%d\",\n", v->version_major,
	       v->version_minor, v->version_patchlevel);
	printf("  \"date\": ");
	json_str(v->date);
	printf(",\n  \"description\": ");
	json_str(v->desc);
	printf(",\n  \"params\": {");
	for (i = 0; i < ARRAY_SIZE(param_names); i++) {
		errs[i] = get_param(fd, i, &value);
		values[i] = value;
		printf("%s\n    \"%s\": ", sep, param_names[i]);
		sep = ",";
		if (errs[i])
			printf("null");
		else if (i == DRM_D3DQ_PARAM_UAPI_VERSION)
			printf("\"%" PRIu64 ".%" PRIu64 "\"", value >> 16,
			       value & 0xffff);
		else
			printf("%" PRIu64, value);
	}
	printf("\n  },\n  \"features\": [");
	if (!errs[DRM_D3DQ_PARAM_FEATURES])
		print_features(values[DRM_D3DQ_PARAM_FEATURES], true);
	printf("],\n  \"errors\": {");
	sep = "";
	for (i = 0; i < ARRAY_SIZE(param_names); i++) {
		if (!errs[i])
			continue;
		printf("%s\n    \"%s\": ", sep, param_names[i]);
		json_str(strerror(-errs[i]));
		sep = ",";
	}
	printf("%s}\n}\n", *sep ? "\n  " : "");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: d3dq-info [--json]\n"
		   "  --json   one JSON object instead of text\n"
		   "Exit status: 0, 1 when there is no d3dq render node, 2 on bad usage.\n");
}

int main(int argc, char **argv)
{
	drmVersionPtr v = NULL;
	char path[sizeof("/dev/dri/") + 256];
	bool json = false;
	int fd, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}

	fd = open_d3dq(path, sizeof(path), &v);
	if (fd < 0) {
		fprintf(stderr, "d3dq-info: no d3dq render node in /dev/dri (is the module loaded?)\n");
		return 1;
	}
	if (json)
		print_json(fd, path, v);
	else
		print_text(fd, path, v);
	drmFreeVersion(v);
	close(fd);
	return 0;
}
