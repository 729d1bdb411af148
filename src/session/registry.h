/* SPDX-License-Identifier: MIT */
/*
 * registry.h - event classes shared by every process of a session, and the
 * process table.  Off the fast path: a robust process-shared mutex guards
 * both (a process that dies holding it leaves it recoverable).  This is the
 * write side; reading the classes (lock-free) is core/classes.h.
 */
#ifndef TB_SESSION_REGISTRY_H
#define TB_SESSION_REGISTRY_H

#include <stdint.h>

#include "core/classes.h"
#include "core/format.h"
#include "core/view.h"

TB_HIDDEN int tb_registry_init(struct tb_registry *reg);
/* Registers the built-in classes (tracebuf:thread = id 0). */
TB_HIDDEN int tb_registry_builtin(struct tb_session *s);

/*
 * Registers (or finds) class `name` with the given fields and, when it has
 * enum fields, their labels in the registry's text form (core/labels.h; NULL
 * or "" when there is none).  Same name with other fields or labels is an
 * error.  Return: id >= 0; -EEXIST (same name, other fields), -ENOSPC
 * (registry full), -EINVAL (bad name/field/labels).
 */
TB_HIDDEN int tb_registry_register(struct tb_session *s, const char *name, uint32_t nfields,
				   const struct tb_field_desc *fields, const char *labels);

/* Count of live processes in the session's process table other than `self`
 * (0: every one counts); a zombie is not alive. */
TB_HIDDEN unsigned tb_session_live_procs(struct tb_session *s, uint32_t self);
/* Count of processes that ever attached (the process table's valid entries, alive or not)
 * other than `self`; `names` (may be NULL) gets their distinct comm names, ", "-separated,
 * cut to `cap` bytes.  What `record` says when a recording holds nothing. */
TB_HIDDEN unsigned tb_session_attached_procs(struct tb_session *s, uint32_t self, char *names, size_t cap);
/* Adds this process to the process table (idempotent). */
TB_HIDDEN int tb_proc_register(struct tb_session *s);

#endif
