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
 * With system calls and page faults recorded (--kernel=sched,syscalls,
 * page_faults), what a thread was blocked in: the system call it had
 * entered and not left when it was switched out blocked, else the page
 * fault it took last (a thread blocks only inside the kernel: in a call,
 * or in a fault; an interrupt preempts, it does not block), else nothing
 * known.  Per thread and per span: blocked time by that cause.
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
enum { K_SWITCH, K_WAKING, K_WAKEUP, K_WAKEUP_NEW, K_FORK, K_EXIT, K_SYS_ENTER, K_SYS_EXIT, K_FAULT, K_N };
static const char *const knames[K_N] = { "sched_switch",	 "sched_waking",       "sched_wakeup",
					  "sched_wakeup_new",	 "sched_process_fork", "sched_process_exit",
					  "syscall_entry",	 "syscall_exit",       "x86_exceptions_page_fault_user" };

#define NO_CAUSE UINT32_MAX
#define MAX_CALL_NR 1024u /* system call numbers looked up directly; beyond: by name */
#define MAX_CAUSES 4096u  /* names kept apart (a real kernel has ~460 calls) */
#define SPAN_CAUSES 4 /* the causes an open span keeps apart; more go to the last slot's "other" */

/* blocked time by cause: a call (index in rs_state.causes), its blocked ticks, the calls made */
struct cause_acc {
	uint32_t cause;
	uint64_t blocked, count;
};

struct cause_list {
	struct cause_acc *v;
	size_t n, cap;
};

#define PREEMPTED 0x100 /* TASK_REPORT_MAX: the prev_state of a preempted task */

struct open_span {
	uint32_t name;         /* index in spans */
	uint64_t begin;
	uint64_t acc[ST_N];
	struct cause_acc causes[SPAN_CAUSES]; /* blocked time by cause (cause NO_CAUSE: unused) */
	uint64_t other;        /* blocked time in further causes */
};

struct thr {
	uint32_t tid;
	int state;
	int exiting, shown;
	uint64_t since, acc[ST_N];
	char comm[16];
	struct open_span *open;
	size_t nopen, capopen;
	uint32_t in_call;      /* the system call entered and not left (a cause), NO_CAUSE: none */
	int faulted;           /* its last kernel entry seen was a page fault */
	uint32_t cause;        /* what the current blocked state is in, NO_CAUSE: not known */
	struct cause_list causes;
};

struct span {
	char name[96];
	uint64_t count, dur, acc[ST_N];
	struct cause_list causes;
	uint64_t other;        /* blocked in causes its open spans could not keep apart */
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
	char **causes;         /* the causes' names: system calls, "page fault" (each its own
				* allocation: a name's address stays valid while s lives) */
	size_t ncauses, capcauses;
	uint32_t *cause_of_call; /* per system call number < MAX_CALL_NR: its cause, NO_CAUSE: none yet */
	uint32_t fault_cause, other_cause;
	int have_causes;       /* system call or page fault events were seen */
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
		s->t[j].in_call = s->t[j].cause = NO_CAUSE;
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
	s->cause_of_call = malloc(MAX_CALL_NR * sizeof *s->cause_of_call);
	s->fault_cause = s->other_cause = NO_CAUSE;
	if (!s->kind || !s->role || !s->span_of || !s->cause_of_call) {
		rs_free(s);
		return NULL;
	}
	memset(s->kind, -2, nid);
	for (unsigned i = 0; i < MAX_CALL_NR; i++)
		s->cause_of_call[i] = NO_CAUSE;
	memset(s->role, -1, nid);
	for (unsigned i = 0; i < tb_reader_nenv(r); i++)
		if (!strcmp(tb_reader_env_key(r, i), "cmd_pid"))
			s->cmd_pid = (uint32_t)strtoul(tb_reader_env_value(r, i), NULL, 10);
	return s;
}

