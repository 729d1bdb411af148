/* SPDX-License-Identifier: MIT */
/* profile_report_trace.c - synthetic profile traces and output checks (profile_report_trace.h). */
#define _GNU_SOURCE
#include "profile_report_trace.h"

#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile_events.h"
#include "tbtest.h"

/* ---------------------------------------------------------------------- */
/* functions with known addresses                                          */

#ifdef __clang__
#define PRT_FN __attribute__((noinline, used))
#else
#define PRT_FN __attribute__((noinline, noclone, noipa, used))
#endif
#define RA() ((uint64_t)(uintptr_t)__builtin_return_address(0))

static volatile uint64_t sink;
static struct prt_addrs got;
static jmp_buf tail_jb;

PRT_FN static void prt_hot_a(void)
{
	got.ra_hot_a = RA();
	sink += 1;
}

PRT_FN static void prt_hot_b(void)
{
	got.ra_hot_b = RA();
	sink += 2;
}

PRT_FN static void prt_mid(int a)
{
	if (a) {
		got.ra_mid_a = RA();
		prt_hot_a();
	} else {
		got.ra_mid_b = RA();
		prt_hot_b();
	}
	sink += 3; /* not a tail call */
}

PRT_FN static void prt_rec(int n)
{
	if (n == 2)
		got.ra_rec_in_top = RA();
	else
		got.ra_rec_in_rec = RA();
	if (n > 0)
		prt_rec(n - 1);
	sink += (uint64_t)n; /* not a tail call */
}

PRT_FN static void prt_top(void)
{
	prt_mid(1);
	prt_mid(0);
	prt_rec(2);
	sink += 4;
}

__attribute__((noreturn)) PRT_FN static void prt_noreturn(void)
{
	got.ra_tail = RA();
	longjmp(tail_jb, 1);
}

/* its call of a noreturn function is its last instruction: the return
 * address may be the first byte after it, which addr - 1 brings back */
PRT_FN static void prt_tail(void)
{
	prt_noreturn();
}

void prt_addrs(struct prt_addrs *a)
{
	prt_top();
	if (!setjmp(tail_jb))
		prt_tail();
	got.hot_a = (uint64_t)(uintptr_t)&prt_hot_a;
	got.hot_b = (uint64_t)(uintptr_t)&prt_hot_b;
	got.mid = (uint64_t)(uintptr_t)&prt_mid;
	got.top = (uint64_t)(uintptr_t)&prt_top;
	got.rec = (uint64_t)(uintptr_t)&prt_rec;
	got.tail = (uint64_t)(uintptr_t)&prt_tail;
	*a = got;
}

/* ---------------------------------------------------------------------- */
/* this process                                                            */

size_t prt_self_maps(struct prt_map *m, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f, "/proc/self/maps");
	char line[5000];
	size_t n = 0;
	while (n < max && fgets(line, sizeof line, f)) {
		unsigned long long s, e, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms, &off, &pos) < 4 || !strchr(perms, 'x'))
			continue;
		const char *p = line + pos;
		while (*p == ' ')
			p++;
		m[n].start = s;
		m[n].end = e;
		m[n].pgoff = off;
		snprintf(m[n].path, sizeof m[n].path, "%.*s", (int)strcspn(p, "\n"), p);
		n++;
	}
	fclose(f);
	return n;
}

int prt_map_of(uint64_t a, struct prt_map *out)
{
	static struct prt_map m[256];
	size_t n = prt_self_maps(m, 256);
	for (size_t i = 0; i < n; i++) {
		if (a >= m[i].start && a < m[i].end) {
			*out = m[i];
			return 1;
		}
	}
	return 0;
}

const char *prt_exe(void)
{
	static char path[PATH_MAX];
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
		CHECK(n > 0, "readlink /proc/self/exe");
		path[n] = 0;
	}
	return path;
}

const char *prt_exe_base(void)
{
	const char *e = prt_exe(), *b = strrchr(e, '/');
	return b ? b + 1 : e;
}

/* ---------------------------------------------------------------------- */
/* writing                                                                 */

