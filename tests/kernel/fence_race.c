// SPDX-License-Identifier: GPL-2.0
/*
 * d3dq fences shared by processes that race their teardown (issue 38,
 * items 1 and 6). In each round two processes share fences (each creates
 * some, exports them and imports the other's); three threads of each
 * create, destroy, export and import fences, signal them (rewinds
 * included), wait on them from the CPU, register events, export
 * sync_files and submit jobs that wait for and signal them, held or not,
 * while a fourth thread of each removes its file (REMOVE), arms removal
 * on loss and makes a job time out, or closes its file, and then opens a
 * new one and imports the shared fences again. A variant unbinds the
 * device in the middle of a round and binds it again after it.
 *
 * Checked: every call answers 0 or one of its documented errors, nothing
 * hangs (every CPU wait has a deadline, held jobs are released by the
 * end of the round), each process exits cleanly, and every fence,
 * registration and job is freed at the end. Under make check-debug
 * KASAN, lockdep and kmemleak watch the kernel side (a walker that used
 * what another thread freed is a report there, not here).
 * D3DQ_STRESS_SCALE multiplies the rounds, D3DQ_STRESS_SEED changes them;
 * a failure prints the seed of its round.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "util/d3dq_test.h"

#define ARGS		"job_timeout_ms=50"
#define ROUNDS		4
#define OPS		1000
#define WORKERS		3
#define SLOTS		24
#define OWN_SHARED	4
#define BAD_ERRNO	64

enum { M_NONE, M_REMOVE, M_LOSS, M_CLOSE, M_UNBIND };

/* One process of a round. */
struct proc {
	pthread_rwlock_t lock;	/* write: the file is replaced */
	int fd, efd;
	uint32_t q[2];
	_Atomic uint32_t slot[SLOTS];	/* handles; 0 free (may be stale) */
	int peer_fds[OWN_SHARED];	/* the peer's exported fences */
	int own_fds[OWN_SHARED];	/* this process's, for re-import */
	unsigned int seed, mode;
	_Atomic int bad;		/* first unexpected errno, as op*100+e */
	_Atomic unsigned int done[9];	/* calls of each op that succeeded */
	_Atomic bool stop;
};

struct worker {
	struct proc *p;
	unsigned int seed;
};

