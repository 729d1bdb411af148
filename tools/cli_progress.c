/* SPDX-License-Identifier: MIT */
/*
 * cli_progress.c - what the readers (dump, convert, report, report --html,
 * report --profile) say while they read a long trace, and before they write
 * a huge file:
 *
 *   - a one-line meter on stderr, redrawn with \r: the share of the trace's
 *     time span read so far (the reader merges the streams by time, so it
 *     is the share of the trace read), events, elapsed time and an ETA.  It
 *     appears after TRACEBUF_PROGRESS_DELAY seconds (1 by default; a short
 *     read shows nothing), when stderr is a terminal (and, for dump, stdout
 *     is not: the meter would cut its lines), and is erased when the pass
 *     ends.  --progress forces it, --no-progress (or TRACEBUF_PROGRESS=0)
 *     turns it off; tracebuf.c takes those two options from the command
 *     line of those commands (cli_progress_init).
 *   - cli_big_output(): before writing, an estimate of the output's size
 *     (the trace's bytes times the converter's measured output bytes per
 *     trace byte); above TRACEBUF_BIG_OUTPUT (a size, 1G by default) it is
 *     said, with the better format for a trace that size.
 *
 * The loops call cli_next() in place of tb_reader_next(): one counter
 * increment per event, a clock read every 4096 events.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "cli.h"

int cli_progress_on;
uint64_t cli_progress_n;

static struct {
	const char *cmd;
	double delay, t0, last;
	const struct tb_reader *r; /* the reader of the current pass */
	uint64_t begin, end;       /* its time range, ticks */
	uint64_t prev_ticks;
	unsigned pass;
	int shown;
} P;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clear_line(void)
{
	if (P.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		P.shown = 0;
	}
}

void cli_progress_init(const char *cmd, int *argc, char **argv)
{
	int mode = -1; /* -1 auto, 0 off, 1 on */
	const char *env = getenv("TRACEBUF_PROGRESS");
	if (env && *env)
		mode = strcmp(env, "0") != 0;
	/* --progress / --no-progress, wherever they are before a "--" */
	int k = 1, i = 1;
	for (; i < *argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--progress"))
			mode = 1;
		else if (!strcmp(argv[i], "--no-progress"))
			mode = 0;
		else
			argv[k++] = argv[i];
	}
	for (; i < *argc; i++)
		argv[k++] = argv[i];
	argv[k] = NULL;
	*argc = k;
	if (mode < 0) /* dump writes its lines to stdout: the same terminal would get both */
		mode = isatty(2) && !(strcmp(cmd, "dump") == 0 && isatty(1));
	const char *d = getenv("TRACEBUF_PROGRESS_DELAY");
	P.delay = d && *d ? strtod(d, NULL) : 1.0;
	P.cmd = cmd;
	P.t0 = P.last = now_s();
	cli_progress_on = mode;
	if (mode)
		atexit(clear_line);
}

static void start_pass(const struct tb_reader *r, uint64_t ticks)
{
	P.r = r;
	P.pass++;
	tb_reader_time_range(r, &P.begin, &P.end);
	P.prev_ticks = ticks;
	P.t0 = now_s();
	P.last = 0;
}

void cli_progress_tick(const struct tb_reader *r, const struct tb_rd_event *e)
{
	uint64_t ticks = tb_rd_ticks(e);
	if (r != P.r || ticks + (P.end - P.begin) / 4 < P.prev_ticks) /* a new reader, or a rewind: a new pass */
		start_pass(r, ticks);
	P.prev_ticks = ticks;
	double t = now_s();
	if (t - P.t0 < P.delay || t - P.last < 0.2)
		return;
	P.last = t;
	double span = P.end > P.begin ? (double)(P.end - P.begin) : 1.0;
	double frac = ticks > P.begin ? (double)(ticks - P.begin) / span : 0.0;
	if (frac > 0.999)
		frac = 0.999; /* a trace still being recorded grows past the range it had at open */
	double el = t - P.t0;
	char eta[32] = "";
	if (frac > 0.01)
		snprintf(eta, sizeof eta, ", ETA %.0f s", el / frac - el);
	char pass[24] = "";
	if (P.pass > 1)
		snprintf(pass, sizeof pass, "pass %u: ", P.pass);
	fprintf(stderr, "\r\033[Ktracebuf %s: %s%2.0f%% of the trace read, %.1f M events, %.0f s%s", P.cmd, pass,
		100.0 * frac, (double)cli_progress_n / 1e6, el, eta);
	fflush(stderr);
	P.shown = 1;
}

void cli_progress_done(void)
{
	clear_line();
}

uint64_t cli_trace_bytes(const struct tb_reader *r)
{
	uint64_t n = 0;
	for (unsigned s = 0; s < tb_reader_nstreams(r); s++)
		n += tb_reader_stream_bytes(r, s);
	return n;
}

static void human(char *buf, size_t cap, double b)
{
	const char *u[] = { "bytes", "kB", "MB", "GB", "TB" };
	unsigned i = 0;
	while (b >= 1000 && i < 4) {
		b /= 1000;
		i++;
	}
	snprintf(buf, cap, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

void cli_big_output(const struct tb_reader *r, const char *cmd, const char *out, const char *format, double ratio,
		    double share, const char *better, double better_ratio)
{
	uint64_t limit = 1000000000ull;
	const char *env = getenv("TRACEBUF_BIG_OUTPUT");
	if (env && *env && cli_parse_size(env, &limit) < 0)
		limit = 1000000000ull;
	double in = (double)cli_trace_bytes(r), est = in * ratio * share;
	if (ratio <= 0 || est < (double)limit)
		return;
	char a[32], b[32], c[32];
	human(a, sizeof a, est);
	human(b, sizeof b, in);
	char *outx = cli_txdup(strcmp(out, "-") ? out : "the output"); /* a path the user gave: escaped */
	fprintf(stderr, "tracebuf %s: warning: %s will be about %s (%s is ~%.1fx the trace's %s)", cmd,
		outx ? outx : "the output", a, format, ratio, b);
	free(outx);
	if (better) {
		human(c, sizeof c, in * better_ratio * share);
		fprintf(stderr, "; for a trace this size %s writes ~%s", better, c);
	}
	fputs("; --begin/--end/--max-events write a part (TRACEBUF_BIG_OUTPUT sets this warning's size)\n", stderr);
}
