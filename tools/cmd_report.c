/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `tracebuf report DIR`: what a user looks at first.
 *
 * One merged pass with the reader library collects: the time span, events
 * and bytes, counts and rates per event class, per CPU and per thread
 * (process names from the metadata env `proc_<pid>` = "comm=NAME exe=..."),
 * the losses per CPU with the time ranges of the reader's discard notices,
 * and the busiest second (one-second windows from the trace start).
 * Memory: per class, per stream, per thread and per loss notice; nothing
 * per event.  Output: a compact text summary, or one JSON object.
 *
 * `report --profile DIR` reads a `tracebuf profile` trace instead
 * (cli_report_profile.c); the formatting both share is cli_report.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_crash.h"
#include "core/format.h" /* TB_KERNEL_ID_BASE: the ids of the kernel's classes */
#include "cli_demangle.h"
#include "cli_map.h"
#include "cli_report.h"
#include "report_sched.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf report [options] DIR\n"
		"  Summary of trace DIR: time span, events and bytes, counts and rates per\n"
		"  event class, CPU and thread, lost events per CPU with the time ranges where\n"
		"  they were lost, the busiest second.\n\n"
		"  --format text|json   json: one JSON object (schema in docs/READER.md)\n"
		"  --threads N          text: show the N busiest threads (default 10, 0 = all)\n"
		"  --ranges N           text: show N loss ranges per CPU (default 5, 0 = all)\n"
		"  -q, --quiet          do not print the diagnostics about damaged input\n"
		"  --follow             DIR is being recorded: print the report of what is on disk\n"
		"                       every --interval (a terminal is cleared first), then the\n"
		"                       final report when the recorder finishes (text only)\n"
		"  --interval DUR       --follow: how often (default 1s; 250ms, 2s, ...)\n"
		CLI_PROGRESS_USAGE
		"  -h, --help\n\n"
		"usage: tracebuf report --html -o FILE.html [--html-events N] [-q] [--no-demangle] DIR\n"
		"  One self-contained page (no network access) for any browser: a timeline\n"
		"  with a lane per CPU and per thread (zoom: wheel, pan: drag), the event\n"
		"  rate and the loss ranges over time, the tables above, and for a profile\n"
		"  a flame graph with search.  Drawn from per-time-bucket summaries, so it\n"
		"  stays responsive on traces of tens of millions of events; zoomed in, it\n"
		"  draws the single events (each with its class) when at most 20,000 are in view.\n\n"
		"  --html-events N      the page's budget of single events (default 6000000;\n"
		"                       ~2.7 bytes each when dense, ~5 when 1 ms apart; 0 = none).\n"
		"                       Above it, each of 65,536 time\n"
		"                       windows keeps its first K events, K the largest that\n"
		"                       fits: sparse windows whole, the densest cut; stderr and\n"
		"                       the page say so and where\n\n"
		"usage: tracebuf report --profile [options] DIR\n"
		"  A `tracebuf profile` trace: samples, rate, threads, unwinder, oprofile's\n"
		"  counters (received, lost to overflow, invalid PC, backtrace aborted,\n"
		"  truncated) and the hottest functions by self and total, symbolised from\n"
		"  the ELF symbol tables of the files the processes had mapped, C++ and Rust\n"
		"  names demangled.\n\n"
		"  --top N              N functions per table (default 20, 0 = all)\n"
		"  --threads[=N]        also a table per thread (the N busiest; default all)\n"
		"  --format text|json   json: one JSON object (docs/PROFILE-READING.md)\n"
		"  -q, --quiet          no diagnostics (damaged input, unreadable files)\n"
		"  --no-demangle        show C++ and Rust symbols as mangled (here and --html)\n\n"
		"exit: 0 ok, 1 failure, 2 usage, 3 some input was damaged and skipped (see stderr)\n");
}

/* ---------------------------------------------------------------------- */
/* collected state                                                         */

struct cls_stat {
	uint64_t n, bytes;
};

struct thr {
	uint64_t key; /* pid << 32 | tid */
	uint64_t n;
	char name[16]; /* the thread's latest name (tracebuf:thread_name), "" none */
	int kernel;    /* the row of the kernel's events (key 0): rp->kthr_tab says by thread */
};

/*
 * The kernel's sched events (record --kernel, stream class 2) carry no
 * thread record: they are counted by the thread they are about, as their
 * own fields name it: sched_switch the thread switched out (the one that
 * was running when it fired), sched_process_fork the parent, the others
 * their `tid` (woken, migrated, exec'd, exiting), with the comm of the
 * record (sched_process_exec has none: the latest seen for that tid).
 */
struct kthr {
	uint64_t key; /* tid; 1 << 32: no tid field */
	uint64_t n;
	char comm[16];
};

struct loss {
	unsigned stream;
	int kind;          /* TB_RD_DISCARDED_EVENTS / _PACKETS */
	uint64_t count;    /* 0: unknown */
	uint64_t b, e;     /* ticks */
	int known;         /* events: cause[] holds the count by cause */
	uint64_t cause[TB_RD_LOST_NCAUSES];
};

struct cpu_stat {
	uint32_t cpu;
	uint64_t events, lost_ev, lost_pk, unknown;
	uint64_t cause[TB_RD_LOST_NCAUSES];
	uint64_t cause_unknown; /* events lost whose cause the trace does not say */
};

struct proc_name {
	uint32_t pid;
	char name[64];
};

struct report {
	struct tb_reader *r;
	const char *dir;
	uint64_t t0, t1;       /* span, ticks */
	int64_t ns0, ns1;
	uint64_t events, bytes;
	uint32_t ncls;
	struct cls_stat *cls;
	uint64_t *stream_events;
	struct cli_table thr_tab; /* (pid, tid) -> struct thr, while reading */
	struct thr *thr;          /* then: thr_tab's records, sorted */
	size_t thr_n;
	struct cli_table kthr_tab; /* kernel events: tid -> struct kthr (the order of thr) */
	uint64_t kernel_events;
	struct loss *loss;
	size_t nloss, loss_cap;
	struct cpu_stat *cpus;
	size_t ncpus;
	struct proc_name *procs;
	size_t nprocs;
	/* busiest second */
	int64_t bucket;
	uint64_t bucket_n, best_n;
	int64_t best_bucket;
	struct rs_state *sched; /* --kernel traces: thread states (report_sched.c), else NULL */
};

