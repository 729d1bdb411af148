/* SPDX-License-Identifier: MIT */
/*
 * cmd_events.c - the event classes of a trace or of a live session:
 *   tracebuf list [--fields] TARGET
 *   tracebuf enable  [--channel NAME] SESSION PATTERN...
 *   tracebuf disable [--channel NAME] SESSION PATTERN...
 * enable/disable edit the channel's event patterns (tb_session_set_events():
 * globs, '!' excludes and wins); every process of the session sees the
 * change at its next event.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/reader.h>
#include <tracebuf/session.h>

#include "cli.h"
#include "core/labels.h"

static const char *type_name(unsigned t)
{
	static const char *const n[] = {
		[TB_RD_U8] = "u8",   [TB_RD_U16] = "u16", [TB_RD_U32] = "u32", [TB_RD_U64] = "u64",
		[TB_RD_I8] = "i8",   [TB_RD_I16] = "i16", [TB_RD_I32] = "i32", [TB_RD_I64] = "i64",
		[TB_RD_F64] = "f64", [TB_RD_STRING] = "str", [TB_RD_BYTES] = "bytes", [TB_RD_U64SEQ] = "u64seq",
		[TB_RD_BOOL] = "bool", [TB_RD_F32] = "f32", [TB_RD_ENUM] = "enum",
	};
	return t < sizeof n / sizeof n[0] && n[t] ? n[t] : "?";
}

/* A name from shared memory, a trace or an ELF file: by the one text rule (cli_puttx). */
static void put_name(const char *name)
{
	cli_puttx(stdout, name);
}

static int list_session(const char *path, int fields)
{
	struct tb_session *s;
	if (tb_session_attach(path, TB_ATTACH_READONLY, &s) < 0)
		return cli_error("list", "cannot attach to %s: %s", path, tb_errmsg());
	unsigned nch = tb_session_nchannels(s);
	for (unsigned c = 0; c < nch; c++) {
		char pat[256];
		if (tb_session_get_events(s, c, pat, sizeof pat) < 0)
			snprintf(pat, sizeof pat, "?");
		printf("# channel %s: events '", tb_session_channel_name(s, c));
		put_name(pat);
		printf("'\n");
	}
	unsigned n = tb_session_nclasses(s);
	for (unsigned i = 0; i < n; i++) {
		struct tb_class_info k = { .size = sizeof k };
		if (tb_session_class(s, i, &k) < 0)
			break; /* cannot happen below the count */
		put_name(k.name);
		if (i == 0 && !strcmp(k.name, "tracebuf:thread")) {
			printf("  (tracebuf's own: which thread wrote what follows)");
		} else {
			printf("  ");
			int any = 0;
			for (unsigned c = 0; c < nch; c++)
				if (k.channels & (1u << c)) {
					printf("%s%s", any ? "," : "enabled in ", tb_session_channel_name(s, c));
					any = 1;
				}
			if (!any)
				printf("disabled");
		}
		if (fields && k.valid) {
			printf("  {");
			const char *lab = k.labels; /* one checked line per enum field */
			for (unsigned f = 0; f < k.nfields; f++) {
				printf("%s", f ? ", " : " ");
				put_name(k.fields[f].name);
				printf(": %s", type_name(k.fields[f].type));
				if (k.fields[f].type == TB_RD_ENUM && *lab) {
					size_t l = strcspn(lab, "\n");
					char *one = strndup(lab, l);
					printf(" (");
					put_name(one ? one : "?"); /* IDLE=0,RUNNING=1 */
					printf(")");
					free(one);
					lab += l + (lab[l] == '\n');
				}
			}
			printf(" }");
		}
		putchar('\n');
	}
	tb_session_close(s);
	return TB_EXIT_OK;
}

static int list_trace(const char *dir)
{
	struct tb_reader *r;
	if (tb_reader_open(dir, NULL, &r) < 0)
		return cli_error("list", "cannot read the trace %s: %s", dir, tb_errmsg());
	for (uint32_t id = 0; id < tb_reader_nclass_ids(r); id++) {
		const char *name = tb_reader_class_name(r, id);
		if (name) {
			put_name(name);
			putchar('\n');
		}
	}
	tb_reader_close(r);
	return TB_EXIT_OK;
}

/* ---- a binary: the classes its TB_EVENTs declare (event.h TB__EVENT_NOTE) ---- */

