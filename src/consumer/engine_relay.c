/* SPDX-License-Identifier: MIT */
/*
 * engine_relay.c - the engine's side of the relay daemon (relay.c): what is
 * written to the trace directory is also sent, packet by packet, with the
 * metadata ahead of the packets that need it, and live beacons for idle
 * streams.
 *
 * Length: the queue, the sender, the confirmation window and the loss
 * accounting share one lock and one set of per-stream counts (a packet
 * moves from queued to unconfirmed to confirmed or not sent); split, each
 * part would need the others' invariants.
 *
 * The relay never holds the recorder.  The threads that write the local
 * copy (drain, writer, finish) only queue a packet in a bounded queue
 * (TB_RELAY_QUEUE bytes) and go on; a sender thread of its own takes the
 * queue in order and does every network call (relay.c: each with a
 * deadline).  The drain thread copies packets out of their rings straight
 * into the queue's send slots (tb_engine_relay_slot(): validated, written
 * to the local file and sent from there, no other copy); a packet from
 * elsewhere (the finish, the kernel thread, a full pool) is copied into the
 * queue's arena.  With --trust-writers there is no copy: the packet is
 * queued where it is in its ring (SLOT_RING, its header copied), and its
 * sub-buffer is held (tb_engine_hold()) until the sender sent or dropped
 * it: then a slow relay holds the producers, up to the queue's
 * TB_RELAY_QUEUE bytes (a full queue drops a packet, which frees it).
 * Otherwise a sub-buffer is released once its packet is in the file
 * (with -o) and queued: the queue is the recorder's, counted whatever
 * becomes of it; holding sub-buffers until the relay daemon wrote them
 * would let a slow relay hold the producers.  A full queue (a relay slower than the recording) or a lost
 * relay costs the relay's copy, never the local one: those packets are
 * counted as not sent and carried as lost_relay in the stream's next packet
 * sent.  The end of the recording gives the sender TB_RELAY_CLOSE_NS to
 * send what is queued and close the streams, whatever the relay does; what
 * it could not send by then is counted.  A live session whose relay took
 * everything then stays open TB_RELAY_LINGER_NS, every stream's last beacon
 * sent, for the viewers to take the last packets (linger(): lttng-relayd
 * cuts them off a closed stream).  Beacon rounds: relay_tick().
 *
 * A packet handed to the data connection is not yet on the relay daemon's
 * disk (a connection cut mid-packet loses it, and the daemon keeps the part
 * it got): it stays unconfirmed until the daemon says it wrote the stream's
 * last packet sent (DATA_PENDING, asked every TB_RELAY_CONFIRM packets
 * without waiting, in the same send as the packet's index entry: its
 * answer is read with the next packets', and waited for at
 * TB_RELAY_WINDOW, when the queue has been empty TB_RELAY_IDLE_ASK_NS and
 * at the end); the relay lost, the unconfirmed ones
 * are counted as not sent like the queued ones.  At most TB_RELAY_WINDOW
 * are in flight: a daemon that writes none of them within the relay's
 * timeout is lost (a stalled data path otherwise takes megabytes into the
 * sockets' buffers, which it may still write after the loss: counted as not
 * sent and in the relay's copy too).
 *
 * A lost relay is tried again after 1 s, then twice as long each time up to
 * 30 s; reconnected, it gets a new relay session (the whole metadata first)
 * whose packets carry every loss so far as lost_relay (its announcing ones:
 * 0); what the last session does not tell (told_before, tail_lost) the
 * summary counts.  Relay-only, the relay's copy is the trace: what it did
 * not get is lost, counted per stream (relay_unsent) by tb_engine_stats().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "consumer/engine_impl.h"
#include "relay/relay.h"
#include "ctf/ctf.h"

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

/* A packet (or items of a lost relay) not sent: counted; under o->lock. */
static void not_sent(struct tb_relay_out *o, unsigned idx, uint64_t events, int carried_later)
{
	struct tb_engine *e = o->e;
	o->st.lost_packets++;
	o->st.lost_events += events;
	if (!carried_later)
		o->tail_lost[idx] += events;
	/* relaxed: a statistic (engine_impl.h); the sender is its only writer
	 * once it runs, the other threads write it under o->lock too */
	uint64_t *u = tb_engine_unsent(e, idx);
	__atomic_store_n(u, *u + events, __ATOMIC_RELAXED);
}

/* The relay was just lost (sender thread, o->lock held): the packets it did
 * not confirm are not sent after all; said once, and the retry set. */
static void lost(struct tb_relay_out *o)
{
	struct tb_engine *e = o->e;
	for (unsigned i = 0; o->unc_total && i < tb_output_nstreams(e); i++) {
		if (!o->unc_packets[i])
			continue;
		o->st.packets -= o->unc_packets[i];
		o->st.bytes -= o->unc_bytes[i];
		o->st.lost_packets += o->unc_packets[i] - 1; /* not_sent counts one */
		/* their headers carried the losses before them: no header sent does now */
		o->tail_lost[i] += o->unc_lost_before[i];
		tb_relay_lost_events(o->r, i, o->unc_events[i]);
		not_sent(o, i, o->unc_events[i], 0);
		o->unc_packets[i] = o->unc_events[i] = o->unc_bytes[i] = o->unc_lost_before[i] = 0;
	}
	o->unc_total = 0;
	o->unc_n = 0; /* the questions in flight die with the connection */
	if (!o->st.alive)
		return;
	o->st.alive = 0;
	snprintf(o->st.error, sizeof o->st.error, "%s", tb_relay_error(o->r));
	if (o->stop) {
		/* the end's deadline (tb_relay_cap()), or a loss while finishing */
		tb_engine_warn(e, "%s: the recording ended before the relay took what was queued (counted as not "
				  "sent)", o->st.error);
		return;
	}
	tb_engine_warn(e, "%s: %s until it answers again (tried after 1 s, then less and less often)", o->st.error,
		       e->local ? "packets are written to the trace directory only (and counted as not sent)"
				: "packets are lost (no -o DIR: counted as lost to the relay)");
	o->backoff_ns = 1000000000ull;
	o->retry_ns = tb_mono_ns() + o->backoff_ns;
}

