/* SPDX-License-Identifier: MIT */
/*
 * record_flight.c - the flight recorder's part of `tracebuf record`
 * (record_flight.h): its options, its log on stderr, the signal and the
 * crash of CMD turned into triggers, its summary.  docs/FLIGHT-RECORDER.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "cli_crash.h"
#include "consumer/flight.h"
#include "record_flight.h"

static int usage(const char *fmt, const char *arg)
{
	return cli_usage("record", fmt, arg);
}

/* USR1, SIGUSR2, RTMIN+3, or a number naming one of them */
static int parse_signal(const char *a)
{
	if (!strncmp(a, "SIG", 3))
		a += 3;
	if (!strcmp(a, "USR1"))
		return SIGUSR1;
	if (!strcmp(a, "USR2"))
		return SIGUSR2;
	uint64_t v;
	if (!strncmp(a, "RTMIN", 5)) {
		if (!a[5])
			return SIGRTMIN;
		if (a[5] == '+' && cli_parse_uint(a + 6, 64, &v) == 0 && SIGRTMIN + (int)v <= SIGRTMAX)
			return SIGRTMIN + (int)v;
		return -1;
	}
	if (cli_parse_uint(a, 64, &v) == 0 &&
	    ((int)v == SIGUSR1 || (int)v == SIGUSR2 || ((int)v >= SIGRTMIN && (int)v <= SIGRTMAX)))
		return (int)v;
	return -1;
}

/* a condition refused: the text, the place (a caret under it) and why */
static int bad_cond(const char *arg, unsigned pos, const char *why)
{
	cli_msg(stderr, "tracebuf record: --snapshot-on '%s': at position %u: %s", arg, pos + 1, why);
	/* the condition as the message shows it (escaped), the caret under the same character */
	fputs("  ", stderr);
	cli_puttx(stderr, arg);
	fprintf(stderr, "\n  %*s^\n", (int)cli_caret(arg, pos), "");
	fprintf(stderr, "(a condition is 'provider:event[field>=500 && (name==\"x\" || ms>0.25)]' or 'provider:span>10ms'; "
			"tracebuf record --help)\n");
	return TB_EXIT_USAGE;
}

int record_flight_option(struct record_flight_opts *fo, int opt, const char *arg)
{
	fo->given = 1;
	switch (opt) {
	case OPT_SNAPSHOT_DIR:
		if (!*arg)
			return usage("--snapshot-dir '%s': give a directory", arg);
		fo->dir = arg;
		return 0;
	case OPT_AFTER:
		if (cli_parse_duration(arg, &fo->after_ns) < 0 || fo->after_ns > 3600000000000ull)
			return usage("--after %s: want a duration up to 1h (e.g. 200ms, 2s; " CLI_DURATION_UNITS "; 0: none)", arg);
		return 0;
	case OPT_MIN_INTERVAL:
		if (cli_parse_duration(arg, &fo->min_interval_ns) < 0)
			return usage("--min-interval %s: want a duration (e.g. 10s, 500ms; " CLI_DURATION_UNITS "; at most 100000h; 0: no limit)", arg);
		return 0;
	case OPT_MAX_SNAPSHOTS:
		if (cli_parse_uint(arg, UINT32_MAX, &fo->max_snapshots) < 0)
			return usage("--max-snapshots %s: want a count (0: no limit)", arg);
		return 0;
	case OPT_MAX_SIZE:
		if (cli_parse_size(arg, &fo->max_size) < 0)
			return usage("--max-size %s: want a size such as 512M or 2G (0: no limit)", arg);
		return 0;
	case OPT_SNAPSHOT_ON_SIGNAL:
		if ((fo->signo = parse_signal(arg)) < 0)
			return usage("--snapshot-on-signal %s: want USR1, USR2 or RTMIN+N (the others are forwarded to "
				     "the command or end the recording)", arg);
		return 0;
	case OPT_SNAPSHOT_ON: {
		struct tb_flight_cond c;
		unsigned pos;
		const char *why;
		if (tb_flight_cond_parse(arg, &c, &pos, &why) < 0)
			return bad_cond(arg, pos, why);
		if (fo->nconds == sizeof fo->conds / sizeof fo->conds[0])
			return usage("--snapshot-on %s: at most 16 conditions", arg);
		fo->conds[fo->nconds++] = arg;
		return 0;
	}
	case OPT_SCAN_PERIOD:
		if (cli_parse_duration(arg, &fo->scan_period_ns) < 0 || fo->scan_period_ns < 1000000ull ||
		    fo->scan_period_ns > 1000000000ull)
			return usage("--scan-period %s: want a duration from 1ms to 1s (e.g. 5ms; " CLI_DURATION_UNITS ")", arg);
		return 0;
	case OPT_NO_SNAPSHOT_ON_CRASH: fo->no_crash = 1; return 0;
	case OPT_SNAPSHOT_ON_FAILURE: fo->on_failure = 1; return 0;
	}
	return usage("%s", "unknown option");
}

