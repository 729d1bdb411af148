/* SPDX-License-Identifier: MIT */
/*
 * cmd_recover.c - tracebuf recover SESSION_FILE -o DIR
 *
 * The application died (or its consumer did): its session file still holds
 * the rings.  Attach read-only, validate everything, and write every
 * complete record that can be proved valid (tb_ring_drain_dead per ring);
 * partial packets are closed, anything invalid is cut and counted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/consumer.h"

#define NAME "recover"

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

/* 1: DIR/metadata names the session's trace uuid; 0: no metadata; -1: another trace's. */
static int metadata_of_session(const char *dir, const struct tb_session *s)
{
	char path[4200], buf[4096], want[64];
	snprintf(path, sizeof path, "%s/metadata", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat sb;
	ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const uint8_t *u = s->uuid;
	snprintf(want, sizeof want, "uuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return strstr(buf, want) ? 1 : -1;
}

int cmd_recover(int argc, char **argv)
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
		case 'h': recover_usage(stdout); return TB_EXIT_OK;
		default: recover_usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		sess = argv[optind++];
	if (!sess || !out || optind < argc) {
		recover_usage(stderr);
		return TB_EXIT_USAGE;
	}
	char path[4096];
	tb_session_resolve(sess, path, sizeof path);
	struct tb_session *s;
	int rc = tb_session_attach(path, TB_ATTACH_READONLY, &s);
	if (rc < 0)
		return cli_error(NAME, "cannot read %s: %s", path, tb_errmsg());
	signal(SIGXFSZ, SIG_IGN);
	unsigned live = tb_session_live_procs(s, (uint32_t)getpid());
	if (live)
		fprintf(stderr, "tracebuf " NAME ": warning: %u processes of the session still run; "
				"what they are writing now may be cut\n", live);
	int created;
	if (tb_output_dir(out, &created) < 0) {
		tb_session_close(s);
		return cli_error(NAME, "%s", tb_errmsg());
	}
	/* the directory of a killed recorder of this session is completed: its
	 * stream files are checked packet by packet (uuid, stream) by the engine;
	 * its metadata must name this session too */
	unsigned resume = 0;
	if (!created) {
		int same = metadata_of_session(out, s);
		if (same < 0) {
			tb_session_close(s);
			return cli_error(NAME, "%s holds a trace of another session; give a new or empty directory", out);
		}
		resume = TB_ENG_RESUME;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "recorder", "tracebuf recover", 0 },
		{ "session_file", path, 0 },
		{ "recover_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
	};
	struct tb_engine_cfg cfg = { .flags = TB_ENG_NO_FLUSHERS | TB_ENG_READONLY | resume, .env = env, .nenv = 3 };
	struct tb_engine *e;
	rc = tb_engine_create(s, out, &cfg, &e);
	if (rc < 0) {
		cli_error(NAME, "%s", tb_errmsg());
		tb_session_close(s);
		if (created)
			rmdir(out);
		return TB_EXIT_FAIL;
	}
	rc = tb_engine_drain_dead(e);
	char msg[300];
	while (tb_engine_next_warning(e, msg, sizeof msg))
		fprintf(stderr, "tracebuf " NAME ": warning: %s\n", msg);
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	if (!quiet)
		fprintf(stderr, "tracebuf " NAME ": %" PRIu64 " events in %" PRIu64 " packets (%.2f MiB) "
				"recovered into %s; %" PRIu64 " packets cut as invalid\n",
			st.events, st.packets, (double)st.bytes / 1048576.0, out, st.bad);
	int code = TB_EXIT_OK;
	if (rc < 0)
		code = cli_error(NAME, "%s", tb_engine_errmsg(e));
	else if (st.bad)
		code = TB_EXIT_PARTIAL;
	tb_engine_destroy(e);
	tb_session_close(s);
	return code;
}
