/* SPDX-License-Identifier: MIT */
/*
 * prof_sigalrm.c - a test program for `tracebuf profile`: 4 threads, each
 * with its own SIGALRM timer (timer_create(CLOCK_MONOTONIC) delivered to the
 * thread itself, SIGEV_THREAD_ID) and ticks counted by the SIGALRM handler
 * per thread.  Each thread computes a deterministic hash chain and checks
 * its own invariants while the signals fly:
 *   - its ticks arrive (and only its own: the tick carries the thread index)
 *   - errno set by a failing system call survives the signal handlers that
 *     run while the thread computes
 *   - nanosleep interrupted by a signal (EINTR: the handler has no
 *     SA_RESTART) is resumed correctly; a pipe round trip retries EINTR
 * The main thread computes too, without a timer.  Prints one line per
 * thread (its hash) and "ok": the same bytes on every run, with or without
 * `tracebuf profile`.  Exit 0, or 1 with a message on stderr when an
 * invariant fails.  With $PROF_TIDS set, appends the id of each of its
 * threads to that file (for the test to compare with the samples' threads).
 * Does not link libtracebuf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 4
#define ROUNDS 40
#define ROUND_ITERS 1500000

struct th {
	int idx;
	uint64_t hash;
	unsigned long errno_bad, wrong_ticks, eintr_seen;
	char err[160];
};

static __thread volatile int my_idx = -1;
static __thread volatile unsigned long my_ticks, my_wrong;

static void on_alrm(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	int saved = errno; /* a handler that behaves: the test is about the profiler's */
	if (si->si_code == SI_TIMER && si->si_value.sival_int == my_idx)
		my_ticks++;
	else
		my_wrong++;
	errno = saved;
}

uint64_t mix(uint64_t x, uint64_t n);

/* appends this thread's id to $PROF_TIDS */
static void note_tid(void)
{
	const char *f = getenv("PROF_TIDS");
	if (!f)
		return;
	int fd = open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%ld\n", (long)syscall(SYS_gettid));
	if (write(fd, buf, (size_t)n) != n)
		perror("prof_sigalrm: PROF_TIDS");
	close(fd);
}

/* splitmix64 chain: deterministic, CPU-bound */
__attribute__((noinline)) uint64_t mix(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		x += 0x9e3779b97f4a7c15ull;
		uint64_t z = x;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		x ^= z ^ (z >> 31);
	}
	return x;
}

static void *worker(void *arg)
{
	struct th *t = arg;
	my_idx = t->idx;
	note_tid();
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev.sigev_value.sival_int = t->idx;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	timer_t tm;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0) {
		snprintf(t->err, sizeof t->err, "thread %d: timer_create: %s", t->idx, strerror(errno));
		return NULL;
	}
	struct itimerspec its = { { 0, 1000000 + 250000 * t->idx }, { 0, 1000000 } };
	timer_settime(tm, 0, &its, NULL);

	int pfd[2];
	if (pipe(pfd) != 0) {
		snprintf(t->err, sizeof t->err, "thread %d: pipe: %s", t->idx, strerror(errno));
		return NULL;
	}
	uint64_t x = 0x1234567ull * (uint64_t)(t->idx + 1);
	for (int r = 0; r < ROUNDS; r++) {
		/* errno across computation interrupted by signals */
		errno = 0;
		if (close(-1) == 0 || errno != EBADF) {
			snprintf(t->err, sizeof t->err, "thread %d: close(-1) did not fail with EBADF", t->idx);
			break;
		}
		x = mix(x, ROUND_ITERS);
		if (errno != EBADF)
			t->errno_bad++;

		/* a sleep interrupted by ticks: resumed until the time is over */
		struct timespec req = { 0, 3000000 }, rem;
		while (nanosleep(&req, &rem) != 0) {
			if (errno != EINTR) {
				snprintf(t->err, sizeof t->err, "thread %d: nanosleep: %s", t->idx, strerror(errno));
				goto out;
			}
			t->eintr_seen++;
			req = rem;
		}

		/* a pipe round trip; a read failing with EINTR is retried */
		unsigned char b = (unsigned char)x, got = 0;
		if (write(pfd[1], &b, 1) != 1) {
			snprintf(t->err, sizeof t->err, "thread %d: write: %s", t->idx, strerror(errno));
			break;
		}
		ssize_t n;
		while ((n = read(pfd[0], &got, 1)) < 0 && errno == EINTR)
			t->eintr_seen++;
		if (n != 1 || got != b) {
			snprintf(t->err, sizeof t->err, "thread %d: read gave %zd (%s)", t->idx, n,
				 n < 0 ? strerror(errno) : "short");
			break;
		}
		x ^= got;
	}
out:
	timer_delete(tm);
	close(pfd[0]);
	close(pfd[1]);
	t->hash = x;
	t->wrong_ticks = my_wrong;
	if (!t->err[0] && my_ticks == 0)
		snprintf(t->err, sizeof t->err, "thread %d: no SIGALRM tick arrived", t->idx);
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_alrm;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: interrupted calls fail with EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);

	struct th t[NTHREADS];
	pthread_t tid[NTHREADS];
	memset(t, 0, sizeof t);
	for (int i = 0; i < NTHREADS; i++) {
		t[i].idx = i;
		if (pthread_create(&tid[i], NULL, worker, &t[i]) != 0) {
			fprintf(stderr, "prof_sigalrm: pthread_create failed\n");
			return 1;
		}
	}
	note_tid();
	uint64_t mine = mix(0x5eed, 40 * ROUND_ITERS);
	int bad = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(tid[i], NULL);
		printf("thread %d: %016llx\n", i, (unsigned long long)t[i].hash);
		if (t[i].err[0]) {
			fprintf(stderr, "prof_sigalrm: %s\n", t[i].err);
			bad = 1;
		}
		if (t[i].errno_bad) {
			fprintf(stderr, "prof_sigalrm: thread %d: errno changed under signals %lu times\n", i,
				t[i].errno_bad);
			bad = 1;
		}
		if (t[i].wrong_ticks) {
			fprintf(stderr, "prof_sigalrm: thread %d: %lu SIGALRM not its own\n", i, t[i].wrong_ticks);
			bad = 1;
		}
	}
	printf("main: %016llx\n", (unsigned long long)mine);
	printf(bad ? "FAILED\n" : "ok\n");
	return bad;
}
