/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/session.h - create, attach to and inspect a tracing session.
 *
 * A session is one file (in /dev/shm by default) holding the map, the event
 * registry and one ring of sub-buffers per (channel, CPU).  Any process of
 * the same user can attach to it by path.  See docs/DESIGN.md.
 *
 * Errors: every function returns 0 (or a non-negative value) on success and
 * a negative errno on failure; tb_errmsg() then gives a sentence that names
 * the file, the value and what to do.  The library never prints.
 */
#ifndef TRACEBUF_SESSION_H
#define TRACEBUF_SESSION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_API __attribute__((visibility("default")))

struct tb_session; /* opaque */

enum tb_mode_opt {
	TB_DISCARD = 1,   /* ring full: drop the new event and count it */
	TB_OVERWRITE = 2, /* ring full: reuse the oldest sub-buffer (flight recorder) */
	TB_BLOCK = 3,     /* ring full: wait for the consumer up to block_timeout_ns */
};

/*
 * Channel options.  `size` must be sizeof(struct tb_channel_opts) (so the
 * struct can grow); zero fields take the documented default.
 */
struct tb_channel_opts {
	size_t size;
	const char *name;          /* default "chan"; [A-Za-z0-9_-], < 32 bytes */
	uint64_t sb_size;          /* power of two >= page size; default 256 KiB */
	uint32_t sb_count;         /* power of two >= 2; default: a 16 MiB ring per CPU (2 MiB on
				    * machines with many CPUs: all rings at most 128 MiB) */
	uint32_t mode;             /* enum tb_mode_opt; default TB_DISCARD */
	uint32_t no_attribution;   /* 1: no tracebuf:thread records */
	uint32_t watermark;        /* full sub-buffers that wake the consumer; default sb_count / 8 (at least 1) */
	uint64_t block_timeout_ns; /* TB_BLOCK; default 100 ms, at most 10 s (more is refused) */
	uint64_t flush_period_ns;  /* default 1 s, at most 1 hour (more is refused) */
	const char *events;        /* glob patterns, comma separated; default "*" */
	uint32_t vtid;             /* default 0 (off); 1: every event carries the writing thread's tid
				    * (CTF stream event context "vtid", as LTTng's vtid context):
				    * 4 more bytes per event; 0 or 1, anything else is refused */
};

struct tb_session_opts {
	size_t size;                /* sizeof(struct tb_session_opts) */
	const char *path;           /* session file; default: a new file in `dir` */
	const char *dir;            /* default $TRACEBUF_SHM_DIR or /dev/shm */
	uint32_t ncpus;             /* rings per channel; default: possible CPUs (rseq; fewer is
	                               refused) or 8 per CPU (fallback) */
	uint32_t nchannels;         /* 0 means one default channel */
	const struct tb_channel_opts *channels;
	uint32_t max_events;        /* registry capacity; default 256 */
	uint32_t force_fallback;    /* 1: no rseq (also $TRACEBUF_NO_RSEQ=1) */
	uint32_t force_monotonic;   /* 1: CLOCK_MONOTONIC even if the TSC is usable */
	/* tb_session_start() only (consumer.h; docs/KERNEL.md): also record the
	 * kernel's sched events of this process (kernel_all: of every process)
	 * into the trace: NULL no, "" the default tracepoints, else a
	 * comma-separated list ("sched_switch,sched_waking"); kernel_pages:
	 * pages of each CPU's perf ring (a power of two), 0 the default.
	 * tb_session_create() ignores them. */
	const char *kernel;
	uint32_t kernel_all;
	uint32_t kernel_pages;
	/* tb_session_start() only (docs/RECORDER.md "live period"): no record
	 * waits longer than this in an open packet before followers (dump
	 * --follow, lttng-live) can read it, whatever the rate.  0: the default
	 * (1 s); UINT64_MAX: off (packets close when full or idle); otherwise
	 * 10 ms to 1 hour, anything else is refused.  record --live-period. */
	uint64_t live_period_ns;
};

/*
 * tb_session_create - create a session file and map it.
 * Not async-signal-safe.  The file is created 0600 with O_EXCL|O_NOFOLLOW in
 * a directory that must not be writable by others (unless sticky and owned
 * by us or root) nor be a symbolic link; the directory is opened once and
 * the file created, published and later removed relative to it.  Pages of
 * the rings are not touched.
 * Return: 0, -EINVAL (bad option, see tb_errmsg), -EEXIST, -ENOSPC (the
 * directory cannot hold the rings; tb_errmsg says how much is needed),
 * -EACCES/-EPERM (unsafe directory), other -errno from the system.
 */
TB_API int tb_session_create(const struct tb_session_opts *opts, struct tb_session **out);

