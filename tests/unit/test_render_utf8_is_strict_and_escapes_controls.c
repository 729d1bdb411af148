/* SPDX-License-Identifier: MIT */
/*
 * test_render_utf8_is_strict_and_escapes_controls - the one escaping rule of
 * every output (include/tracebuf/reader.h): the UTF-8 validator takes exactly
 * RFC 3629 (the Unicode Standard's table 3-7) with Markus Kuhn's edge cases
 * (boundaries, overlong forms, surrogates, beyond U+10FFFF, truncated and
 * stray bytes), and replaces maximal subparts as Python's decoder does; the
 * text form shows C0, DEL, C1 and ill-formed bytes as \xNN; the JSON form is
 * well-formed UTF-8 with \u00XX / \ufffd; tb_rd_utf8_clean leaves well-formed
 * UTF-8.  Also every byte pair and triple is compared with a reference
 * decoder written here from the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "tbtest.h"

/* reference: the code point's well-formedness, decoded by arithmetic (not by the table of the code under test) */
static size_t ref_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t k = c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc0 && c < 0xe0 ? 2 : 0;
	if (!k || k > n)
		return 0;
	unsigned long cp = c & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const unsigned long min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

static size_t len_of(const char *s, size_t n, size_t *bad)
{
	*bad = 0;
	return tb_rd_utf8_len(s, n, bad);
}

#define VALID(str, k)                                                                                   \
	do {                                                                                            \
		size_t bad;                                                                             \
		CHECK(len_of(str, sizeof str - 1, &bad) == (k), "%s: length %zu, wanted %d", #str,      \
		      tb_rd_utf8_len(str, sizeof str - 1, NULL), k);                                    \
	} while (0)
#define INVALID(str, sub)                                                                               \
	do {                                                                                            \
		size_t bad;                                                                             \
		CHECK(len_of(str, sizeof str - 1, &bad) == 0 && bad == (sub), "%s: accepted, or subpart %zu " \
		      "(wanted %d)", #str, bad, sub);                                                   \
	} while (0)

static char *render(const char *s, size_t n, int mode)
{
	size_t need = mode == 2 ? tb_rd_format_text(s, n, NULL, 0)
		      : mode == 3 ? tb_rd_utf8_clean(s, n, NULL, 0)
				  : tb_rd_format_string(s, n, mode, NULL, 0);
	char *b = calloc(1, need + 1);
	CHECK(b, "oom");
	size_t got = mode == 2 ? tb_rd_format_text(s, n, b, need)
		     : mode == 3 ? tb_rd_utf8_clean(s, n, b, need)
				 : tb_rd_format_string(s, n, mode, b, need);
	CHECK(got == need, "two calls disagree: %zu, %zu", need, got);
	return b;
}

/* every byte of the output is a well-formed sequence and (raw) no control byte */
static void check_clean_output(const char *what, const char *o, int controls_allowed)
{
	size_t n = strlen(o);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)o[i];
		size_t k = ref_len((const unsigned char *)o + i, n - i);
		CHECK(k, "%s: ill-formed UTF-8 at byte %zu of the output", what, i);
		CHECK(controls_allowed || (c >= 0x20 && c != 0x7f && !(c == 0xc2 && (unsigned char)o[i + 1] < 0xa0)),
		      "%s: control byte 0x%02x raw at %zu of the output", what, c, i);
		i += k;
	}
}

