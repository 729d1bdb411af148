/* SPDX-License-Identifier: MIT */
/*
 * kwrite.c - the kernel streams: one per CPU, `kernel_cpu<N>`, of whole
 * CTF packets of stream class 2 (TB_STREAM_KERNEL), laid out with struct
 * tb_packet_header (core/format.h) and the record codec (core/record.h)
 * like every other tracebuf packet, so that the metadata's one packet
 * header and context describe them.  Each packet is appended to the
 * stream's file in the trace directory (none when the recording has no
 * directory: relay-only) and then handed to the sink (tb_kernel_set_output:
 * the engine's outputs, e.g. the relay daemon), as the engine does with the
 * user streams' packets once the local copy has them.
 *
 * A packet holds the events of one pass of one CPU (at most TB_KPKT_SIZE
 * bytes); its size is its content rounded up to 8 bytes.  Losses are the
 * stream's running totals by cause, as for the user streams: `full` (the
 * perf ring overflowed: PERF_RECORD_LOST), `invalid` (records refused),
 * `disk`.  A stream whose first packet would carry losses begins with an
 * empty packet of zero counts (babeltrace2 then reports the exact number),
 * and losses after the last packet go in a last empty packet
 * (tb_kw_finish), as docs/DESIGN.md "Losses in the trace" says for the
 * user streams.  A packet that cannot be written is cut from the file
 * (ftruncate back to the last whole packet) and its events are counted as
 * lost to the disk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/record.h"
#include "kernel/kernel_impl.h"

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	for (unsigned i = 0; i < TB_LOSS_NCAUSES; i++)
		s += v[i];
	return s;
}

static void fill_header(const struct tb_kernel *k, const struct kcpu *c, struct tb_packet_header *h, uint64_t begin,
			uint64_t end, uint32_t content, uint32_t padded, const uint64_t *lost)
{
	memset(h, 0, sizeof *h);
	h->magic = TB_CTF_MAGIC;
	memcpy(h->uuid, k->uuid, 16);
	h->stream_id = TB_STREAM_KERNEL;
	h->stream_instance_id = ((uint64_t)(TB_KINSTANCE_CHANNEL - k->gen) << 32) | (uint32_t)c->cpu;
	h->timestamp_begin = begin;
	h->timestamp_end = end;
	h->content_size = (uint64_t)content * 8;
	h->packet_size = (uint64_t)padded * 8;
	h->packet_seq_num = c->seq;
	h->cpu_id = (uint32_t)c->cpu;
	for (unsigned i = 0; i < TB_LOSS_NCAUSES; i++)
		h->lost[i] = lost ? lost[i] : 0;
	h->events_discarded = lost ? sum(lost) : 0;
}

void tb_kw_name(const struct tb_kernel *k, unsigned cpu, char *buf, size_t len)
{
	if (k->gen)
		snprintf(buf, len, TB_KERNEL_STREAM_FMT "_r%u", cpu, k->gen);
	else
		snprintf(buf, len, TB_KERNEL_STREAM_FMT, cpu);
}

unsigned tb_kernel_nstreams(const struct tb_kernel *k)
{
	return k->ncpu;
}

void tb_kernel_stream_name(const struct tb_kernel *k, unsigned i, char *buf, size_t len)
{
	tb_kw_name(k, i < k->ncpu ? (unsigned)k->cpus[i].cpu : i, buf, len);
}

void tb_kernel_empty_header(const struct tb_kernel *k, unsigned i, uint64_t ts, struct tb_packet_header *h)
{
	struct kcpu c0 = { .cpu = i < k->ncpu ? k->cpus[i].cpu : (int)i };
	fill_header(k, &c0, h, ts, ts, TB_PACKET_HEADER_SIZE, TB_PACKET_HEADER_SIZE, NULL);
}

/* Appends bytes [0, len) of buf (a whole packet holding `events`) to the
 * stream, then hands it to the sink; 0, or -errno (the file is cut back,
 * the sink gets nothing). */
