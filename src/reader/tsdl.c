/* SPDX-License-Identifier: MIT */
/*
 * tsdl.c - parser of the TSDL subset written by src/ctf/ctf_write.c.
 *
 * Two steps: a recursive-descent parser builds type trees for the blocks
 * (trace, env, clock, stream, event) and typealiases from the tokens and
 * values of the lexer (tsdl_lex.c); then the trees are checked against
 * tracebuf's fixed layouts and the event payloads are flattened into struct
 * tb_tsdl_class.  Errors longjmp out (tsdl_perr) with a message
 * "metadata line N: ...".  Everything is allocated from the lexer's arena
 * (tsdl_alloc) whose total size is bounded, so hostile metadata cannot
 * exhaust memory; nesting depth is bounded, so it cannot exhaust the stack.
 *
 * Length: one grammar, one recursive-descent parser and its checks; the
 * lexer is tsdl_lex.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/view.h"
#include "reader/tsdl.h"
#include "reader/tsdl_impl.h"

#define DEPTH_MAX 16

enum ty_kind { K_INT = 1, K_FLOAT, K_STRING, K_STRUCT, K_VARIANT, K_ENUM };

struct decl;
struct enumerator {
	char label[IDENT_MAX];
	int64_t lo, hi;
	struct enumerator *next;
};

struct ty {
	enum ty_kind kind;
	int line;
	uint32_t size, align; /* bits */
	int sign, be, mapped;
	uint32_t exp, mant;
	struct decl *fields; /* struct, variant */
	char tag[IDENT_MAX]; /* variant */
	struct ty *base;     /* enum */
	struct enumerator *enums;
};

struct decl {
	char name[IDENT_MAX];
	struct ty *t;
	int arr;             /* 0 none, 1 fixed [len], 2 sequence [lenref] */
	uint64_t len;
	char lenref[IDENT_MAX];
	int line;
	struct decl *next;
};

struct alias {
	char name[IDENT_MAX];
	struct ty *t;
	struct alias *next;
};

/* ---------------------------------------------------------------------- */
/* types                                                                   */

static struct ty *type_spec(struct ctx *c);

static struct ty *lookup_alias(struct ctx *c, const char *name)
{
	for (struct alias *a = c->aliases; a; a = a->next)
		if (!strcmp(a->name, name))
			return a->t;
	return NULL;
}

/* Inside an attribute block "{ key = value; ... }": 1 with the next pair
 * and the line it is on, 0 at the closing "}" (left for the caller). */
static int next_attr(struct ctx *c, char *key, struct val *v, int *line)
{
	if (tsdl_is_p(c, "}"))
		return 0;
	*line = c->tk.line;
	tsdl_ident(c, key);
	tsdl_expect(c, "=");
	tsdl_value(c, v);
	tsdl_expect(c, ";");
	return 1;
}

static void int_attrs(struct ctx *c, struct ty *t)
{
	tsdl_expect(c, "{");
	t->align = 0;
	char key[IDENT_MAX];
	struct val v;
	int kl;
	while (next_attr(c, key, &v, &kl)) {
		if (!strcmp(key, "size")) {
			t->size = (uint32_t)(tsdl_vuint(c, &v, "size") > 64 ? 65 : v.u);
			if (t->size == 0 || t->size > 64)
				tsdl_perr(c, kl, "integer size %" PRIu64 " outside 1..64", v.u);
		} else if (!strcmp(key, "align")) {
			uint64_t a = tsdl_vuint(c, &v, "align");
			if (!a || a > 4096 || (a & (a - 1)))
				tsdl_perr(c, kl, "align = %" PRIu64 " is not a power of two", a);
			t->align = (uint32_t)a;
		} else if (!strcmp(key, "signed")) {
			t->sign = tsdl_vbool(c, &v, "signed");
		} else if (!strcmp(key, "byte_order")) {
			t->be = tsdl_vorder(c, &v);
		} else if (!strcmp(key, "base") || !strcmp(key, "encoding")) {
			/* display only */
		} else if (!strcmp(key, "map")) {
			if (v.kind != T_IDENT || strncmp(v.s, "clock.", 6))
				tsdl_perr(c, kl, "map must name a clock (clock.NAME.value)");
			t->mapped = 1;
		} else {
			tsdl_perr(c, kl, "unsupported integer attribute '%s'", key);
		}
	}
	tsdl_next(c);
	if (!t->size)
		tsdl_perr(c, t->line, "integer without size");
	if (!t->align)
		t->align = (t->size % 8) ? 1 : 8;
}

