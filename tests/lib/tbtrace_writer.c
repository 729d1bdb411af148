/* SPDX-License-Identifier: MIT */
/* tbtrace_writer.c - synthetic CTF traces for tests (see tbtrace.h). */
#define _GNU_SOURCE
#include "tbtrace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/record.h"
#include "ctf/ctf.h"

struct tbtrace_stream {
	struct tbtrace *t;
	struct tbtrace_stream *next;
	FILE *f;
	uint32_t chan, cpu;
	uint8_t *pkt;      /* packet being filled */
	uint64_t used;     /* bytes used, 0 = no packet open */
	uint64_t ts_begin, last_ts;
	uint64_t seq, discarded;
	uint32_t att_pid, att_tid; /* tbtrace_set_thread() */
	uint32_t cur_pid, cur_tid; /* attribution in effect in the open packet */
};

struct tbtrace {
	char dir[4096];
	struct tbtrace_opts o;
	struct tbtrace_stream *streams;
};

static void die(const char *what)
{
	perror(what);
	abort();
}

struct tbtrace *tbtrace_open(const char *dir, const struct tbtrace_opts *o)
{
	struct tbtrace *t = calloc(1, sizeof *t);
	static const uint8_t zero[16];
	snprintf(t->dir, sizeof t->dir, "%s", dir);
	t->o = *o;
	if (!memcmp(t->o.uuid, zero, 16))
		memcpy(t->o.uuid, "\x6b\x1e\x2f\x3a\x4b\x5c\x4d\x6e\x8f\x70\x81\x92\xa3\xb4\xc5\xd6", 16);
	if (!t->o.clock_freq)
		t->o.clock_freq = 1000000000;
	if (!t->o.clock_offset_ns)
		t->o.clock_offset_ns = 1700000000ll * 1000000000ll;
	if (!t->o.packet_size)
		t->o.packet_size = 4096;
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	char p[4200];
	snprintf(p, sizeof p, "%s/metadata", dir);
	FILE *f = fopen(p, "w");
	if (!f)
		die(p);
	struct tb_ctf_env env[3 + 64] = {
		{ .key = "hostname", .str = "tbtest" },
		{ .key = "tracer_name", .str = "tracebuf" },
		{ .key = "tracer_major", .num = 0 },
	};
	uint32_t nenv = 3;
	for (uint32_t i = 0; i < o->nenv && nenv < sizeof env / sizeof env[0]; i++, nenv++) {
		env[nenv].key = o->env[i].key;
		env[nenv].str = o->env[i].str;
		env[nenv].num = o->env[i].num;
	}
	struct tb_ctf_trace_info info = {
		.clock_freq = t->o.clock_freq, .clock_offset_ns = t->o.clock_offset_ns,
		.events = o->events, .nevents = o->nevents, .env = env, .nenv = nenv,
	};
	memcpy(info.uuid, t->o.uuid, 16);
	if (tb_ctf_metadata_write(f, &info) || fclose(f))
		die("tb_ctf_metadata_write");
	return t;
}

struct tbtrace_stream *tbtrace_stream(struct tbtrace *t, const char *channel, uint32_t chan, uint32_t cpu)
{
	struct tbtrace_stream *s = calloc(1, sizeof *s);
	char p[4200];
	snprintf(p, sizeof p, "%s/%s_%u", t->dir, channel, cpu);
	s->f = fopen(p, "w");
	if (!s->f)
		die(p);
	s->t = t;
	s->chan = chan;
	s->cpu = cpu;
	s->pkt = calloc(1, t->o.packet_size);
	s->next = t->streams;
	t->streams = s;
	return s;
}

void tbtrace_packet_close(struct tbtrace_stream *s, uint64_t ts_end)
{
	if (!s->used)
		return;
	struct tb_packet_header h = {
		.magic = TB_CTF_MAGIC, .stream_id = 0,
		.stream_instance_id = ((uint64_t)s->chan << 32) | s->cpu,
		.timestamp_begin = s->ts_begin,
		.timestamp_end = ts_end > s->last_ts ? ts_end : s->last_ts,
		.content_size = s->used * 8, .packet_size = s->t->o.packet_size * 8,
		.packet_seq_num = s->seq++, .events_discarded = s->discarded, .cpu_id = s->cpu,
		.lost = { [TB_LOSS_FULL] = s->discarded },
	};
	memcpy(h.uuid, s->t->o.uuid, 16);
	memcpy(s->pkt, &h, sizeof h);
	memset(s->pkt + s->used, 0, s->t->o.packet_size - s->used);
	if (fwrite(s->pkt, 1, s->t->o.packet_size, s->f) != s->t->o.packet_size)
		die("fwrite");
	s->used = 0;
	s->cur_pid = s->cur_tid = 0; /* attribution does not cross packets */
}

