// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: a fence value as a sync_file (uapi 1.7, "Fence values as
 * sync_files"): decided at the call, signalled when the value is reached
 * or with the error of the job that was to bring it, never a dma-fence
 * that waits for userspace (-ENODATA instead), and independent of the
 * handle and the file once made.
 *
 * Jobs are kept pending without timing: a job on a long DELAY (the
 * module runs without a job timeout that matters) gates them through a
 * releasable wait, and WAIT_RELEASE lets them go.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define ARGS		"job_timeout_ms=600000 max_delay_ns=600000000000"
#define GATE_NS		(300 * T_SEC)
#define LONG_MS		20000

/* FENCE_EXPORT_SYNC_FILE: the fd, or -errno. */
static int export_sf(int fd, uint32_t handle, uint64_t value)
{
	struct drm_d3dq_fence_sync_file a = { .handle = handle,
					      .value = value };
	int ret = t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a);

	return ret ? ret : a.fd;
}

/* Whether sync_file @sf signalled within @ms. */
static bool sf_signals(int sf, int ms)
{
	struct pollfd p = { .fd = sf, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* Its status: 1 signalled, 0 not, negative the error; -1000 unread. */
static int sf_status(int sf)
{
	struct sync_file_info info;

	return t_sync_file_info(sf, &info, NULL, 0) ? -1000 : info.status;
}

FIXTURE(sf) {
	int fd;
	uint32_t gq, gate, q, q2, out, out2;
	uint64_t seqno;		/* the gated job's */
	struct t_fence f;
};

FIXTURE_SETUP(sf)
{
	self->fd = -1;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	/* The module of this tree has it: its absence is a failure. */
	ASSERT_LE((1u << 16) | 7, t_param(self->fd,
					   DRM_D3DQ_PARAM_UAPI_VERSION));
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_SYNC_FILE);
	self->gq = t_queue(self->fd, 0, 0);
	self->q = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	self->out = t_syncobj(self->fd);
	self->out2 = t_syncobj(self->fd);
	ASSERT_NE(0, self->gq);
	ASSERT_NE(0, self->q);
	ASSERT_NE(0, self->q2);
	ASSERT_NE(0, self->out);
	ASSERT_NE(0, self->out2);
	ASSERT_EQ(0, t_fence_new(self->fd, 1, DRM_D3DQ_FENCE_SHARED,
				 &self->f));
}

FIXTURE_TEARDOWN(sf)
{
	t_value_unmap_all();
	if (self->fd >= 0)
		close(self->fd);
	if (!t_can_reload())
		return;
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

/*
 * Queue q gets a job that signals f = @value and point 1 of a new out,
 * armed but held back by a releasable wait on the gate's long job.
 */
static void gated_signal(struct __test_metadata *_metadata,
			 FIXTURE_DATA(sf) *self, uint64_t value)
{
	struct drm_d3dq_sync w, s[2];
	struct t_cs cs;

	/* A gate and an out point of its own: an earlier gate may run. */
	self->gate = t_syncobj(self->fd);
	self->out = t_syncobj(self->fd);
	ASSERT_NE(0, self->gate);
	ASSERT_NE(0, self->out);
	s[0] = t_tl(self->gate, 1);
	t_cs_init(&cs);
	t_cs_delay(&cs, GATE_NS);
	ASSERT_EQ(0, t_submit(self->fd, self->gq, NULL, 0, s, 1, &cs));
	w = t_tl(self->gate, 1);
	w.flags |= DRM_D3DQ_SYNC_RELEASABLE;
	s[0] = t_fs(self->f.handle, value);
	s[1] = t_tl(self->out, 1);
	ASSERT_EQ(0, t_submit_out(self->fd, self->q, &w, 1, s, 2, NULL, NULL,
				  &self->seqno));
}

static int open_gate(FIXTURE_DATA(sf) *self)
{
	struct drm_d3dq_wait_release a = {
		.queue_id = self->q, .seqno = self->seqno,
	};

	return t_ioctl(self->fd, DRM_IOCTL_D3DQ_WAIT_RELEASE, &a);
}

/* Reached values give a sync_file that has signalled. */
TEST_F(sf, reached)
{
	int sf;

	sf = export_sf(self->fd, self->f.handle, 1);
	ASSERT_LE(0, sf);
	EXPECT_TRUE(sf_signals(sf, 0));
	EXPECT_EQ(1, sf_status(sf));
	EXPECT_NE(0, fcntl(sf, F_GETFD) & FD_CLOEXEC);
	close(sf);
	sf = export_sf(self->fd, self->f.handle, 0);
	ASSERT_LE(0, sf);
	EXPECT_EQ(1, sf_status(sf));
	close(sf);
}

/*
 * Nothing on its way: no signal; a held job's signal (not armed); an
 * armed signal of another file; a signal below the value.
 */
TEST_F(sf, nothing_on_its_way_is_enodata)
{
	struct drm_d3dq_sync w, s;
	struct t_fence g, fo;
	uint32_t fl = 0, qo;
	struct t_cs cs;
	int other, xfd;

	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 2));

	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &g));
	w = t_fs(g.handle, 1);
	s = t_fs(self->f.handle, 5);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, &s, 1, NULL, &fl,
				   NULL));
	ASSERT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 5));

	other = t_open(0);
	ASSERT_LE(0, other);
	xfd = t_fence_export(self->fd, self->f.handle);
	ASSERT_LE(0, xfd);
	ASSERT_EQ(0, t_fence_import(other, xfd, &fo));
	close(xfd);
	qo = t_queue(other, 0, 0);
	ASSERT_NE(0, qo);
	t_cs_init(&cs);
	t_cs_delay(&cs, GATE_NS);
	s = t_fs(fo.handle, 9);
	ASSERT_EQ(0, t_submit(other, qo, NULL, 0, &s, 1, &cs));
	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 9));
	/* ...while that file can export it. */
	xfd = export_sf(other, fo.handle, 9);
	EXPECT_LE(0, xfd);
	EXPECT_FALSE(sf_signals(xfd, 0));
	close(other);
	/* Its job was cancelled with its file: an error, not the value. */
	EXPECT_TRUE(sf_signals(xfd, LONG_MS));
	EXPECT_GT(0, sf_status(xfd));
	EXPECT_EQ(1, t_value_load(self->f.v));
	close(xfd);

	/* The held job's wait satisfied: its signal is armed, then done. */
	ASSERT_EQ(0, t_fence_signal(self->fd, g.handle, 1));
	ASSERT_TRUE(t_jobs_gone(1));
	EXPECT_EQ(5, t_value_load(self->f.v));
	/* A pending signal below the value does not bring it. */
	gated_signal(_metadata, self, 6);
	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 7));
	ASSERT_EQ(0, open_gate(self));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, LONG_MS * T_MS));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
}

