/* SPDX-License-Identifier: MIT */
/*
 * bench.h - the benchmark harness: every figure is printed with the ratio it
 * is judged by, against a baseline measured in the same run.
 */
#ifndef TB_BENCH_H
#define TB_BENCH_H

#include <stddef.h>
#include <stdint.h>

struct bench_table;

/* 1 when BENCH_QUICK=1: small counts, proves the harness works, asserts nothing. */
int bench_quick(void);
/* the median of v[0..n), n >= 1 (v sorted in place) */
double bench_median(double *v, int n);

/*
 * Adds a row: group, configuration, figure with its unit, the ratio it is
 * judged by (name + target; NULL when the row is a baseline).
 */
void bench_row(struct bench_table *t, const char *group, const char *config, double value, const char *unit,
	       double ratio, const char *ratio_name, const char *target);
/* A row that could not be measured, with the reason. */
void bench_skip(struct bench_table *t, const char *group, const char *config, const char *why);

/* The loops the producer rows time (bench_loops.c): n events of 16 bytes. */
void bench_loop_floor(uint64_t n);    /* rdtsc + 16-byte store, thread-local */
void bench_loop_tracebuf(uint64_t n); /* TB_EVENT bench:ev16 */
void bench_loop_mutex(uint64_t n);    /* mutex-protected global buffer */

/*
 * The LTTng-UST side of the threads table (bench_lttng.c).  unusable: NULL
 * when LTTng-UST can run here, else why not.  threads: LTTng-UST with nthr
 * threads writing total events, best of `rounds`, in its own process and
 * session; rows compared with tracebuf's figures of the same run (CPU ns per
 * event, wall ns per event, the floor's CPU ns per event).
 */
const char *bench_lttng_unusable(void);
void bench_lttng_threads(struct bench_table *t, unsigned nthr, uint64_t total, int rounds, double tb_cpu,
			 double tb_wall, double floor_cpu);

/* The benchmark groups (one bench_<group>.c each). */
void bench_producer(struct bench_table *t);
void bench_threads(struct bench_table *t);
void bench_latency(struct bench_table *t);
void bench_lttng(struct bench_table *t);
void bench_record(struct bench_table *t);
void bench_consumer(struct bench_table *t);
void bench_memory(struct bench_table *t);
void bench_profile(struct bench_table *t);
void bench_convert(struct bench_table *t);
void bench_relay(struct bench_table *t);
void bench_kernel(struct bench_table *t);
void bench_equal(struct bench_table *t);
void bench_soak(struct bench_table *t);
void bench_flight_lttng(struct bench_table *t);

/*
 * Helpers shared by the groups (bench_latency.c, bench_record.c).
 * Paths of the build's programs: $TB_CLI / $TB_WORKLOAD override, else the
 * build tree this benchmark was built in.
 */
const char *bench_build_path(const char *env, const char *rel, char *buf, unsigned len);
/* A new directory $TMPDIR/tb-bench-NAME.XXXXXX (/tmp without TMPDIR) into dir: 0, or -1 and errno. */
int bench_mkdtemp(char *dir, size_t len, const char *name);
/* $ENV as a number of seconds, or dflt when unset or empty (the caller checks its bounds). */
unsigned bench_env_seconds(const char *env, unsigned dflt);
/* The percentile q (0..1) of v[0..n), nearest rank (v is sorted in place); 0 when n is 0. */
double bench_pct(double *v, size_t n, double q);
/* Bytes of the regular files under dir (apparent size), -1 on error. */
long long bench_dir_bytes(const char *dir);
/* rm -rf dir (only ever a directory this benchmark created). */
void bench_rm_rf(const char *dir);
/* A failed run's output file to stderr, as it is (nothing when it cannot be read). */
void bench_cat_stderr(const char *path);
/* Latency percentiles (ns, BC_NPCT of bench/lttng/common.h) of n single
 * 16-byte tracebuf events (rseq protocol when available) and of the floor
 * (rdtsc + 16-byte store).  0, or -1 when no session could be made. */
int bench_lat_tracebuf(unsigned long n, double *pct, double *floor_pct);

#endif
