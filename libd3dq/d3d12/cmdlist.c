// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: ID3D12GraphicsCommandList2 on a libd3dq command list.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The engine copies buffers, writes values and timestamps, in order; there
 * are no shaders. So a list records copies (CopyBufferRegion,
 * CopyResource), immediate writes (WriteBufferImmediate, as a copy from
 * the allocator's memory), timestamps (EndQuery, ResolveQueryData);
 * barriers, markers and discards are accepted and change nothing. Every
 * other method is void in D3D12 and cannot return E_NOTIMPL: it marks the
 * list, Close then returns E_NOTIMPL, and the libd3dq list stays
 * unclosed, so that executing it removes the device (D3D12 does the same
 * with a list whose Close failed). An invalid argument does the same with
 * E_INVALIDARG.
 */
#include <errno.h>
#include <stdlib.h>

#include "private.h"

static const ID3D12GraphicsCommandList2Vtbl list_vtbl;

static struct d3d12_list *impl(ID3D12GraphicsCommandList2 *iface)
{
	return container_of(iface, struct d3d12_list, iface);
}

struct d3d12_list *list_from(ID3D12CommandList *iface)
{
	if (!iface ||
	    iface->lpVtbl != (const ID3D12CommandListVtbl *)&list_vtbl)
		return NULL;
	return impl((ID3D12GraphicsCommandList2 *)iface);
}

/* Remember the first error of the recording. Called with l->lock held. */
static void fail_locked(struct d3d12_list *l, HRESULT hr)
{
	if (SUCCEEDED(l->error))
		l->error = hr;
}

static void fail(struct d3d12_list *l, HRESULT hr)
{
	if (device_inherited(l->c.device))
		return;
	pthread_mutex_lock(&l->lock);
	if (l->recording)
		fail_locked(l, hr);
	pthread_mutex_unlock(&l->lock);
}

/* A libd3dq recording error (it remembers it too). */
static void check_locked(struct d3d12_list *l, int ret)
{
	if (ret)
		fail_locked(l, ret == -ENOMEM ? E_OUTOFMEMORY :
			    ret == -ENODEV ? DXGI_ERROR_DEVICE_REMOVED :
			    E_INVALIDARG);
}

/*
 * Lock a list for recording: false (unlocked) if it is not recording;
 * recording into a closed list is ignored, as the D3D12 runtime does
 * without its debug layer, and so is recording into a parent's list in a
 * child of fork() (its lock may be held by a thread the child does not
 * have).
 */
static bool record_begin(struct d3d12_list *l)
{
	if (device_inherited(l->c.device))
		return false;
	pthread_mutex_lock(&l->lock);
	if (l->recording)
		return true;
	pthread_mutex_unlock(&l->lock);
	return false;
}

static void record_end(struct d3d12_list *l)
{
	pthread_mutex_unlock(&l->lock);
}

/* A resource of the list's device, or NULL. */
static struct d3d12_resource *resource_of(struct d3d12_list *l,
					  ID3D12Resource *iface)
{
	struct d3d12_resource *r = resource_from(iface);

	return r && r->c.device == l->c.device ? r : NULL;
}

static struct d3d12_query_heap *query_heap_of(struct d3d12_list *l,
					      ID3D12QueryHeap *iface)
{
	struct d3d12_query_heap *h = query_heap_from(iface);

	return h && h->c.device == l->c.device ? h : NULL;
}

/* --- IUnknown, ID3D12Object, ID3D12DeviceChild ------------------------------ */

static void list_fini(struct child *c)
{
	struct d3d12_list *l = container_of(c, struct d3d12_list, c);
	bool inherited = device_inherited(c->device);

	if (l->allocator) {
		if (!inherited)
			allocator_detach(l->allocator, l);
		ID3D12CommandAllocator_Release(&l->allocator->iface);
	}
	d3dq_cmdlist_destroy(l->l);
	if (!inherited)
		pthread_mutex_destroy(&l->lock);
}

static const struct child_class list_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12CommandList,
		  &IID_ID3D12GraphicsCommandList,
		  &IID_ID3D12GraphicsCommandList1,
		  &IID_ID3D12GraphicsCommandList2 },
	.offset = offsetof(struct d3d12_list, c),
	.fini = list_fini,
};

