/* SPDX-License-Identifier: MIT */
/*
 * test_consumer_survives_hostile_shm - the consumer side of the rings
 * (tb_ring_ready/copy/release/resync, tb_ring_snapshot, tb_ring_drain_dead)
 * treats the shared memory as hostile: whatever a process of the same uid
 * writes into the control blocks, the sub-buffer descriptors, the packet
 * headers and the records, the consumer reports and skips, never crashes,
 * never reads out of bounds (run under `make test-asan`) and never loops
 * forever; every packet it does hand out is well formed (header checked,
 * content inside the packet, every record provably valid).
 *
 * Phase 1 (deterministic): a quiescent session; for each crafted corruption
 * (head behind tail, head far ahead, head on a sub-buffer boundary, wrapped
 * positions, unaligned tail, wrong magic/seq/cpu/uuid/instance, huge or
 * unaligned content_size, timestamps backwards, overflowing loss counters,
 * a corrupt registry) and then 1500 rounds of seeded random mutations
 * (bit flips, interesting values, random bytes), restore a pristine copy,
 * corrupt, run every consumer operation on every ring under a watchdog.
 * Phase 2 (concurrent, TB_HOSTILE_SECONDS, default 4): a producer process
 * writes both channels while a hostile process corrupts control blocks and
 * rings; this process consumes; it must make progress (good packets
 * delivered, corruption reported) and every call must return.
 * Seed: TB_HOSTILE_SEED (default 0x5eed).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "session/registry.h"
#include "ring/ring.h"
#include "core/walk.h"
#include "platform/clock.h"
#include "tbtest.h"

TB_EVENT(h, ev, (u64, seq), (u64, pad))

enum { CH_D = 0, CH_O = 1, NCH = 2 };
#define SB 4096u
#define NSB 4u

/* ---------------------------------------------------------------------- */
/* deterministic randomness                                                */
/* ---------------------------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t x = rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng = x;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---------------------------------------------------------------------- */
/* watchdog: a consumer call that does not return is a failure             */
/* ---------------------------------------------------------------------- */

