/* SPDX-License-Identifier: MIT */
/*
 * relay.c - the relay daemon client (relay.h has the wire format).
 *
 * The protocol's commands, over relay_net.c's socket layer, where every
 * wait has a deadline: connecting, each whole command with its whole
 * reply, and each whole data packet must be done within timeout_ms, or the relay is declared lost (a relay that answers one byte
 * at a time, or reads nothing, costs at most that).  An owner may also set
 * an absolute cap (tb_relay_cap(), from another thread: the end of the
 * recording), which cuts any wait at once.  The engine calls this from
 * its relay sender thread only (engine_relay_send.c), never from the threads
 * that write the local copy.
 */
#define _GNU_SOURCE
#include "relay/relay_impl.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h> /* tb_errmsg */

#include "core/view.h" /* tb_fail */

/*
 * What a packet of the relay's copy is rounded up to: 8 bytes, its content
 * as sent.  LTTng's tracers round a packet up to a page (their consumer
 * splices whole pages); CTF, lttng-relayd, its live viewers and babeltrace2
 * need no more than 8 bytes (tracebuf's kernel packets were always that),
 * and a quiet program's packet closed every live period holds a few hundred
 * bytes: with a page, ~9x its content on the relay's disk (measured,
 * docs/FLEET.md "The relay's copy").
 */
#define TB_RELAY_PACKET_ALIGN 8u

static int put_name(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n == 0 || n >= cap)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static int add_stream(struct tb_relay *r, const char *name, uint64_t *handle)
{
	struct __attribute__((packed)) {
		char channel[CHAN_LEN];
		char path[PATH_LEN];
		uint64_t tf_size, tf_count;
	} *m = calloc(1, sizeof *m);
	if (!m)
		return tb_fail(-ENOMEM, "out of memory");
	put_name(m->channel, sizeof m->channel, name);
	put_name(m->path, sizeof m->path, r->path);
	struct __attribute__((packed)) {
		uint64_t handle;
		uint32_t ret;
	} rep;
	int rc = tb_relay_command(r, CMD_ADD_STREAM, m, sizeof *m, NULL, 0, &rep, sizeof rep);
	free(m);
	if (rc)
		return tb_fail(rc, "%s", r->err);
	if (be32toh(rep.ret) != LTTNG_OK)
		return tb_fail(-EPROTO, "relay %s: the relay daemon refused stream %s/%s (code %u)", r->addr, r->path,
			       name, be32toh(rep.ret));
	*handle = be64toh(rep.handle);
	return 0;
}

static int relay_send_packet(struct tb_relay *r, struct rstream *s, const struct tb_packet_header *h,
			     const void *rest, size_t rest_len);

/* A packet's packet_size (bits) in the relay's copy: its `data` bytes
 * (the header and the content, rounded up to 8 bytes: what is sent)
 * rounded up to TB_RELAY_PACKET_ALIGN, never more than the sub-buffer's
 * (`bits`: a packet whose content fills it is unchanged). */
static uint64_t relay_packet_bits(uint64_t data, uint64_t bits)
{
	uint64_t padded = (data + TB_RELAY_PACKET_ALIGN - 1) & ~(uint64_t)(TB_RELAY_PACKET_ALIGN - 1);
	return padded * 8 < bits ? padded * 8 : bits;
}

/*
 * Connects both connections, agrees on the version, creates the session
 * (directory HOST/NAME-DATE, "-2", "-3"... after a reconnection in the same
 * second) and adds the metadata stream.  Data streams are added at their
 * first packet.  Return: 0, or -errno with tb_errmsg().
 */
