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
/* Removes this user's per-pid session files in dir whose process is gone. */
void record_pid_sweep(const char *cmd, const char *dir, int quiet);

#endif
