/* SPDX-License-Identifier: MIT */
/*
 * crash_chain.c - tb-crash-chain: a program that crashes in a second thread
 * inside a known call chain, main -> crash_worker -> crash_level1 ->
 * crash_level2, built with frame pointers (tests/CMakeLists.txt), for the
 * crash handler's tests (tests/cli/t_crash_snapshot_names_the_thread_and_stack.sh).
 *
 *   tb-crash-chain segv | abort | wait | own | own-early
 *
 * Prints "pid: P" and "tid: T" (the worker's, named "crash-worker") and flushes, writes 10 events
 * `crash:step { u32 i }` on the worker, then in crash_level2:
 *   segv   stores through a NULL pointer (SIGSEGV, SEGV_MAPERR, si_addr 0)
 *   abort  abort() (SIGABRT)
 *   wait   prints "waiting" and waits in pause() for a signal from outside
 *          (the main thread blocks SIGSEGV: a kill -SEGV of the process is
 *          delivered to the worker)
 *   own    installs its own SIGSEGV handler (in main, after the library
 *          attached: it replaces libtracebuf's), which prints "own handler
 *          ran" and exits 42, then segv; first prints "sigsegv at main: X"
 *   own-early  the same handler installed before any library's constructor
 *          (.preinit_array: libtracebuf finds it there and keeps it)
 * With CRASH_CHAIN_START=FILE in the environment, the worker waits until FILE
 * exists before its first event (record --pid: the recorder's request is in
 * place, so that event attaches; it is dropped).
 * X says what SIGSEGV's disposition was when main started: "default",
 * "own" (the program's), or "other" (someone's SA_SIGINFO handler:
 * libtracebuf's, when it attached).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(crash, step, (u32, i))

static const char *mode;
static int *volatile null_ptr;

__attribute__((noinline)) static void crash_level2(void)
{
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "wait")) {
		printf("waiting\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	*null_ptr = 1;
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays */
}

__attribute__((noinline)) static void crash_level1(void)
{
	crash_level2();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void *crash_worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "crash-worker");
	printf("tid: %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	const char *start = getenv("CRASH_CHAIN_START");
	for (int i = 0; start && access(start, F_OK) != 0 && i < 15000; i++)
		usleep(10000); /* a condition, polled; 150 s guard */
	for (uint32_t i = 0; i < 10; i++)
		tb_crash_step(i);
	crash_level1();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static void own_handler(int sig)
{
	(void)sig;
	static const char m[] = "own handler ran\n";
	if (write(1, m, sizeof m - 1) < 0)
		_exit(43);
	_exit(42);
}

static void install_own(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = own_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

static void preinit(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc == 2 && !strcmp(argv[1], "own-early"))
		install_own();
}
__attribute__((section(".preinit_array"), used)) static void (*const preinit_fn)(int, char **, char **) = preinit;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tb-crash-chain segv|abort|wait|own\n");
		return 2;
	}
	mode = argv[1];
	if (!strncmp(mode, "own", 3)) {
		struct sigaction old;
		sigaction(SIGSEGV, NULL, &old);
		printf("sigsegv at main: %s\n", !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL ? "default"
						 : !(old.sa_flags & SA_SIGINFO) && old.sa_handler == own_handler ? "own"
														: "other");
		install_own();
		mode = "segv";
	}
	if (!strcmp(mode, "wait")) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGSEGV);
		pthread_sigmask(SIG_BLOCK, &set, NULL); /* the worker unblocks it below */
	}
	printf("pid: %ld\n", (long)getpid());
	fflush(stdout);
	pthread_t t;
	if (!strcmp(mode, "wait")) {
		/* the worker inherits the mask: it takes SIGSEGV, main does not */
		pthread_attr_t a;
		pthread_attr_init(&a);
		sigset_t none;
		sigemptyset(&none);
		pthread_attr_setsigmask_np(&a, &none);
		if (pthread_create(&t, &a, crash_worker, NULL) != 0)
			return 1;
	} else if (pthread_create(&t, NULL, crash_worker, NULL) != 0) {
		return 1;
	}
	pthread_join(t, NULL);
	return 0;
}
