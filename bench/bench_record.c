/* SPDX-License-Identifier: MIT */
/*
 * bench_record.c - sustained recording: `tracebuf record` of
 * `tracebuf-workload --threads 2 --events N` at full speed (discard mode,
 * record's defaults: 8 x 256 KiB sub-buffers per CPU), the trace on the file
 * system of $TMPDIR (default /tmp).  Figures: delivered events/s and MiB/s
 * (wall time of the whole record run), % lost, the recorder's own CPU time
 * (utime + stime of the recorder process, read from /proc/PID/stat while it
 * is a zombie, so the workload it reaped is not counted), and its drain cost
 * per byte against the baseline of the same run: memcpy of the same number of
 * bytes out of a 2 MiB "ring" in 256 KiB pieces, each written with write() to
 * a file in the same directory (CPU time of the copying thread; run before and
 * after the recording, the cheaper per byte kept).
 *
 * Also the helpers shared by the groups (bench.h).
 */
#define _GNU_SOURCE
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
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef TB_BENCH_BUILD_DIR
#define TB_BENCH_BUILD_DIR "."
#endif

const char *bench_build_path(const char *env, const char *rel, char *buf, unsigned len)
{
	const char *e = env ? getenv(env) : NULL;
	if (e && *e)
		snprintf(buf, len, "%s", e);
	else
		snprintf(buf, len, "%s/%s", TB_BENCH_BUILD_DIR, rel);
	return buf;
}

int bench_mkdtemp(char *dir, size_t len, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/tb-bench-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	return mkdtemp(dir) ? 0 : -1;
}

unsigned bench_env_seconds(const char *env, unsigned dflt)
{
	const char *e = getenv(env);
	return e && *e ? (unsigned)strtoul(e, NULL, 10) : dflt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_pct(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	size_t i = (size_t)(q * (double)n + 0.999999);
	if (i < 1)
		i = 1;
	return v[(i > n ? n : i) - 1];
}

static long long dir_sum;
static int add_size(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p;
	(void)f;
	if (flag == FTW_F && S_ISREG(st->st_mode))
		dir_sum += (long long)st->st_size;
	return 0;
}

long long bench_dir_bytes(const char *dir)
{
	dir_sum = 0;
	if (nftw(dir, add_size, 16, FTW_PHYS))
		return -1;
	return dir_sum;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

void bench_cat_stderr(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f))
		fputs(line, stderr);
	if (f)
		fclose(f);
}

void bench_rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* utime + stime (s) of a zombie child, then reaps it; -1 on error. */
static double reap_with_cpu(pid_t pid, int *status)
{
	siginfo_t si;
	double cpu = -1;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0) {
		char path[64], buf[1024];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof buf, f)) {
			char *p = strrchr(buf, ')'); /* comm may hold spaces */
			unsigned long ut = 0, st = 0;
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
				cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		}
		if (f)
			fclose(f);
	}
	waitpid(pid, status, 0);
	return cpu;
}

