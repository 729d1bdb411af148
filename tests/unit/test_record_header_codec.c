/* SPDX-License-Identifier: MIT */
/*
 * The record header codec (src/core/record.h): a compact header is chosen
 * exactly when 0 <= ts - prev < 2^27 and id <= 30, and every header decodes
 * back to the exact (id, timestamp) with the stream clock rule babeltrace2
 * applies (a 27-bit value below the clock's low bits is one wrap).  The
 * assembly fast path (rseq.h, steps D-G) encodes the same way: its output is
 * decoded with tb_hdr_get() by every ring test (the stress test checks each
 * decoded timestamp against the interval its producer measured).
 */
#include <string.h>

#include "core/record.h"
#include "tbtest.h"

static void roundtrip(uint32_t id, uint64_t ts, uint64_t prev, uint32_t want_size)
{
	uint8_t b[16];
	memset(b, 0xAA, sizeof b);
	uint32_t n = tb_hdr_put(b, id, ts, prev);
	CHECK(n == want_size, "id %u ts %llu prev %llu: size %u, wanted %u", id, (unsigned long long)ts,
	      (unsigned long long)prev, n, want_size);
	CHECK(tb_hdr_size(id, ts, prev) == n);
	uint32_t gid = 99;
	uint64_t clock = prev;
	CHECK(tb_hdr_get(b, n, &gid, &clock) == n);
	CHECK(gid == id && clock == ts, "decoded id %u ts %llu, wrote id %u ts %llu (prev %llu)", gid,
	      (unsigned long long)clock, id, (unsigned long long)ts, (unsigned long long)prev);
	/* a header cut short is refused, never over-read */
	for (uint32_t k = 0; k < n; k++) {
		clock = prev;
		CHECK(tb_hdr_get(b, k, &gid, &clock) == 0 || (k >= 4 && n == 4), "cut at %u", k);
	}
}

int main(void)
{
	const uint64_t W = 1ull << 27;
	uint64_t prevs[] = { 0, 1, W - 1, W, W + 1, 5 * W - 3, 0x123456789abcull, UINT64_MAX - 3 * W };
	for (size_t i = 0; i < sizeof prevs / sizeof prevs[0]; i++) {
		uint64_t p = prevs[i];
		roundtrip(0, p, p, 4);              /* same tick */
		roundtrip(30, p + 1, p, 4);         /* largest compact id */
		roundtrip(31, p + 1, p, 13);        /* id 31 is the escape: extended */
		roundtrip(1000, p + 1, p, 13);      /* large id */
		roundtrip(7, p + W - 1, p, 4);      /* the last compact delta */
		roundtrip(7, p + W, p, 13);         /* 2^27 exactly: extended */
		roundtrip(7, p + 3 * W + 5, p, 13); /* several wraps */
		if (p > 0)
			roundtrip(7, p - 1, p, 13); /* backwards: extended, exact */
		/* every delta around a low-bits wrap of the clock */
		for (uint64_t d = 0; d < 64; d++) {
			uint64_t base = (p | (W - 1)) - 32;
			if (base + d + 1 > base)
				roundtrip(3, base + d, base, 4);
		}
	}
	/* a compact run decoded as a stream: the clock carries across records */
	uint8_t buf[4 * 1000];
	uint64_t t = 0x7ffffff0ull, prev = t, ts[1000];
	uint32_t off = 0;
	for (int i = 0; i < 1000; i++) {
		t += (uint64_t)(i * 7919) % (W / 4);
		ts[i] = t;
		off += tb_hdr_put(buf + off, 5, t, prev);
		prev = t;
	}
	CHECK(off == 4000, "all compact");
	uint64_t clock = 0x7ffffff0ull;
	off = 0;
	for (int i = 0; i < 1000; i++) {
		uint32_t id = 99;
		off += tb_hdr_get(buf + off, sizeof buf - off, &id, &clock);
		CHECK(clock == ts[i] && id == 5, "record %d: %llu != %llu", i, (unsigned long long)clock,
		      (unsigned long long)ts[i]);
	}
	return 0;
}
