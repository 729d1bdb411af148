/* SPDX-License-Identifier: MIT */
/*
 * producer.h - the producer side of the ring protocol (library private).
 *
 * Two write protocols share one memory layout and one prepare step:
 *   rseq:     tb_rseq_fast_append() for the common record; otherwise a
 *             prepared store list committed by tb_rseq_commit() (rseq.h);
 *   fallback: the ring's owner word is taken with a CAS (never waited on:
 *             a busy ring makes the writer try the next one), then the same
 *             prepared store list is applied by plain C stores.
 */
#ifndef TB_PRODUCER_PRODUCER_H
#define TB_PRODUCER_PRODUCER_H

#include <stdint.h>

#include "core/session_impl.h"

/* Result of a switch attempt. */
enum { TB_SW_DONE = 0, TB_SW_FULL = 1, TB_SW_RETRY = 2, TB_SW_NOTHING = 3 };

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

/*
 * Thread names (tracebuf:thread_name, format.h).  tb_name_gen counts
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
/* Writes this thread's name to channel ch of s, before the record that is
 * being appended, unless it is the program's name.  Marks it done first (the
 * nested append does not come back here).  Async-signal-safe. */
TB_HIDDEN void tb_thread_name_first(struct tb_session *s, unsigned ch);
/* A rename (pthread_setname_np, prctl): writes the name of `tid` (0: every
 * thread of the process now called `name`, looked up in /proc) to every
 * channel with attribution. */
TB_HIDDEN void tb_thread_renamed(uint32_t tid, const char *name);
/* Low 32 bits of the start time of thread `tid` (/proc), never 0; 0 when
 * unreadable.  Fallback owner words hold (stamp << 32) | tid, so that a
 * reused tid is not taken for the owner.  Async-signal-safe. */
TB_HIDDEN uint32_t tb_thread_stamp(uint32_t tid);

/*
 * 1 when process `pid` exists and is not a zombie (kill(pid, 0), then the
 * state in /proc/<pid>/stat); 0 for pid 0, an impossible pid, or a process
 * that is gone.  Only meaningful within one pid namespace.
 * Async-signal-safe (kill, open, read, close).
 */
TB_HIDDEN int tb_pid_alive(uint32_t pid);

/*
 * tb_append - write one record (event `id`, payload) to channel `ch` of
 * session `s` on the current CPU (rseq) or a free slot (fallback).
 * Async-signal-safe.  Return: 0; -ENOSPC (ring full, too big, or block mode
 * with the consumer gone: counted); -ETIMEDOUT (block mode: counted); -EBUSY
 * (no slot / abort storm: counted).
 */
TB_HIDDEN int tb_append(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len);

/* Adds `n` to a loss/truncation counter of (ch, current CPU). */
TB_HIDDEN void tb_count(struct tb_session *s, unsigned ch, size_t counter_offset, uint64_t n);

/*
 * tb_switch_flush - close the current packet of (ch, cpu) for the flusher.
 * Returns 1 closed, 0 nothing to do / not idle / ring full, -EAGAIN not on
 * `cpu` (rseq), -EBUSY ring owned (fallback).
 */
TB_HIDDEN int tb_switch_flush(struct tb_session *s, unsigned ch, unsigned cpu, int now_mode, uint64_t now_ns);

/* Test hook: number of rseq aborts seen by this thread's appends. */
TB_HIDDEN uint64_t tb_thread_aborts(void);

#endif
