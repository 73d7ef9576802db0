// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: D3D12CreateDevice and ID3D12Device1.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * As on Windows, a process has one device per adapter: D3D12CreateDevice
 * returns the existing device (with a new reference) while it lives and is
 * not removed. Every device child holds a reference on its device.
 * d3d12_d3dq_create_device() creates another device each time, whose
 * events are the program's tokens (include/d3dq/d3d12_d3dq.h).
 *
 * fork(): the child's first D3D12CreateDevice opens a device of its own
 * (issue 39: it returned the parent's, on the parent's file, where the
 * child's hang or misuse removed the parent's device); the parent's
 * devices and their children answer DXGI_ERROR_DEVICE_REMOVED there
 * (libd3dq refuses them), and the methods that would take a lock of this
 * layer check device_inherited() first.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

/* The device has one node and no LUID of its own: a fixed one. */
#define ADAPTER_LUID_LOW 0x000d3d12

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct d3d12_device *cache;

_Atomic unsigned int d3d12_fork_gen;

/* The cache lock is taken across fork(); the child forgets the device. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&cache_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&cache_lock);
}

static void fork_child(void)
{
	atomic_fetch_add(&d3d12_fork_gen, 1);
	/* Still the program's, with the references it holds. */
	cache = NULL;
	pthread_mutex_unlock(&cache_lock);
}

static void fork_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static const ID3D12Device1Vtbl device_vtbl;

static struct d3d12_device *impl(ID3D12Device1 *iface)
{
	return container_of(iface, struct d3d12_device, iface);
}

void device_ref(struct d3d12_device *d)
{
	atomic_fetch_add(&d->refs, 1);
}

void device_remove(struct d3d12_device *d, int err)
{
	HRESULT reason, none = S_OK;

	switch (err) {
	case -ENOMEM:
	case -ENOSPC:
	case -EDQUOT:
		/* No memory, or a bound of the driver's (per queue, per user). */
		reason = E_OUTOFMEMORY;
		break;
	case -EINVAL:
	case -ENOENT:
	case -EBADF:
		/* The application's misuse. */
		reason = DXGI_ERROR_INVALID_CALL;
		break;
	default:
		/* -E2BIG: more than the driver takes in one submission. */
		reason = DXGI_ERROR_DRIVER_INTERNAL_ERROR;
		break;
	}
	if (d3dq_device_removed_reason(d->dev))
		return;
	/* Set before the removal, so that whoever sees it finds the reason. */
	atomic_compare_exchange_strong(&d->removed_hr, &none, reason);
	d3dq_device_remove(d->dev);
}

static void device_destroy(struct d3d12_device *d)
{
	pthread_mutex_lock(&cache_lock);
	if (cache == d)
		cache = NULL;
	pthread_mutex_unlock(&cache_lock);
	priv_free(&d->priv);
	d3dq_device_close(d->dev);
	if (!device_inherited(d))
		pthread_mutex_destroy(&d->va_lock);
	free(d->bufs);
	free(d);
}

void device_unref(struct d3d12_device *d)
{
	if (atomic_fetch_sub(&d->refs, 1) == 1)
		device_destroy(d);
}

/* A device; with @info, one whose events are the program's tokens. */
static HRESULT device_open(const struct d3d12_d3dq_device_create_info *info,
			   struct d3d12_device **out)
{
	struct d3d12_device *d = calloc(1, sizeof(*d));
	struct d3dq_device_desc desc = D3DQ_DEVICE_DESC_INIT;
	int ret;

	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!d)
		return E_OUTOFMEMORY;
	pthread_once(&once, fork_install);
	if (info) {
		/*
		 * The same function type: HRESULT is int32_t, HANDLE void *
		 * (an assignment, so that a platform where they differ
		 * does not compile).
		 */
		desc.signal_event = info->pfn_signal_event;
		desc.context = info->context;
		d->tokens = true;
	}
	ret = d3dq_device_open_desc(&desc, &d->dev);
	if (ret) {
		free(d);
		/* No d3dq device: as D3D12 without a suitable adapter. */
		return ret == -ENOMEM ? E_OUTOFMEMORY : DXGI_ERROR_UNSUPPORTED;
	}
	SET_VTBL(&d->iface, &device_vtbl);
	d->fork_gen = atomic_load(&d3d12_fork_gen);
	atomic_init(&d->refs, 1);
	atomic_init(&d->removed_hr, S_OK);
	priv_init(&d->priv);
	pthread_mutex_init(&d->va_lock, NULL);
	d->next_va = VA_BASE;
	*out = d;
	return S_OK;
}

/*
 * The highest feature level this device has: 11_0, D3D12's floor. Every
 * level asks for shaders, which d3dq does not run, so none is met in
 * full; 11_0 is the least a D3D12 program can ask for, and claiming more
 * would contradict what CheckFeatureSupport's D3D12_OPTIONS answers (no
 * typed UAV loads, binding tier 1, no ROVs: d3d12.rst, "Features").
 */
#define MAX_LEVEL D3D_FEATURE_LEVEL_11_0

