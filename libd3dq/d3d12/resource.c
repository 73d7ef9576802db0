// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: ID3D12Resource (committed buffers) and ID3D12QueryHeap
 * (timestamps), each on a libd3dq buffer.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Every heap type is the same memory here: the engine runs on the CPU and
 * reads and writes the buffer's pages. The heap type still decides what
 * D3D12 allows: only UPLOAD and READBACK buffers can be mapped, and they
 * start in GENERIC_READ and COPY_DEST. A buffer's GPU virtual address is
 * made up by the device (device.c); command lists turn it back into the
 * buffer and an offset.
 */
#include <stdlib.h>

#include "private.h"

static const ID3D12ResourceVtbl resource_vtbl;
static const ID3D12QueryHeapVtbl query_heap_vtbl;

static struct d3d12_resource *impl(ID3D12Resource *iface)
{
	return container_of(iface, struct d3d12_resource, iface);
}

struct d3d12_resource *resource_from(ID3D12Resource *iface)
{
	if (!iface || iface->lpVtbl != &resource_vtbl)
		return NULL;
	return impl(iface);
}

static void resource_fini(struct child *c)
{
	struct d3d12_resource *r = container_of(c, struct d3d12_resource, c);

	device_del_buffer(c->device, r);
	d3dq_buffer_destroy(r->buf);
}

static const struct child_class resource_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
		  &IID_ID3D12Resource },
	.offset = offsetof(struct d3d12_resource, c),
	.fini = resource_fini,
};

DEFINE_CHILD_METHODS(resource, ID3D12Resource, impl)

/*
 * The pointer is the start of the buffer whatever the read range, and it
 * stays the same for the buffer's life; Map calls nest.
 */
static HRESULT STDMETHODCALLTYPE resource_Map(ID3D12Resource *iface,
					      UINT subresource,
					      const D3D12_RANGE *read_range,
					      void **data)
{
	struct d3d12_resource *r = impl(iface);

	if (data)
		*data = NULL;
	if (subresource || r->heap.Type == D3D12_HEAP_TYPE_DEFAULT)
		return E_INVALIDARG;
	atomic_fetch_add(&r->maps, 1);
	if (data)
		*data = r->map;
	return S_OK;
}

static void STDMETHODCALLTYPE resource_Unmap(ID3D12Resource *iface,
					     UINT subresource,
					     const D3D12_RANGE *written_range)
{
	struct d3d12_resource *r = impl(iface);
	int maps = atomic_load(&r->maps);

	while (maps > 0 &&
	       !atomic_compare_exchange_weak(&r->maps, &maps, maps - 1))
		;
}

static D3D12_RESOURCE_DESC STDMETHODCALLTYPE
resource_GetDesc(ID3D12Resource *iface)
{
	return impl(iface)->desc;
}

static D3D12_GPU_VIRTUAL_ADDRESS STDMETHODCALLTYPE
resource_GetGPUVirtualAddress(ID3D12Resource *iface)
{
	return impl(iface)->va;
}

/* For textures, which do not exist here. */
/*
 * These copy texture subresources; Windows refuses buffers with
 * E_INVALIDARG (vkd3d's test_read_write_subresource), and every resource
 * here is a buffer.
 */
static HRESULT STDMETHODCALLTYPE
resource_WriteToSubresource(ID3D12Resource *iface, UINT dst_subresource,
			    const D3D12_BOX *dst_box, const void *src,
			    UINT src_row_pitch, UINT src_depth_pitch)
{
	return E_INVALIDARG;
}

static HRESULT STDMETHODCALLTYPE
resource_ReadFromSubresource(ID3D12Resource *iface, void *dst,
			     UINT dst_row_pitch, UINT dst_depth_pitch,
			     UINT src_subresource, const D3D12_BOX *src_box)
{
	return E_INVALIDARG;
}

static HRESULT STDMETHODCALLTYPE
resource_GetHeapProperties(ID3D12Resource *iface,
			   D3D12_HEAP_PROPERTIES *props,
			   D3D12_HEAP_FLAGS *flags)
{
	struct d3d12_resource *r = impl(iface);

	if (props)
		*props = r->heap;
	if (flags)
		*flags = r->heap_flags;
	return S_OK;
}

