/* SPDX-License-Identifier: MIT */
/*
 * perf_ring.h - reading a perf_event mmap ring without trusting it.
 *
 * The kernel writes records into the data area of a perf mmap ring and
 * publishes them by storing data_head; the reader consumes them and hands
 * the space back by storing data_tail (include/uapi/linux/perf_event.h, the
 * head/tail protocol).  Everything in the ring is read as hostile input:
 * the head may lie (behind the tail, more than the area ahead of it), a
 * record's size may be 0, unaligned, larger than what was published, and a
 * sample's raw length may point past its record.  Such records are counted
 * (`invalid`), never read out of bounds; a ring whose positions cannot be
 * trusted is skipped to its head.
 *
 * tb_perf_ring_drain() works on a plain struct (data pointer, size, the
 * addresses of head and tail), so tests/unit/test_perf_ring_hostile.c drives
 * it with fabricated rings.
 */
#ifndef TB_KERNEL_PERF_RING_H
#define TB_KERNEL_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

#include "core/view.h"

#define TB_PERF_REC_MAX 65536u /* a perf record's size is a u16: the scratch buffer's size */

struct tb_perf_ring {
	const uint8_t *data;      /* the data area */
	uint64_t size;            /* its size: a power of two */
	const uint64_t *head;     /* &perf_event_mmap_page.data_head (kernel writes) */
	uint64_t *tail;           /* &perf_event_mmap_page.data_tail (we write) */
};

struct tb_perf_ring_stats {
	uint64_t records;  /* well-formed records handed to the callback */
	uint64_t invalid;  /* records refused (bad size), and bad head positions */
	uint64_t bytes;    /* bytes consumed */
};

/* A record: its perf_event_header type and misc, and all its bytes (header included). */
typedef void (*tb_perf_rec_fn)(void *arg, uint32_t type, uint16_t misc, const uint8_t *rec, uint32_t len);

/*
 * tb_perf_ring_drain - consume every record published in `r`, calling `fn`
 * for each well-formed one (a record that wraps around the end of the area
 * is copied whole into `scratch`, TB_PERF_REC_MAX bytes).  The tail is
 * released once, after the last record was handed over.
 * Return: the number of records handed over.
 */
TB_HIDDEN uint64_t tb_perf_ring_drain(struct tb_perf_ring *r, uint8_t *scratch, tb_perf_rec_fn fn, void *arg,
				      struct tb_perf_ring_stats *st);

/*
 * A PERF_RECORD_SAMPLE of sample_type IDENTIFIER | TID | TIME | CPU | RAW
 * (that order in the record: perf_event.h), decoded with every length
 * checked against the record's.  Return 0, or -1 when it does not fit.
 */
struct tb_perf_sample {
	uint64_t id;        /* PERF_SAMPLE_IDENTIFIER: which event (tracepoint, CPU) */
	uint32_t pid, tid;  /* the task current when the tracepoint fired */
	uint64_t time;      /* ns of the event's clock (use_clockid) */
	uint32_t cpu;
	const uint8_t *raw; /* the tracepoint's record (format file layout) */
	uint32_t raw_len;
};
TB_HIDDEN int tb_perf_sample_parse(const uint8_t *rec, uint32_t len, struct tb_perf_sample *out);

/* A PERF_RECORD_LOST {header; u64 id; u64 lost; ...}: 0 and *lost, or -1. */
TB_HIDDEN int tb_perf_lost_parse(const uint8_t *rec, uint32_t len, uint64_t *lost);

#endif
