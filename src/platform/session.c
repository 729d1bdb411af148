/* SPDX-License-Identifier: MIT */
/*
 * session.c - session files: create (0600, O_EXCL|O_NOFOLLOW, safe
 * directory, enough room), attach (ownership, mode, full validation), close.
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

#include "core/layout.h"
#include "core/registry.h"
#include "core/session_impl.h"
#include "platform/clock.h"
#include "platform/rseq.h"
#include "platform/sigbus.h"

#define DEF_SB_SIZE (256u << 10)
/*
 * Default ring of a channel, per CPU: 16 MiB (~500,000 events of 32 bytes:
 * a burst a full-speed producer writes in ~0.3 s, absorbed while the
 * consumer waits for a CPU), halved down to 2 MiB while all the rings that
 * can be written at once would exceed 128 MiB (a machine with many CPUs).
 * Rings are sparse: a page is allocated when first written, so a CPU that
 * never runs a producer costs nothing, and a short program only what it
 * wrote.  docs/RECORDER.md, "Ring sizes".
 */
#define DEF_RING_MAX (16ull << 20)
#define DEF_RING_MIN (2ull << 20)
#define DEF_RINGS_TOTAL (128ull << 20)

static uint32_t default_sb_count(uint64_t sb_size, uint32_t rings)
{
	uint64_t ring = DEF_RING_MAX;
	while (ring > DEF_RING_MIN && ring * rings > DEF_RINGS_TOTAL)
		ring /= 2;
	uint64_t n = ring / sb_size;
	uint32_t count = 2;
	while ((uint64_t)count * 2 <= n && count < TB_MAX_SB_COUNT)
		count *= 2;
	return count;
}
#define DEF_MAX_EVENTS 256u

static int env_true(const char *name)
{
	const char *e = getenv(name);
	return e && *e && strcmp(e, "0") != 0;
}

/*
 * Opens the session directory and checks it through the descriptor, which
 * the caller then uses for every operation on the file (openat, renameat2,
 * unlinkat): the directory checked is the directory used, whatever happens
 * to its path meanwhile.  The directory itself must not be a symbolic link
 * (O_NOFOLLOW: a link can be pointed elsewhere at any time; give the real
 * path).  Refused: writable by group or others without the sticky bit
 * (others could swap our file), owned by anybody but us or root.
 */
static int open_dir(const char *dir, int *out)
{
	*out = -1;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		struct stat lst;
		if ((e == ENOTDIR || e == ELOOP) && lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
			return tb_fail(-EPERM,
				       "session directory %s is a symbolic link; give the directory it points to (a link "
				       "can be swapped between the check and the use)",
				       dir);
		if (e == ENOTDIR)
			return tb_fail(-ENOTDIR, "session directory %s is not a directory", dir);
		return tb_fail(-e, "session directory %s: %s; create it or set TRACEBUF_SHM_DIR", dir, strerror(e));
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0)
		rc = tb_fail(-errno, "session directory %s: %s", dir, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = tb_fail(-ENOTDIR, "session directory %s is not a directory", dir);
	else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		rc = tb_fail(-EPERM,
			     "session directory %s is writable by others without the sticky bit (mode %o); use a private directory",
			     dir, st.st_mode & 07777);
	else if (st.st_uid != geteuid() && st.st_uid != 0)
		rc = tb_fail(-EPERM, "session directory %s belongs to uid %u, not to us (%u) or root", dir, st.st_uid,
			     geteuid());
	if (rc) {
		close(fd);
		return rc;
	}
	*out = fd;
	return 0;
}

/* Splits `path` into its directory (into dir[PATH_MAX]) and its last component. */
static const char *split_path(const char *path, char *dir)
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

static void random_bytes(uint8_t *p, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	if (fd >= 0) {
		while (got < n) {
			ssize_t r = read(fd, p + got, n - got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		close(fd);
	}
	if (got < n) { /* weak but unique enough for file names */
		uint64_t x = tb_mono_ns() ^ ((uint64_t)getpid() << 32);
		for (size_t i = got; i < n; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			p[i] = (uint8_t)(x >> 56);
		}
	}
}

static uint32_t possible_cpus(void)
{
	/* "0-63", "0", or a list such as "0-3,8-11": the highest CPU + 1 */
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256];
	uint32_t n = 0;
	if (f && fgets(line, sizeof line, f)) {
		for (char *p = line, *end; *p >= '0' && *p <= '9'; p = end + 1) {
			unsigned long v = strtoul(p, &end, 10);
			if (v < 65536 && v + 1 > n)
				n = (uint32_t)v + 1;
			if (*end != '-' && *end != ',')
				break;
		}
	}
	if (f)
		fclose(f);
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_CONF);
		n = c > 0 ? (uint32_t)c : 1;
	}
	return n;
}

