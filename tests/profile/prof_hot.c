/* SPDX-License-Identifier: MIT */
/*
 * prof_hot.c - a test program for `tracebuf profile`: two hot functions,
 * hot_a and hot_b, burn CPU time in a 3:1 ratio (1.5 s in all, or argv[1]
 * seconds).  The ratio holds by CPU time, not by iteration counts: the two
 * alternate in slices of 3u and u measured on the thread's CPU clock, u
 * drawn in [0.3 ms, 1.7 ms) (a fixed pseudo-random sequence, so that the
 * slices cannot alias with the kernel's tick, where the CPU-time timers
 * expire).
 * Built with frame pointers, without libtracebuf (the preload brings it).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t cpu_ns(void);
uint64_t hot_a(uint64_t until, uint64_t x);
uint64_t hot_b(uint64_t until, uint64_t x);
uint64_t run(uint64_t total_ns);

__attribute__((noinline)) uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each burns until the thread's CPU clock reaches `until`; the clock is
 * read every ~20 us of work so that its cost stays small. */
__attribute__((noinline)) uint64_t hot_a(uint64_t until, uint64_t x)
{
	while (cpu_ns() < until)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) uint64_t hot_b(uint64_t until, uint64_t x)
{
	while (cpu_ns() < until)
		for (int i = 0; i < 20000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

__attribute__((noinline)) uint64_t run(uint64_t total_ns)
{
	uint64_t x = 1, r = 42, start = cpu_ns();
	while (cpu_ns() - start < total_ns) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t u = 300000 + (r >> 33) % 1400000; /* ns */
		x = hot_a(cpu_ns() + 3 * u, x);
		x = hot_b(cpu_ns() + u, x);
	}
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	if (!(secs > 0 && secs < 3600)) {
		fprintf(stderr, "usage: prof_hot [SECONDS]\n");
		return 2;
	}
	uint64_t x = run((uint64_t)(secs * 1e9));
	printf("hot_a:hot_b 3:1 over %.2f s of CPU time (%s)\n", secs, x ? "done" : "done.");
	return 0;
}
