/* SPDX-License-Identifier: MIT */
/*
 * tp.h - the LTTng-UST tracepoint provider of the benchmark: the same
 * 16-byte event (two u64 fields) as tracebuf's bench:ev16; and the
 * requests of tracebuf-workload --requests (request_begin { seq },
 * request_end { seq, status, route }) for the flight-lttng group.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tbbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"

#if !defined(TB_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TB_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(tbbench, ev16,
	LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint64_t, b, b)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(tbbench, request_begin,
	LTTNG_UST_TP_ARGS(uint64_t, seq),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(tbbench, request_end,
	LTTNG_UST_TP_ARGS(uint64_t, seq, uint32_t, status, const char *, route),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, seq, seq)
		lttng_ust_field_integer(uint32_t, status, status)
		lttng_ust_field_string(route, route)
	)
)

#endif

#include <lttng/tracepoint-event.h>