/*
 * Checks the enum label lists of one declared field list ("{(u32, id),
 * (enum, st, (A, B = 5))}") with the producer's own parser: a list it
 * refuses would be recorded as a plain i32.  Prints each problem; returns
 * how many.
 */
static int check_enum_labels(const char *cls, const char *f)
{
	int bad = 0;
	for (const char *p = f; *p;) {
		if (*p != '(') {
			p++;
			continue;
		}
		/* one field tuple: its end, and its first two top-level commas */
		const char *q = p + 1, *c1 = NULL, *c2 = NULL;
		int depth = 0;
		for (; *q && (depth || *q != ')'); q++) {
			depth += *q == '(' ? 1 : *q == ')' ? -1 : 0;
			if (!depth && *q == ',') {
				if (!c1)
					c1 = q;
				else if (!c2)
					c2 = q;
			}
		}
		const char *t = p + 1;
		while (*t == ' ')
			t++;
		if (c1 && c2 && !strncmp(t, "enum", 4) && (t[4] == ',' || t[4] == ' ')) {
			char list[TB_LABELS_MAX], out[TB_LABELS_MAX], err[512];
			const char *l0 = c2 + 1;
			while (*l0 == ' ')
				l0++;
			snprintf(list, sizeof list, "%.*s", (int)(q - l0), l0);
			size_t used = 0;
			if (tb_labels_from_c(list, out, sizeof out, &used, err, sizeof err) < 0) {
				cli_error("list", "class %s field%.*s: %s; the program records it as a plain i32", cls,
					  (int)(c2 - c1 - 1), c1 + 1, err);
				bad++;
			}
		}
		p = *q ? q + 1 : q;
	}
	return bad;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1: f holds an ELF file (the tool's answer for it is given); 0: not ELF */
static int list_binary(const char *path, int fields, int *rc)
{
	struct cli_elf_events ev;
	const char *bad;
	if (!cli_elf_events_read(path, &ev, &bad))
		return 0;
	*rc = TB_EXIT_FAIL;
	const char **names = ev.names;
	size_t n = ev.n;
	if (bad) {
		cli_error("list", "%s: %s", path, bad);
	} else if (!ev.found) {
		cli_error("list", "%s declares no event classes (no tracebuf_events section: it uses no TB_EVENT, "
			  "or its classes are in a library it loads: list that file)", path);
	} else {
		/* a class used in several translation units has an entry in each:
		 * sorted by "NAME\0{...}" (names and fields compared), shown once */
		int nbad = 0;
		cli_sort(names, n, sizeof *names, cmp_str);
		for (size_t i = 0; i < n; i++) {
			const char *f = names[i] + strlen(names[i]) + 1;
			if (i && !strcmp(names[i], names[i - 1]) && !strcmp(f, names[i - 1] + strlen(names[i - 1]) + 1))
				continue;
			nbad += check_enum_labels(names[i], f);
			put_name(names[i]);
			if (fields) {
				printf("  ");
				put_name(f);
			}
			putchar('\n');
		}
		*rc = nbad ? TB_EXIT_FAIL : TB_EXIT_OK;
	}
	cli_elf_events_free(&ev);
	return 1;
}

static void list_usage(FILE *f)
{
	fprintf(f, "usage: tracebuf list [--fields] TARGET\n\n"
		   "The event classes of TARGET: a trace directory (the classes its metadata declares), or a\n"
		   "live session (a session file or name, as for snapshot: the classes registered so far,\n"
		   "in which channels each is enabled, and with --fields their fields), or a program or\n"
		   "library (an ELF file: the classes its TB_EVENTs declare, before it runs; --fields:\n"
		   "their fields as declared).\n");
}

int cmd_list(int argc, char **argv)
{
	int fields = 0;
	static const struct option lo[] = { { "fields", 0, 0, 'f' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 } };
	int c;
	optind = 1;
	while ((c = cli_getopt("list", argc, argv, "h", lo)) != -1) {
		if (c == 'f')
			fields = 1;
		else if (c == 'h') {
			list_usage(stdout);
			return TB_EXIT_OK;
		} else {
			list_usage(stderr);
			return TB_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		list_usage(stderr);
		return TB_EXIT_USAGE;
	}
	const char *target = argv[optind];
	struct stat st;
	if (stat(target, &st) == 0 && S_ISDIR(st.st_mode))
		return list_trace(target);
	int rc;
	if (list_binary(target, fields, &rc))
		return rc;
	char path[4096];
	cli_session_path(target, path, sizeof path);
	return list_session(path, fields);
}

/* A channel's event patterns, NUL included, at most (tb_session_set_events). */
#define PATTERN_MAX 256u

/* Removes every token equal to `tok` from the comma-separated list `pat`. */
static void drop_token(char *pat, const char *tok)
{
	char out[PATTERN_MAX] = "", *save = NULL;
	size_t used = 0;
	for (char *t = strtok_r(pat, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, tok) || !*t)
			continue;
		used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", used ? "," : "", t);
		if (used >= sizeof out)
			used = sizeof out - 1;
	}
	memcpy(pat, out, sizeof out);
}

static int toggle(int argc, char **argv, int enable)
{
	const char *name = enable ? "enable" : "disable";
	const char *chan = NULL;
	static const struct option lo[] = { { "channel", 1, 0, 'c' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 } };
	int c;
	optind = 1;
	while ((c = cli_getopt(name, argc, argv, "+c:h", lo)) != -1) {
		if (c == 'c')
			chan = optarg;
		else {
			fprintf(c == 'h' ? stdout : stderr,
				"usage: tracebuf %s [--channel NAME] SESSION PATTERN...\n\n"
				"%s the event classes matching the glob PATTERNs in a live session (every\n"
				"channel, or NAME), for every process of it, from their next event on.  A\n"
				"class excluded by a '!' pattern stays off until that pattern is enabled again;\n"
				"`tracebuf list SESSION` shows the patterns and what they select.\n",
				name, enable ? "Records" : "Stops recording");
			return c == 'h' ? TB_EXIT_OK : TB_EXIT_USAGE;
		}
	}
	if (argc - optind < 2)
		return cli_error(name, "want SESSION PATTERN... (tracebuf %s --help)", name), TB_EXIT_USAGE;
	char path[4096];
	cli_session_path(argv[optind], path, sizeof path);
	struct tb_session *s;
	if (tb_session_attach(path, 0, &s) < 0)
		return cli_error(name, "cannot attach to %s: %s", path, tb_errmsg());
	int found = 0, rc = TB_EXIT_OK;
	for (unsigned ch = 0; ch < tb_session_nchannels(s); ch++) {
		const char *cname = tb_session_channel_name(s, ch);
		if (chan && strcmp(chan, cname))
			continue;
		found = 1;
		char pat[PATTERN_MAX];
		if (tb_session_get_events(s, ch, pat, sizeof pat) < 0) {
			rc = cli_error(name, "channel %s: %s", cname, tb_errmsg());
			goto out;
		}
		for (int a = optind + 1; a < argc; a++) {
			const char *p = argv[a];
			if (!*p || strchr(p, ',') || *p == '!') {
				rc = cli_error(name, "pattern '%s': one glob, without ',' or a leading '!'", p);
				goto out;
			}
			char neg[PATTERN_MAX + 1];
			snprintf(neg, sizeof neg, "!%s", p);
			drop_token(pat, enable ? neg : p);
			size_t l = strlen(pat);
			if (l + strlen(neg) + 2 > sizeof pat) {
				rc = cli_error(name, "channel %s: the patterns would exceed %u bytes", cname,
					       PATTERN_MAX - 1);
				goto out;
			}
			const char *add = enable ? p : neg;
			size_t al = strlen(add); /* l + 1 + al + 1 <= sizeof pat: checked above */
			if (l)
				pat[l++] = ',';
			memcpy(pat + l, add, al + 1);
		}
		if (tb_session_set_events(s, ch, pat) < 0) {
			rc = cli_error(name, "channel %s: %s", cname, tb_errmsg());
			goto out;
		}
		cli_msg(stdout, "channel %s: events '%s'", cname, pat); /* the user's patterns: escaped */
	}
	if (!found)
		rc = cli_error(name, "%s has no channel named %s", path, chan);
out:
	tb_session_close(s);
	return rc;
}

int cmd_enable(int argc, char **argv)
{
	return toggle(argc, argv, 1);
}

int cmd_disable(int argc, char **argv)
{
	return toggle(argc, argv, 0);
}
