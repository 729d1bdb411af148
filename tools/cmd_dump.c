/* SPDX-License-Identifier: MIT */
/* cmd_dump.c - `tracebuf dump DIR`: one line per event, merged by time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "reader/decimal.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf dump [options] DIR\n"
		"  One line per event of trace DIR, every stream merged by time:\n"
		"  [HH:MM:SS.nanoseconds] (+delta) (cpu N) pid/tid \"thread\" event: { field = value, ... }\n"
		"  (the time of day, local; the delta from the previous event line; the thread's\n"
		"  name as the trace records it), and a line where events or packets were lost.\n\n"
		"  --format text|json   json: one JSON object per line (JSON Lines)\n"
		"  --event PATTERN      only events whose name matches the glob (repeat or comma-separate;\n"
		"                       a pattern matching no class of the trace is warned about, and\n"
		"                       exit 1 when none matches)\n"
		"  --cpu N              only CPU N\n"
		"  --tid N              only thread N\n"
		"  --from T, --to T     time window; T in ns since the Unix epoch (integer) or in\n"
		"                       seconds (with a '.' or an 's' suffix, e.g. 1700000000.5)\n"
		"  --thread-records     also print the tracebuf:thread attribution records\n"
		"  --utc                the time of day in UTC, not in the local time zone\n"
		"  --epoch              the former line: [seconds.nanoseconds since the epoch] (cpu N)\n"
		"                       pid/tid event: ..., no delta, no thread name (for scripts)\n"
		"  --ticks              as --epoch, with raw clock ticks instead of the time\n"
		"  --follow             DIR is being recorded: print its events as packets land, in\n"
		"                       time order, until the recorder finishes (exit 1 if it dies)\n"
		"  -q, --quiet          do not print the diagnostics about damaged input\n"
		CLI_PROGRESS_USAGE
		"  -h, --help\n\n"
		"exit: 0 ok, 1 failure, 2 usage, 3 some input was damaged and skipped (see stderr)\n");
}

/* ns since the epoch, or seconds with '.'/'s' suffix */
struct dump_diag {
	int quiet;
	int growing; /* --follow, the trace still being written: diagnostics of its growing end are not said */
	/* --follow: each pass opens the trace anew and its reader reports again
	 * what an earlier one did: what was said (a hash of file, offset and
	 * text; open addressing, 0 free), so that it is said once; and whether
	 * anything was (the output may then lack what was skipped: exit 3) */
	uint64_t *said;
	size_t nsaid, capsaid;
	int damaged;
};

static void on_diag(void *arg, const struct tb_rd_diag *d)
{
	struct dump_diag *dd = arg;
	if (!dd->quiet)
		cli_msg(stderr, "tracebuf dump: %s, offset %" PRIu64 ": %s", d->file, d->offset, d->what);
}

static int match_event(char **pats, int npat, const char *name)
{
	if (!npat)
		return 1;
	for (int i = 0; i < npat; i++)
		if (!fnmatch(pats[i], name, 0))
			return 1;
	return 0;
}

/*
 * Speed: dump spends its time formatting, so a line is built in place in one
 * big output buffer, written with write(2) when it fills (no stdio), and
 * what repeats from line to line is rendered once and copied: per event
 * class its name and whether --event keeps it (struct cls: no strlen or
 * fnmatch per event), per stream its CPU, file and current pid/tid (struct
 * strm), and the seconds of the time (struct secs).  Numbers are converted
 * with src/reader/decimal.h, the fields by tb_rd_format_fields().
 */

