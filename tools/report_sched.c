/* SPDX-License-Identifier: MIT */
/*
 * report_sched.c - thread states from the kernel's sched events
 * (report_sched.h).  A state machine per thread, driven in time order:
 *
 *   sched_switch      prev: runnable if it was preempted (prev_state 0, or
 *                     the preemption bit TASK_REPORT_MAX = 0x100 of
 *                     LTTng and ftrace), dead after its
 *                     sched_process_exit, else blocked (S, D, ...);
 *                     next: running
 *   sched_waking/_wakeup   a blocked (or not yet known) thread: runnable
 *   sched_wakeup_new, sched_process_fork (the child): runnable
 *
 * Time before a thread's first state event is unknown and not counted:
 * running + runnable + blocked is the time the trace knows the thread.
 * A span (NAME_begin ... NAME_end written by one thread) gets the split
 * of its thread's states between its two events.  The threads shown are
 * those of the traced programs: the writers of user events, the command
 * (env cmd_pid) and what they forked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_report.h"
#include "report_sched.h"

enum { ST_RUN, ST_RUNNABLE, ST_BLOCKED, ST_N, ST_UNKNOWN = -1, ST_DEAD = -2 };
enum { K_SWITCH, K_WAKING, K_WAKEUP, K_WAKEUP_NEW, K_FORK, K_EXIT, K_N };
static const char *const knames[K_N] = { "sched_switch", "sched_waking", "sched_wakeup",
					  "sched_wakeup_new", "sched_process_fork", "sched_process_exit" };

#define PREEMPTED 0x100 /* TASK_REPORT_MAX: the prev_state of a preempted task */

struct open_span {
	uint32_t name;         /* index in spans */
	uint64_t begin;
	uint64_t acc[ST_N];
};

struct thr {
	uint32_t tid;
	int state;
	int exiting, shown;
	uint64_t since, acc[ST_N];
	char comm[16];
	struct open_span *open;
	size_t nopen, capopen;
};

struct span {
	char name[96];
	uint64_t count, dur, acc[ST_N];
};

struct rs_state {
	struct tb_reader *r;
	uint32_t nid;
	int8_t *kind;          /* per class id: K_*, or -1; -2 not looked at yet */
	int8_t *role;          /* per class id: 1 NAME_begin, 2 NAME_end, 0 none, -1 not looked at */
	uint32_t *span_of;     /* per class id: index in spans */
	struct thr *t;         /* open addressing on tid */
	size_t tcap, tn;
	struct span *spans;
	size_t nspans, capspans;
	uint32_t cmd_pid;
	rs_interval_fn on_interval;
	void *on_arg;
	int err;               /* the first error of on_interval */
};

static struct thr *thr_get(struct rs_state *s, uint32_t tid)
{
	if ((s->tn + 1) * 2 > s->tcap) {
		size_t cap = s->tcap ? s->tcap * 2 : 64;
		struct thr *n = calloc(cap, sizeof *n), *old = s->t;
		if (!n)
			return NULL;
		for (size_t i = 0; i < s->tcap; i++) {
			if (!old[i].tid)
				continue;
			size_t j = ((size_t)old[i].tid * 2654435761u) & (cap - 1);
			while (n[j].tid)
				j = (j + 1) & (cap - 1);
			n[j] = old[i];
		}
		free(old);
		s->t = n;
		s->tcap = cap;
	}
	size_t j = ((size_t)tid * 2654435761u) & (s->tcap - 1);
	while (s->t[j].tid && s->t[j].tid != tid)
		j = (j + 1) & (s->tcap - 1);
	if (!s->t[j].tid) {
		memset(&s->t[j], 0, sizeof s->t[j]);
		s->t[j].tid = tid;
		s->t[j].state = ST_UNKNOWN;
		s->t[j].shown = tid == s->cmd_pid;
		s->tn++;
	}
	return &s->t[j];
}

struct rs_state *rs_new(struct tb_reader *r)
{
	uint32_t nid = tb_reader_nclass_ids(r);
	int have = 0;
	for (uint32_t id = 0; id < nid && !have; id++) {
		const char *n = tb_reader_class_name(r, id);
		have = n && !strcmp(n, "sched_switch");
	}
	if (!have)
		return NULL;
	struct rs_state *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->r = r;
	s->nid = nid;
	s->kind = malloc(nid);
	s->role = malloc(nid);
	s->span_of = calloc(nid, sizeof *s->span_of);
	if (!s->kind || !s->role || !s->span_of) {
		rs_free(s);
		return NULL;
	}
	memset(s->kind, -2, nid);
	memset(s->role, -1, nid);
	for (unsigned i = 0; i < tb_reader_nenv(r); i++)
		if (!strcmp(tb_reader_env_key(r, i), "cmd_pid"))
			s->cmd_pid = (uint32_t)strtoul(tb_reader_env_value(r, i), NULL, 10);
	return s;
}

