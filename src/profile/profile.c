/* SPDX-License-Identifier: MIT */
/*
 * profile.c - libtracebuf-profile.so, the sampler of `tracebuf profile`,
 * preloaded into the profiled command (LD_PRELOAD, set by the CLI).
 *
 * At load time, if libtracebuf attached to a session ($TRACEBUF_SESSION):
 * write profile:info and one profile:map per executable mapping, install
 * the SIGPROF handler, start a CPU-time timer for the main thread.  Every
 * thread started with pthread_create gets its own timer (the start routine
 * is wrapped); the handler writes one profile:sample per expiry into the
 * per-CPU rings with tb_write.  dlopen and fork write the new mappings;
 * exit writes profile:counters.  docs/PROFILE.md has the whole story and
 * the signal-safety argument; profile_events.h the event classes.
 *
 * Length: the handler and everything it may touch (timers, the wrapped
 * thread start, fork and dlopen hooks) share static state whose
 * async-signal-safety is argued once, here; maps and unwinding are apart
 * (prof_maps.c, prof_unwind.c).
 *
 * Interposed (exported) symbols: pthread_create, dlopen, dlmopen, dlclose,
 * sigaction and signal (for SIGPROF only).  Everything else is hidden.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#define TB_PROFILE_DEFINE_EVENTS
#include "profile/profile_events.h"
#include "profile/prof_impl.h"

#define DEFAULT_HZ 999u
#define MAX_HZ 100000u

/* ------------------------------------------------------------------ */
/* state                                                               */
/* ------------------------------------------------------------------ */

/* Configuration: written once by the constructor before any timer exists
 * (timer_create and pthread_create order it before every handler run). */
static unsigned prof_hz = DEFAULT_HZ, prof_depth = TB_PROF_MAX_DEPTH;
static int prof_libunwind;
static struct timespec prof_period;
/* 1: the perf event is re-armed from the handler (PERF_EVENT_IOC_REFRESH)
 * at each sample, for periods under PROF_REARM_BELOW_NS; see perf_start() */
static int prof_rearm;
#define PROF_REARM_BELOW_NS 250000ull
/* 1 once sampling is set up in this process; acquire/release */
static int prof_active;

/* The timers' sigev_value: tells our expiries from any other SIGPROF. */
static const char prof_cookie_obj = 0;
#define PROF_COOKIE ((void *)&prof_cookie_obj)

/* Per thread: the stack bounds (taken where pthread_getattr_np may be
 * called, never in the handler) and the timer.  initial-exec: the handler
 * reads it without a TLS allocation. */
struct prof_thread {
	uintptr_t lo, hi; /* [lo, hi); hi == 0: unknown */
	timer_t timer;
	int has_timer;
	int perf_fd1;     /* the thread's perf cpu-clock event's fd + 1; 0: none */
	/* re-armed events only (prof_rearm), see pace(): the event's period,
	 * and its count (this thread's CPU time in ns while enabled) at the
	 * last sample */
	struct prof_pace pace;
	uint64_t count;
};

/* How samples are taken (profile:info says it): the first thread decides.
 * 1: a perf_event_open cpu-clock event per thread, whose overflows signal
 * that thread, at the asked rate; 2: the per-thread CPU-time POSIX timer
 * (checked by the kernel at its tick: ~250 expiries per CPU-second whatever
 * the rate, the rest counted as overruns).  Relaxed: a hint for the info
 * record; each thread keeps what it got in prof_self. */
static int prof_source;
static __thread struct prof_thread prof_self __attribute__((tls_model("initial-exec")));
static pthread_key_t prof_key; /* its destructor deletes the thread's timer */

/*
 * Counters of profile:counters, process-wide.  Relaxed atomic adds: each
 * is an independent sum (a few hundred adds per second per thread), read
 * once at exit after the stop handshake below, whose seq_cst operations
 * order every handler's adds before the read.
 */
static struct {
	uint64_t received, lost, invalid_pc, aborted, truncated, overruns;
} prof_cnt;

