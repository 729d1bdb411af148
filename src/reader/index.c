/* SPDX-License-Identifier: MIT */
/*
 * index.c - open a trace directory and index its packets: the first half of
 * the reader (include/tracebuf/reader.h, docs/READER.md).  The metadata goes
 * to tb_tsdl_parse(); every stream file is mmapped and indexed from its
 * packet headers alone (validated, damaged packets marked invalid and
 * reported once).  The index and the stream state it sets (struct rd_stream,
 * reader_impl.h: which packets are valid, each stream's class, context and
 * CPU) are what the decoder relies on.  Also here: the reader's diagnostics
 * (diag), and tb_reader_close().
 *
 * Length: opening a trace is indexing it, one sequence (directory,
 * metadata, stream files, their packets) over one reader state and its
 * diagnostics; index_stream() alone is 150 lines.
 *
 * Iterating the events (decode, merge by time, seek) is reader.c, random
 * access access.c, text rendering render.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "core/format.h"
#include "core/view.h"
#include "reader/reader_impl.h"
#include "reader/tsdl.h"

#define METADATA_MAX (64u << 20)

void rd_diag(struct tb_reader *r, const char *file, uint64_t off, int err, const char *fmt, ...)
{
	struct rd_diag_slot tmp = { .what = "" }, *s = r->ndiags < DIAGS_KEPT ? &r->diags[r->ndiags] : &tmp;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->what, sizeof s->what, fmt, ap);
	va_end(ap);
	s->d.file = file;
	s->d.offset = off;
	s->d.err = err;
	s->d.what = s->what;
	r->ndiags++;
	if (r->diag_fn)
		r->diag_fn(r->diag_arg, &s->d);
}

/* ---------------------------------------------------------------------- */
/* indexing                                                                */

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int add_packet(struct rd_stream *s, const struct rd_packet *p)
{
	if (s->npk == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct rd_packet *n = realloc(s->pk, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		s->pk = n;
		s->cap = cap;
	}
	s->pk[s->npk++] = *p;
	return 0;
}

/* Reads the packet's lost_<cause> fields (format 2); 1 when they are
 * there and add up to events_discarded. */
static int read_causes(struct tb_reader *r, const uint8_t *h, struct rd_packet *p)
{
	uint64_t sum = 0;
	int any = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		p->lost[k] = r->m.loss_off[k] ? ld64(h + r->m.loss_off[k]) : 0;
		any |= r->m.loss_off[k] != 0;
		if (__builtin_add_overflow(sum, p->lost[k], &sum))
			return 0;
	}
	return any && sum == p->p.events_discarded;
}

/* The increase of each cause since the previous valid packet; when the
 * causes of either do not hold (format 1, sums that disagree, a cause that
 * went down) the notice says "cause unknown" (delta_ok 0); a damaged count is
 * reported once per stream. */
static void cause_deltas(struct tb_reader *r, struct rd_stream *s, uint64_t off, const struct rd_packet *prev,
			 struct rd_packet *p)
{
	int ok = p->has_lost && prev->has_lost;
	for (unsigned k = 0; ok && k < TB_LOSS_NCAUSES; k++) {
		ok = p->lost[k] >= prev->lost[k];
		p->lost_delta[k] = ok ? p->lost[k] - prev->lost[k] : 0;
	}
	int damaged = r->m.loss_off[0] && (!ok || !p->has_lost);
	if (damaged && !s->causes_reported) {
		s->causes_reported = 1;
		rd_diag(r, s->path, off + r->m.loss_off[0], -EBADMSG,
		     "loss causes that do not add up to events_discarded, or that went down: the losses of this "
		     "stream are counted (events_discarded) but some of their causes are unknown");
	}
	p->delta_ok = (uint8_t)ok;
}

/*
 * A packet_seq_num out of line with the previous valid packet (going back,
 * or jumping ahead): is it this packet's number alone that is wrong?  Yes
 * when the next packet's header (magic and stream_id checked) carries a
 * number in line with the previous packet but not with this one: one forged
 * or flipped number then costs nothing but a diagnostic, where trusting it
 * would count 2^40 lost packets, or refuse every packet after it as "going
 * back".  Without a next packet (the last one), a jump is taken as lost
 * packets, as before.
 */
static int seq_out_of_line(const struct rd_stream *s, const struct rd_packet *prev, const struct rd_packet *p,
			   uint64_t off, uint32_t hsz, uint32_t seq_off, uint64_t psize, uint64_t *next_seq)
{
	if (psize > s->size - off || s->size - off - psize < hsz)
		return 0;
	const uint8_t *n = s->base + off + psize;
	if (ld32(n + TB_PKT_OFF_MAGIC) != TB_CTF_MAGIC || ld32(n + TB_PKT_OFF_STREAM_ID) != s->sid)
		return 0;
	uint64_t ns = ld64(n + seq_off);
	*next_seq = ns;
	if (ns <= prev->p.seq)
		return 0; /* the next one is out of line too: not this number alone */
	return p->p.seq <= prev->p.seq || ns < p->p.seq;
}