/* the n characters of s at p (no NUL: the line goes on); returns the end */
static inline char *put_chars(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* Output buffer; at least RESERVE bytes are free when a line starts. */
#define OBUF_SIZE (256u << 10)
#define RESERVE 4096u /* > a line without its fields: time, stream (file <= 255), name (<= 127, escaped) */

struct obuf {
	char *b;
	size_t cap, n;
	int err; /* errno of a failed write */
};

static int ob_flush(struct obuf *o)
{
	size_t done = 0;
	while (done < o->n && !o->err) {
		ssize_t k = write(STDOUT_FILENO, o->b + done, o->n - done);
		if (k > 0)
			done += (size_t)k;
		else if (k < 0 && errno != EINTR)
			o->err = errno;
	}
	o->n = 0;
	return o->err ? -1 : 0;
}

/* One event class (by id): how its lines start; built at its first event. */
struct cls {
	int state;     /* 0 not seen yet, 1 shown, -1 hidden by --event */
	int tname;     /* tracebuf:thread_name: names a thread (struct names) */
	size_t len[2];
	char *head[2]; /* [json]: text "NAME: { ", JSON "\"event\":\"NAME\",\"fields\":{" */
};

static int cls_build(struct cls *c, const char *name, char **pats, int npat)
{
	/* the name by the one escaping rule (tb_rd_format_text / _string) */
	size_t nl = strlen(name), tl = tb_rd_format_text(name, nl, NULL, 0), jl = tb_rd_format_string(name, nl, 1, NULL, 0);
	c->head[0] = malloc(tl + 5);
	c->head[1] = malloc(jl + 20);
	if (!c->head[0] || !c->head[1])
		return -1;
	tb_rd_format_text(name, nl, c->head[0], tl);
	c->len[0] = tl + (size_t)sprintf(c->head[0] + tl, ": { ");
	char *p = put_chars(c->head[1], "\"event\":", 8);
	p += tb_rd_format_string(name, nl, 1, p, jl);
	c->len[1] = (size_t)(put_chars(p, ",\"fields\":{", 11) - c->head[1]);
	c->state = match_event(pats, npat, name) ? 1 : -1;
	c->tname = !strcmp(name, "tracebuf:thread_name");
	return 0;
}

/*
 * The thread names dump has seen (tracebuf:thread_name events, whatever
 * --event/--cpu/--tid hide) and process names (the metadata's proc_PID),
 * by key (tid, or pid | 1 << 32): open addressing.  dump keeps its own
 * table rather than asking the reader (tb_reader_thread_name) because a
 * --follow pass opens the trace anew and seeks past what it printed: the
 * names must outlive the reader.
 */
struct name_slot {
	uint64_t key; /* 0: free */
	char name[64];
};
struct names {
	struct name_slot *v;
	size_t n, cap;
};

static struct name_slot *names_slot(struct names *t, uint64_t key)
{
	size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (t->cap - 1);
	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return &t->v[i];
}

static const char *names_get(struct names *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	struct name_slot *sl = names_slot(t, key);
	return sl->key ? sl->name : NULL;
}

/* sets key's name; -1 out of memory (the table keeps what it has) */
static int names_set(struct names *t, uint64_t key, const char *name, size_t n)
{
	if ((t->n + 1) * 2 > t->cap) {
		struct names nt = { .cap = t->cap ? t->cap * 2 : 64 };
		nt.v = calloc(nt.cap, sizeof *nt.v);
		if (!nt.v)
			return -1;
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].key) {
				*names_slot(&nt, t->v[i].key) = t->v[i];
				nt.n++;
			}
		free(t->v);
		*t = nt;
	}
	struct name_slot *sl = names_slot(t, key);
	if (!sl->key) {
		sl->key = key;
		t->n++;
	}
	if (n > sizeof sl->name - 1)
		n = sizeof sl->name - 1;
	memcpy(sl->name, name, n);
	sl->name[n] = 0;
	return 0;
}

/* The name of the thread that wrote e: its tracebuf:thread_name, else its
 * process's (a thread that kept the program's name records none); NULL when
 * the trace does not say. */
static const char *thread_name(struct names *t, struct tb_reader *r, uint32_t pid, uint32_t tid)
{
	const char *n = tid ? names_get(t, tid) : NULL;
	if (n || !pid)
		return n;
	uint64_t key = (uint64_t)pid | 1ull << 32;
	if (!(n = names_get(t, key))) {
		char buf[64];
		const char *pn = cli_proc_name(r, pid, buf, sizeof buf);
		if (names_set(t, key, pn ? pn : "", pn ? strlen(pn) : 0))
			return NULL;
		n = names_get(t, key);
	}
	return n && *n ? n : NULL;
}

