/* SPDX-License-Identifier: MIT */
/*
 * bench_consumer.c - what recording costs where users feel it (issue #14's
 * targets), each a ratio of two figures measured in this run:
 *
 *   - the producer under `record` (discard mode, default rings, 1 thread
 *     pinned to CPU 0) against the same producer whose rings are never
 *     drained (`--mode overwrite`): wall and CPU ns per event of the
 *     workload's writing thread (it reports them itself: `workload:` line);
 *   - the consumer's throughput: trace bytes per recorder CPU-second against
 *     the bytes the producer makes per producer CPU-second (bytes per event
 *     of the trace x events offered / producer CPU time), same run;
 *   - the whole `record -- workload` run, wall ns per event, against the
 *     rdtsc + 16-byte store floor (bench_loop_floor) timed in this process,
 *     and against the workload's own loop writing each event as that floor
 *     does (rdtsc + its 32 bytes, `tracebuf-workload --floor`);
 *   - losses: 2 threads at full speed with default settings (% lost), 4
 *     threads and signal handlers at full speed (the stress `make demo` ran
 *     before it was paced) 10 times: the most lost in a run, and the demo's
 *     command (`make demo`: the same, paced at 20,000 events/s per thread)
 *     10 times: runs with nothing lost;
 *   - block mode with its recorder killed -9: the program's wall time against
 *     the same program untraced (producers must not wait for a dead consumer).
 *
 * The trace goes to $TMPDIR (default /tmp).  BENCH_QUICK=1: small counts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef TB_BENCH_SRC_DIR
#define TB_BENCH_SRC_DIR "bench"
#endif

struct run {
	int ok;
	double rec_cpu;                 /* recorder utime + stime (s) */
	double wall;                    /* whole run (s) */
	unsigned long long written, delivered, lost;
	unsigned long long wl_wall_ns, wl_cpu_ns; /* the workload's own figures */
	long long bytes;                /* trace bytes on disk */
	double direct_pct;              /* share of them written with direct I/O (the recorder's summary) */
	double sum_cpu;                 /* the recorder's CPU time by its own summary (getrusage: to the us) */
	double io_direct, io_cache;     /* GB/s of its write calls each way (its "ring full:" line; 0: none) */
};

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU seconds (utime + stime) of a process (live or not yet reaped), or -1. */
static double proc_cpu(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	double cpu = -1;
	if (f && fgets(buf, sizeof buf, f)) {
		char *p = strrchr(buf, ')');
		unsigned long ut = 0, st = 0;
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
			cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	}
	if (f)
		fclose(f);
	return cpu;
}

/* utime + stime (s) of a zombie child, then reaps it; -1 on error. */
static double reap_cpu(pid_t pid, int *status)
{
	siginfo_t si;
	double cpu = -1;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0)
		cpu = proc_cpu(pid);
	waitpid(pid, status, 0);
	return cpu;
}

/* Bytes of the stream files (chan_*) of a trace directory: a packet, not
 * the recorder's mark, ballast or metadata, which exist from its start. */
static long long stream_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	long long n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[PATH_MAX + 300];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (!strncmp(de->d_name, "chan_", 5) && stat(p, &sb) == 0)
			n += (long long)sb.st_size;
	}
	if (d)
		closedir(d);
	return n;
}

static void parse(const char *file, struct run *r)
{
	FILE *f = fopen(file, "r");
	char line[512];
	double mib;
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "written: %llu", &r->written);
		sscanf(line, "workload: wall_ns %llu cpu_ns %llu", &r->wl_wall_ns, &r->wl_cpu_ns);
		sscanf(line, "tracebuf record: %llu event%*[s], %lf MiB", &r->delivered, &mib);
		sscanf(line, "  lost %llu event", &r->lost);
		const char *d = strstr(line, "(");
		const char *g = strstr(line, "direct writes went at ");
		if (!strncmp(line, "  ring full: ", 13) && g)
			sscanf(g, "direct writes went at %lf", &r->io_direct);
		g = strstr(line, "the page cache took ");
		if (!strncmp(line, "  ring full: ", 13) && g)
			sscanf(g, "the page cache took %lf", &r->io_cache);
		if (!strncmp(line, "tracebuf record: ", 17) && d)
			sscanf(d, "(%lf %% with direct I/O, %lf s of recorder CPU)", &r->direct_pct, &r->sum_cpu);
		/* relay only: `N events delivered to the relay daemon (no local copy) in S s (C s of recorder CPU)` */
		if (!strncmp(line, "tracebuf record: ", 17) && (g = strstr(line, "(no local copy) in ")) != NULL) {
			sscanf(line, "tracebuf record: %llu event", &r->delivered);
			const char *c = strchr(g + 19, '(');
			if (c)
				sscanf(c, "(%lf s of recorder CPU)", &r->sum_cpu);
		}
	}
	if (f)
		fclose(f);
}

