/* SPDX-License-Identifier: MIT */
/* engine_impl.h - the consumer engine's private state (src/consumer/ only). */
#ifndef TB_CONSUMER_ENGINE_IMPL_H
#define TB_CONSUMER_ENGINE_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "consumer/engine.h"
#include "kernel/kernel.h"
#include "platform/clock.h" /* tb_mono_ns() */

#define TB_TRACER_VERSION "0.1.0"

struct tb_ctf_trace_info;
struct tb_relay_out;
#define TB_WARN_SLOTS 32u
/* Direct I/O of stream files (stream_io.c): offsets, lengths and buffers are
 * multiples of this (every logical block size up to a page), and packets
 * smaller than TB_DIO_MIN go through the page cache (a direct write waits for
 * the device: worth it for large writes only). */
#define TB_DIO_ALIGN 4096u
#define TB_DIO_MIN (32u << 10)
/* A batch of the drain thread's staging area: the complete packets of one
 * ring copied out together (up to this many bytes, TB_STAGE_MAX
 * sub-buffers), written with one system call (stream_io.c).  Two batches
 * may hold their sub-buffers at once (one written, one filled) when the
 * recorder is behind: 2 MiB batches made that 4 MiB of a 16 MiB ring, for
 * a CPU gain within the noise at 2 M events/s (issue 30). */
#define TB_STAGE_BYTES (1u << 20)
#define TB_STAGE_MAX 64u
/* How old the page cache's measured rate may get before a batch taken
 * behind goes through it again (tb_io_cache_pays()). */
#define TB_IO_PROBE_NS 100000000ull

/* A write of `bytes` that took `ns` into the average rate *avg (bytes per
 * ns; 0: none yet), weighted by its bytes: a 1 MiB run counts 1/4, a 32 KiB
 * flush of a quiet ring (the device's latency more than its rate) 1/128. */
static inline void tb_io_rate_add(double *avg, uint64_t bytes, uint64_t ns)
{
	if (!bytes || !ns)
		return;
	double r = (double)bytes / (double)ns, wt = (double)bytes / (double)(4u << 20);
	*avg = *avg > 0 ? *avg + (r - *avg) * (wt < 1 ? wt : 1) : r;
}

/* Whether a batch taken behind goes through the page cache (1) or direct
 * (0), by the two ways' average rates (rate[0] page cache, rate[1] direct;
 * stream_io.c says why) and when the page cache's was last measured. */
static inline int tb_io_cache_pays(const double rate[2], uint64_t cache_ns, uint64_t now)
{
	if (rate[0] <= 0 || rate[1] <= 0 || rate[0] > rate[1])
		return 1; /* not measured yet (the page cache first: it catches up at once on most machines), or the faster */
	return now - cache_ns >= TB_IO_PROBE_NS; /* its figure is old: measure it again */
}

/* A packet accounted and waiting in the staging area for its write (stream.c, stream_io.c). */
struct tb_staged {
	uint8_t *pkt;     /* in a batch's area or a relay slot: the header readers must see, zeros after the content up to TB_DIO_ALIGN */
	uint64_t content; /* bytes to write (whole 8-byte words of content) */
	uint64_t padded;  /* its packet_size in bytes: the file grows by this (the rest is a hole) */
	uint64_t seq, events;
	uint64_t out[TB_LOSS_NCAUSES]; /* its loss causes: what readers know once it is written */
};

/*
 * A batch of ring (ch, cpu): the sub-buffers taken together (nsb of them from
 * pos), their copies in `area`, the packets of them staged for writing.  The
 * drain thread fills one while the writer thread writes the other
 * (engine_run.c, drain_ring()).  Between its submit() and its reap()
 * (engine_run.c), the writer owns the batch and the write side of its
 * stream (fd, dfd, size); the drain thread owns everything else.
 */
struct tb_batch {
	unsigned ch, cpu;
	uint64_t pos;     /* position of the first sub-buffer taken */
	unsigned nsb;     /* sub-buffers taken (released at the reap) */
	unsigned n;       /* staged[0..n) */
	unsigned ok;      /* after the write: how many of them are whole in the file */
	int behind;       /* written through the page cache (stream_io.c) */
	int done;         /* under wr_lock: the writer finished it */
	int inline_;      /* written by the drain thread itself (engine_run.c, write_now()): no hand-off to reap */
	uint8_t *area;    /* nslots slots of bufsize bytes, TB_DIO_ALIGN-aligned */
	struct tb_staged staged[TB_STAGE_MAX];
	/* with a relay: the relay's send slots its packets were copied into
	 * instead of area (engine_relay_send.c, tb_engine_relay_slot()); the reap
	 * gives back those the relay did not queue */
	uint8_t *rslot[TB_STAGE_MAX];
	unsigned nrslot;
};

