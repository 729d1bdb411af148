/* SPDX-License-Identifier: MIT */
/*
 * bench_loops.c - the event loops every producer row times, in one place so
 * that the 1-thread table (bench_producer.c) and the 1/2/64-thread table
 * (bench_threads.c) measure exactly the same code.  16-byte payloads.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <tracebuf/event.h>

#include "bench.h"
#include "lttng/common.h"
#include "platform/clock.h"

TB_EVENT(bench, ev16, (u64, a), (u64, b))

/* the floor of both processes (this one and bench/lttng's) */
void bench_loop_floor(uint64_t n)
{
	bc_loop_floor(n);
}

void bench_loop_tracebuf(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		tb_bench_ev16(i, i ^ 0x5555);
}

static pthread_mutex_t gmu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t gbuf[1 << 20];
static size_t gpos;

void bench_loop_mutex(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t rec[3] = { tb_rdtsc(), i, i ^ 0x5555 };
		pthread_mutex_lock(&gmu);
		if (gpos + sizeof rec > sizeof gbuf)
			gpos = 0;
		memcpy(gbuf + gpos, rec, sizeof rec);
		gpos += sizeof rec;
		pthread_mutex_unlock(&gmu);
	}
}
