/* SPDX-License-Identifier: MIT */
/*
 * d3dq: a virtual DRM render node with in-order software queues,
 * drm_syncobj timeline waits and signals.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef _D3DQ_DRM_H_
#define _D3DQ_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: Introduction
 *
 * d3dq exposes one render node per virtual device. Userspace creates
 * buffers (shmem GEM objects) and queues, and submits jobs to queues. A job
 * is a list of syncobj points (or d3dq fence values) to wait on, a command
 * stream for the software engine (possibly empty) and a list of syncobj
 * points (or fence values) to signal when the job is done. Jobs of one
 * queue run strictly in submission order; jobs of different queues run
 * concurrently.
 *
 * Rules every structure here follows:
 *
 * - Structures are 64-bit aligned; fields are naturally aligned with
 *   explicit ``pad`` fields. Padding must be zero, otherwise the ioctl fails
 *   with -EINVAL.
 * - Flags that the running driver does not know are rejected with -EINVAL.
 *   Query %DRM_D3DQ_PARAM_UAPI_VERSION before using a newer flag.
 * - Structures passed directly to an ioctl only grow at their end. A new
 *   field keeps the old behaviour when it is zero (the DRM core zero-fills
 *   the part an older userspace did not pass).
 * - Arrays are passed as &struct drm_d3dq_obj_array, whose stride lets
 *   elements grow: the kernel reads min(stride, its own size) bytes of each
 *   element and requires bytes it does not know to be zero.
 * - Ids and handles are private to the open file: another file (another
 *   process) cannot name them.
 */

/**
 * DOC: IOCTL IDs
 *
 * New ioctls go at the end. Entries are never reordered or reused.
 */
enum drm_d3dq_ioctl_id {
	/** @DRM_D3DQ_GET_PARAM: Read a device parameter or limit. */
	DRM_D3DQ_GET_PARAM = 0,

	/** @DRM_D3DQ_BO_CREATE: Create a buffer object. */
	DRM_D3DQ_BO_CREATE,

	/** @DRM_D3DQ_BO_MMAP_OFFSET: Get the fake offset to mmap a buffer. */
	DRM_D3DQ_BO_MMAP_OFFSET,

	/** @DRM_D3DQ_QUEUE_CREATE: Create a queue. */
	DRM_D3DQ_QUEUE_CREATE,

	/** @DRM_D3DQ_QUEUE_DESTROY: Destroy a queue, cancelling its work. */
	DRM_D3DQ_QUEUE_DESTROY,

	/** @DRM_D3DQ_QUEUE_GET_STATE: Query whether a queue is usable. */
	DRM_D3DQ_QUEUE_GET_STATE,

	/** @DRM_D3DQ_SUBMIT: Submit a job to a queue. */
	DRM_D3DQ_SUBMIT,

	/** @DRM_D3DQ_REMOVE: Lose every queue of the file (device removal). */
	DRM_D3DQ_REMOVE,

	/** @DRM_D3DQ_WAIT_RELEASE: Release a releasable wait of a job early. */
	DRM_D3DQ_WAIT_RELEASE,

	/** @DRM_D3DQ_FENCE_CREATE: Create a fence (uapi 1.3). */
	DRM_D3DQ_FENCE_CREATE,

	/** @DRM_D3DQ_FENCE_DESTROY: Drop a fence handle (uapi 1.3). */
	DRM_D3DQ_FENCE_DESTROY,

	/** @DRM_D3DQ_FENCE_EXPORT: Export a shared fence as an fd (uapi 1.3). */
	DRM_D3DQ_FENCE_EXPORT,

	/** @DRM_D3DQ_FENCE_IMPORT: Import a fence fd as a handle (uapi 1.3). */
	DRM_D3DQ_FENCE_IMPORT,

	/** @DRM_D3DQ_FENCE_SIGNAL: Set a fence's value from the CPU (uapi 1.3). */
	DRM_D3DQ_FENCE_SIGNAL,

	/** @DRM_D3DQ_FENCE_WAIT: Wait for fence values (uapi 1.3). */
	DRM_D3DQ_FENCE_WAIT,

	/** @DRM_D3DQ_FENCE_EVENT: Register an eventfd on values (uapi 1.3). */
	DRM_D3DQ_FENCE_EVENT,

	/**
	 * @DRM_D3DQ_FENCE_EXPORT_SYNC_FILE: A fence value as a sync_file
	 * (uapi 1.7).
	 */
	DRM_D3DQ_FENCE_EXPORT_SYNC_FILE,

	/**
	 * @DRM_D3DQ_FENCE_SIGNAL_ON: Set a fence's value when another
	 * driver's dma-fence signals (uapi 1.11).
	 */
	DRM_D3DQ_FENCE_SIGNAL_ON,
};

/**
 * DOC: Versioning
 *
 * %DRM_D3DQ_PARAM_UAPI_VERSION returns (major << 16) | minor. The major
 * number changes only if the interface breaks (never, so far); the minor
 * number grows with every addition.
 */
#define DRM_D3DQ_UAPI_MAJOR	1
#define DRM_D3DQ_UAPI_MINOR	15

/**
 * struct drm_d3dq_obj_array - A user array of structures.
 *
 * Fill it with DRM_D3DQ_OBJ_ARRAY() so that @stride is the element size
 * userspace was compiled with.
 */
struct drm_d3dq_obj_array {
	/**
	 * @stride: Size of one element in bytes, at least the size of the
	 * element's first version and at most 4096; 0 only with @count 0.
	 */
	__u32 stride;

	/** @count: Number of elements. */
	__u32 count;

	/** @array: User pointer to the first element. */
	__u64 array;
};

/**
 * DRM_D3DQ_OBJ_ARRAY() - Initialise a &struct drm_d3dq_obj_array.
 * @cnt: Number of elements.
 * @ptr: Pointer to the first element.
 */
#define DRM_D3DQ_OBJ_ARRAY(cnt, ptr) \
	{ .stride = sizeof((ptr)[0]), .count = (cnt), \
	  .array = (__u64)(uintptr_t)(ptr) }

/**
 * DOC: Device parameters
 *
 * %DRM_D3DQ_GET_PARAM reads one 64-bit value. Unknown parameters fail with
 * -EINVAL. Limits are set by module parameters when the module is loaded
 * and do not change while it is loaded.
 */
enum drm_d3dq_param {
	/** @DRM_D3DQ_PARAM_UAPI_VERSION: (major << 16) | minor. */
	DRM_D3DQ_PARAM_UAPI_VERSION = 0,

	/** @DRM_D3DQ_PARAM_FEATURES: Mask of DRM_D3DQ_FEATURE_* bits. */
	DRM_D3DQ_PARAM_FEATURES,

	/** @DRM_D3DQ_PARAM_MAX_QUEUES: Queues one open file may hold. */
	DRM_D3DQ_PARAM_MAX_QUEUES,

	/** @DRM_D3DQ_PARAM_MAX_SYNCS: Waits, and signals, per submit. */
	DRM_D3DQ_PARAM_MAX_SYNCS,

	/** @DRM_D3DQ_PARAM_MAX_CMD_BYTES: Command stream bytes per submit. */
	DRM_D3DQ_PARAM_MAX_CMD_BYTES,

	/**
	 * @DRM_D3DQ_PARAM_MAX_PENDING_JOBS: Jobs one queue may hold that have
	 * not finished yet. A submit beyond it sleeps (interruptibly) until
	 * a job of the queue finishes.
	 */
	DRM_D3DQ_PARAM_MAX_PENDING_JOBS,

	/**
	 * @DRM_D3DQ_PARAM_JOB_TIMEOUT_NS: How much engine time a job may
	 * use: its own steps on the shared engine and its
	 * %DRM_D3DQ_CMD_DELAY commands. Time waiting for dependencies or
	 * for a turn on the engine does not count.
	 */
	DRM_D3DQ_PARAM_JOB_TIMEOUT_NS,

	/**
	 * @DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY: Ticks per second of the values
	 * %DRM_D3DQ_CMD_TIMESTAMP writes. The engine clock is
	 * CLOCK_MONOTONIC, so this is 1000000000.
	 */
	DRM_D3DQ_PARAM_TIMESTAMP_FREQUENCY,

	/** @DRM_D3DQ_PARAM_MAX_DELAY_NS: Largest %DRM_D3DQ_CMD_DELAY. */
	DRM_D3DQ_PARAM_MAX_DELAY_NS,

	/** @DRM_D3DQ_PARAM_MAX_BO_SIZE: Largest buffer, in bytes. */
	DRM_D3DQ_PARAM_MAX_BO_SIZE,

	/**
	 * @DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES: Kernel memory the jobs of one
	 * open file may hold until they are freed (their command streams,
	 * waits and fences, as the driver counts them). A submit beyond it
	 * sleeps (interruptibly) until jobs of the file are freed; a job
	 * alone is always admitted. Since 1.1.
	 */
	DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES,

	/**
	 * @DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES: Fence values all files of
	 * one user may wait for at once on the device: each (fence, value)
	 * of a %DRM_IOCTL_D3DQ_FENCE_WAIT, %DRM_IOCTL_D3DQ_FENCE_EVENT,
	 * %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE and of a job's fence wait
	 * (held or not) counts until it is freed. Beyond it those ioctls
	 * and %DRM_IOCTL_D3DQ_SUBMIT fail with -EDQUOT. Since 1.9.
	 */
	DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES,
};

/**
 * DOC: Feature bits
 *
 * Bits of %DRM_D3DQ_PARAM_FEATURES. Version 1.0 sets the first three,
 * version 1.1 adds %DRM_D3DQ_FEATURE_WAIT_RELEASE and
 * %DRM_D3DQ_FEATURE_PRIORITY, version 1.2 %DRM_D3DQ_FEATURE_SUBMIT_DONE,
 * version 1.3 %DRM_D3DQ_FEATURE_FENCE, version 1.4
 * %DRM_D3DQ_FEATURE_FENCE_SUBMIT and
 * %DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ, version 1.5
 * %DRM_D3DQ_FEATURE_FENCE_HOLD, version 1.6
 * %DRM_D3DQ_FEATURE_REMOVE_ON_LOSS, version 1.7
 * %DRM_D3DQ_FEATURE_FENCE_SYNC_FILE, version 1.8
 * %DRM_D3DQ_FEATURE_SUBMIT_CARRY and %DRM_D3DQ_FEATURE_SUBMIT_TAIL,
 * version 1.9 %DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES, version 1.10
 * %DRM_D3DQ_FEATURE_SUBMIT_SPLIT and %DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC,
 * version 1.11 %DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON and
 * %DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED, version 1.12
 * %DRM_D3DQ_FEATURE_IMPLICIT_SYNC, version 1.13
 * %DRM_D3DQ_FEATURE_SYNC_JOB_ONLY, version 1.14
 * %DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY, version 1.15
 * %DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD.
 */
