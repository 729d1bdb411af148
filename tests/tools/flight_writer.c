/* SPDX-License-Identifier: MIT */
/*
 * flight_writer.c - tb-flight-writer: a program under `tracebuf record
 * --mode overwrite --snapshot-dir DIR` that calls tb_trigger() (the flight
 * recorder's tests, tests/cli/t_flight_*.sh).
 *
 *   tb-flight-writer --dir DIR --triggers N [--events K] [--after-event]
 *                    [--no-wait | --wait-from I] [--gate PREFIX] [--name NAME] [--crash]
 *                    [--start FILE] [--kill-self] [--exit-status N]
 *                    [--measures M [--slow-at S] [--error-at E]]
 *
 * For trigger i = 1..N: writes K events `flight:before { u32 trigger; u64
 * seq }` (seq 0..K-1), calls tb_trigger("t<i>"), then, with --after-event,
 * writes `flight:after { u32 trigger }` at once; then (unless --no-wait)
 * waits until a snapshot of DIR holds trigger.json naming "t<i>" (a
 * condition, polled; 150 s guard); without --after-event, the after event
 * is written once the snapshot is there (not at all when it did not wait).  It prints "trigger i written W"
 * with W the events written before the snapshot of trigger i could have
 * been copied (exact when it waited; --wait-from I: waits from trigger I on).  --gate PREFIX: before trigger i > 1,
 * waits until the file PREFIX.i exists.  --crash: then writes K events
 * `flight:last { u64 seq }` and dies of SIGSEGV (--kill-self: of SIGKILL).
 * --start FILE: before its first event, waits until FILE exists (record
 * --pid's tests: the recorder's request is in place, so the first event
 * attaches; that event is dropped, written before the attach).  --exit-status
 * N: exits with N (not 0) at the end.  --name NAME: every
 * trigger is called NAME (the rate limit's tests).  --measures M: after the
 * triggers, M events `flight:measure { u64 seq; f64 latency; f32 ratio; u32
 * status }` (float conditions, t_flight_event_condition_*.sh): latency
 * (seq % 1001) / 4000 (0.25 at most, reached), NaN when seq % 4999 == 7, -0
 * when seq % 3001 == 5; status 200 + seq % 300, but 500 with ratio -1 when
 * seq % 997 == 3; ratio (seq % 7) / 2 - 1 (-1 at least), NaN when seq % 5003
 * == 11; --slow-at S: latency 0.2500001 at seq S; --error-at E: status 503
 * and ratio -1.25 at seq E.  First line "pid: P", last line "written: N".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/trigger.h>

TB_EVENT(flight, before, (u32, trigger), (u64, seq))
TB_EVENT(flight, after, (u32, trigger))
TB_EVENT(flight, last, (u64, seq))
TB_EVENT(flight, measure, (u64, seq), (f64, latency), (f32, ratio), (u32, status))

static void nap(void)
{
	struct timespec t = { 0, 10000000 };
	nanosleep(&t, NULL);
}

/* 1 when a snapshot directory of `dir` has a trigger.json naming `name` */
static int snapshot_of(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char want[96], path[4096], buf[4096];
	snprintf(want, sizeof want, "\"name\": \"%s\"", name);
	struct dirent *de;
	int found = 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s/trigger.json", dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = 0;
		found = strstr(buf, want) != NULL;
	}
	closedir(d);
	return found;
}

static int wait_until(int (*cond)(const char *, const char *), const char *a, const char *b)
{
	for (int i = 0; i < 15000; i++) {
		if (cond(a, b))
			return 0;
		nap();
	}
	return -1;
}

