/* SPDX-License-Identifier: MIT */
/*
 * perm.c - where tracefs is and what the kernel allows: the errors of a
 * refused --kernel say which of root, CAP_PERFMON, perf_event_paranoid and
 * tracefs access is missing, and how to grant it (docs/KERNEL.md,
 * "Permissions").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel_impl.h"

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

int tb_kfile_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	close(fd);
	return 0;
}

static int cap_effective(int bit)
{
	char buf[4096];
	if (tb_kfile_read("/proc/self/status", buf, sizeof buf) < 0)
		return 0;
	const char *p = strstr(buf, "CapEff:");
	if (!p)
		return 0;
	unsigned long long v = strtoull(p + 7, NULL, 16);
	return (int)((v >> bit) & 1);
}

static int paranoid(void)
{
	char buf[32];
	if (tb_kfile_read("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) < 0)
		return 99;
	char *end;
	long v = strtol(buf, &end, 10);
	return end == buf ? 99 : (int)v; /* unreadable: the strictest */
}

/*
 * What tracepoints need and what this process has, one clause each: root,
 * or CAP_PERFMON (CAP_SYS_ADMIN before 5.8), or kernel.perf_event_paranoid
 * <= 1; and tracefs readable.  Written into buf.
 */
void tb_kperm_state(char *buf, size_t len, int tracefs_ok)
{
	int root = geteuid() == 0, perfmon = cap_effective(38 /* CAP_PERFMON */),
	    admin = cap_effective(21 /* CAP_SYS_ADMIN */), par = paranoid();
	int perf_ok = root || perfmon || admin || par <= 1;
	snprintf(buf, len,
		 "tracepoints need (1) root [%s, uid %u] or CAP_PERFMON [%s: setcap cap_perfmon+ep tracebuf] or "
		 "kernel.perf_event_paranoid <= 1 [it is %d: sysctl -w kernel.perf_event_paranoid=1], and (2) "
		 "tracefs readable [%s: as root, mount -o remount,mode=755 /sys/kernel/tracing]. %s",
		 root ? "present" : "missing", (unsigned)geteuid(), perfmon || admin ? "present" : "missing", par,
		 tracefs_ok ? "present" : "missing",
		 perf_ok && tracefs_ok ? "All are present: a seccomp or LSM policy refuses it"
				       : "Without --kernel the program is traced alone");
}

/* The error for a refused perf_event_open: what is missing, how to grant it. */
int tb_kperm_error(int err, unsigned tp)
{
	char st[768];
	tb_kperm_state(st, sizeof st, 1);
	return tb_fail(-err, "--kernel: perf_event_open(%s:%s) refused (%s): %s", tb_ktp_sys(tp), tb_ktp_tracepoint(tp),
		       strerror(err), st);
}

/* the events directory of tracefs into dir, or the error saying why not */
int tb_kfind_tracefs(char *dir, size_t len)
{
	int denied = 0;
	for (unsigned i = 0; i < sizeof tracefs_dirs / sizeof tracefs_dirs[0]; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/events/sched", tracefs_dirs[i]);
		if (access(p, R_OK | X_OK) == 0) {
			snprintf(dir, len, "%s/events", tracefs_dirs[i]);
			return 0;
		}
		if (errno == EACCES)
			denied = 1;
	}
	if (denied) {
		char st[768];
		tb_kperm_state(st, sizeof st, 0);
		return tb_fail(-EACCES, "--kernel: tracefs is not readable (tracepoint ids and layouts): %s", st);
	}
	return tb_fail(-ENOENT,
		       "--kernel: tracefs is not mounted (no events/sched under /sys/kernel/tracing nor "
		       "/sys/kernel/debug/tracing): as root, mount -t tracefs nodev /sys/kernel/tracing");
}
