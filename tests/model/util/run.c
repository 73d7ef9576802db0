// SPDX-License-Identifier: GPL-2.0
/*
 * Run a model program against libd3dq and record what happened.
 *
 * Copyright (C) 2026 The d3dq authors
 *
 * The only file of the model that uses the library, and only through its
 * public header. Each process has a pool of threads that start together
 * at a barrier; each call is bracketed by two CLOCK_MONOTONIC reads, the
 * clock the engine's timestamps use too. A second process, forked before
 * any thread exists, opens its own device, imports the shared fences
 * (their fds pass over a socket) and runs the threads of process 1; the
 * program and the log live in memory both processes share.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <d3dq/d3dq.h>

#include "prog.h"
#include "run.h"

#define NWORKERS 3
#define BUF_SLOTS 4096

enum { CMD_RUN = 1, CMD_QUIT };

/* Where each process's main thread is, for the watchdog. */
static const char *const where_names[] = {
	"idle", "setting up", "exporting or importing fences",
	"waiting for the other process", "in phase 1", "in phase 2",
	"collecting", "tearing down", "opening the device",
};
enum { W_IDLE, W_SETUP, W_SHARE, W_SYNC, W_PHASE1, W_PHASE2, W_COLLECT,
       W_TEARDOWN, W_OPEN };

/* Memory both processes share. */
struct shm {
	pthread_barrier_t all_start, all_end;	/* every thread of both */
	pthread_barrier_t mains;		/* the two main threads */
	int cmd;
	int child_err;
	_Atomic int where[2];
	struct m_prog prog;
	struct m_log log;
};

/* One process's side. */
struct side {
	int proc;
	struct d3dq_device *dev;
	struct d3dq_buffer *buf;
	volatile uint64_t *map;
	pthread_t th[NWORKERS];
	pthread_barrier_t go, done;
	bool quit, two;
	uint64_t guard_ns;
	struct shm *shm;
	const struct m_prog *p;
	struct m_log *l;
	struct d3dq_queue *q[M_MAXQ];
	struct d3dq_fence *f[M_MAXF];
	int efd[M_MAXE];
	struct d3dq_cmdlist *list[M_MAXOPS];
	_Atomic bool hang;
};

