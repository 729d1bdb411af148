/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - `tracebuf convert DIR --to FORMAT`: the options, then one
 * converter per file (cli_convert.h):
 *
 *   chrome      convert_chrome.c      Chrome Trace Event JSON (Perfetto UI, chrome://tracing)
 *   perfetto    convert_perfetto.c    Perfetto's protobuf trace (TracePacket / TrackEvent)
 *   folded      convert_folded.c      folded stacks of a profile (flamegraph.pl, speedscope)
 *   speedscope  convert_speedscope.c  speedscope's JSON file format, one profile per thread
 *
 * The formats are described in docs/CONVERT.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_demangle.h"
#include "cli_convert.h"

static const struct {
	const char *name;
	cv_fn fn;
	int timeline;     /* takes --begin/--end/--max-events/--absolute */
	int needs_output; /* -o is required (binary or large output) */
	/* output bytes per byte of the trace's stream files, measured on tracebuf-workload traces
	 * (32 bytes per event, 600,000 events): chrome 115 MB from 19.4 MB; perfetto 14.7 MB
	 * deflated, 36.6 MB plain.  0: a summary of the trace (profiles), never large */
	double ratio;
} formats[] = {
	{ "chrome", convert_chrome, 1, 1, 6.0 },
	{ "perfetto", convert_perfetto, 1, 1, 0.8 },
	{ "folded", convert_folded, 0, 0, 0 },
	{ "speedscope", convert_speedscope, 0, 1, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf convert DIR --to chrome|perfetto -o FILE [--begin T] [--end T]\n"
		"                                 [--max-events N] [options]\n"
		"       tracebuf convert DIR --to folded [-o FILE]\n"
		"       tracebuf convert DIR --to speedscope -o FILE.json\n"
		"  chrome: the Chrome Trace Event format (a JSON object with \"traceEvents\")\n"
		"  for Perfetto UI (ui.perfetto.dev) and chrome://tracing.  One track per\n"
		"  thread; events are instants with their fields as args (integers beyond\n"
		"  2^53 as strings); NAME_begin ... NAME_end on one thread (e.g.\n"
		"  http:request_begin ... http:request_end) become a span NAME, nested per\n"
		"  thread; profile samples are instants named by their leaf function.\n"
		"  perfetto: Perfetto's own protobuf trace (TrackEvent): the same tracks,\n"
		"  spans and instants, counter tracks of the event rate and the losses per\n"
		"  CPU, profile samples as callstack samples; several times smaller.\n"
		"  folded: the samples of a `tracebuf profile` trace as folded stacks\n"
		"  (\"process;root;...;leaf COUNT\" per line) for flamegraph.pl, speedscope.\n"
		"  speedscope: a profile in speedscope's file format, one profile per thread,\n"
		"  weights in periods (1 + timer overruns) of the sampling interval.\n\n"
		"  --to FORMAT          chrome, perfetto, folded or speedscope\n"
		"  -o, --output FILE    output file ('-': standard output; folded: the default)\n"
		"  --begin T, --end T   chrome, perfetto: only the events in [T, T] (ns since\n"
		"                       the Unix epoch, seconds with '.' or 's', or +OFFSET\n"
		"                       from the trace start: +1.5s, +2000000ns)\n"
		"  --max-events N       chrome, perfetto: stop after N events (the file and\n"
		"                       stderr say where it was cut)\n"
		"  --absolute           chrome: ts in us since the Unix epoch (default: since\n"
		"                       the trace start; viewers keep ns only with relative times)\n"
		"  --no-compress        perfetto: plain packets (default: deflate-compressed\n"
		"                       packets, which Perfetto reads the same, but which\n"
		"                       `protoc --decode_raw` shows as one compressed blob each;\n"
		"                       ~2.5x larger)\n"
		"  --no-demangle        profile samples: C++ and Rust symbols as mangled\n"
		"                       (default: demangled, as c++filt shows them)\n"
		"  -q, --quiet          no diagnostics, no summary, no size warning on stderr\n"
		CLI_PROGRESS_USAGE
		"  -h, --help\n\n"
		"A file that will be larger than TRACEBUF_BIG_OUTPUT (1G) is announced before it\n"
		"is written, with its estimated size and the better format for that size.\n"
		"exit: 0 ok, 1 failure, 2 usage, 3 some input was damaged and skipped (see stderr)\n");
}

static void on_diag(void *arg, const struct tb_rd_diag *d)
{
	if (!*(int *)arg)
		cli_msg(stderr, "tracebuf convert: %s, offset %" PRIu64 ": %s", d->file, d->offset, d->what);
}

/* --begin/--end: absolute as dump's --from/--to, or +OFFSET from the trace start (rel = 1) */
static int parse_when(const char *s, int64_t *out, int *rel)
{
	*rel = s[0] == '+';
	return cli_parse_time(s + *rel, out);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "to", required_argument, 0, 't' },      { "output", required_argument, 0, 'o' },
		{ "absolute", no_argument, 0, 'a' },      { "quiet", no_argument, 0, 'q' },
		{ "begin", required_argument, 0, 'B' },   { "end", required_argument, 0, 'E' },
		{ "max-events", required_argument, 0, 'M' }, { "no-compress", no_argument, 0, 'Z' },
		{ "no-demangle", no_argument, 0, 'D' },   { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *to = NULL;
	struct cv_opts o = { .compress = 1 };
	int opt, rel_begin = 0, rel_end = 0, timeline_opt = 0;
	optind = 1;
	while ((opt = cli_getopt("convert", argc, argv, "t:o:qh", lo)) != -1) {
		switch (opt) {
		case 't': to = optarg; break;
		case 'o': o.out = optarg; break;
		case 'a': o.absolute = 1; timeline_opt = 1; break;
		case 'q': o.quiet = 1; break;
		case 'Z': o.compress = 0; break;
		case 'D': cli_demangle_set(0); break;
		case 'B': case 'E':
			if (parse_when(optarg, opt == 'B' ? &o.begin_ns : &o.end_ns, opt == 'B' ? &rel_begin : &rel_end))
				return cli_error("convert", "--%s %s: expected ns since the Unix epoch, seconds (1700000000.5 "
							    "or 12s) or +OFFSET from the trace start", opt == 'B' ? "begin" : "end",
						 optarg), TB_EXIT_USAGE;
			*(opt == 'B' ? &o.has_begin : &o.has_end) = 1;
			timeline_opt = 1;
			break;
		case 'M':
			if (cli_parse_uint(optarg, UINT64_MAX, &o.max_events) || !o.max_events)
				return cli_error("convert", "--max-events %s: expected a number > 0", optarg), TB_EXIT_USAGE;
			timeline_opt = 1;
			break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	size_t k = 0, nf = sizeof formats / sizeof formats[0];
	while (to && k < nf && strcmp(formats[k].name, to))
		k++;
	if (to && k == nf)
		return cli_error("convert", "--to %s: the output formats are chrome, perfetto, folded and speedscope", to),
		       TB_EXIT_USAGE;
	if (optind != argc - 1 || !to || (!o.out && formats[k].needs_output)) {
		if (optind == argc - 1)
			cli_error("convert", "%s", !to ? "--to chrome|perfetto|folded|speedscope is required"
						       : "-o FILE is required");
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	if (timeline_opt && !formats[k].timeline)
		return cli_error("convert", "--begin, --end, --max-events and --absolute apply to --to chrome and "
					    "--to perfetto, not to --to %s", to), TB_EXIT_USAGE;
	if (!o.out)
		o.out = "-";
	/* a flight recorder's snapshot: its trace/ (tools/cmd_snapshots.c) */
	char snap_trace[PATH_MAX + 16];
	o.dir = cli_flight_trace_dir("convert", argv[optind], snap_trace, sizeof snap_trace);
	if (!o.dir)
		return TB_EXIT_USAGE;
	char why[8400];
	if (cli_output_clobbers_input(o.out, o.dir, why, sizeof why))
		return cli_error("convert", "-o %s: %s (never written over its input)", o.out, why), TB_EXIT_USAGE;
	struct tb_reader_opts ro = { .size = sizeof ro, .diag = on_diag, .diag_arg = &o.quiet };
	struct tb_reader *r;
	int rc = tb_reader_open(o.dir, &ro, &r);
	if (rc)
		return cli_error("convert", "%s", tb_errmsg());
	uint64_t t0, t1;
	tb_reader_time_range(r, &t0, &t1);
	int64_t origin = tb_reader_ticks_to_ns(r, t0);
	if (rel_begin)
		o.begin_ns += origin;
	if (rel_end)
		o.end_ns += origin;
	if (o.has_begin && o.has_end && o.end_ns < o.begin_ns) {
		tb_reader_close(r);
		return cli_error("convert", "--end is before --begin"), TB_EXIT_USAGE;
	}
	if (!o.quiet) { /* a huge output is said before it is written */
		double share = 1.0;
		if ((o.has_begin || o.has_end) && t1 > t0) {
			int64_t b = o.has_begin ? o.begin_ns : origin, e = o.has_end ? o.end_ns : tb_reader_ticks_to_ns(r, t1);
			double span = (double)(tb_reader_ticks_to_ns(r, t1) - origin);
			share = span > 0 ? (double)(e - b) / span : 1.0;
			share = share < 0 ? 0 : share > 1 ? 1 : share;
		}
		int perfetto = !strcmp(formats[k].name, "perfetto");
		double ratio = perfetto && !o.compress ? 2.0 : formats[k].ratio;
		if (o.max_events) /* ~32 bytes of trace per event */
			share = fmin(share, (double)o.max_events * 32.0 / fmax(1.0, (double)cli_trace_bytes(r)));
		cli_big_output(r, "convert", o.out, !strcmp(to, "chrome") ? "Chrome JSON" : to, ratio, share,
			       perfetto ? NULL : "--to perfetto", 0.8);
	}
	rc = formats[k].fn(r, &o);
	if (rc == TB_EXIT_OK && tb_reader_ndiags(r))
		rc = TB_EXIT_PARTIAL;
	tb_reader_close(r);
	return rc;
}
