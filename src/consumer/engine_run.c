/* SPDX-License-Identifier: MIT */
/*
 * engine_run.c - the recorder engine while it runs: the drain thread (waits
 * on the consumer futex, copies and checks the complete sub-buffers of each
 * ring in batches, hands them to their stream, writes a batch itself when
 * it is not behind), the writer thread (writes a batch while the drain
 * thread fills the next, when it is behind), and starting and stopping
 * them with the per-CPU flusher threads (engine_flush.c: they close stale
 * partial sub-buffers).  Creating, finishing and the
 * one-shot drains (snapshot, dead session) are engine.c; what a packet's
 * stream holds is stream.c, how it reaches the file stream_io.c.
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

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------------------- */
/* draining                                                                */
/* ---------------------------------------------------------------------- */


/* The walk of one packet: stops at the first record stamped after the packet's end. */
struct walk_ctx {
	uint64_t ts_end;
	uint64_t late_off; /* offset of that record; 0: none */
	uint64_t events, last_ts;
};

static int walk_rec(void *arg, const struct tb_walk_rec *r)
{
	struct walk_ctx *w = arg;
	if (r->ts > w->ts_end) {
		w->late_off = r->off;
		return 1;
	}
	if (r->id != TB_EVENT_ID_THREAD)
		w->events++;
	w->last_ts = r->ts;
	return 0;
}

/*
 * Proves every record of the packet copied in buf valid before it is
 * written (walk.h: a known class with a valid registry entry, a well-formed
 * payload inside the content, time never going back, and not after the
 * packet's timestamp_end), and cuts the packet at the first record that is
 * not.  The copy is private: what is checked is what is written (with
 * --trust-writers buf is the ring itself, which the session's writers are
 * trusted not to change once committed: tb_ring_in_place()).  A
 * corrupted ring (a stray or hostile write into the shared mapping) then
 * costs the records from that point on, counted as invalid
 * (tb_stream_append() counts the committed events the packet no longer
 * holds, and drops a packet whose times readers would reject), never a
 * packet that a reader rejects; said once per ring.
 */
static void walk_copy(struct tb_engine *e, unsigned ch, unsigned cpu, uint64_t pos, uint8_t *buf,
		      struct tb_packet_info *info)
{
	struct tb_session *s = e->s;
	/* The registry count is loaded after tb_ring_ready()'s acquire load of
	 * head; every class a record in this packet uses was published (count
	 * stored with release, registry.c) before the record was written, so
	 * it is in the count the sync sees.  meta_lock: the copy is shared
	 * with the metadata writer. */
	struct tb_walk_result wr;
	struct walk_ctx w = { info->ts_end, 0, 0, info->ts_begin };
	pthread_mutex_lock(&e->meta_lock);
	uint32_t nev = tb_engine_registry_sync(e);
	uint32_t ctx = tb_walk_ctx(s->chan[ch].vtid); /* the record layout of this channel's packets */
	tb_walk_packet(e->wev, nev, buf, info->content_bytes, info->ts_begin, ctx, NULL, NULL, &wr);
	w.events = wr.events;
	if (wr.last_ts > info->ts_end) { /* rare (corruption): again, stopping at the first late record */
		w.events = 0;
		tb_walk_packet(e->wev, nev, buf, info->content_bytes, info->ts_begin, ctx, walk_rec, &w, &wr);
	}
	pthread_mutex_unlock(&e->meta_lock);
	uint64_t end = w.late_off ? w.late_off : wr.valid_end;
	const char *why = NULL;
	if (end != info->content_bytes) {
		why = w.late_off ? "a record stamped after the packet's end" : wr.error;
		uint64_t v = end * 8;
		memcpy(buf + TB_PKT_OFF_CONTENT, &v, 8);
		info->content_bytes = end;
	}
	uint64_t committed = info->cnt_end >= info->cnt_begin ? info->cnt_end - info->cnt_begin : 0;
	if (w.events != committed) {
		/* a cut, or a descriptor that disagrees with the records:
		 * readers get what the walk found; the committed events missing
		 * are counted as invalid */
		if (!why)
			why = "its descriptor counts another number of events";
		info->events = w.events;
		if (info->cnt_end < info->cnt_begin + w.events)
			info->cnt_end = info->cnt_begin + w.events;
	}
	if (!why)
		return;
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	tb_stat_add(&st->st.bad, 1);
	if (__atomic_load_n(&st->st.bad, __ATOMIC_RELAXED) == 1)
		tb_engine_warn(e,
			       "%s cpu %u: packet %" PRIu64 " cut at byte %" PRIu64 ": %s; %" PRIu64 " of its %" PRIu64
			       " event%s kept, the rest counted as invalid (later packets of this ring with problems "
			       "are only counted)",
			       s->chan[ch].name, cpu, pos >> s->chan[ch].sb_shift, end, why, w.events, committed,
			       committed == 1 ? "" : "s");
}

