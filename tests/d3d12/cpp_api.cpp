// SPDX-License-Identifier: GPL-2.0
/*
 * The same library from C++, through d3d12.h's C++ interfaces and
 * __uuidof/IID_PPV_ARGS: methods that return structures by value (whose
 * ABI differs from C's hidden-pointer convention on Windows but not on
 * Linux), a Wait issued before its Signal, a copy checked by the CPU, and
 * balanced reference counts. Prints TAP itself (the kselftest harness is
 * C). d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <wsl/winadapter.h>
#include <d3d12.h>
#include <dxguids/dxguids.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Result {
	std::string name;
	bool ok;
	std::string why;
};

std::vector<Result> results;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			results.push_back({ __func__, false, \
					    std::string(#cond) + " at line " + \
					    std::to_string(__LINE__) }); \
			return; \
		} \
	} while (0)

#define PASS() results.push_back({ __func__, true, "" })

ID3D12Device1 *device()
{
	ID3D12Device1 *dev = nullptr;

	if (FAILED(D3D12CreateDevice(nullptr, D3D_FEATURE_LEVEL_11_0,
				     IID_PPV_ARGS(&dev))))
		return nullptr;
	return dev;
}

ID3D12Resource *buffer(ID3D12Device1 *dev, D3D12_HEAP_TYPE type, UINT64 size,
		       D3D12_RESOURCE_STATES state)
{
	D3D12_HEAP_PROPERTIES heap = {};
	D3D12_RESOURCE_DESC desc = {};
	ID3D12Resource *res = nullptr;

	heap.Type = type;
	desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
	desc.Width = size;
	desc.Height = 1;
	desc.DepthOrArraySize = 1;
	desc.MipLevels = 1;
	desc.SampleDesc.Count = 1;
	desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
	if (FAILED(dev->CreateCommittedResource(&heap, D3D12_HEAP_FLAG_NONE,
						&desc, state, nullptr,
						IID_PPV_ARGS(&res))))
		return nullptr;
	return res;
}

/* Each by-value return lands where C++ callers expect it. */
void struct_returns(ID3D12Device1 *dev)
{
	D3D12_COMMAND_QUEUE_DESC qd = {};
	ID3D12CommandQueue *q = nullptr;

	qd.Type = D3D12_COMMAND_LIST_TYPE_COMPUTE;
	qd.Priority = D3D12_COMMAND_QUEUE_PRIORITY_HIGH;
	qd.Flags = D3D12_COMMAND_QUEUE_FLAG_DISABLE_GPU_TIMEOUT;
	CHECK(SUCCEEDED(dev->CreateCommandQueue(&qd, IID_PPV_ARGS(&q))));
	D3D12_COMMAND_QUEUE_DESC got = q->GetDesc();
	CHECK(got.Type == qd.Type && got.Priority == qd.Priority &&
	      got.Flags == qd.Flags && got.NodeMask == 1);
	q->Release();

	ID3D12Resource *r = buffer(dev, D3D12_HEAP_TYPE_UPLOAD, 12345,
				   D3D12_RESOURCE_STATE_GENERIC_READ);
	CHECK(r);
	D3D12_RESOURCE_DESC rd = r->GetDesc();
	CHECK(rd.Dimension == D3D12_RESOURCE_DIMENSION_BUFFER);
	CHECK(rd.Width == 12345 && rd.Height == 1 && rd.MipLevels == 1);
	CHECK(rd.Layout == D3D12_TEXTURE_LAYOUT_ROW_MAJOR);

	D3D12_RESOURCE_ALLOCATION_INFO info =
		dev->GetResourceAllocationInfo(0, 1, &rd);
	CHECK(info.SizeInBytes == 65536 && info.Alignment == 65536);
	D3D12_HEAP_PROPERTIES hp =
		dev->GetCustomHeapProperties(0, D3D12_HEAP_TYPE_DEFAULT);
	CHECK(hp.Type == D3D12_HEAP_TYPE_CUSTOM);
	CHECK(hp.CPUPageProperty == D3D12_CPU_PAGE_PROPERTY_NOT_AVAILABLE);
	CHECK(hp.CreationNodeMask == 1 && hp.VisibleNodeMask == 1);
	LUID a = dev->GetAdapterLuid(), b = dev->GetAdapterLuid();
	CHECK(a.LowPart == b.LowPart && a.HighPart == b.HighPart);
	CHECK(a.LowPart || a.HighPart);
	CHECK(r->Release() == 0);
	PASS();
}