int record_flight_check(const struct record_flight_opts *fo, const struct tb_channel_opts *chan, unsigned nchan,
			int attach)
{
	if (!fo->given)
		return 0;
	if (!fo->dir)
		return usage("%s", "--after, --min-interval, --max-snapshots, --max-size, --scan-period and --snapshot-on-* "
				   "configure a flight recorder: give --snapshot-dir DIR");
	if (fo->scan_period_ns && !fo->nconds)
		return usage("%s", "--scan-period sets how often --snapshot-on conditions are checked: give --snapshot-on COND");
	if (attach)
		return usage("%s", "--snapshot-dir runs with a command (record --mode overwrite --snapshot-dir DIR -- CMD); "
				   "with --attach, use tracebuf snapshot");
	for (unsigned i = 0; i < nchan; i++)
		if (chan[i].mode != TB_OVERWRITE)
			return usage("--snapshot-dir: channel '%s' is not in overwrite mode; a flight recorder keeps "
				     "the last moments in overwrite rings: give --mode overwrite",
				     chan[i].name ? chan[i].name : "chan");
	return 0;
}

/* The fields of a tracebuf_events entry, "{(u32, id), (str, path), (enum,
 * e, (A, B))}", as the registry would describe them: their count, or -1 when
 * the text does not parse (then nothing is checked against that class). */
static int entry_fields(const char *t, struct tb_field_desc *f)
{
	static const struct { const char *n; uint32_t ft; } types[] = {
		{ "u8", TB_FT_U8 },   { "u16", TB_FT_U16 },   { "u32", TB_FT_U32 },     { "u64", TB_FT_U64 },
		{ "i8", TB_FT_I8 },   { "i16", TB_FT_I16 },   { "i32", TB_FT_I32 },     { "i64", TB_FT_I64 },
		{ "f64", TB_FT_F64 }, { "f32", TB_FT_F32 },   { "bool", TB_FT_BOOL },   { "enum", TB_FT_ENUM },
		{ "str", TB_FT_STRING }, { "strn", TB_FT_STRING }, { "bytes", TB_FT_BYTES }, { "u64s", TB_FT_U64SEQ },
	};
	int n = 0;
	if (*t++ != '{')
		return -1;
	for (;;) {
		while (*t == ' ' || *t == ',' || *t == '\t' || *t == '\n')
			t++;
		if (*t == '}' || !*t)
			return n;
		if (*t != '(' || n == (int)TB_MAX_FIELDS)
			return -1;
		t++;
		char ty[16], nm[TB_FIELD_NAME_MAX];
		size_t k = 0;
		while (*t == ' ')
			t++;
		for (; *t && *t != ',' && *t != ' ' && *t != ')'; t++)
			if (k + 1 < sizeof ty)
				ty[k++] = *t;
		ty[k] = 0;
		while (*t == ' ' || *t == ',')
			t++;
		k = 0;
		for (; *t && *t != ',' && *t != ' ' && *t != ')'; t++)
			if (k + 1 < sizeof nm)
				nm[k++] = *t;
		nm[k] = 0;
		/* the rest of the group (a bound, enum labels in parentheses) */
		for (int depth = 1; *t && depth; t++)
			depth += *t == '(' ? 1 : *t == ')' ? -1 : 0;
		uint32_t ft = 0;
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (!strcmp(ty, types[i].n))
				ft = types[i].ft;
		if (!ft || !nm[0])
			return -1;
		memset(&f[n], 0, sizeof f[n]);
		snprintf(f[n].name, sizeof f[n].name, "%s", nm);
		f[n].type = ft;
		n++;
	}
}

int record_flight_check_exe(const struct record_flight_opts *fo, const char *exe)
{
	struct cli_elf_events ev;
	const char *bad;
	int elf = cli_elf_events_read(exe, &ev, &bad);
	if (!elf || bad || !ev.found) {
		if (elf)
			cli_elf_events_free(&ev);
		cli_msg(stderr, "tracebuf record: --snapshot-on: %s declares no event classes (not a program using "
				"TB_EVENT, or its classes are in a library it loads): the conditions are checked as the "
				"classes register (said in the log)", exe);
		return 0;
	}
	int rc = 0;
	for (unsigned i = 0; i < fo->nconds && !rc; i++) {
		struct tb_flight_cond c;
		unsigned pos = 0, nmatch = 0, nok = 0, badk = 0;
		const char *why = NULL, *badcls = NULL;
		tb_flight_cond_parse(fo->conds[i], &c, &pos, &why); /* parsed when given */
		int begin = 0, end = 0;
		for (size_t k = 0; k < ev.n; k++) {
			struct tb_field_desc f[TB_MAX_FIELDS];
			int nf = entry_fields(ev.names[k] + strlen(ev.names[k]) + 1, f);
			unsigned fidx[TB_FLIGHT_CMP_MAX], b = 0;
			int role;
			const char *w = NULL;
			int r = tb_flight_cond_class(&c, ev.names[k], f, nf < 0 ? 0 : (unsigned)nf, fidx, &role, &b, &w);
			if (c.kind == TB_FLIGHT_SPAN) {
				begin |= role == 1;
				end |= role == 2;
				continue;
			}
			if (!fnmatch(c.pattern, ev.names[k], 0))
				nmatch++;
			if (r > 0 || (r < 0 && nf < 0))
				nok++;
			else if (r < 0 && !badcls) {
				badcls = ev.names[k];
				badk = b;
				why = w;
			}
		}
		unsigned at = (unsigned)(strstr(c.text, c.pattern) - c.text);
		char msg[512];
		/* a provider CMD declares none of may be a library's it loads:
		 * checked when its classes register, not refused */
		size_t plen = (size_t)(strchr(c.pattern, ':') - c.pattern);
		int provider = 0;
		for (size_t k = 0; k < ev.n && !provider; k++) {
			char prov[TB_NAME_MAX];
			snprintf(prov, sizeof prov, "%.*s", (int)plen, c.pattern);
			const char *colon = strchr(ev.names[k], ':');
			if (colon && (size_t)(colon - ev.names[k]) < sizeof prov) {
				char theirs[TB_NAME_MAX];
				snprintf(theirs, sizeof theirs, "%.*s", (int)(colon - ev.names[k]), ev.names[k]);
				provider = !fnmatch(prov, theirs, 0);
			}
		}
		if (!provider && ((c.kind == TB_FLIGHT_SPAN && !(begin && end)) || (c.kind == TB_FLIGHT_EVENT && !nmatch))) {
			cli_msg(stderr, "tracebuf record: --snapshot-on '%s': %s declares no class of provider '%.*s' (a library "
					"it loads may): checked when the classes register (said in the log)",
				fo->conds[i], exe, (int)plen, c.pattern);
			continue;
		}
		if (c.kind == TB_FLIGHT_SPAN && !(begin && end)) {
			snprintf(msg, sizeof msg, "%s declares no class %s_%s (a span is a pair of classes NAME_begin and "
				 "NAME_end; tracebuf list %s)", exe, c.pattern, begin ? "end" : "begin", exe);
			rc = bad_cond(fo->conds[i], at, msg);
		} else if (c.kind == TB_FLIGHT_EVENT && !nmatch) {
			snprintf(msg, sizeof msg, "%s declares no class named like '%s' (tracebuf list %s)", exe, c.pattern,
				 exe);
			rc = bad_cond(fo->conds[i], at, msg);
		} else if (c.kind == TB_FLIGHT_EVENT && !nok) {
			snprintf(msg, sizeof msg, "'%s': class %s %s (tracebuf list --fields %s)", c.cmp[badk].field,
				 badcls, why, exe);
			rc = bad_cond(fo->conds[i], c.cmp[badk].pos, msg);
		}
	}
	cli_elf_events_free(&ev);
	return rc;
}

