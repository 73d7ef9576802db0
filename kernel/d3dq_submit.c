// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq submission: copy and check everything a job needs, turn syncobj
 * waits into scheduler dependencies, then arm the job, attach its signal
 * points and push it. Nothing is published before every check passed.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/bitmap.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_gem.h"
#include "d3dq_fdinfo.h"
#include "d3dq_fence.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_trace.h"

/*
 * Largest element stride of a sync array: a fixed number, not PAGE_SIZE,
 * so that the uapi is the same on every architecture.
 */
#define D3DQ_MAX_SYNC_STRIDE	4096

/*
 * A signal point, resolved before the job is armed; a fence signal has
 * no syncobj (it lives in the job: d3dq_job.fsignals).
 */
struct d3dq_signal {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;	/* timeline points only */
	u64 point;
	u32 handle;			/* for the trace */
};

/*
 * Copy a user array of struct drm_d3dq_sync. Elements may be larger than
 * the kernel's structure (newer userspace) if the extra bytes are zero.
 */
static int d3dq_copy_syncs(const struct drm_d3dq_obj_array *arr,
			   struct drm_d3dq_sync **out)
{
	struct drm_d3dq_sync *syncs;
	u64 offset;
	u32 i;
	int ret;

	*out = NULL;
	if (!arr->count)
		return 0;
	if (arr->count > d3dq_max_syncs)
		return -EINVAL;
	if (arr->stride < sizeof(*syncs) || arr->stride > D3DQ_MAX_SYNC_STRIDE)
		return -EINVAL;

	syncs = kvmalloc_array(arr->count, sizeof(*syncs), D3DQ_GFP);
	if (!syncs)
		return -ENOMEM;

	for (i = 0; i < arr->count; i++) {
		/* count * stride is below 2^29: no overflow. */
		offset = (u64)i * arr->stride;
		ret = copy_struct_from_user(&syncs[i], sizeof(syncs[i]),
					    u64_to_user_ptr(arr->array + offset),
					    arr->stride);
		if (ret) {
			kvfree(syncs);
			return ret == -E2BIG ? -EINVAL : ret;
		}
	}

	*out = syncs;
	return 0;
}

/* @flags: the flags this kind of element may carry. */
static int d3dq_check_sync(const struct drm_d3dq_sync *sync, u32 flags)
{
	if (sync->flags & ~flags)
		return -EINVAL;
	/* A fence value may be anything; the flag stands alone. */
	if (sync->flags & DRM_D3DQ_SYNC_FENCE)
		return sync->flags == DRM_D3DQ_SYNC_FENCE ? 0 : -EINVAL;
	if (!(sync->flags & DRM_D3DQ_SYNC_TIMELINE) && sync->point)
		return -EINVAL;
	return 0;
}

static int d3dq_lookup_bo(struct drm_file *file, u32 handle,
			  struct d3dq_bo **out)
{
	struct drm_gem_object *obj;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	if (!d3dq_is_bo(obj) || !to_d3dq_bo(obj)->vaddr) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	*out = to_d3dq_bo(obj);
	return 0;
}

/*
 * Resolve the buffer of a command into @out and check that the @size
 * bytes at @offset lie inside it, @offset aligned to @align.
 */
static int d3dq_parse_bo(struct drm_file *file, u32 handle, u64 offset,
			 u64 size, u64 align, struct d3dq_bo **out)
{
	u64 bo_size;
	int ret;

	ret = d3dq_lookup_bo(file, handle, out);
	if (ret)
		return ret;
	bo_size = (*out)->base.base.size;
	if (!IS_ALIGNED(offset, align) || offset > bo_size ||
	    size > bo_size - offset)
		return -EINVAL;
	return 0;
}

/* Size of the command structure for @op, 0 for an unknown op. */
static u32 d3dq_cmd_size(u32 op)
{
	switch (op) {
	case DRM_D3DQ_CMD_WRITE64:
		return sizeof(struct drm_d3dq_cmd_write64);
	case DRM_D3DQ_CMD_COPY:
		return sizeof(struct drm_d3dq_cmd_copy);
	case DRM_D3DQ_CMD_FILL:
		return sizeof(struct drm_d3dq_cmd_fill);
	case DRM_D3DQ_CMD_CMP_STORE64:
		return sizeof(struct drm_d3dq_cmd_cmp_store64);
	case DRM_D3DQ_CMD_TIMESTAMP:
		return sizeof(struct drm_d3dq_cmd_timestamp);
	case DRM_D3DQ_CMD_DELAY:
		return sizeof(struct drm_d3dq_cmd_delay);
	default:
		return 0;
	}
}

/* Check one command and resolve its buffers into @cmd. */
static int d3dq_parse_cmd(struct drm_file *file, const void *raw, u32 op,
			  struct d3dq_cmd *cmd)
{
	int ret;

	cmd->op = op;
	switch (op) {
	case DRM_D3DQ_CMD_WRITE64: {
		const struct drm_d3dq_cmd_write64 *c = raw;

		if (c->pad)
			return -EINVAL;
		cmd->dst_offset = c->offset;
		cmd->a = c->value;
		return d3dq_parse_bo(file, c->handle, c->offset, sizeof(u64),
				     sizeof(u64), &cmd->dst);
	}
	case DRM_D3DQ_CMD_COPY: {
		const struct drm_d3dq_cmd_copy *c = raw;

		cmd->dst_offset = c->dst_offset;
		cmd->src_offset = c->src_offset;
		cmd->size = c->size;
		ret = d3dq_parse_bo(file, c->dst_handle, c->dst_offset, c->size,
				    1, &cmd->dst);
		if (ret)
			return ret;
		return d3dq_parse_bo(file, c->src_handle, c->src_offset, c->size,
				     1, &cmd->src);
	}
	case DRM_D3DQ_CMD_FILL: {
		const struct drm_d3dq_cmd_fill *c = raw;

		if (c->value > 0xff)
			return -EINVAL;
		cmd->dst_offset = c->offset;
		cmd->size = c->size;
		cmd->a = c->value;
		return d3dq_parse_bo(file, c->handle, c->offset, c->size, 1,
				     &cmd->dst);
	}
	case DRM_D3DQ_CMD_CMP_STORE64: {
		const struct drm_d3dq_cmd_cmp_store64 *c = raw;

		if (c->pad)
			return -EINVAL;
		cmd->dst_offset = c->offset;
		cmd->a = c->expected;
		cmd->b = c->desired;
		return d3dq_parse_bo(file, c->handle, c->offset, sizeof(u64),
				     sizeof(u64), &cmd->dst);
	}
	case DRM_D3DQ_CMD_TIMESTAMP: {
		const struct drm_d3dq_cmd_timestamp *c = raw;

		if (c->pad)
			return -EINVAL;
		cmd->dst_offset = c->offset;
		return d3dq_parse_bo(file, c->handle, c->offset, sizeof(u64),
				     sizeof(u64), &cmd->dst);
	}
	case DRM_D3DQ_CMD_DELAY: {
		const struct drm_d3dq_cmd_delay *c = raw;

		if (c->ns > d3dq_max_delay_ns)
			return -EINVAL;
		cmd->a = c->ns;
		return 0;
	}
	}
	return -EINVAL;
}

