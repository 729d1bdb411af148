/* SPDX-License-Identifier: MIT */
/*
 * common.h - measurement code shared by tracebuf-bench and the LTTng-UST
 * benchmark executable, so that both sides are timed the same way.
 *
 * Latency: each sample is the TSC delta around one call, read with
 * `lfence; rdtsc; lfence` on both sides (the fences keep the call inside the
 * interval); the delta of an empty interval is the measurement's own cost and
 * is printed as a baseline row.
 */
#ifndef TB_BENCH_COMMON_H
#define TB_BENCH_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bc_tsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t bc_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* TSC ticks per ns, measured against CLOCK_MONOTONIC over ~50 ms. */
static inline double bc_tsc_per_ns(void)
{
	uint64_t n0 = bc_mono_ns(), t0 = bc_tsc(), n1;
	do
		n1 = bc_mono_ns();
	while (n1 - n0 < 50000000ull);
	uint64_t t1 = bc_tsc();
	return (double)(t1 - t0) / (double)(n1 - n0);
}

static inline int bc_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* p50, p99, p99.9, p99.99, max (ns) of n samples (ticks; sorted in place). */
#define BC_NPCT 5
static const char *const bc_pct_names[BC_NPCT] = { "p50", "p99", "p99.9", "p99.99", "max" };

static inline void bc_percentiles(uint32_t *v, size_t n, double tsc_per_ns, double out[BC_NPCT])
{
	static const double q[BC_NPCT - 1] = { 0.50, 0.99, 0.999, 0.9999 };
	qsort(v, n, sizeof *v, bc_cmp_u32);
	for (int i = 0; i < BC_NPCT - 1; i++) {
		size_t k = (size_t)(q[i] * (double)(n - 1));
		out[i] = (double)v[k] / tsc_per_ns;
	}
	out[BC_NPCT - 1] = (double)v[n - 1] / tsc_per_ns;
}

/* Samples the latency of `body` n times into v (ticks). */
#define BC_SAMPLE(v, n, body)                                                   \
	do {                                                                    \
		for (size_t bc__i = 0; bc__i < (n); bc__i++) {                  \
			uint64_t bc__t0 = bc_tsc();                             \
			body;                                                   \
			uint64_t bc__t1 = bc_tsc();                             \
			uint64_t bc__d = bc__t1 - bc__t0;                       \
			(v)[bc__i] = bc__d > 0xffffffffull ? 0xffffffffu : (uint32_t)bc__d; \
		}                                                               \
	} while (0)

#endif
