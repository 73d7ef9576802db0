// SPDX-License-Identifier: MIT
/*
 * d3dq-bench: latency, throughput and scaling of libd3dq, each figure
 * measured beside a baseline on the raw driver interface in the same run.
 *
 * This file is the harness: options, the figures registered by the other
 * files (one file per figure, see bench.h), the results and their output
 * (table, JSON, plot data and the gnuplot script of every figure's
 * panels). Under an emulator the absolute times mean little; the ratios
 * to the baselines are the result. Documentation/performance.rst explains
 * each figure; "make bench" runs this program in the VM on every kernel.
 *
 * Copyright (C) 2026 The d3dq authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const struct sizes full_sizes = {
	.lat = 1000, .cross = 400, .submit = 4000, .gcv_batches = 400,
	.gcv_batch = 2000, .query_batch = 50, .pending = 1000,
	.scale_reps = 3, .scale_max = 1024, .long_signals = 1000000,
	.idle_queues = 1023, .idle_fences = 10000, .frames = 1000,
	.nodes_max = 0, .node_reps = 20,
};

static const struct sizes smoke_sizes = {
	.lat = 20, .cross = 10, .submit = 100, .gcv_batches = 20,
	.gcv_batch = 1000, .query_batch = 20, .pending = 100,
	.scale_reps = 1, .scale_max = 64, .long_signals = 2000,
	.idle_queues = 32, .idle_fences = 200, .frames = 20,
	.nodes_max = 4096, .node_reps = 3,
};

struct sizes sz;
bool smoke;
int raw_fd = -1;
uint64_t job_timeout_ns;
bool has_syncobj_eventfd;
const char *data_dir;

/* --- figures ---------------------------------------------------------------- */

static struct figure *figures;	/* by number */

void bench_register(struct figure *f)
{
	struct figure **p = &figures;

	while (*p && (*p)->num < f->num)
		p = &(*p)->next;
	if (*p && (*p)->num == f->num) {
		fprintf(stderr, "d3dq-bench: two figures %d\n", f->num);
		exit(1);
	}
	f->next = *p;
	*p = f;
}

/* --- results ------------------------------------------------------------ */

struct row {
	int fig;
	char key[48];
	char label[72];
	char unit[12];
	double median, p99;
	long n;
	bool delta;		/* a difference: may be zero or negative */
	double *samples;	/* sorted, for the distribution plots */
};

struct cmp {
	int fig;
	int a, b;		/* rows: ratio = a.median / b.median */
	char label[72];
	double max;		/* target ratio, 0 = none */
	bool at_least;		/* the target is a minimum */
};

struct note {
	int fig;
	char text[200];
};

static struct row rows[512];
static int nrows;
static struct cmp cmps[160];
static int ncmps;
static struct note notes[48];
static int nnotes;
static bool no_quantiles[64];

void die_at(const char *what, int err, const char *file, int line)
{
	fprintf(stderr, "d3dq-bench: %s:%d: %s: %s\n", file, line, what,
		strerror(err < 0 ? -err : err));
	exit(1);
}

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int add_row(int fig, const char *key, const char *label, const char *unit,
	    double *v, long n)
{
	struct row *r;
	long i99;

	if (nrows == (int)(sizeof(rows) / sizeof(rows[0])))
		die("too many rows", ENOSPC, __LINE__);
	r = &rows[nrows];
	memset(r, 0, sizeof(*r));
	r->fig = fig;
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->label, sizeof(r->label), "%s", label);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	qsort(v, n, sizeof(*v), cmp_double);
	r->n = n;
	r->samples = v;
	if (n) {
		r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		i99 = (99 * n + 99) / 100 - 1;	/* ceil(0.99 n) - 1 */
		r->p99 = v[i99 < 0 ? 0 : i99];
	} else {
		r->median = r->p99 = NAN;
	}
	return nrows++;
}

int add_value(int fig, const char *key, const char *label, const char *unit,
	      double value, bool delta)
{
	double *v = malloc(sizeof(*v));
	int i;

	CHECK_PTR(v);
	*v = value;
	i = add_row(fig, key, label, unit, v, 1);
	rows[i].delta = delta;
	return i;
}

void add_cmp(int fig, int a, int b, const char *label, double max)
{
	struct cmp *c;

	if (ncmps == (int)(sizeof(cmps) / sizeof(cmps[0])))
		die("too many ratios", ENOSPC, __LINE__);
	c = &cmps[ncmps++];
	c->fig = fig;
	c->a = a;
	c->b = b;
	c->max = max;
	snprintf(c->label, sizeof(c->label), "%s", label);
}

