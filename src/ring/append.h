/* SPDX-License-Identifier: MIT */
/*
 * append.h - the write side of the ring protocol (library private): the
 * producer's append and the switch that closes a packet (append.c).  The
 * read side is ring.h; the critical sections both run are rseq.h.
 *
 * Two write protocols share one memory layout and one prepare step:
 *   rseq:     tb_rseq_fast_append() for the common record; otherwise a
 *             prepared store list committed by tb_rseq_commit() (rseq.h);
 *   fallback: the ring's owner word is taken with a CAS (never waited on:
 *             a busy ring makes the writer try the next one), then the same
 *             prepared store list is applied by plain C stores.
 */
#ifndef TB_RING_APPEND_H
#define TB_RING_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/view.h"

/* Result of a switch attempt. */
enum { TB_SW_DONE = 0, TB_SW_FULL = 1, TB_SW_RETRY = 2, TB_SW_NOTHING = 3 };

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

/*
 * Called by the append slow path, before the record, when this thread's name
 * is due in this session (tb_thread_name_due(), platform/thread.h): the
 * producer layer installs tb_thread_name_first() here when the library is
 * loaded, so that the ring does not call up into the producer.  NULL: names
 * are not written (the ring alone, as in the protocol tests).  Loaded
 * relaxed: a hook installed late only delays a name to a later slow path.
 */
typedef void (*tb_ring_name_hook_fn)(struct tb_session *s, unsigned ch);
TB_HIDDEN extern tb_ring_name_hook_fn tb_ring_name_hook;

#endif
