/* SPDX-License-Identifier: MIT */
/*
 * cmd_record.c - tracebuf record [opts] -o DIR -- CMD [ARGS]
 *                tracebuf record --attach SESSION -o DIR
 *                tracebuf record --pid PID [-o DIR]
 *
 * Creates a session, runs CMD with TRACEBUF_SESSION=<session file> (the
 * library in CMD and in every child attaches by itself), drains the rings
 * into DIR while CMD runs, finishes the trace when CMD exits, and exits with
 * CMD's status.  The main thread only waits: for signals (SIGCHLD, and
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT that it forwards to CMD like a shell) in
 * sigtimedwait(); the engine's threads do the draining.  What it prints
 * (status line, summary, warnings) is record_report.c; its command line is
 * record_args.c.  See docs/RECORDER.md.
 * --pid attaches a program already running (record_pid.c; docs/DESIGN.md,
 * "Attaching to a running program").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <dirent.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/session.h>

#include "cli.h"
#include "consumer/engine.h"
#include "core/format.h"
#include "kernel/kernel.h"
#include "relay/relay.h"
#include "record_args.h"
#include "record_flight.h"
#include "record_pid.h"
#include "record_report.h"

extern char **environ;

#define NAME "record"
/* what the messages after the arguments call us: "profile" when profile runs us */
static const char *rec_name = NAME;


/*
 * Until CMD's child waits on the go pipe (blocked in read: /proc/PID/syscall
 * names it), at most 2 s: --kernel opens the tree's system-call events on
 * each CPU in turn, and a call the child made meanwhile (its steps between
 * fork and the read) could be entered on a CPU whose event was open and
 * left on one whose was not.  Not readable: go on.
 */
static void wait_held(pid_t pid)
{
	char path[64], want[16], buf[32];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	snprintf(want, sizeof want, "%ld ", (long)SYS_read);
	for (int i = 0; i < 2000; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			return;
		buf[n] = 0;
		if (!strncmp(buf, want, strlen(want)))
			return;
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* execvp's search, done up front so that a missing command creates nothing. */
static int resolve_cmd(const char *cmd, char *path, size_t len)
{
	struct stat sb;
	if (strchr(cmd, '/')) {
		snprintf(path, len, "%s", cmd);
		if (stat(path, &sb) < 0)
			return cli_error(rec_name, "%s: %s", cmd, strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return cli_error(rec_name, "%s: not a regular file", cmd);
		if (access(path, X_OK) < 0)
			return cli_error(rec_name, "%s: not executable (%s)", cmd, strerror(errno));
		return 0;
	}
	const char *envp = getenv("PATH");
	char *dirs = strdup(envp && *envp ? envp : "/usr/local/bin:/usr/bin:/bin");
	int found_noexec = 0;
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, len, "%s/%s", *d ? d : ".", cmd);
		if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		if (access(path, X_OK) == 0) {
			free(dirs);
			return 0;
		}
		found_noexec = 1;
	}
	free(dirs);
	if (found_noexec)
		return cli_error(rec_name, "%s: found in PATH but not executable", cmd);
	return cli_error(rec_name, "%s: command not found (searched PATH)", cmd);
}

/*
 * --force: `dir` holds a trace of ours and nothing else (a `metadata` file
 * that starts as tracebuf's CTF metadata does, regular files beside it, no
 * directory, no recorder alive writing it): its files are removed, the
 * directory kept.  Anything else is refused with what was found, and nothing
 * is removed: --force never empties an arbitrary directory.
 */
static int replace_trace(const char *dir)
{
	char path[PATH_MAX], head[16] = "";
	snprintf(path, sizeof path, "%s/metadata", dir);
	FILE *f = fopen(path, "re");
	size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
	if (f)
		fclose(f);
	head[got] = 0;
	if (strncmp(head, "/* CTF 1.8", 10) && !(got >= 4 && (uint8_t)head[0] == 0x57 && (uint8_t)head[1] == 0x1d &&
						(uint8_t)head[2] == 0xd1 && (uint8_t)head[3] == 0x75))
		return cli_error(rec_name, "--force: %s is not empty and does not look like a trace (no CTF metadata "
				 "file): not removed; give a new or empty directory", dir);
	/* the recorder's locked mark, not a pid that may name another process now (cli.h) */
	struct cli_recorder rec = { 0 };
	if (cli_recorder_state(dir, &rec) == CLI_REC_LIVE)
		return cli_error(rec_name, "--force: %s is being recorded by process %ld: not removed", dir, rec.pid);
	DIR *d = opendir(dir);
	if (!d)
		return cli_error(rec_name, "output directory %s: %s", dir, strerror(errno));
	/* first look, then remove: a directory with anything but regular files is left whole */
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat sb;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(sb.st_mode)) {
			/* the name is in d's buffer: said before closedir() frees it */
			cli_error(rec_name, "--force: %s holds %s, which is not a file of a trace: not removed; "
				  "give a new or empty directory", dir, de->d_name);
			closedir(d);
			return TB_EXIT_FAIL;
		}
	}
	rewinddir(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && unlinkat(dirfd(d), de->d_name, 0) < 0) {
			int err = errno;
			closedir(d);
			return cli_error(rec_name, "--force: cannot remove %s/%s: %s", dir, de->d_name, strerror(err));
		}
	closedir(d);
	return 0;
}

