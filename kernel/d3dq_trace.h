/* SPDX-License-Identifier: GPL-2.0 */
/*
 * d3dq tracepoints (TRACE_SYSTEM d3dq), documented in driver.rst.
 *
 * Every event names the client (drm-client-id, as in fdinfo), the queue
 * (its id in that client) and, for job events, the job's number in its
 * queue (d3dq_job_seqno(): the jobs submitted to the queue, counted from
 * 1). That is not the seqno of the job's scheduler fence (the "id" of the
 * gpu_scheduler events), which counts only the jobs the scheduler ran: a
 * job run inside SUBMIT has d3dq events and no gpu_scheduler ones.
 * queue_create also names the queue's scheduler, whose name is the "ring"
 * of the gpu_scheduler events.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM d3dq

#if !defined(_D3DQ_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _D3DQ_TRACE_H_

#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/types.h>

#include "d3dq_queue.h"		/* D3DQ_SCHED_NAME_LEN */

TRACE_EVENT(d3dq_queue_create,
	    TP_PROTO(u64 client, u32 queue, u32 type, u32 priority,
		     const char *sched),
	    TP_ARGS(client, queue, type, priority, sched),
	    TP_STRUCT__entry(__field(u64, client)
			     __field(u32, queue)
			     __field(u32, type)
			     __field(u32, priority)
			     __array(char, sched, D3DQ_SCHED_NAME_LEN)),
	    TP_fast_assign(__entry->client = client;
			   __entry->queue = queue;
			   __entry->type = type;
			   __entry->priority = priority;
			   strscpy(__entry->sched, sched, sizeof(__entry->sched));),
	    TP_printk("client=%llu queue=%u type=%u priority=%u sched=%s",
		      __entry->client, __entry->queue, __entry->type,
		      __entry->priority, __entry->sched)
);

/* The queue is destroyed (reason -ECANCELED) or removed (-ENODEV). */
TRACE_EVENT(d3dq_queue_stop,
	    TP_PROTO(u64 client, u32 queue, int reason),
	    TP_ARGS(client, queue, reason),
	    TP_STRUCT__entry(__field(u64, client)
			     __field(u32, queue)
			     __field(int, reason)),
	    TP_fast_assign(__entry->client = client;
			   __entry->queue = queue;
			   __entry->reason = reason;),
	    TP_printk("client=%llu queue=%u reason=%d", __entry->client,
		      __entry->queue, __entry->reason)
);

/* DRM_IOCTL_D3DQ_REMOVE: every queue of the client is lost. */
TRACE_EVENT(d3dq_removal,
	    TP_PROTO(u64 client, u32 queues),
	    TP_ARGS(client, queues),
	    TP_STRUCT__entry(__field(u64, client)
			     __field(u32, queues)),
	    TP_fast_assign(__entry->client = client;
			   __entry->queues = queues;),
	    TP_printk("client=%llu queues=%u", __entry->client,
		      __entry->queues)
);

TRACE_EVENT(d3dq_submit,
	    TP_PROTO(u64 client, u32 queue, u64 job, u32 waits, u32 signals,
		     u32 cmds),
	    TP_ARGS(client, queue, job, waits, signals, cmds),
	    TP_STRUCT__entry(__field(u64, client)
			     __field(u64, job)
			     __field(u32, queue)
			     __field(u32, waits)
			     __field(u32, signals)
			     __field(u32, cmds)),
	    TP_fast_assign(__entry->client = client;
			   __entry->job = job;
			   __entry->queue = queue;
			   __entry->waits = waits;
			   __entry->signals = signals;
			   __entry->cmds = cmds;),
	    TP_printk("client=%llu queue=%u job=%llu waits=%u signals=%u cmds=%u",
		      __entry->client, __entry->queue, __entry->job,
		      __entry->waits, __entry->signals, __entry->cmds)
);

/* One per wait or signal element of a submitted job, after d3dq_submit. */
DECLARE_EVENT_CLASS(d3dq_point,
		    TP_PROTO(u64 client, u32 queue, u64 job, u32 handle,
			     u64 point),
		    TP_ARGS(client, queue, job, handle, point),
		    TP_STRUCT__entry(__field(u64, client)
				     __field(u64, job)
				     __field(u64, point)
				     __field(u32, queue)
				     __field(u32, handle)),
		    TP_fast_assign(__entry->client = client;
				   __entry->job = job;
				   __entry->point = point;
				   __entry->queue = queue;
				   __entry->handle = handle;),
		    TP_printk("client=%llu queue=%u job=%llu syncobj=%u point=%llu",
			      __entry->client, __entry->queue, __entry->job,
			      __entry->handle, __entry->point)
);

DEFINE_EVENT(d3dq_point, d3dq_wait,
	     TP_PROTO(u64 client, u32 queue, u64 job, u32 handle, u64 point),
	     TP_ARGS(client, queue, job, handle, point)
);

DEFINE_EVENT(d3dq_point, d3dq_signal,
	     TP_PROTO(u64 client, u32 queue, u64 job, u32 handle, u64 point),
	     TP_ARGS(client, queue, job, handle, point)
);

DECLARE_EVENT_CLASS(d3dq_job_event,
		    TP_PROTO(u64 client, u32 queue, u64 job, int error),
		    TP_ARGS(client, queue, job, error),
		    TP_STRUCT__entry(__field(u64, client)
				     __field(u64, job)
				     __field(u32, queue)
				     __field(int, error)),
		    TP_fast_assign(__entry->client = client;
				   __entry->job = job;
				   __entry->queue = queue;
				   __entry->error = error;),
		    TP_printk("client=%llu queue=%u job=%llu error=%d",
			      __entry->client, __entry->queue, __entry->job,
			      __entry->error)
);

/* The engine starts the job's commands (error is 0). */
DEFINE_EVENT(d3dq_job_event, d3dq_run,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

/* SUBMIT holds the job (uapi 1.5): not armed yet (error is 0). */
DEFINE_EVENT(d3dq_job_event, d3dq_hold,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

/* The arming work arms a held job and publishes it (error is 0). */
DEFINE_EVENT(d3dq_job_event, d3dq_arm,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

/* The job's fences signal, with error 0 or why it stopped. */
DEFINE_EVENT(d3dq_job_event, d3dq_done,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

/* The scheduler's timeout hit the running job (error -ETIMEDOUT). */
DEFINE_EVENT(d3dq_job_event, d3dq_timeout,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

/* A job is stopped (running) or will not run (queued), with this error. */
DEFINE_EVENT(d3dq_job_event, d3dq_cancel,
	     TP_PROTO(u64 client, u32 queue, u64 job, int error),
	     TP_ARGS(client, queue, job, error)
);

#endif /* _D3DQ_TRACE_H_ */

/* This part must be outside the multi-read protection. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE d3dq_trace
#include <trace/define_trace.h>
