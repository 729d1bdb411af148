/* SPDX-License-Identifier: MIT */
/*
 * test_recorder_writes_behind_the_faster_way - the recorder's choice for a
 * batch taken while three quarters of its ring wait (src/consumer/
 * stream_io.c): through the page cache while it has lately been the faster
 * way, or when nothing is measured yet; direct I/O while that is the faster,
 * except one batch through the page cache once its figure is
 * TB_IO_PROBE_NS old.  And the averages those choices read: weighted by the
 * bytes of each write, so a small flush of a quiet ring (the device's
 * latency) barely moves a rate that large runs measured.  Pure functions of
 * their arguments (engine_impl.h): the verdicts read no clock.
 */
#include "consumer/engine_impl.h"
#include "tbtest.h"

#define MIB (1u << 20)

int main(void)
{
	double rate[2] = { 0, 0 };
	const uint64_t t = 5000000000ull; /* "now" */

	/* nothing measured: the page cache (it is measured by that) */
	CHECK(tb_io_cache_pays(rate, 0, t) == 1);
	rate[1] = 2.0; /* direct measured, the page cache not */
	CHECK(tb_io_cache_pays(rate, 0, t) == 1);
	rate[0] = 5.0, rate[1] = 0; /* the page cache measured, direct not */
	CHECK(tb_io_cache_pays(rate, t, t) == 1);

	/* the page cache faster: it takes every behind batch */
	rate[0] = 5.0, rate[1] = 2.0;
	CHECK(tb_io_cache_pays(rate, t, t) == 1);
	CHECK(tb_io_cache_pays(rate, t - 10 * TB_IO_PROBE_NS, t) == 1);

	/* direct faster: direct, until the page cache's figure is old */
	rate[0] = 0.4, rate[1] = 1.5;
	CHECK(tb_io_cache_pays(rate, t, t) == 0);
	CHECK(tb_io_cache_pays(rate, t - TB_IO_PROBE_NS + 1, t) == 0);
	CHECK(tb_io_cache_pays(rate, t - TB_IO_PROBE_NS, t) == 1, "a page cache figure %llu ns old is probed again",
	      (unsigned long long)TB_IO_PROBE_NS);
	rate[0] = rate[1]; /* equal: direct (it costs no CPU time) */
	CHECK(tb_io_cache_pays(rate, t, t) == 0);

	/* the averages */
	double avg = 0;
	tb_io_rate_add(&avg, MIB, 0); /* a write too fast to time: no figure */
	tb_io_rate_add(&avg, 0, 1000);
	CHECK(avg == 0);
	tb_io_rate_add(&avg, MIB, MIB / 2); /* the first sets it: 2 bytes/ns */
	CHECK(avg == 2.0, "first figure %g", avg);
	double before = avg;
	tb_io_rate_add(&avg, 32768, 32768 * 10); /* a 32 KiB flush at 0.1 bytes/ns */
	CHECK(avg < before && avg > before - (before - 0.1) / 100, "a 32 KiB write moved %g to %g", before, avg);
	avg = 2.0;
	tb_io_rate_add(&avg, MIB, MIB); /* a 1 MiB run at 1 byte/ns: a quarter of the way */
	CHECK(avg > 1.749 && avg < 1.751, "1 MiB at 1 byte/ns moved 2.0 to %g", avg);
	for (int i = 0; i < 16; i++) /* the rate changed for good: the average follows */
		tb_io_rate_add(&avg, MIB, MIB);
	CHECK(avg > 0.99 && avg < 1.01, "after 17 runs at 1 byte/ns: %g", avg);
	avg = 2.0;
	tb_io_rate_add(&avg, 64 * MIB, 64 * MIB); /* a run larger than 4 MiB counts at most 1 */
	CHECK(avg == 1.0, "a 64 MiB run: %g", avg);
	return 0;
}
