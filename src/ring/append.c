/* SPDX-License-Identifier: MIT */
/*
 * append.c - appending records and switching sub-buffers.
 *
 * Length: the write side of the ring protocol is one unit: both protocols
 * share the prepare steps, and every ordering comment names its partner in
 * this file or in consume.c (the read side).  The common record's path is
 * assembly in rseq.h; the state reads both sides share are state.h.
 *
 * Every write to a ring goes through one of two steps, both "prepare in C,
 * commit in one go":
 *
 *   prepare_record()  stage [escape record] + record, plus the store list
 *                     that updates the two-version state;
 *   prepare_switch()  stage the next packet's header, plus the store list
 *                     that closes the current packet and opens the next.
 *
 * Under the rseq protocol the prepared step is committed by tb_rseq_commit()
 * (the cs checks that CPU and head are unchanged, reads the timestamp,
 * copies, stores, commits head).  Under the fallback protocol the ring is
 * owned (CAS on ctl->owner) and commit_plain() performs the same stores in
 * the same order.  The common record takes neither path: it is written by
 * tb_rseq_fast_append() entirely in assembly.
 *
 * Steps another party can observe are marked "Observable:".  tb_inject()
 * points (no-ops unless TB_INJECT) sit between prepare and commit.
 *
 * Who is writing (the cached tid and pid, the fallback owner token, thread
 * start stamps, their reset after fork) is platform/thread.c; this file
 * reads them through platform/thread.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ring/append.h"

#include "core/record.h"
#include "platform/clock.h"
#include "platform/futex.h"
#include "platform/thread.h"
#include "ring/inject.h"
#include "ring/rseq.h"
#include "ring/state.h"

/* ---------------------------------------------------------------------- */
/* rseq aborts seen by this thread's appends (a test hook)                 */
/* ---------------------------------------------------------------------- */

tb_ring_name_hook_fn tb_ring_name_hook;

/* Slow paths only: writes this thread's name first when it is due. */
static void name_if_due(struct tb_session *s, unsigned ch)
{
	if (!tb_thread_name_due())
		return;
	/* relaxed: see tb_ring_name_hook (append.h) */
	tb_ring_name_hook_fn name = __atomic_load_n(&tb_ring_name_hook, __ATOMIC_RELAXED);
	if (name)
		name(s, ch);
}

static __thread uint64_t tb_aborts __attribute__((tls_model("initial-exec")));

uint64_t tb_thread_aborts(void)
{
	return tb_aborts;
}

/* The true state of a ring is read with tb_state_read() (state.h), shared
 * with the consumer side. */

/* ---------------------------------------------------------------------- */
/* prepared steps                                                          */
/* ---------------------------------------------------------------------- */

/* staged bytes: a whole packet header (trace packet header + context, 160), or
 * [escape record] + one record header, each header followed by its context on a
 * vtid channel (at most 42) */
#define STAGE_MAX TB_PACKET_HEADER_SIZE
_Static_assert(TB_PACKET_HEADER_SIZE % 8 == 0, "the staged packet header is whole qwords");

struct prep {
	struct tb_cs_args a;
	struct tb_cs_op ops[TB_CS_MAX_OPS];
	uint64_t *stage; /* 8-byte aligned staging */
};

static void op(struct prep *p, uint64_t *addr, uint64_t val, int is_ts)
{
	if (p->a.nops >= TB_CS_MAX_OPS)
		__builtin_trap(); /* a step longer than TB_CS_MAX_OPS says: a bug, never input */
	struct tb_cs_op *o = &p->ops[p->a.nops++];
	o->addr = addr;
	o->val = val;
	o->is_ts = (uint64_t)is_ts;
}

/* The state updates every committing step ends with (two-version order). */
static void ops_state(struct prep *p, struct tb_ctl *c, const struct tb_state *st, uint64_t newhead, int ts_is_cs,
		      uint64_t ts, uint64_t cnt, uint64_t tid)
{
	op(p, &c->ts_before, st->ts, 0);
	op(p, &c->cnt_before, st->cnt, 0);
	op(p, &c->tid_before, st->tid, 0);
	op(p, &c->st_end, newhead, 0);
	op(p, &c->ts_after, ts, ts_is_cs);
	op(p, &c->cnt_after, cnt, 0);
	op(p, &c->tid_after, tid, 0);
}

/* C twin of tb_rseq_commit(), for the fallback owner and for dead rings. */
static void commit_plain(const struct tb_cs_args *a)
{
	uint64_t ts = a->ts;
	if (a->read_ts) {
		uint64_t t = tb_rdtsc();
		ts = t < ts ? ts : t;
	}
	if (a->nq)
		memcpy(a->dst, a->src, a->nq * 8);
	if (a->n2)
		memcpy(a->dst2, a->src2, a->n2);
	for (uint64_t i = 0; i < a->nops; i++) {
		uint64_t v = a->ops[i].is_ts ? ts : a->ops[i].val;
		if (((uintptr_t)a->ops[i].addr & 7) == 0)
			/* control block / descriptor / packet context fields: other
			 * threads read them with atomic loads (state readers, counters,
			 * snapshots); relaxed is enough, the head store below orders */
			__atomic_store_n(a->ops[i].addr, v, __ATOMIC_RELAXED);
		else
			memcpy(a->ops[i].addr, &v, 8); /* a record header's timestamp */
	}
	/* Observable: the consumer's acquire load of head; the release orders
	 * every store above before it (pairs with tb_ring_ready/snapshot). */
	__atomic_store_n(a->head, a->newhead, __ATOMIC_RELEASE);
}

