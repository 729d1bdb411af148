/* SPDX-License-Identifier: MIT */
/*
 * test_reader_merge_order - the reader merges streams by timestamp (ties:
 * stream order), decodes every field type, attributes pid/tid from the
 * latest tracebuf:thread record of the same packet (reset at each packet),
 * delivers discard notices where they happen, indexes packets, and seeks.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_check.h"

int main(void)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/merge", tbt_tmpdir());
	struct tb_event_desc ev[3];
	tbtrace_desc(&ev[1], 1, "app:tick", 1, "u64:n");
	tbtrace_desc(&ev[2], 2, "app:all", 7, "i16:neg", "f64:x", "str:s", "bytes:b", "u64s:v", "u8:last", "str:empty");
	struct tbtrace_opts o = { .events = ev, .nevents = 3, .packet_size = 512 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s[3];
	for (int c = 0; c < 3; c++)
		s[c] = tbtrace_stream(t, "chan", 0, (uint32_t)c);
	/* interleaved: stream c writes n at time 10*n + c (+ ties every 7th) */
	const uint64_t N = 3000;
	for (uint64_t n = 0; n < N; n++) {
		int c = (int)(n % 3);
		uint64_t ts = 10 * n + (n % 7 ? (uint64_t)c : 0);
		if (n % 50 == 0)
			tbtrace_thread(s[c], ts, 100 + (uint32_t)c, 1000 + (uint32_t)n);
		if (n == 1500)
			tbtrace_discard(s[1], 9);
		tbtrace_event(s[c], 1, ts, &n, 8);
	}
	struct tbtrace_buf b = { .n = 0 };
	uint64_t v[2] = { 7, UINT64_MAX };
	tbb_u16(&b, (uint16_t)-300);
	tbb_f64(&b, -0.5);
	tbb_str(&b, "héllo");
	tbb_bytes(&b, "\x00\xff", 2);
	tbb_u64s(&b, v, 2);
	tbb_u8(&b, 200);
	tbb_str(&b, "");
	tbtrace_event(s[0], 2, 10 * N + 100, b.b, b.n);
	tbtrace_close(t);

	struct tbtrace_diags dg;
	struct tb_reader *r;
	CHECK_RC(tbtrace_open_reader(dir, 0, &dg, &r), 0);
	CHECK(dg.n == 0, "diagnostics on a clean trace: %s", dg.msg[0]);
	CHECK(tb_reader_nstreams(r) == 3, "%u streams", tb_reader_nstreams(r));
	CHECK(!strcmp(tb_reader_stream_channel(r, 2), "chan") && tb_reader_stream_cpu(r, 2) == 2, "stream 2");

	const struct tb_rd_event *e;
	uint64_t n = 0, last_ts = 0, notices = 0;
	unsigned last_stream = 0;
	while (tb_reader_next(r, &e) > 0) {
		if (tb_rd_kind(e) != TB_RD_EVENT) {
			CHECK(tb_rd_kind(e) == TB_RD_DISCARDED_EVENTS && tb_rd_count(e) == 9 && tb_rd_cpu(e) == 1,
			      "notice kind %d count %llu", tb_rd_kind(e), (unsigned long long)tb_rd_count(e));
			notices++;
			continue;
		}
		CHECK(tb_rd_ticks(e) > last_ts || (tb_rd_ticks(e) == last_ts && tb_rd_stream(e) > last_stream) || n == 0,
		      "order at event %llu", (unsigned long long)n);
		last_ts = tb_rd_ticks(e);
		last_stream = tb_rd_stream(e);
		CHECK(tb_rd_ns(e) == 1700000000000000000ll + (int64_t)tb_rd_ticks(e), "ns");
		if (tb_rd_id(e) == 1) {
			CHECK(tb_rd_u64(e, 0) == n, "event %llu has n=%llu", (unsigned long long)n,
			      (unsigned long long)tb_rd_u64(e, 0));
			CHECK(tb_rd_cpu(e) == n % 3, "cpu");
			CHECK(tb_rd_field_index(e, "n") == 0 && tb_rd_field_index(e, "zz") == -ENOENT, "index");
			/* attribution: only from a thread record earlier in the same packet */
			CHECK(tb_rd_tid(e) == 0 || (tb_rd_pid(e) == 100 + n % 3 && tb_rd_tid(e) >= 1000 && tb_rd_tid(e) <= 1000 + n),
			      "tid %u for event %llu", tb_rd_tid(e), (unsigned long long)n);
			if (n % 50 == 0)
				CHECK(tb_rd_tid(e) == 1000 + n, "tid right after its record");
		} else {
			CHECK(!strcmp(tb_rd_name(e), "app:all") && tb_rd_nfields(e) == 7, "app:all");
			CHECK(tb_rd_i64(e, 0) == -300 && tb_rd_f64(e, 1) == -0.5, "ints/doubles");
			size_t l;
			CHECK(!strcmp(tb_rd_str(e, 2, &l), "héllo") && l == 6, "string");
			uint32_t cnt;
			const uint8_t *p = tb_rd_seq(e, 3, &cnt);
			CHECK(cnt == 2 && p[0] == 0 && p[1] == 0xff && tb_rd_field_type(e, 3) == TB_RD_BYTES, "bytes");
			CHECK(tb_rd_seq_u64(e, 4, 1) == UINT64_MAX && tb_rd_seq_u64(e, 4, 0) == 7, "u64 seq");
			CHECK(tb_rd_u64(e, 5) == 200 && !strcmp(tb_rd_str(e, 6, NULL), ""), "after the sequences");
			char buf[512];
			size_t k = tb_rd_format_fields(e, 1, buf, sizeof buf);
			buf[k] = 0;
			CHECK(!strcmp(buf, "\"neg\":-300,\"x\":-0.5,\"s\":\"héllo\",\"b\":[0,255],\"v\":[7,18446744073709551615],"
					   "\"last\":200,\"empty\":\"\""), "json %s", buf);
			n--; /* not an app:tick */
		}
		n++;
	}
	CHECK(n == N, "%llu events", (unsigned long long)n);
	CHECK(notices == 1, "notices %llu", (unsigned long long)notices);

	/* packet index */
	size_t np = tb_reader_npackets(r, 1);
	CHECK(np > 2, "packets");
	int seen = 0;
	for (size_t i = 0; i < np; i++) {
		struct tb_rd_packet p;
		CHECK_RC(tb_reader_packet(r, 1, i, &p), 0);
		CHECK(p.valid && p.seq == i && p.cpu == 1 && p.packet_bytes == 512, "packet %zu", i);
		if (p.discarded_delta)
			seen++;
		if (p.discarded_delta)
			CHECK(p.discarded_delta == 9, "delta");
	}
	CHECK(seen == 1, "one packet with discards");

	/* seek: first item at or after tick 15000 */
	CHECK_RC(tb_reader_seek_ticks(r, 15000), 0);
	CHECK(tb_reader_next(r, &e) == 1 && tb_rd_ticks(e) >= 15000 && tb_rd_ticks(e) <= 15002, "seek %llu",
	      (unsigned long long)tb_rd_ticks(e));
	uint64_t rest = 1 + tbtrace_count(r, NULL);
	CHECK(rest >= N / 2 - 2 && rest <= N / 2 + 2, "after seek %llu", (unsigned long long)rest);
	CHECK_RC(tb_reader_seek_ns(r, 0), 0);
	uint64_t all = tbtrace_count(r, &notices);
	CHECK(all == N + 1 && notices == 1, "rewind: %llu events %llu notices", (unsigned long long)all, (unsigned long long)notices);
	tb_reader_close(r);

	/* thread records delivered on request */
	CHECK_RC(tbtrace_open_reader(dir, TB_READER_THREAD_EVENTS, &dg, &r), 0);
	CHECK(tbtrace_count(r, NULL) == N + 1 + N / 50, "with thread records");
	tb_reader_close(r);
	printf("ok\n");
	return 0;
}
