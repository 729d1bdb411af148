/* SPDX-License-Identifier: MIT */
/*
 * A kernel pass (src/kernel/capture.c) over fabricated perf rings of two
 * CPUs, no kernel needed:
 *   - a fork published on CPU 0 only after the pass that took its child's
 *     first switch on CPU 1 (the rings are read one after the other, a
 *     vCPU can stop between a record's clock read and its publication):
 *     the switch waits for the next pass instead of being merged before
 *     the fork, so the tree filter keeps it (it used to leave it out:
 *     the child was not known yet);
 *   - what was stamped well before the pass (more than its margin) is
 *     written by that pass, not held back;
 *   - each CPU's switches form a chain: a break right after a switch to
 *     the idle task is counted as a switch out of idle the kernel never
 *     gave (docs/KERNEL.md, "Known gap"), a break anywhere else is not;
 *   - events held back pass after pass (stamped after each pass's cut)
 *     come out whole and in order: their payloads, kept apart from the
 *     entries the passes sort and move (capture.c, struct kpend), are
 *     moved by every pass and outgrow their first arena, while other
 *     events are written around them.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record.h"
#include "kernel/kernel_impl.h"
#include "platform/clock.h"
#include "tbtest.h"
#include "tracebuf/session.h"

#define AREA 8192u

static const char switch_fmt[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n";

/* since Linux 6.x the comms of fork are __data_loc strings */
static const char fork_fmt[] =
	"name: sched_process_fork\nID: 366\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";

#define ID_SWITCH(cpu) (100u + (cpu))
#define ID_FORK(cpu) (200u + (cpu))

struct fake {
	struct tb_kernel *k;
	uint8_t *area[2];
	uint64_t head[2], tail[2];
};

static struct fake *fake_new(int all)
{
	struct fake *f = calloc(1, sizeof *f);
	struct tb_kernel *k = calloc(1, sizeof *k);
	CHECK(f && k);
	f->k = k;
	pthread_mutex_init(&k->warn_lock, NULL);
	k->all = all;
	k->clock_kind = TB_CLOCK_MONOTONIC; /* times are CLOCK_MONOTONIC ns: the identity */
	k->dirfd = -1;                      /* no files, no sink: the stats say what was written */
	k->scratch = malloc(TB_PERF_REC_MAX);
	CHECK(tb_tp_format_parse(switch_fmt, &k->fmt[TB_KTP_SWITCH]) == 0);
	CHECK(tb_tp_format_parse(fork_fmt, &k->fmt[TB_KTP_FORK]) == 0);
	for (unsigned tp = 0; tp < TB_KTP_N; tp++)
		k->cls_of[tp] = tp == TB_KTP_SWITCH || tp == TB_KTP_FORK ? (int32_t)tp : -1;
	k->ids = calloc(4, sizeof *k->ids);
	k->cpus = calloc(2, sizeof *k->cpus);
	CHECK(k->scratch && k->ids && k->cpus);
	for (unsigned c = 0; c < 2; c++) {
		k->ids[k->nids++] = (struct kid){ ID_SWITCH(c), TB_KTP_SWITCH };
		k->ids[k->nids++] = (struct kid){ ID_FORK(c), TB_KTP_FORK };
		struct kcpu *kc = &k->cpus[k->ncpu++];
		kc->cpu = (int)c;
		kc->fd = -1;
		kc->sfd = -1;
		kc->chain_next = -1;
		kc->nrings = 1;
		kc->pkt = calloc(1, TB_KPKT_SIZE);
		f->area[c] = calloc(1, AREA);
		CHECK(kc->pkt && f->area[c]);
		kc->rings[0].fd = -1;
		kc->rings[0].ring.data = f->area[c];
		kc->rings[0].ring.size = AREA;
		kc->rings[0].ring.head = &f->head[c];
		kc->rings[0].ring.tail = &f->tail[c];
	}
	return f;
}

