/* SPDX-License-Identifier: MIT */
/*
 * rseq.h - restartable sequences: the area glibc registered for this thread,
 * and tracebuf's three critical sections (x86_64).
 *
 * A critical section (cs) runs between labels 1 and 2.  If the thread is
 * preempted, migrated or signalled while its instruction pointer is in
 * [1, 2), the kernel moves it to the abort label 4 (preceded by the RSEQ_SIG
 * signature glibc registered) before returning to user space; the C caller
 * then starts over.  So a cs either runs alone on its CPU from label 1 to its
 * final store, or its effects before that final store are garbage that the
 * protocol tolerates (see "two-version state" in src/core/format.h).
 *
 * The descriptor of each cs goes to section __rseq_cs; the pointer to it is
 * stored in rseq->rseq_cs *before* label 1, so that any interruption after
 * that store finds the IP inside the range.  We never clear rseq_cs: the
 * kernel does when it finds the IP outside the range.
 *
 * Steps of each cs are labelled A.. and the one point another party can
 * observe is named "Observable:".
 */
#ifndef TB_RING_RSEQ_H
#define TB_RING_RSEQ_H

#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

#if !defined(__x86_64__)
#error "tracebuf's rseq critical sections are written for x86_64 only (fallback protocol elsewhere is future work)"
#endif

#define TB_RSEQ_SIG 0x53053053 /* glibc's RSEQ_SIG on x86 */

/* The kernel ABI struct (linux/rseq.h), only the fields we read/write. */
struct tb_rseq_abi {
	uint32_t cpu_id_start;
	uint32_t cpu_id;   /* current CPU, or >= 0xfffffffe when not registered */
	uint64_t rseq_cs;  /* pointer to the current cs descriptor */
	uint32_t flags;
} __attribute__((aligned(32)));

extern const ptrdiff_t __rseq_offset; /* glibc >= 2.35 */
extern const unsigned int __rseq_size;

/* This thread's rseq area, `off` bytes from the thread pointer. */
static inline struct tb_rseq_abi *tb_rseq_area_at(ptrdiff_t off)
{
	char *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return (struct tb_rseq_abi *)(tp + off);
}

/* The same at glibc's offset.  In position-independent code __rseq_offset
 * is reached through the GOT (two loads): the append paths use the copy in
 * their session instead (s->rseq_off, tb_session_fast_init()). */
static inline struct tb_rseq_abi *tb_rseq_area(void)
{
	return tb_rseq_area_at(__rseq_offset);
}

/* CPU this thread runs on per rseq, or -1 when rseq is not registered. */
static inline int tb_rseq_cpu(void)
{
	if (__rseq_size == 0)
		return -1;
	uint32_t c = __atomic_load_n(&tb_rseq_area()->cpu_id, __ATOMIC_RELAXED);
	return c >= 0xfffffffeu ? -1 : (int)c;
}

/* Offsets into struct tb_ctl used by the assembly (checked below). */
#define TB_CTL_HEAD 0
#define TB_CTL_ST_END 8
#define TB_CTL_TS_AFTER 16
#define TB_CTL_TS_BEFORE 24
#define TB_CTL_CNT_AFTER 32
#define TB_CTL_CNT_BEFORE 40
#define TB_CTL_TID_AFTER 48
#define TB_CTL_TID_BEFORE 56
_Static_assert(offsetof(struct tb_ctl, head) == TB_CTL_HEAD, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, st_end) == TB_CTL_ST_END, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, ts_after) == TB_CTL_TS_AFTER, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, ts_before) == TB_CTL_TS_BEFORE, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, cnt_after) == TB_CTL_CNT_AFTER, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, cnt_before) == TB_CTL_CNT_BEFORE, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, tid_after) == TB_CTL_TID_AFTER, "asm offsets");
_Static_assert(offsetof(struct tb_ctl, tid_before) == TB_CTL_TID_BEFORE, "asm offsets");

