// SPDX-License-Identifier: GPL-2.0
/*
 * Shared fences: CreateSharedHandle gives a file descriptor as the HANDLE,
 * OpenSharedHandle opens it in this process or another one (sent over a
 * socket), and queues and CPUs of both processes wait for each other's
 * signals; one process's device removal stays in that process. d3d12.h
 * only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"
#include "util/d3dq_test.h"

/* The other process: wait for 2 on a queue, signal 3, wait for 4. */
static int child(int sock)
{
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f;
	int fd = t_recv_fd(sock), ret = 1;

	dev = u_device();
	if (fd < 0 || !dev)
		return 2;
	if (FAILED(ID3D12Device1_OpenSharedHandle(dev, u_handle(fd),
						  &IID_ID3D12Fence,
						  (void **)&f)))
		return 3;
	close(fd);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_COPY);
	if (q && SUCCEEDED(ID3D12CommandQueue_Wait(q, f, 2)) &&
	    SUCCEEDED(ID3D12CommandQueue_Signal(q, f, 3)) &&
	    SUCCEEDED(u_wait(f, 4)) && ID3D12Fence_GetCompletedValue(f) == 4)
		ret = 0;
	U_RELEASE(q);
	U_RELEASE(f);
	ID3D12Device1_Release(dev);
	return ret;
}

TEST(two_processes)
{
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f;
	HANDLE h = NULL;
	int sv[2], status;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* Fork before this process has a device. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(child(sv[1]));
	}
	close(sv[1]);

	dev = u_device();
	if (!dev) {
		close(sv[0]);
		waitpid(pid, &status, 0);
		SKIP(return, "no d3dq device");
	}
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	ASSERT_NE(NULL, q);
	ASSERT_EQ(S_OK, ID3D12Device1_CreateFence(dev, 0,
						  D3D12_FENCE_FLAG_SHARED,
						  &IID_ID3D12Fence,
						  (void **)&f));
	ASSERT_EQ(S_OK, ID3D12Device1_CreateSharedHandle(
			dev, (ID3D12DeviceChild *)f, NULL, GENERIC_ALL, NULL,
			&h));
	ASSERT_LT(2, (intptr_t)h);
	ASSERT_EQ(0, t_send_fd(sv[0], (int)(intptr_t)h));
	/* The HANDLE is ours to close, as CloseHandle would. */
	close((int)(intptr_t)h);

	ASSERT_EQ(S_OK, ID3D12Fence_Signal(f, 1));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, f, 2));
	/* 3 comes from the other process's queue. */
	ASSERT_EQ(S_OK, u_wait(f, 3));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(f, 4));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	U_RELEASE(f);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST(one_process)
{
	ID3D12Fence *f, *g, *plain, *x = (void *)1;
	ID3D12Device1 *dev;
	HANDLE h = (HANDLE)1;
	int ev;

	dev = u_device();
	if (!dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(S_OK, ID3D12Device1_CreateFence(dev, 5,
						  D3D12_FENCE_FLAG_SHARED,
						  &IID_ID3D12Fence, (void **)&f));
	plain = u_fence(dev, 0);
	ASSERT_NE(NULL, plain);
	/* Only shared fences, only GENERIC_ALL. */
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateSharedHandle(
			dev, (ID3D12DeviceChild *)plain, NULL, GENERIC_ALL,
			NULL, &h));
	EXPECT_EQ(NULL, h);
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_CreateSharedHandle(
			dev, (ID3D12DeviceChild *)f, NULL, 0, NULL, &h));
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_OpenSharedHandle(
			dev, NULL, &IID_ID3D12Fence, (void **)&x));
	EXPECT_EQ(NULL, x);
	ev = u_event();
	ASSERT_LE(0, ev);
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_OpenSharedHandle(
			dev, u_handle(ev), &IID_ID3D12Fence, (void **)&x));

	ASSERT_EQ(S_OK, ID3D12Device1_CreateSharedHandle(
			dev, (ID3D12DeviceChild *)f, NULL, GENERIC_ALL, NULL,
			&h));
	ASSERT_EQ(S_OK, ID3D12Device1_OpenSharedHandle(
			dev, h, &IID_ID3D12Fence, (void **)&g));
	close((int)(intptr_t)h);
	EXPECT_NE(f, g);
	EXPECT_EQ(5, ID3D12Fence_GetCompletedValue(g));
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(g, 9, u_handle(ev)));
	ASSERT_EQ(S_OK, ID3D12Fence_Signal(f, 9));
	EXPECT_EQ(1, u_event_wait(ev, 10000));
	EXPECT_EQ(9, ID3D12Fence_GetCompletedValue(g));
	/* R20: a shared fence goes down like any other, in every holder. */
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(g, 3));
	EXPECT_EQ(3, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(3, ID3D12Fence_GetCompletedValue(g));
	close(ev);
	U_RELEASE(g);
	U_RELEASE(plain);
	U_RELEASE(f);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

/*
 * The other process of removal_stays_in_its_process: open the fence,
 * queue a wait for 10 on it, then remove the device the way d3d12.h can
 * (executing a list whose Close failed). There the fence reads UINT64_MAX
 * and Signal fails; it tells the parent ('y', or 'n') and waits for it.
 */
static int removed_peer(int sock)
{
	ID3D12GraphicsCommandList2 *l;
	ID3D12CommandAllocator *alloc;
	ID3D12CommandList *lists[1];
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f;
	int fd = t_recv_fd(sock);
	bool ok;
	char c;

	dev = u_device();
	if (fd < 0 || !dev)
		return 2;
	if (FAILED(ID3D12Device1_OpenSharedHandle(dev, u_handle(fd),
						  &IID_ID3D12Fence,
						  (void **)&f)))
		return 3;
	close(fd);
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_COMPUTE);
	if (!q || FAILED(ID3D12CommandQueue_Wait(q, f, 10)) ||
	    !u_list(dev, D3D12_COMMAND_LIST_TYPE_COMPUTE, &alloc, &l))
		return 4;
	ID3D12GraphicsCommandList2_Dispatch(l, 1, 1, 1);
	if (ID3D12GraphicsCommandList2_Close(l) != E_NOTIMPL)
		return 5;
	lists[0] = (ID3D12CommandList *)l;
	ID3D12CommandQueue_ExecuteCommandLists(q, 1, lists);
	ok = ID3D12Device1_GetDeviceRemovedReason(dev) ==
	     DXGI_ERROR_INVALID_CALL &&
	     ID3D12Fence_GetCompletedValue(f) == UINT64_MAX &&
	     ID3D12Fence_Signal(f, 3) == DXGI_ERROR_DEVICE_REMOVED;
	if (write(sock, ok ? "y" : "n", 1) != 1 || read(sock, &c, 1) != 1)
		return 6;
	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(q);
	U_RELEASE(f);
	ID3D12Device1_Release(dev);
	return 0;
}

