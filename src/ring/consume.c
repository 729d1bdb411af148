/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the consumer side of the ring protocol: consume, flush,
 * snapshot, drain a dead ring.  Shared memory is hostile input here: every
 * value read from it is checked before it is used, and packets are copied
 * out before any of their fields is trusted.
 */
#define _GNU_SOURCE
#include "ring/ring.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/classes.h"
#include "core/walk.h"
#include "platform/clock.h"
#include "ring/append.h"
#include "ring/state.h"
#include "platform/futex.h"

int tb_ring_ready(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t *pos)
{
	int n = tb_ring_ready_n(s, ch, cpu, pos);
	return n > 0 ? 1 : n;
}

int tb_ring_ready_n(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t *pos)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	/* Acquire pairs with the producer's commit store of head (the final
	 * store of its switch cs): the closed packet's bytes and context
	 * fields are visible once we see head past it. */
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_RELAXED); /* ours */
	if (head == 0)
		return 0;
	if (tail & (cv->sb_size - 1) || head < tail || head - tail > cv->ring_mask + 1)
		return tb_fail(-EBADMSG,
			       "channel %s CPU %u: impossible positions (head %" PRIu64 ", consumer %" PRIu64
			       ", ring %" PRIu64 " bytes)",
			       cv->name, cpu, head, tail, cv->ring_mask + 1);
	if (head - tail < cv->sb_size || (head & ~(cv->sb_size - 1)) == tail)
		return 0;
	*pos = tail;
	/* the sub-buffers before the one head is in are closed (at most a
	 * ring: checked above) */
	return (int)(((head & ~(cv->sb_size - 1)) - tail) >> cv->sb_shift);
}

/* Validates a packet copy in place; `len` bytes were copied. */
static int check_packet(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, const uint8_t *p, uint64_t len,
			struct tb_packet_info *info)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_packet_header h;
	memcpy(&h, p, sizeof h);
	const char *what = NULL;
	if (h.magic != TB_CTF_MAGIC)
		what = "bad magic";
	else if (memcmp(h.uuid, s->uuid, 16))
		what = "uuid of another session";
	else if (h.stream_id != (cv->vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN))
		what = "stream id is not the channel's stream class";
	else if (h.stream_instance_id != (((uint64_t)ch << 32) | cpu))
		what = "stream instance of another ring";
	else if (h.packet_seq_num != pos >> cv->sb_shift)
		what = "sequence number does not match its position";
	else if (h.cpu_id != cpu)
		what = "cpu_id of another CPU";
	else if (h.packet_size != len * 8)
		what = "packet_size is not the sub-buffer size";
	else if (h.content_size % 8 || h.content_size < TB_PACKET_HEADER_SIZE * 8ull || h.content_size > h.packet_size)
		what = "content_size out of bounds";
	else if (h.timestamp_end < h.timestamp_begin)
		what = "timestamp_end before timestamp_begin";
	if (what)
		return tb_fail(-EBADMSG,
			       "channel %s CPU %u packet %" PRIu64 ": %s (seq %" PRIu64 ", content %" PRIu64
			       " bits, packet %" PRIu64 " bits, ts %" PRIu64 "..%" PRIu64 ")",
			       cv->name, cpu, pos >> cv->sb_shift, what, h.packet_seq_num, h.content_size, h.packet_size,
			       h.timestamp_begin, h.timestamp_end);
	info->seq = h.packet_seq_num;
	info->ts_begin = h.timestamp_begin;
	info->ts_end = h.timestamp_end;
	info->content_bytes = h.content_size / 8;
	info->packet_bytes = len;
	info->events_discarded = h.events_discarded;
	info->cpu = cpu;
	/* the causes as the producer closed the packet; consumer causes are
	 * never written in a ring: the consumer sets them in its copy */
	uint64_t sum = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		info->lost[k] = k < TB_LOSS_NPRODUCER ? h.lost[k] : 0;
		sum += info->lost[k];
	}
	if (sum != h.events_discarded)
		return tb_fail(-EBADMSG,
			       "channel %s CPU %u packet %" PRIu64 ": its loss causes add up to %" PRIu64
			       ", not to its events_discarded %" PRIu64,
			       cv->name, cpu, pos >> cv->sb_shift, sum, h.events_discarded);
	return 0;
}

