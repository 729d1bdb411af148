/* SPDX-License-Identifier: MIT */
/* cmd_dump.c - `tracebuf dump DIR`: one line per event, merged by time. */
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf dump [options] DIR\n"
		"  One line per event of trace DIR, every stream merged by time:\n"
		"  [seconds.nanoseconds] (cpu N) pid/tid event: { field = value, ... }\n"
		"  and a line where events or packets were lost.\n\n"
		"  --format text|json   json: one JSON object per line (JSON Lines)\n"
		"  --event PATTERN      only events whose name matches the glob (repeat or comma-separate)\n"
		"  --cpu N              only CPU N\n"
		"  --tid N              only thread N\n"
		"  --from T, --to T     time window; T in ns since the Unix epoch (integer) or in\n"
		"                       seconds (with a '.' or an 's' suffix, e.g. 1700000000.5)\n"
		"  --thread-records     also print the tracebuf:thread attribution records\n"
		"  --ticks              print raw clock ticks instead of wall-clock time\n"
		"  -q, --quiet          do not print the diagnostics about damaged input\n"
		"  -h, --help\n\n"
		"exit: 0 ok, 1 failure, 2 usage, 3 some input was damaged and skipped (see stderr)\n");
}

/* ns since the epoch, or seconds with '.'/'s' suffix */
static int parse_time(const char *s, int64_t *out)
{
	char *end;
	if (strchr(s, '.') || (s[0] && s[strlen(s) - 1] == 's' && !strstr(s, "ns"))) {
		errno = 0;
		long double v = strtold(s, &end);
		if (errno || end == s || (*end && strcmp(end, "s")))
			return -1;
		*out = (int64_t)(v * 1e9L + (v >= 0 ? 0.5L : -0.5L));
		return 0;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || (*end && strcmp(end, "ns")))
		return -1;
	*out = v;
	return 0;
}

struct dump_diag {
	int quiet;
};

static void on_diag(void *arg, const struct tb_rd_diag *d)
{
	struct dump_diag *dd = arg;
	if (!dd->quiet)
		fprintf(stderr, "tracebuf dump: %s, offset %" PRIu64 ": %s\n", d->file, d->offset, d->what);
}

static int match_event(char **pats, int npat, const char *name)
{
	if (!npat)
		return 1;
	for (int i = 0; i < npat; i++)
		if (!fnmatch(pats[i], name, 0))
			return 1;
	return 0;
}

/* decimal digits of v (at least `width`, zero padded) at p; returns the end (no sprintf: hot path) */
static char *put_u(char *p, uint64_t v, int width)
{
	char t[24];
	int i = 24;
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v || 24 - i < width);
	memcpy(p, t + i, (size_t)(24 - i));
	return p + (24 - i);
}

