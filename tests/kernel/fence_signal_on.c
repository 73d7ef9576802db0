// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fence values set by another driver's work (uapi 1.11, "Fence
 * values set by other drivers", issue 41): FENCE_SIGNAL_ON sets a fence
 * when a dma-fence signals, given as a sync_file or a syncobj point.
 *
 * The other driver is vgem, a module of Debian's kernels that the VM's
 * initramfs carries unloaded (/modules/extra/vgem.ko): its fences attach
 * to a buffer's reservation (VGEM_FENCE_ATTACH), signal when asked
 * (VGEM_FENCE_SIGNAL), and become a sync_file through the buffer's
 * dma-buf (DMA_BUF_IOCTL_EXPORT_SYNC_FILE); tools/util/vgem.h. Cases that need vgem skip
 * without it (the debug kernel does not build it). A d3dq job's own
 * dma-fence, exported from a syncobj, stands for work that fails.
 *
 * What happened is observed, not timed: a pending signal is a counted
 * object (debugfs "fence_imports") until its value was written or
 * dropped, and a write that must not happen would fire an eventfd
 * registered at its value.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"
#include "../../tools/util/vgem.h"

#define WAIT_MS		20000
#define ARGS		"job_timeout_ms=600000 max_delay_ns=600000000000"

/* A vgem buffer with an unsignalled write fence: its handle and fence. */
static int vgem_fenced_bo(int vfd, uint32_t *bo, uint32_t *fence)
{
	int ret = vgem_bo(vfd, bo);

	return ret ? ret : vgem_attach_write(vfd, *bo, fence);
}

/* The fences a reader of @bo waits for, as a sync_file, or -errno. */
static int vgem_sync_file(int vfd, uint32_t bo)
{
	int dmabuf, ret;

	if (drmPrimeHandleToFD(vfd, bo, O_CLOEXEC | O_RDWR, &dmabuf))
		return -errno;
	ret = dmabuf_read_sync_file(dmabuf);
	close(dmabuf);
	return ret;
}

static int signal_on(int fd, uint32_t handle, uint64_t value, int sf)
{
	struct drm_d3dq_fence_signal_on a = {
		.handle = handle, .value = value, .fd = sf,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON, &a);
}

static int signal_on_syncobj(int fd, uint32_t handle, uint64_t value,
			     uint32_t syncobj, uint64_t point)
{
	struct drm_d3dq_fence_signal_on a = {
		.handle = handle, .value = value,
		.flags = DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ,
		.syncobj = syncobj, .point = point,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON, &a);
}

/* Until no signal of another driver's work is pending (debugfs). */
static bool imports_become(int n)
{
	struct t_objects o;
	int ms;

	for (ms = 0; ms < WAIT_MS; ms += 5) {
		if (t_objects(&o))
			return false;
		if (o.fence_imports == n)
			return true;
		usleep(5000);
	}
	return false;
}

FIXTURE(so) {
	int fd, vfd;
	bool vgem_loaded;
	struct t_fence f;
};

FIXTURE_SETUP(so)
{
	self->fd = -1;
	self->vfd = -1;
	self->vgem_loaded = false;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 11, t_param(self->fd,
					    DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_SIGNAL_ON);
	ASSERT_EQ(0, t_fence_new(self->fd, 1, DRM_D3DQ_FENCE_SHARED,
				 &self->f));
	self->vfd = vgem_open(&self->vgem_loaded);
}

FIXTURE_TEARDOWN(so)
{
	t_value_unmap_all();
	if (self->vfd >= 0)
		close(self->vfd);
	if (self->vgem_loaded)
		EXPECT_EQ(0, vgem_unload());
	if (self->fd >= 0)
		close(self->fd);
	if (!t_can_reload())
		return;
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

#define NEED_VGEM()							\
	do {								\
		if (self->vfd < 0)					\
			SKIP(return, "no vgem module here (the debug kernel and the packages lane have none)"); \
	} while (0)

TEST_F(so, bad_arguments_have_their_errno)
{
	struct drm_d3dq_fence_signal_on a = { .handle = self->f.handle };
	uint32_t so = t_syncobj(self->fd);
	int efd = eventfd(0, EFD_CLOEXEC);

	ASSERT_NE(0, so);
	ASSERT_LE(0, efd);
	a.flags = 2;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON,
				   &a));
	a.flags = 0;
	a.pad = 1;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON,
				   &a));
	a.pad = 0;
	a.fd = efd;
	a.syncobj = so;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON,
				   &a));
	a.flags = DRM_D3DQ_FENCE_SIGNAL_ON_SYNCOBJ;
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_SIGNAL_ON,
				   &a));
	/* Not a sync_file; not open; unknown fence or syncobj. */
	EXPECT_EQ(-EINVAL, signal_on(self->fd, self->f.handle, 2, efd));
	EXPECT_EQ(-EBADF, signal_on(self->fd, self->f.handle, 2, 1000));
	EXPECT_EQ(-ENOENT, signal_on_syncobj(self->fd, self->f.handle + 99, 2,
					     so, 0));
	EXPECT_EQ(-ENOENT, signal_on_syncobj(self->fd, self->f.handle, 2,
					     so + 99, 0));
	/* No fence yet, binary or at a timeline point: nothing is made. */
	EXPECT_EQ(-ENODATA, signal_on_syncobj(self->fd, self->f.handle, 2,
					      so, 0));
	ASSERT_EQ(0, t_signal(self->fd, so, 0));
	EXPECT_EQ(-EINVAL, signal_on_syncobj(self->fd, self->f.handle, 2,
					     so, 5));
	EXPECT_TRUE(imports_become(0));
	EXPECT_EQ(1, t_value_load(self->f.v));
	close(efd);
}

