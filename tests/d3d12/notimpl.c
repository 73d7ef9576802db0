// SPDX-License-Identifier: GPL-2.0
/*
 * Every vtable slot of every object is filled and callable: methods the
 * layer does not implement return E_NOTIMPL (clearing their output), void
 * command-list methods make Close return E_NOTIMPL, and the accepted
 * no-ops change nothing. d3d12.h only.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <string.h>

#include "kselftest_harness.h"
#include "util/d3d12_util.h"

FIXTURE(n) {
	ID3D12Device1 *dev;
	ID3D12CommandQueue *q;
	ID3D12Fence1 *f;
	ID3D12Resource *buf;
	ID3D12QueryHeap *heap;
	ID3D12CommandAllocator *alloc;
	ID3D12GraphicsCommandList2 *l;
};

FIXTURE_SETUP(n)
{
	D3D12_QUERY_HEAP_DESC hd = { .Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP,
				     .Count = 1 };

	self->dev = u_device();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	self->q = u_queue(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT);
	ASSERT_EQ(S_OK, ID3D12Device1_CreateFence(self->dev, 0, 0,
						  &IID_ID3D12Fence1,
						  (void **)&self->f));
	self->buf = u_buffer(self->dev, D3D12_HEAP_TYPE_UPLOAD, 256);
	ASSERT_EQ(S_OK, ID3D12Device1_CreateQueryHeap(self->dev, &hd,
						      &IID_ID3D12QueryHeap,
						      (void **)&self->heap));
	ASSERT_TRUE(self->q && self->buf);
	ASSERT_TRUE(u_list(self->dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
			   &self->alloc, &self->l));
}

FIXTURE_TEARDOWN(n)
{
	U_RELEASE(self->l);
	U_RELEASE(self->alloc);
	U_RELEASE(self->heap);
	U_RELEASE(self->buf);
	U_RELEASE(self->f);
	U_RELEASE(self->q);
	if (self->dev)
		EXPECT_EQ(0, ID3D12Device1_Release(self->dev));
}

/* No slot of the object's vtable (of slots entries) is NULL. */
static int null_slots(void *object, size_t size)
{
	void *const *vtbl = *(void *const **)object;
	size_t i;
	int nulls = 0;

	for (i = 0; i < size / sizeof(void *); i++)
		nulls += !vtbl[i];
	return nulls;
}

TEST_F(n, vtables_complete)
{
	EXPECT_EQ(47, sizeof(ID3D12Device1Vtbl) / sizeof(void *));
	EXPECT_EQ(0, null_slots(self->dev, sizeof(ID3D12Device1Vtbl)));
	EXPECT_EQ(0, null_slots(self->q, sizeof(ID3D12CommandQueueVtbl)));
	EXPECT_EQ(0, null_slots(self->f, sizeof(ID3D12Fence1Vtbl)));
	EXPECT_EQ(0, null_slots(self->buf, sizeof(ID3D12ResourceVtbl)));
	EXPECT_EQ(0, null_slots(self->heap, sizeof(ID3D12QueryHeapVtbl)));
	EXPECT_EQ(0, null_slots(self->alloc,
				sizeof(ID3D12CommandAllocatorVtbl)));
	EXPECT_EQ(67, sizeof(ID3D12GraphicsCommandList2Vtbl) / sizeof(void *));
	EXPECT_EQ(0, null_slots(self->l,
				sizeof(ID3D12GraphicsCommandList2Vtbl)));
}

#define EXPECT_NOTIMPL_OUT(call, out) \
	do { \
		(out) = (void *)1; \
		EXPECT_EQ(HR(E_NOTIMPL), HR(call)); \
		EXPECT_EQ(NULL, (void *)(out)); \
	} while (0)

