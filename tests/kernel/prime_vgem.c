// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq with another driver's buffers (uapi 1.12, issue 41 item 3): a
 * vgem dma-buf imported with PRIME is a buffer d3dq jobs read and write,
 * d3dq publishes its jobs in that buffer's reservation object as in its
 * own, and a submit with DRM_D3DQ_SUBMIT_IMPLICIT waits for the fences of
 * other drivers it finds there (vgem's, VGEM_FENCE_ATTACH) before the job
 * runs; without the flag it does not.
 *
 * The other driver is vgem (tools/util/vgem.h), which the VM's initramfs
 * carries unloaded: cases that need it skip without it. A vgem fence
 * signals when the test asks (VGEM_FENCE_SIGNAL), or by itself after
 * 10 s: every wait here is shorter, and every fence is signalled before
 * the case ends.
 *
 * A job held back by a fence is observed by its state, not by time: its
 * signal point's fence is unsignalled (status 0), its write is not in
 * the buffer and the file counts it in flight, while a job on another
 * queue submitted after it has completed (the engine is free).
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"
#include "../../tools/util/vgem.h"

#define WAIT_NS		(5 * T_SEC)
#define BO_SIZE		4096

/* A vgem buffer exported as a dma-buf: its vgem handle and the fd. */
static int vgem_dmabuf(int vfd, uint32_t *bo, int *dmabuf)
{
	int ret = vgem_bo(vfd, bo);

	if (ret)
		return ret;
	return drmPrimeHandleToFD(vfd, *bo, O_CLOEXEC | O_RDWR, dmabuf) ?
	       -errno : 0;
}

/* vgem's CPU mapping of its buffer @bo (BO_SIZE bytes), or NULL. */
static uint64_t *vgem_map(int vfd, uint32_t bo)
{
	struct drm_mode_map_dumb m = { .handle = bo };
	void *p;

	if (drmIoctl(vfd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return NULL;
	p = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, vfd,
		 (off_t)m.offset);
	return p == MAP_FAILED ? NULL : p;
}

/* A vgem buffer imported into d3dq: its d3dq handle, or 0. */
static uint32_t import_vgem(int fd, int vfd, uint32_t *vbo, int *dmabuf)
{
	uint32_t h = 0;

	if (vgem_dmabuf(vfd, vbo, dmabuf))
		return 0;
	if (drmPrimeFDToHandle(fd, *dmabuf, &h))
		return 0;
	return h;
}

FIXTURE(vg) {
	int fd, vfd;
	bool vgem_loaded;
	uint32_t q, q2, tl, tl2;
	uint32_t own;			/* a d3dq buffer */
	uint64_t *mown;
	/* With vgem: a vgem buffer, its dma-buf, mapping and import. */
	uint32_t vbo, h;
	int dmabuf;
	uint64_t *vm;
};

FIXTURE_SETUP(vg)
{
	self->fd = -1;
	self->vfd = -1;
	self->dmabuf = -1;
	self->vgem_loaded = false;
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->q = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	self->tl = t_syncobj(self->fd);
	self->tl2 = t_syncobj(self->fd);
	self->own = t_bo(self->fd, BO_SIZE, (void **)&self->mown);
	ASSERT_NE(0, self->q);
	ASSERT_NE(0, self->q2);
	ASSERT_NE(0, self->tl);
	ASSERT_NE(0, self->tl2);
	ASSERT_NE(0, self->own);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 12, t_param(self->fd,
					    DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_IMPLICIT_SYNC);
	self->vfd = vgem_open(&self->vgem_loaded);
	if (self->vfd < 0)
		return;
	self->h = import_vgem(self->fd, self->vfd, &self->vbo,
			      &self->dmabuf);
	ASSERT_NE(0, self->h);
	self->vm = vgem_map(self->vfd, self->vbo);
	ASSERT_NE(NULL, self->vm);
}

/*
 * vgem's buffers keep d3dq's job fences in their reservation objects
 * (and so d3dq's hardware fences and schedulers) until they are freed,
 * with the last of vgem's handles and d3dq's imports: both files go
 * before the leak check, vgem's module after it.
 */
FIXTURE_TEARDOWN(vg)
{
	t_value_unmap_all();
	if (self->mown)
		munmap(self->mown, BO_SIZE);
	if (self->vm)
		munmap(self->vm, BO_SIZE);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	if (self->fd >= 0)
		close(self->fd);
	if (self->vfd >= 0)
		close(self->vfd);
	T_EXPECT_IDLE(10000);
	if (self->vgem_loaded)
		EXPECT_EQ(0, vgem_unload());
}

#define NEED_VGEM()							\
	do {								\
		if (self->vfd < 0)					\
			SKIP(return, "no vgem module here (the debug kernel and the packages lane have none)"); \
	} while (0)

static int submit_flags(int fd, uint32_t q, uint32_t flags,
			const struct drm_d3dq_sync *waits, uint32_t nwaits,
			uint32_t tl, uint64_t point, const struct t_cs *cs,
			uint32_t *out_flags)
{
	struct drm_d3dq_sync s = t_tl(tl, point);
	struct drm_d3dq_submit a = {
		.queue_id = q,
		.flags = flags,
		.waits = DRM_D3DQ_OBJ_ARRAY(nwaits, waits),
		.signals = DRM_D3DQ_OBJ_ARRAY(1, &s),
		.cmds = (uint64_t)(uintptr_t)cs->buf,
		.cmd_bytes = cs->len,
	};
	int ret = t_submit_raw(fd, &a);

	if (out_flags)
		*out_flags = a.out_flags;
	return ret;
}

/* One WRITE64 of @value at @off of @bo, signalling @tl's @point. */
static int write64(int fd, uint32_t q, uint32_t flags, uint32_t bo,
		   uint64_t off, uint64_t value, uint32_t tl, uint64_t point)
{
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, bo, off, value);
	return submit_flags(fd, q, flags, NULL, 0, tl, point, &cs, NULL);
}

/*
 * Another queue's job completes meanwhile (the engine is free for it),
 * then @tl's @point still has not signalled: what holds it is its wait.
 */
static bool still_waiting(int fd, uint32_t q2, uint32_t tl2, uint64_t *p2,
			  uint32_t own, uint32_t tl, uint64_t point)
{
	++*p2;
	if (write64(fd, q2, 0, own, 64, *p2, tl2, *p2) ||
	    t_wait(fd, tl2, *p2, WAIT_NS))
		return false;
	return t_fence_status(fd, tl, point) == 0;
}

/*
 * The job that signals self->tl's @point is held (still_waiting(), with
 * @scratch for the other queue's write) until vgem's fence @vf signals,
 * then completes; @before runs while it is held (may be NULL).
 */
static bool held_until_vgem_signals(FIXTURE_DATA(vg) *self,
				    uint32_t scratch, uint64_t point,
				    uint32_t vf, bool (*before)(void *),
				    void *arg)
{
	uint64_t p2 = 0;

	if (t_submitted(self->fd, self->tl2) > 0)
		p2 = (uint64_t)t_submitted(self->fd, self->tl2);
	if (!still_waiting(self->fd, self->q2, self->tl2, &p2, scratch,
			   self->tl, point))
		return false;
	if (before && !before(arg))
		return false;
	return !vgem_signal(self->vfd, vf) &&
	       !t_wait(self->fd, self->tl, point, WAIT_NS);
}

/* For held_until_vgem_signals(): *@arg (a u64 of a mapping) is still 0. */
static bool still_zero(void *arg)
{
	return !*(volatile uint64_t *)arg;
}

static long long in_flight(int fd)
{
	return t_fdinfo(fd, "d3dq-jobs-in-flight", NULL, 0);
}

/*
 * A d3dq job writes a vgem buffer and reads one (COPY): the CPU sees
 * the write through vgem's mapping, and the engine the CPU's.
 */
TEST_F(vg, job_writes_and_reads_a_vgem_buffer)
{
	struct t_cs cs;

	NEED_VGEM();
	self->vm[2] = 0x1234;

	t_cs_init(&cs);
	t_cs_write64(&cs, self->h, 8, 0xfeedface);
	t_cs_copy(&cs, self->own, 0, self->h, 16, 8);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, 0, NULL, 0, self->tl, 1,
				  &cs, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));
	EXPECT_EQ(0xfeedface, self->vm[1]);
	EXPECT_EQ(0x1234, self->mown[0]);

	/* The same object again in this file; d3dq's mmap maps vgem's. */
	{
		uint32_t h2 = 0;
		uint64_t *dm;

		ASSERT_EQ(0, drmPrimeFDToHandle(self->fd, self->dmabuf, &h2));
		EXPECT_EQ(self->h, h2);
		dm = t_bo_map(self->fd, self->h, BO_SIZE);
		ASSERT_NE(NULL, dm);
		EXPECT_EQ(0xfeedface, dm[1]);
		munmap(dm, BO_SIZE);
	}
}

