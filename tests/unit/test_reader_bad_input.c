/* SPDX-License-Identifier: MIT */
/*
 * test_reader_bad_input - damaged traces: every problem is reported once
 * (file, offset, what), the damaged packet (or the rest of it) is skipped,
 * and everything else is still read.  Nothing readable is an error, and a
 * corrupt metadata file names the line.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/format.h"
#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_check.h"

#define PKT 256u
#define PER_PKT ((PKT - TB_PACKET_HEADER_SIZE) / (4 + 8)) /* records per packet */
#define NPKT 10u

static char dir[512], f0[600], f1[600];

static void make(void)
{
	struct tb_event_desc ev[2];
	tbtrace_desc(&ev[1], 1, "app:n", 1, "u64:n");
	struct tbtrace_opts o = { .events = ev, .nevents = 2, .packet_size = PKT };
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm");
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s0 = tbtrace_stream(t, "chan", 0, 0), *s1 = tbtrace_stream(t, "chan", 0, 1);
	for (uint64_t n = 0; n < PER_PKT * NPKT; n++) {
		tbtrace_event(s0, 1, 10 * n, &n, 8);
		tbtrace_event(s1, 1, 10 * n + 5, &n, 8);
	}
	tbtrace_close(t);
}

static void patch(const char *path, uint64_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, data, len, (off_t)off) == (ssize_t)len, "patch %s", path);
	close(fd);
}

static void patch32(const char *path, uint64_t off, uint32_t v) { patch(path, off, &v, 4); }
static void patch64(const char *path, uint64_t off, uint64_t v) { patch(path, off, &v, 8); }

/* opens, expects rc 0, exactly `ndiag` diagnostics containing a and b, `events` events */
static void expect(const char *what, int ndiag, const char *a, const char *b, uint64_t events)
{
	struct tbtrace_diags dg;
	struct tb_reader *r;
	int rc = tbtrace_open_reader(dir, 0, &dg, &r);
	CHECK(rc == 0, "%s: open: %s", what, tb_errmsg());
	uint64_t n = tbtrace_count(r, NULL);
	for (int i = 0; dg.n != ndiag && i < dg.n && i < 32; i++)
		fprintf(stderr, "%s: diagnostic %d: %s\n", what, i, dg.msg[i]);
	CHECK(dg.n == ndiag, "%s: %d diagnostics (wanted %d), first: %s", what, dg.n, ndiag, dg.n ? dg.msg[0] : "");
	if (a)
		CHECK(tbtrace_has_diag(&dg, a, b), "%s: no diagnostic with '%s' '%s'; first: %s", what, a, b ? b : "",
		      dg.msg[0]);
	CHECK(n == events, "%s: %llu events, wanted %llu", what, (unsigned long long)n, (unsigned long long)events);
	/* reported once: iterating again (seek) reports nothing new */
	tb_reader_seek_ticks(r, 0);
	CHECK(tbtrace_count(r, NULL) == events, "%s: second pass", what);
	CHECK(tb_reader_ndiags(r) == (uint64_t)ndiag, "%s: reported again on the second pass", what);
	tb_reader_close(r);
	printf("ok: %s%s%s\n", what, dg.n ? " -> " : "", dg.n ? dg.msg[0] : "");
}

int main(void)
{
	const uint64_t ALL = 2 * PER_PKT * NPKT;
	snprintf(dir, sizeof dir, "%s/bad", tbt_tmpdir());
	snprintf(f0, sizeof f0, "%s/chan_0", dir);
	snprintf(f1, sizeof f1, "%s/chan_1", dir);

	make();
	expect("clean trace", 0, NULL, NULL, ALL);

	make();
	CHECK(truncate(f0, 3 * PKT + 100) == 0, "truncate");
	expect("truncated stream file", 1, "chan_0@768", "truncated", ALL - 7 * PER_PKT);

	make();
	CHECK(truncate(f0, 3 * PKT + 40) == 0, "truncate");
	expect("truncated inside a packet header", 1, "chan_0@768", "header", ALL - 7 * PER_PKT);

	make();
	patch32(f1, 2 * PKT + TB_PKT_OFF_MAGIC, 0xdeadbeef);
	expect("bad magic", 1, "chan_1@512", "magic", ALL - PER_PKT);

	make();
	patch(f1, 4 * PKT + TB_PKT_OFF_UUID, "0123456789abcdef", 16);
	expect("uuid of another trace", 1, "chan_1@1024", "uuid", ALL - PER_PKT);

	make();
	patch64(f0, 1 * PKT + TB_PKT_OFF_CONTENT, (PKT + 8) * 8);
	expect("content_size > packet_size", 1, "chan_0@256", "content_size", ALL - PER_PKT);

	make();
	patch64(f0, 1 * PKT + TB_PKT_OFF_PACKET, 12345 * 8);
	expect("packet_size beyond the file (resync on the usual size)", 1, "chan_0@256", "packet_size", ALL - PER_PKT);

	/* one damaged packet_seq_num costs that number, not the packet nor those after it */
	make();
	patch64(f0, 3 * PKT + TB_PKT_OFF_SEQ, 1);
	expect("packet_seq_num going back, alone", 1, "chan_0@904" /* packet 3, its packet_seq_num */, "out of line", ALL);

	make();
	patch64(f0, 3 * PKT + TB_PKT_OFF_SEQ, 1ull << 40);
	expect("packet_seq_num far ahead, alone", 1, "chan_0@904" /* packet 3, its packet_seq_num */, "out of line", ALL);
	{ /* and no 2^40 lost packets are counted */
		struct tbtrace_diags dg;
		struct tb_reader *r;
		CHECK(tbtrace_open_reader(dir, 0, &dg, &r) == 0, "open");
		uint64_t notices = 0;
		tbtrace_count(r, &notices);
		CHECK(notices == 0, "a forged packet_seq_num counted as %llu loss notices", (unsigned long long)notices);
		tb_reader_close(r);
	}

	make();
	patch64(f0, 3 * PKT + TB_PKT_OFF_SEQ, 1);
	patch64(f0, 4 * PKT + TB_PKT_OFF_SEQ, 1);
	/* two in a row: the first is refused (the one after it does not follow the packet before), the
	 * second read alone (the one after it does) */
	expect("two packet_seq_num going back in a row", 2, "chan_0@768", "not after the previous", ALL - PER_PKT);

	/* an implausible timestamp_end (2^63, beyond the present) of the last packet: said, its
	 * events read, the trace's end taken from its other bounds */
	make();
	patch64(f0, (NPKT - 1) * PKT + TB_PKT_OFF_TS_END, 1ull << 63);
	expect("implausible timestamp_end of the last packet", 1, "chan_0@2416" /* packet 9, its timestamp_end */, "implausible", ALL);
	{
		struct tbtrace_diags dg;
		struct tb_reader *r;
		CHECK(tbtrace_open_reader(dir, 0, &dg, &r) == 0, "open");
		uint64_t b, e;
		tb_reader_time_range(r, &b, &e);
		CHECK(e < 10 * PER_PKT * NPKT + 100, "the trace's end is %llu: the implausible bound was kept",
		      (unsigned long long)e);
		tb_reader_close(r);
	}

	/* the first packet has no packet before it to be judged by: the two after it are its
	 * evidence (a forged number there refused every genuine packet after it, up to that number) */
	make();
	patch64(f0, 0 * PKT + TB_PKT_OFF_SEQ, 1000000000);
	expect("packet_seq_num of the first packet far ahead", 1, "chan_0@136", "first readable packet out of line", ALL);
	{ /* and no loss is counted for it */
		struct tbtrace_diags dg;
		struct tb_reader *r;
		CHECK(tbtrace_open_reader(dir, 0, &dg, &r) == 0, "open");
		uint64_t notices = 0;
		tbtrace_count(r, &notices);
		CHECK(notices == 0, "a forged first packet_seq_num counted as %llu loss notices", (unsigned long long)notices);
		tb_reader_close(r);
	}

	make();
	patch64(f1, 0 * PKT + TB_PKT_OFF_TS_END, 1ull << 40); /* plausible as a time: not beyond the present */
	expect("timestamp_end of the first packet far ahead", 1, "chan_1@112", "first readable packet after the begin", ALL);

	make();
	patch64(f0, 0 * PKT + TB_PKT_OFF_CPU, 7);
	expect("cpu_id of the first packet forged", 1, "chan_0@0", "precedes neither", ALL - PER_PKT);

	/* one implausible timestamp_end in the middle: that end, not the packets after it */
	make();
	patch64(f0, 4 * PKT + TB_PKT_OFF_TS_END, 1ull << 63);
	expect("implausible timestamp_end mid-stream", 1, "chan_0@1136" /* packet 4, its timestamp_end */,
	       "this end alone is damaged", ALL);

	make();
	patch64(f0, 4 * PKT + TB_PKT_OFF_TS_END, 1ull << 40);
	expect("timestamp_end mid-stream far ahead", 1, "chan_0@1136", "this end alone is damaged", ALL);

	make(); /* begin and end both far ahead: the packet's times are wrong as a whole */
	patch64(f0, 4 * PKT + TB_PKT_OFF_TS_BEGIN, 1ull << 40);
	patch64(f0, 4 * PKT + TB_PKT_OFF_TS_END, 1ull << 40);
	expect("timestamps mid-stream far ahead, both", 1, "chan_0@1024", "out of line with the packets around it",
	       ALL - PER_PKT);

	make();
	patch64(f0, 5 * PKT + TB_PKT_OFF_TS_BEGIN, 0);
	expect("packet timestamps going back", 1, "chan_0@1280", "timestamps go back", ALL - PER_PKT);

	make();
	patch64(f0, 5 * PKT + TB_PKT_OFF_DISCARDED, 5); /* and its cause: the sum still holds */
	patch64(f0, 5 * PKT + TB_PKT_OFF_LOST + 8 * TB_LOSS_FULL, 5);
	expect("events_discarded going down", 1, "chan_0@1680" /* packet 6, its events_discarded */, "went down", ALL);

	make();
	patch64(f0, 5 * PKT + TB_PKT_OFF_LOST + 8 * TB_LOSS_DISK, 1); /* causes no longer add up */
	expect("loss causes that do not add up", 1, "chan_0@1312" /* packet 5, its first loss cause */, "do not add up", ALL);

	make();
	{ /* record 4 of packet 2 gets id 30 (unknown): records 4..13 of that packet are skipped */
		uint64_t off = 2 * PKT + TB_PACKET_HEADER_SIZE + 4 * 12;
		uint32_t w;
		int fd = open(f0, O_RDONLY);
		CHECK(pread(fd, &w, 4, (off_t)off) == 4, "read");
		close(fd);
		patch32(f0, off, (w & ~0x1fu) | 30u);
		char at[64];
		snprintf(at, sizeof at, "chan_0@%llu", (unsigned long long)off);
		expect("unknown event id", 1, at, "unknown event id 30", ALL - (PER_PKT - 4));
	}

	make();
	{ /* record 2 of packet 7 gets a lower 27-bit timestamp: a wrap, beyond timestamp_end */
		uint64_t off = 7 * PKT + TB_PACKET_HEADER_SIZE + 2 * 12;
		patch32(f0, off, 1u);
		expect("record after timestamp_end", 1, "chan_0", "timestamp_end", ALL - (PER_PKT - 2));
	}

	make();
	{ /* a record whose payload would run past content_size */
		patch64(f1, 0 * PKT + TB_PKT_OFF_CONTENT, (TB_PACKET_HEADER_SIZE + 12 + 6) * 8);
		char at[64];
		snprintf(at, sizeof at, "chan_1@%u", TB_PACKET_HEADER_SIZE + 12);
		expect("record overrunning the content", 1, at, "overruns", ALL - (PER_PKT - 1));
	}

	make();
	{ /* extra non-trace file, hidden file and sub-folder */
		char p[700];
		snprintf(p, sizeof p, "%s/.index", dir);
		FILE *f = fopen(p, "w");
		fputs("hidden", f);
		fclose(f);
		snprintf(p, sizeof p, "%s/sub", dir);
		CHECK(mkdir(p, 0755) == 0, "mkdir");
		snprintf(p, sizeof p, "%s/README", dir);
		f = fopen(p, "w");
		fputs("not a stream file", f);
		fclose(f);
		expect("stray file in the trace directory", 1, "README@0", "header", ALL);
	}

	/* nothing readable */
	make();
	for (unsigned i = 0; i < NPKT; i++) {
		patch32(f0, i * PKT, 0);
		patch32(f1, i * PKT, 0);
	}
	{
		struct tbtrace_diags dg;
		struct tb_reader *r;
		int rc = tbtrace_open_reader(dir, 0, &dg, &r);
		CHECK(rc == -ENODATA && strstr(tb_errmsg(), "nothing readable"), "rc %d: %s", rc, tb_errmsg());
		/* per stream, the first damaged packet and one summary of the
		 * run (not one line per packet: a long damaged run would flood) */
		CHECK(dg.n == 2 * 2, "%d diagnostics", dg.n);
		printf("ok: nothing readable -> %s\n", tb_errmsg());
	}

	/* corrupt metadata: the error names the line and the construct */
	static const struct { const char *from, *to, *want; } meta[] = {
		{ "stream_id = 0;\n\tfields := struct {\n\t\tuint64_t _n;", "stream_id = 0;\n\tfields := struct {\n\t\tuint64_t _n[3];",
		  "fixed-length arrays" },
		{ "byte_order = le;", "byte_order = be;", "byte_order must be le" },
		{ "uint64_t _n;", "callsite_t _n;", "unknown type 'callsite_t'" },
		{ "event {\n\tname = \"app:n\"", "callsite {\n\tname = \"app:n\"", "unsupported top-level construct 'callsite'" },
		{ "\tid = 1;", "\tid = 1\n", "expected ';'" },
		{ "/* CTF 1.8 */", "/* CTF 2.0 */", "signature" },
	};
	for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++) {
		make();
		char p[700], text[16384];
		snprintf(p, sizeof p, "%s/metadata", dir);
		FILE *f = fopen(p, "r");
		size_t n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = 0;
		char *at = strstr(text, meta[i].from);
		CHECK(at, "metadata lacks %s", meta[i].from);
		f = fopen(p, "w");
		fwrite(text, 1, (size_t)(at - text), f);
		fputs(meta[i].to, f);
		fputs(at + strlen(meta[i].from), f);
		fclose(f);
		struct tbtrace_diags dg;
		struct tb_reader *r;
		int rc = tbtrace_open_reader(dir, 0, &dg, &r);
		CHECK(rc == -EBADMSG && strstr(tb_errmsg(), "metadata line ") && strstr(tb_errmsg(), meta[i].want),
		      "case %zu: rc %d: %s", i, rc, tb_errmsg());
		CHECK(dg.n == 1 && strstr(dg.msg[0], "metadata@"), "case %zu: diag %s", i, dg.msg[0]);
		printf("ok: corrupt metadata -> %s\n", tb_errmsg());
	}
	return 0;
}
