/* SPDX-License-Identifier: MIT */
/*
 * bench_memory.c - resident memory of a session configured for 64 CPUs x
 * 1 MiB (4 x 256 KiB sub-buffers, overwrite mode) when two threads, pinned to
 * CPUs 0 and 1, each write enough to wrap their ring twice.  Figures: Rss and
 * Pss of the session file's mapping (summed over its VMAs in
 * /proc/self/smaps) and the file's allocated blocks on tmpfs, against the
 * 2 x 1 MiB that the two written rings need.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "bench.h"

TB_EVENT(bench, ev16, (u64, a), (u64, b))

#define RING (1u << 20)

static void *writer(void *arg)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET((int)(intptr_t)arg, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		return (void *)1;
	for (uint64_t i = 0; i < 2 * RING / 20 + 1000; i++) /* 20-byte records: wraps twice */
		tb_bench_ev16(i, i);
	return NULL;
}

/* Sum of Rss/Pss (KiB) over the VMAs mapping `path`; virtual size too. */
static int smaps_of(const char *path, long *rss, long *pss, long *size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	int in = 0, found = 0;
	*rss = *pss = *size = 0;
	size_t plen = strlen(path);
	while (f && fgets(line, sizeof line, f)) {
		long v;
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			/* a VMA header: "start-end perms offset dev inode   path" */
			char *p = strstr(line, path);
			in = p && (p[plen] == '\n' || p[plen] == ' ');
			found |= in;
		} else if (in && sscanf(line, "Rss: %ld kB", &v) == 1) {
			*rss += v;
		} else if (in && sscanf(line, "Pss: %ld kB", &v) == 1) {
			*pss += v;
		} else if (in && sscanf(line, "Size: %ld kB", &v) == 1) {
			*size += v;
		}
	}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

void bench_memory(struct bench_table *t)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		bench_skip(t, "memory", "64-CPU session, 2 CPUs write", "needs 2 online CPUs");
		return;
	}
	struct tb_channel_opts co = { .size = sizeof co, .name = "bench", .sb_size = RING / 4, .sb_count = 4,
				      .mode = TB_OVERWRITE, .events = "bench:ev16" };
	struct tb_session_opts so = { .size = sizeof so, .ncpus = 64, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	if (tb_session_create(&so, &s)) {
		bench_skip(t, "memory", "64-CPU session, 2 CPUs write", tb_errmsg());
		return;
	}
	tb_producer_use(s);
	pthread_t th[2];
	void *r0 = NULL, *r1 = NULL;
	pthread_create(&th[0], NULL, writer, (void *)(intptr_t)0);
	pthread_create(&th[1], NULL, writer, (void *)(intptr_t)1);
	pthread_join(th[0], &r0);
	pthread_join(th[1], &r1);
	tb_producer_use(NULL);
	long rss, pss, vsz;
	struct stat st;
	int ok = smaps_of(tb_session_path(s), &rss, &pss, &vsz) == 0 && stat(tb_session_path(s), &st) == 0;
	tb_session_unlink(s);
	tb_session_close(s);
	if (!ok || r0 || r1) {
		bench_skip(t, "memory", "64-CPU session, 2 CPUs write", r0 || r1 ? "cannot pin to CPUs 0 and 1" :
								 "session mapping not found in smaps");
		return;
	}
	double two = 2.0 * RING / 1024.0; /* KiB */
	bench_row(t, "memory", "64 CPUs x 1 MiB session: mapping size", (double)vsz / 1024.0, "MiB", 0, NULL, NULL);
	bench_row(t, "memory", "2 rings x 1 MiB (what 2 writing CPUs need)", two / 1024.0, "MiB", 0, NULL, NULL);
	bench_row(t, "memory", "Rss of the mapping, 2 CPUs wrote (wrapped)", (double)rss / 1024.0, "MiB", rss / two,
		  "Rss / 2 rings", "~1");
	bench_row(t, "memory", "Pss of the mapping", (double)pss / 1024.0, "MiB", pss / two, "Pss / 2 rings", "~1");
	bench_row(t, "memory", "file blocks allocated (tmpfs)", (double)st.st_blocks * 512.0 / 1048576.0, "MiB",
		  (double)st.st_blocks * 512.0 / 1024.0 / two, "file / 2 rings", "~1");
}
