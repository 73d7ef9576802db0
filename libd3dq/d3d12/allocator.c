// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: ID3D12CommandAllocator.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * libd3dq copies a command list's commands when it is executed, so the
 * allocator owns only what commands point to: the values of
 * WriteBufferImmediate, staged in buffers the engine copies from. As in
 * D3D12, that memory is reused by Reset, which the application may call
 * only once the work recorded with the allocator has completed, and which
 * fails while a list records into the allocator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

#define CHUNK_SIZE (64 * 1024)

struct scratch_chunk {
	struct scratch_chunk *next;
	struct d3dq_buffer *buf;
	unsigned char *map;
	uint64_t size, used;
};

static const ID3D12CommandAllocatorVtbl allocator_vtbl;

static struct d3d12_allocator *impl(ID3D12CommandAllocator *iface)
{
	return container_of(iface, struct d3d12_allocator, iface);
}

struct d3d12_allocator *allocator_from(ID3D12CommandAllocator *iface)
{
	if (!iface || iface->lpVtbl != &allocator_vtbl)
		return NULL;
	return impl(iface);
}

static HRESULT STDMETHODCALLTYPE
allocator_QueryInterface(ID3D12CommandAllocator *iface, REFIID riid,
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
	    iid_equal(riid, &IID_ID3D12CommandAllocator))
		return query_result((IUnknown *)iface, out);
	return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE allocator_AddRef(ID3D12CommandAllocator *iface)
{
	return atomic_fetch_add(&impl(iface)->c.refs, 1) + 1;
}

static ULONG STDMETHODCALLTYPE allocator_Release(ID3D12CommandAllocator *iface)
{
	struct d3d12_allocator *a = impl(iface);
	ULONG refs = atomic_fetch_sub(&a->c.refs, 1) - 1;
	struct scratch_chunk *c, *next;

	if (refs)
		return refs;
	for (c = a->chunks; c; c = next) {
		next = c->next;
		d3dq_buffer_destroy(c->buf);
		free(c);
	}
	pthread_mutex_destroy(&a->lock);
	child_fini(&a->c);
	free(a);
	return 0;
}

static HRESULT STDMETHODCALLTYPE
allocator_GetPrivateData(ID3D12CommandAllocator *iface, REFGUID guid,
			 UINT *size, void *data)
{
	return priv_get(&impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE
allocator_SetPrivateData(ID3D12CommandAllocator *iface, REFGUID guid,
			 UINT size, const void *data)
{
	return priv_set(&impl(iface)->c.priv, guid, size, data);
}

static HRESULT STDMETHODCALLTYPE
allocator_SetPrivateDataInterface(ID3D12CommandAllocator *iface, REFGUID guid,
				  const IUnknown *data)
{
	return priv_set_iface(&impl(iface)->c.priv, guid, data);
}

static HRESULT STDMETHODCALLTYPE allocator_SetName(ID3D12CommandAllocator *iface,
						   LPCWSTR name)
{
	return priv_set_name(&impl(iface)->c.priv, name);
}

static HRESULT STDMETHODCALLTYPE
allocator_GetDevice(ID3D12CommandAllocator *iface, REFIID riid, void **out)
{
	return child_get_device(&impl(iface)->c, riid, out);
}

/* E_FAIL while a list records into the allocator, as in D3D12. */
static HRESULT STDMETHODCALLTYPE allocator_Reset(ID3D12CommandAllocator *iface)
{
	struct d3d12_allocator *a = impl(iface);
	struct scratch_chunk *c;
	HRESULT hr = S_OK;

	pthread_mutex_lock(&a->lock);
	if (a->recording) {
		hr = E_FAIL;
	} else {
		for (c = a->chunks; c; c = c->next)
			c->used = 0;
	}
	pthread_mutex_unlock(&a->lock);
	return hr;
}

static const ID3D12CommandAllocatorVtbl allocator_vtbl = {
	.QueryInterface = allocator_QueryInterface,
	.AddRef = allocator_AddRef,
	.Release = allocator_Release,
	.GetPrivateData = allocator_GetPrivateData,
	.SetPrivateData = allocator_SetPrivateData,
	.SetPrivateDataInterface = allocator_SetPrivateDataInterface,
	.SetName = allocator_SetName,
	.GetDevice = allocator_GetDevice,
	.Reset = allocator_Reset,
};

HRESULT allocator_attach(struct d3d12_allocator *a, struct d3d12_list *list)
{
	HRESULT hr = S_OK;

	pthread_mutex_lock(&a->lock);
	if (a->recording && a->recording != list)
		hr = E_INVALIDARG;
	else
		a->recording = list;
	pthread_mutex_unlock(&a->lock);
	return hr;
}

void allocator_detach(struct d3d12_allocator *a, struct d3d12_list *list)
{
	pthread_mutex_lock(&a->lock);
	if (a->recording == list)
		a->recording = NULL;
	pthread_mutex_unlock(&a->lock);
}

int allocator_stage(struct d3d12_allocator *a, const void *data,
		    uint64_t size, struct d3dq_buffer **buf, uint64_t *offset)
{
	struct d3d12_device *d = a->c.device;
	struct scratch_chunk *c;
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	for (c = a->chunks; c; c = c->next)
		if (c->size - c->used >= size)
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			ret = -ENOMEM;
			goto out;
		}
		c->size = size > CHUNK_SIZE ? size : CHUNK_SIZE;
		ret = d3dq_buffer_create(d->dev, c->size, &c->buf);
		if (ret) {
			free(c);
			goto out;
		}
		c->map = d3dq_buffer_map(c->buf);
		c->next = a->chunks;
		a->chunks = c;
	}
	memcpy(c->map + c->used, data, size);
	*buf = c->buf;
	*offset = c->used;
	/* Keep every value 8-byte aligned. */
	c->used += (size + 7) & ~7ull;
	if (c->used > c->size)
		c->used = c->size;
out:
	pthread_mutex_unlock(&a->lock);
	return ret;
}

HRESULT allocator_create(struct d3d12_device *d, D3D12_COMMAND_LIST_TYPE type,
			 REFIID riid, void **out)
{
	struct d3d12_allocator *a;
	HRESULT hr;

	if (!out)
		return E_INVALIDARG;
	*out = NULL;
	if (!riid)
		return E_INVALIDARG;
	if (!list_type_valid(type))
		return type == D3D12_COMMAND_LIST_TYPE_BUNDLE ||
		       (type >= D3D12_COMMAND_LIST_TYPE_VIDEO_DECODE &&
			type <= D3D12_COMMAND_LIST_TYPE_VIDEO_ENCODE) ?
		       E_NOTIMPL : E_INVALIDARG;
	if (d3dq_device_removed_reason(d->dev))
		return DXGI_ERROR_DEVICE_REMOVED;

	a = calloc(1, sizeof(*a));
	if (!a)
		return E_OUTOFMEMORY;
	SET_VTBL(&a->iface, &allocator_vtbl);
	child_init(&a->c, d);
	a->type = type;
	pthread_mutex_init(&a->lock, NULL);
	hr = allocator_QueryInterface(&a->iface, riid, out);
	allocator_Release(&a->iface);
	return hr;
}
