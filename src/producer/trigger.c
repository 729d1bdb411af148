/* SPDX-License-Identifier: MIT */
/*
 * trigger.c - tb_trigger(), tb_session_trigger(): a request for a flight
 * recorder snapshot, published in the session map (struct tb_map, trig_*;
 * docs/FORMAT.md 1.1).  The reading side is src/consumer/flight.c.
 *
 * Protocol (steps as FORMAT.md names them):
 *   A  n = trig_seq++            atomic add: claims slot n % TB_TRIG_SLOTS
 *   B  slot.seq = 0              relaxed: the slot is being rewritten
 *   C  ts, pid, tid, name        plain stores (relaxed atomics)
 *   D  slot.seq = n + 1          release: publishes C.  Observable.
 *   E  trig_futex++ ; FUTEX_WAKE release, then the one system call
 * Why an atomic add and not the counter cs of the loss counters (DESIGN.md,
 * "Counter add"): a trigger is a name, a time and a thread published
 * together, which one committing add cannot carry; the lock-prefixed add is
 * async-signal-safe, needs no rseq (fallback sessions, valgrind) and costs
 * nothing next to the wake.  The event fast path is not touched.
 * Two callers racing for one slot (more than TB_TRIG_SLOTS requests in
 * flight at once) may leave it mixed: the recorder checks and cleans what
 * it reads (printable name, seq), so the worst is a trigger misnamed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>

#include <tracebuf/session.h>
#include <tracebuf/trigger.h>

#include "core/format.h"
#include "core/view.h"
#include "platform/clock.h"
#include "platform/futex.h"
#include "platform/thread.h"

_Static_assert(TB_TRIGGER_NAME_MAX + 1 == TB_TRIG_NAME_MAX, "trigger.h and format.h name bounds");

int tb_session_trigger(struct tb_session *s, const char *name)
{
	if (!s)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	struct tb_map *m = s->map;
	/* A: relaxed: the claim orders nothing; D publishes the slot */
	uint64_t n = __atomic_fetch_add(&m->trig_seq, 1, __ATOMIC_RELAXED);
	struct tb_trig_slot *t = &m->trig[n % TB_TRIG_SLOTS];
	/* B: a reader that copies the slot while C runs sees seq 0 or a
	 * changed seq on its second load, and does not take the copy */
	__atomic_store_n(&t->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* B before C: pairs with the reader's acquire fence */
	/* C */
	__atomic_store_n(&t->ts, tb_clock_read(s->clock_kind), __ATOMIC_RELAXED);
	__atomic_store_n(&t->pid, tb_self_pid(), __ATOMIC_RELAXED);
	__atomic_store_n(&t->tid, tb_self_tid(), __ATOMIC_RELAXED);
	if (!name || !*name)
		name = "trigger";
	unsigned i = 0;
	for (; i < TB_TRIG_NAME_MAX - 1 && name[i]; i++) {
		char c = name[i];
		__atomic_store_n(&t->name[i], c >= 0x20 && c < 0x7f ? c : '?', __ATOMIC_RELAXED);
	}
	for (; i < TB_TRIG_NAME_MAX; i++)
		__atomic_store_n(&t->name[i], 0, __ATOMIC_RELAXED);
	/* D: release: the recorder's acquire load of seq (flight.c,
	 * read_slot) sees C complete */
	__atomic_store_n(&t->seq, n + 1, __ATOMIC_RELEASE);
	/* E: after D (release): a recorder woken by the bump finds the slot
	 * published; one that was awake re-reads trig_seq before it sleeps on
	 * the value it saw, so the wake-up cannot be lost (flight.c) */
	__atomic_fetch_add(&m->trig_futex, 1, __ATOMIC_RELEASE);
	int err = errno; /* a signal handler's caller keeps its errno */
	tb_futex_wake_all(&m->trig_futex);
	errno = err;
	return 0;
}

int tb_trigger(const char *name)
{
	struct tb_session *s = tb_producer_session();
	if (!s)
		return -ENOENT;
	return tb_session_trigger(s, name);
}
