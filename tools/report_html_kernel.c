/* SPDX-License-Identifier: MIT */
/*
 * report_html_kernel.c - what `report --html` draws of a --kernel trace
 * (report_html.c has the map of the page's data): the thread-state bands
 * (report_sched.c's intervals per thread lane, with what a blocked one was
 * blocked in) and the CPU rows (which thread ran, from one sched_switch to
 * the next).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_map.h"
#include "cli_report.h"
#include "report_html_impl.h"
#include "report_sched.h"

/* ---- CPU rows ---- */

int rh_oc_is_switch(const struct html *h, uint32_t id)
{
	for (unsigned i = 0; i < h->nsw; i++)
		if (h->sw_id[i] == id)
			return 1;
	return 0;
}

/* remembers tid's name (the latest comm a switch gave it) */
static int oc_name(struct html *h, uint32_t tid, const struct tb_rd_event *e, const char *field)
{
	int i = tb_rd_field_index(e, field);
	size_t n = 0;
	const char *c = i < 0 ? NULL : tb_rd_str(e, (unsigned)i, &n);
	if (!c || !tid)
		return 0;
	uint64_t *v = cli_map_get(&h->oc_name, 0, tid, 1);
	if (!v)
		return -ENOMEM;
	if (!*v) {
		if (h->ncomm == h->capcomm) {
			size_t cap = h->capcomm ? h->capcomm * 2 : 256;
			char(*nc)[16] = realloc(h->oc_comm, cap * sizeof *nc);
			if (!nc)
				return -ENOMEM;
			h->oc_comm = nc;
			h->capcomm = cap;
		}
		*v = ++h->ncomm;
	}
	snprintf(h->oc_comm[*v - 1], 16, "%.*s", (int)(n < 15 ? n : 15), c);
	return 0;
}

