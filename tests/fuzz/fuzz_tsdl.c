/* SPDX-License-Identifier: MIT */
/* fuzz_tsdl.c - libFuzzer driver of tb_fuzz_tsdl() (tests/fuzz/fuzz_targets.h). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return tb_fuzz_tsdl(data, size);
}
