// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: what one user (the effective uid that opened the files) may hold
 * on a device, whatever the number of its files and processes, and what
 * all users together may: queues (max_user_queues, -EDQUOT;
 * max_device_queues, -ENOSPC) and unfreed jobs (max_user_jobs, SUBMIT
 * sleeps). The module is reloaded with small bounds.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define USER_QUEUES	24
#define DEVICE_QUEUES	40
#define USER_JOBS	16
#define ARGS	"max_user_queues=24 max_device_queues=40 max_user_jobs=16 " \
		"job_timeout_ms=600000 max_delay_ns=600000000000"

/* Processes per user, files per process. */
#define PROCS		4
#define FILES		3

FIXTURE(users) {
	glob_t nodes;
	mode_t *modes;
};

FIXTURE_SETUP(users)
{
	struct stat st;
	size_t i;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
	/* Other users must be able to open the render nodes. */
	ASSERT_EQ(0, glob("/dev/dri/renderD*", 0, NULL, &self->nodes));
	self->modes = calloc(self->nodes.gl_pathc, sizeof(*self->modes));
	ASSERT_NE(NULL, self->modes);
	for (i = 0; i < self->nodes.gl_pathc; i++) {
		ASSERT_EQ(0, stat(self->nodes.gl_pathv[i], &st));
		self->modes[i] = st.st_mode & 07777;
		ASSERT_EQ(0, chmod(self->nodes.gl_pathv[i], 0666));
	}
}

