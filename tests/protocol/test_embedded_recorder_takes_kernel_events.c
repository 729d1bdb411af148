/* SPDX-License-Identifier: MIT */
/*
 * tb_session_start() with opts.kernel (docs/KERNEL.md): the embedded
 * recorder puts this process's scheduling events in its trace.  A thread
 * sleeps K times between two events of its own (kt:before, kt:after); the
 * trace must hold a sched_switch away from that thread inside each pair
 * (time order across the user and kernel streams).  With system calls
 * (opts.kernel "sched,syscalls"): the sleeper's nanosleep inside each pair,
 * and the recorder's own threads (named tb-*) leave their calls out (each
 * may show only the few calls glibc makes starting it, before it excludes
 * itself; its final pass alone makes dozens; a sanitizer's own thread is
 * not the recorder's).  A bad tracepoint list is refused and
 * leaves no directory behind.  Skips (77) where perf may not open
 * tracepoints.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "tbtest.h"

TB_EVENT(kt, before, (u32, i))
TB_EVENT(kt, after, (u32, i))

#define K 20

static uint32_t sleeper_tid;

/* The recorder's threads now, into t[] (at most cap): those named tb-* (tb_engine_thread_begin;
 * a sanitizer's own threads are not); their number */
static size_t recorder_threads(uint32_t *t, size_t cap)
{
	size_t n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL && n < cap) {
		if (de->d_name[0] == '.')
			continue;
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof comm, f))
				comm[0] = 0;
			fclose(f);
		}
		if (!strncmp(comm, "tb-", 3))
			t[n++] = (uint32_t)strtoul(de->d_name, NULL, 10);
	}
	if (d)
		closedir(d);
	return n;
}

