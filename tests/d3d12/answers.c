// SPDX-License-Identifier: GPL-2.0
/*
 * The answers Windows gives where a program checks them (issue 26): a NULL
 * output pointer only checks the arguments (S_FALSE), SetPrivateData and
 * SetPrivateDataInterface as Windows treats deletions and NULL
 * interfaces, a queue's node mask, ExecuteCommandLists of closed lists
 * runs with little memory left, a list of another device removes the
 * device (R15) instead of dropping work, and events are eventfds only
 * (R19): a pipe, a socket, stdout, /dev/null, a file or a closed number is
 * E_INVALIDARG and nothing is written to it. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

static const GUID guid1 = { 0xfdb37466, 0x428f, 0x4edf,
			    { 0xa3, 0x7f, 0x9b, 0x1d, 0xf4, 0x88, 0xc5, 0xfc } };
static const GUID guid2 = { 0x2e5afac2, 0x87b5, 0x4c10,
			    { 0x9b, 0x4b, 0x89, 0xd7, 0xd1, 0x12, 0xe7, 0x2b } };

FIXTURE(a) {
	ID3D12Device1 *dev;
};

FIXTURE_SETUP(a)
{
	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
}

FIXTURE_TEARDOWN(a)
{
	U_RELEASE(self->dev);
}

/* CreateFence with a NULL ppFence: S_FALSE, even for an unknown riid. */
TEST_F(a, create_fence_null_out)
{
	ULONG refs = u_refs(self->dev);

	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Device1_CreateFence(
			self->dev, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence,
			NULL)));
	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Device1_CreateFence(
			self->dev, 0, D3D12_FENCE_FLAG_SHARED, &IID_ID3D12Heap,
			NULL)));
	/* The arguments are still checked. */
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Device1_CreateFence(
			self->dev, 0, (D3D12_FENCE_FLAGS)0x100, &IID_ID3D12Fence,
			NULL)));
	/* Nothing was created: no child holds the device. */
	EXPECT_EQ(refs, u_refs(self->dev));
}

/* D3D12CreateDevice(NULL, 11_0, NULL, NULL) asks whether it would work. */
TEST_F(a, create_device_null_riid)
{
	ID3D12Device *d = (void *)1;

	EXPECT_EQ(HR(S_FALSE), HR(D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0,
						    NULL, NULL)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(D3D12CreateDevice(
			NULL, D3D_FEATURE_LEVEL_11_0, NULL, (void **)&d)));
	EXPECT_EQ(NULL, d);
	EXPECT_EQ(1, u_refs(self->dev));
}

/*
 * What Windows answers (vkd3d's test_object_interface runs the same
 * sequence against Windows drivers), on one ID3D12Object.
 */
static void private_data(struct __test_metadata *_metadata,
			 ID3D12Object *obj, ID3D12Device1 *dev)
{
	static const UINT data[] = { 1, 2, 3, 4 };
	ID3D12Fence *f = u_fence(dev, 0);
	IUnknown *ptr;
	ULONG refs;
	UINT size;

	ASSERT_NE(NULL, f);
	refs = u_refs(f);
	/* Deleting what does not exist: S_FALSE, whatever the size. */
	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Object_SetPrivateData(obj, &guid1, 0,
							       NULL)));
	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Object_SetPrivateData(obj, &guid1, ~0u,
							       NULL)));
	/* A NULL interface is stored, as a NULL pointer. */
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid1, NULL));
	size = sizeof(ptr) * 2;
	ptr = (IUnknown *)(uintptr_t)0xdeadbeef;
	EXPECT_EQ(S_OK, ID3D12Object_GetPrivateData(obj, &guid1, &size, &ptr));
	EXPECT_EQ(NULL, ptr);
	EXPECT_EQ(sizeof(ptr), size);
	/* Size but no data deletes it: S_OK, then S_FALSE. */
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateData(obj, &guid1, ~0u, NULL));
	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Object_SetPrivateData(obj, &guid1, ~0u,
							       NULL)));
	size = 1;
	EXPECT_EQ(HR(DXGI_ERROR_NOT_FOUND), HR(ID3D12Object_GetPrivateData(
			obj, &guid1, &size, NULL)));
	EXPECT_EQ(0, size);

	/* An interface is held once; replacing it by NULL releases it. */
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid1,
							     (IUnknown *)f));
	EXPECT_EQ(refs + 1, u_refs(f));
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid1,
							     (IUnknown *)f));
	EXPECT_EQ(refs + 1, u_refs(f));
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid1, NULL));
	EXPECT_EQ(refs, u_refs(f));
	/* Data replaces an interface and releases it. */
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid1,
							     (IUnknown *)f));
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateData(obj, &guid1, sizeof(data),
						    data));
	EXPECT_EQ(refs, u_refs(f));
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateData(obj, &guid1, 42, NULL));
	EXPECT_EQ(HR(S_FALSE), HR(ID3D12Object_SetPrivateData(obj, &guid1, 42,
							       NULL)));
	/* Another GUID is untouched by all this. */
	size = 1;
	EXPECT_EQ(HR(DXGI_ERROR_NOT_FOUND), HR(ID3D12Object_GetPrivateData(
			obj, &guid2, &size, NULL)));
	/* Set again and left set: releasing obj releases f. */
	EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(obj, &guid2,
							     (IUnknown *)f));
	EXPECT_EQ(refs + 1, u_refs(f));
	if ((void *)obj == (void *)dev)
		EXPECT_EQ(S_OK, ID3D12Object_SetPrivateDataInterface(
				obj, &guid2, NULL));
	U_RELEASE(f);
}

