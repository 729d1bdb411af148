/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/reader.h - read a tracebuf CTF trace directory, fast.
 *
 * The reader parses the trace's metadata (the TSDL subset tracebuf writes,
 * docs/CTF.md), maps every stream file (`<channel>_<cpu>`), indexes their
 * packets from the packet headers alone, and iterates the events of every
 * stream merged by timestamp, decoding them in place: no allocation per
 * event.  Damaged input (truncated files, bad packet headers, unknown event
 * ids, timestamps that go back) is reported once per problem through the
 * diagnostics callback and skipped; everything else is still read.
 * See docs/READER.md.
 *
 * Threads: a reader and the events it returns belong to one thread at a
 * time.  Events returned by tb_reader_next() stay valid until the next call
 * of tb_reader_next()/tb_reader_seek_*()/tb_reader_close() on that reader.
 * Errors: negative errno, and tb_errmsg() (tracebuf/session.h) says what.
 *
 * Names: tb_reader_*() act on the open trace (struct tb_reader: open, next,
 * seek, classes, streams, close); tb_rd_*() read one item it returned
 * (struct tb_rd_event: kind, time, fields, loss counts), short because they
 * are called per event and per field.
 */
#ifndef TRACEBUF_READER_H
#define TRACEBUF_READER_H

#include <stddef.h>
#include <stdint.h>

#include <tracebuf/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tb_reader;   /* opaque: one open trace */
struct tb_rd_event; /* opaque: one item of the merged iteration */

/* A problem found in the input, reported once. */
struct tb_rd_diag {
	const char *file;   /* path of the file ("…/metadata", "…/chan_0") */
	uint64_t offset;    /* byte offset in that file */
	int err;            /* -EBADMSG (corrupt), -ENODATA (truncated), -ERANGE (time) */
	const char *what;   /* sentence: what is wrong and what was skipped */
};
typedef void (*tb_rd_diag_fn)(void *arg, const struct tb_rd_diag *d);

enum {
	TB_READER_THREAD_EVENTS = 1u, /* also deliver the tracebuf:thread records */
};

struct tb_reader_opts {
	size_t size;           /* sizeof(struct tb_reader_opts) */
	unsigned flags;        /* TB_READER_* */
	tb_rd_diag_fn diag;    /* NULL: diagnostics are only counted and kept */
	void *diag_arg;
};

/*
 * tb_reader_open - open trace directory `dir` (opts may be NULL).
 * Diagnostics found while indexing are reported before it returns.
 * Return: 0; -ENOENT/-ENOTDIR/-EACCES (directory or metadata); -EBADMSG
 * (metadata unreadable: tb_errmsg() names the line and construct);
 * -ENODATA (nothing readable: every packet was damaged); -ENOMEM.
 */
TB_API int tb_reader_open(const char *dir, const struct tb_reader_opts *opts, struct tb_reader **out);
TB_API void tb_reader_close(struct tb_reader *r);

/*
 * tb_reader_next - the next item in time order (ties: stream, then order in
 * the stream).  Return: 1 and *ev; 0 at the end.
 */
TB_API int tb_reader_next(struct tb_reader *r, const struct tb_rd_event **ev);

/* Restart the iteration at the first item at or after time t (ns since the
 * Unix epoch, or clock ticks).  Uses the packet index only.  Return: 0. */
TB_API int tb_reader_seek_ns(struct tb_reader *r, int64_t ns);
TB_API int tb_reader_seek_ticks(struct tb_reader *r, uint64_t ticks);

/* Problems reported so far (each also given to the callback). */
TB_API uint64_t tb_reader_ndiags(const struct tb_reader *r);
/* The i-th problem (the first 1000 are kept), or NULL. */
TB_API const struct tb_rd_diag *tb_reader_diag(const struct tb_reader *r, uint64_t i);

/* ---- trace-wide information ---- */
TB_API uint64_t tb_reader_clock_freq(const struct tb_reader *r);
TB_API int64_t tb_reader_ticks_to_ns(const struct tb_reader *r, uint64_t ticks); /* Unix epoch ns */
TB_API uint64_t tb_reader_ns_to_ticks(const struct tb_reader *r, int64_t ns);
/* Time range of the valid packets (ticks); 0 when there is none. */
TB_API int tb_reader_time_range(const struct tb_reader *r, uint64_t *begin, uint64_t *end);
/* Environment of the metadata: the i-th key, and its value as a string (numbers printed). */
TB_API unsigned tb_reader_nenv(const struct tb_reader *r);
TB_API const char *tb_reader_env_key(const struct tb_reader *r, unsigned i);
TB_API const char *tb_reader_env_value(const struct tb_reader *r, unsigned i);
/* Event classes: largest id (+1), name of an id (NULL if none). */
TB_API uint32_t tb_reader_nclass_ids(const struct tb_reader *r);
TB_API const char *tb_reader_class_name(const struct tb_reader *r, uint32_t id);