/* Room for len bytes at the arena's tail (under o->lock): their offset, or -1 (full). */
static ptrdiff_t arena_take(struct tb_relay_out *o, size_t len)
{
	if (!o->a_live)
		o->a_head = o->a_tail = o->a_end = 0, o->a_wrapped = 0;
	/* free: [a_tail, end) then [0, a_head) unwrapped; [a_tail, a_head) wrapped */
	size_t off = o->a_tail, room = o->a_wrapped ? o->a_head - o->a_tail : TB_RELAY_QUEUE - o->a_tail;
	if (room < len) {
		if (o->a_wrapped || o->a_head < len)
			return -1;
		/* the end's rest stays unused until the head passes it (wrapping
		 * earlier, to keep fewer pages in use, left only the bytes before
		 * the head free: a sender two packets behind found the queue full) */
		o->a_end = o->a_tail;
		o->a_wrapped = 1;
		off = 0;
	}
	o->a_tail = off + len;
	o->a_live++;
	return (ptrdiff_t)off;
}

/* Gives back the oldest packet's bytes (under o->lock): packets leave the
 * queue in the order they entered it. */
static void arena_give(struct tb_relay_out *o, const struct rq_item *it)
{
	o->a_head = it->off + it->len;
	o->a_live--;
	if (o->a_wrapped && o->a_head == o->a_end) {
		o->a_head = 0;
		o->a_wrapped = 0;
	}
}

enum { SLOT_FREE, SLOT_DRAIN, SLOT_QUEUED };
/* rq_item.slot of a packet sent from the ring itself (--trust-writers) */
#define SLOT_RING (-2)

/* A pool slot is free again (under o->lock). */
static void slot_put(struct tb_relay_out *o, unsigned k)
{
	o->pool_state[k] = SLOT_FREE;
	o->pool_free[o->nfree++] = k;
}

static void item_free(struct tb_relay_out *o, struct rq_item *it)
{
	if (it->kind == RQ_PACKET) {
		o->bytes -= it->len;
		if (it->slot >= 0)
			slot_put(o, (unsigned)it->slot);
		else if (it->slot == SLOT_RING) /* sent or dropped: its sub-buffer may go back to the producers */
			tb_engine_unhold(o->e, it->idx / o->e->s->ncpus, it->idx % o->e->s->ncpus, it->hold);
		else
			arena_give(o, it);
	}
	free(it);
}

/* Drops every queued item (the relay is lost, or the end came): packets counted. */
static void drop_queue(struct tb_relay_out *o)
{
	while (o->head) {
		struct rq_item *it = o->head;
		o->head = it->next;
		if (it->kind == RQ_PACKET) {
			/* its losses before it, and itself: carried by the stream's
			 * next packet sent (tb_relay_lost_events) if one comes */
			tb_relay_lost_events(o->r, it->idx, it->lost_before + it->events);
			o->tail_lost[it->idx] += it->lost_before;
			not_sent(o, it->idx, it->events, 0);
		}
		item_free(o, it);
	}
	o->tail = &o->head;
}

/* Sends one item (sender thread, without o->lock): 0, or -errno (lost). */
static int send_item(struct tb_relay_out *o, struct rq_item *it, uint32_t *sent_nev)
{
	struct tb_relay *r = o->r;
	switch (it->kind) {
	case RQ_PACKET: {
		struct tb_packet_header h;
		memcpy(&h, it->data, sizeof h);
		const uint8_t *rest = it->slot == SLOT_RING ? it->rest : it->data + sizeof h;
		return tb_relay_packet(r, it->idx, &h, it->len > sizeof h ? rest : NULL, it->len - sizeof h);
	}
	case RQ_META:
		if (it->nev_to <= *sent_nev)
			return 0; /* the whole text sent at the (re)connection holds it */
		if (it->nev_from != *sent_nev)
			return 0; /* cannot happen: a whole text is sent first, then increments in order */
		*sent_nev = it->nev_to;
		return tb_relay_metadata(r, (const char *)it->data, it->len);
	default:
		for (unsigned i = 0; i < it->len; i++)
			if (it->data[i] == RB_IDLE) {
				/* a tick earlier per stream: no two streams' inactivity
				 * messages alike (babeltrace2 warns that it cannot order them) */
				int rc = tb_relay_beacon(r, i, it->ts > i ? it->ts - i : 0);
				if (rc)
					return rc;
			}
		return 0;
	}
}

/* The answers that came (sender thread, without o->lock): every unconfirmed
 * packet whose number the daemon said it wrote up to is confirmed. */
static void take_answers(struct tb_relay_out *o)
{
	unsigned k = 0;
	for (unsigned j = 0; j < o->unc_n; j++) {
		const struct unc_pkt *u = &o->unc[j];
		if (tb_relay_written_upto(o->r, u->idx) < u->seq) {
			o->unc[k++] = *u;
			continue;
		}
		o->unc_total--;
		o->unc_packets[u->idx]--;
		o->unc_events[u->idx] -= u->events;
		o->unc_bytes[u->idx] -= u->bytes;
		o->unc_lost_before[u->idx] -= u->lost_before;
		o->told_before[u->idx] = 0; /* a packet written carries them too */
	}
	o->unc_n = k;
}

