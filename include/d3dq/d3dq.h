/* SPDX-License-Identifier: MIT */
/*
 * libd3dq: D3D12 fence and queue semantics on the d3dq render node.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * Every function returning int returns 0 on success or a negative errno.
 * Every object may be used from several threads at once, and destroyed
 * (or its device closed) while calls begun before are in progress on it:
 * they use no freed memory and no closed descriptor, and return -ENODEV
 * (or 0 for a wait the destruction released). Exceptions, which take no
 * reference: d3dq_fence_get_completed_value() and d3dq_buffer_map(). In
 * a child of fork(), every call on an object of the parent returns
 * -ENODEV. See libd3dq(3), THREAD SAFETY. Passing NULL to a *_destroy()
 * or *_close() function does nothing.
 */
#ifndef D3DQ_D3DQ_H
#define D3DQ_D3DQ_H

#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

struct d3dq_device;
struct d3dq_fence;
struct d3dq_queue;
struct d3dq_buffer;
struct d3dq_cmdlist;

/*
 * Versions. D3DQ_VERSION is the version of this header, d3dq_version() the
 * version of the library the program runs with; both are
 * D3DQ_MAKE_VERSION(major, minor, patch). See d3dq_version(3).
 */
#define D3DQ_VERSION_MAJOR 0
#define D3DQ_VERSION_MINOR 5
#define D3DQ_VERSION_PATCH 0
#define D3DQ_MAKE_VERSION(major, minor, patch) \
	(((uint32_t)(major) << 16) | ((uint32_t)(minor) << 8) | (uint32_t)(patch))
#define D3DQ_VERSION D3DQ_MAKE_VERSION(D3DQ_VERSION_MAJOR, \
				       D3DQ_VERSION_MINOR, D3DQ_VERSION_PATCH)

uint32_t d3dq_version(void);

/** Timeout for d3dq_fence_wait() that never expires. */
#define D3DQ_TIMEOUT_INFINITE UINT64_MAX

/*
 * Devices. d3dq_device_open(): path NULL opens the first d3dq render node.
 * d3dq_device_removed_reason(): 0, or the -errno the device was removed
 * with (-ENODEV explicit, -ETIMEDOUT job timeout, -EINVAL a list still
 * recording was executed, ...), never -EFAULT, which is what a NULL device
 * returns. d3dq_device_remove() is ID3D12Device5::RemoveDevice. See
 * d3dq_device_open(3).
 */
int  d3dq_device_open(const char *path, struct d3dq_device **dev);
void d3dq_device_close(struct d3dq_device *dev);
int  d3dq_device_removed_reason(struct d3dq_device *dev);
int  d3dq_device_remove(struct d3dq_device *dev);

/*
 * Devices whose events are the program's own (since 0.2): the program's
 * signal_event(token, context) is called, on a library thread, for each
 * event that fires, where an eventfd would have been written; the
 * *_token_* calls register such tokens (any pointer but NULL, which
 * blocks as eventfd -1 does). What signal_event returns is ignored.
 * Extensible like struct d3dq_queue_desc (D3DQ_DEVICE_DESC_INIT). See
 * d3dq_device_open_desc(3).
 */
typedef int (*d3dq_signal_event_fn)(void *token, void *context);

struct d3dq_device_desc {
	uint32_t size;		/* sizeof(struct d3dq_device_desc) */
	uint32_t flags;		/* must be 0 */
	const char *path;	/* as d3dq_device_open()'s */
	d3dq_signal_event_fn signal_event;	/* or NULL: eventfds only */
	void *context;		/* passed to signal_event */
};

#define D3DQ_DEVICE_DESC_INIT { sizeof(struct d3dq_device_desc), 0, NULL, \
				NULL, NULL }

int  d3dq_device_open_desc(const struct d3dq_device_desc *desc,
			   struct d3dq_device **dev);

/*
 * The engine clock (ID3D12CommandQueue::GetTimestampFrequency and
 * GetClockCalibration): ticks per second of the values
 * d3dq_cmdlist_timestamp() writes, and one reading of that clock together
 * with CLOCK_MONOTONIC in nanoseconds. See d3dq_device_get_timestamp_frequency(3).
 */
int  d3dq_device_get_timestamp_frequency(struct d3dq_device *dev,
					 uint64_t *frequency);
