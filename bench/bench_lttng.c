/* SPDX-License-Identifier: MIT */
/*
 * bench_lttng.c - LTTng-UST side by side with tracebuf, same event (two u64
 * fields, 16-byte payload), same run:
 *
 *   cost     ns per event, one thread, best of interleaved rounds; LTTng in a
 *            session in discard mode with per-UID buffers (8 x 256 KiB per
 *            CPU, no context), its consumer daemon draining to $TMPDIR;
 *            tracebuf in an overwrite-mode session without a consumer (no
 *            drop path: every event is written).  LTTng events it discarded
 *            are printed: a discarded event is cheaper than a written one,
 *            so discards only flatter LTTng.
 *   latency  p50 ... max of single events (bench/lttng/common.h)
 *   size     bytes on disk per event, N events of one thread, nothing lost
 *            (tracebuf: TB_BLOCK with the embedded recorder; LTTng: a
 *            blocking channel, --blocking-timeout=inf); the whole trace
 *            directory (LTTng's counts its index files too).
 *   threads  (rows of the `threads` group, bench_lttng_threads) N events
 *            from 1, 2, 64 threads at once, the same runner and the same
 *            session as `cost`, compared with tracebuf's figures of that
 *            group; the events LTTng discarded.
 *
 * The LTTng side is the separate executable bench/lttng/tracebuf-bench-lttng
 * (built only where liblttng-ust is found), run by bench/lttng/run.sh inside a
 * private mount namespace with its own lttng-sessiond.  Rows are skipped,
 * with the reason, when any piece is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "bench.h"
#include "lttng/common.h"
#include "platform/clock.h"

#ifndef TB_BENCH_SRC_DIR
#define TB_BENCH_SRC_DIR "bench"
#endif

static double timed(void (*fn)(uint64_t), uint64_t n)
{
	uint64_t t0 = bc_mono_ns();
	fn(n);
	return (double)(bc_mono_ns() - t0) / (double)n;
}

static int in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char buf[PATH_MAX];
	while (p && *p) {
		size_t l = strcspn(p, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)l, p, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		p += l + (p[l] == ':');
	}
	return 0;
}

/* Key/value output of run.sh; NAN-free: missing keys stay -1. */
struct lt_out {
	double enabled, floor_ns, lttng_ns, lat[BC_NPCT], written, discarded, trace_bytes;
	double floor_cpu, floor_wall, lttng_cpu, lttng_wall; /* threads mode */
};

static int run_lttng(const char *mode, const char *outdir, const char *args, struct lt_out *o)
{
	char app[PATH_MAX], cmd[3 * PATH_MAX + 256], line[256];
	bench_build_path(NULL, "bench/lttng/tracebuf-bench-lttng", app, sizeof app);
	snprintf(cmd, sizeof cmd, "sh '%s/lttng/run.sh' %s '%s' '%s' %s", TB_BENCH_SRC_DIR, mode, outdir, app, args);
	o->enabled = o->floor_ns = o->lttng_ns = o->written = o->discarded = o->trace_bytes = -1;
	o->floor_cpu = o->floor_wall = o->lttng_cpu = o->lttng_wall = -1;
	for (int i = 0; i < BC_NPCT; i++)
		o->lat[i] = -1;
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof line, p)) {
		char k[64];
		double v;
		if (sscanf(line, "%63s %lf", k, &v) != 2)
			continue;
		if (!strcmp(k, "enabled")) o->enabled = v;
		else if (!strcmp(k, "floor_ns")) o->floor_ns = v;
		else if (!strcmp(k, "lttng_ns")) o->lttng_ns = v;
		else if (!strcmp(k, "written")) o->written = v;
		else if (!strcmp(k, "discarded")) o->discarded = v;
		else if (!strcmp(k, "trace_bytes")) o->trace_bytes = v;
		else if (!strcmp(k, "floor_cpu")) o->floor_cpu = v;
		else if (!strcmp(k, "floor_wall")) o->floor_wall = v;
		else if (!strcmp(k, "lttng_cpu")) o->lttng_cpu = v;
		else if (!strcmp(k, "lttng_wall")) o->lttng_wall = v;
		for (int i = 0; i < BC_NPCT; i++) {
			char name[32];
			snprintf(name, sizeof name, "lat_%s", bc_pct_names[i]);
			if (!strcmp(k, name))
				o->lat[i] = v;
		}
	}
	int st = pclose(p);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && o->enabled == 1 ? 0 : -1;
}

