/* SPDX-License-Identifier: MIT */
/*
 * Invariant 6: a session uses the memory its configuration says, and the
 * pages of CPUs that never write are never touched.  A session for 64
 * CPUs x 1 MiB rings; only this thread (pinned to one CPU) writes; mincore()
 * on the session file's mapping shows that no page of another CPU's ring is
 * resident, and that the written CPU's pages are.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/view.h"
#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(idle, ev, (u64, a), (u64, b))

static uint64_t resident(const struct tb_session *s, uint64_t off, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)((len + (uint64_t)pg - 1) / (uint64_t)pg);
	unsigned char *v = malloc(n);
	CHECK(mincore(s->base + off, len, v) == 0, "mincore: %s", strerror(errno));
	uint64_t r = 0;
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

int main(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 256 << 10, .sb_count = 4 };
	/* the default directory (/dev/shm, tmpfs): on a disk file system the
	 * page cache's readahead would populate holes next to written pages */
	struct tb_session_opts so = { .size = sizeof so, .ncpus = 64, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	tb_session_unlink(s);
	CHECK_RC(tb_producer_use(s), 0);
	for (int i = 0; i < 20000; i++)
		tb_idle_ev((uint64_t)i, 0);
	struct tb_counters c;
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK_EQ_U64(c.written, 20000);
	unsigned written_ring = tb_session_uses_rseq(s) ? 0 : 64; /* fallback: find the slot used */
	for (unsigned cpu = 0; cpu < 64 && written_ring == 64; cpu++) {
		struct tb_counters k;
		tb_session_counters(s, 0, (int)cpu, &k);
		if (k.written)
			written_ring = cpu;
	}
	CHECK(written_ring < 64, "no ring was written");
	uint64_t rs = s->chan[0].ring_size, total_idle = 0;
	for (unsigned cpu = 0; cpu < 64; cpu++) {
		uint64_t off = s->chan[0].ring0_off + rs * cpu;
		uint64_t r = resident(s, off, rs);
		if (cpu == written_ring)
			CHECK(r >= 2, "the written ring has %llu resident pages", (unsigned long long)r);
		else
			total_idle += r;
	}
	printf("session %llu MiB, resident pages of the 63 idle rings: %llu\n",
	       (unsigned long long)(s->size >> 20), (unsigned long long)total_idle);
	CHECK_EQ_U64(total_idle, 0);
	return 0;
}