/*
 * The evidence of a packet's neighbours.  One forged number must cost one
 * packet (or one number), never the packets after it: a first packet whose
 * packet_seq_num is 10^9 would make every genuine number after it "go back",
 * a timestamp_end of 2^63 every later packet's begin.  So a packet is judged
 * not only against the previous valid one but also against the next two
 * packets of the file: when those two agree with each other (and with the
 * previous packet) and this one disagrees with both, this one is the odd one
 * out.  Deterministic: the file alone decides, nothing of the machine.
 */
struct hdr {
	uint64_t psize, csize, seq, tsb, tse, inst;
	uint32_t sid, cpu;
};

/* The header at off when the structural checks of index_stream() would take
 * it (magic, uuid, a stream class, sizes, begin <= end): 1, else 0. */
static int peek_hdr(const struct tb_reader *r, const struct rd_stream *s, uint64_t off, struct hdr *q)
{
	const uint32_t hsz = r->m.pkt_hdr_size;
	const struct tb_tsdl_pkt_off *o = &r->m.off;
	if (off >= s->size || s->size - off < hsz)
		return 0;
	const uint8_t *h = s->base + off;
	uint64_t pb = ld64(h + o->packet), cb = ld64(h + o->content);
	q->sid = ld32(h + TB_PKT_OFF_STREAM_ID);
	q->psize = pb / 8;
	q->csize = cb / 8;
	q->seq = ld64(h + o->seq);
	q->tsb = ld64(h + o->ts_begin);
	q->tse = ld64(h + o->ts_end);
	q->inst = ld64(h + TB_PKT_OFF_INSTANCE);
	uint64_t cpu = o->cpu_bytes == 8 ? ld64(h + o->cpu) : ld32(h + o->cpu);
	q->cpu = (uint32_t)cpu;
	return ld32(h + TB_PKT_OFF_MAGIC) == TB_CTF_MAGIC && !(pb % 8) && q->psize >= hsz &&
	       q->psize <= s->size - off && !(cb % 8) && q->csize >= hsz && q->csize <= q->psize &&
	       (!r->m.has_uuid || !memcmp(h + TB_PKT_OFF_UUID, r->m.uuid, 16)) && q->sid < TB_NSTREAM_CLASSES &&
	       ((r->m.streams >> q->sid) & 1) && cpu <= UINT32_MAX && q->tsb <= q->tse;
}

/* The next two packets after the one at off of size psize: how many found (0-2). */
static int peek_next(const struct tb_reader *r, const struct rd_stream *s, uint64_t off, uint64_t psize,
		     struct hdr n[2])
{
	if (psize > s->size - off || !peek_hdr(r, s, off + psize, &n[0]))
		return 0;
	return 1 + peek_hdr(r, s, off + psize + n[0].psize, &n[1]);
}

static int same_stream(const struct hdr *a, const struct hdr *b)
{
	return a->sid == b->sid && a->inst == b->inst && a->cpu == b->cpu;
}

/* b's number may follow a's: greater, or equal when either is empty (a
 * loss record, header only, shares its number: docs/CTF.md) */
static int seq_follows(const struct hdr *a, const struct hdr *b, uint32_t hsz)
{
	return b->seq > a->seq || (b->seq == a->seq && (a->csize == hsz || b->csize == hsz));
}

static int follows(const struct hdr *a, const struct hdr *b, uint32_t hsz)
{
	return same_stream(a, b) && seq_follows(a, b, hsz) && b->tsb >= a->tse;
}

/*
 * The first packet of a stream has no packet before it to be judged by: its
 * number, its timestamps and its identity (stream instance, CPU) set what the
 * packets after it are checked against.  When the next two packets follow
 * each other and this one precedes neither, this one is out of line: its
 * number alone (everything else follows the next packet) is taken as the one
 * before the next packet's; its end alone (begin at or before the next
 * packet's) is brought back to the next packet's begin, its records checked
 * against that (each said); anything else refuses the packet (why).
 */
static void first_against_next(struct tb_reader *r, struct rd_stream *s, uint64_t off, struct rd_packet *p,
			      char *why, size_t whysz)
{
	const uint32_t hsz = r->m.pkt_hdr_size;
	struct hdr h, n[2];
	if (!peek_hdr(r, s, off, &h) || peek_next(r, s, off, h.psize, n) < 2 || !follows(&n[0], &n[1], hsz) ||
	    follows(&h, &n[0], hsz) || follows(&h, &n[1], hsz))
		return;
	if (same_stream(&h, &n[0]) && h.tsb <= n[0].tsb && h.tse <= n[0].tsb && n[0].seq > 0) {
		rd_diag(r, s->path, off + r->m.off.seq, -EBADMSG,
		     "packet_seq_num %" PRIu64 " of the stream's first readable packet out of line with the two packets after it "
		     "(%" PRIu64 ", %" PRIu64 "): this number alone is damaged, the packet is read as number %" PRIu64,
		     h.seq, n[0].seq, n[1].seq, n[0].seq - 1);
		p->p.seq = n[0].seq - 1;
		return;
	}
	if (same_stream(&h, &n[0]) && seq_follows(&h, &n[0], hsz) && h.tsb <= n[0].tsb) {
		rd_diag(r, s->path, off + r->m.off.ts_end, -ERANGE,
		     "timestamp_end %" PRIu64 " of the stream's first readable packet after the begin of the two packets after it "
		     "(%" PRIu64 ", %" PRIu64 "): this end alone is damaged, taken as %" PRIu64 "; its records are read",
		     h.tse, n[0].tsb, n[1].tsb, n[0].tsb);
		p->p.ts_end = n[0].tsb;
		p->end_check = n[0].tsb;
		return;
	}
	snprintf(why, whysz, "the stream's first readable packet (packet_seq_num %" PRIu64 ", timestamps %" PRIu64 "..%" PRIu64
		 ", cpu_id %" PRIu32 ") precedes neither of the two packets after it, which follow each other "
		 "(packet_seq_num %" PRIu64 ", %" PRIu64 "; cpu_id %" PRIu32 ")",
		 h.seq, h.tsb, h.tse, h.cpu, n[0].seq, n[1].seq, n[0].cpu);
	return;
}

