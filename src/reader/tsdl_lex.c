/* SPDX-License-Identifier: MIT */
/*
 * tsdl_lex.c - the lexer of the TSDL parser (src/reader/tsdl.c): tokens,
 * numbers, strings and the values of "name = value;", with the parse
 * context's arena allocator and error exit (shared declarations:
 * tsdl_impl.h).
 *
 * Errors longjmp out of the parse with a message "metadata line N: ...".
 * Everything is allocated from one arena whose total size is bounded, so
 * hostile metadata cannot exhaust memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/view.h"
#include "reader/tsdl_impl.h"

/* ---------------------------------------------------------------------- */
/* parse context: errors and the arena                                    */

#define ARENA_MAX (32u << 20)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void tsdl_perr(struct ctx *c, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->err = tb_fail(-EBADMSG, "metadata line %d: %s", line, msg);
	c->err_line = line;
	longjmp(c->jb, 1);
}

void *tsdl_alloc(struct ctx *c, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!c->arena || c->arena->cap - c->arena->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		if (c->arena_total + cap > ARENA_MAX)
			tsdl_perr(c, c->line, "metadata too large or too complex (more than %u MiB of types)",
				  ARENA_MAX >> 20);
		struct chunk *k = malloc(sizeof *k + cap);
		if (!k) {
			c->err = tb_fail(-ENOMEM, "out of memory parsing the metadata");
			longjmp(c->jb, 1);
		}
		k->next = c->arena;
		k->used = 0;
		k->cap = cap;
		c->arena = k;
		c->arena_total += cap;
	}
	void *r = c->arena->data + c->arena->used;
	c->arena->used += n;
	memset(r, 0, n);
	return r;
}

void tsdl_arena_free(struct ctx *c)
{
	while (c->arena) {
		struct chunk *k = c->arena;
		c->arena = k->next;
		free(k);
	}
}

/* ---------------------------------------------------------------------- */
/* lexer                                                                   */

/* copies a name into a bounded field, refusing to truncate it */
size_t tsdl_copy_printable(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			if (n + 4 < cap) {
				dst[n] = '\\';
				dst[n + 1] = 'x';
				dst[n + 2] = hex[*p >> 4];
				dst[n + 3] = hex[*p & 15];
			}
			n += 4;
		} else {
			if (n + 1 < cap)
				dst[n] = (char)*p;
			n++;
		}
	}
	if (cap)
		dst[n < cap ? n : cap - 1] = 0;
	return n;
}

void tsdl_setname(struct ctx *c, int line, char *dst, size_t cap, const char *src)
{
	/* control characters (an escape sequence in an event name would reach
	 * the user's terminal through every text output) are kept as \xNN */
	size_t n = tsdl_copy_printable(dst, cap, src);
	if (n >= cap)
		tsdl_perr(c, line, "name '%.40s...' longer than %zu bytes", dst, cap - 1);
}