/* ---- streams and packets ---- */
TB_API unsigned tb_reader_nstreams(const struct tb_reader *r);
TB_API const char *tb_reader_stream_file(const struct tb_reader *r, unsigned s); /* "chan_0" */
TB_API const char *tb_reader_stream_channel(const struct tb_reader *r, unsigned s); /* "chan" */
TB_API uint32_t tb_reader_stream_cpu(const struct tb_reader *r, unsigned s);
TB_API uint64_t tb_reader_stream_bytes(const struct tb_reader *r, unsigned s);

struct tb_rd_packet {
	uint64_t offset;           /* in the stream file */
	uint64_t ts_begin, ts_end; /* ticks */
	uint64_t seq;              /* packet_seq_num */
	uint64_t events_discarded; /* running total */
	uint64_t content_bytes, packet_bytes;
	uint64_t lost_packets;     /* seq gap before this packet */
	uint64_t discarded_delta;  /* increase of events_discarded before this packet; UINT64_MAX unknown */
	uint32_t cpu;
	uint32_t valid;            /* 0: damaged, skipped (a diagnostic says why) */
};
TB_API size_t tb_reader_npackets(const struct tb_reader *r, unsigned s);
TB_API int tb_reader_packet(const struct tb_reader *r, unsigned s, size_t i, struct tb_rd_packet *out);

/*
 * Causes of loss.  A trace of format 2 or later carries, in each packet, the
 * running total of each cause (format 4: the packet header's array
 * tb_lost_by_cause; formats 2-3: packet context fields lost_<name>;
 * docs/CTF.md); they add up to events_discarded.  Format 1 traces carry only
 * the total.
 */
enum tb_rd_loss {
	TB_RD_LOST_FULL = 0,        /* ring full (discard mode) */
	TB_RD_LOST_TOOBIG = 1,      /* record larger than a sub-buffer */
	TB_RD_LOST_OVERWRITTEN = 2, /* flight recorder: older than the oldest packet kept */
	TB_RD_LOST_TIMEOUT = 3,     /* block mode: waited the timeout */
	TB_RD_LOST_BUSY = 4,        /* fallback protocol: every ring busy */
	TB_RD_LOST_NOCONSUMER = 5,  /* block mode: the consumer was gone */
	TB_RD_LOST_INVALID = 6,     /* the consumer found them damaged and dropped them */
	TB_RD_LOST_DISK = 7,        /* the trace could not be written (disk full, I/O error) */
	TB_RD_LOST_RELAY = 8,       /* could not be sent to the relay daemon */
	TB_RD_LOST_NCAUSES = 9,
};
/* Short name of a cause ("full", "toobig", "overwritten", "timeout", "busy",
 * "noconsumer", "invalid", "disk", "relay"); NULL past the last. */
TB_API const char *tb_rd_loss_name(unsigned cause);
/*
 * Running loss totals by cause of packet i of stream s into lost[0..n).
 * Return: 1 when the packet carries causes that add up to its
 * events_discarded; 0 when it does not (format 1, or damaged: lost[] zeroed);
 * -EINVAL for a bad stream or packet index.
 */
TB_API int tb_reader_packet_lost(const struct tb_reader *r, unsigned s, size_t i, uint64_t *lost, unsigned n);

/* ---- items ---- */
enum tb_rd_kind {
	TB_RD_EVENT = 1,
	TB_RD_DISCARDED_EVENTS = 2,  /* events_discarded grew: count() events lost (0: unknown) */
	TB_RD_DISCARDED_PACKETS = 3, /* packet_seq_num gap: count() packets lost */
};

/* Field types: the values of the event registry's types. */
enum tb_rd_type {
	TB_RD_U8 = 1, TB_RD_U16, TB_RD_U32, TB_RD_U64,
	TB_RD_I8, TB_RD_I16, TB_RD_I32, TB_RD_I64,
	TB_RD_F64, TB_RD_STRING, TB_RD_BYTES, TB_RD_U64SEQ,
	TB_RD_BOOL, /* tb_rd_u64(): 0 or 1 */
	TB_RD_F32,  /* tb_rd_f64() */
	TB_RD_ENUM, /* an integer with labels: tb_rd_i64() and tb_rd_enum_label() */
};

TB_API int tb_rd_kind(const struct tb_rd_event *e);
TB_API uint64_t tb_rd_ticks(const struct tb_rd_event *e); /* notices: start of the range */
TB_API int64_t tb_rd_ns(const struct tb_rd_event *e);     /* Unix epoch ns */
TB_API uint32_t tb_rd_cpu(const struct tb_rd_event *e);
TB_API unsigned tb_rd_stream(const struct tb_rd_event *e);
TB_API const char *tb_rd_channel(const struct tb_rd_event *e);
/* pid of the latest tracebuf:thread record earlier in the packet; 0 unknown */
TB_API uint32_t tb_rd_pid(const struct tb_rd_event *e);
/* tid of the thread that wrote the event: on a channel recorded with vtid
 * (stream class 1, docs/CTF.md) the exact one the event carries, else that
 * of the latest tracebuf:thread record earlier in the packet; 0 unknown */
