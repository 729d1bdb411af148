/* SPDX-License-Identifier: MIT */
/*
 * profile_floor.c - what one sample costs the sampled thread before the
 * sampler does anything, for the `profile` group of tracebuf-bench: the same
 * CPU-bound loop, in one thread, run alone and under a per-thread perf
 * cpu-clock event at 999 Hz (user space only, as the sampler opens it) in
 * the ways a sampler can use it:
 *
 *   interrupt    the event counts, nothing is signalled or recorded
 *                (the kernel's timer interrupt per period: what every
 *                sampler of this clock pays)
 *   kchain       the kernel records the user call chain into a perf ring
 *                per sample (PERF_SAMPLE_CALLCHAIN, as perf record -g),
 *                read once at the end: no signal
 *   signal       every overflow signals the thread (O_ASYNC, F_SETSIG
 *                SIGPROF) and an empty handler returns: the sampler's way
 *                since issue 14, less its handler's work
 *   rearm        as signal, and the handler re-arms the event
 *                (PERF_EVENT_IOC_REFRESH 1): the sampler's way before
 *   sigtrap      attr.sigtrap: the kernel sends SIGTRAP from task work on
 *                return to user space (no irq_work, no fasync), empty handler
 *
 * Each configuration once per round, the order rotated; prints, per
 * configuration, `floor NAME RATIO SIGNALS` with RATIO the summed thread CPU
 * time over the alone runs' (same rounds).  Usage: tracebuf-profile-floor
 * [ROUNDS] [ITERATIONS].  A configuration the kernel refuses prints
 * `floor NAME - 0`.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { ALONE, INTERRUPT, KCHAIN, SIGNAL, REARM, SIGTRAP_, NCFG };
static const char *const name[NCFG] = { "alone", "interrupt", "kchain", "signal", "rearm", "sigtrap" };

static volatile long signals;
static volatile int cur_cfg, cur_fd = -1;

static uint64_t cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	signals++;
	if (cur_cfg == REARM)
		ioctl(cur_fd, PERF_EVENT_IOC_REFRESH, 1);
}

/* the work: splitmix-like mixing, the same instructions every run */
static __attribute__((noinline)) uint64_t work(uint64_t n)
{
	uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++) {
		x ^= x >> 30;
		x *= 0xbf58476d1ce4e5b9ull;
		x ^= x >> 27;
		x += i;
	}
	return x;
}

#define RING_PAGES 64

/* opens the configuration's event on this thread; -1 when refused */
static int open_cfg(int c, void **ring)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000000ull / 999;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	if (c == KCHAIN) {
		a.sample_type = PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_kernel = 1;
		a.wakeup_events = 1u << 30; /* nobody polls */
	}
	if (c == SIGTRAP_) {
		a.sigtrap = 1;
		a.remove_on_exec = 1;
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (c == KCHAIN) {
		*ring = mmap(NULL, (RING_PAGES + 1) * 4096ul, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (*ring == MAP_FAILED) {
			*ring = NULL;
			close(fd);
			return -1;
		}
	}
	if (c == SIGNAL || c == REARM) {
		struct f_owner_ex o = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
		if (fcntl(fd, F_SETFL, O_ASYNC) || fcntl(fd, F_SETSIG, SIGPROF) || fcntl(fd, F_SETOWN_EX, &o)) {
			close(fd);
			return -1;
		}
	}
	cur_fd = fd;
	if (ioctl(fd, c == REARM ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE, c == REARM ? 1 : 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	uint64_t iters = argc > 2 ? strtoull(argv[2], NULL, 10) : 300000000ull;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	double cpu[NCFG] = { 0 };
	long sig[NCFG] = { 0 };
	int refused[NCFG] = { 0 };
	volatile uint64_t sink = 0;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NCFG; k++) {
			int c = (k + r) % NCFG;
			void *ring = NULL;
			int fd = -1;
			cur_cfg = c;
			if (c != ALONE && (fd = open_cfg(c, &ring)) < 0) {
				refused[c] = 1;
				continue;
			}
			signals = 0;
			uint64_t t0 = cpu_ns();
			sink += work(iters);
			uint64_t t1 = cpu_ns();
			if (fd >= 0) {
				ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
				close(fd);
			}
			if (ring)
				munmap(ring, (RING_PAGES + 1) * 4096ul);
			cpu[c] += (double)(t1 - t0);
			sig[c] += signals;
		}
	for (int c = 1; c < NCFG; c++) {
		if (refused[c] || cpu[ALONE] <= 0)
			printf("floor %s - 0\n", name[c]);
		else
			printf("floor %s %.4f %ld\n", name[c], cpu[c] / cpu[ALONE], sig[c]);
	}
	printf("alone_cpu_ns %.0f\n", cpu[ALONE]);
	return (int)(sink & 0);
}
