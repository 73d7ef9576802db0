/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the D3D12 suite: they use d3d12.h (through libd3d12-d3dq)
 * and eventfds, never libd3dq.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3D12_UTIL_H
#define D3D12_UTIL_H

#define COBJMACROS
/* d3d12.h uses MSVC's "#pragma region": only that warning is silenced. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include <wsl/winadapter.h>
#include <d3d12.h>
#pragma GCC diagnostic pop

#include <stdbool.h>
#include <stdint.h>

/* HRESULTs are printed as unsigned hex in test messages. */
#define HR(x) ((unsigned int)(x))

/* The process's device (D3D12CreateDevice), or NULL: no d3dq device. */
ID3D12Device1 *u_device(void);

ID3D12CommandQueue *u_queue(ID3D12Device1 *dev, D3D12_COMMAND_LIST_TYPE type);
ID3D12Fence *u_fence(ID3D12Device1 *dev, UINT64 value);
/* A committed buffer; UPLOAD and READBACK ones start in their state. */
ID3D12Resource *u_buffer(ID3D12Device1 *dev, D3D12_HEAP_TYPE heap,
			 UINT64 size);
void *u_map(ID3D12Resource *res);
/* An allocator and a list of one type, recording. */
bool u_list(ID3D12Device1 *dev, D3D12_COMMAND_LIST_TYPE type,
	    ID3D12CommandAllocator **alloc, ID3D12GraphicsCommandList2 **list);
/* Close the list and execute it alone on q. */
HRESULT u_execute(ID3D12CommandQueue *q, ID3D12GraphicsCommandList2 *list);
void u_write32(ID3D12GraphicsCommandList2 *list, ID3D12Resource *res,
	       UINT64 offset, UINT32 value);

/* Events are eventfds passed as HANDLEs. */
int u_event(void);
HANDLE u_handle(int fd);
/* How often the event fired since the last call (0 if not). */
uint64_t u_event_take(int fd);
/* Wait up to ms for the event; its count, or 0 on timeout. */
uint64_t u_event_wait(int fd, int ms);
/* Block until the fence reaches value (SetEventOnCompletion, NULL). */
HRESULT u_wait(ID3D12Fence *fence, UINT64 value);

ULONG u_refs(void *iface);	/* AddRef + Release: the current count */
int u_threads(void);		/* threads of this process (/proc/self/task) */
#define U_RELEASE(p) \
	do { \
		if (p) \
			IUnknown_Release((IUnknown *)(p)); \
		(p) = NULL; \
	} while (0)

#endif /* D3D12_UTIL_H */