void tsdl_next(struct ctx *c)
{
	struct tok *t = &c->tk;
	for (;;) {
		while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
			if (*c->p == '\n')
				c->line++;
			c->p++;
		}
		if (c->end - c->p >= 2 && c->p[0] == '/' && c->p[1] == '*') {
			int l0 = c->line;
			c->p += 2;
			while (c->end - c->p >= 2 && !(c->p[0] == '*' && c->p[1] == '/')) {
				if (*c->p == '\n')
					c->line++;
				c->p++;
			}
			if (c->end - c->p < 2)
				tsdl_perr(c, l0, "unterminated comment");
			c->p += 2;
			continue;
		}
		if (c->end - c->p >= 2 && c->p[0] == '/' && c->p[1] == '/') {
			while (c->p < c->end && *c->p != '\n')
				c->p++;
			continue;
		}
		break;
	}
	t->line = c->line;
	t->text[0] = 0;
	t->num = 0;
	if (c->p >= c->end) {
		t->kind = T_EOF;
		snprintf(t->text, sizeof t->text, "end of file");
		return;
	}
	char ch = *c->p;
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_') {
		size_t n = 0;
		while (c->p < c->end && ((*c->p >= 'a' && *c->p <= 'z') || (*c->p >= 'A' && *c->p <= 'Z') ||
					 *c->p == '_' || (*c->p >= '0' && *c->p <= '9'))) {
			if (n + 1 >= sizeof t->text)
				tsdl_perr(c, c->line, "identifier longer than %d characters", IDENT_MAX - 1);
			t->text[n++] = *c->p++;
		}
		t->text[n] = 0;
		t->kind = T_IDENT;
		return;
	}
	if (ch >= '0' && ch <= '9') {
		uint64_t v = 0;
		int base = 10;
		const char *s = c->p;
		if (c->end - c->p > 2 && ch == '0' && (c->p[1] == 'x' || c->p[1] == 'X')) {
			base = 16;
			c->p += 2;
		} else if (ch == '0' && c->end - c->p > 1 && c->p[1] >= '0' && c->p[1] <= '7') {
			base = 8;
			c->p++;
		}
		int digits = 0;
		while (c->p < c->end) {
			int d;
			char x = *c->p;
			if (x >= '0' && x <= '9')
				d = x - '0';
			else if (base == 16 && x >= 'a' && x <= 'f')
				d = x - 'a' + 10;
			else if (base == 16 && x >= 'A' && x <= 'F')
				d = x - 'A' + 10;
			else
				break;
			if (d >= base)
				tsdl_perr(c, c->line, "bad digit '%c' in number", x);
			if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
				tsdl_perr(c, c->line, "number too large");
			v = v * (uint64_t)base + (uint64_t)d;
			digits++;
			c->p++;
		}
		if (base == 16 && !digits)
			tsdl_perr(c, c->line, "hexadecimal number without digits");
		/* integer suffixes (u, l, ul, ull) are allowed by TSDL */
		while (c->p < c->end && (*c->p == 'u' || *c->p == 'U' || *c->p == 'l' || *c->p == 'L'))
			c->p++;
		if (c->p < c->end && ((*c->p >= 'a' && *c->p <= 'z') || (*c->p >= 'A' && *c->p <= 'Z') ||
				      *c->p == '_' || *c->p == '.'))
			tsdl_perr(c, c->line, "malformed number '%.*s' (floating point and suffixes are not part of the subset)",
				  (int)(c->p - s + 1 > 40 ? 40 : c->p - s + 1), s);
		t->kind = T_NUM;
		t->num = v;
		snprintf(t->text, sizeof t->text, "%" PRIu64, v);
		return;
	}
	if (ch == '"') {
		size_t n = 0;
		int l0 = c->line;
		c->p++;
		for (;;) {
			if (c->p >= c->end)
				tsdl_perr(c, l0, "unterminated string");
			char x = *c->p++;
			if (x == '"')
				break;
			if (x == '\n')
				tsdl_perr(c, l0, "newline in string literal");
			if (x == '\\') {
				if (c->p >= c->end)
					tsdl_perr(c, l0, "unterminated string");
				char e = *c->p++;
				switch (e) {
				case 'n': x = '\n'; break;
				case 't': x = '\t'; break;
				case 'r': x = '\r'; break;
				case '\\': x = '\\'; break;
				case '"': x = '"'; break;
				case '\'': x = '\''; break;
				case '0': x = 0; break;
				default:
					tsdl_perr(c, l0, "unsupported escape '\\%c' in string", e);
				}
				if (!x)
					tsdl_perr(c, l0, "NUL character in string");
			}
			if (n + 1 >= sizeof t->text)
				tsdl_perr(c, l0, "string longer than %d bytes", IDENT_MAX - 1);
			t->text[n++] = x;
		}
		t->text[n] = 0;
		t->kind = T_STR;
		return;
	}
	t->kind = T_PUNCT;
	if (c->end - c->p >= 2 && c->p[0] == ':' && c->p[1] == '=') {
		memcpy(t->text, ":=", 3);
		c->p += 2;
		return;
	}
	if (c->end - c->p >= 3 && !memcmp(c->p, "...", 3)) {
		memcpy(t->text, "...", 4);
		c->p += 3;
		return;
	}
	if (strchr("{}()[]<>;=:,.-+*", ch) && ch) {
		t->text[0] = ch;
		t->text[1] = 0;
		c->p++;
		return;
	}
	if ((unsigned char)ch < 0x20 || (unsigned char)ch >= 0x7f)
		tsdl_perr(c, c->line, "unexpected byte 0x%02x", (unsigned char)ch);
	tsdl_perr(c, c->line, "unexpected character '%c'", ch);
}

int tsdl_is_p(struct ctx *c, const char *p)
{
	return c->tk.kind == T_PUNCT && !strcmp(c->tk.text, p);
}

int tsdl_is_id(struct ctx *c, const char *id)
{
	return c->tk.kind == T_IDENT && !strcmp(c->tk.text, id);
}