static int put(struct tb_kernel *k, struct kcpu *c, const uint8_t *buf, uint32_t len, uint64_t events)
{
	if (k->dirfd < 0)
		goto written; /* relay-only: the sink's copy is the trace */
	if (c->sfd < 0) {
		char name[48];
		tb_kw_name(k, (unsigned)c->cpu, name, sizeof name);
		/* never over a file of the directory (tb_kernel_set_output chose a free generation) */
		c->sfd = openat(k->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (c->sfd < 0)
			return -errno;
	}
	uint32_t done = 0;
	while (done < len) {
		ssize_t w = pwrite(c->sfd, buf + done, len - done, (off_t)(c->file_off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? -errno : -EIO;
			if (ftruncate(c->sfd, (off_t)c->file_off) < 0) {
				/* the file keeps a partial packet: nothing more may follow it */
			}
			return e;
		}
		done += (uint32_t)w;
	}
	c->file_off += len;
written:
	if (k->sink) {
		struct iovec iov[2] = { { (void *)buf, TB_PACKET_HEADER_SIZE },
					{ (void *)(buf + TB_PACKET_HEADER_SIZE), len - TB_PACKET_HEADER_SIZE } };
		k->sink(k->sink_arg, (unsigned)(c - k->cpus), iov, len > TB_PACKET_HEADER_SIZE ? 2 : 1, events);
	}
	c->seq++;
	__atomic_store_n(&k->st_packets, k->st_packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&k->st_bytes, k->st_bytes + len, __ATOMIC_RELAXED);
	return 0;
}

static void write_error(struct tb_kernel *k, struct kcpu *c, int rc)
{
	if (!k->err)
		k->err = rc;
	tb_kernel_warn(k, "cannot write the kernel stream of CPU %d: %s (its events are counted as lost to the disk)",
		       c->cpu, strerror(-rc));
}

/* An empty packet (header and context only) at time ts with these totals. */
static int put_empty(struct tb_kernel *k, struct kcpu *c, uint64_t ts, const uint64_t *lost)
{
	struct tb_packet_header h;
	fill_header(k, c, &h, ts, ts, TB_PACKET_HEADER_SIZE, TB_PACKET_HEADER_SIZE, lost);
	int rc = put(k, c, (const uint8_t *)&h, TB_PACKET_HEADER_SIZE, 0);
	if (!rc) {
		if (lost)
			memcpy(c->written_lost, lost, sizeof c->written_lost);
		else
			memset(c->written_lost, 0, sizeof c->written_lost);
		c->wrote = 1;
	}
	return rc;
}

void tb_kw_flush(struct tb_kernel *k, struct kcpu *c)
{
	if (!c->pkt_events)
		return;
	uint32_t events = c->pkt_events;
	c->pkt_events = 0;
	if (k->err) {
		/* the disk already failed: count, do not write */
		kc_lost(c, TB_LOSS_DISK, events);
		return;
	}
	int rc = 0;
	if (!c->wrote && sum(c->lost))
		rc = put_empty(k, c, c->pkt_begin, NULL); /* the exact count for babeltrace2 */
	uint32_t padded = (c->pkt_len + 7u) & ~7u;
	memset(c->pkt + c->pkt_len, 0, padded - c->pkt_len);
	fill_header(k, c, (struct tb_packet_header *)(void *)c->pkt, c->pkt_begin, c->pkt_prev, c->pkt_len, padded,
		    c->lost);
	if (!rc)
		rc = put(k, c, c->pkt, padded, events);
	if (rc) {
		kc_lost(c, TB_LOSS_DISK, events);
		write_error(k, c, rc);
		return;
	}
	memcpy(c->written_lost, c->lost, sizeof c->lost);
	c->wrote = 1;
	c->last_ts = c->pkt_prev;
	__atomic_store_n(&k->st_delivered, k->st_delivered + events, __ATOMIC_RELAXED);
}

void tb_kw_append(struct tb_kernel *k, struct kcpu *c, uint32_t cls, uint64_t ev_ts, const uint8_t *payload,
		  uint32_t len)
{
	uint32_t id = TB_KERNEL_ID_BASE + cls;
	uint64_t ts = ev_ts < c->last_ts ? c->last_ts : ev_ts; /* a stream's time never goes back */
	if (ts < k->floor)
		ts = k->floor; /* nor before what live viewers were promised (tb_kernel_through) */
	if (c->pkt_events) {
		if (ts < c->pkt_prev)
			ts = c->pkt_prev;
		if (c->pkt_len + tb_hdr_size(id, ts, c->pkt_prev) + len > TB_KPKT_SIZE)
			tb_kw_flush(k, c);
	}
	if (!c->pkt_events) {
		if (ts < c->last_ts)
			ts = c->last_ts;
		c->pkt_len = TB_PACKET_HEADER_SIZE;
		c->pkt_begin = c->pkt_prev = ts;
	}
	c->pkt_len += tb_hdr_put(c->pkt + c->pkt_len, id, ts, c->pkt_prev);
	memcpy(c->pkt + c->pkt_len, payload, len);
	c->pkt_len += len;
	c->pkt_prev = ts;
	c->pkt_events++;
}

void tb_kw_finish(struct tb_kernel *k, struct kcpu *c, uint64_t now)
{
	tb_kw_flush(k, c);
	if (!memcmp(c->lost, c->written_lost, sizeof c->lost) || k->err)
		return;
	uint64_t ts = c->wrote ? c->last_ts : now;
	int rc = 0;
	if (!c->wrote)
		rc = put_empty(k, c, ts, NULL);
	if (!rc)
		rc = put_empty(k, c, ts, c->lost);
	if (rc)
		write_error(k, c, rc);
}
