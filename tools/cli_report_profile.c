/* SPDX-License-Identifier: MIT */
/*
 * cli_report_profile.c - `tracebuf report --profile DIR`: a `tracebuf
 * profile` trace read back.  The samples symbolised (cli_profile.c,
 * cli_symbols.c), oprofile's counters and the hottest functions by self and
 * total, per thread if asked, as text or one JSON object
 * (docs/PROFILE-READING.md).  cmd_report.c parses the options.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_map.h"
#include "cli_profile.h"
#include "cli_report.h"
#include "cli_symbols.h"

struct pthr {
	uint32_t pid, tid;
	struct prof_agg agg;
};

struct preport {
	struct tb_reader *r;
	struct prof *p;
	const char *dir;
	struct prof_agg all;
	struct cli_table thr_tab; /* (pid, tid) -> struct pthr, first-seen order */
	struct prof_totals t;
	int64_t first_ns, last_ns;
};

static struct pthr *pthr_get(struct preport *pr, uint32_t pid, uint32_t tid)
{
	int isnew;
	struct pthr *t = cli_table_get(&pr->thr_tab, pid, tid, &isnew);
	if (t && isnew) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

static int profile_collect(struct preport *pr)
{
	int rc = prof_load(pr->p);
	const struct tb_rd_event *e;
	struct prof_sample *s = malloc(sizeof *s);
	if (!s)
		return -ENOMEM;
	int any = 0;
	while (!rc && cli_next(pr->r, &e) > 0) {
		int k = prof_event(pr->p, e, s);
		if (k <= 0) {
			rc = k;
			continue;
		}
		if (!any || s->ns < pr->first_ns)
			pr->first_ns = s->ns;
		if (!any || s->ns > pr->last_ns)
			pr->last_ns = s->ns;
		any = 1;
		if (s->invalid)
			continue;
		struct pthr *t = pthr_get(pr, s->pid, s->tid);
		if (!t || prof_agg_add(&pr->all, s) || prof_agg_add(&t->agg, s))
			rc = -ENOMEM;
	}
	free(s);
	prof_totals(pr->p, &pr->t);
	return rc;
}

static int cmp_pthr(const void *a, const void *b)
{
	const struct pthr *x = a, *y = b;
	if (x->agg.periods != y->agg.periods)
		return x->agg.periods > y->agg.periods ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* the distinct hz / unwinder values of the processes, "/"-separated */
static void proc_values(const struct prof *p, int unwinder, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < prof_nprocs(p); i++) {
		const struct prof_proc *q = prof_proc(p, i);
		if (!q->has_info)
			continue;
		char v[64];
		if (unwinder)
			snprintf(v, sizeof v, "%s", q->unwinder && q->unwinder[0] ? q->unwinder : "?");
		else
			snprintf(v, sizeof v, "%" PRIu32, q->hz);
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct prof_proc *w = prof_proc(p, j);
			if (!w->has_info)
				continue;
			char u[64];
			if (unwinder)
				snprintf(u, sizeof u, "%s", w->unwinder && w->unwinder[0] ? w->unwinder : "?");
			else
				snprintf(u, sizeof u, "%" PRIu32, w->hz);
			seen = !strcmp(u, v);
		}
		if (!seen && o + strlen(v) + 2 < cap)
			o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "/" : "", v);
	}
}

static const char *counters_source(const struct prof_totals *t)
{
	if (!t->nprocs)
		return "none";
	if (t->with_counters == t->nprocs)
		return "sampler";
	return t->with_counters ? "mixed" : "trace";
}

/* the module column: the file, or "file+0xOFF" for an address without symbol, "-" in no mapping */
static const char *module_col(const struct prof_fn *f)
{
	return f->kind == PROF_NOSYM ? f->label : f->module ? f->module : "-";
}

