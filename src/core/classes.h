/* SPDX-License-Identifier: MIT */
/*
 * classes.h - reading a session's event classes (library private, lock-free):
 * the registry's entries are written under its lock by session/registry.c
 * and published valid-last; everything here validates what it reads.
 */
#ifndef TB_CORE_CLASSES_H
#define TB_CORE_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"
#include "core/view.h"

/* Number of valid entries, bounded by the capacity. */
TB_HIDDEN uint32_t tb_registry_count(const struct tb_session *s);
/* Looks a class up by name: id or -ENOENT. */
TB_HIDDEN int tb_registry_find(struct tb_session *s, const char *name);
/* 1 when `name` is a valid event class name: [A-Za-z0-9_.-]+ ':' [A-Za-z0-9_.-]+ */
TB_HIDDEN int tb_valid_event_name(const char *name, size_t cap);
/* 1 when `f` is a valid field name: a C identifier, NUL-terminated within cap. */
TB_HIDDEN int tb_valid_field_name(const char *f, size_t cap);
/* 1 when `name` matches the comma-separated glob list (a '!' entry excludes). */
TB_HIDDEN int tb_pattern_match(const char *patterns, const char *name);
/*
 * Copies the registry to `out` (capacity `cap`) for a consumer, validating
 * every entry; an invalid entry keeps its id but gets zero fields and the
 * name "tracebuf:invalid_<id>" (it can never be decoded, so records using
 * it end their packet's walk).  Returns the number of entries.
 */
TB_HIDDEN uint32_t tb_registry_copy(struct tb_session *s, struct tb_event_desc *out, uint32_t cap);
/* Copies and checks entry i (< the count) into *e, as tb_registry_copy does. */
TB_HIDDEN void tb_class_read(struct tb_session *s, uint32_t i, struct tb_event_desc *e);
/* The same for entries from..count-1 only (out[from..]); returns the count
 * (below `from` when the count went down: then nothing is copied). */
TB_HIDDEN uint32_t tb_registry_copy_from(struct tb_session *s, struct tb_event_desc *out, uint32_t from, uint32_t cap);

#endif
