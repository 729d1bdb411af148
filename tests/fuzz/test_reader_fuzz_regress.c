/* SPDX-License-Identifier: MIT */
/*
 * test_reader_fuzz_regress - every input the fuzzers ever crashed on
 * (tests/fuzz/regress/<target>/) and the seed corpus (tests/fuzz/corpus/)
 * run through the same entry points as the libFuzzer targets, without
 * libFuzzer: none may crash (run under `make test-asan` for the sanitizers).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbtest.h"
/* the targets' code, compiled into this test (tests/CMakeLists.txt builds one .c per test) */
#include "fuzz_targets.h" /* fuzz_targets.c, linked in */

struct target {
	int (*fn)(const uint8_t *, size_t);
};

static void run(uint8_t *buf, size_t len, const char *path, void *t)
{
	(void)path;
	((struct target *)t)->fn(buf, len);
}

static unsigned replay(const char *src, const char *sub, const char *target, int (*fn)(const uint8_t *, size_t))
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fuzz/%s/%s", src, sub, target);
	struct target t = { fn };
	return tbt_for_each_file(path, run, &t);
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
