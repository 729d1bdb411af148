/* SPDX-License-Identifier: MIT */
/*
 * flight_cond_test.h - what the --snapshot-on condition unit tests share
 * (src/consumer/flight_cond.c through its three calls): a class made of
 * named, typed fields; does a condition hold on a payload; is a text refused
 * at the position wanted.  Header-only, for tests/unit only.
 */
#ifndef TB_TEST_FLIGHT_COND_TEST_H
#define TB_TEST_FLIGHT_COND_TEST_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "consumer/flight.h"
#include "tbtest.h"

/* a registered class NAME of N fields named FN, of types FT */
static inline struct tb_event_desc fct_class(const char *name, unsigned n, const char *const *fn, const uint32_t *ft)
{
	struct tb_event_desc e;
	memset(&e, 0, sizeof e);
	snprintf(e.name, sizeof e.name, "%s", name);
	e.nfields = n;
	e.state = 1;
	for (unsigned i = 0; i < n; i++) {
		snprintf(e.fields[i].name, sizeof e.fields[i].name, "%s", fn[i]);
		e.fields[i].type = ft[i];
		e.fields[i].max_len = ft[i] == TB_FT_STRING ? 255 : 0;
	}
	return e;
}

/* 1 or 0: does `text` (which must parse) hold on the payload P of LEN bytes;
 * -1: it does not apply to the class, and *why_out (when not NULL) says why */
static inline int fct_holds(const char *text, const struct tb_event_desc *e, const void *p, size_t len,
			    const char **why_out)
{
	struct tb_flight_cond c;
	unsigned pos, fidx[TB_FLIGHT_CMP_MAX], bad;
	const char *why = "";
	int role;
	CHECK(tb_flight_cond_parse(text, &c, &pos, &why) == 0, "'%s' refused at %u: %s", text, pos, why);
	CHECK(c.nprog <= TB_FLIGHT_PROG_MAX && c.ncmp <= TB_FLIGHT_CMP_MAX);
	if (tb_flight_cond_class(&c, e->name, e->fields, e->nfields, fidx, &role, &bad, &why) != 1) {
		if (why_out)
			*why_out = why;
		return -1;
	}
	return tb_flight_cond_eval(&c, fidx, e, p, len);
}

/* `text` is refused at byte WANT_POS, the reason containing PHRASE (NULL: any reason) */
static inline void fct_refused(const char *text, unsigned want_pos, const char *phrase)
{
	struct tb_flight_cond c;
	unsigned pos = 999;
	const char *why = NULL;
	CHECK(tb_flight_cond_parse(text, &c, &pos, &why) == -EINVAL, "'%s' accepted", text);
	CHECK(pos == want_pos && why && *why && (!phrase || strstr(why, phrase)),
	      "'%s': refused at %u (want %u): %s (want '%s')", text, pos, want_pos, why ? why : "",
	      phrase ? phrase : "any reason");
}

#endif