#define TB__STR_(x) #x
#define TB__STR(x) TB__STR_(x)


/*
 * Injection points (TB_INJECT builds only): a spin of tb_inject_spin[n]
 * iterations inside the critical section, so that preemption, migration and
 * signals land there far more often than in a normal build.  The stress
 * tests set the spins; normal builds expand these to nothing.
 */
#ifdef TB_INJECT
extern uint32_t tb_inject_spin[8] __attribute__((visibility("hidden")));
#define TB_INJECT_ASM(n)                                                       \
	"movl tb_inject_spin+4*" #n "(%%rip), %%r12d\n\t"                      \
	"10:\n\t"                                                              \
	"testl %%r12d, %%r12d\n\t"                                             \
	"jz 11f\n\t"                                                           \
	"pause\n\t"                                                            \
	"decl %%r12d\n\t"                                                      \
	"jmp 10b\n\t"                                                          \
	"11:\n\t"
#define TB_INJECT_CLOBBER , "r12"
#else
#define TB_INJECT_ASM(n) ""
#define TB_INJECT_CLOBBER
#endif

/* Descriptor + pointer-array entry + the store of rseq_cs, then label 1. */
#define TB_RSEQ_CS_BEGIN(rseq_operand)                                         \
	".pushsection __rseq_cs, \"aw\"\n\t"                                   \
	".balign 32\n\t"                                                       \
	"3:\n\t"                                                               \
	".long 0, 0\n\t"                                                       \
	".quad 1f, (2f - 1f), 4f\n\t"                                          \
	".popsection\n\t"                                                      \
	".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"                         \
	".quad 3b\n\t"                                                         \
	".popsection\n\t"                                                      \
	"leaq 3b(%%rip), %%rax\n\t"                                            \
	"movq %%rax, 8(%[" rseq_operand "])\n\t"                               \
	"1:\n\t"

/*
 * The abort handlers are in the function's own text, right after the cs,
 * not in a section of their own (the usual __rseq_failure): the kernel moves
 * the IP of a thread interrupted in [1, 2) to label 4 *before* it delivers a
 * signal, so a profiler's sample lands there, and a stub outside the
 * function has no unwind information (no FDE covers it: DWARF unwinders stop
 * there, symbolizers name no function).  Here label 4 is inside the
 * function, at the stack depth of the cs (the asm does not move rsp), so the
 * CFI rows the compiler wrote for the asm statement describe it exactly, and
 * frame-pointer walks and symbols see the function that runs the cs
 * (docs/PROFILE.md, "Samples in tracebuf's critical sections").
 *
 * The signature: the kernel compares the 4 bytes before the abort IP with
 * the RSEQ_SIG registered; they are the displacement of a ud1, which traps
 * if anything ever falls into it.  The code before TB_RSEQ_ABORT_SIG must
 * never fall through to it (an unconditional jump).
 */
#define TB_RSEQ_ABORT_SIG                                                      \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                           \
	".long " TB__STR(TB_RSEQ_SIG) "\n\t"                                   \
	"4:\n\t"

/* Label 2 right after the commit; the caller's asm text defines the abort
 * handler itself with TB_RSEQ_ABORT_SIG where an unconditional jump precedes
 * it (the fast append: no jump added to the committed path). */
#define TB_RSEQ_CS_END_INLINE "2:\n\t"

/* Label 2 right after the commit, then the abort handler with its signature,
 * jumped over by the committed path (asm goto: the asm ends where the
 * committed path continues; one taken jump, on the slow paths only). */
#define TB_RSEQ_CS_END(abort_label)                                            \
	"2:\n\t"                                                               \
	"jmp 20f\n\t"                                                          \
	TB_RSEQ_ABORT_SIG                                                      \
	"jmp %l[" abort_label "]\n\t"                                          \
	"20:\n\t"

/* ---------------------------------------------------------------------- */
/* cs 1: the fast append (compact header, record fits, writer unchanged)   */
/* ---------------------------------------------------------------------- */

