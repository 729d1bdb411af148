/* SPDX-License-Identifier: MIT */
/*
 * decimal.h - unsigned integers to decimal text, fast (library private; used
 * by the renderings of src/reader/render.c and by `tracebuf dump`).
 *
 * Formatting numbers is most of the time `tracebuf dump` spends, so instead
 * of one division per digit these convert 8 digits at once: the number is
 * split into 8-digit chunks (two divisions by 10^8 at most), and a chunk is
 * turned into 8 ASCII bytes with a few multiplications inside one 64-bit
 * word (each 16- then 8-bit lane holding a part, "SWAR").
 *
 * Every function writes at p and returns the end of what it wrote.  They may
 * store up to 8 bytes more than they return (whole words are stored, the
 * next write overwrites the rest): callers keep TB_DEC_SLACK spare bytes
 * after the longest result.
 */
#ifndef TB_READER_DECIMAL_H
#define TB_READER_DECIMAL_H

#include <stdint.h>
#include <string.h>

#define TB_DEC_SLACK 8u  /* bytes a call may store past what it returns */
#define TB_DEC_U64_MAX 20u /* digits of UINT64_MAX */

/*
 * The 8 decimal digits of v < 10^8 (leading zeros included), as ASCII bytes
 * of a little-endian word: the most significant digit in the lowest byte,
 * i.e. first in memory.  Lane arithmetic: v = hi * 10^4 + lo, each half in a
 * 32-bit lane; each half = a * 100 + b in 16-bit lanes (x * 10486 >> 20 is
 * x / 100 for x < 10^4); each of those = c * 10 + d in 8-bit lanes
 * (x * 103 >> 10 is x / 10 for x < 100).
 */
static inline uint64_t tb_dec_word8(uint32_t v)
{
	uint64_t x = (uint64_t)(v / 10000) | (uint64_t)(v % 10000) << 32;
	uint64_t hundreds = (x * 10486) >> 20 & 0x0000007f0000007full;
	uint64_t pairs = (x - 100 * hundreds) << 16 | hundreds;
	uint64_t tens = (pairs * 103) >> 10 & 0x000f000f000f000full;
	uint64_t digits = (pairs - 10 * tens) << 8 | tens;
	return digits; /* 0..9 per byte; + '0' per byte gives the text */
}

#define TB_DEC_ZEROS 0x3030303030303030ull

/* exactly 8 digits of v < 10^8 */
static inline char *tb_dec_8(char *p, uint32_t v)
{
	uint64_t w = tb_dec_word8(v) + TB_DEC_ZEROS;
	memcpy(p, &w, 8);
	return p + 8;
}

/* exactly 9 digits of v < 10^9 (the nanoseconds of a second) */
static inline char *tb_dec_9(char *p, uint32_t v)
{
	*p = (char)('0' + v / 100000000);
	return tb_dec_8(p + 1, v % 100000000);
}

/* v < 10^8 without leading zeros ("0" for 0) */
static inline char *tb_dec_upto8(char *p, uint32_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	uint64_t d = tb_dec_word8(v);
	/* leading zero digits are the low zero bytes of d (v != 0: d != 0) */
	unsigned skip = (unsigned)__builtin_ctzll(d) / 8;
	uint64_t w = (d + TB_DEC_ZEROS) >> (8 * skip);
	memcpy(p, &w, 8);
	return p + 8 - skip;
}

/* v without leading zeros: at most TB_DEC_U64_MAX digits */
static inline char *tb_dec_u64(char *p, uint64_t v)
{
	if (v < 100000000)
		return tb_dec_upto8(p, (uint32_t)v);
	uint64_t hi = v / 100000000;
	uint32_t lo = (uint32_t)(v % 100000000);
	if (hi < 100000000) {
		p = tb_dec_upto8(p, (uint32_t)hi);
	} else {
		p = tb_dec_upto8(p, (uint32_t)(hi / 100000000));
		p = tb_dec_8(p, (uint32_t)(hi % 100000000));
	}
	return tb_dec_8(p, lo);
}

/* v as a signed decimal: at most 1 + TB_DEC_U64_MAX characters */
static inline char *tb_dec_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return tb_dec_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return tb_dec_u64(p, (uint64_t)v);
}

/* v zero-padded to 20 digits (raw clock ticks) */
static inline char *tb_dec_u64_20(char *p, uint64_t v)
{
	uint64_t hi = v / 100000000;
	/* the top chunk is below 1845 (v < 1.85 * 10^19): its last 4 digits */
	uint64_t w = (tb_dec_word8((uint32_t)(hi / 100000000)) + TB_DEC_ZEROS) >> 32;
	memcpy(p, &w, 8);
	p = tb_dec_8(p + 4, (uint32_t)(hi % 100000000));
	return tb_dec_8(p, (uint32_t)(v % 100000000));
}

#endif