TB_API uint32_t tb_rd_tid(const struct tb_rd_event *e);
/*
 * The name of thread `tid` as far as the iteration has come: from the latest
 * tracebuf:thread_name event returned so far (a thread's name is recorded
 * before its first event when it is not the program's name, and again at
 * each rename; docs/READER.md).  NULL when none was seen (an unnamed thread:
 * show its tid).  Valid until the next tb_reader_next() or tb_reader_close().
 */
TB_API const char *tb_reader_thread_name(const struct tb_reader *r, uint32_t tid);
/* notices: number lost (0 = unknown) and end of the range (ticks) */
TB_API uint64_t tb_rd_count(const struct tb_rd_event *e);
TB_API uint64_t tb_rd_ticks_end(const struct tb_rd_event *e);
/* discarded-events notices: how many of the count were lost to `cause`
 * (enum tb_rd_loss); UINT64_MAX when the trace does not say (format 1, or
 * damaged counts); 0 for other items. */
TB_API uint64_t tb_rd_lost(const struct tb_rd_event *e, unsigned cause);

/* events: class and fields (sequence length fields are part of their sequence, not listed) */
TB_API uint32_t tb_rd_id(const struct tb_rd_event *e);
TB_API const char *tb_rd_name(const struct tb_rd_event *e);
TB_API unsigned tb_rd_nfields(const struct tb_rd_event *e);
TB_API const char *tb_rd_field_name(const struct tb_rd_event *e, unsigned i);
TB_API int tb_rd_field_type(const struct tb_rd_event *e, unsigned i); /* enum tb_rd_type, -EINVAL */
TB_API int tb_rd_field_index(const struct tb_rd_event *e, const char *name); /* or -ENOENT */
/* integers of any width (signed ones sign-extended), booleans (0, 1), floats and doubles; 0 for other types.
 * A double read as an integer is truncated toward zero and saturated (NaN: 0;
 * tb_rd_u64: negative values 0). */
TB_API uint64_t tb_rd_u64(const struct tb_rd_event *e, unsigned i);
TB_API int64_t tb_rd_i64(const struct tb_rd_event *e, unsigned i);
TB_API double tb_rd_f64(const struct tb_rd_event *e, unsigned i);
/* enum fields: the label of the value (the first mapping that holds it, as
 * the metadata lists them); NULL when no label maps it, or for other types */
TB_API const char *tb_rd_enum_label(const struct tb_rd_event *e, unsigned i);
/* strings: NUL-terminated, *len without the NUL (len may be NULL); NULL for other types */
TB_API const char *tb_rd_str(const struct tb_rd_event *e, unsigned i, size_t *len);
/* sequences: element count and raw little-endian elements (unaligned); NULL for other types */
TB_API const void *tb_rd_seq(const struct tb_rd_event *e, unsigned i, uint32_t *count);
TB_API uint64_t tb_rd_seq_u64(const struct tb_rd_event *e, unsigned i, uint32_t j);
/* payload bytes of the record (without header) */
TB_API const void *tb_rd_payload(const struct tb_rd_event *e, size_t *len);

/* ---- rendering (used by tracebuf dump/report/convert) ---- */
/*
 * The event's fields as text ("a = 1, s = \"x\", d = [ 1, 2 ]") or as JSON
 * object members ("\"a\":1,\"s\":\"x\",\"d\":[1,2]").  Like snprintf:
 * writes at most cap bytes (no NUL), returns the length needed.  The bytes
 * of buf after the returned length (up to cap) may be changed too.
 */
TB_API size_t tb_rd_format_fields(const struct tb_rd_event *e, int json, char *buf, size_t cap);
/*
 * The one escaping rule of every output (docs/READER.md, "Strings from a trace"): a
 * string from a trace, a profile or an ELF file never reaches a terminal or a
 * parser raw.  Text: the bytes of C0 controls (0x00-0x1f), DEL, C1 controls
 * (U+0080-U+009F, bytes C2 80-9F) and of ill-formed UTF-8 (RFC 3629: overlong
 * forms, surrogates, beyond U+10FFFF, truncated, stray) as \xNN each.  JSON:
 * controls as \u00XX, each maximal ill-formed subpart as \ufffd (U+FFFD, the
 * replacement character): valid UTF-8 JSON that a strict parser takes.
 */
/* A quoted, escaped string: the rule above, plus \" \\ \n \t \r; buf and cap as above. */
TB_API size_t tb_rd_format_string(const char *s, size_t n, int json, char *buf, size_t cap);
/* The text rule unquoted ('"' and '\' as they are), for tables, lists and messages; buf and cap as above. */
TB_API size_t tb_rd_format_text(const char *s, size_t n, char *buf, size_t cap);
/* s[0..n) as well-formed UTF-8 (protobuf string fields): each maximal ill-formed
 * subpart replaced by U+FFFD (EF BF BD); controls kept.  buf and cap as above. */
TB_API size_t tb_rd_utf8_clean(const char *s, size_t n, char *buf, size_t cap);
/*
 * The length of the well-formed UTF-8 sequence at s (n >= 1 bytes left), or 0
 * when it is ill-formed, and then (bad not NULL) *bad = the length of its
 * maximal subpart (at least 1): what one U+FFFD replaces.
 */
TB_API size_t tb_rd_utf8_len(const char *s, size_t n, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif
