/* SPDX-License-Identifier: MIT */
/*
 * prof_maps.c - the snapshot of the executable mappings already written
 * (prof_maps_scan()), so that a dlopen writes only the new ones.  The lines
 * come from the async-signal-safe reader of /proc/self/maps that
 * libtracebuf's crash handler shares (src/platform/maps.c, compiled into
 * this library too: src/profile/CMakeLists.txt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "profile/prof_impl.h"

/* ------------------------------------------------------------------ */
/* the snapshot                                                        */
/* ------------------------------------------------------------------ */

/* The executable mappings already written (the last snapshot).  Bounded: a
 * process with more than SNAP_MAX executable mappings gets the excess
 * written again at each scan. */
#define SNAP_MAX 1024
struct snap_ent {
	uint64_t start, end, pgoff, hash;
};
static struct snap_ent snap[2][SNAP_MAX];
static unsigned snap_n[2], snap_cur;

struct scan {
	const struct snap_ent *old;
	unsigned nold;
	struct snap_ent *cur;
	unsigned ncur;
	int all;
	int written;
	prof_maps_cb emit;
	void *arg;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static void scan_cb(void *arg, const struct prof_maps_line *m)
{
	struct scan *sc = arg;
	struct snap_ent e = { m->start, m->end, m->pgoff, fnv1a(m->path) };
	int known = 0;
	for (unsigned i = 0; !sc->all && i < sc->nold && !known; i++)
		known = !memcmp(&sc->old[i], &e, sizeof e);
	if (!known) {
		sc->emit(sc->arg, m);
		sc->written++;
	}
	if (sc->ncur < SNAP_MAX)
		sc->cur[sc->ncur++] = e;
}

int prof_maps_scan(int all, prof_maps_cb emit, void *arg)
{
	unsigned next = snap_cur ^ 1;
	struct scan sc = {
		.old = snap[snap_cur], .nold = snap_n[snap_cur], .cur = snap[next], .all = all, .emit = emit, .arg = arg,
	};
	int rc = prof_maps_read(scan_cb, &sc);
	if (rc != 0)
		return rc;
	snap_n[next] = sc.ncur;
	snap_cur = next;
	return sc.written;
}
