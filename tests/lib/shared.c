// SPDX-License-Identifier: GPL-2.0
/*
 * Shared fences (R20: a shared fence is a fence): export/import, a queue
 * wait satisfied by another process (wait before signal across
 * processes, by a queue or by the CPU), events on shared fences, rewinds
 * by CPU and queue signals seen by every process, and a read of the value
 * that makes no system call (library.rst, "Shared fences").
 *
 * Copyright (C) 2026 The d3dq authors
 */
#include <errno.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/task.h"
#include "util/util.h"

/* Read one byte from @fd: true if it came. */
static bool sync_read(int fd)
{
	char c;

	return read(fd, &c, 1) == 1;
}

static bool sync_write(int fd)
{
	return write(fd, "x", 1) == 1;
}

FIXTURE(sh) {
	struct util_env e;
};

UTIL_ENV_FIXTURE(sh, 4096, 2, D3DQ_FENCE_FLAG_SHARED)

TEST_F(sh, values_and_rewinds)
{
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 1ull << 40));
	EXPECT_EQ(1ull << 40, d3dq_fence_get_completed_value(self->e.f));
	/* Same value again: allowed, nothing changes. */
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 1ull << 40));
	/* R2, R20: a shared fence rewinds like any other, by CPU... */
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, UINT64_MAX));
	EXPECT_EQ(UINT64_MAX, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 1ull << 40));
	/* ...and by queue signals (R3). */
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, (1ull << 40) + 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, (1ull << 40) + 1, 20000 * MS));
}

/* A queue of this process waits; a queue of the same process signals. */
TEST_F(sh, wait_before_signal_same_process)
{
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	/* b is held by the kernel: nothing of it ran. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, util_event_take(efd));

	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 200 * MS));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 10, 20000 * MS));
	EXPECT_EQ(1, util_event_wait(efd, 20000));
	close(efd);
}

/*
 * The parent's queue waits for value 7 before the child has even
 * imported the fence; the child signals it from its own device.
 */
TEST_F(sh, wait_before_signal_other_process)
{
	int fd, status, go[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 7));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_queue *q;
		struct d3dq_fence *f;
		int ok;

		/* The parent's queue waits in the kernel before the import. */
		close(go[1]);
		if (!sync_read(go[0]) || !dev || d3dq_fence_import(dev, fd, &f))
			_exit(2);
		q = util_queue(dev);
		if (!q)
			_exit(3);
		ok = d3dq_fence_get_completed_value(f) == 2 &&
		     !util_exec_delay(dev, q, 100 * MS) &&
		     !d3dq_queue_signal(q, f, 7) &&
		     !d3dq_fence_wait(f, 7, 20000 * MS);
		d3dq_queue_destroy(q);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(ok ? 0 : 4);
	}
	close(fd);
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_TRUE(sync_write(go[1]));
	close(go[0]);
	close(go[1]);
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

struct blocked_wait {
	struct d3dq_fence *f;
	uint64_t value;
	_Atomic pid_t tid;
	int ret;
};

static void *blocked_wait_main(void *arg)
{
	struct blocked_wait *b = arg;

	atomic_store(&b->tid, task_self());
	b->ret = d3dq_fence_wait(b->f, b->value, 20000 * MS);
	return NULL;
}

/*
 * The child signals from the CPU while a thread of the parent sleeps in
 * a wait for the value; the wait returns and the parent's event fires.
 */
TEST_F(sh, cpu_signal_other_process)
{
	int fd, status, efd = util_eventfd(), go[2];
	struct blocked_wait b = { self->e.f, 30, 0, -1 };
	pthread_t t;
	pid_t pid;

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 30, efd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_fence *f;
		int ret;

		close(go[1]);
		if (!dev || d3dq_fence_import(dev, fd, &f) ||
		    !sync_read(go[0]))
			_exit(2);
		ret = d3dq_fence_signal(f, 30);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(ret ? 3 : 0);
	}
	close(fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_wait_main, &b));
	while (!atomic_load(&b.tid))
		task_sleep_ms(1);
	ASSERT_TRUE(task_asleep_in_driver(atomic_load(&b.tid)));
	ASSERT_TRUE(sync_write(go[1]));
	pthread_join(t, NULL);
	EXPECT_EQ(0, b.ret);
	close(go[0]);
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The event is fired by the kernel, at the child's signal. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 30, -1));
	EXPECT_EQ(1, util_event_wait(efd, 20000));
	close(efd);
}

