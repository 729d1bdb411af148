/* SPDX-License-Identifier: MIT */
/*
 * thread.c - who is writing: the identity of the calling thread, cached.
 *
 * The tid (record attribution), the pid (escape records), the start time
 * stamp of a thread (/proc) and the fallback owner token (stamp << 32 | tid)
 * are computed once per thread (per process for the pid) and reset in the
 * child after fork.  The write paths read the tid and the owner token inline
 * from TLS (tb_self_tid(), tb_owner_token() in producer.h); only the first
 * read of a thread calls in here.  Everything is async-signal-safe: the
 * first event of a thread may be in a signal handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/thread.h"

__thread uint32_t tb_tid __attribute__((tls_model("initial-exec")));
__thread uint64_t tb_owner_tok __attribute__((tls_model("initial-exec")));
__thread uint32_t tb_name_done __attribute__((tls_model("initial-exec")));
uint32_t tb_name_gen = 1;
static uint32_t tb_pid;

static void atfork_child(void)
{
	tb_tid = 0; /* the only thread of the child is the one that forked */
	tb_owner_tok = 0;
	tb_pid = 0;
	tb_name_done = 0; /* a new tid: its name is written again */
}

/* At load time, never from an event: pthread_once/pthread_atfork are not
 * async-signal-safe, and the first event of a thread may be in a handler. */
__attribute__((constructor)) static void atfork_install(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

__attribute__((noinline)) uint32_t tb_self_tid_first(void)
{
	/* async-signal-safe: a handler interrupting this stores the same value */
	tb_tid = (uint32_t)syscall(SYS_gettid);
	return tb_tid;
}

char *tb_put_u32(char *p, uint32_t v)
{
	char d[10];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = d[--n];
	return p;
}

static char *put_str(char *p, const char *str)
{
	while (*str)
		*p++ = *str++;
	return p;
}

/*
 * Field 22 of a /proc stat file (the start time, clock ticks since boot);
 * 0 when it cannot be read.  "pid (comm) state ppid ...": comm may hold
 * spaces and ')', so the fields are counted from the last ')'; field 22
 * follows the 20th space after it.  Async-signal-safe: open, read, close.
 */
uint64_t tb_stat_start_time(const char *stat_path)
{
	int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *q = strrchr(buf, ')');
	for (int f = 0; q && f < 20; f++) {
		q = strchr(q, ' ');
		if (q)
			q++;
	}
	if (!q || *q < '0' || *q > '9')
		return 0;
	uint64_t v = 0;
	while (*q >= '0' && *q <= '9')
		v = v * 10 + (uint64_t)(*q++ - '0');
	return v;
}

/*
 * Low 32 bits of the start time of thread `tid` (/proc/<tid>/task/<tid>/stat),
 * never 0; 0 when it cannot be read (no such thread, no /proc).  With the
 * tid, it names a thread for as long as tids are not reused within one clock
 * tick (10 ms).  Async-signal-safe.
 */
uint32_t tb_thread_stamp(uint32_t tid)
{
	char path[64], *p = path;
	p = put_str(p, "/proc/");
	p = tb_put_u32(p, tid);
	p = put_str(p, "/task/");
	p = tb_put_u32(p, tid);
	p = put_str(p, "/stat");
	*p = 0;
	uint64_t v = tb_stat_start_time(path); /* 0 only when unreadable: no
						  * user thread starts at tick 0 */
	if (v == 0)
		return 0;
	uint32_t stamp = (uint32_t)v;
	return stamp ? stamp : 1;
}

int tb_pid_alive(uint32_t pid)
{
	if (pid == 0 || pid > (1u << 22)) /* above PID_MAX_LIMIT: no such process */
		return 0;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 0;
	/* exists (or EPERM: exists, another uid); a zombie (killed, not yet
	 * reaped by its parent) does no more work: state Z or X in stat */
	char path[32], *p = path;
	p = put_str(p, "/proc/");
	p = tb_put_u32(p, pid);
	p = put_str(p, "/stat");
	*p = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1; /* no /proc: kill() said it exists */
	char buf[512];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

/* What a fallback writer stores in a ring's owner word: its tid in the low
 * half, its start time stamp in the high half (0 if unreadable).  Computed
 * once per thread (the first fallback append: gettid + three calls on
 * /proc), then one TLS load (tb_owner_token()), like the tid alone before. */
__attribute__((noinline)) uint64_t tb_owner_token_first(void)
{
	uint32_t tid = tb_self_tid();
	/* async-signal-safe: a handler interrupting this stores the same value */
	tb_owner_tok = (uint64_t)tb_thread_stamp(tid) << 32 | tid;
	return tb_owner_tok;
}

uint32_t tb_self_pid(void)
{
	/* relaxed: a cache of getpid(); every thread (or handler) that races
	 * stores the same value, and nothing else is published with it.  The
	 * atfork child handler resets it to 0 in the child. */
	uint32_t p = __atomic_load_n(&tb_pid, __ATOMIC_RELAXED);
	if (__builtin_expect(p == 0, 0)) {
		p = (uint32_t)getpid();
		__atomic_store_n(&tb_pid, p, __ATOMIC_RELAXED);
	}
	return p;
}
