/* SPDX-License-Identifier: MIT */
/*
 * convert_perfetto.c - `tracebuf convert DIR --to perfetto -o FILE.pftrace`:
 * Perfetto's own protobuf trace (protos/perfetto/trace/trace.proto: a Trace
 * is a sequence of TracePacket), written with the small encoder of
 * cli_pb.h.  Perfetto UI and trace_processor open it; docs/CONVERT.md says
 * what goes where, tests/perfetto/ holds the .proto files it is checked
 * against.
 *
 * Sequences (trusted_packet_sequence_id):
 *   1  everything in time order: the track descriptors, the events, the
 *      samples.  Its first packet clears the incremental state, sets
 *      TracePacketDefaults.timestamp_clock_id = 64 and a ClockSnapshot
 *      where clock 64 is incremental and equal to BOOTTIME (and REALTIME) at
 *      the trace start: each later timestamp is the delta from the previous
 *      packet's (1-3 bytes instead of 9).  Names are interned
 *      (InternedData: event names, categories, debug annotation names,
 *      and for profiles function names, mappings, frames, callstacks), sent
 *      in the first packet that uses them (SEQ_NEEDS_INCREMENTAL_STATE).
 *   2  what is known only later than its time (the counters of a time
 *      bucket, loss ranges): absolute BOOTTIME timestamps; trace_processor
 *      sorts the packets.
 *   3  the kernel's sched events of a --kernel trace (docs/KERNEL.md) as
 *      Perfetto's own ftrace events (convert_perfetto_ftrace.c): per CPU an
 *      FtraceEventBundle of up to 1024 FtraceEvents (sched_switch,
 *      sched_waking, ... with ftrace's field names and prio), absolute
 *      timestamps on the clock snapshot's BOOTTIME, so that Perfetto draws
 *      CPU tracks and thread states itself; and its system calls
 *      (sys_enter/sys_exit: a slice per call on the thread's track; before
 *      the first, a SystemInfo saying the machine is x86_64, by which
 *      Perfetto names them) and user page faults (generic ftrace events);
 *      they are not also track events.
 *
 * Tracks: a process track per pid (ProcessDescriptor with its recorded
 * name), a thread track per tid under it (ThreadDescriptor, "tid N" until
 * traces record thread names), a track per CPU for events without a thread
 * record, per CPU a counter of events/s (buckets of 1/1000 of the span,
 * 1-2-5 rounded) and of the events lost (running total), per stream a
 * track of the loss ranges as slices.
 *
 * Events: NAME_begin ... NAME_end are slices (TYPE_SLICE_BEGIN/END, the
 * rules of cli_convert.h), every other event an instant; fields are debug
 * annotations (integers as uint/int values: exact, no 2^53 limit).
 * profile:sample events are PerfSample packets with interned callstacks
 * (Perfetto's flame graph of "perf samples"); one per sample: Perfetto
 * counts samples, not timer overruns.
 *
 * Output in chunks of 1 MiB of packets, each deflated into one
 * TracePacket.compressed_packets (what traced writes with compression on;
 * trace_processor inflates it), or written plain with --no-compress.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(TB_HAVE_LIBDEFLATE)
#include <libdeflate.h>
#define TB_DEFLATE 1
#elif defined(TB_HAVE_ZLIB)
#include <zlib.h>
#define TB_DEFLATE 1
#endif

#include <tracebuf/reader.h>

#include "cli.h"
#include "cli_convert.h"
#include "cli_map.h"
#include "cli_pb.h"
#include "cli_profile.h"
#include "convert_perfetto_ftrace.h"

/* field numbers (protos/perfetto/trace/...) */
enum {
	F_TRACE_PACKET = 1,
	/* TracePacket */
	TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12, TP_SEQ_FLAGS = 13,
	TP_CLOCK_SNAPSHOT = 6, TP_DEFAULTS = 59, TP_TRACK_DESC = 60, TP_PERF_SAMPLE = 66,
	TP_COMPRESSED = 50, TP_FIRST_ON_SEQ = 87, TP_SYSTEM_INFO = 45,
	/* SystemInfo (common/system_info.proto), Utsname */
	SI_UTSNAME = 1, UTS_MACHINE = 4,
	SEQ_CLEARED = 1, SEQ_NEEDS = 2,
	/* TracePacketDefaults */
	DEF_CLOCK_ID = 58,
	/* ClockSnapshot, Clock */
	CS_CLOCKS = 1, CS_PRIMARY = 2, CLK_ID = 1, CLK_TS = 2, CLK_INCR = 3,
	CLOCK_REALTIME = 1, CLOCK_BOOTTIME = 6, CLOCK_INCREMENTAL = 64,
	/* TrackDescriptor */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	PD_PID = 1, PD_NAME = 6, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	CD_UNIT = 3, CD_UNIT_NAME = 6, CD_UNIT_COUNT = 2,
	/* TrackEvent */
	TE_CAT_IIDS = 3, TE_ANN = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11, TE_NAME = 23,
	TE_DCOUNTER = 44,
	TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	/* DebugAnnotation */
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6, DA_NAME = 10, DA_ARRAY = 12,
	/* InternedData */
	ID_CATS = 1, ID_NAMES = 2, ID_ANN_NAMES = 3, ID_FUNCS = 5, ID_FRAMES = 6, ID_CALLSTACKS = 7,
	ID_BUILD_IDS = 16, ID_MAP_PATHS = 17, ID_MAPPINGS = 19,
	IID = 1, INAME = 2, /* EventCategory / EventName / DebugAnnotationName / InternedString: iid, name|str */
	/* Mapping, Frame, Callstack */
	MAP_BUILD_ID = 2, MAP_PATHS = 7, FR_FUNC = 2, FR_MAP = 3, FR_REL_PC = 4, CS_FRAMES = 2,
	/* PerfSample */
	PS_CPU = 1, PS_PID = 2, PS_TID = 3, PS_CALLSTACK = 4, PS_MODE = 5, MODE_USER = 2,
};


