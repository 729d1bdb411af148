/* SPDX-License-Identifier: MIT */
/*
 * crash.c - libtracebuf's fatal-signal handler: when the program crashes, its
 * crashing thread writes what it knows into the rings before it dies, so that
 * a snapshot (the flight recorder's `crash` snapshot, docs/FLIGHT-RECORDER.md
 * "The crashing thread") or the trace of `record` says which thread crashed,
 * how, and where.
 *
 *   tb_crash_install   installed by the producer's attach of a recording
 *                      ($TRACEBUF_SESSION: record; record --pid's attach), for
 *                      SIGSEGV SIGBUS SIGABRT SIGILL SIGFPE SIGSYS SIGTRAP,
 *                      only where the disposition is SIG_DFL (a program's or a
 *                      sanitizer's handler is never replaced; one the program
 *                      installs later replaces ours); not when the program's
 *                      environment had TRACEBUF_CRASH_HANDLER=0 at its start
 *   the handler        SA_SIGINFO | SA_ONSTACK.  The first crashing thread
 *                      writes (a guard; another thread crashing meanwhile
 *                      waits for the process to die, a fault in the writer
 *                      goes to the default action), then: the return
 *                      addresses of the stack (the frame-pointer chain, and a
 *                      scan of stack words where code keeps no frame record;
 *                      every word read with process_vm_readv on this process,
 *                      which returns EFAULT where a load would fault), the
 *                      executable mappings that
 *                      hold them (TB_CRASH_MAP_EVENT, from /proc/self/maps read
 *                      by the async-signal-safe reader the sampler uses,
 *                      platform/maps.c), then the crash (TB_CRASH_EVENT: signo,
 *                      si_code, si_addr, ip and sp of the ucontext, tid, the
 *                      stack), through tb_append() as any event, to the lowest
 *                      channel.  Then SIG_DFL again and the signal re-raised to
 *                      this thread (tgkill): the process ends with the signal
 *                      and status it would have had (a fault re-executes the
 *                      instruction; abort() and kill -SEGV find the signal
 *                      pending when the handler returns).
 * Nothing here is on the event fast path.  Async-signal-safe: no malloc, no
 * stdio, no lock; its buffers are static (one writer: the guard), so that it
 * needs little of a small alternate stack (the mappings are skipped when what
 * is left of one is smaller than the maps reader's buffers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <tracebuf/event.h>

#include "core/format.h"
#include "platform/maps.h"
#include "producer/producer.h"

/* their masks: set to tb_disabled_mask, then registered, by producer.c */
struct tb_event_class tb_crash_cls = {
	.name = TB_CRASH_EVENT,
	.nfields = 8,
	.fields = { { "signo", TB_FT_U32, 0, NULL },
		    { "code", TB_FT_I32, 0, NULL },
		    { "tid", TB_FT_U32, 0, NULL },
		    { "addr", TB_FT_U64, 0, NULL },
		    { "ip", TB_FT_U64, 0, NULL },
		    { "sp", TB_FT_U64, 0, NULL },
		    { "flags", TB_FT_U32, 0, NULL },
		    { "stack", TB_FT_U64SEQ, TB_CRASH_DEPTH, NULL } },
};
/* the fields of profile:map (src/profile/profile_events.h) */
struct tb_event_class tb_crash_map_cls = {
	.name = TB_CRASH_MAP_EVENT,
	.nfields = 5,
	.fields = { { "start", TB_FT_U64, 0, NULL },
		    { "end", TB_FT_U64, 0, NULL },
		    { "pgoff", TB_FT_U64, 0, NULL },
		    { "gen", TB_FT_U32, 0, NULL },
		    { "path", TB_FT_STRING, TB_MAPS_PATH_MAX, NULL } },
};

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGSYS, SIGTRAP };
static int crash_off; /* TRACEBUF_CRASH_HANDLER=0 at start */

static struct tb_session *(*crash_session)(void); /* tb_producer_session: relaxed */

/* Priority 101: before tb_autoattach (producer.c), a constructor of default
 * priority, which may install the handler */
__attribute__((constructor(101))) static void crash_init(void)
{
	const char *v = getenv("TRACEBUF_CRASH_HANDLER");
	crash_off = v && !strcmp(v, "0");
}

/* ---- the handler's state: one writer at a time (crash_busy) ---- */

