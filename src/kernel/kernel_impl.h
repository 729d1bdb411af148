/* SPDX-License-Identifier: MIT */
/* kernel_impl.h - the kernel recorder's private state (src/kernel/ only). */
#ifndef TB_KERNEL_KERNEL_IMPL_H
#define TB_KERNEL_KERNEL_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "kernel/kernel.h"
#include "kernel/perf_ring.h"

#define TB_KPKT_SIZE (64u << 10)   /* the most a kernel packet holds (bytes) */
#define TB_KINSTANCE_CHANNEL 0xffffu /* stream_instance_id = this << 32 | cpu */
#define TB_KPAIRS 64u              /* (tsc, monotonic ns) pairs kept for the mapping */
#define TB_KWARN 16u
#define TB_KEXCL 32u               /* the recorder's own threads left out (tb_kernel_exclude_self) */
#define TB_KTHROUGH_MARGIN_NS 10000000ull /* 10 ms: a record's clock read to its publication */

/* An event drained from a ring and not written yet: what the sort, the
 * merge and the filter need (a tb_kev but for its payload), the payload at
 * off in its CPU's arena.  32 bytes, so that the sort and the events a pass
 * holds back for the next one (capture.c) move little: a tb_kev has room
 * for the largest payload (TB_KEV_PAYLOAD_MAX), most are ~60 bytes. */
struct kpend {
	uint64_t ts;             /* session clock ticks */
	uint32_t off;            /* its payload in kcpu.arena */
	uint16_t len;            /* ... of len bytes */
	uint8_t tp;              /* enum tb_ktp */
	uint8_t cls;             /* index of its class */
	int32_t cur_pid, cur_tid;/* the task current when it fired */
	int32_t tid_a, tid_b;    /* the tasks it names (struct tb_kev) */
};

/* One CPU: its perf ring, the events taken from it and not yet written,
 * and its stream file. */
struct kring {
	int fd;                  /* the ring's event */
	unsigned group;          /* 0: scheduling events; 1: system calls, page faults (open.c) */
	int hup;                 /* its event's task and heirs have ended: not polled (tb_kernel_wait) */
	void *map;
	size_t map_len;
	struct tb_perf_ring ring;
};

struct kcpu {
	int cpu;
	int fd;                  /* the first ring's event (-1: no event open on this CPU) */
	struct kring rings[2];   /* the CPU's rings, one per group of its events (each shared by its
				  * group's events through SET_OUTPUT) */
	unsigned nrings;
	int gring[2];            /* the ring of each group (index in rings[]), -1: none */
	struct kpend *ev;        /* pending, in time order after a pass sorted them */
	size_t n, cap, next;     /* next: the merge's position */
	struct kpend *tmp;       /* sort_events()'s buffer */
	uint8_t *arena;          /* the pending events' payloads (kpend.off) */
	size_t arena_len, arena_cap;
	uint8_t *arena2;         /* where a pass moves the payloads of those held back */
	size_t arena2_cap;
	struct tb_kev pt_last;   /* the last per-task event merged from this CPU (when maybe_dups: a
				  * second record of the same hit is dropped) */
	size_t tmp_cap;
	uint64_t lost[TB_LOSS_NCAUSES]; /* running totals by cause */
	uint64_t samples;        /* PERF_RECORD_SAMPLE records read from this ring */
	uint64_t reported_lost;  /* ... and the PERF_RECORD_LOST counts */
	uint64_t counted;        /* the twins' total on this CPU (final pass) */
	uint64_t charged;        /* samples the kernel charged as lost to this ring (PERF_FORMAT_LOST, final pass) */
	int32_t chain_next;      /* next_tid of the last sched_switch taken from this ring (-1: none, or a loss since) */
	uint64_t idle_gaps;      /* switches out of the idle task the ring never had (see tb_kernel_stats) */
	/* the stream */
	int sfd;                 /* -1: not created yet */
	uint64_t file_off, seq, last_ts;
	uint64_t written_lost[TB_LOSS_NCAUSES]; /* the totals of the last packet written */
	int wrote;               /* a packet is in the file */
	uint8_t *pkt;            /* TB_KPKT_SIZE bytes: header + records */
	uint32_t pkt_len, pkt_events;
	uint64_t pkt_begin, pkt_prev;
};

