/* SPDX-License-Identifier: MIT */
/*
 * Invariant 1 in overwrite mode when a switch is aborted and never retried.
 *
 * A switch that reuses the sub-buffer of the oldest retained packet O stores,
 * in order: the new loss total (covering O's events), O's descriptor, then
 * O's new header, then the commit.  Aborted in between (preemption; then the
 * program exits before any other switch), O is left counted as lost and
 * possibly half overwritten.  The final drain must skip it rather than drop it
 * as corrupt: delivered + counted lost == written, and no bad packet.
 * The abort is reproduced exactly: the stores an aborted attempt made are
 * made by hand on a wrapped ring, at each possible stopping point.
 */
#define _GNU_SOURCE
#include <string.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(ow, ev, (u64, seq), (u64, pad))

static uint64_t seen;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	if (!strcmp(e->name, "ow:ev"))
		seen++;
}

/* stop: 0 = aborted right after storing the loss total, 1 = also O's
 * descriptor, 2 = also the first 40 bytes of O's new header */
static void run(int stop)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "o", .sb_size = 4096, .sb_count = 4, .mode = TB_OVERWRITE };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	const uint64_t N = 5000; /* enough to wrap every ring this thread writes to */
	for (uint64_t i = 0; i < N; i++)
		tb_ow_ev(i, 0);

	/* the ring that was written (whatever CPU or slot this thread used) */
	unsigned ring_cpu = 0;
	for (unsigned k = 0; k < tb_session_ncpus(s); k++)
		if (tb_ctl_of(s, 0, k)->head > tb_ctl_of(s, 0, ring_cpu)->head)
			ring_cpu = k;
	/* the stores of an aborted switch from the current packet to Q */
	const struct tb_chan_view *cv = &s->chan[0];
	struct tb_ctl *c = tb_ctl_of(s, 0, ring_cpu);
	struct tb_sbdesc *desc = tb_sbdesc_of(s, 0, ring_cpu);
	uint64_t S = cv->sb_size, head = c->head, Q = (head & ~(S - 1)) + S;
	CHECK(Q >= (cv->ring_mask + 1), "the ring must have wrapped (head %llu, ring %llu)", (unsigned long long)head,
	      (unsigned long long)(cv->ring_mask + 1));
	unsigned qidx = (unsigned)((Q / S) % cv->sb_count), oldest = (qidx + 1) % cv->sb_count;
	uint64_t cnt = c->st_end == head ? c->cnt_after : c->cnt_before;
	c->lost_overwritten = desc[oldest].cnt_begin;
	if (stop >= 1) {
		desc[qidx].cnt_begin = cnt;
		desc[qidx].cnt_end = cnt;
	}
	if (stop >= 2)
		memset(tb_sb_at(s, 0, ring_cpu, Q), 0x55, 40);

	seen = 0;
	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	tbd_finish(&d);
	printf("abort point %d: written %llu delivered %llu lost %llu bad %llu\n", stop, (unsigned long long)N,
	       (unsigned long long)seen, (unsigned long long)tbd_discarded(&d), (unsigned long long)d.bad_packets);
	CHECK(d.first_error[0] == 0, "%s", d.first_error);
	CHECK_EQ_U64(d.bad_packets, 0);
	CHECK_EQ_U64(seen + tbd_discarded(&d), N);
	tbd_fini(&d);
	CHECK_RC(tb_producer_use(NULL), 0);
}

int main(void)
{
	for (int stop = 0; stop <= 2; stop++)
		run(stop);
	return 0;
}
