/* SPDX-License-Identifier: MIT */
/* prof_plug.c - libprofplug.so, the library prof_dl opens with dlopen: one hot function. */
#include <stdint.h>
#include <time.h>

uint64_t plug_burn(double secs);

__attribute__((noinline)) uint64_t plug_burn(double secs)
{
	struct timespec a, b;
	uint64_t x = 7;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 99;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x;
}