static void text_table(const struct preport *pr, FILE *f, const struct prof_agg *a, int by_total, size_t top,
		       const char *indent)
{
	char b[64];
	struct prof_row *rows;
	size_t n = prof_agg_sorted(a, pr->p, by_total, &rows);
	size_t show = top && top < n ? top : n;
	int w = 8;
	/* symbol and file names from ELF files and the trace: escaped (cli_tx) */
	char **txt = calloc(2 * show + 1, sizeof *txt);
	for (size_t i = 0; txt && i < show; i++) {
		const struct prof_fn *fn = prof_fn(pr->p, rows[i].fid);
		txt[2 * i] = cli_txdup(fn->kind == PROF_NOSYM ? fn->name : fn->label);
		txt[2 * i + 1] = cli_txdup(module_col(fn));
		int l = txt[2 * i] ? (int)strlen(txt[2 * i]) : 0;
		w = l > w ? l : w;
	}
	if (w > 60)
		w = 60;
	fprintf(f, "%s%9s %7s  %-*s  %s\n", indent, "samples", "%", w, "function", "module");
	for (size_t i = 0; i < show; i++) {
		uint64_t v = by_total ? rows[i].total : rows[i].self;
		const char *name = txt && txt[2 * i] ? txt[2 * i] : "?", *mod = txt && txt[2 * i + 1] ? txt[2 * i + 1] : "?";
		fprintf(f, "%s%9s %7.2f  %-*s  %s\n", indent, rpt_grp(b, v), a->periods ? 100.0 * (double)v / (double)a->periods : 0.0,
			w, name, mod);
	}
	for (size_t i = 0; txt && i < 2 * show; i++)
		free(txt[i]);
	free(txt);
	if (show < n)
		fprintf(f, "%s... %zu more (--top 0 shows all)\n", indent, n - show);
	free(rows);
}

