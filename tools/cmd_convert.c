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
 *     since the Unix epoch (--absolute);
 *   - profile:sample events (traces of `tracebuf profile`) are instants named
 *     by their leaf function, cat "profile", the symbolised stack in args
 *     (cli_profile.c; one extra pass over the trace first reads the maps).
 *
 * `--to folded` writes the folded stacks of a profile trace instead, one
 * line "process;root;...;leaf COUNT" per distinct stack, sorted, for
 * flamegraph.pl and speedscope (docs/PROFILE-READING.md).
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
#include "cli_map.h"
#include "cli_profile.h"

#define STACK_MAX 1024u /* nesting depth per thread; deeper begins are instants */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf convert DIR --to chrome -o FILE.json [options]\n"
		"       tracebuf convert DIR --to folded [-o FILE]\n"
		"  chrome: the Chrome Trace Event format (a JSON object with \"traceEvents\")\n"
		"  for Perfetto UI (ui.perfetto.dev) and chrome://tracing.  One track per\n"
		"  thread; events are instants with their fields as args; NAME_begin ...\n"
		"  NAME_end on one thread (e.g. http:request_begin ... http:request_end)\n"
		"  become a span NAME, nested per thread; profile samples are instants named\n"
		"  by their leaf function with the symbolised stack in args.\n"
		"  folded: the samples of a `tracebuf profile` trace as folded stacks\n"
		"  (\"process;root;...;leaf COUNT\" per line) for flamegraph.pl, speedscope.\n\n"
		"  --to chrome|folded   output format\n"
		"  -o, --output FILE    output file ('-': standard output; folded: the default)\n"
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
	uint64_t key; /* pid << 32 | tid */
	uint32_t *stack, depth, cap;
};

