/* SPDX-License-Identifier: MIT */
/*
 * convert_speedscope.c - `tracebuf convert DIR --to speedscope -o FILE.json`:
 * a `tracebuf profile` trace in speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json):
 *
 *   { "$schema": ..., "shared": { "frames": [ {name, file}, ... ] },
 *     "profiles": [ { "type": "sampled", "name": "worker (tid 101) in web (pid 100)",
 *                     "unit": "milliseconds", "startValue", "endValue",
 *                     "samples": [[frame, ...], ...], "weights": [...] } ],
 *     "name", "activeProfileIndex": 0, "exporter": "tracebuf 0.1.0" }
 *
 * One profile per thread (busiest first), its samples in time order,
 * stacks outermost frame first.  A sample's weight is the time it stands
 * for: (1 + timer overruns) sampling periods of its process (1000 / hz ms,
 * from profile:info); "unit": "none" and periods when a process has no
 * profile:info.  Consecutive samples with the same stack are merged (their
 * weights added): speedscope draws them the same.  Samples with an invalid
 * PC are left out (stderr says how many).  startValue/endValue are ms (or
 * periods) from the first to the last sample of the thread; the weights sum
 * to the thread's sampled time.
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

struct sthr {
	uint32_t pid, tid;
	uint64_t periods;
	/* the samples: per sample its first index in stk[], its frame count, its weight in periods */
	uint32_t *off, *len;
	uint64_t *w;
	size_t n, cap;
	uint32_t *stk; /* frame indexes, outermost first */
	size_t sn, scap;
};

