/* SPDX-License-Identifier: MIT */
/*
 * Several processes share one session's rings: 4 forked children x 6
 * threads write into small discard rings while the parent consumes.  The
 * accounting identity holds across processes, events_discarded never goes
 * down in any stream (whatever the number of processes incrementing it),
 * and every event is attributed to the process and thread that wrote it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(mp, ev, (u32, pid), (u32, tid), (u64, seq))

#define NPROC 4
#define NTH 6
#define NEV 40000

static void *writer(void *arg)
{
	(void)arg;
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);
	for (uint64_t i = 0; i < NEV; i++)
		tb_mp_ev(pid, tid, i);
	return NULL;
}

static uint64_t got, misattributed;

static void on_event(void *arg, const struct tbd_event *e)
{
	(void)arg;
	if (strcmp(e->name, "mp:ev"))
		return;
	uint32_t pid, tid;
	memcpy(&pid, e->payload, 4);
	memcpy(&tid, e->payload + 4, 4);
	misattributed += pid != e->pid || tid != e->tid;
	got++;
}

int main(void)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 4096, .sb_count = 4 };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, NULL) == 0);
	/* fork while single-threaded (ThreadSanitizer supports no threads in a
	 * child of a multi-threaded process), then start the consumer */
	/* the stress build's injection points raise SIGALRM: ignore it here */
	signal(SIGALRM, SIG_IGN);
	pid_t kids[NPROC];
	for (int k = 0; k < NPROC; k++) {
		kids[k] = fork();
		CHECK(kids[k] >= 0);
		if (kids[k] == 0) { /* the mapping and the producer session are inherited */
			pthread_t t[NTH];
			for (int i = 0; i < NTH; i++)
				pthread_create(&t[i], NULL, writer, NULL);
			for (int i = 0; i < NTH; i++)
				pthread_join(t[i], NULL);
			_exit(0);
		}
	}
	tbd_start(&d);
	for (int k = 0; k < NPROC; k++) {
		int st;
		CHECK(waitpid(kids[k], &st, 0) == kids[k] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	tbd_finish(&d);
	uint64_t written = (uint64_t)NPROC * NTH * NEV;
	printf("written %llu delivered %llu lost %llu\n", (unsigned long long)written, (unsigned long long)got,
	       (unsigned long long)tbd_discarded(&d));
	CHECK(d.first_error[0] == 0, "%s", d.first_error);
	CHECK_EQ_U64(d.disc_back, 0);
	CHECK_EQ_U64(misattributed, 0);
	CHECK_EQ_U64(written, got + tbd_discarded(&d));
	tbd_fini(&d);
	return 0;
}