const char *tsdl_tokdesc(struct ctx *c)
{
	static __thread char b[IDENT_MAX + 16];
	switch (c->tk.kind) {
	case T_EOF: return "end of file";
	case T_STR: snprintf(b, sizeof b, "string \"%.60s\"", c->tk.text); return b;
	default: snprintf(b, sizeof b, "'%.60s'", c->tk.text); return b;
	}
}

void tsdl_expect(struct ctx *c, const char *p)
{
	if (!tsdl_is_p(c, p))
		tsdl_perr(c, c->tk.line, "expected '%s', found %s", p, tsdl_tokdesc(c));
	tsdl_next(c);
}

void tsdl_ident(struct ctx *c, char *out)
{
	if (c->tk.kind != T_IDENT)
		tsdl_perr(c, c->tk.line, "expected an identifier, found %s", tsdl_tokdesc(c));
	snprintf(out, IDENT_MAX, "%s", c->tk.text);
	tsdl_next(c);
}

/* a number, possibly negative */
int64_t tsdl_snum(struct ctx *c, uint64_t *u, int *neg)
{
	int n = 0;
	if (tsdl_is_p(c, "-")) {
		n = 1;
		tsdl_next(c);
	} else if (tsdl_is_p(c, "+")) {
		tsdl_next(c);
	}
	if (c->tk.kind != T_NUM)
		tsdl_perr(c, c->tk.line, "expected a number, found %s", tsdl_tokdesc(c));
	uint64_t v = c->tk.num;
	if (n && v > (uint64_t)INT64_MAX + 1)
		tsdl_perr(c, c->tk.line, "number too small");
	tsdl_next(c);
	if (u)
		*u = v;
	if (neg)
		*neg = n;
	return n ? (int64_t)(0 - v) : (int64_t)v;
}

/* value of "name = value;" in a block: number, string, identifier or dotted identifier */
void tsdl_value(struct ctx *c, struct val *v)
{
	memset(v, 0, sizeof *v);
	v->line = c->tk.line;
	if (c->tk.kind == T_NUM || tsdl_is_p(c, "-") || tsdl_is_p(c, "+")) {
		v->kind = T_NUM;
		v->i = tsdl_snum(c, &v->u, &v->neg);
		return;
	}
	if (c->tk.kind == T_STR) {
		v->kind = T_STR;
		snprintf(v->s, sizeof v->s, "%s", c->tk.text);
		tsdl_next(c);
		return;
	}
	if (c->tk.kind == T_IDENT) {
		v->kind = T_IDENT;
		size_t n = 0;
		for (;;) {
			size_t l = strlen(c->tk.text);
			if (n + l + 2 >= sizeof v->s)
				tsdl_perr(c, v->line, "value too long");
			memcpy(v->s + n, c->tk.text, l + 1);
			n += l;
			tsdl_next(c);
			if (!tsdl_is_p(c, "."))
				break;
			v->s[n++] = '.';
			v->s[n] = 0;
			tsdl_next(c);
			if (c->tk.kind != T_IDENT)
				tsdl_perr(c, c->tk.line, "expected an identifier after '.', found %s", tsdl_tokdesc(c));
		}
		return;
	}
	tsdl_perr(c, c->tk.line, "expected a value, found %s", tsdl_tokdesc(c));
}

int tsdl_vbool(struct ctx *c, const struct val *v, const char *what)
{
	if (v->kind == T_NUM && !v->neg && v->u <= 1)
		return (int)v->u;
	if (v->kind == T_IDENT && (!strcmp(v->s, "true") || !strcmp(v->s, "TRUE")))
		return 1;
	if (v->kind == T_IDENT && (!strcmp(v->s, "false") || !strcmp(v->s, "FALSE")))
		return 0;
	tsdl_perr(c, v->line, "%s must be true or false", what);
}

uint64_t tsdl_vuint(struct ctx *c, const struct val *v, const char *what)
{
	if (v->kind != T_NUM || v->neg)
		tsdl_perr(c, v->line, "%s must be a non-negative integer", what);
	return v->u;
}

int tsdl_vorder(struct ctx *c, const struct val *v)
{
	if (v->kind == T_IDENT && (!strcmp(v->s, "le") || !strcmp(v->s, "native")))
		return 0;
	if (v->kind == T_IDENT && (!strcmp(v->s, "be") || !strcmp(v->s, "network")))
		return 1;
	tsdl_perr(c, v->line, "byte_order must be le, be, native or network");
}
