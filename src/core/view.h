/* SPDX-License-Identifier: MIT */
/*
 * view.h - the process-local view of a mapped session (library
 * private).  Every value here was validated when the session was attached;
 * code that needs a size or an offset takes it from here, never again from
 * shared memory.
 */
#ifndef TB_CORE_VIEW_H
#define TB_CORE_VIEW_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

#define TB_HIDDEN __attribute__((visibility("hidden")))

struct tb_chan_view {
	char name[TB_CHAN_NAME_MAX];
	uint64_t sb_size;      /* power of two */
	uint32_t sb_shift;     /* log2(sb_size) */
	uint32_t sb_count;     /* power of two */
	uint64_t ring_mask;    /* sb_size * sb_count - 1 */
	uint32_t mode;         /* enum tb_mode */
	uint32_t attribution;  /* enum tb_attribution */
	uint32_t vtid;         /* 1: records carry the writer's tid after their header (stream class 1) */
	uint32_t max_payload;  /* largest payload an append takes (tb_chan_max_payload) */
	uint32_t watermark;
	uint64_t block_timeout_ns;
	uint64_t flush_period_ns;
	uint64_t ring_size;
	uint64_t data_off;
	uint64_t ring0_off;    /* offset of the ring of CPU 0; CPU k at ring0_off + k * ring_size */
};

/*
 * The largest payload tb_append() accepts on a channel: the worst case
 * [escape record] + record with extended headers, each followed by its
 * event context (vtid: 4 bytes), plus the 8 bytes of slack of the staged
 * copy, must fit an empty packet; and never more than a string or sequence
 * bound allows.  Computed once at attach (the append path compares with it).
 */
static inline uint32_t tb_chan_max_payload(uint64_t sb_size, uint32_t vtid)
{
	uint64_t fixed = TB_PACKET_HEADER_SIZE + 2ull * TB_EXTENDED_HDR_SIZE + TB_THREAD_PAYLOAD_SIZE + 8 +
			 (vtid ? 2ull * TB_VTID_SIZE : 0);
	uint64_t room = sb_size > fixed ? sb_size - fixed : 0;
	return room < TB_PAYLOAD_MAX_LEN + 4096ull ? (uint32_t)room : TB_PAYLOAD_MAX_LEN + 4096u;
}

struct tb_session {
	int fd;
	int dirfd;              /* the directory holding the file (-1 unknown): unlink goes through it */
	int readonly;
	int guard;              /* slot + 1 of the SIGBUS guard (session/sigbus.h), 0 = not guarded */
	char path[PATH_MAX];
	uint8_t *base;          /* the mapping */
	uint64_t size;
	struct tb_map *map;     /* == base */
	uint32_t ncpus;
	uint32_t nchannels;
	uint32_t protocol;      /* enum tb_protocol */
	uint32_t clock_kind;
	uint64_t clock_freq;
	int64_t clock_offset_ns;
	uint8_t uuid[16];
	struct tb_chan_view chan[TB_MAX_CHANNELS];
	struct tb_ctl *ctl;            /* [nchannels * ncpus] */
	struct tb_registry *reg;
	uint32_t reg_capacity;
	struct tb_proc_table *procs;
	uint32_t proc_capacity;
	/* [nchannels * ncpus] descriptors for the rseq fast path (rseq.h),
	 * computed once from the validated values above */
	struct tb_fast_ring *fast;
	/* glibc's __rseq_offset, copied with the descriptors: the append
	 * paths find this thread's rseq area with one load of this hot line
	 * (ring/rseq.h, tb_rseq_area_at) instead of two through the GOT */
	ptrdiff_t rseq_off;
	/* block mode, producers: the last consumer liveness check of this
	 * process, (consumer_pid << 1) | gone, and when (monotonic ns); relaxed
	 * atomics, a stale value only costs one more check (append.c) */
	uint64_t cons_seen;
	uint64_t cons_checked_ns;
	/* producer sessions replaced by tb_producer_use() stay mapped (a thread
	 * may still be inside an append): they are kept on this list */
	struct tb_session *retired_next;
	int retired;
	/* set by tb_producer_use() (relaxed: read by the same process's
	 * tb_session_close(), which must not unmap a session a thread of this
	 * process may be appending to): never unmapped afterwards */
	int pinned;
	/* the registry lock was not obtained within its bound once (a stuck or
	 * corrupted lock word): later attempts fail at once (registry.c) */
	int reg_lock_broken;
	/* this struct and `fast` were mmap()ed, not malloc()ed: the
	 * async-signal-safe attach of record --pid (TB_ATTACH_SIGSAFE_) */
	int sigsafe_alloc;
};

TB_HIDDEN int tb_session_fast_init(struct tb_session *s);

/* tb_session_attach() flag for the producer's automatic attach only: no
 * SIGBUS guard (an application that merely links the library keeps its
 * signal handlers).  Not in the public header. */
#define TB_ATTACH_NO_GUARD_ (1u << 30)
/* ... and for record --pid's attach, which runs in tb_emit() (maybe in a
 * signal handler): the struct and its descriptors come from mmap(), not
 * malloc() (an interrupted malloc may hold its lock).  Not public. */
#define TB_ATTACH_SIGSAFE_ (1u << 29)

static inline struct tb_ctl *tb_ctl_of(const struct tb_session *s, unsigned ch, unsigned cpu)
{
	return &s->ctl[(uint64_t)ch * s->ncpus + cpu];
}

static inline uint8_t *tb_ring_of(const struct tb_session *s, unsigned ch, unsigned cpu)
{
	return s->base + s->chan[ch].ring0_off + s->chan[ch].ring_size * cpu;
}

static inline struct tb_sbdesc *tb_sbdesc_of(const struct tb_session *s, unsigned ch, unsigned cpu)
{
	return (struct tb_sbdesc *)tb_ring_of(s, ch, cpu);
}

/* address of the sub-buffer holding position `pos` */
static inline uint8_t *tb_sb_at(const struct tb_session *s, unsigned ch, unsigned cpu, uint64_t pos)
{
	const struct tb_chan_view *c = &s->chan[ch];
	return tb_ring_of(s, ch, cpu) + c->data_off + ((pos & c->ring_mask) & ~(c->sb_size - 1));
}

/* Thread-local error message helpers (src/core/errmsg.c).
 * tb_fail(err, fmt, ...) sets the message tb_errmsg() returns and evaluates
 * to err (evaluated first).  A macro, so that callers (and static analysers) see that
 * `return tb_fail(-EX, ...)` returns -EX. */
TB_HIDDEN void tb_set_errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define tb_fail(err, ...)                                                            \
	__extension__({                                                              \
		int tb__err = (err); /* before the message: `-errno` stays errno's */ \
		tb_set_errmsg(__VA_ARGS__);                                          \
		tb__err;                                                             \
	})

#endif