/* ---------------------------------------------------------------------- */
/* the writer thread                                                       */
/* ---------------------------------------------------------------------- */

/*
 * A direct write waits for the device (stream_io.c); meanwhile the drain
 * thread copies and validates the next batch.  One batch is written at a
 * time, the next one is filled: the handoff is wr_lock (submit and reap),
 * which orders the drain thread's staging before the write and the write
 * before the drain thread's reuse of the batch.
 */
static void *writer_main(void *arg)
{
	struct tb_engine *e = arg;
	tb_engine_thread_begin(e, "tb-writer");
	for (;;) {
		pthread_mutex_lock(&e->wr_lock);
		while (!e->wr_job && !e->wr_stop)
			pthread_cond_wait(&e->wr_cond, &e->wr_lock);
		struct tb_batch *b = e->wr_job;
		pthread_mutex_unlock(&e->wr_lock);
		if (!b)
			break; /* stop, nothing left */
		tb_stream_write_batch(e, b);
		pthread_mutex_lock(&e->wr_lock);
		b->done = 1;
		e->wr_job = NULL;
		pthread_mutex_unlock(&e->wr_lock);
		/* signalled after the unlock, as in submit() */
		pthread_cond_signal(&e->wr_done);
	}
	return NULL;
}

/* Writes batch b from the calling (drain) thread; the writer has nothing in flight. */
static void write_now(struct tb_engine *e, struct tb_batch *b)
{
	tb_stream_write_batch(e, b);
	b->done = 1;
	b->inline_ = 1;
}

/* Hands batch b to the writer (or writes it now when there is none: the
 * final drain, after the threads stopped). */
static void submit(struct tb_engine *e, struct tb_batch *b)
{
	if (!e->wr_running) {
		write_now(e, b);
		return;
	}
	pthread_mutex_lock(&e->wr_lock);
	b->done = 0;
	e->wr_job = b;
	pthread_mutex_unlock(&e->wr_lock);
	/* after the unlock: the writer wakes to a free lock (signalled under
	 * it, it would wake only to wait for it: a futex call and a switch
	 * more per batch).  No wake-up is lost: the waiter tests its
	 * condition under the lock; and the engine outlives both threads
	 * (tb_engine_stop_threads() joins them). */
	pthread_cond_signal(&e->wr_cond);
}

/* Waits for b's write, then does its bookkeeping and hands its sub-buffers
 * back to the producers: a sub-buffer is released only once its packet is
 * in the file, so that a recorder killed at any moment leaves every packet
 * on disk or in the ring (where `recover` or a second recorder finds it).
 * With --trust-writers, also only once no output reads it in the ring any
 * more (the relay's sender: tb_engine_hold()), and in ring order. */
static void reap(struct tb_engine *e, struct tb_batch *b)
{
	if (e->wr_running && !b->inline_) {
		pthread_mutex_lock(&e->wr_lock);
		while (!b->done)
			pthread_cond_wait(&e->wr_done, &e->wr_lock);
		pthread_mutex_unlock(&e->wr_lock);
	}
	b->inline_ = 0;
	if (e->relay)
		tb_engine_relay_reaping(e);
	tb_stream_reap(e, b); /* hands the packets to the outputs: relay-only, they own their slots now */
	if (e->relay)
		tb_engine_relay_reaped(e, b);
	uint64_t S = e->s->chan[b->ch].sb_size;
	struct tb_stream *st = tb_stream_at(e, b->ch, b->cpu);
	if (st->holds) {
		/* --trust-writers: an output may still read some of them in
		 * the ring (tb_engine_hold()): released in order once it is done */
		if (st->rel_pos == st->reaped_pos)
			st->rel_pos = b->pos; /* none pending: from the consumer position */
		st->reaped_pos = b->pos + b->nsb * S;
		tb_engine_release_held(e, b->ch, b->cpu, 0);
	} else {
		for (unsigned k = 0; k < b->nsb; k++)
			tb_ring_release(e->s, b->ch, b->cpu, b->pos + k * S);
	}
	b->nsb = 0;
}

