// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq: races. Timeouts racing with job completion, queues destroyed and
 * files closed while other threads submit or read their state, processes
 * killed at random moments. The assertions are that every fence signals, nothing leaks,
 * and (checked by the VM harness) the kernel logs no warning.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

static void expect_idle(struct __test_metadata *_metadata)
{
	T_EXPECT_IDLE(20000);
}

FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

/*
 * With a 20 ms timeout, jobs of 10 to 30 ms sometimes finish just before
 * and sometimes just after the timer fires. Lost queues are replaced;
 * each replacement is a new scheduler (on 6.1 a new kernel thread), which
 * on the debug kernel under TCG takes the run past the harness's default
 * 30 s: the limit only catches a hang.
 */
TEST_F_TIMEOUT(slow, timeout_races, 300)
{
	uint32_t q[4], tl, bo;
	int fd, i, lost = 0, ok = 0, n = 400;
	struct drm_d3dq_queue_get_state st;
	struct drm_d3dq_sync s, w;
	struct t_cs cs;

	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload("job_timeout_ms=20"));
	fd = t_open(0);
	ASSERT_LE(0, fd);
	tl = t_syncobj(fd);
	bo = t_bo(fd, 4096, NULL);
	ASSERT_NE(0, bo);
	for (i = 0; i < 4; i++)
		q[i] = t_queue(fd, 0, 0);
	srand(1);
	for (i = 1; i <= n; i++) {
		int k = i % 4, ret;

		t_cs_init(&cs);
		t_cs_write64(&cs, bo, 8 * k, i);
		t_cs_delay(&cs, (10 + rand() % 21) * T_MS);
		s = t_tl(tl, i);
		/* Every other job also waits for the previous one. */
		w = t_tl(tl, i - 1);
		ret = t_submit(fd, q[k], &w, i > 1 && i % 2, &s, 1, &cs);
		if (ret == -ECANCELED) {
			ASSERT_EQ(0, t_queue_state(fd, q[k], &st));
			ASSERT_EQ(DRM_D3DQ_QUEUE_STATE_LOST, st.state);
			ASSERT_EQ(0, t_queue_destroy(fd, q[k]));
			q[k] = t_queue(fd, 0, 0);
			ASSERT_NE(0, q[k]);
			lost++;
			ret = t_submit(fd, q[k], &w, i > 1 && i % 2, &s, 1,
				       &cs);
		}
		ASSERT_EQ(0, ret) TH_LOG("job %d", i);
		if (i % 8 == 0) {
			ASSERT_EQ(0, t_wait(fd, tl, i, 10 * T_SEC));
			ok += t_fence_status(fd, tl, i) == 1;
		}
	}
	ASSERT_EQ(0, t_wait(fd, tl, n, 20 * T_SEC));
	TH_LOG("%d queues lost, %d of %d sampled points clean", lost, ok,
	       n / 8);
	close(fd);
	expect_idle(_metadata);
	ASSERT_EQ(0, t_reload(NULL));
}

struct churn {
	int fd;
	uint32_t tl;
	volatile int stop;
	uint32_t queues[8];
	pthread_mutex_t lock;
	int submitted;
};

static void *submitter(void *arg)
{
	struct churn *c = arg;
	struct drm_d3dq_sync s;
	struct t_cs cs;
	unsigned int seed = (unsigned int)(uintptr_t)&cs;

	while (!c->stop) {
		uint32_t q;
		int ret;

		pthread_mutex_lock(&c->lock);
		q = c->queues[rand_r(&seed) % 8];
		pthread_mutex_unlock(&c->lock);
		t_cs_init(&cs);
		t_cs_delay(&cs, (rand_r(&seed) % 3) * T_MS);
		/* Binary signals: no ordering between threads needed. */
		s = t_bin(c->tl);
		ret = t_submit(c->fd, q, NULL, 0, &s, 1, &cs);
		if (ret && ret != -ENOENT && ret != -ECANCELED)
			return (void *)(intptr_t)ret;
		__atomic_add_fetch(&c->submitted, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Queues destroyed and created while three threads submit to them. */
TEST(destroy_while_submitting)
{
	struct churn c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[3];
	int i, replaced;
	uint64_t end;
	void *ret;

	c.fd = t_open(0);
	ASSERT_LE(0, c.fd);
	c.tl = t_syncobj(c.fd);
	for (i = 0; i < 8; i++)
		c.queues[i] = t_queue(c.fd, i % 3, i % 2);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, submitter, &c));
	end = t_now() + 3 * T_SEC;
	for (replaced = 0; t_now() < end; replaced++) {
		int k = replaced % 8;
		uint32_t old;

		pthread_mutex_lock(&c.lock);
		old = c.queues[k];
		c.queues[k] = t_queue(c.fd, 0, 0);
		pthread_mutex_unlock(&c.lock);
		ASSERT_NE(0, c.queues[k]);
		EXPECT_EQ(0, t_queue_destroy(c.fd, old));
		usleep(5000);
	}
	c.stop = 1;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &ret));
		EXPECT_EQ(NULL, ret);
	}
	TH_LOG("%d submits, %d queues replaced", c.submitted, replaced);
	close(c.fd);
	expect_idle(_metadata);
}

