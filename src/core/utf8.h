/* SPDX-License-Identifier: MIT */
/*
 * utf8.h - the one UTF-8 rule of every tracebuf text output: the reader's
 * renderers (tb_rd_utf8_len) and the producer library's one line (a refused
 * $TRACEBUF_SESSION) escape by it.  Pure, freestanding.
 */
#ifndef TB_CORE_UTF8_H
#define TB_CORE_UTF8_H

#include <stddef.h>

/*
 * Well-formed UTF-8 (RFC 3629; the Unicode Standard's table 3-7): the length
 * of the sequence at s (n >= 1 bytes left), or 0 when it is ill-formed, and
 * then *bad = the length of its maximal subpart (the longest prefix some
 * well-formed sequence begins with, at least 1), which is replaced by one
 * U+FFFD where a replacement is written (Unicode's "U+FFFD substitution of
 * maximal subparts", as Python's and the browsers' decoders do).  Refused:
 * C0, C1, F5..FF lead bytes, overlong forms (E0 80..9F, F0 80..8F),
 * surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..BF),
 * truncated sequences, stray continuation bytes.
 */
static inline size_t tb_utf8_len(const char *str, size_t n, size_t *bad)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t k;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4;
	else
		k = 0;
	if (c == 0xe0)
		lo = 0xa0; /* below: overlong */
	else if (c == 0xed)
		hi = 0x9f; /* above: surrogates U+D800..U+DFFF */
	else if (c == 0xf0)
		lo = 0x90; /* below: overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above: beyond U+10FFFF */
	size_t i = 1;
	if (k) {
		for (; i < k && i < n; i++) {
			unsigned lim_lo = i == 1 ? lo : 0x80, lim_hi = i == 1 ? hi : 0xbf;
			if (s[i] < lim_lo || s[i] > lim_hi)
				break;
		}
		if (i == k)
			return k;
	}
	if (bad)
		*bad = i;
	return 0;
}

#endif
