/* SPDX-License-Identifier: MIT */
/*
 * tsdl_impl.h - what the TSDL parser (tsdl.c), its layout checks
 * (tsdl_layout.c) and its lexer (tsdl_lex.c) share (library private):
 * tokens, values, the type trees, the parse context, the lexer's functions
 * and the layout checks' entry points.  Every function taking a struct ctx
 * reports an error by longjmp to c->jb (see tsdl_perr) and never returns it.
 */
#ifndef TB_READER_TSDL_IMPL_H
#define TB_READER_TSDL_IMPL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "core/view.h"

#define IDENT_MAX 256

enum tok_kind { T_EOF, T_IDENT, T_NUM, T_STR, T_PUNCT };

struct tok {
	enum tok_kind kind;
	int line;
	char text[IDENT_MAX]; /* identifier, punctuation, or string contents */
	uint64_t num;
};

/* value of "name = value;" in a block: number, string, identifier or dotted identifier */
struct val {
	int kind; /* T_NUM, T_STR, T_IDENT */
	int neg;
	uint64_t u;
	int64_t i;
	char s[IDENT_MAX];
	int line;
};

/* the type trees the parser builds (tsdl.c) and the layout checks read (tsdl_layout.c) */
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

struct chunk;        /* an arena chunk (tsdl_lex.c) */
struct alias;        /* the parser's typealiases (tsdl.c) */
struct tb_tsdl_meta; /* reader/tsdl.h */
struct tb_tsdl_class;

struct ctx {
	const char *p, *end;
	int line;
	struct tok tk;      /* current token */
	jmp_buf jb;
	int err;
	int err_line;
	struct chunk *arena;
	size_t arena_total;
	struct alias *aliases;
	int depth;
	/* collected blocks */
	int seen_trace, seen_clock;
	uint32_t seen_stream;  /* bit k: stream class k */
	struct ty *pkt_header;
	struct ty *pkt_context[TB_NSTREAM_CLASSES], *ev_header[TB_NSTREAM_CLASSES],
		*ev_context[TB_NSTREAM_CLASSES]; /* per stream class */
	int stream_line[TB_NSTREAM_CLASSES];
	int trace_le_line;
	struct tb_tsdl_meta *m;
	uint32_t cls_cap;
	uint32_t enum_cap;
};

/* sets the error "metadata line LINE: ..." (-EBADMSG) and longjmps to c->jb */
TB_HIDDEN void tsdl_perr(struct ctx *c, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/* n zeroed bytes, 16-aligned, from the arena (bounded in total); freed by tsdl_arena_free */
TB_HIDDEN void *tsdl_alloc(struct ctx *c, size_t n);
TB_HIDDEN void tsdl_arena_free(struct ctx *c);
/* copies src to dst (cap bytes, NUL-terminated, cut if need be) with control
 * characters written as \xNN; returns the length it needed */
TB_HIDDEN size_t tsdl_copy_printable(char *dst, size_t cap, const char *src);
/* copies a name into a bounded field (control characters as \xNN), refusing to truncate it */
TB_HIDDEN void tsdl_setname(struct ctx *c, int line, char *dst, size_t cap, const char *src);

/* reads the next token into c->tk, skipping blanks and comments */
TB_HIDDEN void tsdl_next(struct ctx *c);
/* the current token is the punctuation p / the identifier id */
TB_HIDDEN int tsdl_is_p(struct ctx *c, const char *p);
TB_HIDDEN int tsdl_is_id(struct ctx *c, const char *id);
/* the current token as error messages show it (a thread-local buffer) */
TB_HIDDEN const char *tsdl_tokdesc(struct ctx *c);
/* consumes the punctuation p / an identifier (into out[IDENT_MAX]), else an error */
TB_HIDDEN void tsdl_expect(struct ctx *c, const char *p);
TB_HIDDEN void tsdl_ident(struct ctx *c, char *out);
/* a number, possibly negative */
TB_HIDDEN int64_t tsdl_snum(struct ctx *c, uint64_t *u, int *neg);
/* the value of "name = value;" */
TB_HIDDEN void tsdl_value(struct ctx *c, struct val *v);
/* a value read as a boolean, a non-negative integer, a byte order (0 le, 1 be) */
TB_HIDDEN int tsdl_vbool(struct ctx *c, const struct val *v, const char *what);
TB_HIDDEN uint64_t tsdl_vuint(struct ctx *c, const struct val *v, const char *what);
TB_HIDDEN int tsdl_vorder(struct ctx *c, const struct val *v);

/* tsdl_layout.c: the fields of event class k from its "fields := struct
 * { ... }" st (on line `line`), checked and flattened into k (names, types,
 * sequence lengths, enum mappings kept in c->m, fixed offsets and size) */
TB_HIDDEN void tsdl_event_fields(struct ctx *c, struct tb_tsdl_class *k, const struct ty *st, int line);
/* tsdl_layout.c: once every block is read, the packet header, each stream
 * class's packet context, event header and event context against
 * core/format.h (c->m's pkt_hdr_size, loss_off, streams, stream_ctx) */
TB_HIDDEN void tsdl_check_layouts(struct ctx *c);

#endif