/* The packet's descriptor (hostile memory: read once, checked by the caller). */
static void read_desc(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, struct tb_packet_info *info)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	const struct tb_sbdesc *d = &tb_sbdesc_of(s, ch, cpu)[(pos >> cv->sb_shift) & (cv->sb_count - 1)];
	/* relaxed: written by the switches that opened and closed the packet,
	 * which committed before the head store the caller acquired */
	info->cnt_begin = __atomic_load_n(&d->cnt_begin, __ATOMIC_RELAXED);
	info->cnt_end = __atomic_load_n(&d->cnt_end, __ATOMIC_RELAXED);
}

/* The checks of tb_ring_copy() and tb_ring_in_place() on the packet at p (a copy, or the ring). */
static int check_at(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, const uint8_t *p,
		    struct tb_packet_info *info)
{
	int rc = check_packet(s, ch, cpu, pos, p, s->chan[ch].sb_size, info);
	read_desc(s, ch, cpu, pos, info);
	info->events = info->cnt_end >= info->cnt_begin ? info->cnt_end - info->cnt_begin : 0;
	return rc;
}

int tb_ring_copy(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, void *dst, struct tb_packet_info *info)
{
	memcpy(dst, tb_sb_at(s, ch, cpu, pos), s->chan[ch].sb_size);
	return check_at(s, ch, cpu, pos, dst, info);
}

int tb_ring_in_place(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, uint8_t **pkt,
		     struct tb_packet_info *info)
{
	*pkt = tb_sb_at(s, ch, cpu, pos);
	return check_at(s, ch, cpu, pos, *pkt, info);
}

void tb_ring_release(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	if (__atomic_load_n(&c->tail, __ATOMIC_RELAXED) != pos)
		return; /* out of order: ignore (the consumer is single-threaded per ring) */
	/* Release pairs with the producer's acquire load of tail in
	 * prepare_switch(): our copy of the sub-buffer is complete before a
	 * producer may reuse it. */
	__atomic_store_n(&c->tail, pos + cv->sb_size, __ATOMIC_RELEASE);
	__atomic_fetch_add(&c->tail_futex, 1, __ATOMIC_RELEASE);
	/* pairs with the fence in wait_for_consumer() (append.c) between its
	 * store of waiters and its re-check of the ring */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->waiters, __ATOMIC_RELAXED)) {
		__atomic_store_n(&c->waiters, 0, __ATOMIC_RELAXED);
		tb_futex_wake_all(&c->tail_futex);
	}
}

uint64_t tb_ring_resync(struct tb_session *s, unsigned ch, unsigned cpu)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
	uint64_t nt = head & ~(cv->sb_size - 1);
	uint64_t skipped = nt > tail ? (nt - tail) >> cv->sb_shift : 0;
	__atomic_store_n(&c->tail, nt, __ATOMIC_RELEASE);
	__atomic_fetch_add(&c->tail_futex, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(&c->tail_futex);
	return skipped;
}

int tb_ring_flush(struct tb_session *s, unsigned ch, unsigned cpu, int how, uint64_t now_ns)
{
	if (ch >= s->nchannels || cpu >= s->ncpus)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	return tb_switch_flush(s, ch, cpu, how, now_ns, UINT64_MAX);
}

