/* SPDX-License-Identifier: MIT */
/*
 * relay.h - a client of LTTng's relay daemon (lttng-relayd): the recorder
 * sends every packet it writes, the metadata and the per-packet index
 * entries to a relay daemon over TCP, which writes them under its output
 * tree and serves them live to babeltrace2 (src.ctf.lttng-live) and Trace
 * Compass.  docs/FLEET.md says how to run it; the wire format below is what
 * lttng-relayd 2.13 speaks with a consumer (learnt from lttng-tools'
 * sources, written here from scratch).
 *
 * Protocol 2.8 (the relay daemon answers with the lower of its and our minor
 * version): every integer big-endian.
 *   control connection: commands { u64 circuit_id = 0; u64 size; u32 cmd;
 *     u32 cmd_version = 0 } + `size` bytes; most are answered.
 *     VERSION(5) {u32 major, minor} -> {major, minor}
 *     CREATE_SESSION(2) {char name[255]; char host[64]; u32 live_timer_us;
 *       u32 snapshot} -> {u64 session_id; u32 ret}
 *     ADD_STREAM(1) {char channel[264]; char path[4096]; u64 tracefile_size,
 *       tracefile_count} -> {u64 handle; u32 ret}   (path: HOST/NAME-DATE,
 *       relative to the relay daemon's output directory)
 *     STREAMS_SENT(16) {} -> {u32 ret}: the streams become visible to viewers
 *     SEND_METADATA(6) {u64 stream; u32 padding} + text, not answered
 *       (the metadata stream is append-only: only new text is sent)
 *     SEND_INDEX(13) {u64 relay_stream, net_seq_num, packet_size (bits),
 *       content_size (bits), ts_begin, ts_end, events_discarded, stream_id,
 *       stream_instance_id, packet_seq_num} -> {u32 ret}; packet_size 0: a
 *       live "beacon" (the stream is idle up to ts_end)
 *     CLOSE_STREAM(7) {u64 stream; u64 last_net_seq_num} -> {u32 ret}
 *     DATA_PENDING(8) {u64 stream; u64 last_net_seq_num} -> {u32 0 written,
 *       1 still coming}
 *   Answers come in order.  SEND_INDEX and DATA_PENDING are not waited for
 *   one by one: the sender goes on and reads their answers as they come
 *   (at most TB_RELAY_MAX_ACKS in flight, each due within the timeout);
 *   any other command reads them all before its own answer.
 *   data connection: per packet {u64 circuit_id = 0; u64 stream;
 *     u64 net_seq_num; u32 data_size; u32 padding_size} + data_size bytes;
 *     the relay daemon appends padding_size zeros (to its disk: they do not
 *     cross the network).  The relay's copy of a packet ends at its content
 *     rounded up to 8 bytes (packet_size in the header sent and the index;
 *     padding_size 0), not at the sub-buffer's end as the local copy does:
 *     a partial packet the live period closed would cost the relay's disk
 *     its whole sub-buffer.
 * A lost relay can be reconnected (tb_relay_reconnect(): a new relay
 * session); events that were not sent are then carried, per stream, as the
 * lost_relay cause of the packets sent afterwards.
 * Every wait has a deadline: connecting, a whole command with its whole
 * reply, a whole data packet (timeout_ms each); a relay that misses one is
 * lost.  Not thread-safe: one thread makes the calls (the engine's relay
 * sender, engine_relay_send.c), except tb_relay_cap(), which any thread may call.
 */
#ifndef TB_RELAY_RELAY_H
#define TB_RELAY_RELAY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/format.h"

struct tb_relay;

struct tb_relay_cfg {
	const char *url;          /* net://HOST[:CONTROL[:DATA]] (tcp:// too); ports default 5342, 5343 */
	const char *session_name; /* the relay session's name (viewers' URL) */
	const char *hostname;     /* NULL: gethostname() */
	uint32_t live_timer_us;   /* 0: no live viewing; else beacons this often for idle streams */
	uint32_t timeout_ms;      /* connecting, a command and its whole reply, or a whole packet that takes
				   * longer: the relay is lost (0: 5000) */
};

/*
 * Parses a relay URL.  Return: 0; -EINVAL (tb_errmsg() says what is wrong).
 */
int tb_relay_parse_url(const char *url, char *host, size_t hlen, unsigned *ctl_port, unsigned *data_port)
	__attribute__((visibility("hidden")));

/*
 * tb_relay_open - connect both connections, agree on the version, create
 * the session, add the metadata stream and every stream i whose first[i]
 * has a magic (`names`), STREAMS_SENT, then send each of those its empty
 * packet first[i] (so that live viewers know every stream from the start;
 * the others are added at their first packet).  The same at every
 * reconnection.  Return: 0; -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT,
 * -EPROTO, ... (tb_errmsg() names the address and what to do).
 */
int tb_relay_open(const struct tb_relay_cfg *cfg, unsigned nstreams, const char *const *names,
		  const struct tb_packet_header *first, struct tb_relay **out) __attribute__((visibility("hidden")));

/* Appends metadata text.  Return: 0, or -errno (the relay is then lost). */
int tb_relay_metadata(struct tb_relay *r, const char *text, size_t len) __attribute__((visibility("hidden")));

/*
 * Sends one packet of stream `i`: header (its events_discarded and lost[]
 * as given: the caller may add what the relay lost; its packet_size cut to
 * the content, rounded up to 8 bytes: `rest` is the rest of the content,
 * up to that), then the rest.  Then its index.
 * Return: 0, or -errno (the relay is then lost: later calls return -EPIPE).
 */