TEST_F(sh, import_errors)
{
	struct d3dq_fence *f = (void *)1;
	int fd = util_eventfd();

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, d3dq_fence_import(self->e.dev, -1, &f));
	EXPECT_EQ(NULL, f);
	/* An open file that is no syncobj. */
	EXPECT_EQ(-EINVAL, d3dq_fence_import(self->e.dev, fd, &f));
	EXPECT_EQ(NULL, f);
	close(fd);
	/* A descriptor that is not open. */
	EXPECT_EQ(-EBADF, d3dq_fence_import(self->e.dev, fd, &f));
	EXPECT_EQ(NULL, f);
}

/*
 * A queue signal held behind a wait, below a CPU signal made meanwhile,
 * takes effect when its queue executes it (R4): the value goes back to
 * it, and not before the work before it ran.
 */
TEST_F(sh, held_signal_below_cpu_signal)
{
	uint64_t v, lowest = UINT64_MAX;

	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.g, 1));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 7));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.g, 1));
	v = d3dq_fence_get_completed_value(self->e.f);
	EXPECT_EQ(7, v);
	while (d3dq_fence_get_completed_value(self->e.done) < 1) {
		v = d3dq_fence_get_completed_value(self->e.f);
		if (v < lowest)
			lowest = v;
	}
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_TRUE(lowest == 7 || lowest == 5);
}

/* A CPU signal of a value a queue signal will bring takes effect now. */
TEST_F(sh, cpu_signal_of_pending_value)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * A queue signal of a value another queue's signal will bring is no
 * no-op: it takes effect when its own queue gets there (and what follows
 * it on that queue sees it, R17).
 */
TEST_F(sh, queue_signal_of_pending_value)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 600 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.b, 100 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.g, 1));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.g, 1, 20000 * MS));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
}

/*
 * A CPU signal between the current value and a pending one is no rewind:
 * it takes effect, and the pending one later.
 */
TEST_F(sh, cpu_signal_between_current_and_pending)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 5));
	EXPECT_EQ(5, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.f, 10, 20000 * MS));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/*
 * A queue signal below an earlier queue signal of the fence that has not
 * taken effect yet is accepted and takes effect when its queue executes
 * it (R4); the earlier one, executed later, then sets the value. A CPU
 * signal above a pending queue signal is accepted, and the queue signal
 * still takes effect when it completes: the last one executed wins, a
 * lower value too (R20: as for a local fence).
 */
TEST_F(sh, queue_signal_below_pending_accepted)
{
	ASSERT_EQ(0, util_exec_delay(self->e.dev, self->e.a, 300 * MS));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	EXPECT_EQ(0, d3dq_queue_signal(self->e.b, self->e.f, 7));
	/*
	 * b's signal is a job of its own now (issue 25), which the engine
	 * may run after the call returned: b idle, well before a's delay.
	 */
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.b));
	EXPECT_EQ(7, d3dq_fence_get_completed_value(self->e.f));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 12));
	ASSERT_EQ(0, util_queue_idle(self->e.dev, self->e.a));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
}

/* R10: registering the same (event, value) twice fires it once. */
TEST_F(sh, duplicate_registration_fires_once)
{
	int efd = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	/* R2: events fire during the signal call, both registrations' too. */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	EXPECT_EQ(1, util_event_take(efd));
	/* Another crossing fires it again, once: it was not left behind. */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 11, efd));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 11));
	EXPECT_EQ(1, util_event_take(efd));
	close(efd);
}

/*
 * Destroying a shared fence releases its registrations (the event fires
 * once); a value reached later, through another import, must not fire
 * them again.
 */
TEST_F(sh, no_event_after_destroy)
{
	struct d3dq_fence *f, *again;
	int fd, efd = util_eventfd(), witness = util_eventfd();

	ASSERT_GE(efd, 0);
	ASSERT_GE(witness, 0);
	ASSERT_EQ(0, d3dq_fence_create(self->e.dev, 0, D3DQ_FENCE_FLAG_SHARED,
				       &f));
	ASSERT_EQ(0, d3dq_fence_export(f, &fd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(f, 10, efd));
	d3dq_fence_destroy(f);
	EXPECT_EQ(1, util_event_take(efd));
	ASSERT_EQ(0, d3dq_fence_import(self->e.dev, fd, &again));
	close(fd);
	/*
	 * R2: the crossing fires its events during the call: a witness
	 * registered through @again fires, the released one does not.
	 */
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(again, 10, witness));
	ASSERT_EQ(0, d3dq_fence_signal(again, 10));
	EXPECT_EQ(1, util_event_take(witness));
	EXPECT_EQ(0, util_event_take(efd));
	d3dq_fence_destroy(again);
	close(witness);
	close(efd);
}

