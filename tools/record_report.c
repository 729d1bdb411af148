/* SPDX-License-Identifier: MIT */
/*
 * record_report.c - what `tracebuf record` says while and after it records:
 * the live status line, the summary with the accounting identity per ring
 * (written == delivered + lost), the --events patterns that matched nothing,
 * the engine's warnings, and the two verdicts beyond CMD's status (data
 * dropped as invalid: 3; a relay-only copy that lost its relay for good: 1),
 * and, when the trace holds nothing, the likely reason (record_explain_empty).
 * Running CMD and the engine is cmd_record.c.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/engine.h"
#include "kernel/kernel.h"
#include "record_report.h"

/* "record", or "profile" when profile runs record (record_set_name) */
static const char *NAME = "record";

void record_set_name(const char *name)
{
	NAME = name;
}

double record_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Events offered to ring (ch, cpu) (or all: -1): committed + dropped by the producers. */
static uint64_t written_of(struct tb_session *s, int ch, int cpu)
{
	uint64_t n = 0;
	unsigned nch = tb_session_nchannels(s);
	for (unsigned c = 0; c < nch; c++) {
		if (ch >= 0 && (unsigned)ch != c)
			continue;
		struct tb_counters k;
		if (tb_session_counters(s, c, cpu, &k) < 0)
			continue;
		n += k.written + k.lost_full + k.lost_toobig + k.lost_timeout + k.lost_busy + k.lost_noconsumer;
	}
	return n;
}

/* Producer losses so far (live: the status line). */
static uint64_t producer_lost(struct tb_session *s)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < tb_session_nchannels(s); c++) {
		struct tb_counters k;
		if (tb_session_counters(s, c, -1, &k) == 0)
			n += k.lost_full + k.lost_toobig + k.lost_overwritten + k.lost_timeout + k.lost_busy +
			     k.lost_noconsumer;
	}
	return n;
}

static uint64_t sum_lost(const struct tb_stream_stats *st)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < TB_LOSS_NCAUSES; k++)
		n += st->lost[k];
	return n;
}

void record_status_line(struct tb_session *s, struct tb_engine *e, double t0, uint64_t *prev_ev, double *prev_t)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	uint64_t lost = producer_lost(s);
	double t = record_now_s();
	double rate = t > *prev_t ? (double)(st.events - *prev_ev) / (t - *prev_t) : 0;
	*prev_ev = st.events;
	*prev_t = t;
	char fill[160] = "";
	size_t off = 0;
	unsigned ncpus = tb_session_ncpus(s);
	for (unsigned cpu = 0; cpu < ncpus && off < sizeof fill - 16; cpu++) {
		if (cpu == 8) {
			snprintf(fill + off, sizeof fill - off, " ...");
			break;
		}
		unsigned f = 0;
		for (unsigned ch = 0; ch < tb_session_nchannels(s); ch++) {
			int x = tb_session_ring_fill(s, ch, cpu);
			if (x > (int)f)
				f = (unsigned)x;
		}
		off += (size_t)snprintf(fill + off, sizeof fill - off, " %u%%", f / 10);
	}
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	fprintf(stderr, "\r\033[K[%.1fs] %.0f ev/s, %.1f MiB, lost %" PRIu64 ", fill%s%s", t - t0, rate,
		(double)st.bytes / 1048576.0, lost, fill,
		!rs.enabled ? "" : rs.alive ? ", relay ok" : ", RELAY LOST (retrying)");
	fflush(stderr);
}

/*
 * The summary says what the trace says: delivered events and losses by
 * cause as its packets carry them, next to what the producers offered.
 * Once no producer is left, written == delivered + lost for every ring (the
 * accounting identity); a difference is said, never hidden.
 */
/*
 * --events PATTERNS: each pattern that selected none of the classes the
 * program registered is worth a word (a typo gives an empty trace that looks
 * like a program that wrote nothing): said with the classes that exist.
 */
