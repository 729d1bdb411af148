/* SPDX-License-Identifier: MIT */
/*
 * convert_folded.c - `tracebuf convert DIR --to folded [-o FILE]`: the
 * samples of a `tracebuf profile` trace as Brendan Gregg's folded stacks,
 * one line "process;root;...;leaf COUNT" per distinct stack, sorted, counts
 * in periods (1 + timer overruns), for flamegraph.pl and speedscope
 * (docs/PROFILE-READING.md).
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
#include "cli_profile.h"

/* a frame or process name in a folded line: ';' separates frames (written '_'), a line is one
 * stack; the name by the one text rule (tb_rd_format_text: controls as \xNN) */
static int fput(char **buf, size_t *cap, size_t *o, const char *s, int raw)
{
	size_t n = raw ? strlen(s) : tb_rd_format_text(s, strlen(s), NULL, 0);
	if (!*buf || *o + n + 2 > *cap) {
		size_t c2 = 2 * (*o + n + 2);
		char *b = realloc(*buf, c2);
		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = c2;
	}
	if (raw) {
		memcpy(*buf + *o, s, n);
	} else {
		tb_rd_format_text(s, strlen(s), *buf + *o, n);
		for (size_t i = 0; i < n; i++)
			if ((*buf)[*o + i] == ';')
				(*buf)[*o + i] = '_';
	}
	*o += n;
	(*buf)[*o] = 0;
	return 0;
}

static const char **cmp_keys;
static int cmp_folded(const void *a, const void *b)
{
	return strcmp(cmp_keys[*(const size_t *)a], cmp_keys[*(const size_t *)b]);
}

int convert_folded(struct tb_reader *r, const struct cv_opts *opts)
{
	const char *dir = opts->dir, *outp = opts->out;
	int quiet = opts->quiet;
	struct prof *p = prof_open(r, "convert", quiet);
	struct prof_sample *s = malloc(sizeof *s);
	struct cli_smap stacks = { 0 };
	char *line = NULL;
	size_t lcap = 0;
	uint64_t nsamples = 0, invalid = 0;
	int rc = 0;
	if (!p || !s) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	rc = prof_load_samples(p, dir, "folded");
	if (rc)
		goto out;
	int k;
	while ((k = prof_next_sample(p, r, s)) > 0) {
		nsamples++;
		if (s->invalid) {
			invalid++;
			continue;
		}
		/* root first: the process, then the outermost frame ... the leaf */
		const struct prof_proc *q = prof_proc_of(p, s->pid);
		size_t o = 0;
		int bad = fput(&line, &lcap, &o, q ? q->name : "?", 0);
		for (uint32_t j = s->n; !bad && j-- > 0;)
			bad = fput(&line, &lcap, &o, ";", 1) || fput(&line, &lcap, &o, prof_fn(p, s->fid[j])->label, 0);
		uint64_t *v = bad ? NULL : cli_smap_get(&stacks, line, 1);
		if (!v) {
			rc = cli_error("convert", "out of memory");
			goto out;
		}
		*v += s->weight;
	}
	if (k < 0) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	const char **keys;
	uint64_t *vals;
	size_t n = cli_smap_items(&stacks, &keys, &vals);
	size_t *ord = malloc((n ? n : 1) * sizeof *ord);
	if (!ord || (stacks.n && !n)) {
		free(ord);
		free(keys);
		free(vals);
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	cmp_keys = keys;
	cli_sort(ord, n, sizeof *ord, cmp_folded);
	int to_stdout = !strcmp(outp, "-");
	FILE *f = to_stdout ? stdout : fopen(outp, "w");
	if (!f) {
		rc = cli_error("convert", "cannot create %s: %s", outp, strerror(errno));
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s %" PRIu64 "\n", keys[ord[i]], vals[ord[i]]);
		int werr = fflush(f) != 0 || ferror(f);
		if (!to_stdout && fclose(f))
			werr = 1;
		if (werr)
			rc = cli_error("convert", "write error on %s", to_stdout ? "standard output" : outp);
		else if (!quiet)
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " sample%s -> %s: %zu distinct stack%s; %" PRIu64
					" with an invalid PC left out", nsamples, cli_s(nsamples),
				to_stdout ? "standard output" : outp, n, cli_s(n), invalid);
	}
	free(ord);
	free(keys);
	free(vals);
out:
	free(line);
	cli_smap_free(&stacks);
	free(s);
	prof_close(p);
	return rc;
}

