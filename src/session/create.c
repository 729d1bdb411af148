/* SPDX-License-Identifier: MIT */
/*
 * create.c - creating a session file (0600, O_EXCL|O_NOFOLLOW, safe
 * directory, enough room), in the named steps of tb_session_create().
 * Attaching, closing and the accessors are session.c.
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


/*
 * tb_session_create, in steps.  Every refusal that does not need the file
 * system (options, sizes, layout) is made by plan_session() before anything
 * exists; then the file is named, its directory checked, it is created under
 * a temporary name, filled, validated like any attacher would and published
 * under its name.  A failure after create_file() removes the temporary file.
 */
struct create_plan {
	struct tb_session_opts opts;
	struct tb_layout_params p;
	struct tb_layout l;
	struct tb_chan_desc cd[TB_MAX_CHANNELS];
	uint32_t nch;
	int fallback;
	uint32_t clock_kind;
	uint8_t uuid[16];
};

/* Step 1: one channel's description from its options (no side effect). */
static int plan_channel(struct create_plan *pl, unsigned c, const struct tb_channel_opts *co, uint32_t rings)
{
	struct tb_chan_desc *cd = &pl->cd[c];
	if (co->size < offsetof(struct tb_channel_opts, events) || co->size > sizeof(struct tb_channel_opts))
		return tb_fail(-EINVAL, "channel %u: struct tb_channel_opts size %zu unknown", c, co->size);
	const char *name = co->name ? co->name : (pl->nch == 1 ? "chan" : NULL);
	char buf[TB_CHAN_NAME_MAX];
	if (!name) {
		snprintf(buf, sizeof buf, "chan%u", c);
		name = buf;
	}
	if (strlen(name) >= sizeof cd->name || !tb_valid_chan_name(name, strlen(name) + 1))
		return tb_fail(-EINVAL, "channel name '%s' must be 1-31 characters of [A-Za-z0-9_-]", name);
	for (unsigned d = 0; d < c; d++)
		if (!strcmp(pl->cd[d].name, name))
			return tb_fail(-EINVAL, "two channels are named '%s'", name);
	memcpy(cd->name, name, strlen(name) + 1); /* 1..31 characters, checked above */
	cd->sb_size = co->sb_size ? co->sb_size : DEF_SB_SIZE;
	cd->sb_count = co->sb_count ? co->sb_count : default_sb_count(cd->sb_size, rings);
	cd->mode = co->mode ? co->mode : TB_MODE_DISCARD;
	if (cd->mode > TB_MODE_BLOCK)
		return tb_fail(-EINVAL, "channel '%s': mode %u is not discard(1), overwrite(2) or block(3)", name,
			       cd->mode);
	cd->attribution = co->no_attribution ? TB_ATTR_NONE : TB_ATTR_ESCAPE;
	/* a caller built against an older header passes a smaller struct: vtid off */
	uint32_t vtid = co->size >= offsetof(struct tb_channel_opts, vtid) + sizeof co->vtid ? co->vtid : 0;
	if (vtid > 1)
		return tb_fail(-EINVAL, "channel '%s': vtid %u is not 0 (off) or 1 (on)", name, vtid);
	cd->vtid = vtid;
	/* Default: wake the consumer when an eighth of the ring is full (8 of
	 * record's 64 sub-buffers, 2 MiB), not at every sub-buffer: a wake-up,
	 * a pass and a write request cost the recorder about as much as the
	 * copy of a 256 KiB packet (issue 30: -45 % of its CPU at 2 M events/s,
	 * docs/BENCHMARKS.md), and seven eighths stay free for bursts.  What
	 * waits in full sub-buffers below it is bounded in time by the drain
	 * thread's own wake-ups (every flush period or 1 s, tb_consumer_wait). */
	cd->watermark = co->watermark ? co->watermark : (cd->sb_count / 8 ? cd->sb_count / 8 : 1);
	cd->block_timeout_ns = co->block_timeout_ns ? co->block_timeout_ns : 100000000ull;
	cd->flush_period_ns = co->flush_period_ns ? co->flush_period_ns : 1000000000ull;
	if (cd->block_timeout_ns > TB_MAX_BLOCK_TIMEOUT_NS)
		return tb_fail(-EINVAL, "channel '%s': block timeout %" PRIu64 " ns is above the maximum, %llu s", name,
			       cd->block_timeout_ns, TB_MAX_BLOCK_TIMEOUT_NS / 1000000000ull);
	if (cd->flush_period_ns > TB_MAX_FLUSH_PERIOD_NS)
		return tb_fail(-EINVAL, "channel '%s': flush period %" PRIu64 " ns is above the maximum, %llu s", name,
			       cd->flush_period_ns, TB_MAX_FLUSH_PERIOD_NS / 1000000000ull);
	const char *ev = co->events ? co->events : "*";
	if (strlen(ev) >= sizeof cd->events)
		return tb_fail(-EINVAL, "channel '%s': event patterns longer than %zu bytes", name, sizeof cd->events - 1);
	memcpy(cd->events, ev, strlen(ev) + 1); /* length checked above */
	pl->p.sb_size[c] = cd->sb_size;
	pl->p.sb_count[c] = cd->sb_count;
	return 0;
}

