// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: ID3D12CommandQueue on a libd3dq queue.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Wait, Signal and ExecuteCommandLists are libd3dq's: they return at once,
 * the queue's work runs in call order, and a Wait may come before any
 * Signal of its value exists.
 */
#include <errno.h>
#include <stdlib.h>

#include "private.h"

struct d3d12_queue {
	ID3D12CommandQueue iface;
	struct child c;
	D3D12_COMMAND_QUEUE_DESC desc;
	struct d3dq_queue *q;
};

static const ID3D12CommandQueueVtbl queue_vtbl;

static struct d3d12_queue *impl(ID3D12CommandQueue *iface)
{
	return container_of(iface, struct d3d12_queue, iface);
}

/*
 * The last Release lets the work already handed to the driver finish and
 * drops work still held back behind waits (d3dq_queue_destroy(3)).
 */
static void queue_fini(struct child *c)
{
	d3dq_queue_destroy(container_of(c, struct d3d12_queue, c)->q);
}

static const struct child_class queue_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
		  &IID_ID3D12CommandQueue },
	.offset = offsetof(struct d3d12_queue, c),
	.fini = queue_fini,
};

DEFINE_CHILD_METHODS(queue, ID3D12CommandQueue, impl)

/* No resource is tiled, so there are no tile mappings to change. */
static void STDMETHODCALLTYPE
queue_UpdateTileMappings(ID3D12CommandQueue *iface, ID3D12Resource *resource,
			 UINT region_count,
			 const D3D12_TILED_RESOURCE_COORDINATE *region_starts,
			 const D3D12_TILE_REGION_SIZE *region_sizes,
			 ID3D12Heap *heap, UINT range_count,
			 const D3D12_TILE_RANGE_FLAGS *range_flags,
			 const UINT *heap_range_starts,
			 const UINT *range_tile_counts,
			 D3D12_TILE_MAPPING_FLAGS flags)
{
}

static void STDMETHODCALLTYPE
queue_CopyTileMappings(ID3D12CommandQueue *iface, ID3D12Resource *dst,
		       const D3D12_TILED_RESOURCE_COORDINATE *dst_start,
		       ID3D12Resource *src,
		       const D3D12_TILED_RESOURCE_COORDINATE *src_start,
		       const D3D12_TILE_REGION_SIZE *size,
		       D3D12_TILE_MAPPING_FLAGS flags)
{
}

/*
 * ExecuteCommandLists returns nothing, so whatever keeps the work from
 * running removes the device (rule R15), with the reason
 * GetDeviceRemovedReason then gives: a list still recording (or whose
 * Close failed; libd3dq removes the device itself, INVALID_CALL), a list
 * that is not one of this device's (INVALID_CALL), a list whose buffer was
 * destroyed (INVALID_CALL), no memory or a bound of the driver
 * (E_OUTOFMEMORY). The call is all or nothing (d3dq_queue_execute(3)):
 * work is never dropped, or half run, while later Signals complete. A
 * list whose type is not the queue's makes the call invalid: it is
 * refused whole and the device stays.
 */
static void STDMETHODCALLTYPE
queue_ExecuteCommandLists(ID3D12CommandQueue *iface, UINT count,
			  ID3D12CommandList *const *lists)
{
	struct d3d12_queue *q = impl(iface);
	struct d3dq_cmdlist *stack[16], **ls = stack;
	int ret = 0;
	UINT i;

	if (!count)
		return;
	if (!lists) {
		device_remove(q->c.device, -EINVAL);
		return;
	}
	if (count > sizeof(stack) / sizeof(stack[0])) {
		ls = calloc(count, sizeof(*ls));
		if (!ls) {
			device_remove(q->c.device, -ENOMEM);
			return;
		}
	}
	for (i = 0; i < count && !ret; i++) {
		struct d3d12_list *l = list_from(lists[i]);

		if (!l || l->c.device != q->c.device)
			ret = -EINVAL;
		else if (l->type != q->desc.Type)
			ret = 1;
		else
			ls[i] = l->l;
	}
	/*
	 * A list of another type than the queue's: the call is invalid
	 * (Windows' debug layer reports it); refused whole, nothing of it
	 * runs and the device stays.
	 */
	if (!ret)
		ret = d3dq_queue_execute(q->q, ls, count);
	if (ret < 0)
		device_remove(q->c.device, ret);
	if (ls != stack)
		free(ls);
}

/* PIX markers: nothing records them. */
static void STDMETHODCALLTYPE queue_SetMarker(ID3D12CommandQueue *iface,
					      UINT metadata, const void *data,
					      UINT size)
{
}

static void STDMETHODCALLTYPE queue_BeginEvent(ID3D12CommandQueue *iface,
					       UINT metadata, const void *data,
					       UINT size)
{
}

