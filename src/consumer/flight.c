/* SPDX-License-Identifier: MIT */
/*
 * flight.c - the flight recorder: triggers in, snapshots out (flight.h).
 *
 *   read_triggers()   the session map's trigger slots (hostile input: the
 *                     counter may jump or go back, a slot may be torn,
 *                     never published, or hold any bytes)
 *   flight_main()     the flight thread: wait, window, rate limit, snapshot
 *   rate_ok()         --min-interval per trigger name
 *   request_cond()    a --snapshot-on match (flight_scan.c: the scan thread
 *                     that evaluates the conditions) into the queue
 *   the snapshots directory (writing one, the limits): flight_store.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "consumer/flight_impl.h"
#include "platform/clock.h"
#include "platform/futex.h"





/* 1: the trigger may snapshot now; 0: within --min-interval of its name's
 * last snapshot (counted, said for the first of a run).  *suppressed: how
 * many of its name were suppressed since its last snapshot. */
static int rate_ok(struct tb_flight *f, const struct tb_flight_trigger *t, uint64_t *suppressed)
{
	*suppressed = 0;
	if (!f->cfg.min_interval_ns)
		return 1;
	struct rate *r = NULL, *lru = &f->rates[0];
	for (unsigned i = 0; i < NAMES_MAX; i++) {
		if (f->rates[i].last_ns && !strcmp(f->rates[i].name, t->name)) {
			r = &f->rates[i];
			break;
		}
		if (f->rates[i].last_ns < lru->last_ns)
			lru = &f->rates[i];
	}
	uint64_t now = tb_mono_ns();
	if (r && now - r->last_ns < f->cfg.min_interval_ns) {
		if (!r->suppressed++)
			tb_flight_say(f, "trigger '%s' suppressed: within --min-interval %.3f s of its last snapshot (said once "
			       "per interval; the next snapshot's trigger.json counts them)", t->name,
			    (double)f->cfg.min_interval_ns / 1e9);
		pthread_mutex_lock(&f->lock);
		f->st.suppressed++;
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	if (!r) {
		r = lru; /* forget the least recent name: it may fire once more than the limit says */
		snprintf(r->name, sizeof r->name, "%s", t->name);
		r->suppressed = 0;
	}
	*suppressed = r->suppressed;
	r->suppressed = 0;
	r->last_ns = now;
	return 1;
}

/* ---------------------------------------------------------------------- */
/* the session's trigger slots                                             */
/* ---------------------------------------------------------------------- */

/* The slot of claim n, if published and consistent: 1; 0 not published yet;
 * -1 overwritten by a later claim (a burst of more than TB_TRIG_SLOTS). */
static int read_slot(struct tb_flight *f, uint64_t n, struct tb_flight_trigger *t)
{
	struct tb_trig_slot *sl = &f->s->map->trig[n % TB_TRIG_SLOTS];
	/* acquire: pairs with the release store of seq in tb_session_trigger()
	 * (step D): the fields below are those it published */
	uint64_t s1 = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE);
	if (s1 == 0 || s1 < n + 1)
		return 0;
	if (s1 != n + 1)
		return -1;
	struct tb_trig_slot c;
	c.ts = __atomic_load_n(&sl->ts, __ATOMIC_RELAXED);
	c.pid = __atomic_load_n(&sl->pid, __ATOMIC_RELAXED);
	c.tid = __atomic_load_n(&sl->tid, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < TB_TRIG_NAME_MAX; i++)
		c.name[i] = __atomic_load_n(&sl->name[i], __ATOMIC_RELAXED);
	/* acquire fence: the copy above before the second load of seq; pairs
	 * with the release fence after step B of a writer reusing the slot:
	 * if that writer's C stores reached the copy, its seq = 0 is seen */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&sl->seq, __ATOMIC_RELAXED) != s1)
		return -1;
	memset(t, 0, sizeof *t);
	t->kind = TB_FLIGHT_PROGRAM;
	unsigned i = 0;
	for (; i < TB_TRIG_NAME_MAX - 1 && c.name[i]; i++)
		t->name[i] = c.name[i] >= 0x20 && c.name[i] < 0x7f ? c.name[i] : '?';
	t->name[i] = 0;
	if (!i)
		snprintf(t->name, sizeof t->name, "trigger");
	t->pid = c.pid;
	t->tid = c.tid;
	t->ticks = c.ts;
	t->seen_mono_ns = tb_mono_ns();
	/* its time from the session clock, unless that says something
	 * impossible (before the session, after now): then when it was seen */
	uint64_t now = tb_flight_realtime_ns();
	struct tb_session *s = f->s;
	long double rt = (long double)s->clock_offset_ns + (long double)c.ts * 1e9L / (long double)s->clock_freq;
	t->realtime_ns = rt > (long double)s->map->created_realtime_ns - 1e9L && rt <= (long double)now + 1e9L
				 ? (uint64_t)rt : now;
	return 1;
}

