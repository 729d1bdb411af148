/* SPDX-License-Identifier: MIT */
/*
 * ctf_write.c - the TSDL metadata of a tracebuf trace (see docs/CTF.md).
 *
 * Layout choices (every one is read back by src/reader/tsdl.c and tsdl_layout.c):
 *   - every integer is byte aligned (align = 8) except the uint5 event id
 *     and the uint27 compact timestamp, so the packet header + context is
 *     160 bytes and a record header 4 (compact) or 13 (extended) bytes,
 *     exactly as core/format.h lays them out;
 *   - payload field names are written with one leading underscore, which
 *     CTF readers strip: the name babeltrace2 shows is the registered one,
 *     and no field name can be mistaken for a TSDL keyword;
 *   - the length of a byte / u64 sequence NAME is a uint32 written as
 *     "__NAME_length" (shown as "_NAME_length"); if that collides with
 *     another field of the class, '_' are appended until it is unique.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ctf/ctf.h"

#include "core/labels.h"

#define TB_THREAD_EVENT_NAME "tracebuf:thread"

static void put_uuid(FILE *out, const uint8_t u[16])
{
	fprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		u[13], u[14], u[15]);
}

/* Writes a TSDL string literal: \ " and \n \t \r escaped, other control bytes as '?'. */
static void put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			fputc(c < 0x20 || c == 0x7f ? '?' : c, out);
		}
	}
	fputc('"', out);
}

int tb_ctf_ident_valid(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == 0 || n == cap)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return 0;
	}
	return 1;
}

int tb_ctf_event_name_valid(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == 0 || n == cap)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == ':' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/*
 * TSDL names of the length fields of the class's sequences, in field order:
 * "__NAME_length", with '_' appended while it equals the written name of
 * another field ("_" + name) or an earlier length name.
 */
void tb_ctf_seq_length_names(const struct tb_event_desc *ev, char names[][TB_CTF_LEN_NAME_MAX])
{
	for (uint32_t f = 0; f < ev->nfields; f++) {
		char *buf = names[f];
		buf[0] = 0;
		if (ev->fields[f].type != TB_FT_BYTES && ev->fields[f].type != TB_FT_U64SEQ)
			continue;
		int n = snprintf(buf, TB_CTF_LEN_NAME_MAX, "__%.*s_length",
				 (int)TB_FIELD_NAME_MAX, ev->fields[f].name);
		for (;;) {
			int clash = 0;
			for (uint32_t i = 0; i < ev->nfields && !clash; i++)
				clash = !strcmp(buf + 1, ev->fields[i].name) ||
					(i < f && !strcmp(buf, names[i]));
			if (!clash || n + 1 >= (int)TB_CTF_LEN_NAME_MAX)
				break;
			buf[n++] = '_';
			buf[n] = 0;
		}
	}
}

int tb_ctf_event_valid(const struct tb_event_desc *ev, uint32_t id)
{
	if (ev->state != 1 || ev->id != id)
		return 0;
	if (!tb_ctf_event_name_valid(ev->name, sizeof ev->name))
		return 0;
	if (ev->nfields > TB_MAX_FIELDS)
		return 0;
	for (uint32_t i = 0; i < ev->nfields; i++) {
		const struct tb_field_desc *f = &ev->fields[i];
		if (!tb_ctf_ident_valid(f->name, sizeof f->name))
			return 0;
		if (f->type < TB_FT_U8 || f->type >= TB_FT_MAX_)
			return 0;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(ev->fields[j].name, f->name))
				return 0;
	}
	return tb_labels_check(ev->labels, sizeof ev->labels, tb_labels_nenum(ev));
}

static const char *int_alias(uint32_t type)
{
	switch (type) {
	case TB_FT_U8: return "uint8_t";
	case TB_FT_U16: return "uint16_t";
	case TB_FT_U32: return "uint32_t";
	case TB_FT_U64: return "uint64_t";
	case TB_FT_I8: return "int8_t";
	case TB_FT_I16: return "int16_t";
	case TB_FT_I32: return "int32_t";
	case TB_FT_I64: return "int64_t";
	case TB_FT_F64: return "double_t";
	default: return NULL;
	}
}

