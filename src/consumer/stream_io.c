/* SPDX-License-Identifier: MIT */
/*
 * stream_io.c - how packets reach a stream file: through the page cache, or
 * with direct I/O from the engine's staging area, several packets per
 * system call.  What is written, and what a failed write costs, is decided
 * in stream.c; here a stream file only ever grows by whole packets, and a
 * failed write cuts it back to its last whole packet.
 *
 * Direct I/O (issue 14).  Writing a packet through the page cache costs the
 * kernel's copy of every byte into it: on the benchmark machine that copy
 * was two thirds of the recorder's CPU time, where the packet had already
 * been copied once (out of the ring, to be validated: consume.c) and needs
 * no second copy.  So the drain thread stages the complete packets a ring
 * has ready (up to TB_STAGE_BYTES) in a batch of its aligned staging area,
 * each with the header readers must see patched in and zeros after its
 * content up to the next TB_DIO_ALIGN (a reused sub-buffer's stale bytes
 * never reach the file), and the writer thread (engine_run.c) writes each
 * run with one O_DIRECT pwritev() (tb_stream_write_staged()) while the drain
 * thread fills the next batch: the device reads the packets from there.  Large requests are
 * what the device wants (measured on the benchmark VM: 75 MB/s in 4 KiB
 * writes, 1.7 GB/s in 256 KiB ones, 2.7 GB/s from 1 MiB up), and a recorder
 * that falls behind stages more packets per write, which is what catches it
 * up.  Packets under TB_DIO_MIN (a flush of a quiet ring), and packets whose
 * offset is not aligned (a stream resumed from another consumer's file),
 * go through the page cache.  A file system that refuses O_DIRECT, or a
 * write it refuses (EINVAL: an alignment it needs), turns direct I/O off for
 * that file: the packets are written again through the page cache.
 * TRACEBUF_NO_DIRECT_IO=1 turns it off for the recording.  Both paths write
 * the same bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "consumer/engine_impl.h"
#include "platform/iov.h"

int tb_stream_open(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st)
{
	char name[TB_CHAN_NAME_MAX + 16];
	tb_stream_name(e, ch, cpu, name, sizeof name);
	int fd = openat(e->dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return tb_fail(-errno, "cannot create %s/%s: %s", e->dir, name, strerror(errno));
	st->fd = fd;
	st->size = 0;
	return 0;
}

/* Writes the iovecs at `off` whole; -errno on failure (short writes retried). */
static int full_pwritev(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		ssize_t w = pwritev(fd, iov, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		off += (uint64_t)w;
		tb_iov_advance(&iov, &n, (size_t)w);
	}
	return 0;
}

/* The file cannot take what was asked: cut it back to its last whole packet and keep the error in e. */
static int write_failed(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st, int rc)
{
	char name[TB_CHAN_NAME_MAX + 16];
	tb_stream_name(e, ch, cpu, name, sizeof name);
	if (st->fd >= 0 && ftruncate(st->fd, (off_t)st->size) < 0) {
		/* cannot even cut it back: nothing sane is left to do with this file */
	}
	tb_fail(rc, "cannot write %s/%s: %s; the trace was cut at the last whole packet (%" PRIu64
		    " bytes), and the events not written are counted as lost to the disk",
		e->dir, name, strerror(-rc), st->size);
	tb_engine_set_error(e, rc);
	return rc;
}

int tb_stream_write(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st, struct iovec *iov, int n,
		    uint64_t bytes, uint64_t padded)
{
	int rc = 0;
	if (!e->local) { /* relay-only: the stream's size counts what a file would hold */
		st->size += padded;
		return 0;
	}
	if (st->fd < 0 && (rc = tb_stream_open(e, ch, cpu, st)) < 0) {
		tb_engine_set_error(e, rc);
		return rc;
	}
	rc = full_pwritev(st->fd, iov, n, st->size);
	/* the rest of a packet up to its packet_size is a hole of zeros:
	 * smaller on disk, and no stale bytes of a reused sub-buffer */
	if (!rc && bytes < padded && ftruncate(st->fd, (off_t)(st->size + padded)) < 0)
		rc = -errno;
	if (rc)
		return write_failed(e, ch, cpu, st, rc);
	st->size += padded;
	return 0;
}

static uint64_t dio_len(uint64_t content)
{
	return (content + TB_DIO_ALIGN - 1) & ~(uint64_t)(TB_DIO_ALIGN - 1);
}

/* Whether staged packet p can be part of a run at offset `off`: whole
 * aligned blocks, from an aligned copy, large enough for direct I/O. */
static int run_ok(const struct tb_staged *p, uint64_t off)
{
	return p->content >= TB_DIO_MIN && off % TB_DIO_ALIGN == 0 && p->padded % TB_DIO_ALIGN == 0 &&
	       dio_len(p->content) <= p->padded && (uintptr_t)p->pkt % TB_DIO_ALIGN == 0;
}

/*
 * Writes the run p[0..n) with one pwritev() at st->size: every packet but the
 * last fills its packet_size (no hole between them), each written up to the
 * end of its last block (zeros after the content: tb_stream_stage()).
 * `direct`: with O_DIRECT.  Returns how many packets are now whole in the
 * file (st->size moved past them); fewer than n when the write was short or
 * refused: the caller writes the rest one by one through the page cache,
 * which says what stops it.
 */