DEFINE_CHILD_METHODS(list, ID3D12GraphicsCommandList2, impl)

static D3D12_COMMAND_LIST_TYPE STDMETHODCALLTYPE
list_GetType(ID3D12GraphicsCommandList2 *iface)
{
	return impl(iface)->type;
}

/* --- Recording state ----------------------------------------------------------- */

/* Called with l->lock held. */
static void detach_locked(struct d3d12_list *l)
{
	struct d3d12_allocator *a = l->allocator;

	l->allocator = NULL;
	if (a) {
		allocator_detach(a, l);
		ID3D12CommandAllocator_Release(&a->iface);
	}
}

/*
 * E_FAIL if the list is not recording; the first recording error
 * otherwise (E_NOTIMPL: a method this layer does not implement was
 * called), in which case the list cannot be executed.
 */
static HRESULT STDMETHODCALLTYPE list_Close(ID3D12GraphicsCommandList2 *iface)
{
	struct d3d12_list *l = impl(iface);
	HRESULT hr;
	int ret;

	if (device_inherited(l->c.device))
		return DXGI_ERROR_DEVICE_REMOVED;
	pthread_mutex_lock(&l->lock);
	if (!l->recording) {
		pthread_mutex_unlock(&l->lock);
		return E_FAIL;
	}
	l->recording = false;
	detach_locked(l);
	hr = l->error;
	if (SUCCEEDED(hr)) {
		ret = d3dq_cmdlist_close(l->l);
		hr = ret == -ENOMEM ? E_OUTOFMEMORY :
		     ret == -ENODEV ? DXGI_ERROR_DEVICE_REMOVED :
		     ret ? E_INVALIDARG : S_OK;
	}
	pthread_mutex_unlock(&l->lock);
	return hr;
}

static HRESULT attach(struct d3d12_list *l, ID3D12CommandAllocator *iface)
{
	struct d3d12_allocator *a = allocator_from(iface);
	HRESULT hr;

	if (!a || a->c.device != l->c.device || a->type != l->type)
		return E_INVALIDARG;
	hr = allocator_attach(a, l);
	if (FAILED(hr))
		return hr;
	ID3D12CommandAllocator_AddRef(&a->iface);
	l->allocator = a;
	return S_OK;
}

/* E_FAIL unless the list is closed; E_INVALIDARG for a busy allocator. */
static HRESULT STDMETHODCALLTYPE list_Reset(ID3D12GraphicsCommandList2 *iface,
					    ID3D12CommandAllocator *allocator,
					    ID3D12PipelineState *initial_state)
{
	struct d3d12_list *l = impl(iface);
	HRESULT hr;

	if (initial_state)
		return E_INVALIDARG;
	if (device_inherited(l->c.device))
		return DXGI_ERROR_DEVICE_REMOVED;
	pthread_mutex_lock(&l->lock);
	if (l->recording) {
		hr = E_FAIL;
		goto out;
	}
	hr = attach(l, allocator);
	if (FAILED(hr))
		goto out;
	d3dq_cmdlist_reset(l->l);
	l->error = S_OK;
	l->recording = true;
out:
	pthread_mutex_unlock(&l->lock);
	return hr;
}

/* --- Commands the engine runs --------------------------------------------------- */

static void STDMETHODCALLTYPE
list_CopyBufferRegion(ID3D12GraphicsCommandList2 *iface, ID3D12Resource *dst,
		      UINT64 dst_offset, ID3D12Resource *src, UINT64 src_offset,
		      UINT64 size)
{
	struct d3d12_list *l = impl(iface);
	struct d3d12_resource *d = resource_of(l, dst);
	struct d3d12_resource *s = resource_of(l, src);

	if (!record_begin(l))
		return;
	if (!d || !s)
		fail_locked(l, E_INVALIDARG);
	else
		check_locked(l, d3dq_cmdlist_copy(l->l, d->buf, dst_offset,
						  s->buf, src_offset, size));
	record_end(l);
}

