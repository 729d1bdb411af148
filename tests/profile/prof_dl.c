/* SPDX-License-Identifier: MIT */
/*
 * prof_dl.c - a test program for `tracebuf profile`: opens libprofplug.so by
 * its bare name, found through this program's RUNPATH ($ORIGIN, so the
 * profiler's dlopen wrapper must search its caller's path), burns CPU in
 * it, then forks a child that burns CPU in this executable and exits.
 * Prints "dlopen: ok" and "child: ok".  Does not link libtracebuf.
 *   prof_dl [SECONDS [LIBRARY]]   (LIBRARY: what to dlopen, libprofplug.so)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t child_burn(double secs);

__attribute__((noinline)) uint64_t child_burn(double secs)
{
	struct timespec a, b;
	uint64_t x = 3;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	const char *lib = argc > 2 ? argv[2] : "libprofplug.so";
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "prof_dl: %s\n", dlerror());
		return 1;
	}
	uint64_t (*burn)(double) = (uint64_t(*)(double))dlsym(h, "plug_burn");
	if (!burn) {
		fprintf(stderr, "prof_dl: %s\n", dlerror());
		return 1;
	}
	burn(secs);
	printf("dlopen: ok\n");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("prof_dl: fork");
		return 1;
	}
	if (pid == 0) {
		child_burn(secs);
		exit(0); /* exit, not _exit: the child writes its profile:counters */
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "prof_dl: the child failed\n");
		return 1;
	}
	printf("child: ok\n");
	return 0;
}