struct kid {
	uint64_t id;     /* PERF_EVENT_IOC_ID */
	uint32_t tp;     /* enum tb_ktp */
};

struct tb_kernel {
	int all;
	uint32_t ring_pages;
	uint32_t clock_kind;
	uint64_t clock_freq;
	int64_t mono_offset_ns;
	unsigned ncpu;
	unsigned nfds;           /* fds[] in use */
	struct kcpu *cpus;
	int *fds;                /* every event's fd */
	unsigned *fd_cpu;        /* index in cpus[] of each */
	size_t capfds;           /* room in fds, fd_cpu, ids, cfds, cfd_cpu (open.c, room()) */
	uint32_t *roots;         /* the traced processes (cfg.roots) */
	unsigned nroots;
	int pertask;             /* group 1 (system calls, page faults) is opened on the tree's tasks,
				  * inherited: its events are the tree's (no filter), with no counting
				  * twin (the ring's loss records count its losses) */
	uint64_t pt_delivered, pt_lost; /* those events written, and lost to a full ring */
	uint64_t pt_dups;        /* ... and records of a hit already taken (capture.c) */
	uint64_t dup_ticks;      /* two records of one hit are at most this far apart (2 us) */
	uint32_t excl[TB_KEXCL]; /* the recorder's own threads (an embedded recorder is in the tree it
				  * traces): their events are left out; 0 = free (tb_kernel_exclude_self) */
	unsigned nexcl;
	int maybe_dups;
	int ids_sorted;          /* ids[] is in increasing id order (tb_kernel_open) */          /* a task was opened after others that may have passed it their events */
	int *cfds;               /* the counting twins (open.c) */
	unsigned *cfd_cpu;       /* index in cpus[] of each twin */
	unsigned ncfds;
	uint64_t silent;         /* hits the twins counted that no ring delivered nor reported lost */
	int count_failed;        /* a twin could not be opened: no generated count */
	int no_lost_format;      /* the kernel refused PERF_FORMAT_LOST (before 6.0): no charged count */
	uint64_t dropped;        /* of silent: neither written nor charged as lost (PERF_FORMAT_LOST) */
	uint64_t generated;      /* the twins' total, read when the events are disabled */
	struct kid *ids;         /* sorted by id once open (ids_sorted) */
	unsigned nids;
	int enabled;
	struct tb_tp_format fmt[TB_KTP_N];
	struct tb_ktp_plan plan[TB_KTP_N]; /* each tracepoint's decoding, resolved from fmt[] at its first record */
	int8_t plan_state[TB_KTP_N];       /* 0: not resolved yet, 1: plan[] holds it, -1: fmt[] cannot be decoded */
	int32_t cls_of[TB_KTP_N]; /* class index of each tracepoint opened (its enum tb_ktp), -1 */
	unsigned nopened;
	struct tb_event_desc classes[TB_KERNEL_MAX_CLASSES];
	uint32_t nclasses;
	/* the traced tree: tids and tgids (one namespace) */
	uint32_t *set;
	size_t set_cap, set_n;
	/* clock pairs: pairs[(pair_n - 1) % TB_KPAIRS] is the latest */
	struct { uint64_t tsc, ns; } pairs[TB_KPAIRS];
	unsigned pair_n;
	int dirfd;               /* -1: no stream files (relay-only): packets go to the sink only */
	tb_kernel_sink sink;
	void *sink_arg;
	/* live promise: a pass read the clock at t0, drained every ring after
	 * that, and handed what it took to the sink: nothing stamped before
	 * t0 - TB_KTHROUGH_MARGIN is still to come.  Later events are written
	 * no earlier than floor (the last promise), so that it holds even for a
	 * record published late (a vCPU stopped inside the tracepoint handler) */
	uint64_t through;        /* release by the kernel thread, acquire by readers */
	uint64_t floor;          /* the kernel thread's */
	unsigned gen;            /* 0: files kernel_cpu<N>; else kernel_cpu<N>_r<gen> (a resumed directory
				  * already holds earlier recorders' kernel streams: kept, never overwritten) */
	uint8_t uuid[16];
	uint8_t *scratch;        /* TB_PERF_REC_MAX */
	struct kcpu *cur;        /* the ring being drained (the record callback's) */
	unsigned cur_group;      /* ... and its group */
	int err;                 /* first write error */
	/* stats, read by other threads (relaxed atomics) */
	uint64_t st_delivered, st_filtered, st_packets, st_bytes, st_samples;
	pthread_mutex_t warn_lock;
	char warn[TB_KWARN][256];
	unsigned warn_head, warn_tail;
};