/* Copy and check the whole command stream into job->cmds. */
static int d3dq_parse_cmds(struct drm_file *file, struct d3dq_job *job,
			   u64 uptr, u32 bytes)
{
	const struct drm_d3dq_cmd_header *hdr;
	struct d3dq_cmd *cmd;
	u32 pos = 0, size;
	void *buf;
	int ret = 0;

	if (!bytes)
		return 0;

	buf = vmemdup_user(u64_to_user_ptr(uptr), bytes);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	/* The smallest command is 16 bytes. */
	job->cmds = kvcalloc(bytes / 16, sizeof(*job->cmds),
			     D3DQ_GFP);
	if (!job->cmds) {
		ret = -ENOMEM;
		goto out;
	}

	while (pos < bytes) {
		/* bytes is a multiple of 8, so the header fits. */
		hdr = buf + pos;
		size = d3dq_cmd_size(hdr->op);
		if (!size || hdr->size != size || size > bytes - pos) {
			ret = -EINVAL;
			goto out;
		}

		cmd = &job->cmds[job->ncmds];
		/* Counted first: job free drops what was looked up. */
		job->ncmds++;
		ret = d3dq_parse_cmd(file, hdr, hdr->op, cmd);
		if (ret)
			goto out;
		pos += size;
	}

out:
	kvfree(buf);
	return ret;
}

/*
 * The fence a wait names. Without WAIT_FOR_SUBMIT,
 * drm_syncobj_find_fence() never sleeps and fails with -EINVAL both when
 * the point has no fence yet (-ENODATA here: it may get one) and when a
 * timeline point is asked of a syncobj whose fence is not a timeline
 * (-EINVAL here: a binary fence has no points).
 */
static int d3dq_find_fence(struct drm_file *file,
			   const struct drm_d3dq_sync *sync,
			   struct dma_fence **out)
{
	struct drm_syncobj *syncobj;
	struct dma_fence *fence;
	int ret;

	ret = drm_syncobj_find_fence(file, sync->handle, sync->point, 0, out);
	if (ret != -EINVAL)
		return ret;

	syncobj = drm_syncobj_find(file, sync->handle);
	if (!syncobj)
		return -ENOENT;
	fence = drm_syncobj_fence_get(syncobj);
	ret = fence && sync->point && !to_dma_fence_chain(fence) ?
	      -EINVAL : -ENODATA;
	dma_fence_put(fence);
	drm_syncobj_put(syncobj);
	return ret;
}

/*
 * Resolve a checked wait @w into its fences, and @dep, what the job
 * depends on for it: the waited fence, a release fence standing for it
 * (a releasable wait, a fence wait on a pending signal, or one that
 * holds the job: its release fence is bound to nothing yet), or nothing
 * (a fence wait whose value is reached). @hold: the job's queue if the
 * submit may hold it (%DRM_D3DQ_SUBMIT_HOLD), else NULL.
 */
static int d3dq_resolve_wait(struct drm_file *file, struct d3dq_queue *hold,
			     struct d3dq_wait *w, struct dma_fence **dep)
{
	struct drm_d3dq_sync sync = {
		.handle = w->handle, .flags = w->flags, .point = w->point,
	};
	struct dma_fence *fence;
	int ret;

	*dep = NULL;
	if (w->flags & DRM_D3DQ_SYNC_FENCE) {
		/* See "Fence waits and signals" in the uapi. */
		ret = d3dq_fence_qwait_create(file->driver_priv, w->handle,
					      w->point, hold, &w->cond,
					      &w->release, &w->fence);
		if (!ret && w->release)
			*dep = &w->release->base;
		return ret;
	}

	/*
	 * Without WAIT_FOR_SUBMIT this never sleeps: a point that has no
	 * fence yet fails (-EINVAL), and d3dq never makes a fence that
	 * waits for userspace. Only a success sets @fence (else it may
	 * point to a fence that was put).
	 */
	ret = d3dq_find_fence(file, &sync, &fence);
	if (ret)
		return ret;
	w->fence = fence;
	*dep = fence;
	if (w->flags & DRM_D3DQ_SYNC_RELEASABLE) {
		w->release = d3dq_release_fence_create(w->fence);
		if (!w->release)
			return -ENOMEM;
		*dep = &w->release->base;
	}
	return 0;
}

/*
 * Turn the waits of a submit into the job's dependencies. The scheduler
 * looks through a job's earlier dependencies for each one it is given
 * (drm_sched_job_add_dependency() keeps the latest fence of a context),
 * which is quadratic in the number of contexts; releasable waits have a
 * context each. Beyond %D3DQ_JOIN_MIN waits the job depends on one join
 * fence of them all instead (d3dq_join_fence_create()), so that a submit
 * costs time linear in its waits. The waits of a carrying submit (@carry,
 * see "Carried waits" in the uapi) make one fence, d3dq_job.carry_dep,
 * for the job that takes them to depend on.
 */
static int d3dq_add_waits(struct drm_file *file, struct d3dq_job *job,
			  struct d3dq_queue *hold,
			  const struct drm_d3dq_obj_array *arr, bool carry)
{
	struct dma_fence **deps = NULL;
	struct drm_d3dq_sync *syncs;
	struct dma_fence *fence;
	struct d3dq_wait *w;
	u32 i, ndeps = 0;
	int ret;

	ret = d3dq_copy_syncs(arr, &syncs);
	if (ret || !syncs)
		return ret;

	job->waits = kvcalloc(arr->count, sizeof(*job->waits),
			      D3DQ_GFP);
	if (!job->waits) {
		ret = -ENOMEM;
		goto out;
	}
	if (arr->count > D3DQ_JOIN_MIN || carry) {
		/* No references: the waits hold them. */
		deps = kvmalloc_array(arr->count, sizeof(*deps), D3DQ_GFP);
		if (!deps) {
			ret = -ENOMEM;
			goto out;
		}
	}

	for (i = 0; i < arr->count; i++) {
		struct dma_fence *dep;

		/* Up to max_syncs lookups and allocations. */
		cond_resched();

		/* Nothing would name a carried releasable wait. */
		ret = d3dq_check_sync(&syncs[i], DRM_D3DQ_SYNC_TIMELINE |
					       (carry ? 0 :
						DRM_D3DQ_SYNC_RELEASABLE) |
					       DRM_D3DQ_SYNC_FENCE);
		if (ret)
			goto out;

		w = &job->waits[i];
		w->handle = syncs[i].handle;
		w->flags = syncs[i].flags;
		w->point = syncs[i].point;
		/* Counted first: job free drops what was resolved. */
		job->nwaits = i + 1;
		ret = d3dq_resolve_wait(file, hold, w, &dep);
		if (ret)
			goto out;
		/* A fence wait whose value is reached: nothing to wait for. */
		if (!dep)
			continue;
		if (deps) {
			deps[ndeps++] = dep;
			continue;
		}
		ret = drm_sched_job_add_dependency(&job->base,
						   dma_fence_get(dep));
		if (ret)
			goto out;
	}

	if (carry && ndeps == 1) {
		job->carry_dep = dma_fence_get(deps[0]);
	} else if (deps && ndeps) {
		fence = d3dq_join_fence_create(deps, ndeps);
		if (!fence) {
			ret = -ENOMEM;
			goto out;
		}
		if (carry)
			job->carry_dep = fence;
		else
			ret = drm_sched_job_add_dependency(&job->base, fence);
	}

out:
	kvfree(deps);
	kvfree(syncs);
	return ret;
}