/*
 * A packet that follows the previous valid one but whose timestamp_end
 * passes the begin of the next packet (and of the one after that), while
 * the next packet follows the previous one: this end alone is damaged (a
 * flipped bit, 2^63), where trusting it would refuse every later packet as
 * "timestamps go back".  The end is brought back to the next packet's begin
 * (the records are checked against that) when the begin is at or before it;
 * else the packet's times are wrong as a whole and it is refused (why).
 */
static void end_against_next(struct tb_reader *r, struct rd_stream *s, uint64_t off, const struct rd_packet *prev,
			    struct rd_packet *p, char *why, size_t whysz)
{
	struct hdr h, n[2];
	/* the usual case first, one header read: the next packet begins at or after this end */
	if (!peek_hdr(r, s, off, &h) || h.psize > s->size - off || !peek_hdr(r, s, off + h.psize, &n[0]) ||
	    n[0].tsb >= h.tse)
		return;
	int k = peek_next(r, s, off, h.psize, n);
	if (k < 1 || !same_stream(&h, &n[0]) || n[0].tsb < prev->p.ts_end || n[0].seq <= prev->p.seq ||
	    (k == 2 && h.tse <= n[1].tsb))
		return;
	if (h.tsb <= n[0].tsb) {
		rd_diag(r, s->path, off + r->m.off.ts_end, -ERANGE,
		     "timestamp_end %" PRIu64 " after the begin of the next packet (%" PRIu64 "), which follows the "
		     "previous packet (its end %" PRIu64 "): this end alone is damaged, taken as %" PRIu64
		     "; its records are read",
		     h.tse, n[0].tsb, prev->p.ts_end, n[0].tsb);
		p->p.ts_end = n[0].tsb;
		p->end_check = n[0].tsb;
		return;
	}
	snprintf(why, whysz, "timestamps %" PRIu64 "..%" PRIu64 " out of line with the packets around it (the previous "
		 "one ends at %" PRIu64 ", the next begins at %" PRIu64 ")", h.tsb, h.tse, prev->p.ts_end, n[0].tsb);
	return;
}

/*
 * Where is the packet after a damaged header when the stream's packet size
 * is not known yet (no valid packet before it: a damaged first packet_size
 * cost the whole file)?  The recorder writes a stream's packets one after
 * the other, each the sub-buffer size P (a power of two, 4 KiB to 256 MiB),
 * so at multiples of P: for each possible P, the next multiple of it after
 * off holds a header that passes the structural checks with packet_size P,
 * or P is not the size.  18 places looked at (never a scan: a sparse tail of
 * gigabytes costs nothing); the nearest found, 0 when none.
 */
static uint64_t find_next_header(const struct tb_reader *r, const struct rd_stream *s, uint64_t off)
{
	uint64_t best = 0;
	for (uint64_t sz = 4096; sz <= TB_MAX_SB_SIZE; sz *= 2) {
		uint64_t at = (off / sz + 1) * sz;
		struct hdr q;
		if (at < s->size && (!best || at < best) && peek_hdr(r, s, at, &q) && q.psize == sz)
			best = at;
	}
	return best;
}