int tb_ring_flush_live(struct tb_session *s, unsigned ch, unsigned cpu, struct tb_live_ring *lv, uint64_t now_ns,
		       uint64_t live_ns, uint64_t *next_ns)
{
	if (ch >= s->nchannels || cpu >= s->ncpus || live_ns == 0)
		return -EINVAL;
	if (s->readonly)
		return -EROFS;
	const struct tb_chan_view *cv = &s->chan[ch];
	/* Relaxed: the decision is a hint (a stale head makes a visit early or
	 * late by one visit); the switch re-reads the state and its commit
	 * checks head, which is what keeps the ring correct. */
	uint64_t head = __atomic_load_n(&tb_ctl_of(s, ch, cpu)->head, __ATOMIC_RELAXED);
	uint64_t P = head & ~(cv->sb_size - 1);
	uint64_t prev_ns = lv->seen_ns;
	lv->seen_ns = now_ns;
	if (head == 0 || head - P <= TB_PACKET_HEADER_SIZE) {
		/* no record in the open packet: any record of it comes after now */
		lv->pkt = head == 0 ? UINT64_MAX - 1 : P;
		lv->ref_ns = now_ns;
		*next_ns = now_ns + live_ns / 2;
		return 0;
	}
	if (P != lv->pkt) {
		/* opened since the previous visit, which saw another packet.
		 * Never closed at this visit: a flusher that ran late (a loaded
		 * CPU) would otherwise cut a packet opened an instant ago; this
		 * way a packet closed from outside held records for at least a
		 * quarter period, whatever the load (what
		 * t_live_period_bounds_visibility.sh checks in the trace). */
		lv->pkt = P;
		lv->ref_ns = prev_ns;
		*next_ns = now_ns + live_ns / 4;
		return 0;
	}
	if (now_ns - lv->ref_ns < live_ns) {
		uint64_t due = lv->ref_ns + live_ns, soon = now_ns + live_ns / 4;
		*next_ns = due < soon ? due : soon;
		return 0;
	}
	int rc = tb_switch_flush(s, ch, cpu, TB_FLUSH_NOW, now_ns, P);
	if (rc == 1) {
		/* the packet our switch opened is empty: its records come later */
		lv->pkt = UINT64_MAX - 1; /* the next visit sees it empty and says so */
		lv->ref_ns = now_ns;
		*next_ns = now_ns + live_ns / 2;
	} else if (rc == -EBUSY || rc == -EAGAIN) {
		*next_ns = now_ns + 1000000; /* a writer holds the ring (fallback): again in 1 ms */
	} else {
		/* 0: the ring is full (the drain makes room, and then the
		 * producers' own switches close packets) or the producers
		 * left P meanwhile: look again soon */
		*next_ns = now_ns + live_ns / 4;
	}
	return rc;
}

/*
 * Whether one of the n closed packets from pos was open at least the map's
 * live_wake_ms: the producers' other reason to wake us (packet_was_old() in
 * append.c), checked again here, since a producer that closed it while we
 * were not asleep woke nobody.  Relaxed loads of shared memory: a hint,
 * which only decides whether we sleep (what is written is the copy's).
 */
static int ready_has_old(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, int n)
{
	uint32_t ms = __atomic_load_n(&s->map->live_wake_ms, __ATOMIC_RELAXED);
	if (!ms)
		return 0;
	if (ms > 3600000u)
		ms = 3600000u;
	uint64_t thr = (uint64_t)ms * (s->clock_freq / 1000);
	for (int k = 0; k < n; k++) {
		const uint8_t *h = tb_sb_at(s, ch, cpu, pos + (uint64_t)k * s->chan[ch].sb_size);
		uint64_t b = __atomic_load_n((const uint64_t *)(h + TB_PKT_OFF_TS_BEGIN), __ATOMIC_RELAXED);
		uint64_t e = __atomic_load_n((const uint64_t *)(h + TB_PKT_OFF_TS_END), __ATOMIC_RELAXED);
		if (e > b && e - b >= thr)
			return 1;
	}
	return 0;
}

int tb_consumer_wait(struct tb_session *s, uint64_t timeout_ns)
{
	struct tb_map *m = s->map;
	uint32_t seen = __atomic_load_n(&m->consumer_futex, __ATOMIC_ACQUIRE);
	__atomic_store_n(&m->consumer_sleeping, 1, __ATOMIC_RELAXED);
	/* Full fence: our store of consumer_sleeping before the re-check of
	 * the rings; pairs with the fence in maybe_wake_consumer(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		if (s->chan[ch].mode == TB_MODE_OVERWRITE)
			continue; /* not drained continuously: only snapshots read it */
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			uint64_t pos;
			/* the producers' threshold (maybe_wake_consumer()): fewer
			 * full sub-buffers wait for the watermark or the timeout,
			 * else a consumer slower than one sub-buffer per pass
			 * would go back to a pass per sub-buffer */
			int n = tb_ring_ready_n(s, ch, cpu, &pos);
			if (n < 0 || (n > 0 && ((uint32_t)n >= s->chan[ch].watermark || ready_has_old(s, ch, cpu, pos, n)))) {
				__atomic_store_n(&m->consumer_sleeping, 0, __ATOMIC_RELAXED);
				return 1;
			}
		}
	}
	tb_futex_wait(&m->consumer_futex, seen, timeout_ns);
	__atomic_store_n(&m->consumer_sleeping, 0, __ATOMIC_RELAXED);
	return 0;
}