static void STDMETHODCALLTYPE
list_CopyResource(ID3D12GraphicsCommandList2 *iface, ID3D12Resource *dst,
		  ID3D12Resource *src)
{
	struct d3d12_list *l = impl(iface);
	struct d3d12_resource *d = resource_of(l, dst);
	struct d3d12_resource *s = resource_of(l, src);

	if (!record_begin(l))
		return;
	if (!d || !s || d == s || d->desc.Width != s->desc.Width)
		fail_locked(l, E_INVALIDARG);
	else
		check_locked(l, d3dq_cmdlist_copy(l->l, d->buf, 0, s->buf, 0,
						  s->desc.Width));
	record_end(l);
}

/*
 * Each value is staged in the allocator's memory and copied to its
 * address: the engine has no 32-bit store. The modes only order the write
 * against other work, and the engine runs everything in order.
 */
static void STDMETHODCALLTYPE
list_WriteBufferImmediate(ID3D12GraphicsCommandList2 *iface, UINT count,
			  const D3D12_WRITEBUFFERIMMEDIATE_PARAMETER *params,
			  const D3D12_WRITEBUFFERIMMEDIATE_MODE *modes)
{
	struct d3d12_list *l = impl(iface);
	UINT i;

	if (!record_begin(l))
		return;
	if (count && !params)
		fail_locked(l, E_INVALIDARG);
	for (i = 0; i < count && params && SUCCEEDED(l->error); i++) {
		D3D12_WRITEBUFFERIMMEDIATE_MODE mode =
			modes ? modes[i] : D3D12_WRITEBUFFERIMMEDIATE_MODE_DEFAULT;
		UINT32 value = params[i].Value;
		struct d3d12_resource *r;
		struct d3dq_buffer *sbuf;
		uint64_t off, soff;
		int ret;

		if (mode > D3D12_WRITEBUFFERIMMEDIATE_MODE_MARKER_OUT ||
		    params[i].Dest % 4) {
			fail_locked(l, E_INVALIDARG);
			break;
		}
		r = device_find_va(l->c.device, params[i].Dest, 4, &off);
		if (!r) {
			fail_locked(l, E_INVALIDARG);
			break;
		}
		ret = allocator_stage(l->allocator, &value, sizeof(value),
				      &sbuf, &soff);
		if (!ret)
			ret = d3dq_cmdlist_copy(l->l, r->buf, off, sbuf, soff,
						sizeof(value));
		check_locked(l, ret);
		ID3D12Resource_Release(&r->iface);
	}
	record_end(l);
}

/* Copy lists take COPY_QUEUE_TIMESTAMP heaps, the others TIMESTAMP heaps. */
static bool heap_fits(struct d3d12_list *l, struct d3d12_query_heap *h)
{
	return h->desc.Type == (l->type == D3D12_COMMAND_LIST_TYPE_COPY ?
				D3D12_QUERY_HEAP_TYPE_COPY_QUEUE_TIMESTAMP :
				D3D12_QUERY_HEAP_TYPE_TIMESTAMP);
}

/* Timestamps have no Begin; no other query type exists here. */
static void STDMETHODCALLTYPE list_BeginQuery(ID3D12GraphicsCommandList2 *iface,
					      ID3D12QueryHeap *heap,
					      D3D12_QUERY_TYPE type, UINT index)
{
	fail(impl(iface), type == D3D12_QUERY_TYPE_TIMESTAMP ? E_INVALIDARG :
			  E_NOTIMPL);
}

