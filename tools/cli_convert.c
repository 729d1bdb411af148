/* SPDX-License-Identifier: MIT */
/* cli_convert.c - what the converters share (cli_convert.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_convert.h"

/* ---------------------------------------------------------------------- */
/* output                                                                  */

const char *cv_out_name(const struct cv_opts *o)
{
	return strcmp(o->out, "-") ? o->out : "standard output";
}

FILE *cv_open_out(const struct cv_opts *o)
{
	static char obuf[1 << 20];
	FILE *f = strcmp(o->out, "-") ? fopen(o->out, "w") : stdout;
	if (!f) {
		cli_error(o->cmd ? o->cmd : "convert", "cannot create %s: %s", o->out, strerror(errno));
		return NULL;
	}
	setvbuf(f, obuf, _IOFBF, sizeof obuf);
	return f;
}

int cv_close_out(const struct cv_opts *o, FILE *f)
{
	int werr = fflush(f) != 0 || ferror(f);
	if (f != stdout && fclose(f))
		werr = 1;
	if (werr)
		return cli_error(o->cmd ? o->cmd : "convert", "write error on %s", cv_out_name(o));
	return TB_EXIT_OK;
}

/* ---------------------------------------------------------------------- */
/* window                                                                  */

void cv_window_start(struct cv_window *w, struct tb_reader *r, const struct cv_opts *o)
{
	/* no tb_reader_seek_ns(): the events before the window are counted
	 * for the note (the merged iteration skips them at ~75 M/s) */
	(void)r;
	memset(w, 0, sizeof *w);
	w->o = o;
}

int cv_window_take(struct cv_window *w, const struct tb_rd_event *e)
{
	int64_t ns = tb_rd_ns(e);
	int ev = tb_rd_kind(e) == TB_RD_EVENT;
	if (w->o->has_begin && ns < w->o->begin_ns) {
		w->before += ev;
		return 0;
	}
	if (w->o->has_end && ns > w->o->end_ns) {
		w->cut = 1;
	} else if (ev && w->o->max_events && w->taken == w->o->max_events) {
		w->cut = 2;
	} else {
		w->taken += ev;
		return 1;
	}
	w->cut_ns = ns;
	w->after += ev;
	return -1;
}

void cv_window_drain(struct cv_window *w, struct tb_reader *r)
{
	const struct tb_rd_event *e;
	while (cli_next(r, &e) > 0)
		w->after += tb_rd_kind(e) == TB_RD_EVENT;
}

const char *cv_window_note(const struct cv_window *w, char *buf, size_t cap)
{
	char when[64];
	buf[0] = 0;
	if (w->cut) {
		cv_utc(when, sizeof when, w->cut_ns);
		if (w->cut == 2)
			snprintf(buf, cap, "cut after --max-events %" PRIu64 " at %s: the %" PRIu64
					   " later event%s %s not in this file", w->o->max_events, when, w->after,
				 cli_s(w->after), w->after == 1 ? "is" : "are");
		else
			snprintf(buf, cap, "cut at --end: the %" PRIu64 " event%s after it %s not in this file", w->after,
				 cli_s(w->after), w->after == 1 ? "is" : "are");
	}
	if (w->before) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, "%sthe %" PRIu64 " event%s before --begin %s not in this file", n ? "; " : "cut: ",
			 w->before, cli_s(w->before), w->before == 1 ? "is" : "are");
	}
	return buf;
}

/* ---------------------------------------------------------------------- */
/* spans                                                                   */

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n > k && !memcmp(s + n - k, suf, k);
}

static char *sdup(const char *s, size_t n)
{
	char *b = malloc(n + 1);
	if (b) {
		memcpy(b, s, n);
		b[n] = 0;
	}
	return b;
}

int cv_roles_load(struct cv_roles *ro, struct tb_reader *r)
{
	uint32_t n = tb_reader_nclass_ids(r);
	ro->n = n;
	ro->r = calloc(n ? n : 1, sizeof *ro->r);
	if (!ro->r)
		return -ENOMEM;
	for (uint32_t id = 0; id < n; id++) {
		struct cv_role *x = &ro->r[id];
		const char *name = tb_reader_class_name(r, id);
		x->pair = UINT32_MAX;
		if (!name)
			name = "?";
		size_t len = strlen(name);
		const char *colon = strrchr(name, ':');
		const char *ev = colon ? colon + 1 : name;
		size_t evl = len - (size_t)(ev - name), sl = len;
		if (ends_with(ev, evl, "_begin")) {
			x->kind = 1;
			sl = len - 6;
		} else if (ends_with(ev, evl, "_end")) {
			x->kind = 2;
			sl = len - 4;
		}
		x->cat = sdup(name, colon ? (size_t)(colon - name) : 0);
		x->span = sdup(name, sl);
		x->cat_json = cv_jdup(x->cat ? x->cat : "", x->cat ? strlen(x->cat) : 0);
		x->span_json = cv_jdup(name, sl);
		x->name_json = cv_jdup(name, len);
		if (!x->cat || !x->span || !x->cat_json || !x->span_json || !x->name_json)
			return -ENOMEM;
	}
	/* pair each end with the begin class of the same prefix */
	for (uint32_t id = 0; id < n; id++) {
		if (ro->r[id].kind != 2)
			continue;
		for (uint32_t b = 0; b < n; b++)
			if (ro->r[b].kind == 1 && !strcmp(ro->r[b].span, ro->r[id].span)) {
				ro->r[id].pair = b;
				break;
			}
	}
	return 0;
}