/*
 * Stop handshake (exit): the destructor sets prof_stopping, then waits for
 * prof_inflight to drop to 0; a handler increments prof_inflight, then
 * reads prof_stopping.  All seq_cst: either the handler sees the stop (and
 * takes no sample) or the destructor sees the handler in flight (and waits
 * for it), so no sample is counted or written after the counters are read.
 */
static int prof_stopping;
static int prof_inflight;

/* the interposed functions' next definitions */
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static void *(*real_dlopen)(const char *, int);
static void *(*real_dlmopen)(Lmid_t, const char *, int);
static int (*real_dlclose)(void *);
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static sighandler_t (*real_signal)(int, sighandler_t);

static void resolve_reals(void)
{
	/* relaxed: idempotent (every thread stores the same values); a
	 * function pointer is one aligned word */
#define RESOLVE(var, name)                                                                      \
	do {                                                                                    \
		if (!__atomic_load_n(&(var), __ATOMIC_RELAXED))                                 \
			__atomic_store_n(&(var), (__typeof__(var))dlsym(RTLD_NEXT, (name)), __ATOMIC_RELAXED); \
	} while (0)
	RESOLVE(real_pthread_create, "pthread_create");
	RESOLVE(real_dlopen, "dlopen");
	RESOLVE(real_dlmopen, "dlmopen");
	RESOLVE(real_dlclose, "dlclose");
	RESOLVE(real_sigaction, "sigaction");
	RESOLVE(real_signal, "signal");
#undef RESOLVE
}

static int active(void)
{
	/* acquire: pairs with the release at the end of the constructor
	 * (and of the fork child handler) */
	return __atomic_load_n(&prof_active, __ATOMIC_ACQUIRE) && !__atomic_load_n(&prof_stopping, __ATOMIC_RELAXED);
}

static void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED); /* see prof_cnt */
}

/* ------------------------------------------------------------------ */
/* the program's own SIGPROF action                                    */
/* ------------------------------------------------------------------ */

/*
 * What the program believes is installed for SIGPROF: the action found when
 * we installed ours, then whatever it passes to sigaction()/signal() (we
 * keep ours installed and route its SIGPROFs to it).  A seqlock, because the
 * handler reads it: writers hold user_act_lock with every signal blocked (so
 * a handler cannot interrupt a writer on its own thread), make the sequence
 * odd, copy, make it even (release); a reader retries until it copied under
 * one even value.  The copy itself is a deliberate racy read, validated by
 * the sequence.
 */
static struct sigaction user_act;
static unsigned user_act_seq;
static int user_act_lock;