void wait_before_signal(ID3D12Device1 *dev)
{
	ID3D12CommandQueue *direct = nullptr, *copy = nullptr;
	ID3D12CommandAllocator *alloc = nullptr;
	ID3D12GraphicsCommandList2 *list = nullptr;
	ID3D12Fence1 *fence = nullptr, *done = nullptr;
	D3D12_COMMAND_QUEUE_DESC qd = {};

	qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
	CHECK(SUCCEEDED(dev->CreateCommandQueue(&qd, IID_PPV_ARGS(&direct))));
	qd.Type = D3D12_COMMAND_LIST_TYPE_COPY;
	CHECK(SUCCEEDED(dev->CreateCommandQueue(&qd, IID_PPV_ARGS(&copy))));
	CHECK(SUCCEEDED(dev->CreateFence(0, D3D12_FENCE_FLAG_NONE,
					 IID_PPV_ARGS(&fence))));
	CHECK(SUCCEEDED(dev->CreateFence(0, D3D12_FENCE_FLAG_NONE,
					 IID_PPV_ARGS(&done))));
	CHECK(SUCCEEDED(dev->CreateCommandAllocator(
		D3D12_COMMAND_LIST_TYPE_DIRECT, IID_PPV_ARGS(&alloc))));
	CHECK(SUCCEEDED(dev->CreateCommandList(0,
		D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, nullptr,
		IID_PPV_ARGS(&list))));
	ID3D12Resource *up = buffer(dev, D3D12_HEAP_TYPE_UPLOAD, 4096,
				    D3D12_RESOURCE_STATE_GENERIC_READ);
	ID3D12Resource *rb = buffer(dev, D3D12_HEAP_TYPE_READBACK, 4096,
				    D3D12_RESOURCE_STATE_COPY_DEST);
	CHECK(up && rb);

	UINT32 *src = nullptr, *dst = nullptr;
	CHECK(SUCCEEDED(up->Map(0, nullptr, reinterpret_cast<void **>(&src))));
	CHECK(SUCCEEDED(rb->Map(0, nullptr, reinterpret_cast<void **>(&dst))));
	for (UINT32 i = 0; i < 1024; i++)
		src[i] = i * 7 + 1;

	list->CopyBufferRegion(rb, 0, up, 0, 4096);
	D3D12_WRITEBUFFERIMMEDIATE_PARAMETER p = {
		rb->GetGPUVirtualAddress() + 4092, 0xc0ffee
	};
	list->WriteBufferImmediate(1, &p, nullptr);
	CHECK(list->Close() == S_OK);
	CHECK(direct->Wait(fence, 1) == S_OK);
	ID3D12CommandList *lists[] = { list };
	direct->ExecuteCommandLists(1, lists);
	/*
	 * The same fence: Signal(fence, 2) is called before copy's
	 * Signal(fence, 1) and executes after it (R4).
	 */
	CHECK(direct->Signal(fence, 2) == S_OK);
	CHECK(direct->Signal(done, 1) == S_OK);
	CHECK(done->GetCompletedValue() == 0 && dst[0] == 0);
	CHECK(copy->Signal(fence, 1) == S_OK);
	CHECK(done->SetEventOnCompletion(1, nullptr) == S_OK);
	CHECK(fence->GetCompletedValue() == 2);
	for (UINT32 i = 0; i < 1023; i++)
		CHECK(dst[i] == i * 7 + 1);
	CHECK(dst[1023] == 0xc0ffee);
	CHECK(fence->GetCreationFlags() == D3D12_FENCE_FLAG_NONE);

	CHECK(rb->Release() == 0);
	CHECK(up->Release() == 0);
	CHECK(list->Release() == 0);
	CHECK(alloc->Release() == 0);
	CHECK(done->Release() == 0);
	CHECK(fence->Release() == 0);
	CHECK(copy->Release() == 0);
	CHECK(direct->Release() == 0);
	PASS();
}

void query_interface(ID3D12Device1 *dev)
{
	ID3D12Device *base = nullptr;
	ID3D12Fence *fence = nullptr;
	ID3D12Fence1 *fence1 = nullptr;
	ID3D12Pageable *pageable = nullptr;
	ID3D12Resource *res = nullptr;

	CHECK(SUCCEEDED(dev->QueryInterface(IID_PPV_ARGS(&base))));
	CHECK(static_cast<void *>(base) == static_cast<void *>(dev));
	CHECK(base->Release() == 1);
	CHECK(SUCCEEDED(dev->CreateFence(3, D3D12_FENCE_FLAG_NONE,
					 IID_PPV_ARGS(&fence))));
	CHECK(SUCCEEDED(fence->QueryInterface(&fence1)));
	CHECK(SUCCEEDED(fence->QueryInterface(&pageable)));
	CHECK(fence->QueryInterface(&res) == E_NOINTERFACE && !res);
	CHECK(fence1->GetCompletedValue() == 3);
	CHECK(pageable->Release() == 2);
	CHECK(fence1->Release() == 1);
	CHECK(fence->Release() == 0);
	PASS();
}

} /* namespace */

int main()
{
	ID3D12Device1 *dev = device();

	std::printf("TAP version 13\n1..4\n");
	if (!dev) {
		std::printf("ok 1 struct_returns # SKIP no d3dq device\n"
			    "ok 2 wait_before_signal # SKIP no d3dq device\n"
			    "ok 3 query_interface # SKIP no d3dq device\n"
			    "ok 4 device_released # SKIP no d3dq device\n");
		return 0;
	}
	struct_returns(dev);
	wait_before_signal(dev);
	query_interface(dev);
	{
		ULONG left = dev->Release();

		results.push_back({ "device_released", left == 0,
				    "references left: " + std::to_string(left) });
	}

	int failed = 0, n = 0;

	for (const Result &r : results) {
		n++;
		std::printf("%s %d %s\n", r.ok ? "ok" : "not ok", n,
			    r.name.c_str());
		if (!r.ok) {
			std::printf("# %s\n", r.why.c_str());
			failed++;
		}
	}
	return failed ? 1 : 0;
}