struct tb_stream {
	int fd;             /* -1: not created yet (lazily, at the first packet) */
	int dfd;            /* the same file opened O_DIRECT (stream_io.c): -2 not tried yet, -1 not
			     * usable (refused by the file system, or by a write) */
	int started;        /* a packet was staged or written (drain thread: st->size is the
			     * writer's while a batch is in flight) */
	uint64_t size;      /* bytes on disk: whole packets only */
	uint64_t last_seq;  /* packet_seq_num of the last packet on disk */
	int have_last;
	uint64_t last_bytes, last_events; /* the last data packet on disk: its size and events (0: none) */
	int resumed;        /* the file holds packets of an earlier consumer (record --attach) */
	/*
	 * Loss accounting (stream.c; "Losses in the trace", docs/DESIGN.md).
	 * Written by one thread at a time, like the file.
	 */
	int acc_ok;                         /* acc holds: a packet of this ring was accounted */
	uint64_t acc;                       /* events committed to the ring before the end of that packet */
	uint64_t acc_seq;                   /* ... and its packet_seq_num */
	int gap_cause;                      /* cause of committed events missing before the next packet; -1 default */
	uint64_t lost[TB_LOSS_NCAUSES];     /* consumer-side counts so far (invalid, disk, relay; overwritten
					     * for overwrite rings, where they replace the producer's) */
	uint64_t out_lost[TB_LOSS_NCAUSES]; /* causes in the last packet written: what readers know */
	uint64_t prod_lost[TB_LOSS_NCAUSES];/* the producer's counts as last accepted (sane_prod()) */
	uint64_t prod_ts;                   /* ... at this time (session clock) */
	uint64_t seen_ts;                   /* latest timestamp_end of a valid packet handed to the stream */
	uint64_t seen_seq;                  /* ... and its packet_seq_num (have_seen) */
	int have_seen;
	/* Written by one thread at a time (drain thread, or the controlling
	 * thread after it joined it), read by any thread for the status line:
	 * relaxed atomics, values exact at some instant (tb_stat_add/get). */
	struct tb_stream_stats st;
	/* events of packets the relay daemon did not get (engine_relay_send.c, under
	 * its lock; relaxed for the statistics): in a relay-only recording
	 * they are lost, not delivered (tb_engine_stats) */
	uint64_t relay_unsent;
	/*
	 * --trust-writers (engine_state.c, tb_engine_hold()): the packets are
	 * written and sent from the ring itself, and an output may still read
	 * a sub-buffer after the drain thread reaped it (the relay's sender
	 * until TCP took it).  [rel_pos, reaped_pos): reaped, not released yet
	 * (drain thread); holds: per sub-buffer of the ring, how many outputs
	 * still read it (atomic: taken by the drain thread, given back by the
	 * output's thread).  NULL without --trust-writers.
	 */
	uint64_t rel_pos, reaped_pos;
	uint32_t *holds;
};

/*
 * An output of the engine: what receives the packets once the local copy
 * has them (written, or accounted when there is no local copy), the
 * metadata before the first packet that needs it, a tick from the drain
 * thread after each pass (live beacons, the follower's progress mark), and
 * the end.  Any member may be NULL.  The engine's losses and validation are
 * decided once, before any output sees a packet.  Packets come from the
 * drain, writer and finishing threads (channels' streams) and from the
 * kernel thread (--kernel: channel e->s->nchannels, tb_output_nstreams()),
 * each stream's in order.  Implementations: the
 * local copy's progress mark (engine.c), the relay daemon (engine_relay.c);
 * a third output is one more file registering one (tb_output_add).
 */
struct tb_output {
	const char *name;
	/* iov[0..n): each a tb_packet_header iovec, then its content when longer; `events` in all */
	void (*packets)(void *arg, unsigned ch, unsigned cpu, const struct iovec *iov, int n, uint64_t events);
	void (*metadata)(void *arg, const struct tb_ctf_trace_info *info); /* under meta_lock */
	int (*tick)(void *arg);   /* drain thread, after each pass; 1: call again within 50 ms */
	void (*close)(void *arg); /* finish: after the last packet */
};
#define TB_MAX_OUTPUTS 4u

