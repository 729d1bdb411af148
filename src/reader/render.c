/* SPDX-License-Identifier: MIT */
/*
 * render.c - text and JSON renderings of an event's fields, shared by
 * `tracebuf dump`, `report` and `convert`.  snprintf-like: never writes past
 * cap, returns the length the full rendering needs.
 *
 * Speed matters (`tracebuf dump` is mostly this): per class, the fields'
 * types, length fields and pre-rendered labels are prepared once at open
 * (tb_rd_fmt_prepare, struct rd_vis); values are read straight from the
 * payload and numbers converted 8 digits at a time (decimal.h).  Both
 * renderings are the same code, `json` picks their few differences.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "core/format.h"
#include "core/utf8.h"
#include "reader/decimal.h"
#include "reader/reader_impl.h"

/* ---------------------------------------------------------------------- */
/* output                                                                  */

/*
 * Bytes a writer below may store past the end it returns (decimal.h's whole
 * words, labels copied RD_LABEL_PAD bytes at a time).
 */
#define SLACK 32u
#define SCRATCH 2048u

/*
 * A rendering is written in pieces of known maximum length (a label and a
 * number, a run of a string...).  piece() hands out a place for one: in the
 * caller's buffer when the piece and SLACK fit there, so the writers store
 * without checks; else in `scratch`, and done() copies what fits of it into
 * the buffer (snprintf semantics: the output is cut at cap, n still counts
 * everything).  A piece is at most SCRATCH - SLACK bytes.
 */
struct out {
	char *b;
	size_t cap, n;
	char *at; /* start of the current piece (in b or scratch) */
	char scratch[SCRATCH];
};

static inline int fits(const struct out *o, size_t need)
{
	return o->n <= o->cap && o->cap - o->n >= need + SLACK;
}

static inline char *piece(struct out *o, size_t need)
{
	o->at = fits(o, need) ? o->b + o->n : o->scratch;
	return o->at;
}

static inline void done(struct out *o, const char *end)
{
	size_t k = (size_t)(end - o->at);
	if (o->at == o->scratch && o->n < o->cap)
		memcpy(o->b + o->n, o->scratch, o->cap - o->n < k ? o->cap - o->n : k);
	o->n += k;
}

/*
 * How many units of `per` output bytes (after `fixed` bytes) the next piece
 * takes of the `left` to write: all of them when they fit the buffer, else
 * as many as fit the scratch.
 */
static inline size_t take(const struct out *o, size_t fixed, size_t left, size_t per)
{
	if (left <= (SIZE_MAX - fixed - SLACK) / per && fits(o, fixed + left * per))
		return left;
	size_t k = (SCRATCH - SLACK - fixed) / per;
	return left < k ? left : k;
}