/* 0 when dir does not exist or is an empty directory (or, force, held a trace now removed);
 * else an error printed (naming why). */
static int dir_usable(const char *dir, int force)
{
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return cli_error(rec_name, "output directory %s: %s%s", dir, strerror(errno),
				 errno == ENAMETOOLONG ? " (a name in the path is longer than NAME_MAX, 255 bytes)"
				 : errno == EACCES     ? "; give a directory you may write"
						       : "");
	}
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty && force)
		return replace_trace(dir);
	if (!empty)
		return cli_error(rec_name, "output directory %s is not empty; give a new or empty one, or --force to "
				 "replace the trace it holds", dir);
	return 0;
}

/* The environment of CMD: ours, with TRACEBUF_SESSION replaced. */
static void free_child_env(char **env)
{
	if (!env)
		return;
	size_t n = 0;
	while (env[n])
		n++;
	if (n)
		free(env[n - 1]); /* the TRACEBUF_SESSION entry, always last */
	free(env);
}

static char **child_env(const char *session_path)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "TRACEBUF_SESSION=", 17))
			env[k++] = environ[i];
	size_t len = strlen(session_path) + 20;
	env[k] = malloc(len);
	if (!env[k]) {
		free(env);
		return NULL;
	}
	snprintf(env[k], len, "TRACEBUF_SESSION=%s", session_path);
	env[k + 1] = NULL;
	return env;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return TB_EXIT_FAIL;
}

/* Forwarded to CMD: what a shell would pass on. */
static const int fwd_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* --snapshot-on-signal: taken by the main thread with the others, never forwarded */
static int flight_signo;

static void build_sigset(sigset_t *set)
{
	sigemptyset(set);
	if (flight_signo)
		sigaddset(set, flight_signo);
	sigaddset(set, SIGCHLD);
	for (size_t i = 0; i < sizeof fwd_sigs / sizeof fwd_sigs[0]; i++)
		sigaddset(set, fwd_sigs[i]);
}

