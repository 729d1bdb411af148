/* SPDX-License-Identifier: MIT */
/*
 * record_args.c - `tracebuf record`'s command line (record_args.h): the usage
 * text, the options and their bounds (the library's, said as usage errors:
 * exit 2, before a session is created), --channel's NAME:SB_SIZE:COUNT:MODE,
 * and which options go together (--attach, --pid, --kernel, --relay, the
 * flight recorder's: record_flight_check).  cmd_record.c runs the result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/format.h"
#include "record_args.h"

#define NAME "record"

void record_usage(FILE *f)
{
	fprintf(f,
		"usage: tracebuf record [options] [-o DIR] -- CMD [ARGS...]\n"
		"       tracebuf record [options] --relay URL [-o DIR] -- CMD [ARGS...]\n"
		"       tracebuf record --attach SESSION [options] -o DIR | --relay URL\n"
		"       tracebuf record --pid PID [options] [-o DIR]\n"
		"\n"
		"Runs CMD with TRACEBUF_SESSION set, so that CMD and all its children write to a new\n"
		"session, and drains it into DIR (CTF 1.8, readable by babeltrace2).  Exits with\n"
		"CMD's exit status (128+N if it died of signal N).\n"
		"\n"
		"  -o, --output DIR          trace directory (created; must be empty; default\n"
		"                            trace-YYYYMMDD-HHMMSS here); with --relay and no -o, the\n"
		"                            relay daemon holds the only copy\n"
		"  -f, --force               DIR may hold a trace already (CTF metadata and stream\n"
		"                            files only, no recorder running): its files are replaced.\n"
		"                            Anything else in DIR: refused, nothing removed\n"
		"  --channel NAME:SB_SIZE:COUNT:MODE[:vtid]\n"
		"                            one channel (repeatable), e.g. chan:256K:8:discard;\n"
		"                            :vtid: its events carry their thread id (as --vtid)\n"
		"  --sb-size SIZE            sub-buffer size of the default channel (256K)\n"
		"  --sb-count N              sub-buffers per CPU (a 16 MiB ring; less on many CPUs)\n"
		"  --mode MODE               discard | overwrite | block (discard)\n"
		"  --events PATTERNS         event classes to record, globs, comma separated (*)\n"
		"  --flush-period DUR        close a CPU's partial packet idle that long (1s)\n"
		"  --live-period DUR         every event is on disk (and sent) within DUR, whatever\n"
		"                            the rate: a partial packet is closed when its first\n"
		"                            event is that old (1s; 0: off)\n"
		"  --watermark N             full sub-buffers that wake the consumer (an eighth\n"
		"                            of the ring: 8 of the default 64)\n"
		"  --block-timeout DUR       block mode: longest wait of a producer (100ms, at most 10s)\n"
		"  --no-attribution          no tracebuf:thread records\n"
		"  --vtid                    every event carries the id of the thread that wrote it\n"
		"                            (CTF event context vtid, as LTTng's: babeltrace2, Trace\n"
		"                            Compass); 4 bytes more per event\n"
		"  --session PATH            session file to create (default: new file in /dev/shm)\n"
		"  --shm-dir DIR             directory of the session file ($TRACEBUF_SHM_DIR)\n"
		"  --attach SESSION          drain an existing session instead of running CMD; DIR may\n"
		"                            hold the trace a killed consumer left: it is continued\n"
		"  --pid PID                 trace a program that is already running (linked with\n"
		"                            libtracebuf, started without tracebuf): it attaches at its\n"
		"                            next event; ^C detaches, the program runs on.  A second\n"
		"                            --pid takes over the session (DIR may hold the trace a\n"
		"                            killed recorder left).  Needs ptrace permission over PID\n"
		"                            (same user with yama ptrace_scope 0, or root).  With\n"
		"                            --kernel: the kernel's events of PID's tree (its threads,\n"
		"                            what it starts); with --mode overwrite --snapshot-dir: a\n"
		"                            flight recorder attached later (its end seen by a pidfd)\n"
		"  -q, --quiet               no status line, no summary\n"
		"  --relay net://HOST[:CONTROL_PORT[:DATA_PORT]]\n"
		"                            also stream every packet to LTTng's relay daemon\n"
		"                            (lttng-relayd; ports 5342, 5343 by default): viewers follow\n"
		"                            it live (babeltrace2 -i lttng-live); -o DIR keeps a whole\n"
		"                            local copy as well\n"
		"  --session-name NAME       the relay session's name (default: CMD's name)\n"
		"  --hostname NAME           the host name the relay files it under (default: this host's)\n"
		"  --live-timer DUR          idle streams report in at least this often, for live viewers\n"
		"                            (1s; every tenth of --live-period when sooner; 0: off)\n"
		"  --relay-timeout DUR       connecting, a whole reply or a whole packet that takes longer:\n"
		"                            the relay is lost, tried again later (5s; 10ms..10min)\n"
		"  --trust-writers           CMD's writers never change a packet once committed (your own\n"
		"                            program, not a hostile one): packets are checked, written\n"
		"                            and sent where they are in the ring, without the recorder's\n"
		"                            private copy (cheaper: docs/FLEET.md).  A sub-buffer goes\n"
		"                            back to the producers once the relay sent it: a slow relay\n"
		"                            holds the rings (up to its 16 MiB queue).  A packet changed\n"
		"                            after its check can make the copy unreadable\n"
		"                            (docs/RELIABILITY.md)\n"
		"  --kernel[=LIST]           also the kernel's scheduling events of CMD's process tree\n"
		"                            (--pid: PID's; --attach: the session's processes)\n"
		"                            (perf's sched tracepoints, one stream per CPU, same clock;\n"
		"                            LIST: sched_switch,sched_waking,... or the sets sched (the\n"
		"                            default), syscalls (the tree's system calls), page_faults;\n"
		"                            needs root, CAP_PERFMON or perf_event_paranoid <= 1: docs/KERNEL.md;\n"
		"                            with --relay the relay daemon gets them too)\n"
		"  --kernel-all              with --kernel: every CPU's events, not only CMD's tree\n"
		"  --kernel-pages N          pages of each CPU's perf ring (a power of two; default 256)\n"
		"\n"
		RECORD_FLIGHT_USAGE
		"\n"
		"Durations: 250ms, 1s, 500us (a bare number is ms).  Sizes: 4096, 64K, 1M.\n"
		"Overwrite mode is a flight recorder: nothing is drained while CMD runs\n"
		"(use 'tracebuf snapshot'), a final snapshot is written when CMD exits.\n"
		"Exit: CMD's status; when CMD exited 0: 1 when recording failed (a write error), 3 when\n"
		"data of the session was dropped as invalid (the trace says how much); 2 usage.\n");
}

enum {
	OPT_CHANNEL = 256, OPT_SB_SIZE, OPT_SB_COUNT, OPT_MODE, OPT_EVENTS, OPT_FLUSH, OPT_WATERMARK,
	OPT_BLOCK_TIMEOUT, OPT_NO_ATTR, OPT_VTID, OPT_SESSION, OPT_SHM_DIR, OPT_ATTACH,
	OPT_RELAY, OPT_RELAY_NAME, OPT_RELAY_HOST, OPT_LIVE_TIMER, OPT_LIVE_PERIOD, OPT_RELAY_TIMEOUT, OPT_KERNEL,
	OPT_KERNEL_ALL, OPT_KERNEL_PAGES, OPT_PID, OPT_TRUST,
};


static int parse_mode(const char *s, uint32_t *mode)
{
	if (!strcmp(s, "discard"))
		*mode = TB_DISCARD;
	else if (!strcmp(s, "overwrite"))
		*mode = TB_OVERWRITE;
	else if (!strcmp(s, "block"))
		*mode = TB_BLOCK;
	else
		return -EINVAL;
	return 0;
}

static int usage_error(const char *fmt, const char *arg)
{
	return cli_usage(NAME, fmt, arg);
}

/* NAME:SB_SIZE:COUNT:MODE[:vtid]; empty fields take the defaults */
/* The library's bounds (src/core/format.h TB_MAX_SB_SIZE, TB_MIN/MAX_SB_COUNT,
 * checked again by src/session/layout.c): said here as usage errors, exit 2,
 * rather than as a failure to create the session, exit 1 */
static int sb_size_ok(uint64_t v)
{
	long page = sysconf(_SC_PAGESIZE);
	return v && !(v & (v - 1)) && v >= (uint64_t)(page > 0 ? page : 4096) && v <= (256u << 20);
}

static int sb_count_ok(uint64_t v)
{
	return v >= 2 && v <= 65536 && !(v & (v - 1));
}

static int parse_channel(struct rec_opts *o, const char *arg)
{
	if (o->nchan >= TB_MAX_CHANNELS)
		return usage_error("at most 16 channels (--channel %s)", arg);
	char buf[256];
	if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
		return usage_error("--channel %s: too long", arg);
	char *f[5] = { 0 };
	char *p = buf;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		p = strchr(p, ':');
		if (!p) {
			if (i < 3)
				return usage_error("--channel %s: want NAME:SB_SIZE:COUNT:MODE[:vtid]", arg);
			break;
		}
		if (i == 4)
			return usage_error("--channel %s: want NAME:SB_SIZE:COUNT:MODE[:vtid]", arg);
		*p++ = 0;
	}
	struct tb_channel_opts *c = &o->chan[o->nchan];
	memset(c, 0, sizeof *c);
	c->size = sizeof *c;
	if (!*f[0] || strlen(f[0]) >= TB_CHAN_NAME_MAX)
		return usage_error("--channel %s: the name must have 1 to 31 characters", arg);
	for (const char *q = f[0]; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
		      *q == '_' || *q == '-'))
			return usage_error("--channel %s: the name may hold only A-Z a-z 0-9 _ -", arg);
	snprintf(o->chan_names[o->nchan], TB_CHAN_NAME_MAX, "%s", f[0]);
	c->name = o->chan_names[o->nchan];
	if (*f[1] && (cli_parse_size(f[1], &c->sb_size) < 0 || !sb_size_ok(c->sb_size)))
		return usage_error("--channel %s: bad sub-buffer size (a power of two, at least 4096 and at most "
				   "256M; empty for the default)", arg);
	uint64_t n = 0;
	if (*f[2] && (cli_parse_size(f[2], &n) < 0 || !sb_count_ok(n)))
		return usage_error("--channel %s: bad sub-buffer count (a power of two from 2 to 65536; empty for "
				   "the default)", arg);
	c->sb_count = (uint32_t)n;
	if (*f[3] && parse_mode(f[3], &c->mode) < 0)
		return usage_error("--channel %s: mode must be discard, overwrite or block", arg);
	if (f[4] && strcmp(f[4], "vtid"))
		return usage_error("--channel %s: the fifth field may only be 'vtid'", arg);
	c->vtid = f[4] != NULL;
	o->nchan++;
	return 0;
}

