/* SPDX-License-Identifier: MIT */
/*
 * labels.c - enum labels: from TB_EVENT's C syntax to the registry's text,
 * and the checks every reader of that text makes (core/labels.h).
 */
#include "core/labels.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int id_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int id_char(char c)
{
	return id_start(c) || (c >= '0' && c <= '9');
}

static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int digit_of(char c, unsigned base)
{
	int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
	return d < (int)base ? d : -1;
}

/* An integer literal as C writes one (sign, base prefix, u/l suffixes), in int32. */
static int parse_value(const char **pp, int32_t *out)
{
	const char *p = *pp;
	int neg = 0;
	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
		while (space(*p))
			p++;
	}
	unsigned base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		base = 2, p += 2;
	else if (p[0] == '0')
		base = 8;
	if (digit_of(*p, base) < 0)
		return -1;
	uint64_t v = 0;
	for (int d; (d = digit_of(*p, base)) >= 0; p++) {
		v = v * base + (unsigned)d;
		if (v > 0x80000000ull)
			return -1;
	}
	while (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L')
		p++;
	if ((*p && !space(*p) && *p != ',' && *p != ')') || (!neg && v > INT32_MAX))
		return -1; /* 1.5, 1 << 3, FOO: not a literal this parser takes */
	*out = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
	*pp = p;
	return 0;
}

/* what may follow a value: spaces, then ',' or the end of the list */
static int after_value(const char *p, int paren)
{
	while (space(*p))
		p++;
	return *p == ',' || (paren ? *p == ')' : !*p);
}

int tb_labels_from_c(const char *list, char *out, size_t cap, size_t *used, char *err, size_t errcap)
{
	const char *p = list;
	while (space(*p))
		p++;
	int paren = *p == '(';
	if (paren)
		p++;
	size_t u = *used;
	int64_t next = 0;
	unsigned n = 0;
	size_t line = u;
	for (;;) {
		while (space(*p))
			p++;
		if ((paren && *p == ')') || (!paren && !*p))
			break;
		char name[TB_LABEL_NAME_MAX];
		size_t l = 0;
		if (!id_start(*p)) {
			snprintf(err, errcap, "enum labels \"%s\": label %u is not a C identifier", list, n + 1);
			return -EINVAL;
		}
		while (id_char(*p)) {
			if (l + 1 >= sizeof name) {
				snprintf(err, errcap, "enum labels \"%s\": label %u is longer than %u bytes", list, n + 1,
					 TB_LABEL_NAME_MAX - 1);
				return -EINVAL;
			}
			name[l++] = *p++;
		}
		name[l] = 0;
		while (space(*p))
			p++;
		int32_t v;
		if (*p == '=') {
			p++;
			while (space(*p))
				p++;
			if (parse_value(&p, &v) < 0 || !after_value(p, paren)) {
				snprintf(err, errcap, "enum labels \"%s\": the value of %s is not an int32 integer literal",
					 list, name);
				return -EINVAL;
			}
			while (space(*p))
				p++;
		} else {
			if (next > INT32_MAX) {
				snprintf(err, errcap, "enum labels \"%s\": the value of %s is past INT32_MAX", list, name);
				return -EINVAL;
			}
			v = (int32_t)next;
		}
		next = (int64_t)v + 1;
		/* unique in its field */
		for (const char *q = out + line; q < out + u;) {
			size_t ql = strcspn(q, "=");
			if (ql == l && !memcmp(q, name, l)) {
				snprintf(err, errcap, "enum labels \"%s\": %s appears twice", list, name);
				return -EINVAL;
			}
			q += strcspn(q, ",") + 1;
		}
		char item[TB_LABEL_NAME_MAX + 16];
		int il = snprintf(item, sizeof item, "%s=%d,", name, (int)v);
		if (u + (size_t)il + 1 > cap) {
			snprintf(err, errcap, "enum labels of this class take more than %zu bytes", cap - 1);
			return -ENOSPC;
		}
		memcpy(out + u, item, (size_t)il);
		u += (size_t)il;
		n++;
		if (*p == ',') {
			p++;
			continue;
		}
		while (space(*p))
			p++;
		if ((paren && *p != ')') || (!paren && *p)) {
			snprintf(err, errcap, "enum labels \"%s\": expected ',' after %s", list, name);
			return -EINVAL;
		}
	}
	if (paren && p[1]) {
		const char *t = p + 1;
		while (space(*t))
			t++;
		if (*t) {
			snprintf(err, errcap, "enum labels \"%s\": text after ')'", list);
			return -EINVAL;
		}
	}
	if (!n) {
		snprintf(err, errcap, "enum labels \"%s\": no label (an enum field needs at least one)", list);
		return -EINVAL;
	}
	out[u - 1] = '\n'; /* the last ',' */
	out[u] = 0;
	*used = u;
	return 0;
}

unsigned tb_labels_nenum(const struct tb_event_desc *e)
{
	unsigned n = 0;
	for (uint32_t f = 0; f < e->nfields && f < TB_MAX_FIELDS; f++)
		n += e->fields[f].type == TB_FT_ENUM;
	return n;
}

int tb_label_next(const char **pp, char name[TB_LABEL_NAME_MAX], int32_t *value)
{
	const char *p = *pp;
	if (!*p || *p == '\n')
		return 0;
	size_t l = 0;
	while (*p != '=')
		name[l++] = *p++;
	name[l] = 0;
	p++;
	int neg = *p == '-';
	p += neg;
	int64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	*value = (int32_t)(neg ? -v : v);
	if (*p == ',')
		p++;
	*pp = p;
	return 1;
}

const char *tb_labels_line(const char *labels, unsigned k)
{
	const char *p = labels;
	for (unsigned i = 0; i < k; i++) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	return *p ? p : NULL;
}

/* One line "a=1,b=2\n" at *pp: valid labels, unique, int32 decimal values. */
static int check_line(const char **pp, const char *end)
{
	const char *p = *pp, *line = p;
	unsigned n = 0;
	for (;;) {
		const char *nm = p;
		if (p >= end || !id_start(*p))
			return 0;
		while (p < end && id_char(*p))
			p++;
		size_t l = (size_t)(p - nm);
		if (l >= TB_LABEL_NAME_MAX || p >= end || *p != '=')
			return 0;
		for (const char *q = line; q < nm;) { /* unique in its line */
			size_t ql = strcspn(q, "=");
			if (ql == l && !memcmp(q, nm, l))
				return 0;
			q += strcspn(q, ",") + 1;
		}
		p++;
		int neg = p < end && *p == '-';
		p += neg;
		if (p >= end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9'))
			return 0;
		int64_t v = 0;
		while (p < end && *p >= '0' && *p <= '9') {
			v = v * 10 + (*p++ - '0');
			if (v > 0x80000000ll)
				return 0;
		}
		if ((neg && v == 0) || (!neg && v > INT32_MAX))
			return 0;
		n++;
		if (p >= end)
			return 0;
		if (*p == '\n') {
			*pp = p + 1;
			return n > 0;
		}
		if (*p != ',')
			return 0;
		p++;
	}
}

int tb_labels_check(const char *labels, size_t cap, unsigned nenum)
{
	const char *end = memchr(labels, 0, cap);
	if (!end)
		return 0;
	const char *p = labels;
	for (unsigned k = 0; k < nenum; k++)
		if (!check_line(&p, end))
			return 0;
	return p == end;
}
