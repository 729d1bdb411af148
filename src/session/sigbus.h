/* SPDX-License-Identifier: MIT */
/*
 * sigbus.h - surviving the truncation of a mapped session file.
 *
 * A process of the same uid can ftruncate() a session file at any moment;
 * every later access to a page of the mapping past the new end raises
 * SIGBUS (si_code BUS_ADRERR), which kills the process by default.  A
 * sealed memfd (F_SEAL_SHRINK) would forbid the truncation, but a memfd has
 * no name: producers attach to the session by path and `recover` opens it
 * after its creator died, and tmpfs files opened by name cannot be sealed.
 * So the consumer survives the truncation instead:
 *
 *   tb_session_guard() registers the mapping of a session and installs (once
 *   per process) a SIGBUS handler.  On a BUS_ADRERR fault inside a guarded
 *   mapping, the handler replaces the pages of the mapping past the file's
 *   new end (at least the faulting page) with anonymous zero pages
 *   (mmap MAP_FIXED, same protection), records the damage and returns: the
 *   faulting instruction runs again and reads zeros.  Every access to the
 *   mapping is covered, whatever the instruction (memcpy, atomics, the rseq
 *   critical sections of a flusher), without a recovery point per access.
 *   Any other SIGBUS goes to the handler that was installed before ours
 *   (SA_SIGINFO or not); if that was SIG_DFL/SIG_IGN, the default action is
 *   restored and the fault happens again, so the process dies as it would
 *   have without us.
 *
 *   The pages read as zeros afterwards are never mistaken for data: every
 *   consumer of a damaged session checks tb_session_damaged() after its
 *   copies and before it writes anything, and stops recording (see
 *   src/consumer/engine.c).
 *
 * Limits: 64 guarded mappings per process; a handler installed for SIGBUS
 * after ours and not chaining to it disables the guard; the handler uses
 * fstat() and mmap() (system calls without locks; mmap is not in POSIX's
 * list of async-signal-safe functions, but is a plain system call in glibc).
 */
#ifndef TB_SESSION_SIGBUS_H
#define TB_SESSION_SIGBUS_H

#include <stdint.h>

#include "core/view.h"

/*
 * Guards the mapping of `s` (idempotent).  Not async-signal-safe.
 * Return: 0; -ENOSPC (64 mappings already guarded), -errno of sigaction.
 * The session stays usable unguarded on error.
 */
TB_HIDDEN int tb_session_guard(struct tb_session *s);

/* Stops guarding (before the mapping goes away).  No-op when not guarded. */
TB_HIDDEN void tb_session_unguard(struct tb_session *s);

/*
 * 1 when a fault in the mapping of `s` was absorbed (the file was truncated
 * while mapped): pages past *size_now (the smallest file size the handler
 * saw, rounded up to a page) read as zeros.  0 otherwise.  Any thread.
 */
TB_HIDDEN int tb_session_damaged(const struct tb_session *s, uint64_t *size_now);

#endif
