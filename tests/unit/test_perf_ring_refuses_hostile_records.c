/* SPDX-License-Identifier: MIT */
/*
 * Nothing in a perf ring is trusted (src/kernel/perf_ring.c, tracepoints.c):
 * fabricated rings hand the drain well-formed records (one wrapping around
 * the end of the area, copied whole) and hostile ones: a head behind the
 * tail or further ahead than the area, a record of size 0, of an unaligned
 * size, larger than what was published, a torn header, a sample whose raw
 * length points past its record, a PERF_RECORD_LOST cut short.  Each is
 * counted as invalid and nothing is read outside the area (the area is a
 * heap block of exactly its size: the ASan build catches any over-read).
 * The tracepoint decoder likewise refuses fields and __data_loc strings
 * outside the raw record, and the format parser reads a real format file.
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "kernel/perf_ring.h"
#include "tbtest.h"

#define SZ 4096u

struct seen {
	unsigned n;
	uint32_t type[64];
	uint32_t len[64];
	uint8_t first[64][64];
};

static void on_rec(void *arg, uint32_t type, uint16_t misc, const uint8_t *rec, uint32_t len)
{
	(void)misc;
	struct seen *s = arg;
	if (s->n < 64) {
		s->type[s->n] = type;
		s->len[s->n] = len;
		memcpy(s->first[s->n], rec, len < 64 ? len : 64);
		/* touch every byte: an over-long record would be read past the area here */
		volatile uint8_t x = 0;
		for (uint32_t i = 0; i < len; i++)
			x ^= rec[i];
		(void)x;
	}
	s->n++;
}

/* Writes bytes at free-running position pos of the area, wrapping. */
static void put(uint8_t *data, uint64_t pos, const void *src, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		data[(pos + i) % SZ] = ((const uint8_t *)src)[i];
}

/* A sample record of `size` bytes (a multiple of 8), raw_len as given. */
static uint32_t put_sample(uint8_t *data, uint64_t pos, uint16_t size, uint32_t raw_len, uint8_t fill)
{
	uint8_t r[512];
	memset(r, fill, sizeof r);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, size };
	memcpy(r, &h, 8);
	memcpy(r + 40, &raw_len, 4);
	put(data, pos, r, size);
	return size;
}

struct fake {
	uint8_t *data;
	uint64_t head, tail;
	struct tb_perf_ring ring;
};

static void fake_init(struct fake *f)
{
	f->data = calloc(1, SZ);
	CHECK(f->data != NULL);
	f->head = f->tail = 0;
	f->ring.data = f->data;
	f->ring.size = SZ;
	f->ring.head = &f->head;
	f->ring.tail = &f->tail;
}

static void test_wrapping_record_is_whole(void)
{
	struct fake f;
	fake_init(&f);
	uint8_t *scratch = malloc(TB_PERF_REC_MAX);
	uint64_t start = SZ - 24; /* a 64-byte record crosses the end */
	f.tail = start;
	uint64_t p = start;
	p += put_sample(f.data, p, 64, 8, 0x11);
	p += put_sample(f.data, p, 48, 0, 0x22);
	f.head = p;
	struct seen s = { 0 };
	struct tb_perf_ring_stats st = { 0 };
	CHECK(tb_perf_ring_drain(&f.ring, scratch, on_rec, &s, &st) == 2);
	CHECK(s.n == 2 && s.len[0] == 64 && s.len[1] == 48 && st.invalid == 0);
	CHECK(s.first[0][0] == PERF_RECORD_SAMPLE && s.first[0][60] == 0x11, "the wrapped record is whole");
	CHECK(f.tail == p, "the tail is released to the head");
	struct tb_perf_sample smp;
	CHECK(tb_perf_sample_parse(s.first[0], s.len[0], &smp) == 0 && smp.raw_len == 8);
	/* nothing new: nothing handed over */
	CHECK(tb_perf_ring_drain(&f.ring, scratch, on_rec, &s, &st) == 0 && s.n == 2);
	free(scratch);
	free(f.data);
}

/* A ring whose head is h after tail t: records handed over, invalid count. */
static void hostile(const char *what, uint64_t t, uint64_t h, uint16_t size0, unsigned want_recs, unsigned want_invalid)
{
	struct fake f;
	fake_init(&f);
	uint8_t *scratch = malloc(TB_PERF_REC_MAX);
	f.tail = t;
	uint64_t p = t;
	p += put_sample(f.data, p, 32, 0, 0x33); /* one good record first */
	struct perf_event_header bad = { PERF_RECORD_SAMPLE, 0, size0 };
	put(f.data, p, &bad, 8);
	f.head = h;
	struct seen s = { 0 };
	struct tb_perf_ring_stats st = { 0 };
	tb_perf_ring_drain(&f.ring, scratch, on_rec, &s, &st);
	CHECK(s.n == want_recs && st.invalid == want_invalid, "%s: %u records, %llu invalid (wanted %u, %u)", what,
	      s.n, (unsigned long long)st.invalid, want_recs, want_invalid);
	CHECK(f.tail == h, "%s: the tail goes to the head, whatever the ring held", what);
	free(scratch);
	free(f.data);
}

