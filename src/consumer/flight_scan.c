/* SPDX-License-Identifier: MIT */
/*
 * flight_scan.c - the scan thread of --snapshot-on (docs/FLIGHT-RECORDER.md,
 * "Triggers on an event"): the producers are not touched; the recorder reads
 * what they committed.
 *
 *   scan_ring()   the records committed since the last pass in one ring:
 *                 copied and checked with tb_ring_peek() (a packet reused
 *                 during the copy is dropped, never trusted), walked with
 *                 tb_walk_packet_want() from where the last pass stopped:
 *                 only records of a class some condition names reach
 *                 on_record() (the others take the walk's fast path, as
 *                 when a snapshot validates them); what producers
 *                 overwrote before the scan reached it is counted (unscanned)
 *   on_record()   an event condition: evaluated at once; a span begin/end:
 *                 queued, then sorted by time across rings (a thread that
 *                 moved to another CPU between its begin and end) and
 *                 matched per (tid, span) in process_spans() (the table:
 *                 flight_span.c)
 *   scan_main()   a pass every period (20 ms; sooner, down to 1 ms, when the
 *                 fastest ring would advance more than a quarter of its size
 *                 meanwhile at the rate it had), until stopped, then a last
 *                 pass
 *   fire()        a trigger into the flight thread's queue (flight.c): rate
 *                 limit, window, snapshot as every trigger; one request per
 *                 condition and pass, and one pending per condition (more
 *                 matches meanwhile are in that snapshot: coalesced)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tracebuf/session.h>

#include "consumer/flight_impl.h"
#include "core/classes.h"
#include "core/walk.h"
#include "platform/clock.h"
#include "ring/ring.h"

#define SPAN_QUEUE_MIN 4096u /* span records waiting to be sorted across rings: grows */
#define SPAN_QUEUE_MAX (1u << 20) /* ... up to this (32 MiB); then processed as they are */
#define HORIZON_NS 2000000ull /* span records younger than this wait a pass (rings read one by one) */

struct ring_scan {
	uint64_t P;          /* packet being read */
	uint64_t off;        /* bytes of it walked; 0: not opened yet */
	uint64_t clock;      /* stream clock at off */
	uint64_t cnt_next;   /* events of the ring before `off` (cnt_begin + walked) */
	uint64_t pos_done;   /* ring position up to which records were walked (or skipped as invalid) */
	uint32_t pid, tid;   /* the writer of the records at off (tracebuf:thread) */
	int started, bad;    /* bad: an undecodable record: the rest of P is skipped */
	uint64_t last_head;
	uint64_t visit_ns;   /* monotonic time of the previous visit (0: none yet) */
};

/* A ring cannot have been written faster than this many bytes per ns (64 GB/s,
 * far above one CPU's store rate): what a forged head says was skipped is
 * believed only up to it (see scan_ring()). */
#define TB_SCAN_MAX_BYTES_PER_NS 64u

struct span_rec {
	uint64_t ts;
	uint32_t tid, pid, cpu, cls;
	uint16_t cond;
	uint8_t end;
};


struct cls_role {
	uint16_t n;          /* conditions naming this class */
	uint32_t first;      /* index in scan->uses */
};

struct cond_use {
	uint16_t cond;
	int8_t role;         /* 0 event, 1 span begin, 2 span end */
	unsigned fidx[TB_FLIGHT_CMP_MAX];
};

struct tb_flight_scan {
	struct tb_flight *f;
	struct tb_session *s;
	pthread_t th;
	int started;
	struct tb_event_desc *ev;  /* the registry's classes so far */
	uint32_t nev, capev;
	struct cls_role *role;     /* [capev] */
	uint8_t *want;             /* [capev]: on_record() wants this class (tracebuf:thread, or some condition names it) */
	struct cond_use *uses;
	uint32_t nuses, capuses;
	struct ring_scan *rings;   /* [nchannels * ncpus] */
	uint8_t *buf;              /* largest sub-buffer */
	unsigned ch, cpu;          /* the ring on_record() reads */
	struct ring_scan *cur;
	uint64_t advanced_max;     /* this pass: the largest advance / ring size, in 1/1024 */
	struct span_rec *q;
	uint32_t nq, capq;
	struct tb_span_table *spans;
	void (*request)(struct tb_flight *f, const struct tb_flight_trigger *t);
	int said_full, said_deep, said_q, said_notid;
	uint64_t unsaid, said_at; /* unscanned events not said yet; when last said (monotonic) */
	uint64_t pass_events, pass_matched, pass_unscanned, pass_invalid, pass_untracked, pass_coalesced;
	uint8_t fired[TB_FLIGHT_COND_MAX]; /* this pass: a request of that condition was made */
};

