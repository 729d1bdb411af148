/* SPDX-License-Identifier: MIT */
/*
 * prof_unwind.c - the two unwinders of the sampler, both called from the
 * SIGPROF handler on the interrupted thread:
 *
 *  - frame pointers: the x86_64 frame record is [rbp] = caller's rbp,
 *    [rbp + 8] = return address.  Every load is checked first against the
 *    thread's stack (8-byte aligned, inside [rsp, top), each record strictly
 *    above the previous one), so a garbage rbp ends the walk (ABORTED)
 *    instead of faulting.  Nothing else is read, but for a PC in
 *    libtracebuf's own code (prof_fp_init): its functions all make a frame
 *    record with their first instructions and undo it just before their
 *    ret (CMakeLists.txt), so the instruction at the PC says whether the
 *    return address is at [rsp] or [rsp + 8] instead of [rbp + 8].
 *
 *  - libunwind (Debian's libunwind-dev, nongnu 1.6): DWARF CFI, so it
 *    walks through code without frame pointers.  Loaded with dlopen
 *    (RTLD_LOCAL) only when asked for: libunwind.so.8 also defines
 *    _Unwind_* and backtrace(), which must not interpose the program's.
 *    Signal safety: see docs/PROFILE.md ("libunwind").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "profile/prof_impl.h"
#include "profile/profile_events.h"

/* Reads a stack word the walk has proved to be inside the thread's stack.
 * Not instrumented: the frames of the interrupted code may hold sanitizer
 * redzones, which are memory we are allowed to read here. */
__attribute__((no_sanitize("address"))) static inline uint64_t stack_word(uintptr_t addr)
{
	return *(const volatile uint64_t *)addr; // NOLINT(performance-no-int-to-ptr): a register's value, checked
}

/* libtracebuf's executable segments (prof_fp_init; set before the handler
 * is installed, never changed after: the sampler depends on libtracebuf,
 * which therefore stays loaded). */
#define PROF_TB_SEGS 4
static struct {
	uintptr_t lo, hi;
} tb_text[PROF_TB_SEGS];
static unsigned tb_ntext;

static int tb_text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	if (!base || strncmp(base, "libtracebuf.so", 14) != 0)
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum && tb_ntext < PROF_TB_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			tb_text[tb_ntext].lo = info->dlpi_addr + ph->p_vaddr;
			tb_text[tb_ntext].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			tb_ntext++;
		}
	}
	return 1;
}

void prof_fp_init(void)
{
	tb_ntext = 0;
	dl_iterate_phdr(tb_text_cb, NULL);
}

/*
 * Where the return address of the function that runs at pc is, when pc is
 * in libtracebuf and its frame record is not made (yet, or any more): 0 at
 * its first instruction (endbr64 or push %rbp) and at its ret, where rbp is
 * still the caller's; 8 at the mov %rsp,%rbp after the push; -1 otherwise
 * (not libtracebuf's, or the frame record is in place: [rbp + 8]).  The
 * code bytes read are inside libtracebuf's mapped executable segment.
 */
static int tb_frameless_at(uintptr_t pc)
{
	for (unsigned i = 0; i < tb_ntext; i++) {
		if (pc < tb_text[i].lo || pc >= tb_text[i].hi)
			continue;
		const volatile uint8_t *c = (const volatile uint8_t *)pc; // NOLINT(performance-no-int-to-ptr)
		size_t left = tb_text[i].hi - pc;
		if (left >= 5 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa && c[4] == 0x55)
			return 0; /* endbr64; push %rbp */
		if (c[0] == 0x55 || c[0] == 0xc3)
			return 0; /* push %rbp; ret */
		if (left >= 3 && c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5)
			return 8; /* mov %rsp,%rbp: the push is done */
		return -1;
	}
	return -1;
}

__attribute__((no_sanitize("address"))) unsigned prof_walk_fp(const ucontext_t *uc, uintptr_t lo, uintptr_t hi,
							       uint64_t *stack, unsigned depth, uint32_t *flags)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	unsigned n = 0;
	stack[n++] = pc;
	if (!hi || sp < lo || sp >= hi) {
		/* a thread we did not start, or running on another stack
		 * (sigaltstack, a coroutine): nothing can be checked */
		*flags |= TB_PROF_F_NOSTACK;
		return n;
	}
	uintptr_t floor = sp; /* the next frame record must start at or above this */
	/* in libtracebuf outside its frame record: its caller's return address
	 * is on top of the stack, rbp is the caller's frame (checked as any) */
	int at = tb_frameless_at(pc);
	if (at >= 0) {
		uintptr_t a = sp + (uintptr_t)at;
		if ((a & 7) || a > hi - 8) {
			*flags |= TB_PROF_F_ABORTED;
			return n;
		}
		uint64_t ret = stack_word(a);
		if (!ret)
			return n;
		if (n >= depth) {
			*flags |= TB_PROF_F_TRUNCATED;
			return n;
		}
		stack[n++] = ret;
		floor = a + 8;
	}
	/* A frame pointer in the first page is not a stack address but the end
	 * of the chain: 0 where the ABI's outermost frame clears rbp (thread
	 * start), small integers where code without frame pointers uses rbp as
	 * a general register (glibc's __libc_start_call_main leaves argc in it
	 * when it calls main).  Anything else that fails a check is ABORTED. */
	while (fp >= 4096) {
		if ((fp & 7) || fp < floor || fp > hi - 16) {
			*flags |= TB_PROF_F_ABORTED;
			break;
		}
		uint64_t next = stack_word(fp), ret = stack_word(fp + 8);
		if (!ret)
			break; /* an outermost frame */
		if (n >= depth) {
			*flags |= TB_PROF_F_TRUNCATED;
			break;
		}
		stack[n++] = ret;
		floor = fp + 16; /* strictly increasing: a loop cannot repeat */
		fp = (uintptr_t)next;
	}
	return n;
}

