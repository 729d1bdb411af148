/* SPDX-License-Identifier: MIT */
/*
 * maps.c - an async-signal-safe reader of /proc/self/maps (maps.h): open,
 * read and close, a fixed read buffer and a fixed line buffer on the stack, a
 * hand-written parser.  No stdio, no malloc, no locale: it runs in the
 * pthread_atfork child handler of a multithreaded process (the sampler) and
 * in a fatal-signal handler (src/producer/crash.c).
 *
 * A line is  START-END PERMS OFFSET MAJ:MIN INODE [spaces PATH]  with the
 * numbers in hex except INODE; PATH runs to the end of the line and may
 * hold spaces (and " (deleted)").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "platform/maps.h"

#define READ_CHUNK 4096
#define LINE_MAX_ (TB_MAPS_PATH_MAX + 128)

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
static void parse_line(char *line, char *end, tb_maps_cb cb, void *arg)
{
	const char *p = line;
	int ok = 1;
	struct tb_maps_line m;
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

int tb_maps_read(tb_maps_cb cb, void *arg)
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
