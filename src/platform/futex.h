/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the one futex wrapper of the library (private).  Every futex
 * word lives in the session's shared mapping (process-shared futexes: no
 * FUTEX_PRIVATE_FLAG).  The callers own the protocol around them: each
 * wait/wake pair is documented where the word is bumped (ring/append.c,
 * ring/consume.c, consumer/engine.c).
 */
#ifndef TB_PLATFORM_FUTEX_H
#define TB_PLATFORM_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == expected, at most timeout_ns (interrupted by a
 * signal or a wake-up; callers re-check their condition either way). */
static inline void tb_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec to = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };
	syscall(SYS_futex, word, FUTEX_WAIT, expected, &to, NULL, 0);
}

/* Wakes every waiter on word. */
static inline void tb_futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

#endif
