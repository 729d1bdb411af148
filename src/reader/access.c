/* SPDX-License-Identifier: MIT */
/*
 * access.c - the reader's accessors: trace information (diagnostics, time
 * range, env, classes, streams, packets) and the typed fields of an event.
 * Opening and indexing are in index.c, decoding and merging in reader.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracebuf/reader.h>

#include "core/format.h"
#include "core/view.h"
#include "reader/reader_impl.h"
#include "reader/tsdl.h"

/* ---------------------------------------------------------------------- */
/* trace information                                                       */

uint64_t tb_reader_ndiags(const struct tb_reader *r) { return r->ndiags; }

const struct tb_rd_diag *tb_reader_diag(const struct tb_reader *r, uint64_t i)
{
	return i < r->ndiags && i < DIAGS_KEPT ? &r->diags[i].d : NULL;
}

uint64_t tb_reader_clock_freq(const struct tb_reader *r) { return r->freq; }
int64_t tb_reader_ticks_to_ns(const struct tb_reader *r, uint64_t t) { return tb_rd_ticks_to_ns(r, t); }

int tb_reader_time_range(const struct tb_reader *r, uint64_t *begin, uint64_t *end)
{
	uint64_t b = UINT64_MAX, e = 0;
	for (unsigned i = 0; i < r->nstreams; i++)
		for (size_t j = 0; j < r->streams[i].npk; j++) {
			const struct tb_rd_packet *p = &r->streams[i].pk[j].p;
			if (!p->valid)
				continue;
			if (p->ts_begin < b)
				b = p->ts_begin;
			if (p->ts_end > e)
				e = p->ts_end;
		}
	if (b > e)
		b = e = 0;
	*begin = b;
	*end = e;
	return 0;
}

unsigned tb_reader_nenv(const struct tb_reader *r) { return r->m.nenv; }

const char *tb_reader_env_key(const struct tb_reader *r, unsigned i)
{
	return i < r->m.nenv ? r->m.env[i].key : NULL;
}

const char *tb_reader_env_value(const struct tb_reader *r, unsigned i)
{
	if (i >= r->m.nenv)
		return NULL;
	struct tb_tsdl_env *e = (struct tb_tsdl_env *)&r->m.env[i];
	if (!e->is_str && !e->str[0])
		snprintf(e->str, sizeof e->str, "%" PRId64, e->num);
	return e->str;
}

uint32_t tb_reader_nclass_ids(const struct tb_reader *r) { return r->m.max_id + 1; }

const char *tb_reader_class_name(const struct tb_reader *r, uint32_t id)
{
	/* an id has one name in every stream class (tb_tsdl_parse) */
	for (uint32_t sid = 0; sid < TB_NSTREAM_CLASSES; sid++) {
		int32_t ci = tb_tsdl_class_at(&r->m, sid, id);
		if (ci >= 0)
			return r->m.classes[ci].name;
	}
	return NULL;
}

unsigned tb_reader_nstreams(const struct tb_reader *r) { return r->nstreams; }
const char *tb_reader_stream_file(const struct tb_reader *r, unsigned s)
{
	return s < r->nstreams ? r->streams[s].file : NULL;
}
const char *tb_reader_stream_channel(const struct tb_reader *r, unsigned s)
{
	return s < r->nstreams ? r->streams[s].channel : NULL;
}
uint32_t tb_reader_stream_cpu(const struct tb_reader *r, unsigned s)
{
	return s < r->nstreams ? r->streams[s].cpu : 0;
}
uint64_t tb_reader_stream_bytes(const struct tb_reader *r, unsigned s)
{
	return s < r->nstreams ? r->streams[s].size : 0;
}
size_t tb_reader_npackets(const struct tb_reader *r, unsigned s)
{
	return s < r->nstreams ? r->streams[s].npk : 0;
}
int tb_reader_packet(const struct tb_reader *r, unsigned s, size_t i, struct tb_rd_packet *out)
{
	if (s >= r->nstreams || i >= r->streams[s].npk)
		return tb_fail(-EINVAL, "no packet %zu in stream %u", i, s);
	*out = r->streams[s].pk[i].p;
	return 0;
}

