/* SPDX-License-Identifier: MIT */
/*
 * report_html_impl.h - the state of `report --html` (tools/report_html.c
 * writes the page, tools/report_html_kernel.c the parts of a --kernel
 * trace); private to those two files.
 */
#ifndef TB_TOOLS_REPORT_HTML_IMPL_H
#define TB_TOOLS_REPORT_HTML_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tracebuf/reader.h>

#include "cli_convert.h"
#include "cli_map.h"
#include "cli_profile.h"
#include "report_sched.h"

#define TB_HTML_THREADS 32       /* thread lanes; the rest share one */
#define TB_HTML_CELLS (1u << 20) /* lanes x buckets at most */
#define TB_HTML_MAX_BUCKETS 65536u
#define TB_HTML_SPANS 50000u     /* the longest spans kept */
#define TB_HTML_EV_WINDOWS 65536u /* the single events' budget is shared per time window */
#define TB_HTML_LOSSES 10000u
#define TB_HTML_STATES 500000u   /* thread-state intervals (the first ones); CPU runs too */
#define TB_HTML_SWITCH_IDS 4u    /* class ids named sched_switch (one per kernel recorder) */

struct hthr {
	uint32_t pid, tid;
	uint64_t n;
	int lane;
	struct cv_stack st;
	int64_t *ts; /* start of each open span (parallel to st) */
	uint32_t tcap;
};

/* a lane's single events: LEB128 varints, (zigzag time delta, class) each */
struct evlane {
	uint8_t *b;
	size_t len, cap;
	int64_t last; /* ns from the start of the previous event */
	uint64_t n;
};

struct span {
	int64_t start, dur;
	uint32_t lane, depth, name;
};

struct st_iv {
	int64_t start, dur;
	uint32_t lane;
	uint8_t state;
	uint8_t cause;           /* a blocked interval's: 1 + index in html.causes, 0 not known */
};

#define TB_HTML_CAUSES 255u      /* distinct causes of blocked time named (system calls, page fault) */

/* a thread on a CPU from one sched_switch to the next */
struct oc_run {
	int64_t start, dur;
	uint32_t lane, tid;
};

struct html {
	struct tb_reader *r;
	int64_t t0, t1, span_ns, bucket_ns;
	uint32_t nb;          /* buckets */
	size_t nlanes, ncpu_lanes, other_lane; /* other_lane: SIZE_MAX none */
	uint32_t *counts;     /* nlanes x nb */
	uint32_t *cpu_lane;   /* stream -> lane */
	struct cli_table thr; /* (pid, tid) -> struct hthr */
	struct cv_roles roles;
	struct span *spans;   /* a min-heap by duration */
	size_t nspans;
	uint64_t spans_total;
	/* single events: at most ev_max, the first per_win of each window */
	uint64_t ev_max, ev_total, ev_kept, per_win; /* per_win UINT64_MAX: all */
	int64_t win_ns;
	uint64_t *wcount;     /* events per window (count pass) */
	uint64_t *wkept;      /* kept so far per window (main pass) */
	struct evlane *evl;   /* per lane */
	/* losses */
	FILE *lost;           /* the JSON array's items */
	char *lost_buf;
	size_t lost_len, nlost;
	/* flame */
	struct prof *prof;
	struct prof_sample *ps;
	struct cli_map child; /* (parent node, label id) -> node + 1 */
	struct cli_smap labels; /* "label\1module" -> id + 1 */
	uint32_t *parent, *name;
	uint64_t *value, *self;
	size_t nnodes, ncap;
	/* thread states (a --kernel trace): intervals per thread lane, consecutive equal ones merged */
	struct rs_state *rs;
	struct cli_map tid_lane; /* tid -> lane + 1, threads with a lane of their own */
	size_t *st_last;         /* per lane: its last interval, SIZE_MAX none */
	struct st_iv *st;
	size_t nst, capst;
	const char *causes[TB_HTML_CAUSES]; /* report_sched.c's names (they live as long as rs) */
	unsigned ncauses;
	uint64_t st_total, b1;
	/* CPU occupancy (a --kernel trace with sched_switch): per CPU lane the
	 * thread switched in and since when (oc_since < 0: not known yet) */
	uint32_t sw_id[TB_HTML_SWITCH_IDS];
	unsigned nsw;
	int64_t *oc_since;
	uint32_t *oc_tid;
	struct oc_run *oc;
	size_t noc, capoc;
	uint64_t oc_total;
	struct cli_map oc_name;  /* tid -> index + 1 into oc_comm */
	char (*oc_comm)[16];
	size_t ncomm, capcomm;
};

/* report_html_kernel.c: the --kernel parts */
/* 1 when class id is one of the sched_switch classes */
int rh_oc_is_switch(const struct html *h, uint32_t id);
/* a sched_switch at rel ns from the start, on its stream's CPU lane */
int rh_oc_switch(struct html *h, const struct tb_rd_event *e, int64_t rel);
/* tid ran on lane's CPU over [a, b) (ns from the start) */
int rh_oc_run_add(struct html *h, uint32_t lane, uint32_t tid, int64_t a, int64_t b);
/* the thread-state machine (report_sched.c) fed to the bands, and the CPU rows' state, once
 * the lanes are known: 0 or -ENOMEM */
int rh_kernel_setup(struct html *h);
void rh_put_states(struct html *h, FILE *f);
void rh_put_cpus(struct html *h, FILE *f);

#endif
