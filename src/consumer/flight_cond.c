/* SPDX-License-Identifier: MIT */
/*
 * flight_cond.c - the --snapshot-on conditions (flight.h has the grammar):
 *
 *   tb_flight_cond_parse()  text -> struct tb_flight_cond, or where and why not
 *   tb_flight_cond_class()  does a condition apply to a class (its fields, their
 *                           types), and which field each comparison reads
 *   tb_flight_cond_eval()   the comparisons on one payload (the scan's hot part:
 *                           only records of the classes a condition names)
 *
 * Pure: no shared memory, no allocation; the payload is bounds-checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "consumer/flight.h"

static int name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
	       ch == '.' || ch == '-';
}

static int ident_char(char ch, int first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (!first && ch >= '0' && ch <= '9');
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

#define FAIL(at, msg)                                                                                            \
	do {                                                                                                     \
		*pos = (unsigned)((at) - text);                                                                  \
		*why = (msg);                                                                                    \
		return -EINVAL;                                                                                  \
	} while (0)

/* a duration: digits [. digits] then ns, us, ms or s */
static int parse_dur(const char *p, uint64_t *ns, const char **endp)
{
	uint64_t whole = 0, frac = 0, fdiv = 1;
	const char *q = p;
	if (*q < '0' || *q > '9')
		return -1;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*q - '0');
	}
	if (*q == '.')
		for (q++; *q >= '0' && *q <= '9'; q++)
			if (fdiv < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*q - '0');
				fdiv *= 10;
			}
	uint64_t unit;
	if (!strncmp(q, "ns", 2)) {
		unit = 1;
		q += 2;
	} else if (!strncmp(q, "us", 2)) {
		unit = 1000;
		q += 2;
	} else if (!strncmp(q, "ms", 2)) {
		unit = 1000000;
		q += 2;
	} else if (*q == 's') {
		unit = 1000000000;
		q += 1;
	} else {
		*endp = q;
		return -2; /* no unit */
	}
	if (whole > UINT64_MAX / unit / 2)
		return -1;
	*ns = whole * unit + frac * unit / fdiv;
	*endp = q;
	return 0;
}

