/* SPDX-License-Identifier: MIT */
/*
 * tracebuf-bench-lttng - the LTTng-UST side of `tracebuf-bench lttng`.
 * Run by bench/lttng/run.sh inside a session (see there), never alone.
 *
 *   tracebuf-bench-lttng cost N ROUNDS LAT_N   producer cost + latency
 *   tracebuf-bench-lttng write N                 N events, for the trace size
 *   tracebuf-bench-lttng threads NTHR N ROUNDS   N events from NTHR threads
 *                                                at once (bc_run_threads)
 *   tracebuf-bench-lttng workload [--threads N] [--events N] [--rate N]
 *        the event stream of `tracebuf-workload --payload 16` (make bench's
 *        equal-load group): each thread writes N events of 16 bytes (seq,
 *        value: the workload's sequence number and xorshift value, the same
 *        seed), paced at --rate events per second per thread the way the
 *        workload paces (workload_pace below: keep the two equal), not
 *        pinned; prints the workload's own last lines, `workload: wall_ns W
 *        cpu_ns C proc_cpu_ns P` and `written: N`
 *
 *   tracebuf-bench-lttng workload --requests [--error-every N] ...
 *        the requests of `tracebuf-workload --requests --error-every N`
 *        (make bench's flight-lttng group): each event a request,
 *        tbbench:request_begin { seq } then tbbench:request_end { seq,
 *        status 200 + seq % 300, route "/ok" }; thread 0's requests N-1,
 *        2N-1, ... end with 500 and "/fail", and each one's CLOCK_REALTIME
 *        read just before its request_end is printed at the end, `workload:
 *        error_realtime_ns T`, as the workload does
 *
 * Prints `key value` lines that tracebuf-bench parses: enabled, floor_ns,
 * lttng_ns (best round, ns per event), lat_<pct> (ns), written; threads:
 * floor_cpu, lttng_cpu (CPU ns per event), floor_wall, lttng_wall (wall ns
 * per event), best round of each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tp.h"

static void loop_lttng(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		lttng_ust_tracepoint(tbbench, ev16, i, i ^ 0x5555);
}

static double timed(void (*fn)(uint64_t), uint64_t n)
{
	uint64_t t0 = bc_mono_ns();
	fn(n);
	return (double)(bc_mono_ns() - t0) / (double)n;
}

/* Floor and LTTng-UST interleaved round by round, best of each kept, as
 * bench_threads.c does for tracebuf. */
static int threads(unsigned nthr, uint64_t total, int rounds)
{
	double fc = 1e30, fw = 1e30, lc = 1e30, lw = 1e30, c, w;
	uint64_t written = bc_run_threads(loop_lttng, nthr, total / 8, &c, &w); /* warm up */
	for (int r = 0; r < rounds; r++) {
		bc_run_threads(bc_loop_floor, nthr, total, &c, &w);
		if (c < fc)
			fc = c;
		if (w < fw)
			fw = w;
		written += bc_run_threads(loop_lttng, nthr, total, &c, &w);
		if (c < lc)
			lc = c;
		if (w < lw)
			lw = w;
	}
	printf("floor_cpu %.3f\nfloor_wall %.3f\nlttng_cpu %.3f\nlttng_wall %.3f\nwritten %llu\n", fc, fw, lc, lw,
	       (unsigned long long)written);
	return 0;
}

/* ---- workload mode: tools/workload.c's paced loop with LTTng-UST's event ---- */

#define GOLDEN 0x9E3779B97F4A7C15ull

static uint64_t wl_events = 100000, wl_rate; /* per thread; rate 0: full speed */
static int wl_requests;                       /* --requests */
static uint64_t wl_error_every;               /* --error-every */
#define WL_MAX_ERRORS 4096
static uint64_t wl_error_ns[WL_MAX_ERRORS];   /* thread 0's */
static unsigned wl_errors;

/* tools/workload.c's write_request() with --error-every: keep the two equal */
static void wl_request(uint32_t thread, uint64_t seq)
{
	lttng_ust_tracepoint(tbbench, request_begin, seq);
	int err = thread == 0 && wl_error_every && seq % wl_error_every == wl_error_every - 1;
	if (err) {
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		if (wl_errors < WL_MAX_ERRORS)
			wl_error_ns[wl_errors++] = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	}
	lttng_ust_tracepoint(tbbench, request_end, seq, err ? 500u : 200u + (uint32_t)(seq % 300), err ? "/fail" : "/ok");
}

struct wl_worker {
	pthread_t th;
	uint32_t thread;
	uint64_t ticks, cpu_ns, rng;
};

static uint64_t xorshift(uint64_t *s) /* tools/workload.c's */
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* tools/workload.c's pace(), unchanged: event i of a thread is due at
 * start + i / rate seconds; sleeps until then when it is more than a
 * millisecond ahead (batches of events), never spins; asked every
 * pace_stride() events, as there */
static uint64_t pace_stride(uint64_t rate)
{
	uint64_t k = rate / 16000;
	return k < 1 ? 1 : k > 64 ? 64 : k;
}