/* REMOVE and close while other threads submit. */
TEST(remove_while_submitting)
{
	struct churn c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct drm_d3dq_remove rm = { 0 };
	pthread_t th[3];
	void *ret;
	int i;

	c.fd = t_open(0);
	ASSERT_LE(0, c.fd);
	c.tl = t_syncobj(c.fd);
	for (i = 0; i < 8; i++)
		c.queues[i] = t_queue(c.fd, 0, 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, submitter, &c));
	usleep(500 * 1000);
	ASSERT_EQ(0, drmIoctl(c.fd, DRM_IOCTL_D3DQ_REMOVE, &rm));
	usleep(200 * 1000);
	c.stop = 1;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_join(th[i], &ret));
		EXPECT_EQ(NULL, ret);
	}
	close(c.fd);
	expect_idle(_metadata);
}

struct poll_state {
	int fd;
	uint32_t id;		/* the queue being destroyed, 0: none */
	int stop;
	int polls, lost, reason;
};

static void *state_poller(void *arg)
{
	struct poll_state *p = arg;
	struct drm_d3dq_queue_get_state st;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		uint32_t id = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE);

		if (!id || t_queue_state(p->fd, id, &st))
			continue;
		p->polls++;
		if (st.state != DRM_D3DQ_QUEUE_STATE_OK) {
			p->lost++;
			p->reason = st.reason;
		}
	}
	return NULL;
}

/*
 * QUEUE_GET_STATE racing with QUEUE_DESTROY of the same queue, which has
 * done nothing wrong: the answer is OK or -ENOENT, never LOST. (The queue
 * was looked up just before its id went away and its state read after
 * the destroy had stopped it: it read LOST with -ECANCELED, and libd3dq
 * took that for a failed dependency and removed the device.) Which
 * interleaving a round gets is the machine's: the rounds are many.
 */
TEST_F_TIMEOUT(slow, state_while_destroying, 300)
{
	struct poll_state p = { 0 };
	pthread_t th;
	int i, n = 3000;

	p.fd = t_open(0);
	ASSERT_LE(0, p.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, state_poller, &p));
	for (i = 0; i < n; i++) {
		uint32_t q = t_queue(p.fd, 0, 0);

		ASSERT_NE(0, q);
		__atomic_store_n(&p.id, q, __ATOMIC_RELEASE);
		/* the poller reads its state meanwhile */
		usleep(20);
		ASSERT_EQ(0, t_queue_destroy(p.fd, q));
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%d queues destroyed, %d states read", n, p.polls);
	EXPECT_EQ(0, p.lost) TH_LOG("a destroyed queue read as lost (reason %d)",
				    p.reason);
	close(p.fd);
	expect_idle(_metadata);
}

/* Children killed at random points of their life. */
TEST(kill_loop)
{
	int i, status;

	srand(2);
	for (i = 0; i < 12; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct drm_d3dq_sync s, w;
			uint32_t q[4], tl, bo;
			struct t_cs cs;
			int fd = t_open(0), j;

			if (fd < 0)
				_exit(1);
			tl = t_syncobj(fd);
			bo = t_bo(fd, 1 << 20, NULL);
			for (j = 0; j < 4; j++)
				q[j] = t_queue(fd, 0, 0);
			for (j = 1; j < 100000; j++) {
				t_cs_init(&cs);
				t_cs_fill(&cs, bo, 0, j & 0xff, 1 << 20);
				t_cs_delay(&cs, (j % 5) * T_MS);
				s = t_tl(tl, j);
				w = t_tl(tl, j - 1);
				if (t_submit(fd, q[j % 4], &w, j > 1, &s, 1, &cs))
					_exit(2);
			}
			_exit(0);
		}
		usleep((rand() % 400) * 1000);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("status 0x%x", status);
	}
	expect_idle(_metadata);
}

TEST_HARNESS_MAIN