/*
 * A held job's signal counts once the job is armed (its out point is
 * published after its signals are listed): still pending behind the
 * gate, it brings the value, and its failure is the export's error.
 */
TEST_F(sf, held_then_armed)
{
	struct drm_d3dq_sync w[2], s[2];
	uint32_t fl = 0;
	struct t_fence g;
	struct t_cs cs;
	uint32_t avail = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE |
			 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
	uint64_t pt = 1;
	int sf;

	self->gate = t_syncobj(self->fd);
	ASSERT_NE(0, self->gate);
	s[0] = t_tl(self->gate, 1);
	t_cs_init(&cs);
	t_cs_delay(&cs, GATE_NS);
	ASSERT_EQ(0, t_submit(self->fd, self->gq, NULL, 0, s, 1, &cs));
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &g));
	w[0] = t_fs(g.handle, 1);
	w[1] = t_tl(self->gate, 1);
	s[0] = t_fs(self->f.handle, 5);
	s[1] = t_tl(self->out, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, w, 2, s, 2, NULL, &fl,
				   NULL));
	ASSERT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 5));

	ASSERT_EQ(0, t_fence_signal(self->fd, g.handle, 1));
	ASSERT_EQ(0, drmSyncobjTimelineWait(self->fd, &self->out, &pt, 1,
					    t_deadline(LONG_MS * T_MS), avail,
					    NULL));
	EXPECT_EQ(0, t_held(self->fd));
	sf = export_sf(self->fd, self->f.handle, 5);
	ASSERT_LE(0, sf);
	EXPECT_FALSE(sf_signals(sf, 0));
	EXPECT_EQ(0, sf_status(sf));

	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_GT(0, sf_status(sf));
	EXPECT_EQ(1, t_value_load(self->f.v));
	close(sf);
}