static void workload_pace(uint64_t start_ns, uint64_t i)
{
	uint64_t due = start_ns + (uint64_t)((double)i * 1e9 / (double)wl_rate);
	uint64_t now = bc_mono_ns();
	if (due <= now + 1000000)
		return;
	struct timespec ts = { (time_t)(due / 1000000000ull), (long)(due % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *wl_run(void *arg)
{
	struct wl_worker *w = arg;
	w->rng = (uint64_t)(w->thread + 1) * GOLDEN | 1;
	uint64_t pace_every = pace_stride(wl_rate);
	uint64_t start_ns = bc_mono_ns();
	for (uint64_t i = 0; i < wl_events; i++) {
		if (wl_rate && i % pace_every == 0)
			workload_pace(start_ns, i);
		if (wl_requests)
			wl_request(w->thread, i);
		else
			lttng_ust_tracepoint(tbbench, ev16, i, xorshift(&w->rng));
		w->ticks = i + 1;
	}
	w->cpu_ns = bc_thread_cpu_ns();
	return NULL;
}

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static int workload(int argc, char **argv)
{
	static const struct option lo[] = { { "threads", 1, 0, 't' }, { "events", 1, 0, 'n' }, { "rate", 1, 0, 'R' },
					    { "requests", 0, 0, 'Q' }, { "error-every", 1, 0, 'e' }, { 0, 0, 0, 0 } };
	unsigned nthr = 1;
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'Q') {
			wl_requests = 1;
			continue;
		}
		if (c == '?')
			return 2;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(optarg, &end, 0);
		if (errno || end == optarg || *end || optarg[0] == '-') {
			fprintf(stderr, "tracebuf-bench-lttng: %s: not a number\n", optarg);
			return 2;
		}
		if (c == 't')
			nthr = (unsigned)v;
		else if (c == 'n')
			wl_events = v;
		else if (c == 'R')
			wl_rate = v;
		else if (c == 'e')
			wl_error_every = v;
		else
			return 2;
	}
	if (nthr < 1 || nthr > 4096) {
		fprintf(stderr, "tracebuf-bench-lttng: --threads 1..4096\n");
		return 2;
	}
	struct wl_worker *w = calloc(nthr, sizeof *w);
	if (!w)
		return 1;
	struct timespec t0, t1, p0, p1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < nthr; i++) {
		w[i].thread = i;
		if (pthread_create(&w[i].th, NULL, wl_run, &w[i])) {
			fprintf(stderr, "tracebuf-bench-lttng: pthread_create failed at thread %u\n", i);
			return 1;
		}
	}
	uint64_t total = 0, cpu_ns = 0;
	for (unsigned i = 0; i < nthr; i++) {
		pthread_join(w[i].th, NULL);
		cpu_ns += w[i].cpu_ns;
		total += w[i].ticks * (wl_requests ? 2u : 1u);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
	for (unsigned i = 0; i < wl_errors; i++) /* thread 0 is joined */
		printf("workload: error_realtime_ns %llu\n", (unsigned long long)wl_error_ns[i]);
	printf("workload: wall_ns %llu cpu_ns %llu proc_cpu_ns %llu\n", (unsigned long long)(ts_ns(&t1) - ts_ns(&t0)),
	       (unsigned long long)cpu_ns, (unsigned long long)(ts_ns(&p1) - ts_ns(&p0)));
	printf("written: %llu\n", (unsigned long long)total);
	free(w);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "workload")) {
		printf("enabled %d\n", lttng_ust_tracepoint_enabled(tbbench, ev16) ? 1 : 0);
		return workload(argc, argv);
	}
	if (argc < 3) {
		fprintf(stderr, "usage: tracebuf-bench-lttng cost N ROUNDS LAT_N | write N | threads NTHR N ROUNDS |\n"
				"       workload [--threads N] [--events N] [--rate N] [--requests [--error-every N]]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[2], NULL, 0);
	printf("enabled %d\n", lttng_ust_tracepoint_enabled(tbbench, ev16) ? 1 : 0);
	if (!strcmp(argv[1], "threads")) {
		if (argc < 5 || !n)
			return 2;
		return threads((unsigned)n, strtoull(argv[3], NULL, 0), atoi(argv[4]));
	}
	if (!strcmp(argv[1], "write")) {
		loop_lttng(n);
		printf("written %llu\n", (unsigned long long)n);
		return 0;
	}
	if (strcmp(argv[1], "cost") || argc < 5)
		return 2;
	int rounds = atoi(argv[3]);
	size_t lat_n = (size_t)strtoull(argv[4], NULL, 0);
	double fl = 1e30, lt = 1e30;
	loop_lttng(n / 10); /* warm up */
	for (int r = 0; r < rounds; r++) {
		double v = timed(bc_loop_floor, n);
		if (v < fl)
			fl = v;
		v = timed(loop_lttng, n);
		if (v < lt)
			lt = v;
	}
	printf("floor_ns %.3f\nlttng_ns %.3f\n", fl, lt);
	uint32_t *v = malloc(lat_n * sizeof *v);
	if (!v)
		return 1;
	double tpn = bc_tsc_per_ns(), pct[BC_NPCT];
	BC_SAMPLE(v, lat_n, lttng_ust_tracepoint(tbbench, ev16, bc__i, bc__i ^ 0x5555));
	bc_percentiles(v, lat_n, tpn, pct);
	for (int i = 0; i < BC_NPCT; i++)
		printf("lat_%s %.1f\n", bc_pct_names[i], pct[i]);
	free(v);
	printf("written %llu\n", (unsigned long long)(n / 10 + (uint64_t)rounds * n + lat_n));
	return 0;
}
