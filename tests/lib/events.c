// SPDX-License-Identifier: GPL-2.0
/*
 * R10, R11, R12: events (eventfds) fire once when the value reaches their
 * target, at once if it already has; duplicates fire once per crossing; a
 * rewind fires nothing; registration never resets an event; no eventfd
 * blocks; many registrations are cheap. Queue signals fire events too.
 * R19: only an eventfd is an event; anything else is -EINVAL, untouched.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

FIXTURE(e) {
	struct d3dq_device *dev;
	struct d3dq_fence *f;
	int efd;
};

FIXTURE_SETUP(e)
{
	self->dev = util_open();
	if (!self->dev)
		SKIP(return, "no d3dq device");
	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &self->f));
	self->efd = util_eventfd();
	ASSERT_GE(self->efd, 0);
}

FIXTURE_TEARDOWN(e)
{
	close(self->efd);
	d3dq_fence_destroy(self->f);
	d3dq_device_close(self->dev);
}

TEST_F(e, already_reached_fires_now)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 10));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 10, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 0, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
}

TEST_F(e, fires_once_and_is_consumed)
{
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 5, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 4));
	EXPECT_EQ(0, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	EXPECT_EQ(1, util_event_take(self->efd));
	/* Consumed: further crossings do not fire it again. */
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 6));
	EXPECT_EQ(0, util_event_take(self->efd));
}

TEST_F(e, duplicates_fire_once_per_crossing)
{
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 5, self->efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 5, self->efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 3, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 9));
	EXPECT_EQ(1, util_event_take(self->efd));
}

TEST_F(e, rewind_fires_nothing)
{
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 100));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 50, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 200, self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 0));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 150));
	EXPECT_EQ(0, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 200));
	EXPECT_EQ(1, util_event_take(self->efd));
}

TEST_F(e, registering_never_resets)
{
	uint64_t one = 1;

	ASSERT_EQ(8, write(self->efd, &one, 8));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 5, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(8, write(self->efd, &one, 8));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	EXPECT_EQ(2, util_event_take(self->efd));
}

/*
 * 20,000 registrations with falling targets: 120 s for the debug kernel,
 * where each is an ioctl under KASAN and lockdep (and where a sorted
 * list's insertion once made them quadratic).
 */
TEST_F_TIMEOUT(e, many_registrations, 120)
{
	enum { N = 20000 };
	int fds[4];
	uint64_t i, total = 0;

	for (i = 0; i < 4; i++) {
		fds[i] = util_eventfd();
		ASSERT_GE(fds[i], 0);
	}
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f,
				N - i, fds[i % 4]));
	/* Each signal crosses one target per eventfd at most... */
	for (i = 1; i <= 8; i++)
		ASSERT_EQ(0, d3dq_fence_signal(self->f, i));
	for (i = 0; i < 4; i++)
		total += util_event_take(fds[i]);
	/* targets 1..8 spread over 4 eventfds, one crossing each: 8 writes */
	EXPECT_EQ(8, total);
	/* ...and one big jump fires every eventfd once. */
	ASSERT_EQ(0, d3dq_fence_signal(self->f, N));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(1, util_event_take(fds[i]));
		close(fds[i]);
	}
}

/*
 * The library keeps its own reference to the eventfd: an application
 * that closes its descriptor while a registration is outstanding (after a
 * timed-out wait, say) never gets 8 bytes written into whatever file
 * reuses the number. The event itself still fires.
 */
TEST_F(e, closed_descriptor_reused)
{
	struct d3dq_fence *fences[2] = { self->f, NULL };
	uint64_t values[2] = { 5, 5 };
	int keep, reused, old = self->efd;

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &fences[1]));
	keep = dup(self->efd);
	ASSERT_GE(keep, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 5, self->efd));
	ASSERT_EQ(0, d3dq_device_set_event_on_multiple_fence_completion(
			self->dev, fences, values, 2,
			D3DQ_MULTIPLE_FENCE_WAIT_ALL, self->efd));
	close(self->efd);
	reused = util_eventfd();
	ASSERT_GE(reused, 0);
	self->efd = reused;
	if (reused != old)
		SKIP(return, "the number was not reused");
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	ASSERT_EQ(0, d3dq_fence_signal(fences[1], 5));
	EXPECT_EQ(0, util_event_take(reused));
	EXPECT_EQ(2, util_event_take(keep));
	close(keep);
	d3dq_fence_destroy(fences[1]);
}

