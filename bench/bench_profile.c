/* SPDX-License-Identifier: MIT */
/*
 * bench_profile.c - the overhead of `tracebuf profile -F 999` (issue 6) on a
 * CPU-bound program, bench/profile_target.c (~2 s of deterministic work in
 * one thread, frame pointers kept), against the same program alone and
 * against `perf record -F 999 -g` of it:
 *
 *   configurations  the program alone (baseline); tracebuf profile
 *                   --unwind fp; tracebuf profile --unwind libunwind; perf
 *                   record -g (frame-pointer call chains)
 *   rounds          every configuration once per round, the order rotated
 *                   from round to round; each figure is the median over the
 *                   rounds of its ratio to the baseline of the same round
 *   figures         the program's own wall and CPU time around its work
 *                   (it prints them: start-up and shutdown of the profiler
 *                   are not in them) and the wall time of the whole command
 *                   (fork to reaping: the profiler's start, drain and stop
 *                   included); target: under 2 % slowdown (ratio <= 1.02)
 *   samples         counted in each run's output (tracebuf dump --event
 *                   profile:sample; perf report --stats) per CPU-second of
 *                   the work, against the 999/s asked for.  tracebuf's
 *                   samples come from a CPU-time timer, which the kernel
 *                   checks at its tick (CONFIG_HZ): at HZ=250 a sample
 *                   stands for several periods, which the sample's overrun
 *                   field counts; the "periods" row adds them back.
 *
 *   floor           bench/profile_floor.c: the same loop alone and under a
 *                   cpu-clock event at 999 Hz used in several ways (no
 *                   signal, kernel call chains, a signal per sample with an
 *                   empty handler, plus re-arming, SIGTRAP from task work):
 *                   what a sample costs the thread before the sampler's own
 *                   work, in CPU-time ratio and in microseconds per sample
 *
 * Skipped, with the reason, when `tracebuf profile --help` fails (the
 * command is not built), per unwinder when its run fails, and for perf where
 * `perf record` does not work.  Traces go to $TMPDIR (or /tmp) and are
 * removed after each run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "lttng/common.h"

enum cfg { C_BASE, C_FP, C_LIBUNWIND, C_PERF, C_N };
static const char *const cfg_name[C_N] = { "program alone", "tracebuf profile --unwind fp",
					    "tracebuf profile --unwind libunwind", "perf record -F 999 -g" };

#define MAX_ROUNDS 9

struct prun {
	double work_wall, work_cpu, cmd_wall; /* seconds */
};

struct pcfg {
	const char *skip;        /* why this configuration is not measured, NULL if it is */
	char skipbuf[160];
	int n;                   /* rounds measured */
	struct prun r[MAX_ROUNDS];
	double samples, periods, aborted, cpu; /* summed over the rounds (cpu: work CPU seconds) */
	int have_periods, have_aborted;
};

static double mono_s(void)
{
	return (double)bc_mono_ns() / 1e9;
}

/* Runs argv with stdout captured into out (NUL-terminated); stderr passes
 * through unless quiet.  Returns the exit status (-1 when it did not exit). */
static int run_capture(char *const argv[], char *out, size_t outlen, int quiet, double *wall)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	double t0 = mono_s();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0)
				dup2(null, 2);
		}
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0;
	for (;;) {
		char tmp[4096];
		ssize_t k = read(fd[0], len + 1 < outlen ? out + len : tmp,
				 len + 1 < outlen ? outlen - 1 - len : sizeof tmp);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (len + 1 < outlen)
			len += (size_t)k;
	}
	out[len] = 0;
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*wall = mono_s() - t0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double key_value(const char *text, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtod(p + kl + 1, NULL);
	return -1;
}

/* Sum over the lines of `cmd`'s output that contain `match` of the integer after "field = " (or the
 * number of such lines when field is NULL); -1 when cmd fails. */
static double sum_lines(const char *cmd, const char *match, const char *field, int *found)
{
	FILE *p = popen(cmd, "r");
	char line[8192];
	double sum = 0;
	*found = 0;
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) {
		if (!strstr(line, match))
			continue;
		if (!field) {
			sum += 1;
			*found = 1;
			continue;
		}
		char key[64];
		snprintf(key, sizeof key, "%s = ", field);
		const char *f = strstr(line, key);
		if (f) {
			sum += strtod(f + strlen(key), NULL);
			*found = 1;
		}
	}
	int st = pclose(p);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? sum : -1;
}