static void STDMETHODCALLTYPE list_EndQuery(ID3D12GraphicsCommandList2 *iface,
					    ID3D12QueryHeap *heap,
					    D3D12_QUERY_TYPE type, UINT index)
{
	struct d3d12_list *l = impl(iface);
	struct d3d12_query_heap *h = query_heap_of(l, heap);

	if (!record_begin(l))
		return;
	if (type != D3D12_QUERY_TYPE_TIMESTAMP)
		fail_locked(l, E_NOTIMPL);
	else if (!h || !heap_fits(l, h) || index >= h->desc.Count)
		fail_locked(l, E_INVALIDARG);
	else
		check_locked(l, d3dq_cmdlist_timestamp(l->l, h->buf,
						       (uint64_t)index * 8));
	record_end(l);
}

static void STDMETHODCALLTYPE
list_ResolveQueryData(ID3D12GraphicsCommandList2 *iface, ID3D12QueryHeap *heap,
		      D3D12_QUERY_TYPE type, UINT start, UINT count,
		      ID3D12Resource *dst, UINT64 dst_offset)
{
	struct d3d12_list *l = impl(iface);
	struct d3d12_query_heap *h = query_heap_of(l, heap);
	struct d3d12_resource *d = resource_of(l, dst);

	if (!record_begin(l))
		return;
	if (type != D3D12_QUERY_TYPE_TIMESTAMP)
		fail_locked(l, E_NOTIMPL);
	else if (!h || !d || !heap_fits(l, h) || start > h->desc.Count ||
		 count > h->desc.Count - start || dst_offset % 8)
		fail_locked(l, E_INVALIDARG);
	else if (count)
		check_locked(l, d3dq_cmdlist_copy(l->l, d->buf, dst_offset,
						  h->buf, (uint64_t)start * 8,
						  (uint64_t)count * 8));
	record_end(l);
}

/* --- Accepted, changing nothing ---------------------------------------------- */

/* The engine runs a queue's commands in order and has no caches. */
static void STDMETHODCALLTYPE
list_ResourceBarrier(ID3D12GraphicsCommandList2 *iface, UINT count,
		     const D3D12_RESOURCE_BARRIER *barriers)
{
	if (count && !barriers)
		fail(impl(iface), E_INVALIDARG);
}

/* Contents become undefined: keeping them is one way to be undefined. */
static void STDMETHODCALLTYPE
list_DiscardResource(ID3D12GraphicsCommandList2 *iface,
		     ID3D12Resource *resource, const D3D12_DISCARD_REGION *region)
{
	struct d3d12_list *l = impl(iface);

	if (!resource_of(l, resource))
		fail(l, E_INVALIDARG);
}

/* There is no pipeline state to clear. */
static void STDMETHODCALLTYPE list_ClearState(ID3D12GraphicsCommandList2 *iface,
					      ID3D12PipelineState *state)
{
	if (state)
		fail(impl(iface), E_INVALIDARG);
}

/* SetPredication(NULL, ...) turns predication off, which it is. */
static void STDMETHODCALLTYPE
list_SetPredication(ID3D12GraphicsCommandList2 *iface, ID3D12Resource *buffer,
		    UINT64 offset, D3D12_PREDICATION_OP op)
{
	if (buffer)
		fail(impl(iface), E_NOTIMPL);
}

/* PIX markers: nothing records them. */
static void STDMETHODCALLTYPE list_SetMarker(ID3D12GraphicsCommandList2 *iface,
					     UINT metadata, const void *data,
					     UINT size)
{
}

static void STDMETHODCALLTYPE list_BeginEvent(ID3D12GraphicsCommandList2 *iface,
					      UINT metadata, const void *data,
					      UINT size)
{
}

static void STDMETHODCALLTYPE list_EndEvent(ID3D12GraphicsCommandList2 *iface)
{
}

/* --- Not implemented: drawing, dispatching, textures, root arguments --------- */

#define NOTIMPL(name, ...) \
	static void STDMETHODCALLTYPE \
	list_##name(ID3D12GraphicsCommandList2 *iface, __VA_ARGS__) \
	{ \
		fail(impl(iface), E_NOTIMPL); \
	}