static int map_file(int fd, uint64_t size, int readonly, uint8_t **out)
{
	void *p = mmap(NULL, size, readonly ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return errno > 0 ? -errno : -ENOMEM; /* never 0: the caller then uses *out */
	*out = p;
	return 0;
}

int tb_session_create(const struct tb_session_opts *o, struct tb_session **out)
{
	struct tb_session_opts opts;
	memset(&opts, 0, sizeof opts);
	if (o) {
		if (o->size < offsetof(struct tb_session_opts, force_fallback) || o->size > sizeof opts)
			return tb_fail(-EINVAL, "struct tb_session_opts: size %zu unknown (set .size = sizeof)", o->size);
		memcpy(&opts, o, o->size);
	}
	*out = NULL;
	struct tb_channel_opts defchan = { .size = sizeof defchan };
	const struct tb_channel_opts *chans = opts.channels;
	uint32_t nch = opts.nchannels;
	if (!nch || !chans) {
		nch = 1;
		chans = &defchan;
	}
	if (nch > TB_MAX_CHANNELS)
		return tb_fail(-EINVAL, "%u channels requested, at most %u", nch, TB_MAX_CHANNELS);

	struct tb_layout_params p;
	memset(&p, 0, sizeof p);
	p.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	int fallback = opts.force_fallback || env_true("TRACEBUF_NO_RSEQ") || tb_rseq_cpu() < 0;
	/* Fallback sessions get 8 slots per CPU: a writer preempted while it
	 * owns a slot must not make the others drop (docs/DESIGN.md). */
	if (!fallback && opts.ncpus && opts.ncpus < possible_cpus())
		return tb_fail(-EINVAL,
			       "ncpus = %u: an rseq session needs a ring for each of the %u possible CPUs (leave ncpus 0)",
			       opts.ncpus, possible_cpus());
	p.ncpus = opts.ncpus ? opts.ncpus : possible_cpus() * (fallback ? 8u : 1u);
	if (p.ncpus > TB_MAX_CPUS)
		p.ncpus = TB_MAX_CPUS;
	/* the rings that can be written at once: one per online CPU, or every
	 * slot of a fallback session */
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t rings = fallback || online < 1 || (uint64_t)online > p.ncpus ? p.ncpus : (uint32_t)online;
	p.nchannels = nch;
	p.max_events = opts.max_events ? opts.max_events : DEF_MAX_EVENTS;
	struct tb_chan_desc cd[TB_MAX_CHANNELS];
	memset(cd, 0, sizeof cd);
	for (unsigned c = 0; c < nch; c++) {
		const struct tb_channel_opts *co = &chans[c];
		if (co->size < offsetof(struct tb_channel_opts, events) || co->size > sizeof(struct tb_channel_opts))
			return tb_fail(-EINVAL, "channel %u: struct tb_channel_opts size %zu unknown", c, co->size);
		const char *name = co->name ? co->name : (nch == 1 ? "chan" : NULL);
		char buf[TB_CHAN_NAME_MAX];
		if (!name) {
			snprintf(buf, sizeof buf, "chan%u", c);
			name = buf;
		}
		if (strlen(name) >= sizeof cd[c].name || !tb_valid_chan_name(name, strlen(name) + 1))
			return tb_fail(-EINVAL, "channel name '%s' must be 1-31 characters of [A-Za-z0-9_-]", name);
		for (unsigned d = 0; d < c; d++)
			if (!strcmp(cd[d].name, name))
				return tb_fail(-EINVAL, "two channels are named '%s'", name);
		memcpy(cd[c].name, name, strlen(name) + 1); /* 1..31 characters, checked above */
		cd[c].sb_size = co->sb_size ? co->sb_size : DEF_SB_SIZE;
		cd[c].sb_count = co->sb_count ? co->sb_count : default_sb_count(cd[c].sb_size, rings);
		cd[c].mode = co->mode ? co->mode : TB_MODE_DISCARD;
		if (cd[c].mode > TB_MODE_BLOCK)
			return tb_fail(-EINVAL, "channel '%s': mode %u is not discard(1), overwrite(2) or block(3)", name,
				       cd[c].mode);
		cd[c].attribution = co->no_attribution ? TB_ATTR_NONE : TB_ATTR_ESCAPE;
		cd[c].watermark = co->watermark ? co->watermark : 1;
		cd[c].block_timeout_ns = co->block_timeout_ns ? co->block_timeout_ns : 100000000ull;
		cd[c].flush_period_ns = co->flush_period_ns ? co->flush_period_ns : 1000000000ull;
		if (cd[c].block_timeout_ns > TB_MAX_BLOCK_TIMEOUT_NS)
			return tb_fail(-EINVAL, "channel '%s': block timeout %" PRIu64 " ns is above the maximum, %llu s",
				       name, cd[c].block_timeout_ns, TB_MAX_BLOCK_TIMEOUT_NS / 1000000000ull);
		if (cd[c].flush_period_ns > TB_MAX_FLUSH_PERIOD_NS)
			return tb_fail(-EINVAL, "channel '%s': flush period %" PRIu64 " ns is above the maximum, %llu s",
				       name, cd[c].flush_period_ns, TB_MAX_FLUSH_PERIOD_NS / 1000000000ull);
		const char *ev = co->events ? co->events : "*";
		if (strlen(ev) >= sizeof cd[c].events)
			return tb_fail(-EINVAL, "channel '%s': event patterns longer than %zu bytes", name,
				       sizeof cd[c].events - 1);
		memcpy(cd[c].events, ev, strlen(ev) + 1); /* length checked above */
		p.sb_size[c] = cd[c].sb_size;
		p.sb_count[c] = cd[c].sb_count;
	}
	struct tb_layout l;
	int rc = tb_layout_compute(&p, &l);
	if (rc)
		return rc;
	for (unsigned c = 0; c < nch; c++) {
		cd[c].ring_size = l.ring_size[c];
		cd[c].data_off = l.data_off[c];
	}

	uint32_t clock_kind = (!opts.force_monotonic && !env_true("TRACEBUF_CLOCK_MONOTONIC") && tb_tsc_usable())
				      ? TB_CLOCK_TSC
				      : TB_CLOCK_MONOTONIC;

	struct tb_session *s = calloc(1, sizeof *s);
	if (!s)
		return tb_fail(-ENOMEM, "out of memory");
	s->fd = -1;
	s->dirfd = -1;
	uint8_t uuid[16];
	random_bytes(uuid, sizeof uuid);
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* RFC 4122 version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);

	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	const char *name;
	tmp[0] = 0;
	if (opts.path) {
		if (strlen(opts.path) >= sizeof s->path) {
			free(s);
			return tb_fail(-ENAMETOOLONG, "session path too long");
		}
		memcpy(s->path, opts.path, strlen(opts.path) + 1); /* length checked above */
		name = split_path(s->path, dir);
	} else {
		const char *d = opts.dir ? opts.dir : getenv("TRACEBUF_SHM_DIR");
		if (!d || !*d)
			d = "/dev/shm";
		snprintf(dir, sizeof dir, "%s", d);
		snprintf(s->path, sizeof s->path, "%s/tracebuf-%d-%02x%02x%02x%02x", d, (int)getpid(), uuid[0], uuid[1],
			 uuid[2], uuid[3]);
		name = strrchr(s->path, '/') + 1;
	}
	/* From here on the file is only ever reached relative to s->dirfd. */
	rc = open_dir(dir, &s->dirfd);
	if (rc)
		goto fail;
	struct statvfs vfs;
	if (fstatvfs(s->dirfd, &vfs) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (avail < l.file_size) {
			rc = tb_fail(-ENOSPC,
				     "%s has %" PRIu64 " MiB free, the session needs %" PRIu64
				     " MiB (%u CPUs x rings); choose smaller or fewer sub-buffers, fewer CPUs, or another directory (TRACEBUF_SHM_DIR)",
				     dir, avail >> 20, (l.file_size + (1 << 20) - 1) >> 20, p.ncpus);
			goto fail;
		}
	}
	/* Created under a temporary name and renamed when complete, so that
	 * nobody can attach to a half-written file; O_EXCL on both names. */
	struct stat exist;
	if (!*name || fstatat(s->dirfd, name, &exist, AT_SYMLINK_NOFOLLOW) == 0) {
		rc = *name ? tb_fail(-EEXIST, "session file %s already exists", s->path)
			   : tb_fail(-EINVAL, "session path %s names a directory, not a file", s->path);
		goto fail;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp-%02x%02x%02x%02x", name, uuid[4], uuid[5], uuid[6], uuid[7]);
	s->fd = openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		rc = tb_fail(-errno, "cannot create session file %s/%s: %s", dir, tmp, strerror(errno));
		goto fail;
	}
	if (ftruncate(s->fd, (off_t)l.file_size) != 0) {
		rc = tb_fail(-errno, "cannot size session file %s to %" PRIu64 " bytes: %s", s->path, l.file_size,
			     strerror(errno));
		goto fail_unlink;
	}
	uint8_t *base = NULL;
	rc = map_file(s->fd, l.file_size, 0, &base);
	if (rc) {
		rc = tb_fail(rc, "cannot map session file %s: %s", s->path, strerror(-rc));
		goto fail_unlink;
	}

	/* Fill everything but the magic; the rings stay untouched (sparse). */
	struct tb_map *m = (struct tb_map *)base;
	/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): map_file() set base, it returned 0 */
	m->version = TB_FORMAT_VERSION;
	m->hdr_size = sizeof *m;
	m->page_size = p.page_size;
	m->ncpus = p.ncpus;
	m->nchannels = nch;
	m->protocol = fallback ? TB_PROTO_FALLBACK : TB_PROTO_RSEQ;
	m->file_size = l.file_size;
	memcpy(m->uuid, uuid, 16);
	m->creator_uid = geteuid();
	m->creator_pid = (uint32_t)getpid();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	m->created_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	struct tb_clock_calib cal;
	tb_clock_calibrate(clock_kind, &cal);
	m->clock_kind = cal.kind;
	m->clock_freq = cal.freq;
	m->clock_offset_ns = cal.offset_ns;
	m->clock_mono_offset_ns = cal.mono_offset_ns;
	m->chan_off = l.chan_off;
	m->ctl_off = l.ctl_off;
	m->ring_table_off = l.ring_table_off;
	m->reg_off = l.reg_off;
	m->proc_off = l.proc_off;
	m->rings_off = l.rings_off;
	m->state = TB_STATE_ACTIVE;
	memcpy(base + l.chan_off, cd, nch * sizeof cd[0]);
	uint64_t *rtab = (uint64_t *)(base + l.ring_table_off);
	for (unsigned c = 0; c < nch; c++)
		for (unsigned cpu = 0; cpu < p.ncpus; cpu++)
			rtab[(uint64_t)c * p.ncpus + cpu] = tb_layout_ring_off(&p, &l, c, cpu);
	struct tb_registry *reg = (struct tb_registry *)(base + l.reg_off);
	reg->capacity = p.max_events;
	rc = tb_registry_init(reg);
	if (rc) {
		munmap(base, l.file_size);
		goto fail_unlink;
	}
	struct tb_proc_table *pt = (struct tb_proc_table *)(base + l.proc_off);
	pt->capacity = TB_MAX_PROCS;
	/* Publish: an attacher that sees the magic sees everything above
	 * (pairs with the copy of the header in tb_map_validate, which runs
	 * after the attacher's mmap: a fresh mapping of the same page). */
	__atomic_store_n(&m->magic, TB_MAP_MAGIC, __ATOMIC_RELEASE);

	rc = tb_map_validate(base, l.file_size, s);
	if (rc) { /* cannot happen: our own layout */
		munmap(base, l.file_size);
		goto fail_unlink;
	}
	rc = tb_registry_builtin(s);
	if (!rc)
		rc = tb_session_fast_init(s);
	if (!rc && renameat2(s->dirfd, tmp, s->dirfd, name, RENAME_NOREPLACE) != 0) {
		int e = errno;
		if (e == EINVAL || e == ENOSYS) { /* file system without RENAME_NOREPLACE */
			e = linkat(s->dirfd, tmp, s->dirfd, name, 0) == 0 ? 0 : errno;
			if (!e)
				unlinkat(s->dirfd, tmp, 0);
		}
		if (e)
			rc = tb_fail(-e, "cannot publish session file %s: %s", s->path, strerror(e));
	}
	if (rc) {
		munmap(base, l.file_size);
		free(s->fast);
		goto fail_unlink;
	}
	*out = s;
	return 0;

