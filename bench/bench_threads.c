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
 * pinned to CPU i mod (online CPUs), so that 2 threads do run on 2 CPUs.  Configurations
 * are interleaved round by round; the best round of each is kept.  Sessions:
 * one channel, 4 x 256 KiB sub-buffers per ring, overwrite mode (no consumer).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "bench.h"
#include "platform/clock.h"

enum kind { K_FLOOR, K_RSEQ, K_FALLBACK, K_MUTEX, K_N };
static const char *const kind_name[K_N] = { "floor", "tracebuf rseq", "tracebuf fallback", "mutex global buffer" };


struct targ {
	pthread_t th;
	enum kind k;
	uint64_t n;
	pthread_barrier_t *bar;
	uint64_t cpu_ns;
	int cpu;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *worker(void *arg)
{
	struct targ *a = arg;
	cpu_set_t set; /* thread i on CPU i mod ncpus: the threads really contend */
	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
	pthread_barrier_wait(a->bar);
	uint64_t c0 = thread_cpu_ns(), n = a->n;
	switch (a->k) {
	case K_FLOOR:
		bench_loop_floor(n);
		break;
	case K_RSEQ:
	case K_FALLBACK:
		bench_loop_tracebuf(n);
		break;
	case K_MUTEX:
		bench_loop_mutex(n);
		break;
	default:
		break;
	}
	a->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

/* One run: nthr threads, `total` events in all.  Out: CPU ns per event, wall ns per event. */
static int run(enum kind k, unsigned nthr, uint64_t total, double *cpu, double *wall)
{
	struct targ *a = calloc(nthr, sizeof *a);
	pthread_barrier_t bar;
	if (!a)
		return -1;
	pthread_barrier_init(&bar, NULL, nthr + 1);
	unsigned made = 0, ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	for (; made < nthr; made++) {
		a[made] = (struct targ){ .k = k, .n = total / nthr, .bar = &bar, .cpu = (int)(made % ncpu) };
		if (pthread_create(&a[made].th, NULL, worker, &a[made]))
			break;
	}
	if (made < nthr) { /* cannot happen short of a resource limit: release those started */
		fprintf(stderr, "bench threads: pthread_create failed at %u\n", made);
		abort();
	}
	uint64_t w0 = tb_mono_ns();
	pthread_barrier_wait(&bar);
	uint64_t sum = 0;
	for (unsigned i = 0; i < nthr; i++) {
		pthread_join(a[i].th, NULL);
		sum += a[i].cpu_ns;
	}
	uint64_t w1 = tb_mono_ns();
	uint64_t ev = (total / nthr) * nthr;
	*cpu = (double)sum / (double)ev;
	*wall = (double)(w1 - w0) / (double)ev;
	pthread_barrier_destroy(&bar);
	free(a);
	return 0;
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
		if (run((enum kind)k, 64, 2097152, &c, &w))
			return;
	}
	for (unsigned ti = 0; ti < sizeof nthreads / sizeof nthreads[0]; ti++) {
		unsigned nt = nthreads[ti];
		double cpu[K_N], wall[K_N];
		uint64_t fb_w0, fb_b0 = lost_busy(sfb, &fb_w0);
		for (int k = 0; k < K_N; k++)
			cpu[k] = wall[k] = 1e30;
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < K_N; k++) {
				tb_producer_use(k == K_RSEQ ? srseq : k == K_FALLBACK ? sfb : NULL);
				double c, w;
				if (run((enum kind)k, nt, total, &c, &w))
					return;
				if (c < cpu[k])
					cpu[k] = c;
				if (w < wall[k])
					wall[k] = w;
			}
		tb_producer_use(NULL);
		uint64_t fb_w1, fb_b1 = lost_busy(sfb, &fb_w1);
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
	}
	tb_session_close(srseq);
	tb_session_close(sfb);
}