static void test_hostile_positions_and_sizes(void)
{
	hostile("size 0", 0, 32 + 64, 0, 1, 1);
	hostile("size not a multiple of 8", 0, 32 + 64, 20, 1, 1);
	hostile("size past the head (torn)", 0, 32 + 16, 64, 1, 1);
	hostile("header torn", 0, 32 + 4, 64, 1, 1);
	hostile("size 65528 in a 4 KiB ring", 0, 32 + 64, 65528, 1, 1);
	hostile("head more than the area ahead", 0, SZ + 8, 32, 0, 1);
	hostile("head behind the tail", 4096, 64, 32, 0, 1);
	hostile("wrap of the positions", UINT64_MAX - 15, UINT64_MAX - 15 + 40, 8, 2, 0);
}

static void test_samples_and_lost_bounds(void)
{
	uint8_t r[64] = { 0 };
	struct tb_perf_sample s;
	uint32_t raw = 20;
	memcpy(r + 40, &raw, 4);
	CHECK(tb_perf_sample_parse(r, 64, &s) == 0 && s.raw_len == 20 && s.raw == r + 44);
	CHECK(tb_perf_sample_parse(r, 63, &s) < 0, "20 bytes after 44 do not fit in 63");
	raw = 0xffffffffu;
	memcpy(r + 40, &raw, 4);
	CHECK(tb_perf_sample_parse(r, 64, &s) < 0, "a raw length of 4 GiB");
	CHECK(tb_perf_sample_parse(r, 43, &s) < 0, "shorter than the fixed part");
	uint64_t lost = 0, n = 77;
	memcpy(r + 16, &n, 8);
	CHECK(tb_perf_lost_parse(r, 24, &lost) == 0 && lost == 77);
	CHECK(tb_perf_lost_parse(r, 23, &lost) < 0);
}

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
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s\", REC->prev_comm\n";

static const char exec_fmt[] =
	"name: sched_process_exec\nID: 365\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n";

static const char sys_enter_fmt[] =
	"name: sys_enter\nID: 443\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n";

/* raw_syscalls:sys_enter: id, the call's name, the six words as a sequence,
 * the current task; a cut record, an array of another size, an unknown
 * number are each handled */
static void test_syscall_decoder_bounds(void)
{
	struct tb_tp_format f;
	CHECK(tb_tp_format_parse(sys_enter_fmt, &f) == 0 && f.n == 4 && f.f[3].size == 48);
	uint8_t raw[64] = { 0 };
	int64_t nr = 39; /* getpid on x86_64 */
	memcpy(raw + 8, &nr, 8);
	for (unsigned i = 0; i < 6; i++) {
		uint64_t a = 100 + i;
		memcpy(raw + 16 + 8 * i, &a, 8);
	}
	struct tb_kev ev;
	CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, raw, 64, 300, 301, &ev) == 0);
	int64_t id;
	memcpy(&id, ev.payload, 8);
	const char *name = (const char *)ev.payload + 8;
	size_t nl = strlen(name) + 1;
#if defined(__x86_64__)
	CHECK(!strcmp(name, "getpid"), "the name of 39: %s", name);
#endif
	uint32_t cnt;
	uint64_t a5;
	int32_t tid, pid;
	memcpy(&cnt, ev.payload + 8 + nl, 4);
	memcpy(&a5, ev.payload + 8 + nl + 4 + 40, 8);
	memcpy(&tid, ev.payload + 8 + nl + 4 + 48, 4);
	memcpy(&pid, ev.payload + 8 + nl + 4 + 48 + 4, 4);
	CHECK(id == 39 && cnt == 6 && a5 == 105 && tid == 301 && pid == 300, "id %lld cnt %u a5 %llu tid %d pid %d",
	      (long long)id, cnt, (unsigned long long)a5, tid, pid);
	CHECK(ev.len == 8 + nl + 4 + 48 + 4 + 4 && ev.tid_a == -1 && ev.tid_b == -1, "len %u", ev.len);
	for (uint32_t cut = 0; cut < 64; cut++)
		CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, raw, cut, 1, 1, &ev) < 0, "a record cut at %u is refused", cut);
	nr = 1000000; /* no such call: no name, the number stays */
	memcpy(raw + 8, &nr, 8);
	CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, raw, 64, 1, 1, &ev) == 0 && ev.payload[8] == 0);
	nr = -1; /* what the kernel writes for an invalid number */
	memcpy(raw + 8, &nr, 8);
	CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, raw, 64, 1, 1, &ev) == 0 && ev.payload[8] == 0);
	/* an array that is not whole words, or longer than six */
	f.f[3].size = 44;
	CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, raw, 64, 1, 1, &ev) < 0, "args of 44 bytes");
	uint8_t big[128] = { 0 };
	f.f[3].size = 56;
	CHECK(tb_ktp_decode(TB_KTP_SYS_ENTER, &f, big, 128, 1, 1, &ev) < 0, "args of 7 words");
}