/** DRM_D3DQ_FEATURE_TIMELINE - timeline syncobjs in waits and signals. */
#define DRM_D3DQ_FEATURE_TIMELINE	(1ull << 0)
/** DRM_D3DQ_FEATURE_PRIME - buffer export and import through PRIME. */
#define DRM_D3DQ_FEATURE_PRIME		(1ull << 1)
/** DRM_D3DQ_FEATURE_TIMEOUT - jobs past the timeout are stopped. */
#define DRM_D3DQ_FEATURE_TIMEOUT	(1ull << 2)
/**
 * DRM_D3DQ_FEATURE_WAIT_RELEASE - %DRM_D3DQ_SYNC_RELEASABLE waits,
 * &drm_d3dq_submit.seqno and %DRM_D3DQ_WAIT_RELEASE (uapi 1.1).
 */
#define DRM_D3DQ_FEATURE_WAIT_RELEASE	(1ull << 3)
/**
 * DRM_D3DQ_FEATURE_PRIORITY - queue priorities are scheduled (see "Queue
 * priorities"), and %DRM_D3DQ_QUEUE_PRIORITY_REALTIME exists. Since 1.1.
 */
#define DRM_D3DQ_FEATURE_PRIORITY	(1ull << 4)
/**
 * DRM_D3DQ_FEATURE_SUBMIT_DONE - &drm_d3dq_submit.out_flags and
 * %DRM_D3DQ_SUBMIT_DONE (see "Direct submission"). Since 1.2.
 */
#define DRM_D3DQ_FEATURE_SUBMIT_DONE	(1ull << 5)
/**
 * DRM_D3DQ_FEATURE_FENCE - d3dq fences: %DRM_D3DQ_FENCE_CREATE and the
 * other FENCE ioctls (see "Fences"). Since 1.3.
 */
#define DRM_D3DQ_FEATURE_FENCE		(1ull << 6)
/**
 * DRM_D3DQ_FEATURE_FENCE_SUBMIT - %DRM_D3DQ_SYNC_FENCE waits and signals
 * of d3dq fences in %DRM_IOCTL_D3DQ_SUBMIT (see "Fence waits and
 * signals"). Since 1.4.
 */
#define DRM_D3DQ_FEATURE_FENCE_SUBMIT	(1ull << 7)
/**
 * DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ - %DRM_D3DQ_FENCE_EVENT_SYNCOBJ
 * registrations that add a signalled point to a timeline syncobj instead
 * of signalling an eventfd (see "Fences"). Since 1.4.
 */
#define DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ	(1ull << 8)
/**
 * DRM_D3DQ_FEATURE_FENCE_HOLD - %DRM_D3DQ_SUBMIT_HOLD and
 * %DRM_D3DQ_SUBMIT_HELD: the kernel holds a job whose fence wait nothing
 * serves yet (see "Held jobs"). Since 1.5.
 */
#define DRM_D3DQ_FEATURE_FENCE_HOLD	(1ull << 9)
/**
 * DRM_D3DQ_FEATURE_REMOVE_ON_LOSS - %DRM_D3DQ_REMOVE_ON_LOSS,
 * %DRM_D3DQ_REMOVE_QUERY and &drm_d3dq_remove.reason: the kernel removes
 * a file itself when one of its queues is lost (see "Removal on loss").
 * Since 1.6.
 */
#define DRM_D3DQ_FEATURE_REMOVE_ON_LOSS	(1ull << 10)
/**
 * DRM_D3DQ_FEATURE_FENCE_SYNC_FILE - %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE
 * (see "Fence values as sync_files"). Since 1.7.
 */
#define DRM_D3DQ_FEATURE_FENCE_SYNC_FILE	(1ull << 11)
/**
 * DRM_D3DQ_FEATURE_SUBMIT_CARRY - %DRM_D3DQ_SUBMIT_CARRY (see "Carried
 * waits"). Since 1.8.
 */
#define DRM_D3DQ_FEATURE_SUBMIT_CARRY	(1ull << 12)
/**
 * DRM_D3DQ_FEATURE_SUBMIT_TAIL - %DRM_D3DQ_SUBMIT_TAIL (see "Signals on
 * the last job"). Since 1.8.
 */
#define DRM_D3DQ_FEATURE_SUBMIT_TAIL	(1ull << 13)
/**
 * DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES - a file's removal reaches only its
 * own view of the fences it holds (see &struct drm_d3dq_remove): other
 * holders of a shared fence keep its value, their waits and their
 * signals. Before 1.9 a removal set every fence the file held to ~0 for
 * every holder. Since 1.9.
 */
#define DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES	(1ull << 14)
/**
 * DRM_D3DQ_FEATURE_SUBMIT_SPLIT - %DRM_D3DQ_SUBMIT_SPLIT (see "Split
 * submits"). Since 1.10.
 */
#define DRM_D3DQ_FEATURE_SUBMIT_SPLIT	(1ull << 15)
/**
 * DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC - a destroyed fence handle's
 * number is given again only after INT_MAX other handles of the file
 * (see &drm_d3dq_fence_create.handle). Since 1.10.
 */
#define DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC	(1ull << 16)
/**
 * DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON - %DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON (see
 * "Fence values set by other drivers"). Since 1.11.
 */
#define DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON	(1ull << 17)
/**
 * DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED - %DRM_D3DQ_FENCE_EVENT_ARMED. Since
 * 1.11.
 */
#define DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED	(1ull << 18)
/**
 * DRM_D3DQ_FEATURE_IMPLICIT_SYNC - other drivers' dma-bufs import as
 * buffers (see "Buffers") and %DRM_D3DQ_SUBMIT_IMPLICIT (see "Implicit
 * sync with other drivers"). Since 1.12.
 */
#define DRM_D3DQ_FEATURE_IMPLICIT_SYNC	(1ull << 19)
/**
 * DRM_D3DQ_FEATURE_SYNC_JOB_ONLY - %DRM_D3DQ_SYNC_JOB_ONLY. Since 1.13.
 */
#define DRM_D3DQ_FEATURE_SYNC_JOB_ONLY	(1ull << 20)
/**
 * DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY - %DRM_D3DQ_SYNC_ARMED_ONLY. Since 1.14.
 */
#define DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY	(1ull << 21)
/**
 * DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD - %DRM_D3DQ_QUEUE_IDLE_WORD. Since 1.15.
 */
#define DRM_D3DQ_FEATURE_QUEUE_IDLE_WORD	(1ull << 22)

/**
 * struct drm_d3dq_get_param - Argument of %DRM_IOCTL_D3DQ_GET_PARAM.
 */
struct drm_d3dq_get_param {
	/** @param: One of &enum drm_d3dq_param. */
	__u32 param;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @value: Out: the value. */
	__u64 value;
};

/**
 * DOC: Buffers
 *
 * Buffers are shmem-backed GEM objects, allocated and pinned when they are
 * created, so the engine never faults. They are mapped into userspace
 * with mmap() on the render node at the offset %DRM_D3DQ_BO_MMAP_OFFSET
 * returns, cached and coherent with the engine. They are released with
 * DRM_IOCTL_GEM_CLOSE, and shared with PRIME (DRM_IOCTL_PRIME_HANDLE_TO_FD
 * and DRM_IOCTL_PRIME_FD_TO_HANDLE). A job holds a reference to every
 * buffer its command stream names, so closing a handle while a job uses
 * the buffer is safe.
 *
 * From 1.12 (%DRM_D3DQ_FEATURE_IMPLICIT_SYNC) DRM_IOCTL_PRIME_FD_TO_HANDLE
 * also imports another driver's dma-buf (or another d3dq device's) as a
 * buffer: the kernel maps all of it once, with dma_buf_vmap(), for the
 * buffer's life, and commands use it as any other; mmap() at its
 * %DRM_D3DQ_BO_MMAP_OFFSET maps the dma-buf through its exporter. The
 * exporter must give a kernel mapping of memory the CPU sees coherently
 * (vgem's, GPU buffers in system memory): -EINVAL when it gives no
 * mapping, -EOPNOTSUPP when it maps I/O memory, or the exporter's error.
 * The buffer's reservation object is the dma-buf's: jobs publish their
 * fences there as in any buffer.
 *
 * Everything a job wrote is visible through a CPU mapping once the job's
 * signal points have signalled: the engine writes through a cached kernel
 * mapping of the same pages and signalling a fence is a full barrier.
 * Likewise, CPU writes made before a job's waits were signalled are visible
 * to the job.
 */

/**
 * struct drm_d3dq_bo_create - Argument of %DRM_IOCTL_D3DQ_BO_CREATE.
 */
struct drm_d3dq_bo_create {
	/**
	 * @size: In: requested size in bytes, 1 to
	 * %DRM_D3DQ_PARAM_MAX_BO_SIZE (else -EINVAL). Out: the size rounded
	 * up to a whole page.
	 */
	__u64 size;

	/** @flags: Must be zero. */
	__u32 flags;

	/** @handle: Out: GEM handle of the buffer. */
	__u32 handle;
};

/**
 * struct drm_d3dq_bo_mmap_offset - Argument of %DRM_IOCTL_D3DQ_BO_MMAP_OFFSET.
 */
struct drm_d3dq_bo_mmap_offset {
	/** @handle: GEM handle (-ENOENT if there is none). */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @offset: Out: offset to pass to mmap() on the render node. */
	__u64 offset;
};

/**
 * DOC: Queues
 *
 * A queue runs its jobs one at a time, in submission order, on its own
 * scheduler. Queue ids are small positive integers private to the open
 * file. The type is recorded (shown in debugfs and fdinfo); every type
 * accepts every command. The priority decides the queue's share of the
 * device's engine (see "Queue priorities").
 *
 * A queue becomes *lost* when one of its jobs runs past the job timeout
 * (reason -ETIMEDOUT), when one of its jobs depends on a fence that
 * completed with an error (reason -ECANCELED), or when the file's queues
 * are removed with %DRM_D3DQ_REMOVE (reason -ENODEV). The job that timed
 * out completes with -ETIMEDOUT; every other job of a lost queue that has
 * not run yet completes with -ECANCELED without running. Fences always
 * signal, so nobody waits forever. Submitting to a lost queue fails with
 * -ECANCELED; the queue must then be destroyed. Other queues carry on,
 * unless the file asked for removal on loss (uapi 1.6,
 * %DRM_D3DQ_REMOVE_ON_LOSS): then the first loss of one of its queues
 * removes the whole file, as %DRM_D3DQ_REMOVE does (see "Removal on
 * loss").
 * Destroying a queue does not make it lost: %DRM_IOCTL_D3DQ_QUEUE_GET_STATE
 * racing with %DRM_IOCTL_D3DQ_QUEUE_DESTROY of the same id returns the
 * state the queue had (or -ENOENT), never a loss the destroy caused.
 */
enum drm_d3dq_queue_type {
	/** @DRM_D3DQ_QUEUE_TYPE_DIRECT: Like a D3D12 direct queue. */
	DRM_D3DQ_QUEUE_TYPE_DIRECT = 0,

	/** @DRM_D3DQ_QUEUE_TYPE_COMPUTE: Like a D3D12 compute queue. */
	DRM_D3DQ_QUEUE_TYPE_COMPUTE,

