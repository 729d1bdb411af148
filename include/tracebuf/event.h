/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/event.h - write events.
 *
 * Three ways, from the highest level to the lowest:
 *
 *   TB_EVENT(http, request, (u32, id), (u16, status), (str, path))
 *       declares event class "http:request" and a type-checked inline
 *       function  tb_http_request(uint32_t id, uint16_t status, const char *path).
 *       Put it in a header; every translation unit that includes it may call
 *       the function (each registers the same class, ids are per name).
 *       A disabled class costs one load and one predictable branch.
 *
 *   tb_write(channel, event_id, payload, len)
 *       copies an opaque payload (the class's fields, packed, little endian).
 *
 *   tb_reserve() / tb_commit()
 *       hand the caller a place to fill, then publish it (relayfs'
 *       relay_reserve).  The place is a per-thread staging area; tb_commit
 *       copies it into the ring.  Up to TB_RESERVE_DEPTH reservations may be
 *       open at once on one thread (signal handlers nest).
 *
 * Field types of TB_EVENT: u8 u16 u32 u64 i8 i16 i32 i64 f64
 *   f32 (float), bool (C _Bool / C++ bool: one byte, shown as false / true)
 *   (enum, name, (A, B, C = 5))  an int32_t shown by its label: the labels
 *                        are written as a C enumerator list, each value an
 *                        integer literal or omitted (the previous plus one,
 *                        the first 0): CTF enums in the trace, `state = B`
 *                        in dump; a value without a label shows as a number.
 *                        At most 3327 bytes of "label=value," per class.
 *                        A macro in the list is expanded first; a list that
 *                        does not parse leaves a plain i32 field (`tracebuf
 *                        list --fields PROGRAM` says why).  A C++ enum class
 *                        value is passed as static_cast<int32_t>(v).
 *   (str, name)          NUL-terminated string, at most 255 bytes kept
 *   (strn, name, N)      the same with bound N (1..4095)
 *   (bytes, name, N)     const void *name, uint32_t name_len; at most N bytes
 *   (u64s, name, N)      const uint64_t *name, uint32_t name_len; at most N
 * A string or sequence longer than its bound is truncated and counted.
 *
 * Spans: every event is an instant.  A phase with a duration is a pair of
 * classes NAME_begin and NAME_end of one provider, written by the same thread;
 * `tracebuf convert --to perfetto|chrome` and `report --html` draw each pair
 * as one span "app:parse" (nested when pairs nest, with the fields of both);
 * babeltrace2 shows the two events (docs/CONVERT.md, docs/GUIDE.md).
 *
 *   TB_SPAN(app, parse, (u32, id))
 *       declares both classes, app:parse_begin with the fields and
 *       app:parse_end without, and their functions
 *       tb_app_parse_begin(uint32_t id) and tb_app_parse_end(void).
 *   TB_SPAN_SCOPE(app, parse, id);
 *       in a block: begins the span now and ends it when the block is left,
 *       however: return, break, goto out of it, and in C++ an exception (not
 *       longjmp, exit or a thread killed).  C: GNU C's cleanup attribute (gcc
 *       and clang, also with -std=c11 -Wpedantic); C++: an object of the
 *       class tb_app_parse_scope, which a program may also name, to end the
 *       span early: { tb_app_parse_scope s(id); ...; s.end(); ... } (end()
 *       writes the end once; the destructor then writes nothing).
 *   Fields on the end too: declare the pair with TB_EVENT, as above.
 * Disabled, a span costs what its two events do: a load and a predictable
 * branch at the begin and at the end (the scope adds nothing).  The begin
 * and the end are each enabled by their own class (`app:parse_*` enables
 * both); a span begun while tracing was off shows as an end without its
 * begin ("unmatched end"), one not ended before the trace ends is closed
 * there.  Both are TB_EVENT functions: async-signal-safe, and a scope in a
 * signal handler ends when the handler's block is left.
 *
 * Contract of every function here: lock-free, no system call and no
 * allocation (except TB_BLOCK mode when the ring is full), async-signal-safe,
 * may be called from any thread and any process attached to the session.
 */
#ifndef TRACEBUF_EVENT_H
#define TRACEBUF_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tracebuf/session.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_FIELDS_MAX 16
#define TB_STR_DEFAULT_MAX 255u
#define TB_PAYLOAD_MAX 65536u
#define TB_RESERVE_DEPTH 4