static void user_act_write(const struct sigaction *a)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (__atomic_exchange_n(&user_act_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	unsigned s = __atomic_load_n(&user_act_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&user_act_seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before the copy's stores */
	memcpy(&user_act, a, sizeof *a);
	__atomic_store_n(&user_act_seq, s + 2, __ATOMIC_RELEASE); /* the copy before even */
	__atomic_store_n(&user_act_lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void user_act_read(struct sigaction *a)
{
	for (;;) {
		unsigned s1 = __atomic_load_n(&user_act_seq, __ATOMIC_ACQUIRE); /* pairs with the even store */
		if (s1 & 1)
			continue;
		memcpy(a, &user_act, sizeof *a);
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy before the re-check */
		if (__atomic_load_n(&user_act_seq, __ATOMIC_RELAXED) == s1)
			return;
	}
}

/* A SIGPROF that is not one of our expiries: the program's handler, if it
 * has one.  SIG_DFL would kill the process: ignored instead (documented). */
static void chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	user_act_read(&a);
	if (a.sa_flags & SA_SIGINFO) {
		if (!a.sa_sigaction)
			return;
	} else if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		return;
	}
	sigset_t old;
	pthread_sigmask(SIG_BLOCK, &a.sa_mask, &old);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------ */
/* the handler                                                         */
/* ------------------------------------------------------------------ */

#define SAMPLE_MAX (4 + 8 * TB_PROF_MAX_DEPTH + 4 + 4)

/* Writes one record to every channel that enables `cls`; returns the
 * number of writes that failed. */
static unsigned write_all(struct tb_event_class *cls, const void *payload, size_t len)
{
	/* acquire: pairs with the release store of the mask pointer in
	 * tb_class_register (the class id is written before it) */
	const uint32_t *mp = __atomic_load_n(&cls->mask, __ATOMIC_ACQUIRE);
	uint32_t mask = __atomic_load_n(mp, __ATOMIC_RELAXED); /* as TB_EVENT does */
	uint32_t id = cls->id;
	unsigned failed = 0;
	while (mask) {
		unsigned ch = (unsigned)__builtin_ctz(mask);
		mask &= mask - 1;
		if (tb_write(ch, id, payload, len) != 0)
			failed++;
	}
	return failed;
}

static void take_sample(siginfo_t *si, ucontext_t *uc, uint32_t weight)
{
	uint64_t stack[TB_PROF_MAX_DEPTH];
	uint32_t flags = 0;
	unsigned n;
	if (prof_libunwind)
		n = prof_walk_libunwind(uc, stack, prof_depth, &flags);
	else
		n = prof_walk_fp(uc, prof_self.lo, prof_self.hi, stack, prof_depth, &flags);
	/* si_overrun is a timer's; a perf overflow signal has none (its si_fd
	 * shares the union) */
	uint32_t overrun = si->si_code == SI_TIMER && si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0;
	overrun += weight - 1; /* a lengthened perf period (pace()) stands for weight asked periods */

	/* the payload of profile:sample: u32 count, count u64s, u32 flags,
	 * u32 overrun; packed, little endian (x86_64) */
	uint8_t buf[SAMPLE_MAX];
	uint32_t cnt = n;
	memcpy(buf, &cnt, 4);
	memcpy(buf + 4, stack, (size_t)n * 8);
	memcpy(buf + 4 + (size_t)n * 8, &flags, 4);
	memcpy(buf + 8 + (size_t)n * 8, &overrun, 4);

	cnt_add(&prof_cnt.received, 1);
	if (!stack[0])
		cnt_add(&prof_cnt.invalid_pc, 1);
	if (flags & TB_PROF_F_ABORTED)
		cnt_add(&prof_cnt.aborted, 1);
	if (flags & TB_PROF_F_TRUNCATED)
		cnt_add(&prof_cnt.truncated, 1);
	if (overrun)
		cnt_add(&prof_cnt.overruns, overrun);
	unsigned failed = write_all(&tb__cls_profile_sample, buf, 12 + (size_t)n * 8);
	if (failed)
		cnt_add(&prof_cnt.lost, failed);
}

/* One of our expiries: 1 an overflow of this thread's cpu-clock event, 2 an
 * expiry of its CPU-time timer (our cookie); 0 another SIGPROF. */
enum { NOT_OURS, PERF_OVERFLOW, TIMER_EXPIRY };
static int ours(const siginfo_t *si)
{
	if (!si)
		return NOT_OURS;
	int fd = prof_self.perf_fd1 - 1;
	if (fd >= 0 && (si->si_code == POLL_HUP || si->si_code == POLL_IN) && si->si_fd == fd)
		return PERF_OVERFLOW;
	return si->si_code == SI_TIMER && si->si_value.sival_ptr == PROF_COOKIE ? TIMER_EXPIRY : NOT_OURS;
}

/*
 * A re-armed event's pace (prof_rearm: periods under PROF_REARM_BELOW_NS),
 * called from the handler before the sample is written (its weight is the
 * period it was taken with) and before the re-arm.  The event
 * counts this thread's CPU time while enabled, kernel time included, but
 * overflows only in user space (exclude_kernel): an expiry that falls in the
 * kernel is skipped and the hrtimer runs on.  Where one timer interrupt
 * costs about a period or more (-F 100000 is a period of 10 us, and on a
 * VM whose interrupts are hypervisor round trips, such as the PVM guest of
 * docs/PROFILE.md, each expiry's own handling reaches the next), every
 * expiry falls in the handling of the one before, the thread hardly ever
 * returns to user space, and the program stops making progress: `perf
 * record -e cpu-clock -c 10000` does the same to it there.  What the
 * handler sees of it is a sample that took many periods of the thread's
 * time: then the period doubles (PERF_EVENT_IOC_PERIOD, up to 1 ms),
 * and each sample taken at the longer period stands for that many asked
 * periods (its overrun field), so the profile keeps its proportions.  A
 * thread that spends most of its time in system calls looks the same and
 * is slowed down the same way; after a run of samples that each took a few
 * periods the period halves again, and every doubling doubles the run
 * needed (a machine that cannot take the rate is not asked again every few
 * samples): prof_pace_next() in prof_impl.h.  Returns the weight of the
 * sample just taken: the period it was taken with, in asked periods.
 */
static uint32_t pace(int fd)
{
	struct prof_thread *t = &prof_self;
	uint32_t weight = t->pace.mult ? t->pace.mult : 1;
	uint64_t now;
	if (read(fd, &now, sizeof now) != (ssize_t)sizeof now)
		return weight;
	uint64_t asked = (uint64_t)prof_period.tv_nsec; /* under PROF_REARM_BELOW_NS: tv_sec is 0 */
	uint32_t want = prof_pace_next(&t->pace, now - t->count, asked);
	t->count = now;
	if (want != weight) {
		uint64_t p = asked * want;
		if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &p) == 0)
			t->pace.mult = want;
	}
	return weight;
}

static void prof_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno; /* tb_write's slow path may make system calls */
	int why = ours(si);
	if (why != NOT_OURS) {
		__atomic_add_fetch(&prof_inflight, 1, __ATOMIC_SEQ_CST); /* see prof_stopping */
		if (!__atomic_load_n(&prof_stopping, __ATOMIC_SEQ_CST)) {
			/* at the usual rates the event runs on by itself: no
			 * system call per sample (perf_start()); above them it
			 * is paced and re-armed for one more overflow */
			if (why == PERF_OVERFLOW && prof_rearm) {
				int fd = prof_self.perf_fd1 - 1;
				take_sample(si, uc, pace(fd));
				ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
			} else {
				take_sample(si, uc, 1);
			}
		}
		__atomic_sub_fetch(&prof_inflight, 1, __ATOMIC_SEQ_CST);
	} else {
		chain(sig, si, uc);
	}
	errno = saved_errno;
}

