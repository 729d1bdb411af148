/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "tbtest.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
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

unsigned tbt_for_each_file(const char *dir, void (*fn)(uint8_t *buf, size_t len, const char *path, void *arg),
			   void *arg)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		FILE *f = fopen(p, "rb");
		CHECK(f, "%s", p);
		uint8_t *buf = malloc(1 << 20);
		CHECK(buf);
		size_t len = fread(buf, 1, 1 << 20, f);
		fclose(f);
		uint8_t *in = malloc(len ? len : 1);
		CHECK(in);
		memcpy(in, buf, len);
		free(buf);
		fn(in, len, p, arg);
		free(in);
		n++;
	}
	closedir(d);
	return n;
}
