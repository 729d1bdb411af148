/* SPDX-License-Identifier: MIT */
/*
 * tracepoints.c - the kernel tracepoints as tracebuf writes them (sched,
 * raw_syscalls, exceptions): the tracefs `format` parser, and for each
 * tracepoint the event class of LTTng's kernel tracer (lttng-modules,
 * include/instrumentation/events/sched.h...: its field names, order and
 * meaning, so that analyses written for LTTng kernel traces read ours) and
 * the decoder from the kernel's raw record to that payload.  Where the raw record's layout comes from: the
 * format file of the running kernel, never a compiled-in offset; resolved
 * once per tracepoint into a plan (tb_ktp_plan: each field's offset, size,
 * signedness), which decodes every record without looking a name up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"

/* One field of a class: its LTTng name and type, and where the value comes from. */
struct kout {
	const char *name;
	char type;        /* 's' string, 'i' int32, 'l' int64, 'u' uint64, 'q' uint64 sequence (an
			   * array field of the format), 'n' the name of the system call numbered
			   * by an integer field (a string: "" where this build knows none) */
	const char *src;  /* the format file's field; "$pid", "$tid": the sample's pid (tgid), tid */
};

struct kdef {
	const char *name; /* the class's name (LTTng's) */
	const char *sys;  /* tracefs subsystem */
	const char *tp;   /* the tracepoint's name there */
	struct kout out[8];
	const char *tid_a, *tid_b; /* the format fields naming the tasks concerned */
};

/* LTTng's prio is the kernel's prio - MAX_RT_PRIO (100), as sched.h writes it. */
#define LTTNG_PRIO_BIAS 100

