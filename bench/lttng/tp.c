/* SPDX-License-Identifier: MIT */
/* tp.c - instantiates the tracepoint provider of tp.h (linked statically). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp.h"
