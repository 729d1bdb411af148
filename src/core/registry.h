/* SPDX-License-Identifier: MIT */
/*
 * registry.h - event classes shared by every process of a session, and the
 * process table.  Off the fast path: a robust process-shared mutex guards
 * both (a process that dies holding it leaves it recoverable).
 */
#ifndef TB_CORE_REGISTRY_H
#define TB_CORE_REGISTRY_H

#include <stdint.h>

#include "format.h"
#include "session_impl.h"

TB_HIDDEN int tb_registry_init(struct tb_registry *reg);
/* Registers the built-in classes (tracebuf:thread = id 0). */
TB_HIDDEN int tb_registry_builtin(struct tb_session *s);

/*
 * Registers (or finds) class `name` with the given fields.  Same name with
 * other fields is an error.  Return: id >= 0; -EEXIST (same name, other
 * fields), -ENOSPC (registry full), -EINVAL (bad name/field).
 */
TB_HIDDEN int tb_registry_register(struct tb_session *s, const char *name, uint32_t nfields,
				   const struct tb_field_desc *fields);

/* Looks a class up by name: id or -ENOENT. */
TB_HIDDEN int tb_registry_find(struct tb_session *s, const char *name);

/* Number of valid entries, bounded by the capacity. */
TB_HIDDEN uint32_t tb_registry_count(const struct tb_session *s);

/* 1 when `name` matches the comma-separated glob list (a '!' entry excludes). */
TB_HIDDEN int tb_pattern_match(const char *patterns, const char *name);

/* Adds this process to the process table (idempotent). */
TB_HIDDEN int tb_proc_register(struct tb_session *s);

/* 1 when `name` is a valid event class name: [A-Za-z0-9_.-]+ ':' [A-Za-z0-9_.-]+ */
TB_HIDDEN int tb_valid_event_name(const char *name, size_t cap);

/*
 * Copies the registry to `out` (capacity `cap`) for a consumer, validating
 * every entry; an invalid entry keeps its id but gets zero fields and the
 * name "tracebuf:invalid_<id>" (it can never be decoded, so records using
 * it end their packet's walk).  Returns the number of entries.
 */
TB_HIDDEN uint32_t tb_registry_copy(struct tb_session *s, struct tb_event_desc *out, uint32_t cap);
/* The same for entries from..count-1 only (out[from..]); returns the count
 * (below `from` when the count went down: then nothing is copied). */
TB_HIDDEN uint32_t tb_registry_copy_from(struct tb_session *s, struct tb_event_desc *out, uint32_t from, uint32_t cap);

#endif