/* tid ran on lane's CPU over [a, b) (ns from the start): a run, the idle task's left out */
int rh_oc_run_add(struct html *h, uint32_t lane, uint32_t tid, int64_t a, int64_t b)
{
	if (!tid || b < a)
		return 0;
	h->oc_total++;
	if (h->noc == TB_HTML_STATES)
		return 0;
	if (h->noc == h->capoc) {
		size_t cap = h->capoc ? h->capoc * 2 : 1024;
		struct oc_run *n = realloc(h->oc, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		h->oc = n;
		h->capoc = cap;
	}
	h->oc[h->noc++] = (struct oc_run){ .start = a, .dur = b - a, .lane = lane, .tid = tid };
	return 0;
}

/* a sched_switch at rel ns on the CPU of lane: the previous task's run ends, the next one's begins */
int rh_oc_switch(struct html *h, const struct tb_rd_event *e, int64_t rel)
{
	uint32_t lane = h->cpu_lane[tb_rd_stream(e)];
	int ip = tb_rd_field_index(e, "prev_tid"), in = tb_rd_field_index(e, "next_tid");
	if (ip < 0 || in < 0)
		return 0;
	int64_t prev = tb_rd_i64(e, (unsigned)ip), next = tb_rd_i64(e, (unsigned)in);
	if (prev < 0 || next < 0 || prev > UINT32_MAX || next > UINT32_MAX)
		return 0; /* not a task id: nothing drawn of it */
	/* the run of prev: known when the CPU's previous switch in the trace put
	 * prev there; otherwise switches are missing in between (left out by
	 * the process-tree filter, or lost) and who ran when is not known */
	if (h->oc_since[lane] >= 0 && h->oc_tid[lane] == (uint32_t)prev &&
	    rh_oc_run_add(h, lane, (uint32_t)prev, h->oc_since[lane], rel))
		return -ENOMEM;
	h->oc_since[lane] = rel;
	h->oc_tid[lane] = (uint32_t)next;
	if (oc_name(h, (uint32_t)prev, e, "prev_comm") || oc_name(h, (uint32_t)next, e, "next_comm"))
		return -ENOMEM;
	return 0;
}

void rh_put_cpus(struct html *h, FILE *f)
{
	if (!h->nsw || !h->oc_since) {
		fputs(",\"cpus\":null", f);
		return;
	}
	fprintf(f, ",\"cpus\":{\"total\":%" PRIu64 ",\"kept\":%zu", h->oc_total, h->noc);
	static const char *keys[] = { "lane", "start", "dur", "tid" };
	for (int k = 0; k < 4; k++) {
		fprintf(f, ",\"%s\":[", keys[k]);
		for (size_t i = 0; i < h->noc; i++) {
			const struct oc_run *o = &h->oc[i];
			if (k == 0 || k == 3)
				fprintf(f, i ? ",%" PRIu32 : "%" PRIu32, k ? o->tid : o->lane);
			else
				fprintf(f, i ? ",%" PRId64 : "%" PRId64, k == 1 ? o->start : o->dur);
		}
		fputc(']', f);
	}
	/* the names of the threads drawn: the trace's text, escaped (a hostile comm sends no markup) */
	fputs(",\"names\":{", f);
	int first = 1;
	for (size_t i = 0; i < h->noc; i++) {
		uint64_t *v = cli_map_get(&h->oc_name, 1, h->oc[i].tid, 0);
		if (v)
			continue; /* said already */
		uint64_t *nm = cli_map_get(&h->oc_name, 0, h->oc[i].tid, 0);
		if (!nm || !(v = cli_map_get(&h->oc_name, 1, h->oc[i].tid, 1)))
			continue;
		*v = 1;
		fprintf(f, "%s\"%" PRIu32 "\":", first ? "" : ",", h->oc[i].tid);
		rpt_jstr(f, h->oc_comm[*nm - 1]);
		first = 0;
	}
	fputs("}}", f);
}

/* ---- thread-state bands ---- */

/* a thread's interval in one state (report_sched.c's state machine): onto its lane's band */
static int state_add(void *arg, uint32_t tid, int state, uint64_t from, uint64_t to, const char *cause)
{
	struct html *h = arg;
	unsigned c = 0;
	if (cause) {
		while (c < h->ncauses && h->causes[c] != cause && strcmp(h->causes[c], cause))
			c++;
		if (c == h->ncauses && c < TB_HTML_CAUSES)
			h->causes[h->ncauses++] = cause;
		c = c < TB_HTML_CAUSES ? c + 1 : 0;
	}
	uint64_t *l = cli_map_get(&h->tid_lane, 0, tid, 0);
	if (!l || !*l)
		return 0;
	size_t lane = (size_t)*l - 1;
	int64_t a = tb_reader_ticks_to_ns(h->r, from) - h->t0, b = tb_reader_ticks_to_ns(h->r, to) - h->t0;
	size_t k = h->st_last[lane];
	if (k != SIZE_MAX && h->st[k].state == state && h->st[k].cause == c && h->st[k].start + h->st[k].dur == a) {
		h->st[k].dur = b - h->st[k].start;
		return 0;
	}
	h->st_total++;
	if (h->nst == TB_HTML_STATES)
		return 0;
	if (h->nst == h->capst) {
		size_t cap = h->capst ? h->capst * 2 : 1024;
		struct st_iv *n = realloc(h->st, cap * sizeof *n);
		if (!n)
			return -ENOMEM;
		h->st = n;
		h->capst = cap;
	}
	h->st[h->nst] = (struct st_iv){ .start = a, .dur = b > a ? b - a : 0, .lane = (uint32_t)lane, .state = (uint8_t)state,
					.cause = (uint8_t)c };
	h->st_last[lane] = h->nst++;
	return 0;
}

void rh_put_states(struct html *h, FILE *f)
{
	if (!h->rs) {
		fputs(",\"states\":null", f);
		return;
	}
	fprintf(f, ",\"states\":{\"names\":[\"running\",\"runnable\",\"blocked\"],\"total\":%" PRIu64 ",\"kept\":%zu",
		h->st_total, h->nst);
	/* what blocked intervals were blocked in: "cause" is 1 + an index in "causes", 0 not known */
	fputs(",\"causes\":[", f);
	for (unsigned i = 0; i < h->ncauses; i++) {
		if (i)
			fputc(',', f);
		rpt_jstr(f, h->causes[i]);
	}
	fputc(']', f);
	static const char *keys[] = { "lane", "start", "dur", "state", "cause" };
	for (int k = 0; k < 5; k++) {
		fprintf(f, ",\"%s\":[", keys[k]);
		for (size_t i = 0; i < h->nst; i++) {
			const struct st_iv *s = &h->st[i];
			int64_t v = k == 0 ? s->lane : k == 1 ? s->start : k == 2 ? s->dur : k == 3 ? s->state : s->cause;
			fprintf(f, i ? ",%" PRId64 : "%" PRId64, v);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

int rh_kernel_setup(struct html *h)
{
	/* the thread-state bands: the threads with a lane of their own */
	if ((h->rs = rs_new(h->r)) != NULL) {
		h->st_last = malloc((h->nlanes ? h->nlanes : 1) * sizeof *h->st_last);
		if (!h->st_last)
			return -ENOMEM;
		for (size_t l = 0; l < h->nlanes; l++)
			h->st_last[l] = SIZE_MAX;
		for (size_t i = 0; i < h->thr.n && i < TB_HTML_THREADS; i++) {
			struct hthr *t = cli_table_at(&h->thr, i);
			uint64_t *v = t->tid ? cli_map_get(&h->tid_lane, 0, t->tid, 1) : NULL;
			if (t->tid && !v)
				return -ENOMEM;
			if (v)
				*v = (uint64_t)t->lane + 1;
		}
		rs_on_interval(h->rs, state_add, h);
	}
	/* the CPU lanes' occupancy: the classes named sched_switch (a kernel class: its stream's CPU) */
	for (uint32_t id = 0, nid = tb_reader_nclass_ids(h->r); id < nid && h->nsw < TB_HTML_SWITCH_IDS; id++) {
		const char *n = tb_reader_class_name(h->r, id);
		if (n && !strcmp(n, "sched_switch"))
			h->sw_id[h->nsw++] = id;
	}
	if (h->nsw) {
		h->oc_since = malloc((h->ncpu_lanes ? h->ncpu_lanes : 1) * sizeof *h->oc_since);
		h->oc_tid = calloc(h->ncpu_lanes ? h->ncpu_lanes : 1, sizeof *h->oc_tid);
		if (!h->oc_since || !h->oc_tid)
			return -ENOMEM;
		for (size_t l = 0; l < h->ncpu_lanes; l++)
			h->oc_since[l] = -1;
	}
	return 0;
}
