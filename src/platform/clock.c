/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "platform/clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t ns_of(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int tb_tsc_usable(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return 0;
	char line[4096];
	int ok = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
		break;
	}
	fclose(f);
	return ok;
}

/* One (tsc, clock) pair: the clock read bracketed by two TSC reads, keeping
 * the tightest of a few tries. */
static void pair(clockid_t id, uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = tb_rdtsc();
		uint64_t n = ns_of(id);
		uint64_t b = tb_rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

void tb_clock_calibrate(uint32_t kind, struct tb_clock_calib *out)
{
	memset(out, 0, sizeof *out);
	out->kind = kind;
	if (kind != TB_CLOCK_TSC) {
		out->freq = 1000000000ull;
		uint64_t m = ns_of(CLOCK_MONOTONIC), r = ns_of(CLOCK_REALTIME);
		out->offset_ns = (int64_t)(r - m);
		out->mono_offset_ns = 0;
		return;
	}
	/*
	 * The window: each estimate's error is the two pairs' reading error
	 * over its length.  Where reading the clocks together is precise (a
	 * few ns: most machines with a TSC clocksource), 1 or 2 ms give the
	 * frequency within 0.5 ppm and the window stops there; where it is not,
	 * it grows to the 20 ms every session used to wait for.  Creating a
	 * session is what waits: `tracebuf record -- true` took 27 ms here, of
	 * which 20 were this window (issue 14).
	 */
	uint64_t t0, m0, t1, m1;
	pair(CLOCK_MONOTONIC, &t0, &m0);
	uint64_t prev = 0;
	for (uint64_t w = 1000000;; w *= 2) {
		if (w > 20000000)
			w = 20000000;
		for (;;) { /* until the window has passed (nanosleep may return early) */
			pair(CLOCK_MONOTONIC, &t1, &m1);
			if (m1 - m0 >= w)
				break;
			struct timespec d = { 0, (long)(w - (m1 - m0)) };
			nanosleep(&d, NULL);
		}
		out->freq = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (m1 - m0));
		uint64_t diff = out->freq > prev ? out->freq - prev : prev - out->freq;
		if (w >= 20000000 || (prev && diff * 2000000 <= out->freq))
			break; /* two in a row agree within 0.5 ppm, or the longest window */
		prev = out->freq;
	}
	if (out->freq == 0)
		out->freq = 1;
	/* offsets: clock_ns at tick 0 = clock_ns(now) - tsc(now) * 1e9 / freq */
	uint64_t tr, r;
	pair(CLOCK_REALTIME, &tr, &r);
	out->offset_ns = (int64_t)r - (int64_t)((unsigned __int128)tr * 1000000000u / out->freq);
	out->mono_offset_ns = (int64_t)m1 - (int64_t)((unsigned __int128)t1 * 1000000000u / out->freq);
}
