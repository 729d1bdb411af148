/* SPDX-License-Identifier: MIT */
/*
 * vtid_writers.c - a program whose every event says which thread wrote it,
 * for t_vtid_every_event_names_its_writer.sh: THREADS threads (argv[1],
 * default 4) each write EVENTS (argv[2], default 3000) vt:ev { tid, seq }
 * with tid = gettid(), yielding now and then so that the threads take
 * turns on each CPU's ring; the main thread signals them (SIGUSR1) while
 * they write, and each handler writes vt:sig { tid } on the interrupted
 * thread (a record nested inside another's write); one pause longer than
 * a compact header's reach per thread (an extended header); each thread
 * names itself "vt-<index>" first (a tracebuf:thread_name record).
 * Prints "TID" of each writer, one a line.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(vt, ev, (u32, tid), (u32, seq))
TB_EVENT(vt, sig, (u32, tid))

static unsigned nevents = 3000;

static uint32_t gettid_(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static void on_usr1(int sig)
{
	(void)sig;
	tb_vt_sig(gettid_());
}

static void *writer(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "vt-%u", (unsigned)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	uint32_t tid = gettid_();
	printf("%u\n", tid);
	fflush(stdout);
	for (uint32_t i = 0; i < nevents; i++) {
		tb_vt_ev(tid, i);
		if (i % 64 == 0)
			sched_yield();
		if (i == nevents / 2) {
			/* 100 ms: past a compact header's 2^27 ticks */
			struct timespec ts = { 0, 100000000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	if (argc > 2)
		nevents = (unsigned)atoi(argv[2]);
	if (n < 1 || n > 64 || nevents < 2)
		return 2;
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th[64];
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)i))
			return 1;
	for (unsigned k = 0; k < 50; k++)
		for (unsigned i = 0; i < n; i++)
			pthread_kill(th[i], SIGUSR1); /* a thread that has ended: ESRCH or nothing */
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
