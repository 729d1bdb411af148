/* SPDX-License-Identifier: MIT */
/*
 * cli_profile.c - reading `tracebuf profile` traces (cli_profile.h):
 * processes, their maps in trace order, symbolised samples with a cache per
 * (process, maps state, address), and self/total aggregation.
 */
#define _GNU_SOURCE
#include "cli_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_demangle.h"
#include "cli_symbols.h"

/* ---------------------------------------------------------------------- */
/* state                                                                   */

struct pmap {
	uint64_t start, end, pgoff;
	uint32_t gen;
	char *path;
	struct sym_file *file; /* NULL: no file ("[vdso]", anonymous) */
	int bias_state;        /* 0 not computed, 1 bias valid, -1 no bias (file offsets) */
	uint64_t bias;
};

struct pproc {
	struct prof_proc pub;
	struct pmap *maps; /* in trace order */
	uint32_t nmaps, cap;
	uint32_t *by_start; /* map indexes sorted by start */
	uint64_t *maxend;   /* maxend[i] = max end of maps by_start[0..i] */
	uint32_t epoch;     /* maps seen so far in the caller's pass */
	char *info_unwinder, *info_exe, *info_source, *name;
	uint64_t gens_seen[4]; /* bitmap of gen values < 256, for ngens */
};

struct prof {
	struct tb_reader *r;
	const char *cmd;
	int quiet;
	uint32_t id_sample, id_map, id_info, id_counters; /* UINT32_MAX: absent */
	int fi_sample[3];   /* stack, flags, overrun; -2 not looked up yet */
	int fi_map[5];      /* start, end, pgoff, gen, path */
	int fi_info[4];     /* hz, unwinder, exe, source */
	int fi_counters[6]; /* received, lost, invalid_pc, aborted, truncated, overruns */
	struct pproc *procs;
	size_t nprocs, pcap;
	struct cli_map proc_idx; /* pid -> index + 1 */
	struct sym_ctx *sym;
	struct prof_fn *fns;
	size_t nfns, fcap;
	struct cli_smap fn_idx;  /* key -> fid */
	struct cli_map cache;   /* (address, pid << 32 | epoch) -> fid */
	uint32_t nomap_fid;       /* UINT32_MAX: not created yet */
	uint64_t trace_lost, trace_lost_unknown;
	int loaded;
	int same_host; /* the trace was recorded on this host: its vDSO is ours */
};

static void on_sym_diag(void *arg, const char *path, const char *what)
{
	struct prof *p = arg;
	if (!p->quiet)
		cli_msg(stderr, "tracebuf %s: %s: %s", p->cmd, path, what);
}

struct prof *prof_open(struct tb_reader *r, const char *cmd, int quiet)
{
	struct prof *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->r = r;
	p->cmd = cmd;
	p->quiet = quiet;
	p->id_sample = p->id_map = p->id_info = p->id_counters = UINT32_MAX;
	p->nomap_fid = UINT32_MAX;
	p->fi_sample[0] = p->fi_map[0] = p->fi_info[0] = p->fi_counters[0] = -2;
	for (uint32_t id = 0; id < tb_reader_nclass_ids(r); id++) {
		const char *n = tb_reader_class_name(r, id);
		if (!n || strncmp(n, "profile:", 8))
			continue;
		if (!strcmp(n + 8, "sample"))
			p->id_sample = id;
		else if (!strcmp(n + 8, "map"))
			p->id_map = id;
		else if (!strcmp(n + 8, "info"))
			p->id_info = id;
		else if (!strcmp(n + 8, "counters"))
			p->id_counters = id;
	}
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	for (unsigned i = 0; i < tb_reader_nenv(r); i++)
		if (!strcmp(tb_reader_env_key(r, i), "hostname") && host[0])
			p->same_host = !strcmp(tb_reader_env_value(r, i), host);
	p->sym = sym_new(on_sym_diag, p);
	if (!p->sym) {
		free(p);
		return NULL;
	}
	return p;
}

void prof_close(struct prof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nprocs; i++) {
		struct pproc *q = &p->procs[i];
		for (uint32_t j = 0; j < q->nmaps; j++)
			free(q->maps[j].path);
		free(q->maps);
		free(q->by_start);
		free(q->maxend);
		free(q->info_unwinder);
		free(q->info_source);
		free(q->info_exe);
		free(q->name);
	}
	free(p->procs);
	cli_map_free(&p->proc_idx);
	for (size_t i = 0; i < p->nfns; i++) {
		free((char *)p->fns[i].name);
		free((char *)p->fns[i].module);
		free((char *)p->fns[i].path);
		free((char *)p->fns[i].label);
	}
	free(p->fns);
	cli_smap_free(&p->fn_idx);
	cli_map_free(&p->cache);
	sym_free(p->sym);
	free(p);
}