/* Runs argv (NULL-terminated) with stdout+stderr to `out`; fills r. */
static void run_cmd(char *const argv[], const char *out, const char *trace, struct run *r)
{
	memset(r, 0, sizeof *r);
	double w0 = mono_s();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	r->rec_cpu = pid > 0 ? reap_cpu(pid, &status) : -1;
	r->wall = mono_s() - w0;
	parse(out, r);
	r->bytes = trace ? bench_dir_bytes(trace) : 0;
	/* the summary's figure is exact; /proc's counts 10 ms clock ticks
	 * (+-7 % at the 0.15 s a recording of the group takes) */
	if (r->sum_cpu > 0)
		r->rec_cpu = r->sum_cpu;
	r->ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->written;
	if (!r->ok) {
		fprintf(stderr, "bench consumer: %s failed:\n", argv[0]);
		bench_cat_stderr(out);
	}
}

/*
 * The ceiling of a consumer that writes through the page cache (the
 * recorder before direct I/O, and its fallback): write() alone of `bytes`
 * into dir/f, from one 256 KiB buffer already in cache (no ring, no copy,
 * no walk).  Returns MiB per CPU-second of this thread, or 0.
 */
static double write_only_rate(const char *dir, uint64_t bytes)
{
	enum { SB = 256 << 10 };
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/write-only", dir);
	uint8_t *buf = malloc(SB);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double rate = 0;
	if (buf && fd >= 0) {
		memset(buf, 0x5a, SB);
		struct timespec a, b;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		uint64_t done = 0;
		while (done < bytes && write(fd, buf, SB) == SB)
			done += SB;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		double c = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		if (c > 0 && done)
			rate = (double)done / 1048576.0 / c;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(buf);
	return rate;
}

static double floor_ns_per_event(void)
{
	uint64_t n = bench_quick() ? 2000000 : 50000000;
	double best = 1e30;
	for (int i = 0; i < 5; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		bench_loop_floor(n);
		clock_gettime(CLOCK_MONOTONIC, &b);
		double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
		if (ns < best)
			best = ns;
	}
	return best;
}

void bench_consumer(struct bench_table *t)
{
	char cli[PATH_MAX], wl[PATH_MAX], dir[PATH_MAX], trace[PATH_MAX + 8], out[PATH_MAX + 8];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, "consumer", "recording costs", "tracebuf or tracebuf-workload not built ($TB_CLI)");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "consumer")) {
		bench_skip(t, "consumer", "recording costs", strerror(errno));
		return;
	}
	snprintf(trace, sizeof trace, "%s/t", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	const char *n1 = bench_quick() ? "200000" : "20000000";

	/* 1 pinned thread: undrained (overwrite) and drained (discard, defaults), best of 3 each, interleaved */
	struct run ow = { 0 }, dc = { 0 }, r;
	for (int round = 0; round < 3; round++) {
		char *a_ow[] = { cli, "record", "-q", "--mode", "overwrite", "-o", trace, "--", wl, "--pin", "0", "--threads", "1",
				 "--events", (char *)n1, NULL };
		bench_rm_rf(trace);
		run_cmd(a_ow, out, NULL, &r);
		if (r.ok && (!ow.ok || r.wl_wall_ns < ow.wl_wall_ns))
			ow = r;
		char *a_dc[] = { cli, "record", "-o", trace, "--", wl, "--pin", "0", "--threads", "1", "--events", (char *)n1, NULL };
		bench_rm_rf(trace);
		run_cmd(a_dc, out, trace, &r);
		if (r.ok && (!dc.ok || r.wl_wall_ns < dc.wl_wall_ns))
			dc = r;
	}
	if (!ow.ok || !dc.ok || !ow.wl_wall_ns || !dc.wl_wall_ns) {
		bench_skip(t, "consumer", "1 pinned thread", "a run failed (output above)");
	} else {
		double n = (double)dc.written;
		double ow_wall = (double)ow.wl_wall_ns / (double)ow.written, ow_cpu = (double)ow.wl_cpu_ns / (double)ow.written;
		double dc_wall = (double)dc.wl_wall_ns / n, dc_cpu = (double)dc.wl_cpu_ns / n;
		bench_row(t, "consumer", "producer, rings never drained (overwrite): wall", ow_wall, "ns/ev", 0, NULL, NULL);
		bench_row(t, "consumer", "producer under record (discard): wall", dc_wall, "ns/ev", dc_wall / ow_wall,
			  "recorded / undrained", "<= 1.25");
		bench_row(t, "consumer", "producer under record (discard): CPU", dc_cpu, "ns/ev", dc_cpu / ow_cpu,
			  "recorded / undrained", "<= 1.25");
		double fl = floor_ns_per_event();
		bench_row(t, "consumer", "floor: rdtsc + 16-byte store", fl, "ns/ev", 0, NULL, NULL);
		bench_row(t, "consumer", "whole `record -- workload` run: wall", dc.wall * 1e9 / n, "ns/ev",
			  dc.wall * 1e9 / n / fl, "run / floor", "<= 1.5");
		/* the same program's loop with the event written as the floor
		 * writes it (rdtsc + its 32 bytes: workload --floor), best of 3 */
		struct run fr = { 0 };
		for (int round = 0; round < 3; round++) {
			char *a_fl[] = { wl, "--floor", "--pin", "0", "--threads", "1", "--events", (char *)n1, NULL };
			run_cmd(a_fl, out, NULL, &r);
			if (r.ok && r.wl_wall_ns && (!fr.ok || r.wl_wall_ns < fr.wl_wall_ns))
				fr = r;
		}
		if (fr.ok) {
			double wf = (double)fr.wl_wall_ns / (double)fr.written;
			bench_row(t, "consumer", "floor: the workload's loop, rdtsc + 32-byte store", wf, "ns/ev", 0, NULL,
				  NULL);
			bench_row(t, "consumer", "producer, rings never drained, vs that floor", ow_wall, "ns/ev",
				  ow_wall / wf, "undrained / floor", NULL);
			bench_row(t, "consumer", "whole `record -- workload` run vs that floor", dc.wall * 1e9 / n, "ns/ev",
				  dc.wall * 1e9 / n / wf, "run / floor", "<= 1.5");
		}
		bench_row(t, "consumer", "1 pinned thread: lost", 100.0 * (double)dc.lost / n, "%", 0, NULL, NULL);
		if (dc.rec_cpu > 0 && dc.delivered && dc.bytes > 0) {
			double bpe = (double)dc.bytes / (double)dc.delivered; /* trace bytes per event */
			double drained = (double)dc.bytes / 1048576.0 / dc.rec_cpu;
			double produced = bpe * n / 1048576.0 / ((double)dc.wl_cpu_ns / 1e9);
			/* "one producer's full-speed output": the undrained run's.
			 * The recorded producer's own rate is no steady baseline on
			 * the benchmark VM: in some runs it ran 1.3-1.45x slower per
			 * event (CPU time too) while the recorder wrote, which made
			 * the ratio look better than the recorder was
			 * (docs/BENCHMARKS.md, "Issue 14 rows") */
			double full = bpe * (double)ow.written / 1048576.0 / ((double)ow.wl_cpu_ns / 1e9);
			bench_row(t, "consumer", "producer output at full speed (undrained, per its CPU-s)", full,
				  "MiB/cpu-s", 0, NULL, NULL);
			bench_row(t, "consumer", "producer output under record (per its CPU-s)", produced, "MiB/cpu-s",
				  produced / full, "recorded / full speed", NULL);
			bench_row(t, "consumer", "consumer throughput (bytes per its CPU-s)", drained, "MiB/cpu-s",
				  drained / full, "consumer / producer", ">= 3");
			bench_row(t, "consumer", "of those bytes, written with direct I/O", dc.direct_pct, "%", 0, NULL,
				  NULL);
			/* what limited it through the page cache: the kernel's copy
			 * (best of 3: the figure depends on the page cache's state) */
			double ceiling = 0;
			for (int k = 0; k < 3; k++) {
				double c = write_only_rate(dir, dc.bytes < (256u << 20) ? dc.bytes : (256u << 20));
				if (c > ceiling)
					ceiling = c;
			}
			if (ceiling > 0)
				bench_row(t, "consumer", "page cache: write() alone of those bytes", ceiling, "MiB/cpu-s",
					  ceiling / full, "write-only / producer", NULL);
		} else {
			bench_skip(t, "consumer", "consumer throughput", "recorder CPU time below the clock tick");
		}
	}

	/* 2 threads at full speed on this machine, default settings */
	char *a2[] = { cli, "record", "-o", trace, "--", wl, "--threads", "2", "--events", (char *)n1, NULL };
	bench_rm_rf(trace);
	run_cmd(a2, out, trace, &r);
	if (r.ok) {
		bench_row(t, "consumer", "2 threads full speed, defaults: lost", 100.0 * (double)r.lost / (double)r.written,
			  "%", (double)r.lost / (double)r.written, "lost / written", "<= 0.05");
		/* what limits it: the producers' pace against the file
		 * system's, each way (the recorder's own measure of its
		 * write calls, printed when rings were full) */
		if (r.delivered && r.wl_wall_ns && r.bytes > 0) {
			double made = (double)r.bytes / (double)r.delivered * (double)r.written / (double)r.wl_wall_ns;
			bench_row(t, "consumer", "2 threads: what the producers wrote", made, "GB/s", 0, NULL, NULL);
			if (r.io_direct > 0)
				bench_row(t, "consumer", "2 threads: the disk, direct writes (recorder's measure)", r.io_direct,
					  "GB/s", r.io_direct / made, "disk / producers", NULL);
			if (r.io_cache > 0)
				bench_row(t, "consumer", "2 threads: the page cache (recorder's measure)", r.io_cache, "GB/s",
					  r.io_cache / made, "page cache / producers", NULL);
		}
	} else
		bench_skip(t, "consumer", "2 threads full speed", "record failed (output above)");

	/* 4 threads and their signal handlers at full speed, 10 times (the
	 * demo before it was paced): what a burst of that size costs here */
	int runs = bench_quick() ? 2 : 10;
	{
		int zero = 0, failed = 0;
		unsigned long long most = 0, most_of = 0;
		for (int i = 0; i < runs; i++) {
			char *af[] = { cli, "record", "-o", trace, "--", wl, "--threads", "4", "--events", "200000", "--signals",
				       NULL };
			bench_rm_rf(trace);
			run_cmd(af, out, trace, &r);
			zero += r.ok && r.lost == 0;
			failed += !r.ok;
			if (r.ok && r.lost >= most) {
				most = r.lost;
				most_of = r.written;
			}
		}
		char cfg[112];
		snprintf(cfg, sizeof cfg, "4 threads + signals full speed x %d: most lost in a run (%d of %d with 0, %d failed)",
			 runs, zero, runs, failed);
		bench_row(t, "consumer", cfg, (double)most, "events", most_of ? (double)most / (double)most_of : 0,
			  "lost / written", NULL);
	}

	/* the demo's command (Makefile: DEMO_WORKLOAD; keep them equal), 10 times */
	int zero = 0, failed = 0;
	unsigned long long most = 0, most_of = 0;
	for (int i = 0; i < runs; i++) {
		char *ad[] = { cli, "record", "-o", trace, "--", wl, "--threads", "4", "--events", "40000", "--rate", "20000",
			       "--signals", NULL };
		bench_rm_rf(trace);
		run_cmd(ad, out, trace, &r);
		zero += r.ok && r.lost == 0;
		failed += !r.ok;
		if (r.ok && r.lost > most) {
			most = r.lost;
			most_of = r.written;
		}
	}
	char cfg[96];
	snprintf(cfg, sizeof cfg, "make demo's recording x %d: runs with 0 lost", runs);
	bench_row(t, "consumer", cfg, zero, "runs", (double)zero / runs, "share of runs", "10 of 10");
	if (zero < runs) { /* what the others lost, so that a miss can be told from a failed run */
		snprintf(cfg, sizeof cfg, "  of the others: most lost in a run (%d failed)", failed);
		bench_row(t, "consumer", cfg, (double)most, "events", most_of ? (double)most / (double)most_of : 0,
			  "lost / written", NULL);
	}

	/* block mode, recorder killed -9: the program's wall time vs untraced */
	const char *nb = bench_quick() ? "20000" : "100000";
	char *au[] = { wl, "--threads", "2", "--events", (char *)nb, "--sleep-us", "500", NULL };
	unsetenv("TRACEBUF_SESSION");
	run_cmd(au, out, NULL, &r);
	struct run untraced = r;
	char sess[PATH_MAX + 8];
	snprintf(sess, sizeof sess, "%s/s.tb", dir); /* removed with dir: the killed recorder leaves it */
	/* the previous rows' trace goes before the fork: removed in the child,
	 * the poll below could see its stream files and kill the recorder
	 * before it even created the session (then no program ever ran) */
	bench_rm_rf(trace);
	pid_t rp = fork();
	if (rp == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(cli, cli, "record", "-q", "--mode", "block", "--sb-size", "16K", "--sb-count", "2", "--session", sess,
		      "-o", trace, "--",
		      wl, "--threads", "2", "--events", nb, "--sleep-us", "500", (char *)NULL);
		_exit(127);
	}
	/* kill the recorder once its trace has a packet: the program then runs without a consumer */
	for (int i = 0; i < 2000 && stream_bytes(trace) <= 0; i++)
		usleep(5000);
	kill(rp, SIGKILL);
	waitpid(rp, NULL, 0);
	/* the orphaned workload finishes by itself: wait for its last line */
	struct run killed = { 0 };
	for (int i = 0; i < 12000 && !killed.written; i++) {
		usleep(10000);
		parse(out, &killed);
	}
	if (untraced.ok && untraced.wl_wall_ns && killed.wl_wall_ns)
		bench_row(t, "consumer", "block mode, recorder killed -9: program wall", (double)killed.wl_wall_ns / 1e9, "s",
			  (double)killed.wl_wall_ns / (double)untraced.wl_wall_ns, "killed / untraced", "<= 2");
	else
		bench_skip(t, "consumer", "block mode, recorder killed", "the program did not finish within 120 s");
	bench_rm_rf(dir);
}

