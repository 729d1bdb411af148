/* SPDX-License-Identifier: MIT */
/*
 * bench_equal.c - group `equal-load` (issue 30): tracebuf and LTTng-UST side
 * by side at the same offered load, what tracing costs the machine in all
 * and up to what rate nothing is lost.
 *
 * The event stream: T threads (1, 2), each writing 16-byte events (seq,
 * value) paced at R / T events per second for SECS seconds (an absolute
 * schedule, batches of ~1 ms, never spinning):
 *   tracebuf  `tracebuf record -o DIR -- tracebuf-workload --payload 16
 *             --threads T --events N --rate R/T` (record's defaults:
 *             discard, 64 x 256 KiB = 16 MiB per CPU, a wake-up when 8
 *             sub-buffers are full, 1 s live period);
 *   LTTng     `tracebuf-bench-lttng workload --threads T --events N --rate
 *             R/T` (bench/lttng/: the same loop, pacing and values) under
 *             bench/lttng/run.sh `default`: its own lttng-sessiond, a channel
 *             with LTTng's default settings (4 x 512 KiB per CPU, discard)
 *             and per-UID buffers, the consumer daemon writing to $TMPDIR.
 * Each configuration also runs untraced (the workload without a session;
 * the LTTng program under run.sh `untraced`: LTTng-UST loaded, no daemon).
 *
 * Figures of one run at rate R, T threads, each tracer:
 *   - total CPU per delivered event: (the program's CPU traced - its CPU
 *     untraced at the same rate + every tracer process's CPU) / delivered.
 *     The program's CPU is its whole process's (every thread: LTTng-UST's
 *     listener threads too) while its writers run (`proc_cpu_ns`); the
 *     tracer processes': the recorder's own getrusage (its summary line, its
 *     whole life), lttng-sessiond + lttng-consumerd from `lttng create` to
 *     `lttng stop` (run.sh's daemon_cpu_ns, schedstat of every thread);
 *   - lost %: tracebuf's recorder summary; LTTng's discarded events, read
 *     from the trace's index files (the last packet of each stream carries
 *     the stream's cumulative discarded count; `lttng list` once printed
 *     2^63 + N, issue 30), against the events the program attempted;
 *   - the program's wall time traced / untraced (1.00 while it keeps its
 *     pace: the slowdown shows once tracing makes it fall behind).
 * A first row: the floor (rdtsc + 16-byte store, bench_loop_floor), what a
 * tracer's program side pays at least per event, since the untraced
 * programs take no timestamp: it bounds the CPU ratio from below.
 * The ladder of total rates: 0.5, 1, 2, 5, 10, 20 M events/s, then doubled
 * while a tracer still lost nothing and its program kept the pace.  Then,
 * for each tracer and thread count, the highest rate with 0 lost, bisected
 * between the ladder's last lossless and first lossy rungs: a rate counts
 * when 3 tries in a row lose nothing (the lower bound is re-tried too), to
 * within 10 %, at most 8 probes and ~80 s each.
 *
 * Goals (issue 30): tracebuf's total CPU per event <= 1/8 of LTTng's at
 * every rate both sustain (0 lost, pace kept); its highest lossless rate >=
 * 3x LTTng's; at every rate its loss <= LTTng's.  The goal rows at the end
 * give the worst rung.  BENCH_QUICK=1: 1 thread, two rates, 0.25 s, no
 * bisection (the harness works; no figure means anything).  Without
 * LTTng-UST the LTTng rows and the goals are skipped with the reason.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef TB_BENCH_SRC_DIR
#define TB_BENCH_SRC_DIR "bench"
#endif

#define G "equal-load"

enum { TB, LT, NSIDE };
static const char *const side_name[NSIDE] = { "tracebuf", "LTTng" };

/* One run of a program at a rate, traced or not. */
struct eq_run {
	int ok;
	double offered;               /* total events/s asked for */
	double secs;                  /* the schedule's length */
	unsigned long long written;   /* events the program attempted */
	unsigned long long delivered; /* in the trace (traced runs) */
	unsigned long long lost;      /* lost or discarded */
	double wall_s, cpu_s;         /* the program's writing interval: wall, its process's CPU */
	double tracer_cpu_s;          /* recorder, or lttng-sessiond + lttng-consumerd */
};

