/* SPDX-License-Identifier: MIT */
/*
 * bench_convert.c - the `convert` group: what the viewers get from a large
 * trace.  A 10 M-event trace of tracebuf-workload (2 threads x 5 M events,
 * `tracebuf record --mode block`, nothing lost; BENCH_QUICK: 200 k) is
 * converted, each command timed (wall, best of 2 runs, output in $TMPDIR):
 *
 *   - `convert --to chrome`: the baseline, its size and time;
 *   - `convert --to perfetto` (deflated packets, the default) and
 *     `--no-compress`: size and time as ratios to the JSON's
 *     (targets: size <= 0.2, time < 1);
 *   - `report --html`: its size (target < 20 MB) and its first paint in
 *     headless Chromium: the page's data-first-paint-ms (performance.now()
 *     at the first animation frame after the first drawing, i.e. from
 *     navigation start, HTML parsing included) and Chromium's own
 *     first-contentful-paint, read by tests/browser/check_page.mjs (skipped
 *     with the reason without node, Chromium or its npm packages).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef TB_BENCH_SRC_DIR
#define TB_BENCH_SRC_DIR "."
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* runs the shell command; its wall time, -1 on failure */
static double timed(const char *cmd)
{
	double t0 = now();
	int rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
		return -1;
	return now() - t0;
}

/* best of two runs */
static double best2(const char *cmd)
{
	double a = timed(cmd), b = a < 0 ? -1 : timed(cmd);
	return a < 0 || b < 0 ? -1 : a < b ? a : b;
}

static double fsize(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (double)st.st_size;
}

