// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences across processes (issue 25, milestone 4). A peer process
 * is killed, closes its file or is removed (%DRM_D3DQ_REMOVE) while this
 * process holds fences they share, waits on them from the CPU, has
 * eventfds registered on them and queues held on them:
 *
 * - the peer created the fence, had a signal of it pending on its queue
 *   (armed, behind a long DELAY), a held job that would signal it, and
 *   registrations: nothing of that takes effect, the fence lives on in
 *   this process, whose queue is not lost and whose waits are released by
 *   its own signal, not before;
 * - the peer's queue and registrations waited on this process's fence:
 *   they go with the peer, this process's own waits and registrations
 *   stay, and its signals reach them (no use of the peer's freed waits);
 * - a removal (uapi 1.9) is the peer's affair alone (R15, R20): the
 *   peer's own view reads ~0 (a mapping it made before the removal and
 *   one made after), its FENCE_SIGNAL fails with -ENODEV, and its waits
 *   and registrations are released; here the fence keeps its real value,
 *   nothing the peer had pending takes effect, this process's waits stay
 *   until its own signal, and it may still signal and rewind.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

/* No job timeout here: the peer's job is pending until the peer goes. */
#define ARGS		"job_timeout_ms=600000 max_delay_ns=600000000000"
#define LONG_DELAY	(300 * T_SEC)
#define FOREVER		INT64_MAX

enum how { KILL, CLOSE, REMOVE };

FIXTURE(pr) {
	int fd, sock, efd;
	uint32_t q, q2, out, out2, bo;
	uint64_t *map;
	pid_t pid;
};

FIXTURE_VARIANT(pr) {
	enum how how;
};

FIXTURE_VARIANT_ADD(pr, killed) {
	.how = KILL,
};

FIXTURE_VARIANT_ADD(pr, closed) {
	.how = CLOSE,
};

FIXTURE_VARIANT_ADD(pr, removed) {
	.how = REMOVE,
};

FIXTURE_SETUP(pr)
{
	self->fd = -1;
	self->sock = -1;
	self->efd = -1;
	self->pid = 0;
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
	self->fd = t_open(0);
	ASSERT_LE(0, self->fd);
	self->q = t_queue(self->fd, 0, 0);
	self->q2 = t_queue(self->fd, 0, 0);
	self->out = t_syncobj(self->fd);
	self->out2 = t_syncobj(self->fd);
	self->bo = t_bo(self->fd, 4096, (void **)&self->map);
	ASSERT_NE(0, self->q);
	ASSERT_NE(0, self->q2);
	ASSERT_NE(0, self->out);
	ASSERT_NE(0, self->out2);
	ASSERT_NE(0, self->bo);
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
}

FIXTURE_TEARDOWN(pr)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	t_value_unmap_all();
	if (self->map)
		munmap(self->map, 4096);
	if (self->sock >= 0)
		close(self->sock);
	if (self->efd >= 0)
		close(self->efd);
	if (self->fd >= 0)
		close(self->fd);
	if (!t_can_reload())
		return;
	T_EXPECT_IDLE(10000);
	EXPECT_EQ(0, t_reload(NULL));
}

/* The peer's FENCE_WAIT, in a thread of its own (KILL only). */
struct peer_waiter {
	int fd;
	uint32_t handle;
};

static void *peer_wait_main(void *arg)
{
	struct peer_waiter *w = arg;

	t_fence_wait1(w->fd, w->handle, 1000, FOREVER);
	return NULL;
}

/*
 * The peer: after its setup it reports 'r' (with the fence's fd if it
 * made the fence), then does what @how says when told ('g'), reports
 * 'd', and exits when the socket closes (KILL: it is killed first).
 */
static void peer_finish(int sock, int fd, enum how how, struct t_fence *f)
{
	struct drm_d3dq_remove rm = { 0 };
	struct t_fence again = *f;
	char c;

	/* A mapping made before the removal, and (below) one after. */
	if (how == REMOVE && t_fence_map(fd, f))
		_exit(23);
	if (read(sock, &c, 1) != 1 || c != 'g')
		_exit(20);
	if (how == CLOSE)
		close(fd);
	if (how == REMOVE && t_ioctl(fd, DRM_IOCTL_D3DQ_REMOVE, &rm))
		_exit(21);
	if (how == REMOVE) {
		/* The removed file's view: ~0, and no signal through it. */
		if (t_value_load(f->v) != UINT64_MAX)
			_exit(24);
		if (t_fence_map(fd, &again) ||
		    t_value_load(again.v) != UINT64_MAX)
			_exit(25);
		if (t_fence_signal(fd, f->handle, 3) != -ENODEV)
			_exit(26);
	}
	if (write(sock, "d", 1) != 1)
		_exit(22);
	while (read(sock, &c, 1) == 1)
		;
	_exit(0);
}