/* One stream: what follows the time in its event lines, for the pid/tid of its latest event. */
struct strm {
	int have;
	uint32_t pid, tid;
	char name[64]; /* the thread name in head[0] ("" none) */
	size_t len[2];
	char head[2][1700]; /* text " (cpu C) P/T ", JSON ",\"cpu\":C,\"stream\":F,\"pid\":P,\"tid\":T," (F <= 6 * 255 + 2) */
};

static void strm_build(struct strm *s, const struct tb_reader *r, const struct tb_rd_event *e, const char *name)
{
	s->have = 1;
	s->pid = tb_rd_pid(e);
	s->tid = tb_rd_tid(e);
	snprintf(s->name, sizeof s->name, "%s", name ? name : "");
	s->len[0] = (size_t)snprintf(s->head[0], sizeof s->head[0], " (cpu %" PRIu32 ") %" PRIu32 "/%" PRIu32 " ",
				     tb_rd_cpu(e), s->pid, s->tid);
	if (name && *name) {
		/* quoted and escaped (a name may hold spaces or control characters) */
		size_t nl = strlen(s->name), room = sizeof s->head[0] - s->len[0] - 1;
		size_t q = tb_rd_format_string(s->name, nl, 0, s->head[0] + s->len[0], room);
		if (q < room) {
			s->len[0] += q;
			s->head[0][s->len[0]++] = ' ';
		}
	}
	/* the file name is any name the directory holds: escaped like every string (<= 255 bytes) */
	char f[6 * 256 + 2];
	const char *fn = tb_reader_stream_file(r, tb_rd_stream(e));
	f[tb_rd_format_string(fn, strnlen(fn, 255), 1, f, sizeof f - 1)] = 0;
	s->len[1] = (size_t)snprintf(s->head[1], sizeof s->head[1],
				     ",\"cpu\":%" PRIu32 ",\"stream\":%s,\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
				     tb_rd_cpu(e), f, s->pid, s->tid);
}

/* How times are printed (--utc, --epoch, --ticks) */
enum { TM_LOCAL, TM_UTC, TM_EPOCH, TM_TICKS };

/* The seconds of the last time printed ("1700000000." or "15:04:05."): they change once a second. */
struct secs {
	int64_t s;
	size_t len; /* 0: none yet */
	char text[24];
};

/* the time of day (HH:MM:SS.nnnnnnnnn), seconds.nanoseconds since the epoch, or raw ticks (20 digits) */
static char *put_time(char *p, struct secs *c, int64_t ns, uint64_t ticks, int tmode)
{
	if (tmode == TM_TICKS)
		return tb_dec_u64_20(p, ticks);
	int64_t s = ns / 1000000000, f = ns % 1000000000;
	if (f < 0) {
		f += 1000000000;
		s--;
	}
	if (s != c->s || !c->len) {
		char *t = c->text;
		struct tm tm;
		time_t tt = (time_t)s;
		if (tmode <= TM_UTC && (tmode == TM_UTC ? gmtime_r(&tt, &tm) : localtime_r(&tt, &tm))) {
			t += strftime(t, 16, "%H:%M:%S", &tm);
		} else if (s < 0) {
			*t++ = '-';
			t = tb_dec_u64(t, (uint64_t)0 - (uint64_t)s);
		} else {
			t = tb_dec_u64(t, (uint64_t)s);
		}
		*t++ = '.';
		c->s = s;
		c->len = (size_t)(t - c->text);
	}
	memcpy(p, c->text, sizeof c->text);
	return tb_dec_9(p + c->len, (uint32_t)f);
}

/* " (+S.nnnnnnnnn)": the time since the previous event line (babeltrace2's
 * delta); " (+?.?????????)" for the first */
static char *put_delta(char *p, int64_t ns, int64_t prev, int have)
{
	if (!have)
		return put_chars(p, " (+?.?\?\?\?\?\?\?\?\?)", 15);
	uint64_t d = ns >= prev ? (uint64_t)ns - (uint64_t)prev : 0;
	p = tb_dec_u64(put_chars(p, " (+", 3), d / 1000000000u);
	*p++ = '.';
	p = tb_dec_9(p, (uint32_t)(d % 1000000000u));
	*p++ = ')';
	return p;
}