struct tbtrace *prt_open(const char *dir, const struct tbtrace_env *env, uint32_t nenv)
{
	static struct tb_event_desc d[PRT_NCLASSES];
	tbtrace_desc(&d[PRT_SAMPLE], PRT_SAMPLE, "profile:sample", 3, "u64s:stack", "u32:flags", "u32:overrun");
	tbtrace_desc(&d[PRT_MAP], PRT_MAP, "profile:map", 5, "u64:start", "u64:end", "u64:pgoff", "u32:gen", "str:path");
	tbtrace_desc(&d[PRT_INFO], PRT_INFO, "profile:info", 3, "u32:hz", "str:unwinder", "str:exe");
	tbtrace_desc(&d[PRT_COUNTERS], PRT_COUNTERS, "profile:counters", 6, "u64:received", "u64:lost",
		     "u64:invalid_pc", "u64:aborted", "u64:truncated", "u64:overruns");
	tbtrace_desc(&d[PRT_TICK], PRT_TICK, "app:tick", 1, "u64:n");
	d[PRT_SAMPLE].fields[0].max_len = TB_PROF_MAX_DEPTH;
	d[PRT_MAP].fields[4].max_len = 4095;
	d[PRT_INFO].fields[2].max_len = 4095;
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm");
	struct tbtrace_opts o = { .events = d, .nevents = PRT_NCLASSES, .packet_size = 4096, .env = env, .nenv = nenv };
	return tbtrace_open(dir, &o);
}

void prt_info(struct tbtrace_stream *s, uint64_t ts, uint32_t hz, const char *unwinder, const char *exe)
{
	struct tbtrace_buf b = { .n = 0 };
	tbb_u32(&b, hz);
	tbb_str(&b, unwinder);
	tbb_str(&b, exe);
	tbtrace_event(s, PRT_INFO, ts, b.b, b.n);
}

void prt_map(struct tbtrace_stream *s, uint64_t ts, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t gen,
	     const char *path)
{
	struct tbtrace_buf b = { .n = 0 };
	tbb_u64(&b, start);
	tbb_u64(&b, end);
	tbb_u64(&b, pgoff);
	tbb_u32(&b, gen);
	tbb_str(&b, path);
	tbtrace_event(s, PRT_MAP, ts, b.b, b.n);
}

void prt_maps_self(struct tbtrace_stream *s, uint64_t ts, uint32_t gen, uint64_t shift)
{
	static struct prt_map m[256];
	size_t n = prt_self_maps(m, 256);
	CHECK(n > 0, "no executable mapping in /proc/self/maps");
	for (size_t i = 0; i < n; i++)
		prt_map(s, ts, m[i].start + shift, m[i].end + shift, m[i].pgoff, gen, m[i].path);
}

void prt_sample(struct tbtrace_stream *s, uint64_t ts, const uint64_t *stack, uint32_t n, uint32_t flags,
		uint32_t overrun)
{
	struct tbtrace_buf b = { .n = 0 };
	tbb_u64s(&b, stack, n);
	tbb_u32(&b, flags);
	tbb_u32(&b, overrun);
	tbtrace_event(s, PRT_SAMPLE, ts, b.b, b.n);
}

void prt_counters(struct tbtrace_stream *s, uint64_t ts, uint64_t received, uint64_t lost, uint64_t invalid_pc,
		  uint64_t aborted, uint64_t truncated, uint64_t overruns)
{
	struct tbtrace_buf b = { .n = 0 };
	tbb_u64(&b, received);
	tbb_u64(&b, lost);
	tbb_u64(&b, invalid_pc);
	tbb_u64(&b, aborted);
	tbb_u64(&b, truncated);
	tbb_u64(&b, overruns);
	tbtrace_event(s, PRT_COUNTERS, ts, b.b, b.n);
}

void prt_tick(struct tbtrace_stream *s, uint64_t ts)
{
	struct tbtrace_buf b = { .n = 0 };
	tbb_u64(&b, ts);
	tbtrace_event(s, PRT_TICK, ts, b.b, b.n);
}

