// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the d3dq kernel tests.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "util/d3dq_test.h"
#include "common/module.h"

int t_open(int index)
{
	char path[64];
	int i, fd, seen = 0;

	for (i = 128; i < 192; i++) {
		drmVersionPtr v;
		bool match;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		match = v && !strcmp(v->name, "d3dq");
		drmFreeVersion(v);
		if (match && seen++ == index)
			return fd;
		close(fd);
	}
	errno = ENODEV;
	return -1;
}

uint64_t t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * T_SEC + ts.tv_nsec;
}

int64_t t_deadline(uint64_t ns)
{
	return (int64_t)(t_now() + ns);
}

static const char *debugfs_dir(void)
{
	static char dir[300];
	char path[600], name[64];
	struct dirent *de;
	DIR *d;

	/* An unbind or unload removes it; a rebound device has another. */
	if (dir[0]) {
		snprintf(path, sizeof(path), "%s/objects", dir);
		if (!access(path, R_OK))
			return dir;
		dir[0] = 0;
	}
	d = opendir("/sys/kernel/debug/dri");
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		FILE *f;
		bool ok;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%s/name",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = fgets(name, sizeof(name), f) && !strncmp(name, "d3dq ", 5);
		fclose(f);
		snprintf(path, sizeof(path),
			 "/sys/kernel/debug/dri/%s/objects", de->d_name);
		if (ok && !access(path, R_OK)) {
			snprintf(dir, sizeof(dir), "/sys/kernel/debug/dri/%s",
				 de->d_name);
			break;
		}
	}
	closedir(d);
	return dir[0] ? dir : NULL;
}

int t_objects(struct t_objects *o)
{
	const char *dir = debugfs_dir();
	char path[400], key[32];
	int value;
	FILE *f;

	memset(o, 0, sizeof(*o));
	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/objects", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%31s %d", key, &value) == 2) {
		if (!strcmp(key, "files"))
			o->files = value;
		else if (!strcmp(key, "queues"))
			o->queues = value;
		else if (!strcmp(key, "jobs"))
			o->jobs = value;
		else if (!strcmp(key, "bos"))
			o->bos = value;
		else if (!strcmp(key, "hw_fences"))
			o->hw_fences = value;
		else if (!strcmp(key, "schedulers"))
			o->schedulers = value;
		else if (!strcmp(key, "fences"))
			o->fences = value;
		else if (!strcmp(key, "fence_events"))
			o->fence_events = value;
		else if (!strcmp(key, "fence_imports"))
			o->fence_imports = value;
	}
	fclose(f);
	return 0;
}

bool t_wait_idle(int files, int ms, struct t_objects *o)
{
	int waited;

	for (waited = 0;; waited += 10) {
		if (t_objects(o))
			return false;
		if (o->files == files && !o->queues && !o->jobs && !o->bos &&
		    !o->hw_fences && !o->schedulers && !o->fences &&
		    !o->fence_events && !o->fence_imports)
			return true;
		if (waited >= ms)
			return false;
		usleep(10000);
	}
}

const char *t_queues_text(void)
{
	static char buf[65536];
	const char *dir = debugfs_dir();
	char path[400];
	ssize_t n;
	int fd;

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/queues", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return buf;
}

long long t_fdinfo(int fd, const char *key, char *text, size_t size)
{
	char path[64], line[256], *v, *end;
	long long value = -1;
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		v = line + klen + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = 0;
		if (text)
			snprintf(text, size, "%s", v);
		value = strtoll(v, &end, 10);
		end += strspn(end, " ");
		if (strcmp(end, "KiB") == 0)
			value <<= 10;
		else if (strcmp(end, "MiB") == 0)
			value <<= 20;
		else if (*end && strcmp(end, "ns") != 0)
			value = -2;	/* a unit drm-usage-stats does not have */
		break;
	}
	fclose(f);
	return value;
}

uint64_t t_param(int fd, uint32_t param)
{
	struct drm_d3dq_get_param p = { .param = param };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_GET_PARAM, &p))
		return 0;
	return p.value;
}