static int index_stream(struct tb_reader *r, struct rd_stream *s)
{
	uint64_t off = 0, usual = 0;
	size_t prev_i = SIZE_MAX; /* index of the previous valid packet (s->pk moves when it grows) */
	uint64_t inst = 0;
	const uint32_t hsz = r->m.pkt_hdr_size; /* 88 (format 1) or 160 (formats 2-4) */
	/* damaged packets in a row: one diagnostic for the first, one summary
	 * for the run; and a bound on the work spent on garbage (a sparse or
	 * zeroed tail of gigabytes must not take minutes and a diagnostic per
	 * packet) */
	uint64_t bad_run = 0, bad_from = 0;
	const uint64_t bad_max = 1024;
	int grid_tried = 0; /* find_next_header() looked, in this run of damaged packets */
	struct hdr gq;
	while (off < s->size) {
		const struct rd_packet *prev = prev_i == SIZE_MAX ? NULL : &s->pk[prev_i];
		uint64_t left = s->size - off;
		const uint8_t *h = s->base + off;
		struct rd_packet p;
		memset(&p, 0, sizeof p);
		p.p.offset = off;
		int seq_alone = 0;
		uint64_t seq_next = 0;
		if (left < hsz) {
			rd_diag(r, s->path, off, -ENODATA,
			     "file ends inside a packet header (%" PRIu64 " bytes left, a header is %u): "
			     "truncated file, the end was skipped", left, hsz);
			break;
		}
		uint32_t magic = ld32(h + TB_PKT_OFF_MAGIC), sid = ld32(h + TB_PKT_OFF_STREAM_ID);
		/* the context's fields where the metadata puts them (format 4, or 1-3) */
		const struct tb_tsdl_pkt_off *o = &r->m.off;
		uint64_t psize_bits = ld64(h + o->packet), csize_bits = ld64(h + o->content);
		uint64_t psize = psize_bits / 8, csize = csize_bits / 8;
		p.p.ts_begin = ld64(h + o->ts_begin);
		p.p.ts_end = ld64(h + o->ts_end);
		p.end_check = p.p.ts_end; /* records are checked against it (unless the end is mended below) */
		p.p.seq = ld64(h + o->seq);
		p.p.events_discarded = ld64(h + o->discarded);
		uint64_t cpu = o->cpu_bytes == 8 ? ld64(h + o->cpu) : ld32(h + o->cpu);
		p.p.cpu = (uint32_t)cpu;
		p.p.content_bytes = csize;
		p.p.packet_bytes = psize;
		int size_ok = psize_bits % 8 == 0 && psize >= hsz && psize <= left;
		char why[200] = "";
		if (magic != TB_CTF_MAGIC)
			snprintf(why, sizeof why, "bad magic 0x%08" PRIx32 " (expected 0x%08x)", magic, TB_CTF_MAGIC);
		else if (psize_bits % 8 || psize < hsz)
			snprintf(why, sizeof why, "impossible packet_size %" PRIu64 " bits", psize_bits);
		else if (psize > left && usual && psize != usual && usual <= left)
			snprintf(why, sizeof why, "packet_size %" PRIu64 " bytes differs from the stream's %" PRIu64
				 " and passes the end of the file", psize, usual);
		else if (psize > left)
			snprintf(why, sizeof why, "packet_size %" PRIu64 " bytes but only %" PRIu64
				 " left in the file: truncated file", psize, left);
		else if (r->m.has_uuid && memcmp(h + TB_PKT_OFF_UUID, r->m.uuid, 16))
			snprintf(why, sizeof why, "uuid differs from the metadata's (a packet of another trace)");
		else if (sid >= TB_NSTREAM_CLASSES || !((r->m.streams >> sid) & 1))
			snprintf(why, sizeof why, "stream_id %" PRIu32 " (not a stream class of the metadata)", sid);
		else if (prev && sid != s->sid)
			snprintf(why, sizeof why, "stream_id %" PRIu32 " differs from the stream's %" PRIu32, sid, s->sid);
		else if (cpu > UINT32_MAX)
			snprintf(why, sizeof why, "cpu_id %" PRIu64 " out of range", cpu);
		else if (csize_bits % 8 || csize < hsz || csize > psize)
			snprintf(why, sizeof why, "content_size %" PRIu64 " bits outside [%u, packet_size %" PRIu64 "]",
				 csize_bits, hsz * 8, psize_bits);
		else if (p.p.ts_begin > p.p.ts_end)
			snprintf(why, sizeof why, "timestamp_begin %" PRIu64 " after timestamp_end %" PRIu64,
				 p.p.ts_begin, p.p.ts_end);
		else if (prev && ld64(h + TB_PKT_OFF_INSTANCE) != inst)
			snprintf(why, sizeof why, "stream_instance_id 0x%" PRIx64 " differs from the stream's 0x%" PRIx64,
				 ld64(h + TB_PKT_OFF_INSTANCE), inst);
		else if (prev && p.p.cpu != s->cpu)
			snprintf(why, sizeof why, "cpu_id %" PRIu32 " differs from the stream's %" PRIu32, p.p.cpu, s->cpu);
		else if (prev && (p.p.seq < prev->p.seq ||
				  (p.p.seq == prev->p.seq && csize > hsz && prev->p.content_bytes > hsz)) &&
			 !(seq_alone = seq_out_of_line(s, prev, &p, off, hsz, o->seq, psize, &seq_next)))
			/* an empty packet (header only: a loss record, docs/CTF.md) may
			 * share its number with the packet before or after it */
			snprintf(why, sizeof why, "packet_seq_num %" PRIu64 " not after the previous packet's %" PRIu64,
				 p.p.seq, prev->p.seq);
		else if (prev && p.p.ts_begin < prev->p.ts_end)
			snprintf(why, sizeof why, "timestamps go back: timestamp_begin %" PRIu64
				 " before the previous packet's timestamp_end %" PRIu64, p.p.ts_begin, prev->p.ts_end);
		if (!why[0] && !seq_alone && prev && p.p.seq > prev->p.seq + 1)
			seq_alone = seq_out_of_line(s, prev, &p, off, hsz, o->seq, psize, &seq_next);
		if (!why[0] && !prev)
			first_against_next(r, s, off, &p, why, sizeof why);
		else if (!why[0] && !seq_alone)
			end_against_next(r, s, off, prev, &p, why, sizeof why);
		if (!why[0] && seq_alone) {
			/* the next packet follows the previous one: this number alone is
			 * wrong; the packet is read on its other checks, no loss counted */
			uint64_t fixed = seq_next > prev->p.seq + 1 ? prev->p.seq + 1 : prev->p.seq;
			rd_diag(r, s->path, off + o->seq, -EBADMSG,
			     "packet_seq_num %" PRIu64 " out of line with the packets around it (%" PRIu64 " before, %" PRIu64
			     " after): this number alone is damaged, the packet is read as number %" PRIu64,
			     p.p.seq, prev->p.seq, seq_next, fixed);
			p.p.seq = fixed;
		}
		if (!why[0]) {
			p.p.valid = 1;
			p.has_lost = read_causes(r, h, &p);
			if (!prev) { /* the first valid packet */
				inst = ld64(h + TB_PKT_OFF_INSTANCE);
				s->inst = inst;
				s->has_inst = 1;
				/* its stream class: the record layout of every packet of the file */
				s->sid = sid;
				s->ctx = r->m.stream_ctx[sid];
				/* the CPU of the file name, unless the packets disagree: trust the packets */
				s->cpu = p.p.cpu;
				p.p.discarded_delta = p.p.events_discarded ? UINT64_MAX : 0;
				p.prev_end = p.p.ts_begin;
				memcpy(p.lost_delta, p.lost, sizeof p.lost);
				p.delta_ok = p.has_lost && p.p.events_discarded == 0;
			} else if (p.p.events_discarded < prev->p.events_discarded) {
				/* a running total never goes down; the events are fine, the count is not */
				rd_diag(r, s->path, off + o->discarded, -EBADMSG,
				     "events_discarded went down from %" PRIu64 " to %" PRIu64
				     ": no loss notice for this packet, its events are read",
				     prev->p.events_discarded, p.p.events_discarded);
				p.p.lost_packets = p.p.seq > prev->p.seq ? p.p.seq - prev->p.seq - 1 : 0;
				p.prev_end = prev->p.ts_end;
			} else {
				p.p.discarded_delta = p.p.events_discarded - prev->p.events_discarded;
				p.p.lost_packets = p.p.seq > prev->p.seq ? p.p.seq - prev->p.seq - 1 : 0;
				p.prev_end = prev->p.ts_end;
				cause_deltas(r, s, off, prev, &p);
			}
			usual = psize;
		} else if (bad_run++ == 0) {
			bad_from = off;
			rd_diag(r, s->path, off, strstr(why, "truncated") ? -ENODATA :
			     strstr(why, "timestamps") ? -ERANGE : -EBADMSG,
			     "packet skipped: %s", why);
		}
		if (p.p.valid && bad_run > 1)
			rd_diag(r, s->path, bad_from, -EBADMSG,
			     "%" PRIu64 " more damaged packet%s after it skipped (bytes %" PRIu64 "..%" PRIu64 ")",
			     bad_run - 1, bad_run == 2 ? "" : "s", bad_from, off);
		if (p.p.valid)
			bad_run = 0, grid_tried = 0;
		if (bad_run >= bad_max) {
			rd_diag(r, s->path, bad_from, -EBADMSG,
			     "%" PRIu64 " damaged packets in a row from byte %" PRIu64 ": the rest of the file (%" PRIu64
			     " bytes) is not read", bad_run, bad_from, s->size - bad_from);
			bad_run = 0;
			break;
		}
		int rc = add_packet(s, &p);
		if (rc)
			return rc;
		if (p.p.valid) {
			prev_i = s->npk - 1;
			r->total_valid++;
		}
		/* where is the next packet? */
		uint64_t step, at = 0;
		/* the grid is searched after the last valid packet (a size too
		 * large by a byte put this damaged place past the next packet's
		 * start), never at this same place: progress */
		uint64_t from = prev_i == SIZE_MAX ? off : s->pk[prev_i].p.offset;
		/* a damaged packet's own size is trusted only when no other is known
		 * (packet_size 160 mid-stream put the next read inside a packet, and
		 * every later one out of step) */
		if (size_ok && (magic == TB_CTF_MAGIC || psize == usual || !usual) && (!why[0] || !usual || psize == usual))
			step = psize;
		else if (usual && usual <= left && (grid_tried || peek_hdr(r, s, off + usual, &gq) ||
						     !(at = find_next_header(r, s, from)) || at == off))
			step = usual; /* all packets of a stream have the sub-buffer size */
		else if (usual && usual <= left) {
			/* the usual size leads to no header, the recorder's grid to one:
			 * the size was a damaged packet's (the first one's, read as valid) */
			grid_tried = 1; /* once per run of damaged packets: bounded work on garbage */
			rd_diag(r, s->path, off, -EBADMSG,
			     "no packet where the stream's packet size (%" PRIu64 " bytes, a damaged packet's?) puts the "
			     "next one; the next packet found by its header at byte %" PRIu64, usual, at);
			if (at < off && s->npk && !s->pk[s->npk - 1].p.valid)
				s->npk--; /* (said) the index stays in file order */
			off = at; /* after the last valid packet: maybe before this damaged place */
			continue;
		} else if (!usual && !grid_tried && (grid_tried = 1, step = find_next_header(r, s, off)) > off) {
			rd_diag(r, s->path, off, -EBADMSG,
			     "the next packet found by its header at byte %" PRIu64 " (the stream's packet size not known "
			     "yet): bytes %" PRIu64 "..%" PRIu64 " skipped", step, off, step);
			step -= off;
		} else {
			if (!strstr(why, "truncated"))
				rd_diag(r, s->path, off, -EBADMSG,
				     "cannot find the next packet after this damaged header: rest of the file (%" PRIu64
				     " bytes) skipped", left);
			break;
		}
		off += step;
	}
	if (bad_run > 1)
		rd_diag(r, s->path, bad_from, -EBADMSG,
		     "%" PRIu64 " more damaged packet%s after it skipped, to the end of the file (bytes %" PRIu64
		     "..%" PRIu64 ")", bad_run - 1, bad_run == 2 ? "" : "s", bad_from, s->size);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* opening: the metadata, the stream files and their slots               */

static int parse_name(struct rd_stream *s)
{
	const char *us = strrchr(s->file, '_');
	s->cpu_from_name = 0;
	if (us && us[1]) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(us + 1, &end, 10);
		if (!*end && !errno && v <= UINT32_MAX && us[1] >= '0' && us[1] <= '9') {
			s->cpu = (uint32_t)v;
			s->cpu_from_name = 1;
			snprintf(s->channel, sizeof s->channel, "%.*s", (int)(us - s->file), s->file);
			return 0;
		}
	}
	snprintf(s->channel, sizeof s->channel, "%s", s->file);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static int parse_metadata(struct tb_reader *r, const char *text, size_t n, const char *path)
{
	int line = 0;
	int rc = tb_tsdl_parse(text, n, &r->m, &line);
	if (rc) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", tb_errmsg());
		uint64_t off = 0;
		for (int l = 1; l < line && off < n; off++)
			if (text[off] == '\n')
				l++;
		rd_diag(r, r->meta_path, off, rc, "%s", msg);
		return tb_fail(rc, "%s: %s", path, msg);
	}
	return 0;
}