static const struct kdef defs[TB_KTP_N] = {
	[TB_KTP_SWITCH] = { "sched_switch", "sched", "sched_switch",
			    { { "prev_comm", 's', "prev_comm" }, { "prev_tid", 'i', "prev_pid" },
			      { "prev_prio", 'i', "prev_prio" }, { "prev_state", 'l', "prev_state" },
			      { "next_comm", 's', "next_comm" }, { "next_tid", 'i', "next_pid" },
			      { "next_prio", 'i', "next_prio" } },
			    "prev_pid", "next_pid" },
	[TB_KTP_WAKING] = { "sched_waking", "sched", "sched_waking",
			    { { "comm", 's', "comm" }, { "tid", 'i', "pid" }, { "prio", 'i', "prio" },
			      { "target_cpu", 'i', "target_cpu" } },
			    "pid", NULL },
	[TB_KTP_WAKEUP] = { "sched_wakeup", "sched", "sched_wakeup",
			    { { "comm", 's', "comm" }, { "tid", 'i', "pid" }, { "prio", 'i', "prio" },
			      { "target_cpu", 'i', "target_cpu" } },
			    "pid", NULL },
	[TB_KTP_WAKEUP_NEW] = { "sched_wakeup_new", "sched", "sched_wakeup_new",
				{ { "comm", 's', "comm" }, { "tid", 'i', "pid" }, { "prio", 'i', "prio" },
				  { "target_cpu", 'i', "target_cpu" } },
				"pid", NULL },
	/* LTTng also writes vtids, parent_ns_inum, child_pid (tgid) and
	 * child_ns_inum, which the tracepoint's record does not carry */
	[TB_KTP_FORK] = { "sched_process_fork", "sched", "sched_process_fork",
			  { { "parent_comm", 's', "parent_comm" }, { "parent_tid", 'i', "parent_pid" },
			    { "parent_pid", 'i', "$pid" }, { "child_comm", 's', "child_comm" },
			    { "child_tid", 'i', "child_pid" } },
			  "parent_pid", "child_pid" },
	[TB_KTP_EXEC] = { "sched_process_exec", "sched", "sched_process_exec",
			  { { "filename", 's', "filename" }, { "tid", 'i', "pid" }, { "old_tid", 'i', "old_pid" } },
			  "pid", NULL },
	[TB_KTP_EXIT] = { "sched_process_exit", "sched", "sched_process_exit",
			  { { "comm", 's', "comm" }, { "tid", 'i', "pid" }, { "prio", 'i', "prio" } },
			  "pid", NULL },
	[TB_KTP_MIGRATE] = { "sched_migrate_task", "sched", "sched_migrate_task",
			     { { "comm", 's', "comm" }, { "tid", 'i', "pid" }, { "prio", 'i', "prio" },
			       { "orig_cpu", 'i', "orig_cpu" }, { "dest_cpu", 'i', "dest_cpu" } },
			     "pid", NULL },
	/* System calls: LTTng writes one class per call (syscall_entry_read with
	 * its arguments by name...), from tables of each call's arguments in its
	 * modules; raw_syscalls gives the number and six raw words.  tracebuf
	 * writes the raw form under one class each way, with the call's name
	 * (from the number: x86_64's table, src/kernel/syscall_names_x86_64.h)
	 * and LTTng's syscall_entry_unknown field names (id, args).  These events
	 * name no task: the task they happened to is the current one, which
	 * LTTng gives as context fields (lttng add-context -k -t tid -t pid);
	 * tracebuf's kernel streams have no event context, so its tid and pid
	 * (tgid) end the payload, under those names. */
	[TB_KTP_SYS_ENTER] = { "syscall_entry", "raw_syscalls", "sys_enter",
			       { { "id", 'l', "id" }, { "name", 'n', "id" }, { "args", 'q', "args" },
				 { "tid", 'i', "$tid" }, { "pid", 'i', "$pid" } },
			       NULL, NULL },
	[TB_KTP_SYS_EXIT] = { "syscall_exit", "raw_syscalls", "sys_exit",
			      { { "id", 'l', "id" }, { "name", 'n', "id" }, { "ret", 'l', "ret" }, { "tid", 'i', "$tid" },
				{ "pid", 'i', "$pid" } },
			      NULL, NULL },
	/* LTTng's x86_exceptions_page_fault_user (lttng-modules,
	 * instrumentation/events/arch/x86/exceptions.h): the same fields, then
	 * the current task's (as for system calls) */
	[TB_KTP_PF_USER] = { "x86_exceptions_page_fault_user", "exceptions", "page_fault_user",
			     { { "address", 'u', "address" }, { "ip", 'u', "ip" }, { "error_code", 'u', "error_code" },
			       { "tid", 'i', "$tid" }, { "pid", 'i', "$pid" } },
			     NULL, NULL },
};

#if defined(__x86_64__)
#include "kernel/syscall_names_x86_64.h"
#define SYSCALL_NAMES tb_syscall_names_x86_64
#endif

/* The name of system call nr on this architecture, "" when not known. */
const char *tb_syscall_name(int64_t nr)
{
#ifdef SYSCALL_NAMES
	if (nr >= 0 && (uint64_t)nr < sizeof SYSCALL_NAMES / sizeof SYSCALL_NAMES[0] && SYSCALL_NAMES[nr])
		return SYSCALL_NAMES[nr];
#else
	(void)nr;
#endif
	return "";
}

#define KSTR_MAX 255u /* a string field's bound (exec's filename; comms are 15) */
#define KSEQ_MAX 6u   /* a sequence's bound (the six argument words of a system call) */

const char *tb_ktp_name(unsigned tp)
{
	return tp < TB_KTP_N ? defs[tp].name : NULL;
}

const char *tb_ktp_sys(unsigned tp)
{
	return tp < TB_KTP_N ? defs[tp].sys : NULL;
}

const char *tb_ktp_tracepoint(unsigned tp)
{
	return tp < TB_KTP_N ? defs[tp].tp : NULL;
}

static int same(const char *a, const char *name, size_t len)
{
	return strlen(a) == len && !memcmp(a, name, len);
}

