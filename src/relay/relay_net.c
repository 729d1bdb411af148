/* SPDX-License-Identifier: MIT */
/*
 * relay_net.c - the relay client's socket layer: the URL, connecting, and
 * every send and receive of relay.c, each bound by a deadline (timeout_ms
 * for a connection, a whole command with its whole reply, a whole data
 * packet) and by the cap an owner may set from another thread
 * (tb_relay_cap(): the end of a recording).  Non-blocking sockets and
 * poll(); an eventfd wakes a wait when the cap is set.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tracebuf/session.h> /* tb_errmsg */

#include "core/view.h" /* tb_fail */
#include "platform/clock.h"
#include "platform/iov.h"
#include "relay/relay_impl.h"

int tb_relay_parse_url(const char *url, char *host, size_t hlen, unsigned *ctl_port, unsigned *data_port)
{
	const char *p = url;
	if (!strncmp(p, "net://", 6) || !strncmp(p, "tcp://", 6))
		p += 6;
	else
		return tb_fail(-EINVAL, "relay URL '%s': want net://HOST[:CONTROL_PORT[:DATA_PORT]]", url);
	*ctl_port = 5342;
	*data_port = 5343;
	const char *end;
	size_t n;
	if (*p == '[') { /* [IPv6] */
		end = strchr(p, ']');
		if (!end)
			return tb_fail(-EINVAL, "relay URL '%s': no ']' after the IPv6 address", url);
		n = (size_t)(end - p - 1);
		p++;
		end++;
	} else {
		end = p + strcspn(p, ":/");
		n = (size_t)(end - p);
	}
	if (n == 0 || n >= hlen)
		return tb_fail(-EINVAL, "relay URL '%s': no host, or a host name too long", url);
	memcpy(host, p, n);
	host[n] = 0;
	unsigned *ports[2] = { ctl_port, data_port };
	for (int i = 0; i < 2 && *end == ':'; i++) {
		char *q;
		unsigned long v = strtoul(end + 1, &q, 10);
		if (q == end + 1 || v == 0 || v > 65535)
			return tb_fail(-EINVAL, "relay URL '%s': port '%.*s' is not 1..65535", url,
				       (int)strcspn(end + 1, ":/"), end + 1);
		*ports[i] = (unsigned)v;
		end = q;
	}
	if (*end && strcmp(end, "/"))
		return tb_fail(-EINVAL, "relay URL '%s': unexpected '%s' after the ports", url, end);
	return 0;
}

/* ---- the connection ---------------------------------------------------- */

int tb_relay_lose(struct tb_relay *r, int err, const char *what)
{
	if (!r->lost) {
		r->lost = 1;
		snprintf(r->err, sizeof r->err, "relay %.200s: %.60s: %.40s", r->addr, what, strerror(err));
	}
	return -err;
}

/* The deadline of an operation started now: its timeout, or the cap when sooner. */
uint64_t tb_relay_deadline(const struct tb_relay *r)
{
	uint64_t d = tb_mono_ns() + (uint64_t)r->timeout_ms * 1000000ull;
	/* relaxed: the cap is a single word; the eventfd write that follows
	 * its store wakes a wait already in poll(), which loads it again */
	uint64_t cap = __atomic_load_n(&r->cap_ns, __ATOMIC_RELAXED);
	return cap && cap < d ? cap : d;
}

/*
 * Waits until fd is ready for `events` or the deadline (or the cap, which
 * may be set meanwhile) passes.  0, or -ETIMEDOUT.
 */
static int wait_fd(struct tb_relay *r, int fd, short events, uint64_t deadline)
{
	if (events == POLLIN) {
		/* Answers in flight (index entries, questions) and lttng-relayd
		 * without TCP_NODELAY: its second small answer waits for our ACK
		 * of the first (Nagle), which our kernel delays up to 40 ms when
		 * we send nothing meanwhile, i.e. now.  Seen: 40 ms waits, the
		 * sender a third slower than the program at 40 MB/s.  Quick ACKs
		 * while we wait (the kernel leaves that mode by itself). */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
	}
	for (;;) {
		uint64_t cap = __atomic_load_n(&r->cap_ns, __ATOMIC_RELAXED), now = tb_mono_ns();
		uint64_t d = cap && cap < deadline ? cap : deadline;
		if (now >= d)
			return -ETIMEDOUT;
		uint64_t ms = (d - now + 999999) / 1000000;
		struct pollfd p[2] = { { fd, events, 0 }, { r->wake_fd, POLLIN, 0 } };
		/* once the cap is set it is in d: the eventfd, readable for
		 * good then, would only make this loop spin until d */
		int n = poll(p, r->wake_fd >= 0 && !cap ? 2 : 1, ms > 60000 ? 60000 : (int)ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && p[0].revents)
			return 0; /* ready, or an error the next call reports */
	}
}

