/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the trace directory: what each stream file holds (the
 * accounting of every packet handed to it, the loss packets, the ballast
 * for a full disk), and the scan that lets a second consumer resume a
 * directory a killed one left behind.  How the bytes reach the file (page
 * cache or direct I/O, whole packets only) is stream_io.c.
 *
 * Length: a stream's accounting (each packet's counts made sane, the gaps
 * between packets, the causes readers must see, the last loss packet) is
 * one state machine; split, each half would need the other's invariants.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "consumer/engine_impl.h"
#include "platform/clock.h"


/* What readers know now: the causes of the packet just written (also for
 * the status line and the summary, read from other threads: relaxed). */
static void publish_lost(struct tb_stream *st, const uint64_t out[TB_LOSS_NCAUSES])
{
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		st->out_lost[k] = out[k];
		__atomic_store_n(&st->st.lost[k], out[k], __ATOMIC_RELAXED);
	}
}

/* Which stream file is `name`?  Return 1 and (ch, cpu), or 0. */
static int stream_of_name(const struct tb_engine *e, const char *name, unsigned *ch, unsigned *cpu)
{
	for (unsigned c = 0; c < e->s->nchannels; c++) {
		size_t n = strlen(e->s->chan[c].name);
		if (strncmp(name, e->s->chan[c].name, n) || name[n] != '_')
			continue;
		const char *p = name + n + 1;
		char *end;
		if (*p < '0' || *p > '9')
			continue;
		errno = 0;
		unsigned long v = strtoul(p, &end, 10);
		if (errno || *end || v >= e->s->ncpus)
			continue;
		*ch = c;
		*cpu = (unsigned)v;
		return 1;
	}
	return 0;
}

/*
 * Walks an existing stream file of this session: every packet must carry
 * our uuid and the right instance; a trailing partial packet (a consumer
 * killed in the middle of a write) is cut off.  Records the last sequence
 * number so that packets already on disk are not written twice.
 */
