/* SPDX-License-Identifier: MIT */
/*
 * test_enum_labels_parse_and_check - an enum field's labels as TB_EVENT takes
 * them (a C enumerator list: omitted values count on from the previous one,
 * literals in any C base with sign and suffixes) become the registry's
 * "NAME=VALUE,...\n" text, exactly; lists C would not take or that do not
 * fit are refused with a sentence naming the label; and the checker every
 * reader of shared memory runs accepts only well-formed text: one line per
 * enum field, identifiers, unique labels, decimal int32 values, a NUL.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <tracebuf/session.h>

#include "core/labels.h"
#include "tbtest.h"

static void parses_to(const char *list, const char *want)
{
	char out[TB_LABELS_MAX], err[256] = "";
	size_t used = 0;
	int rc = tb_labels_from_c(list, out, sizeof out, &used, err, sizeof err);
	CHECK(rc == 0, "\"%s\": %d %s", list, rc, err);
	CHECK(!strcmp(out, want) && used == strlen(want), "\"%s\" -> \"%s\", want \"%s\"", list, out, want);
	CHECK(tb_labels_check(out, used + 1, 1), "\"%s\": its own text fails the check", list);
}

static void refused(const char *list, int want_rc, const char *says)
{
	char out[TB_LABELS_MAX], err[256] = "";
	size_t used = 0;
	int rc = tb_labels_from_c(list, out, sizeof out, &used, err, sizeof err);
	CHECK(rc == want_rc, "\"%s\": rc %d, want %d", list, rc, want_rc);
	CHECK(strstr(err, says), "\"%s\": message \"%s\" does not say \"%s\"", list, err, says);
	CHECK(used == 0, "\"%s\": a refused list moved the cursor", list);
}

int main(void)
{
	parses_to("(IDLE, RUNNING, BLOCKED = 5, NEXT, GONE = -1)", "IDLE=0,RUNNING=1,BLOCKED=5,NEXT=6,GONE=-1\n");
	parses_to("A", "A=0\n");
	parses_to("( A = 0x10 , B, C = 010, D = 0b11, E = 7u, F = 8UL, G = +3, H = - 2 )",
		  "A=16,B=17,C=8,D=3,E=7,F=8,G=3,H=-2\n");
	parses_to("(A, B,)", "A=0,B=1\n"); /* C allows the trailing comma */
	parses_to("(MIN = -2147483648, MAX = 2147483647)", "MIN=-2147483648,MAX=2147483647\n");
	parses_to("(\n\tX_1 = 1,\n\t_y\n)", "X_1=1,_y=2\n");
	parses_to("(A = 1, B = 1)", "A=1,B=1\n"); /* two labels may name one value, as in C */

	refused("()", -EINVAL, "no label");
	refused("(A, A)", -EINVAL, "A appears twice");
	refused("(A = 1.5)", -EINVAL, "value of A");
	refused("(A = 1 << 3)", -EINVAL, "value of A");
	refused("(A = FOO)", -EINVAL, "value of A");
	refused("(A = 2147483648)", -EINVAL, "value of A");
	refused("(A = -2147483649)", -EINVAL, "value of A");
	refused("(A = 2147483647, B)", -EINVAL, "past INT32_MAX");
	refused("(1A)", -EINVAL, "not a C identifier");
	refused("(A B)", -EINVAL, "expected ','");
	refused("(A) junk", -EINVAL, "after ')'");
	refused("(\"A\")", -EINVAL, "not a C identifier");
	char longname[200];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	refused(longname, -EINVAL, "longer than 63");

	/* two fields into one text; the text of a class must fit TB_LABELS_MAX */
	char out[TB_LABELS_MAX], err[256];
	size_t used = 0;
	CHECK_RC(tb_labels_from_c("(A, B)", out, sizeof out, &used, err, sizeof err), 0);
	CHECK_RC(tb_labels_from_c("(C = 3)", out, sizeof out, &used, err, sizeof err), 0);
	CHECK(!strcmp(out, "A=0,B=1\nC=3\n"), "%s", out);
	CHECK(tb_labels_check(out, sizeof out, 2) && !tb_labels_check(out, sizeof out, 1) &&
		      !tb_labels_check(out, sizeof out, 3), "%s", "the line count must match the enum fields");
	CHECK(!strcmp(tb_labels_line(out, 1), "C=3\n") && !tb_labels_line(out, 2), "%s", "tb_labels_line");
	const char *p = tb_labels_line(out, 0);
	char name[TB_LABEL_NAME_MAX];
	int32_t v;
	CHECK(tb_label_next(&p, name, &v) && !strcmp(name, "A") && v == 0, "%s", "first label");
	CHECK(tb_label_next(&p, name, &v) && !strcmp(name, "B") && v == 1, "%s", "second label");
	CHECK(!tb_label_next(&p, name, &v), "%s", "end of the line");
	char big[8192];
	size_t n = 0;
	n += (size_t)snprintf(big, sizeof big, "(");
	for (int i = 0; i < 400; i++)
		n += (size_t)snprintf(big + n, sizeof big - n, "LABEL_%d, ", i);
	snprintf(big + n, sizeof big - n, ")");
	used = 0;
	CHECK_RC(tb_labels_from_c(big, out, sizeof out, &used, err, sizeof err), -ENOSPC);
	CHECK(strstr(err, "more than 3327 bytes"), "%s", err);

	/* the checker, on text a hostile process could have written */
	static const struct { const char *text; unsigned nenum; int ok; } cases[] = {
		{ "", 0, 1 },
		{ "A=0\n", 1, 1 },
		{ "A=0,B=-5\nC=2147483647\n", 2, 1 },
		{ "A=0", 1, 0 },           /* no newline */
		{ "A=0\n", 0, 0 },         /* a line for a field that is not an enum */
		{ "A=0\nB=1\n", 1, 0 },    /* one line too many */
		{ "=0\n", 1, 0 },          /* no label */
		{ "A=\n", 1, 0 },          /* no value */
		{ "A=01\n", 1, 0 },        /* not the canonical decimal */
		{ "A=-0\n", 1, 0 },
		{ "A=2147483648\n", 1, 0 },
		{ "A=-2147483649\n", 1, 0 },
		{ "A=99999999999999999999\n", 1, 0 },
		{ "A=0,A=1\n", 1, 0 },     /* twice */
		{ "A=0,\n", 1, 0 },        /* empty entry */
		{ "\n", 1, 0 },            /* empty line */
		{ "A\"=0\n", 1, 0 },       /* would break the TSDL quoting */
		{ "A=0 \n", 1, 0 },
		{ "1A=0\n", 1, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char t[64];
		memset(t, 0, sizeof t);
		memcpy(t, cases[i].text, strlen(cases[i].text));
		CHECK(tb_labels_check(t, sizeof t, cases[i].nenum) == cases[i].ok, "\"%s\" (%u enum fields): want %s",
		      cases[i].text, cases[i].nenum, cases[i].ok ? "valid" : "refused");
	}
	char nonul[8];
	memcpy(nonul, "A=0\nB=1", 8);
	CHECK(!tb_labels_check(nonul, sizeof nonul, 1), "%s", "no NUL within the bound");
	char label64[80];
	memset(label64, 'L', 64);
	memcpy(label64 + 64, "=1\n", 4);
	CHECK(!tb_labels_check(label64, sizeof label64, 1), "%s", "a label of 64 bytes");
	label64[63] = 0;
	memcpy(label64 + 63, "=1\n", 4);
	CHECK(tb_labels_check(label64, sizeof label64, 1), "%s", "a label of 63 bytes");
	puts("PASS");
	return 0;
}