/* ---- group `relay`: what sending to lttng-relayd costs the recorder (issue 15) ---- */

/* Three free loopback ports (bound to 0, then released). */
static int free_ports(unsigned port[3])
{
	int fd[3];
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t l = sizeof a;
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&a, sizeof a) || getsockname(fd[i], (struct sockaddr *)&a, &l))
			return -1;
		port[i] = ntohs(a.sin_port);
	}
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	return 0;
}

/* Bytes of the stream files lttng-relayd wrote for session `name` under `rout` (the relay's
 * copy: not its index/ or metadata; tracebuf's streams are chan_*, LTTng's per-UID ones
 * ch_N under ust/uid/...). */
static long long relay_bytes(const char *rout, const char *name)
{
	char cmd[PATH_MAX + 200];
	snprintf(cmd, sizeof cmd,
		 "find '%s' -path '*/%s-*' -type f ! -path '*/index/*' ! -name metadata ! -name '*.idx' -printf '%%s\\n' "
		 "2>/dev/null",
		 rout, name);
	FILE *f = popen(cmd, "r");
	long long sum = 0, v;
	while (f && fscanf(f, "%lld", &v) == 1)
		sum += v;
	if (f)
		pclose(f);
	return sum;
}

/* The value of `key N` in file `out` (run.sh's lines), or -1. */
static double key_value(const char *out, const char *key)
{
	FILE *f = fopen(out, "r");
	char line[512];
	double v = -1;
	size_t k = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, k) && line[k] == ' ')
			v = strtod(line + k + 1, NULL);
	if (f)
		fclose(f);
	return v;
}