/* Step 1: every check that needs no file, and the layout (no side effect). */
static int plan_session(const struct tb_session_opts *o, struct create_plan *pl)
{
	memset(pl, 0, sizeof *pl);
	if (o) {
		if (o->size < offsetof(struct tb_session_opts, force_fallback) || o->size > sizeof pl->opts)
			return tb_fail(-EINVAL, "struct tb_session_opts: size %zu unknown (set .size = sizeof)", o->size);
		memcpy(&pl->opts, o, o->size);
	}
	const struct tb_session_opts *opts = &pl->opts;
	static const struct tb_channel_opts defchan = { .size = sizeof defchan };
	const struct tb_channel_opts *chans = opts->channels;
	pl->nch = opts->nchannels;
	if (!pl->nch || !chans) {
		pl->nch = 1;
		chans = &defchan;
	}
	if (pl->nch > TB_MAX_CHANNELS)
		return tb_fail(-EINVAL, "%u channels requested, at most %u", pl->nch, TB_MAX_CHANNELS);

	struct tb_layout_params *p = &pl->p;
	p->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	pl->fallback = opts->force_fallback || env_true("TRACEBUF_NO_RSEQ") || tb_rseq_cpu() < 0;
	/* Fallback sessions get 8 slots per CPU: a writer preempted while it
	 * owns a slot must not make the others drop (docs/DESIGN.md). */
	if (!pl->fallback && opts->ncpus && opts->ncpus < possible_cpus())
		return tb_fail(-EINVAL,
			       "ncpus = %u: an rseq session needs a ring for each of the %u possible CPUs (leave ncpus 0)",
			       opts->ncpus, possible_cpus());
	p->ncpus = opts->ncpus ? opts->ncpus : possible_cpus() * (pl->fallback ? 8u : 1u);
	if (p->ncpus > TB_MAX_CPUS)
		p->ncpus = TB_MAX_CPUS;
	/* the rings that can be written at once: one per online CPU, or every
	 * slot of a fallback session */
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t rings = pl->fallback || online < 1 || (uint64_t)online > p->ncpus ? p->ncpus : (uint32_t)online;
	p->nchannels = pl->nch;
	p->max_events = opts->max_events ? opts->max_events : DEF_MAX_EVENTS;
	for (unsigned c = 0; c < pl->nch; c++) {
		int rc = plan_channel(pl, c, &chans[c], rings);
		if (rc)
			return rc;
	}
	int rc = tb_layout_compute(p, &pl->l);
	if (rc)
		return rc;
	for (unsigned c = 0; c < pl->nch; c++) {
		pl->cd[c].ring_size = pl->l.ring_size[c];
		pl->cd[c].data_off = pl->l.data_off[c];
	}
	pl->clock_kind = (!opts->force_monotonic && !env_true("TRACEBUF_CLOCK_MONOTONIC") && tb_tsc_usable())
				 ? TB_CLOCK_TSC
				 : TB_CLOCK_MONOTONIC;
	random_bytes(pl->uuid, sizeof pl->uuid);
	pl->uuid[6] = (uint8_t)((pl->uuid[6] & 0x0f) | 0x40); /* RFC 4122 version 4 */
	pl->uuid[8] = (uint8_t)((pl->uuid[8] & 0x3f) | 0x80);
	return 0;
}

