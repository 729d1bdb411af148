/* SPDX-License-Identifier: MIT */
/*
 * flight_cond.c - the --snapshot-on conditions (flight.h has the grammar):
 *
 *   tb_flight_cond_parse()  text -> struct tb_flight_cond, or where and why not
 *   tb_flight_cond_class()  does a condition apply to a class (its fields, their
 *                           types), and which field each comparison reads
 *   tb_flight_cond_eval()   the comparisons on one payload, then the compiled
 *                           &&/|| program over their results (the scan's hot
 *                           part: only records of the classes a condition names)
 *
 * Pure: no shared memory, no allocation; the payload is bounds-checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* the parse of the bracket: recursive descent over EXPR/AND/TERM (flight.h),
 * the recursion bounded by TB_FLIGHT_DEPTH_MAX parentheses */
struct cparse {
	const char *text, *p;
	struct tb_flight_cond *c;
	unsigned depth;
	unsigned *pos;
	const char **why;
};

#define PFAIL(ps, at, msg)                                                                                       \
	do {                                                                                                     \
		*(ps)->pos = (unsigned)((at) - (ps)->text);                                                      \
		*(ps)->why = (msg);                                                                              \
		return -EINVAL;                                                                                  \
	} while (0)

static int emit(struct cparse *ps, unsigned step)
{
	if (ps->c->nprog == TB_FLIGHT_PROG_MAX) /* cannot happen: ncmp <= CMP_MAX bounds it */
		PFAIL(ps, ps->p, "the condition is too complex");
	ps->c->prog[ps->c->nprog++] = (uint8_t)step;
	return 0;
}

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* a number at ps->p (a digit, or '-' then a digit): an integer (decimal or
 * 0x) or a decimal number with '.' or an exponent */
static int parse_number(struct cparse *ps, struct tb_flight_cmp *m)
{
	const char *v0 = ps->p, *p = ps->p;
	m->neg = *p == '-';
	if (m->neg)
		p++;
	int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	if (hex) {
		p += 2;
	} else {
		/* the decimal forms: D+ [. D*] [e [+-] D+] */
		const char *q = p;
		while (is_digit(*q))
			q++;
		if (*q == '.') {
			m->is_dec = 1;
			for (q++; is_digit(*q); q++)
				;
		}
		if (*q == 'e' || *q == 'E') {
			const char *e = q + 1;
			if (*e == '+' || *e == '-')
				e++;
			if (!is_digit(*e))
				PFAIL(ps, v0, "not a number: the exponent has no digits (e.g. 1e-3)");
			m->is_dec = 1;
			for (q = e; is_digit(*q); q++)
				;
		}
		if (m->is_dec) {
			if (name_char(*q) || *q == ':')
				PFAIL(ps, v0, "not a number (a string value is quoted: \"...\")");
			char buf[TB_FLIGHT_COND_TEXT];
			size_t n = (size_t)(q - v0);
			memcpy(buf, v0, n); /* n < the text's length, itself < TB_FLIGHT_COND_TEXT */
			buf[n] = 0;
			/* the C locale's '.', whatever the process's locale */
			locale_t cl = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
			if (cl == (locale_t)0)
				PFAIL(ps, v0, "cannot read a decimal number (no C locale: out of memory)");
			char *end1, *end2;
			m->dval = strtod_l(buf, &end1, cl);
			m->fval = strtof_l(buf, &end2, cl);
			freelocale(cl);
			if (*end1 || *end2)
				PFAIL(ps, v0, "not a number");
			if (isinf(m->dval))
				PFAIL(ps, v0, "the number does not fit in a double (f64)");
			ps->p = q;
			return 0;
		}
	}
	const char *d0 = p;
	uint64_t v = 0;
	for (;; p++) {
		unsigned dg;
		if (is_digit(*p))
			dg = (unsigned)(*p - '0');
		else if (hex && *p >= 'a' && *p <= 'f')
			dg = (unsigned)(*p - 'a' + 10);
		else if (hex && *p >= 'A' && *p <= 'F')
			dg = (unsigned)(*p - 'A' + 10);
		else
			break;
		unsigned b = hex ? 16 : 10;
		if (v > (UINT64_MAX - dg) / b)
			PFAIL(ps, v0, "the number does not fit in 64 bits");
		v = v * b + dg;
	}
	if (p == d0)
		PFAIL(ps, v0, "expected a number");
	if (name_char(*p) || *p == ':')
		PFAIL(ps, v0, "not a number (a string value is quoted: \"...\")");
	if (m->neg && v > (1ull << 63))
		PFAIL(ps, v0, "the number does not fit in 64 bits");
	m->ival = v;
	/* for a float field: one rounding each, as C converts an integer */
	m->dval = m->neg ? -(double)v : (double)v;
	m->fval = m->neg ? -(float)v : (float)v;
	ps->p = p;
	return 0;
}