static void d3dq_put_signals(struct d3dq_signal *signals, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		dma_fence_chain_free(signals[i].chain);
		if (signals[i].syncobj)
			drm_syncobj_put(signals[i].syncobj);
	}
	kvfree(signals);
}

/*
 * Resolve the signals of a submit: syncobj points into @out, fence
 * signals into *@fsp, *@nfsp of them initialised (the job's, or a tail's,
 * which frees them even when this fails).
 */
static int d3dq_get_signals(struct drm_file *file,
			    const struct drm_d3dq_obj_array *arr,
			    struct d3dq_signal **out,
			    struct d3dq_fence_qsignal **fsp, u32 *nfsp)
{
	struct drm_d3dq_sync *syncs;
	struct d3dq_signal *signals;
	u32 i, nfences = 0;
	int ret;

	*out = NULL;
	ret = d3dq_copy_syncs(arr, &syncs);
	if (ret || !syncs)
		return ret;

	signals = kvcalloc(arr->count, sizeof(*signals), D3DQ_GFP);
	if (!signals) {
		ret = -ENOMEM;
		goto out;
	}

	for (i = 0; i < arr->count; i++) {
		ret = d3dq_check_sync(&syncs[i], DRM_D3DQ_SYNC_TIMELINE |
					       DRM_D3DQ_SYNC_FENCE);
		if (ret)
			goto err;
		if ((syncs[i].flags & DRM_D3DQ_SYNC_TIMELINE) &&
		    !syncs[i].point) {
			ret = -EINVAL;
			goto err;
		}
		if (syncs[i].flags & DRM_D3DQ_SYNC_FENCE)
			nfences++;
	}
	if (nfences) {
		*fsp = kvcalloc(nfences, sizeof(**fsp), D3DQ_GFP);
		if (!*fsp) {
			ret = -ENOMEM;
			goto err;
		}
	}

	for (i = 0; i < arr->count; i++) {
		signals[i].point = syncs[i].point;
		signals[i].handle = syncs[i].handle;
		if (syncs[i].flags & DRM_D3DQ_SYNC_FENCE) {
			ret = d3dq_fence_qsignal_init(file->driver_priv,
						      syncs[i].handle,
						      syncs[i].point,
						      &(*fsp)[*nfsp]);
			if (ret)
				goto err;
			(*nfsp)++;
			continue;
		}

		signals[i].syncobj = drm_syncobj_find(file, syncs[i].handle);
		if (!signals[i].syncobj) {
			ret = -ENOENT;
			goto err;
		}
		if (syncs[i].flags & DRM_D3DQ_SYNC_TIMELINE) {
			/*
			 * dma_fence_chain_alloc(), charged to the caller:
			 * the point stays in the syncobj.
			 */
			signals[i].chain = kmalloc(sizeof(*signals[i].chain),
						   D3DQ_GFP);
			if (!signals[i].chain) {
				ret = -ENOMEM;
				goto err;
			}
		}
	}

	*out = signals;
	goto out;
err:
	d3dq_put_signals(signals, arr->count);
out:
	kvfree(syncs);
	return ret;
}

/* The submit, wait and signal events of an armed job, before it can run. */
static void d3dq_trace_submit(struct d3dq_queue *queue, struct d3dq_job *job,
			      const struct d3dq_signal *signals, u32 nsignals)
{
	u64 client = queue->usage->client_id, seqno = d3dq_job_seqno(job);
	u32 i;

	trace_d3dq_submit(client, queue->id, seqno, job->nwaits, nsignals,
			  job->ncmds);
	if (trace_d3dq_wait_enabled()) {
		for (i = 0; i < job->nwaits; i++)
			trace_d3dq_wait(client, queue->id, seqno,
					job->waits[i].handle,
					job->waits[i].point);
	}
	if (trace_d3dq_signal_enabled()) {
		for (i = 0; i < nsignals; i++)
			trace_d3dq_signal(client, queue->id, seqno,
					  signals[i].handle, signals[i].point);
	}
}

/*
 * DOC: Implicit sync
 *
 * d3dq publishes its jobs in the buffers' reservation objects, so that a
 * PRIME importer, a compositor or ``DMA_BUF_IOCTL_EXPORT_SYNC_FILE`` sees
 * a buffer the engine still uses as busy: each job's finished fence goes
 * to every buffer its commands name, with %DMA_RESV_USAGE_WRITE for the
 * buffers it writes (the destination of every command) and
 * %DMA_RESV_USAGE_READ for those it only reads (a COPY's source). A job
 * run inside SUBMIT publishes its hardware fence instead, before it runs:
 * the engine never touches a buffer whose reservation object does not
 * name the job yet. Jobs do not wait for the fences they find there:
 * D3D12 synchronises explicitly, and two queues may use one buffer at
 * once.
 */

/* Buffers a set holds without allocating: most jobs name a few. */
#define D3DQ_BO_SET_INLINE	16

/* The buffers a job uses, each once, and whether it writes them. */
struct d3dq_bo_set {
	struct drm_gem_object **objs;
	unsigned long *write;		/* bitmap, one bit per @objs entry */
	u32 count;
	struct ww_acquire_ctx ctx;
	struct drm_gem_object *inline_objs[D3DQ_BO_SET_INLINE];
	unsigned long inline_write;
};

/* A buffer a command names, for sorting and merging duplicates. */
struct d3dq_bo_use {
	struct drm_gem_object *obj;
	bool write;
};

static int d3dq_bo_use_cmp(const void *a, const void *b)
{
	const struct d3dq_bo_use *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return 0;
}

static void d3dq_bo_set_free(struct d3dq_bo_set *set)
{
	if (set->objs != set->inline_objs) {
		kvfree(set->objs);
		bitmap_free(set->write);
	}
	set->objs = NULL;
	set->write = NULL;
	set->count = 0;
}

/*
 * Collect the buffers of @job's commands into @set. The job holds a
 * reference to each of them, so @set holds none.
 */