/* "comm=NAME exe=EXE attached_ns=N" (src/consumer/metadata.c) -> NAME; else the whole value */
static void load_procs(struct report *rp)
{
	unsigned n = tb_reader_nenv(rp->r);
	rp->procs = calloc(n ? n : 1, sizeof *rp->procs);
	if (!rp->procs)
		return;
	for (unsigned i = 0; i < n; i++) {
		const char *k = tb_reader_env_key(rp->r, i), *v = tb_reader_env_value(rp->r, i);
		char *end;
		if (strncmp(k, "proc_", 5) || k[5] < '0' || k[5] > '9')
			continue;
		unsigned long pid = strtoul(k + 5, &end, 10);
		if (*end || pid > UINT32_MAX)
			continue;
		struct proc_name *p = &rp->procs[rp->nprocs++];
		p->pid = (uint32_t)pid;
		cli_env_comm(v, p->name, sizeof p->name);
	}
}

static const char *proc_name(const struct report *rp, uint32_t pid)
{
	for (size_t i = 0; i < rp->nprocs; i++)
		if (rp->procs[i].pid == pid)
			return rp->procs[i].name;
	return NULL;
}

static int add_loss(struct report *rp, const struct tb_rd_event *e)
{
	if (rp->nloss == rp->loss_cap) {
		size_t cap = rp->loss_cap ? rp->loss_cap * 2 : 64;
		struct loss *n = realloc(rp->loss, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		rp->loss = n;
		rp->loss_cap = cap;
	}
	struct loss *l = &rp->loss[rp->nloss++];
	l->stream = tb_rd_stream(e);
	l->kind = tb_rd_kind(e);
	l->count = tb_rd_count(e);
	l->b = tb_rd_ticks(e);
	l->e = tb_rd_ticks_end(e);
	l->known = l->kind == TB_RD_DISCARDED_EVENTS && l->count;
	for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++) {
		l->cause[k] = l->known ? tb_rd_lost(e, k) : 0;
		if (l->cause[k] == UINT64_MAX)
			l->known = 0;
	}
	if (!l->known)
		memset(l->cause, 0, sizeof l->cause);
	return 0;
}

/* ", ring full 3, disk 2" of cause[] (or of nothing); buf: 512 bytes */
static const char *causes_text(char *buf, const uint64_t cause[TB_RD_LOST_NCAUSES], uint64_t unknown)
{
	size_t o = 0;
	char g[32];
	buf[0] = 0;
	for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
		if (cause[k])
			o += (size_t)snprintf(buf + o, 512 - o, "%s%s %s", o ? ", " : "", cli_loss_label(k),
					      rpt_grp(g, cause[k]));
	if (unknown && o < 480)
		snprintf(buf + o, 512 - o, "%scause unknown %s", o ? ", " : "", rpt_grp(g, unknown));
	return buf;
}

/* "by_cause":{"full":N,...} (every cause, zeros included) */
static void causes_json(FILE *f, const uint64_t cause[TB_RD_LOST_NCAUSES])
{
	fputs("\"by_cause\":{", f);
	for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", tb_rd_loss_name(k), cause[k]);
	fputc('}', f);
}

static struct cpu_stat *cpu_of(struct report *rp, uint32_t cpu)
{
	for (size_t i = 0; i < rp->ncpus; i++)
		if (rp->cpus[i].cpu == cpu)
			return &rp->cpus[i];
	return NULL;
}