/* median of v[0..n) (sorted in place), min and max in *lo, *hi */
static double median(double *v, int n, double *lo, double *hi)
{
	double m = bench_median(v, n);
	*lo = v[0];
	*hi = v[n - 1];
	return m;
}

#define RELAY_ROUNDS 5
/* RL_T*: the same as RL_LOCAL and RL_ONLY with --trust-writers (packets written and sent
 * from the ring, no private copy: issue 27's opt-in path) */
enum { RL_LOCAL, RL_ONLY, RL_BOTH, RL_LTTNG, RL_TLOCAL, RL_TONLY, RL_N };

/*
 * Group `relay` (issues 15 and 27): recorder CPU per MiB writing locally, sending to
 * lttng-relayd (relay only: no local copy), both, and lttng-consumerd streaming the same
 * event stream to the same relay daemon; local and relay only again with --trust-writers
 * (packets written and sent from the ring).  The event stream is equal-load's (bench_equal.c):
 * 16-byte events, 1 thread paced at RELAY_RATE events/s (a rate both recorders keep up
 * with: the relay's copy must be whole, or the row says what share arrived), tracebuf's
 * `tracebuf-workload --payload 16` and LTTng's `tracebuf-bench-lttng workload` (the same
 * loop) under bench/lttng/run.sh `relay` (LTTng's default channel, per-UID buffers,
 * `lttng create --set-url net://...`).  RELAY_ROUNDS rounds, the four configurations
 * interleaved in each (the machine is shared): the median is the figure, min-max said.
 * CPU: the recorder's own getrusage (its summary line; not the workload's), the
 * lttng-consumerd processes' schedstat (run.sh consumerd_cpu_ns), lttng-relayd's
 * /proc/PID/stat before and after.  Per MiB of stream files the relay daemon wrote (per MiB
 * of the local trace's stream files for the local run).
 */
