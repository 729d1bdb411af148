/* SPDX-License-Identifier: MIT */
/*
 * format.h - byte layouts shared between processes and written to disk.
 *
 * FORMAT: do not change anything in this file without bumping
 * TB_FORMAT_VERSION and updating docs/FORMAT.md, which describes every
 * field below in prose.  Everything is little endian (x86_64 first).
 *
 * Three families of layouts live here:
 *   1. the session file (shared memory): struct tb_map at offset 0, the
 *      channel descriptors, the per-(channel,cpu) control blocks, the ring
 *      table, the event registry, the process table, and the rings;
 *   2. the CTF packet header + context that starts every sub-buffer;
 *   3. the record (event) header, compact or extended.
 *
 * The consumer treats every byte of family 1 and 2 as hostile input: see
 * docs/SECURITY.md and the validator in src/session/layout.c.
 */
#ifndef TB_CORE_FORMAT_H
#define TB_CORE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define TB_FORMAT_VERSION 4u

/* ---------------------------------------------------------------------- */
/* 1. Session file                                                         */
/* ---------------------------------------------------------------------- */

#define TB_MAP_MAGIC 0x3146425543415254ull /* "TRACBUF1" little endian */

/* Hard bounds, checked at creation and again by every validator. */
#define TB_MAX_CPUS 4096u
#define TB_MAX_CHANNELS 16u
#define TB_MAX_EVENTS 1024u     /* registry capacity bound */
#define TB_MAX_FIELDS 16u       /* fields per event class */
#define TB_NAME_MAX 96u         /* "provider:event" incl. NUL */
#define TB_FIELD_NAME_MAX 32u   /* incl. NUL */
#define TB_CHAN_NAME_MAX 32u    /* incl. NUL */
#define TB_PATTERN_MAX 256u     /* channel event patterns incl. NUL */
#define TB_MAX_PROCS 256u       /* process table entries */
#define TB_MIN_SB_COUNT 2u
#define TB_MAX_SB_COUNT 65536u
#define TB_MAX_SB_SIZE (256u << 20) /* 256 MiB */
#define TB_PAYLOAD_MAX_LEN 65536u   /* bound of a string or sequence field */
/* Bounds of the channel timings (tb_chan_desc): longer is refused at
 * creation and clamped at attach, so that a map written by another process
 * cannot make a block-mode producer wait longer per event, or a flusher
 * never visit. */
#define TB_MAX_BLOCK_TIMEOUT_NS 10000000000ull    /* 10 s */
#define TB_MAX_FLUSH_PERIOD_NS 3600000000000ull   /* 1 hour */

/* Triggers (struct tb_map, format 4): slots of the last requests, name bound. */
#define TB_TRIG_SLOTS 8u
#define TB_TRIG_NAME_MAX 64u /* incl. NUL */

enum tb_protocol {
	TB_PROTO_RSEQ = 1,     /* per-CPU rings written in rseq critical sections */
	TB_PROTO_FALLBACK = 2, /* per-slot rings owned through a CAS'd owner word */
};

enum tb_clock_kind {
	TB_CLOCK_TSC = 1,       /* rdtsc; constant_tsc + nonstop_tsc */
	TB_CLOCK_MONOTONIC = 2, /* clock_gettime(CLOCK_MONOTONIC) in ns */
};

enum tb_session_state {
	TB_STATE_ACTIVE = 1,
	TB_STATE_STOPPING = 2, /* consumer asked producers to stop writing */
	TB_STATE_STOPPED = 3,  /* consumer has written everything */
};

/*
 * struct tb_map - the first bytes of every session file (xentrace's t_info).
 * A reader maps this first, validates it, then finds everything else through
 * the *_off fields.  Exactly 1024 bytes; reserved bytes are zero.
 */
struct tb_map {
	uint64_t magic;         /* TB_MAP_MAGIC */
	uint32_t version;       /* TB_FORMAT_VERSION */
	uint32_t hdr_size;      /* sizeof(struct tb_map) */
	uint32_t page_size;     /* page size of the creator; all *_off are multiples where said */
	uint32_t ncpus;         /* possible CPUs (slots) per channel */
	uint32_t nchannels;     /* 1..TB_MAX_CHANNELS */
	uint32_t protocol;      /* enum tb_protocol */
	uint64_t file_size;     /* total size of the session file */
	uint8_t uuid[16];       /* trace uuid, also in every packet header */
	uint32_t creator_uid;
	uint32_t creator_pid;
	uint64_t created_realtime_ns;

