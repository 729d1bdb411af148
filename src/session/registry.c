/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "session/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "core/labels.h"
#include "platform/thread.h"

_Static_assert(sizeof(pthread_mutex_t) <= 64, "registry lock space");

int tb_registry_init(struct tb_registry *reg)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	int rc = pthread_mutex_init((pthread_mutex_t *)reg->lock, &a);
	pthread_mutexattr_destroy(&a);
	if (rc)
		return tb_fail(-rc, "cannot initialise the registry lock: %s", strerror(rc));
	reg->count = 0;
	reg->gen = 0;
	return 0;
}

/*
 * The registry's robust process-shared mutex, taken for at most 2 s: it is
 * held for microseconds by a live process, and released by the kernel
 * (EOWNERDEAD) when its holder dies; a lock word that never frees (written
 * by a stray or hostile process of the same uid) must not block a program at
 * its first event forever.  After one timeout the session's registry is
 * given up in this process (relaxed flag: a racing thread merely waits its
 * own 2 s).
 */
static int reg_lock(struct tb_session *s)
{
	if (__atomic_load_n(&s->reg_lock_broken, __ATOMIC_RELAXED))
		return tb_fail(-ETIMEDOUT, "the registry lock of session %s was found stuck; no event class can be "
					   "registered by this process", s->path);
	pthread_mutex_t *m = (pthread_mutex_t *)s->reg->lock;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until); /* pthread_mutex_timedlock's clock */
	until.tv_sec += 2;
	int rc = pthread_mutex_timedlock(m, &until);
	if (rc == EOWNERDEAD) /* a process died holding it: entries are written valid-last */
		rc = pthread_mutex_consistent(m);
	if (rc == ETIMEDOUT) {
		__atomic_store_n(&s->reg_lock_broken, 1, __ATOMIC_RELAXED);
		return tb_fail(-ETIMEDOUT, "the registry lock of session %s was held for more than 2 s (a stuck or "
					   "corrupted lock word); no event class can be registered by this process", s->path);
	}
	if (rc)
		return tb_fail(-rc, "session registry lock of %s: %s", s->path, strerror(rc));
	return 0;
}

static void reg_unlock(struct tb_session *s)
{
	pthread_mutex_unlock((pthread_mutex_t *)s->reg->lock);
}

static uint32_t mask_for(struct tb_session *s, const char *name)
{
	uint32_t mask = 0;
	const struct tb_chan_desc *cd = (const struct tb_chan_desc *)(s->base + s->map->chan_off);
	/* a thread's name goes where its thread records go: it follows the
	 * channel's attribution (or vtid: its events name their threads by
	 * tid), not the event patterns */
	int tname = !strcmp(name, TB_THREAD_NAME_EVENT);
	/* a crash is written whatever the patterns (on one channel: crash.c) */
	if (!strcmp(name, TB_CRASH_EVENT) || !strcmp(name, TB_CRASH_MAP_EVENT))
		return (1u << s->nchannels) - 1; /* nchannels <= TB_MAX_CHANNELS (16) */
	for (unsigned c = 0; c < s->nchannels; c++) {
		if (tname) {
			if (cd[c].attribution == TB_ATTR_ESCAPE || cd[c].vtid)
				mask |= 1u << c;
			continue;
		}
		char pat[TB_PATTERN_MAX];
		memcpy(pat, cd[c].events, sizeof pat);
		pat[sizeof pat - 1] = 0;
		if (tb_pattern_match(pat, name))
			mask |= 1u << c;
	}
	return mask;
}

static int fields_equal(const struct tb_event_desc *e, uint32_t nf, const struct tb_field_desc *f, const char *labels)
{
	if (e->nfields != nf || strncmp(e->labels, labels, sizeof e->labels) != 0)
		return 0;
	for (uint32_t i = 0; i < nf; i++)
		if (e->fields[i].type != f[i].type || e->fields[i].max_len != f[i].max_len ||
		    strncmp(e->fields[i].name, f[i].name, TB_FIELD_NAME_MAX) != 0)
			return 0;
	return 1;
}