static uint32_t crash_busy; /* the tid of the thread that writes; 0: none yet */
static uint64_t frames[TB_CRASH_DEPTH];
static uint8_t payload[4 + 4 + 4 + 8 + 8 + 8 + 4 + 4 + 8 * TB_CRASH_DEPTH];
static uint8_t map_payload[8 + 8 + 8 + 4 + TB_MAPS_PATH_MAX + 1];

struct crash_out {
	struct tb_session *s;
	unsigned ch;
	uint32_t map_id;
	unsigned n;       /* frames */
	uint64_t written; /* bit i: frame i's mapping written (a mapping holds several) */
};

/* Reads n bytes at addr of this process without ever faulting: 0, or -1
 * (unmapped, unreadable; or the system call refused: seccomp). */
static int read_self(uint64_t addr, void *out, size_t n)
{
	struct iovec l = { out, n };
	struct iovec r = { (void *)(uintptr_t)addr, n }; // NOLINT(performance-no-int-to-ptr): checked by the kernel
	return syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul) == (long)n ? 0 : -1;
}

/* Up to n words at addr: how many could be read (the rest of the mapping). */
static unsigned read_words(uint64_t addr, uint64_t *w, unsigned n)
{
	struct iovec l = { w, 8 * (size_t)n };
	struct iovec r = { (void *)(uintptr_t)addr, 8 * (size_t)n }; // NOLINT(performance-no-int-to-ptr): checked by the kernel
	long got = syscall(SYS_process_vm_readv, (long)getpid(), &l, 1ul, &r, 1ul, 0ul);
	return got > 0 ? (unsigned)(got / 8) : 0;
}

/* The executable mappings (a first read of /proc/self/maps), against which
 * every return address is checked; 0 of them: nothing is checked. */
#define CRASH_XMAPS 1024
static struct {
	uint64_t lo, hi;
} xmaps[CRASH_XMAPS];
static unsigned nxmaps;

static void on_xmap(void *arg, const struct tb_maps_line *m)
{
	(void)arg;
	if (nxmaps < CRASH_XMAPS) {
		xmaps[nxmaps].lo = m->start;
		xmaps[nxmaps].hi = m->end;
		nxmaps++;
	}
}

static int in_code(uint64_t a)
{
	for (unsigned i = 0; i < nxmaps; i++)
		if (a >= xmaps[i].lo && a < xmaps[i].hi)
			return 1;
	return !nxmaps;
}

/* Is a a return address: in code, and the bytes before it one of x86-64's
 * call forms (E8 rel32; FF /2 with a register, [reg], disp8, SIB, disp32 or
 * rip-relative operand).  A scan of stack words takes only these. */
static int after_call(uint64_t a)
{
	uint8_t b[8];
	if (a < 4096 + 8 || !nxmaps || !in_code(a) || read_self(a - 8, b, sizeof b) < 0)
		return 0;
#define CALL_FF(i, mods) (b[i] == 0xff && ((b[(i) + 1] >> 3) & 7) == 2 && (mods))
	unsigned m2 = b[7] >> 6, r2 = b[7] & 7, m3 = b[6] >> 6, m4 = b[5] >> 6, r4 = b[5] & 7;
	unsigned m6 = b[3] >> 6, r6 = b[3] & 7, m7 = b[2] >> 6, r7 = b[2] & 7;
	return b[3] == 0xe8 || CALL_FF(6, m2 == 3 || (m2 == 0 && r2 != 4 && r2 != 5)) ||
	       CALL_FF(5, m3 == 1 && (b[6] & 7) != 4) || CALL_FF(4, m4 == 1 && r4 == 4) ||
	       CALL_FF(2, m6 == 2 || (m6 == 0 && r6 == 5)) || CALL_FF(1, m7 == 2 && r7 == 4) ||
	       CALL_FF(5, m3 == 0 && (b[6] & 7) == 4); /* [SIB] */
#undef CALL_FF
}

/* A frame record at fp above floor: aligned, its return address in code. */
static int frame_at(uint64_t fp, uint64_t floor, uint64_t rec[2])
{
	return fp >= 4096 && !(fp & 7) && fp >= floor && fp <= UINT64_MAX - 16 && read_self(fp, rec, 16) == 0 &&
	       in_code(rec[1]);
}

#define CRASH_SCAN_MAX (64u * 1024u) /* bytes of stack a scan reads at most */

