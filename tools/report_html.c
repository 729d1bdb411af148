/* SPDX-License-Identifier: MIT */
/*
 * report_html.c - `tracebuf report --html -o FILE.html DIR`: one
 * self-contained page (no network access, no framework) that any browser
 * opens: tools/html/report.html, .css and .js (embedded at build time by
 * tools/html/embed.cmake) around the data computed here, one JSON object
 * in <script type="application/json" id="tb-data">.
 *
 * The overview never needs one item per event: the script draws on
 * canvases from per-time-bucket summaries; the single events, packed at
 * ~2.7 bytes each, are drawn only when zoomed in to at most 20,000 of them,
 * and their number is bounded by the page's budget, so that a 10 M-event
 * trace is < 20 MB and its first paint under a second (docs/CONVERT.md has
 * the figures).  The data (docs/CONVERT.md lists every key):
 *
 *   report   the object of `report --format json` (the tables)
 *   profile  the object of `report --profile --format json --top 100`, or null
 *   lanes    a lane per CPU (its events), per thread (the busiest
 *            TB_HTML_THREADS; the others share a lane "other threads")
 *   counts   per lane, its events per bucket (the span cut in `buckets`
 *            equal parts, a power of two <= 65536 with lanes x buckets <=
 *            1 M), sparse: [zeros skipped, count, zeros skipped, count ...]
 *   lost     the loss notices: cpu, stream, kind, count (null: unknown),
 *            begin and end (ns from the start)
 *   spans    NAME_begin ... NAME_end (cli_convert.h rules) as lane, start,
 *            duration, depth, name: the longest TB_HTML_SPANS of them
 *   states   a --kernel trace's thread states (report_sched.c's intervals:
 *            running, runnable, blocked) per thread lane, the first
 *            TB_HTML_STATES, and what a blocked one was blocked in (a
 *            system call, a page fault: `causes`, where the trace has
 *            those events); null without sched events
 *   cpus     a --kernel trace's CPU occupancy: per CPU lane, which thread
 *            ran from one sched_switch to the next that names it as prev
 *            (lane, start, dur, tid; a gap where switches are missing, the
 *            idle task left out; the first TB_HTML_STATES), with the
 *            threads' names (the switches' comms); null without sched_switch
 *   events   single events, per thread lane in a compact form (base64 of
 *            LEB128 varints: zigzag time delta, class), drawn one by one
 *            when zoomed in that far; at most `max_events` of them (the
 *            page's budget, `report --html-events N`): above it, the
 *            first K events of each of TB_HTML_EV_WINDOWS equal time
 *            windows, K the largest that fits (water-filling: sparse
 *            windows whole, dense ones cut), and the cut windows listed
 *            with their counts, said on stderr and in the page
 *   flame    a profile's samples as a call tree: per node its parent, name,
 *            module, total and self periods (1 + overruns); process nodes
 *            under the root
 *   trigger  a flight recorder snapshot's trigger (kind, name, tid, t: ns
 *            from the start), marked on the timeline; null otherwise
 *
 * The --kernel parts (states, cpus) are in report_html_kernel.c, the
 * state both share in report_html_impl.h.
 *
 * Passes over the trace: the report's, the profile report's (two), then
 * one to count each thread's events (lanes) and each time window's (the
 * single events' budget), then one for the buckets, spans, events and
 * (after the profile's map pass) the flame graph.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_convert.h"
#include "cli_map.h"
#include "cli_profile.h"
#include "cli_report.h"
#include "report_sched.h"
#include "report_html_impl.h"

extern const char tb_html_page[], tb_html_css[], tb_html_js[];


static int cmp_thr_n(const void *a, const void *b)
{
	const struct hthr *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* ---------------------------------------------------------------------- */
/* spans: the longest TB_HTML_SPANS, a min-heap by duration                */

static void span_add(struct html *h, const struct span *s)
{
	h->spans_total++;
	struct span *a = h->spans;
	size_t i;
	if (h->nspans < TB_HTML_SPANS) {
		i = h->nspans++;
		while (i && a[(i - 1) / 2].dur > s->dur) {
			a[i] = a[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		a[i] = *s;
		return;
	}
	if (s->dur <= a[0].dur)
		return;
	i = 0; /* replace the shortest, sift down */
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->nspans)
			break;
		if (c + 1 < h->nspans && a[c + 1].dur < a[c].dur)
			c++;
		if (a[c].dur >= s->dur)
			break;
		a[i] = a[c];
		i = c;
	}
	a[i] = *s;
}