#define CHUNK (1u << 20)

struct pthr {
	uint64_t uuid;
	struct cv_stack st;
};

struct pcpu {
	uint32_t cpu;
	uint64_t track;     /* events without a thread record */
	uint64_t rate_uuid; /* events/s */
	uint64_t lost_uuid; /* lost events, running total */
	int64_t bucket;     /* current bucket index, -1 none */
	uint64_t count, lost;
	struct pff_bundle fb; /* the CPU's pending FtraceEventBundle */
};

struct pf {
	struct tb_reader *r;
	const struct cv_opts *o;
	FILE *out;
	struct pb b;       /* the packets of the current chunk (Trace.packet fields) */
	uint8_t *zbuf;     /* deflate output */
#ifdef TB_HAVE_LIBDEFLATE
	struct libdeflate_compressor *z;
#endif
	size_t zcap;
	uint64_t bytes_out, bytes_plain;
	int64_t t0, prev_ns; /* clock snapshot; the last timestamp of sequence 1 */
	uint64_t next_uuid;
	struct cv_roles roles;
	uint8_t *cls_done;  /* names of class id interned */
	struct pff ft;      /* the kernel's events as ftrace events */
	uint32_t *ann_base; /* first debug annotation name iid of each class's fields */
	uint32_t next_ann;
	struct cli_table threads, procs; /* struct pthr by (pid, tid) / (pid, 0) */
	struct pcpu *cpus;
	size_t ncpus;
	uint64_t *loss_track; /* per stream: the loss ranges' track (0: not yet) */
	int64_t bucket_ns, origin_ns;
	/* profile */
	struct prof *prof;
	struct prof_sample *ps;
	struct cli_map fn_done;     /* fid -> 1 */
	struct cli_smap modules;   /* module -> mapping iid */
	struct cli_smap stacks;    /* "fid,fid,..." -> callstack iid */
	char key[9 * TB_PROF_MAX_DEPTH + 1]; /* "fid,fid,...": a callstack's key in stacks */
	uint64_t next_map, next_cs;
	int build_id_sent;
	/* counts */
	uint64_t events, instants, begins, ends, unmatched, closed_at_end, closed_by_outer, too_deep, notices;
	uint64_t samples, invalid_samples, counters, backwards;
	char nbuf[256];
};

/* ---------------------------------------------------------------------- */
/* output                                                                  */

static int flush_chunk(struct pf *f, int last)
{
	if (f->b.oom)
		return -ENOMEM;
	if (!f->b.n || (!last && f->b.n < CHUNK))
		return 0;
	f->bytes_plain += f->b.n;
#ifdef TB_DEFLATE
	if (f->o->compress) {
		/* zlib format at level 1: level 6 (traced's) is 5 % smaller and 1.7x slower with
		 * libdeflate, 8 % and 4x with zlib, on a workload trace */
#ifdef TB_HAVE_LIBDEFLATE
		if (!f->z && !(f->z = libdeflate_alloc_compressor(1)))
			return -ENOMEM;
		size_t need = libdeflate_zlib_compress_bound(f->z, f->b.n) + 16;
#else
		size_t need = compressBound((uLong)f->b.n) + 16;
#endif
		if (need > f->zcap) {
			uint8_t *z = realloc(f->zbuf, need);
			if (!z)
				return -ENOMEM;
			f->zbuf = z;
			f->zcap = need;
		}
#ifdef TB_HAVE_LIBDEFLATE
		size_t zn = libdeflate_zlib_compress(f->z, f->b.b, f->b.n, f->zbuf, f->zcap);
		if (!zn)
			return -ENOMEM;
#else
		uLongf zn = (uLongf)f->zcap;
		if (compress2(f->zbuf, &zn, f->b.b, (uLong)f->b.n, 1) != Z_OK)
			return -ENOMEM;
#endif
		uint8_t hdr[32];
		/* TracePacket { compressed_packets = ... } */
		size_t inner = pb_varint_size((uint64_t)TP_COMPRESSED << 3 | 2) + pb_varint_size(zn) + zn;
		size_t h = pb_put_varint(hdr, (uint64_t)F_TRACE_PACKET << 3 | 2);
		h += pb_put_varint(hdr + h, inner);
		h += pb_put_varint(hdr + h, (uint64_t)TP_COMPRESSED << 3 | 2);
		h += pb_put_varint(hdr + h, zn);
		fwrite(hdr, 1, h, f->out);
		fwrite(f->zbuf, 1, zn, f->out);
		f->bytes_out += h + zn;
		f->b.n = 0;
		return 0;
	}
#endif
	fwrite(f->b.b, 1, f->b.n, f->out);
	f->bytes_out += f->b.n;
	f->b.n = 0;
	return 0;
}

/* A packet of sequence seq; ns < 0: without timestamp.  Sequence 1 carries
 * deltas on the incremental clock, sequence 2 absolute BOOTTIME. */