/* Process-local description of an event class (one per translation unit). */
struct tb_event_class {
	const char *name;                  /* "provider:event" */
	uint32_t nfields;
	struct { const char *name; uint32_t type; uint32_t max_len; const char *labels; } fields[TB_FIELDS_MAX];
	const uint32_t *mask;              /* channels enabled: points into the session */
	uint32_t id;                       /* registry id, valid when *mask != 0 */
	struct tb_event_class *next;       /* library-private list */
};

/* Registers a class with the library (and the current session); constructors call it. */
TB_API void tb_class_register(struct tb_event_class *cls);
/* Writes a payload to every channel enabled for cls.  Used by TB_EVENT. */
TB_API void tb_emit(struct tb_event_class *cls, const void *payload, size_t len, uint32_t truncated);

/*
 * tb_write - append one record to channel `chan` of the producer session.
 * `event_id` must be a registered id (tb_event_id()).
 * Return: 0 written; -ENOSPC dropped and counted (ring full, or too big);
 * -ETIMEDOUT (block mode) dropped and counted; -ENODEV no producer session;
 * -EINVAL bad channel or id.
 */
TB_API int tb_write(unsigned chan, uint32_t event_id, const void *payload, size_t len);

/* Registry id of a class by name, or -ENOENT. */
TB_API int tb_event_id(const char *name);

struct tb_reservation {
	void *data;        /* where to write; `len` bytes are available */
	size_t len;
	unsigned chan;     /* private */
	uint32_t event_id; /* private */
	int slot;          /* private */
};

/*
 * tb_reserve - get a per-thread staging area of `len` bytes for one record.
 * Return: 0; -EBUSY (TB_RESERVE_DEPTH reservations already open on this
 * thread), -EMSGSIZE (len > TB_PAYLOAD_MAX), -ENODEV, -EINVAL.
 */
TB_API int tb_reserve(unsigned chan, uint32_t event_id, size_t len, struct tb_reservation *r);
/* tb_commit - publish a reservation; returns as tb_write().  Reservations
 * must be committed (or cancelled) in reverse order of their reserve. */
TB_API int tb_commit(struct tb_reservation *r);
TB_API void tb_cancel(struct tb_reservation *r);

/* ---------------------------------------------------------------------- */
/* TB_EVENT machinery (implementation detail below this line)              */
/* ---------------------------------------------------------------------- */

/* The mask of every class with no session: 0.  Writable data only so that
 * `tracebuf record --pid` can ask a running program to attach (it writes a
 * nonzero value from outside; the library resets it): a program never
 * writes it, and TB_EVENT only loads it, as ever. */
extern TB_API uint32_t tb_disabled_mask;

/* field type codes, equal to enum tb_field_type in the format */
#define TB__FT_u8 1
#define TB__FT_u16 2
#define TB__FT_u32 3
#define TB__FT_u64 4
#define TB__FT_i8 5
#define TB__FT_i16 6
#define TB__FT_i32 7
#define TB__FT_i64 8
#define TB__FT_f64 9
#define TB__FT_str 10
#define TB__FT_strn 10
#define TB__FT_bytes 11
#define TB__FT_u64s 12
#define TB__FT_bool 13
#define TB__FT_f32 14
#define TB__FT_enum 15

#define TB__CTYPE_u8 uint8_t
#define TB__CTYPE_u16 uint16_t
#define TB__CTYPE_u32 uint32_t
#define TB__CTYPE_u64 uint64_t
#define TB__CTYPE_i8 int8_t
#define TB__CTYPE_i16 int16_t
#define TB__CTYPE_i32 int32_t
#define TB__CTYPE_i64 int64_t
#define TB__CTYPE_f64 double
#define TB__CTYPE_f32 float
#ifdef __cplusplus
#define TB__CTYPE_bool bool
#else
#define TB__CTYPE_bool _Bool
#endif

/* argument counting and mapping over up to 16 parenthesised fields (the
 * trailing ~ keeps `...` non-empty: ISO C11 and C++11 before C++20 want at
 * least one variadic argument) */
/* NOLINTBEGIN(bugprone-macro-parentheses): preprocessor metaprogramming;
 * the arguments are types, names and field lists, not expressions. */