int tb_ring_peek(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t P, uint64_t from, uint8_t *buf,
		 uint64_t *end, int *closed, struct tb_packet_info *info)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	uint64_t S = cv->sb_size, ring = cv->ring_mask + 1;
	/* Acquire pairs with the producer's commit store of head (the final
	 * store of its append or switch critical section): every record
	 * below head, and a closed packet's context, are visible. */
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	if (P & (S - 1))
		return -EBADMSG;
	if (head == 0 || head < P + TB_PACKET_HEADER_SIZE)
		return 2;
	if (head - P >= ring)
		return 1; /* its sub-buffer holds a later packet now */
	uint64_t cur = head & ~(S - 1);
	const uint8_t *src = tb_sb_at(s, ch, cpu, P);
	memcpy(buf, src, TB_PACKET_HEADER_SIZE);
	struct tb_packet_header h;
	memcpy(&h, buf, sizeof h);
	uint64_t e;
	if (cur > P) {
		e = h.content_size / 8;
		if (h.content_size % 8 || e < TB_PACKET_HEADER_SIZE || e > S)
			e = TB_PACKET_HEADER_SIZE; /* decided after the re-check below */
	} else {
		e = head - cur;
	}
	if (from < TB_PACKET_HEADER_SIZE)
		from = TB_PACKET_HEADER_SIZE;
	if (e > from)
		memcpy(buf + from, src + from, e - from);
	struct tb_packet_info d;
	read_desc(s, ch, cpu, P, &d);
	/* Seqlock-style re-check, as take_packet() does for a snapshot: the
	 * acquire fence orders the copies above before the re-reads.  A
	 * producer reusing this sub-buffer writes its new header (sequence
	 * number) before any record (program order, TSO), so a copy that saw
	 * new bytes sees a new sequence number or a head a ring ahead here. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t seq_now;
	memcpy(&seq_now, src + TB_PKT_OFF_SEQ, 8);
	uint64_t head_now = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	if (seq_now != P >> cv->sb_shift || head_now - P >= ring)
		return 1;
	if (cv->mode == TB_MODE_OVERWRITE && cur > P) {
		/* a closed packet the overwrite loss total already covers may be
		 * half rewritten by an aborted switch (take_packet(): pairs with
		 * the store order of prepare_switch(), src/ring/append.c) */
		uint64_t ow = __atomic_load_n(&c->lost_overwritten, __ATOMIC_RELAXED);
		const struct tb_sbdesc *nd = &tb_sbdesc_of(s, ch, cpu)[((P + S) >> cv->sb_shift) & (cv->sb_count - 1)];
		if (ow >= __atomic_load_n(&nd->cnt_begin, __ATOMIC_RELAXED))
			return 1;
	}
	if (h.magic != TB_CTF_MAGIC || memcmp(h.uuid, s->uuid, 16) || h.packet_seq_num != P >> cv->sb_shift ||
	    h.stream_instance_id != (((uint64_t)ch << 32) | cpu) || h.cpu_id != cpu)
		return tb_fail(-EBADMSG, "channel %s CPU %u packet %" PRIu64 ": not a packet of this ring", cv->name, cpu,
			       P >> cv->sb_shift);
	*end = e > from ? e : from;
	*closed = cur > P;
	info->seq = h.packet_seq_num;
	info->ts_begin = h.timestamp_begin;
	info->cnt_begin = d.cnt_begin;
	info->cpu = cpu;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* snapshots and dead rings                                                */
/* ---------------------------------------------------------------------- */

struct walker {
	struct tb_event_desc *ev;
	uint32_t nev;
};

/* The classes registered so far: a few entries of 4 KiB, not the whole
 * capacity (a live snapshot copies its ring's packets right after this,
 * before producers lap them: it must be quick). */
static int walker_init(struct tb_session *s, struct walker *w)
{
	uint32_t n = tb_registry_count(s);
	w->ev = calloc(n ? n : 1, sizeof *w->ev);
	if (!w->ev)
		return -ENOMEM;
	w->nev = tb_registry_copy(s, w->ev, n);
	return 0;
}

/*
 * Copies the packet at position P (its first `bytes` bytes, with closing
 * fields synthesised when `partial`), validates it, walks its records and
 * cuts a torn tail.  Returns 0 emitted-ready in buf, 1 torn/reused (drop),
 * 2 covered by the overwrite loss total (skip), -EBADMSG invalid.
 */
