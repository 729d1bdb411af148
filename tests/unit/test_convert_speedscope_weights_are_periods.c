/* SPDX-License-Identifier: MIT */
/*
 * test_convert_speedscope_weights_are_periods - `tracebuf convert --to
 * speedscope` of the synthetic profile trace (profile_report_trace.c) is
 * speedscope's file format with one sampled profile per thread (busiest
 * first, named by process, pid and tid), stacks outermost first, and
 * weights in ms that count each sample as 1 + its timer overruns periods
 * of 1000/999 ms: per stack they sum to the folded output's count
 * (tests/lib/speedscope_check.py).  Samples with an invalid PC are left
 * out and counted on stderr; a trace that is not a profile is an error;
 * -o is required; the window options are refused.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace_cli.h"

int main(void)
{
	char dir[512], out[512], err[512], file[512], folded[512], args[2000];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(file, sizeof file, "%s/prof.speedscope.json", tbt_tmpdir());
	snprintf(folded, sizeof folded, "%s/prof.folded", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS");
	prt_standard_trace(dir, 1);

	snprintf(args, sizeof args, "convert -q '%s' --to folded -o '%s'", dir, folded);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "folded");
	snprintf(args, sizeof args, "convert '%s' --to speedscope -o '%s'", dir, file);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(tbtrace_file_has(err, "50 samples -> ") && tbtrace_file_has(err, "2 thread profiles") &&
		      tbtrace_file_has(err, "2 with an invalid PC left out"),
	      "summary on stderr (TB_KEEP=1 keeps %s)", err);
	CHECK(tbtrace_file_has(file, "\"name\":\"") && tbtrace_file_has(file, "(pid 4242, tid 4242)") &&
		      tbtrace_file_has(file, "(pid 4242, tid 4243)"),
	      "profiles named by thread");
	snprintf(args, sizeof args, "'%s' '%s' 999", file, folded);
	CHECK(tbtrace_py("speedscope_check.py", args) == 0, "speedscope output is wrong (TB_KEEP=1 keeps %s)", file);

	/* errors */
	char std[512], truth[512];
	snprintf(std, sizeof std, "%s/std", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	tbtrace_cli_trace(std, truth);
	snprintf(args, sizeof args, "convert '%s' --to speedscope -o '%s'", std, file);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "has no profile:sample events"), "not a profile");
	snprintf(args, sizeof args, "convert '%s' --to speedscope", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "-o FILE is required"), "no -o");
	snprintf(args, sizeof args, "convert '%s' --to speedscope --max-events 3 -o '%s'", dir, file);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "not to --to speedscope"), "--max-events");
	printf("ok\n");
	return 0;
}