#define TB__NARGS(...) TB__NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, ~)
#define TB__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define TB__CAT(a, b) TB__CAT_(a, b)
#define TB__CAT_(a, b) a##b
#define TB__MAP(m, sep, ...) TB__CAT(TB__MAP_, TB__NARGS(__VA_ARGS__))(m, sep, __VA_ARGS__)
#define TB__MAP_1(m, s, x) m x
#define TB__MAP_2(m, s, x, ...) m x s() TB__MAP_1(m, s, __VA_ARGS__)
#define TB__MAP_3(m, s, x, ...) m x s() TB__MAP_2(m, s, __VA_ARGS__)
#define TB__MAP_4(m, s, x, ...) m x s() TB__MAP_3(m, s, __VA_ARGS__)
#define TB__MAP_5(m, s, x, ...) m x s() TB__MAP_4(m, s, __VA_ARGS__)
#define TB__MAP_6(m, s, x, ...) m x s() TB__MAP_5(m, s, __VA_ARGS__)
#define TB__MAP_7(m, s, x, ...) m x s() TB__MAP_6(m, s, __VA_ARGS__)
#define TB__MAP_8(m, s, x, ...) m x s() TB__MAP_7(m, s, __VA_ARGS__)
#define TB__MAP_9(m, s, x, ...) m x s() TB__MAP_8(m, s, __VA_ARGS__)
#define TB__MAP_10(m, s, x, ...) m x s() TB__MAP_9(m, s, __VA_ARGS__)
#define TB__MAP_11(m, s, x, ...) m x s() TB__MAP_10(m, s, __VA_ARGS__)
#define TB__MAP_12(m, s, x, ...) m x s() TB__MAP_11(m, s, __VA_ARGS__)
#define TB__MAP_13(m, s, x, ...) m x s() TB__MAP_12(m, s, __VA_ARGS__)
#define TB__MAP_14(m, s, x, ...) m x s() TB__MAP_13(m, s, __VA_ARGS__)
#define TB__MAP_15(m, s, x, ...) m x s() TB__MAP_14(m, s, __VA_ARGS__)
#define TB__MAP_16(m, s, x, ...) m x s() TB__MAP_15(m, s, __VA_ARGS__)
#define TB__SEP_COMMA() ,
#define TB__SEP_NONE()
#define TB__SEP_PLUS() +

/* per-field expansions; a field is (type, name) or (type, name, bound) */
#define TB__PARAM(t, ...) TB__CAT(TB__PARAM_, t)(__VA_ARGS__)
#define TB__PARAM_u8(n) uint8_t n
#define TB__PARAM_u16(n) uint16_t n
#define TB__PARAM_u32(n) uint32_t n
#define TB__PARAM_u64(n) uint64_t n
#define TB__PARAM_i8(n) int8_t n
#define TB__PARAM_i16(n) int16_t n
#define TB__PARAM_i32(n) int32_t n
#define TB__PARAM_i64(n) int64_t n
#define TB__PARAM_f64(n) double n
#define TB__PARAM_f32(n) float n
#define TB__PARAM_bool(n) TB__CTYPE_bool n
#define TB__PARAM_enum(n, l) int32_t n
#define TB__PARAM_str(n) const char *n
#define TB__PARAM_strn(n, b) const char *n
#define TB__PARAM_bytes(n, b) const void *n, uint32_t n##_len
#define TB__PARAM_u64s(n, b) const uint64_t *n, uint32_t n##_len

#define TB__BOUND(t, ...) TB__CAT(TB__BOUND_, t)(__VA_ARGS__)
#define TB__BOUND_u8(n) 0
#define TB__BOUND_u16(n) 0
#define TB__BOUND_u32(n) 0
#define TB__BOUND_u64(n) 0
#define TB__BOUND_i8(n) 0
#define TB__BOUND_i16(n) 0
#define TB__BOUND_i32(n) 0
#define TB__BOUND_i64(n) 0
#define TB__BOUND_f64(n) 0
#define TB__BOUND_f32(n) 0
#define TB__BOUND_bool(n) 0
#define TB__BOUND_enum(n, l) 0
#define TB__BOUND_str(n) TB_STR_DEFAULT_MAX
#define TB__BOUND_strn(n, b) (b)
#define TB__BOUND_bytes(n, b) (b)
#define TB__BOUND_u64s(n, b) (b)