	/* clock calibration: realtime_ns = clock_offset_ns + ticks * 1e9 / clock_freq */
	uint32_t clock_kind;    /* enum tb_clock_kind */
	/* written by the consumer (its live period / 2, ms; 0: none): a packet
	 * that was open at least this long wakes it at its close, whatever the
	 * watermark (ring/append.c, maybe_wake_consumer()).  A hint: any value
	 * only changes how soon a sleeping consumer wakes. */
	uint32_t live_wake_ms;
	uint64_t clock_freq;    /* ticks per second */
	int64_t clock_offset_ns;
	int64_t clock_mono_offset_ns; /* monotonic_ns = this + ticks * 1e9 / freq */

	/* areas, byte offsets from the start of the file */
	uint64_t chan_off;       /* struct tb_chan_desc[nchannels] */
	uint64_t ctl_off;        /* struct tb_ctl[nchannels * ncpus], 256-byte aligned */
	uint64_t ring_table_off; /* uint64_t[nchannels * ncpus]: offset of each ring */
	uint64_t reg_off;        /* struct tb_registry */
	uint64_t proc_off;       /* struct tb_proc_table */
	uint64_t rings_off;      /* first ring; rings are page aligned */

	/* consumer coordination (futex words are 32-bit) */
	uint32_t consumer_futex;    /* bumped by producers that wake the consumer */
	uint32_t consumer_sleeping; /* 1 while the consumer may sleep on consumer_futex */
	uint32_t state;             /* enum tb_session_state */
	uint32_t consumer_pid;      /* pid of the consumer draining the session, 0 if none */
	uint64_t consumer_heartbeat_ns; /* monotonic ns of the consumer's last loop */

	/* triggers (format 4): tb_trigger() asks the flight recorder for a
	 * snapshot (docs/FLIGHT-RECORDER.md).  A caller claims number n =
	 * trig_seq++ (atomic add), fills slot n % TB_TRIG_SLOTS, publishes it
	 * (slot seq = n + 1, release), bumps trig_futex and wakes it.  The
	 * recorder reads them as hostile input (src/consumer/flight.c). */
	uint32_t trig_futex;    /* bumped after each publication; the recorder sleeps on it */
	uint32_t trig_reserved;
	uint64_t trig_seq;      /* triggers claimed so far */
	struct tb_trig_slot {
		uint64_t seq;   /* 0: never written; else claim number + 1, stored last (release) */
		uint64_t ts;    /* session clock (clock_kind) when it was claimed */
		uint32_t pid;
		uint32_t tid;
		char name[TB_TRIG_NAME_MAX]; /* NUL-terminated, printable ASCII */
		uint8_t reserved[8];
	} trig[TB_TRIG_SLOTS];

	uint8_t reserved[1024 - 960];
};

enum tb_mode {
	TB_MODE_DISCARD = 1,   /* ring full: drop the new event, count it */
	TB_MODE_OVERWRITE = 2, /* ring full: reuse the oldest sub-buffer */
	TB_MODE_BLOCK = 3,     /* ring full: wait for the consumer up to a timeout */
};

enum tb_attribution {
	TB_ATTR_NONE = 0,   /* no thread attribution records */
	TB_ATTR_ESCAPE = 1, /* a tracebuf:thread record whenever the writer on a CPU changes */
};

/* struct tb_chan_desc - one channel; 512 bytes. */
struct tb_chan_desc {
	char name[TB_CHAN_NAME_MAX]; /* NUL-terminated, [A-Za-z0-9_-] */
	uint64_t sb_size;            /* power of two, >= page size */
	uint32_t sb_count;           /* power of two, >= 2 */
	uint32_t mode;               /* enum tb_mode */
	uint32_t attribution;        /* enum tb_attribution */
	uint32_t watermark;          /* full sub-buffers that make a consumer wake-up worthwhile */
	uint64_t block_timeout_ns;   /* TB_MODE_BLOCK only */
	uint64_t flush_period_ns;    /* idle time after which a partial sub-buffer is closed */
	uint64_t ring_size;          /* bytes of one ring, descriptor pages included */
	uint64_t data_off;           /* offset of sub-buffer 0 inside a ring (page aligned) */
	char events[TB_PATTERN_MAX]; /* comma-separated glob patterns of event names */
	uint32_t events_gen;         /* bumped at each change of events[] */
	uint32_t vtid;               /* 0, or 1: every record header is followed by the
				      * writing thread's tid, a u32 (the CTF stream event
				      * context "vtid"; its packets are stream class 1) */
	uint8_t reserved[512 - 352];
};

