/* SPDX-License-Identifier: MIT */
/*
 * test_profile_report_ranks_self_and_total - `tracebuf report --profile` on a
 * synthetic profile trace whose stacks are real addresses of this executable
 * (profile_report_trace.c) in known proportions: the self and total tables
 * rank the functions and give their percentages exactly (a sample with timer
 * overruns counts 1 + overrun; total counts a function once per sample even
 * under recursion; a PC 0 and a PC in no mapping are invalid and left out),
 * --top cuts the tables, --threads adds one pair per thread, the counters
 * come from the trace without profile:counters and from the sampler with
 * them, --format json is valid JSON with the same numbers.  Without
 * --profile, report still summarises the trace (the profile classes in the
 * class table); --profile on a trace that is not a profile is an error.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace_cli.h"

struct want {
	const char *count, *function;
	double pct;
};

static void check_table(const char *out, const char *marker, int nth, const struct want *w, int n, int more)
{
	struct prt_row rows[64];
	int got = prt_table(out, marker, nth, rows, 64);
	CHECK(got == n, "table '%s' #%d has %d rows, want %d (TB_KEEP=1 keeps %s)", marker, nth, got, n, out);
	for (int i = 0; i < n; i++) {
		CHECK(!strcmp(rows[i].function, w[i].function) && !strcmp(rows[i].count, w[i].count) &&
			      rows[i].pct > w[i].pct - 0.006 && rows[i].pct < w[i].pct + 0.006,
		      "table '%s' #%d row %d: %s %s %.2f, want %s %s %.2f", marker, nth, i, rows[i].count,
		      rows[i].function, rows[i].pct, w[i].count, w[i].function, w[i].pct);
		CHECK(!strcmp(rows[i].module, prt_exe_base()), "row %s: module %s, want %s", rows[i].function,
		      rows[i].module, prt_exe_base());
	}
	if (more) {
		char s[64];
		snprintf(s, sizeof s, "... %d more (--top 0 shows all)", more);
		CHECK(tbtrace_file_has(out, s), "'%s' missing", s);
	}
}

int main(void)
{
	char dir[512], out[512], err[512], args[1400];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS"); /* no network lookups from the tests */
	prt_standard_trace(dir, 0);

	snprintf(args, sizeof args, "report --profile --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile --format json");
	int v = prt_json_valid(out);
	CHECK(v != 1, "report --profile --format json is not valid JSON (TB_KEEP=1 keeps %s)", out);
	if (tbtrace_file_has(out, "\"unavailable\":\"")) {
		/* built without libdw: addresses only, and the report says why */
		CHECK(prt_json_has(out, "\"function\":\"[unknown]\"", "\"label\":\"" ), "unknown functions");
		snprintf(args, sizeof args, "report --profile '%s'", dir);
		CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(out, "symbols   none: tracebuf was built without"),
		      "the text report says why there are no symbols");
		SKIP("tracebuf was built without libdw: symbol names cannot be checked");
	}
	/* counters from the trace: 50 samples (52 periods), 1 PC 0, 1 PC in no mapping */
	static const char *json_want[] = {
		"\"samples\":50,\"periods\":52,\"valid_samples\":48,\"valid_periods\":50,",
		"\"threads\":2,\"processes\":1,",
		("\"counters\":{\"source\":\"trace\",\"received\":50,\"lost\":0,\"invalid_pc\":2,\"invalid_pc_zero\":1,"
		 "\"invalid_pc_unmapped\":1,\"aborted\":2,\"truncated\":1,\"overruns\":2,"),
		"\"hz\":999,\"unwinder\":\"fp\",\"maps\":",
		"\"symbols\":{\"backend\":\"libdw ",
		"\"problems\":[]",
	};
	for (size_t i = 0; i < sizeof json_want / sizeof json_want[0]; i++)
		CHECK(tbtrace_file_has(out, json_want[i]), "json lacks %s (TB_KEEP=1 keeps %s)", json_want[i], out);
	/* self: the first entry of "self" is prt_hot_a 30 of 50; total: prt_top 50 */
	CHECK(prt_json_has(out, "\"self\":[{\"function\":\"prt_hot_a\"", "\"samples\":30,\"percent\":60.00}"), "json self[0]");
	CHECK(prt_json_has(out, "\"total\":[{\"function\":\"prt_top\"", "\"samples\":50,\"percent\":100.00}"), "json total[0]");
	CHECK(!tbtrace_file_has(out, "\"by_thread\""), "by_thread only with --threads");

	snprintf(args, sizeof args, "report --profile '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile");
	static const struct want self[] = {
		{ "30", "prt_hot_a", 60.00 }, { "10", "prt_hot_b", 20.00 }, { "5", "prt_mid", 10.00 }, { "5", "prt_rec", 10.00 },
	};
	static const struct want total[] = {
		{ "50", "prt_top", 100.00 }, { "45", "prt_mid", 90.00 }, { "30", "prt_hot_a", 60.00 },
		{ "10", "prt_hot_b", 20.00 }, { "5", "prt_rec", 10.00 },
	};
	check_table(out, "self:", 0, self, 4, 0);
	check_table(out, "total:", 0, total, 5, 0);
	static const char *text_want[] = {
		"profile   50 samples (52 periods with the timer overruns) over ",
		" at 999 Hz\n",
		"2 threads in 1 process; unwinder fp\n",
		"counters  from the trace: no process wrote profile:counters",
		"  received                       50\n",
		"  invalid PC                      2  (1 with PC 0, 1 in no recorded mapping)\n",
		"  backtrace aborted               2\n",
		"  truncated                       1\n",
		"  timer overruns                  2\n",
		"(% of the 50 with a valid PC)",
	};
	for (size_t i = 0; i < sizeof text_want / sizeof text_want[0]; i++)
		CHECK(tbtrace_file_has(out, text_want[i]), "text lacks \"%s\" (TB_KEEP=1 keeps %s)", text_want[i], out);
	CHECK(!tbtrace_file_has(out, "thread 4242"), "per-thread tables only with --threads");

	/* --top 2 */
	snprintf(args, sizeof args, "report --profile --top 2 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "--top 2");
	check_table(out, "self:", 0, self, 2, 2);
	check_table(out, "total:", 0, total, 2, 3);

	/* --threads: thread 4242 (35 periods) first, then 4243 (15) */
	snprintf(args, sizeof args, "report --profile --threads '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "--threads");
	char head[256];
	snprintf(head, sizeof head, "thread 4242 (pid 4242 %s): 35 samples", prt_exe_base());
	CHECK(tbtrace_file_has(out, head), "'%s' missing", head);
	snprintf(head, sizeof head, "thread 4243 (pid 4242 %s): 15 samples", prt_exe_base());
	CHECK(tbtrace_file_has(out, head), "'%s' missing", head);
	static const struct want t1_self[] = { { "30", "prt_hot_a", 85.71 }, { "5", "prt_mid", 14.29 } };
	static const struct want t1_total[] = { { "35", "prt_mid", 100.00 }, { "35", "prt_top", 100.00 },
						{ "30", "prt_hot_a", 85.71 } };
	static const struct want t2_self[] = { { "10", "prt_hot_b", 66.67 }, { "5", "prt_rec", 33.33 } };
	static const struct want t2_total[] = { { "15", "prt_top", 100.00 }, { "10", "prt_hot_b", 66.67 },
						{ "10", "prt_mid", 66.67 }, { "5", "prt_rec", 33.33 } };
	/* markers: "self" / "total" lines of the thread sections (after the global "self:" / "total:") */
	check_table(out, "self\n", 0, t1_self, 2, 0);
	check_table(out, "total\n", 0, t1_total, 3, 0);
	check_table(out, "self\n", 1, t2_self, 2, 0);
	check_table(out, "total\n", 1, t2_total, 4, 0);
	snprintf(args, sizeof args, "report --profile --threads=1 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(out, "... 1 more thread (--threads=0 shows all)"),
	      "--threads=1");
	snprintf(args, sizeof args, "report --profile --threads --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "--threads --format json");
	CHECK(prt_json_valid(out) != 1, "--threads json is not valid JSON (TB_KEEP=1 keeps %s)", out);
	CHECK(prt_json_has(out, "\"by_thread\":[{\"pid\":4242,\"tid\":4242,", "\"samples\":33,\"periods\":35,"),
	      "json by_thread[0]");

	/* with profile:counters, the sampler's counters (the PC in no mapping is still added) */
	prt_standard_trace(dir, 1);
	snprintf(args, sizeof args, "report --profile '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile (counters)");
	static const char *ctr_want[] = {
		"counters  from the sampler (profile:counters of 1 process)\n",
		"  received                       60\n",
		"  lost to overflow                3\n",
		"  invalid PC                      2  (1 with PC 0, 1 in no recorded mapping)\n",
		"  backtrace aborted               4\n",
		"  truncated                       1\n",
		"  timer overruns                  2\n",
	};
	for (size_t i = 0; i < sizeof ctr_want / sizeof ctr_want[0]; i++)
		CHECK(tbtrace_file_has(out, ctr_want[i]), "text lacks \"%s\" (TB_KEEP=1 keeps %s)", ctr_want[i], out);
	check_table(out, "self:", 0, self, 4, 0);

	/* without --profile: the ordinary report, the profile classes in its class table */
	snprintf(args, sizeof args, "report '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report");
	CHECK(tbtrace_file_has(out, "  profile:sample ") && tbtrace_file_has(out, "  profile:map ") &&
		      !tbtrace_file_has(out, "self:"),
	      "plain report of a profile trace");

	/* usage and errors */
	snprintf(args, sizeof args, "report --profile --top x '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "--top x is a usage error");
	snprintf(args, sizeof args, "report --profile --format xml '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2, "--format xml is a usage error");
	char std[512], truth[512];
	snprintf(std, sizeof std, "%s/std", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	tbtrace_cli_trace(std, truth);
	snprintf(args, sizeof args, "report --profile '%s'", std);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "has no profile:sample events"),
	      "--profile on a trace without samples");
	CHECK(tbtrace_cli_run("report --help", out, err) == 0 && tbtrace_file_has(out, "--profile"), "--help");
	printf("ok\n");
	return 0;
}
