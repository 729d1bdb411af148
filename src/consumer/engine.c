/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the consumer engine: drain thread, per-CPU flusher threads,
 * final drain, snapshot and dead-session drain (see consumer.h for the map).
 *
 * Who touches what in shared memory:
 *   - ring positions (tail), the consumer futex protocol and the flush
 *     bookkeeping only through the ring.h primitives;
 *   - map->consumer_pid / consumer_heartbeat_ns / state: plain relaxed
 *     stores, no data is published with them (consumer_pid is a hint that
 *     block-mode producers check with kill(): tb_session_claim_consumer);
 *   - map->consumer_futex: tb_engine_wake() bumps it like a producer does,
 *     so that our own drain thread leaves tb_consumer_wait().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "consumer/engine_impl.h"
#include "core/classes.h"
#include "core/walk.h"
#include "platform/clock.h"
#include "platform/futex.h"
#include "platform/thread.h"
#include "session/registry.h"
#include "session/sigbus.h"

/* ---------------------------------------------------------------------- */
/* create / destroy                                                        */
/* ---------------------------------------------------------------------- */


int tb_engine_create(struct tb_session *s, const char *dir, const struct tb_engine_cfg *cfg,
		     struct tb_engine **out)
{
	*out = NULL;
	if (!s || (dir && !*dir) || (!dir && !(cfg && cfg->relay)))
		return tb_fail(-EINVAL, "tb_engine_create: no session, or neither a directory nor a relay");
	struct tb_engine *e = calloc(1, sizeof *e);
	if (!e)
		return tb_fail(-ENOMEM, "out of memory");
	e->s = s;
	e->flags = cfg ? cfg->flags : 0;
	e->live_ns = cfg && cfg->live_period_ns ? cfg->live_period_ns : TB_LIVE_PERIOD_DEFAULT_NS;
	if (e->live_ns == UINT64_MAX)
		e->live_ns = 0;
	else if (e->live_ns < 4000000ull)
		e->live_ns = 4000000ull; /* visits at most every 1 ms */
	if (s->readonly)
		e->flags |= TB_ENG_READONLY | TB_ENG_NO_FLUSHERS;
	e->dirfd = -1;
	pthread_mutex_init(&e->meta_lock, NULL);
	pthread_mutex_init(&e->err_lock, NULL);
	pthread_mutex_init(&e->fl_lock, NULL);
	pthread_mutex_init(&e->wr_lock, NULL);
	pthread_cond_init(&e->wr_cond, NULL);
	pthread_cond_init(&e->wr_done, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->fl_cond, &ca);
	pthread_condattr_destroy(&ca);
	e->local = dir != NULL;
	snprintf(e->dir, sizeof e->dir, "%s", dir ? dir : "(relay only)");
	/* survive a truncation of the session file from here on (attach
	 * already did it for attached sessions; created ones get it here) */
	if (tb_session_guard(s) < 0)
		tb_engine_warn(e, "%s", tb_errmsg());