static void pkt_begin(struct pf *f, int seq, int64_t ns)
{
	pb_begin(&f->b, F_TRACE_PACKET);
	if (ns >= 0 && seq == 1) {
		if (ns < f->prev_ns) {
			f->backwards++; /* never in a merged trace; kept in order anyway */
			ns = f->prev_ns;
		}
		pb_varint(&f->b, TP_TIMESTAMP, (uint64_t)(ns - f->prev_ns));
		f->prev_ns = ns;
	} else if (ns >= 0) {
		pb_varint(&f->b, TP_TIMESTAMP, (uint64_t)ns);
	}
	pb_varint(&f->b, TP_SEQ_ID, (uint64_t)seq);
}

static int pkt_end(struct pf *f)
{
	pb_end(&f->b);
	return flush_chunk(f, 0);
}

/* ---------------------------------------------------------------------- */
/* tracks                                                                  */

static uint64_t desc_named(struct pf *f, const char *name, uint64_t parent, int counter, const char *unit)
{
	uint64_t uuid = ++f->next_uuid;
	pkt_begin(f, 1, -1);
	pb_begin(&f->b, TP_TRACK_DESC);
	pb_varint(&f->b, TD_UUID, uuid);
	if (parent)
		pb_varint(&f->b, TD_PARENT, parent);
	pb_str(&f->b, TD_NAME, name);
	if (counter) {
		pb_begin(&f->b, TD_COUNTER);
		if (unit)
			pb_str(&f->b, CD_UNIT_NAME, unit);
		else
			pb_varint(&f->b, CD_UNIT, CD_UNIT_COUNT);
		pb_end(&f->b);
	}
	pb_end(&f->b);
	return pkt_end(f) ? 0 : uuid;
}

static struct pcpu *cpu_of(struct pf *f, uint32_t cpu)
{
	for (size_t i = 0; i < f->ncpus; i++)
		if (f->cpus[i].cpu == cpu)
			return &f->cpus[i];
	return NULL;
}

/* the track of thread (pid, tid), described when first seen; pid 0 and tid 0: the CPU's */
static struct pthr *thread_track(struct pf *f, uint32_t pid, uint32_t tid, uint32_t cpu)
{
	int isnew;
	struct pthr *t = cli_table_get(&f->threads, pid, pid || tid ? tid : (uint64_t)cpu << 32, &isnew);
	if (!t || !isnew)
		return t;
	if (!pid && !tid) {
		snprintf(f->nbuf, sizeof f->nbuf, "cpu %" PRIu32 " (no thread record)", cpu);
		t->uuid = desc_named(f, f->nbuf, 0, 0, NULL);
		return t->uuid ? t : NULL;
	}
	struct pthr *p = cli_table_get(&f->procs, pid, 0, &isnew);
	if (!p)
		return NULL;
	if (isnew) {
		p->uuid = ++f->next_uuid;
		pkt_begin(f, 1, -1);
		pb_begin(&f->b, TP_TRACK_DESC);
		pb_varint(&f->b, TD_UUID, p->uuid);
		pb_begin(&f->b, TD_PROCESS);
		pb_varint(&f->b, PD_PID, pid);
		pb_str(&f->b, PD_NAME, cv_process_name(f->r, pid, f->nbuf, sizeof f->nbuf));
		pb_end(&f->b);
		pb_end(&f->b);
		if (pkt_end(f))
			return NULL;
	}
	uint64_t parent = p->uuid;
	t = cli_table_get(&f->threads, pid, tid, NULL); /* the procs table is another one: t did not move */
	t->uuid = ++f->next_uuid;
	pkt_begin(f, 1, -1);
	pb_begin(&f->b, TP_TRACK_DESC);
	pb_varint(&f->b, TD_UUID, t->uuid);
	pb_varint(&f->b, TD_PARENT, parent);
	pb_begin(&f->b, TD_THREAD);
	pb_varint(&f->b, THD_PID, pid);
	pb_varint(&f->b, THD_TID, tid);
	pb_str(&f->b, THD_NAME, cv_thread_name(f->r, pid, tid, f->nbuf, sizeof f->nbuf));
	pb_end(&f->b);
	pb_end(&f->b);
	return pkt_end(f) ? NULL : t;
}

/* ---------------------------------------------------------------------- */
/* counters (sequence 2)                                                   */

static int counter(struct pf *f, uint64_t track, int64_t ns, double v)
{
	f->counters++;
	pkt_begin(f, 2, ns);
	pb_begin(&f->b, TP_TRACK_EVENT);
	pb_varint(&f->b, TE_TYPE, TYPE_COUNTER);
	pb_varint(&f->b, TE_TRACK, track);
	pb_double(&f->b, TE_DCOUNTER, v);
	pb_end(&f->b);
	return pkt_end(f);
}

/* the event rate of a CPU: the bucket of ns; emits the buckets closed since */
static int rate_step(struct pf *f, struct pcpu *c, int64_t ns, int last)
{
	int64_t b = (ns - f->origin_ns) / f->bucket_ns;
	if (!last && b == c->bucket) {
		c->count++;
		return 0;
	}
	if (!c->rate_uuid) {
		snprintf(f->nbuf, sizeof f->nbuf, "cpu %" PRIu32 " events/s", c->cpu);
		if (!(c->rate_uuid = desc_named(f, f->nbuf, 0, 1, "events/s")))
			return -ENOMEM;
	}
	double per_s = 1e9 / (double)f->bucket_ns;
	int rc = 0;
	if (c->bucket >= 0) {
		rc = counter(f, c->rate_uuid, f->origin_ns + c->bucket * f->bucket_ns, (double)c->count * per_s);
		if (!rc && (last || b > c->bucket + 1)) /* a gap (or the end): back to 0 after the bucket */
			rc = counter(f, c->rate_uuid, f->origin_ns + (c->bucket + 1) * f->bucket_ns, 0);
	}
	c->bucket = b;
	c->count = 1;
	return rc;
}