void record_warn_unmatched(struct tb_session *s, const char *patterns)
{
	if (!patterns)
		return;
	unsigned n = tb_session_nclasses(s);
	struct tb_class_info *ev = calloc(n ? n : 1, sizeof *ev);
	if (!ev)
		return;
	for (unsigned i = 0; i < n; i++) {
		ev[i].size = sizeof ev[i];
		if (tb_session_class(s, i, &ev[i]) < 0)
			ev[i].valid = 0;
	}
	const char **names = calloc(n ? n : 1, sizeof *names);
	if (!names) {
		free(ev);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		names[i] = ev[i].valid ? ev[i].name : NULL;
	char buf[256], *save = NULL; /* patterns are at most 255 bytes (tb_session_set_events) */
	snprintf(buf, sizeof buf, "%s", patterns);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok || *tok == '!')
			continue;
		cli_warn_unmatched(NAME, "--events", "the event classes the program registered", tok, names, n);
	}
	free(names);
	free(ev);
}

/* This process's CPU time so far, every thread (user + system): what the
 * recording cost, to the microsecond (make bench's `consumer` rows). */
static double self_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void record_summary(struct tb_session *s, struct tb_engine *e, const char *dir, double secs, int final)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	if (dir)
		fprintf(stderr, "tracebuf %s: %" PRIu64 " event%s, %.2f MiB in %" PRIu64
				" packet%s written to %s in %.2f s (%.0f %% with direct I/O, %.3f s of recorder CPU)\n",
			NAME, st.events, st.events == 1 ? "" : "s", (double)st.bytes / 1048576.0, st.packets,
			st.packets == 1 ? "" : "s", dir, secs,
			st.bytes ? 100.0 * (double)st.direct / (double)st.bytes : 0.0, self_cpu_s());
	else /* relay-only: st counts what the relay daemon got */
		fprintf(stderr, "tracebuf %s: %" PRIu64 " event%s delivered to the relay daemon (no local copy) "
				"in %.2f s (%.3f s of recorder CPU)\n", NAME, st.events, st.events == 1 ? "" : "s", secs,
			self_cpu_s());
	uint64_t lost = sum_lost(&st);
	fprintf(stderr, "  lost %" PRIu64 " event%s", lost, lost == 1 ? "" : "s");
	for (unsigned k = 0, n = 0; k < TB_LOSS_NCAUSES; k++)
		if (st.lost[k])
			fprintf(stderr, "%s%s %" PRIu64, n++ ? ", " : ": ", cli_loss_label(k), st.lost[k]);
	fputc('\n', stderr);
	double io[2];
	tb_engine_io_rates(e, io);
	if (dir && st.lost[TB_LOSS_FULL]) {
		/* what the rings could not wait for: the file system's pace */
		fprintf(stderr, "  ring full: the program wrote faster than the trace was written");
		if (io[1] > 0)
			fprintf(stderr, "; direct writes went at %.2f GB/s", io[1]);
		if (io[0] > 0)
			fprintf(stderr, "%s the page cache took %.2f GB/s", io[1] > 0 ? "," : ";", io[0]);
		fprintf(stderr, " (larger rings absorb longer bursts: --sb-count, --sb-size; --mode block loses nothing)\n");
	}
	if (st.bad || st.torn || st.skipped || st.dropped)
		fprintf(stderr, "  packets: %" PRIu64 " invalid (skipped), %" PRIu64 " torn (dropped), %" PRIu64
				" skipped, %" PRIu64 " not written after a write error\n",
			st.bad, st.torn, st.skipped, st.dropped);
	struct tb_kernel_stats ks;
	if (tb_engine_kernel(e, &ks)) {
		/* --kernel: what the trace's kernel streams say (lost by cause, as readers see it) */
		fprintf(stderr, "  kernel: %" PRIu64 " event%s of %u tracepoint%s on %u CPU%s in %" PRIu64
				" packet%s, %" PRIu64 " of other processes left out; lost %" PRIu64,
			ks.delivered, cli_s(ks.delivered), ks.ntracepoints, cli_s(ks.ntracepoints), ks.ncpus,
			cli_s(ks.ncpus), ks.packets, cli_s(ks.packets), ks.filtered, ks.lost_full + ks.lost_invalid + ks.lost_disk);
		if (ks.lost_full)
			fprintf(stderr, " (perf ring full: %" PRIu64 "; a larger ring: --kernel-pages)", ks.lost_full);
		if (ks.silent)
			fprintf(stderr, " (of which %" PRIu64 " counted by the kernel but never in its ring)", ks.silent);
		if (ks.lost_invalid)
			fprintf(stderr, " (invalid records: %" PRIu64 ")", ks.lost_invalid);
		if (ks.lost_disk)
			fprintf(stderr, " (not written: %" PRIu64 ")", ks.lost_disk);
		fputc('\n', stderr);
		if (ks.counted) {
			uint64_t acc = ks.delivered + ks.filtered + ks.lost_full + ks.lost_invalid + ks.lost_disk;
			fprintf(stderr, "  kernel: %" PRIu64 " tracepoint hits counted by perf, %" PRIu64
					" accounted for (delivered + left out + lost)%s\n",
				ks.generated, acc, acc == ks.generated ? "" : ": NOT EQUAL");
		}
	}
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	if (rs.enabled) {
		fprintf(stderr, "  relay: %" PRIu64 " packet%s, %.2f MiB sent to %s", rs.packets,
			rs.packets == 1 ? "" : "s", (double)rs.bytes / 1048576.0, rs.path);
		if (rs.reconnects)
			fprintf(stderr, " (the last of %u relay sessions: %u reconnection%s)", rs.reconnects + 1,
				rs.reconnects, rs.reconnects == 1 ? "" : "s");
		if (rs.lost_packets)
			fprintf(stderr, "; %" PRIu64 " packet%s (%" PRIu64 " event%s) not sent%s%s", rs.lost_packets,
				rs.lost_packets == 1 ? "" : "s", rs.lost_events, rs.lost_events == 1 ? "" : "s",
				rs.error[0] ? ": " : " (counted as lost_relay in the packets sent after them)",
				rs.error);
		if (rs.full_packets)
			fprintf(stderr, "; %" PRIu64 " of them because the relay took them slower than the program "
					"wrote (its send queue was full)", rs.full_packets);
		if (rs.unreported_events)
			/* a stream that sent no packet after its losses: no header tells them */
			fprintf(stderr, "; %" PRIu64 " of those events in no packet sent after them: the relay's copy "
					"does not say it misses them", rs.unreported_events);
		fputc('\n', stderr);
	}
	unsigned nch = tb_session_nchannels(s), ncpus = tb_session_ncpus(s);
	for (unsigned ch = 0; ch < nch; ch++)
		for (unsigned cpu = 0; cpu < ncpus; cpu++) {
			struct tb_stream_stats x;
			tb_engine_stats(e, (int)ch, (int)cpu, &x);
			uint64_t w = written_of(s, (int)ch, (int)cpu), l = sum_lost(&x);
			if (!x.packets && !w && !l)
				continue;
			fprintf(stderr, "  %s cpu %u: written %" PRIu64 ", delivered %" PRIu64 ", lost %" PRIu64
					", %" PRIu64 " packet%s\n",
				tb_session_channel_name(s, ch), cpu, w, x.events, l, x.packets, x.packets == 1 ? "" : "s");
			if (final && w != x.events + l)
				fprintf(stderr, "  %s cpu %u: the trace does not account for %" PRId64
						" events (written != delivered + lost): please report this\n",
					tb_session_channel_name(s, ch), cpu, (int64_t)(w - x.events - l));
		}
}