static struct {
	char cli[PATH_MAX], wl[PATH_MAX], app[PATH_MAX], dir[PATH_MAX], trace[PATH_MAX + 16], out[PATH_MAX + 16];
	const char *lttng_why; /* NULL: LTTng-UST usable */
} E;

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* the workload's and the LTTng program's last lines; the recorder's summary */
static void parse_line(const char *line, struct eq_run *r, double *disc_list, double *daemon_ns)
{
	unsigned long long w, c, p, d;
	double mib, v;
	if (sscanf(line, "workload: wall_ns %llu cpu_ns %llu proc_cpu_ns %llu", &w, &c, &p) == 3) {
		r->wall_s = (double)w / 1e9;
		r->cpu_s = (double)p / 1e9;
	}
	sscanf(line, "written: %llu", &r->written);
	if (sscanf(line, "tracebuf record: %llu event%*[s], %lf MiB", &d, &mib) == 2)
		r->delivered = d;
	sscanf(line, "  lost %llu event", &r->lost);
	const char *q = strstr(line, "% with direct I/O, ");
	if (!strncmp(line, "tracebuf record: ", 17) && q && sscanf(q, "%% with direct I/O, %lf s of recorder CPU", &v) == 1)
		r->tracer_cpu_s = v;
	if (disc_list && sscanf(line, "discarded %lf", &v) == 1)
		*disc_list = v;
	if (daemon_ns && sscanf(line, "daemon_cpu_ns %lf", &v) == 1)
		*daemon_ns = v;
}

static void show_output(const char *what)
{
	fprintf(stderr, "bench equal-load: %s failed:\n", what);
	bench_cat_stderr(E.out);
}

/* The events LTTng discarded: per stream, the events_discarded field of its
 * last packet (cumulative since the stream began) in the trace's index
 * files (CTF index 1.x: 16-byte header, then big-endian u64 fields of
 * packet_index_len bytes per packet, events_discarded the 6th).  -1 when
 * there is no index file. */
static long long idx_sum;
static int idx_files;

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void add_index(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t h[16], e[128];
	if (!f)
		return;
	if (fread(h, 1, 16, f) == 16 && be64(h) >> 32 == 0xC1F1DCC1u) {
		uint32_t len = (uint32_t)h[12] << 24 | (uint32_t)h[13] << 16 | (uint32_t)h[14] << 8 | h[15];
		uint64_t last = 0;
		int any = 0;
		while (len >= 48 && len <= sizeof e && fread(e, 1, len, f) == len) {
			last = be64(e + 40);
			any = 1;
		}
		if (any) {
			idx_sum += (long long)last;
			idx_files++;
		}
	}
	fclose(f);
}

static void walk_index(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[PATH_MAX];
		struct stat sb;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (lstat(p, &sb))
			continue;
		size_t l = strlen(de->d_name);
		if (S_ISDIR(sb.st_mode))
			walk_index(p);
		else if (S_ISREG(sb.st_mode) && l > 4 && !strcmp(de->d_name + l - 4, ".idx"))
			add_index(p);
	}
	if (d)
		closedir(d);
}

static long long lttng_discarded(const char *trace)
{
	idx_sum = 0;
	idx_files = 0;
	walk_index(trace);
	return idx_files ? idx_sum : -1;
}

/* T threads at `rate` events/s in all for `secs`: one run of `side`. */
static void run_one(int side, int traced, unsigned thr, double rate, double secs, struct eq_run *r)
{
	memset(r, 0, sizeof *r);
	r->offered = rate;
	r->secs = secs;
	unsigned long long per = (unsigned long long)(rate / thr + 0.5), n = (unsigned long long)((double)per * secs);
	char st[16], sn[32], sr[32];
	snprintf(st, sizeof st, "%u", thr);
	snprintf(sn, sizeof sn, "%llu", n);
	snprintf(sr, sizeof sr, "%llu", per);
	bench_rm_rf(E.trace);
	double disc_list = -1, daemon_ns = -1;
	int status = -1;
	if (side == TB) {
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open(E.out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			unsetenv("TRACEBUF_SESSION");
			if (traced)
				execl(E.cli, E.cli, "record", "-o", E.trace, "--", E.wl, "--payload", "16", "--threads", st,
				      "--events", sn, "--rate", sr, (char *)NULL);
			else
				execl(E.wl, E.wl, "--payload", "16", "--threads", st, "--events", sn, "--rate", sr, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
	} else {
		char cmd[4 * PATH_MAX + 256];
		snprintf(cmd, sizeof cmd,
			 "sh '%s/lttng/run.sh' %s '%s' '%s' workload --threads %s --events %s --rate %s > '%s' 2>&1",
			 TB_BENCH_SRC_DIR, traced ? "default" : "untraced", E.trace, E.app, st, sn, sr, E.out);
		status = system(cmd);
	}
	FILE *f = fopen(E.out, "r");
	char line[512];
	while (f && fgets(line, sizeof line, f))
		parse_line(line, r, &disc_list, &daemon_ns);
	if (f)
		fclose(f);
	r->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->written && r->wall_s > 0;
	if (side == LT && traced) {
		long long d = lttng_discarded(E.trace);
		if (d < 0 || daemon_ns <= 0 || (unsigned long long)d > r->written) {
			fprintf(stderr, "bench equal-load: LTTng trace without index files, or no daemon CPU time "
					"(/proc/PID/task/TID/schedstat)\n");
			r->ok = 0;
		} else {
			r->lost = (unsigned long long)d;
			r->delivered = r->written - r->lost;
			r->tracer_cpu_s = daemon_ns / 1e9;
			if (disc_list >= 0 && disc_list != (double)d)
				fprintf(stderr, "bench equal-load: `lttng list` said %.0f discarded, the index files %lld\n",
					disc_list, d);
		}
	}
	if (side == TB && traced && r->ok && (!r->delivered || r->delivered + r->lost != r->written)) {
		fprintf(stderr, "bench equal-load: record delivered %llu + lost %llu != written %llu\n", r->delivered,
			r->lost, r->written);
		r->ok = 0;
	}
	if (!r->ok)
		show_output(side == TB ? "tracebuf record" : "bench/lttng/run.sh");
	bench_rm_rf(E.trace);
}

/* the program kept the schedule (a paced run lasts `secs`) */
static int kept_pace(const struct eq_run *r)
{
	return r->wall_s <= r->secs * 1.1;
}

static int sustains(const struct eq_run *r)
{
	return r->ok && r->lost == 0 && kept_pace(r);
}

/* what the program really offered: events / wall time */
static double achieved(const struct eq_run *r)
{
	return r->wall_s > 0 ? (double)r->written / r->wall_s : 0;
}

#define MAXRUNG 10
struct rung {
	double rate;
	struct eq_run u[NSIDE], r[NSIDE]; /* untraced, traced */
};

static double cpu_per_event(const struct rung *g, int s, double *prog, double *tracer)
{
	const struct eq_run *u = &g->u[s], *r = &g->r[s];
	double d = r->delivered ? (double)r->delivered : 1;
	*prog = (r->cpu_s - u->cpu_s) * 1e9 / d;
	*tracer = r->tracer_cpu_s * 1e9 / d;
	return *prog + *tracer;
}

static void rate_name(double rate, char *buf, size_t n)
{
	snprintf(buf, n, "%g M/s", rate / 1e6);
}

static void print_rung(struct bench_table *t, unsigned thr, const struct rung *g, int lttng, double *worst_cpu,
		       double *worst_loss)
{
	char rn[32], cfg[160];
	rate_name(g->rate, rn, sizeof rn);
	double cpu[NSIDE] = { 0, 0 }, prog[NSIDE] = { 0, 0 }, trc[NSIDE] = { 0, 0 };
	int ok[NSIDE];
	for (int s = 0; s < NSIDE; s++) {
		ok[s] = (s == TB || lttng) && g->u[s].ok && g->r[s].ok;
		if (ok[s])
			cpu[s] = cpu_per_event(g, s, &prog[s], &trc[s]);
	}
	int both = ok[TB] && ok[LT] && sustains(&g->r[TB]) && sustains(&g->r[LT]);
	for (int k = 0; k < NSIDE; k++) {
		int s = k == 0 ? LT : TB; /* LTTng's row first: the baseline of tracebuf's */
		if (s == LT && !lttng)
			continue;
		if (!ok[s]) {
			snprintf(cfg, sizeof cfg, "%u thr %s: %s", thr, rn, side_name[s]);
			bench_skip(t, G, cfg, "a run failed (its output above)");
			continue;
		}
		snprintf(cfg, sizeof cfg, "%u thr %s: %s CPU/ev (prog %+.1f, %s %.1f)", thr, rn, side_name[s], prog[s],
			 s == TB ? "recorder" : "daemons", trc[s]);
		if (s == LT || !ok[LT] || cpu[LT] <= 0) {
			bench_row(t, G, cfg, cpu[s], "ns/ev", 0, NULL, NULL);
		} else {
			/* the goal holds where both sustain the rate; elsewhere the ratio is shown without it */
			bench_row(t, G, cfg, cpu[s], "ns/ev", cpu[TB] / cpu[LT], "tracebuf / LTTng", both ? "<= 0.125" : NULL);
			if (both && cpu[TB] / cpu[LT] > *worst_cpu)
				*worst_cpu = cpu[TB] / cpu[LT];
		}
	}
	double lp[NSIDE];
	for (int s = 0; s < NSIDE; s++)
		lp[s] = g->r[s].written ? 100.0 * (double)g->r[s].lost / (double)g->r[s].written : 0;
	int lt_ok = lttng && g->r[LT].ok;
	if (lt_ok) {
		snprintf(cfg, sizeof cfg, "%u thr %s: LTTng lost (achieved %.2f M/s)", thr, rn, achieved(&g->r[LT]) / 1e6);
		bench_row(t, G, cfg, lp[LT], "%", 0, NULL, NULL);
	}
	if (g->r[TB].ok) {
		snprintf(cfg, sizeof cfg, "%u thr %s: tracebuf lost (achieved %.2f M/s)", thr, rn, achieved(&g->r[TB]) / 1e6);
		if (lt_ok) {
			bench_row(t, G, cfg, lp[TB], "%", lp[TB] - lp[LT], "tracebuf - LTTng (points)", "<= 0");
			if (lp[TB] - lp[LT] > *worst_loss)
				*worst_loss = lp[TB] - lp[LT];
		} else {
			bench_row(t, G, cfg, lp[TB], "%", 0, NULL, NULL);
		}
	}
	for (int s = 0; s < NSIDE; s++) {
		if (!ok[s])
			continue;
		snprintf(cfg, sizeof cfg, "%u thr %s: %s program wall (untraced %.3f s)", thr, rn, side_name[s],
			 g->u[s].wall_s);
		bench_row(t, G, cfg, g->r[s].wall_s, "s", g->r[s].wall_s / g->u[s].wall_s, "traced / untraced", NULL);
	}
}

/* 3 tries at `rate`: 1 when none lost an event and each kept the pace; the
 * lowest achieved rate of the tries in *ach */
static int lossless3(int side, unsigned thr, double rate, double secs, int tries, double *ach)
{
	struct eq_run r;
	*ach = rate;
	for (int i = 0; i < tries; i++) {
		run_one(side, 1, thr, rate, secs, &r);
		if (!r.ok || r.lost)
			return 0;
		double a = achieved(&r) < rate ? achieved(&r) : rate;
		if (a < *ach)
			*ach = a;
	}
	return 1;
}

/* The highest lossless rate of `side` with thr threads from the ladder's
 * runs, bisected.  *bound: 1 when nothing was lost up to the ladder's top
 * (the figure is a lower bound). */
static double highest(int side, unsigned thr, const struct rung *g, int n, double secs, int *bound, int *probes)
{
	double lo = 0, lo_ach = 0, hi = 0;
	*bound = 0;
	*probes = 0;
	for (int i = 0; i < n; i++) {
		if (!g[i].r[side].ok)
			continue;
		if (g[i].r[side].lost) {
			hi = g[i].rate;
			break;
		}
		lo = g[i].rate;
		lo_ach = achieved(&g[i].r[side]) < lo ? achieved(&g[i].r[side]) : lo;
	}
	if (hi == 0) {
		*bound = 1;
		return lo_ach;
	}
	double t0 = mono_s(), ach;
	/* the ladder tried lo once: two more tries; while they lose, halve it
	 * (3 tries for a rate the ladder did not try) */
	int tries = 2;
	if (lo == 0) {
		lo = lo_ach = hi / 2;
		tries = 3;
	}
	while (lo >= 100000) {
		++*probes;
		if (lossless3(side, thr, lo, secs, tries, &ach)) {
			lo_ach = ach < lo_ach ? ach : lo_ach;
			break;
		}
		hi = lo;
		lo = lo_ach = lo / 2;
		tries = 3;
	}
	if (lo < 100000)
		return 0;
	while (hi / lo > 1.1 && *probes < 8 && mono_s() - t0 < 80) {
		double mid = sqrt(lo * hi);
		++*probes;
		if (lossless3(side, thr, mid, secs, 3, &ach)) {
			lo = mid;
			lo_ach = ach;
		} else {
			hi = mid;
		}
	}
	return lo_ach;
}

void bench_equal(struct bench_table *t)
{
	bench_build_path("TB_CLI", "tracebuf", E.cli, sizeof E.cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", E.wl, sizeof E.wl);
	bench_build_path(NULL, "bench/lttng/tracebuf-bench-lttng", E.app, sizeof E.app);
	if (access(E.cli, X_OK) || access(E.wl, X_OK)) {
		bench_skip(t, G, "equal load", "tracebuf or tracebuf-workload not built ($TB_CLI)");
		return;
	}
	E.lttng_why = bench_lttng_unusable();
	int lttng = !E.lttng_why;
	if (bench_mkdtemp(E.dir, sizeof E.dir, "equal")) {
		bench_skip(t, G, "equal load", strerror(errno));
		return;
	}
	snprintf(E.trace, sizeof E.trace, "%s/trace", E.dir);
	snprintf(E.out, sizeof E.out, "%s/out", E.dir);
	if (!lttng)
		bench_skip(t, G, "LTTng-UST rows and the goals", E.lttng_why);
	{
		/* what any tracer's program side pays at least: a timestamp and
		 * the store (best of 3; the untraced programs take no timestamp) */
		uint64_t n = bench_quick() ? 1000000 : 20000000;
		double fl = 1e30;
		for (int i = 0; i < 3; i++) {
			double t0 = mono_s();
			bench_loop_floor(n);
			double v = (mono_s() - t0) * 1e9 / (double)n;
			fl = v < fl ? v : fl;
		}
		bench_row(t, G, "floor: rdtsc + 16-byte store, per event", fl, "ns/ev", 0, NULL, NULL);
	}

	int quick = bench_quick();
	static const double ladder[] = { 0.5e6, 1e6, 2e6, 5e6, 10e6, 20e6 };
	const double quick_ladder[] = { 0.5e6, 2e6 };
	const double *lad = quick ? quick_ladder : ladder;
	int nlad = quick ? 2 : (int)(sizeof ladder / sizeof ladder[0]);
	double secs = quick ? 0.25 : 2.0;
	unsigned nthr_max = quick ? 1 : 2;
	double worst_cpu = 0, worst_loss = -1e9;
	double best[2][NSIDE];
	int bound[2][NSIDE];

	for (unsigned thr = 1; thr <= nthr_max; thr++) {
		static struct rung g[MAXRUNG];
		int n = 0;
		for (double rate = lad[0]; n < MAXRUNG; n++) {
			struct rung *r = &g[n];
			r->rate = rate;
			for (int s = 0; s < NSIDE; s++) {
				if (s == LT && !lttng) {
					memset(&r->u[s], 0, sizeof r->u[s]);
					memset(&r->r[s], 0, sizeof r->r[s]);
					continue;
				}
				run_one(s, 0, thr, rate, secs, &r->u[s]);
				run_one(s, 1, thr, rate, secs, &r->r[s]);
			}
			print_rung(t, thr, r, lttng, &worst_cpu, &worst_loss);
			if (n + 1 < nlad) {
				rate = lad[n + 1];
				continue;
			}
			/* past the ladder: on while a tracer lost nothing at its pace */
			int more = 0;
			for (int s = 0; s < NSIDE; s++)
				more |= (s == TB || lttng) && sustains(&r->r[s]);
			if (quick || !more || rate >= 160e6) {
				n++;
				break;
			}
			rate *= 2;
		}
		if (quick)
			continue;
		for (int k = 0; k < NSIDE; k++) {
			int s = k == 0 ? LT : TB; /* LTTng's first: the baseline of tracebuf's row */
			if (s == LT && !lttng)
				continue;
			int probes;
			best[thr - 1][s] = highest(s, thr, g, n, secs, &bound[thr - 1][s], &probes);
			char cfg[160];
			snprintf(cfg, sizeof cfg, "%u thr: %s highest rate with 0 lost%s (%d probes)", thr, side_name[s],
				 bound[thr - 1][s] ? ", lower bound: none lost on the ladder" : "", probes);
			if (s == LT || !lttng || best[thr - 1][LT] <= 0)
				bench_row(t, G, cfg, best[thr - 1][s] / 1e6, "M ev/s", 0, NULL, NULL);
			else
				bench_row(t, G, cfg, best[thr - 1][s] / 1e6, "M ev/s", best[thr - 1][TB] / best[thr - 1][LT],
					  "tracebuf / LTTng", ">= 3");
		}
	}
	if (lttng) {
		if (worst_cpu > 0)
			bench_row(t, G, "goal: worst CPU/ev ratio where both sustain", worst_cpu, "x", worst_cpu,
				  "tracebuf / LTTng", "<= 0.125");
		else
			bench_skip(t, G, "goal: CPU/ev where both sustain", "no rate that both sustained");
		bench_row(t, G, "goal: worst loss difference at any rate", worst_loss, "points", worst_loss,
			  "tracebuf - LTTng (points)", "<= 0");
	}
	bench_rm_rf(E.dir);
}
