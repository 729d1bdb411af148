/* SPDX-License-Identifier: MIT */
/*
 * tsdl_layout.c - the second step of the TSDL parser (src/reader/tsdl.c):
 * the type trees the parser built (struct ty, struct decl: tsdl_impl.h)
 * checked against tracebuf's fixed layouts (core/format.h), and each event
 * class's payload flattened into struct tb_tsdl_class (fields, fixed
 * offsets, enum mappings).  The parser calls tsdl_event_fields() at the end of
 * each event block and tsdl_check_layouts() once every block is read.
 *
 * Errors longjmp out of the parse (tsdl_perr) like the parser's own; the
 * only allocations are meta's (classes' enum mappings), freed by
 * tb_tsdl_free().
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/view.h"
#include "reader/tsdl.h"
#include "reader/tsdl_impl.h"

/* ---------------------------------------------------------------------- */
/* event payloads: the fields of a class, flattened                        */

static int is_uint(const struct ty *t, uint32_t size, uint32_t align)
{
	return t && t->kind == K_INT && t->size == size && !t->sign && !t->be && t->align == align;
}

static const char *shown(const char *n)
{
	return n[0] == '_' ? n + 1 : n;
}

/* tracebuf's boolean: enum : uint8 { "false" = 0, "true" = 1 } (ctf_write.c) */
static int is_bool_enum(const struct ty *t)
{
	const struct enumerator *f = t->enums, *tr = f ? f->next : NULL;
	return is_uint(t->base, 8, 8) && f && tr && !tr->next && !strcmp(f->label, "false") && f->lo == 0 &&
	       f->hi == 0 && !strcmp(tr->label, "true") && tr->lo == 1 && tr->hi == 1;
}

static void *grow(struct ctx *c, void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		c->err = tb_fail(-ENOMEM, "out of memory parsing the metadata");
		longjmp(c->jb, 1);
	}
	return q;
}

/* Keeps the mappings of enum type t in meta->enums: its index. */
static int32_t keep_enum(struct ctx *c, const struct ty *t)
{
	struct tb_tsdl_meta *m = c->m;
	if (m->nenums == c->enum_cap) {
		c->enum_cap = c->enum_cap ? c->enum_cap * 2 : 8;
		m->enums = grow(c, m->enums, (size_t)c->enum_cap * sizeof *m->enums);
	}
	uint32_t n = 0;
	size_t names = 0;
	for (const struct enumerator *e = t->enums; e; e = e->next, n++)
		names += strlen(e->label) + 1;
	struct tb_tsdl_label *l = grow(c, NULL, (size_t)n * sizeof *l + names + 1);
	char *s = (char *)(l + n);
	struct tb_tsdl_enum *te = &m->enums[m->nenums];
	te->n = n;
	te->l = l;
	m->nenums++; /* from here tb_tsdl_free() frees l */
	for (const struct enumerator *e = t->enums; e; e = e->next, l++) {
		size_t len = strlen(e->label) + 1;
		memcpy(s, e->label, len);
		l->lo = e->lo;
		l->hi = e->hi;
		l->name = s;
		s += len;
	}
	return (int32_t)(m->nenums - 1);
}

