/* SPDX-License-Identifier: MIT */
/*
 * prof_altstack.c - a test program for `tracebuf profile`: burns 0.3 s of
 * CPU time in a SIGUSR1 handler running on an alternate signal stack
 * (sigaltstack, SA_ONSTACK), outside the thread's stack bounds that the
 * frame-pointer walk checks against.  Prints "altstack: ok".  Does not link
 * libtracebuf.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void burn_on_altstack(int sig);
static volatile uint64_t sink;

__attribute__((noinline)) void burn_on_altstack(int sig)
{
	(void)sig;
	struct timespec a, b;
	uint64_t x = 5;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 3;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < 0.3);
	sink = x;
}

int main(void)
{
	stack_t ss = { 0 };
	ss.ss_size = 1 << 16;
	ss.ss_sp = malloc(ss.ss_size);
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		return 1;
	struct sigaction sa = { 0 };
	sa.sa_handler = burn_on_altstack;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	stack_t off = { 0 };
	off.ss_flags = SS_DISABLE;
	sigaltstack(&off, NULL);
	free(ss.ss_sp);
	printf("altstack: ok\n");
	return 0;
}