#ifdef TB_PROFILE_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define PROF_STR_(x) #x
#define PROF_STR(x) PROF_STR_(x) /* the real symbol behind libunwind's macro names */

static __typeof__(unw_init_local2) *p_init_local2;
static __typeof__(unw_step) *p_step;
static __typeof__(unw_get_reg) *p_get_reg;
static __typeof__(unw_set_caching_policy) *p_set_caching_policy;
static __typeof__(unw_flush_cache) *p_flush_cache;
static unw_addr_space_t *p_local_as;

int prof_unwind_built(void)
{
	return 1;
}

int prof_unwind_load(char *err, size_t len)
{
	void *h = dlopen(TB_PROFILE_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, len, "cannot load %s: %s (install libunwind8)", TB_PROFILE_LIBUNWIND_SONAME,
			 dlerror());
		return -1;
	}
	p_init_local2 = (__typeof__(p_init_local2))dlsym(h, PROF_STR(unw_init_local2));
	p_step = (__typeof__(p_step))dlsym(h, PROF_STR(unw_step));
	p_get_reg = (__typeof__(p_get_reg))dlsym(h, PROF_STR(unw_get_reg));
	p_set_caching_policy = (__typeof__(p_set_caching_policy))dlsym(h, PROF_STR(unw_set_caching_policy));
	p_flush_cache = (__typeof__(p_flush_cache))dlsym(h, PROF_STR(unw_flush_cache));
	p_local_as = (unw_addr_space_t *)dlsym(h, PROF_STR(unw_local_addr_space));
	if (!p_init_local2 || !p_step || !p_get_reg || !p_set_caching_policy || !p_flush_cache || !p_local_as) {
		snprintf(err, len, "%s lacks %s (libunwind >= 1.3 is needed)", TB_PROFILE_LIBUNWIND_SONAME,
			 PROF_STR(unw_init_local2));
		p_init_local2 = NULL;
		return -1;
	}
	/* per-thread caches: no lock shared between threads in the handler */
	p_set_caching_policy(*p_local_as, UNW_CACHE_PER_THREAD);
	/* one unwind now, outside signal context: libunwind initialises
	 * itself lazily (a lock, getenv, its memory-validation pipe) */
	ucontext_t uc;
	if (getcontext(&uc) == 0) {
		unw_cursor_t c;
		if (p_init_local2(&c, (unw_context_t *)&uc, 0) == 0)
			for (int i = 0; i < TB_PROF_MAX_DEPTH && p_step(&c) > 0; i++)
				;
	}
	return 0;
}

unsigned prof_walk_libunwind(ucontext_t *uc, uint64_t *stack, unsigned depth, uint32_t *flags)
{
	unsigned n = 0;
	*flags |= TB_PROF_F_LIBUNWIND;
	stack[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	unw_cursor_t c;
	/* UNW_INIT_SIGNAL_FRAME: the PC is the interrupted instruction
	 * itself, not a return address (no "pc - 1" for the first lookup) */
	if (p_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		*flags |= TB_PROF_F_ABORTED;
		return n;
	}
	for (;;) {
		int r = p_step(&c);
		if (r == 0)
			break; /* the outermost frame */
		unw_word_t ip;
		if (r < 0 || p_get_reg(&c, UNW_REG_IP, &ip) < 0) {
			*flags |= TB_PROF_F_ABORTED;
			break;
		}
		if (!ip)
			break;
		if (n >= depth) {
			*flags |= TB_PROF_F_TRUNCATED;
			break;
		}
		stack[n++] = ip;
	}
	return n;
}

void prof_unwind_flush(void)
{
	if (p_flush_cache && p_local_as)
		p_flush_cache(*p_local_as, 0, 0);
}

#else /* !TB_PROFILE_HAVE_LIBUNWIND */

int prof_unwind_built(void)
{
	return 0;
}

int prof_unwind_load(char *err, size_t len)
{
	snprintf(err, len, "this libtracebuf-profile.so was built without libunwind (install libunwind-dev and "
			   "rebuild)");
	return -1;
}

unsigned prof_walk_libunwind(ucontext_t *uc, uint64_t *stack, unsigned depth, uint32_t *flags)
{
	(void)depth;
	stack[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	*flags |= TB_PROF_F_ABORTED;
	return 1;
}

void prof_unwind_flush(void)
{
}

#endif