struct tb_flusher {
	struct tb_engine *e;
	unsigned cpu;
	pthread_t thr;
	int running;
};

struct tb_engine {
	struct tb_session *s;
	unsigned flags;
	int dirfd;
	int local;          /* a local copy in dir (else relay-only: no file is written) */
	int direct;         /* 1: stream files may be written with O_DIRECT (TRACEBUF_NO_DIRECT_IO unset) */
	int trust;          /* --trust-writers: packets checked, written and sent in place (tb_engine_cfg) */
	char dir[PATH_MAX];

	struct tb_stream *streams;
	uint8_t *buf;      /* staging area: 2 x nslots sub-buffers of the largest channel, TB_DIO_ALIGN-aligned */
	uint64_t bufsize;  /* one slot */
	unsigned nstreams; /* nchannels * ncpus */
	unsigned nslots;   /* slots of a batch */
	/* the writer thread (engine_run.c): one batch at a time */
	int wr_running;           /* set before the drain thread starts, cleared after it stopped */
	int wr_stop;              /* under wr_lock */
	pthread_t wr_thr;
	pthread_mutex_t wr_lock;
	pthread_cond_t wr_cond;   /* a job, or stop (the writer waits) */
	pthread_cond_t wr_done;   /* a job done (the drain thread waits) */
	struct tb_batch *wr_job;  /* under wr_lock */
	struct tb_batch batch[2]; /* their halves of buf (drain thread, and the writer: see struct tb_batch) */
	/* How fast each way of writing a run went lately: bytes per ns of the
	 * write call (an average weighting each write by its bytes, 1 MiB
	 * 1/4; 0: not measured yet), [0] through the page cache, [1] direct.  Whoever
	 * writes (the writer thread; the drain thread only after it stopped)
	 * is the only one to touch them (stream_io.c, cache_pays()). */
	double io_rate[2];
	uint64_t io_cache_ns; /* when io_rate[0] was last measured (tb_mono_ns) */
	/* the engine's copy of the registry (under meta_lock): what the metadata
	 * describes and what the records of every packet are walked against
	 * before it is written; append-only (tb_engine_registry_sync()) */
	struct tb_event_desc *wev;
	uint32_t wnev, wcap;

	struct tb_engine_env *env; /* deep copy of the caller's entries */
	unsigned nenv;

	/* metadata: rewritten when the registry or the process table changed */
	pthread_mutex_t meta_lock;
	uint32_t meta_gen;   /* registry count described by the metadata on disk */
	uint32_t meta_procs; /* process-table count of the metadata on disk */
	int meta_written;

	/* first write error; readers use acquire, the writer release (set once under lock) */
	pthread_mutex_t err_lock;
	int err;
	char errmsg[512];

	/* warnings for the caller to print (the library never prints) */
	char warn[TB_WARN_SLOTS][256];
	unsigned warn_head, warn_tail; /* under err_lock */
	uint64_t warn_lost;

	/* drain thread */
	pthread_t drain_thr;
	int drain_running;
	int drain_stop; /* set (release) by finish; read (acquire) by the drain thread */
	int pass_behind; /* drain thread: the last pass handed a batch to the writer thread (engine_run.c) */

	/* flusher threads: sleep on fl_cond until their next visit or stop */
	pthread_mutex_t fl_lock;
	pthread_cond_t fl_cond; /* CLOCK_MONOTONIC */
	uint64_t live_ns;       /* the live period (tb_engine_cfg.live_period_ns); 0: off */
	struct tb_flusher *fl;
	int fl_stop;            /* under fl_lock */
	unsigned nfl;

	/* relay daemon (engine_relay.c; its own sender thread and queue: engine_relay_send.c), NULL when none */
	struct tb_relay_out *relay;
	/* the outputs (engine_state.c): set up by create, before any thread runs */
	struct {
		const struct tb_output *ops;
		void *arg;
	} outs[TB_MAX_OUTPUTS];
	uint64_t progress;    /* session clock: records before it are all on disk (drain thread; the mark) */
	uint64_t progress_ns; /* monotonic time of the last progress update */
	unsigned nouts;