void *t_bo_map(int fd, uint32_t handle, uint64_t size)
{
	struct drm_d3dq_bo_mmap_offset mo = { .handle = handle };
	void *p;

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_BO_MMAP_OFFSET, &mo))
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 mo.offset);
	return p == MAP_FAILED ? NULL : p;
}

uint32_t t_bo(int fd, uint64_t size, void **map)
{
	struct drm_d3dq_bo_create c = { .size = size };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_BO_CREATE, &c))
		return 0;
	if (map) {
		*map = t_bo_map(fd, c.handle, c.size);
		if (!*map)
			return 0;
	}
	return c.handle;
}

uint32_t t_queue(int fd, uint32_t type, uint32_t priority)
{
	struct drm_d3dq_queue_create c = { .type = type,
					   .priority = priority };

	if (drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
		return 0;
	return c.id;
}

int t_queue_destroy(int fd, uint32_t id)
{
	struct drm_d3dq_queue_destroy d = { .id = id };

	return drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_DESTROY, &d) ? -errno : 0;
}

int t_queue_state(int fd, uint32_t id, struct drm_d3dq_queue_get_state *st)
{
	memset(st, 0, sizeof(*st));
	st->id = id;
	return drmIoctl(fd, DRM_IOCTL_D3DQ_QUEUE_GET_STATE, st) ? -errno : 0;
}

void t_cs_init(struct t_cs *cs)
{
	cs->len = 0;
}

void t_cs_raw(struct t_cs *cs, const void *data, uint32_t size)
{
	if (cs->len + size > sizeof(cs->buf))
		abort();
	memcpy(cs->buf + cs->len, data, size);
	cs->len += size;
}

#define HDR(o, type) { .op = (o), .size = sizeof(type) }

