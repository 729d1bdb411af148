/* SPDX-License-Identifier: MIT */
/*
 * cmd_snapshots.c - tracebuf snapshots DIR: the snapshots a flight recorder
 * (record --snapshot-dir DIR, docs/FLIGHT-RECORDER.md) wrote, oldest first,
 * with what triggered each (its trigger.json).  Also what `report` uses to
 * recognise a snapshot (shows its trigger.json, then reports its trace/)
 * and a snapshots directory (lists it); `dump` and `convert` take a snapshot
 * for its trace/ too (cli_flight_trace_dir).  trigger.json is read as hostile
 * text: only the fields named below, each bounded and escaped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The value of "key": in json (the first one), as text without quotes, into
 * out[cap]; "" when absent.  No escape is interpreted: the value is printed
 * through cli_tx. */
static const char *field(const char *json, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(json, pat);
	out[0] = 0;
	if (!p)
		return out;
	p += strlen(pat);
	size_t n = 0;
	if (*p == '"') {
		for (p++; *p && *p != '"' && *p != '\n' && n + 1 < cap; p++) {
			if (*p == '\\' && p[1])
				out[n++] = *p++;
			if (n + 1 < cap)
				out[n++] = *p;
		}
	} else {
		for (; *p && *p != ',' && *p != '\n' && *p != '}' && n + 1 < cap; p++)
			out[n++] = *p;
	}
	out[n] = 0;
	return out;
}

/* DIR/trigger.json (at most 16 KiB) into buf: 0, or -1 */
static int read_trigger(const char *dir, char *buf, size_t cap)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/trigger.json", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	struct stat sb;
	ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, buf, cap - 1) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

int cli_flight_kind(const char *dir)
{
	char path[PATH_MAX + 32], buf[16384];
	struct stat sb;
	snprintf(path, sizeof path, "%s/trace/metadata", dir);
	if (read_trigger(dir, buf, sizeof buf) == 0 && stat(path, &sb) == 0)
		return CLI_FLIGHT_SNAPSHOT;
	snprintf(path, sizeof path, "%s/metadata", dir);
	if (stat(path, &sb) == 0)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	int kind = 0;
	while (!kind && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		if (read_trigger(path, buf, sizeof buf) == 0)
			kind = CLI_FLIGHT_DIR;
	}
	closedir(d);
	return kind;
}

/* " (name)" of the crashing thread when trigger.json has its crash, escaped */
static void crash_thread(const char *json, char *out, size_t cap)
{
	char v[64], t[160];
	const char *c = strstr(json, "\"crash\": {");
	if (c && *cli_tx(t, sizeof t, field(c, "thread", v, sizeof v)) && strcmp(t, "null"))
		snprintf(out, cap, " (%.*s)", (int)(cap > 4 ? cap - 4 : 0), t);
}

/* The crash line of the listing: the crashing thread, how, where (its
 * innermost frame outside libc) */
static void crash_line(const char *json, FILE *out)
{
	char v[5][400], t[5][400], thr[200] = "";
	const char *c = strstr(json, "\"crash\": {");
	if (!c)
		return;
	static const char *keys[] = { "tid", "code_name", "addr", "symbol", "address" };
	for (int k = 0; k < 5; k++)
		cli_tx(t[k], sizeof t[k], field(k ? c : json, keys[k], v[k], sizeof v[k]));
	/* the innermost frame outside libc (abort(), raise(): the caller is the news) */
	for (const char *f = strstr(c, "\"symbol\": "); f && strstr(t[3], "(libc.so"); f = strstr(f + 1, "\"symbol\": ")) {
		cli_tx(t[3], sizeof t[3], field(f, "symbol", v[3], sizeof v[3]));
		if (!strcmp(t[3], "null"))
			break;
	}
	crash_thread(json, thr, sizeof thr);
	fprintf(out, "        crash: thread %s%s, %s%s%s, in %s\n", t[0], thr, *t[1] && strcmp(t[1], "null") ? t[1] : "",
		*t[2] && strcmp(t[2], "null") ? " at " : "", *t[2] && strcmp(t[2], "null") ? t[2] : "",
		*t[3] && strcmp(t[3], "null") ? t[3] : *t[4] ? t[4] : "?");
}

void cli_flight_show_trigger(const char *dir, FILE *out)
{
	char buf[16384], v[9][160], t[9][400];
	if (read_trigger(dir, buf, sizeof buf) < 0)
		return;
	static const char *keys[] = { "snapshot", "kind", "name", "time", "pid", "tid", "signal", "events", "after_ns" };
	for (int i = 0; i < 9; i++)
		cli_tx(t[i], sizeof t[i], field(buf, keys[i], v[i], sizeof v[i]));
	int sig = *t[6] && strcmp(t[6], t[2]);
	char thr[200] = "";
	crash_thread(buf, thr, sizeof thr);
	fprintf(out, "Snapshot %s: %s trigger '%s'%s%s at %s, pid %s, thread %s%s; %s event%s", t[0], t[1], t[2],
		sig ? " " : "", sig ? t[6] : "", t[3], *t[4] ? t[4] : "?",
		*t[5] && strcmp(t[5], "null") ? t[5] : "unknown", thr, *t[7] ? t[7] : "?", strcmp(t[7], "1") ? "s" : "");
	if (*t[8] && strcmp(t[8], "0"))
		fprintf(out, ", copied %.3f s after it (--after)", strtod(t[8], NULL) / 1e9);
	fputs(" (", out);
	cli_puttx(out, dir); /* the directory the user named: escaped */
	fputs("/trigger.json)\n\n", out);
}

