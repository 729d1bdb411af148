/* SPDX-License-Identifier: MIT */
/*
 * capture.c - the recorder's side of the perf rings opened by open.c.
 * A pass (tb_kernel_pass) drains every ring (perf_ring.c),
 * maps each time to the session clock, sorts each CPU's events (pending.c), merges
 * the CPUs in time order through the process-tree filter, and gives the
 * events kept to kwrite.c.  docs/KERNEL.md says why this clock and what
 * the filter keeps.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kernel_impl.h"
#include "platform/clock.h"

/* ---- the traced tree: a set of tids and tgids (one id space) ---- */

static int set_has(const struct tb_kernel *k, uint32_t v)
{
	if (!v || !k->set_cap)
		return 0;
	for (size_t i = ((size_t)v * 2654435761u) & (k->set_cap - 1);; i = (i + 1) & (k->set_cap - 1)) {
		if (k->set[i] == v)
			return 1;
		if (!k->set[i])
			return 0;
	}
}

void tb_kset_add(struct tb_kernel *k, uint32_t v)
{
	if (!v || set_has(k, v))
		return;
	if ((k->set_n + 1) * 2 > k->set_cap) {
		size_t cap = k->set_cap ? k->set_cap * 2 : 256;
		uint32_t *n = calloc(cap, sizeof *n), *old = k->set;
		if (!n)
			return; /* the filter keeps what it knows: an event may be left out */
		size_t ocap = k->set_cap;
		k->set = n;
		k->set_cap = cap;
		k->set_n = 0;
		for (size_t i = 0; i < ocap; i++)
			if (old[i])
				tb_kset_add(k, old[i]);
		free(old);
	}
	size_t i = ((size_t)v * 2654435761u) & (k->set_cap - 1);
	while (k->set[i])
		i = (i + 1) & (k->set_cap - 1);
	k->set[i] = v;
	k->set_n++;
}

/*
 * Whether ev concerns the traced tree, learning the tree as it goes (events
 * must come in time order): a task current while its tgid is in the tree
 * is in it; a fork by the tree adds the child (a thread or a process: ids
 * are one space, so the child's tid serves as its tgid too).
 */
static int keep(struct tb_kernel *k, const struct kpend *ev)
{
	int cur = ev->cur_tid > 0 && (set_has(k, (uint32_t)ev->cur_pid) || set_has(k, (uint32_t)ev->cur_tid));
	if (cur)
		tb_kset_add(k, (uint32_t)ev->cur_tid);
	int a = ev->tid_a > 0 && set_has(k, (uint32_t)ev->tid_a);
	int b = ev->tid_b > 0 && set_has(k, (uint32_t)ev->tid_b);
	if (ev->tp == TB_KTP_FORK && (cur || a) && ev->tid_b > 0)
		tb_kset_add(k, (uint32_t)ev->tid_b);
	if (ev->tp == TB_KTP_FORK)
		return cur || a;
	return cur || a || b;
}

/* The recorder's own threads (tb_kernel_exclude_self): an embedded
 * recorder's system calls are not the program's. */
