/* SPDX-License-Identifier: MIT */
/*
 * bench.h - the benchmark harness: every figure is printed with the ratio it
 * is judged by, against a baseline measured in the same run.
 */
#ifndef TB_BENCH_H
#define TB_BENCH_H

struct bench_table;

/* 1 when BENCH_QUICK=1: small counts, proves the harness works, asserts nothing. */
int bench_quick(void);

/*
 * Adds a row: group, configuration, figure with its unit, the ratio it is
 * judged by (name + target; NULL when the row is a baseline).
 */
void bench_row(struct bench_table *t, const char *group, const char *config, double value, const char *unit,
	       double ratio, const char *ratio_name, const char *target);
/* A row that could not be measured, with the reason. */
void bench_skip(struct bench_table *t, const char *group, const char *config, const char *why);

/* The benchmark groups. */
void bench_producer(struct bench_table *t);

#endif
