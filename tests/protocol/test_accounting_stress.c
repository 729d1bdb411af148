/* SPDX-License-Identifier: MIT */
/*
 * Invariant: written == delivered + counted lost, exactly, under stress.
 *
 * 48 threads on this machine's CPUs, hopping between CPUs with
 * sched_setaffinity, each with a 50 us timer whose SIGALRM handler writes
 * events too; small rings so that every loss path runs; discard (with a
 * concurrent consumer), block (1 ms timeout) and overwrite (no consumer).
 * Run under rseq and under TRACEBUF_NO_RSEQ=1 by ctest.  The decoder checks,
 * per thread and event name: each sequence number delivered at most once,
 * no torn record (check field), timestamps never back within a per-CPU
 * stream, and each timestamp inside the interval the producer measured
 * around its call (so a compact timestamp decoded wrongly by 2^27 ticks
 * would be caught).  STRESS_SECONDS scales the run (make stress).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "platform/clock.h"
#include "producer/producer.h"
#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(stress, tick, (u32, thread), (u64, seq), (u64, before), (u64, prev_after), (u64, check))
TB_EVENT(stress, sig, (u32, thread), (u64, seq), (u64, before), (u64, prev_after), (u64, check))

#define GOLDEN 0x9E3779B97F4A7C15ull
#define NTHREADS 48
#define MAXEV 60000 /* per thread and kind */

static uint32_t clock_kind;
static int stop_flag, sig_stop; /* __atomic accesses: read by workers and handlers */

struct th {
	pthread_t t;
	uint32_t id;
	uint64_t ticks, sigs;       /* attempts */
	uint64_t tick_after, sig_after;
	timer_t timer;
	int has_timer;
	uint64_t aborts;
	uint32_t ktid; /* kernel thread id, what tracebuf:thread records must name */
};
static struct th ths[NTHREADS];
static __thread struct th *me;

static uint64_t now(void)
{
	return tb_clock_read(clock_kind);
}

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	struct th *t = me;
	if (!t || __atomic_load_n(&sig_stop, __ATOMIC_RELAXED) || t->sigs >= MAXEV) {
		errno = saved;
		return;
	}
	uint64_t seq = t->sigs, b = now(), pa = t->sig_after;
	tb_stress_sig(t->id, seq, b, pa, b ^ (seq * GOLDEN) ^ t->id ^ pa);
	t->sig_after = now();
	t->sigs = seq + 1;
	errno = saved;
}

static void *worker(void *arg)
{
	struct th *t = arg;
	me = t;
	t->ktid = (uint32_t)syscall(SYS_gettid);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t->timer) == 0) {
		t->has_timer = 1;
		struct itimerspec its = { { 0, 50000 }, { 0, 50000 } };
		timer_settime(t->timer, 0, &its, NULL);
	}
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED) && t->ticks < MAXEV) {
		uint64_t seq = t->ticks, b = now(), pa = t->tick_after;
		tb_stress_tick(t->id, seq, b, pa, b ^ (seq * GOLDEN) ^ t->id ^ pa);
		t->tick_after = now();
		t->ticks = seq + 1;
		if (seq % 512 == 511) { /* hop to another CPU */
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)((seq / 512 + t->id) % (uint64_t)ncpu), &set);
			sched_setaffinity(0, sizeof set, &set);
		}
	}
	if (t->has_timer) {
		struct itimerspec off;
		memset(&off, 0, sizeof off);
		timer_settime(t->timer, 0, &off, NULL);
		timer_delete(t->timer);
	}
	t->aborts = tb_thread_aborts();
	return NULL;
}

/* decoded per (thread, kind): timestamp per seq, 0 = not delivered */
static uint64_t *seen_ts[2][NTHREADS];
static uint64_t *seen_pa[2][NTHREADS];
static uint64_t *seen_b[2][NTHREADS];
static uint64_t dups, torn, delivered, wrong_thread;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	int kind;
	if (!strcmp(e->name, "stress:tick"))
		kind = 0;
	else if (!strcmp(e->name, "stress:sig"))
		kind = 1;
	else
		return;
	uint32_t thread;
	uint64_t seq, b, pa, check;
	if (e->len != 36) {
		torn++;
		return;
	}
	memcpy(&thread, e->payload, 4);
	memcpy(&seq, e->payload + 4, 8);
	memcpy(&b, e->payload + 12, 8);
	memcpy(&pa, e->payload + 20, 8);
	memcpy(&check, e->payload + 28, 8);
	if (thread >= NTHREADS || seq >= MAXEV || check != (b ^ (seq * GOLDEN) ^ thread ^ pa)) {
		torn++;
		return;
	}
	if (seen_ts[kind][thread][seq]) {
		dups++;
		return;
	}
	/* attribution: the last tracebuf:thread record before it names its writer */
	if (e->pid != (uint32_t)getpid() || e->tid != ths[thread].ktid)
		wrong_thread++;
	seen_ts[kind][thread][seq] = e->ts;
	seen_pa[kind][thread][seq] = pa;
	seen_b[kind][thread][seq] = b;
	delivered++;
}

