/* SPDX-License-Identifier: MIT */
/*
 * engine_relay_impl.h - what the relay output's two files share (src/consumer/
 * only): engine_relay.c, the output (packets, metadata, beacons, the start
 * and the end), and engine_relay_send.c, the send queue (its arena and send
 * pool) and the sender thread.  Both work on one struct tb_relay_out under
 * its one lock: a packet moves from queued to unconfirmed to confirmed or
 * not sent, and each step's counts are the others' invariants.  The output
 * calls into the queue; the queue and the sender never call the output.
 */
#ifndef TB_CONSUMER_ENGINE_RELAY_IMPL_H
#define TB_CONSUMER_ENGINE_RELAY_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "consumer/engine_impl.h"
#include "relay/relay.h"

/* Bytes of packets the queue holds at most (metadata is not counted: it is
 * never dropped, and bounded by the registry). */
#define TB_RELAY_QUEUE (16u << 20)
/* Packets sent but not yet confirmed written: from this many the sender
 * asks after each packet; at TB_RELAY_WINDOW it sends nothing more until
 * the daemon wrote some (what a cut connection can leave uncertain). */
#define TB_RELAY_CONFIRM 4u
#define TB_RELAY_WINDOW 8u
/* An idle sender asks about the packets it sent (and waits for the answer)
 * this long after the last one, not at once: in a steady stream the next
 * packets come first, and the questions go with their index entries
 * (asked at once, a paced recording paid a question, a wait for its answer
 * and a wake-up per packet).  The price: in a steady stream 2-7 packets
 * are unconfirmed at any time, not 0-1, and a connection cut then counts
 * them as not sent though the daemon may have written them (the
 * conservative side, at most TB_RELAY_WINDOW; a question after every
 * packet, in its index entry's send, made it ~4 for 9 % more CPU).  At the
 * end it asks at once. */
#define TB_RELAY_IDLE_ASK_NS 100000000ull
/* What the end of the recording gives the sender, whatever the relay does. */
#define TB_RELAY_CLOSE_NS 1000000000ull
/* Live sessions: how long the relay session stays open after the last
 * packet was written and every stream told "nothing more" (linger()). */
#define TB_RELAY_LINGER_NS 1000000000ull

enum { RQ_PACKET, RQ_META, RQ_BEACONS };

struct rq_item {
	struct rq_item *next;
	int kind;
	unsigned idx;          /* RQ_PACKET: its stream */
	uint64_t events;       /* RQ_PACKET: events it holds */
	uint64_t lost_before;  /* RQ_PACKET: events of its stream not sent since the previous one queued */
	uint64_t ts;           /* RQ_BEACONS: the promise's time */
	uint32_t nev_from, nev_to; /* RQ_META: the classes its text adds */
	size_t len;            /* bytes of data (counted in the queue's bound for packets) */
	uint8_t *data;         /* RQ_PACKET: header + content, in the arena or a pool slot; else inl */
	size_t off;            /* RQ_PACKET: data's offset in the arena */
	int slot;              /* RQ_PACKET: its pool slot, or -1 (in the arena), or SLOT_RING */
	const uint8_t *rest;   /* RQ_PACKET, SLOT_RING: its content in the ring (data: a copy of its header) */
	int hold;              /* RQ_PACKET, SLOT_RING: its hold on the sub-buffer (tb_engine_hold()) */
	uint8_t inl[];         /* RQ_META: text; RQ_BEACONS: a state per stream */
};

/* RQ_BEACONS' state per stream */
enum { RB_SKIP = 0, RB_IDLE = 1, RB_BUSY = 2 };

