/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the tracebuf command line: one cmd_<name>() per file.
 *
 * Exit codes (every subcommand):
 *   0  success           1  failure (message on stderr says what to do)
 *   2  usage error       3  input partly unreadable (data was skipped, the rest was processed)
 * `record` and `profile` exit with the traced command's status instead
 * (128+N when it died of signal N).
 */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <tracebuf/reader.h>

#define TB_EXIT_OK 0
#define TB_EXIT_FAIL 1
#define TB_EXIT_USAGE 2
#define TB_EXIT_PARTIAL 3

/* Each subcommand gets argv starting at its own name (argv[0] == "dump"). */
typedef int (*tb_cmd_fn)(int argc, char **argv);

/* The subcommands (tools/cmd_<name>.c); the table in tools/tracebuf.c lists them once. */
int cmd_record(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_snapshots(int argc, char **argv);

/* ---- flight recorder snapshots (tools/cmd_snapshots.c) ---- */
enum { CLI_FLIGHT_SNAPSHOT = 1, CLI_FLIGHT_DIR = 2 };
/* CLI_FLIGHT_SNAPSHOT: dir is one snapshot (trigger.json, trace/); CLI_FLIGHT_DIR: a
 * directory of snapshots (no trace of its own); 0: neither. */
int cli_flight_kind(const char *dir);
/* One paragraph: what triggered snapshot dir (its trigger.json, escaped). */
void cli_flight_show_trigger(const char *dir, FILE *out);
/* What fired snapshot dir, for report --html's mark (cli_flight_trigger): text
 * fields escaped as cli_tx escapes them; ticks (trace clock) when has_ticks,
 * else only realtime_ns (Unix epoch ns) places it. */
struct cli_trigger {
	char kind[32], name[400];
	uint32_t tid;
	int has_tid, has_ticks;
	uint64_t ticks, realtime_ns;
};
/* 0 and *t from dir/trigger.json; -1 when dir has none (or it is unreadable) */
int cli_flight_trigger(const char *dir, struct cli_trigger *t);
/* The snapshots of dir, oldest first, one line each; exit code. */
int cli_flight_list(const char *dir, FILE *out);
/* The trace a reader (dump, convert) opens for dir: dir/trace (into buf) for a
 * snapshot, dir itself for anything else; NULL, said on stderr as cmd's, for a
 * snapshots directory (it has no trace of its own: which to take). */
const char *cli_flight_trace_dir(const char *cmd, const char *dir, char *buf, size_t cap);

/* ---- argument parsers shared by the subcommands (tools/cli_args.c; never print) ---- */

/* "256K", "4M", "1G", "65536": bytes.  Return 0 or -EINVAL. */
int cli_parse_size(const char *str, uint64_t *out);
/* "250ms", "1s", "500us", "100ns", "2min", "1h"; a bare number is milliseconds.  Return 0,
 * -EINVAL (not a duration) or -ERANGE (longer than CLI_DURATION_MAX_NS). */
int cli_parse_duration(const char *str, uint64_t *ns);
#define CLI_DURATION_MAX_NS (100000ull * 3600 * 1000000000) /* 100000h, ~11 years */
/* What the messages of duration options say of the syntax */
#define CLI_DURATION_UNITS "units ns, us, ms, s, min, h; a bare number is ms"
/* A decimal number, digits only, at most max: "4294967296" for a CPU is
 * out of range, not CPU 0.  Return 0, -EINVAL (not a number) or -ERANGE. */
int cli_parse_uint(const char *str, uint64_t max, uint64_t *out);
/* 1 (why says which, in cap bytes) when writing file out would write over a
 * file of trace directory dir, or into that directory; else 0.  Every
 * command that writes a file from a trace asks it before opening out. */
int cli_output_clobbers_input(const char *out, const char *dir, char *why, size_t cap);
/* SESSION argument -> path: as given if it contains '/' or exists, else in $TRACEBUF_SHM_DIR or /dev/shm. */
void cli_session_path(const char *arg, char *path, unsigned len);

/*
 * Who writes trace directory DIR, from its DIR/.tracebuf-recorder
 * (src/consumer/mark.c writes and locks it and says why it
 * is trusted).  Never blocks, whatever the mark is (FIFO, directory, ...).
 */
enum {
	CLI_REC_NONE, /* no mark: finished (or never recorded by `tracebuf record`) */
	CLI_REC_LIVE, /* the recorder that wrote the mark holds its lock: recording */
	CLI_REC_GONE, /* a mark of a recorder that is no longer at work (killed, or a copy): why says */
	CLI_REC_BAD,  /* a mark that is not one (garbage, FIFO, unreadable, ...): why says */
};
struct cli_recorder {
	long pid;               /* the mark's (LIVE, GONE) */
	unsigned long long start;
	uint64_t mark_progress; /* the mark's progress */
	uint64_t progress;      /* raised to the mark's progress, never lowered: set to 0 first */
	char why[4608];
};
int cli_recorder_state(const char *dir, struct cli_recorder *rec);

/* How a loss cause (enum tb_rd_loss) is called in text output: "ring full", "too big", ... */
const char *cli_loss_label(unsigned cause);
/* The plural ending of a count: "1 event", "2 events" (printf("%u event%s", n, cli_s(n))). */
#define cli_s(n) ((n) == 1 ? "" : "s")
/* PREFIX-YYYYMMDD-HHMMSS[-N] in the current directory, a name that does not exist yet: the
 * default output of record ("trace") and profile ("profile"). */
void cli_default_out(const char *prefix, char *out, size_t len);

/* When glob pat matches none of names[0..n) (NULL entries skipped), says so
 * on stderr ("tracebuf CMD: warning: OPT pattern 'PAT' matched none of WHAT:")
 * with the closest names first, and returns 1; else 0.  `record --events`
 * and `dump --event` share it. */
int cli_warn_unmatched(const char *cmd, const char *opt, const char *what, const char *pat,
		       const char *const *names, unsigned n);

/* ---- text output (tools/cli_text.c): every string from a trace, profile, session or ELF file ---- */
/* Prints "tracebuf NAME: message\n" to stderr, the message escaped (cli_tx); returns TB_EXIT_FAIL. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The formatted line, escaped (cli_tx), and a newline, to f. */
void cli_msg(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s by the one text rule (tb_rd_format_text: controls, C1 and ill-formed UTF-8 as \xNN) into
 * buf, NUL-terminated, cut to cap - 1 bytes at an escape's or a character's start; returns buf. */
const char *cli_tx(char *buf, size_t cap, const char *s);
/* s by the same rule, whole, to f. */
void cli_puttx(FILE *f, const char *s);
/* s by the same rule, whole, in a malloc'ed string (NULL when out of memory). */
char *cli_txdup(const char *s);
/* A usage error: "tracebuf CMD: message" escaped (cli_tx), then the --help hint;
 * returns TB_EXIT_USAGE.  The message quotes the user's argument: never raw. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* getopt_long() (optstring opts, long options lo) that says its problems itself, as CMD's
 * message escaped (unknown, ambiguous option, a missing or unwanted value), then returns
 * '?' as getopt_long does: glibc's own messages quote the argument raw. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *opts, const struct option *lo);
/* The column, in characters, of byte pos of s once s is escaped (cli_tx): where a
 * caret goes under the escaped text. */
size_t cli_caret(const char *s, size_t pos);

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
struct tb_reader;
/* qsort() for arrays that may be empty: qsort(NULL, 0, ...) is undefined
 * (C11 7.22.5: the pointer must be valid even for 0 elements; UBSan says
 * so), and an empty table's array is NULL.  Use it for every sort. */
/* cli_elf.c: the tracebuf_events entries of an ELF file (names[i], then its
 * "{FIELDS}" after its NUL; a class used in several translation units is
 * there once per unit) */
#define CLI_ELF_SECS_MAX 64
struct cli_elf_events {
	const char **names;
	size_t n;
	int found;                       /* it has a tracebuf_events section */
	char *secs[CLI_ELF_SECS_MAX];    /* the sections read (names point into them) */
	size_t nsec;
};
/* 0: `path` is not an ELF file (nothing to free); 1: it is: *why NULL and
 * ev filled, or *why says why it cannot be read; cli_elf_events_free() after. */
int cli_elf_events_read(const char *path, struct cli_elf_events *ev, const char **why);
void cli_elf_events_free(struct cli_elf_events *ev);

void cli_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The name in a metadata env value "comm=NAME exe=EXE ..." (written by
 * src/consumer/metadata.c for key proc_<pid>), else the whole value, into buf. */
const char *cli_env_comm(const char *value, char *buf, size_t cap);
/* The recorded name of process pid into buf; NULL when the trace has none. */
const char *cli_proc_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap);

/* A time: ns since the Unix epoch ("1700000000000000000", "…ns"), or seconds
 * with a '.' or an 's' suffix ("1700000000.5", "12s").  0, or -1 when malformed. */
int cli_parse_time(const char *s, int64_t *out);

/* cli_progress.c: the meter of long reads and the big-output warning. */
struct tb_reader;
struct tb_rd_event;
extern int cli_progress_on;
extern uint64_t cli_progress_n;
/* Takes --progress / --no-progress out of argv (before "--") and decides, for command cmd. */
void cli_progress_init(const char *cmd, int *argc, char **argv);
void cli_progress_tick(const struct tb_reader *r, const struct tb_rd_event *e);
/* Erases the meter (also done at the end of a pass and at exit). */
void cli_progress_done(void);
/* tb_reader_next() of the loops that read a whole trace: the meter follows it. */
static inline int cli_next(struct tb_reader *r, const struct tb_rd_event **e)
{
	int rc = tb_reader_next(r, e);
	if (cli_progress_on) {
		if (rc > 0 && (++cli_progress_n & 4095) == 0)
			cli_progress_tick(r, *e);
		else if (rc <= 0)
			cli_progress_done();
	}
	return rc;
}
/* Before writing `out` (format, ~ratio output bytes per trace byte, share: the part of the
 * trace written): when the estimate is above TRACEBUF_BIG_OUTPUT (1G), says it, and the
 * better format for that size (better, its ratio; NULL: none). */
void cli_big_output(const struct tb_reader *r, const char *cmd, const char *out, const char *format, double ratio,
		    double share, const char *better, double better_ratio);
/* The bytes of the trace's stream files. */
uint64_t cli_trace_bytes(const struct tb_reader *r);
/* The usage line of --progress / --no-progress. */
#define CLI_PROGRESS_USAGE \
	"  --progress, --no-progress  a progress line on stderr during long reads (default: when\n" \
	"                       stderr is a terminal)\n"

#endif