TEST_F(a, private_data)
{
	ID3D12CommandQueue *q = u_queue(self->dev,
					D3D12_COMMAND_LIST_TYPE_DIRECT);
	ID3D12Fence *f = u_fence(self->dev, 0);
	ID3D12Object *obj;

	ASSERT_TRUE(q && f);
	ASSERT_EQ(S_OK, ID3D12CommandQueue_QueryInterface(
			q, &IID_ID3D12Object, (void **)&obj));
	private_data(_metadata, obj, self->dev);
	U_RELEASE(obj);
	ASSERT_EQ(S_OK, ID3D12Fence_QueryInterface(f, &IID_ID3D12Object,
						   (void **)&obj));
	private_data(_metadata, obj, self->dev);
	U_RELEASE(obj);
	ASSERT_EQ(S_OK, ID3D12Device1_QueryInterface(
			self->dev, &IID_ID3D12Object, (void **)&obj));
	private_data(_metadata, obj, self->dev);
	U_RELEASE(obj);
	U_RELEASE(f);
	U_RELEASE(q);
	/* Every fence private_data made is gone with its holder. */
	EXPECT_EQ(1, u_refs(self->dev));
}

/* A queue created with NodeMask 0 is on node 0: GetDesc says 1. */
TEST_F(a, queue_node_mask)
{
	D3D12_COMMAND_QUEUE_DESC qd = {
		.Type = D3D12_COMMAND_LIST_TYPE_COMPUTE,
		.NodeMask = 0,
	}, got;
	ID3D12CommandQueue *q;

	ASSERT_EQ(S_OK, ID3D12Device1_CreateCommandQueue(
			self->dev, &qd, &IID_ID3D12CommandQueue, (void **)&q));
	got = ID3D12CommandQueue_GetDesc(q);
	EXPECT_EQ(1, got.NodeMask);
	EXPECT_EQ(D3D12_COMMAND_LIST_TYPE_COMPUTE, got.Type);
	U_RELEASE(q);
	qd.NodeMask = 2;
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateCommandQueue(
			self->dev, &qd, &IID_ID3D12CommandQueue, (void **)&q));
}

/*
 * WriteToSubresource and ReadFromSubresource copy texture subresources:
 * on a buffer (every resource here) Windows answers E_INVALIDARG, as
 * vkd3d's test_read_write_subresource asserts, not E_NOTIMPL.
 */
TEST_F(a, subresource_copies_refuse_buffers)
{
	ID3D12Resource *up = u_buffer(self->dev, D3D12_HEAP_TYPE_UPLOAD, 256);
	ID3D12Resource *rb = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK, 256);
	D3D12_BOX box = { 0, 0, 0, 1, 1, 1 };
	unsigned char data[256] = { 0 };

	ASSERT_TRUE(up && rb);
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Resource_WriteToSubresource(
			up, 0, &box, data, 256, 256)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Resource_ReadFromSubresource(
			rb, data, 256, 256, 0, &box)));
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Resource_WriteToSubresource(
			rb, 0, NULL, data, 0, 0)));
	U_RELEASE(rb);
	U_RELEASE(up);
}

/* Bytes waiting in fd (a pipe's or socket's read end), without blocking. */
static ssize_t pending(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[64];
	ssize_t n;

	if (poll(&p, 1, 0) != 1)
		return 0;
	n = read(fd, buf, sizeof(buf));
	return n < 0 ? 0 : n;
}

/*
 * h is refused by SetEventOnCompletion and SetEventOnMultipleFenceCompletion,
 * for a value reached and one not reached, and nothing is ever written to
 * it, not even when the fences reach the values later.
 */