static int d3dq_bo_set_init(struct d3dq_bo_set *set, struct d3dq_job *job)
{
	struct d3dq_bo_use small[D3DQ_BO_SET_INLINE], *uses = small;
	u32 i, n = 0;
	int ret = 0;

	memset(set, 0, sizeof(*set));
	if (!job->ncmds)
		return 0;

	if (job->ncmds > D3DQ_BO_SET_INLINE / 2) {
		uses = kvmalloc_array(job->ncmds, 2 * sizeof(*uses),
				      D3DQ_GFP);
		if (!uses)
			return -ENOMEM;
	}
	for (i = 0; i < job->ncmds; i++) {
		if (job->cmds[i].dst)
			uses[n++] = (struct d3dq_bo_use){
				&job->cmds[i].dst->base.base, true };
		if (job->cmds[i].src)
			uses[n++] = (struct d3dq_bo_use){
				&job->cmds[i].src->base.base, false };
	}
	if (!n)
		goto out;
	sort(uses, n, sizeof(*uses), d3dq_bo_use_cmp, NULL);

	if (n <= D3DQ_BO_SET_INLINE) {
		set->objs = set->inline_objs;
		set->write = &set->inline_write;
	} else {
		set->objs = kvmalloc_array(n, sizeof(*set->objs), D3DQ_GFP);
		set->write = bitmap_zalloc(n, D3DQ_GFP);
	}
	if (!set->objs || !set->write) {
		d3dq_bo_set_free(set);
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!set->count || set->objs[set->count - 1] != uses[i].obj)
			set->objs[set->count++] = uses[i].obj;
		if (uses[i].write)
			__set_bit(set->count - 1, set->write);
	}
out:
	if (uses != small)
		kvfree(uses);
	return ret;
}

/*
 * Lock the reservation objects of @set and reserve a fence slot in each,
 * so that publishing the job's fence cannot fail. Unlocked on failure.
 */
static int d3dq_bo_set_lock(struct d3dq_bo_set *set)
{
	u32 i;
	int ret;

	if (!set->count)
		return 0;
	ret = drm_gem_lock_reservations(set->objs, set->count, &set->ctx);
	if (ret)	/* -EINTR: restarted, like the other waits of SUBMIT */
		return ret == -EINTR ? -ERESTARTSYS : ret;
	for (i = 0; i < set->count; i++) {
		ret = dma_resv_reserve_fences(set->objs[i]->resv, 1);
		if (ret) {
			drm_gem_unlock_reservations(set->objs, set->count,
						    &set->ctx);
			return ret;
		}
	}
	return 0;
}

/* Add @fence to every buffer of the locked @set, then unlock it. */
static void d3dq_bo_set_publish(struct d3dq_bo_set *set,
				struct dma_fence *fence)
{
	u32 i;

	if (!set->count)
		return;
	for (i = 0; i < set->count; i++)
		dma_resv_add_fence(set->objs[i]->resv, fence,
				   test_bit(i, set->write) ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(set->objs, set->count, &set->ctx);
}

/*
 * What arming a held job publishes, kept from its submit: its signal
 * points (timeline chains preallocated) and its buffers.
 */
struct d3dq_publish {
	struct d3dq_signal *signals;
	u32 nsignals;
	struct d3dq_bo_set bos;
};

void d3dq_publish_free(struct d3dq_publish *publish)
{
	if (!publish)
		return;
	d3dq_bo_set_free(&publish->bos);
	d3dq_put_signals(publish->signals, publish->nsignals);
	kfree(publish);
}

/* Move @src into @dst: @src's inline arrays point into @src. */
static void d3dq_bo_set_move(struct d3dq_bo_set *dst, struct d3dq_bo_set *src)
{
	*dst = *src;
	if (src->objs == src->inline_objs) {
		dst->objs = dst->inline_objs;
		dst->write = &dst->inline_write;
	}
	src->objs = NULL;
	src->write = NULL;
	src->count = 0;
}

/*
 * Publish an armed (or directly run) job's @fence: fence signals (later
 * fence waits of this file may depend on them from now), syncobj points,
 * the buffers of the locked @bos, which this unlocks; and the queue's
 * last fence.
 */
/* Attach @fence to the syncobj points of @signals. */
static void d3dq_signals_publish(struct d3dq_signal *signals, u32 nsignals,
				 struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < nsignals; i++) {
		struct d3dq_signal *s = &signals[i];

		if (!s->syncobj)
			continue;
		if (s->chain) {
			drm_syncobj_add_point(s->syncobj, s->chain, fence,
					      s->point);
			s->chain = NULL;
		} else {
			drm_syncobj_replace_fence(s->syncobj, fence);
		}
	}
}

static void d3dq_job_publish(struct d3dq_job *job, struct dma_fence *fence,
			     struct d3dq_signal *signals, u32 nsignals,
			     struct d3dq_bo_set *bos)
{
	struct d3dq_queue *queue = job->queue;
	u32 i;

	lockdep_assert_held(&queue->submit_lock);

	for (i = 0; i < job->nfsignals; i++)
		d3dq_fence_qsignal_arm(&job->fsignals[i], fence);
	d3dq_signals_publish(signals, nsignals, fence);
	d3dq_bo_set_publish(bos, fence);

	dma_fence_put(queue->last);
	queue->last = dma_fence_get(fence);
	spin_lock(&queue->lock);
	queue->tail_job = job;
	spin_unlock(&queue->lock);
}

/*
 * Whether every fence wait of @waits is satisfied (its release fence
 * signalled: marked for good by the value write) or depends on an armed
 * signal's job (its release fence bound). Syncobj waits always are.
 */
static bool d3dq_waits_ready(const struct d3dq_wait *waits, u32 count)
{
	struct d3dq_release_fence *rf;
	u32 i;

	for (i = 0; i < count; i++) {
		rf = waits[i].release;
		if (!waits[i].cond || !rf || READ_ONCE(rf->waited))
			continue;
		if (!dma_fence_is_signaled(&rf->base))
			return false;
	}
	return true;
}

/**
 * d3dq_job_hold_ready - May a held job be armed?
 * @job: the job
 *
 * Whether each of its fence waits is satisfied or depends on an armed
 * signal's job (d3dq_waits_ready()).
 */
bool d3dq_job_hold_ready(struct d3dq_job *job)
{
	return d3dq_waits_ready(job->waits, job->nwaits);
}

/* Put @job at the end of its queue's held jobs. */
static void d3dq_job_hold(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	job->held = true;
	spin_lock(&queue->lock);
	list_add_tail(&job->link, &queue->held);
	spin_unlock(&queue->lock);
	queue->nheld++;
	atomic_inc(&dfile->jobs_held);
	atomic_inc(&dfile->user->jobs_held);
	trace_d3dq_hold(queue->usage->client_id, queue->id,
			d3dq_job_seqno(job), 0);
}

/* Take @job, held, off its queue's held jobs. */
static void d3dq_job_unhold(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	list_del_init(&job->link);
	spin_unlock(&queue->lock);
	job->held = false;
	queue->nheld--;
	atomic_dec(&dfile->jobs_held);
	atomic_dec(&dfile->user->jobs_held);
}

/*
 * Held jobs one pass runs on the arming thread: bounds the time a CPU
 * signal spends running another queue's jobs (the rest go through the
 * scheduler, in order behind them).
 */
#define D3DQ_ARM_DIRECT_MAX	16

/*
 * Arm and push @queue's held jobs that may run, in their order, each once
 * its waits allow it (d3dq_job_hold_ready()); the first one that must
 * wait keeps the later ones held. A job that nothing stands before runs
 * at once on this thread instead (up to %D3DQ_ARM_DIRECT_MAX of them),
 * exactly as in SUBMIT, and goes on @ran for the caller to free once the
 * submit lock is dropped.
 *
 * Return: whether the queue is usable (if not, nothing was armed).
 */