struct conv {
	struct tb_reader *r;
	FILE *out;
	int absolute;
	int64_t origin_ns;
	struct role *roles;
	uint32_t nroles;
	struct cli_table threads, procs; /* struct tstate by (pid, tid) / (pid, 0) */
	char *fields;
	size_t fcap;
	int first;
	struct prof *prof;        /* a profile trace: samples are symbolised; else NULL */
	struct prof_sample *ps;
	char *sbuf;               /* JSON of the labels of a stack */
	size_t scap;
	/* counts */
	uint64_t events, instants, begins, ends, unmatched, closed_at_end, closed_by_outer, too_deep, notices;
	uint64_t samples, invalid_samples;
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
	struct tstate *t = cli_table_get(&c->threads, pid, tid, &isnew);
	if (!t || !isnew)
		return t;
	t->key = (uint64_t)pid << 32 | tid;
	char buf[128], nb[160];
	const char *pn = pid ? cli_proc_name(c->r, pid, buf, sizeof buf) : "no thread record";
	struct tstate *p = cli_table_get(&c->procs, pid, 0, &isnew);
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

/* appends s (n bytes) to c->sbuf at *o */
static int sput(struct conv *c, size_t *o, const char *s, size_t n)
{
	if (*o + n + 1 > c->scap) {
		size_t cap = 2 * (*o + n + 1);
		char *b = realloc(c->sbuf, cap);
		if (!b)
			return -ENOMEM;
		c->sbuf = b;
		c->scap = cap;
	}
	memcpy(c->sbuf + *o, s, n);
	*o += n;
	c->sbuf[*o] = 0;
	return 0;
}

/* the JSON array of a field of the frames (labels or modules) of sample s */
static const char *frames_json(struct conv *c, const struct prof_sample *s, int modules)
{
	size_t o = 0;
	if (sput(c, &o, "[", 1))
		return NULL;
	for (uint32_t j = 0; j < s->n; j++) {
		const struct prof_fn *f = prof_fn(c->prof, s->fid[j]);
		const char *v = modules ? (f->module ? f->module : "") : f->label;
		char *q = jdup(v, strlen(v));
		int rc = !q || (j && sput(c, &o, ",", 1)) || sput(c, &o, q, strlen(q));
		free(q);
		if (rc)
			return NULL;
	}
	return sput(c, &o, "]", 1) ? NULL : c->sbuf;
}

/* a profile:sample: an instant named by its leaf function, the stack (innermost first) in args */
static int put_sample(struct conv *c, const struct tb_rd_event *e, const struct prof_sample *s, uint32_t pid,
		      uint32_t tid)
{
	c->samples++;
	c->instants++;
	char *name;
	if (s->invalid) {
		c->invalid_samples++;
		name = strdup("\"[invalid pc]\"");
	} else {
		const char *l = prof_fn(c->prof, s->fid[0])->label;
		name = jdup(l, strlen(l));
	}
	if (!name)
		return -ENOMEM;
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":\"profile\",\"ph\":\"i\",\"s\":\"t\",", name);
	free(name);
	put_ts(c, "ts", tb_rd_ns(e));
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{", pid, tid);
	if (s->invalid) {
		fprintf(c->out, "\"invalid\":\"%s\",", s->invalid == PROF_PC_ZERO ? "PC 0" : "PC in no recorded mapping");
	} else {
		const char *j = frames_json(c, s, 0);
		if (!j)
			return -ENOMEM;
		fprintf(c->out, "\"stack\":%s,", j);
		if (!(j = frames_json(c, s, 1)))
			return -ENOMEM;
		fprintf(c->out, "\"modules\":%s,", j);
	}
	fprintf(c->out, "\"pc\":\"0x%" PRIx64 "\",\"flags\":%" PRIu32 ",\"overrun\":%" PRIu32 "}}", s->pc, s->flags,
		s->overrun);
	return 0;
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
		if (kind == TB_RD_DISCARDED_EVENTS && n && tb_rd_lost(e, 0) != UINT64_MAX)
			for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
				if (tb_rd_lost(e, k))
					fprintf(c->out, ",\"lost_%s\":%" PRIu64, tb_rd_loss_name(k), tb_rd_lost(e, k));
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
	if (c->prof) {
		int k = prof_event(c->prof, e, c->ps);
		if (k)
			return k < 0 ? k : put_sample(c, e, c->ps, pid, tid);
	}
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

/* ---------------------------------------------------------------------- */
/* --to folded                                                             */

/* a frame or process name in a folded line: ';' separates frames, a line is one stack */
static int fput(char **buf, size_t *cap, size_t *o, const char *s, int raw)
{
	size_t n = strlen(s);
	if (*o + n + 2 > *cap) {
		size_t c2 = 2 * (*o + n + 2);
		char *b = realloc(*buf, c2);
		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = c2;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		(*buf)[(*o)++] = !raw && (ch == ';' || ch == '\n' || ch == '\r') ? '_' : ch;
	}
	(*buf)[*o] = 0;
	return 0;
}

static const char **cmp_keys;
static int cmp_folded(const void *a, const void *b)
{
	return strcmp(cmp_keys[*(const size_t *)a], cmp_keys[*(const size_t *)b]);
}

static int convert_folded(struct tb_reader *r, const char *dir, const char *outp, int quiet)
{
	struct prof *p = prof_open(r, "convert", quiet);
	struct prof_sample *s = malloc(sizeof *s);
	struct prof_stab stacks = { 0 };
	char *line = NULL;
	size_t lcap = 0;
	uint64_t nsamples = 0, invalid = 0;
	int rc = 0;
	if (!p || !s) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	if (!prof_present(p)) {
		rc = cli_error("convert", "%s has no profile:sample events: --to folded needs a trace written by "
					  "`tracebuf profile`", dir);
		goto out;
	}
	if (prof_load(p)) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	const struct tb_rd_event *e;
	while (tb_reader_next(r, &e) > 0) {
		int k = prof_event(p, e, s);
		if (k < 0) {
			rc = cli_error("convert", "out of memory");
			goto out;
		}
		if (!k)
			continue;
		nsamples++;
		if (s->invalid) {
			invalid++;
			continue;
		}
		/* root first: the process, then the outermost frame ... the leaf */
		const struct prof_proc *q = prof_proc_of(p, s->pid);
		size_t o = 0;
		int bad = fput(&line, &lcap, &o, q ? q->name : "?", 0);
		for (uint32_t j = s->n; !bad && j-- > 0;)
			bad = fput(&line, &lcap, &o, ";", 1) || fput(&line, &lcap, &o, prof_fn(p, s->fid[j])->label, 0);
		uint64_t *v = bad ? NULL : prof_sget(&stacks, line, 1);
		if (!v) {
			rc = cli_error("convert", "out of memory");
			goto out;
		}
		*v += s->weight;
	}
	const char **keys;
	uint64_t *vals;
	size_t n = prof_sitems(&stacks, &keys, &vals);
	size_t *ord = malloc((n ? n : 1) * sizeof *ord);
	if (!ord || (stacks.n && !n)) {
		free(ord);
		free(keys);
		free(vals);
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	cmp_keys = keys;
	qsort(ord, n, sizeof *ord, cmp_folded);
	int to_stdout = !strcmp(outp, "-");
	FILE *f = to_stdout ? stdout : fopen(outp, "w");
	if (!f) {
		rc = cli_error("convert", "cannot create %s: %s", outp, strerror(errno));
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s %" PRIu64 "\n", keys[ord[i]], vals[ord[i]]);
		int werr = fflush(f) != 0 || ferror(f);
		if (!to_stdout && fclose(f))
			werr = 1;
		if (werr)
			rc = cli_error("convert", "write error on %s", to_stdout ? "standard output" : outp);
		else if (!quiet)
			fprintf(stderr, "tracebuf convert: %" PRIu64 " samples -> %s: %zu distinct stacks; %" PRIu64
					" with an invalid PC left out\n", nsamples, to_stdout ? "standard output" : outp, n, invalid);
	}
	free(ord);
	free(keys);
	free(vals);
	if (!rc && tb_reader_ndiags(r))
		rc = TB_EXIT_PARTIAL;
out:
	free(line);
	prof_sfree(&stacks);
	free(s);
	prof_close(p);
	return rc;
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
	c.threads = (struct cli_table)CLI_TABLE_INIT(struct tstate);
	c.procs = (struct cli_table)CLI_TABLE_INIT(struct tstate);
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
	int folded = to && !strcmp(to, "folded");
	if (folded && !outp)
		outp = "-";
	if (to && strcmp(to, "chrome") && !folded)
		return cli_error("convert", "--to %s: the output formats are chrome and folded", to), TB_EXIT_USAGE;
	if (optind != argc - 1 || !to || !outp) {
		if (optind == argc - 1)
			cli_error("convert", "%s", !to ? "--to chrome is required" : "-o FILE is required");
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	const char *dir = argv[optind];
	struct tb_reader_opts ro = { .size = sizeof ro, .diag = on_diag, .diag_arg = &quiet };
	int rc = tb_reader_open(dir, &ro, &c.r);
	if (rc)
		return cli_error("convert", "%s", tb_errmsg());
	if (folded) {
		rc = convert_folded(c.r, dir, outp, quiet);
		tb_reader_close(c.r);
		return rc;
	}
	/* a profile trace: samples are symbolised, which needs its maps first (one more pass) */
	c.prof = prof_open(c.r, "convert", quiet);
	c.ps = malloc(sizeof *c.ps);
	if (!c.prof || !c.ps || (prof_present(c.prof) && prof_load(c.prof))) {
		prof_close(c.prof);
		free(c.ps);
		tb_reader_close(c.r);
		return cli_error("convert", "out of memory");
	}
	if (!prof_present(c.prof)) {
		prof_close(c.prof);
		c.prof = NULL;
	}
	int to_stdout = !strcmp(outp, "-");
	c.out = to_stdout ? stdout : fopen(outp, "w");
	if (!c.out) {
		rc = cli_error("convert", "cannot create %s: %s", outp, strerror(errno));
		prof_close(c.prof);
		free(c.ps);
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
	for (size_t i = 0; !rc && i < c.threads.n; i++) {
		struct tstate *t = cli_table_at(&c.threads, i);
		while (t->depth) {
			put_close(&c, t, end_ns, "at the end of the trace");
			c.closed_at_end++;
		}
	}
	fprintf(c.out, "\n],\n\"tracebufSummary\":{\"events\":%" PRIu64 ",\"instants\":%" PRIu64 ",\"begins\":%" PRIu64
		       ",\"ends\":%" PRIu64 ",\"unmatched_ends\":%" PRIu64 ",\"closed_at_end\":%" PRIu64
		       ",\"closed_by_outer_end\":%" PRIu64 ",\"too_deep\":%" PRIu64 ",\"loss_notices\":%" PRIu64
		       ",\"diagnostics\":%" PRIu64,
		c.events, c.instants, c.begins, c.ends, c.unmatched, c.closed_at_end, c.closed_by_outer, c.too_deep,
		c.notices, tb_reader_ndiags(c.r));
	if (c.prof)
		fprintf(c.out, ",\"profile_samples\":%" PRIu64 ",\"profile_samples_invalid_pc\":%" PRIu64, c.samples,
			c.invalid_samples);
	fputs("}}\n", c.out);
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
	if (!rc && !werr && !quiet && c.prof)
		fprintf(stderr, "tracebuf convert: %" PRIu64 " profile samples as instants named by their leaf function "
				"(%" PRIu64 " with an invalid PC)\n", c.samples, c.invalid_samples);
	int partial = tb_reader_ndiags(c.r) != 0;
	for (uint32_t i = 0; c.roles && i < c.nroles; i++) {
		free(c.roles[i].span);
		free(c.roles[i].cat);
	}
	free(c.roles);
	for (size_t i = 0; i < c.threads.n; i++)
		free(((struct tstate *)cli_table_at(&c.threads, i))->stack);
	cli_table_free(&c.threads);
	cli_table_free(&c.procs);
	free(c.fields);
	free(c.sbuf);
	free(c.ps);
	prof_close(c.prof);
	tb_reader_close(c.r);
	if (rc)
		return TB_EXIT_FAIL;
	return partial ? TB_EXIT_PARTIAL : TB_EXIT_OK;
}