	int rc;
	e->nstreams = s->nchannels * s->ncpus;
	e->streams = calloc(e->nstreams, sizeof *e->streams);
	for (unsigned c = 0; c < s->nchannels; c++)
		if (s->chan[c].sb_size > e->bufsize)
			e->bufsize = s->chan[c].sb_size;
	e->clock_now = -1;
	if (!e->bufsize)
		e->bufsize = TB_DIO_ALIGN;
	e->nslots = (unsigned)(TB_STAGE_BYTES / e->bufsize);
	e->nslots = e->nslots < 1 ? 1 : e->nslots > TB_STAGE_MAX ? TB_STAGE_MAX : e->nslots;
	/* aligned for direct I/O: packets are written from their copies here
	 * (stream_io.c); two batches, one filled while the other is written.
	 * In huge pages where the kernel gives them on request: a direct
	 * write's request is then a few physically contiguous segments, where
	 * 4 KiB pages make 256 per MiB, more than a virtio disk takes in one
	 * request (max_segments 254 on the benchmark VM: every 1 MiB write
	 * was two requests, and each request is a doorbell, a VM exit; with
	 * huge pages one: docs/BENCHMARKS.md, "Issue 14 rows"). */
	size_t blen = (size_t)(2 * e->bufsize * e->nslots), huge = (size_t)2 << 20;
	size_t align = blen >= huge ? huge : TB_DIO_ALIGN;
	if (posix_memalign((void **)&e->buf, align, blen))
		e->buf = NULL;
	else if (align == huge)
		(void)madvise(e->buf, blen - blen % huge, MADV_HUGEPAGE); /* a hint: 4 KiB pages work too */
	for (unsigned k = 0; k < 2 && e->buf; k++)
		e->batch[k].area = e->buf + k * e->bufsize * e->nslots;
	{
		const char *nd = getenv("TRACEBUF_NO_DIRECT_IO");
		e->direct = !(nd && *nd && strcmp(nd, "0"));
	}
	e->wcap = s->reg_capacity < TB_MAX_EVENTS ? s->reg_capacity : TB_MAX_EVENTS;
	e->wev = calloc(e->wcap ? e->wcap : 1, sizeof *e->wev);
	if (!e->streams || !e->buf || !e->wev) {
		rc = tb_fail(-ENOMEM, "out of memory (%" PRIu64 " bytes for a sub-buffer copy)", e->bufsize);
		goto fail;
	}
	for (unsigned i = 0; i < e->nstreams; i++) {
		e->streams[i].fd = -1;
		e->streams[i].dfd = -2;
		e->streams[i].gap_cause = -1;
	}
	/* --trust-writers: packets read in place, held by the outputs still
	 * reading them (engine_state.c); a read-only session cannot be */
	e->trust = cfg && cfg->trust_writers && !(e->flags & TB_ENG_READONLY);
	for (unsigned i = 0; e->trust && i < e->nstreams; i++) {
		unsigned ch = i / s->ncpus;
		if (!tb_chan_drained(e, ch))
			continue;
		e->streams[i].holds = calloc(s->chan[ch].sb_count, sizeof *e->streams[i].holds);
		if (!e->streams[i].holds) {
			rc = tb_fail(-ENOMEM, "out of memory");
			goto fail;
		}
	}
	if (cfg && cfg->nenv) {
		e->env = calloc(cfg->nenv, sizeof *e->env);
		if (!e->env) {
			rc = tb_fail(-ENOMEM, "out of memory");
			goto fail;
		}
		for (unsigned i = 0; i < cfg->nenv; i++) {
			e->env[i].key = strdup(cfg->env[i].key);
			e->env[i].str = cfg->env[i].str ? strdup(cfg->env[i].str) : NULL;
			e->env[i].num = cfg->env[i].num;
			e->nenv++;
		}
	}

	if (!dir) {
		/* relay-only (e->local == 0): no directory, ballast or mark; the
		 * kernel (before the relay: it announces the kernel streams too) */
		if (cfg && cfg->kernel && (rc = tb_engine_kernel_open(e, cfg->kernel)) < 0)
			goto fail;
		goto relay;
	}
	e->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->dirfd < 0) {
		rc = tb_fail(-errno, "cannot open output directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (faccessat(e->dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
		rc = tb_fail(-errno, "output directory %s is not writable: %s", dir, strerror(errno));
		goto fail;
	}
	/* the kernel first: tb_dir_prepare keeps a resumed directory's kernel streams only for it */
	if (cfg && cfg->kernel && (rc = tb_engine_kernel_open(e, cfg->kernel)) < 0)
		goto fail;
	rc = tb_dir_prepare(e, !!(e->flags & TB_ENG_RESUME));
	if (rc < 0)
		goto fail;
	tb_ballast_make(e);
	tb_recorder_mark(e);
	/* the local copy's output: its progress mark for followers, each tick */
	if ((rc = tb_recorder_output(e)) < 0)
		goto fail;
relay:
	/* the relay daemon last: a refusal leaves nothing behind but the directory */
	if (cfg && cfg->relay && (rc = tb_engine_relay_open(e, cfg->relay)) < 0)
		goto fail;
	*out = e;
	return 0;
fail:
	tb_engine_destroy(e);
	return rc;
}

void tb_engine_destroy(struct tb_engine *e)
{
	if (!e)
		return;
	tb_engine_stop_threads(e);
	tb_engine_kernel_stop(e);
	tb_kernel_close(e->kern);
	if (e->streams)
		tb_streams_close(e);
	tb_ballast_free(e);
	tb_engine_relay_free(e);
	tb_recorder_unmark(e);
	if (e->dirfd >= 0)
		close(e->dirfd);
	for (unsigned i = 0; i < e->nenv; i++) {
		free((char *)e->env[i].key);
		free((char *)e->env[i].str);
	}
	free(e->env);
	for (unsigned i = 0; e->streams && i < e->nstreams; i++)
		free(e->streams[i].holds);
	free(e->streams);
	free(e->kern_unsent);
	free(e->buf);
	free(e->wev);
	free(e->fl);
	pthread_cond_destroy(&e->fl_cond);
	pthread_mutex_destroy(&e->fl_lock);
	pthread_cond_destroy(&e->wr_cond);
	pthread_cond_destroy(&e->wr_done);
	pthread_mutex_destroy(&e->wr_lock);
	pthread_mutex_destroy(&e->err_lock);
	pthread_mutex_destroy(&e->meta_lock);
	free(e);
}