/* A dma-fence that signalled already sets the value in the call. */
TEST_F(so, signalled_sets_the_value_in_the_call)
{
	uint32_t so = t_syncobj(self->fd);
	int sf;

	ASSERT_NE(0, so);
	ASSERT_EQ(0, t_signal(self->fd, so, 3));
	ASSERT_EQ(0, signal_on_syncobj(self->fd, self->f.handle, 42, so, 3));
	EXPECT_EQ(42, t_value_load(self->f.v));
	ASSERT_EQ(0, drmSyncobjExportSyncFile(self->fd, so, &sf) ? -1 : 0);
	ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 7, sf));
	EXPECT_EQ(7, t_value_load(self->f.v));
	close(sf);
	EXPECT_TRUE(imports_become(0));
}

/*
 * vgem's fence: the value waits for it, a queue Wait on it holds its
 * job, and its signal writes the value and releases the job, whatever
 * rewind came in between (R4).
 */
TEST_F(so, vgem_work_sets_the_value)
{
	struct drm_d3dq_sync w = t_fs(self->f.handle, 5), s;
	uint32_t bo, vf, q, out;
	uint32_t out_flags = 0;
	int sf;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
	sf = vgem_sync_file(self->vfd, bo);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 5, sf));
	close(sf);
	EXPECT_EQ(1, t_value_load(self->f.v));
	EXPECT_TRUE(imports_become(1));

	q = t_queue(self->fd, 0, 0);
	out = t_syncobj(self->fd);
	ASSERT_NE(0, q);
	ASSERT_NE(0, out);
	s = t_bin(out);
	ASSERT_EQ(0, t_submit_hold(self->fd, q, &w, 1, &s, 1, NULL,
				   &out_flags, NULL));
	EXPECT_TRUE(out_flags & DRM_D3DQ_SUBMIT_HELD);
	/* A rewind before the work completes cancels nothing. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, self->f.handle, 5, 0));
	/* Held: nothing of the job is published yet. */
	EXPECT_NE(1, t_fence_status(self->fd, out, 0));

	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	EXPECT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 5,
				   (int64_t)(t_now() + WAIT_MS * T_MS)));
	EXPECT_EQ(5, t_value_load(self->f.v));
	EXPECT_EQ(0, t_wait(self->fd, out, 0, WAIT_MS * T_MS));
	EXPECT_EQ(1, t_fence_status(self->fd, out, 0));
	EXPECT_TRUE(imports_become(0));
}

/*
 * Where the fence's lock is free, the dma-fence callback writes the value
 * and fires the eventfd registered at it itself: both are there when
 * VGEM_FENCE_SIGNAL returns, with no worker to wait for. Between rounds
 * the signal is freed, so nothing else holds the lock.
 */
TEST_F(so, vgem_signal_writes_in_its_call)
{
	uint32_t bo, vf;
	int i, sf, efd;

	NEED_VGEM();
	for (i = 0; i < 4; i++) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ASSERT_LE(0, efd);
		ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
		sf = vgem_sync_file(self->vfd, bo);
		ASSERT_LE(0, sf);
		ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 10 + i, sf));
		close(sf);
		ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 10 + i,
					    efd));
		ASSERT_EQ(0, vgem_signal(self->vfd, vf));
		EXPECT_EQ(10 + i, t_value_load(self->f.v));
		EXPECT_EQ(1, t_efd_take(efd));
		EXPECT_TRUE(imports_become(0));
		close(efd);
	}
}

/*
 * The signal's freeing is armed by FENCE_SIGNAL_ON, 10 ms ahead, so that
 * the callback finds it pending and leaves it alone. Work that completes
 * later finds it run (with nothing to free): the callback arms it again,
 * and the signal is freed all the same.
 */
