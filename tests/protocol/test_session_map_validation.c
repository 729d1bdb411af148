/* SPDX-License-Identifier: MIT */
/*
 * Session files: creation is safe (0600, O_EXCL, no symlinks, no unsafe
 * or symlinked directory, enough room), attach accepts a good file, and
 * every field of the map that could be corrupted is refused with the right
 * error and a message naming the field; the creator's uid in the header
 * must be the file's owner; timings from the map are clamped (a hostile
 * block timeout cannot make producers wait for ever); unlink never removes a
 * file that replaced the session file.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "core/format.h"
#include "core/view.h"
#include "tbtest.h"

static char good[512];

/* Copies the good session file, applies `poke` at `off`, tries to attach. */
static int attach_corrupt(size_t off, const void *poke, size_t n, const char *want_in_msg)
{
	char path[600];
	snprintf(path, sizeof path, "%s/corrupt", tbt_tmpdir());
	unlink(path);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 600 '%s'", good, path, path);
	CHECK(system(cmd) == 0);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pwrite(fd, poke, n, (off_t)off) == (ssize_t)n);
	close(fd);
	struct tb_session *s;
	int rc = tb_session_attach(path, 0, &s);
	if (rc == 0)
		tb_session_close(s);
	else if (want_in_msg)
		CHECK(strstr(tb_errmsg(), want_in_msg), "message '%s' should mention '%s'", tb_errmsg(), want_in_msg);
	return rc;
}

static void u32_at(size_t off, uint32_t v, int want, const char *msg)
{
	int rc = attach_corrupt(off, &v, 4, msg);
	CHECK(rc == want, "poke u32 %u at %zu: rc %d, wanted %d (%s)", v, off, rc, want, tb_errmsg());
}

static void u64_at(size_t off, uint64_t v, int want, const char *msg)
{
	int rc = attach_corrupt(off, &v, 8, msg);
	CHECK(rc == want, "poke u64 %llu at %zu: rc %d, wanted %d (%s)", (unsigned long long)v, off, rc, want,
	      tb_errmsg());
}

