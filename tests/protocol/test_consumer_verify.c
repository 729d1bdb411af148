/* SPDX-License-Identifier: MIT */
/*
 * test_consumer_verify.c - the accounting identity, checked on the trace
 * directories the consumer writes.
 *
 * Two roles in one program (tests/ builds every test_*.c as a program):
 *
 *   test_consumer_verify [--written N] [--no-loss] [--quiet] DIR
 *       walks every packet of every stream of DIR with its own minimal
 *       decoder (no dependency on the reader library) and checks: whole
 *       packets only, headers sane, timestamps monotonic per stream,
 *       events_discarded never decreasing, every record inside its packet,
 *       workload:* records valid (check == value ^ (seq * K) ^ thread),
 *       no (event, thread, seq) twice, and with --written N:
 *       N == delivered + discarded (last packet's events_discarded per stream).
 *       Prints "delivered=.. discarded=.. packets=.. streams=..".  Used by the
 *       t_record_*, t_snapshot_*, t_recover_* scripts.
 *
 *   test_consumer_verify            (no argument: the ctest self-test)
 *       the embedded consumer: tb_session_start() in this process, two
 *       threads write workload:tick events, tb_session_stop(); the trace
 *       must satisfy the identity exactly.  Then a flight recorder:
 *       tb_snapshot() while a thread writes at full speed: every packet
 *       valid, none torn.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/consumer.h>
#include <tracebuf/event.h>
#include <tracebuf/session.h>

#include "core/format.h"
#include "core/record.h"
#include "tbtest.h"

#define K_CHECK 0x9E3779B97F4A7C15ull
#define WL_PAYLOAD 28u

enum kind { K_UNKNOWN = 0, K_THREAD, K_TICK, K_SIGNAL, K_OTHER_FIXED };

struct evclass {
	int kind;
	uint32_t payload; /* fixed payload size for K_OTHER_FIXED */
};

struct verify {
	struct evclass cls[TB_MAX_EVENTS];
	uint32_t ncls;
	uint64_t delivered, discarded, packets, streams, thread_recs;
	uint8_t uuid[16];
	int have_uuid;
	/* (kind, thread, seq) set: open addressing, key 0 = empty */
	uint64_t *set;
	uint64_t set_cap, set_n;
	uint32_t cur_pid; /* writer of the records that follow (tracebuf:thread), 0 = unknown */
	int errors;
	int quiet;
};

#define VFAIL(v, ...)                                    \
	do {                                             \
		if ((v)->errors++ < 20) {                \
			fprintf(stderr, "verify: ");     \
			fprintf(stderr, __VA_ARGS__);    \
			fprintf(stderr, "\n");           \
		}                                        \
	} while (0)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* returns 1 if inserted, 0 if present */
static int set_add(struct verify *v, uint64_t key)
{
	if (v->set_n * 2 >= v->set_cap) {
		uint64_t ncap = v->set_cap ? v->set_cap * 2 : 1 << 16;
		uint64_t *n = calloc(ncap, sizeof *n);
		CHECK(n != NULL, "out of memory");
		for (uint64_t i = 0; i < v->set_cap; i++) {
			uint64_t k = v->set[i];
			if (!k)
				continue;
			uint64_t h = mix(k) & (ncap - 1);
			while (n[h])
				h = (h + 1) & (ncap - 1);
			n[h] = k;
		}
		free(v->set);
		v->set = n;
		v->set_cap = ncap;
	}
	uint64_t h = mix(key) & (v->set_cap - 1);
	while (v->set[h]) {
		if (v->set[h] == key)
			return 0;
		h = (h + 1) & (v->set_cap - 1);
	}
	v->set[h] = key;
	v->set_n++;
	return 1;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = 0;
	*len = (size_t)n;
	fclose(f);
	return b;
}

/* Event classes from the TSDL: name and id of each `event { ... }` block. */
static int parse_metadata(struct verify *v, const char *dir)
{
	char path[4096];
	size_t len;
	snprintf(path, sizeof path, "%s/metadata", dir);
	char *m = slurp(path, &len);
	if (!m) {
		VFAIL(v, "%s: no metadata (%s)", dir, strerror(errno));
		return -1;
	}
	if (strncmp(m, "/* CTF 1.8", 10))
		VFAIL(v, "%s: metadata does not begin with the CTF 1.8 signature", path);
	for (char *p = strstr(m, "event {"); p; p = strstr(p + 1, "event {")) {
		char *end = strstr(p, "\n};");
		char *nm = strstr(p, "name = \"");
		char *id = strstr(p, "id = ");
		if (!end || !nm || !id || nm > end || id > end)
			continue;
		nm += 8;
		char *q = strchr(nm, '"');
		if (!q)
			continue;
		unsigned long n = strtoul(id + 5, NULL, 10);
		if (n >= TB_MAX_EVENTS)
			continue;
		*q = 0;
		struct evclass *c = &v->cls[n];
		if (!strcmp(nm, "tracebuf:thread"))
			c->kind = K_THREAD;
		else if (!strcmp(nm, "workload:tick"))
			c->kind = K_TICK;
		else if (!strcmp(nm, "workload:signal"))
			c->kind = K_SIGNAL;
		else
			c->kind = K_UNKNOWN;
		*q = '"';
		if (n + 1 > v->ncls)
			v->ncls = (uint32_t)n + 1;
	}
	free(m);
	return 0;
}

static void walk_packet(struct verify *v, const char *name, const uint8_t *p, uint64_t content,
			uint64_t ts_begin, uint64_t ts_end)
{
	uint64_t off = TB_PACKET_HEADER_SIZE, clock = ts_begin, prev = ts_begin;
	while (off < content) {
		uint32_t id;
		uint32_t h = tb_hdr_get(p + off, content - off, &id, &clock);
		if (!h) {
			VFAIL(v, "%s: record header cut at the packet end", name);
			return;
		}
		if (clock < prev || clock > ts_end) {
			VFAIL(v, "%s: record timestamp %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]", name,
			      clock, prev, ts_end);
			return;
		}
		prev = clock;
		off += h;
		if (id >= v->ncls || v->cls[id].kind == K_UNKNOWN) {
			VFAIL(v, "%s: record with unknown event id %u", name, id);
			return;
		}
		int kind = v->cls[id].kind;
		uint32_t need = kind == K_THREAD ? TB_THREAD_PAYLOAD_SIZE : WL_PAYLOAD;
		if (content - off < need) {
			VFAIL(v, "%s: record payload cut at the packet end", name);
			return;
		}
		if (kind == K_THREAD) {
			memcpy(&v->cur_pid, p + off, 4);
			v->thread_recs++;
			off += need;
			continue;
		}
		uint32_t thread;
		uint64_t seq, value, check;
		memcpy(&thread, p + off, 4);
		memcpy(&seq, p + off + 4, 8);
		memcpy(&value, p + off + 12, 8);
		memcpy(&check, p + off + 20, 8);
		off += need;
		if (check != (value ^ (seq * K_CHECK) ^ thread)) {
			VFAIL(v, "%s: bad check for thread %u seq %" PRIu64, name, thread, seq);
			continue;
		}
		if (thread >= 1024 || seq >= (1ull << 30)) {
			VFAIL(v, "%s: thread %u / seq %" PRIu64 " out of range", name, thread, seq);
			continue;
		}
		/* several processes of one session reuse thread numbers: the
		 * writer's pid (from the attribution records) is part of the key */
		int k = kind == K_SIGNAL;
		uint64_t key = ((uint64_t)(k + 1) << 62) | ((uint64_t)(v->cur_pid & 0x3fffff) << 40) |
			       ((uint64_t)thread << 30) | seq;
		if (!set_add(v, key))
			VFAIL(v, "%s: duplicate event (%s, pid %u, thread %u, seq %" PRIu64 ")", name,
			      k ? "signal" : "tick", v->cur_pid, thread, seq);
		v->delivered++;
	}
	if (off != content)
		VFAIL(v, "%s: last record overruns content_size", name);
}

