/* SPDX-License-Identifier: MIT */
/*
 * test_reader_cli_convert_chrome - `tracebuf convert --to chrome` on the
 * standard CLI trace writes valid Chrome Trace Event JSON: named processes
 * and threads, every event exactly once (instant, B or E), B/E balanced and
 * nested per thread, the unmatched end kept as an instant and counted, the
 * open begin closed at the trace end and the inner begin closed by its
 * outer end, both counted; relative and absolute timestamps.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tbtest.h"
#include "tbtrace_cli.h"

int main(void)
{
	char dir[512], truth[512], out[512], err[512], json[512], args[2000];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(json, sizeof json, "%s/trace.json", tbt_tmpdir());
	tbtrace_cli_trace(dir, truth);

	for (int absolute = 0; absolute < 2; absolute++) {
		snprintf(args, sizeof args, "convert '%s' --to chrome -o '%s'%s", dir, json, absolute ? " --absolute" : "");
		CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
		CHECK(tbtrace_file_has(err, "1306 events") && tbtrace_file_has(err, "1 unmatched end (kept") &&
		      tbtrace_file_has(err, "1 span closed at the trace end"), "summary on stderr");
		snprintf(args, sizeof args, "chrome '%s' '%s'", truth, json);
		CHECK(tbtrace_cli_check(args) == 0, "chrome output (%s times) is wrong", absolute ? "absolute" : "relative");
	}
	/* to standard output */
	snprintf(args, sizeof args, "convert --to chrome -o - -q '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "-o -");
	snprintf(args, sizeof args, "chrome '%s' '%s'", truth, out);
	CHECK(tbtrace_cli_check(args) == 0, "chrome output on stdout");
	/* usage */
	snprintf(args, sizeof args, "convert '%s' -o '%s'", dir, json);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "--to chrome|perfetto|folded|speedscope is required"), "no --to");
	snprintf(args, sizeof args, "convert '%s' --to ctf -o '%s'", dir, json);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "--to ctf");
	CHECK(tbtrace_cli_run("convert --help", out, err) == 0 && tbtrace_file_has(out, "_begin"), "--help");
	snprintf(args, sizeof args, "convert '%s' --to chrome -o /nonexistent/dir/x.json", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "cannot create"), "unwritable output");
	printf("ok\n");
	return 0;
}
