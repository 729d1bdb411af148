/* SPDX-License-Identifier: MIT */
/* cli_map.c - open-addressing hash maps (a, b) -> u64 and string -> u64, and dense tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_map.h"

struct cli_map_ent {
	uint64_t a, b, v;
	int used;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static int grow(struct cli_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64;
	struct cli_map_ent *e = calloc(cap, sizeof *e);
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->e[i].used)
			continue;
		size_t k = mix(m->e[i].a, m->e[i].b) & (cap - 1);
		while (e[k].used)
			k = (k + 1) & (cap - 1);
		e[k] = m->e[i];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	return 0;
}

uint64_t *cli_map_get(struct cli_map *m, uint64_t a, uint64_t b, int create)
{
	/* load factor <= 3/4: a probe always ends at an unused slot */
	if (create && (m->n + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	if (!m->cap)
		return NULL;
	size_t k = mix(a, b) & (m->cap - 1);
	while (m->e[k].used) {
		if (m->e[k].a == a && m->e[k].b == b)
			return &m->e[k].v;
		k = (k + 1) & (m->cap - 1);
	}
	if (!create)
		return NULL;
	m->e[k] = (struct cli_map_ent){ .a = a, .b = b, .used = 1 };
	m->n++;
	return &m->e[k].v;
}

void cli_map_free(struct cli_map *m)
{
	free(m->e);
	memset(m, 0, sizeof *m);
}

void *cli_table_get(struct cli_table *t, uint64_t a, uint64_t b, int *isnew)
{
	if (isnew)
		*isnew = 0;
	uint64_t *ix = cli_map_get(&t->idx, a, b, 1);
	if (!ix)
		return NULL;
	if (*ix)
		return cli_table_at(t, *ix - 1);
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		void *v = realloc(t->v, cap * t->esize);
		if (!v)
			return NULL; /* *ix stays 0: created again next time */
		t->v = v;
		t->cap = cap;
	}
	void *rec = cli_table_at(t, t->n);
	memset(rec, 0, t->esize);
	*ix = ++t->n;
	if (isnew)
		*isnew = 1;
	return rec;
}

void cli_table_free(struct cli_table *t)
{
	cli_map_free(&t->idx);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

/* ---------------------------------------------------------------------- */
/* string map: NUL-terminated key -> u64                                  */

struct cli_smap_ent {
	char *k; /* NULL: empty */
	uint64_t hash, v;
};

static uint64_t smap_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int smap_grow(struct cli_smap *h)
{
	size_t cap = h->cap ? 2 * h->cap : 64;
	struct cli_smap_ent *e = calloc(cap, sizeof *e);
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++) {
		if (!h->e[i].k)
			continue;
		size_t k = h->e[i].hash & (cap - 1);
		while (e[k].k)
			k = (k + 1) & (cap - 1);
		e[k] = h->e[i];
	}
	free(h->e);
	h->e = e;
	h->cap = cap;
	return 0;
}

uint64_t *cli_smap_get(struct cli_smap *h, const char *key, int create)
{
	if (create && (h->n + 1) * 4 > h->cap * 3 && smap_grow(h))
		return NULL;
	if (!h->cap)
		return NULL;
	uint64_t hs = smap_hash(key);
	size_t k = hs & (h->cap - 1);
	while (h->e[k].k) {
		if (h->e[k].hash == hs && !strcmp(h->e[k].k, key))
			return &h->e[k].v;
		k = (k + 1) & (h->cap - 1);
	}
	if (!create)
		return NULL;
	char *d = strdup(key);
	if (!d)
		return NULL;
	h->e[k].k = d;
	h->e[k].hash = hs;
	h->e[k].v = 0;
	h->n++;
	return &h->e[k].v;
}

size_t cli_smap_items(const struct cli_smap *h, const char ***keys, uint64_t **vals)
{
	*keys = NULL;
	*vals = NULL;
	if (!h->n)
		return 0;
	const char **k = malloc(h->n * sizeof *k);
	uint64_t *v = malloc(h->n * sizeof *v);
	if (!k || !v) {
		free(k);
		free(v);
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->e[i].k) {
			k[n] = h->e[i].k;
			v[n++] = h->e[i].v;
		}
	}
	*keys = k;
	*vals = v;
	return n;
}

void cli_smap_free(struct cli_smap *h)
{
	for (size_t i = 0; i < h->cap; i++)
		free(h->e[i].k);
	free(h->e);
	memset(h, 0, sizeof *h);
}