static void profile_text(const struct preport *pr, FILE *f, size_t top, int threads, size_t max_threads)
{
	const struct prof_totals *t = &pr->t;
	char a[64], b[64], c[64], hz[256], unw[256];
	proc_values(pr->p, 0, hz, sizeof hz);
	proc_values(pr->p, 1, unw, sizeof unw);
	fputs("trace     ", f);
	cli_puttx(f, pr->dir);
	fputc('\n', f);
	/* how the samples were taken: the first process that says */
	const char *src = NULL;
	for (size_t i = 0; i < prof_nprocs(pr->p) && !src; i++)
		if (prof_proc(pr->p, i)->source && prof_proc(pr->p, i)->source[0])
			src = prof_proc(pr->p, i)->source;
	/* a sample stands for 1 + overrun periods: the timer's expiries merged
	 * into one signal, or a perf event's period lengthened where the
	 * machine could not take the asked rate (docs/PROFILE.md) */
	int perf = src && !strcmp(src, "perf cpu-clock");
	const char *over = perf ? "lengthened periods" : "timer overruns";
	fprintf(f, "profile   %s sample%s", rpt_grp(a, t->samples), t->samples == 1 ? "" : "s");
	if (t->periods != t->samples && perf)
		fprintf(f, " (%s periods: samples taken at a lengthened period stand for several)", rpt_grp(b, t->periods));
	else if (t->periods != t->samples)
		fprintf(f, " (%s periods with the timer overruns)", rpt_grp(b, t->periods));
	if (t->samples)
		fprintf(f, " over %s", rpt_dur(c, rpt_diff(pr->last_ns, pr->first_ns)));
	char tx[256], tx2[256];
	fprintf(f, " at %s Hz\n", hz[0] ? hz : "?");
	fprintf(f, "          %zu thread%s in %zu process%s; unwinder %s", pr->thr_tab.n, pr->thr_tab.n == 1 ? "" : "s", t->nprocs,
		t->nprocs == 1 ? "" : "es", unw[0] ? cli_tx(tx, sizeof tx, unw) : "? (no profile:info)");
	if (src)
		fprintf(f, "; sampled by %s%s", cli_tx(tx2, sizeof tx2, src),
			!perf ? " (perf_event_open refused or TRACEBUF_PROFILE_TIMER set: ~250 Hz "
				"at most, the rest weighted in as overruns)"
			      : "");
	fputc('\n', f);
	if (perf && t->c.overruns)
		fprintf(f, "          the machine could not take %s Hz in every thread: periods were lengthened there, "
			   "each sample weighted by its period\n", hz[0] ? hz : "the asked rate");
	if (sym_unavailable())
		fprintf(f, "symbols   none: %s\n", sym_unavailable());
	else
		fprintf(f, "symbols   %s: ELF symbol tables, separate debuginfo by build-id or debuglink\n", sym_backend());
	size_t np = prof_nproblems(pr->p);
	if (np)
		fprintf(f, "          %zu problem%s with the mapped files (stderr says which): their addresses are "
			   "module+offset\n", np, np == 1 ? "" : "s");

	const char *csrc = counters_source(t);
	if (!strcmp(csrc, "sampler"))
		fprintf(f, "counters  from the sampler (profile:counters of %zu process%s)\n", t->nprocs,
			t->nprocs == 1 ? "" : "es");
	else if (!strcmp(csrc, "trace"))
		fprintf(f, "counters  from the trace: no process wrote profile:counters (did it exit normally?)\n");
	else if (!strcmp(csrc, "mixed"))
		fprintf(f, "counters  from the sampler for %zu process%s, from the trace for %zu without profile:counters\n",
			t->with_counters, t->with_counters == 1 ? "" : "es", t->nprocs - t->with_counters);
	else
		fprintf(f, "counters  none: no samples and no profile:counters in the trace\n");
	fprintf(f, "  %-20s %12s\n", "received", rpt_grp(a, t->c.received));
	fprintf(f, "  %-20s %12s", "lost to overflow", rpt_grp(a, t->c.lost));
	if (!t->with_counters && t->nprocs)
		fprintf(f, "  (events of any class the trace lost%s)", t->trace_lost_unknown ? ", and losses of unknown size" : "");
	fputc('\n', f);
	fprintf(f, "  %-20s %12s  (%s with PC 0, %s in no recorded mapping)\n", "invalid PC", rpt_grp(a, t->c.invalid_pc),
		rpt_grp(b, t->pc_zero), rpt_grp(c, t->unmapped));
	fprintf(f, "  %-20s %12s\n", "backtrace aborted", rpt_grp(a, t->c.aborted));
	fprintf(f, "  %-20s %12s\n", "truncated", rpt_grp(a, t->c.truncated));
	fprintf(f, "  %-20s %12s\n", over, rpt_grp(a, t->c.overruns));

	if (!t->samples) {
		/* an empty profile is a profile, as an empty trace is a trace to
		 * `report`: exit 0, and the reason in words (the exit status 1 of
		 * report --profile and convert --to folded/speedscope is for a trace
		 * that is no profile at all) */
		fprintf(f, "\nno samples: a sample is taken per period of CPU time%s%s%s: a program that ran "
			   "shorter than that, or only waited, has none\n", hz[0] ? " (1/" : "", hz, hz[0] ? " s)" : "");
	} else if (!pr->all.samples) {
		fprintf(f, "\nno sample with a valid PC\n");
	} else {
		fprintf(f, "\nself: samples whose PC is in the function (%% of the %s with a valid PC)\n", rpt_grp(a, pr->all.periods));
		text_table(pr, f, &pr->all, 0, top, "  ");
		fprintf(f, "\ntotal: samples with the function anywhere on the stack (once per sample)\n");
		text_table(pr, f, &pr->all, 1, top, "  ");
	}
	if (threads) {
		size_t show = max_threads && max_threads < pr->thr_tab.n ? max_threads : pr->thr_tab.n;
		for (size_t i = 0; i < show; i++) {
			const struct pthr *th = (const struct pthr *)cli_table_at(&pr->thr_tab, i);
			const struct prof_proc *q = prof_proc_of(pr->p, th->pid);
			const char *tn = tb_reader_thread_name(pr->r, th->tid); /* the last name the trace gave it */
			char qn[256], tnx[4 * 16 + 1];
			cli_tx(qn, sizeof qn, q ? q->name : "?");
			if (tn && *tn)
				fprintf(f, "\nthread %s (tid %" PRIu32 "; pid %" PRIu32 " %s): %s sample%s\n",
					cli_tx(tnx, sizeof tnx, tn), th->tid, th->pid, qn, rpt_grp(a, th->agg.periods),
					cli_s(th->agg.periods));
			else
				fprintf(f, "\nthread %" PRIu32 " (pid %" PRIu32 " %s): %s sample%s\n", th->tid, th->pid, qn,
					rpt_grp(a, th->agg.periods), cli_s(th->agg.periods));
			fprintf(f, "  self\n");
			text_table(pr, f, &th->agg, 0, top, "    ");
			fprintf(f, "  total\n");
			text_table(pr, f, &th->agg, 1, top, "    ");
		}
		if (show < pr->thr_tab.n)
			fprintf(f, "\n... %zu more thread%s (--threads=0 shows all)\n", pr->thr_tab.n - show,
				pr->thr_tab.n - show == 1 ? "" : "s");
	}
	uint64_t nd = tb_reader_ndiags(pr->r);
	if (nd)
		fprintf(f, "\ndamaged   %s problem%s in the input; that data was skipped (details on stderr)\n", rpt_grp(a, nd),
			nd == 1 ? "" : "s");
}

