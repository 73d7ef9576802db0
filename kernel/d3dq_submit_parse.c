// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq submission, reading a submit: copy and check the user's arrays of
 * commands, waits and signals, look up and check the buffers the commands
 * name, turn waits into the job's dependencies and resolve signals into
 * syncobj points and fence signals. Nothing here is published.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_gem.h"
#include "d3dq_fence.h"
#include "d3dq_job.h"
#include "d3dq_submit.h"

/*
 * Largest element stride of a sync array: a fixed number, not PAGE_SIZE,
 * so that the uapi is the same on every architecture.
 */
#define D3DQ_MAX_SYNC_STRIDE	4096

/*
 * Copy a user array of struct drm_d3dq_sync into @syncs, which has room
 * for its count. Elements may be larger than the kernel's structure
 * (newer userspace) if the extra bytes are zero.
 */
int d3dq_copy_syncs_into(const struct drm_d3dq_obj_array *arr,
			 struct drm_d3dq_sync *syncs)
{
	u64 offset;
	u32 i;
	int ret;

	if (arr->count > d3dq_max_syncs)
		return -EINVAL;
	if (arr->count &&
	    (arr->stride < sizeof(*syncs) || arr->stride > D3DQ_MAX_SYNC_STRIDE))
		return -EINVAL;

	for (i = 0; i < arr->count; i++) {
		/* count * stride is below 2^29: no overflow. */
		offset = (u64)i * arr->stride;
		ret = copy_struct_from_user(&syncs[i], sizeof(syncs[i]),
					    u64_to_user_ptr(arr->array + offset),
					    arr->stride);
		if (ret)
			return ret == -E2BIG ? -EINVAL : ret;
	}
	return 0;
}

/* The same into an array allocated here, NULL for an empty one. */
static int d3dq_copy_syncs(const struct drm_d3dq_obj_array *arr,
			   struct drm_d3dq_sync **out)
{
	struct drm_d3dq_sync *syncs;
	int ret;

	*out = NULL;
	if (!arr->count)
		return 0;
	if (arr->count > d3dq_max_syncs)
		return -EINVAL;

