/* SPDX-License-Identifier: MIT */
/*
 * bench_flight_lttng.c - the `flight` group (docs/FLIGHT-RECORDER.md,
 * "Costs measured"): a snapshot on an event, tracebuf's `--snapshot-on`
 * next to LTTng 2.13's `add-trigger ... --action snapshot-session`, in one
 * run, on the same event stream:
 *
 *   the stream    2 threads x 25 000 requests/s (100 000 events/s in all),
 *                 each request a begin event and an end event { seq, status,
 *                 route }; thread 0's request N-1, 2N-1, ... (N = 25 000: one
 *                 a second) ends with status 500; $BENCH_FLIGHT_S seconds
 *                 (30 by default, 8 under BENCH_QUICK=1).  tracebuf:
 *                 tracebuf-workload --requests --error-every N; LTTng-UST:
 *                 bench/lttng's tracebuf-bench-lttng workload --requests
 *                 --error-every N (the same loop and pacing);
 *   tracebuf      record --mode overwrite --snapshot-dir D --sb-size 256K
 *                 --sb-count 8 --snapshot-on 'workload:request_end[status>=500]';
 *   LTTng         bench/lttng/run.sh snapshot: its own lttng-sessiond, a
 *                 snapshot session, a per-UID overwrite channel of 8 x 256
 *                 KiB per CPU, the two events enabled, and `lttng
 *                 add-trigger --condition event-rule-matches --type=user
 *                 --name=tbbench:request_end --filter 'status >= 500'
 *                 --action snapshot-session`;
 *   latency       each program prints the CLOCK_REALTIME it read just before
 *                 each error's end event; a snapshot is complete when its
 *                 last file was written: the largest mtime of the files of
 *                 the snapshot's directory (the same measure for both; its
 *                 resolution is the kernel's coarse clock, a tick: 4 ms at
 *                 HZ=250 — the figures are lower bounds by up to a tick);
 *                 each snapshot is paired with the newest error before it;
 *                 readable: babeltrace2 reads every snapshot with exit 0 and
 *                 no error logged, and finds the status-500 event in it;
 *   CPU           the tracer's own: tracebuf's recorder process (utime +
 *                 stime of every thread, from the zombie's /proc/PID/stat),
 *                 LTTng's lttng-sessiond and every process under it
 *                 (lttng-consumerd, run-as), run.sh's daemon_cpu_ns; each
 *                 program's own CPU per event; and the sum of the tracer's
 *                 and the program's: LTTng-UST evaluates the trigger's
 *                 filter in the program, tracebuf in the recorder's scan
 *                 thread (its share: record's summary, `the scan took`).
 *
 * Skipped with the reason when LTTng cannot run here (bench_lttng_unusable)
 * or a side fails (its output printed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef TB_BENCH_SRC_DIR
#define TB_BENCH_SRC_DIR "bench"
#endif

#define G "flight"
#define REQ_RATE 25000u /* requests per second per thread, 2 threads */
#define MAX_ERR 4096

struct side {
	const char *name;
	uint64_t err_ns[MAX_ERR]; /* the errors' times, as the program printed them */
	unsigned nerr;
	double lat_ms[MAX_ERR]; /* per snapshot: its last write - the newest error before it */
	unsigned nsnap, readable;
	double tracer_cpu_s;   /* recorder / sessiond + consumerd */
	double consumerd_s;    /* LTTng: consumerd's share; -1 for tracebuf */
	double prog_cpu_ns;    /* the program's whole-process CPU */
	double scan_s;         /* tracebuf: the scan thread's share (record's summary); -1 unknown */
	unsigned long long scanned, unscanned; /* tracebuf: the scan's counts (record's summary) */
	unsigned long long written;
	int ok;
};

static int64_t newest_ns;
static int newest(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p;
	(void)f;
	if (flag == FTW_F) {
		int64_t t = (int64_t)st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec;
		if (t > newest_ns)
			newest_ns = t;
	}
	return 0;
}

