/* SPDX-License-Identifier: MIT */
/*
 * tracebuf-bench-lttng - the LTTng-UST side of `tracebuf-bench lttng`.
 * Run by bench/lttng/run.sh inside a session (see there), never alone.
 *
 *   tracebuf-bench-lttng cost N ROUNDS LAT_N   producer cost + latency
 *   tracebuf-bench-lttng write N                 N events, for the trace size
 *   tracebuf-bench-lttng threads NTHR N ROUNDS   N events from NTHR threads
 *                                                at once (bc_run_threads)
 *
 * Prints `key value` lines that tracebuf-bench parses: enabled, floor_ns,
 * lttng_ns (best round, ns per event), lat_<pct> (ns), written; threads:
 * floor_cpu, lttng_cpu (CPU ns per event), floor_wall, lttng_wall (wall ns
 * per event), best round of each.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tp.h"

static void loop_lttng(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(tbbench, ev16, i, i ^ 0x5555);
}

static double timed(void (*fn)(uint64_t), uint64_t n)
{
	uint64_t t0 = bc_mono_ns();
	fn(n);
	return (double)(bc_mono_ns() - t0) / (double)n;
}

/* Floor and LTTng-UST interleaved round by round, best of each kept, as
 * bench_threads.c does for tracebuf. */
static int threads(unsigned nthr, uint64_t total, int rounds)
{
	double fc = 1e30, fw = 1e30, lc = 1e30, lw = 1e30, c, w;
	uint64_t written = bc_run_threads(loop_lttng, nthr, total / 8, &c, &w); /* warm up */
	for (int r = 0; r < rounds; r++) {
		bc_run_threads(bc_loop_floor, nthr, total, &c, &w);
		if (c < fc)
			fc = c;
		if (w < fw)
			fw = w;
		written += bc_run_threads(loop_lttng, nthr, total, &c, &w);
		if (c < lc)
			lc = c;
		if (w < lw)
			lw = w;
	}
	printf("floor_cpu %.3f\nfloor_wall %.3f\nlttng_cpu %.3f\nlttng_wall %.3f\nwritten %llu\n", fc, fw, lc, lw,
	       (unsigned long long)written);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: tracebuf-bench-lttng cost N ROUNDS LAT_N | write N | threads NTHR N ROUNDS\n");
		return 2;
	}
	uint64_t n = strtoull(argv[2], NULL, 0);
	printf("enabled %d\n", lttng_ust_tracepoint_enabled(tbbench, ev16) ? 1 : 0);
	if (!strcmp(argv[1], "threads")) {
		if (argc < 5 || !n)
			return 2;
		return threads((unsigned)n, strtoull(argv[3], NULL, 0), atoi(argv[4]));
	}
	if (!strcmp(argv[1], "write")) {
		loop_lttng(n);
		printf("written %llu\n", (unsigned long long)n);
		return 0;
	}
	if (strcmp(argv[1], "cost") || argc < 5)
		return 2;
	int rounds = atoi(argv[3]);
	size_t lat_n = (size_t)strtoull(argv[4], NULL, 0);
	double fl = 1e30, lt = 1e30;
	loop_lttng(n / 10); /* warm up */
	for (int r = 0; r < rounds; r++) {
		double v = timed(bc_loop_floor, n);
		if (v < fl)
			fl = v;
		v = timed(loop_lttng, n);
		if (v < lt)
			lt = v;
	}
	printf("floor_ns %.3f\nlttng_ns %.3f\n", fl, lt);
	uint32_t *v = malloc(lat_n * sizeof *v);
	if (!v)
		return 1;
	double tpn = bc_tsc_per_ns(), pct[BC_NPCT];
	BC_SAMPLE(v, lat_n, lttng_ust_tracepoint(tbbench, ev16, bc__i, bc__i ^ 0x5555));
	bc_percentiles(v, lat_n, tpn, pct);
	for (int i = 0; i < BC_NPCT; i++)
		printf("lat_%s %.1f\n", bc_pct_names[i], pct[i]);
	free(v);
	printf("written %llu\n", (unsigned long long)(n / 10 + (uint64_t)rounds * n + lat_n));
	return 0;
}
