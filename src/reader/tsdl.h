/* SPDX-License-Identifier: MIT */
/*
 * tsdl.h - parser of the TSDL subset tracebuf writes (library private).
 *
 * tb_tsdl_parse() reads the metadata text written by tb_ctf_metadata_write()
 * (docs/CTF.md) into a flat description: trace uuid, clock, environment and
 * the event classes with their fields.  The trace's packet header, packet
 * context and event header must be exactly tracebuf's (core/format.h; the
 * context may end with any number of u64 "lost_<cause>" fields: format 1
 * traces have none, unknown causes are skipped).  Stream classes 0 and 1
 * may be declared (one or both), with the same packet context and event
 * header; a stream class may have the event context { uint32 _vtid; }
 * (format 3, docs/CTF.md).  An event id declared in both must have the same
 * name in both; any
 * construct outside the subset is an error naming it and its line.  Never
 * reads outside text[0..len), allocates only from the arena of `m`.
 */
#ifndef TB_READER_TSDL_H
#define TB_READER_TSDL_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

#define TB_TSDL_NAME_MAX 128u       /* event class names, field names, env keys */
#define TB_TSDL_FIELDS_MAX 32u      /* fields per class, length fields included */
#define TB_TSDL_ID_MAX (1u << 20)   /* largest event class id accepted */
#define TB_TSDL_ENV_MAX 64u
#define TB_TSDL_LOSS_MAX 32u       /* loss causes: elements of tb_lost_by_cause, or lost_<cause> fields */

/* field kinds: the values of enum tb_field_type (core/format.h) */
struct tb_tsdl_field {
	char name[TB_TSDL_NAME_MAX]; /* as shown: one leading '_' removed */
	uint8_t type;                /* TB_FT_* */
	uint8_t size;                /* bytes of a fixed-size field, 0 otherwise */
	uint8_t is_length;           /* the length of a later sequence */
	int8_t length_of;            /* sequences: index of their length field */
	uint8_t sign;                /* TB_FT_ENUM: the container is signed */
	int32_t enum_idx;            /* TB_FT_ENUM: index in meta->enums; -1 otherwise */
};

/* The mappings of an enum field: label -> [lo, hi], in the order of the text. */
struct tb_tsdl_label {
	int64_t lo, hi;
	const char *name;
};
struct tb_tsdl_enum {
	uint32_t n;
	struct tb_tsdl_label *l; /* one allocation: the n mappings, then their names */
};

struct tb_tsdl_class {
	char name[TB_TSDL_NAME_MAX];
	uint32_t id;
	uint32_t stream_id;           /* its stream class: < TB_NSTREAM_CLASSES */
	uint32_t nfields;
	struct tb_tsdl_field fields[TB_TSDL_FIELDS_MAX];
	int32_t fixed_size;           /* payload bytes when every field is fixed, else -1 */
	uint32_t fixed_off[TB_TSDL_FIELDS_MAX]; /* offsets when fixed_size >= 0 */
};

struct tb_tsdl_env {
	char key[TB_TSDL_NAME_MAX];
	char str[256];   /* string value, or "" */
	int is_str;
	int64_t num;
};

struct tb_tsdl_meta {
	uint8_t uuid[16];
	int has_uuid;
	char clock_name[TB_TSDL_NAME_MAX];
	uint64_t clock_freq;
	int64_t clock_offset_s;
	uint64_t clock_offset;      /* cycles */
	uint32_t nenv;
	struct tb_tsdl_env env[TB_TSDL_ENV_MAX];
	uint32_t pkt_hdr_size;         /* packet header + context bytes: 88 (format 1), 160 (formats 2-4) */
	uint16_t loss_off[TB_LOSS_NCAUSES]; /* offset of the count of each cause in a packet, 0 if absent */
	struct tb_tsdl_pkt_off {       /* offsets of the context fields in a packet (core/format.h: */
		uint16_t ts_begin, ts_end; /* formats 1-3 have them at 32..84, format 4 at 104..159) */
		uint16_t content, packet, seq, discarded, cpu;
		uint8_t cpu_bytes;     /* 4 (formats 1-3) or 8 */
	} off;
	uint32_t streams;              /* bit k: stream class k is declared */
	uint8_t stream_ctx[TB_NSTREAM_CLASSES]; /* bytes of event context of its records: 0, or 4 (vtid) */
	uint32_t nclasses;
	struct tb_tsdl_class *classes; /* nclasses, in the order of the text */
	uint32_t nenums;
	struct tb_tsdl_enum *enums;    /* the enum fields' mappings (tb_tsdl_field.enum_idx) */
	uint32_t max_id;
	int32_t *by_id;                /* [TB_NSTREAM_CLASSES * (max_id + 1)]: index in classes, -1 none */
};

/* Index in m->classes of event id `id` of stream class `sid`, -1 none. */
static inline int32_t tb_tsdl_class_at(const struct tb_tsdl_meta *m, uint32_t sid, uint32_t id)
{
	if (sid >= TB_NSTREAM_CLASSES || id > m->max_id)
		return -1;
	return m->by_id[(size_t)sid * ((size_t)m->max_id + 1) + id];
}

/*
 * Parses text[0..len).  Return: 0; -EBADMSG (syntax or unsupported
 * construct: tb_errmsg() says "metadata line N: ...", *err_line = N),
 * -ENOMEM.  On error *m is freed already.  err_line may be NULL.
 */
int tb_tsdl_parse(const char *text, size_t len, struct tb_tsdl_meta *m, int *err_line)
	__attribute__((visibility("hidden")));
void tb_tsdl_free(struct tb_tsdl_meta *m) __attribute__((visibility("hidden")));

#endif