void bench_convert(struct bench_table *t)
{
	char cli[4096], wl[4096], dir[4096], cmd[16384], trace[4200], json[4200], pf[4200], plain[4200], html[4200];
	bench_build_path("TB_CLI", "tracebuf", cli, sizeof cli);
	bench_build_path("TB_WORKLOAD", "tracebuf-workload", wl, sizeof wl);
	if (access(cli, X_OK) || access(wl, X_OK)) {
		bench_skip(t, "convert", "10 M-event trace", "tracebuf or tracebuf-workload not built");
		return;
	}
	if (bench_mkdtemp(dir, sizeof dir, "convert")) {
		bench_skip(t, "convert", "10 M-event trace", strerror(errno));
		return;
	}
	unsigned long per_thread = bench_quick() ? 100000 : 5000000;
	snprintf(trace, sizeof trace, "%s/trace", dir);
	snprintf(json, sizeof json, "%s/t.json", dir);
	snprintf(pf, sizeof pf, "%s/t.pftrace", dir);
	snprintf(plain, sizeof plain, "%s/t.plain.pftrace", dir);
	snprintf(html, sizeof html, "%s/t.html", dir);
	snprintf(cmd, sizeof cmd, "'%s' record -q --mode block --sb-count 16 -o '%s' -- '%s' --threads 2 --events %lu > /dev/null",
		 cli, trace, wl, per_thread);
	if (timed(cmd) < 0) {
		bench_skip(t, "convert", "10 M-event trace", "tracebuf record of the workload failed");
		bench_rm_rf(dir);
		return;
	}
	double n = 2.0 * (double)per_thread;
	char cfg[128];
	snprintf(cfg, sizeof cfg, "workload trace, %g M events (CTF)", n / 1e6);
	bench_row(t, "convert", cfg, (double)bench_dir_bytes(trace) / 1e6, "MB", 0, NULL, NULL);

	snprintf(cmd, sizeof cmd, "'%s' convert -q '%s' --to chrome -o '%s'", cli, trace, json);
	double tj = best2(cmd), sj = fsize(json);
	if (tj < 0) {
		bench_skip(t, "convert", "--to chrome", "convert failed");
		bench_rm_rf(dir);
		return;
	}
	bench_row(t, "convert", "--to chrome: size", sj / n, "B/event", 0, NULL, NULL);
	bench_row(t, "convert", "--to chrome: time", tj, "s", 0, NULL, NULL);
	remove(json);

	snprintf(cmd, sizeof cmd, "'%s' convert -q '%s' --to perfetto -o '%s'", cli, trace, pf);
	double tp = best2(cmd), sp = fsize(pf);
	snprintf(cmd, sizeof cmd, "'%s' convert -q '%s' --to perfetto --no-compress -o '%s'", cli, trace, plain);
	double tq = best2(cmd), sq = fsize(plain);
	if (tp < 0 || tq < 0) {
		bench_skip(t, "convert", "--to perfetto", "convert failed");
	} else {
		bench_row(t, "convert", "--to perfetto (deflated): size", sp / n, "B/event", sp / sj, "perfetto / chrome", "<= 0.2");
		bench_row(t, "convert", "--to perfetto (deflated): time", tp, "s", tp / tj, "perfetto / chrome", "< 1");
		bench_row(t, "convert", "--to perfetto --no-compress: size", sq / n, "B/event", sq / sj, "perfetto / chrome", "");
		bench_row(t, "convert", "--to perfetto --no-compress: time", tq, "s", tq / tj, "perfetto / chrome", "");
	}
	remove(pf);
	remove(plain);

	snprintf(cmd, sizeof cmd, "'%s' report -q --html -o '%s' '%s'", cli, html, trace);
	double th = best2(cmd), sh = fsize(html);
	if (th < 0) {
		bench_skip(t, "convert", "report --html", "report --html failed");
		bench_rm_rf(dir);
		return;
	}
	bench_row(t, "convert", "report --html: size", sh / 1e6, "MB", sh / sj, "html / chrome", "< 20 MB");
	bench_row(t, "convert", "report --html: time", th, "s", th / tj, "html / chrome", "");
	/* first paint: the page's own mark and Chromium's first-contentful-paint, best of 3 loads */
	char out[4300];
	snprintf(out, sizeof out, "%s/paint.txt", dir);
	double fp = -1, fcp = -1;
	const char *why = NULL;
	for (int round = 0; round < 3 && !why; round++) {
		snprintf(cmd, sizeof cmd,
			 "cd '%s/../tests/browser' && node check_page.mjs --url 'file://%s' --timeout 120 "
			 "--ready 'document.body.dataset.ready === \"1\"' --check 'no errors=!document.body.dataset.errors' "
			 "--print 'Number(document.body.dataset.firstPaintMs)' "
			 "--print '(performance.getEntriesByName(\"first-contentful-paint\")[0] || {startTime: -1}).startTime' "
			 "> '%s' 2>&1",
			 TB_BENCH_SRC_DIR, html, out);
		int rc = system(cmd);
		rc = rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
		if (rc == 77) {
			why = "node, Chromium or tests/browser/node_modules missing (npm ci there)";
			break;
		}
		FILE *f = fopen(out, "r");
		char line[512];
		int k = 0;
		double v[2] = { -1, -1 };
		while (f && fgets(line, sizeof line, f))
			if (!strncmp(line, "print: ", 7) && k < 2)
				v[k++] = atof(line + 7);
		if (f)
			fclose(f);
		if (rc != 0 || k < 2) {
			why = "the page did not load cleanly in Chromium (see check_page.mjs's output)";
			snprintf(cmd, sizeof cmd, "cat '%s' >&2", out);
			if (system(cmd)) {
			}
			break;
		}
		if (fp < 0 || v[0] < fp)
			fp = v[0];
		if (fcp < 0 || v[1] < fcp)
			fcp = v[1];
	}
	if (why) {
		bench_skip(t, "convert", "report --html: first paint in Chromium", why);
	} else {
		bench_row(t, "convert", "report --html: first paint (page's mark)", fp, "ms", fp / 2000, "paint / 2 s", "< 1");
		bench_row(t, "convert", "report --html: first-contentful-paint", fcp, "ms", fcp / 2000, "paint / 2 s", "< 1");
	}
	bench_rm_rf(dir);
}
