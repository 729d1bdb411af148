/* SPDX-License-Identifier: MIT */
/*
 * tracebuf-workload - the bundled workload of tests, benchmarks and the demo.
 *
 * Each thread writes `workload:tick` events; with --signals a per-thread
 * timer's SIGALRM handler writes `workload:signal`.  Fields: thread (u32),
 * seq (u64, per thread and per event name, from 0), value (u64) and check
 * (u64) with  check == value ^ (seq * 0x9E3779B97F4A7C15) ^ thread  (mod 2^64),
 * so that any reader can verify a trace of it alone.  The last line printed
 * is `written: N`, the number of events it attempted to write (each is then
 * either delivered or counted as lost); the line before it,
 * `workload: wall_ns W cpu_ns C`, the wall time of the writing threads and
 * their CPU time (make bench).  --rate N paces each thread at N events per
 * second (a steady service, the demo) against an absolute schedule: a thread
 * that falls behind catches up at once, so N x seconds events are written.
 * --payload 16 writes `workload:ev16` (seq, value: two u64, the 16-byte
 * event of bench/lttng/'s LTTng-UST program, which paces the same way) in
 * place of `workload:tick`: make bench's equal-load group gives both tracers
 * the same event stream.  The `workload:` line also gives proc_cpu_ns, the
 * CPU time of the whole process (every thread) while the writers ran.
 * --requests writes each event as a request, a span (docs/CONVERT.md):
 * `workload:request_begin` (seq) then `workload:request_end` (seq, status,
 * route) with status 200 + seq % 300 (200..499) and route "/ok"; request
 * --error-at N of thread 0 ends with status 500 and route "/fail", request
 * --slow-at N of thread 0 lasts --slow-ms MS (the others: no wait between
 * begin and end).  `written:` then counts both events of each request.
 * --error-every N (with --requests): thread 0's requests N-1, 2N-1, ... end
 * with status 500 and route "/fail" too, and at the end each one's
 * CLOCK_REALTIME read just before its request_end is printed as
 * `workload: error_realtime_ns T` (make bench's flight-lttng group: the
 * triggering event's time; at most 4096 are kept).
 * --trigger-ms MS: one more thread calls tb_trigger("workload") every MS ms
 * (absolute schedule) while the writers run, and `workload: triggers N`
 * (the calls that returned 0) is printed before the `workload:` line (make
 * bench's soak group: a flight recorder's steady load; without a session the
 * calls fail at once and N is 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/trigger.h>

TB_EVENT(workload, tick, (u32, thread), (u64, seq), (u64, value), (u64, check))
TB_EVENT(workload, signal, (u32, thread), (u64, seq), (u64, value), (u64, check))
TB_EVENT(workload, ev16, (u64, seq), (u64, value))
TB_EVENT(workload, request_begin, (u64, seq))
TB_EVENT(workload, request_end, (u64, seq), (u32, status), (str, route))

#define GOLDEN 0x9E3779B97F4A7C15ull

static struct {
	unsigned threads;
	uint64_t events;
	int signals;
	unsigned signal_us;
	int hop;
	int pin;
	unsigned quiet_ms;
	unsigned sleep_us;
	uint64_t rate;          /* events per second per thread, 0: full speed */
	unsigned payload;       /* 28: workload:tick, 16: workload:ev16 */
	unsigned procs;
	unsigned child_id;
	const char *channel;
	const char *wait_file;  /* after writing: print written, then wait until it exists */
	const char *until_file; /* write until it exists (then stop: --events is a bound) */
	int floor;              /* write nothing: the floor loop (floor_write) */
	uint64_t floor_area;    /* --floor-area: bytes of each thread's floor area (a power of two) */
	int requests;           /* --requests: request_begin/request_end pairs */
	uint64_t error_at, slow_at; /* request of thread 0 with status 500 / lasting slow_ms; UINT64_MAX: none */
	unsigned slow_ms;
	uint64_t error_every;   /* --error-every: thread 0's requests seq % N == N - 1 end with 500 */
	unsigned trigger_ms;    /* --trigger-ms: tb_trigger() every that many ms, 0: never */
} opt = { .error_at = UINT64_MAX, .slow_at = UINT64_MAX, .threads = 1, .events = 100000, .signal_us = 500, .pin = -1, .procs = 1, .payload = 28, .floor_area = 32768 };