/* CMP: FIELD OP VALUE */
static int parse_cmp(struct cparse *ps)
{
	struct tb_flight_cond *c = ps->c;
	const char *p = ps->p;
	if (c->ncmp == TB_FLIGHT_CMP_MAX)
		PFAIL(ps, p, "more than 8 comparisons");
	struct tb_flight_cmp *m = &c->cmp[c->ncmp];
	const char *f0 = p;
	if (!ident_char(*p, 1))
		PFAIL(ps, p, "expected a field name or '('");
	while (ident_char(*p, 0))
		p++;
	if ((size_t)(p - f0) >= sizeof m->field)
		PFAIL(ps, f0, "the field name is longer than 31 bytes");
	memcpy(m->field, f0, (size_t)(p - f0));
	m->pos = (unsigned)(f0 - ps->text);
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
		PFAIL(ps, o0, "expected a comparison: ==, !=, <, <=, >, >=");
	if (*p == '=' || *p == '<' || *p == '>' || *p == '!')
		PFAIL(ps, o0, "not a comparison (one of ==, !=, <, <=, >, >=)");
	p = skip_ws(p);
	const char *v0 = p;
	if (*p == '"' || *p == '\'') {
		char q = *p++;
		size_t k = 0;
		for (; *p && *p != q; p++) {
			if (k + 1 >= sizeof m->str)
				PFAIL(ps, v0, "the string is longer than 127 bytes");
			m->str[k++] = *p;
		}
		if (*p != q)
			PFAIL(ps, v0, "the string has no closing quote");
		p++;
		m->is_str = 1;
	} else if (is_digit(*p) || (*p == '-' && is_digit(p[1]))) {
		ps->p = p;
		int r = parse_number(ps, m);
		if (r < 0)
			return r;
		p = ps->p;
	} else if (name_char(*p) || *p == '/') {
		/* a bare word: up to a space, ']', '&&', '||' and, inside
		 * parentheses, ')' (outside, a ')' is part of it, as it always was) */
		size_t k = 0;
		for (; *p && *p != ' ' && *p != '\t' && *p != ']' && !(p[0] == '&' && p[1] == '&') &&
		       !(p[0] == '|' && p[1] == '|') && !(ps->depth && *p == ')');
		     p++) {
			if (k + 1 >= sizeof m->str)
				PFAIL(ps, v0, "the string is longer than 127 bytes");
			m->str[k++] = *p;
		}
		m->is_str = 1;
	} else {
		PFAIL(ps, v0, "expected a value: a number or a string");
	}
	if (m->is_str && m->op != TB_CMP_EQ && m->op != TB_CMP_NE)
		PFAIL(ps, o0, "a string compares with == or != only");
	ps->p = p;
	return emit(ps, c->ncmp++);
}

static int parse_or(struct cparse *ps);

/* TERM: CMP | '(' EXPR ')' */
static int parse_term(struct cparse *ps)
{
	ps->p = skip_ws(ps->p);
	if (*ps->p != '(')
		return parse_cmp(ps);
	if (ps->depth == TB_FLIGHT_DEPTH_MAX)
		PFAIL(ps, ps->p, "more than 8 parentheses open at once");
	ps->depth++;
	ps->p++;
	int r = parse_or(ps);
	if (r < 0)
		return r;
	ps->p = skip_ws(ps->p);
	if (*ps->p != ')')
		PFAIL(ps, ps->p, "expected '&&', '||' or ')'");
	ps->p++;
	ps->depth--;
	return 0;
}

/* AND: TERM ( '&&' TERM )* */
static int parse_and(struct cparse *ps)
{
	int r = parse_term(ps);
	while (r == 0) {
		ps->p = skip_ws(ps->p);
		if (ps->p[0] != '&' || ps->p[1] != '&')
			return 0;
		ps->p += 2;
		if ((r = parse_term(ps)) == 0)
			r = emit(ps, TB_PROG_AND);
	}
	return r;
}