static bool d3dq_queue_arm_ready_locked(struct d3dq_queue *queue,
					struct list_head *ran)
{
	struct d3dq_publish *publish;
	struct dma_fence *fence;
	unsigned int ndirect = 0;
	struct d3dq_job *job;
	bool direct;

	lockdep_assert_held(&queue->submit_lock);

	if (!d3dq_queue_is_usable(queue))
		return false;
	for (;;) {
		job = list_first_entry_or_null(&queue->held, struct d3dq_job,
					       link);
		if (!job || !d3dq_job_hold_ready(job))
			break;
		publish = job->publish;
		/*
		 * Out of memory for a fence slot: try again later. Nothing
		 * else fails here (no signal reaches a kernel worker).
		 */
		if (d3dq_bo_set_lock(&publish->bos)) {
			mod_delayed_work(d3dq_wq.arm, &queue->arm_work,
					 HZ / 10);
			break;
		}
		d3dq_job_unhold(job);
		job->publish = NULL;
		direct = ndirect < D3DQ_ARM_DIRECT_MAX &&
			 d3dq_job_claim_direct(job, publish->nsignals,
					       publish->bos.count);
		ndirect += direct;
		fence = direct ? &job->hw->base : d3dq_job_arm(job);
		trace_d3dq_arm(queue->usage->client_id, queue->id,
			       d3dq_job_seqno(job), 0);
		d3dq_job_publish(job, fence, publish->signals,
				 publish->nsignals, &publish->bos);
		if (direct) {
			d3dq_job_run_claimed(job);
			list_add_tail(&job->link, ran);
		} else {
			/* The job may be freed from here on. */
			d3dq_job_push(job);
		}
		d3dq_publish_free(publish);
		/* Up to max_pending_jobs of them. */
		cond_resched();
	}
	return true;
}

/*
 * Free jobs taken off their queue's lists (submit lock dropped); @list
 * is left empty, ready to be used again.
 */
static void d3dq_jobs_free(struct list_head *list)
{
	struct d3dq_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, list, link)
		d3dq_job_free(job);
	INIT_LIST_HEAD(list);
}

/**
 * d3dq_queue_arm_held - Arm and push a queue's held jobs that may run.
 * @work: the queue's arm_work
 *
 * See "Held jobs" in Documentation/driver.rst. The value write path only
 * marks waits satisfied and queues this; here, in process context on
 * d3dq-arm and outside any fence signalling path, the submit lock and the
 * reservation locks are taken as in SUBMIT, and a small job that nothing
 * stands before is run here (d3dq_job_claim_direct()), sparing the
 * scheduler's wake-up. A lost or destroyed queue's held jobs are freed
 * instead, never armed.
 */
void d3dq_queue_arm_held(struct work_struct *work)
{
	struct d3dq_queue *queue = container_of(to_delayed_work(work),
						struct d3dq_queue, arm_work);
	LIST_HEAD(ran);
	bool usable;

	mutex_lock(&queue->submit_lock);
	usable = d3dq_queue_arm_ready_locked(queue, &ran);
	mutex_unlock(&queue->submit_lock);
	d3dq_jobs_free(&ran);
	if (!usable)
		d3dq_queue_drop_held(queue);
}

/**
 * d3dq_queue_arm_now - Arm a queue's held jobs in a CPU signal's call.
 * @queue: the queue, a reference held by the caller
 *
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL's value write released a wait of @queue:
 * arm its held jobs that may run on the signalling thread, in process
 * context and outside any fence signalling path like the arming work,
 * running there a small one that nothing stands before, so that a waiter
 * is woken by the job's own completion, two wake-ups earlier. The
 * signaller never sleeps for another submitter: if the submit lock is
 * taken, or the queue is lost, the arming work does it.
 */
void d3dq_queue_arm_now(struct d3dq_queue *queue)
{
	LIST_HEAD(ran);
	bool usable;

	if (!mutex_trylock(&queue->submit_lock)) {
		d3dq_queue_kick_held(queue);
		return;
	}
	usable = d3dq_queue_arm_ready_locked(queue, &ran);
	mutex_unlock(&queue->submit_lock);
	d3dq_jobs_free(&ran);
	if (!usable)
		d3dq_queue_kick_held(queue);
}

/* Take the queue's carried waits off it, onto @list (submit lock held). */
static void d3dq_carry_take_locked(struct d3dq_queue *queue,
				   struct list_head *list)
{
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	atomic_sub(queue->ncarried, &dfile->jobs_held);
	atomic_sub(queue->ncarried, &dfile->user->jobs_held);
	queue->ncarried = 0;
	spin_lock(&queue->lock);
	list_splice_tail_init(&queue->carried, list);
	spin_unlock(&queue->lock);
}

/*
 * Whether the waits of a carrying submit @c are all satisfied: their
 * fence signalled and none of them failed (an error must still reach
 * the job that takes them, as d3dq_job_dependency_failed() finds it).
 */
static bool d3dq_carry_satisfied(struct d3dq_job *c)
{
	return (!c->carry_dep || dma_fence_is_signaled(c->carry_dep)) &&
	       !d3dq_job_dependency_failed(c);
}

/*
 * Move the queue's carried waits that are all satisfied onto @list, to
 * be freed once the submit lock is dropped: a queue that only ever
 * waits has no job to take them.
 */
static void d3dq_carry_prune_locked(struct d3dq_queue *queue,
				    struct list_head *list)
{
	struct d3dq_file *dfile = queue->dfile;
	struct d3dq_job *c, *tmp;
	u32 n = 0;

	lockdep_assert_held(&queue->submit_lock);

	/* Changed under the submit lock only: walked without queue->lock. */
	list_for_each_entry_safe(c, tmp, &queue->carried, link) {
		if (!d3dq_carry_satisfied(c))
			continue;
		spin_lock(&queue->lock);
		list_move_tail(&c->link, list);
		spin_unlock(&queue->lock);
		n++;
	}
	queue->ncarried -= n;
	atomic_sub(n, &dfile->jobs_held);
	atomic_sub(n, &dfile->user->jobs_held);
}

/**
 * d3dq_queue_drop_held - Free a queue's held jobs and carried waits.
 * @queue: the queue, lost or destroyed (or its device removed); the
 *	   caller holds a reference or runs its arm_work
 *
 * Their signal points were never attached and their fence signals never
 * listed: nothing of them was published, so nothing is left to signal.
 */
void d3dq_queue_drop_held(struct d3dq_queue *queue)
{
	struct d3dq_job *job, *tmp;
	LIST_HEAD(list);

	mutex_lock(&queue->submit_lock);
	list_for_each_entry_safe(job, tmp, &queue->held, link) {
		trace_d3dq_cancel(queue->usage->client_id, queue->id,
				  d3dq_job_seqno(job), -ECANCELED);
		d3dq_job_unhold(job);
		list_add_tail(&job->link, &list);
	}
	d3dq_carry_take_locked(queue, &list);
	mutex_unlock(&queue->submit_lock);

	list_for_each_entry_safe(job, tmp, &list, link)
		d3dq_job_free(job);
}

