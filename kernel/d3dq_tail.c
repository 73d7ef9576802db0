// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq signals on the last job (uapi 1.8): the signals of a
 * DRM_D3DQ_SUBMIT_TAIL submit, set in the call or given to the queue's
 * last job, which sets them when it ends. See "Signals on the last job"
 * in Documentation/driver.rst.
 *
 * Copyright (C) 2026 The d3dq authors
 */

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include <drm/d3dq_drm.h>

#include "d3dq_device.h"
#include "d3dq_fence.h"
#include "d3dq_job.h"
#include "d3dq_queue.h"
#include "d3dq_submit.h"

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

/* Whether any of @signals is a syncobj's, resolved to be published. */
static bool d3dq_signals_any(const struct d3dq_signal *signals, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (signals[i].syncobj)
			return true;
	return false;
}

/*
 * A heap copy of @tail, on the caller's stack, whose fence signals are
 * resolved and not armed (in no tree, bound to nothing): it takes over
 * what they hold, and @tail is left empty. NULL without memory.
 */
static struct d3dq_tail *d3dq_tail_move(struct d3dq_tail *tail)
{
	struct d3dq_tail *heap;
	u32 i;

	heap = kmemdup(tail, sizeof(*tail), D3DQ_GFP);
	if (!heap)
		return NULL;
	INIT_LIST_HEAD(&heap->link);
	if (tail->fsignals == tail->inline_fs)
		heap->fsignals = heap->inline_fs;
	for (i = 0; i < heap->nfsignals; i++) {
		RB_CLEAR_NODE(&heap->fsignals[i].rb);
		INIT_LIST_HEAD(&heap->fsignals[i].bound);
	}
	tail->fsignals = tail->inline_fs;
	tail->nfsignals = 0;
	return heap;
}

/*
 * A %DRM_D3DQ_SUBMIT_TAIL submit (see "Signals on the last job"): its
 * signals set in the call, or given to the queue's last job. Return: 0,
 * a negative error, or 1 when it must make a job as any submit.
 *
 * The signals are copied and resolved on the stack up to
 * %D3DQ_TAIL_INLINE of them, so that a submit whose signals are set in
 * the call allocates nothing but the timeline points it publishes; a
 * tail the last job takes is copied to the heap then. Signals with
 * %DRM_D3DQ_SYNC_JOB_ONLY or %DRM_D3DQ_SYNC_ARMED_ONLY stay unresolved
 * here: if a job must be made, SUBMIT resolves every signal again for it.
 */
int d3dq_submit_tail(struct drm_file *file, struct d3dq_queue *queue,
		     struct drm_d3dq_submit *args)
{
	struct drm_d3dq_sync isyncs[D3DQ_TAIL_INLINE], *syncs = isyncs;
	struct d3dq_signal isignals[D3DQ_TAIL_INLINE] = { 0 };
	struct d3dq_signal *signals = isignals;
	struct d3dq_file *dfile = queue->dfile;
	u32 i, n = args->signals.count;
	struct d3dq_tail tail, *heap;
	struct d3dq_job *last = NULL;
	struct dma_fence *fence;
	int ret, status;

	memset(&tail, 0, sizeof(tail));
	INIT_LIST_HEAD(&tail.link);
	tail.fsignals = tail.inline_fs;
	if (n > D3DQ_TAIL_INLINE) {
		syncs = kvmalloc_array(n, sizeof(*syncs), D3DQ_GFP);
		signals = kvcalloc(n, sizeof(*signals), D3DQ_GFP);
		tail.fsignals = kvcalloc(n, sizeof(*tail.fsignals), D3DQ_GFP);
		ret = -ENOMEM;
		if (!syncs || !signals || !tail.fsignals)
			goto out;
	}
	ret = d3dq_copy_syncs_into(&args->signals, syncs);
	if (!ret)
		ret = d3dq_resolve_signals(file, syncs, n, signals,
					   tail.fsignals, &tail.nfsignals,
					   true);
	if (ret)
		goto out;
	tail.bytes = sizeof(tail);
	if (tail.fsignals != tail.inline_fs)
		tail.bytes += (u64)n * sizeof(*tail.fsignals);

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
		for (i = 0; i < tail.nfsignals; i++)
			d3dq_fence_qsignal_end(&tail.fsignals[i], true);
		/* Syncobj points, if any resolved, get a signalled fence. */
		if (d3dq_signals_any(signals, n)) {
			fence = queue->last ? dma_fence_get(queue->last) :
			       dma_fence_get_stub();
			d3dq_signals_publish(signals, n, fence);
			dma_fence_put(fence);
		}
		args->out_flags |= DRM_D3DQ_SUBMIT_DONE;
		ret = 0;
		goto unlock;
	}

	spin_lock(&queue->lock);
	if (queue->tail_job && queue->tail_job->ntails < D3DQ_TAIL_MAX)
		last = queue->tail_job;
	spin_unlock(&queue->lock);
	if (!last || !d3dq_file_charge_bytes(dfile, tail.bytes))
		goto unlock;
	heap = d3dq_tail_move(&tail);
	if (!heap) {
		d3dq_file_uncharge_bytes(dfile, tail.bytes);
		ret = -ENOMEM;
		goto unlock;
	}
	if (!d3dq_tail_attach(queue, last, heap)) {
		d3dq_file_uncharge_bytes(dfile, heap->bytes);
		d3dq_tail_free(heap);
	}
	/* After the values, should the job have ended meanwhile (R17). */
	d3dq_signals_publish(signals, n, queue->last);
	ret = 0;
unlock:
	mutex_unlock(&queue->submit_lock);
out:
	if (signals)
		d3dq_drop_signals(signals, n);
	if (signals != isignals)
		kvfree(signals);
	if (syncs != isyncs)
		kvfree(syncs);
	d3dq_tail_drop(&tail);
	return ret;
}