static int read_metadata(struct tb_reader *r, const char *path)
{
	/* O_NONBLOCK: a FIFO (or a device) named metadata must not hang the
	 * open; it is then refused as not a regular file */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return tb_fail(-errno, "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > METADATA_MAX) {
		close(fd);
		return tb_fail(-EBADMSG, "%s is not a regular file of at most %u MiB", path, METADATA_MAX >> 20);
	}
	char *text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return tb_fail(-ENOMEM, "out of memory reading %s", path);
	}
	size_t n = 0;
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, text + n, (size_t)st.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	text[n] = 0;
	int rc = parse_metadata(r, text, n, path);
	free(text);
	return rc;
}

/* Allocates the reader and takes the options. */
static int reader_new(const char *dir, const struct tb_reader_opts *opts, struct tb_reader **out)
{
	struct tb_reader *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r) {
		tb_fail(-ENOMEM, "out of memory");
		return -ENOMEM; /* (not `return tb_fail()`: the analyzer cannot see that it is never 0) */
	}
	r->last = -1;
	if (opts && opts->size >= offsetof(struct tb_reader_opts, diag_arg) + sizeof(void *)) {
		r->flags = opts->flags;
		r->diag_fn = opts->diag;
		r->diag_arg = opts->diag_arg;
	} else if (opts && opts->size >= offsetof(struct tb_reader_opts, diag)) {
		r->flags = opts->flags;
	}
	r->diags = calloc(DIAGS_KEPT, sizeof *r->diags);
	if (!r->diags) {
		free(r);
		tb_fail(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	snprintf(r->meta_path, sizeof r->meta_path, "%s/metadata", dir);
	*out = r;
	return 0;
}

/* After the metadata was parsed: clock, attribution class, visible fields. */
static int reader_classes(struct tb_reader *r)
{
	r->freq = r->m.clock_freq;
	r->freq_inv = 1.0 / (double)r->freq;
	r->off_ns = tb_rd_sat64((__int128)r->m.clock_offset_s * 1000000000 +
			  (__int128)((unsigned __int128)r->m.clock_offset * 1000000000u / r->freq));
	/* the thread-attribution class of each stream class */
	for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++) {
		r->thread_ci[sid] = -1;
		r->tname_ci[sid] = UINT32_MAX;
		int32_t ci = tb_tsdl_class_at(&r->m, sid, TB_EVENT_ID_THREAD);
		if (ci >= 0) {
			const struct tb_tsdl_class *k = &r->m.classes[ci];
			if (!strcmp(k->name, "tracebuf:thread") && k->fixed_size == 8 && k->nfields == 2 &&
			    k->fields[0].type == TB_FT_U32 && k->fields[1].type == TB_FT_U32)
				r->thread_ci[sid] = ci;
		}
	}
	/* the thread-name class: any id, this exact shape */
	for (uint32_t i = 0; i < r->m.nclasses; i++) {
		const struct tb_tsdl_class *k = &r->m.classes[i];
		if (!strcmp(k->name, "tracebuf:thread_name") && k->nfields == 2 && k->fields[0].type == TB_FT_U32 &&
		    k->fields[1].type == TB_FT_STRING)
			r->tname_ci[k->stream_id] = i;
	}
	r->vis = calloc(r->m.nclasses ? r->m.nclasses : 1, sizeof *r->vis);
	if (!r->vis || tb_rd_fmt_prepare(r))
		return tb_fail(-ENOMEM, "out of memory");
	return 0;
}

