/* SPDX-License-Identifier: MIT */
/*
 * cli_pb.h - a small protocol-buffers encoder for `convert --to perfetto`:
 * varint, 64-bit and length-delimited fields appended to a growing buffer,
 * nested messages with minimal (canonical) length prefixes.
 *
 *   pb_begin(b, 11);            // field 11, a message
 *   pb_varint(b, 9, 3);         //   field 9 = 3
 *   pb_end(b);                  // its length is written in front of it
 *
 * pb_end moves the nested bytes right by the size of their length varint
 * (1 byte for messages under 128 bytes): cheap for the small messages of a
 * trace, and the output is what any protobuf encoder writes.  Out of memory
 * sets b->oom; the functions then do nothing and the caller checks once.
 */
#ifndef TB_CLI_PB_H
#define TB_CLI_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#define PB_MAX_DEPTH 16

struct pb {
	uint8_t *b;
	size_t n, cap;
	size_t open[PB_MAX_DEPTH]; /* start of the content of each open message */
	int depth;
	int oom;
};

static inline int pb_reserve(struct pb *p, size_t more)
{
	if (p->oom)
		return -1;
	if (p->n + more <= p->cap)
		return 0;
	size_t cap = p->cap ? p->cap : 4096;
	while (cap < p->n + more)
		cap *= 2;
	uint8_t *b = realloc(p->b, cap);
	if (!b) {
		p->oom = 1;
		return -1;
	}
	p->b = b;
	p->cap = cap;
	return 0;
}

static inline size_t pb_put_varint(uint8_t *o, uint64_t v)
{
	size_t k = 0;
	while (v >= 0x80) {
		o[k++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	o[k++] = (uint8_t)v;
	return k;
}

static inline size_t pb_varint_size(uint64_t v)
{
	size_t k = 1;
	while (v >= 0x80) {
		v >>= 7;
		k++;
	}
	return k;
}

/* wire types: 0 varint, 1 64-bit, 2 length-delimited */
static inline void pb_tag(struct pb *p, uint32_t field, int wire)
{
	if (!pb_reserve(p, 5))
		p->n += pb_put_varint(p->b + p->n, (uint64_t)field << 3 | (uint64_t)wire);
}

static inline void pb_varint(struct pb *p, uint32_t field, uint64_t v)
{
	if (pb_reserve(p, 15))
		return;
	p->n += pb_put_varint(p->b + p->n, (uint64_t)field << 3);
	p->n += pb_put_varint(p->b + p->n, v);
}

/* int64 fields are plain two's complement varints (not zigzag) */
static inline void pb_int64(struct pb *p, uint32_t field, int64_t v)
{
	pb_varint(p, field, (uint64_t)v);
}

static inline void pb_fixed64(struct pb *p, uint32_t field, uint64_t v)
{
	if (pb_reserve(p, 13))
		return;
	p->n += pb_put_varint(p->b + p->n, (uint64_t)field << 3 | 1);
	for (int i = 0; i < 8; i++)
		p->b[p->n++] = (uint8_t)(v >> (8 * i));
}

static inline void pb_double(struct pb *p, uint32_t field, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	pb_fixed64(p, field, v);
}

static inline void pb_bytes(struct pb *p, uint32_t field, const void *s, size_t n)
{
	if (pb_reserve(p, 15 + n))
		return;
	p->n += pb_put_varint(p->b + p->n, (uint64_t)field << 3 | 2);
	p->n += pb_put_varint(p->b + p->n, n);
	if (n) /* s may be NULL for 0 bytes: memcpy(dst, NULL, 0) is undefined */
		memcpy(p->b + p->n, s, n);
	p->n += n;
}

/* a string field: well-formed UTF-8 (protobuf's `string`; libprotobuf refuses others), each
 * maximal ill-formed subpart replaced by U+FFFD (tb_rd_utf8_clean, the one rule of every output) */
static inline void pb_strn(struct pb *p, uint32_t field, const char *s, size_t len)
{
	size_t n = tb_rd_utf8_clean(s, len, NULL, 0);
	if (pb_reserve(p, 15 + n))
		return;
	p->n += pb_put_varint(p->b + p->n, (uint64_t)field << 3 | 2);
	p->n += pb_put_varint(p->b + p->n, n);
	p->n += tb_rd_utf8_clean(s, len, (char *)p->b + p->n, n);
}

static inline void pb_str(struct pb *p, uint32_t field, const char *s)
{
	pb_strn(p, field, s, strlen(s));
}

static inline void pb_begin(struct pb *p, uint32_t field)
{
	if (p->depth == PB_MAX_DEPTH) {
		p->oom = 1; /* a programming error: reported as a failure, never a bad file */
		return;
	}
	pb_tag(p, field, 2);
	p->open[p->depth++] = p->n;
}

static inline void pb_end(struct pb *p)
{
	if (p->oom || !p->depth)
		return;
	size_t start = p->open[--p->depth], len = p->n - start, k = pb_varint_size(len);
	if (pb_reserve(p, k))
		return;
	memmove(p->b + start + k, p->b + start, len);
	pb_put_varint(p->b + start, len);
	p->n += k;
}

#endif