/* the n characters of s at p (no NUL); returns the end */
static inline char *put_chars(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* copies a label (RD_LABEL_PAD bytes readable past it) */
static inline char *put_label(char *p, const char *s, size_t n)
{
	if (n <= RD_LABEL_PAD)
		memcpy(p, s, RD_LABEL_PAD);
	else
		memcpy(p, s, n);
	return p + n;
}

/* ---------------------------------------------------------------------- */
/* the two renderings                                                      */

/* How sequences are written, [json]; the other differences are a test of `json` where they are. */
struct style {
	const char *seq_open, *seq_sep, *seq_close; /* read 2 bytes at a time */
	uint8_t open_len, sep_len, close_len;
};

static const struct style styles[2] = {
	{ "[ ", ", ", " ]", 2, 2, 2 },
	{ "[", ",", "]", 1, 1, 1 },
};

/* the reader's name of core/utf8.h's rule (tools escape by it too) */
size_t tb_rd_utf8_len(const char *str, size_t n, size_t *bad)
{
	return tb_utf8_len(str, n, bad);
}

/* the C1 controls U+0080..U+009F (C2 80..C2 9F): terminals act on some (U+009B is CSI) */
static inline int c1(const unsigned char *s, size_t k)
{
	return k == 2 && s[0] == 0xc2 && s[1] < 0xa0;
}

static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* one rule for every text output (tb_rd_format_text, and quoted strings): the
 * bytes of C0 and C1 controls, DEL and ill-formed UTF-8 as \xNN */
static char *hex_bytes(char *p, const unsigned char *s, size_t k, int json)
{
	static const char hex[] = "0123456789abcdef";
	if (json) { /* a C0/C1 control or DEL: its code point (valid JSON, the same character) */
		unsigned cp = k == 2 ? s[1] : s[0];
		p[0] = '\\';
		p[1] = 'u';
		p[2] = '0';
		p[3] = '0';
		p[4] = hex[cp >> 4];
		p[5] = hex[cp & 15];
		return p + 6;
	}
	for (size_t i = 0; i < k; i++) {
		p[0] = '\\';
		p[1] = 'x';
		p[2] = hex[s[i] >> 4];
		p[3] = hex[s[i] & 15];
		p += 4;
	}
	return p;
}

/*
 * Escapes s[*i..) while *i < stop (a UTF-8 sequence begun before stop is
 * finished: up to 3 bytes more), at most n: at most 6 bytes per input byte.
 * quoted: \" \\ \n \t \r; then (text) C0, DEL, C1 and ill-formed UTF-8 bytes
 * as \xNN each, or (JSON) controls as \u00XX and each maximal ill-formed
 * subpart as \ufffd (JSON strings cannot hold raw bytes; U+FFFD is
 * Unicode's replacement character).  Unquoted text (quoted 0) leaves '"'
 * and '\' as they are.
 */
static char *escape(char *p, const unsigned char *s, size_t *i, size_t stop, size_t n, int json, int quoted)
{
	size_t j = *i;
	while (j < stop) {
		size_t run = j;
		while (run < stop && (plain(s[run]) || (!quoted && (s[run] == '"' || s[run] == '\\'))))
			run++;
		memcpy(p, s + j, run - j);
		p += run - j;
		j = run;
		if (j >= stop)
			break;
		unsigned char c = s[j];
		size_t k, bad = 1;
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (quoted && (c == '\n' || c == '\t' || c == '\r')) {
			*p++ = '\\';
			*p++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c >= 0x80 && (k = tb_rd_utf8_len((const char *)s + j, n - j, &bad)) != 0) {
			if (c1(s + j, k))
				p = hex_bytes(p, s + j, k, json);
			else
				p = put_chars(p, (const char *)s + j, k);
			j += k;
			continue;
		} else if (c >= 0x80 && json) {
			p = put_chars(p, "\\ufffd", 6); /* 6 bytes for bad >= 1 input bytes */
			j += bad;
			continue;
		} else {
			/* a control byte (or DEL), or one byte of ill-formed UTF-8 (text) */
			p = hex_bytes(p, s + j, 1, json);
		}
		j++;
	}
	*i = j;
	return p;
}

/* label (may be empty) and the quoted, escaped string s[0..n) */
static void put_str(struct out *o, const char *lab, size_t lablen, const unsigned char *s, size_t n, int json,
		    int quoted)
{
	/* label, quotes, an unfinished UTF-8 sequence (3 bytes, 4 output bytes each) */
	size_t i = 0, fixed = lablen + 2 + 12;
	char *p = piece(o, fixed + 6 * take(o, fixed, n, 6));
	p = put_label(p, lab, lablen);
	if (quoted)
		*p++ = '"';
	for (;;) {
		p = escape(p, s, &i, i + take(o, fixed, n - i, 6), n, json, quoted);
		if (i >= n)
			break;
		done(o, p);
		fixed = 1 + 12;
		p = piece(o, fixed + 6 * take(o, fixed, n - i, 6));
	}
	if (quoted)
		*p++ = '"';
	done(o, p);
}

/* label and a sequence of cnt elements (u8 or little-endian u64) */
static void put_seq(struct out *o, const struct style *st, const char *lab, size_t lablen, const uint8_t *v,
		    uint32_t cnt, int u64)
{
	const size_t per = 2 + TB_DEC_U64_MAX; /* separator and number */
	size_t fixed = lablen + st->open_len + st->close_len;
	uint32_t j = 0;
	size_t k = take(o, fixed, cnt, per);
	char *p = piece(o, fixed + k * per);
	p = put_label(p, lab, lablen);
	memcpy(p, st->seq_open, 2);
	p += st->open_len;
	for (;;) {
		for (uint32_t stop = j + (uint32_t)k; j < stop; j++) {
			if (j) {
				memcpy(p, st->seq_sep, 2);
				p += st->sep_len;
			}
			p = tb_dec_u64(p, u64 ? tb_rd_ld_uint(v + (size_t)j * 8, 8) : v[j]);
		}
		if (j >= cnt)
			break;
		done(o, p);
		fixed = st->close_len;
		k = take(o, fixed, cnt - j, per);
		p = piece(o, fixed + k * per);
	}
	memcpy(p, st->seq_close, 2);
	p += st->close_len;
	done(o, p);
}

/*
 * A double in the fewest significant digits that read back as the same
 * double (0.0005, not 0.00050000000000000001; as babeltrace2 prints), kept a
 * floating-point literal (0 -> 0.0); JSON: non-finite values are null.
 * Reading back exactly is monotonic in the number of digits (17 always do):
 * a binary search over 1..17.
 */
/* the shortest text that reads back as d; is_float: as the float d holds */
static char *put_real(char *p, double d, int json, int is_float)
{
	if (json && !isfinite(d))
		return put_chars(p, "null", 4);
	/* at most 17 significant digits: 24 bytes; sized for what the compiler
	 * assumes of "%.*g" (-Wformat-truncation cannot see the bound) */
	char t[320];
	int k;
	if (!isfinite(d)) {
		k = snprintf(t, sizeof t, "%.17g", d);
	} else {
		int lo = 1, hi = is_float ? 9 : 17;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			snprintf(t, sizeof t, "%.*g", mid, d);
			if (is_float ? strtof(t, NULL) == (float)d : strtod(t, NULL) == d)
				hi = mid;
			else
				lo = mid + 1;
		}
		k = snprintf(t, sizeof t, "%.*g", lo, d);
	}
	if (!strpbrk(t, ".eEni"))
		k += snprintf(t + k, sizeof t - (size_t)k, ".0");
	memcpy(p, t, (size_t)k);
	return p + k;
}