/* Moves the requests published in the map to the pending queue (flight
 * thread).  Returns 1 when a claimed slot is not published yet (look again
 * soon), else 0. */
static int read_triggers(struct tb_flight *f)
{
	uint64_t cur = __atomic_load_n(&f->s->map->trig_seq, __ATOMIC_RELAXED);
	if (cur < f->seen) {
		tb_flight_say(f, "the session's trigger count went back from %" PRIu64 " to %" PRIu64 " (shared memory "
		       "overwritten?): counting again from there", f->seen, cur);
		f->seen = cur;
	}
	if (cur - f->seen > TB_TRIG_SLOTS) {
		uint64_t lost = cur - f->seen - TB_TRIG_SLOTS;
		tb_flight_say(f, "%" PRIu64 " trigger%s of the program came faster than the recorder read them: coalesced "
		       "with the last %u", lost, lost == 1 ? "" : "s", TB_TRIG_SLOTS);
		pthread_mutex_lock(&f->lock);
		f->st.coalesced += lost;
		f->st.triggers += lost;
		pthread_mutex_unlock(&f->lock);
		f->seen = cur - TB_TRIG_SLOTS;
	}
	while (f->seen < cur) {
		struct tb_flight_trigger t;
		int r = read_slot(f, f->seen, &t);
		if (r == 0) {
			uint64_t now = tb_mono_ns();
			if (!f->unpublished_since)
				f->unpublished_since = now;
			if (now - f->unpublished_since < UNPUBLISHED_NS)
				return 1;
			/* its writer died (or stopped) between claim and publication */
			memset(&t, 0, sizeof t);
			t.kind = TB_FLIGHT_PROGRAM;
			snprintf(t.name, sizeof t.name, "unnamed");
			t.realtime_ns = tb_flight_realtime_ns();
			t.seen_mono_ns = now;
			tb_flight_say(f, "trigger %" PRIu64 " was claimed but never completed by its process: taken unnamed",
			    f->seen + 1);
			r = 1;
		}
		f->unpublished_since = 0;
		f->seen++;
		pthread_mutex_lock(&f->lock);
		f->st.triggers++;
		if (r < 0) {
			f->st.coalesced++;
		} else if (f->npending < PENDING_MAX) {
			f->pending[f->npending++] = t;
		} else {
			f->st.skipped++;
			pthread_mutex_unlock(&f->lock);
			tb_flight_say(f, "trigger '%s' dropped: %u requests already wait for a snapshot", t.name, PENDING_MAX);
			continue;
		}
		pthread_mutex_unlock(&f->lock);
	}
	return 0;
}

/* Takes the oldest pending request: 1, or 0 when none. */
static int next_pending(struct tb_flight *f, struct tb_flight_trigger *t)
{
	pthread_mutex_lock(&f->lock);
	int got = f->npending > 0;
	if (got) {
		*t = f->pending[0];
		memmove(f->pending, f->pending + 1, --f->npending * sizeof *f->pending);
		if (t->cond_idx && t->cond_idx <= TB_FLIGHT_COND_MAX)
			f->cond_pending[t->cond_idx - 1] = 0; /* its next match queues a request again */
	}
	pthread_mutex_unlock(&f->lock);
	return got;
}