/* FENCE_EVENT with ARMED for one value: 0 or -errno. */
static int armed_event(int fd, uint32_t handle, uint64_t value, int efd)
{
	struct drm_d3dq_fence_value fv = { .handle = handle, .value = value };
	struct drm_d3dq_fence_event e = {
		.fences = DRM_D3DQ_OBJ_ARRAY(1, &fv),
		.flags = DRM_D3DQ_FENCE_EVENT_ARMED,
		.eventfd = efd,
	};

	return t_ioctl(fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
}

/* Whether eventfd @efd becomes readable within @ms. */
static bool efd_fires(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && t_efd_take(efd);
}

/*
 * uapi 1.11: a registration with ARMED fires once the export would
 * succeed: when a held job's signal that brings the value is armed, not
 * at the call while it is held; and at once for a reached value or a
 * signal on its way. Another file's armed signal does not count, as for
 * the export.
 */
TEST_F(sf, armed_event)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct drm_d3dq_sync w, s;
	struct t_fence g, g2;
	uint32_t fl = 0, q2;
	int fd2, xfd, sf;
	struct t_cs cs;

	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_TRUE(t_param(self->fd, DRM_D3DQ_PARAM_FEATURES) &
		    DRM_D3DQ_FEATURE_FENCE_EVENT_ARMED);
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &g));
	w = t_fs(g.handle, 1);
	s = t_fs(self->f.handle, 5);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, &s, 1, NULL, &fl,
				   NULL));
	ASSERT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	EXPECT_EQ(-ENODATA, export_sf(self->fd, self->f.handle, 5));
	ASSERT_EQ(0, armed_event(self->fd, self->f.handle, 5, efd));
	/* A higher value the held signal does not bring. */
	ASSERT_EQ(0, armed_event(self->fd, self->f.handle, 6, efd2));
	EXPECT_EQ(0, t_efd_take(efd));

	/* Another file holds f and arms a signal of 9: not this file's. */
	fd2 = t_open(0);
	ASSERT_LE(0, fd2);
	xfd = t_fence_export(self->fd, self->f.handle);
	ASSERT_LE(0, xfd);
	ASSERT_EQ(0, t_fence_import(fd2, xfd, &g2));
	close(xfd);
	q2 = t_queue(fd2, 0, 0);
	ASSERT_NE(0, q2);
	s = t_fs(g2.handle, 9);
	t_cs_init(&cs);
	t_cs_delay(&cs, GATE_NS);
	ASSERT_EQ(0, t_submit(fd2, q2, NULL, 0, &s, 1, &cs));
	EXPECT_EQ(0, t_efd_take(efd2));

	/* The held job is armed: the registration at 5 fires, not 6's. */
	ASSERT_EQ(0, t_fence_signal(self->fd, g.handle, 1));
	EXPECT_TRUE(efd_fires(efd, LONG_MS));
	EXPECT_EQ(0, t_efd_take(efd2));
	sf = export_sf(self->fd, self->f.handle, 5);
	EXPECT_LE(0, sf);
	if (sf >= 0)
		close(sf);

	/* At the call: a value reached, and a signal on its way. */
	ASSERT_EQ(0, armed_event(self->fd, self->f.handle, 1, efd));
	EXPECT_EQ(1, t_efd_take(efd));
	gated_signal(_metadata, self, 8);
	if (t_value_load(self->f.v) < 7) {
		ASSERT_EQ(0, armed_event(self->fd, self->f.handle, 7, efd));
		EXPECT_EQ(1, t_efd_take(efd));
	}
	ASSERT_EQ(0, open_gate(self));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
	/* ARMED is for one fence. */
	{
		struct drm_d3dq_fence_value fv[2] = {
			{ .handle = self->f.handle, .value = 5 },
			{ .handle = g.handle, .value = 5 },
		};
		struct drm_d3dq_fence_event e = {
			.fences = DRM_D3DQ_OBJ_ARRAY(2, fv),
			.flags = DRM_D3DQ_FENCE_EVENT_ARMED,
			.eventfd = efd,
		};

		EXPECT_EQ(-EINVAL, t_ioctl(self->fd, DRM_IOCTL_D3DQ_FENCE_EVENT,
					   &e));
	}
	/* The other file's CPU signal of 6 reaches it: 6's fires then. */
	ASSERT_EQ(0, t_fence_signal(fd2, g2.handle, 6));
	EXPECT_EQ(1, t_efd_take(efd2));
	ASSERT_EQ(0, t_queue_destroy(fd2, q2));
	close(fd2);
	close(efd);
	close(efd2);
}