/* ---------------------------------------------------------------------- */
/* events (sequence 1)                                                     */

/* interns the names of class id (event, span, category, field names) into the open packet */
static void intern_class(struct pf *f, const struct tb_rd_event *e, uint32_t id)
{
	if (f->cls_done[id])
		return;
	f->cls_done[id] = 1;
	const struct cv_role *x = &f->roles.r[id];
	unsigned nf = tb_rd_nfields(e);
	f->ann_base[id] = f->next_ann;
	f->next_ann += nf;
	pb_begin(&f->b, TP_INTERNED);
	pb_begin(&f->b, ID_CATS);
	pb_varint(&f->b, IID, id + 1);
	pb_str(&f->b, INAME, x->cat);
	pb_end(&f->b);
	pb_begin(&f->b, ID_NAMES); /* the instant's name: iid 2 id + 1 */
	pb_varint(&f->b, IID, 2 * (uint64_t)id + 1);
	const char *cn = tb_reader_class_name(f->r, id);
	pb_str(&f->b, INAME, cn ? cn : "?");
	pb_end(&f->b);
	if (x->kind) { /* the span's name: iid 2 id + 2 */
		pb_begin(&f->b, ID_NAMES);
		pb_varint(&f->b, IID, 2 * (uint64_t)id + 2);
		pb_str(&f->b, INAME, x->span);
		pb_end(&f->b);
	}
	for (unsigned i = 0; i < nf; i++) {
		pb_begin(&f->b, ID_ANN_NAMES);
		pb_varint(&f->b, IID, f->ann_base[id] + i + 1);
		pb_str(&f->b, INAME, tb_rd_field_name(e, i));
		pb_end(&f->b);
	}
	pb_end(&f->b);
}

static void annotations(struct pf *f, const struct tb_rd_event *e, uint32_t id)
{
	unsigned nf = tb_rd_nfields(e);
	for (unsigned i = 0; i < nf; i++) {
		pb_begin(&f->b, TE_ANN);
		pb_varint(&f->b, DA_NAME_IID, f->ann_base[id] + i + 1);
		int ty = tb_rd_field_type(e, i);
		switch (ty) {
		case TB_RD_U8: case TB_RD_U16: case TB_RD_U32: case TB_RD_U64:
			pb_varint(&f->b, DA_UINT, tb_rd_u64(e, i));
			break;
		case TB_RD_I8: case TB_RD_I16: case TB_RD_I32: case TB_RD_I64:
			pb_int64(&f->b, DA_INT, tb_rd_i64(e, i));
			break;
		case TB_RD_F64: case TB_RD_F32:
			pb_double(&f->b, DA_DOUBLE, tb_rd_f64(e, i));
			break;
		case TB_RD_BOOL:
			pb_varint(&f->b, DA_BOOL, tb_rd_u64(e, i));
			break;
		case TB_RD_ENUM: { /* the label when one names the value, else the number */
			const char *l = tb_rd_enum_label(e, i);
			if (l)
				pb_str(&f->b, DA_STRING, l);
			else
				pb_int64(&f->b, DA_INT, tb_rd_i64(e, i));
			break;
		}
		case TB_RD_STRING: {
			size_t n;
			const char *s = tb_rd_str(e, i, &n);
			pb_strn(&f->b, DA_STRING, s ? s : "", s ? n : 0);
			break;
		}
		case TB_RD_BYTES: { /* hex: Perfetto has no bytes value */
			uint32_t n;
			const uint8_t *s = tb_rd_seq(e, i, &n);
			if (pb_reserve(&f->b, 2 * (size_t)n + 16))
				break;
			pb_tag(&f->b, DA_STRING, 2);
			f->b.n += pb_put_varint(f->b.b + f->b.n, 2 * (uint64_t)n);
			for (uint32_t j = 0; j < n; j++) {
				f->b.b[f->b.n++] = "0123456789abcdef"[s[j] >> 4];
				f->b.b[f->b.n++] = "0123456789abcdef"[s[j] & 15];
			}
			break;
		}
		case TB_RD_U64SEQ: {
			uint32_t n;
			tb_rd_seq(e, i, &n);
			for (uint32_t j = 0; j < n; j++) {
				pb_begin(&f->b, DA_ARRAY);
				pb_varint(&f->b, DA_UINT, tb_rd_seq_u64(e, i, j));
				pb_end(&f->b);
			}
			break;
		}
		default:
			break;
		}
		pb_end(&f->b);
	}
}

/* one TrackEvent of class id (type TYPE_*) on track, with the event's fields */
static int track_event(struct pf *f, const struct tb_rd_event *e, uint32_t id, int type, uint64_t track)
{
	pkt_begin(f, 1, tb_rd_ns(e));
	intern_class(f, e, id);
	pb_begin(&f->b, TP_TRACK_EVENT);
	pb_varint(&f->b, TE_TYPE, (uint64_t)type);
	pb_varint(&f->b, TE_TRACK, track);
	if (type != TYPE_END) {
		pb_varint(&f->b, TE_NAME_IID, 2 * (uint64_t)id + (type == TYPE_BEGIN ? 2 : 1));
		pb_varint(&f->b, TE_CAT_IIDS, id + 1);
	}
	annotations(f, e, id);
	pb_end(&f->b);
	pb_varint(&f->b, TP_SEQ_FLAGS, SEQ_NEEDS);
	return pkt_end(f);
}