/*
 * Take the queue's submit lock once the queue holds fewer than
 * max_pending_jobs unfinished jobs (held ones and carried waits included),
 * the file's jobs
 * leave room for this one (max_file_job_bytes) and its user's number of
 * jobs too (max_user_jobs), and count the job against the file and the
 * user. The sleeps end in bounded time: armed jobs finish and are freed
 * whatever userspace does. Held jobs and carried waits do not (R5: a
 * submit must not wait for userspace; both count in the file's and the
 * user's jobs_held): when the limit that is full counts held jobs (the
 * queue's, the file's or the user's), the submit fails at once with
 * -ENOSPC. Carried waits count in the queue's limit for a carrying
 * submit (@pruned not NULL) only: a job takes them all, so it always has
 * the room they hold. A carrying submit first takes the carried waits
 * satisfied since off the queue, onto @pruned, for the caller to free
 * once the submit lock is dropped (also when this fails): a queue that
 * only ever waits has no job to take them. Fails with -ECANCELED if the
 * queue is lost.
 */
static int d3dq_queue_reserve(struct d3dq_queue *queue, struct d3dq_job *job,
			      struct list_head *pruned)
{
	struct d3dq_file *dfile = queue->dfile;
	struct d3dq_user *user = dfile->user;
	enum d3dq_charge charge = D3DQ_FILE_FULL;
	bool carry = pruned;
	bool full;
	int ret;

	for (;;) {
		/* Restarted like the waits below, never a bare -EINTR. */
		if (mutex_lock_interruptible(&queue->submit_lock))
			return -ERESTARTSYS;
		if (!d3dq_queue_is_usable(queue)) {
			mutex_unlock(&queue->submit_lock);
			return -ECANCELED;
		}
		if (carry)
			d3dq_carry_prune_locked(queue, pruned);
		/* Only submitters, under the lock, increase @pending. */
		full = atomic_read(&queue->pending) + queue->nheld +
		       (carry ? queue->ncarried : 0) >= d3dq_max_pending_jobs;
		if (!full) {
			charge = d3dq_file_charge_job(dfile, job->bytes);
			if (charge == D3DQ_CHARGED) {
				job->charged = true;
				return 0;
			}
		}
		ret = 0;
		if (full ? queue->nheld + (carry ? queue->ncarried : 0) :
		    atomic_read(charge == D3DQ_USER_FULL ? &user->jobs_held :
				&dfile->jobs_held))
			ret = -ENOSPC;
		mutex_unlock(&queue->submit_lock);
		if (ret)
			return ret;
		if (carry)
			d3dq_jobs_free(pruned);

		/* Jobs held meanwhile wake these up (d3dq_job_hold()). */
		if (full)
			ret = wait_event_interruptible(queue->pending_wq,
						       atomic_read(&queue->pending) <
						       d3dq_max_pending_jobs ||
						       READ_ONCE(queue->nheld) ||
						       (carry &&
							READ_ONCE(queue->ncarried)) ||
						       !d3dq_queue_is_usable(queue));
		else if (charge == D3DQ_USER_FULL)
			ret = wait_event_interruptible(user->wq,
						       d3dq_user_job_fits(user) ||
						       atomic_read(&user->jobs_held) ||
						       !d3dq_queue_is_usable(queue));
		else
			ret = wait_event_interruptible(dfile->wq,
						       d3dq_file_job_fits(dfile, job->bytes) ||
						       atomic_read(&dfile->jobs_held) ||
						       !d3dq_queue_is_usable(queue));
		if (ret)
			return ret;
	}
}

/*
 * The queue's carried waits, readied for the job that takes them: the
 * job's own waits then the carried ones, copied (no references: whoever
 * owns the array owns them), and the jobs that carried them once taken.
 */
struct d3dq_carry {
	struct d3dq_wait *waits;	/* NULL if nothing was carried */
	u32 count;
	struct list_head taken;
};

/*
 * Ready the queue's carried waits for @job (submit lock held): make @job
 * depend on them and fill @carry for d3dq_carry_commit(). Nothing is
 * taken yet: if this or the rest of the submit fails, they stay carried
 * for the next job.
 */
static int d3dq_carry_prepare(struct d3dq_job *job, struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_wait *waits;
	struct d3dq_job *c;
	u32 n = job->nwaits;
	int ret;

	lockdep_assert_held(&queue->submit_lock);

	carry->waits = NULL;
	INIT_LIST_HEAD(&carry->taken);
	if (list_empty(&queue->carried))
		return 0;
	/* At most max_pending_jobs of max_syncs waits each. */
	list_for_each_entry(c, &queue->carried, link)
		n += c->nwaits;
	waits = kvcalloc(n, sizeof(*waits), D3DQ_GFP);
	if (!waits)
		return -ENOMEM;
	/* Its own first: WAIT_RELEASE names them by their index. */
	if (job->nwaits)
		memcpy(waits, job->waits, job->nwaits * sizeof(*waits));
	n = job->nwaits;
	list_for_each_entry(c, &queue->carried, link) {
		if (c->carry_dep) {
			/* Consumes the reference, failing or not. */
			ret = drm_sched_job_add_dependency(&job->base,
							   dma_fence_get(c->carry_dep));
			if (ret) {
				kvfree(waits);
				return ret;
			}
		}
		if (c->nwaits)
			memcpy(&waits[n], c->waits, c->nwaits * sizeof(*waits));
		n += c->nwaits;
	}
	carry->waits = waits;
	carry->count = n;
	return 0;
}

/*
 * Whether @job, with the waits d3dq_carry_prepare() readied, may be armed
 * now (d3dq_job_hold_ready()).
 */
static bool d3dq_carry_ready(struct d3dq_job *job, struct d3dq_carry *carry)
{
	return carry->waits ? d3dq_waits_ready(carry->waits, carry->count) :
	       d3dq_job_hold_ready(job);
}

/*
 * @job takes the waits @carry readied (submit lock held; nothing fails):
 * they are its own from now, with their charge; the jobs that carried
 * them go onto @carry->taken, to be freed once the lock is dropped.
 */
static void d3dq_carry_commit(struct d3dq_job *job, struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_job *c;

	if (!carry->waits)
		return;
	d3dq_carry_take_locked(queue, &carry->taken);
	list_for_each_entry(c, &carry->taken, link) {
		c->nwaits = 0;
		if (c->charged) {
			c->charged = false;
			job->bytes += c->bytes;
			d3dq_file_merge_job(queue->dfile);
		}
	}
	kvfree(job->waits);
	job->waits = carry->waits;
	job->nwaits = carry->count;
	carry->waits = NULL;
}

/*
 * Carry @job's waits on its queue (submit lock held), counted as a held
 * job until the queue's next job takes them (see "Carried waits").
 */
