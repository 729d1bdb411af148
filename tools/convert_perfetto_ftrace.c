/* SPDX-License-Identifier: MIT */
/*
 * convert_perfetto_ftrace.c - for `convert --to perfetto` (convert_perfetto.c,
 * sequence 3): the kernel's events of a --kernel trace (docs/KERNEL.md:
 * LTTng's names, the streams kernel_cpu<N>) as Perfetto's own ftrace events
 * (protos/perfetto/trace/ftrace/ftrace_event_bundle.proto, ftrace_event.proto,
 * sched.proto, raw_syscalls.proto, generic.proto): per CPU an
 * FtraceEventBundle of up to BUNDLE_EVENTS FtraceEvents, absolute timestamps
 * on the clock snapshot's BOOTTIME; they are not also track events.
 *
 *   sched_*            sched_switch, sched_waking, ... with ftrace's field
 *                      names and prio: Perfetto draws CPU tracks and thread
 *                      states itself
 *   syscall_entry/exit raw_syscalls' sys_enter { id, args } / sys_exit
 *                      { id, ret }, FtraceEvent.pid the calling thread:
 *                      Perfetto makes each call a slice on the thread's
 *                      track, named from the number by x86_64's table (the
 *                      SystemInfo packet convert_perfetto.c writes says
 *                      the machine is x86_64)
 *   x86_exceptions_page_fault_user
 *                      Perfetto has no member for x86's exceptions events:
 *                      a GenericFtraceEvent "page_fault_user" (what traced
 *                      writes for an event it has no proto for) with the
 *                      fields address, ip, error_code; the UI lists it in
 *                      its CPU's ftrace track and the "Ftrace Events" tab
 *
 * The kmaps table says which FtraceEvent member each event is and each
 * field's number in its message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert_perfetto_ftrace.h"

/* field numbers: TracePacket.ftrace_events, FtraceEventBundle, FtraceEvent and its members */
enum {
	TP_FTRACE = 1, FB_CPU = 1, FB_EVENT = 2, FB_LOST = 3, FE_TS = 1, FE_PID = 2,
	FE_SWITCH = 4, FE_WAKEUP = 17, FE_WAKING = 20, FE_WAKEUP_NEW = 114, FE_EXEC = 237, FE_EXIT = 238,
	FE_FORK = 239, FE_MIGRATE = 491, FE_GENERIC = 327, FE_SYS_ENTER = 329, FE_SYS_EXIT = 330,
	/* GenericFtraceEvent { event_name, field }, its Field { name, int_value, uint_value } */
	GE_NAME = 1, GE_FIELD = 2, GF_NAME = 1, GF_INT = 4, GF_UINT = 5,
};

/* F_PRIO: LTTng's prio is the kernel's minus 100, ftrace's (and so Perfetto's) the kernel's.
 * F_U64S: a sequence of uint64, a repeated uint64 (unpacked, proto2's default).
 * F_GEN: a GenericFtraceEvent.Field of that name (num unused). */
enum { F_STR, F_INT, F_PRIO, F_U64S, F_GEN };
struct kmap_field {
	const char *name;
	uint8_t num, kind;
};
struct kmap {
	const char *event;
	uint32_t member;
	uint8_t group;     /* PFF_SCHED, PFF_SYSCALL, PFF_FAULT: what it is counted as */
	const char *generic; /* FE_GENERIC: its event_name */
	/* FtraceEvent.pid: the task running when it fired, where the event says it; NULL: not written
	 * (a waking's waker is not in the trace, and the CPU's last switch in the trace is not
	 * the running task when other processes' switches were left out) */
	const char *pid_field;
	struct kmap_field f[7];
};
#define K_WAKE(ev, m) { ev, m, PFF_SCHED, NULL, NULL, { { "comm", 1, F_STR }, { "tid", 2, F_INT }, { "prio", 3, F_PRIO }, \
				    { "target_cpu", 5, F_INT } } }
static const struct kmap kmaps[] = {
	{ "sched_switch", FE_SWITCH, PFF_SCHED, NULL, "prev_tid",
	  { { "prev_comm", 1, F_STR }, { "prev_tid", 2, F_INT }, { "prev_prio", 3, F_PRIO }, { "prev_state", 4, F_INT },
	    { "next_comm", 5, F_STR }, { "next_tid", 6, F_INT }, { "next_prio", 7, F_PRIO } } },
	K_WAKE("sched_waking", FE_WAKING),
	K_WAKE("sched_wakeup", FE_WAKEUP),
	K_WAKE("sched_wakeup_new", FE_WAKEUP_NEW),
	{ "sched_migrate_task", FE_MIGRATE, PFF_SCHED, NULL, NULL,
	  { { "comm", 1, F_STR }, { "tid", 2, F_INT }, { "prio", 3, F_PRIO }, { "orig_cpu", 4, F_INT }, { "dest_cpu", 5, F_INT } } },
	{ "sched_process_fork", FE_FORK, PFF_SCHED, NULL, "parent_tid",
	  { { "parent_comm", 1, F_STR }, { "parent_tid", 2, F_INT }, { "child_comm", 3, F_STR }, { "child_tid", 4, F_INT } } },
	{ "sched_process_exec", FE_EXEC, PFF_SCHED, NULL, "tid", { { "filename", 1, F_STR }, { "tid", 2, F_INT }, { "old_tid", 3, F_INT } } },
	{ "sched_process_exit", FE_EXIT, PFF_SCHED, NULL, "tid", { { "comm", 1, F_STR }, { "tid", 2, F_INT }, { "prio", 4, F_PRIO } } },
	/* the calling thread is the task running: FtraceEvent.pid; name is not written (Perfetto
	 * names the call from the number) */
	{ "syscall_entry", FE_SYS_ENTER, PFF_SYSCALL, NULL, "tid", { { "id", 1, F_INT }, { "args", 2, F_U64S } } },
	{ "syscall_exit", FE_SYS_EXIT, PFF_SYSCALL, NULL, "tid", { { "id", 1, F_INT }, { "ret", 2, F_INT } } },
	{ "x86_exceptions_page_fault_user", FE_GENERIC, PFF_FAULT, "page_fault_user", "tid",
	  { { "address", 0, F_GEN }, { "ip", 0, F_GEN }, { "error_code", 0, F_GEN } } },
};
#define NKMAPS (sizeof kmaps / sizeof kmaps[0])
#define BUNDLE_EVENTS 1024 /* a CPU's ftrace events per FtraceEventBundle */

