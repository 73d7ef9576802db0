// SPDX-License-Identifier: MIT
/*
 * d3dq-bench figure 12: a fence value write next to nodes that another
 * file parked on the fence (issue 38, item 2). Process B, a second open
 * of the render node, imports a shared fence F of this process K times
 * (a fence named twice through one handle in one call is one node, so
 * one node per handle) and parks nodes with FENCE_EVENT registrations
 * of K values each, up to the user's max_user_fence_nodes.
 *
 * (a) N nodes above every value this process signals: FENCE_SIGNAL of
 * F, timed, alternating with that of a shared fence nobody waits on
 * (F0, the signal with no node), for N from 0 to the bound, B parking
 * more between steps. Target: F at N / F0 in the same step <= 1.2:
 * nodes the value does not reach cost nothing. (F at the largest N / F
 * at N = 0 is shown too, without a target: the steps follow one
 * another, so it also has whatever changed in between.)
 *
 * (b) N nodes at or below the value signalled (spread over the values
 * since the previous signal; B parks them again before every signal,
 * the Ns in an order that rotates): the signal call, and the longest
 * interval between two wake-ups of a thread that sleeps 1 ms at a time
 * on the signaller's CPU, among those that overlap the call. Target:
 * <= 10 ms: the write satisfies its nodes in batches and lets others
 * run between them. Control: the same measured over a user-space spin
 * as long, on that CPU, right after the signal: what the machine (the
 * emulator, the host) gives a sleeper next to a busy thread.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define NSTEPS	5
#define KMAX	1024		/* handles of F in B, at most */
#define HIGH	(1ull << 62)	/* above every value signalled */
#define SPAN	1000000ull	/* values one signal of (b) moves F on */
#define GAP_TARGET_MS 10.0
#define RING	65536		/* wake-ups the sleeper remembers */
/* How long B retries a registration the user's bound refuses. */
#define PATIENCE_NS (20000 * MS)

enum { OP_PARK = 1, OP_DROP, OP_EXIT };

struct park_cmd {
	uint32_t op, pad;
	uint64_t n, lo, hi;	/* OP_PARK: n nodes, values in [lo, hi] */
};

/* --- process B ----------------------------------------------------------- */

struct parker_b {
	uint32_t h[KMAX];
	uint32_t k;
	int ffd, efd;
};

static int64_t b_import(struct parker_b *b)
{
	uint32_t i;
	int r;

	for (i = 0; i < b->k; i++) {
		struct drm_d3dq_fence_import a = { .fd = b->ffd };

		r = xioctl(DRM_IOCTL_D3DQ_FENCE_IMPORT, &a);
		if (r)
			return r;
		b->h[i] = a.handle;
	}
	return 0;
}

/* Destroy the handles (which releases their nodes), import again. */
static int64_t b_drop(struct parker_b *b)
{
	uint32_t i;
	int r;

	for (i = 0; i < b->k; i++) {
		struct drm_d3dq_fence_destroy d = { .handle = b->h[i] };

		r = xioctl(DRM_IOCTL_D3DQ_FENCE_DESTROY, &d);
		if (r)
			return r;
	}
	return b_import(b);
}

/*
 * @n nodes, K per registration (one per handle), their values spread
 * over [@lo, @hi] in no order. The nodes a signal satisfied are
 * uncounted by a work item after it: a registration the bound refuses
 * is retried. Returns the nodes parked (fewer if the bound stayed
 * full), or -errno.
 */