/* Per (channel, CPU), process-local, computed once at attach (tb_session.fast). */
struct tb_fast_ring {
	struct tb_ctl *ctl;   /* 0 */
	uint8_t *data;        /* 8: sub-buffer 0 of this CPU's ring */
	uint64_t ring_mask;   /* 16 */
	uint64_t sb_mask;     /* 24 */
	uint64_t sb_size;     /* 32 */
	uint64_t kind;        /* 40: TB_FAST_* bits (one load decides all three) */
	uint32_t max_payload; /* 48: the channel's bound (tb_chan_max_payload) */
	uint32_t pad32;
	uint64_t pad;
};
#define TB_FAST_ATTRIBUTION 1u /* the channel writes tracebuf:thread records */
#define TB_FAST_VTID 2u        /* its records carry the writer's tid (tb_rseq_fast_append_vtid) */
#define TB_FAST_OFF 4u         /* no fast path: fallback protocol, or a clock other than the TSC */

/* Per call.  In memory (the cs reads it through one register), so that the
 * caller finds its arguments there again when the cs does not commit. */
struct tb_fast_args {
	const uint8_t *src;   /* 0: payload */
	uint64_t len;         /* 8: payload bytes */
	uint64_t id;          /* 16: event id, <= 30 */
	uint64_t tid;         /* 24: writer context required (0 without attribution) */
	uint64_t vtid;        /* 32: vtid channels: the tid written after the header (else unread) */
};

/*
 * The fast append cs, with HDR bytes of record header + event context (a
 * string: "4", the compact header; "8", the compact header then the
 * writer's tid) and CTX_STORE the instructions that store the context after
 * the header (at 4(%%rdi), %%edx free; "" for none).  One text for both
 * record layouts, so that the channel without context runs exactly the
 * instructions it always did.
 *
 * Registers: five named scratch registers (rax and rdx for rdtsc, rsi, rdi
 * and rcx for the copy) and the four operands, three of which are taken
 * over once read: [rs] holds the ring's ctl from step B on, [cpu] its head
 * (then the new head, then the result), [r] is a copy temporary after step
 * G.  Nine registers in all, the caller-saved ones: a caller that keeps
 * nothing else live across the cs (tb_append_fast) saves no register.
 * The result is in [cpu]: 0 committed, 1 slow path, 2 aborted; not asm
 * goto, whose outputs compilers do not all define on the jump paths.
 */
