/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the d3dq kernel tests: finding the device and its
 * debugfs directory, buffers, queues, command streams, submits,
 * syncobj points and d3dq fences.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#ifndef D3DQ_TEST_H
#define D3DQ_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xf86drm.h>

#include "d3dq_drm.h"

#define T_US	1000ull
#define T_MS	1000000ull
#define T_SEC	1000000000ull

/* Open the render node of d3dq device @index (0 for the first); -1 if none. */
int t_open(int index);

/* CLOCK_MONOTONIC in ns: the engine's clock. */
uint64_t t_now(void);

/* Absolute timeout @ns from now, for drmSyncobj*Wait. */
int64_t t_deadline(uint64_t ns);

/*
 * Live object counts from debugfs "objects" (hw_fences and schedulers
 * count the whole module: fences keep them alive, also across devices).
 */
struct t_objects {
	int files, queues, jobs, bos, hw_fences, schedulers;
	int fences, fence_events;	/* d3dq fences, event registrations */
	int fence_imports;		/* pending FENCE_SIGNAL_ON (uapi 1.11) */
};

/* Read the counts; 0 on success, -1 if debugfs is not available. */
int t_objects(struct t_objects *o);

/*
 * Wait (up to @ms) until nothing but @files open files is alive. Returns
 * true when that happened; @o holds the last counts read.
 */
bool t_wait_idle(int files, int ms, struct t_objects *o);

/*
 * In a fixture teardown (needs the harness's _metadata): every live object
 * of every device must be gone within @ms, else the test fails with the
 * counts left.
 */
#define T_EXPECT_IDLE(ms)						\
	do {								\
		struct t_objects _idle;					\
									\
		EXPECT_TRUE(t_wait_idle(0, (ms), &_idle))		\
			TH_LOG("leak: files %d queues %d jobs %d bos %d hw_fences %d schedulers %d fences %d fence_events %d", \
			       _idle.files, _idle.queues, _idle.jobs,	\
			       _idle.bos, _idle.hw_fences,		\
			       _idle.schedulers, _idle.fences,		\
			       _idle.fence_events);			\
	} while (0)

/* Contents of debugfs "queues" (static buffer), or NULL. */
const char *t_queues_text(void);

uint64_t t_param(int fd, uint32_t param);
/*
 * The value of @key in /proc/self/fdinfo/@fd: a number with an optional
 * unit ("ns", "KiB", "MiB") in ns or bytes; -1 when the key is missing,
 * -2 for another unit. The text after "key:" goes to @text if not NULL.
 */
long long t_fdinfo(int fd, const char *key, char *text, size_t size);

/* Create a buffer of @size bytes; map it when @map is not NULL. */
uint32_t t_bo(int fd, uint64_t size, void **map);
void *t_bo_map(int fd, uint32_t handle, uint64_t size);

/* Create a queue; 0 on failure (errno set). */
uint32_t t_queue(int fd, uint32_t type, uint32_t priority);
int t_queue_destroy(int fd, uint32_t id);
int t_queue_state(int fd, uint32_t id, struct drm_d3dq_queue_get_state *st);

/* A command stream under construction. */
struct t_cs {
	uint32_t len;
	uint8_t buf[65536];
};

void t_cs_init(struct t_cs *cs);
void t_cs_write64(struct t_cs *cs, uint32_t bo, uint64_t off, uint64_t value);
void t_cs_copy(struct t_cs *cs, uint32_t dst, uint64_t dst_off, uint32_t src,
	       uint64_t src_off, uint64_t size);
void t_cs_fill(struct t_cs *cs, uint32_t bo, uint64_t off, uint32_t value,
	       uint64_t size);
void t_cs_cmp_store(struct t_cs *cs, uint32_t bo, uint64_t off,
		    uint64_t expected, uint64_t desired);
void t_cs_timestamp(struct t_cs *cs, uint32_t bo, uint64_t off);
void t_cs_delay(struct t_cs *cs, uint64_t ns);
/* Append raw bytes (for malformed streams). */
void t_cs_raw(struct t_cs *cs, const void *data, uint32_t size);

/* A sync entry: binary (point 0, flags 0) or timeline. */
static inline struct drm_d3dq_sync t_bin(uint32_t handle)
{
	return (struct drm_d3dq_sync){ .handle = handle };
}

static inline struct drm_d3dq_sync t_tl(uint32_t handle, uint64_t point)
{
	return (struct drm_d3dq_sync){ .handle = handle,
				       .flags = DRM_D3DQ_SYNC_TIMELINE,
				       .point = point };
}

/* Submit; returns 0 or -errno. @cs may be NULL. */
int t_submit(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
	     uint32_t nwaits, const struct drm_d3dq_sync *signals,
	     uint32_t nsignals, const struct t_cs *cs);

/*
 * A job of @ms of DELAY on @queue signalling timeline @so at @point, and
 * the fence signal @fs too if not NULL: 0 or -errno.
 */
int t_submit_delay(int fd, uint32_t queue, uint64_t ms, uint32_t so,
		   uint64_t point, const struct drm_d3dq_sync *fs);

/* The same, with the out fields (either may be NULL). */
int t_submit_out(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
		 uint32_t nwaits, const struct drm_d3dq_sync *signals,
		 uint32_t nsignals, const struct t_cs *cs, uint32_t *out_flags,
		 uint64_t *seqno);

/* The same with %DRM_D3DQ_SUBMIT_HOLD. */
int t_submit_hold(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
		  uint32_t nwaits, const struct drm_d3dq_sync *signals,
		  uint32_t nsignals, const struct t_cs *cs, uint32_t *out_flags,
		  uint64_t *seqno);

/*
 * Waits carried to the queue's next job (%DRM_D3DQ_SUBMIT_CARRY): 0 or
 * -errno; a success must leave seqno and out_flags 0 (else -EPROTO).
 */
int t_carry(int fd, uint32_t queue, const struct drm_d3dq_sync *waits,
	    uint32_t nwaits);

/* Signals with %DRM_D3DQ_SUBMIT_TAIL: 0 or -errno, out fields if asked. */
int t_tail(int fd, uint32_t queue, const struct drm_d3dq_sync *signals,
	   uint32_t nsignals, uint32_t *out_flags, uint64_t *seqno);

/* Submit with a fully caller-built argument; returns 0 or -errno. */
int t_submit_raw(int fd, struct drm_d3dq_submit *args);

uint32_t t_syncobj(int fd);

/* Wait for a timeline point (point 0: binary); 0 or -errno. */
int t_wait(int fd, uint32_t handle, uint64_t point, uint64_t timeout_ns);

/* Signal a timeline point from the CPU (point 0: binary signal). */
int t_signal(int fd, uint32_t handle, uint64_t point);

/*
 * Status of the fence at a point (point 0: binary): 1 signalled without
 * error, 0 not signalled, negative: the error it signalled with;
 * -1000 - errno if it could not be read.
 */
int t_fence_status(int fd, uint32_t handle, uint64_t point);

struct sync_file_info;
struct sync_fence_info;

/*
 * SYNC_IOC_FILE_INFO of sync_file @sync_fd: its status and number of
 * fences in @info, the first @n fences' status and names in @fi (NULL
 * if @n is 0). Both are cleared first. 0 or -errno (-EINVAL if the
 * sync_file has more than @n fences, @n > 0).
 */
int t_sync_file_info(int sync_fd, struct sync_file_info *info,
		     struct sync_fence_info *fi, uint32_t n);

/*
 * Whether sync_file @sync_fd signalled within @timeout_ms (0: now): 1
 * or 0, or -errno if poll() fails.
 */
int t_sync_file_signalled(int sync_fd, int timeout_ms);

/* Raw ioctl, no retry on EINTR or EAGAIN (unlike drmIoctl): 0 or -errno. */
int t_ioctl(int fd, unsigned long req, void *arg);

/* A d3dq fence: its handle in one file and where its value is. */
struct t_fence {
	uint32_t handle;
	uint64_t offset;	/* mmap offset of the value's page */
	uint32_t voff;		/* byte offset of the value in it */
	const uint64_t *v;	/* the value mapped read-only, or NULL */
};

/* FENCE_CREATE and FENCE_IMPORT (@f->v NULL): 0 or -errno. */
int t_fence_create(int fd, uint64_t value, uint32_t flags, struct t_fence *f);
int t_fence_import(int fd, int xfd, struct t_fence *f);
/* FENCE_CREATE and t_fence_map(). */
int t_fence_new(int fd, uint64_t value, uint32_t flags, struct t_fence *f);
/* FENCE_EXPORT: the fd, or -errno. */
int t_fence_export(int fd, uint32_t handle);
int t_fence_destroy(int fd, uint32_t handle);
int t_fence_signal(int fd, uint32_t handle, uint64_t value);
/* FENCE_WAIT for one value, @deadline absolute (0 only checks). */
int t_fence_wait1(int fd, uint32_t handle, uint64_t value, int64_t deadline);
/* FENCE_EVENT: @efd for one value. */
int t_fence_event1(int fd, uint32_t handle, uint64_t value, int efd);

/*
 * Map the value of @f read-only through @fd (another mapping each call):
 * the value, or NULL (errno set). A mapping holds its file open, so the
 * tests' teardowns drop them all (t_value_unmap_all()) before they check
 * that every object was freed.
 */
const uint64_t *t_value_map(int fd, const struct t_fence *f);
void t_value_unmap(const uint64_t *v);
void t_value_unmap_all(void);
/* @f->v = t_value_map(): 0 or -errno; and its undoing. */
int t_fence_map(int fd, struct t_fence *f);
void t_fence_unmap(struct t_fence *f);

/* GetCompletedValue: one acquire load. */
static inline uint64_t t_value_load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

/* A fence wait or signal element of SUBMIT. */
static inline struct drm_d3dq_sync t_fs(uint32_t handle, uint64_t value)
{
	return (struct drm_d3dq_sync){ .handle = handle,
				       .flags = DRM_D3DQ_SYNC_FENCE,
				       .point = value };
}

/* What non-blocking eventfd @efd counted so far, reset (0: nothing). */
uint64_t t_efd_take(int efd);

/* Unload and load the module with @args (NULL: defaults). 0 on success. */
int t_reload(const char *args);
bool t_can_reload(void);

/* delete_module("d3dq") once: 0 or -errno (-EWOULDBLOCK while in use). */
int t_unload_once(void);
/* Unload, retrying while the module is in use, for up to 10 s. */
int t_unload(void);
/* insmod $D3DQ_MODULE @args: 0 on success. */
int t_load(const char *args);

/*
 * Set the module parameter direct_submit ("Direct submission" in the
 * uapi): the value it had (0 or 1), or -errno (-EACCES without root).
 */
int t_direct_submit(int on);

/* Unbind / bind platform device d3dq.@index through sysfs: 0 or -errno. */
int t_unbind(int index);
int t_bind(int index);
bool t_is_bound(int index);

/*
 * A fixture @name for tests that unbind the device or reload the module
 * (needs the harness): self->fd is the device, opened by the setup; the
 * teardown drops the value mappings, closes it, binds the device again,
 * checks that nothing is left alive and reloads the module, which
 * nothing may keep. Skipped without D3DQ_MODULE.
 */
#define T_UNPLUG_FIXTURE(name)						\
	FIXTURE(name) {							\
		int fd;							\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		self->fd = -1;						\
		if (!t_can_reload())					\
			SKIP(return, "D3DQ_MODULE not set or module not loaded"); \
		self->fd = t_open(0);					\
		ASSERT_LE(0, self->fd);					\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		t_value_unmap_all();					\
		if (self->fd >= 0)					\
			close(self->fd);				\
		if (!t_can_reload())					\
			return;						\
		if (!t_is_bound(0))					\
			EXPECT_EQ(0, t_bind(0));			\
		T_EXPECT_IDLE(10000);					\
		EXPECT_EQ(0, t_unload());				\
		EXPECT_EQ(0, t_load(NULL));				\
	}

/* Pass fd @fd over unix socket @sock (SCM_RIGHTS): 0 or -1. */
int t_send_fd(int sock, int fd);
/* The fd passed over @sock, or -1. */
int t_recv_fd(int sock);

/*
 * Wait (up to 5 s) until @fences d3dq fences and @events event
 * registrations are alive (debugfs "objects"); whether they were.
 */
bool t_fence_counts_become(int fences, int events);

/* Wait (up to 10 s) until @files files and no job are alive. */
bool t_jobs_gone(int files);
/* Jobs the kernel holds for @fd (fdinfo d3dq-jobs-held), or < 0. */
long long t_held(int fd);
/*
 * Wait (up to 10 s) until @fd has no job in flight (fdinfo
 * d3dq-jobs-in-flight 0: every job ran or was cancelled, its writes and
 * fence values are done, none will be made later); whether it came.
 */
bool t_no_job_in_flight(int fd);
/* The last point attached to timeline @so (0: none), or -errno. */
int64_t t_submitted(int fd, uint32_t so);

#endif /* D3DQ_TEST_H */
