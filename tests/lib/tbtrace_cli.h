/* SPDX-License-Identifier: MIT */
/*
 * tbtrace_cli.h - helpers of the tests that drive `tracebuf dump/report/
 * convert` on synthetic traces: a standard trace with its ground truth, and
 * running the CLI with its output in files.
 */
#ifndef TBTRACE_CLI_H
#define TBTRACE_CLI_H

#include <stdint.h>

/*
 * Writes the standard CLI trace into DIR and its ground truth (every event:
 * ts, cpu, pid, tid, name, stream; losses; process names; the span counts
 * convert must produce) as JSON into TRUTH.  The trace: 2 CPUs, channels
 * "chan" (cpu 0, 1) and "aux" (cpu 1), processes 100 "web" (tids 100, 101)
 * and 200 "db", events without attribution on aux_1, ~2.5 s with a busy
 * second, nested http:request/db:query spans, one unmatched end, one begin
 * left open, one inner begin closed by its outer end, 7 discarded events on
 * cpu 1 and 2 lost packets on cpu 0.
 */
void tbtrace_cli_trace(const char *dir, const char *truth);

/*
 * Runs `$TB_CLI ARGS >OUT 2>ERR` through the shell (args are pasted as is);
 * returns the exit status (-1 on a signal).  Skips the test (77) when
 * $TB_CLI is unset.
 */
int tbtrace_cli_run(const char *args, const char *out, const char *err);

/* Runs `python3 $TB_SRC/tests/lib/tbtrace_cli_check.py ARGS`; returns its status.
 * Skips (77) when python3 or $TB_SRC is missing. */
int tbtrace_cli_check(const char *args);

/* Runs `python3 $TB_SRC/tests/lib/SCRIPT ARGS`; returns its status (skips as above). */
int tbtrace_py(const char *script, const char *args);

/* 1 when file PATH contains s. */
int tbtrace_file_has(const char *path, const char *s);

#endif
