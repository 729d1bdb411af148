/* SPDX-License-Identifier: MIT */
/*
 * prof_spin.c - a test program for `tracebuf profile`:
 *   prof_spin THREADS SECONDS DEPTH [nofp] [stop-parent] [_exit|sigkill]
 * THREADS threads each recurse DEPTH frames deep (recurse(), frame
 * pointers) and burn SECONDS of CPU time in leaf_burn(): deep samples, many
 * of them.  With "nofp" the path to leaf_burn goes through nofp_a and
 * nofp_b (prof_nofp.c, no frame pointers).  With "stop-parent" the parent
 * (the recorder, under `tracebuf profile`) is stopped (SIGSTOP) while the
 * threads run and continued after: nothing drains the rings meanwhile, so
 * samples are certainly lost.  Prints "spin: ok", then returns from main,
 * or ends with _exit(0) ("_exit") or by SIGKILL ("sigkill"): no destructor
 * runs.  Does not link libtracebuf.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t leaf_burn(uint64_t until_ns, uint64_t x);
uint64_t nofp_a(uint64_t until_ns, uint64_t x);
uint64_t recurse(int depth, uint64_t until_ns, uint64_t x);

static double secs;
static int depth, nofp;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t leaf_burn(uint64_t until_ns, uint64_t x)
{
	while (cpu_ns() < until_ns)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) uint64_t recurse(int d, uint64_t until_ns, uint64_t x)
{
	if (d <= 0)
		return nofp ? nofp_a(until_ns, x) : leaf_burn(until_ns, x);
	return recurse(d - 1, until_ns, x + 1) ^ (uint64_t)d; /* not a tail call */
}

static void *worker(void *arg)
{
	uint64_t x = recurse(depth, cpu_ns() + (uint64_t)(secs * 1e9), (uint64_t)(uintptr_t)arg);
	return (void *)(uintptr_t)(x & 1);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: prof_spin THREADS SECONDS DEPTH [nofp] [stop-parent]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	secs = atof(argv[2]);
	depth = atoi(argv[3]);
	int stop_parent = 0, end = 0;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "nofp"))
			nofp = 1;
		else if (!strcmp(argv[i], "stop-parent"))
			stop_parent = 1;
		else if (!strcmp(argv[i], "_exit"))
			end = 1;
		else if (!strcmp(argv[i], "sigkill"))
			end = 2;
		else
			depth = -1;
	}
	if (n < 1 || n > 256 || !(secs > 0) || depth < 0 || depth > 10000) {
		fprintf(stderr, "prof_spin: bad arguments\n");
		return 2;
	}
	pthread_t *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 2;
	pid_t parent = getppid();
	if (stop_parent && parent > 1)
		kill(parent, SIGSTOP);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (stop_parent && parent > 1)
		kill(parent, SIGCONT);
	free(t);
	printf("spin: ok\n");
	fflush(stdout);
	if (end == 1)
		_exit(0);
	if (end == 2)
		raise(SIGKILL);
	return 0;
}