static void request_cond(struct tb_flight *f, const struct tb_flight_trigger *t);

static int stopping(struct tb_flight *f)
{
	pthread_mutex_lock(&f->lock);
	int s = f->stop;
	pthread_mutex_unlock(&f->lock);
	return s;
}

static void handle(struct tb_flight *f, const struct tb_flight_trigger *t, int window)
{
	uint64_t suppressed;
	if (!rate_ok(f, t, &suppressed))
		return;
	if (window && f->cfg.after_ns) {
		/* the post-trigger window, from when the recorder saw it; a stop
		 * (the program is gone) ends it at once.  Woken by every trigger
		 * meanwhile: those wait their turn in the queue. */
		uint64_t end = t->seen_mono_ns + f->cfg.after_ns;
		for (uint64_t now; (now = tb_mono_ns()) < end && !stopping(f);) {
			uint32_t v = __atomic_load_n(&f->s->map->trig_futex, __ATOMIC_ACQUIRE);
			uint64_t left = end - now;
			tb_futex_wait(&f->s->map->trig_futex, v, left < 50000000ull ? left : 50000000ull);
		}
	}
	tb_flight_take(f, t, suppressed);
}

static void *flight_main(void *arg)
{
	struct tb_flight *f = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* the recorder's main thread takes the signals */
	for (;;) {
		/* acquire: pairs with the release add of trig_futex (step E);
		 * read before the slots, so that a request published after
		 * read_triggers changes it and the wait returns at once */
		uint32_t v = __atomic_load_n(&f->s->map->trig_futex, __ATOMIC_ACQUIRE);
		int again = read_triggers(f);
		struct tb_flight_trigger t;
		if (next_pending(f, &t)) {
			handle(f, &t, 1);
			continue;
		}
		if (stopping(f))
			break;
		tb_futex_wait(&f->s->map->trig_futex, v, again ? 10000000ull : 1000000000ull);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* API                                                                     */
/* ---------------------------------------------------------------------- */

int tb_flight_create(struct tb_session *s, const struct tb_flight_cfg *cfg, struct tb_flight **out)
{
	*out = NULL;
	if (!s || !cfg || !cfg->dir || !*cfg->dir)
		return tb_fail(-EINVAL, "tb_flight_create: no session or no snapshots directory");
	struct tb_flight *f = calloc(1, sizeof *f);
	if (!f)
		return tb_fail(-ENOMEM, "out of memory");
	f->s = s;
	f->cfg = *cfg;
	if (cfg->nconds > TB_FLIGHT_COND_MAX) {
		free(f);
		return tb_fail(-EINVAL, "at most %u --snapshot-on conditions (%u given)", TB_FLIGHT_COND_MAX, cfg->nconds);
	}
	if (cfg->nconds)
		memcpy(f->conds, cfg->conds, cfg->nconds * sizeof *f->conds);
	f->cfg.conds = f->conds;
	snprintf(f->dir, sizeof f->dir, "%s", cfg->dir);
	f->cfg.dir = f->dir;
	pthread_mutex_init(&f->lock, NULL);
	f->next_num = 1;
	int created, rc = tb_output_dir(f->dir, &created);
	if (rc == 0 && access(f->dir, W_OK | X_OK) < 0)
		rc = tb_fail(-errno, "snapshots directory %s is not writable: %s", f->dir, strerror(errno));
	if (rc == 0)
		rc = tb_flight_scan(f);
	if (rc < 0) {
		tb_flight_destroy(f);
		return rc;
	}
	/* requests made before the recorder existed are not ours to answer */
	f->seen = __atomic_load_n(&s->map->trig_seq, __ATOMIC_RELAXED);
	tb_flight_enforce(f);
	*out = f;
	return 0;
}

int tb_flight_start(struct tb_flight *f)
{
	int rc = pthread_create(&f->th, NULL, flight_main, f);
	if (rc)
		return tb_fail(-rc, "cannot start the flight recorder thread: %s", strerror(rc));
	f->started = 1;
	if ((rc = tb_flight_scan_start(f, request_cond)) < 0) {
		tb_flight_stop(f);
		return rc;
	}
	return 0;
}

void tb_flight_request(struct tb_flight *f, const struct tb_flight_trigger *t)
{
	pthread_mutex_lock(&f->lock);
	f->st.triggers++;
	int ok = f->npending < PENDING_MAX;
	if (ok) {
		f->pending[f->npending] = *t;
		f->pending[f->npending].seen_mono_ns = tb_mono_ns();
		f->npending++;
	} else {
		f->st.skipped++;
	}
	pthread_mutex_unlock(&f->lock);
	if (!ok)
		tb_flight_say(f, "trigger '%s' dropped: %u requests already wait for a snapshot", t->name, PENDING_MAX);
	/* the thread sleeps on the session's trigger word: bump it as a
	 * producer would (release: the queue above before the new value) */
	__atomic_fetch_add(&f->s->map->trig_futex, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(&f->s->map->trig_futex);
}

/* A --snapshot-on match (the scan thread, flight_scan.c) into the queue. */
static void request_cond(struct tb_flight *f, const struct tb_flight_trigger *t)
{
	unsigned ci = t->cond_idx - 1;
	pthread_mutex_lock(&f->lock);
	f->st.triggers++;
	if (f->cond_pending[ci]) {
		/* one of its requests waits: the snapshot it takes comes after
		 * this event too (the scan reads what is already in the rings) */
		f->st.coalesced++;
		f->cond_coalesced++;
		pthread_mutex_unlock(&f->lock);
		return;
	}
	int ok = f->npending < PENDING_MAX;
	if (ok) {
		f->pending[f->npending] = *t;
		f->pending[f->npending].seen_mono_ns = tb_mono_ns();
		f->npending++;
		f->cond_pending[ci] = 1;
	} else {
		f->st.skipped++;
	}
	pthread_mutex_unlock(&f->lock);
	if (!ok)
		tb_flight_say(f, "trigger '%s' dropped: %u requests already wait for a snapshot", t->name, PENDING_MAX);
	/* release: the queue above before the new value (flight_main's acquire) */
	__atomic_fetch_add(&f->s->map->trig_futex, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(&f->s->map->trig_futex);
}

void tb_flight_stop(struct tb_flight *f)
{
	if (!f || !f->started)
		return;
	/* the scan's last pass first: its matches are handled below */
	tb_flight_scan_stop(f);
	pthread_mutex_lock(&f->lock);
	f->stop = 1;
	pthread_mutex_unlock(&f->lock);
	__atomic_fetch_add(&f->s->map->trig_futex, 1, __ATOMIC_RELEASE);
	tb_futex_wake_all(&f->s->map->trig_futex);
	pthread_join(f->th, NULL);
	f->started = 0;
	/* what was published up to now, without a window: nothing more comes */
	struct tb_flight_trigger t;
	f->unpublished_since = 0;
	while (read_triggers(f) == 1) { /* bounded: UNPUBLISHED_NS, then taken unnamed */
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	while (next_pending(f, &t))
		handle(f, &t, 0);
}

int tb_flight_now(struct tb_flight *f, const struct tb_flight_trigger *t)
{
	struct tb_flight_trigger c = *t;
	c.seen_mono_ns = tb_mono_ns();
	if (!c.realtime_ns)
		c.realtime_ns = tb_flight_realtime_ns();
	pthread_mutex_lock(&f->lock);
	f->st.triggers++;
	pthread_mutex_unlock(&f->lock);
	return tb_flight_take(f, &c, 0);
}

void tb_flight_stats(struct tb_flight *f, struct tb_flight_stats *out)
{
	pthread_mutex_lock(&f->lock);
	*out = f->st;
	pthread_mutex_unlock(&f->lock);
}

void tb_flight_destroy(struct tb_flight *f)
{
	if (!f)
		return;
	tb_flight_stop(f);
	pthread_mutex_destroy(&f->lock);
	free(f->kept);
	free(f);
}