struct runner {
	struct side me;
	struct shm *shm;
	pid_t child;
	int sock;
	/* watchdog */
	_Atomic uint64_t started;	/* 0 between programs */
	uint64_t limit_ns;
	void (*stuck)(const struct m_prog *p, const struct m_log *l);
	pthread_t dog;
	bool dog_on;
};

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t ev_take(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static void run_op(struct side *r, int i)
{
	const struct m_op *o = &r->p->ops[i];
	struct m_obs *ob = &r->l->o[i];
	struct d3dq_fence *fs[M_MAXMULTI];
	struct pollfd pfd;
	int j, ret = 0;

	ob->t0 = now();
	switch (o->kind) {
	case K_CSIG:
		ret = d3dq_fence_signal(r->f[o->f], o->v);
		break;
	case K_READ:
		ob->val = d3dq_fence_get_completed_value(r->f[o->f]);
		break;
	case K_WAIT:
		ret = d3dq_fence_wait(r->f[o->f], o->v,
				      o->sure ? r->guard_ns : o->timeout_ns);
		if (o->sure && ret == -ETIMEDOUT)
			r->hang = true;
		break;
	case K_EVENT:
		ret = d3dq_fence_set_event_on_completion(r->f[o->f], o->v,
							 r->efd[o->e]);
		break;
	case K_BLOCK:
		ret = d3dq_fence_set_event_on_completion(r->f[o->f], o->v, -1);
		break;
	case K_MULTI:
	case K_MULTI_BLOCK:
		for (j = 0; j < o->n; j++)
			fs[j] = r->f[o->mf[j]];
		ret = d3dq_device_set_event_on_multiple_fence_completion(
			r->dev, fs, o->mv, o->n,
			o->any ? D3DQ_MULTIPLE_FENCE_WAIT_ANY :
				 D3DQ_MULTIPLE_FENCE_WAIT_ALL,
			o->kind == K_MULTI ? r->efd[o->e] : -1);
		break;
	case K_EVWAIT:
		pfd.fd = r->efd[o->e];
		pfd.events = POLLIN;
		poll(&pfd, 1, (int)(o->timeout_ns / 1000000));
		/* fall through */
	case K_EVREAD:
		ob->val = ev_take(r->efd[o->e]);
		break;
	case K_EVCLOSE:
		close(r->efd[o->e]);
		r->efd[o->e] = -1;
		r->efd[o->e2] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		break;
	case K_QSIG:
		ret = d3dq_queue_signal(r->q[o->q], r->f[o->f], o->v);
		break;
	case K_QWAIT:
		ret = d3dq_queue_wait(r->q[o->q], r->f[o->f], o->v);
		break;
	case K_EXEC:
		ret = d3dq_queue_execute(r->q[o->q], &r->list[i], 1);
		break;
	case K_CPUWRITE:
		atomic_store((_Atomic uint64_t *)&r->map[o->slot], o->tag);
		atomic_thread_fence(memory_order_seq_cst);
		break;
	case K_DESTROY:
		d3dq_fence_destroy(r->f[o->f]);
		r->f[o->f] = NULL;
		break;
	case K_REMOVE:
		ret = d3dq_device_remove(r->dev);
		break;
	case K_SLEEP: {
		struct timespec ts = {
			.tv_sec = (time_t)(o->timeout_ns / 1000000000ull),
			.tv_nsec = (long)(o->timeout_ns % 1000000000ull),
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		break;
	}
	}
	ob->t1 = now();
	ob->ret = ret;
	ob->reason = d3dq_device_removed_reason(r->dev);
}

static void run_ops(struct side *r, int t, int stage)
{
	int i;

	for (i = 0; i < r->p->nops; i++)
		if (r->p->ops[i].thread == t && r->p->ops[i].stage == stage)
			run_op(r, i);
}

struct warg {
	struct side *r;
	int id;
};

static void *worker(void *arg)
{
	struct side *r = ((struct warg *)arg)->r;
	int id = ((struct warg *)arg)->id, t, k;

	free(arg);
	for (;;) {
		pthread_barrier_wait(&r->go);
		if (r->quit)
			return NULL;
		if (r->two)
			pthread_barrier_wait(&r->shm->all_start);
		/* the id-th phase-1 thread of this process */
		for (t = 0, k = id; t < r->p->nthreads; t++) {
			if (r->p->tproc[t] != r->proc)
				continue;
			if (k-- == 0) {
				run_ops(r, t, 0);
				break;
			}
		}
		if (r->two)
			pthread_barrier_wait(&r->shm->all_end);
		pthread_barrier_wait(&r->done);
	}
}

static int open_device(struct side *r)
{
	int ret = d3dq_device_open(NULL, &r->dev);

	if (ret)
		return ret;
	ret = d3dq_buffer_create(r->dev, BUF_SLOTS * 8, &r->buf);
	if (ret)
		return ret;
	r->map = d3dq_buffer_map(r->buf);
	return r->map ? 0 : -ENOMEM;
}

static void close_device(struct side *r)
{
	d3dq_buffer_destroy(r->buf);
	d3dq_device_close(r->dev);
	r->buf = NULL;
	r->dev = NULL;
	r->map = NULL;
}

/* The pool, then the device (0 or its error; the pool runs anyway). */
static int side_start(struct side *r)
{
	int i;

	pthread_barrier_init(&r->go, NULL, NWORKERS + 1);
	pthread_barrier_init(&r->done, NULL, NWORKERS + 1);
	for (i = 0; i < NWORKERS; i++) {
		struct warg *a = malloc(sizeof(*a));

		a->r = r;
		a->id = i;
		if (!a || pthread_create(&r->th[i], NULL, worker, a))
			abort();
	}
	return open_device(r);
}

static void side_stop(struct side *r)
{
	int i;

	r->quit = true;
	pthread_barrier_wait(&r->go);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(r->th[i], NULL);
	pthread_barrier_destroy(&r->go);
	pthread_barrier_destroy(&r->done);
	close_device(r);
}

static int record(struct d3dq_cmdlist *l, const struct m_op *o,
		  const struct m_prog *p, struct d3dq_buffer *b)
{
	uint64_t s = o->slot * 8ull;
	int ret;

	ret = d3dq_cmdlist_timestamp(l, b, s);
	if (!ret && o->delay_ns)
		ret = d3dq_cmdlist_delay(l, o->delay_ns);
	if (!ret && o->src_kind) {
		const struct m_op *src = &p->ops[o->src];

		ret = d3dq_cmdlist_copy(l, b, s + 8, b,
					src->kind == K_EXEC ? src->slot * 8ull + 16 :
					src->slot * 8ull, 8);
		if (!ret && o->cas)
			ret = d3dq_cmdlist_compare_store64(l, b, s + 8, src->tag,
							   src->tag | M_CASMARK);
	}
	if (!ret)
		ret = o->tag_cas ?
		      d3dq_cmdlist_compare_store64(l, b, s + 16, 0, o->tag) :
		      d3dq_cmdlist_write64(l, b, s + 16, o->tag);
	if (!ret)
		ret = d3dq_cmdlist_timestamp(l, b, s + 24);
	if (!ret)
		ret = d3dq_cmdlist_close(l);
	return ret;
}

static bool is_mine(const struct m_prog *p, int proc, int kind, int idx)
{
	switch (kind) {
	case 'q':
		return p->qproc[idx] == proc;
	case 'f':
		return p->fshared[idx] ? proc == 0 : p->fproc[idx] == proc;
	default:
		return p->eproc[idx] == proc;
	}
}

/* This process's objects, except the shared fences the child imports. */
static void at(struct side *r, int where)
{
	if (r->shm)
		atomic_store(&r->shm->where[r->proc], where);
}

static int side_setup(struct side *r)
{
	static const struct d3dq_queue_desc desc = {
		.size = sizeof(desc), .type = D3DQ_QUEUE_DIRECT,
	};
	const struct m_prog *p = r->p;
	int i, ret = 0;

	at(r, W_SETUP);
	r->hang = false;
	memset(r->q, 0, sizeof(r->q));
	memset(r->f, 0, sizeof(r->f));
	memset(r->list, 0, sizeof(r->list));
	for (i = 0; i < M_MAXE; i++)
		r->efd[i] = -1;
	if (!r->dev) {
		at(r, W_OPEN);
		ret = open_device(r);
		at(r, W_SETUP);
		if (ret)
			return ret;
	}
	if (p->nslots > BUF_SLOTS)
		return -E2BIG;
	for (i = 0; i < p->nslots; i++)
		r->map[i] = 0;
	for (i = 0; i < p->nqueues && !ret; i++)
		if (is_mine(p, r->proc, 'q', i))
			ret = d3dq_queue_create(r->dev, &desc, &r->q[i]);
	for (i = 0; i < p->nfences && !ret; i++)
		if (is_mine(p, r->proc, 'f', i))
			ret = d3dq_fence_create(r->dev, p->finit[i],
						p->fshared[i] ? D3DQ_FENCE_FLAG_SHARED : 0,
						&r->f[i]);
	for (i = 0; i < p->nefds && !ret; i++) {
		if (!p->eopen[i] || !is_mine(p, r->proc, 'e', i))
			continue;
		r->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (r->efd[i] < 0)
			ret = -errno;
	}
	for (i = 0; i < p->nops && !ret; i++) {
		const struct m_op *o = &p->ops[i];

		if (o->kind != K_EXEC || op_proc(p, o) != r->proc)
			continue;
		ret = d3dq_cmdlist_create(r->dev, &r->list[i]);
		if (!ret)
			ret = record(r->list[i], o, p, r->buf);
	}
	return ret;
}

/* Does the program remove this process's device? */
static bool removes_device(const struct side *r)
{
	const struct m_prog *p = r->p;
	int i;

	for (i = 0; i < p->nops; i++)
		if (p->ops[i].kind == K_REMOVE && op_proc(p, &p->ops[i]) == r->proc)
			return true;
	return false;
}

/*
 * Jobs of this process the driver timed out (the d3dq-timeouts lines of
 * the DRM files' fdinfo, Documentation/driver.rst): R15 lets a job that
 * runs past the timeout remove the device, which no program asks for, so
 * such a loss is the machine's (a guest starved for seconds), not the
 * library's.
 */
static unsigned int job_timeouts(void)
{
	unsigned int sum = 0, n;
	struct dirent *d;
	char path[300], line[128];
	DIR *dir = opendir("/proc/self/fdinfo");
	FILE *f;

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "d3dq-timeouts: %u", &n) == 1)
				sum += n;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

static void side_collect(struct side *r)
{
	const struct m_prog *p = r->p;
	int i;

	at(r, W_COLLECT);
	for (i = 0; i < p->nops; i++) {
		const struct m_op *o = &p->ops[i];
		struct m_obs *ob = &r->l->o[i];

		if (o->kind != K_EXEC || op_proc(p, o) != r->proc)
			continue;
		ob->ts0 = r->map[o->slot];
		ob->obs = r->map[o->slot + 1];
		ob->tag = r->map[o->slot + 2];
		ob->ts1 = r->map[o->slot + 3];
	}
	if (r->hang)
		r->l->hang = true;
	/* Nothing but the program's own removal may remove a device. */
	if (r->dev && !removes_device(r))
		r->l->lost[r->proc] = d3dq_device_removed_reason(r->dev);
	if (r->l->lost[r->proc])
		r->l->timeouts[r->proc] = job_timeouts();
}

static void side_teardown(struct side *r)
{
	bool removed = removes_device(r) ||
		       (r->dev && d3dq_device_removed_reason(r->dev));
	int i;

	at(r, W_TEARDOWN);
	for (i = 0; i < M_MAXOPS; i++)
		d3dq_cmdlist_destroy(r->list[i]);
	for (i = 0; i < M_MAXF; i++)
		d3dq_fence_destroy(r->f[i]);
	for (i = 0; i < M_MAXQ; i++)
		d3dq_queue_destroy(r->q[i]);
	for (i = 0; i < M_MAXE; i++)
		if (r->efd[i] >= 0)
			close(r->efd[i]);
	memset(r->q, 0, sizeof(r->q));
	memset(r->f, 0, sizeof(r->f));
	memset(r->list, 0, sizeof(r->list));
	for (i = 0; i < M_MAXE; i++)
		r->efd[i] = -1;
	/*
	 * Destroying the objects must not remove the device either: that
	 * is this program's failure, not the next one's (which would find
	 * the device removed from its start).
	 */
	if (!removed && r->dev && d3dq_device_removed_reason(r->dev)) {
		if (!r->l->lost[r->proc]) {
			r->l->lost[r->proc] = d3dq_device_removed_reason(r->dev);
			r->l->timeouts[r->proc] = job_timeouts();
		}
		removed = true;
	}
	/* a removed device stays removed: open another one */
	if (removed && r->dev)
		close_device(r);
}

/* The fds of the shared fences, over the socket. */
static int send_fds(int sock, const int *fds, int n)
{
	char ctl[CMSG_SPACE(sizeof(int) * M_MAXF)] = { 0 };
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	struct iovec iov;
	char byte = 'f';

	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n) {
		msg.msg_control = ctl;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fds(int sock, int *fds, int n)
{
	char ctl[CMSG_SPACE(sizeof(int) * M_MAXF)] = { 0 };
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	struct iovec iov;
	char byte;

	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl;
	msg.msg_controllen = sizeof(ctl);
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	cm = CMSG_FIRSTHDR(&msg);
	if (!n)
		return 0;
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int) * n))
		return -EIO;
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * n);
	return 0;
}