/* Accounts the time since the last change, in its state, to the thread and its open spans. */
static void account(struct rs_state *s, struct thr *t, uint64_t ts)
{
	if (t->state >= 0 && ts > t->since) {
		uint64_t d = ts - t->since;
		if (s->on_interval && !s->err)
			s->err = s->on_interval(s->on_arg, t->tid, t->state, t->since, ts);
		t->acc[t->state] += d;
		for (size_t i = 0; i < t->nopen; i++)
			t->open[i].acc[t->state] += d;
	}
	if (ts > t->since || t->state < 0)
		t->since = ts;
}

static void set_state(struct rs_state *s, struct thr *t, int st, uint64_t ts)
{
	if (t->state == ST_DEAD)
		return;
	account(s, t, ts);
	t->state = st;
}

static int64_t fi(const struct tb_rd_event *e, const char *name)
{
	int i = tb_rd_field_index(e, name);
	return i < 0 ? -1 : tb_rd_i64(e, (unsigned)i);
}

static void comm_of(struct thr *t, const struct tb_rd_event *e, const char *name)
{
	int i = tb_rd_field_index(e, name);
	size_t n;
	const char *c = i < 0 ? NULL : tb_rd_str(e, (unsigned)i, &n);
	if (c)
		snprintf(t->comm, sizeof t->comm, "%.*s", (int)(n < 15 ? n : 15), c);
}

static int kernel_event(struct rs_state *s, int k, const struct tb_rd_event *e, uint64_t ts)
{
	struct thr *t;
	switch (k) {
	case K_SWITCH: {
		int64_t prev = fi(e, "prev_tid"), next = fi(e, "next_tid"), st = fi(e, "prev_state");
		if (prev > 0 && (t = thr_get(s, (uint32_t)prev)) != NULL) {
			comm_of(t, e, "prev_comm");
			int ns = t->exiting ? ST_DEAD
				 : (st & 0xff) == 0 || (st & PREEMPTED) ? ST_RUNNABLE
									 : ST_BLOCKED;
			set_state(s, t, ns, ts);
		}
		if (next > 0 && (t = thr_get(s, (uint32_t)next)) != NULL) {
			comm_of(t, e, "next_comm");
			set_state(s, t, ST_RUN, ts);
		}
		return 0;
	}
	case K_WAKING:
	case K_WAKEUP: {
		int64_t tid = fi(e, "tid");
		if (tid > 0 && (t = thr_get(s, (uint32_t)tid)) != NULL && (t->state == ST_BLOCKED || t->state == ST_UNKNOWN))
			set_state(s, t, ST_RUNNABLE, ts);
		return 0;
	}
	case K_WAKEUP_NEW: {
		int64_t tid = fi(e, "tid");
		if (tid > 0 && (t = thr_get(s, (uint32_t)tid)) != NULL && t->state != ST_RUN)
			set_state(s, t, ST_RUNNABLE, ts);
		return 0;
	}
	case K_FORK: {
		int64_t parent = fi(e, "parent_tid"), child = fi(e, "child_tid");
		struct thr *p = parent > 0 ? thr_get(s, (uint32_t)parent) : NULL;
		int shown = p && p->shown;
		if (child > 0 && (t = thr_get(s, (uint32_t)child)) != NULL) {
			t->shown |= shown;
			comm_of(t, e, "child_comm");
			if (t->state == ST_UNKNOWN)
				set_state(s, t, ST_RUNNABLE, ts);
		}
		return 0;
	}
	case K_EXIT: {
		int64_t tid = fi(e, "tid");
		if (tid > 0 && (t = thr_get(s, (uint32_t)tid)) != NULL)
			t->exiting = 1;
		return 0;
	}
	}
	return 0;
}

