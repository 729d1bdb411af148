/* SPDX-License-Identifier: MIT */
/*
 * prof_nofp.c - part of prof_spin, compiled with -fomit-frame-pointer: two
 * functions between the thread's start and the hot leaf that keep no frame
 * record, so a frame-pointer walk skips them and libunwind (DWARF CFI) does
 * not.  Not tail calls: each does work after its call.
 */
#include <stdint.h>

uint64_t leaf_burn(uint64_t until_ns, uint64_t x);
uint64_t nofp_a(uint64_t until_ns, uint64_t x);
uint64_t nofp_b(uint64_t until_ns, uint64_t x);

__attribute__((noinline)) uint64_t nofp_b(uint64_t until_ns, uint64_t x)
{
	return leaf_burn(until_ns, x ^ 0x55) * 3 + 1;
}

__attribute__((noinline)) uint64_t nofp_a(uint64_t until_ns, uint64_t x)
{
	return nofp_b(until_ns, x + 7) * 5 + 2;
}
