/* SPDX-License-Identifier: MIT */
/*
 * consumer.h - the consumer engine (library private).
 *
 * One engine drains one session into one trace directory:
 *
 *   drain thread      sleeps in tb_consumer_wait(); on wake-up takes every
 *                     complete sub-buffer (tb_ring_ready -> tb_ring_copy ->
 *                     append to <dir>/<channel>_<cpu> -> tb_ring_release)
 *   flusher threads   one per CPU, pinned to it, call tb_ring_flush(IF_IDLE)
 *                     about once per flush period, phases spread over CPUs
 *   finish            final pinned flush, drain, tb_ring_drain_dead (or a
 *                     snapshot for overwrite channels), metadata
 *
 * The trace directory is valid at every instant a process could die:
 * stream files only ever grow by whole packets (a failed write is cut back
 * with ftruncate), and `metadata` is replaced atomically (dot-file + rename)
 * whenever the registry grows, before any packet that may use the new ids.
 * See docs/RECORDER.md.
 *
 * Concurrency: an engine is driven by one controlling thread (create,
 * start, finish, destroy); tb_engine_stats() and tb_engine_wake() may be
 * called from any thread.  Nothing here is async-signal-safe.
 */
#ifndef TB_CONSUMER_ENGINE_H
#define TB_CONSUMER_ENGINE_H

#include <stdint.h>

#include "ring/ring.h"
#include "core/view.h"
#include "session/registry.h" /* tb_session_live_procs */

struct tb_engine;

/* The live period by default: every record is in a closed packet on disk
 * within a second (docs/RECORDER.md, "The live period"). */
#define TB_LIVE_PERIOD_DEFAULT_NS 1000000000ull

enum {
	TB_ENG_NO_FLUSHERS = 1u << 0, /* no stale-data flusher threads */
	TB_ENG_RESUME = 1u << 1,      /* the directory may hold a trace of this session: append */
	TB_ENG_READONLY = 1u << 2,    /* session attached read-only: never release/flush */
};

struct tb_engine_env {
	const char *key;
	const char *str; /* NULL: integer `num` */
	int64_t num;
};

struct tb_relay_cfg;
struct tb_kernel_cfg;
struct tb_kernel_stats;

/* The live periods a caller may ask for (record --live-period, tb_session_opts). */
#define TB_MIN_LIVE_PERIOD_NS 10000000ull      /* 10 ms */
#define TB_MAX_LIVE_PERIOD_NS 3600000000000ull /* 1 hour */

struct tb_engine_cfg {
	unsigned flags;                   /* TB_ENG_* */
	const struct tb_engine_env *env;  /* extra metadata env entries (copied) */
	unsigned nenv;
	const struct tb_relay_cfg *relay; /* also send every packet to lttng-relayd (relay.h); NULL: no */
	uint64_t live_period_ns;          /* the live period: no record waits longer in an open packet
					   * (tb_ring_flush_live); 0: 1 s; UINT64_MAX: off; else within
					   * TB_MIN/MAX_LIVE_PERIOD_NS (callers check) */
	const struct tb_kernel_cfg *kernel; /* also the kernel's sched events (kernel/kernel.h); NULL: no */
	int trust_writers;                /* the session's writers change no packet once committed: packets
					   * are checked, written and sent where they are in the ring, without
					   * the private copy (record --trust-writers; docs/RELIABILITY.md) */
};

/* The kernel streams' figures (--kernel): 1 and *out, or 0 when not recorded. */
TB_HIDDEN int tb_engine_kernel(struct tb_engine *e, struct tb_kernel_stats *out);

