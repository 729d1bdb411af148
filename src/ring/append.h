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
#include "platform/thread.h"
#include "ring/rseq.h"

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

/*
 * One call of the fast path: what the critical section reads (a) and what
 * the caller needs again when it does not commit.  The caller keeps it on
 * its stack and, on a 1, takes its arguments back from it: nothing else of
 * the caller's is live across the critical section, so the fast path needs
 * no callee-saved register (no save and restore on every event).
 */
struct tb_fast_call {
	struct tb_fast_args a;      /* src, len, id: set by the caller */
	struct tb_session *s;       /* set by the caller */
	unsigned ch;                /* set by the caller */
};

/*
 * tb_append_fast - tb_append()'s fast path alone: the record goes into the
 * current packet of this CPU's ring with a compact header, by one rseq
 * critical section (rseq.h, cs 1).  Inline, so that the producer's entry
 * points (tb_emit for TB_EVENT, tb_write) run it with no call between the
 * program's call and the critical section: in a loop that writes events,
 * the calls and the registers they saved and restored cost more than the
 * critical section's own stores (make bench, `consumer` rows).
 *
 * Returns 0 when the record is written, 1 when nothing was written and
 * tb_append_after_fast() must do it: a session without the fast path
 * (TB_FAST_OFF), a CPU the session has no ring for, an id beyond the compact
 * header, a record over the channel's bound or past its packet, a writer
 * change, a thread whose name is due on a vtid channel, or an abort.
 * Everything it decides from is rechecked after it, so a 1 is never a loss.
 * Async-signal-safe, no system call, errno untouched.
 */
static inline __attribute__((always_inline)) int tb_append_fast(struct tb_fast_call *c)
{
	const struct tb_session *s = c->s;
	struct tb_rseq_abi *rs = tb_rseq_area_at(s->rseq_off);
	/* relaxed: our own thread's rseq area, written by the kernel only
	 * while this thread is not running.  Not registered: >= 0xfffffffe,
	 * never below ncpus. */
	uint32_t cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
	if (__builtin_expect(cpu >= s->ncpus || c->a.id > TB_COMPACT_ID_MAX, 0))
		return 1;
	const struct tb_fast_ring *fr = &s->fast[(size_t)c->ch * s->ncpus + cpu];
	/* one load of fr->kind decides the fast path, vtid and attribution;
	 * a channel without vtid pays one predicted branch for it */
	uint64_t kind = fr->kind;
	if (__builtin_expect((kind & TB_FAST_OFF) || c->a.len > fr->max_payload, 0))
		return 1;
	/* the thread's tid from its cache (platform/thread.h), read raw: not
	 * computed yet (0), the slow path computes it.  No call here: a call
	 * would make the registers above live across it. */
	uint32_t tid = tb_tid;
	if (__builtin_expect(kind != 0 && tid == 0, 0))
		return 1;
	if (__builtin_expect(kind & TB_FAST_VTID, 0)) {
		/* the record carries the writer's tid; a thread whose name is
		 * due takes the slow path, which writes it first: a vtid channel
		 * records the names of its threads even without attribution
		 * records (registry.c) */
		if (tb_thread_name_due())
			return 1;
		c->a.vtid = tid;
		c->a.tid = kind & TB_FAST_ATTRIBUTION ? tid : 0;
		return tb_rseq_fast_append_vtid(rs, cpu, fr, &c->a) != 0;
	}
	c->a.tid = kind ? tid : 0;
	return tb_rseq_fast_append(rs, cpu, fr, &c->a) != 0;
}

/*
 * tb_append() for a caller whose tb_append_fast() just returned 1: the same,
 * without trying the fast path a second time (its rdtsc and checks were a
 * third of what a record dropped from a full ring cost).  In a discard
 * channel, a record that cannot fit in the current packet of a full ring is
 * counted lost at once: prepare_switch()'s test and the count, with nothing
 * of the slow path around them (drop_if_full, append.c).
 */
TB_HIDDEN int tb_append_after_fast(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len);

/*
 * tb_append() with its fast path inline: one call record, the fast path,
 * and tb_append_after_fast() when it does not commit (the arguments taken
 * back from the record).  What tb_emit(), tb_write() and tb_append() run.
 */
static inline __attribute__((always_inline)) int tb_append_inline(struct tb_session *s, unsigned ch, uint32_t id,
								   const void *payload, uint32_t len)
{
	struct tb_fast_call c;
	c.a.src = payload;
	c.a.len = len;
	c.a.id = id;
	c.s = s;
	c.ch = ch;
	if (__builtin_expect(tb_append_fast(&c) == 0, 1))
		return 0;
	return tb_append_after_fast(c.s, c.ch, (uint32_t)c.a.id, c.a.src, (uint32_t)c.a.len);
}

/* Adds `n` to a loss/truncation counter of (ch, current CPU). */
TB_HIDDEN void tb_count(struct tb_session *s, unsigned ch, size_t counter_offset, uint64_t n);

/*
 * tb_switch_flush - close the current packet of (ch, cpu) for the flusher.
 * `only_pkt`: close it only while head is still in the packet at that
 * position (UINT64_MAX: any packet).
 * Returns 1 closed, 0 nothing to do / not idle / ring full / another packet,
 * -EAGAIN not on `cpu` (rseq), -EBUSY ring owned (fallback).
 */
TB_HIDDEN int tb_switch_flush(struct tb_session *s, unsigned ch, unsigned cpu, int now_mode, uint64_t now_ns,
			      uint64_t only_pkt);

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