int prof_present(const struct prof *p)
{
	return p->id_sample != UINT32_MAX;
}

static struct pproc *proc_get(struct prof *p, uint32_t pid)
{
	uint64_t *v = cli_map_get(&p->proc_idx, pid, 0, 1);
	if (!v)
		return NULL;
	if (*v)
		return &p->procs[*v - 1];
	if (p->nprocs == p->pcap) {
		size_t cap = p->pcap ? 2 * p->pcap : 8;
		struct pproc *n = realloc(p->procs, cap * sizeof *n);
		if (!n)
			return NULL; /* the index entry stays 0: looked up again next time */
		p->procs = n;
		p->pcap = cap;
	}
	struct pproc *q = &p->procs[p->nprocs];
	memset(q, 0, sizeof *q);
	q->pub.pid = pid;
	*v = ++p->nprocs; /* v is still valid: no insertion since */
	return q;
}

/* field indexes of a class, looked up at its first event */
static void fields(const struct tb_rd_event *e, int *fi, const char *const *names, int n)
{
	if (fi[0] != -2)
		return;
	for (int i = 0; i < n; i++)
		fi[i] = tb_rd_field_index(e, names[i]);
}

static uint64_t fu64(const struct tb_rd_event *e, int fi)
{
	return fi >= 0 ? tb_rd_u64(e, (unsigned)fi) : 0;
}

static const char *fstr(const struct tb_rd_event *e, int fi)
{
	const char *s = fi >= 0 ? tb_rd_str(e, (unsigned)fi, NULL) : NULL;
	return s ? s : "";
}