/*
 * The stack from the context: frames[0] = ip, then return addresses,
 * innermost first.  The frame-pointer chain ([fp] = caller's fp, [fp + 8] =
 * return address; each record 8-byte aligned, strictly above the previous
 * one, its return address in an executable mapping; a fp in the first page
 * ends it: 0 at a thread's start, a small integer where code without frame
 * pointers uses rbp).  Code without frame records (a libc built without
 * them: abort(), pause()) hides its callers from the chain; so the words
 * between sp and the first record, and, where the chain breaks, the words
 * above it, are scanned for return addresses (after_call()), the chain
 * resumed at the first word before one that is a record again
 * (TB_CRASH_F_SCANNED: such frames may include a stale address).
 */
static unsigned walk(const ucontext_t *uc, uint32_t *flags)
{
	uint64_t fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	uint64_t floor = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	uint64_t scan_end = 0; /* scan [floor, scan_end) first; UINT64_MAX: until a record */
	unsigned n = 0;
	uint64_t rec[2];
	frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	if (!nxmaps) /* nothing to check addresses against: the chain alone */
		scan_end = 0;
	else if (fp >= 4096 && frame_at(fp, floor, rec) && fp - floor <= (uint64_t)CRASH_SCAN_MAX)
		scan_end = fp;
	else /* no record at rbp: scan */
		scan_end = UINT64_MAX;
	for (;;) {
		if (scan_end && floor < scan_end) {
			/* the words of [floor, scan_end) (a record's fp resumes the chain) */
			uint64_t w[64], limit = floor + (uint64_t)CRASH_SCAN_MAX, at = floor;
			int resumed = 0;
			while (!resumed && at < scan_end && at < limit && n < TB_CRASH_DEPTH) {
				unsigned nw = read_words(at, w, 64);
				if (!nw)
					break; /* the end of the stack's mapping */
				for (unsigned k = 0; k < nw && at + 8ull * k < scan_end && n < TB_CRASH_DEPTH; k++) {
					uint64_t loc = at + 8ull * k;
					if (!after_call(w[k]))
						continue;
					frames[n++] = w[k];
					*flags |= TB_CRASH_F_SCANNED;
					/* the word before a return address: its caller's saved fp? */
					if (scan_end == UINT64_MAX && k && frame_at(w[k - 1], loc + 8, rec)) {
						fp = w[k - 1];
						floor = loc + 8;
						resumed = 1;
						break;
					}
				}
				if (!resumed && nw < 64)
					break; /* the end of the stack's mapping */
				if (!resumed)
					at += sizeof w;
			}
			if (scan_end == UINT64_MAX && !resumed)
				break; /* no record found again */
			scan_end = 0;
		}
		if (fp < 4096 || n >= TB_CRASH_DEPTH)
			break;
		if (!frame_at(fp, floor, rec)) {
			if (!nxmaps) {
				*flags |= TB_CRASH_F_ABORTED;
				break;
			}
			scan_end = UINT64_MAX; /* a broken chain: scan from here */
			continue;
		}
		if (!rec[1])
			break;
		frames[n++] = rec[1];
		floor = fp + 16;
		fp = rec[0];
	}
	if (n >= TB_CRASH_DEPTH && fp >= 4096)
		*flags |= TB_CRASH_F_TRUNCATED;
	return n;
}

static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

/* a mapping of /proc/self/maps: written when it holds a frame not yet covered */
static void on_map(void *arg, const struct tb_maps_line *m)
{
	struct crash_out *o = arg;
	int hit = 0;
	for (unsigned i = 0; i < o->n; i++) {
		/* a return address points after its call: the call is at a - 1 */
		uint64_t a = i ? frames[i] - 1 : frames[i];
		if (!(o->written >> i & 1) && a >= m->start && a < m->end) {
			o->written |= 1ull << i;
			hit = 1;
		}
	}
	if (!hit)
		return;
	uint8_t *p = map_payload;
	uint32_t gen = 0;
	put(&p, &m->start, 8);
	put(&p, &m->end, 8);
	put(&p, &m->pgoff, 8);
	put(&p, &gen, 4);
	size_t len = 0;
	while (len < TB_MAPS_PATH_MAX && m->path[len])
		len++;
	put(&p, m->path, len);
	*p++ = 0;
	tb_append(o->s, o->ch, o->map_id, map_payload, (uint32_t)(p - map_payload));
}

/* The id of cls in s and 0, when it is bound to this very session (a
 * tb_producer_use() may be switching sessions); the acquire pairs with the
 * release in bind_class() (producer.c). */
static int class_id(struct tb_session *s, struct tb_event_class *cls, uint32_t *id)
{
	const uint32_t *m = __atomic_load_n(&cls->mask, __ATOMIC_ACQUIRE);
	*id = cls->id;
	return *id < s->reg_capacity && m == &s->reg->events[*id].enabled ? 0 : -1;
}