/* Relay-only, and the relay daemon was gone at the end: its copy, the only
 * one, misses the last packets and cannot say how many events they held
 * (that is told in the next packet of a stream, and none will come).  Said,
 * and a failure. */
int record_relay_only_lost(const char *out, struct tb_engine *e)
{
	struct tb_relay_stats rs;
	tb_engine_relay(e, &rs);
	if (out || !rs.enabled || (rs.alive && !rs.unreported_events))
		return 0;
	if (rs.alive) {
		cli_error(NAME, "the relay daemon's copy of the trace (the only one: no -o DIR) misses %" PRIu64
				" events at its end that it cannot tell (not sent before the end: the relay was too slow)",
			  rs.unreported_events);
		return 1;
	}
	cli_error(NAME, "the relay daemon was lost and did not come back before the end: its copy of the trace (the "
			"only one: no -o DIR) misses %" PRIu64 " event%s, and %s",
		  rs.lost_events, cli_s(rs.lost_events),
		  rs.reconnects ? "its last relay session does not say so" : "does not say so");
	return 1;
}

/* Data of the session was dropped as invalid (packets that failed validation, records cut,
 * control blocks resynchronised): the exit status says so (3). */
int record_damaged_input(struct tb_engine *e)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	return st.bad || st.lost[TB_LOSS_INVALID] || st.resyncs;
}