int cli_flight_trigger(const char *dir, struct cli_trigger *t)
{
	char buf[16384], v[400];
	memset(t, 0, sizeof *t);
	if (read_trigger(dir, buf, sizeof buf) < 0)
		return -1;
	cli_tx(t->kind, sizeof t->kind, field(buf, "kind", v, sizeof v));
	cli_tx(t->name, sizeof t->name, field(buf, "name", v, sizeof v));
	char *end;
	field(buf, "tid", v, sizeof v);
	unsigned long tid = strtoul(v, &end, 10);
	t->has_tid = *v >= '0' && *v <= '9' && !*end && tid <= UINT32_MAX;
	t->tid = t->has_tid ? (uint32_t)tid : 0;
	field(buf, "clock_ticks", v, sizeof v);
	t->ticks = strtoull(v, &end, 10);
	t->has_ticks = *v >= '0' && *v <= '9' && !*end;
	field(buf, "realtime_ns", v, sizeof v);
	t->realtime_ns = strtoull(v, &end, 10);
	if (!(*v >= '0' && *v <= '9' && !*end) && !t->has_ticks)
		return -1; /* nowhere to put it */
	return 0;
}

const char *cli_flight_trace_dir(const char *cmd, const char *dir, char *buf, size_t cap)
{
	switch (cli_flight_kind(dir)) {
	case CLI_FLIGHT_SNAPSHOT:
		/* DIR/trace, not DIR//trace for a DIR given with its slash (titles, messages) */
		snprintf(buf, cap, "%.*s/trace", (int)(strlen(dir) - (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')), dir);
		return buf;
	case CLI_FLIGHT_DIR:
		cli_error(cmd, "%s is a flight recorder's snapshots directory, not a trace: `tracebuf snapshots %s` "
			       "lists them; give one, %s/NNNNNN-YYYYMMDDTHHMMSS.mmmZ", dir, dir, dir);
		return NULL;
	default:
		return dir;
	}
}

struct entry {
	char name[256];
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

int cli_flight_list(const char *dir, FILE *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return cli_error("snapshots", "%s: %s", dir, strerror(errno));
	struct entry *e = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || strlen(de->d_name) >= sizeof e->name)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			struct entry *ne = realloc(e, cap * sizeof *e);
			if (!ne) {
				free(e);
				closedir(d);
				return cli_error("snapshots", "out of memory");
			}
			e = ne;
		}
		snprintf(e[n++].name, sizeof e->name, "%s", de->d_name);
	}
	closedir(d);
	cli_sort(e, n, sizeof *e, cmp_entry);
	size_t shown = 0;
	char path[PATH_MAX + 300], buf[16384], v[8][160], t[8][400], nm[820];
	static const char *keys[] = { "snapshot", "time", "kind", "name", "signal", "pid", "tid", "events" };
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, e[i].name);
		if (read_trigger(path, buf, sizeof buf) < 0)
			continue;
		if (!shown++)
			fprintf(out, "%-6s  %-30s  %-7s  %-24s  %-8s  %-8s  %10s  %s\n", "#", "trigger time (UTC)", "kind",
				"trigger", "pid", "tid", "events", "directory");
		for (int k = 0; k < 8; k++)
			cli_tx(t[k], sizeof t[k], field(buf, keys[k], v[k], sizeof v[k]));
		snprintf(nm, sizeof nm, "%s%s%s", t[3], *t[4] && strcmp(t[3], t[4]) ? " " : "",
			 *t[4] && strcmp(t[3], t[4]) ? t[4] : "");
		fprintf(out, "%-6s  %-30s  %-7s  %-24s  %-8s  %-8s  %10s  %s\n", t[0], t[1], t[2], nm, t[5],
			*t[6] && strcmp(t[6], "null") ? t[6] : "?", t[7], cli_tx(v[0], sizeof v[0], e[i].name));
		crash_line(buf, out);
	}
	free(e);
	if (!shown)
		cli_msg(out, "no snapshot in %s (a flight recorder writes them: tracebuf record --mode overwrite "
			     "--snapshot-dir %s -- CMD)", dir, dir);
	return TB_EXIT_OK;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracebuf snapshots DIR\n"
		   "\n"
		   "Lists the snapshots a flight recorder wrote into DIR (tracebuf record --mode overwrite\n"
		   "--snapshot-dir DIR -- CMD), oldest first: number, when and what triggered it, the\n"
		   "process and thread, the events it holds.  'tracebuf report DIR/NNNNNN-...' shows one.\n"
		   "Exit: 0, 1 failure, 2 usage.\n");
}

int cmd_snapshots(int argc, char **argv)
{
	static const struct option lo[] = { { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
	int c;
	optind = 1;
	while ((c = cli_getopt("snapshots", argc, argv, "h", lo)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return TB_EXIT_OK;
		}
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	return cli_flight_list(argv[optind], stdout);
}
