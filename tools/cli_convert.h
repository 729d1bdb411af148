/* SPDX-License-Identifier: MIT */
/*
 * cli_convert.h - what the converters of `tracebuf convert` share.
 *
 * cmd_convert.c parses the options, opens the trace and calls one
 * converter, one file each: convert_chrome.c (Chrome Trace Event JSON),
 * convert_perfetto.c (Perfetto's protobuf trace), convert_folded.c (folded
 * stacks) and convert_speedscope.c (speedscope's JSON).  They share, from
 * cli_convert.c: the output file, the time window and event budget, the
 * span naming convention (NAME_begin ... NAME_end), the names of processes
 * and threads, and a JSON rendering of fields safe for JavaScript viewers.
 */
#ifndef TB_CLI_CONVERT_H
#define TB_CLI_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tracebuf/reader.h>

struct cv_opts {
	const char *cmd;      /* the subcommand named in messages; NULL: "convert" */
	const char *dir;      /* the trace */
	const char *out;      /* output path, "-" standard output */
	int quiet;            /* no diagnostics, no summary on stderr */
	int absolute;         /* chrome: ts since the Unix epoch */
	int compress;         /* perfetto: deflate the packets (1, default) or not (0) */
	int has_begin, has_end;
	int64_t begin_ns, end_ns; /* the window, inclusive (Unix epoch ns) */
	uint64_t max_events;      /* 0: no limit */
};

/* A converter: writes the trace of r to o->out; returns the exit code. */
typedef int (*cv_fn)(struct tb_reader *r, const struct cv_opts *o);
int convert_chrome(struct tb_reader *r, const struct cv_opts *o);
int convert_perfetto(struct tb_reader *r, const struct cv_opts *o);
int convert_folded(struct tb_reader *r, const struct cv_opts *o);
int convert_speedscope(struct tb_reader *r, const struct cv_opts *o);

/* ---- output ---- */

/* Opens o->out for writing ("-": stdout) with a large buffer; NULL and a message on failure. */
FILE *cv_open_out(const struct cv_opts *o);
/* Flushes and closes; returns TB_EXIT_OK or (with a message) TB_EXIT_FAIL. */
int cv_close_out(const struct cv_opts *o, FILE *f);
/* "standard output" or the path */
const char *cv_out_name(const struct cv_opts *o);

/* ---- the time window and the event budget (--begin/--end, --max-events) ---- */

struct cv_window {
	const struct cv_opts *o;
	uint64_t taken;       /* events (and loss notices) let through */
	uint64_t before, after; /* events outside the window (after: including those past --max-events) */
	int cut;              /* 0 none; 1 --end reached; 2 --max-events reached */
	int64_t cut_ns;       /* time of the first item left out at the end */
};
/* Resets w for a pass over r from its start. */
void cv_window_start(struct cv_window *w, struct tb_reader *r, const struct cv_opts *o);
/* 1: convert the item; 0: skip it (before the window); -1: stop (past the
 * end or the budget; the caller then calls cv_window_drain()). */
int cv_window_take(struct cv_window *w, const struct tb_rd_event *e);
/* Counts the items left after a stop (w->after) without converting them. */
void cv_window_drain(struct cv_window *w, struct tb_reader *r);
/* One sentence saying what was cut ("" when nothing was), into buf. */
const char *cv_window_note(const struct cv_window *w, char *buf, size_t cap);

/* ---- spans: NAME_begin ... NAME_end on one thread ---- */

#define CV_STACK_MAX 1024u /* nesting depth per thread; deeper begins are instants */

struct cv_role {
	int kind;        /* 0 none, 1 begin, 2 end */
	uint32_t pair;   /* end: class id of its begin; UINT32_MAX none */
	char *span;      /* span name (PREFIX) */
	char *cat;       /* the provider part (before the last ':') */
	char *span_json; /* the same as quoted JSON strings */
	char *cat_json;
	char *name_json; /* the class name, quoted */
};
struct cv_roles {
	uint32_t n;
	struct cv_role *r; /* by class id */
};
/* The role of every class of r; 0 or -ENOMEM. */
int cv_roles_load(struct cv_roles *ro, struct tb_reader *r);
void cv_roles_free(struct cv_roles *ro);

struct cv_stack {
	uint32_t *s; /* class ids of the open begins, innermost last */
	uint32_t depth, cap;
};
enum cv_step { CV_INSTANT = 0, CV_BEGIN = 1, CV_END = 2, CV_UNMATCHED = 3, CV_TOO_DEEP = 4 };
/*
 * What an event of class id does on its thread's stack.  CV_BEGIN: pushed.
 * CV_END: *inner spans opened inside the matching one are still open; the
 * caller closes them (cv_stack_pop each, innermost first), then pops the
 * matching begin.  CV_UNMATCHED (an end without its begin) and CV_TOO_DEEP
 * (a begin past CV_STACK_MAX) are written as instants.  -ENOMEM.
 */
int cv_span_step(const struct cv_roles *ro, struct cv_stack *st, uint32_t id, uint32_t *inner);
static inline uint32_t cv_stack_pop(struct cv_stack *st)
{
	return st->s[--st->depth];
}

/* ---- names ---- */

/* The recorded name of process pid (the env's proc_<pid>), else "pid N";
 * pid 0: "no thread record". */
const char *cv_process_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap);
/* The name of thread tid: its recorded name once traces carry thread names
 * (looked up here, one place for every format), meanwhile "tid N". */
const char *cv_thread_name(struct tb_reader *r, uint32_t pid, uint32_t tid, char *buf, size_t cap);

/* ---- JSON ---- */

/* s (n bytes) as a quoted JSON string, malloc'ed; NULL when out of memory */
char *cv_jdup(const char *s, size_t n);
/*
 * The event's fields as JSON object members ("a":1,"s":"x") into *buf
 * (grown as needed), with every integer outside +-(2^53 - 1) written as a string
 * ("value":"18446744073709551615"): JavaScript viewers parse numbers as
 * doubles and would change it.  Returns *buf, NULL when out of memory.
 */
const char *cv_fields_json(const struct tb_rd_event *e, char **buf, size_t *cap);
/* ISO 8601 UTC with ns into buf */
void cv_utc(char *buf, size_t cap, int64_t ns);

#endif