static unsigned write_run(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			  const struct tb_staged *p, unsigned n, int direct)
{
	if (direct && st->dfd == -2) {
		char name[TB_CHAN_NAME_MAX + 16];
		tb_stream_name(e, ch, cpu, name, sizeof name);
		st->dfd = openat(e->dirfd, name, O_WRONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW);
		struct stat a, b;
		if (st->dfd >= 0 && (fstat(st->fd, &a) || fstat(st->dfd, &b) || a.st_dev != b.st_dev ||
				     a.st_ino != b.st_ino)) {
			/* not the file we created (renamed or replaced since):
			 * never written through this name */
			close(st->dfd);
			st->dfd = -1;
		}
		if (st->dfd < 0) {
			st->dfd = -1; /* this file system does not do direct I/O, or see above */
			direct = 0;
		}
	}
	struct iovec iov[TB_STAGE_MAX];
	int k = 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t len = dio_len(p[i].content);
		if (k && (uint8_t *)iov[k - 1].iov_base + iov[k - 1].iov_len == p[i].pkt)
			iov[k - 1].iov_len += len; /* adjacent slots: one segment */
		else
			iov[k++] = (struct iovec){ p[i].pkt, len };
		total += len;
	}
	ssize_t w;
	uint64_t t0 = tb_mono_ns();
	do
		w = pwritev(direct ? st->dfd : st->fd, iov, k, (off_t)st->size);
	while (w < 0 && errno == EINTR);
	uint64_t dt = tb_mono_ns() - t0;
	if (w == (ssize_t)total && dt) {
		tb_io_rate_add(&e->io_rate[direct], total, dt);
		if (!direct)
			e->io_cache_ns = t0 + dt;
	}
	if (direct && w != (ssize_t)total) {
		/* Short (a full disk half-way) or refused.  EINVAL: an
		 * alignment this file needs; anything else the page cache's
		 * write meets again and reports.  Either way direct I/O is off
		 * for this file from now on. */
		close(st->dfd);
		st->dfd = -1;
	}
	uint64_t done = w > 0 ? (uint64_t)w : 0, off = 0;
	unsigned whole = 0;
	/* whole: the packets whose bytes all arrived (every one but the last
	 * fills its packet_size, so offsets and lengths agree) */
	while (whole < n && off + dio_len(p[whole].content) <= done)
		off += p[whole++].padded;
	/* the last packet's rest up to its packet_size is a hole */
	if (whole == n && dio_len(p[n - 1].content) < p[n - 1].padded &&
	    ftruncate(st->fd, (off_t)(st->size + off)) < 0)
		off -= p[--whole].padded; /* written again one by one, which reports it */
	st->size += off;
	if (direct)
		tb_stat_add(&st->st.direct, off);
	return whole;
}

/*
 * A batch taken while three quarters of its ring wait (`behind`): the
 * producers are outrunning the writes, and losses are near.  A direct write
 * waits for the device; the page cache takes a run without waiting, at the
 * price of the kernel's copy of every byte (CPU time).  Which is faster
 * depends on the machine and moves with it: on the benchmark VM the disk
 * took 1.2-2.7 GB/s and the page cache 0.4-5.5 GB/s within one hour (its
 * fresh pages come from the host).  So the faster of the two lately, by
 * the write calls' measured rates (write_run(), tb_io_rate_add()); while
 * that is direct I/O, a behind run goes through the page cache again once
 * its rate is TB_IO_PROBE_NS old, so that the figure stays current (a run
 * through a page cache 4 times slower than the disk costs 4 runs' time:
 * probing one run in 8 instead cost a third of the recorder's CPU there).
 * Neither measured yet: the page cache (what catches up at once on most
 * machines).  The policy is tb_io_cache_pays() (engine_impl.h).
 */
static int cache_pays(struct tb_engine *e)
{
	return tb_io_cache_pays(e->io_rate, e->io_cache_ns, tb_mono_ns());
}

unsigned tb_stream_write_staged(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
				const struct tb_staged *p, unsigned n, int behind)
{
	if (!e->local) {
		for (unsigned i = 0; i < n; i++)
			st->size += p[i].padded;
		return n;
	}
	int rc;
	if (st->fd < 0 && (rc = tb_stream_open(e, ch, cpu, st)) < 0) {
		tb_engine_set_error(e, rc);
		return 0;
	}
	int direct = e->direct && !(behind && cache_pays(e));
	unsigned i = 0;
	while (i < n) {
		if (run_ok(&p[i], st->size)) {
			/* the run: while each packet fills its packet_size */
			unsigned j = i + 1;
			while (j < n && dio_len(p[j - 1].content) == p[j - 1].padded && run_ok(&p[j], st->size))
				j++;
			unsigned run = j - i, w = write_run(e, ch, cpu, st, p + i, run, direct && st->dfd != -1); /* (a refused run closes dfd) */
			i += w;
			if (w == run)
				continue;
		}
		/* one by one: a small packet (a flush of a quiet ring), an
		 * unaligned one (a stream resumed from another consumer's
		 * file), or the rest of a run that was refused */
		struct iovec iov = { p[i].pkt, p[i].content };
		if (tb_stream_write(e, ch, cpu, st, &iov, 1, p[i].content, p[i].padded) < 0)
			break;
		i++;
	}
	return i;
}
