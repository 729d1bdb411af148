/* SPDX-License-Identifier: MIT */
/*
 * live_writer.c - tb-live-writer: writes `live:ev { u64 seq }` events at a
 * steady rate or in bursts, and at exit writes the CLOCK_MONOTONIC time at
 * which each was written (u64 ns, indexed by seq) to --log, for
 * tb-live-latency (t_live_period_bounds_visibility.sh).
 *
 *   tb-live-writer --rate R --seconds D --log FILE [--pin CPU]
 *       steady: event k is written at start + k / R
 *   tb-live-writer --burst N --gap MS --bursts B --log FILE [--pin CPU]
 *       B bursts of N events back to back, MS ms of idleness between them
 *   --wait-file PATH: first waits (polling every 10 ms) until PATH exists
 *       (a viewer attached before the first event)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(live, ev, (u64, seq))

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	double rate = 0, seconds = 0;
	long burst = 0, gap_ms = 0, bursts = 0;
	int pin = -1;
	const char *log = NULL, *wait_file = NULL;
	static const struct option lo[] = { { "rate", 1, 0, 'r' },  { "seconds", 1, 0, 's' }, { "burst", 1, 0, 'b' },
					    { "gap", 1, 0, 'g' },   { "bursts", 1, 0, 'n' },  { "pin", 1, 0, 'p' },
					    { "log", 1, 0, 'l' },   { "wait-file", 1, 0, 'w' }, { 0, 0, 0, 0 } };
	int o;
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'r': rate = atof(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'b': burst = atol(optarg); break;
		case 'g': gap_ms = atol(optarg); break;
		case 'n': bursts = atol(optarg); break;
		case 'p': pin = atoi(optarg); break;
		case 'l': log = optarg; break;
		case 'w': wait_file = optarg; break;
		default: return 2;
		}
	}
	uint64_t n = burst > 0 ? (uint64_t)(burst * bursts) : (uint64_t)(rate * seconds);
	if (!log || n == 0 || n > 100000000 || (burst <= 0 && rate <= 0)) {
		fprintf(stderr, "usage: tb-live-writer (--rate R --seconds D | --burst N --gap MS --bursts B) --log FILE "
				"[--pin CPU] [--wait-file PATH]\n");
		return 2;
	}
	if (pin >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(pin, &set);
		if (sched_setaffinity(0, sizeof set, &set) != 0) {
			fprintf(stderr, "tb-live-writer: cannot run on CPU %d: %s\n", pin, strerror(errno));
			return 77;
		}
	}
	uint64_t *at = calloc(n, sizeof *at);
	if (!at)
		return 1;
	while (wait_file && access(wait_file, F_OK) != 0)
		sleep_until(mono_ns() + 10000000ull);
	uint64_t t0 = mono_ns() + 20000000ull;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t due = burst > 0 ? t0 + (k / (uint64_t)burst) * (uint64_t)gap_ms * 1000000ull
					 : t0 + (uint64_t)((double)k * 1e9 / rate);
		uint64_t now = mono_ns();
		if (due > now + 100000) /* more than 0.1 ms ahead: sleep (faster rates write in batches) */
			sleep_until(due);
		at[k] = mono_ns();
		tb_live_ev(k);
	}
	FILE *f = fopen(log, "w");
	int bad = !f || fwrite(at, sizeof *at, n, f) != n;
	if (f && fclose(f) != 0)
		bad = 1;
	free(at);
	if (bad) {
		fprintf(stderr, "tb-live-writer: cannot write %s\n", log);
		return 1;
	}
	printf("written: %" PRIu64 "\n", n);
	return 0;
}