#define TB__FDESC(t, ...) { TB__FDESC_N(__VA_ARGS__, ~), TB__FT_##t, TB__BOUND(t, __VA_ARGS__), TB__LABELS(t, __VA_ARGS__) }
#define TB__FDESC_N(n, ...) #n

/* an enum field's labels as written, "(A, B = 5)"; NULL for other types */
#define TB__LABELS(t, ...) TB__CAT(TB__LABELS_, t)(__VA_ARGS__)
#define TB__LABELS_NONE(...) NULL
#define TB__LABELS_u8 TB__LABELS_NONE
#define TB__LABELS_u16 TB__LABELS_NONE
#define TB__LABELS_u32 TB__LABELS_NONE
#define TB__LABELS_u64 TB__LABELS_NONE
#define TB__LABELS_i8 TB__LABELS_NONE
#define TB__LABELS_i16 TB__LABELS_NONE
#define TB__LABELS_i32 TB__LABELS_NONE
#define TB__LABELS_i64 TB__LABELS_NONE
#define TB__LABELS_f64 TB__LABELS_NONE
#define TB__LABELS_f32 TB__LABELS_NONE
#define TB__LABELS_bool TB__LABELS_NONE
#define TB__LABELS_str TB__LABELS_NONE
#define TB__LABELS_strn TB__LABELS_NONE
#define TB__LABELS_bytes TB__LABELS_NONE
#define TB__LABELS_u64s TB__LABELS_NONE
#define TB__LABELS_enum(n, l) #l

/* worst-case payload bytes of a field */
#define TB__MAXSZ(t, ...) TB__CAT(TB__MAXSZ_, t)(__VA_ARGS__)
#define TB__MAXSZ_u8(n) 1
#define TB__MAXSZ_u16(n) 2
#define TB__MAXSZ_u32(n) 4
#define TB__MAXSZ_u64(n) 8
#define TB__MAXSZ_i8(n) 1
#define TB__MAXSZ_i16(n) 2
#define TB__MAXSZ_i32(n) 4
#define TB__MAXSZ_i64(n) 8
#define TB__MAXSZ_f64(n) 8
#define TB__MAXSZ_f32(n) 4
#define TB__MAXSZ_bool(n) 1
#define TB__MAXSZ_enum(n, l) 4
#define TB__MAXSZ_str(n) (TB_STR_DEFAULT_MAX + 1)
#define TB__MAXSZ_strn(n, b) ((b) + 1)
#define TB__MAXSZ_bytes(n, b) (4 + (b))
#define TB__MAXSZ_u64s(n, b) (4 + 8 * (b))

/* serialisation into tb__p (cursor), counting truncations in tb__trunc */
#define TB__SER(t, ...) TB__CAT(TB__SER_, t)(__VA_ARGS__);
#define TB__SER_FIXED(n) do { __typeof__(n) tb__v = (n); memcpy(tb__p, &tb__v, sizeof tb__v); tb__p += sizeof tb__v; } while (0)
#define TB__SER_u8(n) TB__SER_FIXED(n)
#define TB__SER_u16(n) TB__SER_FIXED(n)
#define TB__SER_u32(n) TB__SER_FIXED(n)
#define TB__SER_u64(n) TB__SER_FIXED(n)
#define TB__SER_i8(n) TB__SER_FIXED(n)
#define TB__SER_i16(n) TB__SER_FIXED(n)
#define TB__SER_i32(n) TB__SER_FIXED(n)
#define TB__SER_i64(n) TB__SER_FIXED(n)
#define TB__SER_f64(n) TB__SER_FIXED(n)
#define TB__SER_f32(n) TB__SER_FIXED(n)
#define TB__SER_bool(n) do { *tb__p++ = (uint8_t)((n) ? 1 : 0); } while (0)
#define TB__SER_enum(n, l) TB__SER_FIXED(n)
#define TB__SER_str(n) tb__p = tb__ser_str(tb__p, (n), TB_STR_DEFAULT_MAX, &tb__trunc)
#define TB__SER_strn(n, b) tb__p = tb__ser_str(tb__p, (n), (b), &tb__trunc)
#define TB__SER_bytes(n, b) tb__p = tb__ser_seq(tb__p, (n), (n##_len), 1, (b), &tb__trunc)
#define TB__SER_u64s(n, b) tb__p = tb__ser_seq(tb__p, (n), (n##_len), 8, (b), &tb__trunc)