/* EXPR: AND ( '||' AND )* */
static int parse_or(struct cparse *ps)
{
	int r = parse_and(ps);
	while (r == 0) {
		ps->p = skip_ws(ps->p);
		if (ps->p[0] != '|' || ps->p[1] != '|')
			return 0;
		ps->p += 2;
		ps->c->has_or = 1;
		if ((r = parse_and(ps)) == 0)
			r = emit(ps, TB_PROG_OR);
	}
	return r;
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
	struct cparse ps = { .text = text, .p = p + 1, .c = c, .pos = pos, .why = why };
	if (parse_or(&ps) < 0)
		return -EINVAL;
	p = skip_ws(ps.p);
	if (*p != ']')
		FAIL(p, "expected '&&', '||' or ']'");
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
		int flt = f[i].type == TB_FT_F32 || f[i].type == TB_FT_F64;
		if (m->is_str && f[i].type != TB_FT_STRING) {
			*why = flt ? "compares a string with a float field (give a number, e.g. 0.25)"
				   : "compares a string with a field that is not a string";
			return -1;
		}
		if (!m->is_str && !int_type(f[i].type) && !flt) {
			*why = f[i].type == TB_FT_STRING ? "compares a number with a string field (quote the value)"
							 : "compares a field that is neither a number nor a string";
			return -1;
		}
		if (m->is_dec && !flt) {
			*why = "compares an integer field with a decimal value (give an integer)";
			return -1;
		}
		if (f[i].type == TB_FT_F32 && isinf(m->fval)) {
			*why = "compares an f32 field with a value beyond its range (about 3.4e38)";
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

/* the comparison of two numbers of one C type: IEEE for floats (a NaN: only != holds) */
#define CMP_OP(op, x, want)                                                                                      \
	((op) == TB_CMP_EQ ? (x) == (want)                                                                       \
	 : (op) == TB_CMP_NE ? (x) != (want)                                                                     \
	 : (op) == TB_CMP_LT ? (x) < (want)                                                                      \
	 : (op) == TB_CMP_LE ? (x) <= (want)                                                                     \
	 : (op) == TB_CMP_GT ? (x) > (want)                                                                      \
			     : (x) >= (want))

/* comparison m on field `t` at v (sz bytes, bounds checked): 1, 0; -1: not a type it can read */
static int cmp_one(const struct tb_flight_cmp *m, uint32_t t, const uint8_t *v, uint64_t sz)
{
	if (m->is_str) {
		/* sz includes the NUL */
		int eq = t == TB_FT_STRING && sz - 1 == strlen(m->str) && !memcmp(v, m->str, sz - 1);
		return m->op == TB_CMP_EQ ? eq : !eq;
	}
	if (t == TB_FT_F64) {
		double x;
		memcpy(&x, v, 8);
		return CMP_OP(m->op, x, m->dval);
	}
	if (t == TB_FT_F32) {
		float x;
		memcpy(&x, v, 4);
		return CMP_OP(m->op, x, m->fval);
	}
	__int128 x, want = m->neg ? -(__int128)m->ival : (__int128)m->ival;
	switch (t) {
	case TB_FT_U8: case TB_FT_BOOL: x = v[0]; break;
	case TB_FT_I8: x = (int8_t)v[0]; break; // NOLINT(bugprone-signed-char-misuse,cert-str34-c): an i8 field is signed
	case TB_FT_U16: { uint16_t u; memcpy(&u, v, 2); x = u; break; }
	case TB_FT_I16: { int16_t u; memcpy(&u, v, 2); x = u; break; }
	case TB_FT_U32: { uint32_t u; memcpy(&u, v, 4); x = u; break; }
	case TB_FT_I32: case TB_FT_ENUM: { int32_t u; memcpy(&u, v, 4); x = u; break; }
	case TB_FT_U64: { uint64_t u; memcpy(&u, v, 8); x = u; break; }
	case TB_FT_I64: { int64_t u; memcpy(&u, v, 8); x = u; break; }
	default: return -1;
	}
	return CMP_OP(m->op, x, want);
}

int tb_flight_cond_eval(const struct tb_flight_cond *c, const unsigned fidx[TB_FLIGHT_CMP_MAX],
			const struct tb_event_desc *e, const uint8_t *payload, uint64_t len)
{
	/* every comparison first (a payload too short for any field the
	 * condition reads never matches, whichever branch would decide; the
	 * same for an '&&' chain, which stops at its first false one) */
	uint32_t res = 0;
	unsigned n = c->ncmp < TB_FLIGHT_CMP_MAX ? c->ncmp : TB_FLIGHT_CMP_MAX;
	for (unsigned k = 0; k < n; k++) {
		uint64_t off, sz;
		if (fidx[k] >= TB_MAX_FIELDS || field_at(e, payload, len, fidx[k], &off, &sz) < 0)
			return 0;
		int r = cmp_one(&c->cmp[k], e->fields[fidx[k]].type, payload + off, sz);
		if (r < 0 || (!r && !c->has_or))
			return 0; /* (an '&&' chain: decided, as before '||' existed) */
		res |= (uint32_t)r << k;
	}
	if (!c->nprog)
		return n == 0;
	/* the postfix program on a stack of bits (top: bit 0), at most
	 * TB_FLIGHT_CMP_MAX deep; a malformed program never matches */
	uint32_t st = 0;
	unsigned depth = 0, np = c->nprog < TB_FLIGHT_PROG_MAX ? c->nprog : TB_FLIGHT_PROG_MAX;
	for (unsigned i = 0; i < np; i++) {
		unsigned s = c->prog[i];
		if (s < n) {
			if (depth == TB_FLIGHT_CMP_MAX)
				return 0;
			st = st << 1 | ((res >> s) & 1u);
			depth++;
		} else if (s == TB_PROG_AND || s == TB_PROG_OR) {
			if (depth < 2)
				return 0;
			uint32_t a = st & 1u, b = (st >> 1) & 1u;
			st = (st >> 2) << 1 | (s == TB_PROG_AND ? (a & b) : (a | b));
			depth--;
		} else {
			return 0;
		}
	}
	return depth == 1 ? (int)(st & 1u) : 0;
}