static int reader_alloc_streams(struct tb_reader *r, size_t n)
{
	r->streams = calloc(n ? n : 1, sizeof *r->streams);
	r->heap = calloc(n ? n : 1, sizeof *r->heap);
	if (!r->streams || !r->heap)
		return tb_fail(-ENOMEM, "out of memory");
	return 0;
}

/* The next stream slot, named (its path is what diagnostics point to). */
static struct rd_stream *reader_slot(struct tb_reader *r, const char *name)
{
	struct rd_stream *s = &r->streams[r->nstreams];
	snprintf(s->file, sizeof s->file, "%s", name);
	snprintf(s->path, sizeof s->path, "%.*s/%s", (int)(sizeof s->path - sizeof s->file - 1), r->dir, s->file);
	s->idx = r->nstreams;
	s->r = r;
	s->cur.s = s;
	parse_name(s);
	r->nstreams++;
	return s;
}

/* Indexes the bytes base[0..size) of slot s; mapped: munmap at close. */
static int reader_add_stream(struct tb_reader *r, struct rd_stream *s, const uint8_t *base, uint64_t size,
			     int mapped)
{
	s->base = base;
	s->size = size;
	s->mapped = mapped;
	int rc = index_stream(r, s);
	if (rc)
		return tb_fail(rc, "out of memory indexing %s", s->path);
	return 0;
}

