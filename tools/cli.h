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

/* ---- argument parsers shared by the subcommands (tools/cli_args.c; never print) ---- */

/* "256K", "4M", "1G", "65536": bytes.  Return 0 or -EINVAL. */
int cli_parse_size(const char *str, uint64_t *out);
/* "250ms", "1s", "500us", "100ns"; a bare number is milliseconds.  Return 0 or -EINVAL. */
int cli_parse_duration(const char *str, uint64_t *ns);
/* SESSION argument -> path: as given if it contains '/' or exists, else in $TRACEBUF_SHM_DIR or /dev/shm. */
void cli_session_path(const char *arg, char *path, unsigned len);

/*
 * DIR/.tracebuf-recorder, "PID PROGRESS" (src/consumer/engine.c): the pid of
 * the recorder writing DIR, and the time up to which every record is on disk
 * (*progress raised to it, never lowered).  Return: >0 the pid (recording);
 * 0 no such file (finished, or never recorded by `tracebuf record`); -1
 * unreadable.
 */
long cli_recorder_of(const char *dir, uint64_t *progress);

/* How a loss cause (enum tb_rd_loss) is called in text output: "ring full", "too big", ... */
const char *cli_loss_label(unsigned cause);

/* Prints "tracebuf NAME: message\n" to stderr; returns TB_EXIT_FAIL. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stddef.h>
#include <stdint.h>
struct tb_reader;
/* qsort() for arrays that may be empty: qsort(NULL, 0, ...) is undefined
 * (C11 7.22.5: the pointer must be valid even for 0 elements; UBSan says
 * so), and an empty table's array is NULL.  Use it for every sort. */
void cli_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The name in a metadata env value "comm=NAME exe=EXE ..." (written by
 * src/consumer/metadata.c for key proc_<pid>), else the whole value, into buf. */
const char *cli_env_comm(const char *value, char *buf, size_t cap);
/* The recorded name of process pid into buf; NULL when the trace has none. */
const char *cli_proc_name(struct tb_reader *r, uint32_t pid, char *buf, size_t cap);

/* A time: ns since the Unix epoch ("1700000000000000000", "…ns"), or seconds
 * with a '.' or an 's' suffix ("1700000000.5", "12s").  0, or -1 when malformed. */
int cli_parse_time(const char *s, int64_t *out);

#endif
