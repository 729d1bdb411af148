/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - `tracebuf convert DIR --to chrome -o FILE.json`: the
 * Chrome Trace Event format that Perfetto UI and chrome://tracing open.
 *
 * Streamed: one merged pass over the trace, each event written as it is
 * read; memory is per thread (its stack of open spans) and per process.
 *
 *   - one track per thread (pid/tid), named by `process_name`/`thread_name`
 *     metadata events emitted when a pid/tid is first seen (process names
 *     from the metadata env `proc_<pid>` = "comm=NAME ...");
 *     events without a thread record go to pseudo-process 0, track = CPU;
 *   - events are instants (ph "i", scope "t") with their fields as args;
 *   - spans: an event whose event part (after the last ':') ends in
 *     "_begin" opens span PREFIX on its thread (ph "B"); PREFIX + "_end"
 *     on the same thread closes it (ph "E").  Spans nest: a stack per
 *     thread.  An end closes the innermost open span of its name; spans
 *     opened inside it and still open are closed at the same time
 *     (counted); an end with no open span of its name is an instant
 *     (counted); spans still open at the end of the trace are closed there
 *     (counted);
 *   - discard notices are instants named tracebuf:discarded_events /
 *     tracebuf:discarded_packets on the CPU track of pseudo-process 0;
 *   - "ts" in microseconds with 3 decimals (ns precision), relative to the
 *     trace start (default; otherData.trace_start_ns says when that is) or
 *     since the Unix epoch (--absolute).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "cli.h"

#define STACK_MAX 1024u /* nesting depth per thread; deeper begins are instants */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf convert DIR --to chrome -o FILE.json [options]\n"
		"  Converts trace DIR to the Chrome Trace Event format (a JSON object with\n"
		"  \"traceEvents\") for Perfetto UI (ui.perfetto.dev) and chrome://tracing.\n"
		"  One track per thread; events are instants with their fields as args;\n"
		"  NAME_begin ... NAME_end on one thread (e.g. http:request_begin ...\n"
		"  http:request_end) become a span NAME, nested per thread.\n\n"
		"  --to chrome          output format (the only one so far)\n"
		"  -o, --output FILE    output file ('-': standard output)\n"
		"  --absolute           ts in us since the Unix epoch (default: since the trace\n"
		"                       start; viewers keep ns precision only with relative times)\n"
		"  -q, --quiet          no diagnostics, no summary on stderr\n"
		"  -h, --help\n\n"
		"exit: 0 ok, 1 failure, 2 usage, 3 some input was damaged and skipped (see stderr)\n");
}

/* ---------------------------------------------------------------------- */
/* per-class span roles                                                    */

struct role {
	int kind;      /* 0 none, 1 begin, 2 end */
	uint32_t pair; /* end: class id of its begin; UINT32_MAX none */
	char *span;    /* span name (PREFIX) as a JSON string, quoted */
	char *cat;     /* category: the provider part, JSON string */
};

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n > k && !memcmp(s + n - k, suf, k);
}

static char *jdup(const char *s, size_t n)
{
	size_t need = tb_rd_format_string(s, n, 1, NULL, 0);
	char *b = malloc(need + 1);
	if (b) {
		tb_rd_format_string(s, n, 1, b, need);
		b[need] = 0;
	}
	return b;
}

