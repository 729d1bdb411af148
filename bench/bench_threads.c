/* SPDX-License-Identifier: MIT */
/*
 * bench_threads.c - producer cost with 1, 2 and 64 threads writing at once
 * (16-byte payload, two u64 fields), for the floor (rdtsc + 16-byte store
 * into a thread-local array), tracebuf rseq, tracebuf fallback and a
 * mutex-protected global buffer.
 *
 * Two figures per configuration: the CPU time per event of a writing thread
 * (sum of the threads' CLOCK_THREAD_CPUTIME_ID / events: what an event costs
 * the thread that writes it, whatever the scheduler does) and the aggregate
 * rate (events / wall time from the start barrier to the last join).  The
 * total number of events is the same for every thread count; thread i is
 * pinned to CPU i mod (online CPUs), so that 2 threads do run on 2 CPUs
 * and 64 threads preempt each other inside their writes (the runner is
 * bc_run_threads of bench/lttng/common.h, shared with the LTTng-UST side).
 * Configurations are interleaved round by round; the best round of each is
 * kept.  Sessions: one channel, 4 x 256 KiB sub-buffers per ring, overwrite
 * mode (no consumer); the events the rseq writers lost (any cause but
 * overwriting) are a row of their own.
 *
 * After tracebuf's rounds of each thread count, the same count with
 * LTTng-UST (bench_lttng_threads, bench_lttng.c): its own process and
 * session, its own floor, rows compared with tracebuf's figures above, and
 * the events LTTng discarded.  Skipped with the reason where LTTng-UST cannot
 * run (bench_lttng_unusable).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "bench.h"
#include "lttng/common.h"

enum kind { K_FLOOR, K_RSEQ, K_FALLBACK, K_MUTEX, K_N };
static const char *const kind_name[K_N] = { "floor", "tracebuf rseq", "tracebuf fallback", "mutex global buffer" };


static void (*const kind_loop[K_N])(uint64_t) = { bench_loop_floor, bench_loop_tracebuf, bench_loop_tracebuf,
						   bench_loop_mutex };

/* One run of kind k (bc_run_threads, bench/lttng/common.h).  Out: CPU ns per event, wall ns per event. */
static void run(enum kind k, unsigned nthr, uint64_t total, double *cpu, double *wall)
{
	bc_run_threads(kind_loop[k], nthr, total, cpu, wall);
}

static struct tb_session *session(int fallback)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "bench", .sb_size = 256 << 10, .sb_count = 4,
				      .mode = TB_OVERWRITE, .events = "bench:ev16" };
	struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co,
				      .force_fallback = (uint32_t)fallback };
	struct tb_session *s;
	if (tb_session_create(&so, &s)) {
		fprintf(stderr, "bench threads: cannot create a session: %s\n", tb_errmsg());
		return NULL;
	}
	tb_session_unlink(s);
	return s;
}

static uint64_t lost_busy(struct tb_session *s, uint64_t *written)
{
	struct tb_counters c;
	memset(&c, 0, sizeof c);
	tb_session_counters(s, 0, -1, &c);
	*written = c.written;
	return c.lost_busy;
}

/* Events the writers lost, every cause but overwriting (the sessions are in
 * overwrite mode without a consumer: old packets are overwritten by design). */
static uint64_t lost_writes(struct tb_session *s, uint64_t *written)
{
	struct tb_counters c;
	memset(&c, 0, sizeof c);
	tb_session_counters(s, 0, -1, &c);
	*written = c.written;
	return c.lost_full + c.lost_toobig + c.lost_timeout + c.lost_busy;
}

