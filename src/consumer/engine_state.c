/* SPDX-License-Identifier: MIT */
/*
 * engine_state.c - the engine's state and error reporting, in one place
 * that every other file of the engine uses and that calls none of them:
 * the first error and the warnings queue, the session file's damage, the
 * stream names and empty packet headers, what a ring holds (touched, idle),
 * the consumer wake-up and the session's consumer pid, the holds outputs
 * take on packets they read in the ring (--trust-writers: released in ring
 * order once given back), and the output boundary: every output (the relay,
 * the local copy's progress mark; engine_impl.h, struct tb_output) is
 * reached through it, by its function pointers, so that no file calls
 * back into the one that calls it (tests/lint/calls.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "consumer/engine_impl.h"
#include "platform/futex.h"
#include "session/sigbus.h"

/* ---------------------------------------------------------------------- */
/* errors and warnings                                                     */
/* ---------------------------------------------------------------------- */

void tb_engine_thread_begin(struct tb_engine *e, const char *name)
{
	/* the system call itself (at most 15 bytes: ours are): libtracebuf wraps
	 * pthread_setname_np() and prctl() to write a program's renames into its
	 * session (producer/rename_hooks.c), and an embedded recorder's threads
	 * are not the program's (t_record_relay: one event too many) */
	syscall(SYS_prctl, PR_SET_NAME, (unsigned long)name, 0ul, 0ul, 0ul);
	tb_kernel_exclude_self(e->kern);
}

void tb_engine_set_error(struct tb_engine *e, int err)
{
	pthread_mutex_lock(&e->err_lock);
	if (!e->err) {
		snprintf(e->errmsg, sizeof e->errmsg, "%s", tb_errmsg());
		/* release: pairs with the acquire load in tb_engine_error(), so a
		 * reader that sees err also sees errmsg */
		__atomic_store_n(&e->err, err, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&e->err_lock);
}

int tb_engine_damaged(struct tb_engine *e)
{
	uint64_t now = 0;
	if (!tb_session_damaged(e->s, &now))
		return 0;
	/* relaxed: only elects the thread that words the error; the error
	 * itself is published under err_lock (tb_engine_set_error) */
	if (!__atomic_exchange_n(&e->damage_reported, 1, __ATOMIC_RELAXED)) {
		tb_fail(-EIO,
			"session file %s was truncated to %" PRIu64 " bytes (from %" PRIu64
			") while it was being read (by another process of your uid, or root); the pages it lost read "
			"as zeros now, so recording stopped: the trace holds the packets written before",
			e->s->path, now, e->s->size);
		tb_engine_set_error(e, -EIO);
	}
	return 1;
}

int tb_engine_error(struct tb_engine *e)
{
	return __atomic_load_n(&e->err, __ATOMIC_ACQUIRE);
}

const char *tb_engine_errmsg(struct tb_engine *e)
{
	return tb_engine_error(e) ? e->errmsg : "no error";
}

void tb_engine_warn(struct tb_engine *e, const char *fmt, ...)
{
	pthread_mutex_lock(&e->err_lock);
	if (e->warn_head - e->warn_tail < TB_WARN_SLOTS) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->warn[e->warn_head % TB_WARN_SLOTS], sizeof e->warn[0], fmt, ap);
		va_end(ap);
		e->warn_head++;
	} else {
		e->warn_lost++;
	}
	pthread_mutex_unlock(&e->err_lock);
}

int tb_engine_next_warning(struct tb_engine *e, char *buf, unsigned len)
{
	int got = 0;
	pthread_mutex_lock(&e->err_lock);
	if (e->warn_tail != e->warn_head) {
		snprintf(buf, len, "%s", e->warn[e->warn_tail % TB_WARN_SLOTS]);
		e->warn_tail++;
		got = 1;
	} else if (e->warn_lost) {
		snprintf(buf, len, "%" PRIu64 " more warning%s not shown", e->warn_lost, e->warn_lost == 1 ? "" : "s");
		e->warn_lost = 0;
		got = 1;
	}
	pthread_mutex_unlock(&e->err_lock);
	return got;
}

/* ---------------------------------------------------------------------- */
/* streams and rings                                                       */
/* ---------------------------------------------------------------------- */

void tb_stream_name(const struct tb_engine *e, unsigned ch, unsigned cpu, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%u", e->s->chan[ch].name, cpu);
}