static int relay_session(struct tb_relay *r)
{
	char host[256];
	unsigned cport, dport;
	int rc = tb_relay_parse_url(r->url, host, sizeof host, &cport, &dport);
	if (rc)
		return rc;
	r->lost = 0;
	r->err[0] = 0;
	r->acks = r->ack_first = r->ack_got = r->questions = 0; /* a new control connection */
	r->cork_len = 0;
	r->corked = 0;
	if ((rc = r->ctl = tb_relay_connect(r, host, cport)) < 0 || (rc = r->data = tb_relay_connect(r, host, dport)) < 0)
		return rc;

	struct {
		uint32_t major, minor;
	} v = { htobe32(PROTO_MAJOR), htobe32(PROTO_MINOR) }, vr;
	if ((rc = tb_relay_command(r, CMD_VERSION, &v, sizeof v, NULL, 0, &vr, sizeof vr)) != 0)
		return tb_fail(rc, "%s (the version handshake)", r->err);
	if (be32toh(vr.major) != PROTO_MAJOR || be32toh(vr.minor) < 4)
		return tb_fail(-EPROTO, "relay %s: the relay daemon speaks protocol %u.%u; tracebuf needs 2.4 or later "
					"(lttng-relayd 2.4+)", r->addr, be32toh(vr.major), be32toh(vr.minor));
	r->minor = be32toh(vr.minor) < PROTO_MINOR ? be32toh(vr.minor) : PROTO_MINOR;

	/* the session's directory, as LTTng names it: NAME-YYYYMMDD-HHMMSS */
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	char date[32], path[sizeof r->path];
	strftime(date, sizeof date, "%Y%m%d-%H%M%S", &tm);
	snprintf(path, sizeof path, "%s/%s-%s", r->host, r->name, date);
	if (r->sessions && !strncmp(r->path, path, strlen(path)))
		snprintf(path + strlen(path), sizeof path - strlen(path), "-%u", r->sessions + 1);
	memcpy(r->path, path, sizeof r->path);

	struct __attribute__((packed)) {
		char name[NAME_LEN];
		char host[HOST_LEN];
		uint32_t live_timer, snapshot;
	} cs;
	memset(&cs, 0, sizeof cs);
	put_name(cs.name, sizeof cs.name, r->name);
	put_name(cs.host, sizeof cs.host, r->host);
	cs.live_timer = htobe32(r->live_us);
	struct __attribute__((packed)) {
		uint64_t id;
		uint32_t ret;
	} csr;
	if ((rc = tb_relay_command(r, CMD_CREATE_SESSION, &cs, sizeof cs, NULL, 0, &csr, sizeof csr)) != 0)
		return tb_fail(rc, "%s (creating the session)", r->err);
	if (be32toh(csr.ret) != LTTNG_OK)
		return tb_fail(-EPROTO, "relay %s: the relay daemon refused to create session '%s' (code %u)", r->addr,
			       r->name, be32toh(csr.ret));
	for (unsigned i = 0; i <= r->n; i++) {
		r->streams[i].added = 0;
		r->streams[i].next_seq = 1;
		r->streams[i].sent = 0;
		r->streams[i].last_ts = r->streams[i].beacon_ts = 0;
		r->streams[i].asks = 0;
		r->streams[i].written = 0;
	}
	if ((rc = add_stream(r, "metadata", &r->streams[r->n].handle)) != 0)
		return rc;
	r->streams[r->n].added = 1;
	/* Every stream that may carry data is announced now, as LTTng's
	 * consumer does: a live viewer merges the streams it knows by time, and
	 * a stream added later (at its first packet) may begin before what it
	 * already showed of the others, which it rejects as time going back.
	 * Each begins with an empty packet at time 0: the relay daemon says
	 * "inactive" (beacons) only for a stream that has a packet, and a
	 * viewer waits for every stream without one. */
	for (unsigned i = 0; i < r->n; i++)
		if (r->streams[i].first.magic) {
			if ((rc = add_stream(r, r->streams[i].name, &r->streams[i].handle)) != 0)
				return rc;
			r->streams[i].added = 1;
		}
	uint32_t ok;
	if ((rc = tb_relay_command(r, CMD_STREAMS_SENT, NULL, 0, NULL, 0, &ok, sizeof ok)) != 0)
		return tb_fail(rc, "%s", r->err);
	for (unsigned i = 0; i < r->n; i++)
		if (r->streams[i].first.magic &&
		    (rc = relay_send_packet(r, &r->streams[i], &r->streams[i].first, NULL, 0)) != 0)
			return tb_fail(rc, "%s (the streams' first packets)", r->err);
	r->sessions++;
	return 0;
}

