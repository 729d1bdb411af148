/* SPDX-License-Identifier: MIT */
/*
 * cli_args.c - what the subcommands share about their arguments: sizes,
 * durations and the SESSION argument (never printing: the subcommand says
 * which option was wrong), and the recorder's mark in a trace directory
 * that the --follow modes of dump and report read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int cli_parse_duration(const char *str, uint64_t *ns)
{
	char *end;
	if (!str || ((*str < '0' || *str > '9') && *str != '.'))
		return -EINVAL;
	errno = 0;
	double v = strtod(str, &end);
	if (errno || v < 0)
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
	else
		return -EINVAL;
	if (v * mul > 1e18)
		return -EINVAL;
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
 * DIR/.tracebuf-recorder, "PID PROGRESS" (src/consumer/engine.c): the
 * recorder's pid, and the time up to which every record is on disk.
 * Return: >0 the pid (recording); 0 no such file (finished); -1 unreadable.
 */
long cli_recorder_of(const char *dir, uint64_t *progress)
{
	char path[4096 + 32], buf[64];
	snprintf(path, sizeof path, "%s/.tracebuf-recorder", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -1;
	long pid = -1;
	if (fgets(buf, sizeof buf, f)) {
		char *end;
		pid = strtol(buf, &end, 10);
		unsigned long long p = strtoull(end, NULL, 10);
		if (p > *progress)
			*progress = p;
	}
	fclose(f);
	return pid > 0 ? pid : -1;
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
