/* SPDX-License-Identifier: MIT */
#include "core/walk.h"

#include <string.h>

#include "core/record.h"

int tb_payload_size(const struct tb_event_desc *e, const uint8_t *p, uint64_t avail, uint64_t *len)
{
	uint64_t off = 0;
	uint32_t nf = e->nfields > TB_MAX_FIELDS ? TB_MAX_FIELDS : e->nfields;
	for (uint32_t i = 0; i < nf; i++) {
		const struct tb_field_desc *f = &e->fields[i];
		uint64_t need;
		switch (f->type) {
		case TB_FT_U8: case TB_FT_I8: case TB_FT_BOOL: need = 1; break;
		case TB_FT_U16: case TB_FT_I16: need = 2; break;
		case TB_FT_U32: case TB_FT_I32: case TB_FT_F32: case TB_FT_ENUM: need = 4; break;
		case TB_FT_U64: case TB_FT_I64: case TB_FT_F64: need = 8; break;
		case TB_FT_STRING: {
			uint64_t lim = avail - off;
			if (lim > (uint64_t)f->max_len + 1)
				lim = (uint64_t)f->max_len + 1;
			const uint8_t *z = memchr(p + off, 0, lim);
			if (!z)
				return -1;
			need = (uint64_t)(z - (p + off)) + 1;
			break;
		}
		case TB_FT_BYTES: case TB_FT_U64SEQ: {
			uint32_t n;
			if (avail - off < 4)
				return -1;
			memcpy(&n, p + off, 4);
			if (n > f->max_len)
				return -1;
			need = 4 + (uint64_t)n * (f->type == TB_FT_BYTES ? 1 : 8);
			break;
		}
		default:
			return -1;
		}
		if (need > avail - off)
			return -1;
		off += need;
	}
	*len = off;
	return 0;
}

/* Payload size of a class whose fields all have a fixed size; UINT32_MAX otherwise. */
static uint32_t fixed_size(const struct tb_event_desc *e)
{
	uint32_t nf = e->nfields > TB_MAX_FIELDS ? TB_MAX_FIELDS : e->nfields, n = 0;
	for (uint32_t i = 0; i < nf; i++)
		switch (e->fields[i].type) {
		case TB_FT_U8: case TB_FT_I8: case TB_FT_BOOL: n += 1; break;
		case TB_FT_U16: case TB_FT_I16: n += 2; break;
		case TB_FT_U32: case TB_FT_I32: case TB_FT_F32: case TB_FT_ENUM: n += 4; break;
		case TB_FT_U64: case TB_FT_I64: case TB_FT_F64: n += 8; break;
		default: return UINT32_MAX;
		}
	return n;
}

/* ids below this get their fixed payload size cached for one walk (the
 * consumer walks every record it drains: most are of a few fixed-size
 * classes, and the per-field loop was a fifth of the drain's CPU time) */
#define WALK_CACHE 64u

int tb_walk_packet(const struct tb_event_desc *events, uint32_t nevents, const uint8_t *pkt, uint64_t end,
		   uint64_t ts_begin, uint32_t ctx, tb_walk_fn fn, void *arg, struct tb_walk_result *res)
{
	return tb_walk_packet_want(events, nevents, pkt, end, ts_begin, ctx, fn, arg, NULL, 0, res);
}