static void add_stats(struct tb_flight_scan *x)
{
	struct tb_flight *f = x->f;
	pthread_mutex_lock(&f->lock);
	f->st.scanned += x->pass_events;
	f->st.matched += x->pass_matched;
	f->st.unscanned += x->pass_unscanned;
	f->st.invalid += x->pass_invalid;
	f->st.span_untracked += x->pass_untracked;
	f->st.triggers += x->pass_coalesced;
	f->st.coalesced += x->pass_coalesced;
	pthread_mutex_unlock(&f->lock);
	x->pass_events = x->pass_matched = x->pass_unscanned = x->pass_invalid = x->pass_untracked = 0;
	x->pass_coalesced = 0;
	memset(x->fired, 0, sizeof x->fired);
}

static uint64_t ticks_to_ns(const struct tb_session *s, uint64_t t)
{
	return (uint64_t)((long double)t * 1e9L / (long double)s->clock_freq);
}

static uint64_t realtime_of(const struct tb_session *s, uint64_t ticks)
{
	long double rt = (long double)s->clock_offset_ns + (long double)ticks * 1e9L / (long double)s->clock_freq;
	uint64_t now = tb_flight_realtime_ns();
	return rt > 0 && rt <= (long double)now + 1e9L ? (uint64_t)rt : now;
}

static void fire(struct tb_flight_scan *x, unsigned ci, uint32_t cls, uint32_t cpu, uint32_t pid, uint32_t tid,
		 uint64_t ts, uint64_t dur_ns)
{
	struct tb_flight *f = x->f;
	const struct tb_flight_cond *c = &f->cfg.conds[ci];
	x->pass_matched++;
	if (x->fired[ci]) {
		/* one request per condition and pass: the others are in the
		 * snapshot it takes (coalesced), and cost no wake */
		x->pass_coalesced++;
		return;
	}
	x->fired[ci] = 1;
	struct tb_flight_trigger t;
	memset(&t, 0, sizeof t);
	t.kind = c->kind;
	snprintf(t.name, sizeof t.name, "%.63s", c->text);
	snprintf(t.cond, sizeof t.cond, "%s", c->text);
	snprintf(t.cls, sizeof t.cls, "%s", cls < x->nev ? x->ev[cls].name : "?");
	t.cond_idx = ci + 1;
	t.cpu = cpu;
	t.pid = pid;
	t.tid = tid;
	t.ticks = ts;
	t.dur_ns = dur_ns;
	t.realtime_ns = realtime_of(x->s, ts);
	x->request(f, &t);
}

