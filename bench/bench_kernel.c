/* SPDX-License-Identifier: MIT */
/*
 * bench_kernel.c - the `kernel` group (docs/KERNEL.md, "Overhead"): the
 * kernel's sched events recorded by `tracebuf record --kernel` next to
 * `perf record -e sched:sched_switch,sched:sched_waking -a` of the same
 * switch storm, in one run:
 *
 *   the storm      `perf bench sched pipe -l N`: two processes ping-ponging
 *                  over a pipe (two switches and two wakings per loop),
 *                  its own "Total time" the workload's time;
 *   three runs     tracebuf record without --kernel (the baseline),
 *                  tracebuf record --kernel=sched_switch,sched_waking
 *                  --kernel-all (every CPU's, as perf -a), perf record -a
 *                  of the same two tracepoints, each writing its file;
 *   figures        the workload's slowdown under each (its time / the
 *                  baseline's); the recorder's CPU (utime + stime of the
 *                  recorder process itself, not the workload's, from
 *                  /proc/PID/stat of the zombie) per kernel event it wrote,
 *                  tracebuf's / perf's (goal <= 1); kernel events lost by
 *                  each to a full ring, like with like (perf: the
 *                  LOST_SAMPLES counts `perf report --stats` gives per sched
 *                  event, what the kernel charged to the full ring; tracebuf:
 *                  its summary's "lost" less the hits the kernel counted and
 *                  dropped with its ring not full, which no ring reader sees
 *                  and perf does not count: docs/KERNEL.md, "Known gap";
 *                  those in a row of their own).
 *
 * Skipped, with the reason, when perf is not installed or --kernel is not
 * permitted here (root, CAP_PERFMON or perf_event_paranoid <= 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define G "kernel"

/* Runs argv with stdout and stderr into `log`; the child's own utime + stime
 * (s; -1 unknown) and its exit status (-1: did not exit normally). */
static double run_logged(char *const argv[], const char *log, int *code)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	*code = -1;
	if (pid < 0)
		return -1;
	double cpu = -1;
	siginfo_t si;
	/* the zombie's own times (its children's are in other fields) */
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0) {
		char path[64], buf[1024];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof buf, f)) {
			char *p = strrchr(buf, ')');
			unsigned long ut = 0, st = 0;
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
				cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		}
		if (f)
			fclose(f);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		*code = WEXITSTATUS(status);
	return cpu;
}

/* The first line of `log` holding `key`, copied into buf (0: none). */
static int find_line(const char *log, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(log, "r");
	int found = 0;
	while (f && !found && fgets(buf, (int)len, f))
		found = strstr(buf, key) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* The storm's own time (s) from its "Total time: X [sec]" line; -1 when absent. */
static double storm_time(const char *log)
{
	char line[512];
	double s = -1;
	if (find_line(log, "Total time:", line, sizeof line))
		sscanf(strstr(line, "Total time:"), "Total time: %lf", &s);
	return s;
}

static double median3(const double v[3])
{
	double a = v[0], b = v[1], c = v[2];
	return a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
}

void bench_kernel(struct bench_table *t)
{
	char cli[PATH_MAX], dir[PATH_MAX], log[PATH_MAX + 16], out[PATH_MAX + 16], line[1024];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	if (access(cli, X_OK)) {
		bench_skip(t, G, "switch storm", "tracebuf not built ($TB_CLI)");
		return;
	}
	if (system("perf --version > /dev/null 2>&1") != 0) {
		bench_skip(t, G, "switch storm", "perf is not installed (apt-get install linux-perf): the storm and the "
						  "comparison need it");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "kernel")) {
		bench_skip(t, G, "switch storm", strerror(errno));
		return;
	}
	snprintf(log, sizeof log, "%s/log", dir);
	int code;
	/* permitted here? (the probe's message says what is missing) */
	snprintf(out, sizeof out, "%s/probe", dir);
	char *probe[] = { cli, "record", "-q", "--kernel", "-o", out, "--", "true", NULL };
	run_logged(probe, log, &code);
	if (code != 0) {
		line[0] = 0;
		find_line(log, "--kernel", line, sizeof line);
		line[strcspn(line, "\n")] = 0;
		char why[1200];
		snprintf(why, sizeof why, "--kernel is not permitted here: %.1000s", line[0] ? line : "(no message)");
		bench_skip(t, G, "switch storm", why);
		bench_rm_rf(dir);
		return;
	}
	const char *loops = bench_quick() ? "20000" : "300000";
	char cfg[128];

	/* 1. the baseline: recorded without --kernel */
	snprintf(out, sizeof out, "%s/base", dir);
	char *base_argv[] = { cli, "record", "-o", out, "--", "perf", "bench", "sched", "pipe", "-l", (char *)loops, NULL };
	run_logged(base_argv, log, &code);
	double base = storm_time(log);
	if (code != 0 || base <= 0) {
		bench_cat_stderr(log);
		bench_skip(t, G, "switch storm", "the storm recorded without --kernel failed (its output above)");
		bench_rm_rf(dir);
		return;
	}
	bench_rm_rf(out);

	/* 2. --kernel: the same two tracepoints of every CPU, as perf -a */
	snprintf(out, sizeof out, "%s/kern", dir);
	char *k_argv[] = { cli, "record", "--kernel=sched_switch,sched_waking", "--kernel-all", "-o", out, "--", "perf",
			   "bench", "sched", "pipe", "-l", (char *)loops, NULL };
	double k_cpu = run_logged(k_argv, log, &code);
	double k_time = storm_time(log);
	unsigned long long k_ev = 0, k_lost = 0, k_left = 0;
	int k_ok = code == 0 && k_time > 0 && find_line(log, "  kernel: ", line, sizeof line) &&
		   sscanf(line, "  kernel: %llu event%*[^,], %llu of other processes left out; lost %llu", &k_ev, &k_left,
			  &k_lost) == 3;
	/* of k_lost: counted by the kernel and dropped with its ring not full,
	 * never in any ring (docs/KERNEL.md, "Known gap"): not the recorder's */
	unsigned long long k_dropped = 0;
	const char *sp = k_ok ? strstr(line, " with their loss record still pending, ") : NULL;
	if (sp)
		sscanf(sp, " with their loss record still pending, %llu dropped", &k_dropped);
	if (k_dropped > k_lost)
		k_ok = 0;
	if (!k_ok)
		bench_cat_stderr(log);
	bench_rm_rf(out);

	/* 3. perf record -a of the same tracepoints and storm */
	snprintf(out, sizeof out, "%s/perf.data", dir);
	char *p_argv[] = { "perf", "record", "-q", "-e", "sched:sched_switch,sched:sched_waking", "-a", "-o", out, "--",
			   "perf", "bench", "sched", "pipe", "-l", (char *)loops, NULL };
	double p_cpu = run_logged(p_argv, log, &code);
	double p_time = storm_time(log);
	unsigned long long p_ev = 0, p_lost = 0;
	int p_ok = code == 0 && p_time > 0;
	if (p_ok) {
		/* samples (aggregated) and each event's LOST_SAMPLES (the kernel's count of what it could not write) */
		char cmd[PATH_MAX + 64];
		snprintf(cmd, sizeof cmd, "perf report -i '%s' --stats 2> /dev/null", out);
		FILE *p = popen(cmd, "r");
		int per_event = 0;
		while (p && fgets(line, sizeof line, p)) {
			unsigned long long v;
			if (strstr(line, " stats:") && !strstr(line, "Aggregated"))
				/* "sched:sched_switch stats:" ...; not "dummy:HG stats:" (its
				 * losses are side-band records, not sched events) */
				per_event = !strncmp(line, "sched:", 6);
			if (!per_event && sscanf(line, " SAMPLE events: %llu", &v) == 1)
				p_ev = v;
			if (per_event && sscanf(line, " LOST_SAMPLES events: %llu", &v) == 1)
				p_lost += v;
		}
		if (p)
			pclose(p);
		p_ok = p_ev > 0;
	} else {
		bench_cat_stderr(log);
	}
	/* 4. each recorder around `true`: its start and end (perf: reading every
	 * process's maps; tracebuf: opening and closing the events), a fixed
	 * cost the per-event figure is also given without */
	/* the median of 3 runs each, alternated: perf's start (0.2-0.3 s here)
	 * moves by tens of ms from run to run, which a single run would
	 * subtract from the storm's CPU as it fell */
	double k_fix = -1, p_fix = -1;
	if (k_ok && p_ok) {
		double kv[3], pv[3];
		int fails = 0;
		for (int r = 0; r < 3; r++) {
			snprintf(out, sizeof out, "%s/kfix%d", dir, r);
			char *kf[] = { cli, "record", "-q", "--kernel=sched_switch,sched_waking", "--kernel-all", "-o", out, "--",
				       "true", NULL };
			kv[r] = run_logged(kf, log, &code);
			fails += code != 0 || kv[r] < 0;
			bench_rm_rf(out);
			snprintf(out, sizeof out, "%s/pfix.data", dir);
			char *pf[] = { "perf", "record", "-q", "-e", "sched:sched_switch,sched:sched_waking", "-a", "-o", out, "--",
				       "true", NULL };
			pv[r] = run_logged(pf, log, &code);
			fails += code != 0 || pv[r] < 0;
		}
		if (!fails) {
			k_fix = median3(kv);
			p_fix = median3(pv);
		}
	}
	bench_rm_rf(dir);

	snprintf(cfg, sizeof cfg, "storm: perf bench sched pipe -l %s, no --kernel", loops);
	bench_row(t, G, cfg, base, "s", 0, NULL, NULL);
	if (k_ok)
		bench_row(t, G, "storm under --kernel-all (switch, waking)", k_time, "s", k_time / base, "slowdown", NULL);
	else
		bench_skip(t, G, "storm under --kernel", "tracebuf record --kernel failed (its output above)");
	if (p_ok)
		bench_row(t, G, "storm under perf record -a (same events)", p_time, "s", p_time / base, "slowdown", NULL);
	else
		bench_skip(t, G, "storm under perf record -a", "perf record failed (its output above)");
	if (!k_ok || !p_ok)
		return;
	double p_per = p_cpu > 0 ? p_cpu * 1e9 / (double)p_ev : 0;
	double k_per = k_cpu > 0 && k_ev ? k_cpu * 1e9 / (double)k_ev : 0;
	snprintf(cfg, sizeof cfg, "perf record CPU / event (%llu ev, %.2f s)", p_ev, p_cpu);
	bench_row(t, G, cfg, p_per, "ns/ev", 0, NULL, NULL);
	snprintf(cfg, sizeof cfg, "recorder CPU / kernel event (%llu ev, %.2f s)", k_ev, k_cpu);
	if (p_per > 0 && k_per > 0)
		bench_row(t, G, cfg, k_per, "ns/ev", k_per / p_per, "tracebuf / perf", "<= 1");
	else
		bench_skip(t, G, cfg, "a CPU time below the clock tick (run is too short: without BENCH_QUICK)");
	if (k_fix >= 0 && p_fix >= 0 && k_cpu > k_fix && p_cpu > p_fix) {
		snprintf(cfg, sizeof cfg, "fixed cost (-- true, median of 3): perf %.2f s, tracebuf %.2f s", p_fix, k_fix);
		double pm = (p_cpu - p_fix) * 1e9 / (double)p_ev, km = (k_cpu - k_fix) * 1e9 / (double)k_ev;
		bench_row(t, G, "perf record CPU / event, less its fixed cost", pm, "ns/ev", 0, NULL, NULL);
		bench_row(t, G, "recorder CPU / event, less its fixed cost", km, "ns/ev", km / pm, "tracebuf / perf", "<= 1");
		bench_row(t, G, cfg, k_fix, "s", p_fix > 0 ? k_fix / p_fix : 0, "tracebuf / perf", NULL);
	} else {
		bench_skip(t, G, "CPU / event less the fixed cost", "a CPU time below the clock tick, or a `-- true` run failed");
	}
	bench_row(t, G, "kernel events lost to a full ring: perf record -a", (double)p_lost, "events",
		  (double)p_lost / (double)(p_ev + p_lost), "lost / (written + lost)", NULL);
	bench_row(t, G, "kernel events lost: tracebuf (less the kernel's drops)", (double)(k_lost - k_dropped), "events",
		  (double)(k_lost - k_dropped) / (double)(k_ev + k_lost), "lost / (written + lost)", "0 if perf 0");
	bench_row(t, G, "hits the kernel counted, never wrote (tracebuf counts them; perf cannot)", (double)k_dropped,
		  "events", (double)k_dropped / (double)(k_ev + k_lost), "of (written + lost)", NULL);
}