/*
 * R15, R20: another process that holds this process's shared fence, and
 * waits on it, has its device removed. Here nothing changes: the device
 * is not removed, the fence keeps its value, the event registered for 7
 * and the queue waiting for 7 are not released, and Signal moves the
 * value (up, releasing them, then down).
 */
TEST(removal_stays_in_its_process)
{
	ID3D12CommandQueue *q;
	ID3D12Device1 *dev;
	ID3D12Fence *f, *g;
	HANDLE h = NULL;
	int sv[2], status, ev;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	/* Fork before this process has a device. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		_exit(removed_peer(sv[1]));
	}
	close(sv[1]);

	dev = u_device();
	if (!dev) {
		close(sv[0]);
		waitpid(pid, &status, 0);
		SKIP(return, "no d3dq device");
	}
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	g = u_fence(dev, 0);
	ev = u_event();
	ASSERT_TRUE(q && g && ev >= 0);
	ASSERT_EQ(S_OK, ID3D12Device1_CreateFence(dev, 2,
						  D3D12_FENCE_FLAG_SHARED,
						  &IID_ID3D12Fence,
						  (void **)&f));
	ASSERT_EQ(S_OK, ID3D12Fence_SetEventOnCompletion(f, 7, u_handle(ev)));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Wait(q, f, 7));
	ASSERT_EQ(S_OK, ID3D12CommandQueue_Signal(q, g, 1));
	ASSERT_EQ(S_OK, ID3D12Device1_CreateSharedHandle(
			dev, (ID3D12DeviceChild *)f, NULL, GENERIC_ALL, NULL,
			&h));
	ASSERT_EQ(0, t_send_fd(sv[0], (int)(intptr_t)h));
	close((int)(intptr_t)h);

	ASSERT_EQ(1, read(sv[0], &c, 1));
	EXPECT_EQ('y', c);
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));
	EXPECT_EQ(2, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(0, u_event_wait(ev, 100));
	EXPECT_EQ(0, ID3D12Fence_GetCompletedValue(g));

	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 7));
	EXPECT_EQ(7, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(1, u_event_wait(ev, 10000));
	EXPECT_EQ(S_OK, u_wait(g, 1));
	EXPECT_EQ(S_OK, ID3D12Fence_Signal(f, 1));
	EXPECT_EQ(1, ID3D12Fence_GetCompletedValue(f));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(dev));

	ASSERT_EQ(1, write(sv[0], "e", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	close(ev);
	U_RELEASE(f);
	U_RELEASE(g);
	U_RELEASE(q);
	EXPECT_EQ(0, ID3D12Device1_Release(dev));
}

TEST_HARNESS_MAIN