void add_cmp_min(int fig, int a, int b, const char *label, double min)
{
	add_cmp(fig, a, b, label, min);
	cmps[ncmps - 1].at_least = true;
}

void add_note(int fig, const char *fmt, ...)
{
	va_list ap;

	if (nnotes == (int)(sizeof(notes) / sizeof(notes[0])))
		return;
	notes[nnotes].fig = fig;
	va_start(ap, fmt);
	vsnprintf(notes[nnotes].text, sizeof(notes[nnotes].text), fmt, ap);
	va_end(ap);
	nnotes++;
}

void bench_skip(int fig, const char *fmt, ...)
{
	struct figure *fg;
	va_list ap;

	for (fg = figures; fg; fg = fg->next)
		if (fg->num == fig)
			fg->skipped = true;
	if (nnotes == (int)(sizeof(notes) / sizeof(notes[0])))
		return;
	notes[nnotes].fig = fig;
	va_start(ap, fmt);
	vsnprintf(notes[nnotes].text, sizeof(notes[nnotes].text), fmt, ap);
	va_end(ap);
	nnotes++;
}

double row_median(int row)
{
	return rows[row].median;
}

double row_p99(int row)
{
	return rows[row].p99;
}

long row_n(int row)
{
	return rows[row].n;
}

void bench_no_quantiles(int fig)
{
	if (fig >= 0 && fig < (int)(sizeof(no_quantiles) / sizeof(no_quantiles[0])))
		no_quantiles[fig] = true;
}

double *samples(long n)
{
	double *v = calloc(n ? n : 1, sizeof(*v));

	CHECK_PTR(v);
	return v;
}

/* --- output ----------------------------------------------------------------- */

static void fmt_value(char *buf, size_t len, double v, const char *unit)
{
	double mag = v < 0 ? -v : v;

	if (!strcmp(unit, "ns") && mag >= 10000)
		snprintf(buf, len, "%.1f us", v / 1000);
	else if (!strcmp(unit, "ns") && mag >= 100)
		snprintf(buf, len, "%.0f ns", v);
	else if (!strcmp(unit, "calls/s") || mag >= 1000)
		snprintf(buf, len, "%.0f %s", v, unit);
	else
		snprintf(buf, len, "%.3g %s", v, unit);
}

static void print_table(FILE *out, const char *kernel)
{
	char med[32], p99[32];
	int i, fig = 0;

	fprintf(out, "d3dq-bench on %s%s (medians; p99 over n samples)\n",
		kernel, smoke ? ", smoke run: few iterations" : "");
	fprintf(out, "%-3s %-52s %14s %14s %8s\n", "fig", "measurement",
		"median", "p99", "n");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		if (r->fig != fig)
			fprintf(out, "\n");
		fig = r->fig;
		fmt_value(med, sizeof(med), r->median, r->unit);
		if (r->n > 1)
			fmt_value(p99, sizeof(p99), r->p99, r->unit);
		else
			snprintf(p99, sizeof(p99), "-");
		fprintf(out, "%-3d %-52s %14s %14s %8ld\n", r->fig, r->label,
			med, p99, r->n);
	}
	fprintf(out, "\n%-3s %-52s %9s %9s  %s\n", "fig", "ratio of medians",
		"ratio", "target", "");
	for (i = 0; i < ncmps; i++) {
		struct cmp *c = &cmps[i];
		double ratio = rows[c->a].median / rows[c->b].median;
		char target[16] = "-";
		const char *verdict = "";

		if (c->max > 0) {
			snprintf(target, sizeof(target), "%s %.3g",
				 c->at_least ? ">=" : "<=", c->max);
			verdict = (c->at_least ? ratio >= c->max :
				   ratio <= c->max) ? "met" : "MISSED";
		}
		fprintf(out, "%-3d %-52s %8.3gx %9s  %s\n", c->fig, c->label,
			ratio, target, verdict);
	}
	for (i = 0; i < nnotes; i++)
		fprintf(out, "note (fig %d): %s\n", notes[i].fig, notes[i].text);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* One row per line, so that simple tools (and the smoke test) can read it. */