/* ------------------------------------------------------------------ */
/* timers and threads                                                  */
/* ------------------------------------------------------------------ */

/*
 * The calling thread's perf cpu-clock event (as `perf record` samples): its
 * overflows, every prof_period of this thread's CPU time, raise SIGPROF in
 * this thread (F_SETOWN_EX to the tid, F_SETSIG).  User space only
 * (exclude_kernel: what perf_event_paranoid 2 allows).
 *
 * At the usual rates (period >= PROF_REARM_BELOW_NS, -F 4000 or less) it is
 * enabled once with no overflow limit (PERF_EVENT_IOC_ENABLE): the kernel
 * neither disables it at each overflow nor needs it re-armed, every
 * overflow signals (si_code POLL_IN), and the handler makes no system call
 * (issue 14: re-arming cost ~0.8 % of the CPU at 999 Hz on the benchmark
 * VM).  SIGPROF is not a real-time signal: overflows while one is pending
 * merge into it.  Above that rate it is re-armed for one overflow at a time
 * from the handler (PERF_EVENT_IOC_REFRESH 1; the event disables itself
 * after it, POLL_HUP): a free-running event whose period is shorter than a
 * signal delivery (~20-35 us on that VM) keeps a signal pending at every
 * return from the handler, and the program stops making progress (seen at
 * -F 100000), where a re-armed one always gives it a period of its own.
 * 0, or -errno when the kernel or a seccomp filter refuses: then the timer
 * is used.
 */
