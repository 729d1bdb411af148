/* SPDX-License-Identifier: MIT */
/*
 * prof_errno.c - a test program for `tracebuf profile`: three threads set
 * errno, burn a little CPU and check that errno is unchanged, millions of
 * times, while the profiler's SIGPROF handler runs on them (its writes may
 * take the slow path and make system calls).  Also after a failing system
 * call.  Prints "errno: ok" or the number of changes seen (exit 1).  Does
 * not link libtracebuf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define NTHREADS 3
#define LOOPS 3000000

uint64_t spin(uint64_t x, int n);

__attribute__((noinline)) uint64_t spin(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1;
	return x;
}

static void *worker(void *arg)
{
	unsigned long *bad = arg;
	uint64_t x = 1;
	for (int i = 0; i < LOOPS; i++) {
		int want = 1 + i % 120;
		if (i % 64 == 0) {
			if (read(-1, NULL, 0) == 0) /* EBADF, from the kernel */
				(*bad)++;
			want = EBADF;
		} else {
			errno = want;
		}
		x = spin(x, 100);
		if (errno != want)
			(*bad)++;
	}
	return (void *)(uintptr_t)(x & 1);
}

int main(void)
{
	pthread_t t[NTHREADS];
	unsigned long bad[NTHREADS] = { 0 }, total = 0;
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, &bad[i]) != 0)
			return 2;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		total += bad[i];
	}
	if (total) {
		printf("errno: changed %lu times\n", total);
		return 1;
	}
	printf("errno: ok\n");
	return 0;
}