/* Sends iov[0..n) whole before `deadline`: 0, or -errno (the relay is lost). */
int tb_relay_send_all(struct tb_relay *r, int fd, const struct iovec *iov0, int n, uint64_t deadline)
{
	struct iovec iov[4];
	if (n > 4)
		return -EINVAL;
	memcpy(iov, iov0, (size_t)n * sizeof *iov);
	struct iovec *v = iov;
	while (n > 0) {
		struct msghdr m = { .msg_iov = v, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return tb_relay_lose(r, errno, "send");
			int rc = wait_fd(r, fd, POLLOUT, deadline);
			if (rc)
				return tb_relay_lose(r, -rc, fd == r->data ? "the data connection takes nothing (a packet not "
								 "sent whole within its deadline)"
								: "a command not taken within its deadline");
			continue;
		}
		tb_iov_advance(&v, &n, (size_t)w);
	}
	return 0;
}

/* Receives len bytes whole before `deadline` (a reply, not one recv()). */
static int recv_all(struct tb_relay *r, void *buf, size_t len, uint64_t deadline)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t g = recv(r->ctl, p, len, MSG_DONTWAIT);
		if (g < 0 && errno == EINTR)
			continue;
		if (g < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(r, r->ctl, POLLIN, deadline);
			if (rc)
				return tb_relay_lose(r, -rc, "no whole reply within its deadline");
			continue;
		}
		if (g < 0)
			return tb_relay_lose(r, errno, "no reply");
		if (g == 0)
			return tb_relay_lose(r, ECONNRESET, "the relay daemon closed the connection");
		p += g;
		len -= (size_t)g;
	}
	return 0;
}

/* ---- index entries in flight -------------------------------------------- */

/* Sends the control commands held (tb_relay_cork()): 0, or -errno (lost). */
static int cork_flush(struct tb_relay *r)
{
	if (!r->cork_len)
		return 0;
	struct iovec iov = { r->cork, r->cork_len };
	r->cork_len = 0;
	return r->lost ? -EPIPE : tb_relay_send_all(r, r->ctl, &iov, 1, tb_relay_deadline(r));
}

void tb_relay_cork(struct tb_relay *r)
{
	r->corked = 1;
}

int tb_relay_uncork(struct tb_relay *r)
{
	r->corked = 0;
	return cork_flush(r);
}

int tb_relay_acks(struct tb_relay *r, int wait)
{
	uint8_t buf[4 * TB_RELAY_MAX_ACKS];
	/* an answer waited for must have been asked */
	int rc = wait ? cork_flush(r) : 0;
	if (rc)
		return rc;
	while (r->acks) {
		if (r->lost)
			return -EPIPE;
		if (wait == 1 && !r->questions)
			wait = 0; /* the rest: what came */
		size_t want = (size_t)r->acks * 4 - r->ack_got; /* no byte of a later reply */
		ssize_t g = recv(r->ctl, buf, want, MSG_DONTWAIT);
		if (g < 0 && errno == EINTR)
			continue;
		if (g < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* the oldest answer is due within the timeout of its sending */
			uint64_t due = r->ack_sent[r->ack_first] + (uint64_t)r->timeout_ms * 1000000ull;
			if (!wait) {
				if (tb_mono_ns() < due)
					return 0;
				return tb_relay_lose(r, ETIMEDOUT, "an index entry not answered within its deadline");
			}
			if (wait_fd(r, r->ctl, POLLIN, due))
				return tb_relay_lose(r, ETIMEDOUT, "an index entry not answered within its deadline");
			continue;
		}
		if (g < 0)
			return tb_relay_lose(r, errno, "no reply");
		if (g == 0)
			return tb_relay_lose(r, ECONNRESET, "the relay daemon closed the connection");
		for (size_t k = 0; k < (size_t)g; k++) {
			r->ack_buf[r->ack_got++] = buf[k];
			if (r->ack_got < 4)
				continue;
			uint32_t v;
			memcpy(&v, r->ack_buf, 4);
			unsigned i = r->ack_stream[r->ack_first];
			uint64_t seq = r->ack_seq[r->ack_first];
			r->ack_got = 0;
			r->acks--;
			r->ack_first = (r->ack_first + 1) % TB_RELAY_MAX_ACKS;
			if (i == UINT_MAX) {
				if (be32toh(v) != LTTNG_OK)
					return tb_relay_lose(r, EPROTO, "the relay daemon refused an index entry");
				continue;
			}
			/* DATA_PENDING: 0 written, 1 still coming, anything else (-1:
			 * a stream it does not know) an error */
			struct rstream *s = &r->streams[i];
			s->asks--;
			r->questions--;
			if (be32toh(v) == 0 && seq > s->written)
				s->written = seq;
			else if (be32toh(v) > 1)
				return tb_relay_lose(r, EPROTO, "the relay daemon does not know a stream it was sent "
								"(data pending)");
		}
	}
	return 0;
}

