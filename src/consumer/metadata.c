/* SPDX-License-Identifier: MIT */
/*
 * metadata.c - <trace>/metadata from the session's registry and process
 * table.  Both live in shared memory: they are copied out (a seqlock-style
 * read on the registry generation) and handed to the CTF writer, which
 * validates every descriptor again.  The file is replaced atomically:
 * written as the dot-file ".metadata.tmp" (readers ignore dot-files) and
 * renamed over "metadata".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "consumer/engine_impl.h"
#include "ctf/ctf.h"

/*
 * Copies the registry.  Pairs with the registrar, which fills an entry,
 * stores its `state` = 1 and bumps `gen` with release semantics (under the
 * registry mutex, which we do not take: a dead or hostile holder must not
 * stall the consumer).  Read gen (acquire), copy, fence (acquire), read gen
 * again: equal values mean no registration overlapped the copy.
 */
static struct tb_event_desc *copy_registry(struct tb_session *s, uint32_t *count, uint32_t *gen)
{
	struct tb_registry *reg = s->reg;
	struct tb_event_desc *ev = NULL;
	uint32_t n = 0, g1 = 0;
	for (int tries = 0; tries < 8; tries++) {
		g1 = __atomic_load_n(&reg->gen, __ATOMIC_ACQUIRE);
		n = __atomic_load_n(&reg->count, __ATOMIC_RELAXED);
		if (n > s->reg_capacity)
			n = s->reg_capacity; /* hostile count: bounded by the validated capacity */
		if (n > TB_MAX_EVENTS)
			n = TB_MAX_EVENTS;
		free(ev);
		ev = calloc(n ? n : 1, sizeof *ev);
		if (!ev)
			return NULL;
		memcpy(ev, reg->events, (size_t)n * sizeof *ev);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&reg->gen, __ATOMIC_RELAXED) == g1)
			break;
	}
	for (uint32_t i = 0; i < n; i++)
		if (ev[i].state != 1)
			ev[i].name[0] = 0; /* half-registered: the CTF writer marks it invalid */
	*count = n;
	*gen = g1;
	return ev;
}

struct env_list {
	struct tb_ctf_env *v;
	char (*strs)[160];
	unsigned n, cap;
};

static void env_add(struct env_list *l, const char *key, const char *str, int64_t num)
{
	if (l->n >= l->cap)
		return;
	struct tb_ctf_env *x = &l->v[l->n];
	snprintf(l->strs[l->n * 2], sizeof l->strs[0], "%s", key);
	x->key = l->strs[l->n * 2];
	if (str) {
		snprintf(l->strs[l->n * 2 + 1], sizeof l->strs[0], "%s", str);
		x->str = l->strs[l->n * 2 + 1];
	} else {
		x->str = NULL;
	}
	x->num = num;
	l->n++;
}