/* Step 2: the file's path (s->path), directory (dir) and name; the
 * directory is opened and checked (s->dirfd), the name must be free and the
 * file system must have room.  Nothing is created. */
static int name_session(const struct create_plan *pl, struct tb_session *s, char *dir, const char **name)
{
	const struct tb_session_opts *opts = &pl->opts;
	if (opts->path) {
		if (strlen(opts->path) >= sizeof s->path)
			return tb_fail(-ENAMETOOLONG, "session path too long");
		memcpy(s->path, opts->path, strlen(opts->path) + 1); /* length checked above */
		*name = tb_split_path(s->path, dir);
	} else {
		const char *d = opts->dir ? opts->dir : getenv("TRACEBUF_SHM_DIR");
		if (!d || !*d)
			d = "/dev/shm";
		snprintf(dir, PATH_MAX, "%s", d);
		snprintf(s->path, sizeof s->path, "%s/tracebuf-%d-%02x%02x%02x%02x", d, (int)getpid(), pl->uuid[0],
			 pl->uuid[1], pl->uuid[2], pl->uuid[3]);
		*name = strrchr(s->path, '/') + 1;
	}
	/* From here on the file is only ever reached relative to s->dirfd. */
	int rc = open_dir(dir, &s->dirfd);
	if (rc)
		return rc;
	struct statvfs vfs;
	if (fstatvfs(s->dirfd, &vfs) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (avail < pl->l.file_size)
			return tb_fail(-ENOSPC,
				       "%s has %" PRIu64 " MiB free, the session needs %" PRIu64
				       " MiB (%u CPUs x rings); choose smaller or fewer sub-buffers, fewer CPUs, or another directory (TRACEBUF_SHM_DIR)",
				       dir, avail >> 20, (pl->l.file_size + (1 << 20) - 1) >> 20, pl->p.ncpus);
	}
	struct stat exist;
	if (!**name || fstatat(s->dirfd, *name, &exist, AT_SYMLINK_NOFOLLOW) == 0)
		return **name ? tb_fail(-EEXIST, "session file %s already exists", s->path)
			      : tb_fail(-EINVAL, "session path %s names a directory, not a file", s->path);
	return 0;
}

/* Step 3: the file under a temporary name (tmp), sized and mapped.  It is
 * renamed when complete, so that nobody can attach to a half-written file;
 * O_EXCL on both names.  On failure after the open, the caller unlinks tmp. */
static int create_file(const struct create_plan *pl, struct tb_session *s, const char *dir, const char *name,
		       char *tmp, size_t tmpcap, uint8_t **base)
{
	snprintf(tmp, tmpcap, "%s.tmp-%02x%02x%02x%02x", name, pl->uuid[4], pl->uuid[5], pl->uuid[6], pl->uuid[7]);
	s->fd = openat(s->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		int e = errno;
		int rc = tb_fail(-e, "cannot create session file %s/%s: %s", dir, tmp, strerror(e));
		tmp[0] = 0; /* not ours: nothing to unlink */
		return rc;
	}
	if (ftruncate(s->fd, (off_t)pl->l.file_size) != 0)
		return tb_fail(-errno, "cannot size session file %s to %" PRIu64 " bytes: %s", s->path, pl->l.file_size,
			       strerror(errno));
	int rc = tb_map_file(s->fd, pl->l.file_size, 0, base);
	if (rc)
		return tb_fail(rc, "cannot map session file %s: %s", s->path, strerror(-rc));
	return 0;
}

/* Step 4: the header, channel table, ring table, registry and process
 * table; the rings stay untouched (sparse).  The magic is stored last. */