static int resume_stream(struct tb_engine *e, const char *name, unsigned ch, unsigned cpu)
{
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	int fd = openat(e->dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return tb_fail(-errno, "cannot open %s/%s: %s", e->dir, name, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return tb_fail(-EINVAL, "%s/%s is not a regular file", e->dir, name);
	}
	uint64_t off = 0, size = (uint64_t)sb.st_size;
	uint64_t want_instance = ((uint64_t)ch << 32) | cpu;
	uint32_t want_sid = e->s->chan[ch].vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN;
	while (size - off >= TB_PACKET_HEADER_SIZE) {
		struct tb_packet_header h;
		if (pread(fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
			break;
		uint64_t psize = h.packet_size / 8;
		if (h.magic != TB_CTF_MAGIC || memcmp(h.uuid, e->s->uuid, 16) ||
		    h.stream_instance_id != want_instance || h.stream_id != want_sid) {
			close(fd);
			return tb_fail(-EEXIST, "%s/%s holds a packet of another trace at offset %" PRIu64
					       "; choose an empty output directory",
				       e->dir, name, off);
		}
		/* packets are sub-buffers, or shorter when a partial one was closed at the end */
		if (h.packet_size % 64 || psize < TB_PACKET_HEADER_SIZE || psize > e->s->chan[ch].sb_size ||
		    psize > size - off)
			break; /* truncated tail: cut below */
		st->last_seq = h.packet_seq_num;
		st->have_last = 1;
		/* the causes readers know so far (format 2 packets carry them) */
		uint64_t lost[TB_LOSS_NCAUSES];
		memcpy(lost, h.lost, sizeof lost);
		publish_lost(st, lost);
		off += psize;
	}
	st->resumed = 1;
	if (off != size) {
		if (ftruncate(fd, (off_t)off) < 0) {
			int err = errno;
			close(fd);
			return tb_fail(-err, "cannot cut the partial packet at the end of %s/%s: %s",
				       e->dir, name, strerror(err));
		}
		tb_engine_warn(e, "%s: removed a partial packet of %" PRIu64 " bytes left by a killed consumer",
			       name, size - off);
	}
	st->fd = fd;
	st->size = off;
	return 0;
}

/* "kernel_cpu<N>" or "kernel_cpu<N>_r<G>" (src/kernel/kwrite.c); a channel's
 * files end in "_<digits>" after its name, so "kernel_cpu_0" is a channel's */
static int kernel_stream_name(const char *n)
{
	if (strncmp(n, "kernel_cpu", 10))
		return 0;
	n += 10;
	if (*n < '0' || *n > '9')
		return 0;
	while (*n >= '0' && *n <= '9')
		n++;
	if (!*n)
		return 1;
	if (strncmp(n, "_r", 2) || n[2] < '0' || n[2] > '9')
		return 0;
	for (n += 2; *n >= '0' && *n <= '9'; n++)
		;
	return !*n;
}

/*
 * A kernel stream (kernel_cpu<N>[_r<G>]) a killed recorder left: every
 * packet must be a kernel packet of this session (magic, uuid, stream class
 * 2, a size inside the file); a partial last packet is cut.  It is kept as
 * it is (the attaching recorder writes its own under another generation).
 */
static int resume_kernel_stream(struct tb_engine *e, const char *name)
{
	if (!e->kern)
		return tb_fail(-ENOTEMPTY, "%s/%s is a kernel stream: attach with --kernel to keep it readable, or give "
					   "a new or empty output directory", e->dir, name);
	int fd = openat(e->dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		int err = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return tb_fail(-err, "%s/%s: not a kernel stream file of this session", e->dir, name);
	}
	uint64_t off = 0, size = (uint64_t)sb.st_size;
	int rc = 0;
	while (off + TB_PACKET_HEADER_SIZE <= size) {
		struct tb_packet_header h;
		if (pread(fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
			break;
		if (h.magic != TB_CTF_MAGIC || memcmp(h.uuid, e->s->uuid, 16) || h.stream_id != TB_STREAM_KERNEL) {
			rc = tb_fail(-ENOTEMPTY, "%s/%s is not a kernel stream of this session; give a new or empty "
						 "output directory", e->dir, name);
			break;
		}
		uint64_t psz = h.packet_size / 8;
		if (psz < TB_PACKET_HEADER_SIZE || psz > size - off)
			break; /* cut here */
		off += psz;
	}
	if (!rc && off < size && ftruncate(fd, (off_t)off) < 0)
		rc = tb_fail(-errno, "%s/%s: cannot cut its partial last packet: %s", e->dir, name, strerror(errno));
	close(fd);
	return rc;
}

int tb_dir_prepare(struct tb_engine *e, int resume)
{
	int fd = dup(e->dirfd);
	if (fd < 0)
		return tb_fail(-errno, "%s: %s", e->dir, strerror(errno));
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return tb_fail(-errno, "%s: %s", e->dir, strerror(errno));
	}
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!resume) {
			rc = tb_fail(-ENOTEMPTY, "output directory %s is not empty; give a new or empty one",
				     e->dir);
			break;
		}
		unsigned ch, cpu;
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		if (kernel_stream_name(de->d_name)) {
			if ((rc = resume_kernel_stream(e, de->d_name)) < 0)
				break;
			continue;
		}
		if (!stream_of_name(e, de->d_name, &ch, &cpu)) {
			rc = tb_fail(-ENOTEMPTY, "%s/%s is not a stream of this session; give a new or "
						 "empty output directory", e->dir, de->d_name);
			break;
		}
		rc = resume_stream(e, de->d_name, ch, cpu);
		if (rc < 0)
			break;
	}
	closedir(d);
	return rc;
}

/* An empty packet (header and context only) of ring (ch, cpu): the first
 * packet of a stream that starts after losses, and the last one when the
 * end of a stream lost events readers were not told about yet. */

static void note_seen(struct tb_stream *st, const struct tb_packet_info *info)
{
	if (!st->have_seen || info->seq > st->seen_seq)
		st->seen_seq = info->seq;
	if (info->ts_end > st->seen_ts)
		st->seen_ts = info->ts_end;
	st->have_seen = 1;
}

/* Most events a sub-buffer of channel ch can hold (records of a compact header and no payload). */
static uint64_t max_events(const struct tb_engine *e, unsigned ch)
{
	return (e->s->chan[ch].sb_size - TB_PACKET_HEADER_SIZE) / TB_COMPACT_HDR_SIZE;
}

/*
 * Counts the committed events missing between the last packet accounted and
 * `cnt_begin` (the events committed before the next one, whose sequence
 * number is `seq`).  The counts come from shared memory: a gap is at most
 * what the sub-buffers between the two packets could hold, so that a
 * corrupted descriptor or counter costs a bounded, plausible count, never
 * 2^64.
 */
static void account_gap(struct tb_engine *e, unsigned ch, struct tb_stream *st, uint64_t seq, uint64_t cnt_begin)
{
	int ow = e->s->chan[ch].mode == TB_MODE_OVERWRITE;
	uint64_t gap = 0, room = 0;
	if (st->acc_ok) {
		gap = cnt_begin > st->acc ? cnt_begin - st->acc : 0;
		room = seq > st->acc_seq ? seq - st->acc_seq - 1 : 0;
	} else if (ow) {
		gap = cnt_begin; /* everything before the oldest packet kept was overwritten */
		room = seq;
	}
	if (room < UINT64_MAX / max_events(e, ch) && gap > room * max_events(e, ch))
		gap = room * max_events(e, ch);
	/* (a first packet of a discard ring: what came before it was consumed
	 * by another consumer, or this is a snapshot: not lost) */
	if (gap)
		st->lost[st->gap_cause >= 0 ? st->gap_cause : ow ? TB_LOSS_OVERWRITTEN : TB_LOSS_INVALID] += gap;
	st->gap_cause = -1;
	if (!st->acc_ok || cnt_begin > st->acc)
		st->acc = cnt_begin;
	st->acc_ok = 1;
}

/*
 * The descriptor counts of a packet, made consistent with what the consumer
 * knows: a packet that directly follows the last one accounted begins where
 * that one ended (in any mode, committed events are numbered without gaps
 * within a run of sub-buffers), and no packet holds more events than its
 * size allows.  Legitimate descriptors pass unchanged; corrupted ones cannot
 * make events appear or vanish from the accounting.
 */
static void sane_counts(const struct tb_engine *e, unsigned ch, const struct tb_stream *st, struct tb_packet_info *in)
{
	if (in->cnt_end < in->cnt_begin || in->cnt_end - in->cnt_begin > max_events(e, ch))
		in->cnt_end = in->cnt_begin + in->events;
	if (st->acc_ok && in->seq == st->acc_seq + 1 && in->cnt_begin != st->acc) {
		uint64_t n = in->cnt_end - in->cnt_begin;
		in->cnt_begin = st->acc;
		in->cnt_end = st->acc + n;
	}
}

/*
 * Whether the session's clock (TSC or CLOCK_MONOTONIC: both restart at boot)
 * can be read now to bound its timestamps: only if the session was created
 * after this boot began (always true of a live session; a recovered or
 * snapshotted file may come from before a reboot).
 */
static int clock_comparable(struct tb_engine *e)
{
	if (e->clock_now >= 0)
		return e->clock_now;
	e->clock_now = 1;
	{
		struct timespec rt, bt;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_BOOTTIME, &bt);
		int64_t boot = ((int64_t)rt.tv_sec - (int64_t)bt.tv_sec) * 1000000000ll + (rt.tv_nsec - bt.tv_nsec);
		/* relaxed: written once at creation, before any producer ran */
		uint64_t created = __atomic_load_n(&e->s->map->created_realtime_ns, __ATOMIC_RELAXED);
		/* a second of slack for the clocks' steps (NTP) */
		e->clock_now = created > (uint64_t)boot + 1000000000ull;
	}
	return e->clock_now;
}

/*
 * A packet readers would reject for its times: timestamp_end in the future
 * of the session clock (when that clock can be read now: a recovered file
 * may come from before a reboot), or timestamp_begin before the end of the
 * stream's last packet (readers require time to never go back within a
 * stream).  Returns the reason, or NULL.
 */
static const char *bad_times(struct tb_engine *e, const struct tb_stream *st, const struct tb_packet_info *in)
{
	struct tb_session *s = e->s;
	if (clock_comparable(e)) {
		/* read after the packet was copied: every timestamp a producer
		 * wrote in it was read from this clock before; the slack covers
		 * TSC skew between CPUs */
		uint64_t now = tb_clock_read(s->clock_kind);
		uint64_t slack = s->clock_kind == TB_CLOCK_TSC ? (1ull << 26) : 20000000ull;
		if (in->ts_end > now + slack)
			return "timestamp_end in the future";
	}
	if (st->have_seen && in->ts_begin < st->seen_ts)
		return "timestamp_begin before the end of the stream's previous packet";
	return NULL;
}

/*
 * The producer's loss counts of a packet (or of the control block at the
 * end) come from shared memory: a count is accepted when it did not go down
 * and grew by at most one event per tick of the session clock since the
 * last one accepted (no producer drops events faster than that; both
 * clocks tick at least once a nanosecond, TSC more often), and never beyond
 * 2^54; otherwise the last accepted count stands (the losses a corrupted
 * counter hides cannot be known; the packet is counted as bad, which makes
 * the recording's exit status say so).  Returns 1 when a count was refused.
 */
static int sane_prod(struct tb_stream *st, const uint64_t in[TB_LOSS_NCAUSES], uint64_t ts, uint64_t upper,
		     uint64_t out[TB_LOSS_NCAUSES])
{
	const uint64_t cap = 1ull << 54;
	/* `ts`: when the counts were taken as far as the packet says (its
	 * end); `upper`: a time they cannot be later than (now, when the
	 * clock can be read: a packet closed by a snapshot carries the
	 * counters as they were at the copy, after its last record; and the
	 * busy drops of the fallback protocol go on between records) */
	uint64_t room = upper > st->prod_ts ? upper - st->prod_ts : 0;
	int refused = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		uint64_t v = in[k], last = st->prod_lost[k];
		if (v < last || v - last > room || v > cap) {
			refused |= v != last;
			v = last;
		}
		out[k] = st->prod_lost[k] = v;
	}
	if (ts > st->prod_ts)
		st->prod_ts = ts;
	return refused;
}