/* closes the innermost open slice of track t at ns, saying why */
static int close_slice(struct pf *f, struct pthr *t, int64_t ns, const char *why)
{
	cv_stack_pop(&t->st);
	pkt_begin(f, 1, ns);
	pb_begin(&f->b, TP_TRACK_EVENT);
	pb_varint(&f->b, TE_TYPE, TYPE_END);
	pb_varint(&f->b, TE_TRACK, t->uuid);
	pb_begin(&f->b, TE_ANN);
	pb_str(&f->b, DA_NAME, "tracebuf_closed");
	pb_str(&f->b, DA_STRING, why);
	pb_end(&f->b);
	pb_end(&f->b);
	return pkt_end(f);
}

static int bundle_flush(struct pf *f, struct pcpu *c);

/* a loss notice: a slice over its range on the stream's loss track, and the CPU's lost-events counter */
static int notice(struct pf *f, const struct tb_rd_event *e)
{
	unsigned s = tb_rd_stream(e);
	struct pcpu *c = cpu_of(f, tb_rd_cpu(e));
	int kind = tb_rd_kind(e);
	uint64_t n = tb_rd_count(e);
	int64_t b = tb_rd_ns(e), end = tb_reader_ticks_to_ns(f->r, tb_rd_ticks_end(e));
	if (end < b)
		end = b;
	f->notices++;
	const char *ch = tb_reader_stream_file(f->r, s);
	if (c && ch && !strncmp(ch, "kernel_cpu", 10)) { /* ftrace's own mark: the bundle after the loss */
		if (c->fb.n && bundle_flush(f, c))
			return -ENOMEM;
		c->fb.lost = 1;
	}
	if (!f->loss_track[s]) {
		snprintf(f->nbuf, sizeof f->nbuf, "losses %s (cpu %" PRIu32 ")", tb_reader_stream_file(f->r, s), tb_rd_cpu(e));
		if (!(f->loss_track[s] = desc_named(f, f->nbuf, 0, 0, NULL)))
			return -ENOMEM;
	}
	if (kind == TB_RD_DISCARDED_PACKETS)
		snprintf(f->nbuf, sizeof f->nbuf, "lost %" PRIu64 " packet%s", n, n == 1 ? "" : "s");
	else if (n)
		snprintf(f->nbuf, sizeof f->nbuf, "lost %" PRIu64 " event%s", n, n == 1 ? "" : "s");
	else
		snprintf(f->nbuf, sizeof f->nbuf, "lost events (count unknown)");
	for (int half = 0; half < 2; half++) {
		pkt_begin(f, 2, half ? end : b);
		pb_begin(&f->b, TP_TRACK_EVENT);
		pb_varint(&f->b, TE_TYPE, half ? TYPE_END : TYPE_BEGIN);
		pb_varint(&f->b, TE_TRACK, f->loss_track[s]);
		if (!half) {
			pb_str(&f->b, TE_NAME, f->nbuf);
			pb_begin(&f->b, TE_ANN);
			pb_str(&f->b, DA_NAME, "count");
			pb_varint(&f->b, DA_UINT, n);
			pb_end(&f->b);
			if (kind == TB_RD_DISCARDED_EVENTS && n && tb_rd_lost(e, 0) != UINT64_MAX)
				for (unsigned k = 0; k < TB_RD_LOST_NCAUSES; k++) {
					if (!tb_rd_lost(e, k))
						continue;
					char an[64];
					snprintf(an, sizeof an, "lost_%s", tb_rd_loss_name(k));
					pb_begin(&f->b, TE_ANN);
					pb_str(&f->b, DA_NAME, an);
					pb_varint(&f->b, DA_UINT, tb_rd_lost(e, k));
					pb_end(&f->b);
				}
			pb_begin(&f->b, TE_ANN);
			pb_str(&f->b, DA_NAME, "stream");
			pb_str(&f->b, DA_STRING, tb_reader_stream_file(f->r, s));
			pb_end(&f->b);
		}
		pb_end(&f->b);
		if (pkt_end(f))
			return -ENOMEM;
	}
	if (!c || kind != TB_RD_DISCARDED_EVENTS || !n)
		return 0;
	if (!c->lost_uuid) {
		snprintf(f->nbuf, sizeof f->nbuf, "cpu %" PRIu32 " lost events", c->cpu);
		if (!(c->lost_uuid = desc_named(f, f->nbuf, 0, 1, NULL)) || counter(f, c->lost_uuid, f->origin_ns, 0))
			return -ENOMEM;
	}
	c->lost += n;
	return counter(f, c->lost_uuid, end, (double)c->lost);
}

/* ---------------------------------------------------------------------- */
/* the kernel's sched events: ftrace events (sequence 3, convert_perfetto_ftrace.c) */

/* the CPU's pending FtraceEventBundle as one packet (its events in the CPU's time order) */
static int bundle_flush(struct pf *f, struct pcpu *c)
{
	if (c->fb.fb.oom)
		return -ENOMEM;
	if (!c->fb.n && !c->fb.lost) /* a loss after the CPU's last event: an empty bundle says it */
		return 0;
	pkt_begin(f, 3, -1);
	pff_bundle_write(&f->b, &c->fb);
	return pkt_end(f);
}

