/* SPDX-License-Identifier: MIT */
/*
 * record_report.c - what `tracebuf record` says while and after it records:
 * the live status line, the summary with the accounting identity per ring
 * (written == delivered + lost), the --events patterns that matched nothing,
 * the engine's warnings, and the two verdicts beyond CMD's status (data
 * dropped as invalid: 3; a relay-only copy that lost its relay for good: 1).
 * Running CMD and the engine is cmd_record.c.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/engine.h"
#include "kernel/kernel.h"
#include "record_report.h"

#define NAME "record"

double record_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Events offered to ring (ch, cpu) (or all: -1): committed + dropped by the producers. */
static uint64_t written_of(struct tb_session *s, int ch, int cpu)
{
	uint64_t n = 0;
	unsigned nch = tb_session_nchannels(s);
	for (unsigned c = 0; c < nch; c++) {
		if (ch >= 0 && (unsigned)ch != c)
			continue;
		struct tb_counters k;
		if (tb_session_counters(s, c, cpu, &k) < 0)
			continue;
		n += k.written + k.lost_full + k.lost_toobig + k.lost_timeout + k.lost_busy + k.lost_noconsumer;
	}
	return n;
}

/* Producer losses so far (live: the status line). */
static uint64_t producer_lost(struct tb_session *s)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < tb_session_nchannels(s); c++) {
		struct tb_counters k;
		if (tb_session_counters(s, c, -1, &k) == 0)
			n += k.lost_full + k.lost_toobig + k.lost_overwritten + k.lost_timeout + k.lost_busy +
			     k.lost_noconsumer;
	}
	return n;
}

static uint64_t sum_lost(const struct tb_stream_stats *st)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		n += st->lost[k];
	return n;
}

void record_status_line(struct tb_session *s, struct tb_engine *e, double t0, uint64_t *prev_ev, double *prev_t)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	uint64_t lost = producer_lost(s);
	double t = record_now_s();
	double rate = t > *prev_t ? (double)(st.events - *prev_ev) / (t - *prev_t) : 0;
	*prev_ev = st.events;
	*prev_t = t;
	char fill[160] = "";
	size_t off = 0;
	unsigned ncpus = tb_session_ncpus(s);
	for (unsigned cpu = 0; cpu < ncpus && off < sizeof fill - 16; cpu++) {
		if (cpu == 8) {
			snprintf(fill + off, sizeof fill - off, " ...");
			break;
		}
		unsigned f = 0;
		for (unsigned ch = 0; ch < tb_session_nchannels(s); ch++) {
			int x = tb_session_ring_fill(s, ch, cpu);
			if (x > (int)f)
				f = (unsigned)x;
		}
		off += (size_t)snprintf(fill + off, sizeof fill - off, " %u%%", f / 10);
	}
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	fprintf(stderr, "\r\033[K[%.1fs] %.0f ev/s, %.1f MiB, lost %" PRIu64 ", fill%s%s", t - t0, rate,
		(double)st.bytes / 1048576.0, lost, fill,
		!rs.enabled ? "" : rs.alive ? ", relay ok" : ", RELAY LOST (retrying)");
	fflush(stderr);
}

/*
 * The summary says what the trace says: delivered events and losses by
 * cause as its packets carry them, next to what the producers offered.
 * Once no producer is left, written == delivered + lost for every ring (the
 * accounting identity); a difference is said, never hidden.
 */
/*
 * --events PATTERNS: each pattern that selected none of the classes the
 * program registered is worth a word (a typo gives an empty trace that looks
 * like a program that wrote nothing): said with the classes that exist.
 */