static char *put_time(char *p, const struct tb_reader *r, uint64_t ticks, int raw)
{
	if (raw)
		return put_u(p, ticks, 20);
	int64_t ns = tb_reader_ticks_to_ns(r, ticks);
	int64_t s = ns / 1000000000, f = ns % 1000000000;
	if (f < 0) {
		f += 1000000000;
		s--;
	}
	if (s < 0) {
		*p++ = '-';
		p = put_u(p, (uint64_t)0 - (uint64_t)s, 1);
	} else {
		p = put_u(p, (uint64_t)s, 1);
	}
	*p++ = '.';
	return put_u(p, (uint64_t)f, 9);
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, 0, 'f' }, { "event", required_argument, 0, 'e' },
		{ "cpu", required_argument, 0, 'c' },    { "tid", required_argument, 0, 't' },
		{ "from", required_argument, 0, 'F' },   { "to", required_argument, 0, 'T' },
		{ "thread-records", no_argument, 0, 'R' }, { "ticks", no_argument, 0, 'k' },
		{ "quiet", no_argument, 0, 'q' },        { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int json = 0, raw = 0, opt;
	long cpu = -1, tid = -1;
	int64_t from = INT64_MIN, to = INT64_MAX;
	char *pats[64];
	int npat = 0;
	unsigned flags = 0;
	struct dump_diag dd = { 0 };
	optind = 1;
	while ((opt = getopt_long(argc, argv, "f:e:c:t:F:T:qh", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "json"))
				json = 1;
			else if (strcmp(optarg, "text"))
				return cli_error("dump", "--format %s: use text or json", optarg), TB_EXIT_USAGE;
			break;
		case 'e':
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
				if (npat < 64)
					pats[npat++] = tok;
			break;
		case 'c': case 't': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0)
				return cli_error("dump", "--%s %s: expected a number", opt == 'c' ? "cpu" : "tid", optarg),
				       TB_EXIT_USAGE;
			*(opt == 'c' ? &cpu : &tid) = v;
			break;
		}
		case 'F': case 'T':
			if (parse_time(optarg, opt == 'F' ? &from : &to))
				return cli_error("dump", "%s %s: expected ns since the epoch or seconds (1700000000.5)",
						 opt == 'F' ? "--from" : "--to", optarg), TB_EXIT_USAGE;
			break;
		case 'R': flags |= TB_READER_THREAD_EVENTS; break;
		case 'k': raw = 1; break;
		case 'q': dd.quiet = 1; break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	struct tb_reader_opts ro = { .size = sizeof ro, .flags = flags, .diag = on_diag, .diag_arg = &dd };
	struct tb_reader *r;
	int rc = tb_reader_open(argv[optind], &ro, &r);
	if (rc)
		return cli_error("dump", "%s", tb_errmsg());
	static char obuf[1 << 20];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	if (from != INT64_MIN)
		tb_reader_seek_ns(r, from);
	size_t cap = 1 << 16;
	char *line = malloc(cap);
	const struct tb_rd_event *e;
	while (line && tb_reader_next(r, &e) > 0) {
		int64_t ns = tb_rd_ns(e);
		if (ns > to)
			break;
		if (cpu >= 0 && tb_rd_cpu(e) != (uint32_t)cpu)
			continue;
		int kind = tb_rd_kind(e);
		if (kind == TB_RD_EVENT) {
			if (tid >= 0 && tb_rd_tid(e) != (uint32_t)tid)
				continue;
			if (!match_event(pats, npat, tb_rd_name(e)))
				continue;
		} else if (npat || tid >= 0) {
			continue; /* notices belong to no event class and no thread */
		}
		for (;;) {
			char *p = line;
			size_t room = cap - 512, n;
			const char *name = tb_rd_name(e);
			if (json) {
				p += sprintf(p, "{\"ts\":%" PRId64 ",\"ticks\":%" PRIu64 ",\"cpu\":%" PRIu32
						",\"stream\":\"%s\",", ns, tb_rd_ticks(e), tb_rd_cpu(e),
					     tb_reader_stream_file(r, tb_rd_stream(e)));
				if (kind == TB_RD_EVENT) {
					p += sprintf(p, "\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"event\":", tb_rd_pid(e),
						     tb_rd_tid(e));
					p += tb_rd_format_string(name, strlen(name), 1, p, 256);
					p += sprintf(p, ",\"fields\":{");
					n = tb_rd_format_fields(e, 1, p, room - (size_t)(p - line));
					if (n > room - (size_t)(p - line))
						goto grow;
					p += n;
					p += sprintf(p, "}}\n");
				} else {
					uint64_t c = tb_rd_count(e);
					const char *what = kind == TB_RD_DISCARDED_EVENTS ? "discarded_events" : "discarded_packets";
					if (c)
						p += sprintf(p, "\"%s\":%" PRIu64, what, c);
					else
						p += sprintf(p, "\"%s\":null", what);
					p += sprintf(p, ",\"ts_end\":%" PRId64 "}\n", tb_reader_ticks_to_ns(r, tb_rd_ticks_end(e)));
				}
			} else {
				*p++ = '[';
				p = put_time(p, r, tb_rd_ticks(e), raw);
				memcpy(p, "] (cpu ", 7);
				p = put_u(p + 7, tb_rd_cpu(e), 1);
				*p++ = ')';
				*p++ = ' ';
				if (kind == TB_RD_EVENT) {
					size_t nl = strlen(name);
					p = put_u(p, tb_rd_pid(e), 1);
					*p++ = '/';
					p = put_u(p, tb_rd_tid(e), 1);
					*p++ = ' ';
					memcpy(p, name, nl);
					p += nl;
					memcpy(p, ": { ", 4);
					p += 4;
					n = tb_rd_format_fields(e, 0, p, room - (size_t)(p - line));
					if (n > room - (size_t)(p - line))
						goto grow;
					p += n;
					memcpy(p, " }\n", 3);
					p += 3;
				} else {
					uint64_t c = tb_rd_count(e);
					p += sprintf(p, "%s: ", tb_reader_stream_file(r, tb_rd_stream(e)));
					if (kind == TB_RD_DISCARDED_PACKETS)
						p += sprintf(p, "LOST %" PRIu64 " packet%s", c, c == 1 ? "" : "s");
					else if (c)
						p += sprintf(p, "DISCARDED %" PRIu64 " event%s", c, c == 1 ? "" : "s");
					else
						p += sprintf(p, "MAY HAVE DISCARDED events (count unknown)");
					p += sprintf(p, " between [");
					p = put_time(p, r, tb_rd_ticks(e), raw);
					p += sprintf(p, "] and [");
					p = put_time(p, r, tb_rd_ticks_end(e), raw);
					p += sprintf(p, "]\n");
				}
			}
			fwrite(line, 1, (size_t)(p - line), stdout);
			break;
grow:
			cap *= 4;
			free(line);
			line = malloc(cap);
			if (!line)
				break;
		}
	}
	free(line);
	int partial = tb_reader_ndiags(r) != 0;
	tb_reader_close(r);
	if (fflush(stdout) || ferror(stdout))
		return cli_error("dump", "write error on standard output");
	return partial ? TB_EXIT_PARTIAL : TB_EXIT_OK;
}
