/* SPDX-License-Identifier: MIT */
/*
 * attach.h - `tracebuf record --pid`: the request a recorder writes into a
 * running program (process_vm_writev) so that its library attaches to a
 * session by itself, at its next event (docs/DESIGN.md, "Attaching to a
 * running program").  A private protocol between the recorder and the
 * library of the same version: the recorder checks the symbol's size.
 *
 * The recorder writes tb_attach_request (magic, pid, path), then
 * tb_disabled_mask = TB_ATTACH_REQUESTED.  Every TB_EVENT of a class with no
 * session then calls tb_emit(), which finds no producer session and calls
 * tb_attach_poll(): one thread attaches, re-points every class into the
 * session, writes `result` (0, or -errno and `msg`) and resets
 * tb_disabled_mask to 0.
 */
#ifndef TB_PRODUCER_ATTACH_H
#define TB_PRODUCER_ATTACH_H

#include <stdint.h>

#include <tracebuf/session.h>

/* tb_disabled_mask's value while a recorder asks: a bit above every channel
 * (TB_MAX_CHANNELS = 16), so that a class bound to nothing in a session
 * still writes to no channel (tb_emit masks the channels) */
#define TB_ATTACH_REQUESTED 0x80000000u
#define TB_ATTACH_MAGIC 0x54424154u /* "TBAT" */
#define TB_ATTACH_PENDING 1          /* result before the program answers */
#define TB_ATTACH_PATH_MAX 4096

struct tb_attach_request {
	uint32_t magic;   /* TB_ATTACH_MAGIC when a request is there */
	uint32_t pid;     /* the process asked: a child forked since does not answer */
	int32_t result;   /* written by the program: 0 attached, -errno refused, 1 pending */
	uint32_t reserved;
	char msg[256];    /* why refused: the attaching thread's tb_errmsg() */
	char path[TB_ATTACH_PATH_MAX]; /* the session file, NUL-terminated */
};

/* .bss of the library: never touched unless a recorder writes it */
extern TB_API struct tb_attach_request tb_attach_request;

#endif