static void json_rows(const struct preport *pr, FILE *f, const struct prof_agg *a, int by_total, size_t top)
{
	struct prof_row *rows;
	size_t n = prof_agg_sorted(a, pr->p, by_total, &rows);
	size_t show = top && top < n ? top : n;
	fputc('[', f);
	for (size_t i = 0; i < show; i++) {
		const struct prof_fn *fn = prof_fn(pr->p, rows[i].fid);
		uint64_t v = by_total ? rows[i].total : rows[i].self;
		fprintf(f, "%s{\"function\":", i ? "," : "");
		rpt_jstr(f, fn->kind == PROF_SYM ? fn->name : "[unknown]");
		fputs(",\"label\":", f);
		rpt_jstr(f, fn->label);
		fputs(",\"module\":", f);
		if (fn->module)
			rpt_jstr(f, fn->module);
		else
			fputs("null", f);
		fputs(",\"path\":", f);
		if (fn->path)
			rpt_jstr(f, fn->path);
		else
			fputs("null", f);
		if (fn->kind == PROF_NOSYM)
			fprintf(f, ",\"offset\":%" PRIu64 ",\"offset_is\":\"%s\"", fn->off,
				fn->file_offset ? "file offset" : "ELF address");
		fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.2f}", v,
			a->periods ? 100.0 * (double)v / (double)a->periods : 0.0);
	}
	fputc(']', f);
	free(rows);
}

static void profile_json(const struct preport *pr, FILE *f, size_t top, int threads, size_t max_threads)
{
	const struct prof_totals *t = &pr->t;
	fputs("{\"trace\":", f);
	rpt_jstr(f, pr->dir);
	fprintf(f, ",\"samples\":%" PRIu64 ",\"periods\":%" PRIu64 ",\"valid_samples\":%" PRIu64
		   ",\"valid_periods\":%" PRIu64 ",\"first_ns\":%" PRId64 ",\"last_ns\":%" PRId64 ",\"duration_ns\":%" PRId64
		   ",\"threads\":%zu,\"processes\":%zu",
		t->samples, t->periods, pr->all.samples, pr->all.periods, pr->first_ns, pr->last_ns,
		t->samples ? rpt_diff(pr->last_ns, pr->first_ns) : 0, pr->thr_tab.n, t->nprocs);
	fputs(",\"symbols\":{\"backend\":", f);
	rpt_jstr(f, sym_backend());
	fputs(",\"unavailable\":", f);
	if (sym_unavailable())
		rpt_jstr(f, sym_unavailable());
	else
		fputs("null", f);
	fputs(",\"problems\":[", f);
	for (size_t i = 0; i < prof_nproblems(pr->p); i++) {
		fprintf(f, "%s{\"file\":", i ? "," : "");
		rpt_jstr(f, prof_problem_file(pr->p, i));
		fputs(",\"what\":", f);
		rpt_jstr(f, prof_problem_what(pr->p, i));
		fputc('}', f);
	}
	fprintf(f, "]},\"counters\":{\"source\":\"%s\",\"received\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"invalid_pc\":%" PRIu64
		   ",\"invalid_pc_zero\":%" PRIu64 ",\"invalid_pc_unmapped\":%" PRIu64 ",\"aborted\":%" PRIu64
		   ",\"truncated\":%" PRIu64 ",\"overruns\":%" PRIu64 ",\"trace_lost_events\":%" PRIu64
		   ",\"trace_loss_notices_count_unknown\":%" PRIu64 "}",
		counters_source(t), t->c.received, t->c.lost, t->c.invalid_pc, t->pc_zero, t->unmapped, t->c.aborted,
		t->c.truncated, t->c.overruns, t->trace_lost, t->trace_lost_unknown);
	fputs(",\"by_process\":[", f);
	int first = 1;
	for (size_t i = 0; i < prof_nprocs(pr->p); i++) {
		const struct prof_proc *q = prof_proc(pr->p, i);
		fprintf(f, "%s{\"pid\":%" PRIu32 ",\"name\":", first ? "" : ",", q->pid);
		first = 0;
		rpt_jstr(f, q->name);
		fputs(",\"exe\":", f);
		if (q->exe)
			rpt_jstr(f, q->exe);
		else
			fputs("null", f);
		fputs(",\"hz\":", f);
		if (q->has_info)
			fprintf(f, "%" PRIu32 ",\"unwinder\":", q->hz);
		else
			fputs("null,\"unwinder\":", f);
		if (q->unwinder)
			rpt_jstr(f, q->unwinder);
		else
			fputs("null", f);
		fprintf(f, ",\"maps\":%" PRIu32 ",\"map_generations\":%" PRIu32 ",\"samples\":%" PRIu64 ",\"periods\":%" PRIu64
			   ",\"invalid_pc_unmapped\":%" PRIu64 ",\"counters\":",
			q->nmaps, q->ngens, q->seen.received, q->periods, q->unmapped);
		if (q->has_counters)
			fprintf(f, "{\"received\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"invalid_pc\":%" PRIu64 ",\"aborted\":%" PRIu64
				   ",\"truncated\":%" PRIu64 ",\"overruns\":%" PRIu64 "}}",
				q->sampler.received, q->sampler.lost, q->sampler.invalid_pc, q->sampler.aborted,
				q->sampler.truncated, q->sampler.overruns);
		else
			fputs("null}", f);
	}
	fputs("],\"self\":", f);
	json_rows(pr, f, &pr->all, 0, top);
	fputs(",\"total\":", f);
	json_rows(pr, f, &pr->all, 1, top);
	if (threads) {
		size_t show = max_threads && max_threads < pr->thr_tab.n ? max_threads : pr->thr_tab.n;
		fputs(",\"by_thread\":[", f);
		for (size_t i = 0; i < show; i++) {
			const struct pthr *th = (const struct pthr *)cli_table_at(&pr->thr_tab, i);
			const struct prof_proc *q = prof_proc_of(pr->p, th->pid);
			fprintf(f, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"process\":", i ? "," : "", th->pid, th->tid);
			rpt_jstr(f, q ? q->name : "?");
			const char *tn = tb_reader_thread_name(pr->r, th->tid);
			fputs(",\"thread\":", f);
			if (tn && *tn)
				rpt_jstr(f, tn);
			else
				fputs("null", f);
			fprintf(f, ",\"samples\":%" PRIu64 ",\"periods\":%" PRIu64 ",\"self\":", th->agg.samples, th->agg.periods);
			json_rows(pr, f, &th->agg, 0, top);
			fputs(",\"total\":", f);
			json_rows(pr, f, &th->agg, 1, top);
			fputc('}', f);
		}
		fputc(']', f);
	}
	rpt_json_diags(f, pr->r);
}