static void relay_disconnect(struct tb_relay *r)
{
	if (r->ctl >= 0)
		close(r->ctl);
	if (r->data >= 0)
		close(r->data);
	r->ctl = r->data = -1;
}

static void relay_free(struct tb_relay *r)
{
	relay_disconnect(r);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	free(r->streams);
	free(r);
}

int tb_relay_open(const struct tb_relay_cfg *cfg, unsigned nstreams, const char *const *names,
		  const struct tb_packet_header *first, struct tb_relay **out)
{
	char host[256];
	unsigned cport, dport;
	int rc = tb_relay_parse_url(cfg->url, host, sizeof host, &cport, &dport);
	if (rc)
		return rc;
	if (strchr(cfg->session_name, '/') || !cfg->session_name[0] || strlen(cfg->session_name) >= NAME_LEN - 24)
		return tb_fail(-EINVAL, "relay session name '%s': want 1..%d characters, no '/'", cfg->session_name,
			       NAME_LEN - 25);
	struct tb_relay *r = calloc(1, sizeof *r);
	struct rstream *st = calloc((size_t)nstreams + 1, sizeof *st);
	if (!r || !st) {
		free(r);
		free(st);
		return tb_fail(-ENOMEM, "out of memory");
	}
	r->streams = st;
	r->n = nstreams;
	r->ctl = r->data = -1;
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	snprintf(r->addr, sizeof r->addr, "%s", cfg->url);
	snprintf(r->url, sizeof r->url, "%s", cfg->url);
	snprintf(r->name, sizeof r->name, "%s", cfg->session_name);
	if (cfg->hostname)
		snprintf(r->host, sizeof r->host, "%s", cfg->hostname);
	else if (gethostname(r->host, sizeof r->host - 1) != 0)
		snprintf(r->host, sizeof r->host, "unknown");
	r->host[sizeof r->host - 1] = 0;
	r->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 5000;
	r->live_us = cfg->live_timer_us;
	for (unsigned i = 0; i < nstreams; i++)
		if (put_name(st[i].name, sizeof st[i].name, names[i])) {
			rc = tb_fail(-EINVAL, "relay %s: stream name '%s' too long", r->addr, names[i]);
			relay_free(r);
			return rc;
		} else if (first) {
			st[i].first = first[i];
		}
	if ((rc = relay_session(r)) != 0) {
		relay_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int tb_relay_reconnect(struct tb_relay *r)
{
	relay_disconnect(r);
	int rc = relay_session(r);
	if (rc) {
		relay_disconnect(r);
		tb_relay_lose(r, -rc, "reconnecting");
	}
	return rc;
}

void tb_relay_lost_events(struct tb_relay *r, unsigned i, uint64_t n)
{
	if (i < r->n)
		r->streams[i].lost += n;
}

uint64_t tb_relay_lost_total(const struct tb_relay *r, unsigned i)
{
	return i < r->n ? r->streams[i].lost : 0;
}

int tb_relay_metadata(struct tb_relay *r, const char *text, size_t len)
{
	if (!len)
		return r->lost ? -EPIPE : 0;
	struct __attribute__((packed)) {
		uint64_t stream;
		uint32_t padding;
	} m = { htobe64(r->streams[r->n].handle), 0 };
	return tb_relay_command(r, CMD_SEND_METADATA, &m, sizeof m, text, len, NULL, 0);
}

struct __attribute__((packed)) index_msg {
	uint64_t relay_stream, net_seq, packet_size, content_size, ts_begin, ts_end, discarded, stream_id;
	uint64_t instance, packet_seq; /* protocol 2.8+ */
};

/* An index entry, its answer read later (relay_net.c, tb_relay_acks()): a
 * round trip per packet would cost the sender two context switches and a
 * wait for each. */
static int send_index(struct tb_relay *r, const struct index_msg *m)
{
	size_t len = r->minor >= 8 ? sizeof *m : offsetof(struct index_msg, instance);
	return tb_relay_command_acked(r, CMD_SEND_INDEX, m, len, UINT_MAX, 0);
}

int tb_relay_packet(struct tb_relay *r, unsigned i, const struct tb_packet_header *h0, const void *rest,
		    size_t rest_len)
{
	if (r->lost)
		return -EPIPE;
	if (i >= r->n)
		return -EINVAL;
	struct rstream *s = &r->streams[i];
	if (!s->added) {
		uint32_t ok;
		if (add_stream(r, s->name, &s->handle) != 0 ||
		    tb_relay_command(r, CMD_STREAMS_SENT, NULL, 0, NULL, 0, &ok, sizeof ok) != 0)
			return tb_relay_lose(r, EPROTO, "adding a stream");
		s->added = 1;
	}
	/* A beacon told viewers that nothing before its time was to come, but
	 * the packet that was open (empty) then began earlier: its records all
	 * came after the beacon (tb_relay_beacon()'s contract), so the copy
	 * sent begins at the beacon (a compact 27-bit record time still
	 * decodes: the new base is nearer to it).  Viewers reject a stream
	 * that goes back in time. */
	struct tb_packet_header hb = *h0, *h = &hb;
	if (hb.timestamp_begin < s->beacon_ts) {
		hb.timestamp_begin = s->beacon_ts;
		if (hb.timestamp_end < hb.timestamp_begin)
			hb.timestamp_end = hb.timestamp_begin;
	}
	/* events that never reached the relay: a loss of the relay's copy
	 * (cause "relay"), in this packet's running totals and every later one */
	hb.events_discarded += s->lost;
	hb.lost[TB_LOSS_RELAY] += s->lost;
	/* The relay's copy of the packet ends where its content does (relay.h:
	 * packet_size = the content rounded up to TB_RELAY_PACKET_ALIGN), in
	 * the header sent and in the index: the relay daemon writes a packet's
	 * padding as zeros, and a partial sub-buffer the live period closed
	 * would cost its whole size on the relay's disk (256 KiB a second per
	 * CPU for a quiet program).  The local copy keeps the sub-buffer's size
	 * (its padding is a hole there). */
	hb.packet_size = relay_packet_bits(sizeof hb + rest_len, hb.packet_size);
	return relay_send_packet(r, s, h, rest, rest_len);
}

static int relay_send_packet(struct tb_relay *r, struct rstream *s, const struct tb_packet_header *h,
			     const void *rest, size_t rest_len)
{
	uint64_t data = sizeof *h + rest_len, packet = h->packet_size / 8;
	if (packet < data || data > UINT32_MAX || packet - data > UINT32_MAX)
		return -EINVAL; /* checked by the engine before: not a packet */
	struct __attribute__((packed)) {
		uint64_t circuit, stream, seq;
		uint32_t size, padding;
	} dh = { 0, htobe64(s->handle), htobe64(s->next_seq), htobe32((uint32_t)data),
		 htobe32((uint32_t)(packet - data)) };
	struct iovec iov[3] = { { &dh, sizeof dh }, { (void *)h, sizeof *h }, { (void *)rest, rest_len } };
	int rc = tb_relay_send_all(r, r->data, iov, rest_len ? 3 : 2, tb_relay_deadline(r));
	if (rc)
		return rc;
	/* the index says what the header says (content_size exact, not the
	 * 8-byte words sent), as LTTng's consumer's entries do */
	uint64_t content_bits = h->content_size < data * 8 ? h->content_size : data * 8;
	struct index_msg m = {
		htobe64(s->handle), htobe64(s->next_seq), htobe64(h->packet_size), htobe64(content_bits),
		htobe64(h->timestamp_begin), htobe64(h->timestamp_end), htobe64(h->events_discarded),
		htobe64(h->stream_id), htobe64(h->stream_instance_id), htobe64(h->packet_seq_num),
	};
	s->next_seq++;
	s->sent = 1;
	s->last_ts = h->timestamp_end;
	return send_index(r, &m);
}

int tb_relay_ask_written(struct tb_relay *r, unsigned i, uint64_t seq)
{
	if (r->lost)
		return -EPIPE;
	if (i >= r->n)
		return -EINVAL;
	struct rstream *s = &r->streams[i];
	if (!s->added || seq == 0 || seq >= s->next_seq)
		return -EINVAL; /* not a packet sent in this relay session: the caller's bug */
	struct __attribute__((packed)) {
		uint64_t stream, last;
	} m = { htobe64(s->handle), htobe64(seq) };
	int rc = tb_relay_command_acked(r, CMD_DATA_PENDING, &m, sizeof m, i, seq);
	if (rc == 0)
		s->asks++;
	return rc;
}

int tb_relay_asking(const struct tb_relay *r, unsigned i)
{
	return i < r->n && r->streams[i].asks;
}

uint64_t tb_relay_written_upto(const struct tb_relay *r, unsigned i)
{
	return i < r->n ? r->streams[i].written : 0;
}

uint64_t tb_relay_sent_seq(const struct tb_relay *r, unsigned i)
{
	return i < r->n ? r->streams[i].next_seq - 1 : 0;
}

int tb_relay_answers(struct tb_relay *r, int wait)
{
	if (r->lost)
		return -EPIPE;
	return tb_relay_acks(r, wait);
}

int tb_relay_no_progress(struct tb_relay *r, uint64_t since_ns)
{
	if (r->lost)
		return -EPIPE;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - since_ns < (uint64_t)r->timeout_ms * 1000000ull)
		return 0;
	return tb_relay_lose(r, ETIMEDOUT, "the relay daemon wrote none of the packets in flight (data pending)");
}

int tb_relay_beacon(struct tb_relay *r, unsigned i, uint64_t ts)
{
	if (r->lost)
		return -EPIPE;
	if (i >= r->n)
		return -EINVAL;
	struct rstream *s = &r->streams[i];
	int sent = s->sent;
	s->sent = 0;
	if (!s->added || sent || ts <= s->last_ts)
		return 0;
	/* idle: nothing up to ts (packet_size 0 marks a beacon) */
	struct index_msg m = { htobe64(s->handle), htobe64(s->next_seq - 1), 0, 0, 0, htobe64(ts), 0, 0, 0, 0 };
	int rc = send_index(r, &m);
	if (rc == 0)
		s->last_ts = s->beacon_ts = ts;
	return rc;
}

int tb_relay_beacon_end(struct tb_relay *r, unsigned i, uint64_t ts)
{
	if (i < r->n)
		r->streams[i].sent = 0; /* its last packet is its last: nothing more comes */
	return tb_relay_beacon(r, i, ts);
}

int tb_relay_alive(const struct tb_relay *r)
{
	return !r->lost;
}

const char *tb_relay_error(const struct tb_relay *r)
{
	return r->err;
}

const char *tb_relay_path(const struct tb_relay *r)
{
	return r->path;
}

void tb_relay_close(struct tb_relay *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i <= r->n && !r->lost; i++) {
		if (!r->streams[i].added)
			continue;
		/* the last data packet's number; all ones when none came on the
		 * data connection (the metadata stream: its text comes on the
		 * control connection, and the relay daemon would wait for ever
		 * for a packet numbered 0) */
		uint64_t last = i == r->n || r->streams[i].next_seq <= 1 ? UINT64_MAX : r->streams[i].next_seq - 1;
		struct __attribute__((packed)) {
			uint64_t stream, last;
		} m = { htobe64(r->streams[i].handle), htobe64(last) };
		uint32_t ok;
		tb_relay_command(r, CMD_CLOSE_STREAM, &m, sizeof m, NULL, 0, &ok, sizeof ok);
	}
	relay_free(r);
}