/* The causes readers must see now: the producer's (from the packet, or the
 * counters), the overwrite count replaced by ours on overwrite rings, plus
 * the consumer's; never below what was written before.  Returns the sum. */
static uint64_t out_causes(struct tb_engine *e, unsigned ch, const struct tb_stream *st, const uint64_t prod[],
			   uint64_t out[TB_LOSS_NCAUSES])
{
	int ow = e->s->chan[ch].mode == TB_MODE_OVERWRITE;
	uint64_t sum = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		uint64_t v = k < TB_LOSS_NPRODUCER && !(ow && k == TB_LOSS_OVERWRITTEN) ? prod[k] : 0;
		v += st->lost[k];
		out[k] = v < st->out_lost[k] ? st->out_lost[k] : v;
		sum += out[k];
	}
	return sum;
}

/*
 * Accounts a valid packet handed to its stream, up to its write.  Returns 1
 * when it is to be written, with *in its counts made sane, out[] the loss
 * causes its header must carry and *disc their sum; 0 when it is not (what
 * that costs is counted).
 */
static int stream_account(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			  struct tb_packet_info *in, uint64_t out[TB_LOSS_NCAUSES], uint64_t *disc)
{
	const struct tb_packet_info *info = in;
	if (st->have_last && info->seq <= st->last_seq) {
		/* already on disk: written by a consumer killed before it released it */
		tb_stat_add(&st->st.skipped, 1);
		return 0;
	}
	sane_counts(e, ch, st, in);
	const char *why = bad_times(e, st, in);
	account_gap(e, ch, st, in->seq, in->cnt_begin);
	if (why) {
		/* not written: its committed events are counted as invalid */
		st->lost[TB_LOSS_INVALID] += in->cnt_end - in->cnt_begin;
		if (in->cnt_end > st->acc)
			st->acc = in->cnt_end;
		st->acc_seq = in->seq;
		tb_stat_add(&st->st.bad, 1);
		if (__atomic_load_n(&st->st.bad, __ATOMIC_RELAXED) == 1)
			tb_engine_warn(e, "%s cpu %u: packet %" PRIu64 " dropped: %s (%" PRIu64 "..%" PRIu64 "); its %" PRIu64
					  " event%s counted as invalid (later packets of this ring with problems are only counted)",
				       e->s->chan[ch].name, cpu, in->seq, why, in->ts_begin, in->ts_end,
				       in->cnt_end - in->cnt_begin, in->cnt_end - in->cnt_begin == 1 ? " is" : "s are");
		return 0;
	}
	note_seen(st, info);
	/* events committed in the packet but cut from it as not provably valid */
	uint64_t cut = info->cnt_end > info->cnt_begin + info->events ? info->cnt_end - info->cnt_begin - info->events : 0;
	st->lost[TB_LOSS_INVALID] += cut;
	if (info->cnt_end > st->acc)
		st->acc = info->cnt_end;
	st->acc_seq = info->seq;

	int rc = tb_engine_error(e) ? tb_engine_error(e) : tb_engine_metadata_sync(e);
	if (rc < 0) {
		/* nothing more is written after a write error (the trace ends
		 * at a whole packet): the packet's events are lost to the disk */
		st->lost[TB_LOSS_DISK] += info->events;
		tb_stat_add(&st->st.dropped, 1);
		return 0;
	}
	uint64_t prod[TB_LOSS_NCAUSES];
	uint64_t upper = clock_comparable(e) ? tb_clock_read(e->s->clock_kind) : info->ts_end;
	if (upper < info->ts_end)
		upper = info->ts_end;
	if (sane_prod(st, info->lost, info->ts_end, upper, prod)) {
		tb_stat_add(&st->st.bad, 1);
		if (__atomic_load_n(&st->st.bad, __ATOMIC_RELAXED) == 1)
			tb_engine_warn(e, "%s cpu %u: packet %" PRIu64 " carries loss counts that went down or grew "
					  "impossibly fast: the counts seen before stand (the losses it hides cannot "
					  "be known)", e->s->chan[ch].name, cpu, info->seq);
	}
	*disc = out_causes(e, ch, st, prod, out);
	return 1;
}


