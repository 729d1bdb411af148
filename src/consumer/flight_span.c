/* SPDX-License-Identifier: MIT */
/*
 * flight_span.c - the open spans of --snapshot-on 'SPAN>DUR' (flight_impl.h):
 * a bounded table of (tid, condition) -> a stack of begin times, for the scan
 * (flight_scan.c), which feeds it begin and end records in time order.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones: a table that sees millions of begins and ends stays exact).
 * Bounds: TB_SPAN_SLOTS slots, at most 7/8 of them in use (probes stay short):
 * a begin that finds the table at that bound is not timed (-1: the caller
 * counts and says it); TB_SPAN_DEPTH nested begins of one span on one thread
 * are timed, deeper ones only counted, so that their ends still pair right.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/flight_impl.h"

struct span_slot {
	uint32_t tid;      /* meaningful when depth > 0 */
	uint32_t cond;
	uint32_t depth;    /* 0: free */
	uint32_t pad;
	uint64_t begin[TB_SPAN_DEPTH];
};

struct tb_span_table {
	struct span_slot slot[TB_SPAN_SLOTS];
	uint32_t used;
};

struct tb_span_table *tb_span_table_new(void)
{
	return calloc(1, sizeof(struct tb_span_table));
}

void tb_span_table_free(struct tb_span_table *t)
{
	free(t);
}

uint32_t tb_span_open(const struct tb_span_table *t)
{
	return t->used;
}

uint32_t tb_span_clear(struct tb_span_table *t)
{
	uint32_t n = t->used;
	memset(t, 0, sizeof *t);
	return n;
}

static uint32_t hash(uint32_t tid, uint32_t cond)
{
	return ((tid * 0x9E3779B1u) ^ (cond * 0x85EBCA6Bu)) & (TB_SPAN_SLOTS - 1);
}

static struct span_slot *find(struct tb_span_table *t, uint32_t tid, uint32_t cond, int create)
{
	uint32_t h = hash(tid, cond);
	for (uint32_t i = 0; i < TB_SPAN_SLOTS; i++) {
		struct span_slot *sl = &t->slot[(h + i) & (TB_SPAN_SLOTS - 1)];
		if (sl->depth && sl->tid == tid && sl->cond == cond)
			return sl;
		if (!sl->depth) {
			if (!create || t->used >= TB_SPAN_SLOTS - TB_SPAN_SLOTS / 8)
				return NULL;
			sl->tid = tid;
			sl->cond = cond;
			t->used++;
			return sl;
		}
	}
	return NULL;
}

int tb_span_begin(struct tb_span_table *t, uint32_t tid, uint32_t cond, uint64_t ts)
{
	struct span_slot *sl = find(t, tid, cond, 1);
	if (!sl)
		return -1;
	if (sl->depth < TB_SPAN_DEPTH)
		sl->begin[sl->depth] = ts;
	sl->depth++;
	return sl->depth > TB_SPAN_DEPTH ? 1 : 0;
}

int tb_span_end(struct tb_span_table *t, uint32_t tid, uint32_t cond, uint64_t *begin)
{
	struct span_slot *sl = find(t, tid, cond, 0);
	if (!sl)
		return 0;
	uint32_t d = --sl->depth;
	int timed = d < TB_SPAN_DEPTH;
	if (timed)
		*begin = sl->begin[d];
	if (d == 0) {
		/* backward shift: an entry after the hole moves into it when
		 * its home slot is not cyclically between the hole and it */
		uint32_t i = (uint32_t)(sl - t->slot);
		t->used--;
		for (uint32_t j = (i + 1) & (TB_SPAN_SLOTS - 1); t->slot[j].depth; j = (j + 1) & (TB_SPAN_SLOTS - 1)) {
			uint32_t h = hash(t->slot[j].tid, t->slot[j].cond);
			if (((j - h) & (TB_SPAN_SLOTS - 1)) >= ((j - i) & (TB_SPAN_SLOTS - 1))) {
				t->slot[i] = t->slot[j];
				t->slot[j].depth = 0;
				i = j;
			}
		}
	}
	return timed;
}