TEST_F(so, late_work_is_freed)
{
	uint32_t bo, vf;
	int i, sf;

	NEED_VGEM();
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
		sf = vgem_sync_file(self->vfd, bo);
		ASSERT_LE(0, sf);
		ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 20 + i, sf));
		close(sf);
		EXPECT_TRUE(imports_become(1));
		/* Well past the delay: the freeing the call armed has run. */
		usleep(300 * 1000);
		ASSERT_EQ(0, vgem_signal(self->vfd, vf));
		EXPECT_EQ(20 + i, t_value_load(self->f.v));
		EXPECT_TRUE(imports_become(0));
	}
}

/*
 * A d3dq job's dma-fence, which signals in the engine's timer interrupt
 * (the debug kernel's lockdep sees the callback take the fence's lock
 * under that fence's): it wakes a CPU waiter and fires an eventfd at a
 * lower value, which the callback satisfies, and releases a queue held
 * by a Wait on the value, which stops the callback's batch: the work
 * arms it.
 */
TEST_F(so, d3dq_job_sets_the_value)
{
	struct drm_d3dq_sync w = t_fs(self->f.handle, 4), s, s2;
	int efd = eventfd(0, EFD_CLOEXEC);
	uint32_t q, q2, out, out2;
	uint32_t out_flags = 0;
	struct t_cs cs;

	ASSERT_LE(0, efd);
	q = t_queue(self->fd, 0, 0);
	q2 = t_queue(self->fd, 0, 0);
	out = t_syncobj(self->fd);
	out2 = t_syncobj(self->fd);
	ASSERT_NE(0, q);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, out);
	ASSERT_NE(0, out2);
	s = t_tl(out, 1);
	s2 = t_bin(out2);
	ASSERT_EQ(0, t_submit_hold(self->fd, q2, &w, 1, &s2, 1, NULL,
				   &out_flags, NULL));
	EXPECT_TRUE(out_flags & DRM_D3DQ_SUBMIT_HELD);
	t_cs_init(&cs);
	t_cs_delay(&cs, 200 * T_MS);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, signal_on_syncobj(self->fd, self->f.handle, 4, out, 1));
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 3, efd));
	EXPECT_EQ(0, t_fence_wait1(self->fd, self->f.handle, 3,
				   (int64_t)(t_now() + WAIT_MS * T_MS)));
	EXPECT_EQ(4, t_value_load(self->f.v));
	EXPECT_EQ(1, t_efd_take(efd));
	EXPECT_EQ(0, t_wait(self->fd, out2, 0, WAIT_MS * T_MS));
	EXPECT_EQ(1, t_fence_status(self->fd, out2, 0));
	EXPECT_TRUE(imports_become(0));
	close(efd);
}

/*
 * Signals take effect in the order their work completed, whichever was
 * asked first, and a CPU signal after a completion writes after it.
 */
TEST_F(so, completion_order)
{
	uint32_t bo[3], vf[3];
	int i, sf;

	NEED_VGEM();
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo[i], &vf[i]));
		sf = vgem_sync_file(self->vfd, bo[i]);
		ASSERT_LE(0, sf);
		ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 3 + 2 * i,
				       sf));
		close(sf);
	}
	/* 5 completes, then 3: the last completion wins. */
	ASSERT_EQ(0, vgem_signal(self->vfd, vf[1]));
	ASSERT_EQ(0, vgem_signal(self->vfd, vf[0]));
	EXPECT_TRUE(imports_become(1));
	EXPECT_EQ(3, t_value_load(self->f.v));
	/* 7 completes; a CPU signal right after it writes after it. */
	ASSERT_EQ(0, vgem_signal(self->vfd, vf[2]));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 9));
	EXPECT_TRUE(imports_become(0));
	EXPECT_EQ(9, t_value_load(self->f.v));
}

/*
 * Work that fails writes nothing: a job cancelled on its DELAY, its
 * syncobj point's fence given to FENCE_SIGNAL_ON. A write of 6 would
 * fire the eventfd registered at 6.
 */