static void fake_free(struct fake *f)
{
	for (unsigned c = 0; c < 2; c++)
		free(f->area[c]);
	tb_kernel_close(f->k);
	free(f);
}

/* Publishes a PERF_RECORD_SAMPLE (IDENTIFIER | TID | TIME | CPU | RAW) on CPU c. */
static void publish(struct fake *f, unsigned c, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time,
		    const uint8_t *raw, uint32_t raw_len)
{
	uint8_t r[256] = { 0 };
	uint32_t size = (44 + raw_len + 7) & ~7u;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, (uint16_t)size };
	memcpy(r, &h, 8);
	memcpy(r + 8, &id, 8);
	memcpy(r + 16, &pid, 4);
	memcpy(r + 20, &tid, 4);
	memcpy(r + 24, &time, 8);
	memcpy(r + 32, &c, 4);
	memcpy(r + 40, &raw_len, 4);
	memcpy(r + 44, raw, raw_len);
	for (uint32_t i = 0; i < size; i++)
		f->area[c][(f->head[c] + i) % AREA] = r[i];
	/* release: the drain's acquire load of the head sees the record's bytes */
	__atomic_store_n(&f->head[c], f->head[c] + size, __ATOMIC_RELEASE);
}

static void publish_switch(struct fake *f, unsigned c, uint64_t time, int32_t prev, int32_t next, uint32_t prev_tgid)
{
	uint8_t raw[64] = { 0 };
	memcpy(raw + 8, "prev", 5);
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 40, "next", 5);
	memcpy(raw + 56, &next, 4);
	publish(f, c, ID_SWITCH(c), prev_tgid, (uint32_t)prev, time, raw, sizeof raw);
}

static void publish_fork(struct fake *f, unsigned c, uint64_t time, int32_t parent, int32_t child)
{
	uint8_t raw[32] = { 0 };
	uint32_t ploc = (2u << 16) | 24u, cloc = (2u << 16) | 26u;
	memcpy(raw + 8, &ploc, 4);
	memcpy(raw + 12, &parent, 4);
	memcpy(raw + 16, &cloc, 4);
	memcpy(raw + 20, &child, 4);
	memcpy(raw + 24, "p\0c\0", 4);
	publish(f, c, ID_FORK(c), (uint32_t)parent, (uint32_t)parent, time, raw, 28);
}

static void test_a_late_fork_still_admits_its_child(void)
{
	struct fake *f = fake_new(0);
	struct tb_kernel *k = f->k;
	tb_kset_add(k, 500); /* the traced process */
	struct tb_kernel_stats st;
	uint64_t now = tb_mono_ns();

	/* pass 1: CPU 1 has the child's first switch (from a task of another
	 * process), CPU 0 not yet the fork that made it; and an old switch of
	 * the traced process itself */
	publish_switch(f, 1, now - 50000000, 500, 77, 500); /* 50 ms ago: the tree, well before the pass */
	publish_switch(f, 1, now - 1000000, 77, 501, 77);   /* 1 ms ago: 77 (another process) -> the child 501 */
	CHECK_RC(tb_kernel_pass(k, 0), 0);
	tb_kernel_stats(k, &st);
	CHECK(st.delivered == 1 && st.filtered == 0,
	      "the old switch written, the child's held back: delivered %llu, left out %llu",
	      (unsigned long long)st.delivered, (unsigned long long)st.filtered);

	/* the fork, stamped before the switch, published after the pass */
	publish_fork(f, 0, now - 2000000, 500, 501);
	CHECK_RC(tb_kernel_pass(k, 1), 0);
	tb_kernel_stats(k, &st);
	CHECK(st.delivered == 3 && st.filtered == 0,
	      "fork and the child's switch both kept: delivered %llu, left out %llu",
	      (unsigned long long)st.delivered, (unsigned long long)st.filtered);
	fake_free(f);
}

