/* SPDX-License-Identifier: MIT */
/*
 * test_session_clock_agrees_with_a_long_measurement - a TSC session's
 * calibration (platform/clock.c: the slope between two clusters of pairs
 * 1 ms apart, the window doubling up to 20 ms while their estimated error
 * exceeds 0.5 ppm) is what a measurement over
 * 200 ms says, within 5 ppm, and it converts "now" to the wall clock within
 * 1 ms.  And the trace recorded in it says that frequency and places an
 * event at the wall-clock time it was written.  The verdicts rest on two clocks read together, not on how
 * long anything took.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "core/view.h"
#include "platform/clock.h"
#include "tbtest.h"

TB_EVENT(clk, mark, (u32, n))

static int64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* a TSC value and CLOCK_MONOTONIC read together (the tightest of 16) */
static void tsc_mono(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = tb_rdtsc(), n = tb_mono_ns(), b = tb_rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

int main(void)
{
	uint64_t t0, m0, t1, m1;
	tsc_mono(&t0, &m0);
	char dir[512];
	snprintf(dir, sizeof dir, "%s/clk", tbt_tmpdir());
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir() };
	struct tb_recorder *rec;
	int rc = tb_session_start(&so, dir, &rec);
	if (rc == -ENOTSUP)
		SKIP("tb_session_start: %s", tb_errmsg());
	CHECK_RC(rc, 0);
	struct tb_session *s = tb_recorder_session(rec);
	if (s->clock_kind != TB_CLOCK_TSC) {
		tb_session_stop(rec);
		SKIP("this machine's sessions use CLOCK_MONOTONIC (no constant, non-stop TSC): nothing calibrated");
	}
	int64_t w0 = realtime_ns();
	tb_clk_mark(0);
	int64_t w1 = realtime_ns();
	/* the long measurement: 200 ms on the monotonic clock */
	do {
		usleep(10000);
		tsc_mono(&t1, &m1);
	} while (m1 - m0 < 200000000ull);
	uint64_t f = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (m1 - m0));
	double ppm = ((double)s->clock_freq - (double)f) / (double)f * 1e6;
	printf("session %llu Hz, 200 ms measurement %llu Hz: %+.2f ppm\n", (unsigned long long)s->clock_freq,
	       (unsigned long long)f, ppm);
	CHECK(ppm < 5 && ppm > -5, "the session's frequency is %+.2f ppm from a 200 ms measurement", ppm);
	/* "now", converted with the session's calibration, between two reads of
	 * the wall clock (a preemption between them widens the bracket; it
	 * cannot fail the check) */
	int64_t wall0 = realtime_ns();
	uint64_t t = tb_rdtsc();
	int64_t wall1 = realtime_ns();
	int64_t conv = s->clock_offset_ns + (int64_t)((unsigned __int128)t * 1000000000u / s->clock_freq);
	CHECK(conv > wall0 - 1000000 && conv < wall1 + 1000000, "now converts to %lld, the wall clock says %lld..%lld",
	      (long long)conv, (long long)wall0, (long long)wall1);
	uint64_t sfreq = s->clock_freq;
	CHECK_RC(tb_session_stop(rec), 0);

	/* the trace: the event where the wall clock says it was written */
	struct tb_reader *r;
	CHECK_RC(tb_reader_open(dir, NULL, &r), 0);
	CHECK(tb_reader_clock_freq(r) == sfreq, "the trace says %llu Hz, its session %llu Hz",
	      (unsigned long long)tb_reader_clock_freq(r), (unsigned long long)sfreq);
	int seen = 0;
	const struct tb_rd_event *ev;
	while (tb_reader_next(r, &ev) > 0) {
		if (tb_rd_kind(ev) != TB_RD_EVENT || strcmp(tb_rd_name(ev), "clk:mark") != 0)
			continue;
		seen++;
		int64_t ns = tb_rd_ns(ev);
		CHECK(ns > w0 - 1000000 && ns < w1 + 1000000, "the event at %lld ns, written between %lld and %lld",
		      (long long)ns, (long long)w0, (long long)w1);
	}
	CHECK(seen == 1, "clk:mark events read: %d", seen);
	tb_reader_close(r);
	printf("ok\n");
	return 0;
}
