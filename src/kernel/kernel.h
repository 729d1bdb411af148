/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - the kernel's scheduling events in the trace (library private;
 * docs/KERNEL.md).
 *
 *   tracepoints.c  tracefs: where it is, each tracepoint's id and field
 *                  layout (its `format` file, parsed: nothing hard-coded),
 *                  and the LTTng-named event classes they become
 *   perf_ring.c    the head/tail protocol of a perf mmap ring, untrusted
 *   open.c         perf_event_open per CPU per tracepoint (and a counting
 *                  twin in its group), per tree task for system calls and
 *                  page faults (inherited); a ring per CPU per group
 *                  (PERF_EVENT_IOC_SET_OUTPUT)
 *   perm.c         where tracefs is; the errors that say what permission
 *                  is missing
 *   tasks.c        the traced tree's tasks from /proc
 *   capture.c      a pass: drains every ring, maps the times to the
 *                  session clock, filters to the traced process tree and
 *                  hands events to kwrite.c
 *   pending.c      the events drained and not written yet: small entries
 *                  sorted and held back, their payloads in a per-CPU arena
 *   kwrite.c       CTF packets of stream class 2 (TB_STREAM_KERNEL), one
 *                  stream per CPU, `kernel_cpu<N>`: a file of the trace
 *                  directory (when there is one), and each packet handed to
 *                  the caller's sink (the engine's outputs: the relay daemon)
 *
 * One thread drives a struct tb_kernel (the engine's kernel thread):
 * open, set_output, pass... pass(final), close.  Stats may be read by any
 * thread (each value exact at some instant).
 */
#ifndef TB_KERNEL_KERNEL_H
#define TB_KERNEL_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/format.h"
#include "core/view.h"

#define TB_KERNEL_MAX_CLASSES 16u
#define TB_KERNEL_STREAM_FMT "kernel_cpu%u" /* a channel's files are "<name>_<N>": never this
						    * (nor "kernel_cpu<N>_r<G>" of a resumed directory) */

struct tb_kernel_cfg {
	const char *list;        /* comma-separated tracepoint names; NULL or "": the default list */
	int all;                 /* 1: every CPU's events; 0: only the traced process tree's */
	uint32_t ring_pages;     /* data pages of each CPU's perf ring (power of two); 0: 256 */
	const uint32_t *roots;   /* pids whose process trees are traced (and their threads) */
	unsigned nroots;
	uint32_t clock_kind;     /* the session's (enum tb_clock_kind) */
	uint64_t clock_freq;
	int64_t clock_mono_offset_ns; /* monotonic ns at tick 0 (the session's calibration) */
};

struct tb_kernel_stats {
	uint64_t delivered;      /* events written to the trace */
	uint64_t filtered;       /* events of other processes, left out (not losses) */
	uint64_t lost_full;      /* PERF_RECORD_LOST: the perf ring was full */
	uint64_t lost_invalid;   /* records refused as malformed */
	uint64_t lost_disk;      /* events in packets that could not be written */
	uint64_t lost_relay;     /* relay-only recordings: events the relay daemon did not get (the
				  * engine's count, tb_engine_kernel(); of `delivered`, not in it) */
	uint64_t packets, bytes;
	uint64_t samples;        /* PERF_RECORD_SAMPLE records read */
	uint64_t generated;      /* tracepoint hits counted by the kernel in the same window (a counting
				  * event grouped with each sampling one); valid when counted = 1, after
				  * the final pass: delivered + filtered + lost = generated */
	int counted;
	uint64_t pertask_delivered; /* of delivered: the tree's system calls and page faults, opened on
				     * its tasks (no twin counts them: not in generated) */
	uint64_t pertask_lost;   /* of lost_full: theirs, lost to their full ring (its loss records) */
	uint64_t pertask_dups;   /* second records of a hit (a task opened while it inherited), dropped */
	uint64_t silent;         /* of lost_full: counted by the kernel, neither delivered by the ring nor
				  * reported lost by it */
	uint64_t dropped;        /* of silent: not charged to a full ring either (the sampling event's
				  * PERF_FORMAT_LOST count): hits the kernel counted and never wrote
				  * (docs/KERNEL.md, "Known gap"); valid when dropped_known */
	int dropped_known;       /* the kernel gave PERF_FORMAT_LOST (Linux 6.0+) */
	uint64_t idle_gaps;      /* sched_switch continuity, per CPU: a switch whose prev is not the last
				  * switch's next, where that next was the idle task (0): a switch out of
				  * idle that no ring had and no count has (docs/KERNEL.md, "Known gap") */
	unsigned ncpus, ntracepoints;
};

struct tb_kernel;

/*
 * tb_kernel_open - find tracefs, read each tracepoint's id and format,
 * open one perf event per CPU per tracepoint (disabled), their rings.
 * A tracepoint this kernel does not have is skipped and named in a
 * warning (tb_kernel_next_warning); none at all, or a permission missing,
 * is an error whose message (tb_errmsg()) says what is missing and how to
 * grant it.  Return: 0, -EACCES, -ENOENT, -EINVAL, -ENOMEM, ...
 */
TB_HIDDEN int tb_kernel_open(const struct tb_kernel_cfg *cfg, struct tb_kernel **out);
/*
 * Where each packet of stream i (0 .. tb_kernel_nstreams()) goes once its
 * file has it, or instead when there is no directory: iov[0] its header
 * (struct tb_packet_header), iov[1] the rest of its content when it has
 * more (n = 1 or 2), `events` the events it holds.  Called by the thread
 * that runs the passes, in each stream's order.
 */
typedef void (*tb_kernel_sink)(void *arg, unsigned i, const struct iovec *iov, int n, uint64_t events);
/* Where the streams go: a directory fd (kept, not closed; -1: no files),
 * the trace uuid, and the sink (NULL: none). */
TB_HIDDEN void tb_kernel_set_output(struct tb_kernel *k, int dirfd, const uint8_t uuid[16], tb_kernel_sink sink,
				    void *sink_arg);
/* The streams (one per CPU opened), their names, and the header of an
 * empty packet of stream i at time ts (packet number 0, no losses): what
 * announces a stream before its first packet (the relay daemon's viewers). */
TB_HIDDEN unsigned tb_kernel_nstreams(const struct tb_kernel *k);
TB_HIDDEN void tb_kernel_stream_name(const struct tb_kernel *k, unsigned i, char *buf, size_t len);
TB_HIDDEN void tb_kernel_empty_header(const struct tb_kernel *k, unsigned i, uint64_t ts,
				      struct tb_packet_header *h);
/*
 * A promise for live viewers: no kernel event stamped before the time
 * returned (session ticks; 0: none yet) is still to come from any stream
 * (every packet holding one was handed to the sink before it was
 * returned).  Any thread; acquire (pairs with the pass's release).
 */
TB_HIDDEN uint64_t tb_kernel_through(const struct tb_kernel *k);
/* Enables every event: from here on the rings fill. Return 0 or -errno. */
TB_HIDDEN int tb_kernel_enable(struct tb_kernel *k);
/* Waits up to timeout_ms for a ring's watermark (poll). */
TB_HIDDEN void tb_kernel_wait(struct tb_kernel *k, int timeout_ms);
/*
 * tb_kernel_pass - drain every ring, write complete packets.  final: the
 * events are disabled first, everything is written and each stream's
 * losses are closed in a last packet.  Return 0 or the first write error.
 */
TB_HIDDEN int tb_kernel_pass(struct tb_kernel *k, int final);
TB_HIDDEN void tb_kernel_stats(struct tb_kernel *k, struct tb_kernel_stats *out);
/* The calling thread is the recorder's own: its events are left out (an
 * embedded recorder's threads are in the tree it traces).  Any thread. */
TB_HIDDEN void tb_kernel_exclude_self(struct tb_kernel *k);
/* The event classes of stream class 2, ids TB_KERNEL_ID_BASE + i (i: enum
 * tb_ktp): every one tracebuf knows, opened or not (fixed ids). */
TB_HIDDEN const struct tb_event_desc *tb_kernel_classes(const struct tb_kernel *k, uint32_t *n);
/* Copies the next warning into buf; 0 when none is left. */
TB_HIDDEN int tb_kernel_next_warning(struct tb_kernel *k, char *buf, size_t len);
TB_HIDDEN void tb_kernel_close(struct tb_kernel *k);

/* ---- tracepoints.c, shared with capture.c and the unit tests ---- */

#define TB_TP_FIELDS_MAX 24u
struct tb_tp_field {
	char name[32];
	uint16_t off, size;
	uint8_t is_signed, data_loc; /* data_loc: u32 (len << 16 | offset into the raw record) */
};
struct tb_tp_format {
	uint32_t id;
	unsigned n;
	struct tb_tp_field f[TB_TP_FIELDS_MAX];
};
/* Parses the text of a tracefs `format` file.  Return 0 or -EINVAL. */
TB_HIDDEN int tb_tp_format_parse(const char *text, struct tb_tp_format *out);

/* The tracepoints tracebuf knows how to name like LTTng's kernel tracer. */
enum tb_ktp {
	TB_KTP_SWITCH, TB_KTP_WAKING, TB_KTP_WAKEUP, TB_KTP_WAKEUP_NEW, TB_KTP_FORK, TB_KTP_EXEC,
	TB_KTP_EXIT, TB_KTP_MIGRATE,
	/* optional (not in the default list); appended: a class's id is
	 * TB_KERNEL_ID_BASE + its value, in every trace ever written */
	TB_KTP_SYS_ENTER, TB_KTP_SYS_EXIT, TB_KTP_PF_USER,
	TB_KTP_N
};
/* The class's name ("sched_switch", "syscall_entry"), the tracefs
 * subsystem ("sched", "raw_syscalls") and the tracepoint's name there. */
TB_HIDDEN const char *tb_ktp_name(unsigned tp);
TB_HIDDEN const char *tb_ktp_sys(unsigned tp);
TB_HIDDEN const char *tb_ktp_tracepoint(unsigned tp);
/* The tracepoint named name[0..len): its class's name, its tracepoint's
 * name, or "subsystem:tracepoint"; -1 when none. */
TB_HIDDEN int tb_ktp_lookup(const char *name, size_t len);
/* The name of this architecture's system call nr; "" when not known. */
TB_HIDDEN const char *tb_syscall_name(int64_t nr);
/* Fills the class descriptor (LTTng's fields) of tracepoint tp as id `id`. */
TB_HIDDEN void tb_ktp_class(unsigned tp, uint32_t id, struct tb_event_desc *out);

/* A decoded kernel event: the payload of its class, and what filtering needs. */
#define TB_KEV_PAYLOAD_MAX 320u
struct tb_kev {
	uint64_t ts;             /* session clock ticks */
	uint32_t cls;            /* index of its class (id - TB_KERNEL_ID_BASE) */
	uint32_t tp;             /* enum tb_ktp */
	int32_t cur_pid, cur_tid;/* the task current when it fired (the sample's) */
	int32_t tid_a, tid_b;    /* the tasks it names: switch prev/next, wakee, fork parent/child, ... (-1: none) */
	uint16_t len;            /* payload bytes */
	uint8_t payload[TB_KEV_PAYLOAD_MAX];
};
/*
 * Decodes the raw tracepoint record raw[0..len) of tracepoint tp laid out
 * as `fmt` into ev's payload (LTTng's fields, in their order; sample_pid
 * and sample_tid: the current task's, the perf sample's).  Every
 * offset, size and __data_loc is checked against len.  Return 0 or -1.
 */
TB_HIDDEN int tb_ktp_decode(unsigned tp, const struct tb_tp_format *fmt, const uint8_t *raw, uint32_t len,
			    uint32_t sample_pid, uint32_t sample_tid, struct tb_kev *ev);

/*
 * The same decoding resolved once per tracepoint (the recorder decodes
 * every record with it): where each field of the class comes from in a
 * raw record of `fmt` (its offset, size, signedness), so that a record is
 * decoded without looking any name up.  Only the layout is resolved: each
 * record's bounds are still checked against its own length.
 */
struct tb_ktp_src {
	uint8_t type;      /* the class field's kind (tracepoints.c, struct kout) */
	uint8_t from;      /* TB_KSRC_FIELD: the format's field at off; _PID, _TID: the sample's */
	uint8_t prio;      /* LTTng's prio: the kernel's minus MAX_RT_PRIO */
	uint8_t is_signed, data_loc;
	uint16_t off, size;
};
enum { TB_KSRC_FIELD, TB_KSRC_PID, TB_KSRC_TID };
struct tb_ktp_plan {
	uint32_t tp, n;
	struct tb_ktp_src out[8];
	uint8_t has_a, has_b;     /* the tasks it names (struct tb_kev's tid_a, tid_b) */
	struct tb_ktp_src a, b;
};
/* The plan of tracepoint tp laid out as fmt: 0, or -1 when a field the
 * class needs is missing or of a layout it cannot be (every record would
 * be refused). */
TB_HIDDEN int tb_ktp_plan(unsigned tp, const struct tb_tp_format *fmt, struct tb_ktp_plan *out);
/* tb_ktp_decode() with a plan: the same payload, the same refusals; the
 * payload into out (TB_KEV_PAYLOAD_MAX bytes of room), the tasks it names
 * into *tid_a and *tid_b.  Return the payload's length, or -1. */
TB_HIDDEN int tb_ktp_decode_plan(const struct tb_ktp_plan *p, const uint8_t *raw, uint32_t len, uint32_t sample_pid,
				 uint32_t sample_tid, uint8_t *out, int32_t *tid_a, int32_t *tid_b);

#endif