static void walk_stream(struct verify *v, const char *dir, const char *name)
{
	char path[4096];
	size_t len;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	uint8_t *b = (uint8_t *)slurp(path, &len);
	if (!b) {
		VFAIL(v, "%s: cannot read", path);
		return;
	}
	v->streams++;
	v->cur_pid = 0;
	uint64_t off = 0, prev_end = 0, prev_disc = 0, prev_seq = 0, prev_lost[TB_LOSS_NCAUSES] = { 0 };
	int first = 1, prev_empty = 0;
	while (off < len) {
		struct tb_packet_header h;
		if (len - off < sizeof h) {
			VFAIL(v, "%s: truncated packet header at %" PRIu64, name, off);
			break;
		}
		memcpy(&h, b + off, sizeof h);
		uint64_t psize = h.packet_size / 8, csize = h.content_size / 8;
		if (h.magic != TB_CTF_MAGIC) {
			VFAIL(v, "%s: bad magic at %" PRIu64, name, off);
			break;
		}
		if (h.packet_size % 8 || h.content_size % 8 || csize > psize || csize < TB_PACKET_HEADER_SIZE ||
		    psize > len - off) {
			VFAIL(v, "%s: packet at %" PRIu64 ": content %" PRIu64 " packet %" PRIu64 " file left %" PRIu64,
			      name, off, csize, psize, len - off);
			break;
		}
		int empty = csize == TB_PACKET_HEADER_SIZE;
		if (!v->have_uuid) {
			memcpy(v->uuid, h.uuid, 16);
			v->have_uuid = 1;
		} else if (memcmp(v->uuid, h.uuid, 16)) {
			VFAIL(v, "%s: packet of another trace (uuid)", name);
		}
		if (h.timestamp_begin > h.timestamp_end || h.timestamp_end == 0)
			VFAIL(v, "%s: packet %" PRIu64 ": timestamps %" PRIu64 "..%" PRIu64, name,
			      h.packet_seq_num, h.timestamp_begin, h.timestamp_end);
		if (!first) {
			if (h.timestamp_begin < prev_end)
				VFAIL(v, "%s: packet %" PRIu64 " overlaps the previous one", name, h.packet_seq_num);
			if (h.events_discarded < prev_disc)
				VFAIL(v, "%s: events_discarded goes down (%" PRIu64 " -> %" PRIu64 ")", name,
				      prev_disc, h.events_discarded);
			/* an empty packet (a loss record: header only) may share its number */
			if (h.packet_seq_num < prev_seq || (h.packet_seq_num == prev_seq && !prev_empty && !empty))
				VFAIL(v, "%s: packet_seq_num %" PRIu64 " after %" PRIu64, name, h.packet_seq_num,
				      prev_seq);
			for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
				if (h.lost[k] < prev_lost[k])
					VFAIL(v, "%s: packet %" PRIu64 ": %s goes down (%" PRIu64 " -> %" PRIu64 ")", name,
					      h.packet_seq_num, tb_loss_field(k), prev_lost[k], (uint64_t)h.lost[k]);
		}
		if (first && h.events_discarded)
			VFAIL(v, "%s: the first packet says %" PRIu64 " events were lost before it: readers cannot count "
				 "them (an empty packet must go first)", name, h.events_discarded);
		uint64_t causes = 0;
		for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
			causes += h.lost[k];
		if (causes != h.events_discarded)
			VFAIL(v, "%s: packet %" PRIu64 ": the causes add up to %" PRIu64 ", events_discarded is %" PRIu64,
			      name, h.packet_seq_num, causes, h.events_discarded);
		walk_packet(v, name, b + off, csize, h.timestamp_begin, h.timestamp_end);
		prev_end = h.timestamp_end;
		prev_disc = h.events_discarded;
		prev_seq = h.packet_seq_num;
		prev_empty = empty;
		memcpy(prev_lost, h.lost, sizeof prev_lost);
		first = 0;
		v->packets += !empty; /* data packets */
		off += psize;
	}
	v->discarded += prev_disc;
	free(b);
}

static int verify_dir(const char *dir, int64_t written, int no_loss, int quiet)
{
	struct verify *v = calloc(1, sizeof *v);
	CHECK(v != NULL, "out of memory");
	v->quiet = quiet;
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "verify: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	parse_metadata(v, dir);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		char path[4096];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (stat(path, &sb) < 0 || S_ISDIR(sb.st_mode))
			continue;
		if (!S_ISREG(sb.st_mode)) {
			VFAIL(v, "%s: not a regular file at the top of the trace", path);
			continue;
		}
		walk_stream(v, dir, de->d_name);
	}
	closedir(d);
	printf("delivered=%" PRIu64 " discarded=%" PRIu64 " packets=%" PRIu64 " streams=%" PRIu64
	       " thread_records=%" PRIu64 "\n",
	       v->delivered, v->discarded, v->packets, v->streams, v->thread_recs);
	if (written >= 0 && (uint64_t)written != v->delivered + v->discarded)
		VFAIL(v, "identity broken: written %" PRId64 " != delivered %" PRIu64 " + discarded %" PRIu64,
		      written, v->delivered, v->discarded);
	if (no_loss) {
		if (v->discarded)
			VFAIL(v, "%" PRIu64 " events discarded, none expected", v->discarded);
	}
	int rc = v->errors ? 1 : 0;
	if (v->errors)
		fprintf(stderr, "verify: %s: %d problems\n", dir, v->errors);
	free(v->set);
	free(v);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* self-test: the embedded consumer                                         */