static void test_tracepoint_decoder_bounds(void)
{
	struct tb_tp_format f;
	CHECK(tb_tp_format_parse(switch_fmt, &f) == 0 && f.id == 372 && f.n == 11);
	CHECK(!strcmp(f.f[4].name, "prev_comm") && f.f[4].off == 8 && f.f[4].size == 16 && !f.f[4].data_loc);
	uint8_t raw[64] = { 0 };
	memcpy(raw + 8, "worker\0", 7);
	int32_t prev = 41, next = 42, prio = 120;
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 28, &prio, 4);
	memcpy(raw + 40, "0123456789abcdefXXXX", 16); /* a comm of 16 bytes, no NUL */
	memcpy(raw + 56, &next, 4);
	struct tb_kev ev;
	CHECK(tb_ktp_decode(TB_KTP_SWITCH, &f, raw, 64, 7, 7, &ev) == 0);
	CHECK(ev.tid_a == 41 && ev.tid_b == 42);
	CHECK(!memcmp(ev.payload, "worker\0", 7), "prev_comm");
	int32_t p;
	memcpy(&p, ev.payload + 11, 4);
	CHECK(p == 20, "LTTng's prio: the kernel's minus 100 (got %d)", p);
	/* prev_comm 7 + tid 4 + prio 4 + state 8 + next_comm 17 (cut at 16, NUL added) + 4 + 4 */
	CHECK(ev.len == 7 + 4 + 4 + 8 + 17 + 4 + 4, "len %u", ev.len);
	for (uint32_t cut = 0; cut < 64; cut++)
		CHECK(tb_ktp_decode(TB_KTP_SWITCH, &f, raw, cut, 7, 7, &ev) < 0, "a record cut at %u is refused", cut);
	/* bytes outside printable ASCII are written as '?', up to the NUL */
	memcpy(raw + 8, "a\001b\377c~ \0zz", 10);
	CHECK(tb_ktp_decode(TB_KTP_SWITCH, &f, raw, 64, 7, 7, &ev) == 0);
	CHECK(!strcmp((const char *)ev.payload, "a?b?c~ "), "prev_comm %s", (const char *)ev.payload);

	CHECK(tb_tp_format_parse(exec_fmt, &f) == 0 && f.f[2].data_loc);
	uint8_t r2[40] = { 0 };
	uint32_t loc = (6u << 16) | 20u;
	memcpy(r2 + 8, &loc, 4);
	memcpy(r2 + 20, "/bin/\0", 6);
	CHECK(tb_ktp_decode(TB_KTP_EXEC, &f, r2, 40, 1, 1, &ev) == 0 && !strcmp((char *)ev.payload, "/bin/"));
	/* a __data_loc string of 300 bytes without a NUL: its first 255 */
	uint8_t r3[320];
	memset(r3, 'x', sizeof r3);
	memset(r3, 0, 20);
	loc = (300u << 16) | 20u;
	memcpy(r3 + 8, &loc, 4);
	CHECK(tb_ktp_decode(TB_KTP_EXEC, &f, r3, 320, 1, 1, &ev) == 0 && strlen((char *)ev.payload) == 255,
	      "a filename cut at 255 bytes: %zu", strlen((char *)ev.payload));
	loc = (30u << 16) | 20u; /* 30 bytes from 20: past the 40-byte record */
	memcpy(r2 + 8, &loc, 4);
	CHECK(tb_ktp_decode(TB_KTP_EXEC, &f, r2, 40, 1, 1, &ev) < 0, "a __data_loc past the record");
	loc = (2u << 16) | 0xfff0u;
	memcpy(r2 + 8, &loc, 4);
	CHECK(tb_ktp_decode(TB_KTP_EXEC, &f, r2, 40, 1, 1, &ev) < 0, "a __data_loc offset past the record");

	/* formats that lie */
	CHECK(tb_tp_format_parse("ID: 5\n", &f) < 0, "no field");
	CHECK(tb_tp_format_parse("field:int x;\toffset:0;\tsize:4;\tsigned:1;\n", &f) < 0, "no id");
	CHECK(tb_tp_format_parse("ID: 5\nfield:int x;\toffset:99999;\tsize:4;\tsigned:1;\n", &f) < 0, "offset");
	CHECK(tb_tp_format_parse("ID: 5\nfield:__data_loc char[] s;\toffset:0;\tsize:8;\tsigned:0;\n", &f) < 0);
}

int main(void)
{
	test_wrapping_record_is_whole();
	test_syscall_decoder_bounds();
	test_hostile_positions_and_sizes();
	test_samples_and_lost_bounds();
	test_tracepoint_decoder_bounds();
	printf("ok\n");
	return 0;
}
