/* SPDX-License-Identifier: MIT */
/*
 * tsdl.c - parser of the TSDL subset written by src/ctf/ctf_write.c.
 *
 * Two steps: a recursive-descent parser (this file) builds type trees for
 * the blocks (trace, env, clock, stream, event) and typealiases from the
 * tokens and values of the lexer (tsdl_lex.c); then the trees are checked
 * against tracebuf's fixed layouts and the event payloads are flattened
 * into struct tb_tsdl_class (tsdl_layout.c: tsdl_event_fields() at the end of
 * each event block, tsdl_check_layouts() once every block is read).  The type
 * trees and the parse context are declared in tsdl_impl.h.  Errors longjmp
 * out (tsdl_perr) with a message "metadata line N: ...".  Everything is
 * allocated from the lexer's arena (tsdl_alloc) whose total size is
 * bounded, so hostile metadata cannot exhaust memory; nesting depth is
 * bounded, so it cannot exhaust the stack.
 *
 * Length: one grammar, one recursive-descent parser (types, then blocks);
 * the lexer is tsdl_lex.c, the layout checks tsdl_layout.c.
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

/* A stream class: its id (0, 1 or 2; 0 when not said) and its types, checked
 * by tsdl_check_layouts() once every block is read. */
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
				tsdl_perr(c, it.line, "stream id %" PRIu64 ": only stream classes 0, 1 and 2 are supported",
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
				tsdl_perr(c, it.line, "event stream_id must be 0, 1 or 2");
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
		tsdl_event_fields(c, k, fields, fields_line);
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
	tsdl_check_layouts(c);
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