int tb_walk_packet_want(const struct tb_event_desc *events, uint32_t nevents, const uint8_t *pkt, uint64_t end,
			uint64_t ts_begin, uint32_t ctx, tb_walk_fn fn, void *arg, const uint8_t *want, uint32_t nwant,
			struct tb_walk_result *res)
{
	uint32_t cache[WALK_CACHE]; /* 0: not computed; else fixed size + 1, or UINT32_MAX: variable */
	memset(cache, 0, sizeof cache);
	memset(res, 0, sizeof *res);
	uint64_t off = TB_PACKET_HEADER_SIZE, clock = ts_begin;
	res->valid_end = off;
	res->last_ts = ts_begin;
	const uint64_t mask = (1ull << TB_COMPACT_TS_BITS) - 1;
	uint32_t last_fid = UINT32_MAX; /* the class of the last record the fast check took (none: no 5-bit id) */
	uint64_t last_need = 0;
	while (off < end) {
		/*
		 * The common record, checked in a few instructions: a compact
		 * header (its time is never before the clock: a lower 27-bit
		 * value is one wrap, as tb_hdr_get() decodes it, unless that
		 * wrap overflows) of a class
		 * already proven valid and of fixed size in this walk (cache,
		 * filled below only after every check), whole inside `end`.
		 * Without a callback, or for the classes `want` says the
		 * callback does not want: nothing else wants the record.  The
		 * general path below decides everything else, and any doubt.
		 */
		if ((!fn || want) && end - off >= TB_COMPACT_HDR_SIZE) {
			/*
			 * In locals (the counters in *res could alias pkt: the
			 * compiler would store and reload them every record),
			 * and the clock as its high part and the previous
			 * record's low bits: the only chain from one record to
			 * the next is then hi += wrap, not the whole decode.
			 */
			uint64_t hi = clock & ~mask, lo = clock & mask, nrec = 0, nev = 0;
			do {
				uint32_t w;
				memcpy(&w, pkt + off, 4);
				uint32_t fid = w & 0x1f;
				uint64_t need = last_need;
				if (fid != last_fid) {
					uint32_t c = cache[fid];
					if (fid == TB_EXTENDED_ID || c - 1u >= UINT32_MAX - 1u)
						break;
					if (want && (fid >= nwant || want[fid]))
						break; /* the callback's: the general path */
					/* a run of one class (the usual packet): the
					 * next record's place does not wait for this
					 * one's load */
					need = (uint64_t)TB_COMPACT_HDR_SIZE + ctx + (uint64_t)c - 1;
					last_fid = fid;
					last_need = need;
				}
				uint64_t low = w >> 5, nhi = hi + (low < lo ? mask + 1 : 0);
				/* nhi < hi: the wrap overflowed 64 bits (a hostile
				 * timestamp_begin near 2^64): the general path says so */
				if (need > end - off || nhi < hi)
					break;
				hi = nhi;
				lo = low;
				off += need;
				nrec++;
				nev += fid != TB_EVENT_ID_THREAD;
			} while (end - off >= TB_COMPACT_HDR_SIZE);
			clock = hi | lo;
			res->records += nrec;
			res->events += nev;
			if (off >= end)
				break;
		}
		res->valid_end = off;
		res->last_ts = clock;
		uint32_t id;
		uint64_t ts = clock;
		uint32_t hs = tb_hdr_get(pkt + off, end - off, &id, &ts);
		if (!hs) {
			res->error = "record header cut by the end of the packet";
			break;
		}
		if (id >= nevents) {
			res->error = "unknown event id";
			break;
		}
		if (events[id].state != 1) {
			/* tb_registry_copy() found the class's entry corrupted: its
			 * payload layout is unknown */
			res->error = "record of an event class whose registry entry is invalid";
			break;
		}
		if (ts < clock) {
			res->error = "timestamp goes back";
			break;
		}
		/* the event context (vtid): after the header, before the payload */
		uint32_t vtid = 0;
		if (ctx) {
			if (ctx > end - off - hs) {
				res->error = "record context cut by the end of the packet";
				break;
			}
			memcpy(&vtid, pkt + off + hs, TB_VTID_SIZE);
			hs += ctx;
		}
		uint64_t plen;
		uint32_t c = id < WALK_CACHE ? cache[id] : UINT32_MAX;
		if (c == 0)
			c = cache[id] = fixed_size(&events[id]) == UINT32_MAX ? UINT32_MAX : fixed_size(&events[id]) + 1;
		if (c != UINT32_MAX) {
			plen = c - 1;
			if (plen > end - off - hs) {
				res->error = "malformed payload";
				break;
			}
		} else if (tb_payload_size(&events[id], pkt + off + hs, end - off - hs, &plen) != 0) {
			res->error = "malformed payload";
			break;
		}
		struct tb_walk_rec r = { id, ts, off, vtid, pkt + off + hs, plen };
		clock = ts;
		off += hs + plen;
		res->valid_end = off;
		res->records++;
		if (id != TB_EVENT_ID_THREAD)
			res->events++;
		res->last_ts = ts;
		if (fn && (!want || id >= nwant || want[id])) {
			int rc = fn(arg, &r);
			if (rc)
				return rc;
		}
	}
	res->valid_end = off;
	res->last_ts = clock;
	if (res->error)
		res->error_off = off;
	return 0;
}