/* ---------------------------------------------------------------------- */

TB_EVENT(workload, tick, (u32, thread), (u64, seq), (u64, value), (u64, check))

struct writer {
	uint32_t thread;
	uint64_t n;
	int *stop; /* relaxed atomic flag: only tells the writer to end */
	uint64_t done;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t seq = 0;
	for (; w->stop ? !__atomic_load_n(w->stop, __ATOMIC_RELAXED) : seq < w->n; seq++) {
		uint64_t value = seq * 7 + w->thread;
		tb_workload_tick(w->thread, seq, value, value ^ (seq * K_CHECK) ^ w->thread);
		if (!w->stop && (seq & 1023) == 0)
			usleep(100); /* let the consumer keep up: this part checks "no loss" */
	}
	w->done = seq;
	return NULL;
}

static void self_test(void)
{
	char dir[512];
	/* 1. discard mode, drained by the embedded consumer: exact identity, no
	 * loss.  4 MiB per CPU hold all 100,000 records (32 B each) even if the
	 * consumer gets no CPU until the end (a loaded machine: 16 sub-buffers
	 * once lost 6.5 % here). */
	snprintf(dir, sizeof dir, "%s/embedded", tbt_tmpdir());
	struct tb_channel_opts ch = { .size = sizeof ch, .sb_size = 64 << 10, .sb_count = 64,
				      .flush_period_ns = 100000000 };
	struct tb_session_opts so = { .size = sizeof so, .dir = tbt_tmpdir(), .nchannels = 1, .channels = &ch };
	struct tb_recorder *rec;
	int rc = tb_session_start(&so, dir, &rec);
	if (rc == -ENOTSUP)
		SKIP("tb_session_start: %s", tb_errmsg());
	CHECK_RC(rc, 0);
	pthread_t th[2];
	struct writer w[2] = { { 0, 50000, NULL, 0 }, { 1, 50000, NULL, 0 } };
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, writer_main, &w[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	struct tb_counters k;
	CHECK_RC(tb_session_counters(tb_recorder_session(rec), 0, -1, &k), 0);
	CHECK_EQ_U64(k.written, 100000);
	CHECK_RC(tb_session_stop(rec), 0);
	CHECK(verify_dir(dir, 100000, 0, 0) == 0, "embedded discard trace");

	/* 2. flight recorder: snapshots while a thread writes at full speed */
	ch.mode = TB_OVERWRITE;
	ch.sb_size = 16 << 10;
	ch.sb_count = 4;
	snprintf(dir, sizeof dir, "%s/fr", tbt_tmpdir());
	CHECK_RC(tb_session_start(&so, dir, &rec), 0);
	int stop = 0;
	struct writer fw = { 2, 0, &stop, 0 };
	pthread_t ft;
	CHECK(pthread_create(&ft, NULL, writer_main, &fw) == 0, "pthread_create");
	usleep(50000);
	for (int i = 0; i < 5; i++) {
		char sd[600];
		snprintf(sd, sizeof sd, "%s/snap%d", tbt_tmpdir(), i);
		rc = tb_snapshot(tb_recorder_session(rec), sd);
		CHECK(rc >= 0, "tb_snapshot: %d %s", rc, tb_errmsg());
		CHECK(verify_dir(sd, -1, 0, 1) == 0, "snapshot %d", i);
		usleep(20000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(ft, NULL);
	CHECK_RC(tb_session_stop(rec), 0);
	CHECK(verify_dir(dir, (int64_t)fw.done, 0, 0) == 0, "flight recorder final trace");
	printf("ok\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		self_test();
		return 0;
	}
	int64_t written = -1;
	int no_loss = 0, quiet = 0;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--written") && i + 1 < argc)
			written = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-loss"))
			no_loss = 1;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			fprintf(stderr, "usage: %s [--written N] [--no-loss] DIR\n", argv[0]);
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "usage: %s [--written N] [--no-loss] DIR\n", argv[0]);
		return 2;
	}
	return verify_dir(dir, written, no_loss, quiet);
}
