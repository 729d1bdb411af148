/* SPDX-License-Identifier: MIT */
/*
 * test_flight_conditions_compare_exactly.c - the --snapshot-on conditions
 * (src/consumer/flight_cond.c): integer comparisons are exact across
 * signedness and widths (a negative value against an unsigned field, u64
 * and i64 extremes, bool, enum), strings compare whole (a prefix is not
 * equal), fields after a string are found, a payload too short never
 * matches; the parser says where each bad text goes wrong; and the scan's
 * walk (tb_walk_packet_want) hands the callback exactly the records of the
 * classes it wants while walking the others as the plain walk does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/flight.h"
#include "core/record.h"
#include "core/walk.h"
#include "flight_cond_test.h"

#define cls fct_class
#define holds(text, e, p, len) fct_holds(text, e, p, len, NULL)
#define refused(text, want_pos) fct_refused(text, want_pos, NULL)

struct got {
	unsigned n;
	uint32_t ids[64];
};

static int take(void *arg, const struct tb_walk_rec *r)
{
	struct got *g = arg;
	if (g->n < 64)
		g->ids[g->n] = r->id;
	g->n++;
	return 0;
}

int main(void)
{
	/* integers: widths and signedness */
	static const char *const nf[] = { "u8v", "i8v", "u64v", "i64v", "i32v", "flag" };
	static const uint32_t tf[] = { TB_FT_U8, TB_FT_I8, TB_FT_U64, TB_FT_I64, TB_FT_ENUM, TB_FT_BOOL };
	struct tb_event_desc e = cls("p:ints", 6, nf, tf);
	uint8_t pl[1 + 1 + 8 + 8 + 4 + 1];
	uint8_t u8 = 255;
	int8_t i8 = -128;
	uint64_t u64 = UINT64_MAX;
	int64_t i64 = INT64_MIN;
	int32_t i32 = -5;
	uint8_t flag = 1;
	memcpy(pl, &u8, 1);
	memcpy(pl + 1, &i8, 1);
	memcpy(pl + 2, &u64, 8);
	memcpy(pl + 10, &i64, 8);
	memcpy(pl + 18, &i32, 4);
	memcpy(pl + 22, &flag, 1);
	CHECK(holds("p:ints[u8v==255]", &e, pl, sizeof pl) == 1);
	CHECK(holds("p:ints[u8v>-1]", &e, pl, sizeof pl) == 1, "255 (u8) > -1");
	CHECK(holds("p:ints[i8v<0 && i8v==-128 && i8v>=-128 && i8v<-127]", &e, pl, sizeof pl) == 1);
	CHECK(holds("p:ints[u64v==0xffffffffffffffff && u64v>=18446744073709551615]", &e, pl, sizeof pl) == 1);
	CHECK(holds("p:ints[u64v>-1]", &e, pl, sizeof pl) == 1, "UINT64_MAX is not -1");
	CHECK(holds("p:ints[u64v<0]", &e, pl, sizeof pl) == 0);
	CHECK(holds("p:ints[i64v==-9223372036854775808 && i64v<0]", &e, pl, sizeof pl) == 1);
	CHECK(holds("p:ints[i64v>=-9223372036854775807]", &e, pl, sizeof pl) == 0);
	CHECK(holds("p:ints[i32v<=-5 && i32v>-6 && i32v!=5 && flag==1]", &e, pl, sizeof pl) == 1);
	CHECK(holds("p:ints[flag==0]", &e, pl, sizeof pl) == 0);
	CHECK(holds("p:ints[i32v<=-5]", &e, pl, 20) == 0, "a payload cut before the field never matches");
	CHECK(holds("p:int?[u8v==255]", &e, pl, sizeof pl) == 1, "glob");
	CHECK(holds("p:other[u8v==255]", &e, pl, sizeof pl) == -1, "another class");
	CHECK(holds("p:ints[nosuch==1]", &e, pl, sizeof pl) == -1, "no such field");
	CHECK(holds("p:ints[u8v==\"x\"]", &e, pl, sizeof pl) == -1, "a string against an integer");

	/* strings: whole, and the field after one */
	static const char *const sn[] = { "route", "status" };
	static const uint32_t st[] = { TB_FT_STRING, TB_FT_U32 };
	struct tb_event_desc s = cls("http:request_end", 2, sn, st);
	uint8_t sp[6 + 4];
	memcpy(sp, "/fail", 6);
	uint32_t status = 500;
	memcpy(sp + 6, &status, 4);
	CHECK(holds("http:request_end[route==\"/fail\" && status>=500]", &s, sp, sizeof sp) == 1);
	CHECK(holds("http:request_end[route=='/fail']", &s, sp, sizeof sp) == 1);
	CHECK(holds("http:request_end[route==/fail]", &s, sp, sizeof sp) == 1, "a bare word");
	CHECK(holds("http:request_end[route==\"/fai\"]", &s, sp, sizeof sp) == 0, "a prefix is not equal");
	CHECK(holds("http:request_end[route!=\"/fail/\"]", &s, sp, sizeof sp) == 1);
	CHECK(holds("http:request_end[status>500]", &s, sp, sizeof sp) == 0);
	CHECK(holds("http:request_end[status>=500]", &s, sp, 5) == 0, "a string without its NUL never matches");
	CHECK(holds("http:request_end[route==5]", &s, sp, sizeof sp) == -1, "a number against a string");

	/* spans: the roles of the two classes */
	struct tb_flight_cond c;
	unsigned pos, fidx[TB_FLIGHT_CMP_MAX], bad;
	const char *why;
	int role;
	CHECK(tb_flight_cond_parse(" http:request > 1.5ms ", &c, &pos, &why) == 0);
	CHECK(c.kind == TB_FLIGHT_SPAN && c.dur_ns == 1500000, "%" PRIu64, c.dur_ns);
	CHECK(tb_flight_cond_class(&c, "http:request_begin", NULL, 0, fidx, &role, &bad, &why) == 1 && role == 1);
	CHECK(tb_flight_cond_class(&c, "http:request_end", NULL, 0, fidx, &role, &bad, &why) == 1 && role == 2);
	CHECK(tb_flight_cond_class(&c, "http:request_endx", NULL, 0, fidx, &role, &bad, &why) == 0);
	CHECK(tb_flight_cond_class(&c, "http:requests_begin", NULL, 0, fidx, &role, &bad, &why) == 0);

	/* bad texts: where */
	refused("", 0);
	refused("a:b[x=>1]", 5);
	refused("a:b[x==1 & y==2]", 9);
	refused("a:b[x==1", 8);
	refused("a:b[x==1] z", 10);
	refused("a:b[x==\"open]", 7);
	refused("a:b[x<\"s\"]", 5);
	refused("a:b[x==99999999999999999999]", 7);
	refused("a:b[x==-9223372036854775809]", 7);
	refused("a:b[==1]", 4);
	refused("ab[x==1]", 0);
	refused("a:b:c", 0);
	refused("a:*>1ms", 0);
	refused("a:b>1", 5);
	refused("a:b>=1ms", 3);
	refused("a:b>1ms x", 8);
	refused("a:b[x==1 && x==1 && x==1 && x==1 && x==1 && x==1 && x==1 && x==1 && x==1]", 68);

	/* the scan's walk: only wanted classes reach the callback, the rest as the plain walk */
	struct tb_event_desc ev[3];
	static const char *const tn[] = { "pid", "tid" };
	static const uint32_t tt[] = { TB_FT_U32, TB_FT_U32 };
	ev[0] = cls("tracebuf:thread", 2, tn, tt);
	static const char *const an[] = { "v" };
	static const uint32_t at[] = { TB_FT_U64 };
	ev[1] = cls("p:a", 1, an, at);
	ev[2] = cls("p:b", 1, an, at);
	uint8_t pkt[TB_PACKET_HEADER_SIZE + 40 * 12];
	memset(pkt, 0, sizeof pkt);
	uint64_t off = TB_PACKET_HEADER_SIZE, prev = 1000, ts = 1000;
	uint32_t ids[40];
	for (unsigned i = 0; i < 40; i++) {
		ids[i] = i == 0 ? 0 : i % 7 == 3 ? 2 : 1;
		ts += 10;
		off += tb_hdr_put(pkt + off, ids[i], ts, prev);
		prev = ts;
		uint64_t v = i;
		memcpy(pkt + off, &v, 8); /* thread: pid, tid */
		off += 8;
	}
	uint8_t want[3] = { 1, 0, 1 };
	struct got g = { 0 };
	struct tb_walk_result r1, r2;
	tb_walk_packet_want(ev, 3, pkt, off, 1000, 0, take, &g, want, 3, &r1);
	tb_walk_packet(ev, 3, pkt, off, 1000, 0, NULL, NULL, &r2);
	CHECK(!r1.error && !r2.error);
	CHECK_EQ_U64(r1.valid_end, r2.valid_end);
	CHECK_EQ_U64(r1.events, r2.events);
	CHECK_EQ_U64(r1.last_ts, r2.last_ts);
	unsigned k = 0;
	for (unsigned i = 0; i < 40; i++)
		if (want[ids[i]]) {
			CHECK(k < g.n && g.ids[k] == ids[i], "record %u (class %u) not handed over in order", i, ids[i]);
			k++;
		}
	CHECK(k == g.n, "%u records handed over, %u wanted", g.n, k);
	printf("PASS\n");
	return 0;
}