static int perf_start(void)
{
	if (getenv("TRACEBUF_PROFILE_TIMER")) /* the fallback, on demand */
		return -ENOTSUP;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = (uint64_t)prof_period.tv_sec * 1000000000ull + (uint64_t)prof_period.tv_nsec;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	a.wakeup_events = 1;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	memset(&prof_self.pace, 0, sizeof prof_self.pace); /* a fork child's copy starts afresh */
	prof_self.count = 0;
	prof_self.perf_fd1 = fd + 1; /* before the first overflow can be signalled */
	if ((prof_rearm ? ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) : ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) != 0) {
		int e = errno;
		prof_self.perf_fd1 = 0;
		close(fd);
		return -e;
	}
	return 0;
}

/* Called on the thread itself (key destructor, exit).  Disabled before the
 * fd is forgotten: an overflow signal already pending (its irq_work ran
 * before we entered the kernel) is delivered when the ioctl returns, still
 * recognised as ours, instead of reaching the program's SIGPROF action. */
static void perf_stop(struct prof_thread *t)
{
	if (t->perf_fd1) {
		int fd = t->perf_fd1 - 1;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		t->perf_fd1 = 0;
		close(fd);
	}
}

/* Decides prof_source before profile:info is written (the constructor):
 * the event is opened, disabled, and closed again. */
static void perf_probe(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	int fd = getenv("TRACEBUF_PROFILE_TIMER") ? -1
						  : (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	__atomic_store_n(&prof_source, fd >= 0 ? 1 : 2, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
}

/* The calling thread's sampling: the perf event, else its CPU-time timer;
 * either signals this thread. */
static void timer_start(void)
{
	int saved = errno;
	int rc = __atomic_load_n(&prof_source, __ATOMIC_RELAXED) == 1 ? perf_start() : -ENOTSUP;
	if (rc == 0) {
		prof_self.has_timer = 0;
		errno = saved;
		return;
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = PROF_COOKIE;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid); /* sigev_notify_thread_id */
	timer_t t;
	prof_self.has_timer = 0;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) == 0) {
		struct itimerspec its = { prof_period, prof_period };
		if (timer_settime(t, 0, &its, NULL) == 0) {
			prof_self.timer = t;
			prof_self.has_timer = 1;
		} else {
			timer_delete(t);
		}
	}
	errno = saved;
}

/* key destructor: the thread ends (return or pthread_exit) */
static void thread_exit(void *p)
{
	struct prof_thread *t = p;
	perf_stop(t);
	if (t->has_timer) {
		t->has_timer = 0;
		timer_delete(t->timer);
	}
}

static void thread_bounds(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0) {
		prof_self.lo = (uintptr_t)addr;
		prof_self.hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

struct start_args {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start_args a = *(struct start_args *)p;
	free(p);
	if (active()) {
		thread_bounds(); /* before the timer: the handler may use them */
		timer_start();
		pthread_setspecific(prof_key, &prof_self);
	}
	return a.fn(a.arg);
}

PROF_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	resolve_reals();
	if (!active())
		return real_pthread_create(t, attr, fn, arg);
	struct start_args *a = malloc(sizeof *a);
	if (!a)
		return real_pthread_create(t, attr, fn, arg); /* not sampled, but created */
	a->fn = fn;
	a->arg = arg;
	int rc = real_pthread_create(t, attr, thread_start, a);
	if (rc)
		free(a);
	return rc;
}

/* ------------------------------------------------------------------ */
/* mappings                                                            */
/* ------------------------------------------------------------------ */

static int snap_lock;      /* a spin lock: reset (not unlocked) in a fork child */
static uint32_t map_gen;   /* the generation of the last mappings written; under snap_lock */

static void write_map(void *arg, const struct prof_maps_line *m)
{
	tb_profile_map(m->start, m->end, m->pgoff, *(const uint32_t *)arg, m->path);
}

/*
 * Writes the executable mappings that are not in the last snapshot (all of
 * them if `all`, prof_maps_scan()), with generation map_gen + 1 (0 for the
 * first scan).  Async-signal-safe (the fork child calls it).
 */