void bench_relay(struct bench_table *t)
{
	char cli[PATH_MAX], wl[PATH_MAX], app[PATH_MAX], dir[PATH_MAX], trace[PATH_MAX + 8], out[PATH_MAX + 8],
		rout[PATH_MAX + 8];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	bench_build_path(NULL, "bench/lttng/tracebuf-bench-lttng", app, sizeof app);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, "relay", "recorder CPU per MiB", "tracebuf or tracebuf-workload not built ($TB_CLI)");
		return;
	}
	if (system("command -v lttng-relayd > /dev/null 2>&1") != 0) {
		bench_skip(t, "relay", "recorder CPU per MiB", "lttng-relayd not installed (apt-get install lttng-tools)");
		return;
	}
	const char *lttng_why = bench_lttng_unusable();
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/tb-bench-relay.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	unsigned port[3];
	if (!mkdtemp(dir) || free_ports(port)) {
		bench_skip(t, "relay", "recorder CPU per MiB", strerror(errno));
		return;
	}
	snprintf(trace, sizeof trace, "%s/t", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	snprintf(rout, sizeof rout, "%s/relay", dir);
	char cp[64], dp[64], lp[64], o[PATH_MAX + 32], url[80];
	snprintf(cp, sizeof cp, "--control-port=tcp://127.0.0.1:%u", port[0]);
	snprintf(dp, sizeof dp, "--data-port=tcp://127.0.0.1:%u", port[1]);
	snprintf(lp, sizeof lp, "--live-port=tcp://127.0.0.1:%u", port[2]);
	snprintf(o, sizeof o, "--output=%s", rout);
	snprintf(url, sizeof url, "net://127.0.0.1:%u:%u", port[0], port[1]);
	pid_t rp = fork();
	if (rp == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("lttng-relayd", "lttng-relayd", cp, dp, lp, o, (char *)NULL);
		_exit(127);
	}
	/* up when the control port accepts a connection */
	int up = 0;
	for (int i = 0; rp > 0 && i < 200 && !up; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port[0]),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		up = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
		if (fd >= 0)
			close(fd);
		if (!up)
			usleep(50000);
	}
	if (!up) {
		bench_skip(t, "relay", "recorder CPU per MiB", "lttng-relayd did not start");
		if (rp > 0) {
			kill(rp, SIGKILL);
			waitpid(rp, NULL, 0);
		}
		bench_rm_rf(dir);
		return;
	}
	/* 1 thread at 2 M events/s of 16-byte payloads (~40 MB/s), 4 s */
	const char *n = bench_quick() ? "200000" : "8000000", *rate = "2000000";
	double cpu[RL_N][RELAY_ROUNDS], relayd[RELAY_ROUNDS], share[RELAY_ROUNDS] = { 0 };
	int got[RL_N] = { 0 }, nrelayd = 0, fails = 0, lt_fails = 0;
	long long bytes = 0;
	for (int round = 0; round < RELAY_ROUNDS; round++) {
		for (int c = 0; c < RL_N; c++) {
			if (c == RL_LTTNG && lttng_why)
				continue;
			struct run r;
			char name[32];
			snprintf(name, sizeof name, "%s%d", c == RL_LTTNG ? "lt" : "tb", round * RL_N + c);
			double c0 = proc_cpu(rp), v = -1;
			long long rb = 0;
			if (c == RL_LTTNG) {
				/* run.sh names the session tbbench: its directory is tbbench-DATE */
				char cmd[3 * PATH_MAX + 200];
				snprintf(cmd, sizeof cmd,
					 "sh '%s/lttng/run.sh' relay '%s' '%s' workload --threads 1 --events %s --rate %s "
					 "> '%s' 2>&1",
					 TB_BENCH_SRC_DIR, url, app, n, rate, out);
				int st = system(cmd);
				/* per MiB the relay daemon wrote: a run where LTTng discarded
				 * events (its consumer behind, on a loaded machine) counts what
				 * arrived, as tracebuf's relay-only runs do */
				double ns = key_value(out, "consumerd_cpu_ns");
				rb = relay_bytes(rout, "tbbench");
				if (!WIFEXITED(st) || WEXITSTATUS(st) || ns <= 0 || rb <= 0) {
					if (!lt_fails++) {
						fprintf(stderr, "bench relay: bench/lttng/run.sh relay failed, or no "
								"consumerd CPU time (schedstat):\n");
						bench_cat_stderr(out);
					}
				} else {
					v = ns / 1e6 / ((double)rb / 1048576.0);
				}
				/* the next LTTng run's directory must be its own */
				char rm[PATH_MAX + 64];
				snprintf(rm, sizeof rm, "rm -rf '%s'/*/tbbench-*", rout);
				if (system(rm) != 0)
					fprintf(stderr, "bench relay: %s failed\n", rm);
			} else {
				char *av[32];
				int k = 0;
				av[k++] = cli;
				av[k++] = "record"; /* not -q: its summary has the CPU time */
				av[k++] = "--mode";
				av[k++] = "block";
				int only = c == RL_ONLY || c == RL_TONLY, local = c == RL_LOCAL || c == RL_TLOCAL;
				if (c == RL_TLOCAL || c == RL_TONLY)
					av[k++] = "--trust-writers";
				if (!local) {
					av[k++] = "--relay";
					av[k++] = url;
					av[k++] = "--session-name";
					av[k++] = name;
					av[k++] = "--live-timer";
					av[k++] = "0";
				}
				if (!only) {
					av[k++] = "-o";
					av[k++] = trace;
				}
				char *tail[] = { "--", wl, "--payload", "16", "--threads", "1", "--events", (char *)n,
						 "--rate", (char *)rate, NULL };
				memcpy(av + k, tail, sizeof tail);
				bench_rm_rf(trace);
				/* relay only: record writes nothing locally (cwd is not used) */
				run_cmd(av, out, only ? NULL : trace, &r);
				long long lbytes = only ? 0 : stream_bytes(trace);
				rb = local ? 0 : relay_bytes(rout, name);
				double mib = (double)(local ? lbytes : rb) / 1048576.0;
				if (!r.ok || r.sum_cpu <= 0 || mib <= 0) {
					if (!fails++)
						fprintf(stderr, "bench relay: a recording failed (output above), or measured "
								"nothing\n");
				} else {
					v = r.sum_cpu * 1000.0 / mib;
					if (c == RL_LOCAL)
						bytes = lbytes;
					if (c == RL_ONLY && bytes > 0)
						share[got[RL_ONLY]] = (double)rb / (double)bytes;
				}
			}
			double c1 = proc_cpu(rp);
			if (v > 0) {
				cpu[c][got[c]++] = v;
				if (c == RL_ONLY && c0 >= 0 && c1 >= 0 && rb > 0)
					relayd[nrelayd++] = (c1 - c0) * 1000.0 / ((double)rb / 1048576.0);
			}
		}
	}
	kill(rp, SIGTERM);
	waitpid(rp, NULL, 0);
	char cfg[160];
	double lo, hi, med[RL_N] = { 0 };
	static const char *const what[RL_N] = { "tracebuf recorder, local file", "tracebuf recorder, relay only (no -o)",
						 "tracebuf recorder, local file + relay", "lttng-consumerd, to the same relayd",
						 "tracebuf recorder, local file, --trust-writers",
						 "tracebuf recorder, relay only, --trust-writers" };
	for (int c = 0; c < RL_N; c++) {
		if (c == RL_LTTNG && lttng_why) {
			bench_skip(t, "relay", what[c], lttng_why);
			continue;
		}
		if (!got[c]) {
			bench_skip(t, "relay", what[c], "every run failed (stderr says why)");
			continue;
		}
		med[c] = median(cpu[c], got[c], &lo, &hi);
		snprintf(cfg, sizeof cfg, "%s: CPU/MiB (%d runs, %.2f-%.2f)", what[c], got[c], lo, hi);
		if (c == RL_LOCAL)
			bench_row(t, "relay", cfg, med[c], "ms/MiB", 0, "baseline", NULL);
		else if (c == RL_LTTNG)
			bench_row(t, "relay", cfg, med[c], "ms/MiB", med[RL_ONLY] > 0 ? med[RL_ONLY] / med[c] : 0,
				  "tracebuf relay only / consumerd", "<= 1");
		else if (c == RL_TLOCAL)
			bench_row(t, "relay", cfg, med[c], "ms/MiB", med[RL_LOCAL] > 0 ? med[c] / med[RL_LOCAL] : 0,
				  "trusted local / local", NULL);
		else if (c == RL_TONLY)
			bench_row(t, "relay", cfg, med[c], "ms/MiB", med[RL_LOCAL] > 0 ? med[c] / med[RL_LOCAL] : 0,
				  "trusted relay only / local", "<= 1.5");
		else
			bench_row(t, "relay", cfg, med[c], "ms/MiB", med[RL_LOCAL] > 0 ? med[c] / med[RL_LOCAL] : 0,
				  c == RL_ONLY ? "relay only / local" : "local + relay / local", c == RL_ONLY ? "<= 1.5" : NULL);
	}
	if (med[RL_LOCAL] > 0 && med[RL_BOTH] > 0) {
		/* what sending adds to a recording that also writes locally */
		double send = med[RL_BOTH] - med[RL_LOCAL];
		bench_row(t, "relay", "tracebuf sending, above the local copy: CPU/MiB", send, "ms/MiB",
			  send / med[RL_LOCAL], "sending / local write", "<= 1.5");
	}
	if (med[RL_TONLY] > 0 && med[RL_LTTNG] > 0)
		bench_row(t, "relay", "tracebuf relay only, --trust-writers, against lttng-consumerd: CPU/MiB",
			  med[RL_TONLY], "ms/MiB", med[RL_TONLY] / med[RL_LTTNG], "trusted relay only / consumerd", "<= 1");
	if (got[RL_ONLY]) {
		double sh = median(share, got[RL_ONLY], &lo, &hi);
		snprintf(cfg, sizeof cfg, "relay only: share of the bytes the relay daemon got (%.3f-%.3f)", lo, hi);
		bench_row(t, "relay", cfg, sh, "x", sh, "received / written locally", NULL);
	}
	if (nrelayd) {
		double m = median(relayd, nrelayd, &lo, &hi);
		snprintf(cfg, sizeof cfg, "lttng-relayd receiving tracebuf: CPU/MiB (%.2f-%.2f)", lo, hi);
		bench_row(t, "relay", cfg, m, "ms/MiB", med[RL_LOCAL] > 0 ? m / med[RL_LOCAL] : 0, "relayd / local recorder",
			  NULL);
	}
	(void)bytes;
	bench_rm_rf(dir);
}
