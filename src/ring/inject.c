/* SPDX-License-Identifier: MIT */
/* inject.c - the stress build's injection points: delay, yield or raise SIGALRM between each prepared step and its commit (see inject.h). */
#ifdef TB_INJECT
#define _GNU_SOURCE
#include "ring/inject.h"

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

uint32_t tb_inject_spin[8];
static int inj_delay, inj_yield, inj_signal, inj_ready;
static __thread uint64_t inj_rng __attribute__((tls_model("initial-exec")));

/* Runs until the first call completes, possibly nested in a signal handler
 * that interrupted it: strtok_r (strtok's hidden state would be shared by
 * the two), each store the same value. */
static void inj_config(void)
{
	const char *e = getenv("TB_INJECT");
	if (e) {
		char buf[256], *save = NULL;
		snprintf(buf, sizeof buf, "%s", e);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			int v = atoi(strchr(t, '=') ? strchr(t, '=') + 1 : "0");
			if (!strncmp(t, "delay=", 6))
				inj_delay = v;
			else if (!strncmp(t, "yield=", 6))
				inj_yield = v;
			else if (!strncmp(t, "signal=", 7))
				inj_signal = v;
			else if (!strncmp(t, "spin=", 5))
				for (int i = 0; i < 8; i++)
					tb_inject_spin[i] = (uint32_t)v;
		}
	}
	__atomic_store_n(&inj_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t rnd(void)
{
	if (!inj_rng)
		inj_rng = (uint64_t)syscall(SYS_gettid) * 0x9E3779B97F4A7C15ull | 1;
	inj_rng ^= inj_rng << 13;
	inj_rng ^= inj_rng >> 7;
	inj_rng ^= inj_rng << 17;
	return (uint32_t)(inj_rng % 1000);
}

void tb_inject(int point)
{
	(void)point;
	if (!__atomic_load_n(&inj_ready, __ATOMIC_ACQUIRE))
		inj_config();
	if (inj_delay && rnd() < (uint32_t)inj_delay)
		for (volatile int i = 0; i < 2000; i++)
			;
	if (inj_yield && rnd() < (uint32_t)inj_yield)
		sched_yield();
	if (inj_signal && rnd() < (uint32_t)inj_signal) {
		/* only where a handler is installed (the stress tests' handlers
		 * write events); the default action would kill the process */
		struct sigaction cur;
		if (sigaction(SIGALRM, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
			raise(SIGALRM);
	}
}
#else
typedef int tb_inject_unused; /* ISO C: a translation unit is not empty */
#endif