/*
 * Takes up to `budget` complete sub-buffers of (ch, cpu), in batches: the
 * ones ready are copied to a batch's area, validated and accounted, then
 * written with one system call (stream_io.c): by this thread when the batch
 * is all the ring had ready, else by the writer thread while the next batch
 * is filled; then handed back to the producers (reap()).
 * Returns how many were taken; nothing of the ring is in flight on return.
 */
static unsigned drain_ring(struct tb_engine *e, unsigned ch, unsigned cpu, unsigned budget)
{
	struct tb_session *s = e->s;
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	uint64_t S = s->chan[ch].sb_size;
	unsigned n = 0, resyncs = 0, cur = 0, r0 = 0; /* r0: ready when the visit began */
	struct tb_batch *fly = NULL; /* the batch being written */
	/* --trust-writers: what the outputs gave back since the last visit */
	unsigned released = st->holds ? tb_engine_release_held(e, ch, cpu, 0) : 0;
	while (n < budget) {
		uint64_t pos;
		int r = tb_ring_ready_n(s, ch, cpu, &pos);
		if (r == 0)
			break;
		if (r < 0) {
			if (fly) { /* its sub-buffers first: a resync moves the consumer position */
				reap(e, fly);
				fly = NULL;
				continue;
			}
			char msg[200];
			snprintf(msg, sizeof msg, "%s", tb_errmsg());
			uint64_t skipped = tb_ring_resync(s, ch, cpu);
			/* the ones held are forgotten (their holds are given back
			 * later, and only delay the sub-buffers that reuse them) */
			st->rel_pos = st->reaped_pos = 0;
			tb_stat_add(&st->st.skipped, skipped);
			tb_stat_add(&st->st.resyncs, 1);
			tb_stream_lose(e, ch, cpu, TB_LOSS_INVALID);
			tb_engine_warn(e, "%s cpu %u: control block inconsistent (%s); resynchronised, "
					  "%" PRIu64 " sub-buffer%s skipped", s->chan[ch].name, cpu, msg, skipped,
					  skipped == 1 ? "" : "s");
			if (++resyncs > 1)
				break; /* hostile or broken: try again at the next pass */
			continue;
		}
		/* the ones in flight are still in the ring (released at their
		 * reap), and so are those an output still reads there
		 * (--trust-writers: reaped, held) */
		unsigned held = tb_engine_held(e, ch, cpu, pos);
		unsigned ready = (unsigned)r, skip = held + (fly ? fly->nsb : 0);
		if (n == 0)
			r0 = ready > held ? ready - held : 0;
		if (!fly && n && (ready > held ? ready - held : 0) < s->chan[ch].watermark &&
		    !__atomic_load_n(&e->drain_stop, __ATOMIC_RELAXED))
			break; /* got ready while we wrote: they wait for the next
				* wake-up with the others, one write instead of a
				* small one now (relaxed: a hint, as `behind` below) */
		if (fly && ready >= skip && ready - skip < e->nslots) {
			/* Less than a whole batch beyond the one in flight: wait
			 * for its write first (more sub-buffers get ready
			 * meanwhile).  A batch staged now would be a small
			 * write, and the device wants large ones (stream_io.c);
			 * the overlap pays when a whole batch waits, i.e. when
			 * the recorder is behind. */
			reap(e, fly);
			fly = NULL;
			continue;
		}
		if (ready <= skip)
			break;
		unsigned batch = ready - skip;
		if (batch > e->nslots)
			batch = e->nslots;
		if (batch > budget - n)
			batch = budget - n;
		struct tb_batch *b = &e->batch[cur]; /* its n and ok are 0 since its reap */
		b->ch = ch;
		b->cpu = cpu;
		b->pos = pos + skip * S;
		b->nsb = batch;
		/* behind: three quarters of the ring wait (the device is slower
		 * than the producers, and losses are near: the page cache takes
		 * this batch without waiting if it has lately been the faster
		 * way; stream_io.c, cache_pays()); or the recording is ending:
		 * what is left is all that stands between the user and the
		 * trace, so the faster way too (on the benchmark VM the ~10 MiB
		 * a recorder kept behind took 6 ms direct at the end).
		 * Relaxed: a hint of which way to write, nothing is read
		 * through it (the acquire in drain_main() orders the rest). */
		b->behind = ready >= s->chan[ch].sb_count - s->chan[ch].sb_count / 4 ||
			    __atomic_load_n(&e->drain_stop, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < batch; k++) {
			uint64_t at = b->pos + k * S;
			/* with a relay: straight into a slot of its send pool,
			 * which the local copy is written from and the relay
			 * sends from (a second copy into its queue cost ~15 % of
			 * the recorder's CPU at 40 MB/s); the batch's area when
			 * none is free */
			struct tb_packet_info info;
			uint8_t *slot = NULL;
			if (st->holds) {
				/* --trust-writers: checked, written and sent where
				 * it is (tb_ring_in_place(): no copy; the walk and the
				 * header readers must see are written into the ring,
				 * which is ours until the release) */
				r = tb_ring_in_place(s, ch, cpu, at, &slot, &info);
			} else {
				slot = e->relay ? tb_engine_relay_slot(e) : NULL;
				if (slot)
					b->rslot[b->nrslot++] = slot;
				else
					slot = b->area + (uint64_t)k * e->bufsize;
				r = tb_ring_copy(s, ch, cpu, at, slot, &info);
			}
			if (tb_engine_damaged(e)) {
				/* the copy may hold zeros of a truncated file: never written */
				tb_stat_add(&st->st.dropped, 1);
			} else if (r < 0) {
				tb_stat_add(&st->st.bad, 1);
				tb_stream_lose(e, ch, cpu, TB_LOSS_INVALID);
				tb_engine_warn(e, "%s cpu %u: packet %" PRIu64 " failed validation, skipped: %s",
					       s->chan[ch].name, cpu, at >> s->chan[ch].sb_shift, tb_errmsg());
			} else {
				walk_copy(e, ch, cpu, at, slot, &info);
				tb_stream_stage(e, b, slot, &info); /* errors are kept in e */
			}
		}
		if (fly)
			reap(e, fly);
		uint64_t upto = n + batch;
		n += batch;
		if (!fly && upto <= r0) {
			/* Nothing in flight, and the batch holds only
			 * sub-buffers that were ready when this visit began
			 * (r0: a watermark's worth when the recorder keeps
			 * up): written here.  A hand-off to the writer and
			 * back costs two futex calls and two switches (~8 % of
			 * the writer's samples and ~15 % of the drain thread's
			 * at one sub-buffer per batch, issue 30).  What got
			 * ready during the visit's writes means the recorder
			 * is behind: those batches go to the writer thread,
			 * which overlaps the copy of one with the write of the
			 * other.  The writer is idle (every batch it had was
			 * reaped, which ordered its writes and its io_rate
			 * before ours). */
			write_now(e, b);
			reap(e, b);
			continue;
		}
		submit(e, b);
		e->pass_behind = 1;
		fly = b;
		cur ^= 1;
	}
	if (fly)
		reap(e, fly);
	return n + released;
}