/* The classes registered since the last look: copied, and the conditions that name each. */
static void refresh_classes(struct tb_flight_scan *x)
{
	struct tb_session *s = x->s;
	uint32_t n = tb_registry_count(s);
	if (n <= x->nev)
		return;
	if (n > x->capev) {
		uint32_t cap = x->capev ? x->capev : 16;
		while (cap < n)
			cap *= 2;
		struct tb_event_desc *ev = realloc(x->ev, (size_t)cap * sizeof *ev);
		struct cls_role *ro = ev ? realloc(x->role, (size_t)cap * sizeof *ro) : NULL;
		if (ev)
			x->ev = ev;
		if (ro)
			x->role = ro;
		uint8_t *wa = ro ? realloc(x->want, cap) : NULL;
		if (!wa)
			return; /* out of memory: these classes stay unknown (their records end a walk) */
		x->want = wa;
		x->capev = cap;
	}
	uint32_t from = x->nev;
	uint32_t got = tb_registry_copy_from(s, x->ev, from, x->capev);
	if (got <= from)
		return;
	struct tb_flight *f = x->f;
	for (uint32_t id = from; id < got; id++) {
		struct tb_event_desc *e = &x->ev[id];
		x->role[id].n = 0;
		x->role[id].first = x->nuses;
		x->want[id] = 0;
		if (e->state != 1)
			continue;
		for (unsigned ci = 0; ci < f->cfg.nconds; ci++) {
			struct cond_use u;
			memset(&u, 0, sizeof u);
			int role;
			unsigned bad = 0;
			const char *why = NULL;
			int r = tb_flight_cond_class(&f->cfg.conds[ci], e->name, e->fields, e->nfields, u.fidx, &role, &bad,
						     &why);
			if (r < 0) {
				tb_flight_say(f, "--snapshot-on '%s': class %s %s ('%s' at position %u): the condition never "
					      "fires on its events", f->cfg.conds[ci].text, e->name, why,
					      f->cfg.conds[ci].cmp[bad].field, f->cfg.conds[ci].cmp[bad].pos + 1);
				continue;
			}
			if (!r)
				continue;
			if (x->nuses == x->capuses) {
				uint32_t cap = x->capuses ? x->capuses * 2 : 16;
				struct cond_use *nu = realloc(x->uses, (size_t)cap * sizeof *nu);
				if (!nu)
					break;
				x->uses = nu;
				x->capuses = cap;
			}
			u.cond = (uint16_t)ci;
			u.role = (int8_t)role;
			if (x->role[id].n == 0)
				x->role[id].first = x->nuses;
			x->uses[x->nuses++] = u;
			x->role[id].n++;
		}
	}
	for (uint32_t id = from; id < got; id++)
		x->want[id] = id == TB_EVENT_ID_THREAD || x->role[id].n;
	x->nev = got;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span_rec *p = a, *q = b;
	return p->ts < q->ts ? -1 : p->ts > q->ts;
}

/* The queued span records up to `horizon` (ticks), in time order. */
static void process_spans(struct tb_flight_scan *x, uint64_t horizon)
{
	if (!x->nq)
		return;
	qsort(x->q, x->nq, sizeof *x->q, cmp_span);
	uint32_t i = 0;
	for (; i < x->nq && x->q[i].ts <= horizon; i++) {
		const struct span_rec *r = &x->q[i];
		if (!r->end) {
			int rc = tb_span_begin(x->spans, r->tid, r->cond, r->ts);
			if (rc < 0 && !x->said_full++)
				tb_flight_say(x->f, "%u spans are open at once: a new one is not timed (counted as "
					      "untracked; said once)", tb_span_open(x->spans));
			if (rc > 0 && !x->said_deep++)
				tb_flight_say(x->f, "spans of one name nest deeper than %u on thread %" PRIu32 ": the inner "
					      "ones are not timed (said once)", TB_SPAN_DEPTH, r->tid);
			x->pass_untracked += rc != 0;
			continue;
		}
		uint64_t b = 0;
		if (!tb_span_end(x->spans, r->tid, r->cond, &b))
			continue; /* an end whose begin the scan did not see, or too deep: not timed */
		if (r->ts < b)
			continue;
		uint64_t dur = ticks_to_ns(x->s, r->ts - b);
		if (dur > x->f->cfg.conds[r->cond].dur_ns)
			fire(x, r->cond, r->cls, r->cpu, r->pid, r->tid, r->ts, dur);
	}
	memmove(x->q, x->q + i, (x->nq - i) * sizeof *x->q);
	x->nq -= i;
}

