/* SPDX-License-Identifier: MIT */
/*
 * record.h - encode and decode record headers (format: see format.h, part 3).
 *
 * Freestanding: no libc beyond memcpy, usable by the producer, the consumer,
 * the reader, the tests and the fuzzers.  The rseq fast path in
 * src/ring/rseq.h implements tb_hdr_compact_ok() + tb_hdr_put() again in
 * assembly; tests/unit/test_record_header_codec.c checks the codec at every
 * boundary, and every ring test decodes what the assembly wrote.
 */
#ifndef TB_CORE_RECORD_H
#define TB_CORE_RECORD_H

#include <stdint.h>
#include <string.h>

#include "core/format.h"

/* True when a compact header can encode `ts` after `prev` exactly. */
static inline int tb_hdr_compact_ok(uint32_t id, uint64_t ts, uint64_t prev)
{
	return id <= TB_COMPACT_ID_MAX && ts >= prev &&
	       ts - prev < (1ull << TB_COMPACT_TS_BITS);
}

static inline uint32_t tb_hdr_size(uint32_t id, uint64_t ts, uint64_t prev)
{
	return tb_hdr_compact_ok(id, ts, prev) ? TB_COMPACT_HDR_SIZE : TB_EXTENDED_HDR_SIZE;
}

/* Writes the header for (id, ts) after `prev`; returns its size. */
static inline uint32_t tb_hdr_put(uint8_t *dst, uint32_t id, uint64_t ts, uint64_t prev)
{
	if (tb_hdr_compact_ok(id, ts, prev)) {
		uint32_t w = id | (uint32_t)(ts << 5);
		memcpy(dst, &w, 4);
		return TB_COMPACT_HDR_SIZE;
	}
	dst[0] = TB_EXTENDED_ID;
	memcpy(dst + 1, &id, 4);
	memcpy(dst + 5, &ts, 8);
	return TB_EXTENDED_HDR_SIZE;
}

/* Writes an extended header unconditionally; returns its size. */
static inline uint32_t tb_hdr_put_extended(uint8_t *dst, uint32_t id, uint64_t ts)
{
	dst[0] = TB_EXTENDED_ID;
	memcpy(dst + 1, &id, 4);
	memcpy(dst + 5, &ts, 8);
	return TB_EXTENDED_HDR_SIZE;
}

/*
 * Decodes the header at src[0..avail).  `*clock` is the stream clock (the
 * previous record's timestamp or the packet's timestamp_begin) and is
 * updated to this record's timestamp exactly as babeltrace2 does: a 27-bit
 * value lower than the clock's low bits is taken as one wrap.
 * Returns the header size, or 0 when `avail` is too short.
 */
static inline uint32_t tb_hdr_get(const uint8_t *src, uint64_t avail, uint32_t *id,
				  uint64_t *clock)
{
	if (avail < 1)
		return 0;
	if ((src[0] & 0x1f) != TB_EXTENDED_ID) {
		uint32_t w;
		if (avail < TB_COMPACT_HDR_SIZE)
			return 0;
		memcpy(&w, src, 4);
		*id = w & 0x1f;
		uint64_t low = w >> 5;
		uint64_t mask = (1ull << TB_COMPACT_TS_BITS) - 1;
		uint64_t ts = (*clock & ~mask) | low;
		if (low < (*clock & mask))
			ts += 1ull << TB_COMPACT_TS_BITS;
		*clock = ts;
		return TB_COMPACT_HDR_SIZE;
	}
	if (avail < TB_EXTENDED_HDR_SIZE)
		return 0;
	memcpy(id, src + 1, 4);
	memcpy(clock, src + 5, 8);
	return TB_EXTENDED_HDR_SIZE;
}

#endif
