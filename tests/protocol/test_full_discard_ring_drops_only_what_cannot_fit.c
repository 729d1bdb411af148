/* SPDX-License-Identifier: MIT */
/*
 * test_full_discard_ring_drops_only_what_cannot_fit - a discard ring that
 * nothing drains fills up; from then on a record is dropped (and counted
 * lost_full) only when it cannot fit in the room left in the current packet,
 * and a smaller one that fits is still written.  The rseq protocol counts
 * such drops without its slow path (drop_if_full, src/ring/append.c); the
 * fallback protocol runs the same checks through its own path.
 *   - 100-byte records until the first drop: the ring is full;
 *   - 1-byte records then: every one written while the packet has room for
 *     it, and the first one dropped finds at most the room an extended
 *     header would have needed (a compact header needs the previous record
 *     within 2^27 ticks: a thread descheduled that long takes the larger
 *     one, which the slow path decides, never the drop shortcut);
 *   - every attempt is in the counters: written + lost_full = attempts.
 * One thread pinned to one CPU, so that one ring is written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/format.h"
#include "core/view.h"
#include "session/registry.h"
#include "tbtest.h"

int main(void)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CHECK(sched_setaffinity(0, sizeof set, &set) == 0, "pin to CPU 0");
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 4096, .sb_count = 4, .mode = TB_DISCARD };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	struct tb_field_desc f = { .type = TB_FT_BYTES, .max_len = 4096 };
	strcpy(f.name, "b");
	int id = tb_registry_register(s, "fill:bytes", 1, &f, NULL);
	CHECK(id >= 0, "register: %s", tb_errmsg());

	uint8_t buf[100] = { 0 };
	uint64_t attempts = 0, ok = 0;
	int rc;
	/* 1. fill: 100-byte records until one is dropped */
	do {
		rc = tb_write(0, (uint32_t)id, buf, sizeof buf);
		attempts++;
		ok += rc == 0;
		CHECK(rc == 0 || rc == -ENOSPC, "tb_write: %d", rc);
		CHECK(attempts < 1000, "4 x 4 KiB never filled with 100-byte records");
	} while (rc == 0);
	/* the one ring written (CPU 0's; with the fallback protocol the slot
	 * of CPU 0 its thread id picked): where head is now */
	struct tb_ctl *c = NULL;
	for (unsigned i = 0; i < s->ncpus; i++)
		if (__atomic_load_n(&tb_ctl_of(s, 0, i)->head, __ATOMIC_RELAXED) != 0) {
			CHECK(c == NULL, "more than one ring written by one pinned thread");
			c = tb_ctl_of(s, 0, i);
		}
	CHECK(c != NULL, "no ring written");
	uint64_t S = 4096, room = S - (__atomic_load_n(&c->head, __ATOMIC_RELAXED) & (S - 1));
	printf("full after %llu records of 100 bytes; %llu bytes left in the last packet\n",
	       (unsigned long long)ok, (unsigned long long)room);
	CHECK(room < TB_EXTENDED_HDR_SIZE + 8 + 100, "dropped with %llu bytes of room", (unsigned long long)room);

	/* 2. 1-byte records (4 bytes of length + 1): written while they fit */
	uint64_t small_ok = 0;
	for (int i = 0; i < 200; i++) {
		rc = tb_write(0, (uint32_t)id, buf, 5);
		attempts++;
		CHECK(rc == 0 || rc == -ENOSPC, "tb_write: %d", rc);
		if (rc != 0)
			break;
		ok++;
		small_ok++;
	}
	room = S - (__atomic_load_n(&c->head, __ATOMIC_RELAXED) & (S - 1));
	printf("then %llu records of 5 bytes; %llu bytes left when one was dropped\n", (unsigned long long)small_ok,
	       (unsigned long long)room);
	CHECK(rc == -ENOSPC, "200 small records all written in a full ring");
	CHECK(room <= TB_EXTENDED_HDR_SIZE + 8 + 5, "a 5-byte record dropped with %llu bytes of room",
	      (unsigned long long)room);
	/* and more drops: each one counted */
	for (int i = 0; i < 1000; i++) {
		rc = tb_write(0, (uint32_t)id, buf, sizeof buf);
		attempts++;
		CHECK(rc == -ENOSPC, "a record written into a full ring: %d", rc);
	}

	/* 3. every attempt is accounted for */
	struct tb_counters k;
	CHECK_RC(tb_session_counters(s, 0, -1, &k), 0);
	printf("attempts %llu written %llu lost_full %llu\n", (unsigned long long)attempts, (unsigned long long)k.written,
	       (unsigned long long)k.lost_full);
	CHECK_EQ_U64(k.written, ok);
	CHECK_EQ_U64(k.written + k.lost_full, attempts);
	tb_producer_use(NULL);
	tb_session_close(s);
	printf("ok\n");
	return 0;
}