int tb_relay_packet(struct tb_relay *r, unsigned i, const struct tb_packet_header *h, const void *rest,
		    size_t rest_len) __attribute__((visibility("hidden")));

/*
 * tb_relay_reconnect - after the relay was lost: connect again and create a
 * new relay session (its directory gets the new date, or a "-N" suffix);
 * streams are added again at their next packet, the metadata must be sent
 * again whole.  Return: 0, or -errno (still lost).
 */
int tb_relay_reconnect(struct tb_relay *r) __attribute__((visibility("hidden")));
/*
 * tb_relay_ask_written - has the relay daemon written stream `i`'s packets
 * up to number `seq` (one sent in this relay session, tb_relay_sent_seq())?
 * Its DATA_PENDING command: its last fully received and written packet's
 * number against seq.  A packet handed to the data connection is not yet on
 * the daemon's disk: a connection cut mid-packet loses it, and the daemon
 * writes the part it got.  The question is sent without waiting for its
 * answer (the sender goes on sending; a round trip per question cost it two
 * context switches and a wait): tb_relay_answers() reads it, then
 * tb_relay_written_upto() says how far the daemon wrote.  Return 0 asked,
 * -EINVAL not a packet sent, -errno lost.
 */
int tb_relay_ask_written(struct tb_relay *r, unsigned i, uint64_t seq) __attribute__((visibility("hidden")));
/* Reads the answers that came (wait 0), or waits until every question asked
 * is answered (wait 1, each within the timeout of its question; the answers
 * of index entries sent after them are not waited for).  0, or -errno (lost). */
int tb_relay_answers(struct tb_relay *r, int wait) __attribute__((visibility("hidden")));
/*
 * tb_relay_cork - from now until tb_relay_uncork(), index entries and
 * DATA_PENDING questions are held and sent together (one send() and one
 * segment for a packet's index entry and the questions after it: on
 * loopback each send also runs the daemon's receive path on our CPU).
 * Anything else sent on the control connection, or a wait for an answer,
 * sends them first.  tb_relay_uncork(): sends them; 0, or -errno (lost).
 */
void tb_relay_cork(struct tb_relay *r) __attribute__((visibility("hidden")));
int tb_relay_uncork(struct tb_relay *r) __attribute__((visibility("hidden")));
/* 1 while a question about stream `i` waits for its answer. */
int tb_relay_asking(const struct tb_relay *r, unsigned i) __attribute__((visibility("hidden")));
/* The highest packet number of stream `i` the daemon said it wrote, in this relay session (0: none). */
uint64_t tb_relay_written_upto(const struct tb_relay *r, unsigned i) __attribute__((visibility("hidden")));
/* The number of stream `i`'s last packet sent in this relay session (0: none). */
uint64_t tb_relay_sent_seq(const struct tb_relay *r, unsigned i) __attribute__((visibility("hidden")));
/*
 * tb_relay_no_progress - the caller has waited since monotonic time since_ns
 * for the relay daemon to write packets it was sent: past the relay's
 * timeout it is lost (-ETIMEDOUT, said by tb_relay_error()); 0 before.
 */
int tb_relay_no_progress(struct tb_relay *r, uint64_t since_ns) __attribute__((visibility("hidden")));
/* `n` events of stream `i` were not sent: later packets carry them as lost_relay. */
void tb_relay_lost_events(struct tb_relay *r, unsigned i, uint64_t n) __attribute__((visibility("hidden")));
/* The events of stream `i` not sent so far (the running total its next packet carries). */
uint64_t tb_relay_lost_total(const struct tb_relay *r, unsigned i) __attribute__((visibility("hidden")));

/*
 * A live beacon for stream `i` when it sent no packet since its last one:
 * "nothing before `ts` is still to come" (viewers merge streams by time and
 * wait for every stream to tell how far it is).  The caller must know it:
 * the ring holds no record not yet sent, and none can be stamped before ts.
 */
int tb_relay_beacon(struct tb_relay *r, unsigned i, uint64_t ts) __attribute__((visibility("hidden")));

/*
 * The end's beacon for stream `i`, whether or not it sent a packet since
 * the last beacon: the caller sends nothing more on any stream, so
 * "nothing before ts" holds for all (ts later than every packet sent).
 */
int tb_relay_beacon_end(struct tb_relay *r, unsigned i, uint64_t ts) __attribute__((visibility("hidden")));

/*
 * No wait of any call may go past monotonic time cap_ns (tb_mono_ns()) from
 * now on, including one in progress: the end of a recording, which must not
 * wait for a slow relay.  Any thread.
 */
void tb_relay_cap(struct tb_relay *r, uint64_t cap_ns) __attribute__((visibility("hidden")));

/* 1 while connected; 0 once lost. */
int tb_relay_alive(const struct tb_relay *r) __attribute__((visibility("hidden")));
/* Why it was lost ("" while alive). */
const char *tb_relay_error(const struct tb_relay *r) __attribute__((visibility("hidden")));
/* The relay daemon's session directory, relative to its output directory (HOST/NAME-DATE). */
const char *tb_relay_path(const struct tb_relay *r) __attribute__((visibility("hidden")));

/* Closes every stream (CLOSE_STREAM with its last sequence number) and both connections; frees. */
void tb_relay_close(struct tb_relay *r) __attribute__((visibility("hidden")));

#endif