static int on_record(void *arg, const struct tb_walk_rec *r)
{
	struct tb_flight_scan *x = arg;
	struct ring_scan *rs = x->cur;
	if (r->id == TB_EVENT_ID_THREAD) {
		if (r->payload_len >= 8) {
			memcpy(&rs->pid, r->payload, 4);
			memcpy(&rs->tid, r->payload + 4, 4);
		}
		return 0;
	}
	if (r->id >= x->nev || !x->role[r->id].n)
		return 0; /* the common case: a class no condition names */
	uint32_t tid = r->vtid ? r->vtid : rs->tid;
	const struct cls_role *ro = &x->role[r->id];
	for (unsigned k = 0; k < ro->n; k++) {
		const struct cond_use *u = &x->uses[ro->first + k];
		if (u->role == 0) {
			if (tb_flight_cond_eval(&x->f->cfg.conds[u->cond], u->fidx, &x->ev[r->id], r->payload,
						r->payload_len))
				fire(x, u->cond, r->id, x->cpu, rs->pid, tid, r->ts, 0);
			continue;
		}
		if (!tid) {
			/* a channel without attribution or vtid: whose span is it? */
			x->pass_untracked += u->role == 1;
			if (!x->said_notid++)
				tb_flight_say(x->f, "--snapshot-on '%s': records of channel %s say no thread (no attribution, "
					      "no vtid): its spans are not timed (said once)", x->f->cfg.conds[u->cond].text,
					      x->s->chan[x->ch].name);
			continue;
		}
		if (x->nq == x->capq) {
			struct span_rec *nq = x->capq < SPAN_QUEUE_MAX ? realloc(x->q, 2 * (size_t)x->capq * sizeof *nq) : NULL;
			if (nq) {
				x->q = nq;
				x->capq *= 2;
			} else {
				/* the rings not read yet this pass may hold older
				 * span records: a thread that moved to another CPU
				 * between its begin and end may be timed wrong */
				if (!x->said_q++)
					tb_flight_say(x->f, "more than %u span records in one scan pass: timed in the order "
						      "read (said once)", x->capq);
				process_spans(x, UINT64_MAX);
			}
		}
		x->q[x->nq++] = (struct span_rec){ r->ts, tid, rs->pid, x->cpu, r->id, u->cond, (uint8_t)(u->role == 2) };
	}
	return 0;
}

/* A gap in what the scan saw: a span open across it may have lost its end
 * (a later end would time the wrong begin), so none stays open. */
static void spans_gap(struct tb_flight_scan *x)
{
	x->pass_untracked += tb_span_clear(x->spans);
}

