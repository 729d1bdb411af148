/* SPDX-License-Identifier: MIT */
/*
 * walk.h - walk the records of one packet using the event classes of the
 * registry (pure; every read bounds-checked; used by recover, snapshot
 * validation, the tests' decoder and a fuzzer).
 */
#ifndef TB_CORE_WALK_H
#define TB_CORE_WALK_H

#include <stdint.h>

#include "core/format.h"
#include "core/view.h"

struct tb_walk_rec {
	uint32_t id;
	uint64_t ts;
	uint64_t off;           /* of the record header, from the packet start */
	uint32_t vtid;          /* the event context of a vtid packet: the writer's tid; 0 without */
	const uint8_t *payload;
	uint64_t payload_len;
};

/* Called per record; a non-zero return stops the walk and is returned. */
typedef int (*tb_walk_fn)(void *arg, const struct tb_walk_rec *r);

struct tb_walk_result {
	uint64_t valid_end;  /* bytes from the packet start up to the last valid record's end */
	uint64_t records;    /* valid records (escape records included) */
	uint64_t events;     /* valid records that are not tracebuf:thread */
	uint64_t last_ts;
	const char *error;   /* NULL when every byte up to `end` was a valid record */
	uint64_t error_off;
};

/* Size of the payload of class `e` at p[0..avail): 0 and *len, or -1 when invalid. */
TB_HIDDEN int tb_payload_size(const struct tb_event_desc *e, const uint8_t *p, uint64_t avail, uint64_t *len);

/*
 * Walks records from TB_PACKET_HEADER_SIZE to `end` of `pkt`, starting the
 * stream clock at `ts_begin`; `ctx` is the bytes of event context after
 * each record header: 0, or TB_VTID_SIZE in a vtid packet (stream class
 * TB_STREAM_VTID, tb_walk_ctx()).  A record is valid when its id is <
 * nevents, its payload is well formed, it ends at or before `end`, and its
 * timestamp is >= the previous one.  The walk stops at the first invalid
 * record.
 */
TB_HIDDEN int tb_walk_packet(const struct tb_event_desc *events, uint32_t nevents, const uint8_t *pkt, uint64_t end,
			     uint64_t ts_begin, uint32_t ctx, tb_walk_fn fn, void *arg, struct tb_walk_result *res);

/* The same, calling fn only for the records of the classes with want[id]
 * set (ids >= nwant: called too); the others go the walk's fast path, as
 * without a callback (the flight recorder's scan: src/consumer/flight_scan.c). */
TB_HIDDEN int tb_walk_packet_want(const struct tb_event_desc *events, uint32_t nevents, const uint8_t *pkt,
				  uint64_t end, uint64_t ts_begin, uint32_t ctx, tb_walk_fn fn, void *arg,
				  const uint8_t *want, uint32_t nwant, struct tb_walk_result *res);

/* Bytes of event context in a record of a channel with (1) or without (0) vtid. */
static inline uint32_t tb_walk_ctx(uint32_t vtid)
{
	return vtid ? TB_VTID_SIZE : 0;
}

#endif