static struct role *load_roles(struct tb_reader *r, uint32_t n)
{
	struct role *ro = calloc(n ? n : 1, sizeof *ro);
	if (!ro)
		return NULL;
	for (uint32_t id = 0; id < n; id++) {
		const char *name = tb_reader_class_name(r, id);
		ro[id].pair = UINT32_MAX;
		if (!name)
			continue;
		size_t len = strlen(name);
		const char *colon = strrchr(name, ':');
		const char *ev = colon ? colon + 1 : name;
		size_t evl = len - (size_t)(ev - name);
		ro[id].cat = jdup(name, colon ? (size_t)(colon - name) : 0);
		if (ends_with(ev, evl, "_begin")) {
			ro[id].kind = 1;
			ro[id].span = jdup(name, len - 6);
		} else if (ends_with(ev, evl, "_end")) {
			ro[id].kind = 2;
			ro[id].span = jdup(name, len - 4);
		}
		if (!ro[id].cat || (ro[id].kind && !ro[id].span))
			return ro; /* out of memory: caller checks */
	}
	/* pair each end with the begin class of the same prefix */
	for (uint32_t id = 0; id < n; id++) {
		if (ro[id].kind != 2)
			continue;
		const char *name = tb_reader_class_name(r, id);
		size_t pl = strlen(name) - 4;
		for (uint32_t b = 0; b < n; b++) {
			const char *bn = ro[b].kind == 1 ? tb_reader_class_name(r, b) : NULL;
			if (bn && strlen(bn) == pl + 6 && !memcmp(bn, name, pl)) {
				ro[id].pair = b;
				break;
			}
		}
	}
	return ro;
}

/* ---------------------------------------------------------------------- */
/* threads and processes                                                   */

struct tstate {
	uint64_t key; /* pid << 32 | tid; UINT64_MAX empty */
	uint32_t *stack, depth, cap;
};

struct table {
	struct tstate *v;
	size_t cap, n;
};

static struct tstate *tget(struct table *t, uint64_t key, int *isnew)
{
	*isnew = 0;
	if ((t->n + 1) * 10 > t->cap * 7) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct tstate *v = malloc(cap * sizeof *v);
		if (!v)
			return NULL;
		for (size_t i = 0; i < cap; i++)
			v[i].key = UINT64_MAX;
		for (size_t i = 0; i < t->cap; i++) {
			if (t->v[i].key == UINT64_MAX)
				continue;
			size_t h = (size_t)(t->v[i].key * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			while (v[h].key != UINT64_MAX)
				h = (h + 1) & (cap - 1);
			v[h] = t->v[i];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	size_t h = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (t->cap - 1);
	while (t->v[h].key != key) {
		if (t->v[h].key == UINT64_MAX) {
			memset(&t->v[h], 0, sizeof t->v[h]);
			t->v[h].key = key;
			t->n++;
			*isnew = 1;
			break;
		}
		h = (h + 1) & (t->cap - 1);
	}
	return &t->v[h];
}

struct conv {
	struct tb_reader *r;
	FILE *out;
	int absolute;
	int64_t origin_ns;
	struct role *roles;
	uint32_t nroles;
	struct table threads, procs;
	char *fields;
	size_t fcap;
	int first;
	/* counts */
	uint64_t events, instants, begins, ends, unmatched, closed_at_end, closed_by_outer, too_deep, notices;
};

static void sep(struct conv *c)
{
	if (!c->first)
		fputs(",\n", c->out);
	c->first = 0;
}

/* "key":N.NNN (us) */
static void put_ts(struct conv *c, const char *key, int64_t ns)
{
	__int128 v = c->absolute ? ns : (__int128)ns - c->origin_ns;
	const char *sign = "";
	if (v < 0) {
		sign = "-";
		v = -v;
	}
	fprintf(c->out, "\"%s\":%s%" PRIu64 ".%03d", key, sign, (uint64_t)(v / 1000), (int)(v % 1000));
}

static const char *proc_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap)
{
	char key[32];
	snprintf(key, sizeof key, "proc_%" PRIu32, pid);
	for (unsigned i = 0; i < tb_reader_nenv(r); i++) {
		if (strcmp(tb_reader_env_key(r, i), key))
			continue;
		const char *v = tb_reader_env_value(r, i), *stop = v + strlen(v);
		if (!strncmp(v, "comm=", 5)) {
			v += 5;
			const char *x = strstr(v, " exe=");
			if (x)
				stop = x;
		}
		snprintf(buf, cap, "%.*s", (int)(stop - v), v);
		return buf;
	}
	return NULL;
}

static void put_name_meta(struct conv *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	char *j = jdup(name, strlen(name));
	sep(c);
	fprintf(c->out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"name\":%s}}",
		what, pid, tid, j ? j : "\"?\"");
	free(j);
}

/* the thread state of an item; names its process and thread when first seen */
static struct tstate *track(struct conv *c, uint32_t pid, uint32_t tid)
{
	int isnew;
	struct tstate *t = tget(&c->threads, (uint64_t)pid << 32 | tid, &isnew);
	if (!t || !isnew)
		return t;
	char buf[128], nb[160];
	const char *pn = pid ? proc_name(c->r, pid, buf, sizeof buf) : "no thread record";
	struct tstate *p = tget(&c->procs, pid, &isnew);
	if (!p)
		return NULL;
	if (isnew) {
		if (!pn) {
			snprintf(nb, sizeof nb, "pid %" PRIu32, pid);
			pn = nb;
		}
		put_name_meta(c, "process_name", pid, 0, pn);
	}
	if (!pid)
		snprintf(nb, sizeof nb, "cpu %" PRIu32, tid);
	else if (pn && tid == pid)
		snprintf(nb, sizeof nb, "%s", pn);
	else
		snprintf(nb, sizeof nb, "tid %" PRIu32, tid);
	put_name_meta(c, "thread_name", pid, tid, nb);
	return t; /* procs is another table: t did not move */
}

/* the event's fields as JSON members, in c->fields */
static const char *fields(struct conv *c, const struct tb_rd_event *e)
{
	for (;;) {
		size_t n = tb_rd_format_fields(e, 1, c->fields, c->fcap - 1);
		if (n < c->fcap) {
			c->fields[n] = 0;
			return c->fields;
		}
		size_t cap = n + 1 > 2 * c->fcap ? n + 1 : 2 * c->fcap;
		char *b = malloc(cap);
		if (!b)
			return NULL;
		free(c->fields);
		c->fields = b;
		c->fcap = cap;
	}
}

static int put_event(struct conv *c, const struct tb_rd_event *e, const char *ph, const char *name_json,
		     const char *cat_json, uint32_t pid, uint32_t tid)
{
	const char *f = fields(c, e);
	if (!f)
		return -ENOMEM;
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":%s,\"ph\":\"%s\",%s", name_json, cat_json, ph,
		ph[0] == 'i' ? "\"s\":\"t\"," : "");
	put_ts(c, "ts", tb_rd_ns(e));
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{%s}}", pid, tid, f);
	return 0;
}