static void write_json(const char *path, const char *kernel)
{
	FILE *f = fopen(path, "w");
	struct figure *fg;
	int i;

	if (!f)
		die(path, errno, __LINE__);
	fprintf(f, "{\n\"kernel\": ");
	json_str(f, kernel);
	fprintf(f, ",\n\"smoke\": %s,\n\"figures\": [", smoke ? "true" : "false");
	for (i = 0, fg = figures; fg; fg = fg->next) {
		if (!fg->ran || fg->skipped)
			continue;
		fprintf(f, "%s%d", i++ ? ", " : "", fg->num);
	}
	fprintf(f, "],\n\"skipped\": [");
	for (i = 0, fg = figures; fg; fg = fg->next) {
		if (!fg->ran || !fg->skipped)
			continue;
		fprintf(f, "%s%d", i++ ? ", " : "", fg->num);
	}
	fprintf(f, "],\n\"rows\": [\n");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		fprintf(f, "{\"fig\": %d, \"key\": ", r->fig);
		json_str(f, r->key);
		fprintf(f, ", \"label\": ");
		json_str(f, r->label);
		fprintf(f, ", \"unit\": ");
		json_str(f, r->unit);
		fprintf(f, ", \"median\": %.6g, \"p99\": %.6g, \"n\": %ld, \"delta\": %s}%s\n",
			r->median, r->p99, r->n, r->delta ? "true" : "false",
			i + 1 < nrows ? "," : "");
	}
	fprintf(f, "],\n\"ratios\": [\n");
	for (i = 0; i < ncmps; i++) {
		struct cmp *c = &cmps[i];

		fprintf(f, "{\"fig\": %d, \"label\": ", c->fig);
		json_str(f, c->label);
		fprintf(f, ", \"row\": ");
		json_str(f, rows[c->a].key);
		fprintf(f, ", \"baseline\": ");
		json_str(f, rows[c->b].key);
		fprintf(f, ", \"ratio\": %.6g, \"%s\": %.6g}%s\n",
			rows[c->a].median / rows[c->b].median,
			c->at_least ? "target_min" : "target_max", c->max,
			i + 1 < ncmps ? "," : "");
	}
	fprintf(f, "],\n\"notes\": [\n");
	for (i = 0; i < nnotes; i++) {
		fprintf(f, "{\"fig\": %d, \"text\": ", notes[i].fig);
		json_str(f, notes[i].text);
		fprintf(f, "}%s\n", i + 1 < nnotes ? "," : "");
	}
	fprintf(f, "]\n}\n");
	if (fclose(f))
		die(path, errno, __LINE__);
}

/* Latency distributions: 101 quantiles per row, in microseconds. */
static void write_quantiles(void)
{
	char path[512];
	FILE *f;
	int i, q;

	if (!data_dir)
		return;
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];

		if (r->n < 10 || strcmp(r->unit, "ns") ||
		    (r->fig < 64 && no_quantiles[r->fig]))
			continue;
		snprintf(path, sizeof(path), "%s/lat-%s.dat", data_dir, r->key);
		f = fopen(path, "w");
		if (!f)
			die(path, errno, __LINE__);
		fprintf(f, "# fraction latency_us (%s)\n", r->label);
		for (q = 0; q <= 100; q++) {
			long idx = (long)((double)q / 100 * (r->n - 1));

			fprintf(f, "%.2f %.3f\n", q / 100.0,
				r->samples[idx] / 1000);
		}
		fclose(f);
	}
}


const char *data_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", data_dir, name);
	return buf;
}

/* @s as a gnuplot single-quoted string: a quote inside is doubled. */
static void gp_string(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		fputc(*s, gp);
	}
	fputc('\'', gp);
}

/* One panel: the latency distributions of @keys that have data. */
void plot_latency(FILE *gp, const char *title, const char *const *keys,
		  const char *const *titles, int n)
{
	char path[512], name[96];
	const char *sep = "plot ";
	int i;

	fprintf(gp, "set logscale x\nset xlabel \"latency (us)\"\n"
		"set ylabel \"fraction of samples\"\nset yrange [0:1]\n"
		"set key bottom right\nset title \"%s\"\n", title);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "lat-%s.dat", keys[i]);
		if (access(data_path(path, sizeof(path), name), R_OK))
			continue;
		fprintf(gp, "%s", sep);
		gp_string(gp, path);
		fprintf(gp, " using 2:1 with lines lw 2 title ");
		gp_string(gp, titles[i]);
		sep = ", \\\n     ";
	}
	if (!strcmp(sep, "plot "))
		fprintf(gp, "set label 1 \"no data\" at graph 0.5, 0.5\n"
			"plot NaN notitle\nunset label 1\n");
	else
		fprintf(gp, "\n");
	fprintf(gp, "unset logscale\nset autoscale\nset yrange [*:*]\n");
}

/*
 * DIR/plot.gp: every figure's panels on one page. The caller sets the
 * output: gnuplot -e "set output 'FILE.png'" DIR/plot.gp.
 */