static void bounded_copy(char *dst, const char *src, size_t n)
{
	size_t i = 0;
	for (; i + 1 < n && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
}

static int write_metadata(struct tb_engine *e, uint32_t *gen_out, uint32_t *procs_out)
{
	struct tb_session *s = e->s;
	uint32_t nev = 0, gen = 0;
	struct tb_event_desc *ev = copy_registry(s, &nev, &gen);
	if (!ev)
		return tb_fail(-ENOMEM, "out of memory copying the event registry");

	uint32_t pcount = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	unsigned cap = 16 + e->nenv + s->proc_capacity;
	struct env_list l = { calloc(cap, sizeof *l.v), calloc((size_t)cap * 2, sizeof l.strs[0]), 0, cap };
	if (!l.v || !l.strs) {
		free(ev);
		free(l.v);
		free(l.strs);
		return tb_fail(-ENOMEM, "out of memory writing metadata");
	}
	char host[256] = "unknown";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = 0;
	env_add(&l, "hostname", host, 0);
	env_add(&l, "domain", "ust", 0);
	env_add(&l, "tracer_name", "tracebuf", 0);
	env_add(&l, "tracer_version", TB_TRACER_VERSION, 0);
	env_add(&l, "tracer_major", NULL, 0);
	env_add(&l, "tracer_minor", NULL, 1);
	env_add(&l, "tracer_patchlevel", NULL, 0);
	env_add(&l, "session_created_realtime_ns", NULL,
		(int64_t)__atomic_load_n(&s->map->created_realtime_ns, __ATOMIC_RELAXED));
	for (unsigned i = 0; i < e->nenv; i++)
		env_add(&l, e->env[i].key, e->env[i].str, e->env[i].num);
	for (uint32_t i = 0; i < s->proc_capacity; i++) {
		/* hostile memory: copy the entry, then use only the copy */
		struct tb_proc_entry p;
		memcpy(&p, &s->procs->procs[i], sizeof p);
		if (p.state != 1 || p.pid == 0)
			continue;
		char key[32], val[160], comm[sizeof p.comm + 1], exe[sizeof p.exe + 1];
		bounded_copy(comm, p.comm, sizeof comm);
		bounded_copy(exe, p.exe, sizeof exe);
		snprintf(key, sizeof key, "proc_%" PRIu32, p.pid);
		snprintf(val, sizeof val, "comm=%s exe=%s attached_ns=%" PRIu64, comm, exe,
			 p.attach_realtime_ns);
		env_add(&l, key, val, 0);
	}

	struct tb_ctf_trace_info info = {
		.clock_freq = s->clock_freq,
		.clock_offset_ns = s->clock_offset_ns,
		.events = ev,
		.nevents = nev,
		.env = l.v,
		.nenv = l.n,
	};
	memcpy(info.uuid, s->uuid, 16);

	int rc;
	int fd = openat(e->dirfd, ".metadata.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		rc = tb_fail(-errno, "cannot create %s/.metadata.tmp: %s", e->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	rc = tb_ctf_metadata_write(f, &info);
	if (fclose(f) != 0 && rc == 0)
		rc = tb_fail(-errno, "cannot write %s/metadata: %s", e->dir, strerror(errno));
	if (rc < 0) {
		unlinkat(e->dirfd, ".metadata.tmp", 0);
		goto out;
	}
	if (renameat(e->dirfd, ".metadata.tmp", e->dirfd, "metadata") < 0) {
		rc = tb_fail(-errno, "cannot rename %s/.metadata.tmp: %s", e->dir, strerror(errno));
		unlinkat(e->dirfd, ".metadata.tmp", 0);
		goto out;
	}
	*gen_out = gen;
	*procs_out = pcount;
out:
	free(ev);
	free(l.v);
	free(l.strs);
	return rc;
}

int tb_engine_write_metadata(struct tb_engine *e)
{
	pthread_mutex_lock(&e->meta_lock);
	uint32_t gen, procs;
	int rc = write_metadata(e, &gen, &procs);
	if (!rc) {
		__atomic_store_n(&e->meta_gen, gen, __ATOMIC_RELAXED);
		__atomic_store_n(&e->meta_procs, procs, __ATOMIC_RELAXED);
		__atomic_store_n(&e->meta_written, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&e->meta_lock);
	return rc;
}

/*
 * Called before each packet is written.  The packet was copied after
 * tb_ring_ready() loaded the head with acquire semantics, which pairs with
 * the producer's committing store; every registration the producer saw
 * before writing a record therefore shows in `gen` now, so the metadata
 * on disk always describes every id in the packets on disk.
 */
int tb_engine_metadata_sync(struct tb_engine *e)
{
	uint32_t gen = __atomic_load_n(&e->s->reg->gen, __ATOMIC_ACQUIRE);
	uint32_t procs = __atomic_load_n(&e->s->procs->count, __ATOMIC_RELAXED);
	if (__atomic_load_n(&e->meta_written, __ATOMIC_RELAXED) && gen == __atomic_load_n(&e->meta_gen, __ATOMIC_RELAXED) &&
	    procs == __atomic_load_n(&e->meta_procs, __ATOMIC_RELAXED))
		return 0;
	int rc = tb_engine_write_metadata(e);
	if (rc < 0)
		tb_engine_set_error(e, rc);
	return rc;
}
