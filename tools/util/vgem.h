/* SPDX-License-Identifier: MIT */
/*
 * vgem as "the other GPU" (issue 41): the uapi d3dq's tests, figure 13
 * and tools/d3dq-interop use, and the few calls they make. vgem is a
 * module of Debian's kernels; the VM's initramfs carries it unloaded as
 * /modules/extra/vgem.ko. Its fences attach to a buffer's reservation
 * (VGEM_FENCE_ATTACH) and signal when asked (VGEM_FENCE_SIGNAL; vgem
 * signals them itself after 10 s); DMA_BUF_IOCTL_EXPORT_SYNC_FILE turns
 * a buffer's fences into a sync_file. Header only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TOOLS_UTIL_VGEM_H
#define D3DQ_TOOLS_UTIL_VGEM_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>

#define VGEM_KO "/modules/extra/vgem.ko"

/* vgem's uapi (include/uapi/drm/vgem_drm.h), which libdrm lacks. */
struct d3dq_vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;		/* D3DQ_VGEM_FENCE_WRITE: a write fence */
	uint32_t out_fence;
	uint32_t pad;
};

struct d3dq_vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define D3DQ_VGEM_FENCE_WRITE	1
#define D3DQ_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 1, struct d3dq_vgem_fence_attach)
#define D3DQ_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 2, struct d3dq_vgem_fence_signal)

/*
 * vgem's primary node (dumb buffers need it), loading VGEM_KO if no
 * vgem device is there (then *@loaded is set: the caller unloads it), or
 * -1.
 */
static inline int vgem_open(bool *loaded)
{
	drmVersionPtr v;
	char path[64];
	int i, fd, tries;

	for (tries = 0; tries < 2; tries++) {
		for (i = 0; i < 16; i++) {
			snprintf(path, sizeof(path), "/dev/dri/card%d", i);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			v = drmGetVersion(fd);
			if (v && !strcmp(v->name, "vgem")) {
				drmFreeVersion(v);
				return fd;
			}
			drmFreeVersion(v);
			close(fd);
		}
		if (tries || access(VGEM_KO, R_OK) ||
		    system("insmod " VGEM_KO " 2>/dev/null"))
			return -1;
		*loaded = true;
	}
	return -1;
}

/*
 * Unload vgem (loaded by vgem_open()): 0, or -1 if it stays loaded. A
 * vgem buffer imported into d3dq holds the module until d3dq frees it,
 * which may happen on a d3dq work item after the last close (jobs that
 * named it are freed on d3dq-cleanup): retried for 5 s.
 */
static inline int vgem_unload(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!system("rmmod vgem 2>/dev/null"))
			return 0;
		usleep(50000);
	}
	return -1;
}

/* A small dumb buffer of vgem: its handle, or -errno. */
static inline int vgem_bo(int vfd, uint32_t *bo)
{
	struct drm_mode_create_dumb c = { .width = 64, .height = 1,
					  .bpp = 32 };

	if (drmIoctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	*bo = c.handle;
	return 0;
}

/* Attach an unsignalled write fence to @bo: 0 or -errno (-EBUSY). */
static inline int vgem_attach_write(int vfd, uint32_t bo, uint32_t *fence)
{
	struct d3dq_vgem_fence_attach a = { .handle = bo,
					    .flags = D3DQ_VGEM_FENCE_WRITE };

	if (drmIoctl(vfd, D3DQ_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

static inline int vgem_signal(int vfd, uint32_t fence)
{
	struct d3dq_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(vfd, D3DQ_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

/* What a reader of dma-buf @dmabuf waits for, as a sync_file, or -errno. */
static inline int dmabuf_read_sync_file(int dmabuf)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_READ };

	return ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) ? -errno :
	       e.fd;
}

#endif /* D3DQ_TOOLS_UTIL_VGEM_H */
