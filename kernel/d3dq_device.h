/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq devices and open files: a virtual DRM render node with in-order
 * software queues; module parameters and live object counts.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_DEVICE_H_
#define _D3DQ_DEVICE_H_

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>

#include "d3dq_compat.h"
#include "d3dq_engine.h"

struct d3dq_usage;
struct drm_file;
struct drm_minor;
struct platform_device;

#define D3DQ_DRIVER_NAME	"d3dq"
#define D3DQ_DRIVER_DESC	"Virtual in-order queues with syncobj timelines"
#define D3DQ_DRIVER_MAJOR	1
#define D3DQ_DRIVER_MINOR	0

/* Module parameters, read-only once the module is loaded. */
extern unsigned int d3dq_max_queues;
extern unsigned int d3dq_max_syncs;
extern unsigned int d3dq_max_cmd_bytes;
extern unsigned int d3dq_max_pending_jobs;
extern unsigned int d3dq_job_timeout_ms;
extern unsigned long long d3dq_max_delay_ns;
extern unsigned long long d3dq_max_bo_size;

/**
 * struct d3dq_counters - Live objects of one device, shown in debugfs.
 */
struct d3dq_counters {
	atomic_t files;
	atomic_t queues;
	atomic_t jobs;
	atomic_t bos;
	atomic_t scheds;	/* in use or pooled */
};

/**
 * struct d3dq_device - One virtual device.
 */
struct d3dq_device {
	struct drm_device drm;
	struct platform_device *pdev;

	/* Scheduler work (6.12: submit_wq) and the engine, shared by queues. */
	struct workqueue_struct *sched_wq;
	struct workqueue_struct *engine_wq;
	/* Final queue teardown (scheduler and entity fini). */
	struct workqueue_struct *teardown_wq;
	/* The engine the queues share (d3dq_engine.c). */
	struct d3dq_dispatch dispatch;

	/* Open files, for debugfs. */
	struct mutex files_lock;
	struct list_head files;

	/* Idle schedulers of destroyed queues (d3dq_queue.c). */
	struct mutex sched_pool_lock;
	struct list_head sched_pool;
	/* Schedulers ever created, for their names; under sched_pool_lock. */
	unsigned int sched_serial;

	struct d3dq_counters count;
	/* Woken when the last queue of the device is freed. */
	wait_queue_head_t idle_wq;
};

static inline struct d3dq_device *to_d3dq_dev(struct drm_device *drm)
{
	return container_of(drm, struct d3dq_device, drm);
}

/**
 * struct d3dq_file - Per open file state.
 */
struct d3dq_file {
	struct d3dq_device *ddev;
	struct drm_file *drm_file;
	struct list_head link;		/* in d3dq_device.files */

	/* Protects @queues (insertion and removal), @nqueues and @removed. */
	struct mutex lock;
	struct xarray queues;
	u32 nqueues;
	bool removed;

	/* fdinfo counters and client id; queues hold references too. */
	struct d3dq_usage *usage;

	/* Last job number handed out (&drm_d3dq_submit.seqno). */
	atomic64_t job_seqno;
};

/* d3dq_drv.c */
int d3dq_ioctl_get_param(struct drm_device *drm, void *data,
			 struct drm_file *file);
int d3dq_ioctl_remove(struct drm_device *drm, void *data,
		      struct drm_file *file);

/* d3dq_debugfs.c */
void d3dq_debugfs_init(struct drm_minor *minor);

#endif /* _D3DQ_DEVICE_H_ */
