/* SPDX-License-Identifier: MIT */
/* engine_impl.h - the consumer engine's private state (src/consumer/ only). */
#ifndef TB_CONSUMER_ENGINE_IMPL_H
#define TB_CONSUMER_ENGINE_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "consumer/consumer.h"

#define TB_TRACER_VERSION "0.1.0"
#define TB_WARN_SLOTS 32u

struct tb_stream {
	int fd;             /* -1: not created yet (lazily, at the first packet) */
	uint64_t size;      /* bytes on disk: whole packets only */
	uint64_t last_seq;  /* packet_seq_num of the last packet on disk */
	int have_last;
	/* Written by one thread at a time (drain thread, or the controlling
	 * thread after it joined it), read by any thread for the status line:
	 * relaxed atomics, values exact at some instant (tb_stat_add/get). */
	struct tb_stream_stats st;
};

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
	char dir[PATH_MAX];

	unsigned nstreams; /* nchannels * ncpus */
	struct tb_stream *streams;
	uint8_t *buf;      /* one sub-buffer of the largest channel (drain thread) */
	uint64_t bufsize;

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

	/* flusher threads: sleep on fl_cond until their next visit or stop */
	pthread_mutex_t fl_lock;
	pthread_cond_t fl_cond; /* CLOCK_MONOTONIC */
	int fl_stop;            /* under fl_lock */
	struct tb_flusher *fl;
	unsigned nfl;

	int finished;
	int damage_reported; /* the truncation of the session file was reported (set once, atomic) */
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

static inline int tb_chan_drained(const struct tb_engine *e, unsigned ch)
{
	return e->s->chan[ch].mode != TB_MODE_OVERWRITE;
}

TB_HIDDEN void tb_stream_name(const struct tb_engine *e, unsigned ch, unsigned cpu, char *buf, size_t len);
TB_HIDDEN int tb_dir_prepare(struct tb_engine *e, int resume);
TB_HIDDEN int tb_stream_append(struct tb_engine *e, unsigned ch, unsigned cpu, const void *pkt,
			       const struct tb_packet_info *info);
TB_HIDDEN void tb_streams_close(struct tb_engine *e);
/* Rewrites metadata if the registry or process table changed since it was written. */
TB_HIDDEN int tb_engine_metadata_sync(struct tb_engine *e);
TB_HIDDEN void tb_engine_set_error(struct tb_engine *e, int err);
/*
 * 1 when the session file was truncated under us (platform/sigbus.h): the
 * pages it lost read as zeros, so nothing copied from the session any more
 * may be written; the first call that sees it sets the engine error (-EIO,
 * a sentence naming the file and the sizes).  Call it after copying from
 * the session and before writing what was copied.  Any thread.
 */
TB_HIDDEN int tb_engine_damaged(struct tb_engine *e);
TB_HIDDEN void tb_engine_warn(struct tb_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
TB_HIDDEN uint64_t tb_mono_ns(void);

#endif