static inline uint8_t *tb__ser_str(uint8_t *p, const char *s, uint32_t bound, uint32_t *trunc)
{
	size_t n = 0;
	if (s) {
		/* byte by byte, never past the NUL: strnlen is not ISO C, and a
		 * bound larger than the caller's array (char buf[64] into a
		 * 255-byte field) must not read beyond it (-Wstringop-overread) */
		while (n <= bound && s[n])
			n++;
		if (n > bound) {
			n = bound;
			(*trunc)++;
		}
		memcpy(p, s, n);
	}
	p[n] = 0;
	return p + n + 1;
}

static inline uint8_t *tb__ser_seq(uint8_t *p, const void *v, uint32_t len, uint32_t esz,
				   uint32_t bound, uint32_t *trunc)
{
	if (!v)
		len = 0;
	if (len > bound) {
		len = bound;
		(*trunc)++;
	}
	memcpy(p, &len, 4);
	if (len)
		memcpy(p + 4, v, (size_t)len * esz);
	return p + 4 + (size_t)len * esz;
}

/* a compile-time check, in C11 and in C++11 alike */
#ifdef __cplusplus
#define TB__STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define TB__STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* 0 when TB_EVENT got only (provider, event), 1 when it got fields too */
#define TB__HASF(...) TB__HASF_(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, ~)
#define TB__HASF_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, n, ...) n

/*
 * TB_EVENT(provider, event, fields...): every argument goes through `...`,
 * so that a class without fields, TB_EVENT(app, tick), is ISO C11 and C++11
 * (a variadic macro may not be given zero variadic arguments before C23 and
 * C++20).  The class object is initialised by position, not with designators
 * (C++ has them only from C++20, and in declaration order).
 */
#define TB_EVENT(...) TB__CAT(TB__EVENT_, TB__HASF(__VA_ARGS__))(__VA_ARGS__)

/* (one macro argument, braces and commas included) */
#define TB__NOFIELDS { { NULL, 0, 0, NULL } }

/*
 * What a binary declares, readable before it runs (`tracebuf list FILE`):
 * one entry per class in ELF section "tracebuf_events", the class name and
 * its field list as written, "provider:event\0{(u32, id), (str, path)}\0"
 * (NUL padding may sit between entries; a class used in several
 * translation units has an entry in each).
 */
#define TB__STRX(...) #__VA_ARGS__
#if defined(__has_attribute)
#if __has_attribute(retain)
#define TB__RETAIN , retain
#endif
#endif
#ifndef TB__RETAIN
#define TB__RETAIN
#endif
#define TB__EVENT_NOTE(provider, event, fstr)                                                 \
	static const char tb__note_##provider##_##event[]                                     \
		__attribute__((section("tracebuf_events"), used TB__RETAIN)) =               \
			#provider ":" #event "\0{" fstr "}";