static void cmdline_of(char **argv, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; argv[i] && off + 2 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Waits for CMD (pid > 0) or, in attach mode (pid == 0), until no process
 * of the session is alive or a signal asks to stop.  Returns CMD's wait status.
 */

/* --pid: says once that the program attached, or why it refused; -1 refused */
static int pid_progress(struct record_pid *tp, int quiet)
{
	if (tp->said)
		return 0;
	char msg[256];
	int st = record_pid_state(tp, msg, sizeof msg);
	if (st == 0)
		return 0;
	tp->said = 1;
	if (st == 1) {
		if (!quiet)
			cli_msg(stderr, "tracebuf %s: process %d (%s) attached", rec_name, (int)tp->pid, tp->comm);
		return 0;
	}
	tp->refused = 1;
	if (st == -1)
		cli_error(rec_name, "process %d (%s) refused the session: %s", (int)tp->pid, tp->comm, msg);
	else
		cli_error(rec_name, "process %d (%s): the request was withdrawn (by another tracebuf record --pid?)",
			  (int)tp->pid, tp->comm);
	return -1;
}

/* --pid with a pidfd: a signal (from a signalfd of the blocked set) or the end
 * of the process, whichever comes first, within timeout_ms.  Returns the
 * signal (si filled as sigtimedwait would), or -1 (nothing, or the end: then
 * tp->ended, and its status noted at once, before its parent reaps it). */
static int pid_wait(int sfd, struct record_pid *tp, siginfo_t *si, int timeout_ms)
{
	struct pollfd p[2] = { { sfd, POLLIN, 0 }, { tp->pidfd, POLLIN, 0 } };
	if (poll(p, 2, timeout_ms) <= 0)
		return -1;
	if (p[1].revents)
		record_pid_note_end(tp);
	struct signalfd_siginfo ss;
	if (!(p[0].revents & POLLIN) || read(sfd, &ss, sizeof ss) != (ssize_t)sizeof ss)
		return -1;
	memset(si, 0, sizeof *si);
	si->si_signo = (int)ss.ssi_signo;
	si->si_code = ss.ssi_code;
	si->si_pid = (pid_t)ss.ssi_pid;
	return (int)ss.ssi_signo;
}

static int wait_loop(struct tb_session *s, struct tb_engine *e, struct tb_flight *fl, pid_t pid, int show_status,
		     double t0, struct record_pid *tp, int quiet)
{
	sigset_t set;
	build_sigset(&set);
	int status = 0, reported_err = 0, signals = 0;
	/* a relay's loss and return are said when they happen */
	struct tb_relay_stats rs = { 0 };
	if (e) /* NULL: a flight recorder alone (--snapshot-dir without -o) */
		tb_engine_relay(e, &rs);
	int relay = rs.enabled;
	uint64_t prev_ev = 0;
	double prev_t = t0;
	/* --pid: the end of the process is seen at once through its pidfd
	 * (polled with a signalfd of the signals, which stay blocked) */
	int sfd = tp && tp->pidfd >= 0 ? signalfd(-1, &set, SFD_CLOEXEC) : -1;
	for (;;) {
		siginfo_t si;
		struct timespec ts = { 0, 500000000 };
		int sig;
		if (relay)
			record_print_warnings(e);
		if (sfd >= 0)
			sig = pid_wait(sfd, tp, &si, 500);
		else if ((show_status && e) || !pid || relay)
			sig = sigtimedwait(&set, &si, &ts);
		else
			sig = sigwaitinfo(&set, &si);
		if (sig == SIGCHLD || (sig < 0 && pid)) {
			pid_t p;
			int st;
			/* we are a subreaper: orphaned descendants of CMD end up here too */
			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				if (p == pid) {
					status = st;
					pid = -1;
				}
		} else if (sig > 0 && sig == flight_signo && fl) {
			record_flight_signal(fl, &si);
		} else if (sig > 0) {
			signals++;
			if (pid > 0) {
				/* a terminal's ^C already reached CMD (same process
				 * group, si_code SI_KERNEL): forward only the others */
				if (si.si_code != SI_KERNEL)
					kill(pid, sig);
			} else if (!pid) {
				break; /* attach mode: stop draining */
			}
		}
		if (e) {
			record_print_warnings(e);
			if (tb_engine_error(e) && !reported_err) {
				reported_err = 1;
				fputc('\n', stderr);
				cli_msg(stderr, "tracebuf %s: %s", rec_name, tb_engine_errmsg(e));
				cli_msg(stderr, "tracebuf %s: recording stopped; the command goes on", rec_name);
			}
		}
		if (pid < 0)
			break;
		if (tp) { /* --pid: until the program ends (or refuses) */
			if (!tp->ended && record_pid_gone(tp))
				record_pid_note_end(tp); /* (no pidfd: seen late, its status most likely reaped) */
			if (tp->ended || pid_progress(tp, quiet) < 0)
				break;
		} else if (!e) {
			continue; /* a flight recorder alone: until CMD ends */
		} else if (!pid && tb_session_live_procs(s, (uint32_t)getpid()) == 0) {
			break;
		}
		if (show_status && e)
			record_status_line(s, e, t0, &prev_ev, &prev_t);
	}
	if (sfd >= 0)
		close(sfd);
	if (show_status)
		fprintf(stderr, "\r\033[K");
	(void)signals;
	return status;
}

static int run_attach(struct rec_opts *o)
{
	char path[PATH_MAX];
	cli_session_path(o->attach, path, sizeof path);
	struct tb_session *s;
	int rc = tb_session_attach(path, 0, &s);
	if (rc < 0)
		return cli_error(rec_name, "cannot attach to %s: %s", path, tb_errmsg());
	uint32_t cpid = tb_session_consumer_pid(s);
	if (cpid && cpid != (uint32_t)getpid() && cpid <= (uint32_t)INT32_MAX &&
	    (kill((pid_t)cpid, 0) == 0 || errno == EPERM)) {
		tb_session_close(s);
		return cli_error(rec_name, "session %s is already drained by process %u; stop it first", path, cpid);
	}
	uint64_t triggers0 = record_triggers_claimed(s); /* those before we attached are not ours to count */
	int created = 0;
	if (o->out && tb_output_dir(o->out, &created) < 0) {
		tb_session_close(s);
		return cli_error(rec_name, "%s", tb_errmsg());
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "recorder", "tracebuf record --attach", 0 },
		{ "session_file", path, 0 },
		{ "attach_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
	};
	struct tb_engine_cfg cfg = { .flags = TB_ENG_RESUME, .env = env, .nenv = 3,
				     .relay = o->relay_url ? &o->relay : NULL, .live_period_ns = o->live_period_ns, .trust_writers = o->trust_writers,
				     .kernel = o->kernel ? &o->kcfg : NULL };
	struct tb_engine *e;
	rc = tb_engine_create(s, o->out, &cfg, &e);
	if (rc < 0) {
		cli_error(rec_name, "%s", tb_errmsg());
		tb_session_close(s);
		if (created)
			rmdir(o->out);
		return TB_EXIT_FAIL;
	}
	sigset_t set;
	build_sigset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGXFSZ, SIG_IGN);
	double t0 = record_now_s();
	rc = tb_engine_start(e);
	if (rc < 0) {
		cli_error(rec_name, "%s", tb_errmsg());
		tb_engine_destroy(e);
		tb_session_close(s);
		return TB_EXIT_FAIL;
	}
	int show = !o->quiet && isatty(2);
	if (!o->quiet)
		cli_msg(stderr, "tracebuf " NAME ": draining %s into %s (stop with ^C)", path,
			o->out ? o->out : o->relay_url);
	wait_loop(s, e, NULL, 0, show, t0, NULL, o->quiet);
	unsigned live = tb_session_live_procs(s, (uint32_t)getpid());
	rc = tb_engine_finish(e, TB_FINISH_SNAPSHOT | (live ? 0 : TB_FINISH_DEAD));
	record_print_warnings(e);
	if (!o->quiet)
		record_summary(s, e, o->out, record_now_s() - t0, !live);
	record_say_ignored_triggers(s, triggers0);
	if (rc < 0)
		cli_error(rec_name, "%s", tb_engine_errmsg(e));
	int code = rc < 0 || record_relay_only_lost(o->out, e) ? TB_EXIT_FAIL
		   : record_damaged_input(e)			  ? TB_EXIT_PARTIAL
								  : TB_EXIT_OK;
	uint32_t creator = tb_session_creator_pid(s);
	if (!live && (creator == 0 || creator > (uint32_t)INT32_MAX || kill((pid_t)creator, 0) < 0)) {
		/* nobody can write to it any more and everything was drained */
		tb_session_unlink(s);
	}
	tb_engine_destroy(e);
	tb_session_close(s);
	return code;
}

