/* SPDX-License-Identifier: MIT */
/*
 * labels.h - the labels of enum fields (format 3, tb_event_desc.labels).
 *
 * Two forms:
 *   - as written in TB_EVENT, C's enumerator-list syntax:
 *         (enum, state, (IDLE, RUNNING, BLOCKED = 5, GONE = -1))
 *     a value is an integer literal (decimal, 0x hex, 0 octal, 0b binary,
 *     optional sign and u/l suffixes); an omitted value is the previous
 *     one plus one (the first is 0), as in C;
 *   - as stored in the registry (normalised, what consumers read): for each
 *     enum field in field order one line "IDLE=0,RUNNING=1,BLOCKED=5\n",
 *     then a NUL.  Every reader of shared memory checks it with
 *     tb_labels_check() before it uses a byte of it.
 */
#ifndef TB_CORE_LABELS_H
#define TB_CORE_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"
#include "core/view.h"

/*
 * Appends the normalised line of one field's C-syntax list `list` ("IDLE,
 * RUNNING = 5", parentheses around it allowed) to out[*used..cap).
 * Return: 0; -EINVAL with a sentence in err[errcap] (what is wrong, at
 * which label); -ENOSPC when the text does not fit in cap bytes.
 */
TB_HIDDEN int tb_labels_from_c(const char *list, char *out, size_t cap, size_t *used, char *err, size_t errcap);

/* 1 when labels[0..cap) is a NUL-terminated normalised text of exactly
 * `nenum` valid lines (see above), else 0. */
TB_HIDDEN int tb_labels_check(const char *labels, size_t cap, unsigned nenum);

/* Number of TB_FT_ENUM fields of an entry. */
TB_HIDDEN unsigned tb_labels_nenum(const struct tb_event_desc *e);

/*
 * Iteration over a checked text: tb_labels_line() points at the line of the
 * k-th enum field (NULL past the last); tb_label_next() reads one label of
 * a line and advances *p: 1 with name (NUL-terminated) and value, 0 at the
 * end of the line.
 */
TB_HIDDEN const char *tb_labels_line(const char *labels, unsigned k);
TB_HIDDEN int tb_label_next(const char **p, char name[TB_LABEL_NAME_MAX], int32_t *value);

#endif
