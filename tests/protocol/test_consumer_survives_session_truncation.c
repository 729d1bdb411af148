/* SPDX-License-Identifier: MIT */
/*
 * test_consumer_survives_session_truncation - a process of the same uid
 * truncates the session file while a consumer has it mapped; the consumer
 * (recorder drain thread and flushers, recover's dead-ring drain, snapshot)
 * must not die of SIGBUS: it reports the damage (error -EIO whose message
 * says "truncated" and names the file), stops taking anything from the
 * session, and finishes the trace with what it had written before, which
 * stays readable (metadata kept, whole packets, every event decodable).
 * Without the guard of src/session/sigbus.c, this program dies of SIGBUS.
 *
 * Part A, live: a producer process writes; the recorder engine (drain
 * thread + pinned flushers) drains; once packets are on disk the file is cut
 * to its map area (every ring lost) and then the engine finishes.
 * Part B, read-only (recover) and snapshot: a quiescent session with data,
 * attached read-only; the file is cut (to its map area, or to 0 bytes: the
 * header itself lost) before tb_engine_drain_dead / tb_engine_snapshot.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "consumer/engine.h"
#include "core/view.h"
#include "tbtest.h"

TB_EVENT(tr, ev, (u64, seq))

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* The truncation, as any process of the same uid can do it. */
static void cut_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %s", path, strerror(errno));
	CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate: %s", strerror(errno));
	close(fd);
}

/* Reads the trace back: every packet whole, every event decodable; returns tr:ev events. */
static uint64_t read_back(const char *dir, uint64_t *ndiag)
{
	struct tb_reader *r;
	int rc = tb_reader_open(dir, NULL, &r);
	CHECK(rc == 0, "the trace %s must stay readable: %d %s", dir, rc, tb_errmsg());
	uint64_t n = 0;
	const struct tb_rd_event *ev;
	while (tb_reader_next(r, &ev) == 1)
		if (tb_rd_kind(ev) == TB_RD_EVENT && !strcmp(tb_rd_name(ev), "tr:ev"))
			n++;
	*ndiag = tb_reader_ndiags(r);
	for (uint64_t i = 0; i < *ndiag; i++)
		fprintf(stderr, "reader: %s\n", tb_reader_diag(r, i)->what);
	tb_reader_close(r);
	return n;
}

static void part_live(void)
{
	char path[512], out[512];
	snprintf(path, sizeof path, "%s/live.tb", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/live-trace", tbt_tmpdir());
	CHECK(mkdir(out, 0755) == 0);
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 4096, .sb_count = 8,
				      .flush_period_ns = 5000000 };
	struct tb_session_opts so = { .size = sizeof so, .path = path, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	uint64_t rings_off = s->map->rings_off, full = s->size;

	/* the producer: another process, attached by path like an application */
	pid_t kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		struct tb_session *ps;
		if (tb_session_attach(path, 0, &ps) != 0 || tb_producer_use(ps) != 0)
			_exit(3);
		for (uint64_t i = 0;; i++) {
			tb_tr_ev(i);
			if (i % 64 == 63)
				usleep(100);
		}
	}

	struct tb_engine *e;
	CHECK_RC(tb_engine_create(s, out, NULL, &e), 0);
	CHECK_RC(tb_engine_start(e), 0);
	struct tb_stream_stats st;
	for (int i = 0; i < 6000; i++) { /* bounded wait: 60 s */
		tb_engine_stats(e, -1, -1, &st);
		if (st.packets >= 8)
			break;
		sleep_ms(10);
	}
	CHECK(st.packets >= 8, "the recorder took %" PRIu64 " packets in 60 s: the producer does not write",
	      st.packets);
	uint64_t before = st.packets;

	cut_file(path, rings_off); /* every ring gone, the map area kept */
	int err = 0;
	for (int i = 0; i < 6000 && !err; i++) { /* the producer keeps writing: the drain meets the hole */
		err = tb_engine_error(e);
		if (!err)
			sleep_ms(10);
	}
	CHECK(err == -EIO, "the recorder did not report the truncation in 60 s (error %d: %s)", err,
	      tb_engine_errmsg(e));
	kill(kid, SIGKILL);
	int wst;
	CHECK(waitpid(kid, &wst, 0) == kid);
	CHECK(!(WIFEXITED(wst) && WEXITSTATUS(wst) == 3), "the producer could not attach");

	int rc = tb_engine_finish(e, TB_FINISH_DEAD);
	const char *msg = tb_engine_errmsg(e);
	printf("live: %" PRIu64 " packets before the cut; finish: %d: %s\n", before, rc, msg);
	CHECK(rc == -EIO, "finish returned %d", rc);
	CHECK(strstr(msg, "truncated") && strstr(msg, path), "the message must say what happened to which file: %s",
	      msg);
	char w[300];
	while (tb_engine_next_warning(e, w, sizeof w))
		printf("  warning: %s\n", w);
	tb_engine_stats(e, -1, -1, &st);
	CHECK(st.packets >= before, "packets %" PRIu64 " < %" PRIu64, st.packets, before);
	tb_engine_destroy(e);
	tb_session_close(s);

	uint64_t ndiag;
	uint64_t got = read_back(out, &ndiag);
	printf("live: trace on disk: %" PRIu64 " packets, %" PRIu64 " events (descriptors say %" PRIu64
	       "), %" PRIu64 " dropped after the cut; file was %" PRIu64 " bytes, cut to %" PRIu64 "\n",
	       st.packets, got, st.events, st.dropped, full, rings_off);
	CHECK_EQ_U64(ndiag, 0);
	CHECK_EQ_U64(got, st.events);
	CHECK(got > 0);
}

