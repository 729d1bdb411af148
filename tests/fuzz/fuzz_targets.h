/* SPDX-License-Identifier: MIT */
/*
 * fuzz_targets.h - the fuzzers' entry points, shared by the libFuzzer
 * drivers (fuzz_*.c) and the regression replay tests
 * (tests/fuzz/test_*_fuzz_regress.c), which link them without libFuzzer.
 */
#ifndef TB_FUZZ_TARGETS_H
#define TB_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

/*
 * tb_fuzz_tsdl - data is metadata text.  Parses it with the TSDL parser;
 * when it parses, opens it as a trace with one fixed valid stream and reads
 * every event.  Always returns 0; a bug shows as a crash or sanitizer report.
 */
int tb_fuzz_tsdl(const uint8_t *data, size_t size);

/*
 * tb_fuzz_stream - the fixed metadata of tb_fuzz_registry() with fuzzed
 * stream files.  Input layout (docs/READER.md, "Fuzzing"):
 *   byte 0      flags: bit 0 deliver thread records, bit 1 seek and read again
 *   byte 1      number of stream files - 1 (mod 3)
 *   then for every stream file but the last: u32 length (little endian,
 *               clamped to what is left), that many bytes; the last file
 *               takes the rest.
 * Reads every item with every accessor and both renderings.  Returns 0.
 */
int tb_fuzz_stream(const uint8_t *data, size_t size);

/* The event classes of the fixed metadata (id == index; n entries). */
void tb_fuzz_registry(struct tb_event_desc *ev, uint32_t *n);
#define TB_FUZZ_NEVENTS 7u

/* The fixed metadata text (written once, then cached). */
const char *tb_fuzz_metadata(size_t *len);

/*
 * tb_fuzz_map - the session-map target (fuzz_map.c): data is the start of a
 * session file, zero-extended to its header's file_size.  Returns 0.
 * tb_fuzz_map_last_valid is 1 when the last input validated.
 */
int tb_fuzz_map(const uint8_t *data, size_t size);
extern int tb_fuzz_map_last_valid;

#endif