static void put_event(FILE *out, const struct tb_event_desc *shared, uint32_t id, uint32_t sid)
{
	/* the descriptor lives in shared memory: validate and print a private copy */
	struct tb_event_desc copy, *ev = NULL;
	char lens[TB_MAX_FIELDS][TB_CTF_LEN_NAME_MAX];
	if (shared) {
		memcpy(&copy, shared, sizeof copy);
		ev = &copy;
	}
	fprintf(out, "event {\n\tname = ");
	if (id == TB_EVENT_ID_THREAD) {
		put_quoted(out, TB_THREAD_EVENT_NAME);
		fprintf(out, ";\n\tid = 0;\n\tstream_id = %" PRIu32 ";\n"
			     "\tfields := struct {\n\t\tuint32_t _pid;\n\t\tuint32_t _tid;\n\t};\n};\n\n", sid);
		return;
	}
	if (!ev || !tb_ctf_event_valid(ev, id)) {
		fprintf(out, "\"tracebuf:invalid_%" PRIu32 "\";\n\tid = %" PRIu32 ";\n\tstream_id = %" PRIu32 ";\n"
			     "\tfields := struct {\n\t};\n};\n\n", id, id, sid);
		return;
	}
	tb_ctf_seq_length_names(ev, lens);
	put_quoted(out, ev->name);
	fprintf(out, ";\n\tid = %" PRIu32 ";\n\tstream_id = %" PRIu32 ";\n\tfields := struct {\n", id, sid);
	unsigned nenum = 0;
	for (uint32_t i = 0; i < ev->nfields; i++) {
		const struct tb_field_desc *f = &ev->fields[i];
		const char *a = int_alias(f->type);
		if (a) {
			fprintf(out, "\t\t%s _%s;\n", a, f->name);
		} else if (f->type == TB_FT_STRING) {
			fprintf(out, "\t\tstring { encoding = UTF8; } _%s;\n", f->name);
		} else if (f->type == TB_FT_BOOL) {
			/* CTF 1.8 has no boolean: an enumeration babeltrace2 prints by label */
			fprintf(out, "\t\tenum : uint8_t { \"false\" = 0, \"true\" = 1 } _%s;\n", f->name);
		} else if (f->type == TB_FT_ENUM) {
			/* labels checked by tb_ctf_event_valid(): identifiers, decimal int32 */
			fprintf(out, "\t\tenum : int32_t {");
			const char *p = tb_labels_line(ev->labels, nenum++);
			char name[TB_LABEL_NAME_MAX];
			int32_t v;
			for (int first = 1; p && tb_label_next(&p, name, &v); first = 0)
				fprintf(out, "%s \"%s\" = %" PRId32, first ? "" : ",", name, v);
			fprintf(out, " } _%s;\n", f->name);
		} else if (f->type == TB_FT_F32) {
			fprintf(out, "\t\tfloating_point { exp_dig = 8; mant_dig = 24; align = 8; } _%s;\n", f->name);
		} else {
			fprintf(out, "\t\tuint32_t %s;\n\t\t%s _%s[%s];\n", lens[i],
				f->type == TB_FT_BYTES ? "uint8_t" : "uint64_t", f->name, lens[i]);
		}
	}
	fprintf(out, "\t};\n};\n\n");
}

