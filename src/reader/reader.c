/* SPDX-License-Identifier: MIT */
/*
 * reader.c - iterate a trace's events merged by time (see
 * include/tracebuf/reader.h and docs/READER.md), over the packet index
 * index.c built when the trace was opened.
 *
 * Each stream decodes its next item in place into its `cur` slot
 * (stream_advance); a binary min-heap of streams keyed by (timestamp,
 * stream index) yields them in order.  The stream whose item was returned
 * last is advanced lazily at the next call, so the returned pointer stays
 * valid until then.  Only the packets the index found valid are read, and
 * every read of mapped data is bounds-checked against the packet's content
 * (which index.c checked against the file size).  Also here: the thread
 * names the iteration passes, and seeking.  Random access is access.c, text
 * rendering render.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "core/format.h"
#include "core/record.h"
#include "reader/reader_impl.h"
#include "reader/tsdl.h"

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* ---------------------------------------------------------------------- */
/* decoding                                                                */

static void stream_reset(struct rd_stream *s)
{
	s->pi = 0;
	s->in_packet = 0;
	s->pending = 0;
}

static void leave_packet(struct rd_stream *s)
{
	s->in_packet = 0;
	s->pi++;
}

/* Reports a problem of the current packet once (a seek may decode it again). */
static void packet_problem(struct tb_reader *r, struct rd_stream *s, uint64_t pos, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void packet_problem(struct tb_reader *r, struct rd_stream *s, uint64_t pos, int err, const char *fmt, ...)
{
	struct rd_packet *p = &s->pk[s->pi];
	if (!p->reported) {
		char msg[300];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		p->reported = 1;
		r->skipped_packets++;
		rd_diag(r, s->path, pos, err, "%s; rest of the packet (offset %" PRIu64 ") skipped", msg, p->p.offset);
	}
	leave_packet(s);
}

/*
 * Decodes the next item of stream s into s->cur.  Return: 1, or 0 when the
 * stream has no more.
 */
static int stream_advance(struct tb_reader *r, struct rd_stream *s)
{
	struct tb_rd_event *e = &s->cur;
	for (;;) {
		if (s->in_packet) {
			const struct rd_packet *pk = &s->pk[s->pi];
			if (s->pending) {
				if (s->pending & 1) {
					s->pending &= ~1u;
					e->kind = TB_RD_DISCARDED_EVENTS;
					e->ts = pk->prev_end;
					e->ts_end = pk->p.ts_end;
					e->count = pk->p.discarded_delta == UINT64_MAX ? 0 : pk->p.discarded_delta;
					e->pk = pk;
				} else {
					s->pending = 0;
					e->kind = TB_RD_DISCARDED_PACKETS;
					e->ts = pk->prev_end;
					e->ts_end = pk->p.ts_begin;
					e->count = pk->p.lost_packets;
				}
				e->k = NULL;
				e->pid = e->tid = 0;
				return 1;
			}
			while (s->pos < s->end) {
				const uint8_t *p = s->base + s->pos;
				uint64_t avail = s->end - s->pos;
				uint32_t id;
				uint64_t clk = s->clock;
				uint32_t h = tb_hdr_get(p, avail, &id, &clk);
				if (__builtin_expect(!h, 0)) {
					packet_problem(r, s, s->pos, -EBADMSG,
						       "record header cut by the end of the packet content");
					goto next_packet;
				}
				if (__builtin_expect(clk < s->clock || clk > pk->end_check, 0)) {
					packet_problem(r, s, s->pos, -ERANGE,
						       "record timestamp %" PRIu64 " %s %" PRIu64, clk,
						       clk < s->clock ? "goes back before" : "is after the packet's timestamp_end",
						       clk < s->clock ? s->clock : pk->end_check);
					goto next_packet;
				}
				int32_t ci = tb_tsdl_class_at(&r->m, s->sid, id);
				if (__builtin_expect(ci < 0, 0)) {
					packet_problem(r, s, s->pos, -EBADMSG, "unknown event id %" PRIu32, id);
					goto next_packet;
				}
				const struct tb_tsdl_class *k = &r->m.classes[ci];
				const uint8_t *pl = p + h;
				avail -= h;
				/* the event context of a vtid stream: the writer's tid */
				uint32_t vtid = 0;
				if (s->ctx) {
					if (__builtin_expect(avail < s->ctx, 0)) {
						packet_problem(r, s, s->pos, -EBADMSG,
							       "record context cut by the end of the packet content");
						goto next_packet;
					}
					vtid = ld32(pl);
					pl += s->ctx;
					avail -= s->ctx;
					h += s->ctx;
				}
				uint64_t len;
				if (k->fixed_size >= 0) {
					len = (uint64_t)k->fixed_size;
					if (__builtin_expect(len > avail, 0))
						goto overrun;
				} else {
					uint64_t o = 0;
					for (uint32_t f = 0; f < k->nfields; f++) {
						const struct tb_tsdl_field *fd = &k->fields[f];
						e->off[f] = (uint32_t)o;
						if (fd->size) {
							o += fd->size;
							if (o > avail)
								goto overrun;
						} else if (fd->type == TB_FT_STRING) {
							const uint8_t *z = memchr(pl + o, 0, avail - o);
							if (!z)
								goto overrun;
							o = (uint64_t)(z - pl) + 1;
						} else {
							const struct tb_tsdl_field *lf = &k->fields[fd->length_of];
							uint64_t n = tb_rd_ld_uint(pl + e->off[fd->length_of], lf->size);
							uint64_t esz = fd->type == TB_FT_BYTES ? 1 : 8;
							if (n > (avail - o) / esz)
								goto overrun;
							o += n * esz;
						}
					}
					len = o;
				}
				s->clock = clk;
				s->pos += h + len;
				if (ci == r->thread_ci[s->sid]) {
					s->pid = ld32(pl);
					s->tid = ld32(pl + 4);
					if (!(r->flags & TB_READER_THREAD_EVENTS))
						continue;
				}
				e->kind = TB_RD_EVENT;
				e->ts = clk;
				e->k = k;
				e->ci = (uint32_t)ci;
				e->payload = pl;
				e->len = (uint32_t)len;
				e->pid = s->pid;
				/* a vtid stream: the exact writer of this event */
				e->tid = s->ctx ? vtid : s->tid;
				return 1;
overrun:
				packet_problem(r, s, s->pos, -EBADMSG,
					       "record of '%s' (id %" PRIu32 ") overruns the packet content", k->name, id);
				goto next_packet;
			}
			leave_packet(s);
		}
next_packet:
		while (s->pi < s->npk && !s->pk[s->pi].p.valid)
			s->pi++;
		if (s->pi >= s->npk)
			return 0;
		const struct rd_packet *pk = &s->pk[s->pi];
		s->in_packet = 1;
		s->pos = pk->p.offset + r->m.pkt_hdr_size;
		s->end = pk->p.offset + pk->p.content_bytes;
		s->clock = pk->p.ts_begin;
		s->pid = s->tid = 0;
		s->pending = (pk->p.discarded_delta ? 1u : 0u) | (pk->p.lost_packets ? 2u : 0u);
	}
}

/* ---------------------------------------------------------------------- */
/* merge                                                                   */

static inline int before(const struct tb_reader *r, unsigned a, unsigned b)
{
	uint64_t ta = r->streams[a].cur.ts, tb = r->streams[b].cur.ts;
	return ta < tb || (ta == tb && a < b);
}

static void sift_down(struct tb_reader *r, unsigned i)
{
	unsigned n = r->nheap, *h = r->heap;
	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		if (l < n && before(r, h[l], h[m]))
			m = l;
		if (l + 1 < n && before(r, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		unsigned t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

void rd_heap_build(struct tb_reader *r)
{
	r->nheap = 0;
	r->last = -1;
	for (unsigned i = 0; i < r->nstreams; i++)
		if (stream_advance(r, &r->streams[i]))
			r->heap[r->nheap++] = i;
	for (unsigned i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
}

static void tname_note(struct tb_reader *r, const struct tb_rd_event *e);

int tb_reader_next(struct tb_reader *r, const struct tb_rd_event **ev)
{
	if (r->last >= 0) {
		/* the stream returned last is at the top of the heap */
		if (stream_advance(r, &r->streams[r->last])) {
			sift_down(r, 0);
		} else {
			r->heap[0] = r->heap[--r->nheap];
			sift_down(r, 0);
		}
		r->last = -1;
	}
	if (!r->nheap)
		return 0;
	r->last = (int)r->heap[0];
	*ev = &r->streams[r->heap[0]].cur;
	if (__builtin_expect(((*ev)->ci == r->tname_ci[0] || (*ev)->ci == r->tname_ci[1]) && (*ev)->kind == TB_RD_EVENT,
			     0))
		tname_note(r, *ev);
	return 1;
}

/* ---------------------------------------------------------------------- */
/* thread names                                                            */

static struct rd_tname *tname_slot(const struct tb_reader *r, uint32_t tid)
{
	uint32_t m = r->tnames_cap - 1, i = (tid * 2654435761u) & m;
	while (r->tnames[i].tid && r->tnames[i].tid != tid)
		i = (i + 1) & m;
	return &r->tnames[i];
}

/* A tracebuf:thread_name event passed by the iteration: remember it (a
 * table that cannot grow keeps the names it has). */
static void tname_note(struct tb_reader *r, const struct tb_rd_event *e)
{
	uint32_t tid = (uint32_t)tb_rd_u64(e, 0);
	size_t n = 0;
	const char *name = tb_rd_str(e, 1, &n);
	if (!tid || !name)
		return;
	if ((r->tnames_n + 1) * 2 > r->tnames_cap) {
		uint32_t cap = r->tnames_cap ? r->tnames_cap * 2 : 64;
		struct rd_tname *old = r->tnames, *nt = calloc(cap, sizeof *nt);
		if (!nt)
			return;
		uint32_t ocap = r->tnames_cap;
		r->tnames = nt;
		r->tnames_cap = cap;
		for (uint32_t i = 0; i < ocap; i++)
			if (old[i].tid)
				*tname_slot(r, old[i].tid) = old[i];
		free(old);
	}
	struct rd_tname *t = tname_slot(r, tid);
	if (!t->tid) {
		t->tid = tid;
		r->tnames_n++;
	}
	if (n > sizeof t->name - 1)
		n = sizeof t->name - 1;
	memcpy(t->name, name, n);
	t->name[n] = 0;
}

const char *tb_reader_thread_name(const struct tb_reader *r, uint32_t tid)
{
	if (!tid || !r->tnames_cap)
		return NULL;
	const struct rd_tname *t = tname_slot(r, tid);
	return t->tid ? t->name : NULL;
}

int tb_reader_seek_ticks(struct tb_reader *r, uint64_t t)
{
	r->nheap = 0;
	r->last = -1;
	for (unsigned i = 0; i < r->nstreams; i++) {
		struct rd_stream *s = &r->streams[i];
		/* first packet whose timestamp_end >= t: packets are in time order */
		size_t lo = 0, hi = s->npk;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s->pk[mid].p.ts_end < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		stream_reset(s);
		s->pi = lo;
		int more;
		while ((more = stream_advance(r, s)) && s->cur.ts < t)
			;
		if (more)
			r->heap[r->nheap++] = i;
	}
	for (unsigned i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
	return 0;
}

uint64_t tb_reader_ns_to_ticks(const struct tb_reader *r, int64_t ns)
{
	if (ns <= r->off_ns)
		return 0;
	unsigned __int128 d = (unsigned __int128)((__int128)ns - r->off_ns);
	unsigned __int128 t = (d * r->freq + 999999999u) / 1000000000u; /* first tick at or after ns */
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

int tb_reader_seek_ns(struct tb_reader *r, int64_t ns)
{
	return tb_reader_seek_ticks(r, tb_reader_ns_to_ticks(r, ns));
}