/* The samples of one run's output: tracebuf trace directory or perf.data. */
static void count_samples(enum cfg c, const char *cli, const char *out, struct pcfg *pc)
{
	char cmd[2 * PATH_MAX + 128];
	int found;
	if (c == C_PERF) {
		snprintf(cmd, sizeof cmd, "perf report -i '%s' --stats 2>/dev/null", out);
		/* the first "SAMPLE events: N" line is the total */
		FILE *p = popen(cmd, "r");
		char line[512];
		double v = -1;
		while (p && fgets(line, sizeof line, p)) {
			const char *s = strstr(line, "SAMPLE events:");
			if (s) {
				v = strtod(s + 14, NULL);
				break;
			}
		}
		if (p)
			pclose(p);
		if (v > 0) {
			pc->samples += v;
			pc->periods += v;
			pc->have_periods = 1;
		}
		return;
	}
	snprintf(cmd, sizeof cmd, "'%s' dump -q --event profile:sample '%s'", cli, out);
	double s = sum_lines(cmd, "profile:sample", NULL, &found);
	if (s > 0)
		pc->samples += s;
	snprintf(cmd, sizeof cmd, "'%s' dump -q --event profile:counters '%s'", cli, out);
	double ov = sum_lines(cmd, "profile:counters", "overruns", &found);
	if (s > 0 && ov >= 0 && found) {
		pc->periods += s + ov;
		pc->have_periods = 1;
	}
	double ab = sum_lines(cmd, "profile:counters", "aborted", &found);
	if (ab >= 0 && found) {
		pc->aborted += ab;
		pc->have_aborted = 1;
	}
}

/* Exit status of argv with stdout and stderr thrown away. */
static int quiet_status(char *const argv[])
{
	char out[256];
	double w;
	return run_capture(argv, out, sizeof out, 1, &w);
}

/* The rows of bench/profile_floor.c (see the top of that file). */
static void floor_rows(struct bench_table *t, const char *g, int quick)
{
	static const struct {
		const char *key, *row;
	} rows[] = {
		{ "interrupt", "floor: cpu-clock event, no signal" },
		{ "kchain", "floor: kernel call chains (as perf -g)" },
		{ "signal", "floor: a signal per sample, empty handler" },
		{ "rearm", "floor: + re-arm per sample (before issue 14)" },
		{ "sigtrap", "floor: SIGTRAP from task work, empty handler" },
	};
	char prog[PATH_MAX], buf[2048];
	bench_build_path("TB_PROFILE_FLOOR", "bench/tracebuf-profile-floor", prog, sizeof prog);
	char *argv[] = { prog, quick ? "1" : "5", quick ? "50000000" : "400000000", NULL };
	double w;
	if (access(prog, X_OK) || run_capture(argv, buf, sizeof buf, 0, &w) != 0) {
		bench_skip(t, g, "floor", "bench/tracebuf-profile-floor not built, or it failed");
		return;
	}
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char key[32];
		snprintf(key, sizeof key, "floor %s", rows[i].key);
		double ratio = key_value(buf, key);
		if (ratio <= 0) {
			bench_skip(t, g, rows[i].row, "the kernel refused this use of the event");
			continue;
		}
		/* (ratio - 1) of CPU time per period of CPU time (1/999 s) */
		bench_row(t, g, rows[i].row, (ratio - 1) * 1e6 / 999.0, "us/sample", ratio, "with / without", NULL);
	}
}

