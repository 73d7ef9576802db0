// SPDX-License-Identifier: MIT
/*
 * d3d12-hello: D3D12 sample code, unchanged, on d3dq.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Written as Microsoft's D3D12 samples are (ComPtr, IID_PPV_ARGS, a fence
 * event per frame, FrameCount frames in flight), with Debian's d3d12.h and
 * -ld3d12-d3dq. Each frame the CPU writes data into an upload buffer, a
 * copy queue uploads it, the direct queue waits for the copy queue (the
 * Wait is issued first) and copies the data to a readback buffer between
 * two timestamps, and the CPU checks the result. An event is an eventfd
 * (HANDLE = file descriptor); WaitForSingleObject is a read().
 *
 * Build: c++ -o d3d12-hello d3d12-hello.cpp \
 *            $(pkg-config --cflags --libs libd3d12-d3dq)
 */
#include <wsl/winadapter.h>
#include <wsl/wrladapter.h>
#include <d3d12.h>
#include <dxguids/dxguids.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using Microsoft::WRL::ComPtr;

namespace {

constexpr UINT FrameCount = 2;
constexpr UINT FramesToRun = 6;
constexpr UINT64 BufferSize = 64 * 1024;
constexpr UINT WordCount = BufferSize / sizeof(UINT32);

void ThrowIfFailed(HRESULT hr, const char *what)
{
	if (FAILED(hr)) {
		std::fprintf(stderr, "d3d12-hello: %s failed: 0x%08x\n", what,
			     static_cast<unsigned int>(hr));
		std::exit(1);
	}
}

/* CreateEvent: an eventfd whose descriptor is the HANDLE. */
HANDLE CreateEvent()
{
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd < 0) {
		std::perror("d3d12-hello: eventfd");
		std::exit(1);
	}
	return reinterpret_cast<HANDLE>(static_cast<intptr_t>(fd));
}

/* WaitForSingleObject(event, INFINITE). */
void WaitForSingleObject(HANDLE event)
{
	uint64_t count;

	if (read(static_cast<int>(reinterpret_cast<intptr_t>(event)), &count,
		 sizeof(count)) != sizeof(count)) {
		std::perror("d3d12-hello: read");
		std::exit(1);
	}
}

void CloseHandle(HANDLE event)
{
	close(static_cast<int>(reinterpret_cast<intptr_t>(event)));
}

ComPtr<ID3D12Resource> CreateBuffer(ID3D12Device *device, D3D12_HEAP_TYPE type,
				    D3D12_RESOURCE_STATES state)
{
	D3D12_HEAP_PROPERTIES heapProps = {};
	heapProps.Type = type;

	D3D12_RESOURCE_DESC desc = {};
	desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
	desc.Width = BufferSize;
	desc.Height = 1;
	desc.DepthOrArraySize = 1;
	desc.MipLevels = 1;
	desc.Format = DXGI_FORMAT_UNKNOWN;
	desc.SampleDesc.Count = 1;
	desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;

	ComPtr<ID3D12Resource> buffer;
	ThrowIfFailed(device->CreateCommittedResource(&heapProps,
			D3D12_HEAP_FLAG_NONE, &desc, state, nullptr,
			IID_PPV_ARGS(&buffer)), "CreateCommittedResource");
	return buffer;
}

class HelloFence {
public:
	void OnInit();
	bool OnRender(UINT frame);
	void OnDestroy();

private:
	void PopulateCommandLists(UINT frame);
	void MoveToNextFrame();
	void WaitForGpu();

	ComPtr<ID3D12Device> m_device;
	ComPtr<ID3D12CommandQueue> m_commandQueue;
	ComPtr<ID3D12CommandQueue> m_copyQueue;
	ComPtr<ID3D12CommandAllocator> m_commandAllocators[FrameCount];
	ComPtr<ID3D12CommandAllocator> m_copyAllocators[FrameCount];
	ComPtr<ID3D12GraphicsCommandList> m_commandList;
	ComPtr<ID3D12GraphicsCommandList> m_copyList;
	ComPtr<ID3D12Resource> m_uploadBuffer[FrameCount];
	ComPtr<ID3D12Resource> m_gpuBuffer;
	ComPtr<ID3D12Resource> m_readbackBuffer[FrameCount];
	ComPtr<ID3D12QueryHeap> m_queryHeap;
	ComPtr<ID3D12Fence> m_fence;
	ComPtr<ID3D12Fence> m_copyFence;
	HANDLE m_fenceEvent = nullptr;
	UINT64 m_fenceValues[FrameCount] = {};
	UINT64 m_copyFenceValue = 0;
	UINT64 m_timestampFrequency = 0;
	UINT m_frameIndex = 0;
};

