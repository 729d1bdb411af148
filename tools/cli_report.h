/* SPDX-License-Identifier: MIT */
/*
 * cli_report.h - what the two halves of `tracebuf report` share:
 * cmd_report.c (any trace) and cli_report_profile.c (`report --profile`).
 */
#ifndef TB_CLI_REPORT_H
#define TB_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tracebuf/reader.h>

#define NS ((int64_t)1000000000)

/* a 128-bit value clamped to int64_t; a - b without overflow (damaged timestamps can be anywhere) */
int64_t rpt_sat(__int128 d);
int64_t rpt_diff(int64_t a, int64_t b);
/* 1234567 -> "1,234,567" into buf (32 bytes); returns buf */
const char *rpt_grp(char *buf, uint64_t v);
/* a duration for people: "532 ns", "1.250 ms", "2 h 03 min 01.000 s" (buf: 64 bytes) */
const char *rpt_dur(char *buf, int64_t ns);
/* s as a JSON string */
void rpt_jstr(FILE *f, const char *s);
/* ,"diagnostics":{"count":N,"items":[...]}} and the end of the report's JSON object */
void rpt_json_diags(FILE *f, const struct tb_reader *r);

/* `report --profile DIR` on an open trace, written to out; returns the exit code */
int report_profile(struct tb_reader *r, const char *dir, int json, int quiet, size_t top, int threads,
		   size_t max_threads, FILE *out);
/* `report --format json DIR` on an open trace, written to f (the reader is
 * at the end after it); 0 or -ENOMEM */
int report_json(struct tb_reader *r, const char *dir, FILE *f);
/* `report --html -o OUT DIR` (report_html.c): at most max_events single
 * events in the page (TB_HTML_EVENTS_DEFAULT); snapshot: the flight
 * recorder's snapshot directory whose trace DIR is (its trigger is marked on
 * the timeline), or NULL; returns the exit code */
#define TB_HTML_EVENTS_DEFAULT 6000000u
int report_html(struct tb_reader *r, const char *dir, const char *snapshot, const char *out, int quiet,
		uint64_t max_events);

#endif
