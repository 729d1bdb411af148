/* SPDX-License-Identifier: MIT */
/*
 * tbverify.c - the accounting identity, checked on a trace directory the
 * consumer wrote, with a minimal decoder of its own (no dependency on the
 * reader library): tbverify.h.  The CLI is tests/tools/verify.c (tb-verify,
 * $VERIFY in the shell tests).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/format.h"
#include "core/record.h"
#include "tbtest.h"
#include "tbverify.h"

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
			uint64_t ts_begin, uint64_t ts_end, uint32_t stream_id)
{
	/* a vtid packet: every header is followed by the writer's tid */
	uint32_t ctx = stream_id == TB_STREAM_VTID ? TB_VTID_SIZE : 0;
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
		if (ctx) {
			uint32_t vtid = 0;
			if (content - off < ctx) {
				VFAIL(v, "%s: record context cut at the packet end", name);
				return;
			}
			memcpy(&vtid, p + off, 4);
			if (vtid == 0)
				VFAIL(v, "%s: record with vtid 0", name);
			off += ctx;
		}
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
		if (h.stream_id != TB_STREAM_PLAIN && h.stream_id != TB_STREAM_VTID)
			VFAIL(v, "%s: packet %" PRIu64 ": stream_id %u", name, h.packet_seq_num, h.stream_id);
		walk_packet(v, name, b + off, csize, h.timestamp_begin, h.timestamp_end, h.stream_id);
		/* after the content, zeros (a hole, or a direct write's padding):
		 * never the stale bytes of a reused sub-buffer */
		for (uint64_t i = csize; i < psize; i++)
			if (b[off + i]) {
				VFAIL(v, "%s: packet %" PRIu64 ": byte %" PRIu64 " after its content (%" PRIu64
					 " bytes) is not zero", name, h.packet_seq_num, i, csize);
				break;
			}
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

int tbv_verify_dir(const char *dir, int64_t written, int no_loss, int quiet)
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