static const char *volatile wd_what = "";

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: watchdog: a consumer call did not return (infinite loop?) in case: ";
	if (write(2, m, sizeof m - 1) < 0 || write(2, wd_what, strlen(wd_what)) < 0 || write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

/* ---------------------------------------------------------------------- */
/* the consumer under test                                                 */
/* ---------------------------------------------------------------------- */

struct stats {
	uint64_t ready_bad, copy_ok, copy_bad, cut, snap_pkts, snap_torn, dead_pkts, dead_bad, calls;
};

static struct tb_event_desc ev[TB_MAX_EVENTS];

struct emit_ctx {
	struct tb_session *s;
	unsigned ch, cpu;
	uint64_t *count;
};

/* Every packet the consumer hands out must be well formed, whatever the
 * shared memory held: checks the structure, and that every record up to
 * content_size is valid against the registry. */
static void check_good_packet(struct tb_session *s, unsigned ch, unsigned cpu, const uint8_t *pkt, uint64_t len,
			      const struct tb_packet_info *info, int cut_allowed, struct stats *st)
{
	struct tb_packet_header h;
	CHECK(len >= TB_PACKET_HEADER_SIZE && len <= s->chan[ch].sb_size && len % 8 == 0, "len %" PRIu64, len);
	memcpy(&h, pkt, sizeof h);
	CHECK(h.magic == TB_CTF_MAGIC, "magic %x", h.magic);
	CHECK(!memcmp(h.uuid, s->uuid, 16));
	CHECK(h.cpu_id == cpu && info->cpu == cpu, "cpu %llu/%u want %u", (unsigned long long)h.cpu_id, info->cpu, cpu);
	CHECK(h.stream_instance_id == (((uint64_t)ch << 32) | cpu));
	CHECK_EQ_U64(h.packet_seq_num, info->seq);
	CHECK_EQ_U64(h.packet_size, len * 8);
	CHECK(h.content_size % 8 == 0 && h.content_size >= TB_PACKET_HEADER_SIZE * 8 && h.content_size <= len * 8,
	      "content_size %" PRIu64 " of a %" PRIu64 "-byte packet", h.content_size, len);
	CHECK_EQ_U64(h.content_size / 8, info->content_bytes);
	CHECK(h.timestamp_begin <= h.timestamp_end && info->ts_begin <= info->ts_end);
	uint32_t nev = tb_registry_copy(s, ev, s->reg_capacity);
	struct tb_walk_result wr;
	tb_walk_packet(ev, nev, pkt, h.content_size / 8, h.timestamp_begin, tb_walk_ctx(s->chan[ch].vtid), NULL, NULL,
		       &wr);
	if (wr.error) {
		/* tb_ring_copy validates the header only: the walk is the
		 * caller's (the recorder cuts there); snapshots and dead rings
		 * are walked and cut by ring.c itself */
		CHECK(cut_allowed, "emitted packet has an invalid record: %s at %" PRIu64, wr.error, wr.error_off);
		st->cut++;
	} else {
		CHECK(wr.last_ts <= h.timestamp_end || cut_allowed, "record after timestamp_end");
	}
}

static struct stats *cur_stats;

static int on_packet(void *arg, const void *pkt, uint64_t len, const struct tb_packet_info *info)
{
	struct emit_ctx *e = arg;
	check_good_packet(e->s, e->ch, e->cpu, pkt, len, info, 0, cur_stats);
	(*e->count)++;
	return 0;
}

/* One round of every consumer operation on every ring; every loop bounded. */
static void consume_all(struct tb_session *s, uint8_t *buf, struct stats *st, int with_dead)
{
	cur_stats = st;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			const struct tb_chan_view *cv = &s->chan[ch];
			if (cv->mode != TB_MODE_OVERWRITE) {
				for (unsigned i = 0; i < 2 * cv->sb_count; i++) {
					uint64_t pos = 0;
					int rc = tb_ring_ready(s, ch, cpu, &pos);
					st->calls++;
					if (rc < 0) {
						CHECK(rc == -EBADMSG, "tb_ring_ready: %d", rc);
						st->ready_bad++;
						tb_ring_resync(s, ch, cpu);
						break;
					}
					if (rc == 0)
						break;
					CHECK(pos % cv->sb_size == 0, "ready gave unaligned position %" PRIu64, pos);
					struct tb_packet_info info;
					rc = tb_ring_copy(s, ch, cpu, pos, buf, &info);
					if (rc == 0) {
						st->copy_ok++;
						CHECK_EQ_U64(info.seq, pos >> cv->sb_shift);
						check_good_packet(s, ch, cpu, buf, cv->sb_size, &info, 1, st);
					} else {
						CHECK(rc == -EBADMSG, "tb_ring_copy: %d", rc);
						st->copy_bad++;
					}
					tb_ring_release(s, ch, cpu, pos);
				}
			}
			struct emit_ctx e = { s, ch, cpu, &st->snap_pkts };
			uint64_t torn = 0;
			int rc = tb_ring_snapshot(s, ch, cpu, on_packet, &e, &torn);
			st->calls++;
			CHECK(rc >= 0, "tb_ring_snapshot: %d", rc);
			st->snap_torn += torn;
			if (with_dead) {
				uint64_t bad = 0;
				e.count = &st->dead_pkts;
				rc = tb_ring_drain_dead(s, ch, cpu, on_packet, &e, &bad);
				st->calls++;
				CHECK(rc >= 0, "tb_ring_drain_dead: %d", rc);
				st->dead_bad += bad;
			}
		}
}

/* ---------------------------------------------------------------------- */
/* corruptions                                                             */
/* ---------------------------------------------------------------------- */

static uint64_t interesting(uint64_t S, uint64_t ring)
{
	static const uint64_t k[] = { 0, 1, 7, 8, 87, 88, 89, 0x8000000, 1ull << 31, 1ull << 32, 1ull << 63,
				      UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 87, UINT64_MAX - 88 };
	switch (below(8)) {
	case 0: return S;
	case 1: return S - 1;
	case 2: return S + 1;
	case 3: return ring;
	case 4: return ring * (1 + below(1000));
	case 5: return UINT64_MAX - S + 1 + below(S);
	case 6: return rnd();
	default: return k[below(sizeof k / sizeof k[0])];
	}
}