/*
 * Asks the relay daemon (sender thread, without o->lock) whether it wrote
 * the unconfirmed packets of every stream that has some and no question in
 * flight (tb_relay_ask_written(): the question is not waited for), then
 * takes the answers that came (how 0), or waits for the questions' answers
 * (1: to get below the window; 2: every packet, the queue being empty).
 * How 0 and 1 ask about the stream's packet before its last one: the daemon
 * reads the data connection after the control one, and the packet just
 * sent is seldom written yet (asking about it, nearly every answer said
 * "still coming").  *all: 1 when none is left unconfirmed.  0, or -errno.
 */
static int confirm(struct tb_relay_out *o, int how, int *all)
{
	int rc = 0;
	for (unsigned i = 0, n = tb_output_nstreams(o->e); !rc && o->unc_total && i < n; i++) {
		if (!o->unc_packets[i] || tb_relay_asking(o->r, i))
			continue;
		uint64_t last = 0, before = 0; /* the stream's last two unconfirmed packets */
		for (unsigned j = 0; j < o->unc_n; j++)
			if (o->unc[j].idx == i) {
				before = last;
				last = o->unc[j].seq;
			}
		rc = tb_relay_ask_written(o->r, i, how < 2 && before ? before : last);
	}
	if (!rc)
		rc = tb_relay_answers(o->r, how > 0);
	if (!rc)
		take_answers(o);
	*all = !o->unc_total;
	return rc;
}

/* Waits (sender thread, without o->lock) until fewer than TB_RELAY_WINDOW
 * packets are unconfirmed: 0, or -errno (lost: no progress within the
 * relay's timeout, or the end's cap).  Between questions it sleeps 1 ms,
 * doubled up to 64 ms while the daemon confirms nothing more: a daemon that
 * answers "not yet" forever (its data connection not read: a stopped or
 * overloaded relayd) cost the recorder ~7 % of a CPU in questions at a
 * fixed 1 ms; one that keeps up is asked again after 1 ms. */
static int confirm_window(struct tb_relay_out *o)
{
	uint64_t since = tb_mono_ns();
	long delay_ns = 1000000;
	for (;;) {
		uint64_t before = o->unc_total;
		int all, rc = confirm(o, 1, &all);
		if (rc || o->unc_total < TB_RELAY_WINDOW)
			return rc;
		rc = tb_relay_no_progress(o->r, since);
		if (rc)
			return rc;
		if (o->unc_total < before)
			delay_ns = 1000000;
		struct timespec ts = { 0, delay_ns };
		nanosleep(&ts, NULL);
		if (o->unc_total >= before && delay_ns < 64000000)
			delay_ns *= 2;
	}
}

/* The whole metadata for a new relay session: 0, or -errno. */
static int send_full_meta(struct tb_relay_out *o, uint32_t *sent_nev)
{
	pthread_mutex_lock(&o->lock);
	char *text = o->full_len ? malloc(o->full_len) : NULL;
	size_t len = text ? o->full_len : 0;
	uint32_t nev = o->full_nev;
	if (text)
		memcpy(text, o->full, len);
	pthread_mutex_unlock(&o->lock);
	if (!text)
		return 0; /* none yet: the first metadata queued is the whole text */
	int rc = tb_relay_metadata(o->r, text, len);
	free(text);
	if (rc == 0)
		*sent_nev = nev;
	return rc;
}

/*
 * The end of a live session (sender thread, o->lock held; everything queued
 * was sent and the daemon wrote it).  lttng-relayd 2.13 cuts its viewers
 * off a closed stream at once: the first GET_NEXT_INDEX after a stream is
 * closed (CLOSE_STREAM or the connection's end) moves the viewer session to
 * the stream's trace chunk, which the close set to none, and every viewer
 * stream then answers HUP (live.c, viewer_get_next_index(): try_open_index()
 * finds no index file) whatever it had not read yet: the last packets never
 * reach a viewer that was a poll behind.  LTTng's own consumer escapes it
 * with a rotation to no chunk before closing (protocol 2.11), which we do
 * not speak.  So a live session stays open TB_RELAY_LINGER_NS more, every
 * stream first told "nothing before now" (its last packet is its last):
 * a viewer's muxer can then hand out every event at once, and it takes the
 * last packets at its next poll (babeltrace2 polls every 100 ms).  The end's
 * cap is moved past it (the close commands included); a relay lost meanwhile
 * ends it.
 */
static void linger(struct tb_relay_out *o)
{
	struct tb_engine *e = o->e;
	o->lingered = 1;
	if (!o->live_us)
		return;
	uint64_t end = tb_mono_ns() + TB_RELAY_LINGER_NS;
	tb_relay_cap(o->r, end + TB_RELAY_CLOSE_NS);
	pthread_mutex_unlock(&o->lock);
	/* later than every packet sent: they were all closed before now */
	uint64_t ts = tb_clock_read(e->s->clock_kind);
	int rc = 0;
	/* the kernel streams too (--kernel: their final pass was queued before) */
	for (unsigned i = 0, n = tb_output_nstreams(e); i < n && !rc; i++)
		rc = tb_relay_beacon_end(o->r, i, ts > i ? ts - i : 0); /* a tick apart, as the rounds' */
	pthread_mutex_lock(&o->lock);
	if (rc) {
		lost(o);
		return;
	}
	for (uint64_t now = tb_mono_ns(); now < end && o->st.alive; now = tb_mono_ns()) {
		struct timespec t = { (time_t)(end / 1000000000ull), (long)(end % 1000000000ull) };
		pthread_cond_timedwait(&o->cond, &o->lock, &t);
	}
}