void tb_ctf_clock_uuid(const uint8_t trace_uuid[16], uint8_t out[16])
{
	/* a fixed, documented derivation: xor with "tb-clk-monotonic", then
	 * force the RFC 4122 version 4 / variant bits */
	static const char k[16] = { 't', 'b', '-', 'c', 'l', 'k', '-', 'm',
				    'o', 'n', 'o', 't', 'o', 'n', 'i', 'c' };
	for (int i = 0; i < 16; i++)
		out[i] = trace_uuid[i] ^ (uint8_t)k[i];
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

void tb_ctf_clock_offset(int64_t offset_ns, uint64_t freq, int64_t *offset_s, uint64_t *offset_cycles)
{
	int64_t s = offset_ns / 1000000000;
	int64_t rem = offset_ns % 1000000000;
	if (rem < 0) {
		rem += 1000000000;
		s--;
	}
	*offset_s = s;
	*offset_cycles = (uint64_t)(((unsigned __int128)rem * freq + 500000000) / 1000000000);
}

static int stream_used(const struct tb_ctf_trace_info *info, uint32_t sid)
{
	uint32_t used = info->streams ? info->streams : 1u << TB_STREAM_PLAIN;
	if (info->nkevents)
		used |= 1u << TB_STREAM_KERNEL;
	return (used >> sid) & 1;
}

/*
 * Stream class `sid`.  All have the same packet context and event header
 * (the context: what CTF readers give a meaning to, and cpu_id, which they
 * show on every event line; the loss causes are in the trace packet header; class TB_STREAM_KERNEL is class 0's declaration under id 2);
 * class TB_STREAM_VTID adds the event context of LTTng's vtid context: the
 * TSDL name "_vtid" (one underscore, stripped by CTF readers as for payload
 * fields: babeltrace2 shows "vtid"), an unsigned 32-bit decimal integer.
 */
static void put_stream(FILE *out, uint32_t sid)
{
	fprintf(out, "stream {\n\tid = %" PRIu32 ";\n", sid);
	fputs("\tevent.header := struct {\n"
	      "\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
	      "\t\tvariant <id> {\n"
	      "\t\t\tstruct {\n\t\t\t\tuint27_clock_monotonic_t timestamp;\n\t\t\t} compact;\n"
	      "\t\t\tstruct {\n\t\t\t\tuint32_t id;\n"
	      "\t\t\t\tuint64_clock_monotonic_t timestamp;\n\t\t\t} extended;\n"
	      "\t\t} v;\n"
	      "\t} align(8);\n", out);
	if (sid == TB_STREAM_VTID)
		fputs("\tevent.context := struct {\n"
		      "\t\tinteger { size = 32; align = 8; signed = 0; base = 10; } _vtid;\n"
		      "\t};\n", out);
	fputs("\tpacket.context := struct {\n"
	      "\t\tuint64_clock_monotonic_t timestamp_begin;\n"
	      "\t\tuint64_clock_monotonic_t timestamp_end;\n"
	      "\t\tuint64_t content_size;\n"
	      "\t\tuint64_t packet_size;\n"
	      "\t\tuint64_t packet_seq_num;\n"
	      "\t\tuint64_t events_discarded;\n"
	      "\t\tuint64_t cpu_id;\n"
	      "\t};\n};\n\n", out);
}

int tb_ctf_metadata_write(FILE *out, const struct tb_ctf_trace_info *info)
{
	if (!out || !info || info->clock_freq == 0 || (info->nevents && !info->events) ||
	    (info->nenv && !info->env))
		return tb_fail(-EINVAL, "tb_ctf_metadata_write: missing output, clock frequency, "
					"event or env array");
	if (info->nevents > TB_MAX_EVENTS)
		return tb_fail(-EINVAL, "tb_ctf_metadata_write: %" PRIu32 " event classes, at most %u",
			       info->nevents, TB_MAX_EVENTS);
	if (info->streams >> TB_STREAM_KERNEL)
		return tb_fail(-EINVAL, "tb_ctf_metadata_write: stream classes 0x%" PRIx32 ", only 0 and 1 are "
					"the channels' (class 2 is declared by nkevents)",
			       info->streams);
	if (info->nkevents > TB_MAX_EVENTS || (info->nkevents && !info->kevents))
		return tb_fail(-EINVAL, "tb_ctf_metadata_write: %" PRIu32 " kernel event classes", info->nkevents);
	for (uint32_t i = 0; i < info->nenv; i++)
		if (!info->env[i].key || !tb_ctf_ident_valid(info->env[i].key, 128))
			return tb_fail(-EINVAL, "tb_ctf_metadata_write: env key #%" PRIu32
						" is not an identifier", i);

	fputs("/* CTF 1.8 */\n\n"
	      "/* Written by tracebuf; described field by field in docs/CTF.md. */\n\n"
	      "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	      "typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"
	      "typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"
	      "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	      "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
	      "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	      "typealias floating_point { exp_dig = 11; mant_dig = 53; align = 8; } := double_t;\n\n",
	      out);

	fputs("trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"", out);
	put_uuid(out, info->uuid);
	fputs("\";\n\tbyte_order = le;\n"
	      "\tpacket.header := struct {\n"
	      "\t\tuint32_t magic;\n"
	      "\t\tuint8_t uuid[16];\n"
	      "\t\tuint32_t stream_id;\n"
	      "\t\tuint64_t stream_instance_id;\n", out);
	/* the loss totals by cause (core/format.h, struct tb_trace_packet_header):
	 * in the trace packet header, which babeltrace2 reads past without showing
	 * it on every event line as it would a packet context field */
	fprintf(out, "\t\t/* running totals of lost events by cause:");
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		fprintf(out, "%s %s", k ? "," : "", tb_loss_field(k) + 5);
	fprintf(out, " (their sum is events_discarded) */\n\t\tuint64_t %s[%u];\n", TB_TSDL_LOST_ARRAY,
		(unsigned)TB_LOSS_NCAUSES);
	fputs("\t};\n};\n\n", out);

	fputs("env {\n", out);
	for (uint32_t i = 0; i < info->nenv; i++) {
		fprintf(out, "\t%s = ", info->env[i].key);
		if (info->env[i].str)
			put_quoted(out, info->env[i].str);
		else
			fprintf(out, "%" PRId64, info->env[i].num);
		fputs(";\n", out);
	}
	fputs("};\n\n", out);

	uint8_t cu[16];
	int64_t off_s;
	uint64_t off_c;
	tb_ctf_clock_uuid(info->uuid, cu);
	tb_ctf_clock_offset(info->clock_offset_ns, info->clock_freq, &off_s, &off_c);
	fputs("clock {\n\tname = \"monotonic\";\n\tuuid = \"", out);
	put_uuid(out, cu);
	fprintf(out, "\";\n\tdescription = \"tracebuf timestamp counter\";\n"
		     "\tfreq = %" PRIu64 ";\n\tprecision = 1;\n"
		     "\toffset_s = %" PRId64 ";\n\toffset = %" PRIu64 ";\n\tabsolute = false;\n};\n\n",
		info->clock_freq, off_s, off_c);

	fputs("typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; }"
	      " := uint27_clock_monotonic_t;\n"
	      "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; }"
	      " := uint64_clock_monotonic_t;\n\n", out);

	for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++)
		if (stream_used(info, sid))
			put_stream(out, sid);
	for (uint32_t i = 0; i < info->nkevents; i++)
		put_event(out, &info->kevents[i], TB_KERNEL_ID_BASE + i, TB_STREAM_KERNEL);

	return tb_ctf_metadata_write_events(out, info, 0);
}

int tb_ctf_metadata_write_events(FILE *out, const struct tb_ctf_trace_info *info, uint32_t from)
{
	uint32_t n = info->nevents ? info->nevents : 1;
	/* CTF 1.8: an event class belongs to one stream class; each class in
	 * use gets the same event classes under the same ids */
	for (uint32_t sid = 0; sid < TB_STREAM_KERNEL; sid++)
		if (stream_used(info, sid))
			for (uint32_t id = from; id < n; id++)
				put_event(out, id < info->nevents ? &info->events[id] : NULL, id, sid);

	if (fflush(out) != 0 || ferror(out))
		return tb_fail(-EIO, "tb_ctf_metadata_write: write error: %s", strerror(errno));
	return 0;
}
