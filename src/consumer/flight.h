/* SPDX-License-Identifier: MIT */
/*
 * flight.h - the flight recorder (library private): turns triggers into
 * snapshots under one directory, for weeks (docs/FLIGHT-RECORDER.md).
 *
 *   tb_flight_create   scan DIR (numbering goes on after the snapshots
 *                      already there; a partial one a killed recorder left
 *                      is removed)
 *   tb_flight_start    the flight thread: sleeps on the session's trigger
 *                      futex (tb_trigger(), src/producer/trigger.c), takes
 *                      the requests of tb_flight_request() (a signal to the
 *                      recorder), applies the post-trigger window and the
 *                      rate limit, writes each snapshot with tb_oneshot_run()
 *                      (the path of `tracebuf snapshot`), then the limits
 *   tb_flight_stop     handles what is pending at once (no window: the
 *                      program is gone), joins the thread
 *   tb_flight_now      one snapshot now, synchronously (the program's crash,
 *                      seen by the recorder's waitpid, before the session
 *                      is torn down); no window, no rate limit
 *
 * Each snapshot is written into DIR/.NNNNNN.partial (the CTF trace in its
 * trace/ subdirectory, where no other file confuses a CTF reader), completed
 * with its trigger.json, then renamed DIR/NNNNNN-YYYYMMDDTHHMMSS.mmmZ: a listing
 * never sees half a snapshot.  One that cannot be written (a full disk) is
 * removed, said, counted, and the recorder carries on.
 *
 * Concurrency: create, start, stop, now and destroy from one controlling
 * thread; tb_flight_request() and tb_flight_stats() from any thread (not
 * async-signal-safe: the recorder takes its signals with sigtimedwait).
 * Messages (what fired, what was written, skipped, removed) go to cfg->log,
 * one sentence each, from the flight thread or the caller.
 */
#ifndef TB_CONSUMER_FLIGHT_H
#define TB_CONSUMER_FLIGHT_H

#include <stdint.h>

#include "consumer/engine.h"

struct tb_flight;

struct tb_flight_cfg {
	const char *dir;          /* snapshots directory (created if missing) */
	uint64_t after_ns;        /* post-trigger window: keep recording this long, then copy */
	uint64_t min_interval_ns; /* per trigger name: one snapshot at most this often; 0: no limit */
	uint32_t max_snapshots;   /* keep at most this many (oldest removed first); 0: no limit */
	uint64_t max_size;        /* keep at most this many bytes of snapshots (disk blocks); 0: no limit */
	const char *recorder;     /* metadata env "recorder" */
	void (*log)(void *arg, const char *sentence);
	void *log_arg;
	/* --snapshot-on: conditions the scan thread evaluates on every event of
	 * the classes they name (none: no scan thread, no cost) */
	const struct tb_flight_cond *conds;
	unsigned nconds;
	uint64_t scan_period_ns; /* 0: 20 ms */
	/* A crash snapshot (kinds CRASH, END), its trace written and not yet in
	 * place: the crash the program's crash handler wrote into it (trace_dir,
	 * process pid), as a JSON object for trigger.json's "crash" member
	 * (malloc'ed; freed here) and the crashing thread's tid in *tid; NULL when
	 * the trace holds none.  The tool reads traces (the reader is not a
	 * layer of the library); NULL hook: "tid": null as before. */
	char *(*crash_info)(void *arg, const char *trace_dir, uint32_t pid, uint32_t *tid);
	void *crash_arg;
};

enum tb_flight_kind {
	TB_FLIGHT_PROGRAM = 1, /* tb_trigger() */
	TB_FLIGHT_SIGNAL,      /* a signal to the recorder */
	TB_FLIGHT_CRASH,       /* the traced command died of a signal */
	TB_FLIGHT_EXIT,        /* the traced command exited with a non-zero status */
	TB_FLIGHT_EVENT,       /* --snapshot-on 'CLASS[FIELD OP VALUE && ... || ...]' matched an event */
	TB_FLIGHT_SPAN,        /* --snapshot-on 'SPAN>DUR': a span longer than DUR ended */
	TB_FLIGHT_END,         /* record --pid: the attached process ended, how is not known (its
				* parent reaped it before the recorder could read its status) */
};

