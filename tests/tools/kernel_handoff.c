/* SPDX-License-Identifier: MIT */
/*
 * kernel_handoff.c - two threads handing a token over a futex N times
 * (argv[1], default 200), for t_kernel_sched_events.sh.  The thread whose
 * turn it is writes kh:handoff { seq, to } right before it passes the
 * token (store + FUTEX_WAKE) and kh:woke { seq, woken } right after the
 * wake returned (woken: threads the kernel woke, so a sched_waking of the
 * other thread lies between the two); the thread that waited writes
 * kh:got { seq } right after its futex wait returned (after the
 * sched_switch that put it back on a CPU).  Thread "kh-a" also sleeps
 * 50 ms in a span (kh:nap_begin / kh:nap_end), and each thread marks its
 * life (kh:life_begin / kh:life_end, a span "life"), after sleeping
 * LINGER ms (argv[2], default 0) once the token passing is over, so that
 * a lifetime can be long next to a thread's start and exit.  With a third
 * argument, a path, each thread then keeps sleeping 5 ms at a time (so it
 * switches in and out) until that file exists (at most 120 s): a test can
 * attach a recorder while the threads still live, and end them when it saw
 * their switches.
 * Prints "TID_A TID_B" as soon as both threads run.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>

TB_EVENT(kh, handoff, (u32, seq), (u32, to))
TB_EVENT(kh, woke, (u32, seq), (u32, woken))
TB_EVENT(kh, got, (u32, seq))
TB_EVENT(kh, nap_begin, (u32, ms))
TB_EVENT(kh, nap_end, (u32, ms))
TB_EVENT(kh, life_begin, (u32, tid))
TB_EVENT(kh, life_end, (u32, tid))

static uint32_t turn; /* the futex word: whose turn (0: a, 1: b) */
static uint32_t tids[2];
static unsigned n = 200;
static unsigned linger_ms;
static const char *release; /* argv[3]: the threads end once it exists */
static pthread_barrier_t ready;

static long futex(uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static void *run(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	pthread_setname_np(pthread_self(), me ? "kh-b" : "kh-a");
	tids[me] = (uint32_t)syscall(SYS_gettid);
	tb_kh_life_begin(tids[me]);
	pthread_barrier_wait(&ready);
	if (!me) {
		/* both tids are set (before the barrier): said at once, so that a
		 * test can act while the threads run */
		printf("%u %u\n", tids[0], tids[1]);
		fflush(stdout);
		tb_kh_nap_begin(50);
		struct timespec ts = { 0, 50 * 1000000L };
		while (nanosleep(&ts, &ts) != 0)
			;
		tb_kh_nap_end(50);
	}
	for (unsigned seq = me; seq < n; seq += 2) {
		/* acquire: pairs with the other thread's release store of turn */
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != me)
			futex(&turn, FUTEX_WAIT_PRIVATE, !me);
		if (seq)
			tb_kh_got(seq);
		tb_kh_handoff(seq, tids[!me]);
		/* release: the other thread's events come after ours */
		__atomic_store_n(&turn, !me, __ATOMIC_RELEASE);
		long woken = futex(&turn, FUTEX_WAKE_PRIVATE, 1);
		tb_kh_woke(seq, (uint32_t)(woken > 0 ? woken : 0));
	}
	struct timespec ts = { (time_t)(linger_ms / 1000), (long)(linger_ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
	for (unsigned i = 0; release && i < 24000 && access(release, F_OK) != 0; i++) {
		struct timespec p = { 0, 5 * 1000000L };
		nanosleep(&p, NULL);
	}
	tb_kh_life_end(tids[me]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = (unsigned)atoi(argv[1]);
	if (argc > 2)
		linger_ms = (unsigned)atoi(argv[2]);
	if (argc > 3)
		release = argv[3];
	if (n < 2)
		return 2;
	pthread_barrier_init(&ready, NULL, 2);
	pthread_t th[2];
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, run, (void *)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