void prt_standard_trace(const char *dir, int with_counters)
{
	struct prt_addrs a;
	prt_addrs(&a);
	struct tbtrace_env env[] = { { .key = "proc_4242", .str = "comm=ranks exe=x attached_ns=1" } };
	struct tbtrace *t = prt_open(dir, env, 1);
	struct tbtrace_stream *c0 = tbtrace_stream(t, "chan", 0, 0), *c1 = tbtrace_stream(t, "chan", 0, 1);
	uint64_t ts = 1000;
	tbtrace_set_thread(c0, 4242, 4242);
	prt_info(c0, ts, 999, "fp", prt_exe());
	prt_maps_self(c0, ts, 0, 0);
	tbtrace_set_thread(c1, 4242, 4243);
	uint64_t sa[] = { a.hot_a, a.ra_hot_a, a.ra_mid_a };
	uint64_t sb[] = { a.hot_b, a.ra_hot_b, a.ra_mid_b };
	uint64_t sm[] = { a.mid, a.ra_mid_a };
	uint64_t sr[] = { a.rec, a.ra_rec_in_rec, a.ra_rec_in_rec, a.ra_rec_in_top };
	uint64_t bad[] = { 0x10, a.ra_mid_a }, zero[] = { 0, a.ra_mid_a };
	for (int i = 0; i < 28; i++) {
		ts += 1000000;
		prt_sample(c0, ts, sa, 3, 0, i == 13 ? 2 : 0);
		if (i < 5)
			prt_sample(c0, ts + 1, sm, 2, 0, 0);
		if (i < 10)
			prt_sample(c1, ts + 2, sb, 3, i < 2 ? TB_PROF_F_ABORTED : 0, 0);
		if (i < 5)
			prt_sample(c1, ts + 3, sr, 4, i == 4 ? TB_PROF_F_TRUNCATED : 0, 0);
		if (i % 10 == 0)
			prt_tick(c0, ts + 4);
	}
	prt_sample(c0, ts + 10, bad, 2, 0, 0);
	prt_sample(c1, ts + 11, zero, 2, 0, 0);
	if (with_counters) {
		tbtrace_set_thread(c0, 4242, 4242);
		prt_counters(c0, ts + 20, 60, 3, 1, 4, 1, 2);
	}
	tbtrace_close(t);
}

/* ---------------------------------------------------------------------- */
/* checking                                                                */

char *prt_slurp(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

int prt_table(const char *file, const char *marker, int n, struct prt_row *rows, int max)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	char line[4096];
	int found = 0, nrows = 0, header = 0;
	while (fgets(line, sizeof line, f)) {
		const char *p = line + strspn(line, " ");
		if (!found) {
			if (!strncmp(p, marker, strlen(marker)) && n-- == 0)
				found = 1;
			continue;
		}
		if (!header) {
			header = 1; /* "samples  %  function  module" */
			continue;
		}
		struct prt_row r;
		memset(&r, 0, sizeof r);
		if (nrows == max || *p < '0' || *p > '9' ||
		    sscanf(p, "%31s %lf %255s %511s", r.count, &r.pct, r.function, r.module) != 4)
			break;
		rows[nrows++] = r;
	}
	fclose(f);
	return found ? nrows : -1;
}

int prt_count(const char *file, const char *s)
{
	char *b = prt_slurp(file);
	int n = 0;
	for (const char *p = b; p && (p = strstr(p, s)); p += strlen(s))
		n++;
	free(b);
	return n;
}

int prt_json_has(const char *file, const char *at, const char *want)
{
	char *b = prt_slurp(file);
	const char *p = b ? strstr(b, at) : NULL;
	int ok = 0;
	if (p) {
		const char *end = strchr(p, '}');
		const char *w = strstr(p, want);
		ok = w && (!end || w < end);
	}
	free(b);
	return ok;
}

int prt_json_valid(const char *file)
{
	const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
	char *cmd;
	CHECK(asprintf(&cmd, "%s -c 'import json' >/dev/null 2>&1", py) > 0, "asprintf");
	int ok = system(cmd) == 0;
	free(cmd);
	if (!ok)
		return 77;
	CHECK(asprintf(&cmd, "%s -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' '%s'", py, file) > 0,
	      "asprintf");
	int rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : 1;
}
