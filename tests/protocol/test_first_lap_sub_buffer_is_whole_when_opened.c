/* SPDX-License-Identifier: MIT */
/*
 * A producer's switch into a sub-buffer of the ring's first lap asks the
 * kernel for all of that sub-buffer's pages at once (MADV_POPULATE_WRITE,
 * append.c populate_first_lap()): one system call instead of a page fault
 * per page as records reach them.  And only that sub-buffer: the next ones
 * stay holes until a switch opens them (memory is still used only where a
 * producer writes; test_idle_cpus_touch_no_ring_pages: idle rings stay
 * holes).  Seen with mincore() on the session file's mapping (tmpfs): when
 * the first record of sub-buffer k exists, every page of sub-buffers 0..k is
 * resident and none of the later ones.  Page by page faulting would show
 * sub-buffer k with only its first page.  Skipped where the kernel has no
 * MADV_POPULATE_WRITE (before Linux 5.14).
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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

TB_EVENT(lap, ev, (u64, a), (u64, b))

#define SB (256u << 10)
#define NSB 4u

static uint64_t resident(const uint8_t *p, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)((len + (uint64_t)pg - 1) / (uint64_t)pg);
	unsigned char *v = malloc(n);
	CHECK(v != NULL);
	CHECK(mincore((void *)p, len, v) == 0, "mincore: %s", strerror(errno));
	uint64_t r = 0;
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

/* the written ring's data area: CPU 0's under rseq; under the fallback
 * protocol the slot the thread took (several slots per CPU) */
static const uint8_t *written_ring(struct tb_session *s)
{
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		struct tb_counters k;
		CHECK_RC(tb_session_counters(s, 0, (int)cpu, &k), 0);
		if (k.written)
			return s->base + s->chan[0].ring0_off + s->chan[0].ring_size * cpu + s->chan[0].data_off;
	}
	CHECK(0, "no ring was written");
	return NULL;
}

/* sub-buffers 0..k whole, the rest holes */
static void check_opened(const uint8_t *data, unsigned k)
{
	uint64_t pages = SB / (uint64_t)sysconf(_SC_PAGESIZE);
	for (unsigned i = 0; i < NSB; i++) {
		uint64_t r = resident(data + (uint64_t)i * SB, SB);
		printf("  sub-buffer %u: %llu of %llu pages resident\n", i, (unsigned long long)r,
		       (unsigned long long)pages);
		if (i <= k)
			CHECK_EQ_U64(r, pages);
		else
			CHECK_EQ_U64(r, 0);
	}
}

int main(void)
{
	void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(probe != MAP_FAILED);
	if (madvise(probe, 4096, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
		SKIP("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): sub-buffers fill page by page");
	munmap(probe, 4096);

	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = SB, .sb_count = NSB };
	/* the default directory (/dev/shm, tmpfs): no readahead fills holes */
	struct tb_session_opts so = { .size = sizeof so, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	tb_session_unlink(s);
	CHECK_RC(tb_producer_use(s), 0);

	tb_lap_ev(0, 0);
	const uint8_t *data = written_ring(s);
	printf("after the first record:\n");
	check_opened(data, 0);

	/* records until the second sub-buffer has a page: the switch that
	 * opened it wrote its header, so it must be whole by then */
	uint64_t n = 1;
	while (resident(data + SB, SB) == 0) {
		CHECK(n < 10 * (uint64_t)SB, "%llu records did not open a second sub-buffer", (unsigned long long)n);
		tb_lap_ev(n, n);
		n++;
	}
	printf("after %llu records, the second sub-buffer opened:\n", (unsigned long long)n);
	check_opened(data, 1);
	return 0;
}
