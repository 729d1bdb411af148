/* SPDX-License-Identifier: MIT */
/* tbtest.h - the tiny test harness: CHECK() reports file:line and the values, then fails the program. */
#ifndef TBTEST_H
#define TBTEST_H

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int tbt_failures;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, " " __VA_ARGS__);                              \
			fprintf(stderr, "\n");                                        \
			tbt_failures++;                                               \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                            \
	do {                                                                          \
		uint64_t tbt_a = (uint64_t)(a), tbt_b = (uint64_t)(b);                \
		CHECK(tbt_a == tbt_b, "%s = %" PRIu64 ", %s = %" PRIu64, #a, tbt_a, #b, tbt_b); \
	} while (0)

#define CHECK_RC(expr, want)                                                          \
	do {                                                                          \
		int tbt_rc = (expr);                                                  \
		CHECK(tbt_rc == (want), "%s returned %d (%s), wanted %d; tb_errmsg: %s", #expr, \
		      tbt_rc, strerror(tbt_rc < 0 ? -tbt_rc : tbt_rc), (want), tb_errmsg()); \
	} while (0)

/* Exit 77 (ctest: skipped) with a reason. */
#define SKIP(...)                                                                     \
	do {                                                                          \
		printf("SKIP: ");                                                     \
		printf(__VA_ARGS__);                                                  \
		printf("\n");                                                         \
		exit(77);                                                             \
	} while (0)

/* A fresh private directory for session files and traces; removed at exit. */
const char *tbt_tmpdir(void);
/* 1 when TRACEBUF_NO_RSEQ=1 is set. */
int tbt_fallback(void);
/* Seconds a stress loop should run: $STRESS_SECONDS or the default. */
double tbt_seconds(double dflt);
/*
 * Calls fn on the contents of every file of directory `dir` (names not
 * starting with '.'; at most 1 MiB read from each) in an exact-size buffer
 * of its own, as libFuzzer hands an input; fn may modify it.  Returns the
 * number of files; 0 when the directory does not exist.
 */
unsigned tbt_for_each_file(const char *dir, void (*fn)(uint8_t *buf, size_t len, const char *path, void *arg),
			   void *arg);

#endif