/*
* --snapshot-on conditions (flight_cond.c; the scan that evaluates them:
 * flight_scan.c).  Grammar (spaces allowed between the parts):
 *   event:  CLASS [ '[' EXPR ']' ]
 *           CLASS  "provider:event", '*' and '?' globs allowed
 *           EXPR   AND ( '||' AND )*       '&&' binds tighter than '||'
 *           AND    TERM ( '&&' TERM )*
 *           TERM   CMP | '(' EXPR ')'     at most TB_FLIGHT_DEPTH_MAX (8)
 *                                          parentheses open at once
 *           CMP    FIELD OP VALUE; OP one of == != < <= > >= on an integer
 *                  field (u8..u64, i8..i64, bool, enum: VALUE a decimal or 0x
 *                  integer, negative allowed, compared exactly) or a float
 *                  field (f32, f64: VALUE a decimal number, [-]D[.D][e[+-]D]
 *                  or [-].D..., rounded to the field's type as C rounds a
 *                  constant, then compared with IEEE semantics: a NaN field
 *                  is != everything and nothing else, -0 == 0), == != on a
 *                  string field (VALUE "quoted" or 'quoted', or a bare word:
 *                  it ends at a space, ']', '&&', '||' and, inside
 *                  parentheses, ')')
 *           at most TB_FLIGHT_CMP_MAX (8) comparisons
 *   span:   SPAN '>' DURATION   SPAN "provider:name" (classes SPAN_begin and
 *           SPAN_end, docs/CONVERT.md), DURATION a number with ns, us, ms or s
 *
 * The comparisons are compiled to a postfix program (prog: comparison k, or
 * AND, OR of the two results below), at most 2*CMP_MAX-1 steps whose stack
 * is at most CMP_MAX results deep: the evaluation is bounded, allocation-free
 * and needs no recursion.
 */
#define TB_FLIGHT_COND_MAX 16u
#define TB_FLIGHT_CMP_MAX 8u
#define TB_FLIGHT_DEPTH_MAX 8u
#define TB_FLIGHT_PROG_MAX (2u * TB_FLIGHT_CMP_MAX - 1u)
#define TB_FLIGHT_COND_TEXT 256u

enum { TB_CMP_EQ = 1, TB_CMP_NE, TB_CMP_LT, TB_CMP_LE, TB_CMP_GT, TB_CMP_GE };
/* prog steps: 0..TB_FLIGHT_CMP_MAX-1 push comparison k's result; these combine the top two */
enum { TB_PROG_AND = 0xf0, TB_PROG_OR = 0xf1 };

struct tb_flight_cmp {
	char field[TB_FIELD_NAME_MAX];
	uint64_t ival;        /* integer VALUE: its magnitude */
	double dval;          /* numeric VALUE rounded to a double (f64 fields) */
	float fval;           /* numeric VALUE rounded to a float (f32 fields) */
	unsigned op;          /* TB_CMP_* */
	int is_str;           /* VALUE was quoted or a bare word: a string */
	int is_dec;           /* VALUE had a '.' or an exponent: float fields only */
	int neg;              /* integer: the value is -ival */
	unsigned pos;         /* of FIELD in the text (error messages) */
	char str[128];        /* string VALUE */
};

struct tb_flight_cond {
	char text[TB_FLIGHT_COND_TEXT];
	char pattern[TB_NAME_MAX]; /* EVENT: class glob; SPAN: span name */
	uint64_t dur_ns;      /* SPAN: fires when longer than this */
	unsigned kind;        /* TB_FLIGHT_EVENT or TB_FLIGHT_SPAN */
	unsigned ncmp;
	struct tb_flight_cmp cmp[TB_FLIGHT_CMP_MAX];
	unsigned nprog;       /* 0 when ncmp is 0 (every event of the class) */
	int has_or;           /* 0: an '&&' chain, the first false comparison decides */
	uint8_t prog[TB_FLIGHT_PROG_MAX];
};

/* Parses one condition: 0, or -EINVAL with *pos (byte of `text`) and *why
 * (a static phrase) saying what is wrong there. */
