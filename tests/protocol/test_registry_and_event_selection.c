/* SPDX-License-Identifier: MIT */
/*
 * The event registry: ids are stable per name for the session, a name
 * re-registered with other fields is refused, bad names are refused, a full
 * registry says so; channel patterns select classes ('!' excludes) and a
 * change of pattern takes effect immediately for TB_EVENT call sites; a
 * disabled class writes nothing.  The public view of the classes and
 * patterns (tb_session_nclasses/class/get_events) says the same, from a
 * writable and from a read-only attach, and a damaged entry is reported as
 * invalid.
 */
#define _GNU_SOURCE
#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "session/registry.h"
#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(sel, alpha, (u32, x))
TB_EVENT(sel, beta, (u64, y), (str, s))
TB_EVENT(other, gamma, (i16, z), (f64, d), (strn, t, 8), (bytes, b, 16), (u64s, v, 4))

static uint64_t n_alpha, n_beta, n_gamma, gamma_ok;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	if (!strcmp(e->name, "sel:alpha"))
		n_alpha++;
	else if (!strcmp(e->name, "sel:beta"))
		n_beta++;
	else if (!strcmp(e->name, "other:gamma")) {
		n_gamma++;
		/* i16 -5, f64 2.5, "abcdefgh" (truncated to 8), bytes {1,2,3}, u64s {7, 8} */
		const uint8_t *p = e->payload;
		int16_t z;
		double dd;
		memcpy(&z, p, 2);
		memcpy(&dd, p + 2, 8);
		p += 10;
		int ok = z == -5 && dd == 2.5 && !strcmp((const char *)p, "abcdefgh");
		p += 9;
		uint32_t n;
		memcpy(&n, p, 4);
		ok = ok && n == 3 && p[4] == 1 && p[6] == 3;
		p += 4 + 3;
		memcpy(&n, p, 4);
		uint64_t v1;
		memcpy(&v1, p + 12, 8);
		ok = ok && n == 2 && v1 == 8 && e->len == (uint64_t)(p + 4 + 16 - e->payload);
		gamma_ok += ok;
	}
}

