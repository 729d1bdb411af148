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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/session.h>

#include "tbtest.h"
/* the target (fuzz_map.c), linked into this test without its libFuzzer entry */
#include "fuzz_targets.h"

/* an exact-size copy, as libFuzzer hands it */
static void run(const uint8_t *p, size_t len)
{
	uint8_t *in = malloc(len ? len : 1);
	CHECK(in);
	memcpy(in, p, len);
	tb_fuzz_map(in, len);
	free(in);
}

/* a seed: it must validate; then every truncation at an 8-byte step and
 * seeded single bit flips of its header and tables */
static void run_seed(uint8_t *buf, size_t len, const char *path, void *rngp)
{
	uint64_t *rng = rngp;
	run(buf, len);
	CHECK(tb_fuzz_map_last_valid, "seed %s does not validate: %s", path, tb_errmsg());
	for (size_t cut = 0; cut < len && cut < 8192; cut += 8)
		run(buf, cut);
	for (int i = 0; i < 3000; i++) {
		*rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
		size_t at = (size_t)(*rng % (len < 8192 ? len : 8192));
		buf[at] ^= (uint8_t)(1u << (*rng >> 60 & 7));
		run(buf, len);
		buf[at] ^= (uint8_t)(1u << (*rng >> 60 & 7));
	}
}

static void run_input(uint8_t *buf, size_t len, const char *path, void *arg)
{
	(void)path, (void)arg;
	run(buf, len);
}

static unsigned replay(const char *src, const char *sub, int seeds)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fuzz/%s/map", src, sub);
	uint64_t rng = 0x5eed;
	return tbt_for_each_file(path, seeds ? run_seed : run_input, &rng);
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
