/* SPDX-License-Identifier: MIT */
/*
 * gen_seeds.c - writes the seed corpus of the fuzzers (committed under
 * tests/fuzz/corpus/; run again only when the fixed metadata changes):
 *   gen_seeds OUT   -> files in OUT/tsdl/ and OUT/stream/
 * Stream seeds are small synthetic traces written with tests/lib/tbtrace_*
 * for the registry of tb_fuzz_registry(), packed in tb_fuzz_stream()'s
 * input layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/ctf.h"
#include "fuzz_targets.h"
#include "tbtrace.h"

static char out[2048];

static void put_file(const char *sub, const char *name, const void *a, size_t na, const void *b, size_t nb)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", out, sub);
	if (mkdir(p, 0755) && errno != EEXIST) {
		perror(p);
		exit(1);
	}
	snprintf(p, sizeof p, "%s/%s/%s", out, sub, name);
	FILE *f = fopen(p, "w");
	if (!f || fwrite(a, 1, na, f) != na || (nb && fwrite(b, 1, nb, f) != nb) || fclose(f)) {
		perror(p);
		exit(1);
	}
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		*n = 0;
		return calloc(1, 1);
	}
	uint8_t *b = malloc(1 << 20);
	*n = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

/* packs DIR/chan_0, DIR/chan_1, DIR/aux_0 as one stream seed */
static void pack(const char *dir, const char *name, uint8_t flags)
{
	static const char *files[3] = { "chan_0", "chan_1", "aux_0" };
	uint8_t *buf = malloc(4 << 20);
	size_t n = 2;
	buf[0] = flags;
	buf[1] = 2;
	for (int i = 0; i < 3; i++) {
		char p[4200];
		size_t len;
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		uint8_t *b = slurp(p, &len);
		if (i < 2) {
			uint32_t l = (uint32_t)len;
			memcpy(buf + n, &l, 4);
			n += 4;
		}
		memcpy(buf + n, b, len);
		n += len;
		free(b);
	}
	put_file("stream", name, buf, n, NULL, 0);
	free(buf);
}

static void trace(const char *dir, int variant)
{
	struct tb_event_desc ev[TB_FUZZ_NEVENTS];
	uint32_t nev;
	tb_fuzz_registry(ev, &nev);
	struct tbtrace_opts o = { .events = ev, .nevents = nev, .packet_size = variant == 2 ? 1024 : 256 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s0 = tbtrace_stream(t, "chan", 0, 0), *s1 = tbtrace_stream(t, "chan", 0, 1);
	struct tbtrace_stream *a0 = variant == 1 ? tbtrace_stream(t, "aux", 1, 0) : NULL;
	tbtrace_set_thread(s0, 100, 100);
	tbtrace_set_thread(s1, 100, 101);
	uint64_t ts = 1000;
	for (uint32_t n = 0; n < (variant == 2 ? 12u : 30u); n++) {
		struct tbtrace_stream *s = n % 2 ? s1 : s0;
		ts += n % 7 == 6 ? (1ull << 27) + 3 : 5 + n;
		if (n == 9)
			tbtrace_discard(s1, 3);
		if (n == 15 && variant == 0)
			tbtrace_skip_seq(s0, 2);
		struct tbtrace_buf b = { .n = 0 };
		switch (n % 5) {
		case 0: {
			uint64_t v[2] = { n, UINT64_MAX };
			tbb_u8(&b, (uint8_t)n); tbb_u16(&b, 300); tbb_u32(&b, 70000); tbb_u64(&b, 1ull << 40);
			tbb_u8(&b, 0xff); tbb_u16(&b, 0xfffe); tbb_u32(&b, 0xfffffffd); tbb_u64(&b, UINT64_MAX - 3);
			tbb_f64(&b, -0.25 * n); tbb_str(&b, "s\"\\\xc3\xa9\x01"); tbb_bytes(&b, "\x00\xff\x10", 3);
			tbb_u64s(&b, v, 2);
			tbtrace_event(s, 1, ts, b.b, b.n);
			break;
		}
		case 1: tbtrace_event(s, 2, ts, &n, 4); break;
		case 2: tbb_bytes(&b, "xy", 2); tbb_u32(&b, n); tbtrace_event(s, 3, ts, b.b, b.n); break;
		case 3: tbb_str(&b, "/index.html"); tbtrace_event(s, 4, ts, b.b, b.n); break;
		default: tbb_u32(&b, 200); tbtrace_event(s, 5, ts, b.b, b.n); break;
		}
		if (a0 && n % 3 == 0)
			tbtrace_event(a0, 2, ts + 1, &n, 4);
		if (n % 4 == 3) { /* app:state: two enums (one value without a label) around a u8 */
			struct tbtrace_buf e = { .n = 0 };
			tbb_u32(&e, n % 8 == 3 ? 5 : 7);
			tbb_u8(&e, (uint8_t)n);
			tbb_u32(&e, (uint32_t)-1);
			tbtrace_event(s, 6, ts + 2, e.b, e.n);
		}
	}
	tbtrace_close(t);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds OUTDIR\n");
		return 2;
	}
	snprintf(out, sizeof out, "%s", argv[1]);
	mkdir(out, 0755);
	char tmp[] = "/tmp/tbseeds-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	for (int v = 0; v < 3; v++) {
		char dir[256], name[32];
		snprintf(dir, sizeof dir, "%s/t%d", tmp, v);
		trace(dir, v);
		snprintf(name, sizeof name, "trace%d", v);
		pack(dir, name, (uint8_t)(v == 1 ? 3 : v == 2 ? 2 : 0));
		if (v == 0) {
			/* the metadata of a real trace of this registry is a tsdl seed too */
			char p[300];
			size_t len;
			snprintf(p, sizeof p, "%s/metadata", dir);
			uint8_t *m = slurp(p, &len);
			put_file("tsdl", "registry", m, len, NULL, 0);
			free(m);
		}
	}
	/* tsdl: the writer's output for a few registries */
	size_t len;
	const char *m = tb_fuzz_metadata(&len);
	put_file("tsdl", "fuzz_metadata", m, len, NULL, 0);
	struct tb_ctf_trace_info info = { .clock_freq = 2400000000ull, .clock_offset_ns = -5 };
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);
	tb_ctf_metadata_write(f, &info);
	fclose(f);
	put_file("tsdl", "no_events", text, len, NULL, 0);
	free(text);
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	return system(cmd) ? 1 : 0;
}