static unsigned int rnd(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* @ret is 0 or -errno: record it unless it is one of @ok (0-ended). */
static void expect(struct proc *p, int op, int ret, const int *ok)
{
	int expected = 0;

	if (!ret) {
		if (op < 9)
			atomic_fetch_add(&p->done[op], 1);
		return;
	}
	for (; *ok; ok++)
		if (-ret == *ok)
			return;
	atomic_compare_exchange_strong(&p->bad, &expected, op * 100 - ret);
}

static const int E_HANDLE[] = { ENOENT, ENODEV, 0 };
static const int E_CREATE[] = { ENODEV, EDQUOT, 0 };
static const int E_EXPORT[] = { ENOENT, EINVAL, ENODEV, 0 };
static const int E_WAIT[] = { ENOENT, ENODEV, ETIME, EDQUOT, 0 };
static const int E_SF[] = { ENOENT, ENODEV, ENODATA, EDQUOT, 0 };
static const int E_SUBMIT[] = { ENOENT, ENODEV, ENOSPC, EDQUOT, ECANCELED,
				ETIMEDOUT, 0 };

static uint32_t pick(struct proc *p, unsigned int *s)
{
	return atomic_load(&p->slot[rnd(s) % SLOTS]);
}

static void put_slot(struct proc *p, unsigned int *s, uint32_t handle)
{
	atomic_store(&p->slot[rnd(s) % SLOTS], handle);
}

/* A new file for @p, with its queues and the shared fences imported. */
static int proc_open(struct proc *p)
{
	struct t_fence f;
	int i, ret;

	p->fd = t_open(0);
	if (p->fd < 0)
		return -ENODEV;
	p->q[0] = t_queue(p->fd, 0, 0);
	p->q[1] = t_queue(p->fd, 0, 0);
	for (i = 0; i < SLOTS; i++)
		atomic_store(&p->slot[i], 0);
	for (i = 0; i < OWN_SHARED; i++) {
		ret = t_fence_import(p->fd, p->peer_fds[i], &f);
		if (!ret)
			atomic_store(&p->slot[i], f.handle);
		ret = t_fence_import(p->fd, p->own_fds[i], &f);
		if (!ret)
			atomic_store(&p->slot[OWN_SHARED + i], f.handle);
	}
	return 0;
}

static void one_op(struct proc *p, unsigned int *s)
{
	struct drm_d3dq_fence_value fv[3];
	struct drm_d3dq_sync w, sig;
	struct t_fence f;
	uint32_t fl = 0;
	int op = rnd(s) % 9, ret, xfd, n, i;

	switch (op) {
	case 0:
		ret = t_fence_create(p->fd, rnd(s) % 8,
				     rnd(s) & 1 ? DRM_D3DQ_FENCE_SHARED : 0, &f);
		expect(p, op, ret, E_CREATE);
		if (!ret)
			put_slot(p, s, f.handle);
		break;
	case 1:
		expect(p, op, t_fence_destroy(p->fd, pick(p, s)), E_HANDLE);
		break;
	case 2:
		xfd = t_fence_export(p->fd, pick(p, s));
		if (xfd < 0) {
			expect(p, op, xfd, E_EXPORT);
			break;
		}
		ret = t_fence_import(p->fd, xfd, &f);
		expect(p, op, ret, E_CREATE);
		if (!ret)
			put_slot(p, s, f.handle);
		close(xfd);
		break;
	case 3:
		expect(p, op, t_fence_signal(p->fd, pick(p, s), rnd(s) % 16),
		       E_HANDLE);
		break;
	case 4:
		n = 1 + rnd(s) % 3;
		for (i = 0; i < n; i++)
			fv[i] = (struct drm_d3dq_fence_value){
				.handle = pick(p, s), .value = rnd(s) % 16 };
		{
			struct drm_d3dq_fence_wait a = {
				.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
				.flags = rnd(s) & 1 ? DRM_D3DQ_FENCE_WAIT_ANY : 0,
				.deadline_ns = t_deadline((1 + rnd(s) % 3) *
							  T_MS),
			};

			ret = t_ioctl(p->fd, DRM_IOCTL_D3DQ_FENCE_WAIT, &a);
		}
		expect(p, op, ret, E_WAIT);
		break;
	case 5:
		n = 1 + rnd(s) % 2;
		for (i = 0; i < n; i++)
			fv[i] = (struct drm_d3dq_fence_value){
				.handle = pick(p, s), .value = rnd(s) % 16 };
		{
			struct drm_d3dq_fence_event a = {
				.fences = DRM_D3DQ_OBJ_ARRAY(n, fv),
				.eventfd = p->efd,
			};

			ret = t_ioctl(p->fd, DRM_IOCTL_D3DQ_FENCE_EVENT, &a);
		}
		expect(p, op, ret, E_WAIT);
		break;
	case 6:
		{
			struct drm_d3dq_fence_sync_file a = {
				.handle = pick(p, s), .value = rnd(s) % 16 };

			ret = t_ioctl(p->fd,
				      DRM_IOCTL_D3DQ_FENCE_EXPORT_SYNC_FILE,
				      &a);
			if (!ret)
				close(a.fd);
		}
		expect(p, op, ret, E_SF);
		break;
	default:
		/* A job that waits for one value and signals another. */
		w = t_fs(pick(p, s), rnd(s) % 16);
		sig = t_fs(pick(p, s), rnd(s) % 16);
		ret = t_submit_hold(p->fd, p->q[rnd(s) & 1], &w, 1, &sig, 1,
				    NULL, &fl, NULL);
		expect(p, op, ret, E_SUBMIT);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct proc *p = w->p;
	int i;

	for (i = 0; i < OPS && !atomic_load(&p->stop); i++) {
		pthread_rwlock_rdlock(&p->lock);
		if (p->fd >= 0)
			one_op(p, &w->seed);
		pthread_rwlock_unlock(&p->lock);
	}
	return NULL;
}

/* Make a job of @p's file time out (removal on loss is armed). */
static void lose_a_queue(struct proc *p)
{
	struct drm_d3dq_remove rm = { .flags = DRM_D3DQ_REMOVE_ON_LOSS };
	struct t_cs cs;
	int i;

	expect(p, 20, t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm), E_HANDLE);
	t_cs_init(&cs);
	t_cs_delay(&cs, 200 * T_MS);
	expect(p, 21, t_submit(p->fd, p->q[0], NULL, 0, NULL, 0, &cs),
	       E_SUBMIT);
	/* Until the kernel removed the file (a second at most). */
	rm.flags = DRM_D3DQ_REMOVE_QUERY;
	for (i = 0; i < 200; i++) {
		rm.reason = 0;
		if (t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE, &rm) || rm.reason)
			break;
		usleep(5000);
	}
}