int main(void)
{
	const char *dir = tbt_tmpdir();
	struct tb_channel_opts co[2] = {
		{ .size = sizeof co[0], .name = "a", .sb_size = 8192, .sb_count = 4 },
		{ .size = sizeof co[1], .name = "b", .sb_size = 4096, .sb_count = 2, .mode = TB_OVERWRITE },
	};
	snprintf(good, sizeof good, "%s/good", dir);
	struct tb_session_opts so = { .size = sizeof so, .path = good, .ncpus = 3, .nchannels = 2, .channels = co };
	struct tb_session *s;
	CHECK_RC(tb_session_create(&so, &s), 0);

	/* created 0600, not followable, exclusive */
	struct stat st;
	CHECK(stat(good, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
	CHECK_EQ_U64(tb_session_ncpus(s), 3);
	CHECK_EQ_U64(tb_session_nchannels(s), 2);
	CHECK_RC(tb_session_channel(s, "b"), 1);
	CHECK_RC(tb_session_channel(s, "zz"), -ENOENT);
	tb_session_close(s);
	struct tb_session *s2;
	CHECK_RC(tb_session_create(&so, &s2), -EEXIST);

	/* a good file attaches, read-write and read-only */
	CHECK_RC(tb_session_attach(good, 0, &s), 0);
	tb_session_close(s);
	CHECK_RC(tb_session_attach(good, TB_ATTACH_READONLY, &s), 0);
	CHECK_RC(tb_session_set_events(s, 0, "*"), -EROFS);
	tb_session_close(s);

	/* bad options */
	struct tb_channel_opts bad = { .size = sizeof bad, .sb_size = 5000 };
	struct tb_session_opts bo = { .size = sizeof bo, .dir = dir, .nchannels = 1, .channels = &bad };
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	CHECK(strstr(tb_errmsg(), "5000"), "message names the value: %s", tb_errmsg());
	bad.sb_size = 4096;
	bad.sb_count = 3;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	bad.sb_count = 2;
	bad.name = "no spaces";
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	bad.name = NULL;
	bad.mode = 9;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	bad.mode = 0;
	bad.block_timeout_ns = TB_MAX_BLOCK_TIMEOUT_NS + 1;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	CHECK(strstr(tb_errmsg(), "block timeout"), "%s", tb_errmsg());
	bad.block_timeout_ns = 0;
	bad.flush_period_ns = TB_MAX_FLUSH_PERIOD_NS + 1;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);
	CHECK(strstr(tb_errmsg(), "flush period"), "%s", tb_errmsg());
	bad.flush_period_ns = 0;
	bo.size = 3;
	CHECK_RC(tb_session_create(&bo, &s), -EINVAL);

	/* an rseq session needs a ring per possible CPU */
	struct tb_session_opts one = { .size = sizeof one, .dir = dir, .ncpus = 1 };
	if (!tbt_fallback() && sysconf(_SC_NPROCESSORS_CONF) > 1) {
		CHECK_RC(tb_session_create(&one, &s), -EINVAL);
		CHECK(strstr(tb_errmsg(), "possible CPUs"), "%s", tb_errmsg());
	}

	/* not enough room: say how much is needed */
	struct tb_channel_opts huge = { .size = sizeof huge, .sb_size = 256u << 20, .sb_count = 4 };
	struct tb_session_opts ho = { .size = sizeof ho, .dir = dir, .ncpus = 400, .nchannels = 1, .channels = &huge };
	CHECK_RC(tb_session_create(&ho, &s), -ENOSPC);
	CHECK(strstr(tb_errmsg(), "MiB"), "ENOSPC message says how much: %s", tb_errmsg());

	/* unsafe directory: writable by others without the sticky bit */
	char unsafe[600];
	snprintf(unsafe, sizeof unsafe, "%s/unsafe", dir);
	CHECK(mkdir(unsafe, 0777) == 0 && chmod(unsafe, 0777) == 0);
	struct tb_session_opts uo = { .size = sizeof uo, .dir = unsafe };
	CHECK_RC(tb_session_create(&uo, &s), -EPERM);
	/* a session directory that is a symbolic link, even to a good directory:
	 * refused (it could be pointed elsewhere between the check and the use) */
	char dlink[600];
	snprintf(dlink, sizeof dlink, "%s/dirlink", dir);
	CHECK(symlink(dir, dlink) == 0);
	struct tb_session_opts lo = { .size = sizeof lo, .dir = dlink };
	CHECK_RC(tb_session_create(&lo, &s), -EPERM);
	CHECK(strstr(tb_errmsg(), "symbolic link"), "%s", tb_errmsg());
	char lpath[700];
	snprintf(lpath, sizeof lpath, "%s/s.tb", dlink);
	struct tb_session_opts lp = { .size = sizeof lp, .path = lpath };
	CHECK_RC(tb_session_create(&lp, &s), -EPERM);

	/* attach refuses: symlink, group-writable, another owner, not a session */
	char link[600];
	snprintf(link, sizeof link, "%s/link", dir);
	CHECK(symlink(good, link) == 0);
	CHECK_RC(tb_session_attach(link, 0, &s), -EPERM);
	chmod(good, 0620);
	CHECK_RC(tb_session_attach(good, 0, &s), -EPERM);
	chmod(good, 0600);
	if (geteuid() == 0) {
		CHECK(chown(good, 65534, 65534) == 0);
		CHECK_RC(tb_session_attach(good, 0, &s), -EPERM);
		CHECK(strstr(tb_errmsg(), "uid"), "%s", tb_errmsg());
		CHECK_RC(tb_session_attach(good, TB_ATTACH_ANY_OWNER, &s), 0);
		tb_session_close(s);
		CHECK(chown(good, 0, 0) == 0);
	}
	char small[600];
	snprintf(small, sizeof small, "%s/small", dir);
	int fd = open(small, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	close(fd);
	CHECK_RC(tb_session_attach(small, 0, &s), -EBADMSG);

	/* every corrupted map field */
	u64_at(offsetof(struct tb_map, magic), 0x1234, -EBADMSG, "magic");
	u32_at(offsetof(struct tb_map, version), 99, -EPROTO, "version");
	u32_at(offsetof(struct tb_map, hdr_size), 512, -EBADMSG, "header size");
	u32_at(offsetof(struct tb_map, protocol), 7, -EBADMSG, "protocol");
	u32_at(offsetof(struct tb_map, clock_kind), 9, -EBADMSG, "clock");
	u64_at(offsetof(struct tb_map, clock_freq), 5, -EBADMSG, "frequency");
	u64_at(offsetof(struct tb_map, file_size), 1ull << 40, -EBADMSG, "bytes");
	u32_at(offsetof(struct tb_map, nchannels), 0, -EBADMSG, "channel count");
	u32_at(offsetof(struct tb_map, nchannels), 99, -EBADMSG, "channel count");
	u32_at(offsetof(struct tb_map, ncpus), 4, -EBADMSG, NULL);
	u32_at(offsetof(struct tb_map, ncpus), 0xffffffff, -EBADMSG, NULL);
	u32_at(offsetof(struct tb_map, page_size), 12345, -EBADMSG, NULL);
	u64_at(offsetof(struct tb_map, ctl_off), 4096, -EBADMSG, "offsets");
	u64_at(offsetof(struct tb_map, rings_off), 8, -EBADMSG, "offsets");
	u64_at(offsetof(struct tb_map, reg_off), 1ull << 62, -EBADMSG, NULL);
	u64_at(offsetof(struct tb_map, proc_off), 0, -EBADMSG, NULL);
	size_t c0 = sizeof(struct tb_map);
	u64_at(c0 + offsetof(struct tb_chan_desc, sb_size), 4097, -EBADMSG, NULL);
	u64_at(c0 + offsetof(struct tb_chan_desc, sb_size), 16384, -EBADMSG, NULL);
	u32_at(c0 + offsetof(struct tb_chan_desc, sb_count), 3, -EBADMSG, NULL);
	u32_at(c0 + offsetof(struct tb_chan_desc, mode), 0, -EBADMSG, "mode");
	u32_at(c0 + offsetof(struct tb_chan_desc, attribution), 5, -EBADMSG, "attribution");
	u64_at(c0 + offsetof(struct tb_chan_desc, ring_size), 1, -EBADMSG, "ring size");
	u32_at(c0 + offsetof(struct tb_chan_desc, name), 0x2f2f2f2f, -EBADMSG, "name");
	/* the ring table must hold exactly the computed offsets */
	CHECK_RC(tb_session_attach(good, 0, &s), 0);
	size_t rt = (size_t)s->map->ring_table_off, reg = (size_t)s->map->reg_off, pt = (size_t)s->map->proc_off;
	tb_session_close(s);
	u64_at(rt + 8, 0, -EBADMSG, "ring of channel 0 CPU 1");
	u32_at(reg + offsetof(struct tb_registry, capacity), 7, -EBADMSG, "registry capacity");
	u32_at(pt + offsetof(struct tb_proc_table, capacity), 1, -EBADMSG, "process table");
	/* fields a validator does not need to trust still attach */
	u64_at(offsetof(struct tb_map, consumer_heartbeat_ns), 42, 0, NULL);

	/* the header's creator must be the file's owner (a copied or forged file) */
	u32_at(offsetof(struct tb_map, creator_uid), (uint32_t)geteuid() + 1, -EPERM, "created by uid");

	/* timings from the map are clamped, not trusted */
	char hostile[600];
	snprintf(hostile, sizeof hostile, "%s/corrupt", dir);
	uint64_t forever = UINT64_MAX;
	CHECK_RC(attach_corrupt(c0 + offsetof(struct tb_chan_desc, block_timeout_ns), &forever, 8, NULL), 0);
	fd = open(hostile, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, &forever, 8, (off_t)(c0 + offsetof(struct tb_chan_desc, flush_period_ns))) == 8);
	close(fd);
	CHECK_RC(tb_session_attach(hostile, 0, &s), 0);
	CHECK_EQ_U64(s->chan[0].block_timeout_ns, TB_MAX_BLOCK_TIMEOUT_NS);
	CHECK_EQ_U64(s->chan[0].flush_period_ns, TB_MAX_FLUSH_PERIOD_NS);
	CHECK_EQ_U64(s->chan[1].block_timeout_ns, 100000000ull); /* an untouched value stays */

	/* unlink removes the session file only while its name still names it */
	char moved[700];
	snprintf(moved, sizeof moved, "%s.moved", hostile);
	CHECK(rename(hostile, moved) == 0);
	fd = open(hostile, O_CREAT | O_WRONLY | O_EXCL, 0600); /* another file under the name */
	CHECK(fd >= 0);
	close(fd);
	CHECK_RC(tb_session_unlink(s), -ESTALE);
	CHECK(access(hostile, F_OK) == 0, "the other file must still be there");
	CHECK(rename(moved, hostile) == 0);
	CHECK_RC(tb_session_unlink(s), 0);
	CHECK(access(hostile, F_OK) != 0);
	tb_session_close(s);
	return 0;
}
