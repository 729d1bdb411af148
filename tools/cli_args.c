/* SPDX-License-Identifier: MIT */
/*
 * cli_args.c - what the subcommands share about their arguments: sizes,
 * durations and the SESSION argument (never printing: the subcommand says
 * which option was wrong), and the recorder's mark in a trace directory
 * that the --follow modes of dump and report read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"


int cli_parse_size(const char *str, uint64_t *out)
{
	char *end;
	if (!str || *str < '0' || *str > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(str, &end, 0);
	if (errno)
		return -EINVAL;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_uint(const char *str, uint64_t max, uint64_t *out)
{
	/* digits only: no sign, no space, no base prefix, no suffix; strtoull
	 * alone takes "-1" and " 7" and saturates on overflow */
	if (!str || !*str || strspn(str, "0123456789") != strlen(str))
		return -EINVAL;
	uint64_t v = 0;
	for (const char *p = str; *p; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_parse_duration(const char *str, uint64_t *ns)
{
	char *end;
	if (!str || ((*str < '0' || *str > '9') && *str != '.'))
		return -EINVAL;
	/* a decimal number: strtod also takes hexadecimal ("0x10s" was 16 s) */
	if (strpbrk(str, "xX"))
		return -EINVAL;
	errno = 0;
	double v = strtod(str, &end);
	if (end == str || v < 0 || v != v)
		return -EINVAL;
	if (errno == ERANGE && v > 1)
		return -ERANGE; /* "1e400s" */
	if (errno)
		return -EINVAL;
	double mul;
	if (!*end || !strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "min"))
		mul = 60e9;
	else if (!strcmp(end, "h"))
		mul = 3600e9;
	else
		return -EINVAL;
	if (v * mul > (double)CLI_DURATION_MAX_NS)
		return -ERANGE;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

void cli_session_path(const char *arg, char *path, unsigned len)
{
	struct stat sb;
	if (strchr(arg, '/') || stat(arg, &sb) == 0) {
		snprintf(path, len, "%s", arg);
		return;
	}
	const char *dir = getenv("TRACEBUF_SHM_DIR");
	snprintf(path, len, "%s/%s", dir && *dir ? dir : "/dev/shm", arg);
}

/*
 * An output file must not be one of the input trace's files, nor be
 * created inside its directory (the reader would take it for a stream
 * file).  Compared by device and inode, not by name: "T/./chan_0",
 * "../x/T/chan_0", a symbolic or a hard link to a stream file are all
 * caught.
 */
int cli_output_clobbers_input(const char *out, const char *dir, char *why, size_t cap)
{
	struct stat d, o, f;
	if (!out || !strcmp(out, "-") || stat(dir, &d) || !S_ISDIR(d.st_mode))
		return 0; /* standard output; or no directory: the reader says so */
	if (stat(out, &o) == 0) {
		if (o.st_dev == d.st_dev && o.st_ino == d.st_ino) {
			snprintf(why, cap, "%s is the trace directory %s", out, dir);
			return 1;
		}
		DIR *dp = opendir(dir);
		const struct dirent *de;
		int hit = 0;
		while (dp && !hit && (de = readdir(dp)))
			if (fstatat(dirfd(dp), de->d_name, &f, 0) == 0 && f.st_dev == o.st_dev && f.st_ino == o.st_ino) {
				snprintf(why, cap, "%s is the file %s of the trace %s",
					 out, de->d_name, dir);
				hit = 1;
			}
		if (dp)
			closedir(dp);
		if (hit)
			return 1;
	}
	/* the directory the output would be created in */
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", out);
	char *slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == parent)
		parent[1] = 0;
	else
		*slash = 0;
	struct stat pst;
	if (stat(parent, &pst) == 0 && pst.st_dev == d.st_dev && pst.st_ino == d.st_ino) {
		snprintf(why, cap, "%s is inside the trace directory %s: write it elsewhere", out, dir);
		return 1;
	}
	return 0;
}

/* ---- the recorder's mark, for --follow ---------------------------------- */

/* field 22 of /proc/PID/stat (start time, clock ticks since boot); 0 when unreadable */
static unsigned long long proc_start_time(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *q = strrchr(buf, ')'); /* comm may hold spaces and ')' */
	for (int f = 0; q && f < 20; f++)
		if ((q = strchr(q, ' ')))
			q++;
	return q ? strtoull(q, NULL, 10) : 0;
}

/* exactly `width` characters at *p: spaces then digits (at least one); the value, or -1 */
static int fixed_number(const char **p, unsigned width, int zeros, unsigned long long max, unsigned long long *v)
{
	const char *s = *p;
	unsigned i = 0;
	while (!zeros && i < width && s[i] == ' ')
		i++;
	if (i == width)
		return -1;
	unsigned long long x = 0;
	for (; i < width; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (max - d) / 10)
			return -1; /* beyond max: "4294967297" is no pid */
		x = x * 10 + d;
	}
	*v = x;
	*p = s + width;
	return 0;
}

static int literal(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n))
		return -1;
	*p += n;
	return 0;
}

