/* SPDX-License-Identifier: MIT */
/*
 * kwarn.c - the kernel recorder's warnings for the caller to print (the
 * library never prints): a small ring of messages under warn_lock, filled by
 * every file of src/kernel/ and emptied by tb_kernel_next_warning().  A file
 * of its own, below the others, so that no two files of the folder call into
 * each other (tests/lint/calls.sh).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "kernel/kernel_impl.h"

void tb_kernel_warn(struct tb_kernel *k, const char *fmt, ...)
{
	pthread_mutex_lock(&k->warn_lock);
	if (k->warn_tail - k->warn_head < TB_KWARN) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(k->warn[k->warn_tail % TB_KWARN], sizeof k->warn[0], fmt, ap);
		va_end(ap);
		k->warn_tail++;
	}
	pthread_mutex_unlock(&k->warn_lock);
}

int tb_kernel_next_warning(struct tb_kernel *k, char *buf, size_t len)
{
	int got = 0;
	pthread_mutex_lock(&k->warn_lock);
	if (k->warn_head != k->warn_tail) {
		snprintf(buf, len, "%s", k->warn[k->warn_head % TB_KWARN]);
		k->warn_head++;
		got = 1;
	}
	pthread_mutex_unlock(&k->warn_lock);
	return got;
}
