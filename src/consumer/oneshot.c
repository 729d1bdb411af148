/* SPDX-License-Identifier: MIT */
/*
 * oneshot.c - the one path that copies a session's rings to a trace
 * directory once, without a running recorder: `tracebuf snapshot`
 * (live rings, producers keep writing), `tracebuf recover` (a dead
 * application's file, read-only, completing a killed recorder's directory)
 * and the library's tb_snapshot().  See engine.h, struct tb_oneshot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "consumer/engine.h"

/* Creates the output directory (mkdir -p) unless it exists; *created says whether. */
int tb_output_dir(const char *dir, int *created)
{
	*created = 0;
	if (!dir || !*dir)
		return tb_fail(-EINVAL, "no output directory given");
	struct stat sb;
	if (stat(dir, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode))
			return tb_fail(-ENOTDIR, "output %s exists and is not a directory", dir);
		return 0;
	}
	if (errno != ENOENT)
		return tb_fail(-errno, "output directory %s: %s", dir, strerror(errno));
	/* mkdir -p: create missing parents too */
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return tb_fail(-ENAMETOOLONG, "output directory name too long: %s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return tb_fail(-errno, "cannot create %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return tb_fail(-errno, "cannot create output directory %s: %s", dir, strerror(errno));
	*created = 1;
	return 0;
}

/* 1: DIR/metadata names the session's trace uuid; 0: no metadata; -1: another trace's (or unreadable). */
static int metadata_of_session(const char *dir, const struct tb_session *s)
{
	char path[PATH_MAX + 16], buf[4096], want[64];
	snprintf(path, sizeof path, "%s/metadata", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	struct stat sb;
	ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, buf, sizeof buf - 1) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const uint8_t *u = s->uuid;
	snprintf(want, sizeof want, "uuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return strstr(buf, want) ? 1 : -1;
}

int tb_oneshot_run(struct tb_session *s, const char *outdir, struct tb_oneshot *o)
{
	int recover = o->how == TB_ONESHOT_RECOVER;
	memset(&o->st, 0, sizeof o->st);
	o->quiescent = 0;
	int created, rc = tb_output_dir(outdir, &created);
	if (rc < 0)
		return rc;
	/* recover completes the directory of a killed recorder of this
	 * session: its stream files are checked packet by packet (uuid,
	 * stream) by the engine; its metadata must name this session too */
	unsigned flags = TB_ENG_NO_FLUSHERS;
	if (recover) {
		flags |= TB_ENG_READONLY;
		if (!created) {
			if (metadata_of_session(outdir, s) < 0)
				return tb_fail(-EEXIST, "%s holds a trace of another session; give a new or empty directory",
					       outdir);
			flags |= TB_ENG_RESUME;
		}
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[4];
	unsigned n = 0;
	if (o->recorder)
		env[n++] = (struct tb_engine_env){ "recorder", o->recorder, 0 };
	env[n++] = (struct tb_engine_env){ "session_file", s->path, 0 };
	env[n++] = (struct tb_engine_env){ recover ? "recover_realtime_ns" : "snapshot_realtime_ns", NULL,
					   (int64_t)now.tv_sec * 1000000000 + now.tv_nsec };
	if (o->pid_env)
		env[n++] = (struct tb_engine_env){ "pid", NULL, getpid() };
	struct tb_engine_cfg cfg = { .flags = flags, .env = env, .nenv = n };
	struct tb_engine *e;
	rc = tb_engine_create(s, outdir, &cfg, &e);
	if (rc < 0) {
		if (created)
			rmdir(outdir);
		return rc;
	}
	/* processes of the session before the copy: alive, and ever attached
	 * (acquire pairs with the release store of count in tb_proc_register()) */
	/* this process counts too: an embedded tb_snapshot() copies rings its
	 * own threads write (a CLI never registered in the table) */
	uint32_t self = 0;
	unsigned live0 = tb_session_live_procs(s, self);
	uint32_t attached0 = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	rc = recover ? tb_engine_drain_dead(e) : tb_engine_snapshot(e);
	char msg[512];
	while (tb_engine_next_warning(e, msg, sizeof msg))
		if (o->warn)
			o->warn(o->warn_arg, msg);
	tb_engine_stats(e, -1, -1, &o->st);
	/* with no process of the session alive before and after the copy, and
	 * none attached meanwhile, nothing could reuse a sub-buffer during it
	 * (a full table does not see new processes) */
	o->quiescent = live0 == 0 && tb_session_live_procs(s, self) == 0 &&
		       __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE) == attached0 &&
		       attached0 < s->proc_capacity;
	if (rc < 0)
		rc = tb_fail(rc, "%s", tb_engine_errmsg(e));
	tb_engine_destroy(e);
	return rc < 0 ? rc : 0;
}