static void scan_ring(struct tb_flight_scan *x, unsigned ch, unsigned cpu)
{
	struct tb_session *s = x->s;
	const struct tb_chan_view *cv = &s->chan[ch];
	struct ring_scan *rs = &x->rings[ch * s->ncpus + cpu];
	uint64_t S = cv->sb_size, span = (uint64_t)(cv->sb_count - 1) * S;
	/* the bytes this ring can really have advanced since the previous visit:
	 * the control block's head is shared memory, and a forged one (a jump of
	 * 2^40) would make the unscanned count up from nothing; a first visit
	 * believes one ring's worth (the start position is within it) */
	uint64_t now = tb_mono_ns();
	uint64_t plausible = 2 * (cv->ring_mask + 1);
	if (rs->visit_ns && now > rs->visit_ns) {
		uint64_t dt = now - rs->visit_ns;
		plausible += dt < UINT64_MAX / TB_SCAN_MAX_BYTES_PER_NS / 2 ? dt * TB_SCAN_MAX_BYTES_PER_NS : UINT64_MAX / 2;
	}
	rs->visit_ns = now;
	x->ch = ch;
	x->cpu = cpu;
	x->cur = rs;
	uint64_t head = __atomic_load_n(&tb_ctl_of(s, ch, cpu)->head, __ATOMIC_RELAXED);
	if (head == 0)
		return;
	if (head > rs->last_head) {
		uint64_t adv = (head - rs->last_head) * 1024 / (cv->ring_mask + 1);
		if (adv > x->advanced_max)
			x->advanced_max = adv;
	}
	rs->last_head = head;
	if (!rs->started) {
		uint64_t cur = head & ~(S - 1);
		rs->P = cur > span ? cur - span : 0;
		rs->off = 0;
		rs->cnt_next = 0;
		rs->pos_done = 0;
		rs->started = 1;
	}
	int lost = 0;
	for (unsigned guard = 0; guard < 2 * cv->sb_count + 4; guard++) {
		uint64_t end = 0;
		int closed = 0;
		struct tb_packet_info info;
		int rc = tb_ring_peek(s, ch, cpu, rs->P, rs->off, x->buf, &end, &closed, &info);
		if (rc == 2)
			return;
		if (rc == 1) {
			/* overwritten before (or while) the scan read it: on to the
			 * oldest packet the ring holds now; the events between are
			 * counted when its cnt_begin is known */
			uint64_t h = __atomic_load_n(&tb_ctl_of(s, ch, cpu)->head, __ATOMIC_ACQUIRE);
			uint64_t cur = h & ~(S - 1), oldest = cur > span ? cur - span : 0;
			rs->P = oldest > rs->P + S ? oldest : rs->P + S;
			rs->off = 0;
			rs->bad = 0;
			lost = 1;
			continue;
		}
		if (rc < 0) {
			x->pass_invalid++;
			rs->P += S;
			rs->pos_done = rs->P; /* its events are undecodable, not unscanned */
			rs->off = 0;
			rs->bad = 0;
			continue;
		}
		if (rs->off == 0) {
			if (lost || info.cnt_begin != rs->cnt_next) {
				if (info.cnt_begin > rs->cnt_next) {
					/* the descriptor is shared memory: no more events
					 * than the skipped bytes could hold (a record is
					 * at least a 4-byte header) */
					uint64_t n = info.cnt_begin - rs->cnt_next;
					uint64_t gap = rs->P > rs->pos_done ? rs->P - rs->pos_done : 0;
					uint64_t most = (gap < plausible ? gap : plausible) / TB_COMPACT_HDR_SIZE;
					x->pass_unscanned += n < most ? n : most;
					spans_gap(x);
				}
				lost = 0;
			}
			rs->off = TB_PACKET_HEADER_SIZE;
			rs->clock = info.ts_begin;
			rs->cnt_next = info.cnt_begin;
			rs->pid = rs->tid = 0;
			rs->bad = 0;
		}
		if (!rs->bad && end > rs->off) {
			/* walk [off, end) as a packet whose records start at off:
			 * the walker reads nothing before TB_PACKET_HEADER_SIZE */
			const uint8_t *pkt = x->buf + rs->off - TB_PACKET_HEADER_SIZE;
			struct tb_walk_result wr;
			for (int again = 0;; again++) {
				tb_walk_packet_want(x->ev, x->nev, pkt, end - rs->off + TB_PACKET_HEADER_SIZE, rs->clock,
						    tb_walk_ctx(cv->vtid), on_record, x, x->want, x->nev, &wr);
				x->pass_events += wr.events;
				rs->off += wr.valid_end - TB_PACKET_HEADER_SIZE;
				rs->pos_done = rs->P + rs->off;
				rs->clock = wr.last_ts;
				rs->cnt_next += wr.events;
				pkt = x->buf + rs->off - TB_PACKET_HEADER_SIZE;
				if (!wr.error || again || strcmp(wr.error, "unknown event id") != 0)
					break;
				refresh_classes(x); /* a class registered since: once more */
			}
			if (wr.error) {
				x->pass_invalid++;
				rs->bad = 1;
			}
		}
		if (!closed)
			return;
		/* closed and read: the next packet (the events a damaged
		 * tail hid are not counted as unscanned: they were invalid) */
		rs->P += S;
		rs->off = 0;
		rs->pos_done = rs->P;
		if (rs->bad)
			lost = 0;
	}
}

