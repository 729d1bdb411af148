/* SPDX-License-Identifier: MIT */
/*
 * profile_report_trace.h - synthetic `tracebuf profile` traces for the tests
 * of report --profile and convert --to folded / chrome: the profile classes
 * of src/profile/profile_events.h written with the tbtrace writer, this
 * test executable's own /proc/self/maps as profile:map events, and real
 * addresses of functions of the test executable (entry points and the
 * return addresses of real calls) to build stacks whose symbols are known.
 */
#ifndef PROFILE_REPORT_TRACE_H
#define PROFILE_REPORT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "tbtrace.h"

/* class ids in the traces */
enum { PRT_SAMPLE = 1, PRT_MAP, PRT_INFO, PRT_COUNTERS, PRT_TICK, PRT_NCLASSES };

/* Addresses in this executable.  Call graph (each a real call):
 *   prt_top -> prt_mid(1) -> prt_hot_a;  prt_top -> prt_mid(0) -> prt_hot_b;
 *   prt_top -> prt_rec(2) -> prt_rec(1) -> prt_rec(0);  prt_tail -> (noreturn) */
struct prt_addrs {
	uint64_t hot_a, hot_b, mid, top, rec, tail;       /* entry points */
	uint64_t ra_hot_a, ra_hot_b;                      /* in prt_mid */
	uint64_t ra_mid_a, ra_mid_b;                      /* in prt_top (the calls for a / b) */
	uint64_t ra_rec_in_rec, ra_rec_in_top;            /* in prt_rec / prt_top */
	uint64_t ra_tail;                                 /* after prt_tail's last instruction (a call) */
};
void prt_addrs(struct prt_addrs *a);

/* One executable mapping of this process (a line of /proc/self/maps with 'x'). */
struct prt_map {
	uint64_t start, end, pgoff;
	char path[4096];
};
/* The executable mappings of this process (at most max); returns the count. */
size_t prt_self_maps(struct prt_map *m, size_t max);
/* The executable mapping holding address a; 0 when none. */
int prt_map_of(uint64_t a, struct prt_map *out);
/* The path of this executable (readlink /proc/self/exe) and its basename. */
const char *prt_exe(void);
const char *prt_exe_base(void);

/* Opens a trace in dir (removed first) with the profile classes and app:tick. */
struct tbtrace *prt_open(const char *dir, const struct tbtrace_env *env, uint32_t nenv);

void prt_info(struct tbtrace_stream *s, uint64_t ts, uint32_t hz, const char *unwinder, const char *exe);
void prt_map(struct tbtrace_stream *s, uint64_t ts, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t gen,
	     const char *path);
/* Every executable mapping of this process, with addresses + shift. */
void prt_maps_self(struct tbtrace_stream *s, uint64_t ts, uint32_t gen, uint64_t shift);
void prt_sample(struct tbtrace_stream *s, uint64_t ts, const uint64_t *stack, uint32_t n, uint32_t flags,
		uint32_t overrun);
void prt_counters(struct tbtrace_stream *s, uint64_t ts, uint64_t received, uint64_t lost, uint64_t invalid_pc,
		  uint64_t aborted, uint64_t truncated, uint64_t overruns);
void prt_tick(struct tbtrace_stream *s, uint64_t ts);

/*
 * The standard profile trace of the report/convert tests (addresses of a):
 * pid 4242 "exe" = this executable, maps of this process (gen 0); thread
 * 4242 on cpu 0: 27 x [hot_a, mid, top] + 1 of them with overrun 2,
 * 5 x [mid, top], 1 sample whose PC 0x10 is in no mapping; thread 4243 on
 * cpu 1: 10 x [hot_b, mid, top] (2 with TB_PROF_F_ABORTED), 5 x [rec, rec,
 * rec, top] (1 with TB_PROF_F_TRUNCATED), 1 sample with PC 0; a few
 * app:tick events.  With counters: profile:counters {60, 3, 1, 4, 1, 2}.
 */
void prt_standard_trace(const char *dir, int with_counters);

/* ---- checking the CLI's output ---- */

/* A row of a text table of report --profile. */
struct prt_row {
	char count[32], function[256], module[512];
	double pct;
};
/*
 * The rows of the table after the n-th line (0-based) of file whose text,
 * without leading spaces, starts with `marker` (the column header line after
 * it is skipped).  Returns the number of rows (<= max), -1 when not found.
 */
int prt_table(const char *file, const char *marker, int n, struct prt_row *rows, int max);
/* The whole file, NUL-terminated (malloc'ed); NULL if unreadable. */
char *prt_slurp(const char *file);
/* Occurrences of s in file. */
int prt_count(const char *file, const char *s);
/* 1 when, after the first occurrence of `at` in file, `want` occurs before the next '}'. */
int prt_json_has(const char *file, const char *at, const char *want);
/* 0 when python3 can load file as JSON, 1 when it cannot, 77 when python3 is missing. */
int prt_json_valid(const char *file);

#endif