/*
 * struct tb_ctl - control block of one (channel, cpu) ring.  256 bytes, in
 * the map area (never in the ring) so that the consumer can poll every CPU
 * without touching the pages of CPUs that never write.
 *
 * Line 0 is the producer state.  Under TB_PROTO_RSEQ it is written only in
 * rseq critical sections on this CPU, so its writers are serialised by the
 * scheduler; under TB_PROTO_FALLBACK only by the owner of `owner`.
 *
 * The two-version state (st_end, *_after, *_before): a critical section can
 * be aborted after some of its stores, so every field besides `head` is kept
 * twice.  A section that commits writes, in this order: *_before (the true
 * values it read: idempotent), st_end = new head (invalidates *_after),
 * *_after, and finally head (its commit).  Hence at any moment:
 *     st_end == head  ->  the *_after values are true
 *     st_end != head  ->  the *_before values are true
 * See docs/DESIGN.md, "Two-version state", for the proof.
 */
struct tb_ctl {
	/* line 0: producer state */
	uint64_t head;       /* write position, bytes, free running; 0 = never written.
			      * Never on a sub-buffer boundary: a step that would end
			      * a packet exactly at its end switches instead. */
	uint64_t st_end;     /* head value at which *_after is valid */
	uint64_t ts_after;   /* timestamp of the last record (or packet begin) */
	uint64_t ts_before;
	uint64_t cnt_after;  /* events committed so far (escape records excluded) */
	uint64_t cnt_before;
	uint64_t tid_after;  /* writer context of the current packet, 0 = none */
	uint64_t tid_before;
	/* line 1: loss counters (each bumped by a single-instruction commit) */
	uint64_t lost_full;        /* ring full (discard mode, or block mode without timeout) */
	uint64_t lost_toobig;      /* record larger than a sub-buffer can hold */
	uint64_t lost_overwritten; /* overwrite mode: events before the oldest retained packet */
	uint64_t lost_timeout;     /* block mode: waited the timeout, then dropped */
	uint64_t truncated;        /* strings truncated to their bound (not lost) */
	uint64_t lost_nocons;      /* block mode: the consumer is gone, dropped without waiting */
	uint64_t owner;            /* TB_PROTO_FALLBACK: tid owning the ring, 0 = free */
	uint64_t lost_busy;        /* TB_PROTO_FALLBACK: every slot was owned */
	/* line 2: written by the consumer */
	uint64_t tail;       /* position of the first sub-buffer not yet consumed */
	uint32_t tail_futex; /* bumped after each tail advance; block-mode producers wait on it */
	uint32_t waiters;    /* producers waiting on tail_futex */
	uint64_t flush_head; /* head seen by the flusher at its last visit */
	uint64_t flush_ns;   /* monotonic ns of that visit */
	uint8_t reserved2[64 - 32];
	/* line 3: reserved */
	uint8_t reserved3[64];
};

/*
 * struct tb_sbdesc - one per sub-buffer, in the first page(s) of a ring.
 * Written by the switch that opens (cnt_begin, disc_begin) and the one that
 * closes (cnt_end) the packet it holds.
 */
struct tb_sbdesc {
	uint64_t cnt_begin;  /* events committed before this packet */
	uint64_t cnt_end;    /* ... when it was closed */
	uint64_t disc_begin; /* loss total when it was opened */
	uint64_t reserved;
};

/* Field types of the event registry (and of the TB_EVENT macros). */
enum tb_field_type {
	TB_FT_U8 = 1, TB_FT_U16, TB_FT_U32, TB_FT_U64,
	TB_FT_I8, TB_FT_I16, TB_FT_I32, TB_FT_I64,
	TB_FT_F64,       /* IEEE 754 double */
	TB_FT_STRING,    /* NUL-terminated, at most max_len bytes before the NUL */
	TB_FT_BYTES,     /* uint32 length, then that many bytes (<= max_len) */
	TB_FT_U64SEQ,    /* uint32 length, then that many u64 (<= max_len) */
	TB_FT_BOOL,      /* one byte, 0 false, else true (CTF: an enum of uint8 { "false" = 0, "true" = 1 }) */
	TB_FT_F32,       /* IEEE 754 float */
	TB_FT_ENUM,      /* int32, with labels (tb_event_desc.labels; CTF: enum : int32_t { ... }) */
	TB_FT_MAX_
};

