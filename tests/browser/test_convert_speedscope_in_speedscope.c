/* SPDX-License-Identifier: MIT */
/*
 * test_convert_speedscope_in_speedscope - speedscope (npm `speedscope`, its
 * release build served by a loopback HTTP server this test starts and stops
 * by pid) opens what `tracebuf convert --to speedscope` and `--to folded`
 * write for the synthetic profile (profile_report_trace.c): the speedscope
 * file as two thread profiles whose first (4242, the busiest) has
 * prt_hot_a and not thread 4243's prt_hot_b in its Sandwich table; the
 * folded file with prt_hot_a at 30 of 50 periods (60%).  Chromium is driven
 * by tests/browser/check_page.mjs (DOM conditions, no console error, no
 * request off the loopback server); screenshots go to $TB_BUILD/browser/.
 * Skips without node, Chromium or tests/browser/node_modules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace_cli.h"

static const char *src, *build;

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

static pid_t server;
static void stop_server(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
		server = 0;
	}
}

int main(void)
{
	src = getenv("TB_SRC");
	build = getenv("TB_BUILD");
	if (!src || !build)
		SKIP("TB_SRC/TB_BUILD not set (run through ctest)");
	if (system("node --version >/dev/null 2>&1") != 0)
		SKIP("node is not installed (apt-get install nodejs)");
	char rel[600], nm[600];
	snprintf(rel, sizeof rel, "%s/tests/browser/node_modules/speedscope/dist/release", src);
	snprintf(nm, sizeof nm, "%s/tests/browser/node_modules/playwright-core", src);
	struct stat st;
	if (stat(rel, &st) || stat(nm, &st))
		SKIP("speedscope or playwright-core missing under tests/browser/node_modules: run `npm ci` there "
		     "(.ci/run does)");
	char shots[600], dir[512], www[512], out[512], err[512], portfile[600], args[4000];
	snprintf(shots, sizeof shots, "%s/browser", build);
	mkdir(shots, 0755);
	snprintf(dir, sizeof dir, "%s/prof", tbt_tmpdir());
	snprintf(www, sizeof www, "%s/www", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(portfile, sizeof portfile, "%s/port", tbt_tmpdir());
	unsetenv("DEBUGINFOD_URLS");
	prt_standard_trace(dir, 1);
	snprintf(args, sizeof args, "cp -r '%s' '%s'", rel, www);
	CHECK(system(args) == 0, "%s", args);
	snprintf(args, sizeof args, "convert -q '%s' --to folded -o '%s/prof.folded'", dir, www);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);
	snprintf(args, sizeof args, "grep -q prt_hot_a '%s/prof.folded'", www);
	if (system(args) != 0)
		SKIP("tracebuf was built without libdw: no function names to look for");
	snprintf(args, sizeof args, "convert -q '%s' --to speedscope -o '%s/prof.speedscope.json'", dir, www);
	CHECK(tbtrace_cli_run(args, out, err) == 0, "%s", args);

	/* the loopback server, stopped by its pid at exit */
	server = fork();
	CHECK(server >= 0, "fork: %s", strerror(errno));
	if (!server) {
		char script[600];
		snprintf(script, sizeof script, "%s/tests/browser/serve.mjs", src);
		execlp("node", "node", script, www, portfile, (char *)NULL);
		_exit(127);
	}
	atexit(stop_server);
	int port = 0;
	for (int i = 0; i < 6000 && !port; i++) { /* the port file appears once it listens; 60 s hang guard */
		FILE *f = fopen(portfile, "r");
		if (f) {
			CHECK(fscanf(f, "%d", &port) == 1, "port file");
			fclose(f);
			break;
		}
		int stw;
		CHECK(waitpid(server, &stw, WNOHANG) == 0, "the server exited before listening");
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	CHECK(port > 0, "the server did not start listening within 60 s");

#define SANDWICH "--act '[...document.querySelectorAll(\"div\")].find(d => d.textContent.trim().endsWith(\"Sandwich\") " \
		 "&& d.children.length < 3).click()' "
	snprintf(args, sizeof args,
		 "--url 'http://127.0.0.1:%d/index.html#profileURL=http%%3A%%2F%%2F127.0.0.1%%3A%d%%2Fprof.speedscope.json' "
		 "--allow-host 127.0.0.1:%d --screenshot '%s/speedscope-json.png' "
		 "--ready 'document.body.innerText.includes(\"(pid 4242, tid 4242) (1/2)\")' "
		 "--check 'title=document.title.endsWith(\" - speedscope\")' " SANDWICH
		 "--screenshot '%s/speedscope-json-sandwich.png' "
		 "--check 'thread 4242 functions=document.body.innerText.includes(\"prt_hot_a\") && "
		 "document.body.innerText.includes(\"prt_mid\") && document.body.innerText.includes(\"prt_top\")' "
		 "--check 'not thread 4243 functions=!document.body.innerText.includes(\"prt_hot_b\")'",
		 port, port, port, shots, shots);
	CHECK(page(args) == 0, "speedscope on the speedscope file");
	snprintf(args, sizeof args,
		 "--url 'http://127.0.0.1:%d/index.html#profileURL=http%%3A%%2F%%2F127.0.0.1%%3A%d%%2Fprof.folded' "
		 "--allow-host 127.0.0.1:%d --screenshot '%s/speedscope-folded.png' "
		 "--ready 'document.body.innerText.includes(\"prof.folded\")' " SANDWICH
		 "--check 'hot_a 30 of 50=/30 \\(60%%\\)\\s+30 \\(60%%\\)\\s+prt_hot_a/.test(document.body.innerText)' "
		 "--check 'hot_b=document.body.innerText.includes(\"prt_hot_b\")'",
		 port, port, port, shots);
	CHECK(page(args) == 0, "speedscope on the folded file");
	stop_server();
	printf("ok (screenshots in %s)\n", shots);
	return 0;
}
