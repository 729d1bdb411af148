/* SPDX-License-Identifier: MIT */
/*
 * session.c - session files once they exist: attach (ownership, mode, full
 * validation), the fast-path descriptors, close, unlink and the accessors of
 * the public session.h.  Creating one is create.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "core/view.h"
#include "platform/clock.h"
#include "ring/rseq.h"
#include "session/layout.h"
#include "session/registry.h"
#include "session/session_file.h"
#include "session/sigbus.h"

/* Splits `path` into its directory (into dir[PATH_MAX]) and its last component. */
const char *tb_split_path(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		memcpy(dir, ".", 2);
		return path;
	}
	if (slash == path) {
		memcpy(dir, "/", 2);
	} else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = 0;
	}
	return slash + 1;
}

int tb_map_file(int fd, uint64_t size, int readonly, uint8_t **out)
{
	void *p = mmap(NULL, size, readonly ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno > 0 ? -errno : -ENOMEM; /* never 0: the caller then uses *out */
	*out = p;
	return 0;
}

/* Zeroed memory for a session struct or its descriptors: calloc(), or with
 * `sigsafe` an anonymous mapping (async-signal-safe: a system call). */
static void *sess_alloc(size_t n, int sigsafe)
{
	if (!sigsafe)
		return calloc(1, n);
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void sess_free(void *p, size_t n, int sigsafe)
{
	if (!sigsafe)
		free(p);
	else if (p)
		munmap(p, n);
}

static void sess_free_struct(struct tb_session *s)
{
	if (s->fast)
		sess_free(s->fast, (size_t)s->nchannels * s->ncpus * sizeof *s->fast, s->sigsafe_alloc);
	sess_free(s, sizeof *s, s->sigsafe_alloc);
}

int tb_session_attach(const char *path, unsigned flags, struct tb_session **out)
{
	*out = NULL;
	if (!path || strlen(path) >= PATH_MAX)
		return tb_fail(-EINVAL, "no session path given");
	int ro = !!(flags & TB_ATTACH_READONLY);
	/* The file is opened relative to its directory, which stays open: a
	 * later tb_session_unlink() removes the name in that directory only,
	 * and only if it still names this file. */
	char dir[PATH_MAX];
	const char *name = tb_split_path(path, dir);
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return tb_fail(-errno, "cannot open the directory of session file %s: %s", path, strerror(errno));
	/* O_NONBLOCK: a FIFO named as a session must not hang a read-only open
	 * (refused below as not a regular file; no effect on a regular file) */
	int fd = openat(dfd, name, (ro ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		close(dfd);
		if (e == ELOOP)
			return tb_fail(-EPERM, "session file %s is a symbolic link; refusing to follow it", path);
		return tb_fail(-e, "cannot open session file %s: %s", path, strerror(e));
	}
	struct stat st;
	int rc;
	if (fstat(fd, &st) != 0) {
		rc = tb_fail(-errno, "cannot stat session file %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tb_fail(-EBADMSG, "%s is not a regular file: not a tracebuf session", path);
		goto fail;
	}
	if (!(flags & TB_ATTACH_ANY_OWNER) && st.st_uid != geteuid()) {
		rc = tb_fail(-EPERM, "session file %s belongs to uid %u, not to you (uid %u); refusing to attach", path,
			     st.st_uid, geteuid());
		goto fail;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		rc = tb_fail(-EPERM, "session file %s is writable by group or others (mode %o); refusing to attach", path,
			     st.st_mode & 0777);
		goto fail;
	}
	if ((uint64_t)st.st_size < sizeof(struct tb_map)) {
		rc = tb_fail(-EBADMSG, "%s is %lld bytes: too small to be a tracebuf session", path,
			     (long long)st.st_size);
		goto fail;
	}
	uint8_t *base = NULL;
	rc = tb_map_file(fd, (uint64_t)st.st_size, ro, &base);
	if (rc) {
		rc = tb_fail(rc, "cannot map session file %s: %s", path, strerror(-rc));
		goto fail;
	}
	int sigsafe = !!(flags & TB_ATTACH_SIGSAFE_);
	struct tb_session *s = sess_alloc(sizeof *s, sigsafe);
	if (!s) {
		munmap(base, (size_t)st.st_size);
		rc = tb_fail(-ENOMEM, "out of memory");
		goto fail;
	}
	rc = tb_map_validate(base, (uint64_t)st.st_size, s);
	s->sigsafe_alloc = sigsafe; /* after validate, which fills the struct */
	if (rc) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", tb_errmsg());
		tb_fail(rc, "session file %s: %s", path, msg);
		munmap(base, (size_t)st.st_size);
		sess_free_struct(s);
		goto fail;
	}
	/* The creator's uid in the header must be the owner of the file: a
	 * session made by tb_session_create() always is (created 0600 by its
	 * creator's euid); a file whose header names another uid was copied
	 * or forged.  One read, decided on the local copy. */
	uint32_t creator = __atomic_load_n(&s->map->creator_uid, __ATOMIC_RELAXED);
	if (!(flags & TB_ATTACH_ANY_OWNER) && creator != st.st_uid) {
		rc = tb_fail(-EPERM,
			     "session file %s says it was created by uid %u but belongs to uid %u (copied or forged); "
			     "refusing to attach",
			     path, creator, st.st_uid);
		munmap(base, (size_t)st.st_size);
		sess_free_struct(s);
		goto fail;
	}
	rc = tb_session_fast_init(s);
	if (rc) {
		munmap(base, (size_t)st.st_size);
		sess_free_struct(s);
		goto fail;
	}
	s->fd = fd;
	s->dirfd = dfd;
	s->readonly = ro;
	snprintf(s->path, sizeof s->path, "%s", path);
	/* A consumer (anything but the producers' automatic attach) survives
	 * the truncation of the file from here on; unguarded if that fails
	 * (64 mappings), as before. */
	if (!(flags & TB_ATTACH_NO_GUARD_))
		tb_session_guard(s);
	*out = s;
	return 0;
fail:
	close(fd);
	close(dfd);
	return rc;
}

int tb_session_fast_init(struct tb_session *s)
{
	s->fast = sess_alloc((size_t)s->nchannels * s->ncpus * sizeof *s->fast, s->sigsafe_alloc);
	if (!s->fast)
		return tb_fail(-ENOMEM, "out of memory for %u x %u ring descriptors", s->nchannels, s->ncpus);
	for (unsigned ch = 0; ch < s->nchannels; ch++)
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
			const struct tb_chan_view *cv = &s->chan[ch];
			struct tb_fast_ring *f = &s->fast[(size_t)ch * s->ncpus + cpu];
			f->ctl = tb_ctl_of(s, ch, cpu);
			f->data = tb_ring_of(s, ch, cpu) + cv->data_off;
			f->ring_mask = cv->ring_mask;
			f->sb_mask = cv->sb_size - 1;
			f->sb_size = cv->sb_size;
			f->kind = (cv->attribution == TB_ATTR_ESCAPE ? TB_FAST_ATTRIBUTION : 0u) |
				  (cv->vtid ? TB_FAST_VTID : 0u) |
				  (s->protocol != TB_PROTO_RSEQ || s->clock_kind != TB_CLOCK_TSC ? TB_FAST_OFF : 0u);
			f->max_payload = cv->max_payload;
		}
	s->rseq_off = __rseq_offset; /* process-wide, fixed by glibc at start-up */
	return 0;
}

void tb_session_close(struct tb_session *s)
{
	if (!s)
		return;
	if (__atomic_load_n(&s->pinned, __ATOMIC_RELAXED))
		return; /* a producer session stays mapped for the life of the process */
	tb_session_unguard(s); /* before the mapping goes */
	munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	sess_free_struct(s);
}

int tb_session_unlink(struct tb_session *s)
{
	if (s->dirfd < 0) {
		if (unlink(s->path) != 0)
			return tb_fail(-errno, "cannot remove session file %s: %s", s->path, strerror(errno));
		return 0;
	}
	/* The name, in the directory the file was created or opened in, must
	 * still be this file: never remove a file that replaced it. */
	const char *name = strrchr(s->path, '/');
	name = name ? name + 1 : s->path;
	struct stat now, ours;
	if (fstatat(s->dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return tb_fail(-errno, "cannot remove session file %s: %s", s->path, strerror(errno));
	if (s->fd >= 0 && fstat(s->fd, &ours) == 0 && (now.st_dev != ours.st_dev || now.st_ino != ours.st_ino))
		return tb_fail(-ESTALE, "session file %s was replaced by another file since it was opened; not removing it",
			       s->path);
	if (unlinkat(s->dirfd, name, 0) != 0)
		return tb_fail(-errno, "cannot remove session file %s: %s", s->path, strerror(errno));
	return 0;
}

const char *tb_session_path(const struct tb_session *s)
{
	return s->path;
}

unsigned tb_session_ncpus(const struct tb_session *s)
{
	return s->ncpus;
}

unsigned tb_session_nchannels(const struct tb_session *s)
{
	return s->nchannels;
}

int tb_session_channel(const struct tb_session *s, const char *name)
{
	for (unsigned c = 0; c < s->nchannels; c++)
		if (!strcmp(s->chan[c].name, name))
			return (int)c;
	return tb_fail(-ENOENT, "no channel named '%s'", name);
}

int tb_session_uses_rseq(const struct tb_session *s)
{
	return s->protocol == TB_PROTO_RSEQ;
}

const char *tb_session_channel_name(const struct tb_session *s, unsigned chan)
{
	return chan < s->nchannels ? s->chan[chan].name : NULL; /* validated at attach */
}

unsigned tb_session_nclasses(struct tb_session *s)
{
	return tb_registry_count(s);
}

_Static_assert(sizeof(((struct tb_class_info *)0)->name) == TB_NAME_MAX &&
		       sizeof(((struct tb_class_info *)0)->fields) / sizeof(struct tb_class_field) == TB_MAX_FIELDS &&
		       sizeof(((struct tb_class_field *)0)->name) == TB_FIELD_NAME_MAX &&
		       sizeof(((struct tb_class_info *)0)->labels) == TB_LABELS_MAX,
	       "struct tb_class_info (session.h) holds a registry entry (format.h)");

int tb_session_class(struct tb_session *s, unsigned id, struct tb_class_info *out)
{
	if (!out || out->size != sizeof *out)
		return tb_fail(-EINVAL, "struct tb_class_info: size %zu unknown (set .size = sizeof)", out ? out->size : 0);
	if (id >= tb_registry_count(s))
		return tb_fail(-EINVAL, "no event class %u (the session has %u)", id, tb_registry_count(s));
	struct tb_event_desc e;
	tb_class_read(s, id, &e);
	memset(out, 0, sizeof *out);
	out->size = sizeof *out;
	out->id = id;
	out->valid = e.state == 1;
	memcpy(out->name, e.name, sizeof out->name); /* NUL-terminated: checked or written by tb_class_read */
	out->nfields = e.nfields;
	for (unsigned f = 0; f < e.nfields; f++) {
		memcpy(out->fields[f].name, e.fields[f].name, sizeof out->fields[f].name);
		out->fields[f].type = e.fields[f].type;
		out->fields[f].max_len = e.fields[f].max_len;
	}
	memcpy(out->labels, e.labels, sizeof out->labels); /* checked by tb_class_read; "" when invalid */
	/* relaxed: a snapshot of the mask, read as producers read it */
	out->channels = __atomic_load_n(&s->reg->events[id].enabled, __ATOMIC_RELAXED);
	return 0;
}

int tb_session_ring_fill(struct tb_session *s, unsigned ch, unsigned cpu)
{
	if (ch >= s->nchannels || cpu >= s->ncpus)
		return tb_fail(-EINVAL, "no ring of channel %u and CPU %u (%u channels, %u CPUs)", ch, cpu,
			       s->nchannels, s->ncpus);
	/* relaxed: a display value */
	struct tb_ctl *c = tb_ctl_of(s, ch, cpu);
	uint64_t head = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
	uint64_t ring = s->chan[ch].sb_size * s->chan[ch].sb_count;
	uint64_t used = head - tail;
	if (s->chan[ch].mode == TB_MODE_OVERWRITE)
		used = head > ring ? ring : head;
	if (head < tail || used >= ring)
		return head < tail ? 0 : 1000;
	return (int)(used * 1000 / ring);
}

_Static_assert((int)TB_SESSION_ACTIVE == (int)TB_STATE_ACTIVE && (int)TB_SESSION_STOPPING == (int)TB_STATE_STOPPING &&
		       (int)TB_SESSION_STOPPED == (int)TB_STATE_STOPPED,
	       "TB_SESSION_* (session.h) are the file's TB_STATE_* (format.h)");

int tb_session_status(struct tb_session *s, struct tb_session_status *out)
{
	if (!out || out->size != sizeof *out)
		return tb_fail(-EINVAL, "struct tb_session_status: size %zu unknown (set .size = sizeof)",
			       out ? out->size : 0);
	struct tb_map *m = s->map;
	/* relaxed loads: informational values the consumer stores relaxed */
	uint32_t state = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
	uint64_t hb = __atomic_load_n(&m->consumer_heartbeat_ns, __ATOMIC_RELAXED);
	uint64_t now = tb_mono_ns(); /* the consumer's clock: CLOCK_MONOTONIC, every process */
	memset(out, 0, sizeof *out);
	out->size = sizeof *out;
	out->state = state >= TB_STATE_ACTIVE && state <= TB_STATE_STOPPED ? state : 0;
	out->consumer_pid = __atomic_load_n(&m->consumer_pid, __ATOMIC_RELAXED);
	out->consumer_seen_ns = hb && hb <= now ? now - hb : UINT64_MAX;
	out->live_processes = tb_session_live_procs(s, 0);
	return 0;
}

int tb_session_channel_info(const struct tb_session *s, unsigned chan, struct tb_channel_info *out)
{
	if (!out || out->size != sizeof *out)
		return tb_fail(-EINVAL, "struct tb_channel_info: size %zu unknown (set .size = sizeof)",
			       out ? out->size : 0);
	if (chan >= s->nchannels)
		return tb_fail(-EINVAL, "channel %u does not exist (%u channels)", chan, s->nchannels);
	const struct tb_chan_view *cv = &s->chan[chan]; /* validated at attach */
	memset(out, 0, sizeof *out);
	out->size = sizeof *out;
	_Static_assert(sizeof out->name >= TB_CHAN_NAME_MAX, "a channel name fits");
	memcpy(out->name, cv->name, TB_CHAN_NAME_MAX);
	out->mode = cv->mode;
	out->sb_size = cv->sb_size;
	out->sb_count = cv->sb_count;
	out->watermark = cv->watermark;
	out->flush_period_ns = cv->flush_period_ns;
	out->block_timeout_ns = cv->block_timeout_ns;
	out->attribution = cv->attribution == TB_ATTR_ESCAPE;
	out->vtid = cv->vtid != 0;
	return 0;
}

int tb_session_counters(struct tb_session *s, unsigned chan, int cpu, struct tb_counters *out)
{
	memset(out, 0, sizeof *out);
	if (chan >= s->nchannels || cpu >= (int)s->ncpus || cpu < -1)
		return tb_fail(-EINVAL, "channel %u / CPU %d out of range (%u channels, %u CPUs)", chan, cpu,
			       s->nchannels, s->ncpus);
	unsigned lo = cpu < 0 ? 0 : (unsigned)cpu, hi = cpu < 0 ? s->ncpus : (unsigned)cpu + 1;
	for (unsigned k = lo; k < hi; k++) {
		struct tb_ctl *c = tb_ctl_of(s, chan, k);
		/* Acquire on head pairs with the commit store of the critical
		 * sections: the state read after it is at least as new. */
		uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		uint64_t end = __atomic_load_n(&c->st_end, __ATOMIC_RELAXED);
		out->written += end == head ? __atomic_load_n(&c->cnt_after, __ATOMIC_RELAXED)
					    : __atomic_load_n(&c->cnt_before, __ATOMIC_RELAXED);
		out->lost_full += __atomic_load_n(&c->lost_full, __ATOMIC_RELAXED);
		out->lost_toobig += __atomic_load_n(&c->lost_toobig, __ATOMIC_RELAXED);
		out->lost_overwritten += __atomic_load_n(&c->lost_overwritten, __ATOMIC_RELAXED);
		out->lost_timeout += __atomic_load_n(&c->lost_timeout, __ATOMIC_RELAXED);
		out->lost_busy += __atomic_load_n(&c->lost_busy, __ATOMIC_RELAXED);
		out->lost_noconsumer += __atomic_load_n(&c->lost_nocons, __ATOMIC_RELAXED);
		out->truncated += __atomic_load_n(&c->truncated, __ATOMIC_RELAXED);
		out->switches += head ? head >> s->chan[chan].sb_shift : 0;
	}
	return 0;
}
