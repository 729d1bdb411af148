/* SPDX-License-Identifier: MIT */
/*
 * test_map_fuzz_regress - the session-map fuzzer's seeds
 * (tests/fuzz/corpus/map/: real session files, each must validate) and every
 * input it ever crashed on (tests/fuzz/regress/map/) run through
 * tb_fuzz_map() without libFuzzer: none may crash (run under
 * `make test-asan` for the sanitizers).  Also every truncation and a
 * seeded set of bit flips of each seed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/session.h>

#include "tbtest.h"
/* the target's code, compiled into this test without its libFuzzer entry */
#define TB_FUZZ_MAP_NO_MAIN
#include "fuzz/fuzz_map.c"

/* an exact-size copy, as libFuzzer hands it */
static void run(const uint8_t *p, size_t len)
{
	uint8_t *in = malloc(len ? len : 1);
	CHECK(in);
	memcpy(in, p, len);
	tb_fuzz_map(in, len);
	free(in);
}

static unsigned replay(const char *src, const char *sub, int seeds)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fuzz/%s/map", src, sub);
	DIR *d = opendir(path);
	unsigned n = 0;
	if (!d)
		return 0;
	struct dirent *de;
	uint64_t rng = 0x5eed;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		FILE *f = fopen(p, "rb");
		CHECK(f, "%s", p);
		uint8_t *buf = malloc(1 << 20);
		CHECK(buf);
		size_t len = fread(buf, 1, 1 << 20, f);
		fclose(f);
		run(buf, len);
		n++;
		if (seeds) {
			CHECK(tb_fuzz_map_last_valid, "seed %s does not validate: %s", p, tb_errmsg());
			/* truncations at every 8th byte of the header and tables */
			for (size_t cut = 0; cut < len && cut < 8192; cut += 8)
				run(buf, cut);
			/* single bit flips of the header and tables */
			for (int i = 0; i < 3000; i++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				size_t at = (size_t)(rng % (len < 8192 ? len : 8192));
				buf[at] ^= (uint8_t)(1u << (rng >> 60 & 7));
				run(buf, len);
				buf[at] ^= (uint8_t)(1u << (rng >> 60 & 7));
			}
		}
		free(buf);
	}
	closedir(d);
	return n;
}

int main(void)
{
	const char *src = getenv("TB_SRC");
	if (!src)
		SKIP("TB_SRC not set (run through ctest)");
	unsigned c = replay(src, "corpus", 1);
	unsigned r = replay(src, "regress", 0);
	CHECK(c > 0, "no seed corpus in %s/tests/fuzz/corpus/map", src);
	printf("ok: map: %u seeds (each also truncated and bit-flipped), %u regression inputs\n", c, r);
	return 0;
}