/*
 * R20: destroying one reference of a shared fence releases what was made
 * through it (R14) and nothing made through another reference, in this
 * process (a second import) or on another device. The fixture's fence
 * starts at 2.
 */
TEST_F(sh, destroy_one_reference_keeps_the_others)
{
	struct d3dq_device *dev2 = util_open();
	struct d3dq_fence *again, *other;
	int fd, efd = util_eventfd(), efd2 = util_eventfd();

	ASSERT_NE(NULL, dev2);
	ASSERT_GE(efd, 0);
	ASSERT_GE(efd2, 0);
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_fence_import(self->e.dev, fd, &again));
	ASSERT_EQ(0, d3dq_fence_import(dev2, fd, &other));
	close(fd);

	/* Through @again; the fixture's reference goes. */
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, again, 5));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(again, 5, efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(other, 6, efd2));
	d3dq_fence_destroy(self->e.f);
	self->e.f = NULL;
	/* b's wait through @again is still held by the kernel. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.done));
	EXPECT_EQ(0, util_event_take(efd));
	EXPECT_EQ(0, util_event_take(efd2));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(again));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(other));

	/* @again goes: what it made is released, @other's event stays. */
	d3dq_fence_destroy(again);
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_event_wait(efd, 2000));
	EXPECT_EQ(0, util_event_take(efd2));
	EXPECT_EQ(2, d3dq_fence_get_completed_value(other));
	ASSERT_EQ(0, d3dq_fence_signal(other, 6));
	EXPECT_EQ(1, util_event_take(efd2));
	d3dq_fence_destroy(other);
	d3dq_device_close(dev2);
	close(efd2);
	close(efd);
}

/*
 * Removal stays in its process (R15, R20): a peer that imported this
 * process's fence and queued a wait on it is removed; this process's
 * consumer queue still waits for this process's producer, its CPU wait is
 * not released, its value is the real one, and it still signals and
 * rewinds. The peer reads UINT64_MAX and its signal is refused.
 */
TEST_F(sh, removal_stays_in_its_process)
{
	int fd, status, up[2], down[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_queue_desc qd = D3DQ_QUEUE_DESC_INIT;
		struct d3dq_device *dev = util_open();
		struct d3dq_queue *q = NULL;
		struct d3dq_fence *f;
		int ok;

		if (!dev || d3dq_fence_import(dev, fd, &f) ||
		    d3dq_queue_create(dev, &qd, &q) ||
		    d3dq_queue_wait(q, f, 10) || d3dq_queue_signal(q, f, 11))
			_exit(2);
		if (write(up[1], "r", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(3);
		ok = d3dq_device_remove(dev) == 0;
		ok = ok && d3dq_fence_get_completed_value(f) == UINT64_MAX;
		ok = ok && d3dq_fence_signal(f, 3) != 0;
		if (write(up[1], ok ? "y" : "n", 1) != 1)
			_exit(4);
		/* Until the parent is done with the fence. */
		if (read(down[0], &c, 1) != 1)
			_exit(5);
		d3dq_queue_destroy(q);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(0);
	}
	close(fd);
	ASSERT_EQ(0, d3dq_queue_wait(self->e.b, self->e.f, 10));
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.b, self->e.buf, 8));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.b, self->e.done, 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	EXPECT_EQ('y', c);

	/* Nothing here moved: the peer's 11 never takes effect. */
	EXPECT_EQ(2, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(-ETIMEDOUT, d3dq_fence_wait(self->e.f, 10, 200 * MS));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.done));
	EXPECT_EQ(0, util_read64(self->e.buf, 8));
	EXPECT_EQ(0, d3dq_device_removed_reason(self->e.dev));

	/* This process's producer releases its consumer; rewinds work. */
	ASSERT_EQ(0, util_exec_timestamp(self->e.dev, self->e.a, self->e.buf, 0));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.f, 10));
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_NE(0, util_read64(self->e.buf, 8));
	EXPECT_GE(util_read64(self->e.buf, 8), util_read64(self->e.buf, 0));
	EXPECT_EQ(10, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));

	ASSERT_EQ(1, write(down[1], "e", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/*
 * From now on any ioctl(2) kills this process (a child of the test): the
 * d3dq and DRM calls are all ioctls, so what it still does makes no
 * call into the driver.
 */
static bool forbid_ioctl(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	return !prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) &&
	       !syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Spin on the value until it is @want (10 s at most). */
static bool reads(struct d3dq_fence *f, uint64_t want)
{
	int i;

	for (i = 0; i < 10000; i++) {
		if (d3dq_fence_get_completed_value(f) == want)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * R20, and the cost of GetCompletedValue: another process sees every
 * change of a shared fence, rewinds included, by reading its value and
 * making no call into the driver (its ioctls are forbidden: one would
 * kill it).
 */
TEST_F(sh, read_without_system_call_in_other_process)
{
	int fd, status, up[2];
	pid_t pid;

#ifdef __SANITIZE_THREAD__
	/* The sanitizer's runtime may make calls of its own in the child. */
	SKIP(return, "ThreadSanitizer: a seccomp filter on ioctl(2)");
#endif
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_fence *f;

		if (!dev || d3dq_fence_import(dev, fd, &f))
			_exit(2);
		if (d3dq_fence_get_completed_value(f) != 2 || !forbid_ioctl())
			_exit(3);
		if (!sync_write(up[1]) || !reads(f, 100) ||
		    !sync_write(up[1]) || !reads(f, 3) ||
		    !sync_write(up[1]) || !reads(f, 0))
			_exit(4);
		/* No close: that would call the driver. */
		_exit(0);
	}
	close(fd);
	/* A child killed by the filter ends the pipe: reads fail. */
	close(up[1]);
	ASSERT_TRUE(sync_read(up[0]));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 100));
	ASSERT_TRUE(sync_read(up[0]));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 3));
	ASSERT_TRUE(sync_read(up[0]));
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(up[0]);
}

