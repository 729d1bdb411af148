/* SPDX-License-Identifier: MIT */
/*
 * convert_perfetto_ftrace.h - private to `convert --to perfetto`
 * (convert_perfetto.c): the kernel's events of a --kernel trace as
 * Perfetto's own ftrace events, per CPU an FtraceEventBundle
 * (convert_perfetto_ftrace.c says which events and how).
 *
 *   pff_init(&ft, nclass_ids);
 *   k = pff_lookup(&ft, e, class_id);       // >= 0: an ftrace event
 *   full = pff_event(&ft, &bundle, e, k);   // appended; 1: flush it now
 *   pff_bundle_write(&packet, &bundle);     // TracePacket.ftrace_events, reset
 *   pff_free(&ft);
 */
#ifndef TB_CONVERT_PERFETTO_FTRACE_H
#define TB_CONVERT_PERFETTO_FTRACE_H

#include <stdint.h>

#include <tracebuf/reader.h>

#include "cli_pb.h"

/* a CPU's pending FtraceEventBundle */
struct pff_bundle {
	uint32_t cpu;
	struct pb fb; /* the FtraceEvent fields (FtraceEventBundle.event) */
	uint32_t n;   /* events in it */
	int lost;     /* the kernel lost events of this CPU before the bundle's */
};

enum { PFF_SCHED, PFF_SYSCALL, PFF_FAULT, PFF_NGROUPS };

struct pff {
	int8_t *map_of;  /* per class id: the event's mapping, -1 none, -2 not looked at yet */
	uint64_t events[PFF_NGROUPS]; /* ftrace events written: sched, sys_enter/exit, page faults */
	int syscalls_seen;
	/* set by pff_lookup at the first system call: the caller writes a SystemInfo saying
	 * x86_64 (Perfetto names the calls from their numbers by it) and clears it */
	int need_system_info;
};

int pff_init(struct pff *ft, uint32_t nclass_ids); /* -ENOMEM */
void pff_free(struct pff *ft);
/* the mapping of event e (of class id): >= 0, or -1 for an event that is not an ftrace event */
int pff_lookup(struct pff *ft, const struct tb_rd_event *e, uint32_t id);
/* e (mapping k) into bundle b: 0, 1 when the bundle is full (flush it), -ENOMEM */
int pff_event(struct pff *ft, struct pff_bundle *b, const struct tb_rd_event *e, int k);
/* the bundle as TracePacket.ftrace_events into the open packet p; empties the bundle */
void pff_bundle_write(struct pb *p, struct pff_bundle *b);

#endif