void cv_roles_free(struct cv_roles *ro)
{
	for (uint32_t i = 0; ro->r && i < ro->n; i++) {
		free(ro->r[i].span);
		free(ro->r[i].cat);
		free(ro->r[i].span_json);
		free(ro->r[i].cat_json);
		free(ro->r[i].name_json);
	}
	free(ro->r);
	ro->r = NULL;
}

int cv_span_step(const struct cv_roles *ro, struct cv_stack *st, uint32_t id, uint32_t *inner)
{
	const struct cv_role *x = id < ro->n ? &ro->r[id] : NULL;
	if (!x || !x->kind)
		return CV_INSTANT;
	if (x->kind == 1) {
		if (st->depth == CV_STACK_MAX)
			return CV_TOO_DEEP;
		if (st->depth == st->cap) {
			uint32_t cap = st->cap ? st->cap * 2 : 8;
			uint32_t *s = realloc(st->s, cap * sizeof *s);
			if (!s)
				return -ENOMEM;
			st->s = s;
			st->cap = cap;
		}
		st->s[st->depth++] = id;
		return CV_BEGIN;
	}
	uint32_t d = st->depth;
	while (d > 0 && st->s[d - 1] != x->pair)
		d--;
	if (d == 0 || x->pair == UINT32_MAX)
		return CV_UNMATCHED;
	*inner = st->depth - d;
	return CV_END;
}

/* ---------------------------------------------------------------------- */
/* names                                                                   */

const char *cv_process_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap)
{
	if (!pid) {
		snprintf(buf, cap, "no thread record");
		return buf;
	}
	if (!cli_proc_name(r, pid, buf, cap) || !buf[0])
		snprintf(buf, cap, "pid %" PRIu32, pid);
	return buf;
}

const char *cv_thread_name(struct tb_reader *r, uint32_t pid, uint32_t tid, char *buf, size_t cap)
{
	(void)pid;
	/* the name as far as the reader has come (tracebuf:thread_name is
	 * written before a named thread's first event); tids are unique among
	 * the live threads of one machine, which is what a trace holds */
	const char *n = tb_reader_thread_name(r, tid);
	if (n && *n)
		snprintf(buf, cap, "%s", n);
	else
		snprintf(buf, cap, "tid %" PRIu32, tid);
	return buf;
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                    */

char *cv_jdup(const char *s, size_t n)
{
	size_t need = tb_rd_format_string(s, n, 1, NULL, 0);
	char *b = malloc(need + 1);
	if (b) {
		tb_rd_format_string(s, n, 1, b, need);
		b[need] = 0;
	}
	return b;
}

void cv_utc(char *buf, size_t cap, int64_t ns)
{
	int64_t s = ns / 1000000000, f = ns % 1000000000;
	if (f < 0) {
		f += 1000000000;
		s--;
	}
	time_t tt = (time_t)s;
	struct tm tm;
	size_t n = gmtime_r(&tt, &tm) ? strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm) : 0;
	snprintf(buf + n, cap - n, ".%09" PRId64 "Z", f);
}

static int grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < need)
		c *= 2;
	char *b = realloc(*buf, c);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = c;
	return 0;
}

/* 1 when the digits d[0..n) (an optional '-' first) are outside +-2^53 */
static int unsafe_int(const char *d, size_t n)
{
	static const char lim[] = "9007199254740991"; /* 2^53 - 1, Number.MAX_SAFE_INTEGER */
	if (n && d[0] == '-') {
		d++;
		n--;
	}
	if (n != sizeof lim - 1)
		return n > sizeof lim - 1;
	return memcmp(d, lim, n) > 0;
}

const char *cv_fields_json(const struct tb_rd_event *e, char **buf, size_t *cap)
{
	/* render into the second half of the buffer, copy to the first with
	 * big integers quoted: at most 2 quotes per 17+ digits, so 9/8 of it */
	if (grow(buf, cap, 4096))
		return NULL;
	size_t room = *cap / 2, n;
	for (;;) {
		n = tb_rd_format_fields(e, 1, *buf + *cap - room, room);
		if (n + n / 8 + 16 <= *cap - room)
			break;
		if (grow(buf, cap, 2 * (n + n / 8 + 16)))
			return NULL;
		room = *cap / 2;
	}
	char *src = *buf + *cap - room;
	char *o = *buf;
	int in_str = 0;
	for (size_t i = 0; i < n;) {
		char c = src[i];
		if (in_str) {
			*o++ = c;
			i++;
			if (c == '\\' && i < n)
				*o++ = src[i++];
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
			*o++ = c;
			i++;
			continue;
		}
		if (c == '-' || (c >= '0' && c <= '9')) {
			/* one whole JSON number: -?digits(.digits)?([eE][+-]?digits)? */
			size_t j = i + (c == '-');
			while (j < n && src[j] >= '0' && src[j] <= '9')
				j++;
			size_t int_end = j;
			if (j < n && src[j] == '.')
				for (j++; j < n && src[j] >= '0' && src[j] <= '9';)
					j++;
			if (j < n && (src[j] == 'e' || src[j] == 'E')) {
				j++;
				if (j < n && (src[j] == '+' || src[j] == '-'))
					j++;
				while (j < n && src[j] >= '0' && src[j] <= '9')
					j++;
			}
			int q = int_end == j && unsafe_int(src + i, j - i);
			if (q)
				*o++ = '"';
			memcpy(o, src + i, j - i);
			o += j - i;
			if (q)
				*o++ = '"';
			i = j;
			continue;
		}
		*o++ = c;
		i++;
	}
	*o = 0;
	return *buf;
}