FIXTURE_TEARDOWN(users)
{
	size_t i;

	if (!self->modes)
		return;
	for (i = 0; i < self->nodes.gl_pathc; i++)
		chmod(self->nodes.gl_pathv[i], self->modes[i]);
	free(self->modes);
	globfree(&self->nodes);
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

struct report {
	int queues;	/* created */
	int err;	/* errno of the refusal */
};

/*
 * Open the d3dq render node in /dev/dri (@dir, opened before the
 * process dropped root: the VM's / is 0700) as the calling user.
 */
static int open_node(int dir)
{
	char name[32];
	drmVersionPtr v;
	bool match;
	int i, fd;

	for (i = 128; i < 192; i++) {
		snprintf(name, sizeof(name), "renderD%d", i);
		fd = openat(dir, name, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		match = v && !strcmp(v->name, "d3dq");
		drmFreeVersion(v);
		if (match)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * A process of user @uid: open FILES files, create queues on them in
 * turn until refused, report, then hold them until @go is readable.
 */
static void creator(uid_t uid, int out, int go)
{
	struct report r = { 0, 0 };
	struct drm_d3dq_queue_create c;
	int fd[FILES], i, dir;
	char b;

	dir = open("/dev/dri", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		_exit(9);
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(10);
	for (i = 0; i < FILES; i++) {
		fd[i] = open_node(dir);
		if (fd[i] < 0)
			_exit(11);
	}
	for (i = 0; !r.err; i = (i + 1) % FILES) {
		memset(&c, 0, sizeof(c));
		if (ioctl(fd[i], DRM_IOCTL_D3DQ_QUEUE_CREATE, &c))
			r.err = errno;
		else
			r.queues++;
	}
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(12);
	if (read(go, &b, 1) < 0)
		_exit(13);
	_exit(0);
}

/*
 * Fork @n creators of user @uid; sum what they created into @total and
 * check every refusal was @want_err. They hold their queues until @go
 * is closed.
 */
static void creators(struct __test_metadata *_metadata, uid_t uid, int n,
		     const int go[2], int *total, int want_err, pid_t *pids)
{
	struct report r;
	int p[2], i;

	ASSERT_EQ(0, pipe(p));
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(p[0]);
			close(go[1]);
			creator(uid, p[1], go[0]);
		}
	}
	close(p[1]);
	*total = 0;
	for (i = 0; i < n; i++) {
		if (read(p[0], &r, sizeof(r)) != sizeof(r)) {
			int status = 0;

			waitpid(pids[i], &status, 0);
			ASSERT_TRUE(0) TH_LOG("creator %d of uid %u: exit %d",
					      i, uid, WEXITSTATUS(status));
		}
		*total += r.queues;
		EXPECT_EQ(want_err, r.err)
			TH_LOG("uid %u: refused with %s", uid, strerror(r.err));
	}
	close(p[0]);
}

/*
 * PROCS processes of one user, FILES files each: together they get
 * max_user_queues queues, then -EDQUOT. Another user, while they hold
 * them, gets what is left of max_device_queues, then -ENOSPC. Never
 * -EAGAIN or -EINTR, which libdrm's drmIoctl() would retry for ever.
 */
TEST_F_TIMEOUT(users, queues_bounded_per_user_and_device, 240)
{
	pid_t a[PROCS], b[2];
	int go[2], total, status, i;
	uint32_t q;
	int fd;

	ASSERT_EQ(0, pipe(go));
	creators(_metadata, 1000, PROCS, go, &total, EDQUOT, a);
	EXPECT_EQ(USER_QUEUES, total);
	creators(_metadata, 1001, 2, go, &total, ENOSPC, b);
	EXPECT_EQ(DEVICE_QUEUES - USER_QUEUES, total);

	/* Root is a user too, and the device is full. */
	fd = t_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, t_queue(fd, 0, 0));
	EXPECT_EQ(ENOSPC, errno);

	/* Closing the files frees the queues: room again. */
	close(go[1]);
	close(go[0]);
	for (i = 0; i < PROCS; i++) {
		ASSERT_EQ(a[i], waitpid(a[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(b[i], waitpid(b[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	ASSERT_TRUE(t_wait_idle(1, 20000, &(struct t_objects){ 0 }));
	q = t_queue(fd, 0, 0);
	EXPECT_NE(0, q);
	close(fd);
}

/*
 * Queues destroyed with their jobs all finished are freed without
 * outside help: QUEUE_CREATE at the user's bound waits for them rather
 * than refusing, as at the per-file bound, so that a program that
 * destroys its queues or closes its device and makes as many again is
 * not refused for the teardown's lag. Rounds alternate: destroy every
 * queue (the file stays open for a round), or close the file.
 */
TEST_F_TIMEOUT(users, freed_queues_make_room, 240)
{
	uint32_t q[USER_QUEUES];
	int round, i, fd, old = -1;

	for (round = 0; round < 32; round++) {
		fd = t_open(0);
		ASSERT_LE(0, fd);
		for (i = 0; i < USER_QUEUES; i++) {
			q[i] = t_queue(fd, 0, 0);
			ASSERT_NE(0, q[i])
				TH_LOG("round %d, queue %d: %s", round, i,
				       strerror(errno));
		}
		/* One more is over the bound, and nothing is being freed. */
		EXPECT_EQ(0, t_queue(fd, 0, 0));
		EXPECT_EQ(EDQUOT, errno);
		if (old >= 0)
			close(old);
		old = -1;
		if (round % 2) {
			close(fd);
			continue;
		}
		for (i = 0; i < USER_QUEUES; i++)
			ASSERT_EQ(0, t_queue_destroy(fd, q[i]));
		old = fd;
	}
	if (old >= 0)
		close(old);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A DELAY that holds the queue, then @n small jobs queued behind it. */
static int held_jobs(int fd, uint32_t q, uint32_t bo, int n)
{
	struct t_cs cs;
	int i, ret;

	t_cs_init(&cs);
	t_cs_delay(&cs, 600 * T_SEC);
	ret = t_submit(fd, q, NULL, 0, NULL, 0, &cs);
	for (i = 0; !ret && i < n; i++) {
		t_cs_init(&cs);
		t_cs_write64(&cs, bo, 0, i);
		ret = t_submit(fd, q, NULL, 0, NULL, 0, &cs);
	}
	return ret;
}

/*
 * Two files of one user: together they hold max_user_jobs unfreed jobs;
 * the next submit sleeps (a signal without SA_RESTART ends it with
 * EINTR, nothing queued) until jobs of the user are freed.
 */
TEST_F_TIMEOUT(users, jobs_bounded_per_user, 120)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct drm_d3dq_submit s = { 0 };
	struct drm_d3dq_queue_get_state st;
	int fd1 = t_open(0), fd2 = t_open(0);
	uint32_t q1, q2, bo2;
	int ret;

	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	q1 = t_queue(fd1, 0, 0);
	q2 = t_queue(fd2, 0, 0);
	bo2 = t_bo(fd2, 4096, NULL);
	ASSERT_NE(0, q1);
	ASSERT_NE(0, q2);
	ASSERT_NE(0, bo2);
	ASSERT_EQ(0, held_jobs(fd1, q1, t_bo(fd1, 4096, NULL), 9));
	ASSERT_EQ(0, held_jobs(fd2, q2, bo2, USER_JOBS - 10 - 1));

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	s.queue_id = q2;
	alarm(1);
	ret = ioctl(fd2, DRM_IOCTL_D3DQ_SUBMIT, &s);
	alarm(0);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, errno);
	ASSERT_EQ(0, t_queue_state(fd2, q2, &st));
	EXPECT_EQ((uint64_t)(USER_JOBS - 10), st.pending_jobs);

	/* The first file's jobs go: the user has room again. */
	close(fd1);
	alarm(30);
	ret = ioctl(fd2, DRM_IOCTL_D3DQ_SUBMIT, &s);
	alarm(0);
	EXPECT_EQ(0, ret);
	close(fd2);
}

TEST_HARNESS_MAIN