TEST_F(n, device_not_implemented)
{
	D3D12_GRAPHICS_PIPELINE_STATE_DESC gdesc = { 0 };
	D3D12_COMPUTE_PIPELINE_STATE_DESC cdesc = { 0 };
	D3D12_DESCRIPTOR_HEAP_DESC hdesc = { 0 };
	D3D12_HEAP_DESC heapdesc = { 0 };
	D3D12_COMMAND_SIGNATURE_DESC sdesc = { 0 };
	D3D12_RESOURCE_DESC rdesc = { 0 };
	D3D12_FEATURE_DATA_D3D12_OPTIONS opts;
	void *out;
	HANDLE h;

	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateGraphicsPipelineState(
		self->dev, &gdesc, &IID_ID3D12PipelineState, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateComputePipelineState(
		self->dev, &cdesc, &IID_ID3D12PipelineState, &out), out);
	/* CheckFeatureSupport answers, never E_NOTIMPL (features.c). */
	EXPECT_EQ(S_OK, ID3D12Device1_CheckFeatureSupport(
		self->dev, D3D12_FEATURE_D3D12_OPTIONS, &opts, sizeof(opts)));
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateDescriptorHeap(
		self->dev, &hdesc, &IID_ID3D12DescriptorHeap, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateRootSignature(
		self->dev, 0, "", 1, &IID_ID3D12RootSignature, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateHeap(
		self->dev, &heapdesc, &IID_ID3D12Heap, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreatePlacedResource(
		self->dev, NULL, 0, &rdesc, 0, NULL, &IID_ID3D12Resource,
		&out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateReservedResource(
		self->dev, &rdesc, 0, NULL, &IID_ID3D12Resource, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_OpenSharedHandleByName(
		self->dev, L"name", GENERIC_ALL, &h), h);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateCommandSignature(
		self->dev, &sdesc, NULL, &IID_ID3D12CommandSignature, &out),
		out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreatePipelineLibrary(
		self->dev, "", 1, &IID_ID3D12PipelineLibrary, &out), out);
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateSharedHandle(
		self->dev, (ID3D12DeviceChild *)self->f, NULL, GENERIC_ALL,
		L"named", &h), h);
	/* Only fences are shared. */
	EXPECT_NOTIMPL_OUT(ID3D12Device1_CreateSharedHandle(
		self->dev, (ID3D12DeviceChild *)self->buf, NULL, GENERIC_ALL,
		NULL, &h), h);

	/* What this device cannot create: textures, custom heaps, video. */
	EXPECT_EQ(HR(E_NOTIMPL), HR(ID3D12Device1_CreateFence(
		self->dev, 0, D3D12_FENCE_FLAG_NON_MONITORED,
		&IID_ID3D12Fence, &out)));
	EXPECT_EQ(HR(E_NOTIMPL), HR(ID3D12Device1_CreateCommandAllocator(
		self->dev, D3D12_COMMAND_LIST_TYPE_BUNDLE,
		&IID_ID3D12CommandAllocator, &out)));
	/* Write/ReadFromSubresource on buffers: E_INVALIDARG (answers.c). */
}

/*
 * Every command list type, for the three objects that take one: the
 * engine's types work, D3D12's others are not implemented (a bundle is
 * no queue type at all), anything else is invalid; nothing is returned
 * on failure.
 */
TEST_F(n, list_types)
{
	static const struct {
		D3D12_COMMAND_LIST_TYPE type;
		HRESULT list, queue;	/* allocators answer like lists */
	} t[] = {
		{ D3D12_COMMAND_LIST_TYPE_DIRECT, S_OK, S_OK },
		{ D3D12_COMMAND_LIST_TYPE_BUNDLE, E_NOTIMPL, E_INVALIDARG },
		{ D3D12_COMMAND_LIST_TYPE_COMPUTE, S_OK, S_OK },
		{ D3D12_COMMAND_LIST_TYPE_COPY, S_OK, S_OK },
		{ D3D12_COMMAND_LIST_TYPE_VIDEO_DECODE, E_NOTIMPL, E_NOTIMPL },
		{ D3D12_COMMAND_LIST_TYPE_VIDEO_PROCESS, E_NOTIMPL, E_NOTIMPL },
		{ D3D12_COMMAND_LIST_TYPE_VIDEO_ENCODE, E_NOTIMPL, E_NOTIMPL },
		{ (D3D12_COMMAND_LIST_TYPE)7, E_INVALIDARG, E_INVALIDARG },
		{ (D3D12_COMMAND_LIST_TYPE)-1, E_INVALIDARG, E_INVALIDARG },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		D3D12_COMMAND_QUEUE_DESC qd = { .Type = t[i].type };
		ID3D12CommandAllocator *a = (void *)&qd;
		ID3D12GraphicsCommandList *l = (void *)&qd;
		ID3D12CommandQueue *q = (void *)&qd;

		EXPECT_EQ(HR(t[i].queue), HR(ID3D12Device1_CreateCommandQueue(
			self->dev, &qd, &IID_ID3D12CommandQueue,
			(void **)&q)))
			TH_LOG("type %d", (int)t[i].type);
		EXPECT_EQ(t[i].queue == S_OK, q != NULL);
		U_RELEASE(q);
		EXPECT_EQ(HR(t[i].list), HR(ID3D12Device1_CreateCommandAllocator(
			self->dev, t[i].type, &IID_ID3D12CommandAllocator,
			(void **)&a)))
			TH_LOG("type %d", (int)t[i].type);
		EXPECT_EQ(t[i].list == S_OK, a != NULL);
		/* The list's type is checked before its allocator. */
		EXPECT_EQ(HR(t[i].list), HR(ID3D12Device1_CreateCommandList(
			self->dev, 0, t[i].type,
			a ? a : self->alloc, NULL,
			&IID_ID3D12GraphicsCommandList, (void **)&l)))
			TH_LOG("type %d", (int)t[i].type);
		EXPECT_EQ(t[i].list == S_OK, l != NULL);
		U_RELEASE(l);
		U_RELEASE(a);
	}
}

TEST_F(n, device_accepted)
{
	D3D12_CPU_DESCRIPTOR_HANDLE cpu = { 0 };
	ID3D12Pageable *p[1] = { (ID3D12Pageable *)self->buf };
	D3D12_RESIDENCY_PRIORITY prio = D3D12_RESIDENCY_PRIORITY_NORMAL;
	UINT tiles = 7, sub = 7;

	/* Descriptors cannot exist: the void methods do nothing. */
	EXPECT_EQ(0, ID3D12Device1_GetDescriptorHandleIncrementSize(
		self->dev, D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV));
	ID3D12Device1_CreateConstantBufferView(self->dev, NULL, cpu);
	ID3D12Device1_CreateShaderResourceView(self->dev, NULL, NULL, cpu);
	ID3D12Device1_CreateUnorderedAccessView(self->dev, NULL, NULL, NULL,
						cpu);
	ID3D12Device1_CreateRenderTargetView(self->dev, NULL, NULL, cpu);
	ID3D12Device1_CreateDepthStencilView(self->dev, NULL, NULL, cpu);
	ID3D12Device1_CreateSampler(self->dev, NULL, cpu);
	ID3D12Device1_CopyDescriptors(self->dev, 0, NULL, NULL, 0, NULL, NULL,
				      D3D12_DESCRIPTOR_HEAP_TYPE_SAMPLER);
	ID3D12Device1_CopyDescriptorsSimple(self->dev, 0, cpu, cpu,
					    D3D12_DESCRIPTOR_HEAP_TYPE_RTV);
	ID3D12Device1_GetResourceTiling(self->dev, self->buf, &tiles, NULL,
					NULL, &sub, 0, NULL);
	EXPECT_EQ(0, tiles);
	EXPECT_EQ(0, sub);
	/* Memory is always resident, the clock always stable. */
	EXPECT_EQ(S_OK, ID3D12Device1_MakeResident(self->dev, 1, p));
	EXPECT_EQ(S_OK, ID3D12Device1_Evict(self->dev, 1, p));
	EXPECT_EQ(S_OK, ID3D12Device1_SetResidencyPriority(self->dev, 1, p,
							   &prio));
	EXPECT_EQ(S_OK, ID3D12Device1_SetStablePowerState(self->dev, TRUE));
	EXPECT_EQ(E_INVALIDARG, ID3D12Device1_MakeResident(self->dev, 1, NULL));

	/* Queue: no tiled resources, markers are dropped. */
	ID3D12CommandQueue_UpdateTileMappings(self->q, self->buf, 0, NULL,
					      NULL, NULL, 0, NULL, NULL, NULL,
					      D3D12_TILE_MAPPING_FLAG_NONE);
	ID3D12CommandQueue_CopyTileMappings(self->q, self->buf, NULL,
					    self->buf, NULL, NULL,
					    D3D12_TILE_MAPPING_FLAG_NONE);
	ID3D12CommandQueue_SetMarker(self->q, 0, "m", 2);
	ID3D12CommandQueue_BeginEvent(self->q, 0, "e", 2);
	ID3D12CommandQueue_EndEvent(self->q);
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(self->dev));
}

/* Each void method of the command list this layer does not implement. */
static void draw(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_DrawInstanced(l, 3, 1, 0, 0);
}

static void draw_indexed(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_DrawIndexedInstanced(l, 3, 1, 0, 0, 0);
}

static void dispatch(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_Dispatch(l, 1, 1, 1);
}

static void copy_texture(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_CopyTextureRegion(l, NULL, 0, 0, 0, NULL,
						     NULL);
}

static void copy_tiles(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_CopyTiles(l, NULL, NULL, NULL, NULL, 0,
					     D3D12_TILE_COPY_FLAG_NONE);
}

static void resolve(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_ResolveSubresource(l, NULL, 0, NULL, 0,
						      DXGI_FORMAT_UNKNOWN);
}

static void topology(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_IASetPrimitiveTopology(
		l, D3D_PRIMITIVE_TOPOLOGY_TRIANGLELIST);
}

static void viewports(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_RSSetViewports(l, 0, NULL);
}

static void scissors(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_RSSetScissorRects(l, 0, NULL);
}

static void blend_factor(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_OMSetBlendFactor(l, NULL);
}

static void stencil_ref(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_OMSetStencilRef(l, 0);
}

static void pipeline_state(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetPipelineState(l, NULL);
}

static void bundle(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_ExecuteBundle(l, NULL);
}

static void descriptor_heaps(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetDescriptorHeaps(l, 0, NULL);
}

static void compute_root_signature(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRootSignature(l, NULL);
}

static void graphics_root_signature(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRootSignature(l, NULL);
}

static void compute_table(ID3D12GraphicsCommandList2 *l)
{
	D3D12_GPU_DESCRIPTOR_HANDLE h = { 0 };

	ID3D12GraphicsCommandList2_SetComputeRootDescriptorTable(l, 0, h);
}

static void graphics_table(ID3D12GraphicsCommandList2 *l)
{
	D3D12_GPU_DESCRIPTOR_HANDLE h = { 0 };

	ID3D12GraphicsCommandList2_SetGraphicsRootDescriptorTable(l, 0, h);
}

static void compute_constant(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRoot32BitConstant(l, 0, 0, 0);
}

static void graphics_constant(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRoot32BitConstant(l, 0, 0, 0);
}

static void compute_constants(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRoot32BitConstants(l, 0, 0, NULL,
								0);
}

static void graphics_constants(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRoot32BitConstants(l, 0, 0, NULL,
								 0);
}

static void compute_cbv(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRootConstantBufferView(l, 0, 0);
}

static void graphics_cbv(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRootConstantBufferView(l, 0, 0);
}

static void compute_srv(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRootShaderResourceView(l, 0, 0);
}

static void graphics_srv(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRootShaderResourceView(l, 0, 0);
}

static void compute_uav(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetComputeRootUnorderedAccessView(l, 0, 0);
}

static void graphics_uav(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetGraphicsRootUnorderedAccessView(l, 0, 0);
}

static void index_buffer(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_IASetIndexBuffer(l, NULL);
}

static void vertex_buffers(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_IASetVertexBuffers(l, 0, 0, NULL);
}

static void so_targets(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SOSetTargets(l, 0, 0, NULL);
}

static void render_targets(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_OMSetRenderTargets(l, 0, NULL, FALSE, NULL);
}

static void clear_dsv(ID3D12GraphicsCommandList2 *l)
{
	D3D12_CPU_DESCRIPTOR_HANDLE h = { 0 };

	ID3D12GraphicsCommandList2_ClearDepthStencilView(
		l, h, D3D12_CLEAR_FLAG_DEPTH, 1.0f, 0, 0, NULL);
}

static void clear_rtv(ID3D12GraphicsCommandList2 *l)
{
	D3D12_CPU_DESCRIPTOR_HANDLE h = { 0 };
	const FLOAT color[4] = { 0 };

	ID3D12GraphicsCommandList2_ClearRenderTargetView(l, h, color, 0, NULL);
}

static void clear_uav_uint(ID3D12GraphicsCommandList2 *l)
{
	D3D12_GPU_DESCRIPTOR_HANDLE g = { 0 };
	D3D12_CPU_DESCRIPTOR_HANDLE c = { 0 };
	const UINT v[4] = { 0 };

	ID3D12GraphicsCommandList2_ClearUnorderedAccessViewUint(l, g, c, NULL,
								v, 0, NULL);
}

static void clear_uav_float(ID3D12GraphicsCommandList2 *l)
{
	D3D12_GPU_DESCRIPTOR_HANDLE g = { 0 };
	D3D12_CPU_DESCRIPTOR_HANDLE c = { 0 };
	const FLOAT v[4] = { 0 };

	ID3D12GraphicsCommandList2_ClearUnorderedAccessViewFloat(l, g, c, NULL,
								 v, 0, NULL);
}

static void execute_indirect(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_ExecuteIndirect(l, NULL, 0, NULL, 0, NULL,
						   0);
}

static void atomic_copy32(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_AtomicCopyBufferUINT(l, NULL, 0, NULL, 0, 0,
							NULL, NULL);
}

static void atomic_copy64(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_AtomicCopyBufferUINT64(l, NULL, 0, NULL, 0,
							  0, NULL, NULL);
}

static void depth_bounds(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_OMSetDepthBounds(l, 0.0f, 1.0f);
}

static void sample_positions(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetSamplePositions(l, 0, 0, NULL);
}

static void resolve_region(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_ResolveSubresourceRegion(
		l, NULL, 0, 0, 0, NULL, 0, NULL, DXGI_FORMAT_UNKNOWN,
		D3D12_RESOLVE_MODE_DECOMPRESS);
}

static void view_instance_mask(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetViewInstanceMask(l, 1);
}

static void predication_on(ID3D12GraphicsCommandList2 *l)
{
	ID3D12GraphicsCommandList2_SetPredication(
		l, (ID3D12Resource *)l, 0, D3D12_PREDICATION_OP_EQUAL_ZERO);
}

static const struct {
	const char *name;
	void (*call)(ID3D12GraphicsCommandList2 *l);
} notimpl[] = {
#define N(f) { #f, f }
	N(draw), N(draw_indexed), N(dispatch), N(copy_texture), N(copy_tiles),
	N(resolve), N(topology), N(viewports), N(scissors), N(blend_factor),
	N(stencil_ref), N(pipeline_state), N(bundle), N(descriptor_heaps),
	N(compute_root_signature), N(graphics_root_signature),
	N(compute_table), N(graphics_table), N(compute_constant),
	N(graphics_constant), N(compute_constants), N(graphics_constants),
	N(compute_cbv), N(graphics_cbv), N(compute_srv), N(graphics_srv),
	N(compute_uav), N(graphics_uav), N(index_buffer), N(vertex_buffers),
	N(so_targets), N(render_targets), N(clear_dsv), N(clear_rtv),
	N(clear_uav_uint), N(clear_uav_float), N(execute_indirect),
	N(atomic_copy32), N(atomic_copy64), N(depth_bounds),
	N(sample_positions), N(resolve_region), N(view_instance_mask),
	N(predication_on),
#undef N
};

TEST_F(n, list_not_implemented)
{
	size_t i;

	/* 44 void methods, and BeginQuery/EndQuery of other query types. */
	EXPECT_EQ(44, sizeof(notimpl) / sizeof(notimpl[0]));
	for (i = 0; i < sizeof(notimpl) / sizeof(notimpl[0]); i++) {
		notimpl[i].call(self->l);
		EXPECT_EQ(HR(E_NOTIMPL),
			  HR(ID3D12GraphicsCommandList2_Close(self->l)))
			TH_LOG("%s", notimpl[i].name);
		ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(
				self->l, self->alloc, NULL));
	}
	/* A later valid command does not hide the first error. */
	dispatch(self->l);
	u_write32(self->l, self->buf, 0, 1);
	EXPECT_EQ(HR(E_NOTIMPL), HR(ID3D12GraphicsCommandList2_Close(self->l)));
	EXPECT_EQ(S_OK, ID3D12Device1_GetDeviceRemovedReason(self->dev));
}

TEST_F(n, list_accepted)
{
	D3D12_RESOURCE_BARRIER b = {
		.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV,
	};

	ID3D12GraphicsCommandList2_ResourceBarrier(self->l, 1, &b);
	ID3D12GraphicsCommandList2_ResourceBarrier(self->l, 0, NULL);
	ID3D12GraphicsCommandList2_DiscardResource(self->l, self->buf, NULL);
	ID3D12GraphicsCommandList2_ClearState(self->l, NULL);
	ID3D12GraphicsCommandList2_SetPredication(
		self->l, NULL, 0, D3D12_PREDICATION_OP_EQUAL_ZERO);
	ID3D12GraphicsCommandList2_SetMarker(self->l, 0, "m", 2);
	ID3D12GraphicsCommandList2_BeginEvent(self->l, 0, "e", 2);
	ID3D12GraphicsCommandList2_EndEvent(self->l);
	EXPECT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->l));
	/* Recording into a closed list is ignored. */
	dispatch(self->l);
	ASSERT_EQ(S_OK, ID3D12GraphicsCommandList2_Reset(self->l, self->alloc,
							 NULL));
	EXPECT_EQ(S_OK, ID3D12GraphicsCommandList2_Close(self->l));
}

TEST_HARNESS_MAIN
