/* SPDX-License-Identifier: MIT */
/*
 * libd3d12-d3dq private declarations.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The layer implements D3D12's COM interfaces in C on top of libd3dq's
 * public API (include/d3dq/d3dq.h) and nothing else. Each object is one
 * struct whose first member is its interface (a vtable pointer); the
 * vtables are the C declarations of Microsoft's header, which on non-Windows
 * targets also describe the C++ ABI (struct returns included), so C and C++
 * programs call the same functions.
 *
 * Locks: every object has its own mutex; the only nesting is
 * list->lock -> allocator->lock and list->lock -> device->va_lock, and
 * libd3dq is called with at most a list or allocator lock held.
 */
#ifndef D3D12_D3DQ_PRIVATE_H
#define D3D12_D3DQ_PRIVATE_H

#define COBJMACROS
/* d3d12.h uses MSVC's "#pragma region": only that warning is silenced. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include <wsl/winadapter.h>
#include <d3d12.h>
#pragma GCC diagnostic pop
#include <d3dq/d3d12_d3dq.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <d3dq/d3dq.h>

#define EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/*
 * The vtables are const; the headers' lpVtbl is not (their CONST_VTABLE
 * variant does not compile cleanly in C). Nothing writes through it.
 */
#define SET_VTBL(iface, vtbl) \
	((iface)->lpVtbl = (__typeof__((iface)->lpVtbl))(vtbl))

/* GPU virtual addresses of buffers are 64 KiB aligned, starting at 4 GiB. */
#define VA_ALIGN	D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT
#define VA_BASE		(1ull << 32)

/* ID3D12Object's private data and name (object.c). */
struct priv_entry {
	struct priv_entry *next;
	GUID guid;
	IUnknown *iface;	/* SetPrivateDataInterface: holds a reference */
	UINT size;
	unsigned char data[];
};

struct priv_store {
	pthread_mutex_t lock;
	struct priv_entry *head;
};

void priv_init(struct priv_store *p);
void priv_free(struct priv_store *p);
HRESULT priv_get(struct priv_store *p, REFGUID guid, UINT *size, void *data);
HRESULT priv_set(struct priv_store *p, REFGUID guid, UINT size,
		 const void *data);
HRESULT priv_set_iface(struct priv_store *p, REFGUID guid,
		       const IUnknown *iface);
HRESULT priv_set_name(struct priv_store *p, LPCWSTR name);

/*
 * IUnknown's QueryInterface for every object: E_POINTER, E_INVALIDARG,
 * then iface with a new reference if riid is IUnknown, ID3D12Object or
 * one of iids (up to OBJECT_IIDS, NULL-terminated), else E_NOINTERFACE.
 */
#define OBJECT_IIDS 8
HRESULT object_query(IUnknown *iface, const IID *const *iids, REFIID riid,
		     void **out);

/*
 * ID3D12Object's methods prefix_GetPrivateData, prefix_SetPrivateData,
 * prefix_SetPrivateDataInterface and prefix_SetName for interface type,
 * on the struct priv_store that priv(iface) returns; OBJECT_VTBL(prefix)
 * puts them in a vtable.
 */
#define DEFINE_OBJECT_METHODS(prefix, type, priv)			\
static HRESULT STDMETHODCALLTYPE					\
prefix##_GetPrivateData(type *iface, REFGUID guid, UINT *size,		\
			void *data)					\
{									\
	return priv_get(priv(iface), guid, size, data);			\
}									\
									\
static HRESULT STDMETHODCALLTYPE					\
prefix##_SetPrivateData(type *iface, REFGUID guid, UINT size,		\
			const void *data)				\
{									\
	return priv_set(priv(iface), guid, size, data);			\
}									\
									\
static HRESULT STDMETHODCALLTYPE					\
prefix##_SetPrivateDataInterface(type *iface, REFGUID guid,		\
				 const IUnknown *data)			\
{									\
	return priv_set_iface(priv(iface), guid, data);			\
}									\
									\
