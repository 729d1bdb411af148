/* SPDX-License-Identifier: MIT */
/*
 * convert_chrome.c - `tracebuf convert DIR --to chrome -o FILE.json`: the
 * Chrome Trace Event format that Perfetto UI and chrome://tracing open.
 *
 * Streamed: one merged pass over the trace, each event written as it is
 * read; memory is per thread (its stack of open spans) and per process.
 *
 *   - one track per thread (pid/tid), named by `process_name`/`thread_name`
 *     metadata events emitted when a pid/tid is first seen (process names
 *     from the metadata env, thread names "tid N" until traces record them:
 *     cv_thread_name); events without a thread record go to pseudo-process
 *     0, one track per CPU;
 *   - events are instants (ph "i", scope "t") with their fields as args;
 *     integers outside +-2^53 are strings (JavaScript parses numbers as
 *     doubles, which would change them);
 *   - spans: NAME_begin ... NAME_end on one thread (cli_convert.h) become
 *     ph "B" / "E", nested with a stack per thread; spans closed by an outer
 *     end or at the end of the trace, unmatched ends and begins nested too
 *     deep are counted;
 *   - discard notices are instants tracebuf:discarded_events /
 *     tracebuf:discarded_packets on the CPU track of pseudo-process 0;
 *   - "ts" in microseconds with 3 decimals (ns precision), relative to the
 *     trace start (default; otherData.trace_start_ns says when that is) or
 *     since the Unix epoch (--absolute);
 *   - --begin/--end/--max-events: only part of the trace; otherData.cut
 *     and a line on stderr say what was left out;
 *   - the kernel's system calls (record --kernel=syscalls: syscall_entry /
 *     syscall_exit of a kernel stream) are slices on the calling thread's
 *     track (its tid and pid fields), named by the call, cat "syscall":
 *     an exit without its entry (a call entered before the trace) is an
 *     instant, an entry without its exit is closed where the thread next
 *     shows an event or at the end; the other kernel events are instants
 *     on the CPU's track;
 *   - profile:sample events (traces of `tracebuf profile`) are instants
 *     named by their leaf function, cat "profile", the symbolised stack in
 *     args (cli_profile.c; one extra pass over the trace first reads the
 *     maps).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_convert.h"
#include "cli_map.h"
#include "cli_profile.h"

struct tstate {
	uint64_t key; /* pid << 32 | tid */
	struct cv_stack st;
	char *call;   /* the JSON name of its open system call slice, NULL: none */
};

struct conv {
	struct tb_reader *r;
	const struct cv_opts *o;
	FILE *out;
	int64_t origin_ns;
	struct cv_roles roles;
	struct cli_table threads, procs; /* struct tstate by (pid, tid) / (pid, 0) */
	char *fields;
	size_t fcap;
	int first;
	struct prof *prof; /* a profile trace: samples are symbolised; else NULL */
	struct prof_sample *ps;
	char *sbuf; /* JSON of the labels of a stack */
	size_t scap;
	/* counts */
	uint64_t events, instants, begins, ends, unmatched, closed_at_end, closed_by_outer, too_deep, notices;
	uint64_t samples, invalid_samples;
	int8_t *sys;      /* per class id: 1 syscall_entry, 2 syscall_exit of a kernel stream, 0 none, -1 not looked */
	uint32_t nsys;
	uint64_t calls, calls_unclosed, exits_alone;
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
	__int128 v = c->o->absolute ? ns : (__int128)ns - c->origin_ns;
	const char *sign = "";
	if (v < 0) {
		sign = "-";
		v = -v;
	}
	fprintf(c->out, "\"%s\":%s%" PRIu64 ".%03d", key, sign, (uint64_t)(v / 1000), (int)(v % 1000));
}

static void put_name_meta(struct conv *c, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	char *j = cv_jdup(name, strlen(name));
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
	char nb[160];
	struct tstate *p = cli_table_get(&c->procs, pid, 0, &isnew);
	if (!p)
		return NULL;
	if (isnew)
		put_name_meta(c, "process_name", pid, 0, cv_process_name(c->r, pid, nb, sizeof nb));
	if (!pid)
		snprintf(nb, sizeof nb, "cpu %" PRIu32, tid);
	else
		cv_thread_name(c->r, pid, tid, nb, sizeof nb);
	put_name_meta(c, "thread_name", pid, tid, nb);
	return t; /* procs is another table: t did not move */
}