/* closes the top span of thread t at ns, with a note saying why */
static void put_close(struct conv *c, struct tstate *t, int64_t ns, const char *why)
{
	uint32_t b = t->stack[--t->depth];
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":%s,\"ph\":\"E\",", c->roles[b].span, c->roles[b].cat);
	put_ts(c, "ts", ns);
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"tracebuf_closed\":\"%s\"}}",
		(uint32_t)(t->key >> 32), (uint32_t)t->key, why);
}

static int convert_one(struct conv *c, const struct tb_rd_event *e)
{
	int kind = tb_rd_kind(e);
	if (kind != TB_RD_EVENT) {
		uint32_t cpu = tb_rd_cpu(e);
		if (!track(c, 0, cpu))
			return -ENOMEM;
		uint64_t n = tb_rd_count(e);
		sep(c);
		fprintf(c->out, "{\"name\":\"%s\",\"cat\":\"tracebuf\",\"ph\":\"i\",\"s\":\"t\",",
			kind == TB_RD_DISCARDED_EVENTS ? "tracebuf:discarded_events" : "tracebuf:discarded_packets");
		put_ts(c, "ts", tb_rd_ns(e));
		fprintf(c->out, ",\"pid\":0,\"tid\":%" PRIu32 ",\"args\":{\"count\":", cpu);
		if (n || kind == TB_RD_DISCARDED_PACKETS)
			fprintf(c->out, "%" PRIu64, n);
		else
			fputs("null", c->out);
		char *sj = jdup(tb_reader_stream_file(c->r, tb_rd_stream(e)), strlen(tb_reader_stream_file(c->r, tb_rd_stream(e))));
		fprintf(c->out, ",\"stream\":%s,", sj ? sj : "\"?\"");
		free(sj);
		int64_t end = tb_reader_ticks_to_ns(c->r, tb_rd_ticks_end(e));
		put_ts(c, "until_ts", end);
		fputs("}}", c->out);
		c->notices++;
		return 0;
	}
	c->events++;
	uint32_t pid = tb_rd_pid(e), tid = tb_rd_tid(e);
	if (!tid && !pid)
		tid = tb_rd_cpu(e); /* no thread record: the CPU's track of pseudo-process 0 */
	struct tstate *t = track(c, pid, tid);
	uint32_t id = tb_rd_id(e);
	if (!t || id >= c->nroles)
		return -ENOMEM;
	const struct role *ro = &c->roles[id];
	if (ro->kind == 1) {
		if (t->depth == STACK_MAX) {
			c->too_deep++;
		} else {
			if (t->depth == t->cap) {
				uint32_t cap = t->cap ? t->cap * 2 : 8;
				uint32_t *s = realloc(t->stack, cap * sizeof *s);
				if (!s)
					return -ENOMEM;
				t->stack = s;
				t->cap = cap;
			}
			t->stack[t->depth++] = id;
			c->begins++;
			return put_event(c, e, "B", ro->span, ro->cat, pid, tid);
		}
	} else if (ro->kind == 2) {
		uint32_t d = t->depth;
		while (d > 0 && t->stack[d - 1] != ro->pair)
			d--;
		if (d > 0 && ro->pair != UINT32_MAX) {
			while (t->depth > d) {
				put_close(c, t, tb_rd_ns(e), "by an outer end");
				c->closed_by_outer++;
			}
			t->depth--;
			c->ends++;
			return put_event(c, e, "E", ro->span, ro->cat, pid, tid);
		}
		c->unmatched++;
	}
	c->instants++;
	const char *name = tb_rd_name(e);
	char *nj = jdup(name, strlen(name));
	if (!nj)
		return -ENOMEM;
	int rc = put_event(c, e, "i", nj, ro->cat, pid, tid);
	free(nj);
	return rc;
}

