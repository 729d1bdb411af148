/* SPDX-License-Identifier: MIT */
/*
 * test_reader_fuzz_regress - every input the fuzzers ever crashed on
 * (tests/fuzz/regress/<target>/) and the seed corpus (tests/fuzz/corpus/)
 * run through the same entry points as the libFuzzer targets, without
 * libFuzzer: none may crash (run under `make test-asan` for the sanitizers).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbtest.h"
/* the targets' code, compiled into this test (tests/CMakeLists.txt builds one .c per test) */
#include "fuzz/fuzz_targets.c"

static unsigned replay(const char *src, const char *sub, const char *target, int (*fn)(const uint8_t *, size_t))
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fuzz/%s/%s", src, sub, target);
	DIR *d = opendir(path);
	unsigned n = 0;
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		FILE *f = fopen(p, "rb");
		CHECK(f, "%s", p);
		uint8_t *buf = malloc(1 << 20);
		size_t len = fread(buf, 1, 1 << 20, f);
		fclose(f);
		/* an exact-size copy, as libFuzzer hands it */
		uint8_t *in = malloc(len ? len : 1);
		memcpy(in, buf, len);
		free(buf);
		fn(in, len);
		free(in);
		n++;
	}
	closedir(d);
	return n;
}

int main(void)
{
	const char *src = getenv("TB_SRC");
	if (!src)
		SKIP("TB_SRC not set (run through ctest)");
	unsigned total = 0;
	static const struct { const char *name; int (*fn)(const uint8_t *, size_t); } t[] = {
		{ "tsdl", tb_fuzz_tsdl }, { "stream", tb_fuzz_stream },
	};
	for (size_t i = 0; i < 2; i++) {
		unsigned c = replay(src, "corpus", t[i].name, t[i].fn);
		unsigned r = replay(src, "regress", t[i].name, t[i].fn);
		CHECK(c > 0, "no seed corpus for %s in %s/tests/fuzz/corpus", t[i].name, src);
		printf("ok: %s: %u seeds, %u regression inputs\n", t[i].name, c, r);
		total += c + r;
	}
	printf("ok: %u inputs replayed\n", total);
	return 0;
}