static int take_packet(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t P, uint64_t bytes, int partial,
		       uint64_t ts_end, int live, struct walker *w, uint8_t *buf, uint64_t *outlen,
		       struct tb_packet_info *info, uint64_t *cut)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	uint8_t *src = tb_sb_at(s, ch, cpu, P);
	uint64_t seq_want = P >> cv->sb_shift;
	struct tb_packet_info d;
	read_desc(s, ch, cpu, P, &d);
	memcpy(buf, src, bytes);
	if (cv->mode == TB_MODE_OVERWRITE && !partial) {
		/* Overwrite mode: a packet whose events the loss total already
		 * covers (it reaches the cnt_begin of the next packet) was given
		 * up by a switch that may have been aborted while rewriting it:
		 * skip it, it is counted.  The next packet's descriptor is
		 * written only by the switch that opened it, never by an attempt
		 * to reuse this one.  Pairs with the store order in
		 * prepare_switch() (src/ring/append.c): lost_overwritten is
		 * stored before this packet's descriptor and header, so reading
		 * it after our reads of those (acquire fence) tells whether they
		 * may be the reuser's: then we skip too. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint64_t ow = __atomic_load_n(&c->lost_overwritten, __ATOMIC_RELAXED);
		const struct tb_sbdesc *nd = &tb_sbdesc_of(s, ch, cpu)[((P + cv->sb_size) >> cv->sb_shift) &
								       (cv->sb_count - 1)];
		if (ow >= __atomic_load_n(&nd->cnt_begin, __ATOMIC_RELAXED))
			return 2;
	}
	if (live) {
		/* Seqlock-style re-check: the acquire fence orders our copy
		 * before the re-reads.  A producer reusing this sub-buffer
		 * writes its new header (sequence number) before any record
		 * (program order, TSO), so a copy that saw new bytes sees a new
		 * sequence number here. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint64_t seq_now;
		memcpy(&seq_now, src + TB_PKT_OFF_SEQ, 8);
		uint64_t head_now = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
		if (seq_now != seq_want || head_now >= P + cv->ring_mask + 1)
			return 1;
	}
	uint64_t len = bytes;
	if (partial) {
		len = (bytes + 7) & ~7ull;
		memset(buf + bytes, 0, len - bytes);
		uint64_t v = len * 8;
		memcpy(buf + TB_PKT_OFF_PACKET, &v, 8);
		v = bytes * 8;
		memcpy(buf + TB_PKT_OFF_CONTENT, &v, 8);
		/* close it as a switch would now: the counters as they are */
		uint64_t lost[TB_LOSS_NCAUSES] = { 0 }; /* consumer causes 0 */
		v = tb_state_losses(c, NULL, lost);
		memcpy(buf + TB_PKT_OFF_DISCARDED, &v, 8);
		memcpy(buf + TB_PKT_OFF_LOST, lost, sizeof lost);
		memcpy(buf + TB_PKT_OFF_TS_END, &ts_end, 8);
	}
	int rc = check_packet(s, ch, cpu, P, buf, len, info);
	if (rc)
		return rc;
	info->cnt_begin = d.cnt_begin;
	info->cnt_end = partial ? d.cnt_begin : d.cnt_end; /* a partial packet's end is not written yet */
	/* prove every record valid; cut the packet at the first that is not */
	struct tb_walk_result wr;
	tb_walk_packet(w->ev, w->nev, buf, info->content_bytes, info->ts_begin, tb_walk_ctx(cv->vtid), NULL, NULL, &wr);
	if (wr.error || (partial && ts_end == UINT64_MAX)) {
		if (wr.error)
			(*cut)++;
		uint64_t v = wr.valid_end * 8;
		memcpy(buf + TB_PKT_OFF_CONTENT, &v, 8);
		info->content_bytes = wr.valid_end;
		if (partial || wr.last_ts > info->ts_end) {
			memcpy(buf + TB_PKT_OFF_TS_END, &wr.last_ts, 8);
			info->ts_end = wr.last_ts;
		}
	}
	if (wr.last_ts > info->ts_end) { /* a record after timestamp_end: clamp the packet */
		memcpy(buf + TB_PKT_OFF_TS_END, &wr.last_ts, 8);
		info->ts_end = wr.last_ts;
	}
	info->events = wr.events;
	if (partial)
		info->cnt_end = info->cnt_begin + wr.events;
	/* the content's last word is written whole: no stale byte in it */
	uint64_t word_end = (info->content_bytes + 7) & ~7ull;
	if (word_end > len)
		word_end = len;
	if (info->content_bytes < word_end)
		memset(buf + info->content_bytes, 0, word_end - info->content_bytes);
	*outlen = len;
	return 0;
}

