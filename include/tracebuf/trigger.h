/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/trigger.h - ask the flight recorder to keep what the rings hold.
 *
 *   if (latency > slo)
 *           tb_trigger("slow_request");
 *
 * A trigger is a request, written into the session's shared memory, that the
 * recorder (`tracebuf record --mode overwrite --snapshot-dir DIR`) turns into
 * a snapshot: a complete CTF trace of what the rings hold, under DIR, with a
 * trigger.json saying what fired, when and from which process and thread
 * (docs/FLIGHT-RECORDER.md).  The recorder applies its own limits (a
 * post-trigger window, a minimum interval per trigger name, a count and a
 * size bound); without a flight recorder attached, a trigger is only
 * counted in the session (`tracebuf record` says at its end how many it
 * ignored, and the last one's name).
 */
#ifndef TRACEBUF_TRIGGER_H
#define TRACEBUF_TRIGGER_H

#include <tracebuf/session.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest trigger name kept, in bytes (a longer one is cut there). */
#define TB_TRIGGER_NAME_MAX 63

/*
 * tb_trigger - ask for a snapshot of this process's producer session
 * (tb_producer_session()), naming why: `name` (printable ASCII, cut at
 * TB_TRIGGER_NAME_MAX bytes; any other byte is written as '?'; NULL or ""
 * is "trigger").
 * Async-signal-safe (a signal or crash handler may call it), callable from
 * any thread, concurrently.  Costs one atomic add, a few stores and one
 * futex wake system call; nothing is allocated, no lock is taken.  The
 * session keeps the last 8 requests: a recorder that sees more at once
 * (a burst faster than it wakes up) counts the older ones as coalesced.
 * Return: 0, -ENOENT (this process has no producer session: not traced).
 */
TB_API int tb_trigger(const char *name);

/*
 * tb_session_trigger - the same for session `s` (a tool or supervisor
 * that attached to it).  Same guarantees.
 * Return: 0, -EINVAL (s NULL), -EROFS (s attached read-only).
 */
TB_API int tb_session_trigger(struct tb_session *s, const char *name);

#ifdef __cplusplus
}
#endif

#endif