fail_unlink:
	unlinkat(s->dirfd, tmp, 0);
fail:
	if (s->fd >= 0)
		close(s->fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
	return rc;
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
	const char *name = split_path(path, dir);
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
	rc = map_file(fd, (uint64_t)st.st_size, ro, &base);
	if (rc) {
		rc = tb_fail(rc, "cannot map session file %s: %s", path, strerror(-rc));
		goto fail;
	}
	struct tb_session *s = calloc(1, sizeof *s);
	if (!s) {
		munmap(base, (size_t)st.st_size);
		rc = tb_fail(-ENOMEM, "out of memory");
		goto fail;
	}
	rc = tb_map_validate(base, (uint64_t)st.st_size, s);
	if (rc) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", tb_errmsg());
		tb_fail(rc, "session file %s: %s", path, msg);
		munmap(base, (size_t)st.st_size);
		free(s);
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
		free(s);
		goto fail;
	}
	rc = tb_session_fast_init(s);
	if (rc) {
		munmap(base, (size_t)st.st_size);
		free(s);
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
	s->fast = calloc((size_t)s->nchannels * s->ncpus, sizeof *s->fast);
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
			f->attribution = cv->attribution == TB_ATTR_ESCAPE;
		}
	return 0;
}

void tb_session_close(struct tb_session *s)
{
	if (!s)
		return;
	if (tb_producer_session() == s || s->retired)
		return; /* a producer session stays mapped for the life of the process */
	tb_session_unguard(s); /* before the mapping goes */
	munmap(s->base, s->size);
	free(s->fast);
	if (s->fd >= 0)
		close(s->fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s);
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
