/* SPDX-License-Identifier: MIT */
/* cmd_stat.c - tracebuf stat SESSION: the counters of a live session per channel and CPU. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/engine.h"

#define NAME "stat"

static void stat_usage(FILE *f)
{
	fprintf(f, "usage: tracebuf stat [-a] SESSION\n"
		   "\n"
		   "Prints the counters of SESSION (a session file, or its name in /dev/shm) per\n"
		   "channel and CPU: events written, lost by cause, strings truncated, sub-buffer\n"
		   "switches, ring fill.  -a shows CPUs that never wrote too.\n");
}

static const char *mode_str(uint32_t m)
{
	return m == TB_MODE_OVERWRITE ? "overwrite" : m == TB_MODE_BLOCK ? "block" : "discard";
}

static void row(const char *label, const struct tb_counters *k, unsigned fill)
{
	printf("  %-8s %12" PRIu64 " %10" PRIu64 " %8" PRIu64 " %11" PRIu64 " %8" PRIu64 " %10" PRIu64 " %6" PRIu64
	       " %9" PRIu64 " %9" PRIu64,
	       label, k->written, k->lost_full, k->lost_toobig, k->lost_overwritten, k->lost_timeout,
	       k->lost_noconsumer, k->lost_busy, k->truncated, k->switches);
	if (fill <= 1000)
		printf(" %4u%%", fill / 10);
	printf("\n");
}

int cmd_stat(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "all", no_argument, 0, 'a' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int all = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ah", lo, NULL)) != -1) {
		switch (c) {
		case 'a': all = 1; break;
		case 'h': stat_usage(stdout); return TB_EXIT_OK;
		default: stat_usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		stat_usage(stderr);
		return TB_EXIT_USAGE;
	}
	char path[4096];
	cli_session_path(argv[optind], path, sizeof path);
	struct tb_session *s;
	if (tb_session_attach(path, TB_ATTACH_READONLY, &s) < 0)
		return cli_error(NAME, "cannot attach to %s: %s", path, tb_errmsg());
	struct tb_map *m = s->map;
	/* relaxed loads: informational values, each exact at some instant */
	uint32_t state = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
	uint32_t cpid = __atomic_load_n(&m->consumer_pid, __ATOMIC_RELAXED);
	uint64_t hb = __atomic_load_n(&m->consumer_heartbeat_ns, __ATOMIC_RELAXED);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	printf("session %s\n", path);
	printf("  protocol %s, %u CPUs, %u channels, state %s, %u live processes\n",
	       tb_session_uses_rseq(s) ? "rseq" : "fallback", s->ncpus, s->nchannels,
	       state == TB_STATE_ACTIVE ? "active" : state == TB_STATE_STOPPING ? "stopping" :
	       state == TB_STATE_STOPPED ? "stopped" : "?",
	       tb_session_live_procs(s, 0));
	if (cpid)
		printf("  consumer pid %u, last seen %.1f s ago\n", cpid,
		       hb && hb <= now ? (double)(now - hb) / 1e9 : -1.0);
	else
		printf("  no consumer\n");
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		const struct tb_chan_view *cv = &s->chan[ch];
		printf("\nchannel %s: %s, %u x %" PRIu64 " bytes per CPU, flush period %.3f s\n", cv->name,
		       mode_str(cv->mode), cv->sb_count, cv->sb_size, (double)cv->flush_period_ns / 1e9);
		printf("  %-8s %12s %10s %8s %11s %8s %10s %6s %9s %9s %5s\n", "cpu", "written", "lost_full",
		       "too_big", "overwritten", "timeout", "noconsumer", "busy", "truncated", "switches", "fill");
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			struct tb_counters k;
			if (tb_session_counters(s, ch, (int)cpu, &k) < 0)
				continue;
			if (!all && !k.written && !k.switches && !k.lost_full && !k.lost_busy && !k.lost_toobig &&
			    !k.lost_noconsumer && !k.lost_timeout)
				continue;
			char label[16];
			snprintf(label, sizeof label, "%u", cpu);
			row(label, &k, tb_engine_fill(s, ch, cpu));
		}
		struct tb_counters t;
		if (tb_session_counters(s, ch, -1, &t) == 0)
			row("total", &t, 2000);
	}
	tb_session_close(s);
	return TB_EXIT_OK;
}