static const ID3D12ResourceVtbl resource_vtbl = {
	CHILD_VTBL(resource),
	.Map = resource_Map,
	.Unmap = resource_Unmap,
	.GetDesc = resource_GetDesc,
	.GetGPUVirtualAddress = resource_GetGPUVirtualAddress,
	.WriteToSubresource = resource_WriteToSubresource,
	.ReadFromSubresource = resource_ReadFromSubresource,
	.GetHeapProperties = resource_GetHeapProperties,
};

HRESULT resource_check_buffer_desc(const D3D12_RESOURCE_DESC *desc)
{
	if (desc->Dimension != D3D12_RESOURCE_DIMENSION_BUFFER)
		return desc->Dimension >= D3D12_RESOURCE_DIMENSION_TEXTURE1D &&
		       desc->Dimension <= D3D12_RESOURCE_DIMENSION_TEXTURE3D ?
		       E_NOTIMPL : E_INVALIDARG;
	if ((desc->Alignment && desc->Alignment != VA_ALIGN) ||
	    !desc->Width || desc->Height != 1 || desc->DepthOrArraySize != 1 ||
	    desc->MipLevels != 1 || desc->Format != DXGI_FORMAT_UNKNOWN ||
	    desc->SampleDesc.Count != 1 || desc->SampleDesc.Quality ||
	    desc->Layout != D3D12_TEXTURE_LAYOUT_ROW_MAJOR ||
	    (desc->Flags & ~(D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS |
			     D3D12_RESOURCE_FLAG_DENY_SHADER_RESOURCE)))
		return E_INVALIDARG;
	return S_OK;
}

static HRESULT check_heap(const D3D12_HEAP_PROPERTIES *heap,
			  D3D12_HEAP_FLAGS flags, D3D12_RESOURCE_STATES state)
{
	/* Hints and restrictions that do not concern buffers. */
	const D3D12_HEAP_FLAGS accepted = D3D12_HEAP_FLAG_DENY_RT_DS_TEXTURES |
		D3D12_HEAP_FLAG_DENY_NON_RT_DS_TEXTURES |
		D3D12_HEAP_FLAG_CREATE_NOT_ZEROED |
		D3D12_HEAP_FLAG_ALLOW_SHADER_ATOMICS;

	switch (heap->Type) {
	case D3D12_HEAP_TYPE_DEFAULT:
		break;
	case D3D12_HEAP_TYPE_UPLOAD:
		if (state != D3D12_RESOURCE_STATE_GENERIC_READ)
			return E_INVALIDARG;
		break;
	case D3D12_HEAP_TYPE_READBACK:
		if (state != D3D12_RESOURCE_STATE_COPY_DEST)
			return E_INVALIDARG;
		break;
	case D3D12_HEAP_TYPE_CUSTOM:
		return E_NOTIMPL;
	default:
		return E_INVALIDARG;
	}
	if (heap->CPUPageProperty != D3D12_CPU_PAGE_PROPERTY_UNKNOWN ||
	    heap->MemoryPoolPreference != D3D12_MEMORY_POOL_UNKNOWN ||
	    heap->CreationNodeMask > 1 || heap->VisibleNodeMask > 1 ||
	    (flags & D3D12_HEAP_FLAG_DENY_BUFFERS))
		return E_INVALIDARG;
	/* Shared, protected, displayable and write-watched memory. */
	if (flags & ~accepted)
		return E_NOTIMPL;
	return S_OK;
}