static int cmp_cpu(const void *a, const void *b)
{
	uint32_t x = ((const struct cpu_stat *)a)->cpu, y = ((const struct cpu_stat *)b)->cpu;
	return x < y ? -1 : x > y;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct thr *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static const struct cls_stat *cmp_cls_base;
static int cmp_cls(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t nx = cmp_cls_base[x].n, ny = cmp_cls_base[y].n;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_kthr(const void *a, const void *b)
{
	const struct kthr *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* A kernel event: counted by the thread it is about (struct kthr). */
static int add_kernel_event(struct report *rp, const struct tb_rd_event *e)
{
	static const char *const who[][2] = { { "prev_tid", "prev_comm" }, { "parent_tid", "parent_comm" },
					      { "tid", "comm" } };
	int ti = -1, ci = -1;
	for (size_t k = 0; k < sizeof who / sizeof who[0] && ti < 0; k++) {
		ti = tb_rd_field_index(e, who[k][0]);
		ci = ti < 0 ? -1 : tb_rd_field_index(e, who[k][1]);
	}
	int64_t tid = ti < 0 ? -1 : tb_rd_i64(e, (unsigned)ti);
	uint64_t key = tid < 0 || tid > UINT32_MAX ? 1ull << 32 : (uint64_t)tid;
	struct kthr *k = cli_table_get(&rp->kthr_tab, 0, key, NULL);
	if (!k)
		return -ENOMEM;
	k->key = key;
	k->n++;
	size_t n;
	const char *c = ci < 0 ? NULL : tb_rd_str(e, (unsigned)ci, &n);
	if (c && n)
		snprintf(k->comm, sizeof k->comm, "%.*s", (int)(n < 15 ? n : 15), c);
	rp->kernel_events++;
	return 0;
}

/* The crash the program's libtracebuf wrote (tracebuf:crash), when the
 * trace holds one: a second pass, only then (tools/cli_crash.c); as text, or
 * (json) as the member ,"crash":{...} */
static void print_crash(const struct report *rp, FILE *out, int json)
{
	int any = 0;
	for (uint32_t id = 0; id < rp->ncls && !any; id++) {
		const char *n = tb_reader_class_name(rp->r, id);
		any = rp->cls[id].n && n && !strcmp(n, "tracebuf:crash");
	}
	struct cli_crash c;
	if (!any || cli_crash_read(rp->dir, 0, &c) <= 0)
		return;
	if (json) {
		char *j = cli_crash_json(&c, 0, 1);
		if (j)
			fprintf(out, ",\"crash\":%s", j);
		free(j);
	} else {
		fputc('\n', out);
		cli_crash_print(out, &c);
	}
	cli_crash_free(&c);
}

static int collect(struct report *rp)
{
	struct tb_reader *r = rp->r;
	rp->kthr_tab = (struct cli_table)CLI_TABLE_INIT(struct kthr);
	unsigned ns = tb_reader_nstreams(r);
	rp->ncls = tb_reader_nclass_ids(r);
	rp->cls = calloc(rp->ncls, sizeof *rp->cls);
	rp->stream_events = calloc(ns ? ns : 1, sizeof *rp->stream_events);
	rp->cpus = calloc(ns ? ns : 1, sizeof *rp->cpus);
	if (!rp->cls || !rp->stream_events || !rp->cpus)
		return -ENOMEM;
	tb_reader_time_range(r, &rp->t0, &rp->t1);
	rp->ns0 = tb_reader_ticks_to_ns(r, rp->t0);
	rp->ns1 = tb_reader_ticks_to_ns(r, rp->t1);
	for (unsigned s = 0; s < ns; s++) {
		rp->bytes += tb_reader_stream_bytes(r, s);
		uint32_t c = tb_reader_stream_cpu(r, s);
		if (!cpu_of(rp, c))
			rp->cpus[rp->ncpus++].cpu = c;
	}
	cli_sort(rp->cpus, rp->ncpus, sizeof *rp->cpus, cmp_cpu);
	load_procs(rp);
	rp->bucket = -1;
	rp->best_bucket = -1;
	rp->sched = rs_new(r);

	const struct tb_rd_event *e;
	uint64_t last_key = UINT64_MAX;
	struct thr *last_thr = NULL; /* valid until the table creates a record: only on a new key */
	while (cli_next(r, &e) > 0) {
		int kind = tb_rd_kind(e);
		if (rs_event(rp->sched, e))
			return -ENOMEM;
		if (kind != TB_RD_EVENT) {
			if (add_loss(rp, e))
				return -ENOMEM;
			continue;
		}
		rp->events++;
		uint32_t id = tb_rd_id(e);
		size_t len;
		tb_rd_payload(e, &len);
		if (id < rp->ncls) {
			rp->cls[id].n++;
			rp->cls[id].bytes += len;
		}
		rp->stream_events[tb_rd_stream(e)]++;
		uint64_t key = (uint64_t)tb_rd_pid(e) << 32 | tb_rd_tid(e);
		if (!key && id >= TB_KERNEL_ID_BASE) {
			/* the row of the kernel's events: a key no (pid, tid) has */
			struct thr *k = cli_table_get(&rp->thr_tab, 1ull << 32, 0, NULL);
			if (!k || add_kernel_event(rp, e))
				return -ENOMEM;
			k->kernel = 1;
			k->n++;
			last_thr = NULL; /* the table may have moved */
			goto counted;
		}
		/* !last_thr: a first record whose pid and tid are both 0xffffffff
		 * (damaged) has the key last_key starts with */
		if (!last_thr || key != last_key) {
			last_thr = cli_table_get(&rp->thr_tab, key >> 32, (uint32_t)key, NULL);
			if (!last_thr)
				return -ENOMEM;
			last_thr->key = key;
			last_key = key;
		}
		last_thr->n++;
	counted:;
		int64_t b = rpt_diff(tb_rd_ns(e), rp->ns0) / NS;
		if (b != rp->bucket) {
			rp->bucket = b;
			rp->bucket_n = 0;
		}
		if (++rp->bucket_n > rp->best_n) {
			rp->best_n = rp->bucket_n;
			rp->best_bucket = b;
		}
	}
	rs_finish(rp->sched, rp->t1);
	for (unsigned s = 0; s < ns; s++)
		cpu_of(rp, tb_reader_stream_cpu(r, s))->events += rp->stream_events[s];
	for (size_t i = 0; i < rp->nloss; i++) {
		struct cpu_stat *c = cpu_of(rp, tb_reader_stream_cpu(r, rp->loss[i].stream));
		const struct loss *l = &rp->loss[i];
		if (l->kind == TB_RD_DISCARDED_PACKETS) {
			c->lost_pk += l->count;
		} else if (l->count) {
			c->lost_ev += l->count;
			for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
				c->cause[k] += l->cause[k];
			if (!l->known)
				c->cause_unknown += l->count;
		} else {
			c->unknown++;
		}
	}
	/* the thread records, busiest first, with their latest names */
	rp->thr = rp->thr_tab.v;
	rp->thr_n = rp->thr_tab.n;
	for (size_t i = 0; i < rp->thr_n; i++) {
		const char *tn = tb_reader_thread_name(r, (uint32_t)rp->thr[i].key);
		snprintf(rp->thr[i].name, sizeof rp->thr[i].name, "%s", tn ? tn : "");
	}
	cli_sort(rp->thr, rp->thr_n, sizeof *rp->thr, cmp_thr);
	cli_sort(rp->kthr_tab.v, rp->kthr_tab.n, sizeof(struct kthr), cmp_kthr);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* formatting                                                              */

/* events per second over the span, "-" when the span is empty */
static const char *rate(char *buf, const struct report *rp, uint64_t n)
{
	int64_t d = rpt_diff(rp->ns1, rp->ns0);
	if (d <= 0)
		return "-";
	double r = (double)n * 1e9 / (double)d;
	if (r < 10)
		snprintf(buf, 32, "%.2f", r);
	else
		rpt_grp(buf, (uint64_t)(r + 0.5));
	return buf;
}

static double rate_v(const struct report *rp, uint64_t n)
{
	int64_t d = rpt_diff(rp->ns1, rp->ns0);
	return d > 0 ? (double)n * 1e9 / (double)d : 0;
}

/* UTC date-time with ns: "2023-11-14 22:13:20.000000000" (iso: 'T' and 'Z') */
static const char *utc(char *buf, int64_t ns, int iso)
{
	int64_t s = ns / NS, f = ns % NS;
	if (f < 0) {
		f += NS;
		s--;
	}
	time_t t = (time_t)s;
	struct tm tm;
	if (!gmtime_r(&t, &tm)) {
		sprintf(buf, "%" PRId64 ".%09" PRId64, s, f);
		return buf;
	}
	size_t n = strftime(buf, 40, iso ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
	sprintf(buf + n, ".%09" PRId64 "%s", f, iso ? "Z" : "");
	return buf;
}

/* time of day only: "22:13:20.000000000" */
static const char *tod(char *buf, int64_t ns)
{
	char t[64];
	utc(t, ns, 0);
	snprintf(buf, 64, "%s", t + 11); /* callers' buffers: 64 bytes */
	return buf;
}

static uint32_t *sorted_classes(const struct report *rp, uint32_t *n)
{
	uint32_t *ids = malloc((rp->ncls ? rp->ncls : 1) * sizeof *ids);
	*n = 0;
	if (!ids)
		return NULL;
	for (uint32_t i = 0; i < rp->ncls; i++)
		if (rp->cls[i].n)
			ids[(*n)++] = i;
	cmp_cls_base = rp->cls;
	cli_sort(ids, *n, sizeof *ids, cmp_cls);
	return ids;
}

static void print_json(const struct report *rp, FILE *f)
{
	struct tb_reader *r = rp->r;
	char b[64];
	fputs("{\"trace\":", f);
	rpt_jstr(f, rp->dir);
	fprintf(f, ",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",\"start\":\"%s\"", rp->ns0, rp->ns1,
		utc(b, rp->ns0, 1));
	fprintf(f, ",\"end\":\"%s\",\"duration_ns\":%" PRId64 ",\"clock_freq\":%" PRIu64, utc(b, rp->ns1, 1),
		rpt_diff(rp->ns1, rp->ns0), tb_reader_clock_freq(r));
	fprintf(f, ",\"events\":%" PRIu64 ",\"rate_per_s\":%.3f,\"bytes\":%" PRIu64, rp->events,
		rate_v(rp, rp->events), rp->bytes);
	fputs(",\"streams\":[", f);
	for (unsigned s = 0; s < tb_reader_nstreams(r); s++) {
		fprintf(f, "%s{\"file\":", s ? "," : "");
		rpt_jstr(f, tb_reader_stream_file(r, s));
		fputs(",\"channel\":", f);
		rpt_jstr(f, tb_reader_stream_channel(r, s));
		fprintf(f, ",\"cpu\":%" PRIu32 ",\"bytes\":%" PRIu64 ",\"packets\":%zu,\"events\":%" PRIu64 "}",
			tb_reader_stream_cpu(r, s), tb_reader_stream_bytes(r, s), tb_reader_npackets(r, s),
			rp->stream_events[s]);
	}
	fputs("],\"classes\":[", f);
	uint32_t nc;
	uint32_t *ids = sorted_classes(rp, &nc);
	for (uint32_t i = 0; ids && i < nc; i++) {
		const char *name = tb_reader_class_name(r, ids[i]);
		fprintf(f, "%s{\"name\":", i ? "," : "");
		rpt_jstr(f, name ? name : "?");
		fprintf(f, ",\"id\":%" PRIu32 ",\"events\":%" PRIu64 ",\"rate_per_s\":%.3f,\"payload_bytes\":%" PRIu64 "}",
			ids[i], rp->cls[ids[i]].n, rate_v(rp, rp->cls[ids[i]].n), rp->cls[ids[i]].bytes);
	}
	free(ids);
	fputs("],\"cpus\":[", f);
	for (size_t i = 0; i < rp->ncpus; i++) {
		const struct cpu_stat *c = &rp->cpus[i];
		fprintf(f, "%s{\"cpu\":%" PRIu32 ",\"events\":%" PRIu64 ",\"rate_per_s\":%.3f,\"lost_events\":%" PRIu64
			   ",\"lost_packets\":%" PRIu64 ",\"loss_notices_count_unknown\":%" PRIu64 "}",
			i ? "," : "", c->cpu, c->events, rate_v(rp, c->events), c->lost_ev, c->lost_pk, c->unknown);
	}
	fputs("],\"threads\":[", f);
	for (size_t i = 0; i < rp->thr_n; i++) {
		uint32_t pid = (uint32_t)(rp->thr[i].key >> 32), tid = (uint32_t)rp->thr[i].key;
		const char *pn = pid ? proc_name(rp, pid) : NULL;
		fprintf(f, "%s{%s\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"process\":", i ? "," : "",
			rp->thr[i].kernel ? "\"kernel\":true," : "", pid, tid);
		if (pn)
			rpt_jstr(f, pn);
		else
			fputs("null", f);
		fputs(",\"thread\":", f);
		if (rp->thr[i].name[0])
			rpt_jstr(f, rp->thr[i].name);
		else
			fputs("null", f);
		fprintf(f, ",\"events\":%" PRIu64 ",\"rate_per_s\":%.3f}", rp->thr[i].n, rate_v(rp, rp->thr[i].n));
	}
	/* the kernel's events by the thread they are about (struct kthr) */
	fputs("],\"kernel_threads\":[", f);
	for (size_t i = 0; i < rp->kthr_tab.n; i++) {
		const struct kthr *k = cli_table_at(&rp->kthr_tab, i);
		fputs(i ? ",{\"tid\":" : "{\"tid\":", f);
		if (k->key >> 32)
			fputs("null", f);
		else
			fprintf(f, "%" PRIu64, k->key);
		fputs(",\"comm\":", f);
		if (k->comm[0])
			rpt_jstr(f, k->comm);
		else
			fputs("null", f);
		fprintf(f, ",\"events\":%" PRIu64 ",\"rate_per_s\":%.3f}", k->n, rate_v(rp, k->n));
	}
	uint64_t lev = 0, lpk = 0, lun = 0, lcu = 0, cause[TB_RD_LOST_NCAUSES] = { 0 };
	for (size_t i = 0; i < rp->ncpus; i++) {
		lev += rp->cpus[i].lost_ev;
		lpk += rp->cpus[i].lost_pk;
		lun += rp->cpus[i].unknown;
		lcu += rp->cpus[i].cause_unknown;
		for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
			cause[k] += rp->cpus[i].cause[k];
	}
	fprintf(f, "],\"lost\":{\"events\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"notices_count_unknown\":%" PRIu64 ",",
		lev, lpk, lun);
	causes_json(f, cause);
	fprintf(f, ",\"cause_unknown\":%" PRIu64 ",\"by_cpu\":[", lcu);
	int first = 1;
	for (size_t i = 0; i < rp->ncpus; i++) {
		const struct cpu_stat *c = &rp->cpus[i];
		if (!c->lost_ev && !c->lost_pk && !c->unknown)
			continue;
		fprintf(f, "%s{\"cpu\":%" PRIu32 ",\"events\":%" PRIu64 ",\"packets\":%" PRIu64 ",", first ? "" : ",",
			c->cpu, c->lost_ev, c->lost_pk);
		causes_json(f, c->cause);
		fprintf(f, ",\"cause_unknown\":%" PRIu64 ",\"ranges\":[", c->cause_unknown);
		first = 0;
		int f2 = 1;
		for (size_t j = 0; j < rp->nloss; j++) {
			const struct loss *l = &rp->loss[j];
			if (tb_reader_stream_cpu(r, l->stream) != c->cpu)
				continue;
			fprintf(f, "%s{\"stream\":", f2 ? "" : ",");
			f2 = 0;
			rpt_jstr(f, tb_reader_stream_file(r, l->stream));
			fprintf(f, ",\"kind\":\"%s\",\"count\":", l->kind == TB_RD_DISCARDED_PACKETS ? "packets" : "events");
			if (l->count)
				fprintf(f, "%" PRIu64, l->count);
			else
				fputs("null", f);
			fprintf(f, ",\"begin_ns\":%" PRId64 ",\"end_ns\":%" PRId64 ",", tb_reader_ticks_to_ns(r, l->b),
				tb_reader_ticks_to_ns(r, l->e));
			if (l->known)
				causes_json(f, l->cause);
			else
				fputs("\"by_cause\":null", f);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]},\"busiest_second\":", f);
	if (rp->best_bucket >= 0) {
		int64_t s0 = rpt_sat((__int128)rp->ns0 + (__int128)rp->best_bucket * NS);
		fprintf(f, "{\"index\":%" PRId64 ",\"start_ns\":%" PRId64 ",\"start\":\"%s\",\"events\":%" PRIu64 "}",
			rp->best_bucket, s0, utc(b, s0, 1), rp->best_n);
	} else {
		fputs("null", f);
	}
	rs_print_json(rp->sched, f);
	print_crash(rp, f, 1);
	rpt_json_diags(f, r);
}

static void print_text(const struct report *rp, FILE *f, size_t max_threads, size_t max_ranges)
{
	struct tb_reader *r = rp->r;
	char a[64], b[64], c[64], d[64];
	unsigned ns = tb_reader_nstreams(r);
	uint32_t nc;
	uint32_t *ids = sorted_classes(rp, &nc);
	fputs("trace    ", f);
	cli_puttx(f, rp->dir);
	fputc('\n', f);
	if (!rp->events && !rp->nloss) {
		fprintf(f, "events   none (%u stream file%s, %s bytes)\n", ns, ns == 1 ? "" : "s", rpt_grp(a, rp->bytes));
	} else {
		fprintf(f, "time     %s .. %s UTC (%s)\n", utc(a, rp->ns0, 0), tod(b, rp->ns1), rpt_dur(c, rpt_diff(rp->ns1, rp->ns0)));
		fprintf(f, "events   %s (%s/s); %u class%s, %zu CPU%s, %zu thread%s\n", rpt_grp(a, rp->events),
			rate(b, rp, rp->events), nc, nc == 1 ? "" : "es", rp->ncpus, rp->ncpus == 1 ? "" : "s",
			rp->thr_n, rp->thr_n == 1 ? "" : "s");
		fprintf(f, "bytes    %s in %u stream file%s", rpt_grp(a, rp->bytes), ns, ns == 1 ? "" : "s");
		if (rp->events)
			fprintf(f, " (%.1f B/event)", (double)rp->bytes / (double)rp->events);
		fputc('\n', f);
	}
	uint64_t lev = 0, lpk = 0, lun = 0, lcu = 0, cause[TB_RD_LOST_NCAUSES] = { 0 };
	size_t lcpus = 0;
	char why[512];
	for (size_t i = 0; i < rp->ncpus; i++) {
		lev += rp->cpus[i].lost_ev;
		lpk += rp->cpus[i].lost_pk;
		lun += rp->cpus[i].unknown;
		lcu += rp->cpus[i].cause_unknown;
		lcpus += rp->cpus[i].lost_ev || rp->cpus[i].lost_pk || rp->cpus[i].unknown;
		for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++)
			cause[k] += rp->cpus[i].cause[k];
	}
	if (lev || lpk || lun) {
		fprintf(f, "lost     %s event%s", rpt_grp(a, lev), lev == 1 ? "" : "s");
		if (lpk)
			fprintf(f, " + %s packet%s", rpt_grp(b, lpk), lpk == 1 ? "" : "s");
		if (lun)
			fprintf(f, " + %s loss%s of unknown size", rpt_grp(c, lun), lun == 1 ? "" : "es");
		fprintf(f, " on %zu CPU%s", lcpus, lcpus == 1 ? "" : "s");
		if (lev)
			fprintf(f, ": %s", causes_text(why, cause, lcu));
		fprintf(f, " (see below)\n");
	} else if (rp->events) {
		fprintf(f, "lost     none\n");
	}
	if (rp->best_bucket >= 0) {
		int64_t s0 = rpt_sat((__int128)rp->ns0 + (__int128)rp->best_bucket * NS);
		fprintf(f, "busiest  second %" PRId64 " (%s .. +1 s): %s event%s%s\n", rp->best_bucket + 1, tod(a, s0),
			rpt_grp(b, rp->best_n), cli_s(rp->best_n), rpt_diff(rp->ns1, rp->ns0) < NS ? " (the trace is shorter than 1 s)" : "");
	}

	if (nc) {
		size_t w = 11;
		char nb[4 * 128 + 1]; /* a class name (< 128 bytes) escaped */
		for (uint32_t i = 0; i < nc; i++) {
			const char *n = tb_reader_class_name(r, ids[i]);
			if (n && strlen(cli_tx(nb, sizeof nb, n)) > w)
				w = strlen(nb);
		}
		if (w > 40)
			w = 40;
		fprintf(f, "\n%-*s %13s %6s %12s %9s\n", (int)w + 2, "event class", "events", "%", "per s", "avg bytes");
		for (uint32_t i = 0; i < nc; i++) {
			const struct cls_stat *k = &rp->cls[ids[i]];
			const char *n = tb_reader_class_name(r, ids[i]);
			fprintf(f, "  %-*s %13s %6.1f %12s %9.1f\n", (int)w, cli_tx(nb, sizeof nb, n ? n : "?"), rpt_grp(a, k->n),
				100.0 * (double)k->n / (double)rp->events, rate(b, rp, k->n), (double)k->bytes / (double)k->n);
		}
	}
	free(ids);

	if (rp->ncpus && (rp->events || rp->nloss)) {
		fprintf(f, "\n%-5s %13s %12s %13s %13s\n", "cpu", "events", "per s", "lost events", "lost packets");
		for (size_t i = 0; i < rp->ncpus; i++) {
			const struct cpu_stat *k = &rp->cpus[i];
			fprintf(f, "%5" PRIu32 " %13s %12s %13s %13s%s\n", k->cpu, rpt_grp(a, k->events), rate(b, rp, k->events),
				rpt_grp(c, k->lost_ev), rpt_grp(d, k->lost_pk), k->unknown ? " + unknown" : "");
		}
	}

	if (rp->thr_n) {
		size_t show = max_threads && max_threads < rp->thr_n ? max_threads : rp->thr_n;
		fprintf(f, "\n%-18s %9s %9s %13s %12s  %s\n", "process", "pid", "tid", "events", "per s", "thread");
		for (size_t i = 0; i < show; i++) {
			uint32_t pid = (uint32_t)(rp->thr[i].key >> 32), tid = (uint32_t)rp->thr[i].key;
			if (rp->thr[i].kernel) {
				fprintf(f, "  %-16s %9s %9s %13s %12s  (by thread below)\n", "(kernel events)", "-", "-",
					rpt_grp(a, rp->thr[i].n), rate(b, rp, rp->thr[i].n));
				continue;
			}
			if (!tid && !pid) {
				fprintf(f, "  %-16s %9s %9s %13s %12s\n", "(no thread record)", "-", "-", rpt_grp(a, rp->thr[i].n),
					rate(b, rp, rp->thr[i].n));
				continue;
			}
			const char *pn = proc_name(rp, pid);
			char pb[17], tb[4 * sizeof rp->thr[i].name];
			fprintf(f, "  %-16s %9" PRIu32 " %9" PRIu32 " %13s %12s  %s\n", cli_tx(pb, sizeof pb, pn ? pn : "?"),
				pid, tid, rpt_grp(a, rp->thr[i].n), rate(b, rp, rp->thr[i].n),
				cli_tx(tb, sizeof tb, rp->thr[i].name));
		}
		if (show < rp->thr_n)
			fprintf(f, "  ... %zu more thread%s (--threads 0 shows all)\n", rp->thr_n - show,
				rp->thr_n - show == 1 ? "" : "s");
	}
	if (rp->kthr_tab.n) {
		size_t nk = rp->kthr_tab.n, show = max_threads && max_threads < nk ? max_threads : nk;
		fprintf(f, "\nkernel events by thread (sched_switch: the thread switched out; fork: the parent; the "
			   "others: the thread they name)\n");
		fprintf(f, "%10s  %-16s %13s %12s\n", "tid", "comm", "events", "per s");
		for (size_t i = 0; i < show; i++) {
			const struct kthr *k = cli_table_at(&rp->kthr_tab, i);
			char tb[24], cb[4 * sizeof k->comm];
			if (k->key >> 32)
				snprintf(tb, sizeof tb, "?");
			else
				snprintf(tb, sizeof tb, "%" PRIu64, k->key);
			fprintf(f, "%10s  %-16s %13s %12s\n", tb, k->comm[0] ? cli_tx(cb, sizeof cb, k->comm) : "?",
				rpt_grp(a, k->n), rate(b, rp, k->n));
		}
		if (show < nk)
			fprintf(f, "  ... %zu more thread%s (--threads 0 shows all)\n", nk - show, nk - show == 1 ? "" : "s");
	}

	if (lev || lpk || lun) {
		fprintf(f, "\nlost events per CPU\n");
		for (size_t i = 0; i < rp->ncpus; i++) {
			const struct cpu_stat *k = &rp->cpus[i];
			if (!k->lost_ev && !k->lost_pk && !k->unknown)
				continue;
			fprintf(f, "  cpu %" PRIu32 ": %s event%s", k->cpu, rpt_grp(a, k->lost_ev), k->lost_ev == 1 ? "" : "s");
			if (k->lost_pk)
				fprintf(f, ", %s packet%s", rpt_grp(b, k->lost_pk), k->lost_pk == 1 ? "" : "s");
			size_t nr = 0, shown = 0;
			for (size_t j = 0; j < rp->nloss; j++)
				nr += tb_reader_stream_cpu(r, rp->loss[j].stream) == k->cpu;
			fprintf(f, " in %zu range%s", nr, nr == 1 ? "" : "s");
			if (k->lost_ev)
				fprintf(f, " (%s)", causes_text(why, k->cause, k->cause_unknown));
			fputc('\n', f);
			for (size_t j = 0; j < rp->nloss; j++) {
				const struct loss *l = &rp->loss[j];
				if (tb_reader_stream_cpu(r, l->stream) != k->cpu)
					continue;
				if (max_ranges && shown == max_ranges) {
					fprintf(f, "    ... %zu more (--ranges 0 shows all)\n", nr - shown);
					break;
				}
				shown++;
				int64_t b0 = tb_reader_ticks_to_ns(r, l->b), b1 = tb_reader_ticks_to_ns(r, l->e);
				char cnt[256];
				if (l->kind == TB_RD_DISCARDED_PACKETS)
					snprintf(cnt, sizeof cnt, "%s packet%s", rpt_grp(a, l->count), l->count == 1 ? "" : "s");
				else if (l->count && l->known)
					snprintf(cnt, sizeof cnt, "%s event%s (%.200s)", rpt_grp(a, l->count),
						 l->count == 1 ? "" : "s", causes_text(why, l->cause, 0));
				else if (l->count)
					snprintf(cnt, sizeof cnt, "%s event%s (cause unknown)", rpt_grp(a, l->count),
						 l->count == 1 ? "" : "s");
				else
					snprintf(cnt, sizeof cnt, "events (count unknown)");
				char sf[1024];
				fprintf(f, "    %s .. %s (%s) %s: %s\n", tod(b, b0), tod(c, b1), rpt_dur(d, rpt_diff(b1, b0)),
					cli_tx(sf, sizeof sf, tb_reader_stream_file(r, l->stream)), cnt);
			}
		}
	}
	rs_print_text(rp->sched, f, max_threads);
	uint64_t nd = tb_reader_ndiags(r);
	if (nd)
		fprintf(f, "\ndamaged  %s problem%s in the input; that data was skipped (details on stderr)\n",
			rpt_grp(a, nd), nd == 1 ? "" : "s");
}

static void report_free(struct report *rp)
{
	free(rp->cls);
	free(rp->stream_events);
	cli_table_free(&rp->thr_tab); /* rp->thr is its array */
	cli_table_free(&rp->kthr_tab);
	free(rp->loss);
	free(rp->cpus);
	free(rp->procs);
	rs_free(rp->sched);
}

int report_json(struct tb_reader *r, const char *dir, FILE *f)
{
	struct report rp;
	memset(&rp, 0, sizeof rp);
	rp.thr_tab = (struct cli_table)CLI_TABLE_INIT(struct thr);
	rp.r = r;
	rp.dir = dir;
	int rc = collect(&rp);
	if (!rc)
		print_json(&rp, f);
	report_free(&rp);
	return rc;
}

/* ---------------------------------------------------------------------- */

static void on_diag(void *arg, const struct tb_rd_diag *d)
{
	if (!*(int *)arg)
		cli_msg(stderr, "tracebuf report: %s, offset %" PRIu64 ": %s", d->file, d->offset, d->what);
}

static int parse_count(const char *s, size_t *out)
{
	if (!s)
		return -1;
	uint64_t v;
	if (cli_parse_uint(s, SIZE_MAX, &v))
		return -1;
	*out = (size_t)v;
	return 0;
}

/*
 * One text report of dir as it is now, to stdout.  Return: TB_EXIT_OK,
 * TB_EXIT_PARTIAL (damaged input: said unless quiet or growing), or
 * -errno when the trace cannot be opened (tb_errmsg()).
 */
static int report_once(const char *dir, int quiet, int growing, size_t max_threads, size_t max_ranges)
{
	struct report rp;
	memset(&rp, 0, sizeof rp);
	rp.thr_tab = (struct cli_table)CLI_TABLE_INIT(struct thr);
	rp.dir = dir;
	/* while it grows, a packet being appended looks truncated: said at
	 * the final report only */
	int q = quiet || growing;
	struct tb_reader_opts ro = { .size = sizeof ro, .diag = on_diag, .diag_arg = &q };
	int rc = tb_reader_open(dir, &ro, &rp.r);
	if (rc)
		return rc;
	rc = collect(&rp);
	if (rc)
		cli_error("report", "out of memory");
	else
		print_text(&rp, stdout, max_threads, max_ranges);
	int partial = tb_reader_ndiags(rp.r) != 0;
	tb_reader_close(rp.r);
	report_free(&rp);
	fflush(stdout);
	return rc ? TB_EXIT_FAIL : partial && !growing ? TB_EXIT_PARTIAL : TB_EXIT_OK;
}

/*
 * report --follow: the report of what is on disk every interval while the
 * recorder writes dir (DIR/.tracebuf-recorder, as dump --follow), then the
 * final report, the same text a plain `report` prints of the finished trace,
 * after a line "== final".  On a terminal each report replaces the previous
 * one; otherwise each follows a line "== recording (pid P), after S s".
 */
static int report_follow(const char *dir, int quiet, size_t max_threads, size_t max_ranges, uint64_t interval_ns)
{
	int tty = isatty(1);
	struct cli_recorder rec = { .progress = 0 };
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int state = cli_recorder_state(dir, &rec);
		long pid = rec.pid;
		int final = state != CLI_REC_LIVE;
		if (state == CLI_REC_BAD)
			cli_msg(stderr, "tracebuf report: %s: reporting what is there, as a finished trace", rec.why); /* echoes the mark */
		if (tty)
			fputs("\033[H\033[2J", stdout);
		if (final) {
			printf("== final\n");
		} else {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			printf("== recording (pid %ld), after %.1f s\n", pid,
			       (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
		}
		int rc = report_once(dir, quiet, !final, max_threads, max_ranges);
		if (rc < 0 && final) {
			/* nothing to follow, or a broken trace; a recorder gone is
			 * said too (a copy of a live trace whose stream files were
			 * still empty reads as broken) */
			rc = cli_error("report", "%s", tb_errmsg());
			if (state == CLI_REC_GONE)
				cli_msg(stderr, "tracebuf report: the recorder (pid %ld) of %s is gone without finishing the "
						"trace (%s)", pid, dir, rec.why);
			return rc;
		}
		if (rc < 0) /* a recorder that is starting: no metadata yet */
			cli_msg(stdout, "(nothing on disk yet: %s)", tb_errmsg());
		if (ferror(stdout))
			return cli_error("report", "write error on standard output");
		if (final) {
			if (state == CLI_REC_GONE) {
				cli_msg(stderr, "tracebuf report: the recorder (pid %ld) of %s is gone without finishing the "
						"trace (%s): reported what it wrote", pid, dir, rec.why);
				return TB_EXIT_FAIL;
			}
			if (state == CLI_REC_BAD && rc == TB_EXIT_OK)
				return TB_EXIT_PARTIAL; /* the mark was damaged input */
			return rc < 0 ? TB_EXIT_FAIL : rc;
		}
		struct timespec d = { (time_t)(interval_ns / 1000000000ull), (long)(interval_ns % 1000000000ull) };
		while (nanosleep(&d, &d) < 0 && errno == EINTR)
			;
	}
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, 0, 'f' }, { "threads", required_argument, 0, 'n' },
		{ "ranges", required_argument, 0, 'r' }, { "quiet", no_argument, 0, 'q' },
		{ "html", no_argument, 0, 'H' },        { "output", required_argument, 0, 'o' },
		{ "follow", no_argument, 0, 'w' },      { "interval", required_argument, 0, 'i' },
		{ "no-demangle", no_argument, 0, 'D' }, { "html-events", required_argument, 0, 'E' },
		{ "help", no_argument, 0, 'h' },        { 0, 0, 0, 0 },
	};
	/* with --profile, --threads is a flag (optionally --threads=N) and --top N counts functions */
	static const struct option lo_prof[] = {
		{ "format", required_argument, 0, 'f' }, { "threads", optional_argument, 0, 'T' },
		{ "top", required_argument, 0, 't' },   { "profile", no_argument, 0, 'p' },
		{ "quiet", no_argument, 0, 'q' },        { "help", no_argument, 0, 'h' },
		{ "html", no_argument, 0, 'H' },        { "output", required_argument, 0, 'o' },
		{ "no-demangle", no_argument, 0, 'D' }, { "html-events", required_argument, 0, 'E' },
		{ 0, 0, 0, 0 },
	};
	int json = 0, quiet = 0, opt, profile = 0, per_thread = 0, html = 0, follow = 0;
	uint64_t interval_ns = 1000000000ull;
	const char *outp = NULL;
	size_t max_threads = 10, max_ranges = 5, top = 20, prof_threads = 0;
	size_t html_events = TB_HTML_EVENTS_DEFAULT;
	int html_events_set = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		profile |= !strcmp(argv[i], "--profile");
	optind = 1;
	while ((opt = cli_getopt("report", argc, argv, "f:o:qh", profile ? lo_prof : lo)) != -1) {
		switch (opt) {
		case 'p': break;
		case 'H': html = 1; break;
		case 'o': outp = optarg; break;
		case 'E':
			if (parse_count(optarg, &html_events))
				return cli_error("report", "--html-events %s: expected a number (0: no single events)",
						 optarg), TB_EXIT_USAGE;
			html_events_set = 1;
			break;
		case 'T':
			per_thread = 1;
			if (optarg && parse_count(optarg, &prof_threads))
				return cli_error("report", "--threads=%s: expected a number", optarg), TB_EXIT_USAGE;
			break;
		case 't':
			if (parse_count(optarg, &top))
				return cli_error("report", "--top %s: expected a number", optarg), TB_EXIT_USAGE;
			break;
		case 'f':
			/* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): required_argument: getopt sets optarg */
			if (!strcmp(optarg, "json"))
				json = 1;
			else if (strcmp(optarg, "text"))
				return cli_error("report", "--format %s: use text or json", optarg), TB_EXIT_USAGE;
			break;
		case 'n': case 'r':
			if (parse_count(optarg, opt == 'n' ? &max_threads : &max_ranges))
				return cli_error("report", "--%s %s: expected a number", opt == 'n' ? "threads" : "ranges",
						 optarg), TB_EXIT_USAGE;
			break;
		case 'q': quiet = 1; break;
		case 'D': cli_demangle_set(0); break;
		case 'w': follow = 1; break;
		case 'i':
			if (cli_parse_duration(optarg, &interval_ns) < 0 || interval_ns < 10000000ull ||
			    interval_ns > 3600000000000ull)
				return cli_error("report", "--interval %s: a duration from 10ms to 1h (" CLI_DURATION_UNITS ")", optarg),
				       TB_EXIT_USAGE;
			break;
		case 'h': usage(stdout); return TB_EXIT_OK;
		default: usage(stderr); return TB_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		size_t dummy;
		if (profile && per_thread && optind == argc - 2 && !parse_count(argv[optind], &dummy))
			cli_error("report", "with --profile, write --threads=%s (or --threads alone for all)", argv[optind]);
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	if (html != !!outp)
		return cli_error("report", "%s", html ? "--html needs -o FILE.html" : "-o FILE goes with --html"),
		       TB_EXIT_USAGE;
	if (html && json)
		return cli_error("report", "--html and --format json: choose one"), TB_EXIT_USAGE;
	if (html_events_set && !html)
		return cli_error("report", "--html-events goes with --html"), TB_EXIT_USAGE;
	if (follow && (json || html))
		return cli_error("report", "--follow prints text reports (a JSON or HTML report is of a finished "
					   "trace)"), TB_EXIT_USAGE;
	char why[8400];
	if (outp && cli_output_clobbers_input(outp, argv[optind], why, sizeof why))
		return cli_error("report", "-o %s: %s (never written over its input)", outp, why), TB_EXIT_USAGE;
	/* a flight recorder's directory: its snapshots listed; one snapshot:
	 * what triggered it, then its trace (tools/cmd_snapshots.c) */
	int flight = cli_flight_kind(argv[optind]);
	if (flight == CLI_FLIGHT_DIR && !json && !html && !profile && !follow)
		return cli_flight_list(argv[optind], stdout);
	char snap_trace[PATH_MAX + 16];
	const char *snapshot = NULL;
	if (flight == CLI_FLIGHT_SNAPSHOT) {
		snapshot = argv[optind];
		if (!json && !html && !profile && !follow)
			cli_flight_show_trigger(argv[optind], stdout);
		const char *tr = cli_flight_trace_dir("report", argv[optind], snap_trace, sizeof snap_trace);
		if (!tr)
			return TB_EXIT_USAGE;
		argv[optind] = (char *)tr;
	}
	if (follow)
		return report_follow(argv[optind], quiet, max_threads, max_ranges, interval_ns);
	struct report rp;
	memset(&rp, 0, sizeof rp);
	rp.thr_tab = (struct cli_table)CLI_TABLE_INIT(struct thr);
	rp.dir = argv[optind];
	struct tb_reader_opts ro = { .size = sizeof ro, .diag = on_diag, .diag_arg = &quiet };
	int rc = tb_reader_open(rp.dir, &ro, &rp.r);
	if (rc)
		return cli_error("report", "%s", tb_errmsg());
	if (html) {
		rc = report_html(rp.r, rp.dir, snapshot, outp, quiet, html_events);
		tb_reader_close(rp.r);
		return rc;
	}
	if (profile) {
		rc = report_profile(rp.r, rp.dir, json, quiet, top, per_thread, prof_threads, stdout);
		tb_reader_close(rp.r);
		return rc;
	}
	rc = collect(&rp);
	if (rc) {
		cli_error("report", "out of memory");
	} else if (json) {
		print_json(&rp, stdout);
	} else {
		print_text(&rp, stdout, max_threads, max_ranges);
		print_crash(&rp, stdout, 0);
	}
	int partial = tb_reader_ndiags(rp.r) != 0;
	tb_reader_close(rp.r);
	report_free(&rp);
	if (rc)
		return TB_EXIT_FAIL;
	if (fflush(stdout) || ferror(stdout))
		return cli_error("report", "write error on standard output");
	return partial ? TB_EXIT_PARTIAL : TB_EXIT_OK;
}