void tsdl_event_fields(struct ctx *c, struct tb_tsdl_class *k, const struct ty *st, int line)
{
	if (!st || st->kind != K_STRUCT)
		tsdl_perr(c, line, "event '%s': fields must be a struct", k->name);
	uint32_t n = 0, off = 0;
	int fixed = 1;
	const struct decl *raw[TB_TSDL_FIELDS_MAX];
	for (const struct decl *d = st->fields; d; d = d->next) {
		if (n >= TB_TSDL_FIELDS_MAX)
			tsdl_perr(c, d->line, "event '%s': more than %u fields", k->name, TB_TSDL_FIELDS_MAX);
		struct tb_tsdl_field *f = &k->fields[n];
		const struct ty *t = d->t;
		raw[n] = d;
		tsdl_setname(c, d->line, f->name, sizeof f->name, shown(d->name));
		f->length_of = -1;
		f->enum_idx = -1;
		if (d->arr == 1)
			tsdl_perr(c, d->line, "event '%s' field '%s': fixed-length arrays are not supported",
				  k->name, d->name);
		if (d->arr == 2) {
			if (!is_uint(t, 8, 8) && !is_uint(t, 64, 8))
				tsdl_perr(c, d->line, "event '%s' field '%s': only sequences of byte-aligned uint8 or "
						      "uint64 are supported", k->name, d->name);
			f->type = t->size == 8 ? TB_FT_BYTES : TB_FT_U64SEQ;
			int li = -1;
			for (uint32_t j = 0; j < n; j++)
				if (!strcmp(raw[j]->name, d->lenref))
					li = (int)j;
			if (li < 0)
				tsdl_perr(c, d->line, "event '%s' field '%s': length '%s' is not an earlier field",
					  k->name, d->name, d->lenref);
			if (k->fields[li].type < TB_FT_U8 || k->fields[li].type > TB_FT_U64)
				tsdl_perr(c, d->line, "event '%s' field '%s': length '%s' is not an unsigned integer",
					  k->name, d->name, d->lenref);
			k->fields[li].is_length = 1;
			f->length_of = (int8_t)li;
			fixed = 0;
		} else if (t->kind == K_INT) {
			if (t->be || t->align != 8 || (t->size != 8 && t->size != 16 && t->size != 32 && t->size != 64))
				tsdl_perr(c, d->line, "event '%s' field '%s': only byte-aligned little-endian integers of "
						      "8, 16, 32 or 64 bits are supported", k->name, d->name);
			static const uint8_t ut[] = { TB_FT_U8, TB_FT_U16, 0, TB_FT_U32, 0, 0, 0, TB_FT_U64 };
			f->type = (uint8_t)(ut[t->size / 8 - 1] + (t->sign ? TB_FT_I8 - TB_FT_U8 : 0));
			f->size = (uint8_t)(t->size / 8);
		} else if (t->kind == K_FLOAT) {
			int dbl = t->exp == 11 && t->mant == 53, flt = t->exp == 8 && t->mant == 24;
			if ((!dbl && !flt) || t->be || t->align != 8)
				tsdl_perr(c, d->line, "event '%s' field '%s': only byte-aligned little-endian doubles "
						      "(exp_dig 11, mant_dig 53) and floats (8, 24) are supported",
					  k->name, d->name);
			f->type = dbl ? TB_FT_F64 : TB_FT_F32;
			f->size = dbl ? 8 : 4;
		} else if (t->kind == K_ENUM && is_bool_enum(t)) {
			f->type = TB_FT_BOOL;
			f->size = 1;
		} else if (t->kind == K_ENUM) {
			/* any other enum: its integer container, shown by label */
			const struct ty *b = t->base;
			if (b->be || b->align != 8 || (b->size != 8 && b->size != 16 && b->size != 32 && b->size != 64))
				tsdl_perr(c, d->line, "event '%s' field '%s': only enums of byte-aligned little-endian "
						      "integers of 8, 16, 32 or 64 bits are supported", k->name, d->name);
			f->type = TB_FT_ENUM;
			f->size = (uint8_t)(b->size / 8);
			f->sign = (uint8_t)(b->sign != 0);
			f->enum_idx = keep_enum(c, t);
		} else if (t->kind == K_STRING) {
			f->type = TB_FT_STRING;
			fixed = 0;
		} else {
			tsdl_perr(c, d->line, "event '%s' field '%s': %s fields are not supported", k->name, d->name,
				  t->kind == K_STRUCT ? "struct" : "variant");
		}
		k->fixed_off[n] = off;
		off += f->size;
		n++;
	}
	k->nfields = n;
	k->fixed_size = fixed ? (int32_t)off : -1;
}