/* tracebuf trace of n ev16 events, nothing lost: bytes on disk, -1 on error. */
static long long tracebuf_trace_bytes(const char *outdir, uint64_t n, uint64_t *delivered)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "bench", .sb_size = 256 << 10, .sb_count = 8,
				      .mode = TB_BLOCK, .block_timeout_ns = 10000000000ull, .events = "bench:ev16" };
	struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co };
	struct tb_recorder *rec;
	if (tb_session_start(&so, outdir, &rec)) {
		fprintf(stderr, "bench lttng: tb_session_start: %s\n", tb_errmsg());
		return -1;
	}
	bench_loop_tracebuf(n);
	struct tb_counters c;
	memset(&c, 0, sizeof c);
	tb_session_counters(tb_recorder_session(rec), 0, -1, &c);
	*delivered = c.written;
	uint64_t lost = c.lost_full + c.lost_timeout + c.lost_toobig + c.lost_busy + c.lost_overwritten;
	if (tb_session_stop(rec) || lost)
		return -1;
	return bench_dir_bytes(outdir);
}

const char *bench_lttng_unusable(void)
{
	char app[PATH_MAX];
	bench_build_path(NULL, "bench/lttng/tracebuf-bench-lttng", app, sizeof app);
	if (access(app, X_OK))
		return "liblttng-ust not found at configure time (apt-get install liblttng-ust-dev)";
	if (!in_path("lttng") || !in_path("lttng-sessiond"))
		return "lttng / lttng-sessiond not in PATH (apt-get install lttng-tools)";
	if (!in_path("unshare") || geteuid() != 0)
		return "needs root and unshare (private mount namespace for lttng-sessiond)";
	return NULL;
}

/* A fresh directory for LTTng's traces under $TMPDIR (or /tmp): 0 or -1. */
static int make_dir(char *dir, size_t len)
{
	return bench_mkdtemp(dir, len, "lttng");
}

void bench_lttng_threads(struct bench_table *t, unsigned nthr, uint64_t total, int rounds, double tb_cpu,
			 double tb_wall, double floor_cpu)
{
	const char *g = "threads";
	char dir[PATH_MAX], out[PATH_MAX + 16], args[128], cfg[96];
	snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST", nthr);
	if (make_dir(dir, sizeof dir)) {
		bench_skip(t, g, cfg, strerror(errno));
		return;
	}
	struct lt_out lo;
	snprintf(out, sizeof out, "%s/trace", dir);
	snprintf(args, sizeof args, "threads %u %llu %d", nthr, (unsigned long long)total, rounds);
	int rc = run_lttng("discard", out, args, &lo);
	bench_rm_rf(dir);
	if (rc || lo.lttng_cpu <= 0 || lo.floor_cpu <= 0 || lo.lttng_wall <= 0) {
		bench_skip(t, g, cfg, "bench/lttng/run.sh failed or the tracepoint was not enabled (see stderr)");
		return;
	}
	snprintf(cfg, sizeof cfg, "%u thr: LTTng process floor, CPU/event", nthr);
	bench_row(t, g, cfg, lo.floor_cpu, "ns/ev/thr", lo.floor_cpu / floor_cpu, "its floor / our floor", NULL);
	snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST, CPU/event", nthr);
	bench_row(t, g, cfg, lo.lttng_cpu, "ns/ev/thr", lo.lttng_cpu / tb_cpu, "LTTng-UST / tracebuf", ">= 5");
	snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST, aggregate", nthr);
	bench_row(t, g, cfg, 1e3 / lo.lttng_wall, "Mev/s", lo.lttng_wall / tb_wall, "LTTng / tracebuf (time)", NULL);
	if (lo.written > 0 && lo.discarded > lo.written) {
		/* seen at 64 threads: `lttng list` printed 9223372036872704000
		 * (2^63 + ~18 M) for 64 M attempted: not a count */
		char why[160];
		snprintf(why, sizeof why, "lttng reported %.0f discarded of %.0f attempted: not a count", lo.discarded,
			 lo.written);
		snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST, events discarded", nthr);
		bench_skip(t, g, cfg, why);
	} else if (lo.written > 0 && lo.discarded >= 0) {
		snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST, events discarded", nthr);
		bench_row(t, g, cfg, lo.discarded, "events", lo.discarded / lo.written, "discarded / attempted", NULL);
	} else {
		snprintf(cfg, sizeof cfg, "%u thr: LTTng-UST, events discarded", nthr);
		bench_skip(t, g, cfg, "run.sh printed no discarded count");
	}
}