int main(void)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 65536, .sb_count = 8,
				      .events = "sel:*,!sel:beta" };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co,
				      .max_events = 8 };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);

	/* ids: tracebuf:thread is 0; the three classes of this file follow */
	CHECK_RC(tb_event_id("tracebuf:thread"), 0);
	int a = tb_event_id("sel:alpha"), b = tb_event_id("sel:beta"), g = tb_event_id("other:gamma");
	CHECK(a > 0 && b > 0 && g > 0 && a != b && b != g, "ids %d %d %d", a, b, g);
	CHECK(TB_ENABLED(sel, alpha) && !TB_ENABLED(sel, beta) && !TB_ENABLED(other, gamma), "pattern selection");

	/* same name, same fields: same id; other fields: refused */
	struct tb_field_desc f = { "x", TB_FT_U32, 0 };
	CHECK_RC(tb_registry_register(s, "sel:alpha", 1, &f, NULL), a);
	f.type = TB_FT_U64;
	CHECK_RC(tb_registry_register(s, "sel:alpha", 1, &f, NULL), -EEXIST);
	CHECK_RC(tb_registry_register(s, "noprovider", 1, &f, NULL), -EINVAL);
	CHECK_RC(tb_registry_register(s, "a:b c", 1, &f, NULL), -EINVAL);
	struct tb_field_desc badf = { "1x", TB_FT_U32, 0 };
	CHECK_RC(tb_registry_register(s, "p:badfield", 1, &badf, NULL), -EINVAL);
	struct tb_field_desc nob = { "s", TB_FT_STRING, 0 };
	CHECK_RC(tb_registry_register(s, "p:nobound", 1, &nob, NULL), -EINVAL);
	/* capacity 8: 7 used (with the library's tracebuf:thread_name,
	 * tracebuf:crash and tracebuf:crash_map); fill the rest, then it is full */
	CHECK(tb_event_id("tracebuf:thread_name") > 0, "the library registers tracebuf:thread_name");
	CHECK(tb_event_id("tracebuf:crash") > 0 && tb_event_id("tracebuf:crash_map") > 0,
	      "the library registers the crash classes");
	for (int i = 0; i < 1; i++) {
		char name[32];
		snprintf(name, sizeof name, "fill:e%d", i);
		CHECK(tb_registry_register(s, name, 0, &f, NULL) > 0, "%s", tb_errmsg());
	}
	CHECK_RC(tb_registry_register(s, "fill:one_too_many", 0, &f, NULL), -ENOSPC);
	CHECK(strstr(tb_errmsg(), "full"), "%s", tb_errmsg());

	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0, "decoder");
	for (int i = 0; i < 100; i++) {
		tb_sel_alpha((uint32_t)i);
		tb_sel_beta((uint64_t)i, "hello");
		tb_other_gamma(-5, 2.5, "abcdefghij", (const uint8_t[]){ 1, 2, 3 }, 3, (const uint64_t[]){ 7, 8 }, 2);
	}
	/* change the selection while recording: beta and gamma on, alpha off */
	CHECK_RC(tb_session_set_events(s, 0, "sel:beta,other:*"), 0);
	CHECK(!TB_ENABLED(sel, alpha) && TB_ENABLED(sel, beta) && TB_ENABLED(other, gamma), "live change");
	for (int i = 0; i < 100; i++) {
		tb_sel_alpha((uint32_t)i);
		tb_sel_beta((uint64_t)i, "hello");
		tb_other_gamma(-5, 2.5, "abcdefghij", (const uint8_t[]){ 1, 2, 3 }, 3, (const uint64_t[]){ 7, 8 }, 2);
	}
	tbd_finish(&d);
	CHECK(d.first_error[0] == 0, "%s", d.first_error);

	/* the public view of the classes and the patterns */
	char pat[256];
	CHECK_RC(tb_session_get_events(s, 0, pat, sizeof pat), 0);
	CHECK(!strcmp(pat, "sel:beta,other:*"), "patterns '%s'", pat);
	CHECK_RC(tb_session_get_events(s, 0, pat, 5), -ENOSPC);
	CHECK_RC(tb_session_get_events(s, 1, pat, sizeof pat), -EINVAL);
	CHECK(!strcmp(tb_session_channel_name(s, 0), "c") && !tb_session_channel_name(s, 1), "channel names");
	CHECK_EQ_U64(tb_session_nclasses(s), 8);
	struct tb_class_info k = { .size = sizeof k };
	CHECK_RC(tb_session_class(s, (unsigned)g, &k), 0);
	CHECK(k.valid && k.id == (unsigned)g && !strcmp(k.name, "other:gamma") && k.nfields == 5, "gamma: %s %u",
	      k.name, k.nfields);
	CHECK(!strcmp(k.fields[0].name, "z") && k.fields[0].type == TB_FT_I16 && k.fields[0].max_len == 0, "z");
	CHECK(!strcmp(k.fields[2].name, "t") && k.fields[2].type == TB_FT_STRING && k.fields[2].max_len == 8, "t");
	CHECK(k.fields[4].type == TB_FT_U64SEQ && k.fields[4].max_len == 4, "v");
	CHECK_EQ_U64(k.channels, 1); /* other:* selects it */
	CHECK_RC(tb_session_class(s, (unsigned)a, &k), 0);
	CHECK(!strcmp(k.name, "sel:alpha") && k.channels == 0, "alpha is off: %s %u", k.name, k.channels);
	CHECK_RC(tb_session_class(s, 8, &k), -EINVAL);
	struct tb_class_info small = { .size = sizeof small - 8 };
	CHECK_RC(tb_session_class(s, 0, &small), -EINVAL);
	/* read-only: the same values */
	struct tb_session *ro;
	CHECK_RC(tb_session_attach(tb_session_path(s), TB_ATTACH_READONLY, &ro), 0);
	CHECK_RC(tb_session_get_events(ro, 0, pat, sizeof pat), 0);
	CHECK(!strcmp(pat, "sel:beta,other:*"), "read-only patterns '%s'", pat);
	struct tb_class_info kr = { .size = sizeof kr };
	CHECK_RC(tb_session_class(ro, (unsigned)b, &kr), 0);
	CHECK(kr.valid && !strcmp(kr.name, "sel:beta") && kr.channels == 1 && kr.nfields == 2, "ro beta");
	/* a damaged entry (another process of the same uid can write anything) */
	memcpy(s->reg->events[b].fields[0].name, "9bad", 5);
	CHECK_RC(tb_session_class(ro, (unsigned)b, &kr), 0);
	CHECK(!kr.valid && kr.nfields == 0 && !strncmp(kr.name, "tracebuf:invalid_", 17), "damaged: %s", kr.name);
	memcpy(s->reg->events[b].fields[0].name, "y", 2);
	/* how the channel was made, the rings' fill, the session's status */
	struct tb_channel_info ci = { .size = sizeof ci };
	CHECK_RC(tb_session_channel_info(ro, 0, &ci), 0);
	CHECK(!strcmp(ci.name, "c") && ci.mode == TB_DISCARD && ci.sb_size == 65536 && ci.sb_count == 8 &&
	      ci.attribution == 1, "channel info %s %u %llu %u", ci.name, ci.mode, (unsigned long long)ci.sb_size,
	      ci.sb_count);
	CHECK_RC(tb_session_channel_info(ro, 1, &ci), -EINVAL);
	/* the decoder drained everything: what is written now stays in the ring */
	for (int i = 0; i < 1000; i++)
		tb_sel_beta((uint64_t)i, "hello");
	int most = 0;
	for (unsigned cpu = 0; cpu < tb_session_ncpus(ro); cpu++) {
		int fill = tb_session_ring_fill(ro, 0, cpu);
		CHECK(fill >= 0 && fill <= 1000, "fill %d", fill);
		most = fill > most ? fill : most;
	}
	CHECK(most > 0, "1000 records left in a ring, no ring shows any fill");
	CHECK_RC(tb_session_ring_fill(ro, 0, tb_session_ncpus(ro)), -EINVAL);
	struct tb_session_status st = { .size = sizeof st };
	CHECK_RC(tb_session_status(ro, &st), 0);
	CHECK(st.state == TB_SESSION_ACTIVE && st.live_processes == 1, "status: state %u, %u live", st.state,
	      st.live_processes);
	struct tb_session_status sbad = { .size = 3 };
	CHECK_RC(tb_session_status(ro, &sbad), -EINVAL);
	tb_session_close(ro);
	CHECK_EQ_U64(n_alpha, 100);
	CHECK_EQ_U64(n_beta, 100);
	CHECK_EQ_U64(n_gamma, 100);
	CHECK_EQ_U64(gamma_ok, 100);
	struct tb_counters c;
	CHECK_RC(tb_session_counters(s, 0, -1, &c), 0);
	CHECK_EQ_U64(c.truncated, 100); /* the 10-byte string into an 8-byte bound */
	CHECK_EQ_U64(c.written, 1300); /* 300 decoded, and 1000 left in the ring for the fill check */
	tbd_fini(&d);
	return 0;
}
