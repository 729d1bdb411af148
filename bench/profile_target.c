/* SPDX-License-Identifier: MIT */
/*
 * profile_target.c - the CPU-bound program of `tracebuf-bench profile`:
 * deterministic work (the same instructions on every run, no I/O, no
 * allocation after start, one thread) spread over a few functions with
 * different call depths, so a profiler has stacks to unwind:
 *
 *   main -> work -> mix_block -> mix_word            (hash mixing, ~55 %)
 *   main -> work -> sort_block -> sift               (heap sort, ~25 %)
 *   main -> work -> walk -> walk -> ... (depth 24)   (recursion, ~15 %)
 *
 * Built with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
 * (bench/CMakeLists.txt) so that a frame-pointer unwinder can follow the
 * chain.  gcc 12 still gives the leaf mix_word no frame (it touches no
 * stack): frame-pointer chains from inside it skip mix_block, as they do in
 * any such program; a DWARF unwinder does not.
 *
 * Usage: tracebuf-profile-target [UNITS]   (default 120: ~2 s of CPU on the
 * AMD EPYC VM of docs/BENCHMARKS.md; the work is proportional to UNITS)
 * Prints `key value` lines: work_wall_ns, work_cpu_ns (CLOCK_MONOTONIC and
 * CLOCK_PROCESS_CPUTIME_ID around the work, so a profiler's start-up and
 * shutdown are not in them) and checksum (keeps the work from being
 * optimised away; the same for every run of the same UNITS).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static uint64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static NOINLINE uint64_t mix_word(uint64_t x)
{
	/* splitmix64's finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static NOINLINE uint64_t mix_block(uint64_t seed, unsigned n)
{
	uint64_t h = seed;
	for (unsigned i = 0; i < n; i++)
		h = mix_word(h + i);
	return h;
}

static NOINLINE void sift(uint32_t *a, size_t root, size_t n)
{
	for (;;) {
		size_t c = 2 * root + 1;
		if (c >= n)
			return;
		if (c + 1 < n && a[c + 1] > a[c])
			c++;
		if (a[root] >= a[c])
			return;
		uint32_t t = a[root];
		a[root] = a[c];
		a[c] = t;
		root = c;
	}
}

static NOINLINE uint64_t sort_block(uint32_t *a, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (uint32_t)mix_word(seed + i);
	for (size_t i = n / 2; i-- > 0;)
		sift(a, i, n);
	for (size_t i = n; i-- > 1;) {
		uint32_t t = a[0];
		a[0] = a[i];
		a[i] = t;
		sift(a, 0, i);
	}
	return a[0] ^ ((uint64_t)a[n / 2] << 32) ^ a[n - 1];
}

static NOINLINE uint64_t walk(unsigned depth, uint64_t x)
{
	if (!depth) {
		for (unsigned i = 0; i < 64; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		return x;
	}
	uint64_t r = walk(depth - 1, x + depth);
	__asm__ __volatile__("" : "+r"(r)); /* not a tail call: the frames stay */
	return r ^ depth;
}

static NOINLINE uint64_t work(unsigned units, uint32_t *buf, size_t bufn)
{
	uint64_t sum = 0;
	for (unsigned u = 0; u < units; u++)
		for (unsigned rep = 0; rep < 16; rep++) {
			sum += mix_block(sum + rep, 150000);
			sum ^= sort_block(buf, bufn, sum);
			for (unsigned k = 0; k < 1500; k++)
				sum += walk(24, sum + k);
		}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned units = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 120;
	size_t bufn = 4096;
	uint32_t *buf = malloc(bufn * sizeof *buf);
	if (!buf || !units) {
		fprintf(stderr, "usage: tracebuf-profile-target [UNITS > 0]\n");
		return 2;
	}
	uint64_t w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	uint64_t sum = work(units, buf, bufn);
	uint64_t c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
	printf("work_wall_ns %llu\nwork_cpu_ns %llu\nchecksum %016llx\n", (unsigned long long)(w1 - w0),
	       (unsigned long long)(c1 - c0), (unsigned long long)sum);
	free(buf);
	return 0;
}
