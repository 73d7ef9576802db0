/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq per-client usage: what fdinfo shows (drm-usage-stats) and what the
 * tracepoints name a client by.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_FDINFO_H_
#define _D3DQ_FDINFO_H_

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include <drm/d3dq_drm.h>

#include "d3dq_engine.h"

struct drm_file;

#define D3DQ_NUM_QUEUE_TYPES	(DRM_D3DQ_QUEUE_TYPE_COPY + 1)

/**
 * struct d3dq_usage - Usage counters of one open file.
 *
 * Held by the file and by each of its queues, whose jobs may still end
 * after the file is closed.
 */
struct d3dq_usage {
	struct kref ref;
	/* drm-client-id: the DRM core's where it has one, else our own. */
	u64 client_id;
	/* Engine time of the finished jobs, per queue type. */
	atomic64_t busy_ns[D3DQ_NUM_QUEUE_TYPES];
	/* Jobs stopped by the job timeout. */
	atomic_t timeouts;
	/* The busy times last shown, so that they never go down. */
	struct mutex shown_lock;
	u64 shown_ns[D3DQ_NUM_QUEUE_TYPES];
	/* The client's share of the engine: its ready queues. */
	struct d3dq_engine_client engine;
};

struct d3dq_usage *d3dq_usage_create(struct drm_file *file);
void d3dq_usage_put(struct d3dq_usage *usage);

static inline struct d3dq_usage *d3dq_usage_get(struct d3dq_usage *usage)
{
	kref_get(&usage->ref);
	return usage;
}

/* d3dq_show_fdinfo() and the fdinfo shims are in d3dq_compat.h. */

#endif /* _D3DQ_FDINFO_H_ */
