/* SPDX-License-Identifier: MIT */
/*
 * test_embedded_recorder_traces_are_exact - the embedded recorder
 * (tb_session_start() in this process): two threads write workload:tick
 * events, tb_session_stop(); the trace satisfies written == delivered + lost
 * exactly, with nothing lost.  Then a flight recorder: tb_snapshot() while a
 * thread writes at full speed: every packet valid, none torn, and the final
 * trace's identity exact; the same through the public tb_session_copy().
 * Checked by tests/lib/tbverify.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "tbtest.h"
#include "tbverify.h"

#define K_CHECK 0x9E3779B97F4A7C15ull

/* ---------------------------------------------------------------------- */
/* self-test: the embedded consumer                                         */
/* ---------------------------------------------------------------------- */

TB_EVENT(workload, tick, (u32, thread), (u64, seq), (u64, value), (u64, check))

struct writer {
	uint32_t thread;
	uint64_t n;
	int *stop; /* relaxed atomic flag: only tells the writer to end */
	uint64_t done;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t seq = 0;
	for (; w->stop ? !__atomic_load_n(w->stop, __ATOMIC_RELAXED) : seq < w->n; seq++) {
		uint64_t value = seq * 7 + w->thread;
		tb_workload_tick(w->thread, seq, value, value ^ (seq * K_CHECK) ^ w->thread);
		if (!w->stop && (seq & 1023) == 0)
			usleep(100); /* let the consumer keep up: this part checks "no loss" */
	}
	w->done = seq;
	return NULL;
}

static void self_test(void)
{
	char dir[512];
	/* 1. discard mode, drained by the embedded consumer: exact identity, no
	 * loss.  4 MiB per CPU hold all 100,000 records (32 B each) even if the
	 * consumer gets no CPU until the end (a loaded machine: 16 sub-buffers
	 * once lost 6.5 % here). */
	snprintf(dir, sizeof dir, "%s/embedded", tbt_tmpdir());
	struct tb_channel_opts ch = { .size = sizeof ch, .sb_size = 64 << 10, .sb_count = 64,
				      .flush_period_ns = 100000000 };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &ch };
	struct tb_recorder *rec;
	int rc = tb_session_start(&so, dir, &rec);
	if (rc == -ENOTSUP)
		SKIP("tb_session_start: %s", tb_errmsg());
	CHECK_RC(rc, 0);
	pthread_t th[2];
	struct writer w[2] = { { 0, 50000, NULL, 0 }, { 1, 50000, NULL, 0 } };
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, writer_main, &w[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	struct tb_counters k;
	CHECK_RC(tb_session_counters(tb_recorder_session(rec), 0, -1, &k), 0);
	CHECK_EQ_U64(k.written, 100000);
	CHECK_RC(tb_session_stop(rec), 0);
	CHECK(tbv_verify_dir(dir, 100000, 0, 0) == 0, "embedded discard trace");

	/* 2. flight recorder: snapshots while a thread writes at full speed */
	ch.mode = TB_OVERWRITE;
	ch.sb_size = 16 << 10;
	ch.sb_count = 4;
	snprintf(dir, sizeof dir, "%s/fr", tbt_tmpdir());
	CHECK_RC(tb_session_start(&so, dir, &rec), 0);
	int stop = 0;
	struct writer fw = { 2, 0, &stop, 0 };
	pthread_t ft;
	CHECK(pthread_create(&ft, NULL, writer_main, &fw) == 0, "pthread_create");
	usleep(50000);
	for (int i = 0; i < 5; i++) {
		char sd[600];
		snprintf(sd, sizeof sd, "%s/snap%d", tbt_tmpdir(), i);
		rc = tb_snapshot(tb_recorder_session(rec), sd);
		CHECK(rc >= 0, "tb_snapshot: %d %s", rc, tb_errmsg());
		CHECK(tbv_verify_dir(sd, -1, 0, 1) == 0, "snapshot %d", i);
		usleep(20000);
	}
	/* the same through the public one-shot copy: what it wrote is what tb-verify finds */
	/* (the writer laps these 4 x 16 KiB every ~50 us: a copy preempted
	 * mid-packet drops it as torn, so copies are taken until one holds a
	 * packet; each is checked) */
	char cd[600];
	struct tb_copy_result res = { .size = sizeof res };
	for (int attempt = 0; attempt < 200 && !res.packets; attempt++) {
		snprintf(cd, sizeof cd, "%s/snapcopy%d", tbt_tmpdir(), attempt);
		CHECK_RC(tb_session_copy(tb_recorder_session(rec), cd, TB_COPY_SNAPSHOT, NULL, NULL, &res), 0);
		CHECK(res.invalid == 0 && !res.quiescent, "copy %d: %llu invalid", attempt, (unsigned long long)res.invalid);
		CHECK(tbv_verify_dir(cd, -1, 0, 1) == 0, "tb_session_copy's snapshot %d", attempt);
	}
	CHECK(res.packets > 0 && res.events > 0, "200 copies: none held a packet (%llu events)",
	      (unsigned long long)res.events);
	struct tb_copy_result bad = { .size = sizeof bad - 1 };
	snprintf(cd, sizeof cd, "%s/copy2", tbt_tmpdir());
	CHECK_RC(tb_session_copy(tb_recorder_session(rec), cd, TB_COPY_SNAPSHOT, NULL, NULL, &bad), -EINVAL);
	CHECK_RC(tb_session_copy(tb_recorder_session(rec), cd, 7, NULL, NULL, NULL), -EINVAL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(ft, NULL);
	CHECK_RC(tb_session_stop(rec), 0);
	CHECK(tbv_verify_dir(dir, (int64_t)fw.done, 0, 0) == 0, "flight recorder final trace");
	printf("ok\n");
}

int main(void)
{
	self_test();
	return 0;
}