static int put_event(struct conv *c, const struct tb_rd_event *e, const char *ph, const char *name_json,
		     const char *cat_json, uint32_t pid, uint32_t tid)
{
	const char *f = cv_fields_json(e, &c->fields, &c->fcap);
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
	uint32_t b = cv_stack_pop(&t->st);
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":%s,\"ph\":\"E\",", c->roles.r[b].span_json, c->roles.r[b].cat_json);
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
		char *q = cv_jdup(v, strlen(v));
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
		name = cv_jdup(l, strlen(l));
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

static int put_notice(struct conv *c, const struct tb_rd_event *e)
{
	int kind = tb_rd_kind(e);
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
	const char *sf = tb_reader_stream_file(c->r, tb_rd_stream(e));
	char *sj = cv_jdup(sf, strlen(sf));
	fprintf(c->out, ",\"stream\":%s,", sj ? sj : "\"?\"");
	free(sj);
	put_ts(c, "until_ts", tb_reader_ticks_to_ns(c->r, tb_rd_ticks_end(e)));
	fputs("}}", c->out);
	c->notices++;
	return 0;
}

/* closes thread t's open system call slice at ns, with a note saying why (NULL: its exit) */
static void close_call(struct conv *c, struct tstate *t, int64_t ns, const char *why)
{
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":\"syscall\",\"ph\":\"E\",", t->call);
	put_ts(c, "ts", ns);
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{", (uint32_t)(t->key >> 32), (uint32_t)t->key);
	if (why) {
		fprintf(c->out, "\"tracebuf_closed\":\"%s\"", why);
		c->calls_unclosed++;
	}
	fputs("}}", c->out);
	free(t->call);
	t->call = NULL;
}

/* 1 entry, 2 exit: a system call event of a kernel stream; 0 any other */
static int sys_kind(struct conv *c, const struct tb_rd_event *e)
{
	uint32_t id = tb_rd_id(e);
	if (id >= c->nsys)
		return 0;
	if (c->sys[id] < 0) {
		const char *n = tb_rd_name(e), *sf = tb_reader_stream_file(c->r, tb_rd_stream(e));
		int k = !n || !sf || strncmp(sf, "kernel_cpu", 10) ? 0 : !strcmp(n, "syscall_entry") ? 1 : !strcmp(n, "syscall_exit") ? 2 : 0;
		c->sys[id] = (int8_t)k;
	}
	return c->sys[id];
}

/* a syscall_entry / syscall_exit: a slice on the calling thread's track */
static int put_call(struct conv *c, const struct tb_rd_event *e, int kind)
{
	int ti = tb_rd_field_index(e, "tid"), pi = tb_rd_field_index(e, "pid"), ni = tb_rd_field_index(e, "name");
	if (ti < 0 || pi < 0)
		return 1; /* not the layout tracebuf writes: an instant like any kernel event */
	uint32_t tid = (uint32_t)tb_rd_i64(e, (unsigned)ti), pid = (uint32_t)tb_rd_i64(e, (unsigned)pi);
	struct tstate *t = track(c, pid, tid);
	if (!t)
		return -ENOMEM;
	char nb[48];
	size_t len = 0;
	const char *nm = ni < 0 ? NULL : tb_rd_str(e, (unsigned)ni, &len);
	if (!nm || !len) {
		int ii = tb_rd_field_index(e, "id");
		snprintf(nb, sizeof nb, "syscall_%" PRId64, ii < 0 ? (int64_t)-1 : tb_rd_i64(e, (unsigned)ii));
		nm = nb;
		len = strlen(nb);
	}
	char *j = cv_jdup(nm, len);
	if (!j)
		return -ENOMEM;
	const char *f = cv_fields_json(e, &c->fields, &c->fcap);
	if (!f) {
		free(j);
		return -ENOMEM;
	}
	if (kind == 2 && t->call) {
		close_call(c, t, tb_rd_ns(e), NULL);
		free(j);
		return 0;
	}
	if (t->call) /* an entry whose exit was lost */
		close_call(c, t, tb_rd_ns(e), "by the next entry");
	sep(c);
	fprintf(c->out, "{\"name\":%s,\"cat\":\"syscall\",\"ph\":\"%s\",%s", j, kind == 1 ? "B" : "i",
		kind == 1 ? "" : "\"s\":\"t\",");
	put_ts(c, "ts", tb_rd_ns(e));
	fprintf(c->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{%s}}", pid, tid, f);
	if (kind == 1) {
		t->call = j;
		c->calls++;
	} else {
		free(j);
		c->exits_alone++;
	}
	return 0;
}