/*
 * The peer makes shared fence F = 1 and sends it; its queue has a signal
 * F = 5 pending behind a long DELAY (armed), its second queue a held job
 * waiting for F >= 10 that would set F = 20, and it registered an
 * eventfd of its own for F >= 5.
 */
static void producer(int sock, enum how how)
{
	struct drm_d3dq_sync w, s;
	uint32_t q, q2, fl = 0;
	struct t_fence f;
	struct t_cs cs;
	int fd, xfd, efd;

	fd = t_open(0);
	q = t_queue(fd, 0, 0);
	q2 = t_queue(fd, 0, 0);
	efd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0 || !q || !q2 || efd < 0)
		_exit(10);
	if (t_fence_create(fd, 1, DRM_D3DQ_FENCE_SHARED, &f))
		_exit(11);
	xfd = t_fence_export(fd, f.handle);
	if (xfd < 0)
		_exit(12);
	t_cs_init(&cs);
	t_cs_delay(&cs, LONG_DELAY);
	s = t_fs(f.handle, 5);
	if (t_submit(fd, q, NULL, 0, &s, 1, &cs))
		_exit(13);
	w = t_fs(f.handle, 10);
	s = t_fs(f.handle, 20);
	if (t_submit_hold(fd, q2, &w, 1, &s, 1, NULL, &fl, NULL) ||
	    !(fl & DRM_D3DQ_SUBMIT_HELD))
		_exit(14);
	if (t_fence_event1(fd, f.handle, 5, efd))
		_exit(15);
	if (t_send_fd(sock, xfd))
		_exit(16);
	close(xfd);
	peer_finish(sock, fd, how, &f);
}

/*
 * The peer imports this process's fence, holds a job of its queue on
 * F >= 5 (it would set a fence of its own), registers an eventfd for
 * F >= 5 and, when it is to be killed, sleeps in FENCE_WAIT for it.
 */
static void consumer(int sock, enum how how)
{
	struct peer_waiter pw;
	struct drm_d3dq_sync w, s;
	struct t_fence f, own;
	uint32_t q, fl = 0;
	int fd, xfd, efd;
	pthread_t th;

	fd = t_open(0);
	q = t_queue(fd, 0, 0);
	efd = eventfd(0, EFD_CLOEXEC);
	xfd = t_recv_fd(sock);
	if (fd < 0 || !q || efd < 0 || xfd < 0)
		_exit(10);
	if (t_fence_import(fd, xfd, &f) || t_fence_create(fd, 0, 0, &own))
		_exit(11);
	close(xfd);
	w = t_fs(f.handle, 5);
	s = t_fs(own.handle, 1);
	if (t_submit_hold(fd, q, &w, 1, &s, 1, NULL, &fl, NULL) ||
	    !(fl & DRM_D3DQ_SUBMIT_HELD))
		_exit(12);
	if (t_fence_event1(fd, f.handle, 5, efd))
		_exit(13);
	if (how == KILL) {
		pw = (struct peer_waiter){ .fd = fd, .handle = f.handle };
		if (pthread_create(&th, NULL, peer_wait_main, &pw))
			_exit(14);
	}
	if (write(sock, "r", 1) != 1)
		_exit(15);
	peer_finish(sock, fd, how, &f);
}

/* Fork the peer running @fn; self->sock talks to it. */
static void start_peer(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pr) *self, void (*fn)(int, enum how),
		       enum how how)
{
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		close(sv[0]);
		close(self->fd);
		fn(sv[1], how);
		_exit(30);
	}
	close(sv[1]);
	self->sock = sv[0];
}

/* Do what the variant says to the peer; then only this file is left. */
static void end_peer(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pr) *self, enum how how)
{
	struct t_objects o;
	int status, i;
	char c;

	if (how == KILL) {
		ASSERT_EQ(0, kill(self->pid, SIGKILL));
		ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
		self->pid = 0;
		EXPECT_TRUE(WIFSIGNALED(status));
	} else {
		ASSERT_EQ(1, write(self->sock, "g", 1));
		ASSERT_EQ(1, read(self->sock, &c, 1));
		ASSERT_EQ('d', c);
	}
	/* A removed peer keeps its file open. */
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, t_objects(&o));
		if (o.files == (how == REMOVE ? 2 : 1))
			break;
		usleep(10000);
	}
	EXPECT_EQ(how == REMOVE ? 2 : 1, o.files);
}

