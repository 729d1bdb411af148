/* SPDX-License-Identifier: MIT */
/* tbtrace_cli.c - the standard CLI test trace and CLI runners (tbtrace_cli.h). */
#define _GNU_SOURCE
#include "tbtrace_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tbtest.h"
#include "tbtrace.h"

enum { E_TICK = 1, E_REQ_B, E_REQ_E, E_MSG, E_Q_B, E_Q_E, E_N };

static const char *names[E_N] = { "", "app:tick", "http:request_begin", "http:request_end", "app:msg",
				  "db:query_begin", "db:query_end" };

struct gen {
	FILE *truth;
	int first;
	uint64_t t;       /* global clock (ns after the offset) */
};

static void ev(struct gen *g, struct tbtrace_stream *s, const char *stream, uint32_t cpu, uint32_t pid,
	       uint32_t tid, uint32_t id, uint64_t dt)
{
	struct tbtrace_buf b = { .n = 0 };
	static uint64_t seq;
	g->t += dt;
	tbtrace_set_thread(s, pid, tid);
	switch (id) {
	case E_TICK: tbb_u64(&b, seq++); break;
	case E_REQ_B: tbb_str(&b, "/index.html?q=\"x\""); break;
	case E_REQ_E: tbb_u32(&b, 200); break;
	case E_MSG: tbb_str(&b, "h\xc3\xa9llo\n"); tbb_f64(&b, -1.5); break;
	default: tbb_u32(&b, (uint32_t)seq++); break;
	}
	tbtrace_event(s, id, g->t, b.b, b.n);
	fprintf(g->truth, "%s\n  {\"ts\":%lld,\"cpu\":%u,\"pid\":%u,\"tid\":%u,\"event\":\"%s\",\"stream\":\"%s\"}",
		g->first ? "" : ",", 1700000000000000000ll + (long long)g->t, cpu, pid, tid, names[id], stream);
	g->first = 0;
}

