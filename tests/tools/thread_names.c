/* SPDX-License-Identifier: MIT */
/*
 * thread_names.c - a program whose threads get their names every way a
 * program names threads, for t_thread_names_are_recorded.sh.  Links the
 * shared libtracebuf (its rename hooks).  Prints "TID NAME" for each
 * thread, NAME being the name the trace must end with for it:
 *   main        renames itself with pthread_setname_np() after its first event
 *   early       names itself before its first event
 *   late        writes an event unnamed, then prctl(PR_SET_NAME) with a name
 *               longer than the kernel keeps (15 bytes)
 *   given       is named by main (pthread_setname_np of another thread)
 *               before it writes
 *   child       a forked child's only thread: inherits main's name, writes
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(tn, ev, (u32, step))

static pthread_barrier_t named;

static unsigned tid(void)
{
	return (unsigned)syscall(SYS_gettid);
}

static void *early(void *a)
{
	(void)a;
	pthread_setname_np(pthread_self(), "early-name");
	tb_tn_ev(1);
	printf("%u early-name\n", tid());
	return NULL;
}

static void *late(void *a)
{
	(void)a;
	tb_tn_ev(2);
	prctl(PR_SET_NAME, "late-name-longer-than-15", 0, 0, 0);
	tb_tn_ev(3);
	printf("%u late-name-longe\n", tid());
	return NULL;
}

static void *given(void *a)
{
	(void)a;
	pthread_barrier_wait(&named);
	tb_tn_ev(4);
	printf("%u given-name\n", tid());
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	tb_tn_ev(0);
	pthread_t t;
	pthread_create(&t, NULL, early, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, late, NULL);
	pthread_join(t, NULL);
	pthread_barrier_init(&named, NULL, 2);
	pthread_create(&t, NULL, given, NULL);
	if (pthread_setname_np(t, "given-name") != 0)
		return 1;
	pthread_barrier_wait(&named);
	pthread_join(t, NULL);
	if (pthread_setname_np(pthread_self(), "main-loop") != 0)
		return 1;
	tb_tn_ev(5);
	printf("%u main-loop\n", tid());
	pid_t c = fork();
	if (c == 0) {
		tb_tn_ev(6);
		printf("%u main-loop\n", tid());
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
