/* SPDX-License-Identifier: MIT */
/*
 * Each mode does what it says when the ring is full, and counts it:
 * discard drops the newest and returns -ENOSPC (lost_full); overwrite keeps
 * the newest packets (lost_overwritten = everything before them); block
 * waits for the consumer up to the timeout, then drops (lost_timeout), and
 * with a consumer loses nothing.  A record larger than a sub-buffer is
 * dropped and counted (lost_toobig).  tb_reserve/tb_commit nest and cancel.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <time.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "platform/clock.h"
#include "tbdecode.h"
#include "tbtest.h"

static uint64_t seen, last_seq, first_seq = UINT64_MAX;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	if (strcmp(e->name, "m:ev"))
		return;
	uint64_t q;
	memcpy(&q, e->payload, 8);
	if (q < first_seq)
		first_seq = q;
	if (q > last_seq)
		last_seq = q;
	seen++;
}

TB_EVENT(m, ev, (u64, seq), (u64, pad))

static struct tb_session *mk(uint32_t mode, uint64_t timeout_ns)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "m", .sb_size = 4096, .sb_count = 4, .mode = mode,
				      .block_timeout_ns = timeout_ns };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .ncpus = 0, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	seen = last_seq = 0;
	first_seq = UINT64_MAX;
	return s;
}

int main(void)
{
	int id;
	/* discard: 4 x 4 KiB hold ~700 records of 20 bytes; write 5000 */
	struct tb_session *s = mk(TB_DISCARD, 0);
	id = tb_event_id("m:ev");
	CHECK(id > 0);
	int enospc = 0;
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t p[2] = { i, 0 };
		int rc = tb_write(0, (uint32_t)id, p, 16);
		CHECK(rc == 0 || rc == -ENOSPC, "rc %d", rc);
		enospc += rc == -ENOSPC;
	}
	struct tb_counters c;
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK(enospc > 4000 && c.lost_full == (uint64_t)enospc, "discard: %d -ENOSPC, lost_full %llu", enospc,
	      (unsigned long long)c.lost_full);
	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	tbd_finish(&d);
	CHECK(d.first_error[0] == 0, "%s", d.first_error);
	CHECK_EQ_U64(seen + tbd_discarded(&d), 5000);
	CHECK_EQ_U64(first_seq, 0); /* discard keeps the oldest */
	tbd_fini(&d);

	/* too big: a payload larger than a sub-buffer */
	static uint8_t big[8192];
	CHECK_RC(tb_write(0, (uint32_t)id, big, sizeof big), -ENOSPC);
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK_EQ_U64(c.lost_toobig, 1);

	/* overwrite: keeps the newest */
	s = mk(TB_OVERWRITE, 0);
	id = tb_event_id("m:ev");
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t p[2] = { i, 0 };
		CHECK_RC(tb_write(0, (uint32_t)id, p, 16), 0);
	}
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	tbd_finish(&d);
	CHECK(d.first_error[0] == 0, "%s", d.first_error);
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK_EQ_U64(last_seq, 4999);
	CHECK_EQ_U64(seen + c.lost_overwritten, 5000);
	CHECK_EQ_U64(seen + tbd_discarded(&d), 5000);
	CHECK_EQ_U64(last_seq - first_seq + 1, seen); /* a contiguous newest range */
	tbd_fini(&d);

	/* block without a consumer: each event past a full ring waits ~timeout.
	 * Pinned to one CPU: 1000 records fill one CPU's ring (~700), but not
	 * two if the thread migrates half-way (it did once, on a loaded machine). */
	cpu_set_t pin, saved;
	CHECK(sched_getaffinity(0, sizeof saved, &saved) == 0, "sched_getaffinity");
	CPU_ZERO(&pin);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &pin);
	CHECK(sched_setaffinity(0, sizeof pin, &pin) == 0, "sched_setaffinity");
	s = mk(TB_BLOCK, 2000000); /* 2 ms */
	id = tb_event_id("m:ev");
	int timeouts = 0;
	uint64_t t0 = tb_mono_ns();
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t p[2] = { i, 0 };
		int rc = tb_write(0, (uint32_t)id, p, 16);
		timeouts += rc == -ETIMEDOUT;
	}
	uint64_t took = tb_mono_ns() - t0;
	CHECK(sched_setaffinity(0, sizeof saved, &saved) == 0, "sched_setaffinity");
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK(timeouts > 0 && c.lost_timeout == (uint64_t)timeouts, "timeouts %d lost_timeout %llu", timeouts,
	      (unsigned long long)c.lost_timeout);
	CHECK(took >= (uint64_t)timeouts * 1500000ull, "block mode waited %llu ns for %d timeouts",
	      (unsigned long long)took, timeouts);
	/* block with a consumer: nothing lost */
	s = mk(TB_BLOCK, 1000000000ull);
	id = tb_event_id("m:ev");
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	tbd_start(&d);
	for (uint64_t i = 0; i < 50000; i++) {
		uint64_t p[2] = { i, 0 };
		CHECK_RC(tb_write(0, (uint32_t)id, p, 16), 0);
	}
	tbd_finish(&d);
	CHECK(d.first_error[0] == 0, "%s", d.first_error);
	CHECK_EQ_U64(seen, 50000);
	CHECK_EQ_U64(tbd_discarded(&d), 0);
	tbd_fini(&d);

	/* reserve / commit: nested reservations, cancel, depth bound */
	s = mk(TB_DISCARD, 0);
	id = tb_event_id("m:ev");
	struct tb_reservation r[TB_RESERVE_DEPTH + 1];
	for (int i = 0; i < TB_RESERVE_DEPTH; i++)
		CHECK_RC(tb_reserve(0, (uint32_t)id, 16, &r[i]), 0);
	CHECK_RC(tb_reserve(0, (uint32_t)id, 16, &r[TB_RESERVE_DEPTH]), -EBUSY);
	for (int i = TB_RESERVE_DEPTH - 1; i >= 0; i--) {
		uint64_t p[2] = { (uint64_t)i, 0 };
		memcpy(r[i].data, p, 16);
		if (i == 1)
			tb_cancel(&r[i]);
		else
			CHECK_RC(tb_commit(&r[i]), 0);
	}
	CHECK_RC(tb_reserve(0, (uint32_t)id, TB_PAYLOAD_MAX + 1, &r[0]), -EMSGSIZE);
	CHECK_RC(tb_reserve(7, (uint32_t)id, 16, &r[0]), -EINVAL);
	CHECK_RC(tb_write(0, 9999, NULL, 0), -EINVAL);
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	tbd_finish(&d);
	CHECK_EQ_U64(seen, TB_RESERVE_DEPTH - 1);
	tbd_fini(&d);
	return 0;
}
