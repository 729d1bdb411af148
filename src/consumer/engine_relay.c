/* SPDX-License-Identifier: MIT */
/*
 * engine_relay.c - the engine's side of the relay daemon (relay.c): what is
 * written to the trace directory is also sent, packet by packet, with the
 * metadata ahead of the packets that need it, and live beacons for idle
 * streams.  A relay that is lost is tried again after 1 s, then after
 * twice as long each time up to 30 s (drain thread); reconnected, it gets a
 * new relay session whose packets carry what was not sent meanwhile as
 * lost_relay.  The local trace goes on whole throughout, and what could not
 * be sent is counted (tb_engine_relay(), the recorder's summary).  Without a
 * local trace (relay-only) the relay's copy is the trace: what it did not
 * get is lost, counted per stream (relay_unsent) by tb_engine_stats().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/engine_impl.h"
#include "consumer/relay.h"
#include "ctf/ctf.h"

static void relay_lost(struct tb_engine *e)
{
	/* the first time only: a warning for the caller to print */
	if (e->relay_st.alive) {
		e->relay_st.alive = 0;
		snprintf(e->relay_st.error, sizeof e->relay_st.error, "%s", tb_relay_error(e->relay));
		tb_engine_warn(e, "%s: %s until it answers again (tried after 1 s, then less and less often)",
			       e->relay_st.error,
			       e->local ? "packets are written to the trace directory only (and counted as not sent)"
					: "packets are lost (no -o DIR: counted as lost to the relay)");
		e->relay_backoff_ns = 1000000000ull;
		e->relay_retry_ns = tb_mono_ns() + e->relay_backoff_ns;
	}
}

void tb_engine_relay_packets(struct tb_engine *e, unsigned ch, unsigned cpu, const struct iovec *iov, int n,
			     uint64_t events)
{
	if (!e->relay)
		return;
	pthread_mutex_lock(&e->relay_lock);
	unsigned idx = ch * e->s->ncpus + cpu;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len != sizeof(struct tb_packet_header))
			break; /* not a packet header: the caller's bug; nothing more is sent */
		struct tb_packet_header h;
		memcpy(&h, iov[i].iov_base, sizeof h);
		uint64_t content = ((h.content_size / 8) + 7) & ~7ull;
		if (content > h.packet_size / 8)
			content = h.packet_size / 8;
		const void *rest = NULL;
		size_t rest_len = 0;
		if (content > sizeof h && i + 1 < n) {
			rest = iov[i + 1].iov_base;
			rest_len = iov[i + 1].iov_len;
			i++;
		}
		if (tb_relay_alive(e->relay) && tb_relay_packet(e->relay, idx, &h, rest, rest_len) == 0) {
			e->relay_st.packets++;
			e->relay_st.bytes += sizeof h + rest_len;
		} else {
			relay_lost(e);
			e->relay_st.lost_packets++;
		}
	}
	if (!e->relay_st.alive) {
		/* (a packet whose sending failed half-way may have reached the
		 * relay daemon; it is counted as not sent) */
		e->relay_st.lost_events += events;
		__atomic_store_n(&e->streams[idx].relay_unsent, e->streams[idx].relay_unsent + events,
				 __ATOMIC_RELAXED); /* a statistic: see engine_impl.h */
		tb_relay_lost_events(e->relay, idx, events);
	}
	pthread_mutex_unlock(&e->relay_lock);
}

void tb_engine_relay_metadata(struct tb_engine *e, const struct tb_ctf_trace_info *info)
{
	if (!e->relay)
		return;
	pthread_mutex_lock(&e->relay_lock);
	if (tb_relay_alive(e->relay) && (e->relay_nev == 0 || info->nevents > e->relay_nev)) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		int rc = f ? 0 : -1;
		if (f) {
			/* the whole text once; then only the classes registered since
			 * (the env block it began with stays as it was) */
			rc = e->relay_nev == 0 ? tb_ctf_metadata_write(f, info)
					       : tb_ctf_metadata_write_events(f, info, e->relay_nev);
			fclose(f);
		}
		if (rc == 0 && tb_relay_metadata(e->relay, text, len) == 0)
			e->relay_nev = info->nevents ? info->nevents : 1;
		else
			relay_lost(e);
		free(text);
	}
	pthread_mutex_unlock(&e->relay_lock);
}

