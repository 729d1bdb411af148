/* SPDX-License-Identifier: MIT */
/*
 * test_reader_cli_bad_input - damaged input through the CLI: dump, report
 * and convert exit 3, say what was skipped on stderr (file, offset, what),
 * and still print the good part: every event of the undamaged packets.
 * Input nothing can be read from, or a missing directory, exits 1 with the
 * reason; -q silences the diagnostics but not the exit code.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/format.h"
#include "tbtest.h"
#include "tbtrace.h"
#include "tbtrace_cli.h"

#define PKT 256u
#define PER_PKT ((PKT - TB_PACKET_HEADER_SIZE) / (4 + 8)) /* records per packet */
#define NPKT 6u

static uint64_t count_lines(const char *path, const char *with)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	uint64_t n = 0;
	CHECK(f, "%s", path);
	while (fgets(line, sizeof line, f))
		n += strstr(line, with) != NULL;
	fclose(f);
	return n;
}

int main(void)
{
	char dir[512], out[512], err[512], json[512], args[2000], f1[600];
	snprintf(dir, sizeof dir, "%s/bad", tbt_tmpdir());
	snprintf(out, sizeof out, "%s/out", tbt_tmpdir());
	snprintf(err, sizeof err, "%s/err", tbt_tmpdir());
	snprintf(json, sizeof json, "%s/bad.json", tbt_tmpdir());
	snprintf(f1, sizeof f1, "%s/chan_1", dir);
	struct tb_event_desc ev[2];
	tbtrace_desc(&ev[1], 1, "app:n", 1, "u64:n");
	struct tbtrace_opts o = { .events = ev, .nevents = 2, .packet_size = PKT };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *s0 = tbtrace_stream(t, "chan", 0, 0), *s1 = tbtrace_stream(t, "chan", 0, 1);
	for (uint64_t n = 0; n < PER_PKT * NPKT; n++) {
		tbtrace_event(s0, 1, 10 * n, &n, 8);
		tbtrace_event(s1, 1, 10 * n + 5, &n, 8);
	}
	tbtrace_close(t);
	/* packet 2 of chan_1 gets a bad magic */
	int fd = open(f1, O_WRONLY);
	uint32_t bad = 0xdeadbeef;
	CHECK(fd >= 0 && pwrite(fd, &bad, 4, 2 * PKT) == 4, "patch");
	close(fd);
	const uint64_t good = 2 * PER_PKT * NPKT - PER_PKT;
	const char *msg = "chan_1, offset 512: packet skipped: bad magic 0xdeadbeef";

	snprintf(args, sizeof args, "dump '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 3, "dump of a damaged trace exits 3");
	CHECK(tbtrace_file_has(err, "tracebuf dump: ") && tbtrace_file_has(err, msg), "dump: message on stderr");
	CHECK(count_lines(out, "app:n") == good, "dump printed %llu events, %llu expected",
	      (unsigned long long)count_lines(out, "app:n"), (unsigned long long)good);
	snprintf(args, sizeof args, "dump -q --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 3 && !tbtrace_file_has(err, msg), "dump -q: exit 3, no message");
	CHECK(count_lines(out, "\"app:n\"") == good, "dump json: the good part");

	snprintf(args, sizeof args, "report --format json '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 3 && tbtrace_file_has(err, msg), "report exits 3 with the message");
	char want[64];
	snprintf(want, sizeof want, "\"events\":%llu,", (unsigned long long)good);
	CHECK(tbtrace_file_has(out, want) && tbtrace_file_has(out, "\"diagnostics\":{\"count\":1,"), "report json totals");
	snprintf(args, sizeof args, "report '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 3 && tbtrace_file_has(out, "damaged  1 problem in the input"),
	      "report text mentions the damage");

	snprintf(args, sizeof args, "convert '%s' --to chrome -o '%s'", dir, json);
	CHECK(tbtrace_cli_run(args, out, err) == 3 && tbtrace_file_has(err, msg), "convert exits 3 with the message");
	snprintf(want, sizeof want, "{\"events\":%llu,", (unsigned long long)good);
	CHECK(tbtrace_file_has(json, want), "convert: the good part");
	CHECK(count_lines(json, "{\"name\":\"app:n\",\"cat\":\"app\",\"ph\":\"i\"") == good,
	      "convert: one instant per good event");
	CHECK(count_lines(json, "tracebuf:discarded_packets") == 1, "convert: the skipped packet is a lost packet");

	/* nothing readable: exit 1 with the reason */
	for (unsigned c = 0; c < 2; c++)
		for (unsigned i = 0; i < NPKT; i++) {
			char p[600];
			snprintf(p, sizeof p, "%s/chan_%u", dir, c);
			fd = open(p, O_WRONLY);
			CHECK(fd >= 0 && pwrite(fd, &bad, 4, (off_t)(i * PKT)) == 4, "patch");
			close(fd);
		}
	snprintf(args, sizeof args, "report '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "nothing readable"), "nothing readable");
	/* corrupt metadata: exit 1, the message names the line */
	char p[600];
	snprintf(p, sizeof p, "%s/metadata", dir);
	FILE *f = fopen(p, "w");
	fputs("/* CTF 1.8 */\ntrace {\n\tmajor = 2;\n};\n", f);
	fclose(f);
	snprintf(args, sizeof args, "dump '%s'", dir);
	CHECK(tbtrace_cli_run(args, out, err) == 1 && tbtrace_file_has(err, "metadata line 2"), "metadata error");
	CHECK(tbtrace_cli_run("report /nonexistent/trace", out, err) == 1 && tbtrace_file_has(err, "/nonexistent/trace"),
	      "missing directory");
	printf("ok\n");
	return 0;
}