static void test_a_break_after_idle_is_a_missing_idle_exit(void)
{
	struct fake *f = fake_new(1);
	struct tb_kernel *k = f->k;
	uint64_t t = tb_mono_ns() - 40000000;
	publish_switch(f, 0, t + 1000, 7, 0, 7);    /* 7 -> idle */
	publish_switch(f, 0, t + 2000, 9, 7, 9);    /* 9 runs: idle -> 9 was never given */
	publish_switch(f, 0, t + 3000, 7, 8, 7);    /* chained */
	publish_switch(f, 0, t + 4000, 5, 7, 5);    /* a break, not after idle: not an idle exit */
	publish_switch(f, 1, t + 1500, 3, 0, 3);    /* CPU 1: 3 -> idle */
	publish_switch(f, 1, t + 2500, 0, 3, 0);    /* idle -> 3: chained */
	CHECK_RC(tb_kernel_pass(k, 1), 0);
	struct tb_kernel_stats st;
	tb_kernel_stats(k, &st);
	CHECK(st.delivered == 6, "delivered %llu", (unsigned long long)st.delivered);
	CHECK(st.idle_gaps == 1, "idle exits missing: %llu, want 1", (unsigned long long)st.idle_gaps);
	fake_free(f);
}

/* A switch whose every field says which it is: seq (prev_tid), its comms and state. */
static void publish_named_switch(struct fake *f, unsigned c, uint64_t time, int32_t seq)
{
	uint8_t raw[64] = { 0 };
	char comm[17];
	snprintf(comm, sizeof comm, "p%u-%011d", c, (int)seq); /* 15 bytes: the longest comm */
	memcpy(raw + 8, comm, 15);
	memcpy(raw + 24, &seq, 4);
	int32_t prio = 100 + seq % 40, next = seq + 1000000;
	int64_t state = (int64_t)seq * 3;
	memcpy(raw + 28, &prio, 4);
	memcpy(raw + 32, &state, 8);
	snprintf(comm, sizeof comm, "n%u-%011d", c, (int)seq);
	memcpy(raw + 40, comm, 15);
	memcpy(raw + 56, &next, 4);
	memcpy(raw + 60, &prio, 4);
	publish(f, c, ID_SWITCH(c), (uint32_t)seq, (uint32_t)seq, time, raw, sizeof raw);
}

#define HB_ROUNDS 40u
#define HB_PAST 20u   /* per CPU per round: stamped long before the pass (written by it) */
#define HB_FUTURE 30u /* ... and after it (held back by every pass up to the final one) */

struct hb_out {
	unsigned n[2];
	int32_t seq[2][HB_ROUNDS * (HB_PAST + HB_FUTURE)];
	int bad;
};

/* The sink: each packet's switches decoded, their fields checked against their seq. */
static void hb_sink(void *arg, unsigned i, const struct iovec *iov, int n, uint64_t events)
{
	struct hb_out *o = arg;
	(void)events;
	if (n < 2 || i > 1)
		return;
	struct tb_packet_header h;
	memcpy(&h, iov[0].iov_base, sizeof h);
	const uint8_t *p = iov[1].iov_base;
	uint64_t avail = h.content_size / 8 - TB_PACKET_HEADER_SIZE, clock = h.timestamp_begin;
	while (avail) {
		uint32_t id;
		uint32_t hs = tb_hdr_get(p, avail, &id, &clock);
		if (!hs || id != TB_KERNEL_ID_BASE + TB_KTP_SWITCH) {
			o->bad++;
			return;
		}
		p += hs;
		avail -= hs;
		const char *pc = (const char *)p;
		size_t pl = strnlen(pc, avail);
		int32_t seq, prio, next, nprio;
		int64_t state;
		if (pl + 1 + 16 > avail) {
			o->bad++;
			return;
		}
		memcpy(&seq, p + pl + 1, 4);
		memcpy(&prio, p + pl + 5, 4);
		memcpy(&state, p + pl + 9, 8);
		const char *nc = pc + pl + 17;
		size_t nl = strnlen(nc, avail - pl - 17);
		if (pl + 17 + nl + 1 + 8 > avail) {
			o->bad++;
			return;
		}
		memcpy(&next, nc + nl + 1, 4);
		memcpy(&nprio, nc + nl + 5, 4);
		char want_p[17], want_n[17];
		snprintf(want_p, sizeof want_p, "p%u-%011d", i, (int)seq);
		snprintf(want_n, sizeof want_n, "n%u-%011d", i, (int)seq);
		if (strcmp(pc, want_p) || strcmp(nc, want_n) || prio != 100 + seq % 40 - 100 || nprio != prio ||
		    state != (int64_t)seq * 3 || next != seq + 1000000 || o->n[i] >= HB_ROUNDS * (HB_PAST + HB_FUTURE))
			o->bad++;
		else
			o->seq[i][o->n[i]++] = seq;
		p += pl + 17 + nl + 9;
		avail -= pl + 17 + nl + 9;
	}
}