static void float_attrs(struct ctx *c, struct ty *t)
{
	tsdl_expect(c, "{");
	t->align = 8;
	char key[IDENT_MAX];
	struct val v;
	int kl;
	while (next_attr(c, key, &v, &kl)) {
		if (!strcmp(key, "exp_dig"))
			t->exp = (uint32_t)(tsdl_vuint(c, &v, key) > 64 ? 65 : v.u);
		else if (!strcmp(key, "mant_dig"))
			t->mant = (uint32_t)(tsdl_vuint(c, &v, key) > 64 ? 65 : v.u);
		else if (!strcmp(key, "align"))
			t->align = (uint32_t)(tsdl_vuint(c, &v, key) > 4096 ? 4097 : v.u);
		else if (!strcmp(key, "byte_order"))
			t->be = tsdl_vorder(c, &v);
		else
			tsdl_perr(c, kl, "unsupported floating_point attribute '%s'", key);
	}
	tsdl_next(c);
}

/* declarations of a struct or variant body, up to the closing brace */
static struct decl *decl_list(struct ctx *c)
{
	struct decl *head = NULL, **tail = &head;
	unsigned n = 0;
	tsdl_expect(c, "{");
	while (!tsdl_is_p(c, "}")) {
		if (tsdl_is_id(c, "typealias") || tsdl_is_id(c, "typedef"))
			tsdl_perr(c, c->tk.line, "'%s' inside a struct or variant is not supported", c->tk.text);
		struct ty *t = type_spec(c);
		struct decl *d = tsdl_alloc(c, sizeof *d);
		d->line = c->tk.line;
		d->t = t;
		tsdl_ident(c, d->name);
		if (tsdl_is_p(c, "[")) {
			tsdl_next(c);
			if (c->tk.kind == T_NUM) {
				d->arr = 1;
				d->len = c->tk.num;
				tsdl_next(c);
			} else if (c->tk.kind == T_IDENT) {
				d->arr = 2;
				snprintf(d->lenref, sizeof d->lenref, "%s", c->tk.text);
				tsdl_next(c);
				if (tsdl_is_p(c, "."))
					tsdl_perr(c, c->tk.line, "sequence length '%s.…': only a field of the same struct is supported",
						  d->lenref);
			} else {
				tsdl_perr(c, c->tk.line, "expected an array length, found %s", tsdl_tokdesc(c));
			}
			tsdl_expect(c, "]");
			if (tsdl_is_p(c, "["))
				tsdl_perr(c, c->tk.line, "multi-dimensional arrays are not supported");
		}
		if (tsdl_is_p(c, ","))
			tsdl_perr(c, c->tk.line, "several declarators in one declaration are not supported");
		tsdl_expect(c, ";");
		for (struct decl *o = head; o; o = o->next)
			if (!strcmp(o->name, d->name))
				tsdl_perr(c, d->line, "field '%s' declared twice", d->name);
		if (++n > 1024)
			tsdl_perr(c, d->line, "more than 1024 fields in one struct");
		*tail = d;
		tail = &d->next;
	}
	tsdl_next(c);
	return head;
}

