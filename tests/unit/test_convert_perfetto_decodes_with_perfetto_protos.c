/* SPDX-License-Identifier: MIT */
/*
 * test_convert_perfetto_decodes_with_perfetto_protos - `tracebuf convert
 * --to perfetto` writes a trace that `protoc --decode` reads with
 * Perfetto's own .proto files (tests/perfetto, vendored) without a field
 * Perfetto does not define, and that says what the trace says
 * (tests/lib/perfetto_check.py): on the standard CLI trace, every event
 * once at its exact ns on its thread's track (process and thread names,
 * CPU tracks for events without a thread record), interned names,
 * categories and annotation names, slices balanced with the span rules,
 * a loss slice per loss notice, the lost-events and events/s counters;
 * compressed and --no-compress files hold the same packets; --max-events
 * cuts with a note; on a profile trace, one perf sample per valid sample
 * whose interned callstack resolves to the folded stacks.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace_cli.h"

/* 1 when the (binary) file holds s */
static int bin_has(const char *path, const char *s)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f)
		fclose(f);
	return memmem(buf, n, s, strlen(s)) != NULL;
}

int main(void)
{
	char dir[512], truth[512], out[512], err[512], pf[512], plain[512], args[3000], protos[600];
	if (system("protoc --version >/dev/null 2>&1") != 0)
		SKIP("protoc is not installed (apt-get install protobuf-compiler)");
	const char *src = getenv("TB_SRC");
	if (!src)
		SKIP("TB_SRC not set (run through ctest)");
	snprintf(protos, sizeof protos, "%s/tests/perfetto", src);
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(pf, sizeof pf, "%s/trace.pftrace", tbt_tmpdir());
	snprintf(plain, sizeof plain, "%s/plain.pftrace", tbt_tmpdir());
	tbtrace_cli_trace(dir, truth);

	snprintf(args, sizeof args, "convert '%s' --to perfetto -o '%s'", dir, pf);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(tbtrace_file_has(err, "1306 events") && tbtrace_file_has(err, "1 unmatched end (kept"), "summary on stderr");
	snprintf(args, sizeof args, "convert '%s' --to perfetto --no-compress -o '%s'", dir, plain);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	snprintf(args, sizeof args, "trace '%s' '%s' '%s'", protos, plain, truth);
	CHECK(tbtrace_py("perfetto_check.py", args) == 0, "plain perfetto output is wrong (TB_KEEP=1 keeps %s)", plain);
	if (!tbtrace_file_has(err, "not compressed")) {
		snprintf(args, sizeof args, "trace '%s' '%s' '%s'", protos, pf, truth);
		CHECK(tbtrace_py("perfetto_check.py", args) == 0, "compressed perfetto output is wrong");
		snprintf(args, sizeof args, "same '%s' '%s' '%s'", protos, pf, plain);
		CHECK(tbtrace_py("perfetto_check.py", args) == 0, "compressed and plain differ");
	}
	/* cut: the note on stderr and in the trace */
	snprintf(args, sizeof args, "convert '%s' --to perfetto --no-compress --max-events 10 -o '%s'", dir, plain);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(err, "cut after --max-events 10") &&
		      tbtrace_file_has(err, "the 1296 later events are not in this file") &&
		      bin_has(plain, "the 1296 later events are not in this file"),
	      "--max-events 10");
	/* usage */
	snprintf(args, sizeof args, "convert '%s' --to perfetto", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "-o FILE is required"), "no -o");
	snprintf(args, sizeof args, "convert '%s' --to perfetto -o /nonexistent/dir/x", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "cannot create"), "unwritable output");

	/* a profile: perf samples with interned callstacks */
	unsetenv("DEBUGINFOD_URLS");
	char prof[512], folded[512];
	snprintf(prof, sizeof prof, "%s/prof", tbt_tmpdir());
	snprintf(folded, sizeof folded, "%s/prof.folded", tbt_tmpdir());
	prt_standard_trace(prof, 1);
	snprintf(args, sizeof args, "convert -q '%s' --to folded -o '%s'", prof, folded);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "folded");
	if (tbtrace_file_has(folded, "+0x"))
		SKIP("tracebuf was built without libdw: the profile's names cannot be checked");
	snprintf(args, sizeof args, "convert '%s' --to perfetto --no-compress -o '%s'", prof, plain);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(err, "50 profile samples as perf samples") &&
		      tbtrace_file_has(err, "2 with an invalid PC left out"),
	      "profile to perfetto");
	/* one sample of [hot_a, mid, top] has overrun 2: folded counts 30 periods for 28 samples */
	snprintf(args, sizeof args, "profile '%s' '%s' '%s' 'prt_top;prt_mid;prt_hot_a=2'", protos, plain, folded);
	CHECK(tbtrace_py("perfetto_check.py", args) == 0, "perfetto profile output is wrong");
	printf("ok\n");
	return 0;
}