/* Phase 1 on both pools, then the stages of phase 2 on the mains. */
static void side_run(struct side *r, bool two)
{
	int stage, main_thread = r->p->nthreads + r->proc;

	r->two = two;
	at(r, W_PHASE1);
	pthread_barrier_wait(&r->go);
	if (two) {
		pthread_barrier_wait(&r->shm->all_start);
		pthread_barrier_wait(&r->shm->all_end);
	}
	pthread_barrier_wait(&r->done);
	at(r, W_PHASE2);
	for (stage = 1; stage <= 3; stage++) {
		run_ops(r, main_thread, stage);
		if (two)
			pthread_barrier_wait(&r->shm->mains);
	}
}

/* The second process: one program per CMD_RUN. */
static void child_main(struct runner *rr)
{
	struct side *r = &rr->me;
	struct shm *shm = rr->shm;
	int fds[M_MAXF], n, i, ret;

	r->proc = 1;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	side_start(r);
	for (;;) {
		at(r, W_IDLE);
		pthread_barrier_wait(&shm->mains);	/* a command */
		if (shm->cmd != CMD_RUN)
			break;
		r->p = &shm->prog;
		r->l = &shm->log;
		for (i = n = 0; i < r->p->nfences; i++)
			n += r->p->fshared[i];
		at(r, W_SHARE);
		ret = recv_fds(rr->sock, fds, n);
		if (!ret)
			ret = side_setup(r);
		at(r, W_SHARE);
		for (i = n = 0; i < r->p->nfences; i++) {
			if (!r->p->fshared[i])
				continue;
			if (!ret)
				ret = d3dq_fence_import(r->dev, fds[n], &r->f[i]);
			close(fds[n++]);
		}
		shm->child_err = ret;
		at(r, W_SYNC);
		pthread_barrier_wait(&shm->mains);	/* set up */
		pthread_barrier_wait(&shm->mains);	/* both fine? */
		if (!shm->child_err)
			side_run(r, true);
		side_collect(r);
		side_teardown(r);
		at(r, W_SYNC);
		pthread_barrier_wait(&shm->mains);	/* done */
	}
	side_stop(r);
	_exit(0);
}

