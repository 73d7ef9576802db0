/* SPDX-License-Identifier: MIT */
/*
 * libd3d12-d3dq's own entry point (since 0.2): a D3D12 device whose events
 * are the program's own rather than eventfds, as vkd3d's pfn_signal_event.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * A program whose events are not file descriptors (Wine's events, ntsync,
 * its own condition variables) creates the device with a callback. On
 * that device the HANDLE given to ID3D12Fence::SetEventOnCompletion and
 * ID3D12Device1::SetEventOnMultipleFenceCompletion is the program's own
 * token, never looked at: when the event fires, the library calls
 * pfn_signal_event(event, context) once, on its own thread, with no lock
 * held. NULL still blocks until the values are reached. See
 * d3d12_d3dq_create_device(3) and Documentation/d3d12.rst.
 *
 * Include after <d3d12.h> (which needs <wsl/winadapter.h> before it).
 */
#ifndef D3DQ_D3D12_D3DQ_H
#define D3DQ_D3D12_D3DQ_H

#ifndef __d3d12_h__
#error "include <d3d12.h> before <d3dq/d3d12_d3dq.h>"
#endif

#if defined(__cplusplus)
extern "C" {
#endif

/* What it returns is ignored (vkd3d's only logs a failure). */
typedef HRESULT (*PFN_D3D12_D3DQ_SIGNAL_EVENT)(HANDLE event, void *context);

/*
 * Extensible: size is sizeof(struct d3d12_d3dq_device_create_info) as the
 * caller was compiled; members added later go at the end, and bytes this
 * library does not know must be zero.
 */
struct d3d12_d3dq_device_create_info {
	UINT size;
	D3D_FEATURE_LEVEL minimum_feature_level;  /* as D3D12CreateDevice's */
	PFN_D3D12_D3DQ_SIGNAL_EVENT pfn_signal_event;  /* required */
	void *context;                  /* passed to pfn_signal_event */
};

/*
 * A new device each time (D3D12CreateDevice's process-wide device is
 * another one). A NULL device only checks the arguments: S_FALSE.
 */
HRESULT d3d12_d3dq_create_device(
	const struct d3d12_d3dq_device_create_info *info, REFIID riid,
	void **device);

/*
 * Since 0.4: a fence of this library next to another driver's work (a
 * D3D12-on-Vulkan layer's submissions). signal_on_sync_file: the fence is
 * set to value when the sync_file's work completes, as a queue Signal
 * would be (it returns at once; failed work writes nothing).
 * export_sync_file: a sync_file that signals when the fence reaches value,
 * DXGI_ERROR_WAS_STILL_DRAWING while no queue Signal that brings it is on
 * its way. See d3dq_fence_signal_on_sync_file(3) and
 * d3dq_fence_export_sync_file(3); E_INVALIDARG for a fence of another
 * implementation.
 */
#ifndef DXGI_ERROR_WAS_STILL_DRAWING	/* not in WSL's stubs */
#define DXGI_ERROR_WAS_STILL_DRAWING ((HRESULT)0x887A000AL)
#endif
HRESULT d3d12_d3dq_fence_signal_on_sync_file(ID3D12Fence *fence,
					     UINT64 value, int fd);
HRESULT d3d12_d3dq_fence_export_sync_file(ID3D12Fence *fence, UINT64 value,
					  int *fd);

#if defined(__cplusplus)
}
#endif

#endif /* D3DQ_D3D12_D3DQ_H */