/* The lowest channel both classes are enabled on; -1 when none. */
static int crash_channel(struct tb_session *s, uint32_t cid, uint32_t mid)
{
	uint32_t m = __atomic_load_n(&s->reg->events[cid].enabled, __ATOMIC_RELAXED) &
		     __atomic_load_n(&s->reg->events[mid].enabled, __ATOMIC_RELAXED) & ((1u << s->nchannels) - 1);
	return m ? __builtin_ctz(m) : -1;
}

/* Room left on the alternate signal stack when the handler runs on one; SIZE_MAX otherwise. */
static size_t altstack_room(void)
{
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0 || !(ss.ss_flags & SS_ONSTACK))
		return SIZE_MAX;
	uintptr_t here = (uintptr_t)&ss, lo = (uintptr_t)ss.ss_sp;
	return here > lo ? here - lo : 0;
}

static void write_crash(int sig, const siginfo_t *si, const ucontext_t *uc)
{
	struct tb_session *(*session)(void) = __atomic_load_n(&crash_session, __ATOMIC_RELAXED);
	struct tb_session *s = session ? session() : NULL;
	uint32_t cid, mid;
	if (!s || class_id(s, &tb_crash_cls, &cid) < 0 || class_id(s, &tb_crash_map_cls, &mid) < 0)
		return;
	int ch = crash_channel(s, cid, mid);
	if (ch < 0)
		return;
	uint32_t flags = 0;
	struct crash_out o = { .s = s, .ch = (unsigned)ch, .map_id = mid };
	/* the maps reader's buffers are on the stack: not on what is left of a small alternate stack */
	int maps_ok = altstack_room() >= TB_MAPS_STACK_USE + 4096;
	nxmaps = 0;
	if (!maps_ok || tb_maps_read(on_xmap, NULL) != 0) {
		nxmaps = 0; /* the chain alone, unchecked */
		maps_ok = 0;
	}
	o.n = walk(uc, &flags);
	if (!maps_ok || tb_maps_read(on_map, &o) != 0)
		flags |= TB_CRASH_F_NOMAPS;
	uint32_t signo = (uint32_t)sig, tid = (uint32_t)syscall(SYS_gettid);
	int32_t code = si->si_code;
	uint64_t addr = (uint64_t)(uintptr_t)si->si_addr;
	uint64_t ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP], sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	uint32_t n = o.n;
	uint8_t *p = payload;
	put(&p, &signo, 4);
	put(&p, &code, 4);
	put(&p, &tid, 4);
	put(&p, &addr, 8);
	put(&p, &ip, 8);
	put(&p, &sp, 8);
	put(&p, &flags, 4);
	put(&p, &n, 4);
	put(&p, frames, 8 * (size_t)n);
	tb_append(s, (unsigned)ch, cid, payload, (uint32_t)(p - payload));
}

static void crash_handler(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uint32_t me = (uint32_t)syscall(SYS_gettid), owner = 0;
	/* One crashing thread writes, and keeps the guard: the process dies
	 * when it re-raises.  Another thread crashing meanwhile waits here for
	 * that (a default action now would kill the process mid-write), 5 s at
	 * most; a fault inside the writer itself (its own tid) goes on to the
	 * default action.  Acquire: the static buffers of an earlier writer
	 * (none: the guard is never released). */
	if (__atomic_compare_exchange_n(&crash_busy, &owner, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		write_crash(sig, si, ucv);
	} else if (owner != me) {
		struct timespec ms = { 0, 1000000 };
		for (int i = 0; i < 5000; i++)
			nanosleep(&ms, NULL);
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* pending while the handler runs (sig is blocked in it), delivered when
	 * it returns: the process dies of sig, as it would have without us */
	syscall(SYS_tgkill, (long)getpid(), (long)me, (long)sig);
	errno = saved;
}

void tb_crash_install(struct tb_session *(*session)(void))
{
	if (crash_off)
		return;
	/* relaxed: the handler is installed after it (sigaction orders them) */
	__atomic_store_n(&crash_session, session, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
		struct sigaction old;
		if (sigaction(crash_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue; /* the program's, a sanitizer's, or ours already */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = crash_handler;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* not SA_RESETHAND: a second crashing thread must wait (handler) */
		sigemptyset(&sa.sa_mask);
		sigaction(crash_signals[i], &sa, NULL);
	}
}