/* A descriptor that is not open is refused, before anything happens. */
TEST_F(e, bad_descriptor)
{
	int fd = util_eventfd();

	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->f, 5, fd));
}

/*
 * R19: only an eventfd is an event. A pipe, a socket or /dev/null is
 * refused with -EINVAL, by both calls, for a value reached and one not
 * reached, and nothing is written to it, now or when the value comes.
 */
TEST_F(e, not_an_eventfd)
{
	struct d3dq_fence *fences[2] = { self->f, NULL };
	uint64_t values[2] = { 1, 1 };
	int p[2], s[2], nul, i;
	char buf[16];

	ASSERT_EQ(0, d3dq_fence_create(self->dev, 0, 0, &fences[1]));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
				SOCK_NONBLOCK, 0, s));
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, nul);
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	ASSERT_EQ(0, d3dq_fence_signal(fences[1], 5));
	for (i = 0; i < 3; i++) {
		int fd = i == 0 ? p[1] : i == 1 ? s[0] : nul;

		values[0] = values[1] = 1;
		EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(
				self->f, 1, fd));
		EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(
				self->f, 9, fd));
		EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
				self->dev, fences, values, 2,
				D3DQ_MULTIPLE_FENCE_WAIT_ALL, fd));
		values[0] = values[1] = 9;
		EXPECT_EQ(-EINVAL, d3dq_device_set_event_on_multiple_fence_completion(
				self->dev, fences, values, 2,
				D3DQ_MULTIPLE_FENCE_WAIT_ANY, fd));
	}
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 9));
	ASSERT_EQ(0, d3dq_fence_signal(fences[1], 9));
	EXPECT_GT(0, read(p[0], buf, sizeof(buf)));
	EXPECT_GT(0, read(s[1], buf, sizeof(buf)));
	/* The eventfd of the fixture still works. */
	EXPECT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 9, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	close(nul);
	close(s[0]);
	close(s[1]);
	close(p[0]);
	close(p[1]);
	d3dq_fence_destroy(fences[1]);
}

/*
 * Without /proc (a mount namespace where it is unmounted), the library
 * tells eventfds by their anonymous inode: an eventfd still works, a pipe
 * and /dev/null are still refused and untouched.
 */
TEST_F(e, not_an_eventfd_without_proc)
{
	char buf[16];
	int p[2], nul;

	/*
	 * Only /proc's propagation is changed: in a chroot (make
	 * check-packages) / is no mount point, and making it private fails.
	 */
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/proc", NULL, MS_REC | MS_PRIVATE, NULL))
		SKIP(return, "no mount namespace (%s)", strerror(errno));
	if (umount2("/proc", MNT_DETACH) && errno != EINVAL)
		SKIP(return, "cannot unmount /proc (%s)", strerror(errno));
	ASSERT_NE(0, access("/proc/self/fd", F_OK));

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, nul);
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 5));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->f, 1, p[1]));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->f, 9, p[1]));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->f, 1, nul));
	EXPECT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 1, self->efd));
	EXPECT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 9, self->efd));
	EXPECT_EQ(1, util_event_take(self->efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->f, 9));
	EXPECT_EQ(1, util_event_take(self->efd));
	EXPECT_GT(0, read(p[0], buf, sizeof(buf)));
	close(nul);
	close(p[0]);
	close(p[1]);
}

/* Signals f = value once thread @waiter sleeps in the driver. */
struct signal_later {
	struct d3dq_fence *f;
	uint64_t value;
	pid_t waiter;
	bool asleep;
};

static void *signal_thread(void *arg)
{
	struct signal_later *s = arg;

	s->asleep = task_asleep_in_driver(s->waiter);
	d3dq_fence_signal(s->f, s->value);
	return NULL;
}

TEST_F(e, no_event_blocks)
{
	struct signal_later s = { self->f, 7, task_self(), false };
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, signal_thread, &s));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 7, -1));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->f));
	pthread_join(t, NULL);
	/* The signal came while the call slept. */
	EXPECT_TRUE(s.asleep);
	/* Already reached: returns at once. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 3, -1));
}

TEST_F(e, queue_signal_fires)
{
	struct d3dq_queue *q = util_queue(self->dev);

	ASSERT_NE(NULL, q);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 3, self->efd));
	ASSERT_EQ(0, util_exec_delay(self->dev, q, 100 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(q, self->f, 3));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->f, 3, -1));
	EXPECT_EQ(1, util_event_take(self->efd));
	d3dq_queue_destroy(q);
}

TEST_HARNESS_MAIN