static struct ty *type_spec(struct ctx *c)
{
	int line = c->tk.line;
	if (c->tk.kind != T_IDENT)
		tsdl_perr(c, line, "expected a type, found %s", tsdl_tokdesc(c));
	if (++c->depth > DEPTH_MAX)
		tsdl_perr(c, line, "types nested deeper than %d", DEPTH_MAX);
	struct ty *t;
	if (tsdl_is_id(c, "integer")) {
		tsdl_next(c);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_INT;
		t->line = line;
		int_attrs(c, t);
	} else if (tsdl_is_id(c, "floating_point")) {
		tsdl_next(c);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_FLOAT;
		t->line = line;
		float_attrs(c, t);
	} else if (tsdl_is_id(c, "string")) {
		tsdl_next(c);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_STRING;
		t->line = line;
		t->align = 8;
		if (tsdl_is_p(c, "{")) {
			tsdl_next(c);
			char key[IDENT_MAX];
			struct val v;
			int kl;
			while (next_attr(c, key, &v, &kl)) {
				if (strcmp(key, "encoding"))
					tsdl_perr(c, kl, "unsupported string attribute '%s'", key);
			}
			tsdl_next(c);
		}
	} else if (tsdl_is_id(c, "struct")) {
		tsdl_next(c);
		if (c->tk.kind == T_IDENT)
			tsdl_perr(c, c->tk.line, "named structs ('struct %s') are not supported", c->tk.text);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_STRUCT;
		t->line = line;
		t->fields = decl_list(c);
		t->align = 8;
		if (tsdl_is_id(c, "align")) {
			tsdl_next(c);
			tsdl_expect(c, "(");
			uint64_t a;
			tsdl_snum(c, &a, NULL);
			if (a != 8 && a != 1)
				tsdl_perr(c, line, "struct align(%" PRIu64 ") is not supported (only 8)", a);
			tsdl_expect(c, ")");
		}
	} else if (tsdl_is_id(c, "variant")) {
		tsdl_next(c);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_VARIANT;
		t->line = line;
		if (c->tk.kind == T_IDENT)
			tsdl_perr(c, c->tk.line, "named variants are not supported");
		tsdl_expect(c, "<");
		tsdl_ident(c, t->tag);
		tsdl_expect(c, ">");
		t->fields = decl_list(c);
	} else if (tsdl_is_id(c, "enum")) {
		tsdl_next(c);
		t = tsdl_alloc(c, sizeof *t);
		t->kind = K_ENUM;
		t->line = line;
		if (c->tk.kind == T_IDENT)
			tsdl_perr(c, c->tk.line, "named enums are not supported");
		tsdl_expect(c, ":");
		t->base = type_spec(c);
		if (t->base->kind != K_INT)
			tsdl_perr(c, line, "enum container must be an integer");
		tsdl_expect(c, "{");
		int64_t nextv = 0;
		struct enumerator **tail = &t->enums;
		unsigned n = 0;
		while (!tsdl_is_p(c, "}")) {
			struct enumerator *e = tsdl_alloc(c, sizeof *e);
			if (c->tk.kind == T_IDENT || c->tk.kind == T_STR) {
				snprintf(e->label, sizeof e->label, "%s", c->tk.text);
				tsdl_next(c);
			} else {
				tsdl_perr(c, c->tk.line, "expected an enumerator, found %s", tsdl_tokdesc(c));
			}
			e->lo = e->hi = nextv;
			if (tsdl_is_p(c, "=")) {
				tsdl_next(c);
				e->lo = e->hi = tsdl_snum(c, NULL, NULL);
				if (tsdl_is_p(c, "...")) {
					tsdl_next(c);
					e->hi = tsdl_snum(c, NULL, NULL);
				}
			}
			if (e->hi < e->lo)
				tsdl_perr(c, c->tk.line, "enumerator '%s': empty range", e->label);
			nextv = e->hi == INT64_MAX ? e->hi : e->hi + 1;
			*tail = e;
			tail = &e->next;
			if (++n > 4096)
				tsdl_perr(c, line, "enum with more than 4096 enumerators");
			if (tsdl_is_p(c, ","))
				tsdl_next(c);
			else if (!tsdl_is_p(c, "}"))
				tsdl_perr(c, c->tk.line, "expected ',' or '}' in enum, found %s", tsdl_tokdesc(c));
		}
		tsdl_next(c);
	} else if (tsdl_is_id(c, "typealias") || tsdl_is_id(c, "typedef")) {
		tsdl_perr(c, line, "'%s' is not a type", c->tk.text);
	} else {
		t = lookup_alias(c, c->tk.text);
		if (!t) {
			static const char *unsup[] = { "sequence", "array", "unsigned", "signed", "long",
						       "int", "short", "char", "float", "double", "void" };
			for (size_t i = 0; i < sizeof unsup / sizeof unsup[0]; i++)
				if (!strcmp(c->tk.text, unsup[i]))
					tsdl_perr(c, line, "C type '%s' is not supported; use a typealias", c->tk.text);
			tsdl_perr(c, line, "unknown type '%s'", c->tk.text);
		}
		tsdl_next(c);
	}
	c->depth--;
	return t;
}