enum op { OP_DEAD, OP_SNAPSHOT };

static void part_quiescent(const char *tag, uint32_t mode, enum op op, int cut_all)
{
	char path[512], out[512];
	snprintf(path, sizeof path, "%s/%s.tb", tbt_tmpdir(), tag);
	snprintf(out, sizeof out, "%s/%s-trace", tbt_tmpdir(), tag);
	CHECK(mkdir(out, 0755) == 0);
	struct tb_channel_opts co = { .size = sizeof co, .name = "c", .sb_size = 4096, .sb_count = 4, .mode = mode };
	struct tb_session_opts so = { .size = sizeof so, .path = path, .nchannels = 1, .channels = &co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	for (uint64_t i = 0; i < 2000; i++)
		tb_tr_ev(i);
	CHECK_RC(tb_producer_use(NULL), 0); /* this process writes no more: its own mapping is not guarded */
	uint64_t rings_off = s->map->rings_off;

	struct tb_session *rs;
	CHECK_RC(tb_session_attach(path, TB_ATTACH_READONLY, &rs), 0);
	struct tb_engine_cfg cfg = { .flags = TB_ENG_NO_FLUSHERS | TB_ENG_READONLY };
	struct tb_engine *e;
	CHECK_RC(tb_engine_create(rs, out, &cfg, &e), 0);
	cut_file(path, cut_all ? 0 : rings_off);
	int rc = op == OP_DEAD ? tb_engine_drain_dead(e) : tb_engine_snapshot(e);
	const char *msg = tb_engine_errmsg(e);
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	printf("%s: %s after a cut to %" PRIu64 " bytes: %d: %s; %" PRIu64 " packets written, %" PRIu64
	       " dropped\n",
	       tag, op == OP_DEAD ? "drain_dead (recover)" : "snapshot", cut_all ? 0 : rings_off, rc, msg, st.packets,
	       st.dropped);
	CHECK(rc == -EIO, "returned %d", rc);
	CHECK(strstr(msg, "truncated") && strstr(msg, path), "%s", msg);
	CHECK_EQ_U64(st.packets, 0); /* nothing was readable: nothing written, nothing invented */
	tb_engine_destroy(e);
	tb_session_close(rs);
	tb_session_close(s);
}

int main(void)
{
	part_live();
	part_quiescent("dead-rings", TB_DISCARD, OP_DEAD, 0);
	part_quiescent("dead-all", TB_DISCARD, OP_DEAD, 1);
	part_quiescent("snap-rings", TB_OVERWRITE, OP_SNAPSHOT, 0);
	part_quiescent("snap-all", TB_OVERWRITE, OP_SNAPSHOT, 1);
	printf("PASS\n");
	return 0;
}