TEST_F(so, failed_work_writes_nothing)
{
	struct drm_d3dq_sync s;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint32_t q, out;
	struct t_cs cs;

	ASSERT_LE(0, efd);
	q = t_queue(self->fd, 0, 0);
	out = t_syncobj(self->fd);
	ASSERT_NE(0, q);
	ASSERT_NE(0, out);
	s = t_tl(out, 1);
	t_cs_init(&cs);
	t_cs_delay(&cs, 300 * T_SEC);
	ASSERT_EQ(0, t_submit(self->fd, q, NULL, 0, &s, 1, &cs));
	ASSERT_EQ(0, signal_on_syncobj(self->fd, self->f.handle, 6, out, 1));
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 6, efd));
	ASSERT_EQ(0, t_queue_destroy(self->fd, q));
	ASSERT_EQ(0, t_wait(self->fd, out, 1, WAIT_MS * T_MS));
	EXPECT_GT(0, t_fence_status(self->fd, out, 1));
	EXPECT_TRUE(imports_become(0));
	/* A write after it would come after the failed signal's. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 2));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(2, t_value_load(self->f.v));
	close(efd);
}

/*
 * The file's close cancels its pending signals: another file that holds
 * the fence never sees the value, even once the work completes.
 */
TEST_F(so, close_cancels_pending)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint32_t bo, vf;
	struct t_fence g;
	int fd2, xfd, sf;

	NEED_VGEM();
	ASSERT_LE(0, efd);
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	xfd = t_fence_export(self->fd, self->f.handle);
	ASSERT_LE(0, xfd);
	ASSERT_EQ(0, t_fence_import(fd2, xfd, &g));
	close(xfd);
	ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
	sf = vgem_sync_file(self->vfd, bo);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, signal_on(fd2, g.handle, 8, sf));
	close(sf);
	ASSERT_EQ(0, t_fence_event1(self->fd, self->f.handle, 8, efd));
	EXPECT_TRUE(imports_become(1));
	close(fd2);
	EXPECT_TRUE(imports_become(0));
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 1));
	EXPECT_EQ(0, t_efd_take(efd));
	EXPECT_EQ(1, t_value_load(self->f.v));
	close(efd);
}

/* REMOVE cancels them as well, and refuses new ones. */
TEST_F(so, removal_cancels_pending)
{
	struct drm_d3dq_remove rm = { 0 };
	uint32_t bo, vf;
	int sf;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
	sf = vgem_sync_file(self->vfd, bo);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 8, sf));
	EXPECT_TRUE(imports_become(1));
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_TRUE(imports_become(0));
	EXPECT_EQ(-ENODEV, signal_on(self->fd, self->f.handle, 9, sf));
	close(sf);
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
}

/*
 * An unplug with a signal pending: the fence goes to ~0 for good and the
 * other driver's completion writes nothing over it. The signal's work
 * may hold the unplugged device last (its debugfs is gone with the
 * unbind): it must let it go cleanly (the console is checked for
 * warnings), and the device binds again after.
 */
TEST_F(so, unplug_with_pending)
{
	uint32_t bo, vf;
	int sf;

	NEED_VGEM();
	ASSERT_EQ(0, vgem_fenced_bo(self->vfd, &bo, &vf));
	sf = vgem_sync_file(self->vfd, bo);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, signal_on(self->fd, self->f.handle, 8, sf));
	close(sf);
	EXPECT_TRUE(imports_become(1));
	ASSERT_EQ(0, t_unbind(0));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	ASSERT_EQ(0, vgem_signal(self->vfd, vf));
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	t_value_unmap_all();
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, t_bind(0));
}

/* Each pending signal is a node of the user's bound. */
TEST(node_bound)
{
	uint32_t bo[3], vf[3];
	bool loaded = false;
	struct t_fence f;
	int fd, vfd, sf, i;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("max_user_fence_nodes=2"));
	vfd = vgem_open(&loaded);
	if (vfd < 0) {
		EXPECT_EQ(0, t_reload(NULL));
		SKIP(return, "no vgem module here (the debug kernel and the packages lane have none)");
	}
	fd = t_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_fence_create(fd, 0, 0, &f));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, vgem_fenced_bo(vfd, &bo[i], &vf[i]));
		sf = vgem_sync_file(vfd, bo[i]);
		ASSERT_LE(0, sf);
		EXPECT_EQ(i < 2 ? 0 : -EDQUOT, signal_on(fd, f.handle, 1, sf));
		close(sf);
	}
	/* Done, each gives its node back. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, vgem_signal(vfd, vf[i]));
	EXPECT_TRUE(imports_become(0));
	ASSERT_EQ(0, vgem_fenced_bo(vfd, &bo[0], &vf[0]));
	sf = vgem_sync_file(vfd, bo[0]);
	ASSERT_LE(0, sf);
	EXPECT_EQ(0, signal_on(fd, f.handle, 1, sf));
	close(sf);
	ASSERT_EQ(0, vgem_signal(vfd, vf[0]));
	close(fd);
	close(vfd);
	if (loaded)
		EXPECT_EQ(0, vgem_unload());
	EXPECT_TRUE(imports_become(0));
	EXPECT_EQ(0, t_reload(NULL));
}

TEST_HARNESS_MAIN
