/* SPDX-License-Identifier: MIT */
/*
 * fuzz_map.c - libFuzzer target of the session map as attach and recover
 * see it: tb_map_validate() (src/session/layout.h) on fuzzed bytes, and when a
 * map validates, the read-only consumer operations `recover` performs on
 * it (registry copy, tb_ring_ready, tb_ring_copy, tb_ring_drain_dead).
 *
 * Input: the first bytes of a session file.  Session files are sparse, so
 * when the header's file_size is larger than the input (and at most
 * TB_FUZZ_MAP_MAX), the input is zero-extended to file_size: a small input
 * can describe a whole session.  The buffer handed to the validator is a
 * heap block of exactly that size, so AddressSanitizer reports any read
 * past the "file".
 *
 * Seeds (tests/fuzz/corpus/map/) are real session files cut after their
 * last non-zero byte, written by `gen_map_seeds DIR` (this file built with
 * TB_FUZZ_MAP_GEN).  tests/fuzz/test_map_fuzz_regress.c replays the seeds
 * and tests/fuzz/regress/map/ through tb_fuzz_map() without libFuzzer
 * (it links this file built with TB_FUZZ_MAP_NO_MAIN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/layout.h"
#include "session/registry.h"
#include "ring/ring.h"

#define TB_FUZZ_MAP_MAX (8u << 20)

#include "fuzz_targets.h"

/* 1 when the last input given to tb_fuzz_map() validated (for the replay test) */
int tb_fuzz_map_last_valid;

static int fuzz_map_emit(void *arg, const void *pkt, uint64_t len, const struct tb_packet_info *info)
{
	/* touch every byte handed out: ASan checks the emitted length */
	const uint8_t *p = pkt;
	uint64_t *sum = arg;
	for (uint64_t i = 0; i < len; i++)
		*sum += p[i];
	*sum += info->content_bytes <= len ? 0 : 1;
	return 0;
}

int tb_fuzz_map(const uint8_t *data, size_t size)
{
	uint64_t total = size;
	if (size >= sizeof(struct tb_map)) {
		uint64_t fs;
		memcpy(&fs, data + offsetof(struct tb_map, file_size), 8);
		if (fs > size && fs <= TB_FUZZ_MAP_MAX)
			total = fs;
	}
	uint8_t *base = malloc(total ? total : 1);
	if (!base)
		return 0;
	memcpy(base, data, size);
	memset(base + size, 0, total - size);
	struct tb_session s;
	memset(&s, 0, sizeof s);
	s.fd = -1;
	s.readonly = 1;
	tb_fuzz_map_last_valid = tb_map_validate(base, total, &s) == 0;
	if (tb_fuzz_map_last_valid) {
		/* what recover does next, read-only */
		struct tb_event_desc *ev = calloc(s.reg_capacity ? s.reg_capacity : 1, sizeof *ev);
		uint64_t sb_max = 0, sum = 0;
		for (unsigned c = 0; c < s.nchannels; c++)
			if (s.chan[c].sb_size > sb_max)
				sb_max = s.chan[c].sb_size;
		uint8_t *buf = malloc(sb_max);
		if (ev && buf) {
			tb_registry_copy(&s, ev, s.reg_capacity);
			for (unsigned c = 0; c < s.nchannels; c++)
				for (unsigned cpu = 0; cpu < s.ncpus; cpu++) {
					uint64_t pos, bad = 0;
					struct tb_packet_info info;
					if (tb_ring_ready(&s, c, cpu, &pos) == 1)
						tb_ring_copy(&s, c, cpu, pos, buf, &info);
					tb_ring_drain_dead(&s, c, cpu, fuzz_map_emit, &sum, &bad);
				}
		}
		free(buf);
		free(ev);
	}
	free(base);
	return 0;
}

#if !defined(TB_FUZZ_MAP_NO_MAIN) && !defined(TB_FUZZ_MAP_GEN)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return tb_fuzz_map(data, size);
}
#endif

#ifdef TB_FUZZ_MAP_GEN
/* gen_map_seeds DIR: writes a few real session files, cut after their last
 * non-zero byte, as DIR/<name>. */
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/event.h>
#include <tracebuf/session.h>

TB_EVENT(seed, ev, (u64, n), (str, s))
/* a class with enum labels: the registry's label text is part of what is fuzzed */
TB_EVENT(seed, mode, (enum, m, (OFF, ON, AUTO = 7)), (u8, k), (enum, level, (LOW = -1, HIGH = 1)))

static int write_seed(const char *dir, const char *name, struct tb_session *s)
{
	uint64_t n = s->size;
	while (n > sizeof(struct tb_map) && s->base[n - 1] == 0)
		n--;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(s->base, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	printf("%s: %llu of %llu bytes\n", path, (unsigned long long)n, (unsigned long long)s->size);
	return 0;
}

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_map_seeds DIR\n");
		return 2;
	}
	char tmp[] = "/tmp/tb-mapseed-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	/* write from CPU 0 */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof one, &one);
	int rc = 0;
	for (int k = 0; k < 4; k++) {
		struct tb_channel_opts co[2] = {
			{ .size = sizeof co[0], .name = "d", .sb_size = 4096, .sb_count = 2, .mode = TB_DISCARD,
			  .vtid = k == 3 },
			{ .size = sizeof co[0], .name = "o", .sb_size = 4096, .sb_count = 2, .mode = TB_OVERWRITE },
		};
		/* rseq sessions take a ring per possible CPU of this machine (ncpus 0) */
		struct tb_session_opts so = { .size = sizeof so, .dir = tmp, .ncpus = k == 2 ? 2 : 0,
					      .nchannels = k == 0 ? 1 : 2, .channels = co, .max_events = 4,
					      .force_fallback = k == 2 };
		struct tb_session *s;
		if (tb_session_create(&so, &s) != 0) {
			fprintf(stderr, "create: %s\n", tb_errmsg());
			return 1;
		}
		if (k > 0) {
			tb_producer_use(s);
			int id = tb_event_id("seed:ev");
			for (uint64_t i = 0; id > 0 && i < 300; i++) {
				struct { uint64_t n; char s[8]; } p = { i, "abcdefg" };
				tb_write(i & 1, (uint32_t)id, &p, sizeof p);
			}
			for (int i = 0; i < 10; i++)
				tb_seed_mode(i % 3 == 2 ? 7 : i % 3, (uint8_t)i, i & 1 ? 1 : -1);
			tb_producer_use(NULL);
		}
		static const char *names[] = { "fresh_1ch_1cpu", "written_2ch_1cpu", "fallback_2ch_2slots",
					       "vtid_and_plain_2ch_1cpu" };
		rc |= write_seed(argv[1], names[k], s);
		tb_session_unlink(s);
		tb_session_close(s);
	}
	rmdir(tmp);
	return rc;
}
#endif