/* ---------------------------------------------------------------------- */
/* finish, snapshot, dead drain                                            */
/* ---------------------------------------------------------------------- */

struct emit_ctx {
	struct tb_engine *e;
	unsigned ch, cpu;
};

static int emit_packet(void *arg, const void *pkt, uint64_t len, const struct tb_packet_info *info)
{
	struct emit_ctx *x = arg;
	struct tb_engine *e = x->e;
	if (tb_engine_damaged(e)) { /* the copy may hold zeros of a truncated file */
		tb_stat_add(&tb_stream_at(e, x->ch, x->cpu)->st.dropped, 1);
		return 0;
	}
	/* a closed partial packet (snapshot, dead ring) is shorter than a sub-buffer */
	if (len != info->packet_bytes || len > e->s->chan[x->ch].sb_size || len % 8 ||
	    info->content_bytes > len || info->content_bytes < TB_PACKET_HEADER_SIZE) {
		tb_stat_add(&tb_stream_at(e, x->ch, x->cpu)->st.bad, 1);
		tb_stream_lose(e, x->ch, x->cpu, TB_LOSS_INVALID);
		tb_engine_warn(e, "%s cpu %u: packet %" PRIu64 " has inconsistent sizes, skipped",
			       e->s->chan[x->ch].name, x->cpu, info->seq);
		return 0;
	}
	tb_stream_append(e, x->ch, x->cpu, pkt, info);
	return 0; /* write errors are kept in e; the ring walk goes on (and counts drops) */
}

static void snapshot_ring(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	struct emit_ctx x = { e, ch, cpu };
	uint64_t torn = 0;
	int rc = tb_ring_snapshot(e->s, ch, cpu, emit_packet, &x, &torn);
	tb_stat_add(&tb_stream_at(e, ch, cpu)->st.torn, torn);
	if (rc < 0)
		tb_engine_warn(e, "%s cpu %u: snapshot failed: %s", e->s->chan[ch].name, cpu, tb_errmsg());
}

static void dead_ring(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	struct emit_ctx x = { e, ch, cpu };
	uint64_t bad = 0;
	int rc = tb_ring_drain_dead(e->s, ch, cpu, emit_packet, &x, &bad);
	tb_stat_add(&tb_stream_at(e, ch, cpu)->st.bad, bad);
	if (bad)
		tb_engine_warn(e, "%s cpu %u: %" PRIu64 " packet%s could not be proved valid and %s cut",
			       e->s->chan[ch].name, cpu, bad, bad == 1 ? "" : "s", bad == 1 ? "was" : "were");
	if (rc < 0)
		tb_engine_warn(e, "%s cpu %u: drain failed: %s", e->s->chan[ch].name, cpu, tb_errmsg());
}

/* The end of every one-off or final drain: the ballast's room goes to the
 * metadata (written last: it names every class a packet uses) and the
 * streams are closed.  A failure is the engine's error. */
static void close_outputs(struct tb_engine *e)
{
	tb_ballast_free(e);
	int rc = tb_engine_write_metadata(e);
	if (rc < 0)
		tb_engine_set_error(e, rc);
	tb_streams_close(e);
}

/* --trust-writers: every sub-buffer reaped and still held goes back to the producers. */
static void release_all_held(struct tb_engine *e)
{
	for (unsigned ch = 0; e->trust && ch < e->s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < e->s->ncpus; cpu++)
			tb_engine_release_held(e, ch, cpu, 1);
}