/* A loss notice line: rare, so printf-style. */
static char *put_notice(char *p, const struct tb_reader *r, const struct tb_rd_event *e, int64_t ns, int json,
			int tmode, struct secs *sc)
{
	int kind = tb_rd_kind(e);
	uint64_t c = tb_rd_count(e);
	/* the file name escaped (<= 255 bytes; JSON quoted): the reserve holds it */
	char file[6 * 256 + 2];
	const char *fn = tb_reader_stream_file(r, tb_rd_stream(e));
	size_t fl = strnlen(fn, 255);
	file[json ? tb_rd_format_string(fn, fl, 1, file, sizeof file - 1) : tb_rd_format_text(fn, fl, file, sizeof file - 1)] = 0;
	int64_t ns_end = tb_reader_ticks_to_ns(r, tb_rd_ticks_end(e));
	if (json) {
		const char *what = kind == TB_RD_DISCARDED_EVENTS ? "discarded_events" : "discarded_packets";
		p += sprintf(p, "{\"ts\":%" PRId64 ",\"ticks\":%" PRIu64 ",\"cpu\":%" PRIu32 ",\"stream\":%s,", ns,
			     tb_rd_ticks(e), tb_rd_cpu(e), file);
		if (c)
			p += sprintf(p, "\"%s\":%" PRIu64, what, c);
		else
			p += sprintf(p, "\"%s\":null", what);
		if (kind == TB_RD_DISCARDED_EVENTS) {
			/* the count by cause (only the causes present); null when the trace does not say */
			if (!c || tb_rd_lost(e, 0) == UINT64_MAX) {
				p += sprintf(p, ",\"causes\":null");
			} else {
				p += sprintf(p, ",\"causes\":{");
				for (unsigned k = 0, n = 0; k < TB_RD_LOST_NCAUSES; k++)
					if (tb_rd_lost(e, k))
						p += sprintf(p, "%s\"%s\":%" PRIu64, n++ ? "," : "", tb_rd_loss_name(k),
							     tb_rd_lost(e, k));
				*p++ = '}';
			}
		}
		return p + sprintf(p, ",\"ts_end\":%" PRId64 "}\n", ns_end);
	}
	*p++ = '[';
	p = put_time(p, sc, ns, tb_rd_ticks(e), tmode);
	p += sprintf(p, "] (cpu %" PRIu32 ") %s: ", tb_rd_cpu(e), file);
	if (kind == TB_RD_DISCARDED_PACKETS)
		p += sprintf(p, "LOST %" PRIu64 " packet%s", c, c == 1 ? "" : "s");
	else if (c) {
		p += sprintf(p, "DISCARDED %" PRIu64 " event%s", c, c == 1 ? "" : "s");
		if (tb_rd_lost(e, 0) != UINT64_MAX) {
			p += sprintf(p, " (");
			for (unsigned k = 0, n = 0; k < TB_RD_LOST_NCAUSES; k++)
				if (tb_rd_lost(e, k))
					p += sprintf(p, "%s%s %" PRIu64, n++ ? ", " : "", cli_loss_label(k), tb_rd_lost(e, k));
			*p++ = ')';
		}
	}
	else
		p += sprintf(p, "MAY HAVE DISCARDED events (count unknown)");
	p += sprintf(p, " between [");
	p = put_time(p, sc, ns, tb_rd_ticks(e), tmode);
	p += sprintf(p, "] and [");
	p = put_time(p, sc, ns_end, tb_rd_ticks_end(e), tmode);
	return p + sprintf(p, "]\n");
}

/*
 * An event line at p, with `room` bytes (>= RESERVE) free there.  Return:
 * its end, or NULL when its fields need more room (*need: how much).
 */