unsigned tb_engine_drain_pass(struct tb_engine *e)
{
	struct tb_session *s = e->s;
	unsigned total = 0;
	e->pass_behind = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		if (!tb_chan_drained(e, ch))
			continue;
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
			if (tb_engine_ring_touched(e, ch, cpu))
				total += drain_ring(e, ch, cpu, s->chan[ch].sb_count);
	}
	return total;
}

static void *drain_main(void *arg)
{
	struct tb_engine *e = arg;
	tb_engine_thread_begin(e, "tb-drain");
	struct tb_map *map = e->s->map;
	unsigned idle_wakeups = 0;
	for (;;) {
		/* acquire: pairs with the release store in tb_engine_stop_threads(); the
		 * final flushes happened before it, so the pass below sees them */
		int stopping = __atomic_load_n(&e->drain_stop, __ATOMIC_ACQUIRE);
		if (tb_engine_damaged(e)) {
			/* the session file was truncated: nothing more is taken from it */
			if (stopping)
				break;
			sleep_ns(10000000);
			continue;
		}
		unsigned n = tb_engine_drain_pass(e);
		__atomic_store_n(&map->consumer_heartbeat_ns, tb_mono_ns(), __ATOMIC_RELAXED);
		int tick_due = tb_output_tick(e); /* the progress mark, live beacons */
		if (stopping) {
			if (n)
				continue; /* until a pass finds nothing */
			break;
		}
		/* After a pass that took something too: what got ready
		 * meanwhile waits for the watermark (tb_consumer_wait()
		 * returns at once when a ring has it), so that each pass
		 * writes a watermark's worth, not the one sub-buffer that
		 * filled during the last write.
		 * tb_consumer_wait() returns at once (1) when some ring looks
		 * ready; if the passes then find nothing twice in a row (a
		 * ring we do not drain, or one we could not make progress
		 * on), back off instead of spinning */
		if (n && e->pass_behind) {
			/* behind (a batch went to the writer thread): the
			 * next pass at once, as long as there is work; to
			 * sleep and be woken at the watermark would put a
			 * futex call and, on a loaded machine, a wait for a
			 * CPU between every pass (a recorder at full speed
			 * under a load of 12 on 2 CPUs lost 13 % of the
			 * events where it lost 9 % without, in 3 x 8
			 * interleaved runs) */
			idle_wakeups = 0;
			continue;
		}
		if (n)
			idle_wakeups = 0;
		else if (idle_wakeups >= 2)
			sleep_ns(10000000);
		uint64_t timeout = tick_due ? 50000000ull : 1000000000ull;
		/* the live period: a packet that filled in less than half a
		 * period and waits below the watermark is taken within half a
		 * period of its close, so within the period of its first
		 * record; one open longer wakes us at its close
		 * (map->live_wake_ms, set by tb_engine_start_threads()) */
		if (e->live_ns && e->live_ns / 2 < timeout)
			timeout = e->live_ns / 2;
		int rc = tb_consumer_wait(e->s, timeout);
		idle_wakeups = rc == 0 || n ? 0 : idle_wakeups + 1;
	}
	return NULL;
}

