/* SPDX-License-Identifier: MIT */
/* cmd_stat.c - tracebuf stat SESSION: the counters of a live session per channel and CPU. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <tracebuf/session.h>

#include "cli.h"

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
	return m == TB_OVERWRITE ? "overwrite" : m == TB_BLOCK ? "block" : "discard";
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
	while ((c = cli_getopt("stat", argc, argv, "ah", lo)) != -1) {
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
	struct tb_session_status st = { .size = sizeof st };
	tb_session_status(s, &st);
	unsigned nch = tb_session_nchannels(s), ncpus = tb_session_ncpus(s);
	fputs("session ", stdout);
	cli_puttx(stdout, path);
	putchar('\n');
	printf("  protocol %s, %u CPU%s, %u channel%s, state %s, %u live process%s\n",
	       tb_session_uses_rseq(s) ? "rseq" : "fallback", ncpus, cli_s(ncpus), nch, cli_s(nch),
	       st.state == TB_SESSION_ACTIVE ? "active" : st.state == TB_SESSION_STOPPING ? "stopping" :
	       st.state == TB_SESSION_STOPPED ? "stopped" : "?",
	       st.live_processes, st.live_processes == 1 ? "" : "es");
	if (st.consumer_pid && st.consumer_seen_ns != UINT64_MAX)
		printf("  consumer pid %u, last seen %.1f s ago\n", st.consumer_pid, (double)st.consumer_seen_ns / 1e9);
	else if (st.consumer_pid)
		printf("  consumer pid %u, no heartbeat yet\n", st.consumer_pid);
	else
		printf("  no consumer\n");
	for (unsigned ch = 0; ch < nch; ch++) {
		struct tb_channel_info ci = { .size = sizeof ci };
		if (tb_session_channel_info(s, ch, &ci) < 0)
			continue;
		printf("\nchannel %s: %s, %u x %" PRIu64 " bytes per CPU, flush period %.3f s\n", ci.name,
		       mode_str(ci.mode), ci.sb_count, ci.sb_size, (double)ci.flush_period_ns / 1e9);
		printf("  %-8s %12s %10s %8s %11s %8s %10s %6s %9s %9s %5s\n", "cpu", "written", "lost_full",
		       "too_big", "overwritten", "timeout", "noconsumer", "busy", "truncated", "switches", "fill");
		for (unsigned cpu = 0; cpu < ncpus; cpu++) {
			struct tb_counters k;
			if (tb_session_counters(s, ch, (int)cpu, &k) < 0)
				continue;
			if (!all && !k.written && !k.switches && !k.lost_full && !k.lost_busy && !k.lost_toobig &&
			    !k.lost_noconsumer && !k.lost_timeout)
				continue;
			char label[16];
			snprintf(label, sizeof label, "%u", cpu);
			int fill = tb_session_ring_fill(s, ch, cpu);
			row(label, &k, fill < 0 ? 2000 : (unsigned)fill);
		}
		struct tb_counters t;
		if (tb_session_counters(s, ch, -1, &t) == 0)
			row("total", &t, 2000);
	}
	tb_session_close(s);
	return TB_EXIT_OK;
}
