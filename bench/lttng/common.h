/* SPDX-License-Identifier: MIT */
/*
 * common.h - measurement code shared by tracebuf-bench and the LTTng-UST
 * benchmark executable, so that both sides are timed the same way.
 *
 * Latency: each sample is the TSC delta around one call, read with
 * `lfence; rdtsc; lfence` on both sides (the fences keep the call inside the
 * interval); the delta of an empty interval is the measurement's own cost and
 * is printed as a baseline row.
 *
 * Threads: bc_run_threads() is the multi-thread runner of both sides (the
 * `threads` table and its LTTng-UST rows), bc_loop_floor() the floor loop
 * they are compared with.
 */
#ifndef TB_BENCH_COMMON_H
#define TB_BENCH_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

/* The floor: rdtsc + 16-byte store into a thread-local array, n times. */
static inline void bc_loop_floor(uint64_t n)
{
	static __thread uint64_t sink[4096] __attribute__((aligned(64)));
	for (uint64_t i = 0; i < n; i++) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		uint64_t *p = &sink[(i * 2) & 4095];
		p[0] = ((uint64_t)hi << 32) | lo;
		p[1] = i;
		__asm__ __volatile__("" ::: "memory");
	}
}

static inline uint64_t bc_thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct bc_thr {
	pthread_t th;
	void (*loop)(uint64_t);
	uint64_t n, cpu_ns;
	pthread_barrier_t *bar;
	int cpu;
};

static inline void *bc_thr_main(void *arg)
{
	struct bc_thr *a = arg;
	cpu_set_t set; /* thread i on CPU i mod ncpus: the threads really contend */
	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
	pthread_barrier_wait(a->bar);
	uint64_t c0 = bc_thread_cpu_ns();
	a->loop(a->n);
	a->cpu_ns = bc_thread_cpu_ns() - c0;
	return NULL;
}

/*
 * nthr threads run loop(total / nthr), started together at a barrier;
 * thread i is pinned to CPU i mod (online CPUs), so that 2 threads do run on
 * 2 CPUs and 64 threads on 2 CPUs preempt each other inside their writes.
 * Out: CPU ns per event (sum of the threads' CLOCK_THREAD_CPUTIME_ID /
 * events: what an event costs the thread that writes it, whatever the
 * scheduler does) and wall ns per event (barrier to the last join).
 * Returns the number of events written in all.
 */
static inline uint64_t bc_run_threads(void (*loop)(uint64_t), unsigned nthr, uint64_t total, double *cpu,
				      double *wall)
{
	struct bc_thr *a = calloc(nthr, sizeof *a);
	pthread_barrier_t bar;
	if (!a) {
		fprintf(stderr, "bench: out of memory for %u threads\n", nthr);
		abort();
	}
	pthread_barrier_init(&bar, NULL, nthr + 1);
	unsigned ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	for (unsigned i = 0; i < nthr; i++) {
		a[i] = (struct bc_thr){ .loop = loop, .n = total / nthr, .bar = &bar, .cpu = (int)(i % ncpu) };
		if (pthread_create(&a[i].th, NULL, bc_thr_main, &a[i])) {
			/* the threads started wait at the barrier for ever: no way back */
			fprintf(stderr, "bench: pthread_create failed at thread %u of %u\n", i, nthr);
			abort();
		}
	}
	uint64_t w0 = bc_mono_ns();
	pthread_barrier_wait(&bar);
	uint64_t sum = 0;
	for (unsigned i = 0; i < nthr; i++) {
		pthread_join(a[i].th, NULL);
		sum += a[i].cpu_ns;
	}
	uint64_t w1 = bc_mono_ns();
	uint64_t ev = (total / nthr) * nthr;
	*cpu = (double)sum / (double)ev;
	*wall = (double)(w1 - w0) / (double)ev;
	pthread_barrier_destroy(&bar);
	free(a);
	return ev;
}

#endif