enum {
	TB_ATTACH_READONLY = 1, /* map read-only (recover, inspect) */
	TB_ATTACH_ANY_OWNER = 2 /* tests only: skip the owner and creator checks */
};

/*
 * tb_session_attach - map an existing session file and validate it: magic,
 * version, sizes, every offset and count.  Accepts only a file owned by the
 * caller's effective uid (root included: no exception) whose header names
 * that same uid as its creator, not writable by group/other, and not a
 * symbolic link.  Timings read from the file are clamped (block timeout
 * 10 s, flush period 1 hour).  The mapping is guarded against the
 * truncation of the file by another process: this installs a SIGBUS handler
 * in the process (once; it passes every other SIGBUS on to the handler
 * installed before it).  The producers' automatic attach ($TRACEBUF_SESSION)
 * does not install it.
 * Return: 0, -EBADMSG (not a tracebuf session or corrupt; tb_errmsg says
 * which field), -EPROTO (format version), -EPERM (ownership/mode, creator,
 * symbolic link), -errno.
 */
TB_API int tb_session_attach(const char *path, unsigned flags, struct tb_session **out);

/* Unmaps; the file stays.  NULL is fine. */
TB_API void tb_session_close(struct tb_session *s);

/* Removes the session file (the mapping stays valid until close): the name
 * in the directory the file was created or opened in, and only while it
 * still names that file (-ESTALE otherwise). */
TB_API int tb_session_unlink(struct tb_session *s);

TB_API const char *tb_session_path(const struct tb_session *s);
TB_API unsigned tb_session_ncpus(const struct tb_session *s);
TB_API unsigned tb_session_nchannels(const struct tb_session *s);
/* Index of the channel named `name`, or -ENOENT. */
TB_API int tb_session_channel(const struct tb_session *s, const char *name);
/* 1 when the session uses the rseq protocol, 0 for the fallback. */
TB_API int tb_session_uses_rseq(const struct tb_session *s);

/*
 * tb_session_set_events - change which event classes channel `chan` records
 * (glob patterns, comma separated, '!' before a pattern excludes).  Takes
 * effect for every process of the session at once.
 * Return: 0, -EINVAL (bad channel or pattern too long), -EOWNERDEAD handled.
 */
TB_API int tb_session_set_events(struct tb_session *s, unsigned chan, const char *patterns);
/*
 * tb_session_get_events - the patterns channel `chan` records now, into
 * buf[len] (NUL-terminated).  A read-only attach cannot take the registry
 * lock: it reads until two copies agree.
 * Return: 0, -EINVAL (no such channel), -ENOSPC (len too small: at most 256).
 */
TB_API int tb_session_get_events(struct tb_session *s, unsigned chan, char *buf, size_t len);
/* The name of channel `chan`, NULL when there is none. */
TB_API const char *tb_session_channel_name(const struct tb_session *s, unsigned chan);

/* One field of an event class (tb_session_class). */
struct tb_class_field {
	char name[32];    /* a C identifier */
	unsigned type;    /* enum tb_rd_type of <tracebuf/reader.h>: TB_RD_U8 ... */
	uint32_t max_len; /* bound of a string, bytes or sequence field; 0 otherwise */
};

/* One event class of a session, as every process of it sees it. */
struct tb_class_info {
	size_t size;       /* set to sizeof(struct tb_class_info) before the call */
	unsigned id;       /* the record id of its events */
	int valid;         /* 0: the entry is damaged; name is "tracebuf:invalid_<id>", no fields */
	char name[96];     /* "provider:event" */
	unsigned nfields;
	struct tb_class_field fields[16];
	uint32_t channels; /* bit c: channel c records it now (its patterns select it) */
	/* the labels of its enum fields (type TB_RD_ENUM): for each, in field
	 * order, one line "NAME=VALUE,NAME=VALUE...\n" (values decimal int32);
	 * "" when it has none */
	char labels[3328];
};

/*
 * The event classes registered in a session so far (by any of its processes;
 * ids 0 .. count-1, tracebuf's own first).  Entries live in shared memory:
 * each is copied and checked, a damaged one comes back with valid = 0.
 * tb_session_class return: 0, -EINVAL (id >= the count, or out->size unknown).
 */
TB_API unsigned tb_session_nclasses(struct tb_session *s);
TB_API int tb_session_class(struct tb_session *s, unsigned id, struct tb_class_info *out);

struct tb_counters {
	uint64_t written;          /* events committed to the ring */
	uint64_t lost_full;        /* dropped: ring full */
	uint64_t lost_toobig;      /* dropped: larger than a sub-buffer */
	uint64_t lost_overwritten; /* overwritten before anybody read them */
	uint64_t lost_timeout;     /* block mode: dropped after the timeout */
	uint64_t lost_busy;        /* fallback protocol: every slot busy */
	uint64_t truncated;        /* strings cut to their bound (still written) */
	uint64_t switches;         /* sub-buffer switches */
	uint64_t lost_noconsumer;  /* block mode: dropped at once, the consumer was gone */
};

