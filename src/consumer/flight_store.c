/* SPDX-License-Identifier: MIT */
/*
 * flight_store.c - the flight recorder's snapshots directory (flight.h):
 *
 *   tb_flight_scan()     at start: numbering goes on after what DIR holds;
 *                        a partial snapshot a killed recorder left is removed
 *   tb_flight_take()     tb_oneshot_run() (the path of `tracebuf snapshot`)
 *                        into DIR/.NNNNNN.partial/trace, trigger.json beside
 *                        it, rename to DIR/NNNNNN-TIME; on failure (a full
 *                        disk) the partial copy is removed, said, counted
 *   tb_flight_enforce()  --max-snapshots, --max-size: oldest removed first
 *   tb_flight_say(), tb_flight_signame(): the log and the signal names
 *                        (here, below flight.c, which uses them too)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "core/utf8.h"
#include "consumer/flight_impl.h"

void tb_flight_say(struct tb_flight *f, const char *fmt, ...)
{
	if (!f->cfg.log)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	f->cfg.log(f->cfg.log_arg, buf);
}

const char *tb_flight_signame(int signo, char *buf, unsigned len)
{
	static const struct { int n; const char *s; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGILL, "SIGILL" },
		{ SIGFPE, "SIGFPE" },   { SIGSYS, "SIGSYS" },   { SIGTRAP, "SIGTRAP" }, { SIGKILL, "SIGKILL" },
		{ SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" },   { SIGHUP, "SIGHUP" },   { SIGQUIT, "SIGQUIT" },
		{ SIGUSR1, "SIGUSR1" }, { SIGUSR2, "SIGUSR2" }, { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].n == signo)
			return names[i].s;
	snprintf(buf, len, "SIG%d", signo);
	return buf;
}

/* Disk blocks of the regular files in `path` and in its trace/ (a snapshot). */
static uint64_t dir_bytes(const char *path, int depth)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	uint64_t n = 0;
	struct dirent *de;
	struct stat sb;
	char sub[PATH_MAX + 16];
	while ((de = readdir(d)))
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISREG(sb.st_mode))
				n += (uint64_t)sb.st_blocks * 512u;
			else if (S_ISDIR(sb.st_mode) && depth == 0 && !strcmp(de->d_name, "trace") &&
				 snprintf(sub, sizeof sub, "%s/trace", path) < (int)sizeof sub)
				n += dir_bytes(sub, 1);
		}
	closedir(d);
	return n;
}

/* Removes a snapshot directory: its regular files, its trace/ (regular
 * files only), then it.  Anything else in it (another directory, a link
 * somebody put there) leaves it in place: -EEXIST. */
static int remove_snapshot(const char *path, int depth)
{
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	char sub[PATH_MAX + 16];
	while ((de = readdir(d))) {
		struct stat sb;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int gone;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			gone = 0;
		else if (S_ISDIR(sb.st_mode) && depth == 0 && !strcmp(de->d_name, "trace") &&
			 snprintf(sub, sizeof sub, "%s/trace", path) < (int)sizeof sub)
			gone = remove_snapshot(sub, 1) == 0;
		else
			gone = S_ISREG(sb.st_mode) && unlinkat(dirfd(d), de->d_name, 0) == 0;
		if (!gone)
			rc = -EEXIST;
	}
	closedir(d);
	if (rc == 0 && rmdir(path) < 0)
		rc = -errno;
	return rc;
}

/* NNNNNN-...: the number, or 0 when `name` is not a snapshot's */
static uint64_t snapshot_num(const char *name)
{
	uint64_t v = 0;
	unsigned i = 0;
	for (; name[i] >= '0' && name[i] <= '9' && i < 18; i++)
		v = v * 10 + (uint64_t)(name[i] - '0');
	return i >= 6 && name[i] == '-' ? v : 0;
}

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;
	return x->num < y->num ? -1 : x->num > y->num;
}

static int keep(struct tb_flight *f, uint64_t num, const char *name, uint64_t bytes)
{
	if (f->nkept == f->capkept) {
		size_t cap = f->capkept ? f->capkept * 2 : 16;
		struct kept *k = realloc(f->kept, cap * sizeof *k);
		if (!k)
			return -ENOMEM;
		f->kept = k;
		f->capkept = cap;
	}
	struct kept *k = &f->kept[f->nkept++];
	k->num = num;
	k->bytes = bytes;
	snprintf(k->name, sizeof k->name, "%s", name);
	return 0;
}

int tb_flight_scan(struct tb_flight *f)
{
	DIR *d = opendir(f->dir);
	if (!d)
		return tb_fail(-errno, "snapshots directory %s: %s", f->dir, strerror(errno));
	struct dirent *de;
	char path[PATH_MAX + 512];
	while ((de = readdir(d))) {
		struct stat sb;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(sb.st_mode))
			continue;
		size_t len = strlen(de->d_name);
		snprintf(path, sizeof path, "%s/%s", f->dir, de->d_name);
		if (de->d_name[0] == '.' && len > 8 && !strcmp(de->d_name + len - 8, ".partial") &&
		    snapshot_num(de->d_name + 1) == 0) {
			/* ".NNNNNN.partial": snapshot_num wants a '-' after the digits */
			uint64_t v = 0;
			for (const char *p = de->d_name + 1; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (uint64_t)(*p - '0');
			if (v >= f->next_num)
				f->next_num = v + 1;
			if (remove_snapshot(path, 0) == 0)
				tb_flight_say(f, "removed %s, a snapshot a stopped recorder left unfinished", path);
			continue;
		}
		uint64_t num = snapshot_num(de->d_name);
		if (!num || len >= sizeof f->kept[0].name)
			continue;
		if (keep(f, num, de->d_name, dir_bytes(path, 0)) < 0) {
			closedir(d);
			return tb_fail(-ENOMEM, "out of memory listing %s", f->dir);
		}
		if (num >= f->next_num)
			f->next_num = num + 1;
	}
	closedir(d);
	if (f->nkept > 1) /* (qsort of NULL, 0: undefined) */
		qsort(f->kept, f->nkept, sizeof *f->kept, cmp_kept);
	return 0;
}

/* Oldest first, until the limits hold; the newest is never removed. */
void tb_flight_enforce(struct tb_flight *f)
{
	uint64_t total = 0;
	for (size_t i = 0; i < f->nkept; i++)
		total += f->kept[i].bytes;
	size_t drop = 0;
	char path[PATH_MAX + 80];
	while (f->nkept - drop > 1) {
		int by_count = f->cfg.max_snapshots && f->nkept - drop > f->cfg.max_snapshots;
		if (!by_count && !(f->cfg.max_size && total > f->cfg.max_size))
			break;
		const char *why = by_count ? "--max-snapshots" : "--max-size";
		struct kept *k = &f->kept[drop++];
		snprintf(path, sizeof path, "%s/%s", f->dir, k->name);
		int rc = remove_snapshot(path, 0);
		total -= k->bytes;
		if (rc < 0 && rc != -ENOENT) {
			tb_flight_say(f, "cannot remove the oldest snapshot %s (%s): %s; it stays, and is no longer counted", path,
			    why, rc == -EEXIST ? "it holds something else than a snapshot's files" : strerror(-rc));
			continue;
		}
		pthread_mutex_lock(&f->lock);
		f->st.removed++;
		pthread_mutex_unlock(&f->lock);
		tb_flight_say(f, "removed the oldest snapshot %s (%.1f MiB) to stay within %s %" PRIu64 "%s", path,
		    (double)k->bytes / 1048576.0, why, by_count ? (uint64_t)f->cfg.max_snapshots : f->cfg.max_size,
		    by_count ? "" : " bytes");
	}
	if (drop) {
		memmove(f->kept, f->kept + drop, (f->nkept - drop) * sizeof *f->kept);
		f->nkept -= drop;
	}
	pthread_mutex_lock(&f->lock);
	f->st.kept = f->nkept;
	f->st.kept_bytes = total;
	pthread_mutex_unlock(&f->lock);
}

/* ---------------------------------------------------------------------- */
/* one snapshot                                                            */
/* ---------------------------------------------------------------------- */

/* a JSON string by the one text rule (core/utf8.h; docs/READER.md): well-formed
 * UTF-8 as it is, C0 and C1 controls and DEL as \u00XX, each ill-formed
 * maximal subpart as one U+FFFD (before: every byte >= 0x80 became \u00XX,
 * so a UTF-8 trigger name read back as Latin-1 code points) */
static void json_str(FILE *o, const char *s)
{
	size_t n = strlen(s);
	fputc('"', o);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t bad = 1, k = tb_utf8_len(s + i, n - i, &bad);
		if (!k) {
			fputs("\\ufffd", o);
			i += bad;
		} else if (c == '"' || c == '\\') {
			fprintf(o, "\\%c", c);
			i++;
		} else if (k == 1 && (c < 0x20 || c == 0x7f)) {
			fprintf(o, "\\u%04x", c);
			i++;
		} else if (k == 2 && c == 0xc2 && (unsigned char)s[i + 1] < 0xa0) {
			fprintf(o, "\\u%04x", (unsigned char)s[i + 1]); /* C1: U+0080..U+009F */
			i += 2;
		} else {
			fwrite(s + i, 1, k, o);
			i += k;
		}
	}
	fputc('"', o);
}