/*
 * The stream's first packet comes after losses: readers can only tell how
 * many from a difference between two packets (a first packet's
 * events_discarded means "an unknown number" to babeltrace2), so an empty
 * packet with nothing lost goes first.  It fills a block (a hole after its
 * header), so that the packets after it stay aligned for direct I/O.
 * `sent`: its header, for the relay.  0, or -errno (the packet it precedes
 * is lost to the disk).
 */
static int write_first_empty(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			     const struct tb_packet_info *in, struct tb_packet_header *pre)
{
	tb_stream_empty_header(e, ch, cpu, in->seq ? in->seq - 1 : 0, in->ts_begin, NULL, pre);
	pre->packet_size = TB_DIO_ALIGN * 8ull;
	struct iovec iov = { pre, sizeof *pre };
	int rc = tb_stream_write(e, ch, cpu, st, &iov, 1, sizeof *pre, TB_DIO_ALIGN);
	if (rc < 0) {
		st->lost[TB_LOSS_DISK] += in->events;
		tb_stat_add(&st->st.dropped, 1);
		return rc;
	}
	tb_stat_add(&st->st.bytes, TB_DIO_ALIGN);
	return 0;
}

/* A packet is whole in the file: what readers know now, and the statistics. */
static void written(struct tb_stream *st, uint64_t seq, uint64_t bytes, uint64_t events,
		    const uint64_t out[TB_LOSS_NCAUSES])
{
	publish_lost(st, out);
	st->last_seq = seq;
	st->have_last = 1;
	st->last_bytes = bytes;
	st->last_events = events;
	tb_stat_add(&st->st.packets, 1);
	tb_stat_add(&st->st.bytes, bytes);
	tb_stat_add(&st->st.events, events);
}