	/** @DRM_D3DQ_QUEUE_TYPE_COPY: Like a D3D12 copy queue. */
	DRM_D3DQ_QUEUE_TYPE_COPY,
};

/**
 * DOC: Queue priorities
 *
 * The queues of a device share one engine, which runs jobs in bounded
 * steps. When queues of several priorities have work ready, the highest
 * priority gets the engine, except that a priority which had work ready
 * and no step for 8 steps in a row gets the next one (the highest such
 * priority first), so that no priority starves: every priority with work
 * ready gets at least one step in every 10 (one in 9 when only one
 * higher priority has work ready).
 * Within a priority, the engine goes round the clients (open files) with
 * ready work, and round each client's queues, one step each. Since 1.1
 * (%DRM_D3DQ_FEATURE_PRIORITY); before, priorities were accepted and did
 * nothing.
 */
enum drm_d3dq_queue_priority {
	/** @DRM_D3DQ_QUEUE_PRIORITY_NORMAL: Normal scheduling priority. */
	DRM_D3DQ_QUEUE_PRIORITY_NORMAL = 0,

	/**
	 * @DRM_D3DQ_QUEUE_PRIORITY_HIGH: High scheduling priority, open to
	 * every user (D3D12's HIGH).
	 */
	DRM_D3DQ_QUEUE_PRIORITY_HIGH,

	/**
	 * @DRM_D3DQ_QUEUE_PRIORITY_REALTIME: Above HIGH (D3D12's
	 * GLOBAL_REALTIME); creating such a queue needs CAP_SYS_NICE, as
	 * raising a thread's priority does, and fails with -EACCES without
	 * it. Since 1.1.
	 */
	DRM_D3DQ_QUEUE_PRIORITY_REALTIME,
};

/**
 * DOC: Queue idle word
 *
 * A queue created with %DRM_D3DQ_QUEUE_IDLE_WORD (uapi 1.15) has a
 * 64-bit word that userspace maps read-only, as a fence's value (see
 * "Fences": the same mmap() of one page, at
 * &drm_d3dq_queue_create.idle_mmap_offset, the word at byte
 * &drm_d3dq_queue_create.idle_offset of it), and that reads 0 exactly
 * while the queue is idle: no job of it is armed, running or held, no
 * %DRM_D3DQ_SUBMIT_CARRY wait is carried, and it is neither lost nor
 * destroyed. Every job submitted before it reads 0 has ended and set its
 * fence signals (its own and those of the %DRM_D3DQ_SUBMIT_TAIL submits
 * it took), and the word is stored after them with release semantics:
 * a reader that loads 0 with acquire semantics sees those values, and a
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL it makes then comes after them, as a
 * %DRM_D3DQ_SUBMIT_TAIL submit made instead would (it would set its
 * fence signals in the call). That is what it is for: a library that
 * serialises its submits to the queue may make a queue's signal a CPU
 * signal while the word reads 0, without the submit's cost.
 *
 * Any other value means "not idle", and says nothing more; it does not
 * go back to 0 once the queue is lost (a removal loses every queue of
 * the file), destroyed, or a job of it failed. A held job keeps the word
 * from 0 until it ended, a carried wait until a job took it or it was
 * found satisfied (by a later submit or the queue's arming work). The
 * word lives in one of the file's fence value pages (its slot is not a
 * fence's while the queue exists) and is freed with the queue;
 * unmapping is the caller's.
 */

/**
 * DRM_D3DQ_QUEUE_IDLE_WORD - the queue has an idle word (uapi 1.15, see
 * "Queue idle word").
 */
#define DRM_D3DQ_QUEUE_IDLE_WORD	(1u << 0)

/**
 * struct drm_d3dq_queue_create - Argument of %DRM_IOCTL_D3DQ_QUEUE_CREATE.
 *
 * A queue counts against %DRM_D3DQ_PARAM_MAX_QUEUES from its creation
 * until it is freed, which is after its destruction once its last job
 * has finished. At the limit the ioctl waits (interruptibly) for
 * destroyed queues whose jobs have all finished to be freed, and fails
 * with -EMFILE if every queue counted is alive or still has unfinished
 * jobs (held by dependencies). Other errors: -EINVAL for an unknown
 * type, priority or flag, -ENODEV after %DRM_D3DQ_REMOVE, -ENOMEM when
 * out of memory, -EDQUOT when the user (the effective uid that opened
 * the file) holds as many queues on the device as the module allows,
 * whatever the number of its files, and -ENOSPC when all users together
 * do (at those bounds too, the ioctl first waits for destroyed queues
 * whose jobs have all finished). Those two are final until queues are
 * freed: never -EAGAIN or -EINTR, which callers retry.
 *
 * Fails with -EACCES for %DRM_D3DQ_QUEUE_PRIORITY_REALTIME without
 * CAP_SYS_NICE.
 */
struct drm_d3dq_queue_create {
	/** @type: One of &enum drm_d3dq_queue_type. */
	__u32 type;

	/** @priority: One of &enum drm_d3dq_queue_priority. */
	__u32 priority;

	/** @flags: 0 or (uapi 1.15) %DRM_D3DQ_QUEUE_IDLE_WORD. */
	__u32 flags;

	/** @id: Out: the queue id, never 0. */
	__u32 id;

	/**
	 * @idle_mmap_offset: Out (uapi 1.15): with %DRM_D3DQ_QUEUE_IDLE_WORD,
	 * the offset of the idle word's page for mmap(); 0 without. Must be
	 * zero on input.
	 */
	__u64 idle_mmap_offset;

	/**
	 * @idle_offset: Out (uapi 1.15): the byte offset of the idle word in
	 * that page. Must be zero on input.
	 */
	__u32 idle_offset;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * struct drm_d3dq_queue_destroy - Argument of %DRM_IOCTL_D3DQ_QUEUE_DESTROY.
 *
 * Jobs of the queue that have not finished are cancelled: the running job
 * is stopped and every job completes with -ECANCELED (its signal points
 * signal). The ioctl waits for the running job to stop (bounded), not for
 * the other jobs; held ones complete when their dependencies signal, and
 * the queue counts against %DRM_D3DQ_PARAM_MAX_QUEUES until then. Unknown
 * ids fail with -ENOENT.
 */
struct drm_d3dq_queue_destroy {
	/** @id: Queue id. */
	__u32 id;

	/** @pad: Must be zero. */
	__u32 pad;
};

/** enum drm_d3dq_queue_state - States of a queue. */
enum drm_d3dq_queue_state {
	/** @DRM_D3DQ_QUEUE_STATE_OK: The queue accepts and runs jobs. */
	DRM_D3DQ_QUEUE_STATE_OK = 0,

	/** @DRM_D3DQ_QUEUE_STATE_LOST: The queue is lost, see @reason. */
	DRM_D3DQ_QUEUE_STATE_LOST,
};

/**
 * struct drm_d3dq_queue_get_state - Argument of %DRM_IOCTL_D3DQ_QUEUE_GET_STATE.
 */
struct drm_d3dq_queue_get_state {
	/** @id: Queue id (-ENOENT if unknown). */
	__u32 id;

	/** @state: Out: one of &enum drm_d3dq_queue_state. */
	__u32 state;