/*
 * On its way: not signalled until the job completes, then signalled
 * without error, after the value was written; a syncobj holding it
 * orders another job of this driver after it (interop round trip).
 */
TEST_F(sf, armed_signal)
{
	struct drm_d3dq_sync w, s;
	uint32_t so = t_syncobj(self->fd);
	int sf;

	ASSERT_NE(0, so);
	gated_signal(_metadata, self, 5);
	sf = export_sf(self->fd, self->f.handle, 4);
	ASSERT_LE(0, sf);
	EXPECT_FALSE(sf_signals(sf, 0));
	EXPECT_EQ(0, sf_status(sf));
	ASSERT_EQ(0, drmSyncobjImportSyncFile(self->fd, so, sf));
	w = t_bin(so);
	s = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit(self->fd, self->q2, &w, 1, &s, 1, NULL));
	EXPECT_EQ(0, t_fence_status(self->fd, self->out2, 1));

	ASSERT_EQ(0, open_gate(self));
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_EQ(1, sf_status(sf));
	EXPECT_EQ(5, t_value_load(self->f.v));
	EXPECT_EQ(0, t_wait(self->fd, self->out2, 1, LONG_MS * T_MS));
	EXPECT_EQ(1, t_fence_status(self->fd, self->out2, 1));
	close(sf);
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
}