void bench_threads(struct bench_table *t)
{
	static const unsigned nthreads[] = { 1, 2, 64 };
	uint64_t total = bench_quick() ? 256000 : 4194304;
	int rounds = bench_quick() ? 1 : 5;
	struct tb_session *srseq = session(0), *sfb = session(1);
	if (!srseq || !sfb) {
		bench_skip(t, "threads", "producer cost, 1/2/64 threads", "no session (see stderr)");
		tb_session_close(srseq);
		tb_session_close(sfb);
		return;
	}
	int have_rseq = tb_session_uses_rseq(srseq);
	/* fault in the rings first (64 threads reach every CPU's ring and most
	 * fallback slots), so that no round pays first-touch page faults */
	for (int k = K_RSEQ; k <= K_FALLBACK; k++) {
		double c, w;
		tb_producer_use(k == K_RSEQ ? srseq : sfb);
		run((enum kind)k, 64, 2097152, &c, &w);
	}
	tb_producer_use(NULL);
	/* LTTng-UST at the same thread counts, in its own process and session
	 * (bench_lttng.c), right after tracebuf's rounds of each count */
	const char *no_lttng = bench_lttng_unusable();
	if (no_lttng)
		bench_skip(t, "threads", "LTTng-UST at 1, 2 and 64 threads", no_lttng);
	for (unsigned ti = 0; ti < sizeof nthreads / sizeof nthreads[0]; ti++) {
		unsigned nt = nthreads[ti];
		double cpu[K_N], wall[K_N];
		uint64_t fb_w0, fb_b0 = lost_busy(sfb, &fb_w0), rs_w0, rs_l0 = lost_writes(srseq, &rs_w0);
		for (int k = 0; k < K_N; k++)
			cpu[k] = wall[k] = 1e30;
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < K_N; k++) {
				tb_producer_use(k == K_RSEQ ? srseq : k == K_FALLBACK ? sfb : NULL);
				double c, w;
				run((enum kind)k, nt, total, &c, &w);
				if (c < cpu[k])
					cpu[k] = c;
				if (w < wall[k])
					wall[k] = w;
			}
		tb_producer_use(NULL);
		uint64_t fb_w1, fb_b1 = lost_busy(sfb, &fb_w1), rs_w1, rs_l1 = lost_writes(srseq, &rs_w1);
		double busy = fb_b1 - fb_b0 ? 100.0 * (double)(fb_b1 - fb_b0) /
						      (double)(fb_b1 - fb_b0 + fb_w1 - fb_w0)
					    : 0;
		char cfg[96];
		for (int k = 0; k < K_N; k++) {
			if (k == K_FALLBACK && busy > 0)
				snprintf(cfg, sizeof cfg, "%u thr: %s (%.2f%% lost busy)", nt, kind_name[k], busy);
			else if (k == K_RSEQ && !have_rseq)
				snprintf(cfg, sizeof cfg, "%u thr: tracebuf (no rseq here!)", nt);
			else
				snprintf(cfg, sizeof cfg, "%u thr: %s, CPU/event", nt, kind_name[k]);
			if (k == K_FLOOR)
				bench_row(t, "threads", cfg, cpu[k], "ns/ev/thr", 0, NULL, NULL);
			else if (k == K_MUTEX)
				bench_row(t, "threads", cfg, cpu[k], "ns/ev/thr", cpu[k] / cpu[K_RSEQ], "mutex / tracebuf", NULL);
			else
				bench_row(t, "threads", cfg, cpu[k], "ns/ev/thr", cpu[k] / cpu[K_FLOOR],
					  k == K_RSEQ ? "tracebuf / floor" : "fallback / floor", NULL);
		}
		for (int k = 0; k < K_N; k++) {
			snprintf(cfg, sizeof cfg, "%u thr: %s, aggregate", nt, kind_name[k]);
			double rate = 1e3 / wall[k]; /* M events/s */
			if (k == K_FLOOR)
				bench_row(t, "threads", cfg, rate, "Mev/s", 0, NULL, NULL);
			else if (k == K_MUTEX)
				bench_row(t, "threads", cfg, rate, "Mev/s", wall[k] / wall[K_RSEQ], "mutex / tracebuf (time)", NULL);
			else
				bench_row(t, "threads", cfg, rate, "Mev/s", wall[k] / wall[K_FLOOR],
					  k == K_RSEQ ? "tracebuf / floor (time)" : "fallback / floor (time)", NULL);
		}
		snprintf(cfg, sizeof cfg, "%u thr: tracebuf rseq, events lost", nt);
		double lost = (double)(rs_l1 - rs_l0), tried = lost + (double)(rs_w1 - rs_w0);
		bench_row(t, "threads", cfg, lost, "events", tried > 0 ? lost / tried : 0, "lost / attempted", NULL);
		if (!no_lttng)
			bench_lttng_threads(t, nt, total, rounds, cpu[K_RSEQ], wall[K_RSEQ], cpu[K_FLOOR]);
	}
	tb_session_close(srseq);
	tb_session_close(sfb);
}
