/* SPDX-License-Identifier: MIT */
/*
 * cmd_snapshot.c - tracebuf snapshot SESSION -o DIR
 *
 * Writes what the rings of a live session hold now (flight recorder) as a
 * complete trace.  Producers keep writing meanwhile: a sub-buffer reused
 * during its copy is dropped and counted, never written torn.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/consumer.h"
#include "core/session_impl.h"

#define NAME "snapshot"

static void snapshot_usage(FILE *f)
{
	fprintf(f, "usage: tracebuf snapshot [-q] SESSION -o DIR\n"
		   "\n"
		   "Copies what the rings of SESSION (a session file, or its name in /dev/shm) hold\n"
		   "now into DIR (created; must be empty) as a CTF trace.  The producers keep running;\n"
		   "sub-buffers they reuse during the copy are dropped and counted.\n"
		   "Exit: 0, 1 failure, 2 usage, 3 some packets were invalid (skipped).\n");
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *out = NULL, *sess = NULL;
	int quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': snapshot_usage(stdout); return TB_EXIT_OK;
		default: snapshot_usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		sess = argv[optind++];
	if (!sess || !out || optind < argc) {
		snapshot_usage(stderr);
		return TB_EXIT_USAGE;
	}
	char path[4096];
	tb_session_resolve(sess, path, sizeof path);
	struct tb_session *s;
	int rc = tb_session_attach(path, TB_ATTACH_READONLY, &s);
	if (rc < 0)
		return cli_error(NAME, "cannot attach to %s: %s", path, tb_errmsg());
	signal(SIGXFSZ, SIG_IGN);
	int created;
	if (tb_output_dir(out, &created) < 0) {
		tb_session_close(s);
		return cli_error(NAME, "%s", tb_errmsg());
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "recorder", "tracebuf snapshot", 0 },
		{ "session_file", path, 0 },
		{ "snapshot_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
	};
	struct tb_engine_cfg cfg = { .flags = TB_ENG_NO_FLUSHERS, .env = env, .nenv = 3 };
	struct tb_engine *e;
	rc = tb_engine_create(s, out, &cfg, &e);
	if (rc < 0) {
		cli_error(NAME, "%s", tb_errmsg());
		tb_session_close(s);
		if (created)
			rmdir(out);
		return TB_EXIT_FAIL;
	}
	/* processes of the session before the copy: alive, and ever attached
	 * (acquire pairs with the release store of count in tb_proc_register()) */
	unsigned live0 = tb_session_live_procs(s, (uint32_t)getpid());
	uint32_t attached0 = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	rc = tb_engine_snapshot(e);
	char msg[300];
	while (tb_engine_next_warning(e, msg, sizeof msg))
		fprintf(stderr, "tracebuf " NAME ": warning: %s\n", msg);
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	/* with no process of the session alive before and after the copy, and
	 * none attached meanwhile, nothing could reuse a sub-buffer during the
	 * copy: a packet that changed or does not fit its place is corrupted,
	 * and is said and counted as such */
	int dead = live0 == 0 && tb_session_live_procs(s, (uint32_t)getpid()) == 0 &&
		   __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE) == attached0 &&
		   attached0 < s->proc_capacity; /* a full table does not see new processes */
	if (!quiet)
		fprintf(stderr, "tracebuf " NAME ": %" PRIu64 " events in %" PRIu64 " packets (%.2f MiB) "
				"written to %s; %" PRIu64 " sub-buffers %s were dropped\n",
			st.events, st.packets, (double)st.bytes / 1048576.0, out, st.torn,
			dead ? "inconsistent (no process of the session is alive: corrupted)"
			     : "reused during the copy");
	int code = TB_EXIT_OK;
	if (rc < 0)
		code = cli_error(NAME, "%s", tb_engine_errmsg(e));
	else if (st.bad || (dead && st.torn))
		code = TB_EXIT_PARTIAL;
	tb_engine_destroy(e);
	tb_session_close(s);
	return code;
}
