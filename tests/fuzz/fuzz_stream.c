/* SPDX-License-Identifier: MIT */
/* fuzz_stream.c - libFuzzer driver of tb_fuzz_stream() (tests/fuzz/fuzz_targets.h). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return tb_fuzz_stream(data, size);
}