int tb_flight_cond_parse(const char *text, struct tb_flight_cond *c, unsigned *pos, const char **why)
{
	memset(c, 0, sizeof *c);
	size_t tl = strlen(text);
	if (tl >= sizeof c->text)
		FAIL(text + sizeof c->text - 1, "the condition is longer than 255 bytes");
	memcpy(c->text, text, tl + 1);
	const char *p = skip_ws(text), *n0 = p;
	/* CLASS (or SPAN): name chars, one ':', globs */
	int colons = 0, glob = 0;
	for (; name_char(*p) || *p == ':' || *p == '*' || *p == '?'; p++) {
		colons += *p == ':';
		glob |= *p == '*' || *p == '?';
	}
	size_t nl = (size_t)(p - n0);
	if (!nl)
		FAIL(p, "expected an event class (provider:event) or a span name");
	if (colons != 1 || n0[0] == ':' || p[-1] == ':')
		FAIL(n0, "a class or span name is provider:event, with one ':'");
	if (nl >= sizeof c->pattern)
		FAIL(n0, "the class name is longer than 95 bytes");
	memcpy(c->pattern, n0, nl);
	c->pattern[nl] = 0;
	p = skip_ws(p);
	if (*p == '>') {
		/* a span threshold */
		if (glob)
			FAIL(n0, "a span is named exactly (no '*' or '?' in it)");
		const char *d = skip_ws(p + 1), *e;
		if (*d == '=')
			FAIL(p, "a span threshold is SPAN>DURATION ('>=' is not supported)");
		int r = parse_dur(d, &c->dur_ns, &e);
		if (r == -2)
			FAIL(e, "the duration needs a unit: ns, us, ms or s (e.g. 10ms)");
		if (r < 0)
			FAIL(d, "expected a duration (e.g. 10ms, 1.5s)");
		e = skip_ws(e);
		if (*e)
			FAIL(e, "unexpected text after the duration");
		c->kind = TB_FLIGHT_SPAN;
		return 0;
	}
	c->kind = TB_FLIGHT_EVENT;
	if (!*p)
		return 0; /* every event of the class */
	if (*p != '[')
		FAIL(p, "expected '[' (field comparisons), '>' (a span threshold) or the end");
	p++;
	for (;;) {
		p = skip_ws(p);
		if (c->ncmp == TB_FLIGHT_CMP_MAX)
			FAIL(p, "more than 8 comparisons");
		struct tb_flight_cmp *m = &c->cmp[c->ncmp];
		const char *f0 = p;
		if (!ident_char(*p, 1))
			FAIL(p, "expected a field name");
		while (ident_char(*p, 0))
			p++;
		if ((size_t)(p - f0) >= sizeof m->field)
			FAIL(f0, "the field name is longer than 31 bytes");
		memcpy(m->field, f0, (size_t)(p - f0));
		m->pos = (unsigned)(f0 - text);
		p = skip_ws(p);
		const char *o0 = p;
		if (p[0] == '=' && p[1] == '=')
			m->op = TB_CMP_EQ, p += 2;
		else if (p[0] == '!' && p[1] == '=')
			m->op = TB_CMP_NE, p += 2;
		else if (p[0] == '<' && p[1] == '=')
			m->op = TB_CMP_LE, p += 2;
		else if (p[0] == '>' && p[1] == '=')
			m->op = TB_CMP_GE, p += 2;
		else if (p[0] == '<')
			m->op = TB_CMP_LT, p += 1;
		else if (p[0] == '>')
			m->op = TB_CMP_GT, p += 1;
		else
			FAIL(o0, "expected a comparison: ==, !=, <, <=, >, >=");
		if (*p == '=' || *p == '<' || *p == '>' || *p == '!')
			FAIL(o0, "not a comparison (one of ==, !=, <, <=, >, >=)");
		p = skip_ws(p);
		const char *v0 = p;
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			size_t k = 0;
			for (; *p && *p != q; p++) {
				if (k + 1 >= sizeof m->str)
					FAIL(v0, "the string is longer than 127 bytes");
				m->str[k++] = *p;
			}
			if (*p != q)
				FAIL(v0, "the string has no closing quote");
			p++;
			m->is_str = 1;
		} else if ((*p >= '0' && *p <= '9') || (*p == '-' && p[1] >= '0' && p[1] <= '9')) {
			m->neg = *p == '-';
			if (m->neg)
				p++;
			int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
			if (hex)
				p += 2;
			const char *d0 = p;
			uint64_t v = 0;
			for (;; p++) {
				unsigned dg;
				if (*p >= '0' && *p <= '9')
					dg = (unsigned)(*p - '0');
				else if (hex && *p >= 'a' && *p <= 'f')
					dg = (unsigned)(*p - 'a' + 10);
				else if (hex && *p >= 'A' && *p <= 'F')
					dg = (unsigned)(*p - 'A' + 10);
				else
					break;
				unsigned b = hex ? 16 : 10;
				if (v > (UINT64_MAX - dg) / b)
					FAIL(v0, "the number does not fit in 64 bits");
				v = v * b + dg;
			}
			if (p == d0)
				FAIL(v0, "expected a number");
			if (name_char(*p) || *p == ':')
				FAIL(v0, "not a number (a string value is quoted: \"...\")");
			if (m->neg && v > (1ull << 63))
				FAIL(v0, "the number does not fit in 64 bits");
			m->ival = v;
		} else if (name_char(*p) || *p == '/') {
			size_t k = 0;
			for (; *p && *p != ' ' && *p != '\t' && *p != ']' && !(p[0] == '&' && p[1] == '&'); p++) {
				if (k + 1 >= sizeof m->str)
					FAIL(v0, "the string is longer than 127 bytes");
				m->str[k++] = *p;
			}
			m->is_str = 1;
		} else {
			FAIL(v0, "expected a value: a number or a string");
		}
		if (m->is_str && m->op != TB_CMP_EQ && m->op != TB_CMP_NE)
			FAIL(o0, "a string compares with == or != only");
		c->ncmp++;
		p = skip_ws(p);
		if (p[0] == '&' && p[1] == '&') {
			p += 2;
			continue;
		}
		if (*p == ']')
			break;
		FAIL(p, "expected '&&' or ']'");
	}
	p = skip_ws(p + 1);
	if (*p)
		FAIL(p, "unexpected text after ']'");
	return 0;
}

static int int_type(uint32_t t)
{
	return (t >= TB_FT_U8 && t <= TB_FT_I64) || t == TB_FT_BOOL || t == TB_FT_ENUM;
}

