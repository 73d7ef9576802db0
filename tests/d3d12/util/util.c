// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the D3D12 suite (d3d12.h only).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/d3d12_util.h"

ID3D12Device1 *u_device(void)
{
	ID3D12Device1 *dev = NULL;

	if (FAILED(D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0,
				     &IID_ID3D12Device1, (void **)&dev)))
		return NULL;
	return dev;
}

ID3D12CommandQueue *u_queue(ID3D12Device1 *dev, D3D12_COMMAND_LIST_TYPE type)
{
	D3D12_COMMAND_QUEUE_DESC desc = { .Type = type };
	ID3D12CommandQueue *q = NULL;

	if (FAILED(ID3D12Device1_CreateCommandQueue(dev, &desc,
						    &IID_ID3D12CommandQueue,
						    (void **)&q)))
		return NULL;
	return q;
}

ID3D12Fence *u_fence(ID3D12Device1 *dev, UINT64 value)
{
	ID3D12Fence *f = NULL;

	if (FAILED(ID3D12Device1_CreateFence(dev, value, D3D12_FENCE_FLAG_NONE,
					     &IID_ID3D12Fence, (void **)&f)))
		return NULL;
	return f;
}

ID3D12Resource *u_buffer(ID3D12Device1 *dev, D3D12_HEAP_TYPE heap, UINT64 size)
{
	D3D12_HEAP_PROPERTIES props = { .Type = heap };
	D3D12_RESOURCE_DESC desc = {
		.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER,
		.Width = size,
		.Height = 1,
		.DepthOrArraySize = 1,
		.MipLevels = 1,
		.Format = DXGI_FORMAT_UNKNOWN,
		.SampleDesc = { .Count = 1 },
		.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR,
	};
	D3D12_RESOURCE_STATES state = heap == D3D12_HEAP_TYPE_UPLOAD ?
		D3D12_RESOURCE_STATE_GENERIC_READ :
		heap == D3D12_HEAP_TYPE_READBACK ?
		D3D12_RESOURCE_STATE_COPY_DEST : D3D12_RESOURCE_STATE_COMMON;
	ID3D12Resource *res = NULL;

	if (FAILED(ID3D12Device1_CreateCommittedResource(
			dev, &props, D3D12_HEAP_FLAG_NONE, &desc, state, NULL,
			&IID_ID3D12Resource, (void **)&res)))
		return NULL;
	return res;
}

void *u_map(ID3D12Resource *res)
{
	void *p = NULL;

	if (FAILED(ID3D12Resource_Map(res, 0, NULL, &p)))
		return NULL;
	return p;
}

bool u_list(ID3D12Device1 *dev, D3D12_COMMAND_LIST_TYPE type,
	    ID3D12CommandAllocator **alloc, ID3D12GraphicsCommandList2 **list)
{
	*list = NULL;
	if (FAILED(ID3D12Device1_CreateCommandAllocator(
			dev, type, &IID_ID3D12CommandAllocator, (void **)alloc)))
		return false;
	if (FAILED(ID3D12Device1_CreateCommandList(
			dev, 0, type, *alloc, NULL,
			&IID_ID3D12GraphicsCommandList2, (void **)list))) {
		U_RELEASE(*alloc);
		return false;
	}
	return true;
}

HRESULT u_execute(ID3D12CommandQueue *q, ID3D12GraphicsCommandList2 *list)
{
	ID3D12CommandList *lists[] = { (ID3D12CommandList *)list };
	HRESULT hr = ID3D12GraphicsCommandList2_Close(list);

	if (SUCCEEDED(hr))
		ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
	return hr;
}

void u_write32(ID3D12GraphicsCommandList2 *list, ID3D12Resource *res,
	       UINT64 offset, UINT32 value)
{
	D3D12_WRITEBUFFERIMMEDIATE_PARAMETER p = {
		.Dest = ID3D12Resource_GetGPUVirtualAddress(res) + offset,
		.Value = value,
	};

	ID3D12GraphicsCommandList2_WriteBufferImmediate(list, 1, &p, NULL);
}

int u_event(void)
{
	return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

HANDLE u_handle(int fd)
{
	return (HANDLE)(intptr_t)fd;
}

uint64_t u_event_take(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

uint64_t u_event_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return 0;
	return u_event_take(fd);
}

HRESULT u_wait(ID3D12Fence *fence, UINT64 value)
{
	return ID3D12Fence_SetEventOnCompletion(fence, value, NULL);
}

ULONG u_refs(void *iface)
{
	IUnknown *u = iface;

	IUnknown_AddRef(u);
	return IUnknown_Release(u);
}

int u_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
