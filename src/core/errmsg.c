/* SPDX-License-Identifier: MIT */
/* errmsg.c - the thread-local "what went wrong and what to do" message. */
#include <stdarg.h>
#include <stdio.h>

#include <tracebuf/session.h>

#include "core/view.h"

static __thread char tb_msg[512] __attribute__((tls_model("initial-exec")));

void tb_set_errmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tb_msg, sizeof tb_msg, fmt, ap);
	va_end(ap);
}

const char *tb_errmsg(void)
{
	return tb_msg[0] ? tb_msg : "no error";
}