TEST_F(pr, peer_made_the_fence)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w, s;
	uint32_t fl = 0;
	struct t_fence f;
	struct t_cs cs;
	int xfd;

	start_peer(_metadata, self, producer, variant->how);
	xfd = t_recv_fd(self->sock);
	ASSERT_LE(0, xfd);
	ASSERT_EQ(0, t_fence_import(self->fd, xfd, &f));
	ASSERT_EQ(0, t_fence_map(self->fd, &f));
	close(xfd);
	EXPECT_EQ(1, t_value_load(f.v));

	/* A queue held on F >= 5: the peer's pending 5 is not this file's. */
	w = t_fs(f.handle, 5);
	s = t_tl(self->out, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 7);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, &s, 1, &cs, &fl,
				   NULL));
	EXPECT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	/* One on F >= 20, which only the peer's held job would bring. */
	w = t_fs(f.handle, 20);
	s = t_tl(self->out2, 1);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q2, &w, 1, &s, 1, NULL,
				   &fl, NULL));
	EXPECT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, 5, self->efd));
	EXPECT_EQ(2, t_held(self->fd));

	end_peer(_metadata, self, variant->how);

	ASSERT_EQ(0, t_queue_state(self->fd, self->q, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
	/*
	 * The fence lives on, with this process's registration only (the
	 * peer's are freed by a work item); nothing the peer had pending
	 * took effect. A removed peer's file still holds a handle to it.
	 */
	EXPECT_TRUE(t_fence_counts_become(1, 1));
	EXPECT_EQ(1, t_value_load(f.v));
	EXPECT_EQ(2, t_held(self->fd));
	EXPECT_EQ(0, t_submitted(self->fd, self->out));
	EXPECT_EQ(0, t_efd_take(self->efd));
	EXPECT_EQ(-ETIME, t_fence_wait1(self->fd, f.handle, 5, 0));
	EXPECT_EQ(0, self->map[0]);

	/* This process's signal releases its queue, once. */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	EXPECT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	EXPECT_EQ(7, self->map[0]);
	EXPECT_EQ(1, t_efd_take(self->efd));
	EXPECT_EQ(5, t_value_load(f.v));
	EXPECT_EQ(1, t_held(self->fd));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 20));
	EXPECT_EQ(0, t_wait(self->fd, self->out2, 1, 10 * T_SEC));
	EXPECT_TRUE(t_jobs_gone(variant->how == REMOVE ? 2 : 1));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q2, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

TEST_F(pr, peer_waited_on_this_fence)
{
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync w, s;
	struct t_objects o;
	uint32_t fl = 0;
	struct t_fence f;
	struct t_cs cs;
	int xfd;
	char c;

	ASSERT_EQ(0, t_fence_new(self->fd, 1, DRM_D3DQ_FENCE_SHARED, &f));
	xfd = t_fence_export(self->fd, f.handle);
	ASSERT_LE(0, xfd);
	start_peer(_metadata, self, consumer, variant->how);
	ASSERT_EQ(0, t_send_fd(self->sock, xfd));
	close(xfd);
	ASSERT_EQ(1, read(self->sock, &c, 1));
	ASSERT_EQ('r', c);

	w = t_fs(f.handle, 5);
	s = t_tl(self->out, 1);
	t_cs_init(&cs);
	t_cs_write64(&cs, self->bo, 0, 7);
	ASSERT_EQ(0, t_submit_hold(self->fd, self->q, &w, 1, &s, 1, &cs, &fl,
				   NULL));
	EXPECT_TRUE(fl & DRM_D3DQ_SUBMIT_HELD);
	ASSERT_EQ(0, t_fence_event1(self->fd, f.handle, 5, self->efd));
	/* Both processes' registrations are pending. */
	ASSERT_EQ(0, t_objects(&o));
	EXPECT_EQ(2, o.fence_events);

	end_peer(_metadata, self, variant->how);

	/*
	 * The peer's waits went with it; this process's stay. A removed
	 * peer keeps its own fence.
	 */
	EXPECT_TRUE(t_fence_counts_become(variant->how == REMOVE ? 2 : 1, 1));
	EXPECT_EQ(1, t_value_load(f.v));
	EXPECT_EQ(1, t_held(self->fd));
	EXPECT_EQ(0, t_efd_take(self->efd));

	/* Signals reach this process's waits only, each once. */
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 5));
	EXPECT_EQ(0, t_wait(self->fd, self->out, 1, 10 * T_SEC));
	EXPECT_EQ(7, self->map[0]);
	EXPECT_EQ(1, t_efd_take(self->efd));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 0));
	ASSERT_EQ(0, t_fence_signal(self->fd, f.handle, 9));
	EXPECT_EQ(0, t_efd_take(self->efd));
	EXPECT_TRUE(t_jobs_gone(variant->how == REMOVE ? 2 : 1));
	ASSERT_EQ(0, t_queue_state(self->fd, self->q, &st));
	EXPECT_EQ(DRM_D3DQ_QUEUE_STATE_OK, st.state);
}

TEST_HARNESS_MAIN
