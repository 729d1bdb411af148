/* SPDX-License-Identifier: MIT */
/*
 * fuzz_targets.c - entry points of the reader's fuzzers (see fuzz_targets.h).
 *
 * Every buffer handed to the reader is a heap block of exactly the input's
 * size, so that AddressSanitizer reports a read even one byte past it
 * (mmapped files would hide that up to the page end).
 */
#define _GNU_SOURCE
#include "fuzz_targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "core/record.h"
#include "ctf/ctf.h"
#include "reader/reader_impl.h"
#include "reader/tsdl.h"

#define MAX_ITEMS 200000u /* per pass: keeps every input well under the fuzzer's timeout */

void tb_fuzz_registry(struct tb_event_desc *ev, uint32_t *n)
{
	static const struct {
		const char *name;
		unsigned nf;
		struct { uint32_t type; const char *name; } f[12];
	} k[TB_FUZZ_NEVENTS] = {
		{ "", 0, { { 0, "" } } }, /* id 0: tracebuf:thread, written by the CTF writer */
		{ "app:all", 12, { { TB_FT_U8, "a" }, { TB_FT_U16, "b" }, { TB_FT_U32, "c" }, { TB_FT_U64, "d" },
				   { TB_FT_I8, "e" }, { TB_FT_I16, "f" }, { TB_FT_I32, "g" }, { TB_FT_I64, "h" },
				   { TB_FT_F64, "x" }, { TB_FT_STRING, "s" }, { TB_FT_BYTES, "data" },
				   { TB_FT_U64SEQ, "vals" } } },
		{ "app:tick", 1, { { TB_FT_U32, "n" } } },
		{ "app:clash", 2, { { TB_FT_BYTES, "data" }, { TB_FT_U32, "_data_length" } } },
		{ "http:request_begin", 1, { { TB_FT_STRING, "url" } } },
		{ "http:request_end", 1, { { TB_FT_U32, "status" } } },
		{ "app:state", 3, { { TB_FT_ENUM, "st" }, { TB_FT_U8, "k" }, { TB_FT_ENUM, "dir" } } },
	};
	memset(ev, 0, TB_FUZZ_NEVENTS * sizeof *ev);
	for (uint32_t i = 0; i < TB_FUZZ_NEVENTS; i++) {
		snprintf(ev[i].name, sizeof ev[i].name, "%s", k[i].name);
		ev[i].id = i;
		ev[i].state = 1;
		ev[i].nfields = k[i].nf;
		for (unsigned f = 0; f < k[i].nf; f++) {
			ev[i].fields[f].type = k[i].f[f].type;
			snprintf(ev[i].fields[f].name, sizeof ev[i].fields[f].name, "%s", k[i].f[f].name);
			ev[i].fields[f].max_len = tb_ft_variable(k[i].f[f].type) ? 255 : 0;
		}
	}
	snprintf(ev[6].labels, sizeof ev[6].labels, "IDLE=0,RUNNING=1,BLOCKED=5,GONE=-1\nUP=16,DOWN=17\n");
	*n = TB_FUZZ_NEVENTS;
}

const char *tb_fuzz_metadata(size_t *len)
{
	static char *text;
	static size_t n;
	if (!text) {
		struct tb_event_desc ev[TB_FUZZ_NEVENTS];
		uint32_t nev;
		tb_fuzz_registry(ev, &nev);
		struct tb_ctf_env env[] = { { .key = "hostname", .str = "fuzz" },
					    { .key = "proc_100", .str = "comm=web exe=web attached_ns=1" } };
		struct tb_ctf_trace_info info = {
			.uuid = { 0x6b, 0x1e, 0x2f, 0x3a, 0x4b, 0x5c, 0x4d, 0x6e, 0x8f, 0x70, 0x81, 0x92, 0xa3, 0xb4, 0xc5, 0xd6 },
			.clock_freq = 1000000000, .clock_offset_ns = 1700000000ll * 1000000000ll,
			.events = ev, .nevents = nev, .env = env, .nenv = 2,
			/* both stream classes: a fuzzed stream_id of 1 reaches the
			 * vtid decoding (event context after each header) */
			.streams = (1u << TB_STREAM_PLAIN) | (1u << TB_STREAM_VTID),
		};
		FILE *f = open_memstream(&text, &n);
		if (!f || tb_ctf_metadata_write(f, &info) || fclose(f))
			abort();
	}
	*len = n;
	return text;
}

