/* SPDX-License-Identifier: MIT */
/*
 * classes.c - the read side of a session's event-class registry: what a
 * consumer, a snapshot or the ring's own validation needs, lock-free.
 * Entries are published valid-last (session/registry.c writes them under
 * the registry lock); every entry read here is checked, never trusted.
 */
#define _GNU_SOURCE
#include "core/classes.h"

#include "core/labels.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

uint32_t tb_registry_count(const struct tb_session *s)
{
	uint32_t n = __atomic_load_n(&s->reg->count, __ATOMIC_ACQUIRE);
	return n > s->reg_capacity ? s->reg_capacity : n;
}

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       c == '-';
}

int tb_valid_event_name(const char *name, size_t cap)
{
	size_t n = 0;
	int colons = 0, before = 0, after = 0;
	for (; n < cap && name[n]; n++) {
		if (name[n] == ':') {
			colons++;
			continue;
		}
		if (!name_char(name[n]))
			return 0;
		if (colons)
			after++;
		else
			before++;
	}
	return n < cap && colons == 1 && before && after;
}

int tb_valid_field_name(const char *f, size_t cap)
{
	size_t n = 0;
	for (; n < cap && f[n]; n++) {
		char c = f[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (n && c >= '0' && c <= '9')))
			return 0;
	}
	return n > 0 && n < cap;
}

int tb_pattern_match(const char *patterns, const char *name)
{
	char buf[TB_PATTERN_MAX];
	snprintf(buf, sizeof buf, "%s", patterns);
	int match = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		size_t l = strlen(tok);
		while (l && tok[l - 1] == ' ')
			tok[--l] = 0;
		if (*tok == '!') {
			if (!fnmatch(tok + 1, name, 0))
				return 0;
		} else if (*tok && !fnmatch(tok, name, 0)) {
			match = 1;
		}
	}
	return match;
}

int tb_registry_find(struct tb_session *s, const char *name)
{
	uint32_t n = tb_registry_count(s);
	for (uint32_t i = 0; i < n; i++) {
		const struct tb_event_desc *e = &s->reg->events[i];
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == 1 && !strncmp(e->name, name, TB_NAME_MAX))
			return (int)i;
	}
	return tb_fail(-ENOENT, "no event class named '%s' in this session", name);
}

uint32_t tb_registry_copy(struct tb_session *s, struct tb_event_desc *out, uint32_t cap)
{
	return tb_registry_copy_from(s, out, 0, cap);
}

void tb_class_read(struct tb_session *s, uint32_t i, struct tb_event_desc *e)
{
	/* acquire pairs with the release store of state (valid-last) */
	uint32_t state = __atomic_load_n(&s->reg->events[i].state, __ATOMIC_ACQUIRE);
	memcpy(e, &s->reg->events[i], sizeof *e);
	int ok = state == 1 && tb_valid_event_name(e->name, sizeof e->name) && e->nfields <= TB_MAX_FIELDS &&
		 e->id == i;
	for (uint32_t f = 0; ok && f < e->nfields; f++) {
		const struct tb_field_desc *fd = &e->fields[f];
		ok = tb_valid_field_name(fd->name, sizeof fd->name) && fd->type >= TB_FT_U8 && fd->type < TB_FT_MAX_ &&
		     (tb_ft_variable(fd->type) ? fd->max_len >= 1 && fd->max_len <= TB_PAYLOAD_MAX_LEN : fd->max_len == 0);
	}
	/* format 3: the enum fields' labels, one checked line per enum field */
	ok = ok && tb_labels_check(e->labels, sizeof e->labels, tb_labels_nenum(e));
	if (ok) {
		e->state = 1; /* the value loaded above, not a later one memcpy may have seen */
	} else {
		memset(e, 0, sizeof *e);
		snprintf(e->name, sizeof e->name, "tracebuf:invalid_%u", i);
		e->id = i;
		e->state = 0;
	}
}

uint32_t tb_registry_copy_from(struct tb_session *s, struct tb_event_desc *out, uint32_t from, uint32_t cap)
{
	uint32_t n = tb_registry_count(s);
	if (n > cap)
		n = cap;
	for (uint32_t i = from; i < n; i++)
		tb_class_read(s, i, &out[i]);
	return n;
}