static HRESULT STDMETHODCALLTYPE					\
prefix##_SetName(type *iface, LPCWSTR name)				\
{									\
	return priv_set_name(priv(iface), name);			\
}

#define OBJECT_VTBL(prefix)						\
	.GetPrivateData = prefix##_GetPrivateData,			\
	.SetPrivateData = prefix##_SetPrivateData,			\
	.SetPrivateDataInterface = prefix##_SetPrivateDataInterface,	\
	.SetName = prefix##_SetName

/*
 * What every ID3D12DeviceChild has. Each kind of child has one const
 * struct child_class; its object is a struct whose first member is its
 * interface and which has a struct child named c.
 */
struct child;

struct child_class {
	/*
	 * The interfaces QueryInterface answers besides IUnknown and
	 * ID3D12Object (ID3D12DeviceChild, ...), NULL-terminated.
	 */
	const IID *iids[OBJECT_IIDS];
	/* offsetof(the object, c) */
	size_t offset;
	/*
	 * The last Release: frees what the object owns, before the child's
	 * private data and device reference go and the object is freed.
	 */
	void (*fini)(struct child *c);
};

struct child {
	_Atomic ULONG refs;
	const struct child_class *cls;
	struct d3d12_device *device;	/* holds a reference on the device */
	struct priv_store priv;
};

/* With one reference, the creator's: child_hand_out() passes it on. */
void child_init(struct child *c, const struct child_class *cls,
		struct d3d12_device *device);
HRESULT child_query(struct child *c, REFIID riid, void **out);
ULONG child_addref(struct child *c);
/* The last reference calls cls->fini, then frees the object. */
ULONG child_release(struct child *c);
/*
 * Hands a new object out as riid (QueryInterface) and drops the
 * creator's reference: if riid is not implemented, the object is gone.
 */
HRESULT child_hand_out(struct child *c, REFIID riid, void **out);
HRESULT child_get_device(struct child *c, REFIID riid, void **out);

/*
 * IUnknown's, ID3D12Object's and ID3D12DeviceChild's methods
 * (prefix_QueryInterface, ..., prefix_GetDevice) for interface type, whose
 * object impl(iface) returns; CHILD_VTBL(prefix) puts them in a vtable.
 */
#define DEFINE_CHILD_METHODS(prefix, type, impl)			\
static HRESULT STDMETHODCALLTYPE					\
prefix##_QueryInterface(type *iface, REFIID riid, void **out)		\
{									\
	return child_query(&impl(iface)->c, riid, out);			\
}									\
									\
static ULONG STDMETHODCALLTYPE prefix##_AddRef(type *iface)		\
{									\
	return child_addref(&impl(iface)->c);				\
}									\
									\
static ULONG STDMETHODCALLTYPE prefix##_Release(type *iface)		\
{									\
	return child_release(&impl(iface)->c);				\
}									\
									\
static struct priv_store *prefix##_priv(type *iface)			\
{									\
	return &impl(iface)->c.priv;					\
}									\
									\
