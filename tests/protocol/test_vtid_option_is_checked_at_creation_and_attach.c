/* SPDX-License-Identifier: MIT */
/*
 * The vtid channel option (tb_channel_opts.vtid, tb_chan_desc.vtid): a
 * value other than 0 or 1 is refused at creation (-EINVAL) and in a session
 * file by the attach validator (-EBADMSG, naming the field); a caller whose
 * struct tb_channel_opts ends before vtid (an older header) gets vtid off
 * whatever lies past its size; a good file with one channel of each kind
 * attaches and says which has it; a version-2 file is refused (-EPROTO);
 * and the records a vtid channel holds carry the writer's tid after their
 * header, from this thread and from others (the rings walked with the
 * consumer's validation walk, tests/lib/tbdecode.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/format.h"
#include "core/view.h"
#include "tbdecode.h"
#include "tbtest.h"

TB_EVENT(vt, who, (u32, tid), (u32, seq))

static char good[512];

static int attach_poked(size_t off, uint32_t v, const char *want_in_msg)
{
	char path[600], cmd[2048];
	snprintf(path, sizeof path, "%s/poked", tbt_tmpdir());
	unlink(path);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 600 '%s'", good, path, path);
	CHECK(system(cmd) == 0);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, &v, 4, (off_t)off) == 4);
	close(fd);
	struct tb_session *s;
	int rc = tb_session_attach(path, 0, &s);
	if (rc == 0)
		tb_session_close(s);
	else if (want_in_msg)
		CHECK(strstr(tb_errmsg(), want_in_msg), "message '%s' should mention '%s'", tb_errmsg(), want_in_msg);
	return rc;
}

#define NTHREADS 3
#define PER_THREAD 2000

static void *writer(void *arg)
{
	(void)arg;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		tb_vt_who(tid, i);
		if (i % 128 == 0)
			sched_yield(); /* let the other writers take this CPU's ring */
	}
	return NULL;
}

struct seen {
	uint64_t events[2], bad[2];
};

static void on_event(void *arg, const struct tbd_event *e)
{
	struct seen *w = arg;
	if (strcmp(e->name, "vt:who"))
		return;
	uint32_t tid;
	memcpy(&tid, e->payload, 4);
	w->events[e->ch]++;
	/* channel 0 has vtid: the record's tid is its writer's; channel 1 has
	 * none: 0 */
	if (e->ch == 0 ? e->vtid != tid : e->vtid != 0)
		w->bad[e->ch]++;
}

int main(void)
{
	const char *dir = tbt_tmpdir();
	struct tb_session *s;

	/* creation: 0 and 1 only */
	struct tb_channel_opts bad = { .size = sizeof bad, .vtid = 2 };
	struct tb_session_opts bo = { .size = sizeof bo, .dir = dir, .nchannels = 1, .channels = &bad };
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	CHECK(strstr(tb_errmsg(), "vtid"), "the message names the option: %s", tb_errmsg());
	bad.vtid = UINT32_MAX;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);

	/* a struct of the size before vtid: the bytes after it are not read */
	struct tb_channel_opts old = { .size = offsetof(struct tb_channel_opts, vtid), .vtid = 7 };
	bo.channels = &old;
	CHECK_RC(tb_session_create(&bo, &s), 0);
	struct tb_channel_info ci = { .size = sizeof ci };
	CHECK_RC(tb_session_channel_info(s, 0, &ci), 0);
	CHECK(ci.vtid == 0, "an old-size struct gets vtid off, got %d", ci.vtid);
	tb_session_unlink(s);
	tb_session_close(s);

	/* a good file: channel "v" with vtid, "p" without */
	struct tb_channel_opts co[2] = {
		{ .size = sizeof co[0], .name = "v", .sb_size = 8192, .sb_count = 64, .vtid = 1 },
		{ .size = sizeof co[1], .name = "p", .sb_size = 8192, .sb_count = 64 },
	};
	snprintf(good, sizeof good, "%s/good", dir);
	struct tb_session_opts so = { .size = sizeof so, .path = good, .nchannels = 2, .channels = co,
				      .force_fallback = tbt_fallback() };
	CHECK_RC(tb_session_create(&so, &s), 0);
	tb_session_close(s);
	CHECK_RC(tb_session_attach(good, 0, &s), 0);
	CHECK_RC(tb_session_channel_info(s, 0, &ci), 0);
	CHECK(ci.vtid == 1, "channel v has vtid");
	CHECK_RC(tb_session_channel_info(s, 1, &ci), 0);
	CHECK(ci.vtid == 0, "channel p has none");
	tb_session_close(s);

	/* the attach validator: the descriptor's vtid is 0 or 1 */
	size_t chan0 = sizeof(struct tb_map), vt = offsetof(struct tb_chan_desc, vtid);
	CHECK_RC(attach_poked(chan0 + vt, 2, "vtid"), -EBADMSG);
	CHECK_RC(attach_poked(chan0 + sizeof(struct tb_chan_desc) + vt, 0x80000001u, "channel 1: vtid"), -EBADMSG);
	CHECK_RC(attach_poked(chan0 + sizeof(struct tb_chan_desc) + vt, 1, NULL), 0);
	CHECK_RC(attach_poked(chan0 + vt, 0, NULL), 0);
	/* a format-2 file (no vtid field) is not read as format 3 */
	CHECK_RC(attach_poked(offsetof(struct tb_map, version), 2, "version 2"), -EPROTO);

	/* the records: this thread and NTHREADS others write to both channels */
	CHECK_RC(tb_session_attach(good, 0, &s), 0);
	CHECK_RC(tb_producer_use(s), 0);
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, writer, NULL) == 0);
	writer(NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_RC(tb_producer_use(NULL), 0);
	struct seen w = { { 0, 0 }, { 0, 0 } };
	struct tbd d;
	CHECK(tbd_init(&d, s, on_event, &w) == 0);
	tbd_finish(&d);
	CHECK(d.bad_packets == 0 && d.cut_records == 0, "%llu bad packets, %llu cut (%s)",
	      (unsigned long long)d.bad_packets, (unsigned long long)d.cut_records, d.first_error);
	uint64_t want = (uint64_t)(NTHREADS + 1) * PER_THREAD;
	CHECK_EQ_U64(w.events[0], want);
	CHECK_EQ_U64(w.events[1], want);
	CHECK(w.bad[0] == 0, "%llu events of the vtid channel carry another tid than their writer's",
	      (unsigned long long)w.bad[0]);
	CHECK(w.bad[1] == 0, "%llu events of the plain channel carry a vtid", (unsigned long long)w.bad[1]);
	tbd_fini(&d);
	tb_session_unlink(s);
	tb_session_close(s);
	return 0;
}