	/**
	 * @reason: Out: 0 when the queue is fine, otherwise why it was lost:
	 * -ETIMEDOUT, -ECANCELED or -ENODEV (see "Queues").
	 */
	__s32 reason;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @pending_jobs: Out: jobs submitted that have not finished. */
	__u64 pending_jobs;
};

/**
 * DOC: Submission
 *
 * %DRM_D3DQ_SUBMIT queues one job. The job starts once every wait point
 * has signalled and every earlier job of the queue has finished; then the
 * engine runs its command stream; then every signal point signals with the
 * job's finished fence. A job with an empty command stream is a pure
 * synchronisation point.
 *
 * Each wait names a syncobj (binary, or timeline with a point) that must
 * already hold a fence, or (uapi 1.4) a d3dq fence value that is reached
 * or that an armed signal of this file brings (see "Fence waits and
 * signals"): the driver never waits for a syncobj point to be submitted
 * and never creates or publishes a fence that depends on userspace. A
 * wait on a point that has no fence yet, or on a fence value nothing
 * armed brings yet, fails at once with -ENODATA, so userspace can hold
 * the job back until the point is submitted (see
 * DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT with
 * DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE) or the signal armed. From 1.5 a
 * submit with %DRM_D3DQ_SUBMIT_HOLD lets the kernel hold such a fence
 * wait's job instead, unarmed and unpublished (see "Held jobs"). A timeline
 * wait on point N is satisfied by the first point >= N, as everywhere in
 * DRM.
 *
 * A binary signal replaces the syncobj's fence. A timeline signal adds
 * point @point, which must be non-zero; userspace keeps points of one
 * timeline strictly increasing.
 *
 * The submit is all or nothing: when it fails, no job was queued and no
 * signal point was attached.
 *
 * Errors: -ENOENT unknown queue id, syncobj, fence or buffer handle;
 * -EINVAL bad flags (%DRM_D3DQ_SYNC_FENCE with any other flag), padding,
 * a non-zero out field, stride, count or command stream, or a timeline
 * wait on a syncobj whose fence is binary; -ENODATA a wait point has no
 * fence yet, or a fence wait's value is neither reached nor brought by
 * an armed signal of this file (without %DRM_D3DQ_SUBMIT_HOLD); -ENOSPC
 * (1.5) a limit below is reached and held jobs alone fill it, or (1.9)
 * the file holds its bound of held jobs (see "Held jobs");
 * -E2BIG (1.10) a split submit can never fit (see "Split submits");
 * -ECANCELED the queue is lost; -EFAULT bad pointer; -ENOMEM; -EINTR when
 * a signal interrupts a submit sleeping because the queue holds
 * %DRM_D3DQ_PARAM_MAX_PENDING_JOBS jobs, the file's jobs hold
 * %DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES or the user's jobs on the device
 * number as many as the module allows (restarted instead with
 * SA_RESTART).
 */

/**
 * DOC: Direct submission
 *
 * A job that nothing stands before runs to completion inside
 * %DRM_IOCTL_D3DQ_SUBMIT instead of going through the queue's scheduler:
 * when every wait point has already signalled without error, every
 * earlier job of the queue has finished without error, the job is small
 * (no %DRM_D3DQ_CMD_DELAY, at most 16 KiB of COPY and FILL, a sixteenth
 * of an engine step, see "Queue priorities"; at most 16 signal points
 * and 16 buffers) and the engine has nothing else to run.
 * Its fence is published in its signal points and buffers before it
 * runs, as any job's, and has signalled when the ioctl returns; the
 * ioctl then sets %DRM_D3DQ_SUBMIT_DONE in &drm_d3dq_submit.out_flags, so
 * that userspace need not ask or wait for what it already knows. Any
 * other job is queued as described above. Both kinds obey the same rules:
 * what differs is only who runs the job and when.
 *
 * The module parameter ``direct_submit`` (``1`` by default, writable by
 * root at run time) turns this off: every job then goes through the
 * scheduler and %DRM_D3DQ_SUBMIT_DONE is never set.
 */

/**
 * DRM_D3DQ_SUBMIT_DONE - &drm_d3dq_submit.out_flags: the job, and every
 * earlier job of the queue, completed without error before the ioctl
 * returned. Since 1.2.
 */
#define DRM_D3DQ_SUBMIT_DONE		(1u << 0)

/**
 * DRM_D3DQ_SUBMIT_HOLD - &drm_d3dq_submit.flags: a fence wait that is
 * neither reached nor brought by an armed signal of this file holds the
 * job instead of failing the submit with -ENODATA (see "Held jobs").
 * Since 1.5.
 */
#define DRM_D3DQ_SUBMIT_HOLD		(1u << 0)

/**
 * DRM_D3DQ_SUBMIT_CARRY - &drm_d3dq_submit.flags: make no job; the
 * submit's waits become waits of the queue's next job (see "Carried
 * waits"). Since 1.8.
 */
#define DRM_D3DQ_SUBMIT_CARRY		(1u << 1)

/**
 * DRM_D3DQ_SUBMIT_TAIL - &drm_d3dq_submit.flags: signals only, which the
 * queue's last job may take instead of a job of their own (see "Signals
 * on the last job"). Since 1.8.
 */
#define DRM_D3DQ_SUBMIT_TAIL		(1u << 2)

/**
 * DRM_D3DQ_SUBMIT_SPLIT - &drm_d3dq_submit.flags: the command stream may
 * be longer than %DRM_D3DQ_PARAM_MAX_CMD_BYTES; the kernel cuts it into
 * several jobs, submitted all or none (see "Split submits"). Since 1.10.
 */
#define DRM_D3DQ_SUBMIT_SPLIT		(1u << 3)

/**
 * DRM_D3DQ_SUBMIT_IMPLICIT - &drm_d3dq_submit.flags: the job first waits
 * for the other drivers' fences in the reservation objects of the
 * buffers its commands name (see "Implicit sync with other drivers").
 * Since 1.12.
 */
#define DRM_D3DQ_SUBMIT_IMPLICIT	(1u << 4)

/**
 * DOC: Implicit sync with other drivers
 *
 * d3dq publishes every job's fence in the reservation objects of the
 * buffers it uses, and by default waits for nothing it finds there:
 * D3D12 synchronises explicitly, and two queues may use one buffer at
 * once. From 1.12 (%DRM_D3DQ_FEATURE_IMPLICIT_SYNC) a submit with
 * %DRM_D3DQ_SUBMIT_IMPLICIT makes its job wait, before it runs, for the
 * fences of other drivers that it finds in the reservation object of
 * each buffer its commands name, as a Vulkan driver's implicit sync does:
 * for a buffer the job only reads (a COPY's source), the fences of
 * writers (DMA_RESV_USAGE_WRITE); for a buffer it writes, those of
 * readers and writers (DMA_RESV_USAGE_READ). So a program consumes
 * another driver's output without a sync_file round trip.
 *
 * "Other drivers' fences" are every fence but those of d3dq jobs (of any
 * d3dq device), which stay explicit. The rule is the same for every
 * buffer: an imported dma-buf of another driver, and a d3dq buffer that
 * another driver imported and wrote (its reservation object is shared
 * with the dma-buf). These are published dma-fences, which signal in
 * bounded time: no new dependency on userspace. The fences are looked up
 * when the job is armed, its reservation objects locked: at the submit,
 * or for a held job (see "Held jobs") when the kernel arms it, so a
 * held job waits for what other drivers published until then. A job with
 * such a fence still pending does not run inside the submit (no
 * %DRM_D3DQ_SUBMIT_DONE). An error of such a fence does not reach the job
 * nor its queue: implicit sync orders work, it does not make the job
 * depend on the other work's success (an explicit syncobj wait on its
 * sync_file does). The job timeout counts from the job's start, after
 * these waits, as after any wait. The job's own fence is published in
 * the same reservation objects as without the flag.
 *
 * The flag goes with any other: a submit without commands (carried
 * waits, signals only) names no buffer, and it changes nothing there; a
 * split submit's jobs each wait for the fences in their own buffers.
 * Looking the fences up may fail with -ENOMEM (the submit fails, or a
 * held job's arming is retried).
 */

/**
 * DOC: Split submits
 *
 * From 1.10 (%DRM_D3DQ_FEATURE_SUBMIT_SPLIT) a submit with
 * %DRM_D3DQ_SUBMIT_SPLIT (and no other flag but, from 1.12,
 * %DRM_D3DQ_SUBMIT_IMPLICIT, and no waits: -EINVAL otherwise) takes a
 * command stream of any length that is a multiple of 8. The kernel cuts
 * it at command boundaries into jobs of at most
 * %DRM_D3DQ_PARAM_MAX_CMD_BYTES each, greedily: each job takes as many
 * whole commands as fit. The jobs follow each other on the queue; the
 * first takes the queue's carried waits, the last the submit's signals.
 * Every job has its own engine time (%DRM_D3DQ_PARAM_JOB_TIMEOUT_NS).
 *
 * The submit is all or nothing, as any: the whole stream is checked and
 * room is reserved for all its jobs at once (the queue's
 * %DRM_D3DQ_PARAM_MAX_PENDING_JOBS, the file's
 * %DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES and the user's jobs count them all
 * together, with the same sleeps and -ENOSPC as one job), and they are
 * then queued together: held together (behind a held job of the queue, or
 * the first job's carried waits) or armed together. When it fails, no job
 * of it was queued.
 *
 * A stream that makes more jobs than %DRM_D3DQ_PARAM_MAX_PENDING_JOBS, or
 * whose jobs would hold more than %DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES, can
 * never fit: the submit fails with -E2BIG. @seqno is the last job's;
 * %DRM_D3DQ_SUBMIT_HELD is set if the jobs are held,
 * %DRM_D3DQ_SUBMIT_DONE never.
 */

/**
 * DRM_D3DQ_SUBMIT_HELD - &drm_d3dq_submit.out_flags: the job is held, not
 * armed yet: nothing of it is published (see "Held jobs"). Since 1.5.
 */
#define DRM_D3DQ_SUBMIT_HELD		(1u << 1)

/** DRM_D3DQ_SYNC_TIMELINE - the syncobj is a timeline, use the point. */
#define DRM_D3DQ_SYNC_TIMELINE		(1u << 0)

/**
 * DRM_D3DQ_SYNC_RELEASABLE - a wait that %DRM_D3DQ_WAIT_RELEASE may end
 * before its fence signals (waits only; -EINVAL on a signal). See
 * "Early release".
 */
#define DRM_D3DQ_SYNC_RELEASABLE	(1u << 1)

/**
 * DRM_D3DQ_SYNC_FENCE - &drm_d3dq_sync.handle is a d3dq fence of this
 * file and &drm_d3dq_sync.point a fence value (uapi 1.4,
 * %DRM_D3DQ_FEATURE_FENCE_SUBMIT), in waits and signals alike; alone:
 * with any other flag -EINVAL. See "Fence waits and signals".
 */
#define DRM_D3DQ_SYNC_FENCE		(1u << 2)

/**
 * DRM_D3DQ_SYNC_JOB_ONLY - a syncobj signal (binary or timeline) that
 * takes effect only if the submit makes a job (uapi 1.13,
 * %DRM_D3DQ_FEATURE_SYNC_JOB_ONLY): a %DRM_D3DQ_SUBMIT_TAIL submit that
 * makes none leaves it alone, its syncobj not looked up. Signals only,
 * and not with %DRM_D3DQ_SYNC_FENCE: -EINVAL otherwise. It lets
 * userspace mark every job of a queue on a timeline of its own without
 * paying a point for each signal the queue's last job takes or that is
 * set in the call. See "Signals on the last job".
 */
#define DRM_D3DQ_SYNC_JOB_ONLY		(1u << 3)

/**
 * DRM_D3DQ_SYNC_ARMED_ONLY - a syncobj signal that takes effect only if
 * the submit's job is armed (uapi 1.14,
 * %DRM_D3DQ_FEATURE_SYNC_ARMED_ONLY): as %DRM_D3DQ_SYNC_JOB_ONLY (which
 * it implies; either or both may be given), and moreover not for a job
 * that completes where it would be armed, without the engine: a job
 * with no commands and no buffers that nothing stands before, such as a
 * held signal-only job that the write releasing its waits completes in
 * its call (see "Signals on the last job"). Such a job's point would be
 * signalled when added, so a timeline whose points all carry the flag
 * has only points of armed jobs (the next one added satisfies a wait
 * for a skipped one). Signals only, not with %DRM_D3DQ_SYNC_FENCE.
 */
#define DRM_D3DQ_SYNC_ARMED_ONLY	(1u << 4)

/**
 * DOC: Fence waits and signals
 *
 * From 1.4 (%DRM_D3DQ_FEATURE_FENCE_SUBMIT) a wait or signal element
 * with %DRM_D3DQ_SYNC_FENCE names a d3dq fence (see "Fences") by its
 * handle in this file, and a value in &drm_d3dq_sync.point: D3D12's
 * queue Wait and Signal. Unknown handles fail with -ENOENT.
 *
 * A fence signal sets the fence to exactly that value (lower than before
 * or not) when the job's work is done: after the job's memory writes, with
 * the same release store and the same processing of waits and event
 * registrations as %DRM_D3DQ_FENCE_SIGNAL. Signals of one fence take
 * effect in the order their jobs complete, whatever the order of their
 * submits: the job that completes last sets the value. A job run inside
 * the submit (%DRM_D3DQ_SUBMIT_DONE) has set its fences when the ioctl
 * returns. A job that does not complete (it timed out, its queue was
 * lost, destroyed or removed, or the device unplugged: its fence
 * signals with an error) sets nothing: the values stay as they are, and
 * userspace that sees the loss removes the device (%DRM_D3DQ_REMOVE),
 * after which every fence reads ~0 through the removed file; from 1.6
 * the kernel does that itself for a file armed with
 * %DRM_D3DQ_REMOVE_ON_LOSS (see "Removal on loss"). From 1.9 a removal
 * reaches only the removed file: other holders of a shared fence keep
 * its value and may still signal it.
 *
 * A fence wait on value v is decided when the job is submitted:
 *
 * - The fence's value is at least v, or the submitting file was removed
 *   or the device unplugged: the wait is satisfied, the job does not
 *   depend on anything for it.
 * - Otherwise, if a fence signal of a job submitted before through this
 *   same file brings a value of at least v and has not taken effect
 *   yet, the job depends on that signal's job, and is released as soon
 *   as the fence's value reaches v by any other means (a CPU signal,
 *   another job, another process): the first write of a value >= v
 *   satisfies the wait for good, a later lower value does not take it
 *   back. If the signal's job fails before the value was reached, the
 *   wait depends from then on upon another pending signal of the same
 *   file that brings at least v, if one is armed (from 1.9); only
 *   otherwise does its error reach the job as for any wait: the queue
 *   becomes lost.
 *   Destroying the fence handle (or closing the file) releases the
 *   wait too. Signals of other files are never used: their process's
 *   exit or removal must not stop this one's queues.
 * - Otherwise the submit fails with -ENODATA and nothing was queued,
 *   as for a syncobj point without a fence: userspace holds the job back
 *   until the value is reached or a signal that brings it was
 *   submitted. (-ENODATA, not -EAGAIN or -EINTR, which libdrm retries for
 *   ever.) From 1.5, with %DRM_D3DQ_SUBMIT_HOLD, the kernel holds the
 *   job instead (see "Held jobs").
 *
 * So every dependency of an armed job is the fence of a job that was
 * already armed, which completes in bounded time: the dma-fence rules
 * hold.
 * %DRM_D3DQ_SYNC_RELEASABLE is not needed, and refused (-EINVAL), with
 * %DRM_D3DQ_SYNC_FENCE; %DRM_D3DQ_WAIT_RELEASE of a fence wait fails with
 * -EINVAL. Fence waits and signals count against
 * %DRM_D3DQ_PARAM_MAX_SYNCS with the others.
 */

/**
 * DOC: Held jobs
 *
 * From 1.5 (%DRM_D3DQ_FEATURE_FENCE_HOLD) a submit with
 * %DRM_D3DQ_SUBMIT_HOLD whose fence wait is neither reached nor brought
 * by an armed signal of this file is not refused: the job is checked and
 * allocated as any job (every error still comes from the submit, all or
 * nothing), then held: the submit returns its seqno and
 * %DRM_D3DQ_SUBMIT_HELD. Every later job of the queue, with the flag or
 * without, is held behind it (and returns %DRM_D3DQ_SUBMIT_HELD), even
 * if its own waits are satisfied.
 *
 * A held job is not armed and publishes nothing: its syncobj signal
 * points are not attached (no sync_file can be made of them), its
 * buffers' reservation objects do not name it, its fence signals are not
 * pending (a %DRM_D3DQ_SUBMIT_HOLD wait on a value only it would bring is
 * held too; without the flag, -ENODATA), and it is not in
 * &drm_d3dq_queue_get_state.pending_jobs.
 *
 * A held fence wait is released for good by the first value >= v written
 * after the submit, whatever comes after it (a lower value written before
 * the kernel armed the job does not take it back; a wait submitted after
 * a rewind needs a new value), or by the arming of a fence signal >= v of
 * a job of this file, on which the job then depends. Once every fence
 * wait of the oldest held job of a queue is released, a kernel worker
 * arms it and the held jobs after it whose waits are released, in
 * order, attaching their points and publishing their buffers then.
 * When the release is a %DRM_IOCTL_D3DQ_FENCE_SIGNAL, that call usually
 * does the arming itself, and runs a job that nothing stands before as
 * "Direct submission" says, so that the job may have run when the
 * signal returns; nothing depends on it doing so.
 *
 * Held jobs count against %DRM_D3DQ_PARAM_MAX_PENDING_JOBS of their
 * queue, %DRM_D3DQ_PARAM_MAX_FILE_JOB_BYTES of the file and the user's
 * job bound. A submit that meets one of these limits sleeps while armed
 * jobs hold part of it (from 1.9, whoever's they are) and fails at once
 * with -ENOSPC when held jobs alone fill it: those jobs end only when
 * userspace releases them. From 1.9 held jobs are also bounded per file
 * (module parameter max_file_held_jobs, at most a quarter of the user's
 * job bound), so that one program's held backlog leaves room to the
 * others of its user. Destroying the queue, closing
 * the file, %DRM_D3DQ_REMOVE (which stops the queues before it sets the
 * fences to ~0) and unplug free held jobs without arming them: their
 * points are never attached and their fence signals never take effect.
 *
 * This keeps every dma-fence promise. The rule is no longer that the
 * driver never waits for something userspace will do, but that nothing
 * anyone can wait for depends on it: a held job has no fence anyone can
 * see (no scheduler fence initialised, nothing in a syncobj, a sync_file
 * or a reservation object), so memory management and other drivers
 * never wait for it; and a job is armed only once each of its fence
 * waits is satisfied or depends on the fence of a job already armed,
 * which completes in bounded time.
 */

/**
 * DOC: Carried waits
 *
 * From 1.8 (%DRM_D3DQ_FEATURE_SUBMIT_CARRY) a submit with
 * %DRM_D3DQ_SUBMIT_CARRY makes no job: its waits are checked and decided
 * at once, exactly as a job's would be with %DRM_D3DQ_SUBMIT_HOLD (every
 * error still comes from this submit), and then carried by the queue
 * until its next submit without the flag, whose job gets them as waits
 * of its own, in addition to its own waits. It is D3D12's queue Wait
 * without a job of its own: the job after it waits, as the queue would.
 * Such a submit has no commands and no signals (@cmd_bytes and the
 * signal count 0, else -EINVAL), no %DRM_D3DQ_SYNC_RELEASABLE wait
 * (-EINVAL: nothing would name it), and returns @seqno and @out_flags 0.
 * With no waits, or every wait satisfied in the call, it does nothing.
 *
 * Deciding at once is what makes this the same as a job: a fence wait's
 * condition is registered in this call, so the first value >= v written
 * from now on releases it for good, even if the value is rewound before
 * the next submit (D3D12's rule for a queue Wait); a wait on a syncobj
 * point takes the point's fence now. Several carrying submits in a row
 * all go to the next job.
 *
 * Carried waits count as a held job each against the file's job bytes
 * and the user's job bound, and against
 * %DRM_D3DQ_PARAM_MAX_PENDING_JOBS of the queue for carrying submits
 * (the job that takes them all always has their room): a limit they
 * fill fails at once with -ENOSPC, as for held jobs (see "Held jobs").
 * Carried waits satisfied since their submit take no room: each carrying
 * submit frees them first (not one whose syncobj point failed: its error
 * is for the job that takes it). The job that takes them is charged for
 * them until it is freed. Destroying the queue, its loss,
 * %DRM_D3DQ_REMOVE and unplug free them; a queue destroyed with carried
 * waits and no job after them simply never waited.
 */

/**
 * DOC: Signals on the last job
 *
 * From 1.8 (%DRM_D3DQ_FEATURE_SUBMIT_TAIL) a submit with
 * %DRM_D3DQ_SUBMIT_TAIL has signals only (no commands, no waits, at most
 * 16 signals: else -EINVAL). It is D3D12's queue Signal: its signals take
 * effect when every earlier job of the queue has completed, which the
 * kernel does without a job when it can:
 *
 * - The queue's jobs have all completed without error (or it never had
 *   one): the signals take effect in the call; the submit returns
 *   %DRM_D3DQ_SUBMIT_DONE, and its syncobj points get the last job's
 *   fence (or an already signalled fence).
 * - The queue's last job is armed and has not ended: the signals become
 *   that job's, taking effect at its completion after its own (a fence
 *   signal is pending from this call, as a job's is once armed: fence
 *   waits of this file may depend on it), and are dropped if it fails;
 *   the syncobj points get that job's fence.
 * - Otherwise (held jobs or carried waits on the queue, a last job that
 *   failed, or a job that has taken 8 such submits already, or the
 *   file's job bytes full) the submit makes a job, exactly as without
 *   the flag.
 *
 * A signal with %DRM_D3DQ_SYNC_JOB_ONLY (from 1.13) is checked but takes
 * effect only in the last case, when a job is made; one with
 * %DRM_D3DQ_SYNC_ARMED_ONLY (from 1.14) only if that job is also armed,
 * not when it completes without the engine (a held one released by a
 * CPU signal's call, with nothing before it).
 *
 * The submit returns @seqno 0 when it made no job. Either way the rules
 * of "Fence waits and signals" hold: the values are written after the
 * memory writes of every earlier job, in completion order. Signals a
 * job takes count against the file's job bytes with that job.
 */

/**
 * struct drm_d3dq_sync - A syncobj point or fence value to wait on or to
 * signal.
 */
struct drm_d3dq_sync {
	/** @handle: Syncobj handle, or d3dq fence handle with FENCE. */
	__u32 handle;

