/* SPDX-License-Identifier: MIT */
/*
 * state.h - reading a ring's control block, for both sides of the protocol
 * (library private): the producer's prepare steps (append.c) and the
 * consumer's flush, snapshot and dead-ring drain (consume.c) read the same
 * two-version state and the same loss counters through these two functions.
 */
#ifndef TB_RING_STATE_H
#define TB_RING_STATE_H

#include <stdint.h>

#include "core/format.h"

/* The true state at head: the last record's timestamp, the running event
 * count and the last writer's tid (see "two-version state" in format.h). */
struct tb_state {
	uint64_t head, ts, cnt, tid;
};

/*
 * tb_state_read - head and the true (ts, cnt, tid) at head, from any CPU.
 * Writers interleave with a reader only by preemption on their CPU (rseq)
 * or not at all (fallback owner); a reader on another CPU sees their stores
 * in program order (x86 TSO), and a producer's result is re-validated by its
 * commit's head check anyway.  The seqlock-style double read of st_end
 * catches a writer between the reads: st_end only ever moves away from head
 * until the next commit.
 * `tries` bounds the retries (0: until consistent; the producer, whose
 * writers can only be preempted).  A consumer passes a bound, since a
 * hostile or dead writer may leave the words changing or torn forever.
 * Return: 0, or -1 when no consistent read was made within `tries` (then
 * st->head is a plain acquire load and ts/cnt/tid are UINT64_MAX: unknown).
 */
static inline int tb_state_read(struct tb_ctl *c, struct tb_state *st, unsigned tries)
{
	for (unsigned i = 0; tries == 0 || i < tries; i++) {
		/* acquire pairs with the commit's release store of head (the
		 * last store of a critical section); st_end likewise */
		uint64_t h = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		uint64_t e1 = __atomic_load_n(&c->st_end, __ATOMIC_ACQUIRE);
		uint64_t ta = __atomic_load_n(&c->ts_after, __ATOMIC_RELAXED);
		uint64_t ca = __atomic_load_n(&c->cnt_after, __ATOMIC_RELAXED);
		uint64_t ia = __atomic_load_n(&c->tid_after, __ATOMIC_RELAXED);
		uint64_t tb = __atomic_load_n(&c->ts_before, __ATOMIC_RELAXED);
		uint64_t cb = __atomic_load_n(&c->cnt_before, __ATOMIC_RELAXED);
		uint64_t ib = __atomic_load_n(&c->tid_before, __ATOMIC_RELAXED);
		/* orders the field loads before the re-reads (seqlock reader) */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint64_t e2 = __atomic_load_n(&c->st_end, __ATOMIC_RELAXED);
		uint64_t h2 = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
		if (e1 != e2 || h != h2)
			continue;
		st->head = h;
		if (e1 == h) {
			st->ts = ta;
			st->cnt = ca;
			st->tid = ia;
		} else {
			st->ts = tb;
			st->cnt = cb;
			st->tid = ib;
		}
		return 0;
	}
	st->head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	st->ts = st->cnt = st->tid = UINT64_MAX;
	return -1;
}

/*
 * tb_state_losses - the producer loss counters of a ring, each read once,
 * into lost[0 .. TB_LOSS_NPRODUCER); returns their sum.  Relaxed: the
 * counters only grow, and a count exact at some instant is all a packet
 * context promises.  `overwritten`, when not NULL, replaces the stored
 * overwrite count (a switch that is reusing a sub-buffer passes the total
 * it is about to commit).
 */
static inline uint64_t tb_state_losses(struct tb_ctl *c, const uint64_t *overwritten, uint64_t lost[TB_LOSS_NPRODUCER])
{
	uint64_t sum = 0;
	for (unsigned k = 0; k < TB_LOSS_NPRODUCER; k++) {
		lost[k] = k == TB_LOSS_OVERWRITTEN && overwritten ? *overwritten
								 : __atomic_load_n(tb_ctl_lost(c, k), __ATOMIC_RELAXED);
		sum += lost[k];
	}
	return sum;
}

#endif
