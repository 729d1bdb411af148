/* SPDX-License-Identifier: MIT */
/*
 * cli_profile.h - reading `tracebuf profile` traces for report --profile
 * and convert --to folded / chrome: the processes (profile:info, maps,
 * counters), each sample's stack symbolised against its own process's maps
 * as they were when it was taken, and aggregation (self / total per
 * function).  The event classes are src/profile/profile_events.h; how
 * addresses become names is docs/PROFILE-READING.md.
 *
 * Use:  p = prof_open(reader, "report", quiet);  prof_load(p)  (one pass
 * over the trace for the maps, info and counters; the reader is rewound);
 * then the caller's own pass gives every item to prof_event(), which
 * returns 1 and the symbolised stack for a profile:sample.
 *
 * Maps: a process's profile:map records are kept in trace order.  A
 * sample's address is looked up among the maps recorded before the sample
 * (the latest one holding the address wins: a later map with the same start
 * replaces an earlier one); if none holds it, among the maps recorded after
 * it (the earliest wins: a library sampled between its dlopen and the
 * snapshot of the maps that followed).
 */
#ifndef TB_CLI_PROFILE_H
#define TB_CLI_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <tracebuf/reader.h>

#include "cli_map.h"
#include "profile/profile_events.h"


/* ---- functions ---- */

enum prof_fkind {
	PROF_SYM = 1,   /* a symbol of a mapped file */
	PROF_NOSYM = 2, /* in a mapping, no symbol: module+offset */
	PROF_NOMAP = 3, /* in no recorded mapping: "[unknown]" */
};

struct prof_fn {
	int kind;
	const char *name;   /* PROF_SYM: the symbol; else "[unknown]" */
	const char *module; /* basename of the mapped file, "[vdso]", "[anon]"; NULL for PROF_NOMAP */
	const char *path;   /* the file as recorded; NULL for PROF_NOMAP */
	uint64_t off;       /* PROF_NOSYM: address in the file's ELF address space, or a file offset */
	int file_offset;    /* off is a file offset (the file could not be read) */
	const char *label;  /* name for PROF_SYM, "module+0xOFF" for PROF_NOSYM, "[unknown]" */
};

/* ---- processes ---- */

struct prof_counters {
	uint64_t received, lost, invalid_pc, aborted, truncated, overruns;
};

struct prof_proc {
	uint32_t pid;
	int has_info, has_counters;
	uint32_t hz;
	const char *unwinder, *exe; /* from profile:info; NULL without it */
	const char *source;         /* how samples were taken (profile:info); "" in older traces */
	const char *name;           /* exe basename, else the env's comm, else "pid N" */
	struct prof_counters sampler; /* profile:counters (has_counters) */
	/* seen in the trace: received = samples; invalid_pc = samples with PC 0;
	 * aborted / truncated = samples with those flags; overruns = sum; lost unused */
	struct prof_counters seen;
	uint64_t unmapped;    /* samples whose PC (not 0) is in no recorded mapping */
	uint64_t periods;     /* sum of 1 + overrun over the samples */
	uint32_t nmaps, ngens; /* map records; distinct gen values */
	int64_t first_ns, last_ns; /* of its samples (when seen.received) */
};

enum prof_invalid {
	PROF_VALID = 0,
	PROF_PC_ZERO = 1,     /* stack[0] == 0 (or an empty stack) */
	PROF_PC_UNMAPPED = 2, /* the PC is in no recorded executable mapping of its process */
};

struct prof_sample {
	uint32_t pid, tid;
	int64_t ns;
	uint32_t flags, overrun; /* TB_PROF_F_*, timer overruns */
	uint64_t weight;         /* 1 + overrun: the periods the sample stands for */
	int invalid;             /* enum prof_invalid */
	uint64_t pc;
	uint32_t n;              /* frames, innermost first; 0 when invalid */
	uint32_t fid[TB_PROF_MAX_DEPTH];
};

struct prof;

/*
 * Finds the profile classes of reader r.  cmd names the command in the
 * diagnostics printed on stderr about unusable files (none when quiet).
 * NULL when out of memory.
 */
struct prof *prof_open(struct tb_reader *r, const char *cmd, int quiet);
void prof_close(struct prof *p);
/* 1 when the trace defines profile:sample (written by tracebuf profile). */
int prof_present(const struct prof *p);
/* One pass over the trace for the maps, info and counters; rewinds the reader.  0 or -ENOMEM. */
int prof_load(struct prof *p);
/*
 * Give every item of the caller's pass (in order).  Return: 1 and *s for a
 * profile:sample; 0 for anything else (a profile:map advances its process's
 * maps); -ENOMEM.
 */
int prof_event(struct prof *p, const struct tb_rd_event *e, struct prof_sample *s);
/*
 * For the converters that read samples only (folded, speedscope): a trace
 * without profile:sample is an error naming `to` ("--to folded needs a
 * trace written by `tracebuf profile`"), else prof_load().  Returns
 * TB_EXIT_OK or the exit code (the message is printed).
 */
int prof_load_samples(struct prof *p, const char *dir, const char *to);
/*
 * The caller's pass, samples only: gives every item to prof_event() and
 * returns 1 with the next sample in *s (s->invalid tells an invalid PC), 0
 * at the end of the trace, -ENOMEM.
 */
int prof_next_sample(struct prof *p, struct tb_reader *r, struct prof_sample *s);

const struct prof_fn *prof_fn(const struct prof *p, uint32_t fid);
size_t prof_nprocs(const struct prof *p);
const struct prof_proc *prof_proc(const struct prof *p, size_t i);  /* sorted by pid after prof_load */
const struct prof_proc *prof_proc_of(const struct prof *p, uint32_t pid); /* NULL if none */
/* Events the trace lost (reader notices of any class, after prof_load): counted, and notices of unknown size. */
void prof_trace_lost(const struct prof *p, uint64_t *events, uint64_t *unknown);
/* The symbol problems (files unreadable ...) reported so far. */
size_t prof_nproblems(const struct prof *p);
const char *prof_problem_file(const struct prof *p, size_t i);
const char *prof_problem_what(const struct prof *p, size_t i);

/* oprofile's counters over every process: the sampler's where it wrote
 * profile:counters, else what the trace shows (see docs/PROFILE-READING.md). */
struct prof_totals {
	struct prof_counters c; /* invalid_pc = pc_zero + unmapped */
	uint64_t pc_zero, unmapped;
	uint64_t samples, periods, valid_samples, valid_periods;
	size_t nprocs, with_counters; /* processes with samples or counters; of them with profile:counters */
	uint64_t trace_lost, trace_lost_unknown; /* the reader's loss notices (any class) */
};
void prof_totals(const struct prof *p, struct prof_totals *t);

/* ---- aggregation: self and total per function ---- */

struct prof_row {
	uint32_t fid;
	uint64_t self, total; /* periods */
	uint64_t last;        /* internal: the sample that counted total last */
};

struct prof_agg {
	struct cli_map idx; /* fid -> row index */
	struct prof_row *rows;
	size_t nrows, cap;
	uint64_t samples, periods, nadd;
};

/* Adds a valid sample: self for its leaf, total once for every distinct
 * function of its stack.  0 or -ENOMEM. */
int prof_agg_add(struct prof_agg *a, const struct prof_sample *s);
/* Rows with self (by_total 0) or total (1) > 0, sorted by it (descending), then by
 * label, module; *out is malloc'ed; returns the count (or 0 and NULL). */
size_t prof_agg_sorted(const struct prof_agg *a, const struct prof *p, int by_total, struct prof_row **out);
void prof_agg_free(struct prof_agg *a);

#endif
