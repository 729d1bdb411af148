/* SPDX-License-Identifier: MIT */
/*
 * tbtrace.h - a tiny synthetic CTF trace writer for the reader's tests,
 * fuzz seeds and benchmark: writes the metadata with tb_ctf_metadata_write()
 * and packets laid out exactly as core/format.h says, without a session.
 * Test-only: aborts on I/O errors.
 */
#ifndef TBTRACE_H
#define TBTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

struct tbtrace;
struct tbtrace_stream;

/* An env entry of the metadata (str NULL: the integer num). */
struct tbtrace_env {
	const char *key;
	const char *str;
	int64_t num;
};

struct tbtrace_opts {
	uint8_t uuid[16];           /* zero: a fixed test uuid */
	uint64_t clock_freq;        /* 0: 1 GHz */
	int64_t clock_offset_ns;    /* 0: 1700000000 s */
	uint64_t packet_size;       /* bytes; 0: 4096 */
	const struct tb_event_desc *events; /* registry (id == index); entry 0 is ignored */
	uint32_t nevents;
	const struct tbtrace_env *env; /* extra env entries (proc_<pid>, ...) after the fixed three */
	uint32_t nenv;
};

/* Creates DIR (if needed) and writes DIR/metadata. */
struct tbtrace *tbtrace_open(const char *dir, const struct tbtrace_opts *o);
/* Stream file DIR/<channel>_<cpu>, channel index `chan` in stream_instance_id. */
struct tbtrace_stream *tbtrace_stream(struct tbtrace *t, const char *channel, uint32_t chan, uint32_t cpu);
/* Appends one record; opens/closes packets as needed.  Timestamps must not go back. */
void tbtrace_event(struct tbtrace_stream *s, uint32_t id, uint64_t ts, const void *payload, size_t len);
/* A tracebuf:thread record; starts a new packet unless 64 bytes of payload fit after it. */
void tbtrace_thread(struct tbtrace_stream *s, uint64_t ts, uint32_t pid, uint32_t tid);
/*
 * Attributes the following events of the stream to pid/tid the way an
 * attribution-enabled producer does: a tracebuf:thread record is written
 * before the next event whenever a packet opens or the thread changes.
 * tid 0 stops it.
 */
void tbtrace_set_thread(struct tbtrace_stream *s, uint32_t pid, uint32_t tid);
/* Adds n to the stream's events_discarded running total (seen in the next packet closed), as ring-full losses. */
void tbtrace_discard(struct tbtrace_stream *s, uint64_t n);
/* Skips n packet sequence numbers (lost packets) before the next packet. */
void tbtrace_skip_seq(struct tbtrace_stream *s, uint64_t n);
/* Closes the current packet (timestamp_end = max(last event, ts_end)). */
void tbtrace_packet_close(struct tbtrace_stream *s, uint64_t ts_end);
/* Closes every stream and frees everything. */
void tbtrace_close(struct tbtrace *t);

/* Registry helpers: fill desc `d` with name and "type:name" field specs. */
void tbtrace_desc(struct tb_event_desc *d, uint32_t id, const char *name, int nfields, ...);

/* Payload builder. */
struct tbtrace_buf { uint8_t b[65536]; size_t n; };
void tbb_u8(struct tbtrace_buf *b, uint8_t v);
void tbb_u16(struct tbtrace_buf *b, uint16_t v);
void tbb_u32(struct tbtrace_buf *b, uint32_t v);
void tbb_u64(struct tbtrace_buf *b, uint64_t v);
void tbb_f64(struct tbtrace_buf *b, double v);
void tbb_str(struct tbtrace_buf *b, const char *s);
void tbb_bytes(struct tbtrace_buf *b, const void *p, uint32_t n);
void tbb_u64s(struct tbtrace_buf *b, const uint64_t *p, uint32_t n);

#endif