static void d3dq_submit_carry(struct d3dq_job *job)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	lockdep_assert_held(&queue->submit_lock);

	spin_lock(&queue->lock);
	list_add_tail(&job->link, &queue->carried);
	spin_unlock(&queue->lock);
	queue->ncarried++;
	atomic_inc(&dfile->jobs_held);
	atomic_inc(&dfile->user->jobs_held);
	/* Submits sleeping at a limit now fail instead (-ENOSPC). */
	wake_up_all(&queue->pending_wq);
	wake_up_all(&dfile->wq);
	wake_up_all(&dfile->user->wq);
}

/*
 * Hold a job (see "Held jobs" in the uapi header): keep what its arming
 * will publish, number it and list it behind the queue's other held
 * jobs, with the carried waits it takes. Under the submit lock; fails
 * only for want of memory, before anything was taken.
 */
static int d3dq_submit_hold(struct d3dq_job *job, struct d3dq_signal **signals,
			    u32 nsignals, struct d3dq_bo_set *bos,
			    struct d3dq_carry *carry)
{
	struct d3dq_queue *queue = job->queue;
	struct d3dq_file *dfile = queue->dfile;

	job->publish = kzalloc(sizeof(*job->publish), D3DQ_GFP);
	if (!job->publish)
		return -ENOMEM;
	d3dq_carry_commit(job, carry);
	job->publish->signals = *signals;
	job->publish->nsignals = nsignals;
	*signals = NULL;
	d3dq_bo_set_move(&job->publish->bos, bos);

	job->seqno = ++queue->njobs;
	job->file_seqno = atomic64_inc_return(&dfile->job_seqno);
	d3dq_trace_submit(queue, job, job->publish->signals, nsignals);
	d3dq_job_hold(job);
	/* Submits sleeping at a limit now fail instead (-ENOSPC). */
	wake_up_all(&queue->pending_wq);
	wake_up_all(&dfile->wq);
	wake_up_all(&dfile->user->wq);
	return 0;
}

/*
 * Give the signals of @tail to the queue's last job, armed and not ended
 * (submit lock held; see "Signals on the last job" in the uapi): they are
 * pending from now, and the job sets them when it ends, after its own.
 * If it ended meanwhile, they are set here as it would have. Whether the
 * job took @tail (else the caller frees it).
 *
 * The signals are armed under the queue's lock, where the job cannot end:
 * a wait bound to an armed signal depends on the job's fence, so a signal
 * armed after the job ended could release that wait before its value is
 * written, and work after the wait would run ahead of the value (R17).
 */
static bool d3dq_tail_attach(struct d3dq_queue *queue, struct d3dq_job *last,
			     struct d3dq_tail *tail)
{
	bool taken;
	int err;
	u32 i;

	spin_lock(&queue->lock);
	taken = queue->tail_job == last && !last->ended;
	if (taken) {
		for (i = 0; i < tail->nfsignals; i++)
			d3dq_fence_qsignal_arm(&tail->fsignals[i],
					       queue->last);
		list_add_tail(&tail->link, &last->tails);
		last->ntails++;
		last->bytes += tail->bytes;
	}
	/* Ended meanwhile; or freed, after its fence signalled. */
	if (queue->tail_job == last)
		err = last->end_err;
	else
		err = dma_fence_get_status(queue->last) == 1 ? 0 : -ECANCELED;
	spin_unlock(&queue->lock);
	if (taken)
		return true;

	for (i = 0; i < tail->nfsignals; i++)
		d3dq_fence_qsignal_end(&tail->fsignals[i], !err);
	return false;
}

/*
 * A %DRM_D3DQ_SUBMIT_TAIL submit (see "Signals on the last job"): its
 * signals set in the call, or given to the queue's last job. Return: 0,
 * a negative error, or 1 when it must make a job as any submit.
 */
static int d3dq_submit_tail(struct drm_file *file, struct d3dq_queue *queue,
			    struct drm_d3dq_submit *args)
{
	struct d3dq_file *dfile = queue->dfile;
	struct d3dq_signal *signals = NULL;
	struct d3dq_job *last = NULL;
	struct dma_fence *fence;
	struct d3dq_tail *tail;
	int ret, status;
	u32 i;

	tail = kzalloc(sizeof(*tail), D3DQ_GFP);
	if (!tail)
		return -ENOMEM;
	INIT_LIST_HEAD(&tail->link);
	ret = d3dq_get_signals(file, &args->signals, &signals,
			       &tail->fsignals, &tail->nfsignals);
	if (ret)
		goto out;
	tail->bytes = sizeof(*tail) +
		      (u64)tail->nfsignals * sizeof(*tail->fsignals);

	if (mutex_lock_interruptible(&queue->submit_lock)) {
		ret = -ERESTARTSYS;
		goto out;
	}
	if (!d3dq_queue_is_usable(queue)) {
		ret = -ECANCELED;
		goto unlock;
	}
	/* Behind held jobs or carried waits: a job. */
	ret = 1;
	if (queue->nheld || queue->ncarried)
		goto unlock;
	status = queue->last ? dma_fence_get_status(queue->last) : 1;
	if (status < 0)
		goto unlock;

	if (status == 1) {
		/* Every job of the queue completed: set them now. */
		for (i = 0; i < tail->nfsignals; i++)
			d3dq_fence_qsignal_end(&tail->fsignals[i], true);
		fence = queue->last ? dma_fence_get(queue->last) :
		       dma_fence_get_stub();
		d3dq_signals_publish(signals, args->signals.count, fence);
		dma_fence_put(fence);
		args->out_flags |= DRM_D3DQ_SUBMIT_DONE;
		ret = 0;
		goto unlock;
	}

	spin_lock(&queue->lock);
	if (queue->tail_job && queue->tail_job->ntails < D3DQ_TAIL_MAX)
		last = queue->tail_job;
	spin_unlock(&queue->lock);
	if (!last || !d3dq_file_charge_bytes(dfile, tail->bytes))
		goto unlock;
	if (d3dq_tail_attach(queue, last, tail))
		tail = NULL;
	else
		d3dq_file_uncharge_bytes(dfile, tail->bytes);
	/* After the values, should the job have ended meanwhile (R17). */
	d3dq_signals_publish(signals, args->signals.count, queue->last);
	ret = 0;
unlock:
	mutex_unlock(&queue->submit_lock);
out:
	if (signals)
		d3dq_put_signals(signals, args->signals.count);
	if (tail)
		d3dq_tail_free(tail);
	return ret;
}