/* One random mutation of the control blocks, descriptors or rings. */
static void mutate(struct tb_session *s)
{
	unsigned ch = (unsigned)below(s->nchannels), cpu = (unsigned)below(s->ncpus);
	const struct tb_chan_view *cv = &s->chan[ch];
	uint64_t S = cv->sb_size, ring = cv->ring_mask + 1;
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	volatile uint64_t *q;
	uint8_t *ringp = tb_ring_of(s, ch, cpu);
	switch (below(10)) {
	case 0: /* a control block field (line 0..2) */
		q = (volatile uint64_t *)c + below(20);
		*q = below(2) ? interesting(S, ring) : *q + (uint64_t)((int64_t)below(4 * S) - (int64_t)(2 * S));
		break;
	case 1: { /* crafted positions relative to each other */
		uint64_t h = c->head, t = c->tail;
		switch (below(8)) {
		case 0: c->head = t - S; break;                         /* head behind tail */
		case 1: c->head = t + ring * (2 + below(100)); break;   /* far ahead */
		case 2: c->head = h & ~(S - 1); break;                  /* on a boundary */
		case 3: c->head = (h & ~(S - 1)) + below(88); break;    /* inside the header */
		case 4: c->tail = t + 1 + below(S - 1); break;          /* unaligned tail */
		case 5: c->head = UINT64_MAX - below(2 * S); c->st_end = c->head; break; /* wrapped */
		case 6: c->tail = (UINT64_MAX & ~(S - 1)) - S * below(4); break;
		default: c->st_end = h; c->ts_after = below(2) ? 0 : UINT64_MAX; break;
		}
		break;
	}
	case 2: /* a bit flip in a control block */
		((volatile uint8_t *)c)[below(192)] ^= (uint8_t)(1u << below(8));
		break;
	case 3: /* a sub-buffer descriptor */
		q = (volatile uint64_t *)ringp + below(cv->sb_count * 4);
		*q = interesting(S, ring);
		break;
	case 4: case 5: { /* a packet header field */
		uint8_t *sb = ringp + cv->data_off + below(cv->sb_count) * S;
		static const unsigned off[] = { TB_PKT_OFF_MAGIC, TB_PKT_OFF_UUID, TB_PKT_OFF_STREAM_ID,
						TB_PKT_OFF_INSTANCE, TB_PKT_OFF_TS_BEGIN, TB_PKT_OFF_TS_END,
						TB_PKT_OFF_CONTENT, TB_PKT_OFF_PACKET, TB_PKT_OFF_SEQ,
						TB_PKT_OFF_DISCARDED, TB_PKT_OFF_CPU };
		unsigned o = off[below(sizeof off / sizeof off[0])];
		uint64_t v;
		memcpy(&v, sb + o, 8);
		switch (below(4)) {
		case 0: v = interesting(S, ring); break;
		case 1: v ^= 1ull << below(64); break;
		case 2: v += 1; break;
		default: v -= 1; break;
		}
		memcpy(sb + o, &v, 8);
		break;
	}
	case 6: case 7: /* bit flips in records */
		for (int i = 0, n = 1 + (int)below(8); i < n; i++)
			ringp[cv->data_off + below(ring)] ^= (uint8_t)(1u << below(8));
		break;
	case 8: { /* random bytes over a range of a sub-buffer */
		uint64_t at = cv->data_off + below(ring), n = 1 + below(512);
		if (at + n > cv->ring_size)
			n = cv->ring_size - at;
		for (uint64_t i = 0; i < n; i++)
			ringp[at + i] = (uint8_t)rnd();
		break;
	}
	default: /* loss counters */
		(&c->lost_full)[below(8)] = interesting(S, ring);
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* phase 1: crafted and seeded corruptions of a quiescent session           */
/* ---------------------------------------------------------------------- */

static uint8_t *pristine;

static void restore(struct tb_session *s)
{
	memcpy(s->base, pristine, s->size);
}

/* the ring (ch, cpu) with the most data */
static unsigned busiest(struct tb_session *s, unsigned ch)
{
	unsigned best = 0;
	for (unsigned cpu = 1; cpu < s->ncpus; cpu++)
		if (tb_ctl_of(s, ch, cpu)->head > tb_ctl_of(s, ch, best)->head)
			best = cpu;
	return best;
}

static void run_case(struct tb_session *s, uint8_t *buf, const char *what, struct stats *st)
{
	wd_what = what;
	alarm(10);
	consume_all(s, buf, st, 1);
	alarm(0);
	restore(s);
}

static void set_hdr(struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos, unsigned off, uint64_t v, int w32)
{
	uint8_t *sb = tb_sb_at(s, ch, cpu, pos);
	if (w32) {
		uint32_t x = (uint32_t)v;
		memcpy(sb + off, &x, 4);
	} else {
		memcpy(sb + off, &v, 8);
	}
}

static void phase1(struct tb_session *s, uint8_t *buf)
{
	struct stats st;
	memset(&st, 0, sizeof st);
	unsigned cpu = busiest(s, CH_D);
	struct tb_ctl *c = tb_ctl_of(s, CH_D, cpu);
	uint64_t S = SB, ring = (uint64_t)SB * NSB, h0 = c->head;
	CHECK(h0 > S, "phase 1 needs a closed packet on the discard ring (head %" PRIu64 ")", h0);

	/* sanity: the pristine session consumes cleanly */
	run_case(s, buf, "pristine", &st);
	CHECK(st.copy_ok > 0 && st.ready_bad == 0 && st.copy_bad == 0 && st.snap_torn == 0 && st.dead_bad == 0,
	      "pristine: ok %" PRIu64 " bad %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64, st.copy_ok, st.ready_bad,
	      st.copy_bad, st.snap_torn, st.dead_bad);

	/* positions: tb_ring_ready must refuse each of these */
	static const struct { const char *what; int64_t dhead; uint64_t tail; } pos_cases[] = {
		{ "head behind tail", -(int64_t)SB, 2 * SB },
		{ "head more than a ring ahead", 3 * SB * NSB, 0 },
		{ "tail not sub-buffer aligned", 0, 100 },
	};
	for (size_t i = 0; i < sizeof pos_cases / sizeof pos_cases[0]; i++) {
		c->tail = pos_cases[i].tail;
		c->head = pos_cases[i].tail + 100 + (uint64_t)pos_cases[i].dhead;
		uint64_t pos;
		int rc = tb_ring_ready(s, CH_D, cpu, &pos);
		CHECK(rc == -EBADMSG, "%s: tb_ring_ready returned %d", pos_cases[i].what, rc);
		run_case(s, buf, pos_cases[i].what, &st);
	}

	/* positions that are legal for ready but impossible for a writer, and
	 * wrapped counters: every operation must return */
	const struct { const char *what; uint64_t head, tail, st_end; } w[] = {
		{ "head on a sub-buffer boundary", 2 * S, 0, 2 * S },
		{ "head inside a packet header", S + 10, 0, S + 10 },
		{ "head near 2^64", UINT64_MAX - 3, 0, UINT64_MAX - 3 },
		{ "head and tail near 2^64", (UINT64_MAX & ~(S - 1)) + 100, UINT64_MAX & ~(S - 1), 0 },
		{ "head wrapped past 2^64", 100, UINT64_MAX & ~(S - 1), 100 },
		{ "tail near 2^64", h0, UINT64_MAX & ~(S - 1), h0 },
		{ "head just below a ring past tail", ring - 1, 0, ring - 1 },
		{ "head exactly a ring past tail", ring + 100, 0, ring + 100 },
		{ "huge head, huge ring distance", 1ull << 62, 1ull << 40, 1ull << 62 },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		for (unsigned ch = 0; ch < NCH; ch++) {
			struct tb_ctl *cc = tb_ctl_of(s, ch, busiest(s, ch));
			cc->head = w[i].head;
			cc->tail = w[i].tail;
			cc->st_end = w[i].st_end;
		}
		run_case(s, buf, w[i].what, &st);
	}

	/* packet header of the oldest closed packet: tb_ring_copy must refuse */
	uint64_t P = c->tail;
	struct { const char *what; unsigned off; uint64_t v; int w32; } hc[] = {
		{ "bad magic", TB_PKT_OFF_MAGIC, 0xC1FC1FC0u, 1 },
		{ "uuid of another session", TB_PKT_OFF_UUID, 0x1234, 0 },
		{ "stream id 1", TB_PKT_OFF_STREAM_ID, 1, 1 },
		{ "instance of another ring", TB_PKT_OFF_INSTANCE, ((uint64_t)CH_O << 32) | cpu, 0 },
		{ "wrong sequence number", TB_PKT_OFF_SEQ, (P >> 12) + NSB, 0 },
		{ "wrong cpu", TB_PKT_OFF_CPU, cpu + 1, 0 },
		{ "cpu in the high half", TB_PKT_OFF_CPU, (1ull << 32) | cpu, 0 },
		{ "huge content_size", TB_PKT_OFF_CONTENT, UINT64_MAX, 0 },
		{ "content_size past the packet", TB_PKT_OFF_CONTENT, (uint64_t)(SB + 8) * 8, 0 },
		{ "content_size not whole bytes", TB_PKT_OFF_CONTENT, 1000 * 8 + 3, 0 },
		{ "content_size inside the header", TB_PKT_OFF_CONTENT, 80 * 8, 0 },
		{ "packet_size not the sub-buffer", TB_PKT_OFF_PACKET, (uint64_t)SB * 16, 0 },
		{ "packet_size 0", TB_PKT_OFF_PACKET, 0, 0 },
		{ "timestamp_end before begin", TB_PKT_OFF_TS_END, 0, 0 },
	};
	for (size_t i = 0; i < sizeof hc / sizeof hc[0]; i++) {
		set_hdr(s, CH_D, cpu, P, hc[i].off, hc[i].v, hc[i].w32);
		uint64_t pos;
		CHECK(tb_ring_ready(s, CH_D, cpu, &pos) == 1 && pos == P, "%s", hc[i].what);
		struct tb_packet_info info;
		int rc = tb_ring_copy(s, CH_D, cpu, P, buf, &info);
		CHECK(rc == -EBADMSG, "%s: tb_ring_copy returned %d", hc[i].what, rc);
		/* the same corruption on every sub-buffer of every ring */
		for (unsigned ch = 0; ch < NCH; ch++)
			for (unsigned k = 0; k < s->ncpus; k++)
				for (unsigned b = 0; b < NSB; b++)
					set_hdr(s, ch, k, (uint64_t)b * SB, hc[i].off,
						hc[i].off == TB_PKT_OFF_SEQ ? b + NSB : hc[i].v, hc[i].w32);
		run_case(s, buf, hc[i].what, &st);
	}

	/* descriptors, loss counters, registry */
	for (unsigned ch = 0; ch < NCH; ch++)
		for (unsigned k = 0; k < s->ncpus; k++) {
			struct tb_sbdesc *d = tb_sbdesc_of(s, ch, k);
			for (unsigned b = 0; b < NSB; b++) {
				d[b].cnt_begin = UINT64_MAX;
				d[b].cnt_end = 0;
				d[b].disc_begin = UINT64_MAX;
			}
		}
	run_case(s, buf, "descriptors cnt_begin > cnt_end", &st);
	for (unsigned ch = 0; ch < NCH; ch++)
		for (unsigned k = 0; k < s->ncpus; k++) {
			struct tb_ctl *cc = tb_ctl_of(s, ch, k);
			cc->lost_full = cc->lost_toobig = cc->lost_overwritten = cc->lost_timeout = cc->lost_busy =
				UINT64_MAX / 2;
		}
	run_case(s, buf, "loss counters that overflow when summed", &st);
	s->reg->count = UINT32_MAX;
	for (uint32_t i = 0; i < s->reg_capacity; i++) {
		struct tb_event_desc *e = &s->reg->events[i];
		e->nfields = i & 1 ? 1000 : e->nfields;
		e->fields[0].type = i & 2 ? 999 : TB_FT_STRING;
		e->fields[0].max_len = UINT32_MAX;
		e->state = 1;
	}
	run_case(s, buf, "corrupt registry", &st);

	/* record bytes: the walkers must cut, never run past content */
	for (int i = 0; i < 200; i++) {
		for (unsigned ch = 0; ch < NCH; ch++) {
			uint8_t *r = tb_ring_of(s, ch, busiest(s, ch)) + s->chan[ch].data_off;
			for (int k = 0; k < 16; k++) {
				uint64_t at = below(ring);
				if (at % SB >= TB_PACKET_HEADER_SIZE)
					r[at] = (uint8_t)rnd();
			}
		}
		run_case(s, buf, "random record bytes", &st);
	}

	/* seeded random mutations */
	char what[64];
	for (int i = 0; i < 1500; i++) {
		int n = 1 + (int)below(6);
		snprintf(what, sizeof what, "random round %d (%d mutations)", i, n);
		for (int k = 0; k < n; k++)
			mutate(s);
		run_case(s, buf, what, &st);
	}
	printf("ok: phase 1: %" PRIu64 " calls; ready refused %" PRIu64 ", copies ok %" PRIu64 " refused %" PRIu64
	       " (records cut %" PRIu64 "), snapshot packets %" PRIu64 " dropped %" PRIu64 ", dead-ring packets %" PRIu64
	       " dropped %" PRIu64 "\n",
	       st.calls, st.ready_bad, st.copy_ok, st.copy_bad, st.cut, st.snap_pkts, st.snap_torn, st.dead_pkts,
	       st.dead_bad);
	CHECK(st.ready_bad > 0 && st.copy_bad > 0 && st.snap_torn > 0 && st.dead_bad > 0);
}

/* ---------------------------------------------------------------------- */
/* phase 2: producers and a hostile process at the same time               */
/* ---------------------------------------------------------------------- */

static void producer_child(int id_ev, volatile int *stop)
{
	uint64_t seq = 0;
	while (!*stop) {
		for (int i = 0; i < 64; i++, seq++) {
			uint64_t p[2] = { seq, 0 };
			tb_write(seq & 1 ? CH_O : CH_D, (uint32_t)id_ev, p, (seq & 7) ? 16 : 8);
		}
		struct timespec ts = { 0, 100000 }; /* 100 us: leave CPU to the other engineer */
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

static void hostile_child(struct tb_session *s, volatile int *stop)
{
	while (!*stop) {
		for (int k = 0, n = 1 + (int)below(4); k < n; k++)
			mutate(s);
		struct timespec ts = { 0, (long)(20000 + below(300000)) };
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

static void phase2(struct tb_session *s, uint8_t *buf, int id_ev, double secs)
{
	volatile int *stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(stop != MAP_FAILED);
	*stop = 0;
	fflush(NULL);
	pid_t prod = fork();
	CHECK(prod >= 0);
	if (prod == 0)
		producer_child(id_ev, stop);
	rng ^= 0x9e3779b97f4a7c15ull; /* the hostile process's own sequence */
	pid_t host = fork();
	CHECK(host >= 0);
	if (host == 0)
		hostile_child(s, stop);

	struct stats st;
	memset(&st, 0, sizeof st);
	uint64_t t0 = tb_mono_ns(), end = t0 + (uint64_t)(secs * 1e9), rounds = 0, slowest = 0;
	wd_what = "phase 2 (concurrent)";
	/* at least 20 rounds and `secs` seconds, however slow the machine (a
	 * sanitizer, other work): a round that hangs is caught by alarm(10) */
	while (tb_mono_ns() < end || rounds < 20) {
		uint64_t a = tb_mono_ns();
		alarm(10);
		consume_all(s, buf, &st, (rounds & 7) == 0);
		alarm(0);
		uint64_t b = tb_mono_ns() - a;
		if (b > slowest)
			slowest = b;
		rounds++;
		struct timespec ts = { 0, 300000 };
		nanosleep(&ts, NULL);
	}
	*stop = 1;
	int stp = 0, sth = 0;
	CHECK(waitpid(prod, &stp, 0) == prod && waitpid(host, &sth, 0) == host);
	printf("ok: phase 2: %.1f s, %" PRIu64 " rounds (slowest %.2f ms), %" PRIu64 " calls; ready refused %" PRIu64
	       ", copies ok %" PRIu64 " refused %" PRIu64 " (records cut %" PRIu64 "), snapshot packets %" PRIu64
	       " dropped %" PRIu64 ", dead-ring packets %" PRIu64 " dropped %" PRIu64 "\n",
	       (double)(tb_mono_ns() - t0) / 1e9, rounds, (double)slowest / 1e6, st.calls, st.ready_bad, st.copy_ok,
	       st.copy_bad, st.cut, st.snap_pkts, st.snap_torn, st.dead_pkts, st.dead_bad);
	/* the producer writes into rings the hostile process rewrites: it
	 * must still not crash (its stores are masked into its ring) */
	CHECK(WIFEXITED(stp) && WEXITSTATUS(stp) == 0, "producer process: status 0x%x (signal %d)", stp,
	      WIFSIGNALED(stp) ? WTERMSIG(stp) : 0);
	CHECK(WIFEXITED(sth) && WEXITSTATUS(sth) == 0, "hostile process: status 0x%x", sth);
	CHECK(st.copy_ok + st.snap_pkts > 0, "no good packet delivered: the consumer made no progress");
	CHECK(st.ready_bad + st.copy_bad + st.snap_torn + st.dead_bad > 0, "the corruption was never noticed");
	munmap((void *)stop, 4096);
}

int main(void)
{
	const char *e = getenv("TB_HOSTILE_SEED");
	rng = e && *e ? strtoull(e, NULL, 0) : 0x5eed;
	if (!rng)
		rng = 1;
	e = getenv("TB_HOSTILE_SECONDS");
	double secs = e && *e ? atof(e) : 4.0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed 0x%" PRIx64 " (TB_HOSTILE_SEED), phase 2 %.1f s (TB_HOSTILE_SECONDS)\n", rng, secs);
	signal(SIGALRM, on_alarm);

	struct tb_channel_opts co[NCH] = {
		{ .size = sizeof co[0], .name = "d", .sb_size = SB, .sb_count = NSB, .mode = TB_DISCARD },
		{ .size = sizeof co[0], .name = "o", .sb_size = SB, .sb_count = NSB, .mode = TB_OVERWRITE },
	};
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = NCH, .channels = co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	int id = tb_event_id("h:ev");
	CHECK(id > 0, "%d", id);

	/* data on every CPU we may run on: a few packets in each ring */
	cpu_set_t old;
	sched_getaffinity(0, sizeof old, &old);
	for (int cpu = 0; cpu < CPU_SETSIZE && (unsigned)cpu < s->ncpus; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof one, &one) != 0)
			continue;
		for (uint64_t i = 0; i < 600; i++) {
			uint64_t p[2] = { i, 0 };
			int rc = tb_write(CH_D, (uint32_t)id, p, 16);
			CHECK(rc == 0 || rc == -ENOSPC, "%d", rc);
			rc = tb_write(CH_O, (uint32_t)id, p, 16);
			CHECK(rc == 0, "%d", rc);
		}
	}
	sched_setaffinity(0, sizeof old, &old);

	uint8_t *buf = malloc(SB);
	pristine = malloc(s->size);
	CHECK(buf && pristine);
	memcpy(pristine, s->base, s->size);
	phase1(s, buf);
	phase2(s, buf, id, secs);
	free(pristine);
	free(buf);
	tb_producer_use(NULL);
	tb_session_unlink(s);
	tb_session_close(s);
	printf("ok\n");
	return 0;
}