static void *sender_main(void *arg)
{
	struct tb_relay_out *o = arg;
	struct tb_engine *e = o->e;
	tb_engine_thread_begin(e, "tb-relay");
	uint32_t sent_nev = 0; /* classes the relay session's metadata describes */
	pthread_mutex_lock(&o->lock);
	for (;;) {
		if (!o->st.alive) {
			drop_queue(o);
			if (o->stop)
				break;
			uint64_t now = tb_mono_ns();
			if (now < o->retry_ns) {
				struct timespec ts = { (time_t)(o->retry_ns / 1000000000ull),
						       (long)(o->retry_ns % 1000000000ull) };
				pthread_cond_timedwait(&o->cond, &o->lock, &ts);
				continue;
			}
			pthread_mutex_unlock(&o->lock);
			int rc = tb_relay_reconnect(o->r);
			sent_nev = 0;
			if (rc == 0)
				rc = send_full_meta(o, &sent_nev);
			pthread_mutex_lock(&o->lock);
			if (rc == 0) {
				o->st.alive = 1;
				o->st.error[0] = 0;
				o->st.reconnects++;
				/* every loss so far that a confirmed packet of an earlier
				 * session told (the rest is in tail_lost: lost() undid the
				 * unconfirmed ones; pending is not in the relay's totals yet) */
				for (unsigned i = 0; i < tb_output_nstreams(e); i++) {
					uint64_t total = tb_relay_lost_total(o->r, i);
					o->told_before[i] = total > o->tail_lost[i] ? total - o->tail_lost[i] : 0;
				}
				snprintf(o->st.path, sizeof o->st.path, "%s", tb_relay_path(o->r));
				tb_engine_warn(e, "relay: reconnected; new relay session %s (what was not sent "
						  "meanwhile is counted in it as lost to the relay)", o->st.path);
			} else {
				if (o->backoff_ns < 30000000000ull)
					o->backoff_ns *= 2;
				if (o->backoff_ns > 30000000000ull)
					o->backoff_ns = 30000000000ull;
				o->retry_ns = tb_mono_ns() + o->backoff_ns;
			}
			continue;
		}
		struct rq_item *it = o->head;
		if (!it && o->unc_total) {
			/* idle: have the packets sent reached the daemon's disk? (at
			 * the end until they all have, or the cap cuts the asking) */
			uint64_t ask = o->sent_ns + TB_RELAY_IDLE_ASK_NS;
			if (!o->stop && tb_mono_ns() < ask) {
				/* soon, unless a packet comes first (or the end) */
				struct timespec ts = { (time_t)(ask / 1000000000ull), (long)(ask % 1000000000ull) };
				pthread_cond_timedwait(&o->cond, &o->lock, &ts);
				continue;
			}
			pthread_mutex_unlock(&o->lock);
			int all, rc = confirm(o, 2, &all);
			pthread_mutex_lock(&o->lock);
			if (rc) {
				lost(o);
				continue;
			}
			if (!all && !o->head) {
				/* not yet written: ask again in 10 ms (or at the next item) */
				uint64_t t = tb_mono_ns() + 10000000ull;
				struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
				pthread_cond_timedwait(&o->cond, &o->lock, &ts);
			}
			continue;
		}
		if (!it) {
			if (o->stop && !o->lingered) {
				linger(o);
				continue;
			}
			if (o->stop)
				break;
			pthread_cond_wait(&o->cond, &o->lock);
			continue;
		}
		o->head = it->next;
		if (!o->head)
			o->tail = &o->head;
		pthread_mutex_unlock(&o->lock);
		if (it->kind == RQ_PACKET)
			tb_relay_lost_events(o->r, it->idx, it->lost_before);
		/* the packet's index entry and the questions asked after it: one send */
		tb_relay_cork(o->r);
		int rc = send_item(o, it, &sent_nev);
		pthread_mutex_lock(&o->lock);
		if (it->kind == RQ_PACKET) {
			if (rc == 0) {
				o->st.packets++;
				o->st.bytes += it->len;
				/* sent, not yet confirmed written (lost() undoes it) */
				o->unc_packets[it->idx]++;
				o->unc_events[it->idx] += it->events;
				o->unc_bytes[it->idx] += it->len;
				o->unc_lost_before[it->idx] += o->tail_lost[it->idx] + it->lost_before;
				o->unc_total++;
				o->sent_ns = tb_mono_ns();
				/* the window keeps unc_n below TB_RELAY_WINDOW before a send */
				o->unc[o->unc_n++] = (struct unc_pkt){ it->idx, tb_relay_sent_seq(o->r, it->idx), it->events,
								       it->len, o->tail_lost[it->idx] + it->lost_before };
				o->tail_lost[it->idx] = 0; /* its header carries every loss before it */
			} else {
				/* (a packet whose sending failed half-way may have
				 * reached the relay daemon; it is counted as not sent) */
				o->tail_lost[it->idx] += it->lost_before;
				tb_relay_lost_events(o->r, it->idx, it->events);
				not_sent(o, it->idx, it->events, 0);
			}
		}
		if (rc)
			lost(o);
		item_free(o, it);
		pthread_mutex_unlock(&o->lock);
		if (!rc && o->unc_total >= TB_RELAY_CONFIRM) {
			int all;
			rc = o->unc_total >= TB_RELAY_WINDOW ? confirm_window(o) : confirm(o, 0, &all);
		}
		int rc2 = tb_relay_uncork(o->r); /* before the sender sleeps, or the answers could not come */
		pthread_mutex_lock(&o->lock);
		if ((rc || rc2) && o->st.alive)
			lost(o);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* Appends an item; under o->lock.  The caller wakes the sender (kick())
 * once it has unlocked: woken under the lock, the sender would only wait
 * for it (a futex call and a switch more per item). */
static void enqueue(struct tb_relay_out *o, struct rq_item *it)
{
	it->next = NULL;
	*o->tail = it;
	o->tail = &it->next;
	if (it->kind == RQ_PACKET)
		o->bytes += it->len;
}

/* Set by the drain thread around a batch's reap (tb_engine_relay_reaping()):
 * its packets wake the sender once, at the end (a wake-up per packet made
 * the sender take the lock between two of the drain's enqueues). */
static __thread int defer_kick, deferred;

/* Wakes the sender for items enqueued (without o->lock).  No wake-up is
 * lost: the sender tests the queue under o->lock before it waits, and the
 * items were enqueued under it. */
static void kick(struct tb_relay_out *o)
{
	if (defer_kick)
		deferred = 1;
	else
		pthread_cond_signal(&o->cond);
}

/* The pool slot a packet (header at p, then rest) is in, when the drain
 * thread copied it there and has not handed it over yet; else -1.  Under
 * o->lock. */
static int slot_of(const struct tb_relay_out *o, const void *p, const void *rest, size_t rest_len)
{
	const uint8_t *b = p;
	if (!o->pool || b < o->pool || b >= o->pool + (size_t)o->npool * o->slot_size)
		return -1;
	size_t k = (size_t)(b - o->pool) / o->slot_size;
	if (b != o->pool + k * o->slot_size || o->pool_state[k] != SLOT_DRAIN ||
	    (rest_len && rest != b + sizeof(struct tb_packet_header)) ||
	    sizeof(struct tb_packet_header) + rest_len > o->slot_size)
		return -1;
	return (int)k;
}

uint8_t *tb_engine_relay_slot(struct tb_engine *e)
{
	struct tb_relay_out *o = e->relay;
	if (!o || !o->pool)
		return NULL;
	uint8_t *p = NULL;
	pthread_mutex_lock(&o->lock);
	/* none while the relay is lost: the packet is dropped at its reap
	 * anyway, and a free slot waits for the reconnection */
	if (o->pool && o->nfree && o->st.alive) {
		unsigned k = o->pool_free[--o->nfree];
		o->pool_state[k] = SLOT_DRAIN;
		p = o->pool + (size_t)k * o->slot_size;
	}
	pthread_mutex_unlock(&o->lock);
	return p;
}

void tb_engine_relay_reaping(struct tb_engine *e)
{
	(void)e;
	defer_kick = 1;
	deferred = 0;
}

void tb_engine_relay_reaped(struct tb_engine *e, struct tb_batch *b)
{
	struct tb_relay_out *o = e->relay;
	defer_kick = 0;
	if (o && deferred)
		pthread_cond_signal(&o->cond); /* the engine and o outlive the threads */
	deferred = 0;
	if (o && b->nrslot) {
		pthread_mutex_lock(&o->lock);
		/* a slot relay_packets() queued is the sender's now (it may even
		 * be free again, or listed: only this thread takes slots, and it
		 * took none since the reap handed b's over, so a slot of b still
		 * marked SLOT_DRAIN is b's) */
		for (unsigned k = 0; o->pool && k < b->nrslot; k++) {
			size_t j = (size_t)(b->rslot[k] - o->pool) / o->slot_size;
			if (o->pool_state[j] == SLOT_DRAIN)
				slot_put(o, (unsigned)j);
		}
		pthread_mutex_unlock(&o->lock);
	}
	b->nrslot = 0;
}

static void relay_packets(void *arg, unsigned ch, unsigned cpu, const struct iovec *iov, int n, uint64_t events)
{
	struct tb_relay_out *o = arg;
	struct tb_engine *e = o->e;
	unsigned idx = ch * e->s->ncpus + cpu;
	int queued = 0;
	pthread_mutex_lock(&o->lock);
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len != sizeof(struct tb_packet_header))
			break; /* not a packet header: the caller's bug; nothing more is sent */
		struct tb_packet_header h;
		const void *hp = iov[i].iov_base;
		memcpy(&h, hp, sizeof h);
		uint64_t content = ((h.content_size / 8) + 7) & ~7ull;
		if (content > h.packet_size / 8)
			content = h.packet_size / 8;
		const void *rest = NULL;
		size_t rest_len = 0;
		if (content > sizeof h && i + 1 < n) {
			rest = iov[i + 1].iov_base;
			rest_len = iov[i + 1].iov_len;
			i++;
		}
		/* the events of the call are those of its last packet (a first
		 * empty packet before it holds none) */
		uint64_t ev = i + 1 >= n ? events : 0;
		size_t len = sizeof h + rest_len;
		struct rq_item *it = NULL;
		ptrdiff_t off = -1;
		/* the drain thread's copy in a pool slot, header and content
		 * together (tb_stream_reap()): queued as it is */
		int slot = slot_of(o, hp, rest, rest_len);
		/* --trust-writers: a packet in its ring is sent from there, its
		 * header from a copy (what was checked and written is what the
		 * index entry says); the ring's sub-buffer is held until then */
		int in_ring = slot < 0 && e->trust && ch < e->s->nchannels && rest_len &&
			      rest == (const uint8_t *)hp + sizeof h;
		/* a full queue is never waited for: the relay is slower than
		 * the recording, and the local copy must not wait for it */
		int hold = -1;
		if (o->st.alive && o->bytes + len <= TB_RELAY_QUEUE &&
		    (it = malloc(sizeof *it + (in_ring ? sizeof h : 0))) != NULL) {
			if (in_ring && (hold = tb_engine_hold(e, ch, cpu, hp)) >= 0)
				slot = SLOT_RING;
			else if (slot < 0 && (off = arena_take(o, len)) < 0) {
				free(it);
				it = NULL;
			}
		}
		if (!it) {
			o->pending[idx] += ev;
			not_sent(o, idx, ev, 1);
			if (o->st.alive)
				o->st.full_packets++;
			continue;
		}
		*it = (struct rq_item){ .kind = RQ_PACKET, .idx = idx, .events = ev, .lost_before = o->pending[idx],
					.len = len, .slot = slot };
		o->pending[idx] = 0;
		if (slot >= 0) {
			/* the header is the one in the slot (h, a copy of it) */
			it->data = o->pool + (size_t)slot * o->slot_size;
			o->pool_state[slot] = SLOT_QUEUED;
		} else if (slot == SLOT_RING) {
			it->data = it->inl;
			memcpy(it->data, &h, sizeof h);
			it->rest = rest;
			it->hold = hold;
		} else {
			it->data = o->arena + off;
			it->off = (size_t)off;
			memcpy(it->data, &h, sizeof h);
			if (rest_len)
				memcpy(it->data + sizeof h, rest, rest_len);
		}
		enqueue(o, it);
		queued = 1;
	}
	pthread_mutex_unlock(&o->lock);
	if (queued)
		kick(o);
}