/* Until @tl's @point has a fence (the job was armed), or -errno. */
static int wait_available(int fd, uint32_t tl, uint64_t point)
{
	return drmSyncobjTimelineWait(fd, &tl, &point, 1, t_deadline(WAIT_NS),
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE,
				      NULL) ? -errno : 0;
}

/* Attach an unsignalled read (not write) fence to vgem's @bo. */
static int vgem_attach_read(int vfd, uint32_t bo, uint32_t *fence)
{
	struct d3dq_vgem_fence_attach a = { .handle = bo };

	if (drmIoctl(vfd, D3DQ_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

/*
 * d3dq publishes its job in the vgem buffer's reservation object: a
 * reader of the dma-buf waits for a d3dq job that writes it.
 */
TEST_F(vg, job_is_published_in_the_vgem_reservation)
{
	struct t_cs cs;
	int sf;

	NEED_VGEM();

	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_MS);
	t_cs_write64(&cs, self->h, 0, 7);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, 0, NULL, 0, self->tl, 1,
				  &cs, NULL));
	sf = dmabuf_read_sync_file(self->dmabuf);
	ASSERT_LE(0, sf);
	/* Taken while the job was still delaying. */
	ASSERT_EQ(0, t_fence_status(self->fd, self->tl, 1));
	EXPECT_EQ(0, t_sync_file_signalled(sf, 0));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));
	EXPECT_EQ(1, t_sync_file_signalled(sf, 0));
	close(sf);
}