static const char *kind_name(unsigned k)
{
	return k == TB_FLIGHT_PROGRAM ? "program"
	       : k == TB_FLIGHT_SIGNAL ? "signal"
	       : k == TB_FLIGHT_CRASH  ? "crash"
	       : k == TB_FLIGHT_EXIT   ? "exit"
	       : k == TB_FLIGHT_EVENT  ? "event"
	       : k == TB_FLIGHT_SPAN   ? "span"
	       : k == TB_FLIGHT_END    ? "end"
				       : "unknown";
}

static int write_trigger_json(struct tb_flight *f, const char *dir, uint64_t num, const struct tb_flight_trigger *t,
			      uint64_t suppressed, uint64_t copy_ns, const struct tb_oneshot *o, const char *crash)
{
	char path[PATH_MAX + 128], tmp[PATH_MAX + 128];
	if (snprintf(path, sizeof path, "%s/trigger.json", dir) >= (int)sizeof path ||
	    snprintf(tmp, sizeof tmp, "%s/.trigger.json", dir) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	FILE *j = fopen(tmp, "wxe");
	if (!j)
		return -errno;
	char sb[32];
	time_t sec = (time_t)(t->realtime_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&sec, &tm);
	char when[64];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(j, "{\n  \"snapshot\": %" PRIu64 ",\n  \"trigger\": {\n    \"kind\": \"%s\",\n    \"name\": ", num,
		kind_name(t->kind));
	json_str(j, t->name);
	fprintf(j, ",\n    \"time\": \"%s.%09" PRIu64 "Z\",\n    \"realtime_ns\": %" PRIu64 ",\n", when,
		(uint64_t)(t->realtime_ns % 1000000000ull), t->realtime_ns);
	if (t->kind == TB_FLIGHT_PROGRAM || t->kind == TB_FLIGHT_EVENT || t->kind == TB_FLIGHT_SPAN)
		fprintf(j, "    \"clock_ticks\": %" PRIu64 ",\n", t->ticks);
	if (t->kind == TB_FLIGHT_EVENT || t->kind == TB_FLIGHT_SPAN) {
		/* the event that met the condition (a span: its end; time,
		 * clock_ticks, pid and tid above and below are that event's) */
		fprintf(j, "    \"condition\": ");
		json_str(j, t->cond);
		fprintf(j, ",\n    \"class\": ");
		json_str(j, t->cls);
		fprintf(j, ",\n    \"cpu\": %" PRIu32 ",\n", t->cpu);
		if (t->kind == TB_FLIGHT_SPAN)
			fprintf(j, "    \"duration_ns\": %" PRIu64 ",\n", t->dur_ns);
	}
	if (t->signo)
		fprintf(j, "    \"signal\": \"%s\",\n    \"signo\": %d,\n", tb_flight_signame(t->signo, sb, sizeof sb),
			t->signo);
	if (t->kind == TB_FLIGHT_EXIT)
		fprintf(j, "    \"exit_status\": %d,\n", t->status);
	if (t->kind == TB_FLIGHT_END) /* record --pid, not the parent: its parent reaped its status first */
		fprintf(j, "    \"status_known\": false,\n");
	/* 0: not known (a crash seen by waitpid does not say which thread; the
	 * program's crash handler, when it ran, did: cfg.crash_info) */
	fprintf(j, "    \"pid\": %" PRIu32 ",\n", t->pid);
	if (t->tid)
		fprintf(j, "    \"tid\": %" PRIu32 ",\n", t->tid);
	else
		fprintf(j, "    \"tid\": null,\n");
	fprintf(j, "    \"suppressed_before\": %" PRIu64 "%s", suppressed, crash ? ",\n    \"crash\": " : "");
	if (crash) /* last: the listing reads the first "tid", "signal"... of the file */
		fputs(crash, j);
	fputs("\n  },\n", j);
	fprintf(j, "  \"after_ns\": %" PRIu64 ",\n", t->kind == TB_FLIGHT_CRASH || t->kind == TB_FLIGHT_EXIT ||
							  t->kind == TB_FLIGHT_END ? 0 : f->cfg.after_ns);
	fprintf(j, "  \"copy_realtime_ns\": %" PRIu64 ",\n", copy_ns);
	uint64_t lost_all = 0;
	for (unsigned c = 0; c < TB_LOSS_NCAUSES; c++)
		lost_all += o->st.lost[c];
	fprintf(j, "  \"session\": ");
	json_str(j, tb_session_path(f->s));
	fprintf(j, ",\n  \"events\": %" PRIu64 ",\n  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64
		   ",\n  \"torn\": %" PRIu64 ",\n  \"invalid\": %" PRIu64 ",\n  \"lost\": %" PRIu64 "\n}\n",
		o->st.events, o->st.packets, o->st.bytes, o->st.torn, o->st.bad, lost_all);
	int bad = ferror(j);
	if (fclose(j) != 0 || bad) {
		int err = errno ? errno : EIO;
		unlink(tmp);
		return -err;
	}
	if (rename(tmp, path) < 0) {
		int err = errno;
		unlink(tmp);
		return -err;
	}
	return 0;
}
int tb_flight_take(struct tb_flight *f, const struct tb_flight_trigger *t, uint64_t suppressed)
{
	uint64_t num = f->next_num++;
	char tmp[PATH_MAX + 40], fin[PATH_MAX + 128], name[64], when[40];
	snprintf(tmp, sizeof tmp, "%s/.%06" PRIu64 ".partial", f->dir, num);
	uint64_t copy_ns = tb_flight_realtime_ns();
	time_t sec = (time_t)(copy_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&sec, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%S", &tm);
	snprintf(name, sizeof name, "%06" PRIu64 "-%s.%03uZ", num, when, (unsigned)(copy_ns / 1000000u % 1000u));
	snprintf(fin, sizeof fin, "%s/%s", f->dir, name);
	char trace[PATH_MAX + 48];
	snprintf(trace, sizeof trace, "%s/trace", tmp);
	struct tb_oneshot o = { .how = TB_ONESHOT_SNAPSHOT, .recorder = f->cfg.recorder };
	/* the trace in its own directory: CTF readers take every file beside
	 * `metadata` for a stream, trigger.json included */
	int rc = mkdir(tmp, 0755) < 0 ? tb_fail(-errno, "cannot create %s: %s", tmp, strerror(errno))
				       : tb_oneshot_run(f->s, trace, &o);
	char *crash = NULL;
	struct tb_flight_trigger tc = *t;
	uint32_t tid = 0;
	if (rc >= 0 && (t->kind == TB_FLIGHT_CRASH || t->kind == TB_FLIGHT_END) && f->cfg.crash_info) {
		crash = f->cfg.crash_info(f->cfg.crash_arg, trace, t->pid, &tid);
		if (crash && tid)
			tc.tid = tid;
	}
	if (rc >= 0 && (rc = write_trigger_json(f, tmp, num, &tc, suppressed, copy_ns, &o, crash)) < 0)
		rc = tb_fail(rc, "cannot write %s/trigger.json: %s", tmp, strerror(-rc));
	free(crash);
	if (rc >= 0 && rename(tmp, fin) < 0)
		rc = tb_fail(-errno, "cannot rename %s to %s: %s", tmp, fin, strerror(errno));
	if (rc < 0) {
		const char *why = tb_errmsg();
		tb_flight_say(f, "snapshot %" PRIu64 " for %s '%s' skipped: %s%s; its partial copy is removed, the flight recorder carries on", num,
		    kind_name(t->kind), t->name, why,
		    rc == -ENOSPC || rc == -EDQUOT ? " (the disk is full: remove snapshots or lower --max-size)" : "");
		remove_snapshot(tmp, 0);
		pthread_mutex_lock(&f->lock);
		f->st.skipped++;
		pthread_mutex_unlock(&f->lock);
		return rc;
	}
	uint64_t bytes = dir_bytes(fin, 0);
	pthread_mutex_lock(&f->lock);
	f->st.snapshots++;
	pthread_mutex_unlock(&f->lock);
	tb_flight_say(f, "snapshot %s: %s '%s', %" PRIu64 " event%s in %" PRIu64 " packet%s (%.2f MiB)%s", fin,
	    kind_name(t->kind), t->name, o.st.events, o.st.events == 1 ? "" : "s", o.st.packets,
	    o.st.packets == 1 ? "" : "s", (double)bytes / 1048576.0,
	    o.st.torn ? " (sub-buffers reused during the copy dropped and counted)" : "");
	if (keep(f, num, name, bytes) < 0)
		tb_flight_say(f, "out of memory: snapshot %s is not counted by the limits", fin);
	tb_flight_enforce(f);
	return 0;
}