static int grow(void **p, size_t *cap, size_t need, size_t esize)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * esize);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int add_sample(struct sthr *t, const uint32_t *frames, uint32_t n, uint64_t w)
{
	if (t->n && t->len[t->n - 1] == n && !memcmp(t->stk + t->off[t->n - 1], frames, n * sizeof *frames)) {
		t->w[t->n - 1] += w; /* the same stack as the previous sample */
		return 0;
	}
	size_t cap = t->cap;
	if (grow((void **)&t->off, &cap, t->n + 1, sizeof *t->off))
		return -ENOMEM;
	cap = t->cap;
	if (grow((void **)&t->len, &cap, t->n + 1, sizeof *t->len))
		return -ENOMEM;
	if (grow((void **)&t->w, &t->cap, t->n + 1, sizeof *t->w))
		return -ENOMEM;
	if (grow((void **)&t->stk, &t->scap, t->sn + n, sizeof *t->stk))
		return -ENOMEM;
	t->off[t->n] = (uint32_t)t->sn;
	t->len[t->n] = n;
	t->w[t->n++] = w;
	memcpy(t->stk + t->sn, frames, n * sizeof *frames);
	t->sn += n;
	return 0;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct sthr *x = a, *y = b;
	if (x->periods != y->periods)
		return x->periods > y->periods ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void jstr(FILE *f, const char *s)
{
	char *j = cv_jdup(s, strlen(s));
	fputs(j ? j : "\"?\"", f);
	free(j);
}

int convert_speedscope(struct tb_reader *r, const struct cv_opts *o)
{
	struct prof *p = prof_open(r, "convert", o->quiet);
	struct prof_sample *s = malloc(sizeof *s);
	struct cli_table thr = CLI_TABLE_INIT(struct sthr);
	struct cli_map fidx = { 0 };  /* fid -> frame index + 1 */
	uint32_t *frames_fid = NULL;  /* frame index -> fid */
	size_t nframes = 0, fcap = 0;
	uint32_t stack[TB_PROF_MAX_DEPTH];
	uint64_t nsamples = 0, invalid = 0;
	int rc = 0;
	if (!p || !s) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	rc = prof_load_samples(p, o->dir, "speedscope");
	if (rc)
		goto out;
	int k;
	while ((k = prof_next_sample(p, r, s)) > 0) {
		nsamples++;
		if (s->invalid) {
			invalid++;
			continue;
		}
		for (uint32_t j = 0; j < s->n; j++) { /* outermost first */
			uint32_t fid = s->fid[s->n - 1 - j];
			uint64_t *v = cli_map_get(&fidx, fid, 0, 1);
			if (!v || (!*v && grow((void **)&frames_fid, &fcap, nframes + 1, sizeof *frames_fid))) {
				rc = cli_error("convert", "out of memory");
				goto out;
			}
			if (!*v) {
				frames_fid[nframes++] = fid;
				*v = nframes;
			}
			stack[j] = (uint32_t)(*v - 1);
		}
		int isnew;
		struct sthr *t = cli_table_get(&thr, s->pid, s->tid, &isnew);
		if (!t || add_sample(t, stack, s->n, s->weight)) {
			rc = cli_error("convert", "out of memory");
			goto out;
		}
		t->pid = s->pid;
		t->tid = s->tid;
		t->periods += s->weight;
	}
	if (k < 0) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	cli_sort(thr.v, thr.n, sizeof(struct sthr), cmp_thr);
	FILE *f = cv_open_out(o);
	if (!f) {
		rc = TB_EXIT_FAIL;
		goto out;
	}
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < nframes; i++) {
		const struct prof_fn *fn = prof_fn(p, frames_fid[i]);
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		jstr(f, fn->label);
		if (fn->path) {
			fputs(",\"file\":", f);
			jstr(f, fn->path);
		}
		fputc('}', f);
	}
	fputs("]},\n\"profiles\":[", f);
	for (size_t i = 0; i < thr.n; i++) {
		const struct sthr *t = cli_table_at(&thr, i);
		const struct prof_proc *q = prof_proc_of(p, t->pid);
		double ms = q && q->hz ? 1000.0 / q->hz : 0; /* one period */
		char name[256];
		const char *tn = tb_reader_thread_name(r, t->tid); /* the last name the trace gave it */
		if (tn && *tn)
			snprintf(name, sizeof name, "%s (tid %" PRIu32 ") in %s (pid %" PRIu32 ")", tn, t->tid,
				 q ? q->name : "?", t->pid);
		else
			snprintf(name, sizeof name, "%s (pid %" PRIu32 ", tid %" PRIu32 ")", q ? q->name : "?", t->pid,
				 t->tid);
		fputs(i ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", f);
		jstr(f, name);
		if (ms > 0)
			fprintf(f, ",\"unit\":\"milliseconds\",\"startValue\":0,\"endValue\":%.12g,\"samples\":[",
				(double)t->periods * ms);
		else
			fprintf(f, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[", t->periods);
		for (size_t j = 0; j < t->n; j++) {
			fputs(j ? ",[" : "[", f);
			for (uint32_t d = 0; d < t->len[j]; d++)
				fprintf(f, d ? ",%" PRIu32 : "%" PRIu32, t->stk[t->off[j] + d]);
			fputc(']', f);
		}
		fputs("],\"weights\":[", f);
		for (size_t j = 0; j < t->n; j++) {
			if (ms > 0)
				fprintf(f, j ? ",%.12g" : "%.12g", (double)t->w[j] * ms);
			else
				fprintf(f, j ? ",%" PRIu64 : "%" PRIu64, t->w[j]);
		}
		fputs("]}", f);
	}
	fputs("],\n\"name\":", f);
	jstr(f, o->dir);
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"tracebuf 0.1.0\"}\n", f);
	rc = cv_close_out(o, f);
	if (!rc && !o->quiet)
		cli_msg(stderr, "tracebuf convert: %" PRIu64 " sample%s -> %s: %zu thread profile%s, %zu frame%s; %" PRIu64
				" with an invalid PC left out", nsamples, cli_s(nsamples), cv_out_name(o), thr.n, cli_s(thr.n),
			nframes, cli_s(nframes), invalid);
out:
	for (size_t i = 0; i < thr.n; i++) {
		struct sthr *t = cli_table_at(&thr, i);
		free(t->off);
		free(t->len);
		free(t->w);
		free(t->stk);
	}
	cli_table_free(&thr);
	cli_map_free(&fidx);
	free(frames_fid);
	free(s);
	prof_close(p);
	return rc;
}