static void scan_pass(struct tb_flight_scan *x, int last)
{
	struct tb_session *s = x->s;
	/* records committed after this are younger than it minus a few ns:
	 * the cs that timestamps a record also commits it */
	uint64_t now = tb_clock_read(s->clock_kind);
	refresh_classes(x);
	x->advanced_max = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
			scan_ring(x, ch, cpu);
	uint64_t hz = (uint64_t)((long double)HORIZON_NS * (long double)s->clock_freq / 1e9L);
	process_spans(x, last ? UINT64_MAX : now > hz ? now - hz : 0);
	/* said at most once a second (a pass can come every ms) */
	x->unsaid += x->pass_unscanned;
	uint64_t mono = tb_mono_ns();
	if (x->unsaid && (last || mono - x->said_at >= 1000000000ull)) {
		tb_flight_say(x->f, "--snapshot-on: %" PRIu64 " events were overwritten before the scan read them (not "
			      "evaluated: a larger --sb-count, or a lower rate)", x->unsaid);
		x->unsaid = 0;
		x->said_at = mono;
	}
	add_stats(x);
}

static int scan_stopping(struct tb_flight *f)
{
	pthread_mutex_lock(&f->lock);
	int st = f->scan_stop;
	pthread_mutex_unlock(&f->lock);
	return st;
}

static void *scan_main(void *arg)
{
	struct tb_flight_scan *x = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	uint64_t period = x->f->cfg.scan_period_ns ? x->f->cfg.scan_period_ns : 20000000ull;
	uint64_t last = tb_mono_ns();
	while (!scan_stopping(x->f)) {
		uint64_t start = tb_mono_ns(), elapsed = start - last;
		last = start;
		scan_pass(x, 0);
		/* come back before the fastest ring advances a quarter of its
		 * size at the rate it just had (a ring lapping the scan loses
		 * records to it), between 1 ms and the period */
		uint64_t wait = period;
		if (x->advanced_max && elapsed * 256 / x->advanced_max < period)
			wait = elapsed * 256 / x->advanced_max;
		if (wait < 1000000ull)
			wait = 1000000ull;
		struct timespec ts = { (time_t)(wait / 1000000000ull), (long)(wait % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
	/* what the scan cost (the summary says it) */
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	pthread_mutex_lock(&x->f->lock);
	x->f->st.scan_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	pthread_mutex_unlock(&x->f->lock);
	return NULL;
}

int tb_flight_scan_start(struct tb_flight *f, void (*request)(struct tb_flight *f, const struct tb_flight_trigger *t))
{
	if (!f->cfg.nconds)
		return 0;
	struct tb_session *s = f->s;
	struct tb_flight_scan *x = calloc(1, sizeof *x);
	if (!x)
		return tb_fail(-ENOMEM, "out of memory");
	x->f = f;
	x->s = s;
	x->request = request;
	uint64_t maxsb = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		if (s->chan[ch].sb_size > maxsb)
			maxsb = s->chan[ch].sb_size;
	size_t nrings = (size_t)s->nchannels * s->ncpus;
	x->rings = calloc(nrings ? nrings : 1, sizeof *x->rings);
	x->buf = malloc(maxsb + 8);
	x->capq = SPAN_QUEUE_MIN;
	x->q = malloc(SPAN_QUEUE_MIN * sizeof *x->q);
	x->spans = tb_span_table_new();
	if (!x->rings || !x->buf || !x->q || !x->spans) {
		f->scan = x;
		tb_flight_scan_stop(f);
		return tb_fail(-ENOMEM, "out of memory");
	}
	f->scan = x;
	int rc = pthread_create(&x->th, NULL, scan_main, x);
	if (rc) {
		tb_flight_scan_stop(f);
		return tb_fail(-rc, "cannot start the --snapshot-on scan thread: %s", strerror(rc));
	}
	x->started = 1;
	return 0;
}

void tb_flight_scan_stop(struct tb_flight *f)
{
	struct tb_flight_scan *x = f->scan;
	if (!x)
		return;
	if (x->started) {
		pthread_mutex_lock(&f->lock);
		f->scan_stop = 1;
		pthread_mutex_unlock(&f->lock);
		pthread_join(x->th, NULL);
		x->started = 0;
		scan_pass(x, 1); /* what was written up to now: the program is gone */
	}
	f->scan = NULL;
	free(x->ev);
	free(x->role);
	free(x->want);
	free(x->uses);
	free(x->rings);
	free(x->buf);
	free(x->q);
	tb_span_table_free(x->spans);
	free(x);
}
