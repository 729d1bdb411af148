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

/*
 * A cluster: (TSC, CLOCK_MONOTONIC) pairs read back to back for about
 * 100 us, summarised by their centroid, which lies on the line the two
 * clocks follow.  Each pair is the clock read bracketed by two TSC reads;
 * its error is where inside the bracket the vDSO read the TSC, plus the
 * clock's 1 ns steps: about 2 ns rms on the benchmark VM, and a few
 * thousand pairs put the centroid within ~0.03 ns.  Pairs whose bracket
 * is half as wide again as the tightest (an interrupt, a preemption) are
 * left out.  `var` is the variance of the centroid's clock value (ns²):
 * the residuals about the cluster's own least-squares line over the
 * number of pairs kept.
 */
struct cluster {
	double tsc, ns, var;
};

static void cluster(struct cluster *c)
{
	enum { MIN_PAIRS = 16, MAX_PAIRS = 4096, SPAN_NS = 100000 };
	/* the tightest bracket first */
	uint64_t tight = UINT64_MAX;
	for (int i = 0; i < 32; i++) {
		uint64_t a = tb_rdtsc();
		(void)ns_of(CLOCK_MONOTONIC);
		uint64_t b = tb_rdtsc();
		if (b - a < tight)
			tight = b - a;
	}
	uint64_t limit = tight + tight / 2;
	/* sums relative to the first pair (doubles: exact over 100 us) */
	uint64_t t0 = 0, n0 = 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
	unsigned k = 0;
	for (unsigned i = 0; i < MAX_PAIRS; i++) {
		uint64_t a = tb_rdtsc();
		uint64_t n = ns_of(CLOCK_MONOTONIC);
		uint64_t b = tb_rdtsc();
		if (i == 0) {
			t0 = a;
			n0 = n;
		}
		if (b - a <= limit && a >= t0) { /* (a TSC behind the first pair's: another CPU's, skewed) */
			double x = (double)(a - t0) + (double)(b - a) / 2, y = (double)(n - n0);
			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
			syy += y * y;
			k++;
		}
		if (n - n0 >= SPAN_NS && k >= MIN_PAIRS)
			break;
	}
	if (k < 3) { /* every bracket wider than the probe's tightest by half: a machine suddenly much busier */
		c->tsc = (double)t0;
		c->ns = (double)n0;
		c->var = 1e12;
		return;
	}
	double mx = sx / k, my = sy / k;
	double Sxx = sxx - sx * mx, Sxy = sxy - sx * my, Syy = syy - sy * my;
	double res = Sxx > 0 ? Syy - Sxy * Sxy / Sxx : Syy; /* squared residuals about the line */
	if (res < 0)
		res = 0;
	c->tsc = (double)t0 + mx;
	c->ns = (double)n0 + my;
	c->var = (res / (k - 2) + 1.0 / 12) / k; /* + the clock's 1 ns step, never 0 */
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
	 * The frequency: the slope between two clusters (cluster()) a window
	 * apart, whose error is the two centroids' over the window.  The
	 * window starts at 1 ms (0.03-0.05 ppm on the benchmark VM, where a
	 * 50 ms measurement agrees within 0.03 ppm) and doubles, up to 20 ms,
	 * until that error is under 0.5 ppm (a loaded machine, valgrind:
	 * wider brackets, fewer pairs).  Creating a session is what waits:
	 * a fixed 20 ms window was 20 of the 27 ms `tracebuf record -- true`
	 * took; windows doubling until two single-pair estimates agreed took
	 * ~8 ms here (issue 14); this takes ~1.3 ms.
	 */
	struct cluster a, b;
	cluster(&a);
	for (uint64_t w = 1000000;; w *= 2) {
		if (w > 20000000)
			w = 20000000;
		for (;;) { /* until the window has passed (nanosleep may return early) */
			double left = a.ns + (double)w - (double)ns_of(CLOCK_MONOTONIC);
			if (left <= 0)
				break;
			struct timespec d = { 0, (long)left };
			nanosleep(&d, NULL);
		}
		cluster(&b);
		double span = b.ns - a.ns;
		/* error of the slope (relative): (sd_a + sd_b) / span <= sqrt(2 (var_a + var_b)) / span */
		double lim = 0.5e-6 * span;
		if (span > 0 && b.tsc > a.tsc) {
			out->freq = (uint64_t)((b.tsc - a.tsc) * 1e9 / span + 0.5);
			if (w >= 20000000 || 2 * (a.var + b.var) <= lim * lim)
				break;
		} else if (w >= 20000000) {
			break;
		}
	}
	if (out->freq == 0)
		out->freq = 1;
	/* offsets: clock_ns at tick 0 = clock_ns(now) - tsc(now) * 1e9 / freq */
	uint64_t tr = 0, r = 0;
	pair(CLOCK_REALTIME, &tr, &r);
	out->offset_ns = (int64_t)r - (int64_t)((unsigned __int128)tr * 1000000000u / out->freq);
	out->mono_offset_ns = (int64_t)(b.ns + 0.5) - (int64_t)((unsigned __int128)(uint64_t)(b.tsc + 0.5) * 1000000000u / out->freq);
}
