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

/*
 * An ELF file is untrusted input (a download, a damaged file): it is read
 * with pread, never mapped, and only what is needed: the header, the section
 * headers (at most 65535 x 64 bytes), the section names and the
 * tracebuf_events section, each checked inside the file's size and bounded:
 * a file that declares more than these limits (a sparse file declaring a
 * 4 GiB section costs no disk) is refused with a message, never read.
 */
#define ELF_NAMES_MAX (16u << 20)   /* section names: real files have a few KiB */
#define ELF_EVENTS_MAX (16u << 20)  /* tracebuf_events: ~100 bytes a class and translation unit */
#define ELF_ENTRIES_MAX (1u << 20)  /* entries in it (the same class once per translation unit) */
#define ELF_PAD_MAX 4096u           /* NUL padding between two entries (the compiler aligns them) */

/* reads size bytes at off into a new buffer (one NUL after them); NULL on a short read */
static char *read_at(int fd, uint64_t off, uint64_t size)
{
	char *b = malloc((size_t)size + 1);
	size_t got = 0;
	while (b && got < size) {
		ssize_t k = pread(fd, b + got, (size_t)size - got, (off_t)(off + got));
		if (k <= 0) {
			free(b);
			return NULL;
		}
		got += (size_t)k;
	}
	if (b)
		b[size] = 0;
	return b;
}

/* the entries of a tracebuf_events section (NAME NUL "{FIELDS}" NUL, with NUL padding between) */
static const char *parse_events(const char *p, const char *end, const char ***names, size_t *n)
{
	size_t cap = 0;
	while (p < end) {
		if (!*p) {
			const char *q = p;
			while (q < end && !*q && (size_t)(q - p) <= ELF_PAD_MAX)
				q++;
			if (q < end && (size_t)(q - p) > ELF_PAD_MAX)
				return "its tracebuf_events section is damaged (more than 4096 NUL bytes between two entries)";
			p = q;
			continue;
		}
		const char *nm = p, *z = memchr(p, 0, (size_t)(end - p));
		const char *f = z ? z + 1 : end, *fz = f < end ? memchr(f, 0, (size_t)(end - f)) : NULL;
		if (!z || !fz || *f != '{' || fz[-1] != '}')
			return "its tracebuf_events section is damaged (an entry is not NAME, {FIELDS})";
		if (*n == ELF_ENTRIES_MAX)
			return "its tracebuf_events section holds more than 1048576 entries (damaged or hostile)";
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			const char **nn = realloc(*names, cap * sizeof *nn);
			if (!nn)
				return "out of memory";
			*names = nn;
		}
		(*names)[(*n)++] = nm;
		p = fz + 1;
	}
	return NULL;
}

/* 1: f holds an ELF file (the tool's answer for it is given); 0: not ELF */
static int list_binary(const char *path, int fields, int *rc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	unsigned char magic[SELFMAG];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, magic, SELFMAG, 0) != SELFMAG ||
	    memcmp(magic, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return 0;
	}
	uint64_t size = (uint64_t)st.st_size;
	*rc = TB_EXIT_FAIL;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
		close(fd);
		cli_error("list", "%s: an ELF file too short or unreadable", path);
		return 1;
	}
	const char *bad = NULL;
	char *shdrs = NULL, *strs = NULL, *sec = NULL;
	Elf64_Shdr sstr;
	const char **names = NULL;
	size_t n = 0, found = 0, nsec = 0;
	uint64_t total = 0; /* bytes of tracebuf_events read */
	char *secs[64]; /* the tracebuf_events sections read (a linked file has one) */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		bad = "not a 64-bit little-endian ELF file";
	else if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
		 (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		bad = "its section headers are outside the file";
	else if (!(shdrs = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))))
		bad = "its section headers cannot be read";
	if (!bad) {
		memcpy(&sstr, shdrs + (size_t)eh.e_shstrndx * sizeof sstr, sizeof sstr);
		if (sstr.sh_type == SHT_NOBITS || sstr.sh_offset > size || sstr.sh_size > size - sstr.sh_offset)
			bad = "its section names are outside the file";
		else if (sstr.sh_size > ELF_NAMES_MAX)
			bad = "its section names take more than 16 MiB (damaged or hostile)";
		else if (!(strs = read_at(fd, sstr.sh_offset, sstr.sh_size)))
			bad = "its section names cannot be read";
	}
	static const char want[] = "tracebuf_events";
	for (unsigned i = 0; !bad && i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, shdrs + (size_t)i * sizeof sh, sizeof sh);
		if (sh.sh_name >= sstr.sh_size || sstr.sh_size - sh.sh_name < sizeof want ||
		    memcmp(strs + sh.sh_name, want, sizeof want) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
			bad = "its tracebuf_events section is outside the file";
			break;
		}
		if (sh.sh_size > ELF_EVENTS_MAX - total) {
			bad = "its tracebuf_events sections declare more than 16 MiB (damaged or hostile)";
			break;
		}
		if (nsec == sizeof secs / sizeof secs[0]) {
			bad = "it has more than 64 tracebuf_events sections (damaged or hostile)";
			break;
		}
		if (!(sec = read_at(fd, sh.sh_offset, sh.sh_size))) {
			bad = "its tracebuf_events section cannot be read";
			break;
		}
		secs[nsec++] = sec;
		total += sh.sh_size;
		found = 1;
		bad = parse_events(sec, sec + sh.sh_size, &names, &n);
	}
	close(fd);
	if (bad) {
		cli_error("list", "%s: %s", path, bad);
	} else if (!found) {
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
	free(names);
	for (size_t i = 0; i < nsec; i++)
		free(secs[i]);
	free(strs);
	free(shdrs);
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
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
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
	while ((c = getopt_long(argc, argv, "+c:h", lo, NULL)) != -1) {
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
		printf("channel %s: events '%s'\n", cname, pat);
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
