/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the consumer side of the ring protocol (library private).
 *
 * These are the only operations a consumer (the recorder, snapshot,
 * recover, the tests' decoder) performs on a ring.  They implement the
 * "consume", "flush" and "snapshot" steps of docs/DESIGN.md; the producer
 * side (append, switch) lives in src/producer/.
 *
 * Positions are free-running byte counts: sub-buffer index of `pos` is
 * (pos >> sb_shift) & (sb_count - 1), its packet_seq_num is pos >> sb_shift.
 */
#ifndef TB_RING_RING_H
#define TB_RING_RING_H

#include <stdint.h>

#include "core/view.h"

/* What the validator learned of a packet (all values already checked). */
struct tb_packet_info {
	uint64_t seq;              /* packet_seq_num */
	uint64_t ts_begin, ts_end;
	uint64_t content_bytes;    /* header included */
	uint64_t packet_bytes;     /* == sb_size */
	uint64_t events_discarded; /* running total */
	uint32_t cpu;
	uint64_t events;           /* records (escape records excluded): walked, or per tb_sbdesc */
	uint64_t cnt_begin;        /* events committed to the ring before this packet (tb_sbdesc) */
	uint64_t cnt_end;          /* ... before its end: cnt_end - cnt_begin - events were cut as invalid */
	uint64_t lost[TB_LOSS_NCAUSES]; /* running totals by cause as the producer closed it (consumer causes 0) */
};

/*
 * tb_ring_ready - is the sub-buffer at the consumer position complete?
 * Discard and block modes.  Any process, any CPU.
 * Return: 1 and *pos = its position; 0 nothing complete; -EBADMSG when the
 * control block holds impossible values (head behind tail, head more than a
 * ring ahead); the consumer then reports it and calls tb_ring_resync().
 */
TB_HIDDEN int tb_ring_ready(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t *pos);
/* The same, returning how many complete sub-buffers follow one another
 * from *pos (0: none; -EBADMSG as tb_ring_ready()). */
TB_HIDDEN int tb_ring_ready_n(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t *pos);

/*
 * tb_ring_copy - copy the sub-buffer at `pos` to dst (sb_size bytes), then
 * validate the copy: magic, uuid, stream id, instance, seq == pos >> shift,
 * cpu, sizes (content <= packet == sb_size, content >= header), timestamps
 * (begin <= end).  Never reads shared memory outside the ring.
 * Return: 0 and *info; -EBADMSG (tb_errmsg() says which field is wrong:
 * skip the packet, it is still released).
 */
TB_HIDDEN int tb_ring_copy(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos,
			   void *dst, struct tb_packet_info *info);

/*
 * tb_ring_in_place - the same checks as tb_ring_copy() on the sub-buffer at
 * `pos` where it is (*pkt: its first byte in the mapping), without a copy:
 * for a consumer that trusts the session's writers (record --trust-writers)
 * not to change a packet once committed.  Its header is read once (what the
 * checks passed is what *info says); a writer that changes the packet
 * afterwards can make what the consumer writes or sends unreadable, never
 * make it read outside the sub-buffer, which stays the consumer's until it
 * is released.  Return as tb_ring_copy().
 */
TB_HIDDEN int tb_ring_in_place(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, uint8_t **pkt,
			       struct tb_packet_info *info);

/* Hand the sub-buffer at `pos` back to the producers (discard/block modes). */
TB_HIDDEN void tb_ring_release(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos);

/* After -EBADMSG from tb_ring_ready: move the consumer position to a sane place; returns sub-buffers skipped. */
TB_HIDDEN uint64_t tb_ring_resync(struct tb_session *s, unsigned ch, unsigned cpu);

enum {
	TB_FLUSH_IF_IDLE = 0, /* only if no record was added since the previous visit and flush_period passed */
	TB_FLUSH_NOW = 1,     /* close the current packet if it holds anything new */
};

/*
 * tb_ring_flush - close the current partial sub-buffer of (ch, cpu) so that
 * the consumer can take it (the stale-data timer of the seeds).  Closes it
 * only if it holds records, or if the loss counters grew since it opened.
 * Under TB_PROTO_RSEQ the caller must run on `cpu` (pin the thread): the
 * switch is an rseq critical section like a producer's.
 * Return: 1 closed; 0 nothing to do (empty, not idle, or ring full: the
 * consumer must drain first); -EAGAIN not running on `cpu` (retry after
 * pinning), -EBUSY (fallback: ring owned by a live writer; retry later).
 */
TB_HIDDEN int tb_ring_flush(struct tb_session *s, unsigned ch, unsigned cpu, int how, uint64_t now_ns);

/*
 * The live period (docs/DESIGN.md, "Live period"): the flusher of a CPU
 * closes a partial packet whose records may have waited `live_ns`, whatever
 * the rate it is written at, so that every record is in a closed packet
 * within the live period.  What it knows of a ring is its own, in process
 * memory (nothing shared, nothing hostile): the packet it saw at its last
 * visit and a time before which none of that packet's records was written.
 *
 * The age of the oldest record of the open packet P is bounded from above
 * by `now - ref_ns`:
 *   - a visit that sees P without records: every record of P comes later
 *     (ref_ns = now);
 *   - a visit that first sees P with records: P was opened after the
 *     previous visit, which saw another packet (or none): ref_ns = that
 *     visit's time.
 * P is closed at the first visit with now - ref_ns >= live_ns, never at the
 * visit that first saw it with records, and the visit after that one comes
 * a quarter period later: a packet closed from outside held records for at
 * least live_ns / 4 whatever the load (a late flusher closes later, never
 * sooner).  Visits are live_ns / 4 apart while a packet holds records and
 * live_ns / 2 while the ring holds none, so on time the oldest record of a
 * closed packet waited between live_ns / 2 and live_ns: a packet that fills
 * sooner (any producer faster than about two packets per live period) is
 * never cut.  A ring with no record since its last close is read (head),
 * never written: no packet for an idle CPU.
 */
struct tb_live_ring {
	uint64_t pkt;    /* position of the packet seen at the last visit (UINT64_MAX: none yet) */
	uint64_t ref_ns; /* no record of that packet is older than this (tb_mono_ns) */
	uint64_t seen_ns;/* time of the last visit */
};

/* Before the first visit (the flusher's start): a ring found with records
 * then may hold records of any age: closed at that visit. */
static inline void tb_live_ring_init(struct tb_live_ring *lv)
{
	lv->pkt = UINT64_MAX;
	lv->ref_ns = 0;
	lv->seen_ns = 0;
}

/*
 * tb_ring_flush_live - the flusher's visit of ring (ch, cpu) at `now_ns`
 * under a live period of `live_ns` (> 0): closes the open packet when its
 * records may be a live period old, with the switch of tb_ring_flush()
 * (same critical section as a producer's, same rules: pinned under rseq,
 * the owner word in the fallback); a packet the producers left meanwhile
 * is not closed.  *next_ns: when the ring wants its next visit.
 * Return: as tb_ring_flush() (1 closed, 0 nothing to do now, -EAGAIN,
 * -EBUSY: *next_ns is then 1 ms away).
 */
TB_HIDDEN int tb_ring_flush_live(struct tb_session *s, unsigned ch, unsigned cpu, struct tb_live_ring *lv,
				 uint64_t now_ns, uint64_t live_ns, uint64_t *next_ns);

/*
 * tb_ring_snapshot - copy what ring (ch, cpu) holds now, oldest packet
 * first, while producers keep writing (overwrite mode; also works on a
 * discard ring).  Each sub-buffer is copied, then checked against its
 * sequence number and the head, so that one reused during the copy is
 * dropped (counted in *torn) and never given to `emit`.  The current
 * partial packet is closed in the copy (timestamp_end, content_size,
 * events_discarded from the counters) and emitted shorter than a
 * sub-buffer: its packet_size is its content rounded up to 8 bytes.
 * Every emitted packet has been walked record by record against the
 * registry and cut at the first record that is not provably valid.
 * `emit` is called once per good packet with a private buffer.
 * Return: packets emitted, or -errno (from emit).
 */
typedef int (*tb_packet_fn)(void *arg, const void *pkt, uint64_t len, const struct tb_packet_info *info);
TB_HIDDEN int tb_ring_snapshot(struct tb_session *s, unsigned ch, unsigned cpu, tb_packet_fn emit,
			       void *arg, uint64_t *torn);

/*
 * tb_ring_peek - the flight recorder's scan (src/consumer/flight_scan.c):
 * copy the records committed so far in the packet at position P of ring
 * (ch, cpu), from byte `from` of the packet on (at least its header), while
 * producers keep writing and lapping (overwrite mode).  buf (sb_size bytes)
 * gets the packet header and bytes [from, *end): *end is the content of a
 * closed packet, or where head is in the current one; *closed: head is past
 * P.  The copy is then checked as a snapshot checks one (sequence number and
 * head re-read after it): a packet reused meanwhile is never trusted.
 * info: seq, ts_begin, cnt_begin (events committed to the ring before P).
 * Return: 0; 1 P is no longer in the ring (overwritten before or during the
 * copy); 2 P is not opened yet; -EBADMSG its header is not this ring's
 * packet (damage: the caller skips it).
 */
TB_HIDDEN int tb_ring_peek(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t P, uint64_t from, uint8_t *buf,
			   uint64_t *end, int *closed, struct tb_packet_info *info);

/*
 * tb_ring_drain_dead - for a session whose producers are all gone (after
 * the command exited, or `recover`): emit every complete packet from the
 * consumer position on, then the current partial one closed like a
 * snapshot (packet_size = content).  Reads only: the consumer position is
 * not advanced, so it works on a read-only attach (recover).
 * Return: packets emitted or -errno.
 */
TB_HIDDEN int tb_ring_drain_dead(struct tb_session *s, unsigned ch, unsigned cpu, tb_packet_fn emit,
				 void *arg, uint64_t *bad);

/* Wake-up protocol (producers wake from the switch in append.c; the consumer
 * sleeps here).  Overwrite channels are not looked at: they are not drained
 * continuously.  Returns 1 when a ring has its watermark of full sub-buffers
 * ready (fewer wait for the producers' wake-up or the timeout), 0 after the
 * wait. */
TB_HIDDEN int tb_consumer_wait(struct tb_session *s, uint64_t timeout_ns);

#endif