int tb_reader_packet_lost(const struct tb_reader *r, unsigned s, size_t i, uint64_t *lost, unsigned n)
{
	if (s >= r->nstreams || i >= r->streams[s].npk)
		return tb_fail(-EINVAL, "no packet %zu in stream %u", i, s);
	const struct rd_packet *p = &r->streams[s].pk[i];
	for (unsigned k = 0; k < n; k++)
		lost[k] = p->has_lost && k < TB_LOSS_NCAUSES ? p->lost[k] : 0;
	return p->has_lost;
}

/* ---------------------------------------------------------------------- */
/* items                                                                   */

/* double -> integer without undefined behaviour: truncates, saturates, NaN -> 0 */
static uint64_t f64_to_u64(double d)
{
	if (!(d > 0))
		return 0;
	if (d >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)d;
}

static int64_t f64_to_i64(double d)
{
	if (d != d)
		return 0;
	if (d >= 9223372036854775808.0)
		return INT64_MAX;
	if (d < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

int tb_rd_kind(const struct tb_rd_event *e) { return e->kind; }
uint64_t tb_rd_ticks(const struct tb_rd_event *e) { return e->ts; }
/* tb_rd_ticks_to_ns() of the event's ticks, incrementally from the stream's previous one (struct rd_ns_cache) */
int64_t tb_rd_ns(const struct tb_rd_event *e)
{
	const struct tb_reader *r = e->s->r;
	struct rd_ns_cache *c = &e->s->ns;
	uint64_t t = e->ts, f = r->freq;
	if (f == 1000000000)
		return tb_rd_ticks_to_ns(r, t); /* no division at all */
	uint64_t d = t - c->t;
	if (c->ok && t >= c->t && d < (1ull << 53) / 1000000000u && f < (1ull << 53)) {
		uint64_t x = c->rem + d * 1000000000u; /* < freq + 2^53 - 10^9 */
		if (x < (1ull << 53)) {
			/* x is exact as a double, so the estimate is off by at most 1 (2 when freq < 4) */
			uint64_t q = (uint64_t)((double)x * r->freq_inv);
			int64_t rem = (int64_t)(x - q * f);
			while (rem < 0) {
				q--;
				rem += (int64_t)f;
			}
			while (rem >= (int64_t)f) {
				q++;
				rem -= (int64_t)f;
			}
			if (!__builtin_add_overflow(c->q, q, &c->q)) {
				c->rem = (uint64_t)rem;
				c->t = t;
				return tb_rd_sat64((__int128)r->off_ns + (__int128)c->q);
			}
		}
	}
	/* first item, time went back (seek) or a long gap: the full computation */
	unsigned __int128 n = (unsigned __int128)t * 1000000000u, q128 = n / f;
	c->ok = q128 <= UINT64_MAX;
	if (!c->ok)
		return tb_rd_ticks_to_ns(r, t);
	c->q = (uint64_t)q128;
	c->rem = (uint64_t)(n - q128 * f);
	c->t = t;
	return tb_rd_sat64((__int128)r->off_ns + (__int128)c->q);
}

uint32_t tb_rd_cpu(const struct tb_rd_event *e) { return e->s->cpu; }
unsigned tb_rd_stream(const struct tb_rd_event *e) { return e->s->idx; }
const char *tb_rd_channel(const struct tb_rd_event *e) { return e->s->channel; }
uint32_t tb_rd_pid(const struct tb_rd_event *e) { return e->pid; }
uint32_t tb_rd_tid(const struct tb_rd_event *e) { return e->tid; }
uint64_t tb_rd_count(const struct tb_rd_event *e) { return e->kind == TB_RD_EVENT ? 0 : e->count; }
uint64_t tb_rd_ticks_end(const struct tb_rd_event *e) { return e->kind == TB_RD_EVENT ? e->ts : e->ts_end; }
uint32_t tb_rd_id(const struct tb_rd_event *e) { return e->k ? e->k->id : UINT32_MAX; }

/* The reader's field types are the registry's (core/format.h), value for
 * value: a new type is added to both or the build stops here. */
_Static_assert((int)TB_RD_U8 == (int)TB_FT_U8 && (int)TB_RD_U16 == (int)TB_FT_U16 && (int)TB_RD_U32 == (int)TB_FT_U32 &&
		       (int)TB_RD_U64 == (int)TB_FT_U64 && (int)TB_RD_I8 == (int)TB_FT_I8 &&
		       (int)TB_RD_I16 == (int)TB_FT_I16 && (int)TB_RD_I32 == (int)TB_FT_I32 &&
		       (int)TB_RD_I64 == (int)TB_FT_I64 && (int)TB_RD_F64 == (int)TB_FT_F64 &&
		       (int)TB_RD_STRING == (int)TB_FT_STRING && (int)TB_RD_BYTES == (int)TB_FT_BYTES &&
		       (int)TB_RD_U64SEQ == (int)TB_FT_U64SEQ && (int)TB_RD_BOOL == (int)TB_FT_BOOL &&
		       (int)TB_RD_F32 == (int)TB_FT_F32 && (int)TB_RD_ENUM == (int)TB_FT_ENUM &&
		       TB_FT_ENUM + 1 == TB_FT_MAX_,
	       "enum tb_rd_type (reader.h) and enum tb_field_type (format.h) differ");
_Static_assert((int)TB_RD_LOST_NCAUSES == (int)TB_LOSS_NCAUSES && (int)TB_RD_LOST_RELAY == (int)TB_LOSS_RELAY &&
		       (int)TB_RD_LOST_NOCONSUMER == (int)TB_LOSS_NOCONS && (int)TB_RD_LOST_INVALID == (int)TB_LOSS_INVALID,
	       "enum tb_rd_loss mirrors enum tb_loss_cause (core/format.h)");

const char *tb_rd_loss_name(unsigned cause)
{
	const char *f = tb_loss_field(cause); /* "lost_<name>" */
	return f ? f + 5 : NULL;
}

uint64_t tb_rd_lost(const struct tb_rd_event *e, unsigned cause)
{
	if (e->kind != TB_RD_DISCARDED_EVENTS || cause >= TB_LOSS_NCAUSES)
		return 0;
	return e->pk && e->pk->delta_ok ? e->pk->lost_delta[cause] : UINT64_MAX;
}

const char *tb_rd_name(const struct tb_rd_event *e)
{
	if (e->k)
		return e->k->name;
	return e->kind == TB_RD_DISCARDED_EVENTS ? "tracebuf:discarded_events" : "tracebuf:discarded_packets";
}

unsigned tb_rd_nfields(const struct tb_rd_event *e)
{
	return e->k ? e->s->r->vis[e->ci].n : 0;
}

/* raw field index of visible field i, or -1 */
static inline int raw(const struct tb_rd_event *e, unsigned i)
{
	if (!e->k)
		return -1;
	const struct rd_vis *v = &e->s->r->vis[e->ci];
	return i < v->n ? v->f[i].raw : -1;
}

static inline const uint8_t *fptr(const struct tb_rd_event *e, int f)
{
	return e->payload + (e->k->fixed_size >= 0 ? e->k->fixed_off[f] : e->off[f]);
}

const char *tb_rd_field_name(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	return f < 0 ? NULL : e->k->fields[f].name;
}

int tb_rd_field_type(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	return f < 0 ? -EINVAL : e->k->fields[f].type;
}

int tb_rd_field_index(const struct tb_rd_event *e, const char *name)
{
	unsigned n = tb_rd_nfields(e);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(e->k->fields[raw(e, i)].name, name))
			return (int)i;
	return -ENOENT;
}

uint64_t tb_rd_u64(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	if (f < 0)
		return 0;
	const struct tb_tsdl_field *fd = &e->k->fields[f];
	const uint8_t *p = fptr(e, f);
	switch (fd->type) {
	case TB_FT_U8: case TB_FT_U16: case TB_FT_U32: case TB_FT_U64:
		return tb_rd_ld_uint(p, fd->size);
	case TB_FT_BOOL: return p[0] != 0;
	case TB_FT_F32: { float x; memcpy(&x, p, 4); return f64_to_u64(x); }
	case TB_FT_I8: return (uint64_t)(int64_t)(int8_t)p[0];
	case TB_FT_I16: return (uint64_t)(int64_t)(int16_t)tb_rd_ld_uint(p, 2);
	case TB_FT_I32: return (uint64_t)(int64_t)(int32_t)tb_rd_ld_uint(p, 4);
	case TB_FT_I64: return tb_rd_ld_uint(p, 8);
	case TB_FT_F64: { double d; memcpy(&d, p, 8); return f64_to_u64(d); }
	case TB_FT_ENUM: return (uint64_t)tb_rd_ld_enum(p, fd);
	default: return 0;
	}
}

int64_t tb_rd_i64(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	if (f >= 0 && (e->k->fields[f].type == TB_FT_F64 || e->k->fields[f].type == TB_FT_F32))
		return f64_to_i64(tb_rd_f64(e, i));
	return (int64_t)tb_rd_u64(e, i);
}

double tb_rd_f64(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	if (f < 0)
		return 0;
	int t = e->k->fields[f].type;
	if (t == TB_FT_F64) {
		double d;
		memcpy(&d, fptr(e, f), 8);
		return d;
	}
	if (t == TB_FT_F32) {
		float x;
		memcpy(&x, fptr(e, f), 4);
		return x;
	}
	if ((t >= TB_FT_I8 && t <= TB_FT_I64) || (t == TB_FT_ENUM && e->k->fields[f].sign))
		return (double)tb_rd_i64(e, i);
	return (double)tb_rd_u64(e, i);
}

const char *tb_rd_enum_label(const struct tb_rd_event *e, unsigned i)
{
	int f = raw(e, i);
	if (f < 0 || e->k->fields[f].type != TB_FT_ENUM)
		return NULL;
	const struct tb_tsdl_field *fd = &e->k->fields[f];
	return tb_rd_enum_find(&e->s->r->m.enums[fd->enum_idx], tb_rd_ld_enum(fptr(e, f), fd));
}

const char *tb_rd_str(const struct tb_rd_event *e, unsigned i, size_t *len)
{
	int f = raw(e, i);
	if (f < 0 || e->k->fields[f].type != TB_FT_STRING)
		return NULL;
	const char *s = (const char *)fptr(e, f);
	if (len)
		*len = strlen(s); /* NUL checked inside the packet when decoded */
	return s;
}

const void *tb_rd_seq(const struct tb_rd_event *e, unsigned i, uint32_t *count)
{
	int f = raw(e, i);
	if (f < 0 || (e->k->fields[f].type != TB_FT_BYTES && e->k->fields[f].type != TB_FT_U64SEQ))
		return NULL;
	const struct tb_tsdl_field *fd = &e->k->fields[f];
	*count = (uint32_t)tb_rd_ld_uint(fptr(e, fd->length_of), e->k->fields[fd->length_of].size);
	return fptr(e, f);
}

uint64_t tb_rd_seq_u64(const struct tb_rd_event *e, unsigned i, uint32_t j)
{
	uint32_t n;
	const uint8_t *p = tb_rd_seq(e, i, &n);
	if (!p || j >= n)
		return 0;
	return e->k->fields[raw(e, i)].type == TB_FT_BYTES ? p[j] : tb_rd_ld_uint(p + (size_t)j * 8, 8);
}

const void *tb_rd_payload(const struct tb_rd_event *e, size_t *len)
{
	if (!e->k) {
		*len = 0;
		return NULL;
	}
	*len = e->len;
	return e->payload;
}