void record_warn_unmatched(struct tb_session *s, const char *patterns)
{
	if (!patterns)
		return;
	unsigned n = tb_session_nclasses(s);
	struct tb_class_info *ev = calloc(n ? n : 1, sizeof *ev);
	if (!ev)
		return;
	for (unsigned i = 0; i < n; i++) {
		ev[i].size = sizeof ev[i];
		if (tb_session_class(s, i, &ev[i]) < 0)
			ev[i].valid = 0;
	}
	char buf[256], *save = NULL; /* patterns are at most 255 bytes (tb_session_set_events) */
	snprintf(buf, sizeof buf, "%s", patterns);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok || *tok == '!')
			continue;
		int hit = 0;
		for (unsigned i = 0; i < n && !hit; i++)
			hit = ev[i].valid && strncmp(ev[i].name, "tracebuf:", 9) && !fnmatch(tok, ev[i].name, 0);
		if (hit)
			continue;
		fprintf(stderr, "tracebuf " NAME ": warning: --events pattern '%s' matched none of the event classes "
				"the program registered:", tok);
		unsigned shown = 0;
		for (unsigned i = 0; i < n; i++)
			if (ev[i].valid && strncmp(ev[i].name, "tracebuf:", 9)) {
				if (shown++ < 20)
					fprintf(stderr, " %s", ev[i].name);
			}
		fprintf(stderr, shown ? (shown > 20 ? " ... (%u in all)\n" : " (%u)\n") : " none\n", shown);
	}
	free(ev);
}

/* This process's CPU time so far, every thread (user + system): what the
 * recording cost, to the microsecond (make bench's `consumer` rows). */
