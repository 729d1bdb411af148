/* SPDX-License-Identifier: MIT */
/*
 * record_report.h - what `tracebuf record` prints (record_report.c).
 */
#ifndef TB_TOOLS_RECORD_REPORT_H
#define TB_TOOLS_RECORD_REPORT_H

#include <stdint.h>

struct tb_session;
struct tb_engine;

/* Monotonic seconds. */
double record_now_s(void);
/* One status line on stderr (a terminal): rate, size, losses, ring fill, relay state. */
void record_status_line(struct tb_session *s, struct tb_engine *e, double t0, uint64_t *prev_ev, double *prev_t);
/* --events PATTERNS: each pattern that selected none of the registered classes, said with those that exist. */
void record_warn_unmatched(struct tb_session *s, const char *patterns);
/* The summary: totals, losses by cause, relay, and written == delivered + lost per ring (final: checked). */
void record_summary(struct tb_session *s, struct tb_engine *e, const char *dir, double secs, int final);
/* Relay-only (out NULL) and the relay gone at the end: said; 1 (a failure), else 0. */
int record_relay_only_lost(const char *out, struct tb_engine *e);
/* 1 when data of the session was dropped as invalid (exit status 3). */
int record_damaged_input(struct tb_engine *e);
/* When the trace holds no event at all (none written, none lost): the likely reason, in
 * one line (CMD exited 127: a library not found; not linked with libtracebuf; nobody
 * attached; every class filtered by --events or disabled; classes registered, none written).
 * exe: CMD's resolved path; status: its wait status; patterns: --events (or NULL). */
void record_explain_empty(struct tb_session *s, struct tb_engine *e, const char *exe, int status,
			  const char *patterns);
/* The name the messages give the command: "record" (the default) or "profile". */
void record_set_name(const char *name);
/* Triggers claimed in the session so far (tb_trigger() calls: the map's trig_seq). */
uint64_t record_triggers_claimed(struct tb_session *s);
/* A recording that is not a flight recorder: the tb_trigger() calls made since `since`
 * (record_triggers_claimed() at its start) went nowhere; said once, with the last one's
 * name and pid, and how to keep snapshots of them. */
void record_say_ignored_triggers(struct tb_session *s, uint64_t since);
/* The engine's warnings, one line each. */
void record_print_warnings(struct tb_engine *e);

#endif
