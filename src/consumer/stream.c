/* SPDX-License-Identifier: MIT */
/*
 * stream.c - the trace directory: stream files that only ever grow by whole
 * packets, and the scan that lets a second consumer resume a directory a
 * killed one left behind.
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
#include <unistd.h>

#include "consumer/engine_impl.h"

void tb_stream_name(const struct tb_engine *e, unsigned ch, unsigned cpu, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%u", e->s->chan[ch].name, cpu);
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
	while (size - off >= TB_PACKET_HEADER_SIZE) {
		struct tb_packet_header h;
		if (pread(fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
			break;
		uint64_t psize = h.packet_size / 8;
		if (h.magic != TB_CTF_MAGIC || memcmp(h.uuid, e->s->uuid, 16) ||
		    h.stream_instance_id != want_instance) {
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
		off += psize;
	}
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

/* Opens (creating lazily) the stream file of (ch, cpu). */
static int stream_open(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st)
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

static int full_pwrite(int fd, const uint8_t *p, uint64_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (uint64_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/*
 * Appends one packet.  Only the content is written; the rest of the packet
 * (up to packet_size) becomes a hole of zeros, which is smaller on disk and
 * shows no stale bytes of a reused sub-buffer (readers never look past
 * content_size).  On any error the file is cut back to its last whole
 * packet, so a reader never meets a truncated packet.
 */
int tb_stream_append(struct tb_engine *e, unsigned ch, unsigned cpu, const void *pkt,
		     const struct tb_packet_info *info)
{
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	if (tb_engine_error(e)) {
		tb_stat_add(&st->st.dropped, 1);
		return 0;
	}
	if (st->have_last && info->seq <= st->last_seq) {
		/* already on disk: written by a consumer killed before it released it */
		tb_stat_add(&st->st.skipped, 1);
		return 0;
	}
	int rc = tb_engine_metadata_sync(e);
	if (rc < 0)
		return rc;
	if (st->fd < 0 && (rc = stream_open(e, ch, cpu, st)) < 0) {
		tb_engine_set_error(e, rc);
		tb_stat_add(&st->st.dropped, 1);
		return rc;
	}
	uint64_t content = (info->content_bytes + 7) & ~7ull;
	if (content > info->packet_bytes)
		content = info->packet_bytes;
	rc = full_pwrite(st->fd, pkt, content, st->size);
	if (!rc && content < info->packet_bytes && ftruncate(st->fd, (off_t)(st->size + info->packet_bytes)) < 0)
		rc = -errno;
	if (rc < 0) {
		char name[TB_CHAN_NAME_MAX + 16];
		tb_stream_name(e, ch, cpu, name, sizeof name);
		int err = rc;
		if (ftruncate(st->fd, (off_t)st->size) < 0) {
			/* cannot even cut it back: nothing sane is left to do with this file */
		}
		tb_fail(err, "cannot write %s/%s: %s; the trace was cut at the last whole packet "
			     "(%" PRIu64 " bytes)", e->dir, name, strerror(-err), st->size);
		tb_engine_set_error(e, err);
		tb_stat_add(&st->st.dropped, 1);
		return err;
	}
	st->size += info->packet_bytes;
	st->last_seq = info->seq;
	st->have_last = 1;
	tb_stat_add(&st->st.packets, 1);
	tb_stat_add(&st->st.bytes, info->packet_bytes);
	tb_stat_add(&st->st.events, info->events);
	return 0;
}

void tb_streams_close(struct tb_engine *e)
{
	for (unsigned i = 0; i < e->nstreams; i++)
		if (e->streams[i].fd >= 0) {
			close(e->streams[i].fd);
			e->streams[i].fd = -1;
		}
}