/* The packet's 8-byte words of content: what is written of it. */
static uint64_t content_words(const struct tb_packet_info *in)
{
	uint64_t content = (in->content_bytes + 7) & ~7ull;
	return content > in->packet_bytes ? in->packet_bytes : content;
}

int tb_stream_append(struct tb_engine *e, unsigned ch, unsigned cpu, const void *pkt,
		     const struct tb_packet_info *info)
{
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	struct tb_packet_info in = *info;
	uint64_t out[TB_LOSS_NCAUSES], disc;
	if (!stream_account(e, ch, cpu, st, &in, out, &disc))
		return 0;
	struct tb_packet_header pre, h;
	struct iovec iov[2], sent[3]; /* tb_stream_write() may change iov */
	int n = 0, nsent = 0;
	if (!st->resumed && st->size == 0 && disc > 0) {
		int rc = write_first_empty(e, ch, cpu, st, &in, &pre);
		if (rc < 0)
			return rc;
		sent[nsent++] = (struct iovec){ &pre, sizeof pre };
	}
	memcpy(&h, pkt, sizeof h);
	h.events_discarded = disc;
	memcpy(h.lost, out, sizeof out);
	uint64_t content = content_words(&in);
	iov[n++] = (struct iovec){ &h, sizeof h };
	if (content > sizeof h)
		iov[n++] = (struct iovec){ (uint8_t *)pkt + sizeof h, content - sizeof h };
	memcpy(sent + nsent, iov, (size_t)n * sizeof *iov);
	nsent += n;
	st->started = 1;
	int rc = tb_stream_write(e, ch, cpu, st, iov, n, content, in.packet_bytes);
	if (rc < 0) {
		st->lost[TB_LOSS_DISK] += in.events;
		tb_stat_add(&st->st.dropped, 1);
		return rc;
	}
	tb_output_packets(e, ch, cpu, sent, nsent, in.events);
	written(st, in.seq, in.packet_bytes, in.events, out);
	return 0;
}