static int fill_file(const struct create_plan *pl, uint8_t *base)
{
	const struct tb_layout_params *p = &pl->p;
	const struct tb_layout *l = &pl->l;
	struct tb_map *m = (struct tb_map *)base;
	m->version = TB_FORMAT_VERSION;
	m->hdr_size = sizeof *m;
	m->page_size = p->page_size;
	m->ncpus = p->ncpus;
	m->nchannels = pl->nch;
	m->protocol = pl->fallback ? TB_PROTO_FALLBACK : TB_PROTO_RSEQ;
	m->file_size = l->file_size;
	memcpy(m->uuid, pl->uuid, 16);
	m->creator_uid = geteuid();
	m->creator_pid = (uint32_t)getpid();
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	m->created_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	struct tb_clock_calib cal;
	tb_clock_calibrate(pl->clock_kind, &cal);
	m->clock_kind = cal.kind;
	m->clock_freq = cal.freq;
	m->clock_offset_ns = cal.offset_ns;
	m->clock_mono_offset_ns = cal.mono_offset_ns;
	m->chan_off = l->chan_off;
	m->ctl_off = l->ctl_off;
	m->ring_table_off = l->ring_table_off;
	m->reg_off = l->reg_off;
	m->proc_off = l->proc_off;
	m->rings_off = l->rings_off;
	m->state = TB_STATE_ACTIVE;
	memcpy(base + l->chan_off, pl->cd, pl->nch * sizeof pl->cd[0]);
	uint64_t *rtab = (uint64_t *)(base + l->ring_table_off);
	for (unsigned c = 0; c < pl->nch; c++)
		for (unsigned cpu = 0; cpu < p->ncpus; cpu++)
			rtab[(uint64_t)c * p->ncpus + cpu] = tb_layout_ring_off(p, l, c, cpu);
	struct tb_registry *reg = (struct tb_registry *)(base + l->reg_off);
	reg->capacity = p->max_events;
	int rc = tb_registry_init(reg);
	if (rc)
		return rc;
	struct tb_proc_table *pt = (struct tb_proc_table *)(base + l->proc_off);
	pt->capacity = TB_MAX_PROCS;
	/* Publish: an attacher that sees the magic sees everything above
	 * (pairs with the copy of the header in tb_map_validate, which runs
	 * after the attacher's mmap: a fresh mapping of the same page). */
	__atomic_store_n(&m->magic, TB_MAP_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

/* Step 5: our own view of the file, validated as an attacher would, the
 * built-in classes, the fast-path descriptors; then the name (tmp -> name,
 * never replacing a file that appeared meanwhile). */
static int publish_session(struct tb_session *s, uint8_t *base, uint64_t size, const char *tmp, const char *name)
{
	int rc = tb_map_validate(base, size, s); /* cannot fail: our own layout */
	if (!rc)
		rc = tb_registry_builtin(s);
	if (!rc)
		rc = tb_session_fast_init(s);
	if (rc)
		return rc;
	if (renameat2(s->dirfd, tmp, s->dirfd, name, RENAME_NOREPLACE) != 0) {
		int e = errno;
		if (e == EINVAL || e == ENOSYS) { /* file system without RENAME_NOREPLACE */
			e = linkat(s->dirfd, tmp, s->dirfd, name, 0) == 0 ? 0 : errno;
			if (!e)
				unlinkat(s->dirfd, tmp, 0);
		}
		if (e)
			return tb_fail(-e, "cannot publish session file %s: %s", s->path, strerror(e));
	}
	return 0;
}

int tb_session_create(const struct tb_session_opts *o, struct tb_session **out)
{
	*out = NULL;
	struct create_plan *pl = malloc(sizeof *pl);
	struct tb_session *s = calloc(1, sizeof *s);
	if (!pl || !s) {
		free(pl);
		free(s);
		return tb_fail(-ENOMEM, "out of memory");
	}
	s->fd = -1;
	s->dirfd = -1;
	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	const char *name = NULL;
	uint8_t *base = NULL;
	tmp[0] = 0;
	int rc = plan_session(o, pl);
	if (!rc)
		rc = name_session(pl, s, dir, &name);
	if (!rc)
		rc = create_file(pl, s, dir, name, tmp, sizeof tmp, &base);
	if (!rc)
		rc = fill_file(pl, base);
	if (!rc)
		rc = publish_session(s, base, pl->l.file_size, tmp, name);
	if (rc) {
		if (base)
			munmap(base, pl->l.file_size);
		free(s->fast);
		if (tmp[0])
			unlinkat(s->dirfd, tmp, 0);
		if (s->fd >= 0)
			close(s->fd);
		if (s->dirfd >= 0)
			close(s->dirfd);
		free(s);
		free(pl);
		return rc;
	}
	free(pl);
	*out = s;
	return 0;
}