/* Accounts the time since the last change, in its state, to the thread and its open spans. */
/* the entry of `cause` in list l (added with zeros), NULL: out of memory */
static struct cause_acc *cause_in(struct cause_list *l, uint32_t cause)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].cause == cause)
			return &l->v[i];
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct cause_acc *n = realloc(l->v, cap * sizeof *n);
		if (!n)
			return NULL;
		l->v = n;
		l->cap = cap;
	}
	l->v[l->n] = (struct cause_acc){ .cause = cause };
	return &l->v[l->n++];
}

static void open_span_blocked(struct open_span *o, uint32_t cause, uint64_t d)
{
	for (unsigned k = 0; k < SPAN_CAUSES; k++) {
		if (o->causes[k].cause == cause || o->causes[k].cause == NO_CAUSE) {
			o->causes[k].cause = cause;
			o->causes[k].blocked += d;
			return;
		}
	}
	o->other += d;
}

static const char *cause_name(const struct rs_state *s, uint32_t c)
{
	return c < s->ncauses ? s->causes[c] : NULL;
}

static void account(struct rs_state *s, struct thr *t, uint64_t ts)
{
	if (t->state >= 0 && ts > t->since) {
		uint64_t d = ts - t->since;
		uint32_t cause = t->state == ST_BLOCKED ? t->cause : NO_CAUSE;
		if (s->on_interval && !s->err)
			s->err = s->on_interval(s->on_arg, t->tid, t->state, t->since, ts, cause_name(s, cause));
		t->acc[t->state] += d;
		for (size_t i = 0; i < t->nopen; i++)
			t->open[i].acc[t->state] += d;
		if (cause != NO_CAUSE) {
			struct cause_acc *c = cause_in(&t->causes, cause);
			if (c)
				c->blocked += d;
			else
				s->err = -ENOMEM;
			for (size_t i = 0; i < t->nopen; i++)
				open_span_blocked(&t->open[i], cause, d);
		}
	}
	if (ts > t->since || t->state < 0)
		t->since = ts;
}

