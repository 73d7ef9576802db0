// SPDX-License-Identifier: MIT
/*
 * d3dq-bench: the raw driver interface the baselines use (libdrm only, on
 * a render node of their own), process and kernel memory, and the
 * library objects every figure makes.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "compat/drm_syncobj_eventfd.h"

int xioctl(unsigned long req, void *arg)
{
	return drmIoctl(raw_fd, req, arg) ? -errno : 0;
}

int open_raw(void)
{
	char name[64];
	int i, fd;

	for (i = 128; i < 192; i++) {
		drmVersionPtr v;
		bool ok;

		snprintf(name, sizeof(name), "%s/renderD%d", DRM_DIR_NAME, i);
		fd = open(name, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		ok = v && v->name && !strcmp(v->name, "d3dq");
		drmFreeVersion(v);
		if (ok)
			return fd;
		close(fd);
	}
	return -1;
}

uint64_t get_param(uint32_t param)
{
	struct drm_d3dq_get_param p = { .param = param };

	CHECK(xioctl(DRM_IOCTL_D3DQ_GET_PARAM, &p));
	return p.value;
}

uint32_t raw_syncobj(void)
{
	struct drm_syncobj_create c = { 0 };

	CHECK(xioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c));
	return c.handle;
}

void raw_syncobj_destroy(uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	xioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

int raw_signal(uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

int raw_wait(uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.timeout_nsec = INT64_MAX,
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
}

int raw_query(uint32_t h, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	return xioctl(DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

uint32_t raw_queue(void)
{
	struct drm_d3dq_queue_create c = { 0 };

	CHECK(xioctl(DRM_IOCTL_D3DQ_QUEUE_CREATE, &c));
	return c.id;
}

void raw_queue_destroy(uint32_t id)
{
	struct drm_d3dq_queue_destroy d = { .id = id };

	xioctl(DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d);
}

int get_direct_submit(void)
{
	int fd = open("/sys/module/d3dq/parameters/direct_submit",
		      O_RDONLY | O_CLOEXEC);
	char c = 0;
	int ret;

	if (fd < 0)
		return -errno;
	ret = read(fd, &c, 1) == 1 ? c == 'Y' : -EIO;
	close(fd);
	return ret;
}

int set_direct_submit(bool on)
{
	int fd = open("/sys/module/d3dq/parameters/direct_submit",
		      O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* One job: optional timeline wait, commands, timeline signal. */
int raw_submit(uint32_t queue, uint32_t wh, uint64_t wp, uint32_t sh,
		      uint64_t sp, const void *cmds, uint32_t bytes)
{
	struct drm_d3dq_sync w = { wh, DRM_D3DQ_SYNC_TIMELINE, wp };
	struct drm_d3dq_sync s = { sh, DRM_D3DQ_SYNC_TIMELINE, sp };
	struct drm_d3dq_submit a = {
		.queue_id = queue,
		.waits = DRM_D3DQ_OBJ_ARRAY(wh ? 1 : 0, &w),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, &s),
		.cmds = (uintptr_t)cmds,
		.cmd_bytes = bytes,
	};

	if (!wh)
		a.waits.stride = 0;
	return xioctl(DRM_IOCTL_D3DQ_SUBMIT, &a);
}

bool probe_syncobj_eventfd(void)
{
	struct drm_syncobj_eventfd a = { 0 };
	uint32_t h = raw_syncobj();
	int efd = eventfd(0, EFD_CLOEXEC);
	bool ok;

	a.handle = h;
	a.fd = efd;
	ok = efd >= 0 && !xioctl(DRM_IOCTL_SYNCOBJ_EVENTFD, &a);
	raw_syncobj_destroy(h);
	if (efd >= 0)
		close(efd);
	return ok;
}


/* --- process and kernel memory --- */

int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A "Name: value kB" field of a /proc file, in KiB; -1 if absent. */
static long proc_kb(const char *path, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct mem mem_now(void)
{
	struct mem m = {
		.rss = proc_kb("/proc/self/status", "VmRSS"),
		.slab = proc_kb("/proc/meminfo", "Slab"),
		.sunreclaim = proc_kb("/proc/meminfo", "SUnreclaim"),
		.kstack = proc_kb("/proc/meminfo", "KernelStack"),
		.vmalloc = proc_kb("/proc/meminfo", "VmallocUsed"),
	};

	return m;
}

/*
 * The kernel's preemption model, the word in parentheses of debugfs's
 * sched/preempt ("none voluntary (full)"), or "" if it cannot be read.
 */
void preempt_model(char *buf, size_t len)
{
	char line[128] = "", *a, *b;
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open("/sys/kernel/debug/sched/preempt", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	line[n > 0 ? n : 0] = '\0';
	a = strchr(line, '(');
	b = a ? strchr(a, ')') : NULL;
	if (b)
		snprintf(buf, len, "%.*s", (int)(b - a - 1), a + 1);
}

/* --- library helpers --- */

struct d3dq_queue *lib_queue(struct d3dq_device *dev)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_queue *q;

	CHECK(d3dq_queue_create(dev, &desc, &q));
	return q;
}

struct d3dq_fence *lib_fence(struct d3dq_device *dev, uint32_t flags)
{
	struct d3dq_fence *f;

	CHECK(d3dq_fence_create(dev, 0, flags, &f));
	return f;
}

struct d3dq_device *lib_open(void)
{
	struct d3dq_device *dev;

	CHECK(d3dq_device_open(NULL, &dev));
	return dev;
}

struct raw_bo raw_bo_create(void)
{
	struct drm_d3dq_bo_create c = { .size = 4096 };
	struct drm_d3dq_bo_mmap_offset o = { 0 };
	struct raw_bo bo;
	void *p;

	CHECK(xioctl(DRM_IOCTL_D3DQ_BO_CREATE, &c));
	o.handle = c.handle;
	CHECK(xioctl(DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &o));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, raw_fd,
		 (off_t)o.offset);
	if (p == MAP_FAILED)
		die("mmap", errno, __LINE__);
	bo.handle = c.handle;
	bo.map = p;
	return bo;
}

void raw_bo_destroy(struct raw_bo bo)
{
	struct drm_gem_close c = { .handle = bo.handle };

	munmap((void *)bo.map, 4096);
	xioctl(DRM_IOCTL_GEM_CLOSE, &c);
}

struct drm_d3dq_cmd_write64 raw_write64(struct raw_bo *bo, uint64_t offset,
					uint64_t value)
{
	struct drm_d3dq_cmd_write64 w = {
		{ DRM_D3DQ_CMD_WRITE64, sizeof(w) }, bo->handle, 0, offset,
		value,
	};

	return w;
}

struct d3dq_cmdlist *lib_list_write64(struct d3dq_device *dev,
				      struct d3dq_buffer *buf,
				      uint64_t offset, uint64_t value)
{
	struct d3dq_cmdlist *l;

	CHECK(d3dq_cmdlist_create(dev, &l));
	CHECK(d3dq_cmdlist_write64(l, buf, offset, value));
	CHECK(d3dq_cmdlist_close(l));
	return l;
}
