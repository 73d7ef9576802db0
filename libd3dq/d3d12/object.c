// SPDX-License-Identifier: MIT
/*
 * libd3d12-d3dq: what every object shares: QueryInterface, ID3D12Object's
 * private data and names, a device child's reference count, last Release
 * and ID3D12DeviceChild (the methods on them are made by
 * DEFINE_CHILD_METHODS and DEFINE_OBJECT_METHODS in private.h), and the
 * mapping of libd3dq's errors and file descriptors to HRESULTs and HANDLEs.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "private.h"

static bool iid_equal(REFIID a, const IID *b)
{
	return !memcmp(a, b, sizeof(*b));
}

static bool iid_in(REFIID riid, const IID *const *iids)
{
	size_t i;

	for (i = 0; i < OBJECT_IIDS && iids[i]; i++)
		if (iid_equal(riid, iids[i]))
			return true;
	return false;
}

HRESULT object_query(IUnknown *iface, const IID *const *iids, REFIID riid,
		     void **out)
{
	if (!out)
		return E_POINTER;
	*out = NULL;
	if (!riid)
		return E_INVALIDARG;
	if (!iid_equal(riid, &IID_IUnknown) &&
	    !iid_equal(riid, &IID_ID3D12Object) && !iid_in(riid, iids))
		return E_NOINTERFACE;
	IUnknown_AddRef(iface);
	*out = iface;
	return S_OK;
}

void priv_init(struct priv_store *p)
{
	pthread_mutex_init(&p->lock, NULL);
	p->head = NULL;
}

static void entry_free(struct priv_entry *e)
{
	if (e->iface)
		IUnknown_Release(e->iface);
	free(e);
}

void priv_free(struct priv_store *p)
{
	struct priv_entry *e, *next;

	for (e = p->head; e; e = next) {
		next = e->next;
		entry_free(e);
	}
	p->head = NULL;
	pthread_mutex_destroy(&p->lock);
}

/* Unlinks and returns the entry for guid. Called with p->lock held. */
static struct priv_entry *take(struct priv_store *p, REFGUID guid)
{
	struct priv_entry **pos, *e;

	for (pos = &p->head; (e = *pos); pos = &e->next) {
		if (iid_equal(guid, &e->guid)) {
			*pos = e->next;
			return e;
		}
	}
	return NULL;
}

/*
 * GetPrivateData: with pData NULL, the size only; a buffer too small gets
 * DXGI_ERROR_MORE_DATA and the size; an unknown guid DXGI_ERROR_NOT_FOUND
 * and size 0. An interface is returned with a new reference.
 */
HRESULT priv_get(struct priv_store *p, REFGUID guid, UINT *size, void *data)
{
	struct priv_entry *e;
	HRESULT hr = DXGI_ERROR_NOT_FOUND;

	if (!guid || !size)
		return E_INVALIDARG;
	pthread_mutex_lock(&p->lock);
	for (e = p->head; e; e = e->next)
		if (iid_equal(guid, &e->guid))
			break;
	if (!e) {
		*size = 0;
	} else if (!data) {
		*size = e->size;
		hr = S_OK;
	} else if (*size < e->size) {
		*size = e->size;
		hr = DXGI_ERROR_MORE_DATA;
	} else {
		*size = e->size;
		memcpy(data, e->data, e->size);
		if (e->iface)
			IUnknown_AddRef(e->iface);
		hr = S_OK;
	}
	pthread_mutex_unlock(&p->lock);
	return hr;
}

/*
 * Replaces the entry for guid with size bytes of data (iface: the
 * interface they hold a reference to), or with data NULL deletes it: S_OK,
 * or S_FALSE if there was nothing to delete (as D3D12 answers).
 */
static HRESULT store(struct priv_store *p, REFGUID guid, UINT size,
		     const void *data, IUnknown *iface)
{
	struct priv_entry *e = NULL, *old;

	if (!guid)
		return E_INVALIDARG;
	if (data) {
		e = malloc(sizeof(*e) + size);
		if (!e)
			return E_OUTOFMEMORY;
		e->guid = *guid;
		e->size = size;
		e->iface = iface;
		memcpy(e->data, data, size);
		if (iface)
			IUnknown_AddRef(iface);
	}
	pthread_mutex_lock(&p->lock);
	old = take(p, guid);
	if (e) {
		e->next = p->head;
		p->head = e;
	}
	pthread_mutex_unlock(&p->lock);
	if (!e && !old)
		return S_FALSE;
	/* Released outside the lock: it may be an object that uses it. */
	if (old)
		entry_free(old);
	return S_OK;
}