/* --pid: an exclusive flock on the session file, held until this recorder
 * exits (the kernel drops it when it dies): a second record --pid of the
 * same process is refused while it lives.  The consumer pid of the session
 * says the same only for drained channels (tb_session_claim_consumer): two
 * flight recorders of one overwrite session would both answer every
 * trigger.  Returns the fd, or -1 with the error said. */
static int pid_lock(const struct record_pid *tp)
{
	int fd = open(tp->session, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		cli_error(rec_name, "cannot open %s: %s", tp->session, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		if (err == EWOULDBLOCK)
			cli_error(rec_name, "process %d is recorded already by another tracebuf record --pid (it holds the "
				  "lock of session %s); stop it first", (int)tp->pid, tp->session);
		else
			cli_error(rec_name, "cannot lock %s: %s", tp->session, strerror(err));
		return -1;
	}
	return fd;
}

/*
 * --pid: a program already running.  The per-pid session is created (or,
 * left by an earlier record --pid, taken over), drained as by --attach, and
 * the program asked to attach at its next event (record_pid.c).  At the
 * end, with the program still running, its events are switched off in the
 * session (it writes nothing more, at the cost of a disabled event) and
 * the session file stays for a later record --pid; once the program is
 * gone, the file is removed.  --kernel: the process's tree (its threads
 * now, what it starts later) is the kernel recorder's root, as CMD is.
 * --snapshot-dir: a flight recorder on the session; the program's end is
 * seen through a pidfd (record is not its parent: no waitpid), its wait
 * status read from /proc while it is a zombie, when its parent has not
 * reaped it yet (docs/FLIGHT-RECORDER.md).
 */
static int run_pid(struct rec_opts *o)
{
	struct record_pid tp;
	record_pid_sweep(rec_name, o->shm_dir, o->quiet);
	int rc = record_pid_find(rec_name, o->pid, o->shm_dir, &tp);
	if (rc)
		return rc;
	if (o->flight.nconds) {
		/* the conditions against the classes the program declares */
		char exe[64];
		snprintf(exe, sizeof exe, "/proc/%d/exe", (int)tp.pid);
		if ((rc = record_flight_check_exe(&o->flight, exe)))
			return rc;
	}
	struct tb_session *s = NULL;
	struct tb_engine *e = NULL;
	struct tb_flight *fl = NULL;
	int created = 0, takeover = tp.exists, lockfd = -1;
	if (takeover) {
		rc = tb_session_attach(tp.session, 0, &s);
		if (rc < 0)
			return cli_error(rec_name, "cannot take over %s (left by an earlier record --pid %d): %s", tp.session,
					 (int)tp.pid, tb_errmsg());
		uint32_t cpid = tb_session_consumer_pid(s);
		if (cpid && cpid != (uint32_t)getpid() && cpid <= (uint32_t)INT32_MAX &&
		    (kill((pid_t)cpid, 0) == 0 || errno == EPERM)) {
			tb_session_close(s);
			return cli_error(rec_name, "process %d is recorded already by process %u (session %s); stop it first",
					 (int)tp.pid, cpid, tp.session);
		}
		if ((lockfd = pid_lock(&tp)) < 0) {
			tb_session_close(s);
			return TB_EXIT_FAIL;
		}
		if (record_flight_check_session(&o->flight, s, tp.session)) {
			tb_session_close(s);
			close(lockfd);
			return TB_EXIT_FAIL;
		}
		/* --mode overwrite that the session has already (a flight recorder
		 * taking over a flight recorder's session) is not worth a warning */
		int other_mode = 0;
		for (unsigned ch = 0; o->dflt.mode && ch < tb_session_nchannels(s); ch++) {
			struct tb_channel_info ci = { .size = sizeof ci };
			other_mode |= tb_session_channel_info(s, ch, &ci) < 0 || ci.mode != o->dflt.mode;
		}
		if (!o->quiet && (o->nchan > 1 || o->dflt.sb_size || o->dflt.sb_count || other_mode))
			cli_msg(stderr, "tracebuf %s: warning: the session %s exists: its channels are kept as they were "
				"made (--channel, --sb-size, --sb-count, --mode ignored)", rec_name, tp.session);
	} else {
		struct stat sb;
		if (o->out && stat(o->out, &sb) == 0 && !S_ISDIR(sb.st_mode))
			return cli_error(rec_name, "output %s exists and is not a directory", o->out);
		if (o->out && dir_usable(o->out, o->force))
			return TB_EXIT_FAIL;
		struct tb_session_opts so = { .size = sizeof so, .path = tp.session, .nchannels = o->nchan,
					      .channels = o->chan };
		rc = tb_session_create(&so, &s);
		if (rc < 0)
			return cli_error(rec_name, "cannot create the session: %s", tb_errmsg());
		if ((lockfd = pid_lock(&tp)) < 0)
			goto fail;
	}
	if (o->out && tb_output_dir(o->out, &created) < 0) {
		cli_error(rec_name, "%s", tb_errmsg());
		goto fail;
	}
	/* its end, seen through a pidfd from here on */
	record_pid_open(&tp);
	char cmdline[64];
	snprintf(cmdline, sizeof cmdline, "%s", tp.comm);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "recorder", "tracebuf record --pid", 0 },
		{ "session_file", tp.session, 0 },
		{ "cmd_pid", NULL, tp.pid },
		{ "cmdline", cmdline, 0 },
		{ "attach_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
	};
	uint32_t root = (uint32_t)tp.pid;
	if (o->kernel) {
		/* the process's tree: its threads now (src/kernel/open.c finds them
		 * in /proc and opens the per-task tracepoints on each, inherited
		 * by what they start), not the session's process table, empty
		 * until the program attaches at its next event */
		o->kcfg.roots = &root;
		o->kcfg.nroots = 1;
	}
	struct tb_engine_cfg cfg = { .flags = takeover ? TB_ENG_RESUME : 0, .env = env, .nenv = 5,
				     .relay = o->relay_url ? &o->relay : NULL, .live_period_ns = o->live_period_ns, .trust_writers = o->trust_writers,
				     .kernel = o->kernel ? &o->kcfg : NULL };
	sigset_t set;
	build_sigset(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	double t0 = record_now_s();
	/* a flight recorder without -o writes snapshots only: no engine */
	if (o->out || o->relay_url) {
		if (tb_engine_create(s, o->out, &cfg, &e) < 0) {
			cli_error(rec_name, "%s", tb_errmsg());
			goto fail;
		}
		if (tb_engine_start(e) < 0) {
			cli_error(rec_name, "%s", tb_errmsg());
			tb_engine_destroy(e);
			e = NULL;
			goto fail;
		}
	}
	if (o->flight.dir && !(fl = record_flight_start(s, &o->flight, o->quiet))) {
		if (e) {
			tb_engine_finish(e, 0);
			tb_engine_destroy(e);
			e = NULL;
		}
		goto fail;
	}
	/* a session whose events an earlier record --pid switched off when it
	 * stopped: on again, as this run asks */
	for (unsigned ch = 0; takeover && ch < tb_session_nchannels(s); ch++)
		if (tb_session_set_events(s, ch, o->dflt.events ? o->dflt.events : "*") < 0)
			cli_error(rec_name, "warning: %s", tb_errmsg());
	if (tp.mapped) {
		tp.said = 1;
		if (!o->quiet)
			cli_msg(stderr, "tracebuf %s: process %d (%s) is attached to %s already: taken over", rec_name,
				(int)tp.pid, tp.comm, tp.session);
	} else if (record_pid_request(rec_name, &tp)) {
		record_flight_free(fl);
		fl = NULL;
		if (e) {
			tb_engine_finish(e, 0);
			tb_engine_destroy(e);
			e = NULL;
		}
		goto fail;
	}
	if (!o->quiet)
		cli_msg(stderr, "tracebuf %s: recording process %d (%s) into %s%s%s (session %s; stop with ^C)%s", rec_name,
			(int)tp.pid, tp.comm, o->out ? o->out : o->relay_url ? o->relay_url : o->flight.dir,
			o->out || o->relay_url ? "" : " (snapshots only)", o->kernel ? ", with the kernel's events" : "",
			tp.session, tp.said ? "" : "; it attaches at its next event");
	int show = !o->quiet && isatty(2);
	wait_loop(s, e, fl, 0, show, t0, &tp, o->quiet);
	if (!tp.ended && record_pid_gone(&tp))
		record_pid_note_end(&tp);
	int alive = !tp.ended;
	int attached = tp.mapped || record_pid_state(&tp, NULL, 0) == 1;
	if (alive && !attached)
		record_pid_cancel(&tp);
	if (alive)
		for (unsigned ch = 0; ch < tb_session_nchannels(s); ch++)
			tb_session_set_events(s, ch, "!*"); /* the program writes nothing more */
	if (!o->quiet && tp.ended) {
		char how[96] = "how is not known: its parent reaped it before its status could be read";
		if (tp.status_known && WIFSIGNALED(tp.status))
			snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(tp.status));
		else if (tp.status_known && WIFEXITED(tp.status))
			snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(tp.status));
		cli_msg(stderr, "tracebuf %s: process %d (%s) ended (%s)", rec_name, (int)tp.pid, tp.comm, how);
	}
	/* the flight recorder first: a crash snapshot while the rings are all there */
	int flight_failed = 0;
	if (fl)
		flight_failed = record_flight_end(fl, &o->flight, tp.pid,
						  alive		     ? RECORD_END_RUNNING
						  : tp.status_known ? RECORD_END_STATUS
								     : RECORD_END_UNKNOWN,
						  tp.status, 1, o->quiet);
	fl = NULL;
	rc = e ? tb_engine_finish(e, TB_FINISH_SNAPSHOT | (alive ? 0 : TB_FINISH_DEAD)) : 0;
	if (e) {
		record_print_warnings(e);
		if (!o->quiet)
			record_summary(s, e, o->out, record_now_s() - t0, !alive);
	}
	if (!o->quiet && alive && !tp.refused)
		cli_msg(stderr, "tracebuf %s: process %d runs on; its events are off (tracebuf record --pid %d takes them "
			"again)", rec_name, (int)tp.pid, (int)tp.pid);
	if (o->out && o->out == o->outbuf && !o->quiet)
		cli_msg(stderr, "tracebuf %s: trace in %s (tracebuf report %s)", rec_name, o->out, o->out);
	if (rc < 0)
		cli_error(rec_name, "%s", tb_engine_errmsg(e));
	int code = rc < 0 || tp.refused || flight_failed || (e && record_relay_only_lost(o->out, e)) ? TB_EXIT_FAIL
		   : e && record_damaged_input(e)							 ? TB_EXIT_PARTIAL
													 : TB_EXIT_OK;
	if (!alive || (tp.refused && !takeover)) /* a refused session is not mapped by the program */
		tb_session_unlink(s);
	tb_engine_destroy(e);
	tb_session_close(s);
	if (tp.pidfd >= 0)
		close(tp.pidfd);
	if (lockfd >= 0)
		close(lockfd); /* last: the session is ours until here */
	return code;