/* tb_flight_cfg.crash_info: the crash the program's crash handler wrote
 * into the snapshot's trace (cli_crash.h), as trigger.json's "crash" */
static char *crash_info(void *arg, const char *trace_dir, uint32_t pid, uint32_t *tid)
{
	(void)arg;
	struct cli_crash c;
	if (cli_crash_read(trace_dir, pid, &c) <= 0)
		return NULL;
	char *j = cli_crash_json(&c, 4, 0);
	*tid = c.tid;
	cli_crash_free(&c);
	return j;
}

static void log_line(void *arg, const char *sentence)
{
	(void)arg;
	cli_msg(stderr, "tracebuf record: flight: %s", sentence);
}

struct tb_flight *record_flight_start(struct tb_session *s, const struct record_flight_opts *fo, int quiet)
{
	(void)quiet; /* what the flight recorder does is its log: said even with -q */
	struct tb_flight_cond conds[16];
	for (unsigned i = 0; i < fo->nconds; i++) {
		unsigned pos;
		const char *why;
		if (tb_flight_cond_parse(fo->conds[i], &conds[i], &pos, &why) < 0) { /* checked when given */
			bad_cond(fo->conds[i], pos, why);
			return NULL;
		}
	}
	struct tb_flight_cfg cfg = {
		.crash_info = crash_info,
		.dir = fo->dir,
		.after_ns = fo->after_ns,
		.min_interval_ns = fo->min_interval_ns,
		.max_snapshots = (uint32_t)fo->max_snapshots,
		.max_size = fo->max_size,
		.recorder = "tracebuf record (flight recorder)",
		.log = log_line,
		.conds = conds,
		.nconds = fo->nconds,
		.scan_period_ns = fo->scan_period_ns,
	};
	struct tb_flight *f;
	if (tb_flight_create(s, &cfg, &f) < 0) {
		cli_error("record", "%s", tb_errmsg());
		return NULL;
	}
	if (tb_flight_start(f) < 0) {
		cli_error("record", "%s", tb_errmsg());
		tb_flight_destroy(f);
		return NULL;
	}
	return f;
}

void record_flight_signal(struct tb_flight *f, const siginfo_t *si)
{
	char buf[32];
	struct tb_flight_trigger t = { .kind = TB_FLIGHT_SIGNAL, .signo = si->si_signo,
				       .pid = si->si_pid > 0 ? (uint32_t)si->si_pid : 0 };
	snprintf(t.name, sizeof t.name, "%s", tb_flight_signame(si->si_signo, buf, sizeof buf));
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	t.realtime_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	tb_flight_request(f, &t);
}

/* The signals whose death is a crash.  SIGKILL is taken too (record_flight_end): the OOM
 * killer's and a watchdog's, the one word of such an end; the recorder never sends it to a
 * CMD that runs (only to one it could not start recording) */
static int crash_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGILL || sig == SIGFPE || sig == SIGSYS ||
	       sig == SIGTRAP;
}

