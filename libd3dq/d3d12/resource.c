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

static HRESULT STDMETHODCALLTYPE resource_QueryInterface(ID3D12Resource *iface,
							 REFIID riid,
							 void **out)
{
	if (!out)
		return E_POINTER;
	*out = NULL;
	if (!riid)
		return E_INVALIDARG;
	if (iid_equal(riid, &IID_IUnknown) ||
	    iid_equal(riid, &IID_ID3D12Object) ||
	    iid_equal(riid, &IID_ID3D12DeviceChild) ||
	    iid_equal(riid, &IID_ID3D12Pageable) ||
	    iid_equal(riid, &IID_ID3D12Resource))
		return query_result((IUnknown *)iface, out);
	return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE resource_AddRef(ID3D12Resource *iface)
{
	return atomic_fetch_add(&impl(iface)->c.refs, 1) + 1;
}

static ULONG STDMETHODCALLTYPE resource_Release(ID3D12Resource *iface)
{
	struct d3d12_resource *r = impl(iface);
	ULONG refs = atomic_fetch_sub(&r->c.refs, 1) - 1;

	if (!refs) {
		device_del_buffer(r->c.device, r);
		d3dq_buffer_destroy(r->buf);
		child_fini(&r->c);
		free(r);
	}
	return refs;
}

static HRESULT STDMETHODCALLTYPE resource_GetPrivateData(ID3D12Resource *iface,
							 REFGUID guid,
							 UINT *size, void *data)
{
	return priv_get(&impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE resource_SetPrivateData(ID3D12Resource *iface,
							 REFGUID guid,
							 UINT size,
							 const void *data)
{
	return priv_set(&impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE
resource_SetPrivateDataInterface(ID3D12Resource *iface, REFGUID guid,
				 const IUnknown *data)
{
	return priv_set_iface(&impl(iface)->c.priv, guid, data);
}

static HRESULT STDMETHODCALLTYPE resource_SetName(ID3D12Resource *iface,
						  LPCWSTR name)
{
	return priv_set_name(&impl(iface)->c.priv, name);
}

static HRESULT STDMETHODCALLTYPE resource_GetDevice(ID3D12Resource *iface,
						    REFIID riid, void **out)
{
	return child_get_device(&impl(iface)->c, riid, out);
}

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
static HRESULT STDMETHODCALLTYPE
resource_WriteToSubresource(ID3D12Resource *iface, UINT dst_subresource,
			    const D3D12_BOX *dst_box, const void *src,
			    UINT src_row_pitch, UINT src_depth_pitch)
{
	return E_NOTIMPL;
}

static HRESULT STDMETHODCALLTYPE
resource_ReadFromSubresource(ID3D12Resource *iface, void *dst,
			     UINT dst_row_pitch, UINT dst_depth_pitch,
			     UINT src_subresource, const D3D12_BOX *src_box)
{
	return E_NOTIMPL;
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
	.QueryInterface = resource_QueryInterface,
	.AddRef = resource_AddRef,
	.Release = resource_Release,
	.GetPrivateData = resource_GetPrivateData,
	.SetPrivateData = resource_SetPrivateData,
	.SetPrivateDataInterface = resource_SetPrivateDataInterface,
	.SetName = resource_SetName,
	.GetDevice = resource_GetDevice,
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
	child_init(&r->c, d);
	r->desc = *desc;
	r->desc.Alignment = VA_ALIGN;
	r->heap = *heap;
	r->heap.CreationNodeMask = 1;
	r->heap.VisibleNodeMask = 1;
	r->heap_flags = heap_flags;
	/* Last: from here on, command lists can find it by address. */
	hr = device_add_buffer(d, r, desc->Width);
	if (SUCCEEDED(hr))
		hr = resource_QueryInterface(&r->iface, riid, out);
	resource_Release(&r->iface);
	return hr;
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

static HRESULT STDMETHODCALLTYPE
query_heap_QueryInterface(ID3D12QueryHeap *iface, REFIID riid, void **out)
{
	if (!out)
		return E_POINTER;
	*out = NULL;
	if (!riid)
		return E_INVALIDARG;
	if (iid_equal(riid, &IID_IUnknown) ||
	    iid_equal(riid, &IID_ID3D12Object) ||
	    iid_equal(riid, &IID_ID3D12DeviceChild) ||
	    iid_equal(riid, &IID_ID3D12Pageable) ||
	    iid_equal(riid, &IID_ID3D12QueryHeap))
		return query_result((IUnknown *)iface, out);
	return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE query_heap_AddRef(ID3D12QueryHeap *iface)
{
	return atomic_fetch_add(&heap_impl(iface)->c.refs, 1) + 1;
}

static ULONG STDMETHODCALLTYPE query_heap_Release(ID3D12QueryHeap *iface)
{
	struct d3d12_query_heap *h = heap_impl(iface);
	ULONG refs = atomic_fetch_sub(&h->c.refs, 1) - 1;

	if (!refs) {
		d3dq_buffer_destroy(h->buf);
		child_fini(&h->c);
		free(h);
	}
	return refs;
}

static HRESULT STDMETHODCALLTYPE
query_heap_GetPrivateData(ID3D12QueryHeap *iface, REFGUID guid, UINT *size,
			  void *data)
{
	return priv_get(&heap_impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE
query_heap_SetPrivateData(ID3D12QueryHeap *iface, REFGUID guid, UINT size,
			  const void *data)
{
	return priv_set(&heap_impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE
query_heap_SetPrivateDataInterface(ID3D12QueryHeap *iface, REFGUID guid,
				   const IUnknown *data)
{
	return priv_set_iface(&heap_impl(iface)->c.priv, guid, data);
}

static HRESULT STDMETHODCALLTYPE query_heap_SetName(ID3D12QueryHeap *iface,
						    LPCWSTR name)
{
	return priv_set_name(&heap_impl(iface)->c.priv, name);
}

static HRESULT STDMETHODCALLTYPE query_heap_GetDevice(ID3D12QueryHeap *iface,
						      REFIID riid, void **out)
{
	return child_get_device(&heap_impl(iface)->c, riid, out);
}

static const ID3D12QueryHeapVtbl query_heap_vtbl = {
	.QueryInterface = query_heap_QueryInterface,
	.AddRef = query_heap_AddRef,
	.Release = query_heap_Release,
	.GetPrivateData = query_heap_GetPrivateData,
	.SetPrivateData = query_heap_SetPrivateData,
	.SetPrivateDataInterface = query_heap_SetPrivateDataInterface,
	.SetName = query_heap_SetName,
	.GetDevice = query_heap_GetDevice,
};

HRESULT query_heap_create(struct d3d12_device *d,
			  const D3D12_QUERY_HEAP_DESC *desc, REFIID riid,
			  void **out)
{
	struct d3d12_query_heap *h;
	HRESULT hr;
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
	child_init(&h->c, d);
	h->desc = *desc;
	hr = query_heap_QueryInterface(&h->iface, riid, out);
	query_heap_Release(&h->iface);
	return hr;
}