int tb_ktp_lookup(const char *name, size_t len)
{
	const char *colon = memchr(name, ':', len);
	for (unsigned i = 0; i < TB_KTP_N; i++) {
		if (colon) { /* "subsystem:tracepoint", as perf and tracefs name it */
			size_t sl = (size_t)(colon - name);
			if (same(defs[i].sys, name, sl) && same(defs[i].tp, colon + 1, len - sl - 1))
				return (int)i;
		} else if (same(defs[i].name, name, len) || same(defs[i].tp, name, len)) {
			return (int)i;
		}
	}
	return -1;
}

static unsigned nout(unsigned tp)
{
	unsigned n = 0;
	while (n < 8 && defs[tp].out[n].name)
		n++;
	return n;
}

void tb_ktp_class(unsigned tp, uint32_t id, struct tb_event_desc *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", defs[tp].name);
	out->id = id;
	out->state = 1;
	out->nfields = nout(tp);
	for (unsigned i = 0; i < out->nfields; i++) {
		const struct kout *o = &defs[tp].out[i];
		snprintf(out->fields[i].name, sizeof out->fields[i].name, "%s", o->name);
		out->fields[i].type = o->type == 's' || o->type == 'n' ? TB_FT_STRING
				      : o->type == 'i'		   ? TB_FT_I32
				      : o->type == 'u'		   ? TB_FT_U64
				      : o->type == 'q'		   ? TB_FT_U64SEQ
								   : TB_FT_I64;
		out->fields[i].max_len = o->type == 's' || o->type == 'n' ? KSTR_MAX : o->type == 'q' ? KSEQ_MAX : 0;
	}
}

/* ---- the format file ---- */

/* "field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;" */
static int parse_field(const char *line, const char *end, struct tb_tp_field *f)
{
	const char *semi = memchr(line, ';', (size_t)(end - line));
	if (!semi)
		return -1;
	/* the name: the last identifier before ';' (an array's [N] after it) */
	const char *p = semi;
	if (p > line && p[-1] == ']') {
		while (p > line && *p != '[')
			p--;
		if (*p != '[')
			return -1;
	}
	const char *ne = p;
	while (p > line && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
			    (p[-1] >= '0' && p[-1] <= '9')))
		p--;
	if (ne == p || (size_t)(ne - p) >= sizeof f->name)
		return -1;
	memcpy(f->name, p, (size_t)(ne - p));
	f->name[ne - p] = 0;
	f->data_loc = strstr(line, "__data_loc") && strstr(line, "__data_loc") < p;
	unsigned long off, size, sgn;
	const char *o = strstr(semi, "offset:"), *s = strstr(semi, "size:"), *g = strstr(semi, "signed:");
	if (!o || !s || !g || o > end || s > end || g > end)
		return -1;
	char *e;
	off = strtoul(o + 7, &e, 10);
	if (e == o + 7 || off > 0xffff)
		return -1;
	size = strtoul(s + 5, &e, 10);
	if (e == s + 5 || size > 0xffff || size == 0)
		return -1;
	sgn = strtoul(g + 7, &e, 10);
	if (e == g + 7 || sgn > 1)
		return -1;
	if (f->data_loc && size != 4)
		return -1;
	f->off = (uint16_t)off;
	f->size = (uint16_t)size;
	f->is_signed = (uint8_t)sgn;
	return 0;
}

int tb_tp_format_parse(const char *text, struct tb_tp_format *out)
{
	memset(out, 0, sizeof *out);
	int have_id = 0;
	for (const char *l = text; *l;) {
		const char *end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		while (l < end && (*l == ' ' || *l == '\t'))
			l++;
		if (!strncmp(l, "ID:", 3)) {
			char *e;
			unsigned long id = strtoul(l + 3, &e, 10);
			if (e == l + 3 || id > 0xffffffffu)
				return -EINVAL;
			out->id = (uint32_t)id;
			have_id = 1;
		} else if (!strncmp(l, "field:", 6)) {
			if (out->n >= TB_TP_FIELDS_MAX)
				return -EINVAL;
			if (parse_field(l + 6, end, &out->f[out->n]) < 0)
				return -EINVAL;
			out->n++;
		}
		l = *end ? end + 1 : end;
	}
	return have_id && out->n ? 0 : -EINVAL;
}

static const struct tb_tp_field *field(const struct tb_tp_format *fmt, const char *name)
{
	for (unsigned i = 0; i < fmt->n; i++)
		if (!strcmp(fmt->f[i].name, name))
			return &fmt->f[i];
	return NULL;
}

/* ---- the plan: each class field's source, resolved from the format once ---- */

/* Where a class field of kind `type` comes from: the sample's pid or tid, or
 * the format's field `name` (-1: missing, or a layout no record of it can
 * be decoded with: what tb_ktp_decode used to find record by record). */
static int resolve(const struct tb_tp_format *fmt, char type, const char *name, struct tb_ktp_src *s)
{
	memset(s, 0, sizeof *s);
	s->type = (uint8_t)type;
	if (!strcmp(name, "$pid") || !strcmp(name, "$tid")) {
		if (type != 'i' && type != 'l' && type != 'u')
			return -1;
		s->from = name[1] == 'p' ? TB_KSRC_PID : TB_KSRC_TID;
		return 0;
	}
	const struct tb_tp_field *f = field(fmt, name);
	if (!f)
		return -1;
	s->from = TB_KSRC_FIELD;
	s->off = f->off;
	s->size = f->size;
	s->is_signed = f->is_signed;
	s->data_loc = f->data_loc;
	switch (type) {
	case 's':
		return 0; /* char[N] or __data_loc (its size 4: tb_tp_format_parse) */
	case 'q': /* an array of whole words, at most KSEQ_MAX */
		return f->data_loc || f->size % 8 || f->size / 8 > KSEQ_MAX ? -1 : 0;
	default: /* an integer ('n': the number of a system call) */
		return f->data_loc || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) ? -1 : 0;
	}
}

int tb_ktp_plan(unsigned tp, const struct tb_tp_format *fmt, struct tb_ktp_plan *out)
{
	memset(out, 0, sizeof *out);
	if (tp >= TB_KTP_N)
		return -1;
	const struct kdef *d = &defs[tp];
	out->tp = tp;
	for (unsigned i = 0; i < 8 && d->out[i].name; i++, out->n++) {
		if (resolve(fmt, d->out[i].type, d->out[i].src, &out->out[i]) < 0)
			return -1;
		out->out[i].prio = strstr(d->out[i].name, "prio") != NULL;
	}
	if (d->tid_a && (resolve(fmt, 'l', d->tid_a, &out->a) < 0 || out->a.from != TB_KSRC_FIELD))
		return -1;
	if (d->tid_b && (resolve(fmt, 'l', d->tid_b, &out->b) < 0 || out->b.from != TB_KSRC_FIELD))
		return -1;
	out->has_a = d->tid_a != NULL;
	out->has_b = d->tid_b != NULL;
	return 0;
}

/* An integer field of raw[0..len) (its size one of 1, 2, 4, 8: resolve()):
 * 0 and *v, or -1 when it lies past the record. */
static inline int get_int(const struct tb_ktp_src *s, const uint8_t *raw, uint32_t len, int64_t *v)
{
	if ((uint32_t)s->off + s->size > len)
		return -1;
	const uint8_t *p = raw + s->off;
	switch (s->size) {
	case 1: *v = s->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0]; return 0;
	case 2: {
		uint16_t x;
		memcpy(&x, p, 2);
		*v = s->is_signed ? (int64_t)(int16_t)x : (int64_t)x;
		return 0;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p, 4);
		*v = s->is_signed ? (int64_t)(int32_t)x : (int64_t)x;
		return 0;
	}
	default: {
		uint64_t x;
		memcpy(&x, p, 8);
		*v = (int64_t)x;
		return 0;
	}
	}
}

/* A string field (char[N] or __data_loc) into dst (NUL-terminated, at most
 * KSTR_MAX bytes before it, bytes outside printable ASCII as '?').
 * Return its size with the NUL, or -1. */