#define TB_FAST_APPEND_CS(HDR, CTX_STORE) \
		TB_RSEQ_CS_BEGIN("rs")                                                \
		/* D (first): the timestamp, read inside the cs, so that the loads   \
		 * and checks below run while rdtsc completes */                      \
		"rdtsc\n\t"                                                           \
		"shlq $32, %%rdx\n\t"                                                 \
		"orq %%rdx, %%rax\n\t"                                                \
		/* A: still on the CPU whose ring we prepared? */                     \
		"cmpl %k[cpu], 4(%[rs])\n\t"                                          \
		"jnz 4f\n\t"                                                          \
		/* B: head must be initialised and the _after state valid at head */  \
		"movq 0(%[r]), %[rs]\n\t"                                             \
		"movq " TB__STR(TB_CTL_HEAD) "(%[rs]), %[cpu]\n\t"                    \
		"testq %[cpu], %[cpu]\n\t"                                            \
		"jz 17f\n\t"                                                          \
		"cmpq " TB__STR(TB_CTL_ST_END) "(%[rs]), %[cpu]\n\t"                  \
		"jne 17f\n\t"                                                         \
		/* C: the packet's writer context must be ours */                     \
		"movq " TB__STR(TB_CTL_TID_AFTER) "(%[rs]), %%rdx\n\t"                \
		"cmpq 24(%[a]), %%rdx\n\t"                                            \
		"jne 17f\n\t"                                                         \
		TB_INJECT_ASM(0)                                                      \
		/* D: the timestamp never below the previous one */                   \
		"movq " TB__STR(TB_CTL_TS_AFTER) "(%[rs]), %%rdx\n\t"                 \
		"cmpq %%rdx, %%rax\n\t"                                               \
		"cmovbq %%rdx, %%rax\n\t"                                             \
		/* E: compact header legal? (ts - prev < 2^27) */                     \
		"movq %%rax, %%rcx\n\t"                                               \
		"subq %%rdx, %%rcx\n\t"                                               \
		"cmpq $0x8000000, %%rcx\n\t"                                          \
		"jae 17f\n\t"                                                         \
		/* F: does header + context + payload fit in the current sub-buffer,  \
		 * leaving head strictly inside it?  (head never sits on a            \
		 * sub-buffer boundary: the consumer takes a sub-buffer as            \
		 * closed once head is past its end) */                               \
		"movq %[cpu], %%rcx\n\t"                                              \
		"andq 24(%[r]), %%rcx\n\t"                                            \
		"addq 8(%[a]), %%rcx\n\t"                                             \
		"addq $" HDR ", %%rcx\n\t"                                            \
		"cmpq 32(%[r]), %%rcx\n\t"                                            \
		"jae 17f\n\t"                                                         \
		/* G: write header, [context,] payload past head (invisible until I); \
		 * [cpu] becomes the new head, [r] a temporary */                     \
		"movq %[cpu], %%rdi\n\t"                                              \
		"andq 16(%[r]), %%rdi\n\t"                                            \
		"addq 8(%[r]), %%rdi\n\t"                                             \
		"movl %%eax, %%edx\n\t"                                               \
		"shll $5, %%edx\n\t"                                                  \
		"orl 16(%[a]), %%edx\n\t"                                             \
		"movl %%edx, (%%rdi)\n\t"                                             \
		CTX_STORE                                                             \
		"addq $" HDR ", %%rdi\n\t"                                            \
		"movq 0(%[a]), %%rsi\n\t"                                             \
		"movq 8(%[a]), %%rcx\n\t"                                             \
		"leaq " HDR "(%[cpu],%%rcx), %[cpu]\n\t"                              \
		/* the payload: 16 bytes per iteration while more than 16 are     \
		 * left, then the last 16 (overlapping what the loop copied);      \
		 * under 16, the first and last 8 or 4 (overlapping), or bytes.    \
		 * Reads and writes exactly [src, src + len) -> [dst, dst + len). */\
		"cmpq $16, %%rcx\n\t"                                                 \
		"jb 9f\n\t"                                                           \
		"leaq -16(%%rsi,%%rcx), %%rdx\n\t"                                    \
		"leaq -16(%%rdi,%%rcx), %[r]\n\t"                                     \
		"5:\n\t"                                                              \
		"movups (%%rsi), %%xmm0\n\t"                                          \
		"movups %%xmm0, (%%rdi)\n\t"                                          \
		"addq $16, %%rsi\n\t"                                                 \
		"addq $16, %%rdi\n\t"                                                 \
		"cmpq %%rdx, %%rsi\n\t"                                               \
		"jb 5b\n\t"                                                           \
		"movups (%%rdx), %%xmm0\n\t"                                          \
		"movups %%xmm0, (%[r])\n\t"                                           \
		"jmp 7f\n\t"                                                          \
		"9:\n\t"                                                              \
		"cmpq $8, %%rcx\n\t"                                                  \
		"jb 6f\n\t"                                                           \
		"movq (%%rsi), %%rdx\n\t"                                             \
		"movq -8(%%rsi,%%rcx), %[r]\n\t"                                      \
		"movq %%rdx, (%%rdi)\n\t"                                             \
		"movq %[r], -8(%%rdi,%%rcx)\n\t"                                      \
		"jmp 7f\n\t"                                                          \
		"6:\n\t"                                                              \
		"cmpq $4, %%rcx\n\t"                                                  \
		"jb 16f\n\t"                                                          \
		"movl (%%rsi), %%edx\n\t"                                             \
		"movl -4(%%rsi,%%rcx), %k[r]\n\t"                                     \
		"movl %%edx, (%%rdi)\n\t"                                             \
		"movl %k[r], -4(%%rdi,%%rcx)\n\t"                                     \
		"jmp 7f\n\t"                                                          \
		"16:\n\t"                                                             \
		"testq %%rcx, %%rcx\n\t"                                              \
		"jz 7f\n\t"                                                           \
		"8:\n\t"                                                              \
		"movb (%%rsi), %%dl\n\t"                                              \
		"movb %%dl, (%%rdi)\n\t"                                              \
		"incq %%rsi\n\t"                                                      \
		"incq %%rdi\n\t"                                                      \
		"decq %%rcx\n\t"                                                      \
		"jnz 8b\n\t"                                                          \
		"7:\n\t"                                                              \
		TB_INJECT_ASM(1)                                                      \
		/* H: two-version state: _before = true values (idempotent), then     \
		 * st_end = new head (invalidates _after), then _after */             \
		"movq " TB__STR(TB_CTL_TS_AFTER) "(%[rs]), %%rdx\n\t"                 \
		"movq %%rdx, " TB__STR(TB_CTL_TS_BEFORE) "(%[rs])\n\t"                \
		"movq " TB__STR(TB_CTL_CNT_AFTER) "(%[rs]), %%rcx\n\t"                \
		"movq %%rcx, " TB__STR(TB_CTL_CNT_BEFORE) "(%[rs])\n\t"               \
		"movq " TB__STR(TB_CTL_TID_AFTER) "(%[rs]), %%rdx\n\t"                \
		"movq %%rdx, " TB__STR(TB_CTL_TID_BEFORE) "(%[rs])\n\t"               \
		"movq %[cpu], " TB__STR(TB_CTL_ST_END) "(%[rs])\n\t"                  \
		"movq %%rax, " TB__STR(TB_CTL_TS_AFTER) "(%[rs])\n\t"                 \
		"incq %%rcx\n\t"                                                      \
		"movq %%rcx, " TB__STR(TB_CTL_CNT_AFTER) "(%[rs])\n\t"                \
		TB_INJECT_ASM(2)                                                      \
		/* I: commit.  Observable: the consumer's acquire load of head        \
		 * (tb_ring_ready / snapshot).  A plain store is a release on x86     \
		 * (TSO): the record and state stores above are visible first. */     \
		"movq %[cpu], " TB__STR(TB_CTL_HEAD) "(%[rs])\n\t"                    \
		TB_RSEQ_CS_END_INLINE                                                 \
		"xorl %k[cpu], %k[cpu]\n\t"                                           \
		"jmp 19f\n\t"                                                         \
		"17:\n\t"                                                             \
		"movl $1, %k[cpu]\n\t"                                                \
		"jmp 19f\n\t"                                                         \
		/* the abort handler (label 4), after a jump */                       \
		TB_RSEQ_ABORT_SIG                                                     \
		"movl $2, %k[cpu]\n\t"                                                \
		"19:\n\t"