void record_print_warnings(struct tb_engine *e)
{
	char msg[300];
	while (tb_engine_next_warning(e, msg, sizeof msg)) {
		fputc('\n', stderr);
		cli_msg(stderr, "tracebuf %s: warning: %s", NAME, msg);
	}
}

/*
 * What executable `path` says about libtracebuf, from its ELF file alone:
 * 1 it links it (a DT_NEEDED entry naming libtracebuf, or the producer's
 * symbols tb_emit, tb_write, tb_class_register in its symbol tables: a static
 * link or a reference), 0 it does not, -1 not a readable 64-bit ELF file
 * (a script, say).  Every offset is checked against the file's size.
 */
static int elf_links_tracebuf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	size_t size = (size_t)sb.st_size;
	const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	int rc = -1;
	Elf64_Ehdr eh;
	memcpy(&eh, m, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
		goto out;
	rc = 0;
	for (unsigned i = 0; i < eh.e_shnum && rc == 0; i++) {
		Elf64_Shdr sh, st;
		memcpy(&sh, m + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
		if ((sh.sh_type != SHT_DYNAMIC && sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    sh.sh_link >= eh.e_shnum || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue;
		memcpy(&st, m + eh.e_shoff + (size_t)sh.sh_link * sizeof st, sizeof st);
		if (st.sh_offset > size || st.sh_size > size - st.sh_offset || !st.sh_size)
			continue;
		const char *str = (const char *)m + st.sh_offset;
		size_t strsz = st.sh_size;
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t o = 0; o + sizeof(Elf64_Dyn) <= sh.sh_size && rc == 0; o += sizeof(Elf64_Dyn)) {
				Elf64_Dyn d;
				memcpy(&d, m + sh.sh_offset + o, sizeof d);
				if (d.d_tag == DT_NULL)
					break;
				if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strsz)
					continue;
				const char *nm = str + d.d_un.d_val;
				size_t room = strsz - d.d_un.d_val;
				if (strnlen(nm, room) < room && !strncmp(nm, "libtracebuf", 11)) /* terminated in the table */
					rc = 1;
			}
			continue;
		}
		for (size_t o = 0; o + sizeof(Elf64_Sym) <= sh.sh_size && rc == 0; o += sizeof(Elf64_Sym)) {
			Elf64_Sym y;
			memcpy(&y, m + sh.sh_offset + o, sizeof y);
			if (y.st_name >= strsz)
				continue;
			const char *nm = str + y.st_name;
			size_t l = strnlen(nm, strsz - y.st_name);
			if (l == strsz - y.st_name)
				continue; /* not terminated inside the table */
			if (!strcmp(nm, "tb_emit") || !strcmp(nm, "tb_write") || !strcmp(nm, "tb_class_register"))
				rc = 1;
		}
	}
out:
	munmap((void *)m, size);
	return rc;
}