static void span_close(struct html *h, struct hthr *t, int64_t end)
{
	uint32_t id = cv_stack_pop(&t->st);
	int64_t b = t->ts[t->st.depth];
	struct span s = { .start = b - h->t0, .dur = end > b ? end - b : 0, .lane = (uint32_t)t->lane,
			  .depth = t->st.depth, .name = id };
	span_add(h, &s);
}

/* ---------------------------------------------------------------------- */
/* the flame graph: a call tree                                            */

static int node_child(struct html *h, uint32_t parent, const char *label, const char *module, uint32_t *out)
{
	char key[1024];
	snprintf(key, sizeof key, "%s\x01%s", label, module ? module : "");
	uint64_t *lid = cli_smap_get(&h->labels, key, 1);
	if (!lid)
		return -ENOMEM;
	if (!*lid)
		*lid = h->labels.n; /* ids from 1, in first-seen order */
	uint64_t *v = cli_map_get(&h->child, parent, *lid, 1);
	if (!v)
		return -ENOMEM;
	if (!*v) {
		if (h->nnodes == h->ncap) {
			size_t cap = h->ncap ? 2 * h->ncap : 1024;
			uint32_t *p = realloc(h->parent, cap * sizeof *p), *n = p ? realloc(h->name, cap * sizeof *n) : NULL;
			if (p)
				h->parent = p;
			if (n)
				h->name = n;
			uint64_t *va = n ? realloc(h->value, cap * sizeof *va) : NULL, *se = NULL;
			if (va)
				h->value = va;
			if (va)
				se = realloc(h->self, cap * sizeof *se);
			if (!se)
				return -ENOMEM;
			h->self = se;
			h->ncap = cap;
		}
		h->parent[h->nnodes] = parent;
		h->name[h->nnodes] = (uint32_t)*lid;
		h->value[h->nnodes] = h->self[h->nnodes] = 0;
		*v = ++h->nnodes;
	}
	*out = (uint32_t)(*v - 1);
	return 0;
}