/*
 * The mark's one line (src/consumer/mark.c, tb_recorder_mark):
 *   "tracebuf-recorder 2 pid=%10d start=%20llu boot=%-36s progress=%020llu\n"
 * parsed strictly: every width, every separator, the pid in [1, INT_MAX].
 */
/* this boot's id into b (36 characters); -1 when /proc does not say */
static int mine_boot(char b[40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, 36);
	close(fd);
	b[n == 36 ? 36 : 0] = 0;
	return n == 36 ? 0 : -1;
}

static int parse_mark(const char *buf, size_t n, struct cli_recorder *rec, char boot[37])
{
	const char *p = buf;
	unsigned long long pid, start, progress;
	if (memchr(buf, 0, n) || literal(&p, "tracebuf-recorder 2 pid=") ||
	    fixed_number(&p, 10, 0, INT_MAX, &pid) || pid == 0 || literal(&p, " start=") ||
	    fixed_number(&p, 20, 0, UINT64_MAX, &start) || literal(&p, " boot=") || strnlen(p, 36) != 36)
		return -1;
	memcpy(boot, p, 36);
	boot[36] = 0;
	/* a boot id, or "-" and spaces (the recorder could not read it) */
	int unknown = boot[0] == '-' && strspn(boot + 1, " ") == 35;
	if (!unknown && strspn(boot, "0123456789abcdef-") != 36)
		return -1;
	p += 36;
	if (literal(&p, " progress=") || fixed_number(&p, 20, 1, UINT64_MAX, &progress) || *p != '\n' ||
	    p + 1 != buf + n)
		return -1;
	rec->pid = (long)pid;
	rec->start = start;
	rec->mark_progress = progress;
	return 0;
}

int cli_recorder_state(const char *dir, struct cli_recorder *rec)
{
	char path[4096 + 32], buf[256], boot[37], mine[40];
	rec->pid = 0;
	rec->why[0] = 0;
	snprintf(path, sizeof path, "%s/.tracebuf-recorder", dir);
	/* O_NONBLOCK: a FIFO must not hang the open; O_NOFOLLOW: the recorder
	 * writes a plain file, a symbolic link there is not its mark */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return CLI_REC_NONE;
		snprintf(rec->why, sizeof rec->why, "%s: cannot open it: %s", path, strerror(errno));
		return CLI_REC_BAD;
	}
	struct stat st;
	int state = CLI_REC_BAD;
	ssize_t n = 0;
	if (fstat(fd, &st)) {
		snprintf(rec->why, sizeof rec->why, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(rec->why, sizeof rec->why, "%s is not a regular file (a %s): not a recorder's mark", path,
			 S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO" : S_ISLNK(st.st_mode) ?
			 "symbolic link" : "device or socket");
	} else if ((n = pread(fd, buf, sizeof buf - 1, 0)) < 0) {
		snprintf(rec->why, sizeof rec->why, "%s: cannot read it: %s", path, strerror(errno));
	} else if ((buf[n] = 0, parse_mark(buf, (size_t)n, rec, boot))) {
		snprintf(rec->why, sizeof rec->why, "%s holds %zd bytes that are not a recorder's mark (\"tracebuf-recorder "
			 "2 pid=... start=... boot=... progress=...\")", path, n);
	} else {
		/* the proof: the recorder's lock (see src/consumer/mark.c); the pid, start time
		 * and boot only name the recorder in what we say */
		int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
		if (!held)
			flock(fd, LOCK_UN);
		struct stat now;
		if (!held && fstat(fd, &now) == 0 && now.st_nlink == 0) {
			state = CLI_REC_NONE; /* unlinked before the lock was released: finished */
		} else if (!held) {
			snprintf(rec->why, sizeof rec->why, "no process holds its lock (killed, or a copy of the trace)");
			state = CLI_REC_GONE;
		} else if (!mine_boot(mine) && strcmp(boot, mine) && boot[0] != '-') {
			/* a lock held on a mark from another boot: a copy being held by
			 * someone else, or a shared file system; not our recorder */
			snprintf(rec->why, sizeof rec->why, "its lock is held, but the mark names boot %.36s (this is %s): "
				 "a recorder on another machine?", boot, mine);
			state = CLI_REC_GONE;
		} else if (rec->start && proc_start_time(rec->pid) != rec->start) {
			snprintf(rec->why, sizeof rec->why, "its lock is held, but pid %ld is not the process that wrote it "
				 "(start time differs)", rec->pid);
			state = CLI_REC_GONE;
		} else {
			state = CLI_REC_LIVE;
		}
		if (rec->mark_progress > rec->progress)
			rec->progress = rec->mark_progress;
	}
	close(fd);
	return state;
}

void cli_default_out(const char *prefix, char *out, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	char base[64], stamp[32];
	localtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	snprintf(base, sizeof base, "%s-%s", prefix, stamp);
	snprintf(out, len, "%s", base);
	struct stat st;
	for (int i = 2; i < 100 && lstat(out, &st) == 0; i++)
		snprintf(out, len, "%s-%d", base, i);
}