static char *put_event(char *p, size_t room, const struct tb_rd_event *e, int64_t ns, int json, int tmode,
		       struct secs *sc, const struct strm *st, const struct cls *c, int64_t *prev_ns, int *have_prev,
		       size_t *need)
{
	char *start = p;
	if (json) {
		p = tb_dec_i64(put_chars(p, "{\"ts\":", 6), ns);
		p = tb_dec_u64(put_chars(p, ",\"ticks\":", 9), tb_rd_ticks(e));
	} else {
		*p++ = '[';
		p = put_time(p, sc, ns, tb_rd_ticks(e), tmode);
		*p++ = ']';
		if (tmode <= TM_UTC)
			p = put_delta(p, ns, *prev_ns, *have_prev);
		*prev_ns = ns;
		*have_prev = 1;
	}
	p = put_chars(p, st->head[json], st->len[json]);
	p = put_chars(p, c->head[json], c->len[json]);
	/* the fields, leaving room for the " }\n" or "}}\n" that closes the line */
	size_t used = (size_t)(p - start), left = room - used - 3;
	size_t n = tb_rd_format_fields(e, json, p, left);
	if (n > left) {
		*need = used + n + 3;
		return NULL;
	}
	return put_chars(p + n, json ? "}}\n" : " }\n", 3);
}

/* Everything a pass over the trace needs (one pass; several with --follow). */
struct dump_run {
	int json, tmode;
	int64_t prev_ns; /* the time of the previous event line (the delta) */
	int have_prev;
	struct names names; /* thread names seen (kept across --follow passes) */
	long cpu, tid;
	int64_t from, to;
	char **pats;
	int npat;
	unsigned flags;
	struct dump_diag dd;
	struct obuf ob;
	struct secs sc;
	/* --follow: what was printed, so that the next pass starts after it */
	int follow;
	uint64_t last_ts;   /* ticks of the last item printed */
	uint64_t at_last;   /* items printed with exactly that time */
	uint64_t printed;   /* items printed in all */
	int oom;
};

/*
 * Prints the items of reader r in time order, up to `bound` ticks (items
 * after it are left for a later pass), after the ones an earlier pass
 * printed.  Return: 0, or -1 on an error that stops the dump.
 */