/* The text of info's metadata: whole (from 0), or the classes [from, nevents). NULL: out of memory. */
static char *meta_text(const struct tb_ctf_trace_info *info, uint32_t from, size_t *len)
{
	char *text = NULL;
	*len = 0;
	FILE *f = open_memstream(&text, len);
	if (!f)
		return NULL;
	/* An increment begins with the signature comment too: babeltrace2
	 * 2.0's lttng-live source checks it at the head of every chunk of
	 * plain-text metadata it fetches (a chunk without it: "Invalid metadata
	 * version", the viewer quits); elsewhere it is a comment. */
	if (from != 0)
		fputs("/* CTF 1.8 */\n", f);
	int rc = from == 0 ? tb_ctf_metadata_write(f, info) : tb_ctf_metadata_write_events(f, info, from);
	if (fclose(f) != 0 || rc != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void relay_metadata(void *arg, const struct tb_ctf_trace_info *info)
{
	struct tb_relay_out *o = arg;
	struct tb_engine *e = o->e;
	/* meta_lock is held: q_nev only changes here */
	uint32_t from = o->q_nev, to = info->nevents ? info->nevents : 1;
	if (from && to <= from)
		return;
	size_t flen, ilen = 0;
	char *full = meta_text(info, 0, &flen), *inc = from ? meta_text(info, from, &ilen) : NULL;
	struct rq_item *it = full && (inc || !from) ? malloc(sizeof *it + (from ? ilen : flen)) : NULL;
	if (!it) {
		free(full);
		free(inc);
		tb_engine_warn(e, "relay: out of memory for the metadata: the relay's copy may lack event classes");
		return;
	}
	/* the whole text first (the relay's metadata stream is append-only: its
	 * env block keeps the processes known then), then only new classes */
	*it = (struct rq_item){ .kind = RQ_META, .nev_from = from, .nev_to = to, .len = from ? ilen : flen };
	it->data = it->inl;
	memcpy(it->data, from ? inc : full, it->len);
	free(inc);
	pthread_mutex_lock(&o->lock);
	free(o->full);
	o->full = full;
	o->full_len = flen;
	o->full_nev = to;
	o->q_nev = to;
	int queued = o->st.alive;
	if (queued)
		enqueue(o, it);
	else
		free(it); /* a new relay session starts with the whole text (o->full) */
	pthread_mutex_unlock(&o->lock);
	if (queued)
		kick(o);
}

/*
 * The kernel streams' beacons (--kernel): the kernel thread promises that
 * nothing stamped before tb_kernel_through() is still to come, and handed
 * every packet holding such an event to the outputs before (its acquire
 * load pairs with the pass's release): those packets are queued ahead of
 * this item.  Their own item: the promise is older than the channels'.
 */
static void kernel_beacons(struct tb_relay_out *o)
{
	struct tb_engine *e = o->e;
	uint64_t ts = e->kern ? tb_kernel_through(e->kern) : 0;
	if (!ts || ts <= o->kbeacon_ts)
		return;
	unsigned ns = tb_output_nstreams(e);
	struct rq_item *it = malloc(sizeof *it + ns);
	if (!it)
		return;
	*it = (struct rq_item){ .kind = RQ_BEACONS, .ts = ts, .len = ns };
	it->data = it->inl;
	memset(it->data, RB_SKIP, e->nstreams);
	memset(it->data + e->nstreams, RB_IDLE, e->nkstreams);
	o->kbeacon_ts = ts;
	pthread_mutex_lock(&o->lock);
	int queued = o->st.alive;
	if (queued)
		enqueue(o, it);
	else
		free(it);
	pthread_mutex_unlock(&o->lock);
	if (queued)
		kick(o);
}

static int relay_tick(void *arg)
{
	struct tb_relay_out *o = arg;
	struct tb_engine *e = o->e;
	if (!o->live_us)
		return 0;
	/*
	 * When: every tenth of the live period (every --live-timer when that
	 * is sooner, or when the live period is off).  A viewer shows an event
	 * only once every other stream told it is past it (a packet or a
	 * beacon), and an idle stream that turns busy (a writer moved to its
	 * CPU, or started) tells nothing more until its packet closes, up to
	 * a live period later: the others' events written after its last
	 * beacon wait that long.  With rounds only every timer (1 s, as
	 * LTTng's live timer), lttng-live's p50 was 1.1 s and its p99 1.8 s at
	 * a 1 s live period; now every event is out within the live period
	 * and a tenth, plus the viewer's poll.  The cost: 10 beacons per
	 * second per idle stream (an index command each), none for busy ones.
	 * 1: the drain thread comes back within 50 ms to see.
	 */
	uint64_t now = tb_mono_ns(), every = (uint64_t)o->live_us * 1000;
	if (e->live_ns && e->live_ns / 10 < every)
		every = e->live_ns / 10;
	if (now - o->beacon_ns < every)
		return 1;
	o->beacon_ns = now;
	/*
	 * A beacon promises viewers that no record stamped before its time is
	 * still to come from that stream.  The clock is read first, then the
	 * ring: an empty open packet (head at its header's end; the flusher
	 * closes idle partial packets, so an idle ring gets there) and no
	 * fallback writer holding it.  A producer that read its timestamp
	 * before our clock read commits within nanoseconds (inside one rseq
	 * critical section, or while owning the ring, which we check): the
	 * beacon is dated 1 ms before the clock read, far outside that window.
	 * The beacons go through the queue behind the packets taken before:
	 * the sender sends them in that order.
	 */
	uint64_t ts = tb_clock_read(e->s->clock_kind), margin = e->s->clock_freq / 1000;
	ts = ts > margin ? ts - margin : 0;
	struct rq_item *it = malloc(sizeof *it + e->nstreams);
	if (!it)
		return 0;
	*it = (struct rq_item){ .kind = RQ_BEACONS, .ts = ts, .len = e->nstreams };
	it->data = it->inl;
	int any = 0;
	for (unsigned ch = 0; ch < e->s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < e->s->ncpus; cpu++) {
			uint8_t *v = &it->data[ch * e->s->ncpus + cpu];
			*v = RB_SKIP;
			if (!tb_chan_drained(e, ch))
				continue;
			*v = tb_engine_ring_idle(e, ch, cpu) ? RB_IDLE : RB_BUSY;
			any |= *v == RB_IDLE;
		}
	pthread_mutex_lock(&o->lock);
	int queued = any && o->st.alive;
	if (queued)
		enqueue(o, it);
	else
		free(it);
	pthread_mutex_unlock(&o->lock);
	if (queued)
		kick(o);
	kernel_beacons(o);
	return 1;
}

static void relay_close(void *arg);

static const struct tb_output relay_output = {
	.name = "relay",
	.packets = relay_packets,
	.metadata = relay_metadata,
	.tick = relay_tick,
	.close = relay_close,
};

int tb_engine_relay_open(struct tb_engine *e, const struct tb_relay_cfg *cfg)
{
	/* the channels' streams, then the kernel's (--kernel: engine_kernel.c) */
	unsigned ns = tb_output_nstreams(e);
	char **names = calloc(ns ? ns : 1, sizeof *names);
	struct tb_relay_out *o = calloc(1, sizeof *o);
	uint64_t *counts = calloc(7 * (size_t)(ns ? ns : 1), sizeof *counts);
	uint8_t *arena = malloc(TB_RELAY_QUEUE);
	int rc = names && o && counts && arena ? 0 : -ENOMEM;
	/* the send pool (a queue's worth of slots; its pages are touched as
	 * slots are used, the last freed first; none with --trust-writers:
	 * packets are sent from their rings).  With a local copy the
	 * packets are written from their slots too: aligned for direct I/O,
	 * in huge pages where the kernel gives them (as the batches' area,
	 * engine.c: a direct write's request is then a few segments) */
	unsigned npool = e->bufsize && !e->trust ? (unsigned)(TB_RELAY_QUEUE / e->bufsize) : 0;
	if (!rc && npool) {
		size_t plen = (size_t)npool * e->bufsize, huge = (size_t)2 << 20;
		if (posix_memalign((void **)&o->pool, plen >= huge ? huge : TB_DIO_ALIGN, plen))
			o->pool = NULL;
		else if (plen >= huge)
			(void)madvise(o->pool, plen - plen % huge, MADV_HUGEPAGE); /* a hint */
		o->pool_free = calloc(npool, sizeof *o->pool_free);
		o->pool_state = calloc(npool, 1);
		if (!o->pool || !o->pool_free || !o->pool_state)
			rc = -ENOMEM;
		o->slot_size = e->bufsize;
		o->npool = o->nfree = npool;
		for (unsigned k = 0; k < npool && !rc; k++)
			o->pool_free[k] = npool - 1 - k;
	}
	for (unsigned ch = 0; ch < e->s->nchannels && !rc; ch++)
		for (unsigned cpu = 0; cpu < e->s->ncpus; cpu++) {
			char *n = malloc(TB_CHAN_NAME_MAX + 16);
			if (!n) {
				rc = -ENOMEM;
				break;
			}
			tb_stream_name(e, ch, cpu, n, TB_CHAN_NAME_MAX + 16);
			names[ch * e->s->ncpus + cpu] = n;
		}
	for (unsigned i = 0; i < e->nkstreams && !rc; i++) {
		char *n = malloc(48);
		if (!n) {
			rc = -ENOMEM;
			break;
		}
		tb_kernel_stream_name(e->kern, i, n, 48);
		names[e->nstreams + i] = n;
	}
	/* the drained channels' streams are announced at the start, each with
	 * an empty packet (relay.h: live viewers must know every stream before
	 * any shows an event), dated when the session was created, less 10 ms:
	 * no record of it can be older (its producers attach after), and the
	 * relay's copy then spans the session, not the time since the clock's
	 * origin (the boot, for the TSC).  The creation's realtime and tick 0's
	 * realtime offset were measured together, so their difference holds
	 * whatever the realtime clock did since. */
	const struct tb_session *s = e->s;
	/* relaxed: written once at creation, before any producer ran */
	uint64_t created = __atomic_load_n(&s->map->created_realtime_ns, __ATOMIC_RELAXED);
	int64_t since0 = (int64_t)created - s->clock_offset_ns - 10000000;
	uint64_t base = since0 > 0 ? (uint64_t)((unsigned __int128)since0 * s->clock_freq / 1000000000u) : 0;
	struct tb_packet_header *first = rc ? NULL : calloc(ns ? ns : 1, sizeof *first);
	if (!rc && !first)
		rc = -ENOMEM;
	for (unsigned ch = 0; ch < s->nchannels && !rc; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus && tb_chan_drained(e, ch); cpu++)
			/* a tick apart: babeltrace2 warns of two streams whose next
			 * messages look the same (time and kind) */
			tb_stream_empty_header(e, ch, cpu, 0, base + (uint64_t)ch * s->ncpus + cpu, NULL,
					       &first[(size_t)ch * s->ncpus + cpu]);
	for (unsigned i = 0; i < e->nkstreams && !rc; i++)
		tb_kernel_empty_header(e->kern, i, base + e->nstreams + i, &first[e->nstreams + i]);
	if (!rc)
		rc = tb_relay_open(cfg, ns, (const char *const *)names, first, &o->r);
	free(first);
	for (unsigned i = 0; names && i < ns; i++)
		free(names[i]);
	free(names);
	if (rc == 0) {
		o->e = e;
		o->tail = &o->head;
		o->arena = arena;
		o->pending = counts;
		o->tail_lost = counts + ns;
		o->unc_packets = counts + (size_t)2 * ns;
		o->unc_events = counts + (size_t)3 * ns;
		o->unc_bytes = counts + (size_t)4 * ns;
		o->unc_lost_before = counts + (size_t)5 * ns;
		o->told_before = counts + (size_t)6 * ns;
		o->st.enabled = 1;
		o->st.alive = 1;
		o->live_us = cfg->live_timer_us;
		o->beacon_ns = tb_mono_ns();
		snprintf(o->st.path, sizeof o->st.path, "%s", tb_relay_path(o->r));
		pthread_mutex_init(&o->lock, NULL);
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&o->cond, &ca);
		pthread_condattr_destroy(&ca);
		int t = pthread_create(&o->thr, NULL, sender_main, o);
		if (t) {
			rc = tb_fail(-t, "cannot start the relay sender thread: %s", strerror(t));
			tb_relay_close(o->r);
		} else {
			o->running = 1;
			e->relay = o;
			/* the engine's outputs are set before its threads start */
			return tb_output_add(e, &relay_output, o);
		}
	}
	free(counts);
	free(arena);
	if (o) {
		free(o->pool);
		free(o->pool_free);
		free(o->pool_state);
	}
	free(o);
	return rc;
}

/* The end (finish): what is queued gets TB_RELAY_CLOSE_NS; the statistics stay. */
static void relay_close(void *arg)
{
	struct tb_relay_out *o = arg;
	struct tb_engine *e = o->e;
	if (!o->r)
		return;
	/* what is queued gets TB_RELAY_CLOSE_NS in all, whatever the relay
	 * does (every wait of relay.c is capped), the streams' closing included */
	uint64_t cap = tb_mono_ns() + TB_RELAY_CLOSE_NS;
	tb_relay_cap(o->r, cap);
	pthread_mutex_lock(&o->lock);
	o->stop = 1;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&o->lock);
	if (o->running)
		pthread_join(o->thr, NULL);
	pthread_mutex_lock(&o->lock);
	/* losses no packet sent afterwards can carry: only the recorder knows
	 * them; and those the last relay session does not tell either (a stream
	 * that sent nothing in it but its announcing packet, whose packets of an
	 * earlier session told them: babeltrace2 reads one session at a time) */
	for (unsigned i = 0; i < tb_output_nstreams(e); i++) {
		o->st.unreported_events += o->tail_lost[i] + o->pending[i];
		o->st.untold_last_events += o->tail_lost[i] + o->pending[i] + o->told_before[i];
	}
	pthread_mutex_unlock(&o->lock);
	tb_relay_close(o->r); /* closes the streams if still alive, within the cap */
	o->r = NULL;
	free(o->pending);
	free(o->full);
	pthread_mutex_lock(&o->lock);
	free(o->arena); /* the sender is gone, and took the queue */
	o->arena = NULL;
	/* the drain threads are done too (tb_engine_finish()): no slot is
	 * the drain's; tb_engine_relay_slot() finds none from now on */
	free(o->pool);
	free(o->pool_free);
	free(o->pool_state);
	o->pool = NULL;
	o->pool_free = NULL;
	o->pool_state = NULL;
	o->npool = o->nfree = 0;
	pthread_mutex_unlock(&o->lock);
	/* e->relay stays for tb_engine_relay(): o->st is final */
	o->running = 0;
}

void tb_engine_relay_free(struct tb_engine *e)
{
	struct tb_relay_out *o = e->relay;
	if (!o)
		return;
	relay_close(o);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	free(o);
	e->relay = NULL;
}

void tb_engine_relay(struct tb_engine *e, struct tb_relay_stats *out)
{
	struct tb_relay_out *o = e->relay;
	if (!o) {
		memset(out, 0, sizeof *out);
		return;
	}
	pthread_mutex_lock(&o->lock);
	*out = o->st;
	pthread_mutex_unlock(&o->lock);
}