	/**
	 * @flags: 0 (binary) or %DRM_D3DQ_SYNC_TIMELINE, and for a wait
	 * %DRM_D3DQ_SYNC_RELEASABLE, for a signal %DRM_D3DQ_SYNC_JOB_ONLY;
	 * or %DRM_D3DQ_SYNC_FENCE alone.
	 */
	__u32 flags;

	/**
	 * @point: Timeline point; must be 0 for a binary syncobj. With
	 * %DRM_D3DQ_SYNC_FENCE: the fence value (any).
	 */
	__u64 point;
};

/**
 * struct drm_d3dq_submit - Argument of %DRM_IOCTL_D3DQ_SUBMIT.
 */
struct drm_d3dq_submit {
	/** @queue_id: Queue to run the job on. */
	__u32 queue_id;

	/**
	 * @flags: 0, or (uapi 1.5) %DRM_D3DQ_SUBMIT_HOLD, or (uapi 1.8)
	 * %DRM_D3DQ_SUBMIT_CARRY or %DRM_D3DQ_SUBMIT_TAIL, or (uapi 1.10)
	 * %DRM_D3DQ_SUBMIT_SPLIT; with any of them (uapi 1.12)
	 * %DRM_D3DQ_SUBMIT_IMPLICIT.
	 */
	__u32 flags;

	/**
	 * @waits: Array of &struct drm_d3dq_sync to wait on, at most
	 * %DRM_D3DQ_PARAM_MAX_SYNCS.
	 */
	struct drm_d3dq_obj_array waits;

	/**
	 * @signals: Array of &struct drm_d3dq_sync to signal, at most
	 * %DRM_D3DQ_PARAM_MAX_SYNCS.
	 */
	struct drm_d3dq_obj_array signals;

	/** @cmds: User pointer to the command stream (see "Commands"). */
	__u64 cmds;

	/**
	 * @cmd_bytes: Size of the command stream, a multiple of 8, at most
	 * %DRM_D3DQ_PARAM_MAX_CMD_BYTES (any, with %DRM_D3DQ_SUBMIT_SPLIT).
	 * 0 for a pure synchronisation job.
	 */
	__u32 cmd_bytes;

	/** @pad: Must be zero. */
	__u32 pad;

	/**
	 * @seqno: Out (uapi 1.1): the job's number, unique in the open file
	 * and never 0 (0 when a %DRM_D3DQ_SUBMIT_CARRY or
	 * %DRM_D3DQ_SUBMIT_TAIL submit made no job);
	 * names the job for %DRM_D3DQ_WAIT_RELEASE. Must be zero on input.
	 */
	__u64 seqno;

	/**
	 * @out_flags: Out (uapi 1.2): %DRM_D3DQ_SUBMIT_DONE, (uapi 1.5)
	 * %DRM_D3DQ_SUBMIT_HELD, or 0. Must be zero on input.
	 */
	__u32 out_flags;

