/* SPDX-License-Identifier: MIT */
/*
 * record_pid.h - `tracebuf record --pid PID`: finding a running program's
 * libtracebuf, its per-pid session, and asking it to attach
 * (record_pid.c; docs/DESIGN.md, "Attaching to a running program").
 */
#ifndef TB_TOOLS_RECORD_PID_H
#define TB_TOOLS_RECORD_PID_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct record_pid {
	pid_t pid;
	unsigned long long start;  /* field 22 of /proc/PID/stat: a recycled pid is another process */
	char comm[32];
	uint64_t mask_addr;        /* tb_disabled_mask in the program */
	uint64_t req_addr;         /* tb_attach_request in the program */
	char lib[PATH_MAX];        /* the file defining them (libtracebuf.so or the executable) */
	char session[PATH_MAX];    /* DIR/tracebuf-pid-PID-START */
	int exists;                /* that file exists (an earlier record --pid made it) */
	int mapped;                /* the program maps it: attached already */
	int said;                  /* the attach (or its refusal) was said */
	int refused;               /* the program refused the session (said) */
	/* the end of the process, seen from outside (not its parent: no waitpid) */
	int pidfd;                 /* pidfd_open(): readable once it has ended; -1: none (old kernel) */
	int ended;                 /* it ended (pidfd, or /proc: gone or a zombie) */
	int status_known;          /* status holds its wait status, read from /proc/PID/stat (exit_code)
				    * while it was a zombie: unknown when its parent reaped it first */
	int status;
};

/* Everything that can be refused before anything is created: the process
 * exists, is ours, links libtracebuf, is not traced by another session.
 * Prints the reason; returns 0 or an exit code. */
int record_pid_find(const char *cmd, pid_t pid, const char *shm_dir, struct record_pid *t);
/* Writes the request (the session path, then tb_disabled_mask); 0 or an exit code (said). */
int record_pid_request(const char *cmd, struct record_pid *t);
/* 1 attached, 0 still asked, -1 refused (msg says why, from the program), -2 cancelled. */
int record_pid_state(struct record_pid *t, char *msg, size_t cap);
/* Withdraws a request the program has not answered yet. */
void record_pid_cancel(struct record_pid *t);
/* 1 while the same process (pid and start time) lives and is not a zombie. */
int record_pid_alive(const struct record_pid *t);
/* Opens t->pidfd on the process found (after record_pid_find; -1 when the
 * kernel has no pidfd_open: the end is then seen by polling /proc). */
void record_pid_open(struct record_pid *t);
/* The process ended (its pidfd said so, or /proc): sets ended, and the wait
 * status when /proc/PID/stat still shows it (a zombie its parent has not
 * reaped yet; field 52, exit_code, Linux 3.5).  Call it at once. */
void record_pid_note_end(struct record_pid *t);
/* 1 when the process has ended: its pidfd readable (all its threads gone), or,
 * without one, /proc says it is gone or a zombie (a main thread that called
 * pthread_exit() looks the same there while the others run: only the pidfd
 * tells them apart). */
int record_pid_gone(const struct record_pid *t);
/* Removes this user's per-pid session files in dir whose process is gone. */
void record_pid_sweep(const char *cmd, const char *dir, int quiet);

#endif
