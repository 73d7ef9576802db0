/* SPDX-License-Identifier: MIT */
/*
 * DRM_IOCTL_SYNCOBJ_EVENTFD for drm.h headers older than Linux 6.6 (Debian
 * 12's libdrm 2.4.114 ships one). Not installed: the library and the tools
 * use it; whether the running kernel has the ioctl is probed at run time.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_COMPAT_DRM_SYNCOBJ_EVENTFD_H
#define D3DQ_COMPAT_DRM_SYNCOBJ_EVENTFD_H

#include <drm.h>

#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

#endif
