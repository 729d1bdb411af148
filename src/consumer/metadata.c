/* SPDX-License-Identifier: MIT */
/*
 * metadata.c - <trace>/metadata from the session's registry and process
 * table.  Both live in shared memory: they are copied out (append-only
 * entries published valid-last, read with acquire) and handed to the CTF
 * writer, which validates every descriptor again.  The file is replaced atomically:
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
#include "core/classes.h"
#include "ctf/ctf.h"

/*
 * Brings the engine's copy of the registry (e->wev[0..wnev)) up to date.
 * Registry entries are append-only, each published valid-last with a release
 * store of its state and then of the count; tb_registry_copy_from() loads
 * both with acquire and replaces an invalid entry by "tracebuf:invalid_<id>"
 * (state 0: the walk refuses its records).  Each entry is copied once, when
 * the count first shows it, and kept: a count that went down or an entry
 * rewritten later (corruption) changes neither the metadata, which must
 * keep describing every packet already on disk, nor the walk.  The registry
 * mutex is not taken: a dead or hostile holder must not stall the consumer.
 * Caller holds meta_lock.
 */
uint32_t tb_engine_registry_sync(struct tb_engine *e)
{
	uint32_t n = tb_registry_count(e->s);
	if (n > e->wnev && e->wnev < e->wcap) {
		n = tb_registry_copy_from(e->s, e->wev, e->wnev, e->wcap);
		if (n > e->wnev)
			e->wnev = n;
	}
	return e->wnev;
}

/* Valid entries of the process table: count (acquire) pairs with the
 * release store of count in tb_proc_register(), state likewise per entry. */
static uint32_t proc_count(struct tb_session *s)
{
	uint32_t n = __atomic_load_n(&s->procs->count, __ATOMIC_ACQUIRE);
	return n > s->proc_capacity ? s->proc_capacity : n;
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
	snprintf(l->strs[(size_t)l->n * 2], sizeof l->strs[0], "%s", key);
	x->key = l->strs[(size_t)l->n * 2];
	if (str) {
		snprintf(l->strs[(size_t)l->n * 2 + 1], sizeof l->strs[0], "%s", str);
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
	uint32_t nev = tb_engine_registry_sync(e);
	const struct tb_event_desc *ev = e->wev;
	uint32_t gen = nev;

	uint32_t pcount = proc_count(s);
	unsigned cap = 16 + e->nenv + s->proc_capacity;
	struct env_list l = { calloc(cap, sizeof *l.v), calloc((size_t)cap * 2, sizeof l.strs[0]), 0, cap };
	if (!l.v || !l.strs) {
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
	for (uint32_t i = 0; i < pcount; i++) {
		/* hostile memory: copy the entry, then use only the copy */
		struct tb_proc_entry p;
		if (__atomic_load_n(&s->procs->procs[i].state, __ATOMIC_ACQUIRE) != 1)
			continue;
		memcpy(&p, &s->procs->procs[i], sizeof p);
		if (p.pid == 0)
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
	/* the stream classes of the channels (validated at attach) */
	for (unsigned c = 0; c < s->nchannels; c++)
		info.streams |= 1u << (s->chan[c].vtid ? TB_STREAM_VTID : TB_STREAM_PLAIN);
	if (e->kern) /* --kernel: stream class 2 and its classes (engine_kernel.c) */
		info.kevents = tb_kernel_classes(e->kern, &info.nkevents);
	memcpy(info.uuid, s->uuid, 16);

	int rc = 0;
	/* The registry and process table copies above may hold zeros of a
	 * truncated session file: then the metadata on disk (written before
	 * every packet on disk) is kept as it is. */
	if (tb_engine_damaged(e)) {
		rc = -EIO;
		goto out;
	}
	if (!e->local)
		goto sent; /* relay-only: the relay's copy is the trace */
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
sent:
	*gen_out = gen;
	*procs_out = pcount;
	tb_output_metadata(e, &info); /* before any packet that needs it, as on disk */
out:
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
 * the producer's committing store; every registration the producer made
 * (count stored with release) before writing a record therefore shows in
 * the registry count now, so the metadata on disk always describes every id
 * in the packets on disk.  (reg->gen also changes with event patterns,
 * which the metadata does not show, and is written without atomics.)
 */
int tb_engine_metadata_sync(struct tb_engine *e)
{
	uint32_t gen = tb_registry_count(e->s);
	/* a count below the one described (corrupted) changes nothing: the
	 * engine's copy only grows (tb_engine_registry_sync()) */
	if (gen < __atomic_load_n(&e->meta_gen, __ATOMIC_RELAXED))
		gen = __atomic_load_n(&e->meta_gen, __ATOMIC_RELAXED);
	uint32_t procs = proc_count(e->s);
	if (__atomic_load_n(&e->meta_written, __ATOMIC_RELAXED) && gen == __atomic_load_n(&e->meta_gen, __ATOMIC_RELAXED) &&
	    procs == __atomic_load_n(&e->meta_procs, __ATOMIC_RELAXED))
		return 0;
	int rc = tb_engine_write_metadata(e);
	if (rc < 0)
		tb_engine_set_error(e, rc);
	return rc;
}
