/* SPDX-License-Identifier: MIT */
/*
 * cli_map.h - the commands' hash tables: a map (a, b) -> u64 (symbol caches,
 * indexes), and a dense table of records found by (a, b) (threads by
 * (pid, tid), processes by pid) that keeps its records in first-seen order,
 * so that output iterating it is deterministic; and a map string -> u64
 * (stack keys, labels, module names).  Every hash table of the commands.
 */
#ifndef TB_CLI_MAP_H
#define TB_CLI_MAP_H

#include <stddef.h>
#include <stdint.h>

struct cli_map_ent;
struct cli_map {
	struct cli_map_ent *e;
	size_t cap, n;
};

/* The value of key (a, b), created as 0 when `create`; NULL when absent or
 * out of memory.  The pointer is valid until the next create. */
uint64_t *cli_map_get(struct cli_map *m, uint64_t a, uint64_t b, int create);
void cli_map_free(struct cli_map *m);

struct cli_table {
	struct cli_map idx; /* (a, b) -> index + 1 */
	void *v;            /* n records of esize bytes, first-seen order */
	size_t esize, n, cap;
};
#define CLI_TABLE_INIT(type) { .esize = sizeof(type) }

/* The record of (a, b), created zeroed (and *isnew set) when absent; NULL
 * when out of memory.  Valid until the next creation. */
void *cli_table_get(struct cli_table *t, uint64_t a, uint64_t b, int *isnew);
/* Record i (0 <= i < t->n). */
static inline void *cli_table_at(const struct cli_table *t, size_t i)
{
	return (char *)t->v + i * t->esize;
}
void cli_table_free(struct cli_table *t);

/* A map NUL-terminated string -> u64 (keys copied); zero-initialise it. */
struct cli_smap_ent;
struct cli_smap {
	struct cli_smap_ent *e;
	size_t cap, n;
};
uint64_t *cli_smap_get(struct cli_smap *h, const char *key, int create);
/* every key and its value, in no order; returns the count (0 and NULL when empty or no memory) */
size_t cli_smap_items(const struct cli_smap *h, const char ***keys, uint64_t **vals);
void cli_smap_free(struct cli_smap *h);

#endif
