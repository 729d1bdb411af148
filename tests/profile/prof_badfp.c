/* SPDX-License-Identifier: MIT */
/*
 * prof_badfp.c - a test program for `tracebuf profile`: burns CPU in an asm
 * loop with garbage in RBP, so that a frame-pointer walk started there must
 * stop at its first check (ABORTED) instead of faulting.  Five kinds of
 * garbage, one after the other: a non-canonical address, a misaligned
 * one, a stack address below RSP, a frame record on the stack that points
 * to itself (a loop), a heap address (outside the stack).  Prints the
 * deterministic result of the computation.  Does not link libtracebuf.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 60000000ull

uint64_t burn_badfp(uint64_t rbp, uint64_t x, uint64_t n);
uint64_t burn_below_rsp(uint64_t x, uint64_t n);

/* x = x * M + C, n times, with RBP = rbp meanwhile (saved in a register
 * operand and restored: RBP is the frame pointer, it cannot be clobbered) */
__attribute__((noinline)) uint64_t burn_badfp(uint64_t rbp, uint64_t x, uint64_t n)
{
	uint64_t save, m = 6364136223846793005ull, c = 1442695040888963407ull;
	__asm__ volatile("mov %%rbp, %[save]\n\t"
			 "mov %[rbp], %%rbp\n\t"
			 "1:\n\t"
			 "imul %[m], %[x]\n\t"
			 "add %[c], %[x]\n\t"
			 "dec %[n]\n\t"
			 "jnz 1b\n\t"
			 "mov %[save], %%rbp\n\t"
			 : [x] "+r"(x), [n] "+r"(n), [save] "=&r"(save)
			 : [rbp] "r"(rbp), [m] "r"(m), [c] "r"(c)
			 : "cc", "memory");
	return x;
}

/* the same with RBP = RSP - 256: on the stack, but below the stack pointer */
__attribute__((noinline)) uint64_t burn_below_rsp(uint64_t x, uint64_t n)
{
	uint64_t save, m = 6364136223846793005ull, c = 1442695040888963407ull;
	__asm__ volatile("mov %%rbp, %[save]\n\t"
			 "lea -256(%%rsp), %%rbp\n\t"
			 "1:\n\t"
			 "imul %[m], %[x]\n\t"
			 "add %[c], %[x]\n\t"
			 "dec %[n]\n\t"
			 "jnz 1b\n\t"
			 "mov %[save], %%rbp\n\t"
			 : [x] "+r"(x), [n] "+r"(n), [save] "=&r"(save)
			 : [m] "r"(m), [c] "r"(c)
			 : "cc", "memory");
	return x;
}

int main(void)
{
	/* a frame record that points to itself, in this (live) frame */
	volatile uint64_t loop[2];
	loop[0] = (uint64_t)(uintptr_t)&loop[0];
	loop[1] = (uint64_t)(uintptr_t)&main;
	uint64_t *heap = malloc(64);
	if (!heap)
		return 1;
	heap[0] = heap[1] = 0;
	uint64_t x = 1;
	x = burn_badfp(0xdead0beefcafe008ull, x, ITERS);                /* non-canonical */
	x = burn_badfp((uint64_t)(uintptr_t)&loop[0] + 3, x, ITERS);    /* misaligned */
	x = burn_below_rsp(x, ITERS);                                    /* below RSP */
	x = burn_badfp((uint64_t)(uintptr_t)&loop[0], x, ITERS);        /* a loop */
	x = burn_badfp((uint64_t)(uintptr_t)heap, x, ITERS);            /* not the stack */
	free(heap);
	printf("badfp: %016llx\n", (unsigned long long)x);
	return 0;
}