static int convert_one(struct conv *c, const struct tb_rd_event *e)
{
	if (tb_rd_kind(e) != TB_RD_EVENT)
		return put_notice(c, e);
	c->events++;
	int sk = sys_kind(c, e);
	if (sk) {
		int k = put_call(c, e, sk);
		if (k <= 0)
			return k;
	}
	uint32_t pid = tb_rd_pid(e), tid = tb_rd_tid(e);
	if (!tid && !pid)
		tid = tb_rd_cpu(e); /* no thread record: the CPU's track of pseudo-process 0 */
	struct tstate *t = track(c, pid, tid);
	if (!t)
		return -ENOMEM;
	if (t->call) /* the thread is back in user space: the call's exit was lost */
		close_call(c, t, tb_rd_ns(e), "by the thread's next event");
	if (c->prof) {
		int k = prof_event(c->prof, e, c->ps);
		if (k)
			return k < 0 ? k : put_sample(c, e, c->ps, pid, tid);
	}
	uint32_t id = tb_rd_id(e), inner = 0;
	const struct cv_role *ro = id < c->roles.n ? &c->roles.r[id] : NULL;
	switch (ro ? cv_span_step(&c->roles, &t->st, id, &inner) : CV_INSTANT) {
	case CV_BEGIN:
		c->begins++;
		return put_event(c, e, "B", ro->span_json, ro->cat_json, pid, tid);
	case CV_END:
		for (; inner; inner--) {
			put_close(c, t, tb_rd_ns(e), "by an outer end");
			c->closed_by_outer++;
		}
		cv_stack_pop(&t->st);
		c->ends++;
		return put_event(c, e, "E", ro->span_json, ro->cat_json, pid, tid);
	case CV_UNMATCHED: c->unmatched++; break;
	case CV_TOO_DEEP: c->too_deep++; break;
	case CV_INSTANT: break;
	default: return -ENOMEM;
	}
	c->instants++;
	return put_event(c, e, "i", ro ? ro->name_json : "\"?\"", ro ? ro->cat_json : "\"\"", pid, tid);
}

