/* SPDX-License-Identifier: MIT */
/*
 * cli_crash.h - the crash a program's libtracebuf wrote into its trace
 * (tracebuf:crash and the tracebuf:crash_map records before it,
 * src/producer/crash.c): read from a trace, its stack symbolised with the
 * profile reader's symboliser (cli_symbols.h: the mappings' files and their
 * ELF symbols), as JSON for a crash snapshot's trigger.json (record) and as
 * text for report and snapshots.  docs/FLIGHT-RECORDER.md, "The crashing
 * thread".
 */
#ifndef TB_CLI_CRASH_H
#define TB_CLI_CRASH_H

#include <stdint.h>
#include <stdio.h>

#define CLI_CRASH_DEPTH 64 /* TB_CRASH_DEPTH (core/format.h) */

struct cli_crash {
	uint32_t pid, tid, signo, flags, n; /* flags: 1 walk aborted, 2 truncated, 4 no mappings, 8 scanned */
	int32_t code;                       /* si_code */
	uint64_t addr, ip, sp;
	int64_t ns;                         /* when it was written (Unix epoch ns) */
	char thread[64];                    /* its name (tracebuf:thread_name), escaped; "" unknown */
	uint64_t stack[CLI_CRASH_DEPTH];    /* [0] the ip, then return addresses */
	char *sym[CLI_CRASH_DEPTH];         /* "function+0xOFF (module)", "module+0xOFF", or NULL */
};

/*
 * The last tracebuf:crash of process pid (0: of any) in the trace at
 * trace_dir, symbolised.  Return: 1 and *c (cli_crash_free() it); 0 when the
 * trace holds none (no handler ran: see the doc); -errno when the trace
 * cannot be read.
 */
int cli_crash_read(const char *trace_dir, uint32_t pid, struct cli_crash *c);
void cli_crash_free(struct cli_crash *c);
/* SEGV_MAPERR, BUS_ADRALN, SI_USER, SI_TKILL...; NULL when unknown. */
const char *cli_crash_code_name(int signo, int code);
/* trigger.json's "crash" member's value (a JSON object, its lines indented by
 * `indent` spaces; with_ids: with pid, tid, signo, signal and time_ns too, for
 * report's JSON); malloc'ed, NULL on out of memory. */
char *cli_crash_json(const struct cli_crash *c, int indent, int with_ids);
/* "Crash: SIGSEGV (SEGV_MAPERR) at address 0x0, in thread T (name) of pid P"
 * and one line per frame, then a blank line. */
void cli_crash_print(FILE *out, const struct cli_crash *c);

#endif