NOTIMPL(DrawInstanced, UINT vertices, UINT instances, UINT first_vertex,
	UINT first_instance)
NOTIMPL(DrawIndexedInstanced, UINT indices, UINT instances, UINT first_index,
	INT base_vertex, UINT first_instance)
NOTIMPL(Dispatch, UINT x, UINT y, UINT z)
NOTIMPL(CopyTextureRegion, const D3D12_TEXTURE_COPY_LOCATION *dst, UINT x,
	UINT y, UINT z, const D3D12_TEXTURE_COPY_LOCATION *src,
	const D3D12_BOX *box)
NOTIMPL(CopyTiles, ID3D12Resource *tiled,
	const D3D12_TILED_RESOURCE_COORDINATE *start,
	const D3D12_TILE_REGION_SIZE *size, ID3D12Resource *buffer,
	UINT64 offset, D3D12_TILE_COPY_FLAGS flags)
NOTIMPL(ResolveSubresource, ID3D12Resource *dst, UINT dst_sub,
	ID3D12Resource *src, UINT src_sub, DXGI_FORMAT format)
NOTIMPL(IASetPrimitiveTopology, D3D12_PRIMITIVE_TOPOLOGY topology)
NOTIMPL(RSSetViewports, UINT count, const D3D12_VIEWPORT *viewports)
NOTIMPL(RSSetScissorRects, UINT count, const D3D12_RECT *rects)
NOTIMPL(OMSetBlendFactor, const FLOAT factor[4])
NOTIMPL(OMSetStencilRef, UINT ref)
NOTIMPL(SetPipelineState, ID3D12PipelineState *state)
NOTIMPL(ExecuteBundle, ID3D12GraphicsCommandList *bundle)
NOTIMPL(SetDescriptorHeaps, UINT count, ID3D12DescriptorHeap *const *heaps)
NOTIMPL(SetComputeRootSignature, ID3D12RootSignature *signature)
NOTIMPL(SetGraphicsRootSignature, ID3D12RootSignature *signature)
NOTIMPL(SetComputeRootDescriptorTable, UINT index,
	D3D12_GPU_DESCRIPTOR_HANDLE base)
NOTIMPL(SetGraphicsRootDescriptorTable, UINT index,
	D3D12_GPU_DESCRIPTOR_HANDLE base)
NOTIMPL(SetComputeRoot32BitConstant, UINT index, UINT data, UINT offset)
NOTIMPL(SetGraphicsRoot32BitConstant, UINT index, UINT data, UINT offset)
NOTIMPL(SetComputeRoot32BitConstants, UINT index, UINT count,
	const void *data, UINT offset)
NOTIMPL(SetGraphicsRoot32BitConstants, UINT index, UINT count,
	const void *data, UINT offset)
