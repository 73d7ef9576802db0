// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq debugfs: "queues" lists every open file's queues, the jobs held
 * by dependencies and the held jobs (uapi 1.5), "objects" the live object
 * counts, so tests can check
 * for leaks. (DRM itself provides "clients".)
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_engine.h"
#include "d3dq_fdinfo.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"

static const char *const d3dq_type_names[] = {
	[DRM_D3DQ_QUEUE_TYPE_DIRECT] = "direct",
	[DRM_D3DQ_QUEUE_TYPE_COMPUTE] = "compute",
	[DRM_D3DQ_QUEUE_TYPE_COPY] = "copy",
};

static const char *const d3dq_prio_names[] = {
	[DRM_D3DQ_QUEUE_PRIORITY_NORMAL] = "normal",
	[DRM_D3DQ_QUEUE_PRIORITY_HIGH] = "high",
	[DRM_D3DQ_QUEUE_PRIORITY_REALTIME] = "realtime",
};

/*
 * The waits of @job that have not signalled yet; a carried wait (@carried)
 * has no job number.
 */
static void d3dq_debugfs_job_waits(struct seq_file *m, struct d3dq_job *job,
				   bool carried)
{
	char who[32];
	u32 i;

	if (carried)
		strscpy(who, "carried", sizeof(who));
	else
		snprintf(who, sizeof(who), "job %llu", d3dq_job_seqno(job));

	for (i = 0; i < job->nwaits; i++) {
		struct d3dq_wait *w = &job->waits[i];
		struct dma_fence *dep = w->release ? &w->release->base :
				       w->fence;

		/* Only the flag: no fence callbacks under our lock. */
		if (!dep || test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &dep->flags))
			continue;
		if (w->flags & DRM_D3DQ_SYNC_FENCE)
			seq_printf(m, "    %s waits fence=%u value=%llu\n",
				   who, w->handle, w->point);
		else
			seq_printf(m, "    %s waits syncobj=%u point=%llu%s\n",
				   who, w->handle, w->point,
				   w->release ? " releasable" : "");
	}
}

static void d3dq_debugfs_queue(struct seq_file *m, struct d3dq_queue *queue)
{
	struct d3dq_job *job;
	unsigned int running = 0, carried = 0, held = 0;

	spin_lock(&queue->lock);
	list_for_each_entry(job, &queue->jobs, link) {
		if (job->state == D3DQ_JOB_RUNNING)
			running++;
	}
	list_for_each_entry(job, &queue->carried, link)
		carried++;
	list_for_each_entry(job, &queue->held, link)
		held++;
	seq_printf(m, "  queue %u type=%s prio=%s state=%s reason=%d pending=%d running=%u carried=%u held=%u\n",
		   queue->id, d3dq_type_names[queue->type],
		   d3dq_prio_names[queue->priority],
		   queue->state == DRM_D3DQ_QUEUE_STATE_OK ? "ok" : "lost",
		   queue->reason, atomic_read(&queue->pending), running,
		   carried, held);

	list_for_each_entry(job, &queue->jobs, link) {
		/* Tail submits (uapi 1.8): signals the job sets with its own. */
		if (job->ntails)
			seq_printf(m, "    job %llu tails=%u\n",
				   d3dq_job_seqno(job), job->ntails);
		if (job->state == D3DQ_JOB_QUEUED)
			d3dq_debugfs_job_waits(m, job, false);
	}
	/* Carried waits (uapi 1.8): no job yet, the next one takes them. */
	list_for_each_entry(job, &queue->carried, link)
		d3dq_debugfs_job_waits(m, job, true);
	/* Held jobs (uapi 1.5): not armed, in order. */
	list_for_each_entry(job, &queue->held, link) {
		seq_printf(m, "    job %llu held\n", d3dq_job_seqno(job));
		d3dq_debugfs_job_waits(m, job, false);
	}
	spin_unlock(&queue->lock);
}

static int d3dq_debugfs_queues(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct d3dq_device *ddev = to_d3dq_dev(node->minor->dev);
	struct d3dq_file *dfile;
	struct d3dq_queue *queue;
	unsigned long id;
	u64 job_bytes;
	u32 jobs;

	mutex_lock(&ddev->files_lock);
	list_for_each_entry(dfile, &ddev->files, link) {
		mutex_lock(&dfile->lock);
		spin_lock(&dfile->job_bytes_lock);
		jobs = dfile->jobs;
		job_bytes = dfile->job_bytes;
		spin_unlock(&dfile->job_bytes_lock);
		seq_printf(m, "client id=%llu pid=%d queues=%u alive=%d finishing=%d jobs=%u job_bytes=%llu bos=%d bo_bytes=%lld%s\n",
			   dfile->usage->client_id,
			   d3dq_file_pid(dfile->drm_file), dfile->nqueues,
			   atomic_read(&dfile->queues_alive),
			   atomic_read(&dfile->queues_finishing), jobs,
			   job_bytes, atomic_read(&dfile->bos),
			   (long long)atomic64_read(&dfile->bo_bytes),
			   dfile->removed ? " removed" : "");
		xa_for_each(&dfile->queues, id, queue)
			d3dq_debugfs_queue(m, queue);
		mutex_unlock(&dfile->lock);
	}
	mutex_unlock(&ddev->files_lock);
	return 0;
}

static int d3dq_debugfs_objects(struct seq_file *m, void *unused)
{
	struct drm_info_node *node = m->private;
	struct d3dq_device *ddev = to_d3dq_dev(node->minor->dev);

	seq_printf(m, "files %d\n", atomic_read(&ddev->count.files));
	seq_printf(m, "queues %d\n", atomic_read(&ddev->count.queues));
	seq_printf(m, "jobs %d\n", atomic_read(&ddev->count.jobs));
	seq_printf(m, "bos %d\n", atomic_read(&ddev->count.bos));
	seq_printf(m, "fences %d\n", atomic_read(&ddev->count.fences));
	seq_printf(m, "fence_events %d\n",
		   atomic_read(&ddev->count.fence_events));
	seq_printf(m, "fence_imports %d\n",
		   atomic_read(&ddev->count.fence_imports));
	/* Fences keep these alive: counted for the whole module. */
	seq_printf(m, "schedulers %d\n", atomic_read(&d3dq_live_scheds));
	seq_printf(m, "hw_fences %d\n", atomic_read(&d3dq_live_hw_fences));
	return 0;
}

static const struct drm_info_list d3dq_debugfs_list[] = {
	{ "queues", d3dq_debugfs_queues, 0 },
	{ "objects", d3dq_debugfs_objects, 0 },
};

void d3dq_debugfs_init(struct drm_minor *minor)
{
	/* Older kernels call this for every minor: one set of files. */
	if (minor->type != DRM_MINOR_PRIMARY)
		return;

	drm_debugfs_create_files(d3dq_debugfs_list,
				 ARRAY_SIZE(d3dq_debugfs_list),
				 minor->debugfs_root, minor);
}
