/* SPDX-License-Identifier: MIT */
/*
 * embedded_relay.c - records itself with tb_session_start_relay(): writes
 * N events of emb:ev, stops; for t_record_relay.sh.
 *   tb-embedded-relay URL SESSION_NAME HOSTNAME OUTDIR N
 * Prints "written: N" and exits 0, or the error and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>

TB_EVENT(emb, ev, (u32, i))

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: tb-embedded-relay URL SESSION_NAME HOSTNAME OUTDIR N\n");
		return 2;
	}
	struct tb_relay_opts ro = { sizeof ro, argv[1], argv[2], argv[3], 0 };
	struct tb_recorder *rec;
	if (tb_session_start_relay(NULL, argv[4], &ro, &rec) < 0) {
		fprintf(stderr, "tb_session_start_relay: %s\n", tb_errmsg());
		return 1;
	}
	unsigned n = (unsigned)strtoul(argv[5], NULL, 10);
	for (unsigned i = 0; i < n; i++)
		tb_emb_ev(i);
	if (tb_session_stop(rec) < 0) {
		fprintf(stderr, "tb_session_stop: %s\n", tb_errmsg());
		return 1;
	}
	printf("written: %u\n", n);
	return 0;
}
