/* SPDX-License-Identifier: MIT */
/*
 * test_walk_fast_check_agrees_with_the_general_one - tb_walk_packet() (the
 * walk that keeps damaged records out of every trace) checks the common
 * record, a compact header of a fixed-size class it has already proven, in
 * a few instructions when it has no callback, and everything else in its
 * general path; with a callback it runs the general path alone.  Both must
 * reach the same verdict on every packet: the same valid end, record and
 * event counts, last timestamp, error and error offset.  Packets: well
 * formed ones (plain and with the vtid context), then the same with random
 * damage (bytes flipped, ids out of range, timestamps near 2^64, cut
 * records, variable-size classes), 200,000 in all from a fixed seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "core/walk.h"
#include "tbtest.h"

static int count_rec(void *arg, const struct tb_walk_rec *r)
{
	(void)r;
	(*(uint64_t *)arg)++;
	return 0;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(void)
{
	static struct tb_event_desc ev[4];
	for (int i = 0; i < 4; i++)
		ev[i].state = 1;
	ev[0].nfields = 2; /* tracebuf:thread { u32 pid; u32 tid; } */
	ev[0].fields[0].type = TB_FT_U32;
	ev[0].fields[1].type = TB_FT_U32;
	ev[1].nfields = 1; /* a string: variable size */
	ev[1].fields[0].type = TB_FT_STRING;
	ev[1].fields[0].max_len = 16;
	ev[2].nfields = 4; /* the workload's tick: 28 bytes */
	ev[2].fields[0].type = TB_FT_U32;
	for (int i = 1; i < 4; i++)
		ev[2].fields[i].type = TB_FT_U64;
	ev[3].nfields = 0; /* no payload */
	ev[3].state = 1;

	enum { SZ = 4096 };
	static uint8_t pkt[SZ];
	uint64_t packets = 0, with_error = 0;
	for (int round = 0; round < 200000; round++) {
		uint32_t ctx = (round & 1) ? TB_VTID_SIZE : 0;
		memset(pkt, 0, sizeof pkt);
		uint64_t ts_begin = (round % 7 == 0) ? UINT64_MAX - (next() % (1ull << 28)) : next() % (1ull << 40);
		uint64_t off = TB_PACKET_HEADER_SIZE, prev = ts_begin, ts = ts_begin;
		/* well-formed records of a few classes, mostly runs of one */
		uint32_t cls = 2;
		while (off + TB_EXTENDED_HDR_SIZE + ctx + 32 < SZ) {
			if (next() % 8 == 0)
				cls = (uint32_t)(next() % 4);
			ts += next() % ((round % 5 == 0) ? (1ull << 28) : 1000);
			off += tb_hdr_put(pkt + off, cls, ts, prev);
			prev = ts;
			off += ctx;
			if (cls == 1) {
				uint32_t n = (uint32_t)(next() % 10);
				memset(pkt + off, 'a', n);
				pkt[off + n] = 0;
				off += n + 1;
			} else {
				uint32_t n = cls == 0 ? 8 : cls == 2 ? 28 : 0;
				for (uint32_t i = 0; i < n; i++)
					pkt[off + i] = (uint8_t)next();
				off += n;
			}
		}
		uint64_t end = off;
		if (round % 3) { /* damage: a few random bytes, or a cut end */
			int k = (int)(next() % 4);
			for (int i = 0; i < k; i++)
				pkt[TB_PACKET_HEADER_SIZE + next() % (end - TB_PACKET_HEADER_SIZE)] = (uint8_t)next();
			if (next() % 4 == 0)
				end -= next() % 40;
		}
		struct tb_walk_result a, b;
		uint64_t n = 0;
		tb_walk_packet(ev, 4, pkt, end, ts_begin, ctx, NULL, NULL, &a);
		tb_walk_packet(ev, 4, pkt, end, ts_begin, ctx, count_rec, &n, &b);
		packets++;
		with_error += a.error != NULL;
		CHECK(a.valid_end == b.valid_end && a.records == b.records && a.events == b.events &&
			      a.last_ts == b.last_ts && a.error == b.error && (!a.error || a.error_off == b.error_off) &&
			      n == b.records,
		      "round %d: fast walk end %llu records %llu events %llu last_ts %llu error %s, general walk end "
		      "%llu records %llu events %llu last_ts %llu error %s",
		      round, (unsigned long long)a.valid_end, (unsigned long long)a.records,
		      (unsigned long long)a.events, (unsigned long long)a.last_ts, a.error ? a.error : "none",
		      (unsigned long long)b.valid_end, (unsigned long long)b.records, (unsigned long long)b.events,
		      (unsigned long long)b.last_ts, b.error ? b.error : "none");
	}
	printf("%llu packets, %llu with an error: both walks agree\n", (unsigned long long)packets,
	       (unsigned long long)with_error);
	return 0;
}
