/* SPDX-License-Identifier: MIT */
/*
 * emit_cycles.c - tracebuf-emit-cycles: TSC cycles per TB_EVENT call, batch
 * by batch, beside the floor (rdtsc and a 24-byte store round an area),
 * so that the distribution shows, not only the best: on the KVM guest of
 * 2026-11-28 whole processes ran tb_emit at ~45 cycles where others ran at
 * ~28, the floor unchanged (docs/BENCHMARKS.md, "Eighth session").
 *
 *   tracebuf-emit-cycles [tb|floor] [EVENTS_PER_BATCH] [BATCHES]
 *
 * tb: the program's own session (overwrite, 4 x 1 MiB), or the recording's
 * when $TRACEBUF_SESSION is set (under `tracebuf record`).  Environment:
 * SLEEP_US (sleep before each batch: a paced program), AREA (the floor's
 * area in bytes, a power of two; 32768).  Prints the median and the 90th
 * percentile of the cycles per event over the batches, and of the first
 * call of a batch.  Not part of make bench: a tool to chase that state.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

TB_EVENT(cycles, ev16, (u64, a), (u64, b))

static uint8_t *area;
static uint64_t area_mask, area_at;

static __attribute__((noinline)) void floor_write(uint64_t a, uint64_t b)
{
	uint64_t r[3] = { __rdtsc(), a, b };
	memcpy(area + area_at, r, sizeof r);
	area_at = (area_at + 32) & area_mask;
	__asm__ __volatile__("" ::: "memory"); /* the stores happen */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, unsigned n, unsigned p)
{
	qsort(v, n, sizeof *v, cmp_u64);
	return v[(uint64_t)n * p / 100 < n ? (uint64_t)n * p / 100 : n - 1];
}

int main(int argc, char **argv)
{
	int floor = argc > 1 && !strcmp(argv[1], "floor");
	unsigned per = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 100000;
	unsigned batches = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1000;
	const char *sl = getenv("SLEEP_US"), *ar = getenv("AREA");
	long sleep_us = sl ? strtol(sl, NULL, 10) : 0;
	uint64_t asz = ar ? strtoull(ar, NULL, 0) : 32768;
	if (per < 3 || batches < 1 || asz < 64 || (asz & (asz - 1))) {
		fprintf(stderr, "usage: tracebuf-emit-cycles [tb|floor] [EVENTS_PER_BATCH >= 3] [BATCHES >= 1]; "
				"AREA a power of two >= 64\n");
		return 2;
	}
	area = aligned_alloc(4096, asz);
	uint64_t *first = malloc(batches * sizeof *first), *rest = malloc(batches * sizeof *rest);
	if (!area || !first || !rest) {
		fprintf(stderr, "tracebuf-emit-cycles: out of memory\n");
		return 1;
	}
	memset(area, 1, asz);
	area_mask = asz - 1;
	if (!floor && !getenv("TRACEBUF_SESSION")) {
		struct tb_channel_opts co = { .size = sizeof co, .name = "cycles", .sb_size = 1 << 20, .sb_count = 4,
					      .mode = TB_OVERWRITE, .events = "cycles:ev16" };
		struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co };
		struct tb_session *s;
		if (tb_session_create(&so, &s)) {
			fprintf(stderr, "tracebuf-emit-cycles: %s\n", tb_errmsg());
			return 1;
		}
		tb_session_unlink(s);
		tb_producer_use(s);
	}
	for (unsigned k = 0; k < batches; k++) {
		if (sleep_us > 0) {
			struct timespec ts = { sleep_us / 1000000, sleep_us % 1000000 * 1000 };
			nanosleep(&ts, NULL);
		}
		uint64_t t0 = __rdtsc();
		if (floor)
			floor_write(k, 0);
		else
			tb_cycles_ev16(k, 0);
		uint64_t t1 = __rdtsc();
		for (unsigned i = 1; i < per; i++) {
			if (floor)
				floor_write(k, i);
			else
				tb_cycles_ev16(k, i);
		}
		uint64_t t2 = __rdtsc();
		first[k] = t1 - t0;
		rest[k] = (t2 - t1) / (per - 1);
	}
	printf("%s, %u events per batch, %u batches: TSC cycles per event p50 %llu p90 %llu; first call of a batch "
	       "p50 %llu p90 %llu\n",
	       floor ? "floor" : "tb_emit", per, batches, (unsigned long long)pct(rest, batches, 50),
	       (unsigned long long)pct(rest, batches, 90), (unsigned long long)pct(first, batches, 50),
	       (unsigned long long)pct(first, batches, 90));
	return 0;
}