static int chan_idx = -1;
static int id_tick = -1, id_signal = -1, id_ev16 = -1;
static volatile int stop_signals;
/* set once the writers are done; relaxed both sides: it orders nothing, the
 * trigger thread only needs to see it eventually (pthread_join follows) */
static int stop_triggers;

struct worker {
	pthread_t th;
	uint32_t thread;
	uint64_t ticks;
	uint64_t cpu_ns;        /* CPU time of the thread's writing loop */
	uint64_t setup_ns;      /* of which touching its floor area (not counted) */
	volatile uint64_t sigs;
	timer_t timer;
	int has_timer;
	uint64_t rng;
};

static __thread struct worker *self;

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

struct payload {
	uint32_t thread;
	uint64_t seq, value, check;
} __attribute__((packed));

/*
 * --floor: the least any tracer does for this event, in place of the
 * tracebuf call: a call, a timestamp (rdtsc) and a store of the record's 32
 * bytes (a 4-byte header and the 28-byte payload) into a per-thread area,
 * written round and round: 32 KiB by default, which stays in cache, as the
 * `floor` rows of make bench do for 16 bytes.  make bench compares a recorded
 * run of this workload with it.  --floor-area 16M gives the floor a ring's
 * footprint (record's default ring is 16 MiB per CPU): what writing that much
 * memory costs any producer, apart from the tracer's own work (issue 30).
 */
static __thread uint8_t *floor_area;
static __thread uint64_t floor_at;

static __attribute__((noinline)) void floor_write(uint32_t thread, uint64_t seq, uint64_t value, uint64_t check)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	struct payload p = { thread, seq, value, check };
	uint8_t *d = floor_area + floor_at;
	memcpy(d, &lo, 4);
	memcpy(d + 4, &p, sizeof p);
	floor_at = (floor_at + 32) & (opt.floor_area - 1);
	(void)hi;
	__asm__ __volatile__("" ::: "memory"); /* the stores happen */
}

/* --payload 16: the event of bench/lttng/bench_lttng_app.c's `workload`
 * mode (seq, value: the same values, the same 16 bytes) */
static void write_ev16(uint64_t seq, uint64_t value)
{
	if (chan_idx >= 0) {
		uint64_t p[2] = { seq, value };
		tb_write((unsigned)chan_idx, (uint32_t)id_ev16, p, sizeof p);
	} else {
		tb_workload_ev16(seq, value);
	}
}

static void write_one(int is_signal, uint32_t thread, uint64_t seq, uint64_t value)
{
	if (!is_signal && opt.payload == 16 && !opt.floor) {
		write_ev16(seq, value);
		return;
	}
	uint64_t check = value ^ (seq * GOLDEN) ^ thread;
	if (opt.floor) {
		floor_write(thread, seq, value, check);
	} else if (chan_idx >= 0) {
		struct payload p = { thread, seq, value, check };
		tb_write((unsigned)chan_idx, (uint32_t)(is_signal ? id_signal : id_tick), &p, sizeof p);
	} else if (is_signal) {
		tb_workload_signal(thread, seq, value, check);
	} else {
		tb_workload_tick(thread, seq, value, check);
	}
}

#define MAX_ERROR_TIMES 4096
static uint64_t error_times[MAX_ERROR_TIMES]; /* --error-every: thread 0's only */
static unsigned n_error_times;