/* What was sent to the relay daemon, and what could not be (tb_engine_relay()). */
struct tb_relay_stats {
	int enabled;              /* a relay was asked for */
	int alive;                /* still connected */
	uint64_t packets, bytes;  /* sent */
	uint64_t lost_packets, lost_events; /* written locally but not sent (the relay was lost, slower
					     * than the recording, or not done at the end) */
	uint64_t full_packets;    /* ... of them: the send queue was full (the relay slower than the recording) */
	uint64_t unreported_events; /* at the end: events not sent that no packet sent after them tells the
				     * relay's copy (lost to it silently: relay-only makes that a failure) */
	uint64_t untold_last_events; /* at the end: events not sent that the last relay session's packets
				      * do not tell (its lost_relay running totals miss them): the above, and
				      * the losses of a stream that sent nothing in it that only an earlier
				      * session's packets told */
	unsigned reconnects;      /* new relay sessions after a loss */
	char path[512];           /* its session directory under the relay daemon's output */
	char error[320];          /* why it was lost ("" while alive) */
};
TB_HIDDEN void tb_engine_relay(struct tb_engine *e, struct tb_relay_stats *out);

/* Per-stream and total statistics; each value exact at some instant. */
struct tb_stream_stats {
	uint64_t packets;   /* packets written */
	uint64_t bytes;     /* bytes written */
	uint64_t direct;    /* of them, bytes written with direct I/O (stream_io.c) */
	uint64_t events;    /* events in them (from the sub-buffer descriptors) */
	uint64_t bad;       /* packets that failed validation: skipped */
	uint64_t torn;      /* snapshot copies reused by producers: dropped */
	uint64_t skipped;   /* sub-buffers skipped by a resync, or already on disk (resume) */
	uint64_t resyncs;   /* control blocks found inconsistent and resynchronised */
	uint64_t dropped;   /* packets released unwritten after a write error */
	uint64_t lost[TB_LOSS_NCAUSES]; /* events lost by cause, as the trace tells readers (the
					 * running totals of each stream's last packet) */
};

/*
 * tb_engine_create - prepare to drain `s` into `dir` (which must exist and
 * be empty, or with TB_ENG_RESUME hold a trace of this very session).
 * dir NULL: no local copy, the relay daemon of cfg->relay gets every packet
 * (relay-only; what it cannot take is counted as lost_relay, as with a
 * local copy).
 * Return: 0; -ENOTEMPTY, -EACCES, -ENOTDIR, -ENOMEM, -EINVAL (tb_errmsg()).
 */
TB_HIDDEN int tb_engine_create(struct tb_session *s, const char *dir, const struct tb_engine_cfg *cfg,
			       struct tb_engine **out);

/* Starts the drain thread (channels not in overwrite mode) and flushers. Return: 0 or -errno. */
TB_HIDDEN int tb_engine_start(struct tb_engine *e);

enum {
	TB_FINISH_DEAD = 1u << 0,     /* no producer can remain: tb_ring_drain_dead after the drain */
	TB_FINISH_SNAPSHOT = 1u << 1, /* overwrite channels: write a final snapshot */
};

/*
 * tb_engine_finish - stop the threads (each flusher closes its CPU's
 * partial packet first), drain what is left, then per `how`, then write the
 * final metadata.  Return: 0, or the first write error (-ENOSPC, -EIO,
 * -EFBIG, ...) met while recording (tb_errmsg() says which file).
 */
TB_HIDDEN int tb_engine_finish(struct tb_engine *e, unsigned how);

/* Writes one snapshot of every ring (tb_ring_snapshot) + metadata; no threads needed. */
TB_HIDDEN int tb_engine_snapshot(struct tb_engine *e);

/* Writes drain_dead of every ring + metadata (recover). */
TB_HIDDEN int tb_engine_drain_dead(struct tb_engine *e);

/* Writes (replaces) <dir>/metadata now. */
TB_HIDDEN int tb_engine_write_metadata(struct tb_engine *e);

/* Sums (ch, cpu == -1 for all CPUs; ch == -1 for all channels). */
TB_HIDDEN void tb_engine_stats(struct tb_engine *e, int ch, int cpu, struct tb_stream_stats *out);