void tb_stream_stage(struct tb_engine *e, struct tb_batch *b, uint8_t *pkt, const struct tb_packet_info *info)
{
	unsigned ch = b->ch, cpu = b->cpu;
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	struct tb_packet_info in = *info;
	uint64_t out[TB_LOSS_NCAUSES], disc;
	if (!stream_account(e, ch, cpu, st, &in, out, &disc))
		return;
	/* `started`, not st->size: the writer may be writing this stream's
	 * previous batch (st->size is its until the reap) */
	if (!st->resumed && !st->started && disc > 0) {
		struct tb_packet_header pre;
		if (write_first_empty(e, ch, cpu, st, &in, &pre) < 0)
			return;
		tb_output_packets(e, ch, cpu, &(struct iovec){ &pre, sizeof pre }, 1, 0);
	}
	st->started = 1;
	/* the header readers must see, in place (a copy of ours, or the ring
	 * itself with --trust-writers): only the fields the consumer decides,
	 * the loss causes and their sum.  Rewriting the whole header wrote
	 * the closed packet's timestamps too, which a writer's switch reads
	 * (packet_was_old(), ring/append.c: relaxed loads) while we hold the
	 * packet: a data race TSan found in the ring, with the same bytes */
	_Static_assert(TB_PKT_OFF_LOST + sizeof out == TB_PKT_OFF_TS_BEGIN, "lost[] ends where the times begin");
	memcpy(pkt + TB_PKT_OFF_LOST, out, sizeof out);
	memcpy(pkt + TB_PKT_OFF_DISCARDED, &disc, sizeof disc);
	uint64_t content = content_words(&in);
	/* no stale byte of the reused sub-buffer after the content reaches
	 * the file: the last word, and the rest of the block a direct write
	 * takes whole */
	uint64_t end = (content + TB_DIO_ALIGN - 1) & ~(uint64_t)(TB_DIO_ALIGN - 1);
	if (end > in.packet_bytes)
		end = in.packet_bytes;
	if (in.content_bytes < end)
		memset(pkt + in.content_bytes, 0, end - in.content_bytes);
	struct tb_staged *p = &b->staged[b->n++];
	*p = (struct tb_staged){ .pkt = pkt, .content = content, .padded = in.packet_bytes, .seq = in.seq,
				 .events = in.events };
	memcpy(p->out, out, sizeof out);
}

void tb_stream_write_batch(struct tb_engine *e, struct tb_batch *b)
{
	struct tb_stream *st = tb_stream_at(e, b->ch, b->cpu);
	/* nothing more is written after a write error (of an earlier batch:
	 * this one was staged before it was known) */
	b->ok = b->n && !tb_engine_error(e) ? tb_stream_write_staged(e, b->ch, b->cpu, st, b->staged, b->n, b->behind)
					    : 0;
}

void tb_stream_reap(struct tb_engine *e, struct tb_batch *b)
{
	struct tb_stream *st = tb_stream_at(e, b->ch, b->cpu);
	for (unsigned i = 0; i < b->n; i++) {
		const struct tb_staged *p = &b->staged[i];
		if (i >= b->ok) { /* the write failed: the packets it did not take are lost to the disk */
			st->lost[TB_LOSS_DISK] += p->events;
			tb_stat_add(&st->st.dropped, 1);
			continue;
		}
		struct iovec sent[2] = { { p->pkt, sizeof(struct tb_packet_header) },
					 { p->pkt + sizeof(struct tb_packet_header),
					   p->content - sizeof(struct tb_packet_header) } };
		tb_output_packets(e, b->ch, b->cpu, sent,
					p->content > sizeof(struct tb_packet_header) ? 2 : 1, p->events);
		written(st, p->seq, p->padded, p->events, p->out);
	}
	b->n = b->ok = 0;
}