int main(void)
{
	/* boundaries of each length (Kuhn 2.1-2.3) */
	VALID("\x00", 1);
	VALID("\x7f", 1);
	VALID("\xc2\x80", 2);
	VALID("\xdf\xbf", 2);
	VALID("\xe0\xa0\x80", 3);
	VALID("\xed\x9f\xbf", 3);       /* U+D7FF */
	VALID("\xee\x80\x80", 3);       /* U+E000 */
	VALID("\xef\xbf\xbd", 3);       /* U+FFFD */
	VALID("\xef\xbf\xbf", 3);       /* U+FFFF: a noncharacter, but well-formed */
	VALID("\xf0\x90\x80\x80", 4);   /* U+10000 */
	VALID("\xf4\x8f\xbf\xbf", 4);   /* U+10FFFF */
	/* overlong forms (Kuhn 4.1-4.3) */
	INVALID("\xc0\xaf", 1);
	INVALID("\xc1\xbf", 1);
	INVALID("\xe0\x80\xaf", 1);
	INVALID("\xe0\x9f\xbf", 1);
	INVALID("\xf0\x80\x80\xaf", 1);
	INVALID("\xf0\x8f\xbf\xbf", 1);
	INVALID("\xf8\x88\x80\x80\x80", 1);
	INVALID("\xfc\x84\x80\x80\x80\x80", 1);
	/* surrogates (Kuhn 5.1, 5.2) */
	INVALID("\xed\xa0\x80", 1);
	INVALID("\xed\xad\xbf", 1);
	INVALID("\xed\xbf\xbf", 1);
	INVALID("\xed\xa0\x80\xed\xb0\x80", 1);
	/* beyond U+10FFFF, and bytes never in UTF-8 */
	INVALID("\xf4\x90\x80\x80", 1);
	INVALID("\xf5\x80\x80\x80", 1);
	INVALID("\xf7\xbf\xbf\xbf", 1);
	INVALID("\xfe", 1);
	INVALID("\xff", 1);
	/* stray continuation bytes (Kuhn 3.1) */
	INVALID("\x80", 1);
	INVALID("\xbf", 1);
	/* truncated sequences (Kuhn 3.3): the maximal subpart is what was there */
	INVALID("\xc2", 1);
	INVALID("\xe0\xa0", 2);
	INVALID("\xe1\x80", 2);
	INVALID("\xf0\x90\x80", 3);
	INVALID("\xf4\x8f\xbf", 3);
	INVALID("\xe1\x80\x41", 2);
	INVALID("\xf1\x80\x80\x41", 3);
	INVALID("\xc2\x41", 1);

	/* exhaustive over one to three bytes (and four with a fixed tail): the same verdict as the reference */
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			for (unsigned c = 0; c < 256; c += (a >= 0xe0 ? 1 : 255)) {
				unsigned char s[4] = { (unsigned char)a, (unsigned char)b, (unsigned char)c, 0x80 };
				for (size_t n = 1; n <= 4; n++) {
					size_t got = tb_rd_utf8_len((const char *)s, n, NULL), want = ref_len(s, n);
					CHECK(got == want, "%02x %02x %02x 80 (n %zu): %zu, reference %zu", a, b, c, n, got,
					      want);
				}
			}

	/* the renderings of a hostile string: the terminal title escape, a C1 CSI, DEL, ill-formed bytes */
	static const char hostile[] = "a\x1b]0;PWN\x07\x1b[2J\xc2\x9b" "1m\x7f\xff\xed\xa0\x80\xe0\x80\x80\xf4\x90\x80\x80"
				      "\"\\\n\xc3\xa9\xf0\x9f\x98\x80z";
	size_t hn = sizeof hostile - 1;
	char *t = render(hostile, hn, 2);
	CHECK(!strcmp(t, "a\\x1b]0;PWN\\x07\\x1b[2J\\xc2\\x9b1m\\x7f\\xff\\xed\\xa0\\x80\\xe0\\x80\\x80\\xf4\\x90\\x80\\x80"
			 "\"\\\\x0a\xc3\xa9\xf0\x9f\x98\x80z"),
	      "text: %s", t);
	check_clean_output("text", t, 0);
	char *q = render(hostile, hn, 0);
	CHECK(!strcmp(q, "\"a\\x1b]0;PWN\\x07\\x1b[2J\\xc2\\x9b1m\\x7f\\xff\\xed\\xa0\\x80\\xe0\\x80\\x80\\xf4\\x90\\x80\\x80"
			 "\\\"\\\\\\n\xc3\xa9\xf0\x9f\x98\x80z\""),
	      "quoted text: %s", q);
	check_clean_output("quoted text", q, 0);
	char *j = render(hostile, hn, 1);
	/* one U+FFFD per maximal subpart: ff | ed | a0 | 80 | e0 | 80 | 80 | f4 | 90 | 80 | 80 (as Python's decoder) */
	CHECK(!strcmp(j, "\"a\\u001b]0;PWN\\u0007\\u001b[2J\\u009b1m\\u007f\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
			 "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\\"\\\\\\n\xc3\xa9\xf0\x9f\x98\x80z\""),
	      "json: %s", j);
	check_clean_output("json", j, 0);
	char *c = render(hostile, hn, 3);
	check_clean_output("clean", c, 1);
	CHECK(strstr(c, "\x7f\xef\xbf\xbd\xef\xbf\xbd") && strstr(c, "\xc3\xa9\xf0\x9f\x98\x80z"), "clean: %s", c);
	free(t);
	free(q);
	free(j);
	free(c);

	/* a truncated sequence at the very end of a long string, and the snprintf contract */
	char big[5000];
	memset(big, 'x', sizeof big);
	big[sizeof big - 1] = (char)0xe2;
	char *bj = render(big, sizeof big, 1);
	CHECK(strlen(bj) == 1 + 4999 + 6 + 1 && !strcmp(bj + 5000, "\\ufffd\""), "long json end: %s", bj + 4990);
	char small[8];
	size_t need = tb_rd_format_text(hostile, hn, small, sizeof small);
	CHECK(need > sizeof small && !memcmp(small, "a\\x1b]0;", 8), "cut output: %.8s", small);
	free(bj);
	puts("PASS");
	return 0;
}