/* the program's lines: error times, proc_cpu_ns, written */
static int parse_program(const char *log, struct side *s)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	unsigned long long v, w, c, p;
	int got = 0;
	s->nerr = 0;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "workload: error_realtime_ns %llu", &v) == 1 && s->nerr < MAX_ERR)
			s->err_ns[s->nerr++] = v;
		if (sscanf(line, "workload: wall_ns %llu cpu_ns %llu proc_cpu_ns %llu", &w, &c, &p) == 3) {
			s->prog_cpu_ns = (double)p;
			got |= 1;
		}
		if (sscanf(line, "written: %llu", &s->written) == 1)
			got |= 2;
	}
	if (f)
		fclose(f);
	return got == 3 && s->nerr > 0;
}

/* babeltrace2 reads dir with exit 0 and no error on stderr (a log line of level E
 * or F; tracebuf's snapshots have the W line of docs/CTF.md "Losses by cause"
 * and both the WARNING of the events overwritten before the oldest packet kept),
 * and prints the error event */
static int readable(const char *dir, const char *tmpdir)
{
	char cmd[3 * PATH_MAX + 1024], err[PATH_MAX + 16];
	snprintf(err, sizeof err, "%s/bt2.err", tmpdir);
	snprintf(cmd, sizeof cmd, "babeltrace2 '%s' 2> '%s' | grep -q 'status = 500'", dir, err);
	if (system(cmd) != 0)
		return 0;
	snprintf(cmd, sizeof cmd, "grep -q -E '^[0-9-]+ [0-9:.]+ +[0-9]+ +[0-9]+ [EF] ' '%s'", err);
	return system(cmd) != 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the snapshots under parent whose names start with prefix, in order of their
 * last write: latency against the newest error before it, readability */
static void snapshots(struct side *s, const char *parent, const char *prefix, const char *sub, const char *tmpdir)
{
	DIR *d = opendir(parent);
	char *names[MAX_ERR];
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) && n < MAX_ERR)
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			names[n++] = strdup(de->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	s->nsnap = 0;
	s->readable = 0;
	for (unsigned i = 0; i < n; i++) {
		char path[PATH_MAX + 600];
		snprintf(path, sizeof path, "%s/%s", parent, names[i]);
		newest_ns = 0;
		nftw(path, newest, 16, FTW_PHYS); /* tracebuf: trigger.json, written after the trace */
		snprintf(path, sizeof path, "%s/%s%s", parent, names[i], sub);
		uint64_t done = (uint64_t)newest_ns, from = 0;
		for (unsigned e = 0; e < s->nerr; e++)
			if (s->err_ns[e] <= done && s->err_ns[e] > from)
				from = s->err_ns[e];
		if (from)
			s->lat_ms[s->nsnap++] = (double)(done - from) / 1e6;
		s->readable += readable(path, tmpdir);
		free(names[i]);
	}
}

/* tracebuf's side: the recorder's own CPU from its zombie */
static void run_tracebuf(struct side *s, const char *cli, const char *wl, const char *dir, const char *events,
			 const char *every)
{
	char snapdir[PATH_MAX + 16], log[PATH_MAX + 16], rate[16];
	snprintf(snapdir, sizeof snapdir, "%s/tb", dir);
	snprintf(log, sizeof log, "%s/tb.log", dir);
	snprintf(rate, sizeof rate, "%u", REQ_RATE);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(cli, cli, "record", "--mode", "overwrite", "--snapshot-dir", snapdir, "--sb-size", "256K",
		      "--sb-count", "8", "--snapshot-on", "workload:request_end[status>=500]", "--", wl, "--requests",
		      "--threads", "2", "--rate", rate, "--events", events, "--error-every", every, (char *)NULL);
		_exit(127);
	}
	s->tracer_cpu_s = -1;
	s->consumerd_s = -1;
	if (pid < 0)
		return;
	siginfo_t si;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0) {
		char path[64], buf[1024];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		unsigned long ut = 0, st = 0;
		char *p;
		if (f && fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
			s->tracer_cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		if (f)
			fclose(f);
	}
	int status;
	waitpid(pid, &status, 0);
	s->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && parse_program(log, s) && s->tracer_cpu_s >= 0;
	if (!s->ok) {
		bench_cat_stderr(log);
		return;
	}
	s->scan_s = -1;
	FILE *f = fopen(log, "r");
	char line[2048];
	while (f && fgets(line, sizeof line, f)) {
		char *p = strstr(line, "the scan took ");
		if (p)
			sscanf(p, "the scan took %lf", &s->scan_s);
		if ((p = strstr(line, "--snapshot-on scanned ")))
			sscanf(p, "--snapshot-on scanned %llu events, %*u met a condition, %llu unscanned", &s->scanned,
			       &s->unscanned);
	}
	if (f)
		fclose(f);
	snapshots(s, snapdir, "0", "/trace", dir);
}

