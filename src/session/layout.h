/* SPDX-License-Identifier: MIT */
/*
 * layout.h - where everything lives in a session file, as a pure function
 * of the creation parameters.  The creator uses it to lay the file out; an
 * attacher recomputes it from the header and requires every stored offset to
 * match: no offset is ever taken from shared memory on trust.
 */
#ifndef TB_SESSION_LAYOUT_H
#define TB_SESSION_LAYOUT_H

#include <stdint.h>

#include "core/format.h"
#include "core/view.h"

struct tb_layout_params {
	uint32_t page_size;
	uint32_t ncpus;
	uint32_t nchannels;
	uint32_t max_events;
	uint64_t sb_size[TB_MAX_CHANNELS];
	uint32_t sb_count[TB_MAX_CHANNELS];
};

struct tb_layout {
	uint64_t chan_off, ctl_off, ring_table_off, reg_off, proc_off, rings_off;
	uint64_t ring_size[TB_MAX_CHANNELS]; /* per ring of channel c */
	uint64_t data_off[TB_MAX_CHANNELS];  /* sub-buffer 0 inside a ring */
	uint64_t file_size;
};

/* Return: 0, or -EINVAL / -EFBIG with tb_errmsg() naming the bad value. */
TB_HIDDEN int tb_layout_compute(const struct tb_layout_params *p, struct tb_layout *out);

/* Offset of ring (ch, cpu) under layout l. */
static inline uint64_t tb_layout_ring_off(const struct tb_layout_params *p, const struct tb_layout *l,
					  unsigned ch, unsigned cpu)
{
	uint64_t off = l->rings_off;
	for (unsigned c = 0; c < ch; c++)
		off += l->ring_size[c] * p->ncpus;
	return off + l->ring_size[ch] * cpu;
}

/*
 * tb_map_validate - validate a mapped session file of `size` bytes and fill
 * the process-local view `s` (everything but fd/path).  Pure: reads only
 * inside [base, base + size).  Used by attach, recover and the fuzzer.
 * Return: 0, -EBADMSG (corrupt: tb_errmsg names the field and value),
 * -EPROTO (other format version).
 */
TB_HIDDEN int tb_map_validate(uint8_t *base, uint64_t size, struct tb_session *s);

/* 1 when `name` is a valid channel name: [A-Za-z0-9_-]{1,31} NUL-terminated within the array. */
TB_HIDDEN int tb_valid_chan_name(const char *name, size_t cap);

#endif
