/* SPDX-License-Identifier: MIT */
/*
 * record_args.h - `tracebuf record`'s command line: its usage text and the
 * options parsed into struct rec_opts (record_args.c), which cmd_record.c
 * runs.  Every refusal is a usage error said here (exit 2) before anything
 * is created.
 */
#ifndef TB_TOOLS_RECORD_ARGS_H
#define TB_TOOLS_RECORD_ARGS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <tracebuf/session.h>

#include "kernel/kernel.h"
#include "relay/relay.h"
#include "record_flight.h"

struct rec_opts {
	const char *out;
	const char *attach;
	pid_t pid; /* --pid */
	const char *session_path;
	const char *shm_dir;
	struct tb_channel_opts chan[TB_MAX_CHANNELS];
	char chan_names[TB_MAX_CHANNELS][TB_CHAN_NAME_MAX];
	unsigned nchan;
	struct tb_channel_opts dflt; /* --sb-size & co: the default channel, or every --channel */
	int quiet;
	int force;
	char outbuf[64]; /* the default -o */
	char **cmd;
	/* --relay: also stream to lttng-relayd (src/relay/relay.h) */
	const char *relay_url;
	const char *relay_name;   /* --session-name */
	const char *relay_host;   /* --hostname */
	uint64_t live_ns;         /* --live-timer */
	uint64_t live_period_ns;  /* --live-period (tb_engine_cfg.live_period_ns: 0 default, UINT64_MAX off) */
	uint64_t relay_timeout_ns; /* --relay-timeout (0: the default) */
	struct tb_relay_cfg relay;
	int trust_writers;         /* --trust-writers (tb_engine_cfg.trust_writers) */
	/* --kernel: the sched tracepoints (src/kernel/) */
	int kernel;
	struct tb_kernel_cfg kcfg;
	struct record_flight_opts flight; /* --snapshot-dir & co (record_flight.h) */
};

/* record --help's text */
void record_usage(FILE *f);

/* argv (argv[0] "record" or "profile") into *o, zeroed first, the channel
 * shorthands applied to every channel: 0, or the exit code of a usage error
 * it said.  -h prints the help and exits 0. */
int record_parse_args(int argc, char **argv, struct rec_opts *o);

#endif