/* ---------------------------------------------------------------------- */
/* layout checks: the trace must be laid out as core/format.h says          */

static const struct decl *field_at(const struct ty *st, unsigned i)
{
	const struct decl *d = st ? st->fields : NULL;
	while (d && i--)
		d = d->next;
	return d;
}

/* The packet contexts the reader knows (core/format.h): format 4's, then that
 * of formats 1-3, whose loss causes follow it as lost_<cause> fields. */
static const struct pf_field { const char *n; uint32_t size; } pf_ctx4[] = {
	{ "timestamp_begin", 64 }, { "timestamp_end", 64 }, { "content_size", 64 }, { "packet_size", 64 },
	{ "packet_seq_num", 64 },  { "events_discarded", 64 }, { "cpu_id", 64 },
};
static const struct pf_field pf_ctx1[] = {
	{ "timestamp_begin", 64 }, { "timestamp_end", 64 }, { "content_size", 64 }, { "packet_size", 64 },
	{ "packet_seq_num", 64 },  { "events_discarded", 64 }, { "cpu_id", 32 },    { "tb_reserved", 32 },
};

/* Stream class `sid`: packet context, following a trace packet header of
 * `hdr` bytes whose loss array (format 4) put its offsets in hdr_loss[] (all
 * 0 without one): the packet's size, loss offsets and context offsets into
 * *hsz, loss_off[] and *off; then the event header, and the event context:
 * none, or the vtid. */