/* ---------------------------------------------------------------------- */
/* blocks                                                                  */

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static void parse_uuid(struct ctx *c, const struct val *v, uint8_t out[16])
{
	if (v->kind != T_STR || strlen(v->s) != 36)
		tsdl_perr(c, v->line, "uuid must be a string \"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\"");
	int k = 0;
	for (int i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (v->s[i] != '-')
				tsdl_perr(c, v->line, "malformed uuid \"%s\"", v->s);
			i++;
			continue;
		}
		int hi = hexval(v->s[i]), lo = hexval(v->s[i + 1]);
		if (hi < 0 || lo < 0)
			tsdl_perr(c, v->line, "malformed uuid \"%s\"", v->s);
		out[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
}

/* "a.b := type;" or "key = value;" inside a block */
struct item {
	char key[IDENT_MAX];
	int is_type;
	struct ty *t;
	struct val v;
	int line;
};

static int block_item(struct ctx *c, struct item *it)
{
	if (tsdl_is_p(c, "}")) {
		tsdl_next(c);
		tsdl_expect(c, ";");
		return 0;
	}
	memset(it, 0, sizeof *it);
	it->line = c->tk.line;
	size_t n = 0;
	for (;;) {
		if (c->tk.kind != T_IDENT)
			tsdl_perr(c, c->tk.line, "expected an attribute name, found %s", tsdl_tokdesc(c));
		size_t l = strlen(c->tk.text);
		if (n + l + 2 >= sizeof it->key)
			tsdl_perr(c, it->line, "attribute name too long");
		memcpy(it->key + n, c->tk.text, l + 1);
		n += l;
		tsdl_next(c);
		if (!tsdl_is_p(c, "."))
			break;
		it->key[n++] = '.';
		tsdl_next(c);
	}
	if (tsdl_is_p(c, ":=")) {
		tsdl_next(c);
		it->is_type = 1;
		it->t = type_spec(c);
	} else if (tsdl_is_p(c, "=")) {
		tsdl_next(c);
		tsdl_value(c, &it->v);
	} else {
		tsdl_perr(c, c->tk.line, "expected '=' or ':=' after '%s', found %s", it->key, tsdl_tokdesc(c));
	}
	tsdl_expect(c, ";");
	return 1;
}

static void need_value(struct ctx *c, const struct item *it)
{
	if (it->is_type)
		tsdl_perr(c, it->line, "'%s' must be a value, not a type", it->key);
}

static void need_type(struct ctx *c, const struct item *it)
{
	if (!it->is_type)
		tsdl_perr(c, it->line, "'%s' must be a type (':=')", it->key);
}

static void trace_block(struct ctx *c, int line)
{
	struct item it;
	int major = -1, minor = -1, bo = -1;
	if (c->seen_trace++)
		tsdl_perr(c, line, "second trace block");
	tsdl_expect(c, "{");
	while (block_item(c, &it)) {
		if (!strcmp(it.key, "major")) {
			need_value(c, &it);
			major = (int)(tsdl_vuint(c, &it.v, "major") > 100 ? 100 : it.v.u);
		} else if (!strcmp(it.key, "minor")) {
			need_value(c, &it);
			minor = (int)(tsdl_vuint(c, &it.v, "minor") > 100 ? 100 : it.v.u);
		} else if (!strcmp(it.key, "uuid")) {
			need_value(c, &it);
			parse_uuid(c, &it.v, c->m->uuid);
			c->m->has_uuid = 1;
		} else if (!strcmp(it.key, "byte_order")) {
			need_value(c, &it);
			bo = tsdl_vorder(c, &it.v);
			c->trace_le_line = it.line;
		} else if (!strcmp(it.key, "packet.header")) {
			need_type(c, &it);
			c->pkt_header = it.t;
		} else {
			tsdl_perr(c, it.line, "unsupported trace attribute '%s'", it.key);
		}
	}
	if (major != 1 || minor != 8)
		tsdl_perr(c, line, "trace block: CTF %d.%d, only 1.8 is supported", major, minor);
	if (bo != 0)
		tsdl_perr(c, line, "trace block: byte_order must be le (tracebuf traces are little endian)");
}

static void env_block(struct ctx *c, int line)
{
	struct item it;
	tsdl_expect(c, "{");
	while (block_item(c, &it)) {
		need_value(c, &it);
		if (c->m->nenv >= TB_TSDL_ENV_MAX)
			continue; /* kept: the first TB_TSDL_ENV_MAX */
		struct tb_tsdl_env *e = &c->m->env[c->m->nenv++];
		tsdl_setname(c, it.line, e->key, sizeof e->key, it.key);
		if (it.v.kind == T_NUM) {
			e->num = it.v.i;
		} else {
			e->is_str = 1;
			/* a process's comm, a command line: anything a traced
			 * program chose; control characters as \xNN */
			tsdl_copy_printable(e->str, sizeof e->str, it.v.s);
		}
	}
}

static void clock_block(struct ctx *c, int line)
{
	struct item it;
	if (c->seen_clock++)
		tsdl_perr(c, line, "second clock block (one clock is supported)");
	tsdl_expect(c, "{");
	while (block_item(c, &it)) {
		need_value(c, &it);
		if (!strcmp(it.key, "name")) {
			if (it.v.kind == T_NUM)
				tsdl_perr(c, it.line, "clock name must be an identifier or a string");
			tsdl_setname(c, it.line, c->m->clock_name, sizeof c->m->clock_name, it.v.s);
		} else if (!strcmp(it.key, "freq")) {
			c->m->clock_freq = tsdl_vuint(c, &it.v, "freq");
			if (!c->m->clock_freq)
				tsdl_perr(c, it.line, "clock freq must not be 0");
		} else if (!strcmp(it.key, "offset_s")) {
			if (it.v.kind != T_NUM)
				tsdl_perr(c, it.line, "offset_s must be an integer");
			c->m->clock_offset_s = it.v.i;
		} else if (!strcmp(it.key, "offset")) {
			c->m->clock_offset = tsdl_vuint(c, &it.v, "offset");
		} else if (!strcmp(it.key, "uuid")) {
			uint8_t u[16];
			parse_uuid(c, &it.v, u);
		} else if (!strcmp(it.key, "absolute")) {
			tsdl_vbool(c, &it.v, "absolute");
		} else if (!strcmp(it.key, "precision")) {
			tsdl_vuint(c, &it.v, "precision");
		} else if (!strcmp(it.key, "description")) {
			if (it.v.kind != T_STR)
				tsdl_perr(c, it.line, "clock description must be a string");
		} else {
			tsdl_perr(c, it.line, "unsupported clock attribute '%s'", it.key);
		}
	}
	if (!c->m->clock_freq)
		tsdl_perr(c, line, "clock block without freq");
}

_Static_assert(TB_NSTREAM_CLASSES == 2, "struct ctx holds two stream classes");

/* A stream class: its id (0 or 1; 0 when not said) and its types, checked
 * by check_layouts() once every block is read. */
static void stream_block(struct ctx *c, int line)
{
	struct item it;
	uint32_t sid = 0;
	struct ty *hdr = NULL, *pctx = NULL, *ectx = NULL;
	tsdl_expect(c, "{");
	while (block_item(c, &it)) {
		if (!strcmp(it.key, "id")) {
			need_value(c, &it);
			if (tsdl_vuint(c, &it.v, "stream id") >= TB_NSTREAM_CLASSES)
				tsdl_perr(c, it.line, "stream id %" PRIu64 ": only stream classes 0 and 1 are supported",
					  it.v.u);
			sid = (uint32_t)it.v.u;
		} else if (!strcmp(it.key, "event.header")) {
			need_type(c, &it);
			hdr = it.t;
		} else if (!strcmp(it.key, "packet.context")) {
			need_type(c, &it);
			pctx = it.t;
		} else if (!strcmp(it.key, "event.context")) {
			need_type(c, &it);
			ectx = it.t;
		} else {
			tsdl_perr(c, it.line, "unsupported stream attribute '%s'", it.key);
		}
	}
	if (c->seen_stream & (1u << sid))
		tsdl_perr(c, line, "second stream block with id %" PRIu32, sid);
	c->seen_stream |= 1u << sid;
	c->ev_header[sid] = hdr;
	c->pkt_context[sid] = pctx;
	c->ev_context[sid] = ectx;
	c->stream_line[sid] = line;
}

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

static void event_fields(struct ctx *c, struct tb_tsdl_class *k, const struct ty *st, int line)
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

static void event_block(struct ctx *c, int line)
{
	struct item it;
	struct tb_tsdl_meta *m = c->m;
	int has_id = 0, has_name = 0;
	const struct ty *fields = NULL;
	int fields_line = line;
	if (m->nclasses == c->cls_cap) {
		uint32_t cap = c->cls_cap ? c->cls_cap * 2 : 16;
		if (cap > 4096)
			tsdl_perr(c, line, "more than 4096 event classes");
		struct tb_tsdl_class *nk = realloc(m->classes, (size_t)cap * sizeof *nk);
		if (!nk) {
			c->err = tb_fail(-ENOMEM, "out of memory parsing the metadata");
			longjmp(c->jb, 1);
		}
		m->classes = nk;
		c->cls_cap = cap;
	}
	struct tb_tsdl_class *k = &m->classes[m->nclasses];
	memset(k, 0, sizeof *k);
	tsdl_expect(c, "{");
	while (block_item(c, &it)) {
		if (!strcmp(it.key, "name")) {
			need_value(c, &it);
			if (it.v.kind == T_NUM || !it.v.s[0])
				tsdl_perr(c, it.line, "event name must be a non-empty string");
			tsdl_setname(c, it.line, k->name, sizeof k->name, it.v.s);
			has_name = 1;
		} else if (!strcmp(it.key, "id")) {
			need_value(c, &it);
			if (tsdl_vuint(c, &it.v, "event id") > TB_TSDL_ID_MAX)
				tsdl_perr(c, it.line, "event id %" PRIu64 " larger than %u", it.v.u, TB_TSDL_ID_MAX);
			k->id = (uint32_t)it.v.u;
			has_id = 1;
		} else if (!strcmp(it.key, "stream_id")) {
			need_value(c, &it);
			if (tsdl_vuint(c, &it.v, "stream_id") >= TB_NSTREAM_CLASSES)
				tsdl_perr(c, it.line, "event stream_id must be 0 or 1");
			k->stream_id = (uint32_t)it.v.u;
		} else if (!strcmp(it.key, "fields")) {
			need_type(c, &it);
			fields = it.t;
			fields_line = it.line;
		} else if (!strcmp(it.key, "loglevel") || !strcmp(it.key, "model.emf.uri")) {
			need_value(c, &it);
		} else if (!strcmp(it.key, "context")) {
			tsdl_perr(c, it.line, "event context is not supported");
		} else {
			tsdl_perr(c, it.line, "unsupported event attribute '%s'", it.key);
		}
	}
	if (!has_id || !has_name)
		tsdl_perr(c, line, "event block without %s", has_id ? "name" : "id");
	if (fields)
		event_fields(c, k, fields, fields_line);
	else
		k->fixed_size = 0;
	for (uint32_t i = 0; i < m->nclasses; i++) {
		const struct tb_tsdl_class *o = &m->classes[i];
		if (o->id == k->id && o->stream_id == k->stream_id)
			tsdl_perr(c, line, "event id %" PRIu32 " defined twice ('%s' and '%s')", k->id, o->name,
				  k->name);
		/* the tools key event classes by id alone */
		if (o->id == k->id && strcmp(o->name, k->name))
			tsdl_perr(c, line, "event id %" PRIu32 " is '%s' in stream class %" PRIu32 " and '%s' in %" PRIu32
				  ": a tracebuf trace declares the same classes in each", k->id, o->name, o->stream_id,
				  k->name, k->stream_id);
	}
	if (k->id > m->max_id || !m->nclasses)
		m->max_id = k->id;
	m->nclasses++;
}

static void typealias_decl(struct ctx *c)
{
	int line = c->tk.line;
	tsdl_next(c);
	struct ty *t = type_spec(c);
	tsdl_expect(c, ":=");
	struct alias *a = tsdl_alloc(c, sizeof *a);
	tsdl_ident(c, a->name);
	if (c->tk.kind == T_IDENT)
		tsdl_perr(c, line, "multi-word type names ('%s %s') are not supported", a->name, c->tk.text);
	tsdl_expect(c, ";");
	a->t = t;
	a->next = c->aliases;
	c->aliases = a;
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

/* Stream class `sid`: packet context (its size and loss fields into *hsz
 * and loss_off[]), event header, and event context: none, or the vtid. */
static void check_stream(struct ctx *c, uint32_t sid, uint32_t *hsz, uint16_t *loss_off)
{
	const struct ty *p = c->pkt_context[sid], *e = c->ev_header[sid], *x = c->ev_context[sid];
	int line = c->stream_line[sid];
	const struct decl *d;
	if (!p || p->kind != K_STRUCT)
		tsdl_perr(c, line, "stream %" PRIu32 " packet.context missing or not a struct", sid);
	static const struct { const char *n; uint32_t size; } pf[] = {
		{ "timestamp_begin", 64 }, { "timestamp_end", 64 }, { "content_size", 64 }, { "packet_size", 64 },
		{ "packet_seq_num", 64 },  { "events_discarded", 64 }, { "cpu_id", 32 },    { "tb_reserved", 32 },
	};
	for (unsigned i = 0; i < 8; i++) {
		d = field_at(p, i);
		if (!d || strcmp(d->name, pf[i].n) || !is_uint(d->t, pf[i].size, 8) || d->arr)
			tsdl_perr(c, d ? d->line : p->line,
				  "packet.context field %u must be the byte-aligned unsigned '%s' of tracebuf's layout", i,
				  pf[i].n);
	}
	/* then the loss causes, each a byte-aligned u64 named lost_<cause> */
	*hsz = TB_PACKET_HEADER_SIZE_V1;
	memset(loss_off, 0, sizeof loss_off[0] * TB_LOSS_NCAUSES);
	for (unsigned i = 8; (d = field_at(p, i)) != NULL; i++) {
		if (strncmp(d->name, "lost_", 5) || !is_uint(d->t, 64, 8) || d->arr || i >= 8 + TB_TSDL_LOSS_MAX)
			tsdl_perr(c, d->line, "packet.context: unexpected field '%s' (after tb_reserved only byte-aligned "
					      "uint64 lost_<cause> fields, at most %u)", d->name, TB_TSDL_LOSS_MAX);
		for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
			if (!strcmp(d->name, tb_loss_field(k))) {
				if (loss_off[k])
					tsdl_perr(c, d->line, "packet.context: field '%s' twice", d->name);
				loss_off[k] = (uint16_t)*hsz;
			}
		*hsz += 8;
	}
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

static void check_layouts(struct ctx *c)
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
	if (field_at(h, 4))
		tsdl_perr(c, field_at(h, 4)->line, "packet.header: unexpected field '%s'", field_at(h, 4)->name);
	if (!c->seen_stream)
		tsdl_perr(c, c->line, "no stream block");
	/* every stream class has the packet context of the first */
	int first = 1;
	for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++) {
		if (!(c->seen_stream & (1u << sid)))
			continue;
		uint32_t hsz;
		uint16_t loss_off[TB_LOSS_NCAUSES];
		check_stream(c, sid, &hsz, loss_off);
		if (first) {
			c->m->pkt_hdr_size = hsz;
			memcpy(c->m->loss_off, loss_off, sizeof loss_off);
		} else if (hsz != c->m->pkt_hdr_size || memcmp(loss_off, c->m->loss_off, sizeof loss_off)) {
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

void tb_tsdl_free(struct tb_tsdl_meta *m)
{
	free(m->classes);
	free(m->by_id);
	for (uint32_t i = 0; i < m->nenums; i++)
		free(m->enums[i].l);
	free(m->enums);
	m->classes = NULL;
	m->by_id = NULL;
	m->enums = NULL;
	m->nenums = 0;
}

int tb_tsdl_parse(const char *text, size_t len, struct tb_tsdl_meta *m, int *err_line)
{
	static const char sig[] = "/* CTF 1.";
	struct ctx *c = calloc(1, sizeof *c);
	if (!c)
		return tb_fail(-ENOMEM, "out of memory parsing the metadata");
	memset(m, 0, sizeof *m);
	c->p = text;
	c->end = text + len;
	c->line = 1;
	c->m = m;
	int rc = 0;
	if (setjmp(c->jb)) {
		rc = c->err;
		goto out;
	}
	if (len >= 4 && !memcmp(text, "\x57\x1d\xd1\x75", 4))
		tsdl_perr(c, 1, "packetized metadata is not supported (tracebuf writes plain text)");
	if (len < sizeof sig - 1 || memcmp(text, sig, sizeof sig - 1))
		tsdl_perr(c, 1, "missing the \"/* CTF 1.8 */\" signature on the first line");
	tsdl_next(c);
	while (c->tk.kind != T_EOF) {
		int line = c->tk.line;
		if (tsdl_is_id(c, "typealias")) {
			typealias_decl(c);
		} else if (tsdl_is_id(c, "trace")) {
			tsdl_next(c);
			trace_block(c, line);
		} else if (tsdl_is_id(c, "env")) {
			tsdl_next(c);
			env_block(c, line);
		} else if (tsdl_is_id(c, "clock")) {
			tsdl_next(c);
			clock_block(c, line);
		} else if (tsdl_is_id(c, "stream")) {
			tsdl_next(c);
			stream_block(c, line);
		} else if (tsdl_is_id(c, "event")) {
			tsdl_next(c);
			event_block(c, line);
		} else if (c->tk.kind == T_IDENT) {
			tsdl_perr(c, line, "unsupported top-level construct '%s'", c->tk.text);
		} else {
			tsdl_perr(c, line, "expected a block or typealias, found %s", tsdl_tokdesc(c));
		}
	}
	if (!c->seen_trace)
		tsdl_perr(c, c->line, "no trace block");
	check_layouts(c);
	if (!m->nclasses)
		tsdl_perr(c, c->line, "no event class");
	size_t nid = (size_t)m->max_id + 1;
	m->by_id = malloc(TB_NSTREAM_CLASSES * nid * sizeof *m->by_id);
	if (!m->by_id) {
		rc = tb_fail(-ENOMEM, "out of memory parsing the metadata");
		goto out;
	}
	memset(m->by_id, 0xff, TB_NSTREAM_CLASSES * nid * sizeof *m->by_id);
	for (uint32_t i = 0; i < m->nclasses; i++)
		m->by_id[m->classes[i].stream_id * nid + m->classes[i].id] = (int32_t)i;
out:
	tsdl_arena_free(c);
	if (err_line)
		*err_line = c->err_line;
	free(c);
	if (rc)
		tb_tsdl_free(m);
	return rc;
}