int tb_relay_command_acked(struct tb_relay *r, uint32_t cmd, const void *pl, size_t len, unsigned stream,
			   uint64_t seq)
{
	if (r->lost)
		return -EPIPE;
	/* the answers that came meanwhile are read once half the entries
	 * allowed are in flight (one recv() for many), waited for when all are */
	int rc = r->acks >= TB_RELAY_MAX_ACKS / 2 ? tb_relay_acks(r, r->acks >= TB_RELAY_MAX_ACKS ? 2 : 0) : 0;
	if (rc)
		return rc;
	struct __attribute__((packed)) {
		uint64_t circuit, size;
		uint32_t cmd, version;
	} h = { 0, htobe64(len), htobe32(cmd), 0 };
	struct iovec iov[2] = { { &h, sizeof h }, { (void *)pl, len } };
	uint64_t now = tb_mono_ns();
	if (r->corked && r->cork_len + sizeof h + len > sizeof r->cork)
		rc = cork_flush(r);
	if (rc)
		return rc;
	if (r->corked && r->cork_len + sizeof h + len <= sizeof r->cork) {
		/* held: sent with the others (its answer's deadline counts from now) */
		memcpy(r->cork + r->cork_len, &h, sizeof h);
		memcpy(r->cork + r->cork_len + sizeof h, pl, len);
		r->cork_len += sizeof h + len;
	} else {
		rc = tb_relay_send_all(r, r->ctl, iov, 2, tb_relay_deadline(r));
	}
	if (rc)
		return rc;
	unsigned k = (r->ack_first + r->acks) % TB_RELAY_MAX_ACKS;
	r->ack_sent[k] = now;
	r->ack_stream[k] = stream;
	r->ack_seq[k] = seq;
	r->acks++;
	r->questions += stream != UINT_MAX;
	return 0;
}

/* A control command and, when reply != NULL, its reply: both within one deadline
 * (the answers of the index entries in flight are read first: they come before). */
int tb_relay_command(struct tb_relay *r, uint32_t cmd, const void *pl, size_t len, const void *pl2, size_t len2,
		   void *reply, size_t rlen)
{
	if (r->lost)
		return -EPIPE;
	/* after what is held (in order), and the answers that come before its own */
	int rc0 = reply && r->acks ? tb_relay_acks(r, 2) : cork_flush(r);
	if (rc0)
		return rc0;
	uint64_t deadline = tb_relay_deadline(r);
	struct __attribute__((packed)) {
		uint64_t circuit, size;
		uint32_t cmd, version;
	} h = { 0, htobe64(len + len2), htobe32(cmd), 0 };
	struct iovec iov[3] = { { &h, sizeof h }, { (void *)pl, len }, { (void *)pl2, len2 } };
	int rc = tb_relay_send_all(r, r->ctl, iov, 1 + (len > 0) + (len2 > 0 ? 1 : 0), deadline);
	if (rc == 0 && reply)
		rc = recv_all(r, reply, rlen, deadline);
	return rc;
}

/* A non-blocking socket connected to host:port before the deadline, or -errno with tb_errmsg(). */
int tb_relay_connect(struct tb_relay *r, const char *host, unsigned port)
{
	char ps[8];
	snprintf(ps, sizeof ps, "%u", port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int g = getaddrinfo(host, ps, &hints, &ai);
	if (g)
		return tb_fail(-EHOSTUNREACH, "relay %s: cannot resolve '%s': %s", r->addr, host, gai_strerror(g));
	uint64_t deadline = tb_relay_deadline(r);
	int fd = -1, err = ECONNREFUSED;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		int c = connect(fd, a->ai_addr, a->ai_addrlen);
		if (c < 0 && errno == EINPROGRESS) {
			/* a peer that does not answer the SYN: the deadline, not the kernel's minutes */
			socklen_t sl = sizeof err;
			if (wait_fd(r, fd, POLLOUT, deadline) != 0)
				err = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
				err = errno;
			c = err ? -1 : 0;
		} else if (c < 0) {
			err = errno;
		}
		if (c == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return tb_fail(-err, "relay %s: cannot connect to %s port %u: %s (is lttng-relayd running, with "
				     "--control-port/--data-port there?)", r->addr, host, port, strerror(err));
	return fd;
}

void tb_relay_cap(struct tb_relay *r, uint64_t cap_ns)
{
	/* relaxed store, then the eventfd write: a poll() already waiting
	 * wakes and loads the cap again (wait_fd()); a later wait loads it
	 * before it polls */
	__atomic_store_n(&r->cap_ns, cap_ns ? cap_ns : 1, __ATOMIC_RELAXED);
	uint64_t one = 1;
	if (r->wake_fd >= 0 && write(r->wake_fd, &one, sizeof one) < 0) {
		/* the counter is full: it is readable anyway */
	}
}