/* [cpu] in and result out; [rs] and [r] in, then scratch (their values
 * after the cs are garbage: the callers do not use them again) */
#define TB_FAST_APPEND_OPERANDS                                                \
	: [rs] "+r"(rs), [cpu] "+r"(c), [r] "+r"(r)                            \
	: [a] "r"(a)                                                           \
	: "rax", "rdx", "rcx", "rsi", "rdi", "xmm0", "memory", "cc" TB_INJECT_CLOBBER

/*
 * Returns 0 when committed, 1 when the slow path must take over (nothing was
 * written: ring not initialised, state needs the _before values, writer
 * changed, timestamp too far for a compact header, or record does not fit),
 * and 2 when aborted (the caller re-reads the CPU and retries).
 */
static inline __attribute__((always_inline)) int tb_rseq_fast_append(struct tb_rseq_abi *rs, uint32_t cpu,
								      const struct tb_fast_ring *r,
								      const struct tb_fast_args *a)
{
	uint64_t c = cpu;
	__asm__ __volatile__(TB_FAST_APPEND_CS("4", "") TB_FAST_APPEND_OPERANDS);
	return (int)c;
}

/*
 * The same on a vtid channel (TB_FAST_VTID): the compact header, then
 * a->vtid (the writer's tid, the stream event context), then the payload.
 * The tid is written past head with the rest of the record, so the commit
 * (step I, the head store) publishes it like the payload: no ordering of its
 * own.  Same returns.
 */
