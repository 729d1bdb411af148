/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "tbdecode.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "core/record.h"
#include "session/registry.h"
#include "ring/ring.h"
#include "core/walk.h"
#include "platform/clock.h"

static void note(struct tbd *d, const char *msg)
{
	if (!d->first_error[0])
		snprintf(d->first_error, sizeof d->first_error, "%s", msg);
}

int tbd_init(struct tbd *d, struct tb_session *s, tbd_fn fn, void *arg)
{
	memset(d, 0, sizeof *d);
	d->s = s;
	d->fn = fn;
	d->arg = arg;
	d->ev = calloc(s->reg_capacity, sizeof *d->ev);
	d->streams = calloc((size_t)s->nchannels * s->ncpus, sizeof *d->streams);
	uint64_t maxsb = 0;
	for (unsigned c = 0; c < s->nchannels; c++)
		if (s->chan[c].sb_size > maxsb)
			maxsb = s->chan[c].sb_size;
	d->buf = malloc(maxsb);
	return d->ev && d->streams && d->buf ? 0 : -1;
}

void tbd_fini(struct tbd *d)
{
	free(d->ev);
	free(d->streams);
	free(d->buf);
}

struct walk_ctx {
	struct tbd *d;
	unsigned ch, cpu;
	uint32_t pid, tid;
};

static int on_rec(void *arg, const struct tb_walk_rec *r)
{
	struct walk_ctx *w = arg;
	if (r->id == TB_EVENT_ID_THREAD) {
		if (r->payload_len != 8) {
			w->d->bad_attr++;
			return 0;
		}
		memcpy(&w->pid, r->payload, 4);
		memcpy(&w->tid, r->payload + 4, 4);
		return 0;
	}
	struct tbd_event e = { r->id, w->d->ev[r->id].name, r->ts, w->ch, w->cpu, w->pid, w->tid, r->payload, r->payload_len,
			       r->vtid };
	w->d->events++;
	if (w->d->fn)
		w->d->fn(w->d->arg, &e);
	return 0;
}

void tbd_packet(struct tbd *d, unsigned ch, unsigned cpu, const uint8_t *pkt, uint64_t len)
{
	struct tb_session *s = d->s;
	/* refresh the registry copy: classes may have been added */
	d->nev = tb_registry_copy(s, d->ev, s->reg_capacity);
	struct tb_packet_header h;
	memcpy(&h, pkt, sizeof h);
	if (h.content_size / 8 > len || h.content_size < TB_PACKET_HEADER_SIZE * 8) {
		d->bad_packets++;
		note(d, "content_size out of bounds");
		return;
	}
	struct tbd_stream *st = &d->streams[(size_t)ch * s->ncpus + cpu];
	if (st->seen) {
		if (h.packet_seq_num != st->last_seq + 1) {
			d->seq_gaps++;
			char m[128];
			snprintf(m, sizeof m, "ch %u cpu %u: packet seq %llu after %llu", ch, cpu,
				 (unsigned long long)h.packet_seq_num, (unsigned long long)st->last_seq);
			note(d, m);
		}
		if (h.timestamp_begin < st->last_ts) {
			d->ts_back++;
			note(d, "packet begins before the previous packet's last timestamp");
		}
		if (h.events_discarded < st->discarded) {
			d->disc_back++;
			note(d, "events_discarded went down");
		}
	}
	struct walk_ctx w = { d, ch, cpu, 0, 0 };
	struct tb_walk_result res;
	uint64_t before = d->events;
	if (h.stream_id != (s->chan[ch].vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN)) {
		d->bad_packets++;
		note(d, "stream_id is not the stream class of the channel");
		return;
	}
	tb_walk_packet(d->ev, d->nev, pkt, h.content_size / 8, h.timestamp_begin, tb_walk_ctx(s->chan[ch].vtid), on_rec,
		       &w, &res);
	if (res.error) {
		d->cut_records++;
		char m[200];
		snprintf(m, sizeof m, "ch %u cpu %u packet %llu: %s at offset %llu", ch, cpu,
			 (unsigned long long)h.packet_seq_num, res.error, (unsigned long long)res.error_off);
		note(d, m);
	}
	if (res.last_ts > h.timestamp_end) {
		d->ts_back++;
		note(d, "an event after its packet's timestamp_end");
	}
	st->seen = 1;
	st->last_seq = h.packet_seq_num;
	st->last_ts = h.timestamp_end;
	st->discarded = h.events_discarded;
	st->packets++;
	st->events += d->events - before;
	d->packets++;
}

