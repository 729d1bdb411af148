/* SPDX-License-Identifier: MIT */
/*
 * format.c - text and JSON renderings of an event's fields, shared by
 * `tracebuf dump`, `report` and `convert`.  snprintf-like: never writes past
 * cap, returns the length the full rendering needs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tracebuf/reader.h>

struct out {
	char *b;
	size_t cap, n;
};

static inline void put(struct out *o, const char *s, size_t n)
{
	if (o->n < o->cap) {
		size_t k = o->cap - o->n < n ? o->cap - o->n : n;
		memcpy(o->b + o->n, s, k);
	}
	o->n += n;
}

static inline void putc_(struct out *o, char c)
{
	if (o->n < o->cap)
		o->b[o->n] = c;
	o->n++;
}

static void put_u64(struct out *o, uint64_t v)
{
	char t[24];
	int i = 24;
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, t + i, (size_t)(24 - i));
}

static void put_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		putc_(o, '-');
		put_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

static void put_str(struct out *o, const char *str, size_t n, int json)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	putc_(o, '"');
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		while (run < n && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' && s[run] != '\\')
			run++;
		put(o, (const char *)s + i, run - i);
		i = run;
		if (i >= n)
			break;
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			putc_(o, '\\');
			putc_(o, (char)c);
			i++;
		} else if (c == '\n') {
			put(o, "\\n", 2), i++;
		} else if (c == '\t') {
			put(o, "\\t", 2), i++;
		} else if (c == '\r') {
			put(o, "\\r", 2), i++;
		} else if (c >= 0x80) {
			size_t k = utf8_len(s + i, n - i);
			if (k) {
				put(o, (const char *)s + i, k);
				i += k;
			} else {
				/* not UTF-8: the byte as U+00XX (JSON) or \xXX (text) */
				if (json)
					put(o, "\\u00", 4);
				else
					put(o, "\\x", 2);
				putc_(o, hex[c >> 4]);
				putc_(o, hex[c & 15]);
				i++;
			}
		} else {
			if (json)
				put(o, "\\u00", 4);
			else
				put(o, "\\x", 2);
			putc_(o, hex[c >> 4]);
			putc_(o, hex[c & 15]);
			i++;
		}
	}
	putc_(o, '"');
}

size_t tb_rd_format_string(const char *s, size_t n, int json, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	put_str(&o, s, n, json);
	return o.n;
}

size_t tb_rd_format_fields(const struct tb_rd_event *e, int json, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	unsigned n = tb_rd_nfields(e);
	for (unsigned i = 0; i < n; i++) {
		const char *name = tb_rd_field_name(e, i);
		if (i)
			put(&o, json ? "," : ", ", json ? 1 : 2);
		if (json) {
			put_str(&o, name, strlen(name), 1);
			putc_(&o, ':');
		} else {
			put(&o, name, strlen(name));
			put(&o, " = ", 3);
		}
		int t = tb_rd_field_type(e, i);
		switch (t) {
		case TB_RD_U8: case TB_RD_U16: case TB_RD_U32: case TB_RD_U64:
			put_u64(&o, tb_rd_u64(e, i));
			break;
		case TB_RD_I8: case TB_RD_I16: case TB_RD_I32: case TB_RD_I64:
			put_i64(&o, tb_rd_i64(e, i));
			break;
		case TB_RD_F64: {
			double d = tb_rd_f64(e, i);
			char t2[40];
			if (json && !isfinite(d)) {
				put(&o, "null", 4);
				break;
			}
			int k = snprintf(t2, sizeof t2, "%.17g", d);
			if (!strpbrk(t2, ".eEni")) /* keep it a floating-point literal: 0 -> 0.0 */
				k += snprintf(t2 + k, sizeof t2 - (size_t)k, ".0");
			put(&o, t2, (size_t)k);
			break;
		}
		case TB_RD_STRING: {
			size_t len;
			const char *s = tb_rd_str(e, i, &len);
			put_str(&o, s, len, json);
			break;
		}
		case TB_RD_BYTES: case TB_RD_U64SEQ: {
			uint32_t cnt;
			tb_rd_seq(e, i, &cnt);
			put(&o, json ? "[" : "[ ", json ? 1 : 2);
			for (uint32_t j = 0; j < cnt; j++) {
				if (j)
					put(&o, json ? "," : ", ", json ? 1 : 2);
				put_u64(&o, tb_rd_seq_u64(e, i, j));
			}
			put(&o, json ? "]" : " ]", json ? 1 : 2);
			break;
		}
		default:
			put(&o, "null", 4);
		}
	}
	return o.n;
}
