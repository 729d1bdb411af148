/* SPDX-License-Identifier: MIT */
/*
 * test_embedded_recorder_honours_its_live_period - tb_session_opts.live_period_ns
 * reaches the embedded recorder (tb_session_start), as record --live-period
 * reaches record's:
 *  1. 20 ms: a ring that is never idle (an event every millisecond; flush
 *     period 1 hour, so the idle flush never closes it) shows its first event
 *     in the trace files long before its 1 MiB sub-buffer fills: the event is
 *     found in a stream file while the writer has written fewer than a
 *     sub-buffer's worth (the writer stops at the first sighting, or fails
 *     after a whole sub-buffer);
 *  2. UINT64_MAX (off): the same writer for 1.5 s leaves exactly one packet
 *     per written ring (nothing closed a packet early: no live period, no
 *     idle flush), whatever the load;
 *  3. a period below 10 ms or above 1 hour is refused (-EINVAL) and creates
 *     nothing.
 * Verdicts are conditions (what is in the files, how many packets), never
 * durations: load only delays the sighting in 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "tbtest.h"

TB_EVENT(live, beat, (u64, seq), (u64, magic))

#define MAGIC 0x7B1F3E5D2C4A6988ull
#define SB_SIZE (1u << 20)
/* a record is at least its 8-byte header and 16 bytes of payload */
#define PER_SB (SB_SIZE / 24)

/* 1 when the 8 bytes of MAGIC are in some stream file of dir (not metadata) */
static int magic_in_streams(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *de;
	uint64_t m = MAGIC;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		static unsigned char buf[1 << 16];
		size_t keep = 0;
		ssize_t n;
		while (!found && (n = read(fd, buf + keep, sizeof buf - keep)) > 0) {
			size_t len = keep + (size_t)n;
			found = memmem(buf, len, &m, sizeof m) != NULL;
			keep = len < 7 ? len : 7; /* a match across two reads */
			memmove(buf, buf + len - keep, keep);
		}
		close(fd);
	}
	closedir(d);
	return found;
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int start(const char *dir, uint64_t live_ns, struct tb_recorder **rec)
{
	struct tb_channel_opts ch = { .size = sizeof ch, .sb_size = SB_SIZE, .sb_count = 4,
				      .flush_period_ns = 3600000000000ull };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &ch,
				      .live_period_ns = live_ns };
	return tb_session_start(&so, dir, rec);
}

int main(void)
{
	char dir[512];
	struct tb_recorder *rec;

	/* 1. a live period of 20 ms shows an active ring's events */
	snprintf(dir, sizeof dir, "%s/live", tbt_tmpdir());
	int rc = start(dir, 20000000ull, &rec);
	if (rc == -ENOTSUP)
		SKIP("tb_session_start: %s", tb_errmsg());
	CHECK_RC(rc, 0);
	uint64_t seq = 0;
	int seen = 0;
	for (; seq < PER_SB && !seen; seq++) {
		tb_live_beat(seq, seq == 0 ? MAGIC : seq);
		nap_ms(1);
		if (seq % 16 == 15)
			seen = magic_in_streams(dir);
	}
	CHECK(seen, "the first event was not in the trace after %llu events (a sub-buffer holds >= %u): "
		    "the live period did not close the active ring's packet",
	      (unsigned long long)seq, PER_SB);
	printf("live 20 ms: first event visible after %llu events\n", (unsigned long long)seq);
	CHECK_RC(tb_session_stop(rec), 0);

	/* 2. off: no packet closed before the end */
	snprintf(dir, sizeof dir, "%s/off", tbt_tmpdir());
	CHECK_RC(start(dir, UINT64_MAX, &rec), 0);
	double t0 = now_s();
	for (seq = 0; now_s() - t0 < 1.5 && seq < PER_SB / 2; seq++) {
		tb_live_beat(seq, seq);
		nap_ms(1);
	}
	CHECK_RC(tb_session_stop(rec), 0);
	struct tb_reader *r;
	CHECK_RC(tb_reader_open(dir, NULL, &r), 0);
	size_t written_rings = 0;
	for (unsigned s = 0; s < tb_reader_nstreams(r); s++) {
		size_t np = tb_reader_npackets(r, s);
		CHECK(np <= 1, "live period off: stream %s has %zu packets, want 1 (a packet was closed early)",
		      tb_reader_stream_file(r, s), np);
		written_rings += np;
	}
	CHECK(written_rings >= 1, "live period off: no packet at all");
	tb_reader_close(r);
	printf("live off: %llu events in %zu packet(s), one per written ring\n", (unsigned long long)seq,
	       written_rings);

	/* 3. out of range */
	const uint64_t bad[] = { 1000000ull, 3600000000001ull };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(dir, sizeof dir, "%s/bad%u", tbt_tmpdir(), i);
		rec = NULL;
		CHECK_RC(start(dir, bad[i], &rec), -EINVAL);
		CHECK(rec == NULL, "a refused start returned a recorder");
		struct stat st;
		CHECK(stat(dir, &st) != 0, "a refused start created %s", dir);
		CHECK(strstr(tb_errmsg(), "live period") != NULL, "the error does not name the live period: %s",
		      tb_errmsg());
	}
	printf("ok\n");
	return 0;
}