int record_parse_args(int argc, char **argv, struct rec_opts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, 0, 'o' },
		{ "channel", required_argument, 0, OPT_CHANNEL },
		{ "sb-size", required_argument, 0, OPT_SB_SIZE },
		{ "sb-count", required_argument, 0, OPT_SB_COUNT },
		{ "mode", required_argument, 0, OPT_MODE },
		{ "events", required_argument, 0, OPT_EVENTS },
		{ "flush-period", required_argument, 0, OPT_FLUSH },
		{ "watermark", required_argument, 0, OPT_WATERMARK },
		{ "block-timeout", required_argument, 0, OPT_BLOCK_TIMEOUT },
		{ "no-attribution", no_argument, 0, OPT_NO_ATTR },
		{ "vtid", no_argument, 0, OPT_VTID },
		{ "session", required_argument, 0, OPT_SESSION },
		{ "shm-dir", required_argument, 0, OPT_SHM_DIR },
		{ "attach", required_argument, 0, OPT_ATTACH },
		{ "pid", required_argument, 0, OPT_PID },
		{ "relay", required_argument, 0, OPT_RELAY },
		{ "session-name", required_argument, 0, OPT_RELAY_NAME },
		{ "hostname", required_argument, 0, OPT_RELAY_HOST },
		{ "live-timer", required_argument, 0, OPT_LIVE_TIMER },
		{ "live-period", required_argument, 0, OPT_LIVE_PERIOD },
		{ "relay-timeout", required_argument, 0, OPT_RELAY_TIMEOUT },
		{ "trust-writers", no_argument, 0, OPT_TRUST },
		{ "kernel", optional_argument, 0, OPT_KERNEL },
		{ "kernel-all", no_argument, 0, OPT_KERNEL_ALL },
		{ "kernel-pages", required_argument, 0, OPT_KERNEL_PAGES },
		{ "quiet", no_argument, 0, 'q' },
		{ "force", no_argument, 0, 'f' },
		{ "help", no_argument, 0, 'h' },
		RECORD_FLIGHT_LONG_OPTIONS,
		{ 0, 0, 0, 0 },
	};
	/* cmd_profile runs us as "profile": getopt's complaints name it */
	const char *rec_name = argc > 0 && !strcmp(argv[0], "profile") ? "profile" : NAME;
	memset(o, 0, sizeof *o);
	o->dflt.size = sizeof o->dflt;
	o->live_ns = 1000000000ull;
	optind = 1;
	int c;
	uint64_t v;
	while ((c = cli_getopt(rec_name, argc, argv, "+o:qfh", lo)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'f': o->force = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': record_usage(stdout); exit(TB_EXIT_OK);
		case OPT_CHANNEL:
			if ((c = parse_channel(o, optarg)))
				return c;
			break;
		case OPT_SB_SIZE:
			if (cli_parse_size(optarg, &o->dflt.sb_size) < 0)
				return usage_error("--sb-size %s: not a size (e.g. 4096, 64K, 1M)", optarg);
			if (o->dflt.sb_size == 0) /* 0 would mean "the default" to the library */
				return usage_error("--sb-size %s: a sub-buffer holds at least a page (4096); leave "
						   "the option out for the default", optarg);
			if (!sb_size_ok(o->dflt.sb_size))
				return usage_error("--sb-size %s: a power of two from the page size (4K) to 256M, e.g. "
						   "4K, 64K, 1M", optarg);
			break;
		case OPT_SB_COUNT:
			if (cli_parse_size(optarg, &v) < 0 || v > UINT32_MAX)
				return usage_error("--sb-count %s: not a count", optarg);
			if (v < 2)
				return usage_error("--sb-count %s: a ring has at least 2 sub-buffers; leave the option "
						   "out for the default", optarg);
			if (!sb_count_ok(v))
				return usage_error("--sb-count %s: a power of two from 2 to 65536", optarg);
			o->dflt.sb_count = (uint32_t)v;
			break;
		case OPT_MODE:
			if (parse_mode(optarg, &o->dflt.mode) < 0)
				return usage_error("--mode %s: want discard, overwrite or block", optarg);
			break;
		case OPT_EVENTS:
			if (!*optarg || strspn(optarg, " ,") == strlen(optarg))
				return usage_error("--events '%s': no pattern; give globs such as 'app:*' (or leave "
						   "the option out for every event)", optarg);
			o->dflt.events = optarg;
			break;
		case OPT_FLUSH:
			if (cli_parse_duration(optarg, &o->dflt.flush_period_ns) < 0 || !o->dflt.flush_period_ns ||
			    o->dflt.flush_period_ns > TB_MAX_FLUSH_PERIOD_NS)
				return usage_error("--flush-period %s: want a duration above 0 and up to 1h, such as 250ms or 1s (" CLI_DURATION_UNITS ")", optarg);
			break;
		case OPT_WATERMARK:
			if (cli_parse_size(optarg, &v) < 0 || v == 0 || v > UINT32_MAX)
				return usage_error("--watermark %s: want a count of sub-buffers >= 1", optarg);
			o->dflt.watermark = (uint32_t)v;
			break;
		case OPT_BLOCK_TIMEOUT:
			if (cli_parse_duration(optarg, &o->dflt.block_timeout_ns) < 0 ||
			    o->dflt.block_timeout_ns > TB_MAX_BLOCK_TIMEOUT_NS)
				return usage_error("--block-timeout %s: want a duration up to 10s, such as 100ms (" CLI_DURATION_UNITS ")", optarg);
			break;
		case OPT_NO_ATTR: o->dflt.no_attribution = 1; break;
		case OPT_VTID: o->dflt.vtid = 1; break;
		case OPT_SESSION: o->session_path = optarg; break;
		case OPT_SHM_DIR: o->shm_dir = optarg; break;
		case OPT_ATTACH: o->attach = optarg; break;
		case OPT_PID:
			if (cli_parse_uint(optarg, INT32_MAX, &v) < 0 || v == 0)
				return usage_error("--pid %s: want a process id (a positive number)", optarg);
			o->pid = (pid_t)v;
			break;
		case OPT_RELAY: {
			char host[256];
			unsigned cp, dp;
			if (tb_relay_parse_url(optarg, host, sizeof host, &cp, &dp) < 0)
				return usage_error("--relay: %s", tb_errmsg());
			o->relay_url = optarg;
			break;
		}
		case OPT_KERNEL:
			o->kernel = 1;
			o->kcfg.list = optarg;
			break;
		case OPT_KERNEL_ALL: o->kernel = 1; o->kcfg.all = 1; break;
		case OPT_KERNEL_PAGES: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || !n || (n & (n - 1)) || n > 65536)
				return usage_error("--kernel-pages %s: want a power of two, 1 to 65536", optarg);
			o->kernel = 1;
			o->kcfg.ring_pages = (uint32_t)n;
			break;
		}
		case OPT_RELAY_NAME:
			if (!*optarg || strchr(optarg, '/') || strlen(optarg) > 200)
				return usage_error("--session-name '%s': 1..200 characters, no '/'", optarg);
			o->relay_name = optarg;
			break;
		case OPT_RELAY_HOST:
			if (!*optarg || strchr(optarg, '/') || strlen(optarg) > 63)
				return usage_error("--hostname '%s': 1..63 characters, no '/'", optarg);
			o->relay_host = optarg;
			break;
		case OPT_LIVE_TIMER:
			if (cli_parse_duration(optarg, &o->live_ns) < 0 || o->live_ns > 3600000000000ull)
				return usage_error("--live-timer %s: not a duration up to 1h (e.g. 1s, 500ms; " CLI_DURATION_UNITS "; 0: off)", optarg);
			break;
		case OPT_LIVE_PERIOD:
			if (cli_parse_duration(optarg, &o->live_period_ns) < 0 || o->live_period_ns > 3600000000000ull ||
			    (o->live_period_ns && o->live_period_ns < 10000000ull))
				return usage_error("--live-period %s: want a duration from 10ms to 1h (e.g. 1s, 500ms; " CLI_DURATION_UNITS "; 0: off)",
						   optarg);
			if (!o->live_period_ns)
				o->live_period_ns = UINT64_MAX;
			break;
		case OPT_RELAY_TIMEOUT:
			if (cli_parse_duration(optarg, &o->relay_timeout_ns) < 0 || o->relay_timeout_ns < 10000000ull ||
			    o->relay_timeout_ns > 600000000000ull)
				return usage_error("--relay-timeout %s: want a duration from 10ms to 10min (e.g. 5s; " CLI_DURATION_UNITS ")", optarg);
			break;
		case OPT_TRUST: o->trust_writers = 1; break;
		default:
			if (c >= OPT_FLIGHT_FIRST_ && c <= OPT_FLIGHT_LAST_) {
				if ((c = record_flight_option(&o->flight, c, optarg)))
					return c;
				break;
			}
			/* '?': cli_getopt said which */
			fprintf(stderr, "(tracebuf %s --help for the options)\n", rec_name);
			return TB_EXIT_USAGE;
		}
	}
	if (o->pid && o->attach)
		return usage_error("%s", "--attach SESSION or --pid PID, not both");
	if (!o->out && o->attach && !o->relay_url)
		return usage_error("%s", "no output: give -o DIR, or --relay URL, or both");
	if (!o->out && !o->relay_url && !o->flight.dir) { /* a new trace-YYYYMMDD-HHMMSS here, said in the summary */
		cli_default_out("trace", o->outbuf, sizeof o->outbuf);
		o->out = o->outbuf;
	}
	if ((o->relay_name || o->relay_host) && !o->relay_url)
		return usage_error("%s", "--session-name and --hostname name a relay session: give --relay URL");
	if (o->relay_url) {
		const char *nm = o->relay_name;
		if (!nm && optind < argc && !o->attach) {
			nm = strrchr(argv[optind], '/');
			nm = nm ? nm + 1 : argv[optind];
		}
		o->relay = (struct tb_relay_cfg){ .url = o->relay_url, .session_name = nm && *nm ? nm : "tracebuf",
						  .hostname = o->relay_host,
						  .live_timer_us = (uint32_t)(o->live_ns / 1000),
						  .timeout_ms = (uint32_t)(o->relay_timeout_ns / 1000000) };
	}
	if (o->attach) {
		if (o->flight.given)
			return record_flight_check(&o->flight, NULL, 0, 1);
		if (optind < argc)
			return usage_error("--attach drains an existing session: no command (got '%s')", argv[optind]);
		return 0;
	}
	if (o->pid) {
		if (o->session_path)
			return usage_error("%s", "--pid names its session itself (SHM_DIR/tracebuf-pid-PID-START): no --session");
		if (optind < argc)
			return usage_error("--pid traces a running program: no command (got '%s')", argv[optind]);
	} else if (optind >= argc) {
		return usage_error("%s", "no command to trace: tracebuf record -o DIR -- CMD [ARGS]");
	} else {
		o->cmd = argv + optind;
	}
	/* the shorthand options apply to the default channel, or to every
	 * --channel where that did not say otherwise */
	if (!o->nchan) {
		o->chan[0] = o->dflt;
		o->nchan = 1;
	} else {
		for (unsigned i = 0; i < o->nchan; i++) {
			struct tb_channel_opts *ch = &o->chan[i];
			if (!ch->sb_size) ch->sb_size = o->dflt.sb_size;
			if (!ch->sb_count) ch->sb_count = o->dflt.sb_count;
			if (!ch->mode) ch->mode = o->dflt.mode;
			ch->events = o->dflt.events;
			ch->flush_period_ns = o->dflt.flush_period_ns;
			ch->watermark = o->dflt.watermark;
			ch->block_timeout_ns = o->dflt.block_timeout_ns;
			ch->no_attribution = o->dflt.no_attribution;
			ch->vtid |= o->dflt.vtid; /* --vtid: every channel; :vtid: this one */
		}
	}
	if (o->trust_writers && !o->out && !o->relay_url)
		return usage_error("%s", "--trust-writers takes packets out of the rings in place for -o DIR or --relay URL; "
					 "a flight recorder's snapshots always copy them: give -o DIR or --relay URL, or drop it");
	if (o->kernel && !o->out && !o->relay_url)
		return usage_error("%s", "--kernel writes the kernel's streams into the trace directory or to the relay "
					 "daemon: give -o DIR or --relay URL (a flight recorder's snapshots do not take them yet)");
	return record_flight_check(&o->flight, o->chan, o->nchan, 0);
}