/* memcpy + write of `bytes` into dir/f; CPU seconds of this thread. */
static double memcpy_write(const char *dir, uint64_t bytes)
{
	enum { SB = 256 << 10, NSB = 8 };
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/memcpy-write", dir);
	uint8_t *ring = malloc((size_t)SB * NSB), *out = malloc(SB);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double c = -1;
	if (ring && out && fd >= 0) {
		memset(ring, 0x5a, (size_t)SB * NSB);
		double c0 = cpu_s();
		for (uint64_t off = 0, i = 0; off < bytes; off += SB, i++) {
			memcpy(out, ring + (i % NSB) * SB, SB);
			if (write(fd, out, SB) != SB)
				break;
		}
		c = cpu_s() - c0;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(ring);
	free(out);
	return c;
}

void bench_record(struct bench_table *t)
{
	char cli[PATH_MAX], wl[PATH_MAX], dir[PATH_MAX], out[PATH_MAX + 8], err[PATH_MAX + 8];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, "record", "sustained recording", "tracebuf or tracebuf-workload not built ($TB_CLI)");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "record")) {
		bench_skip(t, "record", "sustained recording", strerror(errno));
		return;
	}
	snprintf(out, sizeof out, "%s/trace", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	const char *per_thread = bench_quick() ? "100000" : "10000000";

	/* the baseline runs before and after the recording (best kept): the
	 * recording leaves hundreds of MiB of dirty page cache behind it */
	double base = memcpy_write(dir, bench_quick() ? (8u << 20) : (256u << 20));
	double w0 = mono_s();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1); /* the workload's `written: N` too */
			dup2(fd, 2);
		}
		execl(cli, cli, "record", "-o", out, "--", wl, "--threads", "2", "--events", per_thread, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	double rec_cpu = pid > 0 ? reap_with_cpu(pid, &status) : -1;
	double wall = mono_s() - w0;
	unsigned long long delivered = 0, lost = 0, written = 0;
	double mib = 0;
	FILE *f = fopen(err, "r");
	char line[512];
	double sum_cpu = 0; /* the recorder's own figure (getrusage), exact where /proc counts 10 ms ticks */
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "written: %llu", &written);
		sscanf(line, "tracebuf record: %llu event%*[s], %lf MiB", &delivered, &mib);
		sscanf(line, "  lost %llu event", &lost);
		const char *d = strstr(line, "% with direct I/O, ");
		if (!strncmp(line, "tracebuf record: ", 17) && d)
			sscanf(d, "%% with direct I/O, %lf s of recorder CPU", &sum_cpu);
	}
	if (f)
		fclose(f);
	if (sum_cpu > 0 && rec_cpu >= 0)
		rec_cpu = sum_cpu;
	long long bytes = bench_dir_bytes(out);
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || !delivered || rec_cpu < 0 || bytes <= 0) {
		bench_skip(t, "record", "sustained recording", "tracebuf record failed (see its output above)");
		bench_cat_stderr(err);
		bench_rm_rf(dir);
		return;
	}
	double base2 = memcpy_write(dir, (uint64_t)bytes);
	base = base > 0 ? base * (double)bytes / (double)(bench_quick() ? (8u << 20) : (256u << 20)) : -1;
	if (base2 > 0 && (base < 0 || base2 < base))
		base = base2;
	bench_rm_rf(dir);

	char cfg[96];
	snprintf(cfg, sizeof cfg, "workload 2 thr x %s ev: delivered", per_thread);
	bench_row(t, "record", cfg, (double)delivered / wall / 1e6, "Mev/s", 0, NULL, NULL);
	bench_row(t, "record", "trace bytes written (wall time of the run)", (double)bytes / 1048576.0 / wall, "MiB/s", 0,
		  NULL, NULL);
	bench_row(t, "record", "lost (ring full, discard mode)", 100.0 * (double)lost / (double)(delivered + lost), "%",
		  (double)lost / (double)delivered, "lost / delivered", NULL);
	if (written && written != delivered + lost)
		fprintf(stderr, "bench record: written %llu != delivered %llu + lost %llu\n", written, delivered, lost);
	bench_row(t, "record", "recorder CPU time (utime + stime)", rec_cpu, "s", rec_cpu / wall, "recorder CPU / wall", NULL);
	bench_row(t, "record", "baseline: memcpy + write of the same bytes", base > 0 ? (double)bytes / 1048576.0 / base : 0,
		  "MiB/cpu-s", 0, NULL, NULL);
	if (rec_cpu > 0 && base > 0)
		bench_row(t, "record", "recorder drain rate (bytes / its CPU time)", (double)bytes / 1048576.0 / rec_cpu,
			  "MiB/cpu-s", rec_cpu / base, "recorder / memcpy+write", NULL);
	else
		bench_skip(t, "record", "recorder drain rate", "CPU time below the clock tick (run is too short)");
}