static void run_lttng(struct side *s, const char *app, const char *dir, const char *events, const char *every,
		      unsigned want)
{
	char out[PATH_MAX + 16], log[PATH_MAX + 16], cmd[4 * PATH_MAX + 256], w[16];
	snprintf(out, sizeof out, "%s/lttng", dir);
	snprintf(log, sizeof log, "%s/lttng.log", dir);
	snprintf(w, sizeof w, "%u", want);
	setenv("TB_LTTNG_SNAPSHOTS", w, 1);
	snprintf(cmd, sizeof cmd,
		 "sh '%s/lttng/run.sh' snapshot '%s' '%s' workload --requests --threads 2 --rate %u --events %s "
		 "--error-every %s > '%s' 2>&1",
		 TB_BENCH_SRC_DIR, out, app, REQ_RATE, events, every, log);
	int rc = system(cmd);
	unsetenv("TB_LTTNG_SNAPSHOTS");
	long long dcpu = -1, ccpu = -1;
	FILE *f = fopen(log, "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "daemon_cpu_ns %lld", &dcpu);
		sscanf(line, "consumerd_cpu_ns %lld", &ccpu);
	}
	if (f)
		fclose(f);
	s->tracer_cpu_s = dcpu >= 0 ? (double)dcpu / 1e9 : -1;
	s->consumerd_s = ccpu >= 0 ? (double)ccpu / 1e9 : -1;
	s->ok = rc == 0 && parse_program(log, s) && dcpu >= 0;
	if (!s->ok) {
		bench_cat_stderr(log);
		return;
	}
	snapshots(s, out, "snapshot-", "", dir);
}

