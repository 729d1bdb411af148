/* SPDX-License-Identifier: MIT */
/*
 * test_ctf_metadata_roundtrip - the metadata tb_ctf_metadata_write() emits is
 * parsed back by the reader's TSDL parser into exactly the registry it came
 * from: names, ids, field names and types, sequence lengths, clock offset,
 * env; enum fields with their labels (format 3); invalid registry entries
 * (bad labels too) become field-less tracebuf:invalid_<id>.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/session.h>

#include "ctf/ctf.h"
#include "reader/tsdl.h"
#include "tbtest.h"
#include "tbtrace.h"

static char *write_meta(const struct tb_ctf_trace_info *info, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	CHECK(f, "%s", "-");
	CHECK_RC(tb_ctf_metadata_write(f, info), 0);
	fclose(f);
	return buf;
}

static const struct tb_tsdl_class *cls(const struct tb_tsdl_meta *m, uint32_t id)
{
	CHECK(id <= m->max_id && m->by_id[id] >= 0, "class %u missing", id);
	return &m->classes[m->by_id[id]];
}

int main(void)
{
	struct tb_event_desc ev[10];
	memset(ev, 0, sizeof ev);
	tbtrace_desc(&ev[1], 1, "app:all", 12, "u8:a", "u16:b", "u32:c", "u64:d", "i8:e", "i16:f", "i32:g",
		     "i64:h", "f64:x", "str:s", "bytes:data", "u64s:vals");
	/* a field named like the generated length field must not collide */
	tbtrace_desc(&ev[2], 2, "app:clash", 2, "bytes:data", "u32:_data_length");
	tbtrace_desc(&ev[3], 3, "bad name!", 0);              /* charset */
	tbtrace_desc(&ev[4], 4, "app:badtype", 1, "u8:x");
	ev[4].fields[0].type = 99;                             /* type */
	tbtrace_desc(&ev[5], 5, "app:unterminated", 0);
	memset(ev[5].name, 'a', sizeof ev[5].name);            /* no NUL in bounds */
	tbtrace_desc(&ev[6], 6, "app:toomany", 0);
	ev[6].nfields = 1000;                                  /* count */
	tbtrace_desc(&ev[7], 7, "app:keyword_fields", 3, "u32:integer", "str:struct", "u8:_under");
	tbtrace_desc(&ev[8], 8, "app:enums", 3, "enum:st", "u8:x", "enum:dir");
	strcpy(ev[8].labels, "IDLE=0,RUNNING=1,BLOCKED=5,GONE=-1\nUP=16,DOWN=17\n");
	tbtrace_desc(&ev[9], 9, "app:badlabels", 1, "enum:st");
	strcpy(ev[9].labels, "IDLE=0,IDLE=1\n"); /* a label twice */

	struct tb_ctf_env env[] = {
		{ .key = "hostname", .str = "host \"q\" \\ \n" },
		{ .key = "neg", .num = -42 },
	};
	struct tb_ctf_trace_info info = {
		.uuid = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
		.clock_freq = 2400000000ull,
		.clock_offset_ns = -1500000001, /* negative: offset_s floors */
		.events = ev, .nevents = 10, .env = env, .nenv = 2,
	};
	size_t len;
	char *text = write_meta(&info, &len);
	CHECK(!strncmp(text, "/* CTF 1.8 */\n", 14), "first line: %.20s", text);

	struct tb_tsdl_meta m;
	int line = 0;
	int rc = tb_tsdl_parse(text, len, &m, &line);
	CHECK(rc == 0, "parse: %s\n%s", tb_errmsg(), text);
	CHECK(!memcmp(m.uuid, info.uuid, 16), "%s", "-");
	CHECK_EQ_U64(m.clock_freq, 2400000000ull);
	CHECK(m.clock_offset_s == -2, "offset_s %lld", (long long)m.clock_offset_s);
	/* -1500000001 ns = -2 s + 499999999 ns = 1199999997.6 cycles -> rounded */
	CHECK_EQ_U64(m.clock_offset, 1199999998ull);
	CHECK(!strcmp(m.clock_name, "monotonic"), "%s", "-");
	/* the packet layout the reader takes from the text is core/format.h's */
	CHECK_EQ_U64(m.pkt_hdr_size, TB_PACKET_HEADER_SIZE);
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		CHECK(m.loss_off[k] == TB_PKT_OFF_LOST + 8 * k, "cause %u at %u", k, m.loss_off[k]);
	CHECK(m.off.ts_begin == TB_PKT_OFF_TS_BEGIN && m.off.ts_end == TB_PKT_OFF_TS_END &&
	      m.off.content == TB_PKT_OFF_CONTENT && m.off.packet == TB_PKT_OFF_PACKET && m.off.seq == TB_PKT_OFF_SEQ &&
	      m.off.discarded == TB_PKT_OFF_DISCARDED && m.off.cpu == TB_PKT_OFF_CPU && m.off.cpu_bytes == 8,
	      "context offsets %u %u %u %u %u %u %u", m.off.ts_begin, m.off.ts_end, m.off.content, m.off.packet,
	      m.off.seq, m.off.discarded, m.off.cpu);
	/* quotes and backslashes come back as written; a control character
	 * (the newline) as \x0a: the reader never hands one out (an untrusted
	 * trace must not reach a terminal raw) */
	CHECK(m.nenv == 2 && !strcmp(m.env[0].str, "host \"q\" \\ \\x0a") && m.env[1].num == -42,
	      "env %s", m.env[0].str);

	const struct tb_tsdl_class *k = cls(&m, 0);
	CHECK(!strcmp(k->name, "tracebuf:thread") && k->nfields == 2 && k->fixed_size == 8, "%s", "-");
	k = cls(&m, 1);
	CHECK(!strcmp(k->name, "app:all"), "%s", "-");
	CHECK_EQ_U64(k->nfields, 14); /* 12 + two length fields */
	static const uint8_t want[] = { TB_FT_U8, TB_FT_U16, TB_FT_U32, TB_FT_U64, TB_FT_I8, TB_FT_I16,
					TB_FT_I32, TB_FT_I64, TB_FT_F64, TB_FT_STRING, TB_FT_U32, TB_FT_BYTES,
					TB_FT_U32, TB_FT_U64SEQ };
	static const char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h", "x", "s", "_data_length", "data",
				       "_vals_length", "vals" };
	for (unsigned i = 0; i < 14; i++) {
		CHECK(k->fields[i].type == want[i], "field %u type %u", i, k->fields[i].type);
		CHECK(!strcmp(k->fields[i].name, names[i]), "field %u name %s", i, k->fields[i].name);
	}
	CHECK(k->fields[10].is_length && k->fields[11].length_of == 10 && k->fields[13].length_of == 12, "%s", "-");
	CHECK(k->fixed_size == -1, "%s", "-");

	k = cls(&m, 2);
	CHECK(k->nfields == 3 && k->fields[1].type == TB_FT_BYTES && k->fields[2].type == TB_FT_U32, "%s", "-");
	CHECK(!strcmp(k->fields[2].name, "_data_length") && strcmp(k->fields[0].name, "_data_length"),
	      "length field %s collides with %s", k->fields[0].name, k->fields[2].name);
	CHECK(k->fields[1].length_of == 0 && !k->fields[2].is_length, "%s", "-");

	for (uint32_t id = 3; id <= 6; id++) {
		char want_name[64];
		snprintf(want_name, sizeof want_name, "tracebuf:invalid_%u", id);
		k = cls(&m, id);
		CHECK(!strcmp(k->name, want_name) && k->nfields == 0, "id %u: %s", id, k->name);
	}
	k = cls(&m, 7);
	CHECK(k->nfields == 3 && !strcmp(k->fields[0].name, "integer") && !strcmp(k->fields[1].name, "struct") &&
	      !strcmp(k->fields[2].name, "_under"), "%s", "-");
	CHECK(k->fields[0].type == TB_FT_U32 && k->fields[1].type == TB_FT_STRING, "%s", "-");
	k = cls(&m, 8);
	CHECK(k->nfields == 3 && k->fields[0].type == TB_FT_ENUM && k->fields[0].size == 4 && k->fields[0].sign &&
		      k->fields[1].type == TB_FT_U8 && k->fields[2].type == TB_FT_ENUM && k->fixed_size == 9,
	      "%s", "app:enums: two int32 enums around a u8");
	const struct tb_tsdl_enum *en = &m.enums[k->fields[0].enum_idx];
	CHECK(en->n == 4 && !strcmp(en->l[0].name, "IDLE") && en->l[0].lo == 0 && !strcmp(en->l[2].name, "BLOCKED") &&
		      en->l[2].lo == 5 && en->l[2].hi == 5 && !strcmp(en->l[3].name, "GONE") && en->l[3].lo == -1,
	      "%s", "st's labels");
	en = &m.enums[k->fields[2].enum_idx];
	CHECK(en->n == 2 && !strcmp(en->l[1].name, "DOWN") && en->l[1].lo == 17, "%s", "dir's labels");
	k = cls(&m, 9);
	CHECK(!strcmp(k->name, "tracebuf:invalid_9") && k->nfields == 0, "bad labels: %s", k->name);
	tb_tsdl_free(&m);

	/* stream classes: both (a vtid channel and a plain one), or 1 alone */
	info.streams = (1u << TB_STREAM_PLAIN) | (1u << TB_STREAM_VTID);
	free(text);
	text = write_meta(&info, &len);
	CHECK(strstr(text, "event.context := struct {\n\t\tinteger { size = 32; align = 8; signed = 0; base = 10; } _vtid;"),
	      "%s", "the vtid context as lttng-ust writes it");
	CHECK_RC(tb_tsdl_parse(text, len, &m, &line), 0);
	CHECK(m.streams == 3 && m.stream_ctx[0] == 0 && m.stream_ctx[1] == TB_VTID_SIZE, "streams %x ctx %u/%u",
	      m.streams, m.stream_ctx[0], m.stream_ctx[1]);
	for (uint32_t id = 0; id <= m.max_id; id++) {
		int32_t a = tb_tsdl_class_at(&m, 0, id), b = tb_tsdl_class_at(&m, 1, id);
		CHECK(a >= 0 && b >= 0 && a != b && !strcmp(m.classes[a].name, m.classes[b].name) &&
		      m.classes[a].nfields == m.classes[b].nfields && m.classes[b].stream_id == 1,
		      "id %u declared alike in both stream classes", id);
	}
	tb_tsdl_free(&m);
	char *both = text;
	size_t both_len = len;
	info.streams = 1u << TB_STREAM_VTID;
	text = write_meta(&info, &len);
	CHECK(!strstr(text, "stream_id = 0;") && !strstr(text, "id = 0;\n\tevent.header"), "%s",
	      "no stream class 0 without a channel of it");
	CHECK_RC(tb_tsdl_parse(text, len, &m, &line), 0);
	CHECK(m.streams == 2 && tb_tsdl_class_at(&m, 0, 1) < 0 && tb_tsdl_class_at(&m, 1, 1) >= 0, "%s", "only class 1");
	tb_tsdl_free(&m);
	free(text);
	info.streams = 4;
	CHECK(tb_ctf_metadata_write(stdout, &info) == -EINVAL, "%s", "stream class 2 is not a channel's");
	info.streams = 0;
	/* the kernel's classes (--kernel): stream class 2 of their own, ids from TB_KERNEL_ID_BASE */
	{
		static struct tb_event_desc kev[2];
		memset(kev, 0, sizeof kev);
		for (unsigned q = 0; q < 2; q++) {
			snprintf(kev[q].name, sizeof kev[q].name, q ? "sched_waking" : "sched_switch");
			kev[q].id = TB_KERNEL_ID_BASE + q;
			kev[q].state = 1;
			kev[q].nfields = 2;
			snprintf(kev[q].fields[0].name, sizeof kev[q].fields[0].name, "comm");
			kev[q].fields[0].type = TB_FT_STRING;
			kev[q].fields[0].max_len = 255;
			snprintf(kev[q].fields[1].name, sizeof kev[q].fields[1].name, "tid");
			kev[q].fields[1].type = TB_FT_I32;
		}
		info.kevents = kev;
		info.nkevents = 2;
		text = write_meta(&info, &len);
		CHECK_RC(tb_tsdl_parse(text, len, &m, &line), 0);
		CHECK(m.streams == 5, "classes 0 and 2 declared (0x%x)", m.streams);
		int32_t ci = tb_tsdl_class_at(&m, TB_STREAM_KERNEL, TB_KERNEL_ID_BASE + 1);
		CHECK(ci >= 0 && !strcmp(m.classes[ci].name, "sched_waking") && m.classes[ci].nfields == 2);
		CHECK(tb_tsdl_class_at(&m, TB_STREAM_KERNEL, 1) < 0 && tb_tsdl_class_at(&m, 0, TB_KERNEL_ID_BASE) < 0,
		      "%s", "no registry class in stream class 2, no kernel class in 0");
		tb_tsdl_free(&m);
		free(text);
		info.kevents = NULL;
		info.nkevents = 0;
	}
	/* what the reader refuses around stream classes (each a one-place edit of `both`) */
	static const struct { const char *from, *to, *want; } bad[] = {
		{ "} _vtid;", "} _tid;", "event.context must be" },
		{ "integer { size = 32; align = 8; signed = 0; base = 10; } _vtid;",
		  "integer { size = 16; align = 8; signed = 0; base = 10; } _vtid;", "event.context must be" },
		{ "} _vtid;", "} _vtid;\n\t\tuint32_t more;", "event.context must be" },
		{ "stream {\n\tid = 1;", "stream {\n\tid = 3;", "only stream classes 0, 1 and 2" },
		{ "stream {\n\tid = 1;", "stream {\n\tid = 0;", "second stream block with id 0" },
		{ "\t\tuint64_t cpu_id;\n\t};\n};\n\nevent", "\t\tuint32_t cpu_id;\n\t\tuint32_t tb_reserved;\n\t};\n};\n\nevent",
		  "differs from the first stream's" },
		/* format 4: the loss causes are one u64 array ending the packet header, and nowhere else */
		{ "uint64_t tb_lost_by_cause[9];", "uint32_t tb_lost_by_cause[9];", "only 'uint64_t tb_lost_by_cause[N]'" },
		{ "uint64_t tb_lost_by_cause[9];", "uint64_t tb_lost[9];", "unexpected field 'tb_lost'" },
		{ "uint64_t tb_lost_by_cause[9];", "uint64_t tb_lost_by_cause[9];\n\t\tuint32_t more;",
		  "packet.header: unexpected field 'more'" },
		{ "\t\tuint64_t cpu_id;\n\t};\n};\n\nstream", "\t\tuint64_t cpu_id;\n\t\tuint64_t lost_full;\n\t};\n};\n\nstream",
		  "format 4's context ends with cpu_id" },
		{ "\t\tuint64_t cpu_id;\n\t};\n};\n\nstream", "\t\tuint32_t cpu_id;\n\t\tuint32_t tb_reserved;\n\t\tuint64_t lost_full;\n\t};\n};\n\nstream",
		  "the loss causes are in the packet header" },
		{ "name = \"app:clash\";\n\tid = 2;\n\tstream_id = 1;", "name = \"app:clasp\";\n\tid = 2;\n\tstream_id = 1;",
		  "is 'app:clash' in stream class 0 and 'app:clasp' in 1" },
		{ "\tstream_id = 1;", "\tstream_id = 3;", "event stream_id must be 0, 1 or 2" },
		{ "\tstream_id = 1;", "\tstream_id = 2;", "belongs to stream class 2, which is not declared" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *at = strstr(both, bad[i].from);
		CHECK(at, "case %zu: the metadata has %s", i, bad[i].from);
		size_t pre = (size_t)(at - both), fl = strlen(bad[i].from), tl = strlen(bad[i].to);
		char *t = malloc(both_len - fl + tl + 1);
		CHECK(t, "%s", "-");
		memcpy(t, both, pre);
		memcpy(t + pre, bad[i].to, tl);
		memcpy(t + pre + tl, at + fl, both_len - pre - fl + 1);
		int prc = tb_tsdl_parse(t, strlen(t), &m, &line);
		CHECK(prc == -EBADMSG && strstr(tb_errmsg(), bad[i].want), "case %zu: rc %d: %s", i, prc, tb_errmsg());
		printf("ok: %s\n", tb_errmsg());
		free(t);
	}
	/* stream class 1 declared, its events not: its packets' records are of no class, the text is fine;
	 * events of an undeclared class are not */
	{
		char *cut = strstr(both, "stream {\n\tid = 1;");
		CHECK(cut, "%s", "-");
		char *ev1 = strstr(cut, "event {");
		size_t keep = (size_t)(cut - both);
		char *t = malloc(both_len + 1);
		CHECK(t && ev1, "%s", "-");
		memcpy(t, both, keep);
		memcpy(t + keep, ev1, both_len - (size_t)(ev1 - both) + 1);
		int prc = tb_tsdl_parse(t, strlen(t), &m, &line);
		CHECK(prc == -EBADMSG && strstr(tb_errmsg(), "stream class 1, which is not declared"), "rc %d: %s", prc,
		      tb_errmsg());
		printf("ok: %s\n", tb_errmsg());
		free(t);
	}
	text = both;

	/* no events at all: still id 0 */
	info.nevents = 0;
	info.events = NULL;
	free(text);
	text = write_meta(&info, &len);
	CHECK_RC(tb_tsdl_parse(text, len, &m, &line), 0);
	CHECK(m.nclasses == 1 && !strcmp(m.classes[0].name, "tracebuf:thread"), "%s", "-");
	tb_tsdl_free(&m);

	/* bad inputs of the writer itself */
	info.clock_freq = 0;
	CHECK(tb_ctf_metadata_write(stdout, &info) == -EINVAL, "%s", "-");
	info.clock_freq = 1000000000;
	struct tb_ctf_env badenv = { .key = "no spaces allowed", .str = "x" };
	info.env = &badenv;
	info.nenv = 1;
	CHECK(tb_ctf_metadata_write(stdout, &info) == -EINVAL, "%s", "-");
	FILE *ro = fopen("/dev/full", "w");
	if (ro) {
		info.nenv = 0;
		CHECK_RC(tb_ctf_metadata_write(ro, &info), -EIO);
		fclose(ro);
	}
	free(text);
	printf("ok\n");
	return 0;
}