static double self_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void record_summary(struct tb_session *s, struct tb_engine *e, const char *dir, double secs, int final)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	if (dir)
		fprintf(stderr, "tracebuf " NAME ": %" PRIu64 " events, %.2f MiB in %" PRIu64
				" packets written to %s in %.2f s (%.0f %% with direct I/O, %.3f s of recorder CPU)\n",
			st.events, (double)st.bytes / 1048576.0, st.packets, dir, secs,
			st.bytes ? 100.0 * (double)st.direct / (double)st.bytes : 0.0, self_cpu_s());
	else /* relay-only: st counts what the relay daemon got */
		fprintf(stderr, "tracebuf " NAME ": %" PRIu64 " events delivered to the relay daemon (no local copy) "
				"in %.2f s\n", st.events, secs);
	uint64_t lost = sum_lost(&st);
	fprintf(stderr, "  lost %" PRIu64 " events", lost);
	for (unsigned k = 0, n = 0; k < TB_LOSS_NCAUSES; k++)
		if (st.lost[k])
			fprintf(stderr, "%s%s %" PRIu64, n++ ? ", " : ": ", cli_loss_label(k), st.lost[k]);
	fputc('\n', stderr);
	double io[2];
	tb_engine_io_rates(e, io);
	if (dir && st.lost[TB_LOSS_FULL]) {
		/* what the rings could not wait for: the file system's pace */
		fprintf(stderr, "  ring full: the program wrote faster than the trace was written");
		if (io[1] > 0)
			fprintf(stderr, "; direct writes went at %.2f GB/s", io[1]);
		if (io[0] > 0)
			fprintf(stderr, "%s the page cache took %.2f GB/s", io[1] > 0 ? "," : ";", io[0]);
		fprintf(stderr, " (larger rings absorb longer bursts: --sb-count, --sb-size; --mode block loses nothing)\n");
	}
	if (st.bad || st.torn || st.skipped || st.dropped)
		fprintf(stderr, "  packets: %" PRIu64 " invalid (skipped), %" PRIu64 " torn (dropped), %" PRIu64
				" skipped, %" PRIu64 " not written after a write error\n",
			st.bad, st.torn, st.skipped, st.dropped);
	struct tb_kernel_stats ks;
	if (tb_engine_kernel(e, &ks)) {
		/* --kernel: what the trace's kernel streams say (lost by cause, as readers see it) */
		fprintf(stderr, "  kernel: %" PRIu64 " events of %u tracepoints on %u CPUs in %" PRIu64
				" packets, %" PRIu64 " of other processes left out; lost %" PRIu64,
			ks.delivered, ks.ntracepoints, ks.ncpus, ks.packets, ks.filtered,
			ks.lost_full + ks.lost_invalid + ks.lost_disk);
		if (ks.lost_full)
			fprintf(stderr, " (perf ring full: %" PRIu64 "; a larger ring: --kernel-pages)", ks.lost_full);
		if (ks.silent)
			fprintf(stderr, " (of which %" PRIu64 " counted by the kernel but never in its ring)", ks.silent);
		if (ks.lost_invalid)
			fprintf(stderr, " (invalid records: %" PRIu64 ")", ks.lost_invalid);
		if (ks.lost_disk)
			fprintf(stderr, " (not written: %" PRIu64 ")", ks.lost_disk);
		fputc('\n', stderr);
		if (ks.counted) {
			uint64_t acc = ks.delivered + ks.filtered + ks.lost_full + ks.lost_invalid + ks.lost_disk;
			fprintf(stderr, "  kernel: %" PRIu64 " tracepoint hits counted by perf, %" PRIu64
					" accounted for (delivered + left out + lost)%s\n",
				ks.generated, acc, acc == ks.generated ? "" : ": NOT EQUAL");
		}
	}
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	if (rs.enabled) {
		fprintf(stderr, "  relay: %" PRIu64 " packets, %.2f MiB sent to %s", rs.packets,
			(double)rs.bytes / 1048576.0, rs.path);
		if (rs.reconnects)
			fprintf(stderr, " (the last of %u relay sessions: %u reconnection%s)", rs.reconnects + 1,
				rs.reconnects, rs.reconnects == 1 ? "" : "s");
		if (rs.lost_packets)
			fprintf(stderr, "; %" PRIu64 " packets (%" PRIu64 " events) not sent%s%s", rs.lost_packets,
				rs.lost_events, rs.error[0] ? ": " : " (counted as lost_relay in the next relay session)",
				rs.error);
		fputc('\n', stderr);
	}
	unsigned nch = tb_session_nchannels(s), ncpus = tb_session_ncpus(s);
	for (unsigned ch = 0; ch < nch; ch++)
		for (unsigned cpu = 0; cpu < ncpus; cpu++) {
			struct tb_stream_stats x;
			tb_engine_stats(e, (int)ch, (int)cpu, &x);
			uint64_t w = written_of(s, (int)ch, (int)cpu), l = sum_lost(&x);
			if (!x.packets && !w && !l)
				continue;
			fprintf(stderr, "  %s cpu %u: written %" PRIu64 ", delivered %" PRIu64 ", lost %" PRIu64
					", %" PRIu64 " packets\n",
				tb_session_channel_name(s, ch), cpu, w, x.events, l, x.packets);
			if (final && w != x.events + l)
				fprintf(stderr, "  %s cpu %u: the trace does not account for %" PRId64
						" events (written != delivered + lost): please report this\n",
					tb_session_channel_name(s, ch), cpu, (int64_t)(w - x.events - l));
		}
}

/* Relay-only, and the relay daemon was gone at the end: its copy, the only
 * one, misses the last packets and cannot say how many events they held
 * (that is told in the next packet of a stream, and none will come).  Said,
 * and a failure. */
int record_relay_only_lost(const char *out, struct tb_engine *e)
{
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	if (out || !rs.enabled || rs.alive)
		return 0;
	cli_error(NAME, "the relay daemon was lost and did not come back before the end: its copy of the trace (the "
			"only one: no -o DIR) misses %" PRIu64 " events, and %s",
		  rs.lost_events,
		  rs.reconnects ? "its last relay session does not say so" : "does not say so");
	return 1;
}

/* Data of the session was dropped as invalid (packets that failed validation, records cut,
 * control blocks resynchronised): the exit status says so (3). */
int record_damaged_input(struct tb_engine *e)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	return st.bad || st.lost[TB_LOSS_INVALID] || st.resyncs;
}

void record_print_warnings(struct tb_engine *e)
{
	char msg[300];
	while (tb_engine_next_warning(e, msg, sizeof msg))
		fprintf(stderr, "\ntracebuf " NAME ": warning: %s\n", msg);
}