void bench_profile(struct bench_table *t)
{
	const char *g = "profile";
	char cli[PATH_MAX], target[PATH_MAX], dir[PATH_MAX], out[PATH_MAX + 32], units[16], buf[4096];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_PROFILE_TARGET", "bench/tracebuf-profile-target", target, sizeof target);
	if (access(target, X_OK)) {
		bench_skip(t, g, "overhead of tracebuf profile -F 999", "bench/tracebuf-profile-target not built");
		return;
	}
	char *help[] = { cli, "profile", "--help", NULL };
	if (quiet_status(help) != 0) {
		bench_skip(t, g, "overhead of tracebuf profile -F 999",
			   "`tracebuf profile --help` failed: the profile command is not in this build");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "profile")) {
		bench_skip(t, g, "overhead of tracebuf profile -F 999", strerror(errno));
		return;
	}
	int quick = bench_quick();
	int rounds = quick ? 1 : 5;
	snprintf(units, sizeof units, "%d", quick ? 6 : 120);

	static struct pcfg pc[C_N];
	memset(pc, 0, sizeof pc);
	/* perf: a trial recording of `true` */
	snprintf(out, sizeof out, "%s/probe.data", dir);
	char *probe[] = { "perf", "record", "-q", "-F", "999", "-g", "-o", out, "--", "true", NULL };
	int prc = quiet_status(probe);
	unlink(out);
	if (prc != 0) {
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int para = -99;
		if (f) {
			if (fscanf(f, "%d", &para) != 1)
				para = -99;
			fclose(f);
		}
		snprintf(pc[C_PERF].skipbuf, sizeof pc[C_PERF].skipbuf,
			 prc == 127 ? "perf not installed (apt-get install linux-perf)"
				    : "perf record fails here (perf_event_paranoid %d; a VM without perf events?)",
			 para);
		pc[C_PERF].skip = pc[C_PERF].skipbuf;
	}

	if (!quick) { /* warm up: page cache, CPU frequency */
		char *warm[] = { target, units, NULL };
		double w;
		run_capture(warm, buf, sizeof buf, 0, &w);
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < C_N; i++) {
			enum cfg c = (enum cfg)((i + r) % C_N);
			if (pc[c].skip)
				continue;
			snprintf(out, sizeof out, "%s/run-%d-%d%s", dir, r, (int)c, c == C_PERF ? ".data" : "");
			char *argv[16];
			int a = 0;
			if (c == C_FP || c == C_LIBUNWIND) {
				argv[a++] = cli;
				argv[a++] = "profile";
				argv[a++] = "-F";
				argv[a++] = "999";
				argv[a++] = "--unwind";
				argv[a++] = c == C_FP ? "fp" : "libunwind";
				argv[a++] = "-q";
				argv[a++] = "-o";
				argv[a++] = out;
				argv[a++] = "--";
			} else if (c == C_PERF) {
				argv[a++] = "perf";
				argv[a++] = "record";
				argv[a++] = "-q";
				argv[a++] = "-F";
				argv[a++] = "999";
				argv[a++] = "-g";
				argv[a++] = "-o";
				argv[a++] = out;
				argv[a++] = "--";
			}
			argv[a++] = target;
			argv[a++] = units;
			argv[a] = NULL;
			double wall;
			int rc = run_capture(argv, buf, sizeof buf, 0, &wall);
			struct prun pr = { key_value(buf, "work_wall_ns") / 1e9, key_value(buf, "work_cpu_ns") / 1e9,
					   wall };
			if (rc != 0 || pr.work_wall <= 0 || pr.work_cpu <= 0) {
				snprintf(pc[c].skipbuf, sizeof pc[c].skipbuf,
					 "the run failed (exit %d; see stderr above)%s", rc,
					 c == C_LIBUNWIND ? ": built without libunwind?" : "");
				pc[c].skip = pc[c].skipbuf;
				if (c == C_BASE)
					break;
			} else {
				pc[c].r[pc[c].n++] = pr;
				if (c != C_BASE) {
					count_samples(c, cli, out, &pc[c]);
					pc[c].cpu += pr.work_cpu;
				}
			}
			bench_rm_rf(out); /* the trace directory, or perf.data */
		}
	bench_rm_rf(dir);
	floor_rows(t, g, quick);

	if (pc[C_BASE].skip) {
		bench_skip(t, g, "the program alone", pc[C_BASE].skip);
		return;
	}
	double v[MAX_ROUNDS];
	int nb = pc[C_BASE].n;
	for (int k = 0; k < nb; k++)
		v[k] = pc[C_BASE].r[k].work_wall;
	bench_row(t, g, "program alone: work wall time", bench_median(v, nb), "s", 0, NULL, NULL);
	for (int k = 0; k < nb; k++)
		v[k] = pc[C_BASE].r[k].work_cpu;
	bench_row(t, g, "program alone: work CPU time", bench_median(v, nb), "s", 0, NULL, NULL);
	for (int k = 0; k < nb; k++)
		v[k] = pc[C_BASE].r[k].cmd_wall;
	bench_row(t, g, "program alone: command wall time", bench_median(v, nb), "s", 0, NULL, NULL);

	char cfgs[96];
	for (int c = C_FP; c < C_N; c++) {
		const char *short_name = c == C_FP ? "tb prof fp" : c == C_LIBUNWIND ? "tb prof libunwind" : "perf -g";
		if (pc[c].skip || pc[c].n != nb) {
			bench_skip(t, g, cfg_name[c], pc[c].skip ? pc[c].skip : "a run failed");
			continue;
		}
		/* ratios within each round (the baseline of the same round), median over the rounds */
		double rw[MAX_ROUNDS], rc[MAX_ROUNDS], rcmd[MAX_ROUNDS];
		for (int k = 0; k < nb; k++) {
			rw[k] = pc[c].r[k].work_wall / pc[C_BASE].r[k].work_wall;
			rc[k] = pc[c].r[k].work_cpu / pc[C_BASE].r[k].work_cpu;
			rcmd[k] = pc[c].r[k].cmd_wall / pc[C_BASE].r[k].cmd_wall;
			v[k] = pc[c].r[k].work_wall;
		}
		const char *goal = c == C_PERF ? NULL : "<= 1.02"; /* perf is the comparison */
		snprintf(cfgs, sizeof cfgs, "%s: work wall time", short_name);
		bench_row(t, g, cfgs, bench_median(v, nb), "s", bench_median(rw, nb), "with / without", goal);
		for (int k = 0; k < nb; k++)
			v[k] = pc[c].r[k].work_cpu;
		snprintf(cfgs, sizeof cfgs, "%s: work CPU time", short_name);
		bench_row(t, g, cfgs, bench_median(v, nb), "s", bench_median(rc, nb), "with / without", goal);
		if (c != C_PERF && !pc[C_PERF].skip && pc[C_PERF].n == nb) {
			/* against perf: the work's CPU time, round by round */
			for (int k = 0; k < nb; k++)
				rc[k] = pc[c].r[k].work_cpu / pc[C_PERF].r[k].work_cpu;
			snprintf(cfgs, sizeof cfgs, "%s: work CPU time vs perf -g", short_name);
			bench_row(t, g, cfgs, bench_median(v, nb), "s", bench_median(rc, nb), "tracebuf / perf", NULL);
		}
		for (int k = 0; k < nb; k++)
			v[k] = pc[c].r[k].cmd_wall;
		snprintf(cfgs, sizeof cfgs, "%s: command wall time", short_name);
		bench_row(t, g, cfgs, bench_median(v, nb), "s", bench_median(rcmd, nb), "with / without", NULL);
		if (pc[c].samples > 0 && pc[c].cpu > 0) {
			snprintf(cfgs, sizeof cfgs, "%s: samples/CPU-s", short_name);
			bench_row(t, g, cfgs, pc[c].samples / pc[c].cpu, "/s", pc[c].samples / pc[c].cpu / 999.0,
				  "samples / 999 Hz", NULL);
		} else {
			snprintf(cfgs, sizeof cfgs, "%s: samples", short_name);
			bench_skip(t, g, cfgs, "no sample counted in the output (see stderr)");
		}
		if (c != C_PERF && pc[c].have_periods && pc[c].cpu > 0) {
			snprintf(cfgs, sizeof cfgs, "%s: periods/CPU-s (1+overrun)", short_name);
			bench_row(t, g, cfgs, pc[c].periods / pc[c].cpu, "/s", pc[c].periods / pc[c].cpu / 999.0,
				  "periods / 999 Hz", NULL);
		}
		if (c != C_PERF && pc[c].have_aborted && pc[c].samples > 0) {
			snprintf(cfgs, sizeof cfgs, "%s: backtraces aborted", short_name);
			bench_row(t, g, cfgs, pc[c].aborted, "samples", pc[c].aborted / pc[c].samples,
				  "aborted / samples", NULL);
		}
	}
}