static void refused(struct __test_metadata *_metadata, ID3D12Device1 *dev,
		    HANDLE h, const char *what)
{
	ID3D12Fence *f = u_fence(dev, 5), *g = u_fence(dev, 5);
	ID3D12Fence *fences[2];
	UINT64 values[2] = { 1, 1 };

	ASSERT_TRUE(f && g);
	fences[0] = f;
	fences[1] = g;
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Fence_SetEventOnCompletion(
			f, 1, h))) TH_LOG("%s, reached", what);
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Fence_SetEventOnCompletion(
			f, 10, h))) TH_LOG("%s, not reached", what);
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Device1_SetEventOnMultipleFenceCompletion(
			dev, fences, values, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, h)))
		TH_LOG("%s, two fences reached", what);
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Device1_SetEventOnMultipleFenceCompletion(
			dev, fences, values, 1,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY, h)))
		TH_LOG("%s, one fence reached", what);
	values[0] = values[1] = 10;
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Device1_SetEventOnMultipleFenceCompletion(
			dev, fences, values, 2,
			D3D12_MULTIPLE_FENCE_WAIT_FLAG_ANY, h)))
		TH_LOG("%s, two fences not reached", what);
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(f, 10));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(g, 10));
	U_RELEASE(g);
	U_RELEASE(f);
}

TEST_F(a, events_are_eventfds_only)
{
	int p[2], s[2], out, nul, mem, closed, ev;
	ID3D12Fence *f;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	refused(_metadata, self->dev, u_handle(p[1]), "pipe");
	EXPECT_EQ(0, pending(p[0]));

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s));
	refused(_metadata, self->dev, u_handle(s[0]), "socket");
	EXPECT_EQ(0, pending(s[1]));

	/* (HANDLE)1 is stdout: here a pipe, to see what reaches it. */
	fflush(stdout);
	out = dup(1);
	ASSERT_LE(0, out);
	ASSERT_EQ(1, dup2(p[1], 1));
	refused(_metadata, self->dev, (HANDLE)1, "stdout");
	ASSERT_EQ(1, dup2(out, 1));
	close(out);
	EXPECT_EQ(0, pending(p[0]));

	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, nul);
	refused(_metadata, self->dev, u_handle(nul), "/dev/null");
	close(nul);

	mem = memfd_create("not an event", MFD_CLOEXEC);
	ASSERT_LE(0, mem);
	refused(_metadata, self->dev, u_handle(mem), "a file");
	EXPECT_EQ(0, lseek(mem, 0, SEEK_END));
	close(mem);

	closed = u_event();
	ASSERT_LE(0, closed);
	close(closed);
	refused(_metadata, self->dev, u_handle(closed), "a closed number");

	close(s[0]);
	close(s[1]);
	close(p[0]);
	close(p[1]);

	/* Eventfds of every kind still work. */
	ev = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	ASSERT_LE(0, ev);
	f = u_fence(self->dev, 5);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 1, u_handle(ev)));
	EXPECT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 6, u_handle(ev)));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 6));
	EXPECT_EQ(1, u_event_take(ev));
	EXPECT_EQ(1, u_event_take(ev));
	EXPECT_EQ(0, u_event_take(ev));
	U_RELEASE(f);
	close(ev);
}

/*
 * A full pipe registered as an event blocked the device's completions;
 * now it is refused and the queue's signals complete.
 */
TEST_F(a, full_pipe_blocks_nothing)
{
	ID3D12CommandQueue *q = u_queue(self->dev,
					D3D12_COMMAND_LIST_TYPE_DIRECT);
	ID3D12Fence *f = u_fence(self->dev, 0);
	char junk[4096] = { 0 };
	int p[2];

	ASSERT_TRUE(q && f);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, fcntl(p[1], F_SETFL, O_NONBLOCK));
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	ASSERT_EQ(0, fcntl(p[1], F_SETFL, 0));
	EXPECT_EQ(HR(E_INVALIDARG), HR(ID3D12Fence_SetEventOnCompletion(
			f, 1, u_handle(p[1]))));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 1));
	EXPECT_EQ(S_OK, u_wait(f, 1));
	close(p[0]);
	close(p[1]);
	U_RELEASE(f);
	U_RELEASE(q);
}

/* dst[0] = src[0] through n copies of 4 bytes, all in one list. */
static bool big_list(ID3D12Device1 *dev, ID3D12Resource *dst,
		     ID3D12Resource *src, unsigned int n,
		     ID3D12CommandAllocator **alloc,
		     ID3D12GraphicsCommandList2 **list)
{
	unsigned int i;

	if (!u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, list))
		return false;
	for (i = 0; i < n; i++)
		ID3D12GraphicsCommandList2_CopyBufferRegion(*list, dst, 0, src,
							    0, 4);
	return SUCCEEDED(ID3D12GraphicsCommandList2_Close(*list));
}