#define SCALAR_MAX 32u /* longest number: "%.17g" of a double (24) and ".0" */

/* the longest label: ", ", a field name (< TB_TSDL_NAME_MAX bytes, JSON-escaped) and " = " */
#define LABEL_MAX (2 + 6 * TB_TSDL_NAME_MAX + 2 + 3)
/* so a piece always fits the scratch: a label with a number, or with a string's quotes and
 * some of its bytes (6 each, 12 for an unfinished UTF-8 sequence), or with some sequence elements */
_Static_assert(LABEL_MAX + 14 + 6 + 2 + TB_DEC_U64_MAX + SCALAR_MAX + SLACK <= SCRATCH, "a piece fits the scratch");

/* an enum label that text output shows without quotes: a C identifier, short */
static int bare_label(const char *s, size_t n)
{
	if (!n || n > 64 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return 0;
	return 1;
}

static void format_fields(struct out *o, const struct tb_rd_event *e, int json)
{
	const struct style *st = &styles[json];
	const struct tb_tsdl_class *k = e->k;
	const struct rd_vis *v = &e->s->r->vis[e->ci];
	const uint32_t *off = k->fixed_size >= 0 ? k->fixed_off : e->off;
	for (uint32_t i = 0; i < v->n; i++) {
		const struct rd_vfield *f = &v->f[i];
		const char *lab = v->labels + f->label[json];
		size_t lablen = f->label_len[json];
		const uint8_t *fp = e->payload + off[f->raw];
		if (f->type == TB_FT_STRING) {
			put_str(o, lab, lablen, fp, strlen((const char *)fp), json, 1); /* NUL checked when decoded */
			continue;
		}
		if (f->type == TB_FT_BYTES || f->type == TB_FT_U64SEQ) {
			uint64_t cnt = tb_rd_ld_uint(e->payload + off[f->len_raw], f->len_size);
			put_seq(o, st, lab, lablen, fp, (uint32_t)cnt, f->type == TB_FT_U64SEQ);
			continue;
		}
		if (f->type == TB_FT_ENUM) {
			const struct tb_tsdl_field *fd = &k->fields[f->raw];
			int64_t val = tb_rd_ld_enum(fp, fd);
			const char *name = tb_rd_enum_find(&e->s->r->m.enums[fd->enum_idx], val);
			if (name) {
				size_t nl = strlen(name);
				if (!json && bare_label(name, nl)) /* state = RUNNING */
					done(o, put_chars(put_label(piece(o, lablen + nl), lab, lablen), name, nl));
				else /* JSON, or a label that is not an identifier: a string */
					put_str(o, lab, lablen, (const unsigned char *)name, nl, json, 1);
				continue;
			}
			/* no label maps it: the number (babeltrace2 shows it so too) */
			done(o, tb_dec_i64(put_label(piece(o, lablen + SCALAR_MAX), lab, lablen), val));
			continue;
		}
		char *p = put_label(piece(o, lablen + SCALAR_MAX), lab, lablen);
		switch (f->type) {
		case TB_FT_U8: case TB_FT_U16: case TB_FT_U32: case TB_FT_U64:
			p = tb_dec_u64(p, tb_rd_ld_uint(fp, f->size));
			break;
		case TB_FT_I8: p = tb_dec_i64(p, (int8_t)fp[0]); break;
		case TB_FT_I16: p = tb_dec_i64(p, (int16_t)tb_rd_ld_uint(fp, 2)); break;
		case TB_FT_I32: p = tb_dec_i64(p, (int32_t)tb_rd_ld_uint(fp, 4)); break;
		case TB_FT_I64: p = tb_dec_i64(p, (int64_t)tb_rd_ld_uint(fp, 8)); break;
		case TB_FT_F64: {
			double d;
			memcpy(&d, fp, 8);
			p = put_real(p, d, json, 0);
			break;
		}
		case TB_FT_F32: {
			float x;
			memcpy(&x, fp, 4);
			p = put_real(p, x, json, 1);
			break;
		}
		case TB_FT_BOOL:
			p = fp[0] ? put_chars(p, "true", 4) : put_chars(p, "false", 5);
			break;
		default:
			p = put_chars(p, "null", 4);
		}
		done(o, p);
	}
}

/* (not `= { ... }`: that would clear the scratch at every call) */
static inline void out_init(struct out *o, char *buf, size_t cap)
{
	o->b = buf;
	o->cap = cap;
	o->n = 0;
}

size_t tb_rd_format_string(const char *s, size_t n, int json, char *buf, size_t cap)
{
	static const char nolabel[RD_LABEL_PAD]; /* put_label reads whole words */
	struct out o;
	out_init(&o, buf, cap);
	put_str(&o, nolabel, 0, (const unsigned char *)s, n, json, 1);
	return o.n;
}

size_t tb_rd_format_text(const char *s, size_t n, char *buf, size_t cap)
{
	static const char nolabel[RD_LABEL_PAD];
	struct out o;
	out_init(&o, buf, cap);
	put_str(&o, nolabel, 0, (const unsigned char *)s, n, 0, 0);
	return o.n;
}

size_t tb_rd_utf8_clean(const char *s, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t bad = 1, k = tb_rd_utf8_len(s + i, n - i, &bad);
		const char *src = k ? s + i : "\xef\xbf\xbd";
		size_t len = k ? k : 3;
		for (size_t j = 0; j < len; j++, o++)
			if (o < cap)
				buf[o] = src[j];
		i += k ? k : bad;
	}
	return o;
}

