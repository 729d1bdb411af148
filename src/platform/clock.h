/* SPDX-License-Identifier: MIT */
/*
 * clock.h - timestamps.  The TSC where the CPU says it is constant and
 * non-stop (read with rdtsc inside the critical sections), calibrated
 * against CLOCK_MONOTONIC and CLOCK_REALTIME at session creation;
 * CLOCK_MONOTONIC in nanoseconds otherwise.
 */
#ifndef TB_PLATFORM_CLOCK_H
#define TB_PLATFORM_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "core/format.h"
#include "core/view.h"

struct tb_clock_calib {
	uint32_t kind;          /* enum tb_clock_kind */
	uint64_t freq;          /* ticks per second */
	int64_t offset_ns;      /* realtime ns at tick 0 */
	int64_t mono_offset_ns; /* monotonic ns at tick 0 */
};

/* 1 when /proc/cpuinfo lists constant_tsc and nonstop_tsc. */
TB_HIDDEN int tb_tsc_usable(void);
/*
 * Calibrates `kind`.  The TSC against CLOCK_MONOTONIC over a window that
 * doubles from 1 ms until two estimates in a row agree within 0.5 ppm, at
 * most 20 ms (clock.c).
 */
TB_HIDDEN void tb_clock_calibrate(uint32_t kind, struct tb_clock_calib *out);

static inline uint64_t tb_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t tb_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline uint64_t tb_clock_read(uint32_t kind)
{
	return kind == TB_CLOCK_TSC ? tb_rdtsc() : tb_mono_ns();
}

#endif