/* --requests: one request, a span of two events */
static void write_request(uint32_t thread, uint64_t seq)
{
	tb_workload_request_begin(seq);
	if (thread == 0 && seq == opt.slow_at && opt.slow_ms) {
		struct timespec ts = { (time_t)(opt.slow_ms / 1000), (long)(opt.slow_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	int err = thread == 0 && seq == opt.error_at;
	if (thread == 0 && opt.error_every && seq % opt.error_every == opt.error_every - 1) {
		err = 1;
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		if (n_error_times < MAX_ERROR_TIMES)
			error_times[n_error_times++] = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	}
	tb_workload_request_end(seq, err ? 500u : 200u + (uint32_t)(seq % 300), err ? "/fail" : "/ok");
}

static void on_alarm(int sig)
{
	(void)sig;
	struct worker *w = self;
	if (!w || stop_signals)
		return;
	int saved = errno;
	uint64_t seq = w->sigs;
	write_one(1, w->thread, seq, xorshift(&w->rng));
	w->sigs = seq + 1;
	errno = saved;
}

static void hop(unsigned ncpu, uint64_t i)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((unsigned)(i % ncpu), &set);
	sched_setaffinity(0, sizeof set, &set);
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* --rate: event i of a thread is due at start + i / rate seconds; sleeps
 * until then in steps of at least a millisecond (batches of events, the
 * way a service answers requests), never spins */
/* How many events between two looks at the clock: a sixteenth of a
 * millisecond's events, 1 to 64 (an event is then at most that late: the
 * same share of a millisecond at every rate; at 20,000 events/s and below,
 * every event).  bench/lttng/bench_lttng_app.c has the same. */
static uint64_t pace_stride(uint64_t rate)
{
	uint64_t k = rate / 16000;
	return k < 1 ? 1 : k > 64 ? 64 : k;
}

static void pace(uint64_t start_ns, uint64_t i)
{
	uint64_t due = start_ns + (uint64_t)((double)i * 1e9 / (double)opt.rate);
	uint64_t now = mono_ns();
	if (due <= now + 1000000)
		return;
	struct timespec ts = { (time_t)(due / 1000000000ull), (long)(due % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	self = w;
	w->rng = (uint64_t)(w->thread + 1) * GOLDEN | 1;
	if (opt.floor) {
		/* touched once before the clock starts, as a ring's pages are */
		floor_area = aligned_alloc(64, opt.floor_area);
		if (!floor_area) {
			fprintf(stderr, "tracebuf-workload: --floor-area %" PRIu64 ": out of memory\n", opt.floor_area);
			exit(1);
		}
		memset(floor_area, 0, opt.floor_area);
		struct timespec st;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &st);
		w->setup_ns = (uint64_t)st.tv_sec * 1000000000ull + (uint64_t)st.tv_nsec;
	}
	unsigned ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	if (opt.pin >= 0)
		hop((unsigned)opt.pin + 1, (uint64_t)opt.pin);
	if (opt.signals) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGALRM;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &w->timer) == 0) {
			w->has_timer = 1;
			struct itimerspec its = { { 0, (long)opt.signal_us * 1000 }, { 0, (long)opt.signal_us * 1000 } };
			timer_settime(w->timer, 0, &its, NULL);
		}
	}
	uint64_t pace_every = pace_stride(opt.rate);
	uint64_t start_ns = mono_ns();
	for (uint64_t i = 0; i < opt.events; i++) {
		/* every pace_every events (pace_stride()): a clock read per
		 * event was most of an untraced paced program's CPU at
		 * millions of events/s (45 ns each on the KVM guest of issue
		 * 30's runs), which both tracers' programs paid and the
		 * equal-load rows subtract */
		if (opt.rate && i % pace_every == 0)
			pace(start_ns, i);
		if (opt.until_file && i % 256 == 0 && access(opt.until_file, F_OK) == 0)
			break;
		if (opt.requests)
			write_request(w->thread, i);
		else
			write_one(0, w->thread, i, xorshift(&w->rng));
		w->ticks = i + 1;
		if (opt.hop && i % 1024 == 1023)
			hop(ncpu, i / 1024 + w->thread);
		if (opt.sleep_us && i % 64 == 63)
			usleep(opt.sleep_us);
	}
	struct timespec ct;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ct);
	w->cpu_ns = (uint64_t)ct.tv_sec * 1000000000ull + (uint64_t)ct.tv_nsec - w->setup_ns;
	if (w->has_timer) {
		struct itimerspec off;
		memset(&off, 0, sizeof off);
		timer_settime(w->timer, 0, &off, NULL);
		timer_delete(w->timer);
	}
	if (floor_area) {
		/* a SIGALRM still pending would write into it: blocked first
		 * (a thread's pending signal goes with the thread) */
		sigset_t al;
		sigemptyset(&al);
		sigaddset(&al, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &al, NULL);
		free(floor_area);
		floor_area = NULL;
	}
	return NULL;
}

/* --trigger-ms: tb_trigger("workload") every opt.trigger_ms ms until the
 * writers are done; returns the number of calls that returned 0 */