/* the parts common to both forms: the class, its registration at load time */
#define TB__EVENT_CLASS(provider, event, nf, fdescs)                                          \
	static struct tb_event_class tb__cls_##provider##_##event                             \
		__attribute__((unused)) = { #provider ":" #event, (nf), fdescs,               \
					    &tb_disabled_mask, 0, NULL };                     \
	__attribute__((constructor)) static void tb__ctor_##provider##_##event(void)          \
	{                                                                                     \
		tb_class_register(&tb__cls_##provider##_##event);                             \
	}

#define TB__EVENT_0(provider, event)                                                          \
	TB__EVENT_NOTE(provider, event, "")                                                   \
	TB__EVENT_CLASS(provider, event, 0, TB__NOFIELDS)                                     \
	static inline __attribute__((unused)) void tb_##provider##_##event(void)              \
	{                                                                                     \
		/* the one predictable branch of a disabled class; relaxed: a plain load */  \
		if (__builtin_expect(__atomic_load_n(tb__cls_##provider##_##event.mask,        \
						     __ATOMIC_RELAXED) == 0, 1))              \
			return;                                                               \
		tb_emit(&tb__cls_##provider##_##event, NULL, 0, 0);                            \
	}

#define TB__EVENT_1(provider, event, ...)                                                     \
	TB__STATIC_ASSERT(TB__NARGS(__VA_ARGS__) <= TB_FIELDS_MAX, "at most 16 fields");      \
	TB__EVENT_NOTE(provider, event, TB__STRX(__VA_ARGS__))                                \
	TB__EVENT_CLASS(provider, event, TB__NARGS(__VA_ARGS__),                              \
			{ TB__MAP(TB__FDESC, TB__SEP_COMMA, __VA_ARGS__) })                   \
	static inline __attribute__((unused)) void tb_##provider##_##event(                   \
		TB__MAP(TB__PARAM, TB__SEP_COMMA, __VA_ARGS__))                               \
	{                                                                                     \
		/* the one predictable branch of a disabled class; relaxed: a plain load */  \
		if (__builtin_expect(__atomic_load_n(tb__cls_##provider##_##event.mask,        \
						     __ATOMIC_RELAXED) == 0, 1))              \
			return;                                                               \
		uint8_t tb__buf[TB__MAP(TB__MAXSZ, TB__SEP_PLUS, __VA_ARGS__)];               \
		uint8_t *tb__p = tb__buf;                                                     \
		uint32_t tb__trunc = 0;                                                       \
		TB__MAP(TB__SER, TB__SEP_NONE, __VA_ARGS__)                                   \
		tb_emit(&tb__cls_##provider##_##event, tb__buf, (size_t)(tb__p - tb__buf),   \
			tb__trunc);                                                           \
	}

#ifdef __CPPCHECK__
/* cppcheck's preprocessor does not rescan the TB__MAP expansion above (it
 * reports "unknownMacro" and skips the file): give it the class object only,
 * so that the rest of a file using TB_EVENT is still analysed. */
#undef TB_EVENT
#define TB_EVENT(...) TB__CAT(TB__CPPCHECK_EVENT_, TB__HASF(__VA_ARGS__))(__VA_ARGS__)
#define TB__CPPCHECK_EVENT_0(provider, event) static struct tb_event_class tb__cls_##provider##_##event;
#define TB__CPPCHECK_EVENT_1(provider, event, ...) static struct tb_event_class tb__cls_##provider##_##event;
#endif

/* True when `provider:event` is enabled in some channel (e.g. to skip costly arguments). */
#define TB_ENABLED(provider, event) \
	(__atomic_load_n(tb__cls_##provider##_##event.mask, __ATOMIC_RELAXED) != 0)

/*
 * TB_SPAN(provider, name, fields...): the classes provider:name_begin (with
 * the fields) and provider:name_end (without), their functions
 * tb_provider_name_begin(...) and tb_provider_name_end(), and what
 * TB_SPAN_SCOPE uses: in C a cleanup function, in C++ the class
 * tb_provider_name_scope (in an unnamed namespace: internal to each
 * translation unit, like the functions).  Everything through `...`, as
 * TB_EVENT.
 */
#define TB_SPAN(...) TB__CAT(TB__SPAN_, TB__HASF(__VA_ARGS__))(__VA_ARGS__)
#define TB__SPAN_0(provider, name)                                                            \
	TB__EVENT_0(provider, name##_begin)                                                   \
	TB__EVENT_0(provider, name##_end)                                                     \
	TB__SPAN_END_FN(provider, name)                                                       \
	TB__SPAN_CLASS(provider, name, (void), ())
#define TB__SPAN_1(provider, name, ...)                                                       \
	TB__EVENT_1(provider, name##_begin, __VA_ARGS__)                                      \
	TB__EVENT_0(provider, name##_end)                                                     \
	TB__SPAN_END_FN(provider, name)                                                       \
	TB__SPAN_CLASS(provider, name, (TB__MAP(TB__PARAM, TB__SEP_COMMA, __VA_ARGS__)),       \
		       (TB__MAP(TB__ARG, TB__SEP_COMMA, __VA_ARGS__)))

/* the arguments a field takes, by name, as TB__PARAM declares them */
#define TB__ARG(t, ...) TB__CAT(TB__ARG_, t)(__VA_ARGS__)
#define TB__ARG_u8(n) n
#define TB__ARG_u16(n) n
#define TB__ARG_u32(n) n
#define TB__ARG_u64(n) n
#define TB__ARG_i8(n) n
#define TB__ARG_i16(n) n
#define TB__ARG_i32(n) n
#define TB__ARG_i64(n) n
#define TB__ARG_f64(n) n
#define TB__ARG_f32(n) n
#define TB__ARG_bool(n) n
#define TB__ARG_enum(n, l) n
#define TB__ARG_str(n) n
#define TB__ARG_strn(n, b) n
#define TB__ARG_bytes(n, b) n, n##_len
#define TB__ARG_u64s(n, b) n, n##_len

/* C's scope guard: GNU C's cleanup attribute calls this with the guard's address */
#define TB__SPAN_END_FN(provider, name)                                                       \
	static inline __attribute__((unused)) void tb__span_cleanup_##provider##_##name(      \
		const char *tb__guard)                                                        \
	{                                                                                     \
		(void)tb__guard;                                                              \
		tb_##provider##_##name##_end();                                               \
	}

#ifdef __cplusplus
/* C++'s: begins in its constructor, ends in its destructor (a return, an
 * exception) or at end(), once; not copyable */
#define TB__SPAN_CLASS(provider, name, params, args)                                          \
	namespace {                                                                           \
	class tb_##provider##_##name##_scope {                                                \
	public:                                                                               \
		explicit tb_##provider##_##name##_scope params noexcept                       \
		{                                                                             \
			tb_##provider##_##name##_begin args;                                  \
		}                                                                             \
		~tb_##provider##_##name##_scope() { end(); }                                  \
		void end() noexcept                                                           \
		{                                                                             \
			if (open_) {                                                          \
				open_ = false;                                                \
				tb_##provider##_##name##_end();                               \
			}                                                                     \
		}                                                                             \
		tb_##provider##_##name##_scope(const tb_##provider##_##name##_scope &) = delete; \
		tb_##provider##_##name##_scope &operator=(const tb_##provider##_##name##_scope &) = delete; \
                                                                                              \
	private:                                                                              \
		bool open_ = true;                                                            \
	};                                                                                    \
	}
#else
#define TB__SPAN_CLASS(provider, name, params, args)
#endif

/*
 * TB_SPAN_SCOPE(provider, name, args...): begins the span now and ends it
 * when the enclosing block is left, however (return, break, goto out of
 * it; in C++ also an exception; not longjmp or exit).  A declaration: one
 * per line, in a block.  In C it needs GNU C's cleanup attribute (gcc,
 * clang); in C++ it is an object of class tb_provider_name_scope.
 */
#define TB_SPAN_SCOPE(...) TB__CAT(TB__SPAN_SCOPE_, TB__HASA(__VA_ARGS__))(__VA_ARGS__)
/* 0 when given only (provider, name), 1 when arguments too (up to 40) */
#define TB__HASA(...)                                                                         \
	TB__HASA_(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  \
		  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, ~)
#define TB__HASA_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, \
		  a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32, a33, a34,  \
		  a35, a36, a37, a38, a39, a40, a41, a42, n, ...)                                 \
	n
#ifdef __cplusplus
#define TB__SPAN_SCOPE_0(provider, name)                                                      \
	tb_##provider##_##name##_scope TB__CAT(tb__span_scope_, __LINE__)
#define TB__SPAN_SCOPE_1(provider, name, ...)                                                 \
	tb_##provider##_##name##_scope TB__CAT(tb__span_scope_, __LINE__)(__VA_ARGS__)
#else
#define TB__SPAN_SCOPE_0(provider, name)                                                      \
	__attribute__((cleanup(tb__span_cleanup_##provider##_##name), unused)) const char      \
	TB__CAT(tb__span_scope_, __LINE__) = (tb_##provider##_##name##_begin(), (char)0)
#define TB__SPAN_SCOPE_1(provider, name, ...)                                                 \
	__attribute__((cleanup(tb__span_cleanup_##provider##_##name), unused)) const char      \
	TB__CAT(tb__span_scope_, __LINE__) = (tb_##provider##_##name##_begin(__VA_ARGS__), (char)0)
#endif

#ifdef __CPPCHECK__
/* as TB_EVENT's above: the class objects only */
#undef TB_SPAN
#define TB_SPAN(...) TB__CAT(TB__CPPCHECK_SPAN_, TB__HASF(__VA_ARGS__))(__VA_ARGS__)
#define TB__CPPCHECK_SPAN_0(provider, name)                                                   \
	static struct tb_event_class tb__cls_##provider##_##name##_begin, tb__cls_##provider##_##name##_end;
#define TB__CPPCHECK_SPAN_1(provider, name, ...) TB__CPPCHECK_SPAN_0(provider, name)
#endif

/* NOLINTEND(bugprone-macro-parentheses) */

#ifdef __cplusplus
}
#endif

#endif