int d3dq_ioctl_submit(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct drm_d3dq_submit *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	bool carry = args->flags & DRM_D3DQ_SUBMIT_CARRY;
	bool tail = args->flags & DRM_D3DQ_SUBMIT_TAIL;
	struct d3dq_signal *signals = NULL;
	struct d3dq_carry taken;
	struct d3dq_bo_set bos;
	LIST_HEAD(pruned);
	struct d3dq_queue *queue;
	struct dma_fence *fence;
	struct d3dq_job *job;
	bool direct;
	int ret;

	if ((args->flags & ~(DRM_D3DQ_SUBMIT_HOLD | DRM_D3DQ_SUBMIT_CARRY |
			     DRM_D3DQ_SUBMIT_TAIL)) ||
	    args->pad || args->seqno || args->out_flags || args->pad2)
		return -EINVAL;
	if (args->cmd_bytes % 8 || args->cmd_bytes > d3dq_max_cmd_bytes)
		return -EINVAL;
	if ((args->waits.count && !args->waits.stride) ||
	    (args->signals.count && !args->signals.stride))
		return -EINVAL;
	/* A carrying submit makes no job: waits only (see the uapi). */
	if (carry && (tail || args->cmd_bytes || args->signals.count))
		return -EINVAL;
	/* A tail submit may make none: a few signals only. */
	if (tail && (args->cmd_bytes || args->waits.count ||
		     args->signals.count > D3DQ_DIRECT_MAX_SIGNALS))
		return -EINVAL;

	queue = d3dq_queue_lookup(dfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	if (carry && !args->waits.count) {
		d3dq_queue_put(queue);
		return 0;
	}
	if (tail) {
		ret = d3dq_submit_tail(file, queue, args);
		if (ret <= 0) {
			d3dq_queue_put(queue);
			return ret;
		}
	}

	/* The job takes over the lookup reference. */
	job = d3dq_job_create(queue, file);
	if (IS_ERR(job))
		return PTR_ERR(job);

	ret = d3dq_parse_cmds(file, job, args->cmds, args->cmd_bytes);
	if (ret)
		goto err_job;

	ret = d3dq_add_waits(file, job,
			     args->flags & (DRM_D3DQ_SUBMIT_HOLD |
					    DRM_D3DQ_SUBMIT_CARRY) ?
			     queue : NULL, &args->waits, carry);
	if (ret)
		goto err_job;

	ret = d3dq_get_signals(file, &args->signals, &signals, &job->fsignals,
			       &job->nfsignals);
	if (ret)
		goto err_job;

	ret = d3dq_bo_set_init(&bos, job);
	if (ret)
		goto err_signals;

	d3dq_job_set_bytes(job, args->cmd_bytes);
	ret = d3dq_queue_reserve(queue, job, carry ? &pruned : NULL);
	if (ret) {
		d3dq_jobs_free(&pruned);
		goto err_bos;
	}

	/*
	 * Every wait satisfied already: nothing to carry (R7 holds); after
	 * the reservation, so that a lost queue still fails the call.
	 */
	if (carry) {
		bool satisfied = d3dq_carry_satisfied(job);

		if (!satisfied)
			d3dq_submit_carry(job);
		mutex_unlock(&queue->submit_lock);
		d3dq_jobs_free(&pruned);
		d3dq_bo_set_free(&bos);
		if (satisfied)
			d3dq_job_free(job);
		return 0;
	}

	/* The waits carried so far become this job's too. */
	ret = d3dq_carry_prepare(job, &taken);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		goto err_bos;
	}

	/*
	 * Held behind the queue's held jobs (whatever its flags), or for
	 * a fence wait of its own. A wait satisfied from here on queues
	 * the arming work, which runs once the submit lock is dropped.
	 */
	if (queue->nheld || !d3dq_carry_ready(job, &taken)) {
		ret = d3dq_submit_hold(job, &signals, args->signals.count,
				       &bos, &taken);
		mutex_unlock(&queue->submit_lock);
		if (ret) {
			kvfree(taken.waits);
			goto err_bos;
		}
		d3dq_jobs_free(&taken.taken);
		args->seqno = job->file_seqno;
		args->out_flags |= DRM_D3DQ_SUBMIT_HELD;
		return 0;
	}

	ret = d3dq_bo_set_lock(&bos);
	if (ret) {
		mutex_unlock(&queue->submit_lock);
		kvfree(taken.waits);
		goto err_bos;
	}
	d3dq_carry_commit(job, &taken);

	/* Nothing fails from here on. */
	job->seqno = ++queue->njobs;
	job->file_seqno = atomic64_inc_return(&dfile->job_seqno);
	args->seqno = job->file_seqno;
	d3dq_trace_submit(queue, job, signals, args->signals.count);

	/*
	 * A job that nothing stands before takes the engine now and runs
	 * once its hardware fence, which its signal points and buffers get,
	 * is published and the reservation locks are dropped; nothing from
	 * here to the run may sleep (preemption is disabled).
	 */
	direct = d3dq_job_claim_direct(job, args->signals.count, bos.count);
	fence = direct ? &job->hw->base : d3dq_job_arm(job);
	d3dq_job_publish(job, fence, signals, args->signals.count, &bos);

	if (direct) {
		/* Whoever looks sees the job busy: now it writes. */
		d3dq_job_run_claimed(job);
		if (dma_fence_get_status(fence) == 1)
			args->out_flags |= DRM_D3DQ_SUBMIT_DONE;
	} else {
		d3dq_job_push(job);
	}
	mutex_unlock(&queue->submit_lock);

	d3dq_jobs_free(&taken.taken);
	d3dq_bo_set_free(&bos);
	d3dq_put_signals(signals, args->signals.count);
	if (direct)
		d3dq_job_free(job);
	return 0;

err_bos:
	d3dq_bo_set_free(&bos);
err_signals:
	if (signals)
		d3dq_put_signals(signals, args->signals.count);
err_job:
	d3dq_job_free(job);
	return ret;
}

/* A job of @queue not freed yet, held or not, by its file seqno. */
static struct d3dq_job *d3dq_queue_find_job(struct d3dq_queue *queue,
					    u64 seqno)
{
	struct d3dq_job *job;

	lockdep_assert_held(&queue->lock);

	list_for_each_entry(job, &queue->jobs, link)
		if (job->file_seqno == seqno)
			return job;
	list_for_each_entry(job, &queue->held, link)
		if (job->file_seqno == seqno)
			return job;
	return NULL;
}

/*
 * WAIT_RELEASE: end a releasable wait of a job now. The job is looked up
 * among those of its queue not freed yet; one that is gone has run, and
 * releasing its wait is nothing to do.
 */
int d3dq_ioctl_wait_release(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_d3dq_wait_release *args = data;
	struct d3dq_file *dfile = file->driver_priv;
	struct d3dq_release_fence *rf = NULL;
	struct d3dq_queue *queue;
	struct d3dq_job *job;
	int ret = 0;

	if (!args->seqno ||
	    args->seqno > (u64)atomic64_read(&dfile->job_seqno) ||
	    args->index >= d3dq_max_syncs)
		return -EINVAL;
	queue = d3dq_queue_lookup(dfile, args->queue_id);
	if (!queue)
		return -ENOENT;

	spin_lock(&queue->lock);
	job = d3dq_queue_find_job(queue, args->seqno);
	if (job) {
		/* A fence wait is released by its value, not by this. */
		if (args->index >= job->nwaits ||
		    !(job->waits[args->index].flags &
		      DRM_D3DQ_SYNC_RELEASABLE)) {
			ret = -EINVAL;
		} else {
			rf = job->waits[args->index].release;
			dma_fence_get(&rf->base);
		}
	}
	spin_unlock(&queue->lock);

	/* Signalled outside the queue lock: it runs scheduler callbacks. */
	if (rf) {
		d3dq_release_fence_release(rf);
		dma_fence_put(&rf->base);
	}
	d3dq_queue_put(queue);
	return ret;
}