static void scan_maps(int all, int first)
{
	while (__atomic_exchange_n(&snap_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	uint32_t gen = first ? 0 : map_gen + 1;
	if (prof_maps_scan(all, write_map, &gen) > 0)
		map_gen = gen;
	__atomic_store_n(&snap_lock, 0, __ATOMIC_RELEASE);
}

static void write_info(void)
{
	char exe[PROF_PATH_MAX + 1];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	/* a buffer of the field's bound, not a literal: gcc 12's
	 * -Wstringop-overread takes the strnlen bound of the str field for
	 * the size of the argument */
	char uw[TB_STR_DEFAULT_MAX + 1], src[TB_STR_DEFAULT_MAX + 1];
	memset(uw, 0, sizeof uw);
	if (prof_libunwind)
		memcpy(uw, "libunwind", sizeof "libunwind");
	else
		memcpy(uw, "fp", sizeof "fp");
	/* how samples are taken (perf_probe() decided) */
	memset(src, 0, sizeof src);
	if (__atomic_load_n(&prof_source, __ATOMIC_RELAXED) == 1)
		memcpy(src, "perf cpu-clock", sizeof "perf cpu-clock");
	else
		memcpy(src, "cpu-time timer", sizeof "cpu-time timer");
	tb_profile_info(prof_hz, uw, exe, src);
}

/* dl_iterate_phdr: the loader's count of objects ever loaded */
static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1; /* the first object is enough */
}

static unsigned long long loads_so_far(void)
{
	unsigned long long adds = 0;
	dl_iterate_phdr(adds_cb, &adds);
	return adds;
}

/* ------------------------------------------------------------------ */
/* dlopen: the new mappings; the caller's library search path          */
/* ------------------------------------------------------------------ */

static Dl_serinfo *serinfo_of(void *handle)
{
	Dl_serinfo size;
	if (dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) != 0)
		return NULL;
	Dl_serinfo *si = malloc(size.dls_size);
	if (!si)
		return NULL;
	if (dlinfo(handle, RTLD_DI_SERINFOSIZE, si) != 0 || dlinfo(handle, RTLD_DI_SERINFO, si) != 0) {
		free(si);
		return NULL;
	}
	return si;
}

/*
 * The real dlopen finds its caller's object from its return address, which
 * is now in this library: a name without '/' would be searched along our
 * library search path instead of the caller's (its DT_RPATH/DT_RUNPATH,
 * $ORIGIN).  So, for such a name, we search the directories that the
 * caller's path has and ours has not, in the loader's order, before
 * handing the name to the real dlopen (which then searches the rest:
 * LD_LIBRARY_PATH, ld.so.cache, the default directories).
 */
static void *open_like_caller(const char *file, int mode, const void *caller)
{
	if (!file || strchr(file, '/') || (mode & RTLD_NOLOAD))
		return NULL;
	Dl_info info;
	struct link_map *cm = NULL, *self = NULL;
	if (!dladdr1(caller, &info, (void **)&cm, RTLD_DL_LINKMAP) || !cm)
		return NULL;
	if (!dladdr1((void *)open_like_caller, &info, (void **)&self, RTLD_DL_LINKMAP) || !self || cm == self)
		return NULL;
	/* already loaded under that name: the real dlopen finds it by name
	 * whoever the caller is (and must, or the object is loaded twice) */
	void *h = real_dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		real_dlclose(h);
		return NULL;
	}
	Dl_serinfo *sc = serinfo_of(cm), *so = serinfo_of(self);
	if (!sc || !so) {
		free(sc);
		free(so);
		return NULL;
	}
	/* the part of the caller's list before the tail it shares with ours */
	unsigned nc = sc->dls_cnt, no = so->dls_cnt;
	while (nc && no && !strcmp(sc->dls_serpath[nc - 1].dls_name, so->dls_serpath[no - 1].dls_name)) {
		nc--;
		no--;
	}
	char path[PATH_MAX];
	for (unsigned i = 0; i < nc && !h; i++) {
		const char *dir = sc->dls_serpath[i].dls_name;
		size_t dl = strlen(dir);
		while (dl > 1 && dir[dl - 1] == '/')
			dl--;
		struct stat st;
		if ((size_t)snprintf(path, sizeof path, "%.*s/%s", (int)dl, dir, file) >= sizeof path ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		h = real_dlopen(path, mode); /* NULL (wrong class...): the loader goes on too */
	}
	free(sc);
	free(so);
	return h;
}

