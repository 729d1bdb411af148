/* SPDX-License-Identifier: MIT */
/*
 * bench_reader.c - how fast is tracebuf's reader, against babeltrace2, in
 * one run on one synthetic trace.
 *
 *   bench_reader [--events N] [--dir DIR] [--cli PATH] [--keep]
 *   BENCH_QUICK=1: 200,000 events (default 10,000,000)
 *
 * Writes a trace with tests/lib/tbtrace_* (2 CPUs, 256 KiB packets, thread
 * records at each packet start, 90% 16-byte-payload events, 10% with a
 * string), reads it once to warm the page cache, then measures:
 *   1. the reader library's merged iteration alone (tb_reader_next over
 *      every event, in this process);
 *   2. `tracebuf dump DIR > /dev/null` (decode + format every field);
 *   3. `babeltrace2 DIR > /dev/null` when installed (else: skipped, why);
 * and prints events/s of each and the ratios to babeltrace2 (target: the
 * reader iterates >= 10x faster, docs/DESIGN.md "Performance budget").
 * The tracebuf CLI is $TB_CLI, --cli, or `tracebuf` next to the build dir.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "tbtrace.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_trace(const char *dir, uint64_t n)
{
	struct tb_event_desc ev[3];
	tbtrace_desc(&ev[1], 1, "bench:sample", 2, "u64:seq", "u64:value");
	tbtrace_desc(&ev[2], 2, "bench:msg", 2, "str:text", "u32:n");
	struct tbtrace_opts o = { .events = ev, .nevents = 3, .packet_size = 256 << 10 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s[2] = { tbtrace_stream(t, "chan", 0, 0), tbtrace_stream(t, "chan", 0, 1) };
	tbtrace_set_thread(s[0], 1000, 1000);
	tbtrace_set_thread(s[1], 1000, 1001);
	uint64_t ts = 1000;
	for (uint64_t i = 0; i < n; i++) {
		struct tbtrace_stream *x = s[(i >> 3) & 1]; /* runs of 8 per CPU */
		ts += 20 + (i & 15);
		if (i % 10 == 9) {
			struct tbtrace_buf b = { .n = 0 };
			tbb_str(&b, "request handled");
			tbb_u32(&b, (uint32_t)i);
			tbtrace_event(x, 2, ts, b.b, b.n);
		} else {
			uint64_t p[2] = { i, i * 2654435761u };
			tbtrace_event(x, 1, ts, p, 16);
		}
	}
	tbtrace_close(t);
}

static uint64_t dir_bytes(const char *dir)
{
	char p[PATH_MAX + 32];
	uint64_t total = 0;
	for (int c = 0; c < 2; c++) {
		struct stat st;
		snprintf(p, sizeof p, "%s/chan_%d", dir, c);
		if (!stat(p, &st))
			total += (uint64_t)st.st_size;
	}
	return total;
}

/* merged iteration; returns events, -1 on error */
static int64_t iterate(const char *dir, double *secs)
{
	struct tb_reader *r;
	double t0 = now();
	if (tb_reader_open(dir, NULL, &r)) {
		fprintf(stderr, "bench_reader: %s\n", tb_errmsg());
		return -1;
	}
	const struct tb_rd_event *e;
	uint64_t n = 0, sum = 0;
	while (tb_reader_next(r, &e) > 0) {
		n += tb_rd_kind(e) == TB_RD_EVENT;
		sum += tb_rd_ticks(e);
	}
	tb_reader_close(r);
	*secs = now() - t0;
	if (!sum)
		fprintf(stderr, "bench_reader: no timestamps?\n");
	return (int64_t)n;
}

/* runs argv with stdout to /dev/null; returns the wall time, < 0 on failure */
static double run(char *const argv[])
{
	double t0 = now();
	pid_t p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	return now() - t0;
}