static int among(const uint32_t *t, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i] == tid)
			return 1;
	return 0;
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleeper_tid = (uint32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < K; i++) {
		tb_kt_before(i);
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
		tb_kt_after(i);
	}
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/tbkemb-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char out[64];
	snprintf(out, sizeof out, "%s/t", dir);

	/* a list naming no tracepoint tracebuf knows: refused, nothing created */
	struct tb_session_opts o = { .size = sizeof o, .kernel = "sched_nonsense" };
	struct tb_recorder *rec = NULL;
	int rc = tb_session_start(&o, out, &rec);
	CHECK(rc == -EINVAL && !rec, "rc %d", rc);
	CHECK(strstr(tb_errmsg(), "sched_nonsense") != NULL, "%s", tb_errmsg());
	struct stat st;
	CHECK(stat(out, &st) < 0, "a refused start left %s", out);

	o.kernel = "sched,syscalls";
	int sys = 1;
	rc = tb_session_start(&o, out, &rec);
	if (rc == -ENOENT) { /* no raw_syscalls on this kernel: the scheduling events alone */
		printf("note: %s: without system calls\n", tb_errmsg());
		o.kernel = "";
		sys = 0;
		rc = tb_session_start(&o, out, &rec);
	}
	if (rc == -EACCES || rc == -EPERM || rc == -ENOENT)
		SKIP("--kernel is not available here: %s", tb_errmsg());
	uint32_t main_tid = (uint32_t)syscall(SYS_gettid);
	uint32_t rec_t[64];
	size_t nrec = 0;
	CHECK(rc == 0, "tb_session_start: %s", tb_errmsg());
	pthread_t th;
	CHECK(pthread_create(&th, NULL, sleeper, NULL) == 0);
	pthread_join(th, NULL);
	/* the recorder's threads, by name; the engine names each as it starts: wait until they have */
	for (int i = 0; i < 5000 && (nrec = recorder_threads(rec_t, 64)) < 2; i++) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	CHECK(nrec >= 2, "%zu threads named tb-* (the recorder's drain and writer at least)", nrec);
	CHECK(tb_session_stop(rec) == 0, "%s", tb_errmsg());

	struct tb_reader *r;
	CHECK(tb_reader_open(out, NULL, &r) == 0, "%s", tb_errmsg());
	const struct tb_rd_event *e;
	uint64_t before[K] = { 0 }, after[K] = { 0 };
	uint64_t *away = calloc(4096, sizeof *away);
	size_t naway = 0;
	unsigned kernel = 0;
	uint64_t *sleeps = calloc(4096, sizeof *sleeps); /* the sleeper's nanosleep entries */
	size_t nsleeps = 0;
	struct { uint32_t tid, calls; } other[64]; /* calls of the recorder's threads */
	size_t nother = 0;
	while (tb_reader_next(r, &e) > 0) {
		if (tb_rd_kind(e) != TB_RD_EVENT)
			continue;
		const char *n = tb_rd_name(e);
		if (!strcmp(n, "kt:before") || !strcmp(n, "kt:after")) {
			uint32_t i = (uint32_t)tb_rd_u64(e, 0);
			CHECK(i < K);
			(n[3] == 'b' ? before : after)[i] = tb_rd_ticks(e);
		} else if (!strcmp(n, "sched_switch")) {
			kernel++;
			int p = tb_rd_field_index(e, "prev_tid");
			CHECK(p >= 0);
			if ((uint32_t)tb_rd_i64(e, (unsigned)p) == sleeper_tid && naway < 4096)
				away[naway++] = tb_rd_ticks(e);
		} else if (!strncmp(n, "sched_process_", 14) || !strcmp(n, "sched_waking")) {
			kernel++;
		} else if (!strcmp(n, "syscall_entry") || !strcmp(n, "syscall_exit")) {
			kernel++;
			int t = tb_rd_field_index(e, "tid"), nm = tb_rd_field_index(e, "name");
			CHECK(t >= 0 && nm >= 0);
			uint32_t tid = (uint32_t)tb_rd_i64(e, (unsigned)t);
			size_t len;
			const char *call = tb_rd_str(e, (unsigned)nm, &len);
			if (tid == sleeper_tid && n[8] == 'e' && call && len >= 9 && strstr(call, "nanosleep") && nsleeps < 4096)
				sleeps[nsleeps++] = tb_rd_ticks(e);
			if (tid != sleeper_tid && tid != main_tid && among(rec_t, nrec, tid)) {
				size_t j = 0;
				while (j < nother && other[j].tid != tid)
					j++;
				if (j == nother && nother < 64)
					other[nother++].tid = tid, other[j].calls = 0;
				if (j < nother)
					other[j].calls++;
			}
		}
	}
	CHECK(kernel > 0, "no kernel event in the trace");
	for (unsigned i = 0; i < K; i++) {
		CHECK(before[i] && after[i], "pair %u missing", i);
		int found = 0;
		for (size_t j = 0; j < naway && !found; j++)
			found = before[i] < away[j] && away[j] < after[i];
		CHECK(found, "no switch away from the sleeper between its kt:before and kt:after %u", i);
		found = !sys;
		for (size_t j = 0; j < nsleeps && !found; j++)
			found = before[i] < sleeps[j] && sleeps[j] < after[i];
		CHECK(found, "no nanosleep of the sleeper between its kt:before and kt:after %u", i);
	}
	/* the recorder's threads: their start in glibc at most (entries and exits) */
	for (size_t j = 0; j < nother; j++)
		CHECK(other[j].calls <= 16, "thread %u (the recorder's) has %u system call events in the trace",
		      other[j].tid, other[j].calls);
	CHECK(!sys || nsleeps >= K, "%zu nanosleep entries of the sleeper", nsleeps);
	free(sleeps);
	free(away);
	tb_reader_close(r);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	printf("ok: %u kernel events, %zu switches away from the sleeper, %zu of its nanosleeps, %zu recorder threads "
	       "(tb-*), %zu of them with calls in the trace (at most 16 each)\n",
	       kernel, naway, nsleeps, nrec, nother);
	return 0;
}
