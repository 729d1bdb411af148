/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/consumer.h - record a trace from inside the traced program.
 *
 *   struct tb_recorder *rec;
 *   tb_session_start(NULL, "trace-dir", &rec);   // session + consumer threads
 *   ... TB_EVENT calls, tb_write() ...
 *   tb_session_stop(rec);                         // everything on disk, session removed
 *
 * tb_session_start() creates a session, makes it this process's producer
 * session (tb_producer_use) and runs the consumer as threads of this
 * process: a drain thread that sleeps until producers wake it, and one
 * flusher thread per CPU that closes stale partial packets once per flush
 * period.  Child processes attach by themselves when TRACEBUF_SESSION names
 * the session file (tb_session_path(tb_recorder_session(rec))).
 *
 * The trace directory is CTF 1.8 that babeltrace2 reads unchanged; it is
 * valid at every moment (whole packets only, metadata replaced atomically),
 * so even a process killed while recording leaves a readable trace.
 *
 * Errors: negative errno, tb_errmsg() says what to do.  None of these
 * functions is async-signal-safe.
 */
#ifndef TRACEBUF_CONSUMER_H
#define TRACEBUF_CONSUMER_H

#include <tracebuf/session.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tb_recorder; /* opaque */

/*
 * tb_session_start - create a session (opts as for tb_session_create, NULL
 * for the defaults), make it this process's producer session and start
 * draining it into `outdir` (created if missing; must be empty).
 * Channels in TB_OVERWRITE mode are not drained: their content is written
 * by tb_snapshot() and once more by tb_session_stop().
 * Return: 0, -EINVAL, -ENOTEMPTY (outdir not empty), -EACCES (not
 * writable), -ENOSPC (shared memory too small), -ENOTSUP (see
 * tb_producer_use), other -errno.
 */
TB_API int tb_session_start(const struct tb_session_opts *opts, const char *outdir,
			    struct tb_recorder **out);

/*
 * tb_session_stop - stop this process writing to the session, close the
 * partial packet of every CPU, drain what is left, write the metadata,
 * remove the session file and free `rec`.  Call it once the threads of this
 * process stopped tracing.  Processes of the session still alive keep their
 * mapping; what they write afterwards is not recorded.
 * Return: 0, or the first error met while writing the trace (-ENOSPC,
 * -EIO, ...); the trace on disk is valid up to the last whole packet.
 */
TB_API int tb_session_stop(struct tb_recorder *rec);

/* Also stream the trace to LTTng's relay daemon (docs/FLEET.md). */
struct tb_relay_opts {
	size_t size;              /* sizeof(struct tb_relay_opts) */
	const char *url;          /* net://HOST[:CONTROL_PORT[:DATA_PORT]] (5342, 5343 by default) */
	const char *session_name; /* the relay session's name; NULL: "tracebuf" */
	const char *hostname;     /* the host name the relay files it under; NULL: this host's */
	uint64_t live_timer_ns;   /* idle streams report in this often, for live viewers; 0: never */
};

/*
 * tb_session_start_relay - tb_session_start(), and every packet written to
 * `outdir` is also sent to the relay daemon `relay->url`; outdir NULL: to
 * the relay daemon only (what it misses is then lost, counted as lost_relay).  A relay that
 * cannot be reached refuses the start (-ECONNREFUSED, -EHOSTUNREACH,
 * -ETIMEDOUT; tb_errmsg() names the address); one lost later is retried,
 * and what it missed is counted (docs/FLEET.md).  relay == NULL: exactly
 * tb_session_start().
 */
TB_API int tb_session_start_relay(const struct tb_session_opts *opts, const char *outdir,
				  const struct tb_relay_opts *relay, struct tb_recorder **out);

/* The session of a recorder (for tb_session_path(), tb_session_counters()). */
TB_API struct tb_session *tb_recorder_session(const struct tb_recorder *rec);

/*
 * tb_snapshot - write what the rings of `s` hold now (NULL: this process's
 * producer session) to `outdir` (created if missing, must be empty), as a
 * complete trace with its metadata.  Producers keep writing meanwhile; a
 * sub-buffer they reuse during its copy is dropped and counted, never
 * written torn.  Meant for TB_OVERWRITE channels (flight recorder).
 * Return: number of packets written, or -errno (as tb_session_start).
 */
TB_API int tb_snapshot(struct tb_session *s, const char *outdir);

/* What tb_session_copy() wrote and dropped. */
struct tb_copy_result {
	size_t size;        /* set to sizeof(struct tb_copy_result) before the call */
	uint64_t events;    /* events written */
	uint64_t packets;   /* packets written */
	uint64_t bytes;     /* bytes of the stream files */
	uint64_t invalid;   /* packets that failed validation, or records that could not be proved valid: cut */
	uint64_t torn;      /* sub-buffers reused by a producer during their copy: dropped */
	int quiescent;      /* no process of the session was alive or attached during the copy: a torn
			     * sub-buffer was then not reused but corrupted */
	unsigned live;      /* processes of the session alive when the copy began (besides the caller) */
};

enum {
	TB_COPY_SNAPSHOT = 0, /* what the rings hold now; producers keep writing (tb_snapshot) */
	TB_COPY_RECOVER = 1,  /* the session of a dead application, attached read-only: every complete
			       * packet and the closed partial ones; an existing outdir holding a trace of
			       * this session (a killed recorder's) is completed, never written twice */
};

/*
 * tb_session_copy - copy the rings of `s` to `outdir` once, with no recorder
 * running: TB_COPY_SNAPSHOT or TB_COPY_RECOVER (what `tracebuf snapshot` and
 * `tracebuf recover` do).  outdir is created if missing.  Each problem met
 * (a packet skipped, a control block resynchronised) is given to `warn` as
 * one sentence (NULL: not said).  `res` (may be NULL) is filled once the copy
 * ran, also when it then failed.
 * Return: 0, or -errno (tb_errmsg() says what): -EEXIST outdir holds another
 * trace (recover) or is not empty (snapshot), -ENOSPC, -EIO, ...
 */
TB_API int tb_session_copy(struct tb_session *s, const char *outdir, unsigned how,
			   void (*warn)(void *arg, const char *sentence), void *warn_arg, struct tb_copy_result *res);

#ifdef __cplusplus
}
#endif

#endif
