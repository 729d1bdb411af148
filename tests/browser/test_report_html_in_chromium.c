/* SPDX-License-Identifier: MIT */
/*
 * test_report_html_in_chromium - `tracebuf report --html` writes a page
 * that headless Chromium opens offline without an error and that shows the
 * trace: on the standard CLI trace (tests/lib/tbtrace_cli.c) the lanes (2
 * CPUs, 3 threads, events without a thread record) with their event counts,
 * the report's tables (classes, CPUs, threads, the loss ranges), a
 * timeline canvas that is drawn, zoom buttons that change the view and the
 * address; on a profile trace the flame graph, whose search finds
 * prt_hot_a in 30 of the 50 periods (as text, and as /regex/), and the
 * profile's tables; hostile searches (catastrophic backtracking, typed or
 * in a link's #q=, invalid regexes, 1 MB of pattern) are stopped or said
 * while the page keeps answering; names with markup ("</script>") stay text.  Chromium is driven by
 * tests/browser/check_page.mjs (playwright-core), which waits on DOM
 * conditions and fails on console errors, exceptions and network requests;
 * screenshots go to $TB_BUILD/browser/.  Skips without node, Chromium or
 * tests/browser/node_modules (.ci/run installs them).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_cli.h"

static const char *src, *build;

/* node check_page.mjs ARGS; returns its status (77: skip) */
static int page(const char *args)
{
	char *cmd;
	CHECK(asprintf(&cmd, "cd '%s/tests/browser' && node check_page.mjs %s", src, args) > 0, "asprintf");
	int rc = system(cmd);
	free(cmd);
	rc = rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
	if (rc == 77)
		SKIP("Chromium or playwright-core missing (see above)");
	return rc;
}

#define READY "--ready 'document.body.dataset.ready === \"1\"' --check 'no errors=!document.body.dataset.errors' "
#define TEXT(id) "document.getElementById(\"" id "\").textContent"
#define HAS(id, s) "(" TEXT(id) ").includes(\"" s "\")"
/* type Q into the flame graph's search and wait until its answer is shown */
#define SEARCH(q)                                                                                          \
	"--act 'const s = document.getElementById(\"tb-search\"); s.value = \"" q "\"; "               \
	"s.dispatchEvent(new Event(\"input\"))' --wait 'document.body.dataset.flameSearch === \"done\"' "
/* a regular expression whose backtracking over a 9-character name takes hours */
#define HOSTILE "/(.|.|.|.|.|.|.|.|.|.|.|.|.|.|.|.)+!/"

