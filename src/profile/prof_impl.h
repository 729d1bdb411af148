/* SPDX-License-Identifier: MIT */
/*
 * prof_impl.h - internal interfaces of the sampler (libtracebuf-profile.so):
 * the snapshot of /proc/self/maps (prof_maps.c; the reader is
 * src/platform/maps.c), the two unwinders
 * (prof_unwind.c), the pace rule of a re-armed perf event (pure, inline);
 * profile.c holds the rest (timers, threads, the signal handler, fork,
 * dlopen, counters) and the event classes.
 * See docs/PROFILE.md.
 */
#ifndef TB_PROF_IMPL_H
#define TB_PROF_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "platform/maps.h"

#define PROF_HIDDEN __attribute__((visibility("hidden")))
#define PROF_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* the pace of a re-armed perf event (profile.c, pace())               */
/* ------------------------------------------------------------------ */

/* A period doubles when one sample took PROF_PACE_STORM periods of the
 * thread's time or more (up to PROF_PACE_MAX_NS), and halves back after
 * calm_need samples in a row that took under PROF_PACE_CALM periods; each
 * doubling doubles calm_need (PROF_PACE_CALM_FIRST .. PROF_PACE_CALM_MAX). */
#define PROF_PACE_STORM 8u
#define PROF_PACE_CALM 4u
#define PROF_PACE_MAX_NS 1000000ull
#define PROF_PACE_CALM_FIRST 16u
#define PROF_PACE_CALM_MAX 4096u

struct prof_pace {
	uint32_t mult;      /* the period in asked periods (a power of two); 0 stands for 1 */
	uint32_t calm;      /* samples in a row that took under PROF_PACE_CALM periods */
	uint32_t calm_need; /* how many allow the period to halve; 0 before the first doubling */
};

/*
 * prof_pace_next - the multiple of the asked period (asked_ns) the event
 * should use after a sample that took `took` ns of the thread's CPU time
 * (the event's count since the previous sample), given the state p, which
 * it updates except p->mult: the caller stores the result there once the
 * kernel took the new period.  Pure (a unit test drives it).
 */
static inline uint32_t prof_pace_next(struct prof_pace *p, uint64_t took, uint64_t asked_ns)
{
	uint32_t mult = p->mult ? p->mult : 1;
	uint64_t period = asked_ns * mult;
	if (took >= PROF_PACE_STORM * period) {
		p->calm = 0;
		if (2 * period > PROF_PACE_MAX_NS)
			return mult;
		p->calm_need = !p->calm_need ? PROF_PACE_CALM_FIRST
			       : p->calm_need < PROF_PACE_CALM_MAX ? p->calm_need * 2
								   : PROF_PACE_CALM_MAX;
		return mult * 2;
	}
	if (took < PROF_PACE_CALM * period && mult > 1) {
		if (++p->calm < p->calm_need)
			return mult;
		p->calm = 0;
		return mult / 2;
	}
	p->calm = 0;
	return mult;
}

/* ------------------------------------------------------------------ */
/* /proc/self/maps                                                     */
/* ------------------------------------------------------------------ */

/* One executable mapping with a path, as parsed from a line of maps: the
 * reader is src/platform/maps.c, shared with libtracebuf's crash handler. */
#define prof_maps_line tb_maps_line
typedef tb_maps_cb prof_maps_cb;
#define PROF_PATH_MAX TB_MAPS_PATH_MAX
/* prof_maps_read - tb_maps_read() (platform/maps.h): async-signal-safe. */
#define prof_maps_read tb_maps_read

/*
 * prof_maps_scan - reads /proc/self/maps (prof_maps_read()) and calls emit
 * for every executable mapping that is not in the snapshot of the last scan
 * (for every one if `all`); this scan's mappings become the snapshot (when
 * the read succeeded).  A mapping is the same when its start, end, offset
 * and path are.  Async-signal-safe; not thread-safe: the caller serializes
 * scans (profile.c, scan_maps()).
 * Return: the number of mappings emitted, or -errno of the read.
 */
PROF_HIDDEN int prof_maps_scan(int all, prof_maps_cb emit, void *arg);

/* ------------------------------------------------------------------ */
/* unwinders (called from the SIGPROF handler: async-signal-safe)      */
/* ------------------------------------------------------------------ */

/*
 * prof_walk_fp - frame-pointer walk of the context `uc` of the
 * interrupted code.  stack[0] = the PC; then return addresses, innermost
 * first, at most `depth` entries in all.  [lo, hi) are the bounds of the
 * thread's stack (hi == 0: unknown).  Every load is from an 8-byte aligned
 * address inside [rsp, hi), each frame strictly above the previous one.
 * Adds TB_PROF_F_* to *flags.  Returns the number of entries written.
 */
PROF_HIDDEN unsigned prof_walk_fp(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uint64_t *stack,
				  unsigned depth, uint32_t *flags);

/*
 * prof_fp_init - finds libtracebuf's executable segments (dl_iterate_phdr,
 * an object named libtracebuf.so*), where prof_walk_fp knows the frame
 * layout at a function's first instructions and at its ret.  Call before
 * the handler is installed (not async-signal-safe).
 */
PROF_HIDDEN void prof_fp_init(void);

/* 1 when this build has the libunwind unwinder (libunwind-dev was found). */
PROF_HIDDEN int prof_unwind_built(void);
/*
 * prof_unwind_load - dlopen libunwind (RTLD_LOCAL, so that its _Unwind_*
 * and backtrace symbols do not interpose the program's), resolve the
 * functions, set per-thread caching and run one unwind to initialise
 * libunwind outside of signal context.  Not async-signal-safe.
 * Return: 0, or -1 with a message in err.
 */
PROF_HIDDEN int prof_unwind_load(char *err, size_t len);
/* libunwind walk of `uc` (same contract as prof_walk_fp; sets TB_PROF_F_LIBUNWIND). */
PROF_HIDDEN unsigned prof_walk_libunwind(ucontext_t *uc, uint64_t *stack, unsigned depth, uint32_t *flags);
/* unw_flush_cache() after a dlclose (not from a signal handler). */
PROF_HIDDEN void prof_unwind_flush(void);

#endif
