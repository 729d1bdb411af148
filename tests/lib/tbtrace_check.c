/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "tbtrace_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tbtrace_diag_cb(void *arg, const struct tb_rd_diag *d)
{
	struct tbtrace_diags *dg = arg;
	const char *b = strrchr(d->file, '/');
	if (dg->n < 32)
		snprintf(dg->msg[dg->n], sizeof dg->msg[0], "%s@%" PRIu64 ": %s", b ? b + 1 : d->file, d->offset,
			 d->what);
	if (getenv("TB_VERBOSE"))
		fprintf(stderr, "diag: %s@%" PRIu64 ": %s\n", d->file, d->offset, d->what);
	dg->n++;
}

int tbtrace_open_reader(const char *dir, unsigned flags, struct tbtrace_diags *dg, struct tb_reader **r)
{
	struct tb_reader_opts o = { .size = sizeof o, .flags = flags, .diag = tbtrace_diag_cb, .diag_arg = dg };
	memset(dg, 0, sizeof *dg);
	return tb_reader_open(dir, &o, r);
}

uint64_t tbtrace_count(struct tb_reader *r, uint64_t *notices)
{
	const struct tb_rd_event *e;
	uint64_t n = 0, k = 0, last = 0;
	while (tb_reader_next(r, &e) > 0) {
		if (tb_rd_ticks(e) < last) {
			fprintf(stderr, "time goes back: %" PRIu64 " after %" PRIu64 "\n", tb_rd_ticks(e), last);
			exit(1);
		}
		last = tb_rd_ticks(e);
		if (tb_rd_kind(e) == TB_RD_EVENT)
			n++;
		else
			k++;
	}
	if (notices)
		*notices = k;
	return n;
}

int tbtrace_has_diag(const struct tbtrace_diags *dg, const char *a, const char *b)
{
	for (int i = 0; i < dg->n && i < 32; i++)
		if (strstr(dg->msg[i], a) && (!b || strstr(dg->msg[i], b)))
			return 1;
	return 0;
}
