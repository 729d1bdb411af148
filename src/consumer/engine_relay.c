/* SPDX-License-Identifier: MIT */
/*
 * engine_relay.c - the engine's side of the relay daemon (relay.c), as one
 * of the engine's outputs (engine_impl.h, struct tb_output): what is
 * written to the trace directory is also sent, packet by packet, with the
 * metadata ahead of the packets that need it, and live beacons for idle
 * streams (relay_tick()).  Each packet, metadata text and beacon round is
 * queued for the sender thread (engine_relay_send.c: the queue, the
 * confirmation window, the reconnections); nothing here waits for the
 * relay.  Relay-only, the relay's copy is the trace: what it did not get
 * is lost, counted per stream (relay_unsent) by tb_engine_stats().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "consumer/engine_relay_impl.h"
#include "ctf/ctf.h"

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
		int slot = tb_rq_slot_of(o, hp, rest, rest_len);
		/* --trust-writers: a packet in its ring is sent from there, its
		 * header from a copy (what was checked and written is what the
		 * index entry says); the ring's sub-buffer is held until then */
		int in_ring = slot < 0 && rest_len && rest == (const uint8_t *)hp + sizeof h; /* held if in its ring */
		/* a full queue is never waited for: the relay is slower than
		 * the recording, and the local copy must not wait for it */
		int hold = -1;
		if (o->st.alive && o->bytes + len <= TB_RELAY_QUEUE &&
		    (it = malloc(sizeof *it + (in_ring ? sizeof h : 0))) != NULL) {
			if (in_ring && (hold = tb_engine_hold(e, ch, cpu, hp)) >= 0)
				slot = SLOT_RING;
			else if (slot < 0 && (off = tb_rq_arena_take(o, len)) < 0) {
				free(it);
				it = NULL;
			}
		}
		if (!it) {
			o->pending[idx] += ev;
			tb_rq_not_sent(o, idx, ev, 1);
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
		tb_rq_enqueue(o, it);
		queued = 1;
	}
	pthread_mutex_unlock(&o->lock);
	if (queued)
		tb_rq_kick(o);
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
		tb_rq_enqueue(o, it);
	else
		free(it); /* a new relay session starts with the whole text (o->full) */
	pthread_mutex_unlock(&o->lock);
	if (queued)
		tb_rq_kick(o);
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
		tb_rq_enqueue(o, it);
	else
		free(it);
	pthread_mutex_unlock(&o->lock);
	if (queued)
		tb_rq_kick(o);
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
		tb_rq_enqueue(o, it);
	else
		free(it);
	pthread_mutex_unlock(&o->lock);
	if (queued)
		tb_rq_kick(o);
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
		int t = pthread_create(&o->thr, NULL, tb_relay_sender_main, o);
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