static inline __attribute__((always_inline)) int tb_rseq_fast_append_vtid(struct tb_rseq_abi *rs, uint32_t cpu,
									   const struct tb_fast_ring *r,
									   const struct tb_fast_args *a)
{
	uint64_t c = cpu;
	__asm__ __volatile__(TB_FAST_APPEND_CS("8", "movl 32(%[a]), %%edx\n\t"
							 "movl %%edx, 4(%%rdi)\n\t")
			     TB_FAST_APPEND_OPERANDS);
	return (int)c;
}

/* ---------------------------------------------------------------------- */
/* cs 2: the generic commit: copy staged bytes, apply stores, commit head  */
/* ---------------------------------------------------------------------- */

struct tb_cs_op {
	uint64_t *addr;
	uint64_t val;
	uint64_t is_ts; /* 1: store the cs's timestamp instead of val */
};

/* The longest store list is an overwrite-mode switch that reuses a
 * sub-buffer: close 10 (timestamp_end, content_size, events_discarded, six
 * producer loss causes, cnt_end) + lost_overwritten + 3 descriptor fields +
 * 20 header qwords + 7 state fields = 41. */
#define TB_CS_MAX_OPS 48

struct tb_cs_args {
	uint64_t *head;            /* 0 */
	uint64_t expect;           /* 8: head must still hold this */
	uint64_t newhead;          /* 16 */
	const uint8_t *src;        /* 24: staged bytes (multiple of 8, padded) */
	uint8_t *dst;              /* 32 */
	uint64_t nq;               /* 40: qwords to copy */
	const struct tb_cs_op *ops;/* 48 */
	uint64_t nops;             /* 56 */
	uint64_t ts;               /* 64: the timestamp, or its floor when read_ts */
	uint64_t read_ts;          /* 72: 1: rdtsc inside the cs */
	const uint8_t *src2;       /* 80: payload, copied byte-exact after the staged bytes */
	uint8_t *dst2;             /* 88 */
	uint64_t n2;               /* 96: payload bytes */
};

/*
 * Returns 0 committed, 1 head changed since the caller prepared (re-prepare),
 * 2 aborted (re-prepare).  On 0 with read_ts, a->ts is NOT updated (the cs
 * cannot write outside its commit); callers that need the value read it from
 * the state they just committed.
 */
