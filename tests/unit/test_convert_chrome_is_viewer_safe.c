/* SPDX-License-Identifier: MIT */
/*
 * test_convert_chrome_is_viewer_safe - `tracebuf convert --to chrome`
 * writes JSON that a JavaScript viewer reads without changing a value:
 * integers beyond Number.MAX_SAFE_INTEGER (2^53 - 1) in either direction
 * are strings with their exact digits, smaller ones and doubles stay
 * numbers, strings of digits stay strings; trace_start_ns is a string;
 * processes are named from the metadata and threads "tid N".
 * --max-events N and --begin/--end (absolute, seconds, +offset) keep
 * exactly the events asked for and say what was cut in tracebufSummary
 * and on stderr; bad values are usage errors.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_cli.h"

static void write_trace(const char *dir)
{
	struct tb_event_desc d[2];
	tbtrace_desc(&d[1], 1, "app:values", 8, "u64:max_safe", "u64:two53", "u64:u64max", "i64:i64min", "i64:neg",
		     "f64:f", "str:s", "u32:i");
	struct tbtrace_env env[] = { { "proc_300", "comm=svc exe=/usr/bin/svc", 0 } };
	struct tbtrace_opts o = { .events = d, .nevents = 2, .env = env, .nenv = 1 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s = tbtrace_stream(t, "chan", 0, 0);
	tbtrace_set_thread(s, 300, 301);
	for (uint32_t i = 0; i < 10; i++) { /* one event per second, at +0.5 s, +1.5 s, ... */
		struct tbtrace_buf b = { .n = 0 };
		tbb_u64(&b, 9007199254740991ull);
		tbb_u64(&b, 9007199254740992ull);
		tbb_u64(&b, UINT64_MAX);
		tbb_u64(&b, (uint64_t)INT64_MIN);
		tbb_u64(&b, (uint64_t)-9007199254740991ll);
		tbb_f64(&b, 1.5e300);
		tbb_str(&b, "12345678901234567890");
		tbb_u32(&b, i);
		tbtrace_event(s, 1, 500000000ull + i * 1000000000ull, b.b, b.n);
	}
	tbtrace_close(t);
}

int main(void)
{
	char dir[512], out[512], err[512], json[512], args[2000];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(json, sizeof json, "%s/t.json", tbt_tmpdir());
	write_trace(dir);

	snprintf(args, sizeof args, "convert '%s' --to chrome -o '%s'", dir, json);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(prt_json_valid(json) != 1, "not valid JSON (TB_KEEP=1 keeps %s)", json);
	CHECK(prt_count(json, "\"max_safe\":9007199254740991,") == 10, "2^53 - 1 stays a number");
	CHECK(prt_count(json, "\"two53\":\"9007199254740992\",") == 10, "2^53 as a string");
	CHECK(prt_count(json, "\"u64max\":\"18446744073709551615\",") == 10, "2^64 - 1 as a string");
	CHECK(prt_count(json, "\"i64min\":\"-9223372036854775808\",") == 10, "-2^63 as a string");
	CHECK(prt_count(json, "\"neg\":-9007199254740991,") == 10, "-(2^53 - 1) stays a number");
	CHECK(prt_count(json, "\"f\":1.5e+300,") == 10, "a double stays a number");
	CHECK(prt_count(json, "\"s\":\"12345678901234567890\",") == 10, "a string of digits stays as it is");
	CHECK(tbtrace_file_has(json, "\"trace_start_ns\":\"1700000000"), "trace_start_ns as a string");
	CHECK(tbtrace_file_has(json, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":300,\"tid\":0,\"args\":{\"name\":\"svc\"}}"),
	      "process name");
	CHECK(tbtrace_file_has(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":300,\"tid\":301,\"args\":{\"name\":\"tid 301\"}}"),
	      "thread name");
	CHECK(!tbtrace_file_has(json, "\"cut\"") && !tbtrace_file_has(err, "cut"), "nothing cut, nothing said");

	/* --max-events */
	snprintf(args, sizeof args, "convert '%s' --to chrome --max-events 3 -o '%s'", dir, json);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(prt_json_valid(json) != 1 && prt_count(json, "\"name\":\"app:values\"") == 3, "3 events kept");
	CHECK(tbtrace_file_has(json, "\"cut\":\"cut after --max-events 3 at 2023-11-14T22:13:23.500000000Z: the 7 later "
				     "events are not in this file\",\"events_before_window\":0,\"events_after_window\":7}"),
	      "the cut in tracebufSummary");
	CHECK(tbtrace_file_has(err, "tracebuf convert: cut after --max-events 3 at 2023-11-14T22:13:23.500000000Z"),
	      "the cut on stderr");

	/* --begin/--end: +offsets (from the trace start: the first packet's begin, the event at 0.5 s), seconds and ns */
	const char *windows[][3] = {
		{ "--begin +2s --end +5s", "4", "the 4 events after it" },      /* 2.5 .. 5.5 */
		{ "--begin 1700000006.5", "4", NULL },                           /* 6.5 .. 9.5 */
		{ "--end 1700000001500000000", "2", "the 8 events after it" },  /* 0.5, 1.5 (inclusive) */
		{ "--begin +2s --max-events 1", "1", "the 7 later events" },   /* 2.5; 3.5 .. 9.5 */
	};
	for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++) {
		snprintf(args, sizeof args, "convert '%s' --to chrome %s -o '%s'", dir, windows[i][0], json);
		CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
		CHECK(prt_json_valid(json) != 1, "%s: not valid JSON", windows[i][0]);
		int n = prt_count(json, "\"name\":\"app:values\"");
		CHECK(n == atoi(windows[i][1]), "%s: %d events, want %s", windows[i][0], n, windows[i][1]);
		if (windows[i][2])
			CHECK(tbtrace_file_has(json, windows[i][2]) && tbtrace_file_has(err, windows[i][2]), "%s: the note",
			      windows[i][0]);
		if (strstr(windows[i][0], "--begin"))
			CHECK(tbtrace_file_has(json, "events before --begin are not in this file"), "%s: before", windows[i][0]);
	}
	/* usage */
	const char *bad[] = { "--max-events 0", "--max-events -1", "--max-events x", "--begin yesterday",
			      "--begin +5s --end +2s" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(args, sizeof args, "convert '%s' --to chrome %s -o '%s'", dir, bad[i], json);
		CHECK(tbtrace_cli_run(args, out, err) == 2, "%s: not a usage error", bad[i]);
	}
	snprintf(args, sizeof args, "convert '%s' --to folded --begin +1s", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "not to --to folded"), "folded --begin");
	printf("ok\n");
	return 0;
}