int tb_registry_register(struct tb_session *s, const char *name, uint32_t nfields, const struct tb_field_desc *fields,
			 const char *labels)
{
	if (!labels)
		labels = "";
	if (!tb_valid_event_name(name, TB_NAME_MAX))
		return tb_fail(-EINVAL, "event name '%s' must be provider:event, [A-Za-z0-9_.-] on both sides, < %u bytes",
			       name, TB_NAME_MAX);
	if (nfields > TB_MAX_FIELDS)
		return tb_fail(-EINVAL, "event '%s' has %u fields, at most %u", name, nfields, TB_MAX_FIELDS);
	unsigned nenum = 0;
	for (uint32_t i = 0; i < nfields; i++) {
		if (!tb_valid_field_name(fields[i].name, TB_FIELD_NAME_MAX))
			return tb_fail(-EINVAL, "event '%s': field %u name is not a C identifier < %u bytes", name, i,
				       TB_FIELD_NAME_MAX);
		if (fields[i].type < TB_FT_U8 || fields[i].type >= TB_FT_MAX_)
			return tb_fail(-EINVAL, "event '%s': field '%s' has unknown type %u", name, fields[i].name,
				       fields[i].type);
		int var = tb_ft_variable(fields[i].type);
		if (var && (fields[i].max_len < 1 || fields[i].max_len > TB_PAYLOAD_MAX_LEN))
			return tb_fail(-EINVAL, "event '%s': field '%s' bound %u outside 1..%u", name, fields[i].name,
				       fields[i].max_len, TB_PAYLOAD_MAX_LEN);
		if (!var && fields[i].max_len)
			return tb_fail(-EINVAL, "event '%s': fixed-size field '%s' has a bound", name, fields[i].name);
		nenum += fields[i].type == TB_FT_ENUM;
		for (uint32_t j = 0; j < i; j++)
			if (!strncmp(fields[i].name, fields[j].name, TB_FIELD_NAME_MAX))
				return tb_fail(-EINVAL, "event '%s': two fields named '%s'", name, fields[i].name);
	}
	size_t ll = strnlen(labels, TB_LABELS_MAX);
	if (ll >= TB_LABELS_MAX || !tb_labels_check(labels, ll + 1, nenum))
		return tb_fail(-EINVAL, "event '%s': the labels of its %u enum field(s) are malformed or longer than %u bytes",
			       name, nenum, TB_LABELS_MAX - 1);
	int rc = reg_lock(s);
	if (rc)
		return rc;
	uint32_t n = tb_registry_count(s);
	for (uint32_t i = 0; i < n; i++) {
		struct tb_event_desc *e = &s->reg->events[i];
		if (e->state == 1 && !strncmp(e->name, name, TB_NAME_MAX)) {
			rc = fields_equal(e, nfields, fields, labels)
				     ? (int)i
				     : tb_fail(-EEXIST, "event '%s' is already registered in this session with other fields",
					       name);
			reg_unlock(s);
			return rc;
		}
	}
	if (n >= s->reg_capacity) {
		reg_unlock(s);
		return tb_fail(-ENOSPC, "the session's registry is full (%u event classes); create it with a larger max_events",
			       s->reg_capacity);
	}
	struct tb_event_desc *e = &s->reg->events[n];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->id = n;
	e->nfields = nfields;
	memcpy(e->fields, fields, nfields * sizeof fields[0]);
	memcpy(e->labels, labels, ll + 1); /* checked above: fits */
	e->enabled = n == TB_EVENT_ID_THREAD ? 0 : mask_for(s, name);
	/* valid-last: readers (the consumer writing metadata) check state
	 * with acquire before trusting the entry (tb_registry_find) */
	__atomic_store_n(&e->state, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&s->reg->count, n + 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&s->reg->gen, 1, __ATOMIC_RELEASE); /* read by other processes */
	reg_unlock(s);
	return (int)n;
}

int tb_registry_builtin(struct tb_session *s)
{
	struct tb_field_desc f[2];
	memset(f, 0, sizeof f);
	strcpy(f[0].name, "pid");
	f[0].type = TB_FT_U32;
	strcpy(f[1].name, "tid");
	f[1].type = TB_FT_U32;
	int rc = tb_registry_register(s, "tracebuf:thread", 2, f, NULL);
	return rc < 0 ? rc : 0;
}

