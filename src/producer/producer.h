/* SPDX-License-Identifier: MIT */
/*
 * producer.h - the producer layer (library private): event classes bound to
 * the producer session (producer.c, behind the public event.h/producer.h)
 * and thread names; the crash handler (crash.c).  Records are written by the ring's append (ring/append.h).
 */
#ifndef TB_PRODUCER_PRODUCER_H
#define TB_PRODUCER_PRODUCER_H

#include <stdint.h>

#include "core/view.h"
#include "platform/thread.h"
#include "ring/append.h"

/* Writes this thread's name to channel ch of s, before the record that is
 * being appended, unless it is the program's name.  Marks it done first (the
 * nested append does not come back here).  Async-signal-safe. */
TB_HIDDEN void tb_thread_name_first(struct tb_session *s, unsigned ch);
/* A rename (pthread_setname_np, prctl): writes the name of `tid` (0: every
 * thread of the process now called `name`, looked up in /proc) to every
 * channel with attribution. */
TB_HIDDEN void tb_thread_renamed(uint32_t tid, const char *name);

/* record --pid (producer/attach.h): tb_emit() found no producer session
 * while a class was enabled; attaches when a recorder asked.  As
 * async-signal-safe as the attach can be (producer.c). */
TB_HIDDEN void tb_attach_poll(void);

/* The fatal-signal handler (crash.c): installed for the crash signals whose
 * disposition is SIG_DFL, unless TRACEBUF_CRASH_HANDLER=0 was in the
 * environment at start.  Called by the attach of a recording
 * ($TRACEBUF_SESSION: record; the attach of record --pid) with the function
 * that gives the producer session (a pointer: crash.c does not call
 * producer.c, which calls it).  Async-signal-safe (sigaction only). */
TB_HIDDEN void tb_crash_install(struct tb_session *(*session)(void));
/* Its classes (TB_CRASH_EVENT, TB_CRASH_MAP_EVENT): producer.c points their
 * masks at tb_disabled_mask and registers them at load. */
TB_HIDDEN extern struct tb_event_class tb_crash_cls, tb_crash_map_cls;

#endif
