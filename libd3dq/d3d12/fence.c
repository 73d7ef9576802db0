// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: ID3D12Fence1 on a libd3dq fence.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Everything the fence does is libd3dq's (include/d3dq/d3dq.h): values
 * that go down and jump, events, shared fences; this file maps HANDLEs to
 * file descriptors (or, on a device created with a pfn_signal_event,
 * passes them on as the program's tokens) and errors to HRESULTs. The last Release destroys the
 * libd3dq fence, which releases every waiter as if the value had reached
 * UINT64_MAX (queue signals and waits already made keep their own
 * reference and still take effect).
 */
#include <errno.h>
#include <stdlib.h>

#include "private.h"

static const ID3D12Fence1Vtbl fence_vtbl;

static struct d3d12_fence *impl(ID3D12Fence1 *iface)
{
	return container_of(iface, struct d3d12_fence, iface);
}

struct d3d12_fence *fence_from(ID3D12Fence *iface)
{
	if (!iface || iface->lpVtbl != (const ID3D12FenceVtbl *)&fence_vtbl)
		return NULL;
	return impl((ID3D12Fence1 *)iface);
}

struct d3d12_fence *fence_from_child(ID3D12DeviceChild *iface)
{
	return fence_from((ID3D12Fence *)iface);
}

static void fence_fini(struct child *c)
{
	d3dq_fence_destroy(container_of(c, struct d3d12_fence, c)->f);
}

static const struct child_class fence_class = {
	.iids = { &IID_ID3D12DeviceChild, &IID_ID3D12Pageable,
		  &IID_ID3D12Fence, &IID_ID3D12Fence1 },
	.offset = offsetof(struct d3d12_fence, c),
	.fini = fence_fini,
};

DEFINE_CHILD_METHODS(fence, ID3D12Fence1, impl)

static UINT64 STDMETHODCALLTYPE fence_GetCompletedValue(ID3D12Fence1 *iface)
{
	return d3dq_fence_get_completed_value(impl(iface)->f);
}

/* A NULL event blocks until the value is reached. */
static HRESULT STDMETHODCALLTYPE fence_SetEventOnCompletion(ID3D12Fence1 *iface,
							    UINT64 value,
							    HANDLE event)
{
	struct d3d12_fence *f = impl(iface);
	struct d3d12_device *d = f->c.device;
	HRESULT hr;
	int fd, ret;

	if (!d->tokens && FAILED(handle_to_fd(event, &fd)))
		return E_INVALIDARG;
	/*
	 * A blocking call outlives the fence's last Release, which releases
	 * it (R14), and so perhaps the device's: nothing of @f is used after
	 * the call, and the call's reference keeps the device (issue 39).
	 */
	device_ref(d);
	if (d->tokens)
		ret = d3dq_fence_set_token_on_completion(f->f, value, event);
	else
		ret = d3dq_fence_set_event_on_completion(f->f, value, fd);
	hr = hr_from_errno(d, ret);
	device_unref(d);
	return hr;
}

static HRESULT STDMETHODCALLTYPE fence_Signal(ID3D12Fence1 *iface,
					      UINT64 value)
{
	struct d3d12_fence *f = impl(iface);

	return hr_from_errno(f->c.device, d3dq_fence_signal(f->f, value));
}

/* d3d12_d3dq.h (since 0.4): the fence next to another driver's work. */
EXPORT HRESULT d3d12_d3dq_fence_signal_on_sync_file(ID3D12Fence *fence,
						    UINT64 value, int fd)
{
	struct d3d12_fence *f = fence_from(fence);

	if (!f)
		return E_INVALIDARG;
	return hr_from_errno(f->c.device,
			     d3dq_fence_signal_on_sync_file(f->f, value, fd));
}

EXPORT HRESULT d3d12_d3dq_fence_export_sync_file(ID3D12Fence *fence,
						 UINT64 value, int *fd)
{
	struct d3d12_fence *f = fence_from(fence);
	int ret;

	if (!f || !fd)
		return E_INVALIDARG;
	ret = d3dq_fence_export_sync_file(f->f, value, fd);
	/* Nothing on its way brings the value yet: ask again later. */
	if (ret == -ENODATA)
		return DXGI_ERROR_WAS_STILL_DRAWING;
	return hr_from_errno(f->c.device, ret);
}

static D3D12_FENCE_FLAGS STDMETHODCALLTYPE
fence_GetCreationFlags(ID3D12Fence1 *iface)
{
	return impl(iface)->flags;
}

static const ID3D12Fence1Vtbl fence_vtbl = {
	CHILD_VTBL(fence),
	.GetCompletedValue = fence_GetCompletedValue,
	.SetEventOnCompletion = fence_SetEventOnCompletion,
	.Signal = fence_Signal,
	.GetCreationFlags = fence_GetCreationFlags,
};

/* Wraps a libd3dq fence, which it owns from then on (also on failure). */
static HRESULT wrap(struct d3d12_device *d, struct d3dq_fence *qf,
		    D3D12_FENCE_FLAGS flags, REFIID riid, void **out)
{
	struct d3d12_fence *f = calloc(1, sizeof(*f));

	if (!f) {
		d3dq_fence_destroy(qf);
		return E_OUTOFMEMORY;
	}
	SET_VTBL(&f->iface, &fence_vtbl);
	child_init(&f->c, &fence_class, d);
	f->f = qf;
	f->flags = flags;
	return child_hand_out(&f->c, riid, out);
}

HRESULT fence_create(struct d3d12_device *d, UINT64 value,
		     D3D12_FENCE_FLAGS flags, REFIID riid, void **out)
{
	struct d3dq_fence *qf;
	int ret;

	if (out)
		*out = NULL;
	if (flags & ~(D3D12_FENCE_FLAG_SHARED |
		      D3D12_FENCE_FLAG_SHARED_CROSS_ADAPTER |
		      D3D12_FENCE_FLAG_NON_MONITORED))
		return E_INVALIDARG;
	/* Cross-adapter sharing and unmonitored fences are not implemented. */
	if (flags & ~D3D12_FENCE_FLAG_SHARED)
		return E_NOTIMPL;
	/*
	 * A NULL ppFence only asks whether the arguments are good: S_FALSE,
	 * whatever riid is (as on Windows), and nothing is created.
	 */
	if (!out)
		return S_FALSE;
	if (!riid)
		return E_INVALIDARG;
	ret = d3dq_fence_create(d->dev, value,
				flags & D3D12_FENCE_FLAG_SHARED ?
				D3DQ_FENCE_FLAG_SHARED : D3DQ_FENCE_FLAG_NONE,
				&qf);
	if (ret)
		return hr_from_errno(d, ret);
	return wrap(d, qf, flags, riid, out);
}

HRESULT fence_open(struct d3d12_device *d, int fd, REFIID riid, void **out)
{
	struct d3dq_fence *qf;
	int ret;

	ret = d3dq_fence_import(d->dev, fd, &qf);
	if (ret)
		return hr_from_errno(d, ret);
	return wrap(d, qf, D3D12_FENCE_FLAG_SHARED, riid, out);
}