/*
 * R5, R6 across processes: a queue of this process waits for a value
 * that another process brings later by a CPU signal and takes back at
 * once. The wait stays satisfied (sticky), and work after it runs; an
 * event registered here for that value fired once, and one for a value
 * the rewind undid before it was reached does not fire.
 */
TEST_F(sh, cpu_signal_and_rewind_other_process)
{
	int fd, status, efd = util_eventfd(), efd2 = util_eventfd(), go[2];
	pid_t pid;

	ASSERT_GE(efd, 0);
	ASSERT_GE(efd2, 0);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, d3dq_fence_export(self->e.f, &fd));
	ASSERT_EQ(0, d3dq_queue_wait(self->e.a, self->e.f, 7));
	ASSERT_EQ(0, util_exec_write64(self->e.dev, self->e.a, self->e.buf, 0, 1));
	ASSERT_EQ(0, d3dq_queue_signal(self->e.a, self->e.done, 1));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 7, efd));
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 8, efd2));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct d3dq_device *dev = util_open();
		struct d3dq_fence *f;
		int ok;

		close(go[1]);
		if (!sync_read(go[0]) || !dev || d3dq_fence_import(dev, fd, &f))
			_exit(2);
		ok = !d3dq_fence_signal(f, 7) && !d3dq_fence_signal(f, 0);
		d3dq_fence_destroy(f);
		d3dq_device_close(dev);
		_exit(ok ? 0 : 3);
	}
	close(fd);
	/* The parent's queue waits in the kernel before the child signals. */
	ASSERT_TRUE(task_gpu_only_held());
	EXPECT_EQ(0, util_read64(self->e.buf, 0));
	ASSERT_TRUE(sync_write(go[1]));
	close(go[0]);
	close(go[1]);
	ASSERT_EQ(0, d3dq_fence_wait(self->e.done, 1, 20000 * MS));
	EXPECT_EQ(1, util_read64(self->e.buf, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, d3dq_fence_get_completed_value(self->e.f));
	EXPECT_EQ(1, util_event_take(efd));
	EXPECT_EQ(0, util_event_take(efd2));
	/* The rewind left efd2's registration for the next crossing. */
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 8));
	EXPECT_EQ(1, util_event_take(efd2));
	EXPECT_EQ(0, util_event_take(efd));
	close(efd);
	close(efd2);
}

/*
 * R19: the kernel holds the event. An eventfd closed after registering
 * still fires (seen through a duplicate), and a file that reuses its
 * number is never written; anything but an eventfd is refused.
 */
TEST_F(sh, event_outlives_its_descriptor)
{
	int efd = util_eventfd(), keep, again, p[2];

	ASSERT_GE(efd, 0);
	keep = dup(efd);
	ASSERT_GE(keep, 0);
	ASSERT_EQ(0, d3dq_fence_set_event_on_completion(self->e.f, 10, efd));
	close(efd);
	again = util_eventfd();
	ASSERT_EQ(efd, again);
	ASSERT_EQ(0, d3dq_fence_signal(self->e.f, 10));
	EXPECT_EQ(1, util_event_take(keep));
	EXPECT_EQ(0, util_event_take(again));

	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->e.f, 20,
							      p[1]));
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(-EINVAL, d3dq_fence_set_event_on_completion(self->e.f, 20,
							      p[1]));
	close(keep);
	close(again);
}

TEST_HARNESS_MAIN
