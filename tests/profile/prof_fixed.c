/* SPDX-License-Identifier: MIT */
/*
 * prof_fixed.c - a test program for `tracebuf profile`: a fixed amount of
 * work (ITERATIONS rounds of hash mixing in one thread, default 20 M: some
 * 30 ms of CPU alone), then "fixed: done".  Unlike prof_spin and prof_hot,
 * which burn a given CPU time, it finishes only if it makes progress: a
 * sampler that keeps it in signal delivery never lets it end.
 *   prof_fixed [ITERATIONS]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) uint64_t mix(uint64_t n)
{
	uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 30;
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x += i;
	}
	return x;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000ull;
	volatile uint64_t sink = mix(n);
	(void)sink;
	printf("fixed: done\n");
	return 0;
}