static inline int tb_rseq_commit(struct tb_rseq_abi *rs, uint32_t cpu, const struct tb_cs_args *a)
{
	__asm__ goto(
		TB_RSEQ_CS_BEGIN("rs")
		/* A: CPU and head unchanged since the caller prepared */
		"cmpl %[cpu], 4(%[rs])\n\t"
		"jnz 4f\n\t"
		"movq 0(%[a]), %%r8\n\t"
		"movq (%%r8), %%r9\n\t"
		"cmpq 8(%[a]), %%r9\n\t"
		"jne %l[changed]\n\t"
		/* B: timestamp inside the cs (clamped to the floor) or given */
		"movq 64(%[a]), %%r10\n\t"
		"cmpq $0, 72(%[a])\n\t"
		"je 5f\n\t"
		"rdtsc\n\t"
		"shlq $32, %%rdx\n\t"
		"orq %%rdx, %%rax\n\t"
		"cmpq %%r10, %%rax\n\t"
		"cmovbq %%r10, %%rax\n\t"
		"movq %%rax, %%r10\n\t"
		"5:\n\t"
		/* C: copy the staged records / packet header past head */
		"movq 24(%[a]), %%rsi\n\t"
		"movq 32(%[a]), %%rdi\n\t"
		"movq 40(%[a]), %%rcx\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 7f\n\t"
		"6:\n\t"
		"movq (%%rsi), %%rdx\n\t"
		"movq %%rdx, (%%rdi)\n\t"
		"addq $8, %%rsi\n\t"
		"addq $8, %%rdi\n\t"
		"decq %%rcx\n\t"
		"jnz 6b\n\t"
		"7:\n\t"
		/* C2: the payload, straight from the caller (exact length) */
		"movq 80(%[a]), %%rsi\n\t"
		"movq 88(%[a]), %%rdi\n\t"
		"movq 96(%[a]), %%rcx\n\t"
		"cmpq $8, %%rcx\n\t"
		"jb 13f\n\t"
		"12:\n\t"
		"movq (%%rsi), %%rdx\n\t"
		"movq %%rdx, (%%rdi)\n\t"
		"addq $8, %%rsi\n\t"
		"addq $8, %%rdi\n\t"
		"subq $8, %%rcx\n\t"
		"cmpq $8, %%rcx\n\t"
		"jae 12b\n\t"
		"13:\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 15f\n\t"
		"14:\n\t"
		"movb (%%rsi), %%dl\n\t"
		"movb %%dl, (%%rdi)\n\t"
		"incq %%rsi\n\t"
		"incq %%rdi\n\t"
		"decq %%rcx\n\t"
		"jnz 14b\n\t"
		"15:\n\t"
		TB_INJECT_ASM(3)
		/* D: the stores, in order (timestamps patched in) */
		"movq 48(%[a]), %%rsi\n\t"
		"movq 56(%[a]), %%rcx\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 9f\n\t"
		"8:\n\t"
		"movq (%%rsi), %%rdi\n\t"
		"movq 8(%%rsi), %%rdx\n\t"
		"cmpq $0, 16(%%rsi)\n\t"
		"cmovneq %%r10, %%rdx\n\t"
		"movq %%rdx, (%%rdi)\n\t"
		"addq $24, %%rsi\n\t"
		"decq %%rcx\n\t"
		"jnz 8b\n\t"
		"9:\n\t"
		TB_INJECT_ASM(4)
		/* E: commit.  Observable: consumer's acquire load of head. */
		"movq 16(%[a]), %%rdx\n\t"
		"movq %%rdx, (%%r8)\n\t"
		TB_RSEQ_CS_END("abort")
		:
		: [rs] "r"(rs), [cpu] "r"(cpu), [a] "r"(a)
		: "rax", "rdx", "rcx", "rsi", "rdi", "r8", "r9", "r10", "memory", "cc" TB_INJECT_CLOBBER
		: abort, changed);
	return 0;
abort:
	return 2;
changed:
	return 1;
}

/* ---------------------------------------------------------------------- */
/* cs 3: add to a per-CPU counter (the add is the commit)                  */
/* ---------------------------------------------------------------------- */

/* Returns 0 done, 2 aborted (retry; nothing was added). */
static inline int tb_rseq_add(struct tb_rseq_abi *rs, uint32_t cpu, uint64_t *ctr, uint64_t v)
{
	__asm__ goto(
		TB_RSEQ_CS_BEGIN("rs")
		"cmpl %[cpu], 4(%[rs])\n\t"
		"jnz 4f\n\t"
		/* the single non-atomic read-modify-write instruction is the
		 * commit: an interruption falls before or after it */
		"addq %[v], (%[ctr])\n\t"
		TB_RSEQ_CS_END("abort")
		:
		: [rs] "r"(rs), [cpu] "r"(cpu), [ctr] "r"(ctr), [v] "r"(v)
		: "rax", "memory", "cc"
		: abort);
	return 0;
abort:
	return 2;
}

#endif