static int dump_pass(struct dump_run *d, struct tb_reader *r, uint64_t bound)
{
	size_t nclass = tb_reader_nclass_ids(r), nstrm = tb_reader_nstreams(r);
	struct cls *classes = calloc(nclass ? nclass : 1, sizeof *classes);
	struct strm *streams = calloc(nstrm ? nstrm : 1, sizeof *streams);
	struct obuf *ob = &d->ob;
	int oom = !classes || !streams;
	/* where the earlier passes stopped */
	uint64_t skip = 0, done_ts = d->last_ts, done = d->printed;
	if (done) {
		tb_reader_seek_ticks(r, done_ts);
		skip = d->at_last;
	} else if (d->from != INT64_MIN) {
		tb_reader_seek_ns(r, d->from);
	}
	const struct tb_rd_event *e;
	while (!oom && !ob->err && cli_next(r, &e) > 0) {
		uint64_t ticks = tb_rd_ticks(e);
		if (ticks > bound)
			break;
		if (done && ticks <= done_ts && (ticks < done_ts || skip > 0)) {
			/* printed by an earlier pass (ties: the first at_last of them) */
			if (ticks == done_ts)
				skip--;
			continue;
		}
		if (d->follow) {
			if (ticks != d->last_ts || !d->printed)
				d->at_last = 0;
			d->last_ts = ticks;
			d->at_last++;
			d->printed++;
		}
		int64_t ns = tb_rd_ns(e);
		if (ns > d->to)
			break;
		struct cls *c = NULL;
		if (tb_rd_kind(e) == TB_RD_EVENT) {
			c = &classes[tb_rd_id(e)];
			if (!c->state && cls_build(c, tb_rd_name(e), d->pats, d->npat)) {
				oom = 1;
				break;
			}
			/* a thread's name, whatever the filters hide */
			size_t nl = 0;
			const char *tn = c->tname ? tb_rd_str(e, 1, &nl) : NULL;
			if (tn && tb_rd_u64(e, 0) && tb_rd_u64(e, 0) <= UINT32_MAX)
				names_set(&d->names, tb_rd_u64(e, 0), tn, nl);
		}
		if (d->cpu >= 0 && tb_rd_cpu(e) != (uint32_t)d->cpu)
			continue;
		if (ob->cap - ob->n < RESERVE && ob_flush(ob))
			break;
		if (tb_rd_kind(e) != TB_RD_EVENT) {
			if (d->npat || d->tid >= 0)
				continue; /* notices belong to no event class and no thread */
			ob->n = (size_t)(put_notice(ob->b + ob->n, r, e, ns, d->json, d->tmode, &d->sc) - ob->b);
			continue;
		}
		if (d->tid >= 0 && tb_rd_tid(e) != (uint32_t)d->tid)
			continue;
		if (!c || c->state < 0)
			continue; /* (c is set for every event: the kind was tested above) */
		struct strm *st = &streams[tb_rd_stream(e)];
		const char *tn = d->tmode <= TM_UTC ? thread_name(&d->names, r, tb_rd_pid(e), tb_rd_tid(e)) : NULL;
		if (!st->have || st->pid != tb_rd_pid(e) || st->tid != tb_rd_tid(e) || strcmp(st->name, tn ? tn : ""))
			strm_build(st, r, e, tn);
		size_t need;
		char *end;
		while (!(end = put_event(ob->b + ob->n, ob->cap - ob->n, e, ns, d->json, d->tmode, &d->sc, st, c, &d->prev_ns,
					     &d->have_prev, &need))) {
			/* fields longer than the free room: write what is there, or grow for a huge line */
			if (ob->n) {
				if (ob_flush(ob))
					break;
			} else {
				char *nb = malloc(need + RESERVE);
				if (!nb) {
					oom = 1;
					break;
				}
				free(ob->b);
				ob->b = nb;
				ob->cap = need + RESERVE;
			}
		}
		if (!end)
			break;
		ob->n = (size_t)(end - ob->b);
	}
	if (!oom && !ob->err)
		ob_flush(ob);
	for (size_t i = 0; classes && i < nclass; i++) {
		free(classes[i].head[0]);
		free(classes[i].head[1]);
	}
	free(classes);
	free(streams);
	d->oom |= oom;
	return oom || ob->err ? -1 : 0;
}

/*
 * --event patterns that match no event class of the trace (a typo prints
 * nothing): each said with the closest class names (as `record --events`).
 * Return: 1 when no pattern matches any class (nothing can be printed).
 */
static int check_patterns(const struct dump_run *d, const struct tb_reader *r)
{
	if (!d->npat)
		return 0;
	size_t n = tb_reader_nclass_ids(r);
	const char **names = calloc(n ? n : 1, sizeof *names);
	if (!names)
		return 0;
	for (size_t i = 0; i < n; i++)
		names[i] = tb_reader_class_name(r, (uint32_t)i);
	int unmatched = 0;
	for (int i = 0; i < d->npat; i++)
		unmatched += cli_warn_unmatched("dump", "--event", "the event classes of the trace", d->pats[i], names,
						(unsigned)n);
	free(names);
	return unmatched == d->npat;
}

/* ---- --follow -------------------------------------------------------------- */

#define FOLLOW_POLL_US 100000

/* 1 when (file, offset, what) was said by an earlier pass; else remembers it (0) */
static int said_before(struct dump_diag *dd, const struct tb_rd_diag *d)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = d->file; p && *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	h = (h ^ d->offset) * 0x100000001b3ull;
	for (const char *p = d->what; p && *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	h |= 1; /* never 0, the free slot */
	if (2 * (dd->nsaid + 1) > dd->capsaid) {
		size_t cap = dd->capsaid ? 2 * dd->capsaid : 256;
		uint64_t *v = calloc(cap, sizeof *v);
		if (!v)
			return 0; /* said again rather than not at all */
		for (size_t i = 0; i < dd->capsaid; i++)
			for (size_t j = dd->said[i] & (cap - 1); dd->said[i]; j = (j + 1) & (cap - 1))
				if (!v[j]) {
					v[j] = dd->said[i];
					break;
				}
		free(dd->said);
		dd->said = v;
		dd->capsaid = cap;
	}
	size_t j = h & (dd->capsaid - 1);
	for (; dd->said[j]; j = (j + 1) & (dd->capsaid - 1))
		if (dd->said[j] == h)
			return 1;
	dd->said[j] = h;
	dd->nsaid++;
	return 0;
}

