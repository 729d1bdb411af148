/* SPDX-License-Identifier: MIT */
/*
 * live_latency.c - tb-live-latency: runs a follower (`tracebuf dump
 * --follow DIR` or `tracebuf report --follow DIR`) and measures, for every
 * event tb-live-writer wrote, how long after its write the follower showed
 * it: the arrival of the follower's line (dump: the line of `live:ev` with
 * that seq; report: the first report whose `events N` count covers it),
 * minus the writer's clock read before the write (CLOCK_MONOTONIC, from its
 * --log, read once the follower ended).
 *
 *   tb-live-latency --mode dump|report --log FILE --events N --bound-ms B -- CMD...
 *   (exit 0; 1 an event never shown or the follower failed; 3 only the p99 above the bound)
 *
 * Prints p50/p99/max (the figures of docs/BENCHMARKS.md) and exits 0 when
 * every event was shown and the p99 is within B ms, once the time this
 * machine took away from everything is discounted: one probe thread per
 * CPU, pinned, sleeps 2 ms at a time and records how late it woke; a late
 * wake-up is time the recorder and the follower could not run on that CPU
 * either.  For each event, the lateness the probes saw between its write
 * and its arrival (summed over the CPUs) is subtracted before the p99 is
 * judged, so that a loaded machine cannot fail the test, while a recorder
 * that keeps events back (minutes, or until the end) still does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stall probes ---- */
struct stall { uint64_t from, to; };
static struct stall *stalls;
static size_t nstalls, capstalls;
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;
static int probes_stop; /* set by main, read by the probes: __atomic, relaxed (a flag, nothing published with it) */

static void *probe(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
		return NULL;
	const uint64_t step = 2000000;
	while (!__atomic_load_n(&probes_stop, __ATOMIC_RELAXED)) {
		uint64_t t = mono_ns();
		struct timespec d = { 0, (long)step };
		nanosleep(&d, NULL);
		uint64_t late = mono_ns() - t;
		if (late > step + 1000000) { /* woke more than 1 ms late */
			pthread_mutex_lock(&stall_lock);
			if (nstalls == capstalls) {
				size_t cap = capstalls ? 2 * capstalls : 1024;
				struct stall *ns = realloc(stalls, cap * sizeof *stalls);
				if (ns) {
					stalls = ns;
					capstalls = cap;
				}
			}
			if (nstalls < capstalls)
				stalls[nstalls++] = (struct stall){ t + step, t + late };
			pthread_mutex_unlock(&stall_lock);
		}
	}
	return NULL;
}

/* lateness seen by the probes inside [a, b] */
static uint64_t stalled(uint64_t a, uint64_t b)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < nstalls; i++) {
		uint64_t f = stalls[i].from > a ? stalls[i].from : a, t = stalls[i].to < b ? stalls[i].to : b;
		if (t > f)
			sum += t - f;
	}
	return sum;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *log = NULL;
	uint64_t n = 0;
	double bound_ms = 0;
	static const struct option lo[] = { { "mode", 1, 0, 'm' }, { "log", 1, 0, 'l' }, { "events", 1, 0, 'n' },
					    { "bound-ms", 1, 0, 'b' }, { 0, 0, 0, 0 } };
	int o;
	while ((o = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (o) {
		case 'm': mode = optarg; break;
		case 'l': log = optarg; break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'b': bound_ms = atof(optarg); break;
		default: return 2;
		}
	}
	int dump = mode && !strcmp(mode, "dump");
	if (!mode || (!dump && strcmp(mode, "report")) || !log || !n || bound_ms <= 0 || optind >= argc) {
		fprintf(stderr, "usage: tb-live-latency --mode dump|report --log FILE --events N --bound-ms B -- CMD...\n");
		return 2;
	}
	uint64_t *seen = malloc(n * sizeof *seen);
	if (!seen)
		return 1;
	for (uint64_t k = 0; k < n; k++)
		seen[k] = 0;

	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[256];
	long nth = 0;
	for (long c = 0; c < ncpu && c < 256; c++)
		if (pthread_create(&th[nth], NULL, probe, (void *)c) == 0)
			nth++;

	int fd[2];
	if (pipe(fd) != 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	close(fd[1]);
	FILE *in = fdopen(fd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	uint64_t covered = 0; /* report: events counted so far */
	while (getline(&line, &cap, in) > 0) {
		uint64_t now = mono_ns();
		if (dump) {
			const char *p = strstr(line, "live:ev");
			if (p && (p = strstr(p, "seq = "))) {
				uint64_t k = strtoull(p + 6, NULL, 10);
				if (k < n && !seen[k])
					seen[k] = now;
			}
		} else if (!strncmp(line, "events ", 7)) {
			uint64_t c = 0;
			for (const char *p = line + 7; *p && *p != '('; p++)
				if (*p >= '0' && *p <= '9')
					c = c * 10 + (uint64_t)(*p - '0');
			for (; covered < c && covered < n; covered++)
				seen[covered] = now;
		}
	}
	free(line);
	fclose(in);
	int st = 0;
	waitpid(pid, &st, 0);
	__atomic_store_n(&probes_stop, 1, __ATOMIC_RELAXED);
	for (long i = 0; i < nth; i++)
		pthread_join(th[i], NULL);

	uint64_t *at = malloc(n * sizeof *at);
	FILE *f = fopen(log, "r");
	if (!at || !f || fread(at, sizeof *at, n, f) != n) {
		fprintf(stderr, "tb-live-latency: cannot read %" PRIu64 " write times from %s\n", n, log);
		return 1;
	}
	fclose(f);
	uint64_t *lat = malloc(n * sizeof *lat), *adj = malloc(n * sizeof *adj), missing = 0, stall_max = 0;
	if (!lat || !adj)
		return 1;
	for (uint64_t k = 0; k < n; k++) {
		if (!seen[k]) {
			missing++;
			lat[k] = adj[k] = UINT64_MAX;
			continue;
		}
		lat[k] = seen[k] > at[k] ? seen[k] - at[k] : 0;
		uint64_t s = stalled(at[k], seen[k]);
		if (s > stall_max)
			stall_max = s;
		adj[k] = lat[k] > s ? lat[k] - s : 0;
	}
	qsort(lat, n, sizeof *lat, cmp_u64);
	qsort(adj, n, sizeof *adj, cmp_u64);
	uint64_t p50 = lat[n / 2], p99 = lat[n * 99 / 100], mx = lat[n - 1], a99 = adj[n * 99 / 100];
	printf("%s: %" PRIu64 " events, latency p50 %.0f ms, p99 %.0f ms, max %.0f ms; p99 without the machine's "
	       "stalls %.0f ms (largest stall in an event's window %.0f ms); bound %.0f ms\n",
	       mode, n, p50 == UINT64_MAX ? -1.0 : p50 / 1e6, p99 == UINT64_MAX ? -1.0 : p99 / 1e6,
	       mx == UINT64_MAX ? -1.0 : mx / 1e6, a99 == UINT64_MAX ? -1.0 : a99 / 1e6,
	       stall_max / 1e6, bound_ms);
	int rc = 0;
	if (missing) {
		printf("FAIL: %" PRIu64 " of %" PRIu64 " events never shown by the follower\n", missing, n);
		rc = 1;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("FAIL: the follower ended with status %d\n", st);
		rc = 1;
	} else if ((double)a99 > bound_ms * 1e6) {
		printf("FAIL: p99 %.0f ms > %.0f ms\n", a99 / 1e6, bound_ms);
		rc = 3; /* only the bound: every event shown, the follower ended well */
	}
	free(lat);
	free(adj);
	free(at);
	free(seen);
	return rc;
}
