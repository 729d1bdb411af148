/* SPDX-License-Identifier: MIT */
/*
 * test_flight_condition_floats_compare_as_ieee.c - the --snapshot-on
 * conditions on float fields (src/consumer/flight_cond.c): f64 and f32
 * fields compare with decimal values (0.25, 1e-3, negative) and integers,
 * the value rounded to the field's type as C rounds a constant (an f32
 * holding 0.1f equals 0.1) and compared with IEEE semantics: a NaN field
 * meets only '!=', infinities order, -0 equals 0; a string or a decimal value
 * on the wrong field type and an f32 value beyond its range are refused for
 * the class; malformed numbers are refused with their position.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight_cond_test.h"

static struct tb_event_desc e;

/* payload: f64 lat, f32 ratio, u32 n */
struct pl {
	uint8_t b[16];
};

static struct pl mk(double lat, float ratio, uint32_t n)
{
	struct pl p;
	memcpy(p.b, &lat, 8);
	memcpy(p.b + 8, &ratio, 4);
	memcpy(p.b + 12, &n, 4);
	return p;
}

static int holds_why(const char *text, struct pl p, size_t len, const char **why_out)
{
	return fct_holds(text, &e, p.b, len, why_out);
}

static int holds(const char *text, struct pl p)
{
	return holds_why(text, p, sizeof p.b, NULL);
}

static void not_for_class(const char *text, const char *phrase)
{
	const char *why = "";
	CHECK(holds_why(text, mk(0, 0, 0), 16, &why) == -1, "'%s' applies to the class", text);
	CHECK(strstr(why, phrase), "'%s': %s (want '%s')", text, why, phrase);
}

#define refused fct_refused