int tb_flight_cond_class(const struct tb_flight_cond *c, const char *name, const struct tb_field_desc *f,
			 unsigned nf, unsigned fidx[TB_FLIGHT_CMP_MAX], int *role, unsigned *bad, const char **why)
{
	*role = 0;
	if (c->kind == TB_FLIGHT_SPAN) {
		size_t pl = strlen(c->pattern), nl = strlen(name);
		if (nl <= pl || strncmp(name, c->pattern, pl) != 0)
			return 0;
		if (!strcmp(name + pl, "_begin"))
			*role = 1;
		else if (!strcmp(name + pl, "_end"))
			*role = 2;
		return *role ? 1 : 0;
	}
	if (fnmatch(c->pattern, name, 0) != 0)
		return 0;
	if (nf > TB_MAX_FIELDS)
		nf = TB_MAX_FIELDS;
	for (unsigned k = 0; k < c->ncmp; k++) {
		const struct tb_flight_cmp *m = &c->cmp[k];
		unsigned i = 0;
		while (i < nf && strncmp(f[i].name, m->field, TB_FIELD_NAME_MAX) != 0)
			i++;
		*bad = k;
		if (i == nf) {
			*why = "has no such field";
			return -1;
		}
		if (m->is_str && f[i].type != TB_FT_STRING) {
			*why = "compares a string with a field that is not a string";
			return -1;
		}
		if (!m->is_str && !int_type(f[i].type)) {
			*why = f[i].type == TB_FT_STRING ? "compares a number with a string field (quote the value)"
							 : "compares a field that is neither an integer nor a string";
			return -1;
		}
		fidx[k] = i;
	}
	return 1;
}

/* Where field k starts in the payload and its size: 0, or -1 when the payload is too short. */
static int field_at(const struct tb_event_desc *e, const uint8_t *p, uint64_t len, unsigned k, uint64_t *off,
		    uint64_t *sz)
{
	uint64_t o = 0;
	for (unsigned i = 0; i <= k; i++) {
		const struct tb_field_desc *f = &e->fields[i];
		uint64_t n;
		switch (f->type) {
		case TB_FT_U8: case TB_FT_I8: case TB_FT_BOOL: n = 1; break;
		case TB_FT_U16: case TB_FT_I16: n = 2; break;
		case TB_FT_U32: case TB_FT_I32: case TB_FT_F32: case TB_FT_ENUM: n = 4; break;
		case TB_FT_U64: case TB_FT_I64: case TB_FT_F64: n = 8; break;
		case TB_FT_STRING: {
			const uint8_t *z = o < len ? memchr(p + o, 0, len - o) : NULL;
			if (!z)
				return -1;
			n = (uint64_t)(z - (p + o)) + 1;
			break;
		}
		case TB_FT_BYTES: case TB_FT_U64SEQ: {
			uint32_t cnt;
			if (len - o < 4)
				return -1;
			memcpy(&cnt, p + o, 4);
			n = 4 + (uint64_t)cnt * (f->type == TB_FT_BYTES ? 1 : 8);
			break;
		}
		default:
			return -1;
		}
		if (n > len - o)
			return -1;
		if (i == k) {
			*off = o;
			*sz = n;
			return 0;
		}
		o += n;
	}
	return -1;
}

int tb_flight_cond_eval(const struct tb_flight_cond *c, const unsigned fidx[TB_FLIGHT_CMP_MAX],
			const struct tb_event_desc *e, const uint8_t *payload, uint64_t len)
{
	for (unsigned k = 0; k < c->ncmp; k++) {
		const struct tb_flight_cmp *m = &c->cmp[k];
		uint64_t off, sz;
		if (fidx[k] >= TB_MAX_FIELDS || field_at(e, payload, len, fidx[k], &off, &sz) < 0)
			return 0;
		const uint8_t *v = payload + off;
		int r;
		if (m->is_str) {
			/* sz includes the NUL */
			int eq = sz - 1 == strlen(m->str) && !memcmp(v, m->str, sz - 1);
			r = m->op == TB_CMP_EQ ? eq : !eq;
		} else {
			__int128 x, want = m->neg ? -(__int128)m->ival : (__int128)m->ival;
			uint32_t t = e->fields[fidx[k]].type;
			switch (t) {
			case TB_FT_U8: case TB_FT_BOOL: x = v[0]; break;
			case TB_FT_I8: x = (int8_t)v[0]; break; // NOLINT(bugprone-signed-char-misuse,cert-str34-c): an i8 field is signed
			case TB_FT_U16: { uint16_t u; memcpy(&u, v, 2); x = u; break; }
			case TB_FT_I16: { int16_t u; memcpy(&u, v, 2); x = u; break; }
			case TB_FT_U32: { uint32_t u; memcpy(&u, v, 4); x = u; break; }
			case TB_FT_I32: case TB_FT_ENUM: { int32_t u; memcpy(&u, v, 4); x = u; break; }
			case TB_FT_U64: { uint64_t u; memcpy(&u, v, 8); x = u; break; }
			case TB_FT_I64: { int64_t u; memcpy(&u, v, 8); x = u; break; }
			default: return 0;
			}
			switch (m->op) {
			case TB_CMP_EQ: r = x == want; break;
			case TB_CMP_NE: r = x != want; break;
			case TB_CMP_LT: r = x < want; break;
			case TB_CMP_LE: r = x <= want; break;
			case TB_CMP_GT: r = x > want; break;
			default: r = x >= want; break;
			}
		}
		if (!r)
			return 0;
	}
	return 1;
}