struct tb_relay_out {
	struct tb_engine *e;
	struct tb_relay *r;      /* the sender thread's only (tb_relay_cap() excepted) */
	pthread_t thr;
	int running;
	pthread_mutex_t lock;    /* everything below */
	pthread_cond_t cond;     /* CLOCK_MONOTONIC: an item, stop, or the retry time */
	struct rq_item *head, **tail;
	uint64_t bytes;          /* packets' bytes queued or in the sender's hands */
	/* The packets' bytes live in one arena of TB_RELAY_QUEUE bytes, taken
	 * and given back in queue order (a ring): a malloc() per packet of
	 * 256 KiB is an mmap(), its pages faulted in and zeroed, then an
	 * munmap(), which cost more than the copy itself.  Live: [a_head,
	 * a_tail), or [a_head, a_end) + [0, a_tail) when wrapped. */
	uint8_t *arena;
	size_t a_head, a_tail, a_end;
	int a_wrapped;
	unsigned a_live;         /* packets in it */
	/* The send pool, npool slots of slot_size bytes that the
	 * drain thread copies packets into out of their rings (engine_run.c,
	 * tb_engine_relay_slot()): validated there, their header written in
	 * place, then queued as they are (relay_packets()) and sent from the
	 * slot; the sender gives a slot back once its packet is sent or
	 * dropped.  Each slot is free, the drain thread's (copied into, not
	 * yet handed over: the batch's reap hands it, or gives it back), or
	 * queued; free ones are listed in pool_free[0..nfree). */
	uint8_t *pool;
	size_t slot_size;
	unsigned npool, nfree;
	unsigned *pool_free;
	uint8_t *pool_state;
	int stop;
	uint64_t *pending;       /* per stream: events not queued since its last packet queued */
	uint64_t *tail_lost;     /* per stream: events lost to the relay after its last packet sent */
	/* per stream, packets sent in this relay session the daemon has not yet
	 * said it wrote: count, events, bytes, and the losses their headers
	 * carried (the sender thread's only, as o->r) */
	uint64_t *unc_packets, *unc_events, *unc_bytes, *unc_lost_before;
	uint64_t unc_total;
	/* per stream, the losses only an earlier relay session's packets told
	 * (their running totals): a new session's announcing packet carries 0
	 * (a count babeltrace2 can tell), so this session tells them only once
	 * one of its packets, which carries the whole total, is confirmed
	 * written; until then they count as untold by the last session (the
	 * sender thread's only, as o->r) */
	uint64_t *told_before;
	/* the packets counted above, in the order sent (at most TB_RELAY_WINDOW:
	 * the sender sends no more then): an answer confirms those of its stream
	 * up to the number it was asked about */
	struct unc_pkt {
		unsigned idx;
		uint64_t seq, events, bytes, lost_before;
	} unc[TB_RELAY_WINDOW];
	unsigned unc_n;
	uint32_t q_nev;          /* classes the metadata queued so far describes (0: none yet) */
	char *full;              /* the whole metadata text as last queued (for a new relay session) */
	size_t full_len;
	uint32_t full_nev;
	uint64_t retry_ns, backoff_ns;
	uint64_t beacon_ns;      /* monotonic time of the last beacon round (drain thread) */
	uint64_t kbeacon_ts;     /* the kernel streams' last beacon (session ticks; drain thread) */
	int lingered;            /* the end's linger() was done (sender thread) */
	uint64_t sent_ns;        /* monotonic time of the last packet sent (sender thread) */
	uint32_t live_us;
	struct tb_relay_stats st;
};

/* A pool slot's state (tb_relay_out.pool_state) */
enum { SLOT_FREE, SLOT_DRAIN, SLOT_QUEUED };
/* rq_item.slot of a packet sent from the ring itself (--trust-writers) */
#define SLOT_RING (-2)

/* engine_relay_send.c: the queue (under o->lock unless said) and the sender thread */
/* A packet (or items of a lost relay) not sent: counted. */
TB_HIDDEN void tb_rq_not_sent(struct tb_relay_out *o, unsigned idx, uint64_t events, int carried_later);
/* Room for len bytes at the arena's tail: their offset, or -1 (full). */
TB_HIDDEN ptrdiff_t tb_rq_arena_take(struct tb_relay_out *o, size_t len);
/* The pool slot a packet (header at p, then rest) is in when the drain thread copied it there and
 * has not handed it over yet; else -1. */
TB_HIDDEN int tb_rq_slot_of(const struct tb_relay_out *o, const void *p, const void *rest, size_t rest_len);
/* Appends an item. */
TB_HIDDEN void tb_rq_enqueue(struct tb_relay_out *o, struct rq_item *it);
/* Wakes the sender for items enqueued (without o->lock). */
TB_HIDDEN void tb_rq_kick(struct tb_relay_out *o);
/* The sender thread (arg: the struct tb_relay_out). */
TB_HIDDEN void *tb_relay_sender_main(void *arg);

#endif
