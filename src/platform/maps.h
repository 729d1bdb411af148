/* SPDX-License-Identifier: MIT */
/*
 * maps.h - an async-signal-safe reader of /proc/self/maps (maps.c), shared by
 * the two places that must read it where only async-signal-safe functions may
 * be called: the sampler of `tracebuf profile` (src/profile/prof_maps.c: in a
 * pthread_atfork child handler, after a dlopen) and the fatal-signal handler
 * of libtracebuf (src/producer/crash.c: the mappings of a crashing stack).
 * Standard headers only: the sampler library compiles maps.c into itself
 * (src/profile/CMakeLists.txt), hidden there as here.
 */
#ifndef TB_PLATFORM_MAPS_H
#define TB_PLATFORM_MAPS_H

#include <stdint.h>

/* One executable mapping with a path, as parsed from a line of maps. */
struct tb_maps_line {
	uint64_t start, end, pgoff;
	const char *path; /* NUL-terminated, valid during the callback only */
};

typedef void (*tb_maps_cb)(void *arg, const struct tb_maps_line *m);

/* A path longer than this is cut there. */
#define TB_MAPS_PATH_MAX 4095
/* The stack the reader uses (its two buffers), for a caller on a small stack. */
#define TB_MAPS_STACK_USE (4096 + TB_MAPS_PATH_MAX + 128 + 512)

/*
 * tb_maps_read - calls cb for every line of /proc/self/maps with 'x' in its
 * permissions and a non-empty path, in address order.  Async-signal-safe:
 * open/read/close and buffers on the stack (~8.5 KiB, TB_MAPS_STACK_USE), no
 * stdio, no malloc, no locale.  errno is not preserved.
 * Return: 0, or -errno of open/read.
 */
__attribute__((visibility("hidden"))) int tb_maps_read(tb_maps_cb cb, void *arg);

#endif