/* Lost: try again when the back-off says so.  Drain thread. */
static void relay_retry(struct tb_engine *e, uint64_t now)
{
	pthread_mutex_lock(&e->relay_lock);
	int again = !e->relay_st.alive && now >= e->relay_retry_ns;
	if (again) {
		if (tb_relay_reconnect(e->relay) == 0) {
			e->relay_st.alive = 1;
			e->relay_st.reconnects++;
			e->relay_nev = 0; /* the new session needs the whole metadata */
			snprintf(e->relay_st.path, sizeof e->relay_st.path, "%s", tb_relay_path(e->relay));
			tb_engine_warn(e, "relay: reconnected; new relay session %s (what was not sent meanwhile is "
					  "counted in it as lost to the relay)", e->relay_st.path);
		} else {
			if (e->relay_backoff_ns < 30000000000ull)
				e->relay_backoff_ns *= 2;
			if (e->relay_backoff_ns > 30000000000ull)
				e->relay_backoff_ns = 30000000000ull;
			e->relay_retry_ns = now + e->relay_backoff_ns;
		}
	}
	int resend = again && e->relay_st.alive;
	pthread_mutex_unlock(&e->relay_lock);
	/* the metadata before any packet of the new session (meta_lock, then
	 * relay_lock inside: the order every metadata write takes) */
	if (resend && tb_engine_write_metadata(e) < 0)
		tb_engine_set_error(e, -EIO);
}

void tb_engine_relay_tick(struct tb_engine *e)
{
	if (!e->relay)
		return;
	uint64_t now = tb_mono_ns();
	/* relay_st.alive: written by this thread (or under relay_lock by it) */
	if (!e->relay_st.alive) {
		relay_retry(e, now);
		return;
	}
	if (!e->relay_live_us)
		return;
	if (now - e->relay_beacon_ns < (uint64_t)e->relay_live_us * 1000)
		return;
	/*
	 * A beacon promises viewers that no record stamped before its time is
	 * still to come from that stream.  The clock is read first, then the
	 * ring: an empty open packet (head at its header's end; the flusher
	 * closes idle partial packets, so an idle ring gets there) and no
	 * fallback writer holding it.  A producer that read its timestamp
	 * before our clock read commits within nanoseconds (inside one rseq
	 * critical section, or while owning the ring, which we check): the
	 * beacon is dated 1 ms before the clock read, far outside that window.
	 */
	uint64_t ts = tb_clock_read(e->s->clock_kind), margin = e->s->clock_freq / 1000;
	ts = ts > margin ? ts - margin : 0;
	pthread_mutex_lock(&e->relay_lock);
	e->relay_beacon_ns = now;
	for (unsigned ch = 0; ch < e->s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < e->s->ncpus && tb_relay_alive(e->relay); cpu++) {
			if (!tb_chan_drained(e, ch) || !tb_engine_ring_idle(e, ch, cpu))
				continue;
			if (tb_relay_beacon(e->relay, ch * e->s->ncpus + cpu, ts) != 0)
				relay_lost(e);
		}
	pthread_mutex_unlock(&e->relay_lock);
}

int tb_engine_relay_open(struct tb_engine *e, const struct tb_relay_cfg *cfg)
{
	char **names = calloc(e->nstreams ? e->nstreams : 1, sizeof *names);
	if (!names)
		return -ENOMEM;
	int rc = 0;
	for (unsigned ch = 0; ch < e->s->nchannels && !rc; ch++)
		for (unsigned cpu = 0; cpu < e->s->ncpus; cpu++) {
			char *n = malloc(TB_CHAN_NAME_MAX + 16);
			if (!n) {
				rc = -ENOMEM;
				break;
			}
			tb_stream_name(e, ch, cpu, n, TB_CHAN_NAME_MAX + 16);
			names[ch * e->s->ncpus + cpu] = n;
		}
	if (!rc)
		rc = tb_relay_open(cfg, e->nstreams, (const char *const *)names, &e->relay);
	for (unsigned i = 0; i < e->nstreams; i++)
		free(names[i]);
	free(names);
	if (rc == 0) {
		e->relay_st.enabled = 1;
		e->relay_st.alive = 1;
		e->relay_live_us = cfg->live_timer_us;
		e->relay_beacon_ns = tb_mono_ns();
		snprintf(e->relay_st.path, sizeof e->relay_st.path, "%s", tb_relay_path(e->relay));
	}
	return rc;
}

void tb_engine_relay_close(struct tb_engine *e)
{
	if (!e->relay)
		return;
	pthread_mutex_lock(&e->relay_lock);
	tb_relay_close(e->relay);
	e->relay = NULL;
	pthread_mutex_unlock(&e->relay_lock);
}

void tb_engine_relay(struct tb_engine *e, struct tb_relay_stats *out)
{
	if (!e->relay_st.enabled) {
		memset(out, 0, sizeof *out);
		return;
	}
	pthread_mutex_lock(&e->relay_lock);
	*out = e->relay_st;
	pthread_mutex_unlock(&e->relay_lock);
}