	/** @pad2: Must be zero. */
	__u32 pad2;
};

/**
 * DOC: Commands
 *
 * A command stream is a packed sequence of commands. Each starts with
 * &struct drm_d3dq_cmd_header whose @size is the size of the whole
 * command, which must equal the size of the structure for its @op. The
 * whole stream is checked when it is submitted: unknown ops, wrong sizes,
 * non-zero padding, unknown buffer handles (-ENOENT) and ranges outside a
 * buffer (-EINVAL) fail the submit, so a job never runs partially.
 * Offsets of 64-bit accesses must be 8-byte aligned.
 */
enum drm_d3dq_cmd_op {
	/** @DRM_D3DQ_CMD_WRITE64: &struct drm_d3dq_cmd_write64. */
	DRM_D3DQ_CMD_WRITE64 = 1,

	/** @DRM_D3DQ_CMD_COPY: &struct drm_d3dq_cmd_copy. */
	DRM_D3DQ_CMD_COPY,

	/** @DRM_D3DQ_CMD_FILL: &struct drm_d3dq_cmd_fill. */
	DRM_D3DQ_CMD_FILL,

	/** @DRM_D3DQ_CMD_CMP_STORE64: &struct drm_d3dq_cmd_cmp_store64. */
	DRM_D3DQ_CMD_CMP_STORE64,

	/** @DRM_D3DQ_CMD_TIMESTAMP: &struct drm_d3dq_cmd_timestamp. */
	DRM_D3DQ_CMD_TIMESTAMP,

	/** @DRM_D3DQ_CMD_DELAY: &struct drm_d3dq_cmd_delay. */
	DRM_D3DQ_CMD_DELAY,
};

/**
 * struct drm_d3dq_cmd_header - First bytes of every command.
 */
struct drm_d3dq_cmd_header {
	/** @op: One of &enum drm_d3dq_cmd_op. */
	__u32 op;

	/** @size: Size of the whole command in bytes. */
	__u32 size;
};

/**
 * struct drm_d3dq_cmd_write64 - Write a 64-bit value.
 */
struct drm_d3dq_cmd_write64 {
	/** @hdr: Header, op %DRM_D3DQ_CMD_WRITE64. */
	struct drm_d3dq_cmd_header hdr;

	/** @handle: Buffer. */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @offset: Byte offset in the buffer, 8-byte aligned. */
	__u64 offset;

	/** @value: Value to write. */
	__u64 value;
};

/**
 * struct drm_d3dq_cmd_copy - Copy bytes between (or within) buffers.
 *
 * Overlapping ranges are copied as if through a temporary buffer.
 */
struct drm_d3dq_cmd_copy {
	/** @hdr: Header, op %DRM_D3DQ_CMD_COPY. */
	struct drm_d3dq_cmd_header hdr;

	/** @dst_handle: Destination buffer. */
	__u32 dst_handle;

	/** @src_handle: Source buffer. */
	__u32 src_handle;

	/** @dst_offset: Byte offset in the destination. */
	__u64 dst_offset;

	/** @src_offset: Byte offset in the source. */
	__u64 src_offset;

	/** @size: Bytes to copy; may be 0. */
	__u64 size;
};

/**
 * struct drm_d3dq_cmd_fill - Fill a byte range with one byte value.
 */
struct drm_d3dq_cmd_fill {
	/** @hdr: Header, op %DRM_D3DQ_CMD_FILL. */
	struct drm_d3dq_cmd_header hdr;

	/** @handle: Buffer. */
	__u32 handle;

	/** @value: Byte value, 0 to 255. */
	__u32 value;

	/** @offset: Byte offset in the buffer. */
	__u64 offset;

	/** @size: Bytes to fill; may be 0. */
	__u64 size;
};

/**
 * struct drm_d3dq_cmd_cmp_store64 - Atomic 64-bit compare-and-store.
 *
 * Atomically: if the value at @offset equals @expected, store @desired.
 * Atomic against the CPU and against other queues.
 */
struct drm_d3dq_cmd_cmp_store64 {
	/** @hdr: Header, op %DRM_D3DQ_CMD_CMP_STORE64. */
	struct drm_d3dq_cmd_header hdr;

	/** @handle: Buffer. */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @offset: Byte offset in the buffer, 8-byte aligned. */
	__u64 offset;

	/** @expected: Value to compare with. */
	__u64 expected;

	/** @desired: Value stored when the comparison holds. */
	__u64 desired;
};

/**
 * struct drm_d3dq_cmd_timestamp - Write the engine clock (CLOCK_MONOTONIC, ns).
 */
struct drm_d3dq_cmd_timestamp {
	/** @hdr: Header, op %DRM_D3DQ_CMD_TIMESTAMP. */
	struct drm_d3dq_cmd_header hdr;

	/** @handle: Buffer. */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @offset: Byte offset in the buffer, 8-byte aligned. */
	__u64 offset;
};

/**
 * struct drm_d3dq_cmd_delay - Keep the engine busy, modelling long work.
 *
 * The queue makes no progress for @ns nanoseconds (the engine sleeps; it
 * does not spin). A delay longer than the job timeout makes the job time
 * out.
 */
struct drm_d3dq_cmd_delay {
	/** @hdr: Header, op %DRM_D3DQ_CMD_DELAY. */
	struct drm_d3dq_cmd_header hdr;

	/** @ns: Nanoseconds, at most %DRM_D3DQ_PARAM_MAX_DELAY_NS. */
	__u64 ns;
};

/**
 * DOC: Removal on loss
 *
 * From 1.6 (%DRM_D3DQ_FEATURE_REMOVE_ON_LOSS) a file armed with
 * %DRM_D3DQ_REMOVE_ON_LOSS is removed by the kernel at the first loss of
 * one of its queues: a job that timed out (-ETIMEDOUT), or a job whose
 * dependency completed with an error (-ECANCELED). Destroying a queue,
 * a loss of a queue that was already destroyed, %DRM_D3DQ_REMOVE and an
 * unplug are not such losses. The removal is the one %DRM_D3DQ_REMOVE
 * makes, in the same order (R15): first every queue of the file is lost
 * and stopped, its running job stopped and every other job cancelled, so
 * that no job of the file runs or writes a buffer any more; only then is
 * every fence the file holds a handle to set to ~0 for good (a shared
 * one in every process), which fires the event registrations, returns
 * the %DRM_D3DQ_FENCE_WAIT calls and releases held jobs (freed, their
 * queues being lost). Creating queues and fences on the file fails with
 * -ENODEV afterwards. The loss's reason is kept as the file's removal
 * reason, which %DRM_D3DQ_REMOVE_QUERY reads.
 *
 * The kernel removes the file from a work item, shortly after the loss,
 * not from the job's timeout or completion, where the dma-fence rules
 * forbid waiting for the other jobs to stop. Arming a file one of whose
 * queues was already lost removes it within the arming ioctl. A file
 * that was already removed (by %DRM_D3DQ_REMOVE, an unplug or an earlier
 * loss) is not removed again and keeps its first reason.
 *
 * A removal is seen whole: once %DRM_D3DQ_REMOVE_QUERY reports a reason,
 * every fence of the file reads ~0; and a query made after a fence read
 * ~0 because of a removal of the file, or after a queue of an armed file
 * was seen lost, reports the reason: a query waits for a removal in
 * progress, or due, to finish.
 */

/**
 * DRM_D3DQ_REMOVE_ON_LOSS - &drm_d3dq_remove.flags: remove nothing now,
 * but arm the file so that the first loss of one of its queues removes it
 * (see "Removal on loss"). Arming twice is arming once. Since 1.6.
 */
#define DRM_D3DQ_REMOVE_ON_LOSS		(1u << 0)

/**
 * DRM_D3DQ_REMOVE_QUERY - &drm_d3dq_remove.flags: remove nothing, only
 * report the file's removal reason; with %DRM_D3DQ_REMOVE_ON_LOSS, arm
 * and then report. Since 1.6.
 */
#define DRM_D3DQ_REMOVE_QUERY		(1u << 1)

/**
 * struct drm_d3dq_remove - Argument of %DRM_IOCTL_D3DQ_REMOVE.
 *
 * With @flags 0, models device removal for this open file: every queue of
 * the file becomes lost with reason -ENODEV, the running job of each
 * queue is stopped and every job that has not run completes with
 * -ECANCELED. Only once no job of the file is running any more, and none
 * will run again (so buffers are no longer written), does every fence
 * the file holds a handle to read ~0 through the file, and are the
 * file's fence waits and registrations released (uapi 1.3, see
 * "Fences"). From 1.9 (%DRM_D3DQ_FEATURE_REMOVE_OWN_FENCES) that is the
 * file's view only: a shared fence keeps its value for its other
 * holders, whose waits, registrations and signals are not affected; the
 * removed file's mappings of its page show ~0. Creating queues and
 * fences on the file fails with -ENODEV from then on, and so do
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL and %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE
 * through it; buffers and syncobjs keep working. The file's removal
 * reason becomes -ENODEV, unless it was removed before: it keeps its
 * first reason.
 *
 * From 1.6 @flags may instead hold %DRM_D3DQ_REMOVE_ON_LOSS (arm removal
 * on loss, see "Removal on loss") and %DRM_D3DQ_REMOVE_QUERY (read the
 * reason), alone or together: they remove nothing at once, except that
 * arming a file one of whose queues was already lost removes it.
 *
 * Errors: -EINVAL unknown flags, or @reason not zero on input.
 */
struct drm_d3dq_remove {
	/**
	 * @flags: 0 (remove), or (uapi 1.6) %DRM_D3DQ_REMOVE_ON_LOSS and
	 * %DRM_D3DQ_REMOVE_QUERY.
	 */
	__u32 flags;

	/**
	 * @reason: In: must be zero (it was padding before 1.6). Out (uapi
	 * 1.6), when @flags is not 0: 0 if the file is not removed, else the
	 * reason of its first removal: -ENODEV for %DRM_D3DQ_REMOVE or an
	 * unplug, -ETIMEDOUT or -ECANCELED for a removal on loss. With
	 * @flags 0 it is left as it is, as before 1.6, so a structure can be
	 * passed again.
	 */
	__s32 reason;
};

/**
 * DOC: Early release
 *
 * A wait element of a submit with %DRM_D3DQ_SYNC_RELEASABLE does not make
 * the job depend on the waited fence itself but on a driver fence that
 * signals at the earlier of two events: the waited fence signals, or
 * %DRM_D3DQ_WAIT_RELEASE names this wait. It never signals later than
 * the waited fence, so the dma-fence rules hold: the job still completes
 * in bounded time without userspace. Userspace uses it for a wait that
 * stood for a condition which another event may satisfy first (a D3D12
 * queue wait for a fence value that the CPU signalled, or a fence that
 * was destroyed). If the waited fence signals with an error before the
 * release, the error propagates as for any wait (the queue becomes lost).
 *
 * A wait is named by the job's @seqno (returned by %DRM_D3DQ_SUBMIT), the
 * job's queue and the wait's index in the submit's wait array, so a job
 * with several releasable waits has each released separately. Releasing
 * a wait that is already satisfied or released, or a wait of a job that
 * already finished (and was freed), succeeds and does nothing.
 */

/**
 * struct drm_d3dq_wait_release - Argument of %DRM_IOCTL_D3DQ_WAIT_RELEASE.
 *
 * Errors: -ENOENT unknown queue id; -EINVAL @seqno 0 or
 * not yet returned by a submit of this file, @index not below
 * %DRM_D3DQ_PARAM_MAX_SYNCS, or (while the job exists) @index not below
 * its number of waits or naming a wait without %DRM_D3DQ_SYNC_RELEASABLE
 * (a fence wait, for one).
 */
struct drm_d3dq_wait_release {
	/** @queue_id: Queue of the job. */
	__u32 queue_id;

