/* SPDX-License-Identifier: MIT */
/*
 * engine_flush.c - the recorder's per-CPU flusher threads (started and
 * stopped with the drain thread by engine_run.c): each, pinned to its CPU,
 * closes the partial packet of a ring idle for a flush period, one whose
 * first record waited a live period (tb_ring_flush_live()), and at the end
 * the last partial packet of every ring it serves, then wakes the drain
 * thread.  Split from engine_run.c, which holds the drain and writer
 * threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include <tracebuf/session.h>

#include "consumer/engine_impl.h"
#include "platform/clock.h"

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}


static int pin_to(unsigned cpu)
{
	cpu_set_t set;
	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Final flush of one ring: close the partial packet, whatever its age. */
static void final_flush(struct tb_engine *e, unsigned ch, unsigned cpu)
{
	struct tb_session *s = e->s;
	for (int tries = 0; tries < 50; tries++) {
		int r = tb_ring_flush(s, ch, cpu, TB_FLUSH_NOW, tb_mono_ns());
		if (r == 1) {
			tb_engine_wake(e);
			return;
		}
		if (r == -EAGAIN) {
			pin_to(cpu); /* migrated (CPU hot-unplug, cpuset change): re-pin, retry */
			continue;
		}
		if (r == 0) {
			/* nothing to do, unless the ring is full: then the drain
			 * thread must take a sub-buffer first.  Relaxed loads:
			 * a heuristic, the flush itself decides. */
			struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
			uint64_t head = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
			uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
			uint64_t ring = s->chan[ch].sb_size * s->chan[ch].sb_count;
			if (head - tail < ring - s->chan[ch].sb_size || !e->drain_running)
				return;
			tb_engine_wake(e);
		}
		/* -EBUSY (fallback: a writer owns the ring) or full ring: a moment */
		sleep_ns(2000000);
	}
}

static uint64_t chan_period(const struct tb_session *s, unsigned ch)
{
	uint64_t p = s->chan[ch].flush_period_ns;
	if (p == 0)
		p = 1000000000ull;
	if (p < 1000000ull)
		p = 1000000ull; /* at most 1000 visits per second */
	return p;
}

void *tb_flusher_main(void *arg)
{
	struct tb_flusher *fl = arg;
	struct tb_engine *e = fl->e;
	tb_engine_thread_begin(e, "tb-flush");
	struct tb_session *s = e->s;
	unsigned cpu = fl->cpu;
	int rseq = tb_session_uses_rseq(s);
	if (rseq && pin_to(cpu) < 0) {
		/* a CPU we may not run on (offline, outside our cpuset): no
		 * producer of ours runs there either; drain_dead takes its rest */
		tb_engine_warn(e, "cannot run a flusher on cpu %u (not in this process's CPU set); "
				  "its partial packets are collected at the end only", cpu);
		return NULL;
	}
	uint64_t next[TB_MAX_CHANNELS] = { 0 }, lnext[TB_MAX_CHANNELS] = { 0 };
	struct tb_live_ring lv[TB_MAX_CHANNELS]; /* the live period's view of each ring (src/ring/ring.h) */
	uint64_t now = tb_mono_ns(), live = e->live_ns;
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		/* spread the phases: CPU k of n visits first at now + P * (1 + k/n) */
		uint64_t p = chan_period(s, ch);
		next[ch] = now + p + p / s->ncpus * cpu;
		tb_live_ring_init(&lv[ch]);
		lnext[ch] = live ? now + live / 4 / s->ncpus * cpu : UINT64_MAX;
	}
	pthread_mutex_lock(&e->fl_lock);
	while (!e->fl_stop) {
		uint64_t wake = UINT64_MAX;
		for (unsigned ch = 0; ch < s->nchannels; ch++) {
			if (tb_chan_drained(e, ch) && next[ch] < wake)
				wake = next[ch];
			if (tb_chan_drained(e, ch) && lnext[ch] < wake)
				wake = lnext[ch];
		}
		if (wake == UINT64_MAX)
			break;
		struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
		pthread_cond_timedwait(&e->fl_cond, &e->fl_lock, &ts);
		if (e->fl_stop)
			break;
		pthread_mutex_unlock(&e->fl_lock);
		now = tb_mono_ns();
		int closed = 0;
		for (unsigned ch = 0; ch < s->nchannels; ch++) {
			if (!tb_chan_drained(e, ch))
				continue;
			if (now >= lnext[ch]) {
				/* the live period: whatever the rate, no record waits
				 * longer than it in an open packet */
				int r = tb_ring_flush_live(s, ch, cpu, &lv[ch], now, live, &lnext[ch]);
				if (r == -EAGAIN && rseq)
					pin_to(cpu); /* migrated: re-pinned for the retry in 1 ms */
				closed |= r == 1;
			}
			if (now < next[ch])
				continue;
			if (tb_engine_ring_touched(e, ch, cpu)) {
				int r = tb_ring_flush(s, ch, cpu, TB_FLUSH_IF_IDLE, now);
				if (r == -EAGAIN && rseq && pin_to(cpu) == 0)
					r = tb_ring_flush(s, ch, cpu, TB_FLUSH_IF_IDLE, tb_mono_ns());
				closed |= r == 1;
			}
			/* from this visit, not on a fixed grid: two visits are then
			 * always at least one period apart, which IF_IDLE needs */
			next[ch] = now + chan_period(s, ch);
		}
		if (closed)
			tb_engine_wake(e);
		pthread_mutex_lock(&e->fl_lock);
	}
	pthread_mutex_unlock(&e->fl_lock);
	/* final flush, still pinned: our rseq section is as good as a producer's */
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		if (tb_chan_drained(e, ch) && tb_engine_ring_touched(e, ch, cpu))
			final_flush(e, ch, cpu);
	return NULL;
}
