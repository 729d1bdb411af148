/* SPDX-License-Identifier: MIT */
/* flight_impl.h - the flight recorder's private state (flight.c: triggers and
 * the thread; flight_store.c: the snapshots directory). */
#ifndef TB_CONSUMER_FLIGHT_IMPL_H
#define TB_CONSUMER_FLIGHT_IMPL_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "consumer/flight.h"

#define PENDING_MAX 64u  /* requests waiting for the thread; more are dropped, said */
#define NAMES_MAX 64u    /* names the rate limit remembers (least recent forgotten) */
#define UNPUBLISHED_NS 1000000000ull /* a claimed slot not published after this: its writer died */

struct kept {
	uint64_t num;
	uint64_t bytes;
	char name[64];
};

struct rate {
	char name[64];
	uint64_t last_ns; /* monotonic, of its last snapshot */
	uint64_t suppressed; /* since then */
};

struct tb_flight {
	struct tb_session *s;
	struct tb_flight_cfg cfg;
	char dir[PATH_MAX];
	pthread_t th;
	int started;
	pthread_mutex_t lock;
	int stop;                 /* under lock */
	struct tb_flight_trigger pending[PENDING_MAX]; /* under lock */
	unsigned npending;
	uint64_t seen;            /* trig_seq values read so far (flight thread) */
	uint64_t unpublished_since; /* monotonic ns: slot `seen` claimed, not yet published */
	uint64_t next_num;
	struct kept *kept;        /* oldest first */
	size_t nkept, capkept;
	struct rate rates[NAMES_MAX];
	struct tb_flight_stats st; /* under lock */
	struct tb_flight_cond conds[TB_FLIGHT_COND_MAX]; /* cfg.conds points here */
	struct tb_flight_scan *scan; /* --snapshot-on (flight_scan.c); NULL: none */
	int scan_stop;            /* under lock */
	uint8_t cond_pending[TB_FLIGHT_COND_MAX]; /* under lock: a request of that condition waits */
	uint64_t cond_coalesced;  /* under lock: matches while one of theirs waited */
};


/* One sentence to cfg->log. */
TB_HIDDEN void tb_flight_say(struct tb_flight *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline uint64_t tb_flight_realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* flight_scan.c: the scan thread (none without conditions); each match goes
 * to request() (flight.c's queue: one pending per condition); stop makes a
 * last pass */
TB_HIDDEN int tb_flight_scan_start(struct tb_flight *f,
				   void (*request)(struct tb_flight *f, const struct tb_flight_trigger *t));
TB_HIDDEN void tb_flight_scan_stop(struct tb_flight *f);

/* flight_span.c: the open spans, per (tid, condition) */
#define TB_SPAN_SLOTS 4096u /* a power of two; at most 7/8 used */
#define TB_SPAN_DEPTH 4u    /* nested begins of one span on one thread that are timed */
struct tb_span_table;
TB_HIDDEN struct tb_span_table *tb_span_table_new(void);
TB_HIDDEN void tb_span_table_free(struct tb_span_table *t);
/* A begin at ts: 0 timed, 1 counted but nested too deep to be timed, -1 the table is full (not tracked). */
TB_HIDDEN int tb_span_begin(struct tb_span_table *t, uint32_t tid, uint32_t cond, uint64_t ts);
/* An end: 1 and *begin (its begin's time), or 0 (no open begin, or one too deep to be timed). */
TB_HIDDEN int tb_span_end(struct tb_span_table *t, uint32_t tid, uint32_t cond, uint64_t *begin);
TB_HIDDEN uint32_t tb_span_open(const struct tb_span_table *t);
/* Forgets every open span; returns how many there were. */
TB_HIDDEN uint32_t tb_span_clear(struct tb_span_table *t);

/* flight_store.c: the snapshots directory */
TB_HIDDEN int tb_flight_scan(struct tb_flight *f);          /* numbering, kept list, leftovers removed */
TB_HIDDEN void tb_flight_enforce(struct tb_flight *f);      /* --max-snapshots, --max-size */
/* Writes one snapshot for t (flight.h says where and how): 0, or -errno (said, counted as skipped). */
TB_HIDDEN int tb_flight_take(struct tb_flight *f, const struct tb_flight_trigger *t, uint64_t suppressed);

#endif