/* SetPrivateData: NULL data deletes the entry, whatever the size. */
HRESULT priv_set(struct priv_store *p, REFGUID guid, UINT size,
		 const void *data)
{
	return store(p, guid, data ? size : 0, data, NULL);
}

/*
 * SetPrivateDataInterface: a NULL interface is stored too, as a NULL
 * pointer (GetPrivateData returns it, with the size of a pointer).
 */
HRESULT priv_set_iface(struct priv_store *p, REFGUID guid,
		       const IUnknown *iface)
{
	IUnknown *u = (IUnknown *)iface;

	return store(p, guid, sizeof(u), &u, u);
}

/*
 * SetName stores the name as WKPDID_D3DDebugObjectNameW, with its NUL;
 * NULL (which crashes Windows) removes it and is S_OK.
 */
HRESULT priv_set_name(struct priv_store *p, LPCWSTR name)
{
	size_t len;

	if (!name) {
		store(p, &WKPDID_D3DDebugObjectNameW, 0, NULL, NULL);
		return S_OK;
	}
	len = (wcslen(name) + 1) * sizeof(*name);
	if (len > UINT_MAX)
		return E_INVALIDARG;
	return store(p, &WKPDID_D3DDebugObjectNameW, (UINT)len, name, NULL);
}

void child_init(struct child *c, const struct child_class *cls,
		struct d3d12_device *device)
{
	atomic_init(&c->refs, 1);
	c->cls = cls;
	device_ref(device);
	c->device = device;
	priv_init(&c->priv);
}

/* The object: its first member is its interface. */
static void *child_object(struct child *c)
{
	return (char *)c - c->cls->offset;
}

HRESULT child_query(struct child *c, REFIID riid, void **out)
{
	return object_query(child_object(c), c->cls->iids, riid, out);
}

ULONG child_addref(struct child *c)
{
	return atomic_fetch_add(&c->refs, 1) + 1;
}

ULONG child_release(struct child *c)
{
	ULONG refs = atomic_fetch_sub(&c->refs, 1) - 1;

	if (refs)
		return refs;
	if (c->cls->fini)
		c->cls->fini(c);
	priv_free(&c->priv);
	/* Last: the object's teardown may still use the device. */
	device_unref(c->device);
	free(child_object(c));
	return 0;
}

HRESULT child_hand_out(struct child *c, REFIID riid, void **out)
{
	HRESULT hr = child_query(c, riid, out);

	child_release(c);
	return hr;
}

HRESULT child_get_device(struct child *c, REFIID riid, void **out)
{
	if (!out)
		return E_INVALIDARG;
	*out = NULL;
	if (!riid)
		return E_INVALIDARG;
	return ID3D12Device1_QueryInterface(&c->device->iface, riid, out);
}

HRESULT hr_from_errno(struct d3d12_device *device, int err)
{
	if (!err)
		return S_OK;
	if (device && d3dq_device_removed_reason(device->dev))
		return DXGI_ERROR_DEVICE_REMOVED;
	switch (err) {
	case -EINVAL:
	case -EBADF:
	case -ENOENT:
		return E_INVALIDARG;
	case -ENOMEM:
	case -EMFILE:
	case -ENFILE:
	case -ENOSPC:
	case -EDQUOT:	/* a per-user bound of the driver */
		return E_OUTOFMEMORY;
	case -EOPNOTSUPP:
		return DXGI_ERROR_UNSUPPORTED;
	case -EPERM:
	case -EACCES:
		return E_ACCESSDENIED;
	case -ENODEV:
		return DXGI_ERROR_DEVICE_REMOVED;
	default:
		return E_FAIL;
	}
}

HRESULT handle_to_fd(HANDLE h, int *fd)
{
	intptr_t v = (intptr_t)h;

	if (!h) {
		*fd = -1;
		return S_OK;
	}
	if (v < 1 || v > INT_MAX)
		return E_INVALIDARG;
	*fd = (int)v;
	return S_OK;
}

HANDLE fd_to_handle(int fd)
{
	return (HANDLE)(intptr_t)fd;
}
