/* SPDX-License-Identifier: MIT */
/*
 * bench_soak.c - the `soak` group (docs/FLIGHT-RECORDER.md, "Costs
 * measured"): a flight recorder left running with a trigger every second.
 *
 *   the program   tracebuf-workload --threads 2 --rate 50000 (100 000
 *                 events/s in all, `workload:tick`, 28 bytes) --trigger-ms
 *                 1000 (tb_trigger("workload") every second), for
 *                 $BENCH_SOAK_S seconds (600 by default, 20 under
 *                 BENCH_QUICK=1);
 *   two copies    started together: one under `tracebuf record --mode
 *                 overwrite --snapshot-dir D --max-snapshots 20 --sb-size
 *                 256K --sb-count 8` (a 2 MiB ring per CPU), one untraced
 *                 (no session: its events and triggers are off) — the same
 *                 machine load on both;
 *   sampled       every tenth of the run (each minute of the 10-minute run):
 *                 the recorder's VmRSS and RssAnon (/proc/PID/status) and its
 *                 CPU time (utime + stime, /proc/PID/stat: every thread of
 *                 the recorder, not the program's), and the snapshots
 *                 completed so far;
 *   latency       trigger -> snapshot complete: D is watched with inotify;
 *                 a snapshot is complete when its `.NNNNNN.partial`
 *                 directory is renamed to `NNNNNN-TIME` (src/consumer/
 *                 flight_store.c: trigger.json is written last, then the
 *                 rename; a reader never sees less), the moment this process
 *                 reads the IN_MOVED_TO event (CLOCK_REALTIME), minus the
 *                 trigger's `realtime_ns` in its trigger.json; also the
 *                 trigger -> copy started part (`copy_realtime_ns`).
 *
 * Figures, each against a baseline of the same run: the recorder's RSS and
 * CPU per snapshot of every tenth against the first (flat = 1.00); the
 * program's CPU per event (its whole process, every thread: proc_cpu_ns of
 * the `workload:` line) traced against untraced; the latency p50 (baseline),
 * p99 / p50, the last tenth's p50 against the first's; the snapshots against
 * the triggers (exactly one per call); the directory's size at the end
 * against 20 snapshots' worth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define G "soak"
#define RATE 50000u /* per thread, 2 threads */
#define KEEP 20
#define MAX_TENTHS 10
#define MAX_SNAPS 100000

static uint64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* fork + exec argv, stdout and stderr into log; untraced: no session in its environment */
static pid_t spawn(char *const argv[], const char *log, int untraced)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if (untraced)
			unsetenv("TRACEBUF_SESSION");
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

struct sample {
	double rss_mib, anon_mib; /* VmRSS, RssAnon */
	double cpu_s;             /* utime + stime */
	unsigned snaps;           /* snapshots complete so far */
};

/* the recorder's memory and CPU now; 0, or -1 when /proc has no such process */
static int sample(pid_t pid, struct sample *s, unsigned snaps)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long kb;
	s->rss_mib = s->anon_mib = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			s->rss_mib = (double)kb / 1024;
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			s->anon_mib = (double)kb / 1024;
	}
	fclose(f);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	unsigned long ut = 0, st = 0;
	int ok = 0;
	if (fgets(line, sizeof line, f)) {
		char *p = strrchr(line, ')');
		ok = p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2;
	}
	fclose(f);
	s->cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	s->snaps = snaps;
	return ok ? 0 : -1;
}

/* a field `"key": N` of a trigger.json; 0 when absent */
static uint64_t json_u64(const char *buf, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *p = strstr(buf, k);
	return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* "workload: wall_ns W cpu_ns C proc_cpu_ns P", "workload: triggers N" and "written: N" of a log */
static int workload_line(const char *log, double *proc_cpu_ns, unsigned long long *written, unsigned long long *triggers)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	int got = 0;
	unsigned long long w, c, p;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "workload: wall_ns %llu cpu_ns %llu proc_cpu_ns %llu", &w, &c, &p) == 3) {
			*proc_cpu_ns = (double)p;
			got |= 1;
		}
		if (sscanf(line, "written: %llu", written) == 1)
			got |= 2;
		if (sscanf(line, "workload: triggers %llu", triggers) == 1)
			got |= 4;
	}
	if (f)
		fclose(f);
	return got == 7;
}

