/* SPDX-License-Identifier: MIT */
/* tracebuf.c - subcommand dispatch and the one usage table; helpers of cli.h. */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "cli.h"

/* Every subcommand, once: its function and its line of `tracebuf --help`. */
static const struct {
	const char *name;
	tb_cmd_fn fn;
	const char *summary;
} cmds[] = {
	{ "record", cmd_record, "record [opts] -o DIR -- CMD [ARGS]   trace CMD into a CTF trace" },
	{ "snapshot", cmd_snapshot, "snapshot SESSION -o DIR            copy a flight-recorder ring now" },
	{ "snapshots", cmd_snapshots, "snapshots DIR                      a flight recorder's snapshots and their triggers" },
	{ "recover", cmd_recover, "recover SESSION_FILE -o DIR        trace from a crashed app's buffers" },
	{ "dump", cmd_dump, "dump [opts] DIR                    one line per event" },
	{ "report", cmd_report,
	  "report [--profile] [opts] DIR      summary: rates, losses, busiest second; hot functions;\n"
	  "         report --html -o FILE DIR   one self-contained page: timeline, rates, tables, flame graph" },
	{ "convert", cmd_convert, "convert DIR --to FORMAT -o FILE     chrome (JSON), perfetto (protobuf), folded, speedscope" },
	{ "profile", cmd_profile, "profile [-F HZ] -o DIR -- CMD      sampling profiler" },
	{ "stat", cmd_stat, "stat SESSION                       counters of a live session" },
	{ "list", cmd_list, "list [--fields] DIR|SESSION        event classes of a trace or a live session" },
	{ "enable", cmd_enable, "enable SESSION PATTERN...          record these event classes from now on" },
	{ "disable", cmd_disable, "disable SESSION PATTERN...         stop recording these event classes" },
};

static tb_cmd_fn lookup(const char *name)
{
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(name, cmds[i].name))
			return cmds[i].fn;
	return NULL;
}

const char *cli_loss_label(unsigned cause)
{
	static const char *const label[TB_RD_LOST_NCAUSES] = {
		[TB_RD_LOST_FULL] = "ring full",         [TB_RD_LOST_TOOBIG] = "too big",
		[TB_RD_LOST_OVERWRITTEN] = "overwritten", [TB_RD_LOST_TIMEOUT] = "block timeout",
		[TB_RD_LOST_BUSY] = "busy",              [TB_RD_LOST_NOCONSUMER] = "no consumer",
		[TB_RD_LOST_INVALID] = "invalid",        [TB_RD_LOST_DISK] = "disk",
		[TB_RD_LOST_RELAY] = "relay",
	};
	return cause < TB_RD_LOST_NCAUSES ? label[cause] : "?";
}

