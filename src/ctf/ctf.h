/* SPDX-License-Identifier: MIT */
/*
 * ctf.h - CTF 1.8 metadata for tracebuf traces (library private).
 *
 * tb_ctf_metadata_write() emits the TSDL that describes every trace tracebuf
 * writes: trace block (uuid, packet header), env block, clock block, the
 * stream classes in use (packet context, compact/extended event header;
 * class 1 adds the event context "vtid") and every event class of the
 * registry, once per stream class of the channels; class 2 (the kernel's
 * streams) has the kernel's event classes only.  The reader's TSDL parser (src/reader/) reads
 * exactly this subset back; docs/FORMAT.md shows a complete example.
 */
#ifndef TB_CTF_CTF_H
#define TB_CTF_CTF_H

#include <stdint.h>
#include <stdio.h>

#include "core/format.h"
#include "core/view.h"

struct tb_ctf_env {
	const char *key;   /* [A-Za-z_][A-Za-z0-9_]* */
	const char *str;   /* string value, or NULL for an integer */
	int64_t num;
};

struct tb_ctf_trace_info {
	uint8_t uuid[16];
	uint64_t clock_freq;      /* ticks per second */
	int64_t clock_offset_ns;  /* Unix-epoch ns at tick 0 */
	const struct tb_event_desc *events; /* registry entries, id == index */
	uint32_t nevents;
	const struct tb_ctf_env *env;
	uint32_t nenv;
	/* stream classes in use: bit k for class k (TB_STREAM_PLAIN,
	 * TB_STREAM_VTID: the channels with vtid); 0 means class 0 only.
	 * Each is declared, and every event class once for each. */
	uint32_t streams;
	/* the kernel's event classes (docs/KERNEL.md): ids TB_KERNEL_ID_BASE + i,
	 * of stream class TB_STREAM_KERNEL, declared (with that class) when
	 * nkevents > 0; none of the registry's classes belongs to it */
	const struct tb_event_desc *kevents;
	uint32_t nkevents;
};

/*
 * Writes the metadata text to `out`.  Event descriptors come from shared
 * memory: names and field descriptors are validated (charset, types, bounds)
 * and an invalid class is written as an event with no fields and its name
 * replaced by "tracebuf:invalid_<id>", so the trace stays readable.
 * Return: 0, -EIO (write error), -EINVAL (info itself inconsistent).
 */
TB_HIDDEN int tb_ctf_metadata_write(FILE *out, const struct tb_ctf_trace_info *info);
/* Only the event blocks of ids [from, info->nevents): what a metadata text
 * written with `from` classes needs appended to describe them all (the
 * relay daemon's metadata stream is append-only). */
TB_HIDDEN int tb_ctf_metadata_write_events(FILE *out, const struct tb_ctf_trace_info *info, uint32_t from);

/* ---- helpers of the writer, shared with the reader and the tests ---- */

/* 1 when s[0..cap) holds a NUL-terminated C identifier. */
TB_HIDDEN int tb_ctf_ident_valid(const char *s, size_t cap);
/* 1 when s[0..cap) holds a NUL-terminated, non-empty [A-Za-z0-9_:.-]+ name. */
TB_HIDDEN int tb_ctf_event_name_valid(const char *s, size_t cap);
/* 1 when registry entry `ev` may be written as class `id` (state, id, name, fields). */
TB_HIDDEN int tb_ctf_event_valid(const struct tb_event_desc *ev, uint32_t id);

/* TSDL names of the sequences' length fields ("__NAME_length", made unique); "" for others. */
#define TB_CTF_LEN_NAME_MAX 64u
TB_HIDDEN void tb_ctf_seq_length_names(const struct tb_event_desc *ev,
				       char names[][TB_CTF_LEN_NAME_MAX]);

/* The clock block's uuid, derived from the trace uuid (docs/CTF.md). */
TB_HIDDEN void tb_ctf_clock_uuid(const uint8_t trace_uuid[16], uint8_t out[16]);
/* offset_s / offset (cycles) of the clock block for realtime = offset_ns + ticks / freq. */
TB_HIDDEN void tb_ctf_clock_offset(int64_t offset_ns, uint64_t freq, int64_t *offset_s,
				   uint64_t *offset_cycles);

#endif