uint64_t tbd_drain_once(struct tbd *d)
{
	struct tb_session *s = d->s;
	uint64_t n = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		if (s->chan[ch].mode == TB_MODE_OVERWRITE)
			continue;
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			uint64_t pos;
			int rc;
			while ((rc = tb_ring_ready(s, ch, cpu, &pos)) == 1) {
				struct tb_packet_info info;
				if (tb_ring_copy(s, ch, cpu, pos, d->buf, &info) == 0)
					tbd_packet(d, ch, cpu, d->buf, s->chan[ch].sb_size);
				else {
					d->bad_packets++;
					note(d, tb_errmsg());
				}
				tb_ring_release(s, ch, cpu, pos);
				n++;
			}
			if (rc < 0) {
				d->bad_packets++;
				note(d, tb_errmsg());
				tb_ring_resync(s, ch, cpu);
			}
		}
	}
	return n;
}

static void *consumer(void *arg)
{
	struct tbd *d = arg;
	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE)) {
		if (!tbd_drain_once(d))
			tb_consumer_wait(d->s, 2000000); /* 2 ms */
	}
	return NULL;
}

int tbd_start(struct tbd *d)
{
	__atomic_store_n(&d->stop, 0, __ATOMIC_RELAXED);
	d->running = pthread_create(&d->th, NULL, consumer, d) == 0;
	return d->running ? 0 : -1;
}

void tbd_stop(struct tbd *d)
{
	if (!d->running)
		return;
	__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	pthread_join(d->th, NULL);
	d->running = 0;
}

static int emit_pkt(void *arg, const void *pkt, uint64_t len, const struct tb_packet_info *info)
{
	struct walk_ctx *w = arg;
	(void)info;
	tbd_packet(w->d, w->ch, w->cpu, pkt, len);
	return 0;
}

void tbd_finish(struct tbd *d)
{
	struct tb_session *s = d->s;
	tbd_stop(d);
	cpu_set_t old;
	sched_getaffinity(0, sizeof old, &old);
	for (int round = 0; round < 3; round++) {
		tbd_drain_once(d);
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			/* rseq: the flush is a critical section on that CPU, so run
			 * there; fallback: slots are not CPUs, any thread may flush */
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			if (s->protocol == TB_PROTO_RSEQ && sched_setaffinity(0, sizeof one, &one) != 0)
				continue; /* CPU offline: nothing ran there */
			for (unsigned ch = 0; ch < s->nchannels; ch++) {
				if (s->chan[ch].mode == TB_MODE_OVERWRITE)
					continue;
				for (int t = 0; t < 100 && tb_ring_flush(s, ch, cpu, TB_FLUSH_NOW, tb_mono_ns()) == -EAGAIN; t++)
					sched_yield();
			}
		}
		sched_setaffinity(0, sizeof old, &old);
	}
	tbd_drain_once(d);
	/* overwrite channels: what the rings hold */
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		if (s->chan[ch].mode != TB_MODE_OVERWRITE)
			continue;
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			struct walk_ctx w = { d, ch, cpu, 0, 0 };
			uint64_t bad = 0;
			tb_ring_drain_dead(s, ch, cpu, emit_pkt, &w, &bad);
			d->bad_packets += bad;
		}
	}
}

uint64_t tbd_discarded(const struct tbd *d)
{
	uint64_t n = 0;
	for (size_t i = 0; i < (size_t)d->s->nchannels * d->s->ncpus; i++)
		n += d->streams[i].discarded;
	return n;
}