/* Strings and sequences: variable size, with a bound (max_len). */
static inline int tb_ft_variable(uint32_t t)
{
	return t == TB_FT_STRING || t == TB_FT_BYTES || t == TB_FT_U64SEQ;
}

struct tb_field_desc {
	char name[TB_FIELD_NAME_MAX]; /* C identifier */
	uint32_t type;                /* enum tb_field_type */
	uint32_t max_len;             /* strings / sequences: bound; 0 otherwise */
};

/*
 * Labels of the enum fields of one class (format 3), as text: for each
 * TB_FT_ENUM field, in field order, one line "name=value,name=value...\n"
 * (at least one label; a label is a C identifier of at most
 * TB_LABEL_NAME_MAX - 1 bytes, unique in its line; a value is a decimal
 * int32), then a NUL.  Empty ("") when the class has no enum field.
 * core/labels.h reads and checks it.
 */
#define TB_LABELS_MAX 3328u     /* bytes of tb_event_desc.labels, NUL included */
#define TB_LABEL_NAME_MAX 64u   /* bytes of a label, NUL included */

/* struct tb_event_desc - one registered event class; 4096 bytes. */
struct tb_event_desc {
	char name[TB_NAME_MAX];  /* "provider:event" */
	uint32_t id;             /* == index in the registry */
	uint32_t nfields;
	uint32_t enabled;        /* bit c set: channel c records this class */
	uint32_t state;          /* 0 = free slot, 1 = valid (written last) */
	struct tb_field_desc fields[TB_MAX_FIELDS];
	uint8_t reserved[768 - TB_NAME_MAX - 16 - TB_MAX_FIELDS * 40];
	char labels[TB_LABELS_MAX]; /* format 3: the enum fields' labels (above), NUL-terminated */
};

/*
 * struct tb_registry - event classes shared by every process of a session.
 * Not on the fast path: guarded by a robust process-shared mutex.
 */
struct tb_registry {
	uint8_t lock[64];   /* pthread_mutex_t, PTHREAD_PROCESS_SHARED | ROBUST */
	uint32_t capacity;  /* entries in events[] */
	uint32_t count;     /* entries in use (ids 0..count-1) */
	uint32_t gen;       /* bumped at each change */
	uint32_t reserved;
	uint8_t pad[64 - 16];
	struct tb_event_desc events[]; /* capacity entries */
};

struct tb_proc_entry {
	uint32_t pid;
	uint32_t state;       /* 0 = free, 1 = valid */
	uint64_t attach_realtime_ns;
	char comm[16];        /* /proc/self/comm */
	char exe[96];         /* basename of /proc/self/exe, truncated */
};

struct tb_proc_table {
	uint32_t capacity;
	uint32_t count;
	uint8_t pad[56];
	struct tb_proc_entry procs[]; /* capacity entries */
};

/* ---------------------------------------------------------------------- */
/* 2. CTF packet header and context (start of every sub-buffer)            */
/* ---------------------------------------------------------------------- */

/*
 * Causes of loss, each a running total in the trace packet header (lost[]) and,
 * for the producer causes, a counter of the control block.  Their sum is
 * events_discarded.  FORMAT: the order is the order of the elements of the
 * packet header's tb_lost_by_cause array (formats 2 and 3: of the packet
 * context fields "lost_<name>"; docs/CTF.md); append only.
 */
