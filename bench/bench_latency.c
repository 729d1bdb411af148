/* SPDX-License-Identifier: MIT */
/*
 * bench_latency.c - distribution of the latency of single events: the TSC
 * delta around one call (bench/lttng/common.h: lfence-fenced rdtsc on both
 * sides), n samples, p50/p99/p99.9/p99.99/max in ns.  Baselines of the same
 * run: the empty interval (the measurement's own cost) and the floor (rdtsc +
 * 16-byte store).  Figures include the measurement's cost; the tail (p99.99,
 * max) is interrupts, preemption by other work and sub-buffer switches (one
 * every ~13k events with 256 KiB sub-buffers).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "bench.h"
#include "lttng/common.h"

TB_EVENT(bench, ev16, (u64, a), (u64, b))

static uint64_t sink[4096] __attribute__((aligned(64)));

int bench_lat_tracebuf(unsigned long n, double *pct, double *floor_pct)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "bench", .sb_size = 256 << 10, .sb_count = 8,
				      .mode = TB_OVERWRITE, .events = "bench:ev16" };
	struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	if (tb_session_create(&so, &s)) {
		fprintf(stderr, "bench latency: cannot create a session: %s\n", tb_errmsg());
		return -1;
	}
	tb_session_unlink(s);
	uint32_t *v = malloc(n * sizeof *v);
	if (!v) {
		tb_session_close(s);
		return -1;
	}
	double tpn = bc_tsc_per_ns();
	BC_SAMPLE(v, n, {
		uint64_t *p = &sink[(bc__i * 2) & 4095];
		p[0] = bc_tsc();
		p[1] = bc__i;
		__asm__ __volatile__("" ::: "memory");
	});
	bc_percentiles(v, n, tpn, floor_pct);
	tb_producer_use(s);
	for (unsigned long i = 0; i < 300000; i++) /* warm the ring's pages: 6 MB through a 2 MiB ring */
		tb_bench_ev16(i, i);
	BC_SAMPLE(v, n, tb_bench_ev16(bc__i, bc__i ^ 0x5555));
	tb_producer_use(NULL);
	bc_percentiles(v, n, tpn, pct);
	free(v);
	tb_session_close(s);
	return 0;
}

void bench_latency(struct bench_table *t)
{
	unsigned long n = bench_quick() ? 50000 : 2000000;
	double pct[BC_NPCT], fl[BC_NPCT], empty[BC_NPCT];
	uint32_t *v = malloc(n * sizeof *v);
	if (!v)
		return;
	double tpn = bc_tsc_per_ns();
	BC_SAMPLE(v, n, __asm__ __volatile__("" ::: "memory"));
	bc_percentiles(v, n, tpn, empty);
	free(v);
	if (bench_lat_tracebuf(n, pct, fl)) {
		bench_skip(t, "latency", "tracebuf single-event latency", "no session (see stderr)");
		return;
	}
	char cfg[96];
	snprintf(cfg, sizeof cfg, "empty interval (measurement cost), p50");
	bench_row(t, "latency", cfg, empty[0], "ns", 0, NULL, NULL);
	for (int i = 0; i < BC_NPCT; i++) {
		snprintf(cfg, sizeof cfg, "floor: rdtsc + 16-byte store, %s", bc_pct_names[i]);
		bench_row(t, "latency", cfg, fl[i], "ns", 0, NULL, NULL);
	}
	for (int i = 0; i < BC_NPCT; i++) {
		snprintf(cfg, sizeof cfg, "tracebuf rseq, 16 B, %s", bc_pct_names[i]);
		bench_row(t, "latency", cfg, pct[i], "ns", pct[i] / fl[i], "tracebuf / floor", NULL);
	}
}