/*
 * Whether a fence was made, signalled, waited for by an event and
 * submitted with: what a round must have done to have tested anything.
 */
static bool proc_tested(struct proc *p)
{
	return atomic_load(&p->done[0]) && atomic_load(&p->done[3]) &&
	       atomic_load(&p->done[5]) &&
	       atomic_load(&p->done[7]) + atomic_load(&p->done[8]);
}

/* The fourth thread: this round's teardown, then a new file. */
static void *mutator_main(void *arg)
{
	struct proc *p = arg;
	struct drm_d3dq_remove rm = { 0 };
	unsigned int s = p->seed ^ 0x5a5a;
	int k, i;

	for (k = 0; k < 3 && !atomic_load(&p->stop); k++) {
		usleep(1000 + rnd(&s) % 20000);
		/*
		 * Not before the first file did each kind of call once: a
		 * slow kernel (make check-debug) may not have in the delay,
		 * and the workers may hold the lock until their last call
		 * (glibc's rwlock prefers readers), all on the removed file.
		 */
		for (i = 0; k == 0 && i < 10000 && !proc_tested(p) &&
		     !atomic_load(&p->stop); i++)
			usleep(1000);
		switch (p->mode) {
		case M_REMOVE:
			expect(p, 22, t_ioctl(p->fd, DRM_IOCTL_D3DQ_REMOVE,
					      &rm), E_HANDLE);
			break;
		case M_LOSS:
			lose_a_queue(p);
			break;
		case M_UNBIND:
			/* The parent's mutator unbinds (see the test). */
			return NULL;
		default:
			break;
		}
		usleep(rnd(&s) % 5000);
		pthread_rwlock_wrlock(&p->lock);
		close(p->fd);
		p->fd = -1;
		proc_open(p);
		pthread_rwlock_unlock(&p->lock);
	}
	return NULL;
}

/*
 * One process of a round: exchange shared fences over @sock, say it is
 * ready on @ready, run the threads, report 0 or the first unexpected
 * answer (op * 100 + errno).
 */
static int run_proc(int sock, int ready, unsigned int seed,
		    unsigned int mode)
{
	struct worker w[WORKERS];
	pthread_t th[WORKERS + 1];
	struct proc *p;
	struct t_fence f;
	int i, bad;

	p = calloc(1, sizeof(*p));
	if (!p)
		return 1;
	pthread_rwlock_init(&p->lock, NULL);
	p->seed = seed;
	p->mode = mode;
	p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->fd = t_open(0);
	if (p->fd < 0 || p->efd < 0)
		return 2;
	for (i = 0; i < OWN_SHARED; i++) {
		if (t_fence_create(p->fd, 0, DRM_D3DQ_FENCE_SHARED, &f))
			return 3;
		p->own_fds[i] = t_fence_export(p->fd, f.handle);
		if (p->own_fds[i] < 0 || t_send_fd(sock, p->own_fds[i]))
			return 4;
	}
	for (i = 0; i < OWN_SHARED; i++) {
		p->peer_fds[i] = t_recv_fd(sock);
		if (p->peer_fds[i] < 0)
			return 5;
	}
	close(p->fd);
	if (proc_open(p))
		return 6;
	/* The parent may unbind the device from now on. */
	if (write(ready, "r", 1) != 1)
		return 8;

	for (i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ .p = p, .seed = seed * 31 + i };
		if (pthread_create(&th[i], NULL, worker_main, &w[i]))
			return 7;
	}
	if (pthread_create(&th[WORKERS], NULL, mutator_main, p))
		return 7;
	for (i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&p->stop, true);
	pthread_join(th[WORKERS], NULL);

	/* Release what is still held: every fence of the file to its max. */
	for (i = 0; i < SLOTS && p->fd >= 0; i++)
		t_fence_signal(p->fd, atomic_load(&p->slot[i]), UINT64_MAX);
	bad = atomic_load(&p->bad);
	/*
	 * A round in which no fence was made, signalled, waited for or
	 * submitted with tested nothing (an unbind may end it early).
	 */
	if (!bad && mode != M_UNBIND && !proc_tested(p)) {
		fprintf(stderr, "# seed %u: an op never succeeded\n", seed);
		bad = -1;
	}
	fprintf(stderr,
		"# seed %u: create %u destroy %u export %u signal %u wait %u event %u sync_file %u submit %u\n",
		seed, p->done[0], p->done[1], p->done[2], p->done[3],
		p->done[4], p->done[5], p->done[6],
		p->done[7] + p->done[8]);
	if (p->fd >= 0)
		close(p->fd);
	for (i = 0; i < OWN_SHARED; i++) {
		close(p->own_fds[i]);
		close(p->peer_fds[i]);
	}
	close(p->efd);
	if (bad > 0)
		fprintf(stderr, "# seed %u mode %u: op %d answered errno %d\n",
			seed, mode, bad / 100, bad % 100);
	return bad ? 10 : 0;
}

FIXTURE(race) {
	int unused;
};

FIXTURE_VARIANT(race) {
	unsigned int mode;
};

FIXTURE_VARIANT_ADD(race, remove) {
	.mode = M_REMOVE,
};

FIXTURE_VARIANT_ADD(race, loss) {
	.mode = M_LOSS,
};

FIXTURE_VARIANT_ADD(race, close) {
	.mode = M_CLOSE,
};

FIXTURE_VARIANT_ADD(race, unbind) {
	.mode = M_UNBIND,
};

FIXTURE_SETUP(race)
{
	if (!t_can_reload())
		SKIP(return, "D3DQ_MODULE not set or module not loaded");
	ASSERT_EQ(0, t_reload(ARGS));
}

FIXTURE_TEARDOWN(race)
{
	if (!t_can_reload())
		return;
	if (!t_is_bound(0))
		EXPECT_EQ(0, t_bind(0));
	EXPECT_TRUE(t_fence_counts_become(0, 0));
	T_EXPECT_IDLE(20000);
	EXPECT_EQ(0, t_reload(NULL));
}

static unsigned int env_uint(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : def;
}

TEST_F_TIMEOUT(race, shared_fences, 600)
{
	unsigned int scale = env_uint("D3DQ_STRESS_SCALE", 1);
	unsigned int seed0 = env_uint("D3DQ_STRESS_SEED", 38);
	unsigned int rounds = ROUNDS * scale, r, seed;
	int sv[2], rd[2], status, j;
	pid_t pid[2];
	char c;

	if (variant->mode == M_UNBIND)
		rounds = 2 * scale;
	for (r = 0; r < rounds; r++) {
		seed = seed0 * 1000 + r;
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
					sv));
		ASSERT_EQ(0, pipe(rd));
		for (j = 0; j < 2; j++) {
			pid[j] = fork();
			ASSERT_LE(0, pid[j]);
			if (!pid[j]) {
				close(sv[1 - j]);
				close(rd[0]);
				_exit(run_proc(sv[j], rd[1], seed * 2 + j,
					       variant->mode));
			}
		}
		close(sv[0]);
		close(sv[1]);
		close(rd[1]);
		/* Both set up (or one failed, which its status tells). */
		for (j = 0; j < 2; j++)
			if (read(rd[0], &c, 1) != 1)
				break;
		close(rd[0]);
		if (variant->mode == M_UNBIND) {
			usleep(20000 + seed % 20000);
			ASSERT_EQ(0, t_unbind(0));
		}
		for (j = 0; j < 2; j++) {
			ASSERT_EQ(pid[j], waitpid(pid[j], &status, 0));
			EXPECT_TRUE(WIFEXITED(status));
			EXPECT_EQ(0, WEXITSTATUS(status))
				TH_LOG("round %u (seed %u), process %d", r,
				       seed, j);
		}
		if (variant->mode == M_UNBIND)
			ASSERT_EQ(0, t_bind(0));
	}
}

TEST_HARNESS_MAIN