void tb_stream_empty_header(const struct tb_engine *e, unsigned ch, unsigned cpu, uint64_t seq, uint64_t ts,
			    const uint64_t lost[TB_LOSS_NCAUSES], struct tb_packet_header *h)
{
	memset(h, 0, sizeof *h);
	h->magic = TB_CTF_MAGIC;
	memcpy(h->uuid, e->s->uuid, 16);
	/* the stream class of the channel's packets: a reader takes a stream
	 * file's class from its first packet, which may be this one */
	h->stream_id = e->s->chan[ch].vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN;
	h->stream_instance_id = ((uint64_t)ch << 32) | cpu;
	h->timestamp_begin = h->timestamp_end = ts;
	h->content_size = h->packet_size = TB_PACKET_HEADER_SIZE * 8ull;
	h->packet_seq_num = seq;
	h->cpu_id = cpu;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++) {
		h->lost[k] = lost ? lost[k] : 0;
		h->events_discarded += h->lost[k];
	}
}

void tb_engine_wake(struct tb_engine *e)
{
	if (e->flags & TB_ENG_READONLY)
		return;
	uint32_t *f = &e->s->map->consumer_futex;
	/* release: pairs with the acquire load of consumer_futex inside
	 * tb_consumer_wait(), like a producer's wake-up; what we publish is
	 * only "look again", the rings themselves carry their own ordering */
	__atomic_fetch_add(f, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(f);
}

int tb_engine_ring_touched(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	/* relaxed: a hint only; a ring whose first write we miss here is
	 * seen at the next pass (or is taken by drain_dead after all
	 * producers are gone, when nothing races any more) */
	return __atomic_load_n(&tb_ctl_of(e->s, ch, cpu)->head, __ATOMIC_RELAXED) != 0;
}

int tb_engine_ring_idle(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	const struct tb_ctl *c = tb_ctl_of(e->s, ch, cpu);
	/* relaxed: see relay_tick() in engine_relay.c for why a stale view is harmless */
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	if (head == 0)
		return 1;
	uint64_t S = e->s->chan[ch].sb_size;
	if (__atomic_load_n(&c->owner, __ATOMIC_RELAXED) != 0)
		return 0;
	if ((head & (S - 1)) != TB_PACKET_HEADER_SIZE)
		return 0;
	/* and every closed packet was taken by the consumer (reaped: a packet
	 * an output still sends from the ring was taken) */
	uint64_t pos;
	int n = tb_ring_ready_n(e->s, ch, cpu, &pos);
	return n == 0 || (n > 0 && (unsigned)n <= tb_engine_held(e, ch, cpu, pos));
}

/* ---------------------------------------------------------------------- */
/* packets read in place (--trust-writers)                                 */
/* ---------------------------------------------------------------------- */

int tb_engine_hold(struct tb_engine *e, unsigned ch, unsigned cpu, const void *p)
{
	if (!e->trust || ch >= e->s->nchannels || cpu >= e->s->ncpus)
		return -1;
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	const struct tb_chan_view *cv = &e->s->chan[ch];
	const uint8_t *first = tb_sb_at(e->s, ch, cpu, 0), *b = p;
	if (!st->holds || b < first || b >= first + (cv->ring_mask + 1))
		return -1; /* a copy (the first empty packet, the end's loss packets): nothing to hold */
	int key = (int)((size_t)(b - first) >> cv->sb_shift);
	/* relaxed: this thread (the drain's) is the one that tests the count
	 * before the release (tb_engine_release_held()), after this call */
	__atomic_fetch_add(&st->holds[key], 1, __ATOMIC_RELAXED);
	return key;
}

void tb_engine_unhold(struct tb_engine *e, unsigned ch, unsigned cpu, int key)
{
	if (key < 0)
		return;
	/* release: the holder's reads of the sub-buffer happen before the
	 * drain thread's acquire load of the count in tb_engine_release_held(),
	 * hence before tb_ring_release() lets a producer write into it */
	__atomic_fetch_sub(&tb_stream_at(e, ch, cpu)->holds[key], 1, __ATOMIC_RELEASE);
	/* the drain thread releases it at its next pass: now, not at its next
	 * timeout (a producer in block mode may be waiting for the room) */
	tb_engine_wake(e);
}

unsigned tb_engine_release_held(struct tb_engine *e, unsigned ch, unsigned cpu, int all)
{
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	const struct tb_chan_view *cv = &e->s->chan[ch];
	unsigned n = 0;
	while (st->holds && st->rel_pos < st->reaped_pos) {
		uint32_t *h = &st->holds[(st->rel_pos >> cv->sb_shift) & (cv->sb_count - 1)];
		/* acquire: pairs with the release in tb_engine_unhold() (the
		 * output is done reading before tb_ring_release()'s own release
		 * hands the sub-buffer to the producers) */
		if (!all && __atomic_load_n(h, __ATOMIC_ACQUIRE))
			break; /* the ones after it wait too: the ring releases in order */
		tb_ring_release(e->s, ch, cpu, st->rel_pos);
		st->rel_pos += cv->sb_size;
		n++;
	}
	return n;
}

unsigned tb_engine_held(struct tb_engine *e, unsigned ch, unsigned cpu, uint64_t tail)
{
	struct tb_stream *st = tb_stream_at(e, ch, cpu);
	return st->holds && st->reaped_pos > tail ? (unsigned)((st->reaped_pos - tail) >> e->s->chan[ch].sb_shift) : 0;
}

/* ---------------------------------------------------------------------- */
/* the session's consumer                                                  */
/* ---------------------------------------------------------------------- */

void tb_session_claim_consumer(struct tb_session *s)
{
	if (s->readonly)
		return;
	int drained = 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		drained |= s->chan[ch].mode != TB_MODE_OVERWRITE;
	if (!drained)
		return; /* a flight recorder: no producer ever waits for it */
	/* relaxed: no data is published with the pid; pairs with the relaxed
	 * load in consumer_gone() (ring/append.c).  For the producers that
	 * matter most, CMD and its children, the order comes from the system
	 * calls between: `record` makes this store before fork(), and
	 * everything the child does comes after fork() returns in it (the
	 * map is MAP_SHARED: the very same page).  Producers already running
	 * (record --attach) read it at their next full-ring event: a stale
	 * pid there only delays the switch between drop and wait by one
	 * check, which the protocol allows (it is re-read each time). */
	__atomic_store_n(&s->map->consumer_pid, (uint32_t)getpid(), __ATOMIC_RELAXED);
}

void tb_session_release_consumer(struct tb_session *s)
{
	if (s->readonly)
		return;
	/* compare-exchange: a recorder that attached after us (we were
	 * thought dead, or it was forced) keeps its claim; relaxed, as the
	 * store above */
	uint32_t me = (uint32_t)getpid();
	__atomic_compare_exchange_n(&s->map->consumer_pid, &me, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* the outputs                                                             */
/* ---------------------------------------------------------------------- */

int tb_output_add(struct tb_engine *e, const struct tb_output *out, void *arg)
{
	if (e->nouts >= TB_MAX_OUTPUTS)
		return tb_fail(-ENOSPC, "tb_output_add: at most %u outputs", TB_MAX_OUTPUTS);
	e->outs[e->nouts].ops = out;
	e->outs[e->nouts].arg = arg;
	e->nouts++;
	return 0;
}

void tb_output_packets(struct tb_engine *e, unsigned ch, unsigned cpu, const struct iovec *iov, int n,
		       uint64_t events)
{
	for (unsigned i = 0; i < e->nouts; i++)
		if (e->outs[i].ops->packets)
			e->outs[i].ops->packets(e->outs[i].arg, ch, cpu, iov, n, events);
}

void tb_output_metadata(struct tb_engine *e, const struct tb_ctf_trace_info *info)
{
	for (unsigned i = 0; i < e->nouts; i++)
		if (e->outs[i].ops->metadata)
			e->outs[i].ops->metadata(e->outs[i].arg, info);
}

int tb_output_tick(struct tb_engine *e)
{
	int soon = 0;
	for (unsigned i = 0; i < e->nouts; i++)
		if (e->outs[i].ops->tick)
			soon |= e->outs[i].ops->tick(e->outs[i].arg);
	return soon;
}

void tb_output_close(struct tb_engine *e)
{
	for (unsigned i = 0; i < e->nouts; i++)
		if (e->outs[i].ops->close)
			e->outs[i].ops->close(e->outs[i].arg);
}