void HelloFence::OnInit()
{
	ThrowIfFailed(D3D12CreateDevice(nullptr, D3D_FEATURE_LEVEL_11_0,
					IID_PPV_ARGS(&m_device)),
		      "D3D12CreateDevice");

	D3D12_COMMAND_QUEUE_DESC queueDesc = {};
	queueDesc.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
	ThrowIfFailed(m_device->CreateCommandQueue(&queueDesc,
			IID_PPV_ARGS(&m_commandQueue)), "CreateCommandQueue");
	queueDesc.Type = D3D12_COMMAND_LIST_TYPE_COPY;
	ThrowIfFailed(m_device->CreateCommandQueue(&queueDesc,
			IID_PPV_ARGS(&m_copyQueue)), "CreateCommandQueue");
	m_commandQueue->SetName(L"direct queue");
	m_copyQueue->SetName(L"copy queue");
	ThrowIfFailed(m_commandQueue->GetTimestampFrequency(
			&m_timestampFrequency), "GetTimestampFrequency");

	for (UINT n = 0; n < FrameCount; n++) {
		ThrowIfFailed(m_device->CreateCommandAllocator(
				D3D12_COMMAND_LIST_TYPE_DIRECT,
				IID_PPV_ARGS(&m_commandAllocators[n])),
			      "CreateCommandAllocator");
		ThrowIfFailed(m_device->CreateCommandAllocator(
				D3D12_COMMAND_LIST_TYPE_COPY,
				IID_PPV_ARGS(&m_copyAllocators[n])),
			      "CreateCommandAllocator");
		m_uploadBuffer[n] = CreateBuffer(m_device.Get(),
				D3D12_HEAP_TYPE_UPLOAD,
				D3D12_RESOURCE_STATE_GENERIC_READ);
		m_readbackBuffer[n] = CreateBuffer(m_device.Get(),
				D3D12_HEAP_TYPE_READBACK,
				D3D12_RESOURCE_STATE_COPY_DEST);
	}
	m_gpuBuffer = CreateBuffer(m_device.Get(), D3D12_HEAP_TYPE_DEFAULT,
				   D3D12_RESOURCE_STATE_COMMON);

	ThrowIfFailed(m_device->CreateCommandList(0,
			D3D12_COMMAND_LIST_TYPE_DIRECT,
			m_commandAllocators[0].Get(), nullptr,
			IID_PPV_ARGS(&m_commandList)), "CreateCommandList");
	ThrowIfFailed(m_commandList->Close(), "Close");
	ThrowIfFailed(m_device->CreateCommandList(0,
			D3D12_COMMAND_LIST_TYPE_COPY,
			m_copyAllocators[0].Get(), nullptr,
			IID_PPV_ARGS(&m_copyList)), "CreateCommandList");
	ThrowIfFailed(m_copyList->Close(), "Close");

	D3D12_QUERY_HEAP_DESC queryHeapDesc = {};
	queryHeapDesc.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
	queryHeapDesc.Count = 2 * FrameCount;
	ThrowIfFailed(m_device->CreateQueryHeap(&queryHeapDesc,
			IID_PPV_ARGS(&m_queryHeap)), "CreateQueryHeap");

	ThrowIfFailed(m_device->CreateFence(0, D3D12_FENCE_FLAG_NONE,
			IID_PPV_ARGS(&m_fence)), "CreateFence");
	ThrowIfFailed(m_device->CreateFence(0, D3D12_FENCE_FLAG_NONE,
			IID_PPV_ARGS(&m_copyFence)), "CreateFence");
	m_fenceEvent = CreateEvent();
}

void HelloFence::PopulateCommandLists(UINT frame)
{
	/* The CPU fills this frame's upload buffer. */
	UINT32 *data = nullptr;
	D3D12_RANGE readRange = { 0, 0 };
	ThrowIfFailed(m_uploadBuffer[m_frameIndex]->Map(0, &readRange,
			reinterpret_cast<void **>(&data)), "Map");
	for (UINT i = 0; i < WordCount; i++)
		data[i] = frame * 0x10000 + i;
	m_uploadBuffer[m_frameIndex]->Unmap(0, nullptr);

	ThrowIfFailed(m_copyAllocators[m_frameIndex]->Reset(), "Reset");
	ThrowIfFailed(m_copyList->Reset(m_copyAllocators[m_frameIndex].Get(),
					 nullptr), "Reset");
	m_copyList->CopyResource(m_gpuBuffer.Get(),
				 m_uploadBuffer[m_frameIndex].Get());
	ThrowIfFailed(m_copyList->Close(), "Close");

	ThrowIfFailed(m_commandAllocators[m_frameIndex]->Reset(), "Reset");
	ThrowIfFailed(m_commandList->Reset(
			m_commandAllocators[m_frameIndex].Get(), nullptr),
		      "Reset");
	UINT query = 2 * m_frameIndex;
	m_commandList->EndQuery(m_queryHeap.Get(), D3D12_QUERY_TYPE_TIMESTAMP,
				query);
	m_commandList->CopyResource(m_readbackBuffer[m_frameIndex].Get(),
				    m_gpuBuffer.Get());
	/* The frame number in the last word, written by the GPU. */
	D3D12_WRITEBUFFERIMMEDIATE_PARAMETER param = {
		m_readbackBuffer[m_frameIndex]->GetGPUVirtualAddress() +
			BufferSize - 4,
		frame,
	};
	ComPtr<ID3D12GraphicsCommandList2> commandList2;
	ThrowIfFailed(m_commandList.As(&commandList2), "QueryInterface");
	commandList2->WriteBufferImmediate(1, &param, nullptr);
	m_commandList->EndQuery(m_queryHeap.Get(), D3D12_QUERY_TYPE_TIMESTAMP,
				query + 1);
	/* Timestamps go after the data, in the readback buffer's spare room. */
	m_commandList->ResolveQueryData(m_queryHeap.Get(),
			D3D12_QUERY_TYPE_TIMESTAMP, query, 2,
			m_readbackBuffer[m_frameIndex].Get(), BufferSize - 32);
	ThrowIfFailed(m_commandList->Close(), "Close");
}