fail:
	if (tp.pidfd >= 0)
		close(tp.pidfd);
	if (!takeover) {
		tb_session_unlink(s);
	}
	tb_session_close(s);
	if (lockfd >= 0)
		close(lockfd);
	if (created)
		rmdir(o->out);
	return TB_EXIT_FAIL;
}

int cmd_record(int argc, char **argv)
{
	struct rec_opts o;
	rec_name = !strcmp(argv[0], "profile") ? "profile" : NAME; /* cmd_profile runs us as "profile" */
	record_set_name(rec_name);
	int rc = record_parse_args(argc, argv, &o);
	if (rc)
		return rc;
	flight_signo = o.flight.signo;
	/* a file size limit (ulimit -f) must make writes fail, not kill us */
	signal(SIGXFSZ, SIG_IGN);
	if (o.attach)
		return run_attach(&o);
	if (o.pid)
		return run_pid(&o);

	/* signals: taken synchronously by the main thread (wait_loop); blocked
	 * from here on, so that a SIGINT during start-up stays pending and is
	 * forwarded to CMD once it runs, instead of killing us half-way (no
	 * metadata, a session file left behind).  Every thread created later
	 * inherits the mask; CMD gets `old` back. */
	sigset_t set, old;
	build_sigset(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);

	/* 1. everything that can be refused without creating anything */
	char exe[PATH_MAX];
	if (resolve_cmd(o.cmd[0], exe, sizeof exe))
		return TB_EXIT_FAIL;
	if (o.flight.nconds && (rc = record_flight_check_exe(&o.flight, exe)))
		return rc;
	struct stat sb;
	if (o.out && stat(o.out, &sb) == 0 && !S_ISDIR(sb.st_mode))
		return cli_error(rec_name, "output %s exists and is not a directory", o.out);
	if (o.out && dir_usable(o.out, o.force))
		return TB_EXIT_FAIL;

	/* 2. output directory (none: relay-only), then the session */
	int created = 0;
	if (o.out && tb_output_dir(o.out, &created) < 0)
		return cli_error(rec_name, "%s", tb_errmsg());
	struct tb_session_opts so = {
		.size = sizeof so,
		.path = o.session_path,
		.dir = o.shm_dir,
		.nchannels = o.nchan,
		.channels = o.chan,
	};
	struct tb_session *s = NULL;
	struct tb_engine *e = NULL;
	char cmdline[2048];
	cmdline_of(o.cmd, cmdline, sizeof cmdline);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tb_engine_env env[] = {
		{ "cmdline", cmdline, 0 },
		{ "start_realtime_ns", NULL, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec },
		{ "recorder", "tracebuf record", 0 },
		{ "cmd_pid", NULL, 0 }, /* set below, before any metadata is written */
	};
	struct tb_engine_cfg cfg = { .env = env, .nenv = 3, .relay = o.relay_url ? &o.relay : NULL,
				     .live_period_ns = o.live_period_ns, .trust_writers = o.trust_writers };
	/* the engine copies env at creation, but CMD's pid is known only
	 * after fork: create the engine after the fork, start CMD held on a
	 * pipe until the consumer runs, so that no event can be missed */
	int go[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	char **cenv = NULL;
	pid_t pid = -1;
	struct tb_flight *fl = NULL;

	rc = tb_session_create(&so, &s);
	if (rc < 0) {
		cli_error(rec_name, "cannot create the session: %s", tb_errmsg());
		goto fail;
	}
	cenv = child_env(tb_session_path(s));
	if (!cenv || pipe2(go, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		cli_error(rec_name, "out of resources: %s", strerror(errno));
		goto fail;
	}

	signal(SIGXFSZ, SIG_IGN); /* file size limit: a write error, not death */
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	/* we are the session's consumer from here on, before CMD can run: CMD
	 * runs also when we die while starting (the end of the go pipe; another
	 * recorder may attach, t_record_reattach), and its block-mode producers
	 * must then see a dead consumer and drop, not wait the block timeout
	 * per event for one that never said who it was.  Before fork(): that
	 * system call orders the store before anything CMD does (the memory
	 * order is explained in tb_session_claim_consumer) */
	tb_session_claim_consumer(s);
	pid = fork();
	if (pid < 0) {
		cli_error(rec_name, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		/* child: async-signal-safe calls only */
		char c;
		close(go[1]);
		signal(SIGXFSZ, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		execve(exe, o.cmd, cenv);
		int err = errno;
		if (write(err_pipe[1], &err, sizeof err) < 0) {
			/* nothing left to tell */
		}
		_exit(127);
	}
	close(go[0]);
	go[0] = -1;
	close(err_pipe[1]);
	err_pipe[1] = -1;
	/* test hook: stop (SIGSTOP) where a death lets CMD run undrained, after
	 * fork, before the engine exists; a test kills us there
	 * (t_block_never_waits_for_a_recorder_killed_while_starting) */
	if (getenv("TRACEBUF_TEST_STOP_WHILE_STARTING"))
		raise(SIGSTOP);

	env[3].num = pid;
	cfg.nenv = 4;
	uint32_t root = (uint32_t)pid;
	if (o.kernel)
		wait_held(pid);
	if (o.kernel) {
		o.kcfg.roots = &root; /* CMD's tree: it exists, held on the go pipe */
		o.kcfg.nroots = 1;
		cfg.kernel = &o.kcfg;
	}
	/* a flight recorder without -o writes snapshots only: no engine */
	if (o.out || o.relay_url) {
		rc = tb_engine_create(s, o.out, &cfg, &e);
		if (rc < 0 || tb_engine_start(e) < 0) {
			cli_error(rec_name, "%s", tb_errmsg());
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			goto fail;
		}
	}
	if (o.flight.dir && !(fl = record_flight_start(s, &o.flight, o.quiet))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto fail;
	}
	if (!o.quiet)
		cli_msg(stderr, "tracebuf %s: session %s (for tracebuf snapshot, stat, list, enable, disable)",
			rec_name, tb_session_path(s));
	double t0 = record_now_s();
	close(go[1]); /* CMD may start (also when we die: a recorder can attach, t_record_reattach) */
	go[1] = -1;
	int exec_err = 0;
	if (read(err_pipe[0], &exec_err, sizeof exec_err) == (ssize_t)sizeof exec_err) {
		cli_error(rec_name, "cannot run %s: %s", exe, strerror(exec_err));
		waitpid(pid, NULL, 0);
		goto fail;
	}
	close(err_pipe[0]);
	err_pipe[0] = -1;

	int show = !o.quiet && isatty(2);
	int status = wait_loop(s, e, fl, pid, show, t0, NULL, o.quiet);
	/* the flight recorder first: a crash snapshot while the rings are all there */
	int flight_failed = fl ? record_flight_end(fl, &o.flight, pid, RECORD_END_STATUS, status, 0, o.quiet) : 0;
	fl = NULL;
	if (!e) {
		int code = exit_code_of(status);
		tb_session_unlink(s);
		tb_session_close(s);
		free_child_env(cenv);
		return code == 0 && flight_failed ? TB_EXIT_FAIL : code;
	}

	/* 3. CMD is gone: close every partial packet, drain, and take what a
	 * dead producer may have left, if no traced process remains */
	unsigned live = tb_session_live_procs(s, (uint32_t)getpid());
	if (live && !o.quiet)
		fprintf(stderr, "tracebuf %s: %u traced process%s still run%s; what they write from now "
				"on is not recorded\n", rec_name, live, live == 1 ? "" : "es", live == 1 ? "s" : "");
	rc = tb_engine_finish(e, TB_FINISH_SNAPSHOT | (live ? 0 : TB_FINISH_DEAD));
	record_print_warnings(e);
	record_warn_unmatched(s, o.dflt.events);
	if (!o.quiet)
		record_summary(s, e, o.out, record_now_s() - t0, !live);
	if (o.out && o.out == o.outbuf && !o.quiet)
		cli_msg(stderr, "tracebuf %s: trace in %s (tracebuf report %s)", rec_name, o.out, o.out);
	record_explain_empty(s, e, exe, status, o.dflt.events);
	if (!o.flight.dir)
		record_say_ignored_triggers(s, 0); /* a new session: every trigger was CMD's */
	int code = exit_code_of(status);
	if (rc < 0) {
		cli_error(rec_name, "%s", tb_engine_errmsg(e));
		if (code == 0)
			code = TB_EXIT_FAIL;
	} else if (record_relay_only_lost(o.out, e)) {
		if (code == 0)
			code = TB_EXIT_FAIL;
	} else if (code == 0 && record_damaged_input(e)) {
		code = TB_EXIT_PARTIAL; /* the trace is whole, but some data was dropped as invalid */
	}
	if (code == 0 && flight_failed)
		code = TB_EXIT_FAIL; /* a snapshot could not be written (said when it was skipped) */
	tb_engine_destroy(e);
	tb_session_unlink(s);
	tb_session_close(s);
	free_child_env(cenv);
	return code;

fail:
	if (go[0] >= 0) close(go[0]);
	if (go[1] >= 0) close(go[1]);
	if (err_pipe[0] >= 0) close(err_pipe[0]);
	if (err_pipe[1] >= 0) close(err_pipe[1]);
	record_flight_free(fl);
	tb_engine_destroy(e);
	free_child_env(cenv);
	if (s) {
		tb_session_release_consumer(s);
		tb_session_unlink(s);
		tb_session_close(s);
	}
	if (created)
		rmdir(o.out); /* only if still empty */
	return TB_EXIT_FAIL;
}