static double lat[MAX_SNAPS], copy[MAX_SNAPS], lat_first[MAX_SNAPS], lat_last[MAX_SNAPS];
static size_t nlat, nfirst, nlast;
static unsigned snaps, bad_json;
static const char *snapdir_;

/* waits up to ms for snapshots renamed into place; each one's latency, in tenth k */
static void drain(int in, int ms, unsigned k)
{
	char buf[8192] __attribute__((aligned(8)));
	struct pollfd pf = { in, POLLIN, 0 };
	if (poll(&pf, 1, ms) > 0) {
		ssize_t n = read(in, buf, sizeof buf);
		uint64_t seen = now_ns(CLOCK_REALTIME);
		for (ssize_t off = 0; n > 0 && off < n;) {
			struct inotify_event *ev = (struct inotify_event *)(buf + off);
			off += (ssize_t)(sizeof *ev + ev->len);
			if (!ev->len || ev->name[0] < '0' || ev->name[0] > '9' || !(ev->mask & IN_MOVED_TO))
				continue;
			snaps++;
			char path[PATH_MAX + 300], js[4096];
			snprintf(path, sizeof path, "%s/%s/trigger.json", snapdir_, ev->name);
			FILE *f = fopen(path, "r");
			size_t got = f ? fread(js, 1, sizeof js - 1, f) : 0;
			if (f)
				fclose(f);
			js[got] = 0;
			uint64_t trig = json_u64(js, "realtime_ns"), cp = json_u64(js, "copy_realtime_ns");
			if (!trig || !cp || trig > seen || nlat >= MAX_SNAPS) {
				bad_json++;
				continue;
			}
			double l = (double)(seen - trig) / 1e6;
			copy[nlat] = cp > trig ? (double)(cp - trig) / 1e6 : 0;
			lat[nlat++] = l;
			if (k == 1)
				lat_first[nfirst++] = l;
			if (k == MAX_TENTHS)
				lat_last[nlast++] = l;
		}
	}
}

void bench_soak(struct bench_table *t)
{
	char cli[PATH_MAX], wl[PATH_MAX], dir[PATH_MAX], snapdir[PATH_MAX + 8], rlog[PATH_MAX + 16],
		ulog[PATH_MAX + 16], cfg[256];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, G, "flight recorder soak", "tracebuf or tracebuf-workload not built ($TB_CLI, $TB_WORKLOAD)");
		return;
	}
	unsigned secs = bench_env_seconds("BENCH_SOAK_S", bench_quick() ? 20 : 600);
	if (secs < 10 || secs > 86400) {
		bench_skip(t, G, "flight recorder soak", "BENCH_SOAK_S: seconds, 10..86400");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "soak")) {
		bench_skip(t, G, "flight recorder soak", strerror(errno));
		return;
	}
	snprintf(snapdir, sizeof snapdir, "%s/snaps", dir);
	snprintf(rlog, sizeof rlog, "%s/recorded.log", dir);
	snprintf(ulog, sizeof ulog, "%s/untraced.log", dir);
	if (mkdir(snapdir, 0700) < 0) {
		bench_skip(t, G, "flight recorder soak", strerror(errno));
		bench_rm_rf(dir);
		return;
	}
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in < 0 || inotify_add_watch(in, snapdir, IN_MOVED_TO) < 0) {
		bench_skip(t, G, "flight recorder soak", "inotify on the snapshot directory failed");
		bench_rm_rf(dir);
		return;
	}
	/* the writers run 3 s longer than the sampling, so that the last sample
	 * sees a recorder still working */
	char events[32], keep[16];
	snprintf(events, sizeof events, "%llu", (unsigned long long)RATE * (secs + 3));
	snprintf(keep, sizeof keep, "%u", KEEP);
	char rate[16];
	snprintf(rate, sizeof rate, "%u", RATE);
	char *rec_argv[] = { cli,	  "record",  "-q",	"--mode",  "overwrite",	 "--snapshot-dir", snapdir,
			     "--max-snapshots", keep,	"--sb-size", "256K", "--sb-count", "8",	      "--",
			     wl,	  "--threads", "2",	"--rate",  rate,	 "--events",	   events,
			     "--trigger-ms", "1000",	NULL };
	char *un_argv[] = { wl, "--threads", "2", "--rate", rate, "--events", events, "--trigger-ms", "1000", NULL };
	pid_t rec = spawn(rec_argv, rlog, 0);
	pid_t un = spawn(un_argv, ulog, 1);
	if (rec < 0 || un < 0) {
		bench_skip(t, G, "flight recorder soak", "fork failed");
		bench_rm_rf(dir);
		return;
	}
	struct sample s[MAX_TENTHS + 1];
	memset(s, 0, sizeof s);
	nlat = nfirst = nlast = 0;
	snaps = bad_json = 0;
	snapdir_ = snapdir;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), tenth = (uint64_t)secs * 100000000ull;
	int sampled = sample(rec, &s[0], 0) == 0, alive = 1;
	unsigned k = 1;
	while (alive && k <= MAX_TENTHS) {
		uint64_t due = t0 + k * tenth, now = now_ns(CLOCK_MONOTONIC);
		if (now >= due) {
			sampled &= sample(rec, &s[k], snaps) == 0;
			k++;
			continue;
		}
		int ms = (int)((due - now) / 1000000ull) + 1;
		drain(in, ms > 500 ? 500 : ms, k);
		siginfo_t si = { 0 };
		if (waitid(P_PID, (id_t)rec, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == rec)
			alive = 0;
	}
	/* the snapshots of the last seconds, until the recorder ends (in no tenth) */
	for (siginfo_t si = { 0 }; !(waitid(P_PID, (id_t)rec, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == rec);)
		drain(in, 200, MAX_TENTHS + 1);
	drain(in, 0, MAX_TENTHS + 1);
	int st_rec = -1, st_un = -1;
	waitpid(rec, &st_rec, 0);
	waitpid(un, &st_un, 0);
	close(in);
	long long disk = bench_dir_bytes(snapdir);
	unsigned kept = 0;
	FILE *ls;
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '^[0-9]'", snapdir);
	if ((ls = popen(cmd, "r"))) {
		if (fscanf(ls, "%u", &kept) != 1)
			kept = 0;
		pclose(ls);
	}
	double ucpu = 0, rcpu = 0;
	unsigned long long uw = 0, rw = 0, utrig = 0, rtrig = 0;
	int ok_u = WIFEXITED(st_un) && WEXITSTATUS(st_un) == 0 && workload_line(ulog, &ucpu, &uw, &utrig) && uw;
	int ok_r = WIFEXITED(st_rec) && WEXITSTATUS(st_rec) == 0 && workload_line(rlog, &rcpu, &rw, &rtrig) && rw;
	if (!ok_r || !sampled || k <= MAX_TENTHS) {
		bench_cat_stderr(rlog);
		bench_skip(t, G, "flight recorder soak",
			   !ok_r ? "the recorded run failed (its output above)"
				 : "the recorder ended before the last sample (its output above)");
		bench_rm_rf(dir);
		return;
	}
	if (!ok_u)
		bench_cat_stderr(ulog);

	/* the program: CPU per event, untraced (baseline) and traced */
	snprintf(cfg, sizeof cfg, "%u s, 2 x %u ev/s: untraced CPU / event", secs, RATE);
	if (ok_u) {
		bench_row(t, G, cfg, ucpu / (double)uw, "ns/ev", 0, NULL, NULL);
		snprintf(cfg, sizeof cfg, "same, under the flight recorder (%llu trig)", rtrig);
		bench_row(t, G, cfg, rcpu / (double)rw, "ns/ev", (rcpu / (double)rw) / (ucpu / (double)uw),
			  "slowdown", NULL);
	} else {
		bench_skip(t, G, cfg, "the untraced run failed (its output above)");
	}
	/* the recorder, tenth by tenth against the first */
	double cpu1 = 0, rss1 = s[1].rss_mib;
	for (unsigned i = 1; i <= MAX_TENTHS; i++) {
		unsigned dn = s[i].snaps - s[i - 1].snaps;
		double dcpu = s[i].cpu_s - s[i - 1].cpu_s, per = dn ? dcpu * 1e3 / dn : 0;
		if (i == 1)
			cpu1 = per;
		snprintf(cfg, sizeof cfg, "recorder %3u-%3u s: %u snap, RSS %.1f MiB (anon %.1f)", (i - 1) * secs / 10,
			 i * secs / 10, dn, s[i].rss_mib, s[i].anon_mib);
		if (i == 1)
			bench_row(t, G, cfg, per, "ms/snap", 0, NULL, NULL);
		else if (cpu1 > 0)
			bench_row(t, G, cfg, per, "ms/snap", per / cpu1, "CPU/snap / first tenth", "~1");
		else
			bench_skip(t, G, cfg, "no CPU tick or no snapshot in the first tenth (too short a run)");
	}
	snprintf(cfg, sizeof cfg, "recorder RSS, first tenth (anon %.1f MiB)", s[1].anon_mib);
	bench_row(t, G, cfg, rss1, "MiB", 0, NULL, NULL);
	double rss_max = 0;
	for (unsigned i = 1; i <= MAX_TENTHS; i++)
		rss_max = s[i].rss_mib > rss_max ? s[i].rss_mib : rss_max;
	snprintf(cfg, sizeof cfg, "recorder RSS, last tenth (anon %.1f MiB)", s[MAX_TENTHS].anon_mib);
	bench_row(t, G, cfg, s[MAX_TENTHS].rss_mib, "MiB", s[MAX_TENTHS].rss_mib / rss1, "last / first", "~1");
	bench_row(t, G, "recorder RSS, largest sample", rss_max, "MiB", rss_max / rss1, "max / first", "~1");
	double whole = s[MAX_TENTHS].cpu_s / (double)secs * 100;
	snprintf(cfg, sizeof cfg, "recorder CPU, whole run (%.2f s)", s[MAX_TENTHS].cpu_s);
	bench_row(t, G, cfg, whole, "% of 1 CPU", s[MAX_TENTHS].snaps ? s[MAX_TENTHS].cpu_s * 1e3 / s[MAX_TENTHS].snaps : 0,
		  "ms of CPU / snapshot", NULL);
	/* snapshots */
	snprintf(cfg, sizeof cfg, "snapshots seen (%llu tb_trigger() calls)", rtrig);
	bench_row(t, G, cfg, (double)snaps, "snaps", rtrig ? (double)snaps / (double)rtrig : 0, "snapshots / triggers",
		  "1");
	snprintf(cfg, sizeof cfg, "snapshot dir at the end: %u kept", kept);
	bench_row(t, G, cfg, (double)disk / 1048576.0, "MiB", (double)kept / KEEP, "kept / --max-snapshots", "1");
	if (bad_json)
		bench_skip(t, G, "latency of some snapshots", "trigger.json without realtime_ns/copy_realtime_ns (see log)");
	if (!nlat) {
		bench_skip(t, G, "trigger -> snapshot complete", "no snapshot seen");
		bench_rm_rf(dir);
		return;
	}
	size_t n = nlat;
	double c50 = bench_pct(copy, n, 0.5), c99 = bench_pct(copy, n, 0.99);
	double p50 = bench_pct(lat, n, 0.5), p99 = bench_pct(lat, n, 0.99), pmax = lat[n - 1];
	snprintf(cfg, sizeof cfg, "trigger -> snapshot complete p50 (%zu snaps)", n);
	bench_row(t, G, cfg, p50, "ms", 0, NULL, NULL);
	bench_row(t, G, "trigger -> snapshot complete p99", p99, "ms", p99 / p50, "p99 / p50", NULL);
	bench_row(t, G, "trigger -> snapshot complete max", pmax, "ms", pmax / p50, "max / p50", NULL);
	bench_row(t, G, "trigger -> copy started p50", c50, "ms", c50 / p50, "/ complete p50", NULL);
	bench_row(t, G, "trigger -> copy started p99", c99, "ms", c99 / p99, "/ complete p99", NULL);
	if (nfirst && nlast) {
		double f50 = bench_pct(lat_first, nfirst, 0.5), l50 = bench_pct(lat_last, nlast, 0.5);
		bench_row(t, G, "trigger -> complete p50, first tenth", f50, "ms", 0, NULL, NULL);
		bench_row(t, G, "trigger -> complete p50, last tenth", l50, "ms", l50 / f50, "last / first", "~1");
	}
	bench_rm_rf(dir);
}