void bench_lttng(struct bench_table *t)
{
	const char *g = "lttng", *what = "LTTng-UST side by side";
	char dir[PATH_MAX], out[PATH_MAX + 16];
	const char *why = bench_lttng_unusable();
	if (why) {
		bench_skip(t, g, what, why);
		return;
	}
	if (make_dir(dir, sizeof dir)) {
		bench_skip(t, g, what, strerror(errno));
		return;
	}
	int quick = bench_quick();
	uint64_t n = quick ? 200000 : 5000000;
	int rounds = quick ? 2 : 5;
	unsigned long lat_n = quick ? 50000 : 2000000;
	uint64_t size_n = quick ? 100000 : 4000000;

	/* tracebuf, same run */
	struct tb_channel_opts co = { .size = sizeof co, .name = "bench", .sb_size = 256 << 10, .sb_count = 8,
				      .mode = TB_OVERWRITE, .events = "bench:ev16" };
	struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	if (tb_session_create(&so, &s)) {
		bench_skip(t, g, what, tb_errmsg());
		bench_rm_rf(dir);
		return;
	}
	tb_session_unlink(s);
	tb_producer_use(s);
	bench_loop_tracebuf(n / 10);
	double fl = 1e30, tb = 1e30;
	for (int r = 0; r < rounds; r++) {
		double v = timed(bench_loop_floor, n);
		if (v < fl)
			fl = v;
		v = timed(bench_loop_tracebuf, n);
		if (v < tb)
			tb = v;
	}
	tb_producer_use(NULL);
	tb_session_close(s);

	/* LTTng-UST */
	struct lt_out lo;
	char args[128];
	snprintf(out, sizeof out, "%s/lttng-cost", dir);
	snprintf(args, sizeof args, "cost %llu %d %lu", (unsigned long long)n, rounds, lat_n);
	if (run_lttng("discard", out, args, &lo) || lo.lttng_ns <= 0) {
		bench_skip(t, g, what, "bench/lttng/run.sh failed or the tracepoint was not enabled (see stderr)");
		bench_rm_rf(dir);
		return;
	}
	bench_row(t, g, "floor: rdtsc + 16-byte store", fl, "ns/event", 0, NULL, NULL);
	bench_row(t, g, "tracebuf rseq, 16 B (overwrite, no consumer)", tb, "ns/event", tb / fl, "tracebuf / floor", "<= 1.5");
	bench_row(t, g, "floor in the LTTng process", lo.floor_ns, "ns/event", lo.floor_ns / fl, "its floor / our floor", NULL);
	bench_row(t, g, "LTTng-UST, 16 B, discard, per-UID buffers", lo.lttng_ns, "ns/event", lo.lttng_ns / tb,
		  "LTTng-UST / tracebuf", ">= 5");
	if (lo.written > 0 && lo.discarded >= 0)
		bench_row(t, g, "LTTng-UST events discarded in that run", 100.0 * lo.discarded / lo.written, "%",
			  lo.discarded / lo.written, "discarded / written", NULL);

	double tpct[BC_NPCT], tfl[BC_NPCT];
	char cfg[96];
	if (bench_lat_tracebuf(lat_n, tpct, tfl) == 0) {
		for (int i = 0; i < BC_NPCT; i++) {
			snprintf(cfg, sizeof cfg, "latency tracebuf rseq, %s", bc_pct_names[i]);
			bench_row(t, g, cfg, tpct[i], "ns", 0, NULL, NULL);
		}
		for (int i = 0; i < BC_NPCT; i++) {
			snprintf(cfg, sizeof cfg, "latency LTTng-UST, %s", bc_pct_names[i]);
			bench_row(t, g, cfg, lo.lat[i], "ns", lo.lat[i] / tpct[i], "LTTng-UST / tracebuf", NULL);
		}
	} else {
		bench_skip(t, g, "latency", "no tracebuf session");
	}

	/* trace size */
	uint64_t delivered = 0;
	snprintf(out, sizeof out, "%s/tracebuf-size", dir);
	long long tb_bytes = tracebuf_trace_bytes(out, size_n, &delivered);
	snprintf(out, sizeof out, "%s/lttng-size", dir);
	snprintf(args, sizeof args, "write %llu", (unsigned long long)size_n);
	struct lt_out ls;
	int lrc = run_lttng("blocking", out, args, &ls);
	if (tb_bytes <= 0 || !delivered) {
		bench_skip(t, g, "trace size", "tracebuf recording failed or lost events (see stderr)");
	} else if (lrc || ls.trace_bytes <= 0 || ls.discarded != 0) {
		bench_skip(t, g, "trace size", "LTTng-UST recording failed or discarded events (see stderr)");
	} else {
		double a = (double)tb_bytes / (double)delivered, b = ls.trace_bytes / (double)size_n;
		snprintf(cfg, sizeof cfg, "trace size tracebuf, %llu ev", (unsigned long long)size_n);
		bench_row(t, g, cfg, a, "B/event", 0, NULL, NULL);
		snprintf(cfg, sizeof cfg, "trace size LTTng-UST, %llu ev", (unsigned long long)size_n);
		bench_row(t, g, cfg, b, "B/event", b / a, "LTTng-UST / tracebuf", NULL);
	}
	bench_rm_rf(dir);
}