TB_HIDDEN int tb_flight_cond_parse(const char *text, struct tb_flight_cond *c, unsigned *pos, const char **why);

/*
 * Does condition c apply to class `name` with fields f[0..nf)?  1: yes, and
 * fidx[k] is the field of comparison k (EVENT), or *role is 1 for SPAN_begin,
 * 2 for SPAN_end (SPAN); 0: not this class; -1: the class is named by c but
 * comparison *bad cannot be made on it (*why: no such field, or a string
 * compared with an integer field...).
 */
TB_HIDDEN int tb_flight_cond_class(const struct tb_flight_cond *c, const char *name, const struct tb_field_desc *f,
				   unsigned nf, unsigned fidx[TB_FLIGHT_CMP_MAX], int *role, unsigned *bad,
				   const char **why);

/* Evaluates EVENT condition c on a payload of class e (fidx from
 * tb_flight_cond_class): 1 it holds, 0 not (or a payload too short for a
 * field it reads, in any branch). */
TB_HIDDEN int tb_flight_cond_eval(const struct tb_flight_cond *c, const unsigned fidx[TB_FLIGHT_CMP_MAX],
				  const struct tb_event_desc *e, const uint8_t *payload, uint64_t len);

struct tb_flight_trigger {
	unsigned kind;         /* enum tb_flight_kind */
	char name[64];         /* printable ASCII */
	uint32_t pid, tid;     /* who fired it (signal: the sender); 0: unknown */
	int signo;             /* SIGNAL, CRASH: the signal; else 0 */
	int status;            /* EXIT: the exit status */
	uint64_t ticks;        /* PROGRAM: the session clock when it was claimed; else 0 */
	uint64_t realtime_ns;  /* when it fired (PROGRAM: from ticks when plausible, else when seen) */
	uint64_t seen_mono_ns; /* when the recorder saw it (monotonic) */
	/* EVENT, SPAN: the condition (its text is also `name`, cut) and the event */
	char cond[TB_FLIGHT_COND_TEXT];
	char cls[TB_NAME_MAX]; /* the event's class (SPAN: the _end event's) */
	uint32_t cpu;
	uint64_t dur_ns;       /* SPAN: its duration */
	unsigned cond_idx;     /* EVENT, SPAN: 1 + index in cfg.conds */
};

struct tb_flight_stats {
	uint64_t triggers;     /* requests seen (coalesced ones included) */
	uint64_t snapshots;    /* written */
	uint64_t skipped;      /* could not be written (a full disk, an error): none left */
	uint64_t suppressed;   /* within --min-interval of the same name's last snapshot */
	uint64_t coalesced;    /* tb_trigger() requests overwritten before the recorder read them */
	uint64_t removed;      /* older snapshots removed by the limits */
	uint64_t kept;         /* snapshots in the directory now */
	uint64_t kept_bytes;   /* their disk blocks */
	/* --snapshot-on (flight_scan.c) */
	uint64_t scanned;      /* events read by the scan */
	uint64_t matched;      /* events (spans) that met a condition */
	uint64_t unscanned;    /* events overwritten before the scan read them: never evaluated */
	uint64_t invalid;      /* records the scan could not decode (damage) */
	uint64_t span_untracked; /* span begins not tracked (table full, nesting too deep) */
	uint64_t scan_cpu_ns;  /* CPU time of the scan thread */
};

TB_HIDDEN int tb_flight_create(struct tb_session *s, const struct tb_flight_cfg *cfg, struct tb_flight **out);
TB_HIDDEN int tb_flight_start(struct tb_flight *f);
TB_HIDDEN void tb_flight_request(struct tb_flight *f, const struct tb_flight_trigger *t);
TB_HIDDEN void tb_flight_stop(struct tb_flight *f);
TB_HIDDEN int tb_flight_now(struct tb_flight *f, const struct tb_flight_trigger *t);
TB_HIDDEN void tb_flight_stats(struct tb_flight *f, struct tb_flight_stats *out);
TB_HIDDEN void tb_flight_destroy(struct tb_flight *f);

/* "SIGSEGV" for 11, "SIG37" for others; never NULL. */
TB_HIDDEN const char *tb_flight_signame(int signo, char *buf, unsigned len);

#endif