static int flame_add(struct html *h, const struct prof_sample *s)
{
	if (s->invalid)
		return 0;
	if (!h->nnodes) { /* the root */
		uint32_t root;
		if (node_child(h, UINT32_MAX, "all", NULL, &root))
			return -ENOMEM;
	}
	const struct prof_proc *q = prof_proc_of(h->prof, s->pid);
	uint32_t node;
	if (node_child(h, 0, q ? q->name : "?", NULL, &node))
		return -ENOMEM;
	h->value[0] += s->weight;
	h->value[node] += s->weight;
	for (uint32_t j = s->n; j-- > 0;) {
		const struct prof_fn *f = prof_fn(h->prof, s->fid[j]);
		if (node_child(h, node, f->label, f->module, &node))
			return -ENOMEM;
		h->value[node] += s->weight;
	}
	h->self[node] += s->weight;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* the passes                                                              */

static uint32_t ev_window(const struct html *h, int64_t ns)
{
	uint64_t w = ns <= h->t0 ? 0 : (uint64_t)(ns - h->t0) / (uint64_t)h->win_ns;
	return w < TB_HTML_EV_WINDOWS ? (uint32_t)w : TB_HTML_EV_WINDOWS - 1;
}

static int count_threads(struct html *h)
{
	const struct tb_rd_event *e;
	tb_reader_seek_ticks(h->r, 0);
	while (cli_next(h->r, &e) > 0) {
		if (tb_rd_kind(e) != TB_RD_EVENT)
			continue;
		int isnew;
		struct hthr *t = cli_table_get(&h->thr, tb_rd_pid(e), tb_rd_tid(e), &isnew);
		if (!t)
			return -ENOMEM;
		if (isnew) {
			t->pid = tb_rd_pid(e);
			t->tid = tb_rd_tid(e);
		}
		t->n++;
		h->wcount[ev_window(h, tb_rd_ns(e))]++;
	}
	return 0;
}

/* the largest K with sum over windows of min(count, K) <= ev_max
 * (UINT64_MAX when every event fits): sparse windows keep all their
 * events, dense ones their first K */
static uint64_t ev_per_window(const struct html *h)
{
	uint64_t all = 0, hi = 0;
	for (uint32_t w = 0; w < TB_HTML_EV_WINDOWS; w++) {
		all += h->wcount[w];
		if (h->wcount[w] > hi)
			hi = h->wcount[w];
	}
	if (all <= h->ev_max)
		return UINT64_MAX;
	uint64_t lo = 0; /* sum(min(c, lo)) <= ev_max < sum(min(c, hi)) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, sum = 0;
		for (uint32_t w = 0; w < TB_HTML_EV_WINDOWS; w++)
			sum += h->wcount[w] < mid ? h->wcount[w] : mid;
		if (sum <= h->ev_max)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int put_varint(struct evlane *l, uint64_t v)
{
	if (l->cap - l->len < 10) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		uint8_t *b = realloc(l->b, cap);
		if (!b)
			return -ENOMEM;
		l->b = b;
		l->cap = cap;
	}
	while (v >= 0x80) {
		l->b[l->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	l->b[l->len++] = (uint8_t)v;
	return 0;
}

/* one single event into its lane: (zigzag delta from the lane's previous, class) */
static int ev_keep(struct html *h, size_t lane, int64_t rel, uint32_t cls)
{
	struct evlane *l = &h->evl[lane];
	int64_t d = rel - l->last;
	uint64_t z = d < 0 ? ((uint64_t)-(d + 1) << 1) | 1 : (uint64_t)d << 1;
	if (put_varint(l, z) || put_varint(l, cls))
		return -ENOMEM;
	l->last = rel;
	l->n++;
	h->ev_kept++;
	return 0;
}

static int lost_item(struct html *h, const struct tb_rd_event *e)
{
	if (h->nlost++ >= TB_HTML_LOSSES)
		return 0;
	uint64_t n = tb_rd_count(e);
	int64_t b = tb_rd_ns(e) - h->t0, end = tb_reader_ticks_to_ns(h->r, tb_rd_ticks_end(e)) - h->t0;
	fprintf(h->lost, "%s{\"cpu\":%" PRIu32 ",\"stream\":", h->nlost > 1 ? "," : "", tb_rd_cpu(e));
	rpt_jstr(h->lost, tb_reader_stream_file(h->r, tb_rd_stream(e)));
	fprintf(h->lost, ",\"kind\":\"%s\",\"count\":", tb_rd_kind(e) == TB_RD_DISCARDED_PACKETS ? "packets" : "events");
	if (n || tb_rd_kind(e) == TB_RD_DISCARDED_PACKETS)
		fprintf(h->lost, "%" PRIu64, n);
	else
		fputs("null", h->lost);
	fprintf(h->lost, ",\"begin\":%" PRId64 ",\"end\":%" PRId64 "}", b, end > b ? end : b);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* CPU occupancy: which thread ran on each CPU (sched_switch)              */


static int main_pass(struct html *h)
{
	const struct tb_rd_event *e;
	tb_reader_seek_ticks(h->r, 0);
	if (h->prof && prof_load(h->prof)) /* a pass from where the reader is, then rewinds */
		return -ENOMEM;
	while (cli_next(h->r, &e) > 0) {
		int64_t ns = tb_rd_ns(e);
		if (tb_rd_kind(e) != TB_RD_EVENT) {
			lost_item(h, e);
			continue;
		}
		if (h->rs && rs_event(h->rs, e))
			return -ENOMEM;
		int64_t rel = ns < h->t0 ? 0 : ns - h->t0;
		if (h->nsw && rh_oc_is_switch(h, tb_rd_id(e)) && rh_oc_switch(h, e, rel))
			return -ENOMEM;
		uint64_t b = (uint64_t)rel / (uint64_t)h->bucket_ns;
		if (b >= h->nb)
			b = h->nb - 1;
		struct hthr *t = cli_table_get(&h->thr, tb_rd_pid(e), tb_rd_tid(e), NULL);
		if (!t)
			return -ENOMEM;
		h->counts[(size_t)h->cpu_lane[tb_rd_stream(e)] * h->nb + b]++;
		h->counts[(size_t)t->lane * h->nb + b]++;
		uint32_t id = tb_rd_id(e), inner = 0;
		h->ev_total++;
		if (h->ev_max) {
			uint32_t w = ev_window(h, ns);
			if (h->wkept[w] < h->per_win && h->ev_kept < h->ev_max) {
				h->wkept[w]++;
				if (ev_keep(h, (size_t)t->lane, rel, id))
					return -ENOMEM;
			}
		}
		if (h->prof) {
			int k = prof_event(h->prof, e, h->ps);
			if (k < 0 || (k && flame_add(h, h->ps)))
				return -ENOMEM;
			if (k)
				continue;
		}
		int step = cv_span_step(&h->roles, &t->st, id, &inner);
		if (step < 0)
			return -ENOMEM;
		if (step == CV_BEGIN) {
			if (t->st.depth > t->tcap) {
				uint32_t cap = t->st.cap;
				int64_t *ts = realloc(t->ts, cap * sizeof *ts);
				if (!ts)
					return -ENOMEM;
				t->ts = ts;
				t->tcap = cap;
			}
			t->ts[t->st.depth - 1] = ns;
		} else if (step == CV_END) {
			while (inner--)
				span_close(h, t, ns);
			span_close(h, t, ns);
		}
	}
	for (size_t i = 0; i < h->thr.n; i++) {
		struct hthr *t = cli_table_at(&h->thr, i);
		while (t->st.depth)
			span_close(h, t, h->t1);
	}
	rs_finish(h->rs, h->b1);
	/* the tasks still on their CPUs at the end ran up to it */
	for (size_t l = 0; h->nsw && l < h->ncpu_lanes; l++)
		if (h->oc_since[l] >= 0 && rh_oc_run_add(h, (uint32_t)l, h->oc_tid[l], h->oc_since[l], h->t1 - h->t0))
			return -ENOMEM;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* output                                                                  */

/* copies a JSON text into the page: '<' only occurs inside strings there,
 * where \u003c means the same and cannot close the script element */
static void put_json(FILE *f, const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p));
		if (!lt) {
			fwrite(p, 1, (size_t)(end - p), f);
			break;
		}
		fwrite(p, 1, (size_t)(lt - p), f);
		fputs("\\u003c", f);
		p = lt + 1;
	}
}

static void put_lanes(struct html *h, FILE *f)
{
	fputs(",\"lanes\":[", f);
	for (size_t l = 0; l < h->nlanes; l++) {
		char label[256];
		const char *kind = "thread";
		uint32_t pid = 0, tid = 0;
		if (l < h->ncpu_lanes) {
			kind = "cpu";
			snprintf(label, sizeof label, "cpu %u", (unsigned)l); /* replaced below */
		} else if (l == h->other_lane) {
			kind = "other";
			snprintf(label, sizeof label, "other threads");
		}
		for (size_t i = 0; kind[0] == 't' && i < h->thr.n; i++) {
			const struct hthr *t = cli_table_at(&h->thr, i);
			if ((size_t)t->lane != l)
				continue;
			pid = t->pid;
			tid = t->tid;
			char pn[128], tn[128];
			if (!pid && !tid)
				snprintf(label, sizeof label, "no thread record");
			else
				snprintf(label, sizeof label, "%s %s", cv_process_name(h->r, pid, pn, sizeof pn),
					 cv_thread_name(h->r, pid, tid, tn, sizeof tn));
			break;
		}
		uint64_t total = 0;
		for (uint32_t b = 0; b < h->nb; b++)
			total += h->counts[l * h->nb + b];
		fprintf(f, "%s{\"kind\":\"%s\",", l ? "," : "", kind);
		if (kind[0] == 'c') {
			for (unsigned s = 0; s < tb_reader_nstreams(h->r); s++)
				if (h->cpu_lane[s] == l) {
					fprintf(f, "\"cpu\":%" PRIu32 ",", tb_reader_stream_cpu(h->r, s));
					snprintf(label, sizeof label, "cpu %" PRIu32, tb_reader_stream_cpu(h->r, s));
					break;
				}
		} else if (kind[0] == 't') {
			fprintf(f, "\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",", pid, tid);
		}
		fputs("\"label\":", f);
		rpt_jstr(f, label);
		fprintf(f, ",\"events\":%" PRIu64 "}", total);
	}
	fprintf(f, "],\"buckets\":%" PRIu32 ",\"bucket_ns\":%" PRId64 ",\"counts\":[", h->nb, h->bucket_ns);
	for (size_t l = 0; l < h->nlanes; l++) {
		fputs(l ? ",[" : "[", f);
		uint32_t zeros = 0;
		int first = 1;
		for (uint32_t b = 0; b < h->nb; b++) {
			uint32_t c = h->counts[l * h->nb + b];
			if (!c) {
				zeros++;
				continue;
			}
			fprintf(f, first ? "%" PRIu32 ",%" PRIu32 : ",%" PRIu32 ",%" PRIu32, zeros, c);
			first = 0;
			zeros = 0;
		}
		fputc(']', f);
	}
	fputc(']', f);
}


static void put_spans(struct html *h, FILE *f)
{
	fprintf(f, ",\"spans\":{\"total\":%" PRIu64 ",\"kept\":%zu,\"names\":[", h->spans_total, h->nspans);
	for (uint32_t i = 0; i < h->roles.n; i++)
		fprintf(f, "%s%s", i ? "," : "", h->roles.r[i].span_json);
	static const char *keys[] = { "lane", "start", "dur", "depth", "name" };
	fputc(']', f);
	for (int k = 0; k < 5; k++) {
		fprintf(f, ",\"%s\":[", keys[k]);
		for (size_t i = 0; i < h->nspans; i++) {
			const struct span *s = &h->spans[i];
			int64_t v = k == 0 ? s->lane : k == 1 ? s->start : k == 2 ? s->dur : k == 3 ? s->depth : s->name;
			fprintf(f, i ? ",%" PRId64 : "%" PRId64, v);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

static void put_base64(FILE *f, const uint8_t *b, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
		q[0] = a[v >> 18];
		q[1] = a[(v >> 12) & 63];
		q[2] = i + 1 < n ? a[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? a[v & 63] : '=';
		fwrite(q, 1, 4, f);
	}
}

static void put_events(struct html *h, FILE *f)
{
	fputs(",\"events\":{\"classes\":[", f);
	for (uint32_t i = 0; i < h->roles.n; i++)
		fprintf(f, "%s%s", i ? "," : "", h->roles.r[i].name_json);
	fprintf(f, "],\"total\":%" PRIu64 ",\"kept\":%" PRIu64 ",\"max\":%" PRIu64 ",\"window_ns\":%" PRId64
		   ",\"per_window\":",
		h->ev_total, h->ev_kept, h->ev_max, h->win_ns);
	if (h->per_win == UINT64_MAX)
		fputs("null", f);
	else
		fprintf(f, "%" PRIu64, h->per_win);
	fputs(",\"cut\":[", f); /* [window, its events, ...] of the windows not kept whole */
	int first = 1;
	for (uint32_t w = 0; h->per_win != UINT64_MAX && w < TB_HTML_EV_WINDOWS; w++)
		if (h->wcount[w] > h->per_win) {
			fprintf(f, first ? "%" PRIu32 ",%" PRIu64 : ",%" PRIu32 ",%" PRIu64, w, h->wcount[w]);
			first = 0;
		}
	fputs("],\"n\":[", f);
	for (size_t l = 0; l < h->nlanes; l++)
		fprintf(f, l ? ",%" PRIu64 : "%" PRIu64, h->evl[l].n);
	fputs("],\"data\":[", f);
	for (size_t l = 0; l < h->nlanes; l++) {
		fputs(l ? ",\"" : "\"", f);
		put_base64(f, h->evl[l].b, h->evl[l].len);
		fputc('"', f);
	}
	fputs("]}", f);
}

static void put_flame(struct html *h, FILE *f)
{
	if (!h->nnodes) {
		fputs(",\"flame\":null", f);
		return;
	}
	const char **keys;
	uint64_t *ids;
	size_t n = cli_smap_items(&h->labels, &keys, &ids);
	const char **byid = calloc(n + 1, sizeof *byid);
	fputs(",\"flame\":{\"names\":[", f);
	for (size_t i = 0; byid && i < n; i++)
		if (ids[i] >= 1 && ids[i] <= n)
			byid[ids[i] - 1] = keys[i];
	for (size_t i = 0; i < n; i++) {
		const char *k = byid ? byid[i] : NULL, *sep = k ? strchr(k, '\x01') : NULL;
		fputs(i ? ",[" : "[", f);
		char *a = cv_jdup(k ? k : "?", sep ? (size_t)(sep - k) : (k ? strlen(k) : 1));
		char *m = cv_jdup(sep ? sep + 1 : "", sep ? strlen(sep + 1) : 0);
		fprintf(f, "%s,%s]", a ? a : "\"?\"", m ? m : "\"\"");
		free(a);
		free(m);
	}
	free(byid);
	free(keys);
	free(ids);
	fputs("],\"parent\":[", f);
	for (size_t i = 0; i < h->nnodes; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, h->parent[i] == UINT32_MAX ? (int64_t)-1 : (int64_t)h->parent[i]);
	fputs("],\"name\":[", f);
	for (size_t i = 0; i < h->nnodes; i++)
		fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, h->name[i] - 1);
	fputs("],\"value\":[", f);
	for (size_t i = 0; i < h->nnodes; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, h->value[i]);
	fputs("],\"self\":[", f);
	for (size_t i = 0; i < h->nnodes; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, h->self[i]);
	fputs("]}", f);
}

/* writes the template with its {{NAME}} parts replaced */
static void put_page(FILE *f, const char *title, const char *data, size_t dlen)
{
	const char *p = tb_html_page;
	for (;;) {
		const char *m = strstr(p, "{{");
		if (!m) {
			fputs(p, f);
			return;
		}
		fwrite(p, 1, (size_t)(m - p), f);
		if (!strncmp(m, "{{CSS}}", 7))
			fputs(tb_html_css, f);
		else if (!strncmp(m, "{{JS}}", 6))
			fputs(tb_html_js, f);
		else if (!strncmp(m, "{{DATA}}", 8))
			put_json(f, data, dlen);
		else if (!strncmp(m, "{{TITLE}}", 9)) { /* the trace's name by the one text rule, HTML-escaped */
			char *tx = cli_txdup(title);
			for (const char *t = tx ? tx : "?"; *t; t++) {
				if (*t == '<')
					fputs("&lt;", f);
				else if (*t == '>')
					fputs("&gt;", f);
				else if (*t == '&')
					fputs("&amp;", f);
				else
					fputc(*t, f);
			}
			free(tx);
		} else
			fwrite(m, 1, 2, f);
		const char *close = strstr(m, "}}");
		p = close && m[2] != '{' ? close + 2 : m + 2;
	}
}

/* "trigger": what fired a flight recorder's snapshot (cli_flight_trigger), at
 * t ns from the start (ticks when trigger.json has them: the trace's own
 * clock; else its wall time); null for any other trace */
static void put_trigger(struct html *h, const char *snapshot, FILE *f)
{
	struct cli_trigger t;
	fputs(",\"trigger\":", f);
	if (!snapshot || cli_flight_trigger(snapshot, &t) < 0) {
		fputs("null", f);
		return;
	}
	int64_t at = t.has_ticks ? tb_reader_ticks_to_ns(h->r, t.ticks) : (int64_t)t.realtime_ns;
	fputs("{\"kind\":", f);
	rpt_jstr(f, t.kind);
	fputs(",\"name\":", f);
	rpt_jstr(f, t.name);
	fprintf(f, ",\"t\":%" PRId64 ",\"tid\":", at - h->t0);
	if (t.has_tid)
		fprintf(f, "%" PRIu32, t.tid);
	else
		fputs("null", f);
	fputs("}", f);
}

int report_html(struct tb_reader *r, const char *dir, const char *snapshot, const char *out, int quiet,
		uint64_t max_events)
{
	struct html h;
	memset(&h, 0, sizeof h);
	h.r = r;
	h.thr = (struct cli_table)CLI_TABLE_INIT(struct hthr);
	h.other_lane = SIZE_MAX;
	char *data = NULL, *rep = NULL, *profj = NULL;
	size_t dlen = 0, rlen = 0, plen = 0;
	int rc = 0;
	FILE *f = NULL;
	/* 1. the tables: report's JSON, and report --profile's for a profile */
	FILE *m = open_memstream(&rep, &rlen);
	if (!m || report_json(r, dir, m)) {
		if (m)
			fclose(m);
		rc = -ENOMEM;
		goto out;
	}
	fclose(m);
	h.prof = prof_open(r, "report", quiet);
	h.ps = malloc(sizeof *h.ps);
	if (!h.prof || !h.ps || cv_roles_load(&h.roles, r)) {
		rc = -ENOMEM;
		goto out;
	}
	if (prof_present(h.prof)) {
		tb_reader_seek_ticks(r, 0);
		m = open_memstream(&profj, &plen);
		int prc = m ? report_profile(r, dir, 1, 1, 100, 0, 0, m) : -ENOMEM;
		if (m)
			fclose(m);
		if (prc == TB_EXIT_FAIL || prc < 0) {
			rc = -ENOMEM;
			goto out;
		}
	} else {
		prof_close(h.prof);
		h.prof = NULL;
	}
	/* 2. the lanes: every CPU, the busiest threads */
	uint64_t b0, b1;
	tb_reader_time_range(r, &b0, &b1);
	h.t0 = tb_reader_ticks_to_ns(r, b0);
	h.t1 = tb_reader_ticks_to_ns(r, b1);
	h.b1 = b1;
	if (h.t1 < h.t0)
		h.t1 = h.t0;
	h.win_ns = (h.t1 - h.t0) / TB_HTML_EV_WINDOWS + 1;
	h.ev_max = max_events;
	h.wcount = calloc(TB_HTML_EV_WINDOWS, sizeof *h.wcount);
	h.wkept = calloc(TB_HTML_EV_WINDOWS, sizeof *h.wkept);
	if (!h.wcount || !h.wkept || count_threads(&h)) {
		rc = -ENOMEM;
		goto out;
	}
	unsigned ns = tb_reader_nstreams(r);
	h.cpu_lane = calloc(ns ? ns : 1, sizeof *h.cpu_lane);
	if (!h.cpu_lane) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned s = 0; s < ns; s++) { /* one lane per distinct CPU, in CPU order */
		uint32_t cpu = tb_reader_stream_cpu(r, s), lane = 0;
		for (unsigned s2 = 0; s2 < ns; s2++) {
			uint32_t c2 = tb_reader_stream_cpu(r, s2);
			int first = 1; /* count each distinct smaller CPU once */
			for (unsigned s3 = 0; s3 < s2; s3++)
				first &= tb_reader_stream_cpu(r, s3) != c2;
			lane += first && c2 < cpu;
		}
		h.cpu_lane[s] = lane;
		if (lane + 1 > h.ncpu_lanes)
			h.ncpu_lanes = lane + 1;
	}
	cli_sort(h.thr.v, h.thr.n, sizeof(struct hthr), cmp_thr_n);
	cli_map_free(&h.thr.idx); /* sorted: rebuild the index */
	memset(&h.thr.idx, 0, sizeof h.thr.idx);
	h.nlanes = h.ncpu_lanes;
	for (size_t i = 0; i < h.thr.n; i++) {
		struct hthr *t = cli_table_at(&h.thr, i);
		uint64_t *v = cli_map_get(&h.thr.idx, t->pid, t->tid, 1);
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
		*v = i + 1;
		if (i < TB_HTML_THREADS) {
			t->lane = (int)h.nlanes++;
		} else {
			if (h.other_lane == SIZE_MAX)
				h.other_lane = h.nlanes++;
			t->lane = (int)h.other_lane;
		}
	}
	/* the thread-state bands and the CPU rows (a --kernel trace) */
	if ((rc = rh_kernel_setup(&h)) != 0)
		goto out;
	/* 3. buckets: a power of two, lanes x buckets <= TB_HTML_CELLS */
	h.nb = TB_HTML_MAX_BUCKETS;
	while (h.nb > 1024 && (size_t)h.nb * (h.nlanes ? h.nlanes : 1) > TB_HTML_CELLS)
		h.nb /= 2;
	h.span_ns = h.t1 - h.t0;
	h.bucket_ns = h.span_ns / h.nb + 1;
	uint64_t total = 0;
	for (size_t i = 0; i < h.thr.n; i++)
		total += ((struct hthr *)cli_table_at(&h.thr, i))->n;
	h.per_win = ev_per_window(&h);
	h.counts = calloc((h.nlanes ? h.nlanes : 1) * h.nb, sizeof *h.counts);
	h.spans = malloc(TB_HTML_SPANS * sizeof *h.spans);
	h.lost = open_memstream(&h.lost_buf, &h.lost_len);
	h.evl = calloc(h.nlanes ? h.nlanes : 1, sizeof *h.evl);
	if (!h.counts || !h.spans || !h.lost || !h.evl ||
	    main_pass(&h)) {
		rc = -ENOMEM;
		goto out;
	}
	fclose(h.lost);
	h.lost = NULL;
	/* 4. the data, then the page */
	m = open_memstream(&data, &dlen);
	if (!m) {
		rc = -ENOMEM;
		goto out;
	}
	char when[64];
	cv_utc(when, sizeof when, h.t0);
	fputs("{\"version\":1,\"tool\":\"tracebuf 0.1.0\",\"trace\":", m);
	rpt_jstr(m, dir);
	fprintf(m, ",\"start_ns\":\"%" PRId64 "\",\"start\":\"%s\",\"duration_ns\":%" PRId64 ",\"report\":", h.t0, when,
		h.span_ns);
	fwrite(rep, 1, rlen, m);
	fputs(",\"profile\":", m);
	if (profj && plen)
		fwrite(profj, 1, plen, m);
	else
		fputs("null", m);
	put_lanes(&h, m);
	fprintf(m, ",\"lost\":{\"total\":%zu,\"items\":[", h.nlost);
	if (h.lost_len)
		fwrite(h.lost_buf, 1, h.lost_len, m);
	fputs("]}", m);
	put_spans(&h, m);
	rh_put_states(&h, m);
	rh_put_cpus(&h, m);
	put_events(&h, m);
	put_flame(&h, m);
	put_trigger(&h, snapshot, m);
	fputs("}", m);
	fclose(m);
	struct cv_opts o = { .cmd = "report", .out = out };
	if (!(f = cv_open_out(&o))) {
		rc = TB_EXIT_FAIL;
		goto out;
	}
	put_page(f, dir, data, dlen);
	rc = cv_close_out(&o, f);
	if (!rc && !quiet) {
		char a[32], d[64], k[32];
		cli_msg(stderr, "tracebuf report: %s event%s -> %s: %zu lane%s x %" PRIu32 " buckets of %s, %zu of %" PRIu64
				" span%s, %s single event%s, %zu loss notice%s%s; %zu bytes of data",
			rpt_grp(a, total), cli_s(total), out, h.nlanes, cli_s(h.nlanes), h.nb, rpt_dur(d, h.bucket_ns), h.nspans, h.spans_total,
			cli_s(h.spans_total), h.ev_kept == h.ev_total ? "every" : rpt_grp(k, h.ev_kept),
			h.ev_kept == h.ev_total || h.ev_kept == 1 ? "" : "s",
			h.nlost, cli_s(h.nlost), h.nnodes ? ", a flame graph" : "", dlen);
	}
	if (!rc && h.ev_kept < h.ev_total) { /* even with -q: events left out are never silent */
		char a[32], b[32], c[32], d[64];
		if (!h.ev_max)
			cli_msg(stderr, "tracebuf report: --html-events 0: no single events in %s (zoomed in, its timeline "
					"shows events per pixel only)", out);
		else
			cli_msg(stderr, "tracebuf report: %s holds %s of the %s events one by one (its budget: %s, "
					"--html-events N): windows of %s with more than %" PRIu64 " event%s keep their "
					"first %" PRIu64 "; the page says where",
				out, rpt_grp(a, h.ev_kept), rpt_grp(b, h.ev_total), rpt_grp(c, h.ev_max),
				rpt_dur(d, h.win_ns), h.per_win, cli_s(h.per_win), h.per_win);
	}
out:
	if (rc < 0)
		rc = cli_error("report", "out of memory");
	else if (!rc && tb_reader_ndiags(r))
		rc = TB_EXIT_PARTIAL;
	if (h.lost)
		fclose(h.lost);
	free(h.lost_buf);
	for (size_t i = 0; i < h.thr.n; i++) {
		struct hthr *t = cli_table_at(&h.thr, i);
		free(t->st.s);
		free(t->ts);
	}
	cli_table_free(&h.thr);
	cv_roles_free(&h.roles);
	free(h.counts);
	free(h.cpu_lane);
	free(h.spans);
	for (size_t l = 0; h.evl && l < h.nlanes; l++)
		free(h.evl[l].b);
	free(h.evl);
	free(h.wcount);
	free(h.wkept);
	cli_map_free(&h.child);
	cli_smap_free(&h.labels);
	free(h.parent);
	free(h.name);
	free(h.value);
	free(h.self);
	free(h.ps);
	prof_close(h.prof);
	rs_free(h.rs);
	cli_map_free(&h.tid_lane);
	free(h.st_last);
	free(h.st);
	free(h.oc_since);
	free(h.oc_tid);
	free(h.oc);
	free(h.oc_comm);
	cli_map_free(&h.oc_name);
	free(data);
	free(rep);
	free(profj);
	return rc;
}