NOTIMPL(SetComputeRootConstantBufferView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(SetGraphicsRootConstantBufferView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(SetComputeRootShaderResourceView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(SetGraphicsRootShaderResourceView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(SetComputeRootUnorderedAccessView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(SetGraphicsRootUnorderedAccessView, UINT index,
	D3D12_GPU_VIRTUAL_ADDRESS address)
NOTIMPL(IASetIndexBuffer, const D3D12_INDEX_BUFFER_VIEW *view)
NOTIMPL(IASetVertexBuffers, UINT slot, UINT count,
	const D3D12_VERTEX_BUFFER_VIEW *views)
NOTIMPL(SOSetTargets, UINT slot, UINT count,
	const D3D12_STREAM_OUTPUT_BUFFER_VIEW *views)
NOTIMPL(OMSetRenderTargets, UINT count,
	const D3D12_CPU_DESCRIPTOR_HANDLE *targets, BOOL single_range,
	const D3D12_CPU_DESCRIPTOR_HANDLE *depth_stencil)
NOTIMPL(ClearDepthStencilView, D3D12_CPU_DESCRIPTOR_HANDLE view,
	D3D12_CLEAR_FLAGS flags, FLOAT depth, UINT8 stencil, UINT count,
	const D3D12_RECT *rects)
NOTIMPL(ClearRenderTargetView, D3D12_CPU_DESCRIPTOR_HANDLE view,
	const FLOAT color[4], UINT count, const D3D12_RECT *rects)
NOTIMPL(ClearUnorderedAccessViewUint, D3D12_GPU_DESCRIPTOR_HANDLE gpu,
	D3D12_CPU_DESCRIPTOR_HANDLE cpu, ID3D12Resource *resource,
	const UINT values[4], UINT count, const D3D12_RECT *rects)
NOTIMPL(ClearUnorderedAccessViewFloat, D3D12_GPU_DESCRIPTOR_HANDLE gpu,
	D3D12_CPU_DESCRIPTOR_HANDLE cpu, ID3D12Resource *resource,
	const FLOAT values[4], UINT count, const D3D12_RECT *rects)
NOTIMPL(ExecuteIndirect, ID3D12CommandSignature *signature, UINT max_count,
	ID3D12Resource *args, UINT64 args_offset, ID3D12Resource *count,
	UINT64 count_offset)
NOTIMPL(AtomicCopyBufferUINT, ID3D12Resource *dst, UINT64 dst_offset,
	ID3D12Resource *src, UINT64 src_offset, UINT count,
	ID3D12Resource *const *resources,
	const D3D12_SUBRESOURCE_RANGE_UINT64 *ranges)
NOTIMPL(AtomicCopyBufferUINT64, ID3D12Resource *dst, UINT64 dst_offset,
	ID3D12Resource *src, UINT64 src_offset, UINT count,
	ID3D12Resource *const *resources,
	const D3D12_SUBRESOURCE_RANGE_UINT64 *ranges)
NOTIMPL(OMSetDepthBounds, FLOAT min, FLOAT max)
NOTIMPL(SetSamplePositions, UINT samples, UINT pixels,
	D3D12_SAMPLE_POSITION *positions)
NOTIMPL(ResolveSubresourceRegion, ID3D12Resource *dst, UINT dst_sub, UINT x,
	UINT y, ID3D12Resource *src, UINT src_sub, D3D12_RECT *rect,
	DXGI_FORMAT format, D3D12_RESOLVE_MODE mode)
NOTIMPL(SetViewInstanceMask, UINT mask)

static const ID3D12GraphicsCommandList2Vtbl list_vtbl = {
	/* IUnknown, ID3D12Object, ID3D12DeviceChild, ID3D12CommandList */
	CHILD_VTBL(list),
	.GetType = list_GetType,
	/* ID3D12GraphicsCommandList */
	.Close = list_Close,
	.Reset = list_Reset,
	.ClearState = list_ClearState,
	.DrawInstanced = list_DrawInstanced,
	.DrawIndexedInstanced = list_DrawIndexedInstanced,
	.Dispatch = list_Dispatch,
	.CopyBufferRegion = list_CopyBufferRegion,
	.CopyTextureRegion = list_CopyTextureRegion,
	.CopyResource = list_CopyResource,
	.CopyTiles = list_CopyTiles,
	.ResolveSubresource = list_ResolveSubresource,
	.IASetPrimitiveTopology = list_IASetPrimitiveTopology,
	.RSSetViewports = list_RSSetViewports,
	.RSSetScissorRects = list_RSSetScissorRects,
	.OMSetBlendFactor = list_OMSetBlendFactor,
	.OMSetStencilRef = list_OMSetStencilRef,
	.SetPipelineState = list_SetPipelineState,
	.ResourceBarrier = list_ResourceBarrier,
	.ExecuteBundle = list_ExecuteBundle,
	.SetDescriptorHeaps = list_SetDescriptorHeaps,
	.SetComputeRootSignature = list_SetComputeRootSignature,
	.SetGraphicsRootSignature = list_SetGraphicsRootSignature,
	.SetComputeRootDescriptorTable = list_SetComputeRootDescriptorTable,
	.SetGraphicsRootDescriptorTable = list_SetGraphicsRootDescriptorTable,
	.SetComputeRoot32BitConstant = list_SetComputeRoot32BitConstant,
	.SetGraphicsRoot32BitConstant = list_SetGraphicsRoot32BitConstant,
	.SetComputeRoot32BitConstants = list_SetComputeRoot32BitConstants,
	.SetGraphicsRoot32BitConstants = list_SetGraphicsRoot32BitConstants,
	.SetComputeRootConstantBufferView =
		list_SetComputeRootConstantBufferView,
	.SetGraphicsRootConstantBufferView =
		list_SetGraphicsRootConstantBufferView,
	.SetComputeRootShaderResourceView =
		list_SetComputeRootShaderResourceView,
	.SetGraphicsRootShaderResourceView =
		list_SetGraphicsRootShaderResourceView,
	.SetComputeRootUnorderedAccessView =
		list_SetComputeRootUnorderedAccessView,
	.SetGraphicsRootUnorderedAccessView =
		list_SetGraphicsRootUnorderedAccessView,
	.IASetIndexBuffer = list_IASetIndexBuffer,
	.IASetVertexBuffers = list_IASetVertexBuffers,
	.SOSetTargets = list_SOSetTargets,
	.OMSetRenderTargets = list_OMSetRenderTargets,
	.ClearDepthStencilView = list_ClearDepthStencilView,
	.ClearRenderTargetView = list_ClearRenderTargetView,
	.ClearUnorderedAccessViewUint = list_ClearUnorderedAccessViewUint,
	.ClearUnorderedAccessViewFloat = list_ClearUnorderedAccessViewFloat,
	.DiscardResource = list_DiscardResource,
	.BeginQuery = list_BeginQuery,
	.EndQuery = list_EndQuery,
	.ResolveQueryData = list_ResolveQueryData,
	.SetPredication = list_SetPredication,
	.SetMarker = list_SetMarker,
	.BeginEvent = list_BeginEvent,
	.EndEvent = list_EndEvent,
	.ExecuteIndirect = list_ExecuteIndirect,
	/* ID3D12GraphicsCommandList1 */
	.AtomicCopyBufferUINT = list_AtomicCopyBufferUINT,
	.AtomicCopyBufferUINT64 = list_AtomicCopyBufferUINT64,
	.OMSetDepthBounds = list_OMSetDepthBounds,
	.SetSamplePositions = list_SetSamplePositions,
	.ResolveSubresourceRegion = list_ResolveSubresourceRegion,
	.SetViewInstanceMask = list_SetViewInstanceMask,
	/* ID3D12GraphicsCommandList2 */
	.WriteBufferImmediate = list_WriteBufferImmediate,
};

HRESULT list_create(struct d3d12_device *d, UINT node_mask,
		    D3D12_COMMAND_LIST_TYPE type,
		    ID3D12CommandAllocator *allocator, REFIID riid, void **out)
{
	struct d3d12_list *l;
	HRESULT hr;
	int ret;

	if (!out)
		return E_INVALIDARG;
	*out = NULL;
	if (!riid || node_mask > 1)
		return E_INVALIDARG;
	hr = list_type_check(type, true);
	if (FAILED(hr))
		return hr;

	l = calloc(1, sizeof(*l));
	if (!l)
		return E_OUTOFMEMORY;
	ret = d3dq_cmdlist_create(d->dev, &l->l);
	if (ret) {
		free(l);
		return hr_from_errno(d, ret);
	}
	SET_VTBL(&l->iface, &list_vtbl);
	child_init(&l->c, &list_class, d);
	l->type = type;
	pthread_mutex_init(&l->lock, NULL);
	/* Created recording, with the allocator. */
	hr = attach(l, allocator);
	if (FAILED(hr)) {
		child_release(&l->c);
		return hr;
	}
	l->recording = true;
	return child_hand_out(&l->c, riid, out);
}