size_t tb_rd_format_fields(const struct tb_rd_event *e, int json, char *buf, size_t cap)
{
	struct out o;
	out_init(&o, buf, cap);
	if (e->k)
		format_fields(&o, e, !!json);
	return o.n;
}

/* ---------------------------------------------------------------------- */
/* per-class preparation                                                   */

int tb_rd_fmt_prepare(struct tb_reader *r)
{
	for (uint32_t ci = 0; ci < r->m.nclasses; ci++) {
		const struct tb_tsdl_class *k = &r->m.classes[ci];
		struct rd_vis *v = &r->vis[ci];
		/* the labels' size: text ", escaped name = " and its NUL, JSON ",\"escaped name\":" */
		size_t size = RD_LABEL_PAD;
		for (uint32_t f = 0; f < k->nfields; f++) {
			const char *name = k->fields[f].name;
			size_t nl = strlen(name);
			if (!k->fields[f].is_length)
				size += tb_rd_format_text(name, nl, NULL, 0) + 6 + tb_rd_format_string(name, nl, 1, NULL, 0) + 2;
		}
		v->labels = calloc(1, size);
		if (!v->labels)
			return -ENOMEM;
		size_t at = 0;
		v->n = 0;
		for (uint32_t f = 0; f < k->nfields; f++) {
			const struct tb_tsdl_field *fd = &k->fields[f];
			if (fd->is_length)
				continue;
			struct rd_vfield *vf = &v->f[v->n];
			size_t nl = strlen(fd->name);
			vf->raw = (uint8_t)f;
			vf->type = fd->type;
			vf->size = fd->size;
			if (fd->length_of >= 0) {
				vf->len_raw = (uint8_t)fd->length_of;
				vf->len_size = k->fields[fd->length_of].size;
			}
			/* text */
			vf->label[0] = (uint32_t)at;
			if (v->n) {
				memcpy(v->labels + at, ", ", 2);
				at += 2;
			}
			at += tb_rd_format_text(fd->name, nl, v->labels + at, size - at);
			memcpy(v->labels + at, " = ", 3);
			at += 3;
			vf->label_len[0] = (uint16_t)(at - vf->label[0]);
			/* JSON */
			vf->label[1] = (uint32_t)at;
			if (v->n)
				v->labels[at++] = ',';
			at += tb_rd_format_string(fd->name, nl, 1, v->labels + at, size - at);
			v->labels[at++] = ':';
			vf->label_len[1] = (uint16_t)(at - vf->label[1]);
			v->n++;
		}
	}
	return 0;
}
