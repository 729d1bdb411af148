/* SPDX-License-Identifier: MIT */
/*
 * record_flight.h - `tracebuf record --snapshot-dir DIR`: the flight
 * recorder's options and its glue in record (record_flight.c; the recorder
 * itself is src/consumer/flight.c; docs/FLIGHT-RECORDER.md).
 */
#ifndef TB_TOOLS_RECORD_FLIGHT_H
#define TB_TOOLS_RECORD_FLIGHT_H

#include <signal.h>
#include <stdint.h>

#include <tracebuf/session.h>

struct tb_flight;

/* getopt_long values of record's flight options (cmd_record.c lists them) */
enum {
	OPT_FLIGHT_FIRST_ = 512,
	OPT_SNAPSHOT_DIR = OPT_FLIGHT_FIRST_, OPT_AFTER, OPT_MIN_INTERVAL, OPT_MAX_SNAPSHOTS, OPT_MAX_SIZE,
	OPT_SNAPSHOT_ON_SIGNAL, OPT_NO_SNAPSHOT_ON_CRASH, OPT_SNAPSHOT_ON_FAILURE, OPT_SNAPSHOT_ON, OPT_SCAN_PERIOD,
	OPT_FLIGHT_LAST_ = OPT_SCAN_PERIOD,
};
#define RECORD_FLIGHT_LONG_OPTIONS                                                              \
	{ "snapshot-dir", required_argument, 0, OPT_SNAPSHOT_DIR },                              \
	{ "after", required_argument, 0, OPT_AFTER },                                            \
	{ "min-interval", required_argument, 0, OPT_MIN_INTERVAL },                              \
	{ "max-snapshots", required_argument, 0, OPT_MAX_SNAPSHOTS },                            \
	{ "max-size", required_argument, 0, OPT_MAX_SIZE },                                      \
	{ "snapshot-on-signal", required_argument, 0, OPT_SNAPSHOT_ON_SIGNAL },                  \
	{ "no-snapshot-on-crash", no_argument, 0, OPT_NO_SNAPSHOT_ON_CRASH },                    \
	{ "snapshot-on-failure", no_argument, 0, OPT_SNAPSHOT_ON_FAILURE },                      \
	{ "snapshot-on", required_argument, 0, OPT_SNAPSHOT_ON },                                \
	{ "scan-period", required_argument, 0, OPT_SCAN_PERIOD }

#define RECORD_FLIGHT_USAGE                                                                             \
	"Flight recorder (--mode overwrite): snapshots taken by themselves, docs/FLIGHT-RECORDER.md\n"  \
	"  --snapshot-dir DIR        write a snapshot into a new DIR/NNNNNN-TIME directory (with its\n" \
	"                            trigger.json) at each trigger: tb_trigger() in the program, the\n" \
	"                            signal below, the program's crash; -o DIR is then optional (the\n" \
	"                            trace at exit).  With --pid too: the end of the attached program\n" \
	"                            is seen through a pidfd; its signal when /proc still shows it\n"    \
	"  --after DUR               keep recording DUR after a trigger before copying (0)\n"          \
	"  --min-interval DUR        at most one snapshot per trigger name per DUR (0: no limit)\n"   \
	"  --max-snapshots N         keep the N newest snapshots (oldest removed first; 0: all)\n"     \
	"  --max-size SIZE           keep at most SIZE of snapshots (oldest removed first)\n"          \
	"  --snapshot-on-signal SIG  a signal to the recorder takes a snapshot: USR1, USR2, RTMIN+N\n"  \
	"  --no-snapshot-on-crash    no snapshot when CMD dies of SIGSEGV, SIGBUS, SIGABRT, SIGILL,\n"  \
	"                            SIGFPE, SIGSYS or SIGTRAP (taken by default; --pid: also SIGKILL,\n" \
	"                            and an end whose cause could not be learnt)\n"                    \
	"  --snapshot-on-failure     also a snapshot when CMD exits with a non-zero status\n"          \
	"  --snapshot-on COND        a snapshot when an event meets COND (repeatable, up to 16):\n"    \
	"                            'prov:event[field>=500 && name==\"x\" || ms>0.25]' (globs in the\n" \
	"                            class; == != < <= > >= on integer and float fields, == != on\n"  \
	"                            strings; && binds tighter than ||; ( ) up to 8 deep; at most 8\n" \
	"                            comparisons), or a span\n"                                         \
	"                            longer than a duration: 'prov:name>10ms' (prov:name_begin ..\n"   \
	"                            prov:name_end on one thread). The recorder scans the rings every\n" \
	"                            --scan-period; events overwritten before it are counted (unscanned)\n" \
	"  --scan-period DUR         how often --snapshot-on scans (1ms to 1s; default 20ms): a match\n"  \
	"                            waits half of it on average; shorter costs CPU (FLIGHT-RECORDER.md)\n"

