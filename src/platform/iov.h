/* SPDX-License-Identifier: MIT */
/*
 * iov.h - the rest of an iovec array after a short write or send of `done`
 * bytes (private): the recorder's file writes (consumer/stream_io.c) and
 * its relay sends (relay/relay_net.c) retry with it.
 */
#ifndef TB_PLATFORM_IOV_H
#define TB_PLATFORM_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Drops the first `done` bytes of (*iov, *n): whole entries, then the start of the next. */
static inline void tb_iov_advance(struct iovec **iov, int *n, size_t done)
{
	while (*n > 0 && done >= (*iov)->iov_len) {
		done -= (*iov)->iov_len;
		(*iov)++;
		(*n)--;
	}
	if (*n > 0) {
		(*iov)->iov_base = (uint8_t *)(*iov)->iov_base + done;
		(*iov)->iov_len -= done;
	}
}

#endif