static size_t vm_bytes(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * Windows' answer: executing lists already recorded and closed needs no
 * more memory of the program (what the lists hold is in their allocators),
 * so two large lists executed with little address space left run, and a
 * later Signal completes; the device is not removed. (Were the library to
 * need memory of their size here, it would remove the device with
 * E_OUTOFMEMORY instead of dropping the work, R15; that is a defect, not
 * an answer.)
 */
TEST_F(a, execute_with_little_memory_runs)
{
	ID3D12CommandQueue *q = u_queue(self->dev,
					D3D12_COMMAND_LIST_TYPE_DIRECT);
	ID3D12Fence *f = u_fence(self->dev, 0);
	ID3D12Resource *src = u_buffer(self->dev, D3D12_HEAP_TYPE_UPLOAD, 4096);
	ID3D12Resource *dst = u_buffer(self->dev, D3D12_HEAP_TYPE_READBACK,
				       4096);
	ID3D12CommandAllocator *alloc[2] = { NULL, NULL };
	ID3D12GraphicsCommandList2 *list[2] = { NULL, NULL };
	ID3D12CommandList *lists[2];
	struct rlimit old, tight;
	volatile UINT32 *in, *back;
	HRESULT hr, reason;

	ASSERT_TRUE(q && f && src && dst);
	in = u_map(src);
	back = u_map(dst);
	ASSERT_TRUE(in && back);
	in[0] = 0x600d;
	/* Two lists of a few MiB of commands each. */
	ASSERT_TRUE(big_list(self->dev, dst, src, 100000, &alloc[0], &list[0]));
	ASSERT_TRUE(big_list(self->dev, dst, src, 100000, &alloc[1], &list[1]));
	lists[0] = (ID3D12CommandList *)list[0];
	lists[1] = (ID3D12CommandList *)list[1];

	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &old));
	tight = old;
	tight.rlim_cur = vm_bytes() + (512 << 10);
	ASSERT_LT(tight.rlim_cur, old.rlim_cur);
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &tight));
	ID3D12CommandQueue_ExecuteCommandLists(q, 2, lists);
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &old));

	hr = ID3D12CommandQueue_Signal(q, f, 1);
	reason = ID3D12Device1_GetDeviceRemovedReason(self->dev);
	EXPECT_EQ(HR(S_OK), HR(reason));
	ASSERT_EQ(HR(S_OK), HR(hr));
	ASSERT_EQ(HR(S_OK), HR(u_wait(f, 1)));
	EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(0x600d, back[0]);
	U_RELEASE(list[1]);
	U_RELEASE(alloc[1]);
	U_RELEASE(list[0]);
	U_RELEASE(alloc[0]);
	U_RELEASE(dst);
	U_RELEASE(src);
	U_RELEASE(f);
	U_RELEASE(q);
}

/*
 * A list of another (removed) device executed on this device's queue is
 * misuse: the device is removed with DXGI_ERROR_INVALID_CALL (R15).
 */
TEST(execute_foreign_list_removes)
{
	ID3D12Device1 *old, *dev;
	ID3D12CommandAllocator *alloc, *stale_alloc;
	ID3D12GraphicsCommandList2 *stale, *open;
	ID3D12CommandQueue *q;
	ID3D12Fence *f;

	old = u_device();
	if (!old)
		SKIP(return, "no d3dq device");
	q = u_queue(old, D3D12_COMMAND_LIST_TYPE_DIRECT);
	ASSERT_NE(NULL, q);
	ASSERT_TRUE(u_list(old, D3D12_COMMAND_LIST_TYPE_DIRECT, &stale_alloc,
			   &stale));
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(stale));
	/* Executing a list still recording removes the first device. */
	ASSERT_TRUE(u_list(old, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc, &open));
	ID3D12CommandQueue_ExecuteCommandLists(q, 1,
					       (ID3D12CommandList **)&open);
	ASSERT_EQ(HR(DXGI_ERROR_INVALID_CALL),
		  HR(ID3D12Device1_GetDeviceRemovedReason(old)));
	U_RELEASE(open);
	U_RELEASE(alloc);
	U_RELEASE(q);

	dev = u_device();
	ASSERT_NE(NULL, dev);
	ASSERT_NE(old, dev);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	f = u_fence(dev, 0);
	ASSERT_TRUE(q && f);
	ID3D12CommandQueue_ExecuteCommandLists(q, 1,
					       (ID3D12CommandList **)&stale);
	EXPECT_EQ(HR(DXGI_ERROR_INVALID_CALL),
		  HR(ID3D12Device1_GetDeviceRemovedReason(dev)));
	EXPECT_EQ(HR(DXGI_ERROR_DEVICE_REMOVED),
		  HR(ID3D12CommandQueue_Signal(q, f, 1)));
	EXPECT_EQ(UINT64_MAX, ID3D12Fence_GetCompletedValue(f));
	U_RELEASE(f);
	U_RELEASE(q);
	U_RELEASE(stale);
	U_RELEASE(stale_alloc);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
	EXPECT_EQ(0, ID3D12Device1_Release(old));
}

TEST_HARNESS_MAIN