enum tb_loss_cause {
	TB_LOSS_FULL = 0,        /* producer: ring full (discard mode) */
	TB_LOSS_TOOBIG = 1,      /* producer: record larger than a sub-buffer can hold */
	TB_LOSS_OVERWRITTEN = 2, /* overwrite mode: before the oldest packet still in the ring */
	TB_LOSS_TIMEOUT = 3,     /* producer: block mode, waited the timeout */
	TB_LOSS_BUSY = 4,        /* producer: fallback, every ring owned; or an abort storm */
	TB_LOSS_NOCONS = 5,      /* producer: block mode, the consumer is gone (not waited for) */
	TB_LOSS_INVALID = 6,     /* consumer: in packets that failed validation, or cut from them */
	TB_LOSS_DISK = 7,        /* consumer: the trace could not be written (disk full, I/O error) */
	TB_LOSS_RELAY = 8,       /* consumer: could not be sent to the relay daemon */
	TB_LOSS_NCAUSES = 9,
};
#define TB_LOSS_NPRODUCER 6u /* causes 0..5 are counted by producers */

/* The control-block counter of producer cause `c` (< TB_LOSS_NPRODUCER). */
static inline uint64_t *tb_ctl_lost(struct tb_ctl *c, unsigned cause)
{
	switch (cause) {
	case TB_LOSS_FULL: return &c->lost_full;
	case TB_LOSS_TOOBIG: return &c->lost_toobig;
	case TB_LOSS_OVERWRITTEN: return &c->lost_overwritten;
	case TB_LOSS_TIMEOUT: return &c->lost_timeout;
	case TB_LOSS_BUSY: return &c->lost_busy;
	default: return &c->lost_nocons;
	}
}

/* Name of cause `c` ("lost_full", ...; formats 2 and 3: its packet-context field); NULL past the last. */
static inline const char *tb_loss_field(unsigned c)
{
	static const char *const names[TB_LOSS_NCAUSES] = {
		"lost_full", "lost_toobig", "lost_overwritten", "lost_timeout", "lost_busy",
		"lost_noconsumer", "lost_invalid", "lost_disk", "lost_relay",
	};
	return c < TB_LOSS_NCAUSES ? names[c] : NULL;
}

#define TB_CTF_MAGIC 0xC1FC1FC1u

/* Stream classes (packet header stream_id; docs/CTF.md).  A record of a
 * TB_STREAM_VTID packet is its header, then the writer's tid (u32: the
 * stream event context), then the payload. */
#define TB_STREAM_PLAIN 0u
#define TB_STREAM_VTID 1u
#define TB_STREAM_KERNEL 2u /* the kernel's scheduling events (docs/KERNEL.md): class 0's layout, own classes */
#define TB_NSTREAM_CLASSES 3u
/* The kernel stream class's event ids begin here (the tools key classes by
 * id alone; registry ids stay below TB_MAX_EVENTS). */
#define TB_KERNEL_ID_BASE TB_MAX_EVENTS
#define TB_VTID_SIZE 4u /* bytes of the event context of a TB_STREAM_VTID record */

/*
 * Every packet begins with the trace packet header (TSDL trace
 * packet.header: the same for every stream class, kernel streams included),
 * then the packet context of its stream class.  Format 4 keeps in the
 * context only what CTF readers give a meaning to, plus cpu_id, so that
 * babeltrace2 prints "{ cpu_id = N }" on each event line as it does for
 * LTTng; tracebuf's loss counts by cause are in the trace packet header,
 * which babeltrace2 reads but does not show (one warning naming the field
 * when it opens the trace; docs/CTF.md).  events_discarded, their sum, is
 * in the context: what every CTF reader reports losses from.
 */
struct tb_trace_packet_header {
	uint32_t magic;              /* TB_CTF_MAGIC */
	uint8_t uuid[16];            /* trace uuid */
	uint32_t stream_id;          /* stream class: TB_STREAM_PLAIN, or TB_STREAM_VTID on a vtid channel */
	uint64_t stream_instance_id; /* (channel << 32) | cpu */
	/* the running total by cause (enum tb_loss_cause; TSDL: one array,
	 * tb_lost_by_cause).  The producer writes the producer causes when it
	 * opens and when it closes the packet; the consumer sets the consumer
	 * causes (and, for overwrite rings, the overwritten count) in its
	 * private copy before it writes the packet out. */
	uint64_t lost[TB_LOSS_NCAUSES];
} __attribute__((packed));

#define TB_TRACE_PACKET_HEADER_SIZE 104u

/* struct tb_packet_header - the trace packet header, then the packet
 * context of stream classes 0 and 1: the first TB_PACKET_HEADER_SIZE bytes
 * of every sub-buffer, and of every packet of a trace.  Its first
 * TB_TRACE_PACKET_HEADER_SIZE bytes are a struct tb_trace_packet_header
 * (the asserts at the end of this file check the two agree). */