static void *trigger_loop(void *arg)
{
	uint64_t *ok = arg, start = mono_ns();
	for (uint64_t i = 1; !__atomic_load_n(&stop_triggers, __ATOMIC_RELAXED); i++) {
		uint64_t due = start + i * (uint64_t)opt.trigger_ms * 1000000ull;
		/* in steps of at most 50 ms, so that the end of the writers is seen soon */
		for (uint64_t now = mono_ns(); now < due && !__atomic_load_n(&stop_triggers, __ATOMIC_RELAXED); now = mono_ns()) {
			uint64_t step = due - now < 50000000ull ? due - now : 50000000ull;
			struct timespec ts = { (time_t)(step / 1000000000ull), (long)(step % 1000000000ull) };
			nanosleep(&ts, NULL);
		}
		if (!__atomic_load_n(&stop_triggers, __ATOMIC_RELAXED) && tb_trigger("workload") == 0)
			(*ok)++;
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf-workload [--threads N] [--events N] [--signals] [--signal-us US]\n"
		"                         [--hop] [--pin CPU] [--sleep-us US] [--rate N] [--payload 16|28]\n"
		"                         [--quiet-ms MS] [--requests [--error-at N] [--slow-at N --slow-ms MS]]\n"
		"                         [--procs N] [--channel NAME] [--until-file F] [--wait-file F] [--floor [--floor-area BYTES]]\n"
		"  Writes workload:tick (and workload:signal from SIGALRM handlers) into the\n"
		"  tracebuf session named by $TRACEBUF_SESSION; prints `written: N` last.\n"
		"  --rate N    each thread writes N events per second, steadily (default: full speed)\n"
		"  --payload 16  write workload:ev16 (seq, value: 16 bytes) instead of workload:tick (28)\n"
		"  --hop       move each thread to another CPU every 1024 events\n"
		"  --procs N   N processes (fork + exec of this program), thread ids disjoint\n"
		"  --channel   write with tb_write() to that channel instead of TB_EVENT\n"
		"  --until-file F  stop writing once file F exists (--events stays a bound)\n"
		"  --wait-file F   after writing, print `written: N`, then wait (alive) until F exists\n"
		"  --floor     trace nothing: rdtsc and a 32-byte store per event instead (make bench's floor)\n"
		"  --floor-area BYTES  the floor writes round a per-thread area of that size (a power of two,\n"
		"              64..1 GiB; default 32768, which stays in cache; 16777216: a recorded ring's footprint)\n"
		"  --requests  each event is a request: workload:request_begin (seq), then workload:request_end\n"
		"              (seq, status 200 + seq %% 300, route \"/ok\"); `written:` counts both events\n"
		"  --error-at N  request N of thread 0 ends with status 500, route \"/fail\"\n"
		"  --slow-at N --slow-ms MS  request N of thread 0 lasts MS ms (the others do not wait)\n"
		"  --error-every N  with --requests: requests N-1, 2N-1, ... of thread 0 end with 500, and their\n"
		"              times are printed (`workload: error_realtime_ns T`)\n"
		"  --trigger-ms MS  call tb_trigger(\"workload\") every MS ms while writing (a flight recorder's load)\n");
}

