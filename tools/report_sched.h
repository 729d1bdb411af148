/* SPDX-License-Identifier: MIT */
/*
 * report_sched.h - `tracebuf report` on a trace recorded with --kernel:
 * per thread the time running, runnable (waiting for a CPU) and blocked,
 * from the kernel's sched events, and the same split inside each span
 * name (NAME_begin ... NAME_end on one thread); with system calls and page
 * faults recorded, what the blocked time was spent in.  docs/KERNEL.md.
 */
#ifndef TB_TOOLS_REPORT_SCHED_H
#define TB_TOOLS_REPORT_SCHED_H

#include <stdint.h>
#include <stdio.h>

#include <tracebuf/reader.h>

struct rs_state;

/* NULL when the trace has no sched_switch class (no --kernel), or out of memory. */
struct rs_state *rs_new(struct tb_reader *r);
/* Every event of the merged iteration, in its order. -ENOMEM or 0. */
int rs_event(struct rs_state *s, const struct tb_rd_event *e);
/* The end of the trace: threads still alive are accounted up to it. */
void rs_finish(struct rs_state *s, uint64_t end_ticks);
void rs_print_text(const struct rs_state *s, FILE *f, size_t max_threads);
/* ,"sched":{...} (nothing when s is NULL) */
void rs_print_json(const struct rs_state *s, FILE *f);
void rs_free(struct rs_state *s);
/* Calls fn for every interval a thread spent in one state (0 running, 1 runnable, 2 blocked),
 * in ticks [from, to), as the state machine closes it (rs_event, rs_finish): the intervals
 * the report's sums are made of (report --html's thread-state bands).  cause: what a blocked
 * interval was blocked in (a system call's name, "page fault"; the string lives as long as
 * s), NULL when not known or not blocked. */
typedef int (*rs_interval_fn)(void *arg, uint32_t tid, int state, uint64_t from, uint64_t to, const char *cause);
void rs_on_interval(struct rs_state *s, rs_interval_fn fn, void *arg);

#endif