static void set_state(struct rs_state *s, struct thr *t, int st, uint64_t ts)
{
	if (t->state == ST_DEAD)
		return;
	account(s, t, ts);
	if (st == ST_BLOCKED && t->state != ST_BLOCKED)
		t->cause = t->in_call != NO_CAUSE ? t->in_call : t->faulted ? s->fault_cause : NO_CAUSE;
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

static uint32_t cause_add(struct rs_state *s, const char *name)
{
	if (s->ncauses == s->capcauses) {
		size_t cap = s->capcauses ? s->capcauses * 2 : 32;
		char **n = realloc(s->causes, cap * sizeof *n);
		if (!n)
			return NO_CAUSE;
		s->causes = n;
		s->capcauses = cap;
	}
	if (!(s->causes[s->ncauses] = strdup(name)))
		return NO_CAUSE;
	return (uint32_t)s->ncauses++;
}

/* The cause of a syscall_entry: its call, by number (named by the event's
 * name field, or "syscall_N" where the recorder knew no name). */
static uint32_t call_cause(struct rs_state *s, const struct tb_rd_event *e)
{
	int64_t nr = fi(e, "id");
	if (nr >= 0 && (uint64_t)nr < MAX_CALL_NR && s->cause_of_call && s->cause_of_call[nr] != NO_CAUSE)
		return s->cause_of_call[nr];
	char name[32];
	int i = tb_rd_field_index(e, "name");
	size_t n = 0;
	const char *c = i < 0 ? NULL : tb_rd_str(e, (unsigned)i, &n);
	if (c && n)
		snprintf(name, sizeof name, "%.*s", (int)(n < 31 ? n : 31), c);
	else
		snprintf(name, sizeof name, "syscall_%" PRId64, nr);
	for (size_t k = 0; k < s->ncauses; k++)
		if (!strcmp(s->causes[k], name))
			return (uint32_t)k;
	if (s->ncauses >= MAX_CAUSES) { /* a hostile trace's endless names: one bucket for the rest */
		if (s->other_cause == NO_CAUSE)
			s->other_cause = cause_add(s, "other calls");
		return s->other_cause;
	}
	uint32_t cause = cause_add(s, name);
	if (cause != NO_CAUSE && nr >= 0 && (uint64_t)nr < MAX_CALL_NR && s->cause_of_call)
		s->cause_of_call[nr] = cause;
	return cause;
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
	case K_SYS_ENTER:
	case K_SYS_EXIT:
	case K_FAULT: {
		/* the task they happened to: the current one, in the payload (src/kernel/tracepoints.c) */
		int64_t tid = fi(e, "tid");
		if (tid <= 0 || !(t = thr_get(s, (uint32_t)tid)))
			return tid <= 0 ? 0 : -ENOMEM;
		s->have_causes = 1;
		if (k == K_FAULT) {
			if (s->fault_cause == NO_CAUSE && (s->fault_cause = cause_add(s, "page fault")) == NO_CAUSE)
				return -ENOMEM;
			t->faulted = 1;
			return 0;
		}
		if (k == K_SYS_EXIT) {
			t->in_call = NO_CAUSE;
			return 0;
		}
		uint32_t c = call_cause(s, e);
		if (c == NO_CAUSE)
			return -ENOMEM;
		t->in_call = c;
		t->faulted = 0;
		struct cause_acc *a = cause_in(&t->causes, c);
		if (!a)
			return -ENOMEM;
		a->count++;
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
		int rc = kernel_event(s, s->kind[id], e, ts);
		return rc ? rc : s->err;
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
		for (unsigned k = 0; k < SPAN_CAUSES; k++)
			o->causes[k].cause = NO_CAUSE;
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
			for (unsigned k = 0; k < SPAN_CAUSES && t->open[i].causes[k].cause != NO_CAUSE; k++) {
				struct cause_acc *c = cause_in(&sp->causes, t->open[i].causes[k].cause);
				if (!c)
					return -ENOMEM;
				c->blocked += t->open[i].causes[k].blocked;
				c->count++;
			}
			sp->other += t->open[i].other;
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

static int cmp_blocked(const void *a, const void *b)
{
	const struct cause_acc *x = a, *y = b;
	return x->blocked < y->blocked ? 1 : x->blocked > y->blocked ? -1 : (x->cause > y->cause) - (x->cause < y->cause);
}

/* l's causes, most blocked first (a malloc'd copy; NULL when empty or out of memory) */
static struct cause_acc *by_blocked(const struct cause_list *l)
{
	if (!l->n)
		return NULL;
	struct cause_acc *v = malloc(l->n * sizeof *v);
	if (v) {
		memcpy(v, l->v, l->n * sizeof *v);
		cli_sort(v, l->n, sizeof *v, cmp_blocked);
	}
	return v;
}

/* "futex 12.0 ms (20 calls), clock_nanosleep 50.2 ms (1 call), ..." into b: at most `most`
 * causes that blocked, then what the rest and the unknown came to; "" when none blocked */
static void causes_text(char *b, size_t len, const struct rs_state *s, const struct cause_list *l, uint64_t blocked,
			uint64_t other, unsigned most, int counts)
{
	char d[32], nb[64];
	size_t at = 0;
	b[0] = 0;
	struct cause_acc *v = by_blocked(l);
	uint64_t named = 0, rest = other;
	unsigned shown = 0;
	for (size_t i = 0; v && i < l->n; i++) {
		if (!v[i].blocked)
			continue;
		named += v[i].blocked;
		if (shown == most) {
			rest += v[i].blocked;
			continue;
		}
		const char *nm = cause_name(s, v[i].cause);
		if (counts && v[i].count)
			at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%s%s %s (%" PRIu64 " call%s)", shown ? ", " : "",
					       cli_tx(nb, sizeof nb, nm ? nm : "?"), dur(d, s, v[i].blocked), v[i].count,
					       cli_s(v[i].count));
		else
			at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%s%s %s", shown ? ", " : "",
					       cli_tx(nb, sizeof nb, nm ? nm : "?"), dur(d, s, v[i].blocked));
		shown++;
	}
	free(v);
	if (rest)
		at += (size_t)snprintf(b + at, at < len ? len - at : 0, "%sother %s", at ? ", " : "", dur(d, s, rest));
	named += other;
	if (blocked > named && (blocked - named) * 100 >= blocked && at)
		at += (size_t)snprintf(b + at, at < len ? len - at : 0, ", not known %s", dur(d, s, blocked - named));
	(void)at;
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
	if (s->have_causes) {
		int any = 0;
		char line[512];
		for (size_t i = 0; i < n && (!max_threads || i < max_threads); i++) {
			const struct thr *t = v[i];
			causes_text(line, sizeof line, s, &t->causes, t->acc[ST_BLOCKED], 0, 4, 1);
			if (!*line)
				continue;
			if (!any++)
				fprintf(f, "\nblocked in (kernel system call and page fault events: what the blocked time was "
					   "spent in)\n  %8s  %-16s %12s  %s\n",
					"tid", "name", "blocked", "in");
			const char *nm = tb_reader_thread_name(s->r, t->tid);
			fprintf(f, "  %8u  %-16s %12s  %s\n", t->tid, cli_tx(nb, sizeof nb, nm ? nm : t->comm),
				dur(a, s, t->acc[ST_BLOCKED]), line);
		}
	}
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
		char in[256] = "";
		if (s->have_causes)
			causes_text(in, sizeof in, s, &sp->causes, sp->acc[ST_BLOCKED], sp->other, 2, 0);
		fprintf(f, "  %-24s %8" PRIu64 " %12s %12s %12s %12s%s%s\n", cli_tx(nb, sizeof nb, sp->name), sp->count,
			dur(a, s, sp->dur), dur(b, s, sp->acc[ST_RUN]), dur(c, s, sp->acc[ST_RUNNABLE]),
			dur(d, s, sp->acc[ST_BLOCKED]), *in ? "  in " : "", in);
	}
}