HRESULT resource_create_committed(struct d3d12_device *d,
				  const D3D12_HEAP_PROPERTIES *heap,
				  D3D12_HEAP_FLAGS heap_flags,
				  const D3D12_RESOURCE_DESC *desc,
				  D3D12_RESOURCE_STATES state, REFIID riid,
				  void **out)
{
	struct d3d12_resource *r;
	HRESULT hr;
	int ret;

	if (out)
		*out = NULL;
	if (!heap || !desc || !riid)
		return E_INVALIDARG;
	hr = resource_check_buffer_desc(desc);
	if (FAILED(hr))
		return hr;
	hr = check_heap(heap, heap_flags, state);
	if (FAILED(hr))
		return hr;
	/* A NULL ppvResource only asks whether the arguments are valid. */
	if (!out)
		return S_FALSE;

	r = calloc(1, sizeof(*r));
	if (!r)
		return E_OUTOFMEMORY;
	ret = d3dq_buffer_create(d->dev, desc->Width, &r->buf);
	if (ret) {
		free(r);
		return hr_from_errno(d, ret);
	}
	r->map = d3dq_buffer_map(r->buf);
	SET_VTBL(&r->iface, &resource_vtbl);
	child_init(&r->c, &resource_class, d);
	r->desc = *desc;
	r->desc.Alignment = VA_ALIGN;
	r->heap = *heap;
	r->heap.CreationNodeMask = 1;
	r->heap.VisibleNodeMask = 1;
	r->heap_flags = heap_flags;
	/* Last: from here on, command lists can find it by address. */
	hr = device_add_buffer(d, r, desc->Width);
	if (FAILED(hr)) {
		child_release(&r->c);
		return hr;
	}
	return child_hand_out(&r->c, riid, out);
}

/* --- ID3D12QueryHeap --------------------------------------------------------- */

static struct d3d12_query_heap *heap_impl(ID3D12QueryHeap *iface)
{
	return container_of(iface, struct d3d12_query_heap, iface);
}

struct d3d12_query_heap *query_heap_from(ID3D12QueryHeap *iface)
{
	if (!iface || iface->lpVtbl != &query_heap_vtbl)
		return NULL;
	return heap_impl(iface);
}

static void query_heap_fini(struct child *c)
{
	d3dq_buffer_destroy(container_of(c, struct d3d12_query_heap, c)->buf);
}

static const struct child_class query_heap_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
		  &IID_ID3D12QueryHeap },
	.offset = offsetof(struct d3d12_query_heap, c),
	.fini = query_heap_fini,
};

DEFINE_CHILD_METHODS(query_heap, ID3D12QueryHeap, heap_impl)

static const ID3D12QueryHeapVtbl query_heap_vtbl = {
	CHILD_VTBL(query_heap),
};

HRESULT query_heap_create(struct d3d12_device *d,
			  const D3D12_QUERY_HEAP_DESC *desc, REFIID riid,
			  void **out)
{
	struct d3d12_query_heap *h;
	int ret;

	if (out)
		*out = NULL;
	if (!desc || !riid || !desc->Count || desc->NodeMask > 1)
		return E_INVALIDARG;
	switch (desc->Type) {
	case D3D12_QUERY_HEAP_TYPE_TIMESTAMP:
	case D3D12_QUERY_HEAP_TYPE_COPY_QUEUE_TIMESTAMP:
		break;
	case D3D12_QUERY_HEAP_TYPE_OCCLUSION:
	case D3D12_QUERY_HEAP_TYPE_PIPELINE_STATISTICS:
	case D3D12_QUERY_HEAP_TYPE_SO_STATISTICS:
	case D3D12_QUERY_HEAP_TYPE_VIDEO_DECODE_STATISTICS:
	case D3D12_QUERY_HEAP_TYPE_PIPELINE_STATISTICS1:
		return E_NOTIMPL;
	default:
		return E_INVALIDARG;
	}
	if (!out)
		return S_FALSE;

	h = calloc(1, sizeof(*h));
	if (!h)
		return E_OUTOFMEMORY;
	ret = d3dq_buffer_create(d->dev, (uint64_t)desc->Count * 8, &h->buf);
	if (ret) {
		free(h);
		return hr_from_errno(d, ret);
	}
	SET_VTBL(&h->iface, &query_heap_vtbl);
	child_init(&h->c, &query_heap_class, d);
	h->desc = *desc;
	return child_hand_out(&h->c, riid, out);
}