/* A hand-made valid stream: one packet, a thread record and three events. */
static const uint8_t *fixed_stream(size_t *len)
{
	static uint8_t pkt[512];
	static int done;
	if (!done) {
		size_t used = TB_PACKET_HEADER_SIZE;
		uint64_t ts = 1000, prev = 1000;
		uint32_t thr[2] = { 100, 101 }, n = 7;
		used += tb_hdr_put(pkt + used, TB_EVENT_ID_THREAD, ts, prev);
		memcpy(pkt + used, thr, 8);
		used += 8;
		for (uint32_t id = 1; id <= 5; id++) {
			ts += 10 + (id == 3 ? (1u << 27) : 0);
			used += tb_hdr_put(pkt + used, id, ts, prev);
			prev = ts;
			/* payloads of the fuzz registry: app:all (zeros, empty string and
			 * sequences), app:tick, app:clash (no bytes + u32), a string "\7", a u32 */
			static const uint8_t plen[6] = { 0, 47, 4, 8, 2, 4 };
			memset(pkt + used, 0, 64);
			memcpy(pkt + used + (id == 3 ? 4 : 0), &n, 4);
			used += plen[id];
		}
		struct tb_packet_header h = {
			.magic = TB_CTF_MAGIC, .timestamp_begin = 1000, .timestamp_end = ts,
			.content_size = used * 8, .packet_size = sizeof pkt * 8,
		};
		memcpy(h.uuid, "\x6b\x1e\x2f\x3a\x4b\x5c\x4d\x6e\x8f\x70\x81\x92\xa3\xb4\xc5\xd6", 16);
		memcpy(pkt, &h, sizeof h);
		done = 1;
	}
	*len = sizeof pkt;
	return pkt;
}

static void touch_event(const struct tb_rd_event *e)
{
	volatile uint64_t sink = 0;
	sink += tb_rd_ticks(e) + (uint64_t)tb_rd_ns(e) + tb_rd_cpu(e) + tb_rd_stream(e) + tb_rd_pid(e) +
		tb_rd_tid(e) + tb_rd_count(e) + tb_rd_ticks_end(e) + tb_rd_id(e) + strlen(tb_rd_name(e)) +
		strlen(tb_rd_channel(e));
	unsigned nf = tb_rd_nfields(e);
	for (unsigned i = 0; i < nf; i++) {
		sink += strlen(tb_rd_field_name(e, i));
		sink += (uint64_t)tb_rd_field_index(e, tb_rd_field_name(e, i));
		double d = tb_rd_f64(e, i);
		sink += tb_rd_u64(e, i) + (uint64_t)tb_rd_i64(e, i) + (d == d);
		size_t l;
		const char *s = tb_rd_str(e, i, &l);
		if (s)
			sink += l + (unsigned char)s[l];
		uint32_t cnt;
		const uint8_t *p = tb_rd_seq(e, i, &cnt);
		if (p) {
			for (uint32_t j = 0; j < cnt && j < 64; j++)
				sink += tb_rd_seq_u64(e, i, j);
			sink += tb_rd_seq_u64(e, i, cnt);
		}
	}
	sink += (uint64_t)tb_rd_field_type(e, nf);
	size_t plen;
	const uint8_t *pl = tb_rd_payload(e, &plen);
	if (pl && plen)
		sink += pl[plen - 1];
	for (int json = 0; json < 2; json++) {
		size_t need = tb_rd_format_fields(e, json, NULL, 0);
		char *buf = malloc(need ? need : 1);
		if (!buf)
			abort();
		if (tb_rd_format_fields(e, json, buf, need) != need)
			abort();
		/* a short buffer is never overrun */
		if (need > 3)
			tb_rd_format_fields(e, json, buf, need / 2);
		free(buf);
	}
	(void)sink;
}