static uint32_t span_index(struct rs_state *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->nspans; i++)
		if (strlen(s->spans[i].name) == len && !memcmp(s->spans[i].name, name, len))
			return (uint32_t)i;
	if (s->nspans == s->capspans) {
		size_t cap = s->capspans ? s->capspans * 2 : 16;
		struct span *n = realloc(s->spans, cap * sizeof *n);
		if (!n)
			return UINT32_MAX;
		s->spans = n;
		s->capspans = cap;
	}
	struct span *sp = &s->spans[s->nspans];
	memset(sp, 0, sizeof *sp);
	snprintf(sp->name, sizeof sp->name, "%.*s", (int)len, name);
	return (uint32_t)s->nspans++;
}

static void look(struct rs_state *s, uint32_t id, const char *name)
{
	s->kind[id] = -1;
	s->role[id] = 0;
	for (int k = 0; k < K_N; k++)
		if (!strcmp(name, knames[k]))
			s->kind[id] = (int8_t)k;
	size_t n = strlen(name);
	if (s->kind[id] < 0 && n > 6 && !strcmp(name + n - 6, "_begin"))
		s->role[id] = 1, s->span_of[id] = span_index(s, name, n - 6);
	else if (s->kind[id] < 0 && n > 4 && !strcmp(name + n - 4, "_end"))
		s->role[id] = 2, s->span_of[id] = span_index(s, name, n - 4);
	if (s->role[id] && s->span_of[id] == UINT32_MAX)
		s->role[id] = 0;
}

int rs_event(struct rs_state *s, const struct tb_rd_event *e)
{
	if (!s || tb_rd_kind(e) != TB_RD_EVENT)
		return 0;
	uint32_t id = tb_rd_id(e);
	if (id >= s->nid)
		return 0;
	if (s->kind[id] == -2) {
		const char *name = tb_rd_name(e);
		look(s, id, name ? name : "");
	}
	uint64_t ts = tb_rd_ticks(e);
	if (s->kind[id] >= 0) {
		kernel_event(s, s->kind[id], e, ts);
		return s->err;
	}
	/* a user event: its writer is one of the traced threads */
	uint32_t tid = tb_rd_tid(e);
	if (!tid)
		return 0;
	struct thr *t = thr_get(s, tid);
	if (!t)
		return -ENOMEM;
	t->shown = 1;
	if (s->role[id] == 1) {
		account(s, t, ts);
		if (t->nopen == t->capopen) {
			size_t cap = t->capopen ? t->capopen * 2 : 4;
			struct open_span *n = realloc(t->open, cap * sizeof *n);
			if (!n)
				return -ENOMEM;
			t->open = n;
			t->capopen = cap;
		}
		struct open_span *o = &t->open[t->nopen++];
		memset(o, 0, sizeof *o);
		o->name = s->span_of[id];
		o->begin = ts;
	} else if (s->role[id] == 2) {
		account(s, t, ts);
		/* the innermost open span of that name */
		for (size_t i = t->nopen; i-- > 0;) {
			if (t->open[i].name != s->span_of[id])
				continue;
			struct span *sp = &s->spans[t->open[i].name];
			sp->count++;
			sp->dur += ts - t->open[i].begin;
			for (int k = 0; k < ST_N; k++)
				sp->acc[k] += t->open[i].acc[k];
			t->nopen = i; /* spans opened inside it are dropped with it */
			break;
		}
	}
	return s->err;
}

void rs_on_interval(struct rs_state *s, rs_interval_fn fn, void *arg)
{
	if (s) {
		s->on_interval = fn;
		s->on_arg = arg;
	}
}

void rs_finish(struct rs_state *s, uint64_t end)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->tcap; i++)
		if (s->t[i].tid)
			account(s, &s->t[i], end);
}

static double ns_of(const struct rs_state *s, uint64_t ticks)
{
	return (double)ticks * 1e9 / (double)tb_reader_clock_freq(s->r);
}

static uint64_t total(const struct thr *t)
{
	return t->acc[ST_RUN] + t->acc[ST_RUNNABLE] + t->acc[ST_BLOCKED];
}

static int cmp_total(const void *a, const void *b)
{
	const struct thr *x = *(const struct thr *const *)a, *y = *(const struct thr *const *)b;
	uint64_t tx = total(x), ty = total(y);
	return tx < ty ? 1 : tx > ty ? -1 : (x->tid > y->tid) - (x->tid < y->tid);
}

/* The shown threads, longest known first (a malloc'd array; *n). */
static const struct thr **shown(const struct rs_state *s, size_t *n)
{
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct thr **v = calloc(s->tn ? s->tn : 1, sizeof *v);
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->tcap; i++)
		if (s->t[i].tid && s->t[i].shown && total(&s->t[i]))
			v[(*n)++] = &s->t[i];
	cli_sort(v, *n, sizeof *v, cmp_total); // NOLINT(bugprone-sizeof-expression): an array of pointers
	return v;
}