int record_flight_check_session(const struct record_flight_opts *fo, struct tb_session *s, const char *path)
{
	if (!fo->dir)
		return 0;
	for (unsigned i = 0; i < tb_session_nchannels(s); i++) {
		struct tb_channel_info ci = { .size = sizeof ci };
		if (tb_session_channel_info(s, i, &ci) == 0 && ci.mode != TB_OVERWRITE)
			return cli_error("record", "--snapshot-dir: the session %s exists (an earlier record --pid made it, "
					 "and the program writes to it until it ends) and its channel '%s' is not in "
					 "overwrite mode: a flight recorder needs overwrite rings; record it without "
					 "--snapshot-dir, or restart the program and use --mode overwrite from the first "
					 "record --pid", path, tb_session_channel_name(s, i));
	}
	return 0;
}

int record_flight_end(struct tb_flight *f, const struct record_flight_opts *fo, int pid, enum record_end how,
		      int status, int attached, int quiet)
{
	/* the triggers the program made before it ended, without their
	 * window (nothing more will be written) */
	(void)attached; /* SIGKILL is a crash under record --pid and for a CMD alike */
	tb_flight_stop(f);
	struct tb_flight_trigger t = { .pid = pid > 0 ? (uint32_t)pid : 0 };
	char buf[32];
	int take = 0;
	if (how == RECORD_END_STATUS && WIFSIGNALED(status) &&
	    (crash_signal(WTERMSIG(status)) || WTERMSIG(status) == SIGKILL) && !fo->no_crash) {
		t.kind = TB_FLIGHT_CRASH;
		t.signo = WTERMSIG(status);
		snprintf(t.name, sizeof t.name, "%s", tb_flight_signame(t.signo, buf, sizeof buf));
		take = 1;
	} else if (how == RECORD_END_STATUS && WIFEXITED(status) && WEXITSTATUS(status) && fo->on_failure) {
		t.kind = TB_FLIGHT_EXIT;
		t.status = WEXITSTATUS(status);
		snprintf(t.name, sizeof t.name, "exit %d", t.status);
		take = 1;
	} else if (how == RECORD_END_UNKNOWN && !fo->no_crash) {
		/* record --pid is not the parent: the process is gone, and its
		 * parent reaped it before its status could be read.  It may have
		 * crashed: its last moments are kept */
		t.kind = TB_FLIGHT_END;
		snprintf(t.name, sizeof t.name, "ended");
		take = 1;
	}
	if (take)
		tb_flight_now(f, &t); /* the rings are still mapped: the session is removed after this */
	struct tb_flight_stats st;
	tb_flight_stats(f, &st);
	if (!quiet || st.skipped)
		cli_msg(stderr, "tracebuf record: flight recorder: %" PRIu64 " trigger%s, %" PRIu64 " snapshot%s written, "
				"%" PRIu64 " suppressed by --min-interval, %" PRIu64 " coalesced, %" PRIu64 " skipped, "
				"%" PRIu64 " removed by the limits; %s holds %" PRIu64 " (%.1f MiB)",
			st.triggers, st.triggers == 1 ? "" : "s", st.snapshots, st.snapshots == 1 ? "" : "s",
			st.suppressed, st.coalesced, st.skipped, st.removed, fo->dir, st.kept,
			(double)st.kept_bytes / 1048576.0);
	if (fo->nconds && (!quiet || st.unscanned || st.invalid))
		fprintf(stderr, "tracebuf record: flight recorder: --snapshot-on scanned %" PRIu64 " events, %" PRIu64
				" met a condition, %" PRIu64 " unscanned (overwritten before the scan read them), %" PRIu64
				" undecodable, %" PRIu64 " span begins not timed; the scan took %.3f s of CPU\n",
			st.scanned, st.matched, st.unscanned, st.invalid, st.span_untracked, (double)st.scan_cpu_ns / 1e9);
	tb_flight_destroy(f);
	return st.skipped ? 1 : 0;
}

void record_flight_free(struct tb_flight *f)
{
	tb_flight_destroy(f);
}