bool HelloFence::OnRender(UINT frame)
{
	PopulateCommandLists(frame);

	/*
	 * The direct queue's Wait is issued before the copy queue's Signal
	 * exists; the direct queue is held back until the upload is done.
	 */
	const UINT64 copyValue = ++m_copyFenceValue;
	ThrowIfFailed(m_commandQueue->Wait(m_copyFence.Get(), copyValue),
		      "Wait");
	ID3D12CommandList *lists[] = { m_commandList.Get() };
	m_commandQueue->ExecuteCommandLists(1, lists);

	ID3D12CommandList *copyLists[] = { m_copyList.Get() };
	m_copyQueue->ExecuteCommandLists(1, copyLists);
	ThrowIfFailed(m_copyQueue->Signal(m_copyFence.Get(), copyValue),
		      "Signal");

	UINT readIndex = m_frameIndex;
	MoveToNextFrame();

	/* That frame's fence value was reached: its data can be read. */
	WaitForGpu();
	const UINT32 *result = nullptr;
	D3D12_RANGE readRange = { 0, BufferSize };
	ThrowIfFailed(m_readbackBuffer[readIndex]->Map(0, &readRange,
			reinterpret_cast<void **>(const_cast<UINT32 **>(&result))),
		      "Map");
	bool ok = true;
	for (UINT i = 0; i < WordCount - 8; i++)
		ok &= result[i] == frame * 0x10000 + i;
	ok &= result[WordCount - 1] == frame;
	const UINT64 *ts = reinterpret_cast<const UINT64 *>(
		reinterpret_cast<const char *>(result) + BufferSize - 32);
	std::printf("frame %u: %s, copy + write took %.1f us on the direct queue\n",
		    frame, ok ? "data ok" : "DATA WRONG",
		    (ts[1] - ts[0]) * 1e6 / m_timestampFrequency);
	D3D12_RANGE writtenRange = { 0, 0 };
	m_readbackBuffer[readIndex]->Unmap(0, &writtenRange);
	return ok;
}

/* Prepare to render the next frame (from the samples' MoveToNextFrame). */
void HelloFence::MoveToNextFrame()
{
	const UINT64 currentFenceValue = m_fenceValues[m_frameIndex] + 1;
	ThrowIfFailed(m_commandQueue->Signal(m_fence.Get(), currentFenceValue),
		      "Signal");
	m_frameIndex = (m_frameIndex + 1) % FrameCount;

	if (m_fence->GetCompletedValue() < m_fenceValues[m_frameIndex]) {
		ThrowIfFailed(m_fence->SetEventOnCompletion(
				m_fenceValues[m_frameIndex], m_fenceEvent),
			      "SetEventOnCompletion");
		WaitForSingleObject(m_fenceEvent);
	}
	m_fenceValues[m_frameIndex] = currentFenceValue;
}

/* Wait for pending GPU work to complete. */
void HelloFence::WaitForGpu()
{
	const UINT64 value = m_fenceValues[m_frameIndex];

	if (m_fence->GetCompletedValue() < value) {
		ThrowIfFailed(m_fence->SetEventOnCompletion(value, m_fenceEvent),
			      "SetEventOnCompletion");
		WaitForSingleObject(m_fenceEvent);
	}
}

void HelloFence::OnDestroy()
{
	WaitForGpu();
	CloseHandle(m_fenceEvent);
	ThrowIfFailed(m_device->GetDeviceRemovedReason(),
		      "GetDeviceRemovedReason");
}

} /* namespace */

int main()
{
	HelloFence sample;
	bool ok = true;

	sample.OnInit();
	for (UINT frame = 0; frame < FramesToRun; frame++)
		ok &= sample.OnRender(frame);
	sample.OnDestroy();
	std::printf("d3d12-hello: %s\n", ok ? "all frames ok" : "FAILED");
	return ok ? 0 : 1;
}