int pff_init(struct pff *ft, uint32_t nclass_ids)
{
	memset(ft, 0, sizeof *ft);
	if (!(ft->map_of = malloc(nclass_ids ? nclass_ids : 1)))
		return -ENOMEM;
	memset(ft->map_of, -2, nclass_ids ? nclass_ids : 1);
	return 0;
}

void pff_free(struct pff *ft)
{
	free(ft->map_of);
	ft->map_of = NULL;
}

/* index in kmaps of the event's class: a kernel stream's (kernel_cpu<N>) event of one of its names */
int pff_lookup(struct pff *ft, const struct tb_rd_event *e, uint32_t id)
{
	if (ft->map_of[id] != -2)
		return ft->map_of[id];
	ft->map_of[id] = -1;
	const char *ch = tb_rd_channel(e), *name = tb_rd_name(e);
	if (!ch || strncmp(ch, "kernel_cpu", 10) || !name)
		return -1;
	for (size_t k = 0; k < NKMAPS; k++)
		if (!strcmp(name, kmaps[k].event)) {
			ft->map_of[id] = (int8_t)k;
			if (kmaps[k].group == PFF_SYSCALL && !ft->syscalls_seen)
				ft->syscalls_seen = ft->need_system_info = 1;
		}
	return ft->map_of[id];
}

void pff_bundle_write(struct pb *p, struct pff_bundle *b)
{
	pb_begin(p, TP_FTRACE);
	pb_varint(p, FB_CPU, b->cpu);
	if (b->lost)
		pb_varint(p, FB_LOST, 1);
	/* fb.b is NULL for a bundle that only says a loss: memcpy's arguments must not be */
	if (b->fb.n && !pb_reserve(p, b->fb.n)) {
		memcpy(p->b + p->n, b->fb.b, b->fb.n);
		p->n += b->fb.n;
	}
	pb_end(p);
	b->fb.n = 0;
	b->n = 0;
	b->lost = 0;
}

static int64_t kfield(const struct tb_rd_event *e, const char *name)
{
	int i = tb_rd_field_index(e, name);
	return i < 0 ? INT64_MIN : tb_rd_i64(e, (unsigned)i);
}

/* one FtraceEvent into its CPU's bundle: absolute BOOTTIME ns (the clock snapshot's: the slices' clock) */
int pff_event(struct pff *ft, struct pff_bundle *bu, const struct tb_rd_event *e, int k)
{
	const struct kmap *m = &kmaps[k];
	struct pb *b = &bu->fb;
	int64_t pid = m->pid_field ? kfield(e, m->pid_field) : -1;
	ft->events[m->group]++;
	pb_begin(b, FB_EVENT);
	pb_varint(b, FE_TS, (uint64_t)tb_rd_ns(e));
	if (pid >= 0 && pid <= UINT32_MAX)
		pb_varint(b, FE_PID, (uint64_t)pid);
	pb_begin(b, m->member);
	if (m->generic)
		pb_str(b, GE_NAME, m->generic);
	for (size_t i = 0; i < sizeof m->f / sizeof m->f[0] && m->f[i].name; i++) {
		int j = tb_rd_field_index(e, m->f[i].name);
		if (j < 0)
			continue; /* a field the trace does not have: left out, not invented */
		if (m->f[i].kind == F_STR) {
			size_t n;
			const char *str = tb_rd_str(e, (unsigned)j, &n);
			pb_strn(b, m->f[i].num, str ? str : "", str ? n : 0);
		} else if (m->f[i].kind == F_U64S) {
			uint32_t n = 0;
			if (tb_rd_field_type(e, (unsigned)j) == TB_RD_U64SEQ)
				tb_rd_seq(e, (unsigned)j, &n);
			for (uint32_t x = 0; x < n; x++)
				pb_varint(b, m->f[i].num, tb_rd_seq_u64(e, (unsigned)j, x));
		} else if (m->f[i].kind == F_GEN) {
			int ty = tb_rd_field_type(e, (unsigned)j);
			pb_begin(b, GE_FIELD);
			pb_str(b, GF_NAME, m->f[i].name);
			if (ty == TB_RD_U8 || ty == TB_RD_U16 || ty == TB_RD_U32 || ty == TB_RD_U64)
				pb_varint(b, GF_UINT, tb_rd_u64(e, (unsigned)j));
			else
				pb_int64(b, GF_INT, tb_rd_i64(e, (unsigned)j));
			pb_end(b);
		} else {
			pb_int64(b, m->f[i].num, tb_rd_i64(e, (unsigned)j) + (m->f[i].kind == F_PRIO ? 100 : 0));
		}
	}
	if (m->member == FE_WAKING || m->member == FE_WAKEUP || m->member == FE_WAKEUP_NEW)
		pb_varint(b, 4, 1); /* success: always 1 since Linux 4.x; ftrace's record has no field for it */
	pb_end(b);
	pb_end(b);
	if (b->oom)
		return -ENOMEM;
	return ++bu->n >= BUNDLE_EVENTS;
}