	/** @index: Index of the wait in the job's wait array. */
	__u32 index;

	/** @seqno: The job, as returned in &drm_d3dq_submit.seqno. */
	__u64 seqno;
};

/**
 * DOC: Fences
 *
 * A d3dq fence (uapi 1.3, %DRM_D3DQ_FEATURE_FENCE) holds one unsigned
 * 64-bit value, as a D3D12 fence does. The kernel keeps the value in a
 * page that userspace maps read-only: %DRM_D3DQ_FENCE_CREATE and
 * %DRM_D3DQ_FENCE_IMPORT return the mmap offset of that page and the
 * byte offset of the value in it, and reading the value is one 64-bit
 * acquire load of that address (a 64-bit process; the kernel writes the
 * value with one aligned 64-bit release store). The page is mapped with
 * mmap(PROT_READ, MAP_SHARED) of exactly one page on the render node;
 * PROT_WRITE or PROT_EXEC, MAP_PRIVATE and other lengths fail with
 * -EACCES (write or exec) or -EINVAL, and mprotect() cannot make the
 * mapping writable. The page is not a buffer: it cannot be exported with
 * PRIME.
 *
 * Fences that are not shared (no %DRM_D3DQ_FENCE_SHARED) share pages of
 * their file, 512 values a page. A shared fence has a page of its own,
 * so a process that imports it reads no other fence; only shared fences
 * can be exported.
 *
 * The value changes only by %DRM_D3DQ_FENCE_SIGNAL, which sets any value
 * (lower ones, 0 and ~0 included), by fence signals of jobs (uapi 1.4,
 * see "Fence waits and signals") and by device removal. Every change
 * is seen by every process at once, and marks every pending wait and
 * event registration whose value it reaches as satisfied, for good: a
 * later lower value does not take that back.
 *
 * A handle is private to its file. The fence lives while a handle, an
 * exported fd, a waiter, an event registration or a job's fence wait or
 * signal refers to it. Destroying a handle (or closing the file)
 * releases the waits (jobs' fence waits included) and event
 * registrations made through that handle as if the fence had reached ~0
 * (an event then fires); those made through other handles, in this file
 * or another, do not change. A job's fence signal still takes effect
 * when the handle it named is gone.
 *
 * Device removal (%DRM_D3DQ_REMOVE, or an unbind of the device): every
 * fence the file holds a handle to (for an unbind, every fence of the
 * device) is set to ~0, which every process holding it sees, all of them
 * before any wait or event the removal releases, and stays there:
 * %DRM_D3DQ_FENCE_SIGNAL of such a fence fails with -ENODEV, in every
 * process. After %DRM_D3DQ_REMOVE, %DRM_D3DQ_FENCE_CREATE and
 * %DRM_D3DQ_FENCE_IMPORT on the file fail with -ENODEV.
 *
 * Fences count against the module parameter ``max_user_fences`` of the
 * user (the effective uid) that created them until they are freed, and
 * pending event registrations (and from 1.7 sync_file exports not
 * signalled yet) against ``max_user_fence_events`` of the user that made
 * them: beyond, -EDQUOT. Memory for all is charged to the caller's
 * memory cgroup.
 */

/** DRM_D3DQ_FENCE_SHARED - the fence may be exported (its own page). */
#define DRM_D3DQ_FENCE_SHARED		(1u << 0)

/**
 * struct drm_d3dq_fence_create - Argument of %DRM_IOCTL_D3DQ_FENCE_CREATE.
 *
 * Errors: -EINVAL unknown flags or non-zero out fields or padding;
 * -EDQUOT the user holds ``max_user_fences`` fences; -ENODEV after
 * %DRM_D3DQ_REMOVE; -ENOMEM.
 */
struct drm_d3dq_fence_create {
	/** @value: Initial value. */
	__u64 value;

	/** @flags: 0 or %DRM_D3DQ_FENCE_SHARED. */
	__u32 flags;

	/**
	 * @handle: Out: the fence's handle in this file, never 0. From 1.10
	 * (%DRM_D3DQ_FEATURE_FENCE_HANDLE_CYCLIC) handles of a file are
	 * numbered cyclically, as are those of %DRM_IOCTL_D3DQ_FENCE_IMPORT:
	 * a destroyed handle's number comes back only after INT_MAX other
	 * handles, so a call that races the destruction fails with -ENOENT
	 * instead of naming another fence.
	 */
	__u32 handle;

	/** @mmap_offset: Out: offset of the value's page for mmap(). */
	__u64 mmap_offset;

	/** @value_offset: Out: byte offset of the value in that page. */
	__u32 value_offset;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * struct drm_d3dq_fence_destroy - Argument of %DRM_IOCTL_D3DQ_FENCE_DESTROY.
 *
 * Errors: -ENOENT unknown handle; -EINVAL non-zero @pad.
 */
struct drm_d3dq_fence_destroy {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * struct drm_d3dq_fence_export - Argument of %DRM_IOCTL_D3DQ_FENCE_EXPORT.
 *
 * The fd (close-on-exec) refers to the fence itself, not to this file:
 * it stays valid when the handle is destroyed or the file closed.
 * Errors: -ENOENT unknown handle; -EINVAL a fence without
 * %DRM_D3DQ_FENCE_SHARED, non-zero @flags, @pad or @fd; -EMFILE;
 * -ENOMEM.
 */
struct drm_d3dq_fence_export {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @flags: Must be zero. */
	__u32 flags;

	/** @fd: Out: the fd. Must be zero on input. */
	__s32 fd;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * struct drm_d3dq_fence_import - Argument of %DRM_IOCTL_D3DQ_FENCE_IMPORT.
 *
 * Each import makes a new handle. Errors: -EBADF @fd is not open;
 * -EINVAL @fd is not a d3dq fence, is a fence of another device, or
 * non-zero @flags, padding or out fields; -ENODEV after
 * %DRM_D3DQ_REMOVE; -ENOMEM.
 */
struct drm_d3dq_fence_import {
	/** @fd: An fd from %DRM_IOCTL_D3DQ_FENCE_EXPORT. */
	__s32 fd;

	/** @flags: Must be zero. */
	__u32 flags;

	/** @mmap_offset: Out: as &drm_d3dq_fence_create.mmap_offset. */
	__u64 mmap_offset;

	/** @value_offset: Out: as &drm_d3dq_fence_create.value_offset. */
	__u32 value_offset;

	/** @handle: Out: the new handle. */
	__u32 handle;
};

/**
 * struct drm_d3dq_fence_signal - Argument of %DRM_IOCTL_D3DQ_FENCE_SIGNAL.
 *
 * Sets the value to exactly @value, lower than before or not, and then
 * wakes the waits and fires the event registrations it satisfies.
 * Errors: -ENOENT unknown handle; -EINVAL non-zero @flags; -ENODEV the
 * fence was set to ~0 by a device removal.
 */
struct drm_d3dq_fence_signal {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @flags: Must be zero. */
	__u32 flags;

	/** @value: The new value. */
	__u64 value;
};

/**
 * DRM_D3DQ_FENCE_WAIT_ANY - the condition holds once one fence reached
 * its value (else all of them must, each at some moment).
 */
#define DRM_D3DQ_FENCE_WAIT_ANY		(1u << 0)

/**
 * struct drm_d3dq_fence_value - A fence and a value, element of the
 * arrays of %DRM_IOCTL_D3DQ_FENCE_WAIT and %DRM_IOCTL_D3DQ_FENCE_EVENT.
 */
struct drm_d3dq_fence_value {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @value: The fence is done once its value is at least this. */
	__u64 value;
};

/**
 * struct drm_d3dq_fence_wait - Argument of %DRM_IOCTL_D3DQ_FENCE_WAIT.
 *
 * Sleeps (interruptibly) until the condition holds: every fence of
 * @fences reached its value (each at some moment since the call), or
 * with %DRM_D3DQ_FENCE_WAIT_ANY one of them did. Returns 0 then. A
 * deadline at or before now only checks (0 or -ETIME at once).
 * Errors: -ETIME the deadline passed; -EINTR a signal arrived (the
 * ioctl restarts with SA_RESTART, and the deadline, being absolute,
 * stays); -ENOENT unknown handle; -EINVAL count 0 or above
 * %DRM_D3DQ_PARAM_MAX_SYNCS, bad stride, unknown flags, non-zero
 * padding; -EFAULT; -ENOMEM.
 */
struct drm_d3dq_fence_wait {
	/** @fences: Array of &struct drm_d3dq_fence_value. */
	struct drm_d3dq_obj_array fences;

	/**
	 * @deadline_ns: Absolute CLOCK_MONOTONIC deadline in ns; INT64_MAX
	 * waits without one.
	 */
	__s64 deadline_ns;

