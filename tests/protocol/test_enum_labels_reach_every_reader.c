/* SPDX-License-Identifier: MIT */
/*
 * test_enum_labels_reach_every_reader - an enum field's labels, written as a
 * C enumerator list in TB_EVENT, are registered with the class (format 3),
 * listed by tb_session_class(), written as CTF enumerations by a copy of
 * the rings, and read back per event by the reader (type TB_RD_ENUM, the
 * value, its label; NULL for a value no label names).  A class whose label
 * list does not parse is still recorded, the field as a plain i32.  The
 * registry refuses labels that do not match the class (other labels for a
 * registered name, malformed text, a line count that is not the number of
 * enum fields), and an entry whose labels were damaged in shared memory is
 * reported invalid, never trusted.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "core/view.h"
#include "session/registry.h"
#include "tbtest.h"

TB_EVENT(lab, step, (u32, i), (enum, st, (IDLE, RUNNING, BLOCKED = 5, GONE = -1)), (enum, dir, (UP = 0x10, DOWN)))
TB_EVENT(lab, bad, (enum, x, (A = 1.5)), (u8, y))

int main(void)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 65536, .sb_count = 4 };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);

	int step = tb_event_id("lab:step"), bad = tb_event_id("lab:bad");
	CHECK(step > 0 && bad > 0, "ids %d %d: %s", step, bad, tb_errmsg());
	struct tb_class_info k = { .size = sizeof k };
	CHECK_RC(tb_session_class(s, (unsigned)step, &k), 0);
	CHECK(k.valid && k.nfields == 3 && k.fields[0].type == TB_RD_U32 && k.fields[1].type == TB_RD_ENUM &&
		      k.fields[2].type == TB_RD_ENUM, "%s", "lab:step's field types");
	CHECK(!strcmp(k.labels, "IDLE=0,RUNNING=1,BLOCKED=5,GONE=-1\nUP=16,DOWN=17\n"), "labels: \"%s\"", k.labels);
	CHECK_RC(tb_session_class(s, (unsigned)bad, &k), 0);
	CHECK(k.valid && k.fields[0].type == TB_RD_I32 && !k.labels[0] && k.channels == 1,
	      "%s", "lab:bad: its unparsable labels left a plain i32, recorded");

	/* the registry's own checks */
	struct tb_field_desc f[2] = { { "st", TB_FT_ENUM, 0 }, { "dir", TB_FT_ENUM, 0 } };
	CHECK_RC(tb_registry_register(s, "lab:step", 0, f, NULL), -EEXIST);
	struct tb_field_desc sf[3] = { { "i", TB_FT_U32, 0 }, { "st", TB_FT_ENUM, 0 }, { "dir", TB_FT_ENUM, 0 } };
	CHECK_RC(tb_registry_register(s, "lab:step", 3, sf, "IDLE=0,RUNNING=1,BLOCKED=5,GONE=-1\nUP=16,DOWN=17\n"),
		 step);
	CHECK_RC(tb_registry_register(s, "lab:step", 3, sf, "IDLE=0\nUP=16,DOWN=17\n"), -EEXIST);
	CHECK_RC(tb_registry_register(s, "lab:two", 2, f, "A=0\n"), -EINVAL);         /* one line, two enums */
	CHECK_RC(tb_registry_register(s, "lab:two", 2, f, "A=0\nB=x\n"), -EINVAL);    /* not a number */
	CHECK_RC(tb_registry_register(s, "lab:two", 2, f, NULL), -EINVAL);            /* no labels at all */
	CHECK_RC(tb_registry_register(s, "lab:none", 1, sf, "A=0\n"), -EINVAL);       /* labels, no enum */
	int two = tb_registry_register(s, "lab:two", 2, f, "A=0\nB=1,C=2\n");
	CHECK(two > 0, "%s", tb_errmsg());

	for (uint32_t i = 0; i < 6; i++)
		tb_lab_step(i, i == 4 ? 7 : i == 5 ? -1 : (int32_t)(i % 3 == 2 ? 5 : i % 3), i & 1 ? 16 : 17);
	tb_lab_bad(3, 4);

	char dir[4200];
	snprintf(dir, sizeof dir, "%s/trace", tbt_tmpdir());
	struct tb_copy_result res = { .size = sizeof res };
	CHECK_RC(tb_session_copy(s, dir, TB_COPY_SNAPSHOT, NULL, NULL, &res), 0);
	CHECK(res.events >= 7, "copied %llu events", (unsigned long long)res.events);

	struct tb_reader *r;
	CHECK_RC(tb_reader_open(dir, NULL, &r), 0);
	const struct tb_rd_event *e;
	static const char *want_st[] = { "IDLE", "RUNNING", "BLOCKED", "IDLE", NULL, "GONE" };
	static const int64_t want_v[] = { 0, 1, 5, 0, 7, -1 };
	unsigned nstep = 0, nbad = 0;
	while (tb_reader_next(r, &e) == 1) {
		if (tb_rd_kind(e) != TB_RD_EVENT)
			continue;
		if (!strcmp(tb_rd_name(e), "lab:step")) {
			unsigned i = (unsigned)tb_rd_u64(e, 0);
			CHECK(i == nstep && i < 6, "step %u out of order", i);
			CHECK(tb_rd_field_type(e, 1) == TB_RD_ENUM && tb_rd_field_type(e, 2) == TB_RD_ENUM, "%s", "types");
			CHECK(tb_rd_i64(e, 1) == want_v[i] && tb_rd_f64(e, 1) == (double)want_v[i], "step %u: st %lld", i,
			      (long long)tb_rd_i64(e, 1));
			const char *l = tb_rd_enum_label(e, 1);
			CHECK(want_st[i] ? l && !strcmp(l, want_st[i]) : !l, "step %u: label %s", i, l ? l : "(none)");
			l = tb_rd_enum_label(e, 2);
			CHECK(l && !strcmp(l, i & 1 ? "UP" : "DOWN"), "step %u: dir %s", i, l ? l : "(none)");
			CHECK(!tb_rd_enum_label(e, 0), "%s", "a u32 has no label");
			char txt[256];
			size_t n = tb_rd_format_fields(e, 0, txt, sizeof txt);
			txt[n < sizeof txt ? n : sizeof txt - 1] = 0;
			if (i == 4)
				CHECK(!strcmp(txt, "i = 4, st = 7, dir = DOWN"), "text: %s", txt);
			if (i == 5)
				CHECK(!strcmp(txt, "i = 5, st = GONE, dir = UP"), "text: %s", txt);
			nstep++;
		} else if (!strcmp(tb_rd_name(e), "lab:bad")) {
			CHECK(tb_rd_field_type(e, 0) == TB_RD_I32 && tb_rd_i64(e, 0) == 3 && tb_rd_u64(e, 1) == 4, "%s",
			      "lab:bad recorded as i32, u8");
			nbad++;
		}
	}
	CHECK(nstep == 6 && nbad == 1, "read %u steps, %u bad", nstep, nbad);
	tb_reader_close(r);

	/* labels damaged in shared memory: the entry is invalid, nothing of it is used */
	memcpy(s->reg->events[two].labels, "A=0\nA=1,A=2\n", 13);
	k.size = sizeof k;
	CHECK_RC(tb_session_class(s, (unsigned)two, &k), 0);
	CHECK(!k.valid && k.nfields == 0 && !k.labels[0], "damaged labels: valid %d", k.valid);
	memset(s->reg->events[two].labels, 'A', sizeof s->reg->events[two].labels); /* no NUL */
	CHECK_RC(tb_session_class(s, (unsigned)two, &k), 0);
	CHECK(!k.valid, "%s", "labels without a NUL");

	tb_producer_use(NULL);
	tb_session_unlink(s);
	tb_session_close(s);
	puts("PASS");
	return 0;
}