static void check_stream(struct ctx *c, uint32_t sid, uint32_t hdr, const uint16_t *hdr_loss, uint32_t *hsz,
			 uint16_t *loss_off, struct tb_tsdl_pkt_off *off)
{
	const struct ty *p = c->pkt_context[sid], *e = c->ev_header[sid], *x = c->ev_context[sid];
	int line = c->stream_line[sid];
	const struct decl *d;
	if (!p || p->kind != K_STRUCT)
		tsdl_perr(c, line, "stream %" PRIu32 " packet.context missing or not a struct", sid);
	/* format 4's context is recognised by its 64-bit cpu_id, the older one by its 32-bit one */
	d = field_at(p, 6);
	int v4 = d && !strcmp(d->name, "cpu_id") && is_uint(d->t, 64, 8);
	const struct pf_field *pf = v4 ? pf_ctx4 : pf_ctx1;
	unsigned npf = v4 ? 7 : 8;
	uint16_t *slot[] = { &off->ts_begin, &off->ts_end, &off->content, &off->packet,
			     &off->seq,      &off->discarded, &off->cpu };
	uint32_t at = hdr;
	for (unsigned i = 0; i < npf; i++) {
		d = field_at(p, i);
		if (!d || strcmp(d->name, pf[i].n) || !is_uint(d->t, pf[i].size, 8) || d->arr)
			tsdl_perr(c, d ? d->line : p->line,
				  "packet.context field %u must be the byte-aligned unsigned '%s' of tracebuf's layout "
				  "(format 4: 64-bit cpu_id last; formats 1-3: 32-bit cpu_id, tb_reserved, lost_<cause>)",
				  i, pf[i].n);
		if (i < 7)
			*slot[i] = (uint16_t)at;
		at += pf[i].size / 8;
	}
	off->cpu_bytes = (uint8_t)(v4 ? 8 : 4);
	/* formats 2-3: then the loss causes, each a byte-aligned u64 named lost_<cause> */
	memcpy(loss_off, hdr_loss, sizeof loss_off[0] * TB_LOSS_NCAUSES);
	int in_hdr = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		in_hdr |= hdr_loss[k] != 0;
	for (unsigned i = npf; (d = field_at(p, i)) != NULL; i++) {
		if (v4 || in_hdr)
			tsdl_perr(c, d->line, "packet.context: unexpected field '%s' (%s)", d->name,
				  v4 ? "format 4's context ends with cpu_id" : "the loss causes are in the packet header");
		if (strncmp(d->name, "lost_", 5) || !is_uint(d->t, 64, 8) || d->arr || i >= npf + TB_TSDL_LOSS_MAX)
			tsdl_perr(c, d->line, "packet.context: unexpected field '%s' (after tb_reserved only byte-aligned "
					      "uint64 lost_<cause> fields, at most %u)", d->name, TB_TSDL_LOSS_MAX);
		for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
			if (!strcmp(d->name, tb_loss_field(k))) {
				if (loss_off[k])
					tsdl_perr(c, d->line, "packet.context: field '%s' twice", d->name);
				loss_off[k] = (uint16_t)at;
			}
		at += 8;
	}
	*hsz = at;
	if (!e || e->kind != K_STRUCT)
		tsdl_perr(c, line, "stream %" PRIu32 " event.header missing or not a struct", sid);
	d = field_at(e, 0);
	if (!d || strcmp(d->name, "id") || d->arr || d->t->kind != K_ENUM || !is_uint(d->t->base, 5, 1))
		tsdl_perr(c, d ? d->line : e->line, "event.header must begin with 'enum : uint5 { ... } id' (align 1)");
	const struct enumerator *en = d->t->enums;
	if (!en || strcmp(en->label, "compact") || en->lo != 0 || en->hi != 30 || !en->next ||
	    strcmp(en->next->label, "extended") || en->next->lo != 31 || en->next->hi != 31 || en->next->next)
		tsdl_perr(c, d->line, "event.header id enum must be { compact = 0 ... 30, extended = 31 }");
	d = field_at(e, 1);
	if (!d || strcmp(d->name, "v") || d->arr || d->t->kind != K_VARIANT || strcmp(d->t->tag, "id") ||
	    field_at(e, 2))
		tsdl_perr(c, d ? d->line : e->line, "event.header must be 'id' then 'variant <id> { ... } v'");
	const struct decl *vc = field_at(d->t, 0), *vx = field_at(d->t, 1);
	if (!vc || strcmp(vc->name, "compact") || vc->t->kind != K_STRUCT || !vx || strcmp(vx->name, "extended") ||
	    vx->t->kind != K_STRUCT || field_at(d->t, 2))
		tsdl_perr(c, d->line, "event.header variant must be { struct compact; struct extended; }");
	const struct decl *ct = field_at(vc->t, 0);
	if (!ct || strcmp(ct->name, "timestamp") || !is_uint(ct->t, 27, 1) || !ct->t->mapped || field_at(vc->t, 1))
		tsdl_perr(c, vc->line, "compact event header must be { uint27 timestamp (align 1, clock mapped) }");
	const struct decl *xi = field_at(vx->t, 0), *xt = field_at(vx->t, 1);
	if (!xi || strcmp(xi->name, "id") || !is_uint(xi->t, 32, 8) || !xt || strcmp(xt->name, "timestamp") ||
	    !is_uint(xt->t, 64, 8) || !xt->t->mapped || field_at(vx->t, 2))
		tsdl_perr(c, vx->line, "extended event header must be { uint32 id; uint64 timestamp (clock mapped) }");
	/* the event context: absent, or LTTng's vtid context { uint32 _vtid; } */
	c->m->stream_ctx[sid] = 0;
	if (x) {
		d = x->kind == K_STRUCT ? field_at(x, 0) : NULL;
		if (!d || strcmp(d->name, "_vtid") || d->arr || !is_uint(d->t, 32, 8) || field_at(x, 1))
			tsdl_perr(c, d ? d->line : x->line,
				  "stream %" PRIu32 " event.context must be struct { byte-aligned uint32 _vtid; }", sid);
		c->m->stream_ctx[sid] = TB_VTID_SIZE;
	}
}

static int same_off(const struct tb_tsdl_pkt_off *a, const struct tb_tsdl_pkt_off *b)
{
	return a->ts_begin == b->ts_begin && a->ts_end == b->ts_end && a->content == b->content &&
	       a->packet == b->packet && a->seq == b->seq && a->discarded == b->discarded && a->cpu == b->cpu &&
	       a->cpu_bytes == b->cpu_bytes;
}

