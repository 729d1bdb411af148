/* SPDX-License-Identifier: MIT */
/*
 * perf_ring.c - the head/tail protocol of a perf mmap ring, and the two
 * record layouts the kernel recorder reads, every length checked (perf_ring.h).
 */
#include <string.h>

#include "kernel/perf_ring.h"

/* Copies n bytes at free-running position pos out of the ring (wrapping). */
static void ring_copy(const struct tb_perf_ring *r, uint64_t pos, uint8_t *dst, uint64_t n)
{
	uint64_t off = pos & (r->size - 1);
	uint64_t first = r->size - off < n ? r->size - off : n;
	memcpy(dst, r->data + off, first);
	if (n > first)
		memcpy(dst + first, r->data, n - first);
}

uint64_t tb_perf_ring_drain(struct tb_perf_ring *r, uint8_t *scratch, tb_perf_rec_fn fn, void *arg,
			    struct tb_perf_ring_stats *st)
{
	/* Acquire: pairs with the kernel's publication of data_head
	 * (perf_output_put_handle: the records' stores, smp_wmb, then the
	 * head store): every record before head is complete when we read it. */
	uint64_t head = __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
	/* The tail is ours (the kernel only reads it): a plain load. */
	uint64_t pos = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	uint64_t n = 0;
	if (head == pos)
		return 0;
	if (head - pos > r->size) {
		/* behind the tail, or more than the area holds: nothing between
		 * can be located; skip to head */
		st->invalid++;
		pos = head;
	}
	while (pos != head) {
		uint64_t avail = head - pos;
		uint8_t hb[8];
		if (avail < sizeof hb) {
			st->invalid++; /* a torn header: the rest cannot be a record */
			break;
		}
		ring_copy(r, pos, hb, sizeof hb);
		uint32_t type;
		uint16_t misc, size;
		memcpy(&type, hb, 4);
		memcpy(&misc, hb + 4, 2);
		memcpy(&size, hb + 6, 2);
		if (size < sizeof hb || (size & 7) || size > avail) {
			/* the next record's place is unknown: give up to head */
			st->invalid++;
			break;
		}
		uint64_t off = pos & (r->size - 1);
		const uint8_t *rec;
		if (off + size <= r->size) {
			rec = r->data + off;
		} else {
			ring_copy(r, pos, scratch, size); /* size <= 65535 < TB_PERF_REC_MAX */
			rec = scratch;
		}
		fn(arg, type, misc, rec, size);
		n++;
		st->records++;
		st->bytes += size;
		pos += size;
	}
	/* Release: pairs with the kernel's read of data_tail before it writes
	 * over the space (perf_output_begin: READ_ONCE(data_tail), then smp_mb
	 * before its stores): our reads of the records above complete first. */
	__atomic_store_n(r->tail, head, __ATOMIC_RELEASE);
	return n;
}

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

int tb_perf_sample_parse(const uint8_t *rec, uint32_t len, struct tb_perf_sample *out)
{
	/* header 8, id 8, pid/tid 8, time 8, cpu/res 8, raw size 4 */
	const uint32_t fixed = 8 + 8 + 8 + 8 + 8 + 4;
	if (len < fixed)
		return -1;
	out->id = ld64(rec + 8);
	out->pid = ld32(rec + 16);
	out->tid = ld32(rec + 20);
	out->time = ld64(rec + 24);
	out->cpu = ld32(rec + 32);
	out->raw_len = ld32(rec + 40);
	if (out->raw_len > len - fixed)
		return -1;
	out->raw = rec + fixed;
	return 0;
}

int tb_perf_lost_parse(const uint8_t *rec, uint32_t len, uint64_t *lost)
{
	if (len < 8 + 16)
		return -1;
	*lost = ld64(rec + 16);
	return 0;
}