void bench_flight_lttng(struct bench_table *t)
{
	char cli[PATH_MAX], wl[PATH_MAX], app[PATH_MAX], dir[PATH_MAX], cfg[256];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	bench_build_path(NULL, "bench/lttng/tracebuf-bench-lttng", app, sizeof app);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, G, "snapshot on an event", "tracebuf or tracebuf-workload not built ($TB_CLI, $TB_WORKLOAD)");
		return;
	}
	const char *why = bench_lttng_unusable();
	if (why) {
		bench_skip(t, G, "snapshot on an event, LTTng side", why);
		return;
	}
	if (system("babeltrace2 --version > /dev/null 2>&1") != 0) {
		bench_skip(t, G, "snapshot on an event", "babeltrace2 is not installed: readability is checked with it");
		return;
	}
	unsigned secs = bench_env_seconds("BENCH_FLIGHT_S", bench_quick() ? 8 : 30);
	if (secs < 2 || secs > 3600) {
		bench_skip(t, G, "snapshot on an event", "BENCH_FLIGHT_S: seconds, 2..3600");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "flight")) {
		bench_skip(t, G, "snapshot on an event", strerror(errno));
		return;
	}
	char events[32], every[32];
	snprintf(events, sizeof events, "%llu", (unsigned long long)REQ_RATE * secs);
	snprintf(every, sizeof every, "%u", REQ_RATE);
	static struct side tb, lt;
	memset(&tb, 0, sizeof tb);
	memset(&lt, 0, sizeof lt);
	run_tracebuf(&tb, cli, wl, dir, events, every);
	run_lttng(&lt, app, dir, events, every, secs);
	bench_rm_rf(dir);
	if (!tb.ok || !lt.ok) {
		if (!lt.ok)
			bench_skip(t, G, "LTTng add-trigger --action snapshot-session",
				   "bench/lttng/run.sh snapshot failed (its output above)");
		if (!tb.ok)
			bench_skip(t, G, "tracebuf --snapshot-on", "tracebuf record failed (its output above)");
		return;
	}
	snprintf(cfg, sizeof cfg, "%u s, 2 x %u req/s: snapshots, LTTng", secs, REQ_RATE);
	bench_row(t, G, cfg, (double)lt.nsnap, "snaps", lt.nerr ? (double)lt.nsnap / lt.nerr : 0, "snapshots / errors",
		  "1");
	bench_row(t, G, "snapshots, tracebuf", (double)tb.nsnap, "snaps", tb.nerr ? (double)tb.nsnap / tb.nerr : 0,
		  "snapshots / errors", "1");
	bench_row(t, G, "readable by babeltrace2 (error in it), LTTng", (double)lt.readable, "snaps",
		  lt.nsnap ? (double)lt.readable / lt.nsnap : 0, "readable / snapshots", "1");
	bench_row(t, G, "readable by babeltrace2 (error in it), tracebuf", (double)tb.readable, "snaps",
		  tb.nsnap ? (double)tb.readable / tb.nsnap : 0, "readable / snapshots", "1");
	if (lt.nsnap && tb.nsnap) {
		double l50 = bench_pct(lt.lat_ms, lt.nsnap, 0.5), l99 = bench_pct(lt.lat_ms, lt.nsnap, 0.99);
		double t50 = bench_pct(tb.lat_ms, tb.nsnap, 0.5), t99 = bench_pct(tb.lat_ms, tb.nsnap, 0.99);
		bench_row(t, G, "event -> snapshot written p50, LTTng", l50, "ms", 0, NULL, NULL);
		bench_row(t, G, "event -> snapshot written p50, tracebuf", t50, "ms", l50 > 0 ? t50 / l50 : 0,
			  "tracebuf / LTTng", NULL);
		bench_row(t, G, "event -> snapshot written p99, LTTng", l99, "ms", 0, NULL, NULL);
		bench_row(t, G, "event -> snapshot written p99, tracebuf", t99, "ms", l99 > 0 ? t99 / l99 : 0,
			  "tracebuf / LTTng", NULL);
	} else {
		bench_skip(t, G, "event -> snapshot written", "a side wrote no snapshot after an error");
	}
	snprintf(cfg, sizeof cfg, "tracer CPU, LTTng sessiond+consumerd (cons %.2f s)", lt.consumerd_s);
	bench_row(t, G, cfg, lt.tracer_cpu_s, "s", 0, NULL, NULL);
	snprintf(cfg, sizeof cfg, "tracer CPU, tracebuf recorder (scan %.2f s)", tb.scan_s);
	if (tb.unscanned)
		bench_skip(t, G, "tracebuf's scan", "events were overwritten before the scan read them (record's summary)");
	bench_row(t, G, cfg, tb.tracer_cpu_s, "s",
		  lt.tracer_cpu_s > 0 ? tb.tracer_cpu_s / lt.tracer_cpu_s : 0, "tracebuf / LTTng", "<= 1");
	double lp = lt.prog_cpu_ns / (double)lt.written, tp = tb.prog_cpu_ns / (double)tb.written;
	bench_row(t, G, "program CPU / event, LTTng-UST", lp, "ns/ev", 0, NULL, NULL);
	bench_row(t, G, "program CPU / event, tracebuf", tp, "ns/ev", lp > 0 ? tp / lp : 0, "tracebuf / LTTng", NULL);
	/* LTTng-UST evaluates the trigger's filter in the program (its event
	 * notifier), tracebuf in the recorder's scan: the sum is the whole bill */
	double lsum = lt.tracer_cpu_s + lt.prog_cpu_ns / 1e9, tsum = tb.tracer_cpu_s + tb.prog_cpu_ns / 1e9;
	bench_row(t, G, "tracer + program CPU, LTTng", lsum, "s", 0, NULL, NULL);
	bench_row(t, G, "tracer + program CPU, tracebuf", tsum, "s", lsum > 0 ? tsum / lsum : 0, "tracebuf / LTTng",
		  "<= 1");
}