static void test_held_back_events_come_out_whole_and_in_order(void)
{
	struct fake *f = fake_new(1);
	struct tb_kernel *k = f->k;
	static struct hb_out o;
	uint8_t uuid[16] = { 0 };
	tb_kernel_set_output(k, -1, uuid, hb_sink, &o);
	uint64_t t0 = tb_mono_ns();
	for (unsigned r = 0; r < HB_ROUNDS; r++) {
		for (unsigned c = 0; c < 2; c++) {
			for (unsigned i = 0; i < HB_PAST; i++) /* a second ago, in order round after round */
				publish_named_switch(f, c, t0 - 1000000000ull + r * 1000u + i, (int32_t)(r * 100 + i));
			for (unsigned i = 0; i < HB_FUTURE; i++) /* a minute ahead: after every pass's cut */
				publish_named_switch(f, c, t0 + 60000000000ull + r * 1000u + i,
						     (int32_t)(r * 100 + 50 + i));
		}
		CHECK_RC(tb_kernel_pass(k, 0), 0);
		struct tb_kernel_stats st;
		tb_kernel_stats(k, &st);
		CHECK(st.delivered == 2ull * HB_PAST * (r + 1), "pass %u: delivered %llu", r,
		      (unsigned long long)st.delivered);
	}
	CHECK(k->cpus[0].arena_cap > 64 * 1024, "the held-back payloads outgrew the first arena (%zu bytes)",
	      k->cpus[0].arena_cap);
	CHECK_RC(tb_kernel_pass(k, 1), 0);
	CHECK(o.bad == 0, "%d events came out wrong", o.bad);
	for (unsigned c = 0; c < 2; c++) {
		CHECK(o.n[c] == HB_ROUNDS * (HB_PAST + HB_FUTURE), "CPU %u: %u events", c, o.n[c]);
		/* the old ones round by round, then every held-back one in time order */
		unsigned j = 0;
		for (unsigned r = 0; r < HB_ROUNDS; r++)
			for (unsigned i = 0; i < HB_PAST; i++, j++)
				CHECK(o.seq[c][j] == (int32_t)(r * 100 + i), "CPU %u event %u: %d", c, j, o.seq[c][j]);
		for (unsigned r = 0; r < HB_ROUNDS; r++)
			for (unsigned i = 0; i < HB_FUTURE; i++, j++)
				CHECK(o.seq[c][j] == (int32_t)(r * 100 + 50 + i), "CPU %u event %u: %d", c, j, o.seq[c][j]);
	}
	fake_free(f);
}

int main(void)
{
	test_held_back_events_come_out_whole_and_in_order();
	test_a_late_fork_still_admits_its_child();
	test_a_break_after_idle_is_a_missing_idle_exit();
	printf("ok\n");
	return 0;
}
