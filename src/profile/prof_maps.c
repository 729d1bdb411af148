/* SPDX-License-Identifier: MIT */
/*
 * prof_maps.c - an async-signal-safe reader of /proc/self/maps: open, read
 * and close, a fixed read buffer and a fixed line buffer on the stack, a
 * hand-written parser.  No stdio, no malloc, no locale: it runs in the
 * pthread_atfork child handler of a multithreaded process, where only
 * async-signal-safe functions may be called.
 *
 * A line is  START-END PERMS OFFSET MAJ:MIN INODE [spaces PATH]  with the
 * numbers in hex except INODE; PATH runs to the end of the line and may
 * hold spaces (and " (deleted)").
 *
 * And the snapshot of the mappings already written (prof_maps_scan()), so
 * that a dlopen writes only the new ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "profile/prof_impl.h"

#define READ_CHUNK 4096
#define LINE_MAX_ (PROF_PATH_MAX + 128)

/* Parses hex digits at *p; returns the value and advances *p (0 digits: *ok = 0). */
static uint64_t parse_hex(const char **p, const char *end, int *ok)
{
	uint64_t v = 0;
	const char *s = *p;
	int n = 0;
	while (s < end) {
		char c = *s;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		v = v << 4 | d;
		s++;
		n++;
	}
	if (!n || n > 16)
		*ok = 0;
	*p = s;
	return v;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* One line (without its '\n', NUL-terminated at end).  Calls cb if it is
 * an executable mapping with a path. */
static void parse_line(char *line, char *end, prof_maps_cb cb, void *arg)
{
	const char *p = line;
	int ok = 1;
	struct prof_maps_line m;
	m.start = parse_hex(&p, end, &ok);
	if (p >= end || *p != '-')
		return;
	p++;
	m.end = parse_hex(&p, end, &ok);
	if (!ok || p >= end || *p != ' ')
		return;
	p++;
	if (end - p < 5 || p[2] != 'x')
		return; /* perms "r-xp": only executable mappings */
	p = skip_field(p, end);           /* perms */
	m.pgoff = parse_hex(&p, end, &ok); /* offset */
	if (!ok)
		return;
	while (p < end && *p == ' ')
		p++;
	p = skip_field(p, end); /* dev */
	p = skip_field(p, end); /* inode, then the padding before the path */
	if (p >= end)
		return; /* anonymous executable memory (JIT): no file to symbolise */
	m.path = p;
	cb(arg, &m);
}

int prof_maps_read(prof_maps_cb cb, void *arg)
{
	char buf[READ_CHUNK];
	char line[LINE_MAX_ + 1];
	size_t ll = 0;
	int fd;
	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			if (c == '\n') {
				line[ll] = 0;
				parse_line(line, line + ll, cb, arg);
				ll = 0;
			} else if (ll < LINE_MAX_) {
				line[ll++] = c;
			} /* else: the rest of an overlong path is dropped */
		}
	}
	if (ll) {
		line[ll] = 0;
		parse_line(line, line + ll, cb, arg);
	}
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the snapshot                                                        */
/* ------------------------------------------------------------------ */

/* The executable mappings already written (the last snapshot).  Bounded: a
 * process with more than SNAP_MAX executable mappings gets the excess
 * written again at each scan. */
#define SNAP_MAX 1024
struct snap_ent {
	uint64_t start, end, pgoff, hash;
};
static struct snap_ent snap[2][SNAP_MAX];
static unsigned snap_n[2], snap_cur;

struct scan {
	const struct snap_ent *old;
	unsigned nold;
	struct snap_ent *cur;
	unsigned ncur;
	int all;
	int written;
	prof_maps_cb emit;
	void *arg;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static void scan_cb(void *arg, const struct prof_maps_line *m)
{
	struct scan *sc = arg;
	struct snap_ent e = { m->start, m->end, m->pgoff, fnv1a(m->path) };
	int known = 0;
	for (unsigned i = 0; !sc->all && i < sc->nold && !known; i++)
		known = !memcmp(&sc->old[i], &e, sizeof e);
	if (!known) {
		sc->emit(sc->arg, m);
		sc->written++;
	}
	if (sc->ncur < SNAP_MAX)
		sc->cur[sc->ncur++] = e;
}

int prof_maps_scan(int all, prof_maps_cb emit, void *arg)
{
	unsigned next = snap_cur ^ 1;
	struct scan sc = {
		.old = snap[snap_cur], .nold = snap_n[snap_cur], .cur = snap[next], .all = all, .emit = emit, .arg = arg,
	};
	int rc = prof_maps_read(scan_cb, &sc);
	if (rc != 0)
		return rc;
	snap_n[next] = sc.ncur;
	snap_cur = next;
	return sc.written;
}
