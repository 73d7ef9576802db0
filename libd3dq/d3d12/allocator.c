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

static void allocator_fini(struct child *c)
{
	struct d3d12_allocator *a = container_of(c, struct d3d12_allocator, c);
	struct scratch_chunk *chunk, *next;

	for (chunk = a->chunks; chunk; chunk = next) {
		next = chunk->next;
		d3dq_buffer_destroy(chunk->buf);
		free(chunk);
	}
	if (!device_inherited(c->device))
		pthread_mutex_destroy(&a->lock);
}

static const struct child_class allocator_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
		  &IID_ID3D12CommandAllocator },
	.offset = offsetof(struct d3d12_allocator, c),
	.fini = allocator_fini,
};

DEFINE_CHILD_METHODS(allocator, ID3D12CommandAllocator, impl)

/* E_FAIL while a list records into the allocator, as in D3D12. */
static HRESULT STDMETHODCALLTYPE allocator_Reset(ID3D12CommandAllocator *iface)
{
	struct d3d12_allocator *a = impl(iface);
	struct scratch_chunk *c;
	HRESULT hr = S_OK;

	/* A parent's (fork): its lock may be held by a thread not here. */
	if (device_inherited(a->c.device))
		return DXGI_ERROR_DEVICE_REMOVED;
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
	CHILD_VTBL(allocator),
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
	hr = list_type_check(type, true);
	if (FAILED(hr))
		return hr;
	if (d3dq_device_removed_reason(d->dev))
		return DXGI_ERROR_DEVICE_REMOVED;

	a = calloc(1, sizeof(*a));
	if (!a)
		return E_OUTOFMEMORY;
	SET_VTBL(&a->iface, &allocator_vtbl);
	child_init(&a->c, &allocator_class, d);
	a->type = type;
	pthread_mutex_init(&a->lock, NULL);
	return child_hand_out(&a->c, riid, out);
}
