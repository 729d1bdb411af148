/* SPDX-License-Identifier: MIT */
/*
 * test_flush_takes_over_only_dead_owners - fallback protocol: a flusher
 * takes over a ring whose owner word names a writer that is gone, and never
 * one whose writer is alive.  The owner word holds (start time << 32) | tid:
 * a tid reused by another thread (alive, but started at another time) does
 * not make a dead owner look alive.
 *
 * Forged owner words on a ring holding records, then tb_ring_flush(NOW):
 *   - a live thread with its real start time        -> -EBUSY, word untouched
 *   - a live thread's tid with another start time   -> taken over: closed (1)
 *     (this is a reused tid; kill(tid, 0) alone says "alive": the old bug)
 *   - a tid that no longer exists                   -> taken over
 *   - a tid no thread can have (0, > 2^22)           -> taken over
 *   - a live tid without start time (older writers) -> -EBUSY (kill() decides)
 * The start time is read here from /proc independently of the library.
 * The session is created with the fallback protocol in both variants.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "ring/ring.h"
#include "core/view.h"
#include "tbtest.h"

TB_EVENT(own, ev, (u64, seq))

/* field 22 of /proc/<tid>/task/<tid>/stat, low 32 bits (0 -> 1), by sscanf */
static uint32_t start_of(pid_t tid)
{
	char path[96], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)tid, (int)tid);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	CHECK(n > 0);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	CHECK(p);
	unsigned long long v = 0;
	CHECK(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &v) == 1);
	return (uint32_t)v ? (uint32_t)v : 1;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;
static pid_t helper_tid;

static void *helper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	helper_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static struct tb_session *s;
static unsigned seq;

/* Writes a few records (the ring then has something to close), forges the
 * owner of the ring written, flushes; returns tb_ring_flush's result. */
static int flush_with_owner(uint64_t forged, const char *what)
{
	for (int i = 0; i < 10; i++)
		tb_own_ev(seq++);
	unsigned ring = s->ncpus;
	for (unsigned k = 0; k < s->ncpus; k++) {
		struct tb_ctl *c = tb_ctl_of(s, 0, k);
		uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		if (head & (s->chan[0].sb_size - 1) && (head & (s->chan[0].sb_size - 1)) > TB_PACKET_HEADER_SIZE)
			ring = k; /* a partial packet with records */
	}
	CHECK(ring < s->ncpus, "no ring with a partial packet");
	struct tb_ctl *c = tb_ctl_of(s, 0, ring);
	CHECK_EQ_U64(__atomic_load_n(&c->owner, __ATOMIC_RELAXED), 0);
	__atomic_store_n(&c->owner, forged, __ATOMIC_RELAXED);
	int rc = tb_ring_flush(s, 0, ring, TB_FLUSH_NOW, 0);
	uint64_t after = __atomic_load_n(&c->owner, __ATOMIC_RELAXED);
	printf("%-52s owner %#018llx: flush %d, owner after %#llx\n", what, (unsigned long long)forged, rc,
	       (unsigned long long)after);
	if (rc == 1)
		CHECK_EQ_U64(after, 0); /* taken over, closed, released */
	else
		CHECK_EQ_U64(after, forged); /* never touched */
	__atomic_store_n(&c->owner, 0, __ATOMIC_RELAXED);
	return rc;
}

int main(void)
{
	struct tb_channel_opts co = { .size = sizeof co, .name = "o", .sb_size = 65536, .sb_count = 4,
				      .mode = TB_OVERWRITE }; /* every close succeeds without a consumer */
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &co,
				      .force_fallback = 1 };
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK(!tb_session_uses_rseq(s));
	CHECK_RC(tb_producer_use(s), 0);

	pthread_t th;
	CHECK(pthread_create(&th, NULL, helper, NULL) == 0);
	pthread_mutex_lock(&mu);
	while (!helper_tid)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	uint64_t live = (uint64_t)start_of(helper_tid) << 32 | (uint32_t)helper_tid;

	pid_t gone = fork();
	CHECK(gone >= 0);
	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, NULL, 0) == gone); /* reaped: that tid names nothing now */

	CHECK_RC(flush_with_owner(live, "live owner, its real start time"), -EBUSY);
	CHECK_RC(flush_with_owner(live + (1ull << 32), "live tid, another start time (tid reused)"), 1);
	CHECK_RC(flush_with_owner((live & 0xffffffff00000000ull) | (uint32_t)gone, "a tid that exists no more"), 1);
	CHECK_RC(flush_with_owner(live & 0xffffffff00000000ull, "tid 0"), 1);
	CHECK_RC(flush_with_owner(0xfffffffeull, "tid 2^32 - 2 (never given to kill())"), 1);
	CHECK_RC(flush_with_owner((uint32_t)helper_tid, "live tid, no start time (older writer)"), -EBUSY);

	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(th, NULL);
	/* pthread_join() returns when the kernel clears the thread's tid word,
	 * which it does before the thread is gone: for a moment a signal 0 still
	 * finds it (seen on a loaded machine).  Wait for the kernel to say ESRCH
	 * (a condition, not a time; the deadline only guards a hang). */
	for (int i = 0; i < 100000 && !(syscall(SYS_tgkill, getpid(), helper_tid, 0) == -1 && errno == ESRCH); i++)
		usleep(100);
	/* the helper is gone now: its word, start time and all, is taken over */
	CHECK_RC(flush_with_owner(live, "the same owner word once that thread exited"), 1);
	CHECK_RC(tb_producer_use(NULL), 0);
	return 0;
}