static void follow_diag(void *arg, const struct tb_rd_diag *d)
{
	/* while the trace grows, a packet being appended looks truncated, and
	 * a stream file just created empty: said at the final pass only */
	struct dump_diag *dd = arg;
	if (dd->growing && (d->err == -ENODATA || strstr(d->what, "empty file")))
		return;
	if (said_before(dd, d))
		return;
	dd->damaged = 1;
	on_diag(arg, d);
}

static int dump_follow(struct dump_run *d, const char *dir)
{
	/* Each pass prints what the recorder says is complete (its progress:
	 * no record stamped before it can still come), after what earlier
	 * passes printed; the last pass, once the recorder finished (or died),
	 * prints the rest.  So the output is a plain dump's, in pieces. */
	struct cli_recorder rec = { .progress = 0 };
	int rc = TB_EXIT_OK, seen_recorder = 0;
	for (;;) {
		int state = cli_recorder_state(dir, &rec);
		if (state == CLI_REC_LIVE)
			seen_recorder = 1;
		/* final: the recorder finished (its mark is gone), died, or the mark is none */
		int final = state != CLI_REC_LIVE;
		long pid = state == CLI_REC_NONE ? 0 : rec.pid;
		uint64_t progress = rec.progress;
		if (state == CLI_REC_BAD)
			cli_msg(stderr, "tracebuf dump: %s: reading what is there, as a finished trace", rec.why); /* echoes the mark */
		d->dd.growing = !final;
		struct tb_reader_opts ro = { .size = sizeof ro, .flags = d->flags, .diag = follow_diag, .diag_arg = &d->dd };
		struct tb_reader *r = NULL;
		int orc = tb_reader_open(dir, &ro, &r);
		if (orc == 0) {
			uint64_t bound = final ? UINT64_MAX : progress;
			int prc = dump_pass(d, r, bound);
			if (final && (tb_reader_ndiags(r) || d->dd.damaged))
				rc = TB_EXIT_PARTIAL; /* also what an earlier pass skipped and said */
			/* the classes are known once the trace is: said at the end */
			if (final && prc == 0 && check_patterns(d, r))
				rc = TB_EXIT_FAIL;
			tb_reader_close(r);
			if (prc < 0)
				break;
		} else if (final && (orc != -ENOENT || seen_recorder || state != CLI_REC_GONE)) {
			/* nothing to follow: no trace there (or nothing readable: a
			 * copy of a live trace whose stream files were still empty),
			 * and nobody writing one; a recorder gone is said below too */
			rc = cli_error("dump", "%s", tb_errmsg());
			if (state != CLI_REC_GONE)
				break;
		}
		if (final) {
			if (state == CLI_REC_GONE) {
				cli_msg(stderr, "tracebuf dump: the recorder (pid %ld) of %s is gone without finishing the "
						"trace (%s): printed what it wrote", pid, dir, rec.why);
				rc = TB_EXIT_FAIL;
			} else if (state == CLI_REC_BAD && rc == TB_EXIT_OK) {
				rc = TB_EXIT_PARTIAL; /* the mark was damaged input */
			}
			break;
		}
		usleep(FOLLOW_POLL_US);
	}
	free(d->dd.said);
	d->dd.said = NULL;
	d->dd.nsaid = d->dd.capsaid = 0;
	return rc;
}

