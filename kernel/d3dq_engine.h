/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq software engine: one per queue, runs the current job's commands
 * and signals its hardware fence.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_ENGINE_H_
#define _D3DQ_ENGINE_H_

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct d3dq_job;
struct d3dq_queue;

/**
 * struct d3dq_hw_fence - The fence the engine signals when a job ends.
 */
struct d3dq_hw_fence {
	struct dma_fence base;		/* first: freed with dma_fence_free() */
	spinlock_t lock;
	bool initialized;		/* dma_fence_init() was called */
};

/**
 * struct d3dq_engine - The software engine of one queue.
 *
 * @job is protected by &d3dq_queue.lock.
 */
struct d3dq_engine {
	struct d3dq_job *job;		/* running job, or NULL */
	struct work_struct work;	/* runs @job's commands */
	struct hrtimer timer;		/* end of a DELAY command */
	u64 fence_context;
	u64 seqno;
};

void d3dq_engine_init(struct d3dq_queue *queue);
void d3dq_engine_fini(struct d3dq_queue *queue);
struct dma_fence *d3dq_engine_run(struct d3dq_queue *queue,
				  struct d3dq_job *job);
bool d3dq_engine_cancel(struct d3dq_queue *queue, struct d3dq_job *job,
			int err);
struct d3dq_hw_fence *d3dq_hw_fence_alloc(void);
void d3dq_hw_fence_put(struct d3dq_hw_fence *hw);
extern atomic_t d3dq_live_hw_fences;

#endif /* _D3DQ_ENGINE_H_ */
