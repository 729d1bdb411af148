/* SPDX-License-Identifier: MIT */
/*
 * hostile_trace.c - `tb-hostile-trace DIR`: a trace whose every string is
 * hostile, for t_every_output_escapes_hostile_strings.sh: terminal escapes
 * (the window title, clear screen), a C1 CSI (U+009B), DEL and ill-formed
 * UTF-8 (a surrogate, an overlong form, beyond U+10FFFF, 0xff, a truncated
 * sequence) in string payloads, thread names (tracebuf:thread_name), the
 * process name (metadata env), the profiler's unwinder name and mapped file
 * paths, and an ELF symbol: this program's own function evil_fn, whose
 * symbol name holds the same bytes (an asm label), sampled in a profile.
 * The event class name is a placeholder the test edits into the metadata
 * (the metadata writer refuses such a name): "app:HOSTILE_CLASS".
 * `tb-hostile-trace DIR ELF`: also a mapping of the file ELF (a hostile ELF
 * file for the symboliser) at 0x7d0000000000, file offset 0, with samples
 * at 0x7d0000000100.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_report_trace.h"
#include "tbtest.h"
#include "tbtrace.h"

/* the hostile bytes: ESC ] 0 ; PWN BEL ESC [ 2 J, C1 CSI, DEL, surrogate, overlong, > U+10FFFF, 0xff */
#define HOSTILE "\033]0;PWN\007\033[2J\302\2331m\177\355\240\200\340\200\257\364\220\200\200\377"

__attribute__((noinline, used)) int evil_fn(int x) __asm__("\"evil" HOSTILE "fn\"");
__attribute__((noinline, used)) int evil_fn(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

enum { EV_APP = PRT_NCLASSES, EV_TNAME, NCLASSES };

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: tb-hostile-trace DIR [ELF]\n");
		return 2;
	}
	const char *dir = argv[1];
	static struct tb_event_desc d[NCLASSES];
	tbtrace_desc(&d[PRT_SAMPLE], PRT_SAMPLE, "profile:sample", 3, "u64s:stack", "u32:flags", "u32:overrun");
	tbtrace_desc(&d[PRT_MAP], PRT_MAP, "profile:map", 5, "u64:start", "u64:end", "u64:pgoff", "u32:gen", "str:path");
	tbtrace_desc(&d[PRT_INFO], PRT_INFO, "profile:info", 3, "u32:hz", "str:unwinder", "str:exe");
	tbtrace_desc(&d[PRT_COUNTERS], PRT_COUNTERS, "profile:counters", 6, "u64:received", "u64:lost",
		     "u64:invalid_pc", "u64:aborted", "u64:truncated", "u64:overruns");
	tbtrace_desc(&d[PRT_TICK], PRT_TICK, "app:tick", 1, "u64:n");
	tbtrace_desc(&d[EV_APP], EV_APP, "app:HOSTILE_CLASS", 2, "u32:n", "str:s");
	tbtrace_desc(&d[EV_TNAME], EV_TNAME, "tracebuf:thread_name", 2, "u32:tid", "str:name");
	d[PRT_SAMPLE].fields[0].max_len = 64;
	d[PRT_MAP].fields[4].max_len = 4095;
	d[PRT_INFO].fields[2].max_len = 4095;
	d[EV_APP].fields[1].max_len = 4095;
	d[EV_TNAME].fields[1].max_len = 64;
	struct tbtrace_env env[] = { { "proc_4242", "comm=ev" "\302\233\377\355\240\200" "il exe=/bin/evil", 0 } };
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm");
	struct tbtrace_opts o = { .events = d, .nevents = NCLASSES, .packet_size = 4096, .env = env, .nenv = 1 };
	struct tbtrace *t = tbtrace_open(dir, &o);
	struct tbtrace_stream *c0 = tbtrace_stream(t, "chan", 0, 0), *c1 = tbtrace_stream(t, "chan", 0, 1);
	uint64_t ts = 1000;
	static const char *const strs[] = {
		HOSTILE, "\033]0;PWN\007\033[2J", "\302\2331m", "\355\240\200 \340\200\257 \364\220\200\200 \377",
		"ok \303\251 \360\237\230\200", "cut \342\202",
	};
	tbtrace_set_thread(c0, 4242, 4242);
	tbtrace_set_thread(c1, 4242, 4243);
	for (uint32_t i = 0; i < 2; i++) {
		struct tbtrace_buf b = { .n = 0 };
		tbb_u32(&b, 4242 + i);
		tbb_str(&b, i ? "t\377\355\240\200\302\233" : "\033]0;PWN\007\033[2J");
		tbtrace_event(i ? c1 : c0, EV_TNAME, ts++, b.b, b.n);
	}
	prt_info(c0, ts, 999, "fp" HOSTILE, "/bin/evil");
	prt_maps_self(c0, ts, 0, 0);
	/* a mapping of a file that does not exist, with a hostile path: its problem is said on stderr */
	prt_map(c0, ts, 0x7e0000000000ull, 0x7e0000010000ull, 0, 0, "/nonexistent/" HOSTILE ".so");
	if (argc == 3)
		prt_map(c0, ts, 0x7d0000000000ull, 0x7d0000001000ull, 0, 0, argv[2]);
	uint64_t evil = (uint64_t)(uintptr_t)&evil_fn, in_elf = 0x7d0000000100ull;
	uint64_t st[] = { evil + 1, 0x7e0000000100ull };
	for (int i = 0; i < 20; i++) {
		ts += 1000000;
		for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
			struct tbtrace_buf b = { .n = 0 };
			tbb_u32(&b, (uint32_t)k);
			tbb_str(&b, strs[k]);
			tbtrace_event(k & 1 ? c1 : c0, EV_APP, ts + k, b.b, b.n);
		}
		prt_sample(c0, ts + 100, st, 2, 0, 0);
		prt_sample(c0, ts + 101, st + 1, 1, 0, 0);
		if (argc == 3)
			prt_sample(c0, ts + 102, &in_elf, 1, 0, 0);
	}
	tbtrace_close(t);
	printf("evil_fn %d\n", evil_fn(1));
	return 0;
}
