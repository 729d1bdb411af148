/* SPDX-License-Identifier: MIT */
/*
 * prof_ownprof.c - a test program for `tracebuf profile`: a program with
 * its own SIGPROF.  It installs a SIGPROF handler after start (so, under
 * the profiler, through the interposed sigaction), starts the process-wide
 * ITIMER_PROF timer (setitimer) every 5 ms, and burns 0.6 s of CPU time.
 * Checks that its handler is what sigaction() reports, that its ticks
 * arrive, and that none of them is a POSIX timer expiry (the profiler's
 * must not leak to it).  Prints "ownprof: ok" (exit 0) or what failed
 * (exit 1).  Does not link libtracebuf.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long ticks, foreign;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_TIMER)
		foreign++; /* a timer_create expiry: not ours */
	else
		ticks++;
}

uint64_t burn(double secs);

__attribute__((noinline)) uint64_t burn(double secs)
{
	struct timespec a, b;
	uint64_t x = 11;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 5;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return x;
}

int main(void)
{
	struct sigaction sa, cur;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0 || sigaction(SIGPROF, NULL, &cur) != 0) {
		perror("prof_ownprof: sigaction");
		return 1;
	}
	if (!(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_prof) {
		printf("ownprof: sigaction does not report my handler\n");
		return 1;
	}
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	burn(0.6);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	int bad = 0;
	if (ticks == 0) {
		printf("ownprof: no ITIMER_PROF tick arrived\n");
		bad = 1;
	}
	if (foreign) {
		printf("ownprof: %lu timer expiries that are not mine reached my handler\n", foreign);
		bad = 1;
	}
	if (!bad)
		printf("ownprof: ok\n");
	return bad;
}