static void put_record(struct tbtrace_stream *s, uint32_t id, uint64_t ts, const void *payload, size_t len)
{
	uint64_t cap = s->t->o.packet_size;
	if (s->used && s->used + tb_hdr_size(id, ts, s->last_ts) + len > cap)
		tbtrace_packet_close(s, s->last_ts);
	if (!s->used) {
		if (TB_PACKET_HEADER_SIZE + TB_EXTENDED_HDR_SIZE + len > cap) {
			fprintf(stderr, "tbtrace: record of %zu bytes larger than a packet\n", len);
			abort();
		}
		s->used = TB_PACKET_HEADER_SIZE;
		s->ts_begin = ts;
		s->last_ts = ts;
	}
	s->used += tb_hdr_put(s->pkt + s->used, id, ts, s->last_ts);
	memcpy(s->pkt + s->used, payload, len);
	s->used += len;
	s->last_ts = ts;
}

void tbtrace_event(struct tbtrace_stream *s, uint32_t id, uint64_t ts, const void *payload, size_t len)
{
	if (s->att_tid && id != TB_EVENT_ID_THREAD) {
		/* the thread record and the event it attributes go into one packet */
		if (s->used && s->used + 2 * TB_EXTENDED_HDR_SIZE + TB_THREAD_PAYLOAD_SIZE + len > s->t->o.packet_size)
			tbtrace_packet_close(s, s->last_ts);
		if (s->cur_pid != s->att_pid || s->cur_tid != s->att_tid) {
			uint32_t p[2] = { s->att_pid, s->att_tid };
			put_record(s, TB_EVENT_ID_THREAD, ts, p, 8);
			s->cur_pid = s->att_pid;
			s->cur_tid = s->att_tid;
		}
	}
	put_record(s, id, ts, payload, len);
}

void tbtrace_set_thread(struct tbtrace_stream *s, uint32_t pid, uint32_t tid)
{
	s->att_pid = pid;
	s->att_tid = tid;
}

void tbtrace_thread(struct tbtrace_stream *s, uint64_t ts, uint32_t pid, uint32_t tid)
{
	uint32_t p[2] = { pid, tid };
	/* keep room for the record it attributes (attribution resets at each packet) */
	if (s->used && s->used + 2 * TB_EXTENDED_HDR_SIZE + 8 + 64 > s->t->o.packet_size)
		tbtrace_packet_close(s, s->last_ts);
	put_record(s, TB_EVENT_ID_THREAD, ts, p, 8);
	s->cur_pid = pid;
	s->cur_tid = tid;
}

void tbtrace_discard(struct tbtrace_stream *s, uint64_t n)
{
	s->discarded += n;
}

void tbtrace_skip_seq(struct tbtrace_stream *s, uint64_t n)
{
	tbtrace_packet_close(s, 0);
	s->seq += n;
}

void tbtrace_close(struct tbtrace *t)
{
	while (t->streams) {
		struct tbtrace_stream *s = t->streams;
		tbtrace_packet_close(s, 0);
		if (fclose(s->f))
			die("fclose");
		t->streams = s->next;
		free(s->pkt);
		free(s);
	}
	free(t);
}

void tbtrace_desc(struct tb_event_desc *d, uint32_t id, const char *name, int nfields, ...)
{
	static const char *types[] = { "", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
				       "f64", "str", "bytes", "u64s", "bool", "f32", "enum" };
	va_list ap;
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", name);
	d->id = id;
	d->state = 1;
	d->nfields = (uint32_t)nfields;
	va_start(ap, nfields);
	for (int i = 0; i < nfields; i++) {
		const char *spec = va_arg(ap, const char *);
		const char *colon = strchr(spec, ':');
		size_t tl = (size_t)(colon - spec);
		for (uint32_t k = 1; k < sizeof types / sizeof types[0]; k++)
			if (strlen(types[k]) == tl && !strncmp(types[k], spec, tl))
				d->fields[i].type = k;
		snprintf(d->fields[i].name, sizeof d->fields[i].name, "%s", colon + 1);
		d->fields[i].max_len = tb_ft_variable(d->fields[i].type) ? 255 : 0;
	}
	va_end(ap);
}

static void put(struct tbtrace_buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof b->b)
		abort();
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

void tbb_u8(struct tbtrace_buf *b, uint8_t v) { put(b, &v, 1); }
void tbb_u16(struct tbtrace_buf *b, uint16_t v) { put(b, &v, 2); }
void tbb_u32(struct tbtrace_buf *b, uint32_t v) { put(b, &v, 4); }
void tbb_u64(struct tbtrace_buf *b, uint64_t v) { put(b, &v, 8); }
void tbb_f64(struct tbtrace_buf *b, double v) { put(b, &v, 8); }
void tbb_str(struct tbtrace_buf *b, const char *s) { put(b, s, strlen(s) + 1); }
void tbb_bytes(struct tbtrace_buf *b, const void *p, uint32_t n) { tbb_u32(b, n); put(b, p, n); }
void tbb_u64s(struct tbtrace_buf *b, const uint64_t *p, uint32_t n) { tbb_u32(b, n); put(b, p, (size_t)n * 8); }