	/** @flags: 0 (all) or %DRM_D3DQ_FENCE_WAIT_ANY. */
	__u32 flags;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * DRM_D3DQ_FENCE_EVENT_SYNCOBJ - flag of &drm_d3dq_fence_event: when the
 * condition holds, add a signalled point to a timeline syncobj instead
 * of signalling an eventfd (uapi 1.4,
 * %DRM_D3DQ_FEATURE_FENCE_EVENT_SYNCOBJ).
 */
#define DRM_D3DQ_FENCE_EVENT_SYNCOBJ	(1u << 1)

/**
 * DRM_D3DQ_FENCE_EVENT_ARMED - flag of &drm_d3dq_fence_event, with one
 * fence: the condition holds once the value is reached or an armed
 * fence signal of a job of this file brings it or more, that is once
 * %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE of that value through this file
 * would give a sync_file (see "Fence values as sync_files"): how a
 * program learns, without a thread, when to export a value that nothing
 * brings yet (uapi 1.11, %DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED).
 */
#define DRM_D3DQ_FENCE_EVENT_ARMED	(1u << 2)

/**
 * struct drm_d3dq_fence_event - Argument of %DRM_IOCTL_D3DQ_FENCE_EVENT.
 *
 * Registers an eventfd that the kernel signals (adds 1 to) exactly once,
 * when the condition of &drm_d3dq_fence_wait holds: at once if it holds
 * already. The kernel keeps its own reference to the eventfd, so
 * closing @eventfd afterwards changes nothing. A registration ends when
 * it fires; it counts against ``max_user_fence_events`` until then.
 * Single-fence registrations of one fence with the same eventfd that one
 * change of the value satisfies (or one destruction of a handle
 * releases) signal it once, not once each (R10: an event fires at most
 * once per crossing); a registration that fires during its call, and a
 * multi-fence one, signal it on their own.
 *
 * With %DRM_D3DQ_FENCE_EVENT_SYNCOBJ (uapi 1.4) the registration, instead
 * of an eventfd, adds point @point to the timeline syncobj @syncobj of
 * this file, once, when the condition holds (or the registration is
 * released, as an eventfd registration fires then). The point is
 * already signalled when it is added (the stub fence, in a chain node
 * allocated at registration): nothing unsignalled is ever published, so
 * a wait for that point (with %DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
 * is how a thread that waits on syncobjs learns that the condition held,
 * and no dma-fence ever depends on a fence value. The point is added
 * from a work item shortly after the value write that satisfied the
 * condition. The points of all registrations are added one at a time,
 * in the order the registrations fired (one that fires during its own
 * call counts from the end of that call): a thread that finds a point
 * added finds those of the registrations that fired before. Points
 * added out of order (a registration for a higher point firing first)
 * follow the timeline's rules: the timeline keeps its highest point.
 * @eventfd must be 0 then; without the flag,
 * @syncobj, @pad and @point must be 0. The structure ends at @eventfd in
 * uapi 1.3; the kernel reads an older, shorter one with those fields 0.
 *
 * Errors: -EBADF @eventfd is not open; -EINVAL it is not an eventfd, and
 * as for &drm_d3dq_fence_wait (nothing is written then), @point 0 with
 * %DRM_D3DQ_FENCE_EVENT_SYNCOBJ, non-zero fields the flags do not use,
 * %DRM_D3DQ_FENCE_EVENT_ARMED with more than one fence;
 * -ENOENT unknown fence or syncobj handle; -EDQUOT; -EFAULT; -ENOMEM.
 */
struct drm_d3dq_fence_event {
	/** @fences: Array of &struct drm_d3dq_fence_value. */
	struct drm_d3dq_obj_array fences;

	/**
	 * @flags: 0 (all) or %DRM_D3DQ_FENCE_WAIT_ANY, and
	 * %DRM_D3DQ_FENCE_EVENT_SYNCOBJ, %DRM_D3DQ_FENCE_EVENT_ARMED.
	 */
	__u32 flags;

	/** @eventfd: The eventfd to signal. */
	__s32 eventfd;

	/** @syncobj: With %DRM_D3DQ_FENCE_EVENT_SYNCOBJ: the syncobj. */
	__u32 syncobj;

	/** @pad: Must be zero. */
	__u32 pad;

	/** @point: With %DRM_D3DQ_FENCE_EVENT_SYNCOBJ: the point, not 0. */
	__u64 point;
};

/**
 * DOC: Fence values as sync_files
 *
 * From 1.7 (%DRM_D3DQ_FEATURE_FENCE_SYNC_FILE)
 * %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE gives other drivers a dma-fence
 * for "this fence reaches this value", in a sync_file. A dma-fence must
 * signal in bounded time, so the kernel decides at the call, as for a
 * fence wait of a job without %DRM_D3DQ_SUBMIT_HOLD (see "Fence waits
 * and signals"):
 *
 * - The value is reached, or the fence was set to ~0 by a removal: the
 *   sync_file's fence has signalled already.
 * - Otherwise, if an armed fence signal of a job submitted through this
 *   file brings the value or more, the sync_file's fence signals at the
 *   first write of a value at least @value (by anyone: a CPU signal, any
 *   job, another process), at the latest when that job ends. If the job
 *   ends first without completing (it timed out, its queue was lost,
 *   destroyed or removed, the device unplugged), the fence signals with
 *   the job's error. The ~0 of a removal does not count as such a
 *   write: the job's end decides then, so that work a removal (or the
 *   loss that caused it) stopped is always an error.
 * - Otherwise the call fails with -ENODATA: nothing on its way brings the
 *   value (signals of held jobs, which are not armed, and of other files
 *   do not count). Nothing was created. An event registration with
 *   %DRM_D3DQ_FENCE_EVENT_ARMED (uapi 1.11) fires when the call would
 *   succeed.
 *
 * The sync_file does not refer to the handle or the file: destroying the
 * handle or closing the file afterwards does not signal it. Until its
 * fence has signalled, an export counts against ``max_user_fence_events``
 * of the caller's user, like an event registration. Unlike a Windows
 * monitored fence wrapped in a dma-fence at once (dxgkrnl's sync files),
 * no sync_file ever waits for something userspace has yet to do.
 */

/**
 * struct drm_d3dq_fence_sync_file - Argument of
 * %DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE.
 *
 * Errors: -ENOENT unknown handle; -EINVAL non-zero @flags, @fd or @pad;
 * -ENODATA nothing on its way brings @value (see above); -EDQUOT;
 * -EMFILE; -ENOMEM.
 */
struct drm_d3dq_fence_sync_file {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @flags: Must be zero. */
	__u32 flags;

	/** @value: The value the sync_file's fence stands for. */
	__u64 value;

	/** @fd: Out: the sync_file (close-on-exec). Must be zero on input. */
	__s32 fd;

	/** @pad: Must be zero. */
	__u32 pad;
};

/**
 * DOC: Fence values set by other drivers
 *
 * From 1.11 (%DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON)
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON makes another driver's work signal a
 * fence: "set the fence to @value when this dma-fence signals", the
 * dma-fence given as a sync_file or as a point of a syncobj of this file
 * (a timeline point, or 0 for a binary syncobj's fence). It is the signal
 * of a queue that is not d3dq's (R4): the call returns at once, the value
 * is written when that work completes, in completion order with the
 * fence's other signals (a signal of a d3dq job or a CPU signal that
 * comes after the dma-fence signalled writes after it), and a rewind in
 * between does not cancel it. A dma-fence that had signalled at the call
 * sets the value in the call.
 *
 * The dma-fence's callback, which may run in the other driver's
 * interrupt handler, takes no lock: it queues the signal for the fence
 * and a work item; the write, the waits it satisfies and the jobs it
 * releases then take the path of any other write, done by that work or
 * by whoever writes the fence first.
 *
 * A dma-fence that signals with an error writes nothing: the fence does
 * not move. The error is the dma-fence's own, readable where it came
 * from (the sync_file's status, the syncobj). A pending signal is a node
 * of the caller's user (%DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES) until its
 * dma-fence signals. It is the file's: the file's close or removal
 * cancels the ones still pending (their values are never written), as it
 * cancels the file's jobs. Destroying the handle does not: the signal
 * holds the fence. It occupies no queue.
 */

/**
 * DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ - &drm_d3dq_fence_signal_on.flags: the
 * dma-fence is @syncobj's at @point, not @fd's.
 */
#define DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ	(1u << 0)

/**
 * struct drm_d3dq_fence_signal_on - Argument of
 * %DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON.
 *
 * Errors: -ENOENT unknown fence handle or syncobj; -EBADF @fd is not
 * open; -EINVAL @fd is not a sync_file, unknown @flags, non-zero @pad,
 * or @fd, @syncobj or @point given with the other form; -ENODATA the
 * syncobj has no fence at @point yet; -ENODEV the file was removed (or
 * the fence by an unplug); -EDQUOT the user's nodes are at their bound;
 * -ENOMEM.
 */
struct drm_d3dq_fence_signal_on {
	/** @handle: Fence handle. */
	__u32 handle;

	/** @flags: 0 or %DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ. */
	__u32 flags;

	/** @value: The value to set. */
	__u64 value;

	/** @fd: Without %DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ: a sync_file. */
	__s32 fd;

	/** @syncobj: With %DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ: its handle. */
	__u32 syncobj;

	/** @point: With %DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ: the point. */
	__u64 point;

	/** @pad: Must be zero. */
	__u64 pad;
};

/**
 * DOC: IOCTL numbers
 */
#define DRM_D3DQ_IOCTL(__access, __id, __type) \
	DRM_IO ## __access(DRM_COMMAND_BASE + DRM_D3DQ_ ## __id, \
			   struct drm_d3dq_ ## __type)

#define DRM_IOCTL_D3DQ_GET_PARAM \
	DRM_D3DQ_IOCTL(WR, GET_PARAM, get_param)
#define DRM_IOCTL_D3DQ_BO_CREATE \
	DRM_D3DQ_IOCTL(WR, BO_CREATE, bo_create)
#define DRM_IOCTL_D3DQ_BO_MMAP_OFFSET \
	DRM_D3DQ_IOCTL(WR, BO_MMAP_OFFSET, bo_mmap_offset)
#define DRM_IOCTL_D3DQ_QUEUE_CREATE \
	DRM_D3DQ_IOCTL(WR, QUEUE_CREATE, queue_create)
#define DRM_IOCTL_D3DQ_QUEUE_DESTROY \
	DRM_D3DQ_IOCTL(WR, QUEUE_DESTROY, queue_destroy)
#define DRM_IOCTL_D3DQ_QUEUE_GET_STATE \
	DRM_D3DQ_IOCTL(WR, QUEUE_GET_STATE, queue_get_state)
#define DRM_IOCTL_D3DQ_SUBMIT \
	DRM_D3DQ_IOCTL(WR, SUBMIT, submit)
#define DRM_IOCTL_D3DQ_REMOVE \
	DRM_D3DQ_IOCTL(WR, REMOVE, remove)
#define DRM_IOCTL_D3DQ_WAIT_RELEASE \
	DRM_D3DQ_IOCTL(WR, WAIT_RELEASE, wait_release)
#define DRM_IOCTL_D3DQ_FENCE_CREATE \
	DRM_D3DQ_IOCTL(WR, FENCE_CREATE, fence_create)
#define DRM_IOCTL_D3DQ_FENCE_DESTROY \
	DRM_D3DQ_IOCTL(WR, FENCE_DESTROY, fence_destroy)
#define DRM_IOCTL_D3DQ_FENCE_EXPORT \
	DRM_D3DQ_IOCTL(WR, FENCE_EXPORT, fence_export)
#define DRM_IOCTL_D3DQ_FENCE_IMPORT \
	DRM_D3DQ_IOCTL(WR, FENCE_IMPORT, fence_import)
#define DRM_IOCTL_D3DQ_FENCE_SIGNAL \
	DRM_D3DQ_IOCTL(WR, FENCE_SIGNAL, fence_signal)
#define DRM_IOCTL_D3DQ_FENCE_WAIT \
	DRM_D3DQ_IOCTL(WR, FENCE_WAIT, fence_wait)
#define DRM_IOCTL_D3DQ_FENCE_EVENT \
	DRM_D3DQ_IOCTL(WR, FENCE_EVENT, fence_event)
#define DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE \
	DRM_D3DQ_IOCTL(WR, FENCE_EXPORT_SYNC_FILE, fence_sync_file)
#define DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON \
	DRM_D3DQ_IOCTL(WR, FENCE_SIGNAL_ON, fence_signal_on)

#if defined(__cplusplus)
}
#endif

#endif /* _D3DQ_DRM_H_ */