void t_cs_write64(struct t_cs *cs, uint32_t bo, uint64_t off, uint64_t value)
{
	struct drm_d3dq_cmd_write64 c = {
		.hdr = HDR(DRM_D3DQ_CMD_WRITE64, c),
		.handle = bo, .offset = off, .value = value,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

void t_cs_copy(struct t_cs *cs, uint32_t dst, uint64_t dst_off, uint32_t src,
	       uint64_t src_off, uint64_t size)
{
	struct drm_d3dq_cmd_copy c = {
		.hdr = HDR(DRM_D3DQ_CMD_COPY, c),
		.dst_handle = dst, .src_handle = src,
		.dst_offset = dst_off, .src_offset = src_off, .size = size,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

void t_cs_fill(struct t_cs *cs, uint32_t bo, uint64_t off, uint32_t value,
	       uint64_t size)
{
	struct drm_d3dq_cmd_fill c = {
		.hdr = HDR(DRM_D3DQ_CMD_FILL, c),
		.handle = bo, .value = value, .offset = off, .size = size,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

void t_cs_cmp_store(struct t_cs *cs, uint32_t bo, uint64_t off,
		    uint64_t expected, uint64_t desired)
{
	struct drm_d3dq_cmd_cmp_store64 c = {
		.hdr = HDR(DRM_D3DQ_CMD_CMP_STORE64, c),
		.handle = bo, .offset = off,
		.expected = expected, .desired = desired,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

void t_cs_timestamp(struct t_cs *cs, uint32_t bo, uint64_t off)
{
	struct drm_d3dq_cmd_timestamp c = {
		.hdr = HDR(DRM_D3DQ_CMD_TIMESTAMP, c),
		.handle = bo, .offset = off,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

void t_cs_delay(struct t_cs *cs, uint64_t ns)
{
	struct drm_d3dq_cmd_delay c = {
		.hdr = HDR(DRM_D3DQ_CMD_DELAY, c),
		.ns = ns,
	};

	t_cs_raw(cs, &c, sizeof(c));
}

int t_submit_raw(int fd, struct drm_d3dq_submit *args)
{
	return drmIoctl(fd, DRM_IOCTL_D3DQ_SUBMIT, args) ? -errno : 0;
}

static int submit_flags(int fd, uint32_t queue, uint32_t flags,
			const struct drm_d3dq_sync *waits, uint32_t nwaits,
			const struct drm_d3dq_sync *signals, uint32_t nsignals,
			const struct t_cs *cs, uint32_t *out_flags,
			uint64_t *seqno)
{
	struct drm_d3dq_submit s = {
		.queue_id = queue,
		.flags = flags,
		.waits = DRM_D3DQ_OBJ_ARRAY(nwaits, waits),
		.signals = DRM_D3DQ_OBJ_ARRAY(nsignals, signals),
		.cmds = cs ? (uint64_t)(uintptr_t)cs->buf : 0,
		.cmd_bytes = cs ? cs->len : 0,
	};
	int ret = t_submit_raw(fd, &s);

	if (out_flags)
		*out_flags = s.out_flags;
	if (seqno)
		*seqno = s.seqno;
	return ret;
}

int t_submit_out(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const struct drm_d3dq_sync *signals,
		 uint32_t nsignals, const struct t_cs *cs, uint32_t *out_flags,
		 uint64_t *seqno)
{
	return submit_flags(fd, queue, 0, waits, nwaits, signals, nsignals,
			    cs, out_flags, seqno);
}

int t_submit_hold(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
		  uint32_t nwaits, const struct drm_d3dq_sync *signals,
		  uint32_t nsignals, const struct t_cs *cs, uint32_t *out_flags,
		  uint64_t *seqno)
{
	return submit_flags(fd, queue, DRM_D3DQ_SUBMIT_HOLD, waits, nwaits,
			    signals, nsignals, cs, out_flags, seqno);
}

int t_carry(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
	    uint32_t nwaits)
{
	uint32_t out_flags = 0;
	uint64_t seqno = 0;
	int ret;

	ret = submit_flags(fd, queue, DRM_D3DQ_SUBMIT_CARRY, waits, nwaits,
			   NULL, 0, NULL, &out_flags, &seqno);
	if (!ret && (out_flags || seqno))
		return -EPROTO;
	return ret;
}

int t_tail(int fd, uint32_t queue, const struct drm_d3dq_sync *signals,
	   uint32_t nsignals, uint32_t *out_flags, uint64_t *seqno)
{
	return submit_flags(fd, queue, DRM_D3DQ_SUBMIT_TAIL, NULL, 0, signals,
			    nsignals, NULL, out_flags, seqno);
}

int t_submit_delay(int fd, uint32_t queue, uint64_t ms, uint32_t so,
		   uint64_t point, const struct drm_d3dq_sync *fs)
{
	struct drm_d3dq_sync s[2] = { t_tl(so, point) };
	struct t_cs cs;

	if (fs)
		s[1] = *fs;
	t_cs_init(&cs);
	t_cs_delay(&cs, ms * T_MS);
	return t_submit(fd, queue, NULL, 0, s, fs ? 2 : 1, &cs);
}

int t_submit(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
	     uint32_t nwaits, const struct drm_d3dq_sync *signals,
	     uint32_t nsignals, const struct t_cs *cs)
{
	return t_submit_out(fd, queue, waits, nwaits, signals, nsignals, cs,
			    NULL, NULL);
}

uint32_t t_syncobj(int fd)
{
	uint32_t h = 0;

	if (drmSyncobjCreate(fd, 0, &h))
		return 0;
	return h;
}

int t_wait(int fd, uint32_t handle, uint64_t point, uint64_t timeout_ns)
{
	int ret;

	if (point)
		ret = drmSyncobjTimelineWait(fd, &handle, &point, 1,
					     t_deadline(timeout_ns),
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					     NULL);
	else
		ret = drmSyncobjWait(fd, &handle, 1, t_deadline(timeout_ns),
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				     NULL);
	return ret ? -errno : 0;
}

int t_signal(int fd, uint32_t handle, uint64_t point)
{
	int ret;

	if (point)
		ret = drmSyncobjTimelineSignal(fd, &handle, &point, 1);
	else
		ret = drmSyncobjSignal(fd, &handle, 1);
	return ret ? -errno : 0;
}

int t_sync_file_signalled(int sync_fd, int timeout_ms)
{
	struct pollfd p = { .fd = sync_fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		return -errno;
	return n == 1 && (p.revents & POLLIN);
}

int t_sync_file_info(int sync_fd, struct sync_file_info *info,
		     struct sync_fence_info *fi, uint32_t n)
{
	memset(info, 0, sizeof(*info));
	if (n)
		memset(fi, 0, n * sizeof(*fi));
	info->num_fences = n;
	info->sync_fence_info = (uint64_t)(uintptr_t)fi;
	return ioctl(sync_fd, SYNC_IOC_FILE_INFO, info) ? -errno : 0;
}

static int fence_info_status(int sync_fd)
{
	struct sync_file_info info;
	struct sync_fence_info *fi;
	int status, ret, i;

	ret = t_sync_file_info(sync_fd, &info, NULL, 0);
	if (ret)
		return -1000 + ret;
	status = info.status;
	if (status <= 0 || !info.num_fences)
		return status;
	/* A timeline point: look at the fences it contains. */
	fi = calloc(info.num_fences, sizeof(*fi));
	if (!fi)
		return -1000 - ENOMEM;
	ret = t_sync_file_info(sync_fd, &info, fi, info.num_fences);
	if (ret) {
		free(fi);
		return -1000 + ret;
	}
	for (i = 0; i < (int)info.num_fences; i++)
		if (fi[i].status < status)
			status = fi[i].status;
	free(fi);
	return status;
}

int t_fence_status(int fd, uint32_t handle, uint64_t point)
{
	uint32_t tmp = handle;
	int sync_fd = -1, status;

	if (point) {
		tmp = t_syncobj(fd);
		if (!tmp)
			return -1000 - errno;
		if (drmSyncobjTransfer(fd, tmp, 0, handle, point, 0)) {
			status = -1000 - errno;
			drmSyncobjDestroy(fd, tmp);
			return status;
		}
	}
	if (drmSyncobjExportSyncFile(fd, tmp, &sync_fd))
		status = -1000 - errno;
	else
		status = fence_info_status(sync_fd);
	if (sync_fd >= 0)
		close(sync_fd);
	if (point)
		drmSyncobjDestroy(fd, tmp);
	return status;
}

bool t_can_reload(void)
{
	return module_can_reload();
}

int t_unload_once(void)
{
	if (syscall(SYS_delete_module, "d3dq", O_NONBLOCK))
		return -errno;
	return 0;
}

int t_unload(void)
{
	int i, ret = 0;

	/* Queue teardown and fence frees finish asynchronously. */
	for (i = 0; i < 200; i++) {
		ret = t_unload_once();
		if (ret != -EBUSY && ret != -EAGAIN)
			break;
		usleep(50000);
	}
	return ret;
}

int t_load(const char *args)
{
	return module_load(args);
}

#define T_DIRECT_PARAM "/sys/module/d3dq/parameters/direct_submit"

int t_direct_submit(int on)
{
	char c = 0;
	int fd, ret;

	fd = open(T_DIRECT_PARAM, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = read(fd, &c, 1) == 1 ? 0 : -EIO;
	close(fd);
	if (!ret)
		ret = module_sysfs_write(T_DIRECT_PARAM, on ? "1" : "0");
	return ret ? ret : c == 'Y';
}

int t_unbind(int index)
{
	char name[32];

	snprintf(name, sizeof(name), "d3dq.%d", index);
	return module_sysfs_write("/sys/bus/platform/drivers/d3dq/unbind", name);
}

int t_bind(int index)
{
	char name[32];

	snprintf(name, sizeof(name), "d3dq.%d", index);
	return module_sysfs_write("/sys/bus/platform/drivers/d3dq/bind", name);
}

bool t_is_bound(int index)
{
	char path[96];

	snprintf(path, sizeof(path),
		 "/sys/bus/platform/drivers/d3dq/d3dq.%d", index);
	return !access(path, F_OK);
}

int t_reload(const char *args)
{
	return module_reload(args);
}

/* --- d3dq fences ------------------------------------------------------- */

int t_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

int t_fence_create(int fd, uint64_t value, uint32_t flags, struct t_fence *f)
{
	struct drm_d3dq_fence_create c = { .value = value, .flags = flags };
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_CREATE, &c);

	if (ret)
		return ret;
	*f = (struct t_fence){ .handle = c.handle, .offset = c.mmap_offset,
			       .voff = c.value_offset };
	return 0;
}

int t_fence_import(int fd, int xfd, struct t_fence *f)
{
	struct drm_d3dq_fence_import i = { .fd = xfd };
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_IMPORT, &i);

	if (ret)
		return ret;
	*f = (struct t_fence){ .handle = i.handle, .offset = i.mmap_offset,
			       .voff = i.value_offset };
	return 0;
}

int t_fence_new(int fd, uint64_t value, uint32_t flags, struct t_fence *f)
{
	int ret = t_fence_create(fd, value, flags, f);

	return ret ? ret : t_fence_map(fd, f);
}

int t_fence_export(int fd, uint32_t handle)
{
	struct drm_d3dq_fence_export e = { .handle = handle };
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EXPORT, &e);

	return ret ? ret : e.fd;
}

int t_fence_destroy(int fd, uint32_t handle)
{
	struct drm_d3dq_fence_destroy d = { .handle = handle };

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_DESTROY, &d);
}

int t_fence_signal(int fd, uint32_t handle, uint64_t value)
{
	struct drm_d3dq_fence_signal s = { .handle = handle, .value = value };

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL, &s);
}

int t_fence_wait1(int fd, uint32_t handle, uint64_t value, int64_t deadline)
{
	struct drm_d3dq_fence_value fv = { .handle = handle, .value = value };
	struct drm_d3dq_fence_wait w = {
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.deadline_ns = deadline,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &w);
}

int t_fence_event1(int fd, uint32_t handle, uint64_t value, int efd)
{
	struct drm_d3dq_fence_value fv = { .handle = handle, .value = value };
	struct drm_d3dq_fence_event e = {
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.eventfd = efd,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
}

/* The test's value mappings (each test runs in a process of its own). */
static const uint64_t *t_maps[256];

const uint64_t *t_value_map(int fd, const struct t_fence *f)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, f->offset);
	const uint64_t *v;
	size_t i;

	if (p == MAP_FAILED)
		return NULL;
	v = (const uint64_t *)((const char *)p + f->voff);
	for (i = 0; i < sizeof(t_maps) / sizeof(t_maps[0]); i++) {
		if (!t_maps[i]) {
			t_maps[i] = v;
			break;
		}
	}
	return v;
}

void t_value_unmap(const uint64_t *v)
{
	size_t i;

	if (!v)
		return;
	munmap((void *)((uintptr_t)v & ~(uintptr_t)4095), 4096);
	for (i = 0; i < sizeof(t_maps) / sizeof(t_maps[0]); i++)
		if (t_maps[i] == v)
			t_maps[i] = NULL;
}

void t_value_unmap_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(t_maps) / sizeof(t_maps[0]); i++)
		t_value_unmap(t_maps[i]);
}

int t_fence_map(int fd, struct t_fence *f)
{
	f->v = t_value_map(fd, f);
	return f->v ? 0 : -errno;
}

void t_fence_unmap(struct t_fence *f)
{
	t_value_unmap(f->v);
	f->v = NULL;
}

uint64_t t_efd_take(int efd)
{
	uint64_t n;

	if (read(efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

bool t_jobs_gone(int files)
{
	struct t_objects o;
	int i;

	for (i = 0; i < 1000; i++) {
		if (t_objects(&o))
			return false;
		if (o.files == files && !o.jobs)
			return true;
		usleep(10000);
	}
	return false;
}

long long t_held(int fd)
{
	return t_fdinfo(fd, "d3dq-jobs-held", NULL, 0);
}

bool t_no_job_in_flight(int fd)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (t_fdinfo(fd, "d3dq-jobs-in-flight", NULL, 0) == 0)
			return true;
		usleep(1000);
	}
	return false;
}

int64_t t_submitted(int fd, uint32_t so)
{
	uint64_t point = 0;

	if (drmSyncobjQuery2(fd, &so, &point, 1,
			     DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED))
		return -errno;
	return (int64_t)point;
}

int t_send_fd(int sock, int fd)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

int t_recv_fd(int sock)
{
	char c, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

bool t_fence_counts_become(int fences, int events)
{
	struct t_objects o;
	int i;

	for (i = 0; i < 500; i++) {
		if (t_objects(&o))
			return false;
		if (o.fences == fences && o.fence_events == events)
			return true;
		usleep(10000);
	}
	return false;
}
