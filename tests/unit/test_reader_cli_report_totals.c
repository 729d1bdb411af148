/* SPDX-License-Identifier: MIT */
/*
 * test_reader_cli_report_totals - `tracebuf report` on the standard CLI
 * trace: --format json is one JSON object whose totals (events per class,
 * CPU and thread with process names, lost events/packets per CPU with their
 * ranges, span, busiest second, bytes) equal the ground truth; the text
 * output shows the same totals compactly.  A damaged first thread record
 * (pid = tid = 0xffffffff, the value the thread cache starts with) is counted
 * like any other thread (it crashed report once).
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_cli.h"

static void all_ones_thread_trace(const char *dir)
{
	struct tb_event_desc d[2];
	tbtrace_desc(&d[1], 1, "t:ev", 1, "u64:n");
	struct tbtrace_opts o = { .events = d, .nevents = 2 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s = tbtrace_stream(t, "chan", 0, 0);
	tbtrace_set_thread(s, UINT32_MAX, UINT32_MAX);
	for (uint64_t i = 0; i < 3; i++)
		tbtrace_event(s, 1, 1000 + i, &i, 8);
	tbtrace_close(t);
}

int main(void)
{
	char dir[512], truth[512], out[512], err[512], args[1200];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	tbtrace_cli_trace(dir, truth);

	snprintf(args, sizeof args, "report --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --format json");
	snprintf(args, sizeof args, "report '%s' '%s'", truth, out);
	CHECK(tbtrace_cli_check(args) == 0, "report json differs from the ground truth");

	snprintf(args, sizeof args, "report '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report");
	static const char *want[] = {
		"time     2023-11-14 22:13:20.000001010 .. 22:13:22.400006000 UTC (2.400 s)",
		"events   1,306 (544/s); 6 classes, 2 CPUs, 4 threads",
		"lost     7 events + 2 packets on 2 CPUs: ring full 7 (see below)",
		"busiest  second 2 (22:13:21.000001010 .. +1 s): 900 events",
		"  app:tick                   1,021",
		"    0           953",
		"  web                    100       101           253",
		"  db                     200       200           202",
		"  (no thread record)         -         -           100",
		"  cpu 1: 7 events in 1 range",
		"chan_1: 7 events (ring full 7)",
		"chan_0: 2 packets",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CHECK(tbtrace_file_has(out, want[i]), "text report lacks \"%s\" (TB_KEEP=1 keeps %s)", want[i], out);
	snprintf(args, sizeof args, "report --threads 1 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(out, "... 3 more threads"), "--threads 1");
	CHECK(tbtrace_cli_run("report --help", out, err) == 0 && tbtrace_file_has(out, "--format text|json"), "--help");
	CHECK(tbtrace_cli_run("report", out, err) == 2, "no DIR is a usage error");
	snprintf(args, sizeof args, "report --format xml '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "bad --format is a usage error");

	snprintf(dir, sizeof dir, "%s/ones", tbt_tmpdir());
	all_ones_thread_trace(dir);
	snprintf(args, sizeof args, "report '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(out, "4294967295 4294967295") &&
		      tbtrace_file_has(out, "events   3 "),
	      "report of a trace whose only thread is 0xffffffff/0xffffffff (TB_KEEP=1 keeps %s)", out);
	printf("ok\n");
	return 0;
}