static void run_mode(uint32_t mode, const char *name, double seconds)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "stress", .sb_size = 4096, .sb_count = 8,
				      .mode = mode, .block_timeout_ns = 1000000 };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	clock_kind = s->clock_kind;
	CHECK(tb_session_uses_rseq(s) == !tbt_fallback(), "protocol does not follow TRACEBUF_NO_RSEQ");

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NTHREADS; i++) {
			memset(seen_ts[k][i], 0, MAXEV * 8);
			memset(seen_pa[k][i], 0, MAXEV * 8);
			memset(seen_b[k][i], 0, MAXEV * 8);
		}
	dups = torn = delivered = wrong_thread = 0;

	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	if (mode != TB_MODE_OVERWRITE)
		tbd_start(&d);
	__atomic_store_n(&stop_flag, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sig_stop, 0, __ATOMIC_RELAXED);
	memset(ths, 0, sizeof ths);
	for (int i = 0; i < NTHREADS; i++) {
		ths[i].id = (uint32_t)i;
		pthread_create(&ths[i].t, NULL, worker, &ths[i]);
	}
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	uint64_t written = 0, aborts = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(ths[i].t, NULL);
		written += ths[i].ticks + ths[i].sigs;
		aborts += ths[i].aborts;
	}
	__atomic_store_n(&sig_stop, 1, __ATOMIC_RELAXED);
	tbd_finish(&d);

	uint64_t lost = tbd_discarded(&d);
	struct tb_counters cnt;
	CHECK_RC(tb_session_counters(s, 0, -1, &cnt), 0);
	uint64_t counted = cnt.lost_full + cnt.lost_toobig + cnt.lost_overwritten + cnt.lost_timeout + cnt.lost_busy;
	printf("%-9s %s: written %llu delivered %llu lost %llu (full %llu overwritten %llu timeout %llu busy %llu) "
	       "packets %llu aborts %llu\n",
	       name, tb_session_uses_rseq(s) ? "rseq" : "fallback", (unsigned long long)written,
	       (unsigned long long)delivered, (unsigned long long)lost, (unsigned long long)cnt.lost_full,
	       (unsigned long long)cnt.lost_overwritten, (unsigned long long)cnt.lost_timeout,
	       (unsigned long long)cnt.lost_busy, (unsigned long long)d.packets, (unsigned long long)aborts);
	CHECK(d.first_error[0] == 0, "decoder: %s", d.first_error);
	CHECK_EQ_U64(d.bad_packets, 0);
	CHECK_EQ_U64(d.cut_records, 0);
	CHECK_EQ_U64(d.seq_gaps, 0);
	CHECK_EQ_U64(d.ts_back, 0);
	CHECK_EQ_U64(d.disc_back, 0);
	CHECK_EQ_U64(torn, 0);
	CHECK_EQ_U64(dups, 0);
	CHECK_EQ_U64(wrong_thread, 0);
	CHECK_EQ_U64(written, delivered + lost);
	CHECK_EQ_U64(counted, lost);
	CHECK_EQ_U64(cnt.written, delivered + (mode == TB_MODE_OVERWRITE ? cnt.lost_overwritten : 0));
	CHECK(written > 10000, "too few events written (%llu)", (unsigned long long)written);

	/* every timestamp inside the interval its producer measured */
	uint64_t checked = 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NTHREADS; i++)
			for (uint64_t q = 0; q + 1 < MAXEV; q++) {
				uint64_t t0 = seen_ts[k][i][q];
				if (!t0)
					continue;
				/* lower bound: the producer read `before` before its call */
				CHECK(t0 >= seen_b[k][i][q], "thread %d kind %d seq %llu: ts %llu before the call began (%llu)",
				      i, k, (unsigned long long)q, (unsigned long long)t0,
				      (unsigned long long)seen_b[k][i][q]);
				checked++;
				/* upper bound: the next event carries the time this call returned */
				if (seen_ts[k][i][q + 1]) {
					uint64_t after = seen_pa[k][i][q + 1];
					CHECK(t0 <= after, "thread %d kind %d seq %llu: ts %llu after the call returned (%llu)", i,
					      k, (unsigned long long)q, (unsigned long long)t0, (unsigned long long)after);
					checked++;
				}
			}
	printf("          timestamps bracketed: %llu\n", (unsigned long long)checked);
	tbd_fini(&d);
	CHECK_RC(tb_producer_use(NULL), 0);
	tb_session_unlink(s);
	/* the producer mapping is kept (a late signal could still use it) */
}

int main(void)
{
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < NTHREADS; i++) {
			seen_ts[k][i] = calloc(MAXEV, 8);
			seen_pa[k][i] = calloc(MAXEV, 8);
			seen_b[k][i] = calloc(MAXEV, 8);
		}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	/* rounds of the three modes (about 1 s each) until STRESS_SECONDS are spent */
	double total = tbt_seconds(1.0);
	uint64_t t0 = tb_mono_ns();
	int rounds = 0;
	do {
		run_mode(TB_MODE_DISCARD, "discard", 0.33);
		run_mode(TB_MODE_BLOCK, "block", 0.33);
		run_mode(TB_MODE_OVERWRITE, "overwrite", 0.33);
		rounds++;
	} while ((double)(tb_mono_ns() - t0) / 1e9 < total);
	printf("%d round(s) in %.1f s\n", rounds, (double)(tb_mono_ns() - t0) / 1e9);
	return 0;
}