void tb_stream_lose(struct tb_engine *e, unsigned ch, unsigned cpu, int cause)
{
	tb_stream_at(e, ch, cpu)->gap_cause = cause;
}

static int give_up_last_packet(struct tb_engine *e, unsigned ch, struct tb_stream *st);
static int final_loss_packet(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			     const uint64_t out[TB_LOSS_NCAUSES]);

void tb_stream_finish(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	struct tb_session *s = e->s;
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	if (tb_engine_damaged(e))
		return; /* the session file was truncated: its counters read as zeros now */
	/* no producer is left: the state and counters are final (acquire on
	 * head pairs with the commit stores, as in tb_session_counters()) */
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
	uint64_t end = __atomic_load_n(&c->st_end, __ATOMIC_RELAXED);
	uint64_t committed = end == head ? __atomic_load_n(&c->cnt_after, __ATOMIC_RELAXED)
					 : __atomic_load_n(&c->cnt_before, __ATOMIC_RELAXED);
	uint64_t raw[TB_LOSS_NCAUSES] = { 0 }, prod[TB_LOSS_NCAUSES];
	for (unsigned k = 0; k < TB_LOSS_NPRODUCER; k++)
		raw[k] = __atomic_load_n(tb_ctl_lost(c, k), __ATOMIC_RELAXED);
	/* the counters' time is now (a live session, or a file of this boot),
	 * or unknown (a file from before a reboot: only the bounds that need
	 * no clock apply) */
	uint64_t now = clock_comparable(e) ? tb_clock_read(s->clock_kind) : UINT64_MAX / 2;
	if (sane_prod(st, raw, now, now, prod)) {
		tb_stat_add(&st->st.bad, 1);
		tb_engine_warn(e, "%s cpu %u: the control block's loss counters went down or grew impossibly fast: "
				  "the counts seen before stand", s->chan[ch].name, cpu);
	}
	if (st->resumed && !st->acc_ok)
		return; /* what an earlier consumer wrote is not ours to count */
	if (committed > TB_MAX_SB_SIZE * (uint64_t)TB_MAX_SB_COUNT * 1024) /* hostile: ~2^54 */
		committed = st->acc;
	/* the sub-buffers after the last one accounted, up to the one the head
	 * is in, bound the gap (account_gap()) */
	account_gap(e, ch, st, (head >> s->chan[ch].sb_shift) + 1, committed);
	uint64_t out[TB_LOSS_NCAUSES], known = 0;
	uint64_t disc = out_causes(e, ch, st, prod, out);
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		known += st->out_lost[k];
	if (disc == known)
		return;
	/* readers do not know every loss yet: one last empty packet says it,
	 * in the place of the last packet not written (or after the last one) */
	for (int attempt = 0; attempt < 2; attempt++) {
		if (final_loss_packet(e, ch, cpu, st, out) != -EFBIG || attempt || !give_up_last_packet(e, ch, st))
			return;
		out_causes(e, ch, st, prod, out); /* with the packet given up */
	}
}

/*
 * The file cannot grow (a file size limit: EFBIG; a full disk is handled by
 * the ballast, which keeps room for the final packet): the last data packet
 * gives its place to the empty one that tells readers what was lost, its
 * events counted as lost to the disk too.  1 when done.
 */
static int give_up_last_packet(struct tb_engine *e, unsigned ch, struct tb_stream *st)
{
	if (!e->local || st->fd < 0 || !st->last_bytes || st->size < st->last_bytes ||
	    ftruncate(st->fd, (off_t)(st->size - st->last_bytes)) != 0)
		return 0;
	tb_engine_warn(e, "%s: the stream file cannot grow (file size limit): its last packet (%" PRIu64
			  " event%s) gave its place to the packet that counts what was lost",
		       e->s->chan[ch].name, st->last_events, st->last_events == 1 ? "" : "s");
	st->size -= st->last_bytes;
	st->lost[TB_LOSS_DISK] += st->last_events;
	tb_stat_add(&st->st.events, (uint64_t)0 - st->last_events);
	tb_stat_add(&st->st.packets, (uint64_t)0 - 1);
	tb_stat_add(&st->st.bytes, (uint64_t)0 - st->last_bytes);
	st->last_bytes = st->last_events = 0;
	return 1;
}