/*
 * Two stream files of one stream instance (a copy such as `cp chan_0
 * chan_0.bak` inside the trace) would deliver every event twice: the first
 * file by name is read, each later one is said once and not read.
 */
static void drop_duplicate_streams(struct tb_reader *r)
{
	for (unsigned j = 1; j < r->nstreams; j++) {
		struct rd_stream *b = &r->streams[j];
		if (!b->has_inst)
			continue;
		for (unsigned i = 0; i < j; i++) {
			const struct rd_stream *a = &r->streams[i];
			if (!a->has_inst || a->inst != b->inst || !a->npk)
				continue;
			rd_diag(r, b->path, 0, -EEXIST,
			     "holds the same stream (instance 0x%" PRIx64 ") as %s: a copy; not read, so that no event "
			     "is counted twice",
			     b->inst, a->file);
			for (size_t k = 0; k < b->npk; k++)
				r->total_valid -= b->pk[k].p.valid ? 1 : 0;
			b->npk = 0;
			break;
		}
	}
}

/*
 * A packet's timestamp_end after the present (the time of the machine that
 * reads it, with a day of margin for clocks that disagree) while its
 * timestamp_begin is not: a number the trace's clock cannot have reached
 * (2^63 gave a "986864 h" trace and rates of 0.00/s).  Said; the packet's
 * records are read (checked against the written value), and its end, for
 * every bound the reader gives (tb_reader_time_range, notices), is brought
 * back to the latest plausible end of the trace's other packets, at least
 * its own timestamp_begin.  A trace whose whole clock is in the future is
 * left alone: that is the clock's offset, not one packet.
 */
static void check_end_bounds(struct tb_reader *r)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t limit = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + 86400ll * 1000000000;
	uint64_t sane = 0;
	int any = 0;
	for (unsigned i = 0; i < r->nstreams; i++)
		for (size_t j = 0; j < r->streams[i].npk; j++) {
			const struct tb_rd_packet *p = &r->streams[i].pk[j].p;
			if (!p->valid)
				continue;
			if (tb_rd_ticks_to_ns(r, p->ts_end) > limit)
				any = 1;
			else if (p->ts_end > sane)
				sane = p->ts_end;
		}
	for (unsigned i = 0; any && i < r->nstreams; i++) {
		struct rd_stream *s = &r->streams[i];
		for (size_t j = 0; j < s->npk; j++) {
			struct rd_packet *pk = &s->pk[j];
			if (!pk->p.valid || tb_rd_ticks_to_ns(r, pk->p.ts_end) <= limit ||
			    tb_rd_ticks_to_ns(r, pk->p.ts_begin) > limit)
				continue;
			uint64_t to = sane > pk->p.ts_begin ? sane : pk->p.ts_begin;
			if (j + 1 < s->npk && s->pk[j + 1].p.valid && s->pk[j + 1].p.ts_begin < to)
				to = s->pk[j + 1].p.ts_begin > pk->p.ts_begin ? s->pk[j + 1].p.ts_begin : pk->p.ts_begin;
			rd_diag(r, s->path, pk->p.offset + r->m.off.ts_end, -ERANGE,
			     "implausible timestamp_end %" PRIu64 ": more than a day after the present (the trace's clock "
			     "cannot have reached it); the packet's records are read, its end taken as %" PRIu64,
			     pk->p.ts_end, to);
			pk->p.ts_end = to;
		}
	}
}