struct record_flight_opts {
	const char *dir;
	uint64_t after_ns, min_interval_ns, max_size;
	uint64_t scan_period_ns; /* --scan-period, 0: the default (20 ms) */
	uint64_t max_snapshots;
	int signo;       /* --snapshot-on-signal, 0: none */
	int no_crash;
	int on_failure;
	const char *conds[16]; /* --snapshot-on, checked when given */
	unsigned nconds;
	int given;       /* some flight option was given */
};

/* One of the options above: 0, or a usage error printed (exit 2). */
int record_flight_option(struct record_flight_opts *fo, int opt, const char *arg);
/* After parsing: the options agree with the channels' modes and with --attach (0), else a usage error (2). */
int record_flight_check(const struct record_flight_opts *fo, const struct tb_channel_opts *chan, unsigned nchan,
			int attach);
/* record --pid taking over an existing session s: its channels were made by an earlier
 * recorder, and must be in overwrite mode for --snapshot-dir: 0, or the error said (1). */
int record_flight_check_session(const struct record_flight_opts *fo, struct tb_session *s, const char *path);
/* Creates and starts the flight recorder of session s: NULL with the error printed. */
struct tb_flight *record_flight_start(struct tb_session *s, const struct record_flight_opts *fo, int quiet);
/* --snapshot-on: the classes and fields the conditions name, against those
 * executable `exe` declares (its tracebuf_events section; nothing to check
 * when it has none): 0, or the error printed (usage, exit 2). */
int record_flight_check_exe(const struct record_flight_opts *fo, const char *exe);
/* The recorder got signal si (the --snapshot-on-signal one): a snapshot is asked for. */
void record_flight_signal(struct tb_flight *f, const siginfo_t *si);
/* How the traced program ended, as record_flight_end() is told. */
enum record_end {
	RECORD_END_STATUS = 1, /* `status` is its wait status (CMD's waitpid, or read from /proc for --pid) */
	RECORD_END_UNKNOWN,    /* --pid: it ended, how is not known (its parent reaped it first) */
	RECORD_END_RUNNING,    /* --pid: the recorder stopped, the program runs on */
};
/* The program (pid) ended as `how` says (status: its wait status for RECORD_END_STATUS):
 * pending triggers handled, a crash (or failure) snapshot taken while the rings are still
 * there, the summary said, the recorder freed.  attached: record --pid (not the parent),
 * where SIGKILL counts as a crash too and an end of unknown cause takes a snapshot (kind
 * "end") unless --no-snapshot-on-crash.  Returns 1 when a snapshot could not be written
 * (record then fails when the program did not), else 0. */
int record_flight_end(struct tb_flight *f, const struct record_flight_opts *fo, int pid, enum record_end how,
		      int status, int attached, int quiet);

/* Frees a flight recorder that did not reach record_flight_end (a failed start). NULL is fine. */
void record_flight_free(struct tb_flight *f);

#endif