	int finished;
	/* --kernel (engine_kernel.c): the kernel thread's; kern_stop release/acquire */
	struct tb_kernel *kern;
	unsigned nkstreams;     /* its streams: the outputs' streams nstreams .. nstreams + nkstreams
				 * (tb_output_packets' channel e->s->nchannels, tb_output_nstreams()) */
	uint64_t *kern_unsent;  /* per kernel stream, as tb_stream.relay_unsent (tb_engine_unsent()) */
	pthread_t kern_thr;
	int kern_running, kern_stop, kern_err;
	int marked;          /* DIR/.tracebuf-recorder written (mark.c) */
	int mark_fd;         /* holds the mark's flock while the engine writes DIR */
	char mark_head[128]; /* the mark's line up to its progress (engine.c mark_head) */
	int damage_reported; /* the truncation of the session file was reported (set once, atomic) */
	int ballast;         /* ".tracebuf-reserve" exists: room kept for the last loss packets */
	int clock_now;       /* the session's clock reads the same now as when it was written: 1, 0; -1 not known yet */
};

static inline struct tb_stream *tb_stream_at(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	return &e->streams[(size_t)ch * e->s->ncpus + cpu];
}

/* Statistics: single writer at a time, concurrent readers (status line). */
static inline void tb_stat_add(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* The streams the outputs see: the channels' (ch * ncpus + cpu), then the
 * kernel's (--kernel: "channel" e->s->nchannels, its stream i as the cpu). */
static inline unsigned tb_output_nstreams(const struct tb_engine *e)
{
	return e->nstreams + e->nkstreams;
}

/* Events of output stream idx the relay daemon did not get (engine_relay_send.c). */
static inline uint64_t *tb_engine_unsent(struct tb_engine *e, unsigned idx)
{
	return idx < e->nstreams ? &e->streams[idx].relay_unsent : &e->kern_unsent[idx - e->nstreams];
}

static inline int tb_chan_drained(const struct tb_engine *e, unsigned ch)
{
	return e->s->chan[ch].mode != TB_MODE_OVERWRITE;
}

TB_HIDDEN void tb_stream_name(const struct tb_engine *e, unsigned ch, unsigned cpu, char *buf, size_t len);
/* The header of an empty packet of ring (ch, cpu): number seq, at time ts, carrying the loss
 * causes `lost` (NULL: none) (stream.c). */
TB_HIDDEN void tb_stream_empty_header(const struct tb_engine *e, unsigned ch, unsigned cpu, uint64_t seq,
				      uint64_t ts, const uint64_t lost[TB_LOSS_NCAUSES], struct tb_packet_header *h);
/* 1 when ring (ch, cpu) holds no record the consumer has not taken: never
 * written, or its open packet is empty and no fallback writer owns it
 * (relaxed loads: a hint, see engine_relay.c's tick). */
TB_HIDDEN int tb_engine_ring_idle(struct tb_engine *e, unsigned ch, unsigned cpu);
/*
 * --trust-writers (engine_state.c): an output that keeps reading a packet
 * after its packets() call returned (the relay's send queue) takes a hold
 * on it there, and gives it back once done; the sub-buffer is released to
 * the producers only then, and in ring order (tb_engine_release_held()).
 * tb_engine_hold(): from the packets() call (the drain thread), p the
 * packet's first byte; returns the hold's key, or -1 when p is not in ring
 * (ch, cpu) (a copy: nothing to hold).  tb_engine_unhold(): any thread,
 * after its last read of the packet.  tb_engine_release_held(): the drain
 * thread (or finish, after it stopped), releases the reaped sub-buffers no
 * output holds, in order; all: every one reaped (no producer can reuse them
 * any more, or no output reads them); returns how many.  tb_engine_held():
 * how many sub-buffers after `tail` (the ring's consumer position) are
 * reaped and not released.
 */
TB_HIDDEN int tb_engine_hold(struct tb_engine *e, unsigned ch, unsigned cpu, const void *p);
TB_HIDDEN void tb_engine_unhold(struct tb_engine *e, unsigned ch, unsigned cpu, int key);
TB_HIDDEN unsigned tb_engine_release_held(struct tb_engine *e, unsigned ch, unsigned cpu, int all);
TB_HIDDEN unsigned tb_engine_held(struct tb_engine *e, unsigned ch, unsigned cpu, uint64_t tail);
/* The outputs (engine_state.c): registers one (create: 0, or -ENOSPC), and
 * hands each of them a packet, the metadata, a tick, the end. */
TB_HIDDEN int tb_output_add(struct tb_engine *e, const struct tb_output *out, void *arg);
TB_HIDDEN void tb_output_packets(struct tb_engine *e, unsigned ch, unsigned cpu, const struct iovec *iov, int n,
				 uint64_t events);
TB_HIDDEN void tb_output_metadata(struct tb_engine *e, const struct tb_ctf_trace_info *info);
TB_HIDDEN int tb_output_tick(struct tb_engine *e);
TB_HIDDEN void tb_output_close(struct tb_engine *e);
/* Connects the relay daemon and registers it as an output (tb_engine_create
 * with cfg->relay): 0 or -errno (tb_errmsg()). */
TB_HIDDEN int tb_engine_relay_open(struct tb_engine *e, const struct tb_relay_cfg *cfg);
/* Stops and closes it if the finish did not, and frees it (destroy). */
TB_HIDDEN void tb_engine_relay_free(struct tb_engine *e);
/* With a relay: a free slot (e->bufsize bytes, TB_DIO_ALIGN-aligned) of its
 * send pool for the drain thread's copy of a packet out of its ring, which
 * the local copy is written from and the relay sends from without another
 * copy once the batch's reap hands it over; NULL when none is free (the
 * batch's area then). */
TB_HIDDEN uint8_t *tb_engine_relay_slot(struct tb_engine *e);
/* Around a batch's reap (tb_stream_reap(), engine_run.c), with a relay:
 * its packets are queued without waking the sender one by one, which
 * tb_engine_relay_reaped() wakes once for the batch; that also gives back
 * b's slots (b->rslot) that the relay did not queue (a packet dropped,
 * refused, or not sent). */
TB_HIDDEN void tb_engine_relay_reaping(struct tb_engine *e);
TB_HIDDEN void tb_engine_relay_reaped(struct tb_engine *e, struct tb_batch *b);
TB_HIDDEN int tb_dir_prepare(struct tb_engine *e, int resume);
/*
 * Accounts one valid packet of ring (ch, cpu) (tb_packet_info: cnt_begin,
 * cnt_end, events, producer causes) and appends it to the stream file with
 * the consumer's loss counts set in its context (the copy at pkt is not
 * changed).  Once a write failed, packets are only accounted: their events
 * are lost to the disk.  Errors are kept in the engine (tb_engine_error()).
 */
TB_HIDDEN int tb_stream_append(struct tb_engine *e, unsigned ch, unsigned cpu, const void *pkt,
			       const struct tb_packet_info *info);
/*
 * The same for a packet in a batch's area (pkt: a slot of b->area, which is
 * changed: the header readers must see is patched in, the bytes after the
 * content zeroed): accounted now, staged in b, written when the batch is
 * (tb_stream_write_batch()), its bookkeeping done at tb_stream_reap().
 */
TB_HIDDEN void tb_stream_stage(struct tb_engine *e, struct tb_batch *b, uint8_t *pkt,
			       const struct tb_packet_info *info);
/* The writer's part: writes the staged packets of b (none once the engine
 * has an error), sets b->ok. */
TB_HIDDEN void tb_stream_write_batch(struct tb_engine *e, struct tb_batch *b);
/* The drain thread's part, after the write: the packets written are what
 * readers know now; those a failed write did not take are lost to the disk. */
TB_HIDDEN void tb_stream_reap(struct tb_engine *e, struct tb_batch *b);
/* stream_io.c: creates the stream file (lazily, at its first packet). */
TB_HIDDEN int tb_stream_open(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st);
/* stream_io.c: writes iov[0..n) (whole packets: `bytes` of `padded`, the
 * rest a hole) at the end of the stream file through the page cache, or cuts
 * the file back to its last whole packet and records the error (-errno). */
TB_HIDDEN int tb_stream_write(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
			      struct iovec *iov, int n, uint64_t bytes, uint64_t padded);
/* stream_io.c: writes staged packets p[0..n) in order, with direct I/O where
 * it can (unless `behind`); returns how many are whole in the file (fewer than n: a write
 * failed, the error is recorded as by tb_stream_write()). */
TB_HIDDEN unsigned tb_stream_write_staged(struct tb_engine *e, unsigned ch, unsigned cpu, struct tb_stream *st,
					  const struct tb_staged *p, unsigned n, int behind);
/* A packet of ring (ch, cpu) that is not written (it failed validation): the
 * committed events it held are counted under `cause` when the next packet
 * (or the end) shows how many were missing. */
TB_HIDDEN void tb_stream_lose(struct tb_engine *e, unsigned ch, unsigned cpu, int cause);
/*
 * The end of ring (ch, cpu), when no producer can write any more: events
 * committed and never written are counted (as the last losses, or the
 * overwrite count), and if readers do not know every loss yet, a last empty
 * "loss packet" carries the totals (written in the room the ballast kept).
 */
TB_HIDDEN void tb_stream_finish(struct tb_engine *e, unsigned ch, unsigned cpu);
/* Creates the ballast (room for the loss packets and metadata after a full disk); frees it. */
TB_HIDDEN void tb_ballast_make(struct tb_engine *e);
TB_HIDDEN void tb_ballast_free(struct tb_engine *e);
TB_HIDDEN void tb_streams_close(struct tb_engine *e);
/* Rewrites metadata if the registry or process table changed since it was written. */
TB_HIDDEN int tb_engine_metadata_sync(struct tb_engine *e);
/* Brings e->wev/e->wnev (the engine's append-only copy of the registry) up to date; caller holds meta_lock. */
TB_HIDDEN uint32_t tb_engine_registry_sync(struct tb_engine *e);
TB_HIDDEN void tb_engine_set_error(struct tb_engine *e, int err);
/* The first call of each of the engine's threads: names it (`top -H`, the kernel's comms in a
 * --kernel trace: tb-drain, tb-writer, tb-flush, tb-kernel, tb-relay) and leaves its system
 * calls out of a --kernel trace (an embedded recorder is in the tree it traces). */
TB_HIDDEN void tb_engine_thread_begin(struct tb_engine *e, const char *name);
/*
 * 1 when the session file was truncated under us (session/sigbus.h): the
 * pages it lost read as zeros, so nothing copied from the session any more
 * may be written; the first call that sees it sets the engine error (-EIO,
 * a sentence naming the file and the sizes).  Call it after copying from
 * the session and before writing what was copied.  Any thread.
 */
TB_HIDDEN int tb_engine_damaged(struct tb_engine *e);
/* engine_kernel.c: the kernel thread (--kernel) */
TB_HIDDEN int tb_engine_kernel_open(struct tb_engine *e, const struct tb_kernel_cfg *cfg);
TB_HIDDEN int tb_engine_kernel_start(struct tb_engine *e);
/* engine_run.c: what tb_engine_start() does after the kernel's events are enabled */
TB_HIDDEN int tb_engine_start_threads(struct tb_engine *e);
TB_HIDDEN void tb_engine_kernel_stop(struct tb_engine *e);
TB_HIDDEN void tb_engine_kernel_finish(struct tb_engine *e);
TB_HIDDEN void tb_engine_kernel_warnings(struct tb_engine *e);
TB_HIDDEN void tb_engine_warn(struct tb_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- between engine.c (lifecycle) and engine_run.c (the threads) ---- */

/* The followers' mark DIR/.tracebuf-recorder (mark.c): written and locked
 * (tb_engine_create), its progress moved when it moved (drain thread),
 * removed (finish, destroy; idempotent). */
TB_HIDDEN void tb_recorder_mark(struct tb_engine *e);
/* Returns 1 when called too soon (within 50 ms of the last): the drain
 * thread then sleeps at most 50 ms. */
TB_HIDDEN int tb_engine_progress_tick(struct tb_engine *e);
TB_HIDDEN void tb_recorder_unmark(struct tb_engine *e);
/* Adds the local copy's output (its tick moves the mark's progress). */
TB_HIDDEN int tb_recorder_output(struct tb_engine *e);
/* Stops and joins the drain, writer and flusher threads (idempotent). */
TB_HIDDEN void tb_engine_stop_threads(struct tb_engine *e);
/* engine_flush.c: a flusher thread's body (arg: its struct tb_flusher). */
TB_HIDDEN void *tb_flusher_main(void *arg);
/* One pass of the drain thread over every drained ring; returns packets taken. */
TB_HIDDEN unsigned tb_engine_drain_pass(struct tb_engine *e);
/* 1 when ring (ch, cpu) was ever written (its pages exist): idle CPUs cost nothing. */
TB_HIDDEN int tb_engine_ring_touched(struct tb_engine *e, unsigned ch, unsigned cpu);

#endif