static int exists(const char *path, const char *unused)
{
	(void)unused;
	return access(path, F_OK) == 0;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *gate = NULL, *same = NULL, *start = NULL;
	unsigned triggers = 1, after_event = 0, no_wait = 0, crash = 0, wait_from = 1, kill_self = 0;
	int exit_status = 0;
	uint64_t events = 1000, measures = 0, slow_at = UINT64_MAX, error_at = UINT64_MAX;
	static const struct option lo[] = { { "dir", 1, 0, 'd' },	   { "triggers", 1, 0, 'n' },
					    { "events", 1, 0, 'k' },	   { "after-event", 0, 0, 'a' },
					    { "no-wait", 0, 0, 'w' },	   { "gate", 1, 0, 'g' },
					    { "crash", 0, 0, 'c' },	   { "name", 1, 0, 'm' },
					    { "wait-from", 1, 0, 'f' },	   { "measures", 1, 0, 'M' },
					    { "slow-at", 1, 0, 'S' },	   { "error-at", 1, 0, 'E' },
					    { "start", 1, 0, 's' },	   { "kill-self", 0, 0, 'K' },
					    { "exit-status", 1, 0, 'x' },
					    { 0, 0, 0, 0 } };
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'n': triggers = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': events = strtoull(optarg, NULL, 10); break;
		case 'a': after_event = 1; break;
		case 'w': no_wait = 1; break;
		case 'g': gate = optarg; break;
		case 'c': crash = 1; break;
		case 'm': same = optarg; break;
		case 'f': wait_from = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'M': measures = strtoull(optarg, NULL, 10); break;
		case 'S': slow_at = strtoull(optarg, NULL, 10); break;
		case 'E': error_at = strtoull(optarg, NULL, 10); break;
		case 's': start = optarg; break;
		case 'K': kill_self = 1; break;
		case 'x': exit_status = atoi(optarg); break;
		default: fprintf(stderr, "usage: see tests/tools/flight_writer.c\n"); return 2;
		}
	}
	if (!dir && !no_wait) {
		fprintf(stderr, "tb-flight-writer: --dir DIR (or --no-wait)\n");
		return 2;
	}
	printf("pid: %d\n", (int)getpid());
	fflush(stdout);
	if (start && wait_until(exists, start, NULL) < 0) {
		fprintf(stderr, "tb-flight-writer: %s never appeared\n", start);
		return 1;
	}
	uint64_t written = 0;
	for (unsigned i = 1; i <= triggers; i++) {
		char name[32], gpath[4096];
		if (gate && i > 1) {
			snprintf(gpath, sizeof gpath, "%s.%u", gate, i);
			if (wait_until(exists, gpath, NULL) < 0) {
				fprintf(stderr, "tb-flight-writer: %s never appeared\n", gpath);
				return 1;
			}
		}
		for (uint64_t k = 0; k < events; k++, written++)
			tb_flight_before(i, k);
		snprintf(name, sizeof name, "%s", same ? same : "");
		if (!same)
			snprintf(name, sizeof name, "t%u", i);
		int rc = tb_trigger(name);
		if (rc < 0) {
			fprintf(stderr, "tb-flight-writer: tb_trigger: %d\n", rc);
			return 1;
		}
		if (after_event) {
			tb_flight_after(i);
			written++;
		}
		printf("trigger %u written %" PRIu64 "\n", i, written);
		fflush(stdout);
		int wait = !no_wait && i >= wait_from;
		if (wait && wait_until(snapshot_of, dir, name) < 0) {
			fprintf(stderr, "tb-flight-writer: no snapshot of %s appeared in %s\n", name, dir);
			return 1;
		}
		if (!after_event && wait) {
			tb_flight_after(i);
			written++;
		}
	}
	for (uint64_t k = 0; k < measures; k++, written++) {
		double latency = (double)(k % 1001) / 4000.0;
		float ratio = (float)(k % 7) / 2.0f - 1.0f;
		uint32_t status = 200 + (uint32_t)(k % 300);
		if (k % 4999 == 7)
			latency = NAN;
		if (k % 3001 == 5)
			latency = -0.0;
		if (k % 997 == 3) {
			status = 500;
			ratio = -1.0f;
		}
		if (k % 5003 == 11)
			ratio = NAN;
		if (k == slow_at)
			latency = 0.2500001;
		if (k == error_at) {
			status = 503;
			ratio = -1.25f;
		}
		tb_flight_measure(k, latency, ratio, status);
	}
	if (crash) {
		for (uint64_t k = 0; k < events; k++, written++)
			tb_flight_last(k);
		printf("written: %" PRIu64 "\n", written);
		fflush(stdout);
		if (kill_self)
			raise(SIGKILL);
		signal(SIGSEGV, SIG_DFL);
		volatile uintptr_t bad = 8;
		*(volatile int *)bad = 1; /* a real fault, not raise() */
		return 1;
	}
	printf("written: %" PRIu64 "\n", written);
	return exit_status;
}