int tb_session_set_events(struct tb_session *s, unsigned chan, const char *patterns)
{
	if (chan >= s->nchannels)
		return tb_fail(-EINVAL, "channel %u does not exist (%u channels)", chan, s->nchannels);
	if (!patterns || strlen(patterns) >= TB_PATTERN_MAX)
		return tb_fail(-EINVAL, "event patterns missing or longer than %u bytes", TB_PATTERN_MAX - 1);
	if (s->readonly)
		return tb_fail(-EROFS, "session %s is attached read-only", s->path);
	int rc = reg_lock(s);
	if (rc)
		return rc;
	struct tb_chan_desc *cd = (struct tb_chan_desc *)(s->base + s->map->chan_off);
	snprintf(cd[chan].events, sizeof cd[chan].events, "%s", patterns);
	cd[chan].events_gen++;
	uint32_t n = tb_registry_count(s);
	for (uint32_t i = 1; i < n; i++) {
		struct tb_event_desc *e = &s->reg->events[i];
		char name[TB_NAME_MAX];
		memcpy(name, e->name, sizeof name);
		name[sizeof name - 1] = 0;
		/* relaxed: producers read the mask with a relaxed load (the one
		 * branch of TB_EVENT); a change takes effect at their next event */
		__atomic_store_n(&e->enabled, mask_for(s, name), __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&s->reg->gen, 1, __ATOMIC_RELEASE); /* read by other processes */
	reg_unlock(s);
	return 0;
}

int tb_proc_register(struct tb_session *s)
{
	int rc = reg_lock(s);
	if (rc)
		return rc;
	uint32_t pid = (uint32_t)getpid();
	struct tb_proc_table *pt = s->procs;
	uint32_t n = pt->count > s->proc_capacity ? s->proc_capacity : pt->count;
	for (uint32_t i = 0; i < n; i++)
		if (pt->procs[i].state == 1 && pt->procs[i].pid == pid) {
			reg_unlock(s);
			return 0;
		}
	if (n >= s->proc_capacity) {
		reg_unlock(s);
		return tb_fail(-ENOSPC, "process table full (%u processes)", s->proc_capacity);
	}
	struct tb_proc_entry *e = &pt->procs[n];
	memset(e, 0, sizeof *e);
	e->pid = pid;
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	e->attach_realtime_ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	/* open/read, not stdio: record --pid's attach runs this from tb_emit(),
	 * possibly in a signal handler (fopen allocates) */
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t got = read(fd, e->comm, sizeof e->comm - 1);
		e->comm[got > 0 ? got : 0] = 0;
		e->comm[strcspn(e->comm, "\n")] = 0;
		close(fd);
	}
	char exe[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (l > 0) {
		exe[l] = 0;
		const char *b = strrchr(exe, '/');
		b = b ? b + 1 : exe;
		size_t bl = strnlen(b, sizeof e->exe - 1); /* truncated on purpose */
		memcpy(e->exe, b, bl);
		e->exe[bl] = 0;
	}
	__atomic_store_n(&e->state, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&pt->count, n + 1, __ATOMIC_RELEASE);
	reg_unlock(s);
	return 0;
}

int tb_session_get_events(struct tb_session *s, unsigned chan, char *buf, size_t len)
{
	if (chan >= s->nchannels)
		return tb_fail(-EINVAL, "channel %u does not exist (%u channels)", chan, s->nchannels);
	const struct tb_chan_desc *cd = (const struct tb_chan_desc *)(s->base + s->map->chan_off);
	char a[TB_PATTERN_MAX], b[TB_PATTERN_MAX];
	if (!s->readonly) {
		/* the lock tb_session_set_events() writes under: a whole value */
		int rc = reg_lock(s);
		if (rc)
			return rc;
		memcpy(a, cd[chan].events, sizeof a);
		reg_unlock(s);
	} else {
		/* cannot lock a read-only mapping: two equal copies in a row are
		 * not torn by a writer (a change rewrites the whole string) */
		memcpy(a, cd[chan].events, sizeof a);
		for (int i = 0; i < 100; i++) {
			memcpy(b, cd[chan].events, sizeof b);
			if (!memcmp(a, b, sizeof a))
				break;
			memcpy(a, b, sizeof a);
		}
	}
	a[sizeof a - 1] = 0; /* shared memory: terminated here whatever it holds */
	size_t n = strlen(a);
	if (n >= len)
		return tb_fail(-ENOSPC, "channel %s: the patterns take %zu bytes, the buffer %zu", s->chan[chan].name,
			       n + 1, len);
	memcpy(buf, a, n + 1);
	return 0;
}

unsigned tb_session_live_procs(struct tb_session *s, uint32_t self)
{
	unsigned n = 0;
	/* acquire: pairs with the release stores of count and of each entry's
	 * state in tb_proc_register() (entries are append-only) */
	uint32_t cnt = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	if (cnt > s->proc_capacity)
		cnt = s->proc_capacity;
	for (uint32_t i = 0; i < cnt; i++) {
		struct tb_proc_entry p;
		if (__atomic_load_n(&s->procs->procs[i].state, __ATOMIC_ACQUIRE) != 1)
			continue;
		memcpy(&p, &s->procs->procs[i], sizeof p); /* hostile memory: use a copy */
		if (p.pid != self && tb_pid_alive(p.pid)) /* a zombie writes no more */
			n++;
	}
	return n;
}

unsigned tb_session_attached_procs(struct tb_session *s, uint32_t self, char *names, size_t cap)
{
	unsigned n = 0;
	size_t off = 0;
	if (names && cap)
		names[0] = 0;
	/* acquire: pairs with the release stores of count and of each entry's
	 * state in tb_proc_register() (entries are append-only) */
	uint32_t cnt = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	if (cnt > s->proc_capacity)
		cnt = s->proc_capacity;
	for (uint32_t i = 0; i < cnt; i++) {
		struct tb_proc_entry p;
		if (__atomic_load_n(&s->procs->procs[i].state, __ATOMIC_ACQUIRE) != 1)
			continue;
		memcpy(&p, &s->procs->procs[i], sizeof p); /* hostile memory: use a copy */
		if (p.pid == self)
			continue;
		n++;
		p.comm[sizeof p.comm - 1] = 0;
		if (!names || !cap || !p.comm[0])
			continue;
		int seen = 0; /* distinct names only: a name is a whole item of the list */
		for (const char *q = names; *q && !seen; q = strstr(q, ", ") ? strstr(q, ", ") + 2 : q + strlen(q)) {
			size_t l = strcspn(q, ",");
			seen = l == strlen(p.comm) && !strncmp(q, p.comm, l);
		}
		if (!seen && off < cap)
			off += (size_t)snprintf(names + off, cap - off, "%s%s", off ? ", " : "", p.comm);
	}
	return n;
}