static int dump_main(struct dump_run *dr, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, 0, 'f' }, { "event", required_argument, 0, 'e' },
		{ "cpu", required_argument, 0, 'c' },    { "tid", required_argument, 0, 't' },
		{ "from", required_argument, 0, 'F' },   { "to", required_argument, 0, 'T' },
		{ "thread-records", no_argument, 0, 'R' }, { "ticks", no_argument, 0, 'k' },
		{ "epoch", no_argument, 0, 'E' },        { "utc", no_argument, 0, 'U' },
		{ "follow", no_argument, 0, 'w' },
		{ "quiet", no_argument, 0, 'q' },        { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct dump_run d = *dr;
	int opt;
	optind = 1;
	while ((opt = cli_getopt("dump", argc, argv, "f:e:c:t:F:T:qh", lo)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "json"))
				d.json = 1;
			else if (strcmp(optarg, "text"))
				return cli_error("dump", "--format %s: use text or json", optarg), TB_EXIT_USAGE;
			break;
		case 'e':
			/* any number of patterns: the array grows */
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				char **np = realloc(d.pats, ((size_t)d.npat + 1) * sizeof *np);
				if (!np)
					return cli_error("dump", "out of memory");
				d.pats = dr->pats = np;
				d.pats[d.npat++] = tok;
			}
			break;
		case 'c': case 't': {
			uint64_t v;
			if (cli_parse_uint(optarg, UINT32_MAX, &v))
				return cli_error("dump", "--%s %s: expected a number from 0 to %u", opt == 'c' ? "cpu" : "tid",
						 optarg, UINT32_MAX), TB_EXIT_USAGE;
			*(opt == 'c' ? &d.cpu : &d.tid) = (long)v;
			break;
		}
		case 'F': case 'T':
			if (cli_parse_time(optarg, opt == 'F' ? &d.from : &d.to))
				return cli_error("dump", "%s %s: expected ns since the epoch or seconds (1700000000.5)",
						 opt == 'F' ? "--from" : "--to", optarg), TB_EXIT_USAGE;
			break;
		case 'R': d.flags |= TB_READER_THREAD_EVENTS; break;
		case 'k': d.tmode = TM_TICKS; break;
		case 'E': d.tmode = TM_EPOCH; break;
		case 'U': d.tmode = TM_UTC; break;
		case 'w': d.follow = 1; break;
		case 'q': d.dd.quiet = 1; break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	d.ob = (struct obuf){ .b = malloc(OBUF_SIZE), .cap = OBUF_SIZE };
	if (!d.ob.b)
		return cli_error("dump", "out of memory");
	/* a flight recorder's snapshot: its trace/ (tools/cmd_snapshots.c) */
	char snap_trace[PATH_MAX + 16];
	const char *dir = cli_flight_trace_dir("dump", argv[optind], snap_trace, sizeof snap_trace);
	if (!dir) {
		free(d.ob.b);
		return TB_EXIT_USAGE;
	}
	argv[optind] = (char *)dir;
	struct stat dsb;
	if (d.follow && stat(dir, &dsb) < 0 && errno == ENOENT) {
		free(d.ob.b);
		return cli_error("dump", "--follow %s: no such directory (yet): dump --follow reads a trace that "
					 "tracebuf record -o %s has created; start it once the directory is there",
				 dir, dir), TB_EXIT_USAGE;
	}
	int code;
	if (d.follow) {
		code = dump_follow(&d, argv[optind]);
	} else {
		struct tb_reader_opts ro = { .size = sizeof ro, .flags = d.flags, .diag = on_diag, .diag_arg = &d.dd };
		struct tb_reader *r;
		int rc = tb_reader_open(argv[optind], &ro, &r);
		if (rc) {
			free(d.ob.b);
			return cli_error("dump", "%s", tb_errmsg());
		}
		int none = check_patterns(&d, r);
		dump_pass(&d, r, UINT64_MAX);
		code = none ? TB_EXIT_FAIL : tb_reader_ndiags(r) != 0 ? TB_EXIT_PARTIAL : TB_EXIT_OK;
		tb_reader_close(r);
	}
	int err = d.ob.err;
	free(d.ob.b);
	free(d.names.v);
	if (d.oom)
		return cli_error("dump", "out of memory");
	if (err)
		return cli_error("dump", "write error on standard output: %s", strerror(err));
	return code;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_run d = { .cpu = -1, .tid = -1, .from = INT64_MIN, .to = INT64_MAX };
	int rc = dump_main(&d, argc, argv);
	free(d.pats); /* the patterns --event gave (dump_main keeps d.pats up to date) */
	return rc;
}