/* Reached by other means first: signalled then, the job still pending. */
TEST_F(sf, released_by_a_cpu_signal)
{
	int sf;

	gated_signal(_metadata, self, 9);
	sf = export_sf(self->fd, self->f.handle, 5);
	ASSERT_LE(0, sf);
	EXPECT_FALSE(sf_signals(sf, 0));
	/* A value below does nothing; the first one >= 5 does, for good. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 4));
	EXPECT_FALSE(sf_signals(sf, 0));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 6));
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 0));
	EXPECT_TRUE(sf_signals(sf, 0));
	EXPECT_EQ(1, sf_status(sf));
	EXPECT_EQ(0, t_fence_status(self->fd, self->out, 1));
	close(sf);
	ASSERT_EQ(0, open_gate(self));
	ASSERT_EQ(0, t_wait(self->fd, self->out, 1, LONG_MS * T_MS));
	EXPECT_EQ(9, t_value_load(self->f.v));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
}

/*
 * The job that was to bring the value ends without completing (the job
 * it depends on was cancelled with its queue, so it fails too): the
 * sync_file signals with an error, not as if the value were reached;
 * the value stays.
 */
TEST_F(sf, failed_job_is_an_error)
{
	struct drm_d3dq_queue_get_state st;
	int sf;

	gated_signal(_metadata, self, 5);
	sf = export_sf(self->fd, self->f.handle, 5);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_GT(0, sf_status(sf));
	EXPECT_EQ(1, t_value_load(self->f.v));
	EXPECT_GT(0, t_fence_status(self->fd, self->out, 1));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
	close(sf);
}

/*
 * Independent of the handle: destroying it releases a job's wait on the
 * fence, not the sync_file; the file closed cancels the job: an error.
 */
TEST_F(sf, handle_and_file)
{
	int sf, sf2;

	gated_signal(_metadata, self, 5);
	sf = export_sf(self->fd, self->f.handle, 5);
	sf2 = export_sf(self->fd, self->f.handle, 5);
	ASSERT_LE(0, sf);
	ASSERT_LE(0, sf2);
	t_fence_unmap(&self->f);
	ASSERT_EQ(0, t_fence_destroy(self->fd, self->f.handle));
	EXPECT_FALSE(sf_signals(sf, 0));
	ASSERT_EQ(0, open_gate(self));
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_EQ(1, sf_status(sf));
	close(sf);

	/* Another fence, another export; then the file goes. */
	ASSERT_EQ(0, t_fence_create(self->fd, 0, 0, &self->f));
	gated_signal(_metadata, self, 3);
	sf = export_sf(self->fd, self->f.handle, 3);
	ASSERT_LE(0, sf);
	close(self->fd);
	self->fd = -1;
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_GT(0, sf_status(sf));
	close(sf);
	close(sf2);
}

/*
 * A removal sets the fence to ~0 for the file, which exports no more
 * (uapi 1.9: -ENODEV); a pending export is left to its job, which the
 * removal stopped: its error, never the value.
 */
TEST_F(sf, removal)
{
	struct drm_d3dq_remove rm = { 0 };
	int sf;

	gated_signal(_metadata, self, 5);
	sf = export_sf(self->fd, self->f.handle, 5);
	ASSERT_LE(0, sf);
	ASSERT_EQ(0, t_ioctl(self->fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	EXPECT_TRUE(sf_signals(sf, LONG_MS));
	EXPECT_GT(0, sf_status(sf));
	close(sf);
	EXPECT_EQ(UINT64_MAX, t_value_load(self->f.v));
	EXPECT_EQ(-ENODEV, export_sf(self->fd, self->f.handle, UINT64_MAX));
	EXPECT_EQ(-ENODEV, export_sf(self->fd, self->f.handle, 1));
}

TEST_F(sf, bad_input)
{
	struct drm_d3dq_fence_sync_file a;

	a = (struct drm_d3dq_fence_sync_file){ .handle = self->f.handle,
					       .flags = 1 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd,
				   DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a));
	a = (struct drm_d3dq_fence_sync_file){ .handle = self->f.handle,
					       .fd = 3 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd,
				   DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a));
	a = (struct drm_d3dq_fence_sync_file){ .handle = self->f.handle,
					       .pad = 1 };
	EXPECT_EQ(-EINVAL, t_ioctl(self->fd,
				   DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE, &a));
	EXPECT_EQ(-ENOENT, export_sf(self->fd, 0, 0));
	EXPECT_EQ(-ENOENT, export_sf(self->fd, 4242, 0));
}

/*
 * Pending exports count against max_user_fence_events with event
 * registrations, until their fence signals; reached ones never do.
 */
TEST_F(sf, user_bound)
{
	int sf[3], i;

	close(self->fd);
	t_value_unmap_all();
	ASSERT_EQ(0, t_reload(ARGS " max_user_fence_events=2"));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->gq = t_queue(self->fd, 0, 0);
	self->q = t_queue(self->fd, 0, 0);
	self->out = t_syncobj(self->fd);
	ASSERT_EQ(0, t_fence_new(self->fd, 1, 0, &self->f));

	gated_signal(_metadata, self, 5);
	for (i = 0; i < 2; i++) {
		sf[i] = export_sf(self->fd, self->f.handle, 5);
		ASSERT_LE(0, sf[i]);
	}
	EXPECT_EQ(-EDQUOT, export_sf(self->fd, self->f.handle, 5));
	sf[2] = export_sf(self->fd, self->f.handle, 1);
	EXPECT_LE(0, sf[2]);
	close(sf[2]);
	/* Signalled: they no longer count, although still open. */
	ASSERT_EQ(0, t_fence_signal(self->fd, self->f.handle, 5));
	EXPECT_TRUE(t_fence_counts_become(1, 0));
	sf[2] = export_sf(self->fd, self->f.handle, 6);
	EXPECT_EQ(-ENODATA, sf[2]);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, sf_status(sf[i]));
		close(sf[i]);
	}
	ASSERT_EQ(0, open_gate(self));
	ASSERT_EQ(0, t_queue_destroy(self->fd, self->gq));
}

TEST_HARNESS_MAIN