static void on_diag(void *arg, const struct tb_rd_diag *d)
{
	if (!*(int *)arg)
		fprintf(stderr, "tracebuf convert: %s, offset %" PRIu64 ": %s\n", d->file, d->offset, d->what);
}

static void utc(char *buf, size_t cap, int64_t ns)
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

int cmd_convert(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "to", required_argument, 0, 't' },   { "output", required_argument, 0, 'o' },
		{ "absolute", no_argument, 0, 'a' },   { "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },       { 0, 0, 0, 0 },
	};
	const char *to = NULL, *outp = NULL;
	int quiet = 0, opt;
	struct conv c;
	memset(&c, 0, sizeof c);
	c.first = 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "t:o:qh", lo, NULL)) != -1) {
		switch (opt) {
		case 't': to = optarg; break;
		case 'o': outp = optarg; break;
		case 'a': c.absolute = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !to || !outp) {
		if (optind == argc - 1)
			cli_error("convert", "%s", !to ? "--to chrome is required" : "-o FILE is required");
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	if (strcmp(to, "chrome"))
		return cli_error("convert", "--to %s: the only output format is chrome", to), TB_EXIT_USAGE;
	const char *dir = argv[optind];
	struct tb_reader_opts ro = { .size = sizeof ro, .diag = on_diag, .diag_arg = &quiet };
	int rc = tb_reader_open(dir, &ro, &c.r);
	if (rc)
		return cli_error("convert", "%s", tb_errmsg());
	int to_stdout = !strcmp(outp, "-");
	c.out = to_stdout ? stdout : fopen(outp, "w");
	if (!c.out) {
		rc = cli_error("convert", "cannot create %s: %s", outp, strerror(errno));
		tb_reader_close(c.r);
		return rc;
	}
	static char obuf[1 << 20];
	setvbuf(c.out, obuf, _IOFBF, sizeof obuf);
	c.nroles = tb_reader_nclass_ids(c.r);
	c.roles = load_roles(c.r, c.nroles);
	c.fcap = 4096;
	c.fields = malloc(c.fcap);
	uint64_t t0, t1;
	tb_reader_time_range(c.r, &t0, &t1);
	c.origin_ns = tb_reader_ticks_to_ns(c.r, t0);
	int64_t end_ns = tb_reader_ticks_to_ns(c.r, t1);
	char when[64];
	utc(when, sizeof when, c.origin_ns);
	char *dj = jdup(dir, strlen(dir));
	fprintf(c.out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tracebuf_trace\":%s,\"time\":\"%s\","
		       "\"trace_start_ns\":%" PRId64 ",\"trace_start\":\"%s\",\"clock_freq\":%" PRIu64 "},\n"
		       "\"traceEvents\":[\n", dj ? dj : "\"?\"",
		c.absolute ? "absolute: ts in us since the Unix epoch" : "relative: ts in us since trace_start_ns",
		c.origin_ns, when, tb_reader_clock_freq(c.r));
	free(dj);
	rc = c.roles && c.fields ? 0 : -ENOMEM;
	const struct tb_rd_event *e;
	int64_t last_ns = c.origin_ns;
	while (!rc && tb_reader_next(c.r, &e) > 0) {
		rc = convert_one(&c, e);
		last_ns = tb_rd_ns(e);
	}
	if (end_ns < last_ns)
		end_ns = last_ns;
	/* spans still open: closed at the end of the trace, innermost first */
	for (size_t i = 0; !rc && i < c.threads.cap; i++) {
		struct tstate *t = &c.threads.v[i];
		if (t->key == UINT64_MAX)
			continue;
		while (t->depth) {
			put_close(&c, t, end_ns, "at the end of the trace");
			c.closed_at_end++;
		}
	}
	fprintf(c.out, "\n],\n\"tracebufSummary\":{\"events\":%" PRIu64 ",\"instants\":%" PRIu64 ",\"begins\":%" PRIu64
		       ",\"ends\":%" PRIu64 ",\"unmatched_ends\":%" PRIu64 ",\"closed_at_end\":%" PRIu64
		       ",\"closed_by_outer_end\":%" PRIu64 ",\"too_deep\":%" PRIu64 ",\"loss_notices\":%" PRIu64
		       ",\"diagnostics\":%" PRIu64 "}}\n",
		c.events, c.instants, c.begins, c.ends, c.unmatched, c.closed_at_end, c.closed_by_outer, c.too_deep,
		c.notices, tb_reader_ndiags(c.r));
	int werr = fflush(c.out) != 0 || ferror(c.out);
	if (!to_stdout && fclose(c.out))
		werr = 1;
	if (rc)
		cli_error("convert", "out of memory");
	else if (werr)
		rc = cli_error("convert", "write error on %s", to_stdout ? "standard output" : outp);
	else if (!quiet)
		fprintf(stderr, "tracebuf convert: %" PRIu64 " events -> %s: %" PRIu64 " spans, %" PRIu64 " instants, %" PRIu64
				" loss notices; %" PRIu64 " unmatched ends (kept as instants), %" PRIu64
				" spans closed at the trace end, %" PRIu64 " closed by an outer end%s\n",
			c.events, outp, c.begins, c.instants, c.notices, c.unmatched, c.closed_at_end, c.closed_by_outer,
			c.too_deep ? " (and begins nested too deep kept as instants)" : "");
	int partial = tb_reader_ndiags(c.r) != 0;
	for (uint32_t i = 0; c.roles && i < c.nroles; i++) {
		free(c.roles[i].span);
		free(c.roles[i].cat);
	}
	free(c.roles);
	for (size_t i = 0; i < c.threads.cap; i++)
		if (c.threads.v[i].key != UINT64_MAX)
			free(c.threads.v[i].stack);
	free(c.threads.v);
	free(c.procs.v);
	free(c.fields);
	tb_reader_close(c.r);
	if (rc)
		return TB_EXIT_FAIL;
	return partial ? TB_EXIT_PARTIAL : TB_EXIT_OK;
}