int main(void)
{
	memset(&e, 0, sizeof e);
	snprintf(e.name, sizeof e.name, "p:m");
	e.nfields = 3;
	e.state = 1;
	snprintf(e.fields[0].name, sizeof e.fields[0].name, "lat");
	e.fields[0].type = TB_FT_F64;
	snprintf(e.fields[1].name, sizeof e.fields[1].name, "ratio");
	e.fields[1].type = TB_FT_F32;
	snprintf(e.fields[2].name, sizeof e.fields[2].name, "n");
	e.fields[2].type = TB_FT_U32;

	/* decimal values, exponents, negatives */
	CHECK(holds("p:m[lat>0.25]", mk(0.3, 0, 0)) == 1);
	CHECK(holds("p:m[lat>0.25]", mk(0.25, 0, 0)) == 0);
	CHECK(holds("p:m[lat >= 0.25]", mk(0.25, 0, 0)) == 1);
	CHECK(holds("p:m[lat>0.25]", mk(nextafter(0.25, 1), 0, 0)) == 1, "the next double above");
	CHECK(holds("p:m[lat<1e-3]", mk(0.0005, 0, 0)) == 1);
	CHECK(holds("p:m[lat==1e-3 && lat==0.001 && lat==1E-3 && lat==10e-4]", mk(1e-3, 0, 0)) == 1);
	CHECK(holds("p:m[lat<-2.5]", mk(-3, 0, 0)) == 1);
	CHECK(holds("p:m[lat>-2.5]", mk(-2.5, 0, 0)) == 0);
	CHECK(holds("p:m[lat==-2.5 && lat<=-25e-1 && lat>=-2.5e0]", mk(-2.5, 0, 0)) == 1);
	CHECK(holds("p:m[lat==3 && lat>0x2 && lat<=3. && lat!=-3]", mk(3, 0, 0)) == 1, "integers on a float field");
	CHECK(holds("p:m[lat==9007199254740993]", mk(9007199254740992.0, 0, 0)) == 1,
	      "an integer beyond 2^53 is rounded to the double, as C rounds it");
	CHECK(holds("p:m[lat==0.1]", mk(0.1, 0, 0)) == 1);
	CHECK(holds("p:m[lat==0.1]", mk((double)0.1f, 0, 0)) == 0, "an f64 holding 0.1f is not 0.1");
	CHECK(holds("p:m[lat>0.1]", mk((double)0.1f, 0, 0)) == 1);

	/* f32: the value rounded to a float */
	CHECK(holds("p:m[ratio==0.1]", mk(0, 0.1f, 0)) == 1, "an f32 holding 0.1f equals 0.1");
	CHECK(holds("p:m[ratio>0.1 || ratio<0.1]", mk(0, 0.1f, 0)) == 0);
	CHECK(holds("p:m[ratio>0.1]", mk(0, nextafterf(0.1f, 1), 0)) == 1);
	CHECK(holds("p:m[ratio<-0.75 && ratio>-1]", mk(0, -0.8f, 0)) == 1);
	CHECK(holds("p:m[ratio<=3.4e38]", mk(0, FLT_MAX, 0)) == 0, "3.4e38 rounds below FLT_MAX");
	CHECK(holds("p:m[ratio==3.4028234663852886e38]", mk(0, FLT_MAX, 0)) == 1);

	/* NaN: only != holds */
	static const char *const nan_false[] = { "p:m[lat==0]", "p:m[lat<0]", "p:m[lat<=0]", "p:m[lat>0]",
						 "p:m[lat>=0]", "p:m[lat>-1e308]", "p:m[lat<1e308]",
						 "p:m[ratio==1.5]", "p:m[ratio>=-1e30]", "p:m[ratio<=1e30]" };
	for (size_t i = 0; i < sizeof nan_false / sizeof nan_false[0]; i++)
		CHECK(holds(nan_false[i], mk(NAN, NAN, 0)) == 0, "'%s' holds on a NaN", nan_false[i]);
	CHECK(holds("p:m[lat!=0 && lat!=1.5 && ratio!=0]", mk(NAN, NAN, 0)) == 1, "!= holds on a NaN");
	CHECK(holds("p:m[lat!=0]", mk(-NAN, 0, 0)) == 1);
	CHECK(holds("p:m[lat>1 || n==7]", mk(NAN, 0, 7)) == 1, "a NaN branch false, the other decides");

	/* infinities */
	CHECK(holds("p:m[lat>1e308 && lat>=1.7976931348623157e308 && lat!=1e308]", mk(INFINITY, 0, 0)) == 1);
	CHECK(holds("p:m[lat<-1e308]", mk(-INFINITY, 0, 0)) == 1);
	CHECK(holds("p:m[lat>-1e308]", mk(-INFINITY, 0, 0)) == 0);
	CHECK(holds("p:m[ratio>3.4e38]", mk(0, INFINITY, 0)) == 1);
	CHECK(holds("p:m[lat<1.7976931348623157e308]", mk(DBL_MAX, 0, 0)) == 0);

	/* negative zero equals zero, is not below it */
	CHECK(holds("p:m[lat==0 && lat==-0 && lat==-0.0 && lat>=0 && lat<=-0.0]", mk(-0.0, 0, 0)) == 1);
	CHECK(holds("p:m[lat<0 || lat!=0 || lat>-0.0]", mk(-0.0, 0, 0)) == 0);
	CHECK(holds("p:m[lat==-0.0 && ratio==-0.0 && ratio==0]", mk(0.0, 0.0f, 0)) == 1);
	CHECK(holds("p:m[ratio<0]", mk(0, -0.0f, 0)) == 0);

	/* a payload too short for the field: never */
	CHECK(holds_why("p:m[ratio>=0]", mk(0, 1, 0), 11, NULL) == 0);
	CHECK(holds_why("p:m[lat!=5]", mk(0, 1, 0), 7, NULL) == 0);

	/* not for this class: the types do not go together */
	not_for_class("p:m[lat==\"0.5\"]", "compares a string with a float field");
	not_for_class("p:m[lat==nan]", "compares a string with a float field");
	not_for_class("p:m[ratio!=inf]", "compares a string with a float field");
	not_for_class("p:m[n>0.5]", "compares an integer field with a decimal value");
	not_for_class("p:m[n==1e3]", "compares an integer field with a decimal value");
	not_for_class("p:m[ratio<1e39]", "beyond its range");
	CHECK(holds("p:m[lat<1e39]", mk(1e38, 0, 0)) == 1, "1e39 fits an f64");

	/* malformed numbers: refused where the number starts */
	refused("p:m[lat>0.2.5]", 8, "not a number");
	refused("p:m[lat>1e]", 8, "the exponent has no digits");
	refused("p:m[lat>1e+ ]", 8, "the exponent has no digits");
	refused("p:m[lat>-1.5x]", 8, "not a number");
	refused("p:m[lat>1.5e3.2]", 8, "not a number");
	refused("p:m[lat>1e999]", 8, "does not fit in a double");
	refused("p:m[lat>-1e400 || n==1]", 8, "does not fit in a double");
	refused("p:m[lat>0x1.8]", 8, "not a number");
	refused("p:m[lat<\"0.5\"]", 7, "a string compares with == or != only");
	printf("PASS\n");
	return 0;
}