int convert_chrome(struct tb_reader *r, const struct cv_opts *o)
{
	struct conv c;
	memset(&c, 0, sizeof c);
	c.r = r;
	c.o = o;
	c.threads = (struct cli_table)CLI_TABLE_INIT(struct tstate);
	c.procs = (struct cli_table)CLI_TABLE_INIT(struct tstate);
	c.first = 1;
	/* a profile trace: samples are symbolised, which needs its maps first (one more pass) */
	c.prof = prof_open(r, "convert", o->quiet);
	c.ps = malloc(sizeof *c.ps);
	int rc = 0;
	c.nsys = tb_reader_nclass_ids(r);
	c.sys = malloc(c.nsys ? c.nsys : 1);
	if (c.sys)
		memset(c.sys, -1, c.nsys ? c.nsys : 1);
	if (!c.sys || !c.prof || !c.ps || (prof_present(c.prof) && prof_load(c.prof)) || cv_roles_load(&c.roles, r)) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	if (!prof_present(c.prof)) {
		prof_close(c.prof);
		c.prof = NULL;
	}
	if (!(c.out = cv_open_out(o))) {
		rc = TB_EXIT_FAIL;
		goto out;
	}
	uint64_t t0, t1;
	tb_reader_time_range(r, &t0, &t1);
	c.origin_ns = tb_reader_ticks_to_ns(r, t0);
	int64_t end_ns = tb_reader_ticks_to_ns(r, t1);
	char when[64];
	cv_utc(when, sizeof when, c.origin_ns);
	char *dj = cv_jdup(o->dir, strlen(o->dir));
	fprintf(c.out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tracebuf_trace\":%s,\"time\":\"%s\","
		       "\"trace_start_ns\":\"%" PRId64 "\",\"trace_start\":\"%s\",\"clock_freq\":%" PRIu64 "},\n"
		       "\"traceEvents\":[\n", dj ? dj : "\"?\"",
		o->absolute ? "absolute: ts in us since the Unix epoch" : "relative: ts in us since trace_start_ns",
		c.origin_ns, when, tb_reader_clock_freq(r));
	free(dj);
	struct cv_window w;
	cv_window_start(&w, r, o);
	const struct tb_rd_event *e;
	int64_t last_ns = c.origin_ns;
	while (!rc && cli_next(r, &e) > 0) {
		int k = cv_window_take(&w, e);
		if (k < 0)
			break;
		if (!k)
			continue;
		rc = convert_one(&c, e);
		last_ns = tb_rd_ns(e);
	}
	if (w.cut) {
		cv_window_drain(&w, r);
		end_ns = last_ns; /* spans still open end where the file ends */
	}
	if (end_ns < last_ns)
		end_ns = last_ns;
	/* thread names as they are at the end (a thread renamed after its first
	 * event: the viewers take the last thread_name of a tid) */
	for (size_t i = 0; !rc && i < c.threads.n; i++) {
		const struct tstate *t = cli_table_at(&c.threads, i);
		uint32_t pid = (uint32_t)(t->key >> 32), tid = (uint32_t)t->key;
		const char *tn = pid ? tb_reader_thread_name(r, tid) : NULL;
		if (tn)
			put_name_meta(&c, "thread_name", pid, tid, tn);
	}
	/* spans still open: closed at the end of the trace (or of the window), innermost first */
	for (size_t i = 0; !rc && i < c.threads.n; i++) {
		struct tstate *t = cli_table_at(&c.threads, i);
		if (t->call)
			close_call(&c, t, end_ns, w.cut ? "where the file was cut" : "at the end of the trace");
		while (t->st.depth) {
			put_close(&c, t, end_ns, w.cut ? "where the file was cut" : "at the end of the trace");
			c.closed_at_end++;
		}
	}
	char note[512];
	cv_window_note(&w, note, sizeof note);
	fprintf(c.out, "\n],\n\"tracebufSummary\":{\"events\":%" PRIu64 ",\"instants\":%" PRIu64 ",\"begins\":%" PRIu64
		       ",\"ends\":%" PRIu64 ",\"unmatched_ends\":%" PRIu64 ",\"closed_at_end\":%" PRIu64
		       ",\"closed_by_outer_end\":%" PRIu64 ",\"too_deep\":%" PRIu64 ",\"loss_notices\":%" PRIu64
		       ",\"diagnostics\":%" PRIu64,
		c.events, c.instants, c.begins, c.ends, c.unmatched, c.closed_at_end, c.closed_by_outer, c.too_deep,
		c.notices, tb_reader_ndiags(r));
	if (c.prof)
		fprintf(c.out, ",\"profile_samples\":%" PRIu64 ",\"profile_samples_invalid_pc\":%" PRIu64, c.samples,
			c.invalid_samples);
	if (c.calls || c.exits_alone)
		fprintf(c.out, ",\"syscalls\":%" PRIu64 ",\"syscalls_closed_without_exit\":%" PRIu64
			       ",\"syscall_exits_without_entry\":%" PRIu64,
			c.calls, c.calls_unclosed, c.exits_alone);
	if (note[0]) {
		char *nj = cv_jdup(note, strlen(note));
		fprintf(c.out, ",\"cut\":%s,\"events_before_window\":%" PRIu64 ",\"events_after_window\":%" PRIu64,
			nj ? nj : "\"cut\"", w.before, w.after);
		free(nj);
	}
	fputs("}}\n", c.out);
	int crc = cv_close_out(o, c.out);
	if (rc) {
		rc = cli_error("convert", "out of memory");
	} else if (crc) {
		rc = crc;
	} else if (!o->quiet) {
		cli_msg(stderr, "tracebuf convert: %" PRIu64 " event%s -> %s: %" PRIu64 " span%s, %" PRIu64 " instant%s, %" PRIu64
				" loss notice%s; %" PRIu64 " unmatched end%s (kept as instants), %" PRIu64
				" span%s closed at the trace end, %" PRIu64 " closed by an outer end%s",
			c.events, cli_s(c.events), cv_out_name(o), c.begins, cli_s(c.begins), c.instants, cli_s(c.instants),
			c.notices, cli_s(c.notices), c.unmatched, cli_s(c.unmatched), c.closed_at_end, cli_s(c.closed_at_end),
			c.closed_by_outer, c.too_deep ? " (and begins nested too deep kept as instants)" : "");
		if (c.calls || c.exits_alone)
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " system call%s as slices on their threads' tracks (%" PRIu64
					" without their exit, closed at the thread's next event or the end; %" PRIu64
					" exit%s without their entry, as instants)",
				c.calls, cli_s(c.calls), c.calls_unclosed, c.exits_alone, cli_s(c.exits_alone));
		if (c.prof)
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " profile sample%s as instants named by their leaf "
					"function (%" PRIu64 " with an invalid PC)", c.samples, cli_s(c.samples), c.invalid_samples);
		if (note[0])
			cli_msg(stderr, "tracebuf convert: %s", note);
	}
out:
	cv_roles_free(&c.roles);
	for (size_t i = 0; i < c.threads.n; i++) {
		free(((struct tstate *)cli_table_at(&c.threads, i))->st.s);
		free(((struct tstate *)cli_table_at(&c.threads, i))->call);
	}
	free(c.sys);
	cli_table_free(&c.threads);
	cli_table_free(&c.procs);
	free(c.fields);
	free(c.sbuf);
	free(c.ps);
	prof_close(c.prof);
	return rc;
}