struct ring_ref {
	struct tb_session *s;
	unsigned ch, cpu;
	const struct tb_chan_view *cv;
	struct tb_ctl *ctl;
	uint8_t *data;      /* sub-buffer 0 */
	struct tb_sbdesc *desc;
	int rseq;           /* commit with rseq (else plain) */
	int ts_in_cs;       /* timestamp read inside the cs (rseq + TSC) */
};

static void ring_ref(struct ring_ref *r, struct tb_session *s, unsigned ch, unsigned cpu)
{
	r->s = s;
	r->ch = ch;
	r->cpu = cpu;
	r->cv = &s->chan[ch];
	r->ctl = tb_ctl_of(s, ch, cpu);
	r->data = tb_ring_of(s, ch, cpu) + r->cv->data_off;
	r->desc = tb_sbdesc_of(s, ch, cpu);
	r->rseq = s->protocol == TB_PROTO_RSEQ;
	r->ts_in_cs = r->rseq && s->clock_kind == TB_CLOCK_TSC;
}

/*
 * prepare_switch - close the packet holding st->head (if any) and open the
 * next one.  Returns TB_SW_FULL when the next sub-buffer is not consumed yet
 * (discard/block), else fills p and returns TB_SW_DONE.
 */
static int prepare_switch(struct ring_ref *r, const struct tb_state *st, uint64_t ts, struct prep *p)
{
	const struct tb_chan_view *cv = r->cv;
	struct tb_ctl *c = r->ctl;
	uint64_t S = cv->sb_size, ring = cv->ring_mask + 1;
	uint64_t H = st->head, P = H & ~(S - 1), Q = H ? P + S : 0;
	uint64_t overwritten = 0;
	unsigned qidx = (unsigned)((Q >> cv->sb_shift) & (cv->sb_count - 1));

	/*
	 * Rule for every prepare step: read as input only what no aborted
	 * attempt of a step could have changed since the last commit (an
	 * attempt may have stored anything its store list holds, then been
	 * aborted).  So nothing is read from desc[qidx] (this switch writes
	 * it), the loss total is recomputed rather than incremented, and the
	 * switch count is head >> sb_shift instead of a counter.
	 */
	if (cv->mode != TB_MODE_OVERWRITE) {
		/* Acquire pairs with the consumer's release store of tail in
		 * tb_ring_release(): its reads of that sub-buffer are done
		 * before we overwrite it.  A stale tail only makes us drop. */
		uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
		if (Q - tail >= ring)
			return TB_SW_FULL;
	} else if (Q >= ring) {
		/* Reusing the oldest sub-buffer.  Every event before the oldest
		 * packet still retained afterwards (the one after Q) is lost:
		 * its cnt_begin, written by the committed switch that opened
		 * it, is the overwritten total - idempotent under retries. */
		unsigned oldest = (qidx + 1) & (cv->sb_count - 1);
		overwritten = __atomic_load_n(&r->desc[oldest].cnt_begin, __ATOMIC_RELAXED);
		if (overwritten > st->cnt)
			overwritten = st->cnt;
	} else {
		overwritten = __atomic_load_n(&c->lost_overwritten, __ATOMIC_RELAXED);
	}
	uint64_t lost[TB_LOSS_NPRODUCER];
	uint64_t disc = tb_state_losses(c, &overwritten, lost);

	memset(&p->a, 0, sizeof p->a);
	/* the next packet's whole header (trace packet header + context, 160
	 * bytes = 20 qwords), staged: its loss totals are those this switch
	 * closes the current packet with (consumer causes 0: the consumer sets
	 * them in its copy); timestamp_end, content_size, events_discarded and
	 * the producer causes are written again when it is closed */
	struct tb_packet_header h;
	memset(&h, 0, sizeof h);
	h.magic = TB_CTF_MAGIC;
	memcpy(h.uuid, r->s->uuid, 16);
	h.stream_id = cv->vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN; /* the packet's record layout */
	h.stream_instance_id = ((uint64_t)r->ch << 32) | r->cpu;
	h.timestamp_begin = ts;
	h.packet_size = S * 8;
	h.packet_seq_num = Q >> cv->sb_shift;
	h.events_discarded = disc;
	h.cpu_id = r->cpu;
	for (unsigned k = 0; k < TB_LOSS_NPRODUCER; k++)
		h.lost[k] = lost[k];
	memcpy(p->stage, &h, TB_PACKET_HEADER_SIZE);
	uint8_t *qsb = r->data + (Q & cv->ring_mask);
	/* Reusing a sub-buffer that still holds the oldest retained packet
	 * (overwrite mode): its header is written through the ordered store
	 * list, after the store that counts its events as lost, so that an
	 * attempt aborted anywhere leaves it either intact or counted (pairs
	 * with the skip rule in emit_range(), src/ring/consume.c).  A free
	 * sub-buffer takes the header as one copy, first. */
	int reuse = cv->mode == TB_MODE_OVERWRITE && Q >= ring;
	if (!reuse) {
		p->a.src = (const uint8_t *)p->stage;
		p->a.dst = qsb;
		p->a.nq = TB_PACKET_HEADER_SIZE / 8;
	}
	p->a.ops = p->ops;

	if (H) {
		/* close the current packet (the consumer reads these fields
		 * only after it sees head move past the packet) */
		uint8_t *psb = r->data + (P & cv->ring_mask);
		unsigned pidx = (unsigned)((P >> cv->sb_shift) & (cv->sb_count - 1));
		op(p, (uint64_t *)(psb + TB_PKT_OFF_TS_END), ts, r->ts_in_cs);
		op(p, (uint64_t *)(psb + TB_PKT_OFF_CONTENT), (H - P) * 8, 0);
		op(p, (uint64_t *)(psb + TB_PKT_OFF_DISCARDED), disc, 0);
		for (unsigned k = 0; k < TB_LOSS_NPRODUCER; k++)
			op(p, (uint64_t *)(psb + TB_PKT_OFF_LOST + (size_t)8 * k), lost[k], 0);
		op(p, &r->desc[pidx].cnt_end, st->cnt, 0);
	}
	op(p, &c->lost_overwritten, overwritten, 0); /* before anything of Q changes */
	op(p, &r->desc[qidx].cnt_begin, st->cnt, 0);
	op(p, &r->desc[qidx].cnt_end, st->cnt, 0);
	op(p, &r->desc[qidx].disc_begin, disc, 0);
	if (reuse) {
		for (unsigned k = 0; k < TB_PACKET_HEADER_SIZE / 8; k++)
			op(p, (uint64_t *)(qsb + 8 * (size_t)k), p->stage[k], r->ts_in_cs && 8 * k == TB_PKT_OFF_TS_BEGIN);
	} else if (r->ts_in_cs) {
		op(p, (uint64_t *)(qsb + TB_PKT_OFF_TS_BEGIN), 0, 1);
	}
	uint64_t newhead = Q + TB_PACKET_HEADER_SIZE;
	ops_state(p, c, st, newhead, r->ts_in_cs, ts, st->cnt, 0);
	p->a.head = &c->head;
	p->a.expect = H;
	p->a.newhead = newhead;
	p->a.ts = ts;
	p->a.read_ts = (uint64_t)r->ts_in_cs;
	return TB_SW_DONE;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* set (relaxed: a hint, any thread may set it) when the kernel refuses
 * MADV_POPULATE_WRITE (before 5.14: EINVAL), so that it is asked once */
static int populate_refused;

/*
 * A producer's switch into a sub-buffer of the ring's first lap (never
 * written since the ring was created, so none of its pages exist yet), once
 * committed, asks the kernel for all its pages in one system call, instead
 * of one page fault per 4 KiB page as the records reach them (the header's
 * page is faulted by the commit itself).  After the commit, not between
 * prepare and commit: the system call may migrate the thread, and a step
 * prepared on one CPU would then be aborted and prepared again; a switch
 * that lost its race opens nothing and asks for nothing.  What it saves is the fault's
 * entry and exit per page: on the 2026-11-27 PVM guest (docs/BENCHMARKS.md)
 * 16 MiB of a fresh ring took 50 ms by faults and 27 ms populated (the page
 * allocation and zeroing are paid either way), i.e. ~1.2 ns per event of a
 * 20 M-event recording.  Pages are still allocated only for sub-buffers a
 * producer opens (a ring whose CPU never writes stays a hole); at most the
 * rest of the last one opened is allocated early.  Producers only: a flush
 * by the consumer (tb_switch_flush()) opens a packet on an idle CPU, which
 * may never be written further.  Errors are ignored: a page the kernel
 * could not give now is faulted in later as before (or fails then, as it
 * would have).  Called with errno saved by the slow paths.
 */
static void populate_first_lap(const struct ring_ref *r, uint64_t newhead)
{
	const struct tb_chan_view *cv = r->cv;
	uint64_t q = newhead - TB_PACKET_HEADER_SIZE; /* the opened sub-buffer's position */
	if (q > cv->ring_mask || __atomic_load_n(&populate_refused, __ATOMIC_RELAXED))
		return;
	/* page-aligned: the rings start on a page and a sub-buffer is a power
	 * of two of at least a page (tb_map_validate(), from the process-local
	 * view, never from the shared header) */
	if (madvise(r->data + q, cv->sb_size, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
		__atomic_store_n(&populate_refused, 1, __ATOMIC_RELAXED);
}

/* The slow path writes up to 8 bytes of slack past a record (qword copy of
 * the staged headers): it must stay inside the current sub-buffer. */
static int room_ok(uint64_t o, uint32_t total, uint64_t sb_size)
{
	return o + total + 8 <= sb_size;
}

/* Bytes of [escape] + record, with headers sized for (ts, prev), each
 * header followed by `ctx` bytes of event context (the vtid: 0 or 4). */
static uint32_t record_bytes(int escape, int ext_only, uint32_t ctx, uint32_t id, uint64_t ts, uint64_t prev,
			     uint32_t len)
{
	uint32_t n = 0;
	if (escape) {
		n += (ext_only ? TB_EXTENDED_HDR_SIZE : tb_hdr_size(TB_EVENT_ID_THREAD, ts, prev)) + ctx +
		     TB_THREAD_PAYLOAD_SIZE;
		prev = ts;
	}
	return n + (ext_only ? TB_EXTENDED_HDR_SIZE : tb_hdr_size(id, ts, prev)) + ctx + len;
}

/* Stages [escape] + record at p->stage and the state ops.  On a vtid
 * channel each header is followed by the writer's tid (the event context):
 * staged with the headers, so it is published by the same commit. */
static void prepare_record(struct ring_ref *r, const struct tb_state *st, int escape, uint32_t id, uint64_t ts,
			   const void *payload, uint32_t len, uint32_t total, struct prep *p)
{
	uint8_t *b = (uint8_t *)p->stage;
	uint8_t *dst = r->data + (st->head & r->cv->ring_mask);
	uint64_t prev = st->ts;
	uint32_t off = 0, hs;
	int vtid = r->cv->vtid != 0;
	uint32_t self = tb_self_tid();
	memset(&p->a, 0, sizeof p->a);
	p->a.ops = p->ops;
	if (escape) {
		hs = r->ts_in_cs ? tb_hdr_put_extended(b, TB_EVENT_ID_THREAD, 0)
				 : tb_hdr_put(b, TB_EVENT_ID_THREAD, ts, prev);
		if (r->ts_in_cs)
			op(p, (uint64_t *)(dst + off + 5), 0, 1); /* patched after the copy */
		if (vtid) {
			memcpy(b + hs, &self, TB_VTID_SIZE);
			hs += TB_VTID_SIZE;
		}
		uint32_t ids[2] = { tb_self_pid(), self };
		memcpy(b + hs, ids, sizeof ids);
		off = hs + TB_THREAD_PAYLOAD_SIZE;
		prev = ts;
	}
	hs = r->ts_in_cs ? tb_hdr_put_extended(b + off, id, 0) : tb_hdr_put(b + off, id, ts, prev);
	if (r->ts_in_cs)
		op(p, (uint64_t *)(dst + off + 5), 0, 1);
	off += hs;
	if (vtid) {
		memcpy(b + off, &self, TB_VTID_SIZE);
		off += TB_VTID_SIZE;
	}
	/* the staged headers are copied as whole qwords (up to 7 bytes past
	 * them, inside the record's room: see room_ok()), then the payload
	 * byte-exact over that slack */
	uint32_t padded = (off + 7u) & ~7u;
	memset(b + off, 0, padded - off);
	p->a.src = b;
	p->a.dst = dst;
	p->a.nq = padded / 8;
	p->a.src2 = payload;
	p->a.dst2 = dst + off;
	p->a.n2 = len;
	uint64_t newhead = st->head + total;
	ops_state(p, r->ctl, st, newhead, r->ts_in_cs, ts, st->cnt + 1, escape ? self : st->tid);
	p->a.head = &r->ctl->head;
	p->a.expect = st->head;
	p->a.newhead = newhead;
	p->a.ts = ts;
	p->a.read_ts = (uint64_t)r->ts_in_cs;
}

/* ---------------------------------------------------------------------- */
/* consumer wake-up and block-mode waiting                                 */
/* ---------------------------------------------------------------------- */

/*
 * Whether the packet a switch to `newhead` closed was open at least the
 * consumer's live_wake_ms (half its live period): its records may have
 * waited that long already, and the consumer promises them on disk within
 * the period, so it is woken now, below the watermark too; a packet that
 * filled faster waits at most the consumer's own wake-up (every half
 * period: engine_run.c).  Reads the closed packet's two timestamps (this
 * switch wrote its end) with relaxed loads: a hint, as the values are; a
 * sub-buffer the consumer already released and a producer reused only
 * changes how soon the consumer wakes.
 */
static int packet_was_old(struct ring_ref *r, uint64_t newhead)
{
	uint32_t ms = __atomic_load_n(&r->s->map->live_wake_ms, __ATOMIC_RELAXED);
	if (!ms || newhead < TB_PACKET_HEADER_SIZE + r->cv->sb_size)
		return 0;
	if (ms > 3600000u)
		ms = 3600000u; /* an hour (a hostile map): ticks below stay far from overflow */
	uint64_t P = (newhead & ~(r->cv->sb_size - 1)) - r->cv->sb_size;
	const uint8_t *h = tb_sb_at(r->s, r->ch, r->cpu, P);
	uint64_t b = __atomic_load_n((const uint64_t *)(h + TB_PKT_OFF_TS_BEGIN), __ATOMIC_RELAXED);
	uint64_t e = __atomic_load_n((const uint64_t *)(h + TB_PKT_OFF_TS_END), __ATOMIC_RELAXED);
	return e > b && e - b >= (uint64_t)ms * (r->s->clock_freq / 1000);
}

/* After a switch committed: wake the consumer if it sleeps and enough
 * sub-buffers are full, or the packet closed was open long (live period).
 * Slow path only. */
static void maybe_wake_consumer(struct ring_ref *r, uint64_t newhead)
{
	struct tb_map *m = r->s->map;
	/* Full fence: our head store (the commit) before the load of
	 * consumer_sleeping; pairs with the fence in tb_consumer_wait()
	 * between its store of consumer_sleeping and its re-check of heads
	 * (Dekker: one of the two sees the other). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&m->consumer_sleeping, __ATOMIC_RELAXED))
		return;
	uint64_t tail = __atomic_load_n(&r->ctl->tail, __ATOMIC_RELAXED);
	uint64_t full = ((newhead - TB_PACKET_HEADER_SIZE) - tail) >> r->cv->sb_shift;
	if (r->cv->mode != TB_MODE_OVERWRITE && full < r->cv->watermark && !packet_was_old(r, newhead))
		return;
	__atomic_fetch_add(&m->consumer_futex, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(&m->consumer_futex);
}

/*
 * Block mode: is the consumer gone?  Then a full ring drops at once, counted
 * as TB_LOSS_NOCONS, instead of making every event wait the timeout for a
 * consumer that will never come.  The consumer publishes its pid in
 * map->consumer_pid (tb_session_claim_consumer(): `record` does it before it
 * forks CMD, tb_engine_start() again); a recorder killed -9 leaves it there
 * (also one killed before its drain thread ran), and the
 * process it names is gone (or a zombie).  A consumer that finished sets the
 * state STOPPED: nobody drains any more.  A new consumer (record --attach)
 * publishes its own pid, which is seen at the next full-ring event: blocking
 * resumes.  No pid at all (a consumer that does not say who it is, as the
 * tests' own decoders) is waited for, as before.
 * The liveness check (kill + /proc) is made at most every 50 ms per process;
 * in between this costs a clock read per full-ring event.  Slow path only,
 * async-signal-safe.
 */
#define CONSUMER_CHECK_NS 50000000ull

static int consumer_gone(struct tb_session *s)
{
	/* relaxed: plain values, nothing else is published with them (they pair
	 * with the relaxed stores of tb_engine_finish() and
	 * tb_session_claim_consumer(); for CMD under `record` the pid was
	 * stored before fork(), which orders it before this load) */
	if (__atomic_load_n(&s->map->state, __ATOMIC_RELAXED) == TB_STATE_STOPPED)
		return 1;
	uint32_t pid = __atomic_load_n(&s->map->consumer_pid, __ATOMIC_RELAXED);
	if (pid == 0)
		return 0;
	uint64_t now = tb_mono_ns();
	/* relaxed: a private cache; racing threads store equally good values */
	uint64_t seen = __atomic_load_n(&s->cons_seen, __ATOMIC_RELAXED);
	uint64_t at = __atomic_load_n(&s->cons_checked_ns, __ATOMIC_RELAXED);
	if ((seen >> 1) == pid && now - at < CONSUMER_CHECK_NS)
		return (int)(seen & 1);
	int gone = !tb_pid_alive(pid);
	__atomic_store_n(&s->cons_seen, (uint64_t)pid << 1 | (uint64_t)gone, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cons_checked_ns, now, __ATOMIC_RELAXED);
	return gone;
}

/* Block mode: wait until the consumer moves tail, up to *left_ns. Returns
 * 0 to retry, -ETIMEDOUT when the budget is spent. */
static int wait_for_consumer(struct ring_ref *r, uint64_t *left_ns)
{
	struct tb_ctl *c = r->ctl;
	if (*left_ns == 0)
		return -ETIMEDOUT;
	uint32_t seen = __atomic_load_n(&c->tail_futex, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->waiters, 1, __ATOMIC_RELAXED);
	/* pairs with the fence in tb_ring_release() between its tail_futex
	 * bump and its load of waiters */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t t0 = tb_mono_ns();
	tb_futex_wait(&c->tail_futex, seen, *left_ns);
	uint64_t spent = tb_mono_ns() - t0;
	*left_ns = spent >= *left_ns ? 0 : *left_ns - spent;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* counters                                                                */
/* ---------------------------------------------------------------------- */

static void count_on(struct ring_ref *r, size_t off, uint64_t n)
{
	uint64_t *ctr = (uint64_t *)((uint8_t *)r->ctl + off);
	if (!r->rseq) {
		/* fallback: the caller owns the ring, or the counter is only
		 * ever updated atomically (lost_busy) */
		__atomic_fetch_add(ctr, n, __ATOMIC_RELAXED);
		return;
	}
	struct tb_rseq_abi *rs = tb_rseq_area_at(r->s->rseq_off);
	for (int i = 0; i < 1000; i++) {
		int cpu = tb_rseq_cpu();
		if (cpu != (int)r->cpu) {
			/* migrated: count on the CPU we are on now (the stream
			 * does not matter for a lost count, the total does) */
			if (cpu < 0 || (unsigned)cpu >= r->s->ncpus)
				break;
			ring_ref(r, r->s, r->ch, (unsigned)cpu);
			ctr = (uint64_t *)((uint8_t *)r->ctl + off);
		}
		if (tb_rseq_add(rs, r->cpu, ctr, n) == 0)
			return;
	}
	/* abort storm (a debugger single-stepping?): count atomically rather
	 * than lose the count */
	__atomic_fetch_add(ctr, n, __ATOMIC_RELAXED);
}

void tb_count(struct tb_session *s, unsigned ch, size_t off, uint64_t n)
{
	struct ring_ref r;
	int cpu = s->protocol == TB_PROTO_RSEQ ? tb_rseq_cpu() : sched_getcpu();
	if (cpu < 0 || (unsigned)cpu >= s->ncpus)
		cpu = 0;
	ring_ref(&r, s, ch, (unsigned)cpu);
	count_on(&r, off, n);
}

/* ---------------------------------------------------------------------- */
/* the rseq protocol                                                       */
/* ---------------------------------------------------------------------- */

#define MAX_TRIES 10000 /* bounded retries; then fail-stop for this event */

/*
 * In a discard channel, a record the fast path did not write: when it cannot
 * fit in the current packet of this CPU's ring even with a compact header
 * (the fast path's own test) and the next sub-buffer is still the
 * consumer's (prepare_switch's test, TB_SW_FULL), the slow path could only
 * count it lost: it is counted here, on the ring of the CPU we are on, by
 * the counter cs.  Returns 1 counted, 0 otherwise (it may fit, the ring is
 * not full, migrated, aborted): the slow path decides.  No system call.
 */
static int drop_if_full(struct tb_session *s, unsigned ch, uint32_t len)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	if (cv->mode != TB_MODE_DISCARD)
		return 0;
	struct tb_rseq_abi *rs = tb_rseq_area_at(s->rseq_off);
	uint32_t cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED); /* our own area, as in tb_append_fast */
	if (cpu >= s->ncpus)
		return 0;
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	/* relaxed: only this CPU's writers store head, and we are one of
	 * them; a head that moves after this load (we are preempted, another
	 * writer switches) makes this a drop the slow path might have
	 * written: a drop decided from a stale view, as a stale tail makes one
	 * in prepare_switch() */
	uint64_t H = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	uint64_t S = cv->sb_size, Q = (H & ~(S - 1)) + S;
	if (H == 0 || (H & (S - 1)) + TB_COMPACT_HDR_SIZE + (cv->vtid ? TB_VTID_SIZE : 0) + len < S)
		return 0;
	/* acquire, as in prepare_switch(): pairs with the consumer's release
	 * store of tail in tb_ring_release() */
	uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
	if (Q - tail < cv->ring_mask + 1)
		return 0;
	return tb_rseq_add(rs, cpu, &c->lost_full, 1) == 0;
}

static __attribute__((noinline)) int append_rseq_slow(struct tb_session *s, unsigned ch, uint32_t id,
							 const void *payload, uint32_t len);

static int append_rseq_slow_(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len);

/* The slow paths may make system calls (futex, sched_getcpu, gettid): a
 * tracer called from signal handlers must leave errno as it found it. */
static __attribute__((noinline)) int append_rseq_slow(struct tb_session *s, unsigned ch, uint32_t id,
							 const void *payload, uint32_t len)
{
	int saved = errno;
	int rc = append_rseq_slow_(s, ch, id, payload, len);
	errno = saved;
	return rc;
}

static int append_rseq_slow_(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_rseq_abi *rs = tb_rseq_area_at(s->rseq_off);
	uint64_t stage_buf[STAGE_MAX / 8 + 1];
	struct prep p;
	p.stage = stage_buf;
	uint64_t block_left = cv->block_timeout_ns;
	int escape_on = cv->attribution == TB_ATTR_ESCAPE;
	uint32_t tid = escape_on ? tb_self_tid() : 0;
	uint32_t vtid = cv->vtid ? tb_self_tid() : 0;
	uint32_t ctx = cv->vtid ? TB_VTID_SIZE : 0;
	struct ring_ref r;
	if (escape_on || cv->vtid)
		name_if_due(s, ch); /* its own append, before this record */

	for (int tries = 0; tries < MAX_TRIES; tries++) {
		int cpu = tb_rseq_cpu();
		if (cpu < 0 || (unsigned)cpu >= s->ncpus)
			break;
		ring_ref(&r, s, ch, (unsigned)cpu);

		/* after an abort, or a packet switch: the fast cs again */
		if (tries && r.ts_in_cs && id <= TB_COMPACT_ID_MAX) {
			struct tb_fast_args fa = { payload, len, id, tid, vtid };
			const struct tb_fast_ring *fr = &s->fast[(size_t)ch * s->ncpus + (unsigned)cpu];
			int rc = cv->vtid ? tb_rseq_fast_append_vtid(rs, (uint32_t)cpu, fr, &fa)
					  : tb_rseq_fast_append(rs, (uint32_t)cpu, fr, &fa);
			if (rc == 0)
				return 0;
			if (rc == 2) {
				tb_aborts++;
				continue;
			}
		}

		/* slow path: prepare, then commit with tb_rseq_commit() */
		struct tb_state st;
		tb_state_read(r.ctl, &st, 0);
		uint64_t ts = r.ts_in_cs ? st.ts : tb_clock_read(s->clock_kind);
		if (ts < st.ts)
			ts = st.ts; /* per-CPU streams never go back */
		uint64_t o = st.head & (cv->sb_size - 1);
		int escape = escape_on && st.tid != tid;
		uint32_t total = record_bytes(escape, r.ts_in_cs, ctx, id, ts, st.ts, len);
		int need_switch = st.head == 0 || !room_ok(o, total, cv->sb_size);
		if (need_switch) {
			int sw = prepare_switch(&r, &st, ts, &p);
			if (sw == TB_SW_FULL) {
				if (cv->mode == TB_MODE_BLOCK && consumer_gone(s)) {
					count_on(&r, offsetof(struct tb_ctl, lost_nocons), 1);
					return -ENOSPC;
				}
				if (cv->mode == TB_MODE_BLOCK) {
					if (wait_for_consumer(&r, &block_left) == 0)
						continue;
					count_on(&r, offsetof(struct tb_ctl, lost_timeout), 1);
					return -ETIMEDOUT;
				}
				count_on(&r, offsetof(struct tb_ctl, lost_full), 1);
				return -ENOSPC;
			}
			tb_inject(TB_INJ_SWITCH_PREPARED);
			int rc = tb_rseq_commit(rs, (uint32_t)cpu, &p.a);
			if (rc == 2)
				tb_aborts++;
			if (rc == 0)
				populate_first_lap(&r, p.a.newhead);
			if (rc == 0 && st.head)
				maybe_wake_consumer(&r, p.a.newhead);
			continue; /* now append into the new packet */
		}
		prepare_record(&r, &st, escape, id, ts, payload, len, total, &p);
		tb_inject(TB_INJ_RECORD_PREPARED);
		int rc = tb_rseq_commit(rs, (uint32_t)cpu, &p.a);
		if (rc == 0)
			return 0;
		if (rc == 2)
			tb_aborts++;
	}
	/* fail-stop for this event: count it rather than spin forever */
	tb_count(s, ch, offsetof(struct tb_ctl, lost_busy), 1);
	return -EBUSY;
}

/* ---------------------------------------------------------------------- */
/* the fallback protocol                                                   */
/* ---------------------------------------------------------------------- */

/* `tok` is tb_owner_token(): (start time stamp << 32) | tid. */
static int own(struct tb_ctl *c, uint64_t tok)
{
	uint64_t zero = 0;
	/* Acquire pairs with the release in unown(): the previous owner's
	 * stores to the ring and the state are visible to us. */
	return __atomic_compare_exchange_n(&c->owner, &zero, tok, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void unown(struct tb_ctl *c)
{
	__atomic_store_n(&c->owner, 0, __ATOMIC_RELEASE);
}

/* Append to an owned ring with plain stores.  Returns 0, -ENOSPC (full),
 * 1 (block mode: full, caller waits and retries). */
static int append_owned(struct ring_ref *r, uint32_t id, const void *payload, uint32_t len, struct prep *p)
{
	const struct tb_chan_view *cv = r->cv;
	int escape_on = cv->attribution == TB_ATTR_ESCAPE;
	uint32_t tid = escape_on ? tb_self_tid() : 0;
	for (int step = 0; step < 3; step++) {
		struct tb_state st;
		tb_state_read(r->ctl, &st, 0);
		uint64_t ts = tb_clock_read(r->s->clock_kind);
		if (ts < st.ts)
			ts = st.ts;
		int escape = escape_on && st.tid != tid;
		uint32_t total = record_bytes(escape, 0, cv->vtid ? TB_VTID_SIZE : 0, id, ts, st.ts, len);
		uint64_t o = st.head & (cv->sb_size - 1);
		if (st.head == 0 || !room_ok(o, total, cv->sb_size)) {
			if (prepare_switch(r, &st, ts, p) == TB_SW_FULL)
				return cv->mode == TB_MODE_BLOCK ? 1 : -ENOSPC;
			tb_inject(TB_INJ_SWITCH_PREPARED);
			commit_plain(&p->a);
			populate_first_lap(r, p->a.newhead);
			if (st.head)
				maybe_wake_consumer(r, p->a.newhead);
			continue;
		}
		prepare_record(r, &st, escape, id, ts, payload, len, total, p);
		tb_inject(TB_INJ_RECORD_PREPARED);
		commit_plain(&p->a);
		return 0;
	}
	return -ENOSPC; /* unreachable: a fresh packet always fits a checked record */
}

/* CPUs of this machine, read once (sysconf reads /sys: not per event). */
static unsigned online_cpus(void)
{
	static unsigned n;
	unsigned v = __atomic_load_n(&n, __ATOMIC_RELAXED);
	if (!v) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		v = c > 0 ? (unsigned)c : 1;
		__atomic_store_n(&n, v, __ATOMIC_RELAXED);
	}
	return v;
}

static int append_fallback_(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len);

static int append_fallback(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len)
{
	int saved = errno; /* as append_rseq_slow() */
	int rc = append_fallback_(s, ch, id, payload, len);
	errno = saved;
	return rc;
}

static int append_fallback_(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	uint64_t stage_buf[STAGE_MAX / 8 + 1];
	struct prep p;
	p.stage = stage_buf;
	uint64_t tok = tb_owner_token();
	uint32_t tid = (uint32_t)tok;
	uint64_t block_left = cv->block_timeout_ns;
	if (cv->attribution == TB_ATTR_ESCAPE || cv->vtid)
		name_if_due(s, ch); /* its own append, before this record (no ring owned yet) */
	/* first choice: the CPU's slot among the slots of this CPU (there are
	 * several per CPU in a fallback session), picked by thread id so that
	 * threads preempted while owning a slot do not all block the same one */
	int cpu = sched_getcpu();
	unsigned ncpu = online_cpus();
	if (cpu < 0)
		cpu = 0;
	if (ncpu < 1 || ncpu > s->ncpus)
		ncpu = s->ncpus;
	/* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): s->ncpus >= 1 (tb_map_validate), so ncpu >= 1 */
	unsigned per = s->ncpus / ncpu;
	int cpu0 = (int)(((unsigned)cpu % ncpu) * per + (per ? tid % per : 0));
	struct ring_ref r;
	for (;;) {
		unsigned i;
		for (i = 0; i < s->ncpus; i++) {
			unsigned slot = ((unsigned)cpu0 + i) % s->ncpus;
			ring_ref(&r, s, ch, slot);
			if (own(r.ctl, tok))
				break;
		}
		if (i == s->ncpus) {
			/* every slot owned (nested signal handlers, or dead owners):
			 * never wait, count */
			/* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): s->ncpus >= 1 (tb_map_validate) */
			struct tb_ctl *c = tb_ctl_of(s, ch, (unsigned)cpu0 % s->ncpus);
			__atomic_fetch_add(&c->lost_busy, 1, __ATOMIC_RELAXED);
			return -EBUSY;
		}
		int rc = append_owned(&r, id, payload, len, &p);
		if (rc == -ENOSPC) /* atomic: other processes read the counter */
			__atomic_fetch_add(&r.ctl->lost_full, 1, __ATOMIC_RELAXED);
		unown(r.ctl);
		if (rc == 1 && consumer_gone(s)) {
			__atomic_fetch_add(&r.ctl->lost_nocons, 1, __ATOMIC_RELAXED);
			return -ENOSPC;
		}
		if (rc != 1)
			return rc;
		if (wait_for_consumer(&r, &block_left) != 0) {
			__atomic_fetch_add(&r.ctl->lost_timeout, 1, __ATOMIC_RELAXED);
			return -ETIMEDOUT;
		}
	}
}

/* ---------------------------------------------------------------------- */
/* entry points                                                            */
/* ---------------------------------------------------------------------- */

/* tb_append() and tb_append_after_fast(): fast = 0 when the caller has
 * just tried tb_append_fast() */
static inline __attribute__((always_inline)) int append(struct tb_session *s, unsigned ch, uint32_t id,
							const void *payload, uint32_t len, int fast)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	/* the largest [escape] + extended record (each header followed by its
	 * context on a vtid channel) must fit an empty packet: one bound per
	 * channel, computed at attach (tb_chan_max_payload) */
	if (len > cv->max_payload) {
		tb_count(s, ch, offsetof(struct tb_ctl, lost_toobig), 1);
		return -ENOSPC;
	}
	if (s->protocol != TB_PROTO_RSEQ)
		return append_fallback(s, ch, id, payload, len);
	if (fast) /* the fast path, then this again with fast = 0 (append.h) */
		return tb_append_inline(s, ch, id, payload, len);
	if (drop_if_full(s, ch, len))
		return -ENOSPC;
	return append_rseq_slow(s, ch, id, payload, len);
}

int tb_append(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len)
{
	return append(s, ch, id, payload, len, 1);
}

int tb_append_after_fast(struct tb_session *s, unsigned ch, uint32_t id, const void *payload, uint32_t len)
{
	return append(s, ch, id, payload, len, 0);
}

/*
 * Whether the owner `o` of a fallback ring (a tb_owner_token() value, or
 * anything a hostile process wrote) is gone, so that a flusher may take the
 * ring over.  A slow path (flushers only): system calls are fine here.
 *   - a tid no thread can have (0, or above the kernel's PID_MAX_LIMIT):
 *     gone (and never given to kill(): a negative pid names a group);
 *   - kill(tid, 0) fails with ESRCH: no such thread, gone;
 *   - the thread with that tid started at another time than the owner
 *     recorded: the tid was reused by a new thread, the owner is gone;
 *   - no start time recorded (0: /proc unreadable for the owner, or an older
 *     library), or none readable now: only kill() can tell, and it said
 *     alive: not gone (the next visit decides again).
 */
static int owner_gone(uint64_t o)
{
	uint32_t tid = (uint32_t)o, stamp = (uint32_t)(o >> 32);
	if (o == 0)
		return 0; /* free: own() takes it */
	if (tid == 0 || tid > (1u << 22))
		return 1;
	if (kill((pid_t)tid, 0) != 0 && errno == ESRCH)
		return 1;
	if (stamp == 0)
		return 0;
	uint32_t now = tb_thread_stamp(tid);
	return now != 0 && now != stamp;
}

int tb_switch_flush(struct tb_session *s, unsigned ch, unsigned cpu, int now_mode, uint64_t now_ns,
		    uint64_t only_pkt)
{
	struct ring_ref r;
	ring_ref(&r, s, ch, cpu);
	struct tb_ctl *c = r.ctl;
	uint64_t stage_buf[STAGE_MAX / 8 + 1];
	struct prep p;
	p.stage = stage_buf;
	int owned = 0;
	if (!r.rseq) {
		uint64_t tok = tb_owner_token();
		if (!own(c, tok)) {
			uint64_t o = __atomic_load_n(&c->owner, __ATOMIC_RELAXED);
			/* a writer killed while owning: take the ring over (its
			 * partial stores are all past head or in the _before /
			 * _after state, which stays consistent).  The CAS from
			 * the exact value judged gone: a ring released and taken
			 * again meanwhile is not taken from its new owner.
			 * Acquire as in own(). */
			if (!owner_gone(o) ||
			    !__atomic_compare_exchange_n(&c->owner, &o, tok, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return -EBUSY;
		}
		owned = 1;
	}
	int ret = 0;
	for (int tries = 0; tries < 1000; tries++) {
		if (r.rseq && tb_rseq_cpu() != (int)cpu)
			return -EAGAIN;
		struct tb_state st;
		tb_state_read(c, &st, 0);
		if (st.head == 0)
			break;
		uint64_t S = r.cv->sb_size, P = st.head & ~(S - 1);
		if (only_pkt != UINT64_MAX && P != only_pkt)
			break; /* the producers left that packet: nothing of it to close */
		/* the opening loss total from the descriptor, not from the packet
		 * context (an aborted switch may have written that already) */
		unsigned pidx = (unsigned)((P >> r.cv->sb_shift) & (r.cv->sb_count - 1));
		uint64_t disc_open = __atomic_load_n(&r.desc[pidx].disc_begin, __ATOMIC_RELAXED);
		int has_records = st.head - P > TB_PACKET_HEADER_SIZE;
		uint64_t lost[TB_LOSS_NPRODUCER];
		int new_losses = tb_state_losses(c, NULL, lost) != disc_open;
		if (!has_records && !new_losses)
			break;
		if (now_mode == 0) { /* TB_FLUSH_IF_IDLE: consumer-private fields */
			if (c->flush_head != st.head) {
				c->flush_head = st.head;
				c->flush_ns = now_ns;
				break;
			}
			if (now_ns - c->flush_ns < r.cv->flush_period_ns)
				break;
		}
		uint64_t ts = r.ts_in_cs ? st.ts : tb_clock_read(s->clock_kind);
		if (ts < st.ts)
			ts = st.ts;
		if (prepare_switch(&r, &st, ts, &p) == TB_SW_FULL)
			break; /* the consumer must drain first */
		tb_inject(TB_INJ_SWITCH_PREPARED);
		if (r.rseq) {
			int rc = tb_rseq_commit(tb_rseq_area_at(s->rseq_off), cpu, &p.a);
			if (rc)
				continue;
		} else {
			commit_plain(&p.a);
		}
		maybe_wake_consumer(&r, p.a.newhead);
		c->flush_head = p.a.newhead;
		c->flush_ns = now_ns;
		ret = 1;
		break;
	}
	if (owned)
		unown(c);
	return ret;
}
