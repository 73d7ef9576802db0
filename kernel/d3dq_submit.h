/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq submission, shared by the files of SUBMIT: signal points, buffer
 * sets, what arming a held job publishes, carried waits readied for a
 * job, and the functions these files call across (their comments are at
 * their definitions).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_SUBMIT_H_
#define _D3DQ_SUBMIT_H_

#include <linux/list.h>
#include <linux/types.h>
#include <linux/ww_mutex.h>

struct d3dq_fence_qsignal;
struct d3dq_job;
struct d3dq_queue;
struct d3dq_wait;
struct dma_fence;
struct dma_fence_chain;
struct drm_d3dq_obj_array;
struct drm_d3dq_submit;
struct drm_d3dq_sync;
struct drm_file;
struct drm_gem_object;
struct drm_syncobj;

/*
 * A signal point, resolved before the job is armed; a fence signal has
 * no syncobj (it lives in the job: d3dq_job.fsignals).
 */
struct d3dq_signal {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;	/* timeline points only */
	u64 point;
	u32 handle;			/* for the trace */
	/* %DRM_D3DQ_SYNC_ARMED_ONLY: a marker does not publish it. */
	bool armed_only;
};

/* Buffers a set holds without allocating: most jobs name a few. */
#define D3DQ_BO_SET_INLINE	16

/* The buffers a job uses, each once, and whether it writes them. */
struct d3dq_bo_set {
	struct drm_gem_object **objs;
	unsigned long *write;		/* bitmap, one bit per @objs entry */
	u32 count;
	struct ww_acquire_ctx ctx;
	/*
	 * The job whose dependencies get the other drivers' fences of these
	 * buffers when they are locked (%DRM_D3DQ_SUBMIT_IMPLICIT), or
	 * NULL; how many were added, by the last lock.
	 */
	struct d3dq_job *implicit;
	u32 nimplicit;
	struct drm_gem_object *inline_objs[D3DQ_BO_SET_INLINE];
	unsigned long inline_write;
};

/*
 * What arming a held job publishes, kept from its submit: its signal
 * points (timeline chains preallocated) and its buffers.
 */
struct d3dq_publish {
	struct d3dq_signal *signals;
	u32 nsignals;
	struct d3dq_bo_set bos;
};

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

/* d3dq_submit_parse.c */
int d3dq_parse_cmds(struct drm_file *file, struct d3dq_job *job,
		    u64 uptr, u32 bytes);
int d3dq_parse_cmds_split(struct drm_file *file, struct d3dq_job *job,
			  u64 uptr, u32 bytes, u32 *used);
int d3dq_add_waits(struct drm_file *file, struct d3dq_job *job,
		   struct d3dq_queue *hold,
		   const struct drm_d3dq_obj_array *arr, bool carry);
int d3dq_copy_syncs_into(const struct drm_d3dq_obj_array *arr,
			 struct drm_d3dq_sync *syncs);
void d3dq_drop_signals(struct d3dq_signal *signals, u32 count);
void d3dq_put_signals(struct d3dq_signal *signals, u32 count);
int d3dq_resolve_signals(struct drm_file *file,
			 const struct drm_d3dq_sync *syncs, u32 count,
			 struct d3dq_signal *signals,
			 struct d3dq_fence_qsignal *fs, u32 *nfsp, bool no_job);
int d3dq_find_fence(struct drm_file *file, const struct drm_d3dq_sync *sync,
		    struct dma_fence **out);
int d3dq_get_signals(struct drm_file *file,
		     const struct drm_d3dq_obj_array *arr,
		     struct d3dq_signal **out,
		     struct d3dq_fence_qsignal **fsp, u32 *nfsp);

/* d3dq_publish.c */
void d3dq_bo_set_free(struct d3dq_bo_set *set);
int d3dq_bo_set_init(struct d3dq_bo_set *set, struct d3dq_job *job);
int d3dq_bo_set_lock(struct d3dq_bo_set *set);
int d3dq_bo_set_trylock(struct d3dq_bo_set *set);
void d3dq_bo_set_move(struct d3dq_bo_set *dst, struct d3dq_bo_set *src);
void d3dq_signals_publish(struct d3dq_signal *signals, u32 nsignals,
			  struct dma_fence *fence);
void d3dq_job_publish(struct d3dq_job *job, struct dma_fence *fence,
		      struct d3dq_signal *signals, u32 nsignals,
		      struct d3dq_bo_set *bos);

/* d3dq_arm.c */
bool d3dq_waits_ready(const struct d3dq_wait *waits, u32 count);
bool d3dq_job_start(struct d3dq_job *job, struct d3dq_signal *signals,
		    u32 nsignals, struct d3dq_bo_set *bos, bool may_direct);
void d3dq_jobs_free(struct list_head *list);
int d3dq_submit_hold(struct d3dq_job *job, struct d3dq_signal **signals,
		     u32 nsignals, struct d3dq_bo_set *bos,
		     struct d3dq_carry *carry);
bool d3dq_queue_arm_ready(struct d3dq_queue *queue, struct list_head *ran);

/* d3dq_carry.c */
void d3dq_carry_take_locked(struct d3dq_queue *queue,
			    struct list_head *list);
bool d3dq_carry_satisfied(struct d3dq_job *c);
void d3dq_carry_prune_locked(struct d3dq_queue *queue,
			     struct list_head *list);
int d3dq_carry_prepare(struct d3dq_job *job, struct d3dq_carry *carry);
bool d3dq_carry_ready(struct d3dq_job *job, struct d3dq_carry *carry);
void d3dq_carry_commit(struct d3dq_job *job, struct d3dq_carry *carry);
void d3dq_submit_carry(struct d3dq_job *job);

/* d3dq_tail.c */
int d3dq_submit_tail(struct drm_file *file, struct d3dq_queue *queue,
		     struct drm_d3dq_submit *args);

/* d3dq_submit.c */
void d3dq_trace_submit(struct d3dq_queue *queue, struct d3dq_job *job,
		       const struct d3dq_signal *signals, u32 nsignals);

#endif /* _D3DQ_SUBMIT_H_ */
