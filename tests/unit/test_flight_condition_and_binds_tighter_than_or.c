/* SPDX-License-Identifier: MIT */
/*
 * test_flight_condition_and_binds_tighter_than_or.c - the --snapshot-on
 * conditions' '||' and parentheses (src/consumer/flight_cond.c): '&&' binds
 * tighter than '||' and parentheses regroup, checked against the same C
 * expression on every combination of field values; the limits (8
 * comparisons, 8 parentheses open at once) are refused with the position of
 * what goes past them; every form the grammar had before '||' still parses
 * to the same meaning (an '&&' chain: all comparisons hold), a bare word
 * keeps a ')' outside parentheses; a payload too short for a field of the
 * branch that does not decide still never matches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight_cond_test.h"

#define cls fct_class
#define holds(text, e, p, len) fct_holds(text, e, p, len, NULL)
#define refused fct_refused

/* a, b, c, d: u32 */
static const char *const fn[] = { "a", "b", "c", "d" };
static const uint32_t ft[] = { TB_FT_U32, TB_FT_U32, TB_FT_U32, TB_FT_U32 };

struct form {
	const char *text;
	int (*ref)(uint32_t a, uint32_t b, uint32_t c, uint32_t d);
};

static int r1(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { (void)d; return (a > 1 && b < 2) || c == 3; }
static int r2(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { (void)d; return a > 1 || (b < 2 && c == 3); }
static int r3(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { (void)d; return (a > 1 || b < 2) && c == 3; }
static int r4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return (a == 1 && b == 1) || (c == 1 && d == 1) || a == 3; }
static int r5(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a == 0 && (b == 1 || c == 2) && d != 3; }
static int r6(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a >= 2 || b >= 2 || c >= 2 || d >= 2; }
static int r7(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return (a == 1 || (b == 1 && (c == 1 || d == 1))) && a != 2; }
static int r8(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a < 2 && b < 2 && c < 2 && d < 2; }
static int r9(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { (void)b; (void)c; (void)d; return a == 2; }

int main(void)
{
	struct tb_event_desc e = cls("p:q", 4, fn, ft);
	static const struct form forms[] = {
		{ "p:q[a>1 && b<2 || c==3]", r1 },
		{ "p:q[a>1||b<2&&c==3]", r2 },
		{ "p:q[ ( a>1 || b<2 ) && c==3 ]", r3 },
		{ "p:q[a==1 && b==1 || c==1 && d==1 || a==3]", r4 },
		{ "p:q[a==0 && (b==1 || c==2) && d!=3]", r5 },
		{ "p:q[a>=2 || b>=2 || c>=2 || d>=2]", r6 },
		{ "p:q[(a==1 || (b==1 && (c==1 || d==1))) && a!=2]", r7 },
		{ "p:q[a<2 && b<2 && c<2 && d<2]", r8 },
		{ "p:q[((((((((a==2))))))))]", r9 },
	};
	/* every combination of 0..3 in each field */
	for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
		unsigned yes = 0, no = 0;
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t x[4] = { v & 3, (v >> 2) & 3, (v >> 4) & 3, (v >> 6) & 3 };
			int want = forms[f].ref(x[0], x[1], x[2], x[3]);
			int got = holds(forms[f].text, &e, x, sizeof x);
			CHECK(got == want, "'%s' with a=%u b=%u c=%u d=%u: %d (want %d)", forms[f].text, x[0], x[1], x[2],
			      x[3], got, want);
			yes += want == 1;
			no += want == 0;
		}
		CHECK(yes && no, "'%s': the reference is constant (%u true, %u false): the case proves nothing",
		      forms[f].text, yes, no);
	}

	/* the forms of before '||': an '&&' chain, all comparisons hold; compiled as such */
	static const char *const old[] = { "p:q[a>1]", "p:q[a>1 && b<2]", "p:q[ a >= 1&&b<=2 && c!=0 && d==3 ]" };
	for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
		struct tb_flight_cond c;
		unsigned pos;
		const char *why;
		CHECK(tb_flight_cond_parse(old[i], &c, &pos, &why) == 0);
		CHECK(c.nprog == 2 * c.ncmp - 1 && c.prog[0] == 0, "'%s': program of %u steps", old[i], c.nprog);
		for (unsigned k = 1; k < c.ncmp; k++)
			CHECK(c.prog[2 * k - 1] == k && c.prog[2 * k] == TB_PROG_AND, "'%s': step %u", old[i], 2 * k);
	}
	uint32_t x[4] = { 2, 1, 1, 3 };
	CHECK(holds("p:q[ a >= 1&&b<=2 && c!=0 && d==3 ]", &e, x, sizeof x) == 1);
	x[3] = 2;
	CHECK(holds("p:q[ a >= 1&&b<=2 && c!=0 && d==3 ]", &e, x, sizeof x) == 0);
	CHECK(holds("p:q", &e, x, sizeof x) == 1, "a class alone: every event");
	/* 8 comparisons: the limit, accepted */
	CHECK(holds("p:q[a==0 || a==1 || a==2 || b==0 || b==1 || c==9 || (d==9 && d==8) ]", &e, x, sizeof x) == 1);

	/* a payload too short for d: never matches, even where a alone would decide */
	x[0] = 5;
	CHECK(holds("p:q[a==5 || d==2]", &e, x, sizeof x) == 1);
	CHECK(holds("p:q[a==5 || d==2]", &e, x, 12) == 0, "a payload cut before d matched");

	/* strings: a bare word keeps a ')' outside parentheses (as it always did), ends at one inside */
	static const char *const sn[] = { "route", "status" };
	static const uint32_t st[] = { TB_FT_STRING, TB_FT_U32 };
	struct tb_event_desc s = cls("http:end", 2, sn, st);
	uint8_t sp[5 + 4];
	memcpy(sp, "/a)b", 5);
	uint32_t status = 404;
	memcpy(sp + 5, &status, 4);
	CHECK(holds("http:end[route==/a)b]", &s, sp, sizeof sp) == 1, "a bare word with ')'");
	CHECK(holds("http:end[(route==/a) || status==404]", &s, sp, sizeof sp) == 1);
	CHECK(holds("http:end[(route==/a) || status==405]", &s, sp, sizeof sp) == 0, "'/a' is not '/a)b'");
	CHECK(holds("http:end[route==/x||status>=400]", &s, sp, sizeof sp) == 1, "a bare word ends at '||'");
	CHECK(holds("http:end[(route==\"/a)b\" && status<500)]", &s, sp, sizeof sp) == 1);
	CHECK(holds("http:end[route!='/a)b'||status!=404]", &s, sp, sizeof sp) == 0);

	/* refused, with the position of what is wrong */
	refused("p:q[a==1 | b==2]", 9, "expected '&&', '||' or ']'");
	refused("p:q[a==1 ||]", 11, "expected a field name or '('");
	refused("p:q[|| a==1]", 4, "expected a field name or '('");
	refused("p:q[()]", 5, "expected a field name or '('");
	refused("p:q[(a==1]", 9, "expected '&&', '||' or ')'");
	refused("p:q[(a==1 && (b==2 || c==3)]", 27, "expected '&&', '||' or ')'");
	refused("p:q[a==1)]", 8, "expected '&&', '||' or ']'");
	refused("p:q[a==1 || b==2", 16, "expected '&&', '||' or ']'");
	refused("p:q[a==1 &&& b==2]", 11, "expected a field name or '('");
	/* 9 comparisons: refused at the 9th */
	refused("p:q[a==1 || a==2 || a==3 || a==4 || (a==5 && a==6) || a==7 || a==8 || a==9]", 70,
		"more than 8 comparisons");
	/* 8 parentheses open at once: accepted (above); the 9th refused where it opens */
	refused("p:q[(((((((((a==2)))))))))]", 12, "more than 8 parentheses open at once");
	refused("p:q[a==1 || ((((((((( b==2 )))))))))]", 20, "more than 8 parentheses open at once");
	/* 8 open at once, twice in a row: fine (depth, not count) */
	CHECK(holds("p:q[((((((((a==5)))))))) && ((((((((b==1))))))))]", &e, x, sizeof x) == 1);
	printf("PASS\n");
	return 0;
}