int tb_engine_finish(struct tb_engine *e, unsigned how)
{
	struct tb_session *s = e->s;
	if (!(e->flags & TB_ENG_READONLY))
		__atomic_store_n(&s->map->state, TB_STATE_STOPPING, __ATOMIC_RELAXED);
	tb_engine_stop_threads(e);
	/* a truncated session file: nothing more is taken from it */
	int damaged = tb_engine_damaged(e);
	if (!(e->flags & TB_ENG_READONLY) && !damaged)
		tb_engine_drain_pass(e); /* nothing should be left; cheap when so */
	/* --trust-writers: no producer left to write into the sub-buffers the
	 * relay's sender still reads: released now, so that the dead drain
	 * below starts after them (their packets are the relay's already) */
	if ((how & TB_FINISH_DEAD) && !damaged)
		release_all_held(e);
	for (unsigned ch = 0; ch < s->nchannels && !damaged; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			if (!tb_engine_ring_touched(e, ch, cpu))
				continue;
			if (!tb_chan_drained(e, ch)) {
				if (how & TB_FINISH_SNAPSHOT)
					snapshot_ring(e, ch, cpu);
			} else if (how & TB_FINISH_DEAD) {
				dead_ring(e, ch, cpu);
			}
			/* no producer left: the last losses are final */
			if ((how & TB_FINISH_DEAD) && ((how & TB_FINISH_SNAPSHOT) || tb_chan_drained(e, ch)))
				tb_stream_finish(e, ch, cpu);
		}
	tb_engine_kernel_finish(e); /* its streams complete before the last metadata */
	close_outputs(e);
	tb_output_close(e);
	/* the outputs are done (the relay's sender joined): every sub-buffer
	 * they held goes back to the producers that may remain (--pid, --attach) */
	if (!tb_engine_damaged(e))
		release_all_held(e);
	tb_recorder_unmark(e);
	if (!(e->flags & TB_ENG_READONLY)) {
		__atomic_store_n(&s->map->state, TB_STATE_STOPPED, __ATOMIC_RELAXED);
		tb_session_release_consumer(s);
	}
	e->finished = 1;
	return tb_engine_error(e);
}

int tb_engine_snapshot(struct tb_engine *e)
{
	struct tb_session *s = e->s;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
			if (tb_engine_ring_touched(e, ch, cpu))
				snapshot_ring(e, ch, cpu);
	close_outputs(e);
	return tb_engine_error(e);
}

int tb_engine_drain_dead(struct tb_engine *e)
{
	struct tb_session *s = e->s;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
			if (tb_engine_ring_touched(e, ch, cpu)) {
				dead_ring(e, ch, cpu);
				tb_stream_finish(e, ch, cpu);
			}
	close_outputs(e);
	return tb_engine_error(e);
}

/* ---------------------------------------------------------------------- */
/* statistics and helpers                                                  */
/* ---------------------------------------------------------------------- */

void tb_engine_io_rates(struct tb_engine *e, double out[2])
{
	out[0] = e->io_rate[0];
	out[1] = e->io_rate[1];
}

void tb_engine_stats(struct tb_engine *e, int ch, int cpu, struct tb_stream_stats *out)
{
	memset(out, 0, sizeof *out);
	for (unsigned c = 0; c < e->s->nchannels; c++) {
		if (ch >= 0 && (unsigned)ch != c)
			continue;
		for (unsigned k = 0; k < e->s->ncpus; k++) {
			if (cpu >= 0 && (unsigned)cpu != k)
				continue;
			const struct tb_stream_stats *x = &tb_stream_at(e, c, k)->st;
			out->packets += __atomic_load_n(&x->packets, __ATOMIC_RELAXED);
			out->bytes += __atomic_load_n(&x->bytes, __ATOMIC_RELAXED);
			out->direct += __atomic_load_n(&x->direct, __ATOMIC_RELAXED);
			out->events += __atomic_load_n(&x->events, __ATOMIC_RELAXED);
			out->bad += __atomic_load_n(&x->bad, __ATOMIC_RELAXED);
			out->torn += __atomic_load_n(&x->torn, __ATOMIC_RELAXED);
			out->skipped += __atomic_load_n(&x->skipped, __ATOMIC_RELAXED);
			out->resyncs += __atomic_load_n(&x->resyncs, __ATOMIC_RELAXED);
			out->dropped += __atomic_load_n(&x->dropped, __ATOMIC_RELAXED);
			for (unsigned q = 0; q < TB_LOSS_NCAUSES; q++)
				out->lost[q] += __atomic_load_n(&x->lost[q], __ATOMIC_RELAXED);
			if (!e->local) {
				/* relay-only: the relay's copy is the trace, and what
				 * it did not get is lost to it (its later packets say
				 * so as lost_relay, relay.c) */
				uint64_t u = __atomic_load_n(&tb_stream_at(e, c, k)->relay_unsent, __ATOMIC_RELAXED);
				uint64_t ev = __atomic_load_n(&x->events, __ATOMIC_RELAXED);
				out->events -= u < ev ? u : ev;
				out->lost[TB_LOSS_RELAY] += u;
			}
		}
	}
}

uint32_t tb_session_consumer_pid(const struct tb_session *s)
{
	/* relaxed: informational, see the top of this file */
	return __atomic_load_n(&s->map->consumer_pid, __ATOMIC_RELAXED);
}

uint32_t tb_session_creator_pid(const struct tb_session *s)
{
	return __atomic_load_n(&s->map->creator_pid, __ATOMIC_RELAXED);
}