/* How fast the stream files' runs were written lately, in bytes per ns of
 * the write call (0: no such write): out[0] through the page cache, out[1]
 * with direct I/O (what the recorder chose between when it fell behind:
 * stream_io.c).  After tb_engine_finish() only (the writer thread is gone). */
TB_HIDDEN void tb_engine_io_rates(struct tb_engine *e, double out[2]);

/* First write error seen (0 if none). */
TB_HIDDEN int tb_engine_error(struct tb_engine *e);
/* Message of that error (the engine's threads cannot use the caller's tb_errmsg()). */
TB_HIDDEN const char *tb_engine_errmsg(struct tb_engine *e);

/* Returns a sentence per problem met while draining (bad packets, resyncs), then NULL. */
TB_HIDDEN int tb_engine_next_warning(struct tb_engine *e, char *buf, unsigned len);

/* Wakes the drain thread (it re-scans every ring). Any thread. */
TB_HIDDEN void tb_engine_wake(struct tb_engine *e);

/* Frees everything; stops threads first if finish was not called. NULL is fine. */
TB_HIDDEN void tb_engine_destroy(struct tb_engine *e);


/* Who drains the session now (0: nobody said so), and who created it: values
 * from shared memory (relaxed loads), hints to check with kill(pid, 0). */
TB_HIDDEN uint32_t tb_session_consumer_pid(const struct tb_session *s);
TB_HIDDEN uint32_t tb_session_creator_pid(const struct tb_session *s);

/*
 * tb_session_claim_consumer - say in the session that this process drains
 * it (map->consumer_pid = getpid()), when it has a channel drained
 * continuously (not overwrite) and is writable; else nothing.  Block-mode
 * producers that find a ring full then check that this pid lives, and drop
 * at once (TB_LOSS_NOCONS) when it does not.  A recorder calls it before any
 * process it starts can write (`record`: before it forks CMD), so that its
 * death at any later point is seen; tb_engine_start() calls it again (an
 * attaching recorder replaces a dead one's pid there).
 * tb_session_release_consumer - back to 0, if it still names this process.
 */
TB_HIDDEN void tb_session_claim_consumer(struct tb_session *s);
TB_HIDDEN void tb_session_release_consumer(struct tb_session *s);


/* Creates `dir` (and missing parents) unless it exists; *created = 1 if it did.  Return 0 or -errno. */
TB_HIDDEN int tb_output_dir(const char *dir, int *created);

/*
 * tb_oneshot_run - copy the rings of `s` to `outdir` once, with no recorder
 * running (oneshot.c): the one path of `tracebuf snapshot`, `tracebuf
 * recover` and tb_snapshot().  outdir is created if missing.
 *   TB_ONESHOT_SNAPSHOT: what the rings hold now, producers still writing
 *     (sub-buffers reused during the copy are dropped, counted in st.torn);
 *   TB_ONESHOT_RECOVER: a session whose producers are gone, attached
 *     read-only: every complete packet and the closed partial ones; an
 *     existing directory must be a trace of this session (a killed
 *     recorder's), which is completed without writing a packet twice.
 * Warnings (bad packets, resyncs) go to o->warn one sentence each.
 * Return 0 or -errno (tb_errmsg() says what); o->st is filled either way
 * once the engine ran.
 */
enum { TB_ONESHOT_SNAPSHOT = 0, TB_ONESHOT_RECOVER = 1 };
struct tb_oneshot {
	unsigned how;             /* TB_ONESHOT_* */
	const char *recorder;     /* metadata env "recorder" (the tool's name), or NULL */
	int pid_env;              /* metadata env "pid": the caller's (an embedded snapshot) */
	void (*warn)(void *arg, const char *sentence);
	void *warn_arg;
	/* out */
	struct tb_stream_stats st;
	int quiescent;            /* no process of the session was alive or attached during the copy */
};
TB_HIDDEN int tb_oneshot_run(struct tb_session *s, const char *outdir, struct tb_oneshot *o);

#endif