int main(void)
{
	src = getenv("TB_SRC");
	build = getenv("TB_BUILD");
	if (!src || !build)
		SKIP("TB_SRC/TB_BUILD not set (run through ctest)");
	if (system("node --version >/dev/null 2>&1") != 0)
		SKIP("node is not installed (apt-get install nodejs)");
	char nm[600];
	snprintf(nm, sizeof nm, "%s/tests/browser/node_modules/playwright-core", src);
	struct stat st;
	if (stat(nm, &st))
		SKIP("%s missing: run `npm ci` in tests/browser (.ci/run does)", nm);
	char shots[600], dir[512], truth[512], html[512], out[512], err[512], args[6000];
	snprintf(shots, sizeof shots, "%s/browser", build);
	mkdir(shots, 0755);
	snprintf(dir, sizeof dir, "%s/std", tbt_tmpdir());
	snprintf(truth, sizeof truth, "%s/truth.json", tbt_tmpdir());
	snprintf(html, sizeof html, "%s/std.html", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	tbtrace_cli_trace(dir, truth);

	snprintf(args, sizeof args, "report --html -o '%s' '%s'", html, dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(tbtrace_file_has(err, "1,306 events ->") && tbtrace_file_has(err, "103 of 103 spans"), "summary on stderr");
	CHECK(!tbtrace_file_has(html, "src=\"http") && !tbtrace_file_has(html, "href=\"http"), "nothing from the network");
	snprintf(args, sizeof args,
		 "--url 'file://%s' --screenshot '%s/report-std.png' " READY
		 "--check 'six lanes=document.querySelectorAll(\"#tb-lanes li\").length === 6' "
		 "--check 'cpu lanes=document.querySelectorAll(\"#tb-lanes li[data-kind=cpu]\").length === 2' "
		 "--check 'thread lane=" HAS("tb-lanes", "web tid 101: 253 events") "' "
		 "--check 'no-thread lane=" HAS("tb-lanes", "no thread record: 100 events") "' "
		 "--check 'lost in the summary=" HAS("tb-summary", "7 events + 2 packets") "' "
		 "--check 'classes table=[...document.querySelectorAll(\"table[data-table=\\\"event classes\\\"] tr\")]"
		 ".some(r => r.textContent.startsWith(\"app:tick1,02178.2\"))' "
		 "--check 'threads table=document.querySelectorAll(\"table[data-table=threads] tr\").length === 5' "
		 "--check 'loss ranges=" HAS("tb-tables", "7 events") " && " HAS("tb-tables", "2 packets") "' "
		 "--check 'whole view=" HAS("tb-view", "(2.400 s shown)") "' "
		 "--check 'timeline drawn=(() => { const c = document.getElementById(\"tb-timeline\"); "
		 "const d = c.getContext(\"2d\").getImageData(0, 0, c.width, c.height).data; let n = 0; "
		 "for (let i = 0; i < d.length; i += 4) n += d[i + 3] > 0 && d[i] < 200; return n > 2000; })()' "
		 "--check 'first paint=Number(document.body.dataset.firstPaintMs) > 0' "
		 "--check 'no flame graph=document.getElementById(\"tb-flame-section\").hidden' "
		 "--act 'document.getElementById(\"tb-zoom-in\").click()' "
		 "--check 'zoomed=" HAS("tb-view", "(1.200 s shown)") " && location.hash.includes(\"t0=\")'",
		 html, shots);
	CHECK(page(args) == 0, "the report of the standard trace in Chromium");

	/* a profile: the flame graph and its search */
	char prof[512];
	snprintf(prof, sizeof prof, "%s/prof", tbt_tmpdir());
	snprintf(html, sizeof html, "%s/prof.html", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS");
	prt_standard_trace(prof, 1);
	snprintf(args, sizeof args, "report --html -o '%s' '%s'", html, prof);
	CHECK(tbtrace_cli_run(args, out, err) == 0 && tbtrace_file_has(err, "a flame graph"), "%s", args);
	int libdw = !tbtrace_file_has(html, "\"unavailable\":\"");
	char search[4000] = "";
	if (libdw)
		snprintf(search, sizeof search,
			 "--check 'profile tables=" HAS("tb-tables", "prt_hot_a") "' "
			 SEARCH("/hot_a$/")
			 "--check 'regex search=" HAS("tb-match", "matched: 1 frames, 30 of 50 periods (60.0 %%)") "' "
			 "--check 'search in the address=location.hash.includes(\"q=%%2Fhot_a\")' "
			 "--screenshot '%s/report-profile-search.png' "
			 SEARCH("HOT_A") "--check 'text search=" HAS("tb-match", "matched: 1 frames, 30 of 50 periods") "' "
			 SEARCH("hot_a$") "--check 'text is not a regex=" HAS("tb-match", "matched: 0 frames") "' "
			 /* hostile: catastrophic backtracking (16^9 steps on prt_hot_a: hours), invalid, huge */
			 SEARCH(HOSTILE) "--check 'backtracking stopped=" HAS("tb-match", "was stopped") "' "
			 "--check 'page answers=document.body.dataset.flameMatches === \"\"' "
			 SEARCH("/(/") "--check 'invalid said=" HAS("tb-match", "invalid regular expression") "' "
			 SEARCH("/[/") "--check 'invalid said again=" HAS("tb-match", "invalid regular expression") "' "
			 "--act 'const s = document.getElementById(\"tb-search\"); s.removeAttribute(\"maxlength\"); s.value = \"/\" + \"(a+)+\".repeat(200000) + \"/\"; "
			 "s.dispatchEvent(new Event(\"input\"))' --wait 'document.body.dataset.flameSearch === \"done\"' "
			 "--check 'huge said=" HAS("tb-match", "at most 1000") "' "
			 SEARCH("/hot_a$/") "--check 'regex after the hostile ones=" HAS("tb-match", "matched: 1 frames") "'",
			 shots);
	snprintf(args, sizeof args,
		 "--url 'file://%s' --screenshot '%s/report-profile.png' " READY
		 "--check 'flame graph shown=!document.getElementById(\"tb-flame-section\").hidden' "
		 "--check 'flame nodes=Number(document.body.dataset.flameNodes) > 4' "
		 "--check 'flame drawn=(() => { const c = document.getElementById(\"tb-flame\"); "
		 "const d = c.getContext(\"2d\").getImageData(0, 0, c.width, c.height).data; let n = 0; "
		 "for (let i = 0; i < d.length; i += 4) n += d[i + 3] > 0; return n > 5000; })()' %s",
		 html, shots, search);
	CHECK(page(args) == 0, "the report of the profile in Chromium");
	if (libdw) {
		/* a link whose address carries the hostile search: the page opens, says it, answers */
		snprintf(args, sizeof args,
			 "--url 'file://%s#q=%%2F(.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.%%7C.)%%2B!%%2F' " READY
			 "--wait 'document.body.dataset.flameSearch === \"done\"' "
			 "--check 'hostile link stopped=" HAS("tb-match", "was stopped") "' "
			 "--act 'document.getElementById(\"tb-zoom-in\").click()' "
			 "--check 'page still works=" HAS("tb-view", "shown)") "'",
			 html);
		CHECK(page(args) == 0, "a link with a hostile regular expression in its address");
	}

	/* names with markup stay text */
	struct tb_event_desc d[2];
	tbtrace_desc(&d[1], 1, "app:x", 1, "str:s");
	struct tbtrace_env env[] = { { "proc_7", "comm=</script><b>x</b> exe=/x", 0 } };
	struct tbtrace_opts o = { .events = d, .nevents = 2, .env = env, .nenv = 1 };
	snprintf(dir, sizeof dir, "%s/markup", tbt_tmpdir());
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s = tbtrace_stream(t, "chan", 0, 0);
	tbtrace_set_thread(s, 7, 7);
	struct tbtrace_buf b = { .n = 0 };
	tbb_str(&b, "<!-- </script> -->");
	tbtrace_event(s, 1, 1000, b.b, b.n);
	tbtrace_close(t);
	snprintf(html, sizeof html, "%s/markup.html", tbt_tmpdir());
	snprintf(args, sizeof args, "report -q --html -o '%s' '%s'", html, dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	snprintf(args, sizeof args,
		 "--url 'file://%s' " READY "--check 'markup as text=" HAS("tb-lanes", "</script><b>x</b> tid 7: 1 events") "' "
		 "--check 'no element from the data=!document.querySelector(\"#tb-lanes b\")'",
		 html);
	CHECK(page(args) == 0, "a name with markup");
	printf("ok (screenshots in %s)\n", shots);
	return 0;
}
