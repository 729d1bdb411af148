/* SPDX-License-Identifier: MIT */
/*
 * every_header.c - compiled as C11, C17 and gnu variants with -Wpedantic, and
 * (as a copy named .cpp) as C++11..C++20 by tests/cli/t_public_headers_compile_everywhere.sh:
 * every public header, TB_EVENT with every field type (enums with their labels
 * written as a C enumerator list, a value the labels do not name), with one field and with
 * none, and a string field given a char array shorter than its bound (the
 * case -Wstringop-overread flagged at -O2); TB_SPAN with fields and without,
 * its functions, TB_SPAN_SCOPE (C: the cleanup attribute; C++: the class,
 * also named and ended early).  Run under `tracebuf record`, it writes one
 * event of each class.
 */
#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

TB_EVENT(hdr, all, (u8, a), (u16, b), (u32, c), (u64, d), (i8, e), (i16, f), (i32, g), (i64, h), (f64, x),
	 (str, s), (strn, t, 300), (bytes, blob, 16), (u64s, vals, 4))
TB_EVENT(hdr, typed, (bool, yes), (bool, no), (f32, ratio), (f32, big))
#define HDR_DOWN_VALUE 0x11 /* a macro in a label list is expanded before the list is kept */
TB_EVENT(hdr, state, (enum, st, (IDLE, RUNNING, BLOCKED = 5, GONE = -1)), (enum, dir, (UP = 0x10, DOWN = HDR_DOWN_VALUE)))
TB_EVENT(hdr, one, (u32, id))

enum hdr_state { HDR_IDLE, HDR_RUNNING, HDR_BLOCKED = 5, HDR_GONE = -1 };
TB_EVENT(hdr, none)

/* spans: with fields (a sequence takes two arguments), and without */
TB_SPAN(hdr, phase, (u32, id), (bytes, blob, 8), (str, what))
TB_SPAN(hdr, bare)

/* the scoped form ends both spans on either return */
static int hdr_scoped(int early)
{
	TB_SPAN_SCOPE(hdr, phase, 7, "abc", 3, "scoped");
	TB_SPAN_SCOPE(hdr, bare);
	if (early)
		return 1;
	return 0;
}

int main(void)
{
	char small[8] = "short";
	uint64_t v[2] = { 7, 8 };
	tb_hdr_all(1, 2, 3, 4, -1, -2, -3, -4, 0.0005, small, small, small, 3, v, 2);
	tb_hdr_typed(1 > 0, 0 > 1, 0.1f, -2.5e38f);
	tb_hdr_state(HDR_BLOCKED, 0x11);
	tb_hdr_state(7, 0x10); /* no label: shown as the number */
	tb_hdr_state(HDR_GONE, 0x10);
	tb_hdr_one(42);
	tb_hdr_none();
	tb_hdr_phase_begin(1, small, 2, "pair");
	tb_hdr_phase_end();
	int r = hdr_scoped(1) + hdr_scoped(0);
#ifdef __cplusplus
	{
		tb_hdr_phase_scope s(2, v, 0, "named"); /* the class, ended early: once */
		s.end();
		s.end();
	}
#endif
	return TB_ENABLED(hdr, none) && TB_ENABLED(hdr, phase_begin) ? r - 1 : r - 1;
}