static int emit_range(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t from, int live, tb_packet_fn emit,
		      void *arg, uint64_t *torn, uint64_t *bad)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	struct tb_state st;
	tb_state_read(c, &st, 1000); /* on failure ts is UINT64_MAX: derived by walking */
	uint64_t head = st.head, ts = st.ts;
	if (head == 0)
		return 0;
	uint64_t S = cv->sb_size, ring = cv->ring_mask + 1;
	uint64_t cur = head & ~(S - 1);
	if (head - cur < TB_PACKET_HEADER_SIZE || (cur > from && cur - from > ring)) {
		tb_fail(-EBADMSG, "channel %s CPU %u: impossible head %" PRIu64, cv->name, cpu, head);
		(*bad)++;
		return 0;
	}
	struct walker w;
	if (walker_init(s, &w))
		return -ENOMEM;
	uint8_t *buf = malloc(S + 8);
	if (!buf) {
		free(w.ev);
		return -ENOMEM;
	}
	int n = 0, rc = 0;
	uint64_t cut = 0, last_disc = 0;
	/* Counted, not `P <= cur`: a hostile head near 2^64 makes P += S wrap
	 * to 0, which is <= cur again (an endless loop). */
	uint64_t npk = cur >= from ? (cur - from) / S + 1 : 0;
	for (uint64_t k = 0, P = from; k < npk; k++, P += S) {
		int partial = P == cur;
		uint64_t len = 0;
		struct tb_packet_info info;
		int t = take_packet(s, ch, cpu, P, partial ? head - cur : S, partial, ts, live, &w, buf, &len, &info, &cut);
		if (t == 2)
			continue; /* covered by the overwrite loss total */
		if (t == 1) {
			(*torn)++;
			continue;
		}
		if (t < 0) {
			(*bad)++;
			continue;
		}
		/* an empty current packet is only worth emitting when it carries
		 * losses no emitted packet has reported yet */
		if (partial && info.content_bytes <= TB_PACKET_HEADER_SIZE && info.events_discarded == last_disc)
			continue;
		rc = emit(arg, buf, len, &info);
		if (rc < 0)
			break;
		last_disc = info.events_discarded;
		n++;
	}
	*bad += cut;
	free(buf);
	free(w.ev);
	return rc < 0 ? rc : n;
}

/*
 * Where a copy of ring (ch, cpu) starts: the oldest sub-buffer the ring can
 * still hold, or the consumer position when it is inside that span (discard
 * and block modes).  UINT64_MAX: the ring was never written.  `tail` is
 * loaded with acquire on a live ring (pairs with tb_ring_release()'s release
 * store), relaxed on a dead one; a dead ring's tail must also be a
 * sub-buffer boundary (anything else is damage: start from the span).
 */
static uint64_t copy_start(struct tb_session *s, unsigned ch, unsigned cpu, int live)
{
	const struct tb_chan_view *cv = &s->chan[ch];
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	if (head == 0)
		return UINT64_MAX;
	uint64_t S = cv->sb_size, cur = head & ~(S - 1), span = (uint64_t)(cv->sb_count - 1) * S;
	uint64_t from = cur > span ? cur - span : 0;
	if (cv->mode != TB_MODE_OVERWRITE) {
		uint64_t tail = live ? __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE)
				     : __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
		if ((live || tail % S == 0) && tail > from && tail <= cur)
			from = tail;
	}
	return from;
}

/* Copies ring (ch, cpu) from copy_start() on; what was dropped (torn or
 * not provably valid) is added to *dropped. */
static int copy_ring(struct tb_session *s, unsigned ch, unsigned cpu, int live, tb_packet_fn emit, void *arg,
		     uint64_t *dropped)
{
	uint64_t from = copy_start(s, ch, cpu, live);
	if (from == UINT64_MAX)
		return 0;
	uint64_t torn = 0, bad = 0;
	int rc = emit_range(s, ch, cpu, from, live, emit, arg, &torn, &bad);
	if (dropped)
		*dropped += torn + bad;
	return rc;
}

int tb_ring_snapshot(struct tb_session *s, unsigned ch, unsigned cpu, tb_packet_fn emit, void *arg, uint64_t *torn)
{
	return copy_ring(s, ch, cpu, 1, emit, arg, torn);
}

int tb_ring_drain_dead(struct tb_session *s, unsigned ch, unsigned cpu, tb_packet_fn emit, void *arg, uint64_t *bad)
{
	return copy_ring(s, ch, cpu, 0, emit, arg, bad);
}
