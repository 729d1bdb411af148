/* SPDX-License-Identifier: MIT */
/*
 * test_reader_cli_dump_filters - `tracebuf dump` on the standard CLI trace:
 * --format json is valid JSON Lines, and --event/--cpu/--tid/--from/--to
 * (alone and combined) print exactly the events the ground truth selects,
 * in time order; loss notices only when no event/thread filter is given.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tbtest.h"
#include "tbtrace_cli.h"

int main(void)
{
	char dir[512], truth[512], out[512], err[512];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	tbtrace_cli_trace(dir, truth);

	static const struct { const char *dump, *check; } cases[] = {
		{ "", "" },
		{ "--event 'http:*'", "--event 'http:*'" },
		{ "--event app:tick,db:query_end --event app:msg", "--event app:tick,db:query_end --event app:msg" },
		{ "--cpu 1", "--cpu 1" },
		{ "--cpu 7", "--cpu 7" },
		{ "--tid 101", "--tid 101" },
		{ "--tid 0", "--tid 0" },
		{ "--from 1700000001000000000 --to 1700000001500000000",
		  "--from 1700000001000000000 --to 1700000001500000000" },
		{ "--from 1700000001.0205 --to 1700000001.03s", "--from 1700000001020500000 --to 1700000001030000000" },
		{ "--from 1700000002000002010", "--from 1700000002000002010" },
		{ "--event 'http:request_*' --cpu 1 --tid 101 --to 1700000001.5",
		  "--event 'http:request_*' --cpu 1 --tid 101 --to 1700000001500000000" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[1024], chk[2048];
		snprintf(args, sizeof args, "dump --format json %s '%s'", cases[i].dump, dir);
		int rc = tbtrace_cli_run(args, out, err);
		CHECK(rc == 0, "tracebuf %s exited %d", args, rc);
		snprintf(chk, sizeof chk, "dump '%s' '%s' %s", truth, out, cases[i].check);
		CHECK(tbtrace_cli_check(chk) == 0, "tracebuf %s printed the wrong subset", args);
	}
	/* text output: one line per event and notice, same count as json */
	char args[1024];
	snprintf(args, sizeof args, "dump --cpu 1 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "text dump");
	/* the thread named as the trace knows it: no thread_name record, its process's comm (proc_100) */
	CHECK(tbtrace_file_has(out, "(cpu 1) 100/101 \"web\" http:request_begin: { url = \"/index.html?q=\\\"x\\\"\" }"),
	      "text line of a begin event");
	/* --epoch: the former line, for scripts */
	snprintf(args, sizeof args, "dump --epoch --cpu 1 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "text dump --epoch");
	CHECK(tbtrace_file_has(out, "] (cpu 1) 100/101 http:request_begin: { url = \"/index.html?q=\\\"x\\\"\" }"),
	      "--epoch line of a begin event");
	CHECK(tbtrace_file_has(out, "[1700000001."), "--epoch: seconds since the epoch");
	snprintf(args, sizeof args, "dump --cpu 1 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "text dump");
	CHECK(tbtrace_file_has(out, "chan_1: DISCARDED 7 events (ring full 7) between ["), "text line of the loss notice");
	/* usage errors */
	snprintf(args, sizeof args, "dump --cpu x '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "bad --cpu is a usage error");
	snprintf(args, sizeof args, "dump --from yesterday '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "bad --from is a usage error");
	CHECK(tbtrace_cli_run("dump --help", out, err) == 0 && tbtrace_file_has(out, "--event PATTERN"), "--help");
	printf("ok\n");
	return 0;
}
