/* SPDX-License-Identifier: MIT */
/*
 * Records of every payload length 0..80 fill sub-buffers up to their end and
 * never cross into the next one: every packet is closed (content_size within
 * the packet, timestamp_end set), every record decodes, and the accounting
 * holds.  Single thread, so the outcome is deterministic; run with rseq and
 * with the fallback protocol.
 */
#define _GNU_SOURCE
#include <string.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "session/registry.h"
#include "tbdecode.h"
#include "tbtest.h"

static uint64_t got, bad_payload;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	/* payload: empty, or u32 n then n bytes of (n + i) */
	if (e->len) {
		uint32_t n;
		memcpy(&n, e->payload, 4);
		if (e->len != 4 + (uint64_t)n) {
			bad_payload++;
			return;
		}
		for (uint32_t i = 0; i < n; i++)
			if (e->payload[4 + i] != (uint8_t)(n + i)) {
				bad_payload++;
				return;
			}
	}
	got++;
}

int main(void)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 4096, .sb_count = 64, .mode = TB_DISCARD };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0, "decoder init");
	/* one class per record length (payload = u32 length + bytes): 0, 4..84 */
	uint64_t written = 0;
	for (uint32_t len = 0; len <= 80; len++) {
		char name[32];
		snprintf(name, sizeof name, "fill:len%u", len);
		struct tb_field_desc f = { .type = TB_FT_U8 };
		int id;
		if (len == 0) {
			id = tb_registry_register(s, name, 0, &f, NULL);
		} else {
			strcpy(f.name, "b");
			f.type = TB_FT_BYTES;
			f.max_len = 4096;
			id = tb_registry_register(s, name, 1, &f, NULL);
		}
		CHECK(id >= 0, "register %s: %s", name, tb_errmsg());
		uint8_t buf[4 + 80];
		uint32_t n = len >= 4 ? len - 4 : 0;
		memcpy(buf, &n, 4);
		for (uint32_t i = 0; i < n; i++)
			buf[4 + i] = (uint8_t)(n + i);
		uint32_t plen = len == 0 ? 0 : 4 + n;
		for (int k = 0; k < 700; k++) {
			int rc = tb_write(0, (uint32_t)id, buf, plen);
			CHECK(rc == 0 || rc == -ENOSPC, "tb_write: %d", rc);
			written++;
		}
		tbd_drain_once(&d);
	}
	tbd_finish(&d);
	CHECK(d.first_error[0] == 0, "decoder: %s", d.first_error);
	CHECK_EQ_U64(d.bad_packets, 0);
	CHECK_EQ_U64(d.cut_records, 0);
	CHECK_EQ_U64(bad_payload, 0);
	CHECK_EQ_U64(written, got + tbd_discarded(&d));
	printf("written %llu delivered %llu lost %llu packets %llu\n", (unsigned long long)written,
	       (unsigned long long)got, (unsigned long long)tbd_discarded(&d), (unsigned long long)d.packets);
	tbd_fini(&d);
	return 0;
}
