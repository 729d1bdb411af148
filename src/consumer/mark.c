/* SPDX-License-Identifier: MIT */
/*
 * mark.c - the recorder's mark in its trace directory, DIR/.tracebuf-recorder:
 * what `dump --follow` and `report --follow` (tools/cli_args.c) read to know
 * that DIR is still being written and up to when it is complete.  Written
 * and locked when the engine is created (tb_recorder_mark), its progress
 * moved by the drain thread (tb_engine_progress_tick), removed when the
 * engine finishes or is destroyed (tb_recorder_unmark).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer/engine_impl.h"
#include "core/record.h"
#include "platform/clock.h"
#include "platform/thread.h"

/*
 * DIR/.tracebuf-recorder says "being recorded" to followers (`dump
 * --follow`, `report --follow`, tools/cli_args.c cli_recorder_state()) while
 * the engine writes DIR; removed when it has finished (the last thing
 * written is the metadata).  A dot-file: babeltrace2 and our reader skip it.
 * One line, fixed width, rewritten in place as the progress moves:
 *
 *   "tracebuf-recorder 2 pid=%10d start=%20llu boot=%36s progress=%020llu\n"
 *
 * pid and start (field 22 of /proc/PID/stat: clock ticks since boot) name
 * this process on this boot (boot: /proc/sys/kernel/random/boot_id; start 0
 * and boot "-" padded when /proc cannot say); progress is the time up to
 * which every record is on disk.  The proof that the recorder is still at
 * work is not in the text (anyone can write text, and a pid is reused): the
 * recorder holds an exclusive flock on the file for as long as it writes
 * DIR.  A follower's non-blocking LOCK_SH fails while it is held; the kernel
 * releases it when the recorder exits, however it exits (kill -9 included),
 * and a copy of the directory (another machine, a backup) has no holder.
 * The mark is written and locked under a temporary name, then renamed in
 * place, so that no follower ever sees it unlocked or half written.
 */
#define RECORDER_MARK ".tracebuf-recorder"
#define RECORDER_MARK_TMP ".tracebuf-recorder.new"

/* the line without its progress and newline, into e->mark_head */
static void mark_head(struct tb_engine *e)
{
	char boot[40] = "-";
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, boot, 36);
		boot[n == 36 ? 36 : 1] = 0;
		if (n != 36)
			boot[0] = '-';
		close(fd);
	}
	snprintf(e->mark_head, sizeof e->mark_head, "tracebuf-recorder 2 pid=%10ld start=%20llu boot=%-36s progress=",
		 (long)getpid(), (unsigned long long)tb_stat_start_time("/proc/self/stat"), boot);
}

static int mark_write(struct tb_engine *e, int fd)
{
	char line[sizeof e->mark_head + 24];
	int n = snprintf(line, sizeof line, "%s%020" PRIu64 "\n", e->mark_head, e->progress);
	return n > 0 && (size_t)n < sizeof line && pwrite(fd, line, (size_t)n, 0) == n ? 0 : -1;
}

void tb_recorder_mark(struct tb_engine *e)
{
	mark_head(e);
	int fd = openat(e->dirfd, RECORDER_MARK_TMP, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			0644);
	if (fd < 0)
		return; /* followers then see a finished trace: they print it once */
	struct stat st;
	/* held until tb_recorder_unmark() closes fd (or the process ends) */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || flock(fd, LOCK_EX | LOCK_NB) || mark_write(e, fd) ||
	    renameat(e->dirfd, RECORDER_MARK_TMP, e->dirfd, RECORDER_MARK)) {
		unlinkat(e->dirfd, RECORDER_MARK_TMP, 0);
		close(fd);
		return;
	}
	e->mark_fd = fd;
	e->marked = 1;
}

/* unlinked first, then the lock released: a follower that tests the lock of
 * a mark it opened just before finds the file unlinked (st_nlink 0), and
 * reads "finished", not "killed" */
void tb_recorder_unmark(struct tb_engine *e)
{
	if (e->marked && e->dirfd >= 0)
		unlinkat(e->dirfd, RECORDER_MARK, 0);
	if (e->marked)
		close(e->mark_fd);
	e->marked = 0;
}

/*
 * The time up to which the trace directory holds every record of the
 * drained channels (the "progress" of the mark, for followers): records
 * stamped before it are all in whole packets on disk.  Called by the drain
 * thread right after a pass wrote every complete packet it found.  Per
 * ring: a complete packet not taken yet, or an open packet holding records
 * (or owned by a fallback writer), holds it back to that packet's
 * timestamp_begin; an empty, unowned ring does not (a record written from
 * now on is stamped after the clock read below, less 1 ms: see
 * relay_tick() in engine_relay.c for the same argument).  Relaxed loads of shared
 * memory: a hint for followers, never trusted for the trace itself.
 */
int tb_engine_progress_tick(struct tb_engine *e)
{
	if (!e->marked)
		return 0;
	uint64_t now = tb_mono_ns();
	if (now - e->progress_ns < 50000000ull)
		return 1; /* the caller comes back within 50 ms (a packet may just have been written) */
	e->progress_ns = now;
	struct tb_session *s = e->s;
	uint64_t t = tb_clock_read(s->clock_kind), margin = s->clock_freq / 1000;
	t = t > margin ? t - margin : 0;
	for (unsigned ch = 0; ch < s->nchannels; ch++) {
		if (!tb_chan_drained(e, ch))
			continue;
		uint64_t S = s->chan[ch].sb_size;
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			const struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
			uint64_t head = __atomic_load_n(&c->head, __ATOMIC_RELAXED), pos, at = UINT64_MAX;
			if (head == 0)
				continue;
			if (tb_ring_ready(s, ch, cpu, &pos) == 1)
				at = pos;
			else if ((head & (S - 1)) != TB_PACKET_HEADER_SIZE || __atomic_load_n(&c->owner, __ATOMIC_RELAXED))
				at = head & ~(S - 1);
			if (at == UINT64_MAX)
				continue;
			const uint8_t *pk = tb_sb_at(s, ch, cpu, at);
			uint64_t tsb;
			memcpy(&tsb, pk + offsetof(struct tb_packet_header, timestamp_begin), sizeof tsb);
			if (at == (head & ~(S - 1)) && head - at > TB_PACKET_HEADER_SIZE) {
				/* the open packet holds records: none is older than its
				 * first (time-ordered ring), which the live period closes
				 * within a period; its timestamp_begin may be much older
				 * (a packet a flush opened on a quiet ring), and would hold
				 * every other stream back that long */
				uint32_t id;
				uint64_t first = tsb;
				if (tb_hdr_get(pk + TB_PACKET_HEADER_SIZE, head - at - TB_PACKET_HEADER_SIZE, &id, &first) &&
				    first > tsb)
					tsb = first;
			}
			if (tsb < t)
				t = tsb;
		}
	}
	if (t > e->progress) {
		e->progress = t;
		if (mark_write(e, e->mark_fd) != 0) {
			/* followers keep the last progress they read */
		}
	}
	return 0;
}

static int mark_tick(void *arg)
{
	return tb_engine_progress_tick(arg);
}

/* The local copy as an output: its packets and metadata are written by the
 * engine itself (stream.c, metadata.c) before any output sees them; what it
 * adds each tick is the followers' progress mark. */
static const struct tb_output local_output = { .name = "local", .tick = mark_tick };

int tb_recorder_output(struct tb_engine *e)
{
	return tb_output_add(e, &local_output, e);
}