static const char *dur(char *b, const struct rs_state *s, uint64_t ticks)
{
	return rpt_dur(b, (int64_t)ns_of(s, ticks));
}

void rs_print_text(const struct rs_state *s, FILE *f, size_t max_threads)
{
	if (!s)
		return;
	size_t n;
	const struct thr **v = shown(s, &n);
	if (!v)
		return;
	char a[32], b[32], c[32], d[32], nb[96];
	fprintf(f, "\nthread states (kernel sched events; runnable = waiting for a CPU)\n");
	fprintf(f, "  %8s  %-16s %12s %12s %12s %12s\n", "tid", "name", "running", "runnable", "blocked", "known for");
	for (size_t i = 0; i < n && (!max_threads || i < max_threads); i++) {
		const struct thr *t = v[i];
		const char *nm = tb_reader_thread_name(s->r, t->tid);
		/* names from the trace: the one text rule (a hostile trace's comm sends no escape) */
		fprintf(f, "  %8u  %-16s %12s %12s %12s %12s\n", t->tid, cli_tx(nb, sizeof nb, nm ? nm : t->comm),
			dur(a, s, t->acc[ST_RUN]),
			dur(b, s, t->acc[ST_RUNNABLE]), dur(c, s, t->acc[ST_BLOCKED]), dur(d, s, total(t)));
	}
	if (max_threads && n > max_threads)
		fprintf(f, "  ... %zu more (--threads 0 shows all)\n", n - max_threads);
	free(v);
	if (!s->nspans)
		return;
	int any = 0;
	for (size_t i = 0; i < s->nspans; i++) {
		const struct span *sp = &s->spans[i];
		if (!sp->count)
			continue;
		if (!any++)
			fprintf(f, "\nspan states (NAME_begin .. NAME_end: where the time went)\n  %-24s %8s %12s %12s "
				   "%12s %12s\n",
				"span", "count", "total", "running", "runnable", "blocked");
		fprintf(f, "  %-24s %8" PRIu64 " %12s %12s %12s %12s\n", cli_tx(nb, sizeof nb, sp->name), sp->count,
			dur(a, s, sp->dur),
			dur(b, s, sp->acc[ST_RUN]), dur(c, s, sp->acc[ST_RUNNABLE]), dur(d, s, sp->acc[ST_BLOCKED]));
	}
}

void rs_print_json(const struct rs_state *s, FILE *f)
{
	if (!s)
		return;
	size_t n;
	const struct thr **v = shown(s, &n);
	fputs(",\"sched\":{\"threads\":[", f);
	for (size_t i = 0; v && i < n; i++) {
		const struct thr *t = v[i];
		const char *nm = tb_reader_thread_name(s->r, t->tid);
		fprintf(f, "%s{\"tid\":%u,\"name\":", i ? "," : "", t->tid);
		rpt_jstr(f, nm ? nm : t->comm);
		fprintf(f, ",\"running_ns\":%.0f,\"runnable_ns\":%.0f,\"blocked_ns\":%.0f,\"known_ns\":%.0f}",
			ns_of(s, t->acc[ST_RUN]), ns_of(s, t->acc[ST_RUNNABLE]), ns_of(s, t->acc[ST_BLOCKED]),
			ns_of(s, total(t)));
	}
	free(v);
	fputs("],\"spans\":[", f);
	int first = 1;
	for (size_t i = 0; i < s->nspans; i++) {
		const struct span *sp = &s->spans[i];
		if (!sp->count)
			continue;
		fprintf(f, "%s{\"name\":", first ? "" : ",");
		first = 0;
		rpt_jstr(f, sp->name);
		fprintf(f, ",\"count\":%" PRIu64 ",\"total_ns\":%.0f,\"running_ns\":%.0f,\"runnable_ns\":%.0f,"
			   "\"blocked_ns\":%.0f}",
			sp->count, ns_of(s, sp->dur), ns_of(s, sp->acc[ST_RUN]), ns_of(s, sp->acc[ST_RUNNABLE]),
			ns_of(s, sp->acc[ST_BLOCKED]));
	}
	fputs("]}", f);
}

void rs_free(struct rs_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->tcap; i++)
		free(s->t[i].open);
	free(s->t);
	free(s->spans);
	free(s->kind);
	free(s->role);
	free(s->span_of);
	free(s);
}
