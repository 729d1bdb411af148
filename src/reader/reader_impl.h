/* SPDX-License-Identifier: MIT */
/*
 * reader_impl.h - the reader's private structures and what its files share:
 * index.c (open, packet index, diagnostics, close), reader.c (decode, merge,
 * seek), access.c (accessors) and render.c (text and JSON renderings).
 */
#ifndef TB_READER_IMPL_H
#define TB_READER_IMPL_H

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "core/view.h"
#include "reader/tsdl.h"

struct rd_stream;
struct rd_diag_slot;

/* One item of the merged iteration; each stream owns one (its `cur`). */
struct tb_rd_event {
	int kind;                 /* enum tb_rd_kind */
	uint32_t ci;              /* class index in meta.classes */
	uint64_t ts;              /* ticks */
	uint64_t ts_end, count;   /* notices */
	const struct rd_packet *pk; /* discarded-events notices: the packet after the loss */
	struct rd_stream *s;
	const struct tb_tsdl_class *k; /* NULL for notices */
	const uint8_t *payload;
	uint32_t len;
	uint32_t pid, tid;
	uint32_t off[TB_TSDL_FIELDS_MAX]; /* field offsets (classes of variable size) */
};

struct rd_packet {
	struct tb_rd_packet p;
	uint64_t lost[TB_LOSS_NCAUSES];       /* running totals by cause (format 2) */
	uint64_t lost_delta[TB_LOSS_NCAUSES]; /* their increase before this packet; valid when delta_ok */
	uint8_t has_lost;  /* lost[] read, and adds up to events_discarded */
	uint8_t delta_ok;  /* lost_delta[] holds: both packets have causes, none went down */
	uint64_t prev_end; /* timestamp_end of the previous valid packet (begin for the first) */
	uint8_t reported;  /* a decoding problem of this packet was reported */
	uint64_t end_check; /* records are checked against it: timestamp_end as written, even when p.ts_end
			     * was brought back to a sane bound (index.c check_end_bounds) */
};

/*
 * Tick -> ns of a stream's items without a 128-bit division each
 * (tb_rd_ns()): the exact quotient and remainder of its latest tick count t,
 *   t * 10^9 = q * freq + rem   (0 <= rem < freq),
 * give those of a later t + d:
 *   (t + d) * 10^9 = (q + x / freq) * freq + x % freq,  x = rem + d * 10^9,
 * and while x < 2^53 (d up to a few ms of ticks: the usual gap between two
 * events of a stream) x / freq is found without a division: x * (1.0 /
 * freq) in doubles is within 1 of it, and the remainder, computed exactly
 * in integers, says which.  Same result as tb_rd_ticks_to_ns(), to the
 * nanosecond; larger gaps take the 128-bit way again.
 */
struct rd_ns_cache {
	int ok;           /* t, q, rem hold */
	uint64_t t, q, rem;
};

struct rd_stream {
	struct tb_reader *r;
	unsigned idx;
	char file[256];
	char channel[256];
	char path[PATH_MAX];
	uint32_t cpu;
	int cpu_from_name;
	const uint8_t *base;
	uint64_t size;
	int mapped;         /* base was mmapped by the reader */
	struct rd_packet *pk;
	size_t npk, cap;
	/* iteration */
	size_t pi;          /* current packet */
	int in_packet;
	unsigned pending;   /* notices still to deliver for this packet: 1 events, 2 packets */
	uint64_t pos, end;  /* byte positions in the file */
	uint64_t clock;     /* ticks of the previous record (or timestamp_begin) */
	uint32_t pid, tid;  /* of the latest tracebuf:thread record of the packet */
	uint32_t sid;       /* stream class of its packets (the first valid packet's stream_id) */
	uint32_t ctx;       /* bytes of event context after each record header: 0, or 4 (vtid) */
	int causes_reported; /* the diagnostic on inconsistent causes was given */
	int has_inst;        /* a valid packet was seen: inst is its stream_instance_id */
	uint64_t inst;
	struct rd_ns_cache ns;
	struct tb_rd_event cur;
};

/*
 * The visible fields of one class (sequence lengths are hidden), with what
 * the renderings need, prepared once at open (tb_rd_fmt_prepare(), render.c)
 * so that formatting an event is no per-field walk through the accessors:
 * type and length field come from here, the value straight from the payload
 * (fixed offsets of the class, or the offsets the decoder stored in the
 * event), and the separator and name before the value are one pre-rendered
 * label per rendering (text ", name = ", JSON ",\"name\":").
 */
struct rd_vfield {
	uint8_t raw;           /* index in the class's fields */
	uint8_t type;          /* TB_FT_* */
	uint8_t size;          /* bytes of a fixed-size field, 0 otherwise */
	uint8_t len_raw;       /* sequences: raw index of their length field */
	uint8_t len_size;      /* sequences: bytes of that length field */
	uint16_t label_len[2]; /* [json] */
	uint32_t label[2];     /* [json]: offset of the label in rd_vis.labels */
};

