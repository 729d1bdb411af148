/* SPDX-License-Identifier: MIT */
/*
 * test_flight_span_table_pairs_each_end_with_its_begin.c - the open spans of
 * --snapshot-on 'SPAN>DUR' (src/consumer/flight_span.c): an end gets the
 * begin of the innermost open span of its (thread, condition); thousands of
 * threads begun and ended in a shuffled order (colliding hashes, backward-
 * shift deletions) all get their own begin and leave the table empty; at
 * the bound a new begin is refused, not silently dropped; nesting deeper
 * than TB_SPAN_DEPTH is counted and the ends still pair with the right
 * begins; clear forgets everything.
 */
#include <stdio.h>
#include <stdlib.h>

#include "consumer/flight_impl.h"
#include "tbtest.h"

int main(void)
{
	struct tb_span_table *t = tb_span_table_new();
	CHECK(t);
	uint64_t b = 0;
	/* nesting on one thread, and another condition of the same thread apart */
	CHECK(tb_span_begin(t, 7, 0, 10) == 0);
	CHECK(tb_span_begin(t, 7, 1, 15) == 0);
	CHECK(tb_span_begin(t, 7, 0, 20) == 0);
	CHECK(tb_span_end(t, 7, 0, &b) == 1 && b == 20, "%" PRIu64, b);
	CHECK(tb_span_end(t, 7, 1, &b) == 1 && b == 15);
	CHECK(tb_span_end(t, 7, 0, &b) == 1 && b == 10);
	CHECK(tb_span_end(t, 7, 0, &b) == 0, "an end without a begin");
	CHECK(tb_span_open(t) == 0);

	/* 3000 threads, ended in a shuffled order */
	enum { N = 3000 };
	static uint32_t order[N];
	for (uint32_t i = 0; i < N; i++) {
		CHECK(tb_span_begin(t, 1000 + i * 4096u, i % 3, 100000 + i) == 0, "begin %u", i);
		order[i] = i;
	}
	CHECK(tb_span_open(t) == N);
	uint64_t rng = 0x12345;
	for (uint32_t i = N - 1; i > 0; i--) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint32_t j = (uint32_t)(rng % (i + 1)), tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (uint32_t k = 0; k < N; k++) {
		uint32_t i = order[k];
		CHECK(tb_span_end(t, 1000 + i * 4096u, i % 3, &b) == 1 && b == 100000 + i, "end %u got %" PRIu64, i, b);
	}
	CHECK(tb_span_open(t) == 0, "%u left", tb_span_open(t));

	/* the bound: 7/8 of the slots, then refused */
	uint32_t max = TB_SPAN_SLOTS - TB_SPAN_SLOTS / 8, n = 0;
	while (tb_span_begin(t, n + 1, 0, 1) == 0)
		n++;
	CHECK(n == max, "%u open at the bound, want %u", n, max);
	CHECK(tb_span_begin(t, 1, 0, 2) == 0, "an open pair nests even at the bound");
	CHECK(tb_span_end(t, 1, 0, &b) == 1 && b == 2);
	CHECK(tb_span_clear(t) == max);
	CHECK(tb_span_open(t) == 0 && tb_span_end(t, 1, 0, &b) == 0);

	/* deeper than TB_SPAN_DEPTH: counted, and the ends pair with the right begins */
	for (uint32_t d = 0; d < TB_SPAN_DEPTH + 2; d++)
		CHECK(tb_span_begin(t, 9, 2, 50 + d) == (d < TB_SPAN_DEPTH ? 0 : 1), "depth %u", d);
	CHECK(tb_span_end(t, 9, 2, &b) == 0 && tb_span_end(t, 9, 2, &b) == 0, "the too deep ones are not timed");
	for (uint32_t d = TB_SPAN_DEPTH; d-- > 0;)
		CHECK(tb_span_end(t, 9, 2, &b) == 1 && b == 50 + d, "depth %u: %" PRIu64, d, b);
	CHECK(tb_span_open(t) == 0);
	tb_span_table_free(t);
	printf("PASS\n");
	return 0;
}