/*
 * tb_session_counters - counters of (chan, cpu); cpu == -1 sums every CPU.
 * May be called from any process, concurrently with producers: the values
 * are each exact at some instant, not a consistent snapshot.
 */
TB_API int tb_session_counters(struct tb_session *s, unsigned chan, int cpu, struct tb_counters *out);

/* A session as its recorder left it (tb_session_status). */
enum {
	TB_SESSION_ACTIVE = 1,   /* being written (and drained, if a recorder is attached) */
	TB_SESSION_STOPPING = 2, /* its recorder is finishing: producers should stop */
	TB_SESSION_STOPPED = 3,  /* its recorder wrote everything */
};
struct tb_session_status {
	size_t size;               /* set to sizeof(struct tb_session_status) before the call */
	unsigned state;            /* TB_SESSION_* (0: a value the session file should not hold) */
	uint32_t consumer_pid;     /* the recorder draining it, 0: none says so */
	uint64_t consumer_seen_ns; /* since that recorder's last heartbeat; UINT64_MAX: never */
	unsigned live_processes;   /* processes of the session alive now, this one included */
};
/* Return: 0, -EINVAL (out->size unknown).  Values read from shared memory,
 * each exact at some instant. */
#if defined(__cplusplus) && defined(__GNUC__)
/* g++'s -Wshadow calls a function named like a struct a shadow of that
 * struct's implicit constructor; C names them alike on purpose */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
TB_API int tb_session_status(struct tb_session *s, struct tb_session_status *out);
#if defined(__cplusplus) && defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* How a channel was created (tb_session_channel_info). */
struct tb_channel_info {
	size_t size;               /* set to sizeof(struct tb_channel_info) before the call */
	char name[32];
	unsigned mode;             /* enum tb_mode_opt */
	uint64_t sb_size;          /* bytes per sub-buffer */
	uint32_t sb_count;         /* sub-buffers per CPU */
	uint32_t watermark;        /* full sub-buffers that wake the consumer */
	uint64_t flush_period_ns;
	uint64_t block_timeout_ns;
	int attribution;           /* 1: tracebuf:thread records say which thread wrote what */
	int vtid;                  /* 1: every event carries its writer's tid (tb_channel_opts.vtid);
				    * in what was tail padding: the size of the struct is unchanged */
};
/* Return: 0, -EINVAL (no such channel, or out->size unknown). */
TB_API int tb_session_channel_info(const struct tb_session *s, unsigned chan, struct tb_channel_info *out);
/* Fill of ring (chan, cpu) in per mille of its size (0..1000), a value at
 * some instant (an overwrite ring: how much of it was ever written); -EINVAL
 * for no such ring. */
TB_API int tb_session_ring_fill(struct tb_session *s, unsigned chan, unsigned cpu);

/*
 * The producer session of this process: where TB_EVENT calls, tb_write() and
 * tb_reserve() write.  The library attaches to $TRACEBUF_SESSION by itself
 * when it is loaded, and then (as when `record --pid` attaches it) installs a
 * fatal-signal handler for the crash signals the program has no handler for,
 * which writes the crashing thread, signal and stack into the session before
 * the process dies of the same signal ($TRACEBUF_CRASH_HANDLER=0: none;
 * docs/FLIGHT-RECORDER.md, "The crashing thread"); tb_producer_use() sets the
 * session explicitly (NULL: stop) and installs no handler.
 * Not async-signal-safe.  Return: 0, -ENOTSUP (the session uses rseq and this
 * process has none: create it with TRACEBUF_NO_RSEQ=1), -EINVAL, -ETIMEDOUT
 * (the session's registry lock stayed taken for 2 s: a stuck or corrupted
 * lock; this process would never register a class).
 */
TB_API int tb_producer_use(struct tb_session *s);
TB_API struct tb_session *tb_producer_session(void);
/*
 * Result of the automatic attach at load time: 0, 1 (no $TRACEBUF_SESSION) or
 * -errno.  A refused $TRACEBUF_SESSION is also said in one line on stderr
 * ("tracebuf: TRACEBUF_SESSION=... refused: <why>; this program is not
 * traced"), the one thing the library ever prints, unless $TRACEBUF_QUIET is
 * set: the user asked for tracing, and a program running untraced must not
 * look like one that wrote nothing.  The value and the reason are written by
 * the text rule of every tracebuf output (control characters and ill-formed
 * UTF-8 as \xNN): a path may hold a terminal escape.
 */
TB_API int tb_producer_autoattach_status(void);

/* Thread-local message describing the last error of this thread. */
TB_API const char *tb_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif
