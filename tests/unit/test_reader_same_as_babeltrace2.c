/* SPDX-License-Identifier: MIT */
/*
 * test_reader_same_as_babeltrace2 - synthetic traces written with every field
 * type, compact and extended headers (27-bit wraps), thread records, event
 * discards and lost packets are read by babeltrace2 without error, and
 * `tracebuf dump` shows the same events, order, values and discard notices
 * (tests/lib/compare_bt2.sh).  Skips (77) without babeltrace2/python3-bt2.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tbtest.h"
#include "tbtrace.h"

int main(void)
{
	const char *src = getenv("TB_SRC"), *cli = getenv("TB_CLI");
	if (!src || !cli)
		SKIP("TB_SRC/TB_CLI not set (run through ctest)");
	char dir[512];
	snprintf(dir, sizeof dir, "%s/bt2", tbt_tmpdir());
	struct tb_event_desc ev[4];
	tbtrace_desc(&ev[1], 1, "app:all", 12, "u8:a", "u16:b", "u32:c", "u64:d", "i8:e", "i16:f", "i32:g",
		     "i64:h", "f64:x", "str:s", "bytes:data", "u64s:vals");
	tbtrace_desc(&ev[2], 2, "app:tick", 1, "u32:n");
	tbtrace_desc(&ev[3], 3, "app:clash", 2, "bytes:data", "u32:_data_length");
	struct tbtrace_opts o = { .events = ev, .nevents = 4, .packet_size = 1024, .clock_freq = 2400000000ull };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s[2] = { tbtrace_stream(t, "chan", 0, 0), tbtrace_stream(t, "chan", 0, 1) };
	uint64_t ts[2] = { 1000, 1003 };
	for (uint32_t n = 0; n < 4000; n++) {
		int c = (int)(n % 2);
		ts[c] += (n % 97 == 0) ? (1ull << 27) + 5 : 1 + n % 13; /* some extended headers */
		if (n % 40 == 0)
			tbtrace_thread(s[c], ts[c], 500 + (uint32_t)c, 9000 + n);
		if (n == 1001)
			tbtrace_discard(s[1], 17);
		if (n == 2001)
			tbtrace_skip_seq(s[0], 3);
		if (n % 10 == 0) {
			struct tbtrace_buf b = { .n = 0 };
			uint64_t v[3] = { n, 0, UINT64_MAX };
			char str[64];
			snprintf(str, sizeof str, "n=%u \"q\" \\ é", n);
			tbb_u8(&b, (uint8_t)n); tbb_u16(&b, (uint16_t)(n * 7)); tbb_u32(&b, n * 100000u);
			tbb_u64(&b, (uint64_t)n << 40); tbb_u8(&b, (uint8_t)-(int)(n % 100)); tbb_u16(&b, (uint16_t)-(int)n);
			tbb_u32(&b, (uint32_t)-(int)n); tbb_u64(&b, (uint64_t)-(int64_t)n * 1000);
			tbb_f64(&b, n / 3.0); tbb_str(&b, str); tbb_bytes(&b, str, n % 9); tbb_u64s(&b, v, n % 4);
			tbtrace_event(s[c], 1, ts[c], b.b, b.n);
		} else if (n % 10 == 5) {
			struct tbtrace_buf b = { .n = 0 };
			tbb_bytes(&b, "xyz", 3);
			tbb_u32(&b, n);
			tbtrace_event(s[c], 3, ts[c], b.b, b.n);
		} else {
			tbtrace_event(s[c], 2, ts[c], &n, 4);
		}
	}
	tbtrace_close(t);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "TB_CLI='%s' bash '%s/tests/lib/compare_bt2.sh' '%s'", cli, src, dir);
	int rc = system(cmd);
	CHECK(rc != -1 && WIFEXITED(rc), "system");
	if (WEXITSTATUS(rc) == 77)
		exit(77);
	CHECK(WEXITSTATUS(rc) == 0, "tracebuf dump and babeltrace2 differ on %s", dir);
	printf("ok\n");
	return 0;
}