static void read_all(struct tb_reader *r, int seek)
{
	const struct tb_rd_event *e;
	uint64_t n = 0, last = 0;
	while (n < MAX_ITEMS && tb_reader_next(r, &e) > 0) {
		if (tb_rd_ticks(e) < last)
			abort(); /* the merge must never go back */
		last = tb_rd_ticks(e);
		touch_event(e);
		n++;
	}
	for (unsigned s = 0; s < tb_reader_nstreams(r); s++) {
		struct tb_rd_packet p;
		size_t np = tb_reader_npackets(r, s);
		for (size_t i = 0; i < np; i++)
			if (tb_reader_packet(r, s, i, &p))
				abort();
		(void)tb_reader_stream_cpu(r, s);
		(void)tb_reader_stream_bytes(r, s);
	}
	for (unsigned i = 0; i < tb_reader_nenv(r); i++)
		if (!tb_reader_env_key(r, i) || !tb_reader_env_value(r, i))
			abort();
	for (uint64_t i = 0; i < tb_reader_ndiags(r); i++)
		if (i < 1000 && (!tb_reader_diag(r, i) || !tb_reader_diag(r, i)->what))
			abort();
	uint64_t b, en;
	tb_reader_time_range(r, &b, &en);
	(void)tb_reader_ticks_to_ns(r, en);
	(void)tb_reader_ns_to_ticks(r, tb_reader_ticks_to_ns(r, b));
	for (uint32_t id = 0; id < tb_reader_nclass_ids(r) && id < 64; id++)
		(void)tb_reader_class_name(r, id);
	if (seek) {
		tb_reader_seek_ticks(r, b + (en - b) / 2);
		n = 0;
		while (n < MAX_ITEMS && tb_reader_next(r, &e) > 0) {
			touch_event(e);
			n++;
		}
		tb_reader_seek_ns(r, INT64_MIN);
		tb_reader_seek_ticks(r, UINT64_MAX);
		if (tb_reader_next(r, &e) > 0)
			touch_event(e);
	}
}

int tb_fuzz_tsdl(const uint8_t *data, size_t size)
{
	struct tb_tsdl_meta m;
	int line;
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	if (tb_tsdl_parse(text, size, &m, &line) == 0) {
		/* what the reader relies on */
		if (!m.nclasses || !m.clock_freq || !m.by_id)
			abort();
		for (uint32_t i = 0; i < m.nclasses; i++)
			if (tb_tsdl_class_at(&m, m.classes[i].stream_id, m.classes[i].id) != (int32_t)i ||
			    !((m.streams >> m.classes[i].stream_id) & 1))
				abort();
		for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++)
			if (m.stream_ctx[sid] != 0 && m.stream_ctx[sid] != TB_VTID_SIZE)
				abort();
		tb_tsdl_free(&m);
		size_t slen;
		const uint8_t *st = fixed_stream(&slen);
		uint8_t *copy = malloc(slen);
		if (!copy)
			abort();
		memcpy(copy, st, slen);
		struct tb_rd_mem_stream ms = { "chan_0", copy, slen };
		struct tb_reader *r;
		if (tb_reader_open_mem("fuzz", text, size, &ms, 1, NULL, &r) == 0) {
			read_all(r, 1);
			tb_reader_close(r);
		}
		free(copy);
	}
	free(text);
	return 0;
}

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int tb_fuzz_stream(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned flags = data[0], n = data[1] % 3u + 1;
	data += 2;
	size -= 2;
	struct tb_rd_mem_stream ms[3];
	uint8_t *bufs[3] = { NULL, NULL, NULL };
	static const char *names[3] = { "chan_0", "chan_1", "aux_0" };
	for (unsigned i = 0; i < n; i++) {
		size_t len = size;
		if (i + 1 < n) {
			if (size < 4) {
				len = 0;
			} else {
				len = ld32(data);
				data += 4;
				size -= 4;
				if (len > size)
					len = size;
			}
		}
		bufs[i] = malloc(len ? len : 1);
		if (!bufs[i])
			abort();
		memcpy(bufs[i], data, len);
		ms[i].name = names[i];
		ms[i].data = bufs[i];
		ms[i].size = len;
		data += len;
		size -= len;
	}
	size_t mlen;
	const char *meta = tb_fuzz_metadata(&mlen);
	struct tb_reader_opts o = { .size = sizeof o, .flags = flags & 1 ? TB_READER_THREAD_EVENTS : 0 };
	struct tb_reader *r;
	if (tb_reader_open_mem("fuzz", meta, mlen, ms, n, &o, &r) == 0) {
		read_all(r, flags & 2);
		tb_reader_close(r);
	}
	for (unsigned i = 0; i < n; i++)
		free(bufs[i]);
	return 0;
}