static void after_load(unsigned long long adds_before)
{
	if (active() && loads_so_far() != adds_before)
		scan_maps(0, 0);
}

PROF_EXPORT void *dlopen(const char *file, int mode)
{
	const void *caller = __builtin_return_address(0);
	resolve_reals();
	if (!active())
		return real_dlopen(file, mode);
	unsigned long long adds = loads_so_far();
	void *h = open_like_caller(file, mode, caller);
	if (!h)
		h = real_dlopen(file, mode);
	if (h)
		after_load(adds);
	return h;
}

PROF_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	resolve_reals();
	if (!active())
		return real_dlmopen(lmid, file, mode);
	unsigned long long adds = loads_so_far();
	void *h = real_dlmopen(lmid, file, mode);
	if (h)
		after_load(adds);
	return h;
}

PROF_EXPORT int dlclose(void *h)
{
	resolve_reals();
	int rc = real_dlclose(h);
	if (rc == 0 && prof_libunwind && active())
		prof_unwind_flush(); /* libunwind's caches may describe the unloaded code */
	return rc;
}

/* ------------------------------------------------------------------ */
/* sigaction / signal: SIGPROF stays ours                              */
/* ------------------------------------------------------------------ */

static int handler_installed(void)
{
	return __atomic_load_n(&prof_active, __ATOMIC_ACQUIRE); /* pairs with the constructor's release */
}

PROF_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	resolve_reals();
	if (sig != SIGPROF || !handler_installed())
		return real_sigaction(sig, act, oact);
	if (oact)
		user_act_read(oact);
	if (act)
		user_act_write(act);
	return 0;
}

PROF_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	resolve_reals();
	if (sig != SIGPROF || !handler_installed())
		return real_signal(sig, h);
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART; /* glibc's signal() has BSD semantics */
	sigemptyset(&sa.sa_mask);
	user_act_read(&old);
	user_act_write(&sa);
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

/* ------------------------------------------------------------------ */
/* fork, start, exit                                                   */
/* ------------------------------------------------------------------ */

/* In the child of fork (one thread, the one that forked): async-signal-safe
 * calls only.  libtracebuf's own child handler ran before (registered
 * first), so events now carry the child's pid. */
static void atfork_child(void)
{
	if (!__atomic_load_n(&prof_active, __ATOMIC_ACQUIRE))
		return;
	int saved = errno;
	memset(&prof_cnt, 0, sizeof prof_cnt); /* counters are per process */
	__atomic_store_n(&prof_inflight, 0, __ATOMIC_RELAXED); /* other threads' handlers are gone */
	__atomic_store_n(&snap_lock, 0, __ATOMIC_RELAXED);     /* its holder may have been another thread */
	__atomic_store_n(&user_act_lock, 0, __ATOMIC_RELAXED);
	/* the inherited fd names the parent thread's event: not ours to arm
	 * (closing our reference leaves the parent's event alone) */
	if (prof_self.perf_fd1) {
		close(prof_self.perf_fd1 - 1);
		prof_self.perf_fd1 = 0;
	}
	if (!__atomic_load_n(&prof_stopping, __ATOMIC_RELAXED)) {
		write_info();
		scan_maps(1, 0); /* every mapping, generation + 1 */
		timer_start();    /* timers are not inherited */
	}
	errno = saved;
}

static int env_uint(const char *name, unsigned long *out)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || s[0] == '-')
		return -1;
	*out = v;
	return 1;
}

static void say(const char *a, const char *b)
{
	/* the one message the preload ever prints: sampling was asked for
	 * and cannot be done */
	if (write(2, a, strlen(a)) < 0 || write(2, b, strlen(b)) < 0 || write(2, "\n", 1) < 0) {
		/* nothing else to do */
	}
}

