/* SPDX-License-Identifier: MIT */
/*
 * tbdecode.h - the tests' consumer and decoder: drains a session in
 * process (concurrently with producers or after them), validates every
 * packet and record, and checks the per-stream invariants as it goes:
 * packet sequence numbers without gaps, timestamps that never go back,
 * events_discarded that never decreases.
 */
#ifndef TBDECODE_H
#define TBDECODE_H

#include <pthread.h>
#include <stdint.h>

#include "core/format.h"
#include "core/view.h"

struct tbd_event {
	uint32_t id;
	const char *name;
	uint64_t ts;
	unsigned ch, cpu;
	uint32_t pid, tid;      /* from the last tracebuf:thread record of the packet, 0 if none */
	const uint8_t *payload;
	uint64_t len;
	uint32_t vtid;          /* a vtid channel: the tid the record carries; 0 otherwise */
};

typedef void (*tbd_fn)(void *arg, const struct tbd_event *e);

struct tbd_stream {
	uint64_t packets, events, last_seq, last_ts, discarded;
	int seen;
};

struct tbd {
	struct tb_session *s;
	tbd_fn fn;
	void *arg;
	struct tb_event_desc *ev;
	uint32_t nev;
	struct tbd_stream *streams;   /* [nchannels * ncpus] */
	uint64_t packets, events, bad_packets, cut_records;
	uint64_t seq_gaps, ts_back, disc_back, bad_attr;
	char first_error[256];
	/* background consumer */
	pthread_t th;
	int stop; /* __atomic accesses */
	int running;
	uint8_t *buf;
};

int tbd_init(struct tbd *d, struct tb_session *s, tbd_fn fn, void *arg);
void tbd_fini(struct tbd *d);
/* Drains every complete sub-buffer now; returns packets taken. */
uint64_t tbd_drain_once(struct tbd *d);
/* Background consumer thread: drains until tbd_stop(). */
int tbd_start(struct tbd *d);
void tbd_stop(struct tbd *d);
/* After the producers are done: flush every CPU (pinned), drain all. */
void tbd_finish(struct tbd *d);
/* Sum of the last events_discarded of every stream. */
uint64_t tbd_discarded(const struct tbd *d);
/* Feeds one packet (already copied) to the decoder: used by snapshot tests. */
void tbd_packet(struct tbd *d, unsigned ch, unsigned cpu, const uint8_t *pkt, uint64_t len);

#endif
