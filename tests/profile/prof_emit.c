/* SPDX-License-Identifier: MIT */
/*
 * prof_emit.c - a program that spends most of its CPU time in tracebuf's
 * own code: main emits events in a loop (two classes, a fixed payload and a
 * string) for SECONDS of CPU time, and every sample must still have main in
 * its chain (t_profile_emitting_program_keeps_its_callers.sh).  Linked with
 * libtracebuf, unlike the other programs here.
 *
 * usage: prof_emit SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tracebuf/event.h>

TB_EVENT(emit, tick, (u64, i), (u32, k))
TB_EVENT(emit, note, (u32, i), (str, what))

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, end = cpu_seconds() + secs;
	unsigned long long n = 0;
	while (cpu_seconds() < end) {
		for (int j = 0; j < 1000; j++, n++) {
			tb_emit_tick(n, (uint32_t)j);
			tb_emit_note((uint32_t)n, "emitting");
		}
	}
	printf("%llu\n", n);
	return 0;
}