static int reader_finish(struct tb_reader *r)
{
	drop_duplicate_streams(r);
	check_end_bounds(r);
	if (!r->total_valid && r->ndiags)
		return tb_fail(-ENODATA, "nothing readable in %s: every packet is damaged (%" PRIu64
					 " problems reported, the first: %s)", r->dir, r->ndiags, r->diags[0].what);
	rd_heap_build(r);
	return 0;
}

int tb_reader_open(const char *dir, const struct tb_reader_opts *opts, struct tb_reader **out)
{
	struct tb_reader *r;
	char **names = NULL;
	size_t nn = 0, capn = 0, i = 0;
	int rc = reader_new(dir, opts, &r);
	if (rc)
		return rc;
	DIR *d = opendir(dir);
	if (!d) {
		rc = tb_fail(-errno, "cannot open trace directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	rc = read_metadata(r, r->meta_path);
	if (!rc)
		rc = reader_classes(r);
	if (rc) {
		closedir(d);
		goto fail;
	}

	/* stream files: every non-hidden regular non-empty file but metadata */
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		/* directories are no streams; anything else gets a stream slot,
		 * so that the open below says, with its path, why a FIFO, a
		 * device, an empty file (never left by the recorder), or a
		 * symbolic link that leads nowhere (dangling, a loop: the stat
		 * fails) is not read */
		if (!fstatat(dirfd(d), de->d_name, &st, 0) && S_ISDIR(st.st_mode))
			continue;
		if (nn == capn) {
			capn = capn ? capn * 2 : 16;
			char **nnames = realloc(names, capn * sizeof *names);
			if (!nnames) {
				closedir(d);
				rc = tb_fail(-ENOMEM, "out of memory");
				goto fail;
			}
			names = nnames;
		}
		names[nn] = strdup(de->d_name);
		if (!names[nn]) {
			closedir(d);
			rc = tb_fail(-ENOMEM, "out of memory");
			goto fail;
		}
		nn++;
	}
	closedir(d);
	if (nn)
		qsort(names, nn, sizeof *names, name_cmp);
	rc = reader_alloc_streams(r, nn);
	if (rc)
		goto fail;
	for (; i < nn; i++) {
		/* a file that cannot be read stays a (empty) stream: diagnostics point to its path */
		struct rd_stream *s = reader_slot(r, names[i]);
		/* O_NONBLOCK and fstat: the file listed as regular may have been
		 * replaced since by a FIFO, which must neither hang nor be read */
		int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st)) {
			rd_diag(r, s->path, 0, -errno, "cannot open: %s; stream skipped", strerror(errno));
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			rd_diag(r, s->path, 0, -EINVAL, "not a regular file; stream skipped");
			close(fd);
			continue;
		}
		if (st.st_size == 0) {
			rd_diag(r, s->path, 0, -ENODATA, "empty file: no packet (a stream file is never left empty)");
			close(fd);
			continue;
		}
		void *map = st.st_size > 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
		close(fd);
		if (map == MAP_FAILED) {
			rd_diag(r, s->path, 0, -errno, "cannot map: %s; stream skipped", strerror(errno));
			continue;
		}
		/* indexing reads one header per packet: no readahead (over a
		 * sparse tail it would fill the page cache with zeros); reading
		 * events later goes forward through the packets */
		madvise(map, (size_t)st.st_size, MADV_RANDOM);
		rc = reader_add_stream(r, s, map, (uint64_t)st.st_size, 1);
		if (rc)
			goto fail;
		madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	}
	rc = reader_finish(r);
	if (rc)
		goto fail;
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	*out = r;
	return 0;
fail:
	for (i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	tb_reader_close(r);
	return rc;
}

int tb_reader_open_mem(const char *name, const char *metadata, size_t mlen, const struct tb_rd_mem_stream *streams,
		       unsigned nstreams, const struct tb_reader_opts *opts, struct tb_reader **out)
{
	struct tb_reader *r;
	int rc = reader_new(name, opts, &r);
	if (rc)
		return rc;
	rc = parse_metadata(r, metadata, mlen, r->meta_path);
	if (!rc)
		rc = reader_classes(r);
	if (!rc)
		rc = reader_alloc_streams(r, nstreams);
	for (unsigned i = 0; !rc && i < nstreams; i++)
		if (streams[i].size)
			rc = reader_add_stream(r, reader_slot(r, streams[i].name), streams[i].data, streams[i].size, 0);
	if (!rc)
		rc = reader_finish(r);
	if (rc) {
		tb_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void tb_reader_close(struct tb_reader *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->nstreams; i++) {
		if (r->streams[i].base && r->streams[i].mapped)
			munmap((void *)r->streams[i].base, r->streams[i].size);
		free(r->streams[i].pk);
	}
	free(r->streams);
	free(r->heap);
	free(r->tnames);
	for (uint32_t i = 0; r->vis && i < r->m.nclasses; i++)
		free(r->vis[i].labels);
	free(r->vis);
	free(r->diags);
	tb_tsdl_free(&r->m);
	free(r);
}