struct tb_packet_header {
	/* trace packet header */
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t lost[TB_LOSS_NCAUSES];
	/* packet context */
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size;       /* bits: header + records */
	uint64_t packet_size;        /* bits: sub-buffer size */
	uint64_t packet_seq_num;     /* == packet start position / sub-buffer size */
	uint64_t events_discarded;   /* running total for the stream, never reset: the sum of lost[] */
	uint64_t cpu_id;             /* the CPU (fallback: ring slot); 64 bits keep the context aligned */
} __attribute__((packed));

#define TB_PACKET_HEADER_SIZE 160u

/* byte offsets, for the switch's store list, the consumer and the validators */
#define TB_PKT_OFF_MAGIC 0u
#define TB_PKT_OFF_UUID 4u
#define TB_PKT_OFF_STREAM_ID 20u
#define TB_PKT_OFF_INSTANCE 24u
#define TB_PKT_OFF_LOST 32u /* + 8 * enum tb_loss_cause */
#define TB_PKT_OFF_TS_BEGIN 104u
#define TB_PKT_OFF_TS_END 112u
#define TB_PKT_OFF_CONTENT 120u
#define TB_PKT_OFF_PACKET 128u
#define TB_PKT_OFF_SEQ 136u
#define TB_PKT_OFF_DISCARDED 144u
#define TB_PKT_OFF_CPU 152u

/* The name of the loss array in the TSDL trace packet header (format 4). */
#define TB_TSDL_LOST_ARRAY "tb_lost_by_cause"

/* ---------------------------------------------------------------------- */
/* 3. Record header                                                        */
/* ---------------------------------------------------------------------- */

/*
 * Compact: one u32, id in bits 0..4 (0..30), timestamp bits 0..26 in bits
 * 5..31.  Legal only when 0 <= ts - prev < 2^27, prev being the timestamp of
 * the previous record of the packet or the packet's timestamp_begin.
 *
 * Extended: byte 0 = 31 (low 5 bits; upper 3 bits zero), then u32 id, then
 * u64 timestamp: 13 bytes.
 */
#define TB_COMPACT_ID_MAX 30u
#define TB_EXTENDED_ID 31u
#define TB_COMPACT_TS_BITS 27u
#define TB_COMPACT_HDR_SIZE 4u
#define TB_EXTENDED_HDR_SIZE 13u

/* Reserved event ids. */
#define TB_EVENT_ID_THREAD 0u /* "tracebuf:thread" { u32 pid; u32 tid; } */
/* A thread's name (its comm, <= 15 bytes): written by the producer library
 * before the thread's first record in a session when the name is not the
 * program's (what every thread inherits at exec), and after each rename
 * (pthread_setname_np, prctl(PR_SET_NAME)).  Its id is not fixed: the class
 * is registered like any other; enabled on the channels with attribution. */
#define TB_THREAD_NAME_EVENT "tracebuf:thread_name" /* { u32 tid; string name; } */
#define TB_THREAD_NAME_MAX 15u /* bytes of a name (the kernel's TASK_COMM_LEN - 1) */
#define TB_THREAD_PAYLOAD_SIZE 8u

/* A program's crash (src/producer/crash.c, docs/FLIGHT-RECORDER.md "The
 * crashing thread"): written by libtracebuf's fatal-signal handler on the
 * crashing thread, the mappings of its frames first, then the crash.  Ids not
 * fixed; both classes are enabled on every channel whatever the patterns, and
 * the handler writes them to the lowest one.  crash_map has profile:map's
 * fields (src/profile/profile_events.h), so that the profile reader
 * symbolises the stack (tools/cli_profile.c). */
#define TB_CRASH_EVENT "tracebuf:crash"
/* { u32 signo; i32 code; u32 tid; u64 addr; u64 ip; u64 sp; u32 flags; u64s stack; } */
#define TB_CRASH_MAP_EVENT "tracebuf:crash_map"
/* { u64 start; u64 end; u64 pgoff; u32 gen; string path; } */
#define TB_CRASH_DEPTH 64u /* entries of stack: the ip, then return addresses */
#define TB_CRASH_F_ABORTED 0x1u   /* the walk met a frame it could not read or check */
#define TB_CRASH_F_TRUNCATED 0x2u /* the walk reached TB_CRASH_DEPTH */
#define TB_CRASH_F_NOMAPS 0x4u    /* mappings not written (alternate stack too small, /proc unreadable) */
#define TB_CRASH_F_SCANNED 0x8u   /* some frames were found by a scan of stack words (code without
				   * frame records): one may be a stale return address */