int run_open(struct runner **out, uint64_t guard_ns)
{
	struct runner *r = calloc(1, sizeof(*r));
	pthread_barrierattr_t ba;
	int sv[2], ret;

	if (!r)
		return -ENOMEM;
	r->me.guard_ns = guard_ns;
	r->shm = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->shm == MAP_FAILED) {
		free(r);
		return -ENOMEM;
	}
	r->me.shm = r->shm;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&r->shm->all_start, &ba, 2 * (NWORKERS + 1));
	pthread_barrier_init(&r->shm->all_end, &ba, 2 * (NWORKERS + 1));
	pthread_barrier_init(&r->shm->mains, &ba, 2);
	pthread_barrierattr_destroy(&ba);
	r->child = -1;
	r->sock = -1;
	/* The child first: this process has no thread yet. */
	if (!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		r->child = fork();
		if (r->child == 0) {
			close(sv[0]);
			r->sock = sv[1];
			child_main(r);
		}
		close(sv[1]);
		r->sock = sv[0];
	}
	ret = side_start(&r->me);
	if (ret) {
		run_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

void run_close(struct runner *r)
{
	if (!r)
		return;
	side_stop(&r->me);
	if (r->child > 0) {
		r->shm->cmd = CMD_QUIT;
		pthread_barrier_wait(&r->shm->mains);
		waitpid(r->child, NULL, 0);
	}
	if (r->sock >= 0)
		close(r->sock);
	munmap(r->shm, sizeof(*r->shm));
	free(r);
}

static void *watchdog(void *arg)
{
	struct runner *r = arg;

	for (;;) {
		uint64_t t = atomic_load(&r->started);

		if (t && now() - t > r->limit_ns) {
			printf("# WATCHDOG: process 0 is %s, process 1 is %s\n",
			       where_names[atomic_load(&r->shm->where[0])],
			       where_names[atomic_load(&r->shm->where[1])]);
			r->stuck(&r->shm->prog, &r->shm->log);
		}
		usleep(200000);
	}
	return NULL;
}

void run_watchdog(struct runner *r, uint64_t limit_ns,
		  void (*stuck)(const struct m_prog *p, const struct m_log *l))
{
	r->limit_ns = limit_ns;
	r->stuck = stuck;
	if (!r->dog_on && !pthread_create(&r->dog, NULL, watchdog, r)) {
		pthread_detach(r->dog);
		r->dog_on = true;
	}
}

static int run_program_locked(struct runner *rr, const struct m_prog *p,
			      struct m_log *l);

int run_program(struct runner *rr, const struct m_prog *p, struct m_log *l)
{
	int ret;

	atomic_store(&rr->started, now());
	ret = run_program_locked(rr, p, l);
	atomic_store(&rr->started, 0);
	return ret;
}

static int run_program_locked(struct runner *rr, const struct m_prog *p,
			      struct m_log *l)
{
	struct side *r = &rr->me;
	struct shm *shm = rr->shm;
	bool two = p->nprocs > 1;
	int fds[M_MAXF], n = 0, i, ret;

	if (two && rr->child <= 0)
		return -ECHILD;
	shm->prog = *p;
	memset(&shm->log, 0, sizeof(shm->log));
	r->p = &shm->prog;
	r->l = &shm->log;
	r->proc = 0;
	ret = side_setup(r);
	if (two) {
		at(r, W_SHARE);
		for (i = 0; i < p->nfences && !ret; i++)
			if (p->fshared[i]) {
				ret = d3dq_fence_export(r->f[i], &fds[n]);
				n += !ret;
			}
		shm->cmd = CMD_RUN;
		pthread_barrier_wait(&shm->mains);	/* a command */
		/* on an error, no fds: the child then fails to set up too */
		if (send_fds(rr->sock, fds, ret ? 0 : n) && !ret)
			ret = -EIO;
		for (i = 0; i < n; i++)
			close(fds[i]);
		at(r, W_SYNC);
		pthread_barrier_wait(&shm->mains);	/* set up */
		if (!ret)
			ret = shm->child_err;
		shm->child_err = ret;
		pthread_barrier_wait(&shm->mains);	/* both fine? */
	}
	if (!ret)
		side_run(r, two);
	side_collect(r);
	side_teardown(r);
	at(r, W_SYNC);
	if (two)
		pthread_barrier_wait(&shm->mains);	/* done */
	at(r, W_IDLE);
	*l = shm->log;
	return ret;
}