/*
 * A level D3D12CreateDevice knows: S_OK for the supported ones,
 * DXGI_ERROR_UNSUPPORTED for the higher ones d3dq does not reach (as for
 * an adapter that lacks them), E_INVALIDARG for anything else (levels
 * below 11_0 do not exist in D3D12).
 */
static HRESULT level_check(D3D_FEATURE_LEVEL level)
{
	switch (level) {
	case D3D_FEATURE_LEVEL_1_0_CORE:
	case D3D_FEATURE_LEVEL_11_0:
	case D3D_FEATURE_LEVEL_11_1:
	case D3D_FEATURE_LEVEL_12_0:
	case D3D_FEATURE_LEVEL_12_1:
	case D3D_FEATURE_LEVEL_12_2:
		/* What CheckFeatureSupport(FEATURE_LEVELS) reports. */
		return level <= MAX_LEVEL ? S_OK : DXGI_ERROR_UNSUPPORTED;
	default:
		return E_INVALIDARG;
	}
}

/*
 * The creator's reference to @d as interface @riid in @out; with @out
 * NULL (the caller only asked whether creation would succeed), S_FALSE.
 */
static HRESULT hand_out(struct d3d12_device *d, REFIID riid, void **out)
{
	HRESULT hr = S_FALSE;

	if (out)
		hr = ID3D12Device1_QueryInterface(&d->iface, riid, out);
	device_unref(d);
	return hr;
}

EXPORT HRESULT D3D12CreateDevice(IUnknown *adapter,
				 D3D_FEATURE_LEVEL minimum_level, REFIID riid,
				 void **out)
{
	struct d3d12_device *d;
	HRESULT hr = S_OK;

	if (out)
		*out = NULL;
	/*
	 * There is no DXGI: only the default adapter exists. riid only
	 * matters when there is somewhere to put the device.
	 */
	if (adapter || (out && !riid))
		return E_INVALIDARG;
	hr = level_check(minimum_level);
	if (FAILED(hr))
		return hr;

	pthread_mutex_lock(&cache_lock);
	d = cache;
	if (d && (d3dq_device_removed_reason(d->dev) ||
		  !ref_get_unless_zero(&d->refs)))
		d = NULL;
	if (!d) {
		hr = device_open(NULL, &d);
		if (SUCCEEDED(hr))
			cache = d;
	}
	pthread_mutex_unlock(&cache_lock);
	if (FAILED(hr))
		return hr;

	return hand_out(d, riid, out);
}

/* The first published layout: size, level, pfn_signal_event, context. */
#define CREATE_INFO_SIZE_V0 24

_Static_assert(sizeof(struct d3d12_d3dq_device_create_info) ==
	       CREATE_INFO_SIZE_V0,
	       "a new member of d3d12_d3dq_device_create_info needs a new size");

EXPORT HRESULT
d3d12_d3dq_create_device(const struct d3d12_d3dq_device_create_info *info,
			 REFIID riid, void **out)
{
	struct d3d12_d3dq_device_create_info ci;
	const unsigned char *tail = (const unsigned char *)info;
	struct d3d12_device *d;
	HRESULT hr;
	UINT i;

	if (out)
		*out = NULL;
	if (!info || info->size < CREATE_INFO_SIZE_V0 || (out && !riid))
		return E_INVALIDARG;
	/* Members of a later layout are refused unless they are zero. */
	for (i = sizeof(ci); i < info->size; i++)
		if (tail[i])
			return E_INVALIDARG;
	memcpy(&ci, info, sizeof(ci));
	if (!ci.pfn_signal_event)
		return E_INVALIDARG;
	hr = level_check(ci.minimum_feature_level);
	if (FAILED(hr))
		return hr;
	hr = device_open(&ci, &d);
	if (FAILED(hr))
		return hr;
	return hand_out(d, riid, out);
}

EXPORT HRESULT D3D12GetDebugInterface(REFIID riid, void **out)
{
	(void)riid;
	if (out)
		*out = NULL;
	return E_NOINTERFACE;
}

/* --- IUnknown, ID3D12Object ------------------------------------------------ */

static const IID *const device_iids[] = {
	&IID_ID3D12Device, &IID_ID3D12Device1, NULL
};

static HRESULT STDMETHODCALLTYPE device_QueryInterface(ID3D12Device1 *iface,
						       REFIID riid, void **out)
{
	return object_query((IUnknown *)iface, device_iids, riid, out);
}

static ULONG STDMETHODCALLTYPE device_AddRef(ID3D12Device1 *iface)
{
	return atomic_fetch_add(&impl(iface)->refs, 1) + 1;
}

static ULONG STDMETHODCALLTYPE device_Release(ID3D12Device1 *iface)
{
	struct d3d12_device *d = impl(iface);
	ULONG refs = atomic_fetch_sub(&d->refs, 1) - 1;

	if (!refs)
		device_destroy(d);
	return refs;
}

static struct priv_store *device_priv(ID3D12Device1 *iface)
{
	return &impl(iface)->priv;
}

DEFINE_OBJECT_METHODS(device, ID3D12Device1, device_priv)

/* --- ID3D12Device: what the layer implements -------------------------------- */