__attribute__((constructor)) static void prof_init(void)
{
	resolve_reals();
	if (!tb_producer_session())
		return; /* not under `tracebuf profile` (or the attach failed) */
	unsigned long v;
	if (env_uint("TRACEBUF_PROFILE_HZ", &v) == 1 && v >= 1 && v <= MAX_HZ)
		prof_hz = (unsigned)v;
	if (env_uint("TRACEBUF_PROFILE_DEPTH", &v) == 1 && v >= 1)
		prof_depth = v > TB_PROF_MAX_DEPTH ? TB_PROF_MAX_DEPTH : (unsigned)v;
	const char *uw = getenv("TRACEBUF_PROFILE_UNWIND");
	if (uw && !strcmp(uw, "libunwind")) {
		char err[256];
		if (prof_unwind_load(err, sizeof err) != 0) {
			say("tracebuf profile: no samples: ", err);
			return;
		}
		prof_libunwind = 1;
	}
	uint64_t ns = 1000000000ull / prof_hz;
	prof_period.tv_sec = (time_t)(ns / 1000000000ull);
	prof_period.tv_nsec = (long)(ns % 1000000000ull);
	prof_rearm = ns < PROF_REARM_BELOW_NS;

	/* the classes are registered by TB_EVENT's constructors, whose order
	 * relative to this one is not specified: again here (idempotent) */
	tb_class_register(&tb__cls_profile_sample);
	tb_class_register(&tb__cls_profile_map);
	tb_class_register(&tb__cls_profile_info);
	tb_class_register(&tb__cls_profile_counters);
	if (pthread_key_create(&prof_key, thread_exit) != 0)
		return;

	prof_fp_init();
	perf_probe(); /* profile:info says how samples are taken */
	write_info();
	scan_maps(1, 1);

	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = prof_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART; /* not SA_ONSTACK: the walk checks the thread's stack */
	sigemptyset(&sa.sa_mask);
	if (real_sigaction(SIGPROF, &sa, &old) != 0)
		return;
	user_act_write(&old);
	pthread_atfork(NULL, NULL, atfork_child);
	thread_bounds();
	/* release: the configuration above before any thread sees "active" */
	__atomic_store_n(&prof_active, 1, __ATOMIC_RELEASE);
	timer_start();
	pthread_setspecific(prof_key, &prof_self);
}

/* profile:counters, with tb_write so that a failed write is known */
static int write_counters(void)
{
	uint64_t c[6] = {
		__atomic_load_n(&prof_cnt.received, __ATOMIC_RELAXED), __atomic_load_n(&prof_cnt.lost, __ATOMIC_RELAXED),
		__atomic_load_n(&prof_cnt.invalid_pc, __ATOMIC_RELAXED), __atomic_load_n(&prof_cnt.aborted, __ATOMIC_RELAXED),
		__atomic_load_n(&prof_cnt.truncated, __ATOMIC_RELAXED), __atomic_load_n(&prof_cnt.overruns, __ATOMIC_RELAXED),
	};
	return write_all(&tb__cls_profile_counters, c, sizeof c) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * At exit (after the program's atexit handlers): stop sampling, write the
 * mappings loaded without our dlopen (glibc's own dlopens: NSS, iconv),
 * then the counters.  Not reached by _exit, exec or death by signal: the
 * samples are in the rings already, the counters are missing.
 */
__attribute__((destructor)) static void prof_fini(void)
{
	if (!__atomic_load_n(&prof_active, __ATOMIC_ACQUIRE) || __atomic_load_n(&prof_stopping, __ATOMIC_RELAXED))
		return;
	int saved = errno;
	__atomic_store_n(&prof_stopping, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 1000 && __atomic_load_n(&prof_inflight, __ATOMIC_SEQ_CST); i++)
		sleep_ms(1); /* handlers of other threads finish their sample */
	thread_exit(&prof_self);
	scan_maps(0, 0);
	/* after losses the rings were full: give the consumer time to drain
	 * so that the counters fit, then retry a little (each failed try is
	 * one more discarded event in the trace) */
	if (__atomic_load_n(&prof_cnt.lost, __ATOMIC_RELAXED))
		sleep_ms(50);
	for (int i = 0; i < 20 && !write_counters(); i++)
		sleep_ms(10);
	errno = saved;
}