static int add_map(struct prof *p, const struct tb_rd_event *e)
{
	static const char *const names[] = { "start", "end", "pgoff", "gen", "path" };
	fields(e, p->fi_map, names, 5);
	struct pproc *q = proc_get(p, tb_rd_pid(e));
	if (!q)
		return -ENOMEM;
	if (q->nmaps == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 64;
		struct pmap *n = realloc(q->maps, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		q->maps = n;
		q->cap = cap;
	}
	struct pmap *m = &q->maps[q->nmaps];
	memset(m, 0, sizeof *m);
	m->start = fu64(e, p->fi_map[0]);
	m->end = fu64(e, p->fi_map[1]);
	m->pgoff = fu64(e, p->fi_map[2]);
	m->gen = (uint32_t)fu64(e, p->fi_map[3]);
	m->path = strdup(fstr(e, p->fi_map[4]));
	if (!m->path)
		return -ENOMEM;
	m->file = !strcmp(m->path, "[vdso]") ? (p->same_host ? sym_vdso(p->sym, m->end - m->start) : NULL)
					      : sym_file_get(p->sym, m->path);
	if (m->end < m->start)
		m->end = m->start; /* a damaged record holds nothing */
	q->nmaps++;
	q->pub.nmaps++;
	if (m->gen < 256 && !(q->gens_seen[m->gen / 64] >> (m->gen % 64) & 1)) {
		q->gens_seen[m->gen / 64] |= 1ull << (m->gen % 64);
		q->pub.ngens++;
	}
	return 0;
}

static int set_info(struct prof *p, const struct tb_rd_event *e)
{
	static const char *const names[] = { "hz", "unwinder", "exe", "source" };
	fields(e, p->fi_info, names, 4);
	struct pproc *q = proc_get(p, tb_rd_pid(e));
	if (!q)
		return -ENOMEM;
	free(q->info_unwinder);
	free(q->info_exe);
	free(q->info_source);
	q->info_unwinder = strdup(fstr(e, p->fi_info[1]));
	q->info_exe = strdup(fstr(e, p->fi_info[2]));
	q->info_source = strdup(fstr(e, p->fi_info[3])); /* "" in traces before the field */
	if (!q->info_unwinder || !q->info_exe || !q->info_source)
		return -ENOMEM;
	q->pub.has_info = 1;
	q->pub.hz = (uint32_t)fu64(e, p->fi_info[0]);
	return 0;
}

static int set_counters(struct prof *p, const struct tb_rd_event *e)
{
	static const char *const names[] = { "received", "lost", "invalid_pc", "aborted", "truncated", "overruns" };
	fields(e, p->fi_counters, names, 6);
	struct pproc *q = proc_get(p, tb_rd_pid(e));
	if (!q)
		return -ENOMEM;
	/* one per process at its exit; should there be several, the last (they are running totals) */
	struct prof_counters *c = &q->pub.sampler;
	c->received = fu64(e, p->fi_counters[0]);
	c->lost = fu64(e, p->fi_counters[1]);
	c->invalid_pc = fu64(e, p->fi_counters[2]);
	c->aborted = fu64(e, p->fi_counters[3]);
	c->truncated = fu64(e, p->fi_counters[4]);
	c->overruns = fu64(e, p->fi_counters[5]);
	q->pub.has_counters = 1;
	return 0;
}

static const struct pmap *sort_maps_base;
static int cmp_by_start(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = sort_maps_base[x].start, sy = sort_maps_base[y].start;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_proc(const void *a, const void *b)
{
	uint32_t x = ((const struct pproc *)a)->pub.pid, y = ((const struct pproc *)b)->pub.pid;
	return x < y ? -1 : x > y;
}

static int finish_procs(struct prof *p)
{
	cli_sort(p->procs, p->nprocs, sizeof *p->procs, cmp_proc);
	cli_map_free(&p->proc_idx);
	for (size_t i = 0; i < p->nprocs; i++) {
		struct pproc *q = &p->procs[i];
		uint64_t *v = cli_map_get(&p->proc_idx, q->pub.pid, 0, 1);
		if (!v)
			return -ENOMEM;
		*v = i + 1;
		q->by_start = malloc((q->nmaps ? q->nmaps : 1) * sizeof *q->by_start);
		q->maxend = malloc((q->nmaps ? q->nmaps : 1) * sizeof *q->maxend);
		if (!q->by_start || !q->maxend)
			return -ENOMEM;
		for (uint32_t j = 0; j < q->nmaps; j++)
			q->by_start[j] = j;
		sort_maps_base = q->maps;
		cli_sort(q->by_start, q->nmaps, sizeof *q->by_start, cmp_by_start);
		uint64_t mx = 0;
		for (uint32_t j = 0; j < q->nmaps; j++) {
			uint64_t e = q->maps[q->by_start[j]].end;
			mx = e > mx ? e : mx;
			q->maxend[j] = mx;
		}
		/* the name: exe basename, else the recorder's comm, else "pid N" */
		const char *exe = q->info_exe && q->info_exe[0] ? q->info_exe : NULL;
		if (exe) {
			const char *b = strrchr(exe, '/');
			q->name = strdup(b && b[1] ? b + 1 : exe);
		} else {
			char nb[256];
			const char *n = cli_proc_name(p->r, q->pub.pid, nb, sizeof nb);
			q->name = n ? strdup(n) : NULL;
		}
		if (!q->name && asprintf(&q->name, "pid %" PRIu32, q->pub.pid) < 0)
			q->name = NULL;
		if (!q->name)
			return -ENOMEM;
		q->pub.name = q->name;
		q->pub.exe = q->info_exe;
		q->pub.unwinder = q->info_unwinder;
		q->pub.source = q->info_source;
	}
	return 0;
}

int prof_load(struct prof *p)
{
	const struct tb_rd_event *e;
	int rc = 0;
	while (!rc && cli_next(p->r, &e) > 0) {
		int kind = tb_rd_kind(e);
		if (kind == TB_RD_DISCARDED_EVENTS) {
			if (tb_rd_count(e))
				p->trace_lost += tb_rd_count(e);
			else
				p->trace_lost_unknown++;
			continue;
		}
		if (kind != TB_RD_EVENT)
			continue;
		uint32_t id = tb_rd_id(e);
		if (id == p->id_map)
			rc = add_map(p, e);
		else if (id == p->id_info)
			rc = set_info(p, e);
		else if (id == p->id_counters)
			rc = set_counters(p, e);
		else if (id == p->id_sample && !proc_get(p, tb_rd_pid(e)))
			rc = -ENOMEM;
	}
	if (!rc)
		rc = finish_procs(p);
	tb_reader_seek_ticks(p->r, 0);
	p->loaded = 1;
	return rc;
}

/* ---------------------------------------------------------------------- */
/* symbolisation                                                           */

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

static int new_fn(struct prof *p, const char *key, int kind, const char *name, const struct pmap *m, uint64_t off,
		  int file_offset, uint32_t *fid)
{
	uint64_t *v = cli_smap_get(&p->fn_idx, key, 1);
	if (!v)
		return -ENOMEM;
	if (*v) {
		*fid = (uint32_t)(*v - 1);
		return 0;
	}
	if (p->nfns == p->fcap) {
		size_t cap = p->fcap ? 2 * p->fcap : 256;
		struct prof_fn *n = realloc(p->fns, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		p->fns = n;
		p->fcap = cap;
	}
	struct prof_fn *f = &p->fns[p->nfns];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->off = off;
	f->file_offset = file_offset;
	char *readable = kind == PROF_SYM ? cli_demangle(name) : NULL; /* NULL: not mangled, or --no-demangle */
	f->name = readable ? readable : strdup(name ? name : "[unknown]");
	char *label = NULL;
	if (m) {
		const char *path = m->path[0] ? m->path : "[anon]";
		f->path = strdup(path);
		f->module = strdup(path[0] == '/' ? basename_of(path) : path);
		if (f->module && kind == PROF_NOSYM && asprintf(&label, "%s+0x%" PRIx64, f->module, off) < 0)
			label = NULL;
	}
	if (!label && kind != PROF_NOSYM)
		label = strdup(f->name ? f->name : "");
	f->label = label;
	if (!f->name || !f->label || (m && (!f->path || !f->module))) {
		free((char *)f->name);
		free((char *)f->path);
		free((char *)f->module);
		free(label);
		return -ENOMEM;
	}
	*fid = (uint32_t)p->nfns++;
	*v = *fid + 1;
	return 0;
}

/* the map of process q holding address a, for a sample after q's first `epoch` maps */
static const struct pmap *find_map(const struct pproc *q, uint64_t a)
{
	if (!q || !q->nmaps)
		return NULL;
	/* last map (by start) starting at or before a */
	size_t lo = 0, hi = q->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (q->maps[q->by_start[mid]].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t cur = -1, fut = -1;
	for (size_t j = lo; j-- > 0 && q->maxend[j] > a;) {
		uint32_t i = q->by_start[j];
		const struct pmap *m = &q->maps[i];
		if (a < m->start || a >= m->end)
			continue;
		if (i < q->epoch) {
			if ((int64_t)i > cur)
				cur = i; /* the latest map recorded before the sample */
		} else if (fut < 0 || (int64_t)i < fut) {
			fut = i; /* else the earliest recorded after it */
		}
	}
	return cur >= 0 ? &q->maps[cur] : fut >= 0 ? &q->maps[fut] : NULL;
}

/* fid of address a (already a - 1 for return addresses) in process q */
static int resolve(struct prof *p, struct pproc *q, uint64_t a, uint32_t *fid)
{
	uint64_t key2 = (uint64_t)q->pub.pid << 32 | q->epoch;
	uint64_t *c = cli_map_get(&p->cache, a, key2, 0);
	if (c) {
		*fid = (uint32_t)*c;
		return 0;
	}
	struct pmap *m = (struct pmap *)find_map(q, a);
	int rc;
	char *key = NULL;
	if (!m) {
		if (p->nomap_fid == UINT32_MAX && new_fn(p, "N", PROF_NOMAP, NULL, NULL, 0, 0, &p->nomap_fid))
			return -ENOMEM;
		*fid = p->nomap_fid;
	} else {
		if (!m->bias_state)
			m->bias_state = m->file && !sym_bias(m->file, m->start, m->pgoff, &m->bias) ? 1 : -1;
		const char *name = NULL;
		uint64_t off;
		int file_offset = 0;
		if (m->bias_state > 0) {
			off = a - m->bias;
			name = sym_name(m->file, off);
		} else {
			off = a - m->start + m->pgoff;
			file_offset = m->file != NULL;
		}
		/* one function per (file, symbol); an unknown address per (file, offset) */
		if (name)
			rc = asprintf(&key, "S%s%c%s", m->path, 1, name);
		else
			rc = asprintf(&key, "O%s%c%" PRIx64 "%c%d", m->path, 1, off, 1, file_offset);
		if (rc < 0)
			return -ENOMEM;
		rc = new_fn(p, key, name ? PROF_SYM : PROF_NOSYM, name, m, name ? 0 : off, file_offset, fid);
		free(key);
		if (rc)
			return rc;
	}
	c = cli_map_get(&p->cache, a, key2, 1);
	if (!c)
		return -ENOMEM;
	*c = *fid;
	return 0;
}

int prof_event(struct prof *p, const struct tb_rd_event *e, struct prof_sample *s)
{
	if (tb_rd_kind(e) != TB_RD_EVENT)
		return 0;
	uint32_t id = tb_rd_id(e);
	if (id == p->id_map) {
		struct pproc *q = proc_get(p, tb_rd_pid(e));
		if (!q)
			return -ENOMEM;
		if (q->epoch < q->nmaps)
			q->epoch++;
		return 0;
	}
	if (id != p->id_sample)
		return 0;
	static const char *const names[] = { "stack", "flags", "overrun" };
	fields(e, p->fi_sample, names, 3);
	struct pproc *q = proc_get(p, tb_rd_pid(e));
	if (!q)
		return -ENOMEM;
	s->pid = tb_rd_pid(e);
	s->tid = tb_rd_tid(e);
	s->ns = tb_rd_ns(e);
	s->flags = (uint32_t)fu64(e, p->fi_sample[1]);
	s->overrun = (uint32_t)fu64(e, p->fi_sample[2]);
	s->weight = 1 + (uint64_t)s->overrun;
	s->n = 0;
	uint32_t cnt = 0;
	if (p->fi_sample[0] >= 0)
		tb_rd_seq(e, (unsigned)p->fi_sample[0], &cnt);
	if (cnt > TB_PROF_MAX_DEPTH)
		cnt = TB_PROF_MAX_DEPTH; /* a damaged record: the contract bounds it */
	s->pc = cnt ? tb_rd_seq_u64(e, (unsigned)p->fi_sample[0], 0) : 0;

	struct prof_proc *pp = &q->pub;
	if (!pp->seen.received || s->ns < pp->first_ns)
		pp->first_ns = s->ns;
	if (!pp->seen.received || s->ns > pp->last_ns)
		pp->last_ns = s->ns;
	pp->seen.received++;
	pp->periods += s->weight;
	pp->seen.overruns += s->overrun;
	pp->seen.aborted += !!(s->flags & TB_PROF_F_ABORTED);
	pp->seen.truncated += !!(s->flags & TB_PROF_F_TRUNCATED);
	if (!s->pc) {
		s->invalid = PROF_PC_ZERO;
		pp->seen.invalid_pc++;
		return 1;
	}
	/* the PC is looked up as is; return addresses point after their call: addr - 1 */
	for (uint32_t j = 0; j < cnt; j++) {
		uint64_t a = j ? tb_rd_seq_u64(e, (unsigned)p->fi_sample[0], j) : s->pc;
		if (j && !a)
			break; /* the end of the chain */
		int rc = resolve(p, q, j ? a - 1 : a, &s->fid[s->n]);
		if (rc)
			return rc;
		if (!j && p->fns[s->fid[0]].kind == PROF_NOMAP) {
			s->invalid = PROF_PC_UNMAPPED;
			pp->unmapped++;
			return 1;
		}
		s->n++;
	}
	s->invalid = PROF_VALID;
	return 1;
}

const struct prof_fn *prof_fn(const struct prof *p, uint32_t fid)
{
	return fid < p->nfns ? &p->fns[fid] : NULL;
}

size_t prof_nprocs(const struct prof *p)
{
	return p->nprocs;
}

const struct prof_proc *prof_proc(const struct prof *p, size_t i)
{
	return i < p->nprocs ? &p->procs[i].pub : NULL;
}

const struct prof_proc *prof_proc_of(const struct prof *p, uint32_t pid)
{
	uint64_t *v = cli_map_get((struct cli_map *)&p->proc_idx, pid, 0, 0);
	return v && *v ? &p->procs[*v - 1].pub : NULL;
}

void prof_trace_lost(const struct prof *p, uint64_t *events, uint64_t *unknown)
{
	*events = p->trace_lost;
	*unknown = p->trace_lost_unknown;
}

size_t prof_nproblems(const struct prof *p) { return sym_nproblems(p->sym); }
const char *prof_problem_file(const struct prof *p, size_t i) { return sym_problem_file(p->sym, i); }
const char *prof_problem_what(const struct prof *p, size_t i) { return sym_problem_what(p->sym, i); }

void prof_totals(const struct prof *p, struct prof_totals *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct prof_proc *q = &p->procs[i].pub;
		if (!q->seen.received && !q->has_counters)
			continue;
		t->nprocs++;
		t->samples += q->seen.received;
		t->periods += q->periods;
		t->unmapped += q->unmapped;
		const struct prof_counters *c = q->has_counters ? &q->sampler : &q->seen;
		t->with_counters += q->has_counters;
		t->c.received += c->received;
		t->c.lost += c->lost;
		t->pc_zero += c->invalid_pc;
		t->c.aborted += c->aborted;
		t->c.truncated += c->truncated;
		t->c.overruns += c->overruns;
	}
	t->trace_lost = p->trace_lost;
	t->trace_lost_unknown = p->trace_lost_unknown;
	if (!t->with_counters)
		t->c.lost = p->trace_lost; /* what the trace shows: events of any class */
	t->c.invalid_pc = t->pc_zero + t->unmapped;
}

/* ---------------------------------------------------------------------- */
/* aggregation                                                             */

static struct prof_row *row_of(struct prof_agg *a, uint32_t fid)
{
	uint64_t *v = cli_map_get(&a->idx, fid, 0, 1);
	if (!v)
		return NULL;
	if (!*v) {
		if (a->nrows == a->cap) {
			size_t cap = a->cap ? 2 * a->cap : 64;
			struct prof_row *n = realloc(a->rows, cap * sizeof *n);
			if (!n)
				return NULL; /* *v stays 0: created again next time */
			a->rows = n;
			a->cap = cap;
		}
		memset(&a->rows[a->nrows], 0, sizeof a->rows[0]);
		a->rows[a->nrows].fid = fid;
		*v = ++a->nrows;
	}
	return &a->rows[*v - 1];
}

int prof_agg_add(struct prof_agg *a, const struct prof_sample *s)
{
	if (s->invalid || !s->n)
		return 0;
	a->samples++;
	a->periods += s->weight;
	uint64_t stamp = ++a->nadd;
	for (uint32_t j = 0; j < s->n; j++) {
		struct prof_row *r = row_of(a, s->fid[j]);
		if (!r)
			return -ENOMEM;
		if (!j)
			r->self += s->weight;
		if (r->last != stamp) { /* once per sample, however deep the recursion */
			r->last = stamp;
			r->total += s->weight;
		}
	}
	return 0;
}

static const struct prof *cmp_prof;
static int cmp_by;
static int cmp_rows(const void *x, const void *y)
{
	const struct prof_row *a = x, *b = y;
	uint64_t va = cmp_by ? a->total : a->self, vb = cmp_by ? b->total : b->self;
	if (va != vb)
		return va > vb ? -1 : 1;
	const struct prof_fn *fa = prof_fn(cmp_prof, a->fid), *fb = prof_fn(cmp_prof, b->fid);
	int c = strcmp(fa->label, fb->label);
	if (c)
		return c;
	c = strcmp(fa->path ? fa->path : "", fb->path ? fb->path : "");
	if (c)
		return c;
	return a->fid < b->fid ? -1 : a->fid > b->fid;
}

size_t prof_agg_sorted(const struct prof_agg *a, const struct prof *p, int by_total, struct prof_row **out)
{
	*out = NULL;
	if (!a->nrows)
		return 0;
	struct prof_row *r = malloc(a->nrows * sizeof *r);
	if (!r)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < a->nrows; i++)
		if (by_total ? a->rows[i].total : a->rows[i].self)
			r[n++] = a->rows[i];
	cmp_prof = p;
	cmp_by = by_total;
	cli_sort(r, n, sizeof *r, cmp_rows);
	*out = r;
	return n;
}

void prof_agg_free(struct prof_agg *a)
{
	cli_map_free(&a->idx);
	free(a->rows);
	memset(a, 0, sizeof *a);
}

int prof_load_samples(struct prof *p, const char *dir, const char *to)
{
	if (!prof_present(p))
		return cli_error("convert", "%s has no profile:sample events: --to %s needs a trace written by "
					    "`tracebuf profile`", dir, to);
	if (prof_load(p))
		return cli_error("convert", "out of memory");
	return TB_EXIT_OK;
}

int prof_next_sample(struct prof *p, struct tb_reader *r, struct prof_sample *s)
{
	const struct tb_rd_event *e;
	while (cli_next(r, &e) > 0) {
		int k = prof_event(p, e, s);
		if (k)
			return k; /* 1: a sample; -ENOMEM */
	}
	return 0;
}
