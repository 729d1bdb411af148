/* SPDX-License-Identifier: MIT */
/*
 * test_profile_convert_folded_and_chrome - `tracebuf convert` of a synthetic
 * profile trace (profile_report_trace.c): --to folded writes exactly one
 * line "process;root;...;leaf COUNT" per distinct stack, sorted, the
 * process named by its exe's basename, counts in periods (1 + overrun), the
 * samples with an invalid PC left out; to standard output without -o.
 * --to chrome stays valid Chrome JSON with every sample an instant named by
 * its leaf function, cat "profile", its symbolised stack innermost first in
 * args, the invalid ones named "[invalid pc]", and counted in
 * tracebufSummary; the other events are unchanged instants.  --to folded on
 * a trace that is not a profile is an error.
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
	char dir[512], out[512], err[512], file[512], args[1400];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(file, sizeof file, "%s/stacks.folded", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS"); /* no network lookups from the tests */
	prt_standard_trace(dir, 1);

	snprintf(args, sizeof args, "report --profile --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile");
	if (tbtrace_file_has(out, "\"unavailable\":\"")) {
		snprintf(args, sizeof args, "convert '%s' --to folded", dir);
		CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(out, ";[unknown]") == 0, "folded");
		SKIP("tracebuf was built without libdw: symbol names cannot be checked");
	}

	/* folded, to a file */
	snprintf(args, sizeof args, "convert '%s' --to folded -o '%s'", dir, file);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "convert --to folded -o");
	CHECK(tbtrace_file_has(err, "50 samples -> ") && tbtrace_file_has(err, "4 distinct stacks; 2 with an invalid PC left out"),
	      "folded summary on stderr (TB_KEEP=1 keeps %s)", err);
	char want[2048];
	const char *e = prt_exe_base();
	snprintf(want, sizeof want,
		 "%s;prt_top;prt_mid 5\n"
		 "%s;prt_top;prt_mid;prt_hot_a 30\n"
		 "%s;prt_top;prt_mid;prt_hot_b 10\n"
		 "%s;prt_top;prt_rec;prt_rec;prt_rec 5\n",
		 e, e, e, e);
	char *got = prt_slurp(file);
	CHECK(got && !strcmp(got, want), "folded output:\n%s\nwant:\n%s", got ? got : "(none)", want);
	free(got);

	/* folded to standard output (the default) */
	snprintf(args, sizeof args, "convert -q --to folded '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "convert --to folded (stdout)");
	got = prt_slurp(out);
	CHECK(got && !strcmp(got, want), "folded on stdout:\n%s", got ? got : "(none)");
	free(got);
	got = prt_slurp(err);
	CHECK(got && !got[0], "-q: nothing on stderr, got %s", got ? got : "?");
	free(got);

	/* chrome */
	snprintf(args, sizeof args, "convert '%s' --to chrome -o '%s'", dir, file);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "convert --to chrome");
	CHECK(prt_json_valid(file) != 1, "chrome output is not valid JSON (TB_KEEP=1 keeps %s)", file);
	CHECK(tbtrace_file_has(err, "50 profile samples as instants named by their leaf function (2 with an invalid PC)"),
	      "chrome summary on stderr");
	int ns = prt_count(file, "\"args\":{\"stack\":[") + prt_count(file, "\"args\":{\"invalid\":");
	CHECK(ns == 50, "50 sample instants, got %d", ns);
	CHECK(prt_count(file, "{\"name\":\"prt_hot_a\",\"cat\":\"profile\",\"ph\":\"i\"") == 28, "28 prt_hot_a instants");
	CHECK(prt_count(file, "{\"name\":\"prt_hot_b\",\"cat\":\"profile\",\"ph\":\"i\"") == 10, "10 prt_hot_b instants");
	CHECK(prt_count(file, "{\"name\":\"[invalid pc]\",\"cat\":\"profile\"") == 2, "2 invalid instants");
	CHECK(prt_count(file, "\"args\":{\"stack\":[\"prt_hot_a\",\"prt_mid\",\"prt_top\"],") == 28, "hot_a stacks");
	CHECK(prt_count(file, "\"args\":{\"stack\":[\"prt_rec\",\"prt_rec\",\"prt_rec\",\"prt_top\"],") == 5, "rec stacks");
	CHECK(prt_count(file, "\"invalid\":\"PC 0\"") == 1 && prt_count(file, "\"invalid\":\"PC in no recorded mapping\"") == 1,
	      "invalid reasons");
	CHECK(prt_json_has(file, "{\"name\":\"prt_hot_a\",\"cat\":\"profile\"", "\"pid\":4242,\"tid\":4242,"),
	      "samples on their thread's track");
	CHECK(prt_count(file, "{\"name\":\"app:tick\",\"cat\":\"app\",\"ph\":\"i\"") == 3, "other events unchanged");
	CHECK(prt_count(file, "{\"name\":\"profile:map\",\"cat\":\"profile\",\"ph\":\"i\"") > 0, "maps kept as instants");
	CHECK(tbtrace_file_has(file, "\"profile_samples\":50,\"profile_samples_invalid_pc\":2}"), "tracebufSummary");

	/* a trace without samples: folded is an error; chrome has no profile summary */
	char std[512], truth[512];
	snprintf(std, sizeof std, "%s/std", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	tbtrace_cli_trace(std, truth);
	snprintf(args, sizeof args, "convert '%s' --to folded", std);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "has no profile:sample events"), "folded of a non-profile");
	snprintf(args, sizeof args, "convert '%s' --to chrome -o '%s'", std, file);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && !tbtrace_file_has(file, "profile_samples") &&
		      !tbtrace_file_has(err, "profile samples"),
	      "chrome of a non-profile trace");
	snprintf(args, sizeof args, "convert '%s' --to svg", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "chrome, perfetto, folded and speedscope"), "--to svg");
	CHECK(tbtrace_cli_run("convert --help", out, err) == 0 && tbtrace_file_has(out, "--to FORMAT"), "--help");
	printf("ok\n");
	return 0;
}