/* ,"blocked_in":[{"cause":"futex","blocked_ns":N,"count":N},...] most blocked first; count: a
 * thread's calls made (blocking or not), a span's instances that blocked in it */
static void causes_json(const struct rs_state *s, FILE *f, const struct cause_list *l)
{
	struct cause_acc *v = by_blocked(l);
	fputs(",\"blocked_in\":[", f);
	for (size_t i = 0; v && i < l->n; i++) {
		fputs(i ? ",{\"cause\":" : "{\"cause\":", f);
		const char *nm = cause_name(s, v[i].cause);
		rpt_jstr(f, nm ? nm : "");
		fprintf(f, ",\"blocked_ns\":%.0f,\"count\":%" PRIu64 "}", ns_of(s, v[i].blocked), v[i].count);
	}
	fputc(']', f);
	free(v);
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
		fprintf(f, ",\"running_ns\":%.0f,\"runnable_ns\":%.0f,\"blocked_ns\":%.0f,\"known_ns\":%.0f",
			ns_of(s, t->acc[ST_RUN]), ns_of(s, t->acc[ST_RUNNABLE]), ns_of(s, t->acc[ST_BLOCKED]),
			ns_of(s, total(t)));
		if (s->have_causes)
			causes_json(s, f, &t->causes);
		fputc('}', f);
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
			   "\"blocked_ns\":%.0f",
			sp->count, ns_of(s, sp->dur), ns_of(s, sp->acc[ST_RUN]), ns_of(s, sp->acc[ST_RUNNABLE]),
			ns_of(s, sp->acc[ST_BLOCKED]));
		if (s->have_causes) {
			causes_json(s, f, &sp->causes);
			fprintf(f, ",\"blocked_other_ns\":%.0f", ns_of(s, sp->other));
		}
		fputc('}', f);
	}
	fputs("]}", f);
}

void rs_free(struct rs_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->tcap; i++) {
		free(s->t[i].open);
		free(s->t[i].causes.v);
	}
	free(s->t);
	for (size_t i = 0; i < s->nspans; i++)
		free(s->spans[i].causes.v);
	free(s->spans);
	for (size_t i = 0; i < s->ncauses; i++)
		free(s->causes[i]);
	free(s->causes);
	free(s->cause_of_call);
	free(s->kind);
	free(s->role);
	free(s->span_of);
	free(s);
}