DEFINE_OBJECT_METHODS(prefix, type, prefix##_priv)			\
									\
static HRESULT STDMETHODCALLTYPE					\
prefix##_GetDevice(type *iface, REFIID riid, void **out)		\
{									\
	return child_get_device(&impl(iface)->c, riid, out);		\
}

#define CHILD_VTBL(prefix)						\
	.QueryInterface = prefix##_QueryInterface,			\
	.AddRef = prefix##_AddRef,					\
	.Release = prefix##_Release,					\
	OBJECT_VTBL(prefix),						\
	.GetDevice = prefix##_GetDevice

/* COM helpers (object.c). */
/*
 * HRESULT of a libd3dq error: DXGI_ERROR_DEVICE_REMOVED once the device is
 * removed, else E_INVALIDARG, E_OUTOFMEMORY, ... (see d3d12.rst).
 */
HRESULT hr_from_errno(struct d3d12_device *device, int err);
/* A HANDLE is a file descriptor: NULL is -1, anything else 1..INT_MAX. */
HRESULT handle_to_fd(HANDLE h, int *fd);
HANDLE fd_to_handle(int fd);

/* device.c */
struct d3d12_device {
	ID3D12Device1 iface;
	_Atomic ULONG refs;
	struct priv_store priv;
	struct d3dq_device *dev;
	/*
	 * Created with a pfn_signal_event (d3d12_d3dq_create_device()): an
	 * event HANDLE is the program's token, not an eventfd.
	 */
	bool tokens;
	/*
	 * Why this layer removed the device (device_remove()), S_OK if it
	 * did not; libd3dq then says -ENODEV.
	 */
	_Atomic HRESULT removed_hr;

	/* d3d12_fork_gen at creation: another one's is a parent's device. */
	unsigned int fork_gen;

	/* Live buffers sorted by GPU virtual address (they only grow). */
	pthread_mutex_t va_lock;
	struct d3d12_resource **bufs;
	size_t nbufs, capbufs;
	uint64_t next_va;
};

/*
 * The number of forks this process comes from (device.c): a device
 * created before the last one is its parent's, whose locks may be held
 * by threads this process does not have.
 */
extern _Atomic unsigned int d3d12_fork_gen;

static inline bool device_inherited(const struct d3d12_device *d)
{
	return d->fork_gen != atomic_load_explicit(&d3d12_fork_gen,
						   memory_order_relaxed);
}

void device_ref(struct d3d12_device *d);
/*
 * Rule R15: remove the device because a call that returns nothing failed
 * with libd3dq's err; GetDeviceRemovedReason then says why, unless the
 * device was already removed for another reason.
 */
void device_remove(struct d3d12_device *d, int err);
void device_unref(struct d3d12_device *d);
HRESULT device_add_buffer(struct d3d12_device *d, struct d3d12_resource *r,
			  uint64_t size);
void device_del_buffer(struct d3d12_device *d, struct d3d12_resource *r);
/* The buffer holding [va, va + size), its offset in *offset; a reference. */
struct d3d12_resource *device_find_va(struct d3d12_device *d, uint64_t va,
				      uint64_t size, uint64_t *offset);

/* fence.c */
struct d3d12_fence {
	ID3D12Fence1 iface;
	struct child c;
	struct d3dq_fence *f;
	D3D12_FENCE_FLAGS flags;
};

HRESULT fence_create(struct d3d12_device *d, UINT64 value,
		     D3D12_FENCE_FLAGS flags, REFIID riid, void **out);
HRESULT fence_open(struct d3d12_device *d, int fd, REFIID riid, void **out);
/* NULL unless iface is one of this library's fences. */
struct d3d12_fence *fence_from(ID3D12Fence *iface);
struct d3d12_fence *fence_from_child(ID3D12DeviceChild *iface);

/* queue.c */
HRESULT queue_create(struct d3d12_device *d,
		     const D3D12_COMMAND_QUEUE_DESC *desc, REFIID riid,
		     void **out);

/* resource.c */
struct d3d12_resource {
	ID3D12Resource iface;
	struct child c;
	D3D12_RESOURCE_DESC desc;
	D3D12_HEAP_PROPERTIES heap;
	D3D12_HEAP_FLAGS heap_flags;
	struct d3dq_buffer *buf;
	unsigned char *map;
	uint64_t va;
	_Atomic int maps;
};

struct d3d12_query_heap {
	ID3D12QueryHeap iface;
	struct child c;
	D3D12_QUERY_HEAP_DESC desc;
	struct d3dq_buffer *buf;	/* one uint64_t per query */
};

HRESULT resource_create_committed(struct d3d12_device *d,
				  const D3D12_HEAP_PROPERTIES *heap,
				  D3D12_HEAP_FLAGS heap_flags,
				  const D3D12_RESOURCE_DESC *desc,
				  D3D12_RESOURCE_STATES state, REFIID riid,
				  void **out);
/* E_INVALIDARG unless desc describes a buffer D3D12 accepts. */
HRESULT resource_check_buffer_desc(const D3D12_RESOURCE_DESC *desc);
struct d3d12_resource *resource_from(ID3D12Resource *iface);
HRESULT query_heap_create(struct d3d12_device *d,
			  const D3D12_QUERY_HEAP_DESC *desc, REFIID riid,
			  void **out);
struct d3d12_query_heap *query_heap_from(ID3D12QueryHeap *iface);

/* allocator.c */
struct scratch_chunk;

struct d3d12_allocator {
	ID3D12CommandAllocator iface;
	struct child c;
	D3D12_COMMAND_LIST_TYPE type;
	pthread_mutex_t lock;
	struct d3d12_list *recording;	/* the list recording into it */
	struct scratch_chunk *chunks;	/* memory for immediate values */
};

HRESULT allocator_create(struct d3d12_device *d, D3D12_COMMAND_LIST_TYPE type,
			 REFIID riid, void **out);
struct d3d12_allocator *allocator_from(ID3D12CommandAllocator *iface);
/* Make list the allocator's recording list: E_INVALIDARG if another is. */
HRESULT allocator_attach(struct d3d12_allocator *a, struct d3d12_list *list);
void allocator_detach(struct d3d12_allocator *a, struct d3d12_list *list);
/*
 * Copy size bytes into memory the engine can read until the allocator is
 * reset or released: the buffer and offset to copy from.
 */
int allocator_stage(struct d3d12_allocator *a, const void *data,
		    uint64_t size, struct d3dq_buffer **buf,
		    uint64_t *offset);

/* cmdlist.c */
struct d3d12_list {
	ID3D12GraphicsCommandList2 iface;
	struct child c;
	D3D12_COMMAND_LIST_TYPE type;
	struct d3dq_cmdlist *l;

	pthread_mutex_t lock;
	bool recording;
	struct d3d12_allocator *allocator;	/* a reference while recording */
	HRESULT error;		/* first error while recording */
};

/*
 * Take a reference unless the count is already 0 (the object is being
 * destroyed by whoever dropped the last one): false then.
 */
static inline bool ref_get_unless_zero(_Atomic ULONG *refs)
{
	ULONG n = atomic_load(refs);

	while (n)
		if (atomic_compare_exchange_weak(refs, &n, n + 1))
			return true;
	return false;
}

HRESULT list_create(struct d3d12_device *d, UINT node_mask,
		    D3D12_COMMAND_LIST_TYPE type,
		    ID3D12CommandAllocator *allocator, REFIID riid, void **out);
struct d3d12_list *list_from(ID3D12CommandList *iface);

/*
 * S_OK for the types the engine runs (direct, compute, copy); E_NOTIMPL
 * for the ones D3D12 has and this layer does not (video, and bundles
 * where @bundle says the object may be one: lists and allocators, not
 * queues); E_INVALIDARG for anything else.
 */
static inline HRESULT list_type_check(D3D12_COMMAND_LIST_TYPE type,
				      bool bundle)
{
	switch (type) {
	case D3D12_COMMAND_LIST_TYPE_DIRECT:
	case D3D12_COMMAND_LIST_TYPE_COMPUTE:
	case D3D12_COMMAND_LIST_TYPE_COPY:
		return S_OK;
	case D3D12_COMMAND_LIST_TYPE_BUNDLE:
		return bundle ? E_NOTIMPL : E_INVALIDARG;
	case D3D12_COMMAND_LIST_TYPE_VIDEO_DECODE:
	case D3D12_COMMAND_LIST_TYPE_VIDEO_PROCESS:
	case D3D12_COMMAND_LIST_TYPE_VIDEO_ENCODE:
		return E_NOTIMPL;
	default:
		return E_INVALIDARG;
	}
}

#endif /* D3D12_D3DQ_PRIVATE_H */
