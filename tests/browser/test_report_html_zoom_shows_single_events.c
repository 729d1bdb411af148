/* SPDX-License-Identifier: MIT */
/*
 * test_report_html_zoom_shows_single_events - `tracebuf report --html` on a
 * trace of 300,000 events (more than the 200,000 the page used to hold one
 * by one) draws the single events of a narrow view, with their classes:
 *
 *   tid 101: 20,000 app:sparse events, one every 5 us from 0 (0 .. 100 ms)
 *   tid 102: 280,000 app:burst events, one every 50 ns from 200 ms (14 ms)
 *
 * With the default budget every event is in the page: a 200 us view at
 * 50 ms holds 41 app:sparse events (i = 10000 .. 10040), a 10 us view at
 * 205 ms 201 app:burst events, and #tb-single / data-events-drawn say so.
 * With --html-events 100000 the budget is shared per time window (65,536 of
 * 3,266 ns): the sparse windows (0 or 1 event) stay whole, the burst's (~65
 * events) keep their first 18; stderr, the page's summary and the burst's
 * view say that events are left out, the sparse view still holds all 41.
 * Skips without node, Chromium or tests/browser/node_modules.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_cli.h"

static const char *src;

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
#define DS(k) "document.body.dataset." k

#define T0 1000000000ull /* the first event's tick (1 GHz: ns) */

int main(void)
{
	src = getenv("TB_SRC");
	const char *build = getenv("TB_BUILD");
	if (!src || !build)
		SKIP("TB_SRC/TB_BUILD not set (run through ctest)");
	if (system("node --version >/dev/null 2>&1") != 0)
		SKIP("node is not installed (apt-get install nodejs)");
	char nm[600];
	snprintf(nm, sizeof nm, "%s/tests/browser/node_modules/playwright-core", src);
	struct stat st;
	if (stat(nm, &st))
		SKIP("%s missing: run `npm ci` in tests/browser (.ci/run does)", nm);
	char shots[600], dir[512], html[512], out[512], err[512], args[6000];
	snprintf(shots, sizeof shots, "%s/browser", build);
	mkdir(shots, 0755);
	snprintf(dir, sizeof dir, "%s/many", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());

	struct tb_event_desc d[3];
	tbtrace_desc(&d[1], 1, "app:sparse", 0);
	tbtrace_desc(&d[2], 2, "app:burst", 0);
	struct tbtrace_opts o = { .events = d, .nevents = 3, .packet_size = 65536 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *a = tbtrace_stream(t, "chan", 0, 0), *b = tbtrace_stream(t, "chan", 0, 1);
	tbtrace_set_thread(a, 100, 101);
	tbtrace_set_thread(b, 100, 102);
	static const uint8_t none[1]; /* no fields (memcpy takes no NULL, even for 0 bytes) */
	for (uint64_t i = 0; i < 20000; i++)
		tbtrace_event(a, 1, T0 + i * 5000, none, 0);
	for (uint64_t i = 0; i < 280000; i++)
		tbtrace_event(b, 2, T0 + 200000000ull + i * 50, none, 0);
	tbtrace_close(t);

	/* the default budget: every event */
	snprintf(html, sizeof html, "%s/all.html", tbt_tmpdir());
	snprintf(args, sizeof args, "report --html -o '%s' '%s'", html, dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(tbtrace_file_has(err, "300,000 events ->") && tbtrace_file_has(err, "every single event"),
	      "stderr says every event is in the page");
	snprintf(args, sizeof args,
		 "--url 'file://%s#t0=50000000&t1=50200000' --screenshot '%s/report-single-sparse.png' " READY
		 "--check 'sparse view drawn one by one=" DS("eventsDrawn") " === \"41\"' "
		 "--check 'with their class=" HAS("tb-single", "41 single events in view, each drawn: app:sparse 41") "' "
		 "--check 'nothing left out=" DS("eventsMissing") " === \"0\" && !" HAS("tb-single", "not in this page") "' "
		 "--check 'drawn on the canvas=(() => { const c = document.getElementById(\"tb-timeline\"); "
		 "const d = c.getContext(\"2d\").getImageData(0, 0, c.width, c.height).data; let n = 0; "
		 "for (let i = 0; i < d.length; i += 4) n += d[i + 3] > 0 && d[i] < 200; return n > 200; })()'",
		 html, shots);
	CHECK(page(args) == 0, "the sparse thread's single events, zoomed to 200 us");
	snprintf(args, sizeof args,
		 "--url 'file://%s#t0=205000000&t1=205010000' --screenshot '%s/report-single-burst.png' " READY
		 "--check 'burst view drawn one by one=" DS("eventsDrawn") " === \"201\"' "
		 "--check 'with their class=" HAS("tb-single", "201 single events in view, each drawn: app:burst 201") "' "
		 "--check 'nothing left out=" DS("eventsMissing") " === \"0\"' "
		 "--act 'document.getElementById(\"tb-zoom-reset\").click()' "
		 "--check 'whole trace: too many to draw=" DS("eventsDrawn") " === \"0\" && "
		 HAS("tb-single", "300,000 single events in view: zoom in") "'",
		 html, shots);
	CHECK(page(args) == 0, "the burst's single events, zoomed to 10 us");

	/* over the budget: the sparse windows whole, the burst cut, said everywhere */
	snprintf(html, sizeof html, "%s/cut.html", tbt_tmpdir());
	snprintf(args, sizeof args, "report -q --html-events 100000 --html -o '%s' '%s'", html, dir);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	CHECK(tbtrace_file_has(err, "of the 300,000 events one by one (its budget: 100,000") &&
		      tbtrace_file_has(err, "keep their first 18"),
	      "stderr says what the budget left out, even with -q");
	snprintf(args, sizeof args,
		 "--url 'file://%s#t0=50000000&t1=50200000' " READY
		 "--check 'summary says the budget=" HAS("tb-summary", "of the 300,000 events one by one (its budget: 100,000)") "' "
		 "--check 'sparse view whole=" DS("eventsDrawn") " === \"41\" && " DS("eventsMissing") " === \"0\"' ",
		 html);
	CHECK(page(args) == 0, "over the budget: the sparse view still whole");
	snprintf(args, sizeof args,
		 "--url 'file://%s#t0=205000000&t1=205010000' --screenshot '%s/report-single-cut.png' " READY
		 "--check 'burst view cut=Number(" DS("eventsDrawn") ") > 0 && Number(" DS("eventsDrawn") ") < 201' "
		 "--check 'said in the view=Number(" DS("eventsMissing") ") > 0 && " HAS("tb-single", "not in this page") " && "
		 HAS("tb-single", "each keeps its first 18") "'",
		 html, shots);
	CHECK(page(args) == 0, "over the budget: the burst's view says what it lacks");

	/* bad values of the option */
	snprintf(args, sizeof args, "report --html-events many --html -o '%s' '%s'", html, dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "--html-events many: expected a number"),
	      "--html-events takes a number");
	snprintf(args, sizeof args, "report --html-events 5 '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 2 && tbtrace_file_has(err, "--html-events goes with --html"),
	      "--html-events only with --html");
	printf("ok (screenshots in %s)\n", shots);
	return 0;
}
