/* SPDX-License-Identifier: MIT */
/*
 * pending.c - a CPU's kernel events drained and not written yet (struct
 * kpend, kernel_impl.h): 32-byte entries that the pass sorts, merges and
 * holds back, their payloads apart in a per-CPU arena, so that what moves
 * is small (capture.c: a pass holds back the events stamped within its
 * 10 ms margin, about two thirds of them in a switch storm, and moved them
 * whole, payloads of up to TB_KEV_PAYLOAD_MAX bytes, at every pass).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel_impl.h"

int tb_kpend_room(struct kcpu *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct kpend *n = realloc(c->ev, cap * sizeof *n);
		if (!n)
			return -1;
		c->ev = n;
		c->cap = cap;
	}
	/* room for the largest payload at the arena's end (offsets: u32) */
	if (c->arena_cap - c->arena_len < TB_KEV_PAYLOAD_MAX) {
		size_t cap = c->arena_cap ? c->arena_cap * 2 : (size_t)64 * 1024;
		uint8_t *a = cap <= UINT32_MAX ? realloc(c->arena, cap) : NULL;
		if (!a)
			return -1;
		c->arena = a;
		c->arena_cap = cap;
	}
	return 0;
}

void tb_kpend_hold(struct kcpu *c)
{
	if (c->next)
		memmove(c->ev, c->ev + c->next, (c->n - c->next) * sizeof *c->ev);
	c->n -= c->next;
	c->next = 0;
	if (!c->n) {
		c->arena_len = 0; /* none held back: the arena is free again */
		return;
	}
	/* their payloads move to the start of the other arena (the rest of this
	 * one was written), which then becomes the arena */
	size_t need = 0;
	for (size_t j = 0; j < c->n; j++)
		need += c->ev[j].len;
	if (need > c->arena2_cap) {
		/* at most what the arena holds now: its size will do */
		uint8_t *a = realloc(c->arena2, c->arena_cap);
		if (a) {
			c->arena2 = a;
			c->arena2_cap = c->arena_cap;
		}
	}
	if (need > c->arena2_cap)
		return; /* out of memory: they stay where they are, the arena grows */
	size_t at = 0;
	for (size_t j = 0; j < c->n; j++) {
		memcpy(c->arena2 + at, c->arena + c->ev[j].off, c->ev[j].len);
		c->ev[j].off = (uint32_t)at;
		at += c->ev[j].len;
	}
	uint8_t *t = c->arena;
	size_t tcap = c->arena_cap;
	c->arena = c->arena2;
	c->arena_cap = c->arena2_cap;
	c->arena2 = t;
	c->arena2_cap = tcap;
	c->arena_len = at;
}

/* Stable sort by time: a natural merge sort of the ascending runs.  Each
 * ring is in order but for the rare record an interrupt reserved between
 * another's clock read and its reservation (a run ends there), and a CPU
 * with two rings (open.c, ring_group) appends one after the other: a few
 * runs, merged in O(n log runs).  c->tmp is the merge's buffer.  Return 0,
 * or -1 when it cannot be had (then left as it is: the merge of the CPUs
 * tolerates disorder, the filter may misjudge a task). */
int tb_kpend_sort(struct kcpu *c)
{
	size_t n = c->n, s = 1;
	while (s < n && c->ev[s].ts >= c->ev[s - 1].ts)
		s++;
	if (s >= n)
		return 0; /* one run: the common case, nothing moved */
	if (c->tmp_cap < n) {
		struct kpend *t = realloc(c->tmp, n * sizeof *t);
		if (!t)
			return -1;
		c->tmp = t;
		c->tmp_cap = n;
	}
	for (;;) {
		size_t runs = 0, i = 0, o = 0;
		while (i < n) {
			/* run a = [i, m), run b = [m, e) */
			size_t m = i + 1;
			while (m < n && c->ev[m].ts >= c->ev[m - 1].ts)
				m++;
			size_t e = m;
			if (m < n) {
				e = m + 1;
				while (e < n && c->ev[e].ts >= c->ev[e - 1].ts)
					e++;
			}
			size_t a = i, b = m;
			while (a < m && b < e)
				c->tmp[o++] = c->ev[b].ts < c->ev[a].ts ? c->ev[b++] : c->ev[a++]; /* ties: a first (stable) */
			while (a < m)
				c->tmp[o++] = c->ev[a++];
			while (b < e)
				c->tmp[o++] = c->ev[b++];
			runs++;
			i = e;
		}
		struct kpend *t = c->ev;
		size_t cap = c->cap;
		c->ev = c->tmp;
		c->cap = c->tmp_cap;
		c->tmp = t;
		c->tmp_cap = cap;
		if (runs == 1)
			return 0;
	}
}
