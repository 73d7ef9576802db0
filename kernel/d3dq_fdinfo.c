// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fdinfo: per open file usage in the drm-usage-stats format
 * (Documentation/gpu/drm-usage-stats.rst in the kernel; the keys are
 * listed in Documentation/driver.rst):
 *
 *   drm-driver, drm-client-id          (the DRM core, or us before 6.5)
 *   drm-engine-direct|compute|copy     engine time of the client's jobs, ns
 *   drm-total-memory, drm-resident-memory, ...   its buffers
 *   d3dq-queues, d3dq-jobs-in-flight, d3dq-jobs-held, d3dq-timeouts
 *
 * The queues of a device share one engine. The busy time of a queue type
 * is the sum over the client's queues of that type of each job's own
 * engine time (d3dq_job_ran_ns()): its steps and its DELAYs, not its
 * waits for a turn. The steps of a device's clients never overlap, so
 * only DELAYs, which do, make the sum grow faster than the wall clock.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "d3dq_device.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

static const char *const d3dq_engine_names[D3DQ_NUM_QUEUE_TYPES] = {
	[DRM_D3DQ_QUEUE_TYPE_DIRECT] = "direct",
	[DRM_D3DQ_QUEUE_TYPE_COMPUTE] = "compute",
	[DRM_D3DQ_QUEUE_TYPE_COPY] = "copy",
};

/* Client ids of our own, where the DRM core has none (before 6.5). */
static atomic64_t d3dq_next_client_id = ATOMIC64_INIT(0);

struct d3dq_usage *d3dq_usage_create(struct drm_file *file)
{
	struct d3dq_usage *usage;

	usage = kzalloc(sizeof(*usage), D3DQ_GFP);
	if (!usage)
		return NULL;
	kref_init(&usage->ref);
	mutex_init(&usage->shown_lock);
	d3dq_engine_client_init(&usage->engine);
	usage->client_id = d3dq_drm_client_id(file, &d3dq_next_client_id);
	return usage;
}

static void d3dq_usage_release(struct kref *ref)
{
	struct d3dq_usage *usage = container_of(ref, struct d3dq_usage, ref);

	mutex_destroy(&usage->shown_lock);
	kfree(usage);
}

void d3dq_usage_put(struct d3dq_usage *usage)
{
	kref_put(&usage->ref, d3dq_usage_release);
}

/*
 * The busy time of each queue type: finished jobs plus the engine time of
 * the running ones so far. A job that ends between the two reads is missed
 * once; the shown value is kept from going down.
 */
static void d3dq_fdinfo_engines(struct drm_printer *p, struct d3dq_file *dfile,
				u32 *nqueues, u64 *in_flight)
{
	struct d3dq_usage *usage = dfile->usage;
	u64 busy[D3DQ_NUM_QUEUE_TYPES];
	struct d3dq_queue *queue;
	struct d3dq_job *job;
	unsigned long id;
	ktime_t now;
	int i;

	for (i = 0; i < D3DQ_NUM_QUEUE_TYPES; i++)
		busy[i] = atomic64_read(&usage->busy_ns[i]);

	*in_flight = 0;
	mutex_lock(&dfile->lock);
	*nqueues = dfile->nqueues;
	now = ktime_get();
	xa_for_each(&dfile->queues, id, queue) {
		*in_flight += atomic_read(&queue->pending);
		spin_lock(&queue->lock);
		job = queue->engine.job;
		if (job)
			busy[queue->type] += d3dq_job_ran_ns(job, now);
		spin_unlock(&queue->lock);
	}
	mutex_unlock(&dfile->lock);

	mutex_lock(&usage->shown_lock);
	for (i = 0; i < D3DQ_NUM_QUEUE_TYPES; i++) {
		busy[i] = max(busy[i], usage->shown_ns[i]);
		usage->shown_ns[i] = busy[i];
		drm_printf(p, "drm-engine-%s:\t%llu ns\n", d3dq_engine_names[i],
			   busy[i]);
	}
	mutex_unlock(&usage->shown_lock);
}

/* The file's fence handles (uapi 1.10): one per d3dq_fence of libd3dq. */
static unsigned long d3dq_fence_handles(struct d3dq_file *dfile)
{
	unsigned long idx, n = 0;
	void *entry;

	xa_for_each(&dfile->fences, idx, entry)
		n++;
	return n;
}

/**
 * d3dq_show_fdinfo - The driver's part of a file's fdinfo.
 * @p: printer into the fdinfo file
 * @file: the DRM file
 *
 * drm_driver.show_fdinfo where the DRM core prints drm-driver and
 * drm-client-id itself; called by d3dq_show_fdinfo_legacy() otherwise.
 */
void d3dq_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct d3dq_file *dfile = file->driver_priv;
	u64 in_flight;
	u32 nqueues;

	d3dq_fdinfo_engines(p, dfile, &nqueues, &in_flight);
	d3dq_show_memory_stats(p, file);
	drm_printf(p, "d3dq-queues:\t%u\n", nqueues);
	drm_printf(p, "d3dq-jobs-in-flight:\t%llu\n", in_flight);
	drm_printf(p, "d3dq-jobs-held:\t%d\n", atomic_read(&dfile->jobs_held));
	drm_printf(p, "d3dq-timeouts:\t%u\n",
		   atomic_read(&dfile->usage->timeouts));
	drm_printf(p, "d3dq-fence-handles:\t%lu\n", d3dq_fence_handles(dfile));
}

/**
 * d3dq_show_fdinfo_legacy - file_operations.show_fdinfo before 6.5.
 * @m: the fdinfo file
 * @f: the open DRM file
 *
 * Prints what drm_show_fdinfo() prints on newer kernels, then the rest.
 */
void d3dq_show_fdinfo_legacy(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct d3dq_file *dfile = file->driver_priv;
	struct drm_printer p = drm_seq_file_printer(m);

	drm_printf(&p, "drm-driver:\t%s\n", D3DQ_DRIVER_NAME);
	drm_printf(&p, "drm-client-id:\t%llu\n", dfile->usage->client_id);
	d3dq_show_fdinfo(&p, file);
}

/* A size the way drm_show_memory_stats() prints it: B, KiB or MiB. */
static void d3dq_print_size(struct drm_printer *p, const char *stat, u64 sz)
{
	static const char *const units[] = { "", " KiB", " MiB" };
	unsigned int u;

	for (u = 0; u < ARRAY_SIZE(units) - 1; u++) {
		if (!sz || !IS_ALIGNED(sz, SZ_1K))
			break;
		sz >>= 10;
	}
	drm_printf(p, "drm-%s-memory:\t%llu%s\n", stat, sz, units[u]);
}

/**
 * d3dq_show_memory_stats_legacy - drm_show_memory_stats() before 6.5.
 * @p: printer into the fdinfo file
 * @file: the DRM file
 *
 * Every d3dq buffer keeps its pages from creation to free, so resident
 * is total.
 */
void d3dq_show_memory_stats_legacy(struct drm_printer *p,
				   struct drm_file *file)
{
	u64 total = 0, shared = 0, active = 0;
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		total += obj->size;
		if (obj->handle_count > 1 || obj->dma_buf)
			shared += obj->size;
		if (!dma_resv_test_signaled(obj->resv, DMA_RESV_USAGE_READ))
			active += obj->size;
	}
	spin_unlock(&file->table_lock);

	d3dq_print_size(p, "total", total);
	d3dq_print_size(p, "shared", shared);
	d3dq_print_size(p, "active", active);
	d3dq_print_size(p, "resident", total);
}