/* an option's number (decimal, 0x hex); exits with a usage error when it is not one */
static uint64_t num(const char *arg, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v > max) {
		fprintf(stderr, "tracebuf-workload: %s: not a number in 0..%" PRIu64 "\n", arg, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "threads", 1, 0, 't' }, { "events", 1, 0, 'n' }, { "signals", 0, 0, 's' },
		{ "signal-us", 1, 0, 'S' }, { "hop", 0, 0, 'h' }, { "pin", 1, 0, 'p' },
		{ "quiet-ms", 1, 0, 'q' }, { "sleep-us", 1, 0, 'u' }, { "procs", 1, 0, 'P' },
		{ "child-id", 1, 0, 'C' }, { "channel", 1, 0, 'c' }, { "help", 0, 0, 'H' },
		{ "until-file", 1, 0, 'U' }, { "wait-file", 1, 0, 'W' }, { "floor", 0, 0, 'F' },
		{ "rate", 1, 0, 'R' }, { "payload", 1, 0, 'L' }, { "requests", 0, 0, 'Q' },
		{ "error-at", 1, 0, 'E' }, { "slow-at", 1, 0, 'D' }, { "slow-ms", 1, 0, 'M' },
		{ "trigger-ms", 1, 0, 'T' }, { "error-every", 1, 0, 'e' }, { "floor-area", 1, 0, 'A' },
		{ 0, 0, 0, 0 }
	};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't': opt.threads = (unsigned)num(optarg, UINT_MAX); break;
		case 'n': opt.events = num(optarg, UINT64_MAX); break;
		case 's': opt.signals = 1; break;
		case 'S': opt.signal_us = (unsigned)num(optarg, UINT_MAX); break;
		case 'h': opt.hop = 1; break;
		case 'p': opt.pin = (int)num(optarg, INT_MAX); break;
		case 'q': opt.quiet_ms = (unsigned)num(optarg, UINT_MAX); break;
		case 'u': opt.sleep_us = (unsigned)num(optarg, UINT_MAX); break;
		case 'P': opt.procs = (unsigned)num(optarg, UINT_MAX); break;
		case 'C': opt.child_id = (unsigned)num(optarg, UINT_MAX); break;
		case 'c': opt.channel = optarg; break;
		case 'U': opt.until_file = optarg; break;
		case 'W': opt.wait_file = optarg; break;
		case 'F': opt.floor = 1; break;
		case 'A': opt.floor_area = num(optarg, 1ull << 30); break;
		case 'R': opt.rate = num(optarg, 1000000000); break;
		case 'L': opt.payload = (unsigned)num(optarg, UINT_MAX); break;
		case 'Q': opt.requests = 1; break;
		case 'E': opt.error_at = num(optarg, UINT64_MAX - 1); break;
		case 'D': opt.slow_at = num(optarg, UINT64_MAX - 1); break;
		case 'M': opt.slow_ms = (unsigned)num(optarg, 3600000); break;
		case 'e': opt.error_every = num(optarg, UINT64_MAX); break;
		case 'T': opt.trigger_ms = (unsigned)num(optarg, 3600000); break;
		case 'H': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (opt.threads < 1 || opt.threads > 4096 || opt.procs < 1 || opt.procs > 64 || opt.signal_us < 10 ||
	    opt.signal_us > 999999) {
		fprintf(stderr, "tracebuf-workload: --threads 1..4096, --procs 1..64, --signal-us 10..999999\n");
		return 2;
	}
	if (opt.payload != 16 && opt.payload != 28) {
		fprintf(stderr, "tracebuf-workload: --payload %u: 16 (workload:ev16) or 28 (workload:tick, the default)\n",
			opt.payload);
		return 2;
	}
	if (opt.floor_area < 64 || (opt.floor_area & (opt.floor_area - 1))) {
		fprintf(stderr, "tracebuf-workload: --floor-area %" PRIu64 ": a power of two from 64 to 1073741824\n",
			opt.floor_area);
		return 2;
	}
	if (opt.requests && (opt.channel || opt.floor || opt.payload != 28)) {
		fprintf(stderr, "tracebuf-workload: --requests writes its own events: not with --channel, --floor or --payload\n");
		return 2;
	}
	if (!opt.requests && opt.error_every) {
		fprintf(stderr, "tracebuf-workload: --error-every goes with --requests\n");
		return 2;
	}
	if (!opt.requests && (opt.error_at != UINT64_MAX || opt.slow_at != UINT64_MAX || opt.slow_ms)) {
		fprintf(stderr, "tracebuf-workload: --error-at, --slow-at and --slow-ms go with --requests\n");
		return 2;
	}
	if (opt.channel) {
		struct tb_session *s = tb_producer_session();
		chan_idx = s ? tb_session_channel(s, opt.channel) : -1;
		id_tick = tb_event_id("workload:tick");
		id_signal = tb_event_id("workload:signal");
		id_ev16 = tb_event_id("workload:ev16");
		if (chan_idx < 0 || id_tick < 0 || id_signal < 0 || id_ev16 < 0) {
			fprintf(stderr, "tracebuf-workload: --channel %s: no such channel in the session (%s)\n",
				opt.channel, tb_errmsg());
			return 1;
		}
	}

	/* children first (fork + exec, so that the library attaches anew) */
	pid_t kids[64];
	int pipes[64];
	unsigned nk = 0;
	for (unsigned k = 1; opt.child_id == 0 && k < opt.procs; k++) {
		int fd[2];
		if (pipe(fd) != 0)
			return 1;
		pid_t p = fork();
		if (p == 0) {
			dup2(fd[1], 1);
			close(fd[0]);
			char id[16], th[16], ev[16], su[16];
			snprintf(id, sizeof id, "%u", k);
			snprintf(th, sizeof th, "%u", opt.threads);
			snprintf(ev, sizeof ev, "%llu", (unsigned long long)opt.events);
			snprintf(su, sizeof su, "%u", opt.signal_us);
			char rt[24];
			snprintf(rt, sizeof rt, "%llu", (unsigned long long)opt.rate);
			char *av[24];
			int a = 0;
			av[a++] = argv[0];
			av[a++] = "--child-id"; av[a++] = id;
			av[a++] = "--threads"; av[a++] = th;
			av[a++] = "--events"; av[a++] = ev;
			av[a++] = "--signal-us"; av[a++] = su;
			if (opt.signals) av[a++] = "--signals";
			if (opt.hop) av[a++] = "--hop";
			if (opt.rate) { av[a++] = "--rate"; av[a++] = rt; }
			if (opt.payload == 16) { av[a++] = "--payload"; av[a++] = "16"; }
			if (opt.requests) av[a++] = "--requests";
			if (opt.channel) { av[a++] = "--channel"; av[a++] = (char *)opt.channel; }
			if (opt.until_file) { av[a++] = "--until-file"; av[a++] = (char *)opt.until_file; }
			av[a] = NULL;
			execv("/proc/self/exe", av);
			_exit(127);
		}
		close(fd[1]);
		kids[nk] = p;
		pipes[nk++] = fd[0];
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);

	struct worker *w = calloc(opt.threads, sizeof *w);
	struct timespec t0, t1, p0, p1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < opt.threads; i++) {
		w[i].thread = opt.child_id * opt.threads + i;
		pthread_create(&w[i].th, NULL, run, &w[i]);
	}
	pthread_t trig_th;
	uint64_t trig_ok = 0;
	int trig = opt.trigger_ms && pthread_create(&trig_th, NULL, trigger_loop, &trig_ok) == 0;
	uint64_t total = 0, cpu_ns = 0, setup_ns = 0;
	for (unsigned i = 0; i < opt.threads; i++) {
		pthread_join(w[i].th, NULL);
		cpu_ns += w[i].cpu_ns;
		setup_ns += w[i].setup_ns;
	}
	if (trig) {
		__atomic_store_n(&stop_triggers, 1, __ATOMIC_RELAXED);
		pthread_join(trig_th, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
	stop_signals = 1;
	for (unsigned i = 0; i < opt.threads; i++)
		total += w[i].ticks * (opt.requests ? 2u : 1u) + w[i].sigs;
	for (unsigned k = 0; k < nk; k++) {
		char buf[256] = { 0 };
		FILE *f = fdopen(pipes[k], "r");
		unsigned long long n = 0;
		while (f && fgets(buf, sizeof buf, f))
			if (!strncmp(buf, "written: ", 9))
				n = strtoull(buf + 9, NULL, 10);
		if (f)
			fclose(f);
		int st;
		waitpid(kids[k], &st, 0);
		total += n;
	}
	if (opt.quiet_ms)
		usleep(opt.quiet_ms * 1000u);
	for (unsigned i = 0; i < n_error_times; i++) /* thread 0 is joined: its writes are visible */
		printf("workload: error_realtime_ns %llu\n", (unsigned long long)error_times[i]);
	if (opt.trigger_ms)
		printf("workload: triggers %llu\n", (unsigned long long)trig_ok);
	/* the writing threads' own cost (this process; for make bench) */
	printf("workload: wall_ns %llu cpu_ns %llu proc_cpu_ns %llu\n",
	       (unsigned long long)((uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
				    (uint64_t)t0.tv_nsec),
	       (unsigned long long)cpu_ns,
	       (unsigned long long)((uint64_t)(p1.tv_sec - p0.tv_sec) * 1000000000ull + (uint64_t)p1.tv_nsec -
				    (uint64_t)p0.tv_nsec - setup_ns));
	printf("written: %llu\n", (unsigned long long)total);
	if (opt.wait_file) {
		/* a process of the session that wrote everything and stays alive
		 * (live snapshots, kill -9 tests): until the test says so */
		fflush(stdout);
		while (access(opt.wait_file, F_OK) != 0)
			usleep(10000);
	}
	free(w);
	return 0;
}
