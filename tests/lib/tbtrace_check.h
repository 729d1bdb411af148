/* SPDX-License-Identifier: MIT */
/* tbtrace_check.h - helpers of the reader tests: collect diagnostics, read everything. */
#ifndef TBTRACE_CHECK_H
#define TBTRACE_CHECK_H

#include <stdint.h>

#include <tracebuf/reader.h>

struct tbtrace_diags {
	int n;
	char msg[32][400]; /* "file-basename@offset: what" */
};

/* Diagnostics callback that stores into a struct tbtrace_diags. */
void tbtrace_diag_cb(void *arg, const struct tb_rd_diag *d);
/* Opens dir with the collecting callback; returns tb_reader_open's rc. */
int tbtrace_open_reader(const char *dir, unsigned flags, struct tbtrace_diags *dg, struct tb_reader **r);
/* Counts events (kind EVENT) and notices; checks time order; returns events. */
uint64_t tbtrace_count(struct tb_reader *r, uint64_t *notices);
/* 1 when some diagnostic contains every one of the given substrings. */
int tbtrace_has_diag(const struct tbtrace_diags *dg, const char *a, const char *b);

#endif