static int excluded(const struct tb_kernel *k, int32_t tid)
{
	unsigned n = __atomic_load_n(&k->nexcl, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n && i < TB_KEXCL; i++)
		/* acquire: pairs with the release store in tb_kernel_exclude_self() */
		if ((int32_t)__atomic_load_n(&k->excl[i], __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

void tb_kernel_exclude_self(struct tb_kernel *k)
{
	if (!k)
		return;
	unsigned i = __atomic_fetch_add(&k->nexcl, 1, __ATOMIC_RELAXED);
	if (i < TB_KEXCL)
		/* release: pairs with excluded()'s acquire load (the slot may read 0
		 * until then: a miss, never a wrong tid) */
		__atomic_store_n(&k->excl[i], (uint32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

/* ---- the clock ---- */

static uint64_t now_ticks(const struct tb_kernel *k)
{
	return tb_clock_read(k->clock_kind);
}

/* A (tsc, monotonic ns) pair: the tightest of a few tries, the TSC at the middle. */
void tb_kclock_pair(struct tb_kernel *k)
{
	if (k->clock_kind != TB_CLOCK_TSC)
		return;
	uint64_t best = UINT64_MAX, tsc = 0, ns = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = tb_rdtsc(), m = tb_mono_ns(), t1 = tb_rdtsc();
		if (t1 >= t0 && t1 - t0 < best) {
			best = t1 - t0;
			tsc = t0 + (t1 - t0) / 2;
			ns = m;
		}
	}
	if (k->pair_n) {
		const unsigned last = (k->pair_n - 1) % TB_KPAIRS;
		if (ns <= k->pairs[last].ns || tsc <= k->pairs[last].tsc)
			return; /* needs time between pairs */
	}
	k->pairs[k->pair_n % TB_KPAIRS].tsc = tsc;
	k->pairs[k->pair_n % TB_KPAIRS].ns = ns;
	k->pair_n++;
}

/*
 * Monotonic ns -> session ticks.  The TSC: piecewise linear between the
 * pairs taken at each pass (both clocks count the same oscillator; NTP
 * slews CLOCK_MONOTONIC, which a fit over the whole recording would not
 * follow), extrapolated with the nearest segment; the session's
 * calibration before there are two pairs.
 */
static uint64_t to_ticks(const struct tb_kernel *k, uint64_t ns)
{
	if (k->clock_kind != TB_CLOCK_TSC)
		return ns;
	unsigned n = k->pair_n < TB_KPAIRS ? k->pair_n : TB_KPAIRS;
	if (n < 2) {
		__int128 d = (__int128)((int64_t)ns - k->mono_offset_ns) * (__int128)k->clock_freq / 1000000000;
		return d < 0 ? 0 : (uint64_t)d;
	}
	/* segments from the newest back: pairs[j-1], pairs[j] (indices mod TB_KPAIRS) */
	unsigned newest = k->pair_n - 1;
	unsigned j = newest;
	while (j > k->pair_n - n + 1 && k->pairs[(j - 1) % TB_KPAIRS].ns > ns)
		j--;
	const unsigned hi = j % TB_KPAIRS, lo = (j - 1) % TB_KPAIRS;
	/* pairs only move forward (tb_kclock_pair): dn, dt > 0 */
	uint64_t dn64 = k->pairs[hi].ns - k->pairs[lo].ns, dt64 = k->pairs[hi].tsc - k->pairs[lo].tsc;
	uint64_t p, t64;
	if (ns >= k->pairs[lo].ns && !__builtin_mul_overflow(ns - k->pairs[lo].ns, dt64, &p) &&
	    !__builtin_add_overflow(k->pairs[lo].tsc, p / dn64, &t64))
		return t64; /* the common case (an event of the last ~100 ms, after its segment's first pair):
			     * the same value in 64 bits, one division instead of __int128's */
	__int128 dn = (__int128)dn64, dt = (__int128)dt64;
	__int128 t = (__int128)k->pairs[lo].tsc + ((__int128)ns - (__int128)k->pairs[lo].ns) * dt / dn;
	return t < 0 ? 0 : (uint64_t)t;
}

int tb_kernel_enable(struct tb_kernel *k)
{
	for (unsigned i = 0; i < k->nfds; i++)
		if (ioctl(k->fds[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return tb_fail(-errno, "--kernel: PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
	k->enabled = 1;
	return 0;
}

void tb_kernel_wait(struct tb_kernel *k, int timeout_ms)
{
	struct pollfd p[256];
	struct kring *of[256];
	unsigned n = 0;
	for (unsigned i = 0; i < k->ncpu; i++)
		for (unsigned r = 0; r < k->cpus[i].nrings && n < 256; r++) {
			if (k->cpus[i].rings[r].hup)
				continue;
			of[n] = &k->cpus[i].rings[r];
			p[n].fd = k->cpus[i].rings[r].fd;
			p[n].events = POLLIN;
			n++;
		}
	int rc = n ? poll(p, n, timeout_ms) : 0;
	if (rc < 0 && errno != EINTR) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	/* A ring whose event was opened on a task says POLLHUP for ever once
	 * that task and everything that inherited the event have ended, even
	 * while other tasks' events still write into it (SET_OUTPUT): it is no
	 * longer polled (its records are still read by every pass) */
	for (unsigned i = 0; rc > 0 && i < n; i++)
		if (p[i].revents & (POLLHUP | POLLERR))
			of[i]->hup = 1;
	if (!n) {
		struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* ---- a pass ---- */

/* The event a sample's identifier names: by halves once open.c sorted them
 * (one event per tree task per CPU per tracepoint: thousands of ids for a
 * program of many threads, looked up for every record), else in order. */
static const struct kid *find_id(const struct tb_kernel *k, uint64_t id)
{
	if (!k->ids_sorted) {
		for (unsigned i = 0; i < k->nids; i++)
			if (k->ids[i].id == id)
				return &k->ids[i];
		return NULL;
	}
	unsigned lo = 0, hi = k->nids;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (k->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nids && k->ids[lo].id == id ? &k->ids[lo] : NULL;
}

#define TB_KLOST_MAX (1ull << 40) /* a PERF_RECORD_LOST saying more is not believed */

static void on_record(void *arg, uint32_t type, uint16_t misc, const uint8_t *rec, uint32_t len)
{
	(void)misc;
	struct tb_kernel *k = arg;
	struct kcpu *c = k->cur;
	if (type == PERF_RECORD_LOST) {
		uint64_t lost;
		if (tb_perf_lost_parse(rec, len, &lost) == 0 && lost <= TB_KLOST_MAX) {
			kc_lost(c, TB_LOSS_FULL, lost);
			if (k->cur_group == 1 && k->pertask)
				__atomic_store_n(&k->pt_lost, k->pt_lost + lost, __ATOMIC_RELAXED); /* no twin counts them */
			else
				c->reported_lost += lost;
			if (k->cur_group == 0)
				c->chain_next = -1; /* switches may be missing here: the chain restarts */
		}
		else
			kc_lost(c, TB_LOSS_INVALID, 1);
		return;
	}
	if (type != PERF_RECORD_SAMPLE)
		return; /* no event (throttling notices and the like) */
	if (!(k->cur_group == 1 && k->pertask)) { /* what the twins count */
		__atomic_store_n(&k->st_samples, k->st_samples + 1, __ATOMIC_RELAXED);
		c->samples++;
	}
	struct tb_perf_sample s;
	const struct kid *id;
	if (tb_perf_sample_parse(rec, len, &s) < 0 || !(id = find_id(k, s.id)) || k->cls_of[id->tp] < 0) {
		kc_lost(c, TB_LOSS_INVALID, 1);
		return;
	}
	if (tb_kpend_room(c) < 0) {
		kc_lost(c, TB_LOSS_INVALID, 1); /* cannot be kept */
		return;
	}
	if (!k->plan_state[id->tp]) /* resolved once: a record's decoding then looks no field up by name */
		k->plan_state[id->tp] = tb_ktp_plan(id->tp, &k->fmt[id->tp], &k->plan[id->tp]) < 0 ? -1 : 1;
	struct kpend *ev = &c->ev[c->n];
	int plen = k->plan_state[id->tp] < 0 ? -1
					    : tb_ktp_decode_plan(&k->plan[id->tp], s.raw, s.raw_len, s.pid, s.tid,
								 c->arena + c->arena_len, &ev->tid_a, &ev->tid_b);
	if (plen < 0) {
		kc_lost(c, TB_LOSS_INVALID, 1);
		return;
	}
	ev->ts = to_ticks(k, s.time);
	ev->off = (uint32_t)c->arena_len;
	ev->len = (uint16_t)plen;
	ev->tp = (uint8_t)id->tp;
	ev->cls = (uint8_t)k->cls_of[id->tp];
	ev->cur_pid = (int32_t)s.pid;
	ev->cur_tid = (int32_t)s.tid;
	c->arena_len += (size_t)plen;
	c->n++;
}

/* Every ring drained into its CPU's pending events (appended). */
static void drain_all(struct tb_kernel *k)
{
	for (unsigned i = 0; i < k->ncpu; i++) {
		struct kcpu *c = &k->cpus[i];
		struct tb_perf_ring_stats st = { 0 };
		k->cur = c;
		for (unsigned r = 0; r < c->nrings; r++) {
			k->cur_group = c->rings[r].group;
			tb_perf_ring_drain(&c->rings[r].ring, k->scratch, on_record, k, &st);
		}
		kc_lost(c, TB_LOSS_INVALID, st.invalid);
	}
}

/* Tracepoint hits the rings told of so far: samples and losses. */
static uint64_t seen(const struct tb_kernel *k)
{
	uint64_t n = k->st_samples;
	for (unsigned i = 0; i < k->ncpu; i++)
		n += k->cpus[i].reported_lost;
	return n;
}

int tb_kernel_pass(struct tb_kernel *k, int final)
{
	tb_kclock_pair(k);
	/* read before any ring's head: what was stamped well before it is in
	 * the rings by then (the live promise, below) */
	uint64_t t0 = now_ticks(k);
	/* The events the last pass held back (stamped after its cut) come first:
	 * they are older than anything drained now. */
	for (unsigned i = 0; i < k->ncpu; i++)
		tb_kpend_hold(&k->cpus[i]);
	drain_all(k);
	if (final && k->enabled) {
		/* Drained first, then disabled: a ring that was full gets room, so
		 * that the kernel can write the PERF_RECORD_LOST it keeps pending
		 * until a record fits (the twins count what it still holds back). */
		for (unsigned i = 0; i < k->nfds; i++)
			ioctl(k->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		k->enabled = 0;
		uint64_t g = 0;
		for (unsigned i = 0; i < k->ncpu; i++)
			k->cpus[i].counted = 0;
		for (unsigned i = 0; i < k->ncfds; i++) {
			uint64_t v;
			if (read(k->cfds[i], &v, sizeof v) == (ssize_t)sizeof v) {
				g += v;
				k->cpus[k->cfd_cpu[i]].counted += v;
			} else {
				k->count_failed = 1;
			}
		}
		__atomic_store_n(&k->generated, g, __ATOMIC_RELAXED);
		/* what the kernel charged as lost to each ring (PERF_FORMAT_LOST:
		 * {value, lost}), reported in a PERF_RECORD_LOST or still pending */
		for (unsigned i = 0; i < k->ncpu; i++)
			k->cpus[i].charged = 0;
		for (unsigned i = 0; !k->no_lost_format && i < k->nfds; i++) {
			uint64_t v[2];
			if (read(k->fds[i], v, sizeof v) != (ssize_t)sizeof v) {
				k->no_lost_format = 1;
				break;
			}
			k->cpus[k->fd_cpu[i]].charged += v[1];
		}
		drain_all(k);
	}
	/* The last records may still be on their way into a ring: a
	 * tracepoint handler interrupted by the disabling IPI publishes its
	 * record after the ioctl returned.  Wait for them (the count says
	 * how many), a bounded while. */
	for (int i = 0; final && !k->count_failed && i < 200 && seen(k) < k->generated; i++) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
		drain_all(k);
	}
	for (unsigned i = 0; i < k->ncpu; i++)
		(void)tb_kpend_sort(&k->cpus[i]); /* unsorted if out of memory: said there */
	/* What the kernel counted on a CPU and its ring neither delivered nor
	 * reported lost was lost to a full ring whose PERF_RECORD_LOST the
	 * kernel still held back when the events were disabled (it writes one
	 * only with the next record that fits: docs/KERNEL.md, "Losses"):
	 * counted under "full" so that every reader is told; the summary says
	 * how many. */
	for (unsigned i = 0; final && !k->count_failed && k->ncfds && i < k->ncpu; i++) {
		struct kcpu *c = &k->cpus[i];
		uint64_t got = c->samples + c->reported_lost;
		if (c->counted > got) {
			kc_lost(c, TB_LOSS_FULL, c->counted - got);
			__atomic_store_n(&k->silent, k->silent + (c->counted - got), __ATOMIC_RELAXED);
			/* of those, what the kernel did not charge to the full ring
			 * either: counted by the tracepoint, never written (measured on
			 * a PVM guest: hits raised in interrupt context, most while one
			 * CPU's idle task is current; docs/KERNEL.md, "Known gap") */
			uint64_t pending = c->charged > c->reported_lost ? c->charged - c->reported_lost : 0;
			uint64_t silent = c->counted - got;
			if (!k->no_lost_format && silent > pending)
				__atomic_store_n(&k->dropped, k->dropped + (silent - pending), __ATOMIC_RELAXED);
		}
	}
	uint64_t margin = k->clock_kind == TB_CLOCK_TSC
				  ? (uint64_t)((unsigned __int128)TB_KTHROUGH_MARGIN_NS * k->clock_freq / 1000000000u)
				  : TB_KTHROUGH_MARGIN_NS;
	uint64_t cut = t0 > margin ? t0 - margin : 0;
	/* Merge the CPUs in time order: the filter learns the tree in order.
	 * Only what was stamped before cut: every ring's head was read after t0,
	 * so each CPU's events stamped well before it are all here (the margin:
	 * a record is published within microseconds of its clock read unless
	 * its vCPU stops in between, the live promise's assumption below),
	 * while a later one may be here from one ring and not yet from another
	 * read earlier in the pass: a fork on CPU 0 published after CPU 0 was
	 * drained would come after its child's first switch on CPU 1, and the
	 * filter would leave that switch out (the child not known yet).  The
	 * rest waits for the next pass; the final pass takes everything. */
	for (;;) {
		struct kcpu *best = NULL;
		for (unsigned i = 0; i < k->ncpu; i++) {
			struct kcpu *c = &k->cpus[i];
			if (c->next < c->n && (!best || c->ev[c->next].ts < best->ev[best->next].ts))
				best = c;
		}
		if (!best || (!final && best->ev[best->next].ts >= cut))
			break;
		const struct kpend *ev = &best->ev[best->next++];
		const uint8_t *payload = best->arena + ev->off;
		if (ev->tp == TB_KTP_SWITCH) {
			/* a CPU's switches form a chain (each prev is the last next):
			 * a break right after a switch to the idle task is a switch out
			 * of idle that the kernel never gave (no tracer gets it there:
			 * docs/KERNEL.md, "Known gap"); counted before the filter */
			if (best->chain_next == 0 && ev->tid_a != 0)
				__atomic_store_n(&best->idle_gaps, best->idle_gaps + 1, __ATOMIC_RELAXED);
			best->chain_next = ev->tid_b;
		}
		int pt = k->pertask && ev->tp >= TB_KTP_SYS_ENTER; /* the tree's by construction (open.c) */
		if (pt && k->maybe_dups && best->pt_last.tp == ev->tp && best->pt_last.cur_tid == ev->cur_tid &&
		    best->pt_last.len == ev->len && ev->ts - best->pt_last.ts <= k->dup_ticks &&
		    !memcmp(best->pt_last.payload, payload, ev->len)) {
			/* the same hit twice: a task that inherited its events on some CPU
			 * was also opened on its own (open.c: a thread started while the
			 * tree's tasks were being opened, k->maybe_dups): two records back
			 * to back on the same CPU, same task, same payload, each stamped
			 * by its own event (ns apart).  A real second hit of the same
			 * call has its exit between them */
			__atomic_store_n(&k->pt_dups, k->pt_dups + 1, __ATOMIC_RELAXED);
			continue;
		}
		if (pt && k->maybe_dups) {
			best->pt_last.tp = ev->tp;
			best->pt_last.cur_tid = ev->cur_tid;
			best->pt_last.len = ev->len;
			best->pt_last.ts = ev->ts;
			memcpy(best->pt_last.payload, payload, ev->len);
		}
		/* the tree's calls but an embedded recorder's own (not its scheduling); else the filter */
		int take = pt ? !excluded(k, ev->cur_tid) : k->all || keep(k, ev);
		if (take) {
			tb_kw_append(k, best, ev->cls, ev->ts, payload, ev->len);
			if (pt)
				__atomic_store_n(&k->pt_delivered, k->pt_delivered + 1, __ATOMIC_RELAXED);
		} else {
			__atomic_store_n(&k->st_filtered, k->st_filtered + 1, __ATOMIC_RELAXED);
		}
	}
	uint64_t now = now_ticks(k);
	for (unsigned i = 0; i < k->ncpu; i++) {
		if (final)
			tb_kw_finish(k, &k->cpus[i], now);
		else
			tb_kw_flush(k, &k->cpus[i]);
	}
	if (t0 > margin && t0 - margin > k->floor) {
		k->floor = t0 - margin;
		/* release: the packets handed to the sink above happen before a
		 * reader's acquire load sees this promise (tb_kernel_through) */
		__atomic_store_n(&k->through, k->floor, __ATOMIC_RELEASE);
	}
	return k->err;
}

uint64_t tb_kernel_through(const struct tb_kernel *k)
{
	/* acquire: pairs with the release store at the end of tb_kernel_pass() */
	return __atomic_load_n(&k->through, __ATOMIC_ACQUIRE);
}

void tb_kernel_stats(struct tb_kernel *k, struct tb_kernel_stats *out)
{
	memset(out, 0, sizeof *out);
	out->delivered = __atomic_load_n(&k->st_delivered, __ATOMIC_RELAXED);
	out->filtered = __atomic_load_n(&k->st_filtered, __ATOMIC_RELAXED);
	out->packets = __atomic_load_n(&k->st_packets, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&k->st_bytes, __ATOMIC_RELAXED);
	out->samples = __atomic_load_n(&k->st_samples, __ATOMIC_RELAXED);
	out->pertask_delivered = __atomic_load_n(&k->pt_delivered, __ATOMIC_RELAXED);
	out->pertask_lost = __atomic_load_n(&k->pt_lost, __ATOMIC_RELAXED);
	out->pertask_dups = __atomic_load_n(&k->pt_dups, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < k->ncpu; i++) {
		/* written by the kernel thread; a torn read is impossible on x86_64 (aligned u64) */
		out->lost_full += __atomic_load_n(&k->cpus[i].lost[TB_LOSS_FULL], __ATOMIC_RELAXED);
		out->lost_invalid += __atomic_load_n(&k->cpus[i].lost[TB_LOSS_INVALID], __ATOMIC_RELAXED);
		out->lost_disk += __atomic_load_n(&k->cpus[i].lost[TB_LOSS_DISK], __ATOMIC_RELAXED);
	}
	out->generated = __atomic_load_n(&k->generated, __ATOMIC_RELAXED);
	out->silent = __atomic_load_n(&k->silent, __ATOMIC_RELAXED);
	out->dropped = __atomic_load_n(&k->dropped, __ATOMIC_RELAXED);
	out->dropped_known = !k->no_lost_format;
	for (unsigned i = 0; i < k->ncpu; i++) {
		/* a ring that lost records to a full ring breaks its chain anywhere:
		 * its breaks are not known to be idle exits (reported_lost and
		 * charged: the kernel thread's, relaxed like the rest) */
		if (__atomic_load_n(&k->cpus[i].reported_lost, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&k->cpus[i].charged, __ATOMIC_RELAXED))
			continue;
		out->idle_gaps += __atomic_load_n(&k->cpus[i].idle_gaps, __ATOMIC_RELAXED);
	}
	out->counted = !k->count_failed && k->ncfds && !k->enabled && out->generated;
	out->ncpus = k->ncpu;
	out->ntracepoints = k->nopened;
}

const struct tb_event_desc *tb_kernel_classes(const struct tb_kernel *k, uint32_t *n)
{
	*n = k->nclasses;
	return k->classes;
}