static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	while (path && *path) {
		const char *c = strchr(path, ':');
		size_t l = c ? (size_t)(c - path) : strlen(path);
		snprintf(buf, sizeof buf, "%.*s/%s", (int)l, path, prog);
		if (!access(buf, X_OK))
			return 1;
		path = c ? c + 1 : NULL;
	}
	return 0;
}

static const char *find_cli(const char *opt)
{
	static char buf[PATH_MAX + 16];
	if (opt)
		return opt;
	if (getenv("TB_CLI"))
		return getenv("TB_CLI");
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = 0;
		for (int up = 0; up < 3; up++) {
			char *sl = strrchr(self, '/');
			if (!sl)
				break;
			*sl = 0;
			snprintf(buf, sizeof buf, "%s/tracebuf", self);
			if (!access(buf, X_OK))
				return buf;
		}
	}
	return "tracebuf";
}

int main(int argc, char **argv)
{
	uint64_t n = getenv("BENCH_QUICK") && strcmp(getenv("BENCH_QUICK"), "0") ? 200000 : 10000000;
	const char *dir = NULL, *cli_opt = NULL;
	int keep = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--events") && i + 1 < argc)
			n = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--cli") && i + 1 < argc)
			cli_opt = argv[++i];
		else if (!strcmp(argv[i], "--keep"))
			keep = 1;
		else {
			fprintf(stderr, "usage: bench_reader [--events N] [--dir DIR] [--cli PATH] [--keep]\n"
					"  BENCH_QUICK=1: 200000 events\n");
			return 2;
		}
	}
	char tmp[] = "/tmp/tbbench-XXXXXX";
	if (!dir) {
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
		dir = tmp;
	}
	char tdir[PATH_MAX];
	snprintf(tdir, sizeof tdir, "%s/trace", dir);
	const char *cli = find_cli(cli_opt);
	printf("reader benchmark: %" PRIu64 " events, trace %s\n", n, tdir);
	double t0 = now();
	write_trace(tdir, n);
	printf("  trace written in %.2f s: %.1f MB\n", now() - t0, (double)dir_bytes(tdir) / 1e6);

	double warm, it, dump = -1, bt = -1;
	int64_t got = iterate(tdir, &warm); /* also warms the page cache */
	if (got != (int64_t)n) {
		fprintf(stderr, "bench_reader: read %" PRId64 " events, wrote %" PRIu64 "\n", got, n);
		return 1;
	}
	iterate(tdir, &it);
	double it2;
	iterate(tdir, &it2);
	if (it2 < it)
		it = it2;
	char *dargv[] = { (char *)cli, "dump", (char *)tdir, NULL };
	dump = run(dargv);
	printf("  %-34s %8.3f s %12.0f events/s\n", "reader library, merged iteration", it, (double)n / it);
	if (dump > 0)
		printf("  %-34s %8.3f s %12.0f events/s\n", "tracebuf dump > /dev/null", dump, (double)n / dump);
	else
		printf("  tracebuf dump: FAILED (%s)\n", cli);
	const char *why = NULL;
	if (!in_path("babeltrace2")) {
		why = "babeltrace2 is not installed (apt-get install babeltrace2)";
	} else {
		char *bargv[] = { "babeltrace2", (char *)tdir, NULL };
		bt = run(bargv);
		if (bt < 0)
			why = "babeltrace2 failed on the trace";
	}
	if (bt > 0) {
		printf("  %-34s %8.3f s %12.0f events/s\n", "babeltrace2 > /dev/null", bt, (double)n / bt);
		printf("  ratio reader iteration / babeltrace2: %.1fx (target >= 10x: %s)\n", bt / it,
		       bt / it >= 10 ? "met" : "NOT MET");
		if (dump > 0)
			printf("  ratio tracebuf dump / babeltrace2:    %.1fx\n", bt / dump);
	} else {
		printf("  babeltrace2: skipped: %s\n", why);
	}
	if (!keep && dir == tmp) {
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
		if (system(cmd))
			fprintf(stderr, "bench_reader: could not remove %s\n", tmp);
	}
	return 0;
}