void tbtrace_cli_trace(const char *dir, const char *truth)
{
	struct tb_event_desc d[E_N];
	tbtrace_desc(&d[E_TICK], E_TICK, names[E_TICK], 1, "u64:n");
	tbtrace_desc(&d[E_REQ_B], E_REQ_B, names[E_REQ_B], 1, "str:url");
	tbtrace_desc(&d[E_REQ_E], E_REQ_E, names[E_REQ_E], 1, "u32:status");
	tbtrace_desc(&d[E_MSG], E_MSG, names[E_MSG], 2, "str:text", "f64:x");
	tbtrace_desc(&d[E_Q_B], E_Q_B, names[E_Q_B], 1, "u32:q");
	tbtrace_desc(&d[E_Q_E], E_Q_E, names[E_Q_E], 1, "u32:q");
	struct tbtrace_env env[] = {
		{ .key = "proc_100", .str = "comm=web exe=web-server attached_ns=1700000000000000000" },
		{ .key = "proc_200", .str = "comm=db exe=postgres attached_ns=1700000000000000000" },
	};
	struct tbtrace_opts o = { .events = d, .nevents = E_N, .packet_size = 1024, .env = env, .nenv = 2 };
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm");
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *c0 = tbtrace_stream(t, "chan", 0, 0), *c1 = tbtrace_stream(t, "chan", 0, 1);
	struct tbtrace_stream *a1 = tbtrace_stream(t, "aux", 1, 1);
	struct gen g = { .first = 1, .t = 1000 };
	g.truth = fopen(truth, "w");
	CHECK(g.truth, "%s", truth);
	fprintf(g.truth, "{\"events\":[");

	/* an end without its begin on thread 100 */
	ev(&g, c0, "chan_0", 0, 100, 100, E_REQ_E, 10);
	/* second 0: 300 ticks spread over ~0.9 s on cpu 0 (threads 100 and 200) */
	for (int i = 0; i < 300; i++)
		ev(&g, c0, "chan_0", 0, i % 3 ? 100 : 200, i % 3 ? 100 : 200, i % 10 == 9 ? E_MSG : E_TICK, 3000000);
	/* second 1: the busy one: 50 nested request/query spans on thread 101 (cpu 1),
	 * ticks on cpu 0 and unattributed events on aux_1 */
	g.t = 1000000000 + 1000;
	for (int i = 0; i < 50; i++) {
		ev(&g, c1, "chan_1", 1, 100, 101, E_REQ_B, 1000000);
		ev(&g, c1, "chan_1", 1, 100, 101, E_Q_B, 100000);
		ev(&g, c0, "chan_0", 0, 100, 100, E_TICK, 100000);
		ev(&g, c1, "chan_1", 1, 100, 101, E_TICK, 100000);
		ev(&g, c1, "chan_1", 1, 100, 101, E_Q_E, 100000);
		ev(&g, a1, "aux_1", 1, 0, 0, E_MSG, 100000);
		if (i == 20)
			tbtrace_discard(c1, 7);
		if (i == 30)
			tbtrace_skip_seq(c0, 2);
		ev(&g, c1, "chan_1", 1, 100, 101, E_REQ_E, 100000);
		for (int k = 0; k < 10; k++)
			ev(&g, c0, "chan_0", 0, 100, 100, E_TICK, 50000);
		ev(&g, a1, "aux_1", 1, 0, 0, E_TICK, 10000);
	}
	/* second 2: an inner begin closed by its outer end, and a begin left open */
	g.t = 2000000000 + 1000;
	ev(&g, c1, "chan_1", 1, 100, 101, E_REQ_B, 1000);
	ev(&g, c1, "chan_1", 1, 100, 101, E_Q_B, 1000);
	ev(&g, c1, "chan_1", 1, 100, 101, E_REQ_E, 1000);
	for (int i = 0; i < 100; i++)
		ev(&g, c0, "chan_0", 0, 200, 200, E_TICK, 4000000);
	ev(&g, c0, "chan_0", 0, 200, 200, E_Q_B, 1000);
	ev(&g, c0, "chan_0", 0, 200, 200, E_TICK, 1000);
	tbtrace_close(t);
	fprintf(g.truth, "\n],\n\"start_ns\":%lld,\"end_ns\":%lld,\n", 1700000000000000000ll + 1010,
		1700000000000000000ll + (long long)g.t);
	fprintf(g.truth, "\"lost_events\":{\"1\":7},\"lost_packets\":{\"0\":2},\n"
			 "\"procs\":{\"100\":\"web\",\"200\":\"db\"},\n"
			 "\"spans\":{\"B\":103,\"E\":103,\"unmatched_ends\":1,\"closed_at_end\":1,\"closed_by_outer_end\":1}}\n");
	CHECK(fclose(g.truth) == 0, "truth");
}

int tbtrace_cli_run(const char *args, const char *out, const char *err)
{
	const char *cli = getenv("TB_CLI");
	if (!cli)
		SKIP("TB_CLI not set (run through ctest)");
	char *cmd;
	CHECK(asprintf(&cmd, "'%s' %s >'%s' 2>'%s'", cli, args, out, err) > 0, "asprintf");
	int rc = system(cmd);
	free(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

int tbtrace_cli_check(const char *args)
{
	return tbtrace_py("tbtrace_cli_check.py", args);
}

int tbtrace_py(const char *script, const char *args)
{
	const char *src = getenv("TB_SRC");
	if (!src)
		SKIP("TB_SRC not set (run through ctest)");
	/* the system python first: a version-manager shim costs ~0.3 s per call */
	const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
	char *cmd;
	CHECK(asprintf(&cmd, "%s -c 'import json' >/dev/null 2>&1", py) > 0, "asprintf");
	int ok = system(cmd) == 0;
	free(cmd);
	if (!ok)
		SKIP("python3 not installed");
	CHECK(asprintf(&cmd, "%s '%s/tests/lib/%s' %s", py, src, script, args) > 0, "asprintf");
	int rc = system(cmd);
	free(cmd);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

int tbtrace_file_has(const char *path, const char *s)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	int r = n > 0 && memmem(buf, (size_t)n, s, strlen(s)) != NULL;
	free(buf);
	return r;
}
