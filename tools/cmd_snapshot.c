/* SPDX-License-Identifier: MIT */
/*
 * cmd_snapshot.c - tracebuf snapshot SESSION -o DIR, and
 *                  tracebuf recover SESSION_FILE -o DIR
 *
 * Both copy a session's rings to a trace once, through the public
 * tb_session_copy() (<tracebuf/consumer.h>; src/consumer/oneshot.c is the
 * one path behind it and tb_snapshot()); they differ in what the session is
 * and in what they promise:
 *   snapshot: a live session (flight recorder).  Producers keep writing
 *             meanwhile: a sub-buffer reused during its copy is dropped and
 *             counted, never written torn.
 *   recover:  the application died (or its consumer did): its session file
 *             still holds the rings.  Attached read-only, everything is
 *             validated, every complete record that can be proved valid is
 *             written; partial packets are closed, anything invalid is cut
 *             and counted.  A killed recorder's directory is completed.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/session.h>

#include "cli.h"

static void snapshot_usage(FILE *f)
{
	fprintf(f, "usage: tracebuf snapshot [-q] SESSION -o DIR\n"
		   "\n"
		   "Copies what the rings of SESSION (a session file, or its name in /dev/shm) hold\n"
		   "now into DIR (created; must be empty) as a CTF trace.  The producers keep running;\n"
		   "sub-buffers they reuse during the copy are dropped and counted.\n"
		   "Exit: 0, 1 failure, 2 usage, 3 some packets were invalid (skipped).\n");
}

static void recover_usage(FILE *f)
{
	fprintf(f, "usage: tracebuf recover [-q] SESSION_FILE -o DIR\n"
		   "\n"
		   "Writes what a dead application's session file holds into DIR as a CTF trace.\n"
		   "DIR is created, or empty, or holds the trace a killed `tracebuf record` of this\n"
		   "session left: then it is completed (packets already there are not written twice).\n"
		   "The session file is only read; remove it afterwards.\n"
		   "Exit: 0, 1 failure, 2 usage, 3 some data could not be proved valid and was cut.\n");
}

static void print_warning(void *arg, const char *sentence)
{
	cli_msg(stderr, "tracebuf %s: warning: %s", (const char *)arg, sentence);
}

static int copy_once(int argc, char **argv, unsigned how)
{
	const char *name = how == TB_COPY_RECOVER ? "recover" : "snapshot";
	void (*usage)(FILE *) = how == TB_COPY_RECOVER ? recover_usage : snapshot_usage;
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *out = NULL, *sess = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = cli_getopt(argv[0], argc, argv, "o:qh", lo)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		sess = argv[optind++];
	if (!sess || !out || optind < argc) {
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	char path[4096];
	cli_session_path(sess, path, sizeof path);
	struct tb_session *s;
	int rc = tb_session_attach(path, TB_ATTACH_READONLY, &s);
	if (rc < 0)
		return cli_error(name, "cannot %s %s: %s", how == TB_COPY_RECOVER ? "read" : "attach to", path,
				 tb_errmsg());
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is an error to report, not a death */
	struct tb_copy_result res = { .size = sizeof res };
	rc = tb_session_copy(s, out, how, print_warning, (void *)name, &res);
	if (how == TB_COPY_RECOVER && res.live)
		fprintf(stderr, "tracebuf %s: warning: %u process%s of the session still ran; "
				"what they were writing may be cut\n", name, res.live, res.live == 1 ? "" : "es");
	char emsg[512];
	snprintf(emsg, sizeof emsg, "%s", rc < 0 ? tb_errmsg() : "");
	tb_session_close(s);
	if (rc < 0 && !res.packets && !res.invalid && !res.torn)
		return cli_error(name, "%s", emsg); /* nothing was copied */
	const struct tb_copy_result *st = &res;
	if (!quiet && how == TB_COPY_RECOVER)
		cli_msg(stderr, "tracebuf %s: %" PRIu64 " event%s in %" PRIu64 " packet%s (%.2f MiB) "
				"recovered into %s; %" PRIu64 " packet%s cut as invalid",
			name, st->events, st->events == 1 ? "" : "s", st->packets, st->packets == 1 ? "" : "s",
			(double)st->bytes / 1048576.0, out, st->invalid, st->invalid == 1 ? "" : "s");
	else if (!quiet)
		/* with no process of the session alive or attached during the
		 * copy, nothing could reuse a sub-buffer: a packet that changed
		 * or does not fit its place is corrupted, and is said as such */
		cli_msg(stderr, "tracebuf %s: %" PRIu64 " event%s in %" PRIu64 " packet%s (%.2f MiB) "
				"written to %s; %" PRIu64 " sub-buffer%s %s %s dropped",
			name, st->events, st->events == 1 ? "" : "s", st->packets, st->packets == 1 ? "" : "s",
			(double)st->bytes / 1048576.0, out, st->torn, st->torn == 1 ? "" : "s",
			st->quiescent ? "inconsistent (no process of the session is alive: corrupted)"
				    : "reused during the copy",
			st->torn == 1 ? "was" : "were");
	if (rc < 0)
		return cli_error(name, "%s", emsg);
	if (st->invalid || (how == TB_COPY_SNAPSHOT && st->quiescent && st->torn))
		return TB_EXIT_PARTIAL;
	return TB_EXIT_OK;
}

int cmd_snapshot(int argc, char **argv)
{
	return copy_once(argc, argv, TB_COPY_SNAPSHOT);
}

int cmd_recover(int argc, char **argv)
{
	return copy_once(argc, argv, TB_COPY_RECOVER);
}