struct rd_vis {
	uint32_t n;
	struct rd_vfield f[TB_TSDL_FIELDS_MAX]; /* visible field i */
	char *labels;          /* the labels, then RD_LABEL_PAD readable bytes */
};

/* Labels are followed by this many readable bytes (render.c copies them in whole words). */
#define RD_LABEL_PAD 32u

/* Builds r->vis[ci] for every class (after the metadata was parsed). Return: 0, -ENOMEM. */
int tb_rd_fmt_prepare(struct tb_reader *r) __attribute__((visibility("hidden")));

struct rd_tname {
	uint32_t tid;
	char name[16];
};

struct tb_reader {
	char dir[PATH_MAX];
	char meta_path[PATH_MAX + 16];
	unsigned flags;
	tb_rd_diag_fn diag_fn;
	void *diag_arg;
	struct rd_diag_slot *diags;
	uint64_t ndiags;
	uint64_t skipped_packets;
	struct tb_tsdl_meta m;
	struct rd_vis *vis;  /* per class index */
	int32_t thread_ci[TB_NSTREAM_CLASSES]; /* per stream class: class index of tracebuf:thread, -1 none */
	uint32_t tname_ci[TB_NSTREAM_CLASSES]; /* ... of tracebuf:thread_name, UINT32_MAX none */
	struct rd_tname *tnames; /* tid -> latest name seen by the iteration (open addressing) */
	uint32_t tnames_cap, tnames_n; /* power of two; tids held (tid 0: empty slot) */
	uint64_t freq;
	double freq_inv;     /* 1.0 / freq (struct rd_ns_cache) */
	int64_t off_ns;      /* Unix-epoch ns of tick 0 */
	struct rd_stream *streams;
	unsigned nstreams;
	uint64_t total_valid;
	unsigned *heap;
	unsigned nheap;
	int last;            /* stream whose item was returned last, -1 */
};

/*
 * tb_reader_open_mem - like tb_reader_open(), on bytes in memory (the
 * fuzzers and tests): `metadata` is the TSDL text, each stream one file's
 * bytes under its file name.  `name` stands for the directory in messages.
 * The buffers must outlive the reader; nothing is copied.
 */
struct tb_rd_mem_stream {
	const char *name;   /* "chan_0" */
	const uint8_t *data;
	size_t size;
};
int tb_reader_open_mem(const char *name, const char *metadata, size_t mlen, const struct tb_rd_mem_stream *streams,
		       unsigned nstreams, const struct tb_reader_opts *opts, struct tb_reader **out)
	__attribute__((visibility("hidden")));

/* Diagnostics kept for tb_reader_diag(); later ones are only counted. */
#define DIAGS_KEPT 1000u
struct rd_diag_slot {
	struct tb_rd_diag d;
	char what[320];
};

/* index.c: a problem of the trace at byte `off` of `file`: kept for
 * tb_reader_diag() (the first DIAGS_KEPT), counted, passed to the
 * tb_reader_opts callback */
TB_HIDDEN void rd_diag(struct tb_reader *r, const char *file, uint64_t off, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* reader.c: starts the merged iteration (at open, index.c): each stream's
 * first item decoded, the streams in heap order */
TB_HIDDEN void rd_heap_build(struct tb_reader *r);

/* A little-endian unsigned integer of 1, 2, 4 or 8 bytes. */
static inline uint64_t tb_rd_ld_uint(const uint8_t *p, unsigned size)
{
	uint64_t v8;
	switch (size) {
	case 1: return p[0];
	case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: memcpy(&v8, p, 8); return v8;
	}
}

/* The value of an enum field (its container's size and sign), as int64. */
static inline int64_t tb_rd_ld_enum(const uint8_t *p, const struct tb_tsdl_field *fd)
{
	uint64_t v = tb_rd_ld_uint(p, fd->size);
	if (fd->sign && fd->size < 8 && (v >> (fd->size * 8 - 1)) & 1)
		v |= ~0ull << (fd->size * 8); /* sign-extend */
	return (int64_t)v;
}

/* The label of v in an enum's mappings (the first that holds it), or NULL. */
static inline const char *tb_rd_enum_find(const struct tb_tsdl_enum *en, int64_t v)
{
	for (uint32_t i = 0; i < en->n; i++)
		if (en->l[i].lo <= v && v <= en->l[i].hi)
			return en->l[i].name;
	return NULL;
}

/* Conversions shared by index.c and access.c. */
static inline int64_t tb_rd_sat64(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* Unix-epoch ns of a tick count; saturates (damaged clocks and timestamps must not overflow) */
static inline int64_t tb_rd_ticks_to_ns(const struct tb_reader *r, uint64_t t)
{
	int64_t ns;
	if (r->freq == 1000000000 && t <= INT64_MAX && !__builtin_add_overflow(r->off_ns, (int64_t)t, &ns))
		return ns;
	return tb_rd_sat64((__int128)r->off_ns + (__int128)((unsigned __int128)t * 1000000000u / r->freq));
}

#endif