/*
 * The other driver's output consumed with the flag: a job that reads
 * the vgem buffer waits for vgem's write fence, then reads what the
 * CPU (standing for vgem's work) wrote before signalling it.
 */
TEST_F(vg, implicit_job_waits_for_the_vgem_writer)
{
	uint32_t vf = 0, out = 0;
	uint64_t p2 = 0;
	struct t_cs cs;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_attach_write(self->vfd, self->vbo, &vf));

	t_cs_init(&cs);
	t_cs_copy(&cs, self->own, 0, self->h, 0, 8);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
				  NULL, 0, self->tl, 1, &cs, &out));
	EXPECT_FALSE(out & DRM_D3DQ_SUBMIT_DONE);
	EXPECT_TRUE(still_waiting(self->fd, self->q2, self->tl2, &p2,
				  self->own, self->tl, 1));
	EXPECT_LE(1, in_flight(self->fd));
	EXPECT_EQ(0, self->mown[0]);

	/* vgem's "work" writes the buffer, then its fence signals. */
	self->vm[0] = 0xabcdef;
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));
	EXPECT_EQ(1, t_fence_status(self->fd, self->tl, 1));
	EXPECT_EQ(0xabcdef, self->mown[0]);
}

/*
 * Usage as in implicit sync: a job that only reads the buffer does not
 * wait for a reader's fence; one that writes it does.
 */
TEST_F(vg, readers_hold_only_writers)
{
	uint32_t vf = 0;
	struct t_cs cs;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_attach_read(self->vfd, self->vbo, &vf));

	t_cs_init(&cs);
	t_cs_copy(&cs, self->own, 0, self->h, 0, 8);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
				  NULL, 0, self->tl, 1, &cs, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));

	ASSERT_EQ(0, write64(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
			     self->h, 0, 5, self->tl, 2));
	EXPECT_TRUE(held_until_vgem_signals(self, self->own, 2, vf, NULL,
					    NULL));
}

/* Without the flag a job does not wait for what it finds there. */
TEST_F(vg, without_the_flag_the_job_does_not_wait)
{
	uint32_t vf = 0;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_attach_write(self->vfd, self->vbo, &vf));

	ASSERT_EQ(0, write64(self->fd, self->q, 0, self->h, 0, 9, self->tl,
			     1));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));
	EXPECT_EQ(9, self->vm[0]);
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
}

/*
 * A d3dq buffer that vgem imported and "writes": its reservation object
 * is the dma-buf's, so the flag waits for vgem's fence there too; d3dq's
 * own earlier job on it is never waited for.
 */
TEST_F(vg, own_buffer_written_by_vgem)
{
	uint32_t vh, vf = 0, dst;
	uint64_t *mdst;
	struct t_cs cs;
	int dmabuf = -1;

	NEED_VGEM();
	dst = t_bo(self->fd, BO_SIZE, (void **)&mdst);
	ASSERT_NE(0, dst);
	ASSERT_EQ(0, drmPrimeHandleToFD(self->fd, self->own,
					O_CLOEXEC | O_RDWR, &dmabuf));
	ASSERT_EQ(0, drmPrimeFDToHandle(self->vfd, dmabuf, &vh));

	/* A d3dq job still delaying on the buffer: not waited for. */
	t_cs_init(&cs);
	t_cs_delay(&cs, 500 * T_MS);
	t_cs_write64(&cs, self->own, 8, 1);
	ASSERT_EQ(0, submit_flags(self->fd, self->q2, 0, NULL, 0, self->tl2,
				  1, &cs, NULL));
	t_cs_init(&cs);
	t_cs_write64(&cs, dst, 0, 3);
	t_cs_copy(&cs, dst, 8, self->own, 0, 8);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
				  NULL, 0, self->tl, 1, &cs, NULL));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 1, WAIT_NS));
	EXPECT_EQ(0, t_fence_status(self->fd, self->tl2, 1));
	ASSERT_EQ(0, t_wait(self->fd, self->tl2, 1, WAIT_NS));

	ASSERT_EQ(0, vgem_attach_write(self->vfd, vh, &vf));
	self->mown[0] = 42;
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
				  NULL, 0, self->tl, 2, &cs, NULL));
	EXPECT_TRUE(held_until_vgem_signals(self, dst, 2, vf, still_zero,
					    &mdst[1]));
	EXPECT_EQ(42, mdst[1]);
	munmap(mdst, BO_SIZE);
	close(dmabuf);
}

/*
 * A held job looks the fences up when it is armed: a vgem fence attached
 * while it is held holds it once armed.
 */
TEST_F(vg, held_job_takes_the_fences_found_when_armed)
{
	uint32_t vf = 0, out = 0;
	struct drm_d3dq_sync w;
	struct t_fence f;
	struct t_cs cs;

	NEED_VGEM();
	ASSERT_EQ(0, t_fence_new(self->fd, 0, 0, &f));

	w = t_fs(f.handle, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->h, 0, 11);
	ASSERT_EQ(0, submit_flags(self->fd, self->q,
				  DRM_D3DQ_SUBMIT_HOLD | DRM_D3DQ_SUBMIT_IMPLICIT,
				  &w, 1, self->tl, 1, &cs, &out));
	ASSERT_TRUE(out & DRM_D3DQ_SUBMIT_HELD);
	ASSERT_EQ(0, vgem_attach_write(self->vfd, self->vbo, &vf));

	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 1));
	ASSERT_EQ(0, wait_available(self->fd, self->tl, 1));
	EXPECT_TRUE(held_until_vgem_signals(self, self->own, 1, vf,
					    still_zero, &self->vm[0]));
	EXPECT_EQ(11, self->vm[0]);
}

TEST_F(vg, bad_input_has_its_errno)
{
	struct drm_d3dq_sync w = t_tl(self->tl2, 1);
	uint32_t out = 0;
	struct t_cs cs;

	t_cs_init(&cs);
	t_cs_write64(&cs, self->own, 0, 1);
	/* An unknown flag; a split submit with waits. */
	EXPECT_EQ(-EINVAL, submit_flags(self->fd, self->q, 1u << 5, NULL, 0,
					self->tl, 1, &cs, NULL));
	EXPECT_EQ(-EINVAL, submit_flags(self->fd, self->q,
					DRM_D3DQ_SUBMIT_SPLIT |
					DRM_D3DQ_SUBMIT_IMPLICIT, &w, 1,
					self->tl, 1, &cs, NULL));
	/* With SPLIT, and with no command: accepted. */
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_SPLIT |
				  DRM_D3DQ_SUBMIT_IMPLICIT, NULL, 0, self->tl,
				  1, &cs, NULL));
	t_cs_init(&cs);
	ASSERT_EQ(0, submit_flags(self->fd, self->q, DRM_D3DQ_SUBMIT_IMPLICIT,
				  NULL, 0, self->tl, 2, &cs, &out));
	ASSERT_EQ(0, t_wait(self->fd, self->tl, 2, WAIT_NS));
	EXPECT_EQ(1, self->mown[0]);
}