_Static_assert(sizeof(struct tb_map) == 1024, "tb_map layout");
_Static_assert(offsetof(struct tb_map, trig_futex) == 176 && offsetof(struct tb_map, trig_seq) == 184 &&
		       offsetof(struct tb_map, trig) == 192 && sizeof(struct tb_trig_slot) == 96,
	       "tb_map triggers");
_Static_assert(sizeof(struct tb_chan_desc) == 512, "tb_chan_desc layout");
_Static_assert(offsetof(struct tb_chan_desc, vtid) == 348, "tb_chan_desc layout");
_Static_assert(sizeof(struct tb_ctl) == 256, "tb_ctl layout");
_Static_assert(offsetof(struct tb_ctl, lost_full) == 64, "tb_ctl line 1");
_Static_assert(offsetof(struct tb_ctl, tail) == 128, "tb_ctl line 2");
_Static_assert(sizeof(struct tb_event_desc) == 4096, "tb_event_desc layout");
_Static_assert(sizeof(struct tb_registry) == 128, "tb_registry layout");
_Static_assert(sizeof(struct tb_proc_entry) == 128, "tb_proc_entry layout");
_Static_assert(sizeof(struct tb_proc_table) == 64, "tb_proc_table layout");
_Static_assert(sizeof(struct tb_packet_header) == TB_PACKET_HEADER_SIZE, "packet header");
_Static_assert(sizeof(struct tb_trace_packet_header) == TB_TRACE_PACKET_HEADER_SIZE, "trace packet header");
#define TB_PKT_ASSERT_(f, off) _Static_assert(offsetof(struct tb_packet_header, f) == (off), "packet: " #f)
#define TB_TPH_ASSERT_(f, off) _Static_assert(offsetof(struct tb_trace_packet_header, f) == (off), "trace packet header: " #f)
TB_PKT_ASSERT_(magic, TB_PKT_OFF_MAGIC);
TB_PKT_ASSERT_(uuid, TB_PKT_OFF_UUID);
TB_PKT_ASSERT_(stream_id, TB_PKT_OFF_STREAM_ID);
TB_PKT_ASSERT_(stream_instance_id, TB_PKT_OFF_INSTANCE);
TB_PKT_ASSERT_(lost, TB_PKT_OFF_LOST);
TB_TPH_ASSERT_(magic, TB_PKT_OFF_MAGIC);
TB_TPH_ASSERT_(uuid, TB_PKT_OFF_UUID);
TB_TPH_ASSERT_(stream_id, TB_PKT_OFF_STREAM_ID);
TB_TPH_ASSERT_(stream_instance_id, TB_PKT_OFF_INSTANCE);
TB_TPH_ASSERT_(lost, TB_PKT_OFF_LOST);
_Static_assert(TB_PKT_OFF_LOST + 8 * TB_LOSS_NCAUSES == TB_TRACE_PACKET_HEADER_SIZE, "lost[] ends the trace packet header");
TB_PKT_ASSERT_(timestamp_begin, TB_PKT_OFF_TS_BEGIN);
TB_PKT_ASSERT_(timestamp_end, TB_PKT_OFF_TS_END);
TB_PKT_ASSERT_(content_size, TB_PKT_OFF_CONTENT);
TB_PKT_ASSERT_(packet_size, TB_PKT_OFF_PACKET);
TB_PKT_ASSERT_(packet_seq_num, TB_PKT_OFF_SEQ);
TB_PKT_ASSERT_(events_discarded, TB_PKT_OFF_DISCARDED);
TB_PKT_ASSERT_(cpu_id, TB_PKT_OFF_CPU);
_Static_assert(TB_PKT_OFF_TS_BEGIN == TB_TRACE_PACKET_HEADER_SIZE, "the context follows the trace packet header");
_Static_assert(TB_PKT_OFF_CPU + 8 == TB_PACKET_HEADER_SIZE, "cpu_id ends the context");
#undef TB_PKT_ASSERT_
#undef TB_TPH_ASSERT_

#endif