static inline int get_str(const struct tb_ktp_src *f, const uint8_t *raw, uint32_t len, uint8_t *dst)
{
	if ((uint32_t)f->off + f->size > len)
		return -1;
	const uint8_t *s;
	uint32_t n;
	if (f->data_loc) {
		uint32_t loc;
		memcpy(&loc, raw + f->off, 4);
		uint32_t o = loc & 0xffff, l = loc >> 16;
		if (o > len || l > len - o)
			return -1;
		s = raw + o;
		n = l;
	} else {
		s = raw + f->off;
		n = f->size;
	}
	/* byte by byte: measured faster for comms (16 bytes) than memchr and
	 * memcpy, whose calls cost more than the loop (~35 vs ~60 ns a switch) */
	uint32_t i = 0;
	for (; i < n && i < KSTR_MAX && s[i]; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	dst[i] = 0;
	return (int)i + 1;
}

int tb_ktp_decode_plan(const struct tb_ktp_plan *p, const uint8_t *raw, uint32_t len, uint32_t sample_pid,
		       uint32_t sample_tid, uint8_t *out, int32_t *tid_a, int32_t *tid_b)
{
	uint32_t at = 0;
	for (unsigned i = 0; i < p->n; i++) {
		const struct tb_ktp_src *o = &p->out[i];
		if (o->type == 's') {
			if (at + KSTR_MAX + 1 > TB_KEV_PAYLOAD_MAX)
				return -1;
			int n = get_str(o, raw, len, out + at);
			if (n < 0)
				return -1;
			at += (uint32_t)n;
			continue;
		}
		if (o->type == 'q') {
			/* an array field: u32 count, then its words (CTF: a sequence) */
			if ((uint32_t)o->off + o->size > len || at + 4 + o->size > TB_KEV_PAYLOAD_MAX)
				return -1;
			uint32_t cnt = o->size / 8u;
			memcpy(out + at, &cnt, 4);
			memcpy(out + at + 4, raw + o->off, o->size);
			at += 4 + o->size;
			continue;
		}
		int64_t v;
		if (o->from == TB_KSRC_PID)
			v = (int32_t)sample_pid;
		else if (o->from == TB_KSRC_TID)
			v = (int32_t)sample_tid;
		else if (get_int(o, raw, len, &v) < 0)
			return -1;
		if (o->type == 'n') {
			const char *nm = tb_syscall_name(v);
			size_t n = strlen(nm) + 1;
			if (at + n > TB_KEV_PAYLOAD_MAX)
				return -1;
			memcpy(out + at, nm, n);
			at += (uint32_t)n;
			continue;
		}
		if (o->prio)
			v -= LTTNG_PRIO_BIAS;
		if (o->type == 'i') {
			int32_t x = (int32_t)v;
			if (at + 4 > TB_KEV_PAYLOAD_MAX)
				return -1;
			memcpy(out + at, &x, 4);
			at += 4;
		} else {
			if (at + 8 > TB_KEV_PAYLOAD_MAX)
				return -1;
			memcpy(out + at, &v, 8);
			at += 8;
		}
	}
	int64_t a = -1, b = -1;
	if (p->has_a && get_int(&p->a, raw, len, &a) < 0)
		return -1;
	if (p->has_b && get_int(&p->b, raw, len, &b) < 0)
		return -1;
	*tid_a = (int32_t)a;
	*tid_b = (int32_t)b;
	return (int)at;
}

int tb_ktp_decode(unsigned tp, const struct tb_tp_format *fmt, const uint8_t *raw, uint32_t len,
		  uint32_t sample_pid, uint32_t sample_tid, struct tb_kev *ev)
{
	struct tb_ktp_plan p;
	if (tb_ktp_plan(tp, fmt, &p) < 0)
		return -1;
	int n = tb_ktp_decode_plan(&p, raw, len, sample_pid, sample_tid, ev->payload, &ev->tid_a, &ev->tid_b);
	if (n < 0)
		return -1;
	ev->tp = tp;
	ev->len = (uint16_t)n;
	return 0;
}