/* The last empty packet of the stream, with the loss causes `out`: 0, or -errno of its write. */
static int final_loss_packet(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			     const uint64_t out[TB_LOSS_NCAUSES])
{
	uint64_t seq = st->have_seen ? st->seen_seq : 0;
	if (st->have_last && seq <= st->last_seq)
		seq = st->last_seq; /* an empty packet may repeat a number (babeltrace2 and our reader accept it) */
	uint64_t ts = st->seen_ts;
	struct tb_packet_header h;
	tb_stream_empty_header(e, ch, cpu, seq, ts, out, &h);
	struct tb_packet_header pre;
	struct iovec iov[2];
	int n = 0;
	if (!st->resumed && st->size == 0) { /* as in tb_stream_append: counts need a packet before them */
		tb_stream_empty_header(e, ch, cpu, seq ? seq - 1 : 0, ts, NULL, &pre);
		iov[n++] = (struct iovec){ &pre, sizeof pre };
	}
	iov[n++] = (struct iovec){ &h, sizeof h };
	/* this is the packet the ballast kept room for: free it first */
	tb_ballast_free(e);
	uint64_t bytes = (uint64_t)n * sizeof h;
	/* written even after an earlier write error: the file ends at a whole
	 * packet, and this one tells readers what the error cost */
	struct iovec sent[2];
	memcpy(sent, iov, sizeof sent);
	int rc = tb_stream_write(e, ch, cpu, st, iov, n, bytes, bytes);
	if (rc == 0) {
		tb_output_packets(e, ch, cpu, sent, n, 0);
		publish_lost(st, out);
		st->last_seq = seq;
		st->have_last = 1;
		tb_stat_add(&st->st.packets, 1);
		tb_stat_add(&st->st.bytes, bytes);
	}
	return rc;
}

/* ---------------------------------------------------------------------- */
/* the ballast                                                             */
/* ---------------------------------------------------------------------- */

#define BALLAST ".tracebuf-reserve"

/*
 * A full disk must not leave a trace that says "lost none": the loss
 * packets written at the end need room, and so may a last metadata.  A
 * dot-file (readers ignore it) holds that room, allocated up front: 4 KiB
 * per stream (a loss packet, or two, in a new block) and 256 KiB for
 * metadata, at most 16 MiB.  It is removed when the trace is finished.
 */
void tb_ballast_make(struct tb_engine *e)
{
	uint64_t n = e->nstreams < 3840 ? e->nstreams : 3840;
	off_t size = (off_t)(n * 4096 + 256ull * 1024);
	int fd = openat(e->dirfd, BALLAST, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		tb_engine_warn(e, "cannot create %s/%s (%s): after a full disk the trace may not say how many "
				  "events it lost", e->dir, BALLAST, strerror(errno));
		return;
	}
	int rc = posix_fallocate(fd, 0, size);
	close(fd);
	if (rc) {
		unlinkat(e->dirfd, BALLAST, 0);
		tb_engine_warn(e, "cannot reserve %lld bytes in %s (%s): after a full disk the trace may not say "
				  "how many events it lost", (long long)size, e->dir, strerror(rc));
		return;
	}
	e->ballast = 1;
}

void tb_ballast_free(struct tb_engine *e)
{
	if (e->ballast && e->dirfd >= 0) {
		unlinkat(e->dirfd, BALLAST, 0);
		e->ballast = 0;
	}
}

void tb_streams_close(struct tb_engine *e)
{
	for (unsigned i = 0; i < e->nstreams; i++) {
		if (e->streams[i].dfd >= 0)
			close(e->streams[i].dfd);
		e->streams[i].dfd = -2;
		if (e->streams[i].fd >= 0) {
			close(e->streams[i].fd);
			e->streams[i].fd = -1;
			if (e->streams[i].size == 0 && e->dirfd >= 0) {
				/* created, then cut back to nothing (a write error on
				 * its first packet): no stream file is ever left empty,
				 * so that readers can call an empty one damage */
				char name[TB_CHAN_NAME_MAX + 16];
				tb_stream_name(e, i / e->s->ncpus, i % e->s->ncpus, name, sizeof name);
				unlinkat(e->dirfd, name, 0);
			}
		}
	}
}