void record_explain_empty(struct tb_session *s, struct tb_engine *e, const char *exe, int status,
			  const char *patterns)
{
	struct tb_stream_stats st;
	tb_engine_stats(e, -1, -1, &st);
	if (st.events || sum_lost(&st) || written_of(s, -1, -1))
		return;
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char names[160];
	unsigned procs = tb_session_attached_procs(s, (uint32_t)getpid(), names, sizeof names);
	int links = elf_links_tracebuf(exe);
	fprintf(stderr, "tracebuf %s: the trace holds no event: ", NAME);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !procs) {
		fprintf(stderr, "%s exited with status 127 without attaching to the session: the dynamic loader most "
				"likely did not find a library it needs (see its message above: \"error while loading "
				"shared libraries\")%s. Build it with the rpath pkg-config gives (cc ... $(pkg-config "
				"--cflags --libs tracebuf)), or run it with LD_LIBRARY_PATH=<libdir of tracebuf>\n",
			base, links == 1 ? "; it needs libtracebuf" : "");
		return;
	}
	if (!procs) {
		if (links == 0)
			fprintf(stderr, "%s is not linked with libtracebuf (no DT_NEEDED entry for libtracebuf.so.0, no "
					"tb_ symbols), and no process it started attached to the session. Declare events "
					"with TB_EVENT (<tracebuf/event.h>) and link with $(pkg-config --cflags --libs "
					"tracebuf) (docs/GUIDE.md)\n", base);
		else if (links < 0)
			fprintf(stderr, "%s is not an ELF program (a script?) and no process it started attached to the "
					"session: the programs it runs are not linked with libtracebuf, or do not get "
					"TRACEBUF_SESSION from it\n", base);
		else
			fprintf(stderr, "%s links libtracebuf but no process attached to the session: it exited before "
					"the library was loaded, or the library refused TRACEBUF_SESSION (its message above "
					"says why), or TRACEBUF_SESSION was removed from its environment\n", base);
		return;
	}
	unsigned n = tb_session_nclasses(s), mine = 0, recorded = 0;
	char list[200] = "";
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		struct tb_class_info ci = { .size = sizeof ci };
		if (tb_session_class(s, i, &ci) < 0 || !ci.valid || !strncmp(ci.name, "tracebuf:", 9))
			continue;
		mine++;
		recorded += ci.channels != 0;
		if (off < sizeof list && mine <= 8)
			off += (size_t)snprintf(list + off, sizeof list - off, " %s", ci.name);
	}
	/* process and class names from the session (shared memory): escaped */
	char namesx[4 * sizeof names], listx[4 * sizeof list];
	cli_tx(namesx, sizeof namesx, names);
	cli_tx(listx, sizeof listx, list);
	if (!mine)
		fprintf(stderr, "%u process%s attached (%s) but registered no event class: no TB_EVENT of theirs "
				"was reached, or they write with tb_write() to classes they never registered\n",
			procs, procs == 1 ? "" : "es", namesx);
	else if (!recorded && patterns)
		fprintf(stderr, "--events '%s' selected none of the %u event class%s the program registered:%s%s\n",
			patterns, mine, mine == 1 ? "" : "es", listx, mine > 8 ? " ..." : "");
	else if (!recorded)
		fprintf(stderr, "every one of the %u event class%s the program registered was disabled "
				"(tracebuf disable):%s%s\n", mine, mine == 1 ? "" : "es", listx, mine > 8 ? " ..." : "");
	else
		fprintf(stderr, "%u process%s attached (%s) and registered %u event class%s (%s ) but wrote "
				"none: the code that writes them did not run\n",
			procs, procs == 1 ? "" : "es", namesx, mine, mine == 1 ? "" : "es", listx + (listx[0] == ' '));
}
