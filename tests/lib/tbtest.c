/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "tbtest.h"

#include <stdlib.h>
#include <unistd.h>

int tbt_failures;
static char tbt_dir[256];

static void tbt_cleanup(void)
{
	if (tbt_dir[0] && !getenv("TB_KEEP")) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tbt_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not remove %s\n", tbt_dir);
	}
}

const char *tbt_tmpdir(void)
{
	if (!tbt_dir[0]) {
		snprintf(tbt_dir, sizeof tbt_dir, "/tmp/tbtest-XXXXXX");
		if (!mkdtemp(tbt_dir)) {
			perror("mkdtemp");
			exit(1);
		}
		atexit(tbt_cleanup);
	}
	return tbt_dir;
}

int tbt_fallback(void)
{
	const char *e = getenv("TRACEBUF_NO_RSEQ");
	return e && *e && strcmp(e, "0") != 0;
}

double tbt_seconds(double dflt)
{
	const char *e = getenv("STRESS_SECONDS");
	return e && *e ? atof(e) : dflt;
}