	syncs = kvmalloc_array(arr->count, sizeof(*syncs), D3DQ_GFP);
	if (!syncs)
		return -ENOMEM;
	ret = d3dq_copy_syncs_into(arr, syncs);
	if (ret) {
		kvfree(syncs);
		return ret;
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

/*
 * Copy and check a command stream into job->cmds: the whole of @bytes,
 * or with @used (a split submit) the whole commands that fit in
 * max_cmd_bytes from @uptr, their size in *@used.
 */
static int d3dq_parse_stream(struct drm_file *file, struct d3dq_job *job,
			     u64 uptr, u32 bytes, u32 *used)
{
	const struct drm_d3dq_cmd_header *hdr;
	u32 pos = 0, size, len = bytes;
	struct d3dq_cmd *cmd;
	void *buf;
	int ret = 0;

	if (!bytes)
		return 0;
	if (used)
		len = min(bytes, d3dq_max_cmd_bytes);

	buf = vmemdup_user(u64_to_user_ptr(uptr), len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	/* The smallest command is 16 bytes. */
	job->cmds = kvcalloc(len / 16, sizeof(*job->cmds), D3DQ_GFP);
	if (!job->cmds) {
		ret = -ENOMEM;
		goto out;
	}

	while (pos < len) {
		/* len is a multiple of 8, so the header fits. */
		hdr = buf + pos;
		size = d3dq_cmd_size(hdr->op);
		if (!size || hdr->size != size || size > bytes - pos) {
			ret = -EINVAL;
			goto out;
		}
		/* A split job ends before the command that does not fit. */
		if (size > len - pos) {
			if (!pos)
				ret = -EINVAL;
			break;
		}

		cmd = &job->cmds[job->ncmds];
		/* Counted first: job free drops what was looked up. */
		job->ncmds++;
		ret = d3dq_parse_cmd(file, hdr, hdr->op, cmd);
		if (ret)
			goto out;
		pos += size;
	}
	if (used)
		*used = pos;

out:
	kvfree(buf);
	return ret;
}

/* Copy and check the whole command stream into job->cmds. */
int d3dq_parse_cmds(struct drm_file *file, struct d3dq_job *job,
		    u64 uptr, u32 bytes)
{
	return d3dq_parse_stream(file, job, uptr, bytes, NULL);
}

/*
 * The next job of a split submit: the whole commands of the stream at
 * @uptr (@bytes left) that fit in max_cmd_bytes, their size in *@used.
 */
int d3dq_parse_cmds_split(struct drm_file *file, struct d3dq_job *job,
			  u64 uptr, u32 bytes, u32 *used)
{
	return d3dq_parse_stream(file, job, uptr, bytes, used);
}

/*
 * The fence a wait names. Without WAIT_FOR_SUBMIT,
 * drm_syncobj_find_fence() never sleeps and fails with -EINVAL both when
 * the point has no fence yet (-ENODATA here: it may get one) and when a
 * timeline point is asked of a syncobj whose fence is not a timeline
 * (-EINVAL here: a binary fence has no points).
 */
int d3dq_find_fence(struct drm_file *file, const struct drm_d3dq_sync *sync,
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

/* Waits of a submit read without an allocation (d3dq_add_waits()). */
#define D3DQ_WAITS_INLINE	4

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
int d3dq_add_waits(struct drm_file *file, struct d3dq_job *job,
		   struct d3dq_queue *hold,
		   const struct drm_d3dq_obj_array *arr, bool carry)
{
	/* A few waits, the common case, are read into the stack. */
	struct drm_d3dq_sync small_syncs[D3DQ_WAITS_INLINE];
	struct dma_fence *small_deps[D3DQ_WAITS_INLINE];
	struct drm_d3dq_sync *syncs = small_syncs;
	struct dma_fence **deps = NULL;
	struct dma_fence *fence;
	struct d3dq_wait *w;
	u32 i, ndeps = 0;
	int ret;

	if (!arr->count)
		return 0;
	if (arr->count > D3DQ_WAITS_INLINE)
		ret = d3dq_copy_syncs(arr, &syncs);
	else
		ret = d3dq_copy_syncs_into(arr, syncs);
	if (ret)
		return ret;

	job->waits = kvcalloc(arr->count, sizeof(*job->waits),
			      D3DQ_GFP);
	if (!job->waits) {
		ret = -ENOMEM;
		goto out;
	}
	if (arr->count > D3DQ_JOIN_MIN || carry) {
		/* No references: the waits hold them. */
		deps = small_deps;
		if (arr->count > D3DQ_WAITS_INLINE)
			deps = kvmalloc_array(arr->count, sizeof(*deps),
					      D3DQ_GFP);
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
	if (deps != small_deps)
		kvfree(deps);
	if (syncs != small_syncs)
		kvfree(syncs);
	return ret;
}

/* Drop what the signals of a submit hold; their array is the caller's. */
void d3dq_drop_signals(struct d3dq_signal *signals, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		dma_fence_chain_free(signals[i].chain);
		signals[i].chain = NULL;
		if (signals[i].syncobj)
			drm_syncobj_put(signals[i].syncobj);
		signals[i].syncobj = NULL;
	}
}

void d3dq_put_signals(struct d3dq_signal *signals, u32 count)
{
	d3dq_drop_signals(signals, count);
	kvfree(signals);
}

/**
 * d3dq_resolve_signals - Resolve the copied signals of a submit.
 * @file: the submitting file
 * @syncs: the signals, copied
 * @count: their number
 * @signals: syncobj points, resolved here (@count, zeroed by the caller)
 * @fs: fence signals, resolved here (room for every fence signal)
 * @nfsp: the number of @fs initialised, which the caller frees even when
 *	  this fails
 * @no_job: the submit makes no job: signals with %DRM_D3DQ_SYNC_JOB_ONLY
 *	    or %DRM_D3DQ_SYNC_ARMED_ONLY are checked, not looked up, and
 *	    stay unresolved (no syncobj)
 *
 * Every signal is checked before anything is looked up. On failure the
 * caller drops @signals (d3dq_drop_signals()).
 */
int d3dq_resolve_signals(struct drm_file *file,
			 const struct drm_d3dq_sync *syncs, u32 count,
			 struct d3dq_signal *signals,
			 struct d3dq_fence_qsignal *fs, u32 *nfsp, bool no_job)
{
	int ret;
	u32 i;

	for (i = 0; i < count; i++) {
		ret = d3dq_check_sync(&syncs[i], DRM_D3DQ_SYNC_TIMELINE |
					       DRM_D3DQ_SYNC_FENCE |
					       DRM_D3DQ_SYNC_JOB_ONLY |
					       DRM_D3DQ_SYNC_ARMED_ONLY);
		if (ret)
			return ret;
		if ((syncs[i].flags & DRM_D3DQ_SYNC_TIMELINE) &&
		    !syncs[i].point)
			return -EINVAL;
	}

	for (i = 0; i < count; i++) {
		signals[i].point = syncs[i].point;
		signals[i].handle = syncs[i].handle;
		if (syncs[i].flags & DRM_D3DQ_SYNC_FENCE) {
			ret = d3dq_fence_qsignal_init(file->driver_priv,
						      syncs[i].handle,
						      syncs[i].point,
						      &fs[*nfsp]);
			if (ret)
				return ret;
			(*nfsp)++;
			continue;
		}
		if (no_job && (syncs[i].flags & (DRM_D3DQ_SYNC_JOB_ONLY |
						 DRM_D3DQ_SYNC_ARMED_ONLY)))
			continue;
		signals[i].armed_only = syncs[i].flags &
					DRM_D3DQ_SYNC_ARMED_ONLY;

		signals[i].syncobj = drm_syncobj_find(file, syncs[i].handle);
		if (!signals[i].syncobj)
			return -ENOENT;
		if (syncs[i].flags & DRM_D3DQ_SYNC_TIMELINE) {
			/*
			 * dma_fence_chain_alloc(), charged to the caller:
			 * the point stays in the syncobj.
			 */
			signals[i].chain = kmalloc(sizeof(*signals[i].chain),
						   D3DQ_GFP);
			if (!signals[i].chain)
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Resolve the signals of a submit that makes a job: syncobj points into
 * @out, fence signals into *@fsp, *@nfsp of them initialised (the job's,
 * which frees them even when this fails).
 */
int d3dq_get_signals(struct drm_file *file,
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
	for (i = 0; i < arr->count; i++)
		nfences += !!(syncs[i].flags & DRM_D3DQ_SYNC_FENCE);
	if (nfences) {
		*fsp = kvcalloc(nfences, sizeof(**fsp), D3DQ_GFP);
		if (!*fsp) {
			ret = -ENOMEM;
			goto err;
		}
	}

	ret = d3dq_resolve_signals(file, syncs, arr->count, signals, *fsp,
				   nfsp, false);
	if (ret)
		goto err;
	*out = signals;
	goto out;
err:
	d3dq_put_signals(signals, arr->count);
out:
	kvfree(syncs);
	return ret;
}
