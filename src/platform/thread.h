/* SPDX-License-Identifier: MIT */
/*
 * thread.h - who is writing: the calling thread's identity, cached per
 * thread (thread.c), and whether another process is alive.  Used by the ring
 * protocol (record attribution, fallback owner words, block mode's
 * consumer liveness) and by the producer (thread names).
 * Everything here is async-signal-safe.
 */
#ifndef TB_PLATFORM_THREAD_H
#define TB_PLATFORM_THREAD_H

#include <stdint.h>

#include "core/view.h" /* TB_HIDDEN */

/*
 * Thread identity (thread.c), cached (reset in the child after fork).
 * The per-thread caches are read inline on the write paths: one
 * initial-exec TLS load each, as when they were private to append.c; 0 means
 * not computed yet, and the out-of-line *_first() computes and stores it.
 * Only thread.c writes them.
 */
TB_HIDDEN extern __thread uint32_t tb_tid __attribute__((tls_model("initial-exec")));
TB_HIDDEN extern __thread uint64_t tb_owner_tok __attribute__((tls_model("initial-exec")));
TB_HIDDEN uint32_t tb_self_tid_first(void);
TB_HIDDEN uint64_t tb_owner_token_first(void);

static inline uint32_t tb_self_tid(void)
{
	uint32_t t = tb_tid;
	return __builtin_expect(t != 0, 1) ? t : tb_self_tid_first();
}

/* What a fallback writer stores in a ring's owner word:
 * (tb_thread_stamp(tid) << 32) | tid. */
static inline uint64_t tb_owner_token(void)
{
	uint64_t t = tb_owner_tok;
	return __builtin_expect(t != 0, 1) ? t : tb_owner_token_first();
}

TB_HIDDEN uint32_t tb_self_pid(void);

/* Low 32 bits of the start time of thread `tid` (/proc), never 0; 0 when
 * unreadable.  Fallback owner words hold (stamp << 32) | tid, so that a
 * reused tid is not taken for the owner.  Async-signal-safe. */
TB_HIDDEN uint32_t tb_thread_stamp(uint32_t tid);

/* Field 22 of the /proc stat file at `stat_path` (e.g. "/proc/self/stat"):
 * the start time in clock ticks since boot; 0 when unreadable.
 * Async-signal-safe. */
TB_HIDDEN uint64_t tb_stat_start_time(const char *stat_path);

/*
 * 1 when process `pid` exists and is not a zombie (kill(pid, 0), then the
 * state in /proc/<pid>/stat); 0 for pid 0, an impossible pid, or a process
 * that is gone.  Only meaningful within one pid namespace.
 * Async-signal-safe (kill, open, read, close).
 */
TB_HIDDEN int tb_pid_alive(uint32_t pid);

/*
 * Thread names (tracebuf:thread_name, format.h; written by the producer,
 * producer.c).  tb_name_gen counts
 * producer sessions (tb_producer_use() bumps it); tb_name_done is the value
 * it had when this thread's name was last written (0: never).  The append
 * slow paths compare them (a TLS load and a global load, off the fast
 * path: a thread's first record in a session always takes the slow path,
 * since the ring's writer is another thread) and call tb_thread_name_first().
 */
TB_HIDDEN extern __thread uint32_t tb_name_done __attribute__((tls_model("initial-exec")));
TB_HIDDEN extern uint32_t tb_name_gen;
static inline int tb_thread_name_due(void)
{
	/* relaxed: a hint; a thread that misses a bump writes its name at
	 * its next slow path */
	return __builtin_expect(tb_name_done != __atomic_load_n(&tb_name_gen, __ATOMIC_RELAXED), 0);
}

/* Appends the decimal digits of v at p (no NUL); returns the end.  No stdio:
 * async-signal-safe (paths under /proc built in a handler or a rename hook). */
TB_HIDDEN char *tb_put_u32(char *p, uint32_t v);

#endif
