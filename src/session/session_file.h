/* SPDX-License-Identifier: MIT */
/*
 * session_file.h - what create.c and session.c (attach) share: the
 * directory/name split of a session path and the mapping of its file.
 */
#ifndef TB_SESSION_SESSION_FILE_H
#define TB_SESSION_SESSION_FILE_H

#include <stdint.h>

#include "core/view.h"

/* Splits `path` into its directory (into dir[PATH_MAX]) and its last component. */
TB_HIDDEN const char *tb_split_path(const char *path, char *dir);
/* mmap()s size bytes of fd, shared, read-only or read-write: 0 and *out, or -errno (never 0 on failure). */
TB_HIDDEN int tb_map_file(int fd, uint64_t size, int readonly, uint8_t **out);

#endif