/*
 * Closing the file with a job waiting on a vgem fence returns at once;
 * the job ends (cancelled) once vgem's fence signals, and everything
 * is freed (the teardown checks it).
 */
TEST_F(vg, close_with_a_job_waiting_on_vgem)
{
	uint32_t h = 0, vf = 0, q, tl;
	uint64_t t0;
	int fd2, sf;

	NEED_VGEM();
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	q = t_queue(fd2, 0, 0);
	tl = t_syncobj(fd2);
	ASSERT_NE(0, q);
	ASSERT_NE(0, tl);
	ASSERT_EQ(0, drmPrimeFDToHandle(fd2, self->dmabuf, &h));
	ASSERT_EQ(0, vgem_attach_write(self->vfd, self->vbo, &vf));
	ASSERT_EQ(0, write64(fd2, q, DRM_D3DQ_SUBMIT_IMPLICIT, h, 0, 1, tl,
			     1));
	t0 = t_now();
	close(fd2);
	EXPECT_GT(2 * T_SEC, t_now() - t0);

	/* The job's fence is still in the buffer until vgem's signals. */
	sf = dmabuf_read_sync_file(self->dmabuf);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	{
		struct pollfd pf = { .fd = sf, .events = POLLIN };

		EXPECT_EQ(1, poll(&pf, 1, 5000));
	}
	close(sf);
}

/*
 * Unplugging the device with a job waiting on a vgem fence returns at
 * once; the job ends with an error once vgem's fence signals.
 */
FIXTURE(vgu) {
	int fd, vfd;
	bool vgem_loaded;
};

FIXTURE_SETUP(vgu)
{
	self->fd = -1;
	self->vfd = -1;
	self->vgem_loaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->vfd = vgem_open(&self->vgem_loaded);
}

FIXTURE_TEARDOWN(vgu)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->vfd >= 0)
		close(self->vfd);
	if (!t_can_reload())
		return;
	if (!t_is_bound(0))
		EXPECT_EQ(0, t_bind(0));
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_unload());
	EXPECT_EQ(0, t_load(NULL));
	if (self->vgem_loaded)
		EXPECT_EQ(0, vgem_unload());
}

TEST_F(vgu, unplug_with_a_job_waiting_on_vgem)
{
	uint32_t vbo, h, vf = 0, q, tl;
	uint64_t t0;
	int dmabuf = -1, sf;

	NEED_VGEM();
	q = t_queue(self->fd, 0, 0);
	tl = t_syncobj(self->fd);
	ASSERT_NE(0, q);
	ASSERT_NE(0, tl);
	h = import_vgem(self->fd, self->vfd, &vbo, &dmabuf);
	ASSERT_NE(0, h);
	ASSERT_EQ(0, vgem_attach_write(self->vfd, vbo, &vf));
	ASSERT_EQ(0, write64(self->fd, q, DRM_D3DQ_SUBMIT_IMPLICIT, h, 0, 1,
			     tl, 1));
	t0 = t_now();
	ASSERT_EQ(0, t_unbind(0));
	EXPECT_GT(2 * T_SEC, t_now() - t0);

	/*
	 * The device's syncobjs are gone with it: the buffer's readers see
	 * the job's fence, pending until vgem's has signalled, then not.
	 */
	sf = dmabuf_read_sync_file(dmabuf);
	ASSERT_LE(0, sf);
	EXPECT_EQ(0, t_sync_file_signalled(sf, 0));
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	{
		struct pollfd pf = { .fd = sf, .events = POLLIN };

		EXPECT_EQ(1, poll(&pf, 1, 5000));
	}
	close(sf);
	close(dmabuf);
}

TEST_HARNESS_MAIN