static void write_plot_script(const char *kernel)
{
	char path[512];
	struct figure *fg;
	int panels = 0, cols, rws;
	FILE *gp;

	if (!data_dir)
		return;
	gp = fopen(data_path(path, sizeof(path), "panels.gp"), "w");
	if (!gp)
		die(path, errno, __LINE__);
	for (fg = figures; fg; fg = fg->next) {
		if (!fg->ran || fg->skipped || !fg->plot)
			continue;
		panels += fg->plot(gp);
		fprintf(gp, "set grid\nunset logscale\nset autoscale\n"
			"set key default\nset format x\nset xtics autofreq\n");
	}
	fclose(gp);
	gp = fopen(data_path(path, sizeof(path), "plot.gp"), "w");
	if (!gp)
		die(path, errno, __LINE__);
	cols = panels > 4 ? 3 : 2;
	rws = (panels + cols - 1) / cols;
	if (rws < 1)
		rws = 1;
	fprintf(gp, "# d3dq-bench: gnuplot -e \"set output 'FILE.png'\" %s\n",
		path);
	fprintf(gp, "set terminal pngcairo size %d,%d font \",9\" noenhanced\n",
		cols * 500, rws * 420);
	fprintf(gp, "set multiplot layout %d,%d title \"d3dq-bench, %s "
		"(QEMU TCG: ratios matter, not absolute times)\"\n", rws, cols,
		kernel);
	fprintf(gp, "set grid\nload '%s'\nunset multiplot\n",
		data_path(path, sizeof(path), "panels.gp"));
	fclose(gp);
}

static void usage(FILE *f)
{
	struct figure *fg;

	fprintf(f,
		"usage: d3dq-bench [--smoke] [--json FILE] [--data DIR] [--figures LIST]\n"
		"                  [--long-signals N]\n"
		"  --smoke          few iterations of every figure (seconds, for make check)\n"
		"  --json FILE      write the results as JSON\n"
		"  --data DIR       write plot data and DIR/plot.gp (gnuplot)\n"
		"  --figures LIST   only these figures, e.g. 1,4 (default: all)\n"
		"  --long-signals N signals of figure 7 (default 1000000)\n"
		"Figures:\n");
	for (fg = figures; fg; fg = fg->next)
		fprintf(f, "  %2d  %s\n", fg->num, fg->name);
	fprintf(f, "Exit status: 0, 1 on an error, %d when there is no d3dq device.\n",
		EXIT_NO_DEVICE);
}

/* "1,4,8": mark those figures; false on a number that is no figure. */
static bool select_figures(const char *list)
{
	struct figure *fg;
	char *end;
	long n;

	for (fg = figures; fg; fg = fg->next)
		fg->want = false;
	while (*list) {
		if (*list == ',') {
			list++;
			continue;
		}
		n = strtol(list, &end, 10);
		if (end == list)
			return false;
		for (fg = figures; fg && fg->num != n; fg = fg->next)
			;
		if (!fg)
			return false;
		fg->want = true;
		list = end;
	}
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 's' },
		{ "json", required_argument, NULL, 'j' },
		{ "data", required_argument, NULL, 'd' },
		{ "figures", required_argument, NULL, 'f' },
		{ "long-signals", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *json = NULL, *figs = NULL;
	long long long_signals = 0;
	struct figure *fg;
	struct utsname u;
	char kernel[160];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			smoke = true;
			break;
		case 'j':
			json = optarg;
			break;
		case 'd':
			data_dir = optarg;
			break;
		case 'f':
			figs = optarg;
			break;
		case 'l':
			long_signals = atoll(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	for (fg = figures; fg; fg = fg->next)
		fg->want = true;
	if (figs && !select_figures(figs)) {
		usage(stderr);
		return 2;
	}
	sz = smoke ? smoke_sizes : full_sizes;
	if (long_signals >= 10)
		sz.long_signals = long_signals;

	raw_fd = open_raw();
	if (raw_fd < 0) {
		fprintf(stderr, "d3dq-bench: no d3dq render node\n");
		return EXIT_NO_DEVICE;
	}
	job_timeout_ns = get_param(DRM_D3DQ_PARAM_JOB_TIMEOUT_NS);
	has_syncobj_eventfd = probe_syncobj_eventfd();
	uname(&u);
	snprintf(kernel, sizeof(kernel), "Linux %s", u.release);

	for (fg = figures; fg; fg = fg->next) {
		if (!fg->want)
			continue;
		fg->run();
		fg->ran = true;
	}

	print_table(stdout, kernel);
	if (json)
		write_json(json, kernel);
	write_quantiles();
	write_plot_script(kernel);
	close(raw_fd);
	return 0;
}
