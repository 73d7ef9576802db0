// SPDX-License-Identifier: GPL-2.0
/*
 * No leak and no memory error: a program that uses every object, event,
 * shared handle and private data, with reference counts balanced, runs
 * under valgrind's memcheck in the VM (the guest sees the host's /usr).
 * The same program also runs without valgrind, checking the counts.
 * d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

#define VALGRIND "/usr/bin/valgrind"

/* 0 when everything worked and the device's last reference went away. */
static int scenario(void)
{
	D3D12_QUERY_HEAP_DESC hd = { .Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP,
				     .Count = 2 };
	ID3D12GraphicsCommandList2 *l = NULL;
	ID3D12CommandAllocator *alloc = NULL;
	ID3D12CommandQueue *q = NULL, *c = NULL;
	ID3D12Resource *up = NULL, *rb = NULL;
	ID3D12Fence *f = NULL, *s = NULL, *s2 = NULL;
	ID3D12Fence *fs[2];
	ID3D12QueryHeap *heap = NULL;
	ID3D12Device1 *dev;
	UINT64 vs[2] = { 1, 1 };
	volatile UINT32 *out;
	HANDLE h = NULL;
	int ev = u_event(), ok = 0;

	dev = u_device();
	if (!dev || ev < 0)
		return 2;
	q = u_queue(dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	c = u_queue(dev, D3D12_COMMAND_LIST_TYPE_COPY);
	f = u_fence(dev, 0);
	up = u_buffer(dev, D3D12_HEAP_TYPE_UPLOAD, 256);
	rb = u_buffer(dev, D3D12_HEAP_TYPE_READBACK, 256);
	if (!q || !c || !f || !up || !rb ||
	    !u_list(dev, D3D12_COMMAND_LIST_TYPE_DIRECT, &alloc, &l) ||
	    FAILED(ID3D12Device1_CreateQueryHeap(dev, &hd,
						 &IID_ID3D12QueryHeap,
						 (void **)&heap)) ||
	    FAILED(ID3D12Device1_CreateFence(dev, 0, D3D12_FENCE_FLAG_SHARED,
					     &IID_ID3D12Fence, (void **)&s)) ||
	    FAILED(ID3D12Device1_CreateSharedHandle(dev,
						    (ID3D12DeviceChild *)s,
						    NULL, GENERIC_ALL, NULL,
						    &h)) ||
	    FAILED(ID3D12Device1_OpenSharedHandle(dev, h, &IID_ID3D12Fence,
						  (void **)&s2)))
		goto out;
	ID3D12Fence_SetName(f, L"f");
	ID3D12Resource_SetPrivateDataInterface(rb, &IID_ID3D12Fence,
					       (IUnknown *)s2);
	out = u_map(rb);

	/* A wait before its signal, an event, a multi-fence event. */
	ID3D12CommandQueue_Wait(q, f, 1);
	u_write32(l, rb, 0, 0x1eaf);
	ID3D12GraphicsCommandList2_EndQuery(l, heap, D3D12_QUERY_TYPE_TIMESTAMP,
					    0);
	ID3D12GraphicsCommandList2_ResolveQueryData(l, heap,
			D3D12_QUERY_TYPE_TIMESTAMP, 0, 1, rb, 8);
	ID3D12GraphicsCommandList2_CopyBufferRegion(l, rb, 16, up, 0, 16);
	if (FAILED(u_execute(q, l)))
		goto out;
	ID3D12CommandQueue_Signal(q, s, 1);
	fs[0] = f;
	fs[1] = s2;
	ID3D12Device1_SetEventOnMultipleFenceCompletion(
		dev, fs, vs, 2, D3D12_MULTIPLE_FENCE_WAIT_FLAG_ALL, u_handle(ev));
	ID3D12Fence_SetEventOnCompletion(s2, 1, u_handle(ev));
	ID3D12CommandQueue_Signal(c, f, 1);
	if (FAILED(u_wait(s2, 1)) || out[0] != 0x1eaf || !out[2])
		goto out;
	/* An event registration that never fires is freed with its fence. */
	ID3D12Fence_SetEventOnCompletion(f, 100, u_handle(ev));
	ok = 1;
out:
	if (h)
		close((int)(intptr_t)h);
	close(ev);
	U_RELEASE(s2);
	U_RELEASE(s);
	U_RELEASE(heap);
	U_RELEASE(l);
	U_RELEASE(alloc);
	U_RELEASE(rb);
	U_RELEASE(up);
	U_RELEASE(f);
	U_RELEASE(c);
	U_RELEASE(q);
	if (ID3D12Device1_Release(dev))
		return 4;
	return ok ? 0 : 3;
}

FIXTURE(leaks) {
	char exe[4096];
};

FIXTURE_SETUP(leaks)
{
	ssize_t n = readlink("/proc/self/exe", self->exe,
			     sizeof(self->exe) - 1);

	ASSERT_LT(0, n);
	self->exe[n] = 0;
	if (access("/dev/dri", F_OK))
		SKIP(return, "no d3dq device");
}

FIXTURE_TEARDOWN(leaks)
{
}

TEST_F(leaks, counts)
{
	EXPECT_EQ(0, scenario());
}

TEST_F_TIMEOUT(leaks, valgrind, 280)
{
	int status;
	pid_t pid;

	if (access(VALGRIND, X_OK))
		SKIP(return, "valgrind is not installed");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl(VALGRIND, VALGRIND, "-q", "--leak-check=full",
		      "--show-leak-kinds=definite,indirect",
		      "--errors-for-leak-kinds=definite,indirect",
		      "--error-exitcode=99", self->exe, "--scenario",
		      (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 99: valgrind found an error or a leak (its report is above). */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--scenario"))
		return scenario();
	return test_harness_run(argc, argv);
}