/* Loss totals are read by other threads (tb_kernel_stats): one writer, relaxed stores. */
static inline void kc_lost(struct kcpu *c, unsigned cause, uint64_t n)
{
	__atomic_store_n(&c->lost[cause], c->lost[cause] + n, __ATOMIC_RELAXED);
}

/* perm.c: a small file's text (0, or -errno); the permission state said in an error; the error
 * of a refused perf_event_open of tracepoint tp; tracefs's events directory */
TB_HIDDEN int tb_kfile_read(const char *path, char *buf, size_t len);
TB_HIDDEN void tb_kperm_state(char *buf, size_t len, int tracefs_ok);
TB_HIDDEN int tb_kperm_error(int err, unsigned tp);
TB_HIDDEN int tb_kfind_tracefs(char *dir, size_t len);
/* tasks.c: a root and its threads into the filter's set; the tree's tasks not in tasks[] yet
 * appended to it (-1: out of memory) */
TB_HIDDEN void tb_kadd_root(struct tb_kernel *k, uint32_t pid);
TB_HIDDEN int tb_ktree_tasks(struct tb_kernel *k, uint32_t **tasks, size_t *n, size_t *cap);

/* capture.c: adds a tid (or tgid) to the traced tree; takes a (tsc, ns) pair */
TB_HIDDEN void tb_kset_add(struct tb_kernel *k, uint32_t v);
TB_HIDDEN void tb_kclock_pair(struct tb_kernel *k);
TB_HIDDEN void tb_kernel_warn(struct tb_kernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pending.c: room for one more pending event on CPU c (its entry, the largest payload at
 * its arena's end): 0, or -1 out of memory; the events a pass held back moved to the front
 * (entries and payloads), before the next pass drains; a stable sort of c's pending events
 * by time (0, or -1 out of memory: left as they are) */
TB_HIDDEN int tb_kpend_room(struct kcpu *c);
TB_HIDDEN void tb_kpend_hold(struct kcpu *c);
TB_HIDDEN int tb_kpend_sort(struct kcpu *c);
/* kwrite.c: the stream file name of a CPU */
TB_HIDDEN void tb_kw_name(const struct tb_kernel *k, unsigned cpu, char *buf, size_t len);
/* kwrite.c: adds an event of class index cls at ts, its payload[0..len), to its CPU's packet
 * (written when full). */
TB_HIDDEN void tb_kw_append(struct tb_kernel *k, struct kcpu *c, uint32_t cls, uint64_t ts, const uint8_t *payload,
			    uint32_t len);
/* Writes the CPU's current packet, if it has events. */
TB_HIDDEN void tb_kw_flush(struct tb_kernel *k, struct kcpu *c);
/* The end of a stream: losses after its last packet go in a last empty packet. */
TB_HIDDEN void tb_kw_finish(struct tb_kernel *k, struct kcpu *c, uint64_t now);

#endif
