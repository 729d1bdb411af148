/* SPDX-License-Identifier: MIT */
/*
 * engine_kernel.c - the engine's kernel thread (docs/KERNEL.md): it drives
 * src/kernel/ (perf rings of the sched tracepoints -> streams kernel_cpu<N>)
 * next to the drain thread, which it never touches: the two share only the
 * directory, the metadata, written with the kernel's classes before the
 * first kernel packet (tb_engine_kernel_start), and the outputs: each
 * kernel packet, once in its file (or with no directory, relay-only,
 * instead), goes to every output as a stream after the channels' ones
 * (tb_output_nstreams()), so that the relay daemon gets the kernel streams
 * like any other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/engine_impl.h"

#define TB_KERNEL_POLL_MS 100 /* a pass at least this often: the kernel streams' latency */

/* A kernel packet is in its file (or there is none): the outputs' turn. */
static void kernel_sink(void *arg, unsigned i, const struct iovec *iov, int n, uint64_t events)
{
	struct tb_engine *e = arg;
	tb_output_packets(e, e->s->nchannels, i, iov, n, events);
}

int tb_engine_kernel_open(struct tb_engine *e, const struct tb_kernel_cfg *cfg)
{
	struct tb_kernel_cfg c = *cfg;
	uint32_t roots[TB_MAX_PROCS];
	if (!c.nroots) {
		/* record --attach: the processes of the session (hints from shared
		 * memory: they only choose which events are kept) */
		uint32_t n = __atomic_load_n(&e->s->procs->count, __ATOMIC_ACQUIRE);
		n = n > e->s->proc_capacity ? e->s->proc_capacity : n;
		for (uint32_t i = 0; i < n && c.nroots < TB_MAX_PROCS; i++) {
			/* acquire: pairs with the release store of state in tb_proc_register() */
			if (__atomic_load_n(&e->s->procs->procs[i].state, __ATOMIC_ACQUIRE) != 1)
				continue;
			uint32_t pid = __atomic_load_n(&e->s->procs->procs[i].pid, __ATOMIC_RELAXED);
			if (pid && pid <= (uint32_t)INT32_MAX)
				roots[c.nroots++] = pid;
		}
		c.roots = roots;
	}
	c.clock_kind = e->s->clock_kind;
	c.clock_freq = e->s->clock_freq;
	c.clock_mono_offset_ns = __atomic_load_n(&e->s->map->clock_mono_offset_ns, __ATOMIC_RELAXED);
	int rc = tb_kernel_open(&c, &e->kern);
	if (rc)
		return rc;
	e->nkstreams = tb_kernel_nstreams(e->kern);
	e->kern_unsent = calloc(e->nkstreams ? e->nkstreams : 1, sizeof *e->kern_unsent);
	if (!e->kern_unsent)
		return tb_fail(-ENOMEM, "--kernel: out of memory");
	/* the outputs are all registered before the kernel thread starts */
	tb_kernel_set_output(e->kern, e->local ? e->dirfd : -1, e->s->uuid, kernel_sink, e);
	tb_engine_kernel_warnings(e);
	return 0;
}

void tb_engine_kernel_warnings(struct tb_engine *e)
{
	char buf[256];
	while (e->kern && tb_kernel_next_warning(e->kern, buf, sizeof buf))
		tb_engine_warn(e, "%s", buf);
}

static void *kernel_main(void *arg)
{
	struct tb_engine *e = arg;
	tb_engine_thread_begin(e, "tb-kernel");
	/* test hook: drain only at the end (the rings then overflow for sure,
	 * t_kernel_sched_events.sh's loss case) */
	const char *nd = getenv("TRACEBUF_TEST_KERNEL_NO_DRAIN");
	int no_drain = nd && *nd && strcmp(nd, "0");
	/* acquire: pairs with the release store in tb_engine_kernel_stop() */
	while (!__atomic_load_n(&e->kern_stop, __ATOMIC_ACQUIRE)) {
		tb_kernel_wait(e->kern, TB_KERNEL_POLL_MS);
		if (no_drain)
			continue;
		int rc = tb_kernel_pass(e->kern, 0);
		if (rc && !e->kern_err) {
			e->kern_err = rc;
			tb_engine_set_error(e, rc);
		}
		tb_engine_kernel_warnings(e);
	}
	return NULL;
}

/* The kernel's events first (enabled before CMD runs), then the drain, writer and flusher threads. */
int tb_engine_start(struct tb_engine *e)
{
	int rc = tb_engine_kernel_start(e);
	return rc ? rc : tb_engine_start_threads(e);
}

int tb_engine_kernel_start(struct tb_engine *e)
{
	if (!e->kern || e->kern_running)
		return 0;
	/* the kernel's classes are in the metadata before any kernel packet */
	int rc = tb_engine_write_metadata(e);
	if (rc)
		return rc;
	if ((rc = tb_kernel_enable(e->kern)) != 0)
		return rc;
	rc = pthread_create(&e->kern_thr, NULL, kernel_main, e);
	if (rc)
		return tb_fail(-rc, "cannot start the kernel thread: %s", strerror(rc));
	e->kern_running = 1;
	return 0;
}

void tb_engine_kernel_stop(struct tb_engine *e)
{
	if (!e->kern_running)
		return;
	__atomic_store_n(&e->kern_stop, 1, __ATOMIC_RELEASE);
	pthread_join(e->kern_thr, NULL);
	e->kern_running = 0;
}

void tb_engine_kernel_finish(struct tb_engine *e)
{
	if (!e->kern)
		return;
	tb_engine_kernel_stop(e);
	int rc = tb_kernel_pass(e->kern, 1);
	if (rc && !e->kern_err) {
		e->kern_err = rc;
		tb_engine_set_error(e, rc);
	}
	tb_engine_kernel_warnings(e);
}

int tb_engine_kernel(struct tb_engine *e, struct tb_kernel_stats *out)
{
	memset(out, 0, sizeof *out);
	if (!e->kern)
		return 0;
	tb_kernel_stats(e->kern, out);
	if (!e->local) {
		/* relay-only: the relay's copy is the trace, and what it did not
		 * get is lost to it (as tb_engine_stats() says for the channels) */
		for (unsigned i = 0; i < e->nkstreams; i++)
			out->lost_relay += __atomic_load_n(&e->kern_unsent[i], __ATOMIC_RELAXED);
		out->delivered -= out->lost_relay < out->delivered ? out->lost_relay : out->delivered;
	}
	return 1;
}