static int64_t b_park(struct parker_b *b, uint64_t n, uint64_t lo,
		      uint64_t hi)
{
	static struct drm_d3dq_fence_value v[KMAX];
	uint64_t span = hi - lo + 1, done = 0, waited = 0;
	uint32_t i, cnt;
	int r;

	while (done < n) {
		struct drm_d3dq_fence_event e = {
			.eventfd = b->efd,
		};

		cnt = n - done < b->k ? (uint32_t)(n - done) : b->k;
		for (i = 0; i < cnt; i++) {
			v[i].handle = b->h[i];
			v[i].pad = 0;
			v[i].value = lo + (done + i) * 2654435761ull % span;
		}
		e.fences.stride = sizeof(v[0]);
		e.fences.count = cnt;
		e.fences.array = (uintptr_t)v;
		r = xioctl(DRM_IOCTL_D3DQ_FENCE_EVENT, &e);
		if (r == -EDQUOT && waited < PATIENCE_NS) {
			sleep_ns(MS);
			waited += MS;
			continue;
		}
		if (r == -EDQUOT)
			break;
		if (r)
			return r;
		waited = 0;
		done += cnt;
	}
	return (int64_t)done;
}

static void fig12_b(int ffd, uint32_t k, int rd, int wr)
{
	static struct parker_b b;
	struct park_cmd c;
	int64_t r;

	/* A file of its own: not this process's, inherited. */
	close(raw_fd);
	raw_fd = open_raw();
	b.k = k;
	b.ffd = ffd;
	b.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r = raw_fd < 0 ? -ENODEV : b.efd < 0 ? -errno : b_import(&b);
	if (write(wr, &r, sizeof(r)) != sizeof(r) || r)
		_exit(2);
	while (read(rd, &c, sizeof(c)) == sizeof(c)) {
		switch (c.op) {
		case OP_PARK:
			r = b_park(&b, c.n, c.lo, c.hi);
			break;
		case OP_DROP:
			r = b_drop(&b);
			break;
		case OP_EXIT:
			_exit(0);
		default:
			r = -EINVAL;
		}
		if (write(wr, &r, sizeof(r)) != sizeof(r))
			_exit(3);
	}
	_exit(0);
}

/* --- process A: B's commands ---------------------------------------------- */

struct parker {
	pid_t pid;
	int to_b, from_b;
};

static int64_t ask(struct parker *p, uint32_t op, uint64_t n, uint64_t lo,
		   uint64_t hi)
{
	struct park_cmd c = { .op = op, .n = n, .lo = lo, .hi = hi };
	int64_t r;

	if (write(p->to_b, &c, sizeof(c)) != sizeof(c) ||
	    read(p->from_b, &r, sizeof(r)) != sizeof(r))
		die("process B", EPIPE, __LINE__);
	if (r < 0)
		die("process B's fence ioctl", (int)-r, __LINE__);
	return r;
}

static void parker_start(struct parker *p, uint32_t f, uint32_t k)
{
	struct drm_d3dq_fence_export e = { .handle = f };
	int to_b[2], from_b[2];
	int64_t r;

	CHECK(xioctl(DRM_IOCTL_D3DQ_FENCE_EXPORT, &e));
	if (pipe2(to_b, O_CLOEXEC) || pipe2(from_b, O_CLOEXEC))
		die("pipe", errno, __LINE__);
	p->pid = fork();
	if (p->pid < 0)
		die("fork", errno, __LINE__);
	if (!p->pid) {
		close(to_b[1]);
		close(from_b[0]);
		fig12_b(e.fd, k, to_b[0], from_b[1]);
	}
	close(to_b[0]);
	close(from_b[1]);
	close(e.fd);
	p->to_b = to_b[1];
	p->from_b = from_b[0];
	if (read(p->from_b, &r, sizeof(r)) != sizeof(r) || r)
		die("process B's imports", r < 0 ? (int)-r : EPIPE, __LINE__);
}