int  d3dq_device_get_clock_calibration(struct d3dq_device *dev,
				       uint64_t *gpu_timestamp,
				       uint64_t *cpu_timestamp);

/*
 * Fences (ID3D12Fence). Values may go down and jump, shared fences' too:
 * a shared fence is a kernel fence other processes can import, and obeys
 * the same rules in every process that holds it.
 * d3dq_fence_set_event_on_completion(): eventfd < 0 blocks.
 * d3dq_fence_wait(): -ETIMEDOUT on timeout. See d3dq_fence_create(3).
 */
#define D3DQ_FENCE_FLAG_NONE   0
#define D3DQ_FENCE_FLAG_SHARED 1

int      d3dq_fence_create(struct d3dq_device *dev, uint64_t initial_value,
			   uint32_t flags, struct d3dq_fence **fence);
void     d3dq_fence_destroy(struct d3dq_fence *fence);
uint64_t d3dq_fence_get_completed_value(struct d3dq_fence *fence);
int      d3dq_fence_signal(struct d3dq_fence *fence, uint64_t value);
int      d3dq_fence_set_event_on_completion(struct d3dq_fence *fence,
					    uint64_t value, int eventfd);
int      d3dq_fence_wait(struct d3dq_fence *fence, uint64_t value,
			 uint64_t timeout_ns);
int      d3dq_fence_export(struct d3dq_fence *fence, int *fd);
int      d3dq_fence_import(struct d3dq_device *dev, int fd,
			   struct d3dq_fence **fence);

#define D3DQ_MULTIPLE_FENCE_WAIT_ALL 0
#define D3DQ_MULTIPLE_FENCE_WAIT_ANY 1

int d3dq_device_set_event_on_multiple_fence_completion(struct d3dq_device *dev,
		struct d3dq_fence *const *fences, const uint64_t *values,
		uint32_t count, uint32_t flags, int eventfd);

/* Since 0.2, on a device opened with a signal_event: see above. */
int d3dq_fence_set_token_on_completion(struct d3dq_fence *fence,
				       uint64_t value, void *token);
int d3dq_device_set_token_on_multiple_fence_completion(
		struct d3dq_device *dev, struct d3dq_fence *const *fences,
		const uint64_t *values, uint32_t count, uint32_t flags,
		void *token);

/*
 * Since 0.3: a sync_file (a dma-fence fd for other drivers) that signals
 * once the fence reaches @value; -ENODATA while no queue signal of this
 * device that brings it is on its way. See d3dq_fence_export_sync_file(3).
 */
int d3dq_fence_export_sync_file(struct d3dq_fence *fence, uint64_t value,
				int *fd);

/*
 * Since 0.4: the largest buffer d3dq_buffer_create() makes on @dev, in
 * bytes (the driver's MAX_BO_SIZE). See d3dq_device_get_max_buffer_size(3).
 */
int d3dq_device_get_max_buffer_size(struct d3dq_device *dev, uint64_t *size);
/*
 * Since 0.4: set the fence to @value when another driver's work completes,
 * given as a sync_file or a syncobj (an fd of drmSyncobjHandleToFD()) at
 * a point (0 for a binary one); at once if it has. Returns at once; an
 * error of that work writes nothing. See d3dq_fence_signal_on_sync_file(3).
 */
int d3dq_fence_signal_on_sync_file(struct d3dq_fence *fence, uint64_t value,
				   int fd);
int d3dq_fence_signal_on_syncobj(struct d3dq_fence *fence, uint64_t value,
				 int syncobj_fd, uint64_t point);
/*
 * Since 0.4: signal @eventfd once d3dq_fence_export_sync_file(@fence,
 * @value) would succeed (the value reached, or a queue signal of this
 * device that brings it on its way), without a thread.
 */
int d3dq_fence_set_event_on_export_ready(struct d3dq_fence *fence,
					 uint64_t value, int eventfd);

/*
 * Queues (ID3D12CommandQueue). Wait, Signal and Execute return at once;
 * the work of one queue runs in call order; a wait may be queued before
 * its signal exists. See d3dq_queue_wait(3).
 *
 * Types and priorities have D3D12's numbers (D3D12_COMMAND_LIST_TYPE_*,
 * D3D12_COMMAND_QUEUE_PRIORITY_*), so a D3D12_COMMAND_QUEUE_DESC's fields
 * can be assigned as they are.
 */
