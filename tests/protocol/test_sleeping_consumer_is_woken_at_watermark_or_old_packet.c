/* SPDX-License-Identifier: MIT */
/*
 * test_sleeping_consumer_is_woken_at_watermark_or_old_packet - when a
 * producer's switch wakes a consumer that said it sleeps (issue 30):
 *   - a channel's default watermark is an eighth of its ring (64
 *     sub-buffers: 8), and closing the 1st to 7th full sub-buffer wakes
 *     nobody, the 8th does (consumer_futex bumped once);
 *   - below the watermark, a closed packet that was open at least the
 *     consumer's live_wake_ms (half its live period) wakes it: its records
 *     may have waited that long, and the recorder promises them on disk
 *     within the period; a packet that filled faster does not.
 * Counted on the map's futex word, no timing verdict: the "old" packet is
 * made old by sleeping 20 ms against a threshold of 1 ms (any longer
 * sleep passes too), the young ones against an hour.
 * One thread pinned to CPU 0, so that one ring is written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/format.h"
#include "core/view.h"
#include "ring/ring.h"
#include "session/registry.h"
#include "tbtest.h"

#define SB 4096u

static struct tb_session *s;
static int id;
static unsigned ring;

static uint32_t futex_word(void)
{
	return __atomic_load_n(&s->map->consumer_futex, __ATOMIC_RELAXED);
}

static uint64_t head_of(unsigned r)
{
	return __atomic_load_n(&tb_ctl_of(s, 0, r)->head, __ATOMIC_RELAXED);
}

/* Writes 100-byte records until the ring's head moves to the next sub-buffer (one switch). */
static void close_packet(void)
{
	uint8_t buf[100] = { 0 };
	uint64_t h0 = head_of(ring) / SB;
	for (int i = 0; i < 100 && head_of(ring) / SB == h0; i++)
		CHECK_RC(tb_write(0, (uint32_t)id, buf, sizeof buf), 0);
	CHECK(head_of(ring) / SB == h0 + 1, "no switch after 100 records of 100 bytes into %u-byte sub-buffers", SB);
}

/* The consumer takes every full sub-buffer (as a recorder would after its copy). */
static void release_all(void)
{
	struct tb_ctl *c = tb_ctl_of(s, 0, ring);
	uint64_t open = head_of(ring) & ~(uint64_t)(SB - 1);
	for (uint64_t p = __atomic_load_n(&c->tail, __ATOMIC_RELAXED); p < open; p += SB)
		tb_ring_release(s, 0, ring, p);
}

int main(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CHECK(sched_setaffinity(0, sizeof set, &set) == 0, "pin to CPU 0");
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = SB, .sb_count = 64, .mode = TB_DISCARD };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	struct tb_field_desc f = { .type = TB_FT_BYTES, .max_len = 4096 };
	strcpy(f.name, "b");
	id = tb_registry_register(s, "fill:bytes", 1, &f, NULL);
	CHECK(id >= 0, "register: %s", tb_errmsg());
	CHECK(s->chan[0].watermark == 8, "default watermark of a 64-sub-buffer ring: %u, want 8 (an eighth)",
	      s->chan[0].watermark);

	/* a first record opens packet 0; find the ring it went to */
	uint8_t b = 0;
	CHECK_RC(tb_write(0, (uint32_t)id, &b, 1), 0);
	ring = s->ncpus;
	for (unsigned i = 0; i < s->ncpus; i++)
		if (head_of(i) != 0) {
			CHECK(ring == s->ncpus, "more than one ring written by one pinned thread");
			ring = i;
		}
	CHECK(ring < s->ncpus, "no ring written");

	/* a consumer asleep, with a live period of two hours: no packet here is that old */
	__atomic_store_n(&s->map->live_wake_ms, 3600000u, __ATOMIC_RELAXED);
	__atomic_store_n(&s->map->consumer_sleeping, 1, __ATOMIC_RELAXED);
	uint32_t f0 = futex_word();
	for (int k = 1; k <= 7; k++) {
		close_packet();
		CHECK(futex_word() == f0, "woken with %d full sub-buffers, below the watermark (8)", k);
	}
	close_packet();
	CHECK(futex_word() == f0 + 1, "not woken once with 8 full sub-buffers (futex %u -> %u)", f0, futex_word());
	printf("default watermark 8: woken at the 8th full sub-buffer, not before\n");

	/* the consumer took them all; a young packet below the watermark wakes nobody */
	release_all();
	uint32_t f1 = futex_word();
	close_packet();
	CHECK(futex_word() == f1, "a young packet woke the consumer below the watermark");

	/* a packet open longer than live_wake_ms (1 ms) wakes it at its close: a record, 20 ms, the rest */
	__atomic_store_n(&s->map->live_wake_ms, 1u, __ATOMIC_RELAXED);
	release_all();
	CHECK_RC(tb_write(0, (uint32_t)id, &b, 1), 0);
	struct timespec ts = { 0, 20000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	uint32_t f2 = futex_word();
	close_packet();
	CHECK(futex_word() == f2 + 1, "a packet open 20 ms did not wake the consumer (live_wake_ms 1)");
	printf("below the watermark: a packet open 20 ms woke it (live_wake_ms 1), a young one did not\n");

	/* 0: no live period, nothing but the watermark wakes it */
	__atomic_store_n(&s->map->live_wake_ms, 0u, __ATOMIC_RELAXED);
	release_all();
	CHECK_RC(tb_write(0, (uint32_t)id, &b, 1), 0);
	ts = (struct timespec){ 0, 20000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	uint32_t f3 = futex_word();
	close_packet();
	CHECK(futex_word() == f3, "woken by an old packet with live_wake_ms 0");
	tb_session_close(s);
	return 0;
}