static void parker_stop(struct parker *p)
{
	struct park_cmd c = { .op = OP_EXIT };
	int status;

	if (write(p->to_b, &c, sizeof(c)) != sizeof(c))
		die("process B", EPIPE, __LINE__);
	close(p->to_b);
	close(p->from_b);
	if (waitpid(p->pid, &status, 0) != p->pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("process B", ECHILD, __LINE__);
}

/* --- the sleeper ----------------------------------------------------------- */

struct sleeper {
	pthread_t t;
	atomic_bool stop;
	_Atomic uint64_t count;		/* wake-ups recorded */
	int64_t ring[RING];		/* their times, ring[i % RING] */
};

static void *sleeper_run(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ms = { 0, 1000000 };
	uint64_t c = 0;

	while (!atomic_load(&s->stop)) {
		s->ring[c % RING] = now_ns();
		atomic_store(&s->count, ++c);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	return NULL;
}

static int64_t sleeper_last(struct sleeper *s)
{
	uint64_t c = atomic_load(&s->count);

	return c ? s->ring[(c - 1) % RING] : 0;
}

/* The longest interval between wake-ups that overlaps [t0, t1], in ms. */
static double sleeper_gap(struct sleeper *s, int64_t t0, int64_t t1)
{
	uint64_t c = atomic_load(&s->count), k;
	int64_t max = 0, lo, hi;

	for (k = c - 1; k >= 1 && k + RING > c; k--) {
		hi = s->ring[k % RING];
		lo = s->ring[(k - 1) % RING];
		if (lo >= t1)
			continue;
		if (hi <= t0)
			break;
		if (hi - lo > max)
			max = hi - lo;
	}
	return (double)max / 1e6;
}

/* --- the figure ------------------------------------------------------------ */

static uint32_t shared_fence(void)
{
	struct drm_d3dq_fence_create c = { .flags = DRM_D3DQ_FENCE_SHARED };

	CHECK(xioctl(DRM_IOCTL_D3DQ_FENCE_CREATE, &c));
	return c.handle;
}

static void fence_destroy(uint32_t h)
{
	struct drm_d3dq_fence_destroy d = { .handle = h };

	xioctl(DRM_IOCTL_D3DQ_FENCE_DESTROY, &d);
}

/* One FENCE_SIGNAL, its time in ns; *t0, *t1: when it began and ended. */
static double signal_timed(uint32_t h, uint64_t value, int64_t *t0,
			   int64_t *t1)
{
	struct drm_d3dq_fence_signal s = { .handle = h, .value = value };
	int64_t a, b;
	int r;

	a = now_ns();
	r = xioctl(DRM_IOCTL_D3DQ_FENCE_SIGNAL, &s);
	b = now_ns();
	CHECK(r);
	if (t0)
		*t0 = a;
	if (t1)
		*t1 = b;
	return (double)(b - a);
}

/* A module parameter of d3dq from sysfs, or @dflt. */
static long sysfs_param(const char *name, long dflt)
{
	char path[128];
	long v = dflt;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/d3dq/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/* Row keys: the N of each step, "none" and "max" at the ends. */
static void step_name(char *buf, size_t len, int s, long n)
{
	if (s == 0)
		snprintf(buf, len, "none");
	else if (s == NSTEPS - 1)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "n%ld", n);
}

struct step {
	long n;				/* nodes asked for */
	long above, below;		/* parked: (a), fewest of (b) */
	int r_above, r_base, r_signal, r_gap, r_spin;
	double gap_max;
};

static void fig12_data(const struct step *st)
{
	char path[512];
	FILE *f;
	int s;

	if (!data_dir)
		return;
	f = fopen(data_path(path, sizeof(path), "nodes.dat"), "w");
	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "# N above_signal_us above_f0_us below_signal_us gap_us gap_max_us control_gap_us\n");
	for (s = 0; s < NSTEPS; s++)
		fprintf(f, "%ld %.3f %.3f %.3f %.1f %.1f %.1f\n", st[s].n,
			row_median(st[s].r_above) / 1000,
			row_median(st[s].r_base) / 1000,
			row_median(st[s].r_signal) / 1000,
			row_median(st[s].r_gap) * 1000, st[s].gap_max * 1000,
			row_median(st[s].r_spin) * 1000);
	fclose(f);
}

/* (a): N nodes above, F alternating with F0, N growing. */
static void fig12_above(struct step *st, struct parker *p, uint32_t f,
			uint32_t f0, uint64_t *fval, uint64_t *f0val)
{
	int n = sz.lat, warm = smoke ? 2 : 20, s, i, o;
	long parked = 0;
	char name[24], key[48], label[72];

	for (s = 0; s < NSTEPS; s++) {
		double *sig = samples(n), *base = samples(n);

		if (st[s].n > parked)
			parked += ask(p, OP_PARK, st[s].n - parked, HIGH,
				      HIGH + SPAN - 1);
		st[s].above = parked;
		for (i = 0; i < warm + n; i++)
			for (o = 0; o < 2; o++) {
				bool on_f = (i + o) % 2 == 0;
				double t;

				t = on_f ? signal_timed(f, ++*fval, NULL, NULL) :
					   signal_timed(f0, ++*f0val, NULL, NULL);
				if (i >= warm)
					(on_f ? sig : base)[i - warm] = t;
			}
		step_name(name, sizeof(name), s, st[s].n);
		snprintf(key, sizeof(key), "nodes_above_%s", name);
		snprintf(label, sizeof(label), "FENCE_SIGNAL, %ld nodes above its value",
			 parked);
		st[s].r_above = add_row(12, key, label, "ns", sig, n);
		snprintf(key, sizeof(key), "nodes_above_%s_f0", name);
		st[s].r_base = add_row(12, key,
				       "  same step: a shared fence with none",
				       "ns", base, n);
	}
}

/*
 * (b): N nodes at or below each value signalled, parked again before
 * each signal; the sleeper and this thread on one CPU, so that the
 * sleeper runs during the signal only if the signal lets it.
 */
static void fig12_below(struct step *st, struct parker *p, uint32_t f,
			uint32_t f0, uint64_t *fval, uint64_t *f0val, int *cpu)
{
	int reps = sz.node_reps, r, k, s;
	double *sig[NSTEPS], *gap[NSTEPS], *spin[NSTEPS];
	char name[24], key[48], label[72];
	int64_t t0, t1, t2, t3;
	cpu_set_t old, one;
	struct sleeper *sl;
	uint64_t c0;

	sl = calloc(1, sizeof(*sl));
	CHECK_PTR(sl);
	for (s = 0; s < NSTEPS; s++) {
		sig[s] = samples(reps);
		gap[s] = samples(reps);
		spin[s] = samples(reps);
		st[s].below = st[s].n;
	}
	*cpu = sched_getcpu();
	if (*cpu < 0 || sched_getaffinity(0, sizeof(old), &old))
		die("sched_getaffinity", errno, __LINE__);
	CPU_ZERO(&one);
	CPU_SET(*cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity", errno, __LINE__);
	/* The sleeper inherits the CPU. */
	CHECK(pthread_create(&sl->t, NULL, sleeper_run, sl));
	/* Round 0 is not timed: whatever the first signals cost. */
	for (r = -1; r < reps; r++)
		for (k = 0; k < NSTEPS; k++) {
			uint64_t lo = *fval + 1, hi = *fval + SPAN;
			long got = 0;
			double t;

			s = (r + 1 + k) % NSTEPS;
			if (st[s].n)
				got = ask(p, OP_PARK, st[s].n, lo, hi);
			if (got < st[s].below)
				st[s].below = got;
			/*
			 * The sleeper is in its loop; the signal falls
			 * between two of its wake-ups, not at one (this
			 * thread's own wake-up comes with the sleeper's).
			 */
			c0 = atomic_load(&sl->count);
			while (atomic_load(&sl->count) < c0 + 2)
				sleep_ns(MS / 2);
			sleep_ns(SETTLE_NS);
			/*
			 * A system call right after a wake-up costs tens of
			 * us more under TCG, nodes or not: not timed.
			 */
			signal_timed(f0, ++*f0val, NULL, NULL);
			t = signal_timed(f, hi, &t0, &t1);
			*fval = hi;
			while (sleeper_last(sl) <= t1)
				sleep_ns(MS / 2);
			/*
			 * The control: as long again, spinning in user
			 * space, which the sleeper's wake-up preempts at
			 * once; the gap the machine gives a sleeper next
			 * to a busy thread (the emulator, the host).
			 */
			sleep_ns(SETTLE_NS);
			t2 = now_ns();
			while ((t3 = now_ns()) < t2 + (int64_t)t)
				;
			while (sleeper_last(sl) <= t3)
				sleep_ns(MS / 2);
			if (r < 0)
				continue;
			sig[s][r] = t;
			gap[s][r] = sleeper_gap(sl, t0, t1);
			spin[s][r] = sleeper_gap(sl, t2, t3);
		}
	atomic_store(&sl->stop, true);
	pthread_join(sl->t, NULL);
	free(sl);
	if (sched_setaffinity(0, sizeof(old), &old))
		die("sched_setaffinity", errno, __LINE__);

	for (s = 0; s < NSTEPS; s++) {
		step_name(name, sizeof(name), s, st[s].n);
		st[s].gap_max = 0;
		for (r = 0; r < reps; r++)
			if (gap[s][r] > st[s].gap_max)
				st[s].gap_max = gap[s][r];
		snprintf(key, sizeof(key), "nodes_below_signal_%s", name);
		snprintf(label, sizeof(label), "%ld nodes at or below: FENCE_SIGNAL",
			 st[s].below);
		st[s].r_signal = add_row(12, key, label, "ns", sig[s], reps);
		snprintf(key, sizeof(key), "nodes_below_gap_%s", name);
		snprintf(label, sizeof(label), "%ld at or below: longest gap of a 1 ms sleeper",
			 st[s].below);
		st[s].r_gap = add_row(12, key, label, "ms", gap[s], reps);
		snprintf(key, sizeof(key), "nodes_below_spin_%s", name);
		st[s].r_spin = add_row(12, key,
				       "  control: as long spinning in user space",
				       "ms", spin[s], reps);
	}
}

static void fig12(void)
{
	long bound = (long)get_param(DRM_D3DQ_PARAM_MAX_USER_FENCE_NODES);
	long events = sysfs_param("max_user_fence_events", 65536);
	long syncs = (long)get_param(DRM_D3DQ_PARAM_MAX_SYNCS), top;
	uint32_t f = shared_fence(), f0 = shared_fence(), k = 64;
	char model[32], label[72];
	struct step st[NSTEPS];
	struct parker p;
	uint64_t fval = 0, f0val = 0;
	int s, target, cpu;

	bench_no_quantiles(12);
	top = sz.nodes_max && sz.nodes_max < bound ? sz.nodes_max : bound;
	memset(st, 0, sizeof(st));
	st[0].n = 0;
	st[1].n = top / 256;
	st[2].n = top / 16;
	st[3].n = top / 4;
	st[4].n = top;
	/* Registrations count against max_user_fence_events too. */
	while (k < KMAX && (top + k - 1) / k > events / 2)
		k *= 2;
	if (k > syncs)
		k = (uint32_t)syncs;

	parker_start(&p, f, k);
	fig12_above(st, &p, f, f0, &fval, &f0val);
	/* B's handles go and come back: the nodes above go with them. */
	ask(&p, OP_DROP, 0, 0, 0);
	fig12_below(st, &p, f, f0, &fval, &f0val, &cpu);
	parker_stop(&p);
	fence_destroy(f);
	fence_destroy(f0);

	target = add_value(12, "nodes_gap_target",
			   "target: the longest gap, at most", "ms",
			   GAP_TARGET_MS, false);
	for (s = 1; s < NSTEPS; s++) {
		snprintf(label, sizeof(label),
			 "signal, %ld above / a fence with none, same step",
			 st[s].above);
		add_cmp(12, st[s].r_above, st[s].r_base, label, 1.2);
	}
	/* Steps apart: the host's drift between them too, no target. */
	snprintf(label, sizeof(label), "signal, %ld nodes above / none, steps apart",
		 st[NSTEPS - 1].above);
	add_cmp(12, st[NSTEPS - 1].r_above, st[0].r_above, label, 0);
	for (s = 0; s < NSTEPS; s++) {
		snprintf(label, sizeof(label),
			 "longest gap, %ld nodes at or below / 10 ms",
			 st[s].below);
		add_cmp(12, st[s].r_gap, target, label, 1.0);
	}
	snprintf(label, sizeof(label), "longest gap, %ld at or below / control",
		 st[NSTEPS - 1].below);
	add_cmp(12, st[NSTEPS - 1].r_gap, st[NSTEPS - 1].r_spin, label, 0);
	snprintf(label, sizeof(label), "signal, %ld nodes at or below / none",
		 st[NSTEPS - 1].below);
	add_cmp(12, st[NSTEPS - 1].r_signal, st[0].r_signal, label, 0);

	preempt_model(model, sizeof(model));
	add_note(12, "nodes parked by another process (own file) with FENCE_EVENT, %u values per registration, one per handle of the fence (%u imports); max_user_fence_nodes %ld",
		 k, k, bound);
	add_note(12, "sleeper and signaller on CPU %d, preemption %s; control: right after the signal, a user-space spin as long on that CPU; longest single gap with %ld nodes: %.2f ms",
		 cpu, model[0] ? model : "unknown", st[NSTEPS - 1].below,
		 st[NSTEPS - 1].gap_max);
	if (st[NSTEPS - 1].below)
		add_note(12, "a signal that satisfies %ld nodes: %.0f ns per node more than one that satisfies none",
			 st[NSTEPS - 1].below,
			 (row_median(st[NSTEPS - 1].r_signal) -
			  row_median(st[0].r_signal)) /
			 (double)st[NSTEPS - 1].below);
	for (s = 0; s < NSTEPS; s++)
		if (st[s].above < st[s].n || st[s].below < st[s].n)
			add_note(12, "%ld nodes asked for, %ld above and %ld at or below parked: the user's bound was full",
				 st[s].n, st[s].above, st[s].below);
	fig12_data(st);
}

static int fig12_plot(FILE *gp)
{
	char path[512];

	data_path(path, sizeof(path), "nodes.dat");
	fprintf(gp, "set title \"12. FENCE_SIGNAL next to N nodes another file parked\"\n"
		"set logscale y\nset xlabel \"N nodes\"\n"
		"set ylabel \"us\"\nset key top left\n"
		"plot '%s' using 0:4:xtic(1) with linespoints lw 2 title 'N at or below its value', \\\n"
		"     '' using 0:2 with linespoints lw 2 title 'N above', \\\n"
		"     '' using 0:3 with linespoints lw 2 title 'a fence with none'\n",
		path);
	fprintf(gp, "unset logscale\nset autoscale\n"
		"set title \"12. longest gap of a 1 ms sleeper, N at or below\"\n"
		"set logscale y\nset xlabel \"N nodes\"\n"
		"set ylabel \"ms\"\nset key top left\nset yrange [0.5:*]\n"
		"set offsets 0, 0, graph 0.1, 0\n"
		"plot '%s' using 0:($5/1000):xtic(1) with linespoints lw 2 title 'during the signal (median)', \\\n"
		"     '' using 0:($6/1000) with points title '... longest', \\\n"
		"     '' using 0:($7/1000) with linespoints lw 2 title 'control: spinning as long', \\\n"
		"     %g with lines dt 2 title 'target'\n"
		"set offsets 0, 0, 0, 0\n",
		path, GAP_TARGET_MS);
	return 2;
}

BENCH_FIGURE(12, "a value write next to nodes another file parked on the fence",
	     fig12, fig12_plot)