void tsdl_check_layouts(struct ctx *c)
{
	const struct ty *h = c->pkt_header;
	const struct decl *d;
	if (!h || h->kind != K_STRUCT)
		tsdl_perr(c, c->line, "trace packet.header missing or not a struct");
	static const struct { const char *n; uint32_t size; uint64_t arr; } hf[] = {
		{ "magic", 32, 0 }, { "uuid", 8, 16 }, { "stream_id", 32, 0 }, { "stream_instance_id", 64, 0 },
	};
	for (unsigned i = 0; i < 4; i++) {
		d = field_at(h, i);
		if (!d || strcmp(d->name, hf[i].n) || !is_uint(d->t, hf[i].size, 8) ||
		    (hf[i].arr ? (d->arr != 1 || d->len != hf[i].arr) : d->arr != 0))
			tsdl_perr(c, d ? d->line : h->line,
				  "packet.header field %u must be the byte-aligned unsigned '%s' of tracebuf's layout", i,
				  hf[i].n);
	}
	/* format 4: then the loss causes, one array of byte-aligned u64 */
	uint32_t hdr = TB_PKT_OFF_LOST;
	uint16_t hdr_loss[TB_LOSS_NCAUSES] = { 0 };
	d = field_at(h, 4);
	if (d) {
		if (strcmp(d->name, TB_TSDL_LOST_ARRAY) || !is_uint(d->t, 64, 8) || d->arr != 1 || d->len < 1 ||
		    d->len > TB_TSDL_LOSS_MAX)
			tsdl_perr(c, d->line, "packet.header: unexpected field '%s' (after stream_instance_id only "
					      "'uint64_t %s[N]', N from 1 to %u)", d->name, TB_TSDL_LOST_ARRAY, TB_TSDL_LOSS_MAX);
		for (unsigned k = 0; k < TB_LOSS_NCAUSES && k < d->len; k++)
			hdr_loss[k] = (uint16_t)(hdr + 8 * k); /* causes past those known are skipped */
		hdr += (uint32_t)(8 * d->len);
		if (field_at(h, 5))
			tsdl_perr(c, field_at(h, 5)->line, "packet.header: unexpected field '%s'", field_at(h, 5)->name);
	}
	if (!c->seen_stream)
		tsdl_perr(c, c->line, "no stream block");
	/* every stream class has the packet context of the first */
	int first = 1;
	for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++) {
		if (!(c->seen_stream & (1u << sid)))
			continue;
		uint32_t hsz;
		uint16_t loss_off[TB_LOSS_NCAUSES];
		struct tb_tsdl_pkt_off off;
		memset(&off, 0, sizeof off);
		check_stream(c, sid, hdr, hdr_loss, &hsz, loss_off, &off);
		if (first) {
			c->m->pkt_hdr_size = hsz;
			memcpy(c->m->loss_off, loss_off, sizeof loss_off);
			c->m->off = off;
		} else if (hsz != c->m->pkt_hdr_size || memcmp(loss_off, c->m->loss_off, sizeof loss_off) ||
			   !same_off(&off, &c->m->off)) {
			tsdl_perr(c, c->stream_line[sid], "stream %" PRIu32 " packet.context differs from the first stream's",
				  sid);
		}
		first = 0;
	}
	c->m->streams = c->seen_stream;
	for (uint32_t i = 0; i < c->m->nclasses; i++)
		if (!(c->seen_stream & (1u << c->m->classes[i].stream_id)))
			tsdl_perr(c, c->line, "event '%s' belongs to stream class %" PRIu32 ", which is not declared",
				  c->m->classes[i].name, c->m->classes[i].stream_id);
	if (!c->seen_clock)
		tsdl_perr(c, c->line, "no clock block");
}
