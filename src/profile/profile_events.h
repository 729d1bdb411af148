/* SPDX-License-Identifier: MIT */
/*
 * profile_events.h - the event classes of `tracebuf profile`: the contract
 * between the sampler (src/profile/, preloaded into the profiled command)
 * and the tools that read its traces (report --profile, convert --to
 * folded / chrome).  Change a class only together with both sides and
 * docs/PROFILE.md.
 *
 * Every class lives in provider "profile".  The thread of a sample is the
 * writer of the record (the reader's tb_rd_pid / tb_rd_tid, from the
 * tracebuf:thread attribution records), so it is not repeated here.
 *
 *   profile:sample   one per timer expiry that the handler saw
 *     stack   (u64s, <= TB_PROF_MAX_DEPTH)  stack[0] = the interrupted PC;
 *                                           stack[i>0] = return addresses,
 *                                           innermost first
 *     flags   (u32)  TB_PROF_F_*            how the chain ended
 *     overrun (u32)  timer_getoverrun(): expiries the kernel merged into
 *                    this one (the sample stands for 1 + overrun periods)
 *
 *   profile:map      one executable file mapping of the process
 *                    (a line of /proc/PID/maps with 'x' in its permissions)
 *     start, end (u64)  [start, end) virtual addresses
 *     pgoff      (u64)  file offset mapped at start
 *     gen        (u32)  snapshot number: 0 at start, +1 after each dlopen
 *                       (and in a forked child); a later map with the same
 *                       start replaces an earlier one
 *     path       (strn 4095)  the file, as /proc shows it ("[vdso]" too)
 *
 *   profile:info     once per process, before its first map: rate, unwinder, program,
 *                    and how samples are taken (source: "perf cpu-clock" or "cpu-time timer")
 *     hz        (u32)  sampling frequency asked for
 *     unwinder  (str)  "fp" or "libunwind"
 *     exe       (strn 4095)  /proc/self/exe at start
 *
 *   profile:counters once per process at exit (and in a forked child's
 *                    parent's view: counters are per process, reset in the
 *                    child); oprofile's four counters plus two
 *     received   (u64)  handler invocations for the profile timer
 *     lost       (u64)  samples whose write failed (ring full: discard mode)
 *     invalid_pc (u64)  samples with PC 0 (the tools also count samples whose
 *                       PC is in no recorded executable mapping)
 *     aborted    (u64)  samples whose chain was cut short (TB_PROF_F_ABORTED)
 *     truncated  (u64)  samples whose chain hit the depth bound
 *     overruns   (u64)  sum of the overrun fields (expiries merged by the kernel)
 */
#ifndef TB_PROFILE_EVENTS_H
#define TB_PROFILE_EVENTS_H

#include <tracebuf/event.h>

#define TB_PROF_MAX_DEPTH 127

/* flags of profile:sample */
#define TB_PROF_F_ABORTED 0x1u   /* a frame failed a check (outside the stack, not increasing, misaligned) */
#define TB_PROF_F_TRUNCATED 0x2u /* the chain hit TB_PROF_MAX_DEPTH (or the --depth bound) */
#define TB_PROF_F_NOSTACK 0x4u   /* the thread's stack bounds are unknown: PC only */
#define TB_PROF_F_LIBUNWIND 0x8u /* unwound by libunwind (else frame pointers) */

#ifdef TB_PROFILE_DEFINE_EVENTS
/* Only the sampler defines the classes (TB_EVENT makes a constructor). */
TB_EVENT(profile, sample, (u64s, stack, TB_PROF_MAX_DEPTH), (u32, flags), (u32, overrun))
TB_EVENT(profile, map, (u64, start), (u64, end), (u64, pgoff), (u32, gen), (strn, path, 4095))
TB_EVENT(profile, info, (u32, hz), (str, unwinder), (strn, exe, 4095), (str, source))
TB_EVENT(profile, counters, (u64, received), (u64, lost), (u64, invalid_pc), (u64, aborted),
	 (u64, truncated), (u64, overruns))
#endif

#endif