int tb_engine_start_threads(struct tb_engine *e)
{
	struct tb_session *s = e->s;
	int any = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		any |= tb_chan_drained(e, ch);
	if (!any || (e->flags & TB_ENG_READONLY))
		return 0; /* flight recorder only: nothing to drain continuously */

	/* again (`record` claimed before forking CMD): an attaching recorder
	 * replaces a dead one's pid here; memory order: see the function */
	tb_session_claim_consumer(s);
	/* the live period's wake-up of a packet open long (ring/append.c,
	 * packet_was_old()); 0 (none) replaces a previous consumer's.
	 * Relaxed: a hint producers read at each switch, none needs it at
	 * once (the drain thread's own half-period wake-ups bound the rest) */
	uint64_t wake_ms = e->live_ns ? e->live_ns / 2 / 1000000u : 0;
	__atomic_store_n(&s->map->live_wake_ms,
			 (uint32_t)(e->live_ns ? (wake_ms < 1 ? 1 : wake_ms > 3600000u ? 3600000u : wake_ms) : 0),
			 __ATOMIC_RELAXED);
	int rc = 0;
	/* relay only: no file to write, nothing for a writer to overlap; a
	 * handoff per batch would cost two wake-ups (submit() writes in place) */
	if (e->local) {
		rc = pthread_create(&e->wr_thr, NULL, writer_main, e);
		if (rc)
			return tb_fail(-rc, "cannot start the writer thread: %s", strerror(rc));
		e->wr_running = 1;
	}
	rc = pthread_create(&e->drain_thr, NULL, drain_main, e);
	if (rc)
		return tb_fail(-rc, "cannot start the drain thread: %s", strerror(rc));
	e->drain_running = 1;
	if (e->flags & TB_ENG_NO_FLUSHERS)
		return 0;
	e->fl = calloc(s->ncpus, sizeof *e->fl);
	if (!e->fl)
		return tb_fail(-ENOMEM, "out of memory");
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		struct tb_flusher *fl = &e->fl[e->nfl];
		fl->e = e;
		fl->cpu = cpu;
		rc = pthread_create(&fl->thr, NULL, tb_flusher_main, fl);
		if (rc)
			return tb_fail(-rc, "cannot start the flusher of cpu %u: %s", cpu, strerror(rc));
		fl->running = 1;
		e->nfl++;
	}
	return 0;
}

void tb_engine_stop_threads(struct tb_engine *e)
{
	if (e->nfl) {
		pthread_mutex_lock(&e->fl_lock);
		e->fl_stop = 1;
		pthread_cond_broadcast(&e->fl_cond);
		pthread_mutex_unlock(&e->fl_lock);
		for (unsigned i = 0; i < e->nfl; i++)
			if (e->fl[i].running) {
				pthread_join(e->fl[i].thr, NULL);
				e->fl[i].running = 0;
			}
		e->nfl = 0;
	}
	if (e->drain_running) {
		/* release: pairs with the acquire load in drain_main(); every
		 * final flush (joined above) happens before its last pass */
		__atomic_store_n(&e->drain_stop, 1, __ATOMIC_RELEASE);
		tb_engine_wake(e);
		pthread_join(e->drain_thr, NULL);
		e->drain_running = 0;
	}
	if (e->wr_running) {
		/* the drain thread reaped every batch before it returned */
		pthread_mutex_lock(&e->wr_lock);
		e->wr_stop = 1;
		pthread_cond_broadcast(&e->wr_cond);
		pthread_mutex_unlock(&e->wr_lock);
		pthread_join(e->wr_thr, NULL);
		e->wr_running = 0;
	}
}