/* ---------------------------------------------------------------------- */
/* profile samples                                                         */

static int sample(struct pf *f, const struct tb_rd_event *e, const struct prof_sample *s)
{
	f->samples++;
	if (s->invalid) {
		f->invalid_samples++;
		return 0;
	}
	/* the callstack, outermost frame first ("bottom frame first") */
	size_t o = 0;
	f->key[0] = 0;
	for (uint32_t j = s->n; j-- > 0;) /* at most 9 bytes a frame: the key's size */
		o += (size_t)snprintf(f->key + o, sizeof f->key - o, "%" PRIx32 ",", s->fid[j]);
	uint64_t *cs = cli_smap_get(&f->stacks, f->key, 1);
	if (!cs)
		return -ENOMEM;
	pkt_begin(f, 1, tb_rd_ns(e));
	if (!*cs) {
		*cs = ++f->next_cs;
		pb_begin(&f->b, TP_INTERNED);
		if (!f->build_id_sent) { /* trace_processor wants a build id: the empty one */
			f->build_id_sent = 1;
			pb_begin(&f->b, ID_BUILD_IDS);
			pb_varint(&f->b, IID, 1);
			pb_str(&f->b, INAME, "");
			pb_end(&f->b);
		}
		for (uint32_t j = 0; j < s->n; j++) {
			uint64_t *done = cli_map_get(&f->fn_done, s->fid[j], 0, 1);
			if (!done)
				return -ENOMEM;
			if (*done)
				continue;
			*done = 1;
			const struct prof_fn *fn = prof_fn(f->prof, s->fid[j]);
			const char *mod = fn->module ? fn->module : "[unknown]";
			uint64_t *m = cli_smap_get(&f->modules, mod, 1);
			if (!m)
				return -ENOMEM;
			if (!*m) {
				*m = ++f->next_map;
				pb_begin(&f->b, ID_MAP_PATHS);
				pb_varint(&f->b, IID, *m);
				pb_str(&f->b, INAME, mod);
				pb_end(&f->b);
				pb_begin(&f->b, ID_MAPPINGS);
				pb_varint(&f->b, IID, *m);
				pb_varint(&f->b, MAP_BUILD_ID, 1);
				pb_varint(&f->b, MAP_PATHS, *m);
				pb_end(&f->b);
			}
			pb_begin(&f->b, ID_FUNCS);
			pb_varint(&f->b, IID, (uint64_t)s->fid[j] + 1);
			pb_str(&f->b, INAME, fn->label);
			pb_end(&f->b);
			pb_begin(&f->b, ID_FRAMES);
			pb_varint(&f->b, IID, (uint64_t)s->fid[j] + 1);
			pb_varint(&f->b, FR_FUNC, (uint64_t)s->fid[j] + 1);
			pb_varint(&f->b, FR_MAP, *m);
			pb_varint(&f->b, FR_REL_PC, fn->kind == PROF_NOSYM ? fn->off : 0);
			pb_end(&f->b);
		}
		pb_begin(&f->b, ID_CALLSTACKS);
		pb_varint(&f->b, IID, *cs);
		for (uint32_t j = s->n; j-- > 0;)
			pb_varint(&f->b, CS_FRAMES, (uint64_t)s->fid[j] + 1);
		pb_end(&f->b);
		pb_end(&f->b);
	}
	pb_begin(&f->b, TP_PERF_SAMPLE);
	pb_varint(&f->b, PS_CPU, tb_rd_cpu(e));
	pb_varint(&f->b, PS_PID, s->pid);
	pb_varint(&f->b, PS_TID, s->tid);
	pb_varint(&f->b, PS_CALLSTACK, *cs);
	pb_varint(&f->b, PS_MODE, MODE_USER);
	pb_end(&f->b);
	pb_varint(&f->b, TP_SEQ_FLAGS, SEQ_NEEDS);
	return pkt_end(f);
}

/* ---------------------------------------------------------------------- */

static int convert_one(struct pf *f, const struct tb_rd_event *e)
{
	if (tb_rd_kind(e) != TB_RD_EVENT)
		return notice(f, e);
	f->events++;
	uint32_t pid = tb_rd_pid(e), tid = tb_rd_tid(e), cpu = tb_rd_cpu(e), id = tb_rd_id(e), inner = 0;
	struct pcpu *c = cpu_of(f, cpu);
	if (c && rate_step(f, c, tb_rd_ns(e), 0))
		return -ENOMEM;
	if (c && id < f->roles.n) {
		int k = pff_lookup(&f->ft, e, id);
		if (k >= 0 && f->ft.need_system_info) { /* before any bundle holding a call */
			f->ft.need_system_info = 0;
			pkt_begin(f, 3, -1);
			pb_begin(&f->b, TP_SYSTEM_INFO);
			pb_begin(&f->b, SI_UTSNAME);
			pb_str(&f->b, UTS_MACHINE, "x86_64"); /* only: a release would change how prev_state reads */
			pb_end(&f->b);
			pb_end(&f->b);
			if (pkt_end(f))
				return -ENOMEM;
		}
		if (k >= 0) {
			int full = pff_event(&f->ft, &c->fb, e, k);
			return full < 0 ? -ENOMEM : full ? bundle_flush(f, c) : 0;
		}
	}
	if (f->prof) {
		int k = prof_event(f->prof, e, f->ps);
		if (k)
			return k < 0 ? k : sample(f, e, f->ps);
	}
	struct pthr *t = thread_track(f, pid, tid, cpu);
	if (!t || id >= f->roles.n)
		return -ENOMEM;
	switch (cv_span_step(&f->roles, &t->st, id, &inner)) {
	case CV_BEGIN:
		f->begins++;
		return track_event(f, e, id, TYPE_BEGIN, t->uuid);
	case CV_END:
		for (; inner; inner--) {
			if (close_slice(f, t, tb_rd_ns(e), "by an outer end"))
				return -ENOMEM;
			f->closed_by_outer++;
		}
		cv_stack_pop(&t->st);
		f->ends++;
		return track_event(f, e, id, TYPE_END, t->uuid);
	case CV_UNMATCHED: f->unmatched++; break;
	case CV_TOO_DEEP: f->too_deep++; break;
	case CV_INSTANT: break;
	default: return -ENOMEM;
	}
	f->instants++;
	return track_event(f, e, id, TYPE_INSTANT, t->uuid);
}

/* the first packet: incremental state cleared, the incremental clock */
static void first_packet(struct pf *f)
{
	pb_begin(&f->b, F_TRACE_PACKET);
	pb_varint(&f->b, TP_SEQ_ID, 1);
	pb_varint(&f->b, TP_SEQ_FLAGS, SEQ_CLEARED);
	pb_varint(&f->b, TP_FIRST_ON_SEQ, 1);
	pb_begin(&f->b, TP_DEFAULTS);
	pb_varint(&f->b, DEF_CLOCK_ID, CLOCK_INCREMENTAL);
	pb_end(&f->b);
	pb_begin(&f->b, TP_CLOCK_SNAPSHOT);
	static const int ids[] = { CLOCK_BOOTTIME, CLOCK_REALTIME, CLOCK_INCREMENTAL };
	for (int i = 0; i < 3; i++) {
		pb_begin(&f->b, CS_CLOCKS);
		pb_varint(&f->b, CLK_ID, (uint64_t)ids[i]);
		pb_varint(&f->b, CLK_TS, (uint64_t)f->t0);
		if (ids[i] == CLOCK_INCREMENTAL)
			pb_varint(&f->b, CLK_INCR, 1);
		pb_end(&f->b);
	}
	pb_varint(&f->b, CS_PRIMARY, CLOCK_BOOTTIME);
	pb_end(&f->b);
	pb_end(&f->b);
	f->prev_ns = f->t0;
}

/* 1-2-5 rounding of ns upwards, at least 1 us, at most 1e18 */
static int64_t nice_ns(int64_t ns)
{
	int64_t v = 1000;
	for (int i = 0; i < 15; i++, v *= 10) {
		if (v >= ns)
			return v;
		if (2 * v >= ns)
			return 2 * v;
		if (5 * v >= ns)
			return 5 * v;
	}
	return v; /* 1e18 ns: 31 years */
}

int convert_perfetto(struct tb_reader *r, const struct cv_opts *o)
{
	struct pf f;
	memset(&f, 0, sizeof f);
	f.r = r;
	f.o = o;
	f.threads = (struct cli_table)CLI_TABLE_INIT(struct pthr);
	f.procs = (struct cli_table)CLI_TABLE_INIT(struct pthr);
	unsigned ns = tb_reader_nstreams(r);
	uint32_t nc = tb_reader_nclass_ids(r);
	f.cls_done = calloc(nc ? nc : 1, 1);
	f.ann_base = calloc(nc ? nc : 1, sizeof *f.ann_base);
	f.cpus = calloc(ns ? ns : 1, sizeof *f.cpus);
	f.loss_track = calloc(ns ? ns : 1, sizeof *f.loss_track);
	f.prof = prof_open(r, "convert", o->quiet);
	f.ps = malloc(sizeof *f.ps);
	int rc = 0;
	if (pff_init(&f.ft, nc) || !f.cls_done || !f.ann_base || !f.cpus || !f.loss_track || !f.prof || !f.ps || cv_roles_load(&f.roles, r) ||
	    (prof_present(f.prof) && prof_load(f.prof))) {
		rc = cli_error("convert", "out of memory");
		goto out;
	}
	if (!prof_present(f.prof)) {
		prof_close(f.prof);
		f.prof = NULL;
	}
#ifndef TB_DEFLATE
	if (o->compress && !o->quiet)
		fprintf(stderr, "tracebuf convert: built without libdeflate or zlib: the packets are not compressed\n");
#endif
	for (unsigned s = 0; s < ns; s++) {
		uint32_t cpu = tb_reader_stream_cpu(r, s);
		if (!cpu_of(&f, cpu))
			f.cpus[f.ncpus++] = (struct pcpu){ .cpu = cpu, .bucket = -1, .fb.cpu = cpu };
	}
	uint64_t t0, t1;
	tb_reader_time_range(r, &t0, &t1);
	f.origin_ns = tb_reader_ticks_to_ns(r, t0);
	int64_t end_ns = tb_reader_ticks_to_ns(r, t1);
	if (o->has_begin && o->begin_ns > f.origin_ns)
		f.origin_ns = o->begin_ns;
	int64_t last_ns = o->has_end && o->end_ns < end_ns ? o->end_ns : end_ns;
	f.bucket_ns = nice_ns(last_ns > f.origin_ns ? (last_ns - f.origin_ns) / 1000 : 1);
	f.t0 = f.origin_ns > 0 ? f.origin_ns : 0;
	if (!(f.out = cv_open_out(o))) {
		rc = TB_EXIT_FAIL;
		goto out;
	}
	first_packet(&f);
	struct cv_window w;
	cv_window_start(&w, r, o);
	const struct tb_rd_event *e;
	last_ns = f.t0;
	while (!rc && cli_next(r, &e) > 0) {
		int k = cv_window_take(&w, e);
		if (k < 0)
			break;
		if (!k)
			continue;
		rc = convert_one(&f, e);
		if (tb_rd_ns(e) > last_ns)
			last_ns = tb_rd_ns(e);
	}
	if (w.cut)
		cv_window_drain(&w, r);
	else if (end_ns > last_ns)
		last_ns = end_ns;
	for (size_t i = 0; !rc && i < f.ncpus; i++)
		if (f.cpus[i].bucket >= 0)
			rc = rate_step(&f, &f.cpus[i], last_ns, 1);
	for (size_t i = 0; !rc && i < f.ncpus; i++)
		rc = bundle_flush(&f, &f.cpus[i]);
	for (size_t i = 0; !rc && i < f.threads.n; i++) {
		struct pthr *t = cli_table_at(&f.threads, i);
		while (!rc && t->st.depth) {
			rc = close_slice(&f, t, last_ns, w.cut ? "where the file was cut" : "at the end of the trace");
			f.closed_at_end++;
		}
	}
	char note[512];
	cv_window_note(&w, note, sizeof note);
	if (!rc && note[0]) { /* the cut, said in the trace too: an instant on a track of its own */
		uint64_t track = desc_named(&f, "tracebuf: file cut", 0, 0, NULL);
		pkt_begin(&f, 1, last_ns);
		pb_begin(&f.b, TP_TRACK_EVENT);
		pb_varint(&f.b, TE_TYPE, TYPE_INSTANT);
		pb_varint(&f.b, TE_TRACK, track);
		pb_str(&f.b, TE_NAME, note);
		pb_end(&f.b);
		rc = pkt_end(&f);
	}
	if (!rc)
		rc = flush_chunk(&f, 1);
	int crc = cv_close_out(o, f.out);
	if (rc) {
		rc = cli_error("convert", "out of memory");
	} else if (crc) {
		rc = crc;
	} else if (!o->quiet) {
		cli_msg(stderr, "tracebuf convert: %" PRIu64 " event%s -> %s: %" PRIu64 " slice%s, %" PRIu64 " instant%s, %" PRIu64
				" loss notice%s, %" PRIu64 " counter value%s; %" PRIu64 " unmatched end%s (kept as instants), %" PRIu64
				" slice%s closed at the trace end, %" PRIu64 " closed by an outer end; %" PRIu64 " bytes (%s%" PRIu64
				" bytes of packets)",
			f.events, cli_s(f.events), cv_out_name(o), f.begins, cli_s(f.begins), f.instants, cli_s(f.instants),
			f.notices, cli_s(f.notices), f.counters, cli_s(f.counters), f.unmatched, cli_s(f.unmatched), f.closed_at_end, cli_s(f.closed_at_end),
			f.closed_by_outer, f.bytes_out, f.bytes_out != f.bytes_plain ? "deflated from " : "", f.bytes_plain);
		const uint64_t *fe = f.ft.events;
		if (fe[PFF_SCHED])
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " kernel sched event%s as ftrace events (FtraceEventBundle "
					"per CPU)", fe[PFF_SCHED], cli_s(fe[PFF_SCHED]));
		if (fe[PFF_SYSCALL] || fe[PFF_FAULT])
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " system call entr%s and exit%s as ftrace events "
					"sys_enter/sys_exit (Perfetto: a slice per call on its thread), %" PRIu64 " user page "
					"fault%s as generic ftrace events page_fault_user (Perfetto has no event of its own for "
					"them: listed in the CPU's ftrace track)", fe[PFF_SYSCALL], fe[PFF_SYSCALL] == 1 ? "y" : "ies",
				cli_s(fe[PFF_SYSCALL]), fe[PFF_FAULT], cli_s(fe[PFF_FAULT]));
		if (f.prof)
			cli_msg(stderr, "tracebuf convert: %" PRIu64 " profile sample%s as perf samples with their callstacks "
					"(%" PRIu64 " with an invalid PC left out)", f.samples, cli_s(f.samples), f.invalid_samples);
		if (note[0])
			cli_msg(stderr, "tracebuf convert: %s", note);
	}
out:
	cv_roles_free(&f.roles);
	for (size_t i = 0; i < f.threads.n; i++)
		free(((struct pthr *)cli_table_at(&f.threads, i))->st.s);
	cli_table_free(&f.threads);
	cli_table_free(&f.procs);
	cli_map_free(&f.fn_done);
	cli_smap_free(&f.modules);
	cli_smap_free(&f.stacks);
	free(f.b.b);
	free(f.zbuf);
#ifdef TB_HAVE_LIBDEFLATE
	if (f.z)
		libdeflate_free_compressor(f.z);
#endif
	free(f.cls_done);
	pff_free(&f.ft);
	free(f.ann_base);
	for (size_t i = 0; f.cpus && i < f.ncpus; i++)
		free(f.cpus[i].fb.fb.b);
	free(f.cpus);
	free(f.loss_track);
	free(f.ps);
	prof_close(f.prof);
	return rc;
}
