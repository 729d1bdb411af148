/* SPDX-License-Identifier: MIT */
/*
 * engine_relay_send.c - the relay output's send queue and sender thread
 * (engine_relay.c is the output that fills the queue; what both share:
 * engine_relay_impl.h).
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
 * would let a slow relay hold the producers.  A full queue (a relay slower
 * than the recording) or a lost relay costs the relay's copy, never the
 * local one: those packets are counted as not sent and carried as
 * lost_relay in the stream's next packet sent.  The end of the recording
 * gives the sender TB_RELAY_CLOSE_NS to send what is queued and close the
 * streams, whatever the relay does; what it could not send by then is
 * counted.  A live session whose relay took everything then stays open
 * TB_RELAY_LINGER_NS, every stream's last beacon sent, for the viewers to
 * take the last packets (linger(): lttng-relayd cuts them off a closed
 * stream).
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
 * summary counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer/engine_relay_impl.h"

/* A packet (or items of a lost relay) not sent: counted; under o->lock. */
void tb_rq_not_sent(struct tb_relay_out *o, unsigned idx, uint64_t events, int carried_later)
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
		o->st.lost_packets += o->unc_packets[i] - 1; /* tb_rq_not_sent counts one */
		/* their headers carried the losses before them: no header sent does now */
		o->tail_lost[i] += o->unc_lost_before[i];
		tb_relay_lost_events(o->r, i, o->unc_events[i]);
		tb_rq_not_sent(o, i, o->unc_events[i], 0);
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
ptrdiff_t tb_rq_arena_take(struct tb_relay_out *o, size_t len)
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
			tb_rq_not_sent(o, it->idx, it->events, 0);
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

void *tb_relay_sender_main(void *arg)
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
				tb_rq_not_sent(o, it->idx, it->events, 0);
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

/* Appends an item; under o->lock.  The caller wakes the sender (tb_rq_kick())
 * once it has unlocked: woken under the lock, the sender would only wait
 * for it (a futex call and a switch more per item). */
void tb_rq_enqueue(struct tb_relay_out *o, struct rq_item *it)
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
void tb_rq_kick(struct tb_relay_out *o)
{
	if (defer_kick)
		deferred = 1;
	else
		pthread_cond_signal(&o->cond);
}

/* The pool slot a packet (header at p, then rest) is in, when the drain
 * thread copied it there and has not handed it over yet; else -1.  Under
 * o->lock. */
int tb_rq_slot_of(const struct tb_relay_out *o, const void *p, const void *rest, size_t rest_len)
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
