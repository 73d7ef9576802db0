/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq software engine: one per device, shared by its queues; runs the
 * queues' current jobs in bounded steps and signals a job's hardware fence
 * when it ends. Each queue has its place on it (struct d3dq_engine).
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

#include <drm/d3dq_drm.h>

struct d3dq_job;
struct d3dq_queue;
struct d3dq_sched;

/**
 * struct d3dq_hw_fence - The fence the engine signals when a job ends.
 *
 * The scheduler fences of its job hold it (as their parent), so it goes
 * last of the job's fences. Until then it keeps the module loaded and the
 * job's scheduler allocated: scheduler fences read their timeline name
 * through the scheduler, and every fence reaches module text and data.
 */
struct d3dq_hw_fence {
	struct dma_fence base;
	spinlock_t lock;		/* the fence's lock, its own */
	struct d3dq_sched *sched;	/* holds a reference */
	bool initialized;		/* dma_fence_init() was called */
};

#define D3DQ_NUM_PRIORITIES	(DRM_D3DQ_QUEUE_PRIORITY_REALTIME + 1)

/**
 * struct d3dq_engine_client - A client's (open file's) place in the engine.
 *
 * Lives in the client's &struct d3dq_usage, which its queues hold. Under
 * &d3dq_dispatch.lock.
 */
struct d3dq_engine_client {
	/* In &d3dq_dispatch.clients of the priority, while @queues is not. */
	struct list_head link[D3DQ_NUM_PRIORITIES];
	/* The client's queues with work ready, per priority. */
	struct list_head queues[D3DQ_NUM_PRIORITIES];
};

/**
 * struct d3dq_dispatch - The engine of a device, shared by its queues.
 *
 * One work item runs one bounded step of one queue's job at a time and
 * queues itself again while work is ready; which queue comes next is
 * decided by priority, then round the clients, then round each client's
 * queues (d3dq_engine.c).
 */
struct d3dq_dispatch {
	spinlock_t lock;		/* irq-safe: the DELAY timer takes it */
	struct list_head clients[D3DQ_NUM_PRIORITIES];
	/* Steps in a row each priority had work ready and no step. */
	unsigned int passed[D3DQ_NUM_PRIORITIES];
	bool busy;			/* a step is running */
	/* The running step ended its client's last ready job. */
	bool client_done;
	bool paused;			/* @pause is armed: no work queued */
	struct work_struct work;
	struct hrtimer pause;		/* the next step, after client_done */
	struct workqueue_struct *wq;
};

/**
 * struct d3dq_engine - A queue's place on its device's engine.
 *
 * @job is protected by &d3dq_queue.lock, @ready by &d3dq_dispatch.lock.
 * The queue is on a ready list only while it has a running job (which
 * holds the queue), so the engine needs no reference of its own.
 */
struct d3dq_engine {
	struct d3dq_job *job;		/* running job, or NULL */
	struct list_head ready;		/* in &d3dq_engine_client.queues */
	u32 priority;
	struct d3dq_engine_client *client;
	struct d3dq_dispatch *dispatch;
	struct hrtimer timer;		/* end of a DELAY command */
	/* Times a job the scheduler no longer watches (d3dq_job.c). */
	struct delayed_work watchdog;
	u64 fence_context;
	u64 seqno;
};

void d3dq_dispatch_init(struct d3dq_dispatch *dispatch,
			struct workqueue_struct *wq);
void d3dq_dispatch_fini(struct d3dq_dispatch *dispatch);
void d3dq_engine_client_init(struct d3dq_engine_client *client);
void d3dq_engine_init(struct d3dq_queue *queue, u32 priority,
		      struct d3dq_engine_client *client);
void d3dq_engine_fini(struct d3dq_queue *queue);
struct dma_fence *d3dq_engine_run(struct d3dq_queue *queue,
				  struct d3dq_job *job);
bool d3dq_engine_claim_direct(struct d3dq_queue *queue, struct d3dq_job *job);
void d3dq_engine_run_claimed(struct d3dq_queue *queue, struct d3dq_job *job);
bool d3dq_engine_claim_early(struct d3dq_queue *queue, struct d3dq_job *job);
void d3dq_engine_start_early(struct d3dq_queue *queue,
			     const struct d3dq_job *job);
bool d3dq_engine_cancel(struct d3dq_queue *queue, struct d3dq_job *job,
			int err);
void d3dq_engine_kick(struct d3dq_queue *queue);
struct d3dq_hw_fence *d3dq_hw_fence_alloc(struct d3dq_sched *sched);
bool d3dq_is_hw_fence(const struct dma_fence *fence);
void d3dq_hw_fence_put(struct d3dq_hw_fence *hw);

#endif /* _D3DQ_ENGINE_H_ */