static void STDMETHODCALLTYPE queue_EndEvent(ID3D12CommandQueue *iface)
{
}

static HRESULT STDMETHODCALLTYPE queue_Signal(ID3D12CommandQueue *iface,
					      ID3D12Fence *fence, UINT64 value)
{
	struct d3d12_queue *q = impl(iface);
	struct d3d12_fence *f = fence_from(fence);

	if (!f || f->c.device != q->c.device)
		return E_INVALIDARG;
	return hr_from_errno(q->c.device, d3dq_queue_signal(q->q, f->f, value));
}

static HRESULT STDMETHODCALLTYPE queue_Wait(ID3D12CommandQueue *iface,
					    ID3D12Fence *fence, UINT64 value)
{
	struct d3d12_queue *q = impl(iface);
	struct d3d12_fence *f = fence_from(fence);

	if (!f || f->c.device != q->c.device)
		return E_INVALIDARG;
	return hr_from_errno(q->c.device, d3dq_queue_wait(q->q, f->f, value));
}

static HRESULT STDMETHODCALLTYPE
queue_GetTimestampFrequency(ID3D12CommandQueue *iface, UINT64 *frequency)
{
	struct d3d12_queue *q = impl(iface);
	uint64_t hz;
	int ret;

	if (!frequency)
		return E_INVALIDARG;
	ret = d3dq_device_get_timestamp_frequency(q->c.device->dev, &hz);
	if (ret)
		return hr_from_errno(q->c.device, ret);
	*frequency = hz;
	return S_OK;
}

/* The CPU timestamp is CLOCK_MONOTONIC in nanoseconds. */
static HRESULT STDMETHODCALLTYPE
queue_GetClockCalibration(ID3D12CommandQueue *iface, UINT64 *gpu, UINT64 *cpu)
{
	struct d3d12_queue *q = impl(iface);
	uint64_t g, c;
	int ret;

	if (!gpu || !cpu)
		return E_INVALIDARG;
	ret = d3dq_device_get_clock_calibration(q->c.device->dev, &g, &c);
	if (ret)
		return hr_from_errno(q->c.device, ret);
	*gpu = g;
	*cpu = c;
	return S_OK;
}

static D3D12_COMMAND_QUEUE_DESC STDMETHODCALLTYPE
queue_GetDesc(ID3D12CommandQueue *iface)
{
	return impl(iface)->desc;
}

static const ID3D12CommandQueueVtbl queue_vtbl = {
	CHILD_VTBL(queue),
	.UpdateTileMappings = queue_UpdateTileMappings,
	.CopyTileMappings = queue_CopyTileMappings,
	.ExecuteCommandLists = queue_ExecuteCommandLists,
	.SetMarker = queue_SetMarker,
	.BeginEvent = queue_BeginEvent,
	.EndEvent = queue_EndEvent,
	.Signal = queue_Signal,
	.Wait = queue_Wait,
	.GetTimestampFrequency = queue_GetTimestampFrequency,
	.GetClockCalibration = queue_GetClockCalibration,
	.GetDesc = queue_GetDesc,
};

HRESULT queue_create(struct d3d12_device *d,
		     const D3D12_COMMAND_QUEUE_DESC *desc, REFIID riid,
		     void **out)
{
	struct d3dq_queue_desc qdesc = D3DQ_QUEUE_DESC_INIT;
	struct d3d12_queue *q;
	HRESULT hr;
	int ret;

	if (!out)
		return E_INVALIDARG;
	*out = NULL;
	if (!desc || !riid)
		return E_INVALIDARG;
	hr = list_type_check(desc->Type, false);
	if (FAILED(hr))
		return hr;
	/*
	 * DISABLE_GPU_TIMEOUT is accepted, but the driver's job timeout
	 * (a module parameter) still applies.
	 */
	if (desc->Flags & ~D3D12_COMMAND_QUEUE_FLAG_DISABLE_GPU_TIMEOUT)
		return E_INVALIDARG;

	/* libd3dq's types and priorities have D3D12's numbers. */
	qdesc.type = desc->Type;
	qdesc.priority = desc->Priority;
	qdesc.node_mask = desc->NodeMask;

	q = calloc(1, sizeof(*q));
	if (!q)
		return E_OUTOFMEMORY;
	ret = d3dq_queue_create(d->dev, &qdesc, &q->q);
	if (ret) {
		free(q);
		return hr_from_errno(d, ret);
	}
	SET_VTBL(&q->iface, &queue_vtbl);
	child_init(&q->c, &queue_class, d);
	q->desc = *desc;
	/* The one node: 0 means node 0, and GetDesc says which (1). */
	q->desc.NodeMask = 1;
	return child_hand_out(&q->c, riid, out);
}