int report_profile(struct tb_reader *r, const char *dir, int json, int quiet, size_t top, int threads,
		   size_t max_threads, FILE *out)
{
	struct preport pr;
	memset(&pr, 0, sizeof pr);
	pr.thr_tab = (struct cli_table)CLI_TABLE_INIT(struct pthr);
	pr.r = r;
	pr.dir = dir;
	pr.p = prof_open(r, "report", quiet);
	if (!pr.p)
		return cli_error("report", "out of memory");
	int rc = TB_EXIT_OK;
	if (!prof_present(pr.p)) {
		rc = cli_error("report", "%s has no profile:sample events: it was not written by `tracebuf profile` "
					 "(without --profile, report summarises any trace)", dir);
	} else if (profile_collect(&pr)) {
		rc = cli_error("report", "out of memory");
	} else {
		/* busiest first; the (pid, tid) index is not used after this */
		cli_sort(pr.thr_tab.v, pr.thr_tab.n, sizeof(struct pthr), cmp_pthr);
		if (json)
			profile_json(&pr, out, top, threads, max_threads);
		else
			profile_text(&pr, out, top, threads, max_threads);
		if (fflush(out) || ferror(out))
			rc = cli_error("report", "write error on %s", out == stdout ? "standard output" : "the report");
		else if (tb_reader_ndiags(r))
			rc = TB_EXIT_PARTIAL;
	}
	for (size_t i = 0; i < pr.thr_tab.n; i++)
		prof_agg_free(&((struct pthr *)cli_table_at(&pr.thr_tab, i))->agg);
	cli_table_free(&pr.thr_tab);
	prof_agg_free(&pr.all);
	prof_close(pr.p);
	return rc;
}