enum d3dq_queue_type {
	D3DQ_QUEUE_DIRECT = 0,
	D3DQ_QUEUE_COMPUTE = 2,
	D3DQ_QUEUE_COPY = 3,
};

enum d3dq_queue_priority {
	D3DQ_QUEUE_PRIORITY_NORMAL = 0,
	D3DQ_QUEUE_PRIORITY_HIGH = 100,
	D3DQ_QUEUE_PRIORITY_GLOBAL_REALTIME = 10000,
};

/*
 * Extensible: size is sizeof(struct d3dq_queue_desc) as the caller was
 * compiled (D3DQ_QUEUE_DESC_INIT sets it). A later library accepts this
 * layout; members added later go at the end, and bytes this library does
 * not know must be zero. See d3dq_queue_create(3).
 */
struct d3dq_queue_desc {
	uint32_t size;		/* sizeof(struct d3dq_queue_desc) */
	uint32_t type;		/* enum d3dq_queue_type */
	int32_t  priority;	/* enum d3dq_queue_priority */
	uint32_t flags;		/* must be 0 */
	uint32_t node_mask;	/* 0 or 1: the device has one node */
};

#define D3DQ_QUEUE_DESC_INIT { sizeof(struct d3dq_queue_desc), 0, 0, 0, 0 }

int  d3dq_queue_create(struct d3dq_device *dev,
		       const struct d3dq_queue_desc *desc,
		       struct d3dq_queue **queue);
void d3dq_queue_destroy(struct d3dq_queue *queue);
int  d3dq_queue_wait(struct d3dq_queue *queue, struct d3dq_fence *fence,
		     uint64_t value);
int  d3dq_queue_signal(struct d3dq_queue *queue, struct d3dq_fence *fence,
		       uint64_t value);
int  d3dq_queue_execute(struct d3dq_queue *queue,
			struct d3dq_cmdlist *const *lists, uint32_t count);

/* Buffers shared by the engine and the CPU; the map is valid until destroy. */
int   d3dq_buffer_create(struct d3dq_device *dev, uint64_t size,
			 struct d3dq_buffer **buf);
void *d3dq_buffer_map(struct d3dq_buffer *buf);
void  d3dq_buffer_destroy(struct d3dq_buffer *buf);

/*
 * Since 0.5 (uapi 1.12): another driver's buffer, given as a dma-buf fd,
 * as a buffer of @dev (the fd stays the caller's; its map, NULL if the
 * exporter allows none); and an execute whose jobs first wait for the
 * other drivers' work in the buffers they use (implicit sync). See
 * d3dq_buffer_import(3) and d3dq_queue_execute_flags(3).
 */
int d3dq_buffer_import(struct d3dq_device *dev, int fd,
		       struct d3dq_buffer **buf);

#define D3DQ_EXECUTE_IMPLICIT_SYNC 1u

int d3dq_queue_execute_flags(struct d3dq_queue *queue,
			     struct d3dq_cmdlist *const *lists, uint32_t count,
			     uint32_t flags);

/*
 * Command lists: created recording; close before executing (a closed list
 * can be executed many times); reset to record again.
 */
int  d3dq_cmdlist_create(struct d3dq_device *dev, struct d3dq_cmdlist **list);
void d3dq_cmdlist_destroy(struct d3dq_cmdlist *list);
int  d3dq_cmdlist_close(struct d3dq_cmdlist *list);
int  d3dq_cmdlist_reset(struct d3dq_cmdlist *list);
int  d3dq_cmdlist_write64(struct d3dq_cmdlist *l, struct d3dq_buffer *b,
			  uint64_t offset, uint64_t value);
int  d3dq_cmdlist_copy(struct d3dq_cmdlist *l, struct d3dq_buffer *dst,
		       uint64_t dst_offset, struct d3dq_buffer *src,
		       uint64_t src_offset, uint64_t size);
int  d3dq_cmdlist_compare_store64(struct d3dq_cmdlist *l,
				  struct d3dq_buffer *b, uint64_t offset,
				  uint64_t expected, uint64_t desired);
int  d3dq_cmdlist_timestamp(struct d3dq_cmdlist *l, struct d3dq_buffer *b,
			    uint64_t offset);
int  d3dq_cmdlist_delay(struct d3dq_cmdlist *l, uint64_t ns);

#if defined(__cplusplus)
}
#endif

#endif /* D3DQ_D3DQ_H */