/* edit distance between a (glob characters left out) and b, both cut at 127 bytes */
static unsigned name_distance(const char *a, const char *b)
{
	char x[128];
	size_t n = 0;
	for (; *a && n < sizeof x - 1; a++)
		if (*a != '*' && *a != '?' && *a != '[' && *a != ']')
			x[n++] = *a;
	size_t m = strnlen(b, 127);
	unsigned row[128];
	for (size_t j = 0; j <= m; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned up = row[j];
			unsigned best = diag + (x[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

int cli_warn_unmatched(const char *cmd, const char *opt, const char *what, const char *pat,
		       const char *const *names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (names[i] && !fnmatch(pat, names[i], 0))
			return 0;
	/* the closest names first; tracebuf's own classes only for a pattern that names them */
	int own = !strncmp(pat, "tracebuf", 8);
	enum { SHOW = 8 };
	const char *best[SHOW];
	unsigned dist[SHOW], nb = 0, all = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!names[i] || (!own && !strncmp(names[i], "tracebuf:", 9)))
			continue;
		all++;
		unsigned d = name_distance(pat, names[i]), k = nb < SHOW ? nb++ : SHOW;
		if (k == SHOW && d >= dist[SHOW - 1])
			continue;
		if (k == SHOW)
			k = SHOW - 1;
		for (; k > 0 && dist[k - 1] > d; k--) {
			best[k] = best[k - 1];
			dist[k] = dist[k - 1];
		}
		best[k] = names[i];
		dist[k] = d;
	}
	fprintf(stderr, "tracebuf %s: warning: %s pattern '", cmd, opt);
	cli_puttx(stderr, pat); /* the user's pattern: escaped as the names are */
	fprintf(stderr, "' matched none of %s:", what);
	for (unsigned k = 0; k < nb; k++) { /* names from a session or a trace: escaped */
		fputc(' ', stderr);
		cli_puttx(stderr, best[k]);
	}
	fprintf(stderr, all ? (all > nb ? " ... (closest first, %u in all)\n" : " (%u)\n") : " none\n", all);
	return 1;
}

void cli_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

const char *cli_env_comm(const char *value, char *buf, size_t cap)
{
	const char *name = value, *stop = value + strlen(value);
	if (!strncmp(value, "comm=", 5)) {
		name = value + 5;
		const char *x = strstr(name, " exe=");
		if (x)
			stop = x;
	}
	snprintf(buf, cap, "%.*s", (int)(stop - name), name);
	return buf;
}

const char *cli_proc_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap)
{
	char key[32];
	snprintf(key, sizeof key, "proc_%" PRIu32, pid);
	for (unsigned i = 0; i < tb_reader_nenv(r); i++)
		if (!strcmp(tb_reader_env_key(r, i), key))
			return cli_env_comm(tb_reader_env_value(r, i), buf, cap);
	return NULL;
}

int cli_parse_time(const char *s, int64_t *out)
{
	char *end;
	if (strchr(s, '.') || (s[0] && s[strlen(s) - 1] == 's' && !strstr(s, "ns"))) {
		errno = 0;
		long double v = strtold(s, &end);
		if (errno || end == s || (*end && strcmp(end, "s")))
			return -1;
		*out = (int64_t)(v * 1e9L + (v >= 0 ? 0.5L : -0.5L));
		return 0;
	}
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || (*end && strcmp(end, "ns")))
		return -1;
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracebuf <command> [options]   (tracebuf <command> --help for details)\n\n");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		fprintf(f, "  %s\n", cmds[i].summary);
	fprintf(f, "\nexit codes: 0 ok, 1 failure, 2 usage, 3 input partly unreadable;\n"
		   "record/profile exit with the command's status (128+N for signal N)\n");
}

/*
 * The readers map the files they read (stream files, ELF files): a file
 * that another process shrinks while it is read (truncated by hand, a
 * linker rewriting a binary `list` reads, a recorder removing a killed
 * one's partial packet) makes the next access to its lost pages a SIGBUS.
 * Not a crash without a word: said, exit 1.  Only write() and _exit() here
 * (async-signal-safe); what stdout had buffered is lost, so the output may
 * end mid-line, which the message says.
 */
static char sigbus_msg[256];
static size_t sigbus_len;

static void on_sigbus(int sig)
{
	(void)sig;
	ssize_t w = write(2, sigbus_msg, sigbus_len);
	(void)w;
	_exit(TB_EXIT_FAIL);
}

static void catch_sigbus(const char *cmd)
{
	int n = snprintf(sigbus_msg, sizeof sigbus_msg,
			 "\ntracebuf %s: a file being read shrank under it (truncated by another process): stopped; "
			 "the output before this may end mid-line. Run it again once nothing rewrites the file.\n", cmd);
	sigbus_len = n < 0 ? 0 : (size_t)n < sizeof sigbus_msg ? (size_t)n : sizeof sigbus_msg - 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? TB_EXIT_USAGE : TB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tracebuf 0.1.0\n");
		return 0;
	}
	tb_cmd_fn fn = lookup(argv[1]);
	if (!fn) {
		fputs("tracebuf: unknown command '", stderr);
		cli_puttx(stderr, argv[1]);
		fputs("'\n", stderr);
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	argc--;
	argv++;
	/* the readers of whole traces: --progress / --no-progress (cli_progress.c) */
	if (fn == cmd_dump || fn == cmd_report || fn == cmd_convert)
		cli_progress_init(argv[0], &argc, argv);
	if (fn == cmd_dump || fn == cmd_report || fn == cmd_convert || fn == cmd_list || fn == cmd_snapshots)
		catch_sigbus(argv[0]);
	return fn(argc, argv);
}
