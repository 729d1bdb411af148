/* SPDX-License-Identifier: MIT */
/*
 * test_profile_report_maps_per_process - the samples of each process are
 * symbolised against that process's own profile:map records, as they were
 * when the sample was taken:
 *   - pid 100 maps this executable where it is; pid 200 maps it 1 TiB
 *     higher: the same functions at their own addresses in each, and an
 *     address valid only in the other process is an invalid PC;
 *   - pid 300 maps this executable, then (gen 1) libc's text at the same
 *     start: samples before the gen-1 map get this executable's symbols,
 *     samples after it libc's; a sample taken before any map of its process
 *     is looked up in the first map recorded after it;
 *   - pid 400 maps a file that does not exist: one diagnostic naming it,
 *     its addresses shown as libgone.so+FILE_OFFSET, the rest symbolised;
 *   - a return address is looked up at address - 1 (the caller of a
 *     noreturn call), a PC as is (a function's entry point);
 *   - process names: the exe's basename (profile:info), else the recorder's
 *     comm (metadata env), else "pid N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace_cli.h"

#define SHIFT 0x10000000000ull /* 1 TiB */

int main(void)
{
	char dir[512], out[512], err[512], args[1400];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS"); /* no network lookups from the tests */
	struct prt_addrs a;
	prt_addrs(&a);
	struct prt_map exe, libc;
	CHECK(prt_map_of(a.hot_a, &exe), "no mapping holds prt_hot_a");
	void *gp = dlsym(RTLD_DEFAULT, "getpid");
	CHECK(gp, "dlsym getpid: %s", dlerror());
	uint64_t getpid_addr = (uint64_t)(uintptr_t)gp;
	CHECK(prt_map_of(getpid_addr, &libc) && strcmp(libc.path, exe.path), "getpid is not in a mapped library");
	const char *libc_base = strrchr(libc.path, '/') ? strrchr(libc.path, '/') + 1 : libc.path;

	struct tbtrace_env env[] = { { .key = "proc_300", .str = "comm=cproc exe=/x/cproc attached_ns=1" } };
	struct tbtrace *t = prt_open(dir, env, 1);
	struct tbtrace_stream *c0 = tbtrace_stream(t, "chan", 0, 0), *c1 = tbtrace_stream(t, "chan", 0, 1);
	uint64_t ts = 1000;
	uint64_t sa[] = { a.hot_a, a.ra_hot_a, a.ra_mid_a };
	uint64_t sa_shift[] = { a.hot_a + SHIFT, a.ra_hot_a + SHIFT, a.ra_mid_a + SHIFT };
	uint64_t s_tail[] = { a.hot_b, a.ra_tail };
	uint64_t s_hot_a[] = { a.hot_a }, s_hot_b[] = { a.hot_b };
	uint64_t s_getpid[] = { exe.start + (getpid_addr - libc.start) };

	/* pid 100: this executable where it is */
	tbtrace_set_thread(c0, 100, 100);
	prt_info(c0, ts, 999, "fp", prt_exe());
	prt_maps_self(c0, ts, 0, 0);
	/* pid 200: the same mappings 1 TiB higher */
	tbtrace_set_thread(c1, 200, 201);
	prt_info(c1, ts, 499, "libunwind", "/usr/bin/fake-b");
	prt_maps_self(c1, ts, 0, SHIFT);
	/* pid 300: a sample before its first map */
	ts += 1000;
	tbtrace_set_thread(c0, 300, 300);
	prt_sample(c0, ts, s_hot_a, 1, 0, 0);
	ts += 1000;
	prt_map(c0, ts, exe.start, exe.end, exe.pgoff, 0, exe.path);
	/* pid 400: a map of a file that is gone, and this executable */
	tbtrace_set_thread(c1, 400, 400);
	prt_map(c1, ts, 0x10000000, 0x10010000, 0x1000, 0, "/nonexistent/libgone.so");
	prt_maps_self(c1, ts, 0, 0);

	for (int i = 0; i < 4; i++) {
		ts += 1000;
		tbtrace_set_thread(c0, 100, 100);
		if (i < 1)
			prt_sample(c0, ts, sa_shift, 3, 0, 0); /* valid in 200 only */
		if (i < 1)
			prt_sample(c0, ts + 1, s_tail, 2, 0, 0);
		tbtrace_set_thread(c1, 200, 201);
		if (i < 2)
			prt_sample(c1, ts, sa_shift, 3, 0, 0);
		if (i < 1)
			prt_sample(c1, ts + 1, sa, 3, 0, 0); /* valid in 100 only */
		tbtrace_set_thread(c0, 300, 300);
		if (i < 3)
			prt_sample(c0, ts + 2, s_hot_b, 1, 0, 0);
		tbtrace_set_thread(c1, 400, 400);
		if (i < 2) {
			uint64_t gone[] = { 0x10000234 };
			prt_sample(c1, ts + 2, gone, 1, 0, 0);
		}
		if (i < 1) {
			uint64_t mixed[] = { a.hot_a, 0x10000300 };
			prt_sample(c1, ts + 3, mixed, 2, 0, 0);
		}
	}
	/* pid 300, gen 1: libc's text at the start of this executable's */
	ts += 1000;
	tbtrace_set_thread(c0, 300, 300);
	prt_map(c0, ts, exe.start, exe.start + (libc.end - libc.start), libc.pgoff, 1, libc.path);
	for (int i = 0; i < 4; i++)
		prt_sample(c0, ts + 1 + (uint64_t)i, s_getpid, 1, 0, 0);
	tbtrace_close(t);

	snprintf(args, sizeof args, "report --profile --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile --format json");
	CHECK(prt_json_valid(out) != 1, "json invalid (TB_KEEP=1 keeps %s)", out);
	if (tbtrace_file_has(out, "\"unavailable\":\""))
		SKIP("tracebuf was built without libdw: symbol names cannot be checked");
	snprintf(args, sizeof args, "convert '%s' --to folded", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "convert --to folded exits 0 despite the missing file");
	CHECK(prt_count(err, "/nonexistent/libgone.so") == 1, "one diagnostic for the missing file (TB_KEEP=1 keeps %s)",
	      err);
	CHECK(tbtrace_file_has(err, "/nonexistent/libgone.so: cannot open: No such file or directory"), "diagnostic text");
	snprintf(args, sizeof args, "report --profile --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile --format json");
	/* one invalid PC in 100 and in 200 (the other's address) */
	CHECK(prt_json_has(out, "{\"pid\":100,", "\"invalid_pc_unmapped\":1,"), "pid 100 invalid");
	CHECK(prt_json_has(out, "{\"pid\":200,", "\"invalid_pc_unmapped\":1,"), "pid 200 invalid");
	CHECK(prt_json_has(out, "{\"pid\":300,", "\"invalid_pc_unmapped\":0,"), "pid 300 invalid");
	CHECK(prt_json_has(out, "{\"pid\":300,", "\"maps\":2,\"map_generations\":2,"), "pid 300 maps");
	CHECK(prt_json_has(out, "{\"pid\":200,\"name\":\"fake-b\",", "\"hz\":499,\"unwinder\":\"libunwind\","), "pid 200 info");
	CHECK(prt_json_has(out, "\"problems\":[{\"file\":\"/nonexistent/libgone.so\"", "cannot open"), "json problems");
	CHECK(prt_json_has(out, "\"label\":\"libgone.so+0x1234\"", "\"offset\":4660,\"offset_is\":\"file offset\""),
	      "unknown address in the missing file");

	snprintf(args, sizeof args, "convert -q '%s' --to folded", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "convert --to folded");
	char *got = prt_slurp(out), line[1024];
	CHECK(got, "folded output");
	const char *e = prt_exe_base();
	const char *want[] = { "%s;prt_tail;prt_hot_b 1\n", "fake-b;prt_top;prt_mid;prt_hot_a 2\n", "cproc;prt_hot_a 1\n",
			       "cproc;prt_hot_b 3\n", "pid 400;libgone.so+0x1234 2\n", "pid 400;libgone.so+0x12ff;prt_hot_a 1\n" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		snprintf(line, sizeof line, want[i], e);
		CHECK(strstr(got, line), "folded lacks '%.*s':\n%s", (int)strlen(line) - 1, line, got);
	}
	/* pid 300 after its gen-1 map: libc's getpid (or an alias of it) */
	const char *g = strstr(got, "cproc;");
	int libc_ok = 0;
	for (; g && !strncmp(g, "cproc;", 6); g = strchr(g, '\n') ? strchr(g, '\n') + 1 : NULL) {
		size_t n = strcspn(g, "\n");
		snprintf(line, sizeof line, "%.*s", (int)n, g);
		if (strstr(line, "getpid") && n > 2 && !strcmp(line + n - 2, " 4"))
			libc_ok = 1;
	}
	CHECK(libc_ok, "no 'cproc;...getpid... 4' line: samples after the gen-1 map not symbolised in %s:\n%s", libc_base, got);
	/* sorted, 7 lines (the invalid ones left out) */
	int nl = 0;
	for (char *p = got, *prev = NULL; *p; nl++) {
		char *nlp = strchr(p, '\n');
		CHECK(nlp, "unterminated line");
		*nlp = 0;
		CHECK(!prev || strcmp(prev, p) < 0, "not sorted: '%s' before '%s'", prev, p);
		prev = p;
		p = nlp + 1;
	}
	CHECK(nl == 7, "%d folded lines, want 7", nl);
	free(got);

	snprintf(args, sizeof args, "report -q --profile '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "report --profile");
	char mod[4200];
	snprintf(mod, sizeof mod, "  %s\n", libc_base);
	CHECK(tbtrace_file_has(out, mod), "the self table lacks a row in %s (TB_KEEP=1 keeps %s)", libc_base, out);
	CHECK(tbtrace_file_has(out, "[unknown]  libgone.so+0x1234\n"), "the self table lacks libgone.so+0x1234");
	CHECK(tbtrace_file_has(out, "1 problem with the mapped files"), "the report mentions the problem");
	got = prt_slurp(err);
	CHECK(got && !got[0], "-q: nothing on stderr, got %s", got ? got : "?");
	free(got);
	printf("ok\n");
	return 0;
}
