/* SPDX-License-Identifier: MIT */
/*
 * relay_impl.h - the relay client's private state and its socket layer
 * (relay_net.c: every wait with a deadline), shared by relay.c (the
 * protocol's commands).  src/relay/ only.
 */
#ifndef TB_RELAY_IMPL_H
#define TB_RELAY_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "relay/relay.h"

enum {
	CMD_ADD_STREAM = 1,
	CMD_CREATE_SESSION = 2,
	CMD_VERSION = 5,
	CMD_SEND_METADATA = 6,
	CMD_CLOSE_STREAM = 7,
	CMD_DATA_PENDING = 8,
	CMD_SEND_INDEX = 13,
	CMD_STREAMS_SENT = 16,
};

#define PROTO_MAJOR 2u
#define PROTO_MINOR 8u
#define LTTNG_OK 10 /* lttng's return code for success */
#define NAME_LEN 255
#define HOST_LEN 64
#define CHAN_LEN 264
#define PATH_LEN 4096

struct rstream {
	char name[CHAN_LEN];
	struct tb_packet_header first; /* announced at the session's start with this empty packet
					* (magic 0: not announced, added at its first packet) */
	int added;         /* ADD_STREAM done: at its first packet (an empty file otherwise) */
	uint64_t handle;   /* the relay daemon's id */
	uint64_t next_seq; /* net_seq_num of the next packet (from 1; last sent = next_seq - 1) */
	int sent;          /* a packet since the last beacon round */
	uint64_t last_ts;  /* timestamp_end of the last packet or beacon sent */
	uint64_t beacon_ts;/* time of the last beacon (0: none) */
	uint64_t lost;     /* events of this stream never sent (relay lost meanwhile): carried in
			    * what is sent afterwards as lost_relay, a running total */
	unsigned asks;     /* DATA_PENDING questions in flight (tb_relay_ask_written()) */
	uint64_t written;  /* the highest net_seq_num the daemon said it wrote (0: none) */
};

/* Index entries sent whose answer is not read yet, at most (relay_net.c: the
 * answers are 4 bytes each, read as they come; a relay that stops answering
 * then stops the sending within the timeout, as a command would). */
#define TB_RELAY_MAX_ACKS 64u
/* Bytes of control commands a corked sender holds (tb_relay_cork()): a
 * packet's index entry and a question per stream fit for up to ~60 streams;
 * beyond, what is held is sent first. */
#define TB_RELAY_CORK_BYTES 2048u

struct tb_relay {
	int ctl, data;
	uint32_t minor;
	unsigned n;            /* data streams; streams[n] is the metadata stream */
	struct rstream *streams;
	int lost;
	unsigned sessions;     /* relay sessions created (reconnections + 1) */
	unsigned timeout_ms;
	uint64_t cap_ns;       /* tb_relay_cap(): no wait past this monotonic time (0: none); atomic */
	int wake_fd;           /* eventfd: readable once a cap was set (wakes a wait in poll) */
	uint32_t live_us;
	/* index entries in flight (relay_net.c): their answers come in order on
	 * the control connection, before any later command's */
	unsigned acks;                         /* sent, answer not read yet */
	unsigned questions;                    /* of them, DATA_PENDING questions */
	unsigned ack_first;                    /* ack_sent[] index of the oldest */
	uint64_t ack_sent[TB_RELAY_MAX_ACKS];  /* monotonic ns each was sent */
	uint64_t ack_seq[TB_RELAY_MAX_ACKS];   /* DATA_PENDING: the packet number asked about */
	unsigned ack_stream[TB_RELAY_MAX_ACKS];/* DATA_PENDING: its stream; UINT_MAX: an index entry */
	uint8_t ack_buf[4];                    /* the oldest's answer, ack_got bytes of it read */
	unsigned ack_got;
	/* tb_relay_cork(): index entries and questions held, sent together by
	 * tb_relay_uncork() or before anything else goes on the control
	 * connection or waits for an answer (relay_net.c) */
	int corked;
	size_t cork_len;
	uint8_t cork[TB_RELAY_CORK_BYTES];
	char err[320];
	char addr[300];
	char url[300];
	char name[NAME_LEN];
	char host[HOST_LEN];
	char path[512];
};

/* relay_net.c */
/* The relay is lost (the first reason is kept): returns -err. */
int tb_relay_lose(struct tb_relay *r, int err, const char *what) __attribute__((visibility("hidden")));
/* The deadline of an operation started now (its timeout, or the cap when sooner). */
uint64_t tb_relay_deadline(const struct tb_relay *r) __attribute__((visibility("hidden")));
/* Sends iov[0..n) (n <= 4) on fd whole before the deadline: 0, or -errno (lost). */
int tb_relay_send_all(struct tb_relay *r, int fd, const struct iovec *iov, int n, uint64_t deadline)
	__attribute__((visibility("hidden")));
/* A control command (payload pl, then pl2) and, when reply != NULL, its whole reply, within one deadline. */
int tb_relay_command(struct tb_relay *r, uint32_t cmd, const void *pl, size_t len, const void *pl2, size_t len2,
		     void *reply, size_t rlen) __attribute__((visibility("hidden")));
/*
 * An index entry (SEND_INDEX + payload) sent without waiting for its answer:
 * the answer is read later (tb_relay_acks()), and any command that waits for
 * a reply reads every earlier answer first.  Each answer must come within
 * the timeout of its sending.  0, or -errno (lost).
 */
int tb_relay_command_acked(struct tb_relay *r, uint32_t cmd, const void *pl, size_t len, unsigned stream,
			   uint64_t seq) __attribute__((visibility("hidden")));
/* (stream, seq: UINT_MAX, 0 for an index entry, whose answer must be "ok"; a
 * stream and the packet number of a DATA_PENDING question, whose answer
 * "written" sets that stream's `written`.) */
/* Reads the answers of index entries and questions in flight: those already
 * arrived (wait 0), until no question is left in flight (wait 1: index
 * entries sent after the last question need not be answered yet), or all of
 * them (wait 2); each within the timeout of its sending.  An index entry's
 * answer other than "ok", or one late past the timeout: the relay is lost.
 * 0, or -errno. */
int tb_relay_acks(struct tb_relay *r, int wait) __attribute__((visibility("hidden")));
/* A non-blocking socket connected to host:port before the deadline, or -errno (tb_errmsg()). */
int tb_relay_connect(struct tb_relay *r, const char *host, unsigned port) __attribute__((visibility("hidden")));

#endif