static UINT STDMETHODCALLTYPE device_GetNodeCount(ID3D12Device1 *iface)
{
	return 1;
}

static HRESULT STDMETHODCALLTYPE
device_CreateCommandQueue(ID3D12Device1 *iface,
			  const D3D12_COMMAND_QUEUE_DESC *desc, REFIID riid,
			  void **out)
{
	return queue_create(impl(iface), desc, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateCommandAllocator(ID3D12Device1 *iface,
			      D3D12_COMMAND_LIST_TYPE type, REFIID riid,
			      void **out)
{
	return allocator_create(impl(iface), type, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateCommandList(ID3D12Device1 *iface, UINT node_mask,
			 D3D12_COMMAND_LIST_TYPE type,
			 ID3D12CommandAllocator *allocator,
			 ID3D12PipelineState *initial_state, REFIID riid,
			 void **out)
{
	if (out)
		*out = NULL;
	/* No pipeline state can exist (CreateXxxPipelineState). */
	if (initial_state)
		return E_INVALIDARG;
	return list_create(impl(iface), node_mask, type, allocator, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateCommittedResource(ID3D12Device1 *iface,
			       const D3D12_HEAP_PROPERTIES *heap,
			       D3D12_HEAP_FLAGS heap_flags,
			       const D3D12_RESOURCE_DESC *desc,
			       D3D12_RESOURCE_STATES state,
			       const D3D12_CLEAR_VALUE *clear, REFIID riid,
			       void **out)
{
	if (out)
		*out = NULL;
	/* Clear values are for render targets and depth buffers. */
	if (clear)
		return E_INVALIDARG;
	return resource_create_committed(impl(iface), heap, heap_flags, desc,
					 state, riid, out);
}

static HRESULT STDMETHODCALLTYPE device_CreateFence(ID3D12Device1 *iface,
						    UINT64 value,
						    D3D12_FENCE_FLAGS flags,
						    REFIID riid, void **out)
{
	return fence_create(impl(iface), value, flags, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateQueryHeap(ID3D12Device1 *iface, const D3D12_QUERY_HEAP_DESC *desc,
		       REFIID riid, void **out)
{
	return query_heap_create(impl(iface), desc, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_GetDeviceRemovedReason(ID3D12Device1 *iface)
{
	struct d3d12_device *d = impl(iface);
	HRESULT mine;

	switch (d3dq_device_removed_reason(d->dev)) {
	case 0:
		return S_OK;
	case -ETIMEDOUT:
		return DXGI_ERROR_DEVICE_HUNG;
	case -ENODEV:
		/* Only this layer calls d3dq_device_remove(). */
		mine = atomic_load(&d->removed_hr);
		return mine != S_OK ? mine : DXGI_ERROR_DEVICE_REMOVED;
	case -EINVAL:
		return DXGI_ERROR_INVALID_CALL;
	case -ECANCELED:
		return DXGI_ERROR_DEVICE_RESET;
	default:
		return DXGI_ERROR_DRIVER_INTERNAL_ERROR;
	}
}

/*
 * Shared fences: the HANDLE is a file descriptor of the fence's syncobj.
 * pAttributes is ignored (file descriptors carry no security descriptor);
 * named objects do not exist.
 */
static HRESULT STDMETHODCALLTYPE
device_CreateSharedHandle(ID3D12Device1 *iface, ID3D12DeviceChild *object,
			  const SECURITY_ATTRIBUTES *attributes, DWORD access,
			  LPCWSTR name, HANDLE *handle)
{
	struct d3d12_device *d = impl(iface);
	struct d3d12_fence *f;
	int fd, ret;

	if (!handle)
		return E_INVALIDARG;
	*handle = NULL;
	if (name)
		return E_NOTIMPL;
	f = fence_from_child(object);
	/* Shared resources and heaps are not implemented. */
	if (!f && resource_from((ID3D12Resource *)object))
		return E_NOTIMPL;
	if (!f || f->c.device != d || !(f->flags & D3D12_FENCE_FLAG_SHARED) ||
	    access != GENERIC_ALL)
		return E_INVALIDARG;
	ret = d3dq_fence_export(f->f, &fd);
	if (ret)
		return hr_from_errno(d, ret);
	*handle = fd_to_handle(fd);
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE device_OpenSharedHandle(ID3D12Device1 *iface,
							 HANDLE handle,
							 REFIID riid,
							 void **out)
{
	int fd;

	if (out)
		*out = NULL;
	if (!out || !riid || !handle || FAILED(handle_to_fd(handle, &fd)))
		return E_INVALIDARG;
	return fence_open(impl(iface), fd, riid, out);
}

static HRESULT STDMETHODCALLTYPE
device_SetEventOnMultipleFenceCompletion(ID3D12Device1 *iface,
					 ID3D12Fence *const *fences,
					 const UINT64 *values, UINT count,
					 D3D12_MULTIPLE_FENCE_WAIT_FLAGS flags,
					 HANDLE event)
{
	struct d3d12_device *d = impl(iface);
	struct d3dq_fence *stack[16], **fs = stack;
	HRESULT hr = S_OK;
	int fd = -1, ret;
	UINT i;

	if ((count && (!fences || !values)) ||
	    (flags != D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL &&
	     flags != D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY) ||
	    (!d->tokens && FAILED(handle_to_fd(event, &fd))))
		return E_INVALIDARG;
	if (count > sizeof(stack) / sizeof(stack[0])) {
		fs = calloc(count, sizeof(*fs));
		if (!fs)
			return E_OUTOFMEMORY;
	}
	for (i = 0; i < count; i++) {
		struct d3d12_fence *f = fence_from(fences[i]);

		if (!f || f->c.device != d) {
			hr = E_INVALIDARG;
			goto out;
		}
		fs[i] = f->f;
	}
	/*
	 * A blocking call outlives the fences' Release (R14), and perhaps
	 * the program's last reference of the device: its own keeps it.
	 */
	device_ref(d);
	/* The flags have libd3dq's numbers: ALL 0, ANY 1. */
	if (d->tokens)
		ret = d3dq_device_set_token_on_multiple_fence_completion(
			d->dev, fs, values, count, flags, event);
	else
		ret = d3dq_device_set_event_on_multiple_fence_completion(
			d->dev, fs, values, count, flags, fd);
	hr = hr_from_errno(d, ret);
	device_unref(d);
out:
	if (fs != stack)
		free(fs);
	return hr;
}

static LUID STDMETHODCALLTYPE device_GetAdapterLuid(ID3D12Device1 *iface)
{
	LUID luid = { .LowPart = ADAPTER_LUID_LOW, .HighPart = 0 };

	return luid;
}

/* --- CheckFeatureSupport ----------------------------------------------------- */

/*
 * The features a program queries before anything else, answered for what
 * d3dq is: an engine that copies buffers and writes values and timestamps,
 * in cache-coherent system memory, with no shaders, textures, descriptors
 * or heaps (d3d12.rst, "Features"). Others are E_INVALIDARG, as from a
 * runtime that does not know them; never E_NOTIMPL.
 */

/*
 * Address bits per resource: those of the driver's largest buffer
 * (max_bo_size, 64 MiB by default, 1 GiB at most), rounded down so that
 * a resource of 2^bits bytes can be made; 30 if it cannot be read.
 */
#define VA_BITS_PER_RESOURCE	30
/* Addresses are 64-bit numbers the layer hands out from 4 GiB up. */
#define VA_BITS_PER_PROCESS	64

static UINT va_bits_per_resource(struct d3d12_device *d)
{
	uint64_t max;
	UINT bits = 0;

	if (d3dq_device_get_max_buffer_size(d->dev, &max) || !max)
		return VA_BITS_PER_RESOURCE;
	while (bits < 63 && max >> (bits + 1))
		bits++;
	return bits;
}

static HRESULT options(struct d3d12_device *d,
		       D3D12_FEATURE_DATA_D3D12_OPTIONS *o)
{
	memset(o, 0, sizeof(*o));
	o->MinPrecisionSupport = D3D12_SHADER_MIN_PRECISION_SUPPORT_NONE;
	o->TiledResourcesTier = D3D12_TILED_RESOURCES_TIER_NOT_SUPPORTED;
	/* The lowest tiers there are: no descriptor or heap exists. */
	o->ResourceBindingTier = D3D12_RESOURCE_BINDING_TIER_1;
	o->ResourceHeapTier = D3D12_RESOURCE_HEAP_TIER_1;
	o->ConservativeRasterizationTier =
		D3D12_CONSERVATIVE_RASTERIZATION_TIER_NOT_SUPPORTED;
	o->CrossNodeSharingTier = D3D12_CROSS_NODE_SHARING_TIER_NOT_SUPPORTED;
	o->MaxGPUVirtualAddressBitsPerResource = va_bits_per_resource(d);
	return S_OK;
}

/*
 * As Windows answers (vkd3d's test_check_feature_support): the highest
 * requested level not above the device's, whatever the values (9_3 when
 * only 9_x are asked for, 0x3000 from {0, 0x3000}).
 */
static HRESULT feature_levels(D3D12_FEATURE_DATA_FEATURE_LEVELS *l)
{
	D3D_FEATURE_LEVEL best = 0;
	UINT i;

	if (!l->NumFeatureLevels || !l->pFeatureLevelsRequested)
		return E_INVALIDARG;
	for (i = 0; i < l->NumFeatureLevels; i++) {
		D3D_FEATURE_LEVEL level = l->pFeatureLevelsRequested[i];

		if (level <= MAX_LEVEL && level > best)
			best = level;
	}
	/* Only higher levels (or 0): what CD3DX12FeatureSupport takes for none. */
	if (!best)
		return DXGI_ERROR_UNSUPPORTED;
	l->MaxSupportedFeatureLevel = best;
	return S_OK;
}

/*
 * NORMAL and HIGH on the three queue types the engine runs;
 * GLOBAL_REALTIME when the driver offers it to this process (it needs
 * CAP_SYS_NICE): a queue is created to find out, as CreateCommandQueue
 * would.
 */
static HRESULT queue_priority(struct d3d12_device *d,
			      D3D12_FEATURE_DATA_COMMAND_QUEUE_PRIORITY *p)
{
	struct d3dq_queue_desc desc = D3DQ_QUEUE_DESC_INIT;
	struct d3dq_queue *q;
	HRESULT hr = list_type_check(p->CommandListType, true);
	int ret;

	if (hr == E_INVALIDARG)
		return hr;
	switch (p->Priority) {
	case D3D12_COMMAND_QUEUE_PRIORITY_NORMAL:
	case D3D12_COMMAND_QUEUE_PRIORITY_HIGH:
	case D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME:
		break;
	default:
		return E_INVALIDARG;
	}
	/* Bundles and video queues do not exist here. */
	if (hr != S_OK || p->CommandListType == D3D12_COMMAND_LIST_TYPE_BUNDLE) {
		p->PriorityForTypeIsSupported = FALSE;
		return S_OK;
	}
	if (p->Priority != D3D12_COMMAND_QUEUE_PRIORITY_GLOBAL_REALTIME) {
		p->PriorityForTypeIsSupported = TRUE;
		return S_OK;
	}
	desc.type = p->CommandListType;
	desc.priority = p->Priority;
	ret = d3dq_queue_create(d->dev, &desc, &q);
	if (!ret)
		d3dq_queue_destroy(q);
	else if (ret != -EACCES && ret != -EPERM && ret != -EOPNOTSUPP)
		return hr_from_errno(d, ret);
	p->PriorityForTypeIsSupported = !ret;
	return S_OK;
}

/* The size must be the structure's: ARCHITECTURE1 extends ARCHITECTURE. */
#define FEATURE(type)							\
	do {								\
		if (size != sizeof(type))				\
			return E_INVALIDARG;				\
	} while (0)

static HRESULT STDMETHODCALLTYPE
device_CheckFeatureSupport(ID3D12Device1 *iface, D3D12_FEATURE feature,
			   void *data, UINT size)
{
	struct d3d12_device *d = impl(iface);

	if (!data)
		return E_INVALIDARG;
	switch (feature) {
	case D3D12_FEATURE_D3D12_OPTIONS:
		FEATURE(D3D12_FEATURE_DATA_D3D12_OPTIONS);
		return options(d, data);
	case D3D12_FEATURE_ARCHITECTURE:
	case D3D12_FEATURE_ARCHITECTURE1: {
		D3D12_FEATURE_DATA_ARCHITECTURE1 *a = data;

		if (feature == D3D12_FEATURE_ARCHITECTURE)
			FEATURE(D3D12_FEATURE_DATA_ARCHITECTURE);
		else
			FEATURE(D3D12_FEATURE_DATA_ARCHITECTURE1);
		/* One node. */
		if (a->NodeIndex)
			return E_INVALIDARG;
		/* The engine is the CPU: system memory, coherent caches. */
		a->TileBasedRenderer = FALSE;
		a->UMA = TRUE;
		a->CacheCoherentUMA = TRUE;
		/*
		 * The engine writes through the kernel's mappings, which do
		 * not honour the process's write-watch or read-only pages.
		 */
		if (feature == D3D12_FEATURE_ARCHITECTURE1)
			a->IsolatedMMU = FALSE;
		return S_OK;
	}
	case D3D12_FEATURE_FEATURE_LEVELS:
		FEATURE(D3D12_FEATURE_DATA_FEATURE_LEVELS);
		return feature_levels(data);
	case D3D12_FEATURE_GPU_VIRTUAL_ADDRESS_SUPPORT: {
		D3D12_FEATURE_DATA_GPU_VIRTUAL_ADDRESS_SUPPORT *va = data;

		FEATURE(D3D12_FEATURE_DATA_GPU_VIRTUAL_ADDRESS_SUPPORT);
		va->MaxGPUVirtualAddressBitsPerResource = va_bits_per_resource(d);
		va->MaxGPUVirtualAddressBitsPerProcess = VA_BITS_PER_PROCESS;
		return S_OK;
	}
	case D3D12_FEATURE_COMMAND_QUEUE_PRIORITY:
		FEATURE(D3D12_FEATURE_DATA_COMMAND_QUEUE_PRIORITY);
		return queue_priority(d, data);
	default:
		return E_INVALIDARG;
	}
}

#undef FEATURE

/* --- Answers about buffers (the only resources) ---------------------------- */

static D3D12_RESOURCE_ALLOCATION_INFO STDMETHODCALLTYPE
device_GetResourceAllocationInfo(ID3D12Device1 *iface, UINT visible_mask,
				 UINT count, const D3D12_RESOURCE_DESC *descs)
{
	D3D12_RESOURCE_ALLOCATION_INFO info = {
		.SizeInBytes = 0,
		.Alignment = VA_ALIGN,
	};
	UINT i;

	for (i = 0; i < count; i++) {
		uint64_t size;

		if (!descs || FAILED(resource_check_buffer_desc(&descs[i]))) {
			info.SizeInBytes = UINT64_MAX;
			return info;
		}
		size = (descs[i].Width + VA_ALIGN - 1) & ~(uint64_t)(VA_ALIGN - 1);
		info.SizeInBytes += size;
	}
	return info;
}

/* The engine is the CPU: memory is cache-coherent and of one pool. */
static D3D12_HEAP_PROPERTIES STDMETHODCALLTYPE
device_GetCustomHeapProperties(ID3D12Device1 *iface, UINT node_mask,
			       D3D12_HEAP_TYPE type)
{
	D3D12_HEAP_PROPERTIES p = {
		.Type = D3D12_HEAP_TYPE_CUSTOM,
		.CPUPageProperty = D3D12_CPU_PAGE_PROPERTY_UNKNOWN,
		.MemoryPoolPreference = D3D12_MEMORY_POOL_UNKNOWN,
		.CreationNodeMask = 1,
		.VisibleNodeMask = 1,
	};

	switch (type) {
	case D3D12_HEAP_TYPE_DEFAULT:
		p.CPUPageProperty = D3D12_CPU_PAGE_PROPERTY_NOT_AVAILABLE;
		p.MemoryPoolPreference = D3D12_MEMORY_POOL_L0;
		break;
	case D3D12_HEAP_TYPE_UPLOAD:
	case D3D12_HEAP_TYPE_READBACK:
		p.CPUPageProperty = D3D12_CPU_PAGE_PROPERTY_WRITE_BACK;
		p.MemoryPoolPreference = D3D12_MEMORY_POOL_L0;
		break;
	default:
		break;
	}
	return p;
}

/* A buffer is one subresource of one row. */
static void STDMETHODCALLTYPE
device_GetCopyableFootprints(ID3D12Device1 *iface,
			     const D3D12_RESOURCE_DESC *desc, UINT first,
			     UINT count, UINT64 base_offset,
			     D3D12_PLACED_SUBRESOURCE_FOOTPRINT *layouts,
			     UINT *rows, UINT64 *row_size, UINT64 *total)
{
	bool ok = desc && SUCCEEDED(resource_check_buffer_desc(desc)) &&
		  first == 0 && count == 1 && desc->Width <= UINT32_MAX - 255;

	if (layouts && ok) {
		memset(layouts, 0, sizeof(*layouts));
		layouts->Offset = base_offset;
		layouts->Footprint.Format = DXGI_FORMAT_UNKNOWN;
		layouts->Footprint.Width = (UINT)desc->Width;
		layouts->Footprint.Height = 1;
		layouts->Footprint.Depth = 1;
		layouts->Footprint.RowPitch = (UINT)((desc->Width + 255) & ~255ull);
	}
	if (rows)
		*rows = ok ? 1 : UINT_MAX;
	if (row_size)
		*row_size = ok ? desc->Width : UINT64_MAX;
	if (total)
		*total = ok ? desc->Width : UINT64_MAX;
}

/* No resource is tiled. */
static void STDMETHODCALLTYPE
device_GetResourceTiling(ID3D12Device1 *iface, ID3D12Resource *resource,
			 UINT *tiles, D3D12_PACKED_MIP_INFO *packed,
			 D3D12_TILE_SHAPE *shape, UINT *subresource_tilings,
			 UINT first, D3D12_SUBRESOURCE_TILING *tilings)
{
	if (tiles)
		*tiles = 0;
	if (packed)
		memset(packed, 0, sizeof(*packed));
	if (shape)
		memset(shape, 0, sizeof(*shape));
	if (subresource_tilings)
		*subresource_tilings = 0;
}

/* Memory is always resident: residency calls change nothing. */
static HRESULT STDMETHODCALLTYPE device_MakeResident(ID3D12Device1 *iface,
						     UINT count,
						     ID3D12Pageable *const *objects)
{
	return count && !objects ? E_INVALIDARG : S_OK;
}

static HRESULT STDMETHODCALLTYPE device_Evict(ID3D12Device1 *iface,
					      UINT count,
					      ID3D12Pageable *const *objects)
{
	return count && !objects ? E_INVALIDARG : S_OK;
}

static HRESULT STDMETHODCALLTYPE
device_SetResidencyPriority(ID3D12Device1 *iface, UINT count,
			    ID3D12Pageable *const *objects,
			    const D3D12_RESIDENCY_PRIORITY *priorities)
{
	return count && (!objects || !priorities) ? E_INVALIDARG : S_OK;
}

/* The engine clock (CLOCK_MONOTONIC) is always stable. */
static HRESULT STDMETHODCALLTYPE device_SetStablePowerState(ID3D12Device1 *iface,
							    BOOL enable)
{
	return S_OK;
}

/* Descriptors: no descriptor heap can be created, so none is ever used. */
static UINT STDMETHODCALLTYPE
device_GetDescriptorHandleIncrementSize(ID3D12Device1 *iface,
					D3D12_DESCRIPTOR_HEAP_TYPE type)
{
	return 0;
}

static void STDMETHODCALLTYPE
device_CreateConstantBufferView(ID3D12Device1 *iface,
				const D3D12_CONSTANT_BUFFER_VIEW_DESC *desc,
				D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CreateShaderResourceView(ID3D12Device1 *iface, ID3D12Resource *resource,
				const D3D12_SHADER_RESOURCE_VIEW_DESC *desc,
				D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CreateUnorderedAccessView(ID3D12Device1 *iface,
				 ID3D12Resource *resource,
				 ID3D12Resource *counter,
				 const D3D12_UNORDERED_ACCESS_VIEW_DESC *desc,
				 D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CreateRenderTargetView(ID3D12Device1 *iface, ID3D12Resource *resource,
			      const D3D12_RENDER_TARGET_VIEW_DESC *desc,
			      D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CreateDepthStencilView(ID3D12Device1 *iface, ID3D12Resource *resource,
			      const D3D12_DEPTH_STENCIL_VIEW_DESC *desc,
			      D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CreateSampler(ID3D12Device1 *iface, const D3D12_SAMPLER_DESC *desc,
		     D3D12_CPU_DESCRIPTOR_HANDLE dst)
{
}

static void STDMETHODCALLTYPE
device_CopyDescriptors(ID3D12Device1 *iface, UINT dst_count,
		       const D3D12_CPU_DESCRIPTOR_HANDLE *dst_starts,
		       const UINT *dst_sizes, UINT src_count,
		       const D3D12_CPU_DESCRIPTOR_HANDLE *src_starts,
		       const UINT *src_sizes, D3D12_DESCRIPTOR_HEAP_TYPE type)
{
}

static void STDMETHODCALLTYPE
device_CopyDescriptorsSimple(ID3D12Device1 *iface, UINT count,
			     D3D12_CPU_DESCRIPTOR_HANDLE dst,
			     D3D12_CPU_DESCRIPTOR_HANDLE src,
			     D3D12_DESCRIPTOR_HEAP_TYPE type)
{
}

/* --- E_NOTIMPL: shaders, pipelines, descriptors, heaps, features ----------- */

/* Every one clears its output pointer, as COM wants of a failing call. */
#define NOTIMPL_OUT(out) \
	do { \
		if (out) \
			*(out) = NULL; \
		return E_NOTIMPL; \
	} while (0)

static HRESULT STDMETHODCALLTYPE
device_CreateGraphicsPipelineState(ID3D12Device1 *iface,
				   const D3D12_GRAPHICS_PIPELINE_STATE_DESC *desc,
				   REFIID riid, void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateComputePipelineState(ID3D12Device1 *iface,
				  const D3D12_COMPUTE_PIPELINE_STATE_DESC *desc,
				  REFIID riid, void **out)
{
	NOTIMPL_OUT(out);
}


static HRESULT STDMETHODCALLTYPE
device_CreateDescriptorHeap(ID3D12Device1 *iface,
			    const D3D12_DESCRIPTOR_HEAP_DESC *desc, REFIID riid,
			    void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateRootSignature(ID3D12Device1 *iface, UINT node_mask,
			   const void *blob, SIZE_T size, REFIID riid,
			   void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE device_CreateHeap(ID3D12Device1 *iface,
						   const D3D12_HEAP_DESC *desc,
						   REFIID riid, void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_CreatePlacedResource(ID3D12Device1 *iface, ID3D12Heap *heap,
			    UINT64 offset, const D3D12_RESOURCE_DESC *desc,
			    D3D12_RESOURCE_STATES state,
			    const D3D12_CLEAR_VALUE *clear, REFIID riid,
			    void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_CreateReservedResource(ID3D12Device1 *iface,
			      const D3D12_RESOURCE_DESC *desc,
			      D3D12_RESOURCE_STATES state,
			      const D3D12_CLEAR_VALUE *clear, REFIID riid,
			      void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_OpenSharedHandleByName(ID3D12Device1 *iface, LPCWSTR name,
			      DWORD access, HANDLE *handle)
{
	NOTIMPL_OUT(handle);
}

static HRESULT STDMETHODCALLTYPE
device_CreateCommandSignature(ID3D12Device1 *iface,
			      const D3D12_COMMAND_SIGNATURE_DESC *desc,
			      ID3D12RootSignature *root_signature, REFIID riid,
			      void **out)
{
	NOTIMPL_OUT(out);
}

static HRESULT STDMETHODCALLTYPE
device_CreatePipelineLibrary(ID3D12Device1 *iface, const void *blob,
			     SIZE_T size, REFIID riid, void **out)
{
	NOTIMPL_OUT(out);
}

static const ID3D12Device1Vtbl device_vtbl = {
	/* IUnknown */
	.QueryInterface = device_QueryInterface,
	.AddRef = device_AddRef,
	.Release = device_Release,
	/* ID3D12Object */
	OBJECT_VTBL(device),
	/* ID3D12Device */
	.GetNodeCount = device_GetNodeCount,
	.CreateCommandQueue = device_CreateCommandQueue,
	.CreateCommandAllocator = device_CreateCommandAllocator,
	.CreateGraphicsPipelineState = device_CreateGraphicsPipelineState,
	.CreateComputePipelineState = device_CreateComputePipelineState,
	.CreateCommandList = device_CreateCommandList,
	.CheckFeatureSupport = device_CheckFeatureSupport,
	.CreateDescriptorHeap = device_CreateDescriptorHeap,
	.GetDescriptorHandleIncrementSize =
		device_GetDescriptorHandleIncrementSize,
	.CreateRootSignature = device_CreateRootSignature,
	.CreateConstantBufferView = device_CreateConstantBufferView,
	.CreateShaderResourceView = device_CreateShaderResourceView,
	.CreateUnorderedAccessView = device_CreateUnorderedAccessView,
	.CreateRenderTargetView = device_CreateRenderTargetView,
	.CreateDepthStencilView = device_CreateDepthStencilView,
	.CreateSampler = device_CreateSampler,
	.CopyDescriptors = device_CopyDescriptors,
	.CopyDescriptorsSimple = device_CopyDescriptorsSimple,
	.GetResourceAllocationInfo = device_GetResourceAllocationInfo,
	.GetCustomHeapProperties = device_GetCustomHeapProperties,
	.CreateCommittedResource = device_CreateCommittedResource,
	.CreateHeap = device_CreateHeap,
	.CreatePlacedResource = device_CreatePlacedResource,
	.CreateReservedResource = device_CreateReservedResource,
	.CreateSharedHandle = device_CreateSharedHandle,
	.OpenSharedHandle = device_OpenSharedHandle,
	.OpenSharedHandleByName = device_OpenSharedHandleByName,
	.MakeResident = device_MakeResident,
	.Evict = device_Evict,
	.CreateFence = device_CreateFence,
	.GetDeviceRemovedReason = device_GetDeviceRemovedReason,
	.GetCopyableFootprints = device_GetCopyableFootprints,
	.CreateQueryHeap = device_CreateQueryHeap,
	.SetStablePowerState = device_SetStablePowerState,
	.CreateCommandSignature = device_CreateCommandSignature,
	.GetResourceTiling = device_GetResourceTiling,
	.GetAdapterLuid = device_GetAdapterLuid,
	/* ID3D12Device1 */
	.CreatePipelineLibrary = device_CreatePipelineLibrary,
	.SetEventOnMultipleFenceCompletion =
		device_SetEventOnMultipleFenceCompletion,
	.SetResidencyPriority = device_SetResidencyPriority,
};

/* --- GPU virtual addresses -------------------------------------------------- */

HRESULT device_add_buffer(struct d3d12_device *d, struct d3d12_resource *r,
			  uint64_t size)
{
	uint64_t span = (size + VA_ALIGN - 1) & ~(uint64_t)(VA_ALIGN - 1);
	HRESULT hr = S_OK;

	pthread_mutex_lock(&d->va_lock);
	if (d->nbufs == d->capbufs) {
		size_t cap = d->capbufs ? d->capbufs * 2 : 16;
		struct d3d12_resource **bufs;

		bufs = realloc(d->bufs, cap * sizeof(*bufs));
		if (!bufs) {
			hr = E_OUTOFMEMORY;
			goto out;
		}
		d->bufs = bufs;
		d->capbufs = cap;
	}
	if (span > UINT64_MAX - d->next_va) {
		hr = E_OUTOFMEMORY;
		goto out;
	}
	/* Addresses only grow, so appending keeps the array sorted. */
	r->va = d->next_va;
	d->next_va += span;
	d->bufs[d->nbufs++] = r;
out:
	pthread_mutex_unlock(&d->va_lock);
	return hr;
}

/* The index of the last buffer starting at or below va, or -1. */
static ptrdiff_t va_search(struct d3d12_device *d, uint64_t va)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)d->nbufs - 1, found = -1;

	while (lo <= hi) {
		ptrdiff_t mid = lo + (hi - lo) / 2;

		if (d->bufs[mid]->va <= va) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

void device_del_buffer(struct d3d12_device *d, struct d3d12_resource *r)
{
	ptrdiff_t i;

	/* A parent's (fork): its lock may be held by a thread not here. */
	if (device_inherited(d))
		return;
	pthread_mutex_lock(&d->va_lock);
	i = va_search(d, r->va);
	if (i >= 0 && d->bufs[i] == r) {
		memmove(&d->bufs[i], &d->bufs[i + 1],
			(d->nbufs - (size_t)i - 1) * sizeof(*d->bufs));
		d->nbufs--;
	}
	pthread_mutex_unlock(&d->va_lock);
}

struct d3d12_resource *device_find_va(struct d3d12_device *d, uint64_t va,
				      uint64_t size, uint64_t *offset)
{
	struct d3d12_resource *r = NULL;
	ptrdiff_t i;

	pthread_mutex_lock(&d->va_lock);
	i = va_search(d, va);
	if (i >= 0) {
		struct d3d12_resource *b = d->bufs[i];
		uint64_t off = va - b->va;

		/* Not one that is being destroyed. */
		if (off <= b->desc.Width && size <= b->desc.Width - off &&
		    ref_get_unless_zero(&b->c.refs)) {
			r = b;
			*offset = off;
		}
	}
	pthread_mutex_unlock(&d->va_lock);
	return r;
}
